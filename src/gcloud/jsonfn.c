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
 *             the array's scalars (NULL when an element is not a scalar).
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
    return rc;
}
