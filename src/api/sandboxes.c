/*
 * sandboxes.c - the /local-sandbox resource: acquire, list, get, release,
 * reset.
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int mb_api__acquire_body(mb_api *api, mb_call *call, int local_dev, mb_acquire_body *body,
                        mb_sandbox_rec *rec)
{
    json_t *detail;
    const mb_config *cfg = mb_core_config(api->core);
    if (mb_api_parse_acquire(call->req->body.data, call->req->body.len, local_dev,
                             cfg->default_ttl_seconds, body, &detail) != MB_OK) {
        mb_api_respond_422(call, detail);
        return MB_EINVAL;
    }
    mb_acquire_req req = {
        .owner = call->key.owner,
        .servers = (const char *const *)body->servers,
        .n_servers = body->n_servers,
        .benchmark = body->benchmark,
        .test_account_email = body->test_account_email,
        .ttl_seconds = body->ttl_seconds,
    };
    mb_err err;
    unsigned retry = 0;
    int rc = mb_core_acquire_begin(api->core, call->key.owner, &retry, &err);
    if (!rc) {
        rc = mb_core_acquire(api->core, &req, rec, &err);
        mb_core_acquire_end(api->core, call->key.owner);
    } else {
        call->req->retry_after_s = retry;
    }
    if (rc) {
        mb_acquire_body_free(body);
        mb_http_respond_err(call->req, &err);
    }
    return rc;
}

void mb_api_acquire(mb_api *api, mb_call *call)
{
    mb_acquire_body body;
    mb_sandbox_rec rec;
    if (mb_api__acquire_body(api, call, 0, &body, &rec) != MB_OK) return;
    mb_acquire_body_free(&body);
    json_t *o = json_object();
    json_object_set_new(o, "local_sandbox_id", json_string(rec.id));
    json_object_set_new(o, "status", json_string(rec.status));
    json_object_set_new(o, "benchmark", rec.benchmark[0] ? json_string(rec.benchmark) : json_null());
    json_object_set_new(o, "servers", mb_api_server_items(api, &rec));
    json_object_set_new(o, "message", json_string("Local sandbox environment acquired successfully"));
    mb_http_respond_json(call->req, 201, o);
}

void mb_api_list(mb_api *api, mb_call *call)
{
    mb_sandbox_rec *recs;
    size_t n;
    mb_err err;
    if (mb_store_sandbox_list(mb_core_store(api->core), call->key.owner, &recs, &n, &err)) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, mb_api_sandbox_info(api, &recs[i]));
    free(recs);
    mb_http_respond_json(call->req, 200,
                         json_pack("{s:o,s:I}", "local_sandboxes", arr, "total_count", (json_int_t)n));
}

void mb_api_get(mb_api *api, mb_call *call)
{
    mb_sandbox_rec rec;
    mb_err err;
    if (mb_core_get(api->core, call->key.owner, call->args[0], &rec, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    mb_http_respond_json(call->req, 200, mb_api_sandbox_info(api, &rec));
}

/* ?is_ttl= as FastAPI reads a bool: true/false, 1/0, yes/no, on/off. */
static int parse_bool(const char *v, int *out)
{
    static const char *yes[] = {"true", "1", "yes", "on", "t", "y"};
    static const char *no[] = {"false", "0", "no", "off", "f", "n"};
    for (size_t i = 0; i < 6; i++) {
        if (!strcasecmp(v, yes[i])) { *out = 1; return 0; }
        if (!strcasecmp(v, no[i])) { *out = 0; return 0; }
    }
    return -1;
}

void mb_api_release(mb_api *api, mb_call *call)
{
    int is_ttl = 0;
    const char *v = mb_http_query(call->req, "is_ttl");
    if (v && parse_bool(v, &is_ttl) != 0) {
        json_t *detail = json_pack("[{s:s,s:[s,s],s:s,s:s}]", "type", "bool_parsing", "loc",
                                   "query", "is_ttl", "msg",
                                   "Input should be a valid boolean, unable to interpret input",
                                   "input", v);
        mb_api_respond_422(call, detail);
        return;
    }
    mb_err err;
    const char *id = call->args[0];
    if (mb_core_release(api->core, call->key.owner, id, is_ttl, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    char *msg = mb_asprintf("Local sandbox release started for %s: it will be released "
                            "asynchronously in background.", id);
    mb_http_respond_json(call->req, 200, json_pack("{s:s}", "message", msg));
    free(msg);
}

void mb_api_reset(mb_api *api, mb_call *call)
{
    mb_err err;
    const char *id = call->args[0];
    if (mb_core_reset(api->core, call->key.owner, id, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    mb_http_respond_json(call->req, 200,
                         json_pack("{s:s,s:s,s:s}", "local_sandbox_id", id, "status", "occupied",
                                   "message", "Local sandbox reset to its initial state"));
}
