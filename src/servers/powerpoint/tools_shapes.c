/*
 * tools_shapes.c - manage_text and add_table (tools/content_tools.py,
 * tools/structural_tools.py, utils/content_utils.py): python-pptx's text box
 * and table graphic frame, and format_text_advanced's run formatting.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servers/powerpoint/pp.h"

/* Inches(x) = int(x * 914400), truncated toward zero */
long long pp_inches(double x)
{
    return (long long)trunc(x * PP_EMU_PER_INCH);
}

int pp_valid_rgb(json_t *c)
{
    if (!json_is_array(c) || json_array_size(c) != 3) return 0;
    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_array_get(c, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 255) return 0;
    }
    return 1;
}

void pp_set_ll(xmlNodePtr n, const char *attr, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    xmlSetProp(n, (const xmlChar *)attr, (const xmlChar *)buf);
}

static xmlNodePtr add_xfrm(xmlNodePtr parent, const char *ns, long long x, long long y, long long cx,
                           long long cy)
{
    xmlNodePtr xf = pp_new(parent, ns, "xfrm");
    xmlNodePtr off = pp_new(xf, PP_NS_A, "off");
    pp_set_ll(off, "x", x);
    pp_set_ll(off, "y", y);
    xmlNodePtr ext = pp_new(xf, PP_NS_A, "ext");
    pp_set_ll(ext, "cx", cx);
    pp_set_ll(ext, "cy", cy);
    return xf;
}

void pp_set_id_name(xmlNodePtr cnvpr, long id, const char *base)
{
    pp_set_ll(cnvpr, "id", id);
    char *name = mb_asprintf("%s %ld", base, id - 1);
    xmlSetProp(cnvpr, (const xmlChar *)"name", (const xmlChar *)name);
    free(name);
}

/* a:rPr of a run, created as its first child. */
static xmlNodePtr run_rpr(xmlNodePtr r)
{
    xmlNodePtr rpr = pp_child(r, PP_NS_A, "rPr");
    if (rpr) return rpr;
    rpr = pp_new(r, PP_NS_A, "rPr");
    xmlUnlinkNode(rpr);
    if (r->children) xmlAddPrevSibling(r->children, rpr);
    else xmlAddChild(r, rpr);
    return rpr;
}

static void rpr_color(xmlNodePtr rpr, json_t *rgb)
{
    for (xmlNodePtr c = rpr->children, next; c; c = next) {
        next = c->next;
        if (pp_is(c, PP_NS_A, "noFill") || pp_is(c, PP_NS_A, "solidFill") ||
            pp_is(c, PP_NS_A, "gradFill") || pp_is(c, PP_NS_A, "blipFill") ||
            pp_is(c, PP_NS_A, "pattFill") || pp_is(c, PP_NS_A, "grpFill")) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
        }
    }
    xmlNodePtr fill = pp_new(rpr, PP_NS_A, "solidFill");
    xmlUnlinkNode(fill);
    xmlNodePtr ln = pp_child(rpr, PP_NS_A, "ln");
    if (ln) xmlAddNextSibling(ln, fill);
    else if (rpr->children) xmlAddPrevSibling(rpr->children, fill);
    else xmlAddChild(rpr, fill);
    xmlNodePtr clr = pp_new(fill, PP_NS_A, "srgbClr");
    char hex[8];
    snprintf(hex, sizeof hex, "%02X%02X%02X", (int)json_integer_value(json_array_get(rgb, 0)),
             (int)json_integer_value(json_array_get(rgb, 1)), (int)json_integer_value(json_array_get(rgb, 2)));
    xmlSetProp(clr, (const xmlChar *)"val", (const xmlChar *)hex);
}

static void rpr_latin(xmlNodePtr rpr, const char *face)
{
    xmlNodePtr l = pp_child(rpr, PP_NS_A, "latin");
    if (!l) {
        l = pp_new(rpr, PP_NS_A, "latin");
        /* before ea, cs, sym, hlinkClick, hlinkMouseOver, rtl, extLst */
        static const char *const AFTER[] = {"ea", "cs", "sym", "hlinkClick", "hlinkMouseOver",
                                            "rtl", "extLst", NULL};
        for (xmlNodePtr c = rpr->children; c; c = c->next) {
            int later = 0;
            for (int i = 0; AFTER[i]; i++) later |= pp_is(c, PP_NS_A, AFTER[i]);
            if (later && c != l) {
                xmlUnlinkNode(l);
                xmlAddPrevSibling(c, l);
                break;
            }
        }
    }
    xmlSetProp(l, (const xmlChar *)"typeface", (const xmlChar *)face);
}

/* format_text_advanced(text_frame, ...) on a txBody: wrap on, then per
 * paragraph the alignment and per run the font. bg_color and
 * vertical_alignment are accepted and ignored, as upstream does. */
void pp_format_txbody(xmlNodePtr tx, json_t *args, const char *size_key, int force_bold)
{
    xmlNodePtr bp = pp_child(tx, PP_NS_A, "bodyPr");
    if (bp) xmlSetProp(bp, (const xmlChar *)"wrap", (const xmlChar *)"square");
    const char *al = json_string_value(json_object_get(args, "alignment"));
    static const struct {
        const char *k, *v;
    } ALIGN[] = {{"left", "l"}, {"center", "ctr"}, {"right", "r"}, {"justify", "just"}};
    json_t *size = json_object_get(args, size_key);
    json_t *bold = force_bold ? json_true() : json_object_get(args, "bold");
    json_t *italic = json_object_get(args, "italic"), *ul = json_object_get(args, "underline");
    const char *font = json_string_value(json_object_get(args, "font_name"));
    json_t *color = json_object_get(args, "color");
    for (xmlNodePtr p = tx->children; p; p = p->next) {
        if (!pp_is(p, PP_NS_A, "p")) continue;
        for (size_t i = 0; al && i < sizeof ALIGN / sizeof ALIGN[0]; i++) {
            if (strcmp(al, ALIGN[i].k)) continue;
            xmlNodePtr ppr = pp_child(p, PP_NS_A, "pPr");
            if (!ppr) {
                ppr = pp_new(p, PP_NS_A, "pPr");
                xmlUnlinkNode(ppr);
                if (p->children) xmlAddPrevSibling(p->children, ppr);
                else xmlAddChild(p, ppr);
            }
            xmlSetProp(ppr, (const xmlChar *)"algn", (const xmlChar *)ALIGN[i].v);
        }
        for (xmlNodePtr r = p->children; r; r = r->next) {
            if (!pp_is(r, PP_NS_A, "r")) continue;
            xmlNodePtr rpr = run_rpr(r);
            if (json_is_integer(size)) pp_set_ll(rpr, "sz", (long long)json_integer_value(size) * 100);
            if (json_is_boolean(bold))
                xmlSetProp(rpr, (const xmlChar *)"b", (const xmlChar *)(json_is_true(bold) ? "1" : "0"));
            if (json_is_boolean(italic))
                xmlSetProp(rpr, (const xmlChar *)"i", (const xmlChar *)(json_is_true(italic) ? "1" : "0"));
            if (json_is_boolean(ul))
                xmlSetProp(rpr, (const xmlChar *)"u", (const xmlChar *)(json_is_true(ul) ? "sng" : "none"));
            if (font) rpr_latin(rpr, font);
            if (json_is_array(color)) rpr_color(rpr, color);
        }
    }
}

static int truthy(json_t *v)
{
    if (!v || json_is_null(v) || json_is_false(v)) return 0;
    if (json_is_integer(v)) return json_integer_value(v) != 0;
    if (json_is_string(v)) return json_string_length(v) > 0;
    if (json_is_array(v)) return json_array_size(v) > 0;
    return 1;
}

xmlNodePtr pp_textbox_new(pp_pres *p, const char *slide, json_t *pos)
{
    xmlNodePtr tree = pp_sptree(pp_part_xml(p, slide));
    long id = pp_next_shape_id(tree);
    xmlNodePtr sp = pp_new(tree, PP_NS_P, "sp");
    xmlNodePtr nv = pp_new(sp, PP_NS_P, "nvSpPr");
    pp_set_id_name(pp_new(nv, PP_NS_P, "cNvPr"), id, "TextBox");
    xmlSetProp(pp_new(nv, PP_NS_P, "cNvSpPr"), (const xmlChar *)"txBox", (const xmlChar *)"1");
    pp_new(nv, PP_NS_P, "nvPr");
    xmlNodePtr sppr = pp_new(sp, PP_NS_P, "spPr");
    add_xfrm(sppr, PP_NS_A, pp_inches(json_number_value(json_object_get(pos, "left"))),
             pp_inches(json_number_value(json_object_get(pos, "top"))),
             pp_inches(json_number_value(json_object_get(pos, "width"))),
             pp_inches(json_number_value(json_object_get(pos, "height"))));
    xmlNodePtr geom = pp_new(sppr, PP_NS_A, "prstGeom");
    xmlSetProp(geom, (const xmlChar *)"prst", (const xmlChar *)"rect");
    pp_new(geom, PP_NS_A, "avLst");
    pp_new(sppr, PP_NS_A, "noFill");
    xmlNodePtr tx = pp_new(sp, PP_NS_P, "txBody");
    xmlNodePtr bp = pp_new(tx, PP_NS_A, "bodyPr");
    xmlSetProp(bp, (const xmlChar *)"wrap", (const xmlChar *)"none");
    pp_new(bp, PP_NS_A, "spAutoFit");
    pp_new(tx, PP_NS_A, "lstStyle");
    pp_new(tx, PP_NS_A, "p");
    pp_touch(p, slide);
    return sp;
}

static int add_textbox(pp_pres *p, const char *slide, json_t *args, mb_mcp_result *res)
{
    xmlNodePtr tree = pp_sptree(pp_part_xml(p, slide));
    xmlNodePtr tx = pp_child(pp_textbox_new(p, slide, args), PP_NS_P, "txBody");
    const char *text = json_string_value(json_object_get(args, "text"));
    pp_set_text(tx, text);
    static const char *const FMT[] = {"font_size", "font_name", "bold", "italic", "underline", "color",
                                      "bg_color", "alignment", "vertical_alignment", NULL};
    int any = 0;
    for (int i = 0; FMT[i]; i++) any |= truthy(json_object_get(args, FMT[i]));
    if (any) pp_format_txbody(tx, args, "font_size", 0);
    pp_touch(p, slide);
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(tree, &sh);
    free(sh);
    json_t *d = json_object();
    char *msg = mb_asprintf("Added text box to slide %lld",
                            (long long)json_integer_value(json_object_get(args, "slide_index")));
    json_object_set_new(d, "message", json_string(msg));
    free(msg);
    json_object_set_new(d, "shape_index", json_integer((json_int_t)n - 1));
    json_object_set(d, "text", json_object_get(args, "text"));
    pp_answer(res, d);
    return 0;
}

static int set_flag(xmlNodePtr rpr, const char *attr, json_t *v, const char *on, const char *off)
{
    if (json_is_null(v)) {
        xmlUnsetProp(rpr, (const xmlChar *)attr);
        return 0;
    }
    if (!json_is_boolean(v)) return -1;
    xmlSetProp(rpr, (const xmlChar *)attr, (const xmlChar *)(json_is_true(v) ? on : off));
    return 0;
}

/* manage_text format_runs: text_frame.clear(), then each run in a new
 * paragraph (upstream's `if not text_frame.paragraphs` never holds, so the
 * first paragraph stays empty). */
static int format_runs(pp_pres *p, const char *slide, json_t *args, mb_mcp_result *res)
{
    json_t *runs = json_object_get(args, "text_runs");
    json_int_t si = json_integer_value(json_object_get(args, "shape_index"));
    if (!json_array_size(runs)) {
        pp_errorf(res, "text_runs parameter is required for format_runs operation");
        return 0;
    }
    xmlNodePtr *sh = NULL;
    pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    xmlNodePtr shape = sh[si];
    free(sh);
    if (!pp_is(shape, PP_NS_P, "sp")) {
        pp_errorf(res, "Shape does not contain text");
        return 0;
    }
    xmlNodePtr tx = pp_sp_txbody(shape);
    if (!pp_text_clear(tx)) pp_new(tx, PP_NS_A, "p");
    json_t *done = json_array();
    size_t i;
    json_t *rd;
    const char *bad = NULL;
    json_array_foreach(runs, i, rd) {
        json_t *text = json_object_get(rd, "text");
        if (!text) continue;
        if (!json_is_string(text)) {
            bad = "run text must be a string";
            break;
        }
        xmlNodePtr r = pp_new(pp_new(tx, PP_NS_A, "p"), PP_NS_A, "r");
        xmlNodeAddContent(pp_new(r, PP_NS_A, "t"), (const xmlChar *)json_string_value(text));
        json_t *v;
        xmlNodePtr rpr = NULL;
#define RPR (rpr ? rpr : (rpr = run_rpr(r)))
        if ((v = json_object_get(rd, "bold")) && set_flag(RPR, "b", v, "1", "0")) bad = "bold must be a boolean";
        if ((v = json_object_get(rd, "italic")) && set_flag(RPR, "i", v, "1", "0")) bad = "italic must be a boolean";
        if ((v = json_object_get(rd, "underline")) && set_flag(RPR, "u", v, "sng", "none"))
            bad = "underline must be a boolean";
        if ((v = json_object_get(rd, "font_size"))) {
            if (!json_is_number(v)) bad = "font_size must be a number";
            else pp_set_ll(RPR, "sz", (long long)(json_number_value(v) * 12700) / 127);
        }
        if ((v = json_object_get(rd, "font_name"))) {
            if (!json_is_string(v)) bad = "font_name must be a string";
            else rpr_latin(RPR, json_string_value(v));
        }
        if ((v = json_object_get(rd, "color")) && pp_valid_rgb(v)) rpr_color(RPR, v);
        if ((v = json_object_get(rd, "hyperlink"))) {
            if (!json_is_string(v) && !json_is_null(v)) bad = "hyperlink must be a string";
            else pp_run_set_address(p, slide, r, json_string_value(v));
        }
#undef RPR
        if (bad) break;
        json_t *fmt = json_object();
        const char *k;
        json_object_foreach(rd, k, v) if (strcmp(k, "text")) json_object_set(fmt, k, v);
        json_array_append_new(done, json_pack("{s:O,s:o}", "text", text, "formatting_applied", fmt));
    }
    pp_touch(p, slide);
    if (bad) {
        json_decref(done);
        return mb_mcp_fail(res, "manage_text format_runs: %s (mcpbox checks run values python-pptx would "
                                "reject)", bad);
    }
    json_t *d = json_object();
    char *msg = mb_asprintf("Applied formatting to %zu text runs on shape %lld", json_array_size(done), (long long)si);
    json_object_set_new(d, "message", json_string(msg));
    free(msg);
    json_object_set(d, "slide_index", json_object_get(args, "slide_index"));
    json_object_set_new(d, "shape_index", json_integer(si));
    json_object_set_new(d, "formatted_runs", done);
    pp_answer(res, d);
    return 0;
}

int pp_t_manage_text(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    json_t *fs = json_object_get(args, "font_size");
    if (json_is_integer(fs) && json_integer_value(fs) <= 0) {
        pp_errorf(res, "Parameter 'font_size': must be a positive integer");
        return 0;
    }
    static const char *const COLORS[] = {"color", "bg_color", NULL};
    for (int i = 0; COLORS[i]; i++) {
        json_t *c = json_object_get(args, COLORS[i]);
        if (!json_is_null(c) && !pp_valid_rgb(c)) {
            pp_errorf(res, "Parameter '%s': must be a valid RGB list [R, G, B] with values 0-255", COLORS[i]);
            return 0;
        }
    }
    const char *op = json_string_value(json_object_get(args, "operation"));
    if (!strcmp(op, "add")) return add_textbox(p, slide, args, res);
    if (!strcmp(op, "format") || !strcmp(op, "validate") || !strcmp(op, "format_runs")) {
        xmlNodePtr *sh = NULL;
        size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
        free(sh);
        json_t *si = json_object_get(args, "shape_index");
        if (!json_is_integer(si) || json_integer_value(si) < 0 || (size_t)json_integer_value(si) >= n) {
            mb_buf b = {0};
            if (json_is_integer(si)) mb_buf_printf(&b, "%lld", (long long)json_integer_value(si));
            else mb_buf_puts(&b, "None");
            pp_errorf(res, "Invalid shape index for %s: %s. Available shapes: 0-%lld",
                      !strcmp(op, "format") ? "formatting" : !strcmp(op, "validate") ? "validation"
                                                                                  : "format_runs",
                      b.data, (long long)n - 1);
            mb_buf_free(&b);
            return 0;
        }
        if (!strcmp(op, "format")) {
            /* upstream passes the shape, not its text frame, to
             * format_text_advanced, which fails inside its own try and is
             * ignored: nothing changes and the message says formatted. */
            json_t *d = json_object();
            char *msg = mb_asprintf("Formatted text shape %lld on slide %lld", (long long)json_integer_value(si),
                                    (long long)json_integer_value(json_object_get(args, "slide_index")));
            json_object_set_new(d, "message", json_string(msg));
            free(msg);
            pp_answer(res, d);
            return 0;
        }
        if (!strcmp(op, "format_runs")) return format_runs(p, slide, args, res);
        sh = NULL;
        pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
        int rc = pp_text_validate(p, slide, sh[json_integer_value(si)], args, res);
        free(sh);
        return rc;
    }
    pp_errorf(res, "Invalid operation: %s. Must be 'add', 'format', 'validate', or 'format_runs'", op);
    return 0;
}

/* ------------------------------------------------------------- add_table */

void pp_cell_fill(xmlNodePtr tc, json_t *rgb)
{
    xmlNodePtr tcpr = pp_child(tc, PP_NS_A, "tcPr");
    if (!tcpr) tcpr = pp_new(tc, PP_NS_A, "tcPr");
    for (xmlNodePtr c = tcpr->children, next; c; c = next) {
        next = c->next;
        if (pp_is(c, PP_NS_A, "noFill") || pp_is(c, PP_NS_A, "solidFill") || pp_is(c, PP_NS_A, "gradFill") ||
            pp_is(c, PP_NS_A, "blipFill") || pp_is(c, PP_NS_A, "pattFill") || pp_is(c, PP_NS_A, "grpFill")) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
        }
    }
    xmlNodePtr fill = pp_new(tcpr, PP_NS_A, "solidFill");
    /* after lnL..lnBlToTr and cell3D, before headers / extLst */
    for (xmlNodePtr c = tcpr->children; c; c = c->next) {
        if (pp_is(c, PP_NS_A, "headers") || pp_is(c, PP_NS_A, "extLst")) {
            xmlUnlinkNode(fill);
            xmlAddPrevSibling(c, fill);
            break;
        }
    }
    xmlNodePtr clr = pp_new(fill, PP_NS_A, "srgbClr");
    char hex[8];
    snprintf(hex, sizeof hex, "%02X%02X%02X", (int)json_integer_value(json_array_get(rgb, 0)),
             (int)json_integer_value(json_array_get(rgb, 1)), (int)json_integer_value(json_array_get(rgb, 2)));
    xmlSetProp(clr, (const xmlChar *)"val", (const xmlChar *)hex);
}

int pp_t_add_table(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    json_int_t rows = json_integer_value(json_object_get(args, "rows"));
    json_int_t cols = json_integer_value(json_object_get(args, "cols"));
    double left = json_number_value(json_object_get(args, "left"));
    double top = json_number_value(json_object_get(args, "top"));
    double width = json_number_value(json_object_get(args, "width"));
    double height = json_number_value(json_object_get(args, "height"));
    const char *bad = rows <= 0 ? "'rows': must be a positive integer"
                      : cols <= 0 ? "'cols': must be a positive integer"
                      : left < 0 ? "'left': must be non-negative"
                      : top < 0 ? "'top': must be non-negative"
                      : width <= 0 ? "'width': must be positive"
                      : height <= 0 ? "'height': must be positive" : NULL;
    static const char *const COLORS[] = {"header_bg_color", "body_bg_color", "border_color", NULL};
    for (int i = 0; !bad && COLORS[i]; i++) {
        json_t *c = json_object_get(args, COLORS[i]);
        if (!json_is_null(c) && !pp_valid_rgb(c)) {
            pp_errorf(res, "Parameter '%s': must be a valid RGB list [R, G, B] with values 0-255", COLORS[i]);
            return 0;
        }
    }
    if (bad) {
        pp_errorf(res, "Parameter %s", bad);
        return 0;
    }
    if (rows > 10000 || cols > 10000 || rows * cols > 100000)
        return mb_mcp_fail(res, "add_table: mcpbox caps tables at 100000 cells");
    json_t *data = json_object_get(args, "data");
    if (json_array_size(data)) {
        if ((json_int_t)json_array_size(data) != rows) {
            pp_errorf(res, "Data has %zu rows but table should have %lld rows", json_array_size(data),
                      (long long)rows);
            return 0;
        }
        for (size_t i = 0; i < json_array_size(data); i++) {
            json_t *row = json_array_get(data, i);
            if ((json_int_t)json_array_size(row) != cols) {
                pp_errorf(res, "Row %zu has %zu columns but table should have %lld columns", i,
                          json_array_size(row), (long long)cols);
                return 0;
            }
        }
    }
    xmlNodePtr tree = pp_sptree(pp_part_xml(p, slide));
    long long cx = pp_inches(width), cy = pp_inches(height);
    xmlNodePtr tbl = pp_table_new(p, slide, rows, cols, pp_inches(left), pp_inches(top), cx, cy);
    int header = json_is_true(json_object_get(args, "header_row"));
    json_t *hbg = json_object_get(args, "header_bg_color"), *bbg = json_object_get(args, "body_bg_color");
    json_int_t r = 0;
    for (xmlNodePtr tr = tbl->children; tr; tr = tr->next) {
        if (!pp_is(tr, PP_NS_A, "tr")) continue;
        json_int_t c = 0;
        for (xmlNodePtr tc = tr->children; tc; tc = tc->next) {
            if (!pp_is(tc, PP_NS_A, "tc")) continue;
            xmlNodePtr tx = pp_child(tc, PP_NS_A, "txBody");
            json_t *cell = json_array_get(json_array_get(data, (size_t)r), (size_t)c);
            if (json_array_size(data) && cell) {
                char *s = json_is_string(cell) ? mb_strdup(json_string_value(cell))
                                               : json_dumps(cell, JSON_ENCODE_ANY);
                pp_set_text(tx, s ? s : "");
                free(s);
            }
            int is_header = r == 0 && header;
            /* format_table_cell: the text (any truthy option) then the fill */
            json_t *fa = json_object();
            json_object_set(fa, "font_size", json_object_get(args, is_header ? "header_font_size"
                                                                             : "body_font_size"));
            if (truthy(json_object_get(fa, "font_size")) || is_header)
                pp_format_txbody(tx, fa, "font_size", is_header);
            json_decref(fa);
            json_t *bg = is_header ? hbg : bbg;
            if (json_array_size(bg)) pp_cell_fill(tc, bg);
            c++;
        }
        r++;
    }
    pp_touch(p, slide);
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(tree, &sh);
    free(sh);
    json_t *d = json_object();
    char *msg = mb_asprintf("Added %lldx%lld table to slide %lld", (long long)rows, (long long)cols,
                            (long long)json_integer_value(json_object_get(args, "slide_index")));
    json_object_set_new(d, "message", json_string(msg));
    free(msg);
    json_object_set_new(d, "shape_index", json_integer((json_int_t)n - 1));
    json_object_set_new(d, "rows", json_integer(rows));
    json_object_set_new(d, "cols", json_integer(cols));
    pp_answer(res, d);
    return 0;
}

xmlNodePtr pp_table_new(pp_pres *p, const char *slide, long long rows, long long cols, long long x, long long y,
                        long long cx, long long cy)
{
    xmlNodePtr tree = pp_sptree(pp_part_xml(p, slide));
    long id = pp_next_shape_id(tree);
    xmlNodePtr gf = pp_new(tree, PP_NS_P, "graphicFrame");
    xmlNodePtr nv = pp_new(gf, PP_NS_P, "nvGraphicFramePr");
    pp_set_id_name(pp_new(nv, PP_NS_P, "cNvPr"), id, "Table");
    xmlNodePtr locks = pp_new(pp_new(nv, PP_NS_P, "cNvGraphicFramePr"), PP_NS_A, "graphicFrameLocks");
    xmlSetProp(locks, (const xmlChar *)"noGrp", (const xmlChar *)"1");
    pp_new(nv, PP_NS_P, "nvPr");
    add_xfrm(gf, PP_NS_P, x, y, cx, cy);
    xmlNodePtr gd = pp_new(pp_new(gf, PP_NS_A, "graphic"), PP_NS_A, "graphicData");
    xmlSetProp(gd, (const xmlChar *)"uri", (const xmlChar *)"http://schemas.openxmlformats.org/drawingml/2006/table");
    xmlNodePtr tbl = pp_new(gd, PP_NS_A, "tbl");
    xmlNodePtr tblpr = pp_new(tbl, PP_NS_A, "tblPr");
    xmlSetProp(tblpr, (const xmlChar *)"firstRow", (const xmlChar *)"1");
    xmlSetProp(tblpr, (const xmlChar *)"bandRow", (const xmlChar *)"1");
    xmlNodeAddContent(pp_new(tblpr, PP_NS_A, "tableStyleId"),
                      (const xmlChar *)"{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}");
    xmlNodePtr grid = pp_new(tbl, PP_NS_A, "tblGrid");
    for (long long c = 0; c < cols; c++) pp_set_ll(pp_new(grid, PP_NS_A, "gridCol"), "w", cx / cols);
    for (long long r = 0; r < rows; r++) {
        xmlNodePtr tr = pp_new(tbl, PP_NS_A, "tr");
        pp_set_ll(tr, "h", cy / rows);
        for (long long c = 0; c < cols; c++) {
            xmlNodePtr tc = pp_new(tr, PP_NS_A, "tc");
            xmlNodePtr tx = pp_new(tc, PP_NS_A, "txBody");
            pp_new(tx, PP_NS_A, "bodyPr");
            pp_new(tx, PP_NS_A, "lstStyle");
            pp_new(tx, PP_NS_A, "p");
            pp_new(tc, PP_NS_A, "tcPr");
        }
    }
    pp_touch(p, slide);
    return tbl;
}
