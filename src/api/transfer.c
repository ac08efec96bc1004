/*
 * transfer.c - archive traffic: signed upload and download URLs, the PUT
 * that receives an upload, initialize, and the GET that serves a dump.
 * The same handlers serve /local-sandbox/{id}/... and /sandbox/local_dev/{id}/...
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mb_api_upload_url(mb_api *api, mb_call *call)
{
    mb_sandbox_rec rec;
    mb_err err;
    const char *id = call->args[0];
    if (mb_core_get(api->core, call->key.owner, id, &rec, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    char *path = mb_asprintf("/blobs/%s/upload.tar.gz", id);
    char *url = mb_core_signed_url(api->core, "PUT", path);
    mb_http_respond_json(call->req, 200,
                         json_pack("{s:s,s:i}", "upload_url", url, "expires_in_minutes",
                                   mb_core_config(api->core)->url_ttl_minutes));
    free(url);
    free(path);
}

void mb_api_blob_put(mb_api *api, mb_call *call)
{
    mb_err err;
    if (mb_core_upload_commit(api->core, call->args[0], call->req->body_path,
                              call->req->body_len, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    mb_http_respond_empty(call->req, 200);
}

void mb_api_initialize(mb_api *api, mb_call *call)
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

void mb_api_dump(mb_api *api, mb_call *call)
{
    mb_err err;
    const char *id = call->args[0];
    if (mb_core_dump(api->core, call->key.owner, id, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    char *path = mb_asprintf("/blobs/%s/dump.tar.gz", id);
    char *url = mb_core_signed_url(api->core, "GET", path);
    mb_http_respond_json(call->req, 200,
                         json_pack("{s:s,s:i}", "download_url", url, "expires_in_minutes",
                                   mb_core_config(api->core)->url_ttl_minutes));
    free(url);
    free(path);
}

void mb_api_blob_get(mb_api *api, mb_call *call)
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
