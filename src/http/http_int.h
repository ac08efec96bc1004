/*
 * http_int.h - what the HTTP layer's files share: the server object and the
 * record the connection guard (guard.c) keeps of every open connection.
 * Include http.h from outside.
 */
#ifndef MB_HTTP_INT_H
#define MB_HTTP_INT_H

#include "http/http.h"

/* The reason a request's framing headers are refused (RFC 9112), or NULL. */
const char *mb_http__framing_error(struct MHD_Connection *conn);

/* Queues a 400 {"detail": msg} answer that closes the connection. */
void mb_http__respond_close(mb_http_req *req, const char *msg);

#include <pthread.h>
#include <sys/socket.h>

/* Where a connection is in its current request; each phase has its own
 * deadline (guard.c). */
typedef enum mb_http_phase {
    MB_HTTP_WAIT,  /* waiting for a request line and headers */
    MB_HTTP_BODY,  /* receiving a request body */
    MB_HTTP_DRAIN, /* reading and dropping the body of a refused request */
    MB_HTTP_BUSY,  /* the application or the response has the connection */
} mb_http_phase;

typedef struct mb_http_conn {
    struct mb_http_conn *prev, *next; /* in accept order, oldest first */
    int fd;
    struct sockaddr_storage addr;
    char ip[64];            /* the client address as text, for logs */
    int authenticated;      /* some request on it had valid credentials */
    int doomed;             /* shut down by the guard; gone when MHD closes it */
    mb_http_phase phase;
    int64_t since_ms;       /* start of the phase */
    uint64_t bytes;         /* body bytes received in the phase */
    mb_http_req *req;       /* the request in progress (its own thread only) */
} mb_http_conn;

struct mb_http_server {
    struct MHD_Daemon *mhd;
    mb_http_app app;
    mb_http_opts opts;
    unsigned port;

    /* the guard: every open connection, and how many are not authenticated */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    mb_http_conn *head, *tail;
    unsigned n_anon;
    int stopping;
    int sweeping;           /* the sweeper thread runs */
    pthread_t sweeper;
};

/* ---- unescape.c: why the request's query arguments are refused (not
 * UTF-8, %00 included), or NULL ---- */
const char *mb_http__target_error(struct MHD_Connection *conn);

/* ---- guard.c: limits on connections, and deadlines per phase ---- */

/* MHD's accept policy and connection notifier (MHD_OPTION_NOTIFY_CONNECTION). */
enum MHD_Result mb_http__accept(void *cls, const struct sockaddr *addr, socklen_t len);
void mb_http__notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                     enum MHD_ConnectionNotificationCode code);
int mb_http__guard_start(mb_http_server *srv, mb_err *err);
void mb_http__guard_stop(mb_http_server *srv);

/* The guard's record of a connection (NULL for a daemon without the guard). */
mb_http_conn *mb_http__conn(struct MHD_Connection *conn);
/* Transitions, from the connection's own thread; hc may be NULL. */
void mb_http__phase(mb_http_server *srv, mb_http_conn *hc, mb_http_phase phase);
void mb_http__progress(mb_http_server *srv, mb_http_conn *hc, uint64_t bytes);
void mb_http__authenticated(mb_http_server *srv, mb_http_conn *hc);
/* Why the connection's phase is past its deadline, or NULL. */
const char *mb_http__overdue(mb_http_server *srv, mb_http_conn *hc);

#endif /* MB_HTTP_INT_H */
