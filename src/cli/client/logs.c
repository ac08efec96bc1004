/*
 * logs.c - `mcpbox logs ID [SERVER] [-f]`: the call log of a sandbox (every
 * MCP request through the gateway), from GET /local-sandbox/{id}/calls.
 *
 * Shape read (the observe work's call log, docs/OBSERVABILITY.md there):
 * {"calls": [CALL...], "next": SEQ, "dropped": N, "enabled": BOOL}, oldest
 * first, where a CALL's members are all optional: seq (an increasing
 * integer), time (ISO 8601 text or unix seconds), server, method, tool,
 * latency_ms (or duration_ms), outcome (ok, tool_error, error, failed),
 * error (its message, or null), arguments_bytes and result_bytes.
 * ?after=SEQ asks for newer calls when following, ?server=S for one
 * server's; calls are filtered and de-duplicated here as well, so a daemon
 * that ignores either still gives the right lines.
 * The REST API exposes no server stderr; the daemon's log has it.
 */
#include "cli/cli.h"
#include "cli/client/client.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static json_int_t call_seq(const json_t *c)
{
    const json_t *v = json_object_get(c, "seq");
    return json_is_integer(v) ? json_integer_value(v) : -1;
}

static void call_time(const json_t *c, char out[32])
{
    const json_t *t = json_object_get(c, "time");
    if (!t) t = json_object_get(c, "ts");
    if (json_is_number(t)) {
        double v = json_number_value(t);
        time_t secs = (time_t)v;
        struct tm tm;
        if (v > 0 && v < 1e11 && localtime_r(&secs, &tm)) {
            char hms[16];
            strftime(hms, sizeof hms, "%H:%M:%S", &tm);
            snprintf(out, 32, "%s.%03d", hms, (int)((v - (double)secs) * 1000) % 1000);
            return;
        }
    } else if (json_is_string(t)) {
        const char *s = json_string_value(t), *tee = strchr(s, 'T');
        snprintf(out, 32, "%.12s", tee ? tee + 1 : s);
        return;
    }
    snprintf(out, 32, "-");
}

/* A size member under its name or its older name, or -1. */
static long long size_of(const json_t *c, const char *name, const char *alt)
{
    const json_t *v = json_object_get(c, name);
    if (!json_is_integer(v)) v = json_object_get(c, alt);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static void print_call(const json_t *c)
{
    char when[32], dur[32], sizes[64];
    call_time(c, when);
    const json_t *d = json_object_get(c, "latency_ms");
    if (!d) d = json_object_get(c, "duration_ms");
    if (json_is_number(d)) snprintf(dur, sizeof dur, "%.1f ms", json_number_value(d));
    else snprintf(dur, sizeof dur, "-");
    long long in = size_of(c, "arguments_bytes", "request_bytes");
    long long out = size_of(c, "result_bytes", "response_bytes");
    if (in >= 0 || out >= 0)
        snprintf(sizes, sizeof sizes, "%lld>%lld B", in < 0 ? 0 : in, out < 0 ? 0 : out);
    else
        snprintf(sizes, sizeof sizes, "-");
    const json_t *err = json_object_get(c, "error");
    const char *outcome = mb_cl_str(c, "outcome");
    const char *emsg = json_is_string(err) ? json_string_value(err) : "";
    if (!*outcome) outcome = *emsg || (err && !json_is_null(err)) ? "error" : "ok";
    const char *what = mb_cl_str(c, "tool");
    char *line = mb_asprintf("%s  %-18s %-16s %-28s %10s  %14s  %s%s%s", when,
                             mb_cl_str(c, "server"), mb_cl_str(c, "method"), *what ? what : "-",
                             dur, sizes, outcome, *emsg ? ": " : "", emsg);
    char *clean = mb_cl_clean(line, 0);
    printf("%s\n", clean);
    free(clean);
    free(line);
}

typedef struct logs_opts {
    int follow;
} logs_opts;

static int logs_opt(void *ctx, int c, const char *arg)
{
    (void)arg;
    if (c != 'f') return -1;
    ((logs_opts *)ctx)->follow = 1;
    return 0;
}

int mb_cmd_logs(int argc, char **argv)
{
    static const char usage[] =
        "usage: mcpbox logs ID [SERVER] [-f]\n"
        "Shows the sandbox's call log: each MCP request through the gateway (time, server,\n"
        "method, tool, duration, sizes, outcome), from GET /local-sandbox/ID/calls.\n"
        "  -f, --follow    keep printing new calls until interrupted\n";
    static const struct option extra[] = {
        {"follow", no_argument, NULL, 'f'},
        {NULL, 0, NULL, 0},
    };
    static const mb_cl_cmd cmd = {"logs", usage, "f", extra, logs_opt, 1, 2,
                                  "a sandbox id and optionally a server"};
    mb_cl cl;
    logs_opts o = {0};
    int rc = mb_cl_start(&cl, &cmd, argc, argv, &o);
    if (rc >= 0) goto out;
    int n = argc - optind;
    const char *server = n == 2 ? argv[optind + 1] : NULL;
    if (server && !mb_cl_valid_name(server)) {
        rc = mb_cl_fail(&cl, MB_CL_USAGE, "'%s' is not a server name", server);
        goto out;
    }
    char *id = NULL;
    rc = mb_cl_resolve_id(&cl, argv[optind], &id);
    json_t *info = NULL;
    if (!rc) {
        char *path = mb_asprintf("/local-sandbox/%s", id);
        rc = mb_cl_api(&cl, "GET", path, NULL, id, &info);
        free(path);
    }
    json_decref(info);
    if (rc) goto done;
    if (o.follow) {
        struct sigaction sa = {0};
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    json_int_t last = -1;
    size_t seen_unnumbered = 0;
    int warned = 0;
    json_t *all = json_array();
    do {
        mb_buf path = {0};
        mb_buf_printf(&path, "/local-sandbox/%s/calls", id);
        char sep = '?';
        if (server) {
            mb_buf_printf(&path, "%cserver=%s", sep, server);
            sep = '&';
        }
        if (last >= 0) mb_buf_printf(&path, "%cafter=%lld", sep, (long long)last);
        json_t *res = NULL;
        cl.quiet_404 = 1;
        rc = mb_cl_api(&cl, "GET", path.data, NULL, id, &res);
        cl.quiet_404 = 0;
        mb_buf_free(&path);
        if (rc == MB_CL_NOTFOUND) {
            rc = mb_cl_fail(&cl, MB_CL_NOTFOUND, "the daemon at %s keeps no call log for %s (GET "
                            "/local-sandbox/%s/calls answered 404: released meanwhile, or a "
                            "daemon without the call log)", cl.url, id, id);
            break;
        }
        if (rc) break;
        const json_t *calls = json_object_get(res, "calls");
        if (json_is_false(json_object_get(res, "enabled")) && !warned) {
            mb_cl_fail(&cl, 0, "the daemon at %s keeps no call log (it runs with --call-log 0)",
                       cl.url);
            warned = 1;
        }
        const json_t *dropped = json_object_get(res, "dropped");
        if (json_is_integer(dropped) && json_integer_value(dropped) > 0 && !warned && !cl.json) {
            mb_cl_fail(&cl, 0, "%lld older calls were dropped from the log (--call-log keeps "
                       "the newest)", (long long)json_integer_value(dropped));
            warned = 1;
        }
        if (!json_is_array(calls)) {
            rc = mb_cl_fail(&cl, MB_CL_FAIL, "the call log answer has no calls array");
            json_decref(res);
            break;
        }
        size_t i, unnumbered = 0;
        const json_t *c;
        json_array_foreach(calls, i, c) {
            if (!json_is_object(c)) continue;
            json_int_t seq = call_seq(c);
            if (seq >= 0) {
                if (seq <= last) continue;
                last = seq;
            } else if (unnumbered++ < seen_unnumbered) {
                continue;
            }
            if (server && strcmp(mb_cl_str(c, "server"), server)) continue;
            if (cl.json && !o.follow) json_array_append(all, (json_t *)c);
            else if (cl.json) {
                char *line = json_dumps(c, JSON_COMPACT | JSON_REAL_PRECISION(15));
                if (line) printf("%s\n", line);
                free(line);
            } else print_call(c);
        }
        if (unnumbered > seen_unnumbered) seen_unnumbered = unnumbered;
        json_decref(res);
        fflush(stdout);
        for (int t = 0; o.follow && !stop && t < 10; t++) usleep(100 * 1000);
    } while (o.follow && !stop);
    if (!rc && cl.json && !o.follow) {
        json_t *doc = json_pack("{s:O}", "calls", all);
        mb_cl_print_json(doc);
        json_decref(doc);
    }
    json_decref(all);
done:
    free(id);
out:
    mb_cl_free(&cl);
    return rc;
}
