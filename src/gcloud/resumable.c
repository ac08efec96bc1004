/*
 * resumable.c - Cloud Storage resumable uploads as the Google client
 * libraries drive them (google-resumable-media / python-storage's
 * Blob.upload_from_file with a chunk size, and large uploads): a POST with
 * uploadType=resumable opens a session whose URI the facade hands back in
 * Location; PUTs to it carry chunks with "Content-Range: bytes S-E/T"
 * (T = '*' while the size is unknown) and get 308 with "Range: bytes=0-N"
 * until the last one, which makes the object and gets its resource; a PUT
 * with "bytes STAR/T" and no body asks how far the session is (and finishes
 * it when all T bytes are there); DELETE cancels it. Sessions live in the
 * project database (__gcs_uploads), so they belong to one sandbox.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>


int mb_gc__upload_start(mb_gc *gc, const char *bucket, const char *name, const char *ctype,
                        long long total, char id[40], mb_err *err)
{
    json_t *b;
    int rc = mb_gc_gcs_bucket_get(gc, bucket, &b, err);
    if (rc) return rc;
    json_decref(b);
    if (!name || !*name || strlen(name) > 1024 || !mb_utf8_valid(name, strlen(name)))
        return mb_err_set(err, MB_EINVAL, "Object name is required (1 to 1024 bytes of UTF-8)");
    if (total > MB_GC_OBJECT_MAX)
        return mb_err_set(err, MB_ETOOBIG, "The upload is larger than this emulator takes (256 MiB)");
    unsigned char r[16];
    mb_random_bytes(r, sizeof r, NULL);
    mb_hex(r, sizeof r, id);
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "INSERT INTO __gcs_uploads(id, bucket, name, content_type, total, data, created) "
                              "VALUES(?,?,?,?,?,x'',?)", &st, err)))
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, bucket, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, ctype, -1, SQLITE_STATIC);
    if (total >= 0) sqlite3_bind_int64(st, 5, total);
    else sqlite3_bind_null(st, 5);
    sqlite3_bind_int64(st, 6, mb_gc_clock_ms(gc));
    return mb_gc__step_done(gc, st, err);
}

/* A decimal number of at most 18 digits at *p; -1 when there is none. */
static long long number(const char **p)
{
    const char *s = *p;
    long long v = 0;
    int n = 0;
    while (isdigit((unsigned char)*s) && n < 18) v = v * 10 + (*s++ - '0'), n++;
    if (!n || isdigit((unsigned char)*s)) return -1;
    *p = s;
    return v;
}

/* "bytes S-E/T", "bytes S-E/STAR", "bytes STAR/T", "bytes STAR/STAR" (STAR = a star):
 * *first = -1 for a status query, *total = -1 when unknown. */
static int parse_range(const char *h, long long *first, long long *last, long long *total)
{
    if (strncmp(h, "bytes ", 6)) return -1;
    const char *p = h + 6;
    if (*p == '*') {
        *first = *last = -1;
        p++;
    } else {
        if ((*first = number(&p)) < 0 || *p++ != '-' || (*last = number(&p)) < 0 || *last < *first) return -1;
    }
    if (*p++ != '/') return -1;
    if (*p == '*' && !p[1]) *total = -1;
    else if ((*total = number(&p)) < 0 || *p) return -1;
    return 0;
}

int mb_gc__upload_put(mb_gc *gc, const char *id, const char *range, const void *data, size_t len,
                      long long *have, json_t **meta, mb_err *err)
{
    *meta = NULL;
    *have = 0;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT bucket, name, content_type, total, data FROM __gcs_uploads WHERE id = ?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, id ? id : "", -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return mb_err_set(err, MB_ENOTFOUND, "No such upload session: %.64s", id ? id : "");
    }
    char *bucket = mb_strdup((const char *)sqlite3_column_text(st, 0));
    char *name = mb_strdup((const char *)sqlite3_column_text(st, 1));
    const char *ct = (const char *)sqlite3_column_text(st, 2);
    char *ctype = ct ? mb_strdup(ct) : NULL;
    long long total = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 3);
    mb_buf held = {0};
    mb_buf_append(&held, sqlite3_column_blob(st, 4) ? sqlite3_column_blob(st, 4) : "", (size_t)sqlite3_column_bytes(st, 4));
    sqlite3_finalize(st);
    long long first = 0, last = (long long)len - 1, t = (long long)len;
    if (range && parse_range(range, &first, &last, &t)) {
        rc = mb_err_set(err, MB_EINVAL, "Invalid Content-Range: %.80s", range);
    } else if (range && first < 0 && len) {
        rc = mb_err_set(err, MB_EINVAL, "A Content-Range of bytes */N takes no body");
    } else if (range && first >= 0 && (unsigned long long)(last - first + 1) != len) {
        rc = mb_err_set(err, MB_EINVAL, "Content-Range %.80s does not match the %zu bytes sent", range, len);
    } else if (first > (long long)held.len) {
        rc = mb_err_set(err, MB_EINVAL, "Content-Range starts at %lld, after the %zu bytes received", first, held.len);
    } else if (t >= 0 && total >= 0 && t != total) {
        rc = mb_err_set(err, MB_EINVAL, "The upload's size changed from %lld to %lld", total, t);
    } else if ((t >= 0 && t > MB_GC_OBJECT_MAX) || (long long)held.len + (long long)len > MB_GC_OBJECT_MAX) {
        rc = mb_err_set(err, MB_ETOOBIG, "The upload is larger than this emulator takes (256 MiB)");
    }
    if (!rc && first >= 0) { /* new bytes (a resent overlap is skipped) */
        size_t skip = (size_t)((long long)held.len - first);
        if (skip < len) mb_buf_append(&held, (const char *)data + skip, len - skip);
    }
    if (!rc && t >= 0) total = t;
    if (!rc && total >= 0 && (long long)held.len > total)
        rc = mb_err_set(err, MB_EINVAL, "More bytes were sent than the upload's size %lld", total);
    if (!rc && total >= 0 && (long long)held.len == total) { /* complete: the object */
        rc = mb_gc_gcs_object_put(gc, bucket, name, held.data ? held.data : "", held.len, ctype, err);
        if (!rc) rc = mb_gc_gcs_object_meta(gc, bucket, name, meta, err);
        if (!rc && !mb_gc__prep(gc, "DELETE FROM __gcs_uploads WHERE id = ?", &st, NULL)) {
            sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
            mb_gc__step_done(gc, st, NULL);
        }
    } else if (!rc) { /* more to come */
        if (!(rc = mb_gc__prep(gc, "UPDATE __gcs_uploads SET data = ?, total = ? WHERE id = ?", &st, err))) {
            sqlite3_bind_blob(st, 1, held.data ? held.data : "", (int)held.len, SQLITE_STATIC);
            if (total >= 0) sqlite3_bind_int64(st, 2, total);
            else sqlite3_bind_null(st, 2);
            sqlite3_bind_text(st, 3, id, -1, SQLITE_STATIC);
            rc = mb_gc__step_done(gc, st, err);
        }
    }
    *have = (long long)held.len;
    mb_buf_free(&held);
    free(bucket);
    free(name);
    free(ctype);
    return rc;
}

int mb_gc__upload_cancel(mb_gc *gc, const char *id, mb_err *err)
{
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "DELETE FROM __gcs_uploads WHERE id = ?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, id ? id : "", -1, SQLITE_STATIC);
    if ((rc = mb_gc__step_done(gc, st, err))) return rc;
    if (!sqlite3_changes(gc->db)) return mb_err_set(err, MB_ENOTFOUND, "No such upload session: %.64s", id ? id : "");
    return MB_OK;
}
