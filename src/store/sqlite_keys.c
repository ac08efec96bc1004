/*
 * keys.c - API key records. Keys are stored only as SHA-256 digests; the
 * plain key is shown once, when it is created, and never kept.
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

static void key_from_row(sqlite3_stmt *s, mb_key_rec *k)
{
    memset(k, 0, sizeof *k);
    mb_store__text(s, 0, k->id, sizeof k->id);
    mb_store__text(s, 1, k->owner, sizeof k->owner);
    mb_store__text(s, 2, k->name, sizeof k->name);
    mb_store__text(s, 3, k->prefix, sizeof k->prefix);
    k->created_at = sqlite3_column_double(s, 4);
    k->revoked_at = sqlite3_column_double(s, 5);
}

#define KEY_COLS "id, owner, name, prefix, created_at, revoked_at"

int mb_store__sq_key_add(mb_store *st, const char *hash_hex, const mb_key_rec *rec, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st,
        "INSERT INTO keys(id, hash, owner, name, prefix, created_at) VALUES(?,?,?,?,?,?)"
        " ON CONFLICT(hash) DO NOTHING", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, rec->id, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, hash_hex, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, rec->owner, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, rec->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 5, rec->prefix, -1, SQLITE_STATIC);
        sqlite3_bind_double(s, 6, rec->created_at);
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "insert key");
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_key_find(mb_store *st, const char *hash_hex, mb_key_rec *out, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "SELECT " KEY_COLS " FROM keys WHERE hash=?", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, hash_hex, -1, SQLITE_STATIC);
        int step = sqlite3_step(s);
        if (step == SQLITE_ROW) {
            key_from_row(s, out);
            if (out->revoked_at > 0) rc = mb_err_set(err, MB_EDENIED, "this API key was revoked");
        } else if (step == SQLITE_DONE) {
            rc = mb_err_set(err, MB_ENOTFOUND, "unknown API key");
        } else {
            rc = mb_store__fail(st, err, "find key");
        }
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_key_list(mb_store *st, mb_key_rec **out, size_t *n, mb_err *err)
{
    sqlite3_stmt *s;
    *out = NULL;
    *n = 0;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "SELECT " KEY_COLS " FROM keys ORDER BY created_at DESC", &s, err);
    size_t cap = 0;
    while (!rc) {
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE) break;
        if (step != SQLITE_ROW) { rc = mb_store__fail(st, err, "list keys"); break; }
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            *out = mb_realloc(*out, cap * sizeof **out);
        }
        key_from_row(s, &(*out)[(*n)++]);
    }
    if (s) mb_store__done(st, s);
    STORE_UNLOCK(st);
    if (rc) { free(*out); *out = NULL; *n = 0; }
    return rc;
}

int mb_store__sq_key_revoke(mb_store *st, const char *id_or_prefix, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st,
        "UPDATE keys SET revoked_at=(julianday('now') - 2440587.5) * 86400.0 WHERE revoked_at=0 AND"
        " (id=?1 OR (length(?1) >= 6 AND prefix LIKE ?1 || '%' AND"
        "  (SELECT count(*) FROM keys WHERE prefix LIKE ?1 || '%') = 1))", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, id_or_prefix, -1, SQLITE_STATIC);
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "revoke key");
        else if (sqlite3_changes(st->db) == 0)
            rc = mb_err_set(err, MB_ENOTFOUND,
                            "no valid key with id or unique prefix '%s' (see `mcpbox keys list`)",
                            id_or_prefix);
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}
