/*
 * sql.c - statements of the REST core: bind by a type string, read rows whose
 * first column is JSON text (built by SQLite's json_object) as jansson values.
 */
#include "canvas/canvas_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static sqlite3_stmt *prep(cv *c, const char *types, const char *sql, va_list ap)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->s, sql, -1, &st, NULL) != SQLITE_OK) {
        mb_warn("canvas sql: %s in: %s", sqlite3_errmsg(c->s), sql);
        return NULL;
    }
    for (int i = 0; types && types[i]; i++) {
        switch (types[i]) {
        case 'i': sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t)); break;
        case 'd': sqlite3_bind_double(st, i + 1, va_arg(ap, double)); break;
        case 't': {
            const char *v = va_arg(ap, const char *);
            if (v) sqlite3_bind_text(st, i + 1, v, -1, SQLITE_TRANSIENT);
            else sqlite3_bind_null(st, i + 1);
            break;
        }
        case 'j': {
            json_t *v = va_arg(ap, json_t *);
            if (!v || json_is_null(v)) {
                sqlite3_bind_null(st, i + 1);
            } else {
                char *txt = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                sqlite3_bind_text(st, i + 1, txt ? txt : "null", -1, SQLITE_TRANSIENT);
                free(txt);
            }
            break;
        }
        default: mb_assert(!"bad bind type");
        }
    }
    return st;
}

static json_t *col_json(sqlite3_stmt *st)
{
    const char *txt = (const char *)sqlite3_column_text(st, 0);
    if (!txt) return json_null();
    json_t *v = json_loads(txt, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    return v ? v : json_string(txt);
}

json_t *cv_rows(cv *c, const char *types, const char *sql, ...)
{
    va_list ap;
    va_start(ap, sql);
    sqlite3_stmt *st = prep(c, types, sql, ap);
    va_end(ap);
    json_t *arr = json_array();
    if (!st) return arr;
    while (sqlite3_step(st) == SQLITE_ROW) json_array_append_new(arr, col_json(st));
    sqlite3_finalize(st);
    return arr;
}

/* The statement stepped to its first row; NULL when it could not be made
 * or has no row. */
static sqlite3_stmt *first_row(cv *c, const char *types, const char *sql, va_list ap)
{
    sqlite3_stmt *st = prep(c, types, sql, ap);
    if (st && sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        st = NULL;
    }
    return st;
}

json_t *cv_row(cv *c, const char *types, const char *sql, ...)
{
    va_list ap;
    va_start(ap, sql);
    sqlite3_stmt *st = first_row(c, types, sql, ap);
    va_end(ap);
    json_t *v = st ? col_json(st) : NULL;
    sqlite3_finalize(st);
    return v;
}

int64_t cv_int(cv *c, int64_t dflt, const char *types, const char *sql, ...)
{
    va_list ap;
    va_start(ap, sql);
    sqlite3_stmt *st = first_row(c, types, sql, ap);
    va_end(ap);
    int64_t v = st && sqlite3_column_type(st, 0) != SQLITE_NULL ? sqlite3_column_int64(st, 0) : dflt;
    sqlite3_finalize(st);
    return v;
}

char *cv_text(cv *c, const char *types, const char *sql, ...)
{
    va_list ap;
    va_start(ap, sql);
    sqlite3_stmt *st = first_row(c, types, sql, ap);
    va_end(ap);
    char *v = st && sqlite3_column_type(st, 0) != SQLITE_NULL
                  ? mb_strdup((const char *)sqlite3_column_text(st, 0)) : NULL;
    sqlite3_finalize(st);
    return v;
}

int cv_exec(cv *c, const char *types, const char *sql, ...)
{
    va_list ap;
    va_start(ap, sql);
    sqlite3_stmt *st = prep(c, types, sql, ap);
    va_end(ap);
    if (!st) return -1;
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        mb_warn("canvas sql: %s", sqlite3_errmsg(c->s));
        return -1;
    }
    return 0;
}

int64_t cv_last_id(cv *c) { return sqlite3_last_insert_rowid(c->s); }

json_t *cv_map(cv *c, json_t *ids, json_t *(*fn)(cv *c, int64_t id, int arg), int arg)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) {
        json_t *o = fn(c, json_integer_value(v), arg);
        if (o) json_array_append_new(out, o);
    }
    json_decref(ids);
    return out;
}

void cv_set_texts(cv *c, const char *obj, const char *table, int64_t id, const char *const *cols,
                  size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *v = cv_body(c, obj, cols[i]);
        if (!v) continue;
        char *sql = mb_asprintf("UPDATE %s SET %s=? WHERE id=?", table, cols[i]);
        cv_exec(c, "ti", sql, json_is_string(v) && *json_string_value(v) ? json_string_value(v)
                                                                         : NULL, id);
        free(sql);
    }
}
