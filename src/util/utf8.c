/*
 * utf8.c - the one UTF-8 module: strict decoding (RFC 3629: no overlongs,
 * surrogates or code points past U+10FFFF), validation, repair with U+FFFD
 * per maximal invalid subpart (WHATWG, as Node's Buffer#toString and
 * Python's errors="replace" do), truncation on character boundaries, and the
 * fixed-buffer formatting every message that reaches JSON or a log goes
 * through (mb_text_vformat).
 */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shape of a sequence starting with lead byte b: its length (0 for a
 * byte that cannot start one) and the valid range of the first continuation
 * byte; later continuation bytes are always 80..BF. */
static size_t lead_shape(unsigned char b, unsigned char *lo, unsigned char *hi)
{
    *lo = 0x80, *hi = 0xBF;
    if (b < 0x80) return 1;
    if (b < 0xC2) return 0;
    if (b < 0xE0) return 2;
    if (b < 0xF0) {
        if (b == 0xE0) *lo = 0xA0;
        if (b == 0xED) *hi = 0x9F;
        return 3;
    }
    if (b < 0xF5) {
        if (b == 0xF0) *lo = 0x90;
        if (b == 0xF4) *hi = 0x8F;
        return 4;
    }
    return 0;
}

size_t mb_utf8_seq(const char *s, size_t n, size_t *bad)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned char lo, hi;
    size_t need = n ? lead_shape(u[0], &lo, &hi) : 0;
    if (need == 1) return 1;
    if (!need) {
        if (bad) *bad = 1;
        return 0;
    }
    for (size_t j = 1; j < need; j++) {
        if (j >= n || u[j] < lo || u[j] > hi) {
            if (bad) *bad = j;
            return 0;
        }
        lo = 0x80, hi = 0xBF;
    }
    return need;
}

size_t mb_utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    size_t len = mb_utf8_seq((const char *)s, n, NULL);
    if (!len) return 0;
    unsigned v = len == 1 ? s[0] : s[0] & (0xFFu >> (len + 1));
    for (size_t i = 1; i < len; i++) v = (v << 6) | (s[i] & 0x3F);
    *cp = v;
    return len;
}

size_t mb_utf8_valid_prefix(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = mb_utf8_seq(s + i, len - i, NULL);
        if (!k) break;
        i += k;
    }
    return i;
}

int mb_utf8_valid(const char *s, size_t len) { return mb_utf8_valid_prefix(s, len) == len; }

void mb_utf8_append_repaired(mb_buf *b, const char *s, size_t len)
{
    size_t run = 0, i = 0, bad = 1;
    /* Valid stretches are copied whole; only broken sequences are replaced. */
    while (i < len) {
        size_t k = (unsigned char)s[i] < 0x80 ? 1 : mb_utf8_seq(s + i, len - i, &bad);
        if (k) {
            i += k;
            continue;
        }
        mb_buf_append(b, s + run, i - run);
        mb_buf_append(b, "\xEF\xBF\xBD", 3);
        i += bad;
        run = i;
    }
    mb_buf_append(b, s + run, len - run);
}

char *mb_utf8_repair(const char *s, size_t len, size_t *out_len)
{
    mb_buf b = {0};
    mb_buf_reserve(&b, len + 1);
    b.data[0] = '\0';
    mb_utf8_append_repaired(&b, s, len);
    if (out_len) *out_len = b.len;
    return mb_buf_steal(&b);
}

unsigned mb_utf8_next(const char *s, size_t len, size_t *i)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned c = u[*i];
    size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (*i + n > len) n = len - *i;
    unsigned cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < n; k++) cp = (cp << 6) | (u[*i + k] & 0x3F);
    *i += n ? n : 1;
    return cp;
}

void mb_utf8_put(mb_buf *b, unsigned cp)
{
    char t[4];
    size_t n;
    if (cp < 0x80) {
        t[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6)), n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12)), n = 3;
    } else {
        t[0] = (char)(0xF0 | (cp >> 18)), n = 4;
    }
    for (size_t k = 1; k < n; k++) t[k] = (char)(0x80 | ((cp >> (6 * (n - 1 - k))) & 0x3F));
    mb_buf_append(b, t, n);
}

size_t mb_utf8_length(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; count++) {
        size_t k = mb_utf8_seq(s + i, n - i, NULL);
        i += k ? k : 1;
    }
    return count;
}

size_t mb_utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max) return len;
    /* The lead of the character the limit falls in, if it is within reach. */
    size_t n = max;
    while (n > 0 && max - n < 3 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    size_t k = mb_utf8_seq(s + n, len - n, NULL);
    return k && n + k > max ? n : max;
}

/* Length of s[0..len) without a sequence cut short at its end. */
static size_t drop_partial_tail(const char *s, size_t len)
{
    size_t n = len;
    while (n > 0 && len - n < 3 && ((unsigned char)s[n - 1] & 0xC0) == 0x80) n--;
    if (n == 0) return len;
    size_t bad = 0;
    if (!mb_utf8_seq(s + n - 1, len - n + 1, &bad) && n - 1 + bad == len) return n - 1;
    return len;
}

size_t mb_utf8_copy(char *dst, size_t cap, const char *src, size_t len)
{
    if (!cap) return 0;
    size_t w = 0, i = 0, bad = 1;
    while (i < len) {
        size_t k = (unsigned char)src[i] < 0x80 ? 1 : mb_utf8_seq(src + i, len - i, &bad);
        const char *piece = k ? src + i : "\xEF\xBF\xBD";
        size_t plen = k ? k : 3;
        if (w + plen > cap - 1) break;
        memcpy(dst + w, piece, plen);
        w += plen;
        i += k ? k : bad;
    }
    dst[w] = '\0';
    return w;
}

size_t mb_text_vformat(char *dst, size_t cap, const char *fmt, va_list ap)
{
    if (!cap) return 0;
    /* Format into a scratch buffer first: the arguments may point into dst
     * (a message wrapped in place), and the raw text may be cut mid-character
     * or hold bytes that are not UTF-8 at all. */
    char scratch[4096];
    char *tmp = scratch;
    size_t tcap = sizeof scratch;
    if (cap * 4 > tcap) {
        tcap = cap * 4;
        tmp = mb_malloc(tcap);
    }
    int n = vsnprintf(tmp, tcap, fmt, ap);
    size_t len = n < 0 ? 0 : (size_t)n < tcap ? (size_t)n : tcap - 1;
    if (n >= 0 && (size_t)n >= tcap) len = drop_partial_tail(tmp, len);
    size_t w = mb_utf8_copy(dst, cap, tmp, len);
    if (tmp != scratch) free(tmp);
    return w;
}

size_t mb_text_format(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t w = mb_text_vformat(dst, cap, fmt, ap);
    va_end(ap);
    return w;
}
