/*
 * forward.c - the sandbox side of egress: a loopback TCP port inside the
 * sandbox's network namespace whose connections are relayed, byte for byte, to
 * the daemon's proxy socket bound into the sandbox. Programs that take only a
 * TCP proxy address (Chromium's --proxy-server) use it; the daemon applies the
 * policy.
 */
#define _GNU_SOURCE
#include "egress/egress.h"
#include "egress/egress_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#define FWD_MAX_CONNS 256
#define FWD_IDLE_MS 600000

typedef struct fwd {
    int lfd;
    struct sockaddr_un target;
    pthread_mutex_t lock;
    int active;
} fwd;

typedef struct fwd_conn {
    fwd *f;
    int cfd;
} fwd_conn;

static void *fwd_conn_main(void *arg)
{
    fwd_conn *c = arg;
    int ufd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ufd >= 0 && connect(ufd, (struct sockaddr *)&c->f->target, sizeof c->f->target) == 0) {
        unsigned long long up = 0, down = 0;
        mb_egress__relay(c->cfd, ufd, FWD_IDLE_MS, &up, &down);
    } else {
        static const char msg[] =
            "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            "Content-Length: 51\r\n\r\nmcpbox egress: the daemon's proxy is not reachable\n";
        (void)mb_egress__write_all(c->cfd, msg, sizeof msg - 1);
    }
    if (ufd >= 0) close(ufd);
    close(c->cfd);
    pthread_mutex_lock(&c->f->lock);
    c->f->active--;
    pthread_mutex_unlock(&c->f->lock);
    free(c);
    return NULL;
}

static void *fwd_main(void *arg)
{
    fwd *f = arg;
    for (;;) {
        int cfd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) {
                if (errno == EMFILE || errno == ENFILE) usleep(10000);
                continue;
            }
            return NULL;
        }
        pthread_mutex_lock(&f->lock);
        int full = f->active >= FWD_MAX_CONNS;
        if (!full) f->active++;
        pthread_mutex_unlock(&f->lock);
        if (full) {
            close(cfd);
            continue;
        }
        fwd_conn *c = mb_calloc(1, sizeof *c);
        c->f = f;
        c->cfd = cfd;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 256 * 1024);
        pthread_t t;
        if (pthread_create(&t, &at, fwd_conn_main, c) != 0) {
            close(cfd);
            free(c);
            pthread_mutex_lock(&f->lock);
            f->active--;
            pthread_mutex_unlock(&f->lock);
        }
        pthread_attr_destroy(&at);
    }
}

int mb_egress_forward_start(const char *socket_path, int *port, mb_err *err)
{
    struct sockaddr_un target = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof target.sun_path)
        return mb_err_set(err, MB_EINVAL, "egress socket path too long: %s", socket_path);
    strcpy(target.sun_path, socket_path);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 128) ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
        int rc = mb_err_sys(err, errno, "cannot listen on a loopback port for the egress proxy");
        if (lfd >= 0) close(lfd);
        return rc;
    }
    /* Lives as long as the process: nothing frees it. */
    fwd *f = mb_calloc(1, sizeof *f);
    f->lfd = lfd;
    f->target = target;
    pthread_mutex_init(&f->lock, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, fwd_main, f) != 0) {
        close(lfd);
        pthread_mutex_destroy(&f->lock);
        free(f);
        return mb_err_set(err, MB_EIO, "cannot start the egress forwarder thread");
    }
    pthread_detach(t);
    *port = ntohs(sa.sin_port);
    return MB_OK;
}
