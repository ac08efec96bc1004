/*
 * bigquery.c - the bigquery_* tools of google-cloud-mcp, with upstream's
 * texts: bigquery_run_query prints "Total rows / Bytes processed /
 * Execution time" and the first 5 rows as Python dict reprs (dict(row) of
 * google-cloud-bigquery: datetime.date(...), Decimal('...'), True, None).
 * Client errors read as google.api_core prints them ("404 GET https://...:
 * Not found: ..."); query errors as a failed job's ("400 <message>; reason:
 * invalidQuery, location: query, message: <message>" then the location and
 * job id).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "servers/common/pyfmt.h"
#include "servers/common/pyschema.h"
#include "servers/google_cloud/gc_srv.h"

#define BQ "https://bigquery.googleapis.com/bigquery/v2/projects/"

/* Python repr of one value of a BigQuery field. */
static void value_repr(mb_buf *out, json_t *v, json_t *field);

static void record_repr(mb_buf *out, json_t *v, json_t *fields)
{
    mb_buf_putc(out, '{');
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        if (i) mb_buf_puts(out, ", ");
        mb_py_repr_str(out, name, strlen(name));
        mb_buf_puts(out, ": ");
        value_repr(out, json_object_get(v, name), f);
    }
    mb_buf_putc(out, '}');
}

static void scalar_repr(mb_buf *out, json_t *v, const char *type, json_t *sub)
{
    if (!v || json_is_null(v)) {
        mb_buf_puts(out, "None");
        return;
    }
    if (!strcmp(type, "RECORD") && json_is_object(v)) {
        record_repr(out, v, sub);
        return;
    }
    if (!strcmp(type, "BOOLEAN")) {
        mb_buf_puts(out, json_is_true(v) || (json_is_integer(v) && json_integer_value(v)) ? "True" : "False");
        return;
    }
    if (!strcmp(type, "INTEGER") && json_is_integer(v)) {
        mb_buf_printf(out, "%lld", (long long)json_integer_value(v));
        return;
    }
    if (!strcmp(type, "FLOAT") && json_is_number(v)) {
        mb_py_float_str(out, json_number_value(v));
        return;
    }
    if ((!strcmp(type, "NUMERIC") || !strcmp(type, "BIGNUMERIC")) && json_is_number(v)) {
        double d = json_number_value(v);
        mb_buf_puts(out, "Decimal('");
        if (d == floor(d) && fabs(d) < 1e15) mb_buf_printf(out, "%.0f", d);
        else {
            mb_buf tmp = {0};
            mb_py_float_str(&tmp, d);
            mb_buf_append(out, tmp.data, tmp.len);
            mb_buf_free(&tmp);
        }
        mb_buf_puts(out, "')");
        return;
    }
    if ((!strcmp(type, "DATE") || !strcmp(type, "TIMESTAMP") || !strcmp(type, "DATETIME") || !strcmp(type, "TIME")) &&
        json_is_string(v)) {
        mb_gc_py_datetime(out, json_string_value(v), type);
        return;
    }
    if (!strcmp(type, "JSON") || !json_is_string(v)) {
        mb_py_repr_json(out, v);
        return;
    }
    mb_py_repr_str(out, json_string_value(v), json_string_length(v));
}

static void value_repr(mb_buf *out, json_t *v, json_t *field)
{
    const char *type = json_string_value(json_object_get(field, "type"));
    const char *mode = json_string_value(json_object_get(field, "mode"));
    json_t *sub = json_object_get(field, "fields");
    if (mode && !strcmp(mode, "REPEATED")) {
        mb_buf_putc(out, '[');
        size_t i;
        json_t *e;
        json_array_foreach(json_is_array(v) ? v : NULL, i, e) {
            if (i) mb_buf_puts(out, ", ");
            scalar_repr(out, e, type ? type : "STRING", sub);
        }
        mb_buf_putc(out, ']');
        return;
    }
    scalar_repr(out, v, type ? type : "STRING", sub);
}

void gc_row_repr(mb_buf *out, json_t *fields, json_t *row)
{
    /* dict(row): the row's values by field name, as a RECORD prints */
    json_t *o = json_object();
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f)
        json_object_set(o, json_string_value(json_object_get(f, "name")), json_array_get(row, i));
    record_repr(out, o, fields);
    json_decref(o);
}

static char *query_error(mb_gc *gc, const mb_err *e, const char *job_id)
{
    (void)gc;
    int code = gc_http_code(e->code);
    const char *reason = code == 404 ? "notFound" : code == 409 ? "duplicate" : "invalidQuery";
    return mb_asprintf("%d %s; reason: %s, location: query, message: %s\n\nLocation: US\nJob ID: %s\n",
                       code, e->msg, reason, e->msg, job_id);
}

int gc_t_bigquery_run_query(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    mb_gc *gc = gc_open(call, res, "Error executing BigQuery query");
    if (!gc) return 0;
    const char *q = gc_arg(a, "query");
    int dry = gc_arg_bool(a, "dry_run");
    long long max = gc_arg_int(a, "max_results");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mb_gc_result r;
    mb_err e = {0};
    int rc = mb_gc_bq_query(gc, q, NULL, dry, &r, &e);
    char job[64];
    mb_gc_bq_job_add(gc, "query", q, rc ? e.msg : NULL, job);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        char *msg = query_error(gc, &e, job);
        gc_textf(res, "Error executing BigQuery query: %s", msg);
        free(msg);
        mb_gc_close(gc);
        return 0;
    }
    if (dry) {
        /* BigQuery estimates what the query reads; the emulator reports 0 */
        gc_text(res, "Query validation successful.\nEstimated bytes processed: 0\nEstimated cost: $0.0000 USD");
        mb_gc_result_free(&r);
        mb_gc_close(gc);
        return 0;
    }
    long long ms = (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    size_t total = json_array_size(r.rows);
    size_t returned = max > 0 && (size_t)max < total ? (size_t)max : total;
    mb_buf b = {0};
    mb_buf_printf(&b, "Query executed successfully.\nTotal rows: %zu, Returned: %zu\nBytes processed: %lld, "
                      "Execution time: %lldms\n\n", total, returned, r.bytes, ms);
    if (returned) {
        mb_buf_puts(&b, "Sample results (first 5 rows):\n");
        for (size_t i = 0; i < returned && i < 5; i++) {
            mb_buf_printf(&b, "Row %zu: ", i + 1);
            gc_row_repr(&b, r.fields, json_array_get(r.rows, i));
            mb_buf_putc(&b, '\n');
        }
        if (returned > 5) mb_buf_printf(&b, "... and %zu more rows", returned - 5);
    } else {
        mb_buf_puts(&b, "No results returned.");
    }
    gc_text(res, b.data);
    mb_buf_free(&b);
    mb_gc_result_free(&r);
    mb_gc_close(gc);
    return 0;
}

int gc_t_bigquery_list_datasets(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)a;
    mb_gc *gc = gc_open(call, res, "Error listing BigQuery datasets");
    if (!gc) return 0;
    json_t *l = mb_gc_bq_dataset_list(gc);
    mb_buf b = {0};
    size_t i, n = 0;
    json_t *d;
    json_array_foreach(l, i, d) {
        const char *id = json_string_value(json_object_get(d, "id"));
        if (!gc_allowed(call, GC_ACL_DATASETS, id)) continue;
        mb_buf_printf(&b, "%s- %s (Project: %s)", n ? "\n" : "", id, mb_gc_project(gc));
        n++;
    }
    if (!n) gc_text(res, "No datasets found or no access to allowed datasets");
    else gc_textf(res, "Found %zu datasets:\n%s", n, b.data);
    mb_buf_free(&b);
    json_decref(l);
    mb_gc_close(gc);
    return 0;
}

int gc_t_bigquery_create_dataset(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *id = gc_arg(a, "dataset_id"), *desc = gc_arg(a, "description"), *loc = gc_arg(a, "location");
    if (!gc_allowed(call, GC_ACL_DATASETS, id))
        return gc_textf(res, "Access denied: Dataset '%s' is not in allowed datasets list", id);
    mb_gc *gc = gc_open(call, res, "Error creating BigQuery dataset");
    if (!gc) return 0;
    mb_err e = {0};
    if (mb_gc_bq_dataset_create(gc, id, *desc ? desc : NULL, loc, &e)) {
        gc_api_fail(res, "Error creating BigQuery dataset", gc_http_code(e.code), "POST", e.msg, BQ "%s/datasets?prettyPrint=false", mb_gc_project(gc));
    } else {
        gc_textf(res, "Successfully created dataset '%s' in location '%s'", id, loc);
    }
    mb_gc_close(gc);
    return 0;
}

int gc_t_bigquery_get_dataset_info(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *id = gc_arg(a, "dataset_id");
    if (!gc_allowed(call, GC_ACL_DATASETS, id))
        return gc_textf(res, "Access denied: Dataset '%s' is not in allowed datasets list", id);
    char *prefix;
    mb_gc *gc = gc_begin(call, res, &prefix, "Error getting dataset info for '%s'", id);
    if (!gc) {
        free(prefix);
        return 0;
    }
    json_t *d;
    mb_err e = {0};
    if (mb_gc_bq_dataset_get(gc, id, &d, &e)) {
        gc_api_fail(res, prefix, gc_http_code(e.code), "GET", e.msg, BQ "%s/datasets/%s?prettyPrint=false", mb_gc_project(gc), id);
    } else {
        char created[48], modified[48];
        mb_gc_isoformat(json_integer_value(json_object_get(d, "created")), created);
        mb_gc_isoformat(json_integer_value(json_object_get(d, "modified")), modified);
        const char *desc = json_string_value(json_object_get(d, "description"));
        mb_buf labels = {0};
        json_t *l = json_object_get(d, "labels");
        if (json_object_size(l)) mb_py_repr_json(&labels, l);
        else mb_buf_puts(&labels, "None");
        gc_textf(res, "Dataset Information for '%s':\nFull Name: %s:%s\nLocation: %s\nDescription: %s\n"
                      "Created: %s\nModified: %s\nDefault Table Expiration: None ms\nLabels: %s",
                 id, mb_gc_project(gc), id, json_string_value(json_object_get(d, "location")),
                 desc && *desc ? desc : "No description", created, modified, labels.data);
        mb_buf_free(&labels);
        json_decref(d);
    }
    free(prefix);
    mb_gc_close(gc);
    return 0;
}

int gc_t_bigquery_load_csv_data(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *ds = gc_arg(a, "dataset_id"), *tb = gc_arg(a, "table_id"), *path = gc_arg(a, "csv_file_path");
    const char *mode = gc_arg(a, "write_mode");
    if (!gc_allowed(call, GC_ACL_DATASETS, ds))
        return gc_textf(res, "Access denied: Dataset '%s' is not in allowed datasets list", ds);
    mb_gc_load o = {.format = MB_GC_CSV, .skip_leading_rows = gc_arg_bool(a, "skip_header") ? 1 : 0,
                    .autodetect = 1};
    if (!strcmp(mode, "WRITE_TRUNCATE")) o.write = MB_GC_WRITE_TRUNCATE;
    else if (!strcmp(mode, "WRITE_APPEND")) o.write = MB_GC_WRITE_APPEND;
    else if (!strcmp(mode, "WRITE_EMPTY")) o.write = MB_GC_WRITE_EMPTY;
    else
        return gc_textf(res, "Error loading CSV data to BigQuery: 400 Invalid value for writeDisposition: %s", mode);
    char *data = NULL, *why = NULL;
    size_t len = 0;
    mb_err e = {0};
    if (gc_read_local(path, 1LL << 30, "(1 GiB) a CSV load reads", &data, &len, &why)) {
        gc_textf(res, "Error loading CSV data to BigQuery: %s", why);
        free(why);
        return 0;
    }
    mb_gc *gc = gc_open(call, res, "Error loading CSV data to BigQuery");
    if (!gc) {
        free(data);
        return 0;
    }
    long n = 0;
    char job[64];
    int rc = mb_gc_bq_load(gc, ds, tb, data, len, &o, &n, &e);
    mb_gc_bq_job_add(gc, "load", NULL, rc ? e.msg : NULL, job);
    if (rc) {
        gc_textf(res, "Error loading CSV data to BigQuery: %d %s", gc_http_code(e.code), e.msg);
    } else {
        gc_textf(res, "Successfully loaded CSV data from '%s' to table '%s.%s'", path, ds, tb);
    }
    free(data);
    mb_gc_close(gc);
    return 0;
}

/* CSV text of a value as BigQuery exports it. */
static void csv_cell(mb_buf *b, json_t *v)
{
    if (!v || json_is_null(v)) return;
    char *t = json_is_string(v) ? mb_strdup(json_string_value(v))
              : json_is_true(v) ? mb_strdup("true") : json_is_false(v) ? mb_strdup("false")
              : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (strpbrk(t, ",\"\n\r")) {
        mb_buf_putc(b, '"');
        for (const char *c = t; *c; c++) {
            if (*c == '"') mb_buf_putc(b, '"');
            mb_buf_putc(b, *c);
        }
        mb_buf_putc(b, '"');
    } else mb_buf_puts(b, t);
    free(t);
}

int gc_t_bigquery_export_table(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *ds = gc_arg(a, "dataset_id"), *tb = gc_arg(a, "table_id");
    const char *bucket = gc_arg(a, "destination_bucket"), *dest = gc_arg(a, "destination_path");
    const char *fmt = gc_arg(a, "file_format");
    if (!gc_allowed(call, GC_ACL_DATASETS, ds))
        return gc_textf(res, "Access denied: Dataset '%s' is not in allowed datasets list", ds);
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket))
        return gc_textf(res, "Access denied: Bucket '%s' is not in allowed buckets list", bucket);
    if (strcasecmp(fmt, "CSV"))
        return gc_textf(res, "Export format '%s' not yet supported. Currently only CSV is supported.", fmt);
    mb_gc *gc = gc_open(call, res, "Error exporting BigQuery table");
    if (!gc) return 0;
    char *sql = mb_asprintf("SELECT * FROM `%s.%s`", ds, tb);
    mb_gc_result r;
    mb_err e = {0};
    int rc = strchr(ds, '`') || strchr(tb, '`') ? mb_err_set(&e, MB_EINVAL, "Invalid table name")
                                                 : mb_gc_bq_query(gc, sql, NULL, 0, &r, &e);
    free(sql);
    if (!rc) {
        mb_buf csv = {0};
        size_t i, k;
        json_t *f, *row;
        json_array_foreach(r.fields, i, f) {
            if (i) mb_buf_putc(&csv, ',');
            csv_cell(&csv, json_object_get(f, "name"));
        }
        mb_buf_putc(&csv, '\n');
        json_array_foreach(r.rows, k, row) {
            json_array_foreach(row, i, f) {
                if (i) mb_buf_putc(&csv, ',');
                csv_cell(&csv, f);
            }
            mb_buf_putc(&csv, '\n');
        }
        rc = mb_gc_gcs_object_put(gc, bucket, dest, csv.data, csv.len, "text/csv", &e);
        mb_buf_free(&csv);
        mb_gc_result_free(&r);
    }
    char job[64];
    mb_gc_bq_job_add(gc, "extract", NULL, rc ? e.msg : NULL, job);
    if (rc) gc_textf(res, "Error exporting BigQuery table: %d %s", gc_http_code(e.code), e.msg);
    else gc_textf(res, "Successfully exported table '%s.%s' to 'gs://%s/%s'", ds, tb, bucket, dest);
    mb_gc_close(gc);
    return 0;
}

int gc_t_bigquery_list_jobs(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    mb_gc *gc = gc_open(call, res, "Error listing BigQuery jobs");
    if (!gc) return 0;
    json_t *jobs = mb_gc_bq_job_list(gc, (int)gc_arg_int(a, "max_results"), gc_arg(a, "state_filter"));
    size_t n = json_array_size(jobs);
    if (!n) {
        gc_text(res, "No BigQuery jobs found");
    } else {
        mb_buf b = {0};
        mb_buf_printf(&b, "Found %zu BigQuery jobs:\n", n);
        for (size_t i = 0; i < n && i < 10; i++) {
            json_t *j = json_array_get(jobs, i);
            /* upstream reads a 'creation_time' key its job dicts never have */
            mb_buf_printf(&b, "- %s: %s (%s)\n  Created: Unknown\n", json_string_value(json_object_get(j, "id")),
                          json_string_value(json_object_get(j, "state")),
                          json_string_value(json_object_get(j, "type")));
        }
        if (n > 10) mb_buf_printf(&b, "... and %zu more jobs", n - 10);
        gc_text(res, b.data);
        mb_buf_free(&b);
    }
    json_decref(jobs);
    mb_gc_close(gc);
    return 0;
}

int gc_t_bigquery_cancel_job(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *id = gc_arg(a, "job_id");
    char *prefix;
    mb_gc *gc = gc_begin(call, res, &prefix, "Error cancelling BigQuery job '%s'", id);
    if (gc) {
        json_t *j;
        mb_err e = {0};
        if (mb_gc_bq_job_get(gc, id, &j, &e)) {
            gc_api_fail(res, prefix, 404, "GET", e.msg, BQ "%s/jobs/%s?projection=full&prettyPrint=false", mb_gc_project(gc), id);
        } else {
            /* jobs finish at once: cancelling a DONE job succeeds as in BigQuery */
            gc_textf(res, "Successfully cancelled BigQuery job '%s'", id);
            json_decref(j);
        }
    }
    return gc_end(gc, prefix);
}
