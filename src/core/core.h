/*
 * core.h - the face of the service core: configuration and the sandbox life
 * cycle (acquire, get, list, release, reset, upload, initialize, dump) as the
 * REST API, the reaper and the command line use it. The core owns the store,
 * the signing secret, the data directory layout and the TTL reaper thread.
 *
 * Data directory layout (DIR = --data-dir):
 *   DIR/mcpbox.db            state (keys, sandboxes, servers, blobs)
 *   DIR/secret               signing secret for upload/download URLs
 *   DIR/workspaces/ID/       a sandbox's workspace, mounted at /data inside it
 *   DIR/run/ID/              a sandbox's runtime state (sandbox layer)
 *   DIR/blobs/ID/            upload.tar.gz (last PUT), baseline.tar.gz (last
 *                            initialize, what reset returns to), dump.tar.gz
 *
 * Ownership: every sandbox belongs to the owner of the API key that acquired
 * it; lookups by another owner report "not found", never "forbidden", so ids
 * do not leak.
 */
#ifndef MB_CORE_H
#define MB_CORE_H

#include "sandbox/sandbox.h"
#include "store/store.h"
#include <jansson.h>
#include "util/util.h"

#include <stdint.h>

#define MB_MAX_SEEDS 8
#define MB_MAX_ALLOWED 16

typedef struct mb_seed {
    char *preset;  /* benchmark name, e.g. "MCP_Atlas" */
    char *dir;     /* host directory copied into /data at acquire and reset */
} mb_seed;

typedef struct mb_config {
    char *listen;            /* ADDR:PORT, default 127.0.0.1:8080 */
    char *data_dir;          /* default ./var */
    char *public_url;        /* default http://LISTEN */
    char *profiles_dir;      /* default: profiles/ of the source tree the binary was built
                                in (found from the binary's path), else
                                /usr/share/mcpbox/profiles */
    mb_seed seeds[MB_MAX_SEEDS];
    size_t n_seeds;
    uint64_t max_upload_bytes;    /* compressed upload size; default 4 GiB */
    uint64_t max_expanded_bytes;  /* extracted size; default 4 GiB */
    uint64_t max_entries;         /* members per archive; default 1,000,000 */
    int url_ttl_minutes;          /* signed URL lifetime; default 30 */
    int64_t default_ttl_seconds;  /* default 7200 */
    int64_t released_retention_s; /* released records purged after; default 86400, 0 = kept */
    unsigned header_limit;        /* HTTP header bytes; default 32 KiB */
    unsigned idle_timeout_s;      /* HTTP idle seconds; default 300 */
    char *allowed_origins[MB_MAX_ALLOWED];
    size_t n_allowed_origins;
    int pool_all;                 /* --pool N: idle sandboxes per profile; -1 = unset */
    mb_seed pools[MB_MAX_SEEDS];  /* --pool PROFILE=N (preset = profile, dir = N) */
    size_t n_pools;
    int call_timeout_s;           /* MCP call timeout; default 120 */
    uint64_t max_message_bytes;   /* per JSON-RPC message through the gateway; 64 MiB */
    int start_timeout_s;          /* server start + initialize; default 30 */
    /* Limits (docs/CONFIG.md "Limits"); 0 = unlimited where it says so. */
    int dump_timeout_s;           /* a dump stops after this; default 300 */
    unsigned max_connections;     /* HTTP connections at once; default 4096 */
    unsigned max_conn_per_ip;     /* per client address; default 512, 0 = off */
    unsigned max_anon_conns;      /* not (yet) authenticated; default 2048 */
    unsigned header_timeout_s;    /* request line + headers; default 30 */
    uint64_t min_body_rate;       /* bytes/s a body must average; default 8K */
    uint64_t drain_bytes;         /* a refused body read and dropped; default 4M */
    unsigned drain_timeout_s;     /* ... for this long (then at min_body_rate); 2 */
    uint64_t max_sessions;        /* MCP sessions in all; default 10000 */
    uint64_t max_sessions_sandbox;/* per sandbox; default 1000 */
    uint64_t max_sessions_key;    /* per key owner; default 5000 */
    uint64_t key_max_sandboxes;   /* live sandboxes per key owner; default 1000 */
    uint64_t key_max_acquiring;   /* acquires in progress per key owner; default 128 */
    uint64_t key_max_upload;      /* upload bytes in flight per key owner; default 16G */
    int release_on_exit;          /* --release-on-exit: release every sandbox at shutdown */
    int first_run_key;            /* --first-run-key: make and print a key if none is valid */
    int egress_off;               /* --egress off: only fixture hosts reachable (src/egress) */
    char *egress_fixtures[MB_MAX_ALLOWED]; /* --egress-fixture NAME=IP:PORT */
    size_t n_egress_fixtures;
    int no_runtime;               /* no zygote, gateway or sandboxes: the store, keys and
                                     URLs only, every acquire refused (fuzz/fuzz_http) */
    char *db;                     /* --db: an SQLite file or postgresql:// URL; default
                                     DATA_DIR/mcpbox.db */
    int node;                     /* --node N: this node's ordinal of many (0..255), needs a
                                     PostgreSQL --db; -1 = one machine */
    char *node_url;               /* --node-url: where other nodes reach this one;
                                     default http://LISTEN */
    int64_t capacity;             /* --capacity: sandboxes this node is meant to hold
                                     (placement's denominator); default 100 */
    int metrics_off;              /* --metrics off: no counting for GET /metrics */
    int call_log_entries;         /* --call-log N: calls kept per sandbox; 0 = off */
    int log_format;               /* --log-format: an mb_log_format */
    int no_mail;                  /* --no-mail: no mail service (src/mail) */
    char *mail_users;             /* --mail-users FILE */
    char *mail_imap;              /* --mail-imap ADDR:PORT, default 127.0.0.1:1143 */
    char *mail_smtp;              /* --mail-smtp ADDR:PORT, default 127.0.0.1:1587 */
    char *canvas_listen;          /* --canvas-listen; NULL = 127.0.0.1:10001, "off" */
    char *canvas_users;           /* --canvas-users FILE (src/canvas) */
    char *canvas_https;           /* --canvas-https ADDR:PORT, with canvas_tls; NULL = none */
    char *canvas_tls;             /* --canvas-tls FILE: PEM certificate and key */
    char *env_api_key;            /* MCPBOX_API_KEY */
    char *env_api_key_owner;      /* MCPBOX_API_KEY_OWNER, default "default" */
} mb_config;

/* Defaults, then MCPBOX_* environment, then command-line flags. Prints usage
 * errors itself; returns 0, or 2 for a usage error. */
int mb_config_parse(mb_config *cfg, int argc, char **argv);
void mb_config_free(mb_config *cfg);

/* ------------------------------------------------------------------ core */

typedef struct mb_core mb_core;

/* The 16 server names of Klavis's LocalSandboxMCPServer enum, in its order. */
extern const char *const mb_server_names[];
extern const size_t mb_n_server_names;
/* The benchmark names of BenchmarkEnum. */
extern const char *const mb_benchmark_names[];
extern const size_t mb_n_benchmark_names;
int mb_is_server_name(const char *name);
int mb_is_benchmark_name(const char *name);

int mb_core_open(const mb_config *cfg, mb_core **out, mb_err *err);
/* Starts what runs on its own (the warm pool), after the node services are
 * registered (mb_core_service_add) and before requests are served. Without
 * a runtime it does nothing. */
int mb_core_start(mb_core *core, mb_err *err);
void mb_core_close(mb_core *core);
/* Releases every sandbox that is not released yet (as DELETE does), for
 * `serve --release-on-exit`; returns how many. Call with no requests coming. */
size_t mb_core_release_all(mb_core *core);
mb_store *mb_core_store(mb_core *core);
const mb_config *mb_core_config(mb_core *core);

typedef struct mb_acquire_req {
    const char *owner;
    const char *const *servers;  /* names, validated by the caller */
    size_t n_servers;
    const char *benchmark;       /* NULL = none */
    const char *test_account_email;
    int64_t ttl_seconds;         /* -1 = never expires */
    /* The request's egress allow-list as compact JSON (["a.com",...]), NULL =
     * none given; each entry checked with mb_core_egress_refusal first. */
    const char *egress_json;
} mb_acquire_req;

/* NULL if egress allow-list `entry` (well-formed, mb_egress_entry_valid) lies
 * within the list the profile of `benchmark` gives at least one of `servers`
 * (a request may narrow, never widen); else the refusal, "Value error, ..."
 * (freed by the caller). */
char *mb_core_egress_refusal(mb_core *core, const char *benchmark, const char *const *servers,
                             size_t n_servers, const char *entry);

int mb_core_acquire(mb_core *core, const mb_acquire_req *req, mb_sandbox_rec *out, mb_err *err);

/* Node-wide services some servers stand on (services.c): mail for
 * poste_email_toolathlon, Canvas for canvas, a cloud emulator for
 * google_cloud. Registered before the daemon serves (not thread-safe
 * afterwards); each is told about the sandboxes whose servers include
 * `server`:
 *   attach  at acquire, after the record exists and before the servers
 *           start: take claims (mb_store_claim_*), create state. An error
 *           fails the acquire with its code (409 for a claim another sandbox
 *           holds) after detach has been called for this service.
 *   detach  at release, and when an acquire fails: remove everything the
 *           sandbox had; idempotent, must tolerate a partial attach.
 *   reset   at reset (optional): restore the state after the last
 *           initialize.
 * Sandboxes released while the daemon was down get no detach: a service
 * reconciles when it starts (state of ids that mb_store_sandbox_get does not
 * report live is its to remove). */
#define MB_MAX_SERVICES 8
typedef struct mb_core_service {
    const char *server;
    void *ctx;
    int (*attach)(void *ctx, const mb_sandbox_rec *rec, const mb_acquire_req *req, mb_err *err);
    void (*detach)(void *ctx, const mb_sandbox_rec *rec);
    int (*reset)(void *ctx, const mb_sandbox_rec *rec, mb_err *err);
    /* Optional: a host directory (made by bind_dir, freed by the caller)
     * bound read-only at bind_inside (under /mnt) in every sandbox whose
     * profile offers `server`, e.g. the sockets through which it reaches the
     * service. Called when the sandbox is created (also for the warm pool). */
    const char *bind_inside;
    char *(*bind_dir)(void *ctx, const char *sandbox_id);
} mb_core_service;
/* Only between mb_core_open and mb_core_start: the table is read without a
 * lock afterwards (MB_ECONFLICT once started). */
int mb_core_service_add(mb_core *core, const mb_core_service *svc, mb_err *err);
/* The ctx of the service registered for `server`, or NULL. */
void *mb_core_service_ctx(mb_core *core, const char *server);
/* A live sandbox of this owner, or MB_ENOTFOUND. */
int mb_core_get(mb_core *core, const char *owner, const char *id, mb_sandbox_rec *out,
                mb_err *err);
/* Releases; a sandbox already released is success (idempotent for its owner). */
int mb_core_release(mb_core *core, const char *owner, const char *id, int is_ttl, mb_err *err);
int mb_core_reset(mb_core *core, const char *owner, const char *id, mb_err *err);

/* Per-key budgets (quota.c; limits in mb_config). Keys of one owner share
 * them. A refusal is MB_ELIMIT (429) with *retry_after set in seconds.
 * acquire_begin counts an acquire in progress for `owner` (checks the
 * acquires in progress and the live sandboxes); acquire_end ends it. */
int mb_core_acquire_begin(mb_core *core, const char *owner, unsigned *retry_after, mb_err *err);
void mb_core_acquire_end(mb_core *core, const char *owner);
/* One upload per sandbox at a time (MB_ECONFLICT otherwise), `bytes`
 * counted against the owner's upload bytes in flight. upload_end, with the
 * same arguments, ends it. */
int mb_core_upload_begin(mb_core *core, const char *id, const char *owner, uint64_t bytes,
                         unsigned *retry_after, mb_err *err);
void mb_core_upload_end(mb_core *core, const char *id, const char *owner, uint64_t bytes);

/* Upload: where a PUT for this sandbox writes, and how it is committed. */
char *mb_core_upload_tmp_path(mb_core *core, const char *id);
int mb_core_upload_commit(mb_core *core, const char *id, const char *tmp_path, uint64_t size,
                          mb_err *err);
/* Extracts the last upload into the workspace. MB_ECONFLICT before any upload. */
int mb_core_initialize(mb_core *core, const char *owner, const char *id, mb_err *err);
/* Writes DIR/blobs/ID/dump.tar.gz from the workspace. */
int mb_core_dump(mb_core *core, const char *owner, const char *id, mb_err *err);
/* Opens the last dump for reading; *size set. MB_ENOTFOUND if none. */
int mb_core_open_dump(mb_core *core, const char *id, int *fd, uint64_t *size, mb_err *err);
/* Checks that a sandbox id is live (any owner), for signed-URL routes. */
int mb_core_live(mb_core *core, const char *id, mb_sandbox_rec *out, mb_err *err);

/* The base of every URL handed to clients, without a trailing slash. */
const char *mb_core_public_url(mb_core *core);
/* Replaces it (serve sets it once the real port is known). */
void mb_core_set_public_url(mb_core *core, const char *url);

/* "{public_url}/{server}/mcp/?local_sandbox_id={id}"; freed by the caller. */
char *mb_core_mcp_url(mb_core *core, const char *server, const char *id);
/* A signed absolute URL for METHOD on PATH, valid for the configured minutes. */
char *mb_core_signed_url(mb_core *core, const char *method, const char *path);
int mb_core_verify_url(mb_core *core, const char *method, const char *path, const char *expires,
                       const char *signature, mb_err *err);

/* Host path of a sandbox's /data; freed by the caller. */
char *mb_core_workspace(mb_core *core, const char *id);
/* Host path of FILE in a sandbox's service state directory (/.mcpbox/state
 * inside), or, with baseline, of its copy after the last initialize. */
char *mb_core_service_state(mb_core *core, const char *id, const char *file, int baseline);
/* The project database of the live sandbox whose Google Cloud project id
 * this is (gcloud.c), or NULL. */
char *mb_core_gcloud_db(mb_core *core, const char *project);
/* Registers the Google Cloud project as a node service (gcloud.c). */
int mb_core_gcloud_service(mb_core *core, mb_err *err);

/* The warm pool per profile, {"PROFILE": {"target", "idle", "creating",
 * "claimed", "misses", "failures", "last_error"?}}, or NULL without --pool.
 * Owned by the caller. */
json_t *mb_core_pool_info(mb_core *core);

/* The MCP gateway serving every `/{server}/mcp` URL (owned by the core). */
struct mb_gateway *mb_core_gateway(mb_core *core);

/* Live readiness and drift of one server of a sandbox (see mb_gateway_info):
 * *meta (owned by the caller, may be NULL) and *ready. MB_ENOTFOUND if the
 * server is not running in that sandbox. */
int mb_core_server_state(mb_core *core, const char *sandbox_id, const char *server,
                         json_t **meta, int *ready);

/* ---- observability (observe.c; docs/OBSERVABILITY.md) ---- */

/* Appends the Prometheus text exposition of everything: the registry's
 * counters and histograms, the sandboxes by status and profile, the warm
 * pool, and per-sandbox memory, pids, CPU and workspace bytes of the
 * sandboxes of `owner` only (a sandbox id is a capability: other owners'
 * ids are never shown). */
void mb_core_metrics(mb_core *core, const char *owner, mb_buf *out);
/* The last hour minute by minute (mb_metrics_history), {} when metrics are off. */
json_t *mb_core_metrics_history(mb_core *core);
/* The call log of a live sandbox of this owner (mb_calllog_json), or
 * MB_ENOTFOUND. */
int mb_core_calls(mb_core *core, const char *owner, const char *id, uint64_t after,
                  size_t limit, json_t **out, mb_err *err);
/* Writes DIR/blobs/ID/calls.jsonl (the call log as JSON Lines) beside the
 * dump, for GET /local-sandbox/ID/dump?include_calls=true. */
int mb_core_dump_calls(mb_core *core, const char *owner, const char *id, mb_err *err);
/* Opens it for reading (MB_ENOTFOUND if never written). */
int mb_core_open_calls(mb_core *core, const char *id, int *fd, uint64_t *size, mb_err *err);
/* Memory, pids, CPU and disk of a live sandbox of this owner. */
int mb_core_sandbox_stats(mb_core *core, const char *owner, const char *id,
                          mb_sandbox_stats *out, mb_err *err);

/* ---- what is hosted (hosted.c) ---- */

/* Whether the profile of `benchmark` (NULL/"" = none) offers `server`. */
int mb_core_offers(mb_core *core, const char *benchmark, const char *server);
/* "a, b, c": the servers that profile offers, in its order; freed by the caller. */
char *mb_core_offered(mb_core *core, const char *benchmark);
/* The value of `key` in the environment the profile gives `server`, or NULL
 * (borrowed; valid while the core is open). */
const char *mb_core_server_env(mb_core *core, const char *benchmark, const char *server,
                               const char *key);
/* The profile's seed.when_missing text when no --seed serves that benchmark,
 * else NULL; freed by the caller. */
char *mb_core_seed_note(mb_core *core, const char *benchmark);
/* Runs fn(ctx, rec) under sandbox id's lock, with its record read under the
 * lock (404 when it is not the owner's or was released meanwhile): what a
 * server's initialize / dump hook does with the sandbox's node-service state,
 * so that it never races a release, a reset or another initialize. */
typedef int (*mb_core_locked_fn)(void *ctx, const mb_sandbox_rec *rec, mb_err *err);
int mb_core_with_lock(mb_core *core, const char *owner, const char *id, mb_core_locked_fn fn,
                      void *ctx, mb_err *err);
/* Whether the calling thread holds sandbox id's lock (the contract of
 * *_locked functions outside core: mb_assert(mb_core_lock_held(core, id))). */
int mb_core_lock_held(mb_core *core, const char *id);
/* Runs argv inside a live sandbox of this owner (as its servers run), with
 * `in` on stdin; appends its stdout (at most out_cap bytes) to *out. A
 * non-zero exit, a timeout or more output is an error. Serialised with the
 * sandbox's other operations. */
int mb_core_exec(mb_core *core, const char *owner, const char *id, const char *const *argv,
                 const void *in, size_t in_len, size_t out_cap, mb_buf *out, mb_err *err);

#endif /* MB_CORE_H */
