/*
 * spawn_local.c - the plain spawn/kill callbacks: a server as an ordinary
 * child process of mcpbox, for `mcpbox bridge` and tests. (Inside the daemon
 * the sandbox layer provides callbacks that start servers in the sandbox.)
 *
 * posix_spawnp rather than fork: mcpbox is multi-threaded, and posix_spawn
 * neither copies the address space nor runs code between fork and exec. The
 * child gets its own process group (so a kill reaches the grandchildren an
 * npx or shell wrapper starts), an empty signal mask and default dispositions
 * (mcpbox blocks and ignores signals the server must not inherit), and only
 * the three pipe ends as fds 0-2: every other fd mcpbox opens is CLOEXEC.
 */
#define _GNU_SOURCE
#include "gateway/gateway_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int mb_gateway_spawn_local(void *ctx, const char *sandbox_id, const char *server,
                           const mb_backend_spec *spec, mb_backend_proc *out, mb_err *err)
{
    (void)ctx;
    (void)sandbox_id;
    int in[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
    if (pipe2(in, O_CLOEXEC) || pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (in[i] >= 0) close(in[i]);
            if (outp[i] >= 0) close(outp[i]);
            if (errp[i] >= 0) close(errp[i]);
        }
        return mb_err_sys(err, e, "cannot create pipes for '%s'", server);
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    if (spec->cwd) posix_spawn_file_actions_addchdir_np(&fa, spec->cwd);
    mb_spawnattr_init_clean(&attr);
    pid_t pid;
    int rc = posix_spawnp(&pid, spec->argv[0], &fa, &attr, (char *const *)spec->argv,
                          spec->envp ? (char *const *)spec->envp : environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(in[0]);
    close(outp[1]);
    close(errp[1]);
    if (rc) {
        close(in[1]);
        close(outp[0]);
        close(errp[0]);
        return mb_err_sys(err, rc, "cannot run '%s'", spec->argv[0]);
    }
    out->in_fd = in[1];
    out->out_fd = outp[0];
    out->err_fd = errp[0];
    out->handle = pid;
    return MB_OK;
}

void mb_gateway_kill_local(void *ctx, const char *sandbox_id, const char *server,
                           int64_t handle)
{
    (void)ctx;
    (void)sandbox_id;
    (void)server;
    pid_t pid = (pid_t)handle;
    if (pid <= 0) return;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}
