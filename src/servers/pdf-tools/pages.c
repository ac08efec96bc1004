/*
 * pages.c - pdf-tools' page arithmetic: upstream's validate_page_range and
 * validate_page_size, the pager's page count, and Python's str.strip() test
 * that decides whether a PDF page "has extractable text".
 */
#include "servers/pdf-tools/pdftools.h"

#include "servers/common/pyfmt.h"

void mb_pdf_clamp_range(long long *start, long long *end, long long total)
{
    long long s = *start, e = *end;
    if (s < 1) s = 1;
    if (e < 1) e = 1;
    if (s > total) s = total;
    if (e > total) e = total;
    if (s > e) {
        long long t = s;
        s = e;
        e = t;
    }
    *start = s;
    *end = e;
}

long long mb_pdf_page_size(long long requested, mb_buf *warning)
{
    if (requested < 10 || requested > 50) {
        mb_buf_printf(warning, "Warning: Page size %lld is out of range (10-50). Using default value 10.\n",
                      requested);
        return 10;
    }
    return requested;
}

long long mb_pdf_result_pages(long long count, long long per_page)
{
    if (per_page <= 0) return 0;
    return (count + per_page - 1) / per_page;
}

/* str.isspace() for one code point */
static int py_space(unsigned cp)
{
    if (cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f)) return 1;
    switch (cp) {
    case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f:
    case 0x3000:
        return 1;
    default:
        return cp >= 0x2000 && cp <= 0x200a;
    }
}

int mb_pdf_has_text(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned cp;
        size_t k = mb_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (!k) return 1; /* an undecodable byte is not whitespace */
        if (!py_space(cp)) return 1;
        i += k;
    }
    return 0;
}
