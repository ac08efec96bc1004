/*
 * sandboxes.c - sandbox records: insert, read, update, list, the TTL queries
 * the reaper runs, and uid range slots.
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

#define SB_COLS "id, owner, benchmark, status, test_account_email, created_at, updated_at," \
                " ttl_seconds, deadline, uid_base, has_upload, initialized_at, error, egress"

static void sb_from_row(sqlite3_stmt *s, mb_sandbox_rec *r)
{
    memset(r, 0, sizeof *r);
    mb_store__text(s, 0, r->id, sizeof r->id);
    mb_store__text(s, 1, r->owner, sizeof r->owner);
    mb_store__text(s, 2, r->benchmark, sizeof r->benchmark);
    mb_store__text(s, 3, r->status, sizeof r->status);
    mb_store__text(s, 4, r->test_account_email, sizeof r->test_account_email);
    r->created_at = sqlite3_column_double(s, 5);
    r->updated_at = sqlite3_column_double(s, 6);
    r->ttl_seconds = sqlite3_column_int64(s, 7);
    r->deadline = sqlite3_column_double(s, 8);
    r->uid_base = sqlite3_column_int64(s, 9);
    r->has_upload = sqlite3_column_int(s, 10);
    r->initialized_at = sqlite3_column_double(s, 11);
    mb_store__text(s, 12, r->error, sizeof r->error);
    mb_store__text(s, 13, r->egress, sizeof r->egress);
}

/* Binds the record's columns in SB_COLS order starting at parameter 1. */
static void sb_bind(sqlite3_stmt *s, const mb_sandbox_rec *r)
{
    sqlite3_bind_text(s, 1, r->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, r->owner, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, r->benchmark, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, r->status, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, r->test_account_email, -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 6, r->created_at);
    sqlite3_bind_double(s, 7, r->updated_at);
    sqlite3_bind_int64(s, 8, r->ttl_seconds);
    sqlite3_bind_double(s, 9, r->deadline);
    sqlite3_bind_int64(s, 10, r->uid_base);
    sqlite3_bind_int(s, 11, r->has_upload);
    sqlite3_bind_double(s, 12, r->initialized_at);
    sqlite3_bind_text(s, 13, r->error, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 14, r->egress, -1, SQLITE_STATIC);
}

int mb_store__sq_sandbox_insert(mb_store *st, const mb_sandbox_rec *rec, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "INSERT INTO sandboxes(" SB_COLS ")"
                                   " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &s, err);
    if (!rc) {
        sb_bind(s, rec);
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "insert sandbox");
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_sandbox_update(mb_store *st, const mb_sandbox_rec *rec, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st,
        "UPDATE sandboxes SET owner=?2, benchmark=?3, status=?4, test_account_email=?5,"
        " created_at=?6, updated_at=?7, ttl_seconds=?8, deadline=?9, uid_base=?10,"
        " has_upload=?11, initialized_at=?12, error=?13, egress=?14 WHERE id=?1", &s, err);
    if (!rc) {
        sb_bind(s, rec);
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "update sandbox");
        else if (sqlite3_changes(st->db) == 0)
            rc = mb_err_set(err, MB_ENOTFOUND, "sandbox %s does not exist", rec->id);
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_sandbox_get(mb_store *st, const char *id, mb_sandbox_rec *out, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "SELECT " SB_COLS " FROM sandboxes WHERE id=?", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
        int step = sqlite3_step(s);
        if (step == SQLITE_ROW) sb_from_row(s, out);
        else if (step == SQLITE_DONE) rc = mb_err_set(err, MB_ENOTFOUND, "sandbox %s not found", id);
        else rc = mb_store__fail(st, err, "get sandbox");
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}

/* Runs a SELECT of SB_COLS whose parameters `bind` sets, collecting rows. */
static int sb_query(mb_store *st, const char *sql, void (*bind)(sqlite3_stmt *, const void *),
                    const void *arg, mb_sandbox_rec **out, size_t *n, mb_err *err)
{
    sqlite3_stmt *s = NULL;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, sql, &s, err);
    if (!rc) bind(s, arg);
    while (!rc) {
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE) break;
        if (step != SQLITE_ROW) { rc = mb_store__fail(st, err, "list sandboxes"); break; }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = mb_realloc(*out, cap * sizeof **out);
        }
        sb_from_row(s, &(*out)[(*n)++]);
    }
    if (s) mb_store__done(st, s);
    STORE_UNLOCK(st);
    if (rc) { free(*out); *out = NULL; *n = 0; }
    return rc;
}

static void bind_owner(sqlite3_stmt *s, const void *owner)
{
    if (owner) sqlite3_bind_text(s, 1, owner, -1, SQLITE_STATIC);
}

static void bind_time(sqlite3_stmt *s, const void *now)
{
    sqlite3_bind_double(s, 1, *(const double *)now);
}

int mb_store__sq_sandbox_list(mb_store *st, const char *owner, mb_sandbox_rec **out, size_t *n,
                          mb_err *err)
{
    const char *sql = owner
        ? "SELECT " SB_COLS " FROM sandboxes WHERE owner=? AND status!='released' ORDER BY created_at"
        : "SELECT " SB_COLS " FROM sandboxes WHERE status!='released' ORDER BY created_at";
    return sb_query(st, sql, bind_owner, owner, out, n, err);
}

int mb_store__sq_sandbox_count(mb_store *st, const char *owner, size_t *n, mb_err *err)
{
    sqlite3_stmt *s;
    *n = 0;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, owner ? "SELECT count(*) FROM sandboxes WHERE owner=? AND "
                                           "status='occupied'"
                                         : "SELECT count(*) FROM sandboxes WHERE "
                                           "status='occupied'", &s, err);
    if (!rc) {
        if (owner) sqlite3_bind_text(s, 1, owner, -1, SQLITE_STATIC);
        if (sqlite3_step(s) == SQLITE_ROW) *n = (size_t)sqlite3_column_int64(s, 0);
        else rc = mb_err_set(err, MB_EIO, "cannot count sandboxes: %s", sqlite3_errmsg(st->db));
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_sandbox_expired(mb_store *st, double now, mb_sandbox_rec **out, size_t *n,
                             mb_err *err)
{
    return sb_query(st, "SELECT " SB_COLS " FROM sandboxes WHERE status IN ('occupied','error')"
                        " AND deadline > 0 AND deadline <= ? ORDER BY deadline",
                    bind_time, &now, out, n, err);
}

double mb_store__sq_next_deadline(mb_store *st)
{
    sqlite3_stmt *s;
    double t = 0;
    STORE_LOCK(st);
    if (mb_store__prepare(st, "SELECT min(deadline) FROM sandboxes WHERE status IN"
                              " ('occupied','error') AND deadline > 0", &s, NULL) == MB_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) t = sqlite3_column_double(s, 0);
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return t;
}

int mb_store__sq_free_uid_base(mb_store *st, int64_t first, int64_t stride, int64_t *out, mb_err *err)
{
    /* The first gap in the sorted list of used ranges is free. */
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "SELECT uid_base FROM sandboxes WHERE status!='released'"
                                   " AND uid_base >= ? ORDER BY uid_base", &s, err);
    int64_t want = first;
    if (!rc) sqlite3_bind_int64(s, 1, first);
    while (!rc) {
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE) break;
        if (step != SQLITE_ROW) { rc = mb_store__fail(st, err, "uid ranges"); break; }
        int64_t used = sqlite3_column_int64(s, 0);
        if (used == want) want += stride;
        else if (used > want) break;
    }
    if (s) mb_store__done(st, s);
    STORE_UNLOCK(st);
    if (!rc) *out = want;
    return rc;
}

int mb_store__sq_purge_released(mb_store *st, double before, size_t max, size_t *n, mb_err *err)
{
    *n = 0;
    if (max == 0) return MB_OK;
    /* The batch is chosen once, into a table of this connection, so every
     * DELETE below removes the rows of the same sandboxes. */
    static const char *const sqls[] = {
        "CREATE TEMP TABLE IF NOT EXISTS purge_ids(id TEXT PRIMARY KEY)",
        "DELETE FROM temp.purge_ids",
        ("INSERT INTO temp.purge_ids SELECT id FROM sandboxes WHERE status='released'"
         " AND updated_at < ?1 ORDER BY updated_at LIMIT ?2"),
        "DELETE FROM servers WHERE sandbox_id IN (SELECT id FROM temp.purge_ids)",
        "DELETE FROM blobs WHERE sandbox_id IN (SELECT id FROM temp.purge_ids)",
        "DELETE FROM claims WHERE sandbox_id IN (SELECT id FROM temp.purge_ids)",
        "DELETE FROM sandboxes WHERE status='released' AND id IN (SELECT id FROM temp.purge_ids)",
    };
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__exec(st, "BEGIN IMMEDIATE", err);
    for (size_t i = 0; !rc && i < sizeof sqls / sizeof *sqls; i++) {
        rc = mb_store__prepare(st, sqls[i], &s, err);
        if (rc) break;
        if (sqlite3_bind_parameter_count(s) == 2) {
            sqlite3_bind_double(s, 1, before);
            sqlite3_bind_int64(s, 2, max > INT64_MAX ? INT64_MAX : (int64_t)max);
        }
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "purge released sandboxes");
        else if (i == sizeof sqls / sizeof *sqls - 1) *n = (size_t)sqlite3_changes(st->db);
        mb_store__done(st, s);
    }
    if (!rc) rc = mb_store__exec(st, "COMMIT", err);
    if (rc) {
        mb_store__exec(st, "ROLLBACK", NULL);
        *n = 0;
    }
    STORE_UNLOCK(st);
    return rc;
}
