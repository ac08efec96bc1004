/*
 * store.h - the face of the state layer: API keys, sandboxes, their servers
 * and their blobs (uploaded and dumped archives), kept in one SQLite file
 * under the data directory, and the exclusive names (claims) live sandboxes
 * hold. With many nodes the same records live in one PostgreSQL database
 * (mb_store_open with a postgresql:// URL), which also keeps the nodes.
 *
 * A store handle is safe to share between threads: every call takes the
 * handle's mutex for the length of its statement(s). Records are plain
 * structs copied in and out; nothing returned points into the store.
 *
 * Sandbox life cycle as recorded here:
 *   idle      created (e.g. by the warm pool) and not yet claimed
 *   occupied  claimed by an owner through acquire
 *   error     its runtime failed; it is kept so the owner can see and release it
 *   released  gone; kept as a tombstone so a repeated DELETE stays a 200 for
 *             its owner, never listed or returned by get, until
 *             mb_store_purge_released removes it (serve's --released-retention)
 */
#ifndef MB_STORE_H
#define MB_STORE_H

#include "util/util.h"

#include <jansson.h>
#include <stdint.h>

typedef struct mb_store mb_store;

/* path: an SQLite file, or a PostgreSQL connection URL (postgresql://... or
 * postgres://...). Either is created or brought up to the current schema. */
int mb_store_open(const char *path, mb_store **out, mb_err *err);
void mb_store_close(mb_store *st);
/* Whether path names a PostgreSQL database rather than an SQLite file. */
int mb_store_is_url(const char *path);
/* Makes this handle node `ordinal` of many (PostgreSQL only; -1, the
 * default, is one machine). Sandboxes inserted from then on belong to that
 * node; the node's own work (expired, next_deadline, free_uid_base, and list
 * with a NULL owner) sees only its sandboxes, and its uid slots are
 * first + (ordinal % 16 + 16*k) * stride so that up to 16 nodes may share a
 * host. list with an owner, count, get and claims span every node. */
void mb_store_set_node(mb_store *st, int ordinal);

/* ------------------------------------------------------------------ keys */

#define MB_OWNER_MAX 64

typedef struct mb_key_rec {
    char id[37];
    char owner[MB_OWNER_MAX];
    char name[64];
    char prefix[16];      /* the first characters of the key, for people */
    double created_at;
    double revoked_at;    /* 0 while valid */
} mb_key_rec;

/* Stores a key by its SHA-256 hex digest. Adding a digest that exists already
 * is success and leaves the record as it is (so MCPBOX_API_KEY is idempotent). */
int mb_store_key_add(mb_store *st, const char *hash_hex, const mb_key_rec *rec, mb_err *err);
/* Finds the valid key with this digest: MB_ENOTFOUND if none, MB_EDENIED if revoked. */
int mb_store_key_find(mb_store *st, const char *hash_hex, mb_key_rec *out, mb_err *err);
/* All keys, newest first; *out is an array of *n records, freed by the caller. */
int mb_store_key_list(mb_store *st, mb_key_rec **out, size_t *n, mb_err *err);
/* Revokes by id or by unique prefix of the key. */
int mb_store_key_revoke(mb_store *st, const char *id_or_prefix, mb_err *err);

/* ------------------------------------------------------------- sandboxes */

#define MB_SANDBOX_EGRESS_MAX 4096

typedef struct mb_sandbox_rec {
    char id[37];
    char owner[MB_OWNER_MAX];  /* empty for an unclaimed pool sandbox */
    char benchmark[32];        /* empty = null */
    char status[16];           /* idle | occupied | error | released */
    char test_account_email[256];
    double created_at;
    double updated_at;
    int64_t ttl_seconds;       /* -1 = null (never expires) */
    double deadline;           /* 0 = none; otherwise wall-clock expiry */
    int64_t uid_base;          /* host uid mapped to root inside the sandbox */
    int has_upload;            /* an archive was PUT and not yet consumed */
    double initialized_at;     /* 0 = never initialized */
    char error[256];           /* why status is error */
    /* The acquire request's egress allow-list as compact JSON (["a.com",...]),
     * which narrows the profile's per server; "" = none given (the profile's). */
    char egress[MB_SANDBOX_EGRESS_MAX];
} mb_sandbox_rec;

int mb_store_sandbox_insert(mb_store *st, const mb_sandbox_rec *rec, mb_err *err);
/* Any status, tombstones included; MB_ENOTFOUND if the id was never seen. */
int mb_store_sandbox_get(mb_store *st, const char *id, mb_sandbox_rec *out, mb_err *err);
int mb_store_sandbox_update(mb_store *st, const mb_sandbox_rec *rec, mb_err *err);
/* Sandboxes not released; of one owner, or of everyone when owner is NULL. Oldest first. */
int mb_store_sandbox_list(mb_store *st, const char *owner, mb_sandbox_rec **out, size_t *n,
                          mb_err *err);
/* How many sandboxes of this owner are occupied (live, not in error); with
 * owner NULL, of everyone (this node's, with many nodes, as sandbox_list). */
int mb_store_sandbox_count(mb_store *st, const char *owner, size_t *n, mb_err *err);
/* Ids of live sandboxes whose deadline is at or before `now`. */
int mb_store_sandbox_expired(mb_store *st, double now, mb_sandbox_rec **out, size_t *n,
                             mb_err *err);
/* The earliest deadline among live sandboxes, or 0 when none has one. */
double mb_store_next_deadline(mb_store *st);
/* The lowest uid_base of the form first + k*stride that no live sandbox uses. */
int mb_store_free_uid_base(mb_store *st, int64_t first, int64_t stride, int64_t *out,
                           mb_err *err);
/* Removes up to `max` tombstones (status released) last updated before
 * `before`, oldest first, with every row that belongs to them (servers,
 * blobs, claims), in one transaction; *n: how many sandboxes went. Live,
 * idle and error records are never touched. Call again while *n == max: a
 * backlog goes in batches, each holding the store briefly. Once purged, an
 * id reads as never seen (MB_ENOTFOUND). */
int mb_store_purge_released(mb_store *st, double before, size_t max, size_t *n, mb_err *err);

/* --------------------------------------------------------------- servers */

typedef struct mb_server_rec {
    char id[37];
    char sandbox_id[37];
    char name[48];
    char status[16];
    double updated_at;
    json_t *metadata;   /* owned references; NULL = null */
    json_t *auth_data;
    json_t *tags;
} mb_server_rec;

int mb_store_server_insert(mb_store *st, const mb_server_rec *rec, mb_err *err);
/* recs[0..n) in one transaction (one commit instead of n): all or none. */
int mb_store_server_insert_all(mb_store *st, const mb_server_rec *recs, size_t n, mb_err *err);
int mb_store_server_update(mb_store *st, const mb_server_rec *rec, mb_err *err);
/* In insertion order. Free with mb_server_recs_free. */
int mb_store_server_list(mb_store *st, const char *sandbox_id, mb_server_rec **out, size_t *n,
                         mb_err *err);
void mb_server_recs_free(mb_server_rec *recs, size_t n);

/* ----------------------------------------------------------------- blobs */

typedef struct mb_blob_rec {
    char sandbox_id[37];
    char kind[16];       /* upload | dump | baseline */
    char path[1024];
    uint64_t size;
    double created_at;
} mb_blob_rec;

/* Replaces the blob of that (sandbox, kind). */
int mb_store_blob_put(mb_store *st, const mb_blob_rec *rec, mb_err *err);
int mb_store_blob_get(mb_store *st, const char *sandbox_id, const char *kind, mb_blob_rec *out,
                      mb_err *err);
int mb_store_blob_delete(mb_store *st, const char *sandbox_id, const char *kind, mb_err *err);

/* ---------------------------------------------------------------- claims */

/* Exclusive names held by a live sandbox (kind: "mail-domain", "canvas-tokens",
 * "gcp-project", ...; value: at most a few hundred bytes, compared exactly).
 * A claim whose holder is released is stale and taken over.
 *
 * _take: MB_OK if sandbox_id now holds it (again); MB_ECONFLICT if another
 * live sandbox does (its id in holder, optional). _holder: the live holder or
 * MB_ENOTFOUND. _list: the values of one kind a sandbox holds, oldest first,
 * as a NULL-terminated list freed with mb_strv_free. _drop: every claim of
 * the sandbox (kind NULL) or of one kind. */
int mb_store_claim_take(mb_store *st, const char *kind, const char *value, const char *sandbox_id,
                        char holder[37], mb_err *err);
int mb_store_claim_holder(mb_store *st, const char *kind, const char *value, char holder[37],
                          mb_err *err);
int mb_store_claim_list(mb_store *st, const char *sandbox_id, const char *kind, char ***out,
                        mb_err *err);
int mb_store_claim_drop(mb_store *st, const char *sandbox_id, const char *kind, mb_err *err);

/* ----------------------------------------------------------------- nodes */

/* Nodes of a cluster (PostgreSQL only; SQLite answers MB_EINVAL). Times are
 * the database's clock, so nodes' clocks need not agree. */
typedef struct mb_node_rec {
    int ordinal;
    char url[256];       /* where other nodes reach it, e.g. http://10.0.0.2:8080 */
    int64_t capacity;    /* sandboxes it is meant to hold */
    int64_t load;        /* _list: its sandboxes not released */
    double age;          /* _list: seconds since its last heartbeat */
    int up;              /* _list: age below fresh_s */
} mb_node_rec;

/* Records (or refreshes) the node's URL and capacity and its heartbeat. */
int mb_store_node_beat(mb_store *st, const mb_node_rec *rec, mb_err *err);
/* The nodes' shared secret (64 hex digits): the first node to ask stores
 * `proposal` (64 hex digits of its own randomness), every node gets that
 * first one. It authenticates what nodes say to each other (forwarded
 * requests, src/cluster/forward.c); it never leaves the database and the
 * nodes' memory. PostgreSQL only. */
int mb_store_cluster_secret(mb_store *st, const char *proposal, char out[65], mb_err *err);
/* Every node known, by ordinal, with its load and whether it is up (a
 * heartbeat within fresh_s seconds). */
int mb_store_node_list(mb_store *st, double fresh_s, mb_node_rec **out, size_t *n, mb_err *err);
/* The orphan sweep, run by one node at a time (a PostgreSQL advisory lock;
 * *n = 0 when another node holds it): sandboxes of nodes not up (no
 * heartbeat within fresh_s) whose TTL passed, or of nodes never recorded,
 * are marked released, so their claims and quota go free. *n: how many. */
int mb_store_sweep_orphans(mb_store *st, double fresh_s, size_t *n, mb_err *err);

#endif /* MB_STORE_H */
