/*
 * router.c - the route table and the HTTP application: matching, auth and
 * body policy at header time (before any body byte is accepted), dispatch
 * when the body is complete.
 */
#include "api/api_int.h"
#include "auth/auth.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Signed blob URLs live under /blobs/; the sandbox id is the capability. */
const mb_route mb_routes[] = {
    {"GET", "/healthz", MB_AUTH_NONE, MB_BODY_NONE, mb_api__healthz, 200, "Health", "Service health"},
    {"GET", "/", MB_AUTH_NONE, MB_BODY_NONE, mb_api__dashboard, 200, NULL, "The web dashboard (log in with an API key)"},
    {"GET", "/metrics", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__metrics, 200, NULL, "Prometheus metrics (text exposition format)"},
    {"GET", "/metrics/history", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__metrics_history, 200, NULL, "Calls and sandboxes minute by minute over the last hour"},
    {"GET", "/local-sandbox/{}/calls", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__calls, 200, NULL, "The sandbox's MCP call log"},
    {"GET", "/local-sandbox/{}/stats", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__stats, 200, NULL, "The sandbox's memory, processes, CPU and workspace use"},
    {"GET", "/blobs/{}/calls.jsonl", MB_AUTH_SIGNED, MB_BODY_NONE, mb_api__blob_calls, 200, NULL, "Signed download of the call log written by a dump with include_calls"},
    {"GET", "/openapi.json", MB_AUTH_NONE, MB_BODY_NONE, mb_api__openapi_doc, 200, NULL, "This document"},
    {"POST", "/local-sandbox", MB_AUTH_BEARER, MB_BODY_BUFFER, mb_api__acquire, 201, "AcquireLocalSandboxResponse", "Acquire a local sandbox"},
    {"GET", "/local-sandbox", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__list, 200, "ListLocalSandboxesResponse", "List the caller's local sandboxes"},
    {"GET", "/local-sandbox/{}", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__get, 200, "LocalSandboxInfo", "Get a local sandbox"},
    {"DELETE", "/local-sandbox/{}", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__release, 200, "MessageResponse", "Release a local sandbox"},
    {"POST", "/local-sandbox/{}/reset", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__reset, 200, "ResetResponse", "Reset a local sandbox to its initial state"},
    {"POST", "/local-sandbox/{}/upload-url", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__upload_url, 200, "UploadUrlResponse", "Get a signed URL to PUT a tar.gz to"},
    {"POST", "/local-sandbox/{}/initialize", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__initialize, 200, "InitializeSandboxResponse", "Extract the uploaded archive into /data"},
    {"GET", "/local-sandbox/{}/dump", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__dump, 200, "DumpUrlResponse", "Archive /data and get a signed URL to GET it"},
    {"PUT", "/blobs/{}/upload.tar.gz", MB_AUTH_SIGNED, MB_BODY_FILE, mb_api__blob_put, 200, NULL, "Signed upload target (no Authorization header)"},
    {"GET", "/blobs/{}/dump.tar.gz", MB_AUTH_SIGNED, MB_BODY_NONE, mb_api__blob_get, 200, NULL, "Signed download of the last dump (no Authorization header)"},
    {"POST", "/sandbox/local_dev", MB_AUTH_BEARER, MB_BODY_BUFFER, mb_api__localdev_acquire, 201, "CreateSandboxResponse", "Acquire a local_dev sandbox (older API)"},
    {"GET", "/sandbox/local_dev/{}", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__localdev_get, 200, "SandboxInfo", "Get a local_dev sandbox (older API)"},
    {"DELETE", "/sandbox/local_dev/{}", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__localdev_release, 200, "SandboxStatusResponse", "Release a local_dev sandbox (older API)"},
    {"POST", "/sandbox/local_dev/{}/reset", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__localdev_reset, 200, "SandboxStatusResponse", "Reset a local_dev sandbox (older API)"},
    {"POST", "/sandbox/local_dev/{}/upload-url", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__upload_url, 200, "UploadUrlResponse", "Signed upload URL (older API)"},
    {"POST", "/sandbox/local_dev/{}/initialize", MB_AUTH_BEARER, MB_BODY_NONE,
     mb_api__localdev_initialize, 200, "InitializeSandboxResponse", "Extract the upload (older API)"},
    {"GET", "/sandbox/local_dev/{}/dump", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__dump, 200, "DumpUrlResponse", "Dump the workspace (older API)"},
    /* The /sandbox/{server} family (services.c): after local_dev, which its
     * patterns would match too. */
    {"GET", "/sandbox", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__svc_list, 200, "ListSandboxesResponse", "List the caller's one-server sandboxes"},
    {"POST", "/sandbox/prepare", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__svc_prepare, 200, NULL, "Warm capacity (nothing to do: sandboxes start on demand, see --pool)"},
    {"POST", "/sandbox/{}", MB_AUTH_BEARER, MB_BODY_BUFFER, mb_api__svc_acquire, 201, "CreateSandboxResponse", "Acquire a sandbox holding one server"},
    {"GET", "/sandbox/{}/{}", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__svc_get, 200, "SandboxInfo", "Get a one-server sandbox (auth_data, metadata)"},
    {"DELETE", "/sandbox/{}/{}", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__svc_release, 200, "ReleaseSandboxResponse", "Release a one-server sandbox"},
    {"POST", "/sandbox/{}/{}/reset", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__svc_reset, 200, "ReleaseSandboxResponse", "Reset a one-server sandbox to its initial state"},
    {"POST", "/sandbox/{}/{}/upload-url", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__svc_upload_url, 200, "UploadUrlResponse", "Signed upload URL (workspace servers)"},
    {"POST", "/sandbox/{}/{}/initialize", MB_AUTH_BEARER, MB_BODY_BUFFER, mb_api__svc_initialize, 200, "InitializeSandboxResponse", "Initialize the server's data (JSON body, per server)"},
    {"GET", "/sandbox/{}/{}/dump", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__svc_dump, 200, "DumpSandboxResponse", "Dump the server's data (per server)"},
    {"POST", "/local-sandbox/{}/{}/initialize", MB_AUTH_BEARER, MB_BODY_BUFFER, mb_api__svc_initialize, 200, "InitializeSandboxResponse", "Initialize one server of a local sandbox (JSON body, per server)"},
    {"GET", "/local-sandbox/{}/{}/dump", MB_AUTH_BEARER, MB_BODY_NONE, mb_api__svc_dump, 200, "DumpSandboxResponse", "Dump one server of a local sandbox (per server)"},
    {NULL, NULL, 0, 0, NULL, 0, NULL, NULL},
};

/* Matches path against pattern, capturing {} segments into args (owned).
 * A trailing slash on the path is tolerated. */
static int match(const char *pattern, const char *path, char *args[MB_ROUTE_MAX_ARGS])
{
    int nargs = 0;
    const char *p = pattern, *s = path;
    while (*p) {
        if (p[0] == '{' && p[1] == '}') {
            const char *end = strchr(s, '/');
            size_t n = end ? (size_t)(end - s) : strlen(s);
            if (n == 0 || nargs == MB_ROUTE_MAX_ARGS) goto fail;
            args[nargs++] = mb_strndup(s, n);
            s += n;
            p += 2;
        } else if (*p == *s) {
            p++;
            s++;
        } else {
            goto fail;
        }
    }
    if (*s == '\0' || (s[0] == '/' && s[1] == '\0')) return 1;
fail:
    for (int i = 0; i < nargs; i++) {
        free(args[i]);
        args[i] = NULL;
    }
    return 0;
}

static void call_free(void *p)
{
    mb_call *call = p;
    if (call->upload_held)
        mb_core_upload_end(call->api->core, call->args[0], call->upload_owner,
                           call->upload_bytes);
    for (int i = 0; i < MB_ROUTE_MAX_ARGS; i++) free(call->args[i]);
    free(call);
}

/* "/{server}/mcp" or "/{server}/mcp/": copies the server name. */
static int is_mcp_path(const char *path, char *server, size_t cap)
{
    if (path[0] != '/') return 0;
    const char *slash = strchr(path + 1, '/');
    if (!slash) return 0;
    size_t n = (size_t)(slash - path - 1);
    if (n == 0 || n >= cap) return 0;
    if (strcmp(slash, "/mcp") != 0 && strcmp(slash, "/mcp/") != 0) return 0;
    memcpy(server, path + 1, n);
    server[n] = '\0';
    return 1;
}

typedef struct mcp_raw {
    mb_api *api;
    mb_http_req *req;
    int started;
    char server[64];
    char sandbox_id[64];
} mcp_raw;

static enum MHD_Result mcp_raw_handle(void *ctx, struct MHD_Connection *conn, const char *method,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **state)
{
    mcp_raw *r = ctx;
    enum MHD_Result ret = r->api->mcp.handle(r->api->mcp.ctx, conn, r->server, r->sandbox_id,
                                             method, upload_data, upload_data_size, state);
    if (!r->started) {
        r->started = 1;
        /* The sandbox id is the MCP URL's capability: a request that named a
         * live route counts as authenticated for the connection limits. */
        if (r->api->mcp.routed && r->api->mcp.routed(*state)) r->req->authenticated = 1;
    }
    return ret;
}

static void mcp_raw_done(void *ctx, void *state)
{
    mcp_raw *r = ctx;
    if (r->api->mcp.done) r->api->mcp.done(r->api->mcp.ctx, state);
}

static void begin_mcp(mb_api *api, mb_http_req *req, const char *server)
{
    if (!api->has_mcp) {
        mb_http_respond_detail(req, 503, "The MCP gateway is not running in this server");
        return;
    }
    mcp_raw *r = mb_calloc(1, sizeof *r);
    r->api = api;
    r->req = req;
    snprintf(r->server, sizeof r->server, "%s", server);
    const char *id = mb_http_query(req, "local_sandbox_id");
    snprintf(r->sandbox_id, sizeof r->sandbox_id, "%s", id ? id : "");
    if (id && mb_is_uuid(id)) mb_log_context_sandbox(id);
    req->app = r;
    req->app_free = free;
    req->raw = mcp_raw_handle;
    req->raw_done = mcp_raw_done;
    req->raw_ctx = r;
}

static int authenticate(mb_api *api, mb_call *call)
{
    mb_http_req *req = call->req;
    mb_err err;
    int rc = MB_OK;
    if (call->route->auth == MB_AUTH_BEARER) {
        rc = mb_auth_bearer(mb_core_store(api->core), mb_http_header(req, "Authorization"),
                            &call->key, &err);
    } else if (call->route->auth == MB_AUTH_SIGNED) {
        rc = mb_core_verify_url(api->core, req->method, req->path,
                                mb_http_query(req, "expires"), mb_http_query(req, "signature"),
                                &err);
    }
    if (rc) mb_http_respond_err(req, &err);
    else if (call->route->auth != MB_AUTH_NONE) req->authenticated = 1;
    return rc;
}

/* One upload per sandbox at a time, within its owner's upload budget. The
 * reservation is the declared length (or the upload limit for a chunked
 * body). A refused upload (409 or 429) is answered at once; its body, up to
 * the upload limit, is read and dropped first (http.h): clients expect an
 * answer after their body, not a reset. */
static int begin_upload(mb_api *api, mb_call *call, const mb_sandbox_rec *rec)
{
    mb_http_req *req = call->req;
    uint64_t bytes = req->body_limit;
    const char *cl = mb_http_header(req, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        if (end != cl && n < bytes) bytes = n;
    }
    unsigned retry = 0;
    mb_err err;
    if (mb_core_upload_begin(api->core, call->args[0], rec->owner, bytes, &retry, &err) != MB_OK) {
        req->retry_after_s = retry;
        req->body_mode = MB_BODY_NONE;
        if (req->drain_limit < req->body_limit) req->drain_limit = req->body_limit;
        mb_http_respond_err(req, &err);
        return err.code;
    }
    call->upload_held = 1;
    call->upload_bytes = bytes;
    snprintf(call->upload_owner, sizeof call->upload_owner, "%s", rec->owner);
    return MB_OK;
}

static void on_begin(void *ctx, mb_http_req *req)
{
    mb_api *api = ctx;
    char server[64];
    if (api->cluster && mb_api__cluster_route(api, req)) return;
    if (is_mcp_path(req->path, server, sizeof server)) {
        begin_mcp(api, req, server);
        return;
    }
    int path_known = 0;
    for (const mb_route *r = mb_routes; r->method; r++) {
        char *args[MB_ROUTE_MAX_ARGS] = {0};
        if (!match(r->pattern, req->path, args)) continue;
        path_known = 1;
        if (strcmp(r->method, req->method) != 0) {
            for (int i = 0; i < MB_ROUTE_MAX_ARGS; i++) free(args[i]);
            continue;
        }
        mb_call *call = mb_calloc(1, sizeof *call);
        call->req = req;
        call->api = api;
        call->route = r;
        memcpy(call->args, args, sizeof args);
        req->app = call;
        req->app_free = call_free;
        if (authenticate(api, call) != MB_OK) return;
        mb_sandbox_rec rec;
        if (r->auth == MB_AUTH_SIGNED) {
            mb_err err;
            if (mb_core_live(api->core, call->args[0], &rec, &err) != MB_OK) {
                mb_http_respond_err(req, &err);
                return;
            }
        }
        req->body_mode = r->body;
        if (r->body == MB_BODY_FILE) {
            req->body_limit = mb_core_config(api->core)->max_upload_bytes;
            if (begin_upload(api, call, &rec) == MB_OK)
                req->body_path = mb_core_upload_tmp_path(api->core, call->args[0]);
        }
        return;
    }
    /* The key comes first: without a valid one, nothing about which paths
     * exist is told. */
    mb_key_rec key;
    mb_err err;
    if (mb_auth_bearer(mb_core_store(api->core), mb_http_header(req, "Authorization"), &key,
                       &err) != MB_OK)
        mb_http_respond_err(req, &err);
    else if (path_known)
        mb_http_respond_detail(req, 405, "Method Not Allowed");
    else
        mb_http_respond_detail(req, 404, "Not Found");
}

static void on_handle(void *ctx, mb_http_req *req)
{
    mb_call *call = req->app;
    if (call->args[0] && mb_is_uuid(call->args[0])) mb_log_context_sandbox(call->args[0]);
    call->route->fn(ctx, call);
}

mb_api *mb_api_create(mb_core *core, const mb_api_mcp_hook *mcp)
{
    mb_api *api = mb_calloc(1, sizeof *api);
    api->core = core;
    if (mcp) {
        api->mcp = *mcp;
        api->has_mcp = 1;
    }
    return api;
}

void mb_api_destroy(mb_api *api) { free(api); }

mb_http_app mb_api_http_app(mb_api *api)
{
    mb_http_app app = {.ctx = api, .begin = on_begin, .handle = on_handle};
    return app;
}
