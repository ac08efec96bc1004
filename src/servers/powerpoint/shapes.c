/*
 * shapes.c - the shape tree as python-pptx 1.0 sees it: which elements are
 * shapes, placeholders and their types, shape_type names, geometry with
 * placeholder inheritance (slide -> layout by idx -> master by type), table
 * cells, and TextFrame.text reading and writing.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "servers/powerpoint/pp.h"

int pp_is(xmlNodePtr n, const char *ns, const char *local)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && !strcmp((const char *)n->ns->href, ns) &&
           !strcmp((const char *)n->name, local);
}

xmlNodePtr pp_child(xmlNodePtr n, const char *ns, const char *local)
{
    for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
        if (pp_is(c, ns, local)) return c;
    return NULL;
}

static xmlNodePtr first_elem(xmlNodePtr n)
{
    for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE) return c;
    return NULL;
}

xmlNodePtr pp_path(xmlNodePtr n, const char *list)
{
    const char *s = list;
    while (n && *s) {
        const char *end = strchr(s, '/');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        char step[64];
        if (len < 3 || len >= sizeof step) return NULL;
        memcpy(step, s, len);
        step[len] = 0;
        n = pp_child(n, step[0] == 'a' ? PP_NS_A : PP_NS_P, step + 2);
        s += len + (end ? 1 : 0);
    }
    return n;
}

xmlNodePtr pp_sptree(xmlDocPtr doc)
{
    return doc ? pp_path(xmlDocGetRootElement(doc), "p:cSld/p:spTree") : NULL;
}

static int is_shape_elem(xmlNodePtr c)
{
    static const char *const TAGS[] = {"sp", "grpSp", "graphicFrame", "cxnSp", "pic",
                                       "contentPart", NULL};
    for (int i = 0; TAGS[i]; i++)
        if (pp_is(c, PP_NS_P, TAGS[i])) return 1;
    return 0;
}

size_t pp_shapes(xmlNodePtr sptree, xmlNodePtr **out)
{
    size_t n = 0;
    *out = NULL;
    for (xmlNodePtr c = sptree ? sptree->children : NULL; c; c = c->next) {
        if (!is_shape_elem(c)) continue;
        *out = mb_realloc(*out, (n + 1) * sizeof **out);
        (*out)[n++] = c;
    }
    return n;
}

xmlNodePtr pp_ph(xmlNodePtr shape)
{
    return pp_child(pp_child(first_elem(shape), PP_NS_P, "nvPr"), PP_NS_P, "ph");
}

long pp_ph_idx(xmlNodePtr ph)
{
    xmlChar *v = ph ? xmlGetProp(ph, (const xmlChar *)"idx") : NULL;
    long x = v ? strtol((const char *)v, NULL, 10) : 0;
    xmlFree(v);
    return x;
}

const char *pp_ph_type(xmlNodePtr ph)
{
    xmlAttrPtr a = ph ? xmlHasProp(ph, (const xmlChar *)"type") : NULL;
    return a && a->children && a->children->content ? (const char *)a->children->content : "obj";
}

static const struct {
    const char *xml, *str;
} PH_TYPES[] = {
    {"clipArt", "BITMAP (9)"},    {"body", "BODY (2)"},          {"ctrTitle", "CENTER_TITLE (3)"},
    {"chart", "CHART (8)"},       {"dt", "DATE (16)"},           {"ftr", "FOOTER (15)"},
    {"hdr", "HEADER (14)"},       {"media", "MEDIA_CLIP (10)"},  {"obj", "OBJECT (7)"},
    {"dgm", "ORG_CHART (11)"},    {"pic", "PICTURE (18)"},       {"sldImg", "SLIDE_IMAGE (101)"},
    {"sldNum", "SLIDE_NUMBER (13)"}, {"subTitle", "SUBTITLE (4)"}, {"tbl", "TABLE (12)"},
    {"title", "TITLE (1)"},
};

const char *pp_ph_type_str(const char *xml_type)
{
    for (size_t i = 0; i < sizeof PH_TYPES / sizeof PH_TYPES[0]; i++)
        if (!strcmp(PH_TYPES[i].xml, xml_type)) return PH_TYPES[i].str;
    return "OBJECT (7)";
}

const char *pp_shape_name(xmlNodePtr shape)
{
    xmlNodePtr c = pp_child(first_elem(shape), PP_NS_P, "cNvPr");
    xmlAttrPtr a = c ? xmlHasProp(c, (const xmlChar *)"name") : NULL;
    return a && a->children && a->children->content ? (const char *)a->children->content : "";
}

static const char *graphic_uri(xmlNodePtr frame)
{
    xmlNodePtr gd = pp_path(frame, "a:graphic/a:graphicData");
    xmlAttrPtr a = gd ? xmlHasProp(gd, (const xmlChar *)"uri") : NULL;
    return a && a->children && a->children->content ? (const char *)a->children->content : "";
}

const char *pp_shape_type_str(xmlNodePtr shape)
{
    if (pp_is(shape, PP_NS_P, "grpSp")) return "GROUP (6)";
    if (pp_is(shape, PP_NS_P, "cxnSp")) return "LINE (9)";
    if (pp_ph(shape) && !pp_is(shape, PP_NS_P, "contentPart")) return "PLACEHOLDER (14)";
    if (pp_is(shape, PP_NS_P, "pic")) return "PICTURE (13)";
    if (pp_is(shape, PP_NS_P, "graphicFrame")) {
        const char *uri = graphic_uri(shape);
        if (!strcmp(uri, "http://schemas.openxmlformats.org/drawingml/2006/chart")) return "CHART (3)";
        if (!strcmp(uri, "http://schemas.openxmlformats.org/drawingml/2006/table")) return "TABLE (19)";
        if (!strcmp(uri, "http://schemas.openxmlformats.org/presentationml/2006/ole")) {
            xmlNodePtr ole = pp_path(shape, "a:graphic/a:graphicData/p:oleObj");
            return ole && pp_child(ole, PP_NS_P, "embed") ? "EMBEDDED_OLE_OBJECT (7)"
                                                          : "LINKED_OLE_OBJECT (10)";
        }
        return "None";
    }
    if (pp_is(shape, PP_NS_P, "sp")) {
        xmlNodePtr sppr = pp_child(shape, PP_NS_P, "spPr");
        if (pp_child(sppr, PP_NS_A, "custGeom")) return "FREEFORM (5)";
        xmlNodePtr cnv = pp_path(shape, "p:nvSpPr/p:cNvSpPr");
        xmlChar *tb = cnv ? xmlGetProp(cnv, (const xmlChar *)"txBox") : NULL;
        int txbox = tb && (!strcmp((const char *)tb, "1") || !strcmp((const char *)tb, "true"));
        xmlFree(tb);
        if (pp_child(sppr, PP_NS_A, "prstGeom") && !txbox) return "AUTO_SHAPE (1)";
        if (txbox) return "TEXT_BOX (17)";
    }
    return NULL;
}

/* a:xfrm of a shape (graphicFrame: p:xfrm; group: grpSpPr). */
static xmlNodePtr xfrm_of(xmlNodePtr shape)
{
    if (pp_is(shape, PP_NS_P, "graphicFrame")) return pp_child(shape, PP_NS_P, "xfrm");
    if (pp_is(shape, PP_NS_P, "grpSp")) return pp_path(shape, "p:grpSpPr/a:xfrm");
    return pp_path(shape, "p:spPr/a:xfrm");
}

static int own_geom(xmlNodePtr shape, int which, long long *v)
{
    xmlNodePtr x = xfrm_of(shape);
    xmlNodePtr e = x ? pp_child(x, PP_NS_A, which < 2 ? "off" : "ext") : NULL;
    static const char *const ATTR[] = {"x", "y", "cx", "cy"};
    xmlChar *s = e ? xmlGetProp(e, (const xmlChar *)ATTR[which]) : NULL;
    if (!s) return 0;
    char *end;
    *v = strtoll((const char *)s, &end, 10);
    int ok = *end == 0 && end != (char *)s;
    xmlFree(s);
    return ok;
}

/* The placeholder of a layout/master spTree with this idx (by_type NULL) or
 * this type (the master lookup). */
static xmlNodePtr find_ph(xmlNodePtr tree, long idx, const char *type)
{
    xmlNodePtr *sh = NULL, hit = NULL;
    size_t n = pp_shapes(tree, &sh);
    for (size_t i = 0; i < n && !hit; i++) {
        xmlNodePtr ph = pp_ph(sh[i]);
        if (!ph) continue;
        if (type ? !strcmp(pp_ph_type(ph), type) : pp_ph_idx(ph) == idx) hit = sh[i];
    }
    free(sh);
    return hit;
}

static const char *master_type(const char *t)
{
    static const char *const BODY[] = {"body", "chart", "clipArt", "dgm", "media", "obj",
                                       "pic", "subTitle", "tbl", NULL};
    for (int i = 0; BODY[i]; i++)
        if (!strcmp(t, BODY[i])) return "body";
    if (!strcmp(t, "ctrTitle") || !strcmp(t, "title")) return "title";
    if (!strcmp(t, "dt") || !strcmp(t, "ftr") || !strcmp(t, "sldNum")) return t;
    return NULL;
}

int pp_shape_geom(pp_pres *p, const char *slide, xmlNodePtr shape, int which, long long *v)
{
    if (own_geom(shape, which, v)) return 1;
    xmlNodePtr ph = pp_ph(shape);
    if (!ph || pp_is(shape, PP_NS_P, "grpSp") || pp_is(shape, PP_NS_P, "cxnSp")) return 0;
    char *layout = pp_slide_layout(p, slide);
    xmlNodePtr lph = layout ? find_ph(pp_sptree(pp_part_xml(p, layout)), pp_ph_idx(ph), NULL) : NULL;
    free(layout);
    if (!lph) return 0;
    if (own_geom(lph, which, v)) return 1;
    const char *mt = master_type(pp_ph_type(pp_ph(lph)));
    xmlNodePtr mph = mt && p->master ? find_ph(pp_sptree(pp_part_xml(p, p->master)), 0, mt) : NULL;
    return mph && own_geom(mph, which, v);
}

xmlNodePtr pp_table(xmlNodePtr shape)
{
    if (!pp_is(shape, PP_NS_P, "graphicFrame")) return NULL;
    return pp_path(shape, "a:graphic/a:graphicData/a:tbl");
}

xmlNodePtr pp_txbody(xmlNodePtr n)
{
    xmlNodePtr t = pp_child(n, PP_NS_P, "txBody");
    return t ? t : pp_child(n, PP_NS_A, "txBody");
}

static void node_text(xmlNodePtr n, mb_buf *b)
{
    xmlChar *s = xmlNodeGetContent(n);
    if (s) mb_buf_puts(b, (const char *)s);
    xmlFree(s);
}

void pp_txbody_text(xmlNodePtr txbody, mb_buf *b)
{
    int first = 1;
    for (xmlNodePtr p = txbody ? txbody->children : NULL; p; p = p->next) {
        if (!pp_is(p, PP_NS_A, "p")) continue;
        if (!first) mb_buf_putc(b, '\n');
        first = 0;
        for (xmlNodePtr c = p->children; c; c = c->next) {
            if (pp_is(c, PP_NS_A, "r") || pp_is(c, PP_NS_A, "fld")) {
                xmlNodePtr t = pp_child(c, PP_NS_A, "t");
                if (t) node_text(t, b);
            } else if (pp_is(c, PP_NS_A, "br")) {
                mb_buf_putc(b, '\v');
            }
        }
    }
    mb_buf_putc(b, 0);
    b->len--;
}

/* Python str.isspace() for one code point. */
static int py_space(unsigned cp)
{
    if ((cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0)
        return 1;
    return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

static unsigned decode(const unsigned char *s, size_t n, size_t i, size_t *len)
{
    unsigned c = s[i];
    if (c < 0x80 || i + 1 >= n) return *len = 1, c;
    if ((c & 0xe0) == 0xc0) return *len = 2, ((c & 0x1f) << 6) | (s[i + 1] & 0x3f);
    if ((c & 0xf0) == 0xe0 && i + 2 < n)
        return *len = 3, ((c & 0x0f) << 12) | ((s[i + 1] & 0x3f) << 6) | (s[i + 2] & 0x3f);
    return *len = 1, 0xfffd;
}

void pp_py_strip(const char *str, size_t n, size_t *start, size_t *len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, l;
    while (i < n && py_space(decode(s, n, i, &l))) i += l;
    size_t end = i, j = i;
    while (j < n) {
        unsigned cp = decode(s, n, j, &l);
        j += l;
        if (!py_space(cp)) end = j;
    }
    *start = i;
    *len = end - i;
}

/* ---------------------------------------------------------------- editing */

xmlNodePtr pp_new(xmlNodePtr parent, const char *ns, const char *local)
{
    xmlNsPtr x = xmlSearchNsByHref(parent->doc, parent, (const xmlChar *)ns);
    if (!x) {
        xmlNodePtr root = xmlDocGetRootElement(parent->doc);
        x = xmlNewNs(root, (const xmlChar *)ns,
                     (const xmlChar *)(!strcmp(ns, PP_NS_A) ? "a" : !strcmp(ns, PP_NS_P) ? "p" : "r"));
    }
    return xmlNewChild(parent, x, (const xmlChar *)local, NULL);
}

/* _Paragraph.append_text: runs split by a:br at each \v. */
static void append_text(xmlNodePtr p, const char *s)
{
    xmlNodePtr endp = pp_child(p, PP_NS_A, "endParaRPr");
    for (;;) {
        const char *v = strchr(s, '\v');
        size_t len = v ? (size_t)(v - s) : strlen(s);
        if (len) {
            xmlNodePtr r = pp_new(p, PP_NS_A, "r");
            xmlNodePtr t = pp_new(r, PP_NS_A, "t");
            xmlNodeAddContentLen(t, (const xmlChar *)s, (int)len);
            if (endp) {
                xmlUnlinkNode(r);
                xmlAddPrevSibling(endp, r);
            }
        }
        if (!v) break;
        xmlNodePtr br = pp_new(p, PP_NS_A, "br");
        if (endp) {
            xmlUnlinkNode(br);
            xmlAddPrevSibling(endp, br);
        }
        s = v + 1;
    }
}

void pp_set_text(xmlNodePtr txbody, const char *s)
{
    xmlNodePtr c = txbody->children;
    while (c) {
        xmlNodePtr next = c->next;
        if (pp_is(c, PP_NS_A, "p")) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
        }
        c = next;
    }
    for (;;) {
        const char *nl = strchr(s, '\n');
        char *line = nl ? mb_strndup(s, (size_t)(nl - s)) : mb_strdup(s);
        append_text(pp_new(txbody, PP_NS_A, "p"), line);
        free(line);
        if (!nl) break;
        s = nl + 1;
    }
}

int pp_text_clear(xmlNodePtr tx)
{
    int first = 1;
    for (xmlNodePtr c = tx->children, next; c; c = next) {
        next = c->next;
        if (!pp_is(c, PP_NS_A, "p")) continue;
        if (!first) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
            continue;
        }
        first = 0;
        for (xmlNodePtr r = c->children, rn; r; r = rn) {
            rn = r->next;
            if (pp_is(r, PP_NS_A, "r") || pp_is(r, PP_NS_A, "br") || pp_is(r, PP_NS_A, "fld")) {
                xmlUnlinkNode(r);
                xmlFreeNode(r);
            }
        }
    }
    return !first;
}

xmlNodePtr pp_sp_txbody(xmlNodePtr sp)
{
    xmlNodePtr t = pp_child(sp, PP_NS_P, "txBody");
    if (t) return t;
    t = pp_new(sp, PP_NS_P, "txBody");
    /* p:txBody goes after p:style / p:spPr; before p:extLst */
    xmlNodePtr ext = pp_child(sp, PP_NS_P, "extLst");
    if (ext) {
        xmlUnlinkNode(t);
        xmlAddPrevSibling(ext, t);
    }
    xmlNodePtr bp = pp_new(t, PP_NS_A, "bodyPr");
    (void)bp;
    pp_new(t, PP_NS_A, "lstStyle");
    pp_new(t, PP_NS_A, "p");
    return t;
}

static void max_id(xmlNodePtr n, long *max)
{
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        for (xmlAttrPtr a = c->properties; a; a = a->next) { /* unqualified @id only */
            if (a->ns || a->name[0] != 'i' || a->name[1] != 'd' || a->name[2]) continue;
            if (a->children && a->children->content) {
                char *end;
                long x = strtol((const char *)a->children->content, &end, 10);
                if (!*end && x > *max) *max = x;
            }
            break;
        }
        if (c->children) max_id(c, max);
    }
}

long pp_next_shape_id(xmlNodePtr sptree)
{
    long max = 0;
    max_id(xmlDocGetRootElement(sptree->doc), &max); /* "//@id" */
    return max + 1;
}
