/*
 * server.c - `mcpbox mcp word`: office-word-mcp-server (GongRzhe) as jlowin
 * FastMCP 2.12 serves it. The tool surface is generated from upstream's
 * main.py (surface.c); arguments are validated the way FastMCP's pydantic
 * TypeAdapter over the wrapper signature does (lax mode), and defaults are
 * filled in before the handler runs.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/common/pyschema.h"
#include "servers/servers.h"
#include "servers/word/word.h"

static const struct {
    const char *name;
    wd_fn fn;
} HANDLERS[] = {
    {"create_document", wd_t_create_document},
    {"copy_document", wd_t_copy_document},
    {"get_document_info", wd_t_get_document_info},
    {"get_document_text", wd_t_get_document_text},
    {"get_document_outline", wd_t_get_document_outline},
    {"list_available_documents", wd_t_list_available_documents},
    {"get_document_xml", wd_t_get_document_xml},
    {"get_paragraph_text_from_document", wd_t_get_paragraph_text},
    {"insert_header_near_text", wd_t_insert_header_near_text},
    {"insert_line_or_paragraph_near_text", wd_t_insert_line_or_paragraph_near_text},
    {"insert_numbered_list_near_text", wd_t_insert_numbered_list_near_text},
    {"find_text_in_document", wd_t_find_text},
    {"convert_to_pdf", wd_t_convert_to_pdf},
    {"add_heading", wd_t_add_heading},
    {"add_paragraph", wd_t_add_paragraph},
    {"add_table", wd_t_add_table},
    {"add_page_break", wd_t_add_page_break},
    {"add_picture", wd_t_add_picture},
    {"delete_paragraph", wd_t_delete_paragraph},
    {"search_and_replace", wd_t_search_and_replace},
    {"create_custom_style", wd_t_create_custom_style},
    {"format_text", wd_t_format_text},
    {"format_table", wd_t_format_table},
    {"set_table_cell_shading", wd_t_set_table_cell_shading},
    {"apply_table_alternating_rows", wd_t_apply_table_alternating_rows},
    {"highlight_table_header", wd_t_highlight_table_header},
    {"merge_table_cells", wd_t_merge_table_cells},
    {"merge_table_cells_horizontal", wd_t_merge_table_cells_horizontal},
    {"merge_table_cells_vertical", wd_t_merge_table_cells_vertical},
    {"set_table_cell_alignment", wd_t_set_table_cell_alignment},
    {"customize_footnote_style", wd_t_customize_footnote_style},
    {"add_footnote_after_text", wd_t_add_footnote_after_text},
    {"add_footnote_before_text", wd_t_add_footnote_before_text},
    {"add_footnote_enhanced", wd_t_add_footnote_enhanced},
    {"add_footnote_robust", wd_t_add_footnote_robust},
    {"delete_footnote_from_document", wd_t_delete_footnote_from_document},
    {"delete_footnote_robust", wd_t_delete_footnote_robust},
    {"validate_document_footnotes", wd_t_validate_document_footnotes},
    {"protect_document", wd_t_protect_document},
    {"unprotect_document", wd_t_unprotect_document},
    {"replace_paragraph_block_below_header", wd_t_replace_paragraph_block_below_header},
    {"replace_block_between_manual_anchors", wd_t_replace_block_between_manual_anchors},
    {"set_table_column_width", wd_t_set_table_column_width},
    {"set_table_column_widths", wd_t_set_table_column_widths},
    {"set_table_width", wd_t_set_table_width},
    {"auto_fit_table_columns", wd_t_auto_fit_table_columns},
    {"format_table_cell_text", wd_t_format_table_cell_text},
    {"set_table_cell_padding", wd_t_set_table_cell_padding},
    {"get_all_comments", wd_t_get_all_comments},
    {"get_comments_by_author", wd_t_get_comments_by_author},
    {"get_comments_for_paragraph", wd_t_get_comments_for_paragraph},
    {"add_footnote_to_document", wd_t_add_footnote_to_document},
    {"add_endnote_to_document", wd_t_add_endnote_to_document},
    {"set_table_alignment_all", wd_t_set_table_alignment_all},
};

wd_fn wd_handler(const char *name)
{
    for (size_t i = 0; i < sizeof HANDLERS / sizeof HANDLERS[0]; i++)
        if (!strcmp(HANDLERS[i].name, name)) return HANDLERS[i].fn;
    return NULL;
}

typedef struct wd_state {
    wd_server ws;
    const wd_tool_spec *surface;
    mb_mcp_tool *tools;
    json_t **schemas; /* parsed, per tool */
    size_t n;
} wd_state;

/* ----------------------------------------------------------- validation */

/* Checks one argument against its property schema, coercing it in place. */
static void check_one(json_t *args, const char *key, json_t *prop, mb_pyv_errs *e)
{
    json_t *v = json_object_get(args, key);
    const char *type = json_string_value(json_object_get(prop, "type"));
    if (!type) return; /* untyped parameter */
    if (!strcmp(type, "string")) {
        if (!json_is_string(v)) mb_pyv_add(e, key, "Input should be a valid string", "string_type", v);
    } else if (!strcmp(type, "integer")) {
        if (json_is_integer(v)) return;
        if (json_is_boolean(v)) {
            json_object_set_new(args, key, json_integer(json_is_true(v)));
        } else if (json_is_real(v)) {
            double x = json_real_value(v);
            if (x != (double)(long long)x)
                mb_pyv_add(e, key, "Input should be a valid integer, got a number with a fractional part",
                           "int_from_float", v);
            else json_object_set_new(args, key, json_integer((json_int_t)x));
        } else if (json_is_string(v)) {
            long long x;
            if (mb_py_int_str(json_string_value(v), &x)) json_object_set_new(args, key, json_integer(x));
            else
                mb_pyv_add(e, key, "Input should be a valid integer, unable to parse string as an integer",
                           "int_parsing", v);
        } else {
            mb_pyv_add(e, key, "Input should be a valid integer", "int_type", v);
        }
    } else if (!strcmp(type, "number")) {
        if (json_is_number(v)) return;
        if (json_is_boolean(v)) {
            json_object_set_new(args, key, json_real(json_is_true(v)));
        } else if (json_is_string(v)) {
            char *end;
            double x = strtod(json_string_value(v), &end);
            if (*json_string_value(v) && !*end) json_object_set_new(args, key, json_real(x));
            else
                mb_pyv_add(e, key, "Input should be a valid number, unable to parse string as a number",
                           "float_parsing", v);
        } else {
            mb_pyv_add(e, key, "Input should be a valid number", "float_type", v);
        }
    } else if (!strcmp(type, "boolean")) {
        int b;
        if (json_is_boolean(v)) return;
        if (mb_py_lax_bool(v, 0, &b)) {
            json_object_set_new(args, key, json_boolean(b));
        } else if (json_is_string(v) || json_is_number(v)) {
            mb_pyv_add(e, key, "Input should be a valid boolean, unable to interpret input",
                       "bool_parsing", v);
        } else {
            mb_pyv_add(e, key, "Input should be a valid boolean", "bool_type", v);
        }
    } else if (!strcmp(type, "array")) {
        if (!json_is_array(v)) mb_pyv_add(e, key, "Input should be a valid list", "list_type", v);
    }
}

static int validate(const char *tool, json_t *schema, json_t *args, mb_mcp_result *res)
{
    mb_pyv_errs e = {.version = "2.12", .shorten = 1};
    json_t *props = json_object_get(schema, "properties");
    json_t *req = json_object_get(schema, "required");
    const char *key;
    json_t *prop;
    json_object_foreach(props, key, prop) {
        if (json_object_get(args, key)) {
            check_one(args, key, prop, &e);
            continue;
        }
        int required = 0;
        for (size_t i = 0; i < json_array_size(req); i++)
            if (!strcmp(json_string_value(json_array_get(req, i)), key)) required = 1;
        if (required) mb_pyv_add(&e, key, "Missing required argument", "missing_argument", args);
        else json_object_set(args, key, json_object_get(prop, "default"));
    }
    json_t *v;
    json_object_foreach(args, key, v) {
        if (!json_object_get(props, key))
            mb_pyv_add(&e, key, "Unexpected keyword argument", "unexpected_keyword_argument", v);
    }
    if (!e.n) return 0;
    mb_mcp_textf(res, "%d validation error%s for call[%s]%s", e.n, e.n > 1 ? "s" : "", tool,
                 e.text.data);
    mb_mcp_set_is_error(res, 1);
    mb_buf_free(&e.text);
    return 1;
}

/* ------------------------------------------------------------- dispatch */

static int dispatch(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    wd_state *st = mb_mcp_call_data(call);
    const char *name = mb_mcp_call_tool(call);
    json_t *schema = NULL;
    for (size_t i = 0; i < st->n; i++)
        if (!strcmp(st->tools[i].name, name)) schema = st->schemas[i];
    json_t *a = json_is_object(args) ? json_deep_copy(args) : json_object();
    int rc = 0;
    if (!validate(name, schema, a, res)) {
        wd_fn fn = wd_handler(name);
        if (fn) rc = fn(call, a, res);
        else {
            mb_mcp_textf(res, "Error calling tool '%s': not implemented by mcpbox's word server", name);
            mb_mcp_set_is_error(res, 1);
        }
    }
    json_decref(a);
    return rc;
}

static void state_free(void *p)
{
    wd_state *st = p;
    if (!st) return;
    for (size_t i = 0; i < st->n; i++) json_decref(st->schemas[i]);
    free(st->schemas);
    free(st->tools);
    free(st);
}

static const mb_mcp_info INFO = {
    .name = "Word Document Server",
    .version = "2.12.4", /* FastMCP 2.x reports its own version */
    .flavor = MB_MCP_PY_FASTMCP,
    .capabilities = "{\"experimental\": {}, \"prompts\": {\"listChanged\": false}, \"resources\": "
                    "{\"subscribe\": false, \"listChanged\": false}, \"tools\": {\"listChanged\": true}}",
};

int mb_srv_word_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"upstream-version", required_argument, 0, 'u'},
        {0, 0, 0, 0},
    };
    *out = NULL;
    const char *version = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'u') version = optarg;
        else return mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
    }
    if (optind < argc) return mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\"", argv[optind]);
    wd_state *st = mb_calloc(1, sizeof *st);
    if (!version || !strcmp(version, "568d8d8a") || !strcmp(version, "klavis")) {
        st->surface = WD_SURFACE_HEAD;
    } else if (!strcmp(version, "1.1.9")) {
        st->surface = WD_SURFACE_119;
        st->ws.v119 = 1;
    } else {
        free(st);
        return mb_err_set(err, MB_EINVAL,
                          "unknown --upstream-version \"%s\" (1.1.9, or 568d8d8a = the default)",
                          version);
    }
    while (st->surface[st->n].name) st->n++;
    st->tools = mb_calloc(st->n + 1, sizeof *st->tools);
    st->schemas = mb_calloc(st->n, sizeof *st->schemas);
    for (size_t i = 0; i < st->n; i++) {
        st->schemas[i] = json_loads(st->surface[i].schema, 0, NULL);
        st->tools[i] = (mb_mcp_tool){.name = st->surface[i].name,
                                     .description = st->surface[i].description,
                                     .input_schema = st->surface[i].schema,
                                     .meta = "{\"_fastmcp\": {\"tags\": []}}",
                                     .fn = dispatch};
    }
    return mb_mcp_server_new_with_tools(&INFO, st->tools, st, state_free, out, err);
}
