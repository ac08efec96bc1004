/*
 * imapc.c - the IMAP client of the poste_email_toolathlon server: tagged
 * commands, untagged responses with their literals, and error texts worded
 * as Python's imaplib words them (emails-mcp passes those through).
 */
#define _GNU_SOURCE
#include "servers/poste_email/poste.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define IO_TIMEOUT_MS 60000
#define MAX_LITERAL (64u << 20)

struct pe_imap {
    int fd;
    unsigned tag;
    char buf[16384];
    size_t off, len;
};

void pe_result_free(pe_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].line);
        free(r->v[i].lit);
    }
    free(r->v);
    free(r->text);
    memset(r, 0, sizeof *r);
}

static int fill(pe_imap *c)
{
    if (c->off == c->len) c->off = c->len = 0;
    if (c->len == sizeof c->buf) {
        memmove(c->buf, c->buf + c->off, c->len - c->off);
        c->len -= c->off;
        c->off = 0;
        if (c->len == sizeof c->buf) return -1;
    }
    struct pollfd p = {c->fd, POLLIN, 0};
    if (poll(&p, 1, IO_TIMEOUT_MS) <= 0) return -1;
    ssize_t k = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (k <= 0) return -1;
    c->len += (size_t)k;
    return 0;
}

/* A line without its CRLF; NULL on failure. */
static char *read_line(pe_imap *c)
{
    mb_buf b = {0};
    for (;;) {
        while (c->off < c->len) {
            char ch = c->buf[c->off++];
            if (ch == '\n') {
                if (b.len && b.data[b.len - 1] == '\r') b.len--;
                mb_buf_putc(&b, 0);
                return mb_buf_steal(&b);
            }
            mb_buf_putc(&b, ch);
            if (b.len > (1u << 20)) {
                mb_buf_free(&b);
                return NULL;
            }
        }
        if (fill(c)) {
            mb_buf_free(&b);
            return NULL;
        }
    }
}

static int read_n(pe_imap *c, char *out, size_t n)
{
    while (n) {
        if (c->off == c->len && fill(c)) return -1;
        size_t k = c->len - c->off < n ? c->len - c->off : n;
        memcpy(out, c->buf + c->off, k);
        c->off += k;
        out += k;
        n -= k;
    }
    return 0;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

/* A literal marker {n} at the end of a line. */
static long literal_len(const char *line)
{
    size_t n = strlen(line);
    if (n < 3 || line[n - 1] != '}') return -1;
    const char *o = strrchr(line, '{');
    if (!o) return -1;
    char *e;
    long v = strtol(o + 1, &e, 10);
    if (e != line + n - 1 || v < 0 || (unsigned long)v > MAX_LITERAL) return -1;
    return v;
}

void pe_py_bytes_repr(mb_buf *out, const char *s, size_t n)
{
    int sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    mb_buf_putc(out, 'b');
    mb_buf_putc(out, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == (unsigned char)q || ch == '\\') mb_buf_printf(out, "\\%c", ch);
        else if (ch == '\t') mb_buf_puts(out, "\\t");
        else if (ch == '\n') mb_buf_puts(out, "\\n");
        else if (ch == '\r') mb_buf_puts(out, "\\r");
        else if (ch < 0x20 || ch >= 0x7f) mb_buf_printf(out, "\\x%02x", ch);
        else mb_buf_putc(out, (char)ch);
    }
    mb_buf_putc(out, q);
}

char *pe_imap_bad_text(const char *name, const pe_result *r)
{
    mb_buf b = {0};
    mb_buf_printf(&b, "%s command error: %s [", name, r->typ);
    pe_py_bytes_repr(&b, r->text ? r->text : "", r->text ? strlen(r->text) : 0);
    mb_buf_putc(&b, ']');
    return mb_buf_steal(&b);
}

int pe_imap_cmd(pe_imap *c, const char *name, const char *args, size_t args_len, pe_result *r,
                char **why)
{
    memset(r, 0, sizeof *r);
    char tag[16];
    snprintf(tag, sizeof tag, "A%04u", ++c->tag);
    mb_buf cmd = {0};
    mb_buf_printf(&cmd, "%s %s", tag, name);
    if (args && args_len) {
        mb_buf_putc(&cmd, ' ');
        mb_buf_append(&cmd, args, args_len);
    }
    mb_buf_puts(&cmd, "\r\n");
    int w = write_all(c->fd, cmd.data, cmd.len);
    mb_buf_free(&cmd);
    if (w) {
        *why = mb_strdup("socket error: EOF");
        return -1;
    }
    size_t tl = strlen(tag);
    for (;;) {
        char *line = read_line(c);
        if (!line) {
            *why = mb_strdup("socket error: EOF");
            pe_result_free(r);
            return -1;
        }
        if (!strncmp(line, tag, tl) && line[tl] == ' ') {
            const char *s = line + tl + 1, *sp = strchr(s, ' ');
            size_t k = sp ? (size_t)(sp - s) : strlen(s);
            snprintf(r->typ, sizeof r->typ, "%.*s", (int)(k < 7 ? k : 7), s);
            r->text = mb_strdup(sp ? sp + 1 : "");
            free(line);
            return 0;
        }
        if (line[0] == '+') { /* a continuation we did not ask for */
            free(line);
            continue;
        }
        r->v = mb_realloc(r->v, (r->n + 1) * sizeof *r->v);
        pe_resp *p = &r->v[r->n++];
        memset(p, 0, sizeof *p);
        p->line = line;
        long ll = literal_len(line);
        while (ll >= 0) {
            char *data = mb_malloc((size_t)ll + 1);
            if (read_n(c, data, (size_t)ll)) {
                free(data);
                *why = mb_strdup("socket error: EOF");
                pe_result_free(r);
                return -1;
            }
            data[ll] = 0;
            if (!p->lit) {
                p->lit = data;
                p->lit_len = (size_t)ll;
            } else {
                free(data);
            }
            char *rest = read_line(c); /* the rest of the response */
            if (!rest) {
                *why = mb_strdup("socket error: EOF");
                pe_result_free(r);
                return -1;
            }
            ll = literal_len(rest);
            free(rest);
        }
    }
}

static int connect_ep(const pe_endpoint *ep)
{
    int fd;
    if (ep->path) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(ep->path) >= sizeof sa.sun_path) return -1;
        strcpy(sa.sun_path, ep->path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            close(fd);
            return -1;
        }
        return fd;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)ep->port)};
    const char *h = !strcmp(ep->host, "localhost") ? "127.0.0.1" : ep->host;
    if (inet_pton(AF_INET, h, &sa.sin_addr) != 1) return -1;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int pe_endpoint_connect(const pe_endpoint *ep) { return connect_ep(ep); }

static void quote(mb_buf *b, const char *s)
{
    mb_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') mb_buf_putc(b, '\\');
        mb_buf_putc(b, *s);
    }
    mb_buf_putc(b, '"');
}

int pe_imap_open(const pe_endpoint *ep, const char *user, const char *pass, pe_imap **out,
                 char **why)
{
    int fd = connect_ep(ep);
    if (fd < 0) {
        *why = mb_asprintf("IMAP connection failed: [Errno %d] %s", errno ? errno : ECONNREFUSED,
                           strerror(errno ? errno : ECONNREFUSED));
        return -1;
    }
    pe_imap *c = mb_calloc(1, sizeof *c);
    c->fd = fd;
    char *greet = read_line(c);
    if (!greet || strncmp(greet, "* OK", 4) != 0) {
        free(greet);
        pe_imap_close(c);
        *why = mb_strdup("IMAP connection failed: socket error: EOF");
        return -1;
    }
    free(greet);
    mb_buf a = {0};
    /* imaplib sends the user as an atom when it can and quotes the password. */
    int atom = *user != 0;
    for (const char *s = user; *s; s++)
        if (strchr(" (){%*\"\\]", *s) || (unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
            atom = 0;
    if (atom) mb_buf_puts(&a, user);
    else quote(&a, user);
    mb_buf_putc(&a, ' ');
    quote(&a, pass);
    pe_result r;
    char *w = NULL;
    int rc = pe_imap_cmd(c, "LOGIN", a.data, a.len, &r, &w);
    mb_buf_free(&a);
    if (rc) {
        *why = mb_asprintf("IMAP connection failed: %s", w);
        free(w);
        pe_imap_close(c);
        return -1;
    }
    if (strcmp(r.typ, "OK") != 0) {
        mb_buf b = {0};
        pe_py_bytes_repr(&b, r.text, strlen(r.text));
        *why = mb_asprintf("IMAP login failed: %s", b.data);
        mb_buf_free(&b);
        pe_result_free(&r);
        pe_imap_close(c);
        return -1;
    }
    pe_result_free(&r);
    *out = c;
    return 0;
}

void pe_imap_close(pe_imap *c)
{
    if (!c) return;
    if (c->fd >= 0) {
        pe_result r;
        char *why = NULL;
        if (pe_imap_cmd(c, "LOGOUT", NULL, 0, &r, &why) == 0) pe_result_free(&r);
        free(why);
        close(c->fd);
    }
    free(c);
}

/* Modified UTF-7 (RFC 3501 5.1.3) of a UTF-8 name, after emails-mcp's
 * quoting of names with inner spaces. */
char *pe_imap_mailbox_arg(const char *name)
{
    size_t n = strlen(name);
    while (n && name[n - 1] == ' ') n--;
    while (n && *name == ' ') name++, n--;
    mb_buf q = {0};
    int spaced = memchr(name, ' ', n) != NULL;
    if (spaced) mb_buf_putc(&q, '"');
    for (size_t i = 0; i < n; i++) {
        if (spaced && name[i] == '"') mb_buf_putc(&q, '\\');
        mb_buf_putc(&q, name[i]);
    }
    if (spaced) mb_buf_putc(&q, '"');
    mb_buf_putc(&q, 0);
    /* encode non-ASCII runs as &base64(UTF-16BE)- and '&' as "&-" */
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,";
    mb_buf out = {0};
    const char *s = q.data;
    size_t len = strlen(s), i = 0;
    while (i < len) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7f) {
            if (ch == '&') mb_buf_puts(&out, "&-");
            else mb_buf_putc(&out, (char)ch);
            i++;
            continue;
        }
        mb_buf_putc(&out, '&');
        unsigned bits = 0, nbits = 0;
        while (i < len && !((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f)) {
            unsigned cp = mb_utf8_next(s, len, &i);
            unsigned units[2], nu = 0;
            if (cp >= 0x10000) {
                cp -= 0x10000;
                units[nu++] = 0xD800 + (cp >> 10);
                units[nu++] = 0xDC00 + (cp & 0x3FF);
            } else {
                units[nu++] = cp;
            }
            for (unsigned k = 0; k < nu; k++) {
                bits = (bits << 16) | units[k];
                nbits += 16;
                while (nbits >= 6) {
                    nbits -= 6;
                    mb_buf_putc(&out, b64[(bits >> nbits) & 63]);
                }
            }
        }
        if (nbits) mb_buf_putc(&out, b64[(bits << (6 - nbits)) & 63]);
        mb_buf_putc(&out, '-');
    }
    mb_buf_free(&q);
    mb_buf_putc(&out, 0);
    return mb_buf_steal(&out);
}
