/*
 * server.c - `mcpbox mcp powerpoint`: office-powerpoint-mcp-server 2.0.6
 * (GongRzhe) as mcp.server.fastmcp serves it. The tool surface is generated
 * from upstream's source (surface.c); arguments go through FastMCP's
 * pre_parse_json and pydantic's lax validation of the <tool>Arguments model;
 * every result is a dict rendered as pydantic_core.to_json(indent=2) text plus
 * structuredContent {"result": dict}.
 *
 * State: upstream keeps `presentations` (id -> Presentation) and
 * `current_presentation_id` as module globals of its one process, shared by
 * every client; so does this server (one process per sandbox, calls served
 * one at a time).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/common/pyfmt.h"
#include "servers/common/pyschema.h"
#include "servers/powerpoint/pp.h"
#include "servers/servers.h"

static const struct {
    const char *name;
    pp_fn fn;
} HANDLERS[] = {
    {"create_presentation", pp_t_create_presentation},
    {"create_presentation_from_template", pp_t_create_presentation_from_template},
    {"open_presentation", pp_t_open_presentation},
    {"save_presentation", pp_t_save_presentation},
    {"get_presentation_info", pp_t_get_presentation_info},
    {"get_template_file_info", pp_t_get_template_file_info},
    {"set_core_properties", pp_t_set_core_properties},
    {"add_slide", pp_t_add_slide},
    {"get_slide_info", pp_t_get_slide_info},
    {"extract_slide_text", pp_t_extract_slide_text},
    {"extract_presentation_text", pp_t_extract_presentation_text},
    {"populate_placeholder", pp_t_populate_placeholder},
    {"add_bullet_points", pp_t_add_bullet_points},
    {"manage_text", pp_t_manage_text},
    {"add_table", pp_t_add_table},
    {"format_table_cell", pp_t_format_table_cell},
    {"add_connector", pp_t_add_connector},
    {"add_shape", pp_t_add_shape},
    {"add_chart", pp_t_add_chart},
    {"apply_slide_template", pp_t_apply_slide_template},
    {"create_slide_from_template", pp_t_create_slide_from_template},
    {"create_presentation_from_templates", pp_t_create_presentation_from_templates},
    {"auto_generate_presentation", pp_t_auto_generate_presentation},
    {"optimize_slide_text", pp_t_optimize_slide_text},
    {"apply_picture_effects", pp_t_apply_picture_effects},
    {"manage_fonts", pp_t_manage_fonts},
    {"update_chart_data", pp_t_update_chart_data},
    {"manage_hyperlinks", pp_t_manage_hyperlinks},
    {"manage_image", pp_t_manage_image},
    {"list_slide_templates", pp_t_list_slide_templates},
    {"get_template_info", pp_t_get_template_info},
    {"apply_professional_design", pp_t_apply_professional_design},
    {"manage_slide_masters", pp_t_manage_slide_masters},
    {"manage_slide_transitions", pp_t_manage_slide_transitions},
    {"list_presentations", pp_t_list_presentations},
    {"switch_presentation", pp_t_switch_presentation},
    {"get_server_info", pp_t_get_server_info},
};

typedef struct pp_state {
    pp_server ps;
    mb_mcp_tool *tools;
    json_t **schemas;
    size_t n;
} pp_state;

pp_server *pp_server_of(mb_mcp_call *call)
{
    return &((pp_state *)mb_mcp_call_data(call))->ps;
}

/* ---------------------------------------------------------------- state */

pp_pres *pp_lookup(pp_server *s, const char *id)
{
    for (size_t i = 0; id && i < s->n; i++)
        if (!strcmp(s->pres[i].id, id)) return s->pres[i].pres;
    return NULL;
}

void pp_store(pp_server *s, const char *id, pp_pres *pres)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->pres[i].id, id)) continue;
        pp_pres_free(s->pres[i].pres);
        s->pres[i].pres = pres;
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        s->pres = mb_realloc(s->pres, s->cap * sizeof *s->pres);
    }
    s->pres[s->n++] = (pp_entry){mb_strdup(id), pres};
}

pp_pres *pp_target(mb_mcp_call *call, json_t *args, mb_mcp_result *res, const char **id)
{
    pp_server *s = pp_server_of(call);
    const char *given = json_string_value(json_object_get(args, "presentation_id"));
    const char *pid = given ? given : s->current;
    pp_pres *p = pp_lookup(s, pid);
    if (!p) {
        pp_errorf(res, "No presentation is currently loaded or the specified ID is invalid");
        return NULL;
    }
    if (id) *id = pid;
    return p;
}

const char *pp_target_slide(pp_pres *p, json_t *args, mb_mcp_result *res)
{
    json_int_t i = json_integer_value(json_object_get(args, "slide_index"));
    if (i < 0 || (size_t)i >= p->nslides) {
        pp_errorf(res, "Invalid slide index: %lld. Available slides: 0-%lld", (long long)i,
                  (long long)p->nslides - 1);
        return NULL;
    }
    return p->slides[i];
}

/* ------------------------------------------------------------ rendering */

static void put_str(mb_buf *b, const char *s, size_t n)
{
    mb_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': mb_buf_puts(b, "\\\""); break;
        case '\\': mb_buf_puts(b, "\\\\"); break;
        case '\n': mb_buf_puts(b, "\\n"); break;
        case '\r': mb_buf_puts(b, "\\r"); break;
        case '\t': mb_buf_puts(b, "\\t"); break;
        case '\b': mb_buf_puts(b, "\\b"); break;
        case '\f': mb_buf_puts(b, "\\f"); break;
        default:
            if (c < 0x20) mb_buf_printf(b, "\\u%04x", c);
            else mb_buf_putc(b, (char)c);
        }
    }
    mb_buf_putc(b, '"');
}

static void indent(mb_buf *b, int depth)
{
    for (int i = 0; i < depth; i++) mb_buf_puts(b, "  ");
}

void pp_json_pretty(mb_buf *b, json_t *v, int depth)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (!json_object_size(v)) {
            mb_buf_puts(b, "{}");
            break;
        }
        mb_buf_puts(b, "{\n");
        const char *k;
        json_t *x;
        size_t i = 0;
        json_object_foreach(v, k, x) {
            if (i++) mb_buf_puts(b, ",\n");
            indent(b, depth + 1);
            put_str(b, k, strlen(k));
            mb_buf_puts(b, ": ");
            pp_json_pretty(b, x, depth + 1);
        }
        mb_buf_putc(b, '\n');
        indent(b, depth);
        mb_buf_putc(b, '}');
        break;
    }
    case JSON_ARRAY: {
        if (!json_array_size(v)) {
            mb_buf_puts(b, "[]");
            break;
        }
        mb_buf_puts(b, "[\n");
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) mb_buf_puts(b, ",\n");
            indent(b, depth + 1);
            pp_json_pretty(b, json_array_get(v, i), depth + 1);
        }
        mb_buf_putc(b, '\n');
        indent(b, depth);
        mb_buf_putc(b, ']');
        break;
    }
    case JSON_STRING: put_str(b, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: mb_buf_printf(b, "%lld", (long long)json_integer_value(v)); break;
    case JSON_REAL: { /* serde_json (ryu): Python's repr digits, exponent without + or 0s */
        mb_buf r = {0};
        mb_py_float_str(&r, json_real_value(v));
        const char *e = r.data ? strchr(r.data, 'e') : NULL;
        if (!e) {
            mb_buf_append(b, r.data, r.len);
        } else {
            mb_buf_append(b, r.data, (size_t)(e - r.data) + 1);
            const char *x = e + 1;
            if (*x == '+') x++;
            else if (*x == '-') mb_buf_putc(b, *x++);
            while (*x == '0' && x[1]) x++;
            mb_buf_puts(b, x);
        }
        mb_buf_free(&r);
        break;
    }
    case JSON_TRUE: mb_buf_puts(b, "true"); break;
    case JSON_FALSE: mb_buf_puts(b, "false"); break;
    default: mb_buf_puts(b, "null");
    }
}

void pp_answer(mb_mcp_result *res, json_t *dict)
{
    mb_buf b = {0};
    pp_json_pretty(&b, dict, 0);
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    mb_mcp_structured(res, json_pack("{s:o}", "result", dict));
}

void pp_errorf(mb_mcp_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    size_t n;
    char *ok = mb_utf8_repair(b.data ? b.data : "", b.len, &n);
    pp_answer(res, json_pack("{s:s%}", "error", ok, n));
    free(ok);
    mb_buf_free(&b);
}

/* ----------------------------------------------------------- validation */

/* Validates *slot (replacing it with the coerced value) against schema. */
static void check(json_t **slot, json_t *schema, const char *loc, mb_pyv_errs *e)
{
    json_t *v = *slot;
    json_t *any = json_object_get(schema, "anyOf");
    if (any) { /* Optional[X]: null, or X */
        if (json_is_null(v)) return;
        check(slot, json_array_get(any, 0), loc, e);
        return;
    }
    const char *type = json_string_value(json_object_get(schema, "type"));
    if (!type) return;
    if (!strcmp(type, "string")) {
        if (!json_is_string(v)) mb_pyv_add(e, loc, "Input should be a valid string", "string_type", v);
    } else if (!strcmp(type, "integer")) {
        if (json_is_integer(v)) return;
        if (json_is_real(v)) {
            double x = json_real_value(v);
            if (x != (double)(long long)x)
                mb_pyv_add(e, loc, "Input should be a valid integer, got a number with a fractional part",
                           "int_from_float", v);
            else *slot = json_integer((json_int_t)x), json_decref(v);
        } else if (json_is_string(v)) {
            long long x;
            if (mb_py_int_str(json_string_value(v), &x)) *slot = json_integer(x), json_decref(v);
            else
                mb_pyv_add(e, loc, "Input should be a valid integer, unable to parse string as an integer",
                           "int_parsing", v);
        } else if (json_is_boolean(v)) {
            *slot = json_integer(json_is_true(v)), json_decref(v);
        } else {
            mb_pyv_add(e, loc, "Input should be a valid integer", "int_type", v);
        }
    } else if (!strcmp(type, "number")) {
        if (json_is_real(v)) return;
        if (json_is_integer(v)) { /* pydantic makes a float of it */
            *slot = json_real((double)json_integer_value(v)), json_decref(v);
            return;
        }
        if (json_is_string(v)) {
            char *end;
            double x = strtod(json_string_value(v), &end);
            if (*json_string_value(v) && !*end) *slot = json_real(x), json_decref(v);
            else
                mb_pyv_add(e, loc, "Input should be a valid number, unable to parse string as a number",
                           "float_parsing", v);
        } else if (json_is_boolean(v)) {
            *slot = json_real(json_is_true(v)), json_decref(v);
        } else {
            mb_pyv_add(e, loc, "Input should be a valid number", "float_type", v);
        }
    } else if (!strcmp(type, "boolean")) {
        int b;
        if (json_is_boolean(v)) return;
        if (mb_py_lax_bool(v, 1, &b)) *slot = json_boolean(b), json_decref(v);
        else if (json_is_string(v) || json_is_number(v))
            mb_pyv_add(e, loc, "Input should be a valid boolean, unable to interpret input",
                       "bool_parsing", v);
        else mb_pyv_add(e, loc, "Input should be a valid boolean", "bool_type", v);
    } else if (!strcmp(type, "array")) {
        if (!json_is_array(v)) {
            mb_pyv_add(e, loc, "Input should be a valid list", "list_type", v);
            return;
        }
        json_t *items = json_object_get(schema, "items");
        for (size_t i = 0; items && i < json_array_size(v); i++) {
            json_t *it = json_incref(json_array_get(v, i)), *orig = it;
            char *l = mb_asprintf("%s.%zu", loc, i);
            check(&it, items, l, e);
            free(l);
            if (it != orig) json_array_set(v, i, it);
            json_decref(it);
        }
    } else if (!strcmp(type, "object")) {
        if (!json_is_object(v)) {
            mb_pyv_add(e, loc, "Input should be a valid dictionary", "dict_type", v);
            return;
        }
        json_t *ap = json_object_get(schema, "additionalProperties");
        if (!json_is_object(ap)) return;
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            json_t *it = json_incref(x), *orig = it;
            char *l = mb_asprintf("%s.%s", loc, k);
            check(&it, ap, l, e);
            free(l);
            if (it != orig) json_object_set(v, k, it);
            json_decref(it);
        }
    }
}

/* FastMCP's pre_parse_json: a JSON-text string for a non-str parameter is
 * replaced by what it decodes to, unless that is a str/int/float. */
static void pre_parse(json_t *args, json_t *props)
{
    const char *k;
    json_t *v;
    json_object_foreach(args, k, v) {
        json_t *prop = json_object_get(props, k);
        if (!json_is_string(v) || !prop) continue;
        const char *t = json_string_value(json_object_get(prop, "type"));
        json_t *any = json_object_get(prop, "anyOf");
        if (any) t = json_string_value(json_object_get(json_array_get(any, 0), "type"));
        if (t && !strcmp(t, "string")) continue;
        json_t *d = json_loads(json_string_value(v), JSON_DECODE_ANY, NULL);
        if (d && !json_is_string(d) && !json_is_number(d)) json_object_set(args, k, d);
        json_decref(d);
    }
}

static int validate(const char *tool, json_t *schema, json_t *args, mb_mcp_result *res)
{
    mb_pyv_errs e = {.version = "2.12", .shorten = 1};
    json_t *props = json_object_get(schema, "properties");
    json_t *req = json_object_get(schema, "required");
    pre_parse(args, props);
    const char *key;
    json_t *prop;
    json_object_foreach(props, key, prop) {
        json_t *v = json_object_get(args, key);
        if (v) {
            json_t *slot = json_incref(v);
            check(&slot, prop, key, &e);
            if (slot != v) json_object_set(args, key, slot);
            json_decref(slot);
            continue;
        }
        int required = 0;
        for (size_t i = 0; i < json_array_size(req); i++)
            if (!strcmp(json_string_value(json_array_get(req, i)), key)) required = 1;
        if (required) mb_pyv_add(&e, key, "Field required", "missing", args);
        else json_object_set(args, key, json_object_get(prop, "default"));
    }
    if (!e.n) return 0;
    mb_buf m = {0};
    mb_buf_printf(&m, "%d validation error%s for %sArguments%s", e.n, e.n > 1 ? "s" : "", tool,
                  e.text.data);
    mb_mcp_fail_str(res, m.data);
    mb_buf_free(&m);
    mb_buf_free(&e.text);
    return 1;
}

/* ------------------------------------------------------------- dispatch */

static int dispatch(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_state *st = mb_mcp_call_data(call);
    const char *name = mb_mcp_call_tool(call);
    json_t *schema = NULL;
    for (size_t i = 0; i < st->n; i++)
        if (!strcmp(st->tools[i].name, name)) schema = st->schemas[i];
    json_t *a = json_is_object(args) ? json_deep_copy(args) : json_object();
    int rc = 0;
    if (!validate(name, schema, a, res)) {
        pp_fn fn = NULL;
        for (size_t i = 0; i < sizeof HANDLERS / sizeof HANDLERS[0]; i++)
            if (!strcmp(HANDLERS[i].name, name)) fn = HANDLERS[i].fn;
        if (fn) rc = fn(call, a, res);
        else
            rc = mb_mcp_fail(res, "%s is not implemented by mcpbox's powerpoint server (listed for "
                                  "fidelity with office-powerpoint-mcp-server 2.0.6)", name);
    }
    json_decref(a);
    return rc;
}

static void state_free(void *p)
{
    pp_state *st = p;
    if (!st) return;
    for (size_t i = 0; i < st->ps.n; i++) {
        free(st->ps.pres[i].id);
        pp_pres_free(st->ps.pres[i].pres);
    }
    free(st->ps.pres);
    free(st->ps.current);
    for (size_t i = 0; i < st->n; i++) json_decref(st->schemas[i]);
    free(st->schemas);
    free(st->tools);
    free(st);
}

static const mb_mcp_info INFO = {
    .name = "ppt-mcp-server",
    .version = "1.18.0", /* FastMCP reports the mcp SDK's version */
    .flavor = MB_MCP_PY_FASTMCP,
    .capabilities = "{\"experimental\": {}, \"prompts\": {\"listChanged\": false}, \"resources\": "
                    "{\"subscribe\": false, \"listChanged\": false}, \"tools\": {\"listChanged\": false}}",
    .max_protocol = "2025-06-18",
};

int mb_srv_powerpoint_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    *out = NULL;
    /* upstream's `--transport stdio` is accepted; nothing else */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--transport") && i + 1 < argc && !strcmp(argv[i + 1], "stdio")) i++;
        else if (!strcmp(argv[i], "--transport=stdio")) continue;
        else return mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\" (only stdio is served)",
                               argv[i]);
    }
    pp_state *st = mb_calloc(1, sizeof *st);
    while (PP_SURFACE[st->n].name) st->n++;
    st->tools = mb_calloc(st->n + 1, sizeof *st->tools);
    st->schemas = mb_calloc(st->n, sizeof *st->schemas);
    for (size_t i = 0; i < st->n; i++) {
        st->schemas[i] = json_loads(PP_SURFACE[i].input_schema, 0, NULL);
        st->tools[i] = (mb_mcp_tool){.name = PP_SURFACE[i].name,
                                     .description = PP_SURFACE[i].description,
                                     .input_schema = PP_SURFACE[i].input_schema,
                                     .output_schema = PP_SURFACE[i].output_schema,
                                     .fn = dispatch};
    }
    return mb_mcp_server_new_with_tools(&INFO, st->tools, st, state_free, out, err);
}
