/*
 * doc.c - opening, creating and saving a .docx as python-docx does, and the
 * read side of the model: body paragraphs and tables, python-docx's text
 * rules, table geometry, style names.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "servers/word/word.h"

/* Where Debian's python3-docx keeps python-docx's default.docx; the
 * dependency installer puts it there (scripts/install-deps). */
static const char *const TEMPLATES[] = {
    "/usr/lib/python3/dist-packages/docx/templates/default.docx",
    "/usr/local/lib/python3/dist-packages/docx/templates/default.docx",
    NULL,
};

/* ------------------------------------------------------------ elements */

int wd_is(xmlNodePtr n, const char *local)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href &&
           !strcmp((const char *)n->ns->href, WD_NS_W) && !strcmp((const char *)n->name, local);
}

xmlNodePtr wd_child(xmlNodePtr n, const char *local)
{
    for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
        if (wd_is(c, local)) return c;
    return NULL;
}

const char *wd_attr(xmlNodePtr n, const char *local)
{
    for (xmlAttrPtr a = n ? n->properties : NULL; a; a = a->next)
        if (a->ns && !strcmp((const char *)a->ns->href, WD_NS_W) &&
            !strcmp((const char *)a->name, local))
            return a->children && a->children->content ? (const char *)a->children->content : "";
    return NULL;
}

xmlNodePtr wd_new(wd_doc *d, const char *local)
{
    xmlNodePtr n = xmlNewDocNode(d->xml, d->w, (const xmlChar *)local, NULL);
    return n;
}

xmlNodePtr wd_add(wd_doc *d, xmlNodePtr parent, const char *local)
{
    xmlNodePtr n = wd_new(d, local);
    xmlAddChild(parent, n);
    return n;
}

void wd_set(wd_doc *d, xmlNodePtr n, const char *local, const char *value)
{
    xmlNsPtr ns = d->w;
    if (n->doc != d->xml) ns = xmlSearchNsByHref(n->doc, n, (const xmlChar *)WD_NS_W);
    xmlSetNsProp(n, ns, (const xmlChar *)local, (const xmlChar *)value);
}

/* --------------------------------------------------------------- open */

typedef struct find_rel {
    const char *suffix;
    char *target;
} find_rel;

static int rel_by_type(const mb_ooxml_rel *rel, void *payload)
{
    find_rel *f = payload;
    if (rel->external || !mb_str_has_suffix(rel->type, f->suffix)) return 0;
    f->target = mb_strdup(rel->target);
    return 1;
}

static char *part_by_rel(mb_ooxml *pkg, const char *source, const char *suffix)
{
    find_rel f = {.suffix = suffix};
    mb_err err = {0};
    if (mb_ooxml_rels_each(pkg, source, rel_by_type, &f, &err) <= 0 || !f.target) return NULL;
    char *name = mb_ooxml_resolve(source, f.target);
    free(f.target);
    return name;
}

static int finish_open(wd_doc *d, const char *shown, char **why)
{
    mb_err err = {0};
    d->main = part_by_rel(d->pkg, "", "/officeDocument");
    if (!d->main || !mb_ooxml_has(d->pkg, d->main)) {
        *why = mb_strdup("file has no main document part (officeDocument relationship)");
        return -1;
    }
    const char *ct = mb_ooxml_ct_get(d->pkg, d->main);
    if (!ct || strcmp(ct, WD_CT_MAIN)) {
        /* python-docx: ValueError for .docm, .dotx and anything else */
        *why = mb_asprintf("file '%s' is not a Word file, content type is '%s'", shown,
                           ct ? ct : "");
        return -1;
    }
    if (mb_ooxml_xml(d->pkg, d->main, &d->xml, &err)) {
        *why = mb_strdup(err.msg);
        return -1;
    }
    xmlNodePtr root = xmlDocGetRootElement(d->xml);
    if (!wd_is(root, "document") || !(d->body = wd_child(root, "body"))) {
        *why = mb_strdup("word/document.xml has no w:document/w:body");
        return -1;
    }
    d->w = root->ns;
    d->styles_part = part_by_rel(d->pkg, d->main, "/styles");
    if (d->styles_part && !mb_ooxml_has(d->pkg, d->styles_part)) {
        free(d->styles_part);
        d->styles_part = NULL;
    }
    return 0;
}

int wd_doc_open(const char *path, wd_doc **out, char **why)
{
    *out = NULL;
    *why = NULL;
    wd_doc *d = mb_calloc(1, sizeof *d);
    mb_err err = {0};
    int sys = 0;
    int rc = mb_ooxml_open(path, NULL, &d->pkg, &sys, &err);
    if (rc) {
        if (sys) *why = mb_py_os_error(sys, path);
        else if (rc == MB_EINVAL && strstr(err.msg, "zip"))
            *why = mb_strdup("File is not a zip file");
        else *why = mb_strdup(err.msg);
        wd_doc_free(d);
        return -1;
    }
    if (finish_open(d, path, why)) {
        wd_doc_free(d);
        return -1;
    }
    *out = d;
    return 0;
}

int wd_doc_new(wd_doc **out, char **why)
{
    for (int i = 0; TEMPLATES[i]; i++) {
        struct stat st;
        if (stat(TEMPLATES[i], &st)) continue;
        if (wd_doc_open(TEMPLATES[i], out, why)) return -1;
        return 0;
    }
    *out = NULL;
    *why = mb_strdup("python-docx's default.docx template is not installed (Debian python3-docx)");
    return -1;
}

void wd_doc_touch(wd_doc *d) { mb_ooxml_touch(d->pkg, d->main); }
void wd_doc_touch_styles(wd_doc *d)
{
    if (d->styles_part) mb_ooxml_touch(d->pkg, d->styles_part);
}

int wd_doc_save(wd_doc *d, const char *path, char **why)
{
    mb_err err = {0};
    if (mb_ooxml_save_as(d->pkg, path, &err)) {
        *why = mb_strdup(err.msg);
        return -1;
    }
    return 0;
}

void wd_doc_free(wd_doc *d)
{
    if (!d) return;
    mb_ooxml_free(d->pkg);
    free(d->main);
    free(d->styles_part);
    free(d);
}

/* ----------------------------------------------------------- structure */

static size_t children_named(xmlNodePtr parent, const char *local, xmlNodePtr **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    for (xmlNodePtr c = parent ? parent->children : NULL; c; c = c->next) {
        if (!wd_is(c, local)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = mb_realloc(*out, cap * sizeof **out);
        }
        (*out)[n++] = c;
    }
    return n;
}

size_t wd_paragraphs(wd_doc *d, xmlNodePtr **out) { return children_named(d->body, "p", out); }
size_t wd_tables(wd_doc *d, xmlNodePtr **out) { return children_named(d->body, "tbl", out); }
size_t wd_child_paragraphs(xmlNodePtr parent, xmlNodePtr **out)
{
    return children_named(parent, "p", out);
}
size_t wd_para_runs(xmlNodePtr p, xmlNodePtr **out) { return children_named(p, "r", out); }
size_t wd_table_rows(xmlNodePtr tbl, xmlNodePtr **out) { return children_named(tbl, "tr", out); }

size_t wd_table_cols(xmlNodePtr tbl)
{
    xmlNodePtr *g;
    size_t n = children_named(wd_child(tbl, "tblGrid"), "gridCol", &g);
    free(g);
    return n;
}

/* ---------------------------------------------------------------- text */

void wd_run_text(xmlNodePtr r, mb_buf *b)
{
    for (xmlNodePtr c = r->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (wd_is(c, "t")) {
            xmlChar *s = xmlNodeGetContent(c);
            if (s) mb_buf_puts(b, (const char *)s);
            xmlFree(s);
        } else if (wd_is(c, "tab") || wd_is(c, "ptab")) {
            mb_buf_putc(b, '\t');
        } else if (wd_is(c, "br")) {
            const char *t = wd_attr(c, "type");
            if (!t || !strcmp(t, "textWrapping")) mb_buf_putc(b, '\n');
        } else if (wd_is(c, "cr")) {
            mb_buf_putc(b, '\n');
        } else if (wd_is(c, "noBreakHyphen")) {
            mb_buf_putc(b, '-');
        }
    }
}

void wd_para_text(xmlNodePtr p, mb_buf *b)
{
    for (xmlNodePtr c = p->children; c; c = c->next) {
        if (wd_is(c, "r")) wd_run_text(c, b);
        else if (wd_is(c, "hyperlink"))
            for (xmlNodePtr r = c->children; r; r = r->next)
                if (wd_is(r, "r")) wd_run_text(r, b);
    }
}

char *wd_para_text_dup(xmlNodePtr p)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    wd_para_text(p, &b);
    return mb_buf_steal(&b);
}

char *wd_cell_text(xmlNodePtr tc)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    int first = 1;
    for (xmlNodePtr c = tc->children; c; c = c->next) {
        if (!wd_is(c, "p")) continue;
        if (!first) mb_buf_putc(&b, '\n');
        first = 0;
        wd_para_text(c, &b);
    }
    return mb_buf_steal(&b);
}

/* -------------------------------------------------------------- tables */

static long tc_span(xmlNodePtr tc)
{
    xmlNodePtr pr = wd_child(tc, "tcPr");
    const char *v = wd_attr(wd_child(pr, "gridSpan"), "val");
    long n = v ? strtol(v, NULL, 10) : 1;
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

static int tc_continues(xmlNodePtr tc)
{
    xmlNodePtr vm = wd_child(wd_child(tc, "tcPr"), "vMerge");
    if (!vm) return 0;
    const char *v = wd_attr(vm, "val");
    return !v || !strcmp(v, "continue");
}

/* The w:tc of `tr` covering grid column `col`, or NULL. */
static xmlNodePtr tc_at(xmlNodePtr tr, long col)
{
    long at = 0;
    const char *gb = wd_attr(wd_child(wd_child(tr, "trPr"), "gridBefore"), "val");
    if (gb) at = strtol(gb, NULL, 10);
    for (xmlNodePtr c = tr->children; c; c = c->next) {
        if (!wd_is(c, "tc")) continue;
        long span = tc_span(c);
        if (col >= at && col < at + span) return c;
        at += span;
    }
    return NULL;
}

size_t wd_row_cells(xmlNodePtr tbl, xmlNodePtr tr, xmlNodePtr **out)
{
    (void)tbl;
    size_t n = 0, cap = 0;
    *out = NULL;
    long at = 0;
    for (xmlNodePtr c = tr->children; c; c = c->next) {
        if (!wd_is(c, "tc")) continue;
        long span = tc_span(c);
        xmlNodePtr cell = c;
        if (tc_continues(c)) {
            /* walk up to the cell that starts the vertical merge */
            for (xmlNodePtr up = tr->prev; up; up = up->prev) {
                if (!wd_is(up, "tr")) continue;
                xmlNodePtr above = tc_at(up, at);
                if (!above) break;
                cell = above;
                if (!tc_continues(above)) break;
            }
        }
        for (long i = 0; i < span; i++) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                *out = mb_realloc(*out, cap * sizeof **out);
            }
            (*out)[n++] = cell;
        }
        at += span;
    }
    return n;
}

/* --------------------------------------------------------------- styles */

/* BabelFish: the UI names python-docx shows for Word's internal names. */
static const char *const ALIASES[][2] = {
    {"Caption", "caption"}, {"Footer", "footer"}, {"Header", "header"},
    {"Heading 1", "heading 1"}, {"Heading 2", "heading 2"}, {"Heading 3", "heading 3"},
    {"Heading 4", "heading 4"}, {"Heading 5", "heading 5"}, {"Heading 6", "heading 6"},
    {"Heading 7", "heading 7"}, {"Heading 8", "heading 8"}, {"Heading 9", "heading 9"},
};
#define NALIASES (sizeof ALIASES / sizeof ALIASES[0])

static const char *ui_name(const char *internal)
{
    for (size_t i = 0; i < NALIASES; i++)
        if (!strcmp(internal, ALIASES[i][1])) return ALIASES[i][0];
    return internal;
}

static const char *internal_name(const char *ui)
{
    for (size_t i = 0; i < NALIASES; i++)
        if (!strcmp(ui, ALIASES[i][0])) return ALIASES[i][1];
    return ui;
}

const char *wd_style_id(xmlNodePtr style) { return wd_attr(style, "styleId"); }

xmlDocPtr wd_styles(wd_doc *d)
{
    if (!d->styles && d->styles_part && !d->styles_failed) {
        mb_err err = {0};
        /* python-docx fails to open such a document; here the styles read as absent */
        if (mb_ooxml_xml(d->pkg, d->styles_part, &d->styles, &err)) d->styles_failed = 1;
    }
    return d->styles;
}

static xmlNodePtr styles_root(wd_doc *d)
{
    return wd_styles(d) ? xmlDocGetRootElement(d->styles) : NULL;
}

static int type_is(xmlNodePtr s, const char *type)
{
    const char *t = wd_attr(s, "type");
    return !strcmp(t ? t : "paragraph", type);
}

static xmlNodePtr default_style(wd_doc *d, const char *type)
{
    xmlNodePtr found = NULL;
    for (xmlNodePtr s = styles_root(d) ? styles_root(d)->children : NULL; s; s = s->next) {
        if (!wd_is(s, "style") || !type_is(s, type)) continue;
        const char *def = wd_attr(s, "default");
        if (def && (!strcmp(def, "1") || !strcmp(def, "true") || !strcmp(def, "on"))) found = s;
    }
    return found; /* python-docx takes the last one */
}

static const char *style_name(xmlNodePtr s)
{
    const char *n = wd_attr(wd_child(s, "name"), "val");
    return n ? ui_name(n) : NULL;
}

const char *wd_para_style_name(wd_doc *d, xmlNodePtr p)
{
    const char *id = wd_attr(wd_child(wd_child(p, "pPr"), "pStyle"), "val");
    xmlNodePtr st = NULL;
    if (id)
        for (xmlNodePtr s = styles_root(d) ? styles_root(d)->children : NULL; s && !st; s = s->next)
            if (wd_is(s, "style") && wd_style_id(s) && !strcmp(wd_style_id(s), id)) st = s;
    if (!st || !type_is(st, "paragraph")) st = default_style(d, "paragraph");
    if (!st) return NULL;
    const char *n = style_name(st);
    return n ? n : "";
}

xmlNodePtr wd_style_by_name(wd_doc *d, const char *name, const char *type)
{
    const char *want = internal_name(name);
    for (xmlNodePtr s = styles_root(d) ? styles_root(d)->children : NULL; s; s = s->next) {
        if (!wd_is(s, "style")) continue;
        const char *n = wd_attr(wd_child(s, "name"), "val");
        if (n && !strcmp(n, want)) return type && !type_is(s, type) ? NULL : s;
    }
    return NULL;
}

int wd_para_set_style(wd_doc *d, xmlNodePtr p, const char *name)
{
    xmlNodePtr st = wd_style_by_name(d, name, NULL);
    if (!st || !type_is(st, "paragraph")) return -1;
    xmlNodePtr ppr = wd_child(p, "pPr");
    xmlNodePtr ps = wd_child(ppr, "pStyle");
    if (st == default_style(d, "paragraph")) { /* python-docx removes pStyle */
        if (ps) {
            xmlUnlinkNode(ps);
            xmlFreeNode(ps);
        }
        return 0;
    }
    if (!ps) {
        ppr = wd_get_ppr(d, p);
        ps = wd_new(d, "pStyle");
        if (ppr->children) xmlAddPrevSibling(ppr->children, ps);
        else xmlAddChild(ppr, ps);
    }
    wd_set(d, ps, "val", wd_style_id(st) ? wd_style_id(st) : "");
    return 0;
}
