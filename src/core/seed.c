/*
 * seed.c - preloading /data from a benchmark's --seed directory.
 */
#define _GNU_SOURCE
#include "core/core_int.h"
#include "gcloud/gcloud.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mb_core__seed(mb_core *core, const mb_sandbox_rec *rec, mb_err *err)
{
    const char *seed = NULL;
    for (size_t i = 0; i < core->cfg.n_seeds; i++)
        if (!strcmp(core->cfg.seeds[i].preset, rec->benchmark)) seed = core->cfg.seeds[i].dir;
    if (mb_core_offers(core, rec->benchmark, "google_cloud")) {
        int rc = mb_core__gcloud_seed(core, rec, err); /* the project back to its baseline */
        if (rc) return rc;
    }
    if (!seed) return MB_OK;
    char *ws = mb_core_workspace(core, rec->id);
    int rc = mb_copy_tree(seed, ws, (uid_t)rec->uid_base, (gid_t)rec->uid_base, err);
    if (rc) mb_err_wrap(err, rc, "cannot preload /data from the %s seed %s", rec->benchmark, seed);
    free(ws);
    return rc;
}

int mb_core__gcloud_seed(mb_core *core, const mb_sandbox_rec *rec, mb_err *err)
{
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
