/*
 * klavis.c - the project as Klavis's GoogleCloudData document: import
 * (initialize), export (dump) and clear.
 *
 * GoogleCloudData: datasets[{id*, description, location, created_at,
 * updated_at}], tables[{dataset_id*, id*, description, fields[], row_count,
 * created_at}], buckets[{name*, storage_class, versioning_enabled,
 * lifecycle_rules[], created_at, updated_at}], objects[{bucket*, name*,
 * content_type, size, content, md5_hash, created_at, updated_at}],
 * log_entries[{log_name*, message, json_data, severity, timestamp,
 * resource_type, resource_labels}], log_sinks[{name*, filter, description,
 * destination}], log_buckets[{name*, retention_days, description}],
 * instances[{name*, zone*, machine_type, status, description, labels}].
 * Klavis's tables carry no rows; mcpbox also takes tables[].rows (objects as
 * for a streaming insert) so that a table can be seeded in one call, and
 * clock {now, frozen} (null: the host's time; absent: left as it is), the
 * project's clock (clock.c), which a dump gives back unless it is real.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <stdlib.h>
#include <string.h>

static void detail_add(json_t *detail, const char *type, const char *msg, json_t *input,
                       const char *list, size_t idx, const char *field)
{
    json_t *loc = json_pack("[s,s,I]", "body", list, (json_int_t)idx);
    if (field) json_array_append_new(loc, json_string(field));
    json_array_append_new(detail, json_pack("{s:s,s:o,s:s,s:O?}", "type", type, "loc", loc, "msg",
                                            msg, "input", input));
}

/* Checks list `name` of data: a list of objects whose `req` fields are strings. */
static json_t *list_of(json_t *data, const char *name, const char *const *req, json_t *detail)
{
    json_t *l = json_object_get(data, name);
    if (!l || json_is_null(l)) return NULL;
    if (!json_is_array(l)) {
        json_array_append_new(detail, json_pack("{s:s,s:[s,s],s:s,s:O}", "type", "list_type", "loc",
                                                "body", name, "msg", "Input should be a valid list",
                                                "input", l));
        return NULL;
    }
    size_t i;
    json_t *e;
    json_array_foreach(l, i, e) {
        if (!json_is_object(e)) {
            detail_add(detail, "model_type", "Input should be a valid dictionary or object to extract fields from", e, name, i, NULL);
            continue;
        }
        for (const char *const *r = req; *r; r++) {
            json_t *v = json_object_get(e, *r);
            if (!v) detail_add(detail, "missing", "Field required", e, name, i, *r);
            else if (!json_is_string(v)) detail_add(detail, "string_type", "Input should be a valid string", v, name, i, *r);
        }
    }
    return l;
}

static const char *str(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

int mb_gc_clear(mb_gc *gc, mb_err *err)
{
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT dataset, id FROM __bq_tables", &st, err);
    if (rc) return rc;
    json_t *drops = json_array();
    while (sqlite3_step(st) == SQLITE_ROW) {
        char *n = mb_gc__data_table((const char *)sqlite3_column_text(st, 0),
                                    (const char *)sqlite3_column_text(st, 1));
        json_array_append_new(drops, json_string(n));
        free(n);
    }
    sqlite3_finalize(st);
    size_t i;
    json_t *d;
    json_array_foreach(drops, i, d) {
        char *q = mb_asprintf("DROP TABLE IF EXISTS %s", json_string_value(d));
        rc = mb_gc__exec(gc, q, err);
        free(q);
        if (rc) break;
    }
    json_decref(drops);
    if (!rc)
        rc = mb_gc__exec(gc, "DELETE FROM __bq_datasets; DELETE FROM __bq_tables; DELETE FROM __bq_jobs; DELETE FROM __bq_results;"
                             "DELETE FROM __gcs_buckets; DELETE FROM __gcs_objects; DELETE FROM __log_entries;"
                             "DELETE FROM __log_sinks; DELETE FROM __log_buckets; DELETE FROM __ce_instances;"
                             "DELETE FROM __ce_operations;", err);
    return rc;
}

static int64_t when(json_t *o, const char *k)
{
    const char *s = str(o, k);
    long days;
    long long us;
    int ht;
    if (!s || mb_gc__ts_parse(s, &days, &us, &ht)) return 0;
    return (int64_t)days * 86400000LL + us / 1000;
}

int mb_gc_import(mb_gc *gc, json_t *data, json_t *detail, mb_err *err)
{
    if (data && !json_is_null(data) && !json_is_object(data)) {
        json_array_append_new(detail, json_pack("{s:s,s:[s],s:s,s:O}", "type", "model_type", "loc", "body",
                                                "msg", "Input should be a valid dictionary or object to extract fields from",
                                                "input", data));
        return mb_err_set(err, MB_EINVAL, "invalid GoogleCloudData");
    }
    static const char *const R_ID[] = {"id", NULL}, *const R_TB[] = {"dataset_id", "id", NULL},
                             *const R_NAME[] = {"name", NULL}, *const R_OBJ[] = {"bucket", "name", NULL},
                             *const R_LOG[] = {"log_name", NULL}, *const R_INST[] = {"name", "zone", NULL};
    json_t *datasets = list_of(data, "datasets", R_ID, detail);
    json_t *tables = list_of(data, "tables", R_TB, detail);
    json_t *buckets = list_of(data, "buckets", R_NAME, detail);
    json_t *objects = list_of(data, "objects", R_OBJ, detail);
    json_t *logs = list_of(data, "log_entries", R_LOG, detail);
    json_t *sinks = list_of(data, "log_sinks", R_NAME, detail);
    json_t *lbuckets = list_of(data, "log_buckets", R_NAME, detail);
    json_t *instances = list_of(data, "instances", R_INST, detail);
    if (json_array_size(detail)) return mb_err_set(err, MB_EINVAL, "invalid GoogleCloudData");
    int rc = mb_gc__begin(gc, err);
    if (rc) return rc;
    rc = mb_gc_clear(gc, err);
    size_t i;
    json_t *e;
    mb_err e2 = {0};
    /* mcpbox's extension: the project's clock, set first so that what the
     * document does not date is stamped on it */
    json_t *clock = data ? json_object_get(data, "clock") : NULL;
    if (!rc && clock && mb_gc_clock_apply(gc, clock, &e2)) {
        json_array_append_new(detail, json_pack("{s:s,s:[s,s],s:s,s:O}", "type", "value_error", "loc", "body",
                                                "clock", "msg", e2.msg, "input", clock));
        rc = MB_EINVAL;
    }
#define ITEM(list, name, call)                                                               \
    json_array_foreach(rc ? NULL : list, i, e) {                                             \
        if ((call)) {                                                                        \
            detail_add(detail, "value_error", e2.msg, e, name, i, NULL);                     \
            rc = MB_EINVAL;                                                                  \
        }                                                                                    \
    }
    ITEM(datasets, "datasets",
         mb_gc_bq_dataset_create(gc, str(e, "id"), str(e, "description"), str(e, "location"), &e2));
    json_array_foreach(rc ? NULL : datasets, i, e) {
        sqlite3_stmt *st;
        if (!mb_gc__prep(gc, "UPDATE __bq_datasets SET created=coalesce(nullif(?1,0), created), "
                             "modified=coalesce(nullif(?2,0), modified) WHERE id=?3", &st, NULL)) {
            sqlite3_bind_int64(st, 1, when(e, "created_at"));
            sqlite3_bind_int64(st, 2, when(e, "updated_at"));
            sqlite3_bind_text(st, 3, str(e, "id"), -1, SQLITE_STATIC);
            mb_gc__step_done(gc, st, NULL);
        }
    }
    json_array_foreach(rc ? NULL : tables, i, e) {
        json_t *d;
        if (mb_gc_bq_dataset_get(gc, str(e, "dataset_id"), &d, NULL))
            mb_gc_bq_dataset_create(gc, str(e, "dataset_id"), NULL, "US", NULL);
        json_decref(d);
        json_t *fields = json_object_get(e, "fields");
        if (mb_gc_bq_table_create(gc, str(e, "dataset_id"), str(e, "id"), json_is_array(fields) ? fields : NULL,
                                  str(e, "description"), &e2) ||
            (json_is_array(json_object_get(e, "rows")) &&
             mb_gc_bq_insert(gc, str(e, "dataset_id"), str(e, "id"), json_object_get(e, "rows"), NULL, &e2))) {
            detail_add(detail, "value_error", e2.msg, e, "tables", i, NULL);
            rc = MB_EINVAL;
        }
    }
    ITEM(buckets, "buckets",
         mb_gc_gcs_bucket_create(gc, str(e, "name"), str(e, "location"), str(e, "storage_class"), &e2) ||
             mb_gc_gcs_bucket_set(gc, str(e, "name"), "versioning",
                                  json_is_true(json_object_get(e, "versioning_enabled")) ? json_true() : json_false(), &e2) ||
             (json_is_array(json_object_get(e, "lifecycle_rules")) &&
              mb_gc_gcs_bucket_set(gc, str(e, "name"), "lifecycle", json_object_get(e, "lifecycle_rules"), &e2)));
    ITEM(objects, "objects",
         mb_gc_gcs_object_put(gc, str(e, "bucket"), str(e, "name"), str(e, "content") ? str(e, "content") : "",
                              str(e, "content") ? json_string_length(json_object_get(e, "content")) : 0,
                              str(e, "content_type"), &e2));
    ITEM(logs, "log_entries",
         mb_gc_log_write(gc, str(e, "log_name"), str(e, "message") ? str(e, "message") : "",
                         json_is_object(json_object_get(e, "json_data")) ? json_object_get(e, "json_data") : NULL,
                         str(e, "severity") ? str(e, "severity") : "INFO", when(e, "timestamp"),
                         str(e, "resource_type"),
                         json_is_object(json_object_get(e, "resource_labels")) ? json_object_get(e, "resource_labels") : NULL,
                         NULL, &e2));
    ITEM(sinks, "log_sinks",
         mb_gc_log_sink_create(gc, str(e, "name"), str(e, "destination") ? str(e, "destination") : "",
                               str(e, "filter"), &e2));
    ITEM(lbuckets, "log_buckets",
         mb_gc_log_bucket_create(gc, str(e, "name"), str(e, "location"),
                                 json_is_integer(json_object_get(e, "retention_days"))
                                     ? (int)json_integer_value(json_object_get(e, "retention_days")) : 30,
                                 str(e, "description"), &e2));
    ITEM(instances, "instances",
         mb_gc_ce_create(gc, str(e, "name"), str(e, "zone"), str(e, "machine_type"), str(e, "status"),
                         json_is_object(json_object_get(e, "labels")) ? json_object_get(e, "labels") : NULL,
                         str(e, "description"), NULL, &e2));
#undef ITEM
    if (!rc) rc = mb_gc__commit(gc, err);
    else {
        if (!err || !err->code) mb_err_set(err, rc, "invalid GoogleCloudData");
        else mb_err_set(err, rc, "invalid GoogleCloudData: %s", e2.msg);
    }
    if (rc) {
        mb_gc__rollback(gc);
        mb_gc__clock_reload(gc);
    }
    return rc;
}

static json_t *iso(int64_t ms)
{
    char b[40];
    mb_gc__iso_ms(ms, b);
    return json_string(b);
}

json_t *mb_gc_export(mb_gc *gc)
{
    json_t *out = json_object();
    json_t *dsl = mb_gc_bq_dataset_list(gc), *datasets = json_array(), *tables = json_array();
    size_t i, k;
    json_t *d, *t;
    json_array_foreach(dsl, i, d) {
        const char *id = str(d, "id");
        json_array_append_new(datasets, json_pack("{s:s,s:O,s:O,s:o,s:o}", "id", id, "description",
                                                  json_object_get(d, "description") ?: json_null(),
                                                  "location", json_object_get(d, "location"), "created_at",
                                                  iso(json_integer_value(json_object_get(d, "created"))),
                                                  "updated_at", iso(json_integer_value(json_object_get(d, "modified")))));
        json_t *tl;
        if (mb_gc_bq_table_list(gc, id, &tl, NULL)) continue;
        json_array_foreach(tl, k, t) {
            json_t *info;
            if (mb_gc_bq_table_get(gc, id, str(t, "id"), &info, NULL)) continue;
            json_array_append_new(tables, json_pack("{s:s,s:s,s:O,s:O,s:O,s:o}", "dataset_id", id, "id",
                                                    str(t, "id"), "description",
                                                    json_object_get(info, "description") ?: json_null(),
                                                    "fields", json_object_get(info, "fields"), "row_count",
                                                    json_object_get(info, "num_rows") ?: json_integer(0),
                                                    "created_at", iso(json_integer_value(json_object_get(info, "created")))));
            json_decref(info);
        }
        json_decref(tl);
    }
    json_decref(dsl);
    json_object_set_new(out, "datasets", datasets);
    json_object_set_new(out, "tables", tables);
    json_t *bl = mb_gc_gcs_bucket_list(gc), *buckets = json_array(), *objects = json_array();
    json_array_foreach(bl, i, d) {
        json_array_append_new(buckets, json_pack("{s:O,s:O,s:O,s:b,s:O,s:o,s:o}", "name", json_object_get(d, "name"),
                                                 "location", json_object_get(d, "location"), "storage_class",
                                                 json_object_get(d, "storage_class"), "versioning_enabled",
                                                 json_is_true(json_object_get(d, "versioning")), "lifecycle_rules",
                                                 json_object_get(d, "lifecycle"), "created_at",
                                                 iso(json_integer_value(json_object_get(d, "created"))), "updated_at",
                                                 iso(json_integer_value(json_object_get(d, "updated")))));
        json_t *items;
        if (mb_gc_gcs_object_list(gc, str(d, "name"), "", NULL, &items, NULL, NULL)) continue;
        json_array_foreach(items, k, t)
            json_array_append_new(objects, json_pack("{s:O,s:O,s:O,s:O,s:O,s:o,s:o}", "bucket", json_object_get(t, "bucket"),
                                                     "name", json_object_get(t, "name"), "content_type",
                                                     json_object_get(t, "content_type"), "size", json_object_get(t, "size"),
                                                     "md5_hash", json_object_get(t, "md5"), "created_at",
                                                     iso(json_integer_value(json_object_get(t, "created"))), "updated_at",
                                                     iso(json_integer_value(json_object_get(t, "updated")))));
        json_decref(items);
    }
    json_decref(bl);
    json_object_set_new(out, "buckets", buckets);
    json_object_set_new(out, "objects", objects);
    json_t *entries = NULL, *logs = json_array();
    if (!mb_gc_log_list(gc, NULL, 0, &entries, NULL))
        json_array_foreach(entries, i, d) {
            const char *ln = str(d, "log_name");
            const char *s = strstr(ln, "/logs/");
            json_array_append_new(logs, json_pack("{s:s,s:O,s:O,s:O,s:O,s:O,s:O}", "log_name", s ? s + 6 : ln,
                                                  "message", json_object_get(d, "text_payload") ?: json_null(),
                                                  "json_data", json_object_get(d, "json_payload") ?: json_null(),
                                                  "severity", json_object_get(d, "severity"), "timestamp",
                                                  json_object_get(d, "timestamp"), "resource_type",
                                                  json_object_get(json_object_get(d, "resource"), "type"),
                                                  "resource_labels",
                                                  json_object_get(json_object_get(d, "resource"), "labels")));
        }
    json_decref(entries);
    json_object_set_new(out, "log_entries", logs);
    json_t *sl = mb_gc_log_sink_list(gc), *sinks = json_array();
    json_array_foreach(sl, i, d)
        json_array_append_new(sinks, json_pack("{s:O,s:O,s:O,s:O,s:o,s:o}", "name", json_object_get(d, "name"),
                                               "destination", json_object_get(d, "destination") ?: json_null(),
                                               "filter", json_object_get(d, "filter") ?: json_null(),
                                               "description", json_object_get(d, "description") ?: json_null(),
                                               "created_at", iso(json_integer_value(json_object_get(d, "created"))),
                                               "updated_at", iso(json_integer_value(json_object_get(d, "updated")))));
    json_decref(sl);
    json_object_set_new(out, "log_sinks", sinks);
    json_t *lb = mb_gc_log_bucket_list(gc), *lbs = json_array();
    json_array_foreach(lb, i, d)
        json_array_append_new(lbs, json_pack("{s:O,s:O,s:O,s:o,s:o}", "name", json_object_get(d, "name"),
                                             "retention_days", json_object_get(d, "retention_days"), "description",
                                             json_object_get(d, "description") ?: json_null(), "created_at",
                                             iso(json_integer_value(json_object_get(d, "created"))), "updated_at",
                                             iso(json_integer_value(json_object_get(d, "updated")))));
    json_decref(lb);
    json_object_set_new(out, "log_buckets", lbs);
    json_t *il = mb_gc_ce_list(gc, NULL), *insts = json_array();
    json_array_foreach(il, i, d)
        json_array_append_new(insts, json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "name", json_object_get(d, "name"),
                                               "zone", json_object_get(d, "zone"), "machine_type",
                                               json_object_get(d, "machine_type"), "status", json_object_get(d, "status"),
                                               "description", json_object_get(d, "description") ?: json_null(),
                                               "labels", json_object_get(d, "labels"), "created_at",
                                               json_object_get(d, "created")));
    json_decref(il);
    json_object_set_new(out, "instances", insts);
    json_t *clock = mb_gc_clock_get(gc);
    if (strcmp(str(clock, "mode"), "real")) json_object_set(out, "clock", clock);
    json_decref(clock);
    return out;
}
