/*
 * compose.c - outgoing mail as emails-mcp builds it with Python's
 * email.mime (a base64 text/plain part, multipart/alternative with an HTML
 * body, application/octet-stream attachments, the subject as a utf-8
 * encoded word), the address rules of its validators, and the SMTP client.
 */
#define _GNU_SOURCE
#include "servers/poste_email/poste.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>


/* ------------------------------------------------------------ building */

void pe_b64_lines(mb_buf *out, const unsigned char *s, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t col = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? s[i + 2] : 0);
        char q[4] = {t[v >> 18 & 63], t[v >> 12 & 63], i + 1 < n ? t[v >> 6 & 63] : '=',
                     i + 2 < n ? t[v & 63] : '='};
        mb_buf_append(out, q, 4);
        col += 4;
        if (col == 76) {
            mb_buf_putc(out, '\n');
            col = 0;
        }
    }
    if (col) mb_buf_putc(out, '\n');
}

/* Header(s, 'utf-8').encode(): pure ASCII as it is; else the shorter of
 * the q and b encodings (Charset utf-8, SHORTEST; ties go to q), in words
 * of at most 75 characters. */
void pe_header_word(mb_buf *out, const char *s, int force)
{
    size_t len = strlen(s);
    int ascii = 1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] >= 0x80) ascii = 0;
    if (ascii && !force) {
        mb_buf_puts(out, s);
        return;
    }
    size_t qlen = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        qlen += (c == ' ' || isalnum(c) || strchr("!*+-/", c)) ? 1 : 3;
    }
    int b = (len + 2) / 3 * 4 < qlen;
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i = 0;
    int first = 1;
    while (i < len) {
        mb_buf w = {0};
        mb_buf_puts(&w, b ? "=?utf-8?b?" : "=?utf-8?q?");
        size_t start = i;
        while (i < len) {
            size_t j = i;
            mb_utf8_next(s, len, &j);
            size_t need = b ? ((j - start) + 2) / 3 * 4 : 0;
            if (!b)
                for (size_t k = i; k < j; k++) {
                    unsigned char c = (unsigned char)s[k];
                    need += (c == ' ' || isalnum(c) || strchr("!*+-/", c)) ? 1 : 3;
                }
            if ((b ? 10 + need : w.len + need) + 2 > 75 && i > start) break;
            if (!b)
                for (size_t k = i; k < j; k++) {
                    unsigned char c = (unsigned char)s[k];
                    if (c == ' ') mb_buf_putc(&w, '_');
                    else if (isalnum(c) || strchr("!*+-/", c)) mb_buf_putc(&w, (char)c);
                    else mb_buf_printf(&w, "=%02X", c);
                }
            i = j;
        }
        if (b)
            for (size_t k = start; k < i; k += 3) {
                const unsigned char *u = (const unsigned char *)s;
                unsigned v = (unsigned)u[k] << 16 | (k + 1 < i ? (unsigned)u[k + 1] << 8 : 0) |
                             (k + 2 < i ? u[k + 2] : 0);
                char q[4] = {t[v >> 18 & 63], t[v >> 12 & 63], k + 1 < i ? t[v >> 6 & 63] : '=',
                             k + 2 < i ? t[v & 63] : '='};
                mb_buf_append(&w, q, 4);
            }
        mb_buf_puts(&w, "?=");
        if (!first) mb_buf_puts(out, "\n ");
        mb_buf_append(out, w.data, w.len);
        mb_buf_free(&w);
        first = 0;
    }
}

static void text_part(mb_buf *out, const char *sub, const char *text, int top)
{
    mb_buf_printf(out, "Content-Type: text/%s; charset=\"utf-8\"\nMIME-Version: 1.0\n"
                  "Content-Transfer-Encoding: base64\n", sub);
    (void)top;
}

static void addr_headers(mb_buf *out, const pe_out *o)
{
    mb_buf_puts(out, "Subject: ");
    pe_header_word(out, o->subject ? o->subject : "", 1);
    mb_buf_printf(out, "\nFrom: %s\nTo: %s\n", o->from, o->to);
    if (o->cc && *o->cc) mb_buf_printf(out, "Cc: %s\n", o->cc);
    if (o->bcc && *o->bcc) mb_buf_printf(out, "Bcc: %s\n", o->bcc);
    if (o->in_reply_to && *o->in_reply_to) mb_buf_printf(out, "In-Reply-To: %s\n", o->in_reply_to);
    if (o->references && *o->references) mb_buf_printf(out, "References: %s\n", o->references);
}

int pe_compose(const pe_out *o, mb_buf *msg, char **why)
{
    const char *body = o->body ? o->body : "";
    if (!(o->html && *o->html) && !o->n_att) {
        text_part(msg, "plain", body, 1);
        addr_headers(msg, o);
        mb_buf_putc(msg, '\n');
        pe_b64_lines(msg, (const unsigned char *)body, strlen(body));
        return 0;
    }
    unsigned char rnd[8];
    mb_random_bytes(rnd, sizeof rnd, NULL);
    char bd[64];
    snprintf(bd, sizeof bd, "===============%019llu==",
             (unsigned long long)(((uint64_t)rnd[0] << 56 | (uint64_t)rnd[1] << 48 |
                                   (uint64_t)rnd[2] << 40 | (uint64_t)rnd[3] << 32 |
                                   (uint64_t)rnd[4] << 24 | (uint64_t)rnd[5] << 16 |
                                   (uint64_t)rnd[6] << 8 | rnd[7]) % 10000000000000000000ULL));
    mb_buf_printf(msg, "Content-Type: multipart/%s; boundary=\"%s\"\nMIME-Version: 1.0\n",
                  o->html && *o->html ? "alternative" : "mixed", bd);
    addr_headers(msg, o);
    mb_buf_printf(msg, "\n--%s\n", bd);
    text_part(msg, "plain", body, 0);
    mb_buf_putc(msg, '\n');
    pe_b64_lines(msg, (const unsigned char *)body, strlen(body));
    if (o->html && *o->html) {
        mb_buf_printf(msg, "\n--%s\n", bd);
        text_part(msg, "html", o->html, 0);
        mb_buf_putc(msg, '\n');
        pe_b64_lines(msg, (const unsigned char *)o->html, strlen(o->html));
    }
    for (size_t i = 0; i < o->n_att; i++) {
        char *data = NULL;
        size_t len = 0;
        mb_err err = {0};
        if (mb_read_file(o->att_paths[i], 25u << 20, &data, &len, &err) != MB_OK) {
            *why = mb_asprintf("Attachment error: %s", err.msg);
            return -1;
        }
        const char *base = strrchr(o->att_paths[i], '/');
        base = base ? base + 1 : o->att_paths[i];
        mb_buf_printf(msg, "\n--%s\nContent-Type: application/octet-stream\nMIME-Version: 1.0\n"
                      "Content-Transfer-Encoding: base64\nContent-Disposition: attachment; "
                      "filename= %s\n\n", bd, base);
        pe_b64_lines(msg, (const unsigned char *)data, len);
        free(data);
    }
    mb_buf_printf(msg, "\n--%s--\n", bd);
    return 0;
}

/* ---------------------------------------------------------------- SMTP */

typedef struct sc {
    int fd;
    char buf[4096];
    size_t off, len;
} sc;

static int reply(sc *c, char *text, size_t cap)
{
    mb_buf line = {0};
    for (;;) {
        if (c->off == c->len) {
            struct pollfd p = {c->fd, POLLIN, 0};
            if (poll(&p, 1, 60000) <= 0) break;
            ssize_t k = read(c->fd, c->buf, sizeof c->buf);
            if (k <= 0) break;
            c->off = 0;
            c->len = (size_t)k;
        }
        char ch = c->buf[c->off++];
        if (ch != '\n') {
            if (line.len < 2048) mb_buf_putc(&line, ch);
            continue;
        }
        if (line.len && line.data[line.len - 1] == '\r') line.len--;
        if (line.len >= 4 && line.data[3] == '-') {
            mb_buf_reset(&line);
            continue;
        }
        int code = line.len >= 3 ? atoi(line.data) : -1;
        if (text) mb_utf8_copy(text, cap, line.len > 4 ? line.data + 4 : "", line.len > 4 ? line.len - 4 : 0);
        mb_buf_free(&line);
        return code;
    }
    mb_buf_free(&line);
    return -1;
}

static int cmd(sc *c, const char *s, char *text, size_t cap)
{
    size_t n = strlen(s);
    if (send(c->fd, s, n, MSG_NOSIGNAL) != (ssize_t)n) return -1;
    return reply(c, text, cap);
}

int pe_smtp_send(const pe_endpoint *ep, const char *from, const char *const *rcpts, size_t n,
                 const char *msg, size_t len, char **why)
{
    sc *c = mb_calloc(1, sizeof *c);
    c->fd = pe_endpoint_connect(ep);
    char text[512] = "";
    int rc = -1;
    if (c->fd < 0) {
        *why = mb_asprintf("SMTP connection failed: [Errno %d] %s", ECONNREFUSED,
                           strerror(ECONNREFUSED));
        free(c);
        return -1;
    }
    char *line = NULL;
    if (reply(c, text, sizeof text) != 220 || cmd(c, "EHLO mcpbox\r\n", text, sizeof text) != 250) {
        *why = mb_asprintf("SMTP connection failed: %s", text);
        goto out;
    }
    line = mb_asprintf("MAIL FROM:<%s>\r\n", from);
    if (cmd(c, line, text, sizeof text) != 250) {
        *why = mb_asprintf("Failed to send email: (%d, b'%s', '%s')", 0, text, from);
        goto out;
    }
    size_t ok = 0;
    mb_buf refused = {0};
    for (size_t i = 0; i < n; i++) {
        free(line);
        line = mb_asprintf("RCPT TO:<%s>\r\n", rcpts[i]);
        int code = cmd(c, line, text, sizeof text);
        if (code == 250 || code == 251) {
            ok++;
        } else {
            mb_buf_printf(&refused, "%s'%s': (%d, ", refused.len ? ", " : "", rcpts[i], code);
            pe_py_bytes_repr(&refused, text, strlen(text));
            mb_buf_putc(&refused, ')');
        }
    }
    if (!ok) {
        *why = mb_asprintf("Failed to send email: {%s}", refused.data ? refused.data : "");
        mb_buf_free(&refused);
        goto out;
    }
    mb_buf_free(&refused);
    if (cmd(c, "DATA\r\n", text, sizeof text) != 354) {
        *why = mb_asprintf("Failed to send email: (%d, b'%s')", 0, text);
        goto out;
    }
    /* CRLF, dot-stuffing, and no Bcc header (smtplib.send_message drops it). */
    mb_buf d = {0};
    int bol = 1, skip = 0, in_headers = 1;
    for (size_t i = 0; i < len; i++) {
        char ch = msg[i];
        if (bol && in_headers) {
            if (ch == '\n' || (ch == '\r' && i + 1 < len && msg[i + 1] == '\n')) in_headers = 0;
            else if (!strncasecmp(msg + i, "Bcc:", 4)) skip = 1;
            else if (ch != ' ' && ch != '\t') skip = 0;
        }
        if (!skip) {
            if (bol && ch == '.') mb_buf_putc(&d, '.');
            if (ch == '\n' && (i == 0 || msg[i - 1] != '\r')) mb_buf_putc(&d, '\r');
            mb_buf_putc(&d, ch);
        }
        bol = ch == '\n';
    }
    if (!bol) mb_buf_puts(&d, "\r\n");
    mb_buf_puts(&d, ".\r\n");
    int w = send(c->fd, d.data, d.len, MSG_NOSIGNAL) == (ssize_t)d.len;
    mb_buf_free(&d);
    int code = w ? reply(c, text, sizeof text) : -1;
    if (code != 250) {
        *why = mb_asprintf("Failed to send email: (%d, b'%s')", code, text);
        goto out;
    }
    cmd(c, "QUIT\r\n", NULL, 0);
    rc = 0;
out:
    free(line);
    close(c->fd);
    free(c);
    return rc;
}
