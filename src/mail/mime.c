/*
 * mime.c - reading a message as emails-mcp's email_parser.py does with
 * Python's email package (compat32): headers with RFC 2047 words decoded,
 * the first text/plain and text/html parts that are not attachments, and
 * the attachments (parts whose Content-Disposition says "attachment" and
 * that have a file name) of multipart messages.
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <ctype.h>
#include <iconv.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_DEPTH 20

/* n bytes and a NUL (NULs inside kept) */
static char *dup0(const void *p, size_t n)
{
    char *r = mb_malloc(n + 1);
    memcpy(r, p, n);
    r[n] = 0;
    return r;
}

/* ------------------------------------------------------------- charsets */

/* Converts from `cs` to UTF-8; NULL if the charset is unknown or the bytes
 * are not valid in it. */
static char *conv(const char *cs, const char *s, size_t n)
{
    if (!strcasecmp(cs, "utf-8") || !strcasecmp(cs, "utf8") || !strcasecmp(cs, "us-ascii") ||
        !strcasecmp(cs, "ascii")) {
        if (!mb_utf8_valid(s, n)) return NULL;
        if (!strncasecmp(cs, "us", 2) || !strcasecmp(cs, "ascii"))
            for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] > 0x7f) return NULL;
        return dup0(s, n);
    }
    iconv_t cd = iconv_open("UTF-8", cs);
    if (cd == (iconv_t)-1) return NULL;
    size_t cap = n * 4 + 16, left = cap;
    char *out = mb_malloc(cap + 1), *o = out;
    char *in = (char *)s;
    size_t inleft = n;
    size_t r = iconv(cd, &in, &inleft, &o, &left);
    iconv_close(cd);
    if (r == (size_t)-1) {
        free(out);
        return NULL;
    }
    *o = 0;
    return out;
}

/* detect_and_decode_content: the declared charset, then a fixed list. */
static char *decode_text(const char *cs, const char *s, size_t n)
{
    char *r = cs && *cs ? conv(cs, s, n) : NULL;
    static const char *const tries[] = {"utf-8", "gb2312", "gbk", "big5", "iso-8859-1"};
    for (size_t i = 0; !r && i < sizeof tries / sizeof *tries; i++) r = conv(tries[i], s, n);
    return r ? r : mb_utf8_repair(s, n, NULL);
}

/* -------------------------------------------------------------- encodings */

static int hexv(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static void unqp(const char *s, size_t n, mb_buf *out, int header)
{
    for (size_t i = 0; i < n; i++) {
        if (header && s[i] == '_') {
            mb_buf_putc(out, ' ');
        } else if (s[i] == '=' && i + 2 < n + 0 && hexv(s[i + 1]) >= 0 && hexv(s[i + 2]) >= 0) {
            mb_buf_putc(out, (char)(hexv(s[i + 1]) * 16 + hexv(s[i + 2])));
            i += 2;
        } else if (s[i] == '=' && (i + 1 == n || s[i + 1] == '\r' || s[i + 1] == '\n')) {
            /* soft line break */
            while (i + 1 < n && (s[i + 1] == '\r' || s[i + 1] == '\n')) {
                i++;
                if (s[i] == '\n') break;
            }
        } else {
            mb_buf_putc(out, s[i]);
        }
    }
}

static void unb64(const char *s, size_t n, mb_buf *out)
{
    unsigned bits = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i], v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '+') v = 62;
        else if (c == '/') v = 63;
        else continue;
        bits = (bits << 6) | (unsigned)v;
        nb += 6;
        if (nb >= 8) {
            nb -= 8;
            mb_buf_putc(out, (char)((bits >> nb) & 0xff));
        }
    }
}

/* ---------------------------------------------------------------- headers */

char *mb_mail_decode_header(const char *v)
{
    if (!v) return mb_strdup("");
    mb_buf out = {0};
    const char *s = v;
    int last_encoded = 0;
    size_t pending_ws = 0;
    const char *ws_at = NULL;
    while (*s) {
        const char *q = strstr(s, "=?");
        const char *cs_end = q ? strchr(q + 2, '?') : NULL;
        const char *enc_end = cs_end && cs_end[1] && cs_end[2] == '?' ? cs_end + 2 : NULL;
        const char *end = enc_end ? strstr(enc_end + 1, "?=") : NULL;
        char enc = enc_end ? (char)toupper((unsigned char)cs_end[1]) : 0;
        if (!q || !end || (enc != 'B' && enc != 'Q')) {
            mb_buf_puts(&out, s);
            break;
        }
        /* the text before the word: dropped if it is only whitespace between two words */
        size_t pre = (size_t)(q - s);
        int only_ws = 1;
        for (size_t i = 0; i < pre; i++)
            if (!isspace((unsigned char)s[i])) only_ws = 0;
        if (!(only_ws && last_encoded)) mb_buf_append(&out, s, pre);
        (void)pending_ws;
        (void)ws_at;
        char cs[64];
        size_t csl = (size_t)(cs_end - q - 2);
        snprintf(cs, sizeof cs, "%.*s", (int)(csl < 63 ? csl : 63), q + 2);
        char *star = strchr(cs, '*'); /* RFC 2231 language */
        if (star) *star = 0;
        mb_buf raw = {0};
        if (enc == 'B') unb64(enc_end + 1, (size_t)(end - enc_end - 1), &raw);
        else unqp(enc_end + 1, (size_t)(end - enc_end - 1), &raw, 1);
        char *t = decode_text(cs, raw.data ? raw.data : "", raw.len);
        mb_buf_puts(&out, t);
        free(t);
        mb_buf_free(&raw);
        last_encoded = 1;
        s = end + 2;
    }
    mb_buf_putc(&out, 0);
    char *r = mb_buf_steal(&out);
    /* str.strip() */
    size_t n = strlen(r), a = 0;
    while (n && isspace((unsigned char)r[n - 1])) r[--n] = 0;
    while (isspace((unsigned char)r[a])) a++;
    memmove(r, r + a, n - a + 1);
    if (!mb_utf8_valid(r, strlen(r))) {
        char *f = decode_text(NULL, r, strlen(r));
        free(r);
        r = f;
    }
    return r;
}

typedef struct hdrs {
    char **names, **values;
    size_t n;
} hdrs;

/* Parses the header block [s, s+n); returns the offset of the body. */
static size_t parse_headers(const char *s, size_t n, hdrs *h)
{
    size_t i = 0;
    while (i < n) {
        size_t e = i;
        while (e < n && s[e] != '\n') e++;
        size_t le = e;
        if (le > i && s[le - 1] == '\r') le--;
        if (le == i) return e < n ? e + 1 : n; /* blank line */
        if ((s[i] == ' ' || s[i] == '\t') && h->n) {
            char *old = h->values[h->n - 1];
            h->values[h->n - 1] = mb_asprintf("%s\r\n%.*s", old, (int)(le - i), s + i);
            free(old);
        } else {
            const char *colon = memchr(s + i, ':', le - i);
            if (colon) {
                h->names = mb_realloc(h->names, (h->n + 1) * sizeof *h->names);
                h->values = mb_realloc(h->values, (h->n + 1) * sizeof *h->values);
                const char *v = colon + 1;
                while (v < s + le && (*v == ' ' || *v == '\t')) v++;
                h->names[h->n] = mb_strndup(s + i, (size_t)(colon - s - i));
                h->values[h->n] = mb_strndup(v, (size_t)(s + le - v));
                h->n++;
            }
        }
        i = e + 1;
    }
    return n;
}

static const char *hget(const hdrs *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (!strcasecmp(h->names[i], name)) return h->values[i];
    return NULL;
}

static void hfree(hdrs *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->names[i]);
        free(h->values[i]);
    }
    free(h->names);
    free(h->values);
}

/* A parameter of a Content-Type / Content-Disposition value (name= or
 * name*=charset''pct-encoded); NULL if absent. */
static char *param(const char *v, const char *name)
{
    if (!v) return NULL;
    size_t nl = strlen(name);
    for (const char *p = strchr(v, ';'); p; p = strchr(p + 1, ';')) {
        const char *k = p + 1;
        while (isspace((unsigned char)*k)) k++;
        if (strncasecmp(k, name, nl) != 0) continue;
        const char *e = k + nl;
        int ext = *e == '*';
        if (ext) e++;
        while (isspace((unsigned char)*e)) e++;
        if (*e != '=') continue;
        e++;
        while (isspace((unsigned char)*e)) e++;
        mb_buf b = {0};
        if (*e == '"') {
            for (e++; *e && *e != '"'; e++) {
                if (*e == '\\' && e[1]) e++;
                mb_buf_putc(&b, *e);
            }
        } else {
            while (*e && *e != ';' && !isspace((unsigned char)*e)) mb_buf_putc(&b, *e++);
        }
        mb_buf_putc(&b, 0);
        char *r = mb_buf_steal(&b);
        if (ext) {
            char *q1 = strchr(r, '\''), *q2 = q1 ? strchr(q1 + 1, '\'') : NULL;
            if (q2) {
                char cs[64];
                snprintf(cs, sizeof cs, "%.*s", (int)(q1 - r), r);
                mb_buf raw = {0};
                for (char *x = q2 + 1; *x; x++) {
                    if (*x == '%' && hexv(x[1]) >= 0 && hexv(x[2]) >= 0) {
                        mb_buf_putc(&raw, (char)(hexv(x[1]) * 16 + hexv(x[2])));
                        x += 2;
                    } else {
                        mb_buf_putc(&raw, *x);
                    }
                }
                char *t = decode_text(*cs ? cs : "utf-8", raw.data ? raw.data : "", raw.len);
                mb_buf_free(&raw);
                free(r);
                r = t;
            }
        }
        return r;
    }
    return NULL;
}

static char *content_type(const char *v)
{
    if (!v) return mb_strdup("text/plain");
    const char *e = v;
    while (*e && *e != ';' && !isspace((unsigned char)*e)) e++;
    char *t = mb_strndup(v, (size_t)(e - v));
    for (char *p = t; *p; p++) *p = (char)tolower((unsigned char)*p);
    if (!strchr(t, '/')) { /* compat32: an invalid type reads as text/plain */
        free(t);
        return mb_strdup("text/plain");
    }
    return t;
}

static void payload(const hdrs *h, const char *s, size_t n, mb_buf *out)
{
    const char *cte = hget(h, "Content-Transfer-Encoding");
    if (cte && !strncasecmp(cte, "base64", 6)) unb64(s, n, out);
    else if (cte && !strncasecmp(cte, "quoted-printable", 16)) unqp(s, n, out, 0);
    else mb_buf_append(out, s, n);
}

static void walk(mb_mail_msg *m, const char *s, size_t n, int top_multipart, int depth)
{
    hdrs h = {0};
    size_t body = parse_headers(s, n, &h);
    char *ct = content_type(hget(&h, "Content-Type"));
    const char *disp = hget(&h, "Content-Disposition");
    if (!strncmp(ct, "multipart/", 10) && depth < MAX_DEPTH) {
        char *bd = param(hget(&h, "Content-Type"), "boundary");
        if (bd && *bd) {
            char *delim = mb_asprintf("--%s", bd);
            size_t dl = strlen(delim);
            const char *p = s + body, *end = s + n, *part = NULL;
            while (p < end) {
                const char *le = memchr(p, '\n', (size_t)(end - p));
                const char *next = le ? le + 1 : end;
                if ((size_t)(end - p) >= dl && !memcmp(p, delim, dl)) {
                    if (part) {
                        const char *pe = p;
                        if (pe > part && pe[-1] == '\n') pe--;
                        if (pe > part && pe[-1] == '\r') pe--;
                        walk(m, part, (size_t)(pe - part), 1, depth + 1);
                    }
                    if ((size_t)(end - p) >= dl + 2 && p[dl] == '-' && p[dl + 1] == '-') break;
                    part = next;
                }
                p = next;
            }
            free(delim);
        }
        free(bd);
    } else {
        int is_att = disp && strstr(disp, "attachment");
        mb_buf raw = {0};
        payload(&h, s + body, n - body, &raw);
        if (is_att && top_multipart) {
            char *fn = param(disp, "filename");
            if (!fn) fn = param(hget(&h, "Content-Type"), "name");
            if (fn) {
                m->atts = mb_realloc(m->atts, (m->n_atts + 1) * sizeof *m->atts);
                mb_mail_att *a = &m->atts[m->n_atts++];
                a->filename = mb_mail_decode_header(fn);
                a->content_type = mb_strdup(ct);
                a->size = raw.len;
                a->data = raw.len ? dup0(raw.data, raw.len) : mb_strdup("");
                free(fn);
            }
        } else if (!is_att && raw.len) {
            char *cs = param(hget(&h, "Content-Type"), "charset");
            if (!top_multipart) { /* a single-part message */
                char *t = decode_text(cs, raw.data, raw.len);
                if (!strcmp(ct, "text/html")) m->body_html = t;
                else m->body_text = t;
            } else if (!strcmp(ct, "text/plain") && !m->body_text) {
                m->body_text = decode_text(cs, raw.data, raw.len);
            } else if (!strcmp(ct, "text/html") && !m->body_html) {
                m->body_html = decode_text(cs, raw.data, raw.len);
            }
            free(cs);
        }
        mb_buf_free(&raw);
    }
    if (depth == 0) {
        m->hnames = h.names;
        m->hvalues = h.values;
        m->n_headers = h.n;
    } else {
        hfree(&h);
    }
    free(ct);
}

/* parseaddr after decoding: the bare address, "" when the value holds
 * more than one (Python 3.12's strict parsing). */
static char *bare_address(const char *v)
{
    char *d = mb_mail_decode_header(v ? v : "");
    char **list = mb_mail_split_addresses(d);
    char *r = mb_strdup(list[0] && !list[1] ? list[0] : "");
    mb_strv_free(list);
    free(d);
    return r;
}

void mb_mail_msg_parse(const char *raw, size_t len, mb_mail_msg *m)
{
    memset(m, 0, sizeof *m);
    walk(m, raw, len, 0, 0);
    hdrs h = {m->hnames, m->hvalues, m->n_headers};
    m->subject = mb_mail_decode_header(hget(&h, "Subject"));
    m->from_addr = bare_address(hget(&h, "From"));
    m->to_addr = bare_address(hget(&h, "To"));
    const char *cc = hget(&h, "Cc");
    char *ccd = cc ? mb_mail_decode_header(cc) : NULL;
    if (ccd && !*ccd) {
        free(ccd);
        ccd = NULL;
    }
    m->cc_addr = ccd;
    const char *date = hget(&h, "Date"), *mid = hget(&h, "Message-ID");
    m->date = mb_utf8_repair(date ? date : "", date ? strlen(date) : 0, NULL);
    m->message_id = mb_utf8_repair(mid ? mid : "", mid ? strlen(mid) : 0, NULL);
    if (!m->body_text) m->body_text = mb_strdup("");
    if (!m->body_html) m->body_html = mb_strdup("");
}

void mb_mail_msg_free(mb_mail_msg *m)
{
    free(m->subject);
    free(m->from_addr);
    free(m->to_addr);
    free(m->cc_addr);
    free(m->date);
    free(m->message_id);
    free(m->body_text);
    free(m->body_html);
    for (size_t i = 0; i < m->n_atts; i++) {
        free(m->atts[i].filename);
        free(m->atts[i].content_type);
        free(m->atts[i].data);
    }
    free(m->atts);
    hdrs h = {m->hnames, m->hvalues, m->n_headers};
    hfree(&h);
    memset(m, 0, sizeof *m);
}

char **mb_mail_split_addresses(const char *s)
{
    const char **v = NULL;
    size_t n = 0;
    mb_buf cur = {0};
    int inq = 0, depth = 0;
    for (const char *p = s;; p++) {
        char c = *p;
        if (c == '"' && !depth) inq = !inq;
        else if (c == '<' && !inq) depth++;
        else if (c == '>' && !inq) depth--;
        if (!c || (c == ',' && !inq && !depth)) {
            mb_buf_putc(&cur, 0);
            /* "Name <a@b>" -> a@b; else the trimmed text */
            char *t = cur.data;
            char *lt = strrchr(t, '<'), *gt = lt ? strchr(lt, '>') : NULL;
            char *a = lt && gt ? mb_strndup(lt + 1, (size_t)(gt - lt - 1)) : mb_strdup(t);
            size_t l = strlen(a), b = 0;
            while (l && isspace((unsigned char)a[l - 1])) a[--l] = 0;
            while (isspace((unsigned char)a[b])) b++;
            memmove(a, a + b, l - b + 1);
            if (*a && !strchr(a, ' ')) mb_strv_push(&v, &n, a);
            else free(a);
            mb_buf_reset(&cur);
            if (!c) break;
            continue;
        }
        mb_buf_putc(&cur, c);
    }
    mb_buf_free(&cur);
    if (!v) v = mb_calloc(1, sizeof *v);
    return (char **)v;
}

