/*
 * server.c - the libmicrohttpd daemon behind mb_http_server: listening,
 * limits, and the three-step request flow described in http.h.
 */
#define _GNU_SOURCE
#include "http/http_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct mb_http_server {
    struct MHD_Daemon *mhd;
    mb_http_app app;
    mb_http_opts opts;
    unsigned port;
};

static void req_free(mb_http_req *req)
{
    if (req->app && req->app_free) req->app_free(req->app);
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
                return;
            }
            data += w;
            n -= (size_t)w;
        }
    }
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
        req->method = method;
        req->path = url;
        req->body_fd = -1;
        req->started_ms = mb_mono_ms();
        *con_cls = req;
        const char *framing = mb_http__framing_error(conn);
        if (framing) {
            mb_http__respond_close(req, framing);
            return MHD_YES;
        }
        srv->app.begin(srv->app.ctx, req);
        if (req->raw)
            return req->raw(req->raw_ctx, conn, method, upload_data, upload_data_size,
                            &req->raw_state);
        if (req->responded) return MHD_YES;
        if (!req->body_limit)
            req->body_limit = req->body_mode == MB_BODY_FILE ? srv->opts.file_body_limit
                                                            : srv->opts.json_body_limit;
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && req->body_mode != MB_BODY_NONE && strtoull(cl, NULL, 10) > req->body_limit) {
            mb_http_respond_detail(req, MHD_HTTP_CONTENT_TOO_LARGE,
                                   "Request body too large: %s bytes, the limit is %llu bytes",
                                   cl, (unsigned long long)req->body_limit);
            return MHD_YES;
        }
        if (req->body_mode == MB_BODY_FILE && open_body_file(req) != 0) return MHD_YES;
        return MHD_YES;
    }

    if (req->raw)
        return req->raw(req->raw_ctx, conn, method, upload_data, upload_data_size,
                        &req->raw_state);

    if (*upload_data_size) {
        if (!req->responded) store_chunk(req, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (req->responded) return MHD_YES;

    if (req->body_too_big) {
        mb_http_respond_detail(req, MHD_HTTP_CONTENT_TOO_LARGE,
                               "Request body too large: the limit is %llu bytes",
                               (unsigned long long)req->body_limit);
    } else if (req->body_write_error) {
        mb_err err;
        mb_err_sys(&err, req->body_write_error, "cannot store the upload");
        mb_http_respond_err(req, &err);
    } else {
        if (req->body_fd >= 0) {
            close(req->body_fd);
            req->body_fd = -1;
        }
        srv->app.handle(srv->app.ctx, req);
        if (!req->responded)
            mb_http_respond_detail(req, 500, "Internal error: the request got no answer");
    }
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    mb_http_req *req = *con_cls;
    if (!req) return;
    if (req->raw && req->raw_done) req->raw_done(req->raw_ctx, req->raw_state);
    req_free(req);
    *con_cls = NULL;
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

    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    int rc = parse_listen(opts->listen, &ss, &sslen, err);
    if (rc) {
        free(srv);
        return rc;
    }
    /* Bound here rather than by MHD so that the port is known (on_bound)
     * before the first request thread runs. No SO_REUSEPORT: a second
     * daemon on the same port must fail, not share it. */
    int lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(lfd, (struct sockaddr *)&ss, sslen) != 0 || listen(lfd, 1024) != 0) {
        int e = errno;
        if (lfd >= 0) close(lfd);
        free(srv);
        return mb_err_sys(err, e, "cannot listen on %s", opts->listen);
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (getsockname(lfd, (struct sockaddr *)&bound, &blen) == 0)
        srv->port = ntohs(bound.ss_family == AF_INET6
                              ? ((struct sockaddr_in6 *)&bound)->sin6_port
                              : ((struct sockaddr_in *)&bound)->sin_port);
    if (opts->on_bound) opts->on_bound(opts->on_bound_ctx, srv->port);
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    /* The memory pool holds the request line and headers; MHD needs some
     * room beyond them for its own bookkeeping. */
    size_t pool = srv->opts.header_limit + 16 * 1024;
    srv->mhd = MHD_start_daemon(
        flags, 0, NULL, NULL, on_access, srv,
        MHD_OPTION_LISTEN_SOCKET, lfd,
        MHD_OPTION_CONNECTION_LIMIT, srv->opts.max_connections,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
        MHD_OPTION_CONNECTION_TIMEOUT, srv->opts.idle_timeout_s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1024 * 1024),
        MHD_OPTION_EXTERNAL_LOGGER, on_log, srv,
        MHD_OPTION_END);
    if (!srv->mhd) {
        close(lfd);
        free(srv);
        return mb_err_set(err, MB_EIO, "cannot serve on %s", opts->listen);
    }
    *out = srv;
    return MB_OK;
}

unsigned mb_http_port(mb_http_server *srv) { return srv->port; }

void mb_http_stop(mb_http_server *srv)
{
    if (!srv) return;
    MHD_stop_daemon(srv->mhd);
    free(srv);
}
