/*
 * test_terminal.c - unit tests for the terminal server's policy: shlex splitting,
 * realpath, configuration from the environment, validation texts.
 * The expected values were taken from CPython 3.11 (shlex.split, os.path.realpath)
 * and cli-mcp-server 0.2.5 / the lockon-n fork.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/common/pyfmt.h"
#include "servers/terminal/terminal.h"
#include "util/util.h"

static void expect_split(const char *in, const char *const *want)
{
    char **got = NULL;
    mb_buf e = {0};
    assert_int_equal(mb_term_shlex_split(in, &got, &e), MB_OK);
    size_t i = 0;
    for (; want[i]; i++) {
        assert_non_null(got[i]);
        assert_string_equal(got[i], want[i]);
    }
    assert_null(got[i]);
    mb_term_strv_free(got);
    mb_buf_free(&e);
}

static void expect_split_error(const char *in, const char *msg)
{
    char **got = NULL;
    mb_buf e = {0};
    assert_int_equal(mb_term_shlex_split(in, &got, &e), MB_EINVAL);
    assert_null(got);
    assert_string_equal(e.data, msg);
    mb_buf_free(&e);
}

static void test_shlex(void **state)
{
    expect_split("ls -l", (const char *[]){"ls", "-l", NULL});
    expect_split("cat \"Barber Shop.csv\"", (const char *[]){"cat", "Barber Shop.csv", NULL});
    expect_split("echo 'a b' c\\ d", (const char *[]){"echo", "a b", "c d", NULL});
    expect_split("a\"b c\"d", (const char *[]){"ab cd", NULL});
    expect_split("''", (const char *[]){"", NULL});
    expect_split("x \"\"", (const char *[]){"x", "", NULL});
    expect_split("echo \"a\\\"b\" 'c\\d'", (const char *[]){"echo", "a\"b", "c\\d", NULL});
    expect_split("echo \"a\\nb\"", (const char *[]){"echo", "a\\nb", NULL});
    expect_split("  ", (const char *[]){NULL});
    expect_split("", (const char *[]){NULL});
    expect_split("a  b\t c\n", (const char *[]){"a", "b", "c", NULL});
    expect_split("echo \\\"x", (const char *[]){"echo", "\"x", NULL});
    expect_split("e \"\\\\\"", (const char *[]){"e", "\\", NULL});
    expect_split_error("a\\", "No escaped character");
    expect_split_error("\"abc", "No closing quotation");
    expect_split_error("'abc", "No closing quotation");
}

static char *g_root;

static int setup_tree(void **state)
{
    char tmpl[] = "/tmp/mb-term-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    g_root = mb_strdup(d);
    char *p;
    p = mb_asprintf("%s/sub", g_root), mkdir(p, 0755), free(p);
    p = mb_asprintf("%s/sub/f.txt", g_root);
    FILE *f = fopen(p, "w");
    fputs("x", f);
    fclose(f);
    free(p);
    p = mb_asprintf("%s/out", g_root), assert_int_equal(symlink("/etc", p), 0), free(p);
    p = mb_asprintf("%s/in", g_root), assert_int_equal(symlink("sub", p), 0), free(p);
    p = mb_asprintf("%s/loop", g_root), assert_int_equal(symlink("loop", p), 0), free(p);
    p = mb_asprintf("%s2", g_root), mkdir(p, 0755), free(p);
    return 0;
}

static int teardown_tree(void **state)
{
    char *p = mb_asprintf("%s2", g_root);
    mb_rm_rf(p, NULL);
    free(p);
    mb_rm_rf(g_root, NULL);
    free(g_root);
    return 0;
}

static void expect_real(const char *rel, const char *want_rel, int want_abs)
{
    char *in = mb_asprintf("%s/%s", g_root, rel);
    char *got = mb_term_realpath(in);
    char *want = want_abs ? mb_strdup(want_rel) : mb_asprintf("%s%s", g_root, want_rel);
    assert_string_equal(got, want);
    free(in), free(got), free(want);
}

static void test_realpath(void **state)
{
    expect_real("sub/f.txt", "/sub/f.txt", 0);
    expect_real("in/f.txt", "/sub/f.txt", 0);
    expect_real("./in/../sub//f.txt", "/sub/f.txt", 0);
    expect_real("out/passwd", "/etc/passwd", 1);
    expect_real("missing/../x", "/x", 0);
    expect_real("loop/x", "/loop/x", 0);
    char *got = mb_term_realpath("/../../");
    assert_string_equal(got, "/");
    free(got);
}

static const char *const *g_env;

static const char *fake_getenv(const char *name)
{
    size_t n = strlen(name);
    for (const char *const *e = g_env; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

static void load(mb_term_config *c, mb_term_variant v, const char *const *env)
{
    g_env = env;
    mb_err err = {0};
    int rc = mb_term_config_load(c, v, fake_getenv, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, MB_OK);
}

/* Validates `cmd`; returns the refusal text (owned) or NULL when accepted. */
static char *check(const mb_term_config *c, const char *cmd, mb_term_plan *plan)
{
    mb_buf e = {0};
    mb_buf_puts(&e, "");
    int rc = mb_term_validate(c, cmd, plan, &e);
    if (rc == MB_OK) {
        mb_buf_free(&e);
        return NULL;
    }
    return mb_buf_steal(&e);
}

static void expect_refused(const mb_term_config *c, const char *cmd, const char *msg)
{
    mb_term_plan plan;
    char *got = check(c, cmd, &plan);
    if (!got) fprintf(stderr, "accepted: %s\n", cmd);
    assert_non_null(got);
    char *want = strstr(msg, "%s") ? mb_asprintf(msg, c->allowed_dir) : mb_strdup(msg);
    assert_string_equal(got, want);
    free(got), free(want);
    mb_term_plan_dispose(&plan);
}

static void test_atlas_policy(void **state)
{
    char *dir = mb_asprintf("ALLOWED_DIR=%s", g_root);
    const char *env[] = {dir, "ALLOWED_COMMANDS=ls,cat,find", "ALLOWED_FLAGS=",
                         "MAX_COMMAND_LENGTH=40", NULL};
    mb_term_config c;
    load(&c, MB_TERM_UPSTREAM, env);
    assert_false(c.shell_operators);
    assert_int_equal(c.timeout_s, 30);

    mb_term_plan plan;
    assert_null(check(&c, "ls", &plan));
    assert_false(plan.use_shell);
    assert_string_equal(plan.argv[0], "ls");
    mb_term_plan_dispose(&plan);

    assert_null(check(&c, "cat ./sub/f.txt in/f.txt", &plan));
    char *want = mb_asprintf("%s/sub/f.txt", g_root);
    assert_string_equal(plan.argv[1], want);
    assert_string_equal(plan.argv[2], want); /* exists with '/': resolved too */
    free(want);
    mb_term_plan_dispose(&plan);

    expect_refused(&c, "rm -rf x", "Command 'rm' is not allowed");
    expect_refused(&c, "ls -l", "Flag '-l' is not allowed");
    expect_refused(&c, "ls; cat x", "Shell operator ';' is not supported. Set ALLOW_SHELL_OPERATORS=true to enable.");
    expect_refused(&c, "ls >> x", "Shell operator '>' is not supported. Set ALLOW_SHELL_OPERATORS=true to enable.");
    expect_refused(&c, "ls || x", "Shell operator '||' is not supported. Set ALLOW_SHELL_OPERATORS=true to enable.");
    expect_refused(&c, "cat \"a>b\"", "Shell operator '>' is not supported. Set ALLOW_SHELL_OPERATORS=true to enable.");
    expect_refused(&c, "cat /etc/passwd", "Path '/etc/passwd' is outside of allowed directory: %s");
    expect_refused(&c, "cat ../x", "Path '../x' is outside of allowed directory: %s");
    expect_refused(&c, "cat out/passwd", "Path 'out/passwd' is outside of allowed directory: %s");
    expect_refused(&c, "find /", "Path '/' is outside of allowed directory: %s");
    expect_refused(&c, "cat out", "Path 'out' is outside of allowed directory: %s");
    expect_refused(&c, "", "Empty command");
    expect_refused(&c, "cat \"x", "Invalid command format: No closing quotation");
    expect_refused(&c, "cat aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                   "Command exceeds maximum length of 40");
    /* /data2 is not inside /data even though it starts with it */
    char *sib = mb_asprintf("cat %s2", g_root);
    char *msg = mb_asprintf("Path '%s2' is outside of allowed directory: %s", g_root, g_root);
    mb_buf e = {0};
    mb_buf_puts(&e, "");
    assert_int_equal(mb_term_validate(&c, sib, &plan, &e), MB_EDENIED);
    assert_string_equal(e.data, msg);
    mb_buf_free(&e), free(sib), free(msg);
    /* URLs and plain words pass through untouched */
    assert_null(check(&c, "cat http://example.com/x word", &plan));
    assert_string_equal(plan.argv[1], "http://example.com/x");
    assert_string_equal(plan.argv[2], "word");
    mb_term_plan_dispose(&plan);

    mb_buf rules = {0};
    mb_term_security_rules(&c, &rules);
    char *expected = mb_asprintf(
        "Security Configuration:\n==================\nWorking Directory: %s\n\nAllowed "
        "Commands:\n----------------\ncat, find, ls\n\nAllowed Flags:\n-------------\n\n\nSecurity "
        "Limits:\n---------------\nMax Command Length: 40 characters\nCommand Timeout: 30 seconds\n",
        g_root);
    assert_string_equal(rules.data, expected);
    free(expected);
    mb_buf_free(&rules);
    mb_buf d = {0};
    mb_term_describe(&c, &d);
    assert_non_null(strstr(d.data, "Available commands: cat, find, ls\nAvailable flags: \n\n"));
    assert_non_null(strstr(d.data, "are not supported. Set ALLOW_SHELL_OPERATORS=true"));
    mb_buf_free(&d);
    mb_term_config_dispose(&c);
    free(dir);
}

static void test_operators(void **state)
{
    char *dir = mb_asprintf("ALLOWED_DIR=%s", g_root);
    const char *env[] = {dir, "ALLOWED_COMMANDS=ls,cat,echo,grep", "ALLOWED_FLAGS=all",
                         "ALLOW_SHELL_OPERATORS=true", NULL};
    mb_term_config up, fork;
    load(&up, MB_TERM_UPSTREAM, env);
    load(&fork, MB_TERM_TOOLATHLON, env);
    mb_term_plan plan;
    assert_null(check(&up, "ls -la | grep x && echo ok", &plan));
    assert_true(plan.use_shell);
    mb_term_plan_dispose(&plan);
    /* 0.2.5 validates a redirection target as a command; the fork as a path */
    expect_refused(&up, "echo hi > out.txt", "Invalid command part 'out.txt': Command 'out.txt' is not allowed");
    assert_null(check(&fork, "echo hi > out.txt", &plan));
    mb_term_plan_dispose(&plan);
    expect_refused(&fork, "echo hi > /etc/x",
                   "Invalid file path '/etc/x': Path '/etc/x' is outside of allowed directory: %s");
    expect_refused(&up, "ls && rm x", "Invalid command part 'rm x': Command 'rm' is not allowed");
    expect_refused(&fork, "ls; cat /etc/passwd",
                   "Invalid command part 'cat /etc/passwd': Path '/etc/passwd' is outside of allowed directory: %s");
    /* ">>" splits into two ">" tokens: 0.2.5 then takes the second ">" as a command */
    expect_refused(&up, "echo a >>> b", "Invalid command part '>': Command '>' is not allowed");
    mb_term_config_dispose(&up);
    mb_term_config_dispose(&fork);
    free(dir);
}

static void test_config_defaults_and_errors(void **state)
{
    mb_term_config c;
    mb_err err = {0};
    g_env = (const char *const[]){NULL};
    assert_int_equal(mb_term_config_load(&c, MB_TERM_UPSTREAM, fake_getenv, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "Valid ALLOWED_DIR is required"));
    char *dir = mb_asprintf("ALLOWED_DIR=%s", g_root);
    const char *env[] = {dir, NULL};
    load(&c, MB_TERM_UPSTREAM, env);
    mb_buf rules = {0};
    mb_term_security_rules(&c, &rules);
    assert_non_null(strstr(rules.data, "\ncat, ls, pwd\n"));
    assert_non_null(strstr(rules.data, "\n--help, -a, -l\n"));
    mb_buf_free(&rules);
    mb_term_config_dispose(&c);

    const char *bad[] = {dir, "COMMAND_TIMEOUT=abc", NULL};
    g_env = bad;
    assert_int_equal(mb_term_config_load(&c, MB_TERM_UPSTREAM, fake_getenv, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "invalid literal for int()"));
    load(&c, MB_TERM_TOOLATHLON, bad); /* the fork falls back to defaults */
    assert_int_equal(c.timeout_s, 30);
    assert_int_equal(c.max_stdout_length, 8192);
    mb_term_security_rules(&c, &rules);
    assert_non_null(strstr(rules.data, "Max Stdout Length: 8192 characters\nMax Stderr Length: 2048 "
                                       "characters\nShell Operators: Disabled\n"));
    assert_non_null(strstr(rules.data, "Truncate Message: ...[output truncated]\n"));
    mb_buf_free(&rules);
    mb_term_config_dispose(&c);
    free(dir);
}

static void test_pyfmt(void **state)
{
    struct {
        const char *in, *out;
    } reprs[] = {
        {"abc", "'abc'"},
        {"it's", "\"it's\""},
        {"a'b\"c", "'a\\'b\"c'"},
        {"l1\nl2\t\\", "'l1\\nl2\\t\\\\'"},
        {"\x01\x7f", "'\\x01\\x7f'"},
        {"\xc2\xa0x", "'\\xa0x'"},
        {"\xe2\x80\x8b", "'\\u200b'"},
        {"\xe2\x99\x9a PH\xe2\x91\xa6", "'\xe2\x99\x9a PH\xe2\x91\xa6'"},
    };
    for (size_t i = 0; i < sizeof reprs / sizeof reprs[0]; i++) {
        mb_buf b = {0};
        mb_py_repr_str(&b, reprs[i].in, strlen(reprs[i].in));
        assert_string_equal(b.data, reprs[i].out);
        mb_buf_free(&b);
    }
    struct {
        double v;
        const char *out;
    } floats[] = {{30, "30.0"}, {0.1, "0.1"}, {1e16, "1e+16"}, {1.5e-5, "1.5e-05"},
                  {123.456, "123.456"}, {1e15, "1000000000000000.0"}, {-2.5, "-2.5"},
                  {0.0001, "0.0001"}};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        mb_buf b = {0};
        mb_py_float_str(&b, floats[i].v);
        assert_string_equal(b.data, floats[i].out);
        mb_buf_free(&b);
    }
    struct {
        const char *in;
        const char *msg;
    } bad[] = {
        {"ok\xff", "'utf-8' codec can't decode byte 0xff in position 2: invalid start byte"},
        {"\xe2\x82", "'utf-8' codec can't decode bytes in position 0-1: unexpected end of data"},
        {"\xe2\x82" "A", "'utf-8' codec can't decode bytes in position 0-1: invalid continuation byte"},
        {"\xe2", "'utf-8' codec can't decode byte 0xe2 in position 0: unexpected end of data"},
        {"\xe0\x80", "'utf-8' codec can't decode byte 0xe0 in position 0: invalid continuation byte"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mb_buf b = {0};
        assert_true(mb_py_utf8_error(&b, bad[i].in, strlen(bad[i].in)) >= 0);
        assert_string_equal(b.data, bad[i].msg);
        mb_buf_free(&b);
    }
    mb_buf b = {0};
    assert_int_equal(mb_py_utf8_error(&b, "h\xc3\xa9", 3), -1);
    char nl[] = "a\r\nb\rc\n";
    size_t n = mb_py_universal_newlines(nl, strlen(nl));
    assert_int_equal(n, 6);
    assert_memory_equal(nl, "a\nb\nc\n", 6);
    mb_buf_free(&b);
    assert_int_equal(mb_utf8_length("h\xc3\xa9", 3), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shlex),
        cmocka_unit_test(test_realpath),
        cmocka_unit_test(test_atlas_policy),
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_config_defaults_and_errors),
        cmocka_unit_test(test_pyfmt),
    };
    return cmocka_run_group_tests(tests, setup_tree, teardown_tree);
}
