/*
 * claims.c - exclusive names a live sandbox holds: a mail domain, a Canvas
 * token set, a cloud project. One row per (kind, value); the PRIMARY KEY is
 * what makes a claim exclusive, so two callers (or, with a shared database,
 * two nodes) can never both hold one. A claim whose holder is released, or
 * was never recorded, is stale and is taken over by the next taker.
 */
#include "store/store_int.h"

#include <string.h>

/* Who holds (kind, value) and whether that holder is still live. */
static int holder_of(mb_store *st, const char *kind, const char *value, char *holder, size_t cap,
                     int *live, mb_err *err)
{
    sqlite3_stmt *s;
    int rc = mb_store__prepare(st, "SELECT c.sandbox_id, IFNULL(x.status, 'released') FROM claims c"
                                   " LEFT JOIN sandboxes x ON x.id = c.sandbox_id"
                                   " WHERE c.kind=? AND c.value=?", &s, err);
    if (rc) return rc;
    sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
    int step = sqlite3_step(s);
    if (step == SQLITE_ROW) {
        char status[16];
        mb_store__text(s, 0, holder, cap);
        mb_store__text(s, 1, status, sizeof status);
        *live = strcmp(status, "released") != 0;
    } else if (step == SQLITE_DONE) {
        rc = MB_ENOTFOUND;
    } else {
        rc = mb_store__fail(st, err, "find claim");
    }
    mb_store__done(st, s);
    return rc;
}

int mb_store__sq_claim_take(mb_store *st, const char *kind, const char *value, const char *sandbox_id,
                        char holder[37], mb_err *err)
{
    mb_assert(kind && value && sandbox_id);
    char cur[37] = "";
    int live = 0;
    STORE_LOCK(st);
    int rc = mb_store__exec(st, "BEGIN IMMEDIATE", err);
    if (rc) goto out;
    rc = holder_of(st, kind, value, cur, sizeof cur, &live, err);
    if (rc == MB_OK && live && strcmp(cur, sandbox_id) != 0) {
        if (holder) snprintf(holder, 37, "%s", cur);
        rc = mb_err_set(err, MB_ECONFLICT, "%s %s is held by another live sandbox", kind, value);
    } else if (rc == MB_OK || rc == MB_ENOTFOUND) {
        sqlite3_stmt *s;
        rc = mb_store__prepare(st, "INSERT OR REPLACE INTO claims(kind, value, sandbox_id,"
                                   " created_at) VALUES(?,?,?,?)", &s, err);
        if (!rc) {
            sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
            sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
            sqlite3_bind_text(s, 3, sandbox_id, -1, SQLITE_STATIC);
            sqlite3_bind_double(s, 4, mb_now());
            if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "take claim");
            mb_store__done(st, s);
        }
    }
    mb_err ignored = {0};
    mb_store__exec(st, rc ? "ROLLBACK" : "COMMIT", &ignored);
out:
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_claim_holder(mb_store *st, const char *kind, const char *value, char holder[37],
                          mb_err *err)
{
    int live = 0;
    STORE_LOCK(st);
    int rc = holder_of(st, kind, value, holder, 37, &live, err);
    STORE_UNLOCK(st);
    if (rc == MB_OK && !live) rc = MB_ENOTFOUND;
    if (rc == MB_ENOTFOUND) {
        holder[0] = 0;
        return mb_err_set(err, MB_ENOTFOUND, "no live sandbox holds %s %s", kind, value);
    }
    return rc;
}

int mb_store__sq_claim_list(mb_store *st, const char *sandbox_id, const char *kind, char ***out,
                        mb_err *err)
{
    sqlite3_stmt *s;
    const char **v = NULL;
    size_t n = 0;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "SELECT value FROM claims WHERE sandbox_id=? AND kind=?"
                                   " ORDER BY created_at, value", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, sandbox_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
        int step;
        while ((step = sqlite3_step(s)) == SQLITE_ROW) {
            const unsigned char *t = sqlite3_column_text(s, 0);
            mb_strv_push(&v, &n, mb_strdup(t ? (const char *)t : ""));
        }
        if (step != SQLITE_DONE) rc = mb_store__fail(st, err, "list claims");
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    if (!v) v = mb_calloc(1, sizeof *v);
    if (rc) {
        mb_strv_free((char **)v);
        v = NULL;
    }
    *out = (char **)v;
    return rc;
}

int mb_store__sq_claim_drop(mb_store *st, const char *sandbox_id, const char *kind, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, kind ? "DELETE FROM claims WHERE sandbox_id=? AND kind=?"
                                        : "DELETE FROM claims WHERE sandbox_id=?", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, sandbox_id, -1, SQLITE_STATIC);
        if (kind) sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "drop claims");
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}
