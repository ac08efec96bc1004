/*
 * http.c - the Streamable HTTP transport: mb_gateway_handle() on top of
 * libmicrohttpd in thread-per-connection mode.
 *
 * REQUEST FLOW
 *   Every request: Host and Origin checked (403), then the route's backend
 *   looked up (404 for an unknown sandbox or a server it did not acquire).
 *   These checks, and for POST the Content-Type (415) and a declared
 *   Content-Length over max_message_bytes (413), run as soon as the headers
 *   are in: a refused request is answered before its body is read (MHD
 *   then closes the connection), so a wrong URL never costs memory.
 *   POST  body gathered (bounded by max_message_bytes: 413), parsed (400
 *         -32700), then either `initialize` (a new session, answered from the
 *         backend's remembered InitializeResult) or messages of an existing
 *         session (Mcp-Session-Id required: 400; unknown/ended: 404;
 *         MCP-Protocol-Version, if sent, must be supported: 400; batches
 *         only up to 2025-03-26). Notifications and responses alone: 202.
 *         Requests: the thread waits on the exchange. It answers with JSON
 *         when every answer arrived before anything else did; it switches to
 *         an SSE stream as soon as the server sends a request-scoped message
 *         (progress, logging, a server request) or after keepalive_ms without
 *         an answer, so that headers and keep-alive comments flow during long
 *         calls. A client that only accepts one of the two gets that one.
 *   GET   an SSE stream for server messages that belong to no request.
 *   DELETE ends the session.
 *   OPTIONS CORS preflight.
 *
 * Blocking is deliberate: each connection has its own MHD thread, so a slow
 * server only holds the connections that wait for it.
 */
#define _GNU_SOURCE /* strcasestr */
#include "gateway/gateway_int.h"
#include "http/http.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { M_OTHER, M_POST, M_GET, M_DELETE, M_OPTIONS };

typedef struct mb_gw_req {
    int method;
    mb_buf body;
    size_t body_seen;
    int too_big;
    int routed;   /* the headers named a live (sandbox, server) */
    int answered; /* answered before the body was in; the body is not kept */
    const char *origin; /* the allowed Origin (MHD keeps it for the request) */
    mb_gw_stream *st; /* reference: the POST exchange or GET stream */
} mb_gw_req;

typedef struct ctx {
    mb_gateway *gw;
    struct MHD_Connection *conn;
    mb_gw_req *r;
    const char *origin; /* echoed in CORS headers when allowed */
} ctx;

static const char *header(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* ---------------------------------------------------------- responses */

static void common_headers(const ctx *c, struct MHD_Response *resp)
{
    if (c->origin) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", c->origin);
        MHD_add_response_header(resp, "Vary", "Origin");
    }
    MHD_add_response_header(resp, "Access-Control-Expose-Headers",
                            "Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID");
}

/* Queues `body` (malloc'd, freed by MHD; NULL = empty). */
static enum MHD_Result send_body(const ctx *c, unsigned status, const char *ctype, char *body,
                                 const char *session_id)
{
    struct MHD_Response *resp =
        body ? MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE)
             : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    common_headers(c, resp);
    if (ctype) MHD_add_response_header(resp, "Content-Type", ctype);
    if (session_id) MHD_add_response_header(resp, "Mcp-Session-Id", session_id);
    /* through the HTTP layer, which drains a refused request's body first */
    return mb_http_queue_response(c->conn, status, resp);
}

static enum MHD_Result send_json(const ctx *c, unsigned status, char *body)
{
    return send_body(c, status, "application/json", body, NULL);
}

static enum MHD_Result send_error(const ctx *c, unsigned status, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static enum MHD_Result send_error(const ctx *c, unsigned status, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return send_json(c, status, mb_gw__error_text(NULL, code, "%s", msg));
}

/* ------------------------------------------------------- Host and Origin */

static const char *const default_hosts[] = {"localhost", "127.0.0.1", "[::1]", NULL};

/* The host part of "host[:port]" or "[v6]:port", lower-cased into out. */
static void host_part(const char *hp, size_t n, char *out, size_t cap)
{
    size_t len;
    if (n && hp[0] == '[') {
        const char *end = memchr(hp, ']', n);
        len = end ? (size_t)(end - hp) + 1 : n;
    } else {
        const char *colon = memchr(hp, ':', n);
        len = colon ? (size_t)(colon - hp) : n;
    }
    if (len >= cap) len = cap - 1;
    for (size_t i = 0; i < len; i++)
        out[i] = (char)(hp[i] >= 'A' && hp[i] <= 'Z' ? hp[i] + 32 : hp[i]);
    out[len] = '\0';
}

/* wildcard: whether "*" in the list matches (for Host, not for Origin). */
static int host_listed(const mb_gateway *gw, const char *host, int wildcard)
{
    const char *const *list = gw->hosts ? (const char *const *)gw->hosts : default_hosts;
    for (; *list; list++)
        if ((wildcard && !strcmp(*list, "*")) || !strcasecmp(*list, host)) return 1;
    return 0;
}

static int host_allowed(const mb_gateway *gw, const char *hosthdr)
{
    if (!hosthdr) return 1; /* HTTP/1.0 */
    char host[256];
    host_part(hosthdr, strlen(hosthdr), host, sizeof host);
    return host_listed(gw, host, 1);
}

static int origin_allowed(const mb_gateway *gw, const char *origin)
{
    const char *sep = strstr(origin, "://");
    if (!sep) return 0; /* "null" and garbage */
    const char *hp = sep + 3;
    size_t n = strcspn(hp, "/");
    char host[256];
    host_part(hp, n, host, sizeof host);
    if (host_listed(gw, host, 0)) return 1;
    if (!gw->origins) return 0;
    size_t olen = (size_t)(hp + n - origin);
    for (char **e = gw->origins; *e; e++) {
        if (!strcmp(*e, "*")) return 1;
        if (strstr(*e, "://")) {
            size_t el = strlen(*e);
            while (el && (*e)[el - 1] == '/') el--;
            if (el == olen && !strncasecmp(*e, origin, olen)) return 1;
        } else if (!strcasecmp(*e, host)) {
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------- Accept */

static void accepts(struct MHD_Connection *conn, int *json, int *sse)
{
    const char *a = header(conn, "Accept");
    if (!a || !*a || strstr(a, "*/*")) {
        *json = *sse = 1;
        return;
    }
    *json = strcasestr(a, "application/json") != NULL || strcasestr(a, "application/*") != NULL;
    *sse = strcasestr(a, "text/event-stream") != NULL || strcasestr(a, "text/*") != NULL;
}

/* ------------------------------------------------------------ SSE output */

static void sse_format(mb_gw_stream *st, mb_gw_msg *m)
{
    char kind = st->kind == MB_GW_STREAM_POST ? 'p' : 'g';
    while (m) {
        mb_gw_msg *next = m->next;
        mb_buf_printf(&st->out, "event: message\nid: %c%llu-%llu\ndata: ", kind,
                      (unsigned long long)st->no, (unsigned long long)++st->seq);
        mb_buf_append(&st->out, m->data, m->len);
        mb_buf_puts(&st->out, "\n\n");
        free(m);
        m = next;
    }
}

/* MHD's content reader: blocks this connection's thread until there is
 * something to send, the stream ends, or a keep-alive is due. */
static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    mb_gw_stream *st = cls;
    mb_gw_backend *b = st->b;
    if (st->out_off >= st->out.len) {
        if (st->ended) return MHD_CONTENT_READER_END_OF_STREAM;
        mb_buf_reset(&st->out);
        st->out_off = 0;
        int keepalive = b->gw->opts.keepalive_ms;
        pthread_mutex_lock(&b->lock);
        if (st->prime && !st->seq) {
            mb_buf_printf(&st->out, "id: p%llu-0\ndata: \n\n", (unsigned long long)st->no);
            st->seq = 1;
        }
        while (!st->out.len) {
            int64_t now = mb_gw__now();
            int64_t next = st->kind == MB_GW_STREAM_POST ? mb_gw__expire_locked(b, st, now)
                                                          : INT64_MAX;
            mb_gw_msg *m = mb_gw__stream_take_locked(st);
            if (m) {
                sse_format(st, m);
                break;
            }
            if (st->closed || (st->kind == MB_GW_STREAM_POST && st->outstanding <= 0) ||
                atomic_load(&b->gw->closing)) {
                st->ended = 1;
                break;
            }
            int64_t ka = st->last_write_ms + keepalive;
            if (now >= ka) {
                mb_buf_puts(&st->out, ": keepalive\n\n");
                break;
            }
            mb_gw__cond_wait_until(&st->cond, &b->lock, next < ka ? next : ka);
        }
        pthread_mutex_unlock(&b->lock);
        st->last_write_ms = mb_gw__now();
        if (!st->out.len) return MHD_CONTENT_READER_END_OF_STREAM;
    }
    size_t n = st->out.len - st->out_off;
    if (n > max) n = max;
    memcpy(buf, st->out.data + st->out_off, n);
    st->out_off += n;
    return (ssize_t)n;
}

static void sse_free(void *cls) { mb_gw__stream_unref(cls); }

/* Queues an SSE response reading from st (which gains a reference). */
static enum MHD_Result send_sse(const ctx *c, mb_gw_stream *st)
{
    pthread_mutex_lock(&st->b->lock);
    mb_gw__stream_ref_locked(st);
    pthread_mutex_unlock(&st->b->lock);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_reader, st, sse_free);
    if (!resp) {
        mb_gw__stream_unref(st);
        return MHD_NO;
    }
    common_headers(c, resp);
    MHD_add_response_header(resp, "Content-Type", "text/event-stream");
    MHD_add_response_header(resp, "Cache-Control", "no-cache, no-transform");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    enum MHD_Result ret = MHD_queue_response(c->conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* -------------------------------------------------------------- sessions */

/* The session named by Mcp-Session-Id for this route, or an error sent. */
static mb_gw_session *need_session(const ctx *c, mb_gw_backend *b, enum MHD_Result *ret)
{
    const char *sid = header(c->conn, "Mcp-Session-Id");
    if (!sid) {
        *ret = send_error(c, MHD_HTTP_BAD_REQUEST, MB_GW_ESERVER,
                          "Bad Request: Mcp-Session-Id header is required (POST initialize "
                          "first to get one)");
        return NULL;
    }
    mb_gw_session *s = mb_gw__sessions_lookup(c->gw, sid);
    if (!s || s->b != b) {
        mb_gw__session_unref(s);
        *ret = send_error(c, MHD_HTTP_NOT_FOUND, MB_GW_ESERVER,
                          "Session not found: it ended or never existed on this URL; start a "
                          "new one with initialize");
        return NULL;
    }
    const char *pv = header(c->conn, "MCP-Protocol-Version");
    if (pv && !mb_gw__version_supported(pv)) {
        mb_gw__session_unref(s);
        *ret = send_error(c, MHD_HTTP_BAD_REQUEST, MB_GW_ESERVER,
                          "Bad Request: unsupported MCP-Protocol-Version '%.40s' (supported: "
                          "2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25)",
                          pv);
        return NULL;
    }
    atomic_store(&s->last_used_ms, mb_gw__now());
    return s;
}

/* ------------------------------------------------------------ initialize */

static enum MHD_Result do_initialize(const ctx *c, mb_gw_backend *b, json_t *j, const char *raw,
                                     size_t raw_len, int acc_json)
{
    mb_gateway *gw = c->gw;
    json_t *id = json_object_get(j, "id");
    if (!json_is_string(id) && !json_is_number(id))
        return send_error(c, MHD_HTTP_BAD_REQUEST, MB_GW_EINVALID,
                          "initialize must be a request with a string or number id");
    char *id_text = mb_gw__member_text(raw, raw_len, "id", id);
    json_t *params = json_object_get(j, "params");
    const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
    if (!asked) {
        char *t = mb_gw__error_text(id_text, MB_GW_EPARAMS,
                                   "initialize needs params.protocolVersion");
        free(id_text);
        return send_json(c, MHD_HTTP_BAD_REQUEST, t);
    }
    mb_err e = {0};
    if (mb_gw__backend_ready(b, mb_gw__now() + gw->opts.init_timeout_ms, &e)) {
        char *t = mb_gw__error_text(id_text, MB_GW_ESERVER, "%s", e.msg);
        free(id_text);
        return send_json(c, MHD_HTTP_SERVICE_UNAVAILABLE, t);
    }
    const char *version = mb_gw__version_negotiate(asked);
    mb_gw_session *s = mb_gw__session_new(b, version, params);
    if (mb_gw__sessions_insert(gw, s, &e)) {
        mb_gw__session_unref(s);
        char *t = mb_gw__error_text(id_text, MB_GW_ESERVER, "%s", e.msg);
        free(id_text);
        return send_json(c, MHD_HTTP_SERVICE_UNAVAILABLE, t);
    }
    /* The server never sees a client's initialize (it was initialized once,
     * by the gateway); it hears of the client (s->note) with the session's
     * first message that reaches it. */
    pthread_mutex_lock(&b->lock);
    const char *result = mb_gw__init_text_locked(b, version);
    mb_buf out = {0};
    mb_buf_puts(&out, "{\"jsonrpc\":\"2.0\",\"id\":");
    mb_buf_puts(&out, id_text);
    mb_buf_puts(&out, ",\"result\":");
    if (result) mb_buf_puts(&out, result);
    else mb_buf_printf(&out, "{\"protocolVersion\":\"%s\"}", version);
    mb_buf_putc(&out, '}');
    pthread_mutex_unlock(&b->lock);
    char *text = mb_buf_steal(&out);
    free(id_text);
    enum MHD_Result ret;
    if (acc_json) {
        ret = send_body(c, MHD_HTTP_OK, "application/json", text, s->id);
    } else {
        char *ev = mb_asprintf("event: message\ndata: %s\n\n", text);
        free(text);
        ret = send_body(c, MHD_HTTP_OK, "text/event-stream", ev, s->id);
    }
    mb_debug("gateway: [%s/%s] session %s opened (%s)", b->sandbox_id, b->server, s->id,
             version);
    mb_gw__session_unref(s);
    return ret;
}

/* ------------------------------------------------------------------ POST */

static int has_note(const mb_gw_stream *x)
{
    for (const mb_gw_msg *m = x->head; m; m = m->next)
        if (!m->is_response) return 1;
    return 0;
}

/* Called with b->lock held (released here): waits for the exchange's answers
 * and sends them as JSON, or starts an SSE response. */
static enum MHD_Result reply_exchange(const ctx *c, mb_gw_stream *x, int acc_json)
{
    mb_gw_backend *b = x->b;
    mb_gateway *gw = c->gw;
    int64_t switch_at = x->accepts_sse ? mb_gw__now() + gw->opts.keepalive_ms : INT64_MAX;
    int sse = 0;
    for (;;) {
        int64_t now = mb_gw__now();
        int64_t next = mb_gw__expire_locked(b, x, now);
        if (x->outstanding <= 0) break;
        if (x->accepts_sse && (has_note(x) || now >= switch_at)) {
            sse = 1;
            break;
        }
        if (atomic_load(&gw->closing) || x->closed) {
            while (!mb_gw__list_empty(&x->calls)) {
                mb_gw_pending *p = MB_GW_CONTAINER(x->calls.next, mb_gw_pending, x_link);
                mb_gw__pending_fail_locked(p, MB_GW_ESERVER, 1, "the gateway is shutting down");
            }
            break;
        }
        mb_gw__cond_wait_until(&x->cond, &b->lock, next < switch_at ? next : switch_at);
    }
    if (!sse && !acc_json) sse = 1;
    if (sse) {
        x->sse = 1;
        pthread_mutex_unlock(&b->lock);
        return send_sse(c, x);
    }
    mb_gw_msg *m = mb_gw__stream_take_locked(x);
    pthread_mutex_unlock(&b->lock);
    mb_buf out = {0};
    int n = 0;
    if (x->batch) mb_buf_putc(&out, '[');
    while (m) {
        mb_gw_msg *next = m->next;
        if (m->is_response && (x->batch || !n)) {
            if (n++) mb_buf_putc(&out, ',');
            mb_buf_append(&out, m->data, m->len);
        }
        free(m);
        m = next;
    }
    if (x->batch) mb_buf_putc(&out, ']');
    return send_json(c, MHD_HTTP_OK, mb_buf_steal(&out));
}

static enum MHD_Result do_post(const ctx *c, mb_gw_backend *b)
{
    mb_gateway *gw = c->gw;
    mb_gw_req *r = c->r;
    enum MHD_Result ret;
    const char *ctype = header(c->conn, "Content-Type");
    if (ctype && strncasecmp(ctype, "application/json", 16))
        return send_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, MB_GW_ESERVER,
                          "Unsupported Media Type: Content-Type must be application/json");
    if (r->too_big)
        return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, MB_GW_EINVALID,
                          "the message is %zu bytes, over the gateway's limit of %zu bytes",
                          r->body_seen, gw->opts.max_message_bytes);
    int acc_json, acc_sse;
    accepts(c->conn, &acc_json, &acc_sse);
    if (!acc_json && !acc_sse)
        return send_error(c, MHD_HTTP_NOT_ACCEPTABLE, MB_GW_ESERVER,
                          "Not Acceptable: Accept must include application/json and "
                          "text/event-stream");
    json_error_t je;
    json_t *j = json_loadb(r->body.data ? r->body.data : "", r->body.len, JSON_ALLOW_NUL, &je);
    if (!j) {
        json_error_t je2;
        j = json_loadb(r->body.data ? r->body.data : "", r->body.len,
                       JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je2);
    }
    if (!j)
        return send_error(c, MHD_HTTP_BAD_REQUEST, MB_GW_EPARSE,
                          "Parse error: %s (line %d, column %d)", je.text, je.line, je.column);
    /* JSON has no raw newlines inside strings, so any left are whitespace,
     * and a message must be one line on the server's stdin. */
    for (size_t i = 0; i < r->body.len; i++)
        if (r->body.data[i] == '\n' || r->body.data[i] == '\r') r->body.data[i] = ' ';

    int batch = json_is_array(j);
    size_t count = batch ? json_array_size(j) : 1;
    if (batch && (count == 0 || count > MB_GW_MAX_BATCH)) {
        json_decref(j);
        return send_error(c, MHD_HTTP_BAD_REQUEST, MB_GW_EINVALID,
                          count ? "a batch may hold at most %d messages" : "empty batch",
                          MB_GW_MAX_BATCH);
    }
    for (size_t i = 0; i < count; i++) {
        json_t *m = batch ? json_array_get(j, i) : j;
        const char *method = json_string_value(json_object_get(m, "method"));
        if (method && !strcmp(method, "initialize")) {
            if (batch) {
                json_decref(j);
                return send_error(c, MHD_HTTP_BAD_REQUEST, MB_GW_EINVALID,
                                  "initialize must not be part of a JSON-RPC batch");
            }
            ret = do_initialize(c, b, j, r->body.data, r->body.len, acc_json);
            json_decref(j);
            return ret;
        }
    }
    mb_gw_session *s = need_session(c, b, &ret);
    if (!s) {
        json_decref(j);
        return ret;
    }
    if (batch && !mb_gw__version_allows_batch(s->version)) {
        json_decref(j);
        mb_gw__session_unref(s);
        return send_error(c, MHD_HTTP_BAD_REQUEST, MB_GW_EINVALID,
                          "JSON-RPC batches are not allowed in protocol version %s", s->version);
    }
    mb_err e = {0};
    if (mb_gw__backend_ready(b, mb_gw__now() + gw->opts.init_timeout_ms, &e)) {
        json_t *m = batch ? json_array_get(j, 0) : j;
        json_t *id = json_object_get(m, "id");
        char *idt = !batch && id && json_object_get(m, "method") ? mb_gw__json_text(id) : NULL;
        char *t = mb_gw__error_text(idt, MB_GW_ESERVER, "%s", e.msg);
        free(idt);
        json_decref(j);
        mb_gw__session_unref(s);
        return send_json(c, MHD_HTTP_SERVICE_UNAVAILABLE, t);
    }

    /* The request headers this server reads (forward_headers), checked
     * before anything reaches it. */
    char *hdrs = NULL;
    pthread_mutex_lock(&b->lock);
    char **names = mb_strv_dup((const char *const *)b->fwd_headers);
    pthread_mutex_unlock(&b->lock);
    if (names) {
        char *why = NULL;
        hdrs = mb_gw__headers_collect(c->conn, names, &why);
        mb_strv_free(names);
        if (why) {
            json_decref(j);
            mb_gw__session_unref(s);
            ret = send_error(c, MHD_HTTP_BAD_REQUEST, MB_GW_EINVALID, "%s", why);
            free(why);
            return ret;
        }
    }
    mb_gw_stream *x = mb_gw__stream_new(MB_GW_STREAM_POST, s);
    mb_gw__session_unref(s);
    x->accepts_sse = acc_sse;
    x->prime = acc_sse && mb_gw__version_primes(s->version);
    x->batch = batch;
    r->st = x;
    pthread_mutex_lock(&b->lock);
    if (s->ended) {
        pthread_mutex_unlock(&b->lock);
        json_decref(j);
        free(hdrs);
        return send_error(c, MHD_HTTP_NOT_FOUND, MB_GW_ESERVER,
                          "Session not found: it ended; start a new one with initialize");
    }
    char *refused = NULL;
    /* Each message of a batch keeps its own text, so ids go back byte for byte. */
    mb_gw_span items[MB_GW_MAX_BATCH];
    int raw_items = batch && mb_gw__array_items(r->body.data, r->body.len, items,
                                               MB_GW_MAX_BATCH) == (int)count;
    for (size_t i = 0; i < count; i++) {
        mb_gw_cmsg cm = {batch ? json_array_get(j, i) : j, r->body.data, r->body.len};
        char *dump = NULL;
        if (raw_items) {
            cm.raw = r->body.data + items[i].off;
            cm.raw_len = items[i].len;
        } else if (batch) {
            dump = mb_gw__json_text(cm.j);
            cm.raw = dump;
            cm.raw_len = strlen(dump);
        }
        char *err = NULL, *fwd = NULL;
        json_t *fj = NULL;
        if (hdrs && json_object_get(cm.j, "method") && json_object_get(cm.j, "id") &&
            (fwd = mb_gw__headers_apply(cm.raw, cm.raw_len, cm.j, hdrs, &cm.raw_len))) {
            json_error_t je3;
            fj = json_loadb(fwd, cm.raw_len, JSON_ALLOW_NUL, &je3);
            if (!fj) fj = json_loadb(fwd, cm.raw_len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je3);
            cm.raw = fwd;
            cm.j = fj;
        }
        if (fwd && !fj)
            err = mb_gw__error_text(NULL, MB_GW_EINVALID, "the request could not carry its "
                                    "forwarded headers");
        if (err || mb_gw__route_from_client_locked(x, &cm, &err) < 0) {
            if (batch) mb_gw__stream_push_locked(x, err, strlen(err), 1);
            else refused = err, err = NULL;
        }
        free(err);
        free(dump);
        free(fwd);
        json_decref(fj);
    }
    free(hdrs);
    json_decref(j);
    if (refused) {
        pthread_mutex_unlock(&b->lock);
        return send_json(c, MHD_HTTP_BAD_REQUEST, refused);
    }
    if (x->outstanding <= 0 && !x->head) {
        pthread_mutex_unlock(&b->lock);
        return send_body(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL);
    }
    return reply_exchange(c, x, acc_json);
}

/* ------------------------------------------------------------ GET, DELETE */

static enum MHD_Result do_get(const ctx *c, mb_gw_backend *b)
{
    enum MHD_Result ret;
    int acc_json, acc_sse;
    accepts(c->conn, &acc_json, &acc_sse);
    mb_gw_session *s = need_session(c, b, &ret);
    if (!s) return ret;
    if (!acc_sse) {
        mb_gw__session_unref(s);
        return send_error(c, MHD_HTTP_NOT_ACCEPTABLE, MB_GW_ESERVER,
                          "Not Acceptable: a GET stream needs Accept: text/event-stream");
    }
    const char *last = header(c->conn, "Last-Event-ID");
    if (last && last[0] == 'p') {
        /* A POST stream ended before its answer (the client resumes): the
         * gateway always finishes POST streams, so there is nothing to
         * replay. 405 tells clients not to retry. */
        mb_gw__session_unref(s);
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, MB_GW_ESERVER,
                          "this stream cannot be resumed: the gateway does not replay "
                          "streams");
    }
    pthread_mutex_lock(&b->lock);
    if (s->ended) {
        pthread_mutex_unlock(&b->lock);
        mb_gw__session_unref(s);
        return send_error(c, MHD_HTTP_NOT_FOUND, MB_GW_ESERVER, "Session not found: it ended");
    }
    if (s->nstreams >= MB_GW_MAX_GET_STREAMS) {
        pthread_mutex_unlock(&b->lock);
        mb_gw__session_unref(s);
        return send_error(c, MHD_HTTP_CONFLICT, MB_GW_ESERVER,
                          "Conflict: this session already has %d GET streams open",
                          MB_GW_MAX_GET_STREAMS);
    }
    mb_gw_stream *st = mb_gw__stream_new(MB_GW_STREAM_GET, s);
    st->accepts_sse = 1;
    mb_gw__list_push(&s->streams, &st->s_link);
    s->nstreams++;
    atomic_fetch_add(&s->active, 1);
    s->stream_opened_ms = mb_gw__now();
    pthread_mutex_unlock(&b->lock);
    mb_gw__session_unref(s);
    c->r->st = st;
    return send_sse(c, st);
}

static enum MHD_Result do_delete(const ctx *c, mb_gw_backend *b)
{
    enum MHD_Result ret;
    mb_gw_session *s = need_session(c, b, &ret);
    if (!s) return ret;
    mb_debug("gateway: [%s/%s] session %s ended by the client", b->sandbox_id, b->server, s->id);
    mb_gw__sessions_end(c->gw, s, "the client ended the session");
    mb_gw__session_unref(s);
    return send_body(c, MHD_HTTP_OK, NULL, NULL, NULL);
}

static enum MHD_Result do_options(const ctx *c)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"",
                                                                MHD_RESPMEM_PERSISTENT);
    if (!resp) return MHD_NO;
    common_headers(c, resp);
    MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
    MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                            "Content-Type, Accept, Authorization, Mcp-Session-Id, "
                            "Mcp-Protocol-Version, Last-Event-ID");
    MHD_add_response_header(resp, "Access-Control-Max-Age", "86400");
    MHD_add_response_header(resp, "Allow", "GET, POST, DELETE, OPTIONS");
    return mb_http_queue_response(c->conn, MHD_HTTP_NO_CONTENT, resp);
}

/* ----------------------------------------------------------- entry point */

/* The checks that need only the headers: Host and Origin, the method, the
 * route (sandbox and server), and for POST the declared Content-Type and
 * length. Returns the route's backend (a reference), or NULL with an answer
 * queued in *ret. Runs before any body byte is accepted, and again once the
 * body is in (the sandbox may have gone meanwhile). */
static mb_gw_backend *front(ctx *c, const char *server, const char *sandbox_id,
                            enum MHD_Result *ret)
{
    mb_gateway *gw = c->gw;
    struct MHD_Connection *conn = c->conn;
    mb_gw_req *r = c->r;
    const char *origin = header(conn, "Origin");
    if (!host_allowed(gw, header(conn, "Host"))) {
        *ret = send_error(c, MHD_HTTP_FORBIDDEN, MB_GW_ESERVER,
                          "Forbidden: Host '%.100s' is not allowed (DNS rebinding protection)",
                          header(conn, "Host"));
        return NULL;
    }
    if (origin && !origin_allowed(gw, origin)) {
        *ret = send_error(c, MHD_HTTP_FORBIDDEN, MB_GW_ESERVER,
                          "Forbidden: Origin '%.100s' is not allowed", origin);
        return NULL;
    }
    c->origin = origin;
    if (r->method == M_OPTIONS) {
        *ret = do_options(c);
        return NULL;
    }
    if (r->method == M_OTHER) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(
            0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!resp) {
            *ret = MHD_NO;
            return NULL;
        }
        MHD_add_response_header(resp, "Allow", "GET, POST, DELETE, OPTIONS");
        *ret = mb_http_queue_response(conn, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
        return NULL;
    }
    if (atomic_load(&gw->closing)) {
        *ret = send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, MB_GW_ESERVER,
                          "the gateway is shutting down");
        return NULL;
    }
    if (!sandbox_id || !*sandbox_id) {
        *ret = send_error(c, MHD_HTTP_NOT_FOUND, MB_GW_ESERVER,
                          "Not Found: an MCP URL needs ?local_sandbox_id=<id>");
        return NULL;
    }
    int known = 0;
    char servers[512];
    mb_gw_backend *b = mb_gw__lookup(gw, sandbox_id, server, &known, servers, sizeof servers);
    if (!b) {
        if (!known)
            *ret = send_error(c, MHD_HTTP_NOT_FOUND, MB_GW_ESERVER,
                              "Not Found: no sandbox '%.64s' (it was released, expired, or "
                              "never acquired)",
                              sandbox_id);
        else
            *ret = send_error(c, MHD_HTTP_NOT_FOUND, MB_GW_ESERVER,
                              "Not Found: sandbox '%.64s' did not acquire the server '%.64s' "
                              "(it has: %s)",
                              sandbox_id, server, servers);
        return NULL;
    }
    return b;
}

/* A POST whose headers already say it cannot be taken (a wrong Content-Type,
 * a declared length over the limit) is answered at once; the HTTP layer
 * drains its body within its bounds before the answer goes out. */
static int refuse_post_early(const ctx *c, enum MHD_Result *ret)
{
    const char *ctype = header(c->conn, "Content-Type");
    if (ctype && strncasecmp(ctype, "application/json", 16)) {
        *ret = send_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, MB_GW_ESERVER,
                          "Unsupported Media Type: Content-Type must be application/json");
        return 1;
    }
    const char *cl = header(c->conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        if (end != cl && n > c->gw->opts.max_message_bytes) {
            *ret = send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, MB_GW_EINVALID,
                              "the message is %llu bytes, over the gateway's limit of %zu bytes",
                              n, c->gw->opts.max_message_bytes);
            return 1;
        }
    }
    return 0;
}

enum MHD_Result mb_gateway_handle(mb_gateway *gw, struct MHD_Connection *conn,
                                  const char *server, const char *sandbox_id,
                                  const char *method, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    mb_gw_req *r = *req_cls;
    enum MHD_Result ret;
    if (!r) {
        r = mb_calloc(1, sizeof *r);
        r->method = !strcmp(method, "POST")      ? M_POST
                    : !strcmp(method, "GET")     ? M_GET
                    : !strcmp(method, "DELETE")  ? M_DELETE
                    : !strcmp(method, "OPTIONS") ? M_OPTIONS
                                                 : M_OTHER;
        *req_cls = r;
        /* Route and check from the headers alone, so that a request to a
         * wrong URL never makes the gateway hold its body. */
        ctx c = {gw, conn, r, NULL};
        mb_gw_backend *b = front(&c, server, sandbox_id, &ret);
        if (!b) {
            r->answered = 1;
            return ret;
        }
        mb_gw__backend_unref(b);
        r->routed = 1;
        r->origin = c.origin;
        if (r->method == M_POST && refuse_post_early(&c, &ret)) {
            r->answered = 1;
            return ret;
        }
        return MHD_YES;
    }
    if (r->answered) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        r->body_seen += n;
        *upload_data_size = 0;
        if (r->method == M_POST && r->body.len + n > gw->opts.max_message_bytes) {
            /* answered now; the HTTP layer drains the rest within bounds */
            r->too_big = 1;
            r->answered = 1;
            mb_buf_free(&r->body);
            ctx c = {gw, conn, r, r->origin};
            return send_error(&c, MHD_HTTP_CONTENT_TOO_LARGE, MB_GW_EINVALID,
                              "the message is over the gateway's limit of %zu bytes",
                              gw->opts.max_message_bytes);
        }
        if (r->method == M_POST) mb_buf_append(&r->body, upload_data, n);
        return MHD_YES;
    }

    ctx c = {gw, conn, r, NULL};
    mb_gw_backend *b = front(&c, server, sandbox_id, &ret);
    if (!b) return ret;
    switch (r->method) {
    case M_POST: ret = do_post(&c, b); break;
    case M_GET: ret = do_get(&c, b); break;
    default: ret = do_delete(&c, b); break;
    }
    mb_gw__backend_unref(b);
    return ret;
}

int mb_gateway_request_routed(const void *req_cls)
{
    const mb_gw_req *r = req_cls;
    return r && r->routed;
}

void mb_gateway_request_done(mb_gateway *gw, void *req_cls)
{
    (void)gw;
    mb_gw_req *r = req_cls;
    if (!r) return;
    if (r->st) {
        pthread_mutex_lock(&r->st->b->lock);
        r->st->abandoned = 1;
        if (r->st->kind == MB_GW_STREAM_GET) mb_gw__stream_close_locked(r->st);
        pthread_mutex_unlock(&r->st->b->lock);
        mb_gw__stream_unref(r->st);
    }
    mb_buf_free(&r->body);
    free(r);
}
