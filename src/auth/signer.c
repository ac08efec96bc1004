/*
 * signer.c - signed URLs: the per-data-dir secret, signing and verification.
 */
#include "auth/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mb_secret_load(const char *data_dir, unsigned char secret[MB_SECRET_LEN], mb_err *err)
{
    char *path = mb_asprintf("%s/secret", data_dir);
    char *data = NULL;
    size_t len = 0;
    int rc = mb_read_file(path, 4096, &data, &len, err);
    if (rc == MB_OK) {
        if (len != MB_SECRET_LEN) {
            rc = mb_err_set(err, MB_EIO, "%s is damaged (%zu bytes, expected %d): remove it to "
                            "make a new one (outstanding signed URLs become invalid)",
                            path, len, MB_SECRET_LEN);
        } else {
            memcpy(secret, data, MB_SECRET_LEN);
        }
        free(data);
    } else if (rc == MB_ENOTFOUND) {
        rc = mb_random_bytes(secret, MB_SECRET_LEN, err);
        if (!rc) rc = mb_write_file_atomic(path, secret, MB_SECRET_LEN, 0600, err);
    }
    free(path);
    return rc;
}

static void signature_hex(const unsigned char secret[MB_SECRET_LEN], const char *method,
                          const char *path, int64_t expires, char out[65])
{
    char *msg = mb_asprintf("%s\n%s\n%lld", method, path, (long long)expires);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    HMAC(EVP_sha256(), secret, MB_SECRET_LEN, (const unsigned char *)msg, strlen(msg), mac,
         &maclen);
    mb_hex(mac, maclen, out);
    free(msg);
}

void mb_sign(const unsigned char secret[MB_SECRET_LEN], const char *method, const char *path,
             int64_t expires, char *out, size_t cap)
{
    char sig[65];
    signature_hex(secret, method, path, expires, sig);
    snprintf(out, cap, "expires=%lld&signature=%s", (long long)expires, sig);
}

int mb_verify(const unsigned char secret[MB_SECRET_LEN], const char *method, const char *path,
              const char *expires, const char *signature, int64_t now, mb_err *err)
{
    if (!expires || !signature || !*expires || !*signature)
        return mb_err_set(err, MB_EDENIED,
                          "This URL is not signed: ask the API for a new upload or download URL");
    char *end;
    errno = 0;
    long long e = strtoll(expires, &end, 10);
    if (errno || *end || e <= 0)
        return mb_err_set(err, MB_EDENIED, "This URL's signature does not match: it was altered");
    char want[65];
    signature_hex(secret, method, path, e, want);
    if (strlen(signature) != 64 || CRYPTO_memcmp(want, signature, 64) != 0)
        return mb_err_set(err, MB_EDENIED, "This URL's signature does not match: it was altered "
                          "or is for another method or sandbox");
    if (now > e)
        return mb_err_set(err, MB_EEXPIRED, "This URL expired %lld seconds ago: ask the API for a "
                          "new one", now - e);
    return MB_OK;
}
