/*
 * rand.c - secure random bytes, UUID strings (v4, and v7 for ids that index
 * better in time order) and hex encoding.
 */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>

int mb_random_bytes(void *out, size_t n, mb_err *err)
{
    unsigned char *p = out;
    while (n) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return mb_err_sys(err, errno, "getrandom failed");
        }
        p += got;
        n -= (size_t)got;
    }
    return MB_OK;
}

void mb_hex(const void *data, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

void mb_uuid4(char out[37]) { mb_uuid4_tagged(out, -1); }

/* 16 random bytes, or the process ends: an id must never be guessable. */
static void uuid_random(unsigned char b[16])
{
    if (mb_random_bytes(b, 16, NULL) != MB_OK) {
        fprintf(stderr, "mcpbox: no randomness available\n");
        abort();
    }
}

/* Sets the version and RFC variant bits of b and writes it out. */
static void uuid_format(unsigned char b[16], int version, char out[37])
{
    b[6] = (unsigned char)((b[6] & 0x0f) | (version << 4));
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    char hex[33];
    mb_hex(b, 16, hex);
    snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
}

void mb_uuid4_tagged(char out[37], int tag)
{
    unsigned char b[16];
    uuid_random(b);
    if (tag >= 0 && tag <= 255) b[0] = (unsigned char)tag;
    uuid_format(b, 4, out);
}

void mb_uuid7(char out[37])
{
    unsigned char b[16];
    uuid_random(b);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    for (int i = 0; i < 6; i++) b[i] = (unsigned char)(ms >> (8 * (5 - i)));
    uuid_format(b, 7, out);
}

int mb_uuid_tag(const char *id)
{
    if (!mb_is_uuid(id)) return -1;
    unsigned v = 0;
    for (int i = 0; i < 2; i++)
        v = v * 16 + (unsigned)(id[i] <= '9' ? id[i] - '0' : id[i] - 'a' + 10);
    return (int)v;
}

int mb_is_uuid(const char *s)
{
    if (!s || strlen(s) != 36) return 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') return 0;
        } else if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
            return 0;
        }
    }
    return 1;
}
