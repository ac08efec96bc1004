/*
 * blobs.c - files the service keeps for a sandbox: the uploaded archive, the
 * last dump, the baseline a reset returns to. Rows name files; the files
 * themselves live under the data directory.
 */
#include "store/store_int.h"

#include <string.h>

int mb_store__sq_blob_put(mb_store *st, const mb_blob_rec *rec, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "INSERT OR REPLACE INTO blobs(sandbox_id, kind, path, size,"
                                   " created_at) VALUES(?,?,?,?,?)", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, rec->sandbox_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, rec->kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, rec->path, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, (sqlite3_int64)rec->size);
        sqlite3_bind_double(s, 5, rec->created_at);
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "put blob");
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_blob_get(mb_store *st, const char *sandbox_id, const char *kind, mb_blob_rec *out,
                      mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "SELECT path, size, created_at FROM blobs WHERE sandbox_id=?"
                                   " AND kind=?", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, sandbox_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
        int step = sqlite3_step(s);
        if (step == SQLITE_ROW) {
            memset(out, 0, sizeof *out);
            snprintf(out->sandbox_id, sizeof out->sandbox_id, "%s", sandbox_id);
            snprintf(out->kind, sizeof out->kind, "%s", kind);
            mb_store__text(s, 0, out->path, sizeof out->path);
            out->size = (uint64_t)sqlite3_column_int64(s, 1);
            out->created_at = sqlite3_column_double(s, 2);
        } else if (step == SQLITE_DONE) {
            rc = mb_err_set(err, MB_ENOTFOUND, "no %s archive for sandbox %s", kind, sandbox_id);
        } else {
            rc = mb_store__fail(st, err, "get blob");
        }
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_blob_delete(mb_store *st, const char *sandbox_id, const char *kind, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "DELETE FROM blobs WHERE sandbox_id=? AND kind=?", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, sandbox_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "delete blob");
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}
