/*
 * meta.c - /healthz and /openapi.json. The OpenAPI document is built from
 * the route table, so it describes exactly what is served; the schemas are
 * Klavis's, field for field.
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>

void mb_api__healthz(mb_api *api, mb_call *call)
{
    mb_sandbox_rec *recs;
    size_t n = 0;
    int ok = mb_store_sandbox_list(mb_core_store(api->core), NULL, &recs, &n, NULL) == MB_OK;
    if (ok) free(recs);
    json_t *body = json_pack("{s:s,s:I,s:b}", "status", ok ? "ok" : "degraded", "sandboxes",
                             (json_int_t)n, "mcp_gateway", api->has_mcp);
    json_t *pool = mb_core_pool_info(api->core);
    if (pool) json_object_set_new(body, "pool", pool);
    mb_http_respond_json(call->req, ok ? 200 : 503, body);
}

static json_t *ref(const char *name)
{
    char *r = mb_asprintf("#/components/schemas/%s", name);
    json_t *o = json_pack("{s:s}", "$ref", r);
    free(r);
    return o;
}

static json_t *nullable(json_t *schema)
{
    return json_pack("{s:[o,{s:s}]}", "anyOf", schema, "type", "null");
}

static json_t *str(void) { return json_pack("{s:s}", "type", "string"); }

static json_t *schemas(void)
{
    json_t *names = json_array();
    for (size_t i = 0; i < mb_n_server_names; i++)
        json_array_append_new(names, json_string(mb_server_names[i]));
    json_t *benches = json_array();
    for (size_t i = 0; i < mb_n_benchmark_names; i++)
        json_array_append_new(benches, json_string(mb_benchmark_names[i]));
    json_t *s = json_object();
    json_object_set_new(s, "LocalSandboxMCPServer",
                        json_pack("{s:s,s:o}", "type", "string", "enum", names));
    json_object_set_new(s, "BenchmarkEnum",
                        json_pack("{s:s,s:o}", "type", "string", "enum", benches));
    json_object_set_new(s, "SandboxStatus",
                        json_pack("{s:s,s:[s,s,s]}", "type", "string", "enum", "idle",
                                  "occupied", "error"));
    json_object_set_new(s, "AcquireLocalSandboxRequest", json_pack(
        "{s:s,s:[s],s:{s:{s:[{s:s,s:o},{s:s,s:s}]},s:o,s:o,s:{s:[{s:s,s:i,s:i},{s:s}],s:i}}}",
        "type", "object", "required", "server_names", "properties",
        "server_names", "anyOf", "type", "array", "items", ref("LocalSandboxMCPServer"),
        "type", "string", "const", "ALL",
        "benchmark", nullable(ref("BenchmarkEnum")),
        "test_account_email", nullable(str()),
        "ttl_seconds", "anyOf", "type", "integer", "minimum", 60, "maximum", 86400,
        "type", "null", "default", 7200));
    json_object_set_new(s, "LocalSandboxServerItem", json_pack(
        "{s:s,s:[s],s:{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}}",
        "type", "object", "required", "id", "properties",
        "id", str(), "server_name", nullable(str()), "mcp_server_url", nullable(str()),
        "status", nullable(ref("SandboxStatus")), "benchmark", nullable(str()),
        "updated_at", nullable(str()), "metadata", nullable(json_pack("{s:s}", "type", "object")),
        "auth_data", nullable(json_pack("{s:s}", "type", "object")),
        "tags", nullable(json_pack("{s:s,s:o}", "type", "array", "items", str()))));
    json_object_set_new(s, "AcquireLocalSandboxResponse", json_pack(
        "{s:s,s:[s,s],s:{s:o,s:o,s:o,s:{s:s,s:o},s:o}}",
        "type", "object", "required", "local_sandbox_id", "servers", "properties",
        "local_sandbox_id", str(), "status", nullable(ref("SandboxStatus")),
        "benchmark", nullable(str()), "servers", "type", "array", "items",
        ref("LocalSandboxServerItem"), "message", nullable(str())));
    json_object_set_new(s, "LocalSandboxInfo", json_pack(
        "{s:s,s:[s,s,s],s:{s:o,s:o,s:o,s:o,s:{s:s,s:o}}}",
        "type", "object", "required", "local_sandbox_id", "created_at", "servers", "properties",
        "local_sandbox_id", str(), "created_at", str(), "status", nullable(ref("SandboxStatus")),
        "benchmark", nullable(str()), "servers", "type", "array", "items",
        ref("LocalSandboxServerItem")));
    json_object_set_new(s, "ListLocalSandboxesResponse", json_pack(
        "{s:s,s:[s,s],s:{s:{s:s,s:o},s:{s:s}}}", "type", "object", "required",
        "local_sandboxes", "total_count", "properties", "local_sandboxes", "type", "array",
        "items", ref("LocalSandboxInfo"), "total_count", "type", "integer"));
    json_object_set_new(s, "UploadUrlResponse", json_pack(
        "{s:s,s:[s,s],s:{s:o,s:{s:s}}}", "type", "object", "required", "upload_url",
        "expires_in_minutes", "properties", "upload_url", str(), "expires_in_minutes", "type",
        "integer"));
    json_object_set_new(s, "DumpUrlResponse", json_pack(
        "{s:s,s:[s,s],s:{s:o,s:{s:s}}}", "type", "object", "required", "download_url",
        "expires_in_minutes", "properties", "download_url", str(), "expires_in_minutes", "type",
        "integer"));
    json_object_set_new(s, "InitializeSandboxResponse", json_pack(
        "{s:s,s:[s,s,s],s:{s:o,s:o,s:o}}", "type", "object", "required", "sandbox_id", "status",
        "message", "properties", "sandbox_id", str(), "status", str(), "message", str()));
    json_object_set(s, "SandboxStatusResponse", json_object_get(s, "InitializeSandboxResponse"));
    json_object_set_new(s, "ResetResponse", json_pack(
        "{s:s,s:{s:o,s:o,s:o}}", "type", "object", "properties", "local_sandbox_id", str(),
        "status", str(), "message", str()));
    json_object_set_new(s, "MessageResponse", json_pack(
        "{s:s,s:[s],s:{s:o}}", "type", "object", "required", "message", "properties",
        "message", str()));
    json_object_set_new(s, "CreateSandboxResponse", json_pack(
        "{s:s,s:[s,s,s,s],s:{s:o,s:o,s:{s:s,s:o},s:o,s:o}}", "type", "object", "required",
        "sandbox_id", "server_name", "status", "message", "properties", "sandbox_id", str(),
        "server_name", str(), "server_urls", "type", "object", "additionalProperties", str(),
        "status", str(), "message", str()));
    json_object_set_new(s, "SandboxInfo", json_pack(
        "{s:s,s:[s,s,s],s:{s:o,s:o,s:o,s:o,s:o,s:o,s:{s:s}}}", "type", "object", "required",
        "sandbox_id", "server_name", "status", "properties", "sandbox_id", str(), "server_name",
        str(), "status", str(), "benchmark", nullable(str()), "updated_at", str(), "server_urls",
        json_pack("{s:s,s:o}", "type", "object", "additionalProperties", str()), "metadata",
        "type", "object"));
    /* mcpbox's own acquire field (docs/API.md): narrows the profile's egress. */
    json_t *egress = nullable(json_pack("{s:s,s:o,s:i,s:s}", "type", "array", "items", str(),
                                        "maxItems", MB_ACQUIRE_EGRESS_MAX, "description",
                                        "hosts the sandbox's servers may reach through the "
                                        "egress proxy; narrows the profile's allow-list, never "
                                        "widens it"));
    json_object_set(json_object_get(json_object_get(s, "AcquireLocalSandboxRequest"),
                                    "properties"), "egress", egress);
    json_t *info = json_object_get(json_object_get(s, "SandboxInfo"), "properties");
    json_object_set_new(info, "server_url", nullable(str()));
    json_object_set_new(info, "auth_data", nullable(json_pack("{s:s}", "type", "object")));
    json_object_set_new(info, "tags", nullable(json_pack("{s:s,s:o}", "type", "array", "items",
                                                         str())));
    json_object_set_new(s, "AcquireSandboxRequest", json_pack(
        "{s:s,s:{s:o,s:o,s:o,s:o}}", "type", "object", "properties", "benchmark",
        nullable(json_pack("{s:[s,s,s]}", "enum", "MCP_Atlas", "Toolathlon", "MCP_Mark")),
        "test_account_email", nullable(str()), "tag", nullable(str()), "ttl_seconds",
        nullable(json_pack("{s:s,s:i,s:i}", "type", "integer", "minimum", 60, "maximum", 86400))));
    json_object_set_new(json_object_get(json_object_get(s, "AcquireSandboxRequest"), "properties"),
                        "egress", egress);
    json_object_set(s, "ReleaseSandboxResponse", json_object_get(s, "InitializeSandboxResponse"));
    json_object_set_new(s, "ListSandboxesResponse", json_pack(
        "{s:s,s:[s,s],s:{s:{s:s,s:{s:s}},s:{s:s}}}", "type", "object", "required", "sandboxes",
        "total_count", "properties", "sandboxes", "type", "array", "items", "type", "object",
        "total_count", "type", "integer"));
    json_object_set_new(s, "DumpSandboxResponse", json_pack(
        "{s:s,s:[s,s,s,s],s:{s:o,s:o,s:o,s:{}}}", "type", "object", "required", "sandbox_id",
        "server_name", "dumped_at", "data", "properties", "sandbox_id", str(), "server_name",
        str(), "dumped_at", json_pack("{s:s,s:s}", "type", "string", "format", "date-time"),
        "data"));
    json_object_set_new(s, "Health", json_pack(
        "{s:s,s:{s:o,s:{s:s},s:{s:s}}}", "type", "object", "properties", "status", str(),
        "sandboxes", "type", "integer", "mcp_gateway", "type", "boolean"));
    json_object_set_new(s, "HTTPError", json_pack(
        "{s:s,s:{s:o}}", "type", "object", "properties", "detail", str()));
    json_object_set_new(s, "ValidationError", json_pack(
        "{s:s,s:[s,s,s],s:{s:{s:s},s:o,s:o,s:{}}}", "type", "object", "required", "loc", "msg",
        "type", "properties", "loc", "type", "array", "msg", str(), "type", str(), "input"));
    json_object_set_new(s, "HTTPValidationError", json_pack(
        "{s:s,s:{s:{s:s,s:o}}}", "type", "object", "properties", "detail", "type", "array",
        "items", ref("ValidationError")));
    return s;
}

/* "/local-sandbox/{}/reset" -> "/local-sandbox/{local_sandbox_id}/reset";
 * with two segments the first is the server: "/sandbox/{server_name}/{sandbox_id}". */
static char *openapi_path(const char *pattern, const char *params[MB_ROUTE_MAX_ARGS])
{
    const char *name = mb_str_has_prefix(pattern, "/local-sandbox") ? "local_sandbox_id"
                                                                    : "sandbox_id";
    int two = strstr(pattern, "{}/{}") != NULL, k = 0;
    params[0] = params[1] = NULL;
    mb_buf b = {0};
    for (const char *p = pattern; *p; p++) {
        if (p[0] == '{' && p[1] == '}') {
            const char *pn = two && k == 0 ? "server_name" : two ? "sandbox_id" : name;
            mb_buf_printf(&b, "{%s}", pn);
            params[k++] = pn;
            p++;
        } else {
            mb_buf_putc(&b, *p);
        }
    }
    return mb_buf_steal(&b);
}

static json_t *error_responses(const mb_route *r)
{
    json_t *resp = json_object();
    json_t *http_err = json_pack("{s:{s:{s:o}}}", "content", "application/json", "schema",
                                 ref("HTTPError"));
    if (r->auth == MB_AUTH_BEARER) {
        json_object_set_new(resp, "401", json_pack("{s:s,s:O}", "description",
                                                   "No API key", "content",
                                                   json_object_get(http_err, "content")));
        json_object_set_new(resp, "403", json_pack("{s:s,s:O}", "description",
                                                   "Invalid or revoked API key", "content",
                                                   json_object_get(http_err, "content")));
    }
    if (r->auth == MB_AUTH_SIGNED)
        json_object_set_new(resp, "403", json_pack("{s:s,s:O}", "description",
                                                   "Signature missing, altered or expired",
                                                   "content", json_object_get(http_err, "content")));
    if (strstr(r->pattern, "{}"))
        json_object_set_new(resp, "404", json_pack("{s:s,s:O}", "description",
                                                   "Unknown or released sandbox", "content",
                                                   json_object_get(http_err, "content")));
    if (r->auth != MB_AUTH_NONE)
        json_object_set_new(resp, "422", json_pack("{s:s,s:{s:{s:o}}}", "description",
                                                   "Validation Error", "content",
                                                   "application/json", "schema",
                                                   ref("HTTPValidationError")));
    json_decref(http_err);
    return resp;
}

json_t *mb_api_openapi(void)
{
    json_t *paths = json_object();
    for (const mb_route *r = mb_routes; r->method; r++) {
        const char *param[MB_ROUTE_MAX_ARGS];
        char *path = openapi_path(r->pattern, param);
        json_t *item = json_object_get(paths, path);
        if (!item) {
            item = json_object();
            json_object_set_new(paths, path, item);
        }
        json_t *op = json_object();
        json_object_set_new(op, "summary", json_string(r->summary));
        json_t *params = json_array();
        for (int k = 0; k < MB_ROUTE_MAX_ARGS && param[k]; k++)
            json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:o}", "name", param[k], "in",
                                                    "path", "required", 1, "schema", str()));
        if (r->fn == mb_api__svc_release)
            json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:o}", "name", "instance_id",
                                                    "in", "query", "required", 0, "schema",
                                                    nullable(str())));
        if (r->fn == mb_api__svc_initialize)
            json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:{s:s,s:b}}", "name",
                                                    "init_default_data", "in", "query",
                                                    "required", 0, "schema", "type", "boolean",
                                                    "default", 0));
        if (r->fn == mb_api__svc_list) {
            json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:o}", "name", "server_name",
                                                    "in", "query", "required", 0, "schema",
                                                    nullable(str())));
            json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:o}", "name", "tag", "in",
                                                    "query", "required", 0, "schema",
                                                    nullable(str())));
        }
        if (r->fn == mb_api__release || r->fn == mb_api__svc_release)
            json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:{s:s,s:b}}", "name", "is_ttl",
                                                    "in", "query", "required", 0, "schema", "type",
                                                    "boolean", "default", 0));
        if (r->auth == MB_AUTH_SIGNED) {
            json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:{s:s}}", "name", "expires",
                                                    "in", "query", "required", 1, "schema", "type",
                                                    "integer"));
            json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:o}", "name", "signature",
                                                    "in", "query", "required", 1, "schema", str()));
        }
        json_object_set_new(op, "parameters", params);
        if (r->body == MB_BODY_BUFFER)
            json_object_set_new(op, "requestBody", json_pack(
                "{s:b,s:{s:{s:o}}}", "required", r->fn == mb_api__acquire, "content",
                "application/json", "schema",
                r->fn == mb_api__svc_acquire      ? ref("AcquireSandboxRequest")
                : r->fn == mb_api__svc_initialize ? json_pack("{s:s}", "type", "object")
                                                 : ref("AcquireLocalSandboxRequest")));
        if (r->body == MB_BODY_FILE)
            json_object_set_new(op, "requestBody", json_pack(
                "{s:b,s:{s:{s:{s:s,s:s}}}}", "required", 1, "content", "application/gzip",
                "schema", "type", "string", "format", "binary"));
        json_t *responses = error_responses(r);
        char status[8];
        snprintf(status, sizeof status, "%u", r->status);
        json_t *ok = json_pack("{s:s}", "description", "Successful Response");
        if (r->response)
            json_object_set_new(ok, "content", json_pack("{s:{s:o}}", "application/json",
                                                         "schema", ref(r->response)));
        else if (r->fn == mb_api__blob_get)
            json_object_set_new(ok, "content", json_pack("{s:{s:{s:s,s:s}}}", "application/gzip",
                                                         "schema", "type", "string", "format",
                                                         "binary"));
        json_object_set_new(responses, status, ok);
        json_object_set_new(op, "responses", responses);
        if (r->auth == MB_AUTH_BEARER)
            json_object_set_new(op, "security", json_pack("[{s:[]}]", "HTTPBearer"));
        char lower[8];
        size_t i;
        for (i = 0; r->method[i] && i < sizeof lower - 1; i++) lower[i] = (char)(r->method[i] | 0x20);
        lower[i] = '\0';
        json_object_set_new(item, lower, op);
        free(path);
    }
    return json_pack("{s:s,s:{s:s,s:s,s:s},s:o,s:{s:o,s:{s:{s:s,s:s}}}}", "openapi", "3.1.0",
                     "info", "title", "mcpbox", "version", "0.1.0", "description",
                     "Klavis-compatible Local Sandbox API. MCP servers are served at "
                     "/{server}/mcp/?local_sandbox_id={id} (Streamable HTTP).",
                     "paths", paths, "components", "schemas", schemas(), "securitySchemes",
                     "HTTPBearer", "type", "http", "scheme", "bearer");
}

void mb_api__openapi_doc(mb_api *api, mb_call *call)
{
    mb_http_respond_json(call->req, 200, mb_api_openapi());
}
