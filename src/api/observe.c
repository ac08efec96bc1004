/*
 * observe.c - the observability routes: GET /metrics (Prometheus text),
 * GET /metrics/history (the dashboard's charts), GET
 * /local-sandbox/{id}/calls (the call log), GET /local-sandbox/{id}/stats
 * (resource use) and the signed download of a dumped call log.
 */
#include "api/api_int.h"
#include "metrics/metrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void mb_api__metrics(mb_api *api, mb_call *call)
{
    mb_buf b = {0};
    mb_core_metrics(api->core, call->key.owner, &b);
    mb_http_respond_bytes(call->req, 200, MB_METRICS_CONTENT_TYPE, b.data ? b.data : "", b.len,
                          (const char *const[]){"Cache-Control", "no-store", NULL});
    mb_buf_free(&b);
}

void mb_api__metrics_history(mb_api *api, mb_call *call)
{
    mb_http_respond_json(call->req, 200, mb_core_metrics_history(api->core));
}

/* ?NAME= as a count in 0..max (absent: dflt); a 422 is queued otherwise. */
static int query_count(mb_call *call, const char *name, uint64_t max, uint64_t dflt,
                       uint64_t *out)
{
    const char *v = mb_http_query(call->req, name);
    *out = dflt;
    if (!v) return MB_OK;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-' || n > max) {
        char msg[128];
        mb_text_format(msg, sizeof msg, "Input should be a whole number from 0 to %llu",
                       (unsigned long long)max);
        mb_api__respond_422(call, json_pack("[{s:[s,s], s:s, s:s}]", "loc", "query", name,
                                            "msg", msg, "type", "int_parsing"));
        return MB_EINVAL;
    }
    *out = n;
    return MB_OK;
}

void mb_api__calls(mb_api *api, mb_call *call)
{
    uint64_t after, limit;
    if (query_count(call, "after", UINT64_MAX / 2, 0, &after) ||
        query_count(call, "limit", 100000, 0, &limit))
        return;
    json_t *out = NULL;
    mb_err err;
    if (mb_core_calls(api->core, call->key.owner, call->args[0], after, (size_t)limit, &out,
                      &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    mb_http_respond_json(call->req, 200, out);
}

void mb_api__stats(mb_api *api, mb_call *call)
{
    mb_sandbox_stats st;
    mb_sandbox_rec rec;
    mb_err err;
    if (mb_core_get(api->core, call->key.owner, call->args[0], &rec, &err) != MB_OK ||
        mb_core_sandbox_stats(api->core, call->key.owner, call->args[0], &st, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I}", "memory_bytes",
                          (json_int_t)st.memory_bytes, "memory_peak_bytes",
                          (json_int_t)st.memory_peak_bytes, "memory_limit_bytes",
                          (json_int_t)st.memory_limit_bytes, "pids", (json_int_t)st.pids,
                          "pids_max", (json_int_t)st.pids_max, "cpu_seconds",
                          (double)st.cpu_usage_ns / 1e9, "oom_kills", (json_int_t)st.oom_kills,
                          "workspace_bytes", (json_int_t)st.disk_used_bytes,
                          "workspace_limit_bytes", (json_int_t)st.disk_limit_bytes);
    /* The TTL, for a countdown: expires_at is null when it never expires. */
    json_object_set_new(o, "ttl_seconds",
                        rec.ttl_seconds > 0 ? json_integer(rec.ttl_seconds) : json_null());
    json_object_set_new(o, "expires_at", rec.deadline > 0 ? json_real(rec.deadline) : json_null());
    json_object_set_new(o, "now", json_real(mb_now()));
    mb_http_respond_json(call->req, 200, o);
}

void mb_api__blob_calls(mb_api *api, mb_call *call)
{
    int fd;
    uint64_t size;
    mb_err err;
    if (mb_core_open_calls(api->core, call->args[0], &fd, &size, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    mb_http_respond_fd(call->req, 200, fd, size, "application/jsonl", "calls.jsonl");
}
