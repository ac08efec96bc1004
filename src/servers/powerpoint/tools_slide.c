/*
 * tools_slide.c - slides and their text (tools/content_tools.py with
 * utils/content_utils.py): add_slide, get_slide_info, the two text
 * extraction tools with upstream's traversal (title first and again as a
 * placeholder, text boxes only in the combined text, tables row by row, group
 * members not visited), populate_placeholder and add_bullet_points.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "servers/powerpoint/pp.h"

static json_t *jstrn(const char *s, size_t n)
{
    size_t m;
    char *ok = mb_utf8_repair(s, n, &m);
    json_t *j = json_stringn(ok, m);
    free(ok);
    return j;
}

static json_t *jstr(const char *s)
{
    return jstrn(s, strlen(s));
}

/* slide.shapes.title: the first placeholder whose idx is 0. */
static xmlNodePtr title_shape(xmlNodePtr *sh, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        xmlNodePtr ph = pp_ph(sh[i]);
        if (ph && pp_ph_idx(ph) == 0) return sh[i];
    }
    return NULL;
}

/* The stripped TextFrame.text of an sp (adding the empty txBody python-pptx
 * adds when it reads one), as a new string. */
static char *sp_text(pp_pres *p, const char *slide, xmlNodePtr sp)
{
    xmlNodePtr tx = pp_child(sp, PP_NS_P, "txBody");
    if (!tx) {
        tx = pp_sp_txbody(sp);
        pp_touch(p, slide);
    }
    mb_buf b = {0};
    pp_txbody_text(tx, &b);
    size_t st, len;
    pp_py_strip(b.data, b.len, &st, &len);
    char *out = mb_strndup(b.data + st, len);
    mb_buf_free(&b);
    return out;
}

/* extract_slide_text_content(slide): the result dict. */
static json_t *slide_text(pp_pres *p, const char *slide)
{
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    json_t *tc = json_object(), *phs = json_array(), *tables = json_array();
    json_object_set_new(tc, "slide_title", json_string(""));
    json_object_set_new(tc, "placeholders", phs);
    json_object_set_new(tc, "text_shapes", json_array());
    json_object_set_new(tc, "table_text", tables);
    json_object_set_new(tc, "all_text_combined", json_string(""));
    mb_buf all = {0};
    size_t nall = 0;
#define ADD_ALL(s)                                                                                 \
    do {                                                                                           \
        if (nall++) mb_buf_putc(&all, '\n');                                                       \
        mb_buf_puts(&all, s);                                                                      \
    } while (0)
    xmlNodePtr title = title_shape(sh, n);
    if (title && pp_is(title, PP_NS_P, "sp")) {
        char *t = sp_text(p, slide, title);
        if (*t) {
            json_object_set_new(tc, "slide_title", jstr(t));
            ADD_ALL(t);
        }
        free(t);
    }
    const char *failure = NULL;
    for (size_t i = 0; i < n && !failure; i++) {
        const char *stype = pp_shape_type_str(sh[i]);
        if (!stype) {
            failure = pp_is(sh[i], PP_NS_P, "sp") ? "Shape instance of unrecognized shape type"
                                                  : "BaseShape does not implement `.shape_type`";
            break;
        }
        if (pp_is(sh[i], PP_NS_P, "sp")) {
            char *t = sp_text(p, slide, sh[i]);
            xmlNodePtr ph = pp_ph(sh[i]);
            if (*t) {
                ADD_ALL(t);
                if (ph) { /* non-placeholders raise ValueError here and are skipped */
                    json_t *o = json_object();
                    json_object_set_new(o, "shape_index", json_integer((json_int_t)i));
                    json_object_set_new(o, "shape_name", jstr(pp_shape_name(sh[i])));
                    json_object_set_new(o, "shape_type", json_string(stype));
                    json_object_set_new(o, "text", jstr(t));
                    json_object_set_new(o, "placeholder_type", json_string(pp_ph_type_str(pp_ph_type(ph))));
                    json_object_set_new(o, "placeholder_idx", json_integer(pp_ph_idx(ph)));
                    json_array_append_new(phs, o);
                }
            }
            free(t);
            continue;
        }
        xmlNodePtr tbl = pp_table(sh[i]);
        if (!tbl) continue;
        json_t *rows = json_array();
        size_t r = 0;
        for (xmlNodePtr tr = tbl->children; tr; tr = tr->next) {
            if (!pp_is(tr, PP_NS_A, "tr")) continue;
            json_t *cells = json_array();
            for (xmlNodePtr tcell = tr->children; tcell; tcell = tcell->next) {
                if (!pp_is(tcell, PP_NS_A, "tc")) continue;
                mb_buf b = {0};
                pp_txbody_text(pp_txbody(tcell), &b);
                size_t st, len;
                pp_py_strip(b.data ? b.data : "", b.len, &st, &len);
                if (len) {
                    json_array_append_new(cells, jstrn(b.data + st, len));
                    char *c = mb_strndup(b.data + st, len);
                    ADD_ALL(c);
                    free(c);
                }
                mb_buf_free(&b);
            }
            if (json_array_size(cells)) {
                json_t *o = json_object();
                json_object_set_new(o, "row", json_integer((json_int_t)r));
                json_object_set_new(o, "cells", cells);
                json_array_append_new(rows, o);
            } else {
                json_decref(cells);
            }
            r++;
        }
        if (json_array_size(rows)) {
            json_t *o = json_object();
            json_object_set_new(o, "shape_index", json_integer((json_int_t)i));
            json_object_set_new(o, "shape_name", jstr(pp_shape_name(sh[i])));
            json_object_set_new(o, "table_content", rows);
            json_array_append_new(tables, o);
        } else {
            json_decref(rows);
        }
    }
#undef ADD_ALL
    free(sh);
    json_t *out = json_object();
    if (failure) {
        json_decref(tc);
        json_object_set_new(out, "success", json_false());
        char *m = mb_asprintf("Failed to extract text content: %s", failure);
        json_object_set_new(out, "error", json_string(m));
        free(m);
        json_object_set_new(out, "text_content", json_null());
        mb_buf_free(&all);
        return out;
    }
    json_object_set_new(tc, "all_text_combined", jstrn(all.data ? all.data : "", all.len));
    mb_buf_free(&all);
    json_object_set_new(out, "success", json_true());
    json_object_set_new(out, "text_content", tc);
    json_object_set_new(out, "total_text_shapes", json_integer((json_int_t)json_array_size(phs)));
    json_object_set_new(out, "has_title",
                        json_boolean(json_string_length(json_object_get(tc, "slide_title")) > 0));
    json_object_set_new(out, "has_tables", json_boolean(json_array_size(tables) > 0));
    return out;
}

int pp_t_extract_slide_text(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    json_t *d = slide_text(p, slide);
    json_object_set(d, "slide_index", json_object_get(args, "slide_index"));
    pp_answer(res, d);
    return 0;
}

int pp_t_extract_presentation_text(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *id;
    pp_pres *p = pp_target(call, args, res, &id);
    if (!p) return 0;
    int info = json_is_true(json_object_get(args, "include_slide_info"));
    json_t *slides = json_array();
    size_t shapes = 0, with_tables = 0, with_titles = 0, with_text = 0;
    mb_buf all = {0};
    size_t nall = 0;
    for (size_t i = 0; i < p->nslides; i++) {
        json_t *r = slide_text(p, p->slides[i]);
        json_t *o = json_object();
        json_object_set_new(o, "slide_index", json_integer((json_int_t)i));
        if (json_is_true(json_object_get(r, "success"))) {
            json_t *tc = json_object_get(r, "text_content");
            json_object_set(o, "text_content", tc);
            if (info) {
                char *layout = pp_slide_layout(p, p->slides[i]);
                json_object_set_new(o, "layout_name", jstr(layout ? pp_part_name(p, layout) : ""));
                free(layout);
                json_object_set(o, "total_text_shapes", json_object_get(r, "total_text_shapes"));
                json_object_set(o, "has_title", json_object_get(r, "has_title"));
                json_object_set(o, "has_tables", json_object_get(r, "has_tables"));
            }
            shapes += (size_t)json_integer_value(json_object_get(r, "total_text_shapes"));
            with_tables += json_is_true(json_object_get(r, "has_tables"));
            with_titles += json_is_true(json_object_get(r, "has_title"));
            with_text++;
            json_t *comb = json_object_get(tc, "all_text_combined");
            if (json_string_length(comb)) {
                if (nall++) mb_buf_putc(&all, '\n');
                mb_buf_printf(&all, "=== SLIDE %zu ===\n", i + 1);
                mb_buf_append(&all, json_string_value(comb), json_string_length(comb));
                mb_buf_puts(&all, "\n");
            }
        } else {
            json_object_set(o, "error", json_object_get(r, "error"));
            json_object_set_new(o, "text_content", json_null());
        }
        json_decref(r);
        json_array_append_new(slides, o);
    }
    json_t *d = json_object();
    json_object_set_new(d, "success", json_true());
    json_object_set_new(d, "presentation_id", jstr(id));
    json_object_set_new(d, "total_slides", json_integer((json_int_t)p->nslides));
    json_object_set_new(d, "slides_with_text", json_integer((json_int_t)with_text));
    json_object_set_new(d, "total_text_shapes", json_integer((json_int_t)shapes));
    json_object_set_new(d, "slides_with_titles", json_integer((json_int_t)with_titles));
    json_object_set_new(d, "slides_with_tables", json_integer((json_int_t)with_tables));
    json_object_set_new(d, "slides_text", slides);
    json_object_set_new(d, "all_presentation_text_combined", jstrn(all.data ? all.data : "", all.len));
    mb_buf_free(&all);
    pp_answer(res, d);
    return 0;
}

int pp_t_get_slide_info(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    json_t *phs = json_array(), *shapes = json_array();
    for (size_t i = 0; i < n; i++) {
        xmlNodePtr ph = pp_ph(sh[i]);
        if (!ph) continue;
        json_t *o = json_object();
        json_object_set_new(o, "idx", json_integer(pp_ph_idx(ph)));
        json_object_set_new(o, "type", json_string(pp_ph_type_str(pp_ph_type(ph))));
        json_object_set_new(o, "name", jstr(pp_shape_name(sh[i])));
        json_array_append_new(phs, o);
    }
    for (size_t i = 0; i < n; i++) {
        const char *stype = pp_shape_type_str(sh[i]);
        if (!stype) {
            json_decref(phs);
            json_decref(shapes);
            free(sh);
            pp_errorf(res, "Failed to get slide info: Failed to get slide info: %s",
                      pp_is(sh[i], PP_NS_P, "sp") ? "Shape instance of unrecognized shape type"
                                                  : "BaseShape does not implement `.shape_type`");
            return 0;
        }
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer((json_int_t)i));
        json_object_set_new(o, "name", jstr(pp_shape_name(sh[i])));
        json_object_set_new(o, "shape_type", json_string(stype));
        static const char *const K[] = {"left", "top", "width", "height"};
        for (int k = 0; k < 4; k++) {
            long long v;
            json_object_set_new(o, K[k], pp_shape_geom(p, slide, sh[i], k, &v) ? json_integer(v)
                                                                                 : json_null());
        }
        json_array_append_new(shapes, o);
    }
    free(sh);
    char *layout = pp_slide_layout(p, slide);
    json_t *d = json_object();
    json_object_set(d, "slide_index", json_object_get(args, "slide_index"));
    json_object_set_new(d, "layout_name", jstr(layout ? pp_part_name(p, layout) : ""));
    free(layout);
    json_object_set_new(d, "placeholder_count", json_integer((json_int_t)json_array_size(phs)));
    json_object_set_new(d, "placeholders", phs);
    json_object_set_new(d, "shape_count", json_integer((json_int_t)n));
    json_object_set_new(d, "shapes", shapes);
    pp_answer(res, d);
    return 0;
}

/* slide.placeholders[idx]: the shape, or NULL. */
static xmlNodePtr placeholder(pp_pres *p, const char *slide, long idx)
{
    xmlNodePtr *sh = NULL, hit = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    for (size_t i = 0; i < n && !hit; i++) {
        xmlNodePtr ph = pp_ph(sh[i]);
        if (ph && pp_ph_idx(ph) == idx) hit = sh[i];
    }
    free(sh);
    return hit;
}

int pp_t_add_slide(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    if (!p) return 0;
    json_int_t li = json_integer_value(json_object_get(args, "layout_index"));
    if (li < 0 || (size_t)li >= p->nlayouts) {
        pp_errorf(res, "Invalid layout index: %lld. Available layouts: 0-%lld", (long long)li,
                  (long long)p->nlayouts - 1);
        return 0;
    }
    const char *bg = json_string_value(json_object_get(args, "background_type"));
    json_t *colors = json_object_get(args, "background_colors");
    const char *slide = NULL;
    char *why = NULL;
    if (pp_add_slide(p, (size_t)li, &slide, &why)) {
        pp_errorf(res, "Failed to add slide: %s", why);
        free(why);
        return 0;
    }
    const char *title = json_string_value(json_object_get(args, "title"));
    if (title && *title) {
        xmlNodePtr *sh = NULL;
        size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
        xmlNodePtr t = title_shape(sh, n);
        free(sh);
        if (t) {
            pp_set_text(pp_sp_txbody(t), title);
            pp_touch(p, slide);
        }
    }
    /* set_slide_gradient_background / create_professional_gradient_background */
    const char *dir = json_string_value(json_object_get(args, "gradient_direction"));
    if (bg && !strcmp(bg, "gradient") && json_array_size(colors) >= 2) {
        json_t *a = json_array_get(colors, 0), *b = json_array_get(colors, 1);
        if (json_array_size(a) >= 3 && json_array_size(b) >= 3) { /* else Python's IndexError, swallowed */
            int s0[3], s1[3];
            for (size_t k = 0; k < 3; k++) {
                s0[k] = (int)json_integer_value(json_array_get(a, k));
                s1[k] = (int)json_integer_value(json_array_get(b, k));
            }
            pp_gradient_background(p, slide, s0, s1, dir);
        }
    } else if (bg && !strcmp(bg, "professional_gradient")) {
        pp_professional_gradient(p, slide, json_string_value(json_object_get(args, "color_scheme")), "subtle", dir);
    }
    json_t *d = json_object();
    char *msg = mb_asprintf("Added slide %zu with layout %lld", p->nslides - 1, (long long)li);
    json_object_set_new(d, "message", json_string(msg));
    free(msg);
    json_object_set_new(d, "slide_index", json_integer((json_int_t)p->nslides - 1));
    json_object_set_new(d, "layout_name", jstr(pp_part_name(p, p->layouts[li])));
    pp_answer(res, d);
    return 0;
}

int pp_t_populate_placeholder(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    long idx = (long)json_integer_value(json_object_get(args, "placeholder_idx"));
    xmlNodePtr ph = placeholder(p, slide, idx);
    if (!ph) {
        pp_errorf(res, "Failed to populate placeholder: 'no placeholder on this slide with idx == %ld'",
                  idx);
        return 0;
    }
    if (!pp_is(ph, PP_NS_P, "sp")) {
        pp_errorf(res, "Failed to populate placeholder: property 'text' of '%s' object has no setter",
                  pp_is(ph, PP_NS_P, "pic") ? "PlaceholderPicture" : "PlaceholderGraphicFrame");
        return 0;
    }
    pp_set_text(pp_sp_txbody(ph), json_string_value(json_object_get(args, "text")));
    pp_touch(p, slide);
    json_t *d = json_object();
    char *msg = mb_asprintf("Populated placeholder %ld on slide %lld", idx,
                            (long long)json_integer_value(json_object_get(args, "slide_index")));
    json_object_set_new(d, "message", json_string(msg));
    free(msg);
    pp_answer(res, d);
    return 0;
}

int pp_t_add_bullet_points(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    long idx = (long)json_integer_value(json_object_get(args, "placeholder_idx"));
    xmlNodePtr ph = placeholder(p, slide, idx);
    if (!ph) {
        pp_errorf(res, "Failed to add bullet points: 'no placeholder on this slide with idx == %ld'", idx);
        return 0;
    }
    if (!pp_is(ph, PP_NS_P, "sp")) {
        pp_errorf(res, "Failed to add bullet points: '%s' object has no attribute 'text_frame'",
                  pp_is(ph, PP_NS_P, "pic") ? "PlaceholderPicture" : "PlaceholderGraphicFrame");
        return 0;
    }
    xmlNodePtr tx = pp_sp_txbody(ph);
    if (!pp_text_clear(tx)) {
        pp_errorf(res, "Failed to add bullet points: list index out of range");
        return 0;
    }
    json_t *pts = json_object_get(args, "bullet_points");
    for (size_t i = 0; i < json_array_size(pts); i++) {
        xmlNodePtr para = pp_new(tx, PP_NS_A, "p");
        pp_new(para, PP_NS_A, "pPr"); /* p.level = 0 adds an empty a:pPr */
        const char *s = json_string_value(json_array_get(pts, i));
        /* p.text = point: \n and \v both become a:br within the paragraph */
        const char *q = s;
        for (;;) {
            size_t len = strcspn(q, "\n\v");
            if (len) {
                xmlNodePtr r = pp_new(para, PP_NS_A, "r");
                xmlNodePtr t = pp_new(r, PP_NS_A, "t");
                xmlNodeAddContentLen(t, (const xmlChar *)q, (int)len);
            }
            if (!q[len]) break;
            pp_new(para, PP_NS_A, "br");
            q += len + 1;
        }
    }
    pp_touch(p, slide);
    json_t *d = json_object();
    char *msg = mb_asprintf("Added %zu bullet points to placeholder %ld on slide %lld", json_array_size(pts),
                            idx, (long long)json_integer_value(json_object_get(args, "slide_index")));
    json_object_set_new(d, "message", json_string(msg));
    free(msg);
    pp_answer(res, d);
    return 0;
}
