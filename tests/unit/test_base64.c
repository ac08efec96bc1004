/*
 * test_base64.c - mb_base64_encode / mb_base64_decode (src/util/base64.c),
 * which the servers use instead of libcrypto's: RFC 4648's test vectors,
 * every length round trip, and what the decoder refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static void test_rfc4648_vectors(void **state)
{
    (void)state;
    static const char *const v[][2] = {
        {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},         {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char *e = mb_base64_encode(v[i][0], strlen(v[i][0]));
        assert_string_equal(e, v[i][1]);
        free(e);
        unsigned char *d;
        size_t n;
        assert_int_equal(mb_base64_decode(v[i][1], strlen(v[i][1]), &d, &n), 0);
        assert_int_equal(n, strlen(v[i][0]));
        assert_memory_equal(d, v[i][0], n);
        assert_int_equal(d[n], 0);
        free(d);
    }
}

static void test_round_trip_every_byte_and_length(void **state)
{
    (void)state;
    unsigned char buf[300];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof buf; len++) {
        char *e = mb_base64_encode(buf, len);
        assert_int_equal(strlen(e), 4 * ((len + 2) / 3));
        unsigned char *d;
        size_t n;
        assert_int_equal(mb_base64_decode(e, strlen(e), &d, &n), 0);
        assert_int_equal(n, len);
        if (len) assert_memory_equal(d, buf, len);
        free(d);
        free(e);
    }
    /* the 0xff/0xfe end of the alphabet */
    char *e = mb_base64_encode("\xfb\xff\xbf", 3);
    assert_string_equal(e, "+/+/");
    free(e);
}

static void test_decode_edges(void **state)
{
    (void)state;
    unsigned char *d;
    size_t n;
    /* whitespace around it (a base64 environment variable with a newline) */
    assert_int_equal(mb_base64_decode("  Zm9v\n", 7, &d, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(d, "foo", 3);
    free(d);
    /* padding may be left out */
    assert_int_equal(mb_base64_decode("Zm8", 3, &d, &n), 0);
    assert_int_equal(n, 2);
    free(d);
    static const char *const bad[] = {"Z", "Zm9v!", "Zm 9v", "Zg=", "Zm9vY===", "=", "Zg==Zg==", "Zm9\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mb_base64_decode(bad[i], strlen(bad[i]), &d, &n), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc4648_vectors),
        cmocka_unit_test(test_round_trip_every_byte_and_length),
        cmocka_unit_test(test_decode_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
