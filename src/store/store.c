/*
 * store.c - the SQLite file behind mb_store: schema, connection, locking.
 *
 * The schema is versioned with PRAGMA user_version; mb_store_open() brings an
 * older file up to date. Journal mode is WAL with synchronous=NORMAL: a crash
 * loses at most the last transactions, never the file's consistency.
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

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
    "  size INTEGER NOT NULL, created_at REAL NOT NULL, PRIMARY KEY(sandbox_id, kind));";

int mb_store__fail(mb_store *st, mb_err *err, const char *what)
{
    return mb_err_set(err, MB_EIO, "state database: %s failed: %s", what, sqlite3_errmsg(st->db));
}

int mb_store__prepare(mb_store *st, const char *sql, sqlite3_stmt **out, mb_err *err)
{
    if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) != SQLITE_OK)
        return mb_store__fail(st, err, "prepare");
    return MB_OK;
}

int mb_store__exec(mb_store *st, const char *sql, mb_err *err)
{
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

static int user_version(mb_store *st)
{
    sqlite3_stmt *s;
    int v = 0;
    if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK) return 0;
    if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return v;
}

int mb_store_open(const char *path, mb_store **out, mb_err *err)
{
    mb_store *st = mb_calloc(1, sizeof *st);
    pthread_mutex_init(&st->lock, NULL);
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
    if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
        mb_err_set(err, MB_EIO, "cannot open state database %s: %s", path,
                   st->db ? sqlite3_errmsg(st->db) : "out of memory");
        mb_store_close(st);
        return MB_EIO;
    }
    sqlite3_busy_timeout(st->db, 5000);
    int rc = mb_store__exec(st, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                                "PRAGMA foreign_keys=ON;", err);
    if (!rc) rc = mb_store__exec(st, "BEGIN", err);
    if (!rc) rc = mb_store__exec(st, schema_v1, err);
    if (!rc && user_version(st) < 2) /* v2: the acquire request's egress allow-list */
        rc = mb_store__exec(st, "ALTER TABLE sandboxes ADD COLUMN egress TEXT NOT NULL DEFAULT ''",
                            err);
    if (!rc) rc = mb_store__exec(st, "PRAGMA user_version=2; COMMIT", err);
    if (rc) {
        mb_store_close(st);
        return rc;
    }
    *out = st;
    return MB_OK;
}

void mb_store_close(mb_store *st)
{
    if (!st) return;
    if (st->db) sqlite3_close(st->db);
    pthread_mutex_destroy(&st->lock);
    free(st);
}
