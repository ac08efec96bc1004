/*
 * tools_width.c - table width, cell text and padding tools of
 * office-word-mcp-server (tools/format_tools.py, core/tables.py): w:tcW,
 * w:tblW, w:tblLayout and w:tcMar appended at the end of their properties
 * element (upstream appends, out of schema order; readers do not mind).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/word/word.h"


/* repr() of a Python float (pydantic gives float parameters as floats) */
static char *py_float(double x)
{
    json_t *arr = json_pack("[f]", x);
    char *s = mb_py_json_dumps(arr, -1, 0);
    json_decref(arr);
    char *out = mb_strndup(s + 1, strlen(s) - 2);
    free(s);
    return out;
}

static void replace_child(wd_doc *d, xmlNodePtr parent, const char *local, const char *w, const char *type)
{
    xmlNodePtr old = wd_child(parent, local);
    if (old) {
        xmlUnlinkNode(old);
        xmlFreeNode(old);
    }
    xmlNodePtr e = wd_add(d, parent, local);
    if (w) wd_set(d, e, "w", w);
    wd_set(d, e, "type", type);
}

/* "points" etc. -> the value written and its w:type, as upstream converts */
static const char *word_type(const char *t)
{
    return !strcasecmp(t, "percent") ? "pct" : !strcasecmp(t, "auto") ? "auto" : "dxa";
}

static char *word_value(double width, const char *t)
{
    double pts = !strcasecmp(t, "inches") ? width * 72 : !strcasecmp(t, "cm") ? width * 28.35 : width;
    if (!strcasecmp(t, "auto")) return mb_strdup("0");
    if (!strcasecmp(t, "percent")) return mb_asprintf("%lld", (long long)(pts * 50));
    return mb_asprintf("%lld", (long long)(pts * 20));
}

static int valid_type(mb_mcp_result *res, const char *t)
{
    static const char *const OK[] = {"points", "inches", "cm", "percent", "auto", NULL};
    for (int i = 0; OK[i]; i++)
        if (!strcasecmp(t, OK[i])) return 1;
    mb_mcp_text(res, "Invalid width type. Valid options: points, inches, cm, percent, auto");
    return 0;
}

static void column_width(wd_doc *d, xmlNodePtr t, size_t col, const char *value, const char *type)
{
    xmlNodePtr *rows;
    size_t nr = wd_table_rows(t, &rows);
    for (size_t r = 0; r < nr; r++) {
        xmlNodePtr *cells;
        size_t nc = wd_row_cells(t, rows[r], &cells);
        if (col < nc) replace_child(d, wd_get_tcpr(d, cells[col]), "tcW", value, type);
        free(cells);
    }
    free(rows);
}

int wd_t_set_table_column_width(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    const char *wt = wd_str(a, "width_type");
    double width = json_number_value(json_object_get(a, "width"));
    if (!valid_type(res, wt)) return 0;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = wd_int(a, "table_index"), ci = wd_int(a, "col_index");
    wd_doc *d = wd_open_rw(res, f, 0, "set column width");
    xmlNodePtr t = d ? wd_table_at(d, ti, res) : NULL;
    if (t) {
        size_t ncols = wd_table_cols(t);
        if (ci < 0 || (size_t)ci >= ncols) {
            mb_mcp_textf(res, "Invalid column index. Table has %zu columns (0-%lld).", ncols, (long long)ncols - 1);
        } else {
            char *v = word_value(width, wt), *w = py_float(width);
            column_width(d, t, (size_t)ci, v, word_type(wt));
            wd_doc_touch(d);
            char *ok = mb_asprintf("Column width set successfully for table %lld, column %lld to %s %s.",
                                   (long long)ti, (long long)ci, w, wt);
            wd_save_answer(d, f, res, "set column width", ok);
            free(ok);
            free(v);
            free(w);
        }
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

int wd_t_set_table_column_widths(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    const char *wt = wd_str(a, "width_type");
    json_t *widths = json_object_get(a, "widths");
    size_t n = json_array_size(widths);
    double *vals = mb_calloc(n ? n : 1, sizeof *vals);
    for (size_t i = 0; i < n; i++) {
        json_t *w = json_array_get(widths, i);
        char *end = NULL;
        if (json_is_number(w) || json_is_boolean(w)) vals[i] = json_is_boolean(w) ? json_is_true(w) : json_number_value(w);
        else if (json_is_string(w) && (vals[i] = strtod(json_string_value(w), &end), *json_string_value(w) && !*end)) ;
        else if (strcasecmp(wt, "auto")) {
            mb_mcp_text(res, "Invalid parameter: table_index must be an integer, widths must be a list of numbers");
            free(vals);
            return 0;
        }
    }
    if (!valid_type(res, wt)) {
        free(vals);
        return 0;
    }
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = wd_int(a, "table_index");
    wd_doc *d = wd_open_rw(res, f, 0, "set column widths");
    xmlNodePtr t = d ? wd_table_at(d, ti, res) : NULL;
    if (t) {
        size_t ncols = wd_table_cols(t);
        for (size_t i = 0; i < n && i < ncols; i++) {
            char *v = word_value(vals[i], wt);
            column_width(d, t, i, v, word_type(wt));
            free(v);
        }
        wd_doc_touch(d);
        char *ok = mb_asprintf("Column widths set successfully for table %lld with %zu columns in %s.",
                               (long long)ti, n, wt);
        wd_save_answer(d, f, res, "set column widths", ok);
        free(ok);
    }
    free(vals);
    wd_doc_free(d);
    free(f);
    return 0;
}

static xmlNodePtr tblpr(wd_doc *d, xmlNodePtr t)
{
    xmlNodePtr pr = wd_child(t, "tblPr");
    if (pr) return pr;
    pr = wd_new(d, "tblPr");
    if (t->children) xmlAddPrevSibling(t->children, pr);
    else xmlAddChild(t, pr);
    return pr;
}

int wd_t_set_table_width(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    const char *wt = wd_str(a, "width_type");
    double width = json_number_value(json_object_get(a, "width"));
    if (!valid_type(res, wt)) return 0;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = wd_int(a, "table_index");
    wd_doc *d = wd_open_rw(res, f, 0, "set table width");
    xmlNodePtr t = d ? wd_table_at(d, ti, res) : NULL;
    if (t) {
        char *v = word_value(width, wt), *w = py_float(width);
        replace_child(d, tblpr(d, t), "tblW", v, word_type(wt));
        wd_doc_touch(d);
        char *ok = mb_asprintf("Table width set successfully for table %lld to %s %s.", (long long)ti, w, wt);
        wd_save_answer(d, f, res, "set table width", ok);
        free(ok);
        free(v);
        free(w);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

int wd_t_auto_fit_table_columns(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = wd_int(a, "table_index");
    wd_doc *d = wd_open_rw(res, f, 0, "set table auto-fit");
    xmlNodePtr t = d ? wd_table_at(d, ti, res) : NULL;
    if (t) {
        replace_child(d, tblpr(d, t), "tblLayout", NULL, "autofit");
        size_t ncols = wd_table_cols(t);
        for (size_t c = 0; c < ncols; c++) column_width(d, t, c, "0", "auto");
        wd_doc_touch(d);
        char *ok = mb_asprintf("Table %lld set to auto-fit columns based on content.", (long long)ti);
        wd_save_answer(d, f, res, "set table auto-fit", ok);
        free(ok);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

/* ------------------------------------------------------ one cell */

/* The cell at (row, col), or NULL with upstream's index error answered. */
static xmlNodePtr cell_at(xmlNodePtr t, json_int_t ri, json_int_t ci, mb_mcp_result *res)
{
    xmlNodePtr *rows, *cells = NULL, out = NULL;
    size_t nr = wd_table_rows(t, &rows), nc = 0;
    if (ri < 0 || (size_t)ri >= nr) {
        mb_mcp_textf(res, "Invalid row index. Table has %zu rows (0-%lld).", nr, (long long)nr - 1);
    } else {
        nc = wd_row_cells(t, rows[ri], &cells);
        if (ci < 0 || (size_t)ci >= nc)
            mb_mcp_textf(res, "Invalid column index. Row has %zu cells (0-%lld).", nc, (long long)nc - 1);
        else out = cells[ci];
    }
    free(cells);
    free(rows);
    return out;
}

static const struct {
    const char *name, *hex;
} COLORS[] = {
    {"red", "FF0000"},   {"blue", "0000FF"},  {"green", "008000"}, {"yellow", "FFFF00"},
    {"black", "000000"}, {"gray", "808080"},  {"grey", "808080"},  {"white", "FFFFFF"},
    {"purple", "800080"}, {"orange", "FFA500"},
};

/* format_cell_text's color rules: a name, "#RRGGBB", "RRGGBB"; a bad hex is black; else unchanged */
static const char *cell_color(const char *c, char buf[7])
{
    for (size_t i = 0; i < sizeof COLORS / sizeof COLORS[0]; i++)
        if (!strcasecmp(c, COLORS[i].name)) return COLORS[i].hex;
    const char *h = c;
    if (*c == '#')
        while (*h == '#') h++;
    if (strlen(h) != 6) return NULL;
    char *why = NULL;
    int bad = wd_rgb_from_string(h, buf, &why);
    free(why);
    return bad ? "000000" : buf;
}

int wd_t_format_table_cell_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = wd_int(a, "table_index"), ri = wd_int(a, "row_index"), ci = wd_int(a, "col_index");
    json_t *text = json_object_get(a, "text_content"), *bold = json_object_get(a, "bold"),
           *italic = json_object_get(a, "italic"), *under = json_object_get(a, "underline"),
           *size = json_object_get(a, "font_size");
    const char *color = wd_str(a, "color"), *font = wd_str(a, "font_name");
    wd_doc *d = wd_open_rw(res, f, 0, "format cell text");
    xmlNodePtr t = d ? wd_table_at(d, ti, res) : NULL;
    xmlNodePtr tc = t ? cell_at(t, ri, ci, res) : NULL;
    if (!tc) goto out;
    if (json_is_string(text)) wd_cell_set_text(d, tc, json_string_value(text));
    char buf[7];
    const char *hex = color ? cell_color(color, buf) : NULL;
    for (xmlNodePtr p = tc->children; p; p = p->next) {
        if (!wd_is(p, "p")) continue;
        xmlNodePtr *runs;
        size_t n = wd_para_runs(p, &runs);
        for (size_t i = 0; i < n; i++) {
            if (json_is_boolean(bold)) wd_run_flag(d, runs[i], "b", json_is_true(bold));
            if (json_is_boolean(italic)) wd_run_flag(d, runs[i], "i", json_is_true(italic));
            if (json_is_boolean(under)) wd_run_underline(d, runs[i], json_is_true(under));
            if (json_is_integer(size)) wd_run_size(d, runs[i], (double)json_integer_value(size));
            if (font) wd_run_font(d, runs[i], font);
            if (hex) wd_run_color(d, runs[i], hex);
        }
        free(runs);
    }
    wd_doc_touch(d);
    mb_buf desc = {0};
    mb_buf_puts(&desc, "");
#define SEP (desc.len ? ", " : "")
    if (json_is_string(text)) {
        const char *s = json_string_value(text);
        char *pv = wd_preview(s, 30);
        mb_buf_printf(&desc, "%scontent='%s'", SEP, pv);
        free(pv);
    }
    if (json_is_boolean(bold)) mb_buf_printf(&desc, "%sbold=%s", SEP, json_is_true(bold) ? "True" : "False");
    if (json_is_boolean(italic)) mb_buf_printf(&desc, "%sitalic=%s", SEP, json_is_true(italic) ? "True" : "False");
    if (json_is_boolean(under)) mb_buf_printf(&desc, "%sunderline=%s", SEP, json_is_true(under) ? "True" : "False");
    if (color) mb_buf_printf(&desc, "%scolor=%s", SEP, color);
    if (json_is_integer(size)) mb_buf_printf(&desc, "%ssize=%lldpt", SEP, (long long)json_integer_value(size));
    if (font) mb_buf_printf(&desc, "%sfont=%s", SEP, font);
#undef SEP
    char *ok = mb_asprintf("Cell text formatted successfully in table %lld, cell (%lld,%lld): %s.", (long long)ti,
                           (long long)ri, (long long)ci, desc.len ? desc.data : "no changes");
    wd_save_answer(d, f, res, "format cell text", ok);
    free(ok);
    mb_buf_free(&desc);
out:
    wd_doc_free(d);
    free(f);
    return 0;
}

int wd_t_set_table_cell_padding(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    const char *unit = wd_str(a, "unit");
    if (strcasecmp(unit, "points") && strcasecmp(unit, "percent")) {
        mb_mcp_text(res, "Invalid unit. Valid options: points, percent");
        return 0;
    }
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t ti = wd_int(a, "table_index"), ri = wd_int(a, "row_index"), ci = wd_int(a, "col_index");
    static const char *const SIDES[] = {"top", "bottom", "left", "right"};
    wd_doc *d = wd_open_rw(res, f, 0, "set cell padding");
    xmlNodePtr t = d ? wd_table_at(d, ti, res) : NULL;
    xmlNodePtr tc = t ? cell_at(t, ri, ci, res) : NULL;
    if (!tc) goto out;
    int pct = !strcasecmp(unit, "percent");
    xmlNodePtr pr = wd_get_tcpr(d, tc);
    xmlNodePtr old = wd_child(pr, "tcMar");
    if (old) {
        xmlUnlinkNode(old);
        xmlFreeNode(old);
    }
    mb_buf desc = {0};
    mb_buf_puts(&desc, "");
    xmlNodePtr mar = NULL;
    for (int i = 0; i < 4; i++) {
        json_t *v = json_object_get(a, SIDES[i]);
        if (!json_is_number(v)) continue;
        double x = json_number_value(v);
        if (!mar) mar = wd_add(d, pr, "tcMar");
        xmlNodePtr e = wd_add(d, mar, SIDES[i]);
        char w[32];
        snprintf(w, sizeof w, "%lld", (long long)(x * (pct ? 50 : 20)));
        wd_set(d, e, "w", w);
        wd_set(d, e, "type", pct ? "pct" : "dxa");
        char *fx = py_float(x);
        mb_buf_printf(&desc, "%s%s=%s", desc.len ? ", " : "", SIDES[i], fx);
        free(fx);
    }
    wd_doc_touch(d);
    char *ok = mb_asprintf("Cell padding set successfully for table %lld, cell (%lld,%lld): %s %s.", (long long)ti,
                           (long long)ri, (long long)ci, desc.len ? desc.data : "no padding", unit);
    wd_save_answer(d, f, res, "set cell padding", ok);
    free(ok);
    mb_buf_free(&desc);
out:
    wd_doc_free(d);
    free(f);
    return 0;
}
