/*
 * launch.c - starting a sandbox's init, in two halves: the clone, which a
 * zygote runs (zygote.c), and everything the creating thread does around it.
 *
 * Sequence (D = the creating daemon thread, Z = the zygote, C = the clone
 * child, which becomes the init):
 *
 *   D  opens the init's log, makes the sync socketpair, and asks Z for a
 *      clone, handing over C's end of sync, the bound control socket and the
 *      log (mb__zygote_clone)
 *   Z  builds the root plan, opens the `tasks` files of the sandbox's v1
 *      cgroups, clone(NEWUSER|NEWNS|NEWPID|NEWIPC|NEWUTS[|NEWNET],
 *      CLONE_PIDFD) and answers C's pid and pidfd (mb__launch_clone)
 *   C  closes every fd but sync, the control socket, the log and the `tasks`
 *      files; writes "0" to each `tasks` (joining the cgroups); waits on sync
 *   D  writes uid_map/gid_map ("0 uid_base 65536"), moves C into the v2
 *      cgroup if the host has one (cgroup.procs), sends "go"
 *   C  opens every bind source while still host uid 0, becomes root inside
 *      (setresgid/setgroups/setresuid), unshares the cgroup namespace (so the
 *      cgroup it was just put in is its root), sets the hostname, brings lo
 *      up, runs the root plan and pivots; stdin/stdout on /dev/null, stderr
 *      on the log; then runs the init in place (init.c): it listens on the
 *      control socket and sends "ready" on sync
 *   D  returns; a setup failure arrives instead as (step, errno, step name).
 *
 * C is a fork of the zygote, a single-threaded process whose libraries are
 * loaded and whose seccomp program is compiled: it may allocate and use libc
 * freely, and it needs no exec. (A fork of the multi-threaded daemon could
 * only make raw system calls until it exec'd the mcpbox binary again, which
 * cost most of a create.) The credential changes still go through syscall(2)
 * directly: they must affect this one thread, whatever libc thinks.
 *
 * C joins the cgroups before it does anything else, so every process of the
 * sandbox is accounted from the start. It joins them itself, by writing "0"
 * to the v1 `tasks` files Z opened: a process moving itself that way skips
 * the global lock (and its RCU grace period, 5-15 ms here) that a write of
 * a pid to cgroup.procs costs, which was most of a create. No parent-death
 * signal is set
 * on C: the init must outlive the daemon (and the zygote) so that it can be
 * adopted; if the daemon gives up before "go", C sees EOF on sync and exits.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define READY_TIMEOUT_MS 30000
#define ABORT_WAIT_MS 10000

/* Steps outside the plan, reported as negative numbers. */
enum {
    STEP_GO = -1,
    STEP_CREDS = -2,
    STEP_CGROUPNS = -3,
    STEP_HOSTNAME = -4,
    STEP_LOOPBACK = -5,
    STEP_STDIO = -6,
    STEP_INIT = -7,
    STEP_CGROUP = -8,
};

/* A setup failure on the sync channel: the header, then the step's name
 * (NUL-terminated). Success is the single byte 'R' (from the init). */
typedef struct sync_fail {
    char tag; /* 'F' */
    int32_t step;
    int32_t err;
} sync_fail;

#define FAIL_MAX (sizeof(sync_fail) + 512)

/* ============================================================ child half */

typedef struct child_ctx {
    mb__plan *plan;
    int sync_fd;
    int listen_fd;
    int log_fd;
    const char *hostname;
    int own_net;
    const mb__confine *cf;
    char *title;
    size_t title_len;
    int cg_fds[MB__CG_MAX_HIER]; /* v1 `tasks` files to write "0" to */
    int n_cg;
} child_ctx;

static const char *step_name(const mb__plan *plan, int step)
{
    switch (step) {
    case STEP_GO: return "wait for the parent";
    case STEP_CREDS: return "become root in the user namespace";
    case STEP_CGROUPNS: return "create the cgroup namespace";
    case STEP_HOSTNAME: return "set the hostname";
    case STEP_LOOPBACK: return "bring up loopback";
    case STEP_STDIO: return "set up stdio";
    case STEP_INIT: return "start the init";
    case STEP_CGROUP: return "join the sandbox's cgroup";
    default: return mb__plan_step_name(plan, step);
    }
}

static void child_fail(const child_ctx *c, int step, int err) __attribute__((noreturn));
static void child_fail(const child_ctx *c, int step, int err)
{
    char msg[FAIL_MAX];
    sync_fail f = {.tag = 'F', .step = step, .err = err};
    memcpy(msg, &f, sizeof f);
    size_t n = sizeof f + (size_t)snprintf(msg + sizeof f, sizeof msg - sizeof f, "%s",
                                           step_name(c->plan, step)) + 1;
    if (n > sizeof msg) n = sizeof msg;
    (void)send(c->sync_fd, msg, n, MSG_NOSIGNAL);
    _exit(127);
}

static int loopback_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, "lo", 3);
    int rc = 0;
    if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) rc = -errno;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (!rc && ioctl(s, SIOCSIFFLAGS, &ifr) != 0) rc = -errno;
    close(s);
    return rc;
}

/* What `ps` shows for the init: the zygote's arguments after "mcpbox"
 * ("sandbox-zygote --fd 3"), rewritten. */
static void set_title(char *area, size_t len)
{
    static const char t[] = "sandbox-init";
    if (!area || len < sizeof t) return;
    memset(area, 0, len);
    memcpy(area, t, sizeof t);
}

static void child_main(child_ctx *c) __attribute__((noreturn));
static void child_main(child_ctx *c)
{
    int keep[3 + MB__CG_MAX_HIER] = {c->sync_fd, c->listen_fd, c->log_fd};
    for (int i = 0; i < c->n_cg; i++) keep[3 + i] = c->cg_fds[i];
    int rc = mb__close_fds_except(keep, 3 + c->n_cg);
    if (rc) child_fail(c, STEP_GO, -rc);
    /* First of all, into the sandbox's cgroups (the v1 ones; the parent puts
     * us in a v2 one before "go"). */
    for (int i = 0; i < c->n_cg; i++) {
        if (write(c->cg_fds[i], "0", 1) != 1) child_fail(c, STEP_CGROUP, errno);
        close(c->cg_fds[i]);
    }
    umask(022);
    char go = 0;
    ssize_t n;
    do n = read(c->sync_fd, &go, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1 || go != 'G') _exit(1); /* the parent gave up or died */

    int step = 0;
    rc = mb__plan_open(c->plan, &step);
    if (rc) child_fail(c, step, -rc);
    if (syscall(SYS_setresgid, 0, 0, 0) != 0) child_fail(c, STEP_CREDS, errno);
    if (syscall(SYS_setgroups, 0, NULL) != 0) child_fail(c, STEP_CREDS, errno);
    if (syscall(SYS_setresuid, 0, 0, 0) != 0) child_fail(c, STEP_CREDS, errno);
    if (unshare(CLONE_NEWCGROUP) != 0) child_fail(c, STEP_CGROUPNS, errno);
    if (sethostname(c->hostname, strlen(c->hostname)) != 0) child_fail(c, STEP_HOSTNAME, errno);
    if (c->own_net && (rc = loopback_up()) != 0) child_fail(c, STEP_LOOPBACK, -rc);

    rc = mb__plan_run(c->plan, &step);
    if (rc) child_fail(c, step, -rc);

    /* stdin and stdout are /dev/null, stderr the log in the state dir: never
     * the daemon's own stdio, which a sandbox outliving the daemon would
     * otherwise hold open. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(c->log_fd, 2) < 0)
        child_fail(c, STEP_STDIO, errno);
    if (null > 2) close(null);
    if (c->log_fd > 2) close(c->log_fd);
    umask(022);
    set_title(c->title, c->title_len);
    mb__init_main(c->listen_fd, c->sync_fd, c->cf);
    child_fail(c, STEP_INIT, EIO);
}

int mb__launch_clone(const mb__clone_req *r, const mb__confine *cf, char *title,
                     size_t title_len, pid_t *pid_out, int *pidfd_out, mb_err *err)
{
    mb__plan *plan = NULL;
    int rc = mb__plan_build(r->opts, &r->lim, r->root, r->hostname, &plan, err);
    if (rc) return rc;
    child_ctx c = {
        .plan = plan,
        .sync_fd = r->sync_fd,
        .listen_fd = r->listen_fd,
        .log_fd = r->log_fd,
        .hostname = r->hostname,
        .own_net = !r->opts->allow_network,
        .cf = cf,
        .title = title,
        .title_len = title_len,
    };
    if ((rc = mb__cg_open_self_join(r->name, c.cg_fds, &c.n_cg, err))) {
        mb__plan_free(plan);
        return rc;
    }
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
                          CLONE_NEWUTS | CLONE_PIDFD | SIGCHLD;
    if (!r->opts->allow_network) flags |= CLONE_NEWNET;
    int pidfd = -1;
    long pid = syscall(SYS_clone, flags, NULL, &pidfd, NULL, 0);
    if (pid == 0) child_main(&c);
    int e = errno;
    for (int i = 0; i < c.n_cg; i++) close(c.cg_fds[i]);
    mb__plan_free(plan);
    if (pid < 0) return mb_err_sys(err, e, "cannot clone the sandbox init");
    *pid_out = (pid_t)pid;
    *pidfd_out = pidfd;
    return 0;
}

/* =========================================================== parent half */

static int write_map(pid_t pid, const char *which, uint32_t base, mb_err *err)
{
    char path[64], line[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, which);
    int len = snprintf(line, sizeof line, "0 %u %u\n", base, MB_SANDBOX_UID_RANGE);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return mb_err_sys(err, errno, "cannot open %s", path);
    ssize_t n = write(fd, line, (size_t)len);
    int e = errno;
    close(fd);
    if (n != len) return mb_err_sys(err, n < 0 ? e : EIO, "cannot write %s", path);
    return 0;
}

/* Kills the half-started child and waits until it is gone (reaping it if it
 * is ours; the zygote reaps its own). */
static void abort_child(int pidfd, int is_child)
{
    (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    if (is_child) {
        siginfo_t si;
        while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) != 0 && errno == EINTR) {
        }
        return;
    }
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    int64_t deadline = mb_mono_ms() + ABORT_WAIT_MS;
    while (mb_mono_ms() < deadline) {
        int r = poll(&p, 1, (int)(deadline - mb_mono_ms()));
        if (r > 0 || (r < 0 && errno != EINTR)) break;
    }
}

/* Waits for the child's verdict on sync: 0 when it is ready. */
static int wait_ready(int fd, const char *bin, mb_err *err)
{
    char buf[FAIL_MAX + 1];
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int64_t deadline = mb_mono_ms() + READY_TIMEOUT_MS;
    ssize_t n = -1;
    for (;;) {
        int64_t left = deadline - mb_mono_ms();
        if (left <= 0)
            return mb_err_set(err, MB_ETIMEOUT, "the sandbox init did not start within %d ms",
                              READY_TIMEOUT_MS);
        int r = poll(&pf, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return mb_err_sys(err, errno, "poll");
        if (r == 0) continue;
        n = recv(fd, buf, sizeof buf - 1, 0);
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    if (n > 0 && buf[0] == 'R') return 0;
    if (n >= (ssize_t)sizeof(sync_fail) && buf[0] == 'F') {
        sync_fail f;
        memcpy(&f, buf, sizeof f);
        buf[n] = '\0';
        const char *what = n > (ssize_t)sizeof f ? buf + sizeof f : "set it up";
        return mb_err_sys(err, f.err, "sandbox setup failed: cannot %s", what);
    }
    if (n > 1 && buf[0] == 'E') {
        buf[n] = '\0';
        return mb_err_set(err, MB_EIO, "the sandbox init failed: %s", buf + 1);
    }
    return mb_err_set(err, MB_EIO,
                      "the sandbox init exited during start-up (is %s a working mcpbox "
                      "binary?)",
                      bin);
}

int mb__launch(const mb__launch_args *a, pid_t *pid_out, int *pidfd_out, int *is_child,
               mb_err *err)
{
    if (!a->opts->zygote)
        return mb_err_set(err, MB_EINVAL, "a sandbox is created through a zygote "
                                          "(mb_zygote_start), and none was given");
    char *log_path = mb_asprintf("%s/" MB__LOG_NAME, a->opts->state_dir);
    int log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    free(log_path);
    if (log_fd < 0)
        return mb_err_sys(err, errno, "cannot create the init's log in %s", a->opts->state_dir);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        close(log_fd);
        return mb_err_sys(err, errno, "socketpair");
    }
    mb__clone_req req = {.opts = a->opts, .lim = *a->lim, .root = a->root,
                         .hostname = a->hostname, .name = a->name, .sync_fd = sv[1],
                         .listen_fd = a->listen_fd, .log_fd = log_fd};
    pid_t pid = -1;
    int pidfd = -1;
    int rc = mb__zygote_clone(a->opts->zygote, &req, &pid, &pidfd, is_child, err);
    close(sv[1]);
    close(log_fd);
    if (rc) {
        close(sv[0]);
        return rc;
    }
    if ((rc = write_map(pid, "uid_map", a->opts->uid_base, err)) ||
        (rc = write_map(pid, "gid_map", a->opts->uid_base, err)) ||
        (rc = mb__cg_attach(a->name, pid, 0, err)))
        goto fail;
    char go = 'G';
    if (send(sv[0], &go, 1, MSG_NOSIGNAL) != 1) {
        rc = mb_err_sys(err, errno, "cannot start the sandbox init");
        goto fail;
    }
    if ((rc = wait_ready(sv[0], a->opts->mcpbox_bin, err))) goto fail;
    close(sv[0]);
    *pid_out = pid;
    *pidfd_out = pidfd;
    return 0;
fail:
    abort_child(pidfd, *is_child);
    close(pidfd);
    close(sv[0]);
    return rc;
}
