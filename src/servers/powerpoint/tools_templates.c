/*
 * tools_templates.c - the read-only template tools (tools/template_tools.py):
 * list_slide_templates and get_template_info over upstream's
 * slide_layout_templates.json (templates_data.c).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "servers/powerpoint/pp.h"

extern const char PP_TEMPLATES_JSON[];
extern const char PP_USAGE_EXAMPLES_JSON[];

static json_t *load(const char *text)
{
    return json_loads(text, JSON_DECODE_ANY, NULL);
}

/* dict.get(key, default) */
static json_t *get_or(json_t *o, const char *key, json_t *def)
{
    json_t *v = json_object_get(o, key);
    if (v) {
        json_decref(def);
        return json_incref(v);
    }
    return def;
}

int pp_t_list_slide_templates(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    (void)args;
    json_t *data = load(PP_TEMPLATES_JSON), *ex = load(PP_USAGE_EXAMPLES_JSON);
    json_t *list = json_array();
    const char *id;
    json_t *t;
    json_object_foreach(json_object_get(data, "templates"), id, t) {
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(id));
        json_object_set_new(o, "name", get_or(t, "name", json_string(id)));
        json_object_set_new(o, "description", get_or(t, "description", json_string("")));
        json_object_set_new(o, "layout_type", get_or(t, "layout_type", json_string("content")));
        json_object_set_new(o, "element_count",
                            json_integer((json_int_t)json_array_size(json_object_get(t, "elements"))));
        json_array_append_new(list, o);
    }
    json_t *d = json_object();
    json_object_set_new(d, "available_templates", list);
    json_object_set_new(d, "total_templates", json_integer((json_int_t)json_array_size(list)));
    json_object_set_new(d, "usage_examples", ex);
    json_object_set_new(d, "message", json_string("Use apply_slide_template to apply templates to slides"));
    json_decref(data);
    pp_answer(res, d);
    return 0;
}

int pp_t_get_template_info(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    const char *tid = json_string_value(json_object_get(args, "template_id"));
    json_t *data = load(PP_TEMPLATES_JSON);
    json_t *templates = json_object_get(data, "templates");
    json_t *t = json_object_get(templates, tid);
    json_t *d = json_object();
    if (!t) {
        json_t *ids = json_array();
        const char *k;
        json_t *v;
        json_object_foreach(templates, k, v) json_array_append_new(ids, json_string(k));
        char *msg = mb_asprintf("Template '%s' not found", tid);
        size_t n;
        char *ok = mb_utf8_repair(msg, strlen(msg), &n);
        json_object_set_new(d, "error", json_stringn(ok, n));
        free(ok);
        free(msg);
        json_object_set_new(d, "available_templates", ids);
        json_decref(data);
        pp_answer(res, d);
        return 0;
    }
    json_t *els = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(t, "elements"), i, e) {
        json_t *o = json_object();
        json_object_set_new(o, "type", get_or(e, "type", json_null()));
        json_object_set_new(o, "role", get_or(e, "role", json_null()));
        json_object_set_new(o, "position", get_or(e, "position", json_null()));
        json_object_set_new(o, "placeholder_text", get_or(e, "placeholder_text", json_string("")));
        json_t *keys = json_array();
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(e, "styling"), k, v) json_array_append_new(keys, json_string(k));
        json_object_set_new(o, "styling_options", keys);
        json_array_append_new(els, o);
    }
    json_t *schemes = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(data, "color_schemes"), k, v) json_array_append_new(schemes, json_string(k));
    json_object_set_new(d, "template_id", json_string(tid));
    json_object_set_new(d, "name", get_or(t, "name", json_null()));
    json_object_set_new(d, "description", get_or(t, "description", json_null()));
    json_object_set_new(d, "layout_type", get_or(t, "layout_type", json_null()));
    json_object_set_new(d, "elements", els);
    json_object_set_new(d, "element_count", json_integer((json_int_t)json_array_size(els)));
    json_object_set_new(d, "has_background", json_boolean(json_object_get(t, "background") != NULL));
    json_object_set_new(d, "background_type", get_or(json_object_get(t, "background"), "type", json_null()));
    json_object_set_new(d, "color_schemes", schemes);
    char *tip = mb_asprintf("Use create_slide_from_template with template_id='%s' to create a slide with this layout",
                            tid);
    size_t n;
    char *ok = mb_utf8_repair(tip, strlen(tip), &n);
    json_object_set_new(d, "usage_tip", json_stringn(ok, n));
    free(ok);
    free(tip);
    json_decref(data);
    pp_answer(res, d);
    return 0;
}

extern const char PP_COLOR_SCHEMES_JSON[];

/* apply_professional_design: "get_schemes" (design_utils.get_color_schemes)
 * here, the operations on a presentation in tools_design.c. */
int pp_t_apply_professional_design(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *op = json_string_value(json_object_get(args, "operation"));
    if (!strcmp(op, "get_schemes")) {
        json_t *schemes = load(PP_COLOR_SCHEMES_JSON);
        json_t *names = json_array();
        const char *k;
        json_t *v;
        json_object_foreach(schemes, k, v) json_array_append_new(names, json_string(k));
        json_t *d = json_object();
        json_object_set_new(d, "available_schemes", names);
        json_object_set_new(d, "schemes", schemes);
        json_object_set_new(d, "color_types",
                            json_pack("[ssssss]", "primary", "secondary", "accent1", "accent2", "light", "text"));
        json_object_set_new(d, "description",
                            json_string("Professional color schemes optimized for business presentations"));
        pp_answer(res, d);
        return 0;
    }
    return pp_professional_op(call, args, res, op);
}
