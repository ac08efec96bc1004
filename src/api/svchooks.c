/*
 * svchooks.c - what initialize, dump and auth_data mean for each server in
 * the /sandbox/{server} family (and /local-sandbox/{server}/{id}/...): one
 * row per server in HOOKS below. A server whose row has no handler answers
 * 501 naming what is missing; a server gets its JSON state by filling its
 * row (Klavis's schemas for the mail, Canvas and cloud rows are in the comments).
 *
 *   workspace servers  (filesystem, git, terminal, excel, pdf-tools, ...)
 *       Their state is /data. Klavis has no JSON schema for them; its
 *       local_dev API moved files as a tar.gz, so the same is done here:
 *       initialize (no body) extracts the archive PUT to the URL from
 *       .../upload-url, and dump's `data` is {download_url,
 *       expires_in_minutes} of the workspace as tar.gz.
 *   localmemory
 *       Klavis's LocalMemoryData: {entities: [{name, entityType,
 *       observations}], relations: [{from, to, relationType}]}. initialize
 *       replaces the knowledge graph (the JSON Lines file at the profile's
 *       MEMORY_FILE_PATH, written inside the sandbox as the server would
 *       write it); dump reads it back in the same shape.
 *   playwright  no state to initialize or dump (a browser).
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct svc_hooks {
    const char *server;
    /* Answers 200 with *message, or an error (a 422 through *detail). */
    int (*initialize)(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                      int init_default, char **message, json_t **detail, mb_err *err);
    int (*dump)(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data, mb_err *err);
    /* NULL = null (no credentials: the server needs none). */
    json_t *(*auth_data)(mb_api *api, const mb_svc_target *t);
    const char *missing; /* why a NULL initialize/dump is missing */
} svc_hooks;

static json_t *loc3(const char *a, const char *b, json_int_t i)
{
    return json_pack("[s,s,I]", a, b, i);
}

static void add_detail(json_t *detail, const char *type, json_t *loc, const char *msg,
                       json_t *input)
{
    json_array_append_new(detail, json_pack("{s:s,s:o,s:s,s:O?}", "type", type, "loc", loc,
                                            "msg", msg, "input", input));
}

/* ------------------------------------------------------------ workspace */

static int ws_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                         int init_default, char **message, json_t **detail, mb_err *err)
{
    (void)init_default;
    if (body && !json_is_null(body) && !(json_is_object(body) && json_object_size(body) == 0)) {
        *detail = json_array();
        add_detail(*detail, "extra_forbidden", json_pack("[s]", "body"),
                   "This server's data is the /data workspace: PUT a tar.gz to the URL from "
                   "POST .../upload-url, then call initialize without a body",
                   body);
        return MB_EINVAL;
    }
    int rc = mb_core_initialize(api->core, call->key.owner, t->rec.id, err);
    if (!rc) *message = mb_strdup("Extracted archive to workspace");
    return rc;
}

static int ws_dump(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data,
                   mb_err *err)
{
    int rc = mb_core_dump(api->core, call->key.owner, t->rec.id, err);
    if (rc) return rc;
    char *path = mb_asprintf("/blobs/%s/dump.tar.gz", t->rec.id);
    char *url = mb_core_signed_url(api->core, "GET", path);
    *data = json_pack("{s:s,s:i}", "download_url", url, "expires_in_minutes",
                      mb_core_config(api->core)->url_ttl_minutes);
    free(url);
    free(path);
    return MB_OK;
}

/* ----------------------------------------------------------- localmemory */

#define MEMORY_MAX_BYTES (64u << 20)

/* MEMORY_FILE_PATH as the profile sets it, which must be inside /data. */
static int memory_file(mb_api *api, const mb_svc_target *t, const char **out, mb_err *err)
{
    const char *p = mb_core_server_env(api->core, t->rec.benchmark, "localmemory",
                                       "MEMORY_FILE_PATH");
    if (!p || !mb_str_has_prefix(p, "/data/") || strstr(p, "/../"))
        return mb_err_set(err, MB_ECONFLICT,
                          "the '%s' profile gives localmemory no MEMORY_FILE_PATH under /data, "
                          "so its graph cannot be initialized or dumped",
                          t->rec.benchmark[0] ? t->rec.benchmark : "none");
    *out = p;
    return MB_OK;
}

/* Checks that `key` of `obj` is a string; reports it in detail if not. */
static int need_string(json_t *obj, const char *key, json_t *loc, json_t *detail)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_string(v)) {
        json_decref(loc);
        return 1;
    }
    json_array_append_new(loc, json_string(key));
    add_detail(detail, v ? "string_type" : "missing", loc,
               v ? "Input should be a valid string" : "Field required", v ? v : obj);
    return 0;
}

/* One JSON Lines record, keys in the order the server writes them. */
static void put_line(mb_buf *out, json_t *rec)
{
    char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (out->len) mb_buf_putc(out, '\n');
    mb_buf_puts(out, s);
    free(s);
    json_decref(rec);
}

/* LocalMemoryData -> the JSON Lines file (entities, then relations, no final
 * newline). Problems go to detail. */
static void graph_to_jsonl(json_t *body, mb_buf *out, size_t *n_ent, size_t *n_rel,
                           json_t *detail)
{
    json_t *ents = json_object_get(body, "entities");
    json_t *rels = json_object_get(body, "relations");
    static const char *const fields[] = {"entities", "relations"};
    json_t *lists[] = {ents, rels};
    for (int f = 0; f < 2; f++)
        if (lists[f] && !json_is_null(lists[f]) && !json_is_array(lists[f]))
            add_detail(detail, "list_type", json_pack("[s,s]", "body", fields[f]),
                       "Input should be a valid list", lists[f]);
    size_t i;
    json_t *e;
    json_array_foreach(json_is_array(ents) ? ents : NULL, i, e) {
        json_t *loc = loc3("body", "entities", (json_int_t)i);
        if (!json_is_object(e)) {
            add_detail(detail, "model_type", loc, "Input should be a valid dictionary", e);
            continue;
        }
        int ok = need_string(e, "name", json_deep_copy(loc), detail);
        ok &= need_string(e, "entityType", json_deep_copy(loc), detail);
        json_t *obs = json_object_get(e, "observations");
        json_t *copy = json_array();
        if (obs && !json_is_null(obs) && !json_is_array(obs)) {
            json_array_append_new(loc, json_string("observations"));
            add_detail(detail, "list_type", json_incref(loc), "Input should be a valid list", obs);
            ok = 0;
        }
        size_t k;
        json_t *o;
        json_array_foreach(json_is_array(obs) ? obs : NULL, k, o) {
            if (json_is_string(o)) {
                json_array_append(copy, o);
                continue;
            }
            add_detail(detail, "string_type",
                       json_pack("[s,s,I,s,I]", "body", "entities", (json_int_t)i, "observations",
                                 (json_int_t)k),
                       "Input should be a valid string", o);
            ok = 0;
        }
        json_decref(loc);
        if (!ok) {
            json_decref(copy);
            continue;
        }
        put_line(out, json_pack("{s:s,s:O,s:O,s:o}", "type", "entity", "name",
                                json_object_get(e, "name"), "entityType",
                                json_object_get(e, "entityType"), "observations", copy));
        (*n_ent)++;
    }
    json_array_foreach(json_is_array(rels) ? rels : NULL, i, e) {
        json_t *loc = loc3("body", "relations", (json_int_t)i);
        if (!json_is_object(e)) {
            add_detail(detail, "model_type", loc, "Input should be a valid dictionary", e);
            continue;
        }
        int ok = need_string(e, "from", json_deep_copy(loc), detail);
        ok &= need_string(e, "to", json_deep_copy(loc), detail);
        ok &= need_string(e, "relationType", json_deep_copy(loc), detail);
        json_decref(loc);
        if (!ok) continue;
        put_line(out, json_pack("{s:s,s:O,s:O,s:O}", "type", "relation", "from",
                                json_object_get(e, "from"), "to", json_object_get(e, "to"),
                                "relationType", json_object_get(e, "relationType")));
        (*n_rel)++;
    }
}

static int memory_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                             int init_default, char **message, json_t **detail, mb_err *err)
{
    if (!body || json_is_null(body)) {
        if (init_default)
            return mb_err_set(err, MB_EINVAL, "mcpbox ships no default localmemory data: send "
                              "the graph as the body ({\"entities\": [...], \"relations\": "
                              "[...]})");
        body = NULL;
    } else if (!json_is_object(body)) {
        *detail = json_array();
        add_detail(*detail, "model_attributes_type", json_pack("[s]", "body"),
                   "Input should be a valid dictionary or object to extract fields from", body);
        return MB_EINVAL;
    }
    const char *path;
    int rc = memory_file(api, t, &path, err);
    if (rc) return rc;
    mb_buf jsonl = {0};
    size_t n_ent = 0, n_rel = 0;
    json_t *d = json_array();
    if (body) graph_to_jsonl(body, &jsonl, &n_ent, &n_rel, d);
    if (json_array_size(d)) {
        mb_buf_free(&jsonl);
        *detail = d;
        return MB_EINVAL;
    }
    json_decref(d);
    /* Written inside the sandbox, as its own user, so that nothing in /data
     * (a symlink an agent left) can turn the write elsewhere; renamed into
     * place, so the server sees the old graph or the new one. */
    const char *const argv[] = {
        "/bin/sh", "-c",
        "set -e; mkdir -p \"$(dirname \"$1\")\"; cat > \"$1.mcpbox-init\"; "
        "mv -f \"$1.mcpbox-init\" \"$1\"",
        "sh", path, NULL};
    mb_buf out = {0};
    rc = mb_core_exec(api->core, call->key.owner, t->rec.id, argv, jsonl.data ? jsonl.data : "",
                      jsonl.len, 4096, &out, err);
    mb_buf_free(&out);
    mb_buf_free(&jsonl);
    if (!rc)
        *message = mb_asprintf("Initialized the localmemory knowledge graph (%s) with %zu "
                               "entities and %zu relations", path, n_ent, n_rel);
    return rc;
}

/* The JSON Lines file -> LocalMemoryData, reading it as the server does:
 * blank lines skipped, records by "type"; the older single-object export
 * ({"entities": [...], "relations": [...]}) accepted too. */
static int jsonl_to_graph(const char *text, size_t len, json_t **out, mb_err *err)
{
    json_t *ents = json_array(), *rels = json_array();
    int rc = MB_OK;
    size_t line = 0;
    for (size_t pos = 0; pos < len && !rc; line++) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        const char *s = text + pos;
        pos += n + 1;
        size_t blank = 0;
        while (blank < n && strchr(" \t\r", s[blank])) blank++;
        if (blank == n) continue;
        json_error_t jerr;
        json_t *rec = json_loadb(s, n, 0, &jerr);
        if (!json_is_object(rec)) {
            rc = mb_err_set(err, MB_ECONFLICT, "the memory file's line %zu is not a JSON object "
                            "(%s); the server cannot read it either", line + 1,
                            rec ? "another JSON value" : jerr.text);
        } else if (!json_object_get(rec, "type") && json_is_array(json_object_get(rec, "entities"))) {
            json_array_extend(ents, json_object_get(rec, "entities"));
            json_t *r = json_object_get(rec, "relations");
            if (json_is_array(r)) json_array_extend(rels, r);
        } else {
            const char *type = json_string_value(json_object_get(rec, "type"));
            json_t *copy = json_copy(rec);
            json_object_del(copy, "type");
            if (type && !strcmp(type, "entity")) json_array_append(ents, copy);
            else if (type && !strcmp(type, "relation")) json_array_append(rels, copy);
            json_decref(copy);
        }
        json_decref(rec);
    }
    if (rc) {
        json_decref(ents);
        json_decref(rels);
        return rc;
    }
    *out = json_pack("{s:o,s:o}", "entities", ents, "relations", rels);
    return MB_OK;
}

static int memory_dump(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data,
                       mb_err *err)
{
    const char *path;
    int rc = memory_file(api, t, &path, err);
    if (rc) return rc;
    const char *const argv[] = {"/bin/sh", "-c", "if [ -e \"$1\" ]; then cat -- \"$1\"; fi", "sh",
                                path, NULL};
    mb_buf out = {0};
    rc = mb_core_exec(api->core, call->key.owner, t->rec.id, argv, NULL, 0, MEMORY_MAX_BYTES,
                      &out, err);
    if (!rc) rc = jsonl_to_graph(out.data ? out.data : "", out.len, data, err);
    mb_buf_free(&out);
    return rc;
}

/* ------------------------------------------------------------ the table */


static const svc_hooks HOOKS[] = {
    {"filesystem", ws_initialize, ws_dump, NULL, NULL},
    {"git", ws_initialize, ws_dump, NULL, NULL},
    {"terminal", ws_initialize, ws_dump, NULL, NULL},
    {"desktop-commander", ws_initialize, ws_dump, NULL, NULL},
    {"arxiv", ws_initialize, ws_dump, NULL, NULL},
    {"excel", ws_initialize, ws_dump, NULL, NULL},
    {"word", ws_initialize, ws_dump, NULL, NULL},
    {"powerpoint", ws_initialize, ws_dump, NULL, NULL},
    {"code-executor", ws_initialize, ws_dump, NULL, NULL},
    {"code-runner", ws_initialize, ws_dump, NULL, NULL},
    {"pdf-tools", ws_initialize, ws_dump, NULL, NULL},
    {"localmemory", memory_initialize, memory_dump, NULL, NULL},
    {"playwright", NULL, NULL, NULL, "a browser has no data to initialize or dump"},
    /* PosteEmailData {users: {"<email>": {emails: [{subject*, from_addr*,
     * to_addr*, cc_addr, bcc_addr, date, message_id, body_text, body_html,
     * is_read, is_important, folder="INBOX", attachments[]}]}}}; auth_data:
     * the IMAP/SMTP host and ports, for test_account_email. */
    {"poste_email_toolathlon", mb_api__mail_initialize, mb_api__mail_dump,
     mb_api__mail_auth_data, NULL},
    /* CanvasData {courses: [{name*, course_code*, published, assignments[],
     * quizzes[], enrollments[], announcements[]}]}; auth_data: the API token
     * and domain. */
    {"canvas", mb_api__canvas_initialize, mb_api__canvas_dump, mb_api__canvas_auth_data, NULL},
    /* GoogleCloudData {datasets, tables, buckets, objects, log_entries,
     * log_sinks, log_buckets, instances}; auth_data: access_token,
     * refresh_token, client_id, client_secret, scope (Toolathlon writes them
     * to configs/google_cloud_credentials.json). */
    {"google_cloud", mb_api__gcloud_initialize, mb_api__gcloud_dump, mb_api__gcloud_auth_data, NULL},
};

static const svc_hooks *hooks_of(const char *server)
{
    for (size_t i = 0; i < sizeof HOOKS / sizeof *HOOKS; i++)
        if (!strcmp(HOOKS[i].server, server)) return &HOOKS[i];
    return NULL;
}

json_t *mb_api__svc_auth_data(mb_api *api, const mb_svc_target *t)
{
    const svc_hooks *h = hooks_of(t->server);
    if (h && h->auth_data) return h->auth_data(api, t);
    return t->srv.auth_data ? json_incref(t->srv.auth_data) : json_null();
}

static int missing(mb_call *call, const svc_hooks *h, const char *server, const char *what)
{
    mb_http_respond_detail(call->req, 501, "'%s' has no %s in this mcpbox: %s", server, what,
                           h && h->missing ? h->missing : "nothing is defined for it");
    return MB_ECONFLICT;
}

void mb_api__svc_initialize(mb_api *api, mb_call *call)
{
    int init_default = 0;
    if (mb_api__query_bool(call, "init_default_data", &init_default) != MB_OK) return;
    json_t *body = NULL;
    if (call->req->body.len) {
        json_error_t jerr;
        body = json_loadb(call->req->body.data, call->req->body.len,
                          JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
        if (!body) {
            mb_api__respond_422(call, json_pack("[{s:s,s:[s,i],s:s,s:n,s:{s:s}}]", "type",
                                               "json_invalid", "loc", "body", jerr.position,
                                               "msg", "JSON decode error", "input", "ctx",
                                               "error", jerr.text));
            return;
        }
    }
    mb_svc_target t;
    if (mb_api__svc_target(api, call, &t) != MB_OK) {
        json_decref(body);
        return;
    }
    const svc_hooks *h = hooks_of(t.server);
    char *message = NULL;
    json_t *detail = NULL;
    mb_err err;
    if (!h || !h->initialize) {
        missing(call, h, t.server, "initialize");
    } else if (h->initialize(api, call, &t, body, init_default, &message, &detail, &err) == MB_OK) {
        mb_http_respond_json(call->req, 200, json_pack("{s:s,s:s,s:s}", "sandbox_id", t.rec.id,
                                                       "status", "occupied", "message", message));
    } else if (detail) {
        mb_api__respond_422(call, detail);
    } else {
        mb_http_respond_err(call->req, &err);
    }
    free(message);
    json_decref(body);
    mb_api__svc_target_free(&t);
}

void mb_api__svc_dump(mb_api *api, mb_call *call)
{
    mb_svc_target t;
    if (mb_api__svc_target(api, call, &t) != MB_OK) return;
    const svc_hooks *h = hooks_of(t.server);
    json_t *data = NULL;
    mb_err err;
    if (!h || !h->dump) {
        missing(call, h, t.server, "dump");
    } else if (h->dump(api, call, &t, &data, &err) == MB_OK) {
        char now[40];
        mb_iso8601(mb_now(), now);
        mb_http_respond_json(call->req, 200,
                             json_pack("{s:s,s:s,s:s,s:o}", "sandbox_id", t.rec.id, "server_name",
                                       t.server, "dumped_at", now, "data", data));
    } else {
        mb_http_respond_err(call->req, &err);
    }
    mb_api__svc_target_free(&t);
}
