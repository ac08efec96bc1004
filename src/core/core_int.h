/*
 * core_int.h - what the core's files share: the mb_core structure.
 * Include core.h from outside the layer.
 */
#ifndef MB_CORE_INT_H
#define MB_CORE_INT_H

#include "auth/auth.h"
#include "core/core.h"
#include "egress/egress.h"
#include "gateway/gateway.h"
#include "profile/profile.h"
#include "metrics/metrics.h"
#include "sandbox/sandbox.h"

#include <pthread.h>

#define MB_LOCK_BUCKETS 256
#define MB_UID_FIRST 0x10000000LL   /* first host uid handed to sandboxes */
#define MB_UID_STRIDE 65536LL       /* uids per sandbox */
#define MB_LIVE_BUCKETS 256
/* The directory inside a sandbox's workspace tmpfs that is its /data; the
 * rest of the tmpfs (archive staging) is invisible from inside. */
#define MB_DATA_SUBDIR "data"

/* A running sandbox: the handle the sandbox layer gave us. Found by id in
 * core->live; `refs` counts the table's reference plus lookups in flight, so
 * that release can wait for them before destroying the handle. */
typedef struct mb_live {
    char id[37];
    mb_sandbox *sb;
    const mb_profile *profile;
    int refs;
    struct mb_live *next;
} mb_live;

struct mb_core {
    mb_config cfg;                   /* a private copy (strings borrowed from the caller) */
    mb_store *store;
    unsigned char secret[MB_SECRET_LEN];
    char *public_url;                /* without a trailing slash */
    char *data_dir;                  /* absolute; cfg.data_dir points here */
    int runtime_open;
    mb_metrics *metrics;             /* NULL with --metrics off (observe.c) */
    mb_calllog *calls;               /* every sandbox's MCP calls (observe.c) */

    /* Operations on one sandbox (initialize, dump, reset, release, upload
     * commit) are serialised by that sandbox's own lock (locks.c). */
    pthread_mutex_t locks_lock;
    struct mb_sblock *locks[MB_LOCK_BUCKETS];

    /* Per-owner budgets and uploads in progress (quota.c). */
    pthread_mutex_t quota_lock;
    struct mb_quota_ent *quota_owners, *quota_uploads;

    /* Runtime (runtime.c and the files it names): this binary's path (bound into every sandbox),
     * the loaded profiles, the gateway serving every MCP URL, the warm pool
     * and the table of running sandboxes. */
    char *mcpbox_bin;
    char *sandbox_bin; /* its exec-only copy that sandboxes run (mb_sandbox_exec_copy) */
    /* The server executables' exec-only copies (srvbins.c): their directory
     * (NULL: none, every server runs from sandbox_bin) and, NULL-terminated,
     * the path inside sandboxes of each there (/.mcpbox/bin/mcpbox-GROUP). */
    char *server_bin_dir;
    char **server_groups;
    char *profiles_dir;
    mb_profile **profiles;
    size_t n_profiles;
    char **server_env;              /* ASAN_OPTIONS & co. passed through to servers */
    mb_zygote *zygote;              /* clones every sandbox's init */
    mb_gateway *gw;
    mb_pool *pool;
    mb_egress *egress;              /* the proxy of sandboxes whose profile allows egress */
    pthread_mutex_t alloc_lock;     /* picking a uid range + inserting its record */
    pthread_mutex_t live_lock;
    pthread_cond_t live_cv;
    mb_live *live[MB_LIVE_BUCKETS];

    /* Node services (services.c): written between open and mb_core_start
     * (`started`), read-only after, so read without a lock. */
    int started;
    mb_core_service services[MB_MAX_SERVICES];
    size_t n_services;

    /* The reaper sleeps on `wake` until the next deadline (at most 1 s) or
     * the stop. */
    pthread_t reaper;
    pthread_mutex_t reaper_lock;
    pthread_cond_t wake;
    int stopping;
};

/* locks.c: the lock of one sandbox id (created on demand, freed when the
 * last holder or waiter leaves). Never held while waiting on another
 * sandbox's lock. */
typedef struct mb_sblock mb_sblock;
mb_sblock *mb_core__lock(mb_core *core, const char *id);
void mb_core__unlock(mb_core *core, mb_sblock *l);
/* Takes the lock of sandbox `id` and reads its record under it (owner NULL:
 * any owner), so that an operation never acts on a sandbox released while it
 * waited. On error (404 when released or not the owner's) no lock is held. */
int mb_core__lock_rec(mb_core *core, const char *owner, const char *id, mb_sandbox_rec *rec,
                      mb_sblock **lock, mb_err *err);
/* Entries in the table (held or waited on), for tests. */
size_t mb_core__locks_in_use(mb_core *core);
typedef struct mb_quota_ent mb_quota_ent;
/* quota.c: frees the counters (at close). */
void mb_core__quota_free(mb_core *core);
int mb_core__start_reaper(mb_core *core, mb_err *err);
/* services.c: the node services of a sandbox being acquired (by the request's
 * servers), released or reset (by its recorded servers). */
int mb_core__services_attach(mb_core *core, const mb_sandbox_rec *rec, const mb_acquire_req *req,
                             mb_err *err);
void mb_core__services_detach(mb_core *core, const mb_sandbox_rec *rec);
/* Detaches by the request's servers: an acquire failing after attach. */
void mb_core__services_undo(mb_core *core, const mb_sandbox_rec *rec, const mb_acquire_req *req);
int mb_core__services_reset(mb_core *core, const mb_sandbox_rec *rec, mb_err *err);
void mb_core__stop_reaper(mb_core *core);
/* Release without owner checks (the reaper, start-up expiry). */
int mb_core__release(mb_core *core, const char *id, int is_ttl, mb_err *err);

/* paths.c: every path under the data dir DIR (caller frees). */
/* DIR/NAME: a top-level entry (run, workspaces, blobs, egress, mcpbox.db). */
char *mb_core__path_top(mb_core *core, const char *name);
/* DIR/run/ID: the sandbox layer's state dir. */
char *mb_core__path_run(mb_core *core, const char *id);
/* DIR/workspaces/ID: the mount point of the sandbox's workspace tmpfs. */
char *mb_core__path_volume(mb_core *core, const char *id);
/* DIR/workspaces/ID/.logs, or the file FILE in it (file non-NULL). */
char *mb_core__path_logs(mb_core *core, const char *id, const char *file);
/* DIR/blobs/ID, or the blob NAME in it (name non-NULL). */
char *mb_core__path_blob(mb_core *core, const char *id, const char *name);
/* DIR/egress/ID: the proxy sockets' directory. */
char *mb_core__path_egress(mb_core *core, const char *id);

/* live.c: the table of running sandboxes. get() takes a reference that put()
 * drops; take() removes the entry and waits until no lookup holds it. */
void mb_core__live_add(mb_core *core, const char *id, mb_sandbox *sb, const mb_profile *profile);
mb_live *mb_core__live_get(mb_core *core, const char *id);
void mb_core__live_put(mb_core *core, mb_live *l);
mb_live *mb_core__live_take(mb_core *core, const char *id);
/* Removes and returns any one entry (NULL when empty), for shutdown. */
mb_live *mb_core__live_take_any(mb_core *core);

/* runtime.c: starting and stopping the runtime; the loaded profiles. */
int mb_core__runtime_open(mb_core *core, mb_err *err);
void mb_core__runtime_close(mb_core *core);
const mb_profile *mb_core__profile(mb_core *core, const char *benchmark);
/* srvbins.c: the server executables (mcpbox-GROUP) found beside this binary,
 * copied exec-only into DATA/sandbox-bin, bound at /.mcpbox/bin; and the
 * argv a server spec runs with: `/.mcpbox/mcpbox mcp NAME ...` becomes
 * `/.mcpbox/bin/mcpbox-GROUP mcp NAME ...` when NAME's group has a copy
 * (a new array the caller frees, borrowing the strings), else NULL. */
int mb_core__srvbins_open(mb_core *core, mb_err *err);
void mb_core__srvbins_close(mb_core *core);
const char **mb_core__srvbin_argv(mb_core *core, const char *const *argv);
/* The host path of mcpbox-zygote (found as the server executables are), else
 * of this binary. Caller frees. */
char *mb_core__zygote_bin(mb_core *core);
/* gwhooks.c: creates core->gw with the core's spawn/log/tenant hooks. */
int mb_core__gateway_open(mb_core *core, mb_err *err);
/* pool.c: creates core->pool when --pool/--pool-all ask for one. */
int mb_core__pool_open(mb_core *core, mb_err *err);
/* Claims a readied sandbox of profile `key` (MB_ENOTFOUND: none idle, or no
 * pool): rec gets its id and uid range. */
int mb_core__pool_claim(mb_core *core, const char *key, mb_sandbox_rec *rec, mb_sandbox **sb);
/* adopt.c: re-attaches the sandboxes the store says are running (at start). */
void mb_core__adopt_all(mb_core *core);

/* sandboxes.c: what a mb_sandbox_opts points to (freed by _free). */
typedef struct mb_sb_paths {
    char *state;
    char *volume;
    char *egress;
    char *svc_dirs[MB_MAX_SERVICES]; /* services' bind_dir */
    mb_sandbox_bind *binds;
} mb_sb_paths;
void mb_core__sb_paths_free(mb_sb_paths *p);
/* services.c: adds the binds of the services profile p offers (o->binds has
 * room for MB_MAX_SERVICES more). */
void mb_core__services_binds(mb_core *core, const char *id, const mb_profile *p,
                             mb_sandbox_opts *o, mb_sb_paths *paths);
/* The sandbox layer's options for sandbox `id` (profile p may be NULL: only
 * what a destroy or adopt needs). */
void mb_core__sb_opts(mb_core *core, const char *id, int64_t uid_base, const mb_profile *p,
                      mb_sandbox_opts *o, mb_sb_paths *paths);
/* Picks a free uid range and inserts the record, atomically with respect to
 * every other picker. */
int mb_core__insert_record(mb_core *core, mb_sandbox_rec *rec, mb_err *err);
void mb_core__mark_released(mb_core *core, const char *id);

/* servers.c: one server to register and start (without waiting for it). */
typedef struct mb_start_job {
    mb_core *core;
    const char *id;
    const mb_profile_server *ps;
    /* A server registered already (a pool sandbox's) is registered again
     * only when this is set: the acquire narrowed its egress allow-list, the
     * one thing of its registration an acquire can change. */
    int respec;
    int ok;
    mb_err err;
} mb_start_job;
void mb_core__start_servers(mb_start_job *jobs, size_t n);
/* workers.c: runs fn on each of the n elements of args (size bytes apart),
 * in parallel on the daemon's worker threads and the calling one; returns
 * when all are done. */
void mb_core__parallel(void (*fn)(void *), void *args, size_t size, size_t n);
/* Registers one server of sandbox `id` with the gateway (not started). */
int mb_core__add_server(mb_core *core, const char *id, const mb_profile_server *ps, mb_err *err);
/* Creates (or claims from the pool) the sandbox of `rec`, whose id and
 * uid_base it may replace with a pooled sandbox's, and fills /data with the
 * benchmark's seed. On failure nothing is left running. */
int mb_core__sandbox_up(mb_core *core, mb_sandbox_rec *rec, mb_err *err);
/* Registers and starts the servers of a sandbox that the profile offers and
 * waits until they are ready; fills each record's status and metadata. */
void mb_core__servers_up(mb_core *core, const mb_sandbox_rec *rec, mb_server_rec *srv, size_t n);
/* Stops the servers and destroys the sandbox (idempotent). */
int mb_core__sandbox_down(mb_core *core, const mb_sandbox_rec *rec, mb_err *err);
/* Reset: stops the servers, kills every process inside, restores /data
 * (seed + last initialized archive) and starts the servers again. */
int mb_core__sandbox_reset(mb_core *core, const mb_sandbox_rec *rec, mb_err *err);
/* Copies the benchmark's --seed directory into /data (nothing without one). */
int mb_core__seed(mb_core *core, const mb_sandbox_rec *rec, mb_err *err);
/* leftovers.c: removes staging dirs and partial uploads/dumps a killed daemon
 * left (all of them at_start; at reset only those no transfer can own). */
void mb_core__clean_leftovers(mb_core *core, const char *id, int at_start);
/* Extracts an archive file into /data (transfer.c). */
int mb_core__extract(mb_core *core, const mb_sandbox_rec *rec, const char *archive, mb_err *err);

/* observe.c: metrics and the call log. open makes them (at core open),
 * close frees them (after the gateway is gone). op_start/op_done time one
 * life-cycle operation; sandboxes_changed samples the live count after an
 * acquire or release. */
void mb_core__observe_open(mb_core *core);
void mb_core__observe_close(mb_core *core);
int64_t mb_core__op_start(void);
void mb_core__op_done(mb_core *core, mb_metrics_op op, int64_t started, int rc);
void mb_core__sandboxes_changed(mb_core *core);
/* The gateway's observers (gwhooks.c sets them when observe is on). */
void mb_core__on_call(void *ctx, const mb_gateway_call *c);
void mb_core__on_restart(void *ctx, const char *sandbox_id, const char *server);

/* egress.c: the proxy sockets of servers with an "egress" allow-list. */
int mb_core__egress_open(mb_core *core, mb_err *err);
void mb_core__egress_close(mb_core *core);
int mb_core__profile_has_egress(const mb_profile *p);
/* DIR/egress/ID (created with create=1). Caller frees. */
char *mb_core__egress_dir(mb_core *core, const char *id, int create);
/* Opens ps's proxy socket when its entry has "egress"; returns the
 * "MCPBOX_EGRESS_PROXY=..." environment entry for it (caller frees), or NULL. */
char *mb_core__egress_server(mb_core *core, const char *id, const mb_profile_server *ps,
                             mb_err *err);
void mb_core__egress_release(mb_core *core, const char *id);

#endif
