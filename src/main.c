/*
 * main.c - the mcpbox binary: dispatches to subcommands (serve, keys, mcp, ...).
 */
#include "util/util.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mcpbox <command> [options]\n"
            "\n"
            "commands:\n"
            "  serve     run the sandbox service (REST API + MCP gateway)\n"
            "  keys      manage API keys (create, list, revoke)\n"
            "  mcp NAME  run a native MCP server on stdio\n"
            "  version   print the version\n");
}

int main(int argc, char **argv)
{
    mb_log_init();
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("mcpbox 0.1.0\n");
        return 0;
    }
    fprintf(stderr, "mcpbox: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
