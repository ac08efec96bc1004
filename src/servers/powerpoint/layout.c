/*
 * layout.c - upstream's template engine (utils/template_utils.py
 * EnhancedTemplateManager, TextSizeCalculator, design_utils gradients) over
 * slide_layout_templates.json (templates_data.c): what apply_slide_template,
 * create_slide_from_template, create_presentation_from_templates,
 * auto_generate_presentation and optimize_slide_text do to a slide.
 *
 * A template's elements become python-pptx shapes: text boxes sized and
 * wrapped by upstream's character-width estimate, styled from the
 * "modern_sans" typography and the colour scheme; auto shapes through
 * add_shape_direct's name map (an unknown name falls back to a text box
 * "Shape: x", as upstream's except clause does); pictures or "Image
 * Placeholder" rectangles; tables; charts. A "professional_gradient"
 * background is upstream's full-slide gradient picture. What upstream only
 * names (glows, gradient fills, shadows on shapes, hover effects...) writes
 * nothing here either.
 *
 * Python version note: upstream sets text_frame.auto_size = True; on Python
 * 3.12+ (a uv-installed tool) True is the value of MSO_AUTO_SIZE.SHAPE_TO_FIT_TEXT
 * and the text box gets spAutoFit, which is what this writes.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servers/common/pyfmt.h"
#include "servers/common/pyschema.h"
#include "servers/powerpoint/pp.h"

extern const char PP_TEMPLATES_JSON[];
extern const char PP_COLOR_SCHEMES_JSON[];

json_t *pp_templates(void) { return json_loads(PP_TEMPLATES_JSON, JSON_DECODE_ANY, NULL); }

/* --------------------------------------------------- TextSizeCalculator */

static unsigned next_cp(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    unsigned c = p[0], n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    unsigned cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (unsigned i = 1; i < n && p[i]; i++) cp = (cp << 6) | (p[i] & 0x3F);
    for (unsigned i = 0; i < n && **s; i++) (*s)++;
    return cp;
}

/* str.isspace() as str.split() uses it */
static int py_ws(unsigned c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

static double char_w(unsigned c)
{
    if (c == 'i' || c == 'l' || c == 't' || c == 'j') return 0.6;
    if (c == 'm' || c == 'w' || c == 'M' || c == 'W') return 1.3;
    if (c == ' ') return 0.5;
    return 1.0;
}

/* the running sum estimate_text_width makes, continued over s */
static double width_sum(double acc, const char *s, size_t n)
{
    const char *e = s + n;
    while (s < e && *s) acc += char_w(next_cp(&s));
    return acc;
}

size_t pp_py_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

int pp_optimal_font_size(const char *text, double cw, double ch, int min_size, int max_size)
{
    double w = width_sum(0, text, strlen(text));
    long lines = 1;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    double cwp = cw * 72, chp = ch * 72;
    for (int fs = max_size; fs > min_size - 1; fs--) {
        double ew = *text ? w * fs * 0.6 : 0;
        double eh = (double)(lines * fs) * 1.2 * 1.3;
        if (ew <= cwp * 0.9 && eh <= chp * 0.9) return fs;
    }
    return min_size;
}

char *pp_wrap_text(const char *text, double max_width, double font_size)
{
    if (!*text) return mb_strdup(text);
    double max_pts = max_width * 72;
    mb_buf out = {0}, line = {0};
    double acc = 0; /* width_sum of line */
    int have_line = 0, have_out = 0;
    const char *s = text;
    while (*s) {
        const char *q = s;
        while (*q && py_ws(next_cp(&q))) s = q;
        if (!*s) break;
        const char *w = s, *we = s;
        q = s;
        while (*q) {
            const char *before = q;
            if (py_ws(next_cp(&q))) {
                we = before;
                break;
            }
            we = q;
        }
        s = we;
        size_t wn = (size_t)(we - w);
        double test = have_line ? width_sum(acc + 0.5, w, wn) : width_sum(0, w, wn);
        if (test * font_size * 0.6 <= max_pts) {
            if (have_line) mb_buf_putc(&line, ' ');
            mb_buf_append(&line, w, wn);
            acc = test;
            have_line = 1;
        } else if (have_line) {
            if (have_out) mb_buf_putc(&out, '\n');
            mb_buf_append(&out, line.data, line.len);
            have_out = 1;
            mb_buf_reset(&line);
            mb_buf_append(&line, w, wn);
            acc = width_sum(0, w, wn);
        } else { /* a single word too long: its own line */
            if (have_out) mb_buf_putc(&out, '\n');
            mb_buf_append(&out, w, wn);
            have_out = 1;
        }
    }
    if (have_line) {
        if (have_out) mb_buf_putc(&out, '\n');
        mb_buf_append(&out, line.data, line.len);
    }
    mb_buf_free(&line);
    return out.data ? out.data : mb_strdup("");
}

/* ------------------------------------------------------------ colours */

/* get_color_from_scheme (templates' schemes): RGB list, borrowed. */
static json_t *scheme_color(json_t *data, const char *scheme, const char *role)
{
    json_t *schemes = json_object_get(data, "color_schemes");
    json_t *s = json_object_get(schemes, scheme);
    if (!s) s = json_object_get(schemes, "modern_blue");
    json_t *c = json_object_get(s, role);
    if (!c) c = json_object_get(s, "primary");
    static json_t *def;
    if (!c) {
        if (!def) def = json_pack("[iii]", 0, 120, 215);
        c = def;
    }
    return c;
}

/* design_utils.get_professional_color */
static void pro_color(const char *scheme, const char *type, int out[3])
{
    json_t *all = json_loads(PP_COLOR_SCHEMES_JSON, 0, NULL);
    json_t *s = json_object_get(all, scheme);
    if (!s) s = json_object_get(all, "modern_blue");
    json_t *c = json_object_get(s, type);
    if (!c) c = json_object_get(s, "primary");
    for (int i = 0; i < 3; i++) out[i] = (int)json_integer_value(json_array_get(c, (size_t)i));
    json_decref(all);
}

void pp_gradient_background(pp_pres *p, const char *slide, const int start[3], const int end[3],
                            const char *direction)
{
    char *png = NULL;
    size_t n = 0;
    if (pp_gradient_png(start, end, direction, &png, &n)) return;
    json_t *pos = json_pack("{s:i,s:i,s:i,s:f}", "left", 0, "top", 0, "width", 10, "height", 7.5);
    char *why = NULL;
    if (pp_picture_add(p, slide, (const unsigned char *)png, n, "gradient.png", pos, &why)) free(why);
    json_decref(pos);
    free(png);
}

void pp_professional_gradient(pp_pres *p, const char *slide, const char *scheme, const char *style,
                              const char *direction)
{
    int a[3], b[3];
    if (!strcmp(style, "subtle")) pro_color(scheme, "light", a), pro_color(scheme, "secondary", b);
    else if (!strcmp(style, "bold")) pro_color(scheme, "primary", a), pro_color(scheme, "accent1", b);
    else pro_color(scheme, "accent1", a), pro_color(scheme, "accent2", b);
    pp_gradient_background(p, slide, a, b, direction);
}

/* ----------------------------------------------------------- elements */

static const char *sget(json_t *o, const char *k, const char *def)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : def;
}

static double nget(json_t *o, const char *k, double def)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : def;
}

static int truthy(json_t *v)
{
    if (!v || json_is_null(v) || json_is_false(v)) return 0;
    if (json_is_integer(v)) return json_integer_value(v) != 0;
    if (json_is_real(v)) return json_real_value(v) != 0;
    if (json_is_string(v)) return json_string_length(v) > 0;
    if (json_is_array(v)) return json_array_size(v) > 0;
    if (json_is_object(v)) return json_object_size(v) > 0;
    return 1;
}

/* get_dynamic_font_size */
static int dynamic_size(json_t *data, json_t *el, const char *content)
{
    if (!content || !*content) content = sget(el, "placeholder_text", "");
    if (!*content) return 14;
    json_t *pos = json_object_get(el, "position"), *st = json_object_get(el, "styling");
    double cw = nget(pos, "width", 4.0), ch = nget(pos, "height", 1.0);
    const char *ft = sget(st, "font_type", "body");
    json_t *base = json_object_get(json_object_get(json_object_get(data, "auto_sizing_rules"), "text_measurement"),
                                   "base_font_sizes");
    json_t *b = json_object_get(base, ft);
    int mn = 10, mx = 18, def = 14;
    if (b) {
        mn = (int)json_integer_value(json_object_get(b, "min"));
        mx = (int)json_integer_value(json_object_get(b, "max"));
        def = (int)json_integer_value(json_object_get(b, "default"));
    }
    const char *fs = json_string_value(json_object_get(st, "font_size"));
    if (fs && !strcmp(fs, "dynamic")) return pp_optimal_font_size(content, cw, ch, mn, mx);
    return def;
}

void pp_line_spacing(xmlNodePtr txbody, double spacing)
{
    for (xmlNodePtr p = txbody->children; p; p = p->next) {
        if (!pp_is(p, PP_NS_A, "p")) continue;
        xmlNodePtr ppr = pp_child(p, PP_NS_A, "pPr");
        if (!ppr) {
            ppr = pp_new(p, PP_NS_A, "pPr");
            xmlUnlinkNode(ppr);
            if (p->children) xmlAddPrevSibling(p->children, ppr);
            else xmlAddChild(p, ppr);
        }
        xmlNodePtr old = pp_child(ppr, PP_NS_A, "lnSpc");
        if (old) {
            xmlUnlinkNode(old);
            xmlFreeNode(old);
        }
        xmlNodePtr ln = pp_new(ppr, PP_NS_A, "lnSpc");
        xmlUnlinkNode(ln);
        if (ppr->children) xmlAddPrevSibling(ppr->children, ln);
        else xmlAddChild(ppr, ln);
        pp_set_ll(pp_new(ln, PP_NS_A, "spcPct"), "val", llround(spacing * 100000.0));
    }
}

static void bodypr_set(xmlNodePtr txbody, const char *attr, const char *v)
{
    xmlNodePtr bp = pp_child(txbody, PP_NS_A, "bodyPr");
    if (bp) xmlSetProp(bp, (const xmlChar *)attr, (const xmlChar *)v);
}

/* text_frame.auto_size = True on Python 3.12+: spAutoFit */
static void autofit_shape(xmlNodePtr txbody)
{
    xmlNodePtr bp = pp_child(txbody, PP_NS_A, "bodyPr");
    if (!bp) return;
    for (xmlNodePtr c = bp->children, n; c; c = n) {
        n = c->next;
        if (pp_is(c, PP_NS_A, "noAutofit") || pp_is(c, PP_NS_A, "normAutofit") || pp_is(c, PP_NS_A, "spAutoFit")) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
        }
    }
    xmlNodePtr a = pp_new(bp, PP_NS_A, "spAutoFit");
    /* after prstTxWarp, before scene3d/sp3d/flatTx/extLst */
    for (xmlNodePtr c = bp->children; c; c = c->next)
        if (c != a && (pp_is(c, PP_NS_A, "scene3d") || pp_is(c, PP_NS_A, "sp3d") || pp_is(c, PP_NS_A, "flatTx") ||
                       pp_is(c, PP_NS_A, "extLst"))) {
            xmlUnlinkNode(a);
            xmlAddPrevSibling(c, a);
            break;
        }
}

static void runs_bold(xmlNodePtr txbody)
{
    json_t *fa = json_pack("{s:b}", "bold", 1);
    pp_format_txbody(txbody, fa, "font_size", 0);
    json_decref(fa);
}

/* apply_enhanced_text_styling */
static void style_text(json_t *data, xmlNodePtr tx, json_t *el, const char *scheme, int font_size)
{
    json_t *st = json_object_get(el, "styling");
    json_t *typo = json_object_get(json_object_get(data, "typography_styles"), "modern_sans");
    const char *ft = sget(st, "font_type", "body");
    json_t *fc = json_object_get(typo, ft);
    json_t *own = NULL;
    if (!fc) fc = own = json_pack("{s:s,s:s}", "name", "Segoe UI", "weight", "normal");
    json_t *color = NULL;
    if (json_object_get(st, "color_role"))
        color = scheme_color(data, scheme, sget(st, "color_role", ""));
    else if (json_object_get(st, "color"))
        color = json_object_get(st, "color");
    const char *va = json_string_value(json_object_get(st, "vertical_alignment"));
    if (va && !strcmp(va, "top")) bodypr_set(tx, "anchor", "t");
    else if (va && !strcmp(va, "middle")) bodypr_set(tx, "anchor", "ctr");
    else if (va && !strcmp(va, "bottom")) bodypr_set(tx, "anchor", "b");
    json_t *ls = json_object_get(st, "line_spacing");
    double spacing = 1.2;
    if (json_is_number(ls)) spacing = json_number_value(ls);
    else if (json_is_string(ls) && !strcmp(json_string_value(ls), "dynamic")) {
        mb_buf t = {0};
        pp_txbody_text(tx, &t);
        size_t n = t.data ? pp_py_len(t.data) : 0;
        mb_buf_free(&t);
        spacing = n > 300 ? 1.4 : n > 150 ? 1.3 : 1.2;
    }
    const char *weight = sget(fc, "weight", "normal");
    json_t *fa = json_object();
    const char *al = json_string_value(json_object_get(st, "alignment"));
    if (al) json_object_set_new(fa, "alignment", json_string(al));
    json_object_set_new(fa, "font_size", json_integer(font_size));
    json_object_set_new(fa, "font_name", json_string(sget(fc, "name", "Segoe UI")));
    json_t *b = json_object_get(st, "bold"), *i = json_object_get(st, "italic"), *u = json_object_get(st, "underline");
    json_object_set_new(fa, "bold", b ? json_incref(b)
                                      : json_boolean(!strcmp(weight, "bold") || !strcmp(weight, "semibold")));
    json_object_set_new(fa, "italic", i ? json_incref(i) : json_boolean(!strcmp(sget(fc, "style", ""), "italic")));
    json_object_set_new(fa, "underline", u ? json_incref(u) : json_false());
    if (color) json_object_set(fa, "color", color);
    xmlChar *wrap = NULL;
    xmlNodePtr bp = pp_child(tx, PP_NS_A, "bodyPr");
    if (bp) wrap = xmlGetProp(bp, (const xmlChar *)"wrap");
    pp_format_txbody(tx, fa, "font_size", 0);
    if (bp) { /* styling leaves word_wrap as the element set it */
        if (wrap) xmlSetProp(bp, (const xmlChar *)"wrap", wrap);
        else xmlUnsetProp(bp, (const xmlChar *)"wrap");
    }
    xmlFree(wrap);
    pp_line_spacing(tx, spacing);
    json_decref(fa);
    json_decref(own);
    json_t *fx = json_object_get(st, "text_effects");
    json_t *effects = json_object_get(data, "text_effects");
    size_t k;
    json_t *e;
    json_array_foreach(fx, k, e) {
        json_t *cfg = json_is_string(e) ? json_object_get(effects, json_string_value(e)) : NULL;
        const char *type = sget(cfg, "type", "");
        if (!strcmp(type, "shadow")) runs_bold(tx); /* _apply_text_shadow: bold as "depth" */
    }
}

/* create_enhanced_text_element; 0 or -1 with *why. */
static int text_element(pp_pres *p, const char *slide, json_t *data, json_t *el, const char *scheme,
                        json_t *custom, char **why)
{
    json_t *pos = json_object_get(el, "position");
    json_t *st = json_object_get(el, "styling");
    if (!json_is_object(pos)) {
        *why = mb_strdup("'position'");
        return -1;
    }
    if (custom && !json_is_string(custom) && truthy(custom)) { /* wrap or text_frame.text: str methods */
        *why = mb_asprintf("'%s' object has no attribute 'split'", mb_py_type_name(custom));
        return -1;
    }
    const char *content = truthy(custom) && json_is_string(custom) ? json_string_value(custom)
                                                                    : sget(el, "placeholder_text", "");
    char *text = NULL;
    if (truthy(json_object_get(st, "auto_wrap"))) {
        int fs = dynamic_size(data, el, content);
        text = pp_wrap_text(content, nget(pos, "width", 4.0), fs);
    } else {
        text = mb_strdup(content);
    }
    xmlNodePtr sp = pp_textbox_new(p, slide, pos);
    xmlNodePtr tx = pp_child(sp, PP_NS_P, "txBody");
    pp_set_text(tx, text);
    bodypr_set(tx, "wrap", "square");
    int fs = dynamic_size(data, el, text);
    free(text);
    style_text(data, tx, el, scheme, fs);
    if (truthy(json_object_get(st, "auto_fit"))) autofit_shape(tx);
    pp_touch(p, slide);
    return 0;
}

/* create_shape_element */
static void shape_element(pp_pres *p, const char *slide, json_t *data, json_t *el, const char *scheme)
{
    json_t *pos = json_object_get(el, "position");
    const char *type = sget(el, "shape_type", "rectangle");
    json_t *st = json_object_get(el, "styling");
    char *why = NULL;
    xmlNodePtr sp = pp_autoshape_new(p, slide, type, pos, &why);
    int failed = !sp;
    free(why);
    if (sp) {
        xmlNodePtr sppr = pp_child(sp, PP_NS_P, "spPr");
        json_t *fill = NULL;
        if (json_object_get(st, "fill_color_role")) fill = scheme_color(data, scheme, sget(st, "fill_color_role", ""));
        else if (json_object_get(st, "fill_color")) fill = json_object_get(st, "fill_color");
        if (fill && !pp_valid_rgb(fill)) failed = 1; /* RGBColor(*c) raises */
        else if (fill) pp_srgb(pp_new(sppr, PP_NS_A, "solidFill"), fill);
        if (!failed && json_object_get(st, "line_color_role")) {
            json_t *lc = scheme_color(data, scheme, sget(st, "line_color_role", ""));
            pp_srgb(pp_new(pp_new(sppr, PP_NS_A, "ln"), PP_NS_A, "solidFill"), lc);
        } else if (!failed && truthy(json_object_get(st, "no_border"))) {
            pp_new(pp_new(sppr, PP_NS_A, "ln"), PP_NS_A, "noFill");
        }
    }
    if (failed) { /* upstream's fallback */
        xmlNodePtr tb = pp_textbox_new(p, slide, pos);
        char *t = mb_asprintf("Shape: %s", type);
        pp_set_text(pp_child(tb, PP_NS_P, "txBody"), t);
        free(t);
    }
    pp_touch(p, slide);
}

#define MAX_IMAGE (64u << 20)

/* create_image_element */
static void image_element(pp_pres *p, const char *slide, json_t *el, const char *path)
{
    json_t *pos = json_object_get(el, "position");
    if (path && *path) {
        char *bytes = NULL;
        size_t n = 0;
        mb_err err = {0};
        if (!mb_read_file(path, MAX_IMAGE, &bytes, &n, &err)) {
            const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            char *why = NULL;
            int rc = pp_picture_add(p, slide, (const unsigned char *)bytes, n, base, pos, &why);
            free(why);
            free(bytes);
            if (!rc) return;
        }
    }
    char *why = NULL;
    xmlNodePtr sp = pp_autoshape_new(p, slide, "rectangle", pos, &why);
    free(why);
    if (sp) pp_set_text(pp_child(sp, PP_NS_P, "txBody"), sget(el, "placeholder_text", "Image Placeholder"));
    pp_touch(p, slide);
}

/* str() of a table datum */
static char *py_str_of(json_t *v)
{
    if (json_is_string(v)) return mb_strdup(json_string_value(v));
    mb_buf b = {0};
    if (json_is_real(v)) mb_py_float_str(&b, json_real_value(v));
    else mb_py_repr_json(&b, v);
    char *s = mb_strdup(b.data ? b.data : "");
    mb_buf_free(&b);
    return s;
}

/* create_table_element */
static void table_element(pp_pres *p, const char *slide, json_t *data, json_t *el, const char *scheme)
{
    json_t *pos = json_object_get(el, "position"), *cfg = json_object_get(el, "table_config");
    json_t *st = json_object_get(el, "styling");
    long long rows = json_object_get(cfg, "rows") ? json_integer_value(json_object_get(cfg, "rows")) : 3;
    long long cols = json_object_get(cfg, "cols") ? json_integer_value(json_object_get(cfg, "cols")) : 3;
    if (rows < 1 || cols < 1 || rows * cols > 100000) return;
    xmlNodePtr tbl = pp_table_new(p, slide, rows, cols, pp_inches(nget(pos, "left", 0)), pp_inches(nget(pos, "top", 0)),
                                  pp_inches(nget(pos, "width", 0)), pp_inches(nget(pos, "height", 0)));
    json_t *rowsdata = json_object_get(cfg, "data");
    json_t *hdr = json_object_get(cfg, "header_row");
    int header = hdr ? truthy(hdr) : 1;
    long long r = 0;
    for (xmlNodePtr tr = tbl->children; tr; tr = tr->next) {
        if (!pp_is(tr, PP_NS_A, "tr")) continue;
        long long c = 0;
        for (xmlNodePtr tc = tr->children; tc; tc = tc->next) {
            if (!pp_is(tc, PP_NS_A, "tc")) continue;
            xmlNodePtr tx = pp_child(tc, PP_NS_A, "txBody");
            json_t *v = json_array_get(json_array_get(rowsdata, (size_t)r), (size_t)c);
            if (v) {
                char *s = py_str_of(v);
                pp_set_text(tx, s);
                free(s);
            }
            if (r == 0 && header) {
                if (json_object_get(st, "header_bg_color_role"))
                    pp_cell_fill(tc, scheme_color(data, scheme, sget(st, "header_bg_color_role", "")));
                json_t *htc = json_object_get(st, "header_text_color");
                if (htc && pp_valid_rgb(htc)) {
                    json_t *fa = json_pack("{s:O,s:b}", "color", htc, "bold", 1);
                    xmlNodePtr bp = pp_child(tx, PP_NS_A, "bodyPr");
                    xmlChar *wrap = bp ? xmlGetProp(bp, (const xmlChar *)"wrap") : NULL;
                    pp_format_txbody(tx, fa, "font_size", 0);
                    if (bp && !wrap) xmlUnsetProp(bp, (const xmlChar *)"wrap");
                    xmlFree(wrap);
                    json_decref(fa);
                }
            } else if (json_object_get(st, "body_bg_color_role")) {
                pp_cell_fill(tc, scheme_color(data, scheme, sget(st, "body_bg_color_role", "")));
            }
            c++;
        }
        r++;
    }
    pp_touch(p, slide);
}

/* create_chart_element */
static void chart_element(pp_pres *p, const char *slide, json_t *el)
{
    json_t *pos = json_object_get(el, "position"), *cfg = json_object_get(el, "chart_config");
    const char *type = sget(cfg, "type", "column");
    json_t *cats = json_object_get(cfg, "categories");
    json_t *own_cats = NULL, *series = json_object_get(cfg, "series"), *own_series = NULL;
    if (!cats) cats = own_cats = json_pack("[sss]", "A", "B", "C");
    if (!series) series = own_series = json_pack("[{s:s,s:[iii]}]", "name", "Series 1", "values", 1, 2, 3);
    json_t *names = json_array(), *values = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(series, i, s) {
        json_array_append(names, json_object_get(s, "name"));
        json_array_append(values, json_object_get(s, "values"));
    }
    const char *title = json_string_value(json_object_get(cfg, "title"));
    /* format_chart(chart, title=...) only when there is a title */
    json_t *fmt = title && *title ? json_pack("{s:s,s:b}", "title", title, "has_legend", 1) : NULL;
    char *why = NULL;
    if (pp_chart_add(p, slide, type, pos, cats, names, values, fmt, &why)) {
        free(why);
        xmlNodePtr tb = pp_textbox_new(p, slide, pos);
        char *t = mb_asprintf("Chart: %s\n%s", type, title && *title ? title : "Chart Placeholder");
        pp_set_text(pp_child(tb, PP_NS_P, "txBody"), t);
        free(t);
    }
    json_decref(fmt);
    json_decref(names), json_decref(values), json_decref(own_cats), json_decref(own_series);
}

/* get_element_features */
static json_t *features(json_t *el)
{
    json_t *st = json_object_get(el, "styling"), *f = json_array();
    const char *fs = json_string_value(json_object_get(st, "font_size"));
    if (fs && !strcmp(fs, "dynamic")) json_array_append_new(f, json_string("Dynamic text sizing"));
    if (truthy(json_object_get(st, "auto_wrap"))) json_array_append_new(f, json_string("Automatic text wrapping"));
    if (truthy(json_object_get(st, "text_effects"))) json_array_append_new(f, json_string("Text visual effects"));
    if (truthy(json_object_get(st, "auto_fit"))) json_array_append_new(f, json_string("Auto-fit content"));
    if (json_object_get(st, "fill_gradient")) json_array_append_new(f, json_string("Gradient fills"));
    if (truthy(json_object_get(st, "shadow")) || truthy(json_object_get(st, "glow")))
        json_array_append_new(f, json_string("Advanced visual effects"));
    return f;
}

static size_t shape_count(pp_pres *p, const char *slide)
{
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    free(sh);
    return n;
}

json_t *pp_apply_template(pp_pres *p, const char *slide, json_t *tid, const char *scheme, json_t *content,
                          json_t *images)
{
    json_t *data = pp_templates();
    json_t *templates = json_object_get(data, "templates");
    if (json_is_object(tid) || json_is_array(tid)) {
        json_decref(data);
        char *msg = mb_asprintf("Failed to apply enhanced template: unhashable type: '%s'",
                                json_is_object(tid) ? "dict" : "list");
        json_t *r = json_pack("{s:b,s:s}", "success", 0, "error", msg);
        free(msg);
        return r;
    }
    char *id = json_is_string(tid) ? mb_strdup(json_string_value(tid)) : py_str_of(tid);
    json_t *t = json_is_string(tid) ? json_object_get(templates, id) : NULL;
    if (!t) {
        char *msg = mb_asprintf("Template '%s' not found", id);
        json_t *r = json_pack("{s:b,s:s}", "success", 0, "error", msg);
        free(msg), free(id);
        json_decref(data);
        return r;
    }
    json_t *bg = json_object_get(t, "background");
    if (truthy(bg) && !strcmp(sget(bg, "type", "solid"), "professional_gradient"))
        pp_professional_gradient(p, slide, scheme, sget(bg, "style", "subtle"), sget(bg, "direction", "diagonal"));
    json_t *made = json_array();
    size_t i;
    json_t *el;
    json_array_foreach(json_object_get(t, "elements"), i, el) {
        const char *type = sget(el, "type", NULL);
        json_t *jtype = json_object_get(el, "type");
        const char *role = sget(el, "role", "");
        char *why = NULL;
        int created = 1;
        if (!type) {
            created = 0;
        } else if (!strcmp(type, "text")) {
            json_t *custom = json_is_object(content) ? json_object_get(content, role) : NULL;
            if (text_element(p, slide, data, el, scheme, custom, &why)) created = -1;
        } else if (!strcmp(type, "shape")) {
            shape_element(p, slide, data, el, scheme);
        } else if (!strcmp(type, "image")) {
            image_element(p, slide, el, json_string_value(json_object_get(images, role)));
        } else if (!strcmp(type, "table")) {
            table_element(p, slide, data, el, scheme);
        } else if (!strcmp(type, "chart")) {
            chart_element(p, slide, el);
        } else {
            created = 0;
        }
        if (created < 0) {
            json_array_append_new(made, json_pack("{s:O,s:s,s:s}", "type", jtype, "role", role, "error", why));
            free(why);
        } else if (created) {
            json_array_append_new(made, json_pack("{s:O,s:s,s:I,s:o}", "type", jtype, "role", role, "index",
                                                  (json_int_t)shape_count(p, slide) - 1, "enhanced_features",
                                                  features(el)));
        }
    }
    json_t *name = json_object_get(t, "name");
    json_t *r = json_pack("{s:b,s:s,s:o,s:s,s:o,s:[ssss]}", "success", 1, "template_id", id, "template_name",
                          name ? json_incref(name) : json_string(id), "color_scheme", scheme, "elements_created", made,
                          "enhanced_features_applied", "Dynamic text sizing", "Automatic text wrapping",
                          "Visual effects", "Intelligent content adaptation");
    free(id);
    json_decref(data);
    return r;
}
