/*
 * tools_fonts.c - manage_fonts (tools/professional_tools.py on
 * design_utils.py analyze_font_file / optimize_font_for_presentation /
 * get_font_recommendations, which use fontTools).
 *
 * analyze reads the sfnt itself (TrueType/OpenType, and WOFF 1 with zlib):
 * the last name record with nameID 1 and 2 decoded as fontTools decodes
 * them (UTF-16BE for Unicode and Windows, Mac Roman for Mac encoding 0), the
 * glyph count from maxp, the file size; fontTools' error texts for what is
 * not a font. optimize with text_content subsets the font to the text's
 * characters with HarfBuzz's hb-subset (fontTools' Subsetter upstream: the
 * same coverage, other bytes); without text it writes the font as it is
 * (fontTools would recompile the same tables). Without output_path the font
 * goes to a new /tmp/tmpXXXXXXXX.ttf, as tempfile.mktemp names it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <hb-subset.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "servers/common/pyfmt.h"
#include "servers/powerpoint/pp.h"

#define MAX_FONT (64u << 20)

static json_t *jstr(const char *s)
{
    size_t n;
    char *ok = mb_utf8_repair(s, strlen(s), &n);
    json_t *v = json_stringn(ok, n);
    free(ok);
    return v;
}

static unsigned u16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static uint32_t u32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* Python's OSError text: "[Errno N] strerror: 'path'". */
static char *os_error(int err, const char *path)
{
    mb_buf r = {0};
    mb_py_repr_str(&r, path, strlen(path));
    char *s = mb_asprintf("[Errno %d] %s: %s", err, strerror(err), r.data);
    mb_buf_free(&r);
    return s;
}

/* TTFont(path): the bytes, or NULL with *why as fontTools / Python say it. */
static unsigned char *load_font(const char *path, size_t *len, char **why)
{
    struct stat st;
    if (stat(path, &st)) {
        *why = os_error(errno, path);
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        *why = os_error(EISDIR, path);
        return NULL;
    }
    char *data = NULL;
    mb_err err = {0};
    if (mb_read_file(path, MAX_FONT, &data, len, &err)) {
        *why = mb_strdup(err.msg);
        return NULL;
    }
    unsigned char *d = (unsigned char *)data;
    if (*len >= 4 && !memcmp(d, "ttcf", 4)) {
        unsigned n = *len >= 12 ? (unsigned)u32(d + 8) : 0;
        *why = mb_asprintf("specify a font number between 0 and %d (inclusive)", (int)n - 1);
    } else if (*len >= 4 && !memcmp(d, "wOF2", 4)) {
        *why = mb_strdup("No module named brotli");
    } else if (*len < 12) {
        *why = mb_strdup("Not a TrueType or OpenType font (not enough data)");
    } else if (memcmp(d, "\0\1\0\0", 4) && memcmp(d, "OTTO", 4) && memcmp(d, "true", 4) &&
               memcmp(d, "wOFF", 4)) {
        *why = mb_strdup("Not a TrueType or OpenType font (bad sfntVersion)");
    } else {
        return d;
    }
    free(data);
    return NULL;
}

/* A table's bytes (caller frees), inflating WOFF tables; NULL when absent
 * or broken. */
static unsigned char *table(const unsigned char *d, size_t len, const char *tag, size_t *n)
{
    int woff = !memcmp(d, "wOFF", 4);
    size_t hdr = woff ? 44 : 12, rec = woff ? 20 : 16;
    unsigned count = u16(d + (woff ? 12 : 4));
    for (unsigned i = 0; i < count; i++) {
        const unsigned char *r = d + hdr + (size_t)i * rec;
        if ((size_t)(r - d) + rec > len) return NULL;
        if (memcmp(r, tag, 4)) continue;
        if (!woff) {
            uint32_t off = u32(r + 8), l = u32(r + 12);
            if ((uint64_t)off + l > len) return NULL;
            unsigned char *out = malloc(l + 1);
            if (!out) return NULL;
            memcpy(out, d + off, l);
            *n = l;
            return out;
        }
        uint32_t off = u32(r + 4), cl = u32(r + 8), ol = u32(r + 12);
        if ((uint64_t)off + cl > len || ol > MAX_FONT) return NULL;
        unsigned char *out = malloc((size_t)ol + 1);
        if (!out) return NULL;
        if (cl == ol) {
            memcpy(out, d + off, ol);
        } else {
            uLongf got = ol;
            if (uncompress(out, &got, d + off, cl) != Z_OK || got != ol) {
                free(out);
                return NULL;
            }
        }
        *n = ol;
        return out;
    }
    return NULL;
}

/* Mac OS Roman, 0x80-0xFF */
static const unsigned short MAC_ROMAN[128] = {
    0xC4, 0xC5, 0xC7, 0xC9, 0xD1, 0xD6, 0xDC, 0xE1, 0xE0, 0xE2, 0xE4, 0xE3, 0xE5, 0xE7, 0xE9, 0xE8,
    0xEA, 0xEB, 0xED, 0xEC, 0xEE, 0xEF, 0xF1, 0xF3, 0xF2, 0xF4, 0xF6, 0xF5, 0xFA, 0xF9, 0xFB, 0xFC,
    0x2020, 0xB0, 0xA2, 0xA3, 0xA7, 0x2022, 0xB6, 0xDF, 0xAE, 0xA9, 0x2122, 0xB4, 0xA8, 0x2260, 0xC6, 0xD8,
    0x221E, 0xB1, 0x2264, 0x2265, 0xA5, 0xB5, 0x2202, 0x2211, 0x220F, 0x3C0, 0x222B, 0xAA, 0xBA, 0x3A9, 0xE6, 0xF8,
    0xBF, 0xA1, 0xAC, 0x221A, 0x192, 0x2248, 0x2206, 0xAB, 0xBB, 0x2026, 0xA0, 0xC0, 0xC3, 0xD5, 0x152, 0x153,
    0x2013, 0x2014, 0x201C, 0x201D, 0x2018, 0x2019, 0xF7, 0x25CA, 0xFF, 0x178, 0x2044, 0x20AC, 0x2039, 0x203A, 0xFB01, 0xFB02,
    0x2021, 0xB7, 0x201A, 0x201E, 0x2030, 0xC2, 0xCA, 0xC1, 0xCB, 0xC8, 0xCD, 0xCE, 0xCF, 0xCC, 0xD3, 0xD4,
    0xF8FF, 0xD2, 0xDA, 0xDB, 0xD9, 0x131, 0x2C6, 0x2DC, 0xAF, 0x2D8, 0x2D9, 0x2DA, 0xB8, 0x2DD, 0x2DB, 0x2C7,
};

static void put_cp(mb_buf *b, unsigned cp)
{
    char u[4];
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (n == 1) u[0] = (char)cp;
    else if (n == 2) u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F));
    else if (n == 3)
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[2] = (char)(0x80 | (cp & 0x3F));
    else
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F));
    mb_buf_append(b, u, n);
}

/* str(NameRecord) */
static char *name_str(unsigned plat, unsigned enc, const unsigned char *s, size_t n)
{
    mb_buf b = {0};
    int utf16 = plat == 0 || (plat == 3 && (enc == 0 || enc == 1 || enc == 10));
    if (utf16) {
        for (size_t i = 0; i + 1 < n; i += 2) {
            unsigned cp = u16(s + i);
            if (cp >= 0xD800 && cp < 0xDC00 && i + 3 < n && u16(s + i + 2) >= 0xDC00 && u16(s + i + 2) < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (u16(s + i + 2) - 0xDC00);
                i += 2;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                mb_buf_printf(&b, "\\x%02x\\x%02x", s[i], s[i + 1]); /* backslashreplace */
                continue;
            }
            put_cp(&b, cp);
        }
        if (n % 2) mb_buf_printf(&b, "\\x%02x", s[n - 1]);
    } else if (plat == 1 && enc == 0) {
        for (size_t i = 0; i < n; i++) put_cp(&b, s[i] < 0x80 ? s[i] : MAC_ROMAN[s[i] - 0x80]);
    } else {
        for (size_t i = 0; i < n; i++) put_cp(&b, s[i]); /* latin-1 */
    }
    char *out = b.data ? b.data : mb_strdup("");
    size_t ol;
    char *ok = mb_utf8_repair(out, strlen(out), &ol);
    free(out);
    return ok;
}

/* analyze_font_file(font_path) */
static json_t *analyze(const char *path)
{
    json_t *r = json_object();
    json_object_set_new(r, "file_path", jstr(path));
    size_t len = 0;
    char *why = NULL;
    unsigned char *d = load_font(path, &len, &why);
    size_t nn = 0, mn = 0;
    unsigned char *name = d ? table(d, len, "name", &nn) : NULL;
    unsigned char *maxp = name ? table(d, len, "maxp", &mn) : NULL;
    if (d && !name) why = mb_strdup("\"'name' table not found.\"");
    else if (d && (!maxp || mn < 6)) why = mb_strdup("\"'maxp' table not found.\"");
    if (why) {
        json_object_set_new(r, "analysis_success", json_false());
        json_object_set_new(r, "error", jstr(why));
        free(why), free(d), free(name), free(maxp);
        return r;
    }
    char *family = mb_strdup(""), *style = mb_strdup("");
    if (nn >= 6) {
        unsigned count = u16(name + 2), soff = u16(name + 4);
        for (unsigned i = 0; i < count && 6 + (size_t)(i + 1) * 12 <= nn; i++) {
            const unsigned char *rec = name + 6 + (size_t)i * 12;
            unsigned id = u16(rec + 6), l = u16(rec + 8), off = u16(rec + 10);
            if (id != 1 && id != 2) continue;
            if ((size_t)soff + off + l > nn) continue;
            char *s = name_str(u16(rec), u16(rec + 2), name + soff + off, l);
            if (id == 1) free(family), family = s;
            else free(style), style = s;
        }
    }
    json_object_set_new(r, "font_family", json_string(family));
    json_object_set_new(r, "font_style", json_string(style));
    json_object_set_new(r, "num_glyphs", json_integer(u16(maxp + 4)));
    struct stat st;
    json_object_set_new(r, "file_size", json_integer(stat(path, &st) ? 0 : (json_int_t)st.st_size));
    json_object_set_new(r, "analysis_success", json_true());
    free(family), free(style), free(d), free(name), free(maxp);
    return r;
}

/* optimize_font_for_presentation: the path written, or NULL with *why. */
static char *optimize(const char *path, const char *out_path, const char *text, char **why)
{
    size_t len = 0;
    unsigned char *d = load_font(path, &len, why);
    if (!d) return NULL;
    const char *bytes = (const char *)d;
    size_t blen = len;
    hb_blob_t *sub_blob = NULL;
    if (text && *text) {
        if (!memcmp(d, "wOFF", 4)) {
            free(d);
            *why = mb_strdup("subsetting a WOFF font is not supported by mcpbox (save it as .ttf/.otf first)");
            return NULL;
        }
        hb_blob_t *blob = hb_blob_create((const char *)d, (unsigned)len, HB_MEMORY_MODE_READONLY, NULL, NULL);
        hb_face_t *face = hb_face_create(blob, 0);
        hb_subset_input_t *in = hb_subset_input_create_or_fail();
        hb_face_t *sub = NULL;
        if (in) {
            hb_set_t *u = hb_subset_input_unicode_set(in);
            for (const char *s = text; *s;) {
                const unsigned char *p = (const unsigned char *)s;
                unsigned c = p[0], n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
                unsigned cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
                for (unsigned i = 1; i < n && p[i]; i++) cp = (cp << 6) | (p[i] & 0x3F);
                for (unsigned i = 0; i < n && *s; i++) s++;
                hb_set_add(u, cp);
            }
            sub = hb_subset_or_fail(face, in);
            hb_subset_input_destroy(in);
        }
        if (sub) {
            sub_blob = hb_face_reference_blob(sub);
            unsigned n = 0;
            bytes = hb_blob_get_data(sub_blob, &n);
            blen = n;
            hb_face_destroy(sub);
        }
        hb_face_destroy(face);
        hb_blob_destroy(blob);
        if (!sub_blob || !blen) {
            hb_blob_destroy(sub_blob);
            free(d);
            *why = mb_strdup("the font could not be subset (HarfBuzz hb-subset failed)");
            return NULL;
        }
    }
    char *dest = NULL;
    if (out_path) {
        dest = mb_strdup(out_path);
        int fd = open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) *why = os_error(errno, dest);
        else {
            size_t off = 0;
            while (off < blen) {
                ssize_t w = write(fd, bytes + off, blen - off);
                if (w <= 0) {
                    if (w < 0 && errno == EINTR) continue;
                    *why = os_error(errno ? errno : EIO, dest);
                    break;
                }
                off += (size_t)w;
            }
            close(fd);
        }
    } else {
        char tmpl[] = "/tmp/tmpXXXXXXXX.ttf";
        int fd = mkstemps(tmpl, 4);
        if (fd < 0) *why = os_error(errno, "/tmp");
        else {
            dest = mb_strdup(tmpl);
            size_t off = 0;
            while (off < blen) {
                ssize_t w = write(fd, bytes + off, blen - off);
                if (w <= 0) {
                    if (w < 0 && errno == EINTR) continue;
                    *why = os_error(errno ? errno : EIO, dest);
                    break;
                }
                off += (size_t)w;
            }
            close(fd);
        }
    }
    hb_blob_destroy(sub_blob);
    free(d);
    if (*why) {
        free(dest);
        return NULL;
    }
    return dest;
}

int pp_t_manage_fonts(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    const char *op = json_string_value(json_object_get(args, "operation"));
    const char *path = json_string_value(json_object_get(args, "font_path"));
    if (!strcmp(op, "analyze")) {
        pp_answer(res, analyze(path));
        return 0;
    }
    if (!strcmp(op, "optimize")) {
        char *why = NULL;
        char *out = optimize(path, json_string_value(json_object_get(args, "output_path")),
                             json_string_value(json_object_get(args, "text_content")), &why);
        if (!out) {
            pp_errorf(res, "Failed to optimize font: Font optimization failed: %s", why);
            free(why);
            return 0;
        }
        char *msg = mb_asprintf("Optimized font: %s", path);
        json_t *d = json_object();
        json_object_set_new(d, "message", jstr(msg));
        json_object_set_new(d, "original_path", jstr(path));
        json_object_set_new(d, "optimized_path", jstr(out));
        free(msg), free(out);
        pp_answer(res, d);
        return 0;
    }
    if (!strcmp(op, "recommend")) {
        const char *type = json_string_value(json_object_get(args, "presentation_type"));
        json_t *rec = json_object();
        int business = !strcmp(type, "business");
        json_object_set_new(rec, "suitable_for",
                            business ? json_pack("[sss]", "titles", "body_text", "captions") : json_array());
        json_object_set_new(rec, "recommended_sizes",
                            business ? json_pack("{s:s,s:s,s:s}", "title", "24-36pt", "subtitle", "16-20pt", "body",
                                                 "12-16pt")
                                     : json_object());
        json_object_set_new(rec, "usage_tips",
                            business ? json_pack("[sss]", "Use for professional presentations",
                                                 "Good for readability at distance", "Works well with business themes")
                                     : json_array());
        json_object_set_new(rec, "compatibility", json_string("good"));
        json_t *d = json_object();
        json_object_set_new(d, "font_analysis", analyze(path));
        json_object_set_new(d, "presentation_type", jstr(type));
        json_object_set_new(d, "recommendations", rec);
        pp_answer(res, d);
        return 0;
    }
    pp_errorf(res, "Invalid operation: %s. Must be 'analyze', 'optimize', or 'recommend'", op);
    return 0;
}
