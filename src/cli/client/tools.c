/*
 * tools.c - `mcpbox tools ID SERVER` and `mcpbox call ID SERVER TOOL JSON`:
 * a sandbox's MCP servers from a shell, through their MCP URLs (mcp.c).
 */
#include "cli/cli.h"
#include "cli/client/client.h"

#include <stdlib.h>
#include <string.h>

/* Opens an MCP session to SERVER of sandbox ID (operands at optind). */
static int open_server(mb_cl *cl, char **argv, char **id, mb_cl_mcp **m)
{
    const char *server = argv[optind + 1];
    if (!mb_cl_valid_name(server))
        return mb_cl_fail(cl, MB_CL_USAGE, "'%s' is not a server name", server);
    int rc = mb_cl_resolve_id(cl, argv[optind], id);
    char *url = NULL;
    if (!rc) rc = mb_cl_server_url(cl, *id, server, &url);
    if (!rc) rc = mb_cl_mcp_open(cl, url, m);
    free(url);
    return rc;
}

/* The first line of a description, at most max code points. */
static char *first_line(const char *s, size_t max)
{
    size_t n = strcspn(s, "\n"), i = 0, k = 0;
    while (i < n && k < max - 3) {
        mb_utf8_next(s, n, &i);
        k++;
    }
    if (i >= n) return mb_strndup(s, n);
    char *cut = mb_strndup(s, i);
    char *line = mb_asprintf("%s...", cut);
    free(cut);
    return line;
}

int mb_cmd_tools(int argc, char **argv)
{
    static const char usage[] = "usage: mcpbox tools ID SERVER [--json]\n"
                                "Lists the tools of one server of a sandbox (tools/list).\n";
    static const mb_cl_cmd cmd = {"tools", usage, NULL, NULL, NULL, 2, 2,
                                  "a sandbox id and a server name"};
    mb_cl cl;
    int rc = mb_cl_start(&cl, &cmd, argc, argv, NULL);
    if (rc >= 0) goto out;
    char *id = NULL;
    mb_cl_mcp *m = NULL;
    json_t *all = json_array();
    rc = open_server(&cl, argv, &id, &m);
    /* Every page, by nextCursor (bounded: a server that loops is cut off). */
    json_t *cursor = NULL;
    for (int page = 0; !rc && page < 1000; page++) {
        json_t *params = json_object();
        if (cursor) json_object_set(params, "cursor", cursor);
        json_t *res = NULL;
        rc = mb_cl_mcp_request(m, "tools/list", params, &res);
        json_decref(params);
        json_decref(cursor);
        cursor = NULL;
        if (rc) break;
        const json_t *tools = json_object_get(res, "tools");
        if (json_is_array(tools)) json_array_extend(all, (json_t *)tools);
        const json_t *next = json_object_get(res, "nextCursor");
        if (json_is_string(next) && json_string_length(next)) cursor = json_incref((json_t *)next);
        json_decref(res);
        if (!cursor) break;
    }
    json_decref(cursor);
    if (!rc && cl.json) {
        mb_cl_print_json(all);
    } else if (!rc) {
        mb_cl_table t = {0};
        const char *cols[] = {"TOOL", "DESCRIPTION"};
        mb_cl_table_row(&t, 2, cols);
        size_t i;
        const json_t *tool;
        json_array_foreach(all, i, tool) {
            char *d = first_line(mb_cl_str(tool, "description"), 90);
            const char *row[] = {mb_cl_str(tool, "name"), d};
            mb_cl_table_row(&t, 2, row);
            free(d);
        }
        mb_cl_table_print(&t, stdout);
    }
    json_decref(all);
    mb_cl_mcp_close(m);
    free(id);
out:
    mb_cl_free(&cl);
    return rc;
}

/* A tool result for a person: text contents as they are, others named. */
static void print_result(const json_t *res)
{
    const json_t *content = json_object_get(res, "content");
    size_t i;
    const json_t *c;
    int printed = 0;
    json_array_foreach(content, i, c) {
        const char *type = mb_cl_str(c, "type");
        char *s = NULL;
        if (!strcmp(type, "text")) {
            s = mb_strdup(mb_cl_str(c, "text"));
        } else if (!strcmp(type, "image") || !strcmp(type, "audio")) {
            s = mb_asprintf("[%s %s, %zu bytes of base64]", type, mb_cl_str(c, "mimeType"),
                            strlen(mb_cl_str(c, "data")));
        } else if (!strcmp(type, "resource_link") || !strcmp(type, "resource")) {
            const json_t *r = !strcmp(type, "resource") ? json_object_get(c, "resource") : c;
            const char *text = mb_cl_str(r, "text");
            s = *text ? mb_strdup(text)
                      : mb_asprintf("[%s %s]", type, mb_cl_str(r, "uri"));
        } else {
            s = mb_asprintf("[%s content]", *type ? type : "untyped");
        }
        char *clean = mb_cl_clean(s, 1);
        fputs(clean, stdout);
        if (!*clean || clean[strlen(clean) - 1] != '\n') fputc('\n', stdout);
        free(clean);
        free(s);
        printed = 1;
    }
    const json_t *sc = json_object_get(res, "structuredContent");
    if (!printed && sc) mb_cl_print_json(sc);
}

int mb_cmd_call(int argc, char **argv)
{
    static const char usage[] =
        "usage: mcpbox call ID SERVER TOOL ['{\"arg\": value, ...}'] [--json]\n"
        "Calls one tool (tools/call) and prints its result; exit status 7 when the tool\n"
        "reports an error (isError). The arguments are a JSON object; '-' reads it from stdin.\n";
    static const mb_cl_cmd cmd = {"call", usage, NULL, NULL, NULL, 3, 4,
                                  "a sandbox id, a server, a tool and optionally its JSON "
                                  "arguments"};
    mb_cl cl;
    int rc = mb_cl_start(&cl, &cmd, argc, argv, NULL);
    if (rc >= 0) goto out;
    int n = argc - optind;
    const char *tool = argv[optind + 2];
    json_t *args = NULL;
    json_error_t je;
    if (n == 3) args = json_object();
    else if (!strcmp(argv[optind + 3], "-")) args = json_loadf(stdin, 0, &je);
    else args = json_loads(argv[optind + 3], 0, &je);
    if (!json_is_object(args)) {
        rc = mb_cl_fail(&cl, MB_CL_USAGE, "the arguments must be a JSON object like "
                        "'{\"path\": \"/data\"}'%s%s", args ? "" : ": ", args ? "" : je.text);
        json_decref(args);
        goto out;
    }
    if (!*tool || strlen(tool) > 256 || !mb_utf8_valid(tool, strlen(tool))) {
        rc = mb_cl_fail(&cl, MB_CL_USAGE, "'%s' is not a tool name", tool);
        json_decref(args);
        goto out;
    }
    char *id = NULL;
    mb_cl_mcp *m = NULL;
    json_t *res = NULL;
    rc = open_server(&cl, argv, &id, &m);
    if (!rc) {
        json_t *params = json_pack("{s:s, s:O}", "name", tool, "arguments", args);
        rc = mb_cl_mcp_request(m, "tools/call", params, &res);
        json_decref(params);
    }
    if (!rc) {
        if (cl.json) mb_cl_print_json(res);
        else print_result(res);
        if (json_is_true(json_object_get(res, "isError"))) rc = MB_CL_TOOL_ERROR;
    }
    json_decref(res);
    json_decref(args);
    mb_cl_mcp_close(m);
    free(id);
out:
    mb_cl_free(&cl);
    return rc;
}
