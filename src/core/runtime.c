/*
 * runtime.c - the running half of a sandbox record: its isolated environment
 * (the sandbox layer), the MCP server processes inside it (the gateway), the
 * warm pool, and what becomes of them when the daemon starts and stops.
 *
 * Paths of sandbox ID (DIR = the absolute data dir):
 *   DIR/run/ID/               state dir of the sandbox layer (control socket)
 *   DIR/workspaces/ID/        mount point of the workspace tmpfs (the quota)
 *   DIR/workspaces/ID/data/   what the sandbox sees as /data
 *   DIR/workspaces/ID/.stage-*  archive staging: same file system as /data,
 *                             so extraction ends in renames, yet invisible
 *                             from inside
 *   DIR/workspaces/ID/.logs/SERVER.log  each server's stderr (below)
 *
 * Every sandbox's init is cloned by one zygote process, started here.
 *
 * Daemon restarts: sandboxes outlive the daemon (their init is supervised
 * through a control socket, not through the daemon's process tree). At start
 * every live record is re-adopted and its servers are started again in the
 * background; a record whose sandbox cannot be adopted is torn down and
 * marked "error" with the reason, and leftovers no record claims (a crash
 * mid-acquire) are swept. Idle pool sandboxes are not kept across restarts.
 *
 * Server processes do not survive a daemon restart: their stdio sockets (their
 * life lines) end with the daemon, so they are started again, fresh, on the
 * same /data.
 */
#define _GNU_SOURCE
#include "core/core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* --------------------------------------------------------------- helpers */

static char *self_exe(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return NULL;
    buf[n] = '\0';
    return mb_strdup(buf);
}

/* --profiles-dir, else profiles/ in the source tree the binary sits in
 * (build/mcpbox, build/asan/mcpbox), else the installed location. */
static char *find_profiles_dir(mb_core *core)
{
    if (core->cfg.profiles_dir) return mb_strdup(core->cfg.profiles_dir);
    char *dir = mb_strdup(core->mcpbox_bin);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) break;
        *slash = '\0';
        char *probe = mb_asprintf("%s/profiles/" MB_PROFILE_DEFAULT ".json", dir);
        int found = access(probe, R_OK) == 0;
        free(probe);
        if (found) {
            char *p = mb_asprintf("%s/profiles", dir);
            free(dir);
            return p;
        }
    }
    free(dir);
    return mb_strdup("/usr/share/mcpbox/profiles");
}

/* Where relative sandbox.binds of the profiles start (runtime/playwright):
 * the source tree the binary sits in when it has runtime/, else the
 * directory holding the profiles directory. NULL = that default. */
static char *find_base_dir(mb_core *core)
{
    char *dir = mb_strdup(core->mcpbox_bin);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) break;
        *slash = '\0';
        char *probe = mb_asprintf("%s/runtime", dir);
        struct stat st;
        int found = stat(probe, &st) == 0 && S_ISDIR(st.st_mode);
        free(probe);
        if (found) return dir;
    }
    free(dir);
    return NULL;
}

static int load_profiles(mb_core *core, mb_err *err)
{
    char **names;
    int rc = mb_profile_names(core->profiles_dir, &names, err);
    if (rc) return rc;
    size_t n = 0;
    while (names[n]) n++;
    core->profiles = mb_calloc(n ? n : 1, sizeof *core->profiles);
    char *base = find_base_dir(core);
    mb_profile_vars vars = {.mcpbox_bin = MB_SANDBOX_MCPBOX_PATH,
                            .data_dir = MB_SANDBOX_DATA_PATH, .base_dir = base};
    for (size_t i = 0; !rc && i < n; i++) {
        rc = mb_profile_load(core->profiles_dir, names[i], &vars, &core->profiles[i], err);
        if (!rc) core->n_profiles++;
    }
    free(base);
    mb_profile_names_free(names);
    if (!rc && !mb_core__profile(core, NULL))
        rc = mb_err_set(err, MB_ENOTFOUND,
                        "no profile '" MB_PROFILE_DEFAULT "' in %s (give --profiles-dir)",
                        core->profiles_dir);
    return rc;
}

const mb_profile *mb_core__profile(mb_core *core, const char *benchmark)
{
    const char *name = benchmark && *benchmark ? benchmark : MB_PROFILE_DEFAULT;
    for (size_t i = 0; i < core->n_profiles; i++)
        if (!strcmp(core->profiles[i]->name, name)) return core->profiles[i];
    return NULL;
}

/* Sanitizer settings reach the servers, so that a sanitized build of mcpbox
 * reports the same way inside a sandbox as outside. */
static void collect_server_env(mb_core *core)
{
    static const char *const pass[] = {"ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=", NULL};
    size_t n = 0;
    core->server_env = mb_calloc(4, sizeof *core->server_env);
    for (char **e = environ; e && *e; e++)
        for (size_t i = 0; pass[i]; i++)
            if (!strncmp(*e, pass[i], strlen(pass[i])) && n < 3)
                /* LeakSanitizer stops the world with ptrace, which the
                 * sandbox's seccomp filter forbids; servers are leak-checked
                 * outside a sandbox by their own tests. */
                core->server_env[n++] = i == 0 ? mb_asprintf("%s:detect_leaks=0", *e)
                                               : mb_strdup(*e);
}

/* What a mb_sandbox_opts points to. */
typedef struct sb_paths {
    char *state;
    char *volume;
    char *egress;
    mb_sandbox_bind *binds;
} sb_paths;

static void sb_paths_free(sb_paths *p)
{
    free(p->state);
    free(p->volume);
    free(p->binds);
    free(p->egress);
    p->state = p->volume = p->egress = NULL;
    p->binds = NULL;
}

static void sb_opts(mb_core *core, const char *id, int64_t uid_base, const mb_profile *p,
                    mb_sandbox_opts *o, sb_paths *paths)
{
    paths->binds = NULL;
    paths->egress = NULL;
    paths->state = mb_core__path_run(core, id);
    paths->volume = mb_core__path_volume(core, id);
    memset(o, 0, sizeof *o);
    o->id = id;
    o->state_dir = paths->state;
    o->workspace = paths->volume;
    o->data_subdir = MB_DATA_SUBDIR;
    o->mcpbox_bin = core->sandbox_bin;
    o->zygote = core->zygote;
    o->uid_base = (uint32_t)uid_base;
    if (p) {
        o->limits.memory_bytes = p->limits.memory_bytes;
        o->limits.pids_max = p->limits.pids_max;
        o->limits.cpu_millis = p->limits.cpu_millis;
        o->limits.disk_bytes = p->limits.disk_bytes;
        o->allow_network = p->limits.allow_network;
        paths->binds = mb_calloc(p->n_binds + 1, sizeof *paths->binds);
        o->n_binds = 0;
        for (size_t i = 0; i < p->n_binds; i++) {
            /* A bind whose host side is not installed (runtime/playwright
             * before scripts/install-playwright) is left out: the server
             * that needs it fails with its own message, the others work. */
            if (access(p->binds[i].host, R_OK) != 0) {
                mb_warn("profile %s: %s (for %s) is missing; not bound", p->name, p->binds[i].host,
                        p->binds[i].inside);
                continue;
            }
            paths->binds[o->n_binds++] = (mb_sandbox_bind){p->binds[i].host, p->binds[i].inside};
        }
        o->binds = paths->binds;
        if (mb_core__profile_has_egress(p)) { /* the proxy sockets' directory */
            paths->egress = mb_core__egress_dir(core, id, 1);
            paths->binds[o->n_binds++] = (mb_sandbox_bind){paths->egress, MB_EGRESS_DIR_INSIDE};
        }
    }
}

/* Picks a free uid range and inserts the record, atomically with respect to
 * every other picker. */
static int insert_record(mb_core *core, mb_sandbox_rec *rec, mb_err *err)
{
    pthread_mutex_lock(&core->alloc_lock);
    int rc = mb_store_free_uid_base(core->store, MB_UID_FIRST, MB_UID_STRIDE, &rec->uid_base, err);
    if (!rc) rc = mb_store_sandbox_insert(core->store, rec, err);
    pthread_mutex_unlock(&core->alloc_lock);
    return rc;
}

static void mark_released(mb_core *core, const char *id)
{
    mb_sandbox_rec rec;
    if (mb_store_sandbox_get(core->store, id, &rec, NULL) != MB_OK) return;
    snprintf(rec.status, sizeof rec.status, "released");
    rec.updated_at = mb_now();
    mb_store_sandbox_update(core->store, &rec, NULL);
}

/* ------------------------------------------------- gateway process hooks */

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
    mb_live *l = mb_live_get(core, sandbox_id);
    if (!l)
        return mb_err_set(err, MB_ENOTFOUND, "sandbox %s is not running, so '%s' cannot start",
                          sandbox_id, server);
    int log_fd = -1, sock = -1;
    pid_t pid = 0;
    int rc = open_server_log(core, sandbox_id, server, &log_fd, err);
    if (!rc) {
        mb_spawn_spec ss = {.argv = spec->argv, .envp = spec->envp, .cwd = spec->cwd};
        rc = mb_sandbox_spawn_server(l->sb, &ss, log_fd, &sock, &pid, err);
        close(log_fd);
    }
    mb_live_put(core, l);
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

static int open_gateway(mb_core *core, mb_err *err)
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
    };
    return mb_gateway_create(&go, &core->gw, err);
}

json_t *mb_core_pool_info(mb_core *core)
{
    if (!core->pool) return NULL;
    json_t *o = json_object();
    for (size_t i = 0; i < core->n_profiles; i++) {
        mb_pool_stats st;
        if (mb_pool_stats_get(core->pool, core->profiles[i]->name, &st) != MB_OK) continue;
        json_t *k = json_pack("{s:i,s:i,s:i,s:I,s:I,s:I}", "target", (int)st.target, "idle",
                              (int)st.idle, "creating", (int)st.creating, "claimed",
                              (json_int_t)st.claimed, "misses", (json_int_t)st.misses,
                              "failures", (json_int_t)st.failures);
        if (st.last_error[0]) json_object_set_new(k, "last_error", json_string(st.last_error));
        json_object_set_new(o, core->profiles[i]->name, k);
    }
    return o;
}

/* -------------------------------------------------------------- servers */

/* The profile's environment for a server plus the pass-through variables. */
static const char **server_envp(mb_core *core, const mb_profile_server *ps, const char *extra)
{
    size_t n = 0, m = 0;
    while (ps->envp && ps->envp[n]) n++;
    while (core->server_env[m]) m++;
    const char **envp = mb_calloc(n + m + 2, sizeof *envp);
    for (size_t i = 0; i < n; i++) envp[i] = ps->envp[i];
    for (size_t i = 0; i < m; i++) envp[n + i] = core->server_env[i];
    envp[n + m] = extra;
    return envp;
}

static int add_server(mb_core *core, const char *id, const mb_profile_server *ps, mb_err *err)
{
    char *egress = mb_core__egress_server(core, id, ps, NULL);
    const char **envp = server_envp(core, ps, egress);
    mb_backend_spec spec = {.argv = (const char *const *)ps->argv, .envp = envp, .cwd = ps->cwd};
    int rc = mb_gateway_add(core->gw, id, ps->name, &spec, err);
    free(envp);
    free(egress);
    return rc;
}

static void set_error(mb_server_rec *s, const char *msg)
{
    snprintf(s->status, sizeof s->status, "error");
    if (!s->metadata) s->metadata = json_object();
    json_object_set_new(s->metadata, "error", json_string(msg));
}

/* One server to register and start (without waiting for it to be ready). */
typedef struct start_job {
    mb_core *core;
    const char *id;
    const mb_profile_server *ps;
    int ok;
    mb_err err;
} start_job;

static void *start_one(void *arg)
{
    start_job *j = arg;
    j->ok = add_server(j->core, j->id, j->ps, &j->err) == MB_OK &&
            mb_gateway_start(j->core->gw, j->id, j->ps->name, 0, &j->err) == MB_OK;
    return NULL;
}

/* A spawn returns once the server's exec inside the sandbox succeeded: a few
 * milliseconds each, and more on a busy host. The servers of one sandbox that
 * are not running yet are therefore spawned from a thread each, at once (the
 * gateway and the sandbox handle take concurrent calls), the last on the
 * caller's thread; those already registered (a pool sandbox's) cost nothing
 * to start and are done inline, without threads. */
static void start_servers(start_job *jobs, size_t n)
{
    size_t *todo = mb_calloc(n ? n : 1, sizeof *todo);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (mb_gateway_info(jobs[i].core->gw, jobs[i].id, jobs[i].ps->name, NULL, NULL) == MB_OK)
            start_one(&jobs[i]);
        else
            todo[m++] = i;
    }
    pthread_t *t = mb_calloc(m ? m : 1, sizeof *t);
    int *made = mb_calloc(m ? m : 1, sizeof *made);
    for (size_t k = 1; k < m; k++)
        made[k] = pthread_create(&t[k], NULL, start_one, &jobs[todo[k]]) == 0;
    if (m) start_one(&jobs[todo[0]]);
    for (size_t k = 1; k < m; k++) {
        if (made[k]) pthread_join(t[k], NULL);
        else start_one(&jobs[todo[k]]);
    }
    free(made);
    free(t);
    free(todo);
}

void mb_core__servers_up(mb_core *core, const mb_sandbox_rec *rec, mb_server_rec *srv, size_t n)
{
    const mb_profile *p = mb_core__profile(core, rec->benchmark);
    /* A pool sandbox runs every server of its profile: only those asked for
     * stay reachable. */
    for (size_t j = 0; p && j < p->nservers; j++) {
        int asked = 0;
        for (size_t i = 0; i < n && !asked; i++) asked = !strcmp(srv[i].name, p->servers[j].name);
        if (!asked) mb_gateway_remove_server(core->gw, rec->id, p->servers[j].name);
    }
    int *started = mb_calloc(n ? n : 1, sizeof *started);
    start_job *jobs = mb_calloc(n ? n : 1, sizeof *jobs);
    size_t *job_of = mb_calloc(n ? n : 1, sizeof *job_of);
    size_t njobs = 0;
    for (size_t i = 0; i < n; i++) {
        const mb_profile_server *ps = p ? mb_profile_server_find(p, srv[i].name) : NULL;
        if (!ps) {
            mb_buf offered = {0};
            for (size_t j = 0; p && j < p->nservers; j++)
                mb_buf_printf(&offered, "%s%s", j ? ", " : "", p->servers[j].name);
            char *msg = mb_asprintf("'%s' is not available in the '%s' profile of this mcpbox "
                                    "(it offers: %s)",
                                    srv[i].name, p ? p->name : "?",
                                    offered.len ? offered.data : "nothing");
            set_error(&srv[i], msg);
            free(msg);
            mb_buf_free(&offered);
            continue;
        }
        if (!srv[i].metadata) srv[i].metadata = json_object();
        json_object_set_new(srv[i].metadata, "upstream", json_string(ps->upstream));
        job_of[i] = njobs;
        jobs[njobs++] = (start_job){.core = core, .id = rec->id, .ps = ps};
        started[i] = 1;
    }
    start_servers(jobs, njobs);
    for (size_t i = 0; i < n; i++)
        if (started[i] && !jobs[job_of[i]].ok) {
            set_error(&srv[i], jobs[job_of[i]].err.msg);
            started[i] = 0;
        }
    free(jobs);
    free(job_of);
    /* All started in parallel above; now wait for each to be ready. */
    for (size_t i = 0; i < n; i++) {
        mb_err err;
        if (started[i] &&
            mb_gateway_start(core->gw, rec->id, srv[i].name, core->cfg.start_timeout_s * 1000,
                             &err) != MB_OK)
            set_error(&srv[i], err.msg);
    }
    free(started);
}

int mb_core_server_state(mb_core *core, const char *sandbox_id, const char *server,
                         json_t **meta, int *ready)
{
    return mb_gateway_info(core->gw, sandbox_id, server, meta, ready);
}

mb_gateway *mb_core_gateway(mb_core *core) { return core->gw; }

/* ------------------------------------------------------------ warm pool */

/* A pool sandbox is readied like an acquired one, before anyone asks: its
 * benchmark's seed in /data, in the table of running sandboxes, and every
 * server of its profile started and initialized. Acquiring it then only
 * claims it, updates its record and stops the servers the request did not
 * name (mb_core__servers_up). */
typedef struct pool_cookie {
    char id[37];
    int64_t uid_base;
    sb_paths paths;
    int live; /* in core->live and the gateway (prepared) */
} pool_cookie;

static int pool_make_opts(void *ctx, const char *key, mb_sandbox_opts *opts, void **cookie,
                          mb_err *err)
{
    mb_core *core = ctx;
    const mb_profile *p = mb_core__profile(core, key);
    if (!p) return mb_err_set(err, MB_ENOTFOUND, "no profile '%s'", key);
    pool_cookie *c = mb_calloc(1, sizeof *c);
    mb_sandbox_rec rec = {0};
    mb_uuid4(rec.id);
    snprintf(rec.status, sizeof rec.status, "idle");
    snprintf(rec.benchmark, sizeof rec.benchmark, "%s",
             strcmp(key, MB_PROFILE_DEFAULT) ? key : "");
    rec.created_at = rec.updated_at = mb_now();
    rec.ttl_seconds = -1;
    int rc = insert_record(core, &rec, err);
    if (rc) {
        free(c);
        return rc;
    }
    snprintf(c->id, sizeof c->id, "%s", rec.id);
    c->uid_base = rec.uid_base;
    sb_opts(core, c->id, c->uid_base, p, opts, &c->paths);
    *cookie = c;
    return MB_OK;
}

static int pool_prepare(void *ctx, const char *key, mb_sandbox *sb, void *cookie, mb_err *err)
{
    mb_core *core = ctx;
    pool_cookie *c = cookie;
    const mb_profile *p = mb_core__profile(core, key);
    if (!p) return mb_err_set(err, MB_ENOTFOUND, "no profile '%s'", key);
    mb_sandbox_rec rec = {0};
    snprintf(rec.id, sizeof rec.id, "%s", c->id);
    rec.uid_base = c->uid_base;
    snprintf(rec.benchmark, sizeof rec.benchmark, "%s",
             strcmp(key, MB_PROFILE_DEFAULT) ? key : "");
    int rc = mb_core__seed(core, &rec, err);
    if (rc) return rc;
    mb_live_add(core, c->id, sb, p);
    c->live = 1;
    /* Started in parallel, then waited for; a server that fails here is
     * tried again when the sandbox is acquired. */
    start_job *jobs = mb_calloc(p->nservers ? p->nservers : 1, sizeof *jobs);
    for (size_t i = 0; i < p->nservers; i++)
        jobs[i] = (start_job){.core = core, .id = c->id, .ps = &p->servers[i]};
    start_servers(jobs, p->nservers);
    for (size_t i = 0; i < p->nservers; i++) {
        mb_err e2;
        if (!jobs[i].ok)
            mb_debug("pool %s: %s: %s", key, p->servers[i].name, jobs[i].err.msg);
        else if (mb_gateway_start(core->gw, c->id, p->servers[i].name,
                                  core->cfg.start_timeout_s * 1000, &e2) != MB_OK)
            mb_debug("pool %s: %s: %s", key, p->servers[i].name, e2.msg);
    }
    free(jobs);
    return MB_OK;
}

static void pool_unprepare(void *ctx, const char *key, mb_sandbox *sb, void *cookie)
{
    mb_core *core = ctx;
    pool_cookie *c = cookie;
    if (!c->live) return;
    mb_gateway_remove_sandbox(core->gw, c->id);
    mb_core__egress_release(core, c->id);
    free(mb_live_take(core, c->id)); /* the pool destroys the sandbox itself */
    c->live = 0;
}

static void pool_retire(void *ctx, const char *key, void *cookie)
{
    mb_core *core = ctx;
    pool_cookie *c = cookie;
    mark_released(core, c->id);
    sb_paths_free(&c->paths);
    free(c);
}

static int open_pool(mb_core *core, mb_err *err)
{
    if (core->cfg.pool_all < 0 && core->cfg.n_pools == 0) return MB_OK;
    mb_pool_factory f = {.make_opts = pool_make_opts, .prepare = pool_prepare,
                         .unprepare = pool_unprepare, .retire = pool_retire, .ctx = core};
    int rc = mb_pool_new(&f, &core->pool, err);
    for (size_t i = 0; !rc && core->cfg.pool_all > 0 && i < core->n_profiles; i++)
        rc = mb_pool_set_target(core->pool, core->profiles[i]->name,
                                (unsigned)core->cfg.pool_all, err);
    for (size_t i = 0; !rc && i < core->cfg.n_pools; i++) {
        if (!mb_core__profile(core, core->cfg.pools[i].preset))
            return mb_err_set(err, MB_EINVAL, "--pool %s=...: there is no profile '%s' in %s",
                              core->cfg.pools[i].preset, core->cfg.pools[i].preset,
                              core->profiles_dir);
        rc = mb_pool_set_target(core->pool, core->cfg.pools[i].preset,
                                (unsigned)atoi(core->cfg.pools[i].dir), err);
    }
    return rc;
}

/* ------------------------------------------------------------ sandboxes */

int mb_core__seed(mb_core *core, const mb_sandbox_rec *rec, mb_err *err)
{
    const char *seed = NULL;
    for (size_t i = 0; i < core->cfg.n_seeds; i++)
        if (!strcmp(core->cfg.seeds[i].preset, rec->benchmark)) seed = core->cfg.seeds[i].dir;
    if (!seed) return MB_OK;
    char *ws = mb_core_workspace(core, rec->id);
    int rc = mb_copy_tree(seed, ws, (uid_t)rec->uid_base, (gid_t)rec->uid_base, err);
    if (rc) mb_err_wrap(err, rc, "cannot preload /data from the %s seed %s", rec->benchmark, seed);
    free(ws);
    return rc;
}

int mb_core__sandbox_up(mb_core *core, mb_sandbox_rec *rec, mb_err *err)
{
    const mb_profile *p = mb_core__profile(core, rec->benchmark);
    if (!p)
        return mb_err_set(err, MB_EINVAL, "no profile for benchmark '%s' in %s", rec->benchmark,
                          core->profiles_dir);
    mb_sandbox *sb = NULL;
    void *cookie = NULL;
    int rc = MB_OK, pooled = 0;
    if (core->pool && mb_pool_claim(core->pool, p->name, &sb, &cookie) == MB_OK) {
        /* Seeded, running and serving already (pool_prepare). */
        pool_cookie *c = cookie;
        snprintf(rec->id, sizeof rec->id, "%s", c->id);
        rec->uid_base = c->uid_base;
        sb_paths_free(&c->paths);
        free(c);
        pooled = 1;
        rc = mb_store_sandbox_update(core->store, rec, err);
    } else {
        rc = insert_record(core, rec, err);
        if (rc) return rc;
        mb_sandbox_opts o;
        sb_paths paths;
        sb_opts(core, rec->id, rec->uid_base, p, &o, &paths);
        rc = mb_sandbox_create(&o, &sb, err);
        sb_paths_free(&paths);
        if (rc) mb_err_wrap(err, rc, "cannot create the sandbox");
    }
    if (!rc && !pooled) rc = mb_core__seed(core, rec, err);
    if (rc) {
        mb_err e2;
        if (pooled) {
            mb_gateway_remove_sandbox(core->gw, rec->id);
            free(mb_live_take(core, rec->id));
        }
        if (sb) mb_sandbox_destroy(sb, &e2);
        mark_released(core, rec->id);
        return rc;
    }
    if (!pooled) mb_live_add(core, rec->id, sb, p);
    return MB_OK;
}

int mb_core__sandbox_down(mb_core *core, const mb_sandbox_rec *rec, mb_err *err)
{
    mb_gateway_remove_sandbox(core->gw, rec->id);
    mb_core__egress_release(core, rec->id);
    mb_live *l = mb_live_take(core, rec->id);
    int rc;
    if (l) {
        rc = mb_sandbox_destroy(l->sb, err);
        free(l);
    } else {
        mb_sandbox_opts o;
        sb_paths paths;
        sb_opts(core, rec->id, rec->uid_base, NULL, &o, &paths);
        rc = mb_sandbox_destroy_by_opts(&o, err);
        sb_paths_free(&paths);
    }
    return rc; /* either way the workspace mount point is gone too */
}

typedef struct reset_ctx {
    mb_core *core;
    const mb_sandbox_rec *rec;
    mb_live *live;
    int ran;
} reset_ctx;

/* With every server stopped: kill what else runs inside, then /data back to
 * the seed plus the last initialized archive. */
static int reset_between(void *ctx, mb_err *err)
{
    reset_ctx *r = ctx;
    r->ran = 1;
    int rc = mb_sandbox_reset(r->live->sb, err);
    mb_core__clean_leftovers(r->core, r->rec->id, 0);
    char *ws = mb_core_workspace(r->core, r->rec->id);
    if (!rc) {
        int fd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) rc = mb_err_sys(err, errno, "cannot open the workspace");
        else {
            rc = mb_empty_dir_at(fd, err);
            close(fd);
        }
    }
    if (!rc) rc = mb_core__seed(r->core, r->rec, err);
    char *baseline = mb_core__path_blob(r->core, r->rec->id, "baseline.tar.gz");
    if (!rc && access(baseline, F_OK) == 0) rc = mb_core__extract(r->core, r->rec, baseline, err);
    free(baseline);
    free(ws);
    return rc;
}

int mb_core__sandbox_reset(mb_core *core, const mb_sandbox_rec *rec, mb_err *err)
{
    mb_live *l = mb_live_get(core, rec->id);
    if (!l)
        return mb_err_set(err, MB_ECONFLICT,
                          "sandbox %s is not running (%s); release it and acquire a new one",
                          rec->id, rec->error[0] ? rec->error : "it failed");
    reset_ctx r = {core, rec, l, 0};
    int rc = mb_gateway_restart_sandbox(core->gw, rec->id, reset_between, &r, err);
    if (rc == MB_ENOTFOUND && !r.ran) rc = reset_between(&r, err); /* no servers */
    mb_live_put(core, l);
    return rc;
}

/* --------------------------------------------------- daemon start and stop */

static int keep_live(void *ctx, const char *id)
{
    mb_core *core = ctx;
    mb_live *l = mb_live_get(core, id);
    mb_live_put(core, l);
    return l != NULL;
}

/* Re-attaches every sandbox the store says is running and starts its
 * servers again (in the background); tears down what cannot be adopted. */
static void adopt_all(mb_core *core)
{
    mb_sandbox_rec *recs;
    size_t n;
    if (mb_store_sandbox_list(core->store, NULL, &recs, &n, NULL) != MB_OK) return;
    for (size_t i = 0; i < n; i++) {
        mb_sandbox_rec *rec = &recs[i];
        const mb_profile *p = mb_core__profile(core, rec->benchmark);
        mb_sandbox_opts o;
        sb_paths paths;
        sb_opts(core, rec->id, rec->uid_base, p, &o, &paths);
        mb_sandbox *sb = NULL;
        mb_err err = {0};
        int idle = !strcmp(rec->status, "idle"); /* pool sandboxes are rebuilt, not kept */
        int rc = idle ? MB_ENOTFOUND : mb_sandbox_adopt(&o, &sb, &err);
        if (rc == MB_OK && p) {
            mb_core__clean_leftovers(core, rec->id, 1);
            mb_live_add(core, rec->id, sb, p);
            mb_server_rec *srv;
            size_t ns;
            if (mb_store_server_list(core->store, rec->id, &srv, &ns, NULL) == MB_OK) {
                for (size_t j = 0; j < ns; j++) {
                    const mb_profile_server *ps = mb_profile_server_find(p, srv[j].name);
                    mb_err e2;
                    if (ps && add_server(core, rec->id, ps, &e2) == MB_OK)
                        (void)mb_gateway_start(core->gw, rec->id, ps->name, 0, &e2);
                }
                mb_server_recs_free(srv, ns);
            }
            mb_info("adopted sandbox %s", rec->id);
        } else {
            mb_err e2;
            if (sb) mb_sandbox_close(sb);
            (void)mb_sandbox_destroy_by_opts(&o, &e2);
            mb_core__clean_leftovers(core, rec->id, 1);
            if (idle) {
                snprintf(rec->status, sizeof rec->status, "released");
            } else {
                mb_warn("sandbox %s did not survive the restart: %s", rec->id, err.msg);
                snprintf(rec->status, sizeof rec->status, "error");
                snprintf(rec->error, sizeof rec->error,
                         "the sandbox did not survive a restart of the service (%.*s); release "
                         "it and acquire a new one", (int)(sizeof rec->error / 2), err.msg);
            }
            rec->updated_at = mb_now();
            mb_store_sandbox_update(core->store, rec, NULL);
        }
        sb_paths_free(&paths);
    }
    free(recs);
    char *run = mb_core__path_top(core, "run");
    mb_err err;
    if (mb_sandbox_sweep(run, keep_live, core, &err) != MB_OK)
        mb_warn("sweeping leftover sandboxes: %s", err.msg);
    free(run);
}

size_t mb_core_release_all(mb_core *core)
{
    mb_sandbox_rec *recs;
    size_t n, done = 0;
    if (mb_store_sandbox_list(core->store, NULL, &recs, &n, NULL) != MB_OK) return 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(recs[i].status, "released")) continue;
        mb_err err;
        if (mb_core__release(core, recs[i].id, 0, &err) == MB_OK) done++;
        else mb_warn("release %s at exit: %s", recs[i].id, err.msg);
    }
    free(recs);
    return done;
}

int mb_core__runtime_open(mb_core *core, mb_err *err)
{
    collect_server_env(core);
    core->mcpbox_bin = self_exe();
    if (!core->mcpbox_bin)
        return mb_err_sys(err, errno, "cannot find the mcpbox binary (/proc/self/exe)");
    core->profiles_dir = find_profiles_dir(core);
    int rc = mb_sandbox_exec_copy(core->mcpbox_bin, core->cfg.data_dir, &core->sandbox_bin, err);
    if (!rc) rc = load_profiles(core, err);
    if (!rc) rc = mb_zygote_start(core->mcpbox_bin, &core->zygote, err);
    if (!rc) rc = open_gateway(core, err);
    if (!rc) rc = mb_core__egress_open(core, err);
    if (!rc) adopt_all(core);
    if (!rc) rc = open_pool(core, err);
    return rc;
}

void mb_core__runtime_close(mb_core *core)
{
    mb_pool_free(core->pool);
    core->pool = NULL;
    mb_gateway_destroy(core->gw); /* stops every server process */
    core->gw = NULL;
    mb_core__egress_close(core);
    mb_live *l;
    while ((l = mb_live_take_any(core))) {
        mb_sandbox_close(l->sb); /* the sandbox keeps running for the next start */
        free(l);
    }
    mb_zygote_stop(core->zygote); /* its sandboxes keep running too */
    core->zygote = NULL;
    for (size_t i = 0; i < core->n_profiles; i++) mb_profile_free(core->profiles[i]);
    free(core->profiles);
    core->profiles = NULL;
    core->n_profiles = 0;
    for (char **e = core->server_env; e && *e; e++) free(*e);
    free(core->server_env);
    core->server_env = NULL;
    free(core->profiles_dir);
    free(core->mcpbox_bin);
    free(core->sandbox_bin);
    core->profiles_dir = core->mcpbox_bin = core->sandbox_bin = NULL;
}
