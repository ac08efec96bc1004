/*
 * server.c - the `git` MCP server: mcp-server-git's tool set for the chosen
 * upstream version (see git.h), served with the Python SDK's conventions:
 * arguments checked with jsonschema texts ("Input validation error: ..."),
 * exceptions answered as isError results carrying str(exception).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mcp/mcp.h"
#include "servers/common/pyschema.h"
#include "servers/git/git.h"
#include "servers/servers.h"
#include "servers/terminal/terminal.h"

typedef struct git_server {
    mb_git_server g;
    mb_mcp_tool tools[16];
    json_t *schemas[16];
    size_t ntools;
} git_server;

static void git_free(void *p)
{
    git_server *s = p;
    if (!s) return;
    mb_term_strv_free(s->g.roots);
    mb_term_strv_free(s->g.root_args);
    for (size_t i = 0; i < s->ntools; i++) json_decref(s->schemas[i]);
    free(s);
}

static int handle(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    git_server *s = mb_mcp_call_data(call);
    const char *name = mb_mcp_call_tool(call);
    json_t *empty = args ? NULL : json_object();
    if (!args) args = empty;
    int rc = 0;
    mb_buf text = {0};
    mb_buf_puts(&text, "");
    for (size_t i = 0; i < s->ntools; i++) {
        if (strcmp(s->tools[i].name, name)) continue;
        mb_buf msg = {0};
        mb_buf_puts(&msg, "");
        if (mb_pyschema_check(s->schemas[i], args, &msg)) {
            rc = mb_mcp_fail(res, "Input validation error: %s", msg.data);
            mb_buf_free(&msg);
            goto out;
        }
        mb_buf_free(&msg);
    }
    if (mb_git_call(&s->g, name, args, &text)) rc = mb_mcp_fail_str(res, text.data);
    else mb_mcp_text_n(res, text.data, text.len);
out:
    mb_buf_free(&text);
    json_decref(empty);
    return rc;
}

static const mb_mcp_info GIT_INFO = {
    .name = "mcp-git",
    /* the low-level Python Server reports the mcp SDK's version */
    .version = "1.12.4",
    .flavor = MB_MCP_PY_SERVER,
    .capabilities = "{\"experimental\": {}, \"tools\": {\"listChanged\": false}}",
    .unknown_tool = handle,
};

/* 2025.1.14 as Toolathlon runs it: `uv run -m mcp_server_git` in its project
 * environment, whose uv.lock pins mcp 1.9.0 (newest protocol 2025-03-26). */
static const mb_mcp_info GIT_INFO_2025_1_14 = {
    .name = "mcp-git",
    .version = "1.9.0",
    .flavor = MB_MCP_PY_SERVER,
    .capabilities = "{\"experimental\": {}, \"tools\": {\"listChanged\": false}}",
    .unknown_tool = handle,
    .max_protocol = "2025-03-26",
};

int mb_srv_git_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"upstream-version", required_argument, 0, 'v'},
        {"repository", required_argument, 0, 'r'},
        {"allowed-root", required_argument, 0, 'r'},
        {"timeout", required_argument, 0, 't'},
        {0, 0, 0, 0},
    };
    *out = NULL;
    git_server *s = mb_calloc(1, sizeof *s);
    s->g.version = MB_GIT_2025_7_1;
    size_t nroots = 0;
    s->g.roots = mb_calloc((size_t)argc + 2, sizeof(char *));
    s->g.root_args = mb_calloc((size_t)argc + 2, sizeof(char *));
    optind = 1;
    opterr = 0;
    int c, rc = MB_OK;
    while ((c = getopt_long(argc, argv, "r:", opts, NULL)) != -1) {
        switch (c) {
        case 'v':
            if (mb_git_version_parse(optarg, &s->g.version) != MB_OK) {
                rc = mb_err_set(err, MB_EINVAL,
                                "unknown --upstream-version \"%s\" (use 2025.1.14 or 2025.7.1)",
                                optarg);
                goto fail;
            }
            break;
        case 'r': {
            struct stat st;
            if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode)) {
                rc = mb_err_set(err, MB_EIO, "--repository %s: not an existing directory", optarg);
                goto fail;
            }
            char *abs = optarg[0] == '/' ? mb_strdup(optarg) : mb_path_resolve(NULL, optarg);
            s->g.roots[nroots] = mb_term_realpath(abs);
            s->g.root_args[nroots++] = mb_strdup(optarg);
            free(abs);
            break;
        }
        case 't': s->g.call_timeout_ms = atoi(optarg) * 1000; break;
        default:
            rc = mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
            goto fail;
        }
    }
    if (optind < argc) {
        rc = mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\"", argv[optind]);
        goto fail;
    }
    if (!nroots) {
        struct stat st;
        if (stat("/data", &st) == 0 && S_ISDIR(st.st_mode)) {
            s->g.roots[0] = mb_term_realpath("/data");
            s->g.root_args[0] = mb_strdup("/data");
        } else {
            rc = mb_err_set(err, MB_EIO,
                            "no allowed root: /data does not exist; pass --repository DIR");
            goto fail;
        }
    }
    size_t n;
    const mb_git_tool *tools = mb_git_tools(s->g.version, &n);
    for (size_t i = 0; i < n; i++) {
        s->tools[i] = (mb_mcp_tool){.name = tools[i].name,
                                    .description = tools[i].description,
                                    .input_schema = tools[i].schema,
                                    .fn = handle};
        s->schemas[i] = json_loads(tools[i].schema, 0, NULL);
    }
    s->ntools = n;
    const mb_mcp_info *info = s->g.version == MB_GIT_2025_1_14 ? &GIT_INFO_2025_1_14 : &GIT_INFO;
    return mb_mcp_server_new_with_tools(info, s->tools, s, git_free, out, err);
fail:
    git_free(s);
    return rc;
}
