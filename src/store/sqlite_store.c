/*
 * sqlite_store.c - the SQLite backend of mb_store (one machine): schema,
 * connection, statement helpers, its table of calls.
 *
 * The schema is versioned with PRAGMA user_version; opening brings an older
 * file up to date, one migration at a time. Journal mode is WAL with synchronous=NORMAL: a crash
 * loses at most the last transactions, never the file's consistency.
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

/* migrations[i] takes a file from version i to i + 1. */
static const char *const schema_v1 =
    "CREATE TABLE IF NOT EXISTS keys ("
    "  id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, owner TEXT NOT NULL,"
    "  name TEXT NOT NULL DEFAULT '', prefix TEXT NOT NULL DEFAULT '',"
    "  created_at REAL NOT NULL, revoked_at REAL NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS sandboxes ("
    "  id TEXT PRIMARY KEY, owner TEXT NOT NULL DEFAULT '', benchmark TEXT NOT NULL DEFAULT '',"
    "  status TEXT NOT NULL, test_account_email TEXT NOT NULL DEFAULT '',"
    "  created_at REAL NOT NULL, updated_at REAL NOT NULL,"
    "  ttl_seconds INTEGER NOT NULL DEFAULT -1, deadline REAL NOT NULL DEFAULT 0,"
    "  uid_base INTEGER NOT NULL DEFAULT 0, has_upload INTEGER NOT NULL DEFAULT 0,"
    "  initialized_at REAL NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX IF NOT EXISTS sandboxes_owner ON sandboxes(owner, status);"
    "CREATE INDEX IF NOT EXISTS sandboxes_deadline ON sandboxes(status, deadline);"
    "CREATE TABLE IF NOT EXISTS servers ("
    "  id TEXT PRIMARY KEY, sandbox_id TEXT NOT NULL, name TEXT NOT NULL,"
    "  status TEXT NOT NULL, updated_at REAL NOT NULL,"
    "  metadata TEXT, auth_data TEXT, tags TEXT, seq INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS servers_sandbox ON servers(sandbox_id, seq);"
    "CREATE TABLE IF NOT EXISTS blobs ("
    "  sandbox_id TEXT NOT NULL, kind TEXT NOT NULL, path TEXT NOT NULL,"
    "  size INTEGER NOT NULL, created_at REAL NOT NULL, PRIMARY KEY(sandbox_id, kind));"
    "CREATE TABLE IF NOT EXISTS claims ("
    "  kind TEXT NOT NULL, value TEXT NOT NULL, sandbox_id TEXT NOT NULL,"
    "  created_at REAL NOT NULL, PRIMARY KEY(kind, value));"
    "CREATE INDEX IF NOT EXISTS claims_sandbox ON claims(sandbox_id, kind);";

int mb_store__fail(mb_store *st, mb_err *err, const char *what)
{
    return mb_err_set(err, MB_EIO, "state database: %s failed: %s", what, sqlite3_errmsg(st->db));
}

static uint64_t sql_hash(const char *sql)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)sql; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

int mb_store__prepare(mb_store *st, const char *sql, sqlite3_stmt **out, mb_err *err)
{
    uint64_t h = sql_hash(sql);
    int keep = st->nstmts < MB_STORE_STMT_CACHE;
    for (size_t i = 0; i < st->nstmts; i++) {
        mb_store_stmt *c = &st->stmts[i];
        if (c->hash != h || strcmp(c->sql, sql) != 0) continue;
        if (c->busy) { /* in use by a caller further up: one of its own */
            keep = 0;
            break;
        }
        c->busy = 1;
        *out = c->s;
        return MB_OK;
    }
    if (sqlite3_prepare_v3(st->db, sql, -1, keep ? SQLITE_PREPARE_PERSISTENT : 0, out, NULL) !=
        SQLITE_OK)
        return mb_store__fail(st, err, "prepare");
    if (keep && *out)
        st->stmts[st->nstmts++] = (mb_store_stmt){.sql = mb_strdup(sql), .hash = h, .s = *out,
                                                  .busy = 1};
    return MB_OK;
}

void mb_store__done(mb_store *st, sqlite3_stmt *s)
{
    if (!s) return;
    for (size_t i = 0; i < st->nstmts; i++) {
        if (st->stmts[i].s != s) continue;
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        st->stmts[i].busy = 0;
        return;
    }
    sqlite3_finalize(s);
}

int mb_store__exec(mb_store *st, const char *sql, mb_err *err)
{
    if (!strchr(sql, ';')) {
        sqlite3_stmt *s = NULL;
        int rc = mb_store__prepare(st, sql, &s, NULL);
        if (rc == MB_OK && s) {
            int step;
            while ((step = sqlite3_step(s)) == SQLITE_ROW) {}
            if (step != SQLITE_DONE)
                rc = mb_err_set(err, MB_EIO, "state database: %s", sqlite3_errmsg(st->db));
            mb_store__done(st, s);
            return rc;
        }
        if (rc == MB_OK) return MB_OK; /* only a comment or white space */
    }
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        mb_err_set(err, MB_EIO, "state database: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return MB_EIO;
    }
    return MB_OK;
}

void mb_store__text(sqlite3_stmt *s, int col, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

/* v2: the claims table (files made before claims had version 1 too) and the
 * acquire request's egress allow-list. */
static const char *const schema_v2 =
    "CREATE TABLE IF NOT EXISTS claims ("
    "  kind TEXT NOT NULL, value TEXT NOT NULL, sandbox_id TEXT NOT NULL,"
    "  created_at REAL NOT NULL, PRIMARY KEY(kind, value));"
    "CREATE INDEX IF NOT EXISTS claims_sandbox ON claims(sandbox_id, kind);"
    "ALTER TABLE sandboxes ADD COLUMN egress TEXT NOT NULL DEFAULT '';";

/* v3: released records by age, for the purge (mb_store_purge_released); a
 * partial index, so acquires and updates of live records do not touch it. */
static const char *const schema_v3 =
    "CREATE INDEX IF NOT EXISTS sandboxes_released ON sandboxes(updated_at)"
    " WHERE status='released';";

static const char *const migrations[] = {schema_v1, schema_v2, schema_v3};
#define N_MIGRATIONS (sizeof migrations / sizeof *migrations)

static int user_version(mb_store *st, int *out, mb_err *err)
{
    sqlite3_stmt *s;
    int rc = mb_store__prepare(st, "PRAGMA user_version", &s, err);
    if (rc) return rc;
    *out = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
    mb_store__done(st, s);
    return MB_OK;
}

int mb_store__sq_open(mb_store *st, const char *path, mb_err *err)
{
    st->ops = &mb_store__sq_ops;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
    if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK)
        return mb_err_set(err, MB_EIO, "cannot open state database %s: %s", path,
                          st->db ? sqlite3_errmsg(st->db) : "out of memory");
    sqlite3_busy_timeout(st->db, 5000);
    int version = 0;
    /* A daemon keeps released records (tombstones): a page cache of 16 MiB
     * instead of 2 keeps the pages acquires touch in memory as the file grows. */
    int rc = mb_store__exec(st, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                                "PRAGMA cache_size=-16384;"
                                "PRAGMA foreign_keys=ON;", err);
    if (!rc) rc = mb_store__exec(st, "BEGIN IMMEDIATE", err);
    if (!rc) rc = user_version(st, &version, err);
    /* Version 1 is written with IF NOT EXISTS: files made before versions
     * were counted take it too. */
    if (!rc && version < 1) version = 0;
    for (size_t v = (size_t)version; !rc && v < N_MIGRATIONS; v++) {
        rc = mb_store__exec(st, migrations[v], err);
        if (!rc) {
            char set[48];
            snprintf(set, sizeof set, "PRAGMA user_version=%zu", v + 1);
            rc = mb_store__exec(st, set, err);
        }
    }
    if (!rc) return mb_store__exec(st, "COMMIT", err);
    mb_store__exec(st, "ROLLBACK", NULL);
    return rc;
}

void mb_store__sq_close(mb_store *st)
{
    for (size_t i = 0; i < st->nstmts; i++) {
        sqlite3_finalize(st->stmts[i].s);
        free(st->stmts[i].sql);
    }
    st->nstmts = 0;
    if (st->db) sqlite3_close(st->db);
    st->db = NULL;
}

/* Nodes need the shared database. */
static int no_nodes(mb_err *err)
{
    return mb_err_set(err, MB_EINVAL, "nodes need a PostgreSQL state database (--db postgresql://...)");
}

int mb_store__sq_node_beat(mb_store *st, const mb_node_rec *rec, mb_err *err) { return no_nodes(err); }

int mb_store__sq_cluster_secret(mb_store *st, const char *proposal, char out[65], mb_err *err)
{
    out[0] = '\0';
    return no_nodes(err);
}

int mb_store__sq_node_list(mb_store *st, double fresh_s, mb_node_rec **out, size_t *n, mb_err *err)
{
    *out = NULL;
    *n = 0;
    return no_nodes(err);
}

int mb_store__sq_sweep_orphans(mb_store *st, double fresh_s, size_t *n, mb_err *err)
{
    *n = 0;
    return no_nodes(err);
}

const mb_store_ops mb_store__sq_ops = {
#define MB_STORE_OP_ENTRY(r, name, params, args) .name = mb_store__sq_##name,
    MB_STORE_OPS(MB_STORE_OP_ENTRY)
#undef MB_STORE_OP_ENTRY
};
