/*
 * arrays.c - GoogleSQL ARRAY and STRUCT values on SQLite. Both are JSON text
 * (as REPEATED and RECORD columns are stored), carrying SQLite's JSON
 * subtype so that json_array() / json_object() nest them rather than quote
 * them. Here:
 *   bq_unnest(array)         a table-valued function: one row per element,
 *                            columns __v (the element) and __o (its offset,
 *                            hidden); UNNEST in a FROM becomes it, so that no
 *                            json_each column (id, key, type, ...) clashes
 *                            with a table's own column names;
 *   bq_array_agg(v, flags, limit, key1, desc1, ...)
 *                            ARRAY_AGG with DISTINCT (flags 1), IGNORE NULLS
 *                            (flags 2), ORDER BY keys and LIMIT (SQLite 3.40
 *                            has no ORDER BY inside an aggregate);
 *   bq_subscript(a, i, mode) a[OFFSET(i)] (mode 0), [ORDINAL(i)] (1), the
 *                            SAFE_ forms (+2) with BigQuery's out-of-bounds
 *                            error; a text i reads a field of a struct;
 *   bq_field(s, name)        (expr).name of a STRUCT value, or its error;
 *   bq_fdiv(a, b)            the '/' operator: FLOAT64, and BigQuery's
 *                            "division by zero: a / b" error;
 *   bq_array_to_string, bq_generate_array, bq_array_concat, bq_array_reverse.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define JSON_SUBTYPE 74 /* SQLite's json1 marks its results with 'J' */
#define ARRAY_MAX_ELEMS 1000000

/* A SQLite value as a JSON value (JSON text with the JSON subtype parsed). */
static json_t *value_json(sqlite3_value *v)
{
    switch (sqlite3_value_type(v)) {
    case SQLITE_NULL: return json_null();
    case SQLITE_INTEGER: return json_integer(sqlite3_value_int64(v));
    case SQLITE_FLOAT: return json_real(sqlite3_value_double(v));
    default: break;
    }
    const char *s = (const char *)sqlite3_value_text(v);
    size_t n = (size_t)sqlite3_value_bytes(v);
    if (sqlite3_value_subtype(v) == JSON_SUBTYPE) {
        json_t *j = json_loadb(s, n, JSON_DECODE_ANY, NULL);
        if (j) return j;
    }
    json_t *j = json_stringn(s ? s : "", n);
    if (!j) {
        size_t m;
        char *r = mb_utf8_repair(s ? s : "", n, &m);
        j = json_stringn(r, m);
        free(r);
    }
    return j;
}

static void result_json(sqlite3_context *cx, json_t *j)
{
    if (!j || json_is_null(j)) {
        sqlite3_result_null(cx);
    } else if (json_is_integer(j)) {
        sqlite3_result_int64(cx, json_integer_value(j));
    } else if (json_is_real(j)) {
        sqlite3_result_double(cx, json_real_value(j));
    } else if (json_is_string(j)) {
        sqlite3_result_text(cx, json_string_value(j), (int)json_string_length(j), SQLITE_TRANSIENT);
    } else if (json_is_boolean(j)) {
        sqlite3_result_int(cx, json_is_true(j));
    } else {
        char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        sqlite3_result_text(cx, t, -1, free);
        sqlite3_result_subtype(cx, JSON_SUBTYPE);
    }
}

static void result_array(sqlite3_context *cx, json_t *a)
{
    char *t = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER);
    sqlite3_result_text(cx, t, -1, free);
    sqlite3_result_subtype(cx, JSON_SUBTYPE);
}

/* bq_split(s [, delimiter]): SPLIT, ARRAY<STRING>; the delimiter defaults to
 * ','; an empty one splits into characters; '' gives [""]. */
static void f_split(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || (argc > 1 && sqlite3_value_type(argv[1]) == SQLITE_NULL))
        return;
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    size_t n = (size_t)sqlite3_value_bytes(argv[0]);
    const char *d = argc > 1 ? (const char *)sqlite3_value_text(argv[1]) : ",";
    size_t dn = argc > 1 ? (size_t)sqlite3_value_bytes(argv[1]) : 1;
    json_t *a = json_array();
    size_t start = 0;
    for (size_t i = 0; i <= n && json_array_size(a) < ARRAY_MAX_ELEMS;) {
        if (!dn) { /* one element per UTF-8 character */
            if (i == n) break;
            size_t k = i + 1;
            while (k < n && ((unsigned char)s[k] & 0xC0) == 0x80) k++;
            json_array_append_new(a, json_stringn(s + i, k - i) ?: json_string(""));
            i = k;
            continue;
        }
        if (i == n || (n - i >= dn && !memcmp(s + i, d, dn))) {
            json_array_append_new(a, json_stringn(s + start, i - start) ?: json_string(""));
            if (i == n) break;
            i += dn;
            start = i;
        } else {
            i++;
        }
    }
    if (!dn && !n) json_array_append_new(a, json_string(""));
    result_array(cx, a);
    json_decref(a);
}

/* The array argument: NULL (SQL NULL), or an error set and NULL. */
static json_t *arg_array(sqlite3_context *cx, sqlite3_value *v, const char *fn, int *err)
{
    *err = 0;
    if (sqlite3_value_type(v) == SQLITE_NULL) return NULL;
    const char *s = (const char *)sqlite3_value_text(v);
    json_t *j = s ? json_loadb(s, (size_t)sqlite3_value_bytes(v), 0, NULL) : NULL;
    if (!json_is_array(j)) {
        json_decref(j);
        char *m = sqlite3_mprintf("No matching signature for function %s: the argument is not an ARRAY", fn);
        sqlite3_result_error(cx, m, -1);
        sqlite3_free(m);
        *err = 1;
        return NULL;
    }
    return j;
}

/* BigQuery's text of a numeric value in an error message. */
static void num_text(sqlite3_value *v, char out[64])
{
    if (sqlite3_value_type(v) == SQLITE_INTEGER) {
        snprintf(out, 64, "%lld", (long long)sqlite3_value_int64(v));
        return;
    }
    double d = sqlite3_value_double(v);
    if (d == floor(d) && fabs(d) < 1e15) snprintf(out, 64, "%.0f", d);
    else snprintf(out, 64, "%.15g", d);
}

static void f_fdiv(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
    double b = sqlite3_value_double(argv[1]);
    if (b == 0) {
        char x[64], y[64], m[160];
        num_text(argv[0], x);
        num_text(argv[1], y);
        snprintf(m, sizeof m, "division by zero: %s / %s", x, y);
        sqlite3_result_error(cx, m, -1);
        return;
    }
    sqlite3_result_double(cx, sqlite3_value_double(argv[0]) / b);
}

static void f_subscript(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int mode = sqlite3_value_int(argv[2]), safe = mode & 2, ordinal = mode & 1;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    json_t *j = s ? json_loadb(s, (size_t)sqlite3_value_bytes(argv[0]), 0, NULL) : NULL;
    if (sqlite3_value_type(argv[1]) == SQLITE_TEXT && json_is_object(j)) {
        result_json(cx, json_object_get(j, (const char *)sqlite3_value_text(argv[1])));
        json_decref(j);
        return;
    }
    if (!json_is_array(j)) {
        json_decref(j);
        sqlite3_result_error(cx, "Array element access with array subscript is only supported on ARRAY values", -1);
        return;
    }
    long long i = sqlite3_value_int64(argv[1]), k = ordinal ? i - 1 : i;
    if (k < 0 || (size_t)k >= json_array_size(j)) {
        json_decref(j);
        if (safe) return;
        char m[128];
        snprintf(m, sizeof m, "Array index %lld is out of bounds (%s)", i, k < 0 ? "underflow" : "overflow");
        sqlite3_result_error(cx, m, -1);
        return;
    }
    result_json(cx, json_array_get(j, (size_t)k));
    json_decref(j);
}

/* (struct).name: the field, or BigQuery's error on anything but a STRUCT. */
static void f_field(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    const char *name = (const char *)sqlite3_value_text(argv[1]);
    const char *s = sqlite3_value_type(argv[0]) == SQLITE_TEXT ? (const char *)sqlite3_value_text(argv[0]) : NULL;
    json_t *j = s ? json_loadb(s, (size_t)sqlite3_value_bytes(argv[0]), 0, NULL) : NULL;
    if (!json_is_object(j)) {
        json_decref(j);
        char *m = sqlite3_mprintf("Cannot access field %s on a value that is not a STRUCT", name ? name : "");
        sqlite3_result_error(cx, m, -1);
        sqlite3_free(m);
        return;
    }
    json_t *v = NULL;
    const char *k;
    json_t *e;
    json_object_foreach(j, k, e) if (name && !strcasecmp(k, name)) v = e;
    result_json(cx, v);
    json_decref(j);
}

static void f_array_to_string(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    int bad;
    json_t *a = arg_array(cx, argv[0], "ARRAY_TO_STRING", &bad);
    if (!a || sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
    const char *sep = (const char *)sqlite3_value_text(argv[1]);
    const char *null_text = argc > 2 ? (const char *)sqlite3_value_text(argv[2]) : NULL;
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    int n = 0;
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        if (json_is_null(e) && !null_text) continue;
        if (n++) mb_buf_puts(&b, sep);
        if (json_is_null(e)) mb_buf_puts(&b, null_text);
        else if (json_is_string(e)) mb_buf_append(&b, json_string_value(e), json_string_length(e));
        else {
            char *t = json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
            mb_buf_puts(&b, t);
            free(t);
        }
    }
    sqlite3_result_text(cx, b.data, (int)b.len, free);
    json_decref(a);
}

static void f_generate_array(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    for (int k = 0; k < argc; k++)
        if (sqlite3_value_type(argv[k]) == SQLITE_NULL) return;
    int ints = 1;
    for (int k = 0; k < argc; k++) ints &= sqlite3_value_type(argv[k]) == SQLITE_INTEGER;
    double s = sqlite3_value_double(argv[0]), e = sqlite3_value_double(argv[1]);
    double step = argc > 2 ? sqlite3_value_double(argv[2]) : 1;
    if (step == 0) {
        sqlite3_result_error(cx, "Sequence step cannot be 0.", -1);
        return;
    }
    double count = floor((e - s) / step) + 1;
    if (count > ARRAY_MAX_ELEMS) {
        sqlite3_result_error(cx, "GENERATE_ARRAY(): the result has more than 1000000 elements", -1);
        return;
    }
    json_t *a = json_array();
    for (long k = 0; k < (long)count; k++) {
        double v = s + step * (double)k;
        json_array_append_new(a, ints ? json_integer((json_int_t)v) : json_real(v));
    }
    result_array(cx, a);
    json_decref(a);
}

static void f_array_concat(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    json_t *out = json_array();
    for (int k = 0; k < argc; k++) {
        int bad;
        json_t *a = arg_array(cx, argv[k], "ARRAY_CONCAT", &bad);
        if (!a) {
            json_decref(out);
            if (!bad) sqlite3_result_null(cx);
            return;
        }
        json_array_extend(out, a);
        json_decref(a);
    }
    result_array(cx, out);
    json_decref(out);
}

static void f_array_reverse(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int bad;
    json_t *a = arg_array(cx, argv[0], "ARRAY_REVERSE", &bad);
    if (!a) return;
    json_t *out = json_array();
    for (size_t i = json_array_size(a); i > 0; i--) json_array_append(out, json_array_get(a, i - 1));
    result_array(cx, out);
    json_decref(out);
    json_decref(a);
}

static void f_array_length(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int bad;
    json_t *a = arg_array(cx, argv[0], "ARRAY_LENGTH", &bad);
    if (!a) return;
    sqlite3_result_int64(cx, (sqlite3_int64)json_array_size(a));
    json_decref(a);
}

/* ------------------------------------------------------------ ARRAY_AGG */

typedef struct agg_item {
    json_t *v;
    json_t *keys; /* array of key values */
    size_t seq;
} agg_item;

typedef struct array_agg {
    agg_item *items;
    size_t n, cap;
    int flags;
    long long limit;
    json_t *desc; /* per key: 1 = DESC */
    int too_many;
    size_t seq; /* the next item's arrival number */
} array_agg;

static void agg_step(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    array_agg *g = sqlite3_aggregate_context(cx, sizeof *g);
    if (!g || argc < 3 || (argc - 3) % 2) return;
    g->flags = sqlite3_value_int(argv[1]);
    g->limit = sqlite3_value_type(argv[2]) == SQLITE_NULL ? -1 : sqlite3_value_int64(argv[2]);
    if ((g->flags & 2) && sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    if (g->n >= ARRAY_MAX_ELEMS) {
        g->too_many = 1;
        return;
    }
    json_t *v = value_json(argv[0]);
    if (g->flags & 1)
        for (size_t i = 0; i < g->n; i++)
            if (json_equal(g->items[i].v, v)) {
                json_decref(v);
                return;
            }
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 16;
        g->items = mb_realloc(g->items, g->cap * sizeof *g->items);
    }
    json_t *keys = json_array();
    if (!g->desc) g->desc = json_array();
    for (int k = 3; k + 1 < argc; k += 2) {
        json_array_append_new(keys, value_json(argv[k]));
        if (!g->n) json_array_append_new(g->desc, json_boolean(sqlite3_value_int(argv[k + 1])));
    }
    g->items[g->n] = (agg_item){v, keys, g->seq++};
    g->n++;
}

/* As a window function: the row leaving the frame is the first that came. */
static void agg_inverse(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    array_agg *g = sqlite3_aggregate_context(cx, 0);
    if (!g || !g->n || argc < 1) return;
    if ((g->flags & 2) && sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    json_decref(g->items[0].v);
    json_decref(g->items[0].keys);
    memmove(g->items, g->items + 1, (g->n - 1) * sizeof *g->items);
    g->n--;
}

/* SQLite's order of values: NULL < numbers < text; ascending puts NULL first
 * as BigQuery does. */
static int cmp_json(json_t *a, json_t *b)
{
    int ra = json_is_null(a) ? 0 : json_is_number(a) ? 1 : 2;
    int rb = json_is_null(b) ? 0 : json_is_number(b) ? 1 : 2;
    if (ra != rb) return ra < rb ? -1 : 1;
    if (ra == 1) {
        double x = json_number_value(a), y = json_number_value(b);
        return x < y ? -1 : x > y;
    }
    if (ra == 2 && json_is_string(a) && json_is_string(b)) return strcmp(json_string_value(a), json_string_value(b));
    return 0;
}

static int cmp_items(const void *pa, const void *pb, void *ctx)
{
    const agg_item *a = pa, *b = pb;
    json_t *desc = ctx;
    for (size_t k = 0; k < json_array_size(a->keys); k++) {
        int c = cmp_json(json_array_get(a->keys, k), json_array_get(b->keys, k));
        if (json_is_true(json_array_get(desc, k))) c = -c;
        if (c) return c;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The array of the items now held (sorted on a copy: a window's inverse
 * needs them in arrival order). */
static void agg_result(sqlite3_context *cx, array_agg *g)
{
    if (!g || !g->n) {
        sqlite3_result_null(cx);
        return;
    }
    if (g->too_many) {
        sqlite3_result_error(cx, "ARRAY_AGG: the array has more than 1000000 elements", -1);
        return;
    }
    agg_item *sorted = mb_malloc(g->n * sizeof *sorted);
    memcpy(sorted, g->items, g->n * sizeof *sorted);
    qsort_r(sorted, g->n, sizeof *sorted, cmp_items, g->desc);
    json_t *a = json_array();
    int nul = 0;
    for (size_t i = 0; i < g->n && (g->limit < 0 || (long long)i < g->limit); i++) {
        nul |= json_is_null(sorted[i].v);
        json_array_append(a, sorted[i].v);
    }
    free(sorted);
    if (nul) sqlite3_result_error(cx, "Array cannot have a null element; error in writing field ARRAY_AGG", -1);
    else result_array(cx, a);
    json_decref(a);
}

static void agg_value(sqlite3_context *cx)
{
    agg_result(cx, sqlite3_aggregate_context(cx, 0));
}

static void agg_final(sqlite3_context *cx)
{
    array_agg *g = sqlite3_aggregate_context(cx, 0);
    agg_result(cx, g);
    if (!g) return;
    for (size_t i = 0; i < g->n; i++) {
        json_decref(g->items[i].v);
        json_decref(g->items[i].keys);
    }
    free(g->items);
    json_decref(g->desc);
}

/* ------------------------------------------------------------ bq_unnest */

typedef struct un_vtab {
    sqlite3_vtab base;
} un_vtab;

typedef struct un_cur {
    sqlite3_vtab_cursor base;
    json_t *a;
    size_t i;
} un_cur;

static int un_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
    (void)aux;
    (void)argc;
    (void)argv;
    (void)err;
    int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(\"__v\", arr HIDDEN, \"__o\" HIDDEN)");
    if (rc != SQLITE_OK) return rc;
    un_vtab *v = sqlite3_malloc(sizeof *v);
    if (!v) return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    *out = &v->base;
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    return SQLITE_OK;
}

static int un_disconnect(sqlite3_vtab *v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}

static int un_best_index(sqlite3_vtab *v, sqlite3_index_info *ii)
{
    (void)v;
    int arg = -1;
    for (int i = 0; i < ii->nConstraint; i++) {
        if (ii->aConstraint[i].iColumn != 1) continue; /* arr: the function's argument */
        if (!ii->aConstraint[i].usable || ii->aConstraint[i].op != SQLITE_INDEX_CONSTRAINT_EQ)
            return SQLITE_CONSTRAINT;
        arg = i;
    }
    if (arg < 0) {
        ii->idxNum = 0;
        ii->estimatedCost = 1e12;
        return SQLITE_OK;
    }
    ii->aConstraintUsage[arg].argvIndex = 1;
    ii->aConstraintUsage[arg].omit = 1;
    ii->idxNum = 1;
    ii->estimatedCost = 10;
    ii->estimatedRows = 10;
    return SQLITE_OK;
}

static int un_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
    (void)v;
    un_cur *c = sqlite3_malloc(sizeof *c);
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    *out = &c->base;
    return SQLITE_OK;
}

static int un_close(sqlite3_vtab_cursor *cur)
{
    un_cur *c = (un_cur *)cur;
    json_decref(c->a);
    sqlite3_free(c);
    return SQLITE_OK;
}

static int un_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxs, int argc, sqlite3_value **argv)
{
    (void)idxs;
    un_cur *c = (un_cur *)cur;
    json_decref(c->a);
    c->a = NULL;
    c->i = 0;
    if (idx != 1 || argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) return SQLITE_OK;
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    c->a = s ? json_loadb(s, (size_t)sqlite3_value_bytes(argv[0]), 0, NULL) : NULL;
    if (!json_is_array(c->a)) {
        json_decref(c->a);
        c->a = NULL;
        sqlite3_free(cur->pVtab->zErrMsg);
        cur->pVtab->zErrMsg = sqlite3_mprintf("Values referenced in UNNEST must be arrays. UNNEST contains "
                                              "expression of type STRING");
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
}

static int un_next(sqlite3_vtab_cursor *cur)
{
    ((un_cur *)cur)->i++;
    return SQLITE_OK;
}

static int un_eof(sqlite3_vtab_cursor *cur)
{
    un_cur *c = (un_cur *)cur;
    return !c->a || c->i >= json_array_size(c->a);
}

static int un_column(sqlite3_vtab_cursor *cur, sqlite3_context *cx, int col)
{
    un_cur *c = (un_cur *)cur;
    if (col == 0) result_json(cx, json_array_get(c->a, c->i));
    else if (col == 2) sqlite3_result_int64(cx, (sqlite3_int64)c->i);
    return SQLITE_OK;
}

static int un_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *r)
{
    *r = (sqlite3_int64)((un_cur *)cur)->i;
    return SQLITE_OK;
}

static sqlite3_module UNNEST = {
    .iVersion = 0,
    .xConnect = un_connect,
    .xBestIndex = un_best_index,
    .xDisconnect = un_disconnect,
    .xOpen = un_open,
    .xClose = un_close,
    .xFilter = un_filter,
    .xNext = un_next,
    .xEof = un_eof,
    .xColumn = un_column,
    .xRowid = un_rowid,
};

int mb_gc__arrays_register(sqlite3 *db)
{
    const int F = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
    static const mb_gc__sqlfn S[] = {
        {"bq_fdiv", 2, f_fdiv, 0},
        {"bq_subscript", 3, f_subscript, 0},
        {"bq_field", 2, f_field, 0},
        {"bq_array_to_string", 2, f_array_to_string, 0},
        {"bq_array_to_string", 3, f_array_to_string, 0},
        {"bq_generate_array", 2, f_generate_array, 0},
        {"bq_generate_array", 3, f_generate_array, 0},
        {"bq_array_concat", -1, f_array_concat, 0},
        {"bq_array_reverse", 1, f_array_reverse, 0},
        {"bq_array_length", 1, f_array_length, 0},
        {"bq_split", 1, f_split, 0},
        {"bq_split", 2, f_split, 0},
    };
    int rc = mb_gc__sqlfn_register(db, S, sizeof S / sizeof *S, F);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_window_function(db, "bq_array_agg", -1, F, NULL, agg_step, agg_final, agg_value,
                                            agg_inverse, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_module(db, "bq_unnest", &UNNEST, NULL);
    return rc;
}
