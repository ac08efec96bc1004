/*
 * tools_format.c - the format tools of office-word-mcp-server
 * (tools/format_tools.py, core/tables.py, core/styles.py): text ranges,
 * custom styles, table borders/shading.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/word/word.h"


/* --------------------------------------------------------- custom style */

int wd_t_create_custom_style(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    /* Upstream's create_style() asks doc.styles.get_by_id(style_name), which
     * in python-docx 1.x never raises (an unknown id gives the default
     * paragraph style), so no style is ever added: the document is opened
     * and saved unchanged and success is reported. Reproduced as is. */
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    wd_doc *d = wd_open_rw(res, f, 0, "create style");
    if (d) {
        char *ok = mb_asprintf("Style '%s' created successfully.", wd_str(a, "style_name"));
        wd_save_answer(d, f, res, "create style", ok);
        free(ok);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

/* ---------------------------------------------------------- format_text */

static const struct {
    const char *name, *hex;
} COLORS[] = {
    {"red", "FF0000"},   {"blue", "0000FF"},   {"green", "008000"},
    {"yellow", "FFFF00"}, {"black", "000000"},  {"gray", "808080"},
    {"white", "FFFFFF"}, {"purple", "800080"}, {"orange", "FFA500"},
};

int wd_t_format_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t pi = json_integer_value(json_object_get(a, "paragraph_index"));
    json_int_t s = json_integer_value(json_object_get(a, "start_pos"));
    json_int_t e = json_integer_value(json_object_get(a, "end_pos"));
    wd_doc *d = wd_open_rw(res, f, 0, "format text");
    if (!d) {
        free(f);
        return 0;
    }
    xmlNodePtr *ps;
    size_t np = wd_paragraphs(d, &ps);
    if (pi < 0 || (size_t)pi >= np) {
        mb_mcp_textf(res, "Invalid paragraph index. Document has %zu paragraphs (0-%lld).", np,
                     (long long)np - 1);
        goto out;
    }
    xmlNodePtr p = ps[pi];
    char *text = wd_para_text_dup(p);
    size_t len = mb_utf8_length(text, strlen(text));
    if (s < 0 || e > (json_int_t)len || s >= e) {
        mb_mcp_textf(res, "Invalid text positions. Paragraph has %zu characters.", len);
        free(text);
        goto out;
    }
    /* byte offsets of the code point positions */
    size_t tl = strlen(text), bs = 0, be = 0, i = 0, k = 0;
    while (i <= tl) {
        if (k == (size_t)s) bs = i;
        if (k == (size_t)e) {
            be = i;
            break;
        }
        if (i == tl) break;
        mb_utf8_next(text, tl, &i);
        k++;
    }
    xmlNodePtr *runs;
    size_t nr = wd_para_runs(p, &runs);
    for (size_t r = 0; r < nr; r++) /* run.clear(): content goes, rPr stays */
        for (xmlNodePtr c = runs[r]->children, next; c; c = next) {
            next = c->next;
            if (wd_is(c, "rPr")) continue;
            xmlUnlinkNode(c);
            xmlFreeNode(c);
        }
    free(runs);
    char *before = mb_strndup(text, bs), *target = mb_strndup(text + bs, be - bs);
    if (s > 0) wd_add_run(d, p, before);
    xmlNodePtr rt = wd_add_run(d, p, target);
    json_t *v;
    if (json_is_boolean(v = json_object_get(a, "bold"))) wd_run_flag(d, rt, "b", json_is_true(v));
    if (json_is_boolean(v = json_object_get(a, "italic"))) wd_run_flag(d, rt, "i", json_is_true(v));
    if (json_is_boolean(v = json_object_get(a, "underline"))) wd_run_underline(d, rt, json_is_true(v));
    const char *color = wd_str(a, "color");
    if (color && *color) {
        const char *hex = NULL;
        char rgb[7], *why = NULL;
        for (size_t c = 0; c < sizeof COLORS / sizeof COLORS[0]; c++)
            if (!strcasecmp(color, COLORS[c].name)) hex = COLORS[c].hex;
        if (!hex) hex = wd_rgb_from_string(color, rgb, &why) ? "000000" : rgb;
        free(why);
        wd_run_color(d, rt, hex);
    }
    json_t *fs = json_object_get(a, "font_size");
    if (json_is_integer(fs) && json_integer_value(fs)) wd_run_size(d, rt, (double)json_integer_value(fs));
    const char *font = wd_str(a, "font_name");
    if (font && *font) wd_run_font(d, rt, font);
    if ((size_t)e < len) wd_add_run(d, p, text + be);
    wd_doc_touch(d);
    char *ok = mb_asprintf("Text '%s' formatted successfully in paragraph %lld.", target, (long long)pi);
    wd_save_answer(d, f, res, "format text", ok);
    free(ok);
    free(before);
    free(target);
    free(text);
out:
    free(ps);
    wd_doc_free(d);
    free(f);
    return 0;
}

/* --------------------------------------------------------- format_table */

static void cell_border(wd_doc *d, xmlNodePtr tc, const char *val)
{
    xmlNodePtr pr = wd_get_tcpr(d, tc);
    static const char *const SIDES[] = {"top", "bottom", "left", "right"};
    for (int i = 0; i < 4; i++) {
        xmlNodePtr b = wd_child(pr, "tcBorders");
        if (!b) b = wd_add(d, pr, "tcBorders");
        xmlNodePtr e = wd_add(d, b, SIDES[i]);
        wd_set(d, e, "val", val);
        wd_set(d, e, "sz", "4");
        wd_set(d, e, "space", "0");
        wd_set(d, e, "color", "000000");
    }
}

/* parse_xml of an attribute value upstream interpolates into XML text */
static int xml_attr_ok(const char *s)
{
    return !strpbrk(s, "\"<&");
}

int wd_t_format_table(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = json_integer_value(json_object_get(a, "table_index"));
    wd_doc *d = wd_open_rw(res, f, 0, "format table");
    if (!d) {
        free(f);
        return 0;
    }
    xmlNodePtr tbl = wd_table_at(d, ti, res);
    if (!tbl) goto out;
    xmlNodePtr *rows;
    size_t nr = wd_table_rows(tbl, &rows);
    if (json_is_true(json_object_get(a, "has_header_row")) && nr) {
        xmlNodePtr *cells;
        size_t nc = wd_row_cells(tbl, rows[0], &cells);
        for (size_t c = 0; c < nc; c++)
            for (xmlNodePtr p = cells[c]->children; p; p = p->next) {
                if (!wd_is(p, "p")) continue;
                xmlNodePtr *runs;
                size_t n = wd_para_runs(p, &runs);
                for (size_t r = 0; r < n; r++) wd_run_flag(d, runs[r], "b", 1);
                free(runs);
            }
        free(cells);
    }
    const char *bs = wd_str(a, "border_style");
    if (bs && *bs) {
        const char *val = !strcasecmp(bs, "none")     ? "nil"
                          : !strcasecmp(bs, "double") ? "double"
                          : !strcasecmp(bs, "thick")  ? "thick"
                                                      : "single";
        for (size_t r = 0; r < nr; r++) {
            xmlNodePtr *cells;
            size_t nc = wd_row_cells(tbl, rows[r], &cells);
            for (size_t c = 0; c < nc; c++) cell_border(d, cells[c], val);
            free(cells);
        }
    }
    json_t *shading = json_object_get(a, "shading");
    for (size_t i = 0; i < json_array_size(shading) && i < nr; i++) {
        json_t *colors = json_array_get(shading, i);
        if (!json_is_array(colors)) break; /* enumerate() of a non-list: upstream fails */
        xmlNodePtr *cells;
        size_t nc = wd_row_cells(tbl, rows[i], &cells);
        for (size_t j = 0; j < json_array_size(colors) && j < nc; j++) {
            json_t *cv = json_array_get(colors, j);
            char *color = json_is_string(cv) ? mb_strdup(json_string_value(cv)) : NULL;
            if (!color) continue; /* f-string of a non-string still parses; kept simple */
            if (xml_attr_ok(color)) {
                xmlNodePtr shd = wd_add(d, wd_get_tcpr(d, cells[j]), "shd");
                wd_set(d, shd, "fill", color);
            }
            free(color);
        }
        free(cells);
    }
    free(rows);
    wd_doc_touch(d);
    char *ok = mb_asprintf("Table at index %lld formatted successfully.", (long long)ti);
    wd_save_answer(d, f, res, "format table", ok);
    free(ok);
out:
    wd_doc_free(d);
    free(f);
    return 0;
}

/* ------------------------------------------------------- cell shading */

int wd_t_set_table_cell_shading(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = json_integer_value(json_object_get(a, "table_index"));
    json_int_t ri = json_integer_value(json_object_get(a, "row_index"));
    json_int_t ci = json_integer_value(json_object_get(a, "col_index"));
    const char *fill = wd_str(a, "fill_color"), *pattern = wd_str(a, "pattern");
    wd_doc *d = wd_open_rw(res, f, 0, "apply cell shading");
    if (!d) {
        free(f);
        return 0;
    }
    xmlNodePtr *rows = NULL, *cells = NULL;
    xmlNodePtr tbl = wd_table_at(d, ti, res);
    if (!tbl) goto out;
    size_t nr = wd_table_rows(tbl, &rows);
    if (ri < 0 || (size_t)ri >= nr) {
        mb_mcp_textf(res, "Invalid row index. Table has %zu rows (0-%lld).", nr, (long long)nr - 1);
        goto out;
    }
    size_t nc = wd_row_cells(tbl, rows[ri], &cells);
    if (ci < 0 || (size_t)ci >= nc) {
        mb_mcp_textf(res, "Invalid column index. Row has %zu cells (0-%lld).", nc, (long long)nc - 1);
        goto out;
    }
    const char *hex = fill;
    while (*hex == '#') hex++;
    char up[64] = "";
    int with_fill = strlen(hex) == 6;
    for (size_t i = 0; with_fill && i < 6; i++) up[i] = (char)toupper((unsigned char)hex[i]);
    if (!xml_attr_ok(pattern) || (with_fill && !xml_attr_ok(up))) {
        mb_mcp_text(res, "Failed to apply cell shading.");
        goto out;
    }
    xmlNodePtr pr = wd_get_tcpr(d, cells[ci]);
    xmlNodePtr old = wd_child(pr, "shd");
    if (old) {
        xmlUnlinkNode(old);
        xmlFreeNode(old);
    }
    xmlNodePtr shd = wd_add(d, pr, "shd");
    wd_set(d, shd, "val", pattern);
    wd_set(d, shd, "color", "auto");
    if (with_fill) wd_set(d, shd, "fill", up);
    wd_doc_touch(d);
    char *ok = mb_asprintf("Cell shading applied successfully to table %lld, row %lld, column %lld.",
                           (long long)ti, (long long)ri, (long long)ci);
    wd_save_answer(d, f, res, "apply cell shading", ok);
    free(ok);
out:
    free(cells);
    free(rows);
    wd_doc_free(d);
    free(f);
    return 0;
}

/* ------------------------------------------------------------ alignment */

/* paragraph.alignment = jc: w:jc at its schema place in w:pPr. */
static void para_align(wd_doc *d, xmlNodePtr p, const char *jc)
{
    static const char *const AFTER[] = {"textDirection", "textAlignment", "textboxTightWrap",
                                        "outlineLvl", "divId", "cnfStyle", "rPr", "sectPr",
                                        "pPrChange", NULL};
    xmlNodePtr ppr = wd_get_ppr(d, p);
    xmlNodePtr e = wd_child(ppr, "jc");
    if (!e) {
        e = wd_new(d, "jc");
        xmlNodePtr at = NULL;
        for (xmlNodePtr c = ppr->children; c && !at; c = c->next)
            for (int i = 0; AFTER[i] && !at; i++)
                if (wd_is(c, AFTER[i])) at = c;
        if (at) xmlAddPrevSibling(at, e);
        else xmlAddChild(ppr, e);
    }
    wd_set(d, e, "val", jc);
}

/* core/tables.py set_cell_alignment */
static void cell_align(wd_doc *d, xmlNodePtr tc, const char *h, const char *v)
{
    const char *jc = !strcasecmp(h, "center") ? "center" : !strcasecmp(h, "right") ? "right"
                     : !strcasecmp(h, "justify") ? "both" : "left";
    for (xmlNodePtr p = tc->children; p; p = p->next)
        if (wd_is(p, "p")) para_align(d, p, jc);
    xmlNodePtr pr = wd_get_tcpr(d, tc);
    xmlNodePtr old = wd_child(pr, "vAlign");
    if (old) {
        xmlUnlinkNode(old);
        xmlFreeNode(old);
    }
    wd_set(d, wd_add(d, pr, "vAlign"), "val",
           !strcasecmp(v, "center") ? "center" : !strcasecmp(v, "bottom") ? "bottom" : "top");
}

static int align_args_ok(mb_mcp_result *res, const char *h, const char *v)
{
    if (strcasecmp(h, "left") && strcasecmp(h, "center") && strcasecmp(h, "right") && strcasecmp(h, "justify")) {
        mb_mcp_text(res, "Invalid horizontal alignment. Valid options: left, center, right, justify");
        return 0;
    }
    if (strcasecmp(v, "top") && strcasecmp(v, "center") && strcasecmp(v, "bottom")) {
        mb_mcp_text(res, "Invalid vertical alignment. Valid options: top, center, bottom");
        return 0;
    }
    return 1;
}

int wd_t_set_table_cell_alignment(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    const char *h = wd_str(a, "horizontal"), *v = wd_str(a, "vertical");
    if (!align_args_ok(res, h, v)) return 0;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = json_integer_value(json_object_get(a, "table_index"));
    json_int_t ri = json_integer_value(json_object_get(a, "row_index"));
    json_int_t ci = json_integer_value(json_object_get(a, "col_index"));
    wd_doc *d = wd_open_rw(res, f, 0, "set cell alignment");
    if (!d) {
        free(f);
        return 0;
    }
    xmlNodePtr *rows = NULL, *cells = NULL;
    size_t nr = 0, nc = 0;
    xmlNodePtr tbl = wd_table_at(d, ti, res);
    if (!tbl) goto out;
    nr = wd_table_rows(tbl, &rows);
    if (ri >= 0 && (size_t)ri < nr) nc = wd_row_cells(tbl, rows[ri], &cells);
    if (ri < 0 || (size_t)ri >= nr || ci < 0 || (size_t)ci >= nc) {
        mb_mcp_text(res, "Failed to set cell alignment. Check that indices are valid.");
        goto out;
    }
    cell_align(d, cells[ci], h, v);
    wd_doc_touch(d);
    char *ok = mb_asprintf("Cell alignment set successfully for table %lld, cell (%lld,%lld) to %s/%s.",
                           (long long)ti, (long long)ri, (long long)ci, h, v);
    wd_save_answer(d, f, res, "set cell alignment", ok);
    free(ok);
out:
    free(cells);
    free(rows);
    wd_doc_free(d);
    free(f);
    return 0;
}

int wd_t_set_table_alignment_all(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    const char *h = wd_str(a, "horizontal"), *v = wd_str(a, "vertical");
    if (!align_args_ok(res, h, v)) return 0;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = json_integer_value(json_object_get(a, "table_index"));
    wd_doc *d = wd_open_rw(res, f, 0, "set table alignment");
    if (!d) {
        free(f);
        return 0;
    }
    xmlNodePtr tbl = wd_table_at(d, ti, res);
    if (tbl) {
        xmlNodePtr *rows;
        size_t nr = wd_table_rows(tbl, &rows);
        for (size_t r = 0; r < nr; r++) {
            xmlNodePtr *cells;
            size_t nc = wd_row_cells(tbl, rows[r], &cells);
            for (size_t c = 0; c < nc; c++) cell_align(d, cells[c], h, v);
            free(cells);
        }
        free(rows);
        wd_doc_touch(d);
        char *ok = mb_asprintf("Table alignment set successfully for table %lld to %s/%s for all cells.",
                               (long long)ti, h, v);
        wd_save_answer(d, f, res, "set table alignment", ok);
        free(ok);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}
