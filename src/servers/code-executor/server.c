/*
 * server.c - `mcpbox mcp code-executor`: picks the variant (--variant atlas |
 * toolathlon, default atlas) and hands the remaining options to it.
 */
#include <stdlib.h>
#include <string.h>

#include "servers/code-executor/codeexec.h"
#include "servers/servers.h"

int mb_srv_codeexec_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    const char *variant = "atlas";
    /* strip --variant X / --variant=X, keep the rest in order for the variant */
    char **rest = mb_calloc((size_t)argc + 1, sizeof(char *));
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--variant") && i + 1 < argc) {
            variant = argv[++i];
            continue;
        }
        if (i > 0 && !strncmp(argv[i], "--variant=", 10)) {
            variant = argv[i] + 10;
            continue;
        }
        rest[n++] = argv[i];
    }
    int rc;
    if (!strcmp(variant, "atlas")) rc = mb_codeexec_atlas_create(n, rest, out, err);
    else if (!strcmp(variant, "toolathlon")) rc = mb_codeexec_toolathlon_create(n, rest, out, err);
    else rc = mb_err_set(err, MB_EINVAL, "unknown --variant \"%s\" (use atlas or toolathlon)", variant);
    free(rest);
    return rc;
}
