/*
 * adopt.c - sandboxes across daemon restarts. Sandboxes outlive the daemon
 * (their init is supervised through a control socket, not through the
 * daemon's process tree). At start every live record is re-adopted and its
 * servers are started again in the background; a record whose sandbox cannot
 * be adopted is torn down and marked "error" with the reason, and leftovers
 * no record claims (a crash mid-acquire) are swept. Idle pool sandboxes are
 * not kept across restarts. Server processes do not survive a restart: their
 * stdio sockets (their life lines) end with the daemon, so they are started
 * again, fresh, on the same /data. Also: releasing everything at exit.
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

static int keep_live(void *ctx, const char *id)
{
    mb_core *core = ctx;
    mb_live *l = mb_core__live_get(core, id);
    mb_core__live_put(core, l);
    return l != NULL;
}

/* Re-attaches every sandbox the store says is running and starts its
 * servers again (in the background); tears down what cannot be adopted. */
void mb_core__adopt_all(mb_core *core)
{
    mb_sandbox_rec *recs;
    size_t n;
    if (mb_store_sandbox_list(core->store, NULL, &recs, &n, NULL) != MB_OK) return;
    for (size_t i = 0; i < n; i++) {
        mb_sandbox_rec *rec = &recs[i];
        const mb_profile *p = mb_core__profile(core, rec->benchmark);
        mb_sandbox_opts o;
        mb_sb_paths paths;
        mb_core__sb_opts(core, rec->id, rec->uid_base, p, &o, &paths);
        mb_sandbox *sb = NULL;
        mb_err err = {0};
        int idle = !strcmp(rec->status, "idle"); /* pool sandboxes are rebuilt, not kept */
        int rc = idle ? MB_ENOTFOUND : mb_sandbox_adopt(&o, &sb, &err);
        if (rc == MB_OK && p) {
            mb_core__clean_leftovers(core, rec->id, 1);
            mb_core__live_add(core, rec->id, sb, p);
            mb_server_rec *srv;
            size_t ns;
            if (mb_store_server_list(core->store, rec->id, &srv, &ns, NULL) == MB_OK) {
                for (size_t j = 0; j < ns; j++) {
                    const mb_profile_server *ps = mb_profile_server_find(p, srv[j].name);
                    mb_err e2;
                    if (ps && mb_core__add_server(core, rec->id, ps, &e2) == MB_OK)
                        (void)mb_gateway_start(core->gw, rec->id, ps->name, 0, &e2);
                }
                mb_server_recs_free(srv, ns);
            }
            mb_info("adopted sandbox %s", rec->id);
        } else {
            mb_err e2;
            if (sb) mb_sandbox_close(sb);
            (void)mb_sandbox_destroy_by_opts(&o, &e2);
            mb_core__clean_leftovers(core, rec->id, 1);
            if (idle) {
                snprintf(rec->status, sizeof rec->status, "released");
            } else {
                mb_warn("sandbox %s did not survive the restart: %s", rec->id, err.msg);
                snprintf(rec->status, sizeof rec->status, "error");
                snprintf(rec->error, sizeof rec->error,
                         "the sandbox did not survive a restart of the service (%.*s); release "
                         "it and acquire a new one", (int)(sizeof rec->error / 2), err.msg);
            }
            rec->updated_at = mb_now();
            mb_store_sandbox_update(core->store, rec, NULL);
        }
        mb_core__sb_paths_free(&paths);
    }
    free(recs);
    char *run = mb_core__path_top(core, "run");
    mb_err err;
    if (mb_sandbox_sweep(run, keep_live, core, &err) != MB_OK)
        mb_warn("sweeping leftover sandboxes: %s", err.msg);
    free(run);
}

size_t mb_core_release_all(mb_core *core)
{
    mb_sandbox_rec *recs;
    size_t n, done = 0;
    if (mb_store_sandbox_list(core->store, NULL, &recs, &n, NULL) != MB_OK) return 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(recs[i].status, "released")) continue;
        mb_err err;
        if (mb_core__release(core, recs[i].id, 0, &err) == MB_OK) done++;
        else mb_warn("release %s at exit: %s", recs[i].id, err.msg);
    }
    free(recs);
    return done;
}
