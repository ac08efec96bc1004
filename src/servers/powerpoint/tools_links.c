/*
 * tools_links.c - manage_hyperlinks (tools/hyperlink_tools.py): run-level
 * hyperlinks (a:rPr/a:hlinkClick with an external relationship of the slide),
 * as python-pptx's _Hyperlink.address reads and writes them.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "servers/powerpoint/pp.h"

#define REL_LINK PP_REL "hyperlink"

typedef struct find_ext {
    const char *id, *target;
    char *out;
} find_ext;

static int find_ext_fn(const mb_ooxml_rel *rel, void *payload)
{
    find_ext *f = payload;
    if (!rel->external || strcmp(rel->type, REL_LINK)) return 0;
    if ((f->id && !strcmp(rel->id, f->id)) || (f->target && !strcmp(rel->target, f->target))) {
        f->out = mb_strdup(f->id ? rel->target : rel->id);
        return 1;
    }
    return 0;
}

/* run.hyperlink.address (caller frees) or NULL. */
static char *run_address(pp_pres *p, const char *slide, xmlNodePtr r)
{
    xmlNodePtr h = pp_child(pp_child(r, PP_NS_A, "rPr"), PP_NS_A, "hlinkClick");
    xmlChar *rid = h ? xmlGetNsProp(h, (const xmlChar *)"id", (const xmlChar *)PP_NS_R) : NULL;
    if (!rid) return NULL;
    find_ext f = {(const char *)rid, NULL, NULL};
    mb_err err = {0};
    mb_ooxml_rels_each(p->pkg, slide, find_ext_fn, &f, &err);
    xmlFree(rid);
    return f.out;
}

/* part.relate_to(url, RT.HYPERLINK, is_external=True): an existing matching
 * relationship or a new one. Caller frees the id. */
static char *relate_url(pp_pres *p, const char *slide, const char *url)
{
    find_ext f = {NULL, url, NULL};
    mb_err err = {0};
    mb_ooxml_rels_each(p->pkg, slide, find_ext_fn, &f, &err);
    if (f.out) return f.out;
    char *id = NULL;
    if (mb_ooxml_rel_add(p->pkg, slide, REL_LINK, url, &id, &err)) return NULL;
    char *rels = mb_ooxml_rels_name(slide);
    xmlDocPtr doc = pp_part_xml(p, rels);
    for (xmlNodePtr c = doc ? xmlDocGetRootElement(doc)->children : NULL; c; c = c->next) {
        xmlChar *v = c->type == XML_ELEMENT_NODE ? xmlGetProp(c, (const xmlChar *)"Id") : NULL;
        if (v && !strcmp((const char *)v, id))
            xmlSetProp(c, (const xmlChar *)"TargetMode", (const xmlChar *)"External");
        xmlFree(v);
    }
    mb_ooxml_touch(p->pkg, rels);
    free(rels);
    return id;
}

static int count_refs(xmlNodePtr n, const char *rid)
{
    int c = 0;
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) continue;
        xmlChar *v = xmlGetNsProp(n, (const xmlChar *)"id", (const xmlChar *)PP_NS_R);
        c += v && !strcmp((const char *)v, rid);
        xmlFree(v);
        c += count_refs(n->children, rid);
    }
    return c;
}

/* run.hyperlink.address = url (NULL removes). */
void pp_run_set_address(pp_pres *p, const char *slide, xmlNodePtr r, const char *url)
{
    xmlNodePtr rpr = pp_child(r, PP_NS_A, "rPr");
    xmlNodePtr h = pp_child(rpr, PP_NS_A, "hlinkClick");
    if (h) {
        xmlChar *rid = xmlGetNsProp(h, (const xmlChar *)"id", (const xmlChar *)PP_NS_R);
        xmlUnlinkNode(h);
        xmlFreeNode(h);
        if (rid && count_refs(xmlDocGetRootElement(r->doc), (const char *)rid) < 1) {
            mb_err err = {0};
            mb_ooxml_rel_remove(p->pkg, slide, (const char *)rid, &err);
        }
        xmlFree(rid);
    }
    if (!url || !*url) return;
    char *id = relate_url(p, slide, url);
    if (!id) return;
    if (!rpr) {
        rpr = pp_new(r, PP_NS_A, "rPr");
        xmlUnlinkNode(rpr);
        if (r->children) xmlAddPrevSibling(r->children, rpr);
        else xmlAddChild(r, rpr);
    }
    h = pp_new(rpr, PP_NS_A, "hlinkClick");
    for (xmlNodePtr c = rpr->children; c; c = c->next) {
        if (c != h && (pp_is(c, PP_NS_A, "hlinkMouseOver") || pp_is(c, PP_NS_A, "rtl") ||
                       pp_is(c, PP_NS_A, "extLst"))) {
            xmlUnlinkNode(h);
            xmlAddPrevSibling(c, h);
            break;
        }
    }
    xmlNsPtr R = xmlSearchNsByHref(r->doc, xmlDocGetRootElement(r->doc), (const xmlChar *)PP_NS_R);
    if (!R) R = xmlNewNs(xmlDocGetRootElement(r->doc), (const xmlChar *)PP_NS_R, (const xmlChar *)"r");
    xmlSetNsProp(h, R, (const xmlChar *)"id", (const xmlChar *)id);
    free(id);
}

static json_t *jstr(const char *s)
{
    size_t n;
    char *ok = mb_utf8_repair(s, strlen(s), &n);
    json_t *j = json_stringn(ok, n);
    free(ok);
    return j;
}

static char *run_text(xmlNodePtr r)
{
    xmlNodePtr t = pp_child(r, PP_NS_A, "t");
    xmlChar *s = t ? xmlNodeGetContent(t) : NULL;
    char *out = mb_strdup(s ? (const char *)s : "");
    xmlFree(s);
    return out;
}

static size_t runs_of(xmlNodePtr para, xmlNodePtr **out)
{
    size_t n = 0;
    *out = NULL;
    for (xmlNodePtr c = para ? para->children : NULL; c; c = c->next) {
        if (!pp_is(c, PP_NS_A, "r")) continue;
        *out = mb_realloc(*out, (n + 1) * sizeof **out);
        (*out)[n++] = c;
    }
    return n;
}

static void answer(mb_mcp_result *res, char *msg, json_t *rest)
{
    json_t *d = json_object();
    json_object_set_new(d, "message", jstr(msg));
    free(msg);
    json_object_update(d, rest);
    json_decref(rest);
    pp_answer(res, d);
}

int pp_t_manage_hyperlinks(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_server *s = pp_server_of(call);
    const char *given = json_string_value(json_object_get(args, "presentation_id"));
    pp_pres *p = pp_lookup(s, given && *given ? given : s->current);
    if (!p) {
        pp_errorf(res, "Presentation not found");
        return 0;
    }
    json_int_t si = json_integer_value(json_object_get(args, "slide_index"));
    if (si < 0 || (size_t)si >= p->nslides) {
        pp_errorf(res, "Slide index %lld out of range", (long long)si);
        return 0;
    }
    const char *slide = p->slides[si];
    const char *op = json_string_value(json_object_get(args, "operation"));
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    if (!strcmp(op, "list")) {
        json_t *links = json_array();
        for (size_t i = 0; i < n; i++) {
            if (!pp_is(sh[i], PP_NS_P, "sp")) continue;
            xmlNodePtr tx = pp_child(sh[i], PP_NS_P, "txBody");
            if (!tx) {
                tx = pp_sp_txbody(sh[i]);
                pp_touch(p, slide);
            }
            size_t pi = 0;
            for (xmlNodePtr para = tx->children; para; para = para->next) {
                if (!pp_is(para, PP_NS_A, "p")) continue;
                xmlNodePtr *rs;
                size_t nr = runs_of(para, &rs);
                for (size_t k = 0; k < nr; k++) {
                    char *addr = run_address(p, slide, rs[k]);
                    if (addr && *addr) {
                        char *t = run_text(rs[k]);
                        json_array_append_new(links, json_pack("{s:I,s:I,s:I,s:o,s:o}", "shape_index", (json_int_t)i,
                                                               "paragraph_index", (json_int_t)pi, "run_index",
                                                               (json_int_t)k, "text", jstr(t), "url", jstr(addr)));
                        free(t);
                    }
                    free(addr);
                }
                free(rs);
                pi++;
            }
        }
        free(sh);
        json_t *d = json_object();
        json_object_set_new(d, "hyperlinks", links);
        answer(res, mb_asprintf("Found %zu hyperlinks on slide %lld", json_array_size(links), (long long)si), d);
        return 0;
    }
    json_t *shv = json_object_get(args, "shape_index");
    if (!json_is_integer(shv) || json_integer_value(shv) < 0 || (size_t)json_integer_value(shv) >= n) {
        free(sh);
        if (json_is_integer(shv)) pp_errorf(res, "Shape index %lld out of range", (long long)json_integer_value(shv));
        else pp_errorf(res, "Shape index None out of range");
        return 0;
    }
    xmlNodePtr shape = sh[json_integer_value(shv)];
    free(sh);
    if (!pp_is(shape, PP_NS_P, "sp")) {
        pp_errorf(res, "Shape does not contain text");
        return 0;
    }
    xmlNodePtr tx = pp_sp_txbody(shape);
    xmlNodePtr para0 = pp_child(tx, PP_NS_A, "p");
    const char *text = json_string_value(json_object_get(args, "text"));
    const char *url = json_string_value(json_object_get(args, "url"));
    long long shi = (long long)json_integer_value(shv);
    if (!strcmp(op, "add")) {
        if (!text || !*text || !url || !*url) {
            pp_errorf(res, "Both 'text' and 'url' are required for adding hyperlinks");
            return 0;
        }
        if (!para0) {
            pp_errorf(res, "Failed to manage hyperlinks: tuple index out of range");
            return 0;
        }
        xmlNodePtr r = pp_new(para0, PP_NS_A, "r");
        xmlNodePtr endp = pp_child(para0, PP_NS_A, "endParaRPr");
        if (endp) {
            xmlUnlinkNode(r);
            xmlAddPrevSibling(endp, r);
        }
        xmlNodeAddContent(pp_new(r, PP_NS_A, "t"), (const xmlChar *)text);
        pp_run_set_address(p, slide, r, url);
        pp_touch(p, slide);
        answer(res, mb_asprintf("Added hyperlink '%s' -> '%s' to shape %lld", text, url, shi),
               json_pack("{s:o,s:o}", "text", jstr(text), "url", jstr(url)));
        return 0;
    }
    int upd = !strcmp(op, "update");
    if (!upd && strcmp(op, "remove")) {
        pp_errorf(res, "Unsupported operation: %s. Use 'add', 'remove', 'list', or 'update'", op);
        return 0;
    }
    if (upd && (!url || !*url)) {
        pp_errorf(res, "URL is required for updating hyperlinks");
        return 0;
    }
    xmlNodePtr *rs;
    size_t nr = runs_of(para0, &rs);
    json_int_t ri = json_integer_value(json_object_get(args, "run_index"));
    if (ri >= (json_int_t)nr || ri < -(json_int_t)nr) {
        free(rs);
        pp_errorf(res, "Run index %lld out of range", (long long)ri);
        return 0;
    }
    xmlNodePtr r = rs[ri < 0 ? (json_int_t)nr + ri : ri];
    free(rs);
    char *old = run_address(p, slide, r);
    char *t = run_text(r);
    pp_run_set_address(p, slide, r, upd ? url : NULL);
    pp_touch(p, slide);
    if (upd)
        answer(res, mb_asprintf("Updated hyperlink from '%s' to '%s'", old ? old : "None", url),
               json_pack("{s:o,s:o,s:o}", "old_url", old ? jstr(old) : json_null(), "new_url", jstr(url), "text",
                         jstr(t)));
    else
        answer(res, mb_asprintf("Removed hyperlink '%s' from text '%s'", old ? old : "None", t),
               json_pack("{s:o,s:o}", "removed_url", old ? jstr(old) : json_null(), "text", jstr(t)));
    free(old);
    free(t);
    return 0;
}
