/*
 * observe.c - the core's side of observability: the metrics registry and
 * the call log (made at open), the gateway's observers feeding them, the
 * timing of life-cycle operations, and GET /metrics' scrape-time gauges
 * (sandboxes by status and profile, the warm pool, per-sandbox cgroup
 * figures). docs/OBSERVABILITY.md describes what is exported.
 */
#include "core/core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void mb_core__observe_open(mb_core *core)
{
    if (!core->cfg.metrics_off) core->metrics = mb_metrics_new();
    core->calls = mb_calllog_new((size_t)(core->cfg.call_log_entries > 0
                                              ? core->cfg.call_log_entries : 0));
    mb_core__sandboxes_changed(core);
}

void mb_core__observe_close(mb_core *core)
{
    mb_metrics_free(core->metrics);
    mb_calllog_free(core->calls);
    core->metrics = NULL;
    core->calls = NULL;
}

int64_t mb_core__op_start(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void mb_core__op_done(mb_core *core, mb_metrics_op op, int64_t started, int rc)
{
    mb_metrics_op_done(core->metrics, op, mb_core__op_start() - started, rc == MB_OK);
}

void mb_core__sandboxes_changed(mb_core *core)
{
    if (!core->metrics || !core->store) return;
    size_t live = 0;
    if (mb_store_sandbox_count(core->store, NULL, &live, NULL) != MB_OK) return;
    mb_metrics_sandboxes_now(core->metrics, live);
}

/* ------------------------------------------------------ gateway observers */

void mb_core__on_call(void *ctx, const mb_gateway_call *c)
{
    mb_core *core = ctx;
    if (core->metrics) {
        /* Bounded labels: a tool the server did not list counts as "other". */
        const char *tool = c->tool ? (c->tool_listed ? c->tool : "other") : NULL;
        if (!c->tool && !strcmp(c->method, "tools/call")) tool = "other";
        mb_metrics_call(core->metrics, c->server, c->method, tool, c->micros,
                        (mb_metrics_outcome)c->outcome);
    }
    if (mb_calllog_enabled(core->calls)) {
        mb_call_record r = {
            .time = c->started,
            .server = c->server,
            .method = c->method,
            .tool = c->tool,
            .arg_bytes = c->arg_bytes,
            .result_bytes = c->result_bytes,
            .micros = c->micros,
            .outcome = (mb_metrics_outcome)c->outcome,
            .error = c->error,
            .request_id = c->request_id,
        };
        mb_calllog_add(core->calls, c->sandbox_id, &r);
    }
}

void mb_core__on_restart(void *ctx, const char *sandbox_id, const char *server)
{
    mb_core *core = ctx;
    mb_metrics_restart(core->metrics, server);
}

/* ------------------------------------------------------------- scraping */

int mb_core_sandbox_stats(mb_core *core, const char *owner, const char *id,
                          mb_sandbox_stats *out, mb_err *err)
{
    mb_sandbox_rec rec;
    int rc = mb_core_get(core, owner, id, &rec, err);
    if (rc) return rc;
    mb_live *l = mb_core__live_get(core, id);
    if (!l) return mb_err_set(err, MB_ENOTFOUND, "sandbox %s is not running", id);
    rc = mb_sandbox_stats_get(l->sb, out, err);
    mb_core__live_put(core, l);
    return rc;
}

static void sandboxes_by_status(mb_core *core, mb_sandbox_rec *recs, size_t n, mb_buf *out)
{
    static const char *const statuses[] = {"occupied", "idle", "error"};
    mb_expo_family(out, "mcpbox_sandboxes", "gauge",
                   "Sandboxes not released, by status and profile (benchmark; none = no "
                   "benchmark).");
    size_t np = core->n_profiles ? core->n_profiles : 1;
    for (size_t p = 0; p < np; p++) {
        const char *profile = core->n_profiles ? core->profiles[p]->name : MB_PROFILE_DEFAULT;
        for (size_t s = 0; s < 3; s++) {
            uint64_t k = 0;
            for (size_t i = 0; i < n; i++) {
                const char *b = recs[i].benchmark[0] ? recs[i].benchmark : MB_PROFILE_DEFAULT;
                k += !strcmp(b, profile) && !strcmp(recs[i].status, statuses[s]);
            }
            const char *lab[] = {"status", statuses[s], "profile", profile, NULL};
            mb_expo_sample_u64(out, "mcpbox_sandboxes", lab, k);
        }
    }
}

static void pool_gauges(mb_core *core, mb_buf *out)
{
    static const struct {
        const char *name, *type, *help;
    } fam[] = {
        {"mcpbox_pool_target", "gauge", "Idle sandboxes the warm pool keeps per profile."},
        {"mcpbox_pool_idle", "gauge", "Idle sandboxes ready in the warm pool."},
        {"mcpbox_pool_creating", "gauge", "Sandboxes the warm pool is building now."},
        {"mcpbox_pool_claims_total", "counter", "Acquires served from the warm pool."},
        {"mcpbox_pool_misses_total", "counter", "Acquires that found the warm pool empty."},
        {"mcpbox_pool_failures_total", "counter", "Pool sandboxes that failed to build."},
    };
    for (size_t f = 0; f < sizeof fam / sizeof *fam; f++) {
        mb_expo_family(out, fam[f].name, fam[f].type, fam[f].help);
        for (size_t i = 0; core->pool && i < core->n_profiles; i++) {
            mb_pool_stats st;
            if (mb_pool_stats_get(core->pool, core->profiles[i]->name, &st) != MB_OK) continue;
            uint64_t v[] = {st.target, st.idle, st.creating, st.claimed, st.misses, st.failures};
            const char *lab[] = {"profile", core->profiles[i]->name, NULL};
            mb_expo_sample_u64(out, fam[f].name, lab, v[f]);
        }
    }
}

static void sandbox_gauges(mb_core *core, const char *owner, mb_sandbox_rec *recs, size_t n,
                           mb_buf *out)
{
    enum { MEM, MEM_LIMIT, PIDS, CPU, DISK, DISK_LIMIT, NF };
    static const struct {
        const char *name, *type, *help;
    } fam[NF] = {
        {"mcpbox_sandbox_memory_bytes", "gauge", "Memory charged to the sandbox's cgroup."},
        {"mcpbox_sandbox_memory_limit_bytes", "gauge", "The sandbox's memory limit."},
        {"mcpbox_sandbox_pids", "gauge", "Processes and threads in the sandbox's cgroup."},
        {"mcpbox_sandbox_cpu_seconds_total", "counter", "CPU time used by the sandbox."},
        {"mcpbox_sandbox_workspace_bytes", "gauge", "Bytes used on the sandbox's workspace."},
        {"mcpbox_sandbox_workspace_limit_bytes", "gauge", "The sandbox's workspace quota."},
    };
    /* Figures first (they read cgroup files), then one family at a time. */
    mb_sandbox_stats *st = mb_calloc(n ? n : 1, sizeof *st);
    int *ok = mb_calloc(n ? n : 1, sizeof *ok);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(recs[i].owner, owner) || strcmp(recs[i].status, "occupied")) continue;
        mb_live *l = mb_core__live_get(core, recs[i].id);
        if (!l) continue;
        ok[i] = mb_sandbox_stats_get(l->sb, &st[i], NULL) == MB_OK;
        mb_core__live_put(core, l);
    }
    for (int f = 0; f < NF; f++) {
        mb_expo_family(out, fam[f].name, fam[f].type, fam[f].help);
        for (size_t i = 0; i < n; i++) {
            if (!ok[i]) continue;
            const char *lab[] = {"sandbox", recs[i].id, "profile",
                                 recs[i].benchmark[0] ? recs[i].benchmark : MB_PROFILE_DEFAULT,
                                 NULL};
            double v = 0;
            switch (f) {
            case MEM: v = (double)st[i].memory_bytes; break;
            case MEM_LIMIT: v = (double)st[i].memory_limit_bytes; break;
            case PIDS: v = st[i].pids; break;
            case CPU: v = (double)st[i].cpu_usage_ns / 1e9; break;
            case DISK: v = (double)st[i].disk_used_bytes; break;
            case DISK_LIMIT: v = (double)st[i].disk_limit_bytes; break;
            }
            mb_expo_sample(out, fam[f].name, lab, v);
        }
    }
    free(st);
    free(ok);
}

void mb_core_metrics(mb_core *core, const char *owner, mb_buf *out)
{
    mb_sandbox_rec *recs = NULL;
    size_t n = 0;
    if (mb_store_sandbox_list(core->store, NULL, &recs, &n, NULL) != MB_OK) n = 0;
    mb_expo_family(out, "mcpbox_up", "gauge", "1 while the daemon serves.");
    mb_expo_sample_u64(out, "mcpbox_up", NULL, 1);
    sandboxes_by_status(core, recs, n, out);
    pool_gauges(core, out);
    if (core->metrics) mb_metrics_write(core->metrics, out);
    sandbox_gauges(core, owner, recs, n, out);
    free(recs);
}

json_t *mb_core_metrics_history(mb_core *core)
{
    if (!core->metrics) return json_object();
    return mb_metrics_history(core->metrics, mb_now());
}

/* ------------------------------------------------------------- call log */

int mb_core_calls(mb_core *core, const char *owner, const char *id, uint64_t after,
                  size_t limit, json_t **out, mb_err *err)
{
    mb_sandbox_rec rec;
    int rc = mb_core_get(core, owner, id, &rec, err);
    if (rc) return rc;
    *out = mb_calllog_json(core->calls, id, after, limit);
    return MB_OK;
}

int mb_core_dump_calls(mb_core *core, const char *owner, const char *id, mb_err *err)
{
    mb_sandbox_rec rec;
    mb_sblock *lock;
    int rc = mb_core__lock_rec(core, owner, id, &rec, &lock, err);
    if (rc) return rc;
    char *dir = mb_core__path_blob(core, id, NULL);
    mb_mkdir_p(dir, 0700, NULL);
    char *path = mb_core__path_blob(core, id, "calls.jsonl");
    mb_buf b = {0};
    mb_calllog_jsonl(core->calls, id, &b);
    rc = mb_write_file_atomic(path, b.data ? b.data : "", b.len, 0600, err);
    mb_buf_free(&b);
    free(path);
    free(dir);
    mb_core__unlock(core, lock);
    return rc;
}

int mb_core_open_calls(mb_core *core, const char *id, int *fd, uint64_t *size, mb_err *err)
{
    char *path = mb_core__path_blob(core, id, "calls.jsonl");
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    free(path);
    if (*fd < 0)
        return mb_err_set(err, MB_ENOTFOUND, "No call log was dumped for this sandbox: call GET "
                          "/local-sandbox/%s/dump?include_calls=true first", id);
    struct stat st;
    fstat(*fd, &st);
    *size = (uint64_t)st.st_size;
    return MB_OK;
}
