/*
 * acquire_probe.c - P1's client in C: acquire a sandbox and probe every one
 * of its servers, so that the figure is mcpbox's and not the client's.
 *
 *   acquire_probe --url BASE --key KEY --body JSON [--n N] [--warmup W]
 *                 [--wait NAME]... [--timeout S] [--keep 1]
 *
 * Each of the W + N iterations: POST BASE/local-sandbox with --body (timed:
 * "POST alone"), then, for every server of the answer (or only those named
 * by --wait), concurrently, one whole MCP session as a client checking its
 * servers opens one: initialize, notifications/initialized, tools/list,
 * each sent once the answer before it came, every answer checked (HTTP 200,
 * a session id, a non-empty tools list); a server answering 503 (still
 * starting) is asked again 2 ms later until --timeout. "ready" is the time
 * from the POST until the last tools/list answered. Then, untimed, the
 * sessions are closed (DELETE) and the sandbox released; with --keep 1 both
 * are left (to measure the acquire's own CPU: the caller releases the
 * sandboxes afterwards).
 *
 * One thread, one epoll set, one keep-alive HTTP/1.1 connection per server
 * slot (and one for the API) kept over the iterations, requests written and
 * answers parsed here (Content-Length or chunked bodies): a libcurl handle
 * per slot on a thread of its own cost about as much CPU as the daemon's
 * side of the same requests, on the same two cores. The first W iterations
 * are the warm-up. Output, one JSON object on stdout:
 *   {"n":N,"errors":N,"first_error":"..","cpu_s":..,
 *    "post_ms":[...],"ready_ms":[...]}
 * cpu_s is this process's CPU time over the run (the client's own cost).
 * Exit 0 without errors, 1 with, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SERVERS 32
#define MAX_BODY (64u << 20)

/* One keep-alive connection and the request in flight on it. */
typedef struct conn {
    int fd;
    char hostport[300]; /* host:port it is connected to */
    char *out;          /* the request, written from out_off */
    size_t out_len, out_off;
    char *in; /* what was read of the answer */
    size_t in_len, in_cap;
    int busy; /* a request is in flight */
    /* the answer, once complete */
    int status;
    char sid[256];
    char *body; /* NUL-terminated, owned */
    size_t body_len;
    int close_after; /* the server said Connection: close */
} conn;

enum { ST_INIT, ST_NOTIFIED, ST_LISTED, ST_DONE, ST_DELETE };

typedef struct slot {
    conn c;
    char url[1024], path[1024];
    char name[128];
    int state, ok;
    double retry_at; /* a 503: ask again at this time (0: not waiting) */
    char err[512];
    char sid[256];
} slot;

static struct {
    const char *base, *key, *body;
    int n, warmup, keep;
    double timeout;
    const char *wait[MAX_SERVERS];
    int nwait;
    slot slots[MAX_SERVERS];
    int nslots;
    int ep;
} G;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) abort();
    return p;
}

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* "http://host:port/path?q" -> hostport, path; 0 or -1 */
static int split_url(const char *url, char *hostport, size_t hl, char *path, size_t pl)
{
    if (strncmp(url, "http://", 7)) return -1;
    const char *h = url + 7, *slash = strchr(h, '/');
    size_t n = slash ? (size_t)(slash - h) : strlen(h);
    if (!n || n >= hl) return -1;
    memcpy(hostport, h, n);
    hostport[n] = '\0';
    if (snprintf(path, pl, "%s", slash ? slash : "/") >= (int)pl) return -1;
    return 0;
}

static void conn_close(conn *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->in_len = 0;
    c->busy = 0;
}

static int conn_open(conn *c, const char *hostport, char *err, size_t errlen)
{
    if (c->fd >= 0 && !strcmp(c->hostport, hostport)) return 0;
    conn_close(c);
    char host[300], *colon;
    snprintf(host, sizeof host, "%s", hostport);
    const char *port = "80";
    if (host[0] == '[') { /* [v6]:port */
        char *end = strchr(host, ']');
        if (!end) return fail(err, errlen, "bad host %s", hostport), -1;
        *end = '\0';
        if (end[1] == ':') port = end + 2;
        memmove(host, host + 1, strlen(host + 1) + 1);
    } else if ((colon = strrchr(host, ':'))) {
        *colon = '\0';
        port = colon + 1;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    int e = getaddrinfo(host, port, &hints, &ai);
    if (e) return fail(err, errlen, "%s: %s", hostport, gai_strerror(e)), -1;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
        fail(err, errlen, "connect %s: %s", hostport, strerror(errno));
        if (fd >= 0) close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    snprintf(c->hostport, sizeof c->hostport, "%s", hostport);
    return 0;
}

static void append(conn *c, const char *s, size_t n)
{
    c->out = xrealloc(c->out, c->out_len + n + 1);
    memcpy(c->out + c->out_len, s, n);
    c->out_len += n;
}

static void appendf(conn *c, const char *fmt, ...)
{
    char line[1400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line) abort();
    append(c, line, (size_t)n);
}

/* Starts a request on c (connecting first if need be) and writes as much
 * of it as the socket takes; the rest goes out when epoll says so. */
static int conn_send(conn *c, const char *method, const char *url, const char *body,
                     const char *sid, char *err, size_t errlen)
{
    char hostport[300], path[1024];
    if (split_url(url, hostport, sizeof hostport, path, sizeof path))
        return fail(err, errlen, "bad URL %.200s", url), -1;
    if (conn_open(c, hostport, err, errlen)) return -1;
    size_t blen = body ? strlen(body) : 0;
    c->out_len = c->out_off = 0;
    appendf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, hostport);
    appendf(c, "Accept: application/json, text/event-stream\r\n");
    if (G.key) appendf(c, "Authorization: Bearer %s\r\n", G.key);
    if (sid && *sid)
        appendf(c, "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\n", sid);
    if (body) appendf(c, "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
    append(c, "\r\n", 2);
    if (body) append(c, body, blen);
    c->in_len = 0;
    c->status = 0;
    c->sid[0] = '\0';
    free(c->body);
    c->body = NULL;
    c->body_len = 0;
    c->close_after = 0;
    c->busy = 1;
    while (c->out_off < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            c->out_off += (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        fail(err, errlen, "%s %s: send: %s", method, url, strerror(errno));
        conn_close(c);
        return -1;
    }
    return 0;
}

/* Header value of `name` in the header block [h, end), or NULL; *vl its
 * length. */
static const char *header(const char *h, const char *end, const char *name, size_t *vl)
{
    size_t nl = strlen(name);
    for (const char *p = h; p < end;) {
        const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
        if (!eol) eol = end;
        if ((size_t)(eol - p) > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
            const char *v = p + nl + 1;
            while (v < eol && (*v == ' ' || *v == '\t')) v++;
            const char *ve = eol;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
            *vl = (size_t)(ve - v);
            return v;
        }
        p = eol + 2;
    }
    return NULL;
}

/* Decodes a chunked body from [p, end) into c->body; 1 when the last chunk
 * was seen, 0 if more is needed, -1 if malformed. */
static int dechunk(conn *c, const char *p, const char *end)
{
    c->body_len = 0;
    for (;;) {
        const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
        if (!eol) return 0;
        char *stop;
        unsigned long n = strtoul(p, &stop, 16);
        if (stop == p || n > MAX_BODY) return -1;
        p = eol + 2;
        if (n == 0) return memmem(p, (size_t)(end - p), "\r\n", 2) ? 1 : 0; /* no trailers */
        if ((size_t)(end - p) < n + 2) return 0;
        c->body = xrealloc(c->body, c->body_len + n + 1);
        memcpy(c->body + c->body_len, p, n);
        c->body_len += n;
        c->body[c->body_len] = '\0';
        p += n + 2;
    }
}

/* 1 when c holds a whole answer (parsed into status/sid/body), 0 if more is
 * needed, -1 if it is malformed. */
static int parse(conn *c)
{
    const char *in = c->in, *end = c->in + c->in_len;
    const char *he = memmem(in, c->in_len, "\r\n\r\n", 4);
    if (!he) return c->in_len > 65536 ? -1 : 0;
    if (c->in_len < 12 || strncmp(in, "HTTP/1.", 7)) return -1;
    c->status = atoi(in + 9);
    const char *hdrs = memchr(in, '\n', (size_t)(he - in)), *hend = he + 2;
    hdrs = hdrs ? hdrs + 1 : hend;
    size_t vl;
    const char *v = header(hdrs, hend, "mcp-session-id", &vl);
    if (v) {
        if (vl >= sizeof c->sid) vl = sizeof c->sid - 1;
        memcpy(c->sid, v, vl);
        c->sid[vl] = '\0';
    }
    v = header(hdrs, hend, "connection", &vl);
    c->close_after = v && vl == 5 && !strncasecmp(v, "close", 5);
    const char *b = he + 4;
    v = header(hdrs, hend, "transfer-encoding", &vl);
    if (v && vl == 7 && !strncasecmp(v, "chunked", 7)) return dechunk(c, b, end);
    v = header(hdrs, hend, "content-length", &vl);
    size_t len = v ? strtoul(v, NULL, 10) : 0;
    if (len > MAX_BODY) return -1;
    if (!v && c->status != 204 && c->status != 304 && c->status >= 200) {
        c->close_after = 1; /* the body ends with the connection */
        return 0;
    }
    if ((size_t)(end - b) < len) return 0;
    c->body = xrealloc(c->body, len + 1);
    memcpy(c->body, b, len);
    c->body[len] = '\0';
    c->body_len = len;
    return 1;
}

/* Reads what c has; 1 when its answer is complete, 0 if not yet, -1 on
 * error (message in err). */
static int conn_read(conn *c, char *err, size_t errlen)
{
    for (;;) {
        if (c->in_cap - c->in_len < 65536) {
            c->in_cap = c->in_cap ? c->in_cap * 2 : 131072;
            c->in = xrealloc(c->in, c->in_cap);
        }
        ssize_t r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len - 1, MSG_DONTWAIT);
        if (r > 0) {
            c->in_len += (size_t)r;
            c->in[c->in_len] = '\0';
            int p = parse(c);
            if (p) {
                if (p < 0) fail(err, errlen, "malformed HTTP answer: %.200s", c->in);
                return p;
            }
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (r == 0 && c->close_after && c->status) { /* body up to the close */
            const char *he = memmem(c->in, c->in_len, "\r\n\r\n", 4);
            size_t off = (size_t)(he + 4 - c->in);
            c->body = xrealloc(c->body, c->in_len - off + 1);
            memcpy(c->body, c->in + off, c->in_len - off);
            c->body_len = c->in_len - off;
            c->body[c->body_len] = '\0';
            return 1;
        }
        fail(err, errlen, "connection to %s %s", c->hostport,
             r == 0 ? "closed before the answer" : strerror(errno));
        return -1;
    }
}

/* Done with an answer: the connection is kept unless the server closes it. */
static void conn_done(conn *c)
{
    c->busy = 0;
    c->in_len = 0;
    if (c->close_after) conn_close(c);
}

static void watch(conn *c, void *who)
{
    struct epoll_event ev = {.events = EPOLLIN | (c->out_off < c->out_len ? EPOLLOUT : 0),
                             .data.ptr = who};
    if (epoll_ctl(G.ep, EPOLL_CTL_MOD, c->fd, &ev) && errno == ENOENT)
        epoll_ctl(G.ep, EPOLL_CTL_ADD, c->fd, &ev);
}

static void unwatch(conn *c)
{
    if (c->fd >= 0) epoll_ctl(G.ep, EPOLL_CTL_DEL, c->fd, NULL);
}

/* Writes the rest of c's request; -1 on error. */
static int conn_flush(conn *c, char *err, size_t errlen)
{
    while (c->out_off < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) c->out_off += (size_t)w;
        else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        else return fail(err, errlen, "send to %s: %s", c->hostport, strerror(errno)), -1;
    }
    return 0;
}

static const char INIT[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":"
    "{\"name\":\"acquire_probe\",\"version\":\"1\"}}}";
static const char NOTE[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
static const char LIST[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}";

static void slot_fail(slot *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[360];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(s->err, sizeof s->err, "%.120s: %s", s->name, msg);
    s->state = ST_DONE;
    s->ok = 0;
    unwatch(&s->c);
    conn_close(&s->c);
}

static void slot_send(slot *s, const char *method, const char *body, const char *sid)
{
    char err[400];
    if (conn_send(&s->c, method, s->url, body, sid, err, sizeof err)) {
        slot_fail(s, "%s", err);
        return;
    }
    watch(&s->c, s);
}

static const char *stage_body(int state)
{
    return state == ST_INIT ? INIT : state == ST_NOTIFIED ? NOTE : LIST;
}

/* The answer on s's connection is complete: check it, go on. */
static void slot_answer(slot *s)
{
    conn *c = &s->c;
    int st = c->status;
    if (s->state == ST_DELETE) {
        conn_done(c);
        s->state = ST_DONE;
        return;
    }
    if (st == 503 && s->state != ST_NOTIFIED) { /* still starting: again shortly */
        conn_done(c);
        s->retry_at = now_ms() + 2;
        return;
    }
    if (s->state == ST_INIT) {
        if (st != 200 || !strstr(c->body, "\"serverInfo\""))
            return slot_fail(s, "HTTP %d: %.300s", st, c->body);
        if (!c->sid[0]) return slot_fail(s, "initialize gave no Mcp-Session-Id");
        snprintf(s->sid, sizeof s->sid, "%s", c->sid);
        conn_done(c);
        s->state = ST_NOTIFIED;
        slot_send(s, "POST", NOTE, s->sid);
    } else if (s->state == ST_NOTIFIED) {
        if (st != 202 && st != 200) return slot_fail(s, "initialized: HTTP %d", st);
        conn_done(c);
        s->state = ST_LISTED;
        slot_send(s, "POST", LIST, s->sid);
    } else if (s->state == ST_LISTED) {
        if (st != 200 || !strstr(c->body, "\"inputSchema\""))
            return slot_fail(s, "HTTP %d: %.300s", st, c->body);
        conn_done(c);
        s->state = ST_DONE;
        s->ok = 1;
    }
}

/* Runs the event loop until every active slot is ST_DONE or the deadline
 * passes (those left fail). */
static void run_slots(double deadline)
{
    for (;;) {
        int left = 0;
        double t = now_ms(), next = deadline;
        for (int i = 0; i < G.nslots; i++) {
            slot *s = &G.slots[i];
            if (s->state == ST_DONE) continue;
            if (s->retry_at && s->retry_at <= t) {
                s->retry_at = 0;
                slot_send(s, "POST", stage_body(s->state), s->state == ST_INIT ? NULL : s->sid);
                if (s->state == ST_DONE) continue;
            }
            left++;
            if (s->retry_at && s->retry_at < next) next = s->retry_at;
        }
        if (!left) return;
        if (t >= deadline) {
            for (int i = 0; i < G.nslots; i++)
                if (G.slots[i].state != ST_DONE) slot_fail(&G.slots[i], "no answer in time");
            return;
        }
        struct epoll_event evs[MAX_SERVERS];
        int ms = (int)(next - t) + 1;
        int n = epoll_wait(G.ep, evs, MAX_SERVERS, ms);
        for (int i = 0; i < n; i++) {
            slot *s = evs[i].data.ptr;
            char err[400];
            if (!s->c.busy) { /* an idle keep-alive connection: closed by the server */
                char b[64];
                if (recv(s->c.fd, b, sizeof b, MSG_DONTWAIT) != -1 || errno != EAGAIN) {
                    unwatch(&s->c);
                    conn_close(&s->c);
                }
                continue;
            }
            if ((evs[i].events & EPOLLOUT) && conn_flush(&s->c, err, sizeof err)) {
                slot_fail(s, "%s", err);
                continue;
            }
            if (s->c.out_off == s->c.out_len && (evs[i].events & EPOLLOUT)) watch(&s->c, s);
            if (!(evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
            int r = conn_read(&s->c, err, sizeof err);
            if (r < 0) slot_fail(s, "%s", err);
            else if (r > 0) slot_answer(s);
        }
    }
}

/* One request on the API connection, waited for; 0 or -1 (err). */
static int api_call(conn *c, const char *method, const char *url, const char *body, char *err,
                    size_t errlen)
{
    if (conn_send(c, method, url, body, NULL, err, errlen)) return -1;
    double deadline = now_ms() + G.timeout * 1000;
    for (;;) {
        if (conn_flush(c, err, errlen)) return conn_close(c), -1;
        int r = conn_read(c, err, errlen);
        if (r < 0) return conn_close(c), -1;
        if (r > 0) {
            conn_done(c);
            return 0;
        }
        struct pollfd pf = {.fd = c->fd, .events = POLLIN | (c->out_off < c->out_len ? POLLOUT : 0)};
        int left = (int)(deadline - now_ms());
        int n = left > 0 ? poll(&pf, 1, left) : 0;
        if (n == 0 && now_ms() >= deadline) {
            conn_close(c);
            return fail(err, errlen, "%s %s: no answer in %.0f s", method, url, G.timeout), -1;
        }
    }
}

static void print_list(const char *key, double *v, int n)
{
    printf("\"%s\":[", key);
    for (int i = 0; i < n; i++) printf("%s%.3f", i ? "," : "", v[i]);
    printf("]");
}

static int waited(const char *name)
{
    if (!G.nwait) return 1;
    for (int i = 0; i < G.nwait; i++)
        if (!strcmp(G.wait[i], name)) return 1;
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: acquire_probe --url BASE --key KEY --body JSON [--n N] [--warmup W]\n"
                    "                     [--wait NAME]... [--timeout S] [--keep 1]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    G.n = 20;
    G.warmup = 2;
    G.timeout = 60;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage();
        if (!strcmp(a, "--url")) G.base = v;
        else if (!strcmp(a, "--key")) G.key = v;
        else if (!strcmp(a, "--body")) G.body = v;
        else if (!strcmp(a, "--n")) G.n = atoi(v);
        else if (!strcmp(a, "--warmup")) G.warmup = atoi(v);
        else if (!strcmp(a, "--timeout")) G.timeout = atof(v);
        else if (!strcmp(a, "--keep")) G.keep = atoi(v);
        else if (!strcmp(a, "--wait") && G.nwait < MAX_SERVERS) G.wait[G.nwait++] = v;
        else usage();
        i++;
    }
    if (!G.base || !G.body || G.n < 1 || G.warmup < 0) usage();
    signal(SIGPIPE, SIG_IGN);
    G.ep = epoll_create1(EPOLL_CLOEXEC);
    if (G.ep < 0) return perror("epoll_create1"), 1;
    for (int i = 0; i < MAX_SERVERS; i++) G.slots[i].c.fd = -1;
    conn api = {.fd = -1};
    char url[1024], err[512] = "", first[600] = "";
    snprintf(url, sizeof url, "%s/local-sandbox", G.base);
    double *post = calloc((size_t)G.n, sizeof *post), *ready = calloc((size_t)G.n, sizeof *ready);
    int kept = 0, errors = 0;
    for (int it = 0; it < G.warmup + G.n; it++) {
        double t0 = now_ms();
        if (api_call(&api, "POST", url, G.body, err, sizeof err)) {
            errors++;
            if (!*first) snprintf(first, sizeof first, "POST: %s", err);
            continue;
        }
        double t_post = now_ms() - t0;
        json_t *j = api.status == 201 || api.status == 200 ? json_loads(api.body, 0, NULL) : NULL;
        json_t *servers = json_object_get(j, "servers");
        const char *sbid = json_string_value(json_object_get(j, "local_sandbox_id"));
        if (!json_is_array(servers) || !sbid) {
            errors++;
            if (!*first)
                snprintf(first, sizeof first, "POST: HTTP %d: %.300s", api.status,
                         api.body ? api.body : "");
            json_decref(j);
            continue;
        }
        char sandbox[128];
        snprintf(sandbox, sizeof sandbox, "%s", sbid);
        G.nslots = 0;
        size_t k;
        json_t *s;
        json_array_foreach(servers, k, s) {
            const char *name = json_string_value(json_object_get(s, "server_name"));
            const char *su = json_string_value(json_object_get(s, "mcp_server_url"));
            if (!name || !su || !waited(name) || G.nslots >= MAX_SERVERS) continue;
            slot *sl = &G.slots[G.nslots++];
            snprintf(sl->url, sizeof sl->url, "%s", su);
            snprintf(sl->name, sizeof sl->name, "%s", name);
            sl->state = ST_INIT;
            sl->ok = 0;
            sl->retry_at = 0;
            sl->sid[0] = sl->err[0] = '\0';
        }
        json_decref(j);
        for (int i = 0; i < G.nslots; i++) slot_send(&G.slots[i], "POST", INIT, NULL);
        run_slots(t0 + G.timeout * 1000);
        double t_ready = now_ms() - t0;
        int bad = 0;
        for (int i = 0; i < G.nslots; i++)
            if (!G.slots[i].ok) {
                bad = 1;
                if (!*first) snprintf(first, sizeof first, "%s", G.slots[i].err);
            }
        if (G.nwait && G.nslots != G.nwait) {
            bad = 1;
            if (!*first) snprintf(first, sizeof first, "the answer lists %d of the %d servers waited on",
                                  G.nslots, G.nwait);
        }
        /* untimed: close the sessions, release the sandbox */
        if (!G.keep) {
            for (int i = 0; i < G.nslots; i++) {
                slot *sl = &G.slots[i];
                if (!sl->sid[0]) continue;
                sl->state = ST_DELETE;
                slot_send(sl, "DELETE", NULL, sl->sid);
            }
            run_slots(now_ms() + G.timeout * 1000);
            char del[1200];
            snprintf(del, sizeof del, "%s/local-sandbox/%s", G.base, sandbox);
            api_call(&api, "DELETE", del, NULL, err, sizeof err);
        }
        if (bad) {
            errors++;
            continue;
        }
        if (it >= G.warmup) {
            post[kept] = t_post;
            ready[kept] = t_ready;
            kept++;
        }
    }
    for (int i = 0; i < MAX_SERVERS; i++) {
        conn_close(&G.slots[i].c);
        free(G.slots[i].c.out);
        free(G.slots[i].c.in);
        free(G.slots[i].c.body);
    }
    conn_close(&api);
    free(api.out);
    free(api.in);
    free(api.body);
    close(G.ep);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    json_t *fe = json_string(first);
    char *fes = json_dumps(fe, JSON_ENCODE_ANY);
    printf("{\"n\":%d,\"errors\":%d,\"first_error\":%s,\"cpu_s\":%.4f,", kept, errors, fes,
           ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    print_list("post_ms", post, kept);
    printf(",");
    print_list("ready_ms", ready, kept);
    printf("}\n");
    free(fes);
    json_decref(fe);
    free(post);
    free(ready);
    return errors ? 1 : 0;
}
