/*
 * rest_logging.c - Cloud Logging v2's REST API on the facade, as
 * google-cloud-logging's HTTP transport (Client(_use_grpc=False) or
 * GOOGLE_CLOUD_DISABLE_GRPC=true, with client_options api_endpoint at the
 * facade) and the GAPIC clients with transport="rest" call it:
 *   POST v2/entries:list    {resourceNames, filter, orderBy, pageSize, pageToken}
 *                           -> {entries[LogEntry], nextPageToken}
 *   POST v2/entries:write   {logName, resource, labels, entries[LogEntry], dryRun} -> {}
 *   GET  v2/projects/P/logs -> {logNames}; DELETE v2/projects/P/logs/NAME -> {}
 *   GET|POST v2/projects/P/locations/L/buckets (?bucketId=), GET .../buckets/ID
 *   GET|POST v2/projects/P/sinks, GET|DELETE v2/projects/P/sinks/NAME
 * Shapes: the REST reference of logging.googleapis.com v2 (LogEntry,
 * MonitoredResource, LogBucket, LogSink, ListLogEntriesResponse). The
 * project in the resource names selects the sandbox (a project number
 * works too). An entry's labels (the request's labels under them), trace,
 * spanId, traceSampled, httpRequest, operation and sourceLocation are kept
 * and given back; protoPayload and other fields are refused by name. Every
 * project has the _Default and _Required buckets in location global, as
 * Google makes them.
 */
#define _GNU_SOURCE
#include "gcloud/rest_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_MAX 1000

/* "projects/P[/...]" -> P (a number mapped to its id), malloc'ed. */
static char *project_of(const char *name)
{
    if (!name || strncmp(name, "projects/", 9)) return NULL;
    const char *p = name + 9, *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (!n || n > 64) return NULL;
    char *id = mb_strndup(p, n);
    char *num = mb_gc__project_of_number(id);
    if (num) {
        free(id);
        id = num;
    }
    return id;
}

static json_t *entry_resource(json_t *e)
{
    json_t *o = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O}", "logName", json_object_get(e, "log_name"), "resource",
                          json_object_get(e, "resource"), "timestamp", json_object_get(e, "timestamp"),
                          "receiveTimestamp", json_object_get(e, "receive_timestamp"), "severity",
                          json_object_get(e, "severity"), "insertId", json_object_get(e, "insert_id"));
    json_t *jp = json_object_get(e, "json_payload"), *tp = json_object_get(e, "text_payload");
    if (json_is_object(jp)) json_object_set(o, "jsonPayload", jp);
    else json_object_set_new(o, "textPayload", json_string(json_is_string(tp) ? json_string_value(tp) : ""));
    json_object_update(o, json_object_get(e, "extra"));
    return o;
}

/* The fields of entry x kept beside its payload, with the request's default
 * labels under the entry's own (an entry's label wins, as Google merges
 * them); NULL when there is nothing to keep. Fields not in LogEntry's REST
 * shape that a client may send are left to mb_gc_log_write to refuse. */
static json_t *entry_extra(json_t *body, json_t *x)
{
    static const char *const skip[] = {"logName", "resource", "timestamp", "receiveTimestamp", "severity",
                                       "insertId", "textPayload", "jsonPayload", "protoPayload"};
    json_t *extra = json_object(), *labels = json_object();
    if (json_is_object(json_object_get(body, "labels"))) json_object_update(labels, json_object_get(body, "labels"));
    const char *k;
    json_t *v;
    json_object_foreach(x, k, v) {
        size_t i = 0;
        while (i < sizeof skip / sizeof *skip && strcmp(k, skip[i])) i++;
        if (i < sizeof skip / sizeof *skip) continue;
        if (!strcmp(k, "labels") && json_is_object(v)) json_object_update(labels, v);
        else json_object_set(extra, k, v);
    }
    if (json_object_size(labels) || json_object_get(x, "labels")) json_object_set(extra, "labels", labels);
    json_decref(labels);
    if (!json_object_size(extra)) {
        json_decref(extra);
        return NULL;
    }
    return extra;
}

static void list_entries(mb_gc *gc, json_t *body, mb_gc__reply *r)
{
    const char *order = json_string_value(json_object_get(body, "orderBy"));
    json_t *ps = json_object_get(body, "pageSize");
    long long size = json_is_integer(ps) ? json_integer_value(ps) : json_is_string(ps) ? atoll(json_string_value(ps)) : 50;
    const char *tok = json_string_value(json_object_get(body, "pageToken"));
    long long start = tok ? atoll(tok) : 0;
    int asc = !order || !strcmp(order, "timestamp asc") || !strcmp(order, "timestamp");
    if (order && !asc && strcmp(order, "timestamp desc")) {
        mb_gc__reply_error(r, 400, "Invalid orderBy: only \"timestamp asc\" and \"timestamp desc\" are supported");
        return;
    }
    if (size <= 0 || size > PAGE_MAX) size = size <= 0 ? 50 : PAGE_MAX;
    if (start < 0) start = 0;
    json_t *all;
    mb_err e = {0};
    if (mb_gc_log_list(gc, json_string_value(json_object_get(body, "filter")), 0, &all, &e)) {
        mb_gc__reply_err(r, &e);
        return;
    }
    size_t n = json_array_size(all);
    json_t *out = json_array();
    for (size_t i = (size_t)start; i < n && i < (size_t)(start + size); i++)
        json_array_append_new(out, entry_resource(json_array_get(all, asc ? n - 1 - i : i)));
    json_t *o = json_object();
    if (json_array_size(out)) json_object_set(o, "entries", out);
    if ((size_t)(start + size) < n) {
        char next[32];
        snprintf(next, sizeof next, "%lld", start + size);
        json_object_set_new(o, "nextPageToken", json_string(next));
    }
    json_decref(out);
    json_decref(all);
    mb_gc__reply_json(r, 200, o);
}

static void write_entries(mb_gc *gc, json_t *body, mb_gc__reply *r)
{
    json_t *entries = json_object_get(body, "entries");
    const char *dlog = json_string_value(json_object_get(body, "logName"));
    json_t *dres = json_object_get(body, "resource");
    if (!json_array_size(entries)) {
        mb_gc__reply_error(r, 400, "At least one log entry is required");
        return;
    }
    mb_err e = {0};
    if (mb_gc__begin(gc, &e)) {
        mb_gc__reply_err(r, &e);
        return;
    }
    size_t i;
    json_t *x;
    int rc = MB_OK;
    json_array_foreach(entries, i, x) {
        const char *ln = json_string_value(json_object_get(x, "logName")) ?: dlog;
        json_t *res = json_object_get(x, "resource") ?: dres;
        char *p = project_of(ln);
        const char *ts = json_string_value(json_object_get(x, "timestamp"));
        int64_t ms = 0;
        if (!p || strcmp(p, gc->project) || !strstr(ln, "/logs/"))
            rc = mb_err_set(&e, MB_EINVAL, "entries[%zu]: logName must be projects/%s/logs/LOG_ID", i, gc->project);
        else if (json_object_get(x, "protoPayload"))
            rc = mb_err_set(&e, MB_EINVAL, "Unsupported: protoPayload is not supported by this emulator");
        else if (ts && (mb_gc_parse_ms(ts, &ms) || ms <= 0))
            rc = mb_err_set(&e, MB_EINVAL, "entries[%zu]: invalid timestamp", i);
        else if (json_object_get(x, "jsonPayload") && !json_is_object(json_object_get(x, "jsonPayload")))
            rc = mb_err_set(&e, MB_EINVAL, "entries[%zu]: jsonPayload must be an object", i);
        else {
            json_t *extra = entry_extra(body, x);
            rc = mb_gc_log_write(gc, ln, json_string_value(json_object_get(x, "textPayload")) ?: "",
                                 json_object_get(x, "jsonPayload"),
                                 json_string_value(json_object_get(x, "severity")) ?: "DEFAULT", ms,
                                 json_string_value(json_object_get(res, "type")),
                                 json_is_object(json_object_get(res, "labels")) ? json_object_get(res, "labels") : NULL,
                                 extra, &e);
            json_decref(extra);
            if (rc) rc = mb_err_wrap(&e, rc, "entries[%zu]", i);
        }
        free(p);
        if (rc) break;
    }
    if (!rc && json_is_true(json_object_get(body, "dryRun"))) {
        mb_gc__rollback(gc); /* checked, not written */
        mb_gc__reply_json(r, 200, json_object());
        return;
    }
    if (!rc) rc = mb_gc__commit(gc, &e);
    if (rc) {
        mb_gc__rollback(gc);
        mb_gc__reply_err(r, &e);
    } else mb_gc__reply_json(r, 200, json_object());
}

/* The buckets Google makes in every project: _Required (400 days, locked)
 * and _Default (30 days), location global, made with the project. */
static json_t *default_buckets(mb_gc *gc)
{
    json_int_t t = (json_int_t)mb_gc__created_ms(gc);
    return json_pack("[{s:s,s:s,s:i,s:I,s:I,s:b},{s:s,s:s,s:i,s:I,s:I}]", "name", "_Required", "location",
                     "global", "retention_days", 400, "created", t, "updated", t, "locked", 1, "name",
                     "_Default", "location", "global", "retention_days", 30, "created", t, "updated", t);
}

static json_t *bucket_resource(const char *project, json_t *b)
{
    char c[40], u[40];
    mb_gc__iso_ms(json_integer_value(json_object_get(b, "created")), c);
    mb_gc__iso_ms(json_integer_value(json_object_get(b, "updated")), u);
    char *name = mb_asprintf("projects/%s/locations/%s/buckets/%s", project,
                             json_string_value(json_object_get(b, "location")), json_string_value(json_object_get(b, "name")));
    json_t *o = json_pack("{s:s,s:s,s:s,s:O,s:s}", "name", name, "createTime", c, "updateTime", u, "retentionDays",
                          json_object_get(b, "retention_days"), "lifecycleState", "ACTIVE");
    if (json_string_value(json_object_get(b, "description")))
        json_object_set(o, "description", json_object_get(b, "description"));
    if (json_is_true(json_object_get(b, "locked"))) json_object_set_new(o, "locked", json_true());
    free(name);
    return o;
}

static json_t *sink_resource(const char *project, json_t *s)
{
    char c[40], u[40];
    mb_gc__iso_ms(json_integer_value(json_object_get(s, "created")), c);
    mb_gc__iso_ms(json_integer_value(json_object_get(s, "updated")), u);
    char *w = mb_asprintf("serviceAccount:service-%llu@gcp-sa-logging.iam.gserviceaccount.com",
                          mb_gc__project_number(project));
    json_t *o = json_pack("{s:O,s:O,s:s,s:s,s:s}", "name", json_object_get(s, "name"), "destination",
                          json_object_get(s, "destination") ?: json_string(""), "writerIdentity", w, "createTime", c,
                          "updateTime", u);
    if (json_string_value(json_object_get(s, "filter"))) json_object_set(o, "filter", json_object_get(s, "filter"));
    free(w);
    return o;
}

static void not_found(mb_gc__reply *r, const char *what, const char *id)
{
    char *m = mb_asprintf("%s `%s` does not exist.", what, id);
    mb_gc__reply_error(r, 404, m);
    free(m);
}

/* Paths under v2/projects/P (segment k = the first after P). */
static void project_paths(mb_gc *gc, struct MHD_Connection *c, const char *method, json_t *sg, size_t k,
                          json_t *body, mb_gc__reply *r)
{
    size_t n = json_array_size(sg) - k;
    int get = !strcmp(method, "GET"), post = !strcmp(method, "POST"), del = !strcmp(method, "DELETE");
    mb_err e = {0};
    if (n == 1 && mb_gc__seg_is(sg, k, "logs") && get) {
        json_t *names = mb_gc_log_names(gc), *out = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(names, i, x) {
            char *full = mb_asprintf("projects/%s/logs/%s", gc->project, json_string_value(x));
            json_array_append_new(out, json_string(full));
            free(full);
        }
        json_decref(names);
        mb_gc__reply_json(r, 200, json_pack("{s:o}", "logNames", out));
    } else if (n >= 2 && mb_gc__seg_is(sg, k, "logs") && del) {
        /* a log id's '/' arrives as segments (libmicrohttpd unescapes %2F) */
        mb_buf id = {0};
        for (size_t i = k + 1; i < json_array_size(sg); i++) mb_buf_printf(&id, "%s%s", i > k + 1 ? "/" : "", mb_gc__seg(sg, i));
        if (mb_gc_log_delete(gc, id.data, &e)) {
            char *m = mb_asprintf("Log projects/%s/logs/%s does not exist", gc->project, id.data);
            mb_gc__reply_error(r, 404, m);
            free(m);
        } else mb_gc__reply_json(r, 200, json_object());
        mb_buf_free(&id);
    } else if (n >= 3 && mb_gc__seg_is(sg, k, "locations") && mb_gc__seg_is(sg, k + 2, "buckets") && n <= 4) {
        const char *loc = mb_gc__seg(sg, k + 1);
        json_t *l = default_buckets(gc), *out = json_array(), *hit = NULL;
        json_t *made_here = mb_gc_log_bucket_list(gc);
        json_array_extend(l, made_here);
        json_decref(made_here);
        size_t i;
        json_t *b;
        json_array_foreach(l, i, b) {
            if (strcmp(loc, "-") && strcmp(loc, json_string_value(json_object_get(b, "location")))) continue;
            if (n == 4 && !strcmp(json_string_value(json_object_get(b, "name")), mb_gc__seg(sg, k + 3))) hit = b;
            json_array_append_new(out, bucket_resource(gc->project, b));
        }
        if (n == 3 && get) {
            json_t *o = json_object();
            if (json_array_size(out)) json_object_set(o, "buckets", out);
            mb_gc__reply_json(r, 200, o);
        } else if (n == 3 && post) {
            const char *id = mb_gc__qarg(c, "bucketId");
            json_t *rd = json_object_get(body, "retentionDays");
            int days = json_is_integer(rd) ? (int)json_integer_value(rd) : 30;
            json_t *made = NULL;
            if (!strcmp(loc, "-")) mb_gc__reply_error(r, 400, "A bucket needs a location, not -");
            else if (!id) mb_gc__reply_error(r, 400, "bucketId is required");
            else if (mb_gc_log_bucket_create(gc, id, loc, days, json_string_value(json_object_get(body, "description")), &e))
                mb_gc__reply_err(r, &e);
            else {
                json_t *l2 = mb_gc_log_bucket_list(gc);
                json_array_foreach(l2, i, b) if (!strcmp(json_string_value(json_object_get(b, "name")), id)) made = b;
                mb_gc__reply_json(r, 200, made ? bucket_resource(gc->project, made) : json_object());
                json_decref(l2);
            }
        } else if (n == 4 && get) {
            if (hit) mb_gc__reply_json(r, 200, bucket_resource(gc->project, hit));
            else not_found(r, "Bucket", mb_gc__seg(sg, k + 3));
        } else {
            mb_gc__reply_error(r, 501, "Unsupported: log buckets can be listed, created and read");
        }
        json_decref(out);
        json_decref(l);
    } else if (n == 1 && mb_gc__seg_is(sg, k, "sinks") && (get || post)) {
        if (post) {
            const char *name = json_string_value(json_object_get(body, "name"));
            if (mb_gc_log_sink_create(gc, name ? name : "", json_string_value(json_object_get(body, "destination")) ?: "",
                                      json_string_value(json_object_get(body, "filter")), &e)) {
                mb_gc__reply_err(r, &e);
                return;
            }
        }
        json_t *l = mb_gc_log_sink_list(gc), *out = json_array(), *made = NULL;
        size_t i;
        json_t *s;
        json_array_foreach(l, i, s) {
            json_array_append_new(out, sink_resource(gc->project, s));
            if (post && !strcmp(json_string_value(json_object_get(s, "name")), json_string_value(json_object_get(body, "name"))))
                made = json_array_get(out, i);
        }
        if (post) mb_gc__reply_json(r, 200, json_incref(made));
        else mb_gc__reply_json(r, 200, json_array_size(out) ? json_pack("{s:O}", "sinks", out) : json_object());
        json_decref(out);
        json_decref(l);
    } else if (n == 2 && mb_gc__seg_is(sg, k, "sinks") && (get || del)) {
        const char *name = mb_gc__seg(sg, k + 1);
        if (del) {
            if (mb_gc_log_sink_delete(gc, name, &e)) not_found(r, "Sink", name);
            else mb_gc__reply_json(r, 200, json_object());
            return;
        }
        json_t *l = mb_gc_log_sink_list(gc), *hit = NULL;
        size_t i;
        json_t *s;
        json_array_foreach(l, i, s) if (!strcmp(json_string_value(json_object_get(s, "name")), name)) hit = s;
        if (hit) mb_gc__reply_json(r, 200, sink_resource(gc->project, hit));
        else not_found(r, "Sink", name);
        json_decref(l);
    } else {
        mb_gc__reply_error(r, 501, "Unsupported: this Cloud Logging call is not served by this emulator");
    }
}

int mb_gc__rest_logging(struct MHD_Connection *c, const char *method, json_t *sg, size_t k, const char *prefix,
                        const mb_buf *raw, mb_gcloud_resolve_fn resolve, void *ctx, mb_gc__reply *r)
{
    if (!mb_gc__seg_is(sg, k, "v2") || !mb_gc__seg(sg, k + 1)) return 0;
    const char *first = mb_gc__seg(sg, k + 1);
    int list = !strcmp(first, "entries:list"), write = !strcmp(first, "entries:write");
    if (!list && !write && strcmp(first, "projects")) return 0;
    json_t *body = raw->len ? json_loadb(raw->data, raw->len, 0, NULL) : json_object();
    char *project = NULL;
    if (!json_is_object(body)) {
        mb_gc__reply_error(r, 400, "Invalid JSON body");
    } else if ((list || write) && strcmp(method, "POST")) {
        mb_gc__reply_error(r, 405, "Method not allowed");
    } else if (list) {
        /* one project: resourceNames ["projects/P"] (projectIds, the old form, too) */
        json_t *rn = json_object_get(body, "resourceNames"), *pids = json_object_get(body, "projectIds");
        if (json_array_size(rn) == 1) project = project_of(json_string_value(json_array_get(rn, 0)));
        else if (!rn && json_array_size(pids) == 1 && json_string_value(json_array_get(pids, 0))) {
            char *full = mb_asprintf("projects/%s", json_string_value(json_array_get(pids, 0)));
            project = project_of(full);
            free(full);
        }
        if (!project)
            mb_gc__reply_error(r, 400, json_array_size(rn) > 1 ? "Unsupported: one resource name per request"
                                                               : "resourceNames must name one project: projects/PROJECT_ID");
    } else if (write) {
        json_t *e0 = json_array_get(json_object_get(body, "entries"), 0);
        project = project_of(json_string_value(json_object_get(e0, "logName")) ?: json_string_value(json_object_get(body, "logName")));
        if (!project) mb_gc__reply_error(r, 400, "logName must be projects/PROJECT_ID/logs/LOG_ID");
    } else {
        const char *p = mb_gc__seg(sg, k + 2);
        char *full = p ? mb_asprintf("projects/%s", p) : NULL;
        project = project_of(full);
        free(full);
        if (!project) mb_gc__reply_error(r, 404, "Not Found");
    }
    if (project) {
        (void)prefix; /* the resource names carry the project */
        char *db = resolve(ctx, project);
        mb_gc *gc = NULL;
        mb_err e = {0};
        if (!db || mb_gc_open(db, project, &gc, &e)) {
            char *m = mb_asprintf("Project '%s' not found or permission denied.", project);
            mb_gc__reply_json(r, 403, json_pack("{s:{s:i,s:s,s:s}}", "error", "code", 403, "message", m, "status",
                                                "PERMISSION_DENIED"));
            free(m);
        } else if (list) list_entries(gc, body, r);
        else if (write) write_entries(gc, body, r);
        else project_paths(gc, c, method, sg, k + 3, body, r);
        mb_gc_close(gc);
        free(db);
    }
    free(project);
    json_decref(body);
    return 1;
}
