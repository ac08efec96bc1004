/*
 * leftovers.c - what a daemon killed mid-operation (kill -9, a crash, the
 * OOM killer) leaves of a sandbox's transfers, removed when the sandbox is
 * adopted at the next start and again at every reset:
 *
 *   DIR/workspaces/ID/.mcpbox-extract-*   the staging tree of an initialize
 *                                         (charged to the workspace quota,
 *                                         so later initializes would 507)
 *   DIR/blobs/ID/ *.part*                 an upload or a dump being written
 *
 * At adoption nothing of this daemon runs yet, so every such file is stale.
 * At reset the caller holds the sandbox's stripe lock, so no extraction is
 * running; an upload body may still be arriving (the HTTP layer writes it
 * without that lock), so a .part file is removed only when no descriptor of
 * this process has it open and it has not been written for PART_STALE_S
 * seconds (the gap between the body's last byte and its commit is far
 * shorter).
 */
#define _GNU_SOURCE
#include "archive/archive.h"
#include "core/core_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PART_STALE_S 60

/* Whether any descriptor of this process refers to `path`. */
static int open_here(const char *path)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 1; /* cannot tell: keep it */
    int found = 0;
    struct dirent *de;
    char link[300], target[4096];
    while (!found && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        snprintf(link, sizeof link, "/proc/self/fd/%s", de->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        found = !strcmp(target, path);
    }
    closedir(d);
    return found;
}

static unsigned clean_parts(const char *blobs, int at_start)
{
    DIR *d = opendir(blobs);
    if (!d) return 0;
    mb_buf names = {0};
    struct dirent *de;
    while ((de = readdir(d)))
        if (strstr(de->d_name, ".part")) mb_buf_append(&names, de->d_name, strlen(de->d_name) + 1);
    closedir(d);
    unsigned n = 0;
    time_t now = time(NULL);
    for (size_t off = 0; off < names.len; off += strlen(names.data + off) + 1) {
        char *path = mb_asprintf("%s/%s", blobs, names.data + off);
        struct stat st;
        int stale = lstat(path, &st) == 0 && S_ISREG(st.st_mode);
        if (stale && !at_start)
            stale = now - st.st_mtime >= PART_STALE_S && !open_here(path);
        if (stale && unlink(path) == 0) n++;
        free(path);
    }
    mb_buf_free(&names);
    return n;
}

void mb_core__clean_leftovers(mb_core *core, const char *id, int at_start)
{
    char *volume = mb_core__path_volume(core, id);
    unsigned stages = 0;
    mb_err err;
    if (mb_archive_stage_sweep(volume, &stages, &err) != MB_OK)
        mb_warn("sandbox %s: %s", id, err.msg);
    free(volume);
    char *blobs = mb_core__path_blob(core, id, NULL);
    unsigned parts = clean_parts(blobs, at_start);
    free(blobs);
    if (stages || parts)
        mb_info("sandbox %s: removed %u leftover staging director%s and %u partial transfer%s",
                id, stages, stages == 1 ? "y" : "ies", parts, parts == 1 ? "" : "s");
}
