/*
 * tools_layout.c - the template tools of tools/template_tools.py that change
 * presentations: apply_slide_template, create_slide_from_template,
 * create_presentation_from_templates, auto_generate_presentation and
 * optimize_slide_text, on layout.c's engine, with upstream's texts.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servers/common/pyfmt.h"
#include "servers/powerpoint/pp.h"

static json_t *jstr(const char *s)
{
    size_t n;
    char *ok = mb_utf8_repair(s, strlen(s), &n);
    json_t *v = json_stringn(ok, n);
    free(ok);
    return v;
}

/* The presentation a template tool works on (presentation_id if not None,
 * else current); NULL after upstream's error. */
static pp_pres *target(mb_mcp_call *call, json_t *args, mb_mcp_result *res, const char **id)
{
    return pp_target(call, args, res, id);
}

int pp_t_apply_slide_template(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    json_t *tid = json_object_get(args, "template_id");
    json_t *r = pp_apply_template(p, slide, tid, json_string_value(json_object_get(args, "color_scheme")),
                                  json_object_get(args, "content_mapping"), json_object_get(args, "image_paths"));
    long long si = (long long)json_integer_value(json_object_get(args, "slide_index"));
    if (json_is_true(json_object_get(r, "success"))) {
        char *msg = mb_asprintf("Applied template '%s' to slide %lld", json_string_value(tid), si);
        json_t *d = json_object();
        json_object_set_new(d, "message", jstr(msg));
        json_object_set_new(d, "slide_index", json_integer(si));
        json_object_set_new(d, "template_applied", r);
        free(msg);
        pp_answer(res, d);
    } else {
        pp_errorf(res, "Failed to apply template: %s", json_string_value(json_object_get(r, "error")));
        json_decref(r);
    }
    return 0;
}

int pp_t_create_slide_from_template(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = target(call, args, res, NULL);
    if (!p) return 0;
    json_int_t li = json_integer_value(json_object_get(args, "layout_index"));
    if (li < 0 || (size_t)li >= p->nlayouts) {
        pp_errorf(res, "Invalid layout index: %lld. Available layouts: 0-%lld", (long long)li,
                  (long long)p->nlayouts - 1);
        return 0;
    }
    const char *slide = NULL;
    char *why = NULL;
    if (pp_add_slide(p, (size_t)li, &slide, &why)) {
        pp_errorf(res, "Failed to create slide from template: %s", why);
        free(why);
        return 0;
    }
    long long si = (long long)p->nslides - 1;
    json_t *tid = json_object_get(args, "template_id");
    json_t *r = pp_apply_template(p, slide, tid, json_string_value(json_object_get(args, "color_scheme")),
                                  json_object_get(args, "content_mapping"), json_object_get(args, "image_paths"));
    if (json_is_true(json_object_get(r, "success"))) {
        char *msg = mb_asprintf("Created slide %lld using template '%s'", si, json_string_value(tid));
        json_t *d = json_object();
        json_object_set_new(d, "message", jstr(msg));
        json_object_set_new(d, "slide_index", json_integer(si));
        json_object_set_new(d, "template_applied", r);
        free(msg);
        pp_answer(res, d);
    } else {
        pp_errorf(res, "Failed to apply template to new slide: %s",
                  json_string_value(json_object_get(r, "error")));
        json_decref(r);
    }
    return 0;
}

/* create_presentation_from_template_sequence */
static json_t *from_sequence(pp_pres *p, json_t *seq, const char *scheme)
{
    json_t *made = json_array();
    int ok = 1;
    size_t i;
    json_t *cfg;
    json_array_foreach(seq, i, cfg) {
        json_t *tid = json_object_get(cfg, "template_id");
        json_t *content = json_object_get(cfg, "content"), *images = json_object_get(cfg, "images");
        int given = tid && !json_is_null(tid) && !json_is_false(tid) &&
                    !(json_is_string(tid) && !json_string_length(tid)) &&
                    !(json_is_integer(tid) && !json_integer_value(tid)) &&
                    !(json_is_array(tid) && !json_array_size(tid)) &&
                    !(json_is_object(tid) && !json_object_size(tid));
        if (!given) {
            json_array_append_new(made, json_pack("{s:I,s:b,s:s}", "slide_index", (json_int_t)i, "success", 0,
                                                  "error", "No template_id specified"));
            continue;
        }
        const char *slide = NULL;
        char *why = NULL;
        if (p->nlayouts < 2 || pp_add_slide(p, 1, &slide, &why)) {
            char *msg = mb_asprintf("Failed to create slide %zu: %s", i, why ? why : "list index out of range");
            json_array_append_new(made, json_pack("{s:I,s:b,s:s}", "slide_index", (json_int_t)i, "success", 0,
                                                  "error", msg));
            free(msg), free(why);
            ok = 0;
            continue;
        }
        json_t *r = pp_apply_template(p, slide, tid, scheme, content, images);
        json_object_set_new(r, "slide_index", json_integer((json_int_t)i));
        if (!json_is_true(json_object_get(r, "success"))) ok = 0;
        json_array_append_new(made, r);
    }
    return json_pack("{s:b,s:o,s:I,s:s}", "success", ok, "slides_created", made, "total_slides",
                     (json_int_t)json_array_size(seq), "color_scheme", scheme);
}

int pp_t_create_presentation_from_templates(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *id = NULL;
    pp_pres *p = target(call, args, res, &id);
    if (!p) return 0;
    json_t *seq = json_object_get(args, "template_sequence");
    if (!json_array_size(seq)) {
        pp_errorf(res, "Template sequence cannot be empty");
        return 0;
    }
    if (json_array_size(seq) > 1000)
        return mb_mcp_fail(res, "create_presentation_from_templates: more than 1000 slides in one call "
                                "(mcpbox's limit)");
    const char *title = json_string_value(json_object_get(args, "presentation_title"));
    if (title && *title) pp_core_set_title(p, title);
    const char *scheme = json_string_value(json_object_get(args, "color_scheme"));
    json_t *r = from_sequence(p, seq, scheme);
    json_t *d = json_object();
    if (json_is_true(json_object_get(r, "success"))) {
        char *msg = mb_asprintf("Created presentation with %lld slides",
                                (long long)json_integer_value(json_object_get(r, "total_slides")));
        json_object_set_new(d, "message", jstr(msg));
        free(msg);
    } else {
        json_object_set_new(d, "warning", json_string("Presentation created with some errors"));
    }
    json_object_set_new(d, "presentation_id", jstr(id));
    json_object_set_new(d, "creation_result", r);
    json_object_set_new(d, "total_slides", json_integer((json_int_t)p->nslides));
    pp_answer(res, d);
    return 0;
}

/* ------------------------------------------------- auto_generate_presentation */

typedef struct step {
    const char *tid;
    json_t *content;
} step;

static void add_step(step *v, size_t *n, const char *tid, json_t *content)
{
    v[(*n)++] = (step){tid, content};
}

static json_t *kv(const char *k1, char *v1, const char *k2, char *v2, const char *k3, char *v3)
{
    json_t *o = json_object();
    if (k1) json_object_set_new(o, k1, jstr(v1));
    if (k2) json_object_set_new(o, k2, jstr(v2));
    if (k3) json_object_set_new(o, k3, jstr(v3));
    free(v1), free(v2), free(v3);
    return o;
}

#define S(x) mb_strdup(x)
#define F(...) mb_asprintf(__VA_ARGS__)

int pp_t_auto_generate_presentation(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *id = NULL;
    pp_pres *p = target(call, args, res, &id);
    if (!p) return 0;
    json_int_t count = json_integer_value(json_object_get(args, "slide_count"));
    if (count < 3 || count > 20) {
        pp_errorf(res, "Slide count must be between 3 and 20");
        return 0;
    }
    const char *topic = json_string_value(json_object_get(args, "topic"));
    const char *type = json_string_value(json_object_get(args, "presentation_type"));
    const char *scheme = json_string_value(json_object_get(args, "color_scheme"));
    int charts = json_is_true(json_object_get(args, "include_charts"));
    int images = json_is_true(json_object_get(args, "include_images"));
    step base[8];
    size_t nb = 0;
    if (!strcmp(type, "business")) {
        add_step(base, &nb, "title_slide", kv("title", F("%s", topic), "subtitle", S("Executive Presentation"),
                                              "author", S("Business Team")));
        add_step(base, &nb, "agenda_slide",
                 kv("agenda_items", S("1. Executive Summary\n\n2. Current Situation\n\n3. Analysis & Insights\n\n"
                                      "4. Recommendations\n\n5. Next Steps"), NULL, NULL, NULL, NULL));
        add_step(base, &nb, "key_metrics_dashboard", kv("title", S("Key Performance Indicators"), NULL, NULL, NULL, NULL));
        add_step(base, &nb, "text_with_image",
                 kv("title", S("Current Situation"), "content",
                    F("Overview of %s:\n\xe2\x80\xa2 Current status\n\xe2\x80\xa2 Key challenges\n\xe2\x80\xa2 Market position",
                      topic), NULL, NULL));
        add_step(base, &nb, "two_column_text",
                 kv("title", S("Analysis"), "content_left",
                    S("Strengths:\n\xe2\x80\xa2 Advantage 1\n\xe2\x80\xa2 Advantage 2\n\xe2\x80\xa2 Advantage 3"),
                    "content_right",
                    S("Opportunities:\n\xe2\x80\xa2 Opportunity 1\n\xe2\x80\xa2 Opportunity 2\n\xe2\x80\xa2 Opportunity 3")));
        if (charts) add_step(base, &nb, "chart_comparison", kv("title", S("Performance Comparison"), NULL, NULL, NULL, NULL));
        add_step(base, &nb, "thank_you_slide",
                 kv("contact", S("Thank you for your attention\nQuestions & Discussion"), NULL, NULL, NULL, NULL));
    } else if (!strcmp(type, "academic")) {
        add_step(base, &nb, "title_slide", kv("title", F("Research on %s", topic), "subtitle", S("Academic Study"),
                                              "author", S("Research Team")));
        add_step(base, &nb, "agenda_slide",
                 kv("agenda_items", S("1. Introduction\n\n2. Literature Review\n\n3. Methodology\n\n4. Results\n\n"
                                      "5. Conclusions"), NULL, NULL, NULL, NULL));
        add_step(base, &nb, "text_with_image",
                 kv("title", S("Introduction"), "content",
                    F("Research focus on %s:\n\xe2\x80\xa2 Background\n\xe2\x80\xa2 Problem statement\n\xe2\x80\xa2 Research "
                      "questions", topic), NULL, NULL));
        add_step(base, &nb, "two_column_text",
                 kv("title", S("Methodology"), "content_left",
                    S("Approach:\n\xe2\x80\xa2 Method 1\n\xe2\x80\xa2 Method 2\n\xe2\x80\xa2 Method 3"), "content_right",
                    S("Data Sources:\n\xe2\x80\xa2 Source 1\n\xe2\x80\xa2 Source 2\n\xe2\x80\xa2 Source 3")));
        add_step(base, &nb, "data_table_slide", kv("title", S("Results Summary"), NULL, NULL, NULL, NULL));
        if (charts) add_step(base, &nb, "chart_comparison", kv("title", S("Data Analysis"), NULL, NULL, NULL, NULL));
        add_step(base, &nb, "thank_you_slide",
                 kv("contact", S("Questions & Discussion\nContact: research@university.edu"), NULL, NULL, NULL, NULL));
    } else {
        add_step(base, &nb, "title_slide", kv("title", F("Creative Vision: %s", topic), "subtitle",
                                              S("Innovative Concepts"), "author", S("Creative Team")));
        add_step(base, &nb, "full_image_slide", kv("overlay_title", F("Exploring %s", topic), "overlay_subtitle",
                                                   S("Creative possibilities"), NULL, NULL));
        add_step(base, &nb, "three_column_layout", kv("title", S("Creative Concepts"), NULL, NULL, NULL, NULL));
        add_step(base, &nb, "quote_testimonial",
                 kv("quote_text", F("Innovation in %s requires thinking beyond conventional boundaries", topic),
                    "attribution", S("\xe2\x80\x94 Creative Director"), NULL, NULL));
        add_step(base, &nb, "process_flow", kv("title", S("Creative Process"), NULL, NULL, NULL, NULL));
        if (charts) add_step(base, &nb, "key_metrics_dashboard", kv("title", S("Impact Metrics"), NULL, NULL, NULL, NULL));
        add_step(base, &nb, "thank_you_slide",
                 kv("contact", S("Let's create something amazing together\ncreative@studio.com"), NULL, NULL, NULL, NULL));
    }
    /* templates_to_use = base[:count]; extra content slides go before the last */
    step use[24];
    size_t nu = 0;
    for (size_t i = 0; i < nb; i++) {
        if ((json_int_t)i < count) use[nu++] = base[i];
        else json_decref(base[i].content);
    }
    while ((json_int_t)nu < count) {
        step extra;
        if (images)
            extra = (step){"text_with_image",
                           kv("title", F("%s - Additional Topic", topic), "content",
                              S("\xe2\x80\xa2 Key point\n\xe2\x80\xa2 Supporting detail\n\xe2\x80\xa2 Additional insight"),
                              NULL, NULL)};
        else
            extra = (step){"two_column_text",
                           kv("title", F("%s - Analysis", topic), "content_left",
                              S("Key Points:\n\xe2\x80\xa2 Point 1\n\xe2\x80\xa2 Point 2"), "content_right",
                              S("Details:\n\xe2\x80\xa2 Detail 1\n\xe2\x80\xa2 Detail 2"))};
        memmove(&use[nu], &use[nu - 1], sizeof use[0]);
        use[nu - 1] = extra;
        nu++;
    }
    json_t *seq = json_array(), *used = json_array();
    for (size_t i = 0; i < nu; i++) {
        json_array_append_new(seq, json_pack("{s:s,s:o}", "template_id", use[i].tid, "content", use[i].content));
        json_array_append_new(used, json_string(use[i].tid));
    }
    json_t *r = from_sequence(p, seq, scheme);
    json_decref(seq);
    char *msg = mb_asprintf("Auto-generated %lld-slide presentation on '%s'", (long long)count, topic);
    json_t *d = json_object();
    json_object_set_new(d, "message", jstr(msg));
    free(msg);
    json_object_set_new(d, "topic", jstr(topic));
    json_object_set_new(d, "presentation_type", jstr(type));
    json_object_set_new(d, "color_scheme", jstr(scheme));
    json_object_set_new(d, "slide_count", json_integer(count));
    json_object_set_new(d, "generation_result", r);
    json_object_set_new(d, "templates_used", used);
    pp_answer(res, d);
    return 0;
}

/* ------------------------------------------------------ optimize_slide_text */

/* Python's str() of a float with one decimal (1.2, 1.3, 1.4). */
static json_t *spacing_msg(double v)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "Line spacing set to ");
    mb_py_float_str(&b, v);
    json_t *s = json_string(b.data);
    mb_buf_free(&b);
    return s;
}

/* The sz of the first run of the first paragraph (points), or 0. */
static double first_run_size(xmlNodePtr tx)
{
    xmlNodePtr p = pp_child(tx, PP_NS_A, "p");
    xmlNodePtr r = p ? pp_child(p, PP_NS_A, "r") : NULL;
    xmlNodePtr rpr = r ? pp_child(r, PP_NS_A, "rPr") : NULL;
    xmlChar *sz = rpr ? xmlGetProp(rpr, (const xmlChar *)"sz") : NULL;
    double v = sz ? strtol((const char *)sz, NULL, 10) / 100.0 : 0;
    xmlFree(sz);
    return v;
}

int pp_t_optimize_slide_text(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    int resize = json_is_true(json_object_get(args, "auto_resize"));
    int wrap = json_is_true(json_object_get(args, "auto_wrap"));
    int spacing = json_is_true(json_object_get(args, "optimize_spacing"));
    long long mn = (long long)json_integer_value(json_object_get(args, "min_font_size"));
    long long mx = (long long)json_integer_value(json_object_get(args, "max_font_size"));
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    json_t *applied = json_array();
    char *fail = NULL;
    for (size_t i = 0; i < n && !fail; i++) {
        if (!pp_is(sh[i], PP_NS_P, "sp")) continue; /* only autoshapes have text_frame */
        xmlNodePtr tx = pp_sp_txbody(sh[i]);
        mb_buf t = {0};
        pp_txbody_text(tx, &t);
        if (!t.len) {
            mb_buf_free(&t);
            continue;
        }
        long long w, h;
        if (!pp_shape_geom(p, slide, sh[i], 2, &w) || !pp_shape_geom(p, slide, sh[i], 3, &h)) {
            fail = mb_strdup("'NoneType' object has no attribute 'inches'");
            mb_buf_free(&t);
            break;
        }
        double cw = (double)w / PP_EMU_PER_INCH, ch = (double)h / PP_EMU_PER_INCH;
        json_t *ops = json_array();
        if (resize) {
            long long size = pp_optimal_font_size(t.data, cw, ch, 8, 36);
            if (size > mx) size = mx;
            if (size < mn) size = mn;
            json_t *fa = json_pack("{s:I}", "font_size", (json_int_t)size);
            xmlNodePtr bp = pp_child(tx, PP_NS_A, "bodyPr");
            xmlChar *wr = bp ? xmlGetProp(bp, (const xmlChar *)"wrap") : NULL;
            pp_format_txbody(tx, fa, "font_size", 0);
            if (bp) {
                if (wr) xmlSetProp(bp, (const xmlChar *)"wrap", wr);
                else xmlUnsetProp(bp, (const xmlChar *)"wrap");
            }
            xmlFree(wr);
            json_decref(fa);
            char *m = mb_asprintf("Font resized to %lldpt", size);
            json_array_append_new(ops, json_string(m));
            free(m);
        }
        if (wrap) {
            double fs = first_run_size(tx);
            char *wrapped = pp_wrap_text(t.data, cw, fs > 0 ? fs : 14);
            if (strcmp(wrapped, t.data)) {
                pp_set_text(tx, wrapped);
                json_array_append_new(ops, json_string("Text wrapped automatically"));
            }
            free(wrapped);
        }
        if (spacing) {
            size_t len = pp_py_len(t.data);
            double ls = len > 300 ? 1.4 : len > 150 ? 1.3 : 1.2;
            pp_line_spacing(tx, ls);
            json_array_append_new(ops, spacing_msg(ls));
        }
        mb_buf_free(&t);
        if (json_array_size(ops))
            json_array_append_new(applied, json_pack("{s:I,s:o}", "shape_index", (json_int_t)i, "optimizations", ops));
        else json_decref(ops);
    }
    free(sh);
    pp_touch(p, slide);
    if (fail) {
        pp_errorf(res, "Failed to optimize slide text: %s", fail);
        free(fail);
        json_decref(applied);
        return 0;
    }
    long long si = (long long)json_integer_value(json_object_get(args, "slide_index"));
    char *msg = mb_asprintf("Optimized %zu text elements on slide %lld", json_array_size(applied), si);
    char *range = mb_asprintf("%lld-%lldpt", mn, mx);
    json_t *d = json_object();
    json_object_set_new(d, "message", json_string(msg));
    json_object_set_new(d, "slide_index", json_integer(si));
    json_object_set_new(d, "optimizations_applied", applied);
    json_object_set_new(d, "settings", json_pack("{s:b,s:b,s:b,s:s}", "auto_resize", resize, "auto_wrap", wrap,
                                                 "optimize_spacing", spacing, "font_size_range", range));
    free(msg), free(range);
    pp_answer(res, d);
    return 0;
}
