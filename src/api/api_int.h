/*
 * api_int.h - what the REST layer's files share: the api object, the route
 * table's shape and the per-request state. Include api.h from outside.
 */
#ifndef MB_API_INT_H
#define MB_API_INT_H

#include "api/api.h"

#define MB_ROUTE_MAX_ARGS 2

typedef enum mb_route_auth {
    MB_AUTH_NONE,    /* public: /healthz, /openapi.json */
    MB_AUTH_BEARER,  /* Authorization: Bearer KEY */
    MB_AUTH_SIGNED,  /* ?expires=&signature= for this method and path */
} mb_route_auth;

typedef struct mb_call mb_call;
typedef void (*mb_route_fn)(mb_api *api, mb_call *call);

typedef struct mb_route {
    const char *method;
    const char *pattern;     /* "/local-sandbox/{}/reset": {} captures a segment */
    mb_route_auth auth;
    mb_body_mode body;
    mb_route_fn fn;
    unsigned status;         /* success status, for the OpenAPI document */
    const char *response;    /* schema name of the success body, NULL = untyped */
    const char *summary;
} mb_route;

struct mb_call {
    mb_http_req *req;
    const mb_route *route;
    char *args[MB_ROUTE_MAX_ARGS];
    mb_key_rec key;          /* the caller, for MB_AUTH_BEARER routes */
    mb_api *api;
    /* An upload in progress (mb_core_upload_begin), ended when the request
     * is freed. */
    int upload_held;
    uint64_t upload_bytes;
    char upload_owner[MB_OWNER_MAX];
};

struct mb_api {
    mb_core *core;
    mb_api_mcp_hook mcp;
    int has_mcp;
    struct mb_cluster *cluster; /* NULL on one machine */
};

/* Many nodes (nodes.c): hands the request to the node that should serve it
 * (the owner of its sandbox id; for an acquire, the node placement picks),
 * or answers it (that node is down). 1 when done with it, 0 when this node
 * serves it. */
int mb_api__cluster_route(mb_api *api, mb_http_req *req);

extern const mb_route mb_routes[];

/* Handlers (sandboxes.c, transfer.c, localdev.c, meta.c). */
void mb_api__acquire(mb_api *api, mb_call *call);
void mb_api__list(mb_api *api, mb_call *call);
void mb_api__get(mb_api *api, mb_call *call);
void mb_api__release(mb_api *api, mb_call *call);
void mb_api__reset(mb_api *api, mb_call *call);
void mb_api__upload_url(mb_api *api, mb_call *call);
void mb_api__initialize(mb_api *api, mb_call *call);
void mb_api__dump(mb_api *api, mb_call *call);
void mb_api__blob_put(mb_api *api, mb_call *call);
void mb_api__blob_get(mb_api *api, mb_call *call);
void mb_api__localdev_acquire(mb_api *api, mb_call *call);
void mb_api__localdev_get(mb_api *api, mb_call *call);
void mb_api__localdev_release(mb_api *api, mb_call *call);
void mb_api__localdev_reset(mb_api *api, mb_call *call);
void mb_api__localdev_initialize(mb_api *api, mb_call *call);
/* The /sandbox/{server} family (services.c); args[0] is the server's name
 * as the client wrote it, args[1] the sandbox id. */
void mb_api__svc_list(mb_api *api, mb_call *call);
void mb_api__svc_prepare(mb_api *api, mb_call *call);
void mb_api__svc_acquire(mb_api *api, mb_call *call);
void mb_api__svc_get(mb_api *api, mb_call *call);
void mb_api__svc_release(mb_api *api, mb_call *call);
void mb_api__svc_reset(mb_api *api, mb_call *call);
void mb_api__svc_upload_url(mb_api *api, mb_call *call);
void mb_api__svc_initialize(mb_api *api, mb_call *call);
void mb_api__svc_dump(mb_api *api, mb_call *call);
void mb_api__healthz(mb_api *api, mb_call *call);
/* Observability (observe.c, dashboard.c). */
void mb_api__metrics(mb_api *api, mb_call *call);
void mb_api__metrics_history(mb_api *api, mb_call *call);
void mb_api__calls(mb_api *api, mb_call *call);
void mb_api__stats(mb_api *api, mb_call *call);
void mb_api__blob_calls(mb_api *api, mb_call *call);
void mb_api__dashboard(mb_api *api, mb_call *call);
void mb_api__openapi_doc(mb_api *api, mb_call *call);

/* Validates an acquire body and acquires (sandboxes.c). On failure the
 * error response is queued and nothing is left to free. */
int mb_api__acquire_body(mb_api *api, mb_call *call, int mode, mb_acquire_body *body,
                         mb_sandbox_rec *rec);
/* The acquire half of it, for a body already parsed (and freed on failure). */
int mb_api__acquire_parsed(mb_api *api, mb_call *call, mb_acquire_body *body,
                           mb_sandbox_rec *rec);

/* ?NAME= read as FastAPI reads a bool into *out (left alone when absent);
 * a 422 is queued and MB_EINVAL returned for anything else. */
int mb_api__query_bool(mb_call *call, const char *name, int *out);
/* The sandbox and server a /sandbox/{server}/{id}/... request is about. */
typedef struct mb_svc_target {
    const char *server;    /* Klavis's local name (static storage) */
    mb_sandbox_rec rec;
    mb_server_rec srv;     /* its JSON fields owned */
} mb_svc_target;

/* Resolves args[0] (a server name or alias) and args[1] (a sandbox of the
 * caller holding that server); on failure the 404 is queued. */
int mb_api__svc_target(mb_api *api, mb_call *call, mb_svc_target *t);
void mb_api__svc_target_free(mb_svc_target *t);
/* google_cloud's initialize / dump / auth_data (svc_gcloud.c). */
int mb_api__gcloud_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                              int init_default, char **message, json_t **detail, mb_err *err);
int mb_api__gcloud_dump(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data, mb_err *err);
json_t *mb_api__gcloud_auth_data(mb_api *api, const mb_svc_target *t);
/* canvas's hooks (svc_canvas.c). */
int mb_api__canvas_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                              int init_default, char **message, json_t **detail, mb_err *err);
int mb_api__canvas_dump(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data,
                        mb_err *err);
json_t *mb_api__canvas_auth_data(mb_api *api, const mb_svc_target *t);
/* SandboxInfo.auth_data of that server (svchooks.c); owned by the caller. */
json_t *mb_api__svc_auth_data(mb_api *api, const mb_svc_target *t);
/* poste_email_toolathlon's hooks (svc_mail.c). */
int mb_api__mail_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                            int init_default, char **message, json_t **detail, mb_err *err);
int mb_api__mail_dump(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data,
                      mb_err *err);
json_t *mb_api__mail_auth_data(mb_api *api, const mb_svc_target *t);

/* BASE, plus the note on a missing seed of that benchmark, as a JSON string. */
json_t *mb_api__acquire_message(mb_api *api, const char *benchmark, const char *base);

/* JSON views of records (views.c). */
json_t *mb_api__server_items(mb_api *api, const mb_sandbox_rec *rec);
json_t *mb_api__sandbox_info(mb_api *api, const mb_sandbox_rec *rec);
/* 422 with a FastAPI detail array (stolen). */
void mb_api__respond_422(mb_call *call, json_t *detail);

#endif
