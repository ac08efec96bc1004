/*
 * enhance.c - manage_image "enhance" (design_utils.enhance_image_with_pillow /
 * apply_professional_image_enhancement): Pillow 9's ImageEnhance
 * (Brightness, Contrast, Color, Sharpness: Image.blend with a degenerate
 * image), GaussianBlur (three extended box-blur passes each way, Pillow's
 * fixed-point arithmetic) and the BLUR / SHARPEN / SMOOTH / EDGE_ENHANCE
 * kernels (float kernels divided by their scale, borders copied, +0.5
 * rounding), on images decoded with libpng and libjpeg and written back with
 * libjpeg or zlib (png.c). The arithmetic follows Pillow's C code step for
 * step (float where Pillow uses float), so the pixels are Pillow's.
 *
 * Modes: 8-bit L, LA, RGB, RGBA (16-bit PNG samples keep their high byte,
 * as Pillow's unpackers do). What Pillow cannot blend or filter (palette,
 * 1-bit and 16-bit grey images) fails with Pillow's messages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
/* jpeglib.h needs size_t and FILE first */
#include <jpeglib.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/common/pyfmt.h"
#include "servers/powerpoint/pp.h"

#define MAX_IMAGE_FILE (64u << 20)
#define MAX_PIXELS (16u << 20)

typedef struct img {
    unsigned w, h, ch; /* ch: 1 L, 2 LA, 3 RGB, 4 RGBA */
    unsigned char *px;
    const char *bad; /* Pillow's error for a mode it cannot process (NULL: fine) */
} img;

/* ------------------------------------------------------------ decoding */

typedef struct mem_src {
    const unsigned char *d;
    size_t n, off;
} mem_src;

static void png_read_mem(png_structp png, png_bytep out, png_size_t len)
{
    mem_src *m = png_get_io_ptr(png);
    if (m->off + len > m->n) png_error(png, "truncated");
    memcpy(out, m->d + m->off, len);
    m->off += len;
}

static int decode_png(const unsigned char *d, size_t n, img *im, char **why)
{
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned char **rows = NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        *why = mb_strdup("out of memory");
        return -1;
    }
    mem_src m = {d, n, 0};
    if (setjmp(png_jmpbuf(png))) {
        free(rows);
        free(im->px);
        im->px = NULL;
        png_destroy_read_struct(&png, &info, NULL);
        if (!*why) *why = mb_strdup("image file is truncated");
        return -1;
    }
    png_set_read_fn(png, &m, png_read_mem);
    png_set_user_limits(png, 65535, 65535);
    png_read_info(png, info);
    unsigned w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    int depth = png_get_bit_depth(png, info), ct = png_get_color_type(png, info);
    if ((uint64_t)w * h > MAX_PIXELS) {
        *why = mb_strdup("image too large for mcpbox's enhance (16 Mpixels)");
        png_error(png, "size");
    }
    if (ct == PNG_COLOR_TYPE_PALETTE) im->bad = "palette";
    else if (ct == PNG_COLOR_TYPE_GRAY && depth == 1) im->bad = "1";
    else if (ct == PNG_COLOR_TYPE_GRAY && depth == 16) im->bad = "I;16";
    if (depth == 16) png_set_strip_16(png);
    if (ct == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (ct == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    im->w = w, im->h = h;
    im->ch = png_get_channels(png, info);
    size_t stride = png_get_rowbytes(png, info);
    if (stride != (size_t)w * im->ch) {
        *why = mb_strdup("unsupported PNG layout");
        png_error(png, "layout");
    }
    im->px = malloc(stride * h + 1);
    rows = malloc(sizeof *rows * (h ? h : 1));
    if (!im->px || !rows) png_error(png, "memory");
    for (unsigned y = 0; y < h; y++) rows[y] = im->px + stride * y;
    png_read_image(png, rows);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}

typedef struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jb;
} jerr;

static void jerr_exit(j_common_ptr c)
{
    longjmp(((jerr *)c->err)->jb, 1);
}

static int decode_jpeg(const unsigned char *d, size_t n, img *im, char **why)
{
    struct jpeg_decompress_struct c;
    jerr e;
    c.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = jerr_exit;
    if (setjmp(e.jb)) {
        jpeg_destroy_decompress(&c);
        free(im->px);
        im->px = NULL;
        if (!*why) *why = mb_strdup("image file is truncated");
        return -1;
    }
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, d, (unsigned long)n);
    jpeg_read_header(&c, TRUE);
    if (c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK) {
        *why = mb_strdup("CMYK JPEG images are not supported by mcpbox's enhance");
        longjmp(e.jb, 1);
    }
    c.out_color_space = c.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&c);
    if ((uint64_t)c.output_width * c.output_height > MAX_PIXELS) {
        *why = mb_strdup("image too large for mcpbox's enhance (16 Mpixels)");
        longjmp(e.jb, 1);
    }
    im->w = c.output_width, im->h = c.output_height, im->ch = (unsigned)c.output_components;
    size_t stride = (size_t)im->w * im->ch;
    im->px = malloc(stride * im->h + 1);
    if (!im->px) longjmp(e.jb, 1);
    while (c.output_scanline < c.output_height) {
        JSAMPROW row = im->px + stride * c.output_scanline;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    return 0;
}

/* ------------------------------------------------------------ Pillow ops */

/* ImagingBlend(im1, im2, alpha) into im2 */
static void blend(const unsigned char *a, unsigned char *b, size_t n, float alpha)
{
    if (alpha == 0.0f) {
        memcpy(b, a, n);
        return;
    }
    if (alpha == 1.0f) return;
    if (alpha >= 0 && alpha <= 1.0) {
        for (size_t i = 0; i < n; i++) b[i] = (unsigned char)((int)a[i] + alpha * ((int)b[i] - (int)a[i]));
    } else {
        for (size_t i = 0; i < n; i++) {
            float t = (float)((int)a[i] + alpha * ((int)b[i] - (int)a[i]));
            b[i] = t <= 0.0f ? 0 : t >= 255.0f ? 255 : (unsigned char)t;
        }
    }
}

static unsigned l24(const unsigned char *p)
{
    return (p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16;
}

static unsigned lum(const img *im, size_t i) /* convert("L") of pixel i */
{
    const unsigned char *p = im->px + i * im->ch;
    return im->ch >= 3 ? l24(p) : p[0];
}

static int has_alpha(const img *im) { return im->ch == 2 || im->ch == 4; }

static unsigned char *degenerate_fill(const img *im, int mode, unsigned mean)
{
    size_t n = (size_t)im->w * im->h;
    unsigned char *d = malloc(n * im->ch + 1);
    if (!d) return NULL;
    unsigned colors = has_alpha(im) ? im->ch - 1 : im->ch;
    for (size_t i = 0; i < n; i++) {
        unsigned char *o = d + i * im->ch;
        unsigned v = mode == 0 ? 0 : mode == 1 ? mean : lum(im, i);
        for (unsigned k = 0; k < colors; k++) o[k] = (unsigned char)v;
        if (has_alpha(im)) o[im->ch - 1] = im->px[i * im->ch + im->ch - 1];
    }
    return d;
}

/* 3x3 / 5x5 kernel filter (ImagingFilter3x3/5x5), per channel, borders copied */
static unsigned char *kernel_filter(const img *im, int size, const float *kern_in, float divisor)
{
    size_t n = (size_t)im->w * im->h * im->ch;
    unsigned char *out = malloc(n + 1);
    if (!out) return NULL;
    memcpy(out, im->px, n);
    if (im->w < (unsigned)size || im->h < (unsigned)size) return out;
    float k[25];
    for (int i = 0; i < size * size; i++) k[i] = kern_in[i] / divisor;
    float offset = 0.0f + 0.5f;
    int r = size / 2;
    unsigned ch = im->ch;
    for (unsigned y = (unsigned)r; y + (unsigned)r < im->h; y++) {
        for (unsigned x = (unsigned)r; x + (unsigned)r < im->w; x++) {
            for (unsigned c = 0; c < ch; c++) {
                float ss = offset;
                /* rows from y + r down to y - r, kernel rows in order */
                for (int dy = r, row = 0; dy >= -r; dy--, row++) {
                    const unsigned char *in = im->px + ((size_t)(y + (unsigned)(dy + r)) - (size_t)r) * im->w * ch;
                    float line = 0;
                    for (int dx = -r, col = 0; dx <= r; dx++, col++) {
                        float t = (float)in[((size_t)x + (size_t)(dx + r) - (size_t)r) * ch + c] * k[row * size + col];
                        line = col ? line + t : t;
                    }
                    ss += line;
                }
                out[((size_t)y * im->w + x) * ch + c] = ss <= 0.0f ? 0 : ss >= 255.0f ? 255 : (unsigned char)ss;
            }
        }
    }
    return out;
}

/* ImagingLineBoxBlur (8 bits per channel, any stride) */
static void box_line(unsigned char *out, const unsigned char *in, size_t step, int lastx, int radius, int edgeA,
                     int edgeB, uint32_t ww, uint32_t fw)
{
#define IN(i) ((uint32_t)in[(size_t)(i) * step])
#define MOVE(sub, add) acc += IN(add) - IN(sub)
#define ADD_FAR(l, rr) bulk = acc * ww + (IN(l) + IN(rr)) * fw
#define SAVE(x) out[(size_t)(x) * step] = (unsigned char)((bulk + (1u << 23)) >> 24)
    uint32_t acc = IN(0) * (uint32_t)(radius + 1), bulk;
    int x;
    for (x = 0; x < edgeA - 1; x++) acc += IN(x);
    acc += IN(lastx) * (uint32_t)(radius - edgeA + 1);
    if (edgeA <= edgeB) {
        for (x = 0; x < edgeA; x++) MOVE(0, x + radius), ADD_FAR(0, x + radius + 1), SAVE(x);
        for (x = edgeA; x < edgeB; x++) MOVE(x - radius - 1, x + radius), ADD_FAR(x - radius - 1, x + radius + 1), SAVE(x);
        for (x = edgeB; x <= lastx; x++) MOVE(x - radius - 1, lastx), ADD_FAR(x - radius - 1, lastx), SAVE(x);
    } else {
        for (x = 0; x < edgeB; x++) MOVE(0, x + radius), ADD_FAR(0, x + radius + 1), SAVE(x);
        for (x = edgeB; x < edgeA; x++) MOVE(0, lastx), ADD_FAR(0, lastx), SAVE(x);
        for (x = edgeA; x <= lastx; x++) MOVE(x - radius - 1, lastx), ADD_FAR(x - radius - 1, lastx), SAVE(x);
    }
#undef IN
#undef MOVE
#undef ADD_FAR
#undef SAVE
}

/* one pass of ImagingHorizontalBoxBlur over rows (vertical: columns) */
static int box_pass(img *im, float fr, int vertical)
{
    int radius = (int)fr;
    uint32_t ww = (uint32_t)((float)(1 << 24) / (fr * 2 + 1));
    uint32_t fw = ((1u << 24) - (uint32_t)(radius * 2 + 1) * ww) / 2;
    unsigned len = vertical ? im->h : im->w, lines = vertical ? im->w : im->h;
    int edgeA = radius + 1 < (int)len ? radius + 1 : (int)len;
    int edgeB = (int)len - radius - 1 > 0 ? (int)len - radius - 1 : 0;
    unsigned char *tmp = malloc(len + 1), *line = malloc(len + 1);
    if (!tmp || !line) {
        free(tmp), free(line);
        return -1;
    }
    size_t step = vertical ? (size_t)im->w * im->ch : im->ch;
    for (unsigned l = 0; l < lines; l++)
        for (unsigned c = 0; c < im->ch; c++) {
            unsigned char *base = im->px + (vertical ? (size_t)l * im->ch : (size_t)l * im->w * im->ch) + c;
            for (unsigned i = 0; i < len; i++) line[i] = base[(size_t)i * step];
            box_line(tmp, line, 1, (int)len - 1, radius, edgeA, edgeB, ww, fw);
            for (unsigned i = 0; i < len; i++) base[(size_t)i * step] = tmp[i];
        }
    free(tmp), free(line);
    return 0;
}

static int gaussian_blur(img *im, float radius)
{
    int passes = 3;
    float sigma2 = radius * radius / passes;
    float L = (float)sqrt(12.0 * sigma2 + 1.0);
    float l = (float)floor((L - 1.0) / 2.0);
    float a = (2 * l + 1) * (l * (l + 1) - 3 * sigma2);
    a /= 6 * (sigma2 - (l + 1) * (l + 1));
    float r = l + a;
    for (int i = 0; i < passes; i++)
        if (box_pass(im, r, 0)) return -1;
    for (int i = 0; i < passes; i++)
        if (box_pass(im, r, 1)) return -1;
    return 0;
}

static const float SMOOTH[9] = {1, 1, 1, 1, 5, 1, 1, 1, 1};
static const float SHARPEN[9] = {-2, -2, -2, -2, 32, -2, -2, -2, -2};
static const float EDGE_ENHANCE[9] = {-1, -1, -1, -1, 10, -1, -1, -1, -1};
static const float BLUR[25] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1};

/* ImageEnhance.X(img).enhance(f); kind 0 brightness, 1 contrast, 2 color, 3 sharpness */
static int enhance(img *im, int kind, double f, char **why)
{
    if (im->bad) {
        *why = mb_strdup("image has wrong mode");
        return -1;
    }
    size_t n = (size_t)im->w * im->h;
    unsigned char *deg = NULL;
    if (kind == 0) {
        deg = degenerate_fill(im, 0, 0);
    } else if (kind == 1) {
        unsigned long long hist[256] = {0};
        for (size_t i = 0; i < n; i++) hist[lum(im, i)]++;
        double sum = 0.0;
        for (int j = 0; j < 256; j++) sum += (double)j * (double)hist[j];
        double mean = n ? sum / (double)n : 0;
        deg = degenerate_fill(im, 1, (unsigned)(long)(mean + 0.5));
    } else if (kind == 2) {
        deg = degenerate_fill(im, 2, 0);
    } else {
        deg = kernel_filter(im, 3, SMOOTH, 13);
        if (deg && has_alpha(im))
            for (size_t i = 0; i < n; i++) deg[i * im->ch + im->ch - 1] = im->px[i * im->ch + im->ch - 1];
    }
    if (!deg) {
        *why = mb_strdup("out of memory");
        return -1;
    }
    blend(deg, im->px, n * im->ch, (float)f);
    free(deg);
    return 0;
}

/* ------------------------------------------------------------ saving */

static int write_all(const char *path, const char *data, size_t len, char **why)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        int e = errno;
        if (f) fclose(f);
        mb_buf r = {0};
        mb_py_repr_str(&r, path, strlen(path));
        *why = mb_asprintf("[Errno %d] %s: %s", e, strerror(e), r.data);
        mb_buf_free(&r);
        return -1;
    }
    return fclose(f) ? -1 : 0;
}

static int save_jpeg(const img *im, const char *path, char **why)
{
    if (has_alpha(im)) {
        *why = mb_asprintf("cannot write mode %s as JPEG", im->ch == 4 ? "RGBA" : "LA");
        return -1;
    }
    struct jpeg_compress_struct c;
    jerr e;
    unsigned char *mem = NULL;
    unsigned long mlen = 0;
    c.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = jerr_exit;
    if (setjmp(e.jb)) {
        jpeg_destroy_compress(&c);
        free(mem);
        *why = mb_strdup("encoder error");
        return -1;
    }
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &mem, &mlen);
    c.image_width = im->w, c.image_height = im->h;
    c.input_components = (int)im->ch;
    c.in_color_space = im->ch == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 75, TRUE);
    jpeg_start_compress(&c, TRUE);
    size_t stride = (size_t)im->w * im->ch;
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = im->px + stride * c.next_scanline;
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    int rc = write_all(path, (const char *)mem, mlen, why);
    free(mem);
    return rc;
}

static int save(const img *im, const char *path, char **why)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    const char *ext = dot && (!slash || dot > slash) ? dot : "";
    char low[16] = {0};
    for (size_t i = 0; ext[i] && i < sizeof low - 1; i++) low[i] = (char)(ext[i] >= 'A' && ext[i] <= 'Z' ? ext[i] + 32 : ext[i]);
    if (!strcmp(low, ".png")) {
        char *png = NULL;
        size_t len = 0;
        if (pp_png_write(im->px, im->w, im->h, im->ch, &png, &len)) {
            *why = mb_strdup("encoder error");
            return -1;
        }
        int rc = write_all(path, png, len, why);
        free(png);
        return rc;
    }
    if (!strcmp(low, ".jpg") || !strcmp(low, ".jpeg") || !strcmp(low, ".jpe") || !strcmp(low, ".jfif"))
        return save_jpeg(im, path, why);
    static const char *const OTHER[] = {".bmp", ".gif", ".tif", ".tiff", ".webp", ".ico", ".ppm", ".pgm",
                                        ".pbm", ".tga", ".pcx", ".im", ".sgi", ".j2k", ".jp2", ".pdf", NULL};
    for (int i = 0; OTHER[i]; i++)
        if (!strcmp(low, OTHER[i])) {
            *why = mb_asprintf("mcpbox writes enhanced images as PNG or JPEG only, not %s", ext);
            return -2;
        }
    *why = mb_asprintf("unknown file extension: %s", ext);
    return -1;
}

/* --------------------------------------------------------------- tool */

int pp_image_enhance(json_t *args, mb_mcp_result *res)
{
    const char *src = json_string_value(json_object_get(args, "image_source"));
    const char *style = json_string_value(json_object_get(args, "enhancement_style"));
    double b = 1.1, c = 1.15, s = 1.1, sh = 1.2, blur = 0;
    const char *filter = NULL;
    if (!style || strcmp(style, "presentation")) {
        b = json_number_value(json_object_get(args, "brightness"));
        c = json_number_value(json_object_get(args, "contrast"));
        s = json_number_value(json_object_get(args, "saturation"));
        sh = json_number_value(json_object_get(args, "sharpness"));
        blur = json_number_value(json_object_get(args, "blur_radius"));
        filter = json_string_value(json_object_get(args, "filter_type"));
    }
    char *data = NULL, *why = NULL;
    size_t len = 0;
    mb_err err = {0};
    img im = {0};
    int rc = 0;
    if (mb_read_file(src, MAX_IMAGE_FILE, &data, &len, &err)) {
        why = mb_strdup(err.msg);
        rc = -1;
    } else {
        const unsigned char *d = (const unsigned char *)data;
        if (len >= 8 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8)) rc = decode_png(d, len, &im, &why);
        else if (len >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) rc = decode_jpeg(d, len, &im, &why);
        else {
            mb_ooxml_image info;
            mb_buf r = {0};
            mb_py_repr_str(&r, src, strlen(src));
            if (!mb_ooxml_image_info(d, len, &info)) {
                free(data);
                mb_buf_free(&r);
                return mb_mcp_fail(res, "manage_image enhance: mcpbox reads PNG and JPEG images only (this is %s)",
                                   info.ext);
            }
            why = mb_asprintf("cannot identify image file %s", r.data);
            mb_buf_free(&r);
            rc = -1;
        }
    }
    free(data);
    if (!rc && b != 1.0) rc = enhance(&im, 0, b, &why);
    if (!rc && c != 1.0) rc = enhance(&im, 1, c, &why);
    if (!rc && s != 1.0) rc = enhance(&im, 2, s, &why);
    if (!rc && sh != 1.0) rc = enhance(&im, 3, sh, &why);
    if (!rc && blur > 0) {
        if (im.bad) why = mb_strdup("image has wrong mode"), rc = -1;
        else rc = gaussian_blur(&im, (float)blur);
    }
    if (!rc && filter && *filter) {
        char up[32] = {0};
        for (size_t i = 0; filter[i] && i < sizeof up - 1; i++)
            up[i] = (char)(filter[i] >= 'a' && filter[i] <= 'z' ? filter[i] - 32 : filter[i]);
        const float *k = !strcmp(up, "BLUR") ? BLUR : !strcmp(up, "SHARPEN") ? SHARPEN
                                                    : !strcmp(up, "SMOOTH") ? SMOOTH
                                                    : !strcmp(up, "EDGE_ENHANCE") ? EDGE_ENHANCE : NULL;
        if (k && im.bad) {
            why = mb_strdup(!strcmp(im.bad, "palette") ? "cannot filter palette images" : "image has wrong mode");
            rc = -1;
        } else if (k) {
            float div = k == BLUR ? 16 : k == SHARPEN ? 16 : k == SMOOTH ? 13 : 2;
            unsigned char *out = kernel_filter(&im, k == BLUR ? 5 : 3, k, div);
            if (out) free(im.px), im.px = out;
        }
    }
    if (!rc && im.bad) { /* saving an image Pillow never changed: mcpbox decoded it expanded */
        free(im.px);
        return mb_mcp_fail(res, "manage_image enhance: %s images are written by mcpbox only when an enhancement "
                                "applies (Pillow keeps the mode; mcpbox expands it)", im.bad);
    }
    char *out_path = NULL;
    if (!rc) {
        const char *given = json_string_value(json_object_get(args, "output_path"));
        if (given) {
            out_path = mb_strdup(given);
        } else {
            char tmpl[] = "/tmp/tmpXXXXXXXX.png";
            int fd = mkstemps(tmpl, 4);
            if (fd >= 0) close(fd), out_path = mb_strdup(tmpl);
            else why = mb_strdup(strerror(errno)), rc = -1;
        }
        if (!rc) {
            rc = save(&im, out_path, &why);
            if (rc == -2) {
                free(im.px), free(out_path);
                int r2 = mb_mcp_fail(res, "manage_image enhance: %s", why);
                free(why);
                return r2;
            }
        }
    }
    free(im.px);
    if (rc) {
        pp_errorf(res, "Failed to enhance image: %s", why ? why : "error");
        free(why), free(out_path);
        return 0;
    }
    char *msg = mb_asprintf("Enhanced image: %s", src);
    json_t *d = json_object();
    size_t ml;
    char *ok = mb_utf8_repair(msg, strlen(msg), &ml);
    json_object_set_new(d, "message", json_stringn(ok, ml));
    free(ok);
    ok = mb_utf8_repair(out_path, strlen(out_path), &ml);
    json_object_set_new(d, "enhanced_path", json_stringn(ok, ml));
    free(ok), free(msg), free(out_path);
    pp_answer(res, d);
    return 0;
}
