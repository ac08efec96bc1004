/*
 * reset.c - the sandbox half of a reset: with the servers stopped, kill
 * what else runs inside, restore /data to the seed plus the last initialized
 * archive, and start the servers again (transfer.c takes the lock and
 * updates the record).
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

typedef struct reset_ctx {
    mb_core *core;
    const mb_sandbox_rec *rec;
    mb_live *live;
    int ran;
} reset_ctx;

/* With every server stopped: kill what else runs inside, then /data back to
 * the seed plus the last initialized archive. */
static int reset_between(void *ctx, mb_err *err)
{
    reset_ctx *r = ctx;
    r->ran = 1;
    int rc = mb_sandbox_reset(r->live->sb, err);
    mb_core__clean_leftovers(r->core, r->rec->id, 0);
    char *ws = mb_core_workspace(r->core, r->rec->id);
    if (!rc) {
        int fd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) rc = mb_err_sys(err, errno, "cannot open the workspace");
        else {
            rc = mb_empty_dir_at(fd, err);
            close(fd);
        }
    }
    if (!rc) rc = mb_core__seed(r->core, r->rec, err);
    char *baseline = mb_core__path_blob(r->core, r->rec->id, "baseline.tar.gz");
    if (!rc && access(baseline, F_OK) == 0) rc = mb_core__extract(r->core, r->rec, baseline, err);
    free(baseline);
    free(ws);
    return rc;
}

int mb_core__sandbox_reset(mb_core *core, const mb_sandbox_rec *rec, mb_err *err)
{
    mb_live *l = mb_core__live_get(core, rec->id);
    if (!l)
        return mb_err_set(err, MB_ECONFLICT,
                          "sandbox %s is not running (%s); release it and acquire a new one",
                          rec->id, rec->error[0] ? rec->error : "it failed");
    reset_ctx r = {core, rec, l, 0};
    int rc = mb_gateway_restart_sandbox(core->gw, rec->id, reset_between, &r, err);
    if (rc == MB_ENOTFOUND && !r.ran) rc = reset_between(&r, err); /* no servers */
    mb_core__live_put(core, l);
    return rc;
}
