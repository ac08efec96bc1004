/*
 * egress.c - online mode inside a sandbox: the way out is the daemon's egress
 * proxy, a unix socket speaking HTTP proxy protocol (CONNECT, or absolute
 * http:// targets) whose path the daemon puts in $MCPBOX_EGRESS_PROXY. curl
 * cannot use a unix socket as its proxy, so the server listens on a loopback
 * TCP port of the sandbox's own network namespace and relays each connection
 * there; curl is then given --proxy http://127.0.0.1:PORT. The daemon checks
 * every host against the server's allow-list.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "servers/arxiv/arxiv.h"

typedef struct relay {
    int client;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int *relays;
} relay;

/* Copies what one side has to the other; 0 at end of stream or error. */
static int pump(int from, int to)
{
    char buf[65536];
    ssize_t n = read(from, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 1;
    if (n <= 0) return 0;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        off += w;
    }
    return 1;
}

static void *relay_main(void *arg)
{
    relay *r = arg;
    int up = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, r->path, sizeof sa.sun_path);
    if (up >= 0 && connect(up, (struct sockaddr *)&sa, sizeof sa) == 0) {
        struct pollfd p[2] = {{.fd = r->client, .events = POLLIN}, {.fd = up, .events = POLLIN}};
        int open_in = 1, open_out = 1; /* client->proxy, proxy->client */
        while (open_in || open_out) {
            p[0].fd = open_in ? r->client : -1;
            p[1].fd = open_out ? up : -1;
            if (poll(p, 2, 300000) <= 0) break; /* idle for 5 minutes, or an error */
            if (p[0].revents && !pump(r->client, up)) open_in = 0, shutdown(up, SHUT_WR);
            if (p[1].revents && !pump(up, r->client)) open_out = 0, shutdown(r->client, SHUT_WR);
        }
    }
    if (up >= 0) close(up);
    close(r->client);
    __atomic_sub_fetch(r->relays, 1, __ATOMIC_SEQ_CST);
    free(r);
    return NULL;
}

static void *accept_main(void *arg)
{
    mb_arxiv_egress *e = arg;
    for (;;) {
        int c = accept4(e->listener, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return NULL; /* the listener was shut down */
        }
        relay *r = mb_calloc(1, sizeof *r);
        r->client = c;
        memcpy(r->path, e->path, sizeof r->path);
        r->relays = &e->relays;
        __atomic_add_fetch(&e->relays, 1, __ATOMIC_SEQ_CST);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, relay_main, r) != 0) {
            __atomic_sub_fetch(&e->relays, 1, __ATOMIC_SEQ_CST);
            close(c);
            free(r);
        }
        pthread_attr_destroy(&attr);
    }
}

int mb_arxiv_egress_start(mb_arxiv_egress *e, const char *socket_path, char **proxy_url,
                          mb_err *err)
{
    e->listener = -1;
    e->running = 0;
    if (strlen(socket_path) >= sizeof e->path)
        return mb_err_set(err, MB_EINVAL, "the egress socket path is too long");
    memcpy(e->path, socket_path, strlen(socket_path) + 1);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        int en = errno;
        if (fd >= 0) close(fd);
        return mb_err_sys(err, en, "cannot listen on the loopback for the egress relay");
    }
    e->listener = fd;
    if (pthread_create(&e->thread, NULL, accept_main, e) != 0) {
        close(fd);
        e->listener = -1;
        return mb_err_set(err, MB_EIO, "cannot start the egress relay thread");
    }
    e->running = 1;
    *proxy_url = mb_asprintf("http://127.0.0.1:%d", ntohs(sa.sin_port));
    return MB_OK;
}

void mb_arxiv_egress_stop(mb_arxiv_egress *e)
{
    if (!e->running) return;
    shutdown(e->listener, SHUT_RDWR); /* wakes accept() */
    pthread_join(e->thread, NULL);
    close(e->listener);
    e->listener = -1;
    e->running = 0;
    for (int i = 0; i < 200 && __atomic_load_n(&e->relays, __ATOMIC_SEQ_CST) > 0; i++)
        usleep(10000);
}
