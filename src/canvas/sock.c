/*
 * sock.c - the sandboxes' sockets: one listening unix socket per sandbox
 * (in the directory bound at /mnt/egress inside it), one thread polling all
 * of them, one thread per connection answering frames. A connection speaks
 * for its own sandbox only: the socket it came through selects the
 * database, the token (or none: the sandbox's agent user) the user.
 *
 * Frame: 4-byte big-endian length, then JSON. Request {method, path (with
 * query), body, token}; answer {status, body, link}.
 */
#define _GNU_SOURCE
#include "canvas/svc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int write_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n)
{
    char *b = p;
    while (n) {
        ssize_t r = read(fd, b, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

int mb_canvas__frame_write(int fd, json_t *msg)
{
    char *txt = json_dumps(msg, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!txt) return -1;
    size_t n = strlen(txt);
    unsigned char hdr[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                            (unsigned char)(n >> 8), (unsigned char)n};
    int rc = n > MB_CANVAS_FRAME_MAX || write_all(fd, hdr, 4) || write_all(fd, txt, n) ? -1 : 0;
    free(txt);
    return rc;
}

json_t *mb_canvas__frame_read(int fd)
{
    unsigned char hdr[4];
    if (read_all(fd, hdr, 4)) return NULL;
    size_t n = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
    if (n > MB_CANVAS_FRAME_MAX) return NULL;
    char *buf = mb_malloc(n + 1);
    json_t *v = NULL;
    if (!read_all(fd, buf, n)) v = json_loadb(buf, n, JSON_DECODE_ANY, NULL);
    free(buf);
    return v;
}

typedef struct conn {
    mb_canvas_service *s;
    mb_canvas__sbx *x;
    int fd;
} conn;

static void answer(mb_canvas__sbx *x, json_t *rq, json_t **out)
{
    const char *method = json_string_value(json_object_get(rq, "method"));
    const char *pq = json_string_value(json_object_get(rq, "path"));
    const char *token = json_string_value(json_object_get(rq, "token"));
    if (!method || !pq) {
        *out = json_pack("{s:i,s:{s:[{s:s}]}}", "status", 400, "body", "errors", "message",
                         "bad request");
        return;
    }
    mb_canvas_resp resp;
    mb_canvas_handle_pq(x->db, method, pq, json_object_get(rq, "body"), token,
                        token && *token ? 0 : x->agent_uid, &resp);
    *out = json_pack("{s:i,s:O,s:s?}", "status", resp.status, "body", resp.body, "link", resp.link);
    mb_canvas_resp_free(&resp);
}

static void *conn_main(void *arg)
{
    conn *k = arg;
    for (;;) {
        json_t *rq = mb_canvas__frame_read(k->fd);
        if (!json_is_object(rq)) {
            json_decref(rq);
            break;
        }
        json_t *out = NULL;
        answer(k->x, rq, &out);
        json_decref(rq);
        int rc = mb_canvas__frame_write(k->fd, out);
        json_decref(out);
        if (rc) break;
    }
    pthread_mutex_lock(&k->s->lock);
    for (int i = 0; i < k->x->nconns; i++)
        if (k->x->conns[i] == k->fd) k->x->conns[i] = k->x->conns[--k->x->nconns];
    pthread_mutex_unlock(&k->s->lock);
    close(k->fd);
    mb_canvas__put(k->s, k->x);
    free(k);
    return NULL;
}

static void accept_one(mb_canvas_service *s, int lfd)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) return;
    pthread_mutex_lock(&s->lock);
    mb_canvas__sbx *x = NULL;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i]->lfd == lfd && !s->v[i]->closing) x = s->v[i];
    if (!x || x->nconns == (int)(sizeof x->conns / sizeof *x->conns)) {
        pthread_mutex_unlock(&s->lock);
        close(fd);
        return;
    }
    x->refs++;
    x->conns[x->nconns++] = fd;
    pthread_mutex_unlock(&s->lock);
    conn *k = mb_calloc(1, sizeof *k);
    *k = (conn){s, x, fd};
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, conn_main, k) != 0) {
        pthread_mutex_lock(&s->lock);
        x->nconns--;
        pthread_mutex_unlock(&s->lock);
        close(fd);
        mb_canvas__put(s, x);
        free(k);
    }
    pthread_attr_destroy(&at);
}

static void *poll_main(void *arg)
{
    mb_canvas_service *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        if (!s->sock_running) {
            pthread_mutex_unlock(&s->lock);
            break;
        }
        size_t n = s->n;
        struct pollfd *p = mb_calloc(n + 1, sizeof *p);
        p[0] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
        size_t m = 1;
        for (size_t i = 0; i < n; i++)
            if (s->v[i]->lfd >= 0 && !s->v[i]->closing)
                p[m++] = (struct pollfd){.fd = s->v[i]->lfd, .events = POLLIN};
        pthread_mutex_unlock(&s->lock);
        int r = poll(p, m, 1000);
        if (r > 0) {
            if (p[0].revents) {
                char buf[64];
                while (read(s->wake[0], buf, sizeof buf) > 0) {
                }
            }
            for (size_t i = 1; i < m; i++)
                if (p[i].revents & POLLIN) accept_one(s, p[i].fd);
        }
        free(p);
    }
    return NULL;
}

int mb_canvas__sock_start(mb_canvas_service *s, mb_err *err)
{
    if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) != 0) return mb_err_sys(err, errno, "pipe");
    s->sock_running = 1;
    if (pthread_create(&s->sock_thread, NULL, poll_main, s) != 0) {
        s->sock_running = 0;
        return mb_err_set(err, MB_EIO, "cannot start the canvas socket thread");
    }
    return MB_OK;
}

void mb_canvas__sock_wake(mb_canvas_service *s)
{
    if (s->wake[1] > 0) (void)!write(s->wake[1], "x", 1);
}

void mb_canvas__sock_stop(mb_canvas_service *s)
{
    pthread_mutex_lock(&s->lock);
    int running = s->sock_running;
    s->sock_running = 0;
    for (size_t i = 0; i < s->n; i++) mb_canvas__sock_close_locked(s, s->v[i]);
    while (1) {
        int busy = 0;
        for (size_t i = 0; i < s->n; i++) busy |= s->v[i]->refs > 0;
        if (!busy) break;
        pthread_cond_wait(&s->cond, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    if (running) {
        mb_canvas__sock_wake(s);
        pthread_join(s->sock_thread, NULL);
    }
    if (s->wake[0] > 0) close(s->wake[0]);
    if (s->wake[1] > 0) close(s->wake[1]);
    s->wake[0] = s->wake[1] = 0;
}

void mb_canvas__sock_close_locked(mb_canvas_service *s, mb_canvas__sbx *x)
{
    mb_assert_held(&s->lock);
    for (int i = 0; i < x->nconns; i++) shutdown(x->conns[i], SHUT_RDWR);
    if (x->lfd >= 0) {
        /* The poll thread may be waiting on it: closed once it is awake. */
        shutdown(x->lfd, SHUT_RDWR);
    }
    mb_canvas__sock_wake(s);
}
