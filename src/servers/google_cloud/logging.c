/*
 * logging.c - the logging_* tools of google-cloud-mcp over the project's
 * Cloud Logging (src/gcloud/logging.c), with upstream's texts and quirks:
 * logging_read_logs looks back 24 hours (read_logs' time_range_hours
 * default) and, through an operator-precedence slip upstream, prints
 * "No message" for text entries; logging_export_logs_to_bigquery always
 * fails with the TypeError its keyword arguments raise.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "servers/common/pyschema.h"
#include "servers/google_cloud/gc_srv.h"

static int log_denied(mb_mcp_result *res, const char *name)
{
    return gc_textf(res, "Access denied: Log '%s' is not in allowed log buckets list", name);
}

int gc_t_logging_write_log(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *log = gc_arg(a, "log_name"), *msg = gc_arg(a, "message"), *sev = gc_arg(a, "severity");
    if (!gc_allowed(call, GC_ACL_LOG_BUCKETS, log)) return log_denied(res, log);
    mb_gc *gc = gc_open(call, res, "Error writing log");
    if (!gc) return 0;
    mb_err e = {0};
    json_t *labels = json_pack("{s:s}", "project_id", mb_gc_project(gc));
    if (mb_gc_log_write(gc, log, msg, NULL, sev, 0, "global", labels, NULL, &e))
        gc_textf(res, "Error writing log: 400 %s", e.msg);
    else gc_textf(res, "Successfully wrote log entry to '%s' with severity '%s'", log, sev);
    json_decref(labels);
    mb_gc_close(gc);
    return 0;
}

int gc_t_logging_read_logs(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *filter = gc_arg(a, "log_filter");
    long long max = gc_arg_int(a, "max_entries");
    mb_gc *gc = gc_open(call, res, "Error reading logs");
    if (!gc) return 0;
    /* read_logs(filter, max_results=...) with time_range_hours=24, on the sandbox's clock */
    char since[48];
    mb_gc_isoformat(mb_gc_clock_ms(gc) - 24LL * 3600 * 1000, since);
    since[19] = '\0';
    char *f = *filter ? mb_asprintf("timestamp >= \"%sZ\" AND %s", since, filter)
                      : mb_asprintf("timestamp >= \"%sZ\"", since);
    json_t *entries;
    mb_err e = {0};
    if (mb_gc_log_list(gc, f, max > 0 ? (int)max : 0, &entries, &e)) {
        gc_textf(res, "Error reading logs: 400 %s", e.msg);
    } else {
        json_t *kept = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(entries, i, x) {
            const char *ln = json_string_value(json_object_get(x, "log_name"));
            const char *s = strstr(ln, "/logs/");
            if (gc_allowed(call, GC_ACL_LOG_BUCKETS, s ? s + 6 : ln)) json_array_append(kept, x);
        }
        size_t n = json_array_size(kept);
        if (!n) {
            gc_text(res, "No log entries found matching the filter criteria");
        } else {
            mb_buf b = {0};
            mb_buf_printf(&b, "Found %zu log entries:\n", n);
            for (i = 0; i < n && i < 10; i++) {
                x = json_array_get(kept, i);
                int64_t ms = 0;
                mb_gc_parse_ms(json_string_value(json_object_get(x, "timestamp")), &ms);
                char ts[48];
                mb_gc_isoformat(ms, ts);
                mb_buf_printf(&b, "[%s] %s: ", ts, json_string_value(json_object_get(x, "severity")));
                json_t *jp = json_object_get(x, "json_payload");
                const char *tp = json_string_value(json_object_get(x, "text_payload"));
                if (json_object_size(jp)) {
                    if (tp && *tp) mb_buf_puts(&b, tp);
                    else mb_py_repr_json(&b, jp);
                } else {
                    mb_buf_puts(&b, "No message");
                }
                mb_buf_putc(&b, '\n');
            }
            if (n > 10) mb_buf_printf(&b, "... and %zu more entries", n - 10);
            gc_text(res, b.data);
            mb_buf_free(&b);
        }
        json_decref(kept);
        json_decref(entries);
    }
    free(f);
    mb_gc_close(gc);
    return 0;
}

int gc_t_logging_list_logs(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)a;
    mb_gc *gc = gc_open(call, res, "Error listing logs");
    if (!gc) return 0;
    json_t *names = mb_gc_log_names(gc);
    size_t n = json_array_size(names);
    if (!n) {
        gc_text(res, "No logs found");
    } else {
        mb_buf b = {0};
        mb_buf_printf(&b, "Found %zu logs:\n", n);
        for (size_t i = 0; i < n && i < 20; i++)
            mb_buf_printf(&b, "%s- %s", i ? "\n" : "", json_string_value(json_array_get(names, i)));
        if (n > 20) mb_buf_puts(&b, "...");
        gc_text(res, b.data);
        mb_buf_free(&b);
    }
    json_decref(names);
    mb_gc_close(gc);
    return 0;
}

int gc_t_logging_delete_log(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *log = gc_arg(a, "log_name");
    if (!gc_allowed(call, GC_ACL_LOG_BUCKETS, log)) return log_denied(res, log);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error deleting log '%s'", log);
    if (gc) {
        mb_err e = {0};
        if (mb_gc_log_delete(gc, log, &e)) gc_textf(res, "%s: 404 %s", pre, e.msg);
        else gc_textf(res, "Successfully deleted log '%s'", log);
    }
    return gc_end(gc, pre);
}

int gc_t_logging_create_log_sink(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *name = gc_arg(a, "sink_name"), *dest = gc_arg(a, "destination"), *filter = gc_arg(a, "log_filter");
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error creating log sink '%s'", name);
    if (gc) {
        mb_err e = {0};
        if (mb_gc_log_sink_create(gc, name, dest, filter, &e))
            gc_textf(res, "%s: %d %s", pre, gc_http_code(e.code), e.msg);
        else gc_textf(res, "Successfully created log sink '%s' to destination '%s'", name, dest);
    }
    return gc_end(gc, pre);
}

int gc_t_logging_list_log_sinks(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)a;
    mb_gc *gc = gc_open(call, res, "Error listing log sinks");
    if (!gc) return 0;
    json_t *l = mb_gc_log_sink_list(gc);
    size_t n = json_array_size(l);
    if (!n) {
        gc_text(res, "No log sinks found");
    } else {
        mb_buf b = {0};
        mb_buf_printf(&b, "Found %zu log sinks:\n", n);
        size_t i;
        json_t *s;
        json_array_foreach(l, i, s) {
            const char *f = json_string_value(json_object_get(s, "filter"));
            mb_buf_printf(&b, "- %s\n  Destination: %s\n  Filter: %s\n", json_string_value(json_object_get(s, "name")),
                          json_string_value(json_object_get(s, "destination")) ?: "", f ? f : "");
        }
        gc_text(res, b.data);
        mb_buf_free(&b);
    }
    json_decref(l);
    mb_gc_close(gc);
    return 0;
}

int gc_t_logging_delete_log_sink(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *name = gc_arg(a, "sink_name");
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error deleting log sink '%s'", name);
    if (gc) {
        mb_err e = {0};
        if (mb_gc_log_sink_delete(gc, name, &e)) gc_textf(res, "%s: 404 %s", pre, e.msg);
        else gc_textf(res, "Successfully deleted log sink '%s'", name);
    }
    return gc_end(gc, pre);
}

int gc_t_logging_export_logs_to_bigquery(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *ds = gc_arg(a, "dataset_id");
    if (!gc_allowed(call, GC_ACL_DATASETS, ds))
        return gc_textf(res, "Access denied: Dataset '%s' is not in allowed datasets list", ds);
    /* upstream passes table_id= to a method that has no such parameter */
    return gc_text(res, "Error exporting logs to BigQuery: CloudLoggingManager.export_logs_to_bigquery() got "
                        "an unexpected keyword argument 'table_id'");
}

int gc_t_logging_create_log_bucket(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *id = gc_arg(a, "bucket_id");
    long long days = gc_arg_int(a, "retention_days");
    if (!gc_allowed(call, GC_ACL_LOG_BUCKETS, id))
        return gc_textf(res, "Access denied: Log bucket '%s' is not in allowed log buckets list", id);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error creating log bucket '%s'", id);
    if (gc) {
        mb_err e = {0};
        char *desc = mb_asprintf("Custom log bucket: %s", id);
        if (mb_gc_log_bucket_create(gc, id, "global", days > 0 && days < 100000 ? (int)days : 0, desc, &e))
            gc_textf(res, "%s: %d %s", pre, gc_http_code(e.code), e.msg);
        else gc_textf(res, "Successfully created log bucket '%s' with %lld days retention", id, days);
        free(desc);
    }
    return gc_end(gc, pre);
}
