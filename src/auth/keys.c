/*
 * keys.c - API keys: generation, hashing and the Bearer check.
 */
#include "auth/auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void mb_key_generate(char out[48])
{
    unsigned char raw[20];
    if (mb_random_bytes(raw, sizeof raw, NULL) != MB_OK) abort();
    char hex[41];
    mb_hex(raw, sizeof raw, hex);
    snprintf(out, 48, MB_KEY_PREFIX "%s", hex);
}

void mb_key_hash(const char *key, char out[65])
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)key, strlen(key), digest);
    mb_hex(digest, sizeof digest, out);
}

int mb_auth_bearer(mb_store *st, const char *header, mb_key_rec *out, mb_err *err)
{
    if (!header || !*header)
        return mb_err_set(err, MB_EUNAUTH, "Not authenticated: send 'Authorization: Bearer <API key>'");
    if (strncasecmp(header, "Bearer ", 7) != 0)
        return mb_err_set(err, MB_EUNAUTH,
                          "Not authenticated: the Authorization header must be 'Bearer <API key>'");
    const char *key = header + 7;
    while (*key == ' ') key++;
    if (!*key) return mb_err_set(err, MB_EUNAUTH, "Not authenticated: the Bearer token is empty");
    char hash[65];
    mb_key_hash(key, hash);
    int rc = mb_store_key_find(st, hash, out, err);
    if (rc == MB_ENOTFOUND)
        return mb_err_set(err, MB_EDENIED, "Invalid API key: it is not known to this server");
    if (rc == MB_EDENIED) return mb_err_set(err, MB_EDENIED, "Invalid API key: it was revoked");
    return rc;
}
