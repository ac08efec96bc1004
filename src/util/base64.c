/*
 * base64.c - standard base64 (RFC 4648) for the native servers, which need
 * it for images and configuration and nothing else of libcrypto.
 */
#include "util/util.h"

#include <ctype.h>
#include <stdlib.h>

static const char ALPHABET[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *mb_base64_encode(const void *data, size_t n)
{
    const unsigned char *in = data;
    char *out = mb_malloc(4 * ((n + 2) / 3) + 1), *o = out;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
        *o++ = ALPHABET[v >> 18];
        *o++ = ALPHABET[(v >> 12) & 63];
        *o++ = ALPHABET[(v >> 6) & 63];
        *o++ = ALPHABET[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0);
        *o++ = ALPHABET[v >> 18];
        *o++ = ALPHABET[(v >> 12) & 63];
        *o++ = i + 1 < n ? ALPHABET[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

static int value_of(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

int mb_base64_decode(const char *s, size_t n, unsigned char **out, size_t *len)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    size_t pad = 0;
    while (n && pad < 2 && s[n - 1] == '=') n--, pad++;
    /* what is left: 4k, 4k+2 or 4k+3 symbols; padding only completes a group */
    if (n % 4 == 1 || (pad && (n + pad) % 4)) return -1;
    unsigned char *d = mb_malloc(n / 4 * 3 + 3), *p = d;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = value_of((unsigned char)s[i]);
        if (v < 0) {
            free(d);
            return -1;
        }
        acc = (acc << 6 | (unsigned)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *p++ = (unsigned char)(acc >> bits);
        }
    }
    *p = '\0';
    *out = d;
    *len = (size_t)(p - d);
    return 0;
}
