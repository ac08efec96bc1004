/*
 * servers.c - the MCP server items of each sandbox. Their JSON fields
 * (metadata, auth_data, tags) are stored as JSON text.
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

static void bind_json(sqlite3_stmt *s, int col, json_t *v)
{
    if (!v || json_is_null(v)) {
        sqlite3_bind_null(s, col);
        return;
    }
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    sqlite3_bind_text(s, col, text, -1, free);
}

static json_t *column_json(sqlite3_stmt *s, int col)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    if (!t) return NULL;
    return json_loads((const char *)t, JSON_DECODE_ANY, NULL);
}

/* Inserts recs[0..n) with the store lock held. */
static int insert_locked(mb_store *st, const mb_server_rec *recs, size_t n, mb_err *err)
{
    mb_assert_held(&st->lock);
    sqlite3_stmt *s = NULL;
    int rc = mb_store__prepare(st,
        "INSERT INTO servers(id, sandbox_id, name, status, updated_at, metadata, auth_data, tags, seq)"
        " VALUES(?,?,?,?,?,?,?,?, (SELECT coalesce(max(seq),0)+1 FROM servers WHERE sandbox_id=?2))",
        &s, err);
    for (size_t i = 0; !rc && i < n; i++) {
        const mb_server_rec *rec = &recs[i];
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        sqlite3_bind_text(s, 1, rec->id, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, rec->sandbox_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, rec->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, rec->status, -1, SQLITE_STATIC);
        sqlite3_bind_double(s, 5, rec->updated_at);
        bind_json(s, 6, rec->metadata);
        bind_json(s, 7, rec->auth_data);
        bind_json(s, 8, rec->tags);
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "insert server");
    }
    if (s) mb_store__done(st, s);
    return rc;
}

int mb_store__sq_server_insert(mb_store *st, const mb_server_rec *rec, mb_err *err)
{
    STORE_LOCK(st);
    int rc = insert_locked(st, rec, 1, err);
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_server_insert_all(mb_store *st, const mb_server_rec *recs, size_t n, mb_err *err)
{
    STORE_LOCK(st);
    int rc = mb_store__exec(st, "BEGIN", err);
    if (!rc) {
        rc = insert_locked(st, recs, n, err);
        if (!rc) rc = mb_store__exec(st, "COMMIT", err);
        if (rc) mb_store__exec(st, "ROLLBACK", NULL);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_server_update(mb_store *st, const mb_server_rec *rec, mb_err *err)
{
    sqlite3_stmt *s;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "UPDATE servers SET status=?2, updated_at=?3, metadata=?4,"
                                   " auth_data=?5, tags=?6 WHERE id=?1", &s, err);
    if (!rc) {
        sqlite3_bind_text(s, 1, rec->id, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, rec->status, -1, SQLITE_STATIC);
        sqlite3_bind_double(s, 3, rec->updated_at);
        bind_json(s, 4, rec->metadata);
        bind_json(s, 5, rec->auth_data);
        bind_json(s, 6, rec->tags);
        if (sqlite3_step(s) != SQLITE_DONE) rc = mb_store__fail(st, err, "update server");
        mb_store__done(st, s);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__sq_server_list(mb_store *st, const char *sandbox_id, mb_server_rec **out, size_t *n,
                         mb_err *err)
{
    sqlite3_stmt *s = NULL;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    STORE_LOCK(st);
    int rc = mb_store__prepare(st, "SELECT id, sandbox_id, name, status, updated_at, metadata,"
                                   " auth_data, tags FROM servers WHERE sandbox_id=? ORDER BY seq",
                               &s, err);
    if (!rc) sqlite3_bind_text(s, 1, sandbox_id, -1, SQLITE_STATIC);
    while (!rc) {
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE) break;
        if (step != SQLITE_ROW) { rc = mb_store__fail(st, err, "list servers"); break; }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = mb_realloc(*out, cap * sizeof **out);
        }
        mb_server_rec *r = &(*out)[(*n)++];
        memset(r, 0, sizeof *r);
        mb_store__text(s, 0, r->id, sizeof r->id);
        mb_store__text(s, 1, r->sandbox_id, sizeof r->sandbox_id);
        mb_store__text(s, 2, r->name, sizeof r->name);
        mb_store__text(s, 3, r->status, sizeof r->status);
        r->updated_at = sqlite3_column_double(s, 4);
        r->metadata = column_json(s, 5);
        r->auth_data = column_json(s, 6);
        r->tags = column_json(s, 7);
    }
    if (s) mb_store__done(st, s);
    STORE_UNLOCK(st);
    if (rc) {
        mb_server_recs_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
