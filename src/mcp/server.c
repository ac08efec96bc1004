/*
 * server.c - the MCP server object: tool registry, and the dispatch of one
 * parsed JSON-RPC message to initialize / ping / tools/list / tools/call /
 * logging/setLevel / notifications.
 *
 * Dispatch returns the response to send (or NULL for notifications and
 * cancelled calls); transport.c frames and writes it. How a tool failure
 * reaches the client depends on the server's flavor (see mcp.h): that logic
 * is all in finish_call() and unknown_tool().
 */
#include "mcp/mcp_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const mb_mcp_protocol_versions[] = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

static const char *const level_names[] = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
};

#define DEFAULT_CAPABILITIES "{\"tools\":{\"listChanged\":true},\"logging\":{}}"

/* ------------------------------------------------------------ lifecycle */

int mb_mcp_server_new(const mb_mcp_info *info, mb_mcp_server **out, mb_err *err)
{
    json_error_t jerr;
    const char *caps = info->capabilities ? info->capabilities : DEFAULT_CAPABILITIES;
    json_t *cj = json_loads(caps, 0, &jerr);
    if (!cj || !json_is_object(cj)) {
        json_decref(cj);
        return mb_err_set(err, MB_EINVAL, "server %s: capabilities are not a JSON object: %s",
                          info->name, jerr.text);
    }
    mb_mcp_server *srv = mb_calloc(1, sizeof *srv);
    srv->info = info;
    srv->capabilities = cj;
    srv->max_message = MB_MCP_MAX_MESSAGE_DEFAULT;
    srv->log_level = -1;
    srv->in_fd = srv->out_fd = -1;
    pthread_mutex_init(&srv->out_lock, NULL);
    *out = srv;
    return 0;
}

void mb_mcp_server_free(mb_mcp_server *srv)
{
    if (!srv) return;
    for (size_t i = 0; i < srv->ntools; i++) {
        json_decref(srv->tools[i].input);
        json_decref(srv->tools[i].output);
        json_decref(srv->tools[i].annotations);
        json_decref(srv->tools[i].meta);
    }
    free(srv->tools);
    json_decref(srv->capabilities);
    pthread_mutex_destroy(&srv->out_lock);
    if (srv->free_data) srv->free_data(srv->data);
    mb_buf_free(&srv->inbuf);
    mb_buf_free(&srv->deferred);
    free(srv);
}

void mb_mcp_server_set_data(mb_mcp_server *srv, void *data, void (*free_fn)(void *))
{
    srv->data = data;
    srv->free_data = free_fn;
}

void *mb_mcp_server_data(const mb_mcp_server *srv) { return srv->data; }

int mb_mcp_server_new_with_tools(const mb_mcp_info *info, const mb_mcp_tool *tools, void *data,
                                 void (*free_fn)(void *), mb_mcp_server **out, mb_err *err)
{
    mb_mcp_server *srv = NULL;
    int rc = mb_mcp_server_new(info, &srv, err);
    if (rc) {
        if (free_fn) free_fn(data);
        return rc;
    }
    mb_mcp_server_set_data(srv, data, free_fn);
    if ((rc = mb_mcp_add_tools(srv, tools, err))) {
        mb_mcp_server_free(srv);
        return rc;
    }
    *out = srv;
    return 0;
}

void mb_mcp_set_max_message(mb_mcp_server *srv, size_t bytes) { srv->max_message = bytes; }

/* ------------------------------------------------------------- registry */

static json_t *parse_object(const char *text, const char *tool, const char *what, mb_err *err)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j || !json_is_object(j)) {
        json_decref(j);
        mb_err_set(err, MB_EINVAL, "tool %s: %s is not a JSON object (%s at line %d)", tool, what,
                   jerr.text, jerr.line);
        return NULL;
    }
    return j;
}

int mb_mcp_add_tool(mb_mcp_server *srv, const mb_mcp_tool *tool, mb_err *err)
{
    if (!tool->name || !tool->description || !tool->input_schema || !tool->fn)
        return mb_err_set(err, MB_EINVAL, "tool %s: name, description, input_schema and fn are required",
                          tool->name ? tool->name : "(unnamed)");
    if (mb_mcp_find_tool(srv, tool->name))
        return mb_err_set(err, MB_EINVAL, "tool %s is registered twice", tool->name);
    mb_mcp_tool_entry e = {.def = tool};
    if (!(e.input = parse_object(tool->input_schema, tool->name, "input_schema", err))) return MB_EINVAL;
    if (tool->output_schema &&
        !(e.output = parse_object(tool->output_schema, tool->name, "output_schema", err)))
        goto fail;
    if (tool->annotations &&
        !(e.annotations = parse_object(tool->annotations, tool->name, "annotations", err)))
        goto fail;
    if (tool->meta && !(e.meta = parse_object(tool->meta, tool->name, "meta", err))) goto fail;
    if (srv->ntools == srv->captools) {
        srv->captools = srv->captools ? srv->captools * 2 : 16;
        srv->tools = mb_realloc(srv->tools, srv->captools * sizeof *srv->tools);
    }
    srv->tools[srv->ntools++] = e;
    return 0;
fail:
    json_decref(e.input);
    json_decref(e.output);
    json_decref(e.annotations);
    return MB_EINVAL;
}

int mb_mcp_add_tools(mb_mcp_server *srv, const mb_mcp_tool *tools, mb_err *err)
{
    for (const mb_mcp_tool *t = tools; t->name; t++) {
        int rc = mb_mcp_add_tool(srv, t, err);
        if (rc) return rc;
    }
    return 0;
}

static mb_mcp_tool_entry *find_entry(const mb_mcp_server *srv, const char *name)
{
    for (size_t i = 0; i < srv->ntools; i++)
        if (!strcmp(srv->tools[i].def->name, name)) return &srv->tools[i];
    return NULL;
}

const mb_mcp_tool *mb_mcp_find_tool(const mb_mcp_server *srv, const char *name)
{
    mb_mcp_tool_entry *e = find_entry(srv, name);
    return e ? e->def : NULL;
}

/* ------------------------------------------------------------- messages */

json_t *mb_mcp__error(json_t *id, int code, const char *message)
{
    return json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                     "error", "code", code, "message", message);
}

static json_t *result_msg(json_t *id, json_t *result)
{
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

/* The TS SDK reports a malformed request as zod issues, pretty-printed. */
static json_t *zod_request_error(json_t *id, const char *expected, const char *received,
                                 const char *k1, const char *k2)
{
    json_t *path = json_pack("[s]", k1);
    if (k2) json_array_append_new(path, json_string(k2));
    char *m = mb_asprintf("Invalid input: expected %s, received %s", expected, received);
    json_t *issues = json_pack("[{s:s, s:s, s:o, s:s}]", "expected", expected, "code",
                               "invalid_type", "path", path, "message", m);
    free(m);
    char *text = mb_js_stringify(issues, 2);
    json_t *r = mb_mcp__error(id, MB_RPC_INTERNAL_ERROR, text);
    free(text);
    json_decref(issues);
    return r;
}

/* ------------------------------------------------------------ initialize */

static json_t *do_initialize(mb_mcp_server *srv, json_t *id, json_t *params)
{
    const char *want = json_string_value(json_object_get(params, "protocolVersion"));
    const char *max = srv->info->max_protocol;
    const char *ver = max ? max : MB_MCP_PROTOCOL_LATEST;
    /* Versions are dates: a later one sorts after an earlier one. */
    for (int i = 0; want && mb_mcp_protocol_versions[i]; i++)
        if (!strcmp(want, mb_mcp_protocol_versions[i]) &&
            (!max || strcmp(mb_mcp_protocol_versions[i], max) <= 0))
            ver = mb_mcp_protocol_versions[i];
    snprintf(srv->protocol, sizeof srv->protocol, "%s", ver);
    if (srv->info->on_initialize) srv->info->on_initialize(srv, params);
    json_t *r = json_pack("{s:s, s:O, s:{s:s, s:s}}", "protocolVersion", ver, "capabilities",
                          srv->capabilities, "serverInfo", "name", srv->info->name, "version",
                          srv->info->version);
    if (srv->info->instructions)
        json_object_set_new(r, "instructions", json_string(srv->info->instructions));
    return result_msg(id, r);
}

static json_t *do_tools_list(mb_mcp_server *srv, json_t *id)
{
    json_t *tools = json_array();
    for (size_t i = 0; i < srv->ntools; i++) {
        mb_mcp_tool_entry *e = &srv->tools[i];
        json_t *t = json_object();
        json_object_set_new(t, "name", json_string(e->def->name));
        if (e->def->title) json_object_set_new(t, "title", json_string(e->def->title));
        json_object_set_new(t, "description", json_string(e->def->description));
        json_object_set(t, "inputSchema", e->input);
        if (e->annotations) json_object_set(t, "annotations", e->annotations);
        if (srv->info->flavor == MB_MCP_TS_MCPSERVER)
            json_object_set_new(t, "execution", json_pack("{s:s}", "taskSupport", "forbidden"));
        if (e->output) json_object_set(t, "outputSchema", e->output);
        if (e->meta) json_object_set(t, "_meta", e->meta);
        json_array_append_new(tools, t);
    }
    return result_msg(id, json_pack("{s:o}", "tools", tools));
}

static json_t *do_set_level(mb_mcp_server *srv, json_t *id, json_t *params)
{
    if (!json_object_get(srv->capabilities, "logging"))
        return mb_mcp__error(id, MB_RPC_METHOD_NOT_FOUND, "Method not found");
    const char *lv = json_string_value(json_object_get(params, "level"));
    for (int i = 0; lv && i < 8; i++)
        if (!strcmp(lv, level_names[i])) {
            srv->log_level = i;
            return result_msg(id, json_object());
        }
    return mb_mcp__error(id, MB_RPC_INVALID_PARAMS,
                         "Invalid params: level must be one of debug, info, notice, warning, "
                         "error, critical, alert, emergency");
}

/* ------------------------------------------------------------ tools/call */

static json_t *tool_error_result(json_t *id, const char *text)
{
    json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text,
                          "isError", 1);
    return result_msg(id, r);
}

/* Turns what the handler left in `res` into the response, per flavor. */
static json_t *finish_call(mb_mcp_server *srv, mb_mcp_tool_entry *e, const char *name,
                           json_t *id, mb_mcp_result *res, int rc)
{
    if (res->state == MB_RES_OK && rc < 0) {
        res->state = MB_RES_FAIL;
        free(res->msg);
        res->msg = mb_asprintf("Internal error in tool %s (%s)", name, mb_code_name(rc));
    }
    if (res->state == MB_RES_RPC) return mb_mcp__error(id, res->rpc_code, res->msg);
    if (res->state == MB_RES_FAIL) {
        switch (srv->info->flavor) {
        case MB_MCP_TS_SERVER: return mb_mcp__error(id, MB_RPC_INTERNAL_ERROR, res->msg);
        case MB_MCP_PY_FASTMCP: {
            char *t = mb_asprintf("Error executing tool %s: %s", name, res->msg);
            json_t *r = tool_error_result(id, t);
            free(t);
            return r;
        }
        default: return tool_error_result(id, res->msg);
        }
    }
    /* The TS SDK checks structuredContent against the output schema. */
    if (e && e->output && !res->is_error && srv->info->flavor == MB_MCP_TS_MCPSERVER) {
        char *why = NULL, *t = NULL;
        if (!res->structured)
            t = mb_asprintf("MCP error -32602: Output validation error: Tool %s has an output "
                            "schema but no structured content was provided", name);
        else if (mb_mcp_validate_zod(e->output, res->structured, &why))
            t = mb_asprintf("MCP error -32602: Output validation error: Invalid structured "
                            "content for tool %s: %s", name, why);
        free(why);
        if (t) {
            json_t *r = tool_error_result(id, t);
            free(t);
            return r;
        }
    }
    json_t *r = json_object();
    json_object_set(r, "content", res->content);
    if (res->structured) json_object_set(r, "structuredContent", res->structured);
    /* The Python SDK serializes CallToolResult with its default isError:
     * false; the TypeScript SDK leaves it out unless set. */
    mb_mcp_flavor fl = srv->info->flavor;
    if (res->is_error || fl == MB_MCP_PY_FASTMCP || fl == MB_MCP_PY_SERVER)
        json_object_set_new(r, "isError", json_boolean(res->is_error));
    return result_msg(id, r);
}

static json_t *run_handler(mb_mcp_server *srv, mb_mcp_tool_entry *e, mb_mcp_tool_fn fn,
                           const char *name, json_t *id, json_t *params, json_t *args,
                           mb_mcp_job *job)
{
    mb_mcp_call call = {.srv = srv, .tool = name, .id = id, .job = job};
    json_t *meta = json_object_get(params, "_meta");
    call.progress_token = json_object_get(meta, "progressToken");
    call.headers = json_object_get(meta, MB_MCP_META_HEADERS);
    mb_mcp_result res;
    mb_mcp__result_init(&res);
    if (!job) srv->current = &call;
    int rc = srv->info->before_call ? srv->info->before_call(&call, &res) : 0;
    if (!rc) rc = fn(&call, args, &res);
    if (!job) srv->current = NULL;
    else call.cancelled = atomic_load(&job->cancelled);
    json_t *resp = call.cancelled ? NULL : finish_call(srv, e, name, id, &res, rc);
    mb_mcp__result_dispose(&res);
    return resp;
}

static json_t *unknown_tool(mb_mcp_server *srv, const char *name, json_t *id, json_t *params,
                            json_t *args, mb_mcp_job *job)
{
    const mb_mcp_info *info = srv->info;
    char *t;
    json_t *r;
    switch (info->flavor) {
    case MB_MCP_TS_MCPSERVER:
        t = mb_asprintf("MCP error -32602: Tool %s not found", name);
        r = tool_error_result(id, t);
        free(t);
        return r;
    case MB_MCP_TS_SERVER:
        if (info->unknown_tool) return run_handler(srv, NULL, info->unknown_tool, name, id, params, args, job);
        t = mb_asprintf("Unknown tool: %s", name);
        r = mb_mcp__error(id, MB_RPC_INTERNAL_ERROR, t);
        free(t);
        return r;
    case MB_MCP_PY_SERVER:
        if (info->unknown_tool) return run_handler(srv, NULL, info->unknown_tool, name, id, params, args, job);
        /* fall through */
    default:
        t = mb_asprintf("Unknown tool: %s", name);
        r = tool_error_result(id, t);
        free(t);
        return r;
    }
}

static json_t *do_tools_call(mb_mcp_server *srv, json_t *id, json_t *params, mb_mcp_job *job)
{
    if (!json_is_object(params)) return zod_request_error(id, "object", mb_mcp_zod_type(params), "params", NULL);
    json_t *jname = json_object_get(params, "name");
    if (!json_is_string(jname))
        return zod_request_error(id, "string", mb_mcp_zod_type(jname), "params", "name");
    json_t *jargs = json_object_get(params, "arguments");
    if (jargs && !json_is_object(jargs))
        return zod_request_error(id, "record", mb_mcp_zod_type(jargs), "params", "arguments");
    const char *name = json_string_value(jname);
    mb_mcp_tool_entry *e = find_entry(srv, name);
    mb_mcp_flavor fl = srv->info->flavor;

    /* The handler gets its own copy, so it may change it freely. */
    json_t *args = jargs ? json_deep_copy(jargs) : (fl == MB_MCP_TS_SERVER ? NULL : json_object());
    json_t *resp;
    if (!e) {
        resp = unknown_tool(srv, name, id, params, args, job);
    } else if (fl == MB_MCP_TS_MCPSERVER) {
        char *why = NULL;
        int (*validate)(const json_t *, json_t *, char **) =
            srv->info->validate ? srv->info->validate : mb_mcp_validate_zod;
        if (validate(e->input, args, &why)) {
            char *t = mb_asprintf("MCP error -32602: Input validation error: Invalid arguments "
                                  "for tool %s: %s", name, why);
            resp = tool_error_result(id, t);
            free(t);
        } else {
            resp = run_handler(srv, e, e->def->fn, name, id, params, args, job);
        }
        free(why);
    } else {
        resp = run_handler(srv, e, e->def->fn, name, id, params, args, job);
    }
    json_decref(args);
    return resp;
}

/* ------------------------------------------------------------- dispatch */

static void on_notification(mb_mcp_server *srv, const char *method, json_t *params)
{
    /* notifications/cancelled for a call on a worker thread (queued or
     * running) is acted on here; one for the call running on this thread is
     * seen by mb_mcp_call_cancelled() before it gets here, and one for a
     * request that already finished (or never arrived) needs nothing.
     * Everything else is ignored, as the SDKs ignore notifications they have
     * no handler for. */
    if (!strcmp(method, "notifications/cancelled"))
        mb_mcp__workers_cancel(srv, json_object_get(params, "requestId"));
    /* mcpbox's gateway: a client session opened with these initialize params */
    else if (!strcmp(method, "notifications/mcpbox/client_initialized") &&
             srv->info->on_initialize && json_is_object(params))
        srv->info->on_initialize(srv, params);
}

json_t *mb_mcp__dispatch(mb_mcp_server *srv, json_t *msg)
{
    if (!json_is_object(msg)) return mb_mcp__error(NULL, MB_RPC_INVALID_REQUEST, "Invalid Request");
    json_t *id = json_object_get(msg, "id");
    json_t *jm = json_object_get(msg, "method");
    if (!jm) {
        /* A response to a server->client request: we send none, so drop it. */
        if (id && (json_object_get(msg, "result") || json_object_get(msg, "error"))) return NULL;
        return mb_mcp__error(id, MB_RPC_INVALID_REQUEST, "Invalid Request");
    }
    if (id && !json_is_string(id) && !json_is_integer(id) &&
        !(json_is_real(id) && json_real_value(id) == floor(json_real_value(id))))
        return mb_mcp__error(NULL, MB_RPC_INVALID_REQUEST, "Invalid Request");
    if (!json_is_string(jm)) return mb_mcp__error(id, MB_RPC_INVALID_REQUEST, "Invalid Request");
    const char *method = json_string_value(jm);
    json_t *params = json_object_get(msg, "params");
    if (!id) {
        on_notification(srv, method, params);
        return NULL;
    }
    if (!strcmp(method, "initialize")) return do_initialize(srv, id, params);
    if (!strcmp(method, "ping")) return result_msg(id, json_object());
    if (!strcmp(method, "tools/list")) return do_tools_list(srv, id);
    if (!strcmp(method, "tools/call")) return do_tools_call(srv, id, params, NULL);
    if (!strcmp(method, "logging/setLevel")) return do_set_level(srv, id, params);
    /* Servers that declare resources or prompts without any list them empty. */
    if (!strcmp(method, "resources/list") && json_object_get(srv->capabilities, "resources"))
        return result_msg(id, json_pack("{s:[]}", "resources"));
    if (!strcmp(method, "prompts/list") && json_object_get(srv->capabilities, "prompts"))
        return result_msg(id, json_pack("{s:[]}", "prompts"));
    return mb_mcp__error(id, MB_RPC_METHOD_NOT_FOUND, "Method not found");
}

json_t *mb_mcp__call_tool(mb_mcp_server *srv, mb_mcp_job *job)
{
    return do_tools_call(srv, json_object_get(job->msg, "id"),
                         json_object_get(job->msg, "params"), job);
}

/* ------------------------------------------------------------ call side */

void *mb_mcp_call_data(const mb_mcp_call *call) { return call->srv->data; }
mb_mcp_server *mb_mcp_call_server(const mb_mcp_call *call) { return call->srv; }
const char *mb_mcp_call_tool(const mb_mcp_call *call) { return call->tool; }
const char *mb_mcp_call_protocol(const mb_mcp_call *call) { return call->srv->protocol; }
const char *mb_mcp_call_header(const mb_mcp_call *call, const char *name, int *forwarded)
{
    if (forwarded) *forwarded = json_is_object(call->headers);
    return json_string_value(json_object_get(call->headers, name));
}
int mb_mcp_call_input_fd(const mb_mcp_call *call)
{
    if (call->job) return call->job->wake_fd; /* the reading thread owns stdin */
    return call->srv->eof ? -1 : call->srv->in_fd;
}

int mb_mcp_call_cancelled(mb_mcp_call *call)
{
    if (call->job) {
        if (atomic_load(&call->job->cancelled)) call->cancelled = 1;
        return call->cancelled;
    }
    if (!call->cancelled) mb_mcp__pump_input(call->srv);
    if (call->srv->eof) call->cancelled = 1;
    return call->cancelled;
}

void mb_mcp_progress(mb_mcp_call *call, double progress, double total, const char *message)
{
    if (!call->progress_token || call->cancelled) return;
    json_t *p = json_pack("{s:O, s:f}", "progressToken", call->progress_token, "progress", progress);
    if (total >= 0) json_object_set_new(p, "total", json_real(total));
    if (message) json_object_set_new(p, "message", json_string(message));
    mb_mcp__send(call->srv, json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
                                      "notifications/progress", "params", p));
}

void mb_mcp_log(mb_mcp_call *call, mb_mcp_level level, const char *logger, const char *fmt, ...)
{
    mb_mcp_server *srv = call->srv;
    if (!json_object_get(srv->capabilities, "logging") || (int)level < srv->log_level) return;
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *text = mb_utf8_repair(b.data ? b.data : "", b.len, NULL);
    mb_buf_free(&b);
    json_t *p = json_pack("{s:s, s:s}", "level", level_names[level], "data", text);
    free(text);
    if (logger) json_object_set_new(p, "logger", json_string(logger));
    mb_mcp__send(srv, json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
                                "notifications/message", "params", p));
}
