/*
 * views.c - JSON views of sandbox records in Klavis's shapes:
 * LocalSandboxInfo and LocalSandboxServerItem.
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>

static json_t *nullable_string(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static const char *server_status(const mb_sandbox_rec *rec, const mb_server_rec *srv)
{
    return !strcmp(srv->status, "error") ? "error" : rec->status;
}

/* What the record says (upstream, or why the server is unavailable) plus
 * the live state from the gateway: "ready", server_info, protocol_version,
 * tools_sha256 and tools_count (the drift check), state, restarts. */
static json_t *server_metadata(mb_api *api, const mb_sandbox_rec *rec, const mb_server_rec *srv)
{
    json_t *md = srv->metadata ? json_deep_copy(srv->metadata) : json_object();
    json_t *live = NULL;
    int ready = 0;
    if (!strcmp(rec->status, "occupied") &&
        mb_core_server_state(api->core, rec->id, srv->name, &live, &ready) == MB_OK) {
        json_object_update(md, live);
        json_decref(live);
    }
    json_object_set_new(md, "ready", json_boolean(ready));
    return md;
}

json_t *mb_api__server_items(mb_api *api, const mb_sandbox_rec *rec)
{
    json_t *items = json_array();
    mb_server_rec *srv;
    size_t n;
    if (mb_store_server_list(mb_core_store(api->core), rec->id, &srv, &n, NULL) != MB_OK)
        return items;
    for (size_t i = 0; i < n; i++) {
        char updated[40];
        mb_iso8601(srv[i].updated_at, updated);
        char *url = mb_core_mcp_url(api->core, srv[i].name, rec->id);
        json_t *item = json_object();
        json_object_set_new(item, "server_name", json_string(srv[i].name));
        json_object_set_new(item, "id", json_string(srv[i].id));
        /* A server that is not running in this sandbox (the profile does not
         * offer it, or it failed to start) gets no URL: its URL would only
         * answer 404, and clients connect to every URL they are given. */
        json_object_set_new(item, "mcp_server_url",
                            strcmp(srv[i].status, "error") ? json_string(url) : json_null());
        json_object_set_new(item, "status", json_string(server_status(rec, &srv[i])));
        json_object_set_new(item, "benchmark", nullable_string(rec->benchmark));
        json_object_set_new(item, "updated_at", json_string(updated));
        json_object_set_new(item, "metadata", server_metadata(api, rec, &srv[i]));
        mb_svc_target tg = {.server = srv[i].name, .rec = *rec, .srv = srv[i]};
        json_object_set_new(item, "auth_data", mb_api__svc_auth_data(api, &tg));
        json_object_set(item, "tags", srv[i].tags ? srv[i].tags : json_null());
        json_array_append_new(items, item);
        free(url);
    }
    mb_server_recs_free(srv, n);
    return items;
}

json_t *mb_api__sandbox_info(mb_api *api, const mb_sandbox_rec *rec)
{
    char created[40];
    mb_iso8601(rec->created_at, created);
    json_t *o = json_object();
    json_object_set_new(o, "local_sandbox_id", json_string(rec->id));
    json_object_set_new(o, "created_at", json_string(created));
    json_object_set_new(o, "status", json_string(rec->status));
    json_object_set_new(o, "benchmark", nullable_string(rec->benchmark));
    json_object_set_new(o, "servers", mb_api__server_items(api, rec));
    return o;
}

void mb_api__respond_422(mb_call *call, json_t *detail)
{
    mb_http_respond_json(call->req, 422, json_pack("{s:o}", "detail", detail));
}
