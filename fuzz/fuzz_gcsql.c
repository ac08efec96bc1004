/*
 * fuzz_gcsql.c - the GoogleSQL layer of the BigQuery emulation (src/gcloud:
 * the tokenizer, the translator to SQLite, the UDFs, ARRAY / STRUCT values,
 * UNNEST, MERGE) on any script, over a project with flat, RECORD and
 * REPEATED columns. Each input runs inside a transaction that is rolled
 * back, so inputs do not change what the next one sees.
 * Invariants: the query answers MB_OK or an error with a message that is
 * valid UTF-8; a result's rows all have as many cells as it has fields and
 * every field has a name and a type; the translation alone never crashes.
 *
 * Input: the script, as is.
 */
#include "fuzz.h"
#include "gcloud/gcloud_int.h"

#include <unistd.h>

static mb_gc *gc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char path[] = "/tmp/fuzz_gcsql_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) abort();
    close(fd);
    unlink(path);
    mb_err err = {0};
    if (mb_gc_open(path, "fuzz-proj", &gc, &err)) abort();
    mb_gc_result r;
    const char *setup =
        "CREATE SCHEMA d; "
        "CREATE TABLE d.t (id INT64, name STRING, day DATE, ts TIMESTAMP, amount FLOAT64, ok BOOL, "
        "tags ARRAY<STRING>, meta STRUCT<country STRING, n INT64>, hits ARRAY<STRUCT<page STRING, ms INT64>>); "
        "INSERT INTO d.t (id, name, day, ts, amount, ok, tags, meta, hits) VALUES "
        "(1, 'a', '2025-03-10', '2025-03-10 09:00:00', 1.5, TRUE, ['x', 'y'], STRUCT('DE' AS country, 2 AS n), "
        "[STRUCT('home' AS page, 120 AS ms)]), (2, 'b', NULL, NULL, 0, FALSE, [], NULL, []); "
        "CREATE TABLE d.u_2501 AS SELECT id, name FROM d.t";
    if (mb_gc_bq_query(gc, setup, NULL, 0, &r, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        abort();
    }
    mb_gc_result_free(&r);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return 0;
    char *sql = fuzz_str(data, size);
    mb_err err = {0};
    char *t = NULL;
    if (mb_gc_bq_translate(gc, sql, &t, &err) == MB_OK) free(t);
    if (mb_gc__begin(gc, &err)) abort();
    mb_gc_result r;
    memset(&err, 0, sizeof err);
    int rc = mb_gc_bq_query(gc, sql, NULL, 0, &r, &err);
    mb_gc__rollback(gc);
    if (rc == MB_OK) {
        size_t nf = json_array_size(r.fields), i;
        json_t *f, *row;
        json_array_foreach(r.fields, i, f) {
            FUZZ_CHECK(json_is_string(json_object_get(f, "name")), "field %zu has no name", i);
            FUZZ_CHECK(json_is_string(json_object_get(f, "type")), "field %zu has no type", i);
        }
        json_array_foreach(r.rows, i, row)
            FUZZ_CHECK(json_array_size(row) == nf, "row %zu has %zu cells for %zu fields", i,
                       json_array_size(row), nf);
        mb_gc_result_free(&r);
    } else {
        FUZZ_CHECK(err.msg[0], "an error without a message (rc %d)", rc);
        json_t *m = json_string(err.msg);
        FUZZ_CHECK(m != NULL, "the error message is not UTF-8");
        json_decref(m);
    }
    free(sql);
    return 0;
}
