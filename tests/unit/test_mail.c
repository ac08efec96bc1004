/*
 * test_mail.c - unit tests for the mail layer's pure parts: address and
 * domain rules, the users file, the passwd-file, and the message parser
 * (headers, RFC 2047, multipart bodies and attachments).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mail/mail_int.h"

static void test_addr_split(void **state)
{
    (void)state;
    char l[65], d[MB_MAIL_DOMAIN_MAX + 1];
    const char *a = "Ada.Moss+x@MCP7.com";
    assert_int_equal(mb_mail__addr_split(a, strlen(a), l, sizeof l, d, sizeof d), 0);
    assert_string_equal(l, "ada.moss+x");
    assert_string_equal(d, "mcp7.com");
    static const char *const bad[] = {"nodomain", "@mcp7.com", "a@", "a@com", "a@.com",
                                      "a@mcp..com", "a b@mcp7.com", "a@mcp7.com.", "a@m/c.com",
                                      "a*master@mcp7.com", "a@mcp7.com\n", "%@x.com"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int r = mb_mail__addr_split(bad[i], strlen(bad[i]), l, sizeof l, d, sizeof d);
        if (r != MB_EINVAL) fail_msg("accepted: %s", bad[i]);
    }
    /* an embedded NUL never passes as a shorter address */
    assert_int_equal(mb_mail__addr_split("a@x.com\0b", 9, l, sizeof l, d, sizeof d), MB_EINVAL);
}

static mb_mail *with_users(const char *json, int *rc, mb_err *err)
{
    char path[] = "/tmp/mb_mail_usersXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    mb_mail *m = mb_calloc(1, sizeof *m);
    *rc = mb_mail__users_load(m, path, err);
    unlink(path);
    return m;
}

static void free_mail(mb_mail *m)
{
    mb_mail__users_free(m);
    free(m);
}

static void test_users_file(void **state)
{
    (void)state;
    int rc;
    mb_err err = {0};
    mb_mail *m = with_users("{\"domain\":\"mcp.com\",\"users\":[{\"email\":\"Ada@mcp.com\","
                            "\"password\":\"p%1$s@#\",\"full_name\":\"Ada\"},{\"email\":"
                            "\"ben@mcp.com\",\"password\":\"x\"}]}", &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(m->n_users, 2);
    assert_true(mb_mail__user_known(m, "ADA"));
    assert_false(mb_mail__user_known(m, "cleo"));
    mb_buf b = {0};
    mb_mail__passwd_render(m, "mcp9.com", &b);
    mb_buf_putc(&b, 0);
    assert_string_equal(b.data, "ada@mcp9.com:{PLAIN}p%1$s@#::::::\nben@mcp9.com:{PLAIN}x::::::\n");
    mb_buf_free(&b);
    free_mail(m);

    static const char *const bad[] = {
        "[]", "{\"users\":{}}", "{\"users\":[{\"email\":\"x\",\"password\":\"p\"}]}",
        "{\"users\":[{\"email\":\"a@b.com\",\"password\":\"p:q\"}]}",
        "{\"users\":[{\"email\":\"a@b.com\",\"password\":\"\"}]}",
        "{\"users\":[{\"email\":\"a@b.com\",\"password\":\"p\"},{\"email\":\"A@c.com\","
        "\"password\":\"q\"}]}",
        "{\"users\":[{\"email\":\"a@b.com\",\"password\":\"p\\nq\"}]}", "{"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        m = with_users(bad[i], &rc, &err);
        assert_int_equal(rc, MB_EINVAL);
        assert_true(strstr(err.msg, "--mail-users") != NULL);
        free_mail(m);
    }
}

static void test_decode_header(void **state)
{
    (void)state;
    char *s = mb_mail_decode_header("=?utf-8?b?Q2Fmw6k=?= =?utf-8?q?_au_lait?= ok ");
    assert_string_equal(s, "Caf\xc3\xa9 au lait ok");
    free(s);
    s = mb_mail_decode_header("Hello =?ISO-8859-1?Q?W=F6rld?=");
    assert_string_equal(s, "Hello W\xc3\xb6rld");
    free(s);
    s = mb_mail_decode_header("  plain  ");
    assert_string_equal(s, "plain");
    free(s);
    s = mb_mail_decode_header("=?bogus-charset?q?x=FF?=");
    assert_non_null(s); /* repaired, valid UTF-8 */
    assert_true(mb_utf8_valid(s, strlen(s)));
    free(s);
}

static void test_parse_multipart(void **state)
{
    (void)state;
    const char *raw =
        "From: Ada <ada@mcp1.com>\r\nTo: ben@mcp1.com, cleo@mcp1.com\r\nCc: d@mcp1.com\r\n"
        "Subject: =?utf-8?q?R=C3=A9sum=C3=A9?=\r\nDate: Mon, 01 Jan 2024 10:00:00 +0000\r\n"
        "Message-ID: <1@x>\r\nContent-Type: multipart/mixed; boundary=\"B1\"\r\n\r\n"
        "preamble\r\n--B1\r\nContent-Type: multipart/alternative; boundary=B2\r\n\r\n"
        "--B2\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Content-Transfer-Encoding: quoted-printable\r\n\r\nh=C3=A9llo=\r\n world\r\n"
        "--B2\r\nContent-Type: text/html\r\n\r\n<p>hi</p>\r\n--B2--\r\n"
        "--B1\r\nContent-Type: application/pdf; name=\"x.pdf\"\r\nContent-Disposition: "
        "attachment; filename*=utf-8''r%C3%A9port.pdf\r\nContent-Transfer-Encoding: base64"
        "\r\n\r\naGVsbG8=\r\n--B1--\r\n";
    mb_mail_msg m;
    mb_mail_msg_parse(raw, strlen(raw), &m);
    assert_string_equal(m.subject, "R\xc3\xa9sum\xc3\xa9");
    assert_string_equal(m.from_addr, "ada@mcp1.com");
    assert_string_equal(m.to_addr, ""); /* two addresses: Python 3.12's parseaddr gives '' */
    assert_string_equal(m.cc_addr, "d@mcp1.com");
    assert_string_equal(m.body_text, "h\xc3\xa9llo world");
    assert_string_equal(m.body_html, "<p>hi</p>");
    assert_int_equal(m.n_atts, 1);
    assert_string_equal(m.atts[0].filename, "r\xc3\xa9port.pdf");
    assert_string_equal(m.atts[0].content_type, "application/pdf");
    assert_int_equal(m.atts[0].size, 5);
    assert_memory_equal(m.atts[0].data, "hello", 5);
    assert_int_equal(m.n_headers, 7);
    mb_mail_msg_free(&m);

    /* hostile input never crashes and leaves valid UTF-8 */
    const char *junk = "Content-Type: multipart/mixed; boundary=\"\"\r\n\r\n--\r\n\xff\xfe";
    mb_mail_msg_parse(junk, strlen(junk), &m);
    assert_true(mb_utf8_valid(m.body_text, strlen(m.body_text)));
    mb_mail_msg_free(&m);
    mb_mail_msg_parse("", 0, &m);
    assert_string_equal(m.subject, "");
    mb_mail_msg_free(&m);
}

static void test_split_addresses(void **state)
{
    (void)state;
    char **v = mb_mail_split_addresses("\"Moss, Ada\" <ada@x.com>, ben@x.com ,, <c@x.com>");
    assert_int_equal(mb_strv_len((const char *const *)v), 3);
    assert_string_equal(v[0], "ada@x.com");
    assert_string_equal(v[1], "ben@x.com");
    assert_string_equal(v[2], "c@x.com");
    mb_strv_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addr_split),
        cmocka_unit_test(test_users_file),
        cmocka_unit_test(test_decode_header),
        cmocka_unit_test(test_parse_multipart),
        cmocka_unit_test(test_split_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
