/*
 * transfer.c - archive traffic: signed upload and download URLs, the PUT
 * that receives an upload, initialize, and the GET that serves a dump.
 * The same handlers serve /local-sandbox/{id}/... and /sandbox/local_dev/{id}/...
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Answers {FIELD: signed URL for METHOD on /blobs/ID/NAME, expires_in_minutes}. */
static void respond_signed(mb_api *api, mb_call *call, const char *field, const char *method,
                           const char *name)
{
    char *path = mb_asprintf("/blobs/%s/%s", call->args[0], name);
    char *url = mb_core_signed_url(api->core, method, path);
    mb_http_respond_json(call->req, 200,
                         json_pack("{s:s,s:i}", field, url, "expires_in_minutes",
                                   mb_core_config(api->core)->url_ttl_minutes));
    free(url);
    free(path);
}

void mb_api__upload_url(mb_api *api, mb_call *call)
{
    mb_sandbox_rec rec;
    mb_err err;
    if (mb_core_get(api->core, call->key.owner, call->args[0], &rec, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    respond_signed(api, call, "upload_url", "PUT", "upload.tar.gz");
}

void mb_api__blob_put(mb_api *api, mb_call *call)
{
    mb_err err;
    if (mb_core_upload_commit(api->core, call->args[0], call->req->body_path,
                              call->req->body_len, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    mb_http_respond_empty(call->req, 200);
}

void mb_api__initialize(mb_api *api, mb_call *call)
{
    mb_err err;
    const char *id = call->args[0];
    if (mb_core_initialize(api->core, call->key.owner, id, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    mb_http_respond_json(call->req, 200,
                         json_pack("{s:s,s:s,s:s}", "sandbox_id", id, "status", "occupied",
                                   "message", "Extracted archive to workspace"));
}

void mb_api__dump(mb_api *api, mb_call *call)
{
    mb_err err;
    int include_calls = 0;
    if (mb_api__query_bool(call, "include_calls", &include_calls) != MB_OK) return;
    if (mb_core_dump(api->core, call->key.owner, call->args[0], &err) != MB_OK ||
        (include_calls &&
         mb_core_dump_calls(api->core, call->key.owner, call->args[0], &err) != MB_OK)) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    if (!include_calls) {
        respond_signed(api, call, "download_url", "GET", "dump.tar.gz");
        return;
    }
    /* The call log travels beside the archive, never inside /data's tree
     * (docs/OBSERVABILITY.md). */
    char *path = mb_asprintf("/blobs/%s/dump.tar.gz", call->args[0]);
    char *url = mb_core_signed_url(api->core, "GET", path);
    char *cpath = mb_asprintf("/blobs/%s/calls.jsonl", call->args[0]);
    char *curl = mb_core_signed_url(api->core, "GET", cpath);
    mb_http_respond_json(call->req, 200,
                         json_pack("{s:s,s:s,s:i}", "download_url", url, "calls_url", curl,
                                   "expires_in_minutes",
                                   mb_core_config(api->core)->url_ttl_minutes));
    free(path);
    free(url);
    free(cpath);
    free(curl);
}

void mb_api__blob_get(mb_api *api, mb_call *call)
{
    int fd;
    uint64_t size;
    mb_err err;
    if (mb_core_open_dump(api->core, call->args[0], &fd, &size, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    mb_http_respond_fd(call->req, 200, fd, size, "application/gzip", "workspace.tar.gz");
}
