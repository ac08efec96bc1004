/*
 * tools_validate.c - manage_text "validate" (tools/content_tools.py on
 * utils/validation_utils.py validate_text_fit and validate_and_fix_slide):
 * upstream's character-count heuristic (0.6 x font size per character
 * against the shape width in points), its warnings, and, unless
 * validation_only, the slide-wide fix that sets every run of an overflowing
 * text shape to the suggested size.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "servers/common/pyfmt.h"
#include "servers/powerpoint/pp.h"

/* shape.text_frame.text of an sp (adding the txBody python-pptx adds), or
 * NULL for shapes without a text frame. Caller frees. */
static char *frame_text(xmlNodePtr shape)
{
    if (!pp_is(shape, PP_NS_P, "sp")) return NULL;
    mb_buf b = {0};
    pp_txbody_text(pp_sp_txbody(shape), &b);
    return b.data ? b.data : mb_strdup("");
}

static int py_blank(const char *s) /* not s.strip() */
{
    size_t start, len;
    pp_py_strip(s, strlen(s), &start, &len);
    return len == 0;
}

/* validate_text_fit(shape, text_content, font_size) */
static json_t *text_fit(pp_pres *p, const char *slide, xmlNodePtr shape, const char *given, long long fs)
{
    json_t *r = json_object();
    json_object_set_new(r, "fits", json_true());
    json_object_set_new(r, "estimated_overflow", json_false());
    json_object_set_new(r, "suggested_font_size", json_integer(fs));
    json_object_set_new(r, "suggested_dimensions", json_null());
    json_t *warn = json_array();
    json_object_set_new(r, "warnings", warn);
    json_object_set_new(r, "needs_optimization", json_false());
    char *own = given ? NULL : frame_text(shape);
    const char *text = given ? given : own;
    if (!text || !*text) {
        free(own);
        return r;
    }
    size_t n = pp_py_len(text);
    double avg = (double)fs * 0.6, est = (double)n * avg;
    long long w, h;
    if (!pp_shape_geom(p, slide, shape, 2, &w) || !pp_shape_geom(p, slide, shape, 3, &h)) {
        json_object_set_new(r, "fits", json_false());
        json_object_set_new(r, "error", json_string("unsupported operand type(s) for /: 'NoneType' and 'int'"));
        free(own);
        return r;
    }
    double wpt = (double)w / 12700, hpt = (double)h / 12700;
    if (est > wpt) {
        json_object_set_new(r, "fits", json_false());
        json_object_set_new(r, "estimated_overflow", json_true());
        json_object_set_new(r, "needs_optimization", json_true());
        long long sugg = (long long)((wpt / (double)n) * 0.8);
        if (sugg < 8) sugg = 8;
        json_object_set_new(r, "suggested_font_size", json_integer(sugg));
        json_object_set_new(r, "suggested_dimensions", json_pack("{s:f,s:f}", "width", est * 1.2, "height", hpt));
        char *m = mb_asprintf("Text may overflow. Consider font size %lld or increase width to %.1f points", sugg,
                              est * 1.2);
        json_array_append_new(warn, json_string(m));
        free(m);
    }
    size_t longest = 0;
    for (const char *line = text;;) {
        const char *nl = strchr(line, '\n');
        char *l = nl ? mb_strndup(line, (size_t)(nl - line)) : mb_strdup(line);
        size_t ln = pp_py_len(l);
        free(l);
        if (ln > longest) longest = ln;
        if (!nl) break;
        line = nl + 1;
    }
    if (longest > 100) {
        json_array_append_new(warn, json_string("Very long lines detected. Consider adding line breaks."));
        json_object_set_new(r, "needs_optimization", json_true());
    }
    free(own);
    return r;
}

/* the runs of a txBody get sz (font.size = pt * 12700) */
static void set_run_sizes(xmlNodePtr tx, long long pt)
{
    json_t *fa = json_pack("{s:I}", "font_size", (json_int_t)pt);
    xmlNodePtr bp = pp_child(tx, PP_NS_A, "bodyPr");
    xmlChar *wr = bp ? xmlGetProp(bp, (const xmlChar *)"wrap") : NULL;
    pp_format_txbody(tx, fa, "font_size", 0);
    if (bp) {
        if (wr) xmlSetProp(bp, (const xmlChar *)"wrap", wr);
        else xmlUnsetProp(bp, (const xmlChar *)"wrap");
    }
    xmlFree(wr);
    json_decref(fa);
}

/* validate_and_fix_slide(slide, auto_fix=True, min, max) */
static json_t *fix_slide(pp_pres *p, const char *slide, long long mn, long long mx)
{
    json_t *issues = json_array(), *fixes = json_array(), *warn = json_array();
    int passed = 1, optimized = 0;
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    for (size_t i = 0; i < n; i++) {
        char *t = frame_text(sh[i]);
        if (!t || py_blank(t)) {
            free(t);
            continue;
        }
        json_t *v = text_fit(p, slide, sh[i], NULL, 12);
        if (json_is_false(json_object_get(v, "fits")) || json_is_true(json_object_get(v, "needs_optimization"))) {
            char *m = mb_asprintf("Shape %zu: Text may not fit properly", i);
            json_array_append_new(issues, json_string(m));
            free(m);
            passed = 0;
            long long s = json_integer_value(json_object_get(v, "suggested_font_size"));
            if (s) {
                if (s > mx) s = mx;
                if (s < mn) s = mn;
                set_run_sizes(pp_sp_txbody(sh[i]), s);
                m = mb_asprintf("Shape %zu: Adjusted font size to %lldpt", i, s);
                json_array_append_new(fixes, json_string(m));
                free(m);
                optimized++;
            }
        }
        json_decref(v);
        if (pp_py_len(t) > 500) {
            char *m = mb_asprintf("Shape %zu: Contains very long text (>500 chars)", i);
            json_array_append_new(warn, json_string(m));
            free(m);
        }
        int empty = 0;
        xmlNodePtr tx = pp_sp_txbody(sh[i]);
        for (xmlNodePtr para = tx->children; para; para = para->next) {
            if (!pp_is(para, PP_NS_A, "p")) continue;
            mb_buf b = {0};
            /* paragraph.text: runs and fields, breaks as \v */
            for (xmlNodePtr c = para->children; c; c = c->next) {
                if (pp_is(c, PP_NS_A, "br")) mb_buf_putc(&b, '\v');
                else if (pp_is(c, PP_NS_A, "r") || pp_is(c, PP_NS_A, "fld")) {
                    xmlNodePtr tn = pp_child(c, PP_NS_A, "t");
                    xmlChar *s = tn ? xmlNodeGetContent(tn) : NULL;
                    if (s) mb_buf_puts(&b, (const char *)s);
                    xmlFree(s);
                }
            }
            if (!b.data || py_blank(b.data)) empty++;
            mb_buf_free(&b);
        }
        if (empty > 2) {
            char *m = mb_asprintf("Shape %zu: Contains %d empty paragraphs", i, empty);
            json_array_append_new(warn, json_string(m));
            free(m);
        }
        free(t);
    }
    free(sh);
    if (n > 20) json_array_append_new(warn, json_string("Slide contains many shapes (>20), may affect performance"));
    pp_touch(p, slide);
    json_t *r = json_pack("{s:b,s:o,s:o,s:o,s:I,s:I}", "validation_passed", passed, "issues_found", issues,
                          "fixes_applied", fixes, "warnings", warn, "shapes_processed", (json_int_t)n,
                          "text_shapes_optimized", (json_int_t)optimized);
    char *sum = passed ? mb_strdup("Slide validation passed successfully")
                       : mb_asprintf("Found %zu issues, applied %zu fixes", json_array_size(issues),
                                     json_array_size(fixes));
    json_object_set_new(r, "summary", json_string(sum));
    free(sum);
    return r;
}

int pp_text_validate(pp_pres *p, const char *slide, xmlNodePtr shape, json_t *args, mb_mcp_result *res)
{
    const char *text = json_string_value(json_object_get(args, "text"));
    json_t *fs = json_object_get(args, "font_size");
    long long size = json_is_integer(fs) && json_integer_value(fs) ? json_integer_value(fs) : 12;
    json_t *r = text_fit(p, slide, shape, text && *text ? text : NULL, size);
    pp_touch(p, slide);
    if (!json_is_true(json_object_get(args, "validation_only")) &&
        json_is_true(json_object_get(r, "needs_optimization"))) {
        json_t *fix = fix_slide(p, slide, (long long)json_integer_value(json_object_get(args, "min_font_size")),
                                (long long)json_integer_value(json_object_get(args, "max_font_size")));
        json_object_update(r, fix);
        json_decref(fix);
    }
    pp_answer(res, r);
    return 0;
}
