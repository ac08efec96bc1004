/*
 * tools_image.c - manage_image "add" (tools/content_tools.py,
 * utils/content_utils.py add_image): python-pptx's add_picture with one
 * image part per distinct image (SHA-1) named ppt/media/imageN.ext, the
 * picture sized from the image's pixels and DPI unless width/height are
 * given. "enhance" is in enhance.c.
 */
#define _GNU_SOURCE
#include <math.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "servers/powerpoint/pp.h"

#define MAX_IMAGE (64u << 20)

/* An image part of the package with these bytes, or NULL (caller frees). */
static char *same_image(pp_pres *p, const unsigned char *sha)
{
    for (size_t i = 0; i < mb_ooxml_count(p->pkg); i++) {
        const char *name = mb_ooxml_name(p->pkg, i);
        const char *ct = mb_ooxml_ct_get(p->pkg, name);
        if (!ct || strncmp(ct, "image/", 6)) continue;
        char *data = NULL;
        size_t len = 0;
        mb_err err = {0};
        if (mb_ooxml_read(p->pkg, name, &data, &len, &err)) continue;
        unsigned char h[SHA_DIGEST_LENGTH];
        SHA1((const unsigned char *)data, len, h);
        free(data);
        if (!memcmp(h, sha, sizeof h)) return mb_strdup(name);
    }
    return NULL;
}

typedef struct rel_to {
    const char *target;
    char *id;
} rel_to;

static int rel_to_fn(const mb_ooxml_rel *rel, void *payload)
{
    rel_to *r = payload;
    if (rel->external || strcmp(rel->target, r->target) || !mb_str_has_suffix(rel->type, "/image")) return 0;
    r->id = mb_strdup(rel->id);
    return 1;
}

int pp_picture_add(pp_pres *p, const char *slide, const unsigned char *bytes, size_t len,
                   const char *filename, json_t *args, char **why)
{
    mb_ooxml_image m;
    if (mb_ooxml_image_info(bytes, len, &m)) {
        *why = mb_asprintf("cannot identify image file '%s'", filename);
        return -1;
    }
    unsigned char sha[SHA_DIGEST_LENGTH];
    SHA1(bytes, len, sha);
    char *part = same_image(p, sha);
    mb_err err = {0};
    if (!part) {
        for (unsigned k = 1;; k++) {
            char *cand = mb_asprintf("ppt/media/image%u.%s", k, m.ext);
            int used = 0;
            for (size_t i = 0; i < mb_ooxml_count(p->pkg) && !used; i++) {
                const char *n = mb_ooxml_name(p->pkg, i);
                char pre[40];
                snprintf(pre, sizeof pre, "ppt/media/image%u.", k);
                used = !strncasecmp(n, pre, strlen(pre));
            }
            if (!used) {
                part = cand;
                break;
            }
            free(cand);
        }
        mb_ooxml_put(p->pkg, part, bytes, len);
        mb_ooxml_ct_default(p->pkg, m.ext, m.ct, &err);
    }
    char *target = mb_ooxml_relative(slide, part);
    rel_to r = {target, NULL};
    mb_ooxml_rels_each(p->pkg, slide, rel_to_fn, &r, &err);
    if (!r.id && mb_ooxml_rel_add(p->pkg, slide, PP_REL "image", target, &r.id, &err)) {
        *why = mb_strdup(err.msg);
        free(target);
        free(part);
        return -1;
    }
    free(target);
    free(part);
    /* Image._native_size / scale */
    long long ncx = (long long)(PP_EMU_PER_INCH * (double)m.px_w / (double)m.dpi_x);
    long long ncy = (long long)(PP_EMU_PER_INCH * (double)m.px_h / (double)m.dpi_y);
    json_t *w = json_object_get(args, "width"), *h = json_object_get(args, "height");
    long long cx, cy;
    if (json_is_number(w) && json_is_number(h)) {
        cx = pp_inches(json_number_value(w));
        cy = pp_inches(json_number_value(h));
    } else if (json_is_number(w)) {
        cx = pp_inches(json_number_value(w));
        cy = ncx ? llround((double)ncy * ((double)cx / (double)ncx)) : 0;
    } else if (json_is_number(h)) {
        cy = pp_inches(json_number_value(h));
        cx = ncy ? llround((double)ncx * ((double)cy / (double)ncy)) : 0;
    } else {
        cx = ncx;
        cy = ncy;
    }
    xmlNodePtr tree = pp_sptree(pp_part_xml(p, slide));
    long id = pp_next_shape_id(tree);
    xmlNodePtr pic = pp_new(tree, PP_NS_P, "pic");
    xmlNodePtr nv = pp_new(pic, PP_NS_P, "nvPicPr");
    xmlNodePtr c = pp_new(nv, PP_NS_P, "cNvPr");
    pp_set_id_name(c, id, "Picture");
    xmlSetProp(c, (const xmlChar *)"descr", (const xmlChar *)filename);
    xmlSetProp(pp_new(pp_new(nv, PP_NS_P, "cNvPicPr"), PP_NS_A, "picLocks"), (const xmlChar *)"noChangeAspect",
               (const xmlChar *)"1");
    pp_new(nv, PP_NS_P, "nvPr");
    xmlNodePtr bf = pp_new(pic, PP_NS_P, "blipFill");
    xmlNodePtr blip = pp_new(bf, PP_NS_A, "blip");
    xmlNodePtr root = xmlDocGetRootElement(tree->doc);
    xmlNsPtr R = xmlSearchNsByHref(tree->doc, root, (const xmlChar *)PP_NS_R);
    if (!R) R = xmlNewNs(root, (const xmlChar *)PP_NS_R, (const xmlChar *)"r");
    xmlSetNsProp(blip, R, (const xmlChar *)"embed", (const xmlChar *)r.id);
    free(r.id);
    pp_new(pp_new(bf, PP_NS_A, "stretch"), PP_NS_A, "fillRect");
    xmlNodePtr sppr = pp_new(pic, PP_NS_P, "spPr");
    xmlNodePtr xf = pp_new(sppr, PP_NS_A, "xfrm");
    xmlNodePtr off = pp_new(xf, PP_NS_A, "off");
    pp_set_ll(off, "x", pp_inches(json_number_value(json_object_get(args, "left"))));
    pp_set_ll(off, "y", pp_inches(json_number_value(json_object_get(args, "top"))));
    xmlNodePtr ext = pp_new(xf, PP_NS_A, "ext");
    pp_set_ll(ext, "cx", cx);
    pp_set_ll(ext, "cy", cy);
    xmlNodePtr geom = pp_new(sppr, PP_NS_A, "prstGeom");
    xmlSetProp(geom, (const xmlChar *)"prst", (const xmlChar *)"rect");
    pp_new(geom, PP_NS_A, "avLst");
    pp_touch(p, slide);
    return 0;
}

/* base64.b64decode (non-validating): characters outside the alphabet are
 * dropped; a length not a multiple of 4 is "Incorrect padding". */
static unsigned char *b64decode(const char *s, size_t *out_len, const char **why)
{
    size_t n = strlen(s), k = 0;
    char *clean = malloc(n + 1);
    if (!clean) return *why = "out of memory", NULL;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
            c == '/' || c == '=')
            clean[k++] = c;
    }
    clean[k] = 0;
    if (k % 4) {
        free(clean);
        return *why = "Incorrect padding", NULL;
    }
    unsigned char *out = malloc(k / 4 * 3 + 1);
    int got = out ? EVP_DecodeBlock(out, (const unsigned char *)clean, (int)k) : -1;
    if (got < 0) {
        free(clean);
        free(out);
        return *why = "Invalid base64-encoded string", NULL;
    }
    size_t pad = 0;
    while (pad < 2 && k > pad && clean[k - 1 - pad] == '=') pad++;
    free(clean);
    *out_len = (size_t)got - pad;
    return out;
}

int pp_t_manage_image(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    const char *op = json_string_value(json_object_get(args, "operation"));
    const char *src = json_string_value(json_object_get(args, "image_source"));
    const char *stype = json_string_value(json_object_get(args, "source_type"));
    long long si = (long long)json_integer_value(json_object_get(args, "slide_index"));
    if (!strcmp(op, "enhance")) {
        if (!strcmp(stype, "base64")) {
            pp_errorf(res, "Enhancement operation requires file path, not base64 data");
            return 0;
        }
        struct stat est;
        if (stat(src, &est)) { /* os.path.exists */
            pp_errorf(res, "Image file not found: %s", src);
            return 0;
        }
        return pp_image_enhance(args, res);
    }
    if (strcmp(op, "add")) {
        pp_errorf(res, "Invalid operation: %s. Must be 'add' or 'enhance'", op);
        return 0;
    }
    char *why = NULL;
    if (!strcmp(stype, "base64")) {
        const char *bwhy = NULL;
        size_t len = 0;
        unsigned char *bytes = b64decode(src, &len, &bwhy);
        if (!bytes) {
            pp_errorf(res, "Failed to process base64 image: %s", bwhy);
            return 0;
        }
        int rc = pp_picture_add(p, slide, bytes, len, "image.png", args, &why);
        free(bytes);
        if (rc) {
            pp_errorf(res, "Failed to process base64 image: %s", why);
            free(why);
            return 0;
        }
        xmlNodePtr *sh = NULL;
        size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
        free(sh);
        char *msg = mb_asprintf("Added image from base64 to slide %lld", si);
        pp_answer(res, json_pack("{s:s,s:I}", "message", msg, "shape_index", (json_int_t)n - 1));
        free(msg);
        return 0;
    }
    struct stat st;
    if (stat(src, &st)) {
        pp_errorf(res, "Image file not found: %s", src);
        return 0;
    }
    char *data = NULL;
    size_t len = 0;
    mb_err err = {0};
    if (mb_read_file(src, MAX_IMAGE, &data, &len, &err)) {
        pp_errorf(res, "Failed to add image: %s", err.msg);
        return 0;
    }
    const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    int rc = pp_picture_add(p, slide, (const unsigned char *)data, len, base, args, &why);
    free(data);
    if (rc) {
        pp_errorf(res, "Failed to add image: %s", why);
        free(why);
        return 0;
    }
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    free(sh);
    json_t *d = json_object();
    char *msg = mb_asprintf("Added image to slide %lld", si);
    size_t ml;
    char *ok = mb_utf8_repair(msg, strlen(msg), &ml);
    json_object_set_new(d, "message", json_stringn(ok, ml));
    free(ok);
    free(msg);
    json_object_set_new(d, "shape_index", json_integer((json_int_t)n - 1));
    ok = mb_utf8_repair(src, strlen(src), &ml);
    json_object_set_new(d, "image_path", json_stringn(ok, ml));
    free(ok);
    pp_answer(res, d);
    return 0;
}
