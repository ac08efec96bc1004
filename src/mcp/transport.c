/*
 * transport.c - newline-delimited JSON-RPC over a pair of descriptors (the
 * MCP stdio transport): reading and splitting lines, the size cap, parse
 * errors, batches, and writing framed messages.
 *
 * Input is read into srv->inbuf and split at '\n' (a trailing '\r' is
 * dropped). While a tool call runs, mb_mcp__pump_input() reads what is
 * pending without blocking: cancellations and pings are acted on at once and
 * every other complete line moves to srv->deferred, which the main loop
 * drains, in order, before reading more.
 *
 * Invariants: srv->deferred holds whole lines, each ending in '\n'; inbuf
 * never holds a '\n' when a call is pumping (pump moves complete lines out).
 */
#include "mcp/mcp_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK 65536

/* ---------------------------------------------------------------- output */

static void write_all(mb_mcp_server *srv, const char *p, size_t n)
{
    while (n && !srv->out_broken) {
        ssize_t w = write(srv->out_fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                struct pollfd pfd = {.fd = srv->out_fd, .events = POLLOUT};
                poll(&pfd, 1, -1);
                continue;
            }
            srv->out_broken = 1;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

void mb_mcp__send(mb_mcp_server *srv, json_t *msg)
{
    if (!msg) return;
    /* JSON.stringify's compact form: numbers as the runtimes print them, and
     * long strings copied in stretches rather than a character at a time. */
    char *s = mb_js_stringify(msg, 0);
    json_decref(msg);
    if (!s) s = mb_strdup("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
                          "\"message\":\"Internal error: response could not be encoded\"}}");
    size_t n = strlen(s);
    pthread_mutex_lock(&srv->out_lock);
    if (srv->out_buf) {
        mb_buf_append(srv->out_buf, s, n);
        mb_buf_putc(srv->out_buf, '\n');
    } else if (srv->out_fd >= 0) {
        s = mb_realloc(s, n + 2); /* one write per message, newline included */
        s[n] = '\n';
        s[n + 1] = '\0';
        write_all(srv, s, n + 1);
    }
    pthread_mutex_unlock(&srv->out_lock);
    free(s);
}

/* ----------------------------------------------------------------- input */

static int all_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
    return 1;
}

/* A well-formed tools/call request: the only message a worker takes. */
static int is_call_request(json_t *msg)
{
    json_t *id = json_object_get(msg, "id");
    return json_is_object(msg) && (json_is_string(id) || json_is_integer(id)) &&
           !strcmp(json_string_value(json_object_get(msg, "method")) ?: "", "tools/call");
}

void mb_mcp__process_line(mb_mcp_server *srv, const char *line, size_t len)
{
    if (len && line[len - 1] == '\r') len--;
    if (all_space(line, len)) return;
    if (len > srv->max_message) {
        char *m = mb_asprintf("Message of %zu bytes exceeds the limit of %zu bytes", len,
                              srv->max_message);
        mb_mcp__send(srv, mb_mcp__error(NULL, MB_RPC_INVALID_REQUEST, m));
        free(m);
        return;
    }
    json_error_t jerr;
    json_t *msg = json_loadb(line, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!msg) {
        char *m = mb_asprintf("Parse error: %s", jerr.text);
        mb_mcp__send(srv, mb_mcp__error(NULL, MB_RPC_PARSE_ERROR, m));
        free(m);
        return;
    }
    if (json_is_array(msg)) {
        if (!json_array_size(msg)) {
            mb_mcp__send(srv, mb_mcp__error(NULL, MB_RPC_INVALID_REQUEST, "Invalid Request"));
        } else {
            json_t *replies = json_array();
            size_t i;
            json_t *m;
            json_array_foreach(msg, i, m) {
                json_t *r = mb_mcp__dispatch(srv, m);
                if (r) json_array_append_new(replies, r);
            }
            if (json_array_size(replies)) mb_mcp__send(srv, replies);
            else json_decref(replies);
        }
    } else if (mb_mcp__workers_enabled(srv) && is_call_request(msg)) {
        mb_mcp__workers_submit(srv, msg);
    } else {
        mb_mcp__send(srv, mb_mcp__dispatch(srv, msg));
    }
    json_decref(msg);
}

void mb_mcp_handle_line(mb_mcp_server *srv, const char *line, size_t len, mb_buf *out)
{
    mb_buf *saved = srv->out_buf;
    srv->out_buf = out;
    mb_mcp__process_line(srv, line, len);
    srv->out_buf = saved;
}

/* Looks at one line that arrived during a call. Returns 1 if it was handled
 * here (a cancellation or a ping), 0 if it must wait for the main loop. */
static int peek_line(mb_mcp_server *srv, const char *line, size_t len)
{
    json_t *msg = json_loadb(line, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!json_is_object(msg)) {
        json_decref(msg);
        return 0;
    }
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *id = json_object_get(msg, "id");
    int handled = 0;
    if (method && !id && !strcmp(method, "notifications/cancelled")) {
        json_t *rid = json_object_get(json_object_get(msg, "params"), "requestId");
        if (srv->current && rid && json_equal(rid, srv->current->id)) srv->current->cancelled = 1;
        handled = 1;
    } else if (method && id && !strcmp(method, "ping")) {
        mb_mcp__send(srv, mb_mcp__dispatch(srv, msg));
        handled = 1;
    }
    json_decref(msg);
    return handled;
}

void mb_mcp__pump_input(mb_mcp_server *srv)
{
    if (srv->in_fd < 0 || srv->eof) return;
    char chunk[READ_CHUNK];
    for (;;) {
        if (srv->inbuf.len > srv->max_message) break; /* the main loop reports it */
        struct pollfd pfd = {.fd = srv->in_fd, .events = POLLIN};
        int pr = poll(&pfd, 1, 0);
        if (pr <= 0) break;
        ssize_t n = read(srv->in_fd, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) {
            srv->eof = 1;
            break;
        }
        mb_buf_append(&srv->inbuf, chunk, (size_t)n);
    }
    /* Move complete lines out of inbuf; a line being discarded stays. */
    if (srv->discarding) return;
    size_t start = 0;
    char *nl;
    while (srv->inbuf.len > start &&
           (nl = memchr(srv->inbuf.data + start, '\n', srv->inbuf.len - start))) {
        size_t len = (size_t)(nl - (srv->inbuf.data + start));
        const char *line = srv->inbuf.data + start;
        size_t l2 = len && line[len - 1] == '\r' ? len - 1 : len;
        if (!peek_line(srv, line, l2)) mb_buf_append(&srv->deferred, line, len + 1);
        start += len + 1;
    }
    mb_buf_consume(&srv->inbuf, start);
}

/* ----------------------------------------------------------------- serve */

int mb_mcp_serve(mb_mcp_server *srv, int in_fd, int out_fd, mb_err *err)
{
    srv->in_fd = in_fd;
    srv->out_fd = out_fd;
    srv->eof = 0;
    char chunk[READ_CHUNK];
    size_t scanned = 0; /* bytes of inbuf known to hold no '\n' */
    while (!srv->out_broken) {
        if (srv->deferred.len) {
            char *nl = memchr(srv->deferred.data, '\n', srv->deferred.len);
            size_t len = (size_t)(nl - srv->deferred.data);
            char *line = mb_memdup0(srv->deferred.data, len);
            mb_buf_consume(&srv->deferred, len + 1);
            mb_mcp__process_line(srv, line, len);
            free(line);
            scanned = 0;
            continue;
        }
        char *nl = srv->inbuf.len > scanned
                       ? memchr(srv->inbuf.data + scanned, '\n', srv->inbuf.len - scanned)
                       : NULL;
        if (nl) {
            size_t len = (size_t)(nl - srv->inbuf.data);
            if (srv->discarding) {
                srv->discarding = 0;
                mb_buf_consume(&srv->inbuf, len + 1);
            } else {
                char *line = mb_memdup0(srv->inbuf.data, len);
                mb_buf_consume(&srv->inbuf, len + 1);
                mb_mcp__process_line(srv, line, len);
                free(line);
            }
            scanned = 0;
            continue;
        }
        scanned = srv->inbuf.len;
        if (srv->inbuf.len > srv->max_message) {
            if (!srv->discarding) {
                char *m = mb_asprintf("Message exceeds the limit of %zu bytes", srv->max_message);
                mb_mcp__send(srv, mb_mcp__error(NULL, MB_RPC_INVALID_REQUEST, m));
                free(m);
                srv->discarding = 1;
            }
            mb_buf_reset(&srv->inbuf);
            scanned = 0;
        }
        if (srv->eof) {
            if (srv->inbuf.len && !srv->discarding) {
                char *line = mb_memdup0(srv->inbuf.data, srv->inbuf.len);
                size_t len = srv->inbuf.len;
                mb_buf_reset(&srv->inbuf);
                mb_mcp__process_line(srv, line, len);
                free(line);
                continue;
            }
            break;
        }
        ssize_t n = read(in_fd, chunk, sizeof chunk);
        if (n < 0) {
            if (errno == EAGAIN) {
                struct pollfd pfd = {.fd = in_fd, .events = POLLIN};
                poll(&pfd, 1, -1);
            }
            if (errno == EINTR || errno == EAGAIN) continue;
            srv->eof = 1;
            continue;
        }
        if (n == 0) {
            srv->eof = 1;
            continue;
        }
        mb_buf_append(&srv->inbuf, chunk, (size_t)n);
    }
    mb_mcp__workers_finish(srv);
    srv->in_fd = srv->out_fd = -1;
    if (srv->out_broken) return mb_err_set(err, MB_EIO, "the client closed its end of the stream");
    return 0;
}
