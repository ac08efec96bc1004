/*
 * proxy.c - the daemon's egress proxy (see egress.h): one unix listening socket
 * per (sandbox, server) with egress, one accept thread for all of them (epoll),
 * and one thread per proxied connection, which reads the request head, applies
 * the policy (policy.c), connects and relays bytes both ways until either side
 * is done. Every attempt is one line in the sandbox's egress log.
 */
#define _GNU_SOURCE
#include "egress/egress.h"
#include "egress/egress_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX 16384
#define MAX_CONNS 1024
#define HEAD_TIMEOUT_MS 30000

typedef struct fixture {
    char *name;
    struct sockaddr_storage addr;
    socklen_t len;
} fixture;

typedef struct listener {
    char sandbox[64];
    char *server;
    char *dir;
    char *path;
    char **allow; /* guarded by eg->lock */
    int fd;
    int log_fd;
    int refs; /* guarded by eg->lock: the table's, plus one per connection */
    int closed;
    struct listener *next;
} listener;
/* A closed listener leaves the table for eg->grave; only the accept thread
 * drops the table's reference, between two epoll_waits, so that an event it
 * is handling never points to freed memory. */

typedef struct conn {
    struct mb_egress *eg;
    listener *l;
    int cfd, ufd;
    struct conn *next;
} conn;

struct mb_egress {
    pthread_mutex_t lock;
    pthread_cond_t idle; /* signalled when nthreads drops */
    listener *listeners;
    listener *grave;
    conn *conns;
    int nthreads;
    int epfd, wake;
    pthread_t acceptor;
    int stopping;
    int offline;
    int connect_timeout_ms, idle_timeout_ms;
    fixture *fixtures;
    size_t nfixtures;
};

/* ----------------------------------------------------------- bookkeeping */

/* With eg->lock held. */
static void listener_unref(listener *l)
{
    if (--l->refs > 0) return;
    if (l->log_fd >= 0) close(l->log_fd);
    mb_strv_free(l->allow);
    free(l->server);
    free(l->dir);
    free(l->path);
    free(l);
}

static int parse_fixture(const char *spec, fixture *f, mb_err *err)
{
    const char *eq = strchr(spec, '=');
    char host[256];
    int port;
    if (!eq || eq == spec || (size_t)(eq - spec) > 253 ||
        mb_egress_split_authority(eq + 1, strlen(eq + 1), 0, host, sizeof host, &port))
        return mb_err_set(err, MB_EINVAL, "egress fixture '%s' must be NAME=IP:PORT", spec);
    memset(f, 0, sizeof *f);
    struct sockaddr_in *s4 = (struct sockaddr_in *)&f->addr;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&f->addr;
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        f->len = sizeof *s4;
    } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        f->len = sizeof *s6;
    } else {
        return mb_err_set(err, MB_EINVAL, "egress fixture '%s': the address must be an IP", spec);
    }
    f->name = mb_strndup(spec, (size_t)(eq - spec));
    for (char *c = f->name; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    return 0;
}

/* ---------------------------------------------------------------- I/O */

static void log_line(listener *l, const char *method, const char *host, int port,
                     const char *verdict, const char *detail, unsigned long long up,
                     unsigned long long down)
{
    if (l->log_fd < 0) return;
    char ts[40];
    mb_iso8601(mb_now(), ts);
    char line[1024];
    int n = snprintf(line, sizeof line, "%s %s %s %s:%d %s up=%llu down=%llu%s%s\n", ts,
                     l->server, method, host, port, verdict, up, down, detail ? " " : "",
                     detail ? detail : "");
    if (n > (int)sizeof line - 1) {
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    if (write(l->log_fd, line, (size_t)n) < 0) { /* the log is best effort */ }
}

static void reply(int fd, int status, const char *reason, const char *msg)
{
    char buf[2048];
    int body = (int)strlen(msg) + 1;
    int n = snprintf(buf, sizeof buf,
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     "Content-Length: %d\r\nConnection: close\r\nX-Mcpbox-Egress: %s\r\n\r\n%s\n",
                     status, reason, body, status == 403 ? "denied" : "failed", msg);
    if (n > 0) (void)mb_egress__write_all(fd, buf, (size_t)(n < (int)sizeof buf ? n : (int)sizeof buf - 1));
}

/* Non-blocking connect with a deadline; the socket is blocking again after. */
static int connect_to(const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, sa, len) != 0) {
        if (errno != EINPROGRESS) goto fail;
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, timeout_ms) != 1) {
            errno = ETIMEDOUT;
            goto fail;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr) {
            errno = soerr ? soerr : errno;
            goto fail;
        }
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* ---------------------------------------------------------- one request */

/* Reads until the end of the head; returns its length (through the blank
 * line), 0 at EOF or timeout, -1 when it is too long. */
static ssize_t read_head(int fd, char *buf, size_t cap, size_t *got)
{
    *got = 0;
    while (*got < cap) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, HEAD_TIMEOUT_MS) != 1) return 0;
        ssize_t n = recv(fd, buf + *got, cap - *got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        *got += (size_t)n;
        char *e = memmem(buf, *got, "\r\n\r\n", 4);
        if (e) return e + 4 - buf;
    }
    return -1;
}

static const fixture *find_fixture(mb_egress *eg, const char *host)
{
    for (size_t i = 0; i < eg->nfixtures; i++)
        if (!strcmp(eg->fixtures[i].name, host)) return &eg->fixtures[i];
    return NULL;
}

/* Connects to host:port under the policy; -1 with *why (static text) and
 * *status set otherwise. */
static int open_upstream(mb_egress *eg, listener *l, const char *host, int port,
                         const char **why, int *status, char *detail, size_t dcap)
{
    pthread_mutex_lock(&eg->lock);
    int ok = mb_egress_allowed((const char *const *)l->allow, host);
    pthread_mutex_unlock(&eg->lock);
    const fixture *fx = find_fixture(eg, host);
    *status = 403;
    if (!ok) {
        *why = "not in the allow-list";
        snprintf(detail, dcap, "mcpbox egress: '%s' is not in the egress allow-list of the server "
                 "'%s' in this sandbox, so it cannot be reached", host, l->server);
        return -1;
    }
    if (fx) {
        int fd = connect_to((const struct sockaddr *)&fx->addr, fx->len, eg->connect_timeout_ms);
        if (fd < 0) {
            *status = 502;
            *why = "fixture unreachable";
            snprintf(detail, dcap, "mcpbox egress: the fixture site '%s' does not answer (%s)",
                     host, strerror(errno));
        }
        return fd;
    }
    if (eg->offline) {
        *why = "offline";
        snprintf(detail, dcap, "mcpbox egress: this mcpbox runs offline (--egress off), so '%s' "
                 "cannot be reached", host);
        return -1;
    }
    char portstr[8];
    snprintf(portstr, sizeof portstr, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai) {
        *status = 502;
        *why = "name not resolved";
        snprintf(detail, dcap, "mcpbox egress: cannot resolve '%s': %s", host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, saw_public = 0, last_errno = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        if (!mb_egress_addr_public(a->ai_addr)) continue;
        saw_public = 1;
        fd = connect_to(a->ai_addr, a->ai_addrlen, eg->connect_timeout_ms);
        if (fd < 0) last_errno = errno;
    }
    freeaddrinfo(res);
    if (fd >= 0) return fd;
    if (!saw_public) {
        *why = "not a public address";
        snprintf(detail, dcap, "mcpbox egress: '%s' resolves only to loopback, private or other "
                 "non-public addresses, which sandboxes may not reach", host);
    } else {
        *status = 502;
        *why = "connect failed";
        snprintf(detail, dcap, "mcpbox egress: cannot connect to '%s' port %d: %s", host, port,
                 strerror(last_errno));
    }
    return -1;
}

/* Is this header (at line start, `n` bytes up to the colon) one to drop? */
static int hop_by_hop(const char *name, size_t n)
{
    static const char *const drop[] = {"proxy-connection", "proxy-authorization", "connection",
                                       "keep-alive", NULL};
    for (size_t i = 0; drop[i]; i++)
        if (strlen(drop[i]) == n && !strncasecmp(name, drop[i], n)) return 1;
    return 0;
}

static void serve(conn *c)
{
    mb_egress *eg = c->eg;
    listener *l = c->l;
    char *buf = mb_malloc(HEAD_MAX);
    size_t got;
    ssize_t hl = read_head(c->cfd, buf, HEAD_MAX, &got);
    char method[16] = "-", host[256] = "-";
    int port = 0;
    if (hl < 0) {
        reply(c->cfd, 431, "Request Header Fields Too Large", "mcpbox egress: request head over 16 KiB");
        goto out;
    }
    if (hl == 0) goto out;
    char *eol = memmem(buf, (size_t)hl, "\r\n", 2);
    char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
    char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
    if (!sp1 || !sp2 || sp1 - buf >= (ssize_t)sizeof method || strncmp(sp2 + 1, "HTTP/1.", 7)) {
        reply(c->cfd, 400, "Bad Request", "mcpbox egress: not an HTTP/1.x proxy request");
        log_line(l, "-", "-", 0, "refused", "malformed request", 0, 0);
        goto out;
    }
    memcpy(method, buf, (size_t)(sp1 - buf));
    method[sp1 - buf] = '\0';
    for (char *m = method; *m; m++)
        if (*m < 'A' || *m > 'Z') {
            reply(c->cfd, 400, "Bad Request", "mcpbox egress: bad method");
            snprintf(method, sizeof method, "-");
            log_line(l, "-", "-", 0, "refused", "malformed request", 0, 0);
            goto out;
        }
    const char *target = sp1 + 1;
    size_t tn = (size_t)(sp2 - target);
    int is_connect = !strcmp(method, "CONNECT");
    const char *path = NULL;
    size_t pathn = 0;
    int bad;
    if (is_connect) {
        bad = mb_egress_split_authority(target, tn, 0, host, sizeof host, &port);
    } else if (tn > 7 && !strncasecmp(target, "http://", 7)) {
        const char *auth = target + 7;
        size_t an = strcspn(auth, "/?# ");
        if (auth + an > sp2) an = (size_t)(sp2 - auth);
        bad = memchr(auth, '@', an) != NULL ||
              mb_egress_split_authority(auth, an, 80, host, sizeof host, &port);
        path = auth + an;
        pathn = (size_t)(sp2 - path);
    } else {
        bad = 1;
    }
    if (bad) {
        reply(c->cfd, 400, "Bad Request",
              "mcpbox egress: give CONNECT host:port or an absolute http:// URL");
        log_line(l, method, "-", 0, "refused", "bad target", 0, 0);
        goto out;
    }
    const char *why = NULL;
    int status = 0;
    char detail[600];
    c->ufd = -1;
    int ufd = open_upstream(eg, l, host, port, &why, &status, detail, sizeof detail);
    if (ufd < 0) {
        reply(c->cfd, status, status == 403 ? "Forbidden" : "Bad Gateway", detail);
        log_line(l, method, host, port, status == 403 ? "denied" : "failed", why, 0, 0);
        goto out;
    }
    pthread_mutex_lock(&eg->lock);
    c->ufd = ufd;
    int cut = l->closed;
    pthread_mutex_unlock(&eg->lock);
    if (cut) goto out;
    unsigned long long up = 0, down = 0;
    const char *rest = buf + hl;
    size_t restn = got - (size_t)hl;
    if (is_connect) {
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        if (mb_egress__write_all(c->cfd, ok, sizeof ok - 1)) goto out;
    } else {
        /* origin-form request line, hop-by-hop headers dropped, one request
         * per connection (the relay ends when the origin closes). */
        mb_buf h = {0};
        mb_buf_printf(&h, "%s ", method);
        if (pathn == 0 || path[0] != '/') mb_buf_putc(&h, '/');
        mb_buf_append(&h, path, pathn);
        mb_buf_puts(&h, " HTTP/1.1\r\n");
        int has_host = 0;
        for (char *line = eol + 2; line < buf + hl - 2;) {
            char *le = memmem(line, (size_t)(buf + hl - line), "\r\n", 2);
            char *colon = memchr(line, ':', (size_t)(le - line));
            size_t nn = colon ? (size_t)(colon - line) : 0;
            if (nn == 4 && !strncasecmp(line, "host", 4)) has_host = 1;
            if (!colon || !hop_by_hop(line, nn)) {
                mb_buf_append(&h, line, (size_t)(le - line));
                mb_buf_puts(&h, "\r\n");
            }
            line = le + 2;
        }
        if (!has_host) mb_buf_printf(&h, port == 80 ? "Host: %s\r\n" : "Host: %s:%d\r\n", host, port);
        mb_buf_puts(&h, "Connection: close\r\n\r\n");
        int w = mb_egress__write_all(ufd, h.data, h.len);
        up += h.len;
        mb_buf_free(&h);
        if (w) goto out;
    }
    if (restn && mb_egress__write_all(ufd, rest, restn) == 0) up += restn;
    free(buf);
    buf = NULL;
    mb_egress__relay(c->cfd, ufd, eg->idle_timeout_ms, &up, &down);
    log_line(l, method, host, port, "allowed", NULL, up, down);
out:
    free(buf);
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    mb_egress *eg = c->eg;
    serve(c);
    pthread_mutex_lock(&eg->lock);
    for (conn **pp = &eg->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    close(c->cfd);
    if (c->ufd >= 0) close(c->ufd);
    listener_unref(c->l);
    eg->nthreads--;
    pthread_cond_broadcast(&eg->idle);
    pthread_mutex_unlock(&eg->lock);
    free(c);
    return NULL;
}

/* ------------------------------------------------------------ accepting */

static void accept_on(mb_egress *eg, listener *l)
{
    for (;;) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) return; /* EAGAIN (non-blocking listener) or an error */
        pthread_mutex_lock(&eg->lock);
        if (l->closed || eg->stopping || eg->nthreads >= MAX_CONNS) {
            pthread_mutex_unlock(&eg->lock);
            close(fd);
            continue;
        }
        conn *c = mb_calloc(1, sizeof *c);
        *c = (conn){.eg = eg, .l = l, .cfd = fd, .ufd = -1, .next = eg->conns};
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 256 * 1024);
        pthread_t t;
        if (pthread_create(&t, &at, conn_main, c) != 0) {
            close(fd);
            free(c);
        } else {
            eg->conns = c;
            l->refs++;
            eg->nthreads++;
        }
        pthread_attr_destroy(&at);
        pthread_mutex_unlock(&eg->lock);
    }
}

/* With eg->lock held: drops the table's reference of closed listeners. */
static void reap(mb_egress *eg)
{
    while (eg->grave) {
        listener *l = eg->grave;
        eg->grave = l->next;
        listener_unref(l);
    }
}

static void wake(mb_egress *eg)
{
    uint64_t one = 1;
    if (write(eg->wake, &one, sizeof one) < 0) { /* the counter is full: a wake is pending */ }
}

static void *accept_main(void *arg)
{
    mb_egress *eg = arg;
    struct epoll_event ev[16];
    for (;;) {
        pthread_mutex_lock(&eg->lock);
        reap(eg);
        int stop = eg->stopping;
        pthread_mutex_unlock(&eg->lock);
        if (stop) return NULL;
        int n = epoll_wait(eg->epfd, ev, 16, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return NULL;
        for (int i = 0; i < n; i++) {
            if (!ev[i].data.ptr) { /* the wake eventfd: reap, maybe stop */
                uint64_t v;
                if (read(eg->wake, &v, sizeof v) < 0) { /* already drained */ }
                continue;
            }
            listener *l = ev[i].data.ptr; /* alive: only this thread reaps */
            pthread_mutex_lock(&eg->lock);
            int usable = !l->closed;
            pthread_mutex_unlock(&eg->lock);
            if (usable) accept_on(eg, l);
        }
    }
}

int mb_egress_new(const mb_egress_opts *opts, mb_egress **out, mb_err *err)
{
    mb_egress *eg = mb_calloc(1, sizeof *eg);
    pthread_mutex_init(&eg->lock, NULL);
    pthread_cond_init(&eg->idle, NULL);
    eg->offline = opts && opts->offline;
    eg->connect_timeout_ms = opts && opts->connect_timeout_ms ? opts->connect_timeout_ms : 10000;
    eg->idle_timeout_ms = opts && opts->idle_timeout_ms ? opts->idle_timeout_ms : 300000;
    size_t n = 0;
    while (opts && opts->fixtures && opts->fixtures[n]) n++;
    eg->fixtures = mb_calloc(n + 1, sizeof *eg->fixtures);
    for (size_t i = 0; i < n; i++) {
        int rc = parse_fixture(opts->fixtures[i], &eg->fixtures[i], err);
        if (rc) {
            eg->nfixtures = i;
            eg->epfd = eg->wake = -1;
            mb_egress_free(eg);
            return rc;
        }
    }
    eg->nfixtures = n;
    eg->epfd = epoll_create1(EPOLL_CLOEXEC);
    eg->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (eg->epfd < 0 || eg->wake < 0 || epoll_ctl(eg->epfd, EPOLL_CTL_ADD, eg->wake, &ev) ||
        pthread_create(&eg->acceptor, NULL, accept_main, eg)) {
        int e = errno;
        if (eg->epfd >= 0) close(eg->epfd);
        if (eg->wake >= 0) close(eg->wake);
        eg->epfd = eg->wake = -1;
        mb_egress_free(eg);
        return mb_err_sys(err, e, "cannot start the egress proxy");
    }
    *out = eg;
    return MB_OK;
}

/* With eg->lock held: stop accepting on l and cut its connections. */
static void close_listener(mb_egress *eg, listener *l)
{
    epoll_ctl(eg->epfd, EPOLL_CTL_DEL, l->fd, NULL);
    close(l->fd);
    unlink(l->path);
    l->closed = 1;
    for (conn *c = eg->conns; c; c = c->next)
        if (c->l == l) {
            shutdown(c->cfd, SHUT_RDWR);
            if (c->ufd >= 0) shutdown(c->ufd, SHUT_RDWR);
        }
}

int mb_egress_open(mb_egress *eg, const char *sandbox_id, const char *server, const char *dir,
                   const char *const *allow, const char *log_path, mb_err *err)
{
    if (!*server || strchr(server, '/') || server[0] == '.')
        return mb_err_set(err, MB_EINVAL, "'%s' is not a server name", server);
    pthread_mutex_lock(&eg->lock);
    for (listener *l = eg->listeners; l; l = l->next)
        if (!strcmp(l->sandbox, sandbox_id) && !strcmp(l->server, server)) {
            char **next = mb_strv_dup(allow ? allow : (const char *const[]){NULL});
            size_t i = 0;
            while (l->allow[i] && next[i] && !strcmp(l->allow[i], next[i])) i++;
            if (l->allow[i] || next[i]) /* changed: what the old list let through goes */
                for (conn *c = eg->conns; c; c = c->next)
                    if (c->l == l) {
                        shutdown(c->cfd, SHUT_RDWR);
                        if (c->ufd >= 0) shutdown(c->ufd, SHUT_RDWR);
                    }
            mb_strv_free(l->allow);
            l->allow = next;
            pthread_mutex_unlock(&eg->lock);
            return MB_OK;
        }
    pthread_mutex_unlock(&eg->lock);

    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return mb_err_sys(err, errno, "cannot create the egress directory %s", dir);
    chmod(dir, 0755);
    /* Bound through /proc/self/fd/N/ so that a long data dir never runs into
     * the 108-byte limit of unix socket paths. */
    char *path = mb_asprintf("%s/%s.sock", dir, server);
    int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = -1, rc = MB_OK;
    if (dfd < 0) {
        rc = mb_err_sys(err, errno, "cannot open %s", dir);
    } else if ((size_t)snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s.sock", dfd,
                                server) >= sizeof sa.sun_path) {
        rc = mb_err_set(err, MB_EINVAL, "the server name '%s' is too long for a socket", server);
    } else {
        unlink(path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) || chmod(path, 0666) ||
            listen(fd, 128)) {
            rc = mb_err_sys(err, errno, "cannot listen on %s", path);
            if (fd >= 0) close(fd);
            unlink(path);
        }
    }
    if (dfd >= 0) close(dfd);
    if (rc) {
        free(path);
        return rc;
    }
    listener *l = mb_calloc(1, sizeof *l);
    snprintf(l->sandbox, sizeof l->sandbox, "%s", sandbox_id);
    l->server = mb_strdup(server);
    l->dir = mb_strdup(dir);
    l->path = path;
    l->allow = mb_strv_dup(allow ? allow : (const char *const[]){NULL});
    l->fd = fd;
    l->refs = 1;
    l->log_fd = log_path ? open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600)
                         : -1;
    pthread_mutex_lock(&eg->lock);
    l->next = eg->listeners;
    eg->listeners = l;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
    if (epoll_ctl(eg->epfd, EPOLL_CTL_ADD, fd, &ev)) {
        rc = mb_err_sys(err, errno, "cannot watch %s", path);
        eg->listeners = l->next;
        close_listener(eg, l);
        listener_unref(l); /* never registered: nothing can point to it */
    }
    pthread_mutex_unlock(&eg->lock);
    return rc;
}

void mb_egress_close_sandbox(mb_egress *eg, const char *sandbox_id)
{
    if (!eg) return;
    char *dir = NULL;
    pthread_mutex_lock(&eg->lock);
    for (listener **pp = &eg->listeners; *pp;) {
        listener *l = *pp;
        if (strcmp(l->sandbox, sandbox_id)) {
            pp = &l->next;
            continue;
        }
        *pp = l->next;
        close_listener(eg, l);
        if (!dir) dir = mb_strdup(l->dir);
        l->next = eg->grave;
        eg->grave = l;
    }
    pthread_mutex_unlock(&eg->lock);
    if (dir) {
        wake(eg);
        rmdir(dir);
    }
    free(dir);
}

void mb_egress_free(mb_egress *eg)
{
    if (!eg) return;
    if (eg->wake >= 0) {
        pthread_mutex_lock(&eg->lock);
        eg->stopping = 1;
        pthread_mutex_unlock(&eg->lock);
        wake(eg);
        pthread_join(eg->acceptor, NULL);
    }
    pthread_mutex_lock(&eg->lock);
    reap(eg);
    while (eg->listeners) {
        listener *l = eg->listeners;
        eg->listeners = l->next;
        /* The directory stays: it is bound into sandboxes, which outlive
         * the daemon; the next daemon listens in it again. */
        close_listener(eg, l);
        listener_unref(l);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    while (eg->nthreads > 0 && pthread_cond_timedwait(&eg->idle, &eg->lock, &until) == 0) {}
    int left = eg->nthreads;
    pthread_mutex_unlock(&eg->lock);
    if (left) return; /* threads still hold eg: leak it rather than free under them */
    if (eg->epfd >= 0) close(eg->epfd);
    if (eg->wake >= 0) close(eg->wake);
    for (size_t i = 0; i < eg->nfixtures; i++) free(eg->fixtures[i].name);
    free(eg->fixtures);
    pthread_mutex_destroy(&eg->lock);
    pthread_cond_destroy(&eg->idle);
    free(eg);
}
