/*
 * zygmain.c - build/mcpbox-zygote, the executable the daemon starts its
 * sandbox zygote from (`mcpbox-zygote sandbox-zygote --fd FD`, as
 * `mcpbox sandbox-zygote` does). Every sandbox's init is a clone of the
 * zygote and every process started in a sandbox a fork of that init (its
 * shepherd) and of the shepherd (the command, until its exec), so the
 * zygote's image is copied three times per server start: linked from the
 * sandbox layer alone (libc, libseccomp, libcap) and bound at load
 * (-z now), it is a small fraction of the daemon's fifty libraries, and a
 * fork of it copies and faults in that much less (docs/PERFORMANCE.md).
 */
#include "cli/cli.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    mb_log_init();
    if (argc >= 2 && !strcmp(argv[1], "sandbox-zygote"))
        return mb_cmd_sandbox_zygote(argc - 1, argv + 1);
    fprintf(stderr, "mcpbox-zygote: this helper clones sandboxes for mcpbox and is started by "
                    "mcpbox itself\n");
    return 2;
}
