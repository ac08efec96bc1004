/*
 * tools_sheet.c - sheet and range tools: format_range, merge_cells,
 * unmerge_cells, get_merged_cells, rename_worksheet, delete_worksheet,
 * insert_rows/insert_columns, delete_sheet_rows/delete_sheet_columns,
 * copy_range, delete_range. Texts are upstream's (excel_mcp/sheet.py,
 * formatting.py, server.py).
 *
 * Row and column shifts do what openpyxl's insert_rows/delete_cols do: cells
 * move, nothing else is rewritten (merged ranges and formulas keep their
 * references) - except that a row keeps its height, since its <row> moves.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/common/pyschema.h"
#include "servers/excel/tools.h"

/* Opens the book and the sheet; 1 on success, 0 when answered. `caught`: how
 * the failure surfaces (see tools_data.c). */
static int open_sheet(mb_mcp_call *call, mb_mcp_result *res, json_t *args, const char *key,
                      int caught, xl_book **b, xl_sheet **s, int *rc)
{
    const char *given = xl_str(args, "filepath");
    char *real = NULL, *why = NULL;
    *b = NULL;
    *rc = xl_path(call, res, given, 0, &real);
    if (*rc) return 0;
    if (xl_book_open(real, given, b, &why)) {
        free(real);
        goto fail;
    }
    free(real);
    const char *name = xl_str(args, key);
    *s = xl_sheet_find(*b, name);
    if (!*s) why = mb_asprintf("Sheet '%s' not found", name);
    else if (!xl_sheet_load(*b, *s, &why)) return 1;
fail:
    *rc = caught ? xl_error(res, why) : mb_mcp_fail_str(res, why);
    free(why);
    xl_book_free(*b);
    *b = NULL;
    return 0;
}

/* ---------------------------------------------------------------- merges */

/* start_cell and end_cell as numbers and as "A1:B2"; on a bad reference the
 * call is answered (*rc) and the book freed. */
static int merge_span(xl_book *b, mb_mcp_result *res, json_t *args, unsigned *r1, unsigned *c1,
                      unsigned *r2, unsigned *c2, char rng[40], int *rc)
{
    const char *a = xl_str(args, "start_cell"), *e = xl_str(args, "end_cell");
    const char *bad = xl_parse_cell(a, r1, c1) ? a : xl_parse_cell(e, r2, c2) ? e : NULL;
    if (bad) {
        *rc = xl_fail_book(b, res, mb_asprintf("Invalid cell reference: %s", bad));
        return 0;
    }
    char x[16], y[16];
    xl_cell_name(*r1, *c1, x);
    xl_cell_name(*r2, *c2, y);
    snprintf(rng, 40, "%s:%s", x, y);
    return 1;
}


int xl_t_merge(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    xl_sheet *s;
    int rc;
    if (!open_sheet(call, res, args, "sheet_name", 1, &b, &s, &rc)) return rc;
    unsigned r1, c1, r2, c2;
    char rng[40];
    if (!merge_span(b, res, args, &r1, &c1, &r2, &c2, rng, &rc)) return rc;
    if (r2 < r1 || c2 < c1)
        return xl_fail_book(b, res, mb_asprintf("Min value is greater than max value in range %s", rng));
    xl_merge_add(s, rng);
    /* openpyxl empties every merged cell but the top-left one */
    for (unsigned r = r1; r <= r2; r++)
        for (unsigned c = c1; c <= c2; c++)
            if ((r != r1 || c != c1) && xl_cell_get(s, r, c)) {
                json_t *n = json_null();
                char *why = NULL;
                xl_cell_set(b, s, r, c, n, &why);
                free(why);
            }
    char *msg = mb_asprintf("Range '%s' merged in sheet '%s'", rng, s->name);
    rc = xl_save_ok(b, res, msg);
    free(msg);
    return rc;
}

int xl_t_unmerge(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    xl_sheet *s;
    int rc;
    if (!open_sheet(call, res, args, "sheet_name", 1, &b, &s, &rc)) return rc;
    unsigned r1, c1, r2, c2;
    char rng[40];
    if (!merge_span(b, res, args, &r1, &c1, &r2, &c2, rng, &rc)) return rc;
    if (!xl_merge_remove(s, rng)) return xl_fail_book(b, res, mb_asprintf("Range '%s' is not merged", rng));
    char *msg = mb_asprintf("Range '%s' unmerged successfully", rng);
    rc = xl_save_ok(b, res, msg);
    free(msg);
    return rc;
}

int xl_t_get_merged(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    xl_sheet *s;
    int rc;
    if (!open_sheet(call, res, args, "sheet_name", 1, &b, &s, &rc)) return rc;
    json_t *l = xl_merged_list(s);
    mb_buf t = {0};
    mb_py_repr_json(&t, l);
    rc = xl_ok(res, t.data);
    mb_buf_free(&t);
    json_decref(l);
    xl_book_free(b);
    return rc;
}

/* ------------------------------------------------------------ worksheets */

int xl_t_rename_worksheet(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *given = xl_str(args, "filepath");
    char *real = NULL, *why = NULL;
    int rc = xl_path(call, res, given, 0, &real);
    if (rc) return rc;
    xl_book *b = NULL;
    if (xl_book_open(real, given, &b, &why)) {
        free(real);
        rc = xl_error(res, why);
        free(why);
        return rc;
    }
    free(real);
    const char *old = xl_str(args, "old_name"), *nw = xl_str(args, "new_name");
    xl_sheet *s = xl_sheet_find(b, old);
    if (!s) return xl_fail_book(b, res, mb_asprintf("Sheet '%s' not found", old));
    if (xl_sheet_find(b, nw)) return xl_fail_book(b, res, mb_asprintf("Sheet '%s' already exists", nw));
    const char *bad = strpbrk(nw, "\\*?:/[]");
    if (bad) return xl_fail_book(b, res, mb_asprintf("Invalid character %c found in sheet title", *bad));
    xmlSetProp(s->entry, BAD_CAST "name", BAD_CAST nw);
    free(s->name);
    s->name = mb_strdup(nw);
    b->wb_dirty = 1;
    char *msg = mb_asprintf("Sheet renamed from '%s' to '%s'", old, nw);
    rc = xl_save_ok(b, res, msg);
    free(msg);
    return rc;
}

int xl_t_delete_worksheet(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *given = xl_str(args, "filepath");
    char *real = NULL, *why = NULL;
    int rc = xl_path(call, res, given, 0, &real);
    if (rc) return rc;
    xl_book *b = NULL;
    if (xl_book_open(real, given, &b, &why)) {
        free(real);
        rc = xl_error(res, why);
        free(why);
        return rc;
    }
    free(real);
    const char *name = xl_str(args, "sheet_name");
    xl_sheet *s = xl_sheet_find(b, name);
    if (!s) return xl_fail_book(b, res, mb_asprintf("Sheet '%s' not found", name));
    if (b->nsheets == 1) return xl_fail_book(b, res, mb_strdup("Cannot delete the only sheet in workbook"));
    xl_sheet_remove(b, s);
    char *msg = mb_asprintf("Sheet '%s' deleted", name);
    rc = xl_save_ok(b, res, msg);
    free(msg);
    return rc;
}

/* ------------------------------------------------------ rows and columns */

static void set_ref(xmlNodePtr c, unsigned row, unsigned col)
{
    char buf[16];
    xl_cell_name(row, col, buf);
    xmlSetProp(c, BAD_CAST "r", BAD_CAST buf);
}

static void set_row_num(xmlNodePtr rn, unsigned row)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%u", row);
    xmlSetProp(rn, BAD_CAST "r", BAD_CAST buf);
}

/* Shifts rows >= at by delta (delta < 0 deletes rows at..at-delta-1). */
static void shift_rows(xl_sheet *s, unsigned at, long delta)
{
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++) {
        xl_row *r = &s->rows[i];
        if (r->row >= at) {
            if (delta < 0 && r->row < at + (unsigned long)(-delta)) {
                xmlUnlinkNode(r->node);
                xmlFreeNode(r->node);
                free(r->cells);
                continue;
            }
            long nr = (long)r->row + delta;
            if (nr > (long)XL_MAX_ROW) { /* pushed off the sheet */
                xmlUnlinkNode(r->node);
                xmlFreeNode(r->node);
                free(r->cells);
                continue;
            }
            r->row = (unsigned)nr;
            set_row_num(r->node, r->row);
            for (size_t k = 0; k < r->n; k++) set_ref(r->cells[k].node, r->row, r->cells[k].col);
        }
        s->rows[w++] = *r;
    }
    s->n = w;
    s->dirty = 1;
}

static void shift_cols(xl_sheet *s, unsigned at, long delta)
{
    for (size_t i = 0; i < s->n; i++) {
        xl_row *r = &s->rows[i];
        size_t w = 0;
        for (size_t k = 0; k < r->n; k++) {
            xl_cell *c = &r->cells[k];
            if (c->col >= at) {
                long nc = (long)c->col + delta;
                if ((delta < 0 && c->col < at + (unsigned long)(-delta)) || nc > (long)XL_MAX_COL) {
                    xmlUnlinkNode(c->node);
                    xmlFreeNode(c->node);
                    continue;
                }
                c->col = (unsigned)nc;
                set_ref(c->node, r->row, c->col);
            }
            r->cells[w++] = *c;
        }
        r->n = w;
        xmlUnsetProp(r->node, BAD_CAST "spans");
    }
    s->dirty = 1;
}

static int rows_cols(mb_mcp_call *call, json_t *args, mb_mcp_result *res, int cols, int insert)
{
    xl_book *b;
    xl_sheet *s;
    int rc;
    if (!open_sheet(call, res, args, "sheet_name", 1, &b, &s, &rc)) return rc;
    long long start = xl_int(args, cols ? "start_col" : "start_row"), count = xl_int(args, "count");
    if (start < 1)
        return xl_fail_book(b, res, mb_strdup(cols ? "Start column must be 1 or greater"
                                               : "Start row must be 1 or greater"));
    if (count < 1) return xl_fail_book(b, res, mb_strdup("Count must be 1 or greater"));
    unsigned max = cols ? XL_MAX_COL : XL_MAX_ROW;
    if ((unsigned long long)start > max || (unsigned long long)count > max)
        return xl_fail_book(b, res, mb_asprintf("%s %lld lies outside the sheet (at most %u)",
                                            cols ? "column" : "row",
                                            (unsigned long long)start > max ? start : count, max));
    long delta = insert ? (long)count : -(long)count;
    if (cols) shift_cols(s, (unsigned)start, delta);
    else shift_rows(s, (unsigned)start, delta);
    b->stale = 1; /* cells moved under the formulas that point at them */
    char *msg = mb_asprintf("%s %lld %s starting at %s %lld in sheet '%s'",
                            insert ? "Inserted" : "Deleted", count, cols ? "column(s)" : "row(s)",
                            cols ? "column" : "row", start, s->name);
    rc = xl_save_ok(b, res, msg);
    free(msg);
    return rc;
}

int xl_t_insert_rows(mb_mcp_call *c, json_t *a, mb_mcp_result *r) { return rows_cols(c, a, r, 0, 1); }
int xl_t_insert_cols(mb_mcp_call *c, json_t *a, mb_mcp_result *r) { return rows_cols(c, a, r, 1, 1); }
int xl_t_delete_rows(mb_mcp_call *c, json_t *a, mb_mcp_result *r) { return rows_cols(c, a, r, 0, 0); }
int xl_t_delete_cols(mb_mcp_call *c, json_t *a, mb_mcp_result *r) { return rows_cols(c, a, r, 1, 0); }

/* ------------------------------------------------------------ copy_range */

int xl_t_copy_range(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    xl_sheet *s;
    int rc;
    if (!open_sheet(call, res, args, "sheet_name", 1, &b, &s, &rc)) return rc;
    const char *tname = xl_str(args, "target_sheet");
    xl_sheet *t = s;
    char *why = NULL;
    if (tname && *tname) {
        t = xl_sheet_find(b, tname);
        if (!t) return xl_fail_book(b, res, mb_asprintf("Failed to copy range: 'Worksheet %s does not exist.'", tname));
        if (xl_sheet_load(b, t, &why)) return xl_fail_book(b, res, why);
    }
    const char *a = xl_str(args, "source_start"), *e = xl_str(args, "source_end");
    unsigned r1, c1, r2, c2;
    if (xl_parse_cell(a, &r1, &c1))
        return xl_fail_book(b, res, mb_asprintf("Invalid source range: Invalid cell reference: %s", a));
    if (xl_parse_cell(e, &r2, &c2))
        return xl_fail_book(b, res, mb_asprintf("Invalid source range: Invalid cell reference: %s", e));
    const char *ts = xl_str(args, "target_start");
    mb_buf letters = {0}, digits = {0};
    for (const char *p = ts; *p; p++) {
        if (isalpha((unsigned char)*p)) mb_buf_putc(&letters, *p);
        else if (isdigit((unsigned char)*p)) mb_buf_putc(&digits, *p);
    }
    unsigned tc = letters.len ? xl_col_index(letters.data, letters.len) : 0;
    unsigned tr = digits.len && digits.len < 9 ? (unsigned)strtoul(digits.data, NULL, 10) : 0;
    mb_buf_free(&letters);
    mb_buf_free(&digits);
    if (!tc || !tr) return xl_fail_book(b, res, mb_asprintf("Invalid target cell: %s", ts));
    if (r2 >= r1 && c2 >= c1 && (unsigned long long)(r2 - r1 + 1) * (c2 - c1 + 1) > XL_MAX_CELLS)
        return xl_fail_book(b, res, mb_asprintf("Failed to copy range: more than %u cells", XL_MAX_CELLS));
    long dr = (long)tr - (long)r1, dc = (long)tc - (long)c1;
    if ((long)r2 + dr > (long)XL_MAX_ROW || (long)c2 + dc > (long)XL_MAX_COL)
        return xl_fail_book(b, res, mb_strdup("Failed to copy range: the target lies outside the sheet"));
    /* snapshot first: source and target may overlap */
    size_t n = 0;
    json_t *vals = json_array();
    unsigned *styles = NULL;
    for (unsigned r = r1; r <= r2; r++)
        for (unsigned c = c1; c <= c2; c++) {
            xmlNodePtr node = xl_cell_get(s, r, c);
            json_array_append_new(vals, xl_cell_value(b, s, node, r, c));
            styles = mb_realloc(styles, (n + 1) * sizeof *styles);
            styles[n++] = node ? xl_cell_style(node) : 0;
        }
    n = 0;
    for (unsigned r = r1; r <= r2 && !why; r++)
        for (unsigned c = c1; c <= c2 && !why; c++, n++) {
            unsigned nr = (unsigned)((long)r + dr), nc = (unsigned)((long)c + dc);
            json_t *v = json_array_get(vals, n);
            /* dates read back as text; keep the number by copying the node's value */
            xmlNodePtr src = xl_cell_get(s, r, c);
            if (src && !xl_child(src, "f") && xl_child(src, "v")) {
                xmlNodePtr dst = xl_cell_get_or_add(t, nr, nc);
                for (xmlNodePtr k = dst->children, next; k; k = next) {
                    next = k->next;
                    if (xl_is(k, "f") || xl_is(k, "v") || xl_is(k, "is")) {
                        xmlUnlinkNode(k);
                        xmlFreeNode(k);
                    }
                }
                xmlUnsetProp(dst, BAD_CAST "t");
                const char *ty = xl_attr(src, "t");
                if (ty) xmlSetProp(dst, BAD_CAST "t", BAD_CAST ty);
                xmlAddChild(dst, xmlCopyNode(xl_child(src, "v"), 1));
                if (styles[n]) xl_cell_set_style(dst, styles[n]);
                t->dirty = 1;
                b->stale = 1;
                continue;
            }
            if (xl_cell_set(b, t, nr, nc, v, &why)) break;
            if (styles[n]) xl_cell_set_style(xl_cell_get_or_add(t, nr, nc), styles[n]);
        }
    json_decref(vals);
    free(styles);
    if (why) {
        char *m = mb_asprintf("Failed to copy range: %s", why);
        free(why);
        return xl_fail_book(b, res, m);
    }
    return xl_save_ok(b, res, "Range copied successfully");
}

/* ---------------------------------------------------------- delete_range */

int xl_t_delete_range(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    xl_sheet *s;
    int rc;
    if (!open_sheet(call, res, args, "sheet_name", 1, &b, &s, &rc)) return rc;
    const char *a = xl_str(args, "start_cell"), *e = xl_str(args, "end_cell");
    const char *dir = xl_str(args, "shift_direction");
    unsigned r1, c1, r2, c2, mr1, mc1, mr2, mc2;
    if (xl_parse_cell(a, &r1, &c1))
        return xl_fail_book(b, res, mb_asprintf("Invalid range: Invalid cell reference: %s", a));
    if (e && *e) {
        if (xl_parse_cell(e, &r2, &c2))
            return xl_fail_book(b, res, mb_asprintf("Invalid range: Invalid cell reference: %s", e));
    } else {
        r2 = r1, c2 = c1;
    }
    xl_sheet_extent(s, &mr1, &mc1, &mr2, &mc2);
    if (r2 > mr2) return xl_fail_book(b, res, mb_asprintf("End row %u out of bounds (1-%u)", r2, mr2));
    if (c2 > mc2) return xl_fail_book(b, res, mb_asprintf("End column %u out of bounds (1-%u)", c2, mc2));
    if (strcmp(dir, "up") && strcmp(dir, "left"))
        return xl_fail_book(b, res, mb_asprintf("Invalid shift direction: %s. Must be 'up' or 'left'", dir));
    char x[16], y[16];
    xl_cell_name(r1, c1, x);
    xl_cell_name(r2 >= r1 ? r2 : r1, c2 >= c1 ? c2 : c1, y);
    for (unsigned r = r1; r <= r2; r++)
        for (unsigned c = c1; c <= c2; c++) xl_cell_remove(s, r, c);
    /* upstream then deletes whole rows (up) or whole columns (left) */
    if (!strcmp(dir, "up")) shift_rows(s, r1, -(long)(r2 - r1 + 1));
    else shift_cols(s, c1, -(long)(c2 - c1 + 1));
    b->stale = 1;
    char *msg = mb_asprintf("Range %s:%s deleted successfully", x, y);
    rc = xl_save_ok(b, res, msg);
    free(msg);
    return rc;
}

/* ---------------------------------------------------------- format_range */

static const char *const BORDER_STYLES[] = {"dashDot", "dashDotDot", "dashed", "dotted", "double",
                                            "hair", "medium", "mediumDashDot", "mediumDashDotDot",
                                            "mediumDashed", "slantDashDot", "thick", "thin", NULL};
static const char *const H_ALIGN[] = {"general", "left", "center", "right", "fill", "justify",
                                      "centerContinuous", "distributed", NULL};

static int one_of(const char *v, const char *const *set)
{
    for (int i = 0; set[i]; i++)
        if (!strcmp(v, set[i])) return 1;
    return 0;
}

static void set_repr(mb_buf *out, const char *const *set)
{
    mb_buf_putc(out, '{');
    for (int i = 0; set[i]; i++) mb_buf_printf(out, "%s'%s'", i ? ", " : "", set[i]);
    mb_buf_putc(out, '}');
}

/* openpyxl Color(rgb=...) after upstream's "FF" prefixing: 0 or -1. */
static int argb(const char *given, char out[9])
{
    char tmp[64];
    if (strncmp(given, "FF", 2)) snprintf(tmp, sizeof tmp, "FF%s", given);
    else snprintf(tmp, sizeof tmp, "%s", given);
    size_t n = strlen(tmp);
    if (n != 6 && n != 8) return -1;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)tmp[i])) return -1;
    if (n == 6) {
        memcpy(out, "00", 2);
        memcpy(out + 2, tmp, 6);
    } else {
        memcpy(out, tmp, 8);
    }
    out[8] = 0;
    return 0;
}

static int cond_format(xl_book *b, xl_sheet *s, const char *range, json_t *cf, char **why)
{
    const char *type = json_string_value(json_object_get(cf, "type"));
    if (!type || !*type) {
        *why = mb_strdup("Conditional format type not specified");
        return -1;
    }
    json_t *params = json_object_get(cf, "params");
    xmlNodePtr ws = xmlDocGetRootElement(s->doc);
    xmlNodePtr cfe = xl_new_el(ws, "conditionalFormatting");
    xmlSetProp(cfe, BAD_CAST "sqref", BAD_CAST range);
    xmlNodePtr rule = xmlNewChild(cfe, ws->ns, BAD_CAST "cfRule", NULL);
    /* priority: one past the highest in the sheet */
    int prio = 0;
    for (xmlNodePtr n = ws->children; n; n = n->next)
        for (xmlNodePtr r = xl_is(n, "conditionalFormatting") ? n->children : NULL; r; r = r->next) {
            const char *p = xl_attr(r, "priority");
            if (p && atoi(p) > prio) prio = atoi(p);
        }
    char buf[32];
    snprintf(buf, sizeof buf, "%d", prio + 1);
    xmlSetProp(rule, BAD_CAST "priority", BAD_CAST buf);
    json_t *formula = json_object_get(params, "formula");
    if (!strcmp(type, "cell_is") || !strcmp(type, "formula")) {
        xmlSetProp(rule, BAD_CAST(char *) "type", BAD_CAST(!strcmp(type, "cell_is") ? "cellIs" : "expression"));
        if (!strcmp(type, "cell_is")) {
            const char *op = json_string_value(json_object_get(params, "operator"));
            static const char *const ops[][2] = {
                {">", "greaterThan"}, {">=", "greaterThanOrEqual"}, {"<", "lessThan"},
                {"<=", "lessThanOrEqual"}, {"=", "equal"}, {"==", "equal"}, {"!=", "notEqual"}};
            for (size_t i = 0; op && i < sizeof ops / sizeof ops[0]; i++)
                if (!strcmp(op, ops[i][0])) op = ops[i][1];
            if (op) xmlSetProp(rule, BAD_CAST "operator", BAD_CAST op);
        }
        json_t *fill = json_object_get(params, "fill");
        if (json_is_object(fill)) {
            const char *fg = json_string_value(json_object_get(fill, "fgColor"));
            char color[9];
            if (argb(fg ? fg : "FFC7CE", color)) {
                *why = mb_strdup("Invalid conditional format fill color: Colors must be aRGB hex values");
                xmlFreeNode(cfe);
                return -1;
            }
            unsigned dxf;
            if (xl_style_dxf_fill(b, color, &dxf, why)) {
                xmlFreeNode(cfe);
                return -1;
            }
            snprintf(buf, sizeof buf, "%u", dxf);
            xmlSetProp(rule, BAD_CAST "dxfId", BAD_CAST buf);
        }
        for (size_t i = 0; i < json_array_size(formula); i++) {
            json_t *f = json_array_get(formula, i);
            mb_buf t = {0};
            if (json_is_string(f)) mb_buf_puts(&t, json_string_value(f));
            else if (json_is_number(f)) xl_py_float(&t, json_number_value(f));
            xmlNodePtr fe = xmlNewChild(rule, ws->ns, BAD_CAST "formula", NULL);
            xmlAddChild(fe, xmlNewText(BAD_CAST(t.data ? t.data : "")));
            mb_buf_free(&t);
        }
    } else if (!strcmp(type, "color_scale") || !strcmp(type, "data_bar")) {
        int bar = !strcmp(type, "data_bar");
        xmlSetProp(rule, BAD_CAST "type", BAD_CAST(bar ? "dataBar" : "colorScale"));
        xmlNodePtr el = xmlNewChild(rule, ws->ns, BAD_CAST(bar ? "dataBar" : "colorScale"), NULL);
        static const char *const points[] = {"start", "mid", "end", NULL};
        mb_buf colors = {0};
        for (int i = 0; points[i]; i++) {
            char k[32];
            snprintf(k, sizeof k, "%s_type", points[i]);
            const char *t = json_string_value(json_object_get(params, k));
            if (!t) continue;
            xmlNodePtr c = xmlNewChild(el, ws->ns, BAD_CAST "cfvo", NULL);
            xmlSetProp(c, BAD_CAST "type", BAD_CAST t);
            snprintf(k, sizeof k, "%s_value", points[i]);
            json_t *v = json_object_get(params, k);
            if (v && !json_is_null(v)) {
                mb_buf vb = {0};
                if (json_is_string(v)) mb_buf_puts(&vb, json_string_value(v));
                else xl_py_float(&vb, json_number_value(v));
                xmlSetProp(c, BAD_CAST "val", BAD_CAST vb.data);
                mb_buf_free(&vb);
            }
            snprintf(k, sizeof k, "%s_color", points[i]);
            const char *col = json_string_value(json_object_get(params, bar ? "color" : k));
            if (col && (!bar || !colors.len)) mb_buf_printf(&colors, "%s%s", colors.len ? "," : "", col);
        }
        char *save = NULL;
        for (char *tok = colors.data ? strtok_r(colors.data, ",", &save) : NULL; tok;
             tok = strtok_r(NULL, ",", &save)) {
            char color[9];
            if (argb(tok, color)) snprintf(color, sizeof color, "FF000000");
            xmlNodePtr c = xmlNewChild(el, ws->ns, BAD_CAST "color", NULL);
            xmlSetProp(c, BAD_CAST "rgb", BAD_CAST color);
        }
        mb_buf_free(&colors);
    } else {
        xmlFreeNode(cfe);
        if (!strcmp(type, "icon_set"))
            *why = mb_strdup("Failed to apply conditional formatting: icon_set rules are not supported");
        else
            *why = mb_asprintf("Failed to apply conditional formatting: Invalid conditional format type: %s", type);
        return -1;
    }
    xl_ws_insert(ws, cfe);
    s->dirty = 1;
    return 0;
}

int xl_t_format_range(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *start = xl_str(args, "start_cell"), *end = xl_str(args, "end_cell");
    if (!xl_valid_cell_ref(start)) {
        char *m = mb_asprintf("Invalid start cell reference: %s", start);
        int rc = xl_error(res, m);
        free(m);
        return rc;
    }
    if (end && *end && !xl_valid_cell_ref(end)) {
        char *m = mb_asprintf("Invalid end cell reference: %s", end);
        int rc = xl_error(res, m);
        free(m);
        return rc;
    }
    xl_book *b;
    xl_sheet *s;
    int rc;
    if (!open_sheet(call, res, args, "sheet_name", 1, &b, &s, &rc)) return rc;
    unsigned r1, c1, r2, c2;
    if (xl_parse_cell(start, &r1, &c1))
        return xl_fail_book(b, res, mb_asprintf("Invalid cell range: Invalid cell reference: %s", start));
    if (end && *end) {
        if (xl_parse_cell(end, &r2, &c2))
            return xl_fail_book(b, res, mb_asprintf("Invalid cell range: Invalid cell reference: %s", end));
    } else {
        r2 = r1, c2 = c1;
    }
    if (r1 < 1 || r2 > XL_MAX_ROW || c2 > XL_MAX_COL)
        return xl_fail_book(b, res, mb_asprintf("Invalid cell range: outside the sheet"));
    if (r2 >= r1 && c2 >= c1 && (unsigned long long)(r2 - r1 + 1) * (c2 - c1 + 1) > XL_MAX_CELLS)
        return xl_fail_book(b, res, mb_asprintf("the range holds more than %u cells, too many to format in one call",
                                            XL_MAX_CELLS));
    xl_style_req req = {.bold = xl_bool(args, "bold"), .italic = xl_bool(args, "italic"),
                        .underline = xl_bool(args, "underline"), .locked = -1, .hidden = -1};
    char fc[9], bg[9], bc[9];
    json_t *fs = json_object_get(args, "font_size");
    if (json_is_integer(fs)) req.font_size = (double)json_integer_value(fs);
    const char *v;
    if ((v = xl_str(args, "font_color"))) {
        if (argb(v, fc)) return xl_fail_book(b, res, mb_strdup("Invalid font color: Colors must be aRGB hex values"));
        req.font_color = fc;
    }
    if ((v = xl_str(args, "bg_color"))) {
        if (argb(v, bg))
            return xl_fail_book(b, res, mb_strdup("Invalid background color: Colors must be aRGB hex values"));
        req.fill_color = bg;
    }
    if ((v = xl_str(args, "border_style"))) {
        const char *col = xl_str(args, "border_color");
        if (argb(col ? col : "000000", bc))
            return xl_fail_book(b, res, mb_strdup("Invalid border settings: Colors must be aRGB hex values"));
        if (!one_of(v, BORDER_STYLES)) {
            mb_buf m = {0};
            mb_buf_puts(&m, "Invalid border settings: Value must be one of ");
            set_repr(&m, BORDER_STYLES);
            return xl_fail_book(b, res, mb_buf_steal(&m));
        }
        req.border_style = v;
        req.border_color = bc;
    }
    req.number_format = xl_str(args, "number_format");
    const char *al = xl_str(args, "alignment");
    if (al || xl_bool(args, "wrap_text")) {
        if (al && !one_of(al, H_ALIGN)) {
            mb_buf m = {0};
            mb_buf_puts(&m, "Invalid alignment settings: Value must be one of ");
            set_repr(&m, H_ALIGN);
            return xl_fail_book(b, res, mb_buf_steal(&m));
        }
        req.align_set = 1;
        req.horizontal = al;
        req.wrap = xl_bool(args, "wrap_text");
    }
    json_t *prot = json_object_get(args, "protection");
    if (json_is_object(prot)) {
        const char *k;
        json_t *pv;
        json_object_foreach(prot, k, pv) {
            if (strcmp(k, "locked") && strcmp(k, "hidden")) {
                return xl_fail_book(b, res, mb_asprintf("Failed to apply formatting: Protection.__init__() got an "
                                                    "unexpected keyword argument '%s'", k));
            }
            int bv = json_is_true(pv) ? 1 : 0;
            if (!strcmp(k, "locked")) req.locked = bv;
            else req.hidden = bv;
        }
        req.protection_set = 1;
    }
    /* one derived style per distinct base style */
    unsigned *map_from = NULL, *map_to = NULL;
    size_t nmap = 0;
    char *why = NULL;
    for (unsigned r = r1; r <= r2 && !why; r++)
        for (unsigned c = c1; c <= c2 && !why; c++) {
            xmlNodePtr node = xl_cell_get_or_add(s, r, c);
            unsigned base = xl_cell_style(node), to = 0;
            size_t i;
            for (i = 0; i < nmap && map_from[i] != base; i++) {}
            if (i == nmap) {
                if (xl_style_derive(b, base, &req, &to, &why)) break;
                map_from = mb_realloc(map_from, (nmap + 1) * sizeof *map_from);
                map_to = mb_realloc(map_to, (nmap + 1) * sizeof *map_to);
                map_from[nmap] = base, map_to[nmap] = to;
                nmap++;
            }
            xl_cell_set_style(node, map_to[i]);
        }
    free(map_from), free(map_to);
    if (why) return xl_fail_book(b, res, why);
    s->dirty = 1;
    if (xl_bool(args, "merge_cells") && end && *end) {
        char rng[64];
        snprintf(rng, sizeof rng, "%s:%s", start, end);
        for (char *p = rng; *p; p++) *p = (char)toupper((unsigned char)*p);
        xl_merge_add(s, rng);
    }
    json_t *cf = json_object_get(args, "conditional_format");
    if (json_is_object(cf)) {
        char rng[64];
        if (end && *end) snprintf(rng, sizeof rng, "%s:%s", start, end);
        else snprintf(rng, sizeof rng, "%s", start);
        if (cond_format(b, s, rng, cf, &why)) return xl_fail_book(b, res, why);
    }
    return xl_save_ok(b, res, "Range formatted successfully");
}
