/*
 * http.h - the face of the HTTP layer: a libmicrohttpd server with bounded
 * headers, bodies and idle time, that hands complete requests to the
 * application and gives it small helpers to answer.
 *
 * Threading: one thread per connection (MHD_USE_THREAD_PER_CONNECTION), so a
 * handler may block its own connection (archive extraction, a gateway call
 * waiting for its server) without holding up any other. Keep-alive is on.
 *
 * A request goes through three steps:
 *   1. begin(): headers are in. The application routes, authenticates, and
 *      says what to do with the body (ignore, buffer up to a limit, stream to
 *      a file up to a limit), or answers at once by queueing a response; or
 *      hands the whole request to a raw MHD handler (the MCP gateway).
 *   2. the body arrives and is stored as asked; past its limit the answer
 *      is 413.
 *   3. handle(): the body is complete; the application queues one response.
 *
 * A request refused before its body is in (at begin(), by a raw handler
 * through mb_http_queue_response, or past its limit) is answered like
 * nginx's lingering close: the rest of the body is read and dropped, up to
 * drain_limit bytes and within the drain deadline, and only then is the
 * answer sent, so that a client still writing its body reads the answer
 * instead of a reset. Past either bound the connection is closed. A body
 * declared longer than the bound, or announced with Expect: 100-continue, is
 * answered at once and the connection closed after the answer.
 *
 * The connection guard (guard.c) keeps a record of every connection: a cap
 * per client address, a cap on connections that have not authenticated
 * (at the cap the oldest such connection makes room for a new one), a
 * deadline for request headers, a minimum average body rate, and the drain
 * deadline. See mb_http_opts.
 */
#ifndef MB_HTTP_H
#define MB_HTTP_H

#include "util/util.h"

#include <jansson.h>
#include <microhttpd.h>
#include <stdint.h>

typedef struct mb_http_server mb_http_server;
typedef struct mb_http_req mb_http_req;

typedef enum mb_body_mode {
    MB_BODY_NONE = 0, /* a body is discarded */
    MB_BODY_BUFFER,   /* kept in req->body */
    MB_BODY_FILE,     /* written to req->body_path as it arrives */
} mb_body_mode;

/* A raw handler has MHD's access-handler contract (see mb_gateway_handle). */
typedef enum MHD_Result (*mb_http_raw_fn)(void *raw_ctx, struct MHD_Connection *conn,
                                          const char *method, const char *upload_data,
                                          size_t *upload_data_size, void **raw_state);
typedef void (*mb_http_raw_done_fn)(void *raw_ctx, void *raw_state);

struct mb_http_req {
    struct MHD_Connection *conn;
    const char *method;       /* "GET", "POST", ... */
    const char *path;         /* URL path without the query */

    /* set by begin() */
    mb_body_mode body_mode;
    uint64_t body_limit;      /* bytes; 0 = the server's default for the mode */
    char *body_path;          /* MB_BODY_FILE: where to write (the layer opens it) */
    mb_http_raw_fn raw;       /* non-NULL: hand every call to this handler */
    mb_http_raw_done_fn raw_done;
    void *raw_ctx;
    int authenticated;        /* begin() (or the raw handler's first call) found
                                 valid credentials: the connection leaves the
                                 unauthenticated budget (mb_http_opts) */
    unsigned retry_after_s;   /* Retry-After of a 429 (mb_http_respond_err); 0 = 1 */
    void *app;                /* the application's per-request state */
    void (*app_free)(void *app);

    /* filled by the layer */
    mb_buf body;
    uint64_t body_len;
    int body_fd;
    int body_too_big;
    int body_write_error;
    int responded;            /* a response was queued */
    void *raw_state;
    int64_t started_ms;
    char request_id[40];      /* the client's X-Request-Id when it is 1..36 of
                                 [A-Za-z0-9._:-], else 16 hex digits that
                                 differ per request (server.c);
                                 sent back in X-Request-Id, carried by the
                                 thread's log records (mb_log_context_set) */
    uint64_t drain_limit;     /* body bytes read and dropped after a refusal
                                 before closing; begin() may raise it from
                                 the server's default (mb_http_opts) */

    /* the layer's own bookkeeping */
    mb_http_server *srv;
    struct mb_http_conn *hc;  /* the guard's record of the connection */
    int stage;                /* 0 headers (first call), 1 body, 2 complete */
    int has_body;             /* Content-Length > 0 or Transfer-Encoding */
    int expects_continue;     /* Expect: 100-continue */
    uint64_t declared_len;    /* Content-Length, UINT64_MAX if none */
    uint64_t received;        /* body bytes so far, kept or not */
    struct MHD_Response *held;/* the answer of a refused request, sent once
                                 its body has been drained */
    unsigned held_status;
    uint64_t drained;
};

typedef struct mb_http_app {
    void *ctx;
    void (*begin)(void *ctx, mb_http_req *req);
    void (*handle)(void *ctx, mb_http_req *req);
} mb_http_app;

typedef struct mb_http_opts {
    const char *listen;          /* "ADDR:PORT"; port 0 picks a free one */
    int listen_fd;               /* listen NULL: serve this bound, listening
                                    socket (the layer closes it) */
    unsigned max_connections;    /* default 4096 */
    size_t header_limit;         /* bytes of request line + headers; default 32 KiB */
    unsigned idle_timeout_s;     /* default 300 */
    uint64_t json_body_limit;    /* default 1 MiB */
    uint64_t file_body_limit;    /* default 4 GiB */
    /* Called once the socket is bound (with the port, useful for port 0)
     * and before any request is served: what it sets up is seen by every
     * request thread without further locking. */
    void (*on_bound)(void *ctx, unsigned port);
    void *on_bound_ctx;
    /* the connection guard */
    unsigned max_conn_per_ip;    /* connections from one address; 0 = no cap */
    unsigned max_anon_conns;     /* not authenticated (yet); default half of
                                    max_connections */
    unsigned header_timeout_s;   /* request line + headers, and the grace
                                    before min_body_rate counts; default 30 */
    uint64_t min_body_rate;      /* bytes/s a body must average; 0 = none */
    uint64_t drain_bytes;        /* drain bound after a refusal; default 4 MiB */
    unsigned drain_timeout_s;    /* drain deadline (then min_body_rate
                                    counts); default 2 */
    /* HTTPS: PEM texts of the certificate (chain) and its key; NULL = HTTP */
    const char *tls_cert_pem;
    const char *tls_key_pem;
} mb_http_opts;

int mb_http_start(const mb_http_opts *opts, const mb_http_app *app, mb_http_server **out,
                  mb_err *err);
/* The bound port (useful when listening on port 0). */
unsigned mb_http_port(mb_http_server *srv);
void mb_http_stop(mb_http_server *srv);

/* libmicrohttpd's MHD_OPTION_UNESCAPE_CALLBACK for every daemon of mcpbox:
 * percent-decoding as MHD_http_unescape, but %00 becomes the byte 0xFF
 * (never valid UTF-8) so that it cannot cut a path or an argument short
 * (unescape.c). */
size_t mb_http_unescape(void *cls, struct MHD_Connection *conn, char *s);

/* Request helpers. */
const char *mb_http_header(mb_http_req *req, const char *name);
const char *mb_http_query(mb_http_req *req, const char *name);

/* Responses: each queues exactly one response on the request. */
void mb_http_respond_json(mb_http_req *req, unsigned status, json_t *body /* stolen */);
/* {"detail": "..."} */
void mb_http_respond_detail(mb_http_req *req, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Maps an mb_code to its HTTP status and answers {"detail": err->msg}. */
void mb_http_respond_err(mb_http_req *req, const mb_err *err);
unsigned mb_http_status_for(int code);
/* Queues resp (taken over: the caller does not destroy it) as the answer of
 * the connection's request, held until the request's body is drained when it
 * is still arriving (see above). For raw handlers; works on any MHD
 * connection (without the guard's record it is MHD_queue_response). */
enum MHD_Result mb_http_queue_response(struct MHD_Connection *conn, unsigned status,
                                       struct MHD_Response *resp);
/* Sends `size` bytes of the open file fd (taken over and closed). */
void mb_http_respond_fd(mb_http_req *req, unsigned status, int fd, uint64_t size,
                        const char *content_type, const char *filename);
void mb_http_respond_empty(mb_http_req *req, unsigned status);
/* A body of `len` bytes (copied) with that Content-Type, and extra headers
 * (name, value, ..., NULL; may be NULL). */
void mb_http_respond_bytes(mb_http_req *req, unsigned status, const char *content_type,
                           const void *data, size_t len, const char *const *headers);

#endif /* MB_HTTP_H */
