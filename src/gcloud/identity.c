/*
 * identity.c - what Google's credential code and project lookups call,
 * served by the REST facade for the sandbox a token names:
 *   POST token                         OAuth 2.0 token endpoint (oauth2.googleapis.com/token):
 *                                      the JWT-bearer grant google-auth's service_account
 *                                      Credentials send, the refresh_token grant of
 *                                      google.oauth2.credentials.Credentials;
 *   GET|POST tokeninfo, oauth2/v1|v3/tokeninfo
 *                                      token introspection (oauth2.googleapis.com/tokeninfo,
 *                                      www.googleapis.com/oauth2/v1|v3/tokeninfo);
 *   GET oauth2/v1|v2|v3/userinfo, v1/userinfo
 *                                      the account behind a token (googleapiclient's
 *                                      build('oauth2', 'v2').userinfo().get(), OpenID's userinfo);
 *   GET v1/projects[/{id}], v3/projects[/{id}], v3/projects:search
 *                                      Cloud Resource Manager v1 / v3 (build('cloudresourcemanager',
 *                                      'v3').projects().search(), google-cloud-resource-manager);
 *   GET|PUT|POST mcpbox/v1/projects/{id}/clock
 *                                      mcpbox's own: the project's clock (clock.c).
 *
 * Shapes follow Google's reference pages (developers.google.com/identity/protocols/oauth2
 * for the token endpoint and its errors; the discovery documents of oauth2 v2 (Userinfo,
 * Tokeninfo) and cloudresourcemanager v1 (Project) / v3 (Project, SearchProjectsResponse)).
 *
 * Access tokens are the project id (auth_data's access_token); a token
 * names a project only while that project's sandbox lives. A project other
 * than the token's is answered as Google answers a project the caller may
 * not see (403 PERMISSION_DENIED), never with its data. A JWT grant is
 * checked as Google checks it: form, RS256, the issuer (the project's
 * service account), its lifetime, and its signature against the public key
 * of the key file auth_data handed out (written to the sandbox's state
 * directory then, MB_GCLOUD_PUB).
 */
#define _GNU_SOURCE
#include "gcloud/rest_int.h"
#include "http/http.h"

#include <ctype.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCOPE_ALL "https://www.googleapis.com/auth/cloud-platform"

unsigned long long mb_gc__project_number(const char *project)
{
    /* the 48 bits of the id's 12 hex digits, so that the number maps back */
    const char *h = strncmp(project, "mcpbox-", 7) ? project : project + 7;
    unsigned long long v = 0;
    for (int i = 0; h[i] && i < 12; i++)
        v = v * 16 + (unsigned long long)(isdigit((unsigned char)h[i]) ? h[i] - '0' : (tolower((unsigned char)h[i]) - 'a' + 10) & 15);
    return v;
}

char *mb_gc__project_of_number(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (!n || n > 15 || s[0] == '0') return NULL;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return NULL;
    unsigned long long v = strtoull(s, NULL, 10);
    if (v >> 48) return NULL;
    return mb_asprintf("mcpbox-%012llx", v);
}

void mb_gc__sa_unique_id(const char *project, char out[24])
{
    snprintf(out, 24, "1%020llu", mb_gc__project_number(project) * 7919ULL);
}

static int live(mb_gcloud_resolve_fn resolve, void *ctx, const char *project)
{
    char *db = project ? resolve(ctx, project) : NULL;
    free(db);
    return db != NULL;
}

static void reply_oauth_error(mb_gc__reply *r, int status, const char *error, const char *desc)
{
    mb_gc__reply_json(r, status, json_pack("{s:s,s:s}", "error", error, "error_description", desc));
}

/* Google's API error for a caller without (valid) credentials. */
static void reply_unauthenticated(mb_gc__reply *r)
{
    mb_gc__reply_json(r, 401, json_pack("{s:{s:i,s:s,s:[{s:s,s:s,s:s,s:s,s:s}],s:s}}", "error", "code", 401,
                                        "message", "Request is missing required authentication credential. "
                                                   "Expected OAuth 2 access token, login cookie or other valid "
                                                   "authentication credential.",
                                        "errors", "message", "Login Required.", "domain", "global", "reason",
                                        "required", "location", "Authorization", "locationType", "header",
                                        "status", "UNAUTHENTICATED"));
}

static void reply_denied(mb_gc__reply *r)
{
    mb_gc__reply_json(r, 403, json_pack("{s:{s:i,s:s,s:s}}", "error", "code", 403, "message",
                                        "The caller does not have permission", "status", "PERMISSION_DENIED"));
}

/* ------------------------------------------------------------ helpers */

/* application/x-www-form-urlencoded -> object (the last of a repeated key). */
static json_t *form(const mb_buf *raw)
{
    json_t *o = json_object();
    char *s = mb_strndup(raw->data ? raw->data : "", raw->len);
    char *save = NULL;
    for (char *kv = strtok_r(s, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        if (eq) *eq = '\0';
        for (char *p = kv; *p; p++)
            if (*p == '+') *p = ' ';
        mb_http_unescape(NULL, NULL, kv); /* %00 as 0xFF: never cut short */
        char *v = eq ? eq + 1 : (char *)"";
        for (char *p = v; *p; p++)
            if (*p == '+') *p = ' ';
        if (eq) mb_http_unescape(NULL, NULL, v);
        size_t n;
        char *k = mb_utf8_repair(kv, strlen(kv), &n), *val = mb_utf8_repair(v, strlen(v), &n);
        json_object_set_new(o, k, json_string(val));
        free(k);
        free(val);
    }
    free(s);
    return o;
}

/* The bytes of a base64url text (malloc'ed), NULL when it is not one. */
static unsigned char *b64url(const char *p, size_t n, size_t *len)
{
    if (n > 16384) return NULL;
    char *b = mb_strndup(p, n);
    for (char *q = b; *q; q++) {
        if (*q == '-') *q = '+';
        else if (*q == '_') *q = '/';
        else if (*q == '+' || *q == '/' || (*q == '=' && q[1] && q[1] != '=')) {
            /* '=' padding only at the end (google-auth 1.x pads its JWT parts) */
            free(b);
            return NULL;
        }
    }
    unsigned char *out = NULL;
    if (mb_base64_decode(b, n, &out, len)) out = NULL;
    free(b);
    return out;
}

/* The JSON of a base64url JWT part, NULL when it is not one. */
static json_t *jwt_part(const char *p, size_t n)
{
    size_t len = 0;
    unsigned char *out = b64url(p, n, &len);
    json_t *j = out ? json_loadb((const char *)out, len, 0, NULL) : NULL;
    free(out);
    if (j && !json_is_object(j)) {
        json_decref(j);
        j = NULL;
    }
    return j;
}

char *mb_gc__bearer_project(struct MHD_Connection *c)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!auth || strncasecmp(auth, "Bearer ", 7)) return NULL;
    const char *t = auth + 7;
    while (*t == ' ') t++;
    size_t n = strlen(t);
    if (n < 8 || n > 40 || strncmp(t, "mcpbox-", 7)) return NULL;
    for (size_t i = 7; i < n; i++)
        if (!isxdigit((unsigned char)t[i])) return NULL;
    return mb_strdup(t);
}

/* The project a token text names: "mcpbox-<hex>" only. */
static char *token_project(const char *t)
{
    if (!t) return NULL;
    size_t n = strlen(t);
    if (n < 8 || n > 40 || strncmp(t, "mcpbox-", 7)) return NULL;
    for (size_t i = 7; i < n; i++)
        if (!isxdigit((unsigned char)t[i])) return NULL;
    return mb_strdup(t);
}

/* The project's service-account public key (PEM in its state directory,
 * next to the database; the sandbox can write there, so: no links, a
 * regular file, bounded), NULL when there is none. */
static EVP_PKEY *sa_public_key(mb_gcloud_resolve_fn resolve, void *ctx, const char *project)
{
    char *db = resolve(ctx, project);
    char *slash = db ? strrchr(db, '/') : NULL;
    EVP_PKEY *key = NULL;
    if (slash) {
        *slash = '\0';
        char *path = mb_asprintf("%s/%s", db, MB_GCLOUD_PUB);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < 16384) {
            char buf[16384];
            ssize_t n = read(fd, buf, (size_t)st.st_size);
            BIO *in = n > 0 ? BIO_new_mem_buf(buf, (int)n) : NULL;
            key = in ? PEM_read_bio_PUBKEY(in, NULL, NULL, NULL) : NULL;
            BIO_free(in);
        }
        if (fd >= 0) close(fd);
        free(path);
    }
    free(db);
    return key;
}

/* RS256 over "header.payload" with the base64url signature sig. */
static int rs256_ok(EVP_PKEY *key, const char *signed_part, size_t n, const char *sig)
{
    size_t sl = 0;
    unsigned char *s = b64url(sig, strlen(sig), &sl);
    EVP_MD_CTX *md = s ? EVP_MD_CTX_new() : NULL;
    int ok = md && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
             EVP_DigestVerify(md, s, sl, (const unsigned char *)signed_part, n) == 1;
    EVP_MD_CTX_free(md);
    free(s);
    return ok;
}

static char *sa_email(const char *project) { return mb_asprintf("mcpbox@%s.iam.gserviceaccount.com", project); }

/* ------------------------------------------------------------- token */

static void token(const char *prefix, const mb_buf *raw, mb_gcloud_resolve_fn resolve, void *ctx, mb_gc__reply *r)
{
    json_t *f = form(raw);
    const char *grant = json_string_value(json_object_get(f, "grant_type"));
    char *project = prefix ? mb_strdup(prefix) : NULL;
    if (!grant) {
        reply_oauth_error(r, 400, "unsupported_grant_type", "Invalid grant_type: ");
    } else if (!strcmp(grant, "urn:ietf:params:oauth:grant-type:jwt-bearer")) {
        const char *a = json_string_value(json_object_get(f, "assertion"));
        const char *d1 = a ? strchr(a, '.') : NULL, *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        json_t *h = d1 ? jwt_part(a, (size_t)(d1 - a)) : NULL;
        json_t *p = d2 ? jwt_part(d1 + 1, (size_t)(d2 - d1 - 1)) : NULL;
        const char *iss = json_string_value(json_object_get(p, "iss"));
        const char *at = iss ? strchr(iss, '@') : NULL;
        json_int_t iat = json_integer_value(json_object_get(p, "iat")), exp = json_integer_value(json_object_get(p, "exp"));
        long long now = (long long)(mb_gc_now_ms() / 1000); /* the client signs on the host's clock */
        if (!a) {
            reply_oauth_error(r, 400, "invalid_request", "Missing required parameter: assertion");
        } else if (!h || !p || !d2[1] || strchr(d2 + 1, '.')) {
            reply_oauth_error(r, 400, "invalid_grant", "Invalid JWT: invalid format");
        } else if (!json_string_value(json_object_get(h, "alg")) || strcmp(json_string_value(json_object_get(h, "alg")), "RS256")) {
            reply_oauth_error(r, 400, "invalid_grant", "Invalid JWT: only RS256 is accepted");
        } else if (!iss || !at || !json_object_get(p, "aud")) {
            reply_oauth_error(r, 400, "invalid_grant", "Invalid JWT: missing iss or aud");
        } else if (!json_is_integer(json_object_get(p, "iat")) || !json_is_integer(json_object_get(p, "exp")) ||
                   exp <= iat || exp - iat > 3600 || exp < now || iat > now + 300) {
            reply_oauth_error(r, 400, "invalid_grant",
                              "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable "
                              "timeframe. Check your iat and exp values in the JWT claim.");
        } else {
            /* iss: mcpbox@PROJECT.iam.gserviceaccount.com */
            const char *dot = strchr(at + 1, '.');
            char *from_iss = dot && !strcmp(dot, ".iam.gserviceaccount.com") ? mb_strndup(at + 1, (size_t)(dot - at - 1)) : NULL;
            if (!project) project = token_project(from_iss);
            char *email = project ? sa_email(project) : NULL;
            EVP_PKEY *pub = project && !strcmp(email, iss) ? sa_public_key(resolve, ctx, project) : NULL;
            if (!project || !live(resolve, ctx, project) || strcmp(email, iss) || !pub)
                reply_oauth_error(r, 400, "invalid_grant", "Invalid grant: account not found");
            else if (!rs256_ok(pub, a, (size_t)(d2 - a), d2 + 1))
                reply_oauth_error(r, 400, "invalid_grant", "Invalid JWT Signature.");
            else if (json_object_get(p, "target_audience"))
                reply_oauth_error(r, 400, "invalid_request", "Unsupported: ID tokens are not issued by this emulator");
            else
                mb_gc__reply_json(r, 200, json_pack("{s:s,s:i,s:s}", "access_token", project, "expires_in", 3599,
                                                    "token_type", "Bearer"));
            EVP_PKEY_free(pub);
            free(email);
            free(from_iss);
        }
        json_decref(h);
        json_decref(p);
    } else if (!strcmp(grant, "refresh_token")) {
        const char *rt = json_string_value(json_object_get(f, "refresh_token"));
        const char *scope = json_string_value(json_object_get(f, "scope"));
        if (!rt) {
            reply_oauth_error(r, 400, "invalid_request", "Missing required parameter: refresh_token");
        } else {
            /* the refresh token is the project id (auth_data); with /p/P it must name P */
            char *named = token_project(rt);
            if (!named || (project && strcmp(project, named))) {
                free(named);
                named = NULL;
            }
            free(project);
            project = named;
            if (!project || !live(resolve, ctx, project))
                reply_oauth_error(r, 400, "invalid_grant", "Token has been expired or revoked.");
            else
                mb_gc__reply_json(r, 200, json_pack("{s:s,s:i,s:s,s:s}", "access_token", project, "expires_in", 3599,
                                                    "scope", scope && *scope ? scope : SCOPE_ALL, "token_type",
                                                    "Bearer"));
        }
    } else {
        size_t n;
        char *g = mb_utf8_repair(grant, strnlen(grant, 200), &n);
        char *m = mb_asprintf("Invalid grant_type: %s", g);
        reply_oauth_error(r, 400, "unsupported_grant_type", m);
        free(m);
        free(g);
    }
    free(project);
    json_decref(f);
}

/* ------------------------------------------------ tokeninfo, userinfo */

/* The live project a request's token names: ?access_token= (tokeninfo),
 * the bearer header, or the /p/PROJECT prefix. */
static char *caller(struct MHD_Connection *c, const char *prefix, const mb_buf *raw, int query_token,
                    mb_gcloud_resolve_fn resolve, void *ctx)
{
    char *p = NULL;
    const char *q = query_token ? mb_gc__qarg(c, "access_token") : NULL;
    json_t *f = NULL;
    if (query_token && !q && raw->len) {
        f = form(raw);
        q = json_string_value(json_object_get(f, "access_token"));
    }
    if (q) p = token_project(q); /* an explicit token is the only one looked at */
    else {
        p = mb_gc__bearer_project(c);
        if (!p && prefix) p = mb_strdup(prefix);
    }
    json_decref(f);
    if (p && !live(resolve, ctx, p)) {
        free(p);
        p = NULL;
    }
    return p;
}

static void tokeninfo(int v1, const char *project, mb_gc__reply *r)
{
    if (!project) {
        reply_oauth_error(r, 400, "invalid_token", "Invalid Value");
        return;
    }
    char uid[24];
    mb_gc__sa_unique_id(project, uid);
    char *email = sa_email(project);
    if (v1)
        mb_gc__reply_json(r, 200, json_pack("{s:s,s:s,s:s,s:s,s:i,s:s,s:b,s:s}", "issued_to", uid, "audience", uid,
                                            "user_id", uid, "scope", SCOPE_ALL, "expires_in", 3599, "email", email,
                                            "verified_email", 1, "access_type", "online"));
    else {
        char exp[24];
        snprintf(exp, sizeof exp, "%lld", (long long)(mb_gc_now_ms() / 1000 + 3599));
        mb_gc__reply_json(r, 200, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "azp", uid, "aud", uid, "sub",
                                            uid, "scope", SCOPE_ALL, "exp", exp, "expires_in", "3599", "email", email,
                                            "email_verified", "true", "access_type", "online"));
    }
    free(email);
}

static void userinfo(int v3, const char *project, mb_gc__reply *r)
{
    if (!project) {
        if (v3) reply_oauth_error(r, 401, "invalid_request", "Invalid Credentials");
        else reply_unauthenticated(r);
        return;
    }
    char uid[24];
    mb_gc__sa_unique_id(project, uid);
    char *email = sa_email(project);
    const char *pic = "https://lh3.googleusercontent.com/a/default-user=s96-c";
    if (v3)
        mb_gc__reply_json(r, 200, json_pack("{s:s,s:s,s:s,s:b}", "sub", uid, "picture", pic, "email", email,
                                            "email_verified", 1));
    else
        mb_gc__reply_json(r, 200, json_pack("{s:s,s:s,s:b,s:s}", "id", uid, "email", email, "verified_email", 1,
                                            "picture", pic));
    free(email);
}

/* ------------------------------------------------- Resource Manager */

static char *created_iso(mb_gcloud_resolve_fn resolve, void *ctx, const char *project)
{
    char *db = resolve(ctx, project);
    mb_gc *gc = NULL;
    int64_t ms = mb_gc_now_ms();
    if (db && !mb_gc_open(db, project, &gc, NULL)) ms = mb_gc__created_ms(gc);
    mb_gc_close(gc);
    free(db);
    char b[40];
    mb_gc__iso_ms(ms, b);
    return mb_strdup(b);
}

static json_t *project_v1(const char *project, const char *created)
{
    char num[24];
    snprintf(num, sizeof num, "%llu", mb_gc__project_number(project));
    return json_pack("{s:s,s:s,s:s,s:s,s:s}", "projectNumber", num, "projectId", project, "lifecycleState", "ACTIVE",
                     "name", project, "createTime", created);
}

static json_t *project_v3(const char *project, const char *created)
{
    char name[40];
    snprintf(name, sizeof name, "projects/%llu", mb_gc__project_number(project));
    char *etag = mb_asprintf("W/\"%016llx\"", mb_gc__project_number(project) * 2654435761ULL);
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "name", name, "projectId", project, "state", "ACTIVE",
                          "displayName", project, "createTime", created, "updateTime", created, "etag", etag);
    free(etag);
    return o;
}

/* Whether a v1 filter / v3 query matches the project: space-separated
 * terms KEY:VALUE or KEY=VALUE over id/projectId, name/displayName,
 * lifecycleState/state (values case-insensitive, a trailing * a prefix).
 * -1 for anything else. */
static int project_matches(const char *q, const char *project)
{
    if (!q || !*q) return 1;
    int all = 1;
    char *s = mb_strndup(q, strnlen(q, 1000));
    char *save = NULL;
    for (char *t = strtok_r(s, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (!strcasecmp(t, "AND")) continue;
        char *op = strpbrk(t, ":=");
        if (!op) {
            all = -1;
            break;
        }
        *op = '\0';
        const char *v = op + 1;
        size_t vn = strlen(v);
        if (vn >= 2 && (v[0] == '"' || v[0] == '\'') && v[vn - 1] == v[0]) {
            v++;
            vn -= 2;
        }
        const char *have;
        if (!strcmp(t, "id") || !strcmp(t, "projectId") || !strcmp(t, "name") || !strcmp(t, "displayName"))
            have = project;
        else if (!strcmp(t, "lifecycleState") || !strcmp(t, "state"))
            have = "ACTIVE";
        else {
            all = -1;
            break;
        }
        int prefix = vn && v[vn - 1] == '*';
        size_t cmp = prefix ? vn - 1 : vn;
        if (strncasecmp(have, v, cmp) || (!prefix && strlen(have) != cmp)) all = 0;
    }
    free(s);
    return all;
}

static void projects(struct MHD_Connection *c, const char *method, json_t *sg, size_t k, const char *who,
                     mb_gcloud_resolve_fn resolve, void *ctx, mb_gc__reply *r)
{
    int v3 = mb_gc__seg_is(sg, k, "v3");
    const char *id = mb_gc__seg(sg, k + 2);
    size_t n = json_array_size(sg) - k;
    if (strcmp(method, "GET")) {
        mb_gc__reply_error(r, 501, "Unsupported: Cloud Resource Manager calls other than get, list and search");
        return;
    }
    if (!who) {
        reply_unauthenticated(r);
        return;
    }
    char *created = created_iso(resolve, ctx, who);
    if (n == 3 && id) {
        /* projects/{projectId} (v1, v3) or projects/{projectNumber} (v3) */
        char num[24];
        snprintf(num, sizeof num, "%llu", mb_gc__project_number(who));
        if (!strcmp(id, who) || (v3 && !strcmp(id, num)))
            mb_gc__reply_json(r, 200, v3 ? project_v3(who, created) : project_v1(who, created));
        else reply_denied(r);
    } else if (n == 2) {
        int search = v3 && !strcmp(mb_gc__seg(sg, k + 1), "projects:search");
        const char *q = v3 ? mb_gc__qarg(c, "query") : mb_gc__qarg(c, "filter");
        const char *parent = mb_gc__qarg(c, "parent");
        int m = v3 && !search ? 0 : project_matches(q, who);
        if (v3 && !search && !parent) {
            mb_gc__reply_error(r, 400, "Request contains an invalid argument.");
        } else if (m < 0) {
            mb_gc__reply_error(r, 400, "Unsupported: this emulator filters projects by id, name and state only");
        } else {
            /* the sandbox's project has no parent: listing a parent's children is empty */
            json_t *o = json_object();
            if (m) json_object_set_new(o, "projects", json_pack("[o]", v3 ? project_v3(who, created) : project_v1(who, created)));
            mb_gc__reply_json(r, 200, o);
        }
    } else {
        mb_gc__reply_error(r, 501, "Unsupported: this Cloud Resource Manager call is not served by this emulator");
    }
    free(created);
}

/* ------------------------------------------------------------- clock */

static void clock_ep(const char *method, const char *project, const mb_buf *raw, mb_gcloud_resolve_fn resolve,
                     void *ctx, mb_gc__reply *r)
{
    char *db = resolve(ctx, project);
    mb_gc *gc = NULL;
    mb_err e = {0};
    if (!db || mb_gc_open(db, project, &gc, &e)) {
        char *m = mb_asprintf("Not found: Project %s", project);
        mb_gc__reply_error(r, 404, m);
        free(m);
        free(db);
        return;
    }
    if (!strcmp(method, "PUT") || !strcmp(method, "POST")) {
        json_error_t je;
        json_t *body = json_loadb(raw->data ? raw->data : "", raw->len, JSON_DECODE_ANY, &je);
        if (!body) mb_gc__reply_error(r, 400, "Invalid JSON body");
        else if (mb_gc_clock_apply(gc, body, &e)) mb_gc__reply_err(r, &e);
        else mb_gc__reply_json(r, 200, mb_gc_clock_get(gc));
        json_decref(body);
    } else if (!strcmp(method, "GET")) {
        mb_gc__reply_json(r, 200, mb_gc_clock_get(gc));
    } else {
        mb_gc__reply_error(r, 405, "Method not allowed");
    }
    mb_gc_close(gc);
    free(db);
}

/* ------------------------------------------------------------- routes */

int mb_gc__rest_identity(struct MHD_Connection *c, const char *method, json_t *sg, size_t k, const char *prefix,
                         const mb_buf *raw, mb_gcloud_resolve_fn resolve, void *ctx, mb_gc__reply *r)
{
    size_t n = json_array_size(sg) - k;
    int get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
    if (n == 1 && mb_gc__seg_is(sg, k, "token")) {
        if (post) token(prefix, raw, resolve, ctx, r);
        else mb_gc__reply_error(r, 405, "Method not allowed");
        return 1;
    }
    int tinfo = (n == 1 && mb_gc__seg_is(sg, k, "tokeninfo")) ||
                (n == 3 && mb_gc__seg_is(sg, k, "oauth2") && mb_gc__seg_is(sg, k + 2, "tokeninfo") &&
                 (mb_gc__seg_is(sg, k + 1, "v1") || mb_gc__seg_is(sg, k + 1, "v2") || mb_gc__seg_is(sg, k + 1, "v3")));
    if (tinfo && (get || post)) {
        char *p = caller(c, NULL, raw, 1, resolve, ctx);
        tokeninfo(n == 3 && !mb_gc__seg_is(sg, k + 1, "v3"), p, r);
        free(p);
        return 1;
    }
    int uinfo = (n == 3 && mb_gc__seg_is(sg, k, "oauth2") && mb_gc__seg_is(sg, k + 2, "userinfo") &&
                 (mb_gc__seg_is(sg, k + 1, "v1") || mb_gc__seg_is(sg, k + 1, "v2") || mb_gc__seg_is(sg, k + 1, "v3"))) ||
                (n == 2 && mb_gc__seg_is(sg, k, "v1") && mb_gc__seg_is(sg, k + 1, "userinfo"));
    if (uinfo && (get || post)) {
        char *p = caller(c, prefix, raw, 0, resolve, ctx);
        userinfo(n == 2 || mb_gc__seg_is(sg, k + 1, "v3"), p, r);
        free(p);
        return 1;
    }
    if ((mb_gc__seg_is(sg, k, "v1") || mb_gc__seg_is(sg, k, "v3")) && n >= 2 &&
        (mb_gc__seg_is(sg, k + 1, "projects") || (mb_gc__seg_is(sg, k, "v3") && mb_gc__seg_is(sg, k + 1, "projects:search")))) {
        char *p = caller(c, prefix, raw, 0, resolve, ctx);
        projects(c, method, sg, k, p, resolve, ctx, r);
        free(p);
        return 1;
    }
    if (n == 5 && mb_gc__seg_is(sg, k, "mcpbox") && mb_gc__seg_is(sg, k + 1, "v1") &&
        mb_gc__seg_is(sg, k + 2, "projects") && mb_gc__seg_is(sg, k + 4, "clock")) {
        clock_ep(method, mb_gc__seg(sg, k + 3), raw, resolve, ctx, r);
        return 1;
    }
    return 0;
}
