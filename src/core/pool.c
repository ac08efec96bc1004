/*
 * pool.c - the warm pool as the core feeds it: how a pool sandbox is made
 * (its record and options), readied (seeded, registered, servers started),
 * unreadied and retired, and the pool's figures for /health.
 */
#define _GNU_SOURCE
#include "core/core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A pool sandbox is readied like an acquired one, before anyone asks: its
 * benchmark's seed in /data, in the table of running sandboxes, and every
 * server of its profile started and initialized. Acquiring it then only
 * claims it, updates its record and stops the servers the request did not
 * name (mb_core__servers_up). */
typedef struct pool_cookie {
    char id[37];
    int64_t uid_base;
    mb_sb_paths paths;
    int live; /* in core->live and the gateway (prepared) */
} pool_cookie;

int mb_core__pool_claim(mb_core *core, const char *key, mb_sandbox_rec *rec, mb_sandbox **sb)
{
    void *cookie = NULL;
    if (!core->pool || mb_pool_claim(core->pool, key, sb, &cookie) != MB_OK) return MB_ENOTFOUND;
    pool_cookie *c = cookie;
    snprintf(rec->id, sizeof rec->id, "%s", c->id);
    rec->uid_base = c->uid_base;
    mb_core__sb_paths_free(&c->paths);
    free(c);
    return MB_OK;
}

static int pool_make_opts(void *ctx, const char *key, mb_sandbox_opts *opts, void **cookie,
                          mb_err *err)
{
    mb_core *core = ctx;
    const mb_profile *p = mb_core__profile(core, key);
    if (!p) return mb_err_set(err, MB_ENOTFOUND, "no profile '%s'", key);
    pool_cookie *c = mb_calloc(1, sizeof *c);
    mb_sandbox_rec rec = {0};
    mb_uuid4_tagged(rec.id, core->cfg.node);
    snprintf(rec.status, sizeof rec.status, "idle");
    snprintf(rec.benchmark, sizeof rec.benchmark, "%s",
             strcmp(key, MB_PROFILE_DEFAULT) ? key : "");
    rec.created_at = rec.updated_at = mb_now();
    rec.ttl_seconds = -1;
    int rc = mb_core__insert_record(core, &rec, err);
    if (rc) {
        free(c);
        return rc;
    }
    snprintf(c->id, sizeof c->id, "%s", rec.id);
    c->uid_base = rec.uid_base;
    mb_core__sb_opts(core, c->id, c->uid_base, p, opts, &c->paths);
    *cookie = c;
    return MB_OK;
}

static int pool_prepare(void *ctx, const char *key, mb_sandbox *sb, void *cookie, mb_err *err)
{
    mb_core *core = ctx;
    pool_cookie *c = cookie;
    const mb_profile *p = mb_core__profile(core, key);
    if (!p) return mb_err_set(err, MB_ENOTFOUND, "no profile '%s'", key);
    mb_sandbox_rec rec = {0};
    snprintf(rec.id, sizeof rec.id, "%s", c->id);
    rec.uid_base = c->uid_base;
    snprintf(rec.benchmark, sizeof rec.benchmark, "%s",
             strcmp(key, MB_PROFILE_DEFAULT) ? key : "");
    int rc = mb_core__seed(core, &rec, err);
    if (rc) return rc;
    mb_core__live_add(core, c->id, sb, p);
    c->live = 1;
    /* Started in parallel, then waited for; a server that fails here is
     * tried again when the sandbox is acquired. */
    mb_start_job *jobs = mb_calloc(p->nservers ? p->nservers : 1, sizeof *jobs);
    for (size_t i = 0; i < p->nservers; i++)
        jobs[i] = (mb_start_job){.core = core, .id = c->id, .ps = &p->servers[i]};
    mb_core__start_servers(jobs, p->nservers);
    for (size_t i = 0; i < p->nservers; i++) {
        mb_err e2;
        if (!jobs[i].ok)
            mb_debug("pool %s: %s: %s", key, p->servers[i].name, jobs[i].err.msg);
        else if (mb_gateway_start(core->gw, c->id, p->servers[i].name,
                                  core->cfg.start_timeout_s * 1000, &e2) != MB_OK)
            mb_debug("pool %s: %s: %s", key, p->servers[i].name, e2.msg);
    }
    free(jobs);
    return MB_OK;
}

static void pool_unprepare(void *ctx, const char *key, mb_sandbox *sb, void *cookie)
{
    mb_core *core = ctx;
    pool_cookie *c = cookie;
    if (!c->live) return;
    mb_gateway_remove_sandbox(core->gw, c->id);
    mb_core__egress_release(core, c->id);
    free(mb_core__live_take(core, c->id)); /* the pool destroys the sandbox itself */
    c->live = 0;
}

static void pool_retire(void *ctx, const char *key, void *cookie)
{
    mb_core *core = ctx;
    pool_cookie *c = cookie;
    mb_core__mark_released(core, c->id);
    mb_core__sb_paths_free(&c->paths);
    free(c);
}

int mb_core__pool_open(mb_core *core, mb_err *err)
{
    if (core->cfg.pool_all < 0 && core->cfg.n_pools == 0) return MB_OK;
    mb_pool_factory f = {.make_opts = pool_make_opts, .prepare = pool_prepare,
                         .unprepare = pool_unprepare, .retire = pool_retire, .ctx = core};
    int rc = mb_pool_new(&f, &core->pool, err);
    for (size_t i = 0; !rc && core->cfg.pool_all > 0 && i < core->n_profiles; i++)
        rc = mb_pool_set_target(core->pool, core->profiles[i]->name,
                                (unsigned)core->cfg.pool_all, err);
    for (size_t i = 0; !rc && i < core->cfg.n_pools; i++) {
        if (!mb_core__profile(core, core->cfg.pools[i].preset))
            return mb_err_set(err, MB_EINVAL, "--pool %s=...: there is no profile '%s' in %s",
                              core->cfg.pools[i].preset, core->cfg.pools[i].preset,
                              core->profiles_dir);
        rc = mb_pool_set_target(core->pool, core->cfg.pools[i].preset,
                                (unsigned)atoi(core->cfg.pools[i].dir), err);
    }
    return rc;
}

json_t *mb_core_pool_info(mb_core *core)
{
    if (!core->pool) return NULL;
    json_t *o = json_object();
    for (size_t i = 0; i < core->n_profiles; i++) {
        mb_pool_stats st;
        if (mb_pool_stats_get(core->pool, core->profiles[i]->name, &st) != MB_OK) continue;
        json_t *k = json_pack("{s:i,s:i,s:i,s:I,s:I,s:I}", "target", (int)st.target, "idle",
                              (int)st.idle, "creating", (int)st.creating, "claimed",
                              (json_int_t)st.claimed, "misses", (json_int_t)st.misses,
                              "failures", (json_int_t)st.failures);
        if (st.last_error[0]) json_object_set_new(k, "last_error", json_string(st.last_error));
        json_object_set_new(o, core->profiles[i]->name, k);
    }
    return o;
}
