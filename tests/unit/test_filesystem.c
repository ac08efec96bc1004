/*
 * test_filesystem.c - unit tests for the filesystem server's version data and
 * pure parts: the tool tables of each upstream version, zod 3's argument
 * verdicts (servers/common/zod3) that 2025.7.1 prints, and the unified diff
 * as jsdiff 5 and jsdiff 8 print it. Expected texts were produced by the npm
 * packages themselves (zod 3.25.76, diff 5.2.2 and 8.0.4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "servers/common/zod3.h"
#include "servers/filesystem/fs.h"
#include "util/util.h"

static size_t count_tools(const fs_version *v)
{
    size_t n = 0;
    while (fs_version_tools(v)[n].name) n++;
    return n;
}

static void test_versions(void **state)
{
    const fs_version *def = fs_version_find(NULL), *v26 = fs_version_find("2026.7.10"),
                     *v25 = fs_version_find("2025.7.1");
    assert_non_null(v26);
    assert_non_null(v25);
    assert_ptr_equal(def, v26);
    assert_null(fs_version_find("2025.7.2"));
    assert_null(fs_version_find(""));
    assert_int_equal(count_tools(v26), 14);
    assert_int_equal(count_tools(v25), 12);
    /* 2025.11.25 (MCP-Atlas): 2026's tools with its own read_media_file and annotations */
    const fs_version *v2511 = fs_version_find("2025.11.25");
    assert_non_null(v2511);
    assert_int_equal(count_tools(v2511), 14);
    assert_true(v2511->structured && v2511->media_blob && v2511->roots_realpath_only &&
                !v2511->roots_relative && !v2511->replace_literal);
    assert_int_equal(v2511->jsdiff, 5);
    for (size_t i = 0; i < 14; i++) {
        const mb_mcp_tool *a = &fs_version_tools(v26)[i], *b = &fs_version_tools(v2511)[i];
        assert_string_equal(a->name, b->name);
        assert_null(strstr(b->annotations, "openWorldHint"));
        if (!strcmp(b->name, "move_file"))
            assert_non_null(strstr(b->annotations, "\"destructiveHint\":false"));
    }
    assert_true(v26->structured && v26->roots_relative && v26->glob_search && !v26->catch_all);
    assert_true(v25->catch_all && !v25->structured && !v25->roots_relative && !v25->glob_search);
    assert_int_equal(v25->jsdiff, 5);
    assert_int_equal(v26->jsdiff, 8);
    char *list = fs_version_list();
    assert_string_equal(list, "2026.7.10, 2025.11.25, 2025.7.1");
    free(list);
    /* 2025.7.1: no read_text_file / read_media_file, no titles, annotations
     * or output schemas; every schema is valid JSON */
    const char *names[] = {"read_file", "read_multiple_files", "write_file", "edit_file",
                           "create_directory", "list_directory", "list_directory_with_sizes",
                           "directory_tree", "move_file", "search_files", "get_file_info",
                           "list_allowed_directories"};
    for (size_t i = 0; i < 12; i++) {
        const mb_mcp_tool *t = &v25->tools[i];
        assert_string_equal(t->name, names[i]);
        assert_null(t->title);
        assert_null(t->annotations);
        assert_null(t->output_schema);
        json_t *s = json_loads(t->input_schema, 0, NULL);
        assert_non_null(s);
        json_decref(s);
    }
    assert_string_equal(v25->unchecked[0], "list_allowed_directories");
    assert_null(v25->unchecked[1]);
}

/* mb_zod3_check on `args_json` ("" = undefined) against tool `tool` of
 * 2025.7.1; returns the message or "OK" plus the (defaults-filled) args. */
static char *zod(const char *tool, const char *args_json, char **filled)
{
    const fs_version *v = fs_version_find("2025.7.1");
    const mb_mcp_tool *t = v->tools;
    while (strcmp(t->name, tool)) t++;
    json_t *schema = json_loads(t->input_schema, 0, NULL);
    json_t *args = *args_json ? json_loads(args_json, JSON_DECODE_ANY, NULL) : NULL;
    json_t *issues = NULL;
    char *r = mb_zod3_check(schema, args, &issues) ? mb_zod3_message(issues) : mb_strdup("OK");
    if (filled) *filled = args ? json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(issues);
    json_decref(args);
    json_decref(schema);
    return r;
}

static void test_zod3(void **state)
{
    char *filled = NULL;
    char *m = zod("read_file", "{\"path\":\"a\",\"head\":1.5}", &filled);
    assert_string_equal(m, "OK");
    free(m);
    free(filled);
    /* defaults are filled in, unknown keys are left alone */
    m = zod("edit_file", "{\"path\":\"a\",\"edits\":[],\"x\":1}", &filled);
    assert_string_equal(m, "OK");
    assert_string_equal(filled, "{\"path\":\"a\",\"edits\":[],\"x\":1,\"dryRun\":false}");
    free(m);
    free(filled);
    m = zod("search_files", "{\"path\":\"a\",\"pattern\":\"\"}", &filled);
    assert_string_equal(filled, "{\"path\":\"a\",\"pattern\":\"\",\"excludePatterns\":[]}");
    free(m);
    free(filled);

    m = zod("read_file", "", NULL);
    assert_string_equal(m, "[\n  {\n    \"code\": \"invalid_type\",\n    \"expected\": \"object\",\n"
                           "    \"received\": \"undefined\",\n    \"path\": [],\n"
                           "    \"message\": \"Required\"\n  }\n]");
    free(m);
    m = zod("read_file", "[1]", NULL);
    assert_non_null(strstr(m, "\"received\": \"array\""));
    assert_non_null(strstr(m, "\"message\": \"Expected object, received array\""));
    free(m);
    /* every issue, in shape order, with array indices in the path */
    m = zod("edit_file", "{\"path\":3,\"edits\":[{\"oldText\":1}],\"dryRun\":\"x\"}", NULL);
    assert_string_equal(
        m, "[\n  {\n    \"code\": \"invalid_type\",\n    \"expected\": \"string\",\n    \"received\": "
           "\"number\",\n    \"path\": [\n      \"path\"\n    ],\n    \"message\": \"Expected string, "
           "received number\"\n  },\n  {\n    \"code\": \"invalid_type\",\n    \"expected\": \"string\",\n"
           "    \"received\": \"number\",\n    \"path\": [\n      \"edits\",\n      0,\n      \"oldText\"\n"
           "    ],\n    \"message\": \"Expected string, received number\"\n  },\n  {\n    \"code\": "
           "\"invalid_type\",\n    \"expected\": \"string\",\n    \"received\": \"undefined\",\n    \"path\": "
           "[\n      \"edits\",\n      0,\n      \"newText\"\n    ],\n    \"message\": \"Required\"\n  },\n"
           "  {\n    \"code\": \"invalid_type\",\n    \"expected\": \"boolean\",\n    \"received\": \"string\",\n"
           "    \"path\": [\n      \"dryRun\"\n    ],\n    \"message\": \"Expected boolean, received string\"\n"
           "  }\n]");
    free(m);
    /* enums: a wrong value, and a wrong type (ZodEnum's own key order) */
    m = zod("list_directory_with_sizes", "{\"path\":\".\",\"sortBy\":\"date\"}", NULL);
    assert_string_equal(m, "[\n  {\n    \"received\": \"date\",\n    \"code\": \"invalid_enum_value\",\n"
                           "    \"options\": [\n      \"name\",\n      \"size\"\n    ],\n    \"path\": [\n"
                           "      \"sortBy\"\n    ],\n    \"message\": \"Invalid enum value. Expected 'name' | "
                           "'size', received 'date'\"\n  }\n]");
    free(m);
    m = zod("list_directory_with_sizes", "{\"path\":\".\",\"sortBy\":null}", NULL);
    assert_string_equal(m, "[\n  {\n    \"expected\": \"'name' | 'size'\",\n    \"received\": \"null\",\n"
                           "    \"code\": \"invalid_type\",\n    \"path\": [\n      \"sortBy\"\n    ],\n"
                           "    \"message\": \"Expected 'name' | 'size', received null\"\n  }\n]");
    free(m);
    m = zod("read_multiple_files", "{\"paths\":[\"a\",true,null]}", NULL);
    assert_non_null(strstr(m, "\"received\": \"boolean\""));
    assert_non_null(strstr(m, "\"received\": \"null\""));
    assert_non_null(strstr(m, "      2\n"));
    free(m);
}

static void expect_diff(const char *a, const char *b, int major, const char *hunks)
{
    char *d = fs_unified_diff("f", a, strlen(a), b, strlen(b), major);
    char *want = mb_asprintf("Index: f\n===================================================================\n"
                             "--- f\toriginal\n+++ f\tmodified\n%s",
                             hunks);
    assert_string_equal(d, want);
    free(want);
    free(d);
}

static void test_diff_versions(void **state)
{
    /* tie-breaks and the removal-first swap of jsdiff 5 */
    const char *a = "same\n\ngamma\n}\nalpha\n", *b = "}\nalpha\n{\nsame\n}\n\n";
    expect_diff(a, b, 5, "@@ -1,5 +1,6 @@\n+}\n+alpha\n+{\n same\n+}\n \n-gamma\n-}\n-alpha\n");
    expect_diff(a, b, 8, "@@ -1,5 +1,6 @@\n-same\n-\n-gamma\n }\n alpha\n+{\n+same\n+}\n+\n");
    /* jsdiff 5's end-of-file marker lands after the old text's last common line */
    a = "\n{\ngamma\nsame\ngamma\n}";
    b = "alpha\nbeta\nsame\n";
    expect_diff(a, b, 5,
                "@@ -1,6 +1,3 @@\n-\n-{\n-gamma\n+alpha\n+beta\n same\n\\ No newline at end of file\n"
                "-gamma\n-}\n");
    expect_diff(a, b, 8,
                "@@ -1,6 +1,3 @@\n-\n-{\n-gamma\n+alpha\n+beta\n same\n-gamma\n-}\n"
                "\\ No newline at end of file\n");
    for (int major = 5; major <= 8; major += 3) {
        expect_diff("a\nb", "a\nb\nc", major,
                    "@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n"
                    "\\ No newline at end of file\n");
        expect_diff("", "x", major, "@@ -0,0 +1,1 @@\n+x\n\\ No newline at end of file\n");
        expect_diff("same\n", "same\n", major, "");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_zod3),
        cmocka_unit_test(test_diff_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
