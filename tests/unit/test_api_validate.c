/*
 * test_api_validate.c - unit tests for acquire-body validation and its
 * FastAPI-shaped 422 details.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/api.h"

static json_t *parse_fail(const char *body, int local_dev)
{
    mb_acquire_body b;
    json_t *detail = NULL;
    assert_int_equal(mb_api_parse_acquire(body, strlen(body), local_dev, 7200, &b, &detail), MB_EINVAL);
    assert_non_null(detail);
    assert_true(json_array_size(detail) > 0);
    return detail;
}

static const char *first_type(json_t *detail)
{
    return json_string_value(json_object_get(json_array_get(detail, 0), "type"));
}

static void test_valid_bodies(void **state)
{
    mb_acquire_body b;
    json_t *detail;
    const char *body = "{\"server_names\":[\"git\",\"filesystem\",\"git\"],\"benchmark\":\"MCP_Atlas\","
                       "\"test_account_email\":\"a@b.c\",\"ttl_seconds\":60,\"extra\":1}";
    assert_int_equal(mb_api_parse_acquire(body, strlen(body), 0, 7200, &b, &detail), MB_OK);
    assert_int_equal(b.n_servers, 2); /* de-duplicated */
    assert_string_equal(b.servers[0], "git");
    assert_string_equal(b.benchmark, "MCP_Atlas");
    assert_string_equal(b.test_account_email, "a@b.c");
    assert_int_equal(b.ttl_seconds, 60);
    mb_acquire_body_free(&b);

    body = "{\"server_names\":\"ALL\",\"ttl_seconds\":null}";
    assert_int_equal(mb_api_parse_acquire(body, strlen(body), 0, 7200, &b, &detail), MB_OK);
    assert_int_equal(b.n_servers, 16);
    assert_int_equal(b.ttl_seconds, -1);
    assert_null(b.benchmark);
    mb_acquire_body_free(&b);

    body = "{\"server_names\":[],\"ttl_seconds\":\"86400\"}";
    assert_int_equal(mb_api_parse_acquire(body, strlen(body), 0, 7200, &b, &detail), MB_OK);
    assert_int_equal(b.n_servers, 0);
    assert_int_equal(b.ttl_seconds, 86400);
    mb_acquire_body_free(&b);

    body = "{\"server_names\":[\"git\"],\"ttl_seconds\":120.0}";
    assert_int_equal(mb_api_parse_acquire(body, strlen(body), 0, 7200, &b, &detail), MB_OK);
    assert_int_equal(b.ttl_seconds, 120);
    mb_acquire_body_free(&b);

    /* default TTL when absent; local_dev defaults to ALL */
    assert_int_equal(mb_api_parse_acquire("{\"benchmark\":\"Toolathlon\"}", 26, 1, 7200, &b, &detail), MB_OK);
    assert_int_equal(b.n_servers, 16);
    assert_int_equal(b.ttl_seconds, 7200);
    mb_acquire_body_free(&b);
    assert_int_equal(mb_api_parse_acquire("", 0, 1, 7200, &b, &detail), MB_OK);
    mb_acquire_body_free(&b);
}

static void test_invalid_bodies(void **state)
{
    json_t *d = parse_fail("{}", 0);
    assert_string_equal(first_type(d), "missing");
    json_decref(d);

    d = parse_fail("{\"server_names\":[\"git\",\"word2\",3]}", 0);
    assert_int_equal(json_array_size(d), 2);
    json_t *e = json_array_get(d, 0);
    assert_string_equal(json_string_value(json_object_get(e, "type")), "enum");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(e, "loc"), 2)), 1);
    assert_non_null(strstr(json_string_value(json_object_get(e, "msg")), "'playwright'"));
    assert_string_equal(json_string_value(json_object_get(e, "input")), "word2");
    json_decref(d);

    d = parse_fail("{\"server_names\":[\"git\"],\"ttl_seconds\":10,\"benchmark\":\"x\"}", 0);
    assert_int_equal(json_array_size(d), 2); /* every problem reported at once */
    json_decref(d);

    d = parse_fail("{\"server_names\":[\"git\"],\"ttl_seconds\":true}", 0);
    assert_string_equal(first_type(d), "int_type");
    json_decref(d);

    d = parse_fail("{bad json", 0);
    assert_string_equal(first_type(d), "json_invalid");
    json_decref(d);

    d = parse_fail("{\"server_names\":[\"git\"],\"server_names\":[\"git\"]}", 0);
    assert_string_equal(first_type(d), "json_invalid");
    json_decref(d);

    d = parse_fail("\"str\"", 0);
    assert_string_equal(first_type(d), "json_invalid"); /* not an object, not valid top-level for jansson */
    json_decref(d);
}

static void test_egress_field(void **state)
{
    (void)state;
    mb_acquire_body b;
    json_t *detail;
    /* absent or null: the profile's (Klavis's requests have no such field) */
    const char *body = "{\"server_names\":[\"playwright\"],\"egress\":null}";
    assert_int_equal(mb_api_parse_acquire(body, strlen(body), 0, 7200, &b, &detail), MB_OK);
    assert_null(b.egress);
    mb_acquire_body_free(&b);
    body = "{\"server_names\":[\"playwright\"],\"egress\":[\"Site.Test\",\"*.a.org\",\"site.test\","
           "\"10.0.0.1\"]}";
    assert_int_equal(mb_api_parse_acquire(body, strlen(body), 0, 7200, &b, &detail), MB_OK);
    assert_int_equal(b.n_egress, 3); /* lower-cased, de-duplicated */
    assert_string_equal(b.egress[0], "site.test");
    assert_string_equal(b.egress[1], "*.a.org");
    assert_string_equal(b.egress[2], "10.0.0.1");
    mb_acquire_body_free(&b);
    body = "{\"server_names\":[\"playwright\"],\"egress\":[]}"; /* deny everything */
    assert_int_equal(mb_api_parse_acquire(body, strlen(body), 0, 7200, &b, &detail), MB_OK);
    assert_non_null(b.egress);
    assert_int_equal(b.n_egress, 0);
    mb_acquire_body_free(&b);

    /* hostile: every problem is a 422 item at its index */
    json_t *d = parse_fail("{\"server_names\":[\"playwright\"],\"egress\":\"*\"}", 0);
    assert_string_equal(first_type(d), "list_type");
    json_decref(d);
    d = parse_fail("{\"server_names\":[],\"egress\":[\"ok.com\",3,\"a b\",\"http://a.com/\","
                   "\"a.com:443\",{},\"\",\"caf\\u00e9.com\"]}", 0);
    assert_int_equal(json_array_size(d), 7);
    json_t *e = json_array_get(d, 0);
    assert_string_equal(json_string_value(json_object_get(e, "type")), "string_type");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(e, "loc"), 2)), 1);
    e = json_array_get(d, 1);
    assert_string_equal(json_string_value(json_object_get(e, "type")), "value_error");
    assert_string_equal(json_string_value(json_object_get(e, "input")), "a b");
    e = json_array_get(d, 6); /* not ASCII: never reaches the allow-list */
    assert_string_equal(json_string_value(json_object_get(e, "type")), "value_error");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(e, "loc"), 2)), 7);
    json_decref(d);
    /* a NUL inside a string is refused by the JSON reader itself */
    d = parse_fail("{\"server_names\":[],\"egress\":[\"x\\u0000y\"]}", 0);
    assert_string_equal(first_type(d), "json_invalid");
    json_decref(d);
    mb_buf big = {0};
    mb_buf_puts(&big, "{\"server_names\":[],\"egress\":[");
    for (int i = 0; i < 33; i++) mb_buf_printf(&big, "%s\"h%d.com\"", i ? "," : "", i);
    mb_buf_puts(&big, "]}");
    d = parse_fail(big.data, 0);
    assert_string_equal(first_type(d), "too_long");
    json_decref(d);
    mb_buf_free(&big);
}

static void test_openapi_lists_routes(void **state)
{
    json_t *doc = mb_api_openapi();
    json_t *paths = json_object_get(doc, "paths");
    assert_non_null(json_object_get(json_object_get(paths, "/local-sandbox"), "post"));
    assert_non_null(json_object_get(json_object_get(paths, "/local-sandbox/{local_sandbox_id}"), "delete"));
    assert_non_null(json_object_get(json_object_get(paths, "/sandbox/local_dev/{sandbox_id}/dump"), "get"));
    json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    assert_int_equal(json_array_size(json_object_get(json_object_get(schemas, "LocalSandboxMCPServer"), "enum")), 16);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_bodies),
        cmocka_unit_test(test_invalid_bodies),
        cmocka_unit_test(test_egress_field),
        cmocka_unit_test(test_openapi_lists_routes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
