/*
 * services.c - Klavis's non-local /sandbox/{server_name} family, served for
 * every server this mcpbox hosts: acquire, get, release, reset, JSON
 * initialize and dump (and list, prepare, and upload-url for the servers
 * whose state is the workspace). Each such sandbox is an mcpbox sandbox
 * holding that one server, so every /local-sandbox/{id} route works on its
 * id as well.
 *
 * Names: a client may use Klavis's local server names (filesystem, ...,
 * localmemory) or the names the benchmark harnesses send (Toolathlon asks
 * for /sandbox/memory, /sandbox/google-cloud, /sandbox/playwright_with_chunk;
 * MCP-Atlas' aliases cli-mcp-server, mcp-code-executor ...). Answers give
 * `server_name` as Klavis's local name and key `server_urls` by the name the
 * client asked for, which is what Toolathlon's klavis_sandbox.py maps back.
 * What each server's initialize/dump/auth_data mean is in svchooks.c.
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Names other than Klavis's local ones, as harnesses send them. */
static const struct {
    const char *alias;
    const char *server;
} ALIASES[] = {
    {"emails", "poste_email_toolathlon"},  /* Toolathlon task name */
    {"google-cloud", "google_cloud"},      /* Toolathlon task name */
    {"memory", "localmemory"},             /* Toolathlon, MCP-Atlas */
    {"local_memory", "localmemory"},       /* /sandbox/local_memory/{id}/upload-url era */
    {"playwright_with_chunk", "playwright"},
    {"canvas_toolathlon", "canvas"},       /* the enum's name before 2026-03-16 */
    {"pptx", "powerpoint"},
    {"arxiv_local", "arxiv"},
    {"python_execute", "code-executor"},
    {"cli-mcp-server", "terminal"},        /* MCP-Atlas ground-truth names */
    {"mcp-code-executor", "code-executor"},
    {"mcp-server-code-runner", "code-runner"},
};

/* The server a client's name means, or NULL. Case-insensitive, as Klavis's
 * ?server_name filter is. */
static const char *resolve(const char *name)
{
    for (size_t i = 0; i < mb_n_server_names; i++)
        if (!strcasecmp(name, mb_server_names[i])) return mb_server_names[i];
    for (size_t i = 0; i < sizeof ALIASES / sizeof *ALIASES; i++)
        if (!strcasecmp(name, ALIASES[i].alias)) return ALIASES[i].server;
    return NULL;
}

/* 404 naming what this mcpbox hosts for that benchmark. The asked name is
 * client text, so it is only echoed when it is a name we know. */
static void respond_not_hosted(mb_api *api, mb_call *call, const char *server,
                               const char *benchmark)
{
    char *offered = mb_core_offered(api->core, benchmark);
    const char *profile = benchmark && *benchmark ? benchmark : "none";
    if (server)
        mb_http_respond_detail(call->req, 404,
                               "'%s' is not hosted by this mcpbox for benchmark '%s'; "
                               "/sandbox/{server_name} serves: %s",
                               server, profile, *offered ? offered : "nothing");
    else
        mb_http_respond_detail(call->req, 404,
                               "This mcpbox does not host that server (only local servers are "
                               "hosted, no SaaS ones); /sandbox/{server_name} serves for "
                               "benchmark '%s': %s",
                               profile, *offered ? offered : "nothing");
    free(offered);
}

/* The server record of `server` in sandbox `id` (owned by the caller), or
 * MB_ENOTFOUND. */
static int find_server(mb_api *api, const char *id, const char *server, mb_server_rec *out)
{
    mb_server_rec *srv;
    size_t n;
    int rc = MB_ENOTFOUND;
    if (mb_store_server_list(mb_core_store(api->core), id, &srv, &n, NULL) != MB_OK) return rc;
    for (size_t i = 0; i < n; i++) {
        if (rc != MB_OK && !strcmp(srv[i].name, server)) {
            *out = srv[i];
            memset(&srv[i], 0, sizeof srv[i]); /* its JSON now belongs to *out */
            rc = MB_OK;
        }
    }
    mb_server_recs_free(srv, n);
    return rc;
}

int mb_api__svc_target(mb_api *api, mb_call *call, mb_svc_target *t)
{
    memset(t, 0, sizeof *t);
    t->server = resolve(call->args[0]);
    mb_err err;
    if (!t->server) {
        respond_not_hosted(api, call, NULL, NULL);
        return MB_ENOTFOUND;
    }
    if (mb_core_get(api->core, call->key.owner, call->args[1], &t->rec, &err) != MB_OK) {
        mb_http_respond_err(call->req, &err);
        return MB_ENOTFOUND;
    }
    if (find_server(api, t->rec.id, t->server, &t->srv) != MB_OK) {
        mb_http_respond_detail(call->req, 404, "Sandbox %s does not hold '%s'", t->rec.id,
                               t->server);
        return MB_ENOTFOUND;
    }
    return MB_OK;
}

void mb_api__svc_target_free(mb_svc_target *t)
{
    json_decref(t->srv.metadata);
    json_decref(t->srv.auth_data);
    json_decref(t->srv.tags);
    memset(&t->srv, 0, sizeof t->srv);
}

static void status_answer(mb_call *call, const char *id, const char *status, const char *msg)
{
    mb_http_respond_json(call->req, 200, json_pack("{s:s,s:s,s:s}", "sandbox_id", id, "status",
                                                   status, "message", msg));
}

void mb_api__svc_prepare(mb_api *api, mb_call *call)
{
    (void)api;
    mb_http_respond_json(call->req, 200, json_object());
}

void mb_api__svc_acquire(mb_api *api, mb_call *call)
{
    const char *asked = call->args[0];
    mb_acquire_body body;
    json_t *detail;
    if (mb_api_parse_acquire(call->req->body.data, call->req->body.len, MB_ACQUIRE_SANDBOX,
                             mb_core_config(api->core)->default_ttl_seconds, &body,
                             &detail) != MB_OK) {
        mb_api__respond_422(call, detail);
        return;
    }
    const char *server = resolve(asked);
    if (!server || !mb_core_offers(api->core, body.benchmark, server)) {
        respond_not_hosted(api, call, server, body.benchmark);
        mb_acquire_body_free(&body);
        return;
    }
    body.servers = mb_calloc(1, sizeof *body.servers);
    body.servers[0] = mb_strdup(server);
    body.n_servers = 1;
    mb_sandbox_rec rec;
    if (mb_api__acquire_parsed(api, call, &body, &rec) != MB_OK) return;
    mb_svc_target t = {.server = server, .rec = rec};
    mb_err err;
    int rc = find_server(api, rec.id, server, &t.srv);
    if (rc == MB_OK && !strcmp(t.srv.status, "error")) {
        /* No URL that cannot answer is handed out. */
        const char *why = json_string_value(json_object_get(t.srv.metadata, "error"));
        mb_http_respond_detail(call->req, 503, "'%s' did not start: %s", server,
                               why ? why : "unknown reason");
        mb_core_release(api->core, call->key.owner, rec.id, 0, &err);
        mb_api__svc_target_free(&t);
        mb_acquire_body_free(&body);
        return;
    }
    if (rc == MB_OK && body.tag) {
        t.srv.tags = json_pack("[s]", body.tag);
        if (mb_store_server_update(mb_core_store(api->core), &t.srv, &err) != MB_OK)
            mb_warn("sandbox %s: cannot record its tag: %s", rec.id, err.msg);
    }
    char *url = mb_core_mcp_url(api->core, server, rec.id);
    json_t *o = json_pack("{s:s,s:{s:s},s:s,s:s}", "sandbox_id", rec.id, "server_urls", asked,
                          url, "server_name", server, "status", rec.status);
    json_object_set_new(o, "message", mb_api__acquire_message(
                                          api, rec.benchmark,
                                          "Sandbox acquired successfully. Use the server_url to "
                                          "connect to the MCP server."));
    free(url);
    mb_api__svc_target_free(&t);
    mb_acquire_body_free(&body);
    mb_http_respond_json(call->req, 201, o);
}

void mb_api__svc_get(mb_api *api, mb_call *call)
{
    mb_svc_target t;
    if (mb_api__svc_target(api, call, &t) != MB_OK) return;
    char updated[40];
    mb_iso8601(t.rec.updated_at, updated);
    char *url = mb_core_mcp_url(api->core, t.server, t.rec.id);
    json_t *items = mb_api__server_items(api, &t.rec);
    json_t *metadata = NULL;
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item) {
        if (!strcmp(json_string_value(json_object_get(item, "server_name")), t.server))
            metadata = json_incref(json_object_get(item, "metadata"));
    }
    json_decref(items);
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "sandbox_id", t.rec.id, "server_url", url,
                          "server_name", t.server, "status",
                          strcmp(t.srv.status, "error") ? t.rec.status : "error", "updated_at",
                          updated);
    json_object_set_new(o, "benchmark",
                        t.rec.benchmark[0] ? json_string(t.rec.benchmark) : json_null());
    json_object_set_new(o, "metadata", metadata ? metadata : json_null());
    json_object_set_new(o, "auth_data", mb_api__svc_auth_data(api, &t));
    json_object_set_new(o, "tags", t.srv.tags ? json_incref(t.srv.tags) : json_array());
    free(url);
    mb_api__svc_target_free(&t);
    mb_http_respond_json(call->req, 200, o);
}

void mb_api__svc_release(mb_api *api, mb_call *call)
{
    int is_ttl = 0;
    if (mb_api__query_bool(call, "is_ttl", &is_ttl) != MB_OK) return;
    mb_svc_target t;
    if (mb_api__svc_target(api, call, &t) != MB_OK) return;
    /* "Instance ID for TTL validation; if provided and mismatched, the
     * release is skipped". An instance here is the sandbox (its id is in the
     * server URL) or the server's own id. */
    const char *instance = mb_http_query(call->req, "instance_id");
    if (instance && strcmp(instance, t.rec.id) != 0 && strcmp(instance, t.srv.id) != 0) {
        status_answer(call, t.rec.id, t.rec.status,
                      "Release skipped: instance_id does not match this sandbox's instance");
        mb_api__svc_target_free(&t);
        return;
    }
    mb_err err;
    if (mb_core_release(api->core, call->key.owner, t.rec.id, is_ttl, &err) != MB_OK)
        mb_http_respond_err(call->req, &err);
    else
        status_answer(call, t.rec.id, "idle", "Sandbox released successfully");
    mb_api__svc_target_free(&t);
}

void mb_api__svc_reset(mb_api *api, mb_call *call)
{
    mb_svc_target t;
    if (mb_api__svc_target(api, call, &t) != MB_OK) return;
    mb_err err;
    if (mb_core_reset(api->core, call->key.owner, t.rec.id, &err) != MB_OK)
        mb_http_respond_err(call->req, &err);
    else
        status_answer(call, t.rec.id, "occupied", "Sandbox reset to its initial state");
    mb_api__svc_target_free(&t);
}

void mb_api__svc_list(mb_api *api, mb_call *call)
{
    const char *want_server = mb_http_query(call->req, "server_name");
    const char *want_tag = mb_http_query(call->req, "tag");
    const char *server = want_server ? resolve(want_server) : NULL;
    mb_sandbox_rec *recs;
    size_t n;
    mb_err err;
    if (mb_store_sandbox_list(mb_core_store(api->core), call->key.owner, &recs, &n, &err)) {
        mb_http_respond_err(call->req, &err);
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        mb_server_rec *srv;
        size_t ns;
        if (mb_store_server_list(mb_core_store(api->core), recs[i].id, &srv, &ns, NULL) != MB_OK)
            continue;
        /* A one-server sandbox is what this family acquires. */
        int tag_ok = !want_tag;
        size_t k;
        json_t *tag;
        json_array_foreach(ns == 1 ? srv[0].tags : NULL, k, tag)
            if (want_tag && json_is_string(tag) && !strcmp(json_string_value(tag), want_tag))
                tag_ok = 1;
        if (ns == 1 && tag_ok && (!want_server || (server && !strcmp(server, srv[0].name)))) {
            char updated[40];
            mb_iso8601(recs[i].updated_at, updated);
            json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "sandbox_id", recs[i].id, "server_name",
                                  srv[0].name, "status", recs[i].status, "updated_at", updated);
            json_object_set_new(o, "benchmark", recs[i].benchmark[0]
                                                    ? json_string(recs[i].benchmark)
                                                    : json_null());
            json_object_set_new(o, "tags", srv[0].tags ? json_incref(srv[0].tags) : json_array());
            json_array_append_new(arr, o);
        }
        mb_server_recs_free(srv, ns);
    }
    free(recs);
    mb_http_respond_json(call->req, 200, json_pack("{s:o,s:I}", "sandboxes", arr, "total_count",
                                                   (json_int_t)json_array_size(arr)));
}

/* The /local-sandbox/{id}/... handlers read the id from args[0]. */
static void shift_to_id(mb_call *call)
{
    free(call->args[0]);
    call->args[0] = call->args[1];
    call->args[1] = NULL;
}

void mb_api__svc_upload_url(mb_api *api, mb_call *call)
{
    mb_svc_target t;
    if (mb_api__svc_target(api, call, &t) != MB_OK) return;
    mb_api__svc_target_free(&t);
    shift_to_id(call);
    mb_api__upload_url(api, call);
}
