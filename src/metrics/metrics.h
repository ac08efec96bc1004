/*
 * metrics.h - the face of the observability layer: Prometheus counters and
 * histograms kept by the daemon (registry.c), the text exposition format
 * they are served in (expo.c), and the per-sandbox log of MCP calls
 * (calllog.c). docs/OBSERVABILITY.md lists every metric.
 *
 * THREADS AND LOCKS
 *   mb_metrics is lock-free: every counter is an atomic updated with relaxed
 *   order; labelled series live in a fixed open-addressing table whose slots
 *   are published once with compare-and-swap and never removed, so a lookup
 *   takes no lock and a scrape reads while calls are counted (a scrape may
 *   see one call counted in its bucket but not yet in its sum: Prometheus
 *   tolerates that; _count is computed from the buckets, so it always equals
 *   the +Inf bucket).
 *   mb_calllog has one mutex (`lock`), a leaf: nothing else is locked or
 *   called while it is held, so callers may hold any lock of their own
 *   (the gateway records calls under a backend's lock). Functions named
 *   *_locked expect it held and assert so.
 *
 * BOUNDED LABELS
 *   server and method labels come from the caller, which passes only names it
 *   already validated (profile server names, mb_metrics_method()); a tool
 *   label is the tool's name only when the server listed that tool in its
 *   tools/list, else "other". Past MB_METRICS_MAX_SERIES labelled series, new
 *   label sets all count in one series labelled "other".
 */
#ifndef MB_METRICS_H
#define MB_METRICS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

#define MB_METRICS_MAX_SERIES 4096

typedef struct mb_metrics mb_metrics;

/* Life-cycle operations timed by the core. */
typedef enum mb_metrics_op {
    MB_METRICS_ACQUIRE = 0,
    MB_METRICS_RELEASE,
    MB_METRICS_INITIALIZE,
    MB_METRICS_DUMP,
    MB_METRICS_RESET,
    MB_METRICS_OP_N
} mb_metrics_op;

typedef enum mb_metrics_bytes {
    MB_METRICS_UPLOAD_BYTES = 0, /* archive bytes PUT to upload URLs */
    MB_METRICS_DUMP_BYTES,       /* dump archives written */
    MB_METRICS_BYTES_N
} mb_metrics_bytes;

/* How an MCP call through the gateway ended. */
typedef enum mb_metrics_outcome {
    MB_METRICS_CALL_OK = 0,
    MB_METRICS_CALL_TOOL_ERROR, /* a tools/call result with isError: true */
    MB_METRICS_CALL_ERROR,      /* a JSON-RPC error from the server */
    MB_METRICS_CALL_FAILED,     /* the gateway answered: timeout, crash, cancel */
} mb_metrics_outcome;

mb_metrics *mb_metrics_new(void);
void mb_metrics_free(mb_metrics *m);

void mb_metrics_op_done(mb_metrics *m, mb_metrics_op op, int64_t micros, int ok);
void mb_metrics_bytes_add(mb_metrics *m, mb_metrics_bytes kind, uint64_t n);
/* A server process was started again after it died or hung. */
void mb_metrics_restart(mb_metrics *m, const char *server);
/* One MCP request answered (server: a validated name; method: as sent,
 * mapped through mb_metrics_method; tool: the label to use, NULL for a
 * method other than tools/call). */
void mb_metrics_call(mb_metrics *m, const char *server, const char *method, const char *tool,
                     int64_t micros, mb_metrics_outcome outcome);
/* The method label of an MCP method name: itself for the methods of the MCP
 * specification, else "other" (static storage). */
const char *mb_metrics_method(const char *method);

/* The last hour, minute by minute (a ring of 60, kept lock-free: a minute's
 * slot is claimed by whoever first writes in it; a call racing that claim
 * at a minute's edge may be counted in either minute). */
void mb_metrics_sandboxes_now(mb_metrics *m, size_t live);
/* {"minutes": [{"t": unix minute start, "calls", "errors", "mean_ms",
 * "p50_ms", "p95_ms", "sandboxes"}], "sandboxes": now}, oldest first, one
 * entry per minute of the last hour (minutes without calls have calls 0;
 * sandboxes carries the last known count forward). */
json_t *mb_metrics_history(mb_metrics *m, double now);

/* Appends every family the registry holds, in the text exposition format
 * (version 0.0.4). */
void mb_metrics_write(mb_metrics *m, mb_buf *out);

/* ---------------------------------------------- exposition (expo.c) */

/* Content-Type of the text format. */
#define MB_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* "# HELP name help\n# TYPE name type\n". */
void mb_expo_family(mb_buf *out, const char *name, const char *type, const char *help);
/* One sample: name{k="v",...} value. labels is k, v, k, v, ..., NULL (may be
 * NULL for none); values are escaped and repaired to valid UTF-8. */
void mb_expo_sample(mb_buf *out, const char *name, const char *const *labels, double value);
void mb_expo_sample_u64(mb_buf *out, const char *name, const char *const *labels,
                        uint64_t value);
/* A label value with \\, \" and \n escaped, repaired to valid UTF-8. */
void mb_expo_label_value(mb_buf *out, const char *s);

/* ------------------------------------------------ call log (calllog.c) */

typedef struct mb_calllog mb_calllog;

/* One MCP request and its answer, as the gateway saw it. */
typedef struct mb_call_record {
    double time;             /* wall clock when the request arrived */
    const char *server;
    const char *method;      /* as sent (bounded, repaired here) */
    const char *tool;        /* tools/call: the name as sent, else NULL */
    size_t arg_bytes;        /* params.arguments (tools/call) or params JSON text */
    size_t result_bytes;     /* result (or error) JSON text */
    int64_t micros;          /* latency */
    mb_metrics_outcome outcome;
    const char *error;       /* why it failed, or NULL */
    const char *request_id;  /* the HTTP request's id, or NULL */
} mb_call_record;

/* per_sandbox: entries kept per sandbox (the oldest are dropped); 0 keeps
 * none (the log is off: add does nothing). */
mb_calllog *mb_calllog_new(size_t per_sandbox);
void mb_calllog_free(mb_calllog *cl);
int mb_calllog_enabled(const mb_calllog *cl);
void mb_calllog_add(mb_calllog *cl, const char *sandbox_id, const mb_call_record *r);
/* Forgets a sandbox's calls (at release). */
void mb_calllog_drop(mb_calllog *cl, const char *sandbox_id);
/* {"calls": [...], "next": SEQ, "dropped": N}: the entries with seq > after,
 * oldest first, at most limit (0 = all kept). next is the seq to pass as
 * `after` to get only newer ones; dropped counts entries the ring lost. */
json_t *mb_calllog_json(mb_calllog *cl, const char *sandbox_id, uint64_t after, size_t limit);
/* The same entries as JSON Lines (one call object per line), for the dump. */
void mb_calllog_jsonl(mb_calllog *cl, const char *sandbox_id, mb_buf *out);

#endif /* MB_METRICS_H */
