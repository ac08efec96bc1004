/*
 * calllog.c - the per-sandbox log of MCP calls: a ring of the last N calls
 * of every sandbox (method, tool, sizes, latency, outcome, error), served by
 * GET /local-sandbox/{id}/calls and written beside a dump on request.
 *
 * One mutex guards the table and every ring (a leaf lock, see metrics.h).
 * Entries are fixed-size copies made outside the lock, so the critical
 * section is a hash lookup and one memcpy.
 */
#include "metrics/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 256

typedef struct entry {
    uint64_t seq;
    double time;
    char server[40];
    char method[48];
    char tool[132];
    char request_id[48];
    char error[240];
    uint64_t arg_bytes, result_bytes;
    int64_t micros;
    int outcome;
} entry;

typedef struct ring {
    struct ring *next;
    char id[40];
    entry *e;         /* alloc entries: grown (doubling) up to cap as calls come */
    size_t alloc;
    size_t head, len; /* the oldest is e[head]; head stays 0 until len == cap */
    uint64_t next_seq;
    uint64_t dropped;
} ring;

struct mb_calllog {
    size_t cap;
    pthread_mutex_t lock;
    ring *buckets[BUCKETS];
};

mb_calllog *mb_calllog_new(size_t per_sandbox)
{
    mb_calllog *cl = mb_calloc(1, sizeof *cl);
    cl->cap = per_sandbox;
    pthread_mutex_init(&cl->lock, NULL);
    return cl;
}

void mb_calllog_free(mb_calllog *cl)
{
    if (!cl) return;
    for (size_t i = 0; i < BUCKETS; i++) {
        for (ring *r = cl->buckets[i], *next; r; r = next) {
            next = r->next;
            free(r->e);
            free(r);
        }
    }
    pthread_mutex_destroy(&cl->lock);
    free(cl);
}

int mb_calllog_enabled(const mb_calllog *cl) { return cl && cl->cap > 0; }

static ring **find_locked(mb_calllog *cl, const char *id)
{
    mb_assert_held(&cl->lock);
    ring **pp = &cl->buckets[mb_hash_str(id) % BUCKETS];
    while (*pp && strcmp((*pp)->id, id)) pp = &(*pp)->next;
    return pp;
}

static void copy(char *dst, size_t cap, const char *s)
{
    mb_utf8_copy(dst, cap, s ? s : "", s ? strlen(s) : 0);
}

void mb_calllog_add(mb_calllog *cl, const char *sandbox_id, const mb_call_record *r)
{
    if (!mb_calllog_enabled(cl) || !sandbox_id || strlen(sandbox_id) >= 40) return;
    entry e;
    memset(&e, 0, sizeof e);
    e.time = r->time;
    copy(e.server, sizeof e.server, r->server);
    copy(e.method, sizeof e.method, r->method);
    copy(e.tool, sizeof e.tool, r->tool);
    copy(e.request_id, sizeof e.request_id, r->request_id);
    copy(e.error, sizeof e.error, r->error);
    e.arg_bytes = r->arg_bytes;
    e.result_bytes = r->result_bytes;
    e.micros = r->micros;
    e.outcome = (int)r->outcome;
    pthread_mutex_lock(&cl->lock);
    ring **pp = find_locked(cl, sandbox_id);
    if (!*pp) {
        ring *n = mb_calloc(1, sizeof *n);
        snprintf(n->id, sizeof n->id, "%s", sandbox_id);
        *pp = n;
    }
    ring *g = *pp;
    e.seq = ++g->next_seq;
    if (g->len == g->alloc && g->alloc < cl->cap) {
        g->alloc = g->alloc ? g->alloc * 2 : 16;
        if (g->alloc > cl->cap) g->alloc = cl->cap;
        g->e = mb_realloc(g->e, g->alloc * sizeof *g->e);
    }
    if (g->len < cl->cap) {
        g->e[(g->head + g->len) % cl->cap] = e;
        g->len++;
    } else {
        g->e[g->head] = e;
        g->head = (g->head + 1) % cl->cap;
        g->dropped++;
    }
    pthread_mutex_unlock(&cl->lock);
}

void mb_calllog_drop(mb_calllog *cl, const char *sandbox_id)
{
    if (!cl || !sandbox_id) return;
    pthread_mutex_lock(&cl->lock);
    ring **pp = find_locked(cl, sandbox_id);
    ring *g = *pp;
    if (g) *pp = g->next;
    pthread_mutex_unlock(&cl->lock);
    if (g) {
        free(g->e);
        free(g);
    }
}

/* Copies the entries with seq > after (at most limit, the newest ones) out
 * of the ring. */
static entry *snapshot(mb_calllog *cl, const char *sandbox_id, uint64_t after, size_t limit,
                       size_t *n, uint64_t *next, uint64_t *dropped)
{
    *n = 0;
    *next = after;
    *dropped = 0;
    if (!cl || !sandbox_id) return NULL;
    entry *v = NULL;
    pthread_mutex_lock(&cl->lock);
    ring *g = *find_locked(cl, sandbox_id);
    if (g && g->len) {
        size_t first = 0; /* index in ring order of the first seq > after */
        while (first < g->len && g->e[(g->head + first) % cl->cap].seq <= after) first++;
        size_t k = g->len - first;
        if (limit && k > limit) {
            first += k - limit;
            k = limit;
        }
        v = mb_malloc((k ? k : 1) * sizeof *v);
        for (size_t i = 0; i < k; i++) v[i] = g->e[(g->head + first + i) % cl->cap];
        *n = k;
        *next = g->next_seq > after ? g->next_seq : after;
        *dropped = g->dropped;
    }
    pthread_mutex_unlock(&cl->lock);
    return v;
}

static json_t *entry_json(const entry *e)
{
    static const char *const outcomes[] = {"ok", "tool_error", "error", "failed"};
    char when[40];
    mb_iso8601(e->time, when);
    json_t *o = json_object();
    json_object_set_new(o, "seq", json_integer((json_int_t)e->seq));
    json_object_set_new(o, "time", json_string(when));
    json_object_set_new(o, "server", json_string(e->server));
    json_object_set_new(o, "method", json_string(e->method));
    json_object_set_new(o, "tool", e->tool[0] ? json_string(e->tool) : json_null());
    json_object_set_new(o, "arguments_bytes", json_integer((json_int_t)e->arg_bytes));
    json_object_set_new(o, "result_bytes", json_integer((json_int_t)e->result_bytes));
    json_object_set_new(o, "latency_ms", json_real((double)e->micros / 1000.0));
    json_object_set_new(o, "outcome", json_string(outcomes[e->outcome & 3]));
    json_object_set_new(o, "error", e->error[0] ? json_string(e->error) : json_null());
    json_object_set_new(o, "request_id", e->request_id[0] ? json_string(e->request_id) : json_null());
    return o;
}

json_t *mb_calllog_json(mb_calllog *cl, const char *sandbox_id, uint64_t after, size_t limit)
{
    size_t n;
    uint64_t next, dropped;
    entry *v = snapshot(cl, sandbox_id, after, limit, &n, &next, &dropped);
    json_t *calls = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(calls, entry_json(&v[i]));
    free(v);
    return json_pack("{s:o, s:I, s:I, s:b}", "calls", calls, "next", (json_int_t)next,
                     "dropped", (json_int_t)dropped, "enabled", mb_calllog_enabled(cl));
}

void mb_calllog_jsonl(mb_calllog *cl, const char *sandbox_id, mb_buf *out)
{
    size_t n;
    uint64_t next, dropped;
    entry *v = snapshot(cl, sandbox_id, 0, 0, &n, &next, &dropped);
    for (size_t i = 0; i < n; i++) {
        json_t *o = entry_json(&v[i]);
        char *t = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (t) {
            mb_buf_puts(out, t);
            mb_buf_putc(out, '\n');
            free(t);
        }
    }
    free(v);
}
