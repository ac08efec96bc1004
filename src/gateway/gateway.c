/*
 * gateway.c - the gateway object: options, the registry of (sandbox, server)
 * backends, and the public lifecycle calls of gateway.h.
 *
 * The registry maps sandbox ids to mb_gw_sandbox records, each with the list
 * of its backends (a sandbox has at most a few dozen servers, so finding a
 * server in it is a short scan). It is guarded by gw->lock together with the
 * session table; both are only written when sandboxes or sessions come and
 * go, and read once per HTTP request.
 */
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
#include "gateway/gateway_int.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------- utilities */

void mb_gw__cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

void mb_gw__cond_wait_until(pthread_cond_t *c, pthread_mutex_t *m, int64_t deadline_ms)
{
    if (deadline_ms == INT64_MAX) {
        pthread_cond_wait(c, m);
        return;
    }
    struct timespec ts = {(time_t)(deadline_ms / 1000), (long)(deadline_ms % 1000) * 1000000L};
    pthread_cond_timedwait(c, m, &ts);
}

/* -------------------------------------------------------------- registry */

static mb_gw_sandbox *find_sandbox(mb_gateway *gw, const char *id)
{
    for (mb_gw_hnode *n = mb_gw__table_find(&gw->sandboxes, mb_hash_str(id)); n;
         n = mb_gw__table_next(n)) {
        mb_gw_sandbox *sb = MB_GW_CONTAINER(n, mb_gw_sandbox, node);
        if (!strcmp(sb->id, id)) return sb;
    }
    return NULL;
}

static mb_gw_backend *find_backend(mb_gw_sandbox *sb, const char *server)
{
    for (mb_gw_link *l = sb->backends.next; l != &sb->backends; l = l->next) {
        mb_gw_backend *b = MB_GW_CONTAINER(l, mb_gw_backend, sb_link);
        if (!strcmp(b->server, server)) return b;
    }
    return NULL;
}

mb_gw_backend *mb_gw__lookup(mb_gateway *gw, const char *sandbox_id, const char *server,
                            int *sandbox_known, char *servers_out, size_t servers_cap)
{
    mb_gw_backend *b = NULL;
    *sandbox_known = 0;
    if (servers_out && servers_cap) servers_out[0] = '\0';
    pthread_rwlock_rdlock(&gw->lock);
    mb_gw_sandbox *sb = find_sandbox(gw, sandbox_id);
    if (sb) {
        *sandbox_known = 1;
        b = server ? find_backend(sb, server) : NULL;
        if (b) {
            mb_gw__backend_ref(b);
        } else if (servers_out) {
            size_t at = 0;
            for (mb_gw_link *l = sb->backends.next; l != &sb->backends; l = l->next) {
                mb_gw_backend *o = MB_GW_CONTAINER(l, mb_gw_backend, sb_link);
                int w = snprintf(servers_out + at, servers_cap - at, "%s%s", at ? ", " : "",
                                 o->server);
                if (w < 0 || (size_t)w >= servers_cap - at) break;
                at += (size_t)w;
            }
        }
    }
    pthread_rwlock_unlock(&gw->lock);
    return b;
}

int mb_gw__tenant_of(mb_gateway *gw, const char *sandbox_id, char *buf, size_t cap)
{
    if (!gw->opts.tenant_of || !cap) return -1;
    int have = 0;
    pthread_rwlock_rdlock(&gw->lock);
    mb_gw_sandbox *sb = find_sandbox(gw, sandbox_id);
    if (sb && sb->tenant) {
        snprintf(buf, cap, "%s", sb->tenant);
        have = 1;
    }
    pthread_rwlock_unlock(&gw->lock);
    if (have) return 0;
    /* Asked outside the lock: the daemon reads its store. */
    if (gw->opts.tenant_of(gw->opts.ctx, sandbox_id, buf, cap) != 0 || !buf[0]) return -1;
    pthread_rwlock_wrlock(&gw->lock);
    sb = find_sandbox(gw, sandbox_id);
    if (sb && !sb->tenant) sb->tenant = mb_strdup(buf);
    pthread_rwlock_unlock(&gw->lock);
    return 0;
}

void mb_gateway_set_tenant(mb_gateway *gw, const char *sandbox_id, const char *tenant)
{
    if (!tenant || !*tenant) return;
    pthread_rwlock_wrlock(&gw->lock);
    mb_gw_sandbox *sb = find_sandbox(gw, sandbox_id);
    if (sb && !sb->tenant) sb->tenant = mb_strdup(tenant);
    pthread_rwlock_unlock(&gw->lock);
}

/* References to every backend of a sandbox (caller unrefs and frees). */
static mb_gw_backend **sandbox_backends(mb_gateway *gw, const char *id, size_t *n, int take)
{
    mb_gw_backend **bs = NULL;
    *n = 0;
    pthread_rwlock_wrlock(&gw->lock);
    mb_gw_sandbox *sb = find_sandbox(gw, id);
    if (sb) {
        size_t cap = 0;
        for (mb_gw_link *l = sb->backends.next; l != &sb->backends; l = l->next) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 16;
                bs = mb_realloc(bs, cap * sizeof *bs);
            }
            bs[(*n)++] = MB_GW_CONTAINER(l, mb_gw_backend, sb_link);
        }
        if (take) {
            /* The registry's references move to the caller. */
            mb_gw__table_remove(&gw->sandboxes, &sb->node);
            while (!mb_gw__list_empty(&sb->backends)) mb_gw__list_del(sb->backends.next);
            free(sb->id);
            free(sb->tenant);
            free(sb);
        } else {
            for (size_t i = 0; i < *n; i++) mb_gw__backend_ref(bs[i]);
        }
    }
    pthread_rwlock_unlock(&gw->lock);
    return bs;
}

int mb_gateway_add(mb_gateway *gw, const char *sandbox_id, const char *server,
                   const mb_backend_spec *spec, mb_err *err)
{
    if (!sandbox_id || !*sandbox_id || !server || !*server)
        return mb_err_set(err, MB_EINVAL, "a gateway entry needs a sandbox id and a server name");
    if (!spec || !spec->argv || !spec->argv[0])
        return mb_err_set(err, MB_EINVAL, "the server '%s' has no command to run", server);
    pthread_rwlock_wrlock(&gw->lock);
    mb_gw_sandbox *sb = find_sandbox(gw, sandbox_id);
    if (!sb) {
        sb = mb_calloc(1, sizeof *sb);
        sb->id = mb_strdup(sandbox_id);
        mb_gw__list_init(&sb->backends);
        mb_gw__table_insert(&gw->sandboxes, &sb->node, mb_hash_str(sandbox_id));
    }
    mb_gw_backend *b = find_backend(sb, server);
    if (b) {
        pthread_mutex_lock(&b->lock);
        mb_gw__backend_set_spec_locked(b, spec);
        pthread_mutex_unlock(&b->lock);
    } else {
        b = mb_gw__backend_new(gw, sandbox_id, server, spec);
        mb_gw__list_push(&sb->backends, &b->sb_link);
    }
    pthread_rwlock_unlock(&gw->lock);
    return MB_OK;
}

int mb_gateway_start(mb_gateway *gw, const char *sandbox_id, const char *server,
                     int wait_ready_ms, mb_err *err)
{
    int known;
    mb_gw_backend *b = mb_gw__lookup(gw, sandbox_id, server, &known, NULL, 0);
    if (!b)
        return mb_err_set(err, MB_ENOTFOUND, "no server '%s' in sandbox '%s'", server,
                          sandbox_id);
    int rc = wait_ready_ms > 0
                 ? mb_gw__backend_ready_tools(b, mb_gw__now() + wait_ready_ms, err)
                 : mb_gw__backend_kick(b, err);
    mb_gw__backend_unref(b);
    return rc;
}

/* Ends every session bound to b (they are in the session table too). */
static void end_sessions_of(mb_gateway *gw, mb_gw_backend *b, const char *why)
{
    for (;;) {
        mb_gw_session *s = NULL;
        pthread_mutex_lock(&b->lock);
        if (!mb_gw__list_empty(&b->sessions)) {
            s = MB_GW_CONTAINER(b->sessions.next, mb_gw_session, b_link);
            mb_gw__session_ref(s);
        }
        pthread_mutex_unlock(&b->lock);
        if (!s) return;
        mb_gw__sessions_end(gw, s, why);
        mb_gw__session_unref(s);
    }
}

void mb_gateway_remove_sandbox(mb_gateway *gw, const char *sandbox_id)
{
    size_t n;
    mb_gw_backend **bs = sandbox_backends(gw, sandbox_id, &n, 1);
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&bs[i]->lock);
        bs[i]->removed = 1;
        pthread_cond_broadcast(&bs[i]->cond);
        pthread_mutex_unlock(&bs[i]->lock);
        end_sessions_of(gw, bs[i], "the sandbox was released");
        mb_gw__backend_stop(bs[i], "the sandbox was released", 1);
        mb_gw__backend_unref(bs[i]);
    }
    free(bs);
}

void mb_gateway_remove_server(mb_gateway *gw, const char *sandbox_id, const char *server)
{
    mb_gw_backend *b = NULL;
    pthread_rwlock_wrlock(&gw->lock);
    mb_gw_sandbox *sb = find_sandbox(gw, sandbox_id);
    if (sb) b = find_backend(sb, server);
    if (b) mb_gw__list_del(&b->sb_link); /* the registry's reference is now ours */
    pthread_rwlock_unlock(&gw->lock);
    if (!b) return;
    pthread_mutex_lock(&b->lock);
    b->removed = 1;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
    end_sessions_of(gw, b, "the server was removed from the sandbox");
    /* Unreachable from here on; the process is told to exit a moment later
     * (mb_gw__backend_retire): a warm pool's claim removes the servers its
     * client did not name, and their exits would take CPU from that
     * client's first requests (MB_GW_RETIRE_DELAY_MS). */
    mb_gw__backend_retire(b, "the server was removed from the sandbox", MB_GW_RETIRE_DELAY_MS);
    mb_gw__backend_unref(b);
}

int mb_gateway_restart_sandbox(mb_gateway *gw, const char *sandbox_id,
                               int (*between)(void *ctx, mb_err *err), void *ctx, mb_err *err)
{
    size_t n;
    mb_gw_backend **bs = sandbox_backends(gw, sandbox_id, &n, 0);
    if (!bs) return mb_err_set(err, MB_ENOTFOUND, "no sandbox '%s'", sandbox_id);
    int *was = mb_calloc(n, sizeof *was);
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&bs[i]->lock);
        was[i] = bs[i]->state != MB_GW_STOPPED || bs[i]->want_running;
        pthread_mutex_unlock(&bs[i]->lock);
        mb_gw__backend_stop(bs[i], "the sandbox was reset, which restarts its MCP servers", 0);
    }
    int rc = between ? between(ctx, err) : MB_OK;
    int between_rc = rc;
    mb_err ignored;
    for (size_t i = 0; i < n; i++) {
        if (was[i] && (rc == MB_OK || between_rc != MB_OK))
            rc = mb_gw__backend_ready_tools(bs[i], mb_gw__now() + gw->opts.init_timeout_ms,
                                           between_rc ? &ignored : err);
        mb_gw__backend_unref(bs[i]);
    }
    free(was);
    free(bs);
    return between_rc ? between_rc : rc;
}

int mb_gateway_info(mb_gateway *gw, const char *sandbox_id, const char *server,
                    json_t **out_metadata, int *ready)
{
    int known;
    mb_gw_backend *b = mb_gw__lookup(gw, sandbox_id, server, &known, NULL, 0);
    if (out_metadata) *out_metadata = NULL;
    if (ready) *ready = 0;
    if (!b) return MB_ENOTFOUND;
    pthread_mutex_lock(&b->lock);
    if (ready) *ready = b->state == MB_GW_READY && b->tools_known;
    if (out_metadata) {
        json_t *md = json_object();
        json_t *si = json_object_get(b->init_result, "serverInfo");
        if (json_is_object(si)) {
            json_t *o = json_object();
            json_t *v = json_object_get(si, "name");
            if (json_is_string(v)) json_object_set(o, "name", v);
            v = json_object_get(si, "version");
            if (json_is_string(v)) json_object_set(o, "version", v);
            json_object_set_new(md, "server_info", o);
        }
        if (b->up_version[0])
            json_object_set_new(md, "protocol_version", json_string(b->up_version));
        if (b->tools_known && b->tools_sha[0]) {
            json_object_set_new(md, "tools_sha256", json_string(b->tools_sha));
            json_object_set_new(md, "tools_count", json_integer((json_int_t)b->tools_count));
        }
        json_object_set_new(md, "state", json_string(mb_gw__state_name(b->state)));
        json_object_set_new(md, "restarts", json_integer(b->restarts));
        json_object_set_new(md, "sessions", json_integer((json_int_t)b->nsessions));
        if (b->last_error[0]) json_object_set_new(md, "last_error", json_string(b->last_error));
        *out_metadata = md;
    }
    pthread_mutex_unlock(&b->lock);
    mb_gw__backend_unref(b);
    return MB_OK;
}

/* ------------------------------------------------------------- lifecycle */

int mb_gateway_create(const mb_gateway_opts *opts, mb_gateway **out, mb_err *err)
{
    *out = NULL;
    if (!opts || !opts->spawn || !opts->kill)
        return mb_err_set(err, MB_EINVAL, "the gateway needs spawn and kill callbacks");
    mb_gateway *gw = mb_calloc(1, sizeof *gw);
    gw->opts = *opts;
    if (gw->opts.call_timeout_ms <= 0) gw->opts.call_timeout_ms = MB_GW_DEFAULT_CALL_TIMEOUT_MS;
    if (gw->opts.init_timeout_ms <= 0) gw->opts.init_timeout_ms = MB_GW_DEFAULT_INIT_TIMEOUT_MS;
    if (gw->opts.cancel_grace_ms <= 0) gw->opts.cancel_grace_ms = MB_GW_DEFAULT_CANCEL_GRACE_MS;
    if (gw->opts.keepalive_ms <= 0) gw->opts.keepalive_ms = MB_GW_DEFAULT_KEEPALIVE_MS;
    if (gw->opts.session_idle_ms <= 0)
        gw->opts.session_idle_ms = MB_GW_DEFAULT_SESSION_IDLE_MS;
    if (!gw->opts.max_message_bytes) gw->opts.max_message_bytes = MB_GW_DEFAULT_MAX_MESSAGE;
    if (!gw->opts.max_sessions) gw->opts.max_sessions = MB_GW_DEFAULT_MAX_SESSIONS;
    gw->origins = mb_strv_dup(opts->allowed_origins);
    gw->hosts = mb_strv_dup(opts->allowed_hosts);
    gw->opts.allowed_origins = (const char *const *)gw->origins;
    gw->opts.allowed_hosts = (const char *const *)gw->hosts;
    /* Every request takes the lock to read; opening and ending sessions must
     * not starve behind them. */
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&gw->lock, &ra);
    pthread_rwlockattr_destroy(&ra);
    mb_gw__table_init(&gw->sandboxes);
    mb_gw__table_init(&gw->sessions);
    mb_gw__table_init(&gw->tally_sandbox);
    mb_gw__table_init(&gw->tally_tenant);
    atomic_init(&gw->closing, 0);
    atomic_init(&gw->next_stream_no, 0);
    signal(SIGPIPE, SIG_IGN);
    int rc = mb_gw__reactor_start(gw, &gw->reactor, err);
    if (rc) {
        gw->reactor = NULL;
        mb_gateway_destroy(gw);
        return rc;
    }
    *out = gw;
    return MB_OK;
}

void mb_gateway_shutdown(mb_gateway *gw)
{
    if (!gw) return;
    atomic_store(&gw->closing, 1);
    /* Every session ends, which closes its streams and answers its calls. */
    for (;;) {
        mb_gw_session *s = NULL;
        pthread_rwlock_rdlock(&gw->lock);
        size_t cur = 0;
        mb_gw_hnode *n = mb_gw__table_at(&gw->sessions, &cur);
        if (n) {
            s = MB_GW_CONTAINER(n, mb_gw_session, node);
            mb_gw__session_ref(s);
        }
        pthread_rwlock_unlock(&gw->lock);
        if (!s) break;
        mb_gw__sessions_end(gw, s, "the gateway is shutting down");
        mb_gw__session_unref(s);
    }
    /* Wake whoever waits for a server to start. */
    pthread_rwlock_rdlock(&gw->lock);
    size_t cur = 0;
    mb_gw_hnode *n;
    while ((n = mb_gw__table_at(&gw->sandboxes, &cur))) {
        mb_gw_sandbox *sb = MB_GW_CONTAINER(n, mb_gw_sandbox, node);
        for (mb_gw_link *l = sb->backends.next; l != &sb->backends; l = l->next) {
            mb_gw_backend *b = MB_GW_CONTAINER(l, mb_gw_backend, sb_link);
            pthread_mutex_lock(&b->lock);
            pthread_cond_broadcast(&b->cond);
            pthread_mutex_unlock(&b->lock);
        }
    }
    pthread_rwlock_unlock(&gw->lock);
}

void mb_gateway_destroy(mb_gateway *gw)
{
    if (!gw) return;
    if (gw->reactor) {
        mb_gateway_shutdown(gw);
        for (;;) {
            char *id = NULL;
            pthread_rwlock_rdlock(&gw->lock);
            size_t cur = 0;
            mb_gw_hnode *n = mb_gw__table_at(&gw->sandboxes, &cur);
            if (n) id = mb_strdup(MB_GW_CONTAINER(n, mb_gw_sandbox, node)->id);
            pthread_rwlock_unlock(&gw->lock);
            if (!id) break;
            mb_gateway_remove_sandbox(gw, id);
            free(id);
        }
        mb_gw__reactor_stop(gw->reactor);
    }
    mb_gw__table_dispose(&gw->sandboxes);
    mb_gw__table_dispose(&gw->sessions);
    mb_gw__table_dispose(&gw->tally_sandbox);
    mb_gw__table_dispose(&gw->tally_tenant);
    pthread_rwlock_destroy(&gw->lock);
    mb_strv_free(gw->origins);
    mb_strv_free(gw->hosts);
    free(gw);
}
