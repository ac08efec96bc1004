/*
 * server.c - the libmicrohttpd daemon behind mb_http_server: listening,
 * limits, and the three-step request flow described in http.h.
 */
#define _GNU_SOURCE
#include "http/http_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <strings.h>
#include <unistd.h>

static void req_free(mb_http_req *req)
{
    if (req->app && req->app_free) req->app_free(req->app);
    if (req->held) MHD_destroy_response(req->held);
    if (req->body_fd >= 0) close(req->body_fd);
    /* An upload the application did not take (refused, too big, broken
     * connection) is not left behind. */
    if (req->body_path) unlink(req->body_path);
    free(req->body_path);
    mb_buf_free(&req->body);
    free(req);
}

static int open_body_file(mb_http_req *req)
{
    req->body_fd = open(req->body_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (req->body_fd < 0) {
        mb_err err;
        mb_err_sys(&err, errno, "cannot store the upload");
        mb_http_respond_err(req, &err);
        return -1;
    }
    return 0;
}

static void store_chunk(mb_http_req *req, const char *data, size_t n)
{
    if (req->body_too_big || req->body_write_error) return;
    if (req->body_len + n > req->body_limit) {
        req->body_too_big = 1;
        mb_http_respond_detail(req, MHD_HTTP_CONTENT_TOO_LARGE,
                               "Request body too large: the limit is %llu bytes",
                               (unsigned long long)req->body_limit);
        return;
    }
    req->body_len += n;
    if (req->body_mode == MB_BODY_BUFFER) {
        mb_buf_append(&req->body, data, n);
    } else if (req->body_mode == MB_BODY_FILE) {
        while (n) {
            ssize_t w = write(req->body_fd, data, n);
            if (w < 0) {
                if (errno == EINTR) continue;
                req->body_write_error = errno;
                mb_err err;
                mb_err_sys(&err, errno, "cannot store the upload");
                mb_http_respond_err(req, &err);
                return;
            }
            data += w;
            n -= (size_t)w;
        }
    }
}

/* What the headers say of the body. */
static void note_body(mb_http_req *req)
{
    const char *cl = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_TRANSFER_ENCODING);
    const char *ex = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_EXPECT);
    req->declared_len = UINT64_MAX;
    if (cl) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(cl, &end, 10);
        if (end != cl && !errno) req->declared_len = n;
    }
    req->has_body = te || (req->declared_len != UINT64_MAX && req->declared_len > 0);
    req->expects_continue = ex && !strcasecmp(ex, "100-continue");
}

/* The first call ends: the connection leaves the unauthenticated budget if
 * the request authenticated. */
static void first_call_done(mb_http_server *srv, mb_http_req *req)
{
    req->stage = 1;
    if (req->authenticated) mb_http__authenticated(srv, req->hc);
}

/* A refused request's body: read and dropped within the drain bounds, then
 * the held answer goes out. */
static enum MHD_Result drain(mb_http_server *srv, mb_http_req *req, size_t *upload_data_size)
{
    if (*upload_data_size) {
        uint64_t n = *upload_data_size;
        *upload_data_size = 0;
        req->received += n;
        req->drained += n;
        mb_http__progress(srv, req->hc, n);
        if (req->drained > req->drain_limit) {
            mb_debug("http: %s %s: refused body past %llu bytes, closing", req->method,
                     req->path, (unsigned long long)req->drain_limit);
            return MHD_NO;
        }
        const char *why = mb_http__overdue(srv, req->hc);
        if (why) {
            mb_debug("http: %s %s: %s, closing", req->method, req->path, why);
            return MHD_NO;
        }
        return MHD_YES;
    }
    req->stage = 2;
    mb_http__phase(srv, req->hc, MB_HTTP_BUSY);
    struct MHD_Response *resp = req->held;
    req->held = NULL;
    enum MHD_Result ret = MHD_queue_response(req->conn, req->held_status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static uint64_t request_id_key_value;
static void request_id_key(void)
{
    if (mb_random_bytes(&request_id_key_value, sizeof request_id_key_value, NULL) != MB_OK)
        request_id_key_value = (uint64_t)mb_mono_ms();
}

/* The client's id when it is short and plain, else a fresh one. */
static void set_request_id(mb_http_req *req, const char *given)
{
    size_t n = given ? strlen(given) : 0;
    int ok = n > 0 && n < sizeof req->request_id && n <= 36;
    for (size_t i = 0; ok && i < n; i++) {
        char c = given[i];
        ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             c == '.' || c == '_' || c == ':' || c == '-';
    }
    if (ok) {
        memcpy(req->request_id, given, n + 1);
        return;
    }
    /* 16 hex digits that differ per request: a process-wide counter mixed
     * with a random key drawn once (splitmix64), not a getrandom() per
     * request (a system call is microseconds in a VM). Not a secret. */
    static atomic_uint_fast64_t next;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, request_id_key);
    uint64_t z = request_id_key_value + 0x9e3779b97f4a7c15ull * (atomic_fetch_add(&next, 1) + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    unsigned char r[8];
    for (int i = 0; i < 8; i++) r[i] = (unsigned char)(z >> (8 * i));
    mb_hex(r, sizeof r, req->request_id);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version,
                                 const char *upload_data, size_t *upload_data_size,
                                 void **con_cls)
{
    mb_http_server *srv = cls;
    mb_http_req *req = *con_cls;

    if (!req) {
        req = mb_calloc(1, sizeof *req);
        req->conn = conn;
        req->srv = srv;
        req->method = method;
        req->path = url;
        req->body_fd = -1;
        req->started_ms = mb_mono_ms();
        set_request_id(req, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Request-Id"));
        mb_log_context_set(req->request_id, NULL);
        req->drain_limit = srv->opts.drain_bytes;
        req->hc = mb_http__conn(conn);
        if (req->hc) req->hc->req = req;
        *con_cls = req;
        /* Before note_body: a request of suspect framing is answered at once
         * and closed, its body never drained (it cannot be delimited). */
        const char *framing = mb_http__framing_error(conn);
        if (framing) {
            mb_http__phase(srv, req->hc, MB_HTTP_BUSY);
            mb_http__respond_close(req, framing);
            req->stage = 1;
            return MHD_YES;
        }
        note_body(req);
        mb_http__phase(srv, req->hc, req->has_body ? MB_HTTP_BODY : MB_HTTP_BUSY);
        const char *target = mb_http__target_error(conn);
        if (target) mb_http_respond_detail(req, 400, "%s", target);
        else srv->app.begin(srv->app.ctx, req);
        if (req->raw) {
            enum MHD_Result ret = req->raw(req->raw_ctx, conn, method, upload_data,
                                           upload_data_size, &req->raw_state);
            first_call_done(srv, req);
            return ret;
        }
        if (!req->responded) {
            if (!req->body_limit)
                req->body_limit = req->body_mode == MB_BODY_FILE ? srv->opts.file_body_limit
                                                                : srv->opts.json_body_limit;
            if (req->body_mode != MB_BODY_NONE && req->declared_len != UINT64_MAX &&
                req->declared_len > req->body_limit)
                mb_http_respond_detail(req, MHD_HTTP_CONTENT_TOO_LARGE,
                                       "Request body too large: %llu bytes, the limit is %llu "
                                       "bytes", (unsigned long long)req->declared_len,
                                       (unsigned long long)req->body_limit);
            else if (req->body_mode == MB_BODY_FILE)
                open_body_file(req);
        }
        first_call_done(srv, req);
        return MHD_YES;
    }

    if (req->held) return drain(srv, req, upload_data_size);

    if (*upload_data_size) {
        size_t n = *upload_data_size;
        req->received += n;
        mb_http__progress(srv, req->hc, n);
        const char *why = mb_http__overdue(srv, req->hc);
        if (why) {
            mb_debug("http: %s %s: %s, closing", method, req->path, why);
            return MHD_NO;
        }
        if (req->raw)
            return req->raw(req->raw_ctx, conn, method, upload_data, upload_data_size,
                            &req->raw_state);
        if (!req->responded) store_chunk(req, upload_data, n);
        *upload_data_size = 0;
        return MHD_YES;
    }

    req->stage = 2;
    mb_http__phase(srv, req->hc, MB_HTTP_BUSY);
    if (req->raw)
        return req->raw(req->raw_ctx, conn, method, upload_data, upload_data_size,
                        &req->raw_state);
    if (req->responded) return MHD_YES;
    if (req->body_fd >= 0) {
        close(req->body_fd);
        req->body_fd = -1;
    }
    srv->app.handle(srv->app.ctx, req);
    if (!req->responded)
        mb_http_respond_detail(req, 500, "Internal error: the request got no answer");
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    mb_http_server *srv = cls;
    mb_http_req *req = *con_cls;
    if (!req) return;
    if (req->hc) {
        req->hc->req = NULL;
        mb_http__phase(srv, req->hc, MB_HTTP_WAIT);
    }
    if (req->raw && req->raw_done) req->raw_done(req->raw_ctx, req->raw_state);
    req_free(req);
    *con_cls = NULL;
    mb_log_context_set(NULL, NULL);
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n') line[--n] = '\0';
    mb_debug("http: %s", line);
}

static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len,
                        mb_err *err)
{
    char host[256];
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen)
        return mb_err_set(err, MB_EINVAL, "--listen wants ADDR:PORT, got '%s'", listen);
    size_t hl = (size_t)(colon - listen);
    if (listen[0] == '[' && hl >= 2 && listen[hl - 1] == ']') {
        listen++;
        hl -= 2;
    }
    if (hl >= sizeof host) return mb_err_set(err, MB_EINVAL, "--listen address too long");
    memcpy(host, listen, hl);
    host[hl] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(host, colon + 1, &hints, &res);
    if (g != 0)
        return mb_err_set(err, MB_EINVAL, "cannot use --listen %s: %s", listen, gai_strerror(g));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return MB_OK;
}

static void destroy(mb_http_server *srv)
{
    pthread_cond_destroy(&srv->wake);
    pthread_mutex_destroy(&srv->lock);
    free(srv);
}

/* Binds and listens on "ADDR:PORT" ourselves rather than through MHD so
 * that the port is known (on_bound) before the first request thread runs.
 * No SO_REUSEPORT: a second daemon on the same port must fail, not share it. */
static int bind_listen(const char *listen_on, int *out, mb_err *err)
{
    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    int rc = parse_listen(listen_on, &ss, &sslen, err);
    if (rc) return rc;
    int lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(lfd, (struct sockaddr *)&ss, sslen) != 0 || listen(lfd, 1024) != 0) {
        int e = errno;
        if (lfd >= 0) close(lfd);
        return mb_err_sys(err, e, "cannot listen on %s", listen_on);
    }
    *out = lfd;
    return MB_OK;
}

int mb_http_start(const mb_http_opts *opts, const mb_http_app *app, mb_http_server **out,
                  mb_err *err)
{
    mb_http_server *srv = mb_calloc(1, sizeof *srv);
    srv->app = *app;
    srv->opts = *opts;
    if (!srv->opts.max_connections) srv->opts.max_connections = 4096;
    if (!srv->opts.header_limit) srv->opts.header_limit = 32 * 1024;
    if (!srv->opts.idle_timeout_s) srv->opts.idle_timeout_s = 300;
    if (!srv->opts.json_body_limit) srv->opts.json_body_limit = 1 << 20;
    if (!srv->opts.file_body_limit) srv->opts.file_body_limit = 4ULL << 30;
    if (!srv->opts.max_anon_conns || srv->opts.max_anon_conns > srv->opts.max_connections)
        srv->opts.max_anon_conns = srv->opts.max_connections / 2;
    if (!srv->opts.header_timeout_s) srv->opts.header_timeout_s = 30;
    if (!srv->opts.drain_bytes) srv->opts.drain_bytes = 4 << 20;
    if (!srv->opts.drain_timeout_s) srv->opts.drain_timeout_s = 2;
    pthread_mutex_init(&srv->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&srv->wake, &ca);
    pthread_condattr_destroy(&ca);

    int lfd = -1, rc;
    if (opts->listen) {
        if ((rc = bind_listen(opts->listen, &lfd, err)) != MB_OK) {
            destroy(srv);
            return rc;
        }
    } else {
        lfd = opts->listen_fd;
    }
    struct sockaddr_storage ss;
    socklen_t blen = sizeof ss;
    if (getsockname(lfd, (struct sockaddr *)&ss, &blen) != 0) {
        int e = errno;
        close(lfd);
        destroy(srv);
        return mb_err_sys(err, e, "cannot serve on socket %d", lfd);
    }
    srv->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                               : ((struct sockaddr_in *)&ss)->sin_port);
    if (opts->on_bound) opts->on_bound(opts->on_bound_ctx, srv->port);
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}};
    if (opts->tls_cert_pem && opts->tls_key_pem) {
        flags |= MHD_USE_TLS;
        tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)opts->tls_key_pem};
        tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)opts->tls_cert_pem};
        tls[2] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    }
    /* The memory pool holds the request line and headers (MHD reads them
     * into nearly all of it, and answers 431 or 414 past that), so its size
     * is the limit. MHD mallocs a pool of up to 32 KiB but maps a larger one
     * afresh for every connection and zeroes it: 12 page faults and a TLB
     * flush on every CPU at its munmap, per connection (1.3 ms of the
     * daemon's CPU on a paravirtualized host, where each fault costs 60 us;
     * the default limit keeps the pool on the heap). At least 8 KiB, for the
     * response's own header lines. */
    size_t pool = srv->opts.header_limit > 8 * 1024 ? srv->opts.header_limit : 8 * 1024;
    srv->mhd = MHD_start_daemon(
        flags, 0, mb_http__accept, srv, on_access, srv,
        MHD_OPTION_LISTEN_SOCKET, lfd,
        MHD_OPTION_CONNECTION_LIMIT, srv->opts.max_connections,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
        MHD_OPTION_CONNECTION_TIMEOUT, srv->opts.idle_timeout_s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, mb_http__notify, srv,
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1024 * 1024),
        MHD_OPTION_EXTERNAL_LOGGER, on_log, srv,
        MHD_OPTION_UNESCAPE_CALLBACK, mb_http_unescape, NULL,
        MHD_OPTION_ARRAY, tls,
        MHD_OPTION_END);
    if (!srv->mhd) {
        close(lfd);
        destroy(srv);
        return mb_err_set(err, MB_EIO, "cannot serve on %s", opts->listen ? opts->listen : "its socket");
    }
    if ((rc = mb_http__guard_start(srv, err)) != MB_OK) {
        MHD_stop_daemon(srv->mhd);
        destroy(srv);
        return rc;
    }
    *out = srv;
    return MB_OK;
}

unsigned mb_http_port(mb_http_server *srv) { return srv->port; }

void mb_http_stop(mb_http_server *srv)
{
    if (!srv) return;
    mb_http__guard_stop(srv);
    MHD_stop_daemon(srv->mhd);
    destroy(srv);
}
