/*
 * forward.c - a request for another node's sandbox (or an acquire placed on
 * another node) handed over to that node: a small HTTP/1.1 reverse proxy on
 * the HTTP layer's raw-handler contract. The request head goes up at once
 * (Connection: close), the body as it arrives (re-chunked when the client
 * sent it chunked), and the answer comes back through a callback response
 * that reads the node's socket as the client reads: an SSE stream passes
 * event by event, nothing is buffered beyond one read.
 */
#define _GNU_SOURCE
#include "cluster/cluster_int.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 1000
#define HEAD_TIMEOUT_MS (900 * 1000)   /* a dump or a long tool call answers late */
#define READ_TIMEOUT_MS (900 * 1000)   /* silence on a stream before it is cut */
#define HEAD_MAX (64 * 1024)
#define BUF_CAP (64 * 1024)

typedef struct fwd {
    mb_cluster *cl;
    mb_http_req *req;
    int ordinal;
    int fd;
    int calls;            /* raw calls so far */
    int chunked_up;       /* the body goes up chunked */
    int broken;           /* the node went away while the body went up */
    /* the answer */
    char buf[BUF_CAP];
    size_t len, pos;      /* bytes in buf, bytes of them consumed */
    int chunked;          /* the node answers chunked */
    uint64_t left;        /* content-length left, or bytes left of the chunk */
    int know_len;
    int done;
} fwd;

void mb_cluster_respond_down(mb_http_req *req, int ordinal)
{
    mb_http_respond_detail(req, 503, "node %d unavailable", ordinal);
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads more of the answer into buf (compacting it); 0 at EOF, -1 on error. */
static ssize_t fill(fwd *f, int timeout_ms)
{
    if (f->pos) {
        memmove(f->buf, f->buf + f->pos, f->len - f->pos);
        f->len -= f->pos;
        f->pos = 0;
    }
    if (f->len == sizeof f->buf) return -1;
    struct pollfd p = {.fd = f->fd, .events = POLLIN};
    int pr;
    do pr = poll(&p, 1, timeout_ms);
    while (pr < 0 && errno == EINTR);
    if (pr <= 0) return -1;
    ssize_t r;
    do r = recv(f->fd, f->buf + f->len, sizeof f->buf - f->len, 0);
    while (r < 0 && errno == EINTR);
    if (r > 0) f->len += (size_t)r;
    return r;
}

/* "http://host:port/..." -> a connected socket, or -1. */
static int connect_url(const char *url)
{
    const char *h = strstr(url, "://");
    h = h ? h + 3 : url;
    char host[256], port[16] = "80";
    const char *end = h + strcspn(h, "/");
    const char *colon = NULL;
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(end - h));
        if (!rb) return -1;
        snprintf(host, sizeof host, "%.*s", (int)(rb - h - 1), h + 1);
        if (rb[1] == ':') colon = rb + 1;
    } else {
        colon = memchr(h, ':', (size_t)(end - h));
        snprintf(host, sizeof host, "%.*s", (int)((colon ? colon : end) - h), h);
    }
    if (colon) snprintf(port, sizeof port, "%.*s", (int)(end - colon - 1), colon + 1);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(host, port, &hints, &ai) != 0) return -1;
    int fd = -1;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) continue;
        int rc = connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (poll(&p, 1, CONNECT_TIMEOUT_MS) == 1 &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
                rc = 0;
        }
        if (rc != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd >= 0) {
        /* Blocking from here on; reads wait in poll, writes at most 30 s. */
        struct timeval tv = {30, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        int fl = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    return fd;
}

/* Percent-encodes s into b, keeping the characters in `keep` as they are. */
static void put_encoded(mb_buf *b, const char *s, const char *keep)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("-._~", *c) || (*c && strchr(keep, *c))) {
            mb_buf_append(b, (const char *)c, 1);
        } else {
            char e[3] = {'%', hex[*c >> 4], hex[*c & 15]};
            mb_buf_append(b, e, 3);
        }
    }
}

static int hop_by_hop(const char *name)
{
    static const char *const skip[] = {"connection", "keep-alive", "transfer-encoding", "te",
                                       "trailer", "upgrade", "proxy-connection", "expect",
                                       "content-length", MB_CLUSTER_HDR_FORWARDED,
                                       MB_CLUSTER_HDR_PLACED};
    for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
        if (!strcasecmp(name, skip[i])) return 1;
    return 0;
}

typedef struct head_ctx {
    mb_buf *b;
    int first;
} head_ctx;

static enum MHD_Result put_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    head_ctx *h = cls;
    mb_buf_append(h->b, h->first ? "?" : "&", 1);
    h->first = 0;
    put_encoded(h->b, key, "");
    if (value) {
        mb_buf_append(h->b, "=", 1);
        put_encoded(h->b, value, "");
    }
    return MHD_YES;
}

static enum MHD_Result put_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    head_ctx *h = cls;
    if (hop_by_hop(key)) return MHD_YES;
    mb_buf_printf(h->b, "%s: %s\r\n", key, value ? value : "");
    return MHD_YES;
}

/* ---------------------------------------------------------------- answer */

/* The body of the answer, as the client reads it. */
static ssize_t read_body(void *cls, uint64_t at, char *out, size_t max)
{
    fwd *f = cls;
    for (;;) {
        if (f->done) return MHD_CONTENT_READER_END_OF_STREAM;
        size_t avail = f->len - f->pos;
        if (f->chunked && f->left == 0) {
            /* a chunk-size line (after the CRLF ending the previous chunk) */
            char *nl = avail ? memmem(f->buf + f->pos, avail, "\r\n", 2) : NULL;
            if (nl == f->buf + f->pos) { /* the CRLF after chunk data */
                f->pos += 2;
                continue;
            }
            if (!nl) {
                if (fill(f, READ_TIMEOUT_MS) <= 0) return MHD_CONTENT_READER_END_WITH_ERROR;
                continue;
            }
            char *end;
            unsigned long long size = strtoull(f->buf + f->pos, &end, 16);
            if (end == f->buf + f->pos) return MHD_CONTENT_READER_END_WITH_ERROR;
            f->pos = (size_t)(nl + 2 - f->buf);
            if (size == 0) {
                f->done = 1;
                return MHD_CONTENT_READER_END_OF_STREAM;
            }
            f->left = size;
            continue;
        }
        if (avail == 0) {
            ssize_t r = fill(f, READ_TIMEOUT_MS);
            if (r == 0 && !f->chunked && !f->know_len) return MHD_CONTENT_READER_END_OF_STREAM;
            if (r <= 0) return MHD_CONTENT_READER_END_WITH_ERROR;
            continue;
        }
        size_t n = avail < max ? avail : max;
        if ((f->chunked || f->know_len) && n > f->left) n = (size_t)f->left;
        memcpy(out, f->buf + f->pos, n);
        f->pos += n;
        if (f->chunked || f->know_len) {
            f->left -= n;
            if (f->know_len && f->left == 0) f->done = 1;
        }
        return (ssize_t)n;
    }
}

/* Reads the answer's head and queues the response that streams its body.
 * -1 when the node did not answer (nothing queued). */
static int relay_answer(fwd *f, struct MHD_Connection *conn)
{
    char *end = NULL;
    while (!(end = f->len ? memmem(f->buf, f->len, "\r\n\r\n", 4) : NULL)) {
        if (f->len >= HEAD_MAX || fill(f, HEAD_TIMEOUT_MS) <= 0) return -1;
    }
    *end = '\0';
    f->pos = (size_t)(end + 4 - f->buf);
    char *save = NULL;
    char *line = strtok_r(f->buf, "\r\n", &save);
    unsigned status = 0;
    if (!line || sscanf(line, "HTTP/1.%*d %u", &status) != 1 || status < 100 || status > 599)
        return -1;
    struct MHD_Response *resp = NULL;
    int64_t length = -1;
    char *names[128], *values[128];
    size_t nh = 0;
    while ((line = strtok_r(NULL, "\r\n", &save))) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        *colon = '\0';
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        if (!strcasecmp(line, "content-length")) length = strtoll(v, NULL, 10);
        else if (!strcasecmp(line, "transfer-encoding") && strcasestr(v, "chunked")) f->chunked = 1;
        if (!hop_by_hop(line) && nh < 128) {
            names[nh] = line;
            values[nh++] = v;
        }
    }
    int no_body = status == 204 || status == 304 || !strcmp(f->req->method, "HEAD");
    if (no_body) length = 0;
    if (!f->chunked && length >= 0) {
        f->know_len = 1;
        f->left = (uint64_t)length;
        if (length == 0) f->done = 1;
    }
    resp = MHD_create_response_from_callback(f->know_len ? (uint64_t)length : MHD_SIZE_UNKNOWN,
                                             16 * 1024, read_body, f, NULL);
    if (!resp) return -1;
    for (size_t i = 0; i < nh; i++) MHD_add_response_header(resp, names[i], values[i]);
    /* The names and values live in buf, which the body overwrites: copied above. */
    f->req->authenticated = status < 400;
    mb_http_queue_response(conn, status, resp);
    return 0;
}

/* ---------------------------------------------------------- raw handler */

static enum MHD_Result fwd_raw(void *ctx, struct MHD_Connection *conn, const char *method,
                               const char *upload_data, size_t *upload_data_size, void **state)
{
    fwd *f = ctx;
    if (f->calls++ == 0) return MHD_YES; /* begin: the head went up already */
    if (*upload_data_size) {
        if (!f->broken) {
            int bad = 0;
            if (f->chunked_up) {
                char size[32];
                int n = snprintf(size, sizeof size, "%zx\r\n", *upload_data_size);
                bad = send_all(f->fd, size, (size_t)n) || send_all(f->fd, upload_data, *upload_data_size) ||
                      send_all(f->fd, "\r\n", 2);
            } else {
                bad = send_all(f->fd, upload_data, *upload_data_size);
            }
            if (bad) f->broken = 1;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (f->chunked_up && !f->broken && send_all(f->fd, "0\r\n\r\n", 5)) f->broken = 1;
    if (relay_answer(f, conn) != 0) {
        mb_warn("cluster: node %d did not answer %s %s", f->ordinal, method, f->req->path);
        struct MHD_Response *r = NULL;
        char body[96];
        int n = snprintf(body, sizeof body, "{\"detail\":\"node %d unavailable\"}", f->ordinal);
        r = MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
        MHD_add_response_header(r, "Content-Type", "application/json");
        mb_http_queue_response(conn, 503, r);
    }
    return MHD_YES;
}

static void fwd_done(void *ctx, void *state)
{
    fwd *f = ctx;
    if (f->fd >= 0) close(f->fd);
    free(f);
}

int mb_cluster_forward(mb_cluster *cl, mb_http_req *req, int ordinal, int placed)
{
    char url[256];
    if (mb_cluster_node_url(cl, ordinal, url, sizeof url) != MB_OK) return MB_EBUSY;
    int fd = connect_url(url);
    if (fd < 0) return MB_EBUSY;
    mb_buf head = {0};
    mb_buf_printf(&head, "%s ", req->method);
    put_encoded(&head, req->path, "/:@!$&'()*+,;=");
    head_ctx h = {&head, 1};
    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, put_arg, &h);
    mb_buf_printf(&head, " HTTP/1.1\r\n");
    h.first = 0;
    MHD_get_connection_values(req->conn, MHD_HEADER_KIND, put_header, &h);
    const char *cl_len = mb_http_header(req, "Content-Length");
    const char *te = mb_http_header(req, "Transfer-Encoding");
    fwd *f = mb_calloc(1, sizeof *f);
    f->cl = cl;
    f->req = req;
    f->ordinal = ordinal;
    f->fd = fd;
    if (cl_len) mb_buf_printf(&head, "Content-Length: %s\r\n", cl_len);
    else if (te) f->chunked_up = 1, mb_buf_printf(&head, "Transfer-Encoding: chunked\r\n");
    char marker[160];
    mb_cluster__marker(cl, req->method, req->path, marker, sizeof marker);
    mb_buf_printf(&head, "%s: %s\r\n", MB_CLUSTER_HDR_FORWARDED, marker);
    if (placed) mb_buf_printf(&head, "%s: %d\r\n", MB_CLUSTER_HDR_PLACED, ordinal);
    mb_buf_printf(&head, "Connection: close\r\n\r\n");
    int bad = send_all(fd, head.data, head.len);
    mb_buf_free(&head);
    if (bad) {
        close(fd);
        free(f);
        return MB_EBUSY;
    }
    req->raw = fwd_raw;
    req->raw_done = fwd_done;
    req->raw_ctx = f;
    req->body_mode = MB_BODY_NONE;
    return MB_OK;
}
