/*
 * test_gcloud.c - unit tests for src/gcloud: the GoogleSQL query corpora
 * (tests/data/gcloud/corpus.json and tasks/<task>.json, the eight Toolathlon
 * google-cloud tasks' statements: every case's rows, column types, or the
 * error that names the refused construct), CSV and NDJSON loads with schema
 * autodetection, streaming insert errors, Cloud Storage objects, the
 * Logging filter subset, the Compute state machine, GoogleCloudData
 * import/export, and two projects that do not see each other.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gcloud/gcloud.h"
#include "gcloud/gcloud_int.h"
#include "util/util.h"

static char *tmpdir(void)
{
    char t[] = "/tmp/mb-gcloud-XXXXXX";
    assert_non_null(mkdtemp(t));
    return mb_strdup(t);
}

static mb_gc *open_project(const char *dir, const char *name, const char *project)
{
    char *path = mb_asprintf("%s/%s", dir, name);
    mb_gc *gc = NULL;
    mb_err err = {0};
    int rc = mb_gc_open(path, project, &gc, &err);
    if (rc) fprintf(stderr, "open: %s\n", err.msg);
    assert_int_equal(rc, MB_OK);
    free(path);
    return gc;
}

static json_t *load_corpus(const char *path)
{
    json_error_t je;
    json_t *c = json_load_file(path, 0, &je);
    if (!c) fprintf(stderr, "%s: %s line %d\n", path, je.text, je.line);
    assert_non_null(c);
    /* tables[].data (rows as lists in field order) -> tables[].rows */
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(json_object_get(c, "setup"), "tables"), i, t) {
        json_t *data = json_object_get(t, "data"), *rows = json_array(), *r;
        size_t k;
        json_array_foreach(data, k, r) {
            json_t *o = json_object(), *f;
            size_t m;
            json_array_foreach(json_object_get(t, "fields"), m, f)
                json_object_set(o, json_string_value(json_object_get(f, "name")), json_array_get(r, m));
            json_array_append_new(rows, o);
        }
        if (data) {
            json_object_set_new(t, "rows", rows);
            json_object_del(t, "data");
        } else {
            json_decref(rows);
        }
    }
    return c;
}

static int values_equal(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return fabs(json_number_value(a) - json_number_value(b)) <=
                   1e-9 * fmax(1.0, fabs(json_number_value(a))) &&
               json_is_integer(a) == json_is_integer(b);
    return json_equal(a, b);
}

static int rows_equal(json_t *w, json_t *g)
{
    if (json_array_size(w) != json_array_size(g)) return 0;
    for (size_t m = 0; m < json_array_size(w); m++)
        if (!values_equal(json_array_get(w, m), json_array_get(g, m))) return 0;
    return 1;
}

/* Each got row matches a distinct want row (the order is not checked). */
static int rows_match_unordered(json_t *want, json_t *got, int all)
{
    size_t nw = json_array_size(want);
    if (all && nw != json_array_size(got)) return 0;
    char *used = calloc(nw + 1, 1);
    int ok = 1;
    for (size_t k = 0; ok && k < json_array_size(got); k++) {
        ok = 0;
        for (size_t j = 0; j < nw && !ok; j++)
            if (!used[j] && rows_equal(json_array_get(want, j), json_array_get(got, k))) used[j] = ok = 1;
    }
    free(used);
    return ok;
}

/* The rows of the setup table "dataset.table", in field order. */
static json_t *table_rows(json_t *corpus, const char *name)
{
    json_t *out = json_array(), *t;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(corpus, "setup"), "tables"), i, t) {
        char *full = mb_asprintf("%s.%s", json_string_value(json_object_get(t, "dataset_id")),
                                 json_string_value(json_object_get(t, "id")));
        int hit = !strcmp(full, name);
        free(full);
        if (!hit) continue;
        json_t *r, *f;
        size_t k, m;
        json_array_foreach(json_object_get(t, "rows"), k, r) {
            json_t *row = json_array();
            json_array_foreach(json_object_get(t, "fields"), m, f)
                json_array_append(row, json_object_get(r, json_string_value(json_object_get(f, "name"))) ?: json_null());
            json_array_append_new(out, row);
        }
    }
    return out;
}

static int run_corpus(const char *path)
{
    char *dir = tmpdir();
    mb_gc *gc = open_project(dir, "p.db", "test-proj");
    json_t *corpus = load_corpus(path);
    json_t *detail = json_array();
    mb_err err = {0};
    int rc = mb_gc_import(gc, json_object_get(corpus, "setup"), detail, &err);
    if (rc) {
        char *d = json_dumps(detail, 0);
        fprintf(stderr, "%s: import: %s %s\n", path, err.msg, d);
        free(d);
    }
    assert_int_equal(rc, MB_OK);
    json_decref(detail);
    size_t i;
    json_t *c;
    int failures = 0;
    json_array_foreach(json_object_get(corpus, "cases"), i, c) {
        const char *sql = json_string_value(json_object_get(c, "sql"));
        const char *want_err = json_string_value(json_object_get(c, "error"));
        mb_gc_result r;
        mb_err e = {0};
        rc = mb_gc_bq_query(gc, sql, json_object_get(c, "params"), 0, &r, &e);
        if (want_err) {
            if (rc == MB_OK || !strstr(e.msg, want_err)) {
                fprintf(stderr, "%s case %zu: want error '%s', got rc %d '%s'\n", path, i, want_err, rc, e.msg);
                failures++;
            }
            if (rc == MB_OK) mb_gc_result_free(&r);
            continue;
        }
        if (rc) {
            char *t = NULL;
            mb_gc_bq_translate(gc, sql, &t, NULL);
            fprintf(stderr, "%s case %zu: %s\n  sqlite: %s\n", path, i, e.msg, t ? t : "?");
            free(t);
            failures++;
            continue;
        }
        json_t *want = json_object_get(c, "rows");
        const char *within = json_string_value(json_object_get(c, "rows_within"));
        int ok;
        if (within) {
            json_t *pool = table_rows(corpus, within);
            ok = (json_int_t)json_array_size(r.rows) == json_integer_value(json_object_get(c, "row_count")) &&
                 rows_match_unordered(pool, r.rows, 0);
            json_decref(pool);
        } else if (json_is_true(json_object_get(c, "unordered"))) {
            ok = rows_match_unordered(want, r.rows, 1);
        } else {
            ok = json_array_size(want) == json_array_size(r.rows);
            for (size_t k = 0; ok && k < json_array_size(want); k++)
                ok = rows_equal(json_array_get(want, k), json_array_get(r.rows, k));
        }
        json_t *wf = json_object_get(c, "fields");
        for (size_t k = 0; ok && wf && k < json_array_size(wf); k++) {
            json_t *f = json_array_get(r.fields, k);
            const char *w = json_string_value(json_array_get(wf, k));
            const char *mode = json_string_value(json_object_get(f, "mode"));
            /* name:TYPE, or name:TYPE:MODE to check the mode too */
            char *have = strchr(strchr(w, ':') + 1, ':')
                             ? mb_asprintf("%s:%s:%s", json_string_value(json_object_get(f, "name")),
                                           json_string_value(json_object_get(f, "type")), mode ? mode : "?")
                             : mb_asprintf("%s:%s", json_string_value(json_object_get(f, "name")),
                                           json_string_value(json_object_get(f, "type")));
            ok = !strcmp(have, w);
            if (!ok) fprintf(stderr, "%s case %zu: field %zu is %s\n", path, i, k, have);
            free(have);
        }
        if (!ok) {
            char *g = json_dumps(r.rows, JSON_COMPACT), *w = json_dumps(want, JSON_COMPACT);
            char *f = json_dumps(r.fields, JSON_COMPACT);
            fprintf(stderr, "%s case %zu: rows %.3000s\n  want %.3000s\n  fields %s\n", path, i, g, w, f);
            free(g);
            free(w);
            free(f);
            failures++;
        }
        mb_gc_result_free(&r);
    }
    json_decref(corpus);
    mb_gc_close(gc);
    mb_rm_rf(dir, NULL);
    free(dir);
    return failures;
}

/* tests/data/gcloud/corpus.json (constructs) and tasks/<task>.json (the eight
 * Toolathlon google-cloud tasks' statements over excerpts of their data). */
static void test_corpus(void **state)
{
    (void)state;
    int failures = run_corpus("tests/data/gcloud/corpus.json");
    DIR *dd = opendir("tests/data/gcloud/tasks");
    assert_non_null(dd);
    struct dirent *de;
    int files = 0;
    while ((de = readdir(dd))) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".json")) continue;
        char *path = mb_asprintf("tests/data/gcloud/tasks/%s", de->d_name);
        failures += run_corpus(path);
        free(path);
        files++;
    }
    closedir(dd);
    assert_int_equal(files, 8);
    assert_int_equal(failures, 0);
}

static void test_load(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *gc = open_project(dir, "p.db", "p1");
    mb_err err = {0};
    assert_int_equal(mb_gc_bq_dataset_create(gc, "d", NULL, "US", &err), MB_OK);
    assert_int_equal(mb_gc_bq_dataset_create(gc, "d", NULL, "US", &err), MB_ECONFLICT);
    assert_string_equal(err.msg, "Already Exists: Dataset p1:d");
    const char csv[] = "id,name,amount,day,ok\r\n1,\"Smith, J\",2.5,2025-01-02,true\n2,\"say \"\"hi\"\"\",3,2025-01-03,false\n";
    mb_gc_load o = {.format = MB_GC_CSV, .write = MB_GC_WRITE_TRUNCATE, .skip_leading_rows = 1, .autodetect = 1};
    long n = 0;
    assert_int_equal(mb_gc_bq_load(gc, "d", "t", csv, sizeof csv - 1, &o, &n, &err), MB_OK);
    assert_int_equal(n, 2);
    json_t *t;
    assert_int_equal(mb_gc_bq_table_get(gc, "d", "t", &t, &err), MB_OK);
    char *fs = json_dumps(json_object_get(t, "fields"), JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(fs, "[{\"name\":\"id\",\"type\":\"INTEGER\",\"mode\":\"NULLABLE\"},"
                            "{\"name\":\"name\",\"type\":\"STRING\",\"mode\":\"NULLABLE\"},"
                            "{\"name\":\"amount\",\"type\":\"FLOAT\",\"mode\":\"NULLABLE\"},"
                            "{\"name\":\"day\",\"type\":\"DATE\",\"mode\":\"NULLABLE\"},"
                            "{\"name\":\"ok\",\"type\":\"BOOLEAN\",\"mode\":\"NULLABLE\"}]");
    free(fs);
    assert_int_equal(json_integer_value(json_object_get(t, "num_rows")), 2);
    json_decref(t);
    /* append then a row of the wrong width fails and leaves the table as it was */
    o.write = MB_GC_WRITE_APPEND;
    assert_int_equal(mb_gc_bq_load(gc, "d", "t", csv, sizeof csv - 1, &o, &n, &err), MB_OK);
    const char bad[] = "id,name,amount,day,ok\n3,x\n";
    assert_int_equal(mb_gc_bq_load(gc, "d", "t", bad, sizeof bad - 1, &o, &n, &err), MB_EINVAL);
    mb_gc_result r;
    assert_int_equal(mb_gc_bq_query(gc, "SELECT COUNT(*), SUM(amount), COUNTIF(ok) FROM d.t WHERE name LIKE '%hi%'", NULL, 0, &r, &err), MB_OK);
    char *rows = json_dumps(r.rows, JSON_COMPACT);
    assert_string_equal(rows, "[[2,6.0,0]]");
    free(rows);
    assert_string_equal(json_string_value(json_object_get(json_array_get(r.fields, 2), "type")), "INTEGER");
    mb_gc_result_free(&r);
    /* NDJSON with a RECORD and a REPEATED field */
    const char nd[] = "{\"a\": 1, \"rec\": {\"x\": \"u\"}, \"tags\": [\"t1\", \"t2\"], \"ts\": \"2025-01-01T00:00:00Z\"}\n"
                      "\n{\"a\": 2.5, \"rec\": {\"x\": \"v\"}, \"tags\": [], \"ts\": null}\n";
    mb_gc_load oj = {.format = MB_GC_NDJSON, .write = MB_GC_WRITE_APPEND, .autodetect = 1};
    assert_int_equal(mb_gc_bq_load(gc, "d", "j", nd, sizeof nd - 1, &oj, &n, &err), MB_OK);
    assert_int_equal(mb_gc_bq_query(gc, "SELECT a, rec.x, tags, ts FROM d.j ORDER BY a", NULL, 0, &r, &err), MB_OK);
    rows = json_dumps(r.rows, JSON_COMPACT);
    assert_string_equal(rows, "[[1.0,\"u\",[\"t1\",\"t2\"],\"2025-01-01 00:00:00\"],[2.5,\"v\",[],null]]");
    free(rows);
    char *fields = json_dumps(r.fields, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(fields, "[{\"name\":\"a\",\"type\":\"FLOAT\",\"mode\":\"NULLABLE\"},"
                                "{\"name\":\"x\",\"type\":\"STRING\",\"mode\":\"NULLABLE\"},"
                                "{\"name\":\"tags\",\"type\":\"STRING\",\"mode\":\"REPEATED\"},"
                                "{\"name\":\"ts\",\"type\":\"TIMESTAMP\",\"mode\":\"NULLABLE\"}]");
    free(fields);
    mb_gc_result_free(&r);
    /* streaming insert: a bad row rejects the request */
    json_t *ins = json_loads("[{\"a\": 3}, {\"a\": \"x\"}, {\"nope\": 1}]", 0, NULL);
    json_t *errs = NULL;
    assert_int_equal(mb_gc_bq_insert(gc, "d", "j", ins, &errs, &err), MB_EINVAL);
    assert_int_equal(json_array_size(errs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(errs, 1), "message")), "no such field: nope.");
    json_decref(errs);
    json_decref(ins);
    assert_int_equal(mb_gc_bq_query(gc, "SELECT COUNT(*) FROM d.j", NULL, 0, &r, &err), MB_OK);
    assert_int_equal(json_integer_value(json_array_get(json_array_get(r.rows, 0), 0)), 2);
    mb_gc_result_free(&r);
    assert_int_equal(mb_gc_bq_dataset_delete(gc, "d", 0, &err), MB_EINVAL);
    assert_int_equal(mb_gc_bq_dataset_delete(gc, "d", 1, &err), MB_OK);
    json_t *jobs = mb_gc_bq_job_list(gc, 10, "");
    json_decref(jobs);
    mb_gc_close(gc);
    mb_rm_rf(dir, NULL);
    free(dir);
}

static void test_storage_logging_compute(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *gc = open_project(dir, "p.db", "p1");
    mb_err err = {0};
    assert_int_equal(mb_gc_gcs_bucket_create(gc, "Bad_Name", "US", NULL, &err), MB_EINVAL);
    assert_int_equal(mb_gc_gcs_bucket_create(gc, "my-bucket", "us", NULL, &err), MB_OK);
    assert_int_equal(mb_gc_gcs_object_put(gc, "my-bucket", "a/b.txt", "hello", 5, "text/plain", &err), MB_OK);
    assert_int_equal(mb_gc_gcs_object_put(gc, "my-bucket", "a/c/d.txt", "x", 1, NULL, &err), MB_OK);
    assert_int_equal(mb_gc_gcs_object_put(gc, "my-bucket", "top.csv", "", 0, NULL, &err), MB_OK);
    json_t *m;
    assert_int_equal(mb_gc_gcs_object_meta(gc, "my-bucket", "a/b.txt", &m, &err), MB_OK);
    assert_string_equal(json_string_value(json_object_get(m, "md5")), "XUFAKrxLKna5cZ2REBfFkg==");
    assert_string_equal(json_string_value(json_object_get(m, "crc32c")), "mnG7TA==");
    json_decref(m);
    json_t *items, *prefixes;
    assert_int_equal(mb_gc_gcs_object_list(gc, "my-bucket", "a/", "/", &items, &prefixes, &err), MB_OK);
    assert_int_equal(json_array_size(items), 1);
    assert_string_equal(json_string_value(json_array_get(prefixes, 0)), "a/c/");
    json_decref(items);
    json_decref(prefixes);
    assert_int_equal(mb_gc_gcs_bucket_delete(gc, "my-bucket", 0, &err), MB_ECONFLICT);
    char *data;
    size_t len;
    assert_int_equal(mb_gc_gcs_object_get(gc, "my-bucket", "a/b.txt", &data, &len, NULL, &err), MB_OK);
    assert_int_equal(len, 5);
    assert_memory_equal(data, "hello", 5);
    free(data);

    json_t *jp = json_pack("{s:s,s:i}", "event", "login", "count", 3);
    assert_int_equal(mb_gc_log_write(gc, "app", "started", NULL, "INFO", 1735689600000LL, NULL, NULL, NULL, &err), MB_OK);
    assert_int_equal(mb_gc_log_write(gc, "app", NULL, jp, "ERROR", 1735693200000LL, NULL, NULL, NULL, &err), MB_OK);
    assert_int_equal(mb_gc_log_write(gc, "other", "disk full", NULL, "WARNING", 1735696800000LL, NULL, NULL, NULL, &err), MB_OK);
    json_decref(jp);
    static const struct { const char *filter; int n; } F[] = {
        {"", 3}, {"severity>=WARNING", 2}, {"logName=\"projects/p1/logs/app\"", 2},
        {"logName=app AND severity=INFO", 1}, {"textPayload:\"disk\"", 1},
        {"jsonPayload.event=\"login\"", 1}, {"jsonPayload.count>2", 1},
        {"timestamp>=\"2025-01-01T01:00:00Z\"", 2}, {"NOT logName=app", 1},
        {"(severity=INFO OR severity=WARNING) started", 1}, {"-severity=ERROR", 2},
    };
    for (size_t i = 0; i < sizeof F / sizeof *F; i++) {
        json_t *out;
        assert_int_equal(mb_gc_log_list(gc, F[i].filter, 50, &out, &err), MB_OK);
        if ((int)json_array_size(out) != F[i].n)
            fprintf(stderr, "filter %s: %zu entries\n", F[i].filter, json_array_size(out));
        assert_int_equal(json_array_size(out), F[i].n);
        json_decref(out);
    }
    json_t *out;
    assert_int_equal(mb_gc_log_list(gc, "protoPayload.x=1", 50, &out, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "protoPayload.x"));

    char op[64];
    assert_int_equal(mb_gc_ce_create(gc, "vm-1", "us-central1-a", NULL, NULL, NULL, NULL, op, &err), MB_OK);
    assert_int_equal(mb_gc_ce_create(gc, "vm-1", "us-central1-a", NULL, NULL, NULL, NULL, op, &err), MB_ECONFLICT);
    assert_int_equal(mb_gc_ce_create(gc, "vm-2", "mars-1a", NULL, NULL, NULL, NULL, op, &err), MB_ENOTFOUND);
    assert_int_equal(mb_gc_ce_action(gc, "vm-1", "us-central1-a", "stop", op, &err), MB_OK);
    json_t *inst;
    assert_int_equal(mb_gc_ce_get(gc, "vm-1", "us-central1-a", &inst, &err), MB_OK);
    assert_string_equal(json_string_value(json_object_get(inst, "status")), "TERMINATED");
    json_decref(inst);
    assert_int_equal(mb_gc_ce_action(gc, "vm-1", "us-central1-a", "reset", op, &err), MB_EINVAL);
    assert_int_equal(mb_gc_ce_action(gc, "vm-1", "us-central1-a", "start", op, &err), MB_OK);
    json_t *o;
    assert_int_equal(mb_gc_ce_operation(gc, op, &o, &err), MB_OK);
    assert_string_equal(json_string_value(json_object_get(o, "status")), "DONE");
    json_decref(o);

    /* export, import into a second project, export again: the same document */
    json_t *doc = mb_gc_export(gc);
    mb_gc *gc2 = open_project(dir, "q.db", "p2");
    json_t *detail = json_array();
    assert_int_equal(mb_gc_import(gc2, doc, detail, &err), MB_OK);
    json_t *doc2 = mb_gc_export(gc2);
    assert_int_equal(json_array_size(json_object_get(doc2, "objects")), 3);
    assert_int_equal(json_array_size(json_object_get(doc2, "log_entries")), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc2, "instances"), 0), "status")),
                        "RUNNING");
    json_decref(doc2);
    json_decref(doc);
    /* a bad document: 422-style detail, nothing changed */
    json_t *baddoc = json_loads("{\"datasets\": [{\"description\": \"x\"}], \"buckets\": 3}", 0, NULL);
    assert_int_equal(mb_gc_import(gc2, baddoc, detail, &err), MB_EINVAL);
    assert_int_equal(json_array_size(detail), 2);
    json_decref(baddoc);
    json_decref(detail);
    json_t *bl = mb_gc_gcs_bucket_list(gc2);
    assert_int_equal(json_array_size(bl), 1);
    json_decref(bl);
    mb_gc_close(gc2);
    /* another project id on the same file is refused */
    char *path = mb_asprintf("%s/p.db", dir);
    mb_gc *g3;
    assert_int_equal(mb_gc_open(path, "zzz", &g3, &err), MB_ECONFLICT);
    free(path);
    mb_gc_close(gc);
    mb_rm_rf(dir, NULL);
    free(dir);
}

/* A project written before log entries kept their labels and trace (no
 * "extra" column, nor "received") opens with both columns added; its old
 * entries list with empty fields, new ones keep theirs and filter on them. */
static void test_log_extra_old_project(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char *path = mb_asprintf("%s/old.db", dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE __log_entries(seq INTEGER PRIMARY KEY, log_name TEXT,"
                                      " severity TEXT, severity_num INTEGER, ts INTEGER, text_payload TEXT,"
                                      " json_payload TEXT, resource_type TEXT, resource_labels TEXT, insert_id TEXT);"
                                      "INSERT INTO __log_entries VALUES(1, 'app', 'INFO', 200, 1735689600000,"
                                      " 'old line', NULL, 'global', NULL, 'i1');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    mb_gc *gc = open_project(dir, "old.db", "p1");
    mb_err err = {0};
    json_t *extra = json_pack("{s:{s:s},s:s,s:{s:s,s:i}}", "labels", "env", "prod", "trace", "projects/p1/traces/t1",
                              "httpRequest", "requestMethod", "GET", "status", 503);
    assert_int_equal(mb_gc_log_write(gc, "app", "new line", NULL, "ERROR", 1735689700000LL, NULL, NULL, extra, &err),
                     MB_OK);
    json_decref(extra);
    json_t *out;
    assert_int_equal(mb_gc_log_list(gc, NULL, 10, &out, &err), MB_OK);
    assert_int_equal(json_array_size(out), 2);
    json_t *nw = json_array_get(out, 0), *old = json_array_get(out, 1);
    assert_string_equal(json_string_value(json_object_get(old, "text_payload")), "old line");
    assert_int_equal(json_object_size(json_object_get(old, "extra")), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(nw, "extra"), "labels"), "env")),
                        "prod");
    json_decref(out);
    static const struct { const char *filter; size_t n; } F[] = {
        {"labels.env=prod", 1}, {"httpRequest.status>=500", 1}, {"trace:t1", 1}, {"NOT labels.env=prod", 1},
        {"labels.env=dev OR textPayload:old", 1}, {"httpRequest.status<500", 0}};
    for (size_t i = 0; i < sizeof F / sizeof *F; i++) {
        assert_int_equal(mb_gc_log_list(gc, F[i].filter, 10, &out, &err), MB_OK);
        if (json_array_size(out) != F[i].n) fprintf(stderr, "filter %s\n", F[i].filter);
        assert_int_equal(json_array_size(out), F[i].n);
        json_decref(out);
    }
    /* refused before anything is written */
    json_t *bad[] = {json_pack("{s:{s:i}}", "labels", "n", 1), json_pack("{s:s}", "split", "x"),
                     json_pack("{s:i}", "traceSampled", 1), json_pack("{s:s}", "operation", "op")};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(mb_gc_log_write(gc, "app", "x", NULL, "INFO", 0, NULL, NULL, bad[i], &err), MB_EINVAL);
        json_decref(bad[i]);
    }
    assert_int_equal(mb_gc_log_list(gc, NULL, 10, &out, &err), MB_OK);
    assert_int_equal(json_array_size(out), 2);
    json_decref(out);
    /* log buckets: Cloud Logging's id rule */
    assert_int_equal(mb_gc_log_bucket_create(gc, "_Default", "global", 30, NULL, &err), MB_EINVAL);
    assert_int_equal(mb_gc_log_bucket_create(gc, "ok_1", "global", 30, NULL, &err), MB_OK);
    mb_gc_close(gc);
    mb_rm_rf(dir, NULL);
    free(path);
    free(dir);
}

/* The date, timestamp and time parsers on strings that end where a field
 * does, each copied into an allocation of exactly its size (ASan sees any
 * read past the terminator), and on a 10,000-character value: all refused. */
static void test_time_parsers_stop_at_the_end(void **state)
{
    (void)state;
    static const char *const BAD[] = {"", "1", "1:", "12:3", "2025-", "2025-3-", "2025-03-10T", "2025-03-10 ",
                                      "2025-03-10T1", "2025-03-10T10:00:00+", "2025-03-10 10:00:00-",
                                      "10:00:00.", "24:00:00", "x"};
    char *big = mb_malloc(10001);
    memset(big, '1', 10000);
    big[10000] = '\0';
    for (size_t i = 0; i <= sizeof BAD / sizeof *BAD; i++) {
        const char *src = i < sizeof BAD / sizeof *BAD ? BAD[i] : big;
        size_t n = strlen(src);
        char *s = mb_malloc(n + 1);
        memcpy(s, src, n + 1);
        long days;
        long long us;
        int has_time;
        char out[40];
        int ts = mb_gc__ts_parse(s, &days, &us, &has_time);
        if (!strcmp(src, "2025-03-10 ")) assert_int_equal(ts, 0); /* a date and a blank */
        else assert_int_equal(ts, -1);
        assert_int_equal(mb_gc__time_us(s), -1);
        if (strcmp(src, "2025-03-10 ")) assert_int_equal(mb_gc__ts_norm(s, out), -1);
        free(s);
    }
    free(big);
    assert_int_equal(mb_gc__time_us("7:05"), (7 * 60 + 5) * 60 * 1000000LL);
}

static void test_isolation(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *a = open_project(dir, "a.db", "proj-a"), *b = open_project(dir, "b.db", "proj-b");
    mb_err err = {0};
    assert_int_equal(mb_gc_bq_dataset_create(a, "shared_name", NULL, "US", &err), MB_OK);
    assert_int_equal(mb_gc_gcs_bucket_create(a, "bucket-a", "US", NULL, &err), MB_OK);
    assert_int_equal(mb_gc_log_write(a, "l", "x", NULL, "INFO", 0, NULL, NULL, NULL, &err), MB_OK);
    json_t *l = mb_gc_bq_dataset_list(b);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    l = mb_gc_gcs_bucket_list(b);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    assert_int_equal(mb_gc_log_list(b, "", 10, &l, &err), MB_OK);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    mb_gc_result r;
    assert_int_equal(mb_gc_bq_query(b, "SELECT * FROM `proj-a.shared_name.t`", NULL, 0, &r, &err), MB_ENOTFOUND);
    assert_string_equal(err.msg, "Not found: Project proj-a");
    mb_gc_close(a);
    mb_gc_close(b);
    mb_rm_rf(dir, NULL);
    free(dir);
}

static void test_hostile_sql(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *gc = open_project(dir, "p.db", "p");
    static const char *const bad[] = {
        "", ";", "SELECT (", "SELECT )))", "SELECT `", "SELECT \"abc", "SELECT /* x", "@", "SELECT @@x",
        "SELECT 1; DROP TABLE __bq_tables", "SELECT * FROM __bq_tables", "SELECT * FROM `a.b.c.d.e`",
        "SELECT \x01", "SELECT CAST(1 AS)", "SELECT DATE_ADD(1, INTERVAL)", "SELECT EXTRACT(FROM x)",
        "SELECT 1 FROM `d.t*`", "CREATE TABLE x.y (a STRUCT<b INT64", "SELECT * FROM d.INFORMATION_SCHEMA.NOPE",
        "INSERT INTO", "DELETE", "CREATE", "SELECT json_patch('{}', '{}')",
        /* ARRAY / STRUCT / UNNEST / MERGE / '/' */
        "SELECT [1, 2", "SELECT ]", "SELECT [1][", "SELECT 1[0]", "SELECT ARRAY", "SELECT ARRAY<INT64>",
        "SELECT ARRAY<INT64 [1]", "SELECT ARRAY(1)", "SELECT STRUCT", "SELECT STRUCT(1 + 1)",
        "SELECT STRUCT<a INT64>(1, 2)", "SELECT STRUCT<a NOPE>(1)", "SELECT 1 FROM UNNEST", "SELECT 1 FROM UNNEST(1)",
        "SELECT x FROM UNNEST('[1]') AS x", "SELECT 1 IN UNNEST", "SELECT ARRAY_AGG()", "SELECT ARRAY_AGG(1, 2)",
        "SELECT ARRAY_AGG(1 LIMIT x)", "SELECT ARRAY_AGG(1 ORDER BY 1) OVER ()", "SELECT / 2", "SELECT 1 /", "SELECT 1 / 0",
        "SELECT 1.5 / 0.0", "SELECT MOD(1, 0)", "SELECT [1][OFFSET(-1)]", "SELECT [1][ORDINAL(0)]",
        "SELECT ARRAY_LENGTH('x')", "SELECT GENERATE_ARRAY(1, 100000000)", "SELECT GENERATE_ARRAY(1, 2, 0)",
        "SELECT (1).x", "SELECT * REPLACE (1) FROM x.y", "SELECT * REPLACE (1 AS a)", "MERGE", "MERGE x.y",
        "MERGE nope.t USING nope.s ON TRUE WHEN MATCHED THEN DELETE", "SELECT a\x9c\x9c AS f FROM x.y",
        "SELECT [1] \xc3 AS f", "SELECT FORMAT('%999d', 1)", "SELECT FORMAT('%.999f', 1)", "SELECT FORMAT('%q', 1)",
        "SELECT FORMAT('%\'d', 1)", "SELECT STRING_AGG(x, ORDER BY x) FROM UNNEST([1]) AS x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mb_gc_result r;
        mb_err err = {0};
        int rc = mb_gc_bq_query(gc, bad[i], NULL, 0, &r, &err);
        if (rc == MB_OK) {
            fprintf(stderr, "accepted: %s\n", bad[i]);
            mb_gc_result_free(&r);
        }
        assert_int_not_equal(rc, MB_OK);
        assert_true(mb_utf8_valid(err.msg, strlen(err.msg)));
    }
    /* deep and long inputs are refused in bounded time, not by the stack */
    static const char *const units[][3] = {
        {"SELECT ", "[", "]"}, {"SELECT ", "STRUCT(", " AS a)"}, {"SELECT ", "ARRAY(SELECT ", ")"},
        {"SELECT ", "(", ")"}, {"SELECT 1", "/1", ""}, {"SELECT [1]", "[OFFSET(0)]", ""},
        {"SELECT ", "ARRAY_AGG(", ")"}, {"SELECT ", "CASE WHEN TRUE THEN ", " END"},
        {"SELECT STRUCT(1 AS a)", ".a", ""},
    };
    for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
        mb_buf q = {0};
        mb_buf_puts(&q, units[u][0]);
        for (int k = 0; k < 20000; k++) mb_buf_puts(&q, units[u][1]);
        mb_buf_puts(&q, "1");
        for (int k = 0; k < 20000; k++) mb_buf_puts(&q, units[u][2]);
        int64_t t0 = mb_mono_ms();
        mb_gc_result r;
        mb_err err = {0};
        int rc = mb_gc_bq_query(gc, q.data, NULL, 0, &r, &err);
        if (rc == MB_OK) mb_gc_result_free(&r);
        assert_int_not_equal(rc, MB_OK);
        assert_true(mb_utf8_valid(err.msg, strlen(err.msg)));
        assert_true(mb_mono_ms() - t0 < 20000); /* ~2 s under ASan */
        mb_buf_free(&q);
    }
    /* the catalog survived */
    json_t *l = mb_gc_bq_dataset_list(gc);
    json_decref(l);
    mb_gc_result r;
    mb_err err = {0};
    assert_int_equal(mb_gc_bq_query(gc, "SELECT 1 AS one", NULL, 0, &r, &err), MB_OK);
    mb_gc_result_free(&r);
    mb_gc_close(gc);
    mb_rm_rf(dir, NULL);
    free(dir);
}

/* The value of query parameter k in url, percent-decoded (malloc'ed). */
static char *qparam(const char *url, const char *k)
{
    char *pat = mb_asprintf("%s=", k);
    const char *p = strstr(url, pat);
    free(pat);
    if (!p) return NULL;
    p += strlen(k) + 1;
    mb_buf b = {0};
    for (; *p && *p != '&'; p++) {
        unsigned v;
        if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1) {
            mb_buf_putc(&b, (char)v);
            p += 2;
        } else mb_buf_putc(&b, *p);
    }
    return b.data ? mb_buf_steal(&b) : mb_strdup("");
}

static void test_signed_urls(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *gc = open_project(dir, "p.db", "test-proj");
    mb_err err = {0};
    assert_int_equal(mb_gc_gcs_bucket_create(gc, "bkt", "US", NULL, &err), MB_OK);
    char *url = NULL;
    assert_int_equal(mb_gc_gcs_sign_url(gc, "http://127.0.0.1:10050/p/test-proj", "GET", "bkt", "dir/a b+.txt", 4,
                                        &url, &err), MB_OK);
    int64_t signed_at = mb_mono_ms();
    assert_true(mb_str_has_prefix(url, "http://127.0.0.1:10050/p/test-proj/bkt/dir/a%20b%2B.txt?X-Goog-Algorithm="
                                       "GOOG4-RSA-SHA256&X-Goog-Credential=mcpbox%40test-proj.iam.gserviceaccount.com%2F"));
    char *alg = qparam(url, "X-Goog-Algorithm"), *cred = qparam(url, "X-Goog-Credential");
    char *date = qparam(url, "X-Goog-Date"), *exp = qparam(url, "X-Goog-Expires");
    char *hdr = qparam(url, "X-Goog-SignedHeaders"), *sig = qparam(url, "X-Goog-Signature");
    assert_int_equal(strlen(sig), 512); /* RSA-2048 */
    mb_gc_sigq q = {alg, cred, date, exp, hdr, sig};
    const char *path = "/p/test-proj/bkt/dir/a b+.txt", *host = "127.0.0.1:10050";
    char *xml = NULL;
    assert_int_equal(mb_gc_gcs_check_signed(gc, "GET", host, path, &q, &xml), 0);
    assert_int_equal(mb_gc_gcs_check_signed(gc, "HEAD", host, path, &q, &xml), 0);
    /* another method, host, path, signature, expiry or project: refused */
    assert_int_equal(mb_gc_gcs_check_signed(gc, "PUT", host, path, &q, &xml), 403);
    assert_non_null(strstr(xml, "<Code>SignatureDoesNotMatch</Code>"));
    free(xml);
    assert_int_equal(mb_gc_gcs_check_signed(gc, "GET", "localhost:10050", path, &q, &xml), 403);
    free(xml);
    assert_int_equal(mb_gc_gcs_check_signed(gc, "GET", host, "/p/test-proj/bkt/dir/other", &q, &xml), 403);
    free(xml);
    char keep = sig[10];
    sig[10] = keep == '0' ? '1' : '0';
    assert_int_equal(mb_gc_gcs_check_signed(gc, "GET", host, path, &q, &xml), 403);
    free(xml);
    sig[10] = keep;
    mb_gc_sigq q2 = q;
    q2.expires = "604800";
    assert_int_equal(mb_gc_gcs_check_signed(gc, "GET", host, path, &q2, &xml), 403);
    free(xml);
    q2.expires = "604801";
    assert_int_equal(mb_gc_gcs_check_signed(gc, "GET", host, path, &q2, &xml), 400);
    free(xml);
    static const char *const junk[] = {"", "zz", "0", "123", "\xff"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
        q2 = q;
        q2.sig = junk[i];
        assert_true(mb_gc_gcs_check_signed(gc, "GET", host, path, &q2, &xml) >= 400);
        free(xml);
        q2 = q;
        q2.date = junk[i];
        assert_true(mb_gc_gcs_check_signed(gc, "GET", host, path, &q2, &xml) >= 400);
        free(xml);
        q2 = q;
        q2.alg = junk[i];
        assert_true(mb_gc_gcs_check_signed(gc, "GET", host, path, &q2, &xml) >= 400);
        free(xml);
    }
    /* another project's key does not verify it */
    mb_gc *other = open_project(dir, "o.db", "test-proj");
    assert_int_equal(mb_gc_gcs_check_signed(other, "GET", host, path, &q, &xml), 403);
    free(xml);
    mb_gc_close(other);
    assert_int_equal(mb_gc_gcs_sign_url(gc, "http://h/p/x", "GET", "b", "o", 604801, &xml, &err), MB_EINVAL);
    assert_int_equal(mb_gc_gcs_sign_url(gc, "http://h/p/x", "POST", "b", "o", 60, &xml, &err), MB_EINVAL);
    /* four seconds after signing it has expired */
    int64_t left = 5500 - (mb_mono_ms() - signed_at);
    if (left > 0) usleep((useconds_t)left * 1000);
    assert_int_equal(mb_gc_gcs_check_signed(gc, "GET", host, path, &q, &xml), 400);
    assert_non_null(strstr(xml, "<Code>ExpiredToken</Code>"));
    free(xml);
    free(alg);
    free(cred);
    free(date);
    free(exp);
    free(hdr);
    free(sig);
    free(url);
    mb_gc_close(gc);
    mb_rm_rf(dir, NULL);
    free(dir);
}

/* Every input of fuzz/corpus/gcsql (seeds and what fuzz_gcsql found) on a
 * project like the fuzz target's, in a transaction rolled back after each:
 * no crash, no leak, an error always with a UTF-8 message. */
static void test_fuzz_corpus(void **state)
{
    (void)state;
    char *dir = tmpdir();
    mb_gc *gc = open_project(dir, "p.db", "fuzz-proj");
    mb_gc_result r;
    mb_err err = {0};
    assert_int_equal(mb_gc_bq_query(gc, "CREATE SCHEMA d; CREATE TABLE d.t (id INT64, tags ARRAY<STRING>, "
                                        "meta STRUCT<country STRING, n INT64>)", NULL, 0, &r, &err), MB_OK);
    mb_gc_result_free(&r);
    DIR *dd = opendir("fuzz/corpus/gcsql");
    assert_non_null(dd);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(dd))) {
        if (de->d_name[0] == '.') continue;
        char *path = mb_asprintf("fuzz/corpus/gcsql/%s", de->d_name), *sql = NULL;
        size_t len = 0;
        assert_int_equal(mb_read_file(path, 1 << 20, &sql, &len, NULL), MB_OK);
        free(path);
        assert_int_equal(mb_gc__begin(gc, &err), MB_OK);
        memset(&err, 0, sizeof err);
        if (mb_gc_bq_query(gc, sql, NULL, 0, &r, &err) == MB_OK) mb_gc_result_free(&r);
        else assert_true(err.msg[0] && mb_utf8_valid(err.msg, strlen(err.msg)));
        mb_gc__rollback(gc);
        free(sql);
        n++;
    }
    closedir(dd);
    assert_true(n > 50);
    mb_gc_close(gc);
    mb_rm_rf(dir, NULL);
    free(dir);
}

static void test_provision(void **state)
{
    (void)state;
    /* on a tmpfs when there is one, as the sandbox's state directory is */
    char shm[] = "/dev/shm/mb-gcloud-XXXXXX";
    char *dir = mkdtemp(shm) ? mb_strdup(shm) : tmpdir();
    char *db = mb_asprintf("%s/state.db", dir), *base = mb_asprintf("%s/blobs/base.db", dir);
    char pid[32];
    mb_gcloud_project_id("5a38cac2-cc06-4ae8-922a-da59db01cc2f", pid);
    assert_string_equal(pid, "mcpbox-5a38cac2cc06");
    mb_err err = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(mb_gcloud_provision(db, base, pid, (unsigned)getuid(), &err), MB_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "provision of an empty project: %.2f ms\n",
            (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
    mb_gc *gc;
    assert_int_equal(mb_gc_open(db, pid, &gc, &err), MB_OK);
    assert_int_equal(mb_gc_bq_dataset_create(gc, "kept", NULL, "US", &err), MB_OK);
    mb_gc_close(gc);
    assert_int_equal(mb_gcloud_snapshot(db, base, &err), MB_OK);
    assert_int_equal(mb_gc_open(db, pid, &gc, &err), MB_OK);
    assert_int_equal(mb_gc_bq_dataset_create(gc, "later", NULL, "US", &err), MB_OK);
    mb_gc_close(gc);
    /* reset: back to the snapshot */
    assert_int_equal(mb_gcloud_provision(db, base, pid, (unsigned)getuid(), &err), MB_OK);
    assert_int_equal(mb_gc_open(db, NULL, &gc, &err), MB_OK);
    assert_string_equal(mb_gc_project(gc), pid);
    json_t *l = mb_gc_bq_dataset_list(gc);
    assert_int_equal(json_array_size(l), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(l, 0), "id")), "kept");
    json_decref(l);
    mb_gc_close(gc);
    /* links the sandbox plants in its state directory are never followed */
    char *victim = mb_asprintf("%s/victim", dir), *journal = mb_asprintf("%s-journal", db);
    char *link2 = mb_asprintf("%s/link.db", dir);
    assert_int_equal(mb_write_file_atomic(victim, "keep", 4, 0644, &err), MB_OK);
    assert_int_equal(symlink(victim, journal), 0);
    /* SQLite refuses the project rather than read or write through the link */
    if (mb_gc_open(db, pid, &gc, &err) == MB_OK) {
        mb_gc_bq_dataset_create(gc, "x", NULL, "US", &err);
        mb_gc_close(gc);
    }
    char *vdata;
    size_t vlen;
    assert_int_equal(mb_read_file(victim, 100, &vdata, &vlen, &err), MB_OK);
    assert_int_equal(vlen, 4);
    free(vdata);
    assert_int_equal(symlink(db, link2), 0);
    assert_int_not_equal(mb_gc_open(link2, pid, &gc, &err), MB_OK);
    free(victim);
    free(link2);
    /* a reset clears the planted journal */
    assert_int_equal(mb_gcloud_provision(db, base, pid, (unsigned)getuid(), &err), MB_OK);
    assert_int_equal(access(journal, F_OK), -1);
    free(journal);
    /* no baseline: an empty project */
    unlink(base);
    assert_int_equal(mb_gcloud_provision(db, base, pid, (unsigned)getuid(), &err), MB_OK);
    assert_int_equal(mb_gc_open(db, pid, &gc, &err), MB_OK);
    l = mb_gc_bq_dataset_list(gc);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    mb_gc_close(gc);
    free(db);
    free(base);
    mb_rm_rf(dir, NULL);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_storage_logging_compute),
        cmocka_unit_test(test_log_extra_old_project),
        cmocka_unit_test(test_time_parsers_stop_at_the_end),
        cmocka_unit_test(test_isolation),
        cmocka_unit_test(test_hostile_sql),
        cmocka_unit_test(test_signed_urls),
        cmocka_unit_test(test_fuzz_corpus),
        cmocka_unit_test(test_provision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
