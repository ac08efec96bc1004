/*
 * smtp.c - the SMTP front (the host's --mail-smtp port and each sandbox's
 * smtp.sock): EHLO without AUTH or STARTTLS, as Toolathlon's Poste
 * submission is configured, so smtplib sends without logging in.
 * Recipients in a live domain (from a sandbox's socket: only its own
 * domain) must be known users and are delivered to Dovecot over LMTP;
 * every other recipient is accepted and recorded in outbound.jsonl, never
 * relayed, so nothing leaves the machine.
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define SMTP_LINE 4096
#define SMTP_MAX_MSG (32u << 20)
#define SMTP_MAX_RCPTS 1000
#define SMTP_MAX_ERRORS 20

typedef struct txn {
    char *from;
    const char **local; /* delivered over LMTP */
    size_t n_local;
    const char **ext;   /* recorded only */
    size_t n_ext;
} txn;

static void txn_reset(txn *t)
{
    free(t->from);
    for (size_t i = 0; i < t->n_local; i++) free((char *)t->local[i]);
    for (size_t i = 0; i < t->n_ext; i++) free((char *)t->ext[i]);
    free(t->local);
    free(t->ext);
    memset(t, 0, sizeof *t);
}

/* The address in "FROM:<a> params" / "TO:<a>"; "" for <>. NULL if malformed. */
static char *path_arg(const char *s, const char *kw)
{
    size_t kl = strlen(kw);
    if (strncasecmp(s, kw, kl) != 0) return NULL;
    s += kl;
    while (*s == ' ') s++;
    const char *a, *e;
    if (*s == '<') {
        a = s + 1;
        e = strchr(a, '>');
        if (!e) return NULL;
    } else {
        a = s;
        e = a;
        while (*e && *e != ' ' && *e != '\r' && *e != '\n') e++;
    }
    if (e - a > MB_MAIL_ADDR_MAX) return NULL;
    for (const char *p = a; p < e; p++)
        if ((unsigned char)*p < 0x21 || *p == '<' || *p == '>') return NULL;
    return mb_strndup(a, (size_t)(e - a));
}

/* Reads an SMTP/LMTP reply (multi-line too); its code, or -1. The last
 * line's text goes to last (may be NULL). */
static int read_reply(mb_mail_rd *r, char *last, size_t cap)
{
    char line[SMTP_LINE];
    for (;;) {
        long k = mb_mail__read_line(r, line, sizeof line);
        if (k < 4) return -1;
        if (line[3] == '-') continue;
        if (last) {
            size_t n = (size_t)k;
            while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) n--;
            mb_utf8_copy(last, cap, line, n);
        }
        return atoi(line);
    }
}

static int cmd_reply(mb_mail_rd *r, const char *cmd, char *last, size_t cap)
{
    if (mb_mail__writes(r->fd, cmd)) return -1;
    return read_reply(r, last, cap);
}

/* Delivers the message to the local recipients; 0, or -1 with why. */
static int lmtp_deliver(mb_mail *m, const txn *t, const mb_buf *msg, char *why, size_t cap)
{
    mb_err err = {0};
    char *path = mb_mail__lmtp_path(m);
    int fd = mb_mail__connect_unix(path, &err);
    free(path);
    if (fd < 0) {
        snprintf(why, cap, "the mailbox server is not reachable");
        return -1;
    }
    mb_mail_rd *r = mb_calloc(1, sizeof *r);
    r->fd = fd;
    r->timeout_ms = 60000;
    int rc = -1;
    size_t accepted = 0;
    char *c = NULL;
    if (read_reply(r, why, cap) != 220) goto out;
    if (cmd_reply(r, "LHLO mcpbox\r\n", why, cap) != 250) goto out;
    c = mb_asprintf("MAIL FROM:<%s>\r\n", t->from);
    if (cmd_reply(r, c, why, cap) != 250) goto out;
    for (size_t i = 0; i < t->n_local; i++) {
        free(c);
        c = mb_asprintf("RCPT TO:<%s>\r\n", t->local[i]);
        int code = cmd_reply(r, c, why, cap);
        if (code < 0) goto out;
        if (code == 250) accepted++;
    }
    if (!accepted) goto out;
    if (cmd_reply(r, "DATA\r\n", why, cap) != 354) goto out;
    /* CRLF line ends, dot-stuffed. */
    mb_buf out = {0};
    int bol = 1;
    for (size_t i = 0; i < msg->len; i++) {
        char ch = msg->data[i];
        if (bol && ch == '.') mb_buf_putc(&out, '.');
        if (ch == '\n' && (i == 0 || msg->data[i - 1] != '\r')) mb_buf_putc(&out, '\r');
        mb_buf_putc(&out, ch);
        bol = ch == '\n';
    }
    if (!bol) mb_buf_puts(&out, "\r\n");
    mb_buf_puts(&out, ".\r\n");
    int w = mb_mail__write_all(fd, out.data, out.len);
    mb_buf_free(&out);
    if (w) goto out;
    rc = 0;
    for (size_t i = 0; i < accepted; i++)
        if (read_reply(r, why, cap) != 250) rc = -1;
    cmd_reply(r, "QUIT\r\n", NULL, 0);
out:
    free(c);
    close(fd);
    free(r);
    return rc;
}

/* Reads DATA up to the lone dot; 0, 1 if too big (read to the end
 * anyway), -1 if the connection failed. */
static int read_data(mb_mail_rd *r, mb_buf *msg)
{
    char line[SMTP_LINE];
    int big = 0;
    for (;;) {
        long k = mb_mail__read_line(r, line, sizeof line);
        if (k == 0 || k == -1) return -1;
        if (k == -2) { /* a line over SMTP_LINE: keep what was read */
            big |= msg->len + sizeof line > SMTP_MAX_MSG;
            if (!big) mb_buf_append(msg, line, sizeof line - 1);
            continue;
        }
        if ((k == 3 && !memcmp(line, ".\r\n", 3)) || (k == 2 && !memcmp(line, ".\n", 2)))
            return big;
        const char *s = line;
        if (*s == '.') s++, k--;
        if (msg->len + (size_t)k > SMTP_MAX_MSG) big = 1;
        if (!big) mb_buf_append(msg, s, (size_t)k);
    }
}

void mb_mail__smtp_serve(mb_mail *m, int fd, const char *domain, int kind)
{
    (void)kind;
    mb_mail_rd *r = mb_calloc(1, sizeof *r);
    r->fd = fd;
    r->timeout_ms = 5 * 60 * 1000;
    txn t = {0};
    char line[SMTP_LINE];
    int errors = 0;
    mb_mail__writes(fd, "220 mcpbox ESMTP ready\r\n");
    for (;;) {
        long k = mb_mail__read_line(r, line, sizeof line);
        if (k == 0 || k == -1) break;
        if (k == -2) {
            mb_mail__writes(fd, "500 5.5.2 Error: line too long\r\n");
            if (++errors > SMTP_MAX_ERRORS) break;
            continue;
        }
        while (k && (line[k - 1] == '\n' || line[k - 1] == '\r')) line[--k] = 0;
        char verb[8] = "";
        size_t i = 0;
        while (i < 4 && isalpha((unsigned char)line[i])) verb[i] = (char)toupper((unsigned char)line[i]), i++;
        verb[i] = 0;
        const char *arg = line + i;
        while (*arg == ' ') arg++;
        const char *resp = NULL;
        char buf[512];
        if (!strcmp(verb, "EHLO") && line[4] == ' ') {
            txn_reset(&t);
            resp = "250-mcpbox\r\n250-PIPELINING\r\n250-SIZE 33554432\r\n250-8BITMIME\r\n"
                   "250 ENHANCEDSTATUSCODES\r\n";
        } else if (!strcmp(verb, "HELO")) {
            txn_reset(&t);
            resp = "250 mcpbox\r\n";
        } else if (!strcmp(verb, "MAIL")) {
            char *from = t.from ? NULL : path_arg(arg, "FROM:");
            if (t.from) resp = "503 5.5.1 Error: nested MAIL command\r\n";
            else if (!from) resp = "501 5.5.4 Syntax: MAIL FROM:<address>\r\n";
            else {
                t.from = from;
                resp = "250 2.1.0 Ok\r\n";
            }
        } else if (!strcmp(verb, "RCPT")) {
            char *to = t.from ? path_arg(arg, "TO:") : NULL;
            char local[65], dom[MB_MAIL_DOMAIN_MAX + 1];
            if (!t.from) resp = "503 5.5.1 Error: need MAIL command\r\n";
            else if (!to || mb_mail__addr_split(to, strlen(to), local, sizeof local, dom,
                                                sizeof dom))
                resp = "501 5.1.3 Bad recipient address syntax\r\n";
            else if (t.n_local + t.n_ext >= SMTP_MAX_RCPTS)
                resp = "452 4.5.3 Error: too many recipients\r\n";
            else {
                int live = *domain ? !strcmp(dom, domain)
                                   : mb_mail__domain_owner(m, dom, NULL) == MB_OK;
                if (live && !mb_mail__user_known(m, local)) {
                    snprintf(buf, sizeof buf, "550 5.1.1 <%s@%s>: Recipient address rejected: "
                             "User unknown in virtual mailbox table\r\n", local, dom);
                    resp = buf;
                } else {
                    char *norm = mb_asprintf("%s@%s", local, dom);
                    if (live) mb_strv_push(&t.local, &t.n_local, norm);
                    else mb_strv_push(&t.ext, &t.n_ext, norm);
                    resp = "250 2.1.5 Ok\r\n";
                }
            }
            free(to);
        } else if (!strcmp(verb, "DATA")) {
            if (!t.from) resp = "503 5.5.1 Error: need MAIL command\r\n";
            else if (!t.n_local && !t.n_ext) resp = "554 5.5.1 Error: no valid recipients\r\n";
            else {
                mb_mail__writes(fd, "354 End data with <CR><LF>.<CR><LF>\r\n");
                mb_buf msg = {0};
                int d = read_data(r, &msg);
                if (d < 0) {
                    mb_buf_free(&msg);
                    break;
                }
                char why[256] = "";
                if (d == 1) resp = "552 5.3.4 Error: message file too big\r\n";
                else if (t.n_local && lmtp_deliver(m, &t, &msg, why, sizeof why)) {
                    snprintf(buf, sizeof buf, "451 4.3.0 Error: delivery failed: %s\r\n", why);
                    resp = buf;
                } else {
                    if (t.n_ext)
                        mb_mail__record_outbound(m, domain, t.from, t.ext, t.n_ext, msg.len);
                    resp = "250 2.0.0 Ok: queued\r\n";
                }
                mb_buf_free(&msg);
                txn_reset(&t);
            }
        } else if (!strcmp(verb, "RSET")) {
            txn_reset(&t);
            resp = "250 2.0.0 Ok\r\n";
        } else if (!strcmp(verb, "NOOP")) {
            resp = "250 2.0.0 Ok\r\n";
        } else if (!strcmp(verb, "VRFY")) {
            resp = "252 2.0.0 Cannot VRFY user\r\n";
        } else if (!strcmp(verb, "QUIT")) {
            mb_mail__writes(fd, "221 2.0.0 Bye\r\n");
            break;
        } else if (!strcmp(verb, "AUTH")) {
            resp = "503 5.5.1 Error: authentication not enabled\r\n";
        } else {
            resp = "502 5.5.2 Error: command not recognized\r\n";
        }
        if (resp[0] == '5' && ++errors > SMTP_MAX_ERRORS) {
            mb_mail__writes(fd, "421 4.7.0 Error: too many errors\r\n");
            break;
        }
        if (mb_mail__writes(fd, resp)) break;
    }
    txn_reset(&t);
    free(r);
}
