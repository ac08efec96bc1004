/*
 * api.h - the face of the REST layer: Klavis's Local Sandbox API (and the
 * older /sandbox/local_dev family) over the HTTP layer, plus the signed
 * upload/download URLs, /healthz and /openapi.json. MCP routes
 * (/{server}/mcp) are handed to the gateway when one is attached.
 */
#ifndef MB_API_H
#define MB_API_H

#include "core/core.h"
#include "http/http.h"

#include <jansson.h>

typedef struct mb_api mb_api;

/* The gateway hook: a raw HTTP handler for MCP routes (see mb_http_raw_fn).
 * `route` receives the server name and the sandbox id of the request. */
typedef struct mb_api_mcp_hook {
    void *ctx;
    enum MHD_Result (*handle)(void *ctx, struct MHD_Connection *conn, const char *server,
                              const char *sandbox_id, const char *method,
                              const char *upload_data, size_t *upload_data_size, void **state);
    void (*done)(void *ctx, void *state);
    /* After the first call: whether the request named a live route (the
     * connection then counts as authenticated). May be NULL. */
    int (*routed)(const void *state);
} mb_api_mcp_hook;

mb_api *mb_api_create(mb_core *core, const mb_api_mcp_hook *mcp);
void mb_api_destroy(mb_api *api);
/* One node of many (src/cluster): requests for other nodes' sandboxes are
 * forwarded to them, acquires placed (api/nodes.c). Before serving. */
struct mb_cluster;
void mb_api_set_cluster(mb_api *api, struct mb_cluster *cl);
/* The application to give mb_http_start. */
mb_http_app mb_api_http_app(mb_api *api);

/* ---- used by the API's own files (and its unit tests) ---- */

/* A parsed and validated acquire body. */
typedef struct mb_acquire_body {
    char **servers;          /* owned; de-duplicated, in request order */
    size_t n_servers;
    char *benchmark;         /* NULL = null */
    char *test_account_email;
    char *tag;               /* MB_ACQUIRE_SANDBOX only; NULL = null */
    int64_t ttl_seconds;     /* -1 = null */
    char **egress;           /* owned, lower-cased; NULL = absent/null (the profile's) */
    size_t n_egress;
} mb_acquire_body;

/* The most entries an acquire's "egress" allow-list may have. */
#define MB_ACQUIRE_EGRESS_MAX 32

/* Which acquire body mb_api_parse_acquire reads. */
enum {
    MB_ACQUIRE_LOCAL = 0,     /* POST /local-sandbox: server_names required */
    MB_ACQUIRE_LOCAL_DEV = 1, /* POST /sandbox/local_dev: server_names optional ("ALL") */
    MB_ACQUIRE_SANDBOX = 2,   /* POST /sandbox/{server}: no server_names; tag; body optional */
};

/* Validates an acquire body of the given MB_ACQUIRE_* mode. On failure
 * returns MB_EINVAL and sets *detail to the FastAPI-style array for a 422. */
int mb_api_parse_acquire(const char *body, size_t len, int mode, int64_t default_ttl,
                         mb_acquire_body *out, json_t **detail);
void mb_acquire_body_free(mb_acquire_body *b);

/* The OpenAPI document of exactly what is served. */
json_t *mb_api_openapi(void);

#endif /* MB_API_H */
