/*
 * auth.h - the face of the authentication layer: API keys (made, hashed,
 * checked) and signed URLs for archive uploads and downloads.
 *
 * Signed URLs carry `expires` (unix seconds) and `signature`, the hex
 * HMAC-SHA256 of "METHOD\nPATH\nEXPIRES" under a 32-byte secret that is made
 * once per data directory and kept in DATA_DIR/secret (mode 0600). Anyone
 * holding the URL may use it until it expires; the path names the sandbox.
 */
#ifndef MB_AUTH_H
#define MB_AUTH_H

#include "store/store.h"
#include "util/util.h"

#include <stdint.h>

#define MB_KEY_PREFIX "mbx_"
#define MB_SECRET_LEN 32

/* A new random API key, "mbx_" + 40 hex characters; out needs 48 bytes. */
void mb_key_generate(char out[48]);
/* SHA-256 hex digest of a key (65 bytes with NUL). */
void mb_key_hash(const char *key, char out[65]);
/* Resolves "Authorization: Bearer KEY" to its record: MB_EUNAUTH when the
 * header is missing or not Bearer, MB_EDENIED for an unknown or revoked key. */
int mb_auth_bearer(mb_store *st, const char *authorization_header, mb_key_rec *out, mb_err *err);

/* Loads DATA_DIR/secret, making it on first use. */
int mb_secret_load(const char *data_dir, unsigned char secret[MB_SECRET_LEN], mb_err *err);

/* Writes "expires=E&signature=S" for METHOD and PATH into out. */
void mb_sign(const unsigned char secret[MB_SECRET_LEN], const char *method, const char *path,
             int64_t expires, char *out, size_t cap);
/* Checks a signature: MB_EDENIED if missing or altered (the message says so),
 * MB_EEXPIRED if it was valid but `now` is past `expires`. */
int mb_verify(const unsigned char secret[MB_SECRET_LEN], const char *method, const char *path,
              const char *expires, const char *signature, int64_t now, mb_err *err);

#endif /* MB_AUTH_H */
