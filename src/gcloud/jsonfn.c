/*
 * jsonfn.c - GoogleSQL's JSON functions over JSON-formatted STRING values:
 *   bq_json(kind, json, path)
 *     kind 0: JSON_EXTRACT_SCALAR / JSON_VALUE: the scalar at path as STRING
 *             (numbers as written, true/false), NULL for an object, an array,
 *             JSON null or a missing member;
 *     kind 1: JSON_EXTRACT / JSON_QUERY: the value at path as JSON text;
 *     kind 2: JSON_EXTRACT_ARRAY / JSON_QUERY_ARRAY: ARRAY<STRING> of the
 *             array's elements as JSON text;
 *     kind 3: JSON_EXTRACT_STRING_ARRAY / JSON_VALUE_ARRAY: ARRAY<STRING> of
 *             the array's scalars (NULL when an element is not a scalar);
 *   bq_to_json(value, field)
 *     TO_JSON_STRING: value written as JSON by its BigQuery type (field, from
 *     the translator): BOOL true/false, INT64 and FLOAT64 numbers (NaN and
 *     infinities as strings), TIMESTAMP as RFC 3339 with Z, STRUCTs as objects
 *     of their fields in order, ARRAYs as arrays.
 * Text that is not JSON gives NULL, as BigQuery's functions over STRING do; a
 * malformed path is an error ("Invalid JSONPath"). Paths: $, .name, ."name",
 * ['name'], ["name"], [index].
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_SUBTYPE 74
#define PATH_MAX_DEPTH 64

static int tojson_register(sqlite3 *db);

/* Walks path over root; *bad on a malformed path. Borrowed result or NULL. */
static json_t *walk(json_t *root, const char *p, int *bad)
{
    *bad = 0;
    while (isspace((unsigned char)*p)) p++;
    if (*p != '$') {
        *bad = 1;
        return NULL;
    }
    p++;
    json_t *cur = root;
    for (int depth = 0; *p; depth++) {
        if (depth > PATH_MAX_DEPTH) {
            *bad = 1;
            return NULL;
        }
        char key[1024];
        size_t kn = 0;
        int is_index = 0;
        long long idx = 0;
        if (*p == '.') {
            p++;
            if (*p == '"') {
                for (p++; *p && *p != '"'; p++)
                    if (kn < sizeof key - 1) key[kn++] = *p;
                if (*p != '"') break;
                p++;
            } else {
                while (*p && *p != '.' && *p != '[')
                    if (kn < sizeof key - 1) key[kn++] = *p++;
                    else p++;
                if (!kn) break;
            }
        } else if (*p == '[') {
            p++;
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                for (; *p && *p != q; p++)
                    if (kn < sizeof key - 1) key[kn++] = *p;
                if (*p != q || p[1] != ']') break;
                p += 2;
            } else {
                char *end;
                idx = strtoll(p, &end, 10);
                if (end == p || *end != ']' || idx < 0) break;
                is_index = 1;
                p = end + 1;
            }
        } else {
            break;
        }
        key[kn] = 0;
        if (!cur) continue; /* the path goes on past a missing value: still checked */
        if (is_index) cur = json_is_array(cur) ? json_array_get(cur, (size_t)idx) : NULL;
        else cur = json_is_object(cur) ? json_object_get(cur, key) : NULL;
    }
    if (*p) {
        *bad = 1;
        return NULL;
    }
    return cur;
}

/* A scalar as GoogleSQL writes it in a STRING; NULL for others. */
static char *scalar_text(json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING: return mb_strdup(json_string_value(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        return mb_strdup(buf);
    case JSON_REAL: {
        double d = json_real_value(v);
        for (int prec = 15; prec <= 17; prec++) { /* the shortest text that reads back */
            snprintf(buf, sizeof buf, "%.*g", prec, d);
            if (strtod(buf, NULL) == d) break;
        }
        return mb_strdup(buf);
    }
    case JSON_TRUE: return mb_strdup("true");
    case JSON_FALSE: return mb_strdup("false");
    default: return NULL;
    }
}

static void result_text(sqlite3_context *cx, char *s, int json)
{
    if (!s) {
        sqlite3_result_null(cx);
        return;
    }
    sqlite3_result_text(cx, s, -1, free);
    if (json) sqlite3_result_subtype(cx, JSON_SUBTYPE);
}

static void f_json(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    int kind = sqlite3_value_int(argv[0]);
    const char *text = (const char *)sqlite3_value_text(argv[1]);
    const char *path = argc > 2 ? (const char *)sqlite3_value_text(argv[2]) : "$";
    if (!path) {
        sqlite3_result_null(cx);
        return;
    }
    int bad;
    walk(NULL, path, &bad);
    if (bad) {
        char *m = mb_asprintf("Invalid JSONPath: %.200s", path);
        sqlite3_result_error(cx, m, -1);
        free(m);
        return;
    }
    if (!text) {
        sqlite3_result_null(cx);
        return;
    }
    json_t *root = json_loadb(text, (size_t)sqlite3_value_bytes(argv[1]), JSON_DECODE_ANY, NULL);
    json_t *v = root ? walk(root, path, &bad) : NULL;
    if (!v || json_is_null(v)) {
        json_decref(root);
        sqlite3_result_null(cx);
        return;
    }
    switch (kind) {
    case 0: result_text(cx, json_is_object(v) || json_is_array(v) ? NULL : scalar_text(v), 0); break;
    case 1: result_text(cx, json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)), 0); break;
    default: {
        if (!json_is_array(v)) {
            sqlite3_result_null(cx);
            break;
        }
        json_t *out = json_array(), *e;
        size_t i;
        int ok = 1;
        json_array_foreach(v, i, e) {
            char *s = kind == 2 ? json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17))
                      : json_is_object(e) || json_is_array(e) ? NULL
                      : json_is_null(e) ? NULL
                                        : scalar_text(e);
            if (!s && kind == 3 && !json_is_null(e)) ok = 0;
            json_array_append_new(out, s ? json_string(s) : json_null());
            free(s);
        }
        result_text(cx, ok ? json_dumps(out, JSON_COMPACT) : NULL, 1);
        json_decref(out);
    }
    }
    json_decref(root);
}

int mb_gc__jsonfn_register(sqlite3 *db)
{
    const int F = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc = sqlite3_create_function(db, "bq_json", 2, F, NULL, f_json, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "bq_json", 3, F, NULL, f_json, NULL, NULL);
    if (rc == SQLITE_OK) rc = tojson_register(db);
    return rc;
}

/* ------------------------------------------------------ TO_JSON_STRING */

static void put_json_string(mb_buf *b, const char *s)
{
    json_t *j = json_string(s);
    if (!j) { /* not UTF-8: repaired as the rest of the layer does */
        size_t m;
        char *r = mb_utf8_repair(s, strlen(s), &m);
        j = json_stringn(r, m);
        free(r);
    }
    char *t = json_dumps(j, JSON_ENCODE_ANY);
    mb_buf_puts(b, t ? t : "\"\"");
    free(t);
    json_decref(j);
}

static void put_double(mb_buf *b, double d)
{
    if (isnan(d)) mb_buf_puts(b, "\"NaN\"");
    else if (isinf(d)) mb_buf_puts(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else {
        char buf[40];
        mb_gc__float_text(d, buf);
        mb_buf_puts(b, buf);
    }
}

/* "YYYY-MM-DD HH:MM:SS[.f]" as RFC 3339 (with Z for a TIMESTAMP). */
static void put_time(mb_buf *b, const char *s, int zone)
{
    mb_buf_putc(b, '"');
    for (const char *c = s; *c; c++) mb_buf_putc(b, *c == ' ' ? 'T' : *c);
    if (zone) mb_buf_putc(b, 'Z');
    mb_buf_putc(b, '"');
}

/* v (a JSON value as the layer stores it) as TO_JSON_STRING writes a value of
 * the field's type; elem: an element of a REPEATED field. */
static void encode(mb_buf *b, json_t *v, json_t *field, int elem, int depth)
{
    const char *type = json_string_value(json_object_get(field, "type"));
    const char *mode = json_string_value(json_object_get(field, "mode"));
    if (!v || json_is_null(v) || depth > 64) {
        mb_buf_puts(b, mode && !strcmp(mode, "REPEATED") && !elem ? "[]" : "null");
        return;
    }
    if (mode && !strcmp(mode, "REPEATED") && !elem) {
        json_t *e;
        size_t i;
        mb_buf_putc(b, '[');
        json_array_foreach(json_is_array(v) ? v : NULL, i, e) {
            if (i) mb_buf_putc(b, ',');
            encode(b, e, field, 1, depth + 1);
        }
        mb_buf_putc(b, ']');
        return;
    }
    if (!type) type = "STRING";
    if (!strcmp(type, "RECORD") || !strcmp(type, "STRUCT")) {
        json_t *f;
        size_t i;
        mb_buf_putc(b, '{');
        json_array_foreach(json_object_get(field, "fields"), i, f) {
            const char *name = json_string_value(json_object_get(f, "name"));
            if (i) mb_buf_putc(b, ',');
            put_json_string(b, name ? name : "");
            mb_buf_putc(b, ':');
            encode(b, json_is_object(v) ? json_object_get(v, name ? name : "") : NULL, f, 0, depth + 1);
        }
        mb_buf_putc(b, '}');
        return;
    }
    if (!strcmp(type, "BOOLEAN") || !strcmp(type, "BOOL")) {
        mb_buf_puts(b, json_is_true(v) || (json_is_integer(v) && json_integer_value(v)) ? "true" : "false");
    } else if (!strcmp(type, "INTEGER") || !strcmp(type, "INT64")) {
        if (json_is_integer(v)) mb_buf_printf(b, "%lld", (long long)json_integer_value(v));
        else if (json_is_number(v)) mb_buf_printf(b, "%.0f", json_number_value(v));
        else put_json_string(b, json_string_value(v) ?: "");
    } else if (!strcmp(type, "FLOAT") || !strcmp(type, "FLOAT64") || !strcmp(type, "NUMERIC") ||
               !strcmp(type, "BIGNUMERIC")) {
        if (json_is_number(v)) put_double(b, json_number_value(v));
        else put_json_string(b, json_string_value(v) ?: "");
    } else if (json_is_string(v) && (!strcmp(type, "TIMESTAMP") || !strcmp(type, "DATETIME"))) {
        put_time(b, json_string_value(v), !strcmp(type, "TIMESTAMP"));
    } else if (json_is_string(v)) {
        put_json_string(b, json_string_value(v));
    } else if (json_is_integer(v)) {
        mb_buf_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        put_double(b, json_real_value(v));
    } else {
        char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        mb_buf_puts(b, t ? t : "null");
        free(t);
    }
}

/* bq_to_json(value, field): field is the value's BigQuery field ({type,
 * mode, fields}) as JSON text, given by the translator. */
static void f_to_json(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    json_t *field = json_loads((const char *)sqlite3_value_text(argv[1]) ?: "", 0, NULL);
    json_t *v;
    const char *mode = json_string_value(json_object_get(field, "mode"));
    const char *type = json_string_value(json_object_get(field, "type"));
    int nested = (mode && !strcmp(mode, "REPEATED")) || (type && !strcmp(type, "RECORD"));
    switch (sqlite3_value_type(argv[0])) {
    case SQLITE_NULL: v = json_null(); break;
    case SQLITE_INTEGER: v = json_integer(sqlite3_value_int64(argv[0])); break;
    case SQLITE_FLOAT: v = json_real(sqlite3_value_double(argv[0])); break;
    default: {
        const char *s = (const char *)sqlite3_value_text(argv[0]);
        v = nested ? json_loads(s ? s : "", JSON_DECODE_ANY, NULL) : NULL;
        if (!v) v = json_string(s ? s : "");
        if (!v) v = json_null();
    }
    }
    mb_buf b = {0};
    encode(&b, v, field, 0, 0);
    json_decref(v);
    json_decref(field);
    sqlite3_result_text(cx, mb_buf_steal(&b), -1, free);
}

static int tojson_register(sqlite3 *db)
{
    return sqlite3_create_function(db, "bq_to_json", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                   NULL, f_to_json, NULL, NULL);
}
