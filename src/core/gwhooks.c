/*
 * gwhooks.c - the gateway as the core sets it up: how it starts a server
 * process inside a sandbox (and where that server's stderr goes), which
 * hosts and origins it accepts, and whose tenant a sandbox is.
 */
#define _GNU_SOURCE
#include "core/core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A server costs the daemon one descriptor: its stdin/stdout socket, which
 * is also its life line (the gateway closing it kills the server's process
 * tree). Its stderr goes to DIR/workspaces/ID/.logs/SERVER.log, on the
 * workspace tmpfs but outside /data: charged to the sandbox's own quota,
 * invisible from inside, truncated at each start; the gateway reads its tail
 * when the server fails (stderr_tail). */
static char *server_log(mb_core *core, const char *sandbox_id, const char *server)
{
    char *name = mb_asprintf("%s.log", server);
    char *path = mb_core__path_logs(core, sandbox_id, name);
    free(name);
    return path;
}

static int open_server_log(mb_core *core, const char *sandbox_id, const char *server, int *fd,
                           mb_err *err)
{
    if (strchr(server, '/') || server[0] == '.')
        return mb_err_set(err, MB_EINVAL, "'%s' is not a server name", server);
    char *dir = mb_core__path_logs(core, sandbox_id, NULL);
    char *path = server_log(core, sandbox_id, server);
    int rc = MB_OK;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        rc = mb_err_sys(err, errno, "cannot create %s", dir);
    if (!rc) {
        *fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (*fd < 0) rc = mb_err_sys(err, errno, "cannot create %s", path);
    }
    free(dir);
    free(path);
    return rc;
}

static int spawn_in_sandbox(void *ctx, const char *sandbox_id, const char *server,
                            const mb_backend_spec *spec, mb_backend_proc *out, mb_err *err)
{
    mb_core *core = ctx;
    mb_live *l = mb_core__live_get(core, sandbox_id);
    if (!l)
        return mb_err_set(err, MB_ENOTFOUND, "sandbox %s is not running, so '%s' cannot start",
                          sandbox_id, server);
    int log_fd = -1, sock = -1;
    pid_t pid = 0;
    int rc = open_server_log(core, sandbox_id, server, &log_fd, err);
    if (!rc) {
        /* A native server runs from its group's executable (srvbins.c); a
         * sandbox made by a daemon without them (adopted) has none, and
         * runs it from the mcpbox copy, as its profile says. */
        const char **grp = mb_core__srvbin_argv(core, spec->argv);
        mb_spawn_spec ss = {.argv = grp ? grp : spec->argv, .envp = spec->envp, .cwd = spec->cwd};
        rc = mb_sandbox_spawn_server(l->sb, &ss, log_fd, &sock, &pid, err);
        if (rc == MB_ENOTFOUND && grp) {
            mb_err_clear(err);
            ss.argv = spec->argv;
            rc = mb_sandbox_spawn_server(l->sb, &ss, log_fd, &sock, &pid, err);
        }
        free(grp);
        close(log_fd);
    }
    mb_core__live_put(core, l);
    if (rc) return rc;
    out->in_fd = out->out_fd = sock; /* the gateway owns (and closes) it */
    out->err_fd = -1;
    out->handle = pid;
    return MB_OK;
}

static void kill_in_sandbox(void *ctx, const char *sandbox_id, const char *server, int64_t handle)
{
    /* Nothing to do: the gateway closes the socket, which kills the tree. */
}

static size_t server_stderr_tail(void *ctx, const char *sandbox_id, const char *server,
                                 int64_t handle, char *buf, size_t cap)
{
    mb_core *core = ctx;
    char *path = server_log(core, sandbox_id, server);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    free(path);
    if (fd < 0) return 0;
    struct stat st;
    size_t got = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        off_t from = st.st_size > (off_t)cap ? st.st_size - (off_t)cap : 0;
        ssize_t n = pread(fd, buf, cap, from);
        got = n > 0 ? (size_t)n : 0;
    }
    close(fd);
    return got;
}

/* Host names the gateway accepts in Host headers: loopback, plus the hosts
 * of the listen address and of the public URL. */
static void host_of(const char *s, char *out, size_t cap)
{
    const char *p = strstr(s, "://");
    p = p ? p + 3 : s;
    size_t n = 0;
    if (*p == '[') {
        const char *e = strchr(p, ']');
        n = e ? (size_t)(e - p) + 1 : strlen(p);
    } else {
        n = strcspn(p, ":/?#");
    }
    if (n >= cap) n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

/* The gateway's tenant of a sandbox: the owner of its key. */
static int sandbox_owner(void *ctx, const char *sandbox_id, char *buf, size_t cap)
{
    mb_core *core = ctx;
    mb_sandbox_rec rec;
    if (mb_store_sandbox_get(core->store, sandbox_id, &rec, NULL) != MB_OK || !rec.owner[0])
        return -1;
    snprintf(buf, cap, "%s", rec.owner);
    return 0;
}

int mb_core__gateway_open(mb_core *core, mb_err *err)
{
    char listen_host[256], public_host[256];
    host_of(core->cfg.listen, listen_host, sizeof listen_host);
    host_of(core->cfg.public_url ? core->cfg.public_url : core->cfg.listen, public_host,
            sizeof public_host);
    const char *hosts[] = {"localhost", "127.0.0.1", "[::1]", listen_host, public_host, NULL};
    const char *origins[MB_MAX_ALLOWED + 1] = {0};
    for (size_t i = 0; i < core->cfg.n_allowed_origins; i++)
        origins[i] = core->cfg.allowed_origins[i];
    mb_gateway_opts go = {
        .spawn = spawn_in_sandbox,
        .kill = kill_in_sandbox,
        .stderr_tail = server_stderr_tail,
        .ctx = core,
        .call_timeout_ms = core->cfg.call_timeout_s * 1000,
        .init_timeout_ms = core->cfg.start_timeout_s * 1000,
        .max_message_bytes = (size_t)core->cfg.max_message_bytes,
        .max_sessions = (size_t)core->cfg.max_sessions,
        .max_sessions_per_sandbox = (size_t)core->cfg.max_sessions_sandbox,
        .max_sessions_per_tenant = (size_t)core->cfg.max_sessions_key,
        .tenant_of = sandbox_owner,
        .allowed_origins = origins,
        .allowed_hosts = hosts,
        .on_call = core->metrics || mb_calllog_enabled(core->calls) ? mb_core__on_call : NULL,
        .on_restart = core->metrics ? mb_core__on_restart : NULL,
    };
    return mb_gateway_create(&go, &core->gw, err);
}
