/*
 * pyfmt.c - Python's repr/str formatting and UTF-8 decoding messages (see pyfmt.h).
 */
#include "servers/common/pyfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the sequence starting with lead byte b and the valid range of its
 * second byte (the first continuation), per RFC 3629 as CPython checks it. */
static int utf8_shape(unsigned char b, unsigned char *lo, unsigned char *hi)
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

size_t mb_utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    if (!n) return 0;
    unsigned char lo, hi;
    int len = utf8_shape(s[0], &lo, &hi);
    if (len == 0 || (size_t)len > n) return 0;
    if (len == 1) {
        *cp = s[0];
        return 1;
    }
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    unsigned v = s[0] & (0xFF >> (len + 1));
    for (int i = 1; i < len; i++) v = (v << 6) | (s[i] & 0x3F);
    *cp = v;
    return (size_t)len;
}

size_t mb_utf8_length(const char *s, size_t n)
{
    size_t count = 0;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n; count++) {
        unsigned cp;
        size_t k = mb_utf8_decode(p + i, n - i, &cp);
        i += k ? k : 1;
    }
    return count;
}

static void put_utf8(mb_buf *b, unsigned cp)
{
    char t[4];
    size_t n;
    if (cp < 0x80) t[0] = (char)cp, n = 1;
    else if (cp < 0x800) t[0] = (char)(0xC0 | cp >> 6), t[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        t[0] = (char)(0xE0 | cp >> 12), t[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
        t[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    else
        t[0] = (char)(0xF0 | cp >> 18), t[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), t[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    mb_buf_append(b, t, n);
}

/* str.isprintable() for one code point, from the Unicode categories Python
 * treats as non-printable (Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs except space). The
 * Cf/Zs lists are complete for Unicode 14; Cn is approximated by the large
 * unassigned blocks and the noncharacters. */
static int py_printable(unsigned c)
{
    if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return 0;
    if (c < 0x300) return 1;
    static const unsigned ranges[][2] = {
        {0x600, 0x605},     {0x61C, 0x61C},     {0x6DD, 0x6DD},     {0x70F, 0x70F},
        {0x890, 0x891},     {0x8E2, 0x8E2},     {0x1680, 0x1680},   {0x180E, 0x180E},
        {0x2000, 0x200F},   {0x2028, 0x202F},   {0x205F, 0x2064},   {0x2066, 0x206F},
        {0x3000, 0x3000},   {0xD800, 0xF8FF},   {0xFDD0, 0xFDEF},   {0xFEFF, 0xFEFF},
        {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x13430, 0x13438},
        {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0x3134B, 0xE00FF}, {0xE01F0, 0x10FFFF},
    };
    if ((c & 0xFFFE) == 0xFFFE) return 0;
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (c >= ranges[i][0] && c <= ranges[i][1]) return 0;
    return 1;
}

void mb_py_repr_str(mb_buf *out, const char *s, size_t n)
{
    int has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
    char q = (has_sq && !has_dq) ? '"' : '\'';
    mb_buf_putc(out, q);
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c;
        size_t k = mb_utf8_decode(p + i, n - i, &c);
        if (!k) {
            c = 0xFFFD; /* GitPython decodes with errors="replace" */
            k = 1;
        }
        if (c == (unsigned char)q || c == '\\') {
            mb_buf_putc(out, '\\');
            mb_buf_putc(out, (char)c);
        } else if (c == '\t') {
            mb_buf_puts(out, "\\t");
        } else if (c == '\n') {
            mb_buf_puts(out, "\\n");
        } else if (c == '\r') {
            mb_buf_puts(out, "\\r");
        } else if (!py_printable(c)) {
            if (c < 0x100) mb_buf_printf(out, "\\x%02x", c);
            else if (c < 0x10000) mb_buf_printf(out, "\\u%04x", c);
            else mb_buf_printf(out, "\\U%08x", c);
        } else if (k == 1 && p[i] < 0x80) {
            mb_buf_putc(out, (char)c);
        } else {
            put_utf8(out, c);
        }
        i += k;
    }
    mb_buf_putc(out, q);
}

void mb_py_float_str(mb_buf *out, double v)
{
    if (isnan(v)) {
        mb_buf_puts(out, "nan");
        return;
    }
    if (isinf(v)) {
        mb_buf_puts(out, v < 0 ? "-inf" : "inf");
        return;
    }
    if (v == 0) {
        mb_buf_puts(out, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char tmp[64];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        if (strtod(tmp, NULL) == v) break;
    }
    /* tmp is "-d.ddde+XX": collect digits and exponent */
    char digits[32];
    int nd = 0, neg = tmp[0] == '-';
    const char *c = tmp + neg;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9') digits[nd++] = *c;
    int exp = atoi(c + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    if (neg) mb_buf_putc(out, '-');
    if (exp >= -4 && exp < 16) {
        if (exp >= nd - 1) {
            mb_buf_append(out, digits, (size_t)nd);
            for (int i = 0; i < exp - (nd - 1); i++) mb_buf_putc(out, '0');
            mb_buf_puts(out, ".0");
        } else if (exp >= 0) {
            mb_buf_append(out, digits, (size_t)exp + 1);
            mb_buf_putc(out, '.');
            mb_buf_append(out, digits + exp + 1, (size_t)(nd - exp - 1));
        } else {
            mb_buf_puts(out, "0.");
            for (int i = 0; i < -exp - 1; i++) mb_buf_putc(out, '0');
            mb_buf_append(out, digits, (size_t)nd);
        }
    } else {
        mb_buf_putc(out, digits[0]);
        if (nd > 1) {
            mb_buf_putc(out, '.');
            mb_buf_append(out, digits + 1, (size_t)nd - 1);
        }
        mb_buf_printf(out, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
}

long mb_py_utf8_error(mb_buf *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t k = mb_utf8_decode(p + i, n - i, &cp);
        if (k) {
            i += k;
            continue;
        }
        unsigned char lo, hi;
        int len = utf8_shape(p[i], &lo, &hi);
        if (len == 0) {
            mb_buf_printf(out, "'utf-8' codec can't decode byte 0x%02x in position %zu: invalid start byte",
                          p[i], i);
            return (long)i;
        }
        /* count the valid continuation bytes after the lead */
        size_t good = 0;
        for (size_t j = 1; j < (size_t)len && i + j < n; j++) {
            unsigned char a = j == 1 ? lo : 0x80, z = j == 1 ? hi : 0xBF;
            if (p[i + j] < a || p[i + j] > z) break;
            good++;
        }
        const char *why = (i + good + 1 >= n && good + 1 < (size_t)len)
                              ? "unexpected end of data"
                              : "invalid continuation byte";
        if (good == 0)
            mb_buf_printf(out, "'utf-8' codec can't decode byte 0x%02x in position %zu: %s", p[i], i,
                          why);
        else
            mb_buf_printf(out, "'utf-8' codec can't decode bytes in position %zu-%zu: %s", i,
                          i + good, why);
        return (long)i;
    }
    return -1;
}

size_t mb_py_universal_newlines(char *s, size_t n)
{
    size_t w = 0;
    for (size_t r = 0; r < n; r++) {
        if (s[r] == '\r') {
            s[w++] = '\n';
            if (r + 1 < n && s[r + 1] == '\n') r++;
        } else {
            s[w++] = s[r];
        }
    }
    if (w < n) s[w] = '\0';
    return w;
}

size_t mb_py_rstrip(const char *s, size_t n)
{
    while (n > 0) {
        unsigned char c = (unsigned char)s[n - 1];
        if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) n--;
        else break;
    }
    return n;
}
