/*
 * image.c - the pixel size, DPI, extension and content type of an image
 * from its header (PNG, JPEG, GIF, BMP; 72 dpi when the file says nothing,
 * 96 for BMP), as python-docx's and python-pptx's image classes read them.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ooxml/ooxml.h"

typedef mb_ooxml_image img;

static unsigned be16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static unsigned long be32(const unsigned char *p)
{
    return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}
static unsigned le16(const unsigned char *p) { return (unsigned)p[1] << 8 | p[0]; }
static long le32s(const unsigned char *p)
{
    return (long)(int32_t)((uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]);
}

static long round_dpi(double x) { return (long)llround(x); }

static int parse_png(const unsigned char *b, size_t n, img *m)
{
    if (n < 24 || memcmp(b, "\x89PNG\r\n\x1a\n", 8)) return -1;
    m->ext = "png";
    m->ct = "image/png";
    m->dpi_x = m->dpi_y = 72;
    for (size_t at = 8; at + 8 <= n;) {
        unsigned long len = be32(b + at);
        const unsigned char *type = b + at + 4, *data = b + at + 8;
        if (len > n - at - 8) break;
        if (!memcmp(type, "IHDR", 4) && len >= 8) {
            m->px_w = (long)be32(data);
            m->px_h = (long)be32(data + 4);
        } else if (!memcmp(type, "pHYs", 4) && len >= 9 && data[8] == 1) {
            unsigned long x = be32(data), y = be32(data + 4);
            if (x) m->dpi_x = round_dpi(x * 0.0254);
            if (y) m->dpi_y = round_dpi(y * 0.0254);
        } else if (!memcmp(type, "IEND", 4)) {
            break;
        }
        at += 12 + len;
    }
    return m->px_w > 0 && m->px_h > 0 ? 0 : -1;
}

static int parse_jpeg(const unsigned char *b, size_t n, img *m)
{
    if (n < 4 || b[0] != 0xFF || b[1] != 0xD8) return -1;
    m->ext = "jpg";
    m->ct = "image/jpeg";
    m->dpi_x = m->dpi_y = 72;
    size_t at = 2;
    while (at + 4 <= n) {
        if (b[at] != 0xFF) return -1;
        unsigned char marker = b[at + 1];
        if (marker == 0xFF) {
            at++;
            continue;
        }
        if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) {
            at += 2;
            continue;
        }
        unsigned len = be16(b + at + 2);
        if (len < 2 || at + 2 + len > n) return -1;
        const unsigned char *seg = b + at + 4;
        if (marker == 0xE0 && len >= 16 && !memcmp(seg, "JFIF\0", 5)) {
            unsigned units = seg[7], dx = be16(seg + 8), dy = be16(seg + 10);
            if (units == 1) m->dpi_x = dx, m->dpi_y = dy;
            else if (units == 2) m->dpi_x = round_dpi(dx * 2.54), m->dpi_y = round_dpi(dy * 2.54);
        } else if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
                   marker != 0xCC && len >= 7) {
            m->px_h = be16(seg + 1);
            m->px_w = be16(seg + 3);
            break;
        } else if (marker == 0xD9 || marker == 0xDA) {
            break;
        }
        at += 2 + len;
    }
    if (!m->dpi_x) m->dpi_x = 72;
    if (!m->dpi_y) m->dpi_y = 72;
    return m->px_w > 0 && m->px_h > 0 ? 0 : -1;
}

static int parse_gif(const unsigned char *b, size_t n, img *m)
{
    if (n < 10 || (memcmp(b, "GIF87a", 6) && memcmp(b, "GIF89a", 6))) return -1;
    *m = (img){.ext = "gif", .ct = "image/gif", .px_w = le16(b + 6), .px_h = le16(b + 8),
               .dpi_x = 72, .dpi_y = 72};
    return m->px_w > 0 && m->px_h > 0 ? 0 : -1;
}

static int parse_bmp(const unsigned char *b, size_t n, img *m)
{
    if (n < 46 || memcmp(b, "BM", 2)) return -1;
    long x = le32s(b + 38), y = le32s(b + 42);
    *m = (img){.ext = "bmp", .ct = "image/bmp", .px_w = le32s(b + 18), .px_h = labs(le32s(b + 22)),
               .dpi_x = x ? round_dpi(x * 0.0254) : 96, .dpi_y = y ? round_dpi(y * 0.0254) : 96};
    return m->px_w > 0 && m->px_h > 0 ? 0 : -1;
}

int mb_ooxml_image_info(const void *data, size_t n, mb_ooxml_image *out)
{
    const unsigned char *b = data;
    *out = (mb_ooxml_image){0};
    if (!parse_png(b, n, out) || !parse_jpeg(b, n, out) || !parse_gif(b, n, out) || !parse_bmp(b, n, out))
        return 0;
    return -1;
}
