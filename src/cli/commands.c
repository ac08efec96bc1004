/*
 * commands.c - the table of `mcpbox` subcommands. Add a line here, and the
 * command's declaration to cli.h, when a layer grows a command.
 */
#include "cli/cli.h"

#include <stddef.h>

const mb_command mb_commands[] = {
    {"serve", mb_cmd_serve, "run the sandbox service (REST API + MCP gateway)"},
    {"keys", mb_cmd_keys, "manage API keys (create, list, revoke)"},
    {"archive", mb_cmd_archive, "extract or create workspace archives (debugging, benchmarks)"},
    {"bridge", mb_cmd_bridge, "serve a stdio MCP server over Streamable HTTP (one process, many sessions)"},
    {"sandbox", mb_cmd_sandbox, "run a command in a throw-away sandbox (debugging, benchmarks)"},
    {"sandbox-zygote", mb_cmd_sandbox_zygote, "(internal) clones sandboxes, started by mcpbox itself"},
    {"mcp", mb_cmd_mcp, "run a native MCP server on stdio (mcpbox mcp --list)"},
    {"arxiv", mb_cmd_arxiv, "build or inspect the offline arXiv catalog of the arxiv server"},
    {"playwright", mb_cmd_playwright, "run @playwright/mcp (Node, Debian's Chromium) on stdio, as sandboxes do"},
    {"acquire", mb_cmd_acquire, "client: acquire a sandbox on a daemon (--url, MCPBOX_API_KEY)"},
    {"ls", mb_cmd_ls, "client: list your sandboxes"},
    {"get", mb_cmd_get, "client: show a sandbox and its servers"},
    {"rm", mb_cmd_rm, "client: release sandboxes"},
    {"reset", mb_cmd_reset, "client: reset a sandbox's /data and servers"},
    {"push", mb_cmd_push, "client: load a directory or .tar.gz into a sandbox's /data"},
    {"pull", mb_cmd_pull, "client: dump a sandbox's /data into a directory or .tar.gz"},
    {"tools", mb_cmd_tools, "client: list the tools of a sandbox's server"},
    {"call", mb_cmd_call, "client: call a tool of a sandbox's server"},
    {"logs", mb_cmd_logs, "client: show a sandbox's call log (-f to follow)"},
    {NULL, NULL, NULL},
};
