/*
 * port.c - the graders' port: Canvas's REST API over HTTP (default
 * 127.0.0.1:10001). The bearer token selects the user and thereby the
 * sandbox; bodies are JSON, forms (a[b][]=c) or, for the upload step of a
 * file, multipart.
 */
#define _GNU_SOURCE
#include "canvas/svc_int.h"
#include "http/http.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BODY_LIMIT (100u << 20)

static void begin(void *ctx, mb_http_req *req)
{
    (void)ctx;
    req->body_mode = MB_BODY_BUFFER;
    req->body_limit = BODY_LIMIT;
    const char *auth = mb_http_header(req, "Authorization");
    req->authenticated = auth && !strncasecmp(auth, "Bearer ", 7);
}

typedef struct arg_acc {
    mb_canvas_param *v;
    size_t n, cap;
} arg_acc;

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
    (void)kind;
    arg_acc *a = cls;
    if (a->n >= 256 || !key) return MHD_YES;
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 8;
        a->v = mb_realloc(a->v, a->cap * sizeof *a->v);
    }
    size_t kl = strlen(key), vl = value ? strlen(value) : 0;
    a->v[a->n].key = mb_utf8_valid(key, kl) ? mb_strdup(key) : mb_utf8_repair(key, kl, &kl);
    a->v[a->n].val = !value ? mb_strdup("")
                     : mb_utf8_valid(value, vl) ? mb_strdup(value)
                                                : mb_utf8_repair(value, vl, &vl);
    a->n++;
    return MHD_YES;
}

/* The part named "file" of a multipart body, as {"data_base64": ...}. */
static json_t *multipart_file(const char *ctype, const char *body, size_t len)
{
    const char *b = strstr(ctype, "boundary=");
    if (!b) return NULL;
    b += 9;
    char boundary[200];
    size_t bl = strcspn(b, "; ");
    if (*b == '"') {
        b++;
        bl = strcspn(b, "\"");
    }
    if (!bl || bl > 190) return NULL;
    snprintf(boundary, sizeof boundary, "--%.*s", (int)bl, b);
    size_t dl = strlen(boundary);
    const char *p = body, *end = body + len;
    while (p < end) {
        const char *start = memmem(p, (size_t)(end - p), boundary, dl);
        if (!start) return NULL;
        const char *hdr = start + dl;
        const char *hend = memmem(hdr, (size_t)(end - hdr), "\r\n\r\n", 4);
        if (!hend) return NULL;
        const char *data = hend + 4;
        const char *next = memmem(data, (size_t)(end - data), boundary, dl);
        if (!next) return NULL;
        size_t n = (size_t)(next - data);
        if (n >= 2 && data[n - 2] == '\r' && data[n - 1] == '\n') n -= 2;
        char *h = mb_strndup(hdr, (size_t)(hend - hdr));
        int is_file = strstr(h, "name=\"file\"") != NULL;
        free(h);
        if (is_file) {
            char *out = mb_malloc(4 * (n / 3 + 1) + 1);
            EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)data, (int)n);
            json_t *o = json_pack("{s:s}", "data_base64", out);
            free(out);
            return o;
        }
        p = next;
    }
    return NULL;
}

/* A Host header fit to build URLs from: a name or address and a port. */
static int host_ok(const char *host)
{
    size_t n = host ? strlen(host) : 0;
    return n && n <= 255 &&
           strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]_") == n;
}

static json_t *parse_body(mb_http_req *req)
{
    if (!req->body.len) return NULL;
    const char *ctype = mb_http_header(req, "Content-Type");
    if (ctype && !strncasecmp(ctype, "multipart/form-data", 19))
        return multipart_file(ctype, req->body.data, req->body.len);
    if (ctype && !strncasecmp(ctype, "application/x-www-form-urlencoded", 33))
        return mb_canvas_form_to_json(req->body.data, req->body.len);
    json_t *v = json_loadb(req->body.data, req->body.len, 0, NULL);
    if (!v && (!ctype || strncasecmp(ctype, "application/json", 16)))
        v = mb_canvas_form_to_json(req->body.data, req->body.len);
    return v;
}

static void respond(mb_http_req *req, mb_canvas_resp *r)
{
    char *txt = r->status == 204 ? mb_strdup("")
                                 : json_dumps(r->body, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t n = strlen(txt);
    struct MHD_Response *resp = MHD_create_response_from_buffer(n, txt, MHD_RESPMEM_MUST_FREE);
    if (r->status != 204)
        MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
    if (r->link) MHD_add_response_header(resp, "Link", r->link);
    mb_http_queue_response(req->conn, (unsigned)r->status, resp);
    req->responded = 1;
}

/* "/files/ID/download" -> ID, else 0. */
static int64_t download_id(const char *path)
{
    if (strncmp(path, "/files/", 7)) return 0;
    const char *p = path + 7;
    size_t n = strspn(p, "0123456789");
    if (!n || n > 15 || strcmp(p + n, "/download")) return 0;
    return strtoll(p, NULL, 10);
}

/* GET /files/:id/download: the file's bytes, for a token of its sandbox
 * that may read it, or for its verifier. */
static void download(mb_canvas_service *s, mb_http_req *req, int64_t id, const char *token,
                     const char *verifier)
{
    mb_canvas_file f = {0};
    int rc = 404;
    int64_t uid = 0;
    mb_canvas__sbx *x = token ? mb_canvas__by_token(s, token, &uid) : NULL;
    if (x) {
        rc = mb_canvas_file_download(x->db, uid, id, verifier, &f);
        mb_canvas__put(s, x);
    } else if (verifier && *verifier) {
        pthread_mutex_lock(&s->lock);
        size_t n = s->n;
        pthread_mutex_unlock(&s->lock);
        for (size_t i = 0; i < n && rc; i++) {
            pthread_mutex_lock(&s->lock);
            mb_canvas__sbx *y = i < s->n && !s->v[i]->closing ? s->v[i] : NULL;
            if (y) y->refs++;
            pthread_mutex_unlock(&s->lock);
            if (!y) continue;
            rc = mb_canvas_file_download(y->db, 0, id, verifier, &f);
            mb_canvas__put(s, y);
        }
    }
    if (rc) {
        mb_canvas_resp r = {token && !x ? 401 : 404,
                            json_pack("{s:[{s:s}]}", "errors", "message",
                                      token && !x ? "Invalid access token."
                                                  : "The specified resource does not exist."),
                            NULL};
        respond(req, &r);
        mb_canvas_resp_free(&r);
        return;
    }
    for (char *p = f.filename; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\' || *p == 0x7f) *p = '_';
    char *disp = mb_asprintf("attachment; filename=\"%s\"", f.filename);
    struct MHD_Response *resp = MHD_create_response_from_buffer(f.len, f.data, MHD_RESPMEM_MUST_FREE);
    f.data = NULL;
    MHD_add_response_header(resp, "Content-Type", f.content_type);
    MHD_add_response_header(resp, "Content-Disposition", disp);
    mb_http_queue_response(req->conn, 200, resp);
    req->responded = 1;
    free(disp);
    mb_canvas_file_free(&f);
}

static void handle(void *ctx, mb_http_req *req)
{
    mb_canvas_service *s = ctx;
    int64_t file_id = !strcmp(req->method, "GET") ? download_id(req->path) : 0;
    if (file_id) {
        const char *auth = mb_http_header(req, "Authorization");
        arg_acc a = {0};
        MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, on_arg, &a);
        const char *token = auth && !strncasecmp(auth, "Bearer ", 7) ? auth + 7 : NULL;
        const char *verifier = NULL;
        for (size_t i = 0; i < a.n; i++) {
            if (!token && !strcmp(a.v[i].key, "access_token")) token = a.v[i].val;
            if (!strcmp(a.v[i].key, "verifier")) verifier = a.v[i].val;
        }
        download(s, req, file_id, token, verifier);
        mb_canvas_params_free(a.v, a.n);
        return;
    }
    if (strncmp(req->path, "/api/v1/", 8)) {
        mb_canvas_resp r = {404, json_pack("{s:[{s:s}]}", "errors", "message",
                                           "The specified resource does not exist."), NULL};
        respond(req, &r);
        mb_canvas_resp_free(&r);
        return;
    }
    const char *auth = mb_http_header(req, "Authorization");
    const char *token = auth && !strncasecmp(auth, "Bearer ", 7) ? auth + 7 : NULL;
    arg_acc a = {0};
    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, on_arg, &a);
    if (!token) token = NULL;
    for (size_t i = 0; !token && i < a.n; i++)
        if (!strcmp(a.v[i].key, "access_token")) token = a.v[i].val;
    json_t *body = parse_body(req);
    const char *host = mb_http_header(req, "Host");
    /* Link URLs keep the scheme the request came with. */
    int tls = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_PROTOCOL) != NULL;
    /* URLs in bodies name the same origin: a file's `url` downloads from
     * whichever port (and scheme) the grader used. */
    char *origin = mb_asprintf("%s://%s", tls ? "https" : "http",
                               host_ok(host) ? host : "localhost:10001");
    char *base = mb_asprintf("%s/api/v1", origin);
    mb_canvas_resp r = {0};
    int64_t uid = 0;
    mb_canvas__sbx *x = NULL;
    const char *path = req->path + 7;
    int upload = !strcmp(req->method, "POST") && !strncmp(path, "/files/", 7) &&
                 strstr(path, "/upload");
    if (upload) {
        /* No token: the file's secret names its sandbox. */
        pthread_mutex_lock(&s->lock);
        size_t n = s->n;
        pthread_mutex_unlock(&s->lock);
        for (size_t i = 0; i < n && !x; i++) {
            pthread_mutex_lock(&s->lock);
            mb_canvas__sbx *y = i < s->n && !s->v[i]->closing ? s->v[i] : NULL;
            if (y) y->refs++;
            pthread_mutex_unlock(&s->lock);
            if (!y) continue;
            mb_canvas_req rq = {.method = req->method, .path = path, .params = a.v,
                                .n_params = a.n, .body = body, .link_base = base, .origin = origin};
            mb_canvas_handle(y->db, &rq, &r);
            if (r.status != 404) x = y;
            else {
                mb_canvas_resp_free(&r);
                mb_canvas__put(s, y);
            }
        }
        if (!x)
            r = (mb_canvas_resp){404, json_pack("{s:[{s:s}]}", "errors", "message",
                                                "The specified resource does not exist."), NULL};
    } else if (token && (x = mb_canvas__by_token(s, token, &uid))) {
        mb_canvas_req rq = {.method = req->method, .path = path, .params = a.v, .n_params = a.n,
                            .body = json_is_object(body) ? body : NULL, .as_user = uid,
                            .link_base = base, .origin = origin};
        mb_canvas_handle(x->db, &rq, &r);
    } else if (token) {
        r = (mb_canvas_resp){401, json_pack("{s:[{s:s}]}", "errors", "message",
                                            "Invalid access token."), NULL};
    } else {
        r = (mb_canvas_resp){401, json_pack("{s:s,s:[{s:s}]}", "status", "unauthenticated",
                                            "errors", "message", "user authorization required"),
                             NULL};
    }
    if (x) mb_canvas__put(s, x);
    respond(req, &r);
    mb_canvas_resp_free(&r);
    json_decref(body);
    free(base);
    free(origin);
    mb_canvas_params_free(a.v, a.n);
}

static void on_bound(void *ctx, unsigned port)
{
    ((mb_canvas_service *)ctx)->port = port;
}

int mb_canvas__port_start(mb_canvas_service *s, const char *listen, mb_err *err)
{
    mb_http_opts o = {.listen = listen, .json_body_limit = BODY_LIMIT, .on_bound = on_bound,
                      .on_bound_ctx = s, .max_conn_per_ip = 0};
    mb_http_app app = {s, begin, handle};
    return mb_http_start(&o, &app, &s->http, err);
}

static void on_bound_https(void *ctx, unsigned port)
{
    ((mb_canvas_service *)ctx)->https_port = port;
}

int mb_canvas__https_start(mb_canvas_service *s, const char *listen, const char *pem_path,
                           mb_err *err)
{
    char *pem = NULL;
    size_t len = 0;
    int rc = mb_read_file(pem_path, 1u << 20, &pem, &len, err);
    if (rc) return rc;
    if (!strstr(pem, "-----BEGIN CERTIFICATE-----") || !strstr(pem, "PRIVATE KEY-----")) {
        free(pem);
        return mb_err_set(err, MB_EINVAL, "%s: a PEM with a certificate and its private key is needed",
                          pem_path);
    }
    /* GnuTLS takes the certificate and the key each from its own PEM block. */
    mb_http_opts o = {.listen = listen, .json_body_limit = BODY_LIMIT, .on_bound = on_bound_https,
                      .on_bound_ctx = s, .max_conn_per_ip = 0, .tls_cert_pem = pem,
                      .tls_key_pem = pem};
    mb_http_app app = {s, begin, handle};
    rc = mb_http_start(&o, &app, &s->https, err);
    /* MHD keeps its own copy of the credentials once started. */
    explicit_bzero(pem, len);
    free(pem);
    return rc;
}

void mb_canvas__port_stop(mb_canvas_service *s)
{
    if (s->http) mb_http_stop(s->http);
    s->http = NULL;
    if (s->https) mb_http_stop(s->https);
    s->https = NULL;
}
