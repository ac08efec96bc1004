/*
 * proc.c - fork/exec a child, collect its output, enforce a timeout (see proc.h).
 *
 * Design: three CLOEXEC pipes (stdout, stderr, and an exec-status pipe on which
 * the child writes errno if execvp fails) and a pidfd, all in one poll() loop,
 * so that neither output draining nor the timeout needs a thread or a busy wait.
 */
#define _GNU_SOURCE
#include "servers/common/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_MAX_OUTPUT ((size_t)64 << 20)

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

void mb_proc_result_free(mb_proc_result *res)
{
    if (!res) return;
    mb_buf_free(&res->out);
    mb_buf_free(&res->err);
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* In the child: every inherited descriptor above 2 closes on exec. */
static void cloexec_all_from(int lowfd)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (int fd = lowfd; fd < max; fd++) {
        int fl = fcntl(fd, F_GETFD);
        if (fl >= 0) fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
    }
}

static void child(const mb_proc_spec *spec, int out_w, int err_w, int status_w)
{
    /* Default signal handling for the program we are about to run. */
    struct sigaction sa = {.sa_handler = SIG_DFL};
    for (int s = 1; s < NSIG; s++) sigaction(s, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (spec->kill_group) setpgid(0, 0);

    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) goto fail;
    cloexec_all_from(3);
    if (spec->cwd && chdir(spec->cwd) != 0) goto fail;
    if (spec->envp) environ = (char **)spec->envp;
    execvp(spec->argv[0], (char *const *)spec->argv);
fail:;
    int e = errno;
    ssize_t w = write(status_w, &e, sizeof e);
    (void)w;
    _exit(127);
}

static void append_capped(mb_buf *b, const char *data, size_t n, size_t cap, int *truncated)
{
    if (b->len >= cap) {
        if (n) *truncated = 1;
        return;
    }
    size_t room = cap - b->len;
    if (n > room) {
        *truncated = 1;
        n = room;
    }
    mb_buf_append(b, data, n);
}

int mb_proc_run(const mb_proc_spec *spec, mb_proc_result *res, mb_err *err)
{
    memset(res, 0, sizeof *res);
    mb_buf_puts(&res->out, "");
    mb_buf_puts(&res->err, "");
    size_t cap = spec->max_output ? spec->max_output : DEFAULT_MAX_OUTPUT;
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, stp[2] = {-1, -1};
    if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC) || pipe2(stp, O_CLOEXEC)) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (outp[i] >= 0) close(outp[i]);
            if (errp[i] >= 0) close(errp[i]);
            if (stp[i] >= 0) close(stp[i]);
        }
        return mb_err_sys(err, e, "cannot create pipes for a child process");
    }
    int64_t start = mb_mono_ms();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(outp[0]), close(outp[1]), close(errp[0]), close(errp[1]), close(stp[0]),
            close(stp[1]);
        return mb_err_sys(err, e, "cannot fork a child process");
    }
    if (pid == 0) child(spec, outp[1], errp[1], stp[1]);
    close(outp[1]);
    close(errp[1]);
    close(stp[1]);

    /* The exec-status pipe reaches EOF at exec (success) or carries errno. */
    int e = 0;
    ssize_t n;
    do n = read(stp[0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(stp[0]);
    if (n == (ssize_t)sizeof e) res->spawn_errno = e ? e : EIO;

    int pidfd = pidfd_open_compat(pid);
    /* The cancellation may already sit in the caller's input buffer (it can arrive
     * in the same read as the request), where poll() cannot see it: ask once now,
     * and again at least every 500 ms. */
    int watching = spec->cancelled && spec->watch_fd >= 0;
    int stop_now = watching && spec->cancelled(spec->ctx);
    int64_t next_ask = mb_mono_ms() + 500;
    int fds[2] = {outp[0], errp[0]};
    int reaped = 0, status = 0, killed = 0;
    char chunk[65536];
    for (;;) {
        if (!reaped) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) reaped = 1;
        }
        if (watching && !stop_now && mb_mono_ms() >= next_ask) {
            stop_now = spec->cancelled(spec->ctx);
            next_ask = mb_mono_ms() + 500;
        }
        if (stop_now) {
            res->cancelled = 1;
            kill(spec->kill_group ? -pid : pid, SIGKILL);
            killed = 1;
            break;
        }
        if (fds[0] < 0 && fds[1] < 0 && reaped) break;

        int timeout = -1;
        if (spec->timeout_ms > 0 && !killed) {
            int64_t left = start + spec->timeout_ms - mb_mono_ms();
            if (left <= 0) {
                res->timed_out = 1;
                kill(spec->kill_group ? -pid : pid, SIGKILL);
                killed = 1;
                break;
            }
            timeout = left > INT_MAX ? INT_MAX : (int)left;
        }
        struct pollfd pfd[4];
        int np = 0, idx[4];
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0) {
                pfd[np] = (struct pollfd){.fd = fds[i], .events = POLLIN};
                idx[np++] = i;
            }
        if (!reaped) {
            if (pidfd >= 0) {
                pfd[np] = (struct pollfd){.fd = pidfd, .events = POLLIN};
                idx[np++] = 2;
            } else if (timeout < 0 || timeout > 20) {
                timeout = 20; /* no pidfd: poll the child's exit every 20 ms */
            }
        }
        if (watching) {
            pfd[np] = (struct pollfd){.fd = spec->watch_fd, .events = POLLIN};
            idx[np++] = 3;
            if (timeout < 0 || timeout > 500) timeout = 500;
        }
        int r = poll(pfd, (nfds_t)np, timeout);
        if (r < 0) {
            if (errno == EINTR) continue;
            break;
        }
        int stop = 0;
        for (int k = 0; k < np; k++) {
            if (!pfd[k].revents || idx[k] == 2) continue;
            if (idx[k] == 3) {
                if (spec->cancelled(spec->ctx)) stop = 1;
                continue;
            }
            int i = idx[k];
            n = read(fds[i], chunk, sizeof chunk);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n <= 0) {
                close(fds[i]);
                fds[i] = -1;
                continue;
            }
            int *trunc = i == 0 ? &res->out_truncated : &res->err_truncated;
            append_capped(i == 0 ? &res->out : &res->err, chunk, (size_t)n, cap, trunc);
            if (*trunc) {
                res->overflowed = 1;
                if (spec->kill_on_overflow && !killed) {
                    kill(pid, SIGTERM);
                    killed = 1;
                }
            }
        }
        if (killed && res->overflowed) break;
        if (stop) {
            res->cancelled = 1;
            kill(spec->kill_group ? -pid : pid, SIGKILL);
            killed = 1;
            break;
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0) close(fds[i]);
    if (!reaped) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    if (pidfd >= 0) close(pidfd);
    res->elapsed_ms = mb_mono_ms() - start;
    if (WIFEXITED(status)) {
        res->exited = 1;
        res->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->term_signal = WTERMSIG(status);
        res->exit_code = 128 + res->term_signal;
    }
    if (res->spawn_errno) res->exit_code = res->spawn_errno == ENOENT ? 127 : 126;
    return MB_OK;
}
