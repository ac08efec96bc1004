/*
 * svc_int.h - what the service files of the canvas layer share (service.c,
 * port.c, sock.c, hook.c): the service and its table of sandboxes.
 */
#ifndef MB_CANVAS_SVC_INT_H
#define MB_CANVAS_SVC_INT_H

#include "canvas/canvas_int.h"
#include "store/store.h"

typedef struct mb_canvas__sbx {
    char id[37];
    mb_canvas_db *db;
    int64_t agent_uid;    /* whom the sandbox's MCP server acts as without a token */
    char *agent_token;
    char *agent_email;
    char *sock_path;
    int lfd;              /* listening socket, -1 = none */
    int conns[16];        /* open connections (shut down at detach) */
    int nconns;
    int refs;             /* requests and connections using it */
    int closing;
} mb_canvas__sbx;

struct mb_http_server;

struct mb_canvas_service {
    char *data_dir;
    mb_store *store;
    mb_canvas_users *users; /* the operator's set, or NULL */
    char *users_for;
    pthread_mutex_t lock;
    pthread_cond_t cond;    /* refs dropped */
    pthread_mutex_t tpl_lock; /* making a template database */
    mb_canvas__sbx **v;
    size_t n;
    struct mb_http_server *http;
    unsigned port;
    struct mb_http_server *https; /* the same over TLS, or NULL */
    unsigned https_port;
    pthread_t sock_thread;
    int sock_running;
    int wake[2];
};

/* A live sandbox with a reference taken (mb_canvas__put drops it). */
mb_canvas__sbx *mb_canvas__get(mb_canvas_service *s, const char *id);
mb_canvas__sbx *mb_canvas__by_token(mb_canvas_service *s, const char *token, int64_t *uid);
void mb_canvas__put(mb_canvas_service *s, mb_canvas__sbx *x);

/* port.c: the graders' HTTP server. */
int mb_canvas__port_start(mb_canvas_service *s, const char *listen, mb_err *err);
int mb_canvas__https_start(mb_canvas_service *s, const char *listen, const char *pem_path,
                           mb_err *err);
void mb_canvas__port_stop(mb_canvas_service *s);

/* sock.c: the sandboxes' sockets, and the frame both sides speak: a 4-byte
 * big-endian length, then that many bytes of JSON. */
#define MB_CANVAS_FRAME_MAX (96u << 20)
int mb_canvas__sock_start(mb_canvas_service *s, mb_err *err);
void mb_canvas__sock_stop(mb_canvas_service *s);
void mb_canvas__sock_wake(mb_canvas_service *s);
void mb_canvas__sock_close_locked(mb_canvas_service *s, mb_canvas__sbx *x);
int mb_canvas__frame_write(int fd, json_t *msg);
json_t *mb_canvas__frame_read(int fd);

#endif /* MB_CANVAS_SVC_INT_H */
