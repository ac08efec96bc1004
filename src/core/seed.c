/*
 * seed.c - preloading /data from a benchmark's --seed directory.
 */
#define _GNU_SOURCE
#include "core/core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mb_core__seed(mb_core *core, const mb_sandbox_rec *rec, mb_err *err)
{
    const char *seed = NULL;
    for (size_t i = 0; i < core->cfg.n_seeds; i++)
        if (!strcmp(core->cfg.seeds[i].preset, rec->benchmark)) seed = core->cfg.seeds[i].dir;
    if (!seed) return MB_OK;
    char *ws = mb_core_workspace(core, rec->id);
    int rc = mb_copy_tree(seed, ws, (uid_t)rec->uid_base, (gid_t)rec->uid_base, err);
    if (rc) mb_err_wrap(err, rc, "cannot preload /data from the %s seed %s", rec->benchmark, seed);
    free(ws);
    return rc;
}
