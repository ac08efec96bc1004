/*
 * gcloud.c - the Google Cloud emulation as a node service (services.c): a
 * sandbox whose servers include google_cloud gets its project database in
 * its state directory at acquire (before the servers start), and a reset
 * puts back the copy the last initialize left (or an empty project). The
 * files die with the sandbox's workspace and blobs, so detach has nothing
 * to do. Also the REST facade's project -> database lookup.
 */
#include "core/core_int.h"
#include "gcloud/gcloud.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static int provision(void *ctx, const mb_sandbox_rec *rec, mb_err *err)
{
    mb_core *core = ctx;
    char pid[32];
    mb_gcloud_project_id(rec->id, pid);
    char *db = mb_core_service_state(core, rec->id, MB_GCLOUD_DB, 0);
    char *base = mb_core_service_state(core, rec->id, MB_GCLOUD_DB, 1);
    int rc = mb_gcloud_provision(db, base, pid, (unsigned)rec->uid_base, err);
    if (rc) mb_err_wrap(err, rc, "cannot set up the Google Cloud project");
    free(db);
    free(base);
    return rc;
}

static int attach(void *ctx, const mb_sandbox_rec *rec, const mb_acquire_req *req, mb_err *err)
{
    (void)req;
    return provision(ctx, rec, err);
}

static void detach(void *ctx, const mb_sandbox_rec *rec)
{
    (void)ctx;
    (void)rec;
}

int mb_core_gcloud_service(mb_core *core, mb_err *err)
{
    const mb_core_service svc = {.server = "google_cloud", .ctx = core, .attach = attach,
                                 .detach = detach, .reset = provision};
    return mb_core_service_add(core, &svc, err);
}

char *mb_core_gcloud_db(mb_core *core, const char *project)
{
    if (strncmp(project, "mcpbox-", 7) || strlen(project) != 19) return NULL;
    char *dir = mb_asprintf("%s/workspaces", core->cfg.data_dir);
    DIR *d = opendir(dir);
    free(dir);
    char *found = NULL;
    struct dirent *e;
    while (d && !found && (e = readdir(d))) {
        if (!mb_is_uuid(e->d_name)) continue;
        char pid[32];
        mb_gcloud_project_id(e->d_name, pid);
        mb_sandbox_rec rec;
        if (strcmp(pid, project) || mb_core_live(core, e->d_name, &rec, NULL) != MB_OK) continue;
        found = mb_core_service_state(core, e->d_name, MB_GCLOUD_DB, 0);
    }
    if (d) closedir(d);
    return found;
}
