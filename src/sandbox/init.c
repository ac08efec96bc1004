/*
 * init.c - PID 1 of every sandbox: the child a zygote cloned, once it has
 * assembled the sandbox's root (launch.c). It shows as `mcpbox sandbox-init`
 * in ps and as "mcpbox-init" in /proc/1/comm.
 *
 * One single-threaded epoll loop over
 *   - the control socket (bound by the daemon at <state_dir>/ctl.sock before
 *     the clone; listen() is called here so that SO_PEERCRED on the daemon's
 *     side names the init, which is how adopt finds its pid);
 *   - a signalfd for SIGCHLD and the shutdown signals;
 *   - connections whose first message has not arrived yet.
 *
 * Requests (proto.c): PING -> PONG; SPAWN -> fork a shepherd that takes the
 * connection over (shepherd.c), or, for a server with a life line, start
 * it directly and watch the life line here (handle_server); KILL_ID ->
 * relay to that child's shepherd (or signal the direct server); RESET ->
 * kill everything but us and empty /tmp, /run, /dev/shm.
 *
 * Duties as pid 1: reap every zombie (orphans are re-parented here), and on
 * SIGTERM/SIGINT/SIGHUP sent from outside the sandbox (ssi_pid == 0: the
 * sender is not in our pid namespace) forward SIGTERM to everything, wait a
 * moment and exit; the kernel then kills whatever is left, since the death
 * of a pid namespace's init takes the whole namespace down. The same signals
 * sent from inside are ignored.
 *
 * The init is not dumpable, so no process of the sandbox can open its
 * /proc/1/{fd,root,mem,environ}, and it keeps its capabilities (it needs
 * them to confine children) while its children drop theirs. It runs under
 * the sandbox's seccomp filter itself, loaded before its first request, so
 * that its children inherit it instead of loading it each (confine.c).
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SHUTDOWN_GRACE_MS 2000

typedef struct child_rec {
    int64_t id;
    pid_t pid;    /* the shepherd, or a server started directly */
    int lifeline; /* a direct server's life line (our copy of its stdin), or -1 */
    int direct;   /* pid is the server itself, no shepherd */
} child_rec;

typedef struct init_state {
    int lfd, sfd, ep;
    int *conns; /* connections awaiting their first message */
    size_t nconns, capconns;
    child_rec *kids;
    size_t nkids, capkids;
    int64_t next_id;
    const mb__confine *cf; /* compiled once by the zygote */
} init_state;

static void conn_add(init_state *st, int fd)
{
    if (st->nconns == st->capconns) {
        st->capconns = st->capconns ? st->capconns * 2 : 16;
        st->conns = mb_realloc(st->conns, st->capconns * sizeof *st->conns);
    }
    st->conns[st->nconns++] = fd;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(st->ep, EPOLL_CTL_ADD, fd, &ev);
}

static void conn_drop(init_state *st, int fd, int do_close)
{
    epoll_ctl(st->ep, EPOLL_CTL_DEL, fd, NULL);
    for (size_t i = 0; i < st->nconns; i++)
        if (st->conns[i] == fd) {
            st->conns[i] = st->conns[--st->nconns];
            break;
        }
    if (do_close) close(fd);
}

/* Kills a direct server's tree: everything below it, and everything left
 * in its session (its children are re-parented to us once it is gone, but
 * stay in its session unless they made their own). Looked up before any
 * kill, so that no parent dies (re-parenting its children to us) before its
 * descendants are known; a few rounds, for what forks while we look. */
static void kill_server_tree(pid_t server, int alive)
{
    for (int round = 0; round < 3; round++) {
        pid_t *pids;
        int n = mb__tree_pids(server, server, &pids);
        for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
        free(pids);
        if (!n) break;
    }
    kill(-server, SIGKILL); /* its process group, even without it */
    if (alive) kill(server, SIGKILL); /* a reaped pid is not ours to signal */
}

static void drop_lifeline(init_state *st, child_rec *k)
{
    if (k->lifeline < 0) return;
    epoll_ctl(st->ep, EPOLL_CTL_DEL, k->lifeline, NULL);
    close(k->lifeline);
    k->lifeline = -1;
}

static void reap_all(init_state *st)
{
    int status;
    pid_t p;
    while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
        for (size_t i = 0; i < st->nkids; i++)
            if (st->kids[i].pid == p) {
                /* A server that ended takes what it left behind along, and
                 * the daemon reads EOF once our copy of its socket is closed. */
                if (st->kids[i].direct) {
                    kill_server_tree(p, 0);
                    drop_lifeline(st, &st->kids[i]);
                }
                st->kids[i] = st->kids[--st->nkids];
                break;
            }
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Kills every other process of the namespace and waits for them. */
static void kill_everything(init_state *st, int sig, int grace_ms)
{
    kill(-1, sig);
    int64_t deadline = mb_mono_ms() + grace_ms;
    for (;;) {
        reap_all(st);
        errno = 0;
        int status;
        pid_t p = waitpid(-1, &status, WNOHANG);
        if (p < 0 && errno == ECHILD) return;
        if (mb_mono_ms() >= deadline) return;
        sleep_ms(2);
    }
}

static void empty_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)mb_empty_dir_at(fd, NULL);
    close(fd);
}

static void kid_add(init_state *st, child_rec k)
{
    if (st->nkids == st->capkids) {
        st->capkids = st->capkids ? st->capkids * 2 : 16;
        st->kids = mb_realloc(st->kids, st->capkids * sizeof *st->kids);
    }
    st->kids[st->nkids++] = k;
}

/* A server with a life line is started by the init itself, without a
 * shepherd: a fork and a process less per server, which on a virtual
 * machine is a good part of a cold acquire's CPU (docs/PERFORMANCE.md).
 * The init watches the life line in its loop (hang-up only: data arriving
 * does not wake it) and does the shepherd's two duties: when the daemon lets
 * go, the server's tree is killed; when the server ends, what is left of its
 * session is killed and the life line closed. What it cannot do is follow a
 * descendant that made a session of its own and whose parent already ended
 * (a shepherd, as a subreaper, would still have it): such a process lives
 * until the sandbox is reset or released, inside the sandbox's limits. */
static void handle_server(init_state *st, int fd, mb__msg *m)
{
    char what[600];
    pid_t pid;
    int e = mb__cmd_start(m, st->cf, &pid, what, sizeof what);
    if (e) {
        (void)mb__msg_send_error(fd, e, what);
        conn_drop(st, fd, 1);
        return;
    }
    child_rec k = {.id = ++st->next_id, .pid = pid, .lifeline = m->fds[0], .direct = 1};
    m->fds[0] = -1; /* ours now; the others are closed with the message */
    struct epoll_event ev = {.events = EPOLLRDHUP, .data.fd = k.lifeline};
    if (epoll_ctl(st->ep, EPOLL_CTL_ADD, k.lifeline, &ev) != 0) {
        e = errno;
        close(k.lifeline);
        kill_server_tree(pid, 1);
        (void)mb__msg_send_error(fd, e, "cannot watch the server's life line");
        conn_drop(st, fd, 1);
        return;
    }
    kid_add(st, k);
    (void)mb__msg_send_simple(fd, MB__MSG_SPAWNED, 0, k.id, pid);
    conn_drop(st, fd, 1);
}

/* The daemon let go of a direct server's life line (or it broke). */
static int lifeline_event(init_state *st, int fd)
{
    for (size_t i = 0; i < st->nkids; i++)
        if (st->kids[i].direct && st->kids[i].lifeline == fd) {
            kill_server_tree(st->kids[i].pid, 1);
            drop_lifeline(st, &st->kids[i]); /* reaped later, by pid */
            return 1;
        }
    return 0;
}

static void handle_spawn(init_state *st, int fd, mb__msg *m)
{
    if ((m->h.flags & MB__SPAWN_LIFELINE) && (m->h.flags & MB__SPAWN_FD0) && m->nfds > 0 &&
        m->fds[0] >= 0) {
        handle_server(st, fd, m);
        return;
    }
    int64_t id = ++st->next_id;
    pid_t pid = fork();
    if (pid == 0) {
        close(st->ep);
        close(st->sfd);
        close(st->lfd);
        mb__shepherd_main(fd, m, id, st->cf);
    }
    if (pid < 0) {
        (void)mb__msg_send_error(fd, errno, "cannot start a process (the sandbox may be at its "
                                            "process limit)");
        conn_drop(st, fd, 1);
        return;
    }
    kid_add(st, (child_rec){.id = id, .pid = pid, .lifeline = -1});
    conn_drop(st, fd, 1); /* the shepherd owns it now */
}

static void handle(init_state *st, int fd)
{
    mb__msg m;
    int rc = mb__msg_recv(fd, &m, 0);
    if (rc == -ETIMEDOUT) return;
    if (rc) {
        conn_drop(st, fd, 1);
        return;
    }
    switch (m.h.type) {
    case MB__MSG_PING:
        (void)mb__msg_send_simple(fd, MB__MSG_PONG, 0, MB__PROTO_VERSION, (int64_t)st->nkids);
        break;
    case MB__MSG_SPAWN:
        handle_spawn(st, fd, &m);
        break;
    case MB__MSG_KILL_ID: {
        pid_t target = 0;
        int direct = 0;
        for (size_t i = 0; i < st->nkids; i++)
            if (st->kids[i].id == m.h.a) {
                target = st->kids[i].pid;
                direct = st->kids[i].direct;
            }
        union sigval v = {.sival_int = (int)m.h.b};
        int sig = (int)m.h.b;
        if (direct && sig > 0 && sig < NSIG) { /* as a shepherd delivers it */
            if (sig == SIGKILL) kill_server_tree(target, 1);
            else kill(-target, sig);
            (void)mb__msg_send_simple(fd, MB__MSG_OK, 0, 0, 0);
        } else if (!direct && target > 0 && sigqueue(target, SIGUSR1, v) == 0)
            (void)mb__msg_send_simple(fd, MB__MSG_OK, 0, 0, 0);
        else
            (void)mb__msg_send_error(fd, ESRCH, "no such child");
        break;
    }
    case MB__MSG_RESET:
        kill_everything(st, SIGKILL, 5000);
        empty_dir("/tmp");
        empty_dir("/run");
        empty_dir("/dev/shm");
        (void)mb__msg_send_simple(fd, MB__MSG_OK, 0, 0, 0);
        break;
    default:
        (void)mb__msg_send_error(fd, EPROTO, "unknown request");
        conn_drop(st, fd, 1);
        break;
    }
    mb__msg_free(&m);
}

/* Set in the zygote helper, which its exec left with every signal at its
 * default action (mb_spawnattr_init_clean) and which changes none but
 * SIGPIPE: its inits then skip resetting all 64 (a system call each, ~3.4 us
 * on this project's test machine). A local zygote's caller may have
 * handlers of its own, so the reset stays the default. */
static int signals_default;

void mb__init_signals_are_default(void) { signals_default = 1; }

int mb__init_main(int lfd, int status_fd, const mb__confine *cf)
{
    init_state st;
    memset(&st, 0, sizeof st);
    st.lfd = lfd;

    sigset_t set;
    sigemptyset(&set);
    for (int sig = 1; sig < NSIG && !signals_default; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    sigprocmask(SIG_SETMASK, &set, NULL);

    (void)prctl(PR_SET_DUMPABLE, 0);
    (void)prctl(PR_SET_NAME, "mcpbox-init");
    struct rlimit nocore = {0, 0};
    (void)setrlimit(RLIMIT_CORE, &nocore);

    /* The filter goes on the init itself, so every child inherits it
     * (confine.c). */
    mb__confine own = cf ? *cf : (mb__confine){0};
    int crc = own.insns ? mb__confine_install(&own) : -EINVAL;
    st.cf = &own;
    if (crc || listen(lfd, 256) != 0) {
        char msg[MB_ERR_MSG_MAX + 1];
        if (!own.insns) snprintf(msg, sizeof msg, "Eno seccomp program");
        else if (crc) snprintf(msg, sizeof msg, "Ecannot load the seccomp filter: %s", strerror(-crc));
        else snprintf(msg, sizeof msg, "E%s", strerror(errno));
        (void)send(status_fd, msg, strlen(msg), MSG_NOSIGNAL);
        return 1;
    }
    fcntl(lfd, F_SETFD, FD_CLOEXEC);
    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
    st.sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    st.ep = epoll_create1(EPOLL_CLOEXEC);
    if (st.sfd < 0 || st.ep < 0) {
        (void)send(status_fd, "Ecannot create the event loop", 29, MSG_NOSIGNAL);
        return 1;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    epoll_ctl(st.ep, EPOLL_CTL_ADD, lfd, &ev);
    ev.data.fd = st.sfd;
    epoll_ctl(st.ep, EPOLL_CTL_ADD, st.sfd, &ev);

    (void)send(status_fd, "R", 1, MSG_NOSIGNAL);
    close(status_fd);

    for (;;) {
        struct epoll_event evs[32];
        int n = epoll_wait(st.ep, evs, 32, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == lfd) {
                int c;
                while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) conn_add(&st, c);
            } else if (fd == st.sfd) {
                struct signalfd_siginfo si;
                while (read(st.sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                    if (si.ssi_signo == SIGCHLD) {
                        reap_all(&st);
                    } else if (si.ssi_pid == 0) {
                        kill_everything(&st, SIGTERM, SHUTDOWN_GRACE_MS);
                        _exit(0);
                    }
                }
            } else if (!lifeline_event(&st, fd)) {
                handle(&st, fd);
            }
        }
    }
    return 1;
}
