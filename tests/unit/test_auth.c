/*
 * test_auth.c - unit tests for API keys and signed URLs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "auth/auth.h"

static void test_key_generate_and_hash(void **state)
{
    char a[48], b[48], h1[65], h2[65];
    mb_key_generate(a);
    mb_key_generate(b);
    assert_string_not_equal(a, b);
    assert_true(mb_str_has_prefix(a, "mbx_"));
    assert_int_equal(strlen(a), 44);
    mb_key_hash("abc", h1);
    /* SHA-256("abc") */
    assert_string_equal(h1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    mb_key_hash(a, h2);
    assert_string_not_equal(h1, h2);
}

static void test_sign_and_verify(void **state)
{
    unsigned char secret[MB_SECRET_LEN] = {1, 2, 3};
    char q[200];
    mb_sign(secret, "PUT", "/blobs/x/upload.tar.gz", 1000, q, sizeof q);
    assert_true(mb_str_has_prefix(q, "expires=1000&signature="));
    const char *sig = strstr(q, "signature=") + 10;
    mb_err err;
    assert_int_equal(mb_verify(secret, "PUT", "/blobs/x/upload.tar.gz", "1000", sig, 999, &err), MB_OK);
    assert_int_equal(mb_verify(secret, "PUT", "/blobs/x/upload.tar.gz", "1000", sig, 1000, &err), MB_OK);
    /* expired: still authentic, but late */
    assert_int_equal(mb_verify(secret, "PUT", "/blobs/x/upload.tar.gz", "1000", sig, 1001, &err),
                     MB_EEXPIRED);
    assert_non_null(strstr(err.msg, "expired"));
    /* altered: path, method, expiry, signature, secret */
    assert_int_equal(mb_verify(secret, "PUT", "/blobs/y/upload.tar.gz", "1000", sig, 1, &err), MB_EDENIED);
    assert_non_null(strstr(err.msg, "altered"));
    assert_int_equal(mb_verify(secret, "GET", "/blobs/x/upload.tar.gz", "1000", sig, 1, &err), MB_EDENIED);
    assert_int_equal(mb_verify(secret, "PUT", "/blobs/x/upload.tar.gz", "2000", sig, 1, &err), MB_EDENIED);
    assert_int_equal(mb_verify(secret, "PUT", "/blobs/x/upload.tar.gz", "1000x", sig, 1, &err), MB_EDENIED);
    assert_int_equal(mb_verify(secret, "PUT", "/blobs/x/upload.tar.gz", "1000", "abc", 1, &err), MB_EDENIED);
    assert_int_equal(mb_verify(secret, "PUT", "/blobs/x/upload.tar.gz", NULL, sig, 1, &err), MB_EDENIED);
    assert_non_null(strstr(err.msg, "not signed"));
    unsigned char other[MB_SECRET_LEN] = {9};
    assert_int_equal(mb_verify(other, "PUT", "/blobs/x/upload.tar.gz", "1000", sig, 1, &err), MB_EDENIED);
}

static void test_secret_made_once(void **state)
{
    char dir[] = "/tmp/mbsecretXXXXXX";
    assert_non_null(mkdtemp(dir));
    unsigned char s1[MB_SECRET_LEN], s2[MB_SECRET_LEN];
    assert_int_equal(mb_secret_load(dir, s1, NULL), MB_OK);
    assert_int_equal(mb_secret_load(dir, s2, NULL), MB_OK);
    assert_memory_equal(s1, s2, MB_SECRET_LEN);
    char *path = mb_asprintf("%s/secret", dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    mb_write_file_atomic(path, "short", 5, 0600, NULL);
    mb_err err;
    assert_int_equal(mb_secret_load(dir, s2, &err), MB_EIO);
    assert_non_null(strstr(err.msg, "damaged"));
    free(path);
    mb_rm_rf(dir, NULL);
}

static void test_bearer(void **state)
{
    char dir[] = "/tmp/mbbearerXXXXXX";
    assert_non_null(mkdtemp(dir));
    char *db = mb_asprintf("%s/t.db", dir);
    mb_store *st;
    assert_int_equal(mb_store_open(db, &st, NULL), MB_OK);
    char hash[65];
    mb_key_hash("sekrit", hash);
    mb_key_rec k = {0}, got;
    mb_uuid4(k.id);
    snprintf(k.owner, sizeof k.owner, "o1");
    mb_store_key_add(st, hash, &k, NULL);
    mb_err err;
    assert_int_equal(mb_auth_bearer(st, "Bearer sekrit", &got, &err), MB_OK);
    assert_string_equal(got.owner, "o1");
    assert_int_equal(mb_auth_bearer(st, "bearer   sekrit", &got, &err), MB_OK);
    assert_int_equal(mb_auth_bearer(st, NULL, &got, &err), MB_EUNAUTH);
    assert_int_equal(mb_auth_bearer(st, "Basic sekrit", &got, &err), MB_EUNAUTH);
    assert_int_equal(mb_auth_bearer(st, "Bearer ", &got, &err), MB_EUNAUTH);
    assert_int_equal(mb_auth_bearer(st, "Bearer other", &got, &err), MB_EDENIED);
    mb_store_close(st);
    free(db);
    mb_rm_rf(dir, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_generate_and_hash),
        cmocka_unit_test(test_sign_and_verify),
        cmocka_unit_test(test_secret_made_once),
        cmocka_unit_test(test_bearer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
