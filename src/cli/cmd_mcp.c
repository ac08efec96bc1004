/*
 * cmd_mcp.c - `mcpbox mcp NAME [options]`: runs one native MCP server on
 * stdin/stdout until stdin closes. `mcpbox mcp --list` lists the servers.
 *
 * Server-specific options are parsed by the server's constructor (see
 * src/servers/servers.h); stdout carries only protocol messages, so every
 * diagnostic goes to stderr.
 */
#include "cli/cli.h"
#include "mcp/mcp.h"
#include "servers/servers.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: mcpbox mcp NAME [options]   (run a native MCP server on stdio)\n"
               "       mcpbox mcp NAME --help       (the server's options)\n"
               "       mcpbox mcp --list\n\nservers:\n");
    for (const mb_server_entry *e = mb_servers; e->name; e++)
        fprintf(f, "  %-22s %s\n", e->name, e->summary);
}

int mb_cmd_mcp(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--list")) {
        for (const mb_server_entry *e = mb_servers; e->name; e++) printf("%s\n", e->name);
        return 0;
    }
    const mb_server_entry *e = mb_server_find(argv[1]);
    if (!e) {
        fprintf(stderr, "mcpbox mcp: unknown server '%s'\n\n", argv[1]);
        usage(stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: %s", e->usage);
            return 0;
        }
    /* Not dumpable: no other process of the sandbox may open this one's
     * /proc/PID/mem, fd/ or environ (issue 12). In a sandbox the kernel
     * already made the exec so (the binary there is exec-only, see
     * src/sandbox/execbin.c); this covers every other way of running it. */
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    mb_mcp_server *srv = NULL;
    mb_err err = {0};
    int rc = e->create(argc - 1, argv + 1, &srv, &err);
    if (rc) {
        fprintf(stderr, "mcpbox mcp %s: %s\n", e->name, err.msg);
        if (rc == MB_EINVAL) fprintf(stderr, "usage: %s", e->usage);
        return rc == MB_EINVAL ? 2 : 1;
    }
    signal(SIGPIPE, SIG_IGN);
    rc = mb_mcp_serve(srv, STDIN_FILENO, STDOUT_FILENO, &err);
    mb_mcp_server_free(srv);
    return rc ? 1 : 0;
}
