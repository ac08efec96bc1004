/*
 * reactor.c - the gateway's one I/O thread: epoll over every server's
 * stdout, stderr and (while a write is pending) stdin, plus a timerfd tick.
 *
 * DESIGN
 *   One thread reads every backend, so a thousand idle servers cost no
 *   threads and a busy one cannot starve the others: each turn reads at most
 *   MB_GW_READ_BUDGET bytes from a pipe before moving on (epoll is
 *   level-triggered, the rest is read next turn). Lines go to route.c, which
 *   hands them to the HTTP threads through stream queues; the reactor never
 *   waits for a client.
 *
 *   Pipes (mb_gw_pipe) belong to this thread alone. Other threads hand new
 *   ones over (ADOPT) and ask for old ones to be closed (CLOSE, naming the
 *   backend and generation rather than the pointer, since the reactor may
 *   have freed the pipe already when it saw EOF) through a small command
 *   queue and an eventfd. A pipe that dies during a batch of events is only
 *   freed after the batch, since later events of the same batch may name it.
 *
 *   The tick (every second) asks each backend to enforce its deadlines and
 *   restarts, and every ten seconds forgets idle sessions.
 *
 *   A CLOSE may be deferred (mb_gw__reactor_close_later): a server a claim
 *   removes from a pool sandbox is unreachable at once, but its stdin is
 *   closed (so that it exits) a little later, so that its exit does not take
 *   CPU from the requests the client of that sandbox makes right after the
 *   acquire. Deferred commands wait in a list of this thread's own and run
 *   at the first wake-up (the tick at the latest) after they are due.
 */
#include "gateway/gateway_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

enum { CMD_ADOPT = 1, CMD_CLOSE = 2 };

typedef struct cmd {
    struct cmd *next;
    int kind;
    mb_gw_pipe *p;     /* ADOPT */
    mb_gw_backend *b;  /* CLOSE (reference) */
    uint64_t gen;
    int64_t due_ms;    /* CLOSE: not before (monotonic); 0 = now */
    int in_fd;         /* CLOSE later: the process's own stdin (not its stdout socket), or -1 */
    int kill;          /* CLOSE later: call opts.kill with handle first */
    int64_t handle;
} cmd;

struct mb_gw_reactor {
    mb_gateway *gw;
    int epfd, evfd, tfd;
    pthread_t thread;
    int started;
    pthread_mutex_t lock; /* guards cmds and stop */
    cmd *cmds, *cmds_tail;
    int stop;
    mb_gw_link pipes;     /* reactor thread only */
    cmd *later;           /* reactor thread only: CLOSEs not due yet */
    int64_t last_sweep_ms;
};

/* ------------------------------------------------------------- commands */

static void post(mb_gw_reactor *r, cmd *c)
{
    pthread_mutex_lock(&r->lock);
    if (r->cmds_tail) r->cmds_tail->next = c;
    else r->cmds = c;
    r->cmds_tail = c;
    pthread_mutex_unlock(&r->lock);
    uint64_t one = 1;
    ssize_t w = write(r->evfd, &one, sizeof one);
    (void)w;
}

void mb_gw__reactor_adopt(mb_gw_reactor *r, mb_gw_pipe *p)
{
    cmd *c = mb_calloc(1, sizeof *c);
    c->kind = CMD_ADOPT;
    c->p = p;
    post(r, c);
}

void mb_gw__reactor_close(mb_gw_reactor *r, mb_gw_backend *b, uint64_t gen)
{
    cmd *c = mb_calloc(1, sizeof *c);
    c->kind = CMD_CLOSE;
    mb_gw__backend_ref(b);
    c->b = b;
    c->gen = gen;
    c->in_fd = -1;
    post(r, c);
}

void mb_gw__reactor_close_later(mb_gw_reactor *r, mb_gw_backend *b, uint64_t gen, int in_fd,
                                int kill, int64_t handle, int delay_ms)
{
    cmd *c = mb_calloc(1, sizeof *c);
    c->kind = CMD_CLOSE;
    mb_gw__backend_ref(b);
    c->b = b;
    c->gen = gen;
    c->due_ms = mb_gw__now() + delay_ms;
    c->in_fd = in_fd;
    c->kill = kill;
    c->handle = handle;
    post(r, c);
}

void mb_gw__reactor_watch_in(mb_gw_reactor *r, mb_gw_backend *b, int on)
{
    /* stdin and stdout may be one socket, already in the set for EPOLLIN:
     * then EPOLLOUT is added to (and taken off) that registration. */
    int shared = b->pipe && b->in_fd >= 0 && b->in_fd == b->pipe->out_fd;
    if (on && !b->in_watched && b->in_fd >= 0 && b->pipe) {
        struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = &b->pipe->w_in};
        if (shared) ev = (struct epoll_event){.events = EPOLLIN | EPOLLOUT,
                                              .data.ptr = &b->pipe->w_out};
        int rc = epoll_ctl(r->epfd, shared ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, b->in_fd, &ev);
        if (rc != 0 && shared && errno == ENOENT) /* before the reactor adopted it */
            rc = epoll_ctl(r->epfd, EPOLL_CTL_ADD, b->in_fd, &ev);
        if (rc == 0) b->in_watched = 1;
        else mb_warn("gateway: epoll_ctl(stdin) failed: %s", strerror(errno));
    } else if (!on && b->in_watched) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = shared ? &b->pipe->w_out : NULL};
        epoll_ctl(r->epfd, shared ? EPOLL_CTL_MOD : EPOLL_CTL_DEL, b->in_fd, &ev);
        b->in_watched = 0;
    }
}

/* --------------------------------------------------------------- pipes */

static void pipe_close_fds(mb_gw_reactor *r, mb_gw_pipe *p)
{
    if (p->out_fd >= 0) {
        epoll_ctl(r->epfd, EPOLL_CTL_DEL, p->out_fd, NULL);
        close(p->out_fd);
        p->out_fd = -1;
    }
    if (p->err_fd >= 0) {
        epoll_ctl(r->epfd, EPOLL_CTL_DEL, p->err_fd, NULL);
        close(p->err_fd);
        p->err_fd = -1;
    }
    p->dead = 1;
}

static void pipe_free(mb_gw_pipe *p)
{
    mb_gw__framer_dispose(&p->framer);
    mb_buf_free(&p->errline);
    mb_gw__backend_unref(p->b);
    free(p);
}

static void on_line(void *payload, const char *line, size_t len)
{
    mb_gw_pipe *p = payload;
    mb_gw__route_from_server(p->b, p->gen, line, len);
}

static void on_oversize(void *payload, size_t len, const char *head, size_t head_len,
                        const char *tail, size_t tail_len)
{
    mb_gw_pipe *p = payload;
    mb_gw__route_oversize(p->b, p->gen, len, head, head_len, tail, tail_len);
}

static void read_out(mb_gw_reactor *r, mb_gw_pipe *p)
{
    char buf[65536]; /* not __thread: that gave every daemon thread 64 KB of TLS to zero */
    mb_gw_framer_cb cb = {on_line, on_oversize, p};
    size_t budget = MB_GW_READ_BUDGET;
    while (budget) {
        ssize_t n = read(p->out_fd, buf, sizeof buf);
        if (n > 0) {
            mb_gw__framer_feed(&p->framer, buf, (size_t)n, &cb);
            budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        /* EOF or a broken pipe: the process is gone (or closed stdout,
         * which for a stdio server amounts to the same). A last message
         * without its newline still counts. */
        mb_gw__framer_feed(&p->framer, "\n", 1, &cb);
        char why[256];
        snprintf(why, sizeof why, "the MCP server '%s' exited (%s)", p->b->server,
                 n == 0 ? "its stdout closed" : strerror(errno));
        mb_gw__backend_died(p->b, p->gen, why);
        pipe_close_fds(r, p);
        return;
    }
}

static void stderr_line(mb_gw_pipe *p)
{
    size_t len = p->errline.len;
    while (len && (p->errline.data[len - 1] == '\r')) len--;
    if (len) mb_gw__backend_stderr(p->b, p->gen, p->errline.data, len);
    mb_buf_reset(&p->errline);
}

static void read_err(mb_gw_reactor *r, mb_gw_pipe *p)
{
    char buf[16384];
    size_t budget = MB_GW_READ_BUDGET / 4;
    while (budget) {
        ssize_t n = read(p->err_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) {
            if (p->errline.len) stderr_line(p);
            epoll_ctl(r->epfd, EPOLL_CTL_DEL, p->err_fd, NULL);
            close(p->err_fd);
            p->err_fd = -1;
            return;
        }
        budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n') {
                stderr_line(p);
            } else if (p->errline.len < MB_GW_STDERR_LINE_MAX) {
                mb_buf_putc(&p->errline, buf[i]);
            }
        }
    }
}

static void adopt(mb_gw_reactor *r, mb_gw_pipe *p)
{
    mb_gw__list_push(&r->pipes, &p->link);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &p->w_out};
    /* EEXIST: a socket that is also stdin, registered by watch_in already. */
    if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, p->out_fd, &ev) < 0 && errno != EEXIST) {
        mb_warn("gateway: epoll_ctl(stdout) failed: %s", strerror(errno));
        mb_gw__backend_died(p->b, p->gen, "the gateway could not watch the server's stdout");
        pipe_close_fds(r, p);
        return;
    }
    if (p->err_fd >= 0) {
        ev.data.ptr = &p->w_err;
        if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, p->err_fd, &ev) < 0) {
            close(p->err_fd);
            p->err_fd = -1;
        }
    }
}

/* A CLOSE: the process's stdin (when it has its own) and its pipe. */
static void run_close(mb_gw_reactor *r, cmd *c)
{
    mb_gw_backend *b = c->b;
    if (c->kill) b->gw->opts.kill(b->gw->opts.ctx, b->sandbox_id, b->server, c->handle);
    if (c->in_fd >= 0) close(c->in_fd);
    for (mb_gw_link *l = r->pipes.next; l != &r->pipes; l = l->next) {
        mb_gw_pipe *p = MB_GW_CONTAINER(l, mb_gw_pipe, link);
        if (p->b == b && p->gen == c->gen) pipe_close_fds(r, p);
    }
    mb_gw__backend_unref(b);
}

/* Runs the deferred CLOSEs that are due (all of them with force). */
static void run_later(mb_gw_reactor *r, int force)
{
    int64_t now = mb_gw__now();
    cmd **pc = &r->later;
    while (*pc) {
        cmd *c = *pc;
        if (!force && c->due_ms > now) {
            pc = &c->next;
            continue;
        }
        *pc = c->next;
        run_close(r, c);
        free(c);
    }
}

static void run_cmds(mb_gw_reactor *r)
{
    pthread_mutex_lock(&r->lock);
    cmd *c = r->cmds;
    r->cmds = r->cmds_tail = NULL;
    pthread_mutex_unlock(&r->lock);
    while (c) {
        cmd *next = c->next;
        if (c->kind == CMD_ADOPT) {
            adopt(r, c->p);
        } else if (c->due_ms) {
            c->next = r->later;
            r->later = c;
            c = next;
            continue;
        } else {
            run_close(r, c);
        }
        free(c);
        c = next;
    }
}

static void reap_dead(mb_gw_reactor *r)
{
    mb_gw_link *l = r->pipes.next;
    while (l != &r->pipes) {
        mb_gw_link *next = l->next;
        mb_gw_pipe *p = MB_GW_CONTAINER(l, mb_gw_pipe, link);
        if (p->dead) {
            mb_gw__list_del(&p->link);
            pipe_free(p);
        }
        l = next;
    }
}

/* ---------------------------------------------------------------- tick */

static void tick(mb_gw_reactor *r)
{
    mb_gateway *gw = r->gw;
    int64_t now = mb_gw__now();
    mb_gw_backend **bs = NULL;
    size_t n = 0, cap = 0;
    pthread_rwlock_rdlock(&gw->lock);
    size_t cur = 0;
    mb_gw_hnode *h;
    while ((h = mb_gw__table_at(&gw->sandboxes, &cur))) {
        mb_gw_sandbox *sb = MB_GW_CONTAINER(h, mb_gw_sandbox, node);
        for (mb_gw_link *l = sb->backends.next; l != &sb->backends; l = l->next) {
            if (n == cap) {
                cap = cap ? cap * 2 : 32;
                bs = mb_realloc(bs, cap * sizeof *bs);
            }
            bs[n] = MB_GW_CONTAINER(l, mb_gw_backend, sb_link);
            mb_gw__backend_ref(bs[n++]);
        }
    }
    pthread_rwlock_unlock(&gw->lock);
    for (size_t i = 0; i < n; i++) {
        mb_gw__backend_tick(bs[i], now);
        mb_gw__backend_unref(bs[i]);
    }
    free(bs);
    if (now - r->last_sweep_ms >= 10000) {
        r->last_sweep_ms = now;
        mb_gw__sessions_sweep(gw, now);
    }
}

/* ---------------------------------------------------------------- loop */

static void *loop(void *arg)
{
    mb_gw_reactor *r = arg;
    struct epoll_event evs[64];
    for (;;) {
        int n = epoll_wait(r->epfd, evs, 64, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            mb_error("gateway: epoll_wait failed: %s", strerror(errno));
            break;
        }
        int cmds = 0, ticked = 0;
        for (int i = 0; i < n; i++) {
            void *ptr = evs[i].data.ptr;
            if (ptr == &r->evfd) {
                uint64_t v;
                ssize_t rd = read(r->evfd, &v, sizeof v);
                (void)rd;
                cmds = 1;
                continue;
            }
            if (ptr == &r->tfd) {
                uint64_t v;
                ssize_t rd = read(r->tfd, &v, sizeof v);
                (void)rd;
                ticked = 1;
                continue;
            }
            struct mb_gw_watch *w = ptr;
            mb_gw_pipe *p = w->p;
            if (w->kind == MB_GW_W_IN ||
                (w->kind == MB_GW_W_OUT && (evs[i].events & EPOLLOUT))) {
                mb_gw__backend_flush(p->b, p->gen);
                if (w->kind == MB_GW_W_IN || !(evs[i].events & ~(uint32_t)EPOLLOUT)) continue;
            }
            if (p->dead) continue;
            if (w->kind == MB_GW_W_OUT && p->out_fd >= 0) read_out(r, p);
            else if (w->kind == MB_GW_W_ERR && p->err_fd >= 0) read_err(r, p);
        }
        if (cmds) run_cmds(r);
        if (r->later) run_later(r, 0);
        reap_dead(r);
        if (ticked) tick(r);
        pthread_mutex_lock(&r->lock);
        int stop = r->stop;
        pthread_mutex_unlock(&r->lock);
        if (stop) break;
    }
    return NULL;
}

int mb_gw__reactor_start(mb_gateway *gw, mb_gw_reactor **out, mb_err *err)
{
    mb_gw_reactor *r = mb_calloc(1, sizeof *r);
    r->gw = gw;
    r->epfd = r->evfd = r->tfd = -1;
    pthread_mutex_init(&r->lock, NULL);
    mb_gw__list_init(&r->pipes);
    r->last_sweep_ms = mb_gw__now();
    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    r->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    r->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (r->epfd < 0 || r->evfd < 0 || r->tfd < 0) {
        int e = errno;
        mb_gw__reactor_stop(r);
        return mb_err_sys(err, e, "the gateway could not create its event loop");
    }
    struct itimerspec its = {{1, 0}, {1, 0}};
    timerfd_settime(r->tfd, 0, &its, NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &r->evfd};
    epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->evfd, &ev);
    ev.data.ptr = &r->tfd;
    epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->tfd, &ev);
    int rc = pthread_create(&r->thread, NULL, loop, r);
    if (rc) {
        mb_gw__reactor_stop(r);
        return mb_err_sys(err, rc, "the gateway could not start its thread");
    }
    r->started = 1;
    *out = r;
    return MB_OK;
}

void mb_gw__reactor_stop(mb_gw_reactor *r)
{
    if (!r) return;
    if (r->started) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_mutex_unlock(&r->lock);
        uint64_t one = 1;
        ssize_t w = write(r->evfd, &one, sizeof one);
        (void)w;
        pthread_join(r->thread, NULL);
    }
    /* Whatever is left: commands not run yet and live pipes. */
    cmd *c = r->cmds;
    while (c) {
        cmd *next = c->next;
        if (c->kind == CMD_ADOPT) {
            mb_gw__list_push(&r->pipes, &c->p->link);
        } else if (c->due_ms) { /* deferred: it still owns a stdin and a kill */
            c->next = r->later;
            r->later = c;
            c = next;
            continue;
        } else {
            mb_gw__backend_unref(c->b);
        }
        free(c);
        c = next;
    }
    run_later(r, 1);
    while (!mb_gw__list_empty(&r->pipes)) {
        mb_gw_pipe *p = MB_GW_CONTAINER(r->pipes.next, mb_gw_pipe, link);
        mb_gw__list_del(&p->link);
        pipe_close_fds(r, p);
        pipe_free(p);
    }
    if (r->epfd >= 0) close(r->epfd);
    if (r->evfd >= 0) close(r->evfd);
    if (r->tfd >= 0) close(r->tfd);
    pthread_mutex_destroy(&r->lock);
    free(r);
}
