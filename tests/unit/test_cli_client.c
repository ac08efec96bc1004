/*
 * test_cli_client.c - unit tests for the CLI client's pure pieces: text made
 * safe for a terminal, aligned tables, byte counts, names, and the options
 * every client command shares.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/client/client.h"

static void test_clean_controls_and_utf8(void **state)
{
    char *s = mb_cl_clean("a\x1b[31mb\x07\tc\nd\x7f", 0);
    assert_string_equal(s, "a?[31mb? c?d?");
    free(s);
    s = mb_cl_clean("line\nnext", 1);
    assert_string_equal(s, "line\nnext");
    free(s);
    /* C1 controls (U+009B is CSI) and invalid bytes */
    s = mb_cl_clean("x\xc2\x9b" "2J\xff\xe4\xb8\xad", 0);
    assert_string_equal(s, "x?2J\xef\xbf\xbd\xe4\xb8\xad");
    free(s);
    s = mb_cl_clean("", 0);
    assert_string_equal(s, "");
    free(s);
    s = mb_cl_clean(NULL, 0);
    assert_string_equal(s, "");
    free(s);
}

static void test_table_aligns_by_code_points(void **state)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    mb_cl_table t = {0};
    const char *a[] = {"NAME", "V"};
    const char *b[] = {"\xe4\xb8\xad\xe6\x96\x87", "1"}; /* two CJK characters */
    const char *c[] = {"longer\x1b", ""};
    mb_cl_table_row(&t, 2, a);
    mb_cl_table_row(&t, 2, b);
    mb_cl_table_row(&t, 2, c);
    mb_cl_table_print(&t, f);
    assert_int_equal(t.nrows, 0);
    rewind(f);
    char out[256] = "";
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    assert_string_equal(out, "NAME     V\n"
                             "\xe4\xb8\xad\xe6\x96\x87       1\n"
                             "longer?  \n");
}

static void test_human_bytes(void **state)
{
    char b[32];
    mb_cl_human_bytes(0, b);
    assert_string_equal(b, "0 B");
    mb_cl_human_bytes(1023, b);
    assert_string_equal(b, "1023 B");
    mb_cl_human_bytes(1536, b);
    assert_string_equal(b, "1.5 KiB");
    mb_cl_human_bytes(3.0 * 1024 * 1024, b);
    assert_string_equal(b, "3.0 MiB");
    mb_cl_human_bytes(1e18, b);
    assert_string_equal(b, "909494.7 TiB");
}

static void test_names(void **state)
{
    assert_true(mb_cl_valid_name("filesystem"));
    assert_true(mb_cl_valid_name("poste_email_toolathlon"));
    assert_true(mb_cl_valid_name("desktop-commander"));
    assert_false(mb_cl_valid_name(""));
    assert_false(mb_cl_valid_name("../x"));
    assert_false(mb_cl_valid_name("a b"));
    assert_false(mb_cl_valid_name("a?b"));
    char long_name[80];
    memset(long_name, 'a', 65);
    long_name[65] = '\0';
    assert_false(mb_cl_valid_name(long_name));
}

static const mb_cl_cmd ls_cmd = {"ls", "usage\n", NULL, NULL, NULL, 0, 1, "at most one thing"};

static void test_options(void **state)
{
    setenv("MCPBOX_URL", "http://example.test:9/", 1);
    setenv("MCPBOX_API_KEY", "env-key", 1);
    mb_cl cl;
    char *none[] = {"ls", NULL};
    assert_int_equal(mb_cl_start(&cl, &ls_cmd, 1, none, NULL), -1);
    assert_string_equal(cl.url, "http://example.test:9"); /* trailing slash dropped */
    assert_string_equal(cl.key, "env-key");
    assert_int_equal(cl.timeout_s, 600);
    mb_cl_free(&cl);

    char *argv[] = {"ls", "--key", "flag-key", "--json", "extra", "--timeout", "5", NULL};
    assert_int_equal(mb_cl_start(&cl, &ls_cmd, 7, argv, NULL), -1);
    assert_string_equal(cl.key, "flag-key");
    assert_true(cl.json);
    assert_false(cl.progress); /* --json: never a bar */
    assert_int_equal(cl.timeout_s, 5);
    assert_string_equal(argv[optind], "extra"); /* options after operands too */
    mb_cl_free(&cl);

    char *bad[] = {"ls", "--timeout", "-1", NULL};
    assert_int_equal(mb_cl_start(&cl, &ls_cmd, 3, bad, NULL), MB_CL_USAGE);
    mb_cl_free(&cl);
    char *ftp[] = {"ls", "--url", "ftp://x", NULL};
    assert_int_equal(mb_cl_start(&cl, &ls_cmd, 3, ftp, NULL), MB_CL_USAGE);
    mb_cl_free(&cl);
    char *unknown[] = {"ls", "--frob", NULL};
    assert_int_equal(mb_cl_start(&cl, &ls_cmd, 2, unknown, NULL), MB_CL_USAGE);
    mb_cl_free(&cl);
    char *two[] = {"ls", "a", "b", NULL};
    assert_int_equal(mb_cl_start(&cl, &ls_cmd, 3, two, NULL), MB_CL_USAGE);
    mb_cl_free(&cl);
    char *help[] = {"ls", "--help", NULL};
    assert_int_equal(mb_cl_start(&cl, &ls_cmd, 2, help, NULL), MB_CL_OK);
    mb_cl_free(&cl);
    unsetenv("MCPBOX_URL");
    unsetenv("MCPBOX_API_KEY");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_controls_and_utf8),
        cmocka_unit_test(test_table_aligns_by_code_points),
        cmocka_unit_test(test_human_bytes),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
