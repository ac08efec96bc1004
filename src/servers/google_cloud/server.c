/*
 * server.c - `mcpbox mcp google_cloud`: Toolathlon's google-cloud-mcp
 * (Klavis-AI/klavis mcp_servers/google_cloud_toolathlon, FastMCP on mcp
 * 1.12.2) over the sandbox's emulated project (src/gcloud). This file holds
 * the tool table (names, docstring descriptions, the pydantic-generated
 * schemas FastMCP publishes), argument checking as FastMCP + pydantic do it,
 * the allow-lists upstream takes (--allowed-buckets, ...), and start-up.
 *
 * The project database is opened for each call (so that a reset, which
 * replaces the file, is seen at once): --db PATH, default
 * $MCPBOX_GCLOUD_DB or /.mcpbox/state/gcloud.db (the sandbox's state
 * directory). Tools answer like upstream: a normal result whose text says
 * "Error ...: <what the Google client raised>" when something fails.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "servers/common/pyfmt.h"
#include "servers/common/pyschema.h"
#include "servers/google_cloud/gc_srv.h"
#include "servers/servers.h"

typedef enum pk { P_STR, P_BOOL, P_INT } pk;

typedef struct param {
    const char *name;
    pk kind;
    const char *def; /* JSON text of the default, NULL = required */
} param;

typedef struct spec {
    const char *name;
    const char *doc;
    mb_mcp_tool_fn fn;
    param params[6];
} spec;

static const spec SPECS[] = {
    {"bigquery_run_query",
     "Execute a BigQuery SQL query\n"
     "    \n"
     "    Args:\n"
     "        query: SQL query to execute\n"
     "        dry_run: If True, only validate query without running it\n"
     "        max_results: Maximum number of results to return (default: 1000)\n"
     "    \n"
     "    Returns:\n"
     "        Query results or error message\n"
     "    ",
     gc_t_bigquery_run_query, {{"query", P_STR, NULL}, {"dry_run", P_BOOL, "false"}, {"max_results", P_INT, "1000"}}},
    {"bigquery_list_datasets",
     "List all BigQuery datasets in the project\n"
     "\n"
     "    Returns:\n"
     "        List of datasets or error message\n"
     "    ",
     gc_t_bigquery_list_datasets, {{0}}},
    {"bigquery_create_dataset",
     "Create a new BigQuery dataset\n"
     "    \n"
     "    Args:\n"
     "        dataset_id: ID for the new dataset\n"
     "        description: Optional description for the dataset\n"
     "        location: Dataset location (default: US)\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_bigquery_create_dataset, {{"dataset_id", P_STR, NULL}, {"description", P_STR, "\"\""}, {"location", P_STR, "\"US\""}}},
    {"bigquery_get_dataset_info",
     "Get detailed information about a BigQuery dataset\n"
     "    \n"
     "    Args:\n"
     "        dataset_id: ID of the dataset\n"
     "    \n"
     "    Returns:\n"
     "        Dataset information or error message\n"
     "    ",
     gc_t_bigquery_get_dataset_info, {{"dataset_id", P_STR, NULL}}},
    {"bigquery_load_csv_data",
     "Load data from CSV file to BigQuery table\n"
     "    \n"
     "    Args:\n"
     "        dataset_id: Dataset ID\n"
     "        table_id: Table ID\n"
     "        csv_file_path: Path to CSV file\n"
     "        skip_header: Whether to skip the first row (header)\n"
     "        write_mode: Write mode (WRITE_TRUNCATE, WRITE_APPEND, WRITE_EMPTY)\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_bigquery_load_csv_data, {{"dataset_id", P_STR, NULL}, {"table_id", P_STR, NULL}, {"csv_file_path", P_STR, NULL}, {"skip_header", P_BOOL, "true"}, {"write_mode", P_STR, "\"WRITE_TRUNCATE\""}}},
    {"bigquery_export_table",
     "Export BigQuery table to Cloud Storage\n"
     "    \n"
     "    Args:\n"
     "        dataset_id: Dataset ID\n"
     "        table_id: Table ID\n"
     "        destination_bucket: Destination bucket name\n"
     "        destination_path: Destination path in bucket\n"
     "        file_format: Export format (CSV, JSON, AVRO)\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_bigquery_export_table, {{"dataset_id", P_STR, NULL}, {"table_id", P_STR, NULL}, {"destination_bucket", P_STR, NULL}, {"destination_path", P_STR, NULL}, {"file_format", P_STR, "\"CSV\""}}},
    {"bigquery_list_jobs",
     "List BigQuery jobs\n"
     "    \n"
     "    Args:\n"
     "        max_results: Maximum number of jobs to return\n"
     "        state_filter: Filter by job state (RUNNING, DONE, PENDING)\n"
     "    \n"
     "    Returns:\n"
     "        List of jobs or error message\n"
     "    ",
     gc_t_bigquery_list_jobs, {{"max_results", P_INT, "50"}, {"state_filter", P_STR, "\"\""}}},
    {"bigquery_cancel_job",
     "Cancel a BigQuery job\n"
     "    \n"
     "    Args:\n"
     "        job_id: ID of the job to cancel\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_bigquery_cancel_job, {{"job_id", P_STR, NULL}}},
    {"storage_list_buckets",
     "List all Cloud Storage buckets\n"
     "\n"
     "    Returns:\n"
     "        List of buckets or error message\n"
     "    ",
     gc_t_storage_list_buckets, {{0}}},
    {"storage_create_bucket",
     "Create a new Cloud Storage bucket\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name for the new bucket\n"
     "        location: Location for the bucket (default: US)\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_storage_create_bucket, {{"bucket_name", P_STR, NULL}, {"location", P_STR, "\"US\""}}},
    {"storage_list_objects",
     "List objects in a Cloud Storage bucket\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name of the bucket\n"
     "        prefix: Optional prefix to filter objects\n"
     "    \n"
     "    Returns:\n"
     "        List of objects or error message\n"
     "    ",
     gc_t_storage_list_objects, {{"bucket_name", P_STR, NULL}, {"prefix", P_STR, "\"\""}}},
    {"storage_upload_file",
     "Upload a file to Cloud Storage bucket\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name of the bucket\n"
     "        source_file_path: Local path to the file to upload\n"
     "        destination_blob_name: Name for the blob in the bucket\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_storage_upload_file, {{"bucket_name", P_STR, NULL}, {"source_file_path", P_STR, NULL}, {"destination_blob_name", P_STR, NULL}}},
    {"storage_download_file",
     "Download a file from Cloud Storage bucket\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name of the bucket\n"
     "        source_blob_name: Name of the blob in the bucket\n"
     "        destination_file_path: Local path where to save the file\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_storage_download_file, {{"bucket_name", P_STR, NULL}, {"source_blob_name", P_STR, NULL}, {"destination_file_path", P_STR, NULL}}},
    {"storage_delete_object",
     "Delete an object from Cloud Storage bucket\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name of the bucket\n"
     "        blob_name: Name of the blob to delete\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_storage_delete_object, {{"bucket_name", P_STR, NULL}, {"blob_name", P_STR, NULL}}},
    {"storage_get_bucket_info",
     "Get detailed information about a Cloud Storage bucket\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name of the bucket\n"
     "    \n"
     "    Returns:\n"
     "        Bucket information or error message\n"
     "    ",
     gc_t_storage_get_bucket_info, {{"bucket_name", P_STR, NULL}}},
    {"storage_generate_signed_url",
     "Generate a signed URL for temporary access to a Cloud Storage object\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name of the bucket\n"
     "        blob_name: Name of the blob\n"
     "        expiration_minutes: URL expiration time in minutes (default: 60)\n"
     "        method: HTTP method (GET, PUT, POST, DELETE)\n"
     "    \n"
     "    Returns:\n"
     "        Signed URL or error message\n"
     "    ",
     gc_t_storage_generate_signed_url, {{"bucket_name", P_STR, NULL}, {"blob_name", P_STR, NULL}, {"expiration_minutes", P_INT, "60"}, {"method", P_STR, "\"GET\""}}},
    {"storage_copy_object",
     "Copy an object between Cloud Storage buckets\n"
     "    \n"
     "    Args:\n"
     "        source_bucket: Source bucket name\n"
     "        source_blob: Source blob name\n"
     "        dest_bucket: Destination bucket name  \n"
     "        dest_blob: Destination blob name\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_storage_copy_object, {{"source_bucket", P_STR, NULL}, {"source_blob", P_STR, NULL}, {"dest_bucket", P_STR, NULL}, {"dest_blob", P_STR, NULL}}},
    {"storage_move_object",
     "Move an object between Cloud Storage buckets\n"
     "    \n"
     "    Args:\n"
     "        source_bucket: Source bucket name\n"
     "        source_blob: Source blob name\n"
     "        dest_bucket: Destination bucket name\n"
     "        dest_blob: Destination blob name\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_storage_move_object, {{"source_bucket", P_STR, NULL}, {"source_blob", P_STR, NULL}, {"dest_bucket", P_STR, NULL}, {"dest_blob", P_STR, NULL}}},
    {"storage_enable_versioning",
     "Enable or disable versioning for a Cloud Storage bucket\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name of the bucket\n"
     "        enabled: Whether to enable (True) or disable (False) versioning\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_storage_enable_versioning, {{"bucket_name", P_STR, NULL}, {"enabled", P_BOOL, "true"}}},
    {"storage_get_bucket_size",
     "Get size statistics for a Cloud Storage bucket\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name of the bucket\n"
     "    \n"
     "    Returns:\n"
     "        Bucket size information or error message\n"
     "    ",
     gc_t_storage_get_bucket_size, {{"bucket_name", P_STR, NULL}}},
    {"storage_set_bucket_lifecycle",
     "Set lifecycle rules for a Cloud Storage bucket\n"
     "    \n"
     "    Args:\n"
     "        bucket_name: Name of the bucket\n"
     "        age_days: Age in days after which to apply the action\n"
     "        action: Action to take (Delete, SetStorageClass)\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_storage_set_bucket_lifecycle, {{"bucket_name", P_STR, NULL}, {"age_days", P_INT, "30"}, {"action", P_STR, "\"Delete\""}}},
    {"logging_write_log",
     "Write a log entry to Cloud Logging\n"
     "    \n"
     "    Args:\n"
     "        log_name: Name of the log\n"
     "        message: Log message\n"
     "        severity: Log severity (DEBUG, INFO, WARNING, ERROR, CRITICAL)\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_logging_write_log, {{"log_name", P_STR, NULL}, {"message", P_STR, NULL}, {"severity", P_STR, "\"INFO\""}}},
    {"logging_read_logs",
     "Read recent log entries from Cloud Logging\n"
     "    \n"
     "    Args:\n"
     "        log_filter: Optional filter for log entries\n"
     "        max_entries: Maximum number of entries to return (default: 50)\n"
     "    \n"
     "    Returns:\n"
     "        Log entries or error message\n"
     "    ",
     gc_t_logging_read_logs, {{"log_filter", P_STR, "\"\""}, {"max_entries", P_INT, "50"}}},
    {"logging_list_logs",
     "List all log names in the project\n"
     "\n"
     "    Returns:\n"
     "        List of log names or error message\n"
     "    ",
     gc_t_logging_list_logs, {{0}}},
    {"logging_delete_log",
     "Delete a log\n"
     "    \n"
     "    Args:\n"
     "        log_name: Name of the log to delete\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_logging_delete_log, {{"log_name", P_STR, NULL}}},
    {"logging_create_log_sink",
     "Create a log sink to export logs to another service\n"
     "    \n"
     "    Args:\n"
     "        sink_name: Name for the sink\n"
     "        destination: Destination (e.g., bigquery://project.dataset, storage://bucket-name)\n"
     "        log_filter: Optional filter for which logs to export\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_logging_create_log_sink, {{"sink_name", P_STR, NULL}, {"destination", P_STR, NULL}, {"log_filter", P_STR, "\"\""}}},
    {"logging_list_log_sinks",
     "List all log sinks in the project\n"
     "    \n"
     "    Returns:\n"
     "        List of log sinks or error message\n"
     "    ",
     gc_t_logging_list_log_sinks, {{0}}},
    {"logging_delete_log_sink",
     "Delete a log sink\n"
     "    \n"
     "    Args:\n"
     "        sink_name: Name of the sink to delete\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_logging_delete_log_sink, {{"sink_name", P_STR, NULL}}},
    {"logging_export_logs_to_bigquery",
     "Export logs to BigQuery\n"
     "    \n"
     "    Args:\n"
     "        dataset_id: BigQuery dataset ID\n"
     "        table_id: BigQuery table ID\n"
     "        log_filter: Filter for which logs to export\n"
     "        days_back: Number of days back to export (default: 1)\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_logging_export_logs_to_bigquery, {{"dataset_id", P_STR, NULL}, {"table_id", P_STR, NULL}, {"log_filter", P_STR, "\"\""}, {"days_back", P_INT, "1"}}},
    {"logging_create_log_bucket",
     "Create a log bucket for storing logs\n"
     "    \n"
     "    Args:\n"
     "        bucket_id: ID for the log bucket\n"
     "        location: Location for the bucket (default: global)\n"
     "        retention_days: Log retention period in days (default: 30)\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_logging_create_log_bucket, {{"bucket_id", P_STR, NULL}, {"location", P_STR, "\"global\""}, {"retention_days", P_INT, "30"}}},
    {"compute_list_instances",
     "List Compute Engine instances\n"
     "    \n"
     "    Args:\n"
     "        zone: Optional zone filter, if empty lists from all zones\n"
     "    \n"
     "    Returns:\n"
     "        List of instances or error message\n"
     "    ",
     gc_t_compute_list_instances, {{"zone", P_STR, "\"\""}}},
    {"compute_create_instance",
     "Create a new Compute Engine instance\n"
     "    \n"
     "    Args:\n"
     "        instance_name: Name for the new instance\n"
     "        zone: Zone where to create the instance\n"
     "        machine_type: Machine type (default: e2-micro)\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_compute_create_instance, {{"instance_name", P_STR, NULL}, {"zone", P_STR, NULL}, {"machine_type", P_STR, "\"e2-micro\""}}},
    {"compute_delete_instance",
     "Delete a Compute Engine instance\n"
     "    \n"
     "    Args:\n"
     "        instance_name: Name of the instance to delete\n"
     "        zone: Zone where the instance is located\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_compute_delete_instance, {{"instance_name", P_STR, NULL}, {"zone", P_STR, NULL}}},
    {"compute_start_instance",
     "Start a Compute Engine instance\n"
     "    \n"
     "    Args:\n"
     "        instance_name: Name of the instance to start\n"
     "        zone: Zone where the instance is located\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_compute_start_instance, {{"instance_name", P_STR, NULL}, {"zone", P_STR, NULL}}},
    {"compute_stop_instance",
     "Stop a Compute Engine instance\n"
     "    \n"
     "    Args:\n"
     "        instance_name: Name of the instance to stop\n"
     "        zone: Zone where the instance is located\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_compute_stop_instance, {{"instance_name", P_STR, NULL}, {"zone", P_STR, NULL}}},
    {"compute_restart_instance",
     "Restart a Compute Engine instance\n"
     "    \n"
     "    Args:\n"
     "        instance_name: Name of the instance to restart\n"
     "        zone: Zone where the instance is located\n"
     "    \n"
     "    Returns:\n"
     "        Success message or error\n"
     "    ",
     gc_t_compute_restart_instance, {{"instance_name", P_STR, NULL}, {"zone", P_STR, NULL}}},
    {"compute_get_instance",
     "Get detailed information about a Compute Engine instance\n"
     "    \n"
     "    Args:\n"
     "        instance_name: Name of the instance\n"
     "        zone: Zone where the instance is located\n"
     "    \n"
     "    Returns:\n"
     "        Instance information or error message\n"
     "    ",
     gc_t_compute_get_instance, {{"instance_name", P_STR, NULL}, {"zone", P_STR, NULL}}},
    {"compute_list_zones",
     "List all available Compute Engine zones\n"
     "    \n"
     "    Returns:\n"
     "        List of zones or error message\n"
     "    ",
     gc_t_compute_list_zones, {{0}}},
    {"compute_wait_for_operation",
     "Wait for a Compute Engine operation to complete\n"
     "    \n"
     "    Args:\n"
     "        operation_name: Name of the operation to wait for\n"
     "        zone: Zone where the operation is running\n"
     "        timeout_minutes: Maximum time to wait in minutes (default: 5)\n"
     "    \n"
     "    Returns:\n"
     "        Operation status or timeout message\n"
     "    ",
     gc_t_compute_wait_for_operation, {{"operation_name", P_STR, NULL}, {"zone", P_STR, NULL}, {"timeout_minutes", P_INT, "5"}}},
};
#define NSPECS (sizeof SPECS / sizeof *SPECS)

/* ------------------------------------------------------------ schemas */

static char *input_schema(const spec *t)
{
    json_t *props = json_object(), *req = json_array();
    for (const param *p = t->params; p->name; p++) {
        char *title = mb_py_field_title(p->name);
        json_t *o = json_object();
        if (p->def) json_object_set_new(o, "default", json_loads(p->def, JSON_DECODE_ANY, NULL));
        else json_array_append_new(req, json_string(p->name));
        json_object_set_new(o, "title", json_string(title));
        json_object_set_new(o, "type", json_string(p->kind == P_STR ? "string" : p->kind == P_BOOL ? "boolean" : "integer"));
        json_object_set_new(props, p->name, o);
        free(title);
    }
    return mb_fastmcp_input_schema(t->name, props, req);
}

/* ---------------------------------------------------- argument checking */

static const spec *spec_of(const char *name)
{
    for (size_t i = 0; i < NSPECS; i++)
        if (!strcmp(SPECS[i].name, name)) return &SPECS[i];
    return NULL;
}

/* pydantic lax mode for str / bool / int, normalising in place. */
static void check_param(const param *p, json_t *args, mb_pyv_errs *e)
{
    json_t *v = json_object_get(args, p->name);
    if (!v) {
        if (!p->def) mb_pyv_add(e, p->name, "Field required", "missing", args);
        return;
    }
    if (p->kind == P_STR) {
        if (!json_is_string(v)) mb_pyv_add(e, p->name, "Input should be a valid string", "string_type", v);
        return;
    }
    if (p->kind == P_BOOL) {
        int b;
        if (!mb_py_lax_bool(v, 0, &b)) mb_pyv_add(e, p->name, "Input should be a valid boolean", "bool_parsing", v);
        else json_object_set_new(args, p->name, json_boolean(b));
        return;
    }
    if (json_is_integer(v)) return;
    if (json_is_boolean(v)) {
        json_object_set_new(args, p->name, json_integer(json_is_true(v)));
        return;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == (double)(long long)d) json_object_set_new(args, p->name, json_integer((long long)d));
        else mb_pyv_add(e, p->name, "Input should be a valid integer, got a number with a fractional part",
                        "int_from_float", v);
        return;
    }
    long long x;
    if (json_is_string(v) && mb_py_int_str(json_string_value(v), &x)) {
        json_object_set_new(args, p->name, json_integer(x));
        return;
    }
    if (json_is_string(v))
        mb_pyv_add(e, p->name, "Input should be a valid integer, unable to parse string as an integer",
                   "int_parsing", v);
    else mb_pyv_add(e, p->name, "Input should be a valid integer", "int_type", v);
}

typedef struct gc_state {
    gc_server gs;
    mb_mcp_tool tools[NSPECS + 1];
    char *schemas[2 * NSPECS];
} gc_state;

static int dispatch(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const spec *t = spec_of(mb_mcp_call_tool(call));
    json_t *a = json_is_object(args) ? json_deep_copy(args) : json_object();
    mb_pyv_errs e = {.version = "2.11"};
    for (const param *p = t->params; p->name; p++) check_param(p, a, &e);
    int rc;
    if (e.n) {
        mb_buf m = {0};
        mb_buf_printf(&m, "%d validation error%s for %sArguments%s", e.n, e.n > 1 ? "s" : "",
                      t->name, e.text.data);
        rc = mb_mcp_fail_str(res, m.data);
        mb_buf_free(&m);
    } else {
        for (const param *p = t->params; p->name; p++)
            if (!json_object_get(a, p->name))
                json_object_set_new(a, p->name, json_loads(p->def, JSON_DECODE_ANY, NULL));
        rc = t->fn(call, a, res);
    }
    mb_buf_free(&e.text);
    json_decref(a);
    return rc;
}

/* ------------------------------------------------------------- helpers */

const char *gc_arg(json_t *a, const char *k) { return json_string_value(json_object_get(a, k)); }
long long gc_arg_int(json_t *a, const char *k) { return json_integer_value(json_object_get(a, k)); }
int gc_arg_bool(json_t *a, const char *k) { return json_is_true(json_object_get(a, k)); }

int gc_text(mb_mcp_result *res, const char *text)
{
    mb_mcp_text(res, text);
    mb_mcp_structured(res, json_pack("{s:s}", "result", text));
    return 0;
}

int gc_textf(mb_mcp_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    size_t n;
    char *t = mb_utf8_repair(b.data ? b.data : "", b.len, &n);
    int rc = gc_text(res, t);
    free(t);
    mb_buf_free(&b);
    return rc;
}

mb_gc *gc_open(mb_mcp_call *call, mb_mcp_result *res, const char *prefix)
{
    gc_server *gs = &((gc_state *)mb_mcp_call_data(call))->gs;
    mb_gc *gc = NULL;
    mb_err err = {0};
    if (access(gs->db_path, F_OK) != 0) {
        gc_textf(res, "%s: No Google Cloud project is set up for this sandbox (%s is missing)", prefix,
                 gs->db_path);
        return NULL;
    }
    if (mb_gc_open(gs->db_path, gs->project, &gc, &err)) {
        gc_textf(res, "%s: %s", prefix, err.msg);
        return NULL;
    }
    return gc;
}

int gc_api_fail(mb_mcp_result *res, const char *prefix, int code, const char *method, const char *msg,
                const char *url_fmt, ...)
{
    va_list ap;
    va_start(ap, url_fmt);
    mb_buf url = {0};
    mb_buf_vprintf(&url, url_fmt, ap);
    va_end(ap);
    char *m = gc_api_error(code, method, url.data ? url.data : "", msg);
    gc_textf(res, "%s: %s", prefix, m);
    free(m);
    mb_buf_free(&url);
    return 0;
}

mb_gc *gc_begin(mb_mcp_call *call, mb_mcp_result *res, char **prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    *prefix = b.data ? mb_buf_steal(&b) : mb_strdup("");
    return gc_open(call, res, *prefix);
}

int gc_end(mb_gc *gc, char *prefix)
{
    if (gc) mb_gc_close(gc);
    free(prefix);
    return 0;
}

int gc_allowed(mb_mcp_call *call, int which, const char *name)
{
    gc_server *gs = &((gc_state *)mb_mcp_call_data(call))->gs;
    char **set = gs->allowed[which];
    if (!set) return 1;
    for (char **p = set; *p; p++) {
        size_t n = strlen(*p);
        if (n && (*p)[n - 1] == '*') {
            if (!strncmp(name, *p, n - 1)) return 1;
        } else if (!strcmp(name, *p)) return 1;
    }
    return 0;
}

void gc_isoformat(int64_t ms, mb_buf *out)
{
    char b[48];
    mb_gc_isoformat(ms, b);
    mb_buf_puts(out, b);
}

int gc_http_code(int code)
{
    switch (code) {
    case MB_ENOTFOUND: return 404;
    case MB_ECONFLICT: return 409;
    case MB_EDENIED: return 403;
    case MB_EINVAL: return 400;
    default: return 500;
    }
}

char *gc_api_error(int code, const char *method, const char *url, const char *msg)
{
    return mb_asprintf("%d %s %s: %s", code, method, url, msg);
}

/* ------------------------------------------------------------ start-up */

static void state_free(void *p)
{
    gc_state *st = p;
    if (!st) return;
    free(st->gs.db_path);
    free(st->gs.project);
    for (int i = 0; i < 4; i++) mb_strv_free(st->gs.allowed[i]);
    for (size_t i = 0; i < 2 * NSPECS; i++) free(st->schemas[i]);
    free(st);
}

static char **split_list(const char *s)
{
    if (!s || !*s) return NULL;
    const char **v = NULL;
    size_t n = 0;
    char *copy = mb_strdup(s);
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        size_t l = strlen(t);
        while (l && t[l - 1] == ' ') t[--l] = '\0';
        if (l) mb_strv_push(&v, &n, t);
    }
    char **out = n ? mb_strv_dup(v) : NULL;
    free(v);
    free(copy);
    return out;
}

static const mb_mcp_info INFO = {
    .name = "google-cloud-mcp",
    .version = "1.12.2", /* FastMCP reports the mcp SDK's version */
    .flavor = MB_MCP_PY_FASTMCP,
    .capabilities = "{\"experimental\": {}, \"prompts\": {\"listChanged\": false}, \"resources\": "
                    "{\"subscribe\": false, \"listChanged\": false}, \"tools\": {\"listChanged\": false}}",
    .max_protocol = "2025-06-18",
};

int mb_srv_google_cloud_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},
        {"project-id", required_argument, 0, 'p'},
        {"service-account-path", required_argument, 0, 's'},
        {"allowed-buckets", required_argument, 0, 'b'},
        {"allowed-datasets", required_argument, 0, 'D'},
        {"allowed-log-buckets", required_argument, 0, 'l'},
        {"allowed-instances", required_argument, 0, 'i'},
        {"transport", required_argument, 0, 't'},
        {0, 0, 0, 0},
    };
    const char *db = getenv("MCPBOX_GCLOUD_DB");
    const char *project = getenv("PROJECT_ID") ? getenv("PROJECT_ID") : getenv("GOOGLE_CLOUD_PROJECT");
    const char *lists[4] = {NULL, NULL, NULL, NULL};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'd') db = optarg;
        else if (c == 'p') project = optarg;
        else if (c == 's' || c == 't') ; /* accepted for upstream's command lines */
        else if (c == 'b') lists[GC_ACL_BUCKETS] = optarg;
        else if (c == 'D') lists[GC_ACL_DATASETS] = optarg;
        else if (c == 'l') lists[GC_ACL_LOG_BUCKETS] = optarg;
        else if (c == 'i') lists[GC_ACL_INSTANCES] = optarg;
        else return mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
    }
    for (int i = optind; i < argc; i++)
        if (strcmp(argv[i], "stdio"))
            return mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\" (only stdio is served)", argv[i]);
    gc_state *st = mb_calloc(1, sizeof *st);
    st->gs.db_path = mb_strdup(db && *db ? db : "/.mcpbox/state/gcloud.db");
    st->gs.project = project && *project ? mb_strdup(project) : NULL;
    for (int i = 0; i < 4; i++) st->gs.allowed[i] = split_list(lists[i]);
    for (size_t i = 0; i < NSPECS; i++) {
        st->schemas[2 * i] = input_schema(&SPECS[i]);
        st->schemas[2 * i + 1] = mb_fastmcp_output_schema(SPECS[i].name);
        st->tools[i] = (mb_mcp_tool){.name = SPECS[i].name,
                                     .description = SPECS[i].doc,
                                     .input_schema = st->schemas[2 * i],
                                     .output_schema = st->schemas[2 * i + 1],
                                     .fn = dispatch};
    }
    return mb_mcp_server_new_with_tools(&INFO, st->tools, st, state_free, out, err);
}
