/*
 * test_metrics.c - the metrics layer: histogram and counter output, the
 * series cap, label escaping, the call log ring, JSON log records; and the
 * same registry and call log hammered by threads (run under TSan too).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway/gateway_int.h"
#include "metrics/metrics.h"

static char *render(mb_metrics *m)
{
    mb_buf b = {0};
    mb_metrics_write(m, &b);
    return mb_buf_steal(&b);
}

/* The next line of text (after line) that starts with prefix, or NULL. One
 * pass over the text: strstr from each hit would read the rest of a few-MB
 * text every time under ASan's strict_string_checks (25 s for 4,196 series). */
static const char *next_line_with(const char *text, const char **line, const char *prefix)
{
    size_t n = strlen(prefix);
    const char *p = *line ? *line : text;
    if (*line) {
        while (*p && *p != '\n') p++;
        if (*p) p++;
    }
    for (; *p; ) {
        if (!strncmp(p, prefix, n)) return *line = p;
        while (*p && *p != '\n') p++;
        if (*p) p++;
    }
    return *line = NULL;
}

static void test_call_histogram_and_outcomes(void **state)
{
    mb_metrics *m = mb_metrics_new();
    mb_metrics_call(m, "filesystem", "tools/call", "read_file", 300, MB_METRICS_CALL_OK);
    mb_metrics_call(m, "filesystem", "tools/call", "read_file", 2000000, MB_METRICS_CALL_TOOL_ERROR);
    mb_metrics_call(m, "filesystem", "bogus/method", NULL, 10, MB_METRICS_CALL_FAILED);
    char *t = render(m);
    const char *lab = "server=\"filesystem\",method=\"tools/call\",tool=\"read_file\"";
    char want[512];
    snprintf(want, sizeof want, "mcpbox_mcp_call_duration_seconds_bucket{%s,le=\"0.0005\"} 1\n", lab);
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "mcpbox_mcp_call_duration_seconds_bucket{%s,le=\"1\"} 1\n", lab);
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "mcpbox_mcp_call_duration_seconds_bucket{%s,le=\"2.5\"} 2\n", lab);
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "mcpbox_mcp_call_duration_seconds_count{%s} 2\n", lab);
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "mcpbox_mcp_call_duration_seconds_sum{%s} 2.000", lab);
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "mcpbox_mcp_calls_total{%s,outcome=\"tool_error\"} 1\n", lab);
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "mcpbox_mcp_call_errors_total{%s} 1\n", lab);
    assert_non_null(strstr(t, want));
    /* an unknown method is "other", the tool label empty */
    assert_non_null(strstr(t, "mcpbox_mcp_call_errors_total{server=\"filesystem\",method=\"other\",tool=\"\"} 1\n"));
    free(t);
    mb_metrics_free(m);
}

static void test_series_cap_and_escaping(void **state)
{
    mb_metrics *m = mb_metrics_new();
    char tool[32];
    for (int i = 0; i < MB_METRICS_MAX_SERIES + 100; i++) {
        snprintf(tool, sizeof tool, "t%d", i);
        mb_metrics_call(m, "s", "tools/call", tool, 1, MB_METRICS_CALL_OK);
    }
    mb_metrics_call(m, "q\"\\\nx\xff", "tools/call", "t", 1, MB_METRICS_CALL_OK);
    char *t = render(m);
    size_t counts = 0;
    for (const char *p = NULL; next_line_with(t, &p, "mcpbox_mcp_call_duration_seconds_count{");)
        counts++;
    assert_int_equal(counts, MB_METRICS_MAX_SERIES + 1); /* + "other" */
    assert_non_null(strstr(t, "mcpbox_mcp_call_duration_seconds_count{server=\"other\",method=\"other\",tool=\"other\"} 101\n"));
    assert_true(mb_utf8_valid(t, strlen(t)));
    free(t);
    mb_metrics_free(m);

    m = mb_metrics_new();
    mb_metrics_restart(m, "q\"\\\nx");
    t = render(m);
    assert_non_null(strstr(t, "mcpbox_server_restarts_total{server=\"q\\\"\\\\\\nx\"} 1\n"));
    free(t);
    mb_metrics_free(m);
}

static void test_ops_bytes_history(void **state)
{
    mb_metrics *m = mb_metrics_new();
    mb_metrics_op_done(m, MB_METRICS_ACQUIRE, 40000, 1);
    mb_metrics_op_done(m, MB_METRICS_DUMP, 40000, 0);
    mb_metrics_bytes_add(m, MB_METRICS_UPLOAD_BYTES, 123);
    mb_metrics_sandboxes_now(m, 3);
    mb_metrics_call(m, "git", "tools/call", "git_status", 2000, MB_METRICS_CALL_ERROR);
    char *t = render(m);
    assert_non_null(strstr(t, "mcpbox_operation_duration_seconds_bucket{op=\"acquire\",le=\"0.05\"} 1\n"));
    assert_non_null(strstr(t, "mcpbox_operation_duration_seconds_bucket{op=\"acquire\",le=\"0.025\"} 0\n"));
    assert_non_null(strstr(t, "mcpbox_operation_errors_total{op=\"dump\"} 1\n"));
    assert_non_null(strstr(t, "mcpbox_upload_bytes_total 123\n"));
    free(t);
    json_t *h = mb_metrics_history(m, mb_now());
    json_t *mins = json_object_get(h, "minutes");
    assert_int_equal(json_array_size(mins), 60);
    json_t *last = json_array_get(mins, 59);
    assert_int_equal(json_integer_value(json_object_get(last, "calls")), 1);
    assert_int_equal(json_integer_value(json_object_get(last, "errors")), 1);
    assert_int_equal(json_integer_value(json_object_get(last, "sandboxes")), 3);
    assert_true(json_real_value(json_object_get(last, "p95_ms")) >= 2.0);
    json_decref(h);
    mb_metrics_free(m);
}

static void test_calllog_ring(void **state)
{
    mb_calllog *cl = mb_calllog_new(3);
    const char *id = "11111111-2222-4333-8444-555555555555";
    for (int i = 0; i < 5; i++) {
        char tool[16];
        snprintf(tool, sizeof tool, "t%d", i);
        mb_call_record r = {.time = mb_now(), .server = "git", .method = "tools/call",
                            .tool = tool, .arg_bytes = (size_t)i, .micros = 1000,
                            .error = i == 4 ? "bad\xff" : NULL};
        mb_calllog_add(cl, id, &r);
    }
    json_t *j = mb_calllog_json(cl, id, 0, 0);
    json_t *calls = json_object_get(j, "calls");
    assert_int_equal(json_array_size(calls), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(calls, 0), "tool")), "t2");
    assert_string_equal(json_string_value(json_object_get(json_array_get(calls, 2), "error")), "bad\xef\xbf\xbd");
    assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 2);
    assert_int_equal(json_integer_value(json_object_get(j, "next")), 5);
    json_decref(j);
    j = mb_calllog_json(cl, id, 4, 0);
    assert_int_equal(json_array_size(json_object_get(j, "calls")), 1);
    json_decref(j);
    j = mb_calllog_json(cl, id, 0, 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "calls"), 0), "seq")), 5);
    json_decref(j);
    mb_buf b = {0};
    mb_calllog_jsonl(cl, id, &b);
    int lines = 0;
    for (size_t i = 0; i < b.len; i++) lines += b.data[i] == '\n';
    assert_int_equal(lines, 3);
    mb_buf_free(&b);
    mb_calllog_drop(cl, id);
    j = mb_calllog_json(cl, id, 0, 0);
    assert_int_equal(json_array_size(json_object_get(j, "calls")), 0);
    json_decref(j);
    mb_calllog_free(cl);
    /* grown in steps up to its cap, then a ring, in order */
    cl = mb_calllog_new(40);
    for (int i = 0; i < 100; i++) {
        mb_call_record r = {.server = "git", .method = "ping"};
        mb_calllog_add(cl, id, &r);
        if (i == 20) {
            j = mb_calllog_json(cl, id, 0, 0);
            assert_int_equal(json_array_size(json_object_get(j, "calls")), 21);
            json_decref(j);
        }
    }
    j = mb_calllog_json(cl, id, 0, 0);
    calls = json_object_get(j, "calls");
    assert_int_equal(json_array_size(calls), 40);
    for (size_t i = 0; i < 40; i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(calls, i), "seq")),
                         61 + (int)i);
    json_decref(j);
    mb_calllog_free(cl);
    /* off */
    cl = mb_calllog_new(0);
    mb_call_record r = {.server = "git", .method = "ping"};
    mb_calllog_add(cl, id, &r);
    j = mb_calllog_json(cl, id, 0, 0);
    assert_int_equal(json_array_size(json_object_get(j, "calls")), 0);
    json_decref(j);
    mb_calllog_free(cl);
}

/* ------------------------------------------------------ many threads */

typedef struct hammer {
    mb_metrics *m;
    mb_calllog *cl;
    int no;
} hammer;

#define THREADS 6
#define PER_THREAD 4000

static void *hammer_run(void *p)
{
    hammer *h = p;
    char tool[16], sid[40];
    for (int i = 0; i < PER_THREAD; i++) {
        snprintf(tool, sizeof tool, "tool%d", i % 50);
        snprintf(sid, sizeof sid, "11111111-2222-4333-8444-%012d", i % 7);
        mb_metrics_call(h->m, "srv", "tools/call", tool, i, (mb_metrics_outcome)(i % 4));
        mb_call_record r = {.time = 1, .server = "srv", .method = "tools/call", .tool = tool};
        mb_calllog_add(h->cl, sid, &r);
        if (i % 500 == 0) {
            mb_metrics_restart(h->m, "srv");
            mb_metrics_sandboxes_now(h->m, (size_t)i);
            if (h->no == 0) mb_calllog_drop(h->cl, sid);
        }
    }
    return NULL;
}

static void *scraper_run(void *p)
{
    hammer *h = p;
    for (int i = 0; i < 30; i++) {
        char *t = render(h->m);
        free(t);
        json_decref(mb_metrics_history(h->m, mb_now()));
        json_decref(mb_calllog_json(h->cl, "11111111-2222-4333-8444-000000000001", 0, 0));
    }
    return NULL;
}

static void test_threads(void **state)
{
    mb_metrics *m = mb_metrics_new();
    mb_calllog *cl = mb_calllog_new(64);
    pthread_t t[THREADS + 1];
    hammer h[THREADS + 1];
    for (int i = 0; i <= THREADS; i++) {
        h[i] = (hammer){m, cl, i};
        pthread_create(&t[i], NULL, i == THREADS ? scraper_run : hammer_run, &h[i]);
    }
    for (int i = 0; i <= THREADS; i++) pthread_join(t[i], NULL);
    char *text = render(m);
    /* every call counted exactly once, across 50 series made concurrently */
    unsigned long long total = 0;
    for (const char *p = NULL; next_line_with(text, &p, "mcpbox_mcp_call_duration_seconds_count{");)
        total += strtoull(strchr(p, '}') + 2, NULL, 10);
    assert_int_equal(total, (unsigned long long)THREADS * PER_THREAD);
    free(text);
    mb_metrics_free(m);
    mb_calllog_free(cl);
}

static void test_json_log_records(void **state)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int saved = dup(2);
    dup2(fds[1], 2);
    mb_log_set_format(MB_LOG_JSON);
    mb_log_context_set("req-1", NULL);
    mb_info("hello \"x\"\n\x01 %s", "\xff");
    mb_log_context_set(NULL, NULL);
    mb_info("gateway: [11111111-2222-4333-8444-555555555555/git] ready");
    mb_log_set_format(MB_LOG_TEXT);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fds[1]);
    char buf[2048] = {0};
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    assert_true(n > 0);
    char *nl = strchr(buf, '\n');
    assert_non_null(nl);
    *nl = '\0';
    json_error_t e;
    json_t *a = json_loads(buf, 0, &e);
    assert_non_null(a);
    assert_string_equal(json_string_value(json_object_get(a, "msg")), "hello \"x\"\n\x01 \xef\xbf\xbd");
    assert_string_equal(json_string_value(json_object_get(a, "request_id")), "req-1");
    assert_string_equal(json_string_value(json_object_get(a, "level")), "info");
    json_decref(a);
    json_t *b = json_loads(nl + 1, JSON_DISABLE_EOF_CHECK, &e);
    assert_non_null(b);
    assert_null(json_object_get(b, "request_id"));
    assert_string_equal(json_string_value(json_object_get(b, "sandbox_id")),
                        "11111111-2222-4333-8444-555555555555");
    json_decref(b);
}

static int is_error_of(const char *result)
{
    mb_gw_span r = {0, strlen(result)};
    return mb_gw__result_is_error(result, r);
}

/* A big result padded with a long text member before or after. */
static int big(const char *head, const char *tail)
{
    mb_buf b = {0};
    mb_buf_puts(&b, head);
    mb_buf_puts(&b, "\"content\":[{\"type\":\"text\",\"text\":\"");
    for (int i = 0; i < 6000; i++) mb_buf_putc(&b, 'x');
    mb_buf_puts(&b, "\"}]");
    mb_buf_puts(&b, tail);
    int v = is_error_of(b.data);
    mb_buf_free(&b);
    return v;
}

static void test_result_is_error(void **state)
{
    assert_true(is_error_of("{\"content\":[],\"isError\":true}"));
    assert_true(is_error_of("{\"content\":[],\"isError\":true,\"structuredContent\":{}}"));
    assert_false(is_error_of("{\"content\":[],\"isError\":false}"));
    assert_false(is_error_of("{\"content\":[{\"isError\":true}]}"));
    assert_false(is_error_of("{\"content\":[{\"text\":\"\\\"isError\\\":true\"}]}"));
    assert_true(big("{", ",\"isError\":true}"));
    assert_true(big("{", " , \"isError\" : true }\n"));
    assert_true(big("{\"isError\": true, ", "}"));
    assert_false(big("{", ",\"isError\":false}"));
    assert_false(big("{", "}"));
    assert_false(big("{\"a\":{\"isError\":true}, ", "}"));
    assert_false(big("{", ",\"a\":{\"isError\":true}}"));
    assert_false(big("{", ",\"a\":\"x\\\"isError\\\":true\"}"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_histogram_and_outcomes),
        cmocka_unit_test(test_series_cap_and_escaping),
        cmocka_unit_test(test_ops_bytes_history),
        cmocka_unit_test(test_calllog_ring),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_json_log_records),
        cmocka_unit_test(test_result_is_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
