/*
 * signed.c - Cloud Storage V4 signed URLs (GOOG4-RSA-SHA256) for a
 * project's objects: made by storage_generate_signed_url with an RSA key the
 * project keeps (in __meta, made on first use), checked by the REST facade
 * when the URL is used (GET / HEAD read the object, PUT writes it, DELETE
 * removes it). The string signed is GCS's: the algorithm, the request time,
 * the credential scope and the SHA-256 of the canonical request (method,
 * the URL's path, the X-Goog-* query sorted, "host:HOST", "host",
 * UNSIGNED-PAYLOAD). A URL whose signature does not verify, whose method is
 * not the signed one, or whose time (X-Goog-Date + X-Goog-Expires, at most 7
 * days) has passed is refused with GCS's XML error.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_EXPIRES 604800

/* The project's signing key (made and kept on first use). */
static EVP_PKEY *signing_key(mb_gc *gc, mb_err *err)
{
    sqlite3_stmt *st;
    char *pem = NULL;
    if (!mb_gc__prep(gc, "SELECT value FROM __meta WHERE key = 'gcs_signing_key'", &st, NULL)) {
        if (sqlite3_step(st) == SQLITE_ROW) pem = mb_strdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    EVP_PKEY *key = NULL;
    if (pem) {
        BIO *bio = BIO_new_mem_buf(pem, -1);
        key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
        BIO_free(bio);
        free(pem);
        if (!key) mb_err_set(err, MB_EIO, "the project's signing key cannot be read");
        return key;
    }
    key = EVP_RSA_gen(2048);
    BIO *bio = key ? BIO_new(BIO_s_mem()) : NULL;
    if (bio && PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL)) {
        char *p;
        long n = BIO_get_mem_data(bio, &p);
        pem = mb_strndup(p, (size_t)n);
    }
    BIO_free(bio);
    int rc = pem ? mb_gc__prep(gc, "INSERT OR REPLACE INTO __meta VALUES('gcs_signing_key', ?)", &st, err)
                 : mb_err_set(err, MB_EIO, "cannot make a signing key");
    if (!rc) {
        sqlite3_bind_text(st, 1, pem, -1, SQLITE_STATIC);
        rc = mb_gc__step_done(gc, st, err);
    }
    free(pem);
    if (rc) {
        EVP_PKEY_free(key);
        return NULL;
    }
    return key;
}

/* RFC 3986 percent-encoding of s (unreserved characters kept; '/' kept when slash). */
static void pct(mb_buf *b, const char *s, int slash)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (isalnum(*c) || strchr("-._~", *c) || (slash && *c == '/')) mb_buf_putc(b, (char)*c);
        else mb_buf_printf(b, "%%%02X", *c);
    }
}

/* The hex SHA-256 of the canonical request. */
static void canonical_hash(const char *method, const char *path, const char *query, const char *host,
                           char out[65])
{
    mb_buf c = {0};
    mb_buf_printf(&c, "%s\n", method);
    pct(&c, path, 1);
    mb_buf_printf(&c, "\n%s\nhost:%s\n\nhost\nUNSIGNED-PAYLOAD", query, host);
    unsigned char md[32];
    unsigned int n = 0;
    EVP_Digest(c.data, c.len, md, &n, EVP_sha256(), NULL);
    mb_hex(md, sizeof md, out);
    mb_buf_free(&c);
}

/* The canonical query of the X-Goog-* parameters (sorted by name). */
static char *canonical_query(const char *cred, const char *date, const char *expires)
{
    mb_buf q = {0};
    mb_buf_puts(&q, "X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=");
    pct(&q, cred, 0);
    mb_buf_puts(&q, "&X-Goog-Date=");
    pct(&q, date, 0);
    mb_buf_puts(&q, "&X-Goog-Expires=");
    pct(&q, expires, 0);
    mb_buf_puts(&q, "&X-Goog-SignedHeaders=host");
    return mb_buf_steal(&q);
}

static char *string_to_sign(const char *date, const char *cred, const char *hash)
{
    const char *scope = strchr(cred, '/'); /* after the client e-mail */
    return mb_asprintf("GOOG4-RSA-SHA256\n%s\n%s\n%s", date, scope ? scope + 1 : "", hash);
}

int mb_gc_gcs_sign_url(mb_gc *gc, const char *base, const char *method, const char *bucket, const char *object,
                       long long expires_s, char **out, mb_err *err)
{
    *out = NULL;
    if (expires_s <= 0 || expires_s > MAX_EXPIRES)
        return mb_err_set(err, MB_EINVAL, "Max allowed expiration interval is seven days %d", MAX_EXPIRES);
    if (strcmp(method, "GET") && strcmp(method, "PUT") && strcmp(method, "DELETE") && strcmp(method, "HEAD"))
        return mb_err_set(err, MB_EINVAL, "Invalid method: %.16s", method);
    if (!*bucket || !*object) return mb_err_set(err, MB_EINVAL, "A bucket and an object name are required");
    const char *hs = strstr(base, "://");
    if (!hs) return mb_err_set(err, MB_EINVAL, "The endpoint %s is not a URL", base);
    hs += 3;
    const char *ps = strchr(hs, '/');
    char *host = ps ? mb_strndup(hs, (size_t)(ps - hs)) : mb_strdup(hs);
    char *prefix = mb_strdup(ps ? ps : "");
    size_t pl = strlen(prefix);
    while (pl && prefix[pl - 1] == '/') prefix[--pl] = '\0';
    char *path = mb_asprintf("%s/%s/%s", prefix, bucket, object);
    EVP_PKEY *key = signing_key(gc, err); /* first: making one takes a while */
    time_t now = (time_t)(mb_gc_clock_ms(gc) / 1000);
    struct tm tm;
    gmtime_r(&now, &tm);
    char date[20], day[9], exp[24];
    strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);
    strftime(day, sizeof day, "%Y%m%d", &tm);
    snprintf(exp, sizeof exp, "%lld", expires_s);
    char *cred = mb_asprintf("mcpbox@%s.iam.gserviceaccount.com/%s/auto/storage/goog4_request", gc->project, day);
    char *query = canonical_query(cred, date, exp);
    char hash[65];
    canonical_hash(method, path, query, host, hash);
    char *sts = string_to_sign(date, cred, hash);
    int rc = MB_OK;
    unsigned char sig[512];
    size_t sl = sizeof sig;
    EVP_MD_CTX *md = key ? EVP_MD_CTX_new() : NULL;
    if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
        EVP_DigestSign(md, sig, &sl, (const unsigned char *)sts, strlen(sts)) != 1)
        rc = key ? mb_err_set(err, MB_EIO, "cannot sign the URL") : err->code;
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    if (!rc) {
        char *hex = mb_malloc(sl * 2 + 1);
        mb_hex(sig, sl, hex);
        mb_buf u = {0};
        mb_buf_printf(&u, "%.*s", (int)(hs - base), base);
        mb_buf_puts(&u, host);
        pct(&u, path, 1);
        mb_buf_printf(&u, "?%s&X-Goog-Signature=%s", query, hex);
        *out = mb_buf_steal(&u);
        free(hex);
    }
    free(sts);
    free(query);
    free(cred);
    free(path);
    free(prefix);
    free(host);
    return rc;
}

static int xml_error(int status, const char *code, const char *msg, char **xml)
{
    *xml = mb_asprintf("<?xml version='1.0' encoding='UTF-8'?><Error><Code>%s</Code><Message>%s</Message></Error>",
                       code, msg);
    return status;
}

/* "YYYYMMDDTHHMMSSZ" -> epoch seconds; -1 when malformed. */
static long long goog_date(const char *s)
{
    if (!s || strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z') return -1;
    for (int i = 0; i < 15; i++)
        if (i != 8 && !isdigit((unsigned char)s[i])) return -1;
    int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int mo = (s[4] - '0') * 10 + (s[5] - '0'), d = (s[6] - '0') * 10 + (s[7] - '0');
    int h = (s[9] - '0') * 10 + (s[10] - '0'), mi = (s[11] - '0') * 10 + (s[12] - '0');
    int se = (s[13] - '0') * 10 + (s[14] - '0');
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return -1;
    return (long long)mb_gc__days(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
}

int mb_gc_gcs_check_signed(mb_gc *gc, const char *method, const char *host, const char *path,
                           const mb_gc_sigq *q, char **xml)
{
    *xml = NULL;
    if (!q->alg || strcmp(q->alg, "GOOG4-RSA-SHA256"))
        return xml_error(400, "InvalidArgument", "Only GOOG4-RSA-SHA256 signed URLs are served.", xml);
    if (!q->cred || !q->date || !q->expires || !q->sig || !q->headers || strcmp(q->headers, "host"))
        return xml_error(400, "InvalidArgument", "Missing or invalid X-Goog-* query parameters.", xml);
    long long t0 = goog_date(q->date);
    char *end;
    long long ex = strtoll(q->expires, &end, 10);
    if (t0 < 0 || *end || ex <= 0 || ex > MAX_EXPIRES)
        return xml_error(400, "InvalidArgument", "Invalid X-Goog-Date or X-Goog-Expires.", xml);
    char want_cred[160];
    snprintf(want_cred, sizeof want_cred, "mcpbox@%s.iam.gserviceaccount.com/%.8s/auto/storage/goog4_request",
             gc->project, q->date);
    if (strcmp(q->cred, want_cred))
        return xml_error(403, "SignatureDoesNotMatch", "The credential is not this project's.", xml);
    size_t sl = strlen(q->sig);
    unsigned char sig[512];
    if (sl % 2 || sl / 2 > sizeof sig)
        return xml_error(403, "SignatureDoesNotMatch", "The request signature is malformed.", xml);
    for (size_t i = 0; i < sl / 2; i++) {
        unsigned v;
        if (!isxdigit((unsigned char)q->sig[2 * i]) || !isxdigit((unsigned char)q->sig[2 * i + 1]) ||
            sscanf(q->sig + 2 * i, "%2x", &v) != 1)
            return xml_error(403, "SignatureDoesNotMatch", "The request signature is malformed.", xml);
        sig[i] = (unsigned char)v;
    }
    /* HEAD is allowed on a URL signed for GET */
    const char *m = !strcmp(method, "HEAD") ? "GET" : method;
    char *query = canonical_query(q->cred, q->date, q->expires);
    char hash[65];
    canonical_hash(m, path, query, host ? host : "", hash);
    char *sts = string_to_sign(q->date, q->cred, hash);
    mb_err e = {0};
    EVP_PKEY *key = signing_key(gc, &e);
    EVP_MD_CTX *md = key ? EVP_MD_CTX_new() : NULL;
    int ok = md && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
             EVP_DigestVerify(md, sig, sl / 2, (const unsigned char *)sts, strlen(sts)) == 1;
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    free(sts);
    free(query);
    if (!ok)
        return xml_error(403, "SignatureDoesNotMatch",
                         "The request signature we calculated does not match the signature you provided. "
                         "Check your Google secret key and signing method.", xml);
    if (mb_gc_clock_ms(gc) / 1000 > t0 + ex) return xml_error(400, "ExpiredToken", "The provided token has expired.", xml);
    return 0;
}
