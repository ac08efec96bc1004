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

/* Opens the sandbox's project, making it when it is missing. Under the
 * sandbox's lock, so that a released sandbox's directory is never made again. */
static int gcloud_open_locked(mb_api *api, const mb_sandbox_rec *rec, mb_gc **out, mb_err *err)
{
    mb_assert(mb_core_lock_held(api->core, rec->id));
    char pid[32];
    mb_gcloud_project_id(rec->id, pid);
    char *db = mb_core_service_state(api->core, rec->id, MB_GCLOUD_DB, 0);
    int rc = MB_OK;
    if (access(db, F_OK) != 0) {
        char *base = mb_core_service_state(api->core, rec->id, MB_GCLOUD_DB, 1);
        rc = mb_gcloud_provision(db, base, pid, (unsigned)rec->uid_base, err);
        free(base);
    }
    if (!rc) rc = mb_gc_open(db, pid, out, err);
    free(db);
    return rc;
}

typedef struct gc_hook {
    mb_api *api;
    json_t *body;    /* initialize */
    char **message;
    json_t **detail;
    json_t **data;   /* dump */
} gc_hook;

static int initialize_locked(void *ctx, const mb_sandbox_rec *rec, mb_err *err)
{
    gc_hook *h = ctx;
    mb_assert(mb_core_lock_held(h->api->core, rec->id));
    mb_gc *gc;
    int rc = gcloud_open_locked(h->api, rec, &gc, err);
    if (rc) return rc;
    json_t *d = json_array();
    rc = mb_gc_import(gc, h->body && !json_is_null(h->body) ? h->body : NULL, d, err);
    json_t *doc = rc ? NULL : mb_gc_export(gc);
    mb_gc_close(gc);
    if (rc) {
        if (json_array_size(d)) *h->detail = json_incref(d);
        json_decref(d);
        return rc;
    }
    json_decref(d);
    char *db = mb_core_service_state(h->api->core, rec->id, MB_GCLOUD_DB, 0);
    char *base = mb_core_service_state(h->api->core, rec->id, MB_GCLOUD_DB, 1);
    rc = mb_gcloud_snapshot(db, base, err);
    free(db);
    free(base);
    char pidbuf[32];
    if (!rc)
        *h->message = mb_asprintf("Initialized Google Cloud project %s: %zu datasets, %zu tables, %zu buckets, "
                                  "%zu objects, %zu log entries, %zu instances",
                                  pid_of(rec->id, pidbuf), json_array_size(json_object_get(doc, "datasets")),
                                  json_array_size(json_object_get(doc, "tables")),
                                  json_array_size(json_object_get(doc, "buckets")),
                                  json_array_size(json_object_get(doc, "objects")),
                                  json_array_size(json_object_get(doc, "log_entries")),
                                  json_array_size(json_object_get(doc, "instances")));
    json_decref(doc);
    return rc;
}

int mb_api__gcloud_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                              int init_default, char **message, json_t **detail, mb_err *err)
{
    (void)init_default; /* Klavis's default data is not published: an empty project */
    gc_hook h = {.api = api, .body = body, .message = message, .detail = detail};
    return mb_core_with_lock(api->core, call->key.owner, t->rec.id, initialize_locked, &h, err);
}

static int dump_locked(void *ctx, const mb_sandbox_rec *rec, mb_err *err)
{
    gc_hook *h = ctx;
    mb_assert(mb_core_lock_held(h->api->core, rec->id));
    mb_gc *gc;
    int rc = gcloud_open_locked(h->api, rec, &gc, err);
    if (rc) return rc;
    *h->data = mb_gc_export(gc);
    mb_gc_close(gc);
    return MB_OK;
}

int mb_api__gcloud_dump(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data, mb_err *err)
{
    gc_hook h = {.api = api, .data = data};
    return mb_core_with_lock(api->core, call->key.owner, t->rec.id, dump_locked, &h, err);
}

json_t *mb_api__gcloud_auth_data(mb_api *api, const mb_svc_target *t)
{
    char pid[32];
    mb_gcloud_project_id(t->rec.id, pid);
    /* The shape Klavis gives (an OAuth token set) plus the project id, the
     * REST facade's endpoints and a service-account key file whose token_uri
     * is the facade (made once per sandbox, kept with its blobs). The access
     * and refresh tokens are the project id: they select the sandbox there. */
    const char *listen_on = getenv("MCPBOX_GCLOUD_LISTEN");
    if (!listen_on || !*listen_on) listen_on = "127.0.0.1:10050";
    json_t *a = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "project_id", pid, "access_token", pid, "refresh_token",
                          pid, "client_id", "mcpbox", "client_secret", "mcpbox", "scope",
                          "https://www.googleapis.com/auth/cloud-platform");
    if (!strcmp(listen_on, "off")) return a;
    char *base = mb_asprintf("http://%s", listen_on);
    char *token_uri = mb_asprintf("%s/p/%s/token", base, pid);
    char *storage = mb_asprintf("%s/p/%s", base, pid);
    json_object_set_new(a, "token_uri", json_string(token_uri));
    json_object_set_new(a, "bigquery_emulator_host", json_string(base));
    json_object_set_new(a, "storage_emulator_host", json_string(storage));
    char *path = mb_core_service_state(api->core, t->rec.id, "gcloud-key.json", 1);
    char *key = NULL;
    size_t len = 0;
    mb_err err = {0};
    if (mb_read_file(path, 1 << 20, &key, &len, NULL) != MB_OK) {
        key = mb_gcloud_sa_key(pid, token_uri, &err);
        char *dir = mb_strdup(path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        if (key && (mb_mkdir_p(dir, 0700, &err) || mb_write_file_atomic(path, key, strlen(key), 0600, &err)))
            mb_warn("google_cloud: cannot keep the key file of %s: %s", t->rec.id, err.msg);
        free(dir);
    }
    char *pub = key ? mb_core_service_state(api->core, t->rec.id, MB_GCLOUD_PUB, 0) : NULL;
    if (pub && mb_gcloud_sa_pub(key, pub, &err))
        mb_warn("google_cloud: cannot write the public key of %s: %s", t->rec.id, err.msg);
    free(pub);
    json_t *k = key ? json_loads(key, 0, NULL) : NULL;
    if (k) json_object_set_new(a, "service_account_key", k);
    free(key);
    free(path);
    free(storage);
    free(token_uri);
    free(base);
    return a;
}
