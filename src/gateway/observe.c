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
