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
};

extern const mb_route mb_routes[];

/* Handlers (sandboxes.c, transfer.c, localdev.c, meta.c). */
void mb_api_acquire(mb_api *api, mb_call *call);
void mb_api_list(mb_api *api, mb_call *call);
void mb_api_get(mb_api *api, mb_call *call);
void mb_api_release(mb_api *api, mb_call *call);
void mb_api_reset(mb_api *api, mb_call *call);
void mb_api_upload_url(mb_api *api, mb_call *call);
void mb_api_initialize(mb_api *api, mb_call *call);
void mb_api_dump(mb_api *api, mb_call *call);
void mb_api_blob_put(mb_api *api, mb_call *call);
void mb_api_blob_get(mb_api *api, mb_call *call);
void mb_api_localdev_acquire(mb_api *api, mb_call *call);
void mb_api_localdev_get(mb_api *api, mb_call *call);
void mb_api_localdev_release(mb_api *api, mb_call *call);
void mb_api_localdev_reset(mb_api *api, mb_call *call);
void mb_api_localdev_initialize(mb_api *api, mb_call *call);
void mb_api_healthz(mb_api *api, mb_call *call);
void mb_api_openapi_doc(mb_api *api, mb_call *call);

/* Validates an acquire body and acquires (sandboxes.c). On failure the
 * error response is queued and nothing is left to free. */
int mb_api__acquire_body(mb_api *api, mb_call *call, int local_dev, mb_acquire_body *body,
                         mb_sandbox_rec *rec);

/* JSON views of records (views.c). */
json_t *mb_api_server_items(mb_api *api, const mb_sandbox_rec *rec);
json_t *mb_api_sandbox_info(mb_api *api, const mb_sandbox_rec *rec);
/* 422 with a FastAPI detail array (stolen). */
void mb_api_respond_422(mb_call *call, json_t *detail);

#endif
