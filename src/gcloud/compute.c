/*
 * compute.c - Compute Engine instances in the project database: zones,
 * machine types, labels, and a state machine (PROVISIONING is skipped:
 * create, start, stop and reset finish at once and record a DONE operation).
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <stdlib.h>
#include <string.h>

const char *const mb_gc_zones[] = {
    "asia-east1-a",    "asia-east1-b",    "asia-northeast1-a", "asia-southeast1-a",
    "australia-southeast1-a", "europe-north1-a", "europe-west1-b", "europe-west1-c",
    "europe-west2-a",  "europe-west3-a",  "europe-west4-a",    "northamerica-northeast1-a",
    "southamerica-east1-a", "us-central1-a", "us-central1-b",  "us-central1-c",
    "us-central1-f",   "us-east1-b",      "us-east1-c",        "us-east1-d",
    "us-east4-a",      "us-west1-a",      "us-west1-b",        "us-west2-a",
    NULL};

static int zone_ok(const char *zone)
{
    for (const char *const *z = mb_gc_zones; *z; z++)
        if (!strcmp(*z, zone)) return 1;
    return 0;
}

static void new_op(mb_gc *gc, const char *zone, const char *type, const char *target, char op[64])
{
    unsigned char r[8];
    char hex[17];
    mb_random_bytes(r, sizeof r, NULL);
    mb_hex(r, sizeof r, hex);
    snprintf(op, 64, "operation-%lld-%s", (long long)mb_gc_clock_ms(gc), hex);
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "INSERT INTO __ce_operations VALUES(?,?,?,?,?)", &st, NULL)) return;
    sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, zone, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, type, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, target, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, mb_gc_clock_ms(gc));
    sqlite3_step(st);
    sqlite3_finalize(st);
}

static int name_ok(const char *name, mb_err *err)
{
    size_t n = name ? strlen(name) : 0;
    int ok = n >= 1 && n <= 63 && name[0] >= 'a' && name[0] <= 'z' && name[n - 1] != '-';
    for (size_t i = 0; ok && i < n; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '-';
    if (!ok)
        return mb_err_set(err, MB_EINVAL,
                          "Invalid value for field 'resource.name': '%.*s'. Must be a match of regex "
                          "'(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'",
                          (int)mb_utf8_cut(name ? name : "", n, 80), name ? name : "");
    return MB_OK;
}

int mb_gc_ce_create(mb_gc *gc, const char *name, const char *zone, const char *machine_type,
                    const char *status, json_t *labels, const char *description, char op[64],
                    mb_err *err)
{
    int rc = name_ok(name, err);
    if (rc) return rc;
    if (!zone || !zone_ok(zone))
        return mb_err_set(err, MB_ENOTFOUND, "The resource 'projects/%s/zones/%s' was not found",
                          gc->project, zone ? zone : "");
    json_t *have;
    if (!mb_gc_ce_get(gc, name, zone, &have, NULL)) {
        json_decref(have);
        return mb_err_set(err, MB_ECONFLICT,
                          "The resource 'projects/%s/zones/%s/instances/%s' already exists",
                          gc->project, zone, name);
    }
    static const char *const ST[] = {"RUNNING", "TERMINATED", "STOPPED", "SUSPENDED", NULL};
    const char *s = status && *status ? status : "RUNNING";
    int known = 0;
    for (const char *const *k = ST; *k; k++) known |= !strcmp(*k, s);
    if (!known) return mb_err_set(err, MB_EINVAL, "Invalid instance status %.40s", s);
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "INSERT INTO __ce_instances VALUES(?,?,?,?,?,?,?,?)", &st, err))) return rc;
    unsigned char r[6];
    mb_random_bytes(r, sizeof r, NULL);
    long long id = 0;
    for (int i = 0; i < 6; i++) id = id << 8 | r[i];
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, zone, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, machine_type && *machine_type ? machine_type : "e2-micro", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, !strcmp(s, "STOPPED") ? "TERMINATED" : s, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, description, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, labels ? json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS) : mb_strdup("{}"), -1, free);
    sqlite3_bind_int64(st, 7, id);
    sqlite3_bind_int64(st, 8, mb_gc_clock_ms(gc));
    if ((rc = mb_gc__step_done(gc, st, err))) return rc;
    if (op) new_op(gc, zone, "insert", name, op);
    return MB_OK;
}

static json_t *inst_row(mb_gc *gc, sqlite3_stmt *st)
{
    char ts[40];
    mb_gc__iso_ms(sqlite3_column_int64(st, 7), ts);
    json_t *labels = json_loads((const char *)sqlite3_column_text(st, 5), 0, NULL);
    (void)gc;
    return json_pack("{s:s,s:s,s:s,s:s,s:s?,s:o,s:I,s:s}", "name", sqlite3_column_text(st, 0), "zone",
                     sqlite3_column_text(st, 1), "machine_type", sqlite3_column_text(st, 2), "status",
                     sqlite3_column_text(st, 3), "description", sqlite3_column_text(st, 4), "labels",
                     labels ? labels : json_object(), "id", (json_int_t)sqlite3_column_int64(st, 6),
                     "created", ts);
}

int mb_gc_ce_get(mb_gc *gc, const char *name, const char *zone, json_t **out, mb_err *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT * FROM __ce_instances WHERE name=? AND zone=?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, zone, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) *out = inst_row(gc, st);
    sqlite3_finalize(st);
    if (!*out)
        return mb_err_set(err, MB_ENOTFOUND,
                          "The resource 'projects/%s/zones/%s/instances/%s' was not found",
                          gc->project, zone ? zone : "", name ? name : "");
    return MB_OK;
}

json_t *mb_gc_ce_list(mb_gc *gc, const char *zone)
{
    json_t *arr = json_array();
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "SELECT * FROM __ce_instances WHERE ?1 IS NULL OR ?1 = '' OR zone = ?1 "
                        "ORDER BY zone, name", &st, NULL))
        return arr;
    sqlite3_bind_text(st, 1, zone, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) json_array_append_new(arr, inst_row(gc, st));
    sqlite3_finalize(st);
    return arr;
}

int mb_gc_ce_action(mb_gc *gc, const char *name, const char *zone, const char *action,
                    char op[64], mb_err *err)
{
    json_t *inst;
    int rc = mb_gc_ce_get(gc, name, zone, &inst, err);
    if (rc) return rc;
    const char *status = json_string_value(json_object_get(inst, "status"));
    const char *next = NULL;
    if (!strcmp(action, "start")) next = "RUNNING";
    else if (!strcmp(action, "stop")) next = "TERMINATED";
    else if (!strcmp(action, "reset")) {
        if (strcmp(status, "RUNNING"))
            rc = mb_err_set(err, MB_EINVAL,
                            "Invalid value for field 'instance': '%s'. Instance must be RUNNING to "
                            "be reset.", name);
        next = "RUNNING";
    } else if (strcmp(action, "delete"))
        rc = mb_err_set(err, MB_EINVAL, "unknown action %s", action);
    json_decref(inst);
    if (rc) return rc;
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, next ? "UPDATE __ce_instances SET status=?3 WHERE name=?1 AND zone=?2"
                                   : "DELETE FROM __ce_instances WHERE name=?1 AND zone=?2",
                          &st, err)))
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, zone, -1, SQLITE_STATIC);
    if (next) sqlite3_bind_text(st, 3, next, -1, SQLITE_STATIC);
    if ((rc = mb_gc__step_done(gc, st, err))) return rc;
    if (op) new_op(gc, zone, action, name, op);
    return MB_OK;
}

int mb_gc_ce_operation(mb_gc *gc, const char *name, json_t **out, mb_err *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT name, zone, type, target, created FROM __ce_operations WHERE name=?",
                         &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        *out = json_pack("{s:s,s:s,s:s,s:s,s:s}", "name", sqlite3_column_text(st, 0), "zone",
                         sqlite3_column_text(st, 1), "type", sqlite3_column_text(st, 2), "target",
                         sqlite3_column_text(st, 3), "status", "DONE");
    sqlite3_finalize(st);
    if (!*out)
        return mb_err_set(err, MB_ENOTFOUND, "The resource 'projects/%s/zones/-/operations/%s' was not found",
                          gc->project, name ? name : "");
    return MB_OK;
}
