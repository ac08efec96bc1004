/*
 * store_int.h - what the store's own files share: the handle, the backend
 * table (SQLite in sqlite_*.c, PostgreSQL in pg_*.c) and each backend's
 * statement helpers. Not part of the layer's face; include store.h from
 * outside.
 */
#ifndef MB_STORE_INT_H
#define MB_STORE_INT_H

#include "store/store.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* Every call of the face that a backend answers: X(return type, name,
 * parameters, arguments). store.c makes the face's functions from it, each
 * backend its table. */
#define MB_STORE_OPS(X)                                                                         \
    X(int, key_add, (mb_store *st, const char *hash_hex, const mb_key_rec *rec, mb_err *err),   \
      (st, hash_hex, rec, err))                                                                 \
    X(int, key_find, (mb_store *st, const char *hash_hex, mb_key_rec *out, mb_err *err),        \
      (st, hash_hex, out, err))                                                                 \
    X(int, key_list, (mb_store *st, mb_key_rec **out, size_t *n, mb_err *err), (st, out, n, err)) \
    X(int, key_revoke, (mb_store *st, const char *id_or_prefix, mb_err *err),                   \
      (st, id_or_prefix, err))                                                                  \
    X(int, sandbox_insert, (mb_store *st, const mb_sandbox_rec *rec, mb_err *err), (st, rec, err)) \
    X(int, sandbox_get, (mb_store *st, const char *id, mb_sandbox_rec *out, mb_err *err),       \
      (st, id, out, err))                                                                       \
    X(int, sandbox_update, (mb_store *st, const mb_sandbox_rec *rec, mb_err *err), (st, rec, err)) \
    X(int, sandbox_list,                                                                        \
      (mb_store *st, const char *owner, mb_sandbox_rec **out, size_t *n, mb_err *err),          \
      (st, owner, out, n, err))                                                                 \
    X(int, sandbox_count, (mb_store *st, const char *owner, size_t *n, mb_err *err),            \
      (st, owner, n, err))                                                                      \
    X(int, sandbox_expired, (mb_store *st, double now, mb_sandbox_rec **out, size_t *n,         \
                             mb_err *err), (st, now, out, n, err))                              \
    X(double, next_deadline, (mb_store *st), (st))                                              \
    X(int, free_uid_base, (mb_store *st, int64_t first, int64_t stride, int64_t *out,          \
                           mb_err *err), (st, first, stride, out, err))                         \
    X(int, purge_released, (mb_store *st, double before, size_t max, size_t *n, mb_err *err),  \
      (st, before, max, n, err))                                                                \
    X(int, server_insert, (mb_store *st, const mb_server_rec *rec, mb_err *err), (st, rec, err)) \
    X(int, server_insert_all, (mb_store *st, const mb_server_rec *recs, size_t n, mb_err *err), \
      (st, recs, n, err))                                                                       \
    X(int, server_update, (mb_store *st, const mb_server_rec *rec, mb_err *err), (st, rec, err)) \
    X(int, server_list, (mb_store *st, const char *sandbox_id, mb_server_rec **out, size_t *n, \
                         mb_err *err), (st, sandbox_id, out, n, err))                           \
    X(int, blob_put, (mb_store *st, const mb_blob_rec *rec, mb_err *err), (st, rec, err))      \
    X(int, blob_get, (mb_store *st, const char *sandbox_id, const char *kind, mb_blob_rec *out, \
                      mb_err *err), (st, sandbox_id, kind, out, err))                           \
    X(int, blob_delete, (mb_store *st, const char *sandbox_id, const char *kind, mb_err *err),  \
      (st, sandbox_id, kind, err))                                                              \
    X(int, claim_take, (mb_store *st, const char *kind, const char *value,                     \
                        const char *sandbox_id, char holder[37], mb_err *err),                  \
      (st, kind, value, sandbox_id, holder, err))                                               \
    X(int, claim_holder, (mb_store *st, const char *kind, const char *value, char holder[37],  \
                          mb_err *err), (st, kind, value, holder, err))                         \
    X(int, claim_list, (mb_store *st, const char *sandbox_id, const char *kind, char ***out,   \
                        mb_err *err), (st, sandbox_id, kind, out, err))                         \
    X(int, claim_drop, (mb_store *st, const char *sandbox_id, const char *kind, mb_err *err),  \
      (st, sandbox_id, kind, err))                                                              \
    X(int, node_beat, (mb_store *st, const mb_node_rec *rec, mb_err *err), (st, rec, err))     \
    X(int, node_list, (mb_store *st, double fresh_s, mb_node_rec **out, size_t *n, mb_err *err), \
      (st, fresh_s, out, n, err))                                                               \
    X(int, sweep_orphans, (mb_store *st, double fresh_s, size_t *n, mb_err *err),              \
      (st, fresh_s, n, err))                                                                    \
    X(int, cluster_secret, (mb_store *st, const char *proposal, char out[65], mb_err *err),    \
      (st, proposal, out, err))

typedef struct mb_store_ops {
#define MB_STORE_OP_FIELD(r, name, params, args) r (*name) params;
    MB_STORE_OPS(MB_STORE_OP_FIELD)
#undef MB_STORE_OP_FIELD
} mb_store_ops;

/* A prepared SQLite statement kept for the next call of the same text
 * (sqlite_store.c): parsing and planning a statement cost more than running
 * most of ours. Used only with the store lock held. */
typedef struct mb_store_stmt {
    char *sql;
    uint64_t hash;
    sqlite3_stmt *s;
    int busy; /* handed out and not yet given back with mb_store__done */
} mb_store_stmt;
#define MB_STORE_STMT_CACHE 64

struct mb_store {
    const mb_store_ops *ops;
    pthread_mutex_t lock; /* held for the length of each public call */
    int node;             /* this node's ordinal, -1 on one machine (mb_store_set_node) */
    sqlite3 *db;          /* SQLite */
    PGconn *pg;           /* PostgreSQL */
    mb_store_stmt stmts[MB_STORE_STMT_CACHE]; /* SQLite statements kept */
    size_t nstmts;
};

#define MB_STORE_OP_DECL(r, name, params, args) \
    r mb_store__sq_##name params;               \
    r mb_store__pg_##name params;
MB_STORE_OPS(MB_STORE_OP_DECL)
#undef MB_STORE_OP_DECL

/* Each backend's open fills st (its ops and connection) or fails. */
int mb_store__sq_open(mb_store *st, const char *path, mb_err *err);
int mb_store__pg_open(mb_store *st, const char *conninfo, mb_err *err);
/* Each backend's close lets go of its connection, if st has one. */
void mb_store__sq_close(mb_store *st);
void mb_store__pg_close(mb_store *st);
extern const mb_store_ops mb_store__sq_ops;
extern const mb_store_ops mb_store__pg_ops;

/* SQLite helpers (sqlite_store.c). */
int mb_store__fail(mb_store *st, mb_err *err, const char *what);
/* A statement for sql, prepared once per connection and kept (the cache
 * above); give it back with mb_store__done, which resets it and clears its
 * bindings (a kept SELECT must not hold its read transaction open). A text
 * whose statement is in use, or past the cache's size, gets a statement of
 * its own that mb_store__done finalizes. */
int mb_store__prepare(mb_store *st, const char *sql, sqlite3_stmt **out, mb_err *err);
void mb_store__done(mb_store *st, sqlite3_stmt *s);
/* Runs sql to its end: one statement through the cache (BEGIN, COMMIT...),
 * several through sqlite3_exec. */
int mb_store__exec(mb_store *st, const char *sql, mb_err *err);
/* Copies a text column into a fixed buffer (truncating), NULL as "". */
void mb_store__text(sqlite3_stmt *s, int col, char *dst, size_t cap);

/* PostgreSQL helpers (pg_store.c). Parameters are passed as text. */
#define MB_PG_MAX_PARAMS 16
typedef struct mb_pg_params {
    int n;
    const char *v[MB_PG_MAX_PARAMS];
    char num[MB_PG_MAX_PARAMS][32]; /* the text of numeric parameters */
} mb_pg_params;
void mb_store__pg_str(mb_pg_params *p, const char *s); /* NULL = SQL NULL */
void mb_store__pg_dbl(mb_pg_params *p, double v);
void mb_store__pg_i64(mb_pg_params *p, int64_t v);
/* Runs one statement with the lock held; NULL (err set) unless it succeeded.
 * A lost connection is re-established once before giving up. */
PGresult *mb_store__pg_run(mb_store *st, const char *sql, const mb_pg_params *p,
                           const char *what, mb_err *err);
/* Runs a statement whose result is not needed. */
int mb_store__pg_do(mb_store *st, const char *sql, const mb_pg_params *p, const char *what,
                    mb_err *err);
/* Copies a text value into a fixed buffer (truncating), NULL as "". */
void mb_store__pg_text(const PGresult *r, int row, int col, char *dst, size_t cap);
double mb_store__pg_double(const PGresult *r, int row, int col);
int64_t mb_store__pg_int(const PGresult *r, int row, int col);

#define STORE_LOCK(st) pthread_mutex_lock(&(st)->lock)
#define STORE_UNLOCK(st) pthread_mutex_unlock(&(st)->lock)

#endif
