/*
 * edit.c - the write side of the model, as python-docx writes it: new
 * paragraphs before the body's sectPr, runs whose text maps \t to w:tab and
 * \n/\r to w:br, run properties in schema order, new tables
 * (CT_Tbl.new_tbl), cell text.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servers/word/word.h"

/* ------------------------------------------------------------ paragraph */

xmlNodePtr wd_add_paragraph(wd_doc *d, const char *text)
{
    xmlNodePtr p = wd_new(d, "p");
    xmlNodePtr sect = wd_child(d->body, "sectPr");
    if (sect) xmlAddPrevSibling(sect, p);
    else xmlAddChild(d->body, p);
    if (text && *text) wd_add_run(d, p, text);
    return p;
}

xmlNodePtr wd_add_run(wd_doc *d, xmlNodePtr p, const char *text)
{
    xmlNodePtr r = wd_add(d, p, "r");
    if (text && *text) wd_run_set_text(d, r, text);
    return r;
}

static void flush_t(wd_doc *d, xmlNodePtr r, mb_buf *acc)
{
    if (!acc->len) return;
    xmlNodePtr t = wd_add(d, r, "t");
    xmlNodeAddContentLen(t, (const xmlChar *)acc->data, (int)acc->len);
    unsigned char first = (unsigned char)acc->data[0], last = (unsigned char)acc->data[acc->len - 1];
    if (first == ' ' || last == ' ' || (first >= 9 && first <= 13) || (last >= 9 && last <= 13))
        xmlNodeSetSpacePreserve(t, 1);
    mb_buf_reset(acc);
}

void wd_run_set_text(wd_doc *d, xmlNodePtr r, const char *text)
{
    /* clear everything but rPr */
    for (xmlNodePtr c = r->children, next; c; c = next) {
        next = c->next;
        if (wd_is(c, "rPr")) continue;
        xmlUnlinkNode(c);
        xmlFreeNode(c);
    }
    mb_buf acc = {0};
    for (const char *s = text; *s; s++) {
        if (*s == '\t') {
            flush_t(d, r, &acc);
            wd_add(d, r, "tab");
        } else if (*s == '\n' || *s == '\r') {
            flush_t(d, r, &acc);
            wd_add(d, r, "br");
        } else {
            mb_buf_putc(&acc, *s);
        }
    }
    flush_t(d, r, &acc);
    mb_buf_free(&acc);
}

/* --------------------------------------------------------- properties */

static xmlNodePtr get_pr(wd_doc *d, xmlNodePtr n, const char *local)
{
    xmlNodePtr pr = wd_child(n, local);
    if (pr) return pr;
    pr = wd_new(d, local);
    if (n->children) xmlAddPrevSibling(n->children, pr);
    else xmlAddChild(n, pr);
    return pr;
}

xmlNodePtr wd_get_ppr(wd_doc *d, xmlNodePtr p) { return get_pr(d, p, "pPr"); }
xmlNodePtr wd_get_tcpr(wd_doc *d, xmlNodePtr tc) { return get_pr(d, tc, "tcPr"); }

/* CT_RPr child order (ECMA-376 / python-docx). */
static const char *const RPR_ORDER[] = {
    "rStyle", "rFonts", "b", "bCs", "i", "iCs", "caps", "smallCaps", "strike", "dstrike",
    "outline", "shadow", "emboss", "imprint", "noProof", "snapToGrid", "vanish", "webHidden",
    "color", "spacing", "w", "kern", "position", "sz", "szCs", "highlight", "u", "effect", "bdr",
    "shd", "fitText", "vertAlign", "rtl", "cs", "em", "lang", "eastAsianLayout", "specVanish",
    "oMath", NULL,
};

static int rpr_rank(xmlNodePtr n)
{
    for (int i = 0; RPR_ORDER[i]; i++)
        if (wd_is(n, RPR_ORDER[i])) return i;
    return 1000;
}

/* The w:rPr child `local`, created at its schema place when absent. */
static xmlNodePtr rpr_child(wd_doc *d, xmlNodePtr r, const char *local)
{
    xmlNodePtr rpr = get_pr(d, r, "rPr");
    xmlNodePtr c = wd_child(rpr, local);
    if (c) return c;
    c = wd_new(d, local);
    int rank = rpr_rank(c);
    for (xmlNodePtr s = rpr->children; s; s = s->next)
        if (s->type == XML_ELEMENT_NODE && rpr_rank(s) > rank) {
            xmlAddPrevSibling(s, c);
            return c;
        }
    xmlAddChild(rpr, c);
    return c;
}

void wd_run_flag(wd_doc *d, xmlNodePtr r, const char *local, int on)
{
    xmlNodePtr c = rpr_child(d, r, local);
    if (on) xmlUnsetNsProp(c, c->ns, (const xmlChar *)"val");
    else wd_set(d, c, "val", "0");
}

void wd_run_underline(wd_doc *d, xmlNodePtr r, int on)
{
    wd_set(d, rpr_child(d, r, "u"), "val", on ? "single" : "none");
}

void wd_run_color(wd_doc *d, xmlNodePtr r, const char *hex6)
{
    xmlNodePtr c = rpr_child(d, r, "color");
    xmlUnsetNsProp(c, c->ns, (const xmlChar *)"themeColor");
    xmlUnsetNsProp(c, c->ns, (const xmlChar *)"themeTint");
    xmlUnsetNsProp(c, c->ns, (const xmlChar *)"themeShade");
    wd_set(d, c, "val", hex6);
}

void wd_run_size(wd_doc *d, xmlNodePtr r, double points)
{
    /* Pt(x) is int(x * 12700) EMU; half-points = emu // 6350 */
    long emu = (long)(points * 12700.0);
    char v[32];
    snprintf(v, sizeof v, "%ld", emu / 6350);
    wd_set(d, rpr_child(d, r, "sz"), "val", v);
}

void wd_run_font(wd_doc *d, xmlNodePtr r, const char *name)
{
    xmlNodePtr f = rpr_child(d, r, "rFonts");
    wd_set(d, f, "ascii", name);
    wd_set(d, f, "hAnsi", name);
}

int wd_rgb_from_string(const char *s, char out[7], char **why)
{
    /* int(s[0:2], 16), int(s[2:4], 16), int(s[4:6], 16) */
    size_t len = strlen(s);
    for (size_t k = 0; k < 3; k++) {
        size_t a = 2 * k < len ? 2 * k : len, b = 2 * k + 2 < len ? 2 * k + 2 : len;
        int ok = b > a;
        for (size_t i = a; i < b; i++) {
            char c = s[i];
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) ok = 0;
        }
        if (!ok) {
            *why = mb_asprintf("invalid literal for int() with base 16: '%.*s'", (int)(b - a), s + a);
            return -1;
        }
    }
    for (int i = 0; i < 6; i++) out[i] = (char)(s[i] >= 'a' && s[i] <= 'f' ? s[i] - 32 : s[i]);
    out[6] = 0;
    return 0;
}

/* -------------------------------------------------------------- tables */

static long block_width_emu(wd_doc *d)
{
    xmlNodePtr sect = wd_child(d->body, "sectPr");
    const char *w = wd_attr(wd_child(sect, "pgSz"), "w");
    xmlNodePtr mar = wd_child(sect, "pgMar");
    const char *l = wd_attr(mar, "left"), *r = wd_attr(mar, "right");
    if (!w || !l || !r) return 0; /* python-docx: None arithmetic fails; keep 0 */
    return (strtol(w, NULL, 10) - strtol(l, NULL, 10) - strtol(r, NULL, 10)) * 635L;
}

xmlNodePtr wd_add_table(wd_doc *d, long rows, long cols)
{
    long colw_emu = cols > 0 ? block_width_emu(d) / cols : 0;
    double tw = (double)colw_emu / 635.0;
    char w[32];
    snprintf(w, sizeof w, "%ld", (long)(tw + (tw >= 0 ? 0.5 : -0.5)));
    xmlNodePtr tbl = wd_new(d, "tbl");
    xmlNodePtr sect = wd_child(d->body, "sectPr");
    if (sect) xmlAddPrevSibling(sect, tbl);
    else xmlAddChild(d->body, tbl);
    xmlNodePtr pr = wd_add(d, tbl, "tblPr");
    xmlNodePtr st = wd_style_by_name(d, "Table Grid", "table");
    if (st) wd_set(d, wd_add(d, pr, "tblStyle"), "val", wd_style_id(st) ? wd_style_id(st) : "");
    xmlNodePtr tw_ = wd_add(d, pr, "tblW");
    wd_set(d, tw_, "type", "auto");
    wd_set(d, tw_, "w", "0");
    xmlNodePtr look = wd_add(d, pr, "tblLook");
    static const char *const LOOK[][2] = {{"firstColumn", "1"}, {"firstRow", "1"},
                                          {"lastColumn", "0"},  {"lastRow", "0"},
                                          {"noHBand", "0"},     {"noVBand", "1"},
                                          {"val", "04A0"}};
    for (size_t i = 0; i < sizeof LOOK / sizeof LOOK[0]; i++) wd_set(d, look, LOOK[i][0], LOOK[i][1]);
    xmlNodePtr grid = wd_add(d, tbl, "tblGrid");
    for (long c = 0; c < cols; c++) wd_set(d, wd_add(d, grid, "gridCol"), "w", w);
    for (long r = 0; r < rows; r++) {
        xmlNodePtr tr = wd_add(d, tbl, "tr");
        for (long c = 0; c < cols; c++) {
            xmlNodePtr tc = wd_add(d, tr, "tc");
            xmlNodePtr tcw = wd_add(d, wd_add(d, tc, "tcPr"), "tcW");
            wd_set(d, tcw, "type", "dxa");
            wd_set(d, tcw, "w", w);
            wd_add(d, tc, "p");
        }
    }
    return tbl;
}

void wd_cell_set_text(wd_doc *d, xmlNodePtr tc, const char *text)
{
    for (xmlNodePtr c = tc->children, next; c; c = next) {
        next = c->next;
        if (wd_is(c, "tcPr")) continue;
        xmlUnlinkNode(c);
        xmlFreeNode(c);
    }
    xmlNodePtr p = wd_add(d, tc, "p");
    xmlNodePtr r = wd_add(d, p, "r");
    wd_run_set_text(d, r, text);
}

void wd_run_superscript(wd_doc *d, xmlNodePtr r)
{
    wd_set(d, rpr_child(d, r, "vertAlign"), "val", "superscript");
}
