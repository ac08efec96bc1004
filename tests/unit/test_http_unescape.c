/*
 * test_http_unescape.c - mb_http_unescape (src/http/unescape.c), the
 * percent-decoding every libmicrohttpd daemon of mcpbox uses: %00 becomes
 * 0xFF (never valid UTF-8) instead of a NUL that would end the string early,
 * and everything else decodes as MHD_http_unescape does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "http/http.h"

static void check(const char *in, const char *want, size_t want_len)
{
    char *s = mb_strdup(in);
    size_t n = mb_http_unescape(NULL, NULL, s);
    assert_int_equal(n, want_len);
    assert_memory_equal(s, want, want_len);
    assert_int_equal(s[n], '\0');
    assert_int_equal(strlen(s), n); /* no NUL inside */
    free(s);
}

static void test_nul_becomes_ff(void **state)
{
    (void)state;
    check("%00", "\xff", 1);
    check("/local-sandbox/ID%00anything", "/local-sandbox/ID\xff" "anything", 26);
    check("a%00b%00", "a\xff" "b\xff", 4);
    check("%00%00%00", "\xff\xff\xff", 3);
    check("%%00", "%\xff", 2);
    check("%0%00", "%0\xff", 3);
    check("%C0%80", "\xc0\x80", 2); /* an overlong NUL stays two bytes (not UTF-8) */
}

static void test_other_escapes_as_before(void **state)
{
    (void)state;
    check("", "", 0);
    check("plain", "plain", 5);
    check("%2500", "%00", 3);  /* the text "%00" */
    check("%25%30%30", "%00", 3);
    check("%C3%A9", "\xc3\xa9", 2);
    check("%c3%a9", "\xc3\xa9", 2);
    check("%FF", "\xff", 1);
    check("%0", "%0", 2);      /* a bad escape stays text */
    check("%", "%", 1);
    check("%zz%4", "%zz%4", 5);
    check("a+b", "a+b", 3);    /* '+' is the argument parser's business */
    check("%01%1F%7F", "\x01\x1f\x7f", 3);
}

static void test_long_input(void **state)
{
    (void)state;
    size_t reps = 10000;
    char *in = malloc(reps * 3 + 1), *want = malloc(reps);
    for (size_t i = 0; i < reps; i++) {
        memcpy(in + 3 * i, i % 2 ? "%00" : "%41", 3);
        want[i] = i % 2 ? '\xff' : 'A';
    }
    in[reps * 3] = '\0';
    check(in, want, reps);
    free(in);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nul_becomes_ff),
        cmocka_unit_test(test_other_escapes_as_before),
        cmocka_unit_test(test_long_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
