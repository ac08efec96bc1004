/*
 * bigquery.c - running BigQuery work on the project database: queries and
 * scripts (plans from translate.c, with query parameters and result schemas),
 * DDL and DML statements, streaming inserts, CSV / NDJSON loads with schema
 * autodetection, and the job history.
 *
 * Result column types come from, in order: the column's origin table in the
 * catalog; the translator's hint for the select item (a call with a known
 * result type, a comparison, a typed literal); the values themselves.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ----------------------------------------------------------------- jobs */

int64_t mb_gc_bq_job_add(mb_gc *gc, const char *type, const char *query, const char *error,
                         char job_id[64])
{
    unsigned char r[12];
    char hex[25];
    mb_random_bytes(r, sizeof r, NULL);
    mb_hex(r, sizeof r, hex);
    snprintf(job_id, 64, "job_%s", hex);
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "INSERT INTO __bq_jobs(id, type, state, query, error, created, ended) "
                        "VALUES(?,?,'DONE',?,?,?,?)", &st, NULL))
        return -1;
    int64_t now = mb_gc_clock_ms(gc);
    sqlite3_bind_text(st, 1, job_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, type, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, query, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, error, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, now);
    sqlite3_bind_int64(st, 6, now);
    sqlite3_step(st);
    sqlite3_finalize(st);
    return sqlite3_last_insert_rowid(gc->db);
}

static json_t *job_row(sqlite3_stmt *st)
{
    return json_pack("{s:s,s:s,s:s,s:s?,s:s?,s:I,s:I}", "id", sqlite3_column_text(st, 0),
                     "type", sqlite3_column_text(st, 1), "state", sqlite3_column_text(st, 2),
                     "query", sqlite3_column_text(st, 3), "error", sqlite3_column_text(st, 4),
                     "created", (json_int_t)sqlite3_column_int64(st, 5), "ended",
                     (json_int_t)sqlite3_column_int64(st, 6));
}

json_t *mb_gc_bq_job_list(mb_gc *gc, int max, const char *state)
{
    json_t *arr = json_array();
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "SELECT id, type, state, query, error, created, ended FROM __bq_jobs "
                        "WHERE (?1 IS NULL OR ?1 = '' OR state = upper(?1)) ORDER BY seq DESC LIMIT ?2",
                    &st, NULL))
        return arr;
    sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, max > 0 ? max : 50);
    while (sqlite3_step(st) == SQLITE_ROW) json_array_append_new(arr, job_row(st));
    sqlite3_finalize(st);
    return arr;
}

int mb_gc_bq_job_get(mb_gc *gc, const char *id, json_t **out, mb_err *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT id, type, state, query, error, created, ended FROM __bq_jobs "
                             "WHERE id = ?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) *out = job_row(st);
    sqlite3_finalize(st);
    if (!*out) return mb_err_set(err, MB_ENOTFOUND, "Not found: Job %s:%s", gc->project, id);
    return MB_OK;
}

/* --------------------------------------------------------------- inserts */

/* INSERT INTO "d.t"(all columns) VALUES(?, ...) */
static char *insert_sql(const char *dataset, const char *table, json_t *fields)
{
    mb_buf b = {0};
    char *name = mb_gc__data_table(dataset, table);
    mb_buf_printf(&b, "INSERT INTO %s(", name);
    free(name);
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f)
        mb_buf_printf(&b, "%s\"%s\"", i ? ", " : "", json_string_value(json_object_get(f, "name")));
    mb_buf_puts(&b, ") VALUES(");
    for (i = 0; i < json_array_size(fields); i++) mb_buf_puts(&b, i ? ", ?" : "?");
    mb_buf_puts(&b, ")");
    return mb_buf_steal(&b);
}

static json_t *field_named(json_t *fields, const char *name)
{
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f)
        if (!strcasecmp(json_string_value(json_object_get(f, "name")), name)) return f;
    return NULL;
}

int mb_gc_bq_insert(mb_gc *gc, const char *dataset, const char *table, json_t *rows,
                    json_t **row_errors, mb_err *err)
{
    if (row_errors) *row_errors = NULL;
    json_t *fields = mb_gc__table_fields(gc, dataset, table);
    if (!fields)
        return mb_err_set(err, MB_ENOTFOUND, "Not found: Table %s:%s.%s", gc->project, dataset, table);
    if (!json_is_array(rows)) {
        json_decref(fields);
        return mb_err_set(err, MB_EINVAL, "rows must be a list");
    }
    char *sql = insert_sql(dataset, table, fields);
    sqlite3_stmt *st = NULL;
    int own = sqlite3_get_autocommit(gc->db);
    int rc = own ? mb_gc__begin(gc, err) : MB_OK;
    if (!rc) rc = mb_gc__prep(gc, sql, &st, err);
    json_t *errs = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(rc ? NULL : rows, i, row) {
        mb_err e = {0};
        int bad = 0;
        if (!json_is_object(row)) {
            mb_err_set(&e, MB_EINVAL, "Row is not an object");
            bad = 1;
        }
        const char *k;
        json_t *v;
        if (!bad)
            json_object_foreach(row, k, v) if (!field_named(fields, k)) {
                mb_err_set(&e, MB_EINVAL, "no such field: %.100s.", k);
                bad = 1;
                break;
            }
        size_t c;
        json_t *f;
        json_array_foreach(bad ? NULL : fields, c, f) {
            json_t *val = NULL;
            const char *fk;
            json_t *fv;
            json_object_foreach(row, fk, fv)
                if (!strcasecmp(fk, json_string_value(json_object_get(f, "name")))) val = fv;
            if (mb_gc__bind_value(st, (int)c + 1, val, f, &e)) {
                bad = 1;
                break;
            }
        }
        if (!bad && sqlite3_step(st) != SQLITE_DONE) {
            mb_err_set(&e, MB_EIO, "database: %s", sqlite3_errmsg(gc->db));
            bad = 1;
        }
        if (bad) json_array_append_new(errs, json_pack("{s:I,s:s}", "index", (json_int_t)i, "message", e.msg));
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    sqlite3_finalize(st);
    if (!rc && json_array_size(errs)) {
        rc = mb_err_set(err, MB_EINVAL, "%zu row(s) could not be inserted: %s", json_array_size(errs),
                        json_string_value(json_object_get(json_array_get(errs, 0), "message")));
        if (row_errors) *row_errors = json_incref(errs);
    }
    if (!rc && own) rc = mb_gc__commit(gc, err);
    if (rc && own) mb_gc__rollback(gc);
    json_decref(errs);
    json_decref(fields);
    free(sql);
    return rc;
}

/* ----------------------------------------------------------------- loads */

/* One CSV record from *p (RFC 4180): cells appended as json strings. */
static int csv_record(const char **p, const char *end, json_t *cells, mb_err *err)
{
    const char *s = *p;
    mb_buf cell = {0};
    for (;;) {
        mb_buf_reset(&cell);
        if (s < end && *s == '"') {
            s++;
            for (;;) {
                if (s >= end) {
                    mb_buf_free(&cell);
                    return mb_err_set(err, MB_EINVAL, "Error while reading data: unterminated quoted field");
                }
                if (*s == '"') {
                    if (s + 1 < end && s[1] == '"') {
                        mb_buf_putc(&cell, '"');
                        s += 2;
                        continue;
                    }
                    s++;
                    break;
                }
                mb_buf_putc(&cell, *s++);
            }
            while (s < end && *s != ',' && *s != '\n' && *s != '\r') mb_buf_putc(&cell, *s++);
        } else {
            while (s < end && *s != ',' && *s != '\n' && *s != '\r') mb_buf_putc(&cell, *s++);
        }
        json_t *v = json_stringn(cell.data ? cell.data : "", cell.len);
        if (!v) {
            mb_buf_free(&cell);
            return mb_err_set(err, MB_EINVAL, "Error while reading data: CSV is not valid UTF-8");
        }
        json_array_append_new(cells, v);
        if (s < end && *s == ',') {
            s++;
            continue;
        }
        if (s < end && *s == '\r') s++;
        if (s < end && *s == '\n') s++;
        break;
    }
    mb_buf_free(&cell);
    *p = s;
    return MB_OK;
}

static const char *detect_text(const char *s)
{
    if (!*s) return NULL;
    char *end;
    strtoll(s, &end, 10);
    if (!*end && (isdigit((unsigned char)*s) || ((*s == '-' || *s == '+') && s[1]))) return "INTEGER";
    strtod(s, &end);
    if (!*end && !isspace((unsigned char)*s)) return "FLOAT";
    if (!strcasecmp(s, "true") || !strcasecmp(s, "false")) return "BOOLEAN";
    char b[40];
    if (strlen(s) == 10 && !mb_gc__date_norm(s, b)) return "DATE";
    if (strlen(s) > 10 && !mb_gc__ts_norm(s, b)) return "TIMESTAMP";
    return "STRING";
}

static const char *merge_type(const char *a, const char *b)
{
    if (!a) return b;
    if (!b || !strcmp(a, b)) return a;
    if ((!strcmp(a, "INTEGER") && !strcmp(b, "FLOAT")) || (!strcmp(a, "FLOAT") && !strcmp(b, "INTEGER")))
        return "FLOAT";
    if ((!strcmp(a, "DATE") && !strcmp(b, "TIMESTAMP")) || (!strcmp(a, "TIMESTAMP") && !strcmp(b, "DATE")))
        return "TIMESTAMP";
    return "STRING";
}

static json_t *detect_json(json_t *v);

static json_t *detect_field(const char *name, json_t *v)
{
    json_t *f = json_pack("{s:s,s:s,s:s}", "name", name, "type", "STRING", "mode", "NULLABLE");
    if (json_is_array(v)) {
        json_object_set_new(f, "mode", json_string("REPEATED"));
        v = json_array_get(v, 0);
    }
    if (json_is_integer(v)) json_object_set_new(f, "type", json_string("INTEGER"));
    else if (json_is_real(v)) json_object_set_new(f, "type", json_string("FLOAT"));
    else if (json_is_boolean(v)) json_object_set_new(f, "type", json_string("BOOLEAN"));
    else if (json_is_string(v)) {
        const char *t = detect_text(json_string_value(v));
        if (t && (!strcmp(t, "DATE") || !strcmp(t, "TIMESTAMP"))) json_object_set_new(f, "type", json_string(t));
    } else if (json_is_object(v)) {
        json_object_set_new(f, "type", json_string("RECORD"));
        json_object_set_new(f, "fields", detect_json(v));
    }
    return f;
}

static json_t *detect_json(json_t *obj)
{
    json_t *fields = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) json_array_append_new(fields, detect_field(k, v));
    return fields;
}

/* Field name from a CSV header cell, as BigQuery's autodetect cleans it. */
static char *clean_name(const char *s, size_t idx)
{
    mb_buf b = {0};
    for (const char *c = s; *c; c++)
        mb_buf_putc(&b, isalnum((unsigned char)*c) || *c == '_' ? *c : '_');
    if (!b.len) mb_buf_printf(&b, "string_field_%zu", idx);
    else if (isdigit((unsigned char)b.data[0])) {
        char *t = mb_buf_steal(&b);
        mb_buf_printf(&b, "_%s", t);
        free(t);
    }
    return mb_buf_steal(&b);
}

static int ensure_table(mb_gc *gc, const char *dataset, const char *table, json_t *detected,
                        const mb_gc_load *o, mb_err *err)
{
    json_t *have = mb_gc__table_fields(gc, dataset, table);
    int rc = MB_OK;
    if (have && o->write == MB_GC_WRITE_TRUNCATE && (o->fields || o->autodetect) && detected &&
        !json_equal(have, detected)) {
        json_decref(have);
        have = NULL;
        if ((rc = mb_gc_bq_table_delete(gc, dataset, table, err))) return rc;
    }
    if (!have) {
        if (!detected)
            return mb_err_set(err, MB_EINVAL, "No schema specified on job or table.");
        return mb_gc_bq_table_create(gc, dataset, table, detected, NULL, err);
    }
    if (o->write == MB_GC_WRITE_TRUNCATE) {
        char *name = mb_gc__data_table(dataset, table);
        char *q = mb_asprintf("DELETE FROM %s", name);
        rc = mb_gc__exec(gc, q, err);
        free(q);
        free(name);
    } else if (o->write == MB_GC_WRITE_EMPTY) {
        json_t *t;
        if (!(rc = mb_gc_bq_table_get(gc, dataset, table, &t, err))) {
            if (json_integer_value(json_object_get(t, "num_rows")) > 0)
                rc = mb_err_set(err, MB_ECONFLICT, "Already Exists: Table %s:%s.%s", gc->project,
                                dataset, table);
            json_decref(t);
        }
    }
    json_decref(have);
    return rc;
}

int mb_gc_bq_load(mb_gc *gc, const char *dataset, const char *table, const char *data,
                  size_t len, const mb_gc_load *o, long *rows_loaded, mb_err *err)
{
    *rows_loaded = 0;
    json_t *ds;
    int rc = mb_gc_bq_dataset_get(gc, dataset, &ds, err);
    if (rc) return rc;
    json_decref(ds);
    if ((rc = mb_gc__check_id("Table", table, err))) return rc;
    /* parse everything first */
    json_t *records = json_array(), *header = NULL;
    const char *p = data, *end = data + len;
    if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3)) p += 3;
    int line = 0;
    while (p < end && !rc) {
        if (o->format == MB_GC_CSV) {
            if (*p == '\n' || *p == '\r') { /* blank line */
                p += (*p == '\r' && p + 1 < end && p[1] == '\n') ? 2 : 1;
                continue;
            }
            json_t *cells = json_array();
            rc = csv_record(&p, end, cells, err);
            if (!rc && line < o->skip_leading_rows) {
                if (!header) header = json_incref(cells);
            } else if (!rc) json_array_append(records, cells);
            json_decref(cells);
        } else {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *le = nl ? nl : end;
            const char *q = p;
            while (q < le && isspace((unsigned char)*q)) q++;
            if (q < le) {
                json_error_t je;
                json_t *obj = json_loadb(p, (size_t)(le - p), 0, &je);
                if (!json_is_object(obj))
                    rc = mb_err_set(err, MB_EINVAL, "Error while reading data, error message: JSON "
                                    "parsing error in row starting at position %ld: %s",
                                    (long)(p - data), obj ? "Expected an object" : je.text);
                else json_array_append(records, obj);
                json_decref(obj);
            }
            p = nl ? nl + 1 : end;
        }
        line++;
    }
    json_t *fields = NULL;
    if (!rc) {
        json_t *have = mb_gc__table_fields(gc, dataset, table);
        if (o->fields) fields = json_deep_copy(o->fields);
        else if (have && !(o->autodetect && o->write == MB_GC_WRITE_TRUNCATE)) fields = json_incref(have);
        else if (o->autodetect || !have) {
            if (o->format == MB_GC_CSV) {
                size_t ncol = header ? json_array_size(header)
                                     : json_array_size(json_array_get(records, 0));
                fields = json_array();
                for (size_t c = 0; c < ncol; c++) {
                    const char *t = NULL;
                    size_t r;
                    json_t *rec;
                    json_array_foreach(records, r, rec) {
                        const char *s = json_string_value(json_array_get(rec, c));
                        if (s && *s) t = merge_type(t, detect_text(s));
                    }
                    char *name = header ? clean_name(json_string_value(json_array_get(header, c)), c)
                                        : mb_asprintf("string_field_%zu", c);
                    json_array_append_new(fields, json_pack("{s:s,s:s,s:s}", "name", name, "type",
                                                            t ? t : "STRING", "mode", "NULLABLE"));
                    free(name);
                }
            } else {
                fields = json_array();
                size_t r;
                json_t *rec;
                json_array_foreach(records, r, rec) {
                    const char *k;
                    json_t *v;
                    json_object_foreach(rec, k, v) {
                        json_t *f = field_named(fields, k);
                        if (json_is_null(v)) {
                            if (!f) json_array_append_new(fields, detect_field(k, json_null()));
                            continue;
                        }
                        json_t *nf = detect_field(k, v);
                        if (!f) json_array_append_new(fields, nf);
                        else {
                            const char *a = json_string_value(json_object_get(f, "type"));
                            const char *b = json_string_value(json_object_get(nf, "type"));
                            if (strcmp(a, "RECORD") && strcmp(b, "RECORD"))
                                json_object_set_new(f, "type", json_string(merge_type(a, b)));
                            json_decref(nf);
                        }
                    }
                }
            }
        }
        json_decref(have);
        if (fields) rc = mb_gc__fields_check(fields, err);
    }
    int own = sqlite3_get_autocommit(gc->db);
    if (!rc && own) rc = mb_gc__begin(gc, err);
    if (!rc) rc = ensure_table(gc, dataset, table, fields, o, err);
    if (!rc && o->format == MB_GC_CSV) {
        char *sql = insert_sql(dataset, table, fields);
        sqlite3_stmt *st = NULL;
        rc = mb_gc__prep(gc, sql, &st, err);
        size_t nf = json_array_size(fields), r;
        json_t *rec;
        json_array_foreach(rc ? NULL : records, r, rec) {
            if (json_array_size(rec) != nf) {
                rc = mb_err_set(err, MB_EINVAL,
                                "Error while reading data, error message: CSV table encountered "
                                "too many errors, giving up. Row %zu has %zu columns, the schema %zu.",
                                r + 1 + (size_t)o->skip_leading_rows, json_array_size(rec), nf);
                break;
            }
            for (size_t c = 0; c < nf && !rc; c++) {
                json_t *cell = json_array_get(rec, c);
                rc = mb_gc__bind_text(st, (int)c + 1, json_string_value(cell),
                                      json_string_length(cell), json_array_get(fields, c), err);
                if (rc) mb_err_wrap(err, 0, "Error while reading data, row %zu, column %zu",
                                    r + 1 + (size_t)o->skip_leading_rows, c + 1);
            }
            if (!rc && sqlite3_step(st) != SQLITE_DONE)
                rc = mb_err_set(err, MB_EIO, "database: %s", sqlite3_errmsg(gc->db));
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        free(sql);
    } else if (!rc) {
        json_t *errs = NULL;
        rc = mb_gc_bq_insert(gc, dataset, table, records, &errs, err);
        json_decref(errs);
    }
    if (!rc) *rows_loaded = (long)json_array_size(records);
    if (!rc && own) rc = mb_gc__commit(gc, err);
    if (rc && own) mb_gc__rollback(gc);
    json_decref(fields);
    json_decref(records);
    json_decref(header);
    return rc;
}

/* --------------------------------------------------------------- queries */

static int bind_params(mb_gc *gc, sqlite3_stmt *st, json_t *params, mb_err *err)
{
    int n = sqlite3_bind_parameter_count(st);
    int positional = 0;
    for (int i = 1; i <= n; i++) {
        const char *pname = sqlite3_bind_parameter_name(st, i);
        json_t *p = NULL;
        if (pname && pname[0] == '@') {
            size_t k;
            json_t *c;
            json_array_foreach(params, k, c)
                if (!strcasecmp(json_string_value(json_object_get(c, "name")) ?: "", pname + 1)) p = c;
            if (!p) return mb_err_set(err, MB_EINVAL, "Query parameter '%s' not found", pname + 1);
        } else {
            p = json_array_get(params, (size_t)positional++);
            if (!p) return mb_err_set(err, MB_EINVAL, "Not enough positional query parameters");
        }
        const char *type = json_string_value(json_object_get(json_object_get(p, "parameterType"), "type"));
        json_t *v = json_object_get(json_object_get(p, "parameterValue"), "value");
        json_t *field = json_pack("{s:s,s:s,s:s}", "name", "p", "type",
                                  mb_gc__type_canon(type ? type : "STRING") ?: "STRING", "mode", "NULLABLE");
        if (!strcmp(json_string_value(json_object_get(field, "type")), "RECORD")) {
            json_decref(field);
            return mb_err_set(err, MB_EINVAL, "Unsupported: STRUCT and ARRAY query parameters");
        }
        int rc = mb_gc__bind_value(st, i, v ? v : json_null(), field, err);
        json_decref(field);
        if (rc) return rc;
    }
    (void)gc;
    return MB_OK;
}

/* The name BigQuery gives a result column. */
static char *column_name(sqlite3_stmt *st, int i, int *anon)
{
    const char *n = sqlite3_column_name(st, i);
    if (sqlite3_column_origin_name(st, i)) return mb_strdup(n);
    if (!strncmp(n, "json_extract(", 13)) {
        const char *q = strrchr(n, '\'');
        const char *dot = q ? NULL : NULL;
        for (const char *c = n; q && c < q; c++)
            if (*c == '.') dot = c;
        if (dot) return mb_strndup(dot + 1, (size_t)(q - dot - 1));
    }
    int plain = *n && (isalpha((unsigned char)*n) || *n == '_');
    for (const char *c = n; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && (unsigned char)*c < 0x80) plain = 0;
    if (plain) return mb_strdup(n);
    return mb_asprintf("f%d_", (*anon)++);
}

/* ---------------------------------------------- ARRAY and STRUCT results */

static void fill_field(json_t *f, json_t *vals);

/* Completes field f (its type, sub-fields, element type) from vals, the
 * values it holds (arrays already expanded into their elements). */
static void fill_scalar(json_t *f, json_t *vals)
{
    const char *t = json_string_value(json_object_get(f, "type"));
    if (!t) {
        int ints = 0, reals = 0, bools = 0, objs = 0, other = 0;
        size_t i;
        json_t *v;
        json_array_foreach(vals, i, v) {
            if (json_is_null(v)) continue;
            ints += json_is_integer(v);
            reals += json_is_real(v);
            bools += json_is_boolean(v);
            objs += json_is_object(v);
            other += json_is_string(v) || json_is_array(v);
        }
        t = objs && !ints && !reals && !bools && !other ? "RECORD"
            : bools && !ints && !reals && !objs && !other ? "BOOLEAN"
            : ints && !reals && !bools && !objs && !other ? "INTEGER"
            : (ints || reals) && !bools && !objs && !other ? "FLOAT" : "STRING";
        json_object_set_new(f, "type", json_string(t));
    }
    if (strcmp(json_string_value(json_object_get(f, "type")), "RECORD")) return;
    json_t *subs = json_object_get(f, "fields");
    if (!json_is_array(subs)) {
        subs = json_array();
        json_object_set_new(f, "fields", subs);
    }
    size_t i;
    json_t *v;
    json_array_foreach(vals, i, v) {
        const char *k;
        json_t *e;
        json_object_foreach(json_is_object(v) ? v : NULL, k, e)
            if (!field_named(subs, k)) json_array_append_new(subs, json_pack("{s:s}", "name", k));
    }
    json_t *s;
    json_array_foreach(subs, i, s) {
        json_t *sv = json_array();
        size_t k;
        json_t *row;
        const char *name = json_string_value(json_object_get(s, "name"));
        json_array_foreach(vals, k, row) {
            json_t *e = json_is_object(row) ? json_object_get(row, name) : NULL;
            json_array_append(sv, e ? e : json_null());
        }
        fill_field(s, sv);
        json_decref(sv);
    }
}

static void fill_field(json_t *f, json_t *vals)
{
    const char *m = json_string_value(json_object_get(f, "mode"));
    if (!m) json_object_set_new(f, "mode", json_string("NULLABLE"));
    if (m && !strcmp(m, "REPEATED")) {
        json_t *elems = json_array();
        size_t i;
        json_t *v;
        json_array_foreach(vals, i, v) if (json_is_array(v)) json_array_extend(elems, v);
        fill_scalar(f, elems);
        json_decref(elems);
    } else {
        fill_scalar(f, vals);
    }
}

/* A value of field f in the types its schema says (0/1 as booleans,
 * integers as reals, records in the schema's key order). */
static json_t *typed_value(json_t *v, json_t *f, int elem)
{
    const char *t = json_string_value(json_object_get(f, "type")) ?: "STRING";
    const char *m = json_string_value(json_object_get(f, "mode"));
    /* a NULL ARRAY comes out as [], as BigQuery writes results */
    if (!v || json_is_null(v)) return !elem && m && !strcmp(m, "REPEATED") ? json_array() : json_null();
    if (!elem && m && !strcmp(m, "REPEATED")) {
        json_t *a = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(json_is_array(v) ? v : NULL, i, e) json_array_append_new(a, typed_value(e, f, 1));
        return a;
    }
    if (!strcmp(t, "BOOLEAN") && json_is_integer(v)) return json_boolean(json_integer_value(v) != 0);
    if (!strcmp(t, "FLOAT") && json_is_integer(v)) return json_real((double)json_integer_value(v));
    if (!strcmp(t, "RECORD") && json_is_object(v)) {
        json_t *o = json_object();
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(f, "fields"), i, s) {
            const char *name = json_string_value(json_object_get(s, "name"));
            json_object_set_new(o, name, typed_value(json_object_get(v, name), s, 0));
        }
        return o;
    }
    return json_incref(v);
}

/* Whether column i holds JSON arrays or objects as text (a query that makes
 * ARRAY / STRUCT values read through a subquery or a CTE, where the
 * translator's hint does not reach): then they are parsed in place and f
 * becomes REPEATED or RECORD. */
static int json_values_nested(json_t *rows, size_t i, json_t *f)
{
    size_t k;
    json_t *row;
    int arrays = 0, objects = 0, other = 0;
    json_array_foreach(rows, k, row) {
        json_t *v = json_array_get(row, i);
        if (json_is_null(v)) continue;
        const char *s = json_string_value(v);
        if (s && *s == '[') arrays++;
        else if (s && *s == '{') objects++;
        else other++;
    }
    if (other || (!arrays && !objects) || (arrays && objects)) return 0;
    json_t *parsed = json_array();
    json_array_foreach(rows, k, row) {
        json_t *v = json_array_get(row, i);
        json_t *j = json_is_null(v) ? json_null() : json_loads(json_string_value(v), 0, NULL);
        if (!j) {
            json_decref(parsed);
            return 0;
        }
        json_array_append_new(parsed, j);
    }
    json_array_foreach(rows, k, row) json_array_set(row, i, json_array_get(parsed, k));
    json_decref(parsed);
    json_object_set_new(f, "mode", json_string(arrays ? "REPEATED" : "NULLABLE"));
    return 1;
}

static void complete_nested(json_t *rows, size_t i, json_t *f)
{
    json_t *vals = json_array();
    size_t k;
    json_t *row;
    json_array_foreach(rows, k, row) json_array_append(vals, json_array_get(row, i));
    fill_field(f, vals);
    json_decref(vals);
    json_array_foreach(rows, k, row) json_array_set_new(row, i, typed_value(json_array_get(row, i), f, 0));
}

static int run_select(mb_gc *gc, mb_gc_plan *p, json_t *params, mb_gc_result *r, mb_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(gc->db, p->sql, -1, &st, NULL) != SQLITE_OK)
        return mb_gc__sql_fail(gc, err);
    int rc = bind_params(gc, st, params, err);
    if (rc) {
        sqlite3_finalize(st);
        return rc;
    }
    int nc = sqlite3_column_count(st), anon = 0;
    json_t *fields = json_array();
    const char **types = mb_calloc((size_t)nc + 1, sizeof *types);
    const char **modes = mb_calloc((size_t)nc + 1, sizeof *modes);
    json_t *keep = json_array(); /* owns looked-up fields */
    int star = 0, unnest_seen = 0;
    size_t star_at = (size_t)-1; /* columns from a '*' on have no hints of their own */
    for (size_t k = 0; k < json_array_size(p->hints); k++)
        if (star_at == (size_t)-1 && !strcmp(json_string_value(json_array_get(p->hints, k)) ?: "", "*")) star_at = k;
    for (int i = 0; i < nc; i++) {
        if ((size_t)i >= star_at) star = 1;
        const char *tname = sqlite3_column_table_name(st, i);
        const char *oname = sqlite3_column_origin_name(st, i);
        const char *dot = tname ? strchr(tname, '.') : NULL;
        if (dot && oname) {
            char *ds = mb_strndup(tname, (size_t)(dot - tname));
            json_t *tf = mb_gc__table_fields(gc, ds, dot + 1);
            free(ds);
            json_t *f = tf ? field_named(tf, oname) : NULL;
            if (f) {
                types[i] = json_string_value(json_object_get(f, "type"));
                modes[i] = json_string_value(json_object_get(f, "mode"));
                json_t *copy = json_deep_copy(f);
                json_array_append_new(keep, tf);
                char *cn = column_name(st, i, &anon);
                json_object_set_new(copy, "name", json_string(cn));
                free(cn);
                if (!strcmp(modes[i], "REQUIRED")) json_object_set_new(copy, "mode", json_string("NULLABLE"));
                json_object_del(copy, "description");
                json_array_append_new(fields, copy);
                continue;
            }
            json_decref(tf);
        }
        json_t *h = json_array_get(p->hints, (size_t)i);
        if (json_is_string(h) && !strcmp(json_string_value(h), "*")) star = 1;
        if (!star && json_is_string(h)) types[i] = json_string_value(h);
        const char *sq = sqlite3_column_name(st, i);
        int elem = !strcmp(sq, "__v") || !strcmp(sq, "__o"); /* an UNNEST's element / offset */
        if (!star && json_is_object(h)) { /* ARRAY / STRUCT values, UNNEST elements */
            json_t *fld = json_deep_copy(h);
            if (!elem || !json_is_string(json_object_get(fld, "name"))) {
                char *cn = column_name(st, i, &anon);
                json_object_set_new(fld, "name", json_string(cn));
                free(cn);
            }
            if (!json_object_get(fld, "mode")) json_object_set_new(fld, "mode", json_string("NULLABLE"));
            types[i] = json_string_value(json_object_get(fld, "type"));
            modes[i] = json_string_value(json_object_get(fld, "mode"));
            if (json_object_get(fld, "fields") && !types[i]) {
                json_object_set_new(fld, "type", json_string("RECORD"));
                types[i] = "RECORD";
            }
            json_array_append_new(fields, fld);
            continue;
        }
        if (elem && !strcmp(sq, "__v")) { /* SELECT * over an UNNEST */
            json_t *al = json_array_get(p->unnest, (size_t)unnest_seen++);
            json_t *fld = json_pack("{s:s,s:s}", "name", json_is_string(al) ? json_string_value(al) : "f0_",
                                    "mode", "NULLABLE");
            json_array_append_new(fields, fld);
            continue;
        }
        json_t *sh = star ? json_object_get(p->star_hints, sq) : NULL; /* * REPLACE (expr AS c) */
        if (json_is_string(sh)) types[i] = json_string_value(sh);
        char *cn = column_name(st, i, &anon);
        json_t *fld = json_pack("{s:s}", "name", cn);
        if (types[i]) json_object_set_new(fld, "type", json_string(types[i]));
        json_object_set_new(fld, "mode", json_string("NULLABLE"));
        json_array_append_new(fields, fld);
        free(cn);
    }
    json_t *rows = json_array();
    int s;
    long long bytes = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *row = json_array();
        for (int i = 0; i < nc; i++) {
            bytes += sqlite3_column_bytes(st, i) + 8;
            json_array_append_new(row, mb_gc__column_json(st, i, types[i], modes[i]));
        }
        json_array_append_new(rows, row);
    }
    if (s != SQLITE_DONE) rc = mb_gc__sql_fail(gc, err);
    sqlite3_finalize(st);
    /* ARRAY and STRUCT columns: their element and field types from the values */
    for (int i = 0; !rc && i < nc; i++) {
        json_t *f = json_array_get(fields, (size_t)i);
        const char *m = json_string_value(json_object_get(f, "mode"));
        const char *t = json_string_value(json_object_get(f, "type"));
        int nested = (m && !strcmp(m, "REPEATED")) || (t && !strcmp(t, "RECORD"));
        if (!nested && !t && p->uses_arrays) nested = json_values_nested(rows, (size_t)i, f);
        if (nested) complete_nested(rows, (size_t)i, f);
    }
    /* types still unknown: from the values */
    for (int i = 0; !rc && i < nc; i++) {
        json_t *f = json_array_get(fields, (size_t)i);
        if (json_object_get(f, "type")) continue;
        json_t *mode = json_incref(json_object_get(f, "mode"));
        json_object_del(f, "mode");
        int ints = 0, reals = 0, texts = 0;
        size_t k;
        json_t *row;
        json_array_foreach(rows, k, row) {
            json_t *v = json_array_get(row, (size_t)i);
            ints += json_is_integer(v);
            reals += json_is_real(v);
            texts += json_is_string(v);
        }
        const char *t = texts ? "STRING" : reals ? "FLOAT" : ints ? "INTEGER" : "STRING";
        if (texts && (ints || reals)) t = "STRING";
        json_object_set_new(f, "type", json_string(t));
        json_object_set_new(f, "mode", mode);
        json_array_foreach(rows, k, row) {
            json_t *v = json_array_get(row, (size_t)i);
            if (!strcmp(t, "FLOAT") && json_is_integer(v))
                json_array_set_new(row, (size_t)i, json_real((double)json_integer_value(v)));
            else if (!strcmp(t, "STRING") && json_is_number(v)) {
                char *txt = json_dumps(v, JSON_ENCODE_ANY);
                json_array_set_new(row, (size_t)i, json_string(txt));
                free(txt);
            }
        }
    }
    /* the hidden column of a QUALIFY (translate.c) */
    json_t *last = json_array_get(fields, json_array_size(fields) - 1);
    if (!rc && last && !strcmp(json_string_value(json_object_get(last, "name")) ?: "", "__mb_qualify")) {
        size_t k;
        json_t *row;
        json_array_remove(fields, json_array_size(fields) - 1);
        json_array_foreach(rows, k, row) json_array_remove(row, json_array_size(row) - 1);
    }
    free(types);
    free(modes);
    json_decref(keep);
    if (rc) {
        json_decref(fields);
        json_decref(rows);
        return rc;
    }
    r->fields = fields;
    r->rows = rows;
    r->bytes = bytes;
    return MB_OK;
}

/* After an INSERT: values of typed columns in the new rows put in canonical form. */
static int normalise_new_rows(mb_gc *gc, const char *dataset, const char *table, long long after,
                              mb_err *err)
{
    json_t *fields = mb_gc__table_fields(gc, dataset, table);
    mb_buf set = {0};
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        const char *t = json_string_value(json_object_get(f, "type"));
        const char *m = json_string_value(json_object_get(f, "mode"));
        const char *name = json_string_value(json_object_get(f, "name"));
        if (m && !strcmp(m, "REPEATED")) continue;
        const char *cast = !strcmp(t, "TIMESTAMP") ? "TIMESTAMP" : !strcmp(t, "DATETIME") ? "DATETIME"
                           : !strcmp(t, "DATE") ? "DATE" : !strcmp(t, "BOOLEAN") ? "BOOL"
                           : !strcmp(t, "INTEGER") ? "INT64" : !strcmp(t, "FLOAT") ? "FLOAT64" : NULL;
        if (!cast) continue;
        mb_buf_printf(&set, "%s\"%s\" = bq_cast(\"%s\", '%s', 0)", set.len ? ", " : "", name, name, cast);
        if (m && !strcmp(m, "REQUIRED")) continue;
    }
    int rc = MB_OK;
    if (set.len) {
        char *tn = mb_gc__data_table(dataset, table);
        char *q = mb_asprintf("UPDATE %s SET %s WHERE rowid > %lld", tn, set.data, after);
        char *msg = NULL;
        if (sqlite3_exec(gc->db, q, NULL, NULL, &msg) != SQLITE_OK)
            rc = mb_err_set(err, MB_EINVAL, "%s", msg ? msg : "invalid value");
        sqlite3_free(msg);
        free(q);
        free(tn);
    }
    /* REQUIRED columns */
    json_array_foreach(rc ? NULL : fields, i, f) {
        const char *m = json_string_value(json_object_get(f, "mode"));
        if (!m || strcmp(m, "REQUIRED")) continue;
        char *tn = mb_gc__data_table(dataset, table);
        char *q = mb_asprintf("SELECT count(*) FROM %s WHERE rowid > %lld AND \"%s\" IS NULL", tn,
                              after, json_string_value(json_object_get(f, "name")));
        sqlite3_stmt *st;
        if (!mb_gc__prep(gc, q, &st, NULL)) {
            if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0)
                rc = mb_err_set(err, MB_EINVAL, "Required field %s cannot be null",
                                json_string_value(json_object_get(f, "name")));
            sqlite3_finalize(st);
        }
        free(q);
        free(tn);
    }
    mb_buf_free(&set);
    json_decref(fields);
    return rc;
}

static long long max_rowid(mb_gc *gc, const char *dataset, const char *table)
{
    char *tn = mb_gc__data_table(dataset, table);
    char *q = mb_asprintf("SELECT ifnull(max(rowid), 0) FROM %s", tn);
    long long m = 0;
    sqlite3_stmt *st;
    if (!mb_gc__prep(gc, q, &st, NULL)) {
        if (sqlite3_step(st) == SQLITE_ROW) m = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    free(q);
    free(tn);
    return m;
}

static int run_dml(mb_gc *gc, mb_gc_plan *p, json_t *params, mb_gc_result *r, mb_err *err)
{
    long long before = p->kind == GC_INSERT ? max_rowid(gc, p->dataset, p->table) : 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(gc->db, p->sql, -1, &st, NULL) != SQLITE_OK)
        return mb_gc__sql_fail(gc, err);
    int rc = bind_params(gc, st, params, err);
    if (!rc && sqlite3_step(st) != SQLITE_DONE)
        rc = mb_gc__sql_fail(gc, err);
    sqlite3_finalize(st);
    if (!rc) r->affected = sqlite3_changes(gc->db);
    if (!rc && p->kind == GC_INSERT) rc = normalise_new_rows(gc, p->dataset, p->table, before, err);
    return rc;
}

/* MERGE: the translator's statements in order (temporary tables of the
 * source and of which clause takes which row, then the changes). */
static int run_merge(mb_gc *gc, mb_gc_plan *p, json_t *params, mb_gc_result *r, mb_err *err)
{
    long long before = max_rowid(gc, p->dataset, p->table), changed = 0;
    size_t i;
    json_t *s;
    int rc = MB_OK;
    json_array_foreach(p->steps, i, s) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(gc->db, json_string_value(json_object_get(s, "sql")), -1, &st, NULL) != SQLITE_OK) {
            rc = mb_gc__sql_fail(gc, err);
            break;
        }
        rc = bind_params(gc, st, params, err);
        int k = SQLITE_DONE;
        while (!rc && (k = sqlite3_step(st)) == SQLITE_ROW) {}
        if (!rc && k != SQLITE_DONE) rc = mb_gc__sql_fail(gc, err);
        sqlite3_finalize(st);
        if (rc) break;
        if (json_is_true(json_object_get(s, "counts"))) changed += sqlite3_changes(gc->db);
    }
    if (!rc) rc = normalise_new_rows(gc, p->dataset, p->table, before, err);
    if (!rc) r->affected = changed;
    return rc;
}

static int run_plan(mb_gc *gc, mb_gc_plan *p, json_t *params, mb_gc_result *r, mb_err *err)
{
    int rc = MB_OK;
    r->affected = -1;
    switch (p->kind) {
    case GC_SELECT:
        r->statement_type = "SELECT";
        return run_select(gc, p, params, r, err);
    case GC_INSERT: r->statement_type = "INSERT"; return run_dml(gc, p, params, r, err);
    case GC_DELETE: r->statement_type = "DELETE"; return run_dml(gc, p, params, r, err);
    case GC_UPDATE: r->statement_type = "UPDATE"; return run_dml(gc, p, params, r, err);
    case GC_MERGE: r->statement_type = "MERGE"; return run_merge(gc, p, params, r, err);
    case GC_TRUNCATE: {
        r->statement_type = "TRUNCATE_TABLE";
        json_t *f = mb_gc__table_fields(gc, p->dataset, p->table);
        if (!f)
            return mb_err_set(err, MB_ENOTFOUND, "Not found: Table %s:%s.%s was not found in location US",
                              gc->project, p->dataset, p->table);
        json_decref(f);
        char *tn = mb_gc__data_table(p->dataset, p->table);
        char *q = mb_asprintf("DELETE FROM %s", tn);
        rc = mb_gc__exec(gc, q, err);
        free(q);
        free(tn);
        return rc;
    }
    case GC_DROP_TABLE: {
        r->statement_type = "DROP_TABLE";
        json_t *f = mb_gc__table_fields(gc, p->dataset, p->table);
        json_decref(f);
        if (!f && p->if_exists) return MB_OK;
        return mb_gc_bq_table_delete(gc, p->dataset, p->table, err);
    }
    case GC_CREATE_SCHEMA: {
        r->statement_type = "CREATE_SCHEMA";
        json_t *d;
        if (!mb_gc_bq_dataset_get(gc, p->dataset, &d, NULL)) {
            json_decref(d);
            if (p->if_not_exists) return MB_OK;
        }
        return mb_gc_bq_dataset_create(gc, p->dataset, p->description, "US", err);
    }
    case GC_DROP_SCHEMA: {
        r->statement_type = "DROP_SCHEMA";
        json_t *d;
        if (mb_gc_bq_dataset_get(gc, p->dataset, &d, NULL) && p->if_exists) return MB_OK;
        json_decref(d);
        return mb_gc_bq_dataset_delete(gc, p->dataset, p->or_replace, err);
    }
    case GC_CREATE_TABLE:
    case GC_CTAS: {
        r->statement_type = p->kind == GC_CTAS ? "CREATE_TABLE_AS_SELECT" : "CREATE_TABLE";
        mb_gc_result sel = {0};
        json_t *fields = p->fields ? json_incref(p->fields) : NULL;
        if (p->kind == GC_CTAS) {
            if ((rc = run_select(gc, p, params, &sel, err))) {
                json_decref(fields);
                return rc;
            }
            if (!fields) fields = json_incref(sel.fields);
        }
        json_t *have = mb_gc__table_fields(gc, p->dataset, p->table);
        json_decref(have);
        if (have && p->if_not_exists) {
            mb_gc_result_free(&sel);
            json_decref(fields);
            return MB_OK;
        }
        if (have && p->or_replace) rc = mb_gc_bq_table_delete(gc, p->dataset, p->table, err);
        if (!rc) rc = mb_gc_bq_table_create(gc, p->dataset, p->table, fields, p->description, err);
        if (!rc && p->kind == GC_CTAS) {
            /* rows in, by position */
            json_t *tf = mb_gc__table_fields(gc, p->dataset, p->table);
            char *sql = insert_sql(p->dataset, p->table, tf);
            sqlite3_stmt *st;
            if (!(rc = mb_gc__prep(gc, sql, &st, err))) {
                size_t k;
                json_t *row;
                json_array_foreach(sel.rows, k, row) {
                    for (size_t c = 0; c < json_array_size(tf) && !rc; c++)
                        rc = mb_gc__bind_value(st, (int)c + 1, json_array_get(row, c),
                                               json_array_get(tf, c), err);
                    if (rc) break;
                    if (sqlite3_step(st) != SQLITE_DONE) {
                        rc = mb_err_set(err, MB_EIO, "database: %s", sqlite3_errmsg(gc->db));
                        break;
                    }
                    sqlite3_reset(st);
                }
                sqlite3_finalize(st);
                r->affected = (long long)json_array_size(sel.rows);
            }
            free(sql);
            json_decref(tf);
        } else if (rc == MB_ECONFLICT && !p->or_replace) {
            /* BigQuery's text for CREATE TABLE over an existing one */
            mb_err_set(err, MB_ECONFLICT, "Already Exists: Table %s:%s.%s", gc->project, p->dataset,
                       p->table);
        }
        r->bytes = sel.bytes;
        mb_gc_result_free(&sel);
        json_decref(fields);
        return rc;
    }
    }
    return rc;
}

int mb_gc_bq_translate(mb_gc *gc, const char *sql, char **out, mb_err *err)
{
    mb_gc_plan p;
    int rc = mb_gc__translate(gc, sql, strlen(sql), &p, err);
    if (rc) return rc;
    *out = p.sql ? mb_strdup(p.sql) : mb_strdup("");
    mb_gc__plan_free(&p);
    return MB_OK;
}

int mb_gc_bq_query(mb_gc *gc, const char *sql, json_t *params, int dry_run, mb_gc_result *out,
                   mb_err *err)
{
    memset(out, 0, sizeof *out);
    out->affected = -1;
    if (!sql || !*sql) return mb_err_set(err, MB_EINVAL, "Syntax error: Unexpected end of script");
    if (strlen(sql) > 1024 * 1024)
        return mb_err_set(err, MB_ETOOBIG, "The query is too large. The maximum standard SQL query length is 1024.00K characters");
    json_t *stmts = mb_gc__split(sql, err);
    if (!stmts) return err ? err->code : MB_EINVAL;
    if (!json_array_size(stmts)) {
        json_decref(stmts);
        return mb_err_set(err, MB_EINVAL, "Syntax error: Unexpected end of script");
    }
    int rc = MB_OK;
    int own = sqlite3_get_autocommit(gc->db) && !dry_run;
    if (own && (rc = mb_gc__begin(gc, err))) {
        json_decref(stmts);
        return rc;
    }
    size_t i;
    json_t *s;
    mb_gc__clock_pin(gc, 1); /* CURRENT_TIMESTAMP() is one instant for the whole query */
    json_array_foreach(stmts, i, s) {
        mb_gc_plan p;
        if ((rc = mb_gc__translate(gc, json_string_value(s), json_string_length(s), &p, err))) break;
        if (dry_run) {
            out->statement_type = p.kind == GC_SELECT ? "SELECT" : "SCRIPT";
            mb_gc__plan_free(&p);
            continue;
        }
        mb_gc_result_free(out);
        out->affected = -1;
        rc = run_plan(gc, &p, params, out, err);
        mb_gc__plan_free(&p);
        if (rc) break;
    }
    mb_gc__clock_pin(gc, 0);
    json_decref(stmts);
    if (!out->fields) out->fields = json_array();
    if (!out->rows) out->rows = json_array();
    if (own) {
        if (!rc) rc = mb_gc__commit(gc, err);
        if (rc) mb_gc__rollback(gc);
    }
    if (rc) mb_gc_result_free(out);
    return rc;
}

void mb_gc_result_free(mb_gc_result *r)
{
    json_decref(r->fields);
    json_decref(r->rows);
    r->fields = r->rows = NULL;
}
