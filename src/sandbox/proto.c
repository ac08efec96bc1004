/*
 * proto.c - the control protocol between the daemon and a sandbox's init:
 * one message per SOCK_SEQPACKET packet, a fixed header followed by
 * NUL-terminated strings, with up to three descriptors as SCM_RIGHTS.
 *
 * Both ends trust each other (the socket lives in the daemon's state dir,
 * invisible inside the sandbox), but a malformed packet is still refused
 * rather than read past its end.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int mb__msg_send(int fd, const mb__msg_hdr *h, const char *const *strs, const int *fds,
                 int nfds)
{
    mb_buf b = {0};
    mb__msg_hdr hdr = *h;
    mb_buf_append(&b, &hdr, sizeof hdr);
    for (uint32_t i = 0; i < h->nstr; i++) {
        const char *s = strs[i] ? strs[i] : "";
        mb_buf_append(&b, s, strlen(s) + 1);
    }
    if (b.len > MB__MSG_MAX) {
        mb_buf_free(&b);
        return -E2BIG;
    }
    struct iovec iov = {.iov_base = b.data, .iov_len = b.len};
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > 0) {
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    }
    ssize_t n;
    do n = sendmsg(fd, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    int e = errno;
    mb_buf_free(&b);
    if (n < 0) return e == ECONNRESET ? -EPIPE : -e;
    return 0;
}

int mb__msg_send_simple(int fd, uint32_t type, uint32_t flags, int64_t a, int64_t b)
{
    mb__msg_hdr h = {.type = type, .flags = flags, .a = a, .b = b};
    return mb__msg_send(fd, &h, NULL, NULL, 0);
}

int mb__msg_send_error(int fd, int errnum, const char *what)
{
    mb__msg_hdr h = {.type = MB__MSG_ERROR, .a = errnum, .nstr = 1};
    const char *strs[1] = {what};
    return mb__msg_send(fd, &h, strs, NULL, 0);
}

void mb__msg_free(mb__msg *m)
{
    if (!m) return;
    for (int i = 0; i < 3; i++) {
        if (i < m->nfds && m->fds[i] >= 0) close(m->fds[i]);
        m->fds[i] = -1;
    }
    m->nfds = 0;
    free(m->strs);
    m->strs = NULL;
    mb_buf_free(&m->buf);
}

static int wait_readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int64_t deadline = timeout_ms >= 0 ? mb_mono_ms() + timeout_ms : 0;
    for (;;) {
        int left = -1;
        if (timeout_ms >= 0) {
            int64_t d = deadline - mb_mono_ms();
            left = d > 0 ? (int)d : 0;
        }
        int r = poll(&p, 1, left);
        if (r > 0) return 0;
        if (r == 0) return -ETIMEDOUT;
        if (errno != EINTR) return -errno;
    }
}

int mb__msg_recv(int fd, mb__msg *m, int timeout_ms)
{
    memset(m, 0, sizeof *m);
    m->fds[0] = m->fds[1] = m->fds[2] = -1;
    int rc = wait_readable(fd, timeout_ms);
    if (rc) return rc;

    ssize_t len;
    do len = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    while (len < 0 && errno == EINTR);
    if (len < 0) return errno == ECONNRESET ? -EPIPE : (errno == EAGAIN ? -ETIMEDOUT : -errno);
    if (len == 0) {
        /* EOF, or an empty packet (never sent by us): drain it and report EOF. */
        char c;
        (void)recv(fd, &c, 1, MSG_DONTWAIT);
        return -EPIPE;
    }
    if ((size_t)len > MB__MSG_MAX || (size_t)len < sizeof(mb__msg_hdr)) {
        char c;
        (void)recv(fd, &c, 1, MSG_DONTWAIT); /* drop it */
        return -EPROTO;
    }
    mb_buf_reserve(&m->buf, (size_t)len + 1);
    struct iovec iov = {.iov_base = m->buf.data, .iov_len = (size_t)len};
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf};
    ssize_t n;
    do n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0) return errno == ECONNRESET ? -EPIPE : -errno;
    if (n == 0) return -EPIPE;
    m->buf.len = (size_t)n;
    m->buf.data[n] = '\0';

    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int *fds = (int *)(void *)CMSG_DATA(c);
        for (size_t i = 0; i < k; i++) {
            if (m->nfds < 3) m->fds[m->nfds++] = fds[i];
            else close(fds[i]);
        }
    }
    if ((mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || (size_t)n < sizeof(mb__msg_hdr)) {
        mb__msg_free(m);
        return -EPROTO;
    }
    memcpy(&m->h, m->buf.data, sizeof m->h);
    if (m->h.nstr > 4096) {
        mb__msg_free(m);
        return -EPROTO;
    }
    m->strs = mb_calloc(m->h.nstr + 1, sizeof(char *));
    char *p = m->buf.data + sizeof(mb__msg_hdr);
    char *end = m->buf.data + m->buf.len;
    for (uint32_t i = 0; i < m->h.nstr; i++) {
        char *z = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
        if (!z) {
            mb__msg_free(m);
            return -EPROTO;
        }
        m->strs[i] = p;
        p = z + 1;
    }
    return 0;
}
