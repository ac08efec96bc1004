/*
 * session.c - client sessions, the streams that carry messages to them, and
 * the id-map entries ("pendings") that tie a server's answer to the session
 * and request waiting for it.
 *
 * SESSION STATES
 *   live      in gw->sessions and b->sessions; requests may use it.
 *   ended     out of both (DELETE, idle sweep, eviction, sandbox removed,
 *             shutdown): its streams are closed, its calls answered with an
 *             error and cancelled upstream, the server's requests to it
 *             answered with an error. Lookups no longer find it; the memory
 *             goes when the last reference (a stream, a request) does.
 *
 * STREAMS
 *   A POST "exchange" collects the answers to the requests of one POST body;
 *   a GET stream carries what the server says outside any request. Both are
 *   queues of serialized messages read by the thread serving the HTTP
 *   response. Only the HTTP side (the request and the MHD response) holds
 *   references to a stream; pendings point at their exchange without one,
 *   and the last unreference detaches them (their late answers are dropped).
 *   That way a stream is only ever freed by an HTTP thread outside b->lock.
 */
#include "gateway/gateway_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- sessions */

/* 16 bytes from the kernel's CSPRNG for a session id (the id is the
 * session's capability), drawn 4 KiB at a time: one getrandom() per 256
 * sessions rather than per session (a system call costs microseconds in a
 * VM, and a warm acquire opens a session per server). Bytes are used once
 * and wiped. */
static void session_random(unsigned char out[16])
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static unsigned char pool[4096];
    static size_t left;
    pthread_mutex_lock(&lock);
    if (left < 16) {
        if (mb_random_bytes(pool, sizeof pool, NULL) != MB_OK) {
            fprintf(stderr, "mcpbox: no randomness available\n");
            abort();
        }
        left = sizeof pool;
    }
    left -= 16;
    memcpy(out, pool + left, 16);
    memset(pool + left, 0, 16);
    pthread_mutex_unlock(&lock);
}

static void active_add(mb_gw_session *s, int delta) { atomic_fetch_add(&s->active, delta); }

/* The client's initialize as the server hears of it (servers without a
 * handler ignore unknown notifications; desktop-commander keeps the
 * clientInfo as currentClient). It lives as long as the session, so params
 * over MB_GW_NOTE_MAX are cut down to protocolVersion and clientInfo, then
 * to nothing. */
static char *client_note(const json_t *params)
{
    json_t *pv = json_is_object(params) ? json_incref((json_t *)params) : json_object();
    for (int pass = 0;; pass++) {
        json_t *note = json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method",
                                 "notifications/mcpbox/client_initialized", "params", pv);
        char *t = mb_gw__json_text(note);
        json_decref(note);
        if (strlen(t) <= MB_GW_NOTE_MAX || pass == 2) {
            json_decref(pv);
            return t;
        }
        free(t);
        json_t *keep = json_object();
        if (pass == 0) {
            json_t *v = json_object_get(pv, "protocolVersion");
            if (v) json_object_set(keep, "protocolVersion", v);
            v = json_object_get(pv, "clientInfo");
            if (v) json_object_set(keep, "clientInfo", v);
        }
        json_decref(pv);
        pv = keep;
    }
}

mb_gw_session *mb_gw__session_new(mb_gw_backend *b, const char *version, const json_t *params)
{
    const json_t *caps = json_object_get(params, "capabilities");
    mb_gw_session *s = mb_calloc(1, sizeof *s);
    atomic_init(&s->refs, 1);
    atomic_init(&s->active, 0);
    unsigned char rnd[16];
    session_random(rnd);
    mb_hex(rnd, sizeof rnd, s->id);
    mb_gw__backend_ref(b);
    s->b = b;
    snprintf(s->version, sizeof s->version, "%s", version);
    s->caps = json_is_object(caps) ? json_deep_copy(caps) : json_object();
    s->subs = json_object();
    s->note = client_note(params);
    atomic_init(&s->last_used_ms, mb_gw__now());
    mb_gw__list_init(&s->b_link);
    mb_gw__list_init(&s->streams);
    mb_gw__list_init(&s->calls);
    mb_gw__list_init(&s->sreqs);
    return s;
}

void mb_gw__session_ref(mb_gw_session *s) { atomic_fetch_add(&s->refs, 1); }

void mb_gw__session_unref(mb_gw_session *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
    json_decref(s->caps);
    json_decref(s->subs);
    free(s->note);
    mb_gw__backend_unref(s->b);
    free(s);
}

void mb_gw__session_end_locked(mb_gw_session *s, const char *why)
{
    mb_assert_held(&s->b->lock);
    mb_gw_backend *b = s->b;
    if (s->ended) return;
    s->ended = 1;
    if (s->b_link.next != &s->b_link) {
        mb_gw__list_del(&s->b_link);
        b->nsessions--;
    }
    while (!mb_gw__list_empty(&s->calls)) {
        mb_gw_pending *p = MB_GW_CONTAINER(s->calls.next, mb_gw_pending, s_link);
        mb_gw__pending_fail_locked(p, MB_GW_ESERVER, 1, why);
    }
    while (!mb_gw__list_empty(&s->sreqs)) {
        mb_gw_pending *p = MB_GW_CONTAINER(s->sreqs.next, mb_gw_pending, s_link);
        char *t = mb_gw__error_text(p->orig_id, MB_GW_EINTERNAL,
                                   "the client session this request was sent to ended: %s", why);
        mb_gw__backend_send_locked(b, t, strlen(t), NULL);
        free(t);
        mb_gw__pending_free_locked(p);
    }
    while (!mb_gw__list_empty(&s->streams)) {
        mb_gw_stream *st = MB_GW_CONTAINER(s->streams.next, mb_gw_stream, s_link);
        mb_gw__list_del(&st->s_link);
        s->nstreams--;
        active_add(s, -1);
        mb_gw__stream_close_locked(st);
    }
}

mb_gw_stream *mb_gw__session_stream_locked(mb_gw_session *s)
{
    mb_assert_held(&s->b->lock);
    if (s->ended || mb_gw__list_empty(&s->streams)) return NULL;
    mb_gw_stream *st = MB_GW_CONTAINER(s->streams.prev, mb_gw_stream, s_link);
    return st->closed ? NULL : st;
}

/* ------------------------------------------------------- session table */

/* The table key: the first 16 hex digits of the 32-digit id. */
static int session_key(const char *id, uint64_t *key)
{
    if (!id || strlen(id) != 32) return -1;
    uint64_t k = 0;
    for (int i = 0; i < 32; i++) {
        char c = id[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) return -1;
        if (i < 16) k = (k << 4) | (uint64_t)v;
    }
    *key = k;
    return 0;
}

/* ---------------------------------------------------- tallies and caps */

static mb_gw_tally *tally_find(mb_gw_table *t, const char *name)
{
    for (mb_gw_hnode *n = mb_gw__table_find(t, mb_hash_str(name)); n; n = mb_gw__table_next(n)) {
        mb_gw_tally *y = MB_GW_CONTAINER(n, mb_gw_tally, node);
        if (!strcmp(y->name, name)) return y;
    }
    return NULL;
}

static mb_gw_tally *tally_add(mb_gw_table *t, const char *name)
{
    mb_gw_tally *y = tally_find(t, name);
    if (!y) {
        y = mb_calloc(1, sizeof *y);
        y->name = mb_strdup(name);
        mb_gw__table_insert(t, &y->node, mb_hash_str(name));
    }
    y->n++;
    return y;
}

static void tally_drop(mb_gw_table *t, mb_gw_tally *y)
{
    if (!y || --y->n) return;
    mb_gw__table_remove(t, &y->node);
    free(y->name);
    free(y);
}

static size_t tally_of(mb_gw_table *t, const char *name)
{
    mb_gw_tally *y = name ? tally_find(t, name) : NULL;
    return y ? y->n : 0;
}

static void table_take_locked(mb_gateway *gw, mb_gw_session *s)
{
    mb_assert_wrheld(&gw->lock);
    mb_gw__table_remove(&gw->sessions, &s->node);
    gw->nsessions--;
    s->in_table = 0;
    tally_drop(&gw->tally_sandbox, s->t_sandbox);
    tally_drop(&gw->tally_tenant, s->t_tenant);
    s->t_sandbox = s->t_tenant = NULL;
}

static void end_taken(mb_gw_session *s, const char *why)
{
    pthread_mutex_lock(&s->b->lock);
    mb_gw__session_end_locked(s, why);
    pthread_mutex_unlock(&s->b->lock);
    mb_gw__session_unref(s); /* the table's reference */
}

enum { SCOPE_NONE, SCOPE_SANDBOX, SCOPE_TENANT };

/* Which cap a new session of (sandbox, tenant) runs into, if any: its
 * scope, the cap and how to name it. */
static int full_scope(mb_gateway *gw, const char *sandbox, const char *tenant, size_t *cap,
                      const char **label)
{
    const mb_gateway_opts *o = &gw->opts;
    *cap = o->max_sessions_per_sandbox;
    *label = "per sandbox";
    if (*cap && tally_of(&gw->tally_sandbox, sandbox) >= *cap) return SCOPE_SANDBOX;
    *cap = o->max_sessions_per_tenant;
    *label = "per API key";
    if (tenant && *cap && tally_of(&gw->tally_tenant, tenant) >= *cap) return SCOPE_TENANT;
    *cap = o->max_sessions;
    *label = "in all";
    if (gw->nsessions >= *cap) return tenant ? SCOPE_TENANT : SCOPE_SANDBOX;
    return SCOPE_NONE;
}

/* The least recently used session with nothing open within the scope. */
static mb_gw_session *lru_idle(mb_gateway *gw, int scope, mb_gw_tally *within)
{
    mb_gw_session *victim = NULL;
    size_t cur = 0;
    mb_gw_hnode *n;
    if (!within) return NULL;
    while ((n = mb_gw__table_at(&gw->sessions, &cur))) {
        mb_gw_session *c = MB_GW_CONTAINER(n, mb_gw_session, node);
        if ((scope == SCOPE_SANDBOX ? c->t_sandbox : c->t_tenant) != within) continue;
        if (atomic_load(&c->active)) continue;
        if (!victim || atomic_load(&c->last_used_ms) < atomic_load(&victim->last_used_ms))
            victim = c;
    }
    return victim;
}

int mb_gw__sessions_insert(mb_gateway *gw, mb_gw_session *s, mb_err *err)
{
    uint64_t key;
    session_key(s->id, &key);
    char tenant_buf[128];
    const char *tenant = NULL;
    if (mb_gw__tenant_of(gw, s->b->sandbox_id, tenant_buf, sizeof tenant_buf) == 0)
        tenant = tenant_buf;
    const char *sandbox = s->b->sandbox_id;
    for (;;) {
        pthread_rwlock_wrlock(&gw->lock);
        if (atomic_load(&gw->closing)) {
            pthread_rwlock_unlock(&gw->lock);
            return mb_err_set(err, MB_EBUSY, "the gateway is shutting down");
        }
        size_t cap;
        const char *label;
        int scope = full_scope(gw, sandbox, tenant, &cap, &label);
        if (scope == SCOPE_NONE) {
            mb_gw__session_ref(s);
            mb_gw__table_insert(&gw->sessions, &s->node, key);
            gw->nsessions++;
            s->in_table = 1;
            s->t_sandbox = tally_add(&gw->tally_sandbox, sandbox);
            s->t_tenant = tenant ? tally_add(&gw->tally_tenant, tenant) : NULL;
            pthread_rwlock_unlock(&gw->lock);
            pthread_mutex_lock(&s->b->lock);
            if (s->b->removed) {
                pthread_mutex_unlock(&s->b->lock);
                mb_gw__sessions_end(gw, s, "the sandbox was released");
                return mb_err_set(err, MB_ENOTFOUND, "the sandbox was released");
            }
            mb_gw__list_push(&s->b->sessions, &s->b_link);
            s->b->nsessions++;
            pthread_mutex_unlock(&s->b->lock);
            return MB_OK;
        }
        /* Full: the least recently used idle session of the same sandbox
         * or tenant makes room; never one of another tenant. */
        mb_gw_tally *within = scope == SCOPE_SANDBOX ? tally_find(&gw->tally_sandbox, sandbox)
                                                     : tally_find(&gw->tally_tenant, tenant);
        mb_gw_session *victim = lru_idle(gw, scope, within);
        if (!victim) {
            pthread_rwlock_unlock(&gw->lock);
            return mb_err_set(err, MB_EBUSY,
                              "too many MCP sessions are open (the limit is %zu %s) and none "
                              "of this %s's is idle; close sessions with DELETE or retry later",
                              cap, label, scope == SCOPE_SANDBOX ? "sandbox" : "API key");
        }
        table_take_locked(gw, victim);
        pthread_rwlock_unlock(&gw->lock);
        mb_debug("gateway: session %s evicted to make room", victim->id);
        end_taken(victim, "the session was evicted to make room for newer ones of the same "
                          "sandbox or API key");
    }
}

mb_gw_session *mb_gw__sessions_lookup(mb_gateway *gw, const char *id)
{
    uint64_t key;
    if (session_key(id, &key)) return NULL;
    mb_gw_session *found = NULL;
    pthread_rwlock_rdlock(&gw->lock);
    for (mb_gw_hnode *n = mb_gw__table_find(&gw->sessions, key); n; n = mb_gw__table_next(n)) {
        mb_gw_session *s = MB_GW_CONTAINER(n, mb_gw_session, node);
        if (!strcmp(s->id, id)) {
            mb_gw__session_ref(s);
            found = s;
            break;
        }
    }
    pthread_rwlock_unlock(&gw->lock);
    return found;
}

void mb_gw__sessions_end(mb_gateway *gw, mb_gw_session *s, const char *why)
{
    pthread_rwlock_wrlock(&gw->lock);
    int was = s->in_table;
    if (was) table_take_locked(gw, s);
    pthread_rwlock_unlock(&gw->lock);
    if (was) {
        end_taken(s, why);
    } else {
        pthread_mutex_lock(&s->b->lock);
        mb_gw__session_end_locked(s, why);
        pthread_mutex_unlock(&s->b->lock);
    }
}

void mb_gw__sessions_sweep(mb_gateway *gw, int64_t now)
{
    mb_gw_session **victims = NULL;
    size_t nv = 0, cap = 0;
    pthread_rwlock_wrlock(&gw->lock);
    size_t cur = 0;
    mb_gw_hnode *n;
    while ((n = mb_gw__table_at(&gw->sessions, &cur))) {
        mb_gw_session *s = MB_GW_CONTAINER(n, mb_gw_session, node);
        if (atomic_load(&s->active) ||
            now - atomic_load(&s->last_used_ms) < gw->opts.session_idle_ms)
            continue;
        if (nv == cap) {
            cap = cap ? cap * 2 : 16;
            victims = mb_realloc(victims, cap * sizeof *victims);
        }
        victims[nv++] = s;
    }
    for (size_t i = 0; i < nv; i++) table_take_locked(gw, victims[i]);
    pthread_rwlock_unlock(&gw->lock);
    for (size_t i = 0; i < nv; i++) {
        mb_debug("gateway: session %s idle, forgotten", victims[i]->id);
        end_taken(victims[i], "the session was idle too long");
    }
    free(victims);
}

/* -------------------------------------------------------------- streams */

mb_gw_stream *mb_gw__stream_new(int kind, mb_gw_session *s)
{
    mb_gw_stream *st = mb_calloc(1, sizeof *st);
    st->kind = kind;
    mb_gw__session_ref(s);
    st->s = s;
    mb_gw__backend_ref(s->b);
    st->b = s->b;
    st->no = atomic_fetch_add(&s->b->gw->next_stream_no, 1) + 1;
    st->refs = 1;
    mb_gw__cond_init(&st->cond);
    mb_gw__list_init(&st->calls);
    mb_gw__list_init(&st->s_link);
    st->last_write_ms = mb_gw__now();
    return st;
}

void mb_gw__stream_ref_locked(mb_gw_stream *st) { st->refs++; }

static void free_msgs(mb_gw_msg *m)
{
    while (m) {
        mb_gw_msg *next = m->next;
        free(m);
        m = next;
    }
}

void mb_gw__stream_unref(mb_gw_stream *st)
{
    if (!st) return;
    mb_gw_backend *b = st->b;
    pthread_mutex_lock(&b->lock);
    int last = --st->refs == 0;
    if (last) {
        while (!mb_gw__list_empty(&st->calls)) {
            mb_gw_pending *p = MB_GW_CONTAINER(st->calls.next, mb_gw_pending, x_link);
            mb_gw__list_del(&p->x_link);
            p->x = NULL;
        }
        if (st->s_link.next != &st->s_link) {
            mb_gw__list_del(&st->s_link);
            st->s->nstreams--;
            active_add(st->s, -1);
        }
    }
    pthread_mutex_unlock(&b->lock);
    if (!last) return;
    free_msgs(st->head);
    pthread_cond_destroy(&st->cond);
    mb_buf_free(&st->out);
    mb_gw__session_unref(st->s);
    mb_gw__backend_unref(b);
    free(st);
}

int mb_gw__stream_push_locked(mb_gw_stream *st, const char *data, size_t len, int is_response)
{
    mb_assert_held(&st->b->lock);
    if (st->closed || (!is_response && st->queued_bytes + len > MB_GW_STREAM_MAX_QUEUED)) {
        if (!is_response && st->dropped++ == 0)
            mb_warn("gateway: [%s/%s] a client is not reading its stream; dropping messages",
                    st->b->sandbox_id, st->b->server);
        return -1;
    }
    mb_gw_msg *m = mb_malloc(sizeof *m + len + 1);
    m->next = NULL;
    m->is_response = is_response;
    m->len = len;
    memcpy(m->data, data, len);
    m->data[len] = '\0';
    if (st->tail) st->tail->next = m;
    else st->head = m;
    st->tail = m;
    st->queued_bytes += len;
    pthread_cond_broadcast(&st->cond);
    return 0;
}

void mb_gw__stream_close_locked(mb_gw_stream *st)
{
    mb_assert_held(&st->b->lock);
    st->closed = 1;
    pthread_cond_broadcast(&st->cond);
}

mb_gw_msg *mb_gw__stream_take_locked(mb_gw_stream *st)
{
    mb_assert_held(&st->b->lock);
    mb_gw_msg *m = st->head;
    st->head = st->tail = NULL;
    st->queued_bytes = 0;
    return m;
}

/* -------------------------------------------------------------- pendings */

mb_gw_pending *mb_gw__pending_new_locked(mb_gw_backend *b, int kind, const char *method)
{
    mb_assert_held(&b->lock);
    mb_gw_pending *p = mb_calloc(1, sizeof *p);
    p->kind = kind;
    p->b = b;
    p->id = mb_gw__backend_next_id_locked(b);
    snprintf(p->method, sizeof p->method, "%s", method ? method : "");
    p->started_ms = mb_gw__now();
    p->deadline_ms = INT64_MAX;
    mb_gw__list_init(&p->s_link);
    mb_gw__list_init(&p->b_link);
    mb_gw__list_init(&p->x_link);
    mb_gw__table_insert(&b->pending, &p->node, (uint64_t)p->id);
    p->in_table = 1;
    return p;
}

void mb_gw__pending_free_locked(mb_gw_pending *p)
{
    mb_assert_held(&p->b->lock);
    if (p->in_table) mb_gw__table_remove(&p->b->pending, &p->node);
    if (p->kind == MB_GW_PEND_CALL && p->s && p->s_link.next != &p->s_link) {
        p->s->ncalls--;
        active_add(p->s, -1);
    }
    mb_gw__list_del(&p->s_link);
    mb_gw__list_del(&p->b_link);
    if (p->x) {
        mb_gw__list_del(&p->x_link);
        p->x->outstanding--;
        pthread_cond_broadcast(&p->x->cond);
    }
    free(p->orig_id);
    free(p->orig_token);
    free(p);
}

void mb_gw__pending_answer_locked(mb_gw_pending *p, const char *text, size_t len)
{
    mb_assert_held(&p->b->lock);
    if (p->x) mb_gw__stream_push_locked(p->x, text, len, 1);
}

void mb_gw__pending_fail_locked(mb_gw_pending *p, int code, int cancel, const char *msg)
{
    mb_assert_held(&p->b->lock);
    mb_gw_backend *b = p->b;
    mb_gw__table_remove(&b->pending, &p->node);
    p->in_table = 0;
    if (cancel && b->state == MB_GW_READY) {
        json_t *n = json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method",
                              "notifications/cancelled", "params", "requestId",
                              (json_int_t)p->id, "reason", msg);
        char *t = mb_gw__json_text(n);
        json_decref(n);
        mb_gw__backend_send_locked(b, t, strlen(t), NULL);
        free(t);
        mb_gw__backend_probe_locked(b);
    }
    char *t = mb_gw__error_text(p->orig_id, code, "%s", msg);
    mb_gw__observe_locked(p, 3, strlen(t), msg);
    mb_gw__pending_answer_locked(p, t, strlen(t));
    free(t);
    mb_gw__pending_free_locked(p);
}

int64_t mb_gw__expire_locked(mb_gw_backend *b, mb_gw_stream *x, int64_t now)
{
    mb_assert_held(&b->lock);
    int64_t earliest = INT64_MAX;
    mb_gw_link *head = x ? &x->calls : &b->calls;
    mb_gw_link *l = head->next;
    while (l != head) {
        mb_gw_link *next = l->next;
        mb_gw_pending *p = x ? MB_GW_CONTAINER(l, mb_gw_pending, x_link)
                             : MB_GW_CONTAINER(l, mb_gw_pending, b_link);
        if (p->deadline_ms <= now) {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "%s timed out after %lld ms: the MCP server did not answer, so the "
                     "gateway cancelled the request",
                     p->method, (long long)(now - p->started_ms));
            mb_gw__pending_fail_locked(p, MB_GW_ETIMEOUT, 1, msg);
        } else if (p->deadline_ms < earliest) {
            earliest = p->deadline_ms;
        }
        l = next;
    }
    if (!x) {
        /* Requests the server sent to clients that never answered. */
        head = &b->sreqs;
        l = head->next;
        while (l != head) {
            mb_gw_link *next = l->next;
            mb_gw_pending *p = MB_GW_CONTAINER(l, mb_gw_pending, b_link);
            if (p->deadline_ms <= now) {
                char *t = mb_gw__error_text(p->orig_id, MB_GW_EINTERNAL,
                                           "the client did not answer %s in time", p->method);
                mb_gw__backend_send_locked(b, t, strlen(t), NULL);
                free(t);
                mb_gw__pending_free_locked(p);
            }
            l = next;
        }
    }
    return earliest;
}
