/*
 * sandboxes.c - a sandbox's isolated environment (the sandbox layer) as a
 * record asks for it: the options built from its profile and paths, its uid
 * range picked with its record, and bringing it up (fresh or from the warm
 * pool, seeded) and down.
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

void mb_core__sb_paths_free(mb_sb_paths *p)
{
    free(p->state);
    free(p->volume);
    free(p->binds);
    free(p->egress);
    for (size_t i = 0; i < MB_MAX_SERVICES; i++) free(p->svc_dirs[i]);
    memset(p->svc_dirs, 0, sizeof p->svc_dirs);
    p->state = p->volume = p->egress = NULL;
    p->binds = NULL;
}

void mb_core__sb_opts(mb_core *core, const char *id, int64_t uid_base, const mb_profile *p,
                    mb_sandbox_opts *o, mb_sb_paths *paths)
{
    paths->binds = NULL;
    paths->egress = NULL;
    memset(paths->svc_dirs, 0, sizeof paths->svc_dirs);
    paths->state = mb_core__path_run(core, id);
    paths->volume = mb_core__path_volume(core, id);
    memset(o, 0, sizeof *o);
    o->id = id;
    o->state_dir = paths->state;
    o->workspace = paths->volume;
    o->data_subdir = MB_DATA_SUBDIR;
    o->mcpbox_bin = core->sandbox_bin;
    o->server_bin_dir = core->server_bin_dir;
    o->zygote = core->zygote;
    o->uid_base = (uint32_t)uid_base;
    if (p) {
        o->limits.memory_bytes = p->limits.memory_bytes;
        o->limits.pids_max = p->limits.pids_max;
        o->limits.cpu_millis = p->limits.cpu_millis;
        o->limits.disk_bytes = p->limits.disk_bytes;
        o->allow_network = p->limits.allow_network;
        paths->binds = mb_calloc(p->n_binds + 1 + MB_MAX_SERVICES, sizeof *paths->binds);
        o->n_binds = 0;
        for (size_t i = 0; i < p->n_binds; i++) {
            /* A bind whose host side is not installed (runtime/playwright
             * before scripts/install-playwright, no arXiv catalog built) is
             * left out: the server that needs it fails with its own message,
             * the others work. Said once per bind, not per sandbox. */
            if (access(p->binds[i].host, R_OK) != 0) {
                int *told = (int *)&p->binds[i].missing_told; /* the profile's one mutable flag */
                if (!__atomic_exchange_n(told, 1, __ATOMIC_RELAXED))
                    mb_warn("profile %s: %s (for %s) is missing; not bound", p->name,
                            p->binds[i].host, p->binds[i].inside);
                continue;
            }
            paths->binds[o->n_binds++] = (mb_sandbox_bind){p->binds[i].host, p->binds[i].inside};
        }
        o->binds = paths->binds;
        if (mb_core__profile_has_egress(p)) { /* the proxy sockets' directory */
            paths->egress = mb_core__egress_dir(core, id, 1);
            paths->binds[o->n_binds++] = (mb_sandbox_bind){paths->egress, MB_EGRESS_DIR_INSIDE};
        }
        mb_core__services_binds(core, id, p, o, paths);
    }
}

/* Picks a free uid range and inserts the record, atomically with respect to
 * every other picker. */
int mb_core__insert_record(mb_core *core, mb_sandbox_rec *rec, mb_err *err)
{
    pthread_mutex_lock(&core->alloc_lock);
    int rc = mb_store_free_uid_base(core->store, MB_UID_FIRST, MB_UID_STRIDE, &rec->uid_base, err);
    if (!rc) rc = mb_store_sandbox_insert(core->store, rec, err);
    pthread_mutex_unlock(&core->alloc_lock);
    return rc;
}

void mb_core__mark_released(mb_core *core, const char *id)
{
    mb_sandbox_rec rec;
    if (mb_store_sandbox_get(core->store, id, &rec, NULL) != MB_OK) return;
    snprintf(rec.status, sizeof rec.status, "released");
    rec.updated_at = mb_now();
    mb_store_sandbox_update(core->store, &rec, NULL);
}

int mb_core__sandbox_up(mb_core *core, mb_sandbox_rec *rec, mb_err *err)
{
    const mb_profile *p = mb_core__profile(core, rec->benchmark);
    if (!p)
        return mb_err_set(err, MB_EINVAL, "no profile for benchmark '%s' in %s", rec->benchmark,
                          core->profiles_dir);
    mb_sandbox *sb = NULL;
    int rc = MB_OK, pooled = 0;
    if (mb_core__pool_claim(core, p->name, rec, &sb) == MB_OK) {
        /* Seeded, running and serving already (pool.c). */
        pooled = 1;
        rc = mb_store_sandbox_update(core->store, rec, err);
    } else {
        rc = mb_core__insert_record(core, rec, err);
        if (rc) return rc;
        mb_sandbox_opts o;
        mb_sb_paths paths;
        mb_core__sb_opts(core, rec->id, rec->uid_base, p, &o, &paths);
        rc = mb_sandbox_create(&o, &sb, err);
        mb_core__sb_paths_free(&paths);
        if (rc) mb_err_wrap(err, rc, "cannot create the sandbox");
    }
    if (!rc && !pooled) rc = mb_core__seed(core, rec, err);
    if (rc) {
        mb_err e2;
        if (pooled) {
            mb_gateway_remove_sandbox(core->gw, rec->id);
            free(mb_core__live_take(core, rec->id));
        }
        if (sb) mb_sandbox_destroy(sb, &e2);
        mb_core__mark_released(core, rec->id);
        return rc;
    }
    if (!pooled) mb_core__live_add(core, rec->id, sb, p);
    return MB_OK;
}

int mb_core__sandbox_down(mb_core *core, const mb_sandbox_rec *rec, mb_err *err)
{
    mb_gateway_remove_sandbox(core->gw, rec->id);
    mb_core__egress_release(core, rec->id);
    mb_live *l = mb_core__live_take(core, rec->id);
    int rc;
    if (l) {
        rc = mb_sandbox_destroy(l->sb, err);
        free(l);
    } else {
        mb_sandbox_opts o;
        mb_sb_paths paths;
        mb_core__sb_opts(core, rec->id, rec->uid_base, NULL, &o, &paths);
        rc = mb_sandbox_destroy_by_opts(&o, err);
        mb_core__sb_paths_free(&paths);
    }
    return rc; /* either way the workspace mount point is gone too */
}
