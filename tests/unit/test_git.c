/*
 * test_git.c - unit tests for the git server's pure parts: pathlib/GitPython path
 * handling, the tool tables per upstream version, and the jsonschema-style
 * validation messages (servers/common/pyschema) the Python upstreams print.
 * Expected texts were taken from CPython 3.11, pydantic 2 and jsonschema 4.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "servers/common/pyschema.h"
#include "servers/git/git.h"
#include "servers/git/repo.h"
#include "util/util.h"

static void test_pypath(void **state)
{
    struct {
        const char *in, *out;
    } cases[] = {
        {"/data/repos/x/", "/data/repos/x"}, {"/data//repos/./x", "/data/repos/x"},
        {"", "."},                          {"a/../b", "a/../b"},
        {"//srv/x", "//srv/x"},             {"///srv/x", "/srv/x"},
        {"./rel", "rel"},                   {"/", "/"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = mb_git_pypath(cases[i].in);
        assert_string_equal(got, cases[i].out);
        free(got);
    }
}

static void test_expand_path(void **state)
{
    setenv("HOME", "/home/u", 1);
    setenv("MB_T_DIR", "repos", 1);
    unsetenv("MB_T_UNSET");
    char *p = mb_git_expand_path("~/x/../y");
    assert_string_equal(p, "/home/u/y");
    free(p);
    p = mb_git_expand_path("/data/$MB_T_DIR/${MB_T_DIR}/$MB_T_UNSET");
    assert_string_equal(p, "/data/repos/repos/$MB_T_UNSET");
    free(p);
    p = mb_git_expand_path("/a/b/../../..");
    assert_string_equal(p, "/");
    free(p);
}

static void test_tool_tables(void **state)
{
    size_t n1, n2;
    const mb_git_tool *old = mb_git_tools(MB_GIT_2025_1_14, &n1);
    const mb_git_tool *new = mb_git_tools(MB_GIT_2025_7_1, &n2);
    assert_int_equal(n1, 11);
    assert_int_equal(n2, 13);
    assert_string_equal(new[11].name, "git_init");
    assert_string_equal(new[12].name, "git_branch");
    for (size_t i = 0; i < n2; i++) {
        json_error_t e;
        json_t *s = json_loads(new[i].schema, 0, &e);
        assert_non_null(s);
        assert_string_equal(json_string_value(json_object_get(s, "type")), "object");
        assert_non_null(json_object_get(json_object_get(s, "properties"), "repo_path"));
        json_decref(s);
        if (i < n1) {
            assert_string_equal(old[i].name, new[i].name);
            json_t *o = json_loads(old[i].schema, 0, &e);
            assert_non_null(o);
            json_decref(o);
        }
    }
    mb_git_version v;
    assert_int_equal(mb_git_version_parse("2025.1.14", &v), MB_OK);
    assert_int_equal(v, MB_GIT_2025_1_14);
    assert_int_equal(mb_git_version_parse("2025.11.25", &v), MB_EINVAL);
}

static void expect_msg(const char *schema, const char *args, const char *want)
{
    json_t *s = json_loads(schema, 0, NULL), *a = json_loads(args, JSON_DECODE_ANY, NULL);
    assert_non_null(s);
    assert_non_null(a);
    mb_buf m = {0};
    mb_buf_puts(&m, "");
    int bad = mb_pyschema_check(s, a, &m);
    if (want) {
        assert_true(bad);
        assert_string_equal(m.data, want);
    } else {
        assert_false(bad);
    }
    mb_buf_free(&m);
    json_decref(s), json_decref(a);
}

static void test_jsonschema_messages(void **state)
{
    size_t n;
    const mb_git_tool *t = mb_git_tools(MB_GIT_2025_7_1, &n);
    const char *create_branch = t[8].schema, *add = t[5].schema, *log = t[7].schema;
    expect_msg(create_branch, "{}", "'repo_path' is a required property");
    expect_msg(create_branch, "{\"repo_path\": 5}", "'branch_name' is a required property");
    expect_msg(create_branch, "{\"repo_path\": 5, \"branch_name\": 7}", "5 is not of type 'string'");
    expect_msg(create_branch, "{\"repo_path\": \"x\", \"branch_name\": \"b\", \"base_branch\": 5}",
               "5 is not valid under any of the given schemas");
    expect_msg(create_branch, "{\"repo_path\": \"x\", \"branch_name\": \"b\", \"base_branch\": null}",
               NULL);
    expect_msg(add, "{\"repo_path\": \"x\", \"files\": [\"a\", 1]}", "1 is not of type 'string'");
    expect_msg(add, "{\"repo_path\": \"x\", \"files\": \"a\"}", "'a' is not of type 'array'");
    expect_msg(log, "{\"repo_path\": \"x\", \"max_count\": 2.0}", NULL);
    expect_msg(log, "{\"repo_path\": \"x\", \"max_count\": 2.5}", "2.5 is not of type 'integer'");
    expect_msg(log, "{\"repo_path\": \"x\", \"max_count\": true}", "True is not of type 'integer'");
    expect_msg(log, "{\"repo_path\": {\"a\": [null, false]}}",
               "{'a': [None, False]} is not of type 'string'");
    expect_msg("{\"type\":\"object\",\"properties\":{\"t\":{\"enum\":[\"a\",\"b\"]}}}",
               "{\"t\": \"c\"}", "'c' is not one of ['a', 'b']");
    expect_msg("{\"type\":\"number\",\"maximum\":120}", "121", "121 is greater than the maximum of 120");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pypath),
        cmocka_unit_test(test_expand_path),
        cmocka_unit_test(test_tool_tables),
        cmocka_unit_test(test_jsonschema_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
