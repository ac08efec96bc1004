/*
 * zygote.c - the process that clones every sandbox's init (see sandbox.h,
 * "zygote"), and the daemon's handle on it.
 *
 * Why: an init that is a fresh exec of mcpbox pays for loading 30-odd shared
 * libraries and relocating them (private dirty pages in every init), and for
 * compiling the seccomp filter with libseccomp; that was more than half of a
 * sandbox create. A zygote has done both once; its clones share its pages
 * copy-on-write and start running the init at once (launch.c).
 *
 * The helper process (`mcpbox sandbox-zygote --fd 3`) is single-threaded: a
 * poll loop over its request socket (a SOCK_SEQPACKET socketpair with the
 * daemon, messages of proto.c) and a signalfd for SIGCHLD, on which it reaps
 * the inits it cloned when they end. It runs with a minimal environment (the
 * inits inherit its memory, which must hold nothing of the daemon's: no API
 * key, no configuration) in a process group of its own (a terminal's ^C to
 * the daemon must not reach the sandboxes, which outlive the daemon). It
 * exits when the socket closes: when the daemon stops it, or dies.
 *
 * Daemon side: one socket, one request at a time under a mutex (a request
 * is a clone, about a millisecond; maps, cgroups and the wait for "ready"
 * run on the creating thread, in parallel with other creates). A helper
 * that died is reaped and started again on the next request.
 *
 * A local zygote is the calling process itself (single-threaded callers
 * only): the same clone, run in place.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define REPLY_TIMEOUT_MS 30000
/* The fd number the helper gets its socket on. */
#define ZYGOTE_FD 3

struct mb_zygote {
    int local;             /* the caller clones in place */
    /* helper process */
    char *bin;
    pthread_mutex_t mu;    /* one request at a time; guards pid and fd */
    pid_t pid;             /* 0 = not running */
    int fd;                /* our end of the request socket, -1 = none */
    /* local */
    mb__confine cf;
    char *title;
    size_t title_len;
};

/* ------------------------------------------------------- helper process */

static char **helper_env(void)
{
    static const char *const pass[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
                                       "MCPBOX_LOG", NULL};
    char **env = mb_calloc(8, sizeof *env);
    int n = 0;
    env[n++] = mb_strdup("PATH=" MB_SANDBOX_DEFAULT_PATH);
    for (const char *const *p = pass; *p; p++) {
        const char *v = getenv(*p);
        if (v) env[n++] = mb_asprintf("%s=%s", *p, v);
    }
    return env;
}

/* Starts the helper (z->mu held). */
static int helper_start(mb_zygote *z, mb_err *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return mb_err_sys(err, errno, "cannot create the zygote's socket");
    char fdarg[16];
    snprintf(fdarg, sizeof fdarg, "%d", ZYGOTE_FD);
    char *argv[] = {"mcpbox", "sandbox-zygote", "--fd", fdarg, NULL};
    char **envp = helper_env();
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], ZYGOTE_FD);
    /* stdin and stdout on /dev/null; stderr stays the daemon's, for the
     * rare complaint (the inits replace it with their log). */
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    mb_spawnattr_init_clean(&attr);
    pid_t pid;
    int rc = posix_spawn(&pid, z->bin, &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    mb_strv_free(envp);
    close(sv[1]);
    if (rc) {
        close(sv[0]);
        return mb_err_sys(err, rc, "cannot start the sandbox zygote %s", z->bin);
    }
    z->pid = pid;
    z->fd = sv[0];
    return 0;
}

/* Ends the helper (z->mu held): EOF makes it exit (a broken one, which
 * may not be reading, is killed); then it is reaped. The inits it cloned
 * live on. */
static void helper_end(mb_zygote *z, int broken)
{
    if (z->fd >= 0) close(z->fd);
    z->fd = -1;
    if (z->pid > 0) {
        if (broken) kill(z->pid, SIGKILL);
        while (waitpid(z->pid, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    z->pid = 0;
}

int mb_zygote_start(const char *mcpbox_bin, mb_zygote **out, mb_err *err)
{
    *out = NULL;
    if (!mcpbox_bin || mcpbox_bin[0] != '/')
        return mb_err_set(err, MB_EINVAL, "the zygote needs the absolute path of mcpbox");
    if (access(mcpbox_bin, X_OK) != 0)
        return mb_err_sys(err, errno, "the mcpbox binary %s is not executable", mcpbox_bin);
    mb_zygote *z = mb_calloc(1, sizeof *z);
    z->bin = mb_strdup(mcpbox_bin);
    z->fd = -1;
    pthread_mutex_init(&z->mu, NULL);
    int rc = helper_start(z, err);
    if (rc) {
        mb_zygote_stop(z);
        return rc;
    }
    *out = z;
    return 0;
}

int mb_zygote_local(char *title, size_t title_len, mb_zygote **out, mb_err *err)
{
    *out = NULL;
    mb_zygote *z = mb_calloc(1, sizeof *z);
    z->local = 1;
    z->fd = -1;
    pthread_mutex_init(&z->mu, NULL);
    int rc = mb__confine_build(&z->cf, err);
    if (rc) {
        mb_zygote_stop(z);
        return rc;
    }
    z->title = title;
    z->title_len = title ? title_len : 0;
    *out = z;
    return 0;
}

void mb_zygote_stop(mb_zygote *z)
{
    if (!z) return;
    pthread_mutex_lock(&z->mu);
    helper_end(z, 0);
    pthread_mutex_unlock(&z->mu);
    pthread_mutex_destroy(&z->mu);
    mb__confine_free(&z->cf);
    free(z->bin);
    free(z);
}

pid_t mb_zygote_pid(const mb_zygote *z) { return z && !z->local ? z->pid : 0; }

/* --------------------------------------------------------- the request */

static const char *or_empty(const char *s) { return s ? s : ""; }

/* One request and its answer on the helper's socket (z->mu held). -EPIPE
 * when the helper is gone (the caller may restart it and retry). */
static int request(mb_zygote *z, const mb__clone_req *r, pid_t *pid, int *pidfd, mb_err *err)
{
    const mb_sandbox_opts *o = r->opts;
    size_t nstr = 11 + 2 * o->n_binds;
    const char **strs = mb_calloc(nstr, sizeof *strs);
    char limits[96];
    snprintf(limits, sizeof limits, "%" PRIu64 " %u %u %" PRIu64, r->lim.memory_bytes,
             r->lim.pids_max, r->lim.cpu_millis, r->lim.disk_bytes);
    strs[0] = o->id;
    strs[1] = o->state_dir;
    strs[2] = o->workspace;
    strs[3] = or_empty(o->data_subdir);
    strs[4] = or_empty(o->image_dir);
    strs[5] = o->mcpbox_bin;
    strs[6] = r->root;
    strs[7] = r->hostname;
    strs[8] = limits;
    strs[9] = r->name;
    strs[10] = or_empty(o->server_bin_dir);
    for (size_t i = 0; i < o->n_binds; i++) {
        strs[11 + 2 * i] = o->binds[i].host;
        strs[12 + 2 * i] = o->binds[i].inside;
    }
    mb__msg_hdr h = {.type = MB__MSG_ZY_CREATE, .a = o->uid_base, .b = o->allow_network,
                     .nstr = (uint32_t)nstr};
    int fds[3] = {r->sync_fd, r->listen_fd, r->log_fd};
    int rc = mb__msg_send(z->fd, &h, strs, fds, 3);
    free(strs);
    if (rc == -EPIPE || rc == -ECONNRESET) return -EPIPE;
    if (rc == -E2BIG || rc == -EMSGSIZE)
        return mb_err_set(err, MB_ETOOBIG, "the sandbox options exceed %u bytes", MB__MSG_MAX);
    if (rc) return mb_err_sys(err, -rc, "cannot reach the sandbox zygote");
    mb__msg m;
    rc = mb__msg_recv(z->fd, &m, REPLY_TIMEOUT_MS);
    if (rc == -EPIPE) return -EPIPE;
    if (rc) {
        /* A late answer would be taken for the next request's: replace it. */
        helper_end(z, 1);
        return mb_err_sys(err, -rc, "the sandbox zygote did not answer");
    }
    if (m.h.type == MB__MSG_SPAWNED && m.nfds == 1 && m.fds[0] >= 0 && m.h.a > 0) {
        *pid = (pid_t)m.h.a;
        *pidfd = m.fds[0];
        m.fds[0] = -1;
        rc = 0;
    } else if (m.h.type == MB__MSG_ERROR) {
        /* a = the mb_code, strs[0] = the whole message */
        rc = mb_err_set(err, m.h.a < 0 && m.h.a >= MB_ENOSPACE ? (int)m.h.a : MB_EIO, "%s",
                        m.h.nstr ? m.strs[0] : "the sandbox zygote failed");
    } else {
        rc = mb_err_set(err, MB_EIO, "the sandbox zygote gave an unexpected answer (%u)",
                        m.h.type);
        helper_end(z, 1);
    }
    mb__msg_free(&m);
    return rc;
}

int mb__zygote_clone(mb_zygote *z, const mb__clone_req *r, pid_t *pid, int *pidfd,
                     int *is_child, mb_err *err)
{
    if (z->local) {
        *is_child = 1;
        return mb__launch_clone(r, &z->cf, z->title, z->title_len, pid, pidfd, err);
    }
    *is_child = 0;
    pthread_mutex_lock(&z->mu);
    int rc = z->fd >= 0 ? request(z, r, pid, pidfd, err) : -EPIPE;
    if (rc == -EPIPE) {
        /* The helper died (or was never started): once more with a new one. */
        helper_end(z, 1);
        rc = helper_start(z, err);
        if (!rc) rc = request(z, r, pid, pidfd, err);
        if (rc == -EPIPE) {
            helper_end(z, 1);
            rc = mb_err_set(err, MB_EIO, "the sandbox zygote (%s sandbox-zygote) exits at "
                                         "once; is it a working mcpbox binary?",
                            z->bin);
        }
    }
    pthread_mutex_unlock(&z->mu);
    return rc;
}

/* ------------------------------------------------------ the helper's side */

typedef struct zy_state {
    int fd;
    mb__confine cf;
    int cf_ok;
    mb_err cf_err;
    char *title;
    size_t title_len;
} zy_state;

static int parse_limits(const char *s, mb_sandbox_limits *l)
{
    unsigned long long mem, disk;
    unsigned pids, cpu;
    if (sscanf(s, "%llu %u %u %llu", &mem, &pids, &cpu, &disk) != 4) return -1;
    l->memory_bytes = mem;
    l->pids_max = pids;
    l->cpu_millis = cpu;
    l->disk_bytes = disk;
    return 0;
}

static const char *or_null(const char *s) { return s && *s ? s : NULL; }

static void serve_create(zy_state *st, mb__msg *m)
{
    mb_err err = {0};
    int rc = 0;
    if (!st->cf_ok) {
        err = st->cf_err;
        rc = err.code ? err.code : MB_EIO;
    } else if (m->h.nstr < 11 || (m->h.nstr - 11) % 2 || m->nfds != 3) {
        rc = mb_err_set(&err, MB_EINVAL, "malformed create request");
    }
    mb_sandbox_bind *binds = NULL;
    mb__clone_req r;
    mb_sandbox_opts o;
    memset(&o, 0, sizeof o);
    memset(&r, 0, sizeof r);
    if (!rc) {
        size_t nb = (m->h.nstr - 11) / 2;
        binds = mb_calloc(nb ? nb : 1, sizeof *binds);
        for (size_t i = 0; i < nb; i++)
            binds[i] = (mb_sandbox_bind){m->strs[11 + 2 * i], m->strs[12 + 2 * i]};
        o.id = m->strs[0];
        o.state_dir = m->strs[1];
        o.workspace = m->strs[2];
        o.data_subdir = or_null(m->strs[3]);
        o.image_dir = or_null(m->strs[4]);
        o.mcpbox_bin = m->strs[5];
        o.server_bin_dir = or_null(m->strs[10]);
        o.uid_base = (uint32_t)m->h.a;
        o.allow_network = m->h.b != 0;
        o.binds = binds;
        o.n_binds = nb;
        r.opts = &o;
        r.root = m->strs[6];
        r.hostname = m->strs[7];
        r.name = m->strs[9];
        r.sync_fd = m->fds[0];
        r.listen_fd = m->fds[1];
        r.log_fd = m->fds[2];
        if (parse_limits(m->strs[8], &r.lim))
            rc = mb_err_set(&err, MB_EINVAL, "malformed limits in a create request");
    }
    pid_t pid = -1;
    int pidfd = -1;
    if (!rc) rc = mb__launch_clone(&r, &st->cf, st->title, st->title_len, &pid, &pidfd, &err);
    free(binds);
    if (rc) {
        mb__msg_hdr eh = {.type = MB__MSG_ERROR, .a = err.code ? err.code : MB_EIO, .nstr = 1};
        const char *msg[1] = {err.msg};
        (void)mb__msg_send(st->fd, &eh, msg, NULL, 0);
        return;
    }
    mb__msg_hdr h = {.type = MB__MSG_SPAWNED, .a = pid};
    (void)mb__msg_send(st->fd, &h, NULL, &pidfd, 1);
    close(pidfd);
}

int mb_zygote_helper_main(int fd, char *title, size_t title_len)
{
    int keep[1] = {fd};
    (void)mb__close_fds_except(keep, 1);
    mb__init_signals_are_default();
    return mb__zygote_main(fd, title, title_len);
}

int mb__zygote_main(int fd, char *title, size_t title_len)
{
    zy_state st;
    memset(&st, 0, sizeof st);
    st.fd = fd;
    st.title = title;
    st.title_len = title_len;
    (void)prctl(PR_SET_NAME, "mcpbox-zygote");
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        fprintf(stderr, "mcpbox sandbox-zygote: signalfd: %s\n", strerror(errno));
        return 1;
    }
    /* A filter that cannot be built fails every create with the reason,
     * rather than the zygote dying and being restarted in a loop. */
    st.cf_ok = mb__confine_build(&st.cf, &st.cf_err) == 0;
    for (;;) {
        struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        int r = poll(pf, 2, -1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        if (pf[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
            }
            while (waitpid(-1, NULL, WNOHANG) > 0) {
            }
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            mb__msg m;
            int rc = mb__msg_recv(fd, &m, 0);
            if (rc == -ETIMEDOUT) continue;
            if (rc) break; /* the daemon closed the socket, or died */
            if (m.h.type == MB__MSG_ZY_CREATE) serve_create(&st, &m);
            else (void)mb__msg_send_error(fd, EPROTO, "unknown request to the zygote");
            mb__msg_free(&m);
        }
    }
    mb__confine_free(&st.cf);
    close(sfd);
    close(fd);
    return 0;
}
