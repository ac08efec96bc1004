/*
 * shepherd.c - one supervisor per process started inside a sandbox.
 *
 * The init forks a shepherd for every SPAWN request and hands it the
 * request's connection. The shepherd
 *   - makes itself a child subreaper, so that everything the command starts
 *     and abandons is re-parented to it, not to the init: the command's
 *     whole process tree stays findable (even after setsid or double forks);
 *   - starts the command: new session, stdio from the request, cwd, then
 *     no_new_privs + capabilities + seccomp (confine.c), then execvp; an exec
 *     failure comes back in the memory the clone shares with the shepherd
 *     until its exec, and is reported as ERROR.
 *     The command is a clone that shares the shepherd's memory until its
 *     exec (CLONE_VM | CLONE_VFORK, on a stack of its own; the shepherd is
 *     single-threaded and waits meanwhile), not a fork: a fork would copy
 *     the shepherd's page tables only for the exec to throw them away, a
 *     good part of a server start's cost (docs/PERFORMANCE.md);
 *   - answers SPAWNED (child id, pid), then EXIT (wait status) when the
 *     command ends;
 *   - obeys KILL (the group, or the whole tree) from the connection, and
 *     kill-by-id requests relayed by the init as SIGUSR1 with the signal
 *     number as payload (accepted from the init only);
 *   - when the connection closes (the daemon is done, or died), SIGKILLs the
 *     tree, reaps it and exits.
 *
 * A server spawned with a life line (MB__SPAWN_LIFELINE) gets no shepherd:
 * the init starts it with mb__cmd_start and watches the life line itself
 * (init.c, handle_server).
 *
 * The shepherd runs our code with the init's full capabilities, but nothing
 * inside the sandbox can reach it except by signals: a process that kills its
 * own shepherd takes itself down too (PR_SET_PDEATHSIG), and whatever it
 * started is then re-parented to the init and dies with the sandbox.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int mb__close_fds_except(const int *keep, int n)
{
    /* No qsort: this also runs in the clone child, where only system calls
     * are safe. Insertion sort of at most 8 numbers. */
    int k[8];
    int m = 0;
    for (int i = 0; i < n && m < 8; i++) {
        if (keep[i] < 3) continue;
        int j = m++;
        while (j > 0 && k[j - 1] > keep[i]) {
            k[j] = k[j - 1];
            j--;
        }
        k[j] = keep[i];
    }
    unsigned lo = 3;
    for (int i = 0; i < m; i++) {
        if ((unsigned)k[i] > lo && syscall(SYS_close_range, lo, (unsigned)k[i] - 1, 0u) != 0)
            return -errno;
        lo = (unsigned)k[i] + 1;
    }
    return syscall(SYS_close_range, lo, ~0u, 0u) == 0 ? 0 : -errno;
}

/* ------------------------------------------------------ the process tree */

/* Every pid of this pid namespace whose parent chain reaches `root`, and,
 * with sid > 0, every one in session sid as well. */
int mb__tree_pids(pid_t root, pid_t sid, pid_t **out)
{
    pid_t *pids = NULL, *ppids = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir("/proc");
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!isdigit((unsigned char)de->d_name[0])) continue;
            char path[300], buf[512];
            snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            ssize_t len = read(fd, buf, sizeof buf - 1);
            close(fd);
            if (len <= 0) continue;
            buf[len] = '\0';
            char *rp = strrchr(buf, ')');
            if (!rp) continue;
            char state;
            int ppid, pgrp, session;
            if (sscanf(rp + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) != 4) continue;
            if (sid > 0 && session == sid) ppid = root; /* counts as a child */
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                pids = mb_realloc(pids, cap * sizeof *pids);
                ppids = mb_realloc(ppids, cap * sizeof *ppids);
            }
            pids[n] = (pid_t)atoi(de->d_name);
            ppids[n] = (pid_t)ppid;
            n++;
        }
        closedir(d);
    }
    /* Mark: repeat until no change (trees are shallow). */
    char *in = mb_calloc(n ? n : 1, 1);
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            if (in[i]) continue;
            int hit = ppids[i] == root;
            for (size_t j = 0; !hit && j < n; j++) hit = in[j] && pids[j] == ppids[i];
            if (hit) in[i] = changed = 1;
        }
    }
    pid_t *res = mb_malloc((n ? n : 1) * sizeof *res);
    int k = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i]) res[k++] = pids[i];
    free(in);
    free(pids);
    free(ppids);
    *out = res;
    return k;
}

typedef struct shep {
    int conn;
    pid_t cmd;       /* the command's pid, 0 once reaped */
    int exit_sent;
    int64_t child_id;
} shep;

static void reap(shep *s)
{
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        if (p == s->cmd) {
            s->cmd = 0;
            if (!s->exit_sent) {
                (void)mb__msg_send_simple(s->conn, MB__MSG_EXIT, 0, st, 0);
                s->exit_sent = 1;
            }
        }
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Signals the command's group and every descendant. With SIGKILL, repeats
 * until the tree is empty (orphans come back to us as we kill their parents). */
static void signal_tree(shep *s, int sig)
{
    if (s->cmd) kill(-s->cmd, sig);
    for (int round = 0; round < 2000; round++) {
        pid_t *pids;
        int n = mb__tree_pids(getpid(), 0, &pids);
        for (int i = 0; i < n; i++) kill(pids[i], sig);
        free(pids);
        if (sig != SIGKILL || n == 0) break;
        reap(s);
        sleep_ms(round < 20 ? 1 : 5);
        reap(s);
    }
}

static void deliver(shep *s, int sig, int tree)
{
    if (sig <= 0 || sig >= NSIG) return;
    if (tree || sig == SIGKILL) signal_tree(s, sig);
    else if (s->cmd) kill(-s->cmd, sig);
}

/* ------------------------------------------------------------ the command */

typedef struct cmd_args {
    char *cwd;
    char **argv;
    char **envp;
    int stdio[3]; /* -1 = /dev/null */
    int *report;  /* {stage, errno} of a failure, in the caller's frame */
    pid_t shepherd;
    const mb__confine *cf;
} cmd_args;

static void cmd_fail(const cmd_args *a, int stage, int e) __attribute__((noreturn));
static void cmd_fail(const cmd_args *a, int stage, int e)
{
    /* the parent resumes once we are gone (CLONE_VFORK) and reads this */
    a->report[0] = stage;
    a->report[1] = e;
    _exit(127);
}

enum { STAGE_SETUP = 1, STAGE_CWD, STAGE_CONFINE, STAGE_EXEC };

/* Not instrumented by AddressSanitizer (test builds): it runs on the
 * clone's stack, which the sanitizer does not know, and its check before a
 * call that does not return (cmd_fail) would take that for an overflow. */
static void cmd_main(const cmd_args *a) __attribute__((noreturn, no_sanitize_address));
static void cmd_main(const cmd_args *a)
{
    /* exec resets caught signals; of ignored ones, which it keeps, the
     * init (and so its forks) has SIGPIPE alone (init.c). */
    sigset_t none;
    sigemptyset(&none);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (setsid() < 0) cmd_fail(a, STAGE_SETUP, errno);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) cmd_fail(a, STAGE_SETUP, errno);
    if (getppid() != a->shepherd) _exit(127);

    for (int i = 0; i < 3; i++) {
        int fd = a->stdio[i];
        if (fd < 0) fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0 || dup2(fd, i) < 0) cmd_fail(a, STAGE_SETUP, errno);
    }
    int rc = mb__close_fds_except(NULL, 0);
    if (rc) cmd_fail(a, STAGE_SETUP, -rc);
    if (chdir(a->cwd) != 0) cmd_fail(a, STAGE_CWD, errno);
    umask(022);
    if ((rc = mb__confine_apply(a->cf)) != 0) cmd_fail(a, STAGE_CONFINE, -rc);
    environ = a->envp;
    execvp(a->argv[0], a->argv);
    cmd_fail(a, STAGE_EXEC, errno);
}

static int cmd_entry(void *arg)
{
    cmd_main(arg);
}

/* The command's stack while it shares our memory (execvp and the sanitizers'
 * frames included). One for the process, reused by every start: the caller
 * (an init or a shepherd) is single-threaded and blocked until the exec, and
 * a stack mapped and unmapped per start cost page faults and a TLB flush
 * each time, expensive on a virtual machine with shadow page tables. */
#define CMD_STACK (256u << 10)
static char cmd_stack[CMD_STACK] __attribute__((aligned(64)));

static void fail_and_exit(int conn, int e, const char *what) __attribute__((noreturn));
static void fail_and_exit(int conn, int e, const char *what)
{
    (void)mb__msg_send_error(conn, e, what);
    _exit(0);
}

int mb__cmd_start(mb__msg *m, const mb__confine *cf, pid_t *out, char *what, size_t cap)
{
    /* The request: strs = cwd, argv[argc], envp[envc]. */
    int64_t argc = m->h.a, envc = m->h.b;
    if (argc < 1 || envc < 0 || (uint64_t)(1 + argc + envc) != m->h.nstr) {
        snprintf(what, cap, "malformed spawn request");
        return EPROTO;
    }
    cmd_args a;
    memset(&a, 0, sizeof a);
    a.cwd = m->strs[0][0] ? m->strs[0] : (char *)MB_SANDBOX_DATA_PATH;
    a.argv = mb_calloc((size_t)argc + 1, sizeof(char *));
    for (int64_t i = 0; i < argc; i++) a.argv[i] = m->strs[1 + i];
    a.envp = mb_calloc((size_t)envc + 1, sizeof(char *));
    for (int64_t i = 0; i < envc; i++) a.envp[i] = m->strs[1 + argc + i];
    int k = 0;
    for (int i = 0; i < 3; i++)
        a.stdio[i] = (m->h.flags & (1u << i)) && k < m->nfds ? m->fds[k++] : -1;
    a.cf = cf;
    a.shepherd = getpid();

    int e = 0;
    volatile int report[2] = {0, 0};
    a.report = (int *)report;
    /* returns once the command exec'd or failed (CLONE_VFORK) */
    pid_t pid = clone(cmd_entry, cmd_stack + CMD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
    if (pid < 0) {
        e = errno;
        snprintf(what, cap, "clone");
        goto out;
    }
    if (report[0]) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        switch (report[0]) {
        case STAGE_CWD: snprintf(what, cap, "cannot enter %s", a.cwd); break;
        case STAGE_CONFINE: snprintf(what, cap, "cannot confine the process"); break;
        case STAGE_EXEC: snprintf(what, cap, "cannot run %s", a.argv[0]); break;
        default: snprintf(what, cap, "cannot set up the process"); break;
        }
        e = report[1] ? report[1] : EIO;
    }
out:
    free(a.argv);
    free(a.envp);
    if (!e) *out = pid;
    return e;
}

void mb__shepherd_main(int conn, mb__msg *m, int64_t child_id, const mb__confine *cf)
{
    int keep[4] = {conn, m->fds[0], m->fds[1], m->fds[2]};
    (void)mb__close_fds_except(keep, 4);
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
    (void)prctl(PR_SET_NAME, "mcpbox-shepherd");

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) fail_and_exit(conn, errno, "signalfd");

    char what[600];
    pid_t pid;
    int e = mb__cmd_start(m, cf, &pid, what, sizeof what);
    if (e) fail_and_exit(conn, e, what);
    for (int i = 0; i < 3; i++)
        if (m->fds[i] >= 0) {
            close(m->fds[i]);
            m->fds[i] = -1;
        }

    shep s = {.conn = conn, .cmd = pid, .child_id = child_id};
    (void)mb__msg_send_simple(conn, MB__MSG_SPAWNED, 0, child_id, pid);
    for (;;) {
        struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN}, {.fd = s.conn, .events = POLLIN}};
        int r = poll(pf, 2, -1);
        if (r < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                if (si.ssi_signo == SIGCHLD) reap(&s);
                else if (si.ssi_signo == SIGUSR1 && si.ssi_pid == 1 && si.ssi_code == SI_QUEUE)
                    deliver(&s, si.ssi_int, 0);
            }
        }
        if (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            mb__msg msg;
            int rc = mb__msg_recv(conn, &msg, 0);
            if (rc == -ETIMEDOUT) continue;
            if (rc) break; /* closed or broken: take the tree down */
            if (msg.h.type == MB__MSG_KILL) deliver(&s, (int)msg.h.a, (msg.h.flags & MB__KILL_TREE) != 0);
            else if (msg.h.type == MB__MSG_PING)
                (void)mb__msg_send_simple(conn, MB__MSG_PONG, 0, MB__PROTO_VERSION, s.cmd ? 1 : 0);
            mb__msg_free(&msg);
        }
    }
    signal_tree(&s, SIGKILL);
    reap(&s);
    _exit(0);
}
