/*
 * str.c - small string helpers.
 */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mb_str_has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int mb_str_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int mb_parse_size(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s)) return MB_EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return MB_EINVAL;
    uint64_t mul = 1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mul = 1ULL << 10; end++; break;
    case 'm': case 'M': mul = 1ULL << 20; end++; break;
    case 'g': case 'G': mul = 1ULL << 30; end++; break;
    case 't': case 'T': mul = 1ULL << 40; end++; break;
    default: return MB_EINVAL;
    }
    if (*end == 'i' || *end == 'I') end++;
    if (*end == 'b' || *end == 'B') end++;
    if (*end) return MB_EINVAL;
    if (v > UINT64_MAX / mul) return MB_EINVAL;
    *out = v * mul;
    return MB_OK;
}
