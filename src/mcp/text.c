/*
 * text.c - text rules of the runtimes the mirrored servers run on: UTF-8
 * decoding with U+FFFD replacement (WHATWG, as Node's Buffer#toString),
 * UTF-16 lengths (String#length), JavaScript's whitespace set (trim, \s) and
 * String#toLowerCase.
 *
 * toLowerCase uses glibc's Unicode tables through towlower_l() on a C.UTF-8
 * locale object created once (immutable, so sharing it is safe), plus the
 * one-to-many mapping of U+0130. Context-sensitive final sigma is not done.
 */
#include "mcp/mcp.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

char *mb_memdup0(const void *p, size_t n)
{
    char *r = mb_malloc(n + 1);
    if (n) memcpy(r, p, n);
    r[n] = '\0';
    return r;
}

/* ------------------------------------------------------------- decoding */

/* Length of the valid sequence at s[i], or 0 if it is not valid, in which
 * case *bad is the length of the maximal subpart to replace. */
static size_t seq_len(const unsigned char *s, size_t len, size_t i, size_t *bad)
{
    unsigned b = s[i];
    if (b < 0x80) return 1;
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) need = 1;
    else if (b == 0xE0) need = 2, lo = 0xA0;
    else if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) need = 2;
    else if (b == 0xED) need = 2, hi = 0x9F;
    else if (b == 0xF0) need = 3, lo = 0x90;
    else if (b >= 0xF1 && b <= 0xF3) need = 3;
    else if (b == 0xF4) need = 3, hi = 0x8F;
    else {
        *bad = 1;
        return 0;
    }
    size_t j = i + 1;
    for (size_t k = 0; k < need; k++, j++) {
        if (j >= len || s[j] < lo || s[j] > hi) {
            *bad = j - i;
            return 0;
        }
        lo = 0x80, hi = 0xBF;
    }
    return need + 1;
}

int mb_utf8_valid(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, bad;
    while (i < len) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = seq_len(u, len, i, &bad);
        if (!n) return 0;
        i += n;
    }
    return 1;
}

char *mb_utf8_repair(const char *s, size_t len, size_t *out_len)
{
    const unsigned char *u = (const unsigned char *)s;
    mb_buf b = {0};
    mb_buf_reserve(&b, len + 1);
    b.data[0] = '\0'; /* reserve leaves the buffer unterminated */
    size_t i = 0, run = 0, bad;
    /* Valid stretches are copied whole; only broken sequences are replaced. */
    while (i < len) {
        size_t n = u[i] < 0x80 ? 1 : seq_len(u, len, i, &bad);
        if (n) {
            i += n;
            continue;
        }
        mb_buf_append(&b, s + run, i - run);
        mb_buf_append(&b, "\xEF\xBF\xBD", 3);
        i += bad;
        run = i;
    }
    mb_buf_append(&b, s + run, len - run);
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
    if (cp < 0x80) {
        mb_buf_putc(b, (char)cp);
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6));
        t[1] = (char)(0x80 | (cp & 0x3F));
        mb_buf_append(b, t, 2);
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12));
        t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (char)(0x80 | (cp & 0x3F));
        mb_buf_append(b, t, 3);
    } else {
        t[0] = (char)(0xF0 | (cp >> 18));
        t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[3] = (char)(0x80 | (cp & 0x3F));
        mb_buf_append(b, t, 4);
    }
}

size_t mb_utf16_len(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) == 0x80) continue; /* continuation byte */
        n += c >= 0xF0 ? 2 : 1;
    }
    return n;
}

/* ------------------------------------------------------------ whitespace */

int mb_js_is_space(unsigned cp)
{
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

size_t mb_js_space_prefix(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        if (!mb_js_is_space(mb_utf8_next(s, len, &j))) break;
        i = j;
    }
    return i;
}

size_t mb_js_space_suffix(const char *s, size_t len)
{
    size_t end = len;
    while (end > 0) {
        size_t start = end - 1;
        while (start > 0 && ((unsigned char)s[start] & 0xC0) == 0x80) start--;
        size_t j = start;
        if (!mb_js_is_space(mb_utf8_next(s, len, &j))) break;
        end = start;
    }
    return len - end;
}

/* ------------------------------------------------------------ lower case */

static locale_t utf8_locale(void)
{
    static locale_t loc; /* created once, never changed: safe to share */
    if (!loc) {
        loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
        if (!loc) loc = newlocale(LC_CTYPE_MASK, "C", (locale_t)0);
    }
    return loc;
}

char *mb_js_lower(const char *s, size_t len, size_t *out_len)
{
    mb_buf b = {0};
    mb_buf_reserve(&b, len + 1);
    b.data[0] = '\0'; /* reserve leaves the buffer unterminated */
    locale_t loc = utf8_locale();
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            mb_buf_putc(&b, (char)(c >= 'A' && c <= 'Z' ? c + 32 : c));
            i++;
            continue;
        }
        unsigned cp = mb_utf8_next(s, len, &i);
        if (cp == 0x130) {
            mb_buf_append(&b, "i\xCC\x87", 3);
            continue;
        }
        mb_utf8_put(&b, loc ? (unsigned)towlower_l((wint_t)cp, loc) : cp);
    }
    if (out_len) *out_len = b.len;
    return mb_buf_steal(&b);
}
