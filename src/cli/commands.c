/*
 * commands.c - the table of `mcpbox` subcommands. Add a line here, and the
 * command's declaration to cli.h, when a layer grows a command.
 */
#include "cli/cli.h"

#include <stddef.h>

const mb_command mb_commands[] = {
    {NULL, NULL, NULL},
};
