/*
 * observe.c - what the gateway tells its on_call observer (metrics and the
 * call log in the daemon): per forwarded request, the tool, the argument and
 * result sizes, the latency and how it ended. Costs nothing without an
 * observer.
 */
#include "gateway/gateway_int.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t mb_gw__now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int tool_listed_locked(mb_gw_backend *b, const char *name)
{
    mb_assert_held(&b->lock);
    if (!b->tools_known || !json_is_array(b->tools_acc)) return 0;
    size_t i;
    json_t *t;
    json_array_foreach(b->tools_acc, i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n && !strcmp(n, name)) return 1;
    }
    return 0;
}

static int json_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Whether a tools/call result object (text s[r.off .. r.off+r.len)) has
 * "isError": true. A small result is scanned; a big one (a file's text, a
 * page) is only looked at where every MCP SDK writes isError, as its first or
 * its last member, so that observing a call never costs a second pass over
 * megabytes the gateway already framed. */
int mb_gw__result_is_error(const char *s, mb_gw_span r)
{
    if (!r.len) return 0;
    if (r.len <= 4096) {
        static const char *const keys[1] = {"isError"};
        mb_gw_span v = {0, 0};
        if (mb_gw__scan(s + r.off, r.len, keys, 1, &v) < 0) return 0;
        return v.len == 4 && !memcmp(s + r.off + v.off, "true", 4);
    }
    const char *b = s + r.off, *e = b + r.len, *q;
    /* last member: ... ("," | "{") ws "isError" ws ":" ws "true" ws "}" */
    while (e > b && json_ws(e[-1])) e--;
    if (e > b && e[-1] == '}') {
        e--;
        while (e > b && json_ws(e[-1])) e--;
        if (e - b >= 4 && !memcmp(e - 4, "true", 4)) {
            e -= 4;
            while (e > b && json_ws(e[-1])) e--;
            if (e > b && e[-1] == ':') {
                e--;
                while (e > b && json_ws(e[-1])) e--;
                if (e - b >= 9 && !memcmp(e - 9, "\"isError\"", 9)) {
                    e -= 9;
                    while (e > b && json_ws(e[-1])) e--;
                    if (e > b && (e[-1] == ',' || e[-1] == '{')) return 1;
                }
            }
        }
    }
    /* first member: "{" ws "isError" ws ":" ws "true" ws ("," | "}") */
    q = b;
    e = b + r.len;
    if (q < e && *q == '{') q++;
    else return 0;
    while (q < e && json_ws(*q)) q++;
    if (e - q < 9 || memcmp(q, "\"isError\"", 9)) return 0;
    q += 9;
    while (q < e && json_ws(*q)) q++;
    if (q >= e || *q++ != ':') return 0;
    while (q < e && json_ws(*q)) q++;
    if (e - q < 4 || memcmp(q, "true", 4)) return 0;
    q += 4;
    while (q < e && json_ws(*q)) q++;
    return q < e && (*q == ',' || *q == '}');
}

void mb_gw__observe_begin_locked(mb_gw_pending *p, const mb_gw_cmsg *m)
{
    mb_gw_backend *b = p->b;
    mb_assert_held(&b->lock);
    if (!b->gw->opts.on_call) return;
    struct mb_gw_observed *o = &p->obs;
    o->on = 1;
    o->started_us = mb_gw__now_us();
    o->started = mb_now();
    snprintf(o->request_id, sizeof o->request_id, "%s", mb_log_request_id());
    static const char *const keys[1] = {"params"};
    mb_gw_span params = {0, 0};
    if (mb_gw__scan(m->raw, m->raw_len, keys, 1, &params) < 0) params.len = 0;
    o->arg_bytes = params.len;
    if (!strcmp(p->method, "tools/call")) {
        json_t *name = json_object_get(json_object_get(m->j, "params"), "name");
        const char *n = json_string_value(name);
        if (n) {
            size_t len = json_string_length(name);
            mb_utf8_copy(o->tool, sizeof o->tool, n, len);
            o->tool_listed = len < sizeof o->tool && memchr(n, 0, len) == NULL &&
                             tool_listed_locked(b, n);
        }
        static const char *const akeys[1] = {"arguments"};
        mb_gw_span args = {0, 0};
        if (params.len &&
            mb_gw__scan(m->raw + params.off, params.len, akeys, 1, &args) >= 0)
            o->arg_bytes = args.len;
    }
}

void mb_gw__observe_locked(mb_gw_pending *p, int outcome, size_t result_bytes,
                           const char *error)
{
    mb_gw_backend *b = p->b;
    mb_assert_held(&b->lock);
    if (!p->obs.on || p->kind != MB_GW_PEND_CALL || !b->gw->opts.on_call) return;
    p->obs.on = 0; /* once */
    mb_gateway_call c = {
        .sandbox_id = b->sandbox_id,
        .server = b->server,
        .method = p->method,
        .tool = p->obs.tool[0] ? p->obs.tool : NULL,
        .tool_listed = p->obs.tool_listed,
        .arg_bytes = p->obs.arg_bytes,
        .result_bytes = result_bytes,
        .started = p->obs.started,
        .micros = mb_gw__now_us() - p->obs.started_us,
        .outcome = outcome,
        .error = error,
        .request_id = p->obs.request_id,
    };
    b->gw->opts.on_call(b->gw->opts.ctx, &c);
}
