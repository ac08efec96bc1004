/*
 * forward.c - the sandbox side: 127.0.0.1:PORT inside the sandbox's own
 * network namespace relayed to a socket of MB_MAIL_DIR_INSIDE, so that
 * programs inside (the agent's scripts) reach IMAP on 1143 and SMTP on 1587
 * as they would on the host. The daemon's end applies the domain rules.
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct fwd {
    int lfd;
    char *path;
} fwd;

typedef struct fwd_conn {
    const fwd *f;
    int fd;
} fwd_conn;

static void *conn_main(void *arg)
{
    fwd_conn *c = arg;
    int up = mb_mail__connect_unix(c->f->path, NULL);
    if (up >= 0) {
        mb_mail_rd *a = mb_calloc(1, sizeof *a), *b = mb_calloc(1, sizeof *b);
        a->fd = c->fd;
        b->fd = up;
        mb_mail__relay(a, b);
        free(a);
        free(b);
        close(up);
    }
    close(c->fd);
    free(c);
    return NULL;
}

static void *accept_main(void *arg)
{
    fwd *f = arg;
    for (;;) {
        int fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) usleep(10000);
            if (errno == EBADF || errno == EINVAL) return NULL;
            continue;
        }
        fwd_conn *c = mb_calloc(1, sizeof *c);
        c->f = f;
        c->fd = fd;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 256 * 1024);
        pthread_t t;
        if (pthread_create(&t, &at, conn_main, c) != 0) {
            close(fd);
            free(c);
        }
        pthread_attr_destroy(&at);
    }
}

int mb_mail_forward_start(const char *socket_path, int port, mb_err *err)
{
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int one = 1;
    if (lfd >= 0) setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 64)) {
        int rc = mb_err_sys(err, errno, "cannot listen on 127.0.0.1:%d", port);
        if (lfd >= 0) close(lfd);
        return rc;
    }
    /* Lives as long as the process. */
    fwd *f = mb_calloc(1, sizeof *f);
    f->lfd = lfd;
    f->path = mb_strdup(socket_path);
    pthread_t t;
    if (pthread_create(&t, NULL, accept_main, f) != 0) {
        close(lfd);
        free(f->path);
        free(f);
        return mb_err_set(err, MB_EIO, "cannot start the mail forwarder thread");
    }
    pthread_detach(t);
    return MB_OK;
}
