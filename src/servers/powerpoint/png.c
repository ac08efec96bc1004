/*
 * png.c - the gradient pictures upstream's design_utils draws with Pillow
 * (create_gradient_image: a 1920x1080 RGB image, colours interpolated per
 * column, per row, or per pixel along x + y) encoded as PNG with zlib: the
 * same pixels, not Pillow's bytes (its filter choices and chunk layout
 * differ; the picture is equal).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "servers/powerpoint/pp.h"

static void be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static void chunk(mb_buf *b, const char *type, const unsigned char *data, size_t n)
{
    unsigned char h[8];
    be32(h, (uint32_t)n);
    memcpy(h + 4, type, 4);
    mb_buf_append(b, (const char *)h, 8);
    if (n) mb_buf_append(b, (const char *)data, n);
    uLong crc = crc32(0L, (const Bytef *)type, 4);
    if (n) crc = crc32(crc, data, (uInt)n);
    unsigned char c[4];
    be32(c, (uint32_t)crc);
    mb_buf_append(b, (const char *)c, 4);
}

int pp_png_rgb(const unsigned char *rgb, unsigned w, unsigned h, char **out, size_t *len)
{
    return pp_png_write(rgb, w, h, 3, out, len);
}

int pp_png_write(const unsigned char *rgb, unsigned w, unsigned h, unsigned ch, char **out, size_t *len)
{
    static const unsigned char CT[5] = {0, 0, 4, 2, 6}; /* grey, grey+alpha, RGB, RGBA */
    if (ch < 1 || ch > 4) return -1;
    size_t row = (size_t)w * ch + 1, raw_n = row * h;
    unsigned char *raw = malloc(raw_n);
    if (!raw) return -1;
    for (unsigned y = 0; y < h; y++) {
        raw[y * row] = 0; /* filter: none */
        memcpy(raw + y * row + 1, rgb + (size_t)y * w * ch, (size_t)w * ch);
    }
    uLongf zn = compressBound((uLong)raw_n);
    unsigned char *z = malloc(zn);
    if (!z || compress2(z, &zn, raw, (uLong)raw_n, 6) != Z_OK) {
        free(raw), free(z);
        return -1;
    }
    free(raw);
    mb_buf b = {0};
    mb_buf_append(&b, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ihdr[13];
    be32(ihdr, w);
    be32(ihdr + 4, h);
    ihdr[8] = 8, ihdr[9] = CT[ch], ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0; /* 8 bits per sample */
    chunk(&b, "IHDR", ihdr, sizeof ihdr);
    chunk(&b, "IDAT", z, zn);
    chunk(&b, "IEND", NULL, 0);
    free(z);
    *out = b.data;
    *len = b.len;
    return 0;
}

/* int(a * (1 - ratio) + b * ratio) for each channel, clipped to 0..255 as
 * Pillow's ink conversion clips. */
static void mix(const int a[3], const int b[3], double ratio, unsigned char *px)
{
    for (int i = 0; i < 3; i++) {
        double v = a[i] * (1 - ratio) + b[i] * ratio;
        long x = v > 1e6 ? 1000000 : v < -1e6 ? -1000000 : (long)v;
        px[i] = (unsigned char)(x < 0 ? 0 : x > 255 ? 255 : x);
    }
}

int pp_gradient_png(const int start[3], const int end[3], const char *direction, char **out, size_t *len)
{
    const unsigned w = 1920, h = 1080;
    unsigned char *px = malloc((size_t)w * h * 3);
    if (!px) return -1;
    if (!strcmp(direction, "horizontal")) {
        for (unsigned x = 0; x < w; x++) {
            unsigned char c[3];
            mix(start, end, (double)x / w, c);
            for (unsigned y = 0; y < h; y++) memcpy(px + ((size_t)y * w + x) * 3, c, 3);
        }
    } else if (!strcmp(direction, "vertical")) {
        for (unsigned y = 0; y < h; y++) {
            unsigned char c[3];
            mix(start, end, (double)y / h, c);
            for (unsigned x = 0; x < w; x++) memcpy(px + ((size_t)y * w + x) * 3, c, 3);
        }
    } else {
        for (unsigned y = 0; y < h; y++)
            for (unsigned x = 0; x < w; x++) mix(start, end, (double)(x + y) / (w + h), px + ((size_t)y * w + x) * 3);
    }
    int rc = pp_png_rgb(px, w, h, out, len);
    free(px);
    return rc;
}
