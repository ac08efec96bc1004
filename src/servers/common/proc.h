/*
 * proc.h - running a child program to completion for the native MCP servers.
 *
 * The terminal, git, code-runner and code-executor servers all do the same thing
 * their upstreams do with subprocess.run / child_process.exec: start a program
 * (directly, or through /bin/sh -c where upstream uses a shell), feed it nothing
 * on stdin, collect stdout and stderr separately, and stop it after a timeout.
 * The servers already run inside the sandbox, so this is plain fork/exec: the
 * sandbox's namespaces, cgroup and seccomp filter apply to the child too.
 *
 * Semantics worth knowing:
 *   - stdout/stderr are read until both pipes reach EOF (like Python's
 *     communicate()): a background job that keeps a pipe open keeps the call
 *     waiting until the timeout.
 *   - On timeout the direct child gets SIGKILL (or its whole process group when
 *     `kill_group` is set); reading stops at once; `timed_out` is set.
 *   - Each stream is capped at `max_output` bytes. Beyond it the stream is either
 *     drained and dropped (`truncated` set) or, with `kill_on_overflow`, the child
 *     is killed as Node's exec() does when maxBuffer is exceeded.
 *   - Set watch_fd to -1 when not using cancellation (0 is a valid descriptor).
 *   - exec failures (command not found, permission denied) are reported through
 *     `spawn_errno`, with exit_code 127/126, not as an mb_err: callers format
 *     them the way their upstream does.
 */
#ifndef MB_SERVERS_PROC_H
#define MB_SERVERS_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

typedef struct mb_proc_spec {
    const char *const *argv; /* argv[0] is searched in PATH (execvp) unless it has a '/' */
    const char *const *envp; /* NULL: the server's own environment */
    const char *cwd;         /* NULL: the server's own cwd */
    int timeout_ms;          /* <= 0: no timeout */
    size_t max_output;       /* per stream; 0: 64 MiB */
    int kill_on_overflow;    /* see above */
    int kill_group;          /* child runs in its own process group; kill the group on timeout */
    /* Optional cancellation: when watch_fd (>= 0) becomes readable, cancelled(ctx)
     * is asked; a true answer kills the child (as on timeout) and sets
     * mb_proc_result.cancelled. MCP servers pass mb_mcp_call_input_fd() and a
     * wrapper of mb_mcp_call_cancelled() so pings are answered meanwhile. */
    int watch_fd;
    int (*cancelled)(void *ctx);
    void *ctx;
} mb_proc_spec;

typedef struct mb_proc_result {
    int exited;          /* 1 if the child exited normally */
    int exit_code;       /* exit status when exited; 128+signal otherwise */
    int term_signal;     /* signal that ended the child, 0 if none */
    int timed_out;       /* the timeout fired */
    int cancelled;       /* the client cancelled (see mb_proc_spec.cancelled) */
    int overflowed;      /* a stream went past max_output (which one: *_truncated) */
    int out_truncated, err_truncated;
    int spawn_errno;     /* errno of a failed exec (ENOENT, EACCES...), 0 if it ran */
    int64_t elapsed_ms;
    mb_buf out, err;     /* NUL-terminated; owned, freed by mb_proc_result_free */
} mb_proc_result;

/* Runs the program. Returns 0 when the child was started (whatever its outcome),
 * or a negative mb_code if the server could not even try (pipe/fork failure). */
int mb_proc_run(const mb_proc_spec *spec, mb_proc_result *res, mb_err *err);
void mb_proc_result_free(mb_proc_result *res);

#endif /* MB_SERVERS_PROC_H */
