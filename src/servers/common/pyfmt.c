/*
 * pyfmt.c - Python's repr/str formatting and UTF-8 decoding messages (see pyfmt.h).
 */
#include "servers/common/pyfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
            mb_utf8_put(out, c);
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
        if (p[i] < 0xC2 || p[i] >= 0xF5) {
            mb_buf_printf(out, "'utf-8' codec can't decode byte 0x%02x in position %zu: invalid start byte",
                          p[i], i);
            return (long)i;
        }
        /* the lead and its valid continuation bytes: the maximal subpart */
        size_t bad = 1;
        mb_utf8_seq(s + i, n - i, &bad);
        size_t good = bad - 1;
        const char *why = i + bad >= n
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
