/*
 * storage.c - Cloud Storage in the project database: buckets (location,
 * storage class, versioning flag, lifecycle rules and labels kept as data)
 * and objects (bytes, content type, MD5 and CRC32C as base64, generation).
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>


static void b64(const unsigned char *p, size_t n, char *out)
{
    EVP_EncodeBlock((unsigned char *)out, p, (int)n);
}

static uint32_t crc32c(const unsigned char *p, size_t n)
{
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static int check_bucket_name(const char *name, mb_err *err)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 3 || n > 63)
        return mb_err_set(err, MB_EINVAL, "Invalid bucket name: '%.*s'", (int)mb_utf8_cut(name ? name : "", n, 100),
                          name ? name : "");
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            return mb_err_set(err, MB_EINVAL, "Invalid bucket name: '%.*s'", (int)mb_utf8_cut(name, n, 100), name);
    }
    char f = name[0], l = name[n - 1];
    if (!((f >= 'a' && f <= 'z') || (f >= '0' && f <= '9')) || !((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')))
        return mb_err_set(err, MB_EINVAL, "Invalid bucket name: '%s'", name);
    return MB_OK;
}

int mb_gc_gcs_bucket_create(mb_gc *gc, const char *name, const char *location,
                            const char *storage_class, mb_err *err)
{
    int rc = check_bucket_name(name, err);
    if (rc) return rc;
    json_t *have;
    if (!mb_gc_gcs_bucket_get(gc, name, &have, NULL)) {
        json_decref(have);
        return mb_err_set(err, MB_ECONFLICT,
                          "Your previous request to create the named bucket succeeded and you "
                          "already own it.");
    }
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "INSERT INTO __gcs_buckets VALUES(?,?,?,0,'[]','{}',?,?)", &st, err)))
        return rc;
    char loc[64];
    snprintf(loc, sizeof loc, "%s", location && *location ? location : "US");
    for (char *c = loc; *c; c++) *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
    int64_t now = mb_gc_clock_ms(gc);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, loc, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, storage_class && *storage_class ? storage_class : "STANDARD", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, now);
    sqlite3_bind_int64(st, 5, now);
    return mb_gc__step_done(gc, st, err);
}

static json_t *bucket_row(sqlite3_stmt *st)
{
    json_t *lc = json_loads((const char *)sqlite3_column_text(st, 4), 0, NULL);
    json_t *lb = json_loads((const char *)sqlite3_column_text(st, 5), 0, NULL);
    return json_pack("{s:s,s:s,s:s,s:b,s:o,s:o,s:I,s:I}", "name", sqlite3_column_text(st, 0),
                     "location", sqlite3_column_text(st, 1), "storage_class",
                     sqlite3_column_text(st, 2), "versioning", sqlite3_column_int(st, 3),
                     "lifecycle", lc ? lc : json_array(), "labels", lb ? lb : json_object(),
                     "created", (json_int_t)sqlite3_column_int64(st, 6), "updated",
                     (json_int_t)sqlite3_column_int64(st, 7));
}

int mb_gc_gcs_bucket_get(mb_gc *gc, const char *name, json_t **out, mb_err *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT * FROM __gcs_buckets WHERE name=?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) *out = bucket_row(st);
    sqlite3_finalize(st);
    if (!*out) return mb_err_set(err, MB_ENOTFOUND, "The specified bucket does not exist.");
    return MB_OK;
}

json_t *mb_gc_gcs_bucket_list(mb_gc *gc)
{
    json_t *arr = json_array();
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "SELECT * FROM __gcs_buckets ORDER BY name", &st, NULL)) return arr;
    while (sqlite3_step(st) == SQLITE_ROW) json_array_append_new(arr, bucket_row(st));
    sqlite3_finalize(st);
    return arr;
}

int mb_gc_gcs_bucket_delete(mb_gc *gc, const char *name, int force, mb_err *err)
{
    json_t *b;
    int rc = mb_gc_gcs_bucket_get(gc, name, &b, err);
    if (rc) return rc;
    json_decref(b);
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "SELECT count(*) FROM __gcs_objects WHERE bucket=?", &st, err))) return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    long long n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (n && !force) return mb_err_set(err, MB_ECONFLICT, "The bucket you tried to delete is not empty.");
    if ((rc = mb_gc__prep(gc, "DELETE FROM __gcs_objects WHERE bucket=?", &st, err))) return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if ((rc = mb_gc__step_done(gc, st, err))) return rc;
    if ((rc = mb_gc__prep(gc, "DELETE FROM __gcs_buckets WHERE name=?", &st, err))) return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    return mb_gc__step_done(gc, st, err);
}

int mb_gc_gcs_bucket_set(mb_gc *gc, const char *name, const char *key, json_t *value,
                         mb_err *err)
{
    json_t *b;
    int rc = mb_gc_gcs_bucket_get(gc, name, &b, err);
    if (rc) return rc;
    json_decref(b);
    const char *col = !strcmp(key, "versioning") ? "versioning" : !strcmp(key, "lifecycle") ? "lifecycle"
                      : !strcmp(key, "labels") ? "labels" : !strcmp(key, "storage_class") ? "storage_class" : NULL;
    if (!col) return mb_err_set(err, MB_EINVAL, "unknown bucket property %s", key);
    char *q = mb_asprintf("UPDATE __gcs_buckets SET %s=?, updated=? WHERE name=?", col);
    sqlite3_stmt *st;
    rc = mb_gc__prep(gc, q, &st, err);
    free(q);
    if (rc) return rc;
    if (!strcmp(col, "versioning")) sqlite3_bind_int(st, 1, json_is_true(value));
    else if (json_is_string(value)) sqlite3_bind_text(st, 1, json_string_value(value), -1, SQLITE_STATIC);
    else sqlite3_bind_text(st, 1, json_dumps(value, JSON_COMPACT), -1, free);
    sqlite3_bind_int64(st, 2, mb_gc_clock_ms(gc));
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    return mb_gc__step_done(gc, st, err);
}

int mb_gc_gcs_object_put(mb_gc *gc, const char *bucket, const char *name, const void *data,
                         size_t len, const char *content_type, mb_err *err)
{
    json_t *b;
    int rc = mb_gc_gcs_bucket_get(gc, bucket, &b, err);
    if (rc) return rc;
    json_decref(b);
    size_t nl = name ? strlen(name) : 0;
    if (!nl || nl > 1024 || !mb_utf8_valid(name, nl) || strchr(name, '\n') || strchr(name, '\r'))
        return mb_err_set(err, MB_EINVAL, "Invalid object name");
    unsigned char md[16];
    unsigned int mdl = 0;
    EVP_Digest(data, len, md, &mdl, EVP_md5(), NULL);
    char md5[32], crc[16];
    b64(md, 16, md5);
    uint32_t c = crc32c(data, len);
    unsigned char cb[4] = {(unsigned char)(c >> 24), (unsigned char)(c >> 16), (unsigned char)(c >> 8),
                           (unsigned char)c};
    b64(cb, 4, crc);
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "INSERT INTO __gcs_objects VALUES(?1,?2,?3,?4,?5,?6,?7,?8,"
                              "coalesce((SELECT created FROM __gcs_objects WHERE bucket=?1 AND name=?2), ?9), ?9) "
                              "ON CONFLICT(bucket, name) DO UPDATE SET data=excluded.data, "
                              "content_type=excluded.content_type, size=excluded.size, md5=excluded.md5, "
                              "crc32c=excluded.crc32c, generation=excluded.generation, updated=excluded.updated",
                          &st, err)))
        return rc;
    int64_t now = mb_gc_clock_ms(gc);
    sqlite3_bind_text(st, 1, bucket, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_blob64(st, 3, len ? data : "", len, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, content_type && *content_type ? content_type : "application/octet-stream", -1,
                      SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)len);
    sqlite3_bind_text(st, 6, md5, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, crc, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, now * 1000);
    sqlite3_bind_int64(st, 9, now);
    return mb_gc__step_done(gc, st, err);
}

static json_t *object_row(sqlite3_stmt *st)
{
    return json_pack("{s:s,s:s,s:I,s:s,s:s,s:s,s:I,s:I,s:I}", "bucket", sqlite3_column_text(st, 0),
                     "name", sqlite3_column_text(st, 1), "size",
                     (json_int_t)sqlite3_column_int64(st, 2), "content_type",
                     sqlite3_column_text(st, 3), "md5", sqlite3_column_text(st, 4), "crc32c",
                     sqlite3_column_text(st, 5), "generation",
                     (json_int_t)sqlite3_column_int64(st, 6), "created",
                     (json_int_t)sqlite3_column_int64(st, 7), "updated",
                     (json_int_t)sqlite3_column_int64(st, 8));
}

#define OBJ_COLS "bucket, name, size, content_type, md5, crc32c, generation, created, updated"

int mb_gc_gcs_object_meta(mb_gc *gc, const char *bucket, const char *name, json_t **out,
                          mb_err *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT " OBJ_COLS " FROM __gcs_objects WHERE bucket=? AND name=?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, bucket, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) *out = object_row(st);
    sqlite3_finalize(st);
    if (!*out) return mb_err_set(err, MB_ENOTFOUND, "No such object: %s/%s", bucket, name);
    return MB_OK;
}

int mb_gc_gcs_object_get(mb_gc *gc, const char *bucket, const char *name, char **data,
                         size_t *len, json_t **meta, mb_err *err)
{
    *data = NULL;
    *len = 0;
    if (meta) *meta = NULL;
    json_t *b;
    int rc = mb_gc_gcs_bucket_get(gc, bucket, &b, err);
    if (rc) return rc;
    json_decref(b);
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "SELECT data FROM __gcs_objects WHERE bucket=? AND name=?", &st, err))) return rc;
    sqlite3_bind_text(st, 1, bucket, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        *len = (size_t)sqlite3_column_bytes(st, 0);
        *data = mb_malloc(*len + 1);
        if (*len) memcpy(*data, sqlite3_column_blob(st, 0), *len);
        (*data)[*len] = '\0';
    }
    sqlite3_finalize(st);
    if (!*data) return mb_err_set(err, MB_ENOTFOUND, "No such object: %s/%s", bucket, name);
    if (meta) return mb_gc_gcs_object_meta(gc, bucket, name, meta, err);
    return MB_OK;
}

int mb_gc_gcs_object_list(mb_gc *gc, const char *bucket, const char *prefix,
                          const char *delimiter, json_t **items, json_t **prefixes, mb_err *err)
{
    *items = NULL;
    if (prefixes) *prefixes = NULL;
    json_t *b;
    int rc = mb_gc_gcs_bucket_get(gc, bucket, &b, err);
    if (rc) return rc;
    json_decref(b);
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "SELECT " OBJ_COLS " FROM __gcs_objects WHERE bucket=? AND "
                              "substr(name, 1, length(?2)) = ?2 ORDER BY name", &st, err)))
        return rc;
    const char *pre = prefix ? prefix : "";
    sqlite3_bind_text(st, 1, bucket, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, pre, -1, SQLITE_STATIC);
    *items = json_array();
    json_t *pf = json_array();
    size_t pl = strlen(pre);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *d = delimiter && *delimiter ? strstr(name + pl, delimiter) : NULL;
        if (d) {
            json_t *p = json_stringn(name, (size_t)(d - name) + strlen(delimiter));
            size_t n = json_array_size(pf);
            if (!n || !json_equal(json_array_get(pf, n - 1), p)) json_array_append(pf, p);
            json_decref(p);
            continue;
        }
        json_array_append_new(*items, object_row(st));
    }
    sqlite3_finalize(st);
    if (prefixes) *prefixes = pf;
    else json_decref(pf);
    return MB_OK;
}

int mb_gc_gcs_object_delete(mb_gc *gc, const char *bucket, const char *name, mb_err *err)
{
    json_t *m;
    int rc = mb_gc_gcs_object_meta(gc, bucket, name, &m, err);
    if (rc) return rc;
    json_decref(m);
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "DELETE FROM __gcs_objects WHERE bucket=? AND name=?", &st, err))) return rc;
    sqlite3_bind_text(st, 1, bucket, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    return mb_gc__step_done(gc, st, err);
}
