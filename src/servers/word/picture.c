/*
 * picture.c - add_picture as python-docx's Document.add_picture does it:
 * the image's size and DPI from its header (PNG, JPEG, GIF, BMP; 72 dpi when
 * the file says nothing), one image part per distinct image (SHA-1), a new
 * paragraph holding an inline wp:drawing sized from `width` in inches.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "servers/word/word.h"

#define MAX_IMAGE (64u << 20)

typedef struct img {
    const char *ext, *ct;
    long px_w, px_h, dpi_x, dpi_y;
} img;

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

/* ----------------------------------------------------------- the part */

typedef struct dedupe {
    wd_doc *d;
    const unsigned char *sha;
    char *rid;
} dedupe;

static int same_image(const mb_ooxml_rel *rel, void *payload)
{
    dedupe *x = payload;
    if (rel->external || !mb_str_has_suffix(rel->type, "/image")) return 0;
    char *part = mb_ooxml_resolve(x->d->main, rel->target);
    char *data = NULL;
    size_t len = 0;
    mb_err err = {0};
    int hit = 0;
    if (!mb_ooxml_read(x->d->pkg, part, &data, &len, &err)) {
        unsigned char sha[SHA_DIGEST_LENGTH];
        SHA1((const unsigned char *)data, len, sha);
        hit = !memcmp(sha, x->sha, sizeof sha);
    }
    free(data);
    free(part);
    if (hit) x->rid = mb_strdup(rel->id);
    return hit;
}

/* python-docx DocumentPart.next_id: one past the highest all-digit @id. */
static long next_id(xmlNodePtr n)
{
    long best = 0;
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) continue;
        for (xmlAttrPtr a = n->properties; a; a = a->next) {
            if (a->ns || strcmp((const char *)a->name, "id") || !a->children) continue;
            const char *v = (const char *)a->children->content;
            if (!v || !*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 15) continue;
            long x = strtol(v, NULL, 10);
            if (x > best) best = x;
        }
        long c = next_id(n->children);
        if (c - 1 > best) best = c - 1;
    }
    return best + 1;
}

static xmlNodePtr el(xmlNodePtr parent, xmlNsPtr ns, const char *name)
{
    return xmlNewChild(parent, ns, (const xmlChar *)name, NULL);
}
static void at(xmlNodePtr n, const char *k, const char *v) { xmlSetProp(n, (const xmlChar *)k, (const xmlChar *)v); }

static void inline_xml(wd_doc *d, xmlNodePtr run, long cx, long cy, long id, const char *file,
                       const char *rid)
{
    xmlNodePtr drawing = wd_add(d, run, "drawing");
    xmlNsPtr wp = xmlNewNs(drawing, (const xmlChar *)"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing", (const xmlChar *)"wp");
    xmlNsPtr a = xmlNewNs(drawing, (const xmlChar *)"http://schemas.openxmlformats.org/drawingml/2006/main", (const xmlChar *)"a");
    xmlNsPtr pic = xmlNewNs(drawing, (const xmlChar *)"http://schemas.openxmlformats.org/drawingml/2006/picture", (const xmlChar *)"pic");
    xmlNsPtr r = xmlSearchNsByHref(d->xml, xmlDocGetRootElement(d->xml), (const xmlChar *)WD_NS_R);
    if (!r) r = xmlNewNs(drawing, (const xmlChar *)WD_NS_R, (const xmlChar *)"r");
    char sx[32], sy[32], sid[32], name[48];
    snprintf(sx, sizeof sx, "%ld", cx);
    snprintf(sy, sizeof sy, "%ld", cy);
    snprintf(sid, sizeof sid, "%ld", id);
    snprintf(name, sizeof name, "Picture %ld", id);
    xmlNodePtr in = el(drawing, wp, "inline");
    at(in, "distT", "0"), at(in, "distB", "0"), at(in, "distL", "0"), at(in, "distR", "0");
    xmlNodePtr ext = el(in, wp, "extent");
    at(ext, "cx", sx), at(ext, "cy", sy);
    xmlNodePtr doc_pr = el(in, wp, "docPr");
    at(doc_pr, "id", sid), at(doc_pr, "name", name);
    at(el(el(in, wp, "cNvGraphicFramePr"), a, "graphicFrameLocks"), "noChangeAspect", "1");
    xmlNodePtr gd = el(el(in, a, "graphic"), a, "graphicData");
    at(gd, "uri", "http://schemas.openxmlformats.org/drawingml/2006/picture");
    xmlNodePtr p = el(gd, pic, "pic");
    xmlNodePtr nv = el(p, pic, "nvPicPr");
    xmlNodePtr c = el(nv, pic, "cNvPr");
    at(c, "id", "0"), at(c, "name", file);
    el(nv, pic, "cNvPicPr");
    xmlNodePtr fill = el(p, pic, "blipFill");
    xmlSetNsProp(el(fill, a, "blip"), r, (const xmlChar *)"embed", (const xmlChar *)rid);
    el(el(fill, a, "stretch"), a, "fillRect");
    xmlNodePtr sp = el(p, pic, "spPr");
    xmlNodePtr xf = el(sp, a, "xfrm");
    xmlNodePtr off = el(xf, a, "off");
    at(off, "x", "0"), at(off, "y", "0");
    xmlNodePtr e2 = el(xf, a, "ext");
    at(e2, "cx", sx), at(e2, "cy", sy);
    at(el(sp, a, "prstGeom"), "prst", "rect");
}

static int read_all(const char *path, unsigned char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    mb_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len <= MAX_IMAGE) mb_buf_append(&b, chunk, n);
    fclose(f);
    if (b.len > MAX_IMAGE) {
        mb_buf_free(&b);
        errno = EFBIG;
        return -1;
    }
    *len = b.len;
    *out = (unsigned char *)mb_buf_steal(&b);
    return 0;
}

int wd_t_add_picture(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    const char *image = json_string_value(json_object_get(a, "image_path"));
    json_t *width = json_object_get(a, "width");
    struct stat st;
    char *abs_f = mb_path_resolve(NULL, f), *abs_i = mb_path_resolve(NULL, image);
    unsigned char *bytes = NULL;
    size_t len = 0;
    char *why = NULL, *msg = NULL, *diag = NULL;
    wd_doc *d = NULL;
    if (stat(f, &st)) {
        mb_mcp_textf(res, "Document %s does not exist", f);
        goto out;
    }
    if (stat(abs_i, &st)) {
        mb_mcp_textf(res, "Image file not found: %s", abs_i);
        goto out;
    }
    if (st.st_size <= 0) {
        mb_mcp_textf(res, "Image file appears to be empty: %s (0 KB)", abs_i);
        goto out;
    }
    if (!wd_writeable(abs_f, &msg)) {
        mb_mcp_textf(res, "Cannot modify document: %s. Consider creating a copy first or creating a new document.", msg);
        goto out;
    }
    if (wd_doc_open(abs_f, &d, &why)) {
        const char *type = strstr(why, "not a zip") ? "BadZipFile"
                           : strstr(why, "not a Word file") ? "ValueError" : "Exception";
        mb_mcp_textf(res, "Document processing error: %s - %s", type, why);
        goto out;
    }
    diag = mb_asprintf("Attempting to add image (%s, %.2f KB) to document (%s)", abs_i,
                       (double)st.st_size / 1024.0, abs_f);
    if (read_all(abs_i, &bytes, &len)) {
        char *e = mb_py_os_error(errno, abs_i);
        mb_mcp_textf(res, "Failed to add picture: OSError - %s\nDiagnostic info: %s", e, diag);
        free(e);
        goto out;
    }
    img m = {0};
    if (parse_png(bytes, len, &m) && parse_jpeg(bytes, len, &m) && parse_gif(bytes, len, &m) &&
        parse_bmp(bytes, len, &m)) {
        mb_mcp_textf(res, "Failed to add picture: UnrecognizedImageError - No error details available\n"
                          "Diagnostic info: %s", diag);
        goto out;
    }
    /* the image part, shared with an identical image already in the document */
    unsigned char sha[SHA_DIGEST_LENGTH];
    SHA1(bytes, len, sha);
    dedupe x = {.d = d, .sha = sha};
    mb_err err = {0};
    mb_ooxml_rels_each(d->pkg, d->main, same_image, &x, &err);
    if (!x.rid) {
        char pattern[64];
        snprintf(pattern, sizeof pattern, "word/media/image%%u.%s", m.ext);
        char *part = mb_ooxml_unique_name(d->pkg, pattern);
        mb_ooxml_put(d->pkg, part, bytes, len);
        mb_ooxml_ct_default(d->pkg, m.ext, m.ct, &err);
        char *target = mb_ooxml_relative(d->main, part);
        mb_ooxml_rel_add(d->pkg, d->main, WD_REL_BASE "image", target, &x.rid, &err);
        free(target);
        free(part);
    }
    /* size: native from px/dpi, scaled to `width` inches keeping the aspect */
    long cx = (long)((double)m.px_w / (double)m.dpi_x * 914400.0);
    long cy = (long)((double)m.px_h / (double)m.dpi_y * 914400.0);
    if (json_is_number(width) && json_number_value(width) != 0) {
        long w = (long)(json_number_value(width) * 914400.0);
        double scale = (double)w / (double)cx;
        cy = (long)llround((double)cy * scale);
        cx = w;
    }
    long id = next_id(xmlDocGetRootElement(d->xml));
    const char *slash = strrchr(abs_i, '/');
    xmlNodePtr p = wd_add_paragraph(d, NULL);
    xmlNodePtr r = wd_add_run(d, p, NULL);
    inline_xml(d, r, cx, cy, id, slash ? slash + 1 : abs_i, x.rid ? x.rid : "");
    free(x.rid);
    wd_doc_touch(d);
    if (wd_doc_save(d, abs_f, &why))
        mb_mcp_textf(res, "Failed to add picture: OSError - %s\nDiagnostic info: %s", why, diag);
    else mb_mcp_textf(res, "Picture %s added to %s", image, f);
out:
    free(bytes);
    free(diag);
    free(why);
    free(msg);
    wd_doc_free(d);
    free(abs_f);
    free(abs_i);
    free(f);
    return 0;
}
