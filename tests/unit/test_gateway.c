/*
 * test_gateway.c - unit tests for the MCP gateway: the hash table, stdout
 * framing, text splicing, id rewriting between sessions and the server,
 * session bookkeeping, timeouts, a dying server, and routing through a real
 * libmicrohttpd daemon.
 *
 * Most tests play the server themselves: a fake spawn callback hands the
 * gateway two pipes whose other ends the test holds, so every byte the
 * gateway writes upstream can be read and checked, and every answer is
 * written by hand. The routing test runs the Python mock server instead.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gateway/gateway_int.h"
#include "mcp/mcp.h"

/* ------------------------------------------------------------ the table */

typedef struct item {
    mb_gw_hnode node;
    int v;
} item;

static void test_table(void **state)
{
    (void)state;
    mb_gw_table t;
    mb_gw__table_init(&t);
    item *items = calloc(1000, sizeof *items);
    for (int i = 0; i < 1000; i++) {
        items[i].v = i;
        mb_gw__table_insert(&t, &items[i].node, (uint64_t)(i % 500)); /* two per key */
    }
    assert_int_equal(t.count, 1000);
    int seen = 0;
    for (mb_gw_hnode *n = mb_gw__table_find(&t, 7); n; n = mb_gw__table_next(n)) {
        item *it = MB_GW_CONTAINER(n, item, node);
        assert_int_equal(it->v % 500, 7);
        seen++;
    }
    assert_int_equal(seen, 2);
    mb_gw__table_remove(&t, &items[7].node);
    assert_ptr_equal(mb_gw__table_find(&t, 7), &items[507].node);
    assert_null(mb_gw__table_next(&items[507].node));
    size_t cur = 0, visited = 0;
    while (mb_gw__table_at(&t, &cur)) visited++;
    assert_int_equal(visited, 999);
    assert_null(mb_gw__table_find(&t, 100000));
    mb_gw__table_dispose(&t);
    free(items);
    assert_int_not_equal(mb_hash_str("a"), mb_hash_str("b"));
}

/* ---------------------------------------------------------------- framing */

typedef struct lines {
    char got[16][64];
    int n;
    size_t over_len;
    int64_t over_id;
    int over_known;
} lines;

static void on_line(void *p, const char *line, size_t len)
{
    lines *l = p;
    assert_true(l->n < 16);
    snprintf(l->got[l->n++], 64, "%.*s", (int)len, line);
}

static void on_over(void *p, size_t len, const char *h, size_t hl, const char *t, size_t tl)
{
    lines *l = p;
    l->over_len = len;
    l->over_known = mb_gw__guess_id(h, hl, t, tl, &l->over_id);
}

static void test_framing(void **state)
{
    (void)state;
    lines l = {0};
    mb_gw_framer_cb cb = {on_line, on_over, &l};
    mb_gw_framer f;
    mb_gw__framer_init(&f, 100);
    /* split across reads, \r\n, blank lines, several lines per read */
    const char *parts[] = {"{\"a\":", "1}\r\n\n  \r\n{\"b\":2}\n{\"c\"", ":3}\n"};
    for (int i = 0; i < 3; i++) mb_gw__framer_feed(&f, parts[i], strlen(parts[i]), &cb);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.got[0], "{\"a\":1}");
    assert_string_equal(l.got[1], "{\"b\":2}");
    assert_string_equal(l.got[2], "{\"c\":3}");
    /* an over-long line is skipped, its id guessed from its tail, and the
     * next line is intact */
    char big[400];
    memset(big, 'x', sizeof big);
    memcpy(big, "{\"result\":\"", 11);
    const char *end = "\",\"jsonrpc\":\"2.0\",\"id\":42}\n{\"d\":4}\n";
    mb_gw__framer_feed(&f, big, sizeof big, &cb);
    mb_gw__framer_feed(&f, end, strlen(end), &cb);
    assert_int_equal(l.over_len, sizeof big + strlen(end) - 9);
    assert_true(l.over_known);
    assert_int_equal(l.over_id, 42);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.got[3], "{\"d\":4}");
    mb_gw__framer_dispose(&f);
}

static void test_guess_id(void **state)
{
    (void)state;
    int64_t id = 0;
    const char *h = "{\"jsonrpc\":\"2.0\",\"id\":17,\"result\":{\"con";
    assert_true(mb_gw__guess_id(h, strlen(h), "", 0, &id));
    assert_int_equal(id, 17);
    h = "  { \"id\" : -3 , \"result\"";
    assert_true(mb_gw__guess_id(h, strlen(h), "", 0, &id));
    assert_int_equal(id, -3);
    const char *t = "aaa\"}]},\"jsonrpc\":\"2.0\",\"id\":99}";
    assert_true(mb_gw__guess_id("{\"result", 8, t, strlen(t), &id));
    assert_int_equal(id, 99);
    /* an id nested inside the result is not the message's */
    t = "\"id\":5}}";
    assert_false(mb_gw__guess_id("{\"result\":", 10, t, strlen(t), &id));
    assert_false(mb_gw__guess_id("{\"result\":{\"id\":1", 17, "", 0, &id));
    assert_false(mb_gw__guess_id("garbage", 7, "more", 4, &id));
}

/* ------------------------------------------------------------- splicing */

static void test_scan_splice(void **state)
{
    (void)state;
    const char *keys[] = {"id", "method", "params"};
    mb_gw_span sp[3];
    const char *m = "{ \"params\": {\"s\":\"a\\\"}{[\", \"id\":[1,{\"id\":2}]} , "
                    "\"method\":\"x\", \"id\" : \"abc\" }";
    assert_int_equal(mb_gw__scan(m, strlen(m), keys, 3, sp), 3);
    assert_int_equal(sp[0].len, 5);
    assert_memory_equal(m + sp[0].off, "\"abc\"", 5);
    assert_memory_equal(m + sp[1].off, "\"x\"", 3);
    assert_memory_equal(m + sp[2].off, "{\"s\":", 5);
    size_t n;
    char *out = mb_gw__splice(m, strlen(m), sp[0], "12", 2, &n);
    assert_int_equal(n, strlen(m) - 3);
    json_error_t e;
    json_t *j = json_loads(out, 0, &e);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "id")), 12);
    json_decref(j);
    free(out);
    /* numbers survive verbatim */
    const char *num = "{\"id\":3,\"result\":{\"a\":0.1,\"b\":123456789012345678901234567890}}";
    assert_int_equal(mb_gw__scan(num, strlen(num), keys, 3, sp), 2);
    out = mb_gw__splice(num, strlen(num), sp[0], "\"q\"", 3, &n);
    assert_string_equal(out, "{\"id\":\"q\",\"result\":{\"a\":0.1,\"b\":123456789012345678901234567890}}");
    free(out);
    /* broken structure */
    assert_int_equal(mb_gw__scan("{\"a\":1", 6, keys, 3, sp), -1);
    assert_int_equal(mb_gw__scan("{\"a\":1} x", 9, keys, 3, sp), -1);
    assert_int_equal(mb_gw__scan("[1]", 3, keys, 3, sp), -1);
    assert_int_equal(mb_gw__scan("{\"a\":\"unterminated}", 19, keys, 3, sp), -1);
    assert_int_equal(mb_gw__scan("{}", 2, keys, 3, sp), 0);
    assert_int_equal(sp[0].len, 0);
}

/* Forwarded headers: params._meta["mcpbox/headers"] set, the client's own
 * value gone, every other byte as sent where the scanner can place it. */
static char *apply(const char *raw, const char *hdrs)
{
    json_error_t e;
    json_t *j = json_loads(raw, 0, &e);
    if (!j) j = json_loads(raw, JSON_DECODE_INT_AS_REAL, &e); /* as the gateway reads it */
    assert_non_null(j);
    size_t n = 0;
    char *t = mb_gw__headers_apply(raw, strlen(raw), j, hdrs, &n);
    json_decref(j);
    if (t) assert_int_equal(n, strlen(t));
    return t;
}

static void check_headers(const char *t, const char *want_value)
{
    json_error_t e;
    json_t *j = json_loads(t, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &e);
    assert_non_null(j); /* one params, one _meta, one key: no duplicate anywhere */
    json_t *h = json_object_get(json_object_get(json_object_get(j, "params"), "_meta"),
                                MB_GW_META_HEADERS);
    assert_true(json_is_object(h));
    const char *v = json_string_value(json_object_get(h, "x-email-config"));
    if (want_value) assert_string_equal(v, want_value);
    else assert_null(v);
    json_decref(j);
}

static void test_forwarded_headers(void **state)
{
    (void)state;
    assert_string_equal(MB_GW_META_HEADERS, MB_MCP_META_HEADERS);
    const char *hdr = "{\"x-email-config\":\"real\"}";
    /* kept byte for byte: numbers jansson would print otherwise, key order */
    char *t = apply("{\"jsonrpc\":\"2.0\",\"id\":1, \"method\":\"tools/call\",\"params\":{\"name\":"
                    "\"a\",\"arguments\":{\"x\":0.1,\"big\":123456789012345678901234567890},"
                    "\"_meta\":{\"progressToken\":0.5,\"mcpbox/headers\":{\"x-email-config\":"
                    "\"spoof\"},\"z\":1}}}", hdr);
    assert_string_equal(t, "{\"jsonrpc\":\"2.0\",\"id\":1, \"method\":\"tools/call\",\"params\":"
                           "{\"name\":\"a\",\"arguments\":{\"x\":0.1,\"big\":"
                           "123456789012345678901234567890},\"_meta\":{\"progressToken\":0.5,"
                           "\"z\":1,\"mcpbox/headers\":{\"x-email-config\":\"real\"}}}}");
    free(t);
    /* no params; empty params; params without _meta */
    t = apply("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"} ", hdr);
    assert_string_equal(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":"
                           "{\"_meta\":{\"mcpbox/headers\":{\"x-email-config\":\"real\"}}}}");
    free(t);
    t = apply("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"params\":{ }}", "{}");
    assert_string_equal(t, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"params\":"
                           "{ \"_meta\":{\"mcpbox/headers\":{}}}}");
    free(t);
    t = apply("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"m\",\"params\":{\"a\":[1,{}]}}", hdr);
    check_headers(t, "real");
    assert_non_null(strstr(t, "\"a\":[1,{}]"));
    free(t);
    /* hostile spellings: escaped keys, duplicates, a _meta that is not an
     * object, an empty header set - the client's value never survives */
    static const char *const hostile[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\",\"params\":{\"_meta\":"
        "{\"mcpbox\\/headers\":{\"x-email-config\":\"spoof\"}}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\",\"params\":{\"\\u005fmeta\":"
        "{\"mcpbox/headers\":{\"x-email-config\":\"spoof\"}}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\",\"params\":{\"_meta\":{},\"_meta\":"
        "{\"mcpbox/headers\":{\"x-email-config\":\"spoof\"}}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\",\"params\":{\"_meta\":{\"mcpbox/headers\":"
        "1,\"mcpbox/headers\":{\"x-email-config\":\"spoof\"}}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\",\"p\\u0061rams\":{\"_meta\":"
        "{\"mcpbox/headers\":{\"x-email-config\":\"spoof\"}}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\",\"params\":{},\"params\":{\"_meta\":"
        "{\"mcpbox/headers\":{\"x-email-config\":\"spoof\"}}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\",\"params\":{\"_meta\":\"x\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\",\"params\":{\"_meta\":[1]}}",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        t = apply(hostile[i], hdr);
        assert_non_null(t);
        check_headers(t, "real");
        assert_null(strstr(t, "spoof"));
        free(t);
        t = apply(hostile[i], "{}");
        check_headers(t, NULL);
        assert_null(strstr(t, "spoof"));
        free(t);
    }
    /* by-position params carry nothing (and cannot hold the key) */
    assert_null(apply("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"m\",\"params\":[1]}", hdr));
}

static void test_versions_and_errors(void **state)
{
    (void)state;
    assert_string_equal(mb_gw__version_negotiate("2025-03-26"), "2025-03-26");
    assert_string_equal(mb_gw__version_negotiate("2099-01-01"), MB_GW_PROTO_LATEST);
    assert_string_equal(mb_gw__version_negotiate(NULL), MB_GW_PROTO_LATEST);
    assert_true(mb_gw__version_allows_batch("2025-03-26"));
    assert_true(mb_gw__version_allows_batch("2024-11-05"));
    assert_false(mb_gw__version_allows_batch("2025-06-18"));
    assert_true(mb_gw__version_primes("2025-11-25"));
    assert_false(mb_gw__version_primes("2025-06-18"));
    assert_false(mb_gw__version_supported("1999-01-01"));
    char *t = mb_gw__error_text("\"x\"", -32600, "bad %d", 7);
    assert_string_equal(t, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32600,"
                           "\"message\":\"bad 7\"}}");
    free(t);
    t = mb_gw__error_text(NULL, -1, "m");
    assert_non_null(strstr(t, "\"id\":null"));
    free(t);
}

static void test_tools_hash(void **state)
{
    (void)state;
    json_error_t e;
    json_t *a = json_loads("[{\"name\":\"b\",\"description\":\"x\",\"inputSchema\":{\"type\":"
                           "\"object\",\"properties\":{\"p\":{\"type\":\"string\"}}}},"
                           "{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}}]",
                           0, &e);
    /* same tools, other order, other key order, other descriptions */
    json_t *b = json_loads("[{\"inputSchema\":{\"type\":\"object\"},\"name\":\"a\"},"
                           "{\"name\":\"b\",\"description\":\"changed\",\"inputSchema\":{"
                           "\"properties\":{\"p\":{\"type\":\"string\"}},\"type\":\"object\"}}]",
                           0, &e);
    json_t *c = json_loads("[{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}},"
                           "{\"name\":\"b\",\"inputSchema\":{\"type\":\"object\"}}]",
                           0, &e);
    char ha[65], hb[65], hc[65];
    size_t n;
    assert_int_equal(mb_gw__tools_hash(a, ha, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(mb_gw__tools_hash(b, hb, NULL), 0);
    assert_int_equal(mb_gw__tools_hash(c, hc, NULL), 0);
    assert_string_equal(ha, hb);
    assert_string_not_equal(ha, hc);
    assert_int_equal(strlen(ha), 64);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

/* ------------------------------------------- a gateway with a fake server */

typedef struct fake {
    int to_gw[2];   /* the test writes [1]: the server's stdout */
    int from_gw[2]; /* the test reads [0]: the server's stdin */
    int spawns, kills;
    mb_buf pending;
    int keep_notes; /* fake_read returns client_initialized notes too */
    int notes;      /* client_initialized notes fake_read passed over */
} fake;

static int fake_spawn(void *ctx, const char *sb, const char *srv, const mb_backend_spec *spec,
                      mb_backend_proc *out, mb_err *err)
{
    (void)sb;
    (void)srv;
    (void)spec;
    (void)err;
    fake *f = ctx;
    if (pipe2(f->to_gw, O_CLOEXEC) || pipe2(f->from_gw, O_CLOEXEC)) return MB_EIO;
    out->in_fd = f->from_gw[1];
    out->out_fd = f->to_gw[0];
    out->err_fd = -1;
    out->handle = __atomic_add_fetch(&f->spawns, 1, __ATOMIC_SEQ_CST); /* publishes the fds */
    return MB_OK;
}

static void fake_kill(void *ctx, const char *sb, const char *srv, int64_t handle)
{
    (void)sb;
    (void)srv;
    (void)handle;
    fake *f = ctx;
    __atomic_add_fetch(&f->kills, 1, __ATOMIC_SEQ_CST);
}

static void fake_close(fake *f)
{
    if (f->to_gw[1] >= 0) close(f->to_gw[1]);
    if (f->from_gw[0] >= 0) close(f->from_gw[0]);
    f->to_gw[1] = f->from_gw[0] = -1;
}

/* The next line the gateway wrote to the server, parsed (NULL on timeout). */
static json_t *fake_read(fake *f, int timeout_ms)
{
    for (;;) {
        char *nl = f->pending.data ? memchr(f->pending.data, '\n', f->pending.len) : NULL;
        if (nl) {
            json_error_t e;
            json_t *j = json_loadb(f->pending.data, (size_t)(nl - f->pending.data), 0, &e);
            mb_buf_consume(&f->pending, (size_t)(nl - f->pending.data) + 1);
            assert_non_null(j);
            const char *m = json_string_value(json_object_get(j, "method"));
            if (!f->keep_notes && m && !strcmp(m, "notifications/mcpbox/client_initialized")) {
                f->notes++;
                json_decref(j);
                continue;
            }
            return j;
        }
        struct pollfd p = {f->from_gw[0], POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0) return NULL;
        char buf[65536];
        ssize_t n = read(f->from_gw[0], buf, sizeof buf);
        if (n <= 0) return NULL;
        mb_buf_append(&f->pending, buf, (size_t)n);
    }
}

static void fake_write(fake *f, const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    line[n++] = '\n';
    assert_int_equal(write(f->to_gw[1], line, (size_t)n), n);
}

static const char *method_of(json_t *j) { return json_string_value(json_object_get(j, "method")); }

/* Answers the gateway's initialize, initialized and tools/list. */
static void fake_handshake(fake *f)
{
    json_t *init = fake_read(f, 5000);
    assert_non_null(init);
    assert_string_equal(method_of(init), "initialize");
    fake_write(f,
               "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"protocolVersion\":\"2025-06-18\","
               "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"fake\",\"version\":"
               "\"9.9\"}}}",
               (long long)json_integer_value(json_object_get(init, "id")));
    json_decref(init);
    json_t *note = fake_read(f, 5000);
    assert_string_equal(method_of(note), "notifications/initialized");
    json_decref(note);
    json_t *tl = fake_read(f, 5000);
    assert_string_equal(method_of(tl), "tools/list");
    fake_write(f,
               "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"tools\":[{\"name\":\"t\","
               "\"inputSchema\":{\"type\":\"object\"}}]}}",
               (long long)json_integer_value(json_object_get(tl, "id")));
    json_decref(tl);
}

typedef struct world {
    fake f;
    mb_gateway *gw;
    mb_gw_backend *b;
} world;

/* The daemon's tenant_of: counts its calls, knows no tenant. */
static int tenant_calls;
static int no_tenant(void *ctx, const char *sandbox_id, char *buf, size_t cap)
{
    (void)ctx;
    (void)sandbox_id;
    (void)buf;
    (void)cap;
    tenant_calls++;
    return -1;
}

static int world_up_spec(void **state, int call_timeout_ms, int tools_static)
{
    world *w = calloc(1, sizeof *w);
    w->f.to_gw[0] = w->f.to_gw[1] = w->f.from_gw[0] = w->f.from_gw[1] = -1;
    mb_gateway_opts o = {0};
    o.spawn = fake_spawn;
    o.kill = fake_kill;
    o.ctx = &w->f;
    o.call_timeout_ms = call_timeout_ms;
    o.init_timeout_ms = 5000;
    o.tenant_of = no_tenant;
    mb_err err;
    assert_int_equal(mb_gateway_create(&o, &w->gw, &err), 0);
    const char *argv[] = {"fake", NULL};
    mb_backend_spec spec = {argv, NULL, NULL, NULL, tools_static};
    assert_int_equal(mb_gateway_add(w->gw, "sb", "srv", &spec, &err), 0);
    /* Started without waiting: it spawned and sent initialize. */
    assert_int_equal(mb_gateway_start(w->gw, "sb", "srv", 0, &err), 0);
    assert_int_equal(w->f.spawns, 1);
    assert_int_equal(mb_gateway_start(w->gw, "sb", "srv", 1, &err), MB_ETIMEOUT);
    fake_handshake(&w->f);
    assert_int_equal(mb_gateway_start(w->gw, "sb", "srv", 5000, &err), 0);
    int known;
    w->b = mb_gw__lookup(w->gw, "sb", "srv", &known, NULL, 0);
    assert_non_null(w->b);
    *state = w;
    return 0;
}

static int world_up_default(void **state) { return world_up_spec(state, 0, 0); }
static int world_up_short(void **state) { return world_up_spec(state, 300, 0); }
static int world_up_static(void **state) { return world_up_spec(state, 0, 1); }

static int world_down(void **state)
{
    world *w = *state;
    mb_gw__backend_unref(w->b);
    mb_gateway_destroy(w->gw);
    fake_close(&w->f);
    mb_buf_free(&w->f.pending);
    free(w);
    return 0;
}

static mb_gw_session *open_session(world *w, const char *caps_json)
{
    json_error_t e;
    json_t *caps = caps_json ? json_loads(caps_json, 0, &e) : NULL;
    json_t *params = json_pack("{s:o*}", "capabilities", caps);
    mb_gw_session *s = mb_gw__session_new(w->b, "2025-11-25", params);
    json_decref(params);
    assert_int_equal(mb_gw__sessions_insert(w->gw, s, NULL), 0);
    return s;
}

/* Routes one client message on exchange x. */
static int client_says(world *w, mb_gw_stream *x, const char *text, char **err)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    assert_non_null(j);
    mb_gw_cmsg m = {j, text, strlen(text)};
    char *dummy = NULL;
    pthread_mutex_lock(&w->b->lock);
    int rc = mb_gw__route_from_client_locked(x, &m, err ? err : &dummy);
    pthread_mutex_unlock(&w->b->lock);
    free(dummy);
    json_decref(j);
    return rc;
}

/* The next message queued on st, taken off it (waits up to timeout_ms; NULL
 * if none came); caller frees. */
static mb_gw_msg *stream_take(world *w, mb_gw_stream *st, int timeout_ms)
{
    int64_t deadline = mb_gw__now() + timeout_ms;
    pthread_mutex_lock(&w->b->lock);
    while (!st->head && mb_gw__now() < deadline)
        mb_gw__cond_wait_until(&st->cond, &w->b->lock, deadline);
    mb_gw_msg *m = st->head;
    if (m) {
        st->head = m->next;
        if (!st->head) st->tail = NULL;
        st->queued_bytes -= m->len;
    }
    pthread_mutex_unlock(&w->b->lock);
    return m;
}

/* The next message queued on st, parsed (waits up to timeout_ms). */
static json_t *stream_next(world *w, mb_gw_stream *st, int timeout_ms, int *is_response)
{
    mb_gw_msg *m = stream_take(w, st, timeout_ms);
    if (!m) return NULL;
    json_error_t e;
    json_t *j = json_loadb(m->data, m->len, 0, &e);
    if (is_response) *is_response = m->is_response;
    free(m);
    return j;
}

/* The same as the text it was queued as; caller frees. */
static char *stream_next_text(world *w, mb_gw_stream *st, int timeout_ms)
{
    mb_gw_msg *m = stream_take(w, st, timeout_ms);
    char *t = m ? mb_strndup(m->data, m->len) : NULL;
    free(m);
    return t;
}

static mb_gw_stream *exchange(mb_gw_session *s)
{
    mb_gw_stream *x = mb_gw__stream_new(MB_GW_STREAM_POST, s);
    x->accepts_sse = 1;
    return x;
}

/* The server gets a client's tools/list (forwarded) and answers it with
 * {"tools":TOOLS}. */
static void server_answers_tools_list(world *w, const char *tools)
{
    json_t *u = fake_read(&w->f, 2000);
    assert_non_null(u);
    assert_string_equal(method_of(u), "tools/list");
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"tools\":%s}}",
               (long long)json_integer_value(json_object_get(u, "id")), tools);
    json_decref(u);
}

/* A tenant the daemon told (mb_gateway_set_tenant, at acquire) is what
 * sessions get, without asking tenant_of; the first one told stays;
 * unknown sandboxes are ignored. */
static void test_set_tenant(void **state)
{
    world *w = *state;
    char buf[64];
    tenant_calls = 0;
    assert_int_equal(mb_gw__tenant_of(w->gw, "sb", buf, sizeof buf), -1);
    assert_int_equal(tenant_calls, 1);
    mb_gateway_set_tenant(w->gw, "nope", "bob");
    mb_gateway_set_tenant(w->gw, "sb", "");
    assert_int_equal(mb_gw__tenant_of(w->gw, "sb", buf, sizeof buf), -1);
    assert_int_equal(tenant_calls, 2);
    mb_gateway_set_tenant(w->gw, "sb", "alice");
    mb_gateway_set_tenant(w->gw, "sb", "bob");
    assert_int_equal(mb_gw__tenant_of(w->gw, "sb", buf, sizeof buf), 0);
    assert_string_equal(buf, "alice");
    mb_gw_session *s = open_session(w, NULL); /* a session asks for it too */
    assert_int_equal(tenant_calls, 2);
    mb_gw__session_unref(s);
}

/* A server removed from its sandbox (a pool claim that did not name it) is
 * unreachable at once, but told to stop (stdin closed, kill) only
 * MB_GW_RETIRE_DELAY_MS later, by the reactor, so that its exit does not
 * compete with the first requests of the sandbox's client. */
static void test_remove_server_retires_later(void **state)
{
    world *w = *state;
    int64_t t0 = mb_gw__now();
    mb_gateway_remove_server(w->gw, "sb", "srv");
    assert_int_equal(mb_gateway_info(w->gw, "sb", "srv", NULL, NULL), MB_ENOTFOUND);
    int known;
    assert_null(mb_gw__lookup(w->gw, "sb", "srv", &known, NULL, 0));
    /* still running: its stdin open, no kill yet */
    struct pollfd p = {w->f.from_gw[0], POLLIN, 0};
    assert_int_equal(poll(&p, 1, 0), 0);
    assert_int_equal(__atomic_load_n(&w->f.kills, __ATOMIC_SEQ_CST), 0);
    /* then stopped, within a reactor tick after the delay */
    char c;
    assert_int_equal(poll(&p, 1, MB_GW_RETIRE_DELAY_MS + 3000), 1);
    assert_int_equal(read(w->f.from_gw[0], &c, 1), 0); /* EOF */
    assert_true(mb_gw__now() - t0 >= MB_GW_RETIRE_DELAY_MS);
    for (int i = 0; i < 100 && !__atomic_load_n(&w->f.kills, __ATOMIC_SEQ_CST); i++)
        usleep(10 * 1000);
    assert_int_equal(__atomic_load_n(&w->f.kills, __ATOMIC_SEQ_CST), 1);
}

/* A tools_static server (the playwright launcher): clients' tools/list are
 * answered with the server's own text of the list the gateway fetched, with
 * nothing sent upstream; a cursor goes upstream; after the server's
 * notifications/tools/list_changed, tools/list goes upstream until the
 * gateway's new fetch is answered, and the new list is what clients get. */
static void test_tools_static(void **state)
{
    world *w = *state;
    mb_gw_session *s = open_session(w, NULL);
    mb_gw_stream *x = exchange(s);
    assert_int_equal(client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\"}",
                                 NULL), 0);
    char *t = stream_next_text(w, x, 2000);
    assert_non_null(t);
    assert_string_equal(t, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"tools\":[{\"name\":\"t\","
                           "\"inputSchema\":{\"type\":\"object\"}}]}}");
    free(t);
    assert_null(fake_read(&w->f, 100)); /* nothing went upstream */
    /* the client's id comes back as written, params or none */
    assert_int_equal(client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\","
                                       "\"params\":{\"_meta\":{\"progressToken\":1}}}", NULL), 0);
    json_t *j = stream_next(w, x, 2000, NULL);
    assert_int_equal(json_integer_value(json_object_get(j, "id")), 7);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(
                            json_object_get(j, "result"), "tools"), 0), "name")), "t");
    json_decref(j);
    assert_null(fake_read(&w->f, 100));

    /* a page asked for by cursor is the server's to answer */
    assert_int_equal(client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\","
                                       "\"params\":{\"cursor\":\"p2\"}}", NULL), 0);
    server_answers_tools_list(w, "[]");
    j = stream_next(w, x, 2000, NULL);
    assert_int_equal(json_array_size(json_object_get(json_object_get(j, "result"), "tools")), 0);
    json_decref(j);

    /* the list changes: the gateway fetches it again ... */
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
    json_t *refetch = fake_read(&w->f, 2000);
    assert_non_null(refetch);
    assert_string_equal(method_of(refetch), "tools/list");
    /* ... and until it has the new one, clients' tools/list go upstream */
    assert_int_equal(client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\"}",
                                 NULL), 0);
    server_answers_tools_list(w, "[{\"name\":\"u\",\"inputSchema\":{\"type\":\"object\"}}]");
    j = stream_next(w, x, 2000, NULL);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(
                            json_object_get(j, "result"), "tools"), 0), "name")), "u");
    json_decref(j);
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"tools\":[{\"name\":\"u\","
                      "\"inputSchema\":{\"type\":\"object\"}, \"title\":\"U\"}]}}",
               (long long)json_integer_value(json_object_get(refetch, "id")));
    json_decref(refetch);
    int64_t deadline = mb_gw__now() + 2000;
    for (;;) { /* the reactor takes the answer */
        pthread_mutex_lock(&w->b->lock);
        int fetching = w->b->tools_fetching;
        pthread_mutex_unlock(&w->b->lock);
        if (!fetching || mb_gw__now() > deadline) break;
        usleep(1000);
    }
    assert_int_equal(client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\"}",
                                 NULL), 0);
    t = stream_next_text(w, x, 2000);
    assert_non_null(t);
    assert_string_equal(t, "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{\"tools\":[{\"name\":\"u\","
                           "\"inputSchema\":{\"type\":\"object\"}, \"title\":\"U\"}]}}");
    free(t);
    assert_null(fake_read(&w->f, 100));
    mb_gw__stream_unref(x);
    mb_gw__sessions_end(w->gw, s, "test over");
    mb_gw__session_unref(s);
}

/* Without tools_static, every tools/list is the server's to answer. */
static void test_tools_list_forwarded(void **state)
{
    world *w = *state;
    mb_gw_session *s = open_session(w, NULL);
    mb_gw_stream *x = exchange(s);
    assert_int_equal(client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
                                 NULL), 0);
    server_answers_tools_list(w, "[]");
    json_t *j = stream_next(w, x, 2000, NULL);
    assert_int_equal(json_integer_value(json_object_get(j, "id")), 1);
    json_decref(j);
    mb_gw__stream_unref(x);
    mb_gw__sessions_end(w->gw, s, "test over");
    mb_gw__session_unref(s);
}

/* The next line the server got, which must be session s's client_initialized
 * note carrying clientInfo.name `who`. */
static void server_got_note(world *w, const char *who)
{
    w->f.keep_notes = 1;
    json_t *n = fake_read(&w->f, 2000);
    w->f.keep_notes = 0;
    assert_non_null(n);
    assert_string_equal(method_of(n), "notifications/mcpbox/client_initialized");
    assert_null(json_object_get(n, "id"));
    json_t *p = json_object_get(n, "params");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "clientInfo"),
                                                          "name")), who);
    assert_string_equal(json_string_value(json_object_get(p, "protocolVersion")), "2025-06-18");
    json_decref(n);
}

static mb_gw_session *open_named_session(world *w, const char *who)
{
    json_t *params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", "2025-06-18",
                               "capabilities", "clientInfo", "name", who, "version", "1");
    mb_gw_session *s = mb_gw__session_new(w->b, "2025-06-18", params);
    json_decref(params);
    assert_int_equal(mb_gw__sessions_insert(w->gw, s, NULL), 0);
    return s;
}

/* A client's initialize reaches the server as notifications/mcpbox/
 * client_initialized with its params, not when the session opens but right
 * before the session's first message the server gets, in the same write;
 * again when another session spoke in between, or the process restarted;
 * never for a session the gateway answers alone (tools/list of a
 * tools_static server). */
static void test_client_note_deferred(void **state)
{
    world *w = *state;
    mb_gw_session *a = open_named_session(w, "alpha"), *b = open_named_session(w, "beta");
    w->f.keep_notes = 1;
    assert_null(fake_read(&w->f, 100)); /* opening sessions sends nothing */
    w->f.keep_notes = 0;
    mb_gw_stream *xa = exchange(a), *xb = exchange(b);
    /* tools/list answered from the gateway's copy: still nothing */
    client_says(w, xa, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", NULL);
    json_t *j = stream_next(w, xa, 2000, NULL);
    assert_non_null(json_object_get(j, "result"));
    json_decref(j);
    w->f.keep_notes = 1;
    assert_null(fake_read(&w->f, 100));
    w->f.keep_notes = 0;
    /* beta's first call: beta's note, then the call */
    client_says(w, xb, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"t\"}}", NULL);
    server_got_note(w, "beta");
    w->f.keep_notes = 1;
    json_t *u = fake_read(&w->f, 2000);
    assert_string_equal(method_of(u), "tools/call");
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}",
               (long long)json_integer_value(json_object_get(u, "id")));
    json_decref(u);
    json_decref(stream_next(w, xb, 2000, NULL));
    /* beta's second message: no note */
    client_says(w, xb, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}",
                NULL);
    u = fake_read(&w->f, 2000);
    assert_string_equal(method_of(u), "notifications/roots/list_changed");
    json_decref(u);
    w->f.keep_notes = 0;
    /* alpha's first message that goes upstream (a notification) brings alpha's */
    client_says(w, xa, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}",
                NULL);
    server_got_note(w, "alpha");
    w->f.keep_notes = 1;
    u = fake_read(&w->f, 2000);
    assert_string_equal(method_of(u), "notifications/roots/list_changed");
    json_decref(u);
    w->f.keep_notes = 0;

    /* the server restarts: the new process hears of a session again with
     * its next message */
    fake_close(&w->f);
    for (int i = 0; i < 300 && __atomic_load_n(&w->f.spawns, __ATOMIC_SEQ_CST) < 2; i++)
        usleep(10 * 1000);
    mb_buf_reset(&w->f.pending);
    fake_handshake(&w->f);
    mb_err err;
    assert_int_equal(mb_gateway_start(w->gw, "sb", "srv", 3000, &err), 0);
    mb_gw_stream *xa2 = exchange(a);
    client_says(w, xa2, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", NULL);
    server_got_note(w, "alpha");
    w->f.keep_notes = 1;
    u = fake_read(&w->f, 2000);
    assert_string_equal(method_of(u), "ping");
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}",
               (long long)json_integer_value(json_object_get(u, "id")));
    json_decref(u);
    json_decref(stream_next(w, xa2, 2000, NULL));
    w->f.keep_notes = 0;
    /* beta again, after alpha: beta's note again */
    client_says(w, xb, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}",
                NULL);
    server_got_note(w, "beta");
    w->f.keep_notes = 1;
    u = fake_read(&w->f, 2000);
    assert_string_equal(method_of(u), "notifications/roots/list_changed");
    json_decref(u);
    assert_null(fake_read(&w->f, 100));
    w->f.keep_notes = 0;
    mb_gw__stream_unref(xa);
    mb_gw__stream_unref(xa2);
    mb_gw__stream_unref(xb);
    mb_gw__sessions_end(w->gw, a, "test over");
    mb_gw__sessions_end(w->gw, b, "test over");
    mb_gw__session_unref(a);
    mb_gw__session_unref(b);
}

/* A session's note lives as long as the session: huge initialize params are
 * cut to protocolVersion and clientInfo, then to nothing. */
static void test_client_note_bounded(void **state)
{
    world *w = *state;
    char *big = malloc(MB_GW_NOTE_MAX + 10);
    memset(big, 'x', MB_GW_NOTE_MAX + 9);
    big[MB_GW_NOTE_MAX + 9] = '\0';
    json_t *p1 = json_pack("{s:s, s:{s:s}, s:{s:s, s:s}}", "protocolVersion", "2025-06-18",
                           "capabilities", "huge", big, "clientInfo", "name", "small", "version",
                           "1");
    json_t *p2 = json_pack("{s:s, s:{s:s, s:s}}", "protocolVersion", "2025-06-18",
                           "clientInfo", "name", big, "version", "1");
    mb_gw_session *a = mb_gw__session_new(w->b, "2025-06-18", p1);
    mb_gw_session *b = mb_gw__session_new(w->b, "2025-06-18", p2);
    assert_true(strlen(a->note) <= MB_GW_NOTE_MAX && strlen(b->note) <= MB_GW_NOTE_MAX);
    json_error_t e;
    json_t *na = json_loads(a->note, 0, &e), *nb = json_loads(b->note, 0, &e);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                            na, "params"), "clientInfo"), "name")), "small");
    assert_null(json_object_get(json_object_get(na, "params"), "capabilities"));
    assert_int_equal(json_object_size(json_object_get(nb, "params")), 0);
    assert_string_equal(json_string_value(json_object_get(nb, "method")),
                        "notifications/mcpbox/client_initialized");
    json_decref(na);
    json_decref(nb);
    json_decref(p1);
    json_decref(p2);
    free(big);
    mb_gw__session_unref(a);
    mb_gw__session_unref(b);
}

static void test_id_rewriting(void **state)
{
    world *w = *state;
    mb_gw_session *s1 = open_session(w, NULL), *s2 = open_session(w, NULL);
    mb_gw_stream *x1 = exchange(s1), *x2 = exchange(s2);
    /* The same id in two sessions, a string id, and a progress token. */
    assert_int_equal(client_says(w, x1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                        "\"params\":{\"name\":\"t\",\"arguments\":{\"x\":0.1}}}",
                                 NULL),
                     0);
    assert_int_equal(client_says(w, x2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                        "\"params\":{\"name\":\"t\"}}",
                                 NULL),
                     0);
    assert_int_equal(client_says(w, x1, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
                                        "\"params\":{\"_meta\":{\"progressToken\":\"tok\"},"
                                        "\"name\":\"t\"},\"id\":\"abc\"}",
                                 NULL),
                     0);
    json_t *u1 = fake_read(&w->f, 2000), *u2 = fake_read(&w->f, 2000), *u3 = fake_read(&w->f, 2000);
    assert_non_null(u3);
    json_int_t i1 = json_integer_value(json_object_get(u1, "id"));
    json_int_t i2 = json_integer_value(json_object_get(u2, "id"));
    json_int_t i3 = json_integer_value(json_object_get(u3, "id"));
    assert_true(i1 > 0 && i2 > 0 && i3 > 0);
    assert_true(i1 != i2 && i2 != i3 && i1 != i3);
    /* the rest of the message is intact, the token became the upstream id */
    json_t *args = json_object_get(json_object_get(u1, "params"), "arguments");
    assert_true(json_real_value(json_object_get(args, "x")) == 0.1);
    json_t *meta = json_object_get(json_object_get(u3, "params"), "_meta");
    assert_int_equal(json_integer_value(json_object_get(meta, "progressToken")), i3);
    /* A duplicate of an id still in flight is refused in its session. */
    assert_int_equal(client_says(w, x1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", NULL), 0);
    int resp = 0;
    json_t *dup = stream_next(w, x1, 1000, &resp);
    assert_true(resp);
    assert_int_equal(json_integer_value(json_object_get(dup, "id")), 1);
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(dup, "error"),
                                                             "message")),
                           "duplicate"));
    json_decref(dup);
    assert_null(fake_read(&w->f, 100)); /* nothing went upstream */

    /* Progress for the "abc" call, then answers out of order. */
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                      "{\"progressToken\":%lld,\"progress\":0.5}}",
               (long long)i3);
    json_t *pr = stream_next(w, x1, 2000, &resp);
    assert_false(resp);
    assert_string_equal(json_string_value(json_object_get(json_object_get(pr, "params"),
                                                          "progressToken")),
                        "tok");
    json_decref(pr);
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"who\":\"s2\"}}", (long long)i2);
    fake_write(&w->f, "{\"result\":{\"who\":\"abc\",\"n\":0.1},\"jsonrpc\":\"2.0\",\"id\":%lld}",
               (long long)i3);
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"who\":\"s1\"}}", (long long)i1);
    /* a response nobody waits for is dropped */
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":999999,\"result\":{}}");
    json_t *r2 = stream_next(w, x2, 2000, &resp);
    assert_true(resp);
    assert_true(json_is_integer(json_object_get(r2, "id")));
    assert_int_equal(json_integer_value(json_object_get(r2, "id")), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r2, "result"), "who")), "s2");
    json_t *ra = stream_next(w, x1, 2000, &resp);
    assert_string_equal(json_string_value(json_object_get(ra, "id")), "abc");
    json_t *r1 = stream_next(w, x1, 2000, &resp);
    assert_int_equal(json_integer_value(json_object_get(r1, "id")), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r1, "result"), "who")), "s1");
    assert_null(stream_next(w, x1, 200, NULL));
    assert_null(stream_next(w, x2, 10, NULL));
    pthread_mutex_lock(&w->b->lock);
    assert_int_equal(x1->outstanding, 0);
    assert_int_equal(x2->outstanding, 0);
    assert_int_equal(s1->ncalls, 0);
    assert_int_equal(w->b->pending.count, 0);
    pthread_mutex_unlock(&w->b->lock);
    json_decref(u1);
    json_decref(u2);
    json_decref(u3);
    json_decref(r1);
    json_decref(r2);
    json_decref(ra);
    mb_gw__stream_unref(x1);
    mb_gw__stream_unref(x2);
    mb_gw__sessions_end(w->gw, s1, "test over");
    mb_gw__sessions_end(w->gw, s2, "test over");
    mb_gw__session_unref(s1);
    mb_gw__session_unref(s2);
}

static void test_server_requests(void **state)
{
    world *w = *state;
    mb_gw_session *s1 = open_session(w, "{\"sampling\":{}}");
    mb_gw_session *s2 = open_session(w, "{\"sampling\":{}}");
    mb_gw_stream *x1 = exchange(s1);
    client_says(w, x1, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{}}", NULL);
    json_t *u = fake_read(&w->f, 2000);
    json_int_t up = json_integer_value(json_object_get(u, "id"));
    json_decref(u);
    /* The server asks the client: it lands on the call's exchange. */
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"sampling/createMessage\","
                      "\"params\":{}}");
    int resp;
    json_t *q = stream_next(w, x1, 2000, &resp);
    assert_non_null(q);
    assert_false(resp);
    assert_string_equal(method_of(q), "sampling/createMessage");
    assert_true(json_is_integer(json_object_get(q, "id")));
    json_int_t down = json_integer_value(json_object_get(q, "id"));
    json_decref(q);
    /* Another session cannot answer it; the right one can, and the server
     * gets its own id back. */
    mb_gw_stream *x2 = exchange(s2);
    char text[256], *err = NULL;
    snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"m\":1}}",
             (long long)down);
    assert_int_equal(client_says(w, x2, text, &err), -1);
    assert_non_null(strstr(err, "no request"));
    free(err);
    mb_gw_stream *x1b = exchange(s1);
    assert_int_equal(client_says(w, x1b, text, NULL), 0);
    json_t *back = fake_read(&w->f, 2000);
    assert_string_equal(json_string_value(json_object_get(back, "id")), "srv-1");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(back, "result"), "m")), 1);
    json_decref(back);
    /* A second answer to the same request is refused. */
    assert_int_equal(client_says(w, x1b, text, &err), -1);
    free(err);
    /* ping from the server is answered by the gateway */
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"ping\"}");
    json_t *pong = fake_read(&w->f, 2000);
    assert_int_equal(json_integer_value(json_object_get(pong, "id")), 77);
    assert_non_null(json_object_get(pong, "result"));
    json_decref(pong);
    /* roots/list: no session has the capability -> an error to the server */
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":78,\"method\":\"roots/list\"}");
    json_t *no = fake_read(&w->f, 2000);
    assert_int_equal(json_integer_value(json_object_get(no, "id")), 78);
    assert_non_null(json_object_get(no, "error"));
    json_decref(no);
    /* finish the call */
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}", (long long)up);
    json_t *fin = stream_next(w, x1, 2000, &resp);
    assert_int_equal(json_integer_value(json_object_get(fin, "id")), 5);
    json_decref(fin);
    mb_gw__stream_unref(x1);
    mb_gw__stream_unref(x1b);
    mb_gw__stream_unref(x2);
    mb_gw__sessions_end(w->gw, s1, "test over");
    mb_gw__sessions_end(w->gw, s2, "test over");
    mb_gw__session_unref(s1);
    mb_gw__session_unref(s2);
}

/* After a cancellation the gateway pings the server (a server that does not
 * answer within cancel_grace_ms is restarted): the fake answers, and the
 * gateway has taken the answer when this returns. */
static void answer_probe(world *w)
{
    json_t *probe = fake_read(&w->f, 2000);
    assert_string_equal(method_of(probe), "ping");
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}",
               (long long)json_integer_value(json_object_get(probe, "id")));
    json_decref(probe);
    for (int i = 0;; i++) {
        pthread_mutex_lock(&w->b->lock);
        int64_t waiting = w->b->probe_deadline_ms;
        pthread_mutex_unlock(&w->b->lock);
        if (!waiting) break;
        assert_true(i < 200);
        usleep(10000);
    }
}

static void test_session_end_and_cancel(void **state)
{
    world *w = *state;
    mb_gw_session *s = open_session(w, NULL);
    mb_gw_stream *x = exchange(s);
    client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\",\"params\":{}}", NULL);
    client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\",\"params\":{}}", NULL);
    json_t *ua = fake_read(&w->f, 2000), *ub = fake_read(&w->f, 2000);
    /* the client cancels "a": the server hears about it with its own id */
    client_says(w, x, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                      "{\"requestId\":\"a\",\"reason\":\"bored\"}}",
                NULL);
    json_t *c = fake_read(&w->f, 2000);
    assert_string_equal(method_of(c), "notifications/cancelled");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(c, "params"), "requestId")),
                     json_integer_value(json_object_get(ua, "id")));
    json_decref(c);
    /* then a ping, to learn whether the server is still reading (a server
     * that does not answer within cancel_grace_ms is restarted); it answers */
    answer_probe(w);
    int resp;
    json_t *ea = stream_next(w, x, 1000, &resp);
    assert_string_equal(json_string_value(json_object_get(ea, "id")), "a");
    assert_non_null(json_object_get(ea, "error"));
    json_decref(ea);
    /* ending the session answers "b" and cancels it upstream */
    mb_gw__sessions_end(w->gw, s, "the client ended the session");
    json_t *eb = stream_next(w, x, 1000, &resp);
    assert_string_equal(json_string_value(json_object_get(eb, "id")), "b");
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(eb, "error"), "message")),
                           "ended"));
    json_decref(eb);
    json_t *cb = fake_read(&w->f, 2000);
    assert_string_equal(method_of(cb), "notifications/cancelled");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(cb, "params"), "requestId")),
                     json_integer_value(json_object_get(ub, "id")));
    json_decref(cb);
    answer_probe(w);
    assert_null(mb_gw__sessions_lookup(w->gw, s->id));
    pthread_mutex_lock(&w->b->lock);
    size_t nsessions = w->b->nsessions, npending = w->b->pending.count;
    pthread_mutex_unlock(&w->b->lock);
    assert_int_equal(nsessions, 0);
    assert_int_equal(npending, 0);
    json_decref(ua);
    json_decref(ub);
    mb_gw__stream_unref(x);
    mb_gw__session_unref(s);
}

static void test_timeout(void **state)
{
    world *w = *state; /* call timeout 300 ms */
    mb_gw_session *s = open_session(w, NULL);
    mb_gw_stream *x = exchange(s);
    client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{}}", NULL);
    json_t *u = fake_read(&w->f, 2000);
    usleep(350 * 1000);
    pthread_mutex_lock(&w->b->lock);
    assert_int_equal(mb_gw__expire_locked(w->b, x, mb_gw__now()), INT64_MAX);
    pthread_mutex_unlock(&w->b->lock);
    int resp;
    json_t *e = stream_next(w, x, 1000, &resp);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "error"), "code")),
                     MB_GW_ETIMEOUT);
    json_decref(e);
    json_t *c = fake_read(&w->f, 2000);
    assert_string_equal(method_of(c), "notifications/cancelled");
    json_decref(c);
    /* the late answer is dropped */
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}",
               (long long)json_integer_value(json_object_get(u, "id")));
    assert_null(stream_next(w, x, 200, NULL));
    json_decref(u);
    mb_gw__stream_unref(x);
    mb_gw__sessions_end(w->gw, s, "test over");
    mb_gw__session_unref(s);
}

static void test_server_death_and_restart(void **state)
{
    world *w = *state;
    mb_gw_session *s = open_session(w, NULL);
    mb_gw_stream *x = exchange(s);
    client_says(w, x, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", NULL);
    json_t *u = fake_read(&w->f, 2000);
    json_decref(u);
    fake_close(&w->f); /* stdout EOF: the server died */
    int resp;
    json_t *e = stream_next(w, x, 2000, &resp);
    assert_non_null(e);
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(e, "error"), "message")),
                           "stopped while handling"));
    json_decref(e);
    json_t *md;
    int ready;
    assert_int_equal(mb_gateway_info(w->gw, "sb", "srv", &md, &ready), 0);
    assert_false(ready);
    assert_string_equal(json_string_value(json_object_get(md, "state")), "crashed");
    assert_non_null(strstr(json_string_value(json_object_get(md, "last_error")), "exited"));
    json_decref(md);
    for (int i = 0; i < 300 && __atomic_load_n(&w->f.kills, __ATOMIC_SEQ_CST) < 1; i++)
        usleep(10 * 1000);
    assert_int_equal(__atomic_load_n(&w->f.kills, __ATOMIC_SEQ_CST), 1);
    for (int i = 0; i < 300 && __atomic_load_n(&w->f.spawns, __ATOMIC_SEQ_CST) < 2; i++)
        usleep(10 * 1000);
    assert_int_equal(__atomic_load_n(&w->f.spawns, __ATOMIC_SEQ_CST), 2);
    mb_buf_reset(&w->f.pending); /* what the dead process's stdin held */
    /* It was wanted, so the reactor starts it again (after a backoff of at
     * most a second): answer the new process's handshake. */
    fake_handshake(&w->f);
    mb_err err;
    assert_int_equal(mb_gateway_start(w->gw, "sb", "srv", 3000, &err), 0);
    assert_int_equal(w->f.spawns, 2);
    assert_int_equal(mb_gateway_info(w->gw, "sb", "srv", &md, &ready), 0);
    assert_true(ready);
    assert_int_equal(json_integer_value(json_object_get(md, "restarts")), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(md, "server_info"), "name")),
                        "fake");
    assert_int_equal(strlen(json_string_value(json_object_get(md, "tools_sha256"))), 64);
    json_decref(md);
    /* the session survived and works with the new process */
    mb_gw_stream *x2 = exchange(s);
    client_says(w, x2, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", NULL);
    u = fake_read(&w->f, 2000);
    fake_write(&w->f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}",
               (long long)json_integer_value(json_object_get(u, "id")));
    json_decref(u);
    json_t *ok = stream_next(w, x2, 2000, &resp);
    assert_int_equal(json_integer_value(json_object_get(ok, "id")), 2);
    json_decref(ok);
    mb_gw__stream_unref(x);
    mb_gw__stream_unref(x2);
    mb_gw__sessions_end(w->gw, s, "test over");
    mb_gw__session_unref(s);
}

/* --------------------------------- one socket for stdin and stdout, no stderr */

/* A server whose stdin and stdout are one socket (as the daemon's sandboxed
 * servers are) and whose stderr the gateway does not read: the stderr_tail
 * callback supplies it when the server fails. */
static int sock_spawn(void *ctx, const char *sb, const char *srv, const mb_backend_spec *spec,
                      mb_backend_proc *out, mb_err *err)
{
    (void)sb;
    (void)srv;
    (void)spec;
    (void)err;
    fake *f = ctx;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) return MB_EIO;
    int small = 4096; /* so that a big message cannot be written at once */
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    f->to_gw[1] = f->from_gw[0] = sv[1];
    out->in_fd = out->out_fd = sv[0];
    out->err_fd = -1;
    out->handle = __atomic_add_fetch(&f->spawns, 1, __ATOMIC_SEQ_CST);
    return MB_OK;
}

static size_t sock_tail(void *ctx, const char *sb, const char *srv, int64_t handle, char *buf,
                        size_t cap)
{
    (void)ctx;
    (void)sb;
    (void)srv;
    (void)handle;
    static const char t[] = "line one\nfatal: the-tail-marker\n";
    size_t n = sizeof t - 1 < cap ? sizeof t - 1 : cap;
    memcpy(buf, t, n);
    return n;
}

static void test_shared_socket_and_stderr_tail(void **state)
{
    (void)state;
    world w = {0};
    w.f.to_gw[0] = w.f.to_gw[1] = w.f.from_gw[0] = w.f.from_gw[1] = -1;
    mb_gateway_opts o = {0};
    o.spawn = sock_spawn;
    o.kill = fake_kill;
    o.stderr_tail = sock_tail;
    o.ctx = &w.f;
    o.init_timeout_ms = 5000;
    mb_err err;
    assert_int_equal(mb_gateway_create(&o, &w.gw, &err), 0);
    const char *argv[] = {"fake", NULL};
    mb_backend_spec spec = {argv, NULL, NULL, NULL, 0};
    assert_int_equal(mb_gateway_add(w.gw, "sb", "srv", &spec, &err), 0);
    assert_int_equal(mb_gateway_start(w.gw, "sb", "srv", 0, &err), 0);
    fake_handshake(&w.f);
    assert_int_equal(mb_gateway_start(w.gw, "sb", "srv", 5000, &err), 0);
    int known;
    w.b = mb_gw__lookup(w.gw, "sb", "srv", &known, NULL, 0);
    assert_non_null(w.b);

    /* A message far bigger than the socket takes at once: the rest waits in
     * the gateway and goes out as the server reads (EPOLLOUT on the same
     * registration that watches for input). */
    mb_gw_session *s = open_session(&w, NULL);
    mb_gw_stream *x = exchange(s);
    size_t big = 1u << 20;
    char *msg = malloc(big + 128);
    int n = snprintf(msg, 128, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"t\",\"arguments\":{\"x\":\"");
    memset(msg + n, 'a', big);
    snprintf(msg + n + big, 128, "\"}}}");
    client_says(&w, x, msg, NULL);
    free(msg);
    json_t *u = fake_read(&w.f, 10000);
    assert_non_null(u);
    assert_int_equal(strlen(json_string_value(json_object_get(
                         json_object_get(json_object_get(u, "params"), "arguments"), "x"))),
                     big);
    fake_write(&w.f, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"content\":[]}}",
               (long long)json_integer_value(json_object_get(u, "id")));
    json_decref(u);
    int resp;
    json_t *r = stream_next(&w, x, 5000, &resp);
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
    json_decref(r);

    /* The server goes away: its error quotes the tail the callback gave. */
    close(w.f.to_gw[1]);
    w.f.to_gw[1] = w.f.from_gw[0] = -1;
    json_t *md = NULL;
    int ready = 1;
    for (int i = 0; i < 300; i++) {
        json_decref(md);
        assert_int_equal(mb_gateway_info(w.gw, "sb", "srv", &md, &ready), 0);
        if (!ready) break;
        usleep(10 * 1000);
    }
    assert_false(ready);
    const char *le = json_string_value(json_object_get(md, "last_error"));
    assert_non_null(le);
    assert_non_null(strstr(le, "its stderr ended with: line one|fatal: the-tail-marker"));
    json_decref(md);
    mb_gw__stream_unref(x);
    mb_gw__sessions_end(w.gw, s, "test over");
    mb_gw__session_unref(s);
    mb_gw__backend_unref(w.b);
    mb_gateway_remove_server(w.gw, "sb", "srv");
    mb_gateway_remove_server(w.gw, "sb", "srv"); /* twice is fine */
    assert_int_equal(mb_gateway_info(w.gw, "sb", "srv", NULL, NULL), MB_ENOTFOUND);
    mb_gateway_destroy(w.gw);
    if (w.f.to_gw[1] >= 0) close(w.f.to_gw[1]);
    mb_buf_free(&w.f.pending);
}

/* ------------------------------------- routing through a real MHD daemon */

typedef struct httpd {
    mb_gateway *gw;
    struct MHD_Daemon *d;
    int port;
} httpd;

static enum MHD_Result route(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version, const char *upload,
                             size_t *upload_size, void **req_cls)
{
    (void)version;
    httpd *h = cls;
    char server[64] = "";
    const char *slash = strchr(url + 1, '/');
    if (slash && (size_t)(slash - url - 1) < sizeof server)
        memcpy(server, url + 1, (size_t)(slash - url - 1));
    const char *sb = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "local_sandbox_id");
    return mb_gateway_handle(h->gw, conn, server, sb, method, upload, upload_size, req_cls);
}

static void done(void *cls, struct MHD_Connection *c, void **req_cls,
                 enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    httpd *h = cls;
    if (*req_cls) mb_gateway_request_done(h->gw, *req_cls);
}

/* One HTTP/1.1 exchange on a fresh connection; returns the status, fills
 * body (and the session id header, if any). */
static int http(int port, const char *method, const char *path, const char *headers,
                const char *body, char *out, size_t cap, char *sid)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[8192];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n"
                     "Content-Type: application/json\r\nAccept: application/json, "
                     "text/event-stream\r\n%sContent-Length: %zu\r\n\r\n%s",
                     method, path, port, headers ? headers : "", body ? strlen(body) : 0,
                     body ? body : "");
    assert_int_equal(write(fd, req, (size_t)n), n);
    mb_buf resp = {0};
    char buf[4096];
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0) mb_buf_append(&resp, buf, (size_t)got);
    close(fd);
    int status = 0;
    sscanf(resp.data ? resp.data : "", "HTTP/1.1 %d", &status);
    const char *b = resp.data ? strstr(resp.data, "\r\n\r\n") : NULL;
    snprintf(out, cap, "%s", b ? b + 4 : "");
    if (sid) {
        sid[0] = '\0';
        const char *h = resp.data ? strcasestr(resp.data, "\r\nMcp-Session-Id: ") : NULL;
        if (h) sscanf(h + 18, "%32s", sid);
    }
    mb_buf_free(&resp);
    return status;
}

#define INIT_BODY                                                                          \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":" \
    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"

static void test_http_routing(void **state)
{
    (void)state;
    if (access("tests/integration/servers/mock_server.py", R_OK) ||
        access("/usr/bin/python3", X_OK)) {
        skip();
    }
    httpd h = {0};
    mb_gateway_opts o = {0};
    o.spawn = mb_gateway_spawn_local;
    o.kill = mb_gateway_kill_local;
    mb_err err;
    assert_int_equal(mb_gateway_create(&o, &h.gw, &err), 0);
    const char *argv[] = {"/usr/bin/python3", "tests/integration/servers/mock_server.py", NULL};
    mb_backend_spec spec = {argv, NULL, NULL, NULL, 0};
    assert_int_equal(mb_gateway_add(h.gw, "sb1", "alpha", &spec, &err), 0);
    assert_int_equal(mb_gateway_add(h.gw, "sb1", "beta", &spec, &err), 0);
    assert_int_equal(mb_gateway_add(h.gw, "sb2", "alpha", &spec, &err), 0);
    assert_int_equal(mb_gateway_start(h.gw, "sb1", "alpha", 20000, &err), 0);
    h.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
                           NULL, NULL, route, &h, MHD_OPTION_NOTIFY_COMPLETED, done, &h,
                           MHD_OPTION_END);
    assert_non_null(h.d);
    h.port = MHD_get_daemon_info(h.d, MHD_DAEMON_INFO_BIND_PORT)->port;
    char body[65536], sid[64], sid2[64];

    int st = http(h.port, "POST", "/alpha/mcp/?local_sandbox_id=nope", NULL, INIT_BODY, body,
                  sizeof body, NULL);
    assert_int_equal(st, 404);
    assert_non_null(strstr(body, "no sandbox 'nope'"));
    st = http(h.port, "POST", "/gamma/mcp?local_sandbox_id=sb1", NULL, INIT_BODY, body,
              sizeof body, NULL);
    assert_int_equal(st, 404);
    assert_non_null(strstr(body, "did not acquire the server 'gamma'"));
    assert_non_null(strstr(body, "alpha, beta"));
    st = http(h.port, "POST", "/alpha/mcp", NULL, INIT_BODY, body, sizeof body, NULL);
    assert_int_equal(st, 404);
    assert_non_null(strstr(body, "local_sandbox_id"));

    /* with and without the trailing slash */
    st = http(h.port, "POST", "/alpha/mcp/?local_sandbox_id=sb1", NULL, INIT_BODY, body,
              sizeof body, sid);
    assert_int_equal(st, 200);
    assert_int_equal(strlen(sid), 32);
    assert_non_null(strstr(body, "mock-server"));
    assert_non_null(strstr(body, "\"protocolVersion\":\"2025-06-18\""));
    st = http(h.port, "POST", "/beta/mcp?local_sandbox_id=sb1", NULL, INIT_BODY, body,
              sizeof body, sid2);
    assert_int_equal(st, 200);

    char hdr[128];
    snprintf(hdr, sizeof hdr, "Mcp-Session-Id: %s\r\n", sid);
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"echo\",\"arguments\":{\"text\":\"routed\"}}}";
    st = http(h.port, "POST", "/alpha/mcp?local_sandbox_id=sb1", hdr, call, body, sizeof body,
              NULL);
    assert_int_equal(st, 200);
    assert_non_null(strstr(body, "routed"));
    /* a session belongs to its URL */
    st = http(h.port, "POST", "/beta/mcp?local_sandbox_id=sb1", hdr, call, body, sizeof body, NULL);
    assert_int_equal(st, 404);
    st = http(h.port, "POST", "/alpha/mcp?local_sandbox_id=sb2", hdr, call, body, sizeof body, NULL);
    assert_int_equal(st, 404);

    json_t *md;
    int ready;
    assert_int_equal(mb_gateway_info(h.gw, "sb1", "alpha", &md, &ready), 0);
    assert_true(ready);
    assert_string_equal(json_string_value(json_object_get(json_object_get(md, "server_info"), "version")),
                        "1.2.3");
    assert_int_equal(json_integer_value(json_object_get(md, "tools_count")), 19);
    char sha[65];
    snprintf(sha, sizeof sha, "%s", json_string_value(json_object_get(md, "tools_sha256")));
    json_decref(md);
    assert_int_equal(mb_gateway_info(h.gw, "sb2", "alpha", &md, &ready), 0);
    assert_false(ready); /* never used */
    assert_string_equal(json_string_value(json_object_get(md, "state")), "stopped");
    json_decref(md);
    assert_int_equal(mb_gateway_info(h.gw, "sb1", "gamma", &md, &ready), MB_ENOTFOUND);

    /* reset: the process is replaced, sessions survive, the hash is stable */
    assert_int_equal(mb_gateway_restart_sandbox(h.gw, "sb1", NULL, NULL, &err), 0);
    assert_int_equal(mb_gateway_info(h.gw, "sb1", "alpha", &md, &ready), 0);
    assert_true(ready);
    assert_string_equal(json_string_value(json_object_get(md, "tools_sha256")), sha);
    json_decref(md);
    st = http(h.port, "POST", "/alpha/mcp?local_sandbox_id=sb1", hdr, call, body, sizeof body,
              NULL);
    assert_int_equal(st, 200);
    assert_non_null(strstr(body, "routed"));

    /* release: 404 for the URL and the session */
    mb_gateway_remove_sandbox(h.gw, "sb1");
    st = http(h.port, "POST", "/alpha/mcp?local_sandbox_id=sb1", hdr, call, body, sizeof body,
              NULL);
    assert_int_equal(st, 404);
    assert_non_null(strstr(body, "no sandbox 'sb1'"));
    assert_int_equal(mb_gateway_restart_sandbox(h.gw, "sb1", NULL, NULL, &err), MB_ENOTFOUND);

    mb_gateway_shutdown(h.gw);
    MHD_stop_daemon(h.d);
    mb_gateway_destroy(h.gw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_framing),
        cmocka_unit_test(test_guess_id),
        cmocka_unit_test(test_scan_splice),
        cmocka_unit_test(test_forwarded_headers),
        cmocka_unit_test(test_versions_and_errors),
        cmocka_unit_test(test_tools_hash),
        cmocka_unit_test_setup_teardown(test_id_rewriting, world_up_default, world_down),
        cmocka_unit_test_setup_teardown(test_tools_static, world_up_static, world_down),
        cmocka_unit_test_setup_teardown(test_set_tenant, world_up_default, world_down),
        cmocka_unit_test_setup_teardown(test_remove_server_retires_later, world_up_default,
                                        world_down),
        cmocka_unit_test_setup_teardown(test_tools_list_forwarded, world_up_default, world_down),
        cmocka_unit_test_setup_teardown(test_client_note_deferred, world_up_static, world_down),
        cmocka_unit_test_setup_teardown(test_client_note_bounded, world_up_default, world_down),
        cmocka_unit_test_setup_teardown(test_server_requests, world_up_default, world_down),
        cmocka_unit_test_setup_teardown(test_session_end_and_cancel, world_up_default, world_down),
        cmocka_unit_test_setup_teardown(test_timeout, world_up_short, world_down),
        cmocka_unit_test_setup_teardown(test_server_death_and_restart, world_up_default,
                                        world_down),
        cmocka_unit_test(test_shared_socket_and_stderr_tail),
        cmocka_unit_test(test_http_routing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
