/*
 * provision.c - a sandbox's project database as files: made empty (or from
 * the baseline of the last initialize) when the sandbox is seeded or reset,
 * and snapshotted after an initialize; and the service-account key file a
 * sandbox's clients are given (token_uri at the REST facade). Each step leaves either the old file
 * or the new one, never a half-written database.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mb_gcloud_project_id(const char *sandbox_id, char out[32])
{
    char hex[13];
    size_t n = 0;
    for (const char *p = sandbox_id; *p && n < 12; p++)
        if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')) hex[n++] = *p;
    hex[n] = '\0';
    snprintf(out, 32, "mcpbox-%s", hex);
}

int mb_gcloud_provision(const char *db_path, const char *baseline, const char *project_id,
                        unsigned uid, mb_err *err)
{
    /* The bytes are made away from the state directory (the sandbox writes
     * there): the baseline, or an empty project serialized from memory;
     * then written by mb_write_file_atomic (O_EXCL|O_NOFOLLOW temp, rename)
     * and owned by the sandbox's root without following a link. */
    char *data = NULL;
    size_t len = 0;
    int rc = MB_OK;
    if (baseline && access(baseline, F_OK) == 0) {
        rc = mb_read_file(baseline, (size_t)1 << 34, &data, &len, err);
    } else {
        mb_gc *gc;
        rc = mb_gc_open(":memory:", project_id, &gc, err);
        /* a new project's clock: MCPBOX_GCLOUD_CLOCK (default: the host's time) */
        if (!rc) {
            rc = mb_gc_clock_env(gc, getenv("MCPBOX_GCLOUD_CLOCK"), err);
            if (!rc) rc = mb_gc__set_created(gc, err);
            if (rc) mb_gc_close(gc);
        }
        if (!rc) {
            sqlite3_int64 n = 0;
            unsigned char *bytes = sqlite3_serialize(gc->db, "main", &n, 0);
            if (!bytes) rc = mb_err_set(err, MB_EIO, "cannot serialize the new project");
            else {
                len = (size_t)n;
                data = mb_malloc(len + 1);
                memcpy(data, bytes, len);
                sqlite3_free(bytes);
            }
            mb_gc_close(gc);
        }
    }
    if (!rc) rc = mb_write_file_atomic(db_path, data, len, 0644, err);
    if (!rc && lchown(db_path, uid, uid) != 0) rc = mb_err_sys(err, errno, "cannot chown %s", db_path);
    if (!rc) {
        char *j = mb_asprintf("%s-journal", db_path);
        unlink(j); /* a journal of the file just replaced must not be replayed into it */
        free(j);
    }
    free(data);
    return rc;
}

int mb_gcloud_snapshot(const char *db_path, const char *baseline, mb_err *err)
{
    mb_gc *gc;
    int rc = mb_gc_open(db_path, NULL, &gc, err);
    if (rc) return rc;
    char *tmp = mb_asprintf("%s.new", baseline);
    unlink(tmp);
    char *dir = mb_strdup(baseline);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        rc = mb_mkdir_p(dir, 0700, err);
    }
    free(dir);
    sqlite3_stmt *st;
    if (!rc) rc = mb_gc__prep(gc, "VACUUM INTO ?", &st, err);
    if (!rc) {
        sqlite3_bind_text(st, 1, tmp, -1, SQLITE_STATIC);
        rc = mb_gc__step_done(gc, st, err);
    }
    mb_gc_close(gc);
    if (!rc && rename(tmp, baseline) != 0) rc = mb_err_sys(err, errno, "cannot replace %s", baseline);
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

char *mb_gcloud_sa_key(const char *project_id, const char *token_uri, mb_err *err)
{
    EVP_PKEY *key = EVP_RSA_gen(2048);
    if (!key) {
        mb_err_set(err, MB_EIO, "cannot generate an RSA key");
        return NULL;
    }
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem = NULL;
    if (bio && PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL)) {
        char *p;
        long n = BIO_get_mem_data(bio, &p);
        pem = mb_strndup(p, (size_t)n);
    }
    BIO_free(bio);
    EVP_PKEY_free(key);
    if (!pem) {
        mb_err_set(err, MB_EIO, "cannot write the RSA key");
        return NULL;
    }
    unsigned char r[20];
    char kid[41];
    mb_random_bytes(r, sizeof r, NULL);
    mb_hex(r, sizeof r, kid);
    char *email = mb_asprintf("mcpbox@%s.iam.gserviceaccount.com", project_id);
    char uid[24];
    mb_gc__sa_unique_id(project_id, uid);
    json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "type", "service_account", "project_id",
                          project_id, "private_key_id", kid, "private_key", pem, "client_email", email, "client_id",
                          uid, "auth_uri", "https://accounts.google.com/o/oauth2/auth",
                          "token_uri", token_uri, "auth_provider_x509_cert_url",
                          "https://www.googleapis.com/oauth2/v1/certs", "client_x509_cert_url", "",
                          "universe_domain", "googleapis.com");
    char *out = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    free(email);
    free(pem);
    return out;
}

int mb_gcloud_sa_pub(const char *key_json, const char *pub_path, mb_err *err)
{
    json_t *k = json_loads(key_json, 0, NULL);
    const char *pem = json_string_value(json_object_get(k, "private_key"));
    BIO *in = pem ? BIO_new_mem_buf(pem, -1) : NULL;
    EVP_PKEY *key = in ? PEM_read_bio_PrivateKey(in, NULL, NULL, NULL) : NULL;
    BIO *out = key ? BIO_new(BIO_s_mem()) : NULL;
    int rc = mb_err_set(err, MB_EINVAL, "the service-account key holds no RSA private key");
    if (out && PEM_write_bio_PUBKEY(out, key)) {
        char *p;
        long n = BIO_get_mem_data(out, &p);
        char *have = NULL;
        size_t hl = 0;
        /* written once; a sandbox that replaces it only breaks its own tokens */
        if (!mb_read_file(pub_path, 1 << 16, &have, &hl, NULL) && hl == (size_t)n && !memcmp(have, p, hl))
            rc = MB_OK;
        else
            rc = mb_write_file_atomic(pub_path, p, (size_t)n, 0644, err);
        free(have);
    }
    BIO_free(out);
    EVP_PKEY_free(key);
    BIO_free(in);
    json_decref(k);
    return rc;
}
