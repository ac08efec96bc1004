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
