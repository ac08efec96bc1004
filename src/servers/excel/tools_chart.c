/*
 * tools_chart.c - create_chart: a DrawingML chart part (xl/charts/chartN.xml)
 * shown by a one-cell anchor in the sheet's drawing part (created, or
 * extended when the sheet already has one), with the relationships and
 * content types that tie them in. The chart is what upstream's openpyxl code
 * builds (excel_mcp/chart.py): line, bar, pie, scatter or area; one series
 * per column after the first, titles from the header row, categories from
 * the first column (scatter: x from the first column, each series titled by
 * its first data cell, as upstream does), value data labels, legend on the
 * right, 15 x 7.5 cm.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "servers/excel/tools.h"

#define NS_C "http://schemas.openxmlformats.org/drawingml/2006/chart"
#define NS_A "http://schemas.openxmlformats.org/drawingml/2006/main"
#define NS_XDR "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
#define CT_CHART "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
#define CT_DRAWING "application/vnd.openxmlformats-officedocument.drawing+xml"
#define CHART_CX 5400000 /* 15 cm in EMU */
#define CHART_CY 2700000 /* 7.5 cm */

static xmlNodePtr el(xmlNodePtr parent, xmlNsPtr ns, const char *name)
{
    return xmlNewChild(parent, ns, BAD_CAST name, NULL);
}

static xmlNodePtr val(xmlNodePtr parent, xmlNsPtr ns, const char *name, const char *v)
{
    xmlNodePtr n = el(parent, ns, name);
    xmlSetProp(n, BAD_CAST "val", BAD_CAST v);
    return n;
}

static void uval(xmlNodePtr parent, xmlNsPtr ns, const char *name, unsigned v)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%u", v);
    val(parent, ns, name, buf);
}

/* A rich-text title (chart or axis). */
static void title(xmlNodePtr parent, xmlNsPtr c, xmlNsPtr a, const char *text)
{
    xmlNodePtr t = el(parent, c, "title");
    xmlNodePtr rich = el(el(t, c, "tx"), c, "rich");
    el(rich, a, "bodyPr");
    xmlNodePtr p = el(rich, a, "p");
    el(el(p, a, "pPr"), a, "defRPr");
    xmlNodePtr r = el(p, a, "r");
    xmlNewTextChild(r, a, BAD_CAST "t", BAD_CAST text);
    val(t, c, "overlay", "0");
}

/* 'Sheet'!$A$1:$A$5 (a single cell when r1 == r2). */
static char *ref_text(const char *sheet, unsigned r1, unsigned col, unsigned r2)
{
    mb_buf b = {0};
    mb_buf_putc(&b, '\'');
    for (const char *p = sheet; *p; p++) {
        if (*p == '\'') mb_buf_putc(&b, '\'');
        mb_buf_putc(&b, *p);
    }
    char cl[4];
    xl_col_letter(col, cl);
    mb_buf_printf(&b, "'!$%s$%u", cl, r1);
    if (r2 != r1) mb_buf_printf(&b, ":$%s$%u", cl, r2);
    return mb_buf_steal(&b);
}

static void formula_ref(xmlNodePtr parent, xmlNsPtr c, const char *wrap, const char *kind,
                        char *f)
{
    xmlNodePtr r = el(el(parent, c, wrap), c, kind);
    xmlNewTextChild(r, c, BAD_CAST "f", BAD_CAST f);
    free(f);
}

static void axis(xmlNodePtr plot, xmlNsPtr c, xmlNsPtr a, const char *kind, unsigned id,
                 unsigned cross, const char *pos, const char *text, int grid)
{
    xmlNodePtr ax = el(plot, c, kind);
    uval(ax, c, "axId", id);
    val(el(ax, c, "scaling"), c, "orientation", "minMax");
    val(ax, c, "delete", "0");
    val(ax, c, "axPos", pos);
    if (grid) el(ax, c, "majorGridlines");
    if (text && *text) title(ax, c, a, text);
    uval(ax, c, "crossAx", cross);
}

typedef struct chart_req {
    const char *type; /* lower-case: line, bar, pie, scatter, area */
    const char *sheet;
    unsigned r1, c1, r2, c2;
    const char *title, *x_title, *y_title;
    int labels; /* value data labels (0.1.7 shows them by default; 0.1.4 has none) */
} chart_req;

static xmlDocPtr chart_doc(const chart_req *q)
{
    xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
    xmlNodePtr cs = xmlNewNode(NULL, BAD_CAST "chartSpace");
    xmlNsPtr c = xmlNewNs(cs, BAD_CAST NS_C, BAD_CAST "c");
    xmlNsPtr a = xmlNewNs(cs, BAD_CAST NS_A, BAD_CAST "a");
    xmlSetNs(cs, c);
    xmlDocSetRootElement(doc, cs);
    val(cs, c, "roundedCorners", "0");
    xmlNodePtr ch = el(cs, c, "chart");
    if (q->title && *q->title) title(ch, c, a, q->title);
    val(ch, c, "autoTitleDeleted", "0");
    xmlNodePtr plot = el(ch, c, "plotArea");
    el(plot, c, "layout");
    int scatter = !strcmp(q->type, "scatter"), pie = !strcmp(q->type, "pie");
    static const struct { const char *type, *el; } GROUPS[] = {
        {"line", "lineChart"}, {"bar", "barChart"}, {"pie", "pieChart"},
        {"scatter", "scatterChart"}, {"area", "areaChart"}};
    const char *gname = "lineChart";
    for (size_t i = 0; i < sizeof GROUPS / sizeof GROUPS[0]; i++)
        if (!strcmp(q->type, GROUPS[i].type)) gname = GROUPS[i].el;
    xmlNodePtr g = el(plot, c, gname);
    if (!strcmp(q->type, "bar")) val(g, c, "barDir", "col");
    if (scatter) val(g, c, "scatterStyle", "lineMarker");
    else if (!pie) val(g, c, "grouping", !strcmp(q->type, "bar") ? "clustered" : "standard");
    val(g, c, "varyColors", pie ? "1" : "0");
    unsigned idx = 0;
    for (unsigned col = q->c1 + 1; col <= q->c2; col++, idx++) {
        xmlNodePtr s = el(g, c, "ser");
        uval(s, c, "idx", idx);
        uval(s, c, "order", idx);
        if (scatter) {
            /* upstream: Series(y, x, title_from_data=True) over rows r1+1.. */
            formula_ref(s, c, "tx", "strRef", ref_text(q->sheet, q->r1 + 1, col, q->r1 + 1));
            if (q->r2 >= q->r1 + 2) {
                formula_ref(s, c, "xVal", "numRef", ref_text(q->sheet, q->r1 + 1, q->c1, q->r2));
                formula_ref(s, c, "yVal", "numRef", ref_text(q->sheet, q->r1 + 2, col, q->r2));
            }
            val(s, c, "smooth", "0");
            continue;
        }
        formula_ref(s, c, "tx", "strRef", ref_text(q->sheet, q->r1, col, q->r1));
        if (!strcmp(q->type, "bar")) val(s, c, "invertIfNegative", "0");
        formula_ref(s, c, "cat", "numRef", ref_text(q->sheet, q->r1 + 1, q->c1, q->r2));
        formula_ref(s, c, "val", "numRef", ref_text(q->sheet, q->r1 + 1, col, q->r2));
        if (!strcmp(q->type, "line")) val(s, c, "smooth", "0");
    }
    if (q->labels) {
        xmlNodePtr dl = el(g, c, "dLbls");
        val(dl, c, "showLegendKey", "0");
        val(dl, c, "showVal", "1");
        val(dl, c, "showCatName", "0");
        val(dl, c, "showSerName", "0");
        val(dl, c, "showPercent", "0");
        val(dl, c, "showBubbleSize", "0");
    }
    if (!strcmp(q->type, "bar")) val(g, c, "gapWidth", "150");
    if (!strcmp(q->type, "line")) val(g, c, "marker", "1");
    if (pie) val(g, c, "firstSliceAng", "0");
    if (!pie) {
        unsigned yid = scatter ? 20 : 100;
        uval(g, c, "axId", 10);
        uval(g, c, "axId", yid);
        axis(plot, c, a, scatter ? "valAx" : "catAx", 10, yid, "b", q->x_title, 0);
        axis(plot, c, a, "valAx", yid, 10, "l", q->y_title, 1);
    }
    xmlNodePtr lg = el(ch, c, "legend");
    val(lg, c, "legendPos", "r");
    val(lg, c, "overlay", "0");
    val(ch, c, "plotVisOnly", "1");
    val(ch, c, "dispBlanksAs", "gap");
    return doc;
}

/* The anchor that shows chart `rid` with its top-left corner at col/row (0-based). */
static void add_anchor(xmlNodePtr wsdr, unsigned col, unsigned row, unsigned id, const char *rid)
{
    xmlNsPtr x = wsdr->ns;
    xmlNsPtr a = xmlSearchNsByHref(wsdr->doc, wsdr, BAD_CAST NS_A);
    if (!a) a = xmlNewNs(wsdr, BAD_CAST NS_A, BAD_CAST "a");
    xmlNodePtr an = el(wsdr, x, "oneCellAnchor");
    xmlNodePtr from = el(an, x, "from");
    char buf[32];
    snprintf(buf, sizeof buf, "%u", col);
    xmlNewTextChild(from, x, BAD_CAST "col", BAD_CAST buf);
    xmlNewTextChild(from, x, BAD_CAST "colOff", BAD_CAST "0");
    snprintf(buf, sizeof buf, "%u", row);
    xmlNewTextChild(from, x, BAD_CAST "row", BAD_CAST buf);
    xmlNewTextChild(from, x, BAD_CAST "rowOff", BAD_CAST "0");
    xmlNodePtr ext = el(an, x, "ext");
    snprintf(buf, sizeof buf, "%d", CHART_CX);
    xmlSetProp(ext, BAD_CAST "cx", BAD_CAST buf);
    snprintf(buf, sizeof buf, "%d", CHART_CY);
    xmlSetProp(ext, BAD_CAST "cy", BAD_CAST buf);
    xmlNodePtr gf = el(an, x, "graphicFrame");
    xmlSetProp(gf, BAD_CAST "macro", BAD_CAST "");
    xmlNodePtr nv = el(gf, x, "nvGraphicFramePr");
    xmlNodePtr cnv = el(nv, x, "cNvPr");
    snprintf(buf, sizeof buf, "%u", id);
    xmlSetProp(cnv, BAD_CAST "id", BAD_CAST buf);
    snprintf(buf, sizeof buf, "Chart %u", id);
    xmlSetProp(cnv, BAD_CAST "name", BAD_CAST buf);
    el(nv, x, "cNvGraphicFramePr");
    xmlNodePtr xf = el(gf, x, "xfrm");
    xmlNodePtr off = el(xf, a, "off");
    xmlSetProp(off, BAD_CAST "x", BAD_CAST "0");
    xmlSetProp(off, BAD_CAST "y", BAD_CAST "0");
    xmlNodePtr e2 = el(xf, a, "ext");
    xmlSetProp(e2, BAD_CAST "cx", BAD_CAST "0");
    xmlSetProp(e2, BAD_CAST "cy", BAD_CAST "0");
    xmlNodePtr gd = el(el(gf, a, "graphic"), a, "graphicData");
    xmlSetProp(gd, BAD_CAST "uri", BAD_CAST NS_C);
    xmlNodePtr cc = xmlNewChild(gd, NULL, BAD_CAST "chart", NULL);
    xmlNsPtr cns = xmlNewNs(cc, BAD_CAST NS_C, BAD_CAST "c");
    xmlSetNs(cc, cns);
    xmlNsPtr rns = xmlNewNs(cc, BAD_CAST XL_NS_R, BAD_CAST "r");
    xmlSetNsProp(cc, rns, BAD_CAST "id", BAD_CAST rid);
    el(an, x, "clientData");
}

/* Highest cNvPr id in a drawing. */
static unsigned max_shape_id(xmlNodePtr n)
{
    unsigned m = 0;
    for (xmlNodePtr k = n->children; k; k = k->next) {
        if (k->type != XML_ELEMENT_NODE) continue;
        if (xl_is(k, "cNvPr")) {
            const char *id = xl_attr(k, "id");
            unsigned v = id ? (unsigned)strtoul(id, NULL, 10) : 0;
            if (v > m) m = v;
        }
        unsigned sub = max_shape_id(k);
        if (sub > m) m = sub;
    }
    return m;
}

/* Puts the chart part in and shows it in the sheet's drawing. */
static int place_chart(xl_book *b, xl_sheet *s, const chart_req *q, unsigned col, unsigned row,
                       char **why)
{
    mb_err err = {0};
    xmlNodePtr ws = xmlDocGetRootElement(s->doc);
    xmlNodePtr dref = xl_child(ws, "drawing");
    char *dpart = NULL;
    xmlDocPtr ddoc = NULL;
    if (dref) {
        const char *rid = xl_attr(dref, "id");
        dpart = rid ? mb_ooxml_rel_part(b->pkg, s->part, rid) : NULL;
        if (!dpart || mb_ooxml_xml(b->pkg, dpart, &ddoc, &err)) {
            *why = mb_asprintf("Failed to create chart drawing: the sheet's drawing part cannot be read%s%s",
                               err.msg[0] ? ": " : "", err.msg);
            free(dpart);
            return MB_EINVAL;
        }
    } else {
        dpart = mb_ooxml_unique_name(b->pkg, "xl/drawings/drawing%u.xml");
        ddoc = xmlNewDoc(BAD_CAST "1.0");
        xmlNodePtr root = xmlNewNode(NULL, BAD_CAST "wsDr");
        xmlSetNs(root, xmlNewNs(root, BAD_CAST NS_XDR, BAD_CAST "xdr"));
        xmlNewNs(root, BAD_CAST NS_A, BAD_CAST "a");
        xmlDocSetRootElement(ddoc, root);
        mb_ooxml_put_xml(b->pkg, dpart, ddoc);
        char *target = mb_ooxml_relative(s->part, dpart);
        char *rid = NULL;
        int rc = mb_ooxml_ct_override(b->pkg, dpart, CT_DRAWING, &err);
        if (!rc) rc = mb_ooxml_rel_add(b->pkg, s->part, XL_REL_BASE "drawing", target, &rid, &err);
        free(target);
        if (rc) {
            *why = mb_strdup(err.msg);
            free(dpart);
            return rc;
        }
        dref = xl_new_el(ws, "drawing");
        xmlNsPtr rns = xmlSearchNsByHref(s->doc, ws, BAD_CAST XL_NS_R);
        if (!rns) rns = xmlNewNs(ws, BAD_CAST XL_NS_R, BAD_CAST "r");
        xmlSetNsProp(dref, rns, BAD_CAST "id", BAD_CAST rid);
        free(rid);
        xl_ws_insert(ws, dref);
        s->dirty = 1;
    }
    char *cpart = mb_ooxml_unique_name(b->pkg, "xl/charts/chart%u.xml");
    mb_ooxml_put_xml(b->pkg, cpart, chart_doc(q));
    char *target = mb_ooxml_relative(dpart, cpart);
    char *crid = NULL;
    int rc = mb_ooxml_ct_override(b->pkg, cpart, CT_CHART, &err);
    if (!rc) rc = mb_ooxml_rel_add(b->pkg, dpart, XL_REL_BASE "chart", target, &crid, &err);
    free(target);
    free(cpart);
    if (rc) {
        *why = mb_strdup(err.msg);
        free(dpart);
        return rc;
    }
    xmlNodePtr root = xmlDocGetRootElement(ddoc);
    add_anchor(root, col, row, max_shape_id(root) + 1, crid);
    mb_ooxml_touch(b->pkg, dpart);
    free(crid);
    free(dpart);
    return MB_OK;
}

/* Python's int() of a str: optional spaces and sign around digits ('_' between them). */
static int py_int(const char *s, long long *out)
{
    while (isspace((unsigned char)*s)) s++;
    int neg = 0;
    if (*s == '+' || *s == '-') neg = *s++ == '-';
    if (!isdigit((unsigned char)*s)) return -1;
    long long v = 0;
    for (; *s; s++) {
        if (*s == '_' && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[-1])) continue;
        if (!isdigit((unsigned char)*s)) break;
        if (v < 100000000000ll) v = v * 10 + (*s - '0');
    }
    while (isspace((unsigned char)*s)) s++;
    if (*s) return -1;
    *out = neg ? -v : v;
    return 0;
}

int xl_t_create_chart(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *given = xl_str(args, "filepath");
    char *real = NULL, *why = NULL;
    int rc = xl_path(call, res, given, 0, &real);
    if (rc) return rc;
    xl_book *b = NULL;
    if (xl_book_open(real, given, &b, &why)) {
        free(real);
        char *m = mb_asprintf("Unexpected error creating chart: %s", why);
        free(why);
        rc = xl_error(res, m);
        free(m);
        return rc;
    }
    free(real);
    const char *sname = xl_str(args, "sheet_name"), *range = xl_str(args, "data_range");
    const char *type = xl_str(args, "chart_type"), *target = xl_str(args, "target_cell");
    xl_sheet *s = xl_sheet_find(b, sname);
    if (!s) return xl_fail_book(b, res, mb_asprintf("Sheet '%s' not found", sname));
    if (xl_sheet_load(b, s, &why)) return xl_fail_book(b, res, why);
    const char *cells = range, *bang = strchr(range, '!');
    if (bang) {
        if (strchr(bang + 1, '!'))
            return xl_fail_book(b, res, mb_strdup("Unexpected error creating chart: too many values to unpack (expected 2)"));
        char *rs = mb_strndup(range, (size_t)(bang - range));
        int found = xl_sheet_find(b, rs) != NULL;
        if (!found) {
            char *m = mb_asprintf("Sheet '%s' referenced in data range not found", rs);
            free(rs);
            return xl_fail_book(b, res, m);
        }
        free(rs);
        cells = bang + 1;
    }
    const char *colon = strchr(cells, ':');
    if (!colon)
        return xl_fail_book(b, res, mb_strdup("Invalid data range format: not enough values to unpack (expected 2, got 1)"));
    if (strchr(colon + 1, ':'))
        return xl_fail_book(b, res, mb_strdup("Invalid data range format: too many values to unpack (expected 2)"));
    char *start = mb_strndup(cells, (size_t)(colon - cells));
    chart_req q = {.sheet = s->name, .title = xl_str(args, "title"), .x_title = xl_str(args, "x_axis"),
                   .y_title = xl_str(args, "y_axis"),
                   .labels = !((xl_server *)mb_mcp_call_data(call))->v014};
    if (xl_parse_cell(start, &q.r1, &q.c1)) {
        char *m = mb_asprintf("Invalid data range format: Invalid cell reference: %s", start);
        free(start);
        return xl_fail_book(b, res, m);
    }
    free(start);
    if (xl_parse_cell(colon + 1, &q.r2, &q.c2))
        return xl_fail_book(b, res, mb_asprintf("Invalid data range format: Invalid cell reference: %s", colon + 1));
    char lower[16];
    size_t tl = strlen(type);
    for (size_t i = 0; i < sizeof lower - 1 && i <= tl; i++) lower[i] = (char)tolower((unsigned char)type[i]);
    lower[sizeof lower - 1] = 0;
    static const char *const TYPES[] = {"line", "bar", "pie", "scatter", "area", NULL};
    int ok = 0;
    for (int i = 0; TYPES[i]; i++) ok |= tl < sizeof lower && !strcmp(lower, TYPES[i]);
    if (!ok)
        return xl_fail_book(b, res, mb_asprintf("Unsupported chart type: %s. Supported types: line, bar, pie, "
                                            "scatter, area", type));
    q.type = lower;
    if (q.r2 <= q.r1 || q.c2 <= q.c1)
        return xl_fail_book(b, res, mb_asprintf("Failed to create chart data references: %s needs a header row "
                                            "and a label column besides the data", cells));
    if (q.c2 - q.c1 > 255)
        return xl_fail_book(b, res, mb_strdup("Failed to create chart data references: at most 255 series"));
    /* upstream's target cell handling: one column letter, the rest a row number */
    if (!*target || !strpbrk(target, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") ||
        !strpbrk(target, "0123456789"))
        return xl_fail_book(b, res, mb_asprintf("Failed to create chart drawing: Invalid target cell format: %s", target));
    if (!isalpha((unsigned char)target[0]) || (unsigned char)target[0] >= 0x80)
        return xl_fail_book(b, res, mb_asprintf("Invalid target cell: %c is not a valid column name", target[0]));
    long long row;
    if (py_int(target + 1, &row)) {
        mb_buf m = {0};
        mb_buf_puts(&m, "Invalid target cell: invalid literal for int() with base 10: ");
        xl_py_repr(&m, target + 1);
        return xl_fail_book(b, res, mb_buf_steal(&m));
    }
    if (row < 1 || row > XL_MAX_ROW)
        return xl_fail_book(b, res, mb_asprintf("Invalid target cell: row %lld lies outside the sheet", row));
    unsigned col = (unsigned)(toupper((unsigned char)target[0]) - 'A');
    if (place_chart(b, s, &q, col, (unsigned)row - 1, &why)) return xl_fail_book(b, res, why);
    char *msg = mb_asprintf("%c%s chart created successfully", toupper((unsigned char)lower[0]), lower + 1);
    if (xl_book_save(b, &why)) {
        free(msg);
        char *m = mb_asprintf("Failed to save workbook with chart: %s", why);
        free(why);
        return xl_fail_book(b, res, m);
    }
    rc = xl_ok(res, msg);
    free(msg);
    xl_book_free(b);
    return rc;
}
