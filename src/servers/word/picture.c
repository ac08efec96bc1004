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

typedef mb_ooxml_image img;

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
    if (mb_ooxml_image_info(bytes, len, &m)) {
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
