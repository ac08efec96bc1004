/*
 * exec.c - the daemon's side of running processes in a sandbox: spawn (a
 * long-lived process whose pipes the caller keeps), exec (run to completion
 * with captured output, a timeout and an output cap), and the mb_child
 * operations.
 *
 * Every process gets its own connection to the init, which hands it to a
 * shepherd (shepherd.c); that connection is mb_child.ctl_fd. The pipes are
 * created here, on the host, and their far ends travel to the sandbox as
 * SCM_RIGHTS, so the bytes never pass through the init.
 *
 * A server (mb_sandbox_spawn_server) costs the daemon one descriptor
 * instead of four: stdin and stdout are one socketpair, stderr goes where
 * the caller says (a file), and the connection is dropped once the process
 * runs, its shepherd watching the socket as the life line instead. A
 * thousand sandboxes with six servers each then fit in a few thousand
 * descriptors.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPAWN_REPLY_TIMEOUT_MS 30000
#define EXIT_AFTER_KILL_MS 5000
#define DRAIN_AFTER_EXIT_MS 250
#define DEFAULT_OUTPUT_CAP (1u << 20)
#define FLOOD_FACTOR 16

static const char *const default_env[] = {"PATH=" MB_SANDBOX_DEFAULT_PATH, "HOME=/tmp",
                                          "LANG=C.UTF-8", NULL};

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static int map_spawn_errno(int e, const char *what, mb_err *err)
{
    int code;
    switch (e) {
    case ENOENT: code = MB_ENOTFOUND; break;
    case EACCES:
    case EPERM:
    case ENOEXEC:
    case ENOTDIR:
    case EISDIR: code = MB_EDENIED; break;
    case EAGAIN:
    case ENOMEM: code = MB_EBUSY; break;
    default: code = MB_EIO; break;
    }
    return mb_err_set(err, code, "%s: %s", what, strerror(e));
}

/* Spawn with the sandbox reference already held. server_err: -2 for an
 * ordinary spawn, else a server spawn (mb_sandbox_spawn_server) with that
 * stderr fd; its socket end comes back in c->in_fd == c->out_fd and the
 * control connection is closed once the process runs. */
static int spawn_locked(mb_sandbox *sb, const mb_spawn_spec *spec, int server_err, mb_child *c,
                        mb_err *err)
{
    memset(c, 0, sizeof *c);
    c->in_fd = c->out_fd = c->err_fd = c->ctl_fd = -1;
    if (!spec || !spec->argv || !spec->argv[0] || !spec->argv[0][0])
        return mb_err_set(err, MB_EINVAL, "nothing to run: argv is empty");

    int far[3] = {-1, -1, -1}; /* the child's ends */
    int nfds = 0, sendfds[3];
    uint32_t flags = 0;
    int rc = 0;
    if (server_err != -2) {
        if (spec->stdio)
            return mb_err_set(err, MB_EINVAL, "a server's stdio is its socket, not given fds");
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
            return mb_err_sys(err, errno, "cannot create a socket pair");
        c->in_fd = c->out_fd = sv[0];
        far[0] = sv[1];
        flags = MB__SPAWN_FD0 | MB__SPAWN_FD1 | MB__SPAWN_LIFELINE;
        sendfds[nfds++] = sv[1];
        sendfds[nfds++] = sv[1];
        if (server_err >= 0) {
            flags |= MB__SPAWN_FD2;
            sendfds[nfds++] = server_err;
        }
    } else if (spec->stdio) {
        for (int i = 0; i < 3; i++)
            if (spec->stdio[i] >= 0) {
                flags |= 1u << i;
                sendfds[nfds++] = spec->stdio[i];
            }
    } else {
        int p[3][2];
        for (int i = 0; i < 3; i++) {
            if (pipe2(p[i], O_CLOEXEC) != 0) {
                rc = mb_err_sys(err, errno, "cannot create a pipe");
                for (int j = 0; j < i; j++) {
                    close(p[j][0]);
                    close(p[j][1]);
                }
                return rc;
            }
        }
        far[0] = p[0][0];
        c->in_fd = p[0][1];
        far[1] = p[1][1];
        c->out_fd = p[1][0];
        far[2] = p[2][1];
        c->err_fd = p[2][0];
        flags = MB__SPAWN_FD0 | MB__SPAWN_FD1 | MB__SPAWN_FD2;
        for (int i = 0; i < 3; i++) sendfds[nfds++] = far[i];
    }

    const char *const *envp = spec->envp ? spec->envp : default_env;
    size_t argc = 0, envc = 0;
    while (spec->argv[argc]) argc++;
    while (envp[envc]) envc++;
    const char **strs = mb_calloc(1 + argc + envc, sizeof *strs);
    strs[0] = spec->cwd ? spec->cwd : "";
    for (size_t i = 0; i < argc; i++) strs[1 + i] = spec->argv[i];
    for (size_t i = 0; i < envc; i++) strs[1 + argc + i] = envp[i];
    mb__msg_hdr h = {.type = MB__MSG_SPAWN, .flags = flags, .a = (int64_t)argc,
                     .b = (int64_t)envc, .nstr = (uint32_t)(1 + argc + envc)};

    rc = mb__sb_connect(sb, &c->ctl_fd, err);
    if (!rc) {
        int r = mb__msg_send(c->ctl_fd, &h, strs, sendfds, nfds);
        if (r == -E2BIG || r == -EMSGSIZE)
            rc = mb_err_set(err, MB_ETOOBIG, "the command line and environment exceed %u bytes",
                            MB__MSG_MAX);
        else if (r)
            rc = mb_err_set(err, MB_EIO, "cannot reach sandbox %s: %s", sb->id, strerror(-r));
    }
    free(strs);
    for (int i = 0; i < 3; i++) close_fd(&far[i]);

    mb__msg m;
    memset(&m, 0, sizeof m);
    if (!rc) {
        int r = mb__msg_recv(c->ctl_fd, &m, SPAWN_REPLY_TIMEOUT_MS);
        if (r)
            rc = mb_err_set(err, MB_EIO, "sandbox %s did not start the process: %s", sb->id,
                            r == -EPIPE ? "the sandbox went away" : strerror(-r));
        else if (m.h.type == MB__MSG_SPAWNED) {
            c->child_id = m.h.a;
            c->pid = (pid_t)m.h.b;
            if (flags & MB__SPAWN_LIFELINE) close_fd(&c->ctl_fd);
        } else if (m.h.type == MB__MSG_ERROR) {
            rc = map_spawn_errno((int)m.h.a, m.h.nstr ? m.strs[0] : "cannot start", err);
        } else {
            rc = mb_err_set(err, MB_EIO, "sandbox %s answered a spawn with message %u", sb->id,
                            m.h.type);
        }
        mb__msg_free(&m);
    }
    if (rc) {
        if (c->out_fd == c->in_fd) c->out_fd = -1; /* one socket */
        mb_child_close(c);
    }
    return rc;
}

int mb_sandbox_spawn(mb_sandbox *sb, const mb_spawn_spec *spec, mb_child *out, mb_err *err)
{
    int rc = mb__sb_ref(sb, err);
    if (rc) {
        memset(out, 0, sizeof *out);
        out->in_fd = out->out_fd = out->err_fd = out->ctl_fd = -1;
        return rc;
    }
    rc = spawn_locked(sb, spec, -2, out, err);
    mb__sb_unref(sb);
    return rc;
}

int mb_sandbox_spawn_server(mb_sandbox *sb, const mb_spawn_spec *spec, int err_fd, int *sock,
                            pid_t *pid, mb_err *err)
{
    *sock = -1;
    int rc = mb__sb_ref(sb, err);
    if (rc) return rc;
    mb_child c;
    rc = spawn_locked(sb, spec, err_fd < 0 ? -1 : err_fd, &c, err);
    mb__sb_unref(sb);
    if (rc) return rc;
    *sock = c.in_fd;
    if (pid) *pid = c.pid;
    return 0;
}

int mb_child_kill(mb_child *c, int sig, mb_err *err)
{
    if (c->ctl_fd < 0) return mb_err_set(err, MB_ENOTFOUND, "the child is closed");
    int r = mb__msg_send_simple(c->ctl_fd, MB__MSG_KILL, sig == SIGKILL ? MB__KILL_TREE : 0, sig,
                                0);
    if (r) return mb_err_set(err, MB_EIO, "cannot signal the child: %s", strerror(-r));
    return 0;
}

int mb_child_wait(mb_child *c, int timeout_ms, mb_err *err)
{
    if (c->exited) return 0;
    if (c->ctl_fd < 0) return mb_err_set(err, MB_ENOTFOUND, "the child is closed");
    int64_t deadline = timeout_ms >= 0 ? mb_mono_ms() + timeout_ms : 0;
    for (;;) {
        int left = -1;
        if (timeout_ms >= 0) {
            int64_t d = deadline - mb_mono_ms();
            left = d > 0 ? (int)d : 0;
        }
        mb__msg m;
        int r = mb__msg_recv(c->ctl_fd, &m, left);
        if (r == -ETIMEDOUT) return mb_err_set(err, MB_ETIMEOUT, "the child is still running");
        if (r)
            return mb_err_set(err, MB_EIO, "lost the child: %s",
                              r == -EPIPE ? "its sandbox or supervisor went away" : strerror(-r));
        int type = (int)m.h.type;
        int64_t a = m.h.a;
        mb__msg_free(&m);
        if (type == MB__MSG_EXIT) {
            c->exited = 1;
            c->wait_status = (int)a;
            return 0;
        }
    }
}

void mb_child_close(mb_child *c)
{
    if (!c) return;
    close_fd(&c->in_fd);
    close_fd(&c->out_fd);
    close_fd(&c->err_fd);
    close_fd(&c->ctl_fd);
}

int mb_sandbox_kill_child(mb_sandbox *sb, int64_t child_id, int sig, mb_err *err)
{
    int rc = mb__sb_ref(sb, err);
    if (rc) return rc;
    int fd;
    if (!(rc = mb__sb_connect(sb, &fd, err))) {
        mb__msg m;
        int r = mb__msg_send_simple(fd, MB__MSG_KILL_ID, 0, child_id, sig);
        if (!r) r = mb__msg_recv(fd, &m, 5000);
        if (r) rc = mb_err_set(err, MB_EIO, "cannot reach sandbox %s: %s", sb->id, strerror(-r));
        else {
            if (m.h.type != MB__MSG_OK)
                rc = mb_err_set(err, MB_ENOTFOUND, "sandbox %s has no child %lld", sb->id,
                                (long long)child_id);
            mb__msg_free(&m);
        }
        close(fd);
    }
    mb__sb_unref(sb);
    return rc;
}

/* ------------------------------------------------------------------ exec */

typedef struct stream {
    int *fd;
    mb_buf *buf;
    size_t dropped;
} stream;

static void read_stream(stream *s, size_t cap, int *truncated)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(*s->fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) {
            close_fd(s->fd);
            return;
        }
        size_t keep = 0;
        if (s->buf->len < cap) keep = cap - s->buf->len < (size_t)n ? cap - s->buf->len : (size_t)n;
        if (keep) mb_buf_append(s->buf, chunk, keep);
        if ((size_t)n > keep) {
            *truncated = 1;
            s->dropped += (size_t)n - keep;
            if (s->dropped > (size_t)FLOOD_FACTOR * cap) {
                close_fd(s->fd); /* the writer gets EPIPE from now on */
                return;
            }
        }
    }
}

/* Writes to a pipe without letting SIGPIPE hit the process. */
static ssize_t write_nosigpipe(int fd, const void *p, size_t n)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t w = write(fd, p, n);
    int e = errno;
    if (w < 0 && e == EPIPE) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) > 0) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return w;
}

void mb_exec_result_free(mb_exec_result *res)
{
    if (!res) return;
    mb_buf_free(&res->out);
    mb_buf_free(&res->err);
}

int mb_sandbox_exec(mb_sandbox *sb, const mb_exec_spec *spec, mb_exec_result *res, mb_err *err)
{
    memset(res, 0, sizeof *res);
    res->exit_code = -1;
    int64_t start = mb_mono_ms();
    int rc = mb__sb_ref(sb, err);
    if (rc) return rc;
    mb_child c;
    mb_spawn_spec ss = {.argv = spec->argv, .envp = spec->envp, .cwd = spec->cwd};
    rc = spawn_locked(sb, &ss, -2, &c, err);
    if (rc) {
        mb__sb_unref(sb);
        return rc;
    }
    size_t cap = spec->output_cap ? spec->output_cap : DEFAULT_OUTPUT_CAP;
    int pipes[3] = {c.in_fd, c.out_fd, c.err_fd};
    for (int i = 0; i < 3; i++) fcntl(pipes[i], F_SETFL, fcntl(pipes[i], F_GETFL) | O_NONBLOCK);
    const char *in = spec->stdin_data;
    size_t in_left = spec->stdin_data ? spec->stdin_len : 0;
    if (!in_left) close_fd(&c.in_fd);

    stream so = {.fd = &c.out_fd, .buf = &res->out}, se = {.fd = &c.err_fd, .buf = &res->err};
    int64_t deadline = spec->timeout_ms > 0 ? start + spec->timeout_ms : INT64_MAX;
    int64_t kill_deadline = INT64_MAX, drain_deadline = INT64_MAX;
    int exited = 0, lost = 0;
    for (;;) {
        if (exited && ((c.out_fd < 0 && c.err_fd < 0) || mb_mono_ms() >= drain_deadline)) break;
        if (lost) break;
        int64_t now = mb_mono_ms();
        if (!exited && !res->timed_out && now >= deadline) {
            res->timed_out = 1;
            (void)mb_child_kill(&c, SIGKILL, NULL);
            kill_deadline = now + EXIT_AFTER_KILL_MS;
        }
        if (!exited && now >= kill_deadline) {
            lost = 1;
            break;
        }
        int64_t wake = exited ? drain_deadline : res->timed_out ? kill_deadline : deadline;
        int timeout = wake == INT64_MAX ? -1 : (int)(wake - now > 0 ? wake - now : 0);

        struct pollfd pf[4];
        int n = 0, ictl = -1, iin = -1, iout = -1, ierr = -1;
        if (!exited) {
            pf[n] = (struct pollfd){.fd = c.ctl_fd, .events = POLLIN};
            ictl = n++;
        }
        if (c.in_fd >= 0) {
            pf[n] = (struct pollfd){.fd = c.in_fd, .events = POLLOUT};
            iin = n++;
        }
        if (c.out_fd >= 0) {
            pf[n] = (struct pollfd){.fd = c.out_fd, .events = POLLIN};
            iout = n++;
        }
        if (c.err_fd >= 0) {
            pf[n] = (struct pollfd){.fd = c.err_fd, .events = POLLIN};
            ierr = n++;
        }
        int r = poll(pf, (nfds_t)n, timeout);
        if (r < 0 && errno != EINTR) {
            rc = mb_err_sys(err, errno, "poll");
            break;
        }
        if (r <= 0) continue;
        if (iout >= 0 && pf[iout].revents) read_stream(&so, cap, &res->truncated);
        if (ierr >= 0 && pf[ierr].revents) read_stream(&se, cap, &res->truncated);
        if (iin >= 0 && pf[iin].revents) {
            if (pf[iin].revents & (POLLERR | POLLHUP)) {
                close_fd(&c.in_fd);
            } else {
                ssize_t w = write_nosigpipe(c.in_fd, in, in_left > 65536 ? 65536 : in_left);
                if (w > 0) {
                    in += w;
                    in_left -= (size_t)w;
                }
                if ((w < 0 && errno != EAGAIN && errno != EINTR) || in_left == 0)
                    close_fd(&c.in_fd);
            }
        }
        if (ictl >= 0 && pf[ictl].revents) {
            int wr = mb_child_wait(&c, 0, NULL);
            if (wr == 0) {
                exited = 1;
                close_fd(&c.in_fd);
                drain_deadline = mb_mono_ms() + DRAIN_AFTER_EXIT_MS;
            } else if (wr != MB_ETIMEOUT) {
                lost = 1;
            }
        }
    }
    if (!rc && lost && !exited)
        rc = mb_err_set(err, MB_EIO, "sandbox %s went away while the command ran", sb->id);
    if (exited) {
        if (WIFEXITED(c.wait_status)) res->exit_code = WEXITSTATUS(c.wait_status);
        else if (WIFSIGNALED(c.wait_status)) res->term_signal = WTERMSIG(c.wait_status);
    }
    mb_child_close(&c); /* kills whatever the command left behind */
    res->duration_ms = mb_mono_ms() - start;
    mb__sb_unref(sb);
    return rc;
}
