/*
 * pres.c - opening, creating and saving a .pptx as python-pptx 1.0 does:
 * the main part from the package relationships, slides in p:sldIdLst order,
 * the first master's layouts in p:sldLayoutIdLst order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "servers/powerpoint/pp.h"

#define CT_PRES "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
#define CT_TEMPLATE "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml"
#define CT_SHOW "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml"
#define CT_MACRO "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml"

typedef struct find_rel {
    const char *type;
    const char *id;
    char *target;
} find_rel;

static int find_rel_fn(const mb_ooxml_rel *rel, void *payload)
{
    find_rel *f = payload;
    if (rel->external) return 0;
    if ((f->type && !strcmp(rel->type, f->type)) || (f->id && !strcmp(rel->id, f->id))) {
        f->target = mb_strdup(rel->target);
        return 1;
    }
    return 0;
}

/* The part `source`'s relationship (by type or id) points to, or NULL. */
char *pp_rel_target(mb_ooxml *pkg, const char *source, const char *type, const char *id)
{
    find_rel f = {type, id, NULL};
    mb_err err = {0};
    if (mb_ooxml_rels_each(pkg, source, find_rel_fn, &f, &err) != 1) return NULL;
    char *part = mb_ooxml_resolve(source, f.target);
    free(f.target);
    if (part[0] == '/') memmove(part, part + 1, strlen(part));
    return part;
}

xmlDocPtr pp_part_xml(pp_pres *p, const char *part)
{
    xmlDocPtr doc = NULL;
    mb_err err = {0};
    if (!part || mb_ooxml_xml(p->pkg, part, &doc, &err)) return NULL;
    return doc;
}

void pp_touch(pp_pres *p, const char *part)
{
    mb_ooxml_touch(p->pkg, part);
}

static const char *r_id(xmlNodePtr n)
{
    return (const char *)xmlGetNsProp(n, (const xmlChar *)"id", (const xmlChar *)PP_NS_R);
}

static void push(char ***arr, size_t *n, char *s)
{
    *arr = mb_realloc(*arr, (*n + 1) * sizeof **arr);
    (*arr)[(*n)++] = s;
}

/* Fills slides, master and layouts from presentation.xml. */
static int load_lists(pp_pres *p, char **why)
{
    p->xml = pp_part_xml(p, p->main);
    if (!p->xml) {
        *why = mb_asprintf("cannot parse %s", p->main);
        return -1;
    }
    xmlNodePtr root = xmlDocGetRootElement(p->xml);
    for (size_t i = 0; i < p->nslides; i++) free(p->slides[i]);
    free(p->slides);
    p->slides = NULL;
    p->nslides = 0;
    xmlNodePtr lst = pp_child(root, PP_NS_P, "sldIdLst");
    for (xmlNodePtr c = lst ? lst->children : NULL; c; c = c->next) {
        if (!pp_is(c, PP_NS_P, "sldId")) continue;
        xmlChar *rid = (xmlChar *)r_id(c);
        char *part = rid ? pp_rel_target(p->pkg, p->main, NULL, (const char *)rid) : NULL;
        xmlFree(rid);
        if (!part) {
            *why = mb_strdup("There is no item named 'slide' in the archive");
            return -1;
        }
        push(&p->slides, &p->nslides, part);
    }
    xmlNodePtr ml = pp_child(root, PP_NS_P, "sldMasterIdLst");
    for (xmlNodePtr c = ml ? ml->children : NULL; c && !p->master; c = c->next) {
        if (!pp_is(c, PP_NS_P, "sldMasterId")) continue;
        xmlChar *rid = (xmlChar *)r_id(c);
        p->master = rid ? pp_rel_target(p->pkg, p->main, NULL, (const char *)rid) : NULL;
        xmlFree(rid);
    }
    xmlDocPtr mx = p->master ? pp_part_xml(p, p->master) : NULL;
    xmlNodePtr ll = mx ? pp_child(xmlDocGetRootElement(mx), PP_NS_P, "sldLayoutIdLst") : NULL;
    for (xmlNodePtr c = ll ? ll->children : NULL; c; c = c->next) {
        if (!pp_is(c, PP_NS_P, "sldLayoutId")) continue;
        xmlChar *rid = (xmlChar *)r_id(c);
        char *part = rid ? pp_rel_target(p->pkg, p->master, NULL, (const char *)rid) : NULL;
        xmlFree(rid);
        if (part) push(&p->layouts, &p->nlayouts, part);
    }
    return 0;
}

static int open_pkg(const char *path, const char *shown, pp_pres **out, char **why)
{
    *out = NULL;
    mb_ooxml *pkg = NULL;
    mb_err err = {0};
    int sys_errno = 0;
    if (mb_ooxml_open(path, NULL, &pkg, &sys_errno, &err)) {
        if (err.code == MB_ENOTFOUND)
            *why = mb_asprintf("[Errno 2] No such file or directory: '%s'", shown);
        else if (err.code == MB_EINVAL)
            *why = mb_asprintf("File is not a zip file (%s)", err.msg);
        else *why = mb_strdup(err.msg);
        return -1;
    }
    pp_pres *p = mb_calloc(1, sizeof *p);
    p->pkg = pkg;
    p->main = pp_rel_target(pkg, "", PP_REL "officeDocument", NULL);
    if (!p->main || !mb_ooxml_has(pkg, p->main)) {
        *why = mb_strdup("There is no item named 'ppt/presentation.xml' in the archive");
        pp_pres_free(p);
        return -1;
    }
    const char *ct = mb_ooxml_ct_get(pkg, p->main);
    if (ct && !strcmp(ct, CT_MACRO)) {
        *why = mb_asprintf("file '%s' is a macro-enabled presentation (.pptm); mcpbox refuses "
                           "macro-enabled files", shown);
        pp_pres_free(p);
        return -1;
    }
    if (!ct || (strcmp(ct, CT_PRES) && strcmp(ct, CT_TEMPLATE) && strcmp(ct, CT_SHOW))) {
        *why = mb_asprintf("file '%s' is not a PowerPoint file, content type is '%s'", shown,
                           ct ? ct : "");
        pp_pres_free(p);
        return -1;
    }
    if (load_lists(p, why)) {
        pp_pres_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int pp_pres_open(const char *path, pp_pres **out, char **why)
{
    return open_pkg(path, path, out, why);
}

int pp_pres_new(pp_pres **out, char **why)
{
    const char *tmp = getenv("TMPDIR");
    char *path = mb_asprintf("%s/mcpbox-pptx-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        *why = mb_asprintf("cannot write the default template: %s", strerror(errno));
        free(path);
        return -1;
    }
    size_t off = 0;
    while (off < PP_TEMPLATE_LEN) {
        ssize_t w = write(fd, PP_TEMPLATE + off, PP_TEMPLATE_LEN - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    close(fd);
    int rc = off == PP_TEMPLATE_LEN ? open_pkg(path, "default.pptx", out, why) : -1;
    if (off != PP_TEMPLATE_LEN) *why = mb_strdup("cannot write the default template");
    unlink(path); /* libzip keeps its descriptor */
    free(path);
    return rc;
}

int pp_pres_save(pp_pres *p, const char *path, char **why)
{
    mb_err err = {0};
    if (mb_ooxml_save_as(p->pkg, path, &err)) {
        *why = mb_strdup(err.msg);
        return -1;
    }
    return 0;
}

void pp_pres_free(pp_pres *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nslides; i++) free(p->slides[i]);
    for (size_t i = 0; i < p->nlayouts; i++) free(p->layouts[i]);
    free(p->slides);
    free(p->layouts);
    free(p->master);
    free(p->main);
    mb_ooxml_free(p->pkg);
    free(p);
}

char *pp_slide_layout(pp_pres *p, const char *slide)
{
    return pp_rel_target(p->pkg, slide, PP_REL "slideLayout", NULL);
}

const char *pp_part_name(pp_pres *p, const char *part)
{
    xmlDocPtr d = pp_part_xml(p, part);
    xmlNodePtr csld = d ? pp_child(xmlDocGetRootElement(d), PP_NS_P, "cSld") : NULL;
    xmlAttrPtr a = csld ? xmlHasProp(csld, (const xmlChar *)"name") : NULL;
    return a && a->children && a->children->content ? (const char *)a->children->content : "";
}

/* -------------------------------------------------------------- add_slide */

static xmlNodePtr clone_ph(xmlNodePtr lsp, long id, xmlDocPtr doc)
{
    /* python-pptx's CT_Shape.new_placeholder_sp: nvSpPr (cNvPr id/name,
     * cNvSpPr/spLocks noGrp, nvPr/ph type/orient/sz/idx), empty spPr, and a
     * txBody (bodyPr, lstStyle, one a:p) for title, body, subtitle and
     * object placeholders. */
    xmlNodePtr ph = pp_ph(lsp);
    const char *type = pp_ph_type(ph);
    xmlNodePtr sp = xmlNewDocNode(doc, NULL, (const xmlChar *)"sp", NULL);
    xmlNodePtr root = xmlDocGetRootElement(doc);
    xmlNsPtr P = xmlSearchNsByHref(doc, root, (const xmlChar *)PP_NS_P);
    xmlNsPtr A = xmlSearchNsByHref(doc, root, (const xmlChar *)PP_NS_A);
    xmlSetNs(sp, P);
    xmlNodePtr nv = xmlNewChild(sp, P, (const xmlChar *)"nvSpPr", NULL);
    xmlNodePtr c = xmlNewChild(nv, P, (const xmlChar *)"cNvPr", NULL);
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", id);
    xmlSetProp(c, (const xmlChar *)"id", (const xmlChar *)buf);
    /* name: "%s %d" % (basename, id - 1), basename from the ph type */
    static const struct {
        const char *t, *name;
    } NAMES[] = {{"obj", "Content Placeholder"}, {"body", "Text Placeholder"},
                 {"ctrTitle", "Title"}, {"title", "Title"}, {"subTitle", "Subtitle"},
                 {"dt", "Date Placeholder"}, {"ftr", "Footer Placeholder"},
                 {"sldNum", "Slide Number Placeholder"}, {"hdr", "Header Placeholder"},
                 {"pic", "Picture Placeholder"}, {"chart", "Chart Placeholder"},
                 {"tbl", "Table Placeholder"}, {"clipArt", "ClipArt Placeholder"},
                 {"dgm", "SmartArt Placeholder"}, {"media", "Media Placeholder"},
                 {"sldImg", "Slide Image Placeholder"}};
    const char *base = "Placeholder";
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (!strcmp(NAMES[i].t, type)) base = NAMES[i].name;
    int vert = 0;
    xmlChar *orient = ph ? xmlGetProp(ph, (const xmlChar *)"orient") : NULL;
    if (orient && !strcmp((const char *)orient, "vert")) vert = 1;
    char *name = mb_asprintf("%s%s %ld", vert ? "Vertical " : "", base, id - 1);
    xmlSetProp(c, (const xmlChar *)"name", (const xmlChar *)name);
    free(name);
    xmlNodePtr cnv = xmlNewChild(nv, P, (const xmlChar *)"cNvSpPr", NULL);
    xmlNodePtr locks = xmlNewChild(cnv, A, (const xmlChar *)"spLocks", NULL);
    xmlSetProp(locks, (const xmlChar *)"noGrp", (const xmlChar *)"1");
    xmlNodePtr nvpr = xmlNewChild(nv, P, (const xmlChar *)"nvPr", NULL);
    xmlNodePtr nph = xmlNewChild(nvpr, P, (const xmlChar *)"ph", NULL);
    if (strcmp(type, "obj")) xmlSetProp(nph, (const xmlChar *)"type", (const xmlChar *)type);
    if (orient && strcmp((const char *)orient, "horz"))
        xmlSetProp(nph, (const xmlChar *)"orient", orient);
    xmlFree(orient);
    xmlChar *sz = ph ? xmlGetProp(ph, (const xmlChar *)"sz") : NULL;
    if (sz && strcmp((const char *)sz, "full")) xmlSetProp(nph, (const xmlChar *)"sz", sz);
    xmlFree(sz);
    long idx = pp_ph_idx(ph);
    if (idx) {
        snprintf(buf, sizeof buf, "%ld", idx);
        xmlSetProp(nph, (const xmlChar *)"idx", (const xmlChar *)buf);
    }
    xmlNewChild(sp, P, (const xmlChar *)"spPr", NULL);
    static const char *const TEXT[] = {"body", "ctrTitle", "obj", "subTitle", "title", NULL};
    for (int i = 0; TEXT[i]; i++) {
        if (strcmp(TEXT[i], type)) continue;
        xmlNodePtr tx = xmlNewChild(sp, P, (const xmlChar *)"txBody", NULL);
        xmlNewChild(tx, A, (const xmlChar *)"bodyPr", NULL);
        xmlNewChild(tx, A, (const xmlChar *)"lstStyle", NULL);
        xmlNewChild(tx, A, (const xmlChar *)"p", NULL);
    }
    return sp;
}

static const char SLIDE_XML[] =
    "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n"
    "<p:sld xmlns:a=\"" PP_NS_A "\" xmlns:r=\"" PP_NS_R "\" xmlns:p=\"" PP_NS_P "\">"
    "<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id=\"1\" name=\"\"/><p:cNvGrpSpPr/><p:nvPr/>"
    "</p:nvGrpSpPr><p:grpSpPr/></p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/>"
    "</p:clrMapOvr></p:sld>";

int pp_add_slide(pp_pres *p, size_t layout, const char **slide, char **why)
{
    mb_err err = {0};
    char *part = mb_asprintf("ppt/slides/slide%zu.xml", p->nslides + 1);
    if (mb_ooxml_has(p->pkg, part)) {
        free(part);
        part = mb_ooxml_unique_name(p->pkg, "ppt/slides/slide%u.xml");
    }
    xmlDocPtr doc = NULL;
    if (mb_ooxml_parse(SLIDE_XML, sizeof SLIDE_XML - 1, "slide", &doc, &err)) goto fail;
    xmlDocPtr ldoc = pp_part_xml(p, p->layouts[layout]);
    xmlNodePtr ltree = ldoc ? pp_sptree(ldoc) : NULL;
    xmlNodePtr tree = pp_sptree(doc);
    xmlNodePtr *shapes = NULL;
    size_t n = ltree ? pp_shapes(ltree, &shapes) : 0;
    long id = 2;
    for (size_t i = 0; i < n; i++) {
        xmlNodePtr ph = pp_ph(shapes[i]);
        if (!ph) continue;
        const char *t = pp_ph_type(ph);
        if (!strcmp(t, "dt") || !strcmp(t, "ftr") || !strcmp(t, "sldNum")) continue;
        xmlAddChild(tree, clone_ph(shapes[i], id++, doc));
    }
    free(shapes);
    mb_ooxml_put_xml(p->pkg, part, doc);
    if (mb_ooxml_ct_override(p->pkg, part,
                             "application/vnd.openxmlformats-officedocument.presentationml.slide+xml",
                             &err))
        goto fail;
    char *lrel = mb_ooxml_relative(part, p->layouts[layout]);
    int rc = mb_ooxml_rel_add(p->pkg, part, PP_REL "slideLayout", lrel, NULL, &err);
    free(lrel);
    if (rc) goto fail;
    char *srel = mb_ooxml_relative(p->main, part), *rid = NULL;
    rc = mb_ooxml_rel_add(p->pkg, p->main, PP_REL "slide", srel, &rid, &err);
    free(srel);
    if (rc) goto fail;
    xmlNodePtr root = xmlDocGetRootElement(p->xml);
    xmlNodePtr lst = pp_child(root, PP_NS_P, "sldIdLst");
    if (!lst) {
        /* after sldMasterIdLst / notesMasterIdLst / handoutMasterIdLst */
        xmlNodePtr after = NULL;
        for (xmlNodePtr c = root->children; c; c = c->next)
            if (pp_is(c, PP_NS_P, "sldMasterIdLst") || pp_is(c, PP_NS_P, "notesMasterIdLst") ||
                pp_is(c, PP_NS_P, "handoutMasterIdLst"))
                after = c;
        xmlNsPtr P = xmlSearchNsByHref(p->xml, root, (const xmlChar *)PP_NS_P);
        lst = xmlNewDocNode(p->xml, P, (const xmlChar *)"sldIdLst", NULL);
        if (after) xmlAddNextSibling(after, lst);
        else if (root->children) xmlAddPrevSibling(root->children, lst);
        else xmlAddChild(root, lst);
    }
    long max = 255;
    for (xmlNodePtr c = lst->children; c; c = c->next) {
        if (!pp_is(c, PP_NS_P, "sldId")) continue;
        xmlChar *v = xmlGetProp(c, (const xmlChar *)"id");
        long x = v ? strtol((const char *)v, NULL, 10) : 0;
        if (x > max) max = x;
        xmlFree(v);
    }
    xmlNsPtr P = xmlSearchNsByHref(p->xml, root, (const xmlChar *)PP_NS_P);
    xmlNsPtr R = xmlSearchNsByHref(p->xml, root, (const xmlChar *)PP_NS_R);
    if (!R) R = xmlNewNs(root, (const xmlChar *)PP_NS_R, (const xmlChar *)"r");
    xmlNodePtr sid = xmlNewChild(lst, P, (const xmlChar *)"sldId", NULL);
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", max + 1);
    xmlSetProp(sid, (const xmlChar *)"id", (const xmlChar *)buf);
    xmlSetNsProp(sid, R, (const xmlChar *)"id", (const xmlChar *)rid);
    free(rid);
    pp_touch(p, p->main);
    push(&p->slides, &p->nslides, part);
    *slide = part;
    return 0;
fail:
    *why = mb_strdup(err.msg);
    free(part);
    return -1;
}
