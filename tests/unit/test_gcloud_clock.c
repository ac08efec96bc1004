/*
 * test_gcloud_clock.c - a project's clock (src/gcloud/clock.c): real by
 * default; frozen and running clocks read by CURRENT_DATE() /
 * CURRENT_TIMESTAMP() / CURRENT_DATETIME() and by what the emulator stamps
 * (dataset and table creation, jobs, objects, log entries, instances); one
 * instant for a whole query; two projects open in one process, each on its
 * own clock; kept in the file (reopen, snapshot, GoogleCloudData import and
 * export); MCPBOX_GCLOUD_CLOCK for new projects; bad values refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcloud/gcloud.h"
#include "gcloud/gcloud_int.h"
#include "util/util.h"

/* 2025-03-10T09:00:00Z */
#define FROZEN_MS 1741597200000LL

static char *tmpdir(void)
{
    char t[] = "/tmp/mb-gcclock-XXXXXX";
    assert_non_null(mkdtemp(t));
    return mb_strdup(t);
}

static mb_gc *open_at(const char *dir, const char *name, const char *project)
{
    char *path = mb_asprintf("%s/%s", dir, name);
    mb_gc *gc = NULL;
    mb_err err = {0};
    assert_int_equal(mb_gc_open(path, project, &gc, &err), MB_OK);
    free(path);
    return gc;
}

/* The first row's values of a query, as one JSON text. */
static char *row1(mb_gc *gc, const char *sql)
{
    mb_gc_result r;
    mb_err err = {0};
    int rc = mb_gc_bq_query(gc, sql, NULL, 0, &r, &err);
    if (rc) fprintf(stderr, "%s: %s\n", sql, err.msg);
    assert_int_equal(rc, MB_OK);
    char *s = json_dumps(json_array_get(r.rows, 0), JSON_COMPACT);
    mb_gc_result_free(&r);
    return s;
}

static void cleanup(char *dir)
{
    char *cmd = mb_asprintf("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(dir);
}

static void test_real_by_default(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *gc = open_at(dir, "a.db", "mcpbox-aaaaaaaaaaaa");
    int64_t before = mb_gc_now_ms();
    int64_t now = mb_gc_clock_ms(gc);
    assert_true(now >= before && now - before < 5000);
    json_t *c = mb_gc_clock_get(gc);
    assert_string_equal(json_string_value(json_object_get(c, "mode")), "real");
    json_decref(c);
    mb_gc_close(gc);
    cleanup(dir);
}

static void test_frozen_clock_is_read_everywhere(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *gc = open_at(dir, "a.db", "mcpbox-aaaaaaaaaaaa");
    mb_err err = {0};
    assert_int_equal(mb_gc_clock_set(gc, "2025-03-10T09:00:00Z", 1, &err), MB_OK);
    assert_int_equal(mb_gc_clock_ms(gc), FROZEN_MS);
    char *s = row1(gc, "SELECT CURRENT_DATE() AS d, CURRENT_TIMESTAMP() AS t, CURRENT_DATETIME() AS dt, "
                       "DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY) AS y, CURRENT_TIME() AS tm, "
                       "TIME_SUB(CURRENT_TIME, INTERVAL 10 HOUR) AS back");
    assert_string_equal(s, "[\"2025-03-10\",\"2025-03-10 09:00:00\",\"2025-03-10 09:00:00\",\"2025-03-09\","
                           "\"09:00:00\",\"23:00:00\"]");
    free(s);
    /* what the emulator stamps */
    assert_int_equal(mb_gc_bq_dataset_create(gc, "d", NULL, NULL, &err), MB_OK);
    json_t *fields = json_loads("[{\"name\":\"x\",\"type\":\"INT64\"}]", 0, NULL);
    assert_int_equal(mb_gc_bq_table_create(gc, "d", "t", fields, NULL, &err), MB_OK);
    json_decref(fields);
    json_t *o;
    assert_int_equal(mb_gc_bq_table_get(gc, "d", "t", &o, &err), MB_OK);
    assert_int_equal(json_integer_value(json_object_get(o, "created")), FROZEN_MS);
    json_decref(o);
    assert_int_equal(mb_gc_bq_dataset_get(gc, "d", &o, &err), MB_OK);
    assert_int_equal(json_integer_value(json_object_get(o, "created")), FROZEN_MS);
    json_decref(o);
    char job[64];
    mb_gc_bq_job_add(gc, "query", "SELECT 1", NULL, job);
    assert_int_equal(mb_gc_bq_job_get(gc, job, &o, &err), MB_OK);
    assert_int_equal(json_integer_value(json_object_get(o, "created")), FROZEN_MS);
    json_decref(o);
    assert_int_equal(mb_gc_gcs_bucket_create(gc, "bkt", NULL, NULL, &err), MB_OK);
    assert_int_equal(mb_gc_gcs_object_put(gc, "bkt", "o.txt", "hi", 2, "text/plain", &err), MB_OK);
    assert_int_equal(mb_gc_gcs_object_meta(gc, "bkt", "o.txt", &o, &err), MB_OK);
    assert_int_equal(json_integer_value(json_object_get(o, "created")), FROZEN_MS);
    assert_int_equal(json_integer_value(json_object_get(o, "updated")), FROZEN_MS);
    json_decref(o);
    assert_int_equal(mb_gc_log_write(gc, "app", "hello", NULL, "INFO", 0, NULL, NULL, NULL, &err), MB_OK);
    assert_int_equal(mb_gc_log_list(gc, "timestamp >= \"2025-03-10T09:00:00Z\" AND timestamp <= \"2025-03-10T09:00:00Z\"",
                                    0, &o, &err), MB_OK);
    assert_int_equal(json_array_size(o), 1);
    json_decref(o);
    char op[64];
    assert_int_equal(mb_gc_ce_create(gc, "vm", "us-central1-a", NULL, NULL, NULL, NULL, op, &err), MB_OK);
    assert_non_null(strstr(op, "1741597200000"));
    /* kept in the file */
    mb_gc_close(gc);
    gc = open_at(dir, "a.db", NULL);
    assert_int_equal(mb_gc_clock_ms(gc), FROZEN_MS);
    /* back to the host's time */
    assert_int_equal(mb_gc_clock_set(gc, NULL, 0, &err), MB_OK);
    assert_true(mb_gc_clock_ms(gc) > FROZEN_MS + 86400000LL);
    mb_gc_close(gc);
    cleanup(dir);
}

static void test_running_clock_and_one_instant_per_query(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *gc = open_at(dir, "a.db", "mcpbox-aaaaaaaaaaaa");
    mb_err err = {0};
    assert_int_equal(mb_gc_clock_set(gc, "2024-02-29 23:59:59", 0, &err), MB_OK);
    int64_t t = mb_gc_clock_ms(gc);
    assert_true(t >= 1709251199000LL && t < 1709251199000LL + 5000);
    json_t *c = mb_gc_clock_get(gc);
    assert_string_equal(json_string_value(json_object_get(c, "mode")), "running");
    json_decref(c);
    /* every row of one query sees the same instant */
    char *s = row1(gc, "SELECT COUNT(DISTINCT t) AS n FROM (SELECT CURRENT_TIMESTAMP() AS t, x FROM "
                       "UNNEST(GENERATE_ARRAY(1, 20000)) AS x)");
    assert_string_equal(s, "[1]");
    free(s);
    /* freezing where it stands */
    assert_int_equal(mb_gc_clock_set(gc, NULL, 1, &err), MB_OK);
    int64_t f = mb_gc_clock_ms(gc);
    assert_true(f >= t && f < t + 5000);
    usleep(20000);
    assert_int_equal(mb_gc_clock_ms(gc), f);
    mb_gc_close(gc);
    cleanup(dir);
}

static void test_two_projects_two_clocks(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *a = open_at(dir, "a.db", "mcpbox-aaaaaaaaaaaa");
    mb_gc *b = open_at(dir, "b.db", "mcpbox-bbbbbbbbbbbb");
    mb_err err = {0};
    assert_int_equal(mb_gc_clock_set(a, "2025-03-10T09:00:00Z", 1, &err), MB_OK);
    assert_int_equal(mb_gc_clock_set(b, "2001-01-01T00:00:00Z", 1, &err), MB_OK);
    char *sa = row1(a, "SELECT CURRENT_DATE()"), *sb = row1(b, "SELECT CURRENT_DATE()");
    assert_string_equal(sa, "[\"2025-03-10\"]");
    assert_string_equal(sb, "[\"2001-01-01\"]");
    free(sa);
    free(sb);
    /* a third handle on a's file reads a's clock */
    mb_gc *a2 = open_at(dir, "a.db", NULL);
    sa = row1(a2, "SELECT CURRENT_DATE()");
    assert_string_equal(sa, "[\"2025-03-10\"]");
    free(sa);
    mb_gc_close(a2);
    mb_gc_close(a);
    sb = row1(b, "SELECT CURRENT_DATE()");
    assert_string_equal(sb, "[\"2001-01-01\"]");
    free(sb);
    mb_gc_close(b);
    cleanup(dir);
}

static void test_import_export_snapshot(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *gc = open_at(dir, "a.db", "mcpbox-aaaaaaaaaaaa");
    mb_err err = {0};
    json_t *detail = json_array();
    json_t *doc = json_loads("{\"clock\": {\"now\": \"2025-03-10T09:00:00Z\", \"frozen\": true},"
                             " \"datasets\": [{\"id\": \"d\"}],"
                             " \"log_entries\": [{\"log_name\": \"app\", \"message\": \"m\"}]}", 0, NULL);
    assert_int_equal(mb_gc_import(gc, doc, detail, &err), MB_OK);
    json_decref(doc);
    json_t *out = mb_gc_export(gc);
    assert_string_equal(json_string_value(json_object_get(json_object_get(out, "clock"), "now")),
                        "2025-03-10T09:00:00.000Z");
    assert_string_equal(json_string_value(json_object_get(json_object_get(out, "clock"), "mode")), "frozen");
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(out, "datasets"), 0), "created_at")),
                        "2025-03-10T09:00:00.000Z");
    const char *ts = json_string_value(json_object_get(json_array_get(json_object_get(out, "log_entries"), 0), "timestamp"));
    assert_non_null(ts);
    assert_int_equal(strncmp(ts, "2025-03-10", 10), 0);
    /* the dump's clock reads back as the same clock; an import without one keeps it */
    json_t *again = json_pack("{s:O}", "clock", json_object_get(out, "clock"));
    json_decref(out);
    assert_int_equal(mb_gc_clock_set(gc, NULL, 0, &err), MB_OK);
    assert_int_equal(mb_gc_import(gc, again, detail, &err), MB_OK);
    json_decref(again);
    assert_int_equal(mb_gc_clock_ms(gc), FROZEN_MS);
    doc = json_loads("{\"datasets\": []}", 0, NULL);
    assert_int_equal(mb_gc_import(gc, doc, detail, &err), MB_OK);
    json_decref(doc);
    assert_int_equal(mb_gc_clock_ms(gc), FROZEN_MS);
    /* a bad clock changes nothing */
    const char *bad[] = {"{\"clock\": {\"now\": \"yesterday\"}}", "{\"clock\": {\"now\": \"1969-12-31T00:00:00Z\"}}",
                         "{\"clock\": {\"now\": 5}}", "{\"clock\": {\"frozen\": \"yes\"}}", "{\"clock\": \"now\"}",
                         "{\"clock\": {\"now\": \"2025-01-01\", \"speed\": 2}}", "{\"clock\": {\"mode\": \"slow\"}}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        doc = json_loads(bad[i], 0, NULL);
        json_array_clear(detail);
        assert_int_not_equal(mb_gc_import(gc, doc, detail, &err), MB_OK);
        assert_int_equal(json_array_size(detail), 1);
        assert_string_equal(json_string_value(json_array_get(json_object_get(json_array_get(detail, 0), "loc"), 1)),
                            "clock");
        json_decref(doc);
        assert_int_equal(mb_gc_clock_ms(gc), FROZEN_MS);
    }
    json_decref(detail);
    /* a snapshot carries it */
    char *db = mb_asprintf("%s/a.db", dir), *base = mb_asprintf("%s/base.db", dir), *copy = mb_asprintf("%s/c.db", dir);
    mb_gc_close(gc);
    assert_int_equal(mb_gcloud_snapshot(db, base, &err), MB_OK);
    assert_int_equal(mb_gcloud_provision(copy, base, "mcpbox-aaaaaaaaaaaa", (unsigned)getuid(), &err), MB_OK);
    gc = open_at(dir, "c.db", NULL);
    assert_int_equal(mb_gc_clock_ms(gc), FROZEN_MS);
    mb_gc_close(gc);
    free(db);
    free(base);
    free(copy);
    cleanup(dir);
}

static void test_env_default_for_new_projects(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char *db = mb_asprintf("%s/n.db", dir);
    mb_err err = {0};
    setenv("MCPBOX_GCLOUD_CLOCK", "2025-03-10T09:00:00Z/frozen", 1);
    assert_int_equal(mb_gcloud_provision(db, NULL, "mcpbox-cccccccccccc", (unsigned)getuid(), &err), MB_OK);
    mb_gc *gc = open_at(dir, "n.db", NULL);
    assert_int_equal(mb_gc_clock_ms(gc), FROZEN_MS);
    assert_int_equal(mb_gc__created_ms(gc), FROZEN_MS);
    mb_gc_close(gc);
    setenv("MCPBOX_GCLOUD_CLOCK", "2025-03-10T09:00:00Z", 1);
    assert_int_equal(mb_gcloud_provision(db, NULL, "mcpbox-cccccccccccc", (unsigned)getuid(), &err), MB_OK);
    gc = open_at(dir, "n.db", NULL);
    int64_t t = mb_gc_clock_ms(gc);
    assert_true(t >= FROZEN_MS && t < FROZEN_MS + 5000);
    mb_gc_close(gc);
    setenv("MCPBOX_GCLOUD_CLOCK", "2025-03-10T09:00:00Z/sideways", 1);
    assert_int_not_equal(mb_gcloud_provision(db, NULL, "mcpbox-cccccccccccc", (unsigned)getuid(), &err), MB_OK);
    assert_non_null(strstr(err.msg, "MCPBOX_GCLOUD_CLOCK"));
    unsetenv("MCPBOX_GCLOUD_CLOCK");
    /* a clock planted in the file as garbage reads as the host's time */
    gc = open_at(dir, "n.db", NULL);
    assert_int_equal(mb_gc__exec(gc, "UPDATE __meta SET value='x9' WHERE key='clock_ms'", &err), MB_OK);
    mb_gc_close(gc);
    gc = open_at(dir, "n.db", NULL);
    int64_t real = mb_gc_now_ms();
    assert_true(mb_gc_clock_ms(gc) >= real && mb_gc_clock_ms(gc) < real + 5000);
    mb_gc_close(gc);
    free(db);
    cleanup(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_by_default),
        cmocka_unit_test(test_frozen_clock_is_read_everywhere),
        cmocka_unit_test(test_running_clock_and_one_instant_per_query),
        cmocka_unit_test(test_two_projects_two_clocks),
        cmocka_unit_test(test_import_export_snapshot),
        cmocka_unit_test(test_env_default_for_new_projects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
