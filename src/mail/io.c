/*
 * io.c - blocking socket helpers of the mail layer: buffered line reads with
 * a deadline, whole writes, connects, and the byte relay between a client
 * and Dovecot once a session needs no more inspection.
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define RELAY_IDLE_MS (30 * 60 * 1000)

static int fill(mb_mail_rd *r)
{
    if (r->off == r->len) r->off = r->len = 0;
    if (r->len == sizeof r->buf) {
        memmove(r->buf, r->buf + r->off, r->len - r->off);
        r->len -= r->off;
        r->off = 0;
        if (r->len == sizeof r->buf) return -1;
    }
    struct pollfd p = {r->fd, POLLIN, 0};
    int pr;
    do pr = poll(&p, 1, r->timeout_ms > 0 ? r->timeout_ms : -1);
    while (pr < 0 && errno == EINTR);
    if (pr <= 0) return -1;
    ssize_t k;
    do k = read(r->fd, r->buf + r->len, sizeof r->buf - r->len);
    while (k < 0 && errno == EINTR);
    if (k < 0) return -1;
    if (k == 0) return 0;
    r->len += (size_t)k;
    return 1;
}

long mb_mail__read_line(mb_mail_rd *r, char *out, size_t cap)
{
    size_t n = 0;
    int too_long = 0;
    for (;;) {
        while (r->off < r->len) {
            char c = r->buf[r->off++];
            if (n + 1 < cap) out[n++] = c;
            else too_long = 1;
            if (c == '\n') {
                out[n] = 0;
                return too_long ? -2 : (long)n;
            }
        }
        int f = fill(r);
        if (f < 0) return -1;
        if (f == 0) {
            out[n] = 0;
            return n ? (too_long ? -2 : (long)n) : 0;
        }
    }
}

int mb_mail__read_n(mb_mail_rd *r, mb_buf *b, size_t n)
{
    while (n) {
        if (r->off == r->len && fill(r) <= 0) return -1;
        size_t k = r->len - r->off < n ? r->len - r->off : n;
        mb_buf_append(b, r->buf + r->off, k);
        r->off += k;
        n -= k;
    }
    return 0;
}

int mb_mail__write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {fd, POLLOUT, 0};
            if (poll(&pf, 1, 60000) <= 0) return -1;
            continue;
        }
        if (k <= 0) return -1;
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

int mb_mail__writes(int fd, const char *s) { return mb_mail__write_all(fd, s, strlen(s)); }

void mb_mail__relay(mb_mail_rd *ra, mb_mail_rd *rb)
{
    int a = ra->fd, b = rb->fd;
    if (ra->off < ra->len && mb_mail__write_all(b, ra->buf + ra->off, ra->len - ra->off)) return;
    if (rb->off < rb->len && mb_mail__write_all(a, rb->buf + rb->off, rb->len - rb->off)) return;
    ra->off = ra->len = rb->off = rb->len = 0;
    char buf[16384];
    struct pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    for (;;) {
        int pr = poll(p, 2, RELAY_IDLE_MS);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) return;
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t k = read(p[i].fd, buf, sizeof buf);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) return;
            if (mb_mail__write_all(p[1 - i].fd, buf, (size_t)k)) return;
        }
    }
}

int mb_mail__connect_tcp(const char *host, int port, mb_err *err)
{
    return mb_mail__connect_tcp_from(host, port, NULL, err);
}

int mb_mail__connect_tcp_from(const char *host, int port, const char *source, mb_err *err)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return mb_err_set(err, MB_EINVAL, "not an IPv4 address: %s", host);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return mb_err_sys(err, errno, "socket");
    struct sockaddr_in src = {.sin_family = AF_INET};
    if (source && inet_pton(AF_INET, source, &src.sin_addr) == 1 &&
        bind(fd, (struct sockaddr *)&src, sizeof src) != 0)
        mb_debug("mail: cannot bind to %s: %s", source, strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        return mb_err_sys(err, e, "cannot connect to %s:%d", host, port);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int mb_mail__connect_unix(const char *path, mb_err *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return mb_err_set(err, MB_EINVAL, "socket path too long: %s", path);
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return mb_err_sys(err, errno, "socket");
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        return mb_err_sys(err, e, "cannot connect to %s", path);
    }
    return fd;
}
