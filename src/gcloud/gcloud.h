/*
 * gcloud.h - the face of the Google Cloud emulation: one project per sandbox,
 * held in one SQLite file (so that reset, snapshot and dump are file
 * operations), with
 *   - BigQuery: datasets, tables with BigQuery schemas (RECORD and REPEATED
 *     values stored as JSON text), streaming insert, CSV / NDJSON load, and
 *     GoogleSQL queries translated to SQLite (translate.c) with UDFs (udf.c);
 *   - Cloud Storage: buckets and objects (bytes in the database);
 *   - Cloud Logging: entries, sinks and log buckets;
 *   - Compute Engine: instances whose operations finish at once.
 *
 * An mb_gc handle is one connection; it is not shared between threads. Two
 * handles (the MCP server inside the sandbox, the daemon outside) may hold
 * the same file: SQLite's locking serialises their writes.
 *
 * Errors follow BigQuery's wording where a client reads them ("Not found:
 * Dataset p:d", "Already Exists: Table p:d.t", "Syntax error: ...",
 * "Unsupported: QUALIFY is not supported by this emulator"); codes are
 * MB_ENOTFOUND (404), MB_ECONFLICT (409, already exists), MB_EINVAL (400).
 */
#ifndef MB_GCLOUD_H
#define MB_GCLOUD_H

#include <jansson.h>
#include <stddef.h>

#include "util/util.h"

typedef struct mb_gc mb_gc;

/* Opens (creating when absent) the project database at `path` for project
 * `project_id` (kept in the file on creation; a later open with another id
 * is refused). */
int mb_gc_open(const char *path, const char *project_id, mb_gc **out, mb_err *err);
void mb_gc_close(mb_gc *gc);
const char *mb_gc_project(const mb_gc *gc);

/* Milliseconds since the epoch on the host's clock. What a project stamps
 * and CURRENT_DATE() read is mb_gc_clock_ms (the sandbox's clock). */
int64_t mb_gc_now_ms(void);

/* ------------------------------------------------- the project's clock */

/* Epoch milliseconds as the project's clock shows them (clock.c): the
 * host's time (default), a running clock shifted to a chosen start, or a
 * frozen instant; kept in the project database. NULL: the host's time. */
int64_t mb_gc_clock_ms(const mb_gc *gc);
/* now: RFC 3339 time (NULL = the host's time again; with frozen, freeze
 * where the clock stands); frozen: the clock stands still at now, else it
 * runs from now. */
int mb_gc_clock_set(mb_gc *gc, const char *now, int frozen, mb_err *err);
/* {now (RFC 3339 with ms and Z), mode: real | running | frozen} */
json_t *mb_gc_clock_get(const mb_gc *gc);
/* mcpbox's clock object {now, frozen} (null: the host's time). */
int mb_gc_clock_apply(mb_gc *gc, json_t *spec, mb_err *err);
/* MCPBOX_GCLOUD_CLOCK's text: "", real, TIME, TIME/running or TIME/frozen. */
int mb_gc_clock_env(mb_gc *gc, const char *spec, mb_err *err);
/* Python's datetime.isoformat() of an aware UTC datetime at epoch ms
 * ("2025-03-10T09:00:00.123000+00:00", no fraction when it is zero). */
void mb_gc_isoformat(int64_t ms, char out[48]);
/* Epoch milliseconds of a date / timestamp text (values.c rules); 0 or -1. */
int mb_gc_parse_ms(const char *s, int64_t *out);
/* Python repr of a date / timestamp value as the BigQuery client gives it:
 * datetime.date(2025, 3, 10), datetime.datetime(2025, 3, 10, 9, 0,
 * tzinfo=datetime.timezone.utc) (aware only for TIMESTAMP). */
void mb_gc_py_datetime(mb_buf *out, const char *value, const char *type);

/* ------------------------------------------------------------ BigQuery */

/* {id, description, location, created (ms), modified (ms), labels{}} */
int mb_gc_bq_dataset_create(mb_gc *gc, const char *id, const char *description,
                            const char *location, mb_err *err);
int mb_gc_bq_dataset_get(mb_gc *gc, const char *id, json_t **out, mb_err *err);
json_t *mb_gc_bq_dataset_list(mb_gc *gc);
/* Refused while it holds tables unless delete_contents. */
int mb_gc_bq_dataset_delete(mb_gc *gc, const char *id, int delete_contents, mb_err *err);

/* fields: a BigQuery schema ([{name, type, mode, description, fields}]);
 * validated (names, types, duplicates). */
int mb_gc_bq_table_create(mb_gc *gc, const char *dataset, const char *table, json_t *fields,
                          const char *description, mb_err *err);
/* {id, dataset, description, fields, created, modified, num_rows} */
int mb_gc_bq_table_get(mb_gc *gc, const char *dataset, const char *table, json_t **out,
                       mb_err *err);
/* [{id, created}] of a dataset, by id. */
int mb_gc_bq_table_list(mb_gc *gc, const char *dataset, json_t **out, mb_err *err);
int mb_gc_bq_table_delete(mb_gc *gc, const char *dataset, const char *table, mb_err *err);

/* Streaming insert of an array of row objects (field name -> JSON value as
 * the REST API takes them). Rows that do not fit the schema are reported in
 * *row_errors ([{index, message}], NULL when none) and nothing is inserted. */
int mb_gc_bq_insert(mb_gc *gc, const char *dataset, const char *table, json_t *rows,
                    json_t **row_errors, mb_err *err);

typedef enum mb_gc_format { MB_GC_CSV, MB_GC_NDJSON } mb_gc_format;
typedef enum mb_gc_write { MB_GC_WRITE_APPEND, MB_GC_WRITE_TRUNCATE, MB_GC_WRITE_EMPTY } mb_gc_write;

typedef struct mb_gc_load {
    mb_gc_format format;
    mb_gc_write write;
    int skip_leading_rows;  /* CSV */
    int autodetect;         /* schema from the data when the table has none */
    json_t *fields;         /* explicit schema, or NULL */
} mb_gc_load;

/* Loads data into dataset.table (created when absent), as a load job. */
int mb_gc_bq_load(mb_gc *gc, const char *dataset, const char *table, const char *data,
                  size_t len, const mb_gc_load *opts, long *rows_loaded, mb_err *err);

/* A query's outcome. rows: array of arrays of JSON values (INT64 as integers,
 * FLOAT64 as reals, BOOL as booleans, DATE/TIMESTAMP/DATETIME/TIME/NUMERIC
 * as their canonical strings, RECORD as objects, REPEATED as arrays). */
typedef struct mb_gc_result {
    json_t *fields;             /* [{name, type, mode}] */
    json_t *rows;
    const char *statement_type; /* SELECT, INSERT, DELETE, UPDATE, CREATE_TABLE_AS_SELECT, ... */
    long long affected;         /* DML rows, -1 otherwise */
    long long bytes;            /* a size estimate of what was read */
} mb_gc_result;

/* Runs a GoogleSQL script (statements separated by ';'); the result is the
 * last statement's. params: BigQuery queryParameters ([{name, parameterType:
 * {type}, parameterValue: {value}}]) or NULL. dry_run only translates. */
int mb_gc_bq_query(mb_gc *gc, const char *sql, json_t *params, int dry_run, mb_gc_result *out,
                   mb_err *err);
void mb_gc_result_free(mb_gc_result *r);

/* The SQLite text a GoogleSQL statement becomes (tests, diagnostics). */
int mb_gc_bq_translate(mb_gc *gc, const char *sql, char **out, mb_err *err);

/* Jobs: every query and load is recorded ({id, type, state, query, created,
 * ended, error}). */
int64_t mb_gc_bq_job_add(mb_gc *gc, const char *type, const char *query, const char *error,
                         char job_id[64]);
json_t *mb_gc_bq_job_list(mb_gc *gc, int max, const char *state);
int mb_gc_bq_job_get(mb_gc *gc, const char *id, json_t **out, mb_err *err);

/* ------------------------------------------------------- Cloud Storage */

/* {name, location, storage_class, versioning, lifecycle[], labels{}, created, updated} */
int mb_gc_gcs_bucket_create(mb_gc *gc, const char *name, const char *location,
                            const char *storage_class, mb_err *err);
int mb_gc_gcs_bucket_get(mb_gc *gc, const char *name, json_t **out, mb_err *err);
json_t *mb_gc_gcs_bucket_list(mb_gc *gc);
/* Refused while it holds objects unless force. */
int mb_gc_gcs_bucket_delete(mb_gc *gc, const char *name, int force, mb_err *err);
int mb_gc_gcs_bucket_set(mb_gc *gc, const char *name, const char *key, json_t *value,
                         mb_err *err); /* key: versioning | lifecycle | labels | storage_class */

int mb_gc_gcs_object_put(mb_gc *gc, const char *bucket, const char *name, const void *data,
                         size_t len, const char *content_type, mb_err *err);
/* *data malloc'ed; meta (optional) as mb_gc_gcs_object_meta. */
int mb_gc_gcs_object_get(mb_gc *gc, const char *bucket, const char *name, char **data,
                         size_t *len, json_t **meta, mb_err *err);
/* {bucket, name, size, content_type, md5 (base64), crc32c (base64),
 *  generation, created, updated} */
int mb_gc_gcs_object_meta(mb_gc *gc, const char *bucket, const char *name, json_t **out,
                          mb_err *err);
/* Objects by name with prefix; with a delimiter, names with it after the
 * prefix are folded into *prefixes. */
int mb_gc_gcs_object_list(mb_gc *gc, const char *bucket, const char *prefix,
                          const char *delimiter, json_t **items, json_t **prefixes, mb_err *err);
int mb_gc_gcs_object_delete(mb_gc *gc, const char *bucket, const char *name, mb_err *err);

/* V4 signed URLs (signed.c): a URL on `base` (http://HOST[:PORT][/p/PROJECT])
 * for method on bucket/object, valid for expires_s seconds (at most 7 days),
 * signed with the project's own RSA key. */
int mb_gc_gcs_sign_url(mb_gc *gc, const char *base, const char *method, const char *bucket, const char *object,
                       long long expires_s, char **out, mb_err *err);
/* The X-Goog-* query parameters of a request on a signed URL. */
typedef struct mb_gc_sigq {
    const char *alg, *cred, *date, *expires, *headers, *sig;
} mb_gc_sigq;
/* Checks a request on a signed URL (method, Host header, the URL's decoded
 * path): 0 when it may proceed, else the HTTP status with GCS's XML error
 * in *xml (malloc'ed). */
int mb_gc_gcs_check_signed(mb_gc *gc, const char *method, const char *host, const char *path,
                           const mb_gc_sigq *q, char **xml);

/* ------------------------------------------------------- Cloud Logging */

/* severity: DEFAULT DEBUG INFO NOTICE WARNING ERROR CRITICAL ALERT EMERGENCY;
 * json_payload (object) or text. timestamp_ms 0 = now. extra (or NULL): the
 * LogEntry fields kept as given, in the REST shape: labels (string values),
 * trace, spanId, traceSampled, httpRequest, operation, sourceLocation;
 * anything else, or more than MB_GC_LOG_EXTRA_MAX bytes of them, is refused. */
#define MB_GC_LOG_EXTRA_MAX 65536
int mb_gc_log_write(mb_gc *gc, const char *log_name, const char *text, json_t *json_payload,
                    const char *severity, int64_t timestamp_ms, const char *resource_type,
                    json_t *resource_labels, json_t *extra, mb_err *err);
/* Newest first; each {log_name, severity, timestamp, receive_timestamp,
 * text_payload | json_payload, resource{type, labels}, insert_id, extra{}}.
 * filter: the subset Cloud Logging users write (logName=, severity>=,
 * timestamp>=, textPayload:, jsonPayload.k=, labels.k=, resource.type=,
 * resource.labels.k=, trace=, spanId=, httpRequest.k=, operation.k=,
 * sourceLocation.k=, insertId=, AND/OR/NOT). */
int mb_gc_log_list(mb_gc *gc, const char *filter, int max, json_t **out, mb_err *err);
json_t *mb_gc_log_names(mb_gc *gc);
int mb_gc_log_delete(mb_gc *gc, const char *log_name, mb_err *err);
int mb_gc_log_sink_create(mb_gc *gc, const char *name, const char *destination,
                          const char *filter, mb_err *err);
json_t *mb_gc_log_sink_list(mb_gc *gc);
int mb_gc_log_sink_delete(mb_gc *gc, const char *name, mb_err *err);
int mb_gc_log_bucket_create(mb_gc *gc, const char *id, const char *location, int retention_days,
                            const char *description, mb_err *err);
json_t *mb_gc_log_bucket_list(mb_gc *gc);

/* ------------------------------------------------------ Compute Engine */

/* The zones this emulation offers (static). */
extern const char *const mb_gc_zones[];
int mb_gc_ce_create(mb_gc *gc, const char *name, const char *zone, const char *machine_type,
                    const char *status, json_t *labels, const char *description,
                    char op[64], mb_err *err);
/* action: start | stop | reset | delete; op receives the operation name. */
int mb_gc_ce_action(mb_gc *gc, const char *name, const char *zone, const char *action,
                    char op[64], mb_err *err);
int mb_gc_ce_get(mb_gc *gc, const char *name, const char *zone, json_t **out, mb_err *err);
json_t *mb_gc_ce_list(mb_gc *gc, const char *zone);
int mb_gc_ce_operation(mb_gc *gc, const char *name, json_t **out, mb_err *err);

/* The largest object made from a request or a tool: an upload's bytes, a
 * resumable session's total, a composed object, a file storage_upload_file
 * sends (256 MiB). */
#define MB_GC_OBJECT_MAX (256LL << 20)

/* ---------------------------------------------------- per sandbox */

/* The file name of a sandbox's project database in its state directory. */
#define MB_GCLOUD_DB "gcloud.db"
/* A sandbox's project id: "mcpbox-" and the first 12 hex digits of its id. */
void mb_gcloud_project_id(const char *sandbox_id, char out[32]);
/* (Re)makes the project database at db_path: a copy of `baseline` when that
 * file exists (the state after the last initialize), else a new empty
 * project `project_id`; the file is owned by uid/gid (the sandbox's root).
 * Replaces db_path atomically. */
int mb_gcloud_provision(const char *db_path, const char *baseline, const char *project_id,
                        unsigned uid, mb_err *err);
/* A service-account key file (JSON text, malloc'ed) for the project: a
 * fresh RSA key and token_uri, which the REST facade's /token honours. */
char *mb_gcloud_sa_key(const char *project_id, const char *token_uri, mb_err *err);
/* Writes the public half of a key file's RSA key (PEM) to pub_path (the
 * sandbox's state directory, MB_GCLOUD_PUB next to its database), where
 * the token endpoint checks JWT signatures against it. */
#define MB_GCLOUD_PUB "gcloud-key.pub"
int mb_gcloud_sa_pub(const char *key_json, const char *pub_path, mb_err *err);
/* Snapshots the project at db_path into `baseline` (VACUUM INTO). */
int mb_gcloud_snapshot(const char *db_path, const char *baseline, mb_err *err);

/* ------------------------------------------------------- REST facade */

/* BigQuery v2 and the Cloud Storage JSON API on their own port (rest.c). */
typedef struct mb_gcloud_rest mb_gcloud_rest;
/* The project database path of a project id (malloc'ed), NULL when no live
 * sandbox has that project. Called from the facade's threads. */
typedef char *(*mb_gcloud_resolve_fn)(void *ctx, const char *project);
int mb_gcloud_rest_start(const char *listen_on, mb_gcloud_resolve_fn resolve, void *ctx,
                         mb_gcloud_rest **out, mb_err *err);
int mb_gcloud_rest_port(const mb_gcloud_rest *rs);
void mb_gcloud_rest_stop(mb_gcloud_rest *rs);

/* ---------------------------------------------- Klavis GoogleCloudData */

/* Replaces the project's state with a GoogleCloudData document (datasets,
 * tables, buckets, objects with content, log_entries, log_sinks,
 * log_buckets, instances). Problems are appended to detail as FastAPI
 * validation items ({type, loc, msg}); nothing changes then. */
int mb_gc_import(mb_gc *gc, json_t *data, json_t *detail, mb_err *err);
/* The state as GoogleCloudData (tables with row_count, objects without content). */
json_t *mb_gc_export(mb_gc *gc);
/* Empties the project. */
int mb_gc_clear(mb_gc *gc, mb_err *err);

#endif /* MB_GCLOUD_H */
