/*
 * backend.c - the life of one (sandbox, server) process: start, initialize,
 * write to its stdin, notice its death, restart it with backoff, stop it.
 *
 * STATES (b->state, under b->lock)
 *   STOPPED   no process. Never started, or stopped on purpose (sandbox
 *             reset or removed). The next request starts it.
 *   STARTING  the spawn callback runs (have_proc = 0) or the process runs
 *             and the gateway's initialize is in flight (have_proc = 1).
 *   READY     initialize answered; client requests are forwarded. The
 *             tools/list that feeds the drift hash may still be in flight
 *             (tools_known = 0).
 *   CRASHED   the process died, refused initialize, did not answer it in
 *             time, or did not answer the ping sent after a cancelled
 *             request within cancel_grace_ms (wedged: killed). last_error says why. It is started again once
 *             next_start_ms has passed: by the reactor's tick if it was
 *             wanted (want_running), or by the next request.
 *
 *   STOPPED/CRASHED -> STARTING (start_locked) -> READY (route.c, on the
 *   initialize answer) -> CRASHED (died) or STOPPED (mb_gw__backend_stop).
 *
 * Every spawn and every stop bumps b->gen, which retires the previous pipe:
 * whatever it still reads is discarded, and the reactor closes it.
 *
 * Writing never blocks: stdin is non-blocking, what the pipe does not take
 * waits in b->inq and the reactor flushes it on EPOLLOUT. A server that stops
 * reading its stdin fills inq up to a limit, after which sends fail and the
 * requests get errors instead of memory growing without bound.
 */
#include "gateway/gateway_int.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

mb_gw_backend *mb_gw__backend_new(mb_gateway *gw, const char *sandbox_id, const char *server,
                                 const mb_backend_spec *spec)
{
    mb_gw_backend *b = mb_calloc(1, sizeof *b);
    atomic_init(&b->refs, 1);
    b->gw = gw;
    b->sandbox_id = mb_strdup(sandbox_id);
    b->server = mb_strdup(server);
    mb_gw__list_init(&b->sb_link);
    pthread_mutex_init(&b->lock, NULL);
    mb_gw__cond_init(&b->cond);
    b->state = MB_GW_STOPPED;
    b->in_fd = -1;
    mb_gw__table_init(&b->pending);
    mb_gw__list_init(&b->calls);
    mb_gw__list_init(&b->sreqs);
    mb_gw__list_init(&b->sessions);
    pthread_mutex_lock(&b->lock); /* not shared yet; taken for the contract */
    mb_gw__backend_set_spec_locked(b, spec);
    pthread_mutex_unlock(&b->lock);
    return b;
}

void mb_gw__backend_ref(mb_gw_backend *b) { atomic_fetch_add(&b->refs, 1); }

void mb_gw__backend_unref(mb_gw_backend *b)
{
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
    mb_strv_free(b->argv);
    mb_strv_free(b->envp);
    mb_strv_free(b->fwd_headers);
    free(b->cwd);
    mb_buf_free(&b->inq);
    mb_gw__table_dispose(&b->pending);
    json_decref(b->init_result);
    for (int i = 0; i < MB_GW_NVERSIONS; i++) free(b->init_texts[i]);
    json_decref(b->tools_acc);
    free(b->tools_text);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->cond);
    free(b->sandbox_id);
    free(b->server);
    free(b);
}

void mb_gw__backend_set_spec_locked(mb_gw_backend *b, const mb_backend_spec *spec)
{
    mb_assert_held(&b->lock);
    mb_strv_free(b->argv);
    mb_strv_free(b->envp);
    free(b->cwd);
    b->argv = mb_strv_dup(spec ? spec->argv : NULL);
    b->envp = mb_strv_dup(spec ? spec->envp : NULL);
    b->cwd = spec && spec->cwd ? mb_strdup(spec->cwd) : NULL;
    b->tools_static = spec && spec->tools_static;
    mb_strv_free(b->fwd_headers);
    b->fwd_headers = NULL;
    size_t n = 0;
    for (size_t i = 0; spec && spec->forward_headers && spec->forward_headers[i] &&
                       n < MB_GW_MAX_FORWARD_HEADERS; i++) {
        char *h = mb_strdup(spec->forward_headers[i]);
        for (char *p = h; *p; p++) *p = (char)tolower((unsigned char)*p);
        mb_strv_push((const char ***)&b->fwd_headers, &n, h);
    }
}

int64_t mb_gw__backend_next_id_locked(mb_gw_backend *b) { return ++b->next_id; }

const char *mb_gw__state_name(int state)
{
    switch (state) {
    case MB_GW_STOPPED: return "stopped";
    case MB_GW_STARTING: return "starting";
    case MB_GW_READY: return "ready";
    case MB_GW_CRASHED: return "crashed";
    default: return "?";
    }
}

/* A process whose stderr the gateway does not read: its tail comes from the
 * stderr_tail callback, once the process is in trouble. */
static void fetch_tail_locked(mb_gw_backend *b)
{
    mb_assert_held(&b->lock);
    mb_gateway *gw = b->gw;
    if (!b->have_proc || b->proc.err_fd >= 0 || !gw->opts.stderr_tail) return;
    size_t n = gw->opts.stderr_tail(gw->opts.ctx, b->sandbox_id, b->server, b->proc.handle,
                                    b->err_tail, sizeof b->err_tail);
    b->err_tail_len = n <= sizeof b->err_tail ? n : 0;
}

/* last_error = message + the tail of the server's stderr, on one line. */
static void set_error_locked(mb_gw_backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_error_locked(mb_gw_backend *b, const char *fmt, ...)
{
    mb_assert_held(&b->lock);
    fetch_tail_locked(b);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->last_error, sizeof b->last_error, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof b->last_error - 32 || !b->err_tail_len) return;
    size_t at = (size_t)n;
    const char *lead = "; its stderr ended with: ";
    size_t room = sizeof b->last_error - at - 1;
    size_t ll = strlen(lead);
    if (room <= ll) return;
    memcpy(b->last_error + at, lead, ll);
    at += ll;
    room -= ll;
    size_t take = b->err_tail_len < room ? b->err_tail_len : room;
    const char *src = b->err_tail + b->err_tail_len - take;
    for (size_t i = 0; i < take; i++) {
        char c = src[i];
        b->last_error[at++] = c == '\n' ? '|' : ((unsigned char)c < 0x20 ? ' ' : c);
    }
    while (at && (b->last_error[at - 1] == '|' || b->last_error[at - 1] == ' ')) at--;
    b->last_error[at] = '\0';
}

/* ------------------------------------------------------------- stopping */

typedef struct taken {
    int have;
    mb_backend_proc proc;
    int in_fd;
    uint64_t gen;
} taken;

/* Detaches the current process from b (which moves to a new generation) and
 * answers everything in flight with `why`. The caller then calls release()
 * outside the lock. */
static void take_process_locked(mb_gw_backend *b, const char *why, taken *t)
{
    mb_assert_held(&b->lock);
    while (!mb_gw__list_empty(&b->calls)) {
        mb_gw_pending *p = MB_GW_CONTAINER(b->calls.next, mb_gw_pending, b_link);
        mb_gw__pending_fail_locked(p, MB_GW_ESERVER, 0, why);
    }
    while (!mb_gw__list_empty(&b->sreqs)) {
        mb_gw_pending *p = MB_GW_CONTAINER(b->sreqs.next, mb_gw_pending, b_link);
        mb_gw__pending_free_locked(p);
    }
    /* What is left are the gateway's own initialize and tools/list. */
    for (;;) {
        size_t cur = 0;
        mb_gw_hnode *n = mb_gw__table_at(&b->pending, &cur);
        if (!n) break;
        mb_gw__pending_free_locked(MB_GW_CONTAINER(n, mb_gw_pending, node));
    }
    b->tools_fetching = 0;
    b->probe_deadline_ms = 0;
    if (b->in_watched) mb_gw__reactor_watch_in(b->gw->reactor, b, 0);
    t->in_fd = b->in_fd;
    b->in_fd = -1;
    mb_buf_reset(&b->inq);
    b->inq_off = 0;
    t->have = b->have_proc;
    t->proc = b->proc;
    b->have_proc = 0;
    t->gen = b->gen++;
    b->pipe = NULL;
    pthread_cond_broadcast(&b->cond);
}

static void release(mb_gw_backend *b, taken *t)
{
    /* A socket that is stdin and stdout at once is the reactor's to close. */
    if (t->in_fd >= 0 && !(t->have && t->in_fd == t->proc.out_fd)) close(t->in_fd);
    if (t->have) {
        b->gw->opts.kill(b->gw->opts.ctx, b->sandbox_id, b->server, t->proc.handle);
        mb_gw__reactor_close(b->gw->reactor, b, t->gen);
    }
}

static void stop_locked(mb_gw_backend *b, const char *why, int remove, taken *t)
{
    mb_assert_held(&b->lock);
    if (remove) b->removed = 1;
    b->want_running = 0;
    take_process_locked(b, why, t);
    b->state = MB_GW_STOPPED;
    b->backoff_ms = 0;
    b->next_start_ms = 0;
}

void mb_gw__backend_stop(mb_gw_backend *b, const char *why, int remove)
{
    taken t;
    pthread_mutex_lock(&b->lock);
    stop_locked(b, why, remove, &t);
    pthread_mutex_unlock(&b->lock);
    release(b, &t);
}

void mb_gw__backend_retire(mb_gw_backend *b, const char *why, int delay_ms)
{
    taken t;
    pthread_mutex_lock(&b->lock);
    stop_locked(b, why, 1, &t);
    pthread_mutex_unlock(&b->lock);
    if (!t.have) {
        if (t.in_fd >= 0) close(t.in_fd);
        return;
    }
    int own_in = t.in_fd >= 0 && t.in_fd != t.proc.out_fd ? t.in_fd : -1;
    mb_gw__reactor_close_later(b->gw->reactor, b, t.gen, own_in, 1, t.proc.handle, delay_ms);
}

/* The process is gone or unusable: CRASHED, with a restart after backoff. */
static void crash_locked(mb_gw_backend *b, const char *call_msg, taken *t)
{
    mb_assert_held(&b->lock);
    int64_t now = mb_gw__now();
    take_process_locked(b, call_msg, t);
    b->state = b->removed ? MB_GW_STOPPED : MB_GW_CRASHED;
    b->crashes++;
    if (now - b->spawned_ms >= MB_GW_HEALTHY_MS) {
        b->backoff_ms = 0;
    } else {
        b->backoff_ms = b->backoff_ms ? b->backoff_ms * 2 : MB_GW_BACKOFF_MIN_MS;
        if (b->backoff_ms > MB_GW_BACKOFF_MAX_MS) b->backoff_ms = MB_GW_BACKOFF_MAX_MS;
    }
    b->next_start_ms = now + b->backoff_ms;
}

void mb_gw__backend_died(mb_gw_backend *b, uint64_t gen, const char *why)
{
    taken t;
    pthread_mutex_lock(&b->lock);
    if (gen != b->gen || !b->have_proc) {
        pthread_mutex_unlock(&b->lock);
        return;
    }
    set_error_locked(b, "%s", why);
    mb_warn("gateway: [%s/%s] %s", b->sandbox_id, b->server, b->last_error);
    char msg[1024];
    snprintf(msg, sizeof msg,
             "the MCP server stopped while handling this request (%s); the gateway "
             "restarts it, retry the request",
             b->last_error);
    crash_locked(b, msg, &t);
    pthread_mutex_unlock(&b->lock);
    release(b, &t);
}

/* ------------------------------------------------------------- starting */

static void set_nonblock(int fd)
{
    if (fd < 0) return;
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Spawns a process and sends initialize. Called with b->lock held in state
 * STOPPED or CRASHED; drops the lock around the spawn callback. */
static int start_locked(mb_gw_backend *b, mb_err *err)
{
    mb_assert_held(&b->lock);
    mb_gateway *gw = b->gw;
    uint64_t gen = ++b->gen;
    int after_crash = b->state == MB_GW_CRASHED;
    b->state = MB_GW_STARTING;
    b->want_running = 1;
    if (b->spawned_ms) {
        b->restarts++;
        if (after_crash && gw->opts.on_restart)
            gw->opts.on_restart(gw->opts.ctx, b->sandbox_id, b->server);
    }
    char **argv = mb_strv_dup((const char *const *)b->argv);
    char **envp = mb_strv_dup((const char *const *)b->envp);
    char *cwd = b->cwd ? mb_strdup(b->cwd) : NULL;
    pthread_mutex_unlock(&b->lock);

    mb_backend_spec spec = {(const char *const *)argv, (const char *const *)envp, cwd, NULL, 0};
    mb_backend_proc proc = {-1, -1, -1, 0};
    mb_err e = {0};
    int rc = argv && argv[0] ? gw->opts.spawn(gw->opts.ctx, b->sandbox_id, b->server, &spec,
                                              &proc, &e)
                             : mb_err_set(&e, MB_EINVAL, "no command to run");
    mb_strv_free(argv);
    mb_strv_free(envp);
    free(cwd);

    pthread_mutex_lock(&b->lock);
    int64_t now = mb_gw__now();
    b->spawned_ms = now;
    if (rc) {
        b->err_tail_len = 0;
        set_error_locked(b, "could not start the MCP server '%s': %s", b->server, e.msg);
        mb_warn("gateway: [%s/%s] %s", b->sandbox_id, b->server, b->last_error);
        if (gen == b->gen) {
            b->gen++;
            b->crashes++;
            b->state = b->removed ? MB_GW_STOPPED : MB_GW_CRASHED;
            b->backoff_ms = b->backoff_ms ? b->backoff_ms * 2 : MB_GW_BACKOFF_MIN_MS;
            if (b->backoff_ms > MB_GW_BACKOFF_MAX_MS) b->backoff_ms = MB_GW_BACKOFF_MAX_MS;
            b->next_start_ms = now + b->backoff_ms;
        }
        pthread_cond_broadcast(&b->cond);
        return mb_err_set(err, MB_EIO, "%s", b->last_error);
    }
    if (gen != b->gen || b->removed) {
        /* Stopped while we were spawning. */
        pthread_mutex_unlock(&b->lock);
        close(proc.in_fd);
        if (proc.out_fd != proc.in_fd) close(proc.out_fd);
        if (proc.err_fd >= 0) close(proc.err_fd);
        gw->opts.kill(gw->opts.ctx, b->sandbox_id, b->server, proc.handle);
        pthread_mutex_lock(&b->lock);
        return mb_err_set(err, MB_ECONFLICT, "the server '%s' was stopped while starting",
                          b->server);
    }
    set_nonblock(proc.in_fd);
    set_nonblock(proc.out_fd);
    set_nonblock(proc.err_fd);
    b->have_proc = 1;
    b->proc = proc;
    b->in_fd = proc.in_fd;
    mb_buf_reset(&b->inq);
    b->inq_off = 0;
    b->err_tail_len = 0;
    b->init_deadline_ms = now + gw->opts.init_timeout_ms;
    b->tools_known = b->tools_fetching = b->tools_stale = 0;
    free(b->tools_text);
    b->tools_text = NULL;
    b->garbage_lines = 0;

    mb_gw_pipe *p = mb_calloc(1, sizeof *p);
    mb_gw__backend_ref(b);
    p->b = b;
    p->gen = gen;
    p->out_fd = proc.out_fd;
    p->err_fd = proc.err_fd;
    mb_gw__framer_init(&p->framer, gw->opts.max_message_bytes);
    p->w_out.p = p->w_err.p = p->w_in.p = p;
    p->w_out.kind = MB_GW_W_OUT;
    p->w_err.kind = MB_GW_W_ERR;
    p->w_in.kind = MB_GW_W_IN;
    mb_gw__list_init(&p->link);
    b->pipe = p;
    mb_gw__reactor_adopt(gw->reactor, p);
    mb_debug("gateway: [%s/%s] started (generation %llu)", b->sandbox_id, b->server,
             (unsigned long long)gen);
    mb_gw__route_send_initialize_locked(b);
    return MB_OK;
}

/* Waits for READY (want_tools: and for the tools hash) until deadline_ms.
 * Starts the process when it is stopped, or crashed before this call and its
 * backoff has passed; a crash while waiting fails at once with the reason,
 * rather than retrying inside one request. */
static int wait_ready(mb_gw_backend *b, int64_t deadline_ms, int want_tools, mb_err *err)
{
    mb_gateway *gw = b->gw;
    pthread_mutex_lock(&b->lock);
    uint64_t crashes_seen = b->crashes;
    int rc = MB_OK;
    for (;;) {
        int64_t now = mb_gw__now();
        if (atomic_load(&gw->closing)) {
            rc = mb_err_set(err, MB_EBUSY, "the gateway is shutting down");
            break;
        }
        if (b->removed) {
            rc = mb_err_set(err, MB_ENOTFOUND, "the sandbox was released");
            break;
        }
        if (b->state == MB_GW_READY && (!want_tools || b->tools_known)) break;
        if (b->state == MB_GW_CRASHED && b->crashes != crashes_seen) {
            rc = mb_err_set(err, MB_EIO, "%s", b->last_error);
            break;
        }
        if (b->state == MB_GW_STOPPED || (b->state == MB_GW_CRASHED && now >= b->next_start_ms)) {
            mb_err e;
            if (start_locked(b, &e) && e.code != MB_ECONFLICT) {
                rc = mb_err_set(err, e.code, "%s", e.msg);
                break;
            }
            continue;
        }
        if (b->state == MB_GW_CRASHED) {
            if (b->next_start_ms > deadline_ms) {
                rc = mb_err_set(err, MB_EIO, "%s (it restarts in %lld ms)", b->last_error,
                                (long long)(b->next_start_ms - now));
                break;
            }
            mb_gw__cond_wait_until(&b->cond, &b->lock, b->next_start_ms);
            continue;
        }
        if (now >= deadline_ms) {
            rc = mb_err_set(err, MB_ETIMEOUT,
                            "the MCP server '%s' is not ready yet (%s%s); it keeps starting "
                            "in the background",
                            b->server, mb_gw__state_name(b->state),
                            b->state == MB_GW_READY ? ", tools/list pending" : "");
            break;
        }
        mb_gw__cond_wait_until(&b->cond, &b->lock, deadline_ms);
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

int mb_gw__backend_kick(mb_gw_backend *b, mb_err *err)
{
    int rc = MB_OK;
    pthread_mutex_lock(&b->lock);
    if (b->removed) {
        rc = mb_err_set(err, MB_ENOTFOUND, "the sandbox was released");
    } else if (b->state == MB_GW_STOPPED ||
               (b->state == MB_GW_CRASHED && mb_gw__now() >= b->next_start_ms)) {
        mb_err e;
        if (start_locked(b, &e) && e.code != MB_ECONFLICT) rc = mb_err_set(err, e.code, "%s", e.msg);
    } else if (b->state == MB_GW_CRASHED) {
        b->want_running = 1; /* the reactor restarts it after the backoff */
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

int mb_gw__backend_ready(mb_gw_backend *b, int64_t deadline_ms, mb_err *err)
{
    return wait_ready(b, deadline_ms, 0, err);
}

int mb_gw__backend_ready_tools(mb_gw_backend *b, int64_t deadline_ms, mb_err *err)
{
    return wait_ready(b, deadline_ms, 1, err);
}

/* ------------------------------------------------------------- stdin */

int mb_gw__backend_send_locked(mb_gw_backend *b, const char *data, size_t len, mb_err *err)
{
    mb_assert_held(&b->lock);
    if (b->in_fd < 0 || !b->have_proc)
        return mb_err_set(err, MB_EIO, "the MCP server '%s' is not running", b->server);
    size_t queued = b->inq.len - b->inq_off;
    if (queued) {
        size_t limit = b->gw->opts.max_message_bytes * 4;
        if (queued + len > limit)
            return mb_err_set(err, MB_EBUSY,
                              "the MCP server '%s' is not reading its input (%zu bytes are "
                              "waiting)",
                              b->server, queued);
        mb_buf_append(&b->inq, data, len);
        mb_buf_putc(&b->inq, '\n');
        return MB_OK;
    }
    struct iovec iov[2] = {{(void *)data, len}, {(void *)"\n", 1}};
    size_t total = len + 1, done = 0;
    for (;;) {
        ssize_t w = writev(b->in_fd, iov, 2);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) break;
            return mb_err_sys(err, errno, "writing to the MCP server '%s' failed", b->server);
        }
        done += (size_t)w;
        if (done == total) return MB_OK;
        /* Partial: advance the vectors and try once more. */
        size_t skip = (size_t)w;
        for (int i = 0; i < 2; i++) {
            size_t k = skip < iov[i].iov_len ? skip : iov[i].iov_len;
            iov[i].iov_base = (char *)iov[i].iov_base + k;
            iov[i].iov_len -= k;
            skip -= k;
        }
    }
    if (done < len) mb_buf_append(&b->inq, data + done, len - done);
    mb_buf_putc(&b->inq, '\n');
    mb_gw__reactor_watch_in(b->gw->reactor, b, 1);
    return MB_OK;
}

void mb_gw__backend_flush(mb_gw_backend *b, uint64_t gen)
{
    pthread_mutex_lock(&b->lock);
    if (gen != b->gen || b->in_fd < 0) {
        pthread_mutex_unlock(&b->lock);
        return;
    }
    while (b->inq_off < b->inq.len) {
        ssize_t w = write(b->in_fd, b->inq.data + b->inq_off, b->inq.len - b->inq_off);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN) {
                /* EPIPE: the process is going; stdout EOF will tell. */
                mb_buf_reset(&b->inq);
                b->inq_off = 0;
            }
            break;
        }
        b->inq_off += (size_t)w;
    }
    if (b->inq_off >= b->inq.len) {
        mb_buf_reset(&b->inq);
        b->inq_off = 0;
        if (b->inq.cap > (1u << 20)) mb_buf_free(&b->inq);
        mb_gw__reactor_watch_in(b->gw->reactor, b, 0);
    } else if (b->inq_off > (1u << 20)) {
        mb_buf_consume(&b->inq, b->inq_off);
        b->inq_off = 0;
    }
    pthread_mutex_unlock(&b->lock);
}

/* ------------------------------------------------------------- stderr */

void mb_gw__backend_stderr(mb_gw_backend *b, uint64_t gen, const char *line, size_t len)
{
    mb_debug("gateway: [%s/%s] stderr: %.*s", b->sandbox_id, b->server, (int)len, line);
    pthread_mutex_lock(&b->lock);
    if (gen == b->gen) {
        if (len + 1 >= MB_GW_STDERR_TAIL) {
            memcpy(b->err_tail, line + len - (MB_GW_STDERR_TAIL - 1), MB_GW_STDERR_TAIL - 1);
            b->err_tail[MB_GW_STDERR_TAIL - 1] = '\n';
            b->err_tail_len = MB_GW_STDERR_TAIL;
        } else {
            size_t need = len + 1;
            if (b->err_tail_len + need > MB_GW_STDERR_TAIL) {
                size_t drop = b->err_tail_len + need - MB_GW_STDERR_TAIL;
                memmove(b->err_tail, b->err_tail + drop, b->err_tail_len - drop);
                b->err_tail_len -= drop;
            }
            memcpy(b->err_tail + b->err_tail_len, line, len);
            b->err_tail[b->err_tail_len + len] = '\n';
            b->err_tail_len += need;
        }
    }
    pthread_mutex_unlock(&b->lock);
}

/* ------------------------------------------------------------- probing */

void mb_gw__backend_probe_locked(mb_gw_backend *b)
{
    if (b->state != MB_GW_READY || !b->have_proc || b->probe_deadline_ms) return;
    mb_gw_pending *p = mb_gw__pending_new_locked(b, MB_GW_PEND_PROBE, "ping");
    char t[96];
    snprintf(t, sizeof t, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"ping\"}",
             (long long)p->id);
    b->probe_deadline_ms = mb_gw__now() + b->gw->opts.cancel_grace_ms;
    mb_err e;
    if (mb_gw__backend_send_locked(b, t, strlen(t), &e))
        mb_debug("gateway: [%s/%s] ping not sent: %s", b->sandbox_id, b->server, e.msg);
}

void mb_gw__backend_probe_answered_locked(mb_gw_backend *b) { b->probe_deadline_ms = 0; }

/* ---------------------------------------------------------------- tick */

void mb_gw__backend_tick(mb_gw_backend *b, int64_t now)
{
    taken t = {0, {-1, -1, -1, 0}, -1, 0};
    int crashed = 0;
    pthread_mutex_lock(&b->lock);
    if (b->removed) {
        pthread_mutex_unlock(&b->lock);
        return;
    }
    if (b->state == MB_GW_STARTING && b->have_proc && now >= b->init_deadline_ms) {
        set_error_locked(b, "the MCP server '%s' did not answer initialize within %d ms",
                         b->server, b->gw->opts.init_timeout_ms);
        mb_warn("gateway: [%s/%s] %s", b->sandbox_id, b->server, b->last_error);
        crash_locked(b, b->last_error, &t);
        crashed = 1;
    } else if (b->state == MB_GW_READY && b->probe_deadline_ms && now >= b->probe_deadline_ms) {
        /* A cancelled request, then silence: its reading thread is stuck (a
         * blocking open of a FIFO, a busy loop). Only a new process helps. */
        set_error_locked(b, "the MCP server '%s' did not answer a ping within %d ms after a "
                         "request was cancelled; the gateway restarted it",
                         b->server, b->gw->opts.cancel_grace_ms);
        mb_warn("gateway: [%s/%s] %s", b->sandbox_id, b->server, b->last_error);
        crash_locked(b, b->last_error, &t);
        crashed = 1;
    } else if (b->state == MB_GW_CRASHED && b->want_running && now >= b->next_start_ms) {
        mb_err e;
        start_locked(b, &e);
    } else if (b->state == MB_GW_READY && b->tools_fetching && now >= b->tools_deadline_ms) {
        /* Readiness must not hang on a server that never lists its tools. */
        b->tools_fetching = 0;
        b->tools_known = 1;
        set_error_locked(b, "the MCP server '%s' did not answer tools/list within %d ms",
                         b->server, b->gw->opts.init_timeout_ms);
        pthread_cond_broadcast(&b->cond);
    }
    mb_gw__expire_locked(b, NULL, now);
    pthread_mutex_unlock(&b->lock);
    if (crashed) release(b, &t);
}
