/*
 * tools_design.c - tools/professional_tools.py: apply_picture_effects and
 * the presentation operations of apply_professional_design
 * (professional_slide, theme, enhance; get_schemes is in
 * tools_templates.c).
 *
 * What upstream writes is little: design_utils' picture effects are stubs
 * that report success, except rotation (shape.rotation = degrees, a:xfrm
 * rot); a professional slide is a slide of layout 0/1/6 with its title and
 * "• item" lines; theme and enhance change nothing but report. These do the
 * same, and write nothing more.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servers/powerpoint/pp.h"

static json_t *jstr(const char *s)
{
    size_t n;
    char *ok = mb_utf8_repair(s, strlen(s), &n);
    json_t *v = json_stringn(ok, n);
    free(ok);
    return v;
}

/* shape.rotation = degrees: a:xfrm@rot = int(round(d * 60000)) % 21600000,
 * removed for 0.0 (the attribute's default); graphic frames have no
 * get_or_add_xfrm and fail inside upstream's try. */
static void set_rotation(xmlNodePtr shape, double deg)
{
    xmlNodePtr pr = pp_is(shape, PP_NS_P, "grpSp") ? pp_child(shape, PP_NS_P, "grpSpPr") : pp_child(shape, PP_NS_P, "spPr");
    if (!pr) return;
    xmlNodePtr xf = pp_child(pr, PP_NS_A, "xfrm");
    if (!xf) {
        xf = pp_new(pr, PP_NS_A, "xfrm");
        xmlUnlinkNode(xf);
        if (pr->children) xmlAddPrevSibling(pr->children, xf);
        else xmlAddChild(pr, xf);
    }
    if (deg == 0.0) {
        xmlUnsetProp(xf, (const xmlChar *)"rot");
        return;
    }
    double x = deg * 60000;
    double r = nearbyint(x); /* round-half-even, as Python's round() */
    long long v = (long long)fmod(r, 21600000.0);
    if (v < 0) v += 21600000;
    pp_set_ll(xf, "rot", v);
}

static const char *const EFFECTS[] = {"shadow", "reflection", "glow", "soft_edges", "rotation",
                                      "transparency", "bevel", "filter", NULL};

int pp_t_apply_picture_effects(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    json_int_t si = json_integer_value(json_object_get(args, "shape_index"));
    if (si < 0 || (size_t)si >= n) {
        free(sh);
        pp_errorf(res, "Invalid shape index: %lld. Available shapes: 0-%lld", (long long)si, (long long)n - 1);
        return 0;
    }
    xmlNodePtr shape = sh[si];
    free(sh);
    json_t *applied = json_array(), *warnings = json_array();
    const char *k;
    json_t *params;
    json_object_foreach(json_object_get(args, "effects"), k, params) {
        int known = 0;
        for (int i = 0; EFFECTS[i]; i++) known |= !strcmp(k, EFFECTS[i]);
        if (!known) {
            char *m = mb_asprintf("Unknown effect type: %s", k);
            json_array_append_new(warnings, jstr(m));
            free(m);
            continue;
        }
        if (!strcmp(k, "rotation")) {
            json_t *rot = json_object_get(params, "rotation");
            if (!rot) set_rotation(shape, 0.0);
            else if (json_is_number(rot)) set_rotation(shape, json_number_value(rot));
            else if (json_is_boolean(rot)) set_rotation(shape, json_is_true(rot) ? 1.0 : 0.0);
            /* anything else fails inside apply_picture_rotation's own try */
            pp_touch(p, slide);
        }
        json_array_append_new(applied, json_string(k));
    }
    char *msg = mb_asprintf("Applied %zu effects to shape %lld on slide %lld", json_array_size(applied),
                            (long long)si, (long long)json_integer_value(json_object_get(args, "slide_index")));
    json_t *d = json_object();
    json_object_set_new(d, "message", json_string(msg));
    free(msg);
    json_object_set_new(d, "applied_effects", applied);
    if (json_array_size(warnings)) json_object_set_new(d, "warnings", warnings);
    else json_decref(warnings);
    pp_answer(res, d);
    return 0;
}

/* slide.shapes.title: the first placeholder with idx 0 */
static xmlNodePtr title_of(xmlNodePtr *sh, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        xmlNodePtr ph = pp_ph(sh[i]);
        if (ph && pp_ph_idx(ph) == 0) return sh[i];
    }
    return NULL;
}

/* add_professional_slide (its errors swallowed: the tool reports anyway) */
static void professional_slide(pp_pres *p, const char *type, const char *title, json_t *content)
{
    size_t layout = !strcmp(type, "title") ? 0 : (!strcmp(type, "content") || !strcmp(type, "blank")) ? 6 : 1;
    if (layout >= p->nlayouts) return; /* IndexError */
    const char *slide = NULL;
    char *why = NULL;
    if (pp_add_slide(p, layout, &slide, &why)) {
        free(why);
        return;
    }
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    xmlNodePtr t = title_of(sh, n);
    if (title && *title && t) pp_set_text(pp_sp_txbody(t), title);
    size_t nph = 0;
    xmlNodePtr body = NULL;
    for (size_t i = 0; i < n; i++) {
        xmlNodePtr ph = pp_ph(sh[i]);
        if (!ph) continue;
        nph++;
        if (pp_ph_idx(ph) == 1 && !body) body = sh[i];
    }
    if (json_array_size(content) && nph > 1 && body) { /* placeholders[1]: by idx */
        mb_buf b = {0};
        for (size_t i = 0; i < json_array_size(content); i++)
            mb_buf_printf(&b, "%s\xe2\x80\xa2 %s", i ? "\n" : "", json_string_value(json_array_get(content, i)));
        pp_set_text(pp_sp_txbody(body), b.data);
        mb_buf_free(&b);
    }
    free(sh);
    pp_touch(p, slide);
}

int pp_professional_op(mb_mcp_call *call, json_t *args, mb_mcp_result *res, const char *op)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    if (!p) return 0;
    json_t *si = json_object_get(args, "slide_index");
    const char *scheme = json_string_value(json_object_get(args, "color_scheme"));
    json_t *d = json_object();
    if (!strcmp(op, "professional_slide")) {
        if (json_is_integer(si) && (json_integer_value(si) < 0 || (size_t)json_integer_value(si) >= p->nslides)) {
            json_decref(d);
            pp_errorf(res, "Invalid slide index: %lld. Available slides: 0-%lld", (long long)json_integer_value(si),
                      (long long)p->nslides - 1);
            return 0;
        }
        const char *type = json_string_value(json_object_get(args, "slide_type"));
        professional_slide(p, type, json_string_value(json_object_get(args, "title")),
                           json_object_get(args, "content"));
        char *msg = mb_asprintf("Added professional %s slide", type);
        json_object_set_new(d, "message", jstr(msg));
        free(msg);
        json_object_set_new(d, "slide_index", json_integer((json_int_t)p->nslides - 1));
        json_object_set_new(d, "color_scheme", jstr(scheme));
        json_object_set_new(d, "slide_type", jstr(type));
    } else if (!strcmp(op, "theme")) {
        char *msg = mb_asprintf("Applied %s theme to presentation", scheme);
        json_object_set_new(d, "message", jstr(msg));
        free(msg);
        json_object_set_new(d, "color_scheme", jstr(scheme));
        json_object_set(d, "applied_to_existing", json_object_get(args, "apply_to_existing"));
    } else if (!strcmp(op, "enhance")) {
        if (!json_is_integer(si)) {
            json_decref(d);
            pp_errorf(res, "slide_index is required for enhance operation");
            return 0;
        }
        json_int_t i = json_integer_value(si);
        if (i < 0 || (size_t)i >= p->nslides) {
            json_decref(d);
            pp_errorf(res, "Invalid slide index: %lld. Available slides: 0-%lld", (long long)i,
                      (long long)p->nslides - 1);
            return 0;
        }
        const char *slide = p->slides[i];
        xmlNodePtr *sh = NULL;
        size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
        json_t *done = json_array();
        if (json_is_true(json_object_get(args, "enhance_title")) && title_of(sh, n))
            json_array_append_new(done, json_string("title"));
        if (json_is_true(json_object_get(args, "enhance_shapes"))) {
            for (size_t k = 0; k < n; k++) /* hasattr(shape, 'text_frame') adds a txBody */
                if (pp_is(sh[k], PP_NS_P, "sp") && !pp_child(sh[k], PP_NS_P, "txBody")) {
                    pp_sp_txbody(sh[k]);
                    pp_touch(p, slide);
                }
            json_array_append_new(done, json_string("shapes"));
        }
        free(sh);
        char *msg = mb_asprintf("Enhanced slide %lld with %s scheme", (long long)i, scheme);
        json_object_set_new(d, "message", jstr(msg));
        free(msg);
        json_object_set_new(d, "slide_index", json_integer(i));
        json_object_set_new(d, "color_scheme", jstr(scheme));
        json_object_set_new(d, "enhancements_applied", done);
    } else {
        json_decref(d);
        pp_errorf(res, "Invalid operation: %s. Must be 'slide', 'theme', 'enhance', or 'get_schemes'", op);
        return 0;
    }
    pp_answer(res, d);
    return 0;
}
