/*
 * route.c - where each JSON-RPC message goes, in both directions.
 *
 * CLIENT -> SERVER (HTTP threads, under b->lock)
 *   request       gets a fresh upstream id (b->next_id) in place of the
 *                 client's, and its progressToken (if any) becomes that same
 *                 number; a CALL pending remembers the client's id and token,
 *                 its session and its exchange. Duplicate ids within a
 *                 session are refused while the first is in flight.
 *   notification  forwarded as is, except notifications/initialized (the
 *                 gateway initialized the server itself) and
 *                 notifications/cancelled (requestId rewritten to the upstream
 *                 id; the cancelled call is answered at once).
 *   response      to a server request (SREQ): its id is the downstream id the
 *                 gateway gave that request; it goes back with the server's
 *                 original id, but only from the session it was sent to.
 *
 * SERVER -> CLIENT (reactor thread)
 *   response      looked up by id (one hash lookup); the client's id is put
 *                 back and the text queued on the exchange awaiting it.
 *   request       (roots/list, sampling/createMessage, elicitation/create, ...)
 *                 goes to the newest call in flight whose session can answer
 *                 it: on that call's SSE exchange if its client accepts SSE,
 *                 else on the session's GET stream; failing that, to the most
 *                 recent session with a GET stream. It gets a downstream id.
 *                 ping is answered by the gateway. Nobody to ask = an error
 *                 to the server.
 *   notification  notifications/progress follows its token to its call's
 *                 exchange; notifications/message goes with the newest call
 *                 in flight (stdio cannot tell which request it belongs to),
 *                 else to every session's GET stream; resources/updated to
 *                 the sessions that subscribed to the URI; everything else
 *                 (list_changed, ...) to every session's GET stream.
 *
 * Messages travel as text; only ids and tokens are spliced (jsonrpc.c).
 */
#include "gateway/gateway_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_ID, K_METHOD, K_RESULT, K_ERROR, K_PARAMS, K_N };
static const char *const msg_keys[K_N] = {"id", "method", "result", "error", "params"};

static void send_quiet_locked(mb_gw_backend *b, const char *text)
{
    mb_assert_held(&b->lock);
    mb_err e;
    if (mb_gw__backend_send_locked(b, text, strlen(text), &e))
        mb_debug("gateway: [%s/%s] %s", b->sandbox_id, b->server, e.msg);
}

int mb_gw__route_send_noted_locked(mb_gw_session *s, const char *then, size_t len, mb_err *err)
{
    mb_gw_backend *b = s->b;
    mb_assert_held(&b->lock);
    if (!s->note || (b->noted_gen == b->gen + 1 && !strcmp(b->noted_sid, s->id)))
        return mb_gw__backend_send_locked(b, then, len, err);
    mb_buf both = {0};
    mb_buf_puts(&both, s->note);
    mb_buf_putc(&both, '\n');
    mb_buf_append(&both, then, len);
    int rc = mb_gw__backend_send_locked(b, both.data, both.len, err);
    mb_buf_free(&both);
    if (rc == MB_OK) {
        b->noted_gen = b->gen + 1;
        memcpy(b->noted_sid, s->id, sizeof b->noted_sid);
    }
    return rc;
}

static mb_gw_pending *find_locked(mb_gw_backend *b, int64_t id)
{
    mb_assert_held(&b->lock);
    mb_gw_hnode *n = mb_gw__table_find(&b->pending, (uint64_t)id);
    return n ? MB_GW_CONTAINER(n, mb_gw_pending, node) : NULL;
}

/* The integer at s[sp], if it is one. */
static int span_int(const char *s, mb_gw_span sp, int64_t *out)
{
    json_t *v = mb_gw__span_json(s, sp);
    int ok = json_is_integer(v);
    if (ok) *out = json_integer_value(v);
    json_decref(v);
    return ok;
}

/* Finds member `key` of the object at s[outer] (absolute offsets). */
static mb_gw_span member(const char *s, mb_gw_span outer, const char *key)
{
    mb_gw_span sp = {0, 0};
    if (!outer.len) return sp;
    const char *keys[1] = {key};
    if (mb_gw__scan(s + outer.off, outer.len, keys, 1, &sp) < 0) sp.len = 0;
    sp.off += outer.off;
    return sp;
}

/* ------------------------------------------------- the gateway's requests */

void mb_gw__route_send_initialize_locked(mb_gw_backend *b)
{
    mb_assert_held(&b->lock);
    mb_gw_pending *p = mb_gw__pending_new_locked(b, MB_GW_PEND_INIT, "initialize");
    json_t *m = json_pack(
        "{s:s, s:I, s:s, s:{s:s, s:{s:{s:b}, s:{}, s:{}}, s:{s:s, s:s}}}", "jsonrpc", "2.0", "id",
        (json_int_t)p->id, "method", "initialize", "params", "protocolVersion",
        MB_GW_PROTO_LATEST, "capabilities", "roots", "listChanged", 1, "sampling", "elicitation",
        "clientInfo", "name", "mcpbox-gateway", "version", "0.1.0");
    char *t = mb_gw__json_text(m);
    json_decref(m);
    send_quiet_locked(b, t);
    free(t);
}

void mb_gw__route_fetch_tools_locked(mb_gw_backend *b, const char *cursor_text)
{
    mb_assert_held(&b->lock);
    mb_gw_pending *p = mb_gw__pending_new_locked(b, MB_GW_PEND_TOOLS, "tools/list");
    char *t = mb_asprintf("{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/list\","
                          "\"params\":{%s%s}}",
                          (long long)p->id, cursor_text ? "\"cursor\":" : "",
                          cursor_text ? cursor_text : "");
    if (!cursor_text) {
        json_decref(b->tools_acc);
        b->tools_acc = json_array();
        free(b->tools_text); /* the copy clients got is being replaced */
        b->tools_text = NULL;
        b->tools_deadline_ms = mb_gw__now() + b->gw->opts.init_timeout_ms;
    }
    b->tools_fetching = 1;
    b->tools_stale = 0;
    send_quiet_locked(b, t);
    free(t);
}

void mb_gw__init_texts_clear_locked(mb_gw_backend *b)
{
    mb_assert_held(&b->lock);
    for (int i = 0; i < MB_GW_NVERSIONS; i++) {
        free(b->init_texts[i]);
        b->init_texts[i] = NULL;
    }
}

const char *mb_gw__init_text_locked(mb_gw_backend *b, const char *version)
{
    mb_assert_held(&b->lock);
    int i = 0;
    while (i < MB_GW_NVERSIONS && strcmp(mb_gw_versions[i], version)) i++;
    if (i == MB_GW_NVERSIONS || !b->init_result) return NULL;
    if (!b->init_texts[i]) {
        json_t *r = json_deep_copy(b->init_result);
        json_object_set_new(r, "protocolVersion", json_string(version));
        b->init_texts[i] = mb_gw__json_text(r);
        json_decref(r);
    }
    return b->init_texts[i];
}

/* Returns 0, or -1 when the server refused initialize (the caller kills it). */
static int init_answer_locked(mb_gw_backend *b, const char *line, const mb_gw_span *sp,
                              json_t *parsed)
{
    mb_assert_held(&b->lock);
    json_t *result = parsed ? json_incref(parsed) : mb_gw__span_json(line, sp[K_RESULT]);
    if (!json_is_object(result)) {
        json_t *e = mb_gw__span_json(line, sp[K_ERROR]);
        const char *msg = json_string_value(json_object_get(e, "message"));
        snprintf(b->last_error, sizeof b->last_error,
                 "the MCP server '%s' refused initialize: %s", b->server,
                 msg ? msg : "(no message)");
        json_decref(e);
        json_decref(result);
        return -1;
    }
    json_decref(b->init_result);
    b->init_result = result;
    mb_gw__init_texts_clear_locked(b);
    const char *v = json_string_value(json_object_get(result, "protocolVersion"));
    snprintf(b->up_version, sizeof b->up_version, "%s", v ? v : "");
    b->state = MB_GW_READY;
    b->last_error[0] = '\0';
    send_quiet_locked(b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    if (json_object_get(json_object_get(result, "capabilities"), "tools")) {
        mb_gw__route_fetch_tools_locked(b, NULL);
    } else {
        mb_gw__tools_hash(NULL, b->tools_sha, &b->tools_count);
        b->tools_known = 1;
    }
    mb_info("gateway: [%s/%s] ready (%s %s, protocol %s)", b->sandbox_id, b->server,
            json_string_value(json_object_get(json_object_get(result, "serverInfo"), "name")),
            json_string_value(json_object_get(json_object_get(result, "serverInfo"), "version")),
            b->up_version);
    pthread_cond_broadcast(&b->cond);
    return 0;
}

static void tools_answer_locked(mb_gw_backend *b, const char *line, const mb_gw_span *sp,
                                json_t *parsed)
{
    mb_assert_held(&b->lock);
    json_t *result = parsed ? json_incref(parsed) : mb_gw__span_json(line, sp[K_RESULT]);
    json_t *tools = json_object_get(result, "tools");
    int first_page = b->tools_acc && json_array_size(b->tools_acc) == 0;
    if (json_is_array(tools) && b->tools_acc) json_array_extend(b->tools_acc, tools);
    json_t *cursor = json_object_get(result, "nextCursor");
    /* One page, as the server wrote it: what a tools_static server's clients
     * are answered with (client_request). */
    if (first_page && json_is_array(tools) && !cursor && !b->tools_stale)
        b->tools_text = mb_strndup(line + sp[K_RESULT].off, sp[K_RESULT].len);
    if (json_is_string(cursor) && !b->tools_stale && json_array_size(b->tools_acc) < 100000) {
        char *c = mb_gw__json_text(cursor);
        mb_gw__route_fetch_tools_locked(b, c);
        free(c);
    } else if (b->tools_stale) {
        mb_gw__route_fetch_tools_locked(b, NULL);
    } else {
        mb_gw__tools_hash(b->tools_acc, b->tools_sha, &b->tools_count);
        /* Only the names are read after the hash (observe.c): the schemas of
         * a big server (canvas: 69 tools) would cost ~0.3 MB per sandbox. */
        json_t *names = json_array(), *t;
        size_t i;
        json_array_foreach(b->tools_acc, i, t) {
            json_t *n = json_object_get(t, "name");
            if (json_is_string(n)) json_array_append_new(names, json_pack("{s:O}", "name", n));
        }
        json_decref(b->tools_acc);
        b->tools_acc = names;
        b->tools_fetching = 0;
        b->tools_known = 1;
        pthread_cond_broadcast(&b->cond);
    }
    json_decref(result);
}

/* --------------------------------------------------------- from the server */

static void drop_line(mb_gw_backend *b, const char *why, const char *line, size_t len)
{
    char shown[121];
    size_t k = len < 120 ? len : 120;
    for (size_t i = 0; i < k; i++)
        shown[i] = (unsigned char)line[i] < 0x20 || line[i] == 0x7f ? '?' : line[i];
    shown[k] = '\0';
    if (b->garbage_lines++ < 5)
        mb_warn("gateway: [%s/%s] dropped a stdout line (%s, %zu bytes): %s%s", b->sandbox_id,
                b->server, why, len, shown, len > k ? "..." : "");
    else
        mb_debug("gateway: [%s/%s] dropped a stdout line (%s, %zu bytes)", b->sandbox_id,
                 b->server, why, len);
}

/* The observer's view of a server's answer to a client request. */
static void observe_answer_locked(mb_gw_pending *p, const char *line, const mb_gw_span *sp)
{
    mb_assert_held(&p->b->lock);
    if (sp[K_ERROR].len) {
        json_t *msg = mb_gw__span_json(line, member(line, sp[K_ERROR], "message"));
        mb_gw__observe_locked(p, 2, sp[K_ERROR].len,
                              json_is_string(msg) ? json_string_value(msg) : "(no message)");
        json_decref(msg);
        return;
    }
    mb_gw__observe_locked(p, mb_gw__result_is_error(line, sp[K_RESULT]) ? 1 : 0, sp[K_RESULT].len,
                          NULL);
}

/* result: the parsed "result" member when the line was parsed whole (borrowed;
 * NULL: parse it from its span if needed). */
static void server_response(mb_gw_backend *b, uint64_t gen, const char *line, size_t len,
                            const mb_gw_span *sp, json_t *result)
{
    int64_t id;
    int refused = 0;
    char why[sizeof b->last_error];
    pthread_mutex_lock(&b->lock);
    if (gen != b->gen) goto out;
    mb_gw_pending *p = span_int(line, sp[K_ID], &id) ? find_locked(b, id) : NULL;
    if (!p || p->kind == MB_GW_PEND_SREQ) {
        mb_debug("gateway: [%s/%s] response to an id nobody waits for (%.*s); dropped",
                 b->sandbox_id, b->server, (int)(sp[K_ID].len < 40 ? sp[K_ID].len : 40),
                 line + sp[K_ID].off);
        goto out;
    }
    if (p->kind == MB_GW_PEND_INIT) {
        mb_gw__pending_free_locked(p);
        refused = init_answer_locked(b, line, sp, result) < 0;
        if (refused) snprintf(why, sizeof why, "%s", b->last_error);
    } else if (p->kind == MB_GW_PEND_TOOLS) {
        mb_gw__pending_free_locked(p);
        tools_answer_locked(b, line, sp, result);
    } else if (p->kind == MB_GW_PEND_PROBE) {
        mb_gw__pending_free_locked(p);
        mb_gw__backend_probe_answered_locked(b);
    } else {
        if (p->obs.on) observe_answer_locked(p, line, sp);
        if (p->x) {
            size_t n;
            char *t = mb_gw__splice(line, len, sp[K_ID], p->orig_id, strlen(p->orig_id), &n);
            mb_gw__pending_answer_locked(p, t, n);
            free(t);
        }
        mb_gw__pending_free_locked(p);
    }
out:
    pthread_mutex_unlock(&b->lock);
    if (refused) mb_gw__backend_died(b, gen, why);
}

static int session_can(const mb_gw_session *s, const char *cap)
{
    return !cap || json_object_get(s->caps, cap) != NULL;
}

/* Where a server request goes (see the top of the file). */
static mb_gw_stream *pick_target_locked(mb_gw_backend *b, const char *cap, mb_gw_session **out)
{
    mb_assert_held(&b->lock);
    for (mb_gw_link *l = b->calls.prev; l != &b->calls; l = l->prev) {
        mb_gw_pending *p = MB_GW_CONTAINER(l, mb_gw_pending, b_link);
        if (!p->s || p->s->ended || !session_can(p->s, cap)) continue;
        mb_gw_stream *st = NULL;
        if (p->x && p->x->accepts_sse && !p->x->closed && !p->x->abandoned) st = p->x;
        if (!st) st = mb_gw__session_stream_locked(p->s);
        if (st) {
            *out = p->s;
            return st;
        }
    }
    mb_gw_session *best = NULL;
    for (mb_gw_link *l = b->sessions.next; l != &b->sessions; l = l->next) {
        mb_gw_session *s = MB_GW_CONTAINER(l, mb_gw_session, b_link);
        if (!session_can(s, cap) || !mb_gw__session_stream_locked(s)) continue;
        if (!best || s->stream_opened_ms >= best->stream_opened_ms) best = s;
    }
    if (!best) return NULL;
    *out = best;
    return mb_gw__session_stream_locked(best);
}

static void server_request(mb_gw_backend *b, uint64_t gen, const char *line, size_t len,
                           const mb_gw_span *sp, const char *method)
{
    json_t *idv = mb_gw__span_json(line, sp[K_ID]);
    if (!idv) return;
    json_decref(idv);
    char *id_text = mb_strndup(line + sp[K_ID].off, sp[K_ID].len); /* as the server wrote it */
    pthread_mutex_lock(&b->lock);
    if (gen != b->gen) goto out;
    if (!strcmp(method, "ping")) {
        char *t = mb_asprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", id_text);
        send_quiet_locked(b, t);
        free(t);
        goto out;
    }
    const char *cap = !strcmp(method, "roots/list")               ? "roots"
                      : !strcmp(method, "sampling/createMessage") ? "sampling"
                      : !strcmp(method, "elicitation/create")     ? "elicitation"
                                                                  : NULL;
    mb_gw_session *s = NULL;
    mb_gw_stream *st = pick_target_locked(b, cap, &s);
    if (!st) {
        char *t = mb_gw__error_text(id_text, MB_GW_EINTERNAL,
                                   "no client can answer %s now: no request is in flight "
                                   "and no session%s%s%s has an open GET stream",
                                   method, cap ? " with the " : "", cap ? cap : "",
                                   cap ? " capability" : "");
        send_quiet_locked(b, t);
        free(t);
        goto out;
    }
    mb_gw_pending *p = mb_gw__pending_new_locked(b, MB_GW_PEND_SREQ, method);
    p->orig_id = id_text;
    id_text = NULL;
    p->s = s;
    p->deadline_ms = p->started_ms + b->gw->opts.call_timeout_ms;
    mb_gw__list_push(&s->sreqs, &p->s_link);
    mb_gw__list_push(&b->sreqs, &p->b_link);
    char num[24];
    int nl = snprintf(num, sizeof num, "%lld", (long long)p->id);
    size_t n;
    char *t = mb_gw__splice(line, len, sp[K_ID], num, (size_t)nl, &n);
    if (mb_gw__stream_push_locked(st, t, n, 0)) {
        char *e = mb_gw__error_text(p->orig_id, MB_GW_EINTERNAL,
                                   "the client's stream is not accepting messages");
        send_quiet_locked(b, e);
        free(e);
        mb_gw__pending_free_locked(p);
    }
    free(t);
out:
    pthread_mutex_unlock(&b->lock);
    free(id_text);
}

static void broadcast_locked(mb_gw_backend *b, const char *text, size_t len, const char *uri)
{
    mb_assert_held(&b->lock);
    for (mb_gw_link *l = b->sessions.next; l != &b->sessions; l = l->next) {
        mb_gw_session *s = MB_GW_CONTAINER(l, mb_gw_session, b_link);
        if (uri && !json_object_get(s->subs, uri)) continue;
        mb_gw_stream *st = mb_gw__session_stream_locked(s);
        if (st) mb_gw__stream_push_locked(st, text, len, 0);
    }
}

/* The newest call in flight whose exchange can carry a notification. */
static mb_gw_stream *newest_sse_call_locked(mb_gw_backend *b)
{
    mb_assert_held(&b->lock);
    for (mb_gw_link *l = b->calls.prev; l != &b->calls; l = l->prev) {
        mb_gw_pending *p = MB_GW_CONTAINER(l, mb_gw_pending, b_link);
        if (p->x && p->x->accepts_sse && !p->x->closed && !p->x->abandoned) return p->x;
    }
    return NULL;
}

static void server_notification(mb_gw_backend *b, uint64_t gen, const char *line, size_t len,
                                const mb_gw_span *sp, const char *method)
{
    pthread_mutex_lock(&b->lock);
    if (gen != b->gen) goto out;
    if (!strcmp(method, "notifications/progress")) {
        mb_gw_span tok = member(line, sp[K_PARAMS], "progressToken");
        int64_t id;
        mb_gw_pending *p = tok.len && span_int(line, tok, &id) ? find_locked(b, id) : NULL;
        if (p && p->kind == MB_GW_PEND_CALL && p->orig_token && p->x && p->x->accepts_sse) {
            size_t n;
            char *t = mb_gw__splice(line, len, tok, p->orig_token, strlen(p->orig_token), &n);
            mb_gw__stream_push_locked(p->x, t, n, 0);
            free(t);
        }
    } else if (!strcmp(method, "notifications/cancelled")) {
        /* The server gave up on a request it sent to a client. */
        mb_gw_span rid = member(line, sp[K_PARAMS], "requestId");
        json_t *v = mb_gw__span_json(line, rid);
        char *text = v ? mb_gw__json_text(v) : NULL;
        json_decref(v);
        for (mb_gw_link *l = b->sreqs.next; text && l != &b->sreqs; l = l->next) {
            mb_gw_pending *p = MB_GW_CONTAINER(l, mb_gw_pending, b_link);
            if (strcmp(p->orig_id, text)) continue;
            mb_gw_stream *st = mb_gw__session_stream_locked(p->s);
            if (st) {
                char num[24];
                int nl = snprintf(num, sizeof num, "%lld", (long long)p->id);
                size_t n;
                char *t = mb_gw__splice(line, len, rid, num, (size_t)nl, &n);
                mb_gw__stream_push_locked(st, t, n, 0);
                free(t);
            }
            mb_gw__pending_free_locked(p);
            break;
        }
        free(text);
    } else if (!strcmp(method, "notifications/message")) {
        mb_gw_stream *st = newest_sse_call_locked(b);
        if (st) mb_gw__stream_push_locked(st, line, len, 0);
        else broadcast_locked(b, line, len, NULL);
    } else if (!strcmp(method, "notifications/resources/updated")) {
        json_t *uri = mb_gw__span_json(line, member(line, sp[K_PARAMS], "uri"));
        if (json_is_string(uri)) broadcast_locked(b, line, len, json_string_value(uri));
        json_decref(uri);
    } else {
        if (!strcmp(method, "notifications/tools/list_changed")) {
            if (b->tools_fetching) b->tools_stale = 1;
            else if (b->state == MB_GW_READY) mb_gw__route_fetch_tools_locked(b, NULL);
        }
        broadcast_locked(b, line, len, NULL);
    }
out:
    pthread_mutex_unlock(&b->lock);
}

/* Whether line is JSON (fully checked up to MB_GW_FULL_VALIDATE_MAX); *tree
 * gets the parsed message when it was (caller decrefs), for the answers the
 * gateway reads itself (initialize, tools/list), which are then not parsed
 * twice. */
static int valid_json(const char *line, size_t len, json_t **tree)
{
    *tree = NULL;
    if (len > MB_GW_FULL_VALIDATE_MAX) return 1; /* structurally scanned only */
    json_error_t e;
    json_t *j = json_loadb(line, len, JSON_ALLOW_NUL, &e);
    if (j) {
        *tree = j;
        return 1;
    }
    /* Numbers jansson cannot hold (beyond 64-bit integers or doubles) are
     * still JSON; the text is forwarded untouched. */
    return json_error_code(&e) == json_error_numeric_overflow;
}

void mb_gw__route_from_server(mb_gw_backend *b, uint64_t gen, const char *line, size_t len)
{
    mb_gw_span sp[K_N];
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    if (i < len && line[i] == '[') {
        /* A batch: route its elements one by one. */
        json_error_t e;
        json_t *arr = json_loadb(line, len, JSON_ALLOW_NUL, &e);
        if (!json_is_array(arr)) {
            pthread_mutex_lock(&b->lock);
            drop_line(b, "not JSON", line, len);
            pthread_mutex_unlock(&b->lock);
        }
        for (size_t k = 0; json_is_array(arr) && k < json_array_size(arr); k++) {
            char *t = mb_gw__json_text(json_array_get(arr, k));
            mb_gw__route_from_server(b, gen, t, strlen(t));
            free(t);
        }
        json_decref(arr);
        return;
    }
    const char *why = NULL;
    json_t *tree = NULL;
    if (mb_gw__scan(line, len, msg_keys, K_N, sp) < 0 || !valid_json(line, len, &tree))
        why = "not JSON";
    json_t *m = why ? NULL : mb_gw__span_json(line, sp[K_METHOD]);
    if (!why && sp[K_METHOD].len && !json_is_string(m)) why = "method is not a string";
    if (!why && !sp[K_METHOD].len && !(sp[K_ID].len && (sp[K_RESULT].len || sp[K_ERROR].len)))
        why = "not a JSON-RPC message";
    if (why) {
        pthread_mutex_lock(&b->lock);
        if (gen == b->gen) drop_line(b, why, line, len);
        pthread_mutex_unlock(&b->lock);
        json_decref(m);
        json_decref(tree);
        return;
    }
    if (!m) {
        server_response(b, gen, line, len, sp, json_object_get(tree, "result"));
        json_decref(tree);
        return;
    }
    json_decref(tree);
    int has_id = sp[K_ID].len && !(sp[K_ID].len == 4 && !memcmp(line + sp[K_ID].off, "null", 4));
    if (has_id) server_request(b, gen, line, len, sp, json_string_value(m));
    else server_notification(b, gen, line, len, sp, json_string_value(m));
    json_decref(m);
}

void mb_gw__route_oversize(mb_gw_backend *b, uint64_t gen, size_t len, const char *head,
                          size_t head_len, const char *tail, size_t tail_len)
{
    int64_t id;
    int known = mb_gw__guess_id(head, head_len, tail, tail_len, &id);
    pthread_mutex_lock(&b->lock);
    if (gen == b->gen) {
        mb_warn("gateway: [%s/%s] dropped a %zu-byte message from the server, over the "
                "%zu-byte limit",
                b->sandbox_id, b->server, len, b->gw->opts.max_message_bytes);
        mb_gw_pending *p = known ? find_locked(b, id) : NULL;
        if (p && p->kind == MB_GW_PEND_CALL) {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "the MCP server's answer to %s was %zu bytes, over the gateway's limit "
                     "of %zu bytes per message",
                     p->method, len, b->gw->opts.max_message_bytes);
            mb_gw__pending_fail_locked(p, MB_GW_EINTERNAL, 0, msg);
        } else if (p && p->kind == MB_GW_PEND_TOOLS) {
            mb_gw__pending_free_locked(p);
            b->tools_fetching = 0;
            b->tools_known = 1;
            pthread_cond_broadcast(&b->cond);
        }
    }
    pthread_mutex_unlock(&b->lock);
}

/* ---------------------------------------------------------- from a client */

static int other_session_subscribed_locked(mb_gw_session *s, const char *uri)
{
    mb_assert_held(&s->b->lock);
    mb_gw_backend *b = s->b;
    for (mb_gw_link *l = b->sessions.next; l != &b->sessions; l = l->next) {
        mb_gw_session *o = MB_GW_CONTAINER(l, mb_gw_session, b_link);
        if (o != s && json_object_get(o->subs, uri)) return 1;
    }
    return 0;
}

static void push_error_locked(mb_gw_stream *x, const char *id_text, int code, const char *msg)
{
    mb_assert_held(&x->b->lock);
    char *t = mb_gw__error_text(id_text, code, "%s", msg);
    mb_gw__stream_push_locked(x, t, strlen(t), 1);
    free(t);
}

/* The upstream text of a client request: id (and progress token) replaced by
 * the upstream id. Falls back to re-serializing when the members cannot be
 * located in the text (escaped keys). */
static char *upstream_request(const mb_gw_cmsg *m, int64_t up, int has_token, size_t *n)
{
    char num[24];
    int nl = snprintf(num, sizeof num, "%lld", (long long)up);
    mb_gw_span sp[K_N];
    if (mb_gw__scan(m->raw, m->raw_len, msg_keys, K_N, sp) >= 0 && sp[K_ID].len) {
        mb_gw_span tok = {0, 0};
        if (has_token) tok = member(m->raw, member(m->raw, sp[K_PARAMS], "_meta"),
                                    "progressToken");
        if (!has_token || tok.len) {
            mb_gw_span first = sp[K_ID], second = tok;
            if (tok.len && tok.off > first.off) {
                first = tok;
                second = sp[K_ID];
            }
            size_t n1;
            char *t1 = mb_gw__splice(m->raw, m->raw_len, first, num, (size_t)nl, &n1);
            if (!second.len) {
                *n = n1;
                return t1;
            }
            char *t2 = mb_gw__splice(t1, n1, second, num, (size_t)nl, n);
            free(t1);
            return t2;
        }
    }
    json_t *c = json_deep_copy(m->j);
    json_object_set_new(c, "id", json_integer(up));
    if (has_token)
        json_object_set_new(json_object_get(json_object_get(c, "params"), "_meta"),
                            "progressToken", json_integer(up));
    char *t = mb_gw__json_text(c);
    json_decref(c);
    *n = strlen(t);
    return t;
}

/* A client's tools/list (no cursor) to a tools_static server whose list the
 * gateway holds: answered with the server's own text of it here, without a
 * round trip through the process (two wake-ups, and jansson over the answer
 * on the way back). Observed like a forwarded call. 1 if answered. */
static int tools_from_copy_locked(mb_gw_pending *p, const char *method, json_t *params)
{
    mb_gw_backend *b = p->b;
    mb_assert_held(&b->lock);
    if (strcmp(method, "tools/list") || !b->tools_static || !b->tools_text ||
        !b->tools_known || b->tools_fetching || json_object_get(params, "cursor"))
        return 0;
    size_t n = strlen(b->tools_text);
    if (p->obs.on) mb_gw__observe_locked(p, 0, n, NULL);
    /* appended, not printed: the list is tens of KiB */
    mb_buf t = {0};
    mb_buf_reserve(&t, n + strlen(p->orig_id) + 40);
    mb_buf_puts(&t, "{\"jsonrpc\":\"2.0\",\"id\":");
    mb_buf_puts(&t, p->orig_id);
    mb_buf_puts(&t, ",\"result\":");
    mb_buf_append(&t, b->tools_text, n);
    mb_buf_putc(&t, '}');
    mb_gw__pending_answer_locked(p, t.data, t.len);
    mb_buf_free(&t);
    mb_gw__pending_free_locked(p);
    return 1;
}

static int client_request(mb_gw_stream *x, const mb_gw_cmsg *m, const char *method,
                          json_t *id)
{
    mb_gw_session *s = x->s;
    mb_gw_backend *b = s->b;
    char *id_text = mb_gw__member_text(m->raw, m->raw_len, "id", id);
    if (!strcmp(method, "initialize")) {
        push_error_locked(x, id_text, MB_GW_EINVALID,
                          "this session is already initialized; to start another, POST "
                          "initialize without an Mcp-Session-Id header");
        goto done;
    }
    for (mb_gw_link *l = s->calls.next; l != &s->calls; l = l->next) {
        mb_gw_pending *p = MB_GW_CONTAINER(l, mb_gw_pending, s_link);
        if (!strcmp(p->orig_id, id_text)) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "duplicate request id %.60s: a request with this id is still in flight "
                     "in this session",
                     id_text);
            push_error_locked(x, id_text, MB_GW_EINVALID, msg);
            goto done;
        }
    }
    if (s->ncalls >= MB_GW_MAX_CALLS_PER_SESSION) {
        push_error_locked(x, id_text, MB_GW_ESERVER,
                          "too many requests in flight in this session; wait for answers");
        goto done;
    }
    json_t *params = json_object_get(m->j, "params");
    const char *uri = json_string_value(json_object_get(params, "uri"));
    if (!strcmp(method, "resources/unsubscribe") && uri) {
        json_object_del(s->subs, uri);
        if (other_session_subscribed_locked(s, uri)) {
            /* Another session still wants updates: keep the server's
             * subscription and answer here. */
            char *t = mb_asprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", id_text);
            mb_gw__stream_push_locked(x, t, strlen(t), 1);
            free(t);
            goto done;
        }
    } else if (!strcmp(method, "resources/subscribe") && uri) {
        json_object_set_new(s->subs, uri, json_true());
    }
    json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
    mb_gw_pending *p = mb_gw__pending_new_locked(b, MB_GW_PEND_CALL, method);
    p->orig_id = id_text;
    id_text = NULL;
    if (token) p->orig_token = mb_gw__json_text(token);
    p->s = s;
    p->x = x;
    p->deadline_ms = p->started_ms + b->gw->opts.call_timeout_ms;
    mb_gw__list_push(&s->calls, &p->s_link);
    s->ncalls++;
    atomic_fetch_add(&s->active, 1);
    mb_gw__list_push(&b->calls, &p->b_link);
    mb_gw__list_push(&x->calls, &p->x_link);
    x->outstanding++;
    mb_gw__observe_begin_locked(p, m);
    if (tools_from_copy_locked(p, method, params)) goto done;
    size_t n;
    char *t = upstream_request(m, p->id, token != NULL, &n);
    mb_err e;
    if (mb_gw__route_send_noted_locked(s, t, n, &e))
        mb_gw__pending_fail_locked(p, MB_GW_ESERVER, 0, e.msg);
    free(t);
done:
    free(id_text);
    return 0;
}

static int client_notification(mb_gw_stream *x, const mb_gw_cmsg *m, const char *method)
{
    mb_gw_session *s = x->s;
    mb_gw_backend *b = s->b;
    if (!strcmp(method, "notifications/initialized")) return 0;
    if (!strcmp(method, "notifications/cancelled")) {
        json_t *rid = json_object_get(json_object_get(m->j, "params"), "requestId");
        if (!rid) return 0;
        mb_gw_span sp[K_N];
        int raw = mb_gw__scan(m->raw, m->raw_len, msg_keys, K_N, sp) >= 0 && sp[K_PARAMS].len;
        char *text = mb_gw__member_text(raw ? m->raw + sp[K_PARAMS].off : NULL,
                                       raw ? sp[K_PARAMS].len : 0, "requestId", rid);
        for (mb_gw_link *l = s->calls.next; l != &s->calls; l = l->next) {
            mb_gw_pending *p = MB_GW_CONTAINER(l, mb_gw_pending, s_link);
            if (strcmp(p->orig_id, text)) continue;
            json_t *c = json_deep_copy(m->j);
            json_object_set_new(json_object_get(c, "params"), "requestId", json_integer(p->id));
            char *t = mb_gw__json_text(c);
            json_decref(c);
            send_quiet_locked(b, t);
            free(t);
            mb_gw__pending_fail_locked(p, MB_GW_ESERVER, 0, "the client cancelled this request");
            mb_gw__backend_probe_locked(b);
            break;
        }
        free(text);
        return 0;
    }
    mb_err e;
    if (mb_gw__route_send_noted_locked(s, m->raw, m->raw_len, &e))
        mb_debug("gateway: [%s/%s] notification not delivered: %s", b->sandbox_id, b->server,
                 e.msg);
    return 0;
}

static int client_response(mb_gw_stream *x, const mb_gw_cmsg *m, char **errtext)
{
    mb_gw_session *s = x->s;
    mb_gw_backend *b = s->b;
    json_t *id = json_object_get(m->j, "id");
    mb_gw_pending *p = json_is_integer(id) ? find_locked(b, json_integer_value(id)) : NULL;
    if (!p || p->kind != MB_GW_PEND_SREQ || p->s != s) {
        char *idt = mb_gw__json_text(id);
        *errtext = mb_gw__error_text(NULL, MB_GW_EINVALID,
                                    "no request with id %.60s is waiting for an answer from "
                                    "this session",
                                    idt);
        free(idt);
        return -1;
    }
    mb_gw_span sp[K_N];
    size_t n;
    char *t;
    if (mb_gw__scan(m->raw, m->raw_len, msg_keys, K_N, sp) >= 0 && sp[K_ID].len) {
        t = mb_gw__splice(m->raw, m->raw_len, sp[K_ID], p->orig_id, strlen(p->orig_id), &n);
    } else {
        json_t *c = json_deep_copy(m->j);
        json_error_t e;
        json_object_set_new(c, "id", json_loads(p->orig_id, JSON_DECODE_ANY, &e));
        t = mb_gw__json_text(c);
        n = strlen(t);
        json_decref(c);
    }
    mb_gw__pending_free_locked(p);
    mb_err e;
    if (mb_gw__route_send_noted_locked(s, t, n, &e))
        mb_debug("gateway: [%s/%s] response not delivered: %s", b->sandbox_id, b->server,
                 e.msg);
    free(t);
    return 0;
}

int mb_gw__route_from_client_locked(mb_gw_stream *x, const mb_gw_cmsg *m, char **errtext)
{
    mb_assert_held(&x->b->lock);
    json_t *j = m->j;
    *errtext = NULL;
    json_t *id = json_object_get(j, "id");
    json_t *method = json_object_get(j, "method");
    int id_ok = json_is_string(id) || json_is_number(id);
    if (!json_is_object(j)) {
        *errtext = mb_gw__error_text(NULL, MB_GW_EINVALID,
                                    "a JSON-RPC message must be an object");
        return -1;
    }
    const char *ver = json_string_value(json_object_get(j, "jsonrpc"));
    if (!ver || strcmp(ver, "2.0")) {
        *errtext = mb_gw__error_text(NULL, MB_GW_EINVALID,
                                    "invalid JSON-RPC message: \"jsonrpc\" must be \"2.0\"");
        if (method && id_ok) {
            char *idt = mb_gw__json_text(id);
            free(*errtext);
            *errtext = mb_gw__error_text(idt, MB_GW_EINVALID,
                                        "invalid JSON-RPC message: \"jsonrpc\" must be "
                                        "\"2.0\"");
            free(idt);
        }
        return -1;
    }
    int ready = x->b->state == MB_GW_READY;
    if (method) {
        if (!json_is_string(method)) {
            *errtext = mb_gw__error_text(NULL, MB_GW_EINVALID, "\"method\" must be a string");
            return -1;
        }
        if (!id) return ready ? client_notification(x, m, json_string_value(method)) : 0;
        if (!id_ok) {
            *errtext = mb_gw__error_text(NULL, MB_GW_EINVALID,
                                        "a request id must be a string or a number");
            return -1;
        }
        if (!ready) {
            /* It died and is restarting since the caller checked; a new
             * process must see initialize first. */
            char *idt = mb_gw__json_text(id);
            push_error_locked(x, idt, MB_GW_ESERVER,
                              "the MCP server is restarting; retry the request");
            free(idt);
            return 0;
        }
        return client_request(x, m, json_string_value(method), id);
    }
    int has_result = json_object_get(j, "result") != NULL;
    int has_error = json_object_get(j, "error") != NULL;
    if (id && has_result != has_error) return client_response(x, m, errtext);
    *errtext = mb_gw__error_text(NULL, MB_GW_EINVALID,
                                "not a JSON-RPC request, notification or response");
    return -1;
}
