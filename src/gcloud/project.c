/*
 * project.c - one project's database: opening it, its catalog tables, the
 * SQLite helpers the other files share, and the BigQuery catalog (datasets
 * and tables with their schemas).
 *
 * Catalog tables (double-underscore names never collide with data tables,
 * which are named "dataset.table"):
 *   __meta(key, value)                       project id, format version
 *   __bq_datasets(id, description, location, labels, created, modified)
 *   __bq_tables(dataset, id, description, fields, created, modified)
 *   __bq_jobs, __bq_results (REST query jobs' results), __gcs_*, __log_*, __ce_*
 *                                            see their files
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char SCHEMA[] =
    "PRAGMA foreign_keys=OFF;"
    "BEGIN;"
    "CREATE TABLE IF NOT EXISTS __meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE IF NOT EXISTS __bq_datasets(id TEXT PRIMARY KEY, description TEXT,"
    " location TEXT, labels TEXT, created INTEGER, modified INTEGER);"
    "CREATE TABLE IF NOT EXISTS __bq_tables(dataset TEXT, id TEXT, description TEXT,"
    " fields TEXT, created INTEGER, modified INTEGER, PRIMARY KEY(dataset, id));"
    "CREATE TABLE IF NOT EXISTS __bq_jobs(seq INTEGER PRIMARY KEY, id TEXT UNIQUE, type TEXT,"
    " state TEXT, query TEXT, error TEXT, created INTEGER, ended INTEGER);"
    "CREATE TABLE IF NOT EXISTS __bq_results(job_id TEXT PRIMARY KEY, statement_type TEXT,"
    " affected INTEGER, fields TEXT, rows TEXT);"
    "CREATE TABLE IF NOT EXISTS __gcs_buckets(name TEXT PRIMARY KEY, location TEXT,"
    " storage_class TEXT, versioning INTEGER, lifecycle TEXT, labels TEXT, created INTEGER,"
    " updated INTEGER);"
    "CREATE TABLE IF NOT EXISTS __gcs_objects(bucket TEXT, name TEXT, data BLOB,"
    " content_type TEXT, size INTEGER, md5 TEXT, crc32c TEXT, generation INTEGER,"
    " created INTEGER, updated INTEGER, PRIMARY KEY(bucket, name));"
    "CREATE TABLE IF NOT EXISTS __log_entries(seq INTEGER PRIMARY KEY, log_name TEXT,"
    " severity TEXT, severity_num INTEGER, ts INTEGER, text_payload TEXT, json_payload TEXT,"
    " resource_type TEXT, resource_labels TEXT, insert_id TEXT, received INTEGER, extra TEXT);"
    "CREATE TABLE IF NOT EXISTS __log_sinks(name TEXT PRIMARY KEY, destination TEXT,"
    " filter TEXT, description TEXT, created INTEGER, updated INTEGER);"
    "CREATE TABLE IF NOT EXISTS __log_buckets(name TEXT PRIMARY KEY, location TEXT,"
    " retention_days INTEGER, description TEXT, created INTEGER, updated INTEGER);"
    "CREATE TABLE IF NOT EXISTS __ce_instances(name TEXT, zone TEXT, machine_type TEXT,"
    " status TEXT, description TEXT, labels TEXT, id INTEGER, created INTEGER,"
    " PRIMARY KEY(name, zone));"
    "CREATE TABLE IF NOT EXISTS __ce_operations(name TEXT PRIMARY KEY, zone TEXT, type TEXT,"
    " target TEXT, created INTEGER);"
    "CREATE TABLE IF NOT EXISTS __gcs_uploads(id TEXT PRIMARY KEY, bucket TEXT, name TEXT,"
    " content_type TEXT, total INTEGER, data BLOB, created INTEGER);"
    "COMMIT;";

int mb_gc__exec(mb_gc *gc, const char *sql, mb_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(gc->db, sql, NULL, NULL, &msg) == SQLITE_OK) return MB_OK;
    int rc = mb_err_set(err, MB_EIO, "database: %s", msg ? msg : sqlite3_errmsg(gc->db));
    sqlite3_free(msg);
    return rc;
}

int mb_gc__prep(mb_gc *gc, const char *sql, sqlite3_stmt **st, mb_err *err)
{
    if (sqlite3_prepare_v2(gc->db, sql, -1, st, NULL) == SQLITE_OK) return MB_OK;
    return mb_err_set(err, MB_EIO, "database: %s", sqlite3_errmsg(gc->db));
}

int mb_gc__begin(mb_gc *gc, mb_err *err) { return mb_gc__exec(gc, "BEGIN IMMEDIATE", err); }
int mb_gc__commit(mb_gc *gc, mb_err *err) { return mb_gc__exec(gc, "COMMIT", err); }
void mb_gc__rollback(mb_gc *gc)
{
    if (!sqlite3_get_autocommit(gc->db)) sqlite3_exec(gc->db, "ROLLBACK", NULL, NULL, NULL);
}

char *mb_gc__data_table(const char *dataset, const char *table)
{
    return mb_asprintf("\"%s.%s\"", dataset, table);
}

int mb_gc__check_id(const char *what, const char *id, mb_err *err)
{
    size_t n = id ? strlen(id) : 0;
    size_t max = !strcmp(what, "Bucket") ? 222 : 1024;
    if (!n || n > max)
        return mb_err_set(err, MB_EINVAL, "Invalid %s ID: it must be 1 to %zu characters", what,
                          max);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        int ok = isalnum(c) || c == '_';
        if (!strcmp(what, "Bucket") || !strcmp(what, "Sink")) ok = ok || c == '-' || c == '.';
        if (!strcmp(what, "Table")) ok = ok || c == '-' || c >= 0x80;
        if (!ok)
            return mb_err_set(err, MB_EINVAL,
                              "Invalid %s ID \"%.*s\": it may contain only letters, digits and "
                              "underscores%s",
                              what, (int)mb_utf8_cut(id, n, 200), id,
                              !strcmp(what, "Bucket") || !strcmp(what, "Sink") ? ", dashes and dots" : "");
    }
    return MB_OK;
}

int mb_gc_open(const char *path, const char *project_id, mb_gc **out, mb_err *err)
{
    *out = NULL;
    sqlite3 *db = NULL;
    /* The file lies in a directory the sandbox writes: never follow a
     * symlink there, keep the journal and temp files in memory (a planted
     * "-journal" symlink is never opened), and distrust the schema. */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                                       SQLITE_OPEN_NOFOLLOW,
                        NULL) != SQLITE_OK) {
        int rc = mb_err_set(err, MB_EIO, "cannot open %s: %s", path,
                            db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 10000);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    /* "name" is always an identifier: an unknown column must be an error,
     * never SQLite's legacy fallback to a string literal */
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, NULL);
    mb_gc *gc = mb_calloc(1, sizeof *gc);
    gc->db = db;
    /* The project lives on the sandbox's workspace tmpfs and dies with it:
     * no fsync buys nothing there (and a reset replaces the file whole). */
    int rc = mb_gc__exec(gc, "PRAGMA case_sensitive_like=ON; PRAGMA synchronous=OFF; "
                                 "PRAGMA journal_mode=MEMORY; PRAGMA temp_store=MEMORY", err);
    if (!rc) rc = mb_gc__exec(gc, SCHEMA, err); /* one transaction: one sync, not one per table */
    if (rc) mb_gc__rollback(gc);
    /* a project made before log entries kept their receive time gets the column */
    sqlite3_stmt *probe = NULL;
    if (!rc && sqlite3_prepare_v2(db, "SELECT received FROM __log_entries LIMIT 0", -1, &probe, NULL) != SQLITE_OK)
        rc = mb_gc__exec(gc, "ALTER TABLE __log_entries ADD COLUMN received INTEGER", err);
    sqlite3_finalize(probe);
    /* and one made before they kept labels, trace and httpRequest, the column for those */
    probe = NULL;
    if (!rc && sqlite3_prepare_v2(db, "SELECT extra FROM __log_entries LIMIT 0", -1, &probe, NULL) != SQLITE_OK)
        rc = mb_gc__exec(gc, "ALTER TABLE __log_entries ADD COLUMN extra TEXT", err);
    sqlite3_finalize(probe);
    if (!rc && mb_gc__udf_register(db) != SQLITE_OK)
        rc = mb_err_set(err, MB_EIO, "cannot register functions: %s", sqlite3_errmsg(db));
    sqlite3_stmt *st = NULL;
    int fresh = 0;
    if (!rc) rc = mb_gc__prep(gc, "SELECT value FROM __meta WHERE key='project'", &st, err);
    if (!rc) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *have = (const char *)sqlite3_column_text(st, 0);
            if (project_id && *project_id && strcmp(have, project_id))
                rc = mb_err_set(err, MB_ECONFLICT, "%s holds project %s, not %s", path, have,
                                project_id);
            gc->project = mb_strdup(have);
        } else if (!project_id || !*project_id) {
            rc = mb_err_set(err, MB_EINVAL, "%s holds no project and none was given", path);
        } else {
            gc->project = mb_strdup(project_id);
            fresh = 1;
            sqlite3_stmt *ins;
            rc = mb_gc__prep(gc, "INSERT INTO __meta VALUES('project', ?)", &ins, err);
            if (!rc) {
                sqlite3_bind_text(ins, 1, project_id, -1, SQLITE_STATIC);
                if (sqlite3_step(ins) != SQLITE_DONE)
                    rc = mb_err_set(err, MB_EIO, "database: %s", sqlite3_errmsg(db));
                sqlite3_finalize(ins);
            }
        }
    }
    sqlite3_finalize(st);
    if (!rc) rc = mb_gc__clock_load(gc);
    if (!rc && fresh) rc = mb_gc__set_created(gc, err);
    if (rc) {
        mb_gc_close(gc);
        return rc;
    }
    *out = gc;
    return MB_OK;
}

void mb_gc_close(mb_gc *gc)
{
    if (!gc) return;
    mb_gc__clock_forget(gc);
    sqlite3_close(gc->db);
    free(gc->project);
    free(gc);
}

const char *mb_gc_project(const mb_gc *gc) { return gc->project; }

/* ------------------------------------------------------------- types */

static const struct {
    const char *alias, *canon;
} TYPES[] = {
    {"STRING", "STRING"},       {"BYTES", "BYTES"},         {"INTEGER", "INTEGER"},
    {"INT64", "INTEGER"},       {"INT", "INTEGER"},         {"SMALLINT", "INTEGER"},
    {"BIGINT", "INTEGER"},      {"TINYINT", "INTEGER"},     {"BYTEINT", "INTEGER"},
    {"FLOAT", "FLOAT"},         {"FLOAT64", "FLOAT"},       {"NUMERIC", "NUMERIC"},
    {"DECIMAL", "NUMERIC"},     {"BIGNUMERIC", "BIGNUMERIC"}, {"BIGDECIMAL", "BIGNUMERIC"},
    {"BOOLEAN", "BOOLEAN"},     {"BOOL", "BOOLEAN"},        {"TIMESTAMP", "TIMESTAMP"},
    {"DATE", "DATE"},           {"TIME", "TIME"},           {"DATETIME", "DATETIME"},
    {"RECORD", "RECORD"},       {"STRUCT", "RECORD"},       {"JSON", "JSON"},
    {"GEOGRAPHY", "GEOGRAPHY"},
};

const char *mb_gc__type_canon(const char *type)
{
    for (size_t i = 0; type && i < sizeof TYPES / sizeof *TYPES; i++)
        if (!strcasecmp(type, TYPES[i].alias)) return TYPES[i].canon;
    return NULL;
}

const char *mb_gc__affinity(const char *type, const char *mode)
{
    if (mode && !strcmp(mode, "REPEATED")) return "TEXT";
    if (!strcmp(type, "INTEGER") || !strcmp(type, "BOOLEAN")) return "INTEGER";
    if (!strcmp(type, "FLOAT") || !strcmp(type, "NUMERIC") || !strcmp(type, "BIGNUMERIC"))
        return "REAL";
    if (!strcmp(type, "BYTES")) return "BLOB";
    return "TEXT";
}

static int fields_check_at(json_t *fields, int depth, mb_err *err)
{
    if (!json_is_array(fields)) return mb_err_set(err, MB_EINVAL, "Schema fields must be a list");
    if (depth > 15) return mb_err_set(err, MB_EINVAL, "Schema nests RECORDs deeper than 15");
    size_t i, j;
    json_t *f;
    json_array_foreach(fields, i, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        const char *type = json_string_value(json_object_get(f, "type"));
        if (!json_is_object(f) || !name || !type)
            return mb_err_set(err, MB_EINVAL, "Each schema field needs a name and a type");
        size_t n = strlen(name);
        if (!n || n > 300 || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
            return mb_err_set(err, MB_EINVAL,
                              "Invalid field name \"%.*s\". Fields must contain only letters, "
                              "numbers, and underscores, start with a letter or underscore, and "
                              "be at most 300 characters long.",
                              (int)mb_utf8_cut(name, n, 300), name);
        for (size_t k = 0; k < n; k++)
            if (!isalnum((unsigned char)name[k]) && name[k] != '_' && name[k] != ' ' &&
                name[k] != '-')
                return mb_err_set(err, MB_EINVAL,
                                  "Invalid field name \"%.*s\". Fields must contain only letters, "
                                  "numbers, and underscores, start with a letter or underscore, "
                                  "and be at most 300 characters long.",
                                  (int)mb_utf8_cut(name, n, 300), name);
        for (j = 0; j < i; j++)
            if (!strcasecmp(name, json_string_value(json_object_get(json_array_get(fields, j),
                                                                       "name"))))
                return mb_err_set(err, MB_EINVAL, "Duplicate column names in the schema: %s", name);
        const char *canon = mb_gc__type_canon(type);
        if (!canon) return mb_err_set(err, MB_EINVAL, "Invalid value for type: %.64s is not a valid value", type);
        json_object_set_new(f, "type", json_string(canon));
        const char *mode = json_string_value(json_object_get(f, "mode"));
        if (!mode || json_is_null(json_object_get(f, "mode"))) mode = "NULLABLE";
        if (strcasecmp(mode, "NULLABLE") && strcasecmp(mode, "REQUIRED") &&
            strcasecmp(mode, "REPEATED"))
            return mb_err_set(err, MB_EINVAL, "Invalid value for mode: %.64s is not a valid value", mode);
        char up[16];
        snprintf(up, sizeof up, "%s", mode);
        for (char *c = up; *c; c++) *c = (char)toupper((unsigned char)*c);
        json_object_set_new(f, "mode", json_string(up));
        json_t *sub = json_object_get(f, "fields");
        if (!strcmp(canon, "RECORD")) {
            if (!json_array_size(sub))
                return mb_err_set(err, MB_EINVAL, "Field %s is type RECORD but has no schema", name);
            int rc = fields_check_at(sub, depth + 1, err);
            if (rc) return rc;
        } else if (sub && json_array_size(sub)) {
            return mb_err_set(err, MB_EINVAL, "Field %s is type %s and cannot have subfields", name, canon);
        } else {
            json_object_del(f, "fields");
        }
    }
    return MB_OK;
}

int mb_gc__fields_check(json_t *fields, mb_err *err) { return fields_check_at(fields, 0, err); }

/* ----------------------------------------------------------- datasets */

int mb_gc__step_done(mb_gc *gc, sqlite3_stmt *st, mb_err *err)
{
    int s = sqlite3_step(st);
    int rc = s == SQLITE_DONE || s == SQLITE_ROW
                 ? MB_OK
                 : mb_err_set(err, MB_EIO, "database: %s", sqlite3_errmsg(gc->db));
    sqlite3_finalize(st);
    return rc;
}

int mb_gc_bq_dataset_create(mb_gc *gc, const char *id, const char *description,
                            const char *location, mb_err *err)
{
    int rc = mb_gc__check_id("Dataset", id, err);
    if (rc) return rc;
    json_t *have;
    if (mb_gc_bq_dataset_get(gc, id, &have, NULL) == MB_OK) {
        json_decref(have);
        return mb_err_set(err, MB_ECONFLICT, "Already Exists: Dataset %s:%s", gc->project, id);
    }
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "INSERT INTO __bq_datasets VALUES(?,?,?,'{}',?,?)", &st, err)))
        return rc;
    int64_t now = mb_gc_clock_ms(gc);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, description, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, location && *location ? location : "US", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, now);
    sqlite3_bind_int64(st, 5, now);
    return mb_gc__step_done(gc, st, err);
}

static json_t *dataset_row(sqlite3_stmt *st)
{
    const char *labels = (const char *)sqlite3_column_text(st, 3);
    json_t *l = labels ? json_loads(labels, 0, NULL) : NULL;
    return json_pack("{s:s,s:s?,s:s,s:o,s:I,s:I}", "id", sqlite3_column_text(st, 0),
                     "description", sqlite3_column_text(st, 1), "location",
                     sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "US",
                     "labels", l ? l : json_object(), "created",
                     (json_int_t)sqlite3_column_int64(st, 4), "modified",
                     (json_int_t)sqlite3_column_int64(st, 5));
}

int mb_gc_bq_dataset_get(mb_gc *gc, const char *id, json_t **out, mb_err *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT id, description, location, labels, created, modified "
                             "FROM __bq_datasets WHERE id=?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) *out = dataset_row(st);
    sqlite3_finalize(st);
    if (!*out) return mb_err_set(err, MB_ENOTFOUND, "Not found: Dataset %s:%s", gc->project, id);
    return MB_OK;
}

json_t *mb_gc_bq_dataset_list(mb_gc *gc)
{
    json_t *arr = json_array();
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "SELECT id, description, location, labels, created, modified "
                        "FROM __bq_datasets ORDER BY id", &st, NULL))
        return arr;
    while (sqlite3_step(st) == SQLITE_ROW) json_array_append_new(arr, dataset_row(st));
    sqlite3_finalize(st);
    return arr;
}

int mb_gc_bq_dataset_delete(mb_gc *gc, const char *id, int delete_contents, mb_err *err)
{
    json_t *ds;
    int rc = mb_gc_bq_dataset_get(gc, id, &ds, err);
    if (rc) return rc;
    json_decref(ds);
    json_t *tables;
    if ((rc = mb_gc_bq_table_list(gc, id, &tables, err))) return rc;
    if (json_array_size(tables) && !delete_contents) {
        json_decref(tables);
        return mb_err_set(err, MB_EINVAL, "Dataset %s:%s is still in use", gc->project, id);
    }
    if ((rc = mb_gc__begin(gc, err))) {
        json_decref(tables);
        return rc;
    }
    size_t i;
    json_t *t;
    json_array_foreach(tables, i, t) {
        if ((rc = mb_gc_bq_table_delete(gc, id, json_string_value(json_object_get(t, "id")), err)))
            break;
    }
    json_decref(tables);
    sqlite3_stmt *st;
    if (!rc && !(rc = mb_gc__prep(gc, "DELETE FROM __bq_datasets WHERE id=?", &st, err))) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        rc = mb_gc__step_done(gc, st, err);
    }
    if (!rc) rc = mb_gc__commit(gc, err);
    if (rc) mb_gc__rollback(gc);
    return rc;
}

/* ------------------------------------------------------------- tables */

int mb_gc_bq_table_create(mb_gc *gc, const char *dataset, const char *table, json_t *fields,
                          const char *description, mb_err *err)
{
    json_t *ds;
    int rc = mb_gc_bq_dataset_get(gc, dataset, &ds, err);
    if (rc) return rc;
    json_decref(ds);
    if ((rc = mb_gc__check_id("Table", table, err))) return rc;
    json_t *f = fields ? json_deep_copy(fields) : json_array();
    if ((rc = mb_gc__fields_check(f, err))) {
        json_decref(f);
        return rc;
    }
    json_t *have = mb_gc__table_fields(gc, dataset, table);
    if (have) {
        json_decref(have);
        json_decref(f);
        return mb_err_set(err, MB_ECONFLICT, "Already Exists: Table %s:%s.%s", gc->project,
                          dataset, table);
    }
    mb_buf ddl = {0};
    char *name = mb_gc__data_table(dataset, table);
    mb_buf_printf(&ddl, "CREATE TABLE %s(", name);
    free(name);
    size_t i;
    json_t *fld;
    json_array_foreach(f, i, fld) {
        const char *fname = json_string_value(json_object_get(fld, "name"));
        mb_buf_printf(&ddl, "%s\"%s\" %s", i ? ", " : "", fname,
                      mb_gc__affinity(json_string_value(json_object_get(fld, "type")),
                                      json_string_value(json_object_get(fld, "mode"))));
    }
    if (!json_array_size(f)) mb_buf_puts(&ddl, "\"__empty\" TEXT");
    mb_buf_puts(&ddl, ")");
    char *ftext = json_dumps(f, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(f);
    sqlite3_stmt *st = NULL;
    int own_tx = sqlite3_get_autocommit(gc->db);
    rc = own_tx ? mb_gc__begin(gc, err) : MB_OK;
    if (!rc) rc = mb_gc__exec(gc, ddl.data, err);
    if (!rc) rc = mb_gc__prep(gc, "INSERT INTO __bq_tables VALUES(?,?,?,?,?,?)", &st, err);
    if (!rc) {
        int64_t now = mb_gc_clock_ms(gc);
        sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, table, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, description, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, ftext, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, now);
        sqlite3_bind_int64(st, 6, now);
        rc = mb_gc__step_done(gc, st, err);
    }
    if (!rc && own_tx) rc = mb_gc__commit(gc, err);
    if (rc && own_tx) mb_gc__rollback(gc);
    free(ftext);
    mb_buf_free(&ddl);
    return rc;
}

json_t *mb_gc__table_fields(mb_gc *gc, const char *dataset, const char *table)
{
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "SELECT fields FROM __bq_tables WHERE dataset=? AND id=?", &st, NULL))
        return NULL;
    sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, table, -1, SQLITE_STATIC);
    json_t *f = NULL;
    if (sqlite3_step(st) == SQLITE_ROW)
        f = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    sqlite3_finalize(st);
    return f;
}

int mb_gc_bq_table_get(mb_gc *gc, const char *dataset, const char *table, json_t **out,
                       mb_err *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT description, fields, created, modified FROM __bq_tables "
                             "WHERE dataset=? AND id=?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, table, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        json_t *f = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
        *out = json_pack("{s:s,s:s,s:s?,s:o,s:I,s:I}", "id", table, "dataset", dataset,
                         "description", sqlite3_column_text(st, 0), "fields",
                         f ? f : json_array(), "created", (json_int_t)sqlite3_column_int64(st, 2),
                         "modified", (json_int_t)sqlite3_column_int64(st, 3));
    }
    sqlite3_finalize(st);
    if (!*out)
        return mb_err_set(err, MB_ENOTFOUND, "Not found: Table %s:%s.%s", gc->project, dataset,
                          table);
    char *name = mb_gc__data_table(dataset, table);
    char *q = mb_asprintf("SELECT count(*) FROM %s", name);
    free(name);
    if (!mb_gc__prep(gc, q, &st, NULL)) {
        if (sqlite3_step(st) == SQLITE_ROW)
            json_object_set_new(*out, "num_rows", json_integer(sqlite3_column_int64(st, 0)));
        sqlite3_finalize(st);
    }
    free(q);
    return MB_OK;
}

int mb_gc_bq_table_list(mb_gc *gc, const char *dataset, json_t **out, mb_err *err)
{
    *out = NULL;
    json_t *ds;
    int rc = mb_gc_bq_dataset_get(gc, dataset, &ds, err);
    if (rc) return rc;
    json_decref(ds);
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "SELECT id, created FROM __bq_tables WHERE dataset=? ORDER BY id",
                          &st, err)))
        return rc;
    sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
    *out = json_array();
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(*out, json_pack("{s:s,s:I}", "id", sqlite3_column_text(st, 0),
                                              "created", (json_int_t)sqlite3_column_int64(st, 1)));
    sqlite3_finalize(st);
    return MB_OK;
}

int mb_gc_bq_table_delete(mb_gc *gc, const char *dataset, const char *table, mb_err *err)
{
    json_t *f = mb_gc__table_fields(gc, dataset, table);
    if (!f)
        return mb_err_set(err, MB_ENOTFOUND, "Not found: Table %s:%s.%s", gc->project, dataset,
                          table);
    json_decref(f);
    char *name = mb_gc__data_table(dataset, table);
    char *q = mb_asprintf("DROP TABLE IF EXISTS %s", name);
    free(name);
    int rc = mb_gc__exec(gc, q, err);
    free(q);
    sqlite3_stmt *st;
    if (!rc && !(rc = mb_gc__prep(gc, "DELETE FROM __bq_tables WHERE dataset=? AND id=?", &st, err))) {
        sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, table, -1, SQLITE_STATIC);
        rc = mb_gc__step_done(gc, st, err);
    }
    return rc;
}
