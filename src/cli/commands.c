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
    {NULL, NULL, NULL},
};
