/*
 * imapproxy.c - a sandbox's imap.sock: an IMAP proxy to Dovecot that reads
 * every command before login and lets through only logins (LOGIN, or
 * AUTHENTICATE PLAIN) of users of the sandbox's own domain; any other user
 * gets the same NO as a wrong password, so an agent that knows the public
 * default passwords of Toolathlon's users still cannot open another
 * sandbox's mailboxes. Once Dovecot accepts a login the proxy relays bytes
 * (an authenticated IMAP session cannot change its user).
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define LINE_MAX_IMAP 8192
#define LITERAL_MAX 1024
#define ATTEMPTS_MAX 10

static const char AUTH_FAILED[] = "NO [AUTHENTICATIONFAILED] Authentication failed.";

static void reply(int fd, const char *tag, const char *text)
{
    char *s = mb_asprintf("%s %s\r\n", tag, text);
    mb_mail__writes(fd, s);
    free(s);
}

/* One IMAP astring from *p (atom, "quoted" or a literal already inlined as
 * {n}\r\n<bytes>); NUL-free. Returns 0 or -1. */
static int astring(const char **p, const char *end, mb_buf *out)
{
    const char *s = *p;
    while (s < end && *s == ' ') s++;
    if (s >= end) return -1;
    if (*s == '"') {
        for (s++; s < end && *s != '"'; s++) {
            if (*s == '\\' && s + 1 < end) s++;
            if (!*s || *s == '\r' || *s == '\n') return -1;
            mb_buf_putc(out, *s);
        }
        if (s >= end) return -1;
        *p = s + 1;
        return 0;
    }
    if (*s == '{') {
        char *e;
        unsigned long n = strtoul(s + 1, &e, 10);
        if (*e == '+') e++;
        if (*e != '}' || e + 3 > end || e[1] != '\r' || e[2] != '\n') return -1;
        s = e + 3;
        if ((size_t)(end - s) < n || memchr(s, 0, n)) return -1;
        mb_buf_append(out, s, n);
        *p = s + n;
        return 0;
    }
    const char *a = s;
    while (s < end && *s != ' ' && *s != '\r' && *s != '\n' && *s != '(' && *s != ')' &&
           *s != '{' && *s != '"' && *s != '%' && *s != '*' && (unsigned char)*s > 0x20 &&
           (unsigned char)*s < 0x7f)
        s++;
    if (s == a) return -1;
    mb_buf_append(out, a, (size_t)(s - a));
    *p = s;
    return 0;
}

/* 1 if `user` is an address of `domain` a login may use. */
static int user_ok(const char *user, size_t len, const char *domain)
{
    char local[65], d[MB_MAIL_DOMAIN_MAX + 1];
    if (memchr(user, 0, len)) return 0;
    if (mb_mail__addr_split(user, len, local, sizeof local, d, sizeof d)) return 0;
    return !strcmp(d, domain);
}

/* Forwards `cmd` to Dovecot and relays its answer up to the tagged line.
 * Returns 1 if that line is OK, 0 if not, -1 if either side failed. */
static int roundtrip(mb_mail_rd *up, int client, const char *tag, const void *cmd, size_t n)
{
    if (mb_mail__write_all(up->fd, cmd, n)) return -1;
    char line[LINE_MAX_IMAP];
    size_t tl = strlen(tag);
    for (;;) {
        long k = mb_mail__read_line(up, line, sizeof line);
        if (k == -2) continue; /* an over-long untagged line: dropped */
        if (k <= 0) return -1;
        if (mb_mail__write_all(client, line, (size_t)k)) return -1;
        if (!strncmp(line, tag, tl) && line[tl] == ' ')
            return !strncasecmp(line + tl + 1, "OK", 2);
    }
}

/* The whole command: the line and its literals (synchronising ones are
 * answered with a continuation). Returns 0, or -1 to end the session. */
static int read_command(mb_mail_rd *cl, int client, mb_buf *cmd)
{
    char line[LINE_MAX_IMAP];
    size_t total = 0;
    for (;;) {
        long k = mb_mail__read_line(cl, line, sizeof line);
        if (k <= 0) return -1;
        mb_buf_append(cmd, line, (size_t)k);
        size_t ll = (size_t)k;
        while (ll && (line[ll - 1] == '\n' || line[ll - 1] == '\r')) ll--;
        if (ll < 3 || line[ll - 1] != '}' || line[k - 1] != '\n') return 0;
        char *open = memrchr(line, '{', ll);
        if (!open) return 0;
        char *e;
        unsigned long n = strtoul(open + 1, &e, 10);
        int plus = *e == '+';
        if (plus) e++;
        if (*e != '}' || open[1] < '0' || open[1] > '9') return 0;
        total += n;
        if (n > LITERAL_MAX || total > LITERAL_MAX * 2) return -1;
        if (!plus && mb_mail__writes(client, "+ OK\r\n")) return -1;
        if (mb_mail__read_n(cl, cmd, n)) return -1;
    }
}

static char *b64(const void *p, size_t n)
{
    char *out = mb_malloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)out, p, (int)n);
    return out;
}

/* Decodes standard base64 (no whitespace); -1 if malformed. */
static long unb64(const char *s, size_t n, unsigned char *out, size_t cap)
{
    if (n % 4 || n / 4 * 3 > cap) return -1;
    int k = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
    if (k < 0) return -1;
    if (n && s[n - 1] == '=') k--;
    if (n > 1 && s[n - 2] == '=') k--;
    return k;
}

static int do_login(mb_mail_rd *up, int client, const char *tag, const char *args,
                    const char *end, const char *domain)
{
    mb_buf user = {0}, pass = {0};
    const char *p = args;
    int ok = !astring(&p, end, &user) && !astring(&p, end, &pass);
    int rc = 0;
    if (!ok) {
        reply(client, tag, "BAD Error in IMAP command LOGIN: Invalid arguments.");
    } else if (!user_ok(user.data, user.len, domain)) {
        reply(client, tag, AUTH_FAILED);
    } else {
        mb_buf c = {0};
        mb_buf_printf(&c, "%s LOGIN {%zu+}\r\n", tag, user.len);
        mb_buf_append(&c, user.data, user.len);
        mb_buf_printf(&c, " {%zu+}\r\n", pass.len);
        mb_buf_append(&c, pass.data, pass.len);
        mb_buf_puts(&c, "\r\n");
        rc = roundtrip(up, client, tag, c.data, c.len);
        mb_buf_free(&c);
    }
    mb_buf_free(&user);
    mb_buf_free(&pass);
    return rc;
}

static int do_authenticate(mb_mail_rd *cl, mb_mail_rd *up, int client, const char *tag,
                           const char *args, const char *end, const char *domain)
{
    mb_buf mech = {0}, ir = {0};
    const char *p = args;
    if (astring(&p, end, &mech)) {
        mb_buf_free(&mech);
        reply(client, tag, "BAD Error in IMAP command AUTHENTICATE: Invalid arguments.");
        return 0;
    }
    mb_buf_putc(&mech, 0);
    if (strcasecmp(mech.data, "PLAIN") != 0) {
        mb_buf_free(&mech);
        reply(client, tag, "NO [ALERT] Unsupported authentication mechanism.");
        return 0;
    }
    mb_buf_free(&mech);
    if (astring(&p, end, &ir)) { /* no initial response: ask for it */
        char line[LINE_MAX_IMAP];
        if (mb_mail__writes(client, "+ \r\n")) return -1;
        long k = mb_mail__read_line(cl, line, sizeof line);
        if (k <= 0) return -1;
        while (k && (line[k - 1] == '\n' || line[k - 1] == '\r')) line[--k] = 0;
        mb_buf_append(&ir, line, (size_t)k);
    }
    mb_buf_putc(&ir, 0);
    ir.len--;
    if (!strcmp(ir.data, "*")) {
        mb_buf_free(&ir);
        reply(client, tag, "BAD Authentication aborted by client.");
        return 0;
    }
    unsigned char dec[1024];
    long n = !strcmp(ir.data, "=") ? 0 : unb64(ir.data, ir.len, dec, sizeof dec);
    mb_buf_free(&ir);
    if (n < 0) {
        reply(client, tag, "BAD Invalid base64 data in continued response");
        return 0;
    }
    /* authzid NUL authcid NUL password */
    const unsigned char *z1 = memchr(dec, 0, (size_t)n);
    const unsigned char *z2 = z1 ? memchr(z1 + 1, 0, (size_t)(dec + n - z1 - 1)) : NULL;
    if (!z2) {
        reply(client, tag, AUTH_FAILED);
        return 0;
    }
    size_t zl = (size_t)(z1 - dec), cl_len = (size_t)(z2 - z1 - 1);
    const char *authc = (const char *)z1 + 1;
    if (!user_ok(authc, cl_len, domain) ||
        (zl && (zl != cl_len || memcmp(dec, authc, zl) != 0))) {
        reply(client, tag, AUTH_FAILED);
        return 0;
    }
    char *enc = b64(dec, (size_t)n);
    char *c = mb_asprintf("%s AUTHENTICATE PLAIN %s\r\n", tag, enc);
    int rc = roundtrip(up, client, tag, c, strlen(c));
    free(c);
    free(enc);
    return rc;
}

void mb_mail__imap_proxy(mb_mail *m, int fd, const char *domain, int kind)
{
    (void)kind;
    mb_err err = {0};
    /* Dovecot delays logins after failures from one address (its auth
     * penalty): each domain's proxy comes from an address of its own in
     * 127/8, so an agent's wrong passwords slow down no one else. */
    char src[32] = "";
    if (!strcmp(m->imap_host, "127.0.0.1")) {
        uint64_t h = mb_hash_str(domain);
        snprintf(src, sizeof src, "127.%u.%u.%u", 64 + (unsigned)(h % 64),
                 1 + (unsigned)((h >> 8) % 254), 1 + (unsigned)((h >> 16) % 254));
    }
    int upfd = mb_mail__connect_tcp_from(m->imap_host, m->imap_port, *src ? src : NULL, &err);
    if (upfd < 0) {
        mb_mail__writes(fd, "* BYE The mail server is not reachable.\r\n");
        return;
    }
    mb_mail__net_track(m->net, fd, upfd);
    mb_mail_rd *cl = mb_calloc(1, sizeof *cl), *up = mb_calloc(1, sizeof *up);
    cl->fd = fd;
    cl->timeout_ms = 10 * 60 * 1000;
    up->fd = upfd;
    up->timeout_ms = 60 * 1000;
    char greet[LINE_MAX_IMAP];
    long k = mb_mail__read_line(up, greet, sizeof greet);
    if (k <= 0 || mb_mail__write_all(fd, greet, (size_t)k)) goto out;
    for (int attempts = 0; attempts < ATTEMPTS_MAX;) {
        mb_buf cmd = {0};
        if (read_command(cl, fd, &cmd)) {
            mb_buf_free(&cmd);
            goto out;
        }
        mb_buf_putc(&cmd, 0);
        cmd.len--;
        const char *s = cmd.data, *end = cmd.data + cmd.len;
        const char *sp = memchr(s, ' ', cmd.len);
        char tag[128] = "*", name[32] = "";
        const char *args = end;
        if (sp && sp > s && (size_t)(sp - s) < sizeof tag) {
            memcpy(tag, s, (size_t)(sp - s));
            tag[sp - s] = 0;
            const char *w = sp + 1, *we = w;
            while (we < end && isalpha((unsigned char)*we)) we++;
            if ((size_t)(we - w) < sizeof name) {
                memcpy(name, w, (size_t)(we - w));
                name[we - w] = 0;
            }
            args = we;
        }
        for (char *t = tag; *t; t++)
            if ((unsigned char)*t < 0x21 || (unsigned char)*t > 0x7e || *t == '{') *t = '*';
        int rc = 0;
        if (!sp || !*name) {
            reply(fd, tag, "BAD Error in IMAP command received by server.");
        } else if (!strcasecmp(name, "LOGIN")) {
            attempts++;
            rc = do_login(up, fd, tag, args, end, domain);
        } else if (!strcasecmp(name, "AUTHENTICATE")) {
            attempts++;
            rc = do_authenticate(cl, up, fd, tag, args, end, domain);
        } else if (!strcasecmp(name, "CAPABILITY") || !strcasecmp(name, "NOOP") ||
                   !strcasecmp(name, "ID") || !strcasecmp(name, "LOGOUT")) {
            if (memchr(s, '{', cmd.len)) reply(fd, tag, "BAD Error in IMAP command: literals "
                                                        "are not accepted here.");
            else rc = roundtrip(up, fd, tag, cmd.data, cmd.len) < 0 ? -1 : 0;
            if (!strcasecmp(name, "LOGOUT")) rc = -1;
        } else if (!strcasecmp(name, "STARTTLS")) {
            reply(fd, tag, "BAD TLS support isn't enabled.");
        } else {
            reply(fd, tag, "BAD Error in IMAP command received by server: log in first.");
        }
        mb_buf_free(&cmd);
        if (rc < 0) goto out;
        if (rc == 1) {
            mb_mail__relay(cl, up);
            goto out;
        }
    }
    mb_mail__writes(fd, "* BYE Too many invalid commands.\r\n");
out:
    mb_mail__net_track(m->net, fd, -1);
    close(upfd);
    free(cl);
    free(up);
}
