/*
 * test_powerpoint.c - the powerpoint server's pure helpers: upstream's text
 * size estimate and word wrap (TextSizeCalculator, values worked out by hand
 * from its character widths), the PNG writer (decoded back with zlib) and
 * the gradient pixels, and the xlsx bytes excel's workbook code gives a
 * chart (a zip that opens with the OOXML layer and holds the cells).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "servers/excel/excel.h"
#include "servers/powerpoint/pp.h"

static void test_text_estimate(void **state)
{
    (void)state;
    /* "Hello World": 3 narrow (l l l) 0.6, W 1.3, space 0.5, 6 normal = 9.6 units;
     * 44pt: 9.6 * 44 * 0.6 = 253.44 <= 8in * 72 * 0.9; height 44 * 1.2 * 1.3 <= 2in */
    assert_int_equal(pp_optimal_font_size("Hello World", 8.0, 2.0, 18, 44), 44);
    /* one inch wide: 9.6 * s * 0.6 <= 64.8 gives s <= 11.25 */
    assert_int_equal(pp_optimal_font_size("Hello World", 1.0, 2.0, 8, 44), 11);
    /* nothing fits: the minimum */
    assert_int_equal(pp_optimal_font_size("Hello World", 0.1, 0.1, 8, 44), 8);
    /* lines count: 3 lines at 18pt need 3 * 18 * 1.56 = 84.24pt > 64.8 (1in * 0.9) */
    assert_int_equal(pp_optimal_font_size("a\nb\nc", 8.0, 1.0, 8, 18), 13);
    assert_int_equal(pp_py_len("\xc3\xa9t\xc3\xa9"), 3);
}

static void test_wrap(void **state)
{
    (void)state;
    /* "aaaa": 4 units; at 10pt 24pt per word, 2 words + space = 8.5 units = 51pt;
     * 1 inch = 72pt: two words fit a line, three (13 units = 78pt) do not */
    char *w = pp_wrap_text("aaaa aaaa aaaa aaaa aaaa", 1.0, 10);
    assert_string_equal(w, "aaaa aaaa\naaaa aaaa\naaaa");
    free(w);
    /* a word longer than the line stands alone; whitespace runs collapse */
    w = pp_wrap_text("x  \t\n yyyyyyyyyyyyyyy z", 1.0, 10);
    assert_string_equal(w, "x\nyyyyyyyyyyyyyyy\nz");
    free(w);
    w = pp_wrap_text("   ", 1.0, 10);
    assert_string_equal(w, "");
    free(w);
    w = pp_wrap_text("", 1.0, 10);
    assert_string_equal(w, "");
    free(w);
    /* U+3000 (ideographic space) separates words as str.split() does */
    w = pp_wrap_text("a\xe3\x80\x80" "b", 10.0, 10);
    assert_string_equal(w, "a b");
    free(w);
}

/* The pixels of a PNG the writer made: IDAT inflated, filter bytes 0. */
static unsigned char *png_pixels(const char *png, size_t len, unsigned *w, unsigned *h, unsigned ch)
{
    const unsigned char *p = (const unsigned char *)png;
    assert_memory_equal(p, "\x89PNG\r\n\x1a\n", 8);
    size_t off = 8;
    mb_buf z = {0};
    while (off + 12 <= len) {
        uint32_t n = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 | p[off + 3];
        const unsigned char *t = p + off + 4;
        uLong crc = crc32(0, t, 4 + n);
        uint32_t want = (uint32_t)t[4 + n] << 24 | (uint32_t)t[5 + n] << 16 | (uint32_t)t[6 + n] << 8 | t[7 + n];
        assert_int_equal((uint32_t)crc, want);
        if (!memcmp(t, "IHDR", 4)) {
            *w = (uint32_t)t[4] << 24 | (uint32_t)t[5] << 16 | (uint32_t)t[6] << 8 | t[7];
            *h = (uint32_t)t[8] << 24 | (uint32_t)t[9] << 16 | (uint32_t)t[10] << 8 | t[11];
        } else if (!memcmp(t, "IDAT", 4)) {
            mb_buf_append(&z, (const char *)t + 4, n);
        }
        off += 12 + n;
    }
    uLongf rn = (uLongf)(*w * ch + 1) * *h;
    unsigned char *raw = malloc(rn);
    assert_int_equal(uncompress(raw, &rn, (const Bytef *)z.data, (uLong)z.len), Z_OK);
    mb_buf_free(&z);
    unsigned char *px = malloc((size_t)*w * *h * ch);
    for (unsigned y = 0; y < *h; y++) {
        assert_int_equal(raw[y * (*w * ch + 1)], 0);
        memcpy(px + (size_t)y * *w * ch, raw + y * (*w * ch + 1) + 1, (size_t)*w * ch);
    }
    free(raw);
    return px;
}

static void test_png_and_gradient(void **state)
{
    (void)state;
    unsigned char la[2 * 3 * 2];
    for (size_t i = 0; i < sizeof la; i++) la[i] = (unsigned char)(i * 21);
    char *png = NULL;
    size_t len = 0;
    assert_int_equal(pp_png_write(la, 3, 2, 2, &png, &len), 0);
    assert_int_equal((unsigned char)png[8 + 4 + 4 + 9], 4); /* colour type grey + alpha */
    unsigned w = 0, h = 0;
    unsigned char *px = png_pixels(png, len, &w, &h, 2);
    assert_int_equal(w, 3);
    assert_int_equal(h, 2);
    assert_memory_equal(px, la, sizeof la);
    free(px), free(png);
    assert_int_not_equal(pp_png_write(la, 1, 1, 5, &png, &len), 0);

    int a[3] = {255, 0, 0}, b[3] = {0, 0, 255};
    assert_int_equal(pp_gradient_png(a, b, "diagonal", &png, &len), 0);
    px = png_pixels(png, len, &w, &h, 3);
    assert_int_equal(w, 1920);
    assert_int_equal(h, 1080);
    /* int(255 * (1 - r) + 0 * r), r = (x + y) / 3000 */
    const unsigned char *p = px + ((size_t)500 * 1920 + 1000) * 3;
    double r = 1500.0 / 3000.0;
    assert_int_equal(p[0], (int)(255 * (1 - r)));
    assert_int_equal(p[2], (int)(255 * r));
    free(px), free(png);
    /* out-of-range colours are clipped as Pillow clips ink */
    int big[3] = {400, -20, 128};
    assert_int_equal(pp_gradient_png(big, big, "vertical", &png, &len), 0);
    px = png_pixels(png, len, &w, &h, 3);
    assert_int_equal(px[0], 255);
    assert_int_equal(px[1], 0);
    assert_int_equal(px[2], 128);
    free(px), free(png);
}

static void test_chart_workbook_bytes(void **state)
{
    (void)state;
    xl_book *b = xl_book_new("", "Sheet1");
    char *why = NULL;
    assert_int_equal(xl_sheet_load(b, &b->sheets[0], &why), 0);
    json_t *v = json_string("Sales");
    assert_int_equal(xl_cell_set(b, &b->sheets[0], 1, 2, v, &why), 0);
    json_decref(v);
    v = json_real(20.5);
    assert_int_equal(xl_cell_set(b, &b->sheets[0], 2, 2, v, &why), 0);
    json_decref(v);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(xl_book_bytes(b, &data, &len, &why), 0);
    xl_book_free(b);
    char path[] = "/tmp/mb-pp-XXXXXX.xlsx";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
    free(data);
    assert_int_equal(xl_book_open(path, path, &b, &why), 0);
    xl_sheet *s = xl_sheet_find(b, "Sheet1");
    assert_non_null(s);
    assert_int_equal(xl_sheet_load(b, s, &why), 0);
    json_t *got = xl_cell_value(b, s, xl_cell_get(s, 1, 2), 1, 2);
    assert_string_equal(json_string_value(got), "Sales");
    json_decref(got);
    got = xl_cell_value(b, s, xl_cell_get(s, 2, 2), 2, 2);
    assert_true(json_real_value(got) == 20.5);
    json_decref(got);
    xl_book_free(b);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_estimate),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_png_and_gradient),
        cmocka_unit_test(test_chart_workbook_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
