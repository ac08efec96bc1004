/*
 * net.c - the mail layer's listeners (the host's SMTP port, each sandbox's
 * imap.sock and smtp.sock) on one accept thread, a thread per connection,
 * and the record of live connections by domain so that a release cuts them.
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_CONNS 4096

typedef struct lsn {
    uint64_t key;
    int fd;
    int kind;
    char domain[MB_MAIL_DOMAIN_MAX + 1];
    char *path; /* unix socket file, removed at close */
    struct lsn *next;
} lsn;

typedef struct conn {
    int fd, up;
    char domain[MB_MAIL_DOMAIN_MAX + 1];
    struct conn *next;
} conn;

struct mb_mail_net {
    mb_mail *m;
    int ep, wake;
    pthread_t thr;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    lsn *lsns;
    conn *conns;
    size_t n_conns;
    uint64_t next_key;
    int stopping;
};

typedef struct job {
    mb_mail_net *n;
    conn *c;
    int kind;
} job;

static void *conn_main(void *arg)
{
    job *j = arg;
    mb_mail_net *n = j->n;
    conn *c = j->c;
    if (j->kind == MB_MAIL_L_IMAP) mb_mail__imap_proxy(n->m, c->fd, c->domain, j->kind);
    else mb_mail__smtp_serve(n->m, c->fd, c->domain, j->kind);
    pthread_mutex_lock(&n->lock);
    for (conn **pp = &n->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    n->n_conns--;
    int fd = c->fd;
    if (!n->n_conns) pthread_cond_broadcast(&n->idle);
    pthread_mutex_unlock(&n->lock);
    close(fd);
    free(c);
    free(j);
    return NULL;
}

static void accept_one(mb_mail_net *n, uint64_t key)
{
    pthread_mutex_lock(&n->lock);
    lsn *l = n->lsns;
    while (l && l->key != key) l = l->next;
    int fd = l ? accept4(l->fd, NULL, NULL, SOCK_CLOEXEC) : -1;
    if (fd < 0 || n->n_conns >= MAX_CONNS || n->stopping) {
        pthread_mutex_unlock(&n->lock);
        if (fd >= 0) close(fd);
        return;
    }
    conn *c = mb_calloc(1, sizeof *c);
    c->fd = fd;
    c->up = -1;
    snprintf(c->domain, sizeof c->domain, "%s", l->domain);
    c->next = n->conns;
    n->conns = c;
    n->n_conns++;
    job *j = mb_calloc(1, sizeof *j);
    j->n = n;
    j->c = c;
    j->kind = l->kind;
    pthread_mutex_unlock(&n->lock);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, 512 * 1024);
    pthread_t t;
    if (pthread_create(&t, &at, conn_main, j) != 0) {
        pthread_mutex_lock(&n->lock);
        for (conn **pp = &n->conns; *pp; pp = &(*pp)->next)
            if (*pp == c) {
                *pp = c->next;
                break;
            }
        n->n_conns--;
        pthread_mutex_unlock(&n->lock);
        close(fd);
        free(c);
        free(j);
    }
    pthread_attr_destroy(&at);
}

static void *accept_main(void *arg)
{
    mb_mail_net *n = arg;
    struct epoll_event ev[16];
    for (;;) {
        int k = epoll_wait(n->ep, ev, 16, -1);
        if (k < 0) {
            if (errno == EINTR) continue;
            return NULL;
        }
        for (int i = 0; i < k; i++) {
            if (ev[i].data.u64 == 0) return NULL; /* the wake eventfd: stop */
            accept_one(n, ev[i].data.u64);
        }
    }
}

int mb_mail__net_new(mb_mail *m, mb_mail_net **out, mb_err *err)
{
    mb_mail_net *n = mb_calloc(1, sizeof *n);
    n->m = m;
    n->next_key = 1;
    pthread_mutex_init(&n->lock, NULL);
    pthread_cond_init(&n->idle, NULL);
    n->ep = epoll_create1(EPOLL_CLOEXEC);
    n->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
    if (n->ep < 0 || n->wake < 0 || epoll_ctl(n->ep, EPOLL_CTL_ADD, n->wake, &ev) != 0 ||
        pthread_create(&n->thr, NULL, accept_main, n) != 0) {
        int e = errno;
        if (n->ep >= 0) close(n->ep);
        if (n->wake >= 0) close(n->wake);
        pthread_mutex_destroy(&n->lock);
        pthread_cond_destroy(&n->idle);
        free(n);
        return mb_err_sys(err, e, "cannot start the mail listener thread");
    }
    *out = n;
    return MB_OK;
}

static int add_lsn(mb_mail_net *n, int fd, const char *path, const char *domain, int kind,
                   mb_err *err)
{
    lsn *l = mb_calloc(1, sizeof *l);
    l->fd = fd;
    l->kind = kind;
    l->path = path ? mb_strdup(path) : NULL;
    snprintf(l->domain, sizeof l->domain, "%s", domain);
    pthread_mutex_lock(&n->lock);
    l->key = n->next_key++;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = l->key};
    if (epoll_ctl(n->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int e = errno;
        pthread_mutex_unlock(&n->lock);
        close(fd);
        free(l->path);
        free(l);
        return mb_err_sys(err, e, "epoll_ctl");
    }
    l->next = n->lsns;
    n->lsns = l;
    pthread_mutex_unlock(&n->lock);
    return MB_OK;
}

int mb_mail__net_listen_unix(mb_mail_net *n, const char *path, const char *domain, int kind,
                             mb_err *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return mb_err_set(err, MB_EINVAL, "socket path too long: %s", path);
    strcpy(sa.sun_path, path);
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return mb_err_sys(err, errno, "socket");
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || chmod(path, 0666) != 0 ||
        listen(fd, 128) != 0) {
        int e = errno;
        close(fd);
        unlink(path);
        return mb_err_sys(err, e, "cannot listen on %s", path);
    }
    return add_lsn(n, fd, path, domain, kind, err);
}

int mb_mail__net_listen_tcp(mb_mail_net *n, const char *host, int port, int kind, mb_err *err)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return mb_err_set(err, MB_EINVAL, "not an IPv4 address: %s", host);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return mb_err_sys(err, errno, "socket");
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        close(fd);
        return mb_err_sys(err, e, "cannot listen on %s:%d", host, port);
    }
    return add_lsn(n, fd, NULL, "", kind, err);
}

void mb_mail__net_track(mb_mail_net *n, int client_fd, int upstream_fd)
{
    pthread_mutex_lock(&n->lock);
    for (conn *c = n->conns; c; c = c->next)
        if (c->fd == client_fd) c->up = upstream_fd;
    pthread_mutex_unlock(&n->lock);
}

/* Listeners of `domain` (NULL = all) closed; connections cut. Locked. */
static void close_locked(mb_mail_net *n, const char *domain)
{
    mb_assert_held(&n->lock);
    for (lsn **pp = &n->lsns; *pp;) {
        lsn *l = *pp;
        if (domain && strcmp(l->domain, domain) != 0) {
            pp = &l->next;
            continue;
        }
        *pp = l->next;
        epoll_ctl(n->ep, EPOLL_CTL_DEL, l->fd, NULL);
        close(l->fd);
        if (l->path) unlink(l->path);
        free(l->path);
        free(l);
    }
    for (conn *c = n->conns; c; c = c->next) {
        if (domain && strcmp(c->domain, domain) != 0) continue;
        shutdown(c->fd, SHUT_RDWR);
        if (c->up >= 0) shutdown(c->up, SHUT_RDWR);
    }
}

void mb_mail__net_close_domain(mb_mail_net *n, const char *domain)
{
    pthread_mutex_lock(&n->lock);
    close_locked(n, domain);
    pthread_mutex_unlock(&n->lock);
}

void mb_mail__net_free(mb_mail_net *n)
{
    if (!n) return;
    uint64_t one = 1;
    if (write(n->wake, &one, sizeof one) < 0) mb_warn("mail: cannot wake the listener thread");
    pthread_join(n->thr, NULL);
    pthread_mutex_lock(&n->lock);
    n->stopping = 1;
    close_locked(n, NULL);
    while (n->n_conns) pthread_cond_wait(&n->idle, &n->lock);
    pthread_mutex_unlock(&n->lock);
    close(n->ep);
    close(n->wake);
    pthread_mutex_destroy(&n->lock);
    pthread_cond_destroy(&n->idle);
    free(n);
}
