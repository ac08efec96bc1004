/*
 * registry.c - the daemon's counters and histograms: life-cycle operations,
 * transfer bytes, MCP calls by (server, method, tool), server restarts.
 * Lock-free (see metrics.h): atomics, and a table of labelled series whose
 * slots are filled once by compare-and-swap and never emptied.
 */
#include "metrics/metrics.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 8192 /* a power of two, twice MB_METRICS_MAX_SERIES */

static const double call_bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                     0.25,   0.5,   1,      2.5,   5,    10,    30,   60, 120};
static const double op_bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                   2.5,   5,    10,    30,   60,  120,  300};
#define CALL_NB (sizeof call_bounds / sizeof call_bounds[0])
#define OP_NB (sizeof op_bounds / sizeof op_bounds[0])
#define MAX_NB CALL_NB

/* Non-cumulative bucket counts (the last one past every bound) and the sum
 * in microseconds. */
typedef struct hist {
    _Atomic uint64_t n[MAX_NB + 1];
    _Atomic uint64_t sum_us;
} hist;

/* One labelled series: labels fixed before it is published. */
typedef struct cell {
    uint64_t hash;
    char *label[3];
    hist h;
    _Atomic uint64_t outcome[4]; /* by mb_metrics_outcome */
    _Atomic uint64_t count;      /* restarts */
} cell;

typedef struct table {
    _Atomic(cell *) slots[SLOTS];
    atomic_size_t n;
    cell *other; /* past MB_METRICS_MAX_SERIES */
} table;

/* One minute of the last hour. */
typedef struct minute {
    _Atomic int64_t tag; /* unix minute this slot holds, 0 = never used */
    hist h;
    _Atomic uint64_t errors;
    _Atomic int64_t sandboxes; /* last count seen in that minute, -1 = none */
} minute;

struct mb_metrics {
    minute hour[60];
    _Atomic int64_t sandboxes_now;
    hist op[MB_METRICS_OP_N];
    _Atomic uint64_t op_errors[MB_METRICS_OP_N];
    _Atomic uint64_t bytes[MB_METRICS_BYTES_N];
    table calls, restarts;
};

static const char *const op_names[MB_METRICS_OP_N] = {"acquire", "release", "initialize",
                                                      "dump", "reset"};
static const char *const outcome_names[4] = {"ok", "tool_error", "error", "failed"};

static cell *cell_new(uint64_t hash, const char *a, const char *b, const char *c)
{
    cell *x = mb_calloc(1, sizeof *x);
    x->hash = hash;
    x->label[0] = mb_strdup(a);
    x->label[1] = mb_strdup(b);
    x->label[2] = mb_strdup(c);
    return x;
}

static void cell_free(cell *x)
{
    if (!x) return;
    for (int i = 0; i < 3; i++) free(x->label[i]);
    free(x);
}

static uint64_t key_hash(const char *a, const char *b, const char *c)
{
    uint64_t h = mb_hash_str(a);
    h = (h ^ mb_hash_str(b)) * 0x100000001b3ULL;
    return (h ^ mb_hash_str(c)) * 0x100000001b3ULL;
}

static int cell_is(const cell *x, uint64_t h, const char *a, const char *b, const char *c)
{
    return x->hash == h && !strcmp(x->label[0], a) && !strcmp(x->label[1], b) &&
           !strcmp(x->label[2], c);
}

/* The series of (a, b, c), made on first use without a lock. */
static cell *table_get(table *t, const char *a, const char *b, const char *c)
{
    uint64_t h = key_hash(a, b, c);
    size_t i = (size_t)h & (SLOTS - 1);
    for (size_t probe = 0; probe < SLOTS; probe++, i = (i + 1) & (SLOTS - 1)) {
        cell *x = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!x) {
            if (atomic_load_explicit(&t->n, memory_order_relaxed) >= MB_METRICS_MAX_SERIES)
                return t->other;
            cell *mine = cell_new(h, a, b, c);
            cell *expected = NULL;
            if (atomic_compare_exchange_strong_explicit(&t->slots[i], &expected, mine,
                                                        memory_order_acq_rel,
                                                        memory_order_acquire)) {
                atomic_fetch_add_explicit(&t->n, 1, memory_order_relaxed);
                return mine;
            }
            cell_free(mine); /* another thread filled the slot first */
            x = expected;
        }
        if (cell_is(x, h, a, b, c)) return x;
    }
    return t->other;
}

static void table_init(table *t, int labels)
{
    t->other = cell_new(0, "other", labels > 1 ? "other" : "", labels > 2 ? "other" : "");
}

static void table_free(table *t)
{
    for (size_t i = 0; i < SLOTS; i++) cell_free(atomic_load(&t->slots[i]));
    cell_free(t->other);
}

mb_metrics *mb_metrics_new(void)
{
    mb_metrics *m = mb_calloc(1, sizeof *m);
    for (int i = 0; i < 60; i++) atomic_store(&m->hour[i].sandboxes, -1);
    atomic_store(&m->sandboxes_now, -1);
    table_init(&m->calls, 3);
    table_init(&m->restarts, 1);
    return m;
}

void mb_metrics_free(mb_metrics *m)
{
    if (!m) return;
    table_free(&m->calls);
    table_free(&m->restarts);
    free(m);
}

static void hist_add(hist *h, const double *bounds, size_t nb, int64_t micros)
{
    if (micros < 0) micros = 0;
    double s = (double)micros / 1e6;
    size_t i = 0;
    while (i < nb && s > bounds[i]) i++;
    atomic_fetch_add_explicit(&h->n[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, (uint64_t)micros, memory_order_relaxed);
}

void mb_metrics_op_done(mb_metrics *m, mb_metrics_op op, int64_t micros, int ok)
{
    if (!m || op < 0 || op >= MB_METRICS_OP_N) return;
    hist_add(&m->op[op], op_bounds, OP_NB, micros);
    if (!ok) atomic_fetch_add_explicit(&m->op_errors[op], 1, memory_order_relaxed);
}

void mb_metrics_bytes_add(mb_metrics *m, mb_metrics_bytes kind, uint64_t n)
{
    if (!m || kind < 0 || kind >= MB_METRICS_BYTES_N) return;
    atomic_fetch_add_explicit(&m->bytes[kind], n, memory_order_relaxed);
}

void mb_metrics_restart(mb_metrics *m, const char *server)
{
    if (!m) return;
    cell *x = table_get(&m->restarts, server ? server : "", "", "");
    atomic_fetch_add_explicit(&x->count, 1, memory_order_relaxed);
}

const char *mb_metrics_method(const char *method)
{
    static const char *const known[] = {
        "initialize", "ping", "tools/list", "tools/call", "resources/list",
        "resources/templates/list", "resources/read", "resources/subscribe",
        "resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete",
        "logging/setLevel", "tasks/get", "tasks/list", "tasks/result", "tasks/cancel", NULL};
    for (size_t i = 0; method && known[i]; i++)
        if (!strcmp(method, known[i])) return known[i];
    return "other";
}

/* The slot of the current minute, emptied first if it held an older one. */
static minute *this_minute(mb_metrics *m)
{
    int64_t now = (int64_t)mb_now() / 60;
    minute *x = &m->hour[now % 60];
    int64_t tag = atomic_load_explicit(&x->tag, memory_order_acquire);
    if (tag != now && atomic_compare_exchange_strong(&x->tag, &tag, now)) {
        for (size_t i = 0; i <= MAX_NB; i++) atomic_store_explicit(&x->h.n[i], 0, memory_order_relaxed);
        atomic_store_explicit(&x->h.sum_us, 0, memory_order_relaxed);
        atomic_store_explicit(&x->errors, 0, memory_order_relaxed);
        atomic_store_explicit(&x->sandboxes, -1, memory_order_relaxed);
    }
    return x;
}

void mb_metrics_sandboxes_now(mb_metrics *m, size_t live)
{
    if (!m) return;
    atomic_store(&m->sandboxes_now, (int64_t)live);
    atomic_store(&this_minute(m)->sandboxes, (int64_t)live);
}

static double quantile_ms(const uint64_t *n, uint64_t total, double q)
{
    if (!total) return 0;
    uint64_t want = (uint64_t)(q * (double)total + 0.5), cum = 0;
    if (want < 1) want = 1;
    for (size_t i = 0; i <= CALL_NB; i++) {
        cum += n[i];
        if (cum >= want) return (i < CALL_NB ? call_bounds[i] : call_bounds[CALL_NB - 1] * 2) * 1000;
    }
    return call_bounds[CALL_NB - 1] * 2000;
}

json_t *mb_metrics_history(mb_metrics *m, double now_s)
{
    int64_t now = (int64_t)now_s / 60;
    json_t *arr = json_array();
    int64_t carry = -1;
    for (int64_t t = now - 59; t <= now; t++) {
        minute *x = &m->hour[t % 60];
        uint64_t n[MAX_NB + 1] = {0}, total = 0, sum = 0, errors = 0;
        int64_t sb = -1;
        if (atomic_load(&x->tag) == t) {
            for (size_t i = 0; i <= CALL_NB; i++) total += n[i] = atomic_load(&x->h.n[i]);
            sum = atomic_load(&x->h.sum_us);
            errors = atomic_load(&x->errors);
            sb = atomic_load(&x->sandboxes);
        }
        if (sb >= 0) carry = sb;
        json_t *o = json_pack("{s:I, s:I, s:I, s:f, s:f, s:f}", "t", (json_int_t)(t * 60),
                              "calls", (json_int_t)total, "errors", (json_int_t)errors,
                              "mean_ms", total ? (double)sum / (double)total / 1000.0 : 0.0,
                              "p50_ms", quantile_ms(n, total, 0.5), "p95_ms",
                              quantile_ms(n, total, 0.95));
        json_object_set_new(o, "sandboxes", carry >= 0 ? json_integer(carry) : json_null());
        json_array_append_new(arr, o);
    }
    int64_t cur = atomic_load(&m->sandboxes_now);
    if (carry < 0 && cur >= 0) {
        /* no acquire or release all hour: the count never changed */
        size_t i;
        json_t *o;
        json_array_foreach(arr, i, o) json_object_set_new(o, "sandboxes", json_integer(cur));
    }
    return json_pack("{s:o, s:o}", "minutes", arr, "sandboxes",
                     cur >= 0 ? json_integer(cur) : json_null());
}

void mb_metrics_call(mb_metrics *m, const char *server, const char *method, const char *tool,
                     int64_t micros, mb_metrics_outcome outcome)
{
    if (!m) return;
    minute *mn = this_minute(m);
    hist_add(&mn->h, call_bounds, CALL_NB, micros);
    if (outcome != MB_METRICS_CALL_OK) atomic_fetch_add_explicit(&mn->errors, 1, memory_order_relaxed);
    cell *x = table_get(&m->calls, server ? server : "", mb_metrics_method(method),
                        tool ? tool : "");
    hist_add(&x->h, call_bounds, CALL_NB, micros);
    if ((unsigned)outcome < 4) atomic_fetch_add_explicit(&x->outcome[outcome], 1, memory_order_relaxed);
}

/* ------------------------------------------------------------- writing */

static void write_hist(mb_buf *out, const char *name, const char *const *labels, size_t nl,
                       const hist *h, const double *bounds, size_t nb)
{
    const char *lab[12];
    memcpy(lab, labels, nl * sizeof *lab);
    char bucket[160], le[32];
    snprintf(bucket, sizeof bucket, "%s_bucket", name);
    uint64_t cum = 0;
    for (size_t i = 0; i <= nb; i++) {
        cum += atomic_load_explicit(&h->n[i], memory_order_relaxed);
        if (i < nb) snprintf(le, sizeof le, "%g", bounds[i]);
        else snprintf(le, sizeof le, "+Inf");
        lab[nl] = "le";
        lab[nl + 1] = le;
        lab[nl + 2] = NULL;
        mb_expo_sample_u64(out, bucket, lab, cum);
    }
    lab[nl] = NULL;
    char sub[160];
    snprintf(sub, sizeof sub, "%s_sum", name);
    mb_expo_sample(out, sub, lab, (double)atomic_load_explicit(&h->sum_us, memory_order_relaxed) / 1e6);
    snprintf(sub, sizeof sub, "%s_count", name);
    mb_expo_sample_u64(out, sub, lab, cum);
}

static int cell_cmp(const void *pa, const void *pb)
{
    const cell *a = *(const cell *const *)pa, *b = *(const cell *const *)pb;
    for (int i = 0; i < 3; i++) {
        int c = strcmp(a->label[i], b->label[i]);
        if (c) return c;
    }
    return 0;
}

/* The published series, sorted by labels, plus `other` if it counted. */
static cell **table_cells(table *t, size_t *n)
{
    cell **v = mb_malloc((SLOTS + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < SLOTS; i++) {
        cell *x = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (x) v[k++] = x;
    }
    qsort(v, k, sizeof *v, cell_cmp);
    int other_used = atomic_load(&t->other->count) != 0;
    for (size_t i = 0; i <= MAX_NB; i++) other_used |= atomic_load(&t->other->h.n[i]) != 0;
    if (other_used) v[k++] = t->other;
    *n = k;
    return v;
}

void mb_metrics_write(mb_metrics *m, mb_buf *out)
{
    mb_expo_family(out, "mcpbox_operation_duration_seconds", "histogram",
                   "Time taken by sandbox life-cycle operations (failed ones included).");
    for (int i = 0; i < MB_METRICS_OP_N; i++) {
        const char *lab[] = {"op", op_names[i], NULL};
        write_hist(out, "mcpbox_operation_duration_seconds", lab, 2, &m->op[i], op_bounds,
                   OP_NB);
    }
    mb_expo_family(out, "mcpbox_operation_errors_total", "counter",
                   "Sandbox life-cycle operations that failed.");
    for (int i = 0; i < MB_METRICS_OP_N; i++) {
        const char *lab[] = {"op", op_names[i], NULL};
        mb_expo_sample_u64(out, "mcpbox_operation_errors_total", lab,
                           atomic_load_explicit(&m->op_errors[i], memory_order_relaxed));
    }
    mb_expo_family(out, "mcpbox_upload_bytes_total", "counter",
                   "Archive bytes received on upload URLs.");
    mb_expo_sample_u64(out, "mcpbox_upload_bytes_total", NULL,
                       atomic_load(&m->bytes[MB_METRICS_UPLOAD_BYTES]));
    mb_expo_family(out, "mcpbox_dump_bytes_total", "counter", "Dump archive bytes written.");
    mb_expo_sample_u64(out, "mcpbox_dump_bytes_total", NULL,
                       atomic_load(&m->bytes[MB_METRICS_DUMP_BYTES]));

    size_t n;
    cell **v = table_cells(&m->calls, &n);
    mb_expo_family(out, "mcpbox_mcp_call_duration_seconds", "histogram",
                   "MCP requests through the gateway, from the request to its answer.");
    for (size_t i = 0; i < n; i++) {
        const char *lab[] = {"server", v[i]->label[0], "method", v[i]->label[1],
                             "tool", v[i]->label[2], NULL};
        write_hist(out, "mcpbox_mcp_call_duration_seconds", lab, 6, &v[i]->h, call_bounds,
                   CALL_NB);
    }
    mb_expo_family(out, "mcpbox_mcp_calls_total", "counter",
                   "MCP requests answered, by outcome (ok, tool_error: a tool result with "
                   "isError, error: a JSON-RPC error, failed: answered by the gateway).");
    for (size_t i = 0; i < n; i++) {
        for (int o = 0; o < 4; o++) {
            const char *lab[] = {"server", v[i]->label[0], "method", v[i]->label[1], "tool",
                                 v[i]->label[2], "outcome", outcome_names[o], NULL};
            mb_expo_sample_u64(out, "mcpbox_mcp_calls_total", lab,
                               atomic_load_explicit(&v[i]->outcome[o], memory_order_relaxed));
        }
    }
    mb_expo_family(out, "mcpbox_mcp_call_errors_total", "counter",
                   "MCP requests that did not end well (every outcome but ok).");
    for (size_t i = 0; i < n; i++) {
        const char *lab[] = {"server", v[i]->label[0], "method", v[i]->label[1],
                             "tool", v[i]->label[2], NULL};
        uint64_t e = 0;
        for (int o = 1; o < 4; o++) e += atomic_load_explicit(&v[i]->outcome[o], memory_order_relaxed);
        mb_expo_sample_u64(out, "mcpbox_mcp_call_errors_total", lab, e);
    }
    free(v);

    v = table_cells(&m->restarts, &n);
    mb_expo_family(out, "mcpbox_server_restarts_total", "counter",
                   "MCP server processes started again after they died or hung.");
    for (size_t i = 0; i < n; i++) {
        const char *lab[] = {"server", v[i]->label[0], NULL};
        mb_expo_sample_u64(out, "mcpbox_server_restarts_total", lab,
                           atomic_load_explicit(&v[i]->count, memory_order_relaxed));
    }
    free(v);
}
