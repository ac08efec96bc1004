/*
 * relay.c - moving bytes between two connected sockets, shared by the daemon's
 * proxy (client <-> origin) and the in-sandbox forwarder (TCP <-> unix socket).
 */
#include "egress/egress_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "util/util.h"

int mb_egress__write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Relays until both directions ended or nothing moved for idle_ms. */
void mb_egress__relay(int a, int b, int idle_ms, unsigned long long *up, unsigned long long *down)
{
    char *buf = mb_malloc(65536);
    int open_a = 1, open_b = 1;
    while (open_a || open_b) {
        struct pollfd p[2] = {{.fd = open_a ? a : -1, .events = POLLIN},
                              {.fd = open_b ? b : -1, .events = POLLIN}};
        int r = poll(p, 2, idle_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        for (int i = 0; i < 2; i++) {
            if (!p[i].revents) continue;
            int from = i ? b : a, to = i ? a : b;
            ssize_t n = recv(from, buf, 65536, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                if (i) open_b = 0;
                else open_a = 0;
                shutdown(to, SHUT_WR);
                if (n < 0) open_a = open_b = 0;
                continue;
            }
            if (mb_egress__write_all(to, buf, (size_t)n)) {
                open_a = open_b = 0;
                break;
            }
            *(i ? down : up) += (unsigned long long)n;
        }
    }
    free(buf);
}

