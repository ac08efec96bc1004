/*
 * sandboxes.c - the /local-sandbox resource: acquire, list, get, release,
 * reset.
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Keeps the servers the benchmark's profile offers (/sandbox/local_dev hands
 * out no URL that would answer 404), without canvas: Klavis acquires it on
 * its own (/sandbox/canvas), and a Toolathlon Canvas holds a token set only
 * one sandbox may have. */
static void keep_offered(mb_api *api, mb_acquire_body *body)
{
    size_t n = 0;
    for (size_t i = 0; i < body->n_servers; i++) {
        if (strcmp(body->servers[i], "canvas") &&
            mb_core_offers(api->core, body->benchmark, body->servers[i]))
            body->servers[n++] = body->servers[i];
        else
            free(body->servers[i]);
    }
    body->n_servers = n;
}

int mb_api__acquire_body(mb_api *api, mb_call *call, int mode, mb_acquire_body *body,
                         mb_sandbox_rec *rec)
{
    json_t *detail;
    const mb_config *cfg = mb_core_config(api->core);
    if (mb_api_parse_acquire(call->req->body.data, call->req->body.len, mode,
                             cfg->default_ttl_seconds, body, &detail) != MB_OK) {
        mb_api__respond_422(call, detail);
        return MB_EINVAL;
    }
    if (mode == MB_ACQUIRE_LOCAL_DEV) keep_offered(api, body);
    return mb_api__acquire_parsed(api, call, body, rec);
}

/* The request's egress allow-list as JSON, once every entry is checked to lie
 * within the profile's list for the servers asked for (a request narrows the
 * profile's egress, never widens it); NULL with *detail set (422) otherwise,
 * NULL and no detail when the request has none. */
static char *egress_checked(mb_api *api, const mb_acquire_body *body, json_t **detail)
{
    *detail = NULL;
    if (!body->egress) return NULL;
    json_t *list = json_array();
    for (size_t i = 0; i < body->n_egress; i++) {
        char *why = mb_core_egress_refusal(api->core, body->benchmark,
                                           (const char *const *)body->servers, body->n_servers,
                                           body->egress[i]);
        if (why) {
            if (!*detail) *detail = json_array();
            json_array_append_new(*detail, json_pack("{s:s,s:[s,s,I],s:s,s:s,s:{s:{}}}", "type",
                                                     "value_error", "loc", "body", "egress",
                                                     (json_int_t)i, "msg", why, "input",
                                                     body->egress[i], "ctx", "error"));
            free(why);
        }
        json_array_append_new(list, json_string(body->egress[i]));
    }
    char *text = *detail ? NULL : json_dumps(list, JSON_COMPACT);
    json_decref(list);
    return text;
}

int mb_api__acquire_parsed(mb_api *api, mb_call *call, mb_acquire_body *body,
                           mb_sandbox_rec *rec)
{
    json_t *detail;
    char *egress = egress_checked(api, body, &detail);
    if (detail) {
        mb_acquire_body_free(body);
        mb_api__respond_422(call, detail);
        return MB_EINVAL;
    }
    mb_acquire_req req = {
        .owner = call->key.owner,
        .servers = (const char *const *)body->servers,
        .n_servers = body->n_servers,
        .benchmark = body->benchmark,
        .test_account_email = body->test_account_email,
        .ttl_seconds = body->ttl_seconds,
        .egress_json = egress,
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
    free(egress);
    if (rc) {
        mb_acquire_body_free(body);
        mb_http_respond_err(call->req, &err);
    }
    return rc;
}

json_t *mb_api__acquire_message(mb_api *api, const char *benchmark, const char *base)
{
    char *note = mb_core_seed_note(api->core, benchmark);
    if (!note) return json_string(base);
    char *msg = mb_asprintf("%s. Note: %s", base, note);
    json_t *v = json_string(msg);
    free(msg);
    free(note);
    return v ? v : json_string(base);
}

void mb_api__acquire(mb_api *api, mb_call *call)
{
    mb_acquire_body body;
    mb_sandbox_rec rec;
    if (mb_api__acquire_body(api, call, MB_ACQUIRE_LOCAL, &body, &rec) != MB_OK) return;
    mb_acquire_body_free(&body);
    json_t *o = json_object();
    json_object_set_new(o, "local_sandbox_id", json_string(rec.id));
    json_object_set_new(o, "status", json_string(rec.status));
    json_object_set_new(o, "benchmark", rec.benchmark[0] ? json_string(rec.benchmark) : json_null());
    json_object_set_new(o, "servers", mb_api__server_items(api, &rec));
    json_object_set_new(o, "message", mb_api__acquire_message(
                                          api, rec.benchmark,
                                          "Local sandbox environment acquired successfully"));
    mb_http_respond_json(call->req, 201, o);
}

void mb_api__list(mb_api *api, mb_call *call)
{
    mb_sandbox_rec *recs;
    size_t n;
    mb_err err;
    if (mb_store_sandbox_list(mb_core_store(api->core), call->key.owner, &recs, &n, &err)) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, mb_api__sandbox_info(api, &recs[i]));
    free(recs);
    mb_http_respond_json(call->req, 200,
                         json_pack("{s:o,s:I}", "local_sandboxes", arr, "total_count", (json_int_t)n));
}

void mb_api__get(mb_api *api, mb_call *call)
{
    mb_sandbox_rec rec;
    mb_err err;
    if (mb_core_get(api->core, call->key.owner, call->args[0], &rec, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    mb_http_respond_json(call->req, 200, mb_api__sandbox_info(api, &rec));
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

int mb_api__query_bool(mb_call *call, const char *name, int *out)
{
    const char *v = mb_http_query(call->req, name);
    if (!v || parse_bool(v, out) == 0) return MB_OK;
    json_t *detail = json_pack("[{s:s,s:[s,s],s:s,s:s}]", "type", "bool_parsing", "loc", "query",
                               name, "msg",
                               "Input should be a valid boolean, unable to interpret input",
                               "input", v);
    mb_api__respond_422(call, detail);
    return MB_EINVAL;
}

void mb_api__release(mb_api *api, mb_call *call)
{
    int is_ttl = 0;
    if (mb_api__query_bool(call, "is_ttl", &is_ttl) != MB_OK) return;
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

void mb_api__reset(mb_api *api, mb_call *call)
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
