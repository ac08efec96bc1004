/*
 * svc_gcloud.c - what initialize, dump and auth_data mean for google_cloud
 * (Klavis's GoogleCloudData): the sandbox's emulated project, the SQLite
 * file src/gcloud keeps in the sandbox's state directory.
 *   initialize  replaces the project with the body (no body: an empty
 *               project) and keeps a copy as the baseline a reset restores;
 *   dump        the project as GoogleCloudData;
 *   auth_data   the project id and the credentials the REST facade takes.
 */
#include "api/api_int.h"
#include "gcloud/gcloud.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *pid_of(const char *id, char buf[32])
{
    mb_gcloud_project_id(id, buf);
    return buf;
}

/* Opens the sandbox's project, making it when it is missing. */
static int gcloud_open(mb_api *api, const mb_svc_target *t, mb_gc **out, mb_err *err)
{
    char pid[32];
    mb_gcloud_project_id(t->rec.id, pid);
    char *db = mb_core_service_state(api->core, t->rec.id, MB_GCLOUD_DB, 0);
    int rc = MB_OK;
    if (access(db, F_OK) != 0) {
        char *base = mb_core_service_state(api->core, t->rec.id, MB_GCLOUD_DB, 1);
        rc = mb_gcloud_provision(db, base, pid, (unsigned)t->rec.uid_base, err);
        free(base);
    }
    if (!rc) rc = mb_gc_open(db, pid, out, err);
    free(db);
    return rc;
}

int mb_api__gcloud_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                              int init_default, char **message, json_t **detail, mb_err *err)
{
    (void)call;
    (void)init_default; /* Klavis's default data is not published: an empty project */
    mb_gc *gc;
    int rc = gcloud_open(api, t, &gc, err);
    if (rc) return rc;
    json_t *d = json_array();
    rc = mb_gc_import(gc, body && !json_is_null(body) ? body : NULL, d, err);
    json_t *doc = rc ? NULL : mb_gc_export(gc);
    mb_gc_close(gc);
    if (rc) {
        if (json_array_size(d)) *detail = json_incref(d);
        json_decref(d);
        return rc;
    }
    json_decref(d);
    char *db = mb_core_service_state(api->core, t->rec.id, MB_GCLOUD_DB, 0);
    char *base = mb_core_service_state(api->core, t->rec.id, MB_GCLOUD_DB, 1);
    rc = mb_gcloud_snapshot(db, base, err);
    free(db);
    free(base);
    char pidbuf[32];
    if (!rc)
        *message = mb_asprintf("Initialized Google Cloud project %s: %zu datasets, %zu tables, %zu buckets, "
                               "%zu objects, %zu log entries, %zu instances",
                               pid_of(t->rec.id, pidbuf), json_array_size(json_object_get(doc, "datasets")),
                               json_array_size(json_object_get(doc, "tables")),
                               json_array_size(json_object_get(doc, "buckets")),
                               json_array_size(json_object_get(doc, "objects")),
                               json_array_size(json_object_get(doc, "log_entries")),
                               json_array_size(json_object_get(doc, "instances")));
    json_decref(doc);
    return rc;
}

int mb_api__gcloud_dump(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data, mb_err *err)
{
    (void)call;
    mb_gc *gc;
    int rc = gcloud_open(api, t, &gc, err);
    if (rc) return rc;
    *data = mb_gc_export(gc);
    mb_gc_close(gc);
    return MB_OK;
}

json_t *mb_api__gcloud_auth_data(mb_api *api, const mb_svc_target *t)
{
    (void)api;
    char pid[32];
    mb_gcloud_project_id(t->rec.id, pid);
    /* The shape Klavis gives (an OAuth token set) plus the project id; the
     * REST facade takes any bearer token, the project id selects the sandbox. */
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "project_id", pid, "access_token", pid, "refresh_token",
                     "mcpbox", "client_id", "mcpbox", "client_secret", "mcpbox", "scope",
                     "https://www.googleapis.com/auth/cloud-platform");
}
