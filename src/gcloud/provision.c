/*
 * provision.c - a sandbox's project database as files: made empty (or from
 * the baseline of the last initialize) when the sandbox is seeded or reset,
 * and snapshotted after an initialize. Each step leaves either the old file
 * or the new one, never a half-written database.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mb_gcloud_project_id(const char *sandbox_id, char out[32])
{
    char hex[13];
    size_t n = 0;
    for (const char *p = sandbox_id; *p && n < 12; p++)
        if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')) hex[n++] = *p;
    hex[n] = '\0';
    snprintf(out, 32, "mcpbox-%s", hex);
}

int mb_gcloud_provision(const char *db_path, const char *baseline, const char *project_id,
                        unsigned uid, mb_err *err)
{
    char *tmp = mb_asprintf("%s.new", db_path);
    unlink(tmp);
    int rc = MB_OK;
    if (baseline && access(baseline, F_OK) == 0) {
        char *data = NULL;
        size_t len = 0;
        rc = mb_read_file(baseline, (size_t)1 << 34, &data, &len, err);
        if (!rc) rc = mb_write_file_atomic(tmp, data, len, 0644, err);
        free(data);
    } else {
        mb_gc *gc;
        rc = mb_gc_open(tmp, project_id, &gc, err);
        mb_gc_close(gc);
    }
    if (!rc && chown(tmp, uid, uid) != 0) rc = mb_err_sys(err, errno, "cannot chown %s", tmp);
    if (!rc && rename(tmp, db_path) != 0) rc = mb_err_sys(err, errno, "cannot replace %s", db_path);
    if (!rc) {
        char *j = mb_asprintf("%s-journal", db_path);
        unlink(j); /* a journal of the file just replaced must not be replayed into it */
        free(j);
    }
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

int mb_gcloud_snapshot(const char *db_path, const char *baseline, mb_err *err)
{
    mb_gc *gc;
    int rc = mb_gc_open(db_path, NULL, &gc, err);
    if (rc) return rc;
    char *tmp = mb_asprintf("%s.new", baseline);
    unlink(tmp);
    char *dir = mb_strdup(baseline);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        rc = mb_mkdir_p(dir, 0700, err);
    }
    free(dir);
    sqlite3_stmt *st;
    if (!rc) rc = mb_gc__prep(gc, "VACUUM INTO ?", &st, err);
    if (!rc) {
        sqlite3_bind_text(st, 1, tmp, -1, SQLITE_STATIC);
        rc = mb_gc__step_done(gc, st, err);
    }
    mb_gc_close(gc);
    if (!rc && rename(tmp, baseline) != 0) rc = mb_err_sys(err, errno, "cannot replace %s", baseline);
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}
