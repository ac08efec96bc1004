/*
 * storage.c - the storage_* tools of google-cloud-mcp over the project's
 * Cloud Storage (src/gcloud/storage.c), with upstream's texts. Local paths
 * (upload source, download destination) are the sandbox's own files.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/common/pyschema.h"
#include "servers/google_cloud/gc_srv.h"

#define GCS "https://storage.googleapis.com/storage/v1/b"

static int denied(mb_mcp_result *res, const char *bucket)
{
    return gc_textf(res, "Access denied: Bucket '%s' is not in allowed buckets list", bucket);
}

/* "Error ...: 404 GET https://...: msg" for a failed storage call. */
static int api_fail(mb_mcp_result *res, const char *prefix, const mb_err *e, const char *method,
                    const char *url)
{
    char *m = gc_api_error(gc_http_code(e->code), method, url, e->msg);
    gc_textf(res, "%s: %s", prefix, m);
    free(m);
    return 0;
}

int gc_t_storage_list_buckets(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)a;
    mb_gc *gc = gc_open(call, res, "Error listing Cloud Storage buckets");
    if (!gc) return 0;
    json_t *l = mb_gc_gcs_bucket_list(gc);
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t i, n = 0;
    json_t *x;
    json_array_foreach(l, i, x) {
        const char *name = json_string_value(json_object_get(x, "name"));
        if (!gc_allowed(call, GC_ACL_BUCKETS, name)) continue;
        mb_buf_printf(&b, "%s- %s: %s", n++ ? "\n" : "", name, json_string_value(json_object_get(x, "location")));
    }
    gc_textf(res, "Found %zu buckets:\n%s", n, b.data);
    mb_buf_free(&b);
    json_decref(l);
    mb_gc_close(gc);
    return 0;
}

int gc_t_storage_create_bucket(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *name = gc_arg(a, "bucket_name"), *loc = gc_arg(a, "location");
    if (!gc_allowed(call, GC_ACL_BUCKETS, name)) return denied(res, name);
    mb_gc *gc = gc_open(call, res, "Error creating Cloud Storage bucket");
    if (!gc) return 0;
    mb_err e = {0};
    if (mb_gc_gcs_bucket_create(gc, name, loc, NULL, &e)) {
        gc_api_fail(res, "Error creating Cloud Storage bucket", gc_http_code(e.code), "POST", e.msg, GCS "?project=%s&prettyPrint=false", mb_gc_project(gc));
    } else {
        gc_textf(res, "Successfully created bucket '%s' in location '%s'", name, loc);
    }
    mb_gc_close(gc);
    return 0;
}

int gc_t_storage_list_objects(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *bucket = gc_arg(a, "bucket_name"), *prefix = gc_arg(a, "prefix");
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket)) return denied(res, bucket);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error listing objects in bucket '%s'", bucket);
    if (gc) {
        json_t *items;
        mb_err e = {0};
        if (mb_gc_gcs_object_list(gc, bucket, prefix, NULL, &items, NULL, &e)) {
            gc_api_fail(res, pre, gc_http_code(e.code), "GET", e.msg, GCS "/%s/o?projection=noAcl&prettyPrint=false", bucket);
        } else {
            mb_buf b = {0};
            mb_buf_puts(&b, "");
            size_t n = json_array_size(items);
            for (size_t i = 0; i < n && i < 20; i++) {
                json_t *o = json_array_get(items, i);
                mb_buf_printf(&b, "%s- %s: %lld bytes", i ? "\n" : "", json_string_value(json_object_get(o, "name")),
                              (long long)json_integer_value(json_object_get(o, "size")));
            }
            gc_textf(res, "Found %zu objects in bucket '%s':\n%s%s", n, bucket, b.data, n > 20 ? "..." : "");
            mb_buf_free(&b);
            json_decref(items);
        }
    }
    return gc_end(gc, pre);
}

/* Content type guessed from the name as Python's mimetypes would, for the common types. */
static const char *guess_type(const char *name)
{
    static const struct { const char *ext, *type; } T[] = {
        {".csv", "text/csv"}, {".txt", "text/plain"}, {".json", "application/json"},
        {".html", "text/html"}, {".pdf", "application/pdf"}, {".png", "image/png"},
        {".jpg", "image/jpeg"}, {".jpeg", "image/jpeg"}, {".gz", "application/gzip"},
        {".zip", "application/zip"}, {".xml", "application/xml"}, {".md", "text/markdown"},
    };
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof T / sizeof *T; i++)
        if (!strcasecmp(dot, T[i].ext)) return T[i].type;
    return "application/octet-stream";
}

int gc_t_storage_upload_file(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *bucket = gc_arg(a, "bucket_name"), *src = gc_arg(a, "source_file_path");
    const char *dest = gc_arg(a, "destination_blob_name");
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket)) return denied(res, bucket);
    char *pre = mb_asprintf("Error uploading file to bucket '%s'", bucket);
    char *data = NULL, *why = NULL;
    size_t len = 0;
    mb_err e = {0};
    gc_read_local(src, MB_GC_OBJECT_MAX, "(256 MiB) an object may hold", &data, &len, &why);
    if (why) {
        gc_textf(res, "%s: %s", pre, why);
    } else {
        mb_gc *gc = gc_open(call, res, pre);
        if (gc) {
            if (mb_gc_gcs_object_put(gc, bucket, dest, data, len, guess_type(dest), &e)) {
                char *url = mb_asprintf("https://storage.googleapis.com/upload/storage/v1/b/%s/o?uploadType=multipart",
                                        bucket);
                api_fail(res, pre, &e, "POST", url);
                free(url);
            } else {
                gc_textf(res, "Successfully uploaded '%s' to '%s/%s'", src, bucket, dest);
            }
            mb_gc_close(gc);
        }
    }
    free(why);
    free(data);
    free(pre);
    return 0;
}

int gc_t_storage_download_file(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *bucket = gc_arg(a, "bucket_name"), *blob = gc_arg(a, "source_blob_name");
    const char *dest = gc_arg(a, "destination_file_path");
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket)) return denied(res, bucket);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error downloading file from bucket '%s'", bucket);
    if (gc) {
        char *data;
        size_t len;
        mb_err e = {0};
        if (mb_gc_gcs_object_get(gc, bucket, blob, &data, &len, NULL, &e)) {
            char *url = mb_asprintf("https://storage.googleapis.com/download/storage/v1/b/%s/o/%s?alt=media",
                                    bucket, blob);
            api_fail(res, pre, &e, "GET", url);
            free(url);
        } else {
            /* os.makedirs(os.path.dirname(dest), exist_ok=True) first */
            char *dir = mb_strdup(dest);
            char *slash = strrchr(dir, '/');
            int rc = 0;
            if (slash && slash != dir) {
                *slash = '\0';
                rc = mb_mkdir_p(dir, 0755, &e);
            }
            free(dir);
            if (rc) gc_textf(res, "%s: %s", pre, e.msg);
            else if (mb_write_file_atomic(dest, data, len, 0644, &e)) {
                char *m = mb_py_os_error(errno ? errno : EACCES, dest);
                gc_textf(res, "%s: %s", pre, m);
                free(m);
            } else gc_textf(res, "Successfully downloaded '%s/%s' to '%s'", bucket, blob, dest);
            free(data);
        }
    }
    return gc_end(gc, pre);
}

int gc_t_storage_delete_object(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *bucket = gc_arg(a, "bucket_name"), *blob = gc_arg(a, "blob_name");
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket)) return denied(res, bucket);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error deleting object from bucket '%s'", bucket);
    if (gc) {
        mb_err e = {0};
        if (mb_gc_gcs_object_delete(gc, bucket, blob, &e) == MB_OK)
            gc_textf(res, "Successfully deleted '%s' from bucket '%s'", blob, bucket);
        else if (e.code == MB_ENOTFOUND)
            gc_textf(res, "Object '%s' not found in bucket '%s'", blob, bucket);
        else gc_textf(res, "%s: %s", pre, e.msg);
    }
    return gc_end(gc, pre);
}

int gc_t_storage_get_bucket_info(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *bucket = gc_arg(a, "bucket_name");
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket)) return denied(res, bucket);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error getting bucket info for '%s'", bucket);
    if (gc) {
        json_t *b;
        mb_err e = {0};
        if (mb_gc_gcs_bucket_get(gc, bucket, &b, &e)) {
            gc_api_fail(res, pre, gc_http_code(e.code), "GET", e.msg, GCS "/%s?projection=noAcl&prettyPrint=false", bucket);
        } else {
            char created[48];
            mb_gc_isoformat(json_integer_value(json_object_get(b, "created")), created);
            mb_buf labels = {0};
            mb_py_repr_json(&labels, json_object_get(b, "labels"));
            gc_textf(res, "Bucket Information for '%s':\nLocation: %s\nStorage Class: %s\nCreated: %s\n"
                          "Versioning: %s\nLabels: %s\nLifecycle Rules: %zu",
                     bucket, json_string_value(json_object_get(b, "location")),
                     json_string_value(json_object_get(b, "storage_class")), created,
                     json_is_true(json_object_get(b, "versioning")) ? "Enabled" : "Disabled", labels.data,
                     json_array_size(json_object_get(b, "lifecycle")));
            mb_buf_free(&labels);
            json_decref(b);
        }
    }
    return gc_end(gc, pre);
}

int gc_t_storage_generate_signed_url(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *bucket = gc_arg(a, "bucket_name"), *blob = gc_arg(a, "blob_name");
    long long minutes = gc_arg_int(a, "expiration_minutes");
    const char *method = gc_arg(a, "method");
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket)) return denied(res, bucket);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error generating signed URL for '%s/%s'", bucket, blob);
    if (gc) {
        /* A V4 signed URL on the REST facade (storage.googleapis.com is not
         * reachable from a sandbox), which checks it when it is used. */
        const char *host = getenv("STORAGE_EMULATOR_HOST");
        char *base = host && *host && strstr(host, "/p/") ? mb_strdup(host)
                     : mb_asprintf("%s/p/%s", host && *host ? host : "http://127.0.0.1:10050", mb_gc_project(gc));
        char *url = NULL;
        mb_err e = {0};
        char *up = mb_strdup(method);
        for (char *c = up; *c; c++) *c = (char)toupper((unsigned char)*c);
        if (mb_gc_gcs_sign_url(gc, base, up, bucket, blob, minutes * 60, &url, &e))
            gc_textf(res, "%s: %s", pre, e.msg);
        else
            gc_textf(res, "Signed URL for '%s/%s' (expires in %lld minutes):\n%s", bucket, blob, minutes, url);
        free(up);
        free(url);
        free(base);
    }
    return gc_end(gc, pre);
}

static int copy_or_move(mb_mcp_call *call, json_t *a, mb_mcp_result *res, int move)
{
    const char *sb = gc_arg(a, "source_bucket"), *so = gc_arg(a, "source_blob");
    const char *db = gc_arg(a, "dest_bucket"), *dob = gc_arg(a, "dest_blob");
    if (!gc_allowed(call, GC_ACL_BUCKETS, sb))
        return gc_textf(res, "Access denied: Source bucket '%s' is not in allowed buckets list", sb);
    if (!gc_allowed(call, GC_ACL_BUCKETS, db))
        return gc_textf(res, "Access denied: Destination bucket '%s' is not in allowed buckets list", db);
    const char *pre = move ? "Error moving object" : "Error copying object";
    mb_gc *gc = gc_open(call, res, pre);
    if (!gc) return 0;
    char *data;
    size_t len;
    json_t *meta = NULL;
    mb_err e = {0};
    int rc = mb_gc_gcs_object_get(gc, sb, so, &data, &len, &meta, &e);
    if (!rc) {
        rc = mb_gc_gcs_object_put(gc, db, dob, data, len, json_string_value(json_object_get(meta, "content_type")), &e);
        free(data);
        json_decref(meta);
    }
    if (!rc && move) rc = mb_gc_gcs_object_delete(gc, sb, so, &e);
    if (rc) {
        gc_api_fail(res, pre, gc_http_code(e.code), "POST", e.msg, GCS "/%s/o/%s/copyTo/b/%s/o/%s?prettyPrint=false", sb, so, db, dob);
    } else {
        gc_textf(res, "Successfully %s '%s/%s' to '%s/%s'", move ? "moved" : "copied", sb, so, db, dob);
    }
    mb_gc_close(gc);
    return 0;
}

int gc_t_storage_copy_object(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    return copy_or_move(call, a, res, 0);
}

int gc_t_storage_move_object(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    return copy_or_move(call, a, res, 1);
}

int gc_t_storage_enable_versioning(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *bucket = gc_arg(a, "bucket_name");
    int on = gc_arg_bool(a, "enabled");
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket)) return denied(res, bucket);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error updating versioning for bucket '%s'", bucket);
    if (gc) {
        mb_err e = {0};
        if (mb_gc_gcs_bucket_set(gc, bucket, "versioning", on ? json_true() : json_false(), &e)) {
            gc_api_fail(res, pre, gc_http_code(e.code), "PATCH", e.msg, GCS "/%s?projection=full&prettyPrint=false", bucket);
        } else {
            gc_textf(res, "Successfully %s versioning for bucket '%s'", on ? "enabled" : "disabled", bucket);
        }
    }
    return gc_end(gc, pre);
}

int gc_t_storage_get_bucket_size(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *bucket = gc_arg(a, "bucket_name");
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket)) return denied(res, bucket);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error getting bucket size for '%s'", bucket);
    if (gc) {
        json_t *items;
        mb_err e = {0};
        if (mb_gc_gcs_object_list(gc, bucket, "", NULL, &items, NULL, &e)) {
            gc_api_fail(res, pre, gc_http_code(e.code), "GET", e.msg, GCS "/%s/o?projection=noAcl&prettyPrint=false", bucket);
        } else {
            long long total = 0;
            size_t i;
            json_t *o;
            json_array_foreach(items, i, o) total += json_integer_value(json_object_get(o, "size"));
            gc_textf(res, "Bucket Size Statistics for '%s':\nTotal Objects: %zu\nTotal Size: %lld bytes\n"
                          "Size (MB): %.2f MB\nSize (GB): %.2f GB",
                     bucket, json_array_size(items), total, total / (1024.0 * 1024),
                     total / (1024.0 * 1024 * 1024));
            json_decref(items);
        }
    }
    return gc_end(gc, pre);
}

int gc_t_storage_set_bucket_lifecycle(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *bucket = gc_arg(a, "bucket_name"), *action = gc_arg(a, "action");
    long long age = gc_arg_int(a, "age_days");
    if (!gc_allowed(call, GC_ACL_BUCKETS, bucket)) return denied(res, bucket);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error setting lifecycle rules for bucket '%s'", bucket);
    if (gc) {
        json_t *b;
        mb_err e = {0};
        int rc = mb_gc_gcs_bucket_get(gc, bucket, &b, &e);
        if (!rc) {
            json_t *rules = json_deep_copy(json_object_get(b, "lifecycle"));
            json_array_append_new(rules, json_pack("{s:{s:s},s:{s:I}}", "action", "type", action, "condition",
                                                   "age", (json_int_t)age));
            rc = mb_gc_gcs_bucket_set(gc, bucket, "lifecycle", rules, &e);
            json_decref(rules);
            json_decref(b);
        }
        if (rc) {
            gc_api_fail(res, pre, gc_http_code(e.code), "GET", e.msg, GCS "/%s?projection=noAcl&prettyPrint=false", bucket);
        } else {
            gc_textf(res, "Successfully set lifecycle rule for bucket '%s': %s objects after %lld days", bucket,
                     action, age);
        }
    }
    return gc_end(gc, pre);
}
