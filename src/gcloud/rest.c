/*
 * rest.c - the REST facade: BigQuery v2 and the Cloud Storage JSON API on
 * their own port (default 127.0.0.1:10050), shaped as google-cloud-bigquery
 * and google-cloud-storage call them with BIGQUERY_EMULATOR_HOST /
 * STORAGE_EMULATOR_HOST; the routing, which also hands the OAuth, userinfo,
 * Resource Manager and clock paths to identity.c and Cloud Logging v2 to
 * rest_logging.c.
 *
 * The project id (or its number) selects the sandbox (a resolver the daemon
 * gives maps it to that sandbox's project database). BigQuery paths carry it
 * (/bigquery/v2/projects/P/...); Storage paths do not, so it comes from a
 * /p/P prefix (STORAGE_EMULATOR_HOST=http://127.0.0.1:10050/p/P), the
 * ?project= parameter, or the bearer token (auth_data's access_token is
 * the project id). Any bearer token is accepted on these paths: the port is
 * for the local machine.
 *
 * Served: datasets (list, insert, get, delete), tables (list, insert, get,
 * delete), tabledata.insertAll and list, jobs.query, jobs.insert (query and
 * load jobs; loads from gs:// objects or a multipart upload), jobs.get,
 * getQueryResults; buckets (list, insert, get, patch, delete), objects
 * (list with prefix/delimiter, get metadata or media, delete, media,
 * multipart and resumable uploads (resumable.c), download), V4 signed URLs
 * (signed.c), copyTo, rewriteTo (done in one call) and compose. Not served:
 * IAM, routines, models: 501 naming the call.
 */
#define _GNU_SOURCE
#include "gcloud/rest_int.h"
#include "http/http.h"

#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_BODY (256u << 20)

struct mb_gcloud_rest {
    struct MHD_Daemon *mhd;
    mb_gcloud_resolve_fn resolve;
    void *ctx;
    int port;
};

typedef struct req {
    mb_buf body;
    int too_big;
} req;

typedef mb_gc__reply reply;

void mb_gc__reply_json(reply *r, int status, json_t *j)
{
    r->status = status;
    r->body = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : mb_strdup("");
    r->len = strlen(r->body);
    r->type = "application/json; charset=UTF-8";
    json_decref(j);
}

void mb_gc__reply_error(reply *r, int status, const char *msg)
{
    const char *reason = status == 404 ? "notFound" : status == 409 ? "duplicate"
                         : status == 501 ? "notImplemented" : status == 413 ? "tooLarge" : "invalid";
    const char *st = status == 404 ? "NOT_FOUND" : status == 409 ? "ALREADY_EXISTS"
                     : status == 501 ? "UNIMPLEMENTED" : "INVALID_ARGUMENT";
    size_t n;
    char *m = mb_utf8_repair(msg, strlen(msg), &n);
    mb_gc__reply_json(r, status, json_pack("{s:{s:i,s:s,s:[{s:s,s:s,s:s}],s:s}}", "error", "code", status, "message", m,
                                           "errors", "message", m, "domain", "global", "reason", reason, "status", st));
    free(m);
}

static void reply_json(reply *r, int status, json_t *j) { mb_gc__reply_json(r, status, j); }
static void reply_error(reply *r, int status, const char *msg) { mb_gc__reply_error(r, status, msg); }

static int status_of(int code)
{
    switch (code) {
    case MB_ENOTFOUND: return 404;
    case MB_ECONFLICT: return 409;
    case MB_ETOOBIG: return 413;
    case MB_EINVAL: return 400;
    default: return 500;
    }
}

void mb_gc__reply_err(reply *r, const mb_err *e) { reply_error(r, status_of(e->code), e->msg); }
static void reply_err(reply *r, const mb_err *e) { mb_gc__reply_err(r, e); }

/* --------------------------------------------------------------- helpers */


/* Splits a path into segments. */
static json_t *segments(const char *path)
{
    json_t *a = json_array();
    const char *p = path;
    while (*p) {
        while (*p == '/') p++;
        if (!*p) break;
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        json_t *s = json_stringn(p, n); /* libmicrohttpd has unescaped the path */
        json_array_append_new(a, s ? s : json_string(""));
        p += n;
    }
    return a;
}

const char *mb_gc__seg(json_t *a, size_t i) { return json_string_value(json_array_get(a, i)); }
static const char *seg(json_t *a, size_t i) { return mb_gc__seg(a, i); }

int mb_gc__seg_is(json_t *a, size_t i, const char *s) { return seg(a, i) && !strcmp(seg(a, i), s); }
static int is(json_t *a, size_t i, const char *s) { return mb_gc__seg_is(a, i, s); }

const char *mb_gc__qarg(struct MHD_Connection *c, const char *k)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
}
static const char *qarg(struct MHD_Connection *c, const char *k) { return mb_gc__qarg(c, k); }

static char *iso_ms(int64_t ms)
{
    char b[40];
    mb_gc__iso_ms(ms, b);
    return mb_strdup(b);
}

/* ------------------------------------------------------------- BigQuery */

static json_t *dataset_resource(const char *project, json_t *d)
{
    const char *id = json_string_value(json_object_get(d, "id"));
    char *full = mb_asprintf("%s:%s", project, id);
    char created[32], modified[32];
    snprintf(created, sizeof created, "%lld", (long long)json_integer_value(json_object_get(d, "created")));
    snprintf(modified, sizeof modified, "%lld", (long long)json_integer_value(json_object_get(d, "modified")));
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s},s:O,s:s,s:s,s:O}", "kind", "bigquery#dataset", "id", full,
                          "datasetReference", "datasetId", id, "projectId", project, "location",
                          json_object_get(d, "location"), "creationTime", created, "lastModifiedTime", modified,
                          "labels", json_object_get(d, "labels"));
    if (json_string_value(json_object_get(d, "description")))
        json_object_set(o, "description", json_object_get(d, "description"));
    free(full);
    return o;
}

static json_t *table_resource(const char *project, json_t *t)
{
    const char *ds = json_string_value(json_object_get(t, "dataset")), *id = json_string_value(json_object_get(t, "id"));
    char *full = mb_asprintf("%s:%s.%s", project, ds, id);
    char created[32], rows[32];
    snprintf(created, sizeof created, "%lld", (long long)json_integer_value(json_object_get(t, "created")));
    snprintf(rows, sizeof rows, "%lld", (long long)json_integer_value(json_object_get(t, "num_rows")));
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:O},s:s,s:s,s:s,s:s,s:s}", "kind", "bigquery#table", "id",
                          full, "tableReference", "projectId", project, "datasetId", ds, "tableId", id, "schema",
                          "fields", json_object_get(t, "fields"), "numRows", rows, "creationTime", created,
                          "lastModifiedTime", created, "type", "TABLE", "location", "US");
    if (json_string_value(json_object_get(t, "description")))
        json_object_set(o, "description", json_object_get(t, "description"));
    free(full);
    return o;
}

/* One value as the REST API sends it: strings, {f:[...]} records, [{v}] arrays. */
static json_t *rest_value(json_t *v, json_t *field, int int64_ts);

static json_t *rest_scalar(json_t *v, const char *type, json_t *sub, int int64_ts)
{
    if (!v || json_is_null(v)) return json_null();
    if (!strcmp(type, "RECORD") && json_is_object(v)) {
        json_t *f = json_array();
        size_t i;
        json_t *fd;
        json_array_foreach(sub, i, fd)
            json_array_append_new(f, json_pack("{s:o}", "v", rest_value(json_object_get(v, json_string_value(json_object_get(fd, "name"))), fd, int64_ts)));
        return json_pack("{s:o}", "f", f);
    }
    if (!strcmp(type, "BOOLEAN")) return json_string(json_is_true(v) || (json_is_integer(v) && json_integer_value(v)) ? "true" : "false");
    if (!strcmp(type, "TIMESTAMP") && json_is_string(v)) {
        long days;
        long long us;
        int ht;
        if (!mb_gc__ts_parse(json_string_value(v), &days, &us, &ht)) {
            long long t = (long long)days * 86400000000LL + us;
            char b[48];
            if (int64_ts) snprintf(b, sizeof b, "%lld", t);
            else snprintf(b, sizeof b, "%lld.%06lld", t / 1000000, t % 1000000);
            return json_string(b);
        }
    }
    if (!strcmp(type, "DATETIME") && json_is_string(v)) {
        char *s = mb_strdup(json_string_value(v));
        if (strlen(s) > 10 && s[10] == ' ') s[10] = 'T';
        json_t *o = json_string(s);
        free(s);
        return o;
    }
    if (json_is_string(v)) return json_incref(v);
    if (json_is_real(v) && (!strcmp(type, "NUMERIC") || !strcmp(type, "BIGNUMERIC"))) {
        char b[64];
        double d = json_real_value(v);
        if (d == (double)(long long)d) snprintf(b, sizeof b, "%lld", (long long)d);
        else snprintf(b, sizeof b, "%.15g", d);
        return json_string(b);
    }
    if (json_is_real(v)) { /* the shortest text that reads back as the same double, not %.17g */
        char b[40];
        mb_gc__float_text(json_real_value(v), b);
        return json_string(b);
    }
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    json_t *o = json_string(t);
    free(t);
    return o;
}

static json_t *rest_value(json_t *v, json_t *field, int int64_ts)
{
    const char *type = json_string_value(json_object_get(field, "type"));
    const char *mode = json_string_value(json_object_get(field, "mode"));
    json_t *sub = json_object_get(field, "fields");
    if (mode && !strcmp(mode, "REPEATED")) {
        json_t *a = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(json_is_array(v) ? v : NULL, i, e)
            json_array_append_new(a, json_pack("{s:o}", "v", rest_scalar(e, type ? type : "STRING", sub, int64_ts)));
        return a;
    }
    return rest_scalar(v, type ? type : "STRING", sub, int64_ts);
}

static json_t *rest_rows(json_t *fields, json_t *rows, size_t start, size_t max, int int64_ts)
{
    json_t *out = json_array();
    for (size_t i = start; i < json_array_size(rows) && i < start + max; i++) {
        json_t *row = json_array_get(rows, i), *f = json_array();
        size_t k;
        json_t *fd;
        json_array_foreach(fields, k, fd)
            json_array_append_new(f, json_pack("{s:o}", "v", rest_value(json_array_get(row, k), fd, int64_ts)));
        json_array_append_new(out, json_pack("{s:o}", "f", f));
    }
    return out;
}

static int int64_ts(struct MHD_Connection *c)
{
    const char *v = qarg(c, "formatOptions.useInt64Timestamp");
    return v && (!strcasecmp(v, "true") || !strcmp(v, "1"));
}

/* Runs a query job and keeps its result for getQueryResults. */
static int run_job(mb_gc *gc, const char *query, json_t *params, int dry, char job_id[64], mb_gc_result *r,
                   mb_err *err)
{
    int rc = mb_gc_bq_query(gc, query, params, dry, r, err);
    mb_gc_bq_job_add(gc, "query", query, rc ? err->msg : NULL, job_id);
    if (rc || dry) return rc;
    sqlite3_stmt *st;
    if (!mb_gc__prep(gc, "INSERT OR REPLACE INTO __bq_results VALUES(?,?,?,?,?)", &st, NULL)) {
        sqlite3_bind_text(st, 1, job_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, r->statement_type, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, r->affected);
        sqlite3_bind_text(st, 4, json_dumps(r->fields, JSON_COMPACT), -1, free);
        sqlite3_bind_text(st, 5, json_dumps(r->rows, JSON_COMPACT), -1, free);
        mb_gc__step_done(gc, st, NULL);
    }
    return rc;
}

static int load_result(mb_gc *gc, const char *job_id, mb_gc_result *r, const char **stype, mb_err *err)
{
    memset(r, 0, sizeof *r);
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT statement_type, affected, fields, rows FROM __bq_results WHERE job_id=?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, job_id, -1, SQLITE_STATIC);
    rc = mb_err_set(err, MB_ENOTFOUND, "Not found: Job %s:%s", gc->project, job_id);
    if (sqlite3_step(st) == SQLITE_ROW) {
        static const char *const KNOWN[] = {"SELECT", "INSERT", "DELETE", "UPDATE", "MERGE", "CREATE_TABLE",
                                            "CREATE_TABLE_AS_SELECT", "DROP_TABLE", "TRUNCATE_TABLE",
                                            "CREATE_SCHEMA", "DROP_SCHEMA", NULL};
        const char *t = (const char *)sqlite3_column_text(st, 0);
        *stype = "SCRIPT";
        for (const char *const *k = KNOWN; t && *k; k++)
            if (!strcmp(*k, t)) *stype = *k;
        r->affected = sqlite3_column_int64(st, 1);
        r->fields = json_loads((const char *)sqlite3_column_text(st, 2), 0, NULL);
        r->rows = json_loads((const char *)sqlite3_column_text(st, 3), 0, NULL);
        rc = MB_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

static json_t *query_response(const char *project, const char *job_id, mb_gc_result *r, const char *stype,
                              struct MHD_Connection *c, int results)
{
    const char *mr = qarg(c, "maxResults"), *si = qarg(c, "startIndex"), *pt = qarg(c, "pageToken");
    size_t max = mr ? (size_t)strtoul(mr, NULL, 10) : 100000, start = si ? (size_t)strtoul(si, NULL, 10) : 0;
    if (pt) start = (size_t)strtoul(pt, NULL, 10);
    size_t total = json_array_size(r->rows);
    char tot[32], bytes[32];
    snprintf(tot, sizeof tot, "%zu", total);
    snprintf(bytes, sizeof bytes, "%lld", r->bytes);
    json_t *o = json_pack("{s:s,s:{s:s,s:s,s:s},s:b,s:s,s:s,s:b,s:{s:O}}", "kind", "bigquery#queryResponse",
                          "jobReference", "projectId", project, "jobId", job_id, "location", "US", "jobComplete", 1,
                          "totalRows", tot, "totalBytesProcessed", bytes, "cacheHit", 0, "schema", "fields",
                          r->fields ? r->fields : json_array());
    if (results) {
        json_object_set_new(o, "rows", rest_rows(r->fields, r->rows, start, max, int64_ts(c)));
        if (start + max < total) {
            char next[32];
            snprintf(next, sizeof next, "%zu", start + max);
            json_object_set_new(o, "pageToken", json_string(next));
        }
    }
    if (r->affected >= 0 && strcmp(stype, "SELECT")) {
        char a[32];
        snprintf(a, sizeof a, "%lld", r->affected);
        json_object_set_new(o, "numDmlAffectedRows", json_string(a));
    }
    return o;
}

static json_t *job_resource(const char *project, const char *job_id, const char *type, const char *stype,
                            json_t *config, const char *error, int64_t created, int64_t ended)
{
    char ms[32], end[32];
    snprintf(ms, sizeof ms, "%lld", (long long)created);
    snprintf(end, sizeof end, "%lld", (long long)ended);
    json_t *st = json_pack("{s:s}", "state", "DONE");
    if (error) {
        json_object_set_new(st, "errorResult", json_pack("{s:s,s:s}", "reason", "invalidQuery", "message", error));
        json_object_set_new(st, "errors", json_pack("[{s:s,s:s}]", "reason", "invalidQuery", "message", error));
    }
    json_t *stats = json_pack("{s:s,s:s,s:s}", "creationTime", ms, "startTime", ms, "endTime", end);
    if (!strcmp(type, "query"))
        json_object_set_new(stats, "query", json_pack("{s:s,s:s,s:s}", "statementType", stype ? stype : "SELECT",
                                                      "totalBytesProcessed", "0", "totalBytesBilled", "0"));
    char *id = mb_asprintf("%s:US.%s", project, job_id);
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:O,s:o,s:o,s:s}", "kind", "bigquery#job", "id", id,
                          "jobReference", "projectId", project, "jobId", job_id, "location", "US", "configuration",
                          config ? config : json_object(), "status", st, "statistics", stats, "user_email",
                          "mcpbox@localhost");
    free(id);
    return o;
}

static const char *req_job_id(json_t *body, char buf[64])
{
    const char *id = json_string_value(json_object_get(json_object_get(body, "jobReference"), "jobId"));
    if (id && strlen(id) < 60) {
        snprintf(buf, 64, "%s", id);
        return buf;
    }
    return NULL;
}

/* The client's job id names the stored job and its result; job becomes it. */
static void rename_job(mb_gc *gc, char job[64], const char *want)
{
    static const char *const SQL[] = {"UPDATE __bq_results SET job_id=?1 WHERE job_id=?2",
                                      "UPDATE __bq_jobs SET id=?1 WHERE id=?2"};
    for (size_t i = 0; i < 2; i++) {
        sqlite3_stmt *st;
        if (mb_gc__prep(gc, SQL[i], &st, NULL)) continue;
        sqlite3_bind_text(st, 1, want, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, job, -1, SQLITE_STATIC);
        mb_gc__step_done(gc, st, NULL);
    }
    snprintf(job, 64, "%s", want);
}

/* A load job from gs://bucket/object URIs or uploaded bytes. */
static int do_load(mb_gc *gc, json_t *load, const char *data, size_t len, mb_err *err)
{
    json_t *dest = json_object_get(load, "destinationTable");
    const char *ds = json_string_value(json_object_get(dest, "datasetId"));
    const char *tb = json_string_value(json_object_get(dest, "tableId"));
    if (!ds || !tb) return mb_err_set(err, MB_EINVAL, "Load job needs configuration.load.destinationTable");
    const char *fmt = json_string_value(json_object_get(load, "sourceFormat"));
    mb_gc_load o = {.format = fmt && !strcmp(fmt, "NEWLINE_DELIMITED_JSON") ? MB_GC_NDJSON : MB_GC_CSV,
                    .write = MB_GC_WRITE_APPEND,
                    .skip_leading_rows = (int)json_integer_value(json_object_get(load, "skipLeadingRows")),
                    .autodetect = json_is_true(json_object_get(load, "autodetect")),
                    .fields = json_object_get(json_object_get(load, "schema"), "fields")};
    if (fmt && strcmp(fmt, "CSV") && strcmp(fmt, "NEWLINE_DELIMITED_JSON"))
        return mb_err_set(err, MB_EINVAL, "Unsupported: source format %s", fmt);
    if (json_is_string(json_object_get(load, "skipLeadingRows")))
        o.skip_leading_rows = atoi(json_string_value(json_object_get(load, "skipLeadingRows")));
    const char *wd = json_string_value(json_object_get(load, "writeDisposition"));
    if (wd && !strcmp(wd, "WRITE_TRUNCATE")) o.write = MB_GC_WRITE_TRUNCATE;
    if (wd && !strcmp(wd, "WRITE_EMPTY")) o.write = MB_GC_WRITE_EMPTY;
    long n;
    if (data) return mb_gc_bq_load(gc, ds, tb, data, len, &o, &n, err);
    size_t i;
    json_t *u;
    json_array_foreach(json_object_get(load, "sourceUris"), i, u) {
        const char *uri = json_string_value(u);
        if (!uri || strncmp(uri, "gs://", 5) || !strchr(uri + 5, '/'))
            return mb_err_set(err, MB_EINVAL, "Invalid source URI: %s", uri ? uri : "");
        const char *slash = strchr(uri + 5, '/');
        char *bucket = mb_strndup(uri + 5, (size_t)(slash - uri - 5));
        char *obj;
        size_t olen;
        int rc = mb_gc_gcs_object_get(gc, bucket, slash + 1, &obj, &olen, NULL, err);
        free(bucket);
        if (!rc) rc = mb_gc_bq_load(gc, ds, tb, obj, olen, &o, &n, err);
        free(obj);
        if (rc) return rc;
        if (o.write == MB_GC_WRITE_TRUNCATE) o.write = MB_GC_WRITE_APPEND;
    }
    return MB_OK;
}

/* multipart/related: the first part's JSON and the second part's bytes. */
static int multipart(struct MHD_Connection *c, const mb_buf *body, json_t **meta, const char **data, size_t *len)
{
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    const char *b = ct ? strstr(ct, "boundary=") : NULL;
    if (!b) return -1;
    b += 9;
    char bound[128];
    size_t bl = 0;
    if (*b == '"') b++;
    while (*b && *b != '"' && *b != ';' && bl < sizeof bound - 3) bound[bl++] = *b++;
    bound[bl] = '\0';
    char *delim = mb_asprintf("--%s", bound);
    size_t dl = strlen(delim);
    const char *s = body->data, *end = body->data + body->len;
    const char *parts[3];
    int np = 0;
    for (const char *p = s; p && p < end && np < 3;) {
        p = memmem(p, (size_t)(end - p), delim, dl);
        if (!p) break;
        parts[np++] = p;
        p += dl;
    }
    free(delim);
    if (np < 3) return -1;
    const char *h1 = memmem(parts[0], (size_t)(parts[1] - parts[0]), "\r\n\r\n", 4);
    const char *h2 = memmem(parts[1], (size_t)(parts[2] - parts[1]), "\r\n\r\n", 4);
    if (!h1 || !h2) return -1;
    h1 += 4;
    h2 += 4;
    *meta = json_loadb(h1, (size_t)(parts[1] - h1), 0, NULL);
    *data = h2;
    *len = (size_t)(parts[2] - h2);
    if (*len >= 2 && h2[*len - 2] == '\r' && h2[*len - 1] == '\n') *len -= 2;
    return *meta ? 0 : -1;
}

static void bigquery(mb_gc *gc, struct MHD_Connection *c, const char *method, json_t *sg, size_t k,
                     const mb_buf *raw, json_t *body, int upload, reply *r)
{
    const char *project = gc->project;
    mb_err e = {0};
    size_t n = json_array_size(sg) - k; /* segments after projects/P */
    int get = !strcmp(method, "GET"), post = !strcmp(method, "POST"), del = !strcmp(method, "DELETE");
    if (n == 1 && is(sg, k, "datasets") && get) {
        json_t *l = mb_gc_bq_dataset_list(gc), *out = json_array();
        size_t i;
        json_t *d;
        json_array_foreach(l, i, d) json_array_append_new(out, dataset_resource(project, d));
        json_decref(l);
        reply_json(r, 200, json_pack("{s:s,s:o}", "kind", "bigquery#datasetList", "datasets", out));
    } else if (n == 1 && is(sg, k, "datasets") && post) {
        const char *id = json_string_value(json_object_get(json_object_get(body, "datasetReference"), "datasetId"));
        json_t *d;
        if (mb_gc_bq_dataset_create(gc, id ? id : "", json_string_value(json_object_get(body, "description")),
                                    json_string_value(json_object_get(body, "location")), &e) ||
            mb_gc_bq_dataset_get(gc, id, &d, &e))
            reply_err(r, &e);
        else {
            reply_json(r, 200, dataset_resource(project, d));
            json_decref(d);
        }
    } else if (n == 2 && is(sg, k, "datasets")) {
        json_t *d;
        if (get) {
            if (mb_gc_bq_dataset_get(gc, seg(sg, k + 1), &d, &e)) reply_err(r, &e);
            else {
                reply_json(r, 200, dataset_resource(project, d));
                json_decref(d);
            }
        } else if (del) {
            const char *dc = qarg(c, "deleteContents");
            if (mb_gc_bq_dataset_delete(gc, seg(sg, k + 1), dc && !strcasecmp(dc, "true"), &e)) reply_err(r, &e);
            else reply_json(r, 204, NULL);
        } else reply_error(r, 501, "Unsupported: datasets.patch/update");
    } else if (n == 3 && is(sg, k, "datasets") && is(sg, k + 2, "tables")) {
        const char *ds = seg(sg, k + 1);
        if (get) {
            json_t *l;
            if (mb_gc_bq_table_list(gc, ds, &l, &e)) reply_err(r, &e);
            else {
                json_t *out = json_array();
                size_t i;
                json_t *t;
                json_array_foreach(l, i, t) {
                    const char *id = json_string_value(json_object_get(t, "id"));
                    char *full = mb_asprintf("%s:%s.%s", project, ds, id);
                    json_array_append_new(out, json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:s}", "kind", "bigquery#table",
                                                         "id", full, "tableReference", "projectId", project,
                                                         "datasetId", ds, "tableId", id, "type", "TABLE"));
                    free(full);
                }
                reply_json(r, 200, json_pack("{s:s,s:o,s:I}", "kind", "bigquery#tableList", "tables", out,
                                             "totalItems", (json_int_t)json_array_size(l)));
                json_decref(l);
            }
        } else if (post) {
            const char *id = json_string_value(json_object_get(json_object_get(body, "tableReference"), "tableId"));
            json_t *t;
            if (json_object_get(body, "view"))
                reply_error(r, 501, "Unsupported: views are not supported by this emulator");
            else if (mb_gc_bq_table_create(gc, ds, id ? id : "", json_object_get(json_object_get(body, "schema"), "fields"),
                                           json_string_value(json_object_get(body, "description")), &e) ||
                     mb_gc_bq_table_get(gc, ds, id, &t, &e))
                reply_err(r, &e);
            else {
                reply_json(r, 200, table_resource(project, t));
                json_decref(t);
            }
        } else reply_error(r, 405, "Method not allowed");
    } else if (n == 4 && is(sg, k, "datasets") && is(sg, k + 2, "tables")) {
        json_t *t;
        if (get) {
            if (mb_gc_bq_table_get(gc, seg(sg, k + 1), seg(sg, k + 3), &t, &e)) reply_err(r, &e);
            else {
                reply_json(r, 200, table_resource(project, t));
                json_decref(t);
            }
        } else if (del) {
            if (mb_gc_bq_table_delete(gc, seg(sg, k + 1), seg(sg, k + 3), &e)) reply_err(r, &e);
            else reply_json(r, 204, NULL);
        } else reply_error(r, 501, "Unsupported: tables.patch/update");
    } else if (n == 5 && is(sg, k, "datasets") && is(sg, k + 2, "tables") && is(sg, k + 4, "insertAll") && post) {
        json_t *rows = json_array(), *errs = NULL;
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(body, "rows"), i, x) json_array_append(rows, json_object_get(x, "json"));
        int rc = mb_gc_bq_insert(gc, seg(sg, k + 1), seg(sg, k + 3), rows, &errs, &e);
        if (rc && !errs) reply_err(r, &e);
        else {
            json_t *o = json_pack("{s:s}", "kind", "bigquery#tableDataInsertAllResponse");
            if (errs) {
                json_t *ie = json_array();
                json_array_foreach(errs, i, x)
                    json_array_append_new(ie, json_pack("{s:O,s:[{s:s,s:O}]}", "index", json_object_get(x, "index"),
                                                        "errors", "reason", "invalid", "message", json_object_get(x, "message")));
                json_object_set_new(o, "insertErrors", ie);
            }
            reply_json(r, 200, o);
        }
        json_decref(errs);
        json_decref(rows);
    } else if (n == 5 && is(sg, k, "datasets") && is(sg, k + 2, "tables") && is(sg, k + 4, "data") && get) {
        char *q = mb_asprintf("SELECT * FROM `%s.%s`", seg(sg, k + 1), seg(sg, k + 3));
        mb_gc_result res;
        if (strchr(seg(sg, k + 1), '`') || strchr(seg(sg, k + 3), '`') || mb_gc_bq_query(gc, q, NULL, 0, &res, &e))
            reply_err(r, e.code ? &e : &(mb_err){MB_EINVAL, "Invalid table name"});
        else {
            json_t *o = query_response(project, "tabledata", &res, "SELECT", c, 1);
            json_t *out = json_pack("{s:s,s:O,s:O}", "kind", "bigquery#tableDataList", "totalRows",
                                    json_object_get(o, "totalRows"), "rows", json_object_get(o, "rows"));
            if (json_object_get(o, "pageToken")) json_object_set(out, "pageToken", json_object_get(o, "pageToken"));
            json_decref(o);
            reply_json(r, 200, out);
            mb_gc_result_free(&res);
        }
        free(q);
    } else if (n == 1 && is(sg, k, "queries") && post) {
        const char *q = json_string_value(json_object_get(body, "query"));
        char job[64];
        mb_gc_result res;
        if (json_is_true(json_object_get(body, "useLegacySql")))
            reply_error(r, 400, "Unsupported: legacy SQL is not supported by this emulator");
        else if (run_job(gc, q ? q : "", json_object_get(body, "queryParameters"),
                         json_is_true(json_object_get(body, "dryRun")), job, &res, &e))
            reply_err(r, &e);
        else {
            reply_json(r, 200, query_response(project, job, &res, res.statement_type ? res.statement_type : "SELECT", c, 1));
            mb_gc_result_free(&res);
        }
    } else if (n == 2 && is(sg, k, "queries") && get) {
        mb_gc_result res;
        const char *stype;
        if (load_result(gc, seg(sg, k + 1), &res, &stype, &e)) reply_err(r, &e);
        else {
            reply_json(r, 200, query_response(project, seg(sg, k + 1), &res, stype, c, 1));
            mb_gc_result_free(&res);
        }
    } else if (n == 1 && is(sg, k, "jobs") && post) {
        json_t *cfg = json_object_get(body, "configuration"), *meta = NULL;
        const char *data = NULL;
        size_t dlen = 0;
        if (upload) {
            const char *ut = qarg(c, "uploadType");
            if (!ut || strcmp(ut, "multipart") || multipart(c, raw, &meta, &data, &dlen)) {
                reply_error(r, 501, "Unsupported: only multipart uploads are served (not resumable)");
                return;
            }
            body = meta;
            cfg = json_object_get(body, "configuration");
        }
        char idbuf[64], job[64];
        const char *want = req_job_id(body, idbuf);
        if (json_object_get(cfg, "query")) {
            json_t *qc = json_object_get(cfg, "query");
            mb_gc_result res;
            int rc = json_is_true(json_object_get(qc, "useLegacySql"))
                         ? mb_err_set(&e, MB_EINVAL, "Unsupported: legacy SQL is not supported by this emulator")
                         : run_job(gc, json_string_value(json_object_get(qc, "query")) ?: "",
                                   json_object_get(qc, "queryParameters"), json_is_true(json_object_get(cfg, "dryRun")),
                                   job, &res, &e);
            if (!rc && want) rename_job(gc, job, want);
            if (rc && e.code != MB_EINVAL && e.code != MB_ENOTFOUND) reply_err(r, &e);
            else {
                json_t *o = job_resource(project, rc ? (want ? want : "failed") : job, "query",
                                         rc ? NULL : res.statement_type, cfg, rc ? e.msg : NULL,
                                         mb_gc_clock_ms(gc), mb_gc_clock_ms(gc));
                if (rc) {
                    /* a failed job is a job; its error comes back on result() */
                    reply_err(r, &e);
                    json_decref(o);
                } else reply_json(r, 200, o);
                if (!rc) mb_gc_result_free(&res);
            }
        } else if (json_object_get(cfg, "load")) {
            int rc = do_load(gc, json_object_get(cfg, "load"), data, dlen, &e);
            mb_gc_bq_job_add(gc, "load", NULL, rc ? e.msg : NULL, job);
            if (!rc && want) rename_job(gc, job, want);
            if (rc) reply_err(r, &e);
            else reply_json(r, 200, job_resource(project, job, "load", NULL, cfg, NULL, mb_gc_clock_ms(gc),
                                                 mb_gc_clock_ms(gc)));
        } else {
            reply_error(r, 501, "Unsupported: only query and load jobs are served");
        }
        json_decref(meta);
    } else if (n == 2 && is(sg, k, "jobs") && get) {
        json_t *j;
        if (mb_gc_bq_job_get(gc, seg(sg, k + 1), &j, &e)) reply_err(r, &e);
        else {
            mb_gc_result res;
            const char *stype = "SELECT";
            if (!load_result(gc, seg(sg, k + 1), &res, &stype, NULL)) mb_gc_result_free(&res);
            json_t *cfg = json_pack("{s:{s:O}}", json_string_value(json_object_get(j, "type")), "query",
                                    json_object_get(j, "query") ?: json_null());
            reply_json(r, 200, job_resource(project, seg(sg, k + 1), json_string_value(json_object_get(j, "type")),
                                            stype, cfg, json_string_value(json_object_get(j, "error")),
                                            json_integer_value(json_object_get(j, "created")),
                                            json_integer_value(json_object_get(j, "ended"))));
            json_decref(cfg);
            json_decref(j);
        }
    } else if (n == 3 && is(sg, k, "jobs") && is(sg, k + 2, "cancel") && post) {
        json_t *j;
        if (mb_gc_bq_job_get(gc, seg(sg, k + 1), &j, &e)) reply_err(r, &e);
        else {
            reply_json(r, 200, json_pack("{s:s,s:o}", "kind", "bigquery#jobCancelResponse", "job",
                                         job_resource(project, seg(sg, k + 1), "query", NULL, NULL, NULL,
                                                      json_integer_value(json_object_get(j, "created")),
                                                      json_integer_value(json_object_get(j, "ended")))));
            json_decref(j);
        }
    } else {
        char *m = mb_asprintf("Unsupported: %s %s is not served by this emulator", method,
                              n ? seg(sg, k) : "(project)");
        reply_error(r, 501, m);
        free(m);
    }
}

/* --------------------------------------------------------------- Storage */

static json_t *bucket_resource(const char *project, json_t *b)
{
    char *c = iso_ms(json_integer_value(json_object_get(b, "created")));
    char *u = iso_ms(json_integer_value(json_object_get(b, "updated")));
    json_t *o = json_pack("{s:s,s:O,s:O,s:s,s:O,s:O,s:s,s:s,s:{s:b},s:O,s:s,s:s}", "kind", "storage#bucket", "id",
                          json_object_get(b, "name"), "name", json_object_get(b, "name"), "projectNumber", project,
                          "location", json_object_get(b, "location"), "storageClass",
                          json_object_get(b, "storage_class"), "timeCreated", c, "updated", u, "versioning",
                          "enabled", json_is_true(json_object_get(b, "versioning")), "labels",
                          json_object_get(b, "labels"), "metageneration", "1", "etag", "CAE=");
    if (json_array_size(json_object_get(b, "lifecycle")))
        json_object_set_new(o, "lifecycle", json_pack("{s:O}", "rule", json_object_get(b, "lifecycle")));
    free(c);
    free(u);
    return o;
}

static json_t *object_resource(json_t *m)
{
    char *c = iso_ms(json_integer_value(json_object_get(m, "created")));
    char *u = iso_ms(json_integer_value(json_object_get(m, "updated")));
    char size[32], gen[32];
    snprintf(size, sizeof size, "%lld", (long long)json_integer_value(json_object_get(m, "size")));
    snprintf(gen, sizeof gen, "%lld", (long long)json_integer_value(json_object_get(m, "generation")));
    char *id = mb_asprintf("%s/%s/%s", json_string_value(json_object_get(m, "bucket")),
                           json_string_value(json_object_get(m, "name")), gen);
    json_t *o = json_pack("{s:s,s:s,s:O,s:O,s:s,s:O,s:s,s:O,s:O,s:s,s:s,s:s,s:s,s:s}", "kind", "storage#object",
                          "id", id, "name", json_object_get(m, "name"), "bucket", json_object_get(m, "bucket"),
                          "size", size, "contentType", json_object_get(m, "content_type"), "generation", gen,
                          "md5Hash", json_object_get(m, "md5"), "crc32c", json_object_get(m, "crc32c"),
                          "timeCreated", c, "updated", u, "storageClass", "STANDARD", "metageneration", "1",
                          "etag", "CAE=");
    free(id);
    free(c);
    free(u);
    return o;
}

/* POST .../upload/storage/v1/b/BUCKET/o?uploadType=resumable: a session,
 * its URI in Location (on the same host and /p/PROJECT prefix the request
 * used). */
static void resumable_start(mb_gc *gc, struct MHD_Connection *c, json_t *sg, size_t k, const mb_buf *raw,
                            const char *qname, reply *r)
{
    json_t *meta = raw->len ? json_loadb(raw->data, raw->len, 0, NULL) : json_object();
    if (!json_is_object(meta)) {
        json_decref(meta);
        reply_error(r, 400, "Invalid JSON metadata for a resumable upload");
        return;
    }
    const char *name = json_string_value(json_object_get(meta, "name")) ?: qname;
    const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Upload-Content-Type");
    if (!ctype) ctype = json_string_value(json_object_get(meta, "contentType"));
    const char *tl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Upload-Content-Length");
    long long total = -1;
    if (tl) {
        char *end;
        total = strtoll(tl, &end, 10);
        if (*end || total < 0) {
            json_decref(meta);
            reply_error(r, 400, "Invalid X-Upload-Content-Length");
            return;
        }
    }
    char id[40];
    mb_err e = {0};
    if (mb_gc__upload_start(gc, seg(sg, k + 1), name, ctype, total, id, &e)) {
        json_decref(meta);
        reply_err(r, &e);
        return;
    }
    json_decref(meta);
    /* the host the client reached us by (letters, digits, '.', ':', '-', '[', ']' only) */
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    int ok = host && *host && strlen(host) < 256;
    for (const char *h = host; ok && *h; h++)
        ok = isalnum((unsigned char)*h) || strchr(".:-[]", *h);
    mb_buf u = {0};
    mb_buf_printf(&u, "http://%s", ok ? host : "127.0.0.1");
    size_t up = k - 3; /* segments before upload/storage/v1 */
    for (size_t i = 0; i < up; i++) mb_buf_printf(&u, "/%s", seg(sg, i));
    /* the bucket exists, so its name is [a-z0-9._-] */
    mb_buf_printf(&u, "/upload/storage/v1/b/%s/o?uploadType=resumable&upload_id=%s", seg(sg, k + 1), id);
    if (!up) mb_buf_printf(&u, "&project=%s", gc->project);
    reply_json(r, 200, NULL);
    r->location = mb_buf_steal(&u);
}

/* PUT / DELETE on a session URI: a chunk, a status query, a cancel. */
static void resumable_put(mb_gc *gc, struct MHD_Connection *c, int del, const mb_buf *raw, reply *r)
{
    const char *id = qarg(c, "upload_id");
    mb_err e = {0};
    if (del) {
        if (mb_gc__upload_cancel(gc, id, &e)) reply_err(r, &e);
        else reply_json(r, 499, NULL);
        return;
    }
    const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Range");
    long long have;
    json_t *m;
    if (mb_gc__upload_put(gc, id, range, raw->data ? raw->data : "", raw->len, &have, &m, &e)) {
        reply_err(r, &e);
    } else if (m) {
        reply_json(r, 200, object_resource(m));
        json_decref(m);
    } else {
        reply_json(r, 308, NULL);
        if (have > 0) r->range = mb_asprintf("bytes=0-%lld", have - 1);
    }
}

/* The name made of path segments [a, b) joined by '/' (an object name's
 * slashes arrive unescaped), malloc'ed. */
static char *seg_name(json_t *sg, size_t a, size_t b)
{
    mb_buf nb = {0};
    for (size_t i = a; i < b; i++) mb_buf_printf(&nb, "%s%s", i > a ? "/" : "", seg(sg, i));
    return nb.data ? mb_buf_steal(&nb) : mb_strdup("");
}

/* POST b/SB/o/SO/copyTo/b/DB/o/DO and .../rewriteTo/... (body: the
 * destination's metadata, contentType kept from the source unless given),
 * POST b/B/o/D/compose {sourceObjects[{name}], destination{contentType}}
 * (at most MB_GC_OBJECT_MAX bytes together).
 * Returns 0 when the path names none of them. Copies are whole and at once:
 * a rewrite answers done with every byte rewritten. */
static int object_op(mb_gc *gc, json_t *sg, size_t k, json_t *body, reply *r)
{
    size_t n = json_array_size(sg), op = 0;
    for (size_t i = k + 4; i + 4 < n && !op; i++)
        if ((is(sg, i, "copyTo") || is(sg, i, "rewriteTo")) && is(sg, i + 1, "b") && is(sg, i + 3, "o")) op = i;
    int compose = !op && n >= k + 5 && is(sg, n - 1, "compose");
    if (!op && !compose) return 0;
    mb_err e = {0};
    const char *bucket = seg(sg, k + 1);
    json_t *m = NULL;
    int rc;
    const char *ctype = json_string_value(json_object_get(body, "contentType"));
    char *dst = NULL;
    size_t total = 0;
    if (op) {
        char *src = seg_name(sg, k + 3, op);
        dst = seg_name(sg, op + 4, n);
        char *data = NULL;
        size_t len = 0;
        json_t *sm = NULL;
        rc = mb_gc_gcs_object_get(gc, bucket, src, &data, &len, &sm, &e);
        if (!rc)
            rc = mb_gc_gcs_object_put(gc, seg(sg, op + 2), dst, data, len,
                                      ctype ? ctype : json_string_value(json_object_get(sm, "content_type")), &e);
        if (!rc) rc = mb_gc_gcs_object_meta(gc, seg(sg, op + 2), dst, &m, &e);
        total = len;
        free(data);
        free(src);
        json_decref(sm);
    } else {
        dst = seg_name(sg, k + 3, n - 1);
        json_t *srcs = json_object_get(body, "sourceObjects"), *so;
        size_t i;
        mb_buf all = {0};
        rc = json_array_size(srcs) && json_array_size(srcs) <= 32
                 ? MB_OK
                 : mb_err_set(&e, MB_EINVAL, "The number of source components provided (%zu) must be between 1 and 32",
                              json_array_size(srcs));
        const char *first_type = NULL;
        json_t *first = NULL;
        json_array_foreach(srcs, i, so) {
            if (rc) break;
            const char *sn = json_string_value(json_object_get(so, "name"));
            char *data = NULL;
            size_t len = 0;
            json_t *sm = NULL;
            if (!sn) rc = mb_err_set(&e, MB_EINVAL, "sourceObjects[%zu].name is required", i);
            else rc = mb_gc_gcs_object_get(gc, bucket, sn, &data, &len, &sm, &e);
            if (!rc && (long long)(all.len + len) > MB_GC_OBJECT_MAX)
                rc = mb_err_set(&e, MB_ETOOBIG, "The composed object would be larger than this emulator takes "
                                "(256 MiB)");
            if (!rc) mb_buf_append(&all, data ? data : "", len);
            if (!rc && !first) {
                first = sm;
                first_type = json_string_value(json_object_get(sm, "content_type"));
            } else json_decref(sm);
            free(data);
        }
        json_t *dest = json_object_get(body, "destination");
        const char *dt = json_string_value(json_object_get(dest, "contentType"));
        if (!rc)
            rc = mb_gc_gcs_object_put(gc, bucket, dst, all.data ? all.data : "", all.len, dt ? dt : first_type, &e);
        if (!rc) rc = mb_gc_gcs_object_meta(gc, bucket, dst, &m, &e);
        total = all.len;
        json_decref(first);
        mb_buf_free(&all);
    }
    if (rc) reply_err(r, &e);
    else if (op && is(sg, op, "rewriteTo")) {
        char t[32];
        snprintf(t, sizeof t, "%zu", total);
        reply_json(r, 200, json_pack("{s:s,s:s,s:s,s:b,s:o}", "kind", "storage#rewriteResponse", "totalBytesRewritten",
                                     t, "objectSize", t, "done", 1, "resource", object_resource(m)));
    } else reply_json(r, 200, object_resource(m));
    json_decref(m);
    free(dst);
    return 1;
}

static void storage(mb_gc *gc, struct MHD_Connection *c, const char *method, json_t *sg, size_t k,
                    const mb_buf *raw, json_t *body, int mode, reply *r)
{
    /* mode: 0 = /storage/v1, 1 = /upload/storage/v1, 2 = /download/storage/v1 */
    mb_err e = {0};
    size_t n = json_array_size(sg) - k; /* after storage/v1 */
    int get = !strcmp(method, "GET"), post = !strcmp(method, "POST"), del = !strcmp(method, "DELETE");
    if (!n || !is(sg, k, "b")) {
        reply_error(r, 404, "Not Found");
        return;
    }
    if (n == 1 && get) {
        json_t *l = mb_gc_gcs_bucket_list(gc), *out = json_array();
        size_t i;
        json_t *b;
        json_array_foreach(l, i, b) json_array_append_new(out, bucket_resource(gc->project, b));
        json_decref(l);
        reply_json(r, 200, json_pack("{s:s,s:o}", "kind", "storage#buckets", "items", out));
    } else if (n == 1 && post && mode == 0) {
        const char *name = json_string_value(json_object_get(body, "name"));
        json_t *b;
        if (mb_gc_gcs_bucket_create(gc, name ? name : "", json_string_value(json_object_get(body, "location")),
                                    json_string_value(json_object_get(body, "storageClass")), &e) ||
            mb_gc_gcs_bucket_get(gc, name, &b, &e))
            reply_err(r, &e);
        else {
            reply_json(r, 200, bucket_resource(gc->project, b));
            json_decref(b);
        }
    } else if (n == 2) {
        const char *name = seg(sg, k + 1);
        json_t *b;
        if (get) {
            if (mb_gc_gcs_bucket_get(gc, name, &b, &e)) reply_err(r, &e);
            else {
                reply_json(r, 200, bucket_resource(gc->project, b));
                json_decref(b);
            }
        } else if (del) {
            if (mb_gc_gcs_bucket_delete(gc, name, 0, &e)) reply_err(r, &e);
            else reply_json(r, 204, NULL);
        } else if (!strcmp(method, "PATCH") || !strcmp(method, "PUT")) {
            int rc = MB_OK;
            if (json_object_get(body, "versioning"))
                rc = mb_gc_gcs_bucket_set(gc, name, "versioning", json_object_get(json_object_get(body, "versioning"), "enabled"), &e);
            if (!rc && json_object_get(body, "labels"))
                rc = mb_gc_gcs_bucket_set(gc, name, "labels", json_object_get(body, "labels"), &e);
            if (!rc && json_object_get(body, "lifecycle"))
                rc = mb_gc_gcs_bucket_set(gc, name, "lifecycle", json_object_get(json_object_get(body, "lifecycle"), "rule") ?: json_array(), &e);
            if (!rc && json_string_value(json_object_get(body, "storageClass")))
                rc = mb_gc_gcs_bucket_set(gc, name, "storage_class", json_object_get(body, "storageClass"), &e);
            if (!rc) rc = mb_gc_gcs_bucket_get(gc, name, &b, &e);
            if (rc) reply_err(r, &e);
            else {
                reply_json(r, 200, bucket_resource(gc->project, b));
                json_decref(b);
            }
        } else reply_error(r, 405, "Method not allowed");
    } else if (n == 3 && is(sg, k + 2, "o") && get) {
        json_t *items, *prefixes;
        if (mb_gc_gcs_object_list(gc, seg(sg, k + 1), qarg(c, "prefix"), qarg(c, "delimiter"), &items, &prefixes, &e))
            reply_err(r, &e);
        else {
            json_t *out = json_array();
            size_t i;
            json_t *m;
            json_array_foreach(items, i, m) json_array_append_new(out, object_resource(m));
            json_decref(items);
            reply_json(r, 200, json_pack("{s:s,s:o,s:o}", "kind", "storage#objects", "items", out, "prefixes", prefixes));
        }
    } else if (n == 3 && is(sg, k + 2, "o") && post && mode == 1) {
        const char *ut = qarg(c, "uploadType");
        const char *bucket = seg(sg, k + 1);
        json_t *meta = NULL;
        const char *data = raw->data ? raw->data : "";
        size_t len = raw->len;
        const char *name = qarg(c, "name");
        const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        if (ut && !strcmp(ut, "multipart")) {
            if (multipart(c, raw, &meta, &data, &len)) {
                reply_error(r, 400, "Invalid multipart upload");
                return;
            }
            name = json_string_value(json_object_get(meta, "name")) ?: name;
            ctype = json_string_value(json_object_get(meta, "contentType"));
        } else if (ut && !strcmp(ut, "resumable")) {
            resumable_start(gc, c, sg, k, raw, name, r);
            return;
        } else if (!ut || strcmp(ut, "media")) {
            reply_error(r, 400, "Unsupported uploadType: use media, multipart or resumable");
            return;
        }
        json_t *m;
        if (!name) reply_error(r, 400, "Object name is required");
        else if (mb_gc_gcs_object_put(gc, bucket, name, data, len, ctype, &e) ||
                 mb_gc_gcs_object_meta(gc, bucket, name, &m, &e))
            reply_err(r, &e);
        else {
            reply_json(r, 200, object_resource(m));
            json_decref(m);
        }
        json_decref(meta);
    } else if (n == 3 && is(sg, k + 2, "o") && mode == 1 && qarg(c, "upload_id") &&
               (!strcmp(method, "PUT") || !strcmp(method, "POST") || del)) {
        resumable_put(gc, c, del, raw, r);
    } else if (n >= 5 && is(sg, k + 2, "o") && post && mode == 0 && object_op(gc, sg, k, body, r)) {
        /* copied, rewritten or composed */
    } else if (n >= 4 && is(sg, k + 2, "o")) {
        /* an object name's slashes arrive unescaped: the rest of the path is the name */
        const char *bucket = seg(sg, k + 1);
        mb_buf nb = {0};
        for (size_t i = k + 3; i < json_array_size(sg); i++) mb_buf_printf(&nb, "%s%s", i > k + 3 ? "/" : "", seg(sg, i));
        char *name = mb_buf_steal(&nb);
        const char *alt = qarg(c, "alt");
        if (get && (mode == 2 || (alt && !strcmp(alt, "media")))) {
            char *data;
            size_t len;
            json_t *m;
            if (mb_gc_gcs_object_get(gc, bucket, name, &data, &len, &m, &e)) reply_err(r, &e);
            else {
                r->status = 200;
                r->body = data;
                r->len = len;
                r->type = "application/octet-stream";
                json_decref(m);
            }
        } else if (get) {
            json_t *m;
            if (mb_gc_gcs_object_meta(gc, bucket, name, &m, &e)) reply_err(r, &e);
            else {
                reply_json(r, 200, object_resource(m));
                json_decref(m);
            }
        } else if (del) {
            if (mb_gc_gcs_object_delete(gc, bucket, name, &e)) reply_err(r, &e);
            else reply_json(r, 204, NULL);
        } else reply_error(r, 501, "Unsupported: objects.patch/update");
        free(name);
    } else {
        reply_error(r, 501, "Unsupported: this Cloud Storage call is not served by this emulator");
    }
}

/* ------------------------------------------------------------- signed URLs */

/* /p/PROJECT/BUCKET/OBJECT?X-Goog-...: a V4 signed URL (signed.c). */
static void signed_object(mb_gcloud_rest *rs, struct MHD_Connection *c, const char *url, const char *method,
                          const char *project, json_t *sg, const mb_buf *raw, reply *r)
{
    char *db = rs->resolve(rs->ctx, project);
    mb_gc *gc = NULL;
    mb_err e = {0};
    if (!db || mb_gc_open(db, project, &gc, &e)) {
        r->status = 404;
        r->body = mb_strdup("<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchBucket</Code>"
                            "<Message>The specified bucket does not exist.</Message></Error>");
        r->len = strlen(r->body);
        r->type = "application/xml; charset=UTF-8";
        free(db);
        return;
    }
    mb_gc_sigq q = {qarg(c, "X-Goog-Algorithm"), qarg(c, "X-Goog-Credential"), qarg(c, "X-Goog-Date"),
                    qarg(c, "X-Goog-Expires"), qarg(c, "X-Goog-SignedHeaders"), qarg(c, "X-Goog-Signature")};
    char *xml = NULL;
    int st = mb_gc_gcs_check_signed(gc, method, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"), url, &q, &xml);
    const char *bucket = seg(sg, 2);
    mb_buf nb = {0};
    for (size_t i = 3; i < json_array_size(sg); i++) mb_buf_printf(&nb, "%s%s", i > 3 ? "/" : "", seg(sg, i));
    char *name = mb_buf_steal(&nb);
    if (!st && (!strcmp(method, "GET") || !strcmp(method, "HEAD"))) {
        char *data;
        size_t len;
        json_t *m;
        if (mb_gc_gcs_object_get(gc, bucket, name, &data, &len, &m, &e)) {
            st = 404;
            xml = mb_strdup("<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey</Code>"
                            "<Message>The specified key does not exist.</Message></Error>");
        } else {
            r->status = 200;
            r->body = data;
            r->len = len;
            r->type = "application/octet-stream";
            json_decref(m);
        }
    } else if (!st && !strcmp(method, "PUT")) {
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        if (mb_gc_gcs_object_put(gc, bucket, name, raw->data ? raw->data : "", raw->len, ct, &e)) reply_err(r, &e);
        else reply_json(r, 200, NULL);
    } else if (!st && !strcmp(method, "DELETE")) {
        if (mb_gc_gcs_object_delete(gc, bucket, name, &e)) reply_err(r, &e);
        else reply_json(r, 204, NULL);
    } else if (!st) {
        reply_error(r, 405, "Method not allowed on a signed URL");
    }
    if (st) {
        r->status = st;
        r->body = xml;
        r->len = strlen(xml);
        r->type = "application/xml; charset=UTF-8";
    }
    free(name);
    mb_gc_close(gc);
    free(db);
}

/* ------------------------------------------------------------- dispatch */

static void route(mb_gcloud_rest *rs, struct MHD_Connection *c, const char *url, const char *method,
                  const mb_buf *raw, reply *r)
{
    json_t *sg = segments(url);
    size_t k = 0;
    char *project = NULL;
    if (is(sg, 0, "p") && seg(sg, 1)) {
        project = mb_strdup(seg(sg, 1));
        k = 2;
    }
    if (mb_gc__rest_identity(c, method, sg, k, project, raw, rs->resolve, rs->ctx, r) ||
        mb_gc__rest_logging(c, method, sg, k, project, raw, rs->resolve, rs->ctx, r)) {
        free(project);
        json_decref(sg);
        return;
    }
    if (k == 2 && seg(sg, 3) && qarg(c, "X-Goog-Signature") && !is(sg, 2, "upload") && !is(sg, 2, "download") &&
        !is(sg, 2, "storage") && !is(sg, 2, "bigquery")) {
        signed_object(rs, c, url, method, project, sg, raw, r);
        free(project);
        json_decref(sg);
        return;
    }
    int upload = is(sg, k, "upload"), download = is(sg, k, "download");
    size_t b = k + ((upload || download) ? 1 : 0);
    int bq = is(sg, b, "bigquery") && is(sg, b + 1, "v2") && is(sg, b + 2, "projects") && seg(sg, b + 3);
    int gcs = is(sg, b, "storage") && is(sg, b + 1, "v1");
    if (bq) {
        free(project);
        project = mb_strdup(seg(sg, b + 3));
    } else if (gcs && !project) {
        const char *q = qarg(c, "project");
        if (q) project = mb_strdup(q);
        else project = mb_gc__bearer_project(c);
    }
    char *by_number = project ? mb_gc__project_of_number(project) : NULL;
    if (by_number) {
        /* a project number (Resource Manager v3's name) names the same project */
        free(project);
        project = by_number;
    }
    if (!bq && !gcs) {
        reply_error(r, 404, "Not Found");
    } else if (!project) {
        reply_error(r, 400, "No project: use STORAGE_EMULATOR_HOST=http://HOST:PORT/p/PROJECT, ?project= or the "
                            "project id as bearer token");
    } else {
        char *db = rs->resolve(rs->ctx, project);
        mb_gc *gc = NULL;
        mb_err e = {0};
        if (!db || mb_gc_open(db, project, &gc, &e)) {
            char *m = mb_asprintf("Not found: Project %s", project);
            reply_error(r, 404, m);
            free(m);
        } else {
            json_t *body = NULL;
            if (raw->len && !(upload)) body = json_loadb(raw->data, raw->len, 0, NULL);
            if (raw->len && !upload && !body && strcmp(method, "GET")) reply_error(r, 400, "Invalid JSON body");
            else if (bq) bigquery(gc, c, method, sg, b + 4, raw, body, upload, r);
            else storage(gc, c, method, sg, b + 2, raw, body, upload ? 1 : download ? 2 : 0, r);
            json_decref(body);
        }
        mb_gc_close(gc);
        free(db);
    }
    free(project);
    json_decref(sg);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    mb_gcloud_rest *rs = cls;
    req *q = *con_cls;
    if (!q) {
        q = mb_calloc(1, sizeof *q);
        *con_cls = q;
        return MHD_YES;
    }
    if (*size) {
        if (q->body.len + *size > MAX_BODY) q->too_big = 1;
        else mb_buf_append(&q->body, data, *size);
        *size = 0;
        return MHD_YES;
    }
    reply r = {0};
    if (q->too_big) reply_error(&r, 413, "Request body too large");
    else route(rs, c, url, method, &q->body, &r);
    struct MHD_Response *resp = MHD_create_response_from_buffer(r.len, r.body, MHD_RESPMEM_MUST_FREE);
    if (r.type && r.len) MHD_add_response_header(resp, "Content-Type", r.type);
    if (r.location) MHD_add_response_header(resp, "Location", r.location);
    if (r.range) MHD_add_response_header(resp, "Range", r.range);
    free(r.location);
    free(r.range);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)r.status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls;
    (void)c;
    (void)t;
    req *q = *con_cls;
    if (q) {
        mb_buf_free(&q->body);
        free(q);
    }
    *con_cls = NULL;
}

int mb_gcloud_rest_start(const char *listen_on, mb_gcloud_resolve_fn resolve, void *ctx,
                         mb_gcloud_rest **out, mb_err *err)
{
    *out = NULL;
    const char *colon = strrchr(listen_on, ':');
    if (!colon) return mb_err_set(err, MB_EINVAL, "gcloud facade: listen address must be HOST:PORT, not %s", listen_on);
    char *host = mb_strndup(listen_on, (size_t)(colon - listen_on));
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    int g = getaddrinfo(host, colon + 1, &hints, &ai);
    free(host);
    if (g) return mb_err_set(err, MB_EINVAL, "gcloud facade: cannot resolve %s: %s", listen_on, gai_strerror(g));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 256) != 0) {
        int rc = mb_err_sys(err, errno, "gcloud facade: cannot listen on %s", listen_on);
        if (fd >= 0) close(fd);
        freeaddrinfo(ai);
        return rc;
    }
    int v6 = ai->ai_family == AF_INET6;
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    mb_gcloud_rest *rs = mb_calloc(1, sizeof *rs);
    rs->resolve = resolve;
    rs->ctx = ctx;
    rs->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION | (v6 ? MHD_USE_IPv6 : 0);
    /* mb_http_unescape: a %00 in a path or an argument is decoded as 0xFF,
     * which no name validates as UTF-8, so it cannot cut a name short
     * (".../o/a%00b" naming object "a"): such a request is refused. */
    rs->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handler, rs, MHD_OPTION_LISTEN_SOCKET, fd,
                               MHD_OPTION_NOTIFY_COMPLETED, completed, rs, MHD_OPTION_CONNECTION_TIMEOUT,
                               (unsigned)120, MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
                               MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1024 * 1024), MHD_OPTION_UNESCAPE_CALLBACK,
                               mb_http_unescape, NULL, MHD_OPTION_END);
    if (!rs->mhd) {
        close(fd);
        free(rs);
        return mb_err_set(err, MB_EIO, "gcloud facade: cannot start the HTTP server on %s", listen_on);
    }
    *out = rs;
    return MB_OK;
}

int mb_gcloud_rest_port(const mb_gcloud_rest *rs) { return rs ? rs->port : 0; }

void mb_gcloud_rest_stop(mb_gcloud_rest *rs)
{
    if (!rs) return;
    MHD_stop_daemon(rs->mhd);
    free(rs);
}
