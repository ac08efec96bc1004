/*
 * test_util.c - unit tests for the utility layer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

static void test_err_set_returns_code(void **state)
{
    mb_err err;
    assert_int_equal(mb_err_set(&err, MB_EINVAL, "bad %s", "thing"), MB_EINVAL);
    assert_int_equal(err.code, MB_EINVAL);
    assert_string_equal(err.msg, "bad thing");
    assert_int_equal(mb_err_set(NULL, MB_ENOTFOUND, "ignored"), MB_ENOTFOUND);
}

static void test_buf_grows_and_consumes(void **state)
{
    mb_buf b = {0};
    for (int i = 0; i < 1000; i++) mb_buf_printf(&b, "%d,", i);
    assert_true(b.len > 1000);
    assert_int_equal(b.data[b.len], '\0');
    assert_memory_equal(b.data, "0,1,2,", 6);
    mb_buf_consume(&b, 2);
    assert_memory_equal(b.data, "1,2,", 4);
    char *s = mb_buf_steal(&b);
    assert_null(b.data);
    free(s);
}

static void test_uuid4_shape(void **state)
{
    char a[37], b[37];
    mb_uuid4(a);
    mb_uuid4(b);
    assert_true(mb_is_uuid(a));
    assert_string_not_equal(a, b);
    assert_int_equal(a[14], '4');
    assert_true(strchr("89ab", a[19]) != NULL);
    assert_false(mb_is_uuid("not-a-uuid"));
    assert_false(mb_is_uuid("ABCDEF00-0000-4000-8000-000000000000"));
}

/* v7: version and variant bits, the current Unix time in milliseconds in
 * the first 48 bits, and ids made later sort after earlier ones. */
static void test_uuid7_shape_and_order(void **state)
{
    (void)state;
    struct timespec t0;
    clock_gettime(CLOCK_REALTIME, &t0);
    char a[37], b[37];
    mb_uuid7(a);
    assert_true(mb_is_uuid(a));
    assert_int_equal(a[14], '7');
    assert_true(strchr("89ab", a[19]) != NULL);
    char hex[13];
    snprintf(hex, sizeof hex, "%.8s%.4s", a, a + 9);
    long long ms = strtoll(hex, NULL, 16), want = (long long)t0.tv_sec * 1000 + t0.tv_nsec / 1000000;
    assert_true(ms >= want && ms < want + 5000);
    struct timespec two_ms = {0, 2000000};
    nanosleep(&two_ms, NULL);
    mb_uuid7(b);
    assert_true(strcmp(a, b) < 0);
    mb_uuid7(b);
    assert_string_not_equal(a, b);
}

static void test_iso8601_shape(void **state)
{
    char out[40];
    mb_iso8601(1771274725.770231, out);
    /* YYYY-MM-DDTHH:MM:SS.uuuuuu+HH:MM */
    assert_int_equal(strlen(out), 32);
    assert_int_equal(out[10], 'T');
    assert_int_equal(out[19], '.');
    assert_true(out[26] == '+' || out[26] == '-');
}

static void test_parse_size(void **state)
{
    uint64_t v;
    assert_int_equal(mb_parse_size("4G", &v), 0);
    assert_true(v == 4ULL << 30);
    assert_int_equal(mb_parse_size("512MiB", &v), 0);
    assert_true(v == 512ULL << 20);
    assert_int_equal(mb_parse_size("100", &v), 0);
    assert_true(v == 100);
    assert_int_not_equal(mb_parse_size("x", &v), 0);
    assert_int_not_equal(mb_parse_size("5Q", &v), 0);
}

static void test_fs_tree_ops(void **state)
{
    char tmpl[] = "/tmp/mbtestXXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *deep = mb_asprintf("%s/a/b/c", tmpl);
    assert_int_equal(mb_mkdir_p(deep, 0755, NULL), 0);
    char *file = mb_asprintf("%s/f.txt", deep);
    assert_int_equal(mb_write_file_atomic(file, "hello", 5, 0640, NULL), 0);
    char *link = mb_asprintf("%s/a/out", tmpl);
    assert_int_equal(symlink("/etc", link), 0);

    char *copy = mb_asprintf("%s-copy", tmpl);
    assert_int_equal(mb_copy_tree(tmpl, copy, (uid_t)-1, (gid_t)-1, NULL), 0);
    char *cfile = mb_asprintf("%s/a/b/c/f.txt", copy);
    char *data; size_t len;
    assert_int_equal(mb_read_file(cfile, 100, &data, &len, NULL), 0);
    assert_int_equal(len, 5);
    assert_string_equal(data, "hello");
    free(data);
    struct stat st;
    assert_int_equal(stat(cfile, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);

    mb_err err;
    assert_int_equal(mb_read_file(cfile, 2, &data, &len, &err), MB_ETOOBIG);

    /* rm -rf must not follow the symlink to /etc */
    assert_int_equal(mb_rm_rf(tmpl, NULL), 0);
    assert_int_equal(mb_rm_rf(copy, NULL), 0);
    assert_int_equal(access("/etc/passwd", F_OK), 0);
    assert_int_not_equal(access(tmpl, F_OK), 0);
    free(deep); free(file); free(link); free(copy); free(cfile);
}

/* The one string hash is FNV-1a 64 (names on disk depend on it). */
static void test_hash_is_fnv1a64(void **state)
{
    assert_true(mb_hash_str("") == 0xcbf29ce484222325ULL);
    assert_true(mb_hash_str("a") == 0xaf63dc4c8601ec8cULL);
    assert_true(mb_hash_str("foobar") == 0x85944171f73967e8ULL);
    assert_true(mb_hash_bytes("foobar!", 6) == mb_hash_str("foobar"));
}

static void test_strv(void **state)
{
    assert_int_equal(mb_strv_len(NULL), 0);
    assert_null(mb_strv_dup(NULL));
    mb_strv_free(NULL);
    const char **v = NULL;
    size_t n = 0;
    mb_strv_push(&v, &n, "a");
    mb_strv_push(&v, &n, "bc");
    assert_int_equal(n, 2);
    assert_null(v[2]);
    char **d = mb_strv_dup(v);
    assert_int_equal(mb_strv_len((const char *const *)d), 2);
    assert_string_equal(d[1], "bc");
    assert_ptr_not_equal(d[0], v[0]);
    mb_strv_free(d);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_err_set_returns_code),
        cmocka_unit_test(test_buf_grows_and_consumes),
        cmocka_unit_test(test_uuid4_shape),
        cmocka_unit_test(test_uuid7_shape_and_order),
        cmocka_unit_test(test_iso8601_shape),
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_fs_tree_ops),
        cmocka_unit_test(test_hash_is_fnv1a64),
        cmocka_unit_test(test_strv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
