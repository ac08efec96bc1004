/*
 * launch.c - starting a sandbox's init: clone into new namespaces, map ids,
 * join the cgroup, assemble the root, exec `mcpbox sandbox-init`.
 *
 * Sequence (P = the calling daemon thread, C = the clone child):
 *
 *   P  socketpair(sync); clone(NEWUSER|NEWNS|NEWPID|NEWIPC|NEWUTS[|NEWNET],
 *      CLONE_PIDFD)
 *   C  closes every fd but sync, the control socket and the log; waits on sync
 *   P  writes uid_map/gid_map ("0 uid_base 65536"), moves C into the cgroup,
 *      sends "go"
 *   C  becomes root inside (setresgid/setgroups/setresuid), unshares the
 *      cgroup namespace (so the cgroup it was just put in is its root), sets
 *      the hostname, brings lo up, runs the root plan, pivots, execs
 *      /.mcpbox/mcpbox sandbox-init --ctl-fd N --status-fd M
 *   init  listens on the control socket and sends "ready" on sync
 *   P  returns; a setup failure arrives instead as (step, errno).
 *
 * C is a copy of a multi-threaded process, so until execve it only makes
 * raw system calls: no malloc, no stdio, and the credential changes go
 * through syscall(2) directly because glibc's wrappers would try to
 * broadcast them to threads that do not exist in the child.
 *
 * The cgroup is joined before C runs any code of its own, so every process
 * of the sandbox is accounted from the start. No parent-death signal is set
 * on C: the init must outlive a daemon crash so that it can be adopted; if
 * the daemon dies before "go", C sees EOF on sync and exits.
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

/* Steps outside the plan, reported as negative numbers. */
enum {
    STEP_GO = -1,
    STEP_CREDS = -2,
    STEP_CGROUPNS = -3,
    STEP_HOSTNAME = -4,
    STEP_LOOPBACK = -5,
    STEP_STDIO = -6,
    STEP_EXEC = -7,
};

/* Messages on the sync channel from the child (and then the init). */
typedef struct sync_fail {
    char tag; /* 'F' */
    int32_t step;
    int32_t err;
} sync_fail;

typedef struct child_ctx {
    mb__plan *plan;
    int sync_fd;
    int listen_fd;
    int log_fd;
    const char *hostname;
    size_t hostname_len;
    int own_net;
    char *const *argv;
    char *const *envp;
} child_ctx;

static void child_fail(const child_ctx *c, int step, int err) __attribute__((noreturn));
static void child_fail(const child_ctx *c, int step, int err)
{
    sync_fail f = {.tag = 'F', .step = step, .err = err};
    (void)send(c->sync_fd, &f, sizeof f, MSG_NOSIGNAL);
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

static void child_main(child_ctx *c) __attribute__((noreturn));
static void child_main(child_ctx *c)
{
    int keep[3] = {c->sync_fd, c->listen_fd, c->log_fd};
    int rc = mb__close_fds_except(keep, 3);
    if (rc) child_fail(c, STEP_GO, -rc);
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
    if (sethostname(c->hostname, c->hostname_len) != 0) child_fail(c, STEP_HOSTNAME, errno);
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
    if (fcntl(c->sync_fd, F_SETFD, 0) != 0 || fcntl(c->listen_fd, F_SETFD, 0) != 0)
        child_fail(c, STEP_STDIO, errno);
    umask(022);
    execve(MB_SANDBOX_MCPBOX_PATH, c->argv, c->envp);
    child_fail(c, STEP_EXEC, errno);
}

static const char *step_name(const mb__plan *plan, int step)
{
    switch (step) {
    case STEP_GO: return "wait for the parent";
    case STEP_CREDS: return "become root in the user namespace";
    case STEP_CGROUPNS: return "create the cgroup namespace";
    case STEP_HOSTNAME: return "set the hostname";
    case STEP_LOOPBACK: return "bring up loopback";
    case STEP_STDIO: return "set up stdio";
    case STEP_EXEC: return "exec " MB_SANDBOX_MCPBOX_PATH " sandbox-init";
    default: return mb__plan_step_name(plan, step);
    }
}

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

/* Kills and reaps the half-started child. */
static void abort_child(pid_t pid, int pidfd)
{
    (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    siginfo_t si;
    while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) != 0 && errno == EINTR) {
    }
    (void)pid;
}

static char **init_env(void)
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

static void free_strv(char **v)
{
    if (!v) return;
    for (char **p = v; *p; p++) free(*p);
    free(v);
}

int mb__launch(const mb__launch_args *a, pid_t *pid_out, int *pidfd_out, mb_err *err)
{
    mb__plan *plan = NULL;
    int rc = mb__plan_build(a->opts, a->lim, a->root, a->hostname, &plan, err);
    if (rc) return rc;

    char *log_path = mb_asprintf("%s/" MB__LOG_NAME, a->opts->state_dir);
    int log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    free(log_path);
    if (log_fd < 0) {
        mb__plan_free(plan);
        return mb_err_sys(err, errno, "cannot create the init's log in %s", a->opts->state_dir);
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        close(log_fd);
        mb__plan_free(plan);
        return mb_err_sys(err, errno, "socketpair");
    }
    char fdarg[2][16];
    snprintf(fdarg[0], sizeof fdarg[0], "%d", a->listen_fd);
    snprintf(fdarg[1], sizeof fdarg[1], "%d", sv[1]);
    char *argv[] = {"mcpbox", "sandbox-init", "--ctl-fd", fdarg[0], "--status-fd", fdarg[1], NULL};
    char **envp = init_env();
    child_ctx c = {
        .plan = plan,
        .sync_fd = sv[1],
        .listen_fd = a->listen_fd,
        .log_fd = log_fd,
        .hostname = a->hostname,
        .hostname_len = strlen(a->hostname),
        .own_net = !a->opts->allow_network,
        .argv = argv,
        .envp = envp,
    };
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
                          CLONE_NEWUTS | CLONE_PIDFD | SIGCHLD;
    if (!a->opts->allow_network) flags |= CLONE_NEWNET;
    int pidfd = -1;
    long pid = syscall(SYS_clone, flags, NULL, &pidfd, NULL, 0);
    if (pid == 0) child_main(&c);
    int clone_errno = errno;
    close(sv[1]);
    close(log_fd);
    free_strv(envp);
    if (pid < 0) {
        close(sv[0]);
        mb__plan_free(plan);
        return mb_err_sys(err, clone_errno, "cannot clone the sandbox init");
    }

    if ((rc = write_map((pid_t)pid, "uid_map", a->opts->uid_base, err)) ||
        (rc = write_map((pid_t)pid, "gid_map", a->opts->uid_base, err)) ||
        (rc = mb__cg_attach(a->name, (pid_t)pid, err))) {
        abort_child((pid_t)pid, pidfd);
        close(pidfd);
        close(sv[0]);
        mb__plan_free(plan);
        return rc;
    }
    char go = 'G';
    if (send(sv[0], &go, 1, MSG_NOSIGNAL) != 1) {
        rc = mb_err_sys(err, errno, "cannot start the sandbox init");
        goto fail;
    }

    char buf[MB_ERR_MSG_MAX];
    struct pollfd pf = {.fd = sv[0], .events = POLLIN};
    int64_t deadline = mb_mono_ms() + READY_TIMEOUT_MS;
    ssize_t n = -1;
    for (;;) {
        int64_t left = deadline - mb_mono_ms();
        if (left <= 0) {
            rc = mb_err_set(err, MB_ETIMEOUT, "the sandbox init did not start within %d ms",
                            READY_TIMEOUT_MS);
            goto fail;
        }
        int r = poll(&pf, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = mb_err_sys(err, errno, "poll");
            goto fail;
        }
        if (r == 0) continue;
        n = recv(sv[0], buf, sizeof buf - 1, 0);
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    if (n > 0 && buf[0] == 'R') {
        close(sv[0]);
        mb__plan_free(plan);
        *pid_out = (pid_t)pid;
        *pidfd_out = pidfd;
        return 0;
    }
    if (n >= (ssize_t)sizeof(sync_fail) && buf[0] == 'F') {
        sync_fail f;
        memcpy(&f, buf, sizeof f);
        rc = mb_err_sys(err, f.err, "sandbox setup failed: cannot %s", step_name(plan, f.step));
    } else if (n > 1 && buf[0] == 'E') {
        buf[n] = '\0';
        rc = mb_err_set(err, MB_EIO, "the sandbox init failed: %s", buf + 1);
    } else {
        rc = mb_err_set(err, MB_EIO,
                        "the sandbox init exited during start-up (is %s a working mcpbox "
                        "binary?)",
                        a->opts->mcpbox_bin);
    }
fail:
    abort_child((pid_t)pid, pidfd);
    close(pidfd);
    close(sv[0]);
    mb__plan_free(plan);
    return rc;
}
