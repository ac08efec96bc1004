/*
 * server.c - `mcpbox mcp desktop-commander`: @wonderwhy-er/desktop-commander
 * 0.2.7 (MCP-Atlas) as a native server.
 *
 * Like upstream's hand-written TypeScript `Server`, every tools/call is
 * answered with a result: the tool's own errors are "Error: ..." texts with
 * isError, unknown tools "Error: Unknown tool: X", and after each call the
 * usage statistics of the config are updated (success or failure), so that
 * get_config shows what upstream shows. initialize always answers protocol
 * 2024-11-05 with tools/resources/prompts/logging capabilities and keeps the
 * client's clientInfo as currentClient.
 *
 * Telemetry: the config says telemetryEnabled (true by default) and carries
 * a clientId, as upstream's does, but nothing is ever sent anywhere.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "servers/common/zod3.h"
#include "servers/desktop-commander/dc.h"
#include "servers/servers.h"

/* ------------------------------------------------------------ results */

int dc_error(mb_mcp_result *res, const char *msg)
{
    char *t = mb_asprintf("Error: %s", msg);
    mb_mcp_text(res, t);
    free(t);
    mb_mcp_set_is_error(res, 1);
    return 1;
}

int dc_errorf(mb_mcp_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    dc_error(res, b.data ? b.data : "");
    mb_buf_free(&b);
    return 1;
}

static const json_t *schema_of(const char *tool)
{
    static json_t *cache[32];
    for (int i = 0; dc_tools[i].name; i++)
        if (!strcmp(dc_tools[i].name, tool)) {
            if (!__atomic_load_n(&cache[i], __ATOMIC_ACQUIRE)) {
                json_t *s = json_loads(dc_tools[i].input_schema, 0, NULL);
                json_t *expected = NULL;
                if (!__atomic_compare_exchange_n(&cache[i], &expected, s, 0, __ATOMIC_ACQ_REL,
                                                 __ATOMIC_ACQUIRE))
                    json_decref(s);
            }
            return cache[i];
        }
    return NULL;
}

static int parse_with(const char *tool, json_t *args, mb_mcp_result *res, const char *prefix)
{
    json_t *issues = NULL;
    if (!mb_zod3_check(schema_of(tool), args, &issues)) return 0;
    char *msg = mb_zod3_message(issues);
    json_decref(issues);
    char *t = mb_asprintf("Error: %s%s", prefix, msg);
    mb_mcp_text(res, t);
    mb_mcp_set_is_error(res, 1);
    free(t);
    free(msg);
    return 1;
}

int dc_parse(const char *tool, json_t *args, mb_mcp_result *res)
{
    return parse_with(tool, args, res, "");
}

int dc_safe_parse(const char *tool, json_t *args, mb_mcp_result *res)
{
    char *p = mb_asprintf("Invalid arguments for %s: ", tool);
    int r = parse_with(tool, args, res, p);
    free(p);
    return r;
}

/* ------------------------------------------------------- config tools */

static json_t *system_info(void)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:b, s:{s:s, s:s, s:s}}", "platform",
                     "linux", "platformName", "Linux", "defaultShell", "bash", "pathSeparator",
                     "/", "isWindows", 0, "isMacOS", 0, "isLinux", 1, "examplePaths", "home",
                     "/home/username", "temp", "/tmp", "absolute", "/path/to/file.txt");
}

static int t_get_config(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    (void)args;
    json_t *cfg = dc_config_copy(dc);
    pthread_mutex_lock(&dc->lock);
    json_object_set_new(cfg, "currentClient", json_pack("{s:s, s:s}", "name", dc->client_name,
                                                        "version", dc->client_version));
    pthread_mutex_unlock(&dc->lock);
    json_object_set_new(cfg, "systemInfo", system_info());
    mb_buf b = {0};
    mb_buf_puts(&b, "Current configuration:\n");
    mb_js_stringify_to(&b, cfg, 2);
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    json_decref(cfg);
    return 0;
}

static int t_set_config_value(dc_server *dc, mb_mcp_call *call, json_t *args,
                              mb_mcp_result *res)
{
    (void)call;
    json_t *issues = NULL;
    if (mb_zod3_check(schema_of("set_config_value"), args, &issues)) {
        char *msg = mb_zod3_message(issues);
        json_decref(issues);
        mb_mcp_textf(res, "Invalid arguments: %s", msg);
        free(msg);
        mb_mcp_set_is_error(res, 1);
        return 1;
    }
    const char *key = json_string_value(json_object_get(args, "key"));
    json_t *v = json_object_get(args, "value");
    /* value: z.any() - absent stays undefined, which JSON.stringify drops. */
    json_t *value = v ? json_incref(v) : NULL;
    if (json_is_string(value)) {
        const char *s = json_string_value(value);
        if (s[0] == '[' || s[0] == '{') {
            json_t *p = json_loads(s, JSON_DECODE_ANY, NULL);
            if (p) {
                json_decref(value);
                value = p;
            }
        }
    }
    if ((!strcmp(key, "allowedDirectories") || !strcmp(key, "blockedCommands")) &&
        !json_is_array(value)) {
        if (json_is_string(value)) {
            json_t *p = json_loads(json_string_value(value), JSON_DECODE_ANY, NULL);
            if (p) {
                json_decref(value);
                value = p;
            } else if (!strchr(json_string_value(value), '[')) {
                value = json_pack("[o]", value);
            }
        } else {
            value = json_pack("[o]", value ? value : json_null());
        }
        if (!json_is_array(value)) {
            /* String(value) of what JSON.parse gave (a number, true, an object). */
            char *s = json_is_string(value) ? mb_strdup(json_string_value(value))
                      : json_is_object(value) ? mb_strdup("[object Object]")
                                               : mb_js_stringify(value, 0);
            json_decref(value);
            value = json_pack("[s]", s);
            free(s);
        }
    }
    char *why = NULL;
    json_t *shown = value ? json_incref(value) : NULL;
    if (dc_config_set(dc, key, value, &why)) {
        mb_mcp_textf(res, "Value changed in memory but couldn't be saved to disk: %s", why);
        free(why);
        json_decref(shown);
        mb_mcp_set_is_error(res, 1);
        return 1;
    }
    json_t *cfg = dc_config_copy(dc);
    mb_buf b = {0};
    mb_buf_printf(&b, "Successfully set %s to ", key);
    if (shown) mb_js_stringify_to(&b, shown, 2);
    else mb_buf_puts(&b, "undefined");
    mb_buf_puts(&b, "\n\nUpdated configuration:\n");
    mb_js_stringify_to(&b, cfg, 2);
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    json_decref(cfg);
    json_decref(shown);
    return 0;
}

static int64_t json_int(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? (int64_t)json_number_value(v) : 0;
}

static int count_desc(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    double dx = json_number_value(json_array_get(x, 1)), dy = json_number_value(json_array_get(y, 1));
    if (dy > dx) return 1;
    if (dy < dx) return -1;
    return (int)(json_integer_value(json_array_get(x, 2)) - json_integer_value(json_array_get(y, 2)));
}

static int t_get_usage_stats(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    (void)args;
    json_t *st = dc_usage_stats(dc);
    int64_t now = (int64_t)(mb_now() * 1000);
    int64_t total = json_int(st, "totalToolCalls"), ok = json_int(st, "successfulCalls");
    double days = (double)(now - json_int(st, "firstUsed")) / (1000.0 * 60 * 60 * 24);
    long days_r = (long)floor(days + 0.5); /* Math.round */
    json_t *counts = json_object_get(st, "toolCounts");
    size_t n = json_object_size(counts), i = 0;
    json_t **ent = mb_calloc(n ? n : 1, sizeof *ent);
    const char *k;
    json_t *v;
    json_object_foreach(counts, k, v) {
        ent[i] = json_pack("[s, f, I]", k, json_number_value(v), (json_int_t)i);
        i++;
    }
    qsort(ent, n, sizeof *ent, count_desc);
    mb_buf top = {0};
    for (i = 0; i < n && i < 5; i++) {
        char *num = mb_js_number(json_number_value(json_array_get(ent[i], 1)));
        mb_buf_printf(&top, "%s%s: %s", i ? ", " : "", json_string_value(json_array_get(ent[i], 0)), num);
        free(num);
    }
    for (i = 0; i < n; i++) json_decref(ent[i]);
    free(ent);
    json_t *cfg = dc_config_copy(dc);
    json_t *fg = json_object_get(cfg, "feedbackGiven");
    int given = fg && !json_is_null(fg) && !json_is_false(fg) &&
                !(json_is_number(fg) && json_number_value(fg) == 0) &&
                !(json_is_string(fg) && !*json_string_value(fg));
    long rate = total > 0 ? (long)((double)ok / (double)total * 100 + 0.5) : 0;
    mb_mcp_textf(res,
                 "\xF0\x9F\x93\x8A **Usage Summary**\n"
                 "\xE2\x80\xA2 Total calls: %lld (%lld successful, %lld failed)\n"
                 "\xE2\x80\xA2 Success rate: %ld%%\n"
                 "\xE2\x80\xA2 Days using: %ld\n"
                 "\xE2\x80\xA2 Sessions: %lld\n"
                 "\xE2\x80\xA2 Unique tools: %zu\n"
                 "\xE2\x80\xA2 Most used: %s\n"
                 "\xE2\x80\xA2 Feedback given: %s\n\n"
                 "**By Category:**\n"
                 "\xE2\x80\xA2 Filesystem: %lld\n"
                 "\xE2\x80\xA2 Terminal: %lld\n"
                 "\xE2\x80\xA2 Editing: %lld\n"
                 "\xE2\x80\xA2 Search: %lld\n"
                 "\xE2\x80\xA2 Config: %lld\n"
                 "\xE2\x80\xA2 Process: %lld",
                 (long long)total, (long long)ok, (long long)json_int(st, "failedCalls"), rate,
                 days_r, (long long)json_int(st, "totalSessions"), n,
                 top.len ? top.data : "None", given ? "Yes" : "No",
                 (long long)json_int(st, "filesystemOperations"),
                 (long long)json_int(st, "terminalOperations"),
                 (long long)json_int(st, "editOperations"),
                 (long long)json_int(st, "searchOperations"),
                 (long long)json_int(st, "configOperations"),
                 (long long)json_int(st, "processOperations"));
    mb_buf_free(&top);
    json_decref(cfg);
    json_decref(st);
    return 0;
}

/* URLSearchParams serialisation of one value (application/x-www-form-urlencoded). */
static void form_encode(mb_buf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '*' || *p == '-' || *p == '.' || *p == '_')
            mb_buf_putc(b, (char)*p);
        else if (*p == ' ')
            mb_buf_putc(b, '+');
        else
            mb_buf_printf(b, "%%%02X", *p);
    }
}

/* The sandbox has no browser: upstream's xdg-open fails there, and this is
 * the text it then answers with (the form URL with the usage counters). */
static int t_give_feedback(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    (void)args;
    json_t *st = dc_usage_stats(dc);
    int64_t now = (int64_t)(mb_now() * 1000);
    int64_t days = (now - json_int(st, "firstUsed")) / (1000LL * 60 * 60 * 24);
    json_t *cfg = dc_config_copy(dc);
    const char *cid = json_string_value(json_object_get(cfg, "clientId"));
    mb_buf url = {0};
    mb_buf_printf(&url, "https://tally.so/r/mYB6av?tool_call_count=%lld&days_using=%lld&platform=linux&client_id=",
                  (long long)json_int(st, "totalToolCalls"), (long long)days);
    form_encode(&url, cid && *cid ? cid : "unknown");
    mb_mcp_textf(res,
                 "\xE2\x9A\xA0\xEF\xB8\x8F **Couldn't open browser automatically**\n\n"
                 "Please copy and paste this URL into your browser to access the feedback form:\n\n"
                 "%s\n\n"
                 "The form has been pre-filled with your information. Thank you for your feedback!",
                 url.data);
    mb_buf_free(&url);
    json_decref(cfg);
    json_decref(st);
    return 0;
}

/* ---------------------------------------------------------- dispatcher */

static const struct {
    const char *name;
    dc_impl fn;
} impls[] = {
    {"get_config", t_get_config},
    {"set_config_value", t_set_config_value},
    {"read_file", dc_read_file},
    {"read_multiple_files", dc_read_multiple_files},
    {"write_file", dc_write_file},
    {"create_directory", dc_create_directory},
    {"list_directory", dc_list_directory},
    {"move_file", dc_move_file},
    {"search_files", dc_search_files},
    {"search_code", dc_search_code},
    {"get_file_info", dc_get_file_info},
    {"edit_block", dc_edit_block},
    {"start_process", dc_start_process},
    {"read_process_output", dc_read_process_output},
    {"interact_with_process", dc_interact_with_process},
    {"force_terminate", dc_force_terminate},
    {"list_sessions", dc_list_sessions},
    {"list_processes", dc_list_processes},
    {"kill_process", dc_kill_process},
    {"get_usage_stats", t_get_usage_stats},
    {"give_feedback_to_desktop_commander", t_give_feedback},
};

int dc_call(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    dc_server *dc = mb_mcp_call_data(call);
    const char *name = mb_mcp_call_tool(call);
    int failed = -1;
    for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
        if (!strcmp(impls[i].name, name)) {
            failed = impls[i].fn(dc, call, args, res) ? 1 : 0;
            break;
        }
    if (failed < 0) {
        char *t = mb_asprintf("Unknown tool: %s", name);
        failed = dc_error(res, t);
        free(t);
    }
    dc_usage_track(dc, name, failed);
    return 0;
}

static void on_initialize(mb_mcp_server *srv, const json_t *params)
{
    dc_server *dc = mb_mcp_server_data(srv);
    const json_t *ci = json_object_get(params, "clientInfo");
    if (!json_is_object(ci)) return;
    const char *n = json_string_value(json_object_get(ci, "name"));
    const char *v = json_string_value(json_object_get(ci, "version"));
    pthread_mutex_lock(&dc->lock);
    free(dc->client_name);
    free(dc->client_version);
    dc->client_name = mb_strdup(n && *n ? n : "unknown");
    dc->client_version = mb_strdup(v && *v ? v : "unknown");
    pthread_mutex_unlock(&dc->lock);
}

static const mb_mcp_info info = {
    .name = "desktop-commander",
    .version = DC_VERSION,
    .flavor = MB_MCP_TS_SERVER,
    .capabilities = "{\"tools\":{},\"resources\":{},\"prompts\":{},\"logging\":{}}",
    .unknown_tool = dc_call,
    .concurrent_calls = DC_WORKERS,
    .max_protocol = "2024-11-05",
    .on_initialize = on_initialize,
};

static void dc_free(void *p)
{
    dc_server *dc = p;
    if (!dc) return;
    dc_procs_free(dc->procs);
    json_decref(dc->config);
    free(dc->config_path);
    free(dc->home);
    free(dc->state);
    free(dc->client_name);
    free(dc->client_version);
    pthread_mutex_destroy(&dc->lock);
    free(dc);
}

int mb_srv_desktop_commander_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"allowed-dir", required_argument, NULL, 'a'},
        {"state-dir", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char **allowed = mb_calloc((size_t)argc + 1, sizeof *allowed);
    size_t nallowed = 0;
    const char *state_dir = NULL;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        if (c == 'a') {
            allowed[nallowed++] = optarg;
        } else if (c == 's') {
            state_dir = optarg;
        } else {
            free(allowed);
            return mb_err_set(err, MB_EINVAL, "desktop-commander: unknown option");
        }
    }
    if (optind < argc) {
        free(allowed);
        return mb_err_set(err, MB_EINVAL, "desktop-commander: unexpected argument '%s'",
                          argv[optind]);
    }
    mb_mcp_server *srv;
    int rc = mb_mcp_server_new(&info, &srv, err);
    if (rc) {
        free(allowed);
        return rc;
    }
    dc_server *dc = mb_calloc(1, sizeof *dc);
    pthread_mutex_init(&dc->lock, NULL);
    dc->client_name = mb_strdup("uninitialized");
    dc->client_version = mb_strdup("uninitialized");
    dc->procs = dc_procs_new();
    mb_mcp_server_set_data(srv, dc, dc_free);
    rc = dc_config_init(dc, allowed, nallowed, state_dir, err);
    free(allowed);
    if (!rc) rc = mb_mcp_add_tools(srv, dc_tools, err);
    if (rc) {
        mb_mcp_server_free(srv);
        return rc;
    }
    *out = srv;
    return 0;
}
