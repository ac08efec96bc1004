/*
 * srvmain.c - the main of a server group's executable, build/mcpbox-GROUP
 * (the Makefile links it with servers.c compiled for GROUP and with only the
 * objects and libraries those servers reach; src/servers/servers.c).
 * `mcpbox-GROUP mcp NAME [options]` runs the group's server NAME exactly as
 * `mcpbox mcp NAME` does; sandboxes run their native servers this way
 * (core/gwhooks.c maps `/.mcpbox/mcpbox mcp NAME` to it), so a server process
 * loads a handful of libraries instead of the daemon's fifty.
 */
#include "cli/cli.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

#ifndef MB_SERVER_GROUP
#error "srvmain.c is compiled for one server group (-DMB_SERVER_GROUP=NAME)"
#endif
#define MB__STR(x) #x
#define MB__XSTR(x) MB__STR(x)

int main(int argc, char **argv)
{
    mb_log_init();
    if (argc >= 2 && !strcmp(argv[1], "mcp")) return mb_cmd_mcp(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version"))) {
        printf("mcpbox-" MB__XSTR(MB_SERVER_GROUP) " 0.1.0\n");
        return 0;
    }
    int help = argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"));
    fprintf(help ? stdout : stderr,
            "usage: mcpbox-" MB__XSTR(MB_SERVER_GROUP) " mcp NAME [options]\n"
            "  runs one native MCP server of the '" MB__XSTR(MB_SERVER_GROUP) "' group on stdio,\n"
            "  as `mcpbox mcp NAME` does (`mcp --list` lists the group's servers)\n");
    return help ? 0 : 2;
}
