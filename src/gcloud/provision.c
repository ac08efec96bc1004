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
    /* The bytes are made away from the state directory (the sandbox writes
     * there): the baseline, or an empty project serialized from memory;
     * then written by mb_write_file_atomic (O_EXCL|O_NOFOLLOW temp, rename)
     * and owned by the sandbox's root without following a link. */
    char *data = NULL;
    size_t len = 0;
    int rc = MB_OK;
    if (baseline && access(baseline, F_OK) == 0) {
        rc = mb_read_file(baseline, (size_t)1 << 34, &data, &len, err);
    } else {
        mb_gc *gc;
        rc = mb_gc_open(":memory:", project_id, &gc, err);
        if (!rc) {
            sqlite3_int64 n = 0;
            unsigned char *bytes = sqlite3_serialize(gc->db, "main", &n, 0);
            if (!bytes) rc = mb_err_set(err, MB_EIO, "cannot serialize the new project");
            else {
                len = (size_t)n;
                data = mb_malloc(len + 1);
                memcpy(data, bytes, len);
                sqlite3_free(bytes);
            }
            mb_gc_close(gc);
        }
    }
    if (!rc) rc = mb_write_file_atomic(db_path, data, len, 0644, err);
    if (!rc && lchown(db_path, uid, uid) != 0) rc = mb_err_sys(err, errno, "cannot chown %s", db_path);
    if (!rc) {
        char *j = mb_asprintf("%s-journal", db_path);
        unlink(j); /* a journal of the file just replaced must not be replayed into it */
        free(j);
    }
    free(data);
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
