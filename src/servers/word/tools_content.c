/*
 * tools_content.c - the content tools of office-word-mcp-server
 * (tools/content_tools.py): headings, paragraphs, tables, page breaks,
 * deleting paragraphs, search and replace (per run, as upstream does).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "servers/word/word.h"

/* The common prologue of the mutating tools: existence, writeability, open.
 * NULL when `res` already holds upstream's answer. */
wd_doc *wd_open_rw(mb_mcp_result *res, const char *f, int suggest_new, const char *verb)
{
    char *msg = NULL, *why = NULL;
    wd_doc *d = NULL;
    if (!wd_exists(f)) mb_mcp_textf(res, "Document %s does not exist", f);
    else if (!wd_writeable(f, &msg))
        mb_mcp_textf(res, "Cannot modify document: %s. Consider creating a copy first%s.", msg,
                     suggest_new ? " or creating a new document" : "");
    else if (wd_doc_open(f, &d, &why)) mb_mcp_textf(res, "Failed to %s: %s", verb, why);
    free(msg);
    free(why);
    return d;
}

/* doc.save(f); answers `ok` or "Failed to <verb>: ...". */
int wd_save_answer(wd_doc *d, const char *f, mb_mcp_result *res, const char *verb, const char *ok)
{
    char *why = NULL;
    if (wd_doc_save(d, f, &why)) mb_mcp_textf(res, "Failed to %s: %s", verb, why);
    else mb_mcp_text(res, ok);
    free(why);
    return 0;
}


/* ------------------------------------------------------------- headings */

/* core/styles.py ensure_heading_style: adds Heading 1..9 when missing. */
static void ensure_heading_styles(wd_doc *d)
{
    if (!wd_styles(d)) return;
    xmlNodePtr root = xmlDocGetRootElement(d->styles);
    xmlNsPtr w = root->ns;
    for (int i = 1; i <= 9; i++) {
        char ui[24], internal[24], id[24];
        snprintf(ui, sizeof ui, "Heading %d", i);
        if (wd_style_by_name(d, ui, NULL)) continue;
        snprintf(internal, sizeof internal, "heading %d", i);
        snprintf(id, sizeof id, "Heading%d", i);
        xmlNodePtr s = xmlNewChild(root, w, (const xmlChar *)"style", NULL);
        xmlSetNsProp(s, w, (const xmlChar *)"type", (const xmlChar *)"paragraph");
        xmlSetNsProp(s, w, (const xmlChar *)"customStyle", (const xmlChar *)"1");
        xmlSetNsProp(s, w, (const xmlChar *)"styleId", (const xmlChar *)id);
        xmlNodePtr n = xmlNewChild(s, w, (const xmlChar *)"name", NULL);
        xmlSetNsProp(n, w, (const xmlChar *)"val", (const xmlChar *)internal);
        xmlNodePtr rpr = xmlNewChild(s, w, (const xmlChar *)"rPr", NULL);
        xmlNewChild(rpr, w, (const xmlChar *)"b", NULL);
        xmlNodePtr sz = xmlNewChild(rpr, w, (const xmlChar *)"sz", NULL);
        xmlSetNsProp(sz, w, (const xmlChar *)"val", (const xmlChar *)(i == 1 ? "32" : i == 2 ? "28" : "24"));
        wd_doc_touch_styles(d);
    }
}

/* Font options shared by add_heading / add_paragraph (HEAD only). */
static int apply_font(wd_doc *d, xmlNodePtr p, json_t *a, int with_color, char **why)
{
    const char *font = wd_str(a, "font_name");
    json_t *size = json_object_get(a, "font_size"), *bold = json_object_get(a, "bold"),
           *italic = json_object_get(a, "italic");
    const char *color = with_color ? wd_str(a, "color") : NULL;
    int sz = json_is_integer(size) && json_integer_value(size) != 0;
    if (!((font && *font) || sz || json_is_boolean(bold) || json_is_boolean(italic) || (color && *color)))
        return 0;
    xmlNodePtr *runs;
    size_t n = wd_para_runs(p, &runs);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (font && *font) wd_run_font(d, runs[i], font);
        if (sz) wd_run_size(d, runs[i], (double)json_integer_value(size));
        if (json_is_boolean(bold)) wd_run_flag(d, runs[i], "b", json_is_true(bold));
        if (json_is_boolean(italic)) wd_run_flag(d, runs[i], "i", json_is_true(italic));
        if (color && *color) {
            const char *hex = color;
            while (*hex == '#') hex++;
            char rgb[7];
            if (wd_rgb_from_string(hex, rgb, why)) rc = -1;
            else wd_run_color(d, runs[i], rgb);
        }
    }
    free(runs);
    return rc;
}

int wd_t_add_heading(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    wd_server *ws = mb_mcp_call_data(call);
    char *f = wd_docx_name(wd_str(a, "filename"));
    const char *text = wd_str(a, "text");
    json_int_t level = json_integer_value(json_object_get(a, "level"));
    if (level < 1 || level > 9) {
        mb_mcp_textf(res, "Invalid heading level: %lld. Level must be between 1 and 9.", (long long)level);
        free(f);
        return 0;
    }
    wd_doc *d = wd_open_rw(res, f, 1, "add heading");
    if (!d) {
        free(f);
        return 0;
    }
    ensure_heading_styles(d);
    char style[16];
    snprintf(style, sizeof style, "Heading %d", (int)level);
    xmlNodePtr p = wd_add_paragraph(d, text);
    int direct = 0;
    char *why = NULL;
    if (wd_para_set_style(d, p, style)) {
        /* upstream's fallback: Normal + bold run sized by level */
        direct = 1;
        if (wd_para_set_style(d, p, "Normal")) {
            mb_mcp_text(res, "Failed to add heading: \"no style with name 'Normal'\"");
            goto out;
        }
        xmlNodePtr r = wd_child(p, "r");
        if (r) {
            wd_run_flag(d, r, "b", 1);
            wd_run_size(d, r, level == 1 ? 16 : level == 2 ? 14 : 12);
        }
    }
    wd_doc_touch(d);
    if (!ws->v119) {
        if (apply_font(d, p, a, 0, &why)) {
            mb_mcp_textf(res, "Failed to add heading: %s", why);
            goto out;
        }
        if (json_is_true(json_object_get(a, "border_bottom"))) {
            xmlNodePtr ppr = wd_get_ppr(d, p);
            xmlNodePtr bdr = wd_add(d, ppr, "pBdr");
            xmlNodePtr b = wd_add(d, bdr, "bottom");
            wd_set(d, b, "val", "single");
            wd_set(d, b, "sz", "4");
            wd_set(d, b, "space", "0");
            wd_set(d, b, "color", "000000");
        }
    }
    char *ok = ws->v119 && direct
                   ? mb_asprintf("Heading '%s' added to %s with direct formatting (style not available)", text, f)
                   : mb_asprintf("Heading '%s' (level %lld) added to %s", text, (long long)level, f);
    wd_save_answer(d, f, res, "add heading", ok);
    free(ok);
out:
    free(why);
    wd_doc_free(d);
    free(f);
    return 0;
}

/* ----------------------------------------------------------- paragraphs */

int wd_t_add_paragraph(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    wd_server *ws = mb_mcp_call_data(call);
    char *f = wd_docx_name(wd_str(a, "filename"));
    const char *text = wd_str(a, "text");
    const char *style = wd_str(a, "style");
    wd_doc *d = wd_open_rw(res, f, 1, "add paragraph");
    if (!d) {
        free(f);
        return 0;
    }
    char *why = NULL;
    xmlNodePtr p = wd_add_paragraph(d, text);
    wd_doc_touch(d);
    if (style && *style && wd_para_set_style(d, p, style)) {
        wd_para_set_style(d, p, "Normal");
        char *ok = mb_asprintf("Style '%s' not found, paragraph added with default style to %s", style, f);
        wd_save_answer(d, f, res, "add paragraph", ok);
        free(ok);
        goto out;
    }
    if (!ws->v119 && apply_font(d, p, a, 1, &why)) {
        mb_mcp_textf(res, "Failed to add paragraph: %s", why);
        goto out;
    }
    char *ok = mb_asprintf("Paragraph added to %s", f);
    wd_save_answer(d, f, res, "add paragraph", ok);
    free(ok);
out:
    free(why);
    wd_doc_free(d);
    free(f);
    return 0;
}

/* --------------------------------------------------------------- tables */

/* str(v) of a JSON value as Python prints it */
static char *py_str(json_t *v)
{
    if (json_is_string(v)) return mb_strdup(json_string_value(v));
    if (json_is_null(v)) return mb_strdup("None");
    if (json_is_true(v)) return mb_strdup("True");
    if (json_is_false(v)) return mb_strdup("False");
    if (json_is_integer(v)) return mb_asprintf("%lld", (long long)json_integer_value(v));
    if (json_is_real(v)) {
        json_t *arr = json_pack("[O]", v);
        char *s = mb_py_json_dumps(arr, -1, 0);
        json_decref(arr);
        size_t n = strlen(s);
        char *out = mb_strndup(s + 1, n - 2);
        free(s);
        return out;
    }
    return mb_py_json_dumps(v, -1, 0); /* lists and dicts: close to repr */
}

int wd_t_add_table(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t rows = json_integer_value(json_object_get(a, "rows"));
    json_int_t cols = json_integer_value(json_object_get(a, "cols"));
    json_t *data = json_object_get(a, "data");
    wd_doc *d = wd_open_rw(res, f, 1, "add table");
    if (!d) {
        free(f);
        return 0;
    }
    if (rows < 0 || cols < 0 || rows > 10000 || cols > 63 || rows * cols > 200000) {
        mb_mcp_textf(res, "Failed to add table: table of %lldx%lld cells is out of range",
                     (long long)rows, (long long)cols);
        goto out;
    }
    xmlNodePtr tbl = wd_add_table(d, rows, cols);
    wd_doc_touch(d);
    if (json_array_size(data)) {
        xmlNodePtr *trs;
        size_t nr = wd_table_rows(tbl, &trs);
        for (size_t i = 0; i < json_array_size(data) && i < nr; i++) {
            json_t *row = json_array_get(data, i);
            if (!json_is_array(row)) continue;
            size_t j = 0;
            for (xmlNodePtr tc = trs[i]->children; tc && j < json_array_size(row); tc = tc->next) {
                if (!wd_is(tc, "tc")) continue;
                char *s = py_str(json_array_get(row, j++));
                wd_cell_set_text(d, tc, s);
                free(s);
            }
        }
        free(trs);
    }
    char *ok = mb_asprintf("Table (%lldx%lld) added to %s", (long long)rows, (long long)cols, f);
    wd_save_answer(d, f, res, "add table", ok);
    free(ok);
out:
    wd_doc_free(d);
    free(f);
    return 0;
}

/* ----------------------------------------------------------- page break */

int wd_t_add_page_break(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    wd_doc *d = wd_open_rw(res, f, 0, "add page break");
    if (d) {
        xmlNodePtr p = wd_add_paragraph(d, NULL);
        xmlNodePtr r = wd_add_run(d, p, NULL);
        wd_set(d, wd_add(d, r, "br"), "type", "page");
        wd_doc_touch(d);
        char *ok = mb_asprintf("Page break added to %s.", f);
        wd_save_answer(d, f, res, "add page break", ok);
        free(ok);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

/* ------------------------------------------------------ delete paragraph */

int wd_t_delete_paragraph(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t idx = json_integer_value(json_object_get(a, "paragraph_index"));
    wd_doc *d = wd_open_rw(res, f, 0, "delete paragraph");
    if (d) {
        xmlNodePtr *ps;
        size_t n = wd_paragraphs(d, &ps);
        if (idx < 0 || (size_t)idx >= n) {
            mb_mcp_textf(res, "Invalid paragraph index. Document has %zu paragraphs (0-%lld).", n,
                         (long long)n - 1);
        } else {
            xmlUnlinkNode(ps[idx]);
            xmlFreeNode(ps[idx]);
            wd_doc_touch(d);
            char *ok = mb_asprintf("Paragraph at index %lld deleted successfully.", (long long)idx);
            wd_save_answer(d, f, res, "delete paragraph", ok);
            free(ok);
        }
        free(ps);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

/* ------------------------------------------------------ search/replace */

/* Python's s.replace(old, new), all occurrences (old may be empty). */
static char *py_replace(const char *s, const char *old, const char *new_)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t ol = strlen(old);
    if (!ol) {
        size_t len = strlen(s), i = 0;
        mb_buf_puts(&b, new_);
        while (i < len) {
            size_t st = i;
            mb_utf8_next(s, len, &i);
            mb_buf_append(&b, s + st, i - st);
            mb_buf_puts(&b, new_);
        }
        return mb_buf_steal(&b);
    }
    const char *p = s, *q;
    while ((q = strstr(p, old))) {
        mb_buf_append(&b, p, (size_t)(q - p));
        mb_buf_puts(&b, new_);
        p = q + ol;
    }
    mb_buf_puts(&b, p);
    return mb_buf_steal(&b);
}

static long replace_in_para(wd_doc *d, xmlNodePtr p, const char *old, const char *new_)
{
    const char *style = wd_para_style_name(d, p);
    if (style && !strncmp(style, "TOC", 3)) return 0;
    char *t = wd_para_text_dup(p);
    int hit = strstr(t, old) != NULL;
    free(t);
    if (!hit) return 0;
    long count = 0;
    xmlNodePtr *runs;
    size_t n = wd_para_runs(p, &runs);
    for (size_t i = 0; i < n; i++) {
        mb_buf rt = {0};
        mb_buf_puts(&rt, "");
        wd_run_text(runs[i], &rt);
        if (strstr(rt.data, old)) {
            char *nt = py_replace(rt.data, old, new_);
            wd_run_set_text(d, runs[i], nt);
            free(nt);
            count++;
        }
        mb_buf_free(&rt);
    }
    free(runs);
    return count;
}

int wd_t_search_and_replace(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    const char *find = wd_str(a, "find_text"), *repl = wd_str(a, "replace_text");
    wd_doc *d = wd_open_rw(res, f, 0, "search and replace");
    if (d) {
        long count = 0;
        xmlNodePtr *ps, *ts;
        size_t np = wd_paragraphs(d, &ps), nt = wd_tables(d, &ts);
        for (size_t i = 0; i < np; i++) count += replace_in_para(d, ps[i], find, repl);
        for (size_t t = 0; t < nt; t++) {
            xmlNodePtr *rows;
            size_t nr = wd_table_rows(ts[t], &rows);
            for (size_t r = 0; r < nr; r++) {
                xmlNodePtr *cells;
                size_t nc = wd_row_cells(ts[t], rows[r], &cells);
                for (size_t c = 0; c < nc; c++)
                    for (xmlNodePtr p = cells[c]->children; p; p = p->next)
                        if (wd_is(p, "p")) count += replace_in_para(d, p, find, repl);
                free(cells);
            }
            free(rows);
        }
        free(ps);
        free(ts);
        if (count > 0) {
            wd_doc_touch(d);
            char *ok = mb_asprintf("Replaced %ld occurrence(s) of '%s' with '%s'.", count, find, repl);
            wd_save_answer(d, f, res, "search and replace", ok);
            free(ok);
        } else {
            mb_mcp_textf(res, "No occurrences of '%s' found.", find);
        }
    }
    wd_doc_free(d);
    free(f);
    return 0;
}
