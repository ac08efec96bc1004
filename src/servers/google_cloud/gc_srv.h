/*
 * gc_srv.h - shared by the files of the google_cloud MCP server
 * (`mcpbox mcp google_cloud`): Toolathlon's google-cloud-mcp (Klavis copy
 * mcp_servers/google_cloud_toolathlon) over the project database of
 * src/gcloud.
 */
#ifndef MB_SRV_GOOGLE_CLOUD_H
#define MB_SRV_GOOGLE_CLOUD_H

#include "gcloud/gcloud.h"
#include "mcp/mcp.h"

typedef struct gc_server {
    char *db_path;      /* the project database */
    char *project;      /* expected project id, or NULL (the database's) */
    char **allowed[4];  /* buckets, datasets, log buckets, instances (NULL = all) */
} gc_server;

enum { GC_ACL_BUCKETS, GC_ACL_DATASETS, GC_ACL_LOG_BUCKETS, GC_ACL_INSTANCES };

/* Opens the project for one call; on failure answers the call with
 * "<prefix>: <why>" and returns NULL. */
mb_gc *gc_open(mb_mcp_call *call, mb_mcp_result *res, const char *prefix);
/* gc_open with the prefix formatted into *prefix (malloc'ed); gc_end closes
 * (gc may be NULL), frees the prefix and returns 0 (a tool's answer). */
mb_gc *gc_begin(mb_mcp_call *call, mb_mcp_result *res, char **prefix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int gc_end(mb_gc *gc, char *prefix);
/* Answers "<prefix>: <code> <method> <url>: <msg>" (google.api_core's str()). */
int gc_api_fail(mb_mcp_result *res, const char *prefix, int code, const char *method, const char *msg,
                const char *url_fmt, ...) __attribute__((format(printf, 6, 7)));
/* Upstream's allow-list check (exact names and 'prefix*'). */
int gc_allowed(mb_mcp_call *call, int which, const char *name);
/* A normal result: the text plus structuredContent {"result": text}. */
int gc_text(mb_mcp_result *res, const char *text);
int gc_textf(mb_mcp_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Python's datetime.isoformat() of epoch milliseconds in UTC ("...+00:00"). */
void gc_isoformat(int64_t ms, mb_buf *out);
/* Python repr of one query result row as dict(row) shows it. */
void gc_row_repr(mb_buf *out, json_t *fields, json_t *row);
/* str() of a google.api_core HTTP error: "404 GET https://...: message". */
char *gc_api_error(int code, const char *method, const char *url, const char *msg);
int gc_http_code(int mb_code);

/* Reads a local file a tool names (storage_upload_file, bigquery_load_csv_data):
 * a regular file in the workspace /data, symlinks resolved, of at most max
 * bytes, refused from its size before any of it is read. 0, or -1 with the
 * error text in *why (malloc'ed): Python's OSError text, or "'P' resolves to
 * 'R', outside the workspace /data", or "'P' is N bytes, larger than the M
 * bytes <limit>". */
int gc_read_local(const char *src, long long max, const char *limit, char **data, size_t *len,
                  char **why);
const char *gc_arg(json_t *a, const char *k);
long long gc_arg_int(json_t *a, const char *k);
int gc_arg_bool(json_t *a, const char *k);

int gc_t_bigquery_run_query(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_bigquery_list_datasets(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_bigquery_create_dataset(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_bigquery_get_dataset_info(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_bigquery_load_csv_data(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_bigquery_export_table(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_bigquery_list_jobs(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_bigquery_cancel_job(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_list_buckets(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_create_bucket(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_list_objects(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_upload_file(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_download_file(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_delete_object(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_get_bucket_info(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_generate_signed_url(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_copy_object(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_move_object(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_enable_versioning(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_get_bucket_size(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_storage_set_bucket_lifecycle(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_logging_write_log(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_logging_read_logs(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_logging_list_logs(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_logging_delete_log(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_logging_create_log_sink(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_logging_list_log_sinks(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_logging_delete_log_sink(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_logging_export_logs_to_bigquery(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_logging_create_log_bucket(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_compute_list_instances(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_compute_create_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_compute_delete_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_compute_start_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_compute_stop_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_compute_restart_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_compute_get_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_compute_list_zones(mb_mcp_call *call, json_t *a, mb_mcp_result *res);
int gc_t_compute_wait_for_operation(mb_mcp_call *call, json_t *a, mb_mcp_result *res);

#endif /* MB_SRV_GOOGLE_CLOUD_H */
