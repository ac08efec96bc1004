/*
 * core.c - opening and closing the service core, and the sandbox life cycle:
 * acquire, get, release, reset. Archive traffic is in transfer.c, the TTL
 * reaper in reaper.c.
 */
#define _GNU_SOURCE
#include "core/core_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

mb_store *mb_core_store(mb_core *core) { return core->store; }
const mb_config *mb_core_config(mb_core *core) { return &core->cfg; }

/* Adds MCPBOX_API_KEY to the store, so that tests and dev setups need no
 * `mcpbox keys create`. */
static int add_env_key(mb_core *core, mb_err *err)
{
    if (!core->cfg.env_api_key) return MB_OK;
    mb_key_rec k = {0};
    mb_uuid4(k.id);
    snprintf(k.owner, sizeof k.owner, "%s", core->cfg.env_api_key_owner);
    snprintf(k.name, sizeof k.name, "MCPBOX_API_KEY");
    snprintf(k.prefix, sizeof k.prefix, "%.8s", core->cfg.env_api_key);
    k.created_at = mb_now();
    char hash[65];
    mb_key_hash(core->cfg.env_api_key, hash);
    return mb_store_key_add(core->store, hash, &k, err);
}

/* Releases sandboxes whose deadline passed while the daemon was down. */
static void expire_overdue(mb_core *core)
{
    mb_sandbox_rec *recs;
    size_t n;
    if (mb_store_sandbox_expired(core->store, mb_now(), &recs, &n, NULL) != MB_OK) return;
    for (size_t i = 0; i < n; i++) {
        mb_err err;
        if (mb_core__release(core, recs[i].id, 1, &err) == MB_OK)
            mb_info("released %s: its TTL expired while the service was down", recs[i].id);
        else
            mb_warn("cannot release expired sandbox %s: %s", recs[i].id, err.msg);
    }
    free(recs);
}

int mb_core_open(const mb_config *cfg, mb_core **out, mb_err *err)
{
    mb_core *core = mb_calloc(1, sizeof *core);
    core->cfg = *cfg;
    pthread_mutex_init(&core->locks_lock, NULL);
    pthread_mutex_init(&core->quota_lock, NULL);
    pthread_mutex_init(&core->reaper_lock, NULL);
    pthread_cond_init(&core->wake, NULL);
    pthread_mutex_init(&core->alloc_lock, NULL);
    pthread_mutex_init(&core->live_lock, NULL);
    pthread_cond_init(&core->live_cv, NULL);

    core->public_url = cfg->public_url ? mb_strdup(cfg->public_url)
                                       : mb_asprintf("http://%s", cfg->listen);
    /* The data dir and run/, workspaces/ are searchable (0711) because a
     * sandbox's init, an unprivileged uid on the host, reaches its control
     * socket and workspace through them; nothing in them is listable. */
    int rc = mb_mkdir_p(cfg->data_dir, 0711, err);
    if (!rc) {
        core->data_dir = realpath(cfg->data_dir, NULL);
        if (!core->data_dir) rc = mb_err_sys(err, errno, "cannot resolve %s", cfg->data_dir);
        else core->cfg.data_dir = core->data_dir;
    }
    static const struct { const char *name; mode_t mode; } sub[] = {
        {"", 0711}, {"workspaces", 0711}, {"run", 0711}, {"blobs", 0700},
    };
    for (size_t i = 0; !rc && i < sizeof sub / sizeof *sub; i++) {
        char *p = mb_core__path_top(core, sub[i].name);
        rc = mb_mkdir_p(p, sub[i].mode, err);
        if (!rc && chmod(p, sub[i].mode) != 0) rc = mb_err_sys(err, errno, "cannot chmod %s", p);
        free(p);
    }
    if (!rc) {
        char *db = cfg->db ? mb_strdup(cfg->db) : mb_core__path_top(core, "mcpbox.db");
        rc = mb_store_open(db, &core->store, err);
        free(db);
        /* Before adoption and the reaper: they see this node's sandboxes only. */
        if (!rc && cfg->node >= 0) mb_store_set_node(core->store, cfg->node);
    }
    if (!rc) rc = mb_secret_load(core->data_dir, core->secret, err);
    if (!rc) rc = add_env_key(core, err);
    if (!rc) mb_core__observe_open(core);
    if (!rc && !cfg->no_runtime) {
        core->runtime_open = 1;
        rc = mb_core__runtime_open(core, err);
    }
    if (!rc) expire_overdue(core);
    if (!rc) rc = mb_core__start_reaper(core, err);
    if (rc) {
        mb_core_close(core);
        return rc;
    }
    *out = core;
    return MB_OK;
}

int mb_core_start(mb_core *core, mb_err *err)
{
    mb_assert(!core->started);
    core->started = 1;
    return core->runtime_open ? mb_core__pool_open(core, err) : MB_OK;
}

void mb_core_close(mb_core *core)
{
    if (!core) return;
    mb_core__stop_reaper(core);
    if (core->runtime_open) mb_core__runtime_close(core);
    mb_core__observe_close(core);
    mb_store_close(core->store);
    pthread_mutex_destroy(&core->locks_lock);
    mb_core__quota_free(core);
    pthread_mutex_destroy(&core->quota_lock);
    pthread_mutex_destroy(&core->reaper_lock);
    pthread_cond_destroy(&core->wake);
    pthread_mutex_destroy(&core->alloc_lock);
    pthread_mutex_destroy(&core->live_lock);
    pthread_cond_destroy(&core->live_cv);
    free(core->public_url);
    free(core->data_dir);
    free(core);
}

const char *mb_core_public_url(mb_core *core) { return core->public_url; }

void mb_core_set_public_url(mb_core *core, const char *url)
{
    free(core->public_url);
    core->public_url = mb_strdup(url);
    size_t n = strlen(core->public_url);
    while (n && core->public_url[n - 1] == '/') core->public_url[--n] = '\0';
}

char *mb_core_mcp_url(mb_core *core, const char *server, const char *id)
{
    return mb_asprintf("%s/%s/mcp/?local_sandbox_id=%s", core->public_url, server, id);
}

char *mb_core_signed_url(mb_core *core, const char *method, const char *path)
{
    char q[160];
    int64_t expires = (int64_t)mb_now() + (int64_t)core->cfg.url_ttl_minutes * 60;
    mb_sign(core->secret, method, path, expires, q, sizeof q);
    return mb_asprintf("%s%s?%s", core->public_url, path, q);
}

int mb_core_verify_url(mb_core *core, const char *method, const char *path, const char *expires,
                       const char *signature, mb_err *err)
{
    return mb_verify(core->secret, method, path, expires, signature, (int64_t)mb_now(), err);
}

static int acquire(mb_core *core, const mb_acquire_req *req, mb_sandbox_rec *out, mb_err *err);

int mb_core_acquire(mb_core *core, const mb_acquire_req *req, mb_sandbox_rec *out, mb_err *err)
{
    int64_t t0 = mb_core__op_start();
    int rc = acquire(core, req, out, err);
    mb_core__op_done(core, MB_METRICS_ACQUIRE, t0, rc);
    if (!rc) mb_core__sandboxes_changed(core);
    return rc;
}

static int acquire(mb_core *core, const mb_acquire_req *req, mb_sandbox_rec *out, mb_err *err)
{
    if (!core->runtime_open)
        return mb_err_set(err, MB_EBUSY, "this mcpbox runs without sandboxes (no runtime)");
    mb_sandbox_rec rec = {0};
    mb_uuid4_tagged(rec.id, core->cfg.node);
    snprintf(rec.owner, sizeof rec.owner, "%s", req->owner);
    snprintf(rec.benchmark, sizeof rec.benchmark, "%s", req->benchmark ? req->benchmark : "");
    snprintf(rec.status, sizeof rec.status, "occupied");
    snprintf(rec.test_account_email, sizeof rec.test_account_email, "%s",
             req->test_account_email ? req->test_account_email : "");
    rec.created_at = rec.updated_at = mb_now();
    rec.ttl_seconds = req->ttl_seconds;
    rec.deadline = req->ttl_seconds > 0 ? rec.created_at + (double)req->ttl_seconds : 0;
    if (req->egress_json) {
        if (strlen(req->egress_json) >= sizeof rec.egress)
            return mb_err_set(err, MB_EINVAL, "the egress allow-list is too long");
        snprintf(rec.egress, sizeof rec.egress, "%s", req->egress_json);
    }

    /* May take a sandbox from the warm pool, whose id and uid range win. */
    int rc = mb_core__sandbox_up(core, &rec, err);
    if (rc) return rc;
    rc = mb_core__services_attach(core, &rec, req, err);
    if (rc) {
        mb_err ignored;
        mb_core__release(core, rec.id, 0, &ignored);
        return rc;
    }

    mb_server_rec *srv = mb_calloc(req->n_servers ? req->n_servers : 1, sizeof *srv);
    for (size_t i = 0; i < req->n_servers; i++) {
        mb_uuid7(srv[i].id); /* time-ordered: the 8 rows go to one index page */
        snprintf(srv[i].sandbox_id, sizeof srv[i].sandbox_id, "%s", rec.id);
        snprintf(srv[i].name, sizeof srv[i].name, "%s", req->servers[i]);
        snprintf(srv[i].status, sizeof srv[i].status, "occupied");
        srv[i].updated_at = rec.created_at;
    }
    mb_core__servers_up(core, &rec, srv, req->n_servers);
    rc = mb_store_server_insert_all(core->store, srv, req->n_servers, err);
    mb_server_recs_free(srv, req->n_servers);
    if (rc) {
        mb_core__services_undo(core, &rec, req);
        mb_err ignored;
        mb_core__release(core, rec.id, 0, &ignored);
        return rc;
    }
    /* No need to wake the reaper: it looks every second, and a TTL is at
     * least a minute. */
    mb_info("acquired %s for %s (%zu servers, benchmark %s, ttl %lld)", rec.id, rec.owner,
            req->n_servers, rec.benchmark[0] ? rec.benchmark : "none", (long long)rec.ttl_seconds);
    *out = rec;
    return MB_OK;
}

int mb_core_get(mb_core *core, const char *owner, const char *id, mb_sandbox_rec *out,
                mb_err *err)
{
    mb_sandbox_rec rec;
    if (!mb_is_uuid(id) || mb_store_sandbox_get(core->store, id, &rec, NULL) != MB_OK ||
        strcmp(rec.owner, owner) != 0 || !strcmp(rec.status, "released"))
        return mb_err_set(err, MB_ENOTFOUND, "Local sandbox %s not found", id);
    *out = rec;
    return MB_OK;
}

int mb_core_live(mb_core *core, const char *id, mb_sandbox_rec *out, mb_err *err)
{
    if (!mb_is_uuid(id) || mb_store_sandbox_get(core->store, id, out, NULL) != MB_OK ||
        !strcmp(out->status, "released"))
        return mb_err_set(err, MB_ENOTFOUND, "Local sandbox %s not found (released or never "
                          "acquired)", id);
    return MB_OK;
}

int mb_core__lock_rec(mb_core *core, const char *owner, const char *id, mb_sandbox_rec *rec,
                      mb_sblock **lock, mb_err *err)
{
    *lock = NULL;
    /* Unknown ids are turned away before they make a lock entry. */
    int rc = owner ? mb_core_get(core, owner, id, rec, err) : mb_core_live(core, id, rec, err);
    if (rc) return rc;
    mb_sblock *l = mb_core__lock(core, id);
    /* A release may have run while we waited: the record read under the
     * lock is the one that counts. */
    rc = owner ? mb_core_get(core, owner, id, rec, err) : mb_core_live(core, id, rec, err);
    if (rc) {
        mb_core__unlock(core, l);
        return rc;
    }
    *lock = l;
    return MB_OK;
}

int mb_core__release(mb_core *core, const char *id, int is_ttl, mb_err *err)
{
    int64_t t0 = mb_core__op_start();
    mb_sblock *lock = mb_core__lock(core, id);
    mb_sandbox_rec rec;
    int rc = mb_store_sandbox_get(core->store, id, &rec, err);
    if (!rc && strcmp(rec.status, "released") != 0) {
        /* The record goes first: from here on no request can reach the
         * sandbox, and a crash mid-way leaves only files the next start sweeps. */
        snprintf(rec.status, sizeof rec.status, "released");
        rec.updated_at = mb_now();
        rec.has_upload = 0;
        rc = mb_store_sandbox_update(core->store, &rec, err);
        char *blobs = mb_core__path_blob(core, id, NULL);
        mb_err e2;
        if (!rc) mb_core__services_detach(core, &rec);
        if (!rc && mb_core__sandbox_down(core, &rec, &e2) != MB_OK)
            mb_warn("release %s: %s", id, e2.msg);
        if (!rc && mb_rm_rf(blobs, &e2) != MB_OK) mb_warn("release %s: %s", id, e2.msg);
        if (!rc && mb_store_claim_drop(core->store, id, NULL, &e2) != MB_OK)
            mb_warn("release %s: %s", id, e2.msg);
        free(blobs);
        if (!rc) mb_info("released %s%s", id, is_ttl ? " (TTL expired)" : "");
        mb_calllog_drop(core->calls, id);
        mb_core__op_done(core, MB_METRICS_RELEASE, t0, rc);
        mb_core__sandboxes_changed(core);
    }
    mb_core__unlock(core, lock);
    return rc;
}

int mb_core_release(mb_core *core, const char *owner, const char *id, int is_ttl, mb_err *err)
{
    mb_sandbox_rec rec;
    if (!mb_is_uuid(id) || mb_store_sandbox_get(core->store, id, &rec, NULL) != MB_OK ||
        strcmp(rec.owner, owner) != 0)
        return mb_err_set(err, MB_ENOTFOUND, "Local sandbox %s not found", id);
    return mb_core__release(core, id, is_ttl, err);
}
