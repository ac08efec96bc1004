/*
 * localdev.c - the older /sandbox/local_dev family that Toolathlon's client
 * still calls: one acquire returning server_urls keyed by server name, and
 * {sandbox_id, status, message} answers. Upload-url and dump share
 * transfer.c's handlers.
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>

/* {name: url} for the servers of a sandbox that started: a server that
 * failed is left out rather than handed out as a URL that cannot answer. */
static json_t *live_urls(mb_api *api, const char *id)
{
    json_t *urls = json_object();
    mb_server_rec *srv;
    size_t n;
    if (mb_store_server_list(mb_core_store(api->core), id, &srv, &n, NULL) != MB_OK) return urls;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(srv[i].status, "error")) {
            const char *why = json_string_value(json_object_get(srv[i].metadata, "error"));
            mb_warn("local_dev %s: %s left out of server_urls: %s", id, srv[i].name,
                    why ? why : "it did not start");
            continue;
        }
        char *url = mb_core_mcp_url(api->core, srv[i].name, id);
        json_object_set_new(urls, srv[i].name, json_string(url));
        free(url);
    }
    mb_server_recs_free(srv, n);
    return urls;
}

void mb_api__localdev_acquire(mb_api *api, mb_call *call)
{
    mb_acquire_body body;
    mb_sandbox_rec rec;
    if (mb_api__acquire_body(api, call, MB_ACQUIRE_LOCAL_DEV, &body, &rec) != MB_OK) return;
    mb_acquire_body_free(&body);
    json_t *o = json_pack("{s:s,s:s,s:o,s:s}", "sandbox_id", rec.id, "server_name", "local_dev",
                          "server_urls", live_urls(api, rec.id), "status", rec.status);
    json_object_set_new(o, "message", mb_api__acquire_message(
                                          api, rec.benchmark,
                                          "Sandbox acquired successfully. Use the server_urls to "
                                          "connect to the MCP servers."));
    mb_http_respond_json(call->req, 201, o);
}

void mb_api__localdev_get(mb_api *api, mb_call *call)
{
    mb_sandbox_rec rec;
    mb_err err;
    if (mb_core_get(api->core, call->key.owner, call->args[0], &rec, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    char updated[40];
    mb_iso8601(rec.updated_at, updated);
    json_t *urls = json_object();
    json_t *items = mb_api__server_items(api, &rec);
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item) {
        json_t *url = json_object_get(item, "mcp_server_url");
        if (json_is_string(url)) /* only servers that run */
            json_object_set(urls, json_string_value(json_object_get(item, "server_name")), url);
    }
    json_decref(items);
    json_t *o = json_pack("{s:s,s:n,s:s,s:s,s:s,s:s}", "sandbox_id", rec.id, "server_url",
                          "server_name", "local_dev", "status", rec.status, "benchmark",
                          rec.benchmark, "updated_at", updated);
    if (!rec.benchmark[0]) json_object_set_new(o, "benchmark", json_null());
    json_object_set_new(o, "server_urls", urls);
    json_object_set_new(o, "metadata", json_null());
    json_object_set_new(o, "auth_data", json_null());
    json_object_set_new(o, "tags", json_array());
    mb_http_respond_json(call->req, 200, o);
}

static void status_answer(mb_call *call, const char *id, const char *status, const char *msg)
{
    mb_http_respond_json(call->req, 200,
                         json_pack("{s:s,s:s,s:s}", "sandbox_id", id, "status", status,
                                   "message", msg));
}

void mb_api__localdev_release(mb_api *api, mb_call *call)
{
    mb_err err;
    if (mb_core_release(api->core, call->key.owner, call->args[0], 0, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    status_answer(call, call->args[0], "idle", "Sandbox released successfully");
}

void mb_api__localdev_reset(mb_api *api, mb_call *call)
{
    mb_err err;
    if (mb_core_reset(api->core, call->key.owner, call->args[0], &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    status_answer(call, call->args[0], "occupied", "Sandbox reset to its initial state");
}

void mb_api__localdev_initialize(mb_api *api, mb_call *call)
{
    mb_api__initialize(api, call);
}
