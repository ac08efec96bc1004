/*
 * test_mcp.c - unit tests for the MCP server framework (src/mcp): framing,
 * initialize negotiation, JSON-RPC errors, the registry and the flavors,
 * zod-style validation, path confinement (symlink escapes included), and the
 * runtime-text helpers (Node errors, JSON.stringify, json.dumps, numbers,
 * UTF-8, collation, minimatch). Expected texts come from running the
 * upstream SDKs / Node 22 (see tests/unit/mcp_cases.h for the generated
 * tables).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdatomic.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "mcp_cases.h"

/* ---------------------------------------------------------- a test server */

static int t_echo(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_mcp_textf(res, "%s:%s", mb_mcp_call_tool(call), mb_mcp_arg_str(args, "text", "?"));
    mb_mcp_structured(res, json_pack("{s:s}", "content", mb_mcp_arg_str(args, "text", "?")));
    return 0;
}

static int t_fail(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_mcp_text(res, "discarded");
    return mb_mcp_fail(res, "it broke: %s", "badly");
}

static int t_rpc(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    return mb_mcp_rpc_error(res, -32001, "custom %d", 7);
}

static int t_negative(mb_mcp_call *call, json_t *args, mb_mcp_result *res) { return MB_EIO; }

static int t_bad_struct(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_mcp_text(res, "x");
    mb_mcp_structured(res, json_pack("{s:i}", "content", 5));
    return 0;
}

static int t_is_error(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_mcp_text_n(res, "bad \xff bytes", 11);
    mb_mcp_image(res, "AAAA", "image/png");
    mb_mcp_set_is_error(res, 1);
    return 0;
}

static int t_args(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    char *s = args ? mb_js_stringify(args, 0) : mb_strdup("NULL");
    mb_mcp_text(res, s);
    free(s);
    return 0;
}

#define ECHO_SCHEMA                                                                             \
    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"},\"n\":{\"type\":\"number\"," \
    "\"default\":3},\"mode\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"],\"default\":\"a\"}},"        \
    "\"required\":[\"text\"]}"
#define OUT_SCHEMA                                                                              \
    "{\"type\":\"object\",\"properties\":{\"content\":{\"type\":\"string\"}},\"required\":[\"content\"]," \
    "\"additionalProperties\":false}"

static const mb_mcp_tool test_tools[] = {
    {.name = "echo", .title = "Echo", .description = "echoes", .input_schema = ECHO_SCHEMA,
     .output_schema = OUT_SCHEMA, .annotations = "{\"readOnlyHint\":true}", .fn = t_echo},
    {.name = "fail", .description = "fails", .input_schema = "{\"type\":\"object\"}", .fn = t_fail},
    {.name = "rpc", .description = "rpc error", .input_schema = "{\"type\":\"object\"}", .fn = t_rpc},
    {.name = "negative", .description = "bad return", .input_schema = "{\"type\":\"object\"}", .fn = t_negative},
    {.name = "bad_struct", .description = "lies", .input_schema = "{\"type\":\"object\"}",
     .output_schema = OUT_SCHEMA, .fn = t_bad_struct},
    {.name = "is_error", .description = "returns an error", .input_schema = "{\"type\":\"object\"}", .fn = t_is_error},
    {.name = "args", .description = "shows args", .input_schema = "{\"type\":\"object\"}", .fn = t_args},
    {0},
};

static mb_mcp_info infos[4] = {
    {.name = "test-server", .version = "1.2.3", .flavor = MB_MCP_TS_MCPSERVER},
    {.name = "test-server", .version = "1.2.3", .flavor = MB_MCP_TS_SERVER},
    {.name = "test-server", .version = "1.2.3", .flavor = MB_MCP_PY_FASTMCP},
    {.name = "test-server", .version = "1.2.3", .flavor = MB_MCP_PY_SERVER, .instructions = "be nice"},
};

static mb_mcp_server *make_server(int flavor)
{
    mb_mcp_server *srv;
    mb_err err;
    assert_int_equal(mb_mcp_server_new(&infos[flavor], &srv, &err), 0);
    assert_int_equal(mb_mcp_add_tools(srv, test_tools, &err), 0);
    return srv;
}

/* Sends one line, returns the single reply parsed (NULL if none). */
static json_t *ask(mb_mcp_server *srv, const char *line)
{
    mb_buf out = {0};
    mb_mcp_handle_line(srv, line, strlen(line), &out);
    if (!out.len) {
        mb_buf_free(&out);
        return NULL;
    }
    assert_int_equal(out.data[out.len - 1], '\n');
    assert_null(memchr(out.data, '\n', out.len - 1)); /* exactly one line */
    json_error_t jerr;
    json_t *j = json_loads(out.data, 0, &jerr);
    assert_non_null(j);
    mb_buf_free(&out);
    return j;
}

static json_t *call_tool(mb_mcp_server *srv, const char *name, const char *args_json)
{
    char *line = args_json ? mb_asprintf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                         "\"params\":{\"name\":\"%s\",\"arguments\":%s}}", name, args_json)
                           : mb_asprintf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                         "\"params\":{\"name\":\"%s\"}}", name);
    json_t *r = ask(srv, line);
    free(line);
    return r;
}

static const char *result_text(json_t *reply)
{
    return json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(reply, "result"), "content"), 0), "text"));
}

static int is_error_result(json_t *reply)
{
    return json_is_true(json_object_get(json_object_get(reply, "result"), "isError"));
}

static const char *error_message(json_t *reply)
{
    return json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
}

static long error_code(json_t *reply)
{
    return (long)json_integer_value(json_object_get(json_object_get(reply, "error"), "code"));
}

/* ------------------------------------------------------------- protocol */

static void test_initialize_negotiation(void **state)
{
    mb_mcp_server *srv = make_server(3);
    const char *cases[][2] = {{"2025-06-18", "2025-06-18"}, {"2024-11-05", "2024-11-05"},
                              {"2025-03-26", "2025-03-26"}, {"2025-11-25", "2025-11-25"},
                              {"1999-01-01", "2025-11-25"}, {"2024-10-07", "2025-11-25"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *line = mb_asprintf("{\"jsonrpc\":\"2.0\",\"id\":\"s%zu\",\"method\":\"initialize\",\"params\":"
                                 "{\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":"
                                 "{\"name\":\"c\",\"version\":\"1\"}}}", i, cases[i][0]);
        json_t *r = ask(srv, line);
        free(line);
        json_t *res = json_object_get(r, "result");
        assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")), cases[i][1]);
        assert_string_equal(json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name")),
                            "test-server");
        assert_string_equal(json_string_value(json_object_get(json_object_get(res, "serverInfo"), "version")),
                            "1.2.3");
        assert_non_null(json_object_get(json_object_get(res, "capabilities"), "tools"));
        assert_non_null(json_object_get(json_object_get(res, "capabilities"), "logging"));
        assert_string_equal(json_string_value(json_object_get(res, "instructions")), "be nice");
        char want_id[8];
        snprintf(want_id, sizeof want_id, "s%zu", i);
        assert_string_equal(json_string_value(json_object_get(r, "id")), want_id);
        json_decref(r);
    }
    /* no params at all still answers */
    json_t *r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\"}");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")),
                        MB_MCP_PROTOCOL_LATEST);
    json_decref(r);
    mb_mcp_server_free(srv);
}

/* on_initialize: told the params of initialize and of the gateway's
 * client_initialized notification; resources/prompts listed empty when the
 * capabilities name them. */
static int seen_inits;
static char seen_client[64];

static void record_init(mb_mcp_server *srv, const json_t *params)
{
    (void)srv;
    seen_inits++;
    const char *n = json_string_value(json_object_get(json_object_get(params, "clientInfo"), "name"));
    snprintf(seen_client, sizeof seen_client, "%s", n ? n : "");
}

static void test_initialize_hook_and_empty_lists(void **state)
{
    (void)state;
    static const mb_mcp_info info = {.name = "hooked", .version = "1", .flavor = MB_MCP_TS_SERVER,
                                     .capabilities = "{\"tools\":{},\"resources\":{},\"prompts\":{}}",
                                     .on_initialize = record_init};
    mb_mcp_server *srv;
    mb_err err;
    assert_int_equal(mb_mcp_server_new(&info, &srv, &err), 0);
    seen_inits = 0;
    json_t *r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                         "{\"protocolVersion\":\"2025-06-18\",\"clientInfo\":{\"name\":\"first\"}}}");
    json_decref(r);
    assert_int_equal(seen_inits, 1);
    assert_string_equal(seen_client, "first");
    /* a notification: no reply, the hook hears it */
    assert_null(ask(srv, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/mcpbox/client_initialized\","
                         "\"params\":{\"clientInfo\":{\"name\":\"second\"}}}"));
    assert_int_equal(seen_inits, 2);
    assert_string_equal(seen_client, "second");
    /* params that are not an object are not passed on */
    assert_null(ask(srv, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/mcpbox/client_initialized\","
                         "\"params\":[1]}"));
    assert_int_equal(seen_inits, 2);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}");
    assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "resources")), 0);
    assert_non_null(json_object_get(json_object_get(r, "result"), "resources"));
    json_decref(r);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/list\"}");
    assert_non_null(json_object_get(json_object_get(r, "result"), "prompts"));
    json_decref(r);
    mb_mcp_server_free(srv);
    /* a server without those capabilities does not know the methods */
    srv = make_server(1);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/list\"}");
    assert_int_equal(error_code(r), -32601);
    json_decref(r);
    assert_null(ask(srv, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/mcpbox/client_initialized\","
                         "\"params\":{}}"));
    mb_mcp_server_free(srv);
}

static void test_framing_and_errors(void **state)
{
    mb_mcp_server *srv = make_server(0);
    json_t *r;

    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r");
    assert_int_equal(json_object_size(json_object_get(r, "result")), 0);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
    json_decref(r);

    r = ask(srv, "{not json");
    assert_int_equal(error_code(r), MB_RPC_PARSE_ERROR);
    assert_true(json_is_null(json_object_get(r, "id")));
    json_decref(r);

    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}");
    assert_int_equal(error_code(r), MB_RPC_METHOD_NOT_FOUND);
    assert_string_equal(error_message(r), "Method not found");
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 2);
    json_decref(r);

    r = ask(srv, "5");
    assert_int_equal(error_code(r), MB_RPC_INVALID_REQUEST);
    json_decref(r);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":3}");
    assert_int_equal(error_code(r), MB_RPC_INVALID_REQUEST);
    json_decref(r);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"ping\"}");
    assert_int_equal(error_code(r), MB_RPC_INVALID_REQUEST);
    json_decref(r);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":7}");
    assert_int_equal(error_code(r), MB_RPC_INVALID_REQUEST);
    json_decref(r);
    r = ask(srv, "[]");
    assert_int_equal(error_code(r), MB_RPC_INVALID_REQUEST);
    json_decref(r);

    /* notifications, responses and blank lines produce nothing */
    assert_null(ask(srv, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
    assert_null(ask(srv, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\",\"params\":{}}"));
    assert_null(ask(srv, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":5}}"));
    assert_null(ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"));
    assert_null(ask(srv, "   "));

    /* a batch: answers in one array, notifications skipped */
    r = ask(srv, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}]");
    assert_true(json_is_array(r));
    assert_int_equal(json_array_size(r), 2);
    assert_int_equal(error_code(json_array_get(r, 1)), MB_RPC_METHOD_NOT_FOUND);
    json_decref(r);
    assert_null(ask(srv, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]"));

    /* the size cap */
    mb_mcp_set_max_message(srv, 64);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}");
    assert_int_equal(error_code(r), MB_RPC_INVALID_REQUEST);
    assert_non_null(strstr(error_message(r), "exceeds the limit of 64 bytes"));
    json_decref(r);

    /* logging/setLevel */
    mb_mcp_set_max_message(srv, 1 << 20);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"warning\"}}");
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}");
    assert_int_equal(error_code(r), MB_RPC_INVALID_PARAMS);
    json_decref(r);
    mb_mcp_server_free(srv);
}

static void test_tools_list_shape(void **state)
{
    mb_mcp_server *srv = make_server(0);
    json_t *r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{}}");
    json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
    assert_int_equal(json_array_size(tools), 7);
    json_t *echo = json_array_get(tools, 0);
    const char *keys[] = {"name", "title", "description", "inputSchema", "annotations", "execution", "outputSchema"};
    const char *k;
    json_t *v;
    size_t i = 0;
    json_object_foreach(echo, k, v) assert_string_equal(k, keys[i++]);
    assert_int_equal(i, 7);
    /* the schema text is kept verbatim, key order included */
    char *s = mb_js_stringify(json_object_get(echo, "inputSchema"), 0);
    assert_string_equal(s, ECHO_SCHEMA);
    free(s);
    assert_string_equal(json_string_value(json_object_get(json_object_get(echo, "execution"), "taskSupport")),
                        "forbidden");
    assert_null(json_object_get(json_array_get(tools, 1), "title"));
    json_decref(r);
    mb_mcp_server_free(srv);

    srv = make_server(1); /* other flavors carry no execution field */
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    assert_null(json_object_get(json_array_get(json_object_get(json_object_get(r, "result"), "tools"), 0), "execution"));
    json_decref(r);
    mb_mcp_server_free(srv);
}

static void test_registry_errors(void **state)
{
    mb_mcp_server *srv = make_server(0);
    mb_err err;
    assert_int_equal(mb_mcp_add_tool(srv, &test_tools[0], &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "registered twice"));
    mb_mcp_tool bad = {.name = "bad", .description = "d", .input_schema = "{\"type\":", .fn = t_echo};
    assert_int_equal(mb_mcp_add_tool(srv, &bad, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "input_schema"));
    mb_mcp_tool bad2 = {.name = "bad2", .description = "d", .input_schema = "{}", .annotations = "[1]", .fn = t_echo};
    assert_int_equal(mb_mcp_add_tool(srv, &bad2, &err), MB_EINVAL);
    mb_mcp_tool nofn = {.name = "nofn", .description = "d", .input_schema = "{}"};
    assert_int_equal(mb_mcp_add_tool(srv, &nofn, &err), MB_EINVAL);
    assert_non_null(mb_mcp_find_tool(srv, "echo"));
    assert_null(mb_mcp_find_tool(srv, "bad"));
    mb_mcp_server_free(srv);

    mb_mcp_info caps = {.name = "x", .version = "1", .capabilities = "[]"};
    assert_int_equal(mb_mcp_server_new(&caps, &srv, &err), MB_EINVAL);
}

/* ----------------------------------------------------------- tools/call */

static void test_flavor_ts_mcpserver(void **state)
{
    mb_mcp_server *srv = make_server(0);
    json_t *r = call_tool(srv, "echo", "{\"text\":\"hi\",\"extra\":1}");
    assert_string_equal(result_text(r), "echo:hi");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(r, "result"),
                                                                          "structuredContent"), "content")), "hi");
    assert_false(is_error_result(r));
    json_decref(r);

    r = call_tool(srv, "nosuch", "{}");
    assert_true(is_error_result(r));
    assert_string_equal(result_text(r), "MCP error -32602: Tool nosuch not found");
    json_decref(r);

    r = call_tool(srv, "echo", NULL);
    assert_string_equal(result_text(r), "MCP error -32602: Input validation error: Invalid arguments for tool "
                                        "echo: Invalid input: expected string, received undefined at text");
    json_decref(r);
    r = call_tool(srv, "echo", "{\"text\":1,\"n\":\"x\",\"mode\":\"c\"}");
    assert_string_equal(result_text(r), "MCP error -32602: Input validation error: Invalid arguments for tool "
                                        "echo: Invalid input: expected string, received number at text\n"
                                        "Invalid input: expected number, received string at n\n"
                                        "Invalid option: expected one of \"a\"|\"b\" at mode");
    json_decref(r);

    r = call_tool(srv, "args", "{\"z\":1}");
    assert_string_equal(result_text(r), "{\"z\":1}");
    json_decref(r);

    r = call_tool(srv, "fail", "{}");
    assert_true(is_error_result(r));
    assert_string_equal(result_text(r), "it broke: badly");
    assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "content")), 1);
    json_decref(r);

    r = call_tool(srv, "rpc", "{}");
    assert_int_equal(error_code(r), -32001);
    assert_string_equal(error_message(r), "custom 7");
    json_decref(r);

    r = call_tool(srv, "negative", "{}");
    assert_true(is_error_result(r));
    assert_non_null(strstr(result_text(r), "Internal error in tool negative"));
    json_decref(r);

    r = call_tool(srv, "bad_struct", "{}");
    assert_true(is_error_result(r));
    assert_string_equal(result_text(r), "MCP error -32602: Output validation error: Invalid structured content "
                                        "for tool bad_struct: Invalid input: expected string, received number at content");
    json_decref(r);

    r = call_tool(srv, "is_error", "{}");
    assert_true(is_error_result(r));
    assert_string_equal(result_text(r), "bad \xEF\xBF\xBD bytes");
    json_t *img = json_array_get(json_object_get(json_object_get(r, "result"), "content"), 1);
    assert_string_equal(json_string_value(json_object_get(img, "type")), "image");
    assert_string_equal(json_string_value(json_object_get(img, "mimeType")), "image/png");
    json_decref(r);

    /* malformed tools/call params: the SDK's zod issue list, as -32603 */
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":5}}");
    assert_int_equal(error_code(r), MB_RPC_INTERNAL_ERROR);
    assert_string_equal(error_message(r), "[\n  {\n    \"expected\": \"string\",\n    \"code\": \"invalid_type\",\n"
                                          "    \"path\": [\n      \"params\",\n      \"name\"\n    ],\n"
                                          "    \"message\": \"Invalid input: expected string, received number\"\n  }\n]");
    json_decref(r);
    r = ask(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":[]}}");
    assert_non_null(strstr(error_message(r), "expected record, received array"));
    json_decref(r);
    mb_mcp_server_free(srv);
}

static int t_unknown_hook(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    return mb_mcp_fail(res, "%s: %s", args ? "with args" : "no args", mb_mcp_call_tool(call));
}

static void test_other_flavors(void **state)
{
    mb_mcp_server *srv = make_server(1); /* TS low-level Server */
    json_t *r = call_tool(srv, "fail", "{}");
    assert_int_equal(error_code(r), MB_RPC_INTERNAL_ERROR);
    assert_string_equal(error_message(r), "it broke: badly");
    json_decref(r);
    r = call_tool(srv, "nosuch", "{}");
    assert_int_equal(error_code(r), MB_RPC_INTERNAL_ERROR);
    assert_string_equal(error_message(r), "Unknown tool: nosuch");
    json_decref(r);
    r = call_tool(srv, "args", NULL); /* absent arguments reach the handler as NULL */
    assert_string_equal(result_text(r), "NULL");
    json_decref(r);
    r = call_tool(srv, "echo", "{}"); /* no validation */
    assert_string_equal(result_text(r), "echo:?");
    json_decref(r);
    mb_mcp_server_free(srv);

    mb_mcp_info hooked = {.name = "h", .version = "1", .flavor = MB_MCP_TS_SERVER, .unknown_tool = t_unknown_hook};
    mb_err err;
    assert_int_equal(mb_mcp_server_new(&hooked, &srv, &err), 0);
    r = call_tool(srv, "zzz", NULL);
    assert_string_equal(error_message(r), "no args: zzz");
    json_decref(r);
    r = call_tool(srv, "zzz", "{}");
    assert_string_equal(error_message(r), "with args: zzz");
    json_decref(r);
    mb_mcp_server_free(srv);

    srv = make_server(2); /* FastMCP */
    r = call_tool(srv, "fail", "{}");
    assert_true(is_error_result(r));
    assert_string_equal(result_text(r), "Error executing tool fail: it broke: badly");
    json_decref(r);
    r = call_tool(srv, "nosuch", "{}");
    assert_true(is_error_result(r));
    assert_string_equal(result_text(r), "Unknown tool: nosuch");
    json_decref(r);
    mb_mcp_server_free(srv);

    srv = make_server(3); /* Python low-level Server */
    r = call_tool(srv, "fail", "{}");
    assert_true(is_error_result(r));
    assert_string_equal(result_text(r), "it broke: badly");
    json_decref(r);
    r = call_tool(srv, "nosuch", NULL);
    assert_string_equal(result_text(r), "Unknown tool: nosuch");
    json_decref(r);
    mb_mcp_server_free(srv);
}

static void expect_zod(const char *schema_text, const char *args_text, const char *want, const char *after)
{
    json_t *schema = json_loads(schema_text, 0, NULL), *args = args_text ? json_loads(args_text, 0, NULL) : NULL;
    assert_non_null(schema);
    char *msg = NULL;
    int rc = mb_mcp_validate_zod(schema, args, &msg);
    if (want) {
        assert_int_equal(rc, MB_EINVAL);
        assert_string_equal(msg, want);
    } else {
        assert_int_equal(rc, 0);
        assert_null(msg);
    }
    if (after) {
        char *s = mb_js_stringify(args, 0);
        assert_string_equal(s, after);
        free(s);
    }
    free(msg);
    json_decref(schema);
    json_decref(args);
}

static void test_validation_texts(void **state)
{
    const char *edit = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"edits\":{\"type\":\"array\","
                       "\"items\":{\"type\":\"object\",\"properties\":{\"oldText\":{\"type\":\"string\"},"
                       "\"newText\":{\"type\":\"string\"}},\"required\":[\"oldText\",\"newText\"]}},"
                       "\"dryRun\":{\"default\":false,\"type\":\"boolean\"}},\"required\":[\"path\",\"edits\"]}";
    expect_zod(edit, "{\"path\":\"a\",\"edits\":[]}", NULL, "{\"path\":\"a\",\"edits\":[],\"dryRun\":false}");
    expect_zod(edit, "{\"path\":\"a\",\"edits\":[{\"oldText\":\"x\"}]}",
               "Invalid input: expected string, received undefined at edits[0].newText", NULL);
    expect_zod(edit, "{\"path\":null,\"edits\":{},\"dryRun\":\"no\"}",
               "Invalid input: expected string, received null at path\n"
               "Invalid input: expected array, received object at edits\n"
               "Invalid input: expected boolean, received string at dryRun", NULL);
    expect_zod(edit, "{\"path\":\"a\",\"edits\":[1,{\"oldText\":true,\"newText\":[]}]}",
               "Invalid input: expected object, received number at edits[0]\n"
               "Invalid input: expected string, received boolean at edits[1].oldText\n"
               "Invalid input: expected string, received array at edits[1].newText", NULL);
    const char *many = "{\"type\":\"object\",\"properties\":{\"paths\":{\"minItems\":1,\"type\":\"array\","
                       "\"items\":{\"type\":\"string\"}},\"n\":{\"type\":\"integer\",\"minimum\":2,\"maximum\":5}},"
                       "\"required\":[\"paths\"]}";
    expect_zod(many, "{\"paths\":[]}", "Too small: expected array to have >=1 items at paths", NULL);
    expect_zod(many, "{\"paths\":[\"a\"],\"n\":1.5}", "Invalid input: expected int, received number at n", NULL);
    expect_zod(many, "{\"paths\":[\"a\"],\"n\":9}", "Too big: expected number to be <=5 at n", NULL);
    expect_zod(many, "{\"paths\":[\"a\"],\"n\":4}", NULL, NULL);
    const char *out = "{\"type\":\"object\",\"properties\":{\"content\":{\"type\":\"array\",\"items\":{\"anyOf\":["
                      "{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\",\"enum\":[\"image\",\"audio\"]}},"
                      "\"required\":[\"type\"],\"additionalProperties\":false},{\"type\":\"object\",\"properties\":"
                      "{\"type\":{\"type\":\"string\",\"const\":\"resource\"}},\"required\":[\"type\"]}]}}},"
                      "\"required\":[\"content\"],\"additionalProperties\":false}";
    expect_zod(out, "{\"content\":[{\"type\":\"image\"},{\"type\":\"resource\",\"x\":1}]}", NULL, NULL);
    expect_zod(out, "{\"content\":[{\"type\":\"video\"}]}", "Invalid input at content[0]", NULL);
    expect_zod(out, "{\"content\":[],\"more\":1,\"most\":2}", "Unrecognized keys: \"more\", \"most\"", NULL);
    expect_zod(out, NULL, "Invalid input: expected object, received undefined", NULL);
}

/* --------------------------------------------------- cancellation (pipes) */

typedef struct feeder {
    int fd;
    atomic_int saw_cancel; /* written by the handler, read by the feeder thread */
} feeder;

static int t_slow(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    feeder *f = mb_mcp_call_data(call);
    int64_t end = mb_mono_ms() + 10000;
    mb_mcp_progress(call, 1, 10, "started");
    mb_mcp_log(call, MB_MCP_INFO, "slow", "working %d", 1);
    while (mb_mono_ms() < end) {
        if (mb_mcp_call_cancelled(call)) {
            f->saw_cancel = 1;
            break;
        }
        usleep(2000);
    }
    mb_mcp_text(res, "finished");
    return 0;
}

static void write_line(int fd, const char *s)
{
    assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void *feed(void *p)
{
    feeder *f = p;
    write_line(f->fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                      "\"arguments\":{},\"_meta\":{\"progressToken\":\"tok\"}}}\n");
    usleep(50000);
    write_line(f->fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
                      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}\n"
                      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n");
    for (int i = 0; i < 500 && !f->saw_cancel; i++) usleep(10000);
    write_line(f->fd, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}"); /* last line, no newline */
    close(f->fd);
    return NULL;
}

static void test_serve_cancel_and_ping(void **state)
{
    static const mb_mcp_tool slow[] = {
        {.name = "slow", .description = "d", .input_schema = "{\"type\":\"object\"}", .fn = t_slow}, {0}};
    mb_mcp_server *srv;
    mb_err err;
    assert_int_equal(mb_mcp_server_new(&infos[0], &srv, &err), 0);
    assert_int_equal(mb_mcp_add_tools(srv, slow, &err), 0);
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, out), 0);
    int big = 1 << 20;
    setsockopt(out[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    feeder f = {.fd = in[1]};
    mb_mcp_server_set_data(srv, &f, NULL);
    pthread_t th;
    pthread_create(&th, NULL, feed, &f);
    assert_int_equal(mb_mcp_serve(srv, in[0], out[0], &err), 0);
    pthread_join(th, NULL);
    close(in[0]);
    close(out[0]);
    assert_true(f.saw_cancel);
    char buf[65536];
    ssize_t n = read(out[1], buf, sizeof buf - 1);
    close(out[1]);
    assert_true(n > 0);
    buf[n] = '\0';
    /* progress + log during the call, ping 2 answered during it, no answer
     * for the cancelled id 1, then 3 and the unterminated 4 */
    const char *want_order[] = {"notifications/progress", "notifications/message", "\"id\":2", "\"id\":3", "\"id\":4"};
    const char *p = buf;
    for (size_t i = 0; i < 5; i++) {
        const char *hit = strstr(p, want_order[i]);
        assert_non_null(hit);
        p = hit;
    }
    assert_null(strstr(buf, "\"id\":1"));
    assert_null(strstr(buf, "finished"));
    assert_non_null(strstr(buf, "\"progressToken\":\"tok\""));
    mb_mcp_server_free(srv);
}

static void test_serve_oversize_line(void **state)
{
    mb_mcp_server *srv = make_server(0);
    mb_mcp_set_max_message(srv, 100);
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, out), 0);
    mb_buf msg = {0};
    for (int i = 0; i < 20000; i++) mb_buf_putc(&msg, 'x'); /* one long junk line */
    mb_buf_puts(&msg, "\n{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n");
    /* the pipe holds 64 KiB: enough for this input */
    assert_int_equal(write(in[1], msg.data, msg.len), (ssize_t)msg.len);
    close(in[1]);
    mb_buf_free(&msg);
    mb_err err;
    assert_int_equal(mb_mcp_serve(srv, in[0], out[0], &err), 0);
    close(in[0]);
    close(out[0]);
    char buf[4096];
    ssize_t n = read(out[1], buf, sizeof buf - 1);
    close(out[1]);
    buf[n > 0 ? n : 0] = '\0';
    char *nl = strchr(buf, '\n');
    assert_non_null(nl);
    assert_non_null(strstr(buf, "-32600"));
    assert_non_null(strstr(nl + 1, "\"id\":8"));
    assert_null(strstr(nl + 1, "-32600"));
    mb_mcp_server_free(srv);
}

/* ----------------------------------------------------- path confinement */

typedef struct tree {
    char base[64];
    char root[96];
} tree;

static void mk(const char *path, const char *content)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static void make_tree(tree *t)
{
    snprintf(t->base, sizeof t->base, "/tmp/mb-mcp-test-XXXXXX");
    assert_non_null(mkdtemp(t->base));
    snprintf(t->root, sizeof t->root, "%s/root", t->base);
    char p[256];
    assert_int_equal(mkdir(t->root, 0755), 0);
    snprintf(p, sizeof p, "%s/sub", t->root);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/rootx", t->base); /* a sibling sharing the prefix */
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/outside", t->base);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/outside/secret", t->base);
    mk(p, "s");
    snprintf(p, sizeof p, "%s/a.txt", t->root);
    mk(p, "a");
    snprintf(p, sizeof p, "%s/link_in", t->root);
    assert_int_equal(symlink("a.txt", p), 0);
    snprintf(p, sizeof p, "%s/link_out", t->root);
    assert_int_equal(symlink("../outside/secret", p), 0);
    snprintf(p, sizeof p, "%s/dir_out", t->root);
    assert_int_equal(symlink("../outside", p), 0);
    snprintf(p, sizeof p, "%s/dangling_out", t->root);
    assert_int_equal(symlink("../outside/nothing", p), 0);
    snprintf(p, sizeof p, "%s/sub/up", t->root);
    assert_int_equal(symlink("../..", p), 0);
}

static void expect_resolve(mb_mcp_roots *r, const char *req, const char *want_path, const char *want_why)
{
    char *out, *why;
    int rc = mb_mcp_resolve(r, req, &out, &why);
    if (want_path) {
        assert_int_equal(rc, 0);
        assert_string_equal(out, want_path);
        assert_null(why);
    } else {
        assert_true(rc < 0);
        assert_null(out);
        assert_string_equal(why, want_why);
    }
    free(out);
    free(why);
}

static void test_path_confinement(void **state)
{
    tree t;
    make_tree(&t);
    char *dirs[] = {t.root};
    mb_mcp_roots *r;
    mb_err err;
    assert_int_equal(mb_mcp_roots_new(dirs, 1, &r, &err), 0);
    char w[512], w2[512];

    snprintf(w, sizeof w, "%s/a.txt", t.root);
    expect_resolve(r, "a.txt", w, NULL);
    expect_resolve(r, "./sub/../a.txt", w, NULL);
    expect_resolve(r, w, w, NULL);
    expect_resolve(r, "link_in", w, NULL); /* inside links resolve to their target */
    snprintf(w, sizeof w, "%s/new.txt", t.root);
    expect_resolve(r, "new.txt", w, NULL); /* a new file: its parent is checked */
    expect_resolve(r, "", t.root, NULL);
    expect_resolve(r, ".", t.root, NULL);
    snprintf(w, sizeof w, "%s/a.txt ", t.root);
    expect_resolve(r, "a.txt ", w, NULL); /* trimmed only for the check, as upstream */

    snprintf(w, sizeof w, "Access denied - path outside allowed directories: %s/outside/secret not in %s", t.base, t.root);
    expect_resolve(r, "../outside/secret", NULL, w);
    snprintf(w2, sizeof w2, "%s/outside/secret", t.base);
    expect_resolve(r, w2, NULL, w);
    snprintf(w, sizeof w, "Access denied - path outside allowed directories: %s/rootx/f not in %s", t.base, t.root);
    snprintf(w2, sizeof w2, "%s/rootx/f", t.base);
    expect_resolve(r, w2, NULL, w);
    snprintf(w, sizeof w, "Access denied - path outside allowed directories: /etc/passwd not in %s", t.root);
    expect_resolve(r, "/etc/passwd", NULL, w);

    snprintf(w, sizeof w, "Access denied - symlink target outside allowed directories: %s/outside/secret not in %s",
             t.base, t.root);
    expect_resolve(r, "link_out", NULL, w);
    expect_resolve(r, "dir_out/secret", NULL, w);
    snprintf(w, sizeof w, "Access denied - symlink target outside allowed directories: %s not in %s", t.base, t.root);
    expect_resolve(r, "sub/up", NULL, w);
    snprintf(w, sizeof w, "Parent directory does not exist: %s/dir_out", t.root);
    expect_resolve(r, "dir_out/new.txt", NULL, w); /* parent escapes: reported as missing */
    snprintf(w, sizeof w, "%s/dangling_out", t.root);
    expect_resolve(r, "dangling_out", w, NULL); /* callers must not follow it: see write_file */
    snprintf(w, sizeof w, "Parent directory does not exist: %s/no/such", t.root);
    expect_resolve(r, "no/such/file", NULL, w);
    snprintf(w, sizeof w, "ENOTDIR: not a directory, realpath '%s/a.txt/x'", t.root);
    expect_resolve(r, "a.txt/x", NULL, w);

    setenv("HOME", t.root, 1);
    snprintf(w, sizeof w, "%s/a.txt", t.root);
    expect_resolve(r, "~/a.txt", w, NULL);
    expect_resolve(r, "~", t.root, NULL);

    assert_true(mb_mcp_roots_contains(r, t.root));
    snprintf(w, sizeof w, "%s/", t.root);
    assert_true(mb_mcp_roots_contains(r, w));
    snprintf(w, sizeof w, "%sx", t.root);
    assert_false(mb_mcp_roots_contains(r, w));
    mb_mcp_roots_free(r);

    /* start-up: a symlinked root is kept under both names; bad ones dropped */
    char link[256], file[256], missing[256];
    snprintf(link, sizeof link, "%s/rootlink", t.base);
    assert_int_equal(symlink("root", link), 0);
    snprintf(file, sizeof file, "%s/a.txt", t.root);
    snprintf(missing, sizeof missing, "%s/missing", t.base);
    char *dirs2[] = {link, file, missing};
    assert_int_equal(mb_mcp_roots_new(dirs2, 3, &r, &err), 0);
    assert_int_equal(mb_mcp_roots_count(r), 2);
    assert_string_equal(mb_mcp_roots_get(r, 0), link);
    assert_string_equal(mb_mcp_roots_get(r, 1), t.root);
    char *joined = mb_mcp_roots_join(r, ", ");
    snprintf(w, sizeof w, "%s, %s", link, t.root);
    assert_string_equal(joined, w);
    free(joined);
    snprintf(w, sizeof w, "%s/a.txt", t.root);
    snprintf(w2, sizeof w2, "%s/a.txt", link);
    expect_resolve(r, w2, w, NULL);
    mb_mcp_roots_free(r);
    char *dirs3[] = {missing};
    assert_int_equal(mb_mcp_roots_new(dirs3, 1, &r, &err), MB_EINVAL);
    assert_string_equal(err.msg, "None of the specified directories are accessible");

    mb_err e2;
    mb_rm_rf(t.base, &e2);
}

static void test_path_resolve(void **state)
{
    const char *cases[][3] = {
        {"/a/b", "c", "/a/b/c"},       {"/a/b", "../c", "/a/c"},   {"/a/b", "/x//y/", "/x/y"},
        {"/", "..", "/"},              {"/a", "./b/./c/..", "/a/b"}, {"/a/", "", "/a"},
        {"/a", "b/../../..", "/"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *r = mb_path_resolve(cases[i][0], cases[i][1]);
        assert_string_equal(r, cases[i][2]);
        free(r);
    }
    setenv("HOME", "/home/someone", 1);
    char *h = mb_path_expand_home("~/x/../y");
    assert_string_equal(h, "/home/someone/y");
    free(h);
    h = mb_path_expand_home("~user/x");
    assert_string_equal(h, "~user/x");
    free(h);
}

/* ------------------------------------------------------- runtime texts */

static void test_node_and_python_errors(void **state)
{
    char *s = mb_node_fs_error(ENOENT, "open", "/x y", NULL);
    assert_string_equal(s, "ENOENT: no such file or directory, open '/x y'");
    free(s);
    s = mb_node_fs_error(EISDIR, "read", NULL, NULL);
    assert_string_equal(s, "EISDIR: illegal operation on a directory, read");
    free(s);
    s = mb_node_fs_error(EXDEV, "rename", "/a", "/b");
    assert_string_equal(s, "EXDEV: cross-device link not permitted, rename '/a' -> '/b'");
    free(s);
    assert_string_equal(mb_node_errname(ENOTEMPTY), "ENOTEMPTY");
    assert_string_equal(mb_node_errdesc(ELOOP), "too many symbolic links encountered");
    assert_string_equal(mb_node_errname(9999), "UNKNOWN");
    s = mb_py_os_error(ENOENT, "x");
    assert_string_equal(s, "[Errno 2] No such file or directory: 'x'");
    free(s);
}

static void test_json_text(void **state)
{
    json_t *v = json_loads("{\"a\":[],\"b\":{},\"c\":[1,{\"d\":\"x/y\\u00e9\\n\\u0001\\\"\"}],\"e\":1.5,"
                           "\"f\":1e21,\"g\":0.1,\"h\":-0.000001,\"i\":1e-7,\"j\":true,\"k\":null,\"l\":100.0}", 0, NULL);
    assert_non_null(v);
    char *s = mb_js_stringify(v, 2);
    assert_string_equal(s, "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"x/y\xC3\xA9\\n\\u0001\\\"\"\n"
                           "    }\n  ],\n  \"e\": 1.5,\n  \"f\": 1e+21,\n  \"g\": 0.1,\n  \"h\": -0.000001,\n"
                           "  \"i\": 1e-7,\n  \"j\": true,\n  \"k\": null,\n  \"l\": 100\n}");
    free(s);
    s = mb_js_stringify(v, 0);
    assert_string_equal(s, "{\"a\":[],\"b\":{},\"c\":[1,{\"d\":\"x/y\xC3\xA9\\n\\u0001\\\"\"}],\"e\":1.5,\"f\":1e+21,"
                           "\"g\":0.1,\"h\":-0.000001,\"i\":1e-7,\"j\":true,\"k\":null,\"l\":100}");
    free(s);
    s = mb_py_json_dumps(v, -1, 1);
    assert_string_equal(s, "{\"a\": [], \"b\": {}, \"c\": [1, {\"d\": \"x/y\\u00e9\\n\\u0001\\\"\"}], \"e\": 1.5, "
                           "\"f\": 1e+21, \"g\": 0.1, \"h\": -1e-06, \"i\": 1e-07, \"j\": true, \"k\": null, \"l\": 100.0}");
    free(s);
    s = mb_py_json_dumps(json_object_get(v, "c"), 2, 0);
    assert_string_equal(s, "[\n  1,\n  {\n    \"d\": \"x/y\xC3\xA9\\n\\u0001\\\"\"\n  }\n]");
    free(s);
    json_decref(v);
    json_t *astral = json_string("\xF0\x9F\x98\x80");
    s = mb_py_json_dumps(astral, -1, 1);
    assert_string_equal(s, "\"\\ud83d\\ude00\"");
    free(s);
    json_decref(astral);
}

static void test_js_numbers_and_dates(void **state)
{
    struct {
        double d;
        const char *s;
    } nums[] = {{0, "0"}, {-0.0, "0"}, {1, "1"}, {0.1, "0.1"}, {1.5, "1.5"}, {123456789012, "123456789012"},
                {1e21, "1e+21"}, {1.5e-7, "1.5e-7"}, {0.000001, "0.000001"}, {-2.5, "-2.5"}, {1.0 / 3, "0.3333333333333333"},
                {4096, "4096"}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char *s = mb_js_number(nums[i].d);
        assert_string_equal(s, nums[i].s);
        free(s);
    }
    struct {
        double d;
        const char *s;
    } fixed[] = {{1.125, "1.13"}, {1.005, "1.00"}, {0, "0.00"}, {1023.999, "1024.00"}, {2.5, "2.50"},
                 {-1.125, "-1.13"}, {5.66015625, "5.66"}, {0.995, "0.99"}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        char *s = mb_js_to_fixed(fixed[i].d, 2);
        assert_string_equal(s, fixed[i].s);
        free(s);
    }
    setenv("TZ", "UTC", 1);
    tzset();
    char *s = mb_js_date_string(1700000000.9);
    assert_string_equal(s, "Tue Nov 14 2023 22:13:20 GMT+0000 (Coordinated Universal Time)");
    free(s);
    s = mb_js_date_string(0);
    assert_string_equal(s, "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)");
    free(s);
}

static void test_text_helpers(void **state)
{
    struct {
        const char *in;
        size_t n;
        const char *out;
    } cases[] = {
        {"plain", 5, "plain"},
        {"a\xff" "b", 3, "a\xEF\xBF\xBD" "b"},
        {"\xe2\x82", 2, "\xEF\xBF\xBD"},             /* truncated sequence: one replacement */
        {"\xe2\x82" "x", 3, "\xEF\xBF\xBD" "x"},
        {"\xc0\xaf", 2, "\xEF\xBF\xBD\xEF\xBF\xBD"}, /* overlong: each byte */
        {"\xed\xa0\x80", 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* surrogate */
        {"\xf0\x9f\x98\x80", 4, "\xF0\x9F\x98\x80"},
        {"", 0, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n;
        char *r = mb_utf8_repair(cases[i].in, cases[i].n, &n);
        assert_string_equal(r, cases[i].out);
        assert_int_equal(n, strlen(cases[i].out));
        assert_int_equal(mb_utf8_valid(cases[i].in, cases[i].n), !strcmp(cases[i].in, cases[i].out));
        free(r);
    }
    assert_int_equal(mb_utf16_len("a\xC3\xA9\xE2\x9C\x93\xF0\x9F\x98\x80", 10), 5);
    const char *ws = " \t\xC2\xA0x y\xE3\x80\x80\n";
    assert_int_equal(mb_js_space_prefix(ws, strlen(ws)), 4);
    assert_int_equal(mb_js_space_suffix(ws, strlen(ws)), 4);
    assert_int_equal(mb_js_space_prefix("   ", 3), 3);
    char *l = mb_js_lower("ÀÉÎ ÕÜ ΑΒΓ ДЖ İ ABC", strlen("ÀÉÎ ÕÜ ΑΒΓ ДЖ İ ABC"), NULL);
    assert_string_equal(l, "àéî õü αβγ дж i\xCC\x87 abc");
    free(l);
    char *d = mb_memdup0("a\0b", 3);
    assert_memory_equal(d, "a\0b\0", 4);
    free(d);
}

static void test_collation_order(void **state)
{
    size_t n = sizeof collation_order / sizeof collation_order[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int c = mb_js_locale_compare(collation_order[i], collation_order[j]);
            if (i < j && c >= 0) fail_msg("'%s' should sort before '%s'", collation_order[i], collation_order[j]);
            if (i > j && c <= 0) fail_msg("'%s' should sort after '%s'", collation_order[i], collation_order[j]);
            if (i == j) assert_int_equal(c, 0);
        }
}

static void test_minimatch_table(void **state)
{
    size_t np = sizeof mm_paths / sizeof mm_paths[0];
    for (size_t i = 0; i < sizeof mm_cases / sizeof mm_cases[0]; i++)
        for (size_t k = 0; k < np; k++) {
            int want_dot = mm_cases[i].dot[k] == '1', want = mm_cases[i].nodot[k] == '1';
            if (mb_minimatch(mm_paths[k], mm_cases[i].pattern, MB_GLOB_DOT) != want_dot)
                fail_msg("minimatch('%s', '%s', {dot:true}) should be %d", mm_paths[k], mm_cases[i].pattern, want_dot);
            if (mb_minimatch(mm_paths[k], mm_cases[i].pattern, 0) != want)
                fail_msg("minimatch('%s', '%s') should be %d", mm_paths[k], mm_cases[i].pattern, want);
        }
}

/* Found by fuzz/fuzz_text (fuzz/corpus/text/regress-glob-backtracking): nested
 * stars backtracked for minutes on a 17-byte name. A match that runs out of
 * its step budget is no match, and comes back at once. */
static void test_minimatch_backtracking_bounded(void **state)
{
    int64_t t0 = mb_mono_ms();
    assert_false(mb_minimatch("\\u007fline\\u\"056\"", "**(b\\tquote\\\"del", 0));
    char name[200];
    memset(name, 'a', sizeof name - 2);
    name[sizeof name - 2] = 'b';
    name[sizeof name - 1] = '\0';
    assert_false(mb_minimatch(name, "*(*(a|aa)*(a|aa))c", MB_GLOB_DOT));
    assert_true(mb_minimatch("aab", "*(a|aa)b", 0)); /* ordinary extglobs still match */
    assert_true(mb_mono_ms() - t0 < 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initialize_negotiation),
        cmocka_unit_test(test_initialize_hook_and_empty_lists),
        cmocka_unit_test(test_framing_and_errors),
        cmocka_unit_test(test_tools_list_shape),
        cmocka_unit_test(test_registry_errors),
        cmocka_unit_test(test_flavor_ts_mcpserver),
        cmocka_unit_test(test_other_flavors),
        cmocka_unit_test(test_validation_texts),
        cmocka_unit_test(test_serve_cancel_and_ping),
        cmocka_unit_test(test_serve_oversize_line),
        cmocka_unit_test(test_path_confinement),
        cmocka_unit_test(test_path_resolve),
        cmocka_unit_test(test_node_and_python_errors),
        cmocka_unit_test(test_json_text),
        cmocka_unit_test(test_js_numbers_and_dates),
        cmocka_unit_test(test_text_helpers),
        cmocka_unit_test(test_collation_order),
        cmocka_unit_test(test_minimatch_table),
        cmocka_unit_test(test_minimatch_backtracking_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
