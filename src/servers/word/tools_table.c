/*
 * tools_table.c - the table tools of office-word-mcp-server built on
 * python-docx's cell model (core/tables.py): alternating row shading, header
 * highlighting, and merges with python-docx's _Cell.merge (gridSpan across,
 * vMerge restart/continue down, the merged cells' paragraphs moved into the
 * top-left cell, widths added up).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servers/word/word.h"


/* The table, or NULL with the answer given. */
/* ------------------------------------------------------------- tcPr order */

static const char *const TCPR_ORDER[] = {"cnfStyle", "tcW", "gridSpan", "hMerge", "vMerge",
                                         "tcBorders", "shd", "noWrap", "tcMar", "textDirection",
                                         "tcFitText", "vAlign", "hideMark", NULL};

static int tcpr_rank(xmlNodePtr n)
{
    for (int i = 0; TCPR_ORDER[i]; i++)
        if (wd_is(n, TCPR_ORDER[i])) return i;
    return 100;
}

static xmlNodePtr tcpr_child(wd_doc *d, xmlNodePtr tc, const char *local)
{
    xmlNodePtr pr = wd_get_tcpr(d, tc);
    xmlNodePtr c = wd_child(pr, local);
    if (c) return c;
    c = wd_new(d, local);
    int rank = tcpr_rank(c);
    for (xmlNodePtr s = pr->children; s; s = s->next)
        if (s->type == XML_ELEMENT_NODE && tcpr_rank(s) > rank) {
            xmlAddPrevSibling(s, c);
            return c;
        }
    xmlAddChild(pr, c);
    return c;
}

static void tcpr_remove(xmlNodePtr tc, const char *local)
{
    xmlNodePtr c = wd_child(wd_child(tc, "tcPr"), local);
    if (c) {
        xmlUnlinkNode(c);
        xmlFreeNode(c);
    }
}

/* set_cell_shading: w:shd replaced, appended at the end of tcPr */
static void shade(wd_doc *d, xmlNodePtr tc, const char *fill)
{
    xmlNodePtr pr = wd_get_tcpr(d, tc);
    tcpr_remove(tc, "shd");
    xmlNodePtr shd = wd_add(d, pr, "shd");
    wd_set(d, shd, "val", "clear");
    wd_set(d, shd, "color", "auto");
    const char *h = fill;
    while (*h == '#') h++;
    if (strlen(h) == 6) {
        char up[7];
        for (int i = 0; i < 6; i++) up[i] = (char)toupper((unsigned char)h[i]);
        up[6] = 0;
        wd_set(d, shd, "fill", up);
    }
}

static int fill_ok(const char *s) { return !strpbrk(s, "\"<&"); }

/* ------------------------------------------------------- row shading */

int wd_t_apply_table_alternating_rows(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    const char *c1 = wd_str(a, "color1"), *c2 = wd_str(a, "color2");
    wd_doc *d = wd_open_rw(res, f, 0, "apply alternating row shading");
    xmlNodePtr t = d ? wd_table_at(d, wd_int(a, "table_index"), res) : NULL;
    if (t) {
        xmlNodePtr *rows;
        size_t nr = wd_table_rows(t, &rows);
        int ok = 1;
        for (size_t r = 0; r < nr; r++) {
            xmlNodePtr *cells;
            size_t nc = wd_row_cells(t, rows[r], &cells);
            const char *c = r % 2 == 0 ? c1 : c2;
            for (size_t i = 0; i < nc; i++) {
                if (fill_ok(c)) shade(d, cells[i], c);
                else ok = 0; /* set_cell_shading's parse_xml fails: False, ignored */
            }
            free(cells);
        }
        (void)ok;
        free(rows);
        wd_doc_touch(d);
        char *msg = mb_asprintf("Alternating row shading applied successfully to table %lld.",
                                (long long)wd_int(a, "table_index"));
        wd_save_answer(d, f, res, "apply alternating row shading", msg);
        free(msg);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

int wd_t_highlight_table_header(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    const char *hc = wd_str(a, "header_color"), *tcol = wd_str(a, "text_color");
    wd_doc *d = wd_open_rw(res, f, 0, "apply header highlighting");
    xmlNodePtr t = d ? wd_table_at(d, wd_int(a, "table_index"), res) : NULL;
    if (t) {
        xmlNodePtr *rows;
        size_t nr = wd_table_rows(t, &rows);
        char rgb[7], *why = NULL;
        const char *h = tcol;
        while (*h == '#') h++;
        int color = *tcol && strcmp(tcol, "auto") && strlen(h) >= 6 && !wd_rgb_from_string(h, rgb, &why);
        free(why);
        if (nr) {
            xmlNodePtr *cells;
            size_t nc = wd_row_cells(t, rows[0], &cells);
            for (size_t i = 0; i < nc; i++) {
                if (fill_ok(hc)) shade(d, cells[i], hc);
                for (xmlNodePtr p = cells[i]->children; p; p = p->next) {
                    if (!wd_is(p, "p")) continue;
                    xmlNodePtr *runs;
                    size_t n = wd_para_runs(p, &runs);
                    for (size_t r = 0; r < n; r++) {
                        wd_run_flag(d, runs[r], "b", 1);
                        if (color) wd_run_color(d, runs[r], rgb);
                    }
                    free(runs);
                }
            }
            free(cells);
        }
        free(rows);
        wd_doc_touch(d);
        char *msg = mb_asprintf("Header highlighting applied successfully to table %lld.",
                                (long long)wd_int(a, "table_index"));
        wd_save_answer(d, f, res, "apply header highlighting", msg);
        free(msg);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

/* ---------------------------------------------------------------- merge */

static long span_of(xmlNodePtr tc)
{
    const char *v = wd_attr(wd_child(wd_child(tc, "tcPr"), "gridSpan"), "val");
    long n = v ? strtol(v, NULL, 10) : 1;
    return n < 1 ? 1 : n;
}

static long grid_start(xmlNodePtr tc)
{
    long at = 0;
    const char *gb = wd_attr(wd_child(wd_child(tc->parent, "trPr"), "gridBefore"), "val");
    if (gb) at = strtol(gb, NULL, 10);
    for (xmlNodePtr c = tc->parent->children; c && c != tc; c = c->next)
        if (wd_is(c, "tc")) at += span_of(c);
    return at;
}

static xmlNodePtr tc_at_col(xmlNodePtr tr, long col)
{
    for (xmlNodePtr c = tr ? tr->children : NULL; c; c = c->next)
        if (wd_is(c, "tc") && grid_start(c) == col) return c;
    return NULL;
}

static xmlNodePtr next_tr(xmlNodePtr tr)
{
    for (xmlNodePtr n = tr->next; n; n = n->next)
        if (wd_is(n, "tr")) return n;
    return NULL;
}

static int is_continue(xmlNodePtr tc)
{
    xmlNodePtr vm = wd_child(wd_child(tc, "tcPr"), "vMerge");
    const char *v = vm ? wd_attr(vm, "val") : NULL;
    return vm && (!v || !strcmp(v, "continue"));
}

/* rows spanned by tc (1 + vMerge continuations below) */
static long height_of(xmlNodePtr tc)
{
    long h = 1, col = grid_start(tc);
    for (xmlNodePtr tr = next_tr(tc->parent); tr; tr = next_tr(tr)) {
        xmlNodePtr b = tc_at_col(tr, col);
        if (!b || !is_continue(b)) break;
        h++;
    }
    return h;
}

static long row_index(xmlNodePtr tr)
{
    long i = 0;
    for (xmlNodePtr n = tr->parent->children; n && n != tr; n = n->next) i += wd_is(n, "tr");
    return i;
}

static int p_has_runs(xmlNodePtr p) { return wd_child(p, "r") != NULL; }

static size_t blocks(xmlNodePtr tc, xmlNodePtr *out, size_t cap)
{
    size_t n = 0;
    for (xmlNodePtr c = tc->children; c; c = c->next)
        if (wd_is(c, "p") || wd_is(c, "tbl")) {
            if (out && n < cap) out[n] = c;
            n++;
        }
    return n;
}

/* CT_Tc._move_content_to */
static void move_content(wd_doc *d, xmlNodePtr from, xmlNodePtr to)
{
    if (from == to) return;
    xmlNodePtr only[1];
    size_t n = blocks(from, only, 1);
    if (n == 1 && wd_is(only[0], "p") && !p_has_runs(only[0])) return; /* empty */
    size_t nt = blocks(to, NULL, 0);
    if (nt) {
        xmlNodePtr last = NULL;
        for (xmlNodePtr c = to->children; c; c = c->next)
            if (wd_is(c, "p") || wd_is(c, "tbl")) last = c;
        if (last && wd_is(last, "p") && !p_has_runs(last)) {
            xmlUnlinkNode(last);
            xmlFreeNode(last);
        }
    }
    for (xmlNodePtr c = from->children, next; c; c = next) {
        next = c->next;
        if (wd_is(c, "p") || wd_is(c, "tbl")) {
            xmlUnlinkNode(c);
            xmlAddChild(to, c);
        }
    }
    wd_add(d, from, "p");
}

static long tcw(xmlNodePtr tc)
{
    xmlNodePtr w = wd_child(wd_child(tc, "tcPr"), "tcW");
    const char *type = wd_attr(w, "type"), *v = wd_attr(w, "w");
    if (!w || !v || (type && strcmp(type, "dxa"))) return -1;
    return strtol(v, NULL, 10);
}

static void set_span(wd_doc *d, xmlNodePtr tc, long span)
{
    tcpr_remove(tc, "gridSpan");
    if (span <= 1) return;
    char v[24];
    snprintf(v, sizeof v, "%ld", span);
    wd_set(d, tcpr_child(d, tc, "gridSpan"), "val", v);
}

/* _span_to_width: swallow following cells until `width` grid columns */
static int span_to_width(wd_doc *d, xmlNodePtr tc, long width, xmlNodePtr top, const char *vmerge)
{
    move_content(d, tc, top);
    while (span_of(tc) < width) {
        xmlNodePtr next = tc->next;
        while (next && !wd_is(next, "tc")) next = next->next;
        if (!next || span_of(tc) + span_of(next) > width) return -1; /* InvalidSpanError */
        move_content(d, next, top);
        long w1 = tcw(tc), w2 = tcw(next);
        if (w1 > 0 && w2 > 0) {
            char v[24];
            snprintf(v, sizeof v, "%ld", w1 + w2);
            xmlNodePtr w = tcpr_child(d, tc, "tcW");
            wd_set(d, w, "type", "dxa");
            wd_set(d, w, "w", v);
        }
        set_span(d, tc, span_of(tc) + span_of(next));
        xmlUnlinkNode(next);
        xmlFreeNode(next);
    }
    tcpr_remove(tc, "vMerge");
    if (vmerge) {
        xmlNodePtr vm = tcpr_child(d, tc, "vMerge");
        if (strcmp(vmerge, "continue")) wd_set(d, vm, "val", vmerge);
    }
    return 0;
}

static int grow_to(wd_doc *d, xmlNodePtr tc, long width, long height, xmlNodePtr top)
{
    const char *vm = tc != top ? "continue" : height == 1 ? NULL : "restart";
    if (span_to_width(d, tc, width, top, vm)) return -1;
    if (height > 1) {
        xmlNodePtr below = tc_at_col(next_tr(tc->parent), grid_start(tc));
        if (!below) return -1;
        return grow_to(d, below, width, height - 1, top);
    }
    return 0;
}

/* python-docx table.cell(r, c).merge(table.cell(r2, c2)); -1 on InvalidSpanError */
static int merge(wd_doc *d, xmlNodePtr tbl, long r1, long c1, long r2, long c2)
{
    xmlNodePtr *rows;
    size_t nr = wd_table_rows(tbl, &rows);
    xmlNodePtr a = NULL, b = NULL, *cells;
    size_t nc = wd_row_cells(tbl, rows[r1], &cells);
    if ((size_t)c1 < nc) a = cells[c1];
    free(cells);
    nc = wd_row_cells(tbl, rows[r2], &cells);
    if ((size_t)c2 < nc) b = cells[c2];
    free(cells);
    free(rows);
    (void)nr;
    if (!a || !b) return -1;
    long at = row_index(a->parent), al = grid_start(a), ab = at + height_of(a), ar = al + span_of(a);
    long bt = row_index(b->parent), bl = grid_start(b), bb = bt + height_of(b), br = bl + span_of(b);
    long top = at < bt ? at : bt, left = al < bl ? al : bl;
    long bottom = ab > bb ? ab : bb, right = ar > br ? ar : br;
    xmlNodePtr *all;
    size_t n = wd_table_rows(tbl, &all);
    xmlNodePtr top_tc = (size_t)top < n ? tc_at_col(all[top], left) : NULL;
    free(all);
    if (!top_tc) return -1;
    return grow_to(d, top_tc, right - left, bottom - top, top_tc);
}

static int merge_tool(json_t *a, mb_mcp_result *res, long r1, long c1, long r2, long c2,
                      const char *verb, const char *fail, const char *ok, int checks)
{
    char *f = wd_docx_name(wd_str(a, "filename"));
    wd_doc *d = wd_open_rw(res, f, 0, verb);
    xmlNodePtr t = d ? wd_table_at(d, wd_int(a, "table_index"), res) : NULL;
    if (!t) goto out;
    if (checks && (r1 > r2 || c1 > c2)) {
        mb_mcp_text(res, "Invalid merge range: start indices must be <= end indices");
        goto out;
    }
    if (checks && r1 == r2 && c1 == c2) {
        mb_mcp_text(res, "Invalid merge range: cannot merge a single cell with itself");
        goto out;
    }
    /* core/tables.py merge_cells validation */
    xmlNodePtr *rows;
    size_t nr = wd_table_rows(t, &rows);
    int valid = !(r1 < 0 || c1 < 0 || r2 < 0 || c2 < 0 || (size_t)r1 >= nr || (size_t)r2 >= nr ||
                  r1 > r2 || c1 > c2);
    for (long r = r1; valid && r <= r2; r++) {
        xmlNodePtr *cells;
        size_t nc = wd_row_cells(t, rows[r], &cells);
        free(cells);
        if ((size_t)c1 >= nc || (size_t)c2 >= nc) valid = 0;
    }
    free(rows);
    if (!valid || merge(d, t, r1, c1, r2, c2)) {
        mb_mcp_text(res, fail);
        goto out;
    }
    wd_doc_touch(d);
    wd_save_answer(d, f, res, verb, ok);
out:
    wd_doc_free(d);
    free(f);
    return 0;
}

int wd_t_merge_table_cells(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    json_int_t t = wd_int(a, "table_index"), r1 = wd_int(a, "start_row"), c1 = wd_int(a, "start_col"),
               r2 = wd_int(a, "end_row"), c2 = wd_int(a, "end_col");
    char *ok = mb_asprintf("Cells merged successfully in table %lld from (%lld,%lld) to (%lld,%lld).",
                           (long long)t, (long long)r1, (long long)c1, (long long)r2, (long long)c2);
    merge_tool(a, res, r1, c1, r2, c2, "merge cells", "Failed to merge cells. Check that indices are valid.",
               ok, 1);
    free(ok);
    return 0;
}

int wd_t_merge_table_cells_horizontal(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    json_int_t t = wd_int(a, "table_index"), r = wd_int(a, "row_index"), c1 = wd_int(a, "start_col"),
               c2 = wd_int(a, "end_col");
    char *ok = mb_asprintf("Cells merged horizontally in table %lld, row %lld, columns %lld-%lld.",
                           (long long)t, (long long)r, (long long)c1, (long long)c2);
    merge_tool(a, res, r, c1, r, c2, "merge cells horizontally",
               "Failed to merge cells horizontally. Check that indices are valid.", ok, 0);
    free(ok);
    return 0;
}

int wd_t_merge_table_cells_vertical(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    json_int_t t = wd_int(a, "table_index"), c = wd_int(a, "col_index"), r1 = wd_int(a, "start_row"),
               r2 = wd_int(a, "end_row");
    char *ok = mb_asprintf("Cells merged vertically in table %lld, column %lld, rows %lld-%lld.",
                           (long long)t, (long long)c, (long long)r1, (long long)r2);
    merge_tool(a, res, r1, c, r2, c, "merge cells vertically",
               "Failed to merge cells vertically. Check that indices are valid.", ok, 0);
    free(ok);
    return 0;
}
