/*
 * server.c - `mcpbox mcp excel`: excel-mcp-server 0.1.7 (haris-musa) over
 * stdio. This file holds the tool table (names, docstring descriptions and
 * the pydantic-generated input/output schemas FastMCP publishes), argument
 * checking the way FastMCP + pydantic do it, path resolution, and start-up.
 *
 * Upstream is a FastMCP server: a tool's own failures either come back as a
 * normal result "Error: ..." (the exceptions each tool catches) or, for
 * anything it re-raises, as an isError result "Error executing tool X: ..."
 * (mb_mcp_fail under MB_MCP_PY_FASTMCP). Results carry structuredContent
 * {"result": text} as mcp >= 1.10 does for a `-> str` tool.
 *
 * --upstream-version 0.1.4 (Toolathlon's pin, with its lock's mcp 1.9.0 and
 * pydantic 2.11): the 20 tools 0.1.4 has (not get_merged_cells, insert_rows,
 * insert_columns, delete_sheet_rows, delete_sheet_columns); its `x: str =
 * None` parameters, published as a plain type with default null (no anyOf)
 * and refusing an explicit null as pydantic does; no outputSchema and no
 * structuredContent (mcp < 1.10); serverInfo 1.9.0, protocol up to
 * 2025-03-26; create_chart without data labels (0.1.4 applies no style when
 * none is given).
 *
 * Paths: in stdio mode upstream requires absolute paths ("Invalid filename:
 * X, must be an absolute path when not in SSE mode"); here they must also lie
 * under an allowed directory (default /data), symlinks included.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/common/pyfmt.h"
#include "servers/common/pyschema.h"
#include "servers/excel/excel.h"
#include "servers/excel/tools.h"
#include "servers/servers.h"

/* ------------------------------------------------------------- schemas */

typedef enum pk {
    P_STR,       /* str */
    P_STR_OPT,   /* Optional[str] = None */
    P_STR_DEF,   /* str = "..." */
    P_BOOL_DEF,  /* bool = False */
    P_INT,       /* int */
    P_INT_DEF,   /* int = 1 */
    P_INT_OPT,   /* Optional[int] = None */
    P_DICT_OPT,  /* Optional[Dict[str, Any]] = None */
    P_LISTLIST,  /* List[List] */
    P_LISTSTR,   /* List[str] */
    P_LISTSTR_OPT, /* Optional[List[str]] = None */
} pk;

typedef struct param {
    const char *name;
    pk kind;
    const char *def; /* default as JSON text */
} param;

typedef struct tool_spec {
    const char *name;
    const char *doc;
    mb_mcp_tool_fn fn;
    param params[20];
} tool_spec;

#define FP {"filepath", P_STR, NULL}
#define SN {"sheet_name", P_STR, NULL}

static const tool_spec SPECS[] = {
    {"apply_formula",
     "\n    Apply Excel formula to cell.\n    Excel formula will write to cell with verification.\n    ",
     xl_t_apply_formula, {FP, SN, {"cell", P_STR, NULL}, {"formula", P_STR, NULL}}},
    {"validate_formula_syntax", "Validate Excel formula syntax without applying it.",
     xl_t_validate_formula, {FP, SN, {"cell", P_STR, NULL}, {"formula", P_STR, NULL}}},
    {"format_range", "Apply formatting to a range of cells.", xl_t_format_range,
     {FP, SN, {"start_cell", P_STR, NULL}, {"end_cell", P_STR_OPT, NULL},
      {"bold", P_BOOL_DEF, "false"}, {"italic", P_BOOL_DEF, "false"},
      {"underline", P_BOOL_DEF, "false"}, {"font_size", P_INT_OPT, NULL},
      {"font_color", P_STR_OPT, NULL}, {"bg_color", P_STR_OPT, NULL},
      {"border_style", P_STR_OPT, NULL}, {"border_color", P_STR_OPT, NULL},
      {"number_format", P_STR_OPT, NULL}, {"alignment", P_STR_OPT, NULL},
      {"wrap_text", P_BOOL_DEF, "false"}, {"merge_cells", P_BOOL_DEF, "false"},
      {"protection", P_DICT_OPT, NULL}, {"conditional_format", P_DICT_OPT, NULL}}},
    {"read_data_from_excel",
     "\n    Read data from Excel worksheet with cell metadata including validation rules.\n    \n"
     "    Args:\n        filepath: Path to Excel file\n        sheet_name: Name of worksheet\n"
     "        start_cell: Starting cell (default A1)\n"
     "        end_cell: Ending cell (optional, auto-expands if not provided)\n"
     "        preview_only: Whether to return preview only\n    \n    Returns:  \n"
     "    JSON string containing structured cell data with validation metadata.\n"
     "    Each cell includes: address, value, row, column, and validation info (if any).\n    ",
     xl_t_read_data,
     {FP, SN, {"start_cell", P_STR_DEF, "\"A1\""}, {"end_cell", P_STR_OPT, NULL},
      {"preview_only", P_BOOL_DEF, "false"}}},
    {"write_data_to_excel",
     "\n    Write data to Excel worksheet.\n    Excel formula will write to cell without any "
     "verification.\n\n    PARAMETERS:  \n    filepath: Path to Excel file\n"
     "    sheet_name: Name of worksheet to write to\n"
     "    data: List of lists containing data to write to the worksheet, sublists are assumed to "
     "be rows\n    start_cell: Cell to start writing to, default is \"A1\"\n  \n    ",
     xl_t_write_data, {FP, SN, {"data", P_LISTLIST, NULL}, {"start_cell", P_STR_DEF, "\"A1\""}}},
    {"create_workbook", "Create new Excel workbook.", xl_t_create_workbook, {FP}},
    {"create_worksheet", "Create new worksheet in workbook.", xl_t_create_worksheet, {FP, SN}},
    {"create_chart", "Create chart in worksheet.", xl_t_create_chart,
     {FP, SN, {"data_range", P_STR, NULL}, {"chart_type", P_STR, NULL},
      {"target_cell", P_STR, NULL}, {"title", P_STR_DEF, "\"\""}, {"x_axis", P_STR_DEF, "\"\""},
      {"y_axis", P_STR_DEF, "\"\""}}},
    {"create_pivot_table", "Create pivot table in worksheet.", xl_t_create_pivot,
     {FP, SN, {"data_range", P_STR, NULL}, {"rows", P_LISTSTR, NULL},
      {"values", P_LISTSTR, NULL}, {"columns", P_LISTSTR_OPT, NULL},
      {"agg_func", P_STR_DEF, "\"mean\""}}},
    {"create_table", "Creates a native Excel table from a specified range of data.",
     xl_t_create_table,
     {FP, SN, {"data_range", P_STR, NULL}, {"table_name", P_STR_OPT, NULL},
      {"table_style", P_STR_DEF, "\"TableStyleMedium9\""}}},
    {"copy_worksheet", "Copy worksheet within workbook.", xl_t_copy_worksheet,
     {FP, {"source_sheet", P_STR, NULL}, {"target_sheet", P_STR, NULL}}},
    {"delete_worksheet", "Delete worksheet from workbook.", xl_t_delete_worksheet, {FP, SN}},
    {"rename_worksheet", "Rename worksheet in workbook.", xl_t_rename_worksheet,
     {FP, {"old_name", P_STR, NULL}, {"new_name", P_STR, NULL}}},
    {"get_workbook_metadata", "Get metadata about workbook including sheets, ranges, etc.",
     xl_t_metadata, {FP, {"include_ranges", P_BOOL_DEF, "false"}}},
    {"merge_cells", "Merge a range of cells.", xl_t_merge,
     {FP, SN, {"start_cell", P_STR, NULL}, {"end_cell", P_STR, NULL}}},
    {"unmerge_cells", "Unmerge a range of cells.", xl_t_unmerge,
     {FP, SN, {"start_cell", P_STR, NULL}, {"end_cell", P_STR, NULL}}},
    {"get_merged_cells", "Get merged cells in a worksheet.", xl_t_get_merged, {FP, SN}},
    {"copy_range", "Copy a range of cells to another location.", xl_t_copy_range,
     {FP, SN, {"source_start", P_STR, NULL}, {"source_end", P_STR, NULL},
      {"target_start", P_STR, NULL}, {"target_sheet", P_STR_OPT, NULL}}},
    {"delete_range", "Delete a range of cells and shift remaining cells.", xl_t_delete_range,
     {FP, SN, {"start_cell", P_STR, NULL}, {"end_cell", P_STR, NULL},
      {"shift_direction", P_STR_DEF, "\"up\""}}},
    {"validate_excel_range", "Validate if a range exists and is properly formatted.",
     xl_t_validate_range, {FP, SN, {"start_cell", P_STR, NULL}, {"end_cell", P_STR_OPT, NULL}}},
    {"get_data_validation_info",
     "\n    Get all data validation rules in a worksheet.\n    \n    This tool helps identify which "
     "cell ranges have validation rules\n    and what types of validation are applied.\n    \n"
     "    Args:\n        filepath: Path to Excel file\n        sheet_name: Name of worksheet\n"
     "        \n    Returns:\n        JSON string containing all validation rules in the "
     "worksheet\n    ",
     xl_t_validation_info, {FP, SN}},
    {"insert_rows", "Insert one or more rows starting at the specified row.", xl_t_insert_rows,
     {FP, SN, {"start_row", P_INT, NULL}, {"count", P_INT_DEF, "1"}}},
    {"insert_columns", "Insert one or more columns starting at the specified column.",
     xl_t_insert_cols, {FP, SN, {"start_col", P_INT, NULL}, {"count", P_INT_DEF, "1"}}},
    {"delete_sheet_rows", "Delete one or more rows starting at the specified row.",
     xl_t_delete_rows, {FP, SN, {"start_row", P_INT, NULL}, {"count", P_INT_DEF, "1"}}},
    {"delete_sheet_columns", "Delete one or more columns starting at the specified column.",
     xl_t_delete_cols, {FP, SN, {"start_col", P_INT, NULL}, {"count", P_INT_DEF, "1"}}},
};
#define NSPECS (sizeof SPECS / sizeof SPECS[0])

/* The tools 0.1.5-0.1.7 added. */
static int since_017(const char *name)
{
    static const char *const added[] = {"get_merged_cells", "insert_rows", "insert_columns",
                                        "delete_sheet_rows", "delete_sheet_columns", NULL};
    for (int i = 0; added[i]; i++)
        if (!strcmp(name, added[i])) return 1;
    return 0;
}

/* 0.1.4's `x: T = None`: the plain type's schema with default null, in
 * pydantic's (sorted) key order. */
static json_t *none_default_schema(const param *p, const char *title)
{
    json_t *o = json_object();
    if (p->kind == P_DICT_OPT) json_object_set_new(o, "additionalProperties", json_true());
    json_object_set_new(o, "default", json_null());
    if (p->kind == P_LISTSTR_OPT) json_object_set_new(o, "items", json_pack("{s:s}", "type", "string"));
    json_object_set_new(o, "title", json_string(title));
    json_object_set_new(o, "type", json_string(p->kind == P_STR_OPT   ? "string"
                                               : p->kind == P_INT_OPT ? "integer"
                                               : p->kind == P_DICT_OPT ? "object"
                                                                       : "array"));
    return o;
}

static int is_optional(pk kind)
{
    return kind == P_STR_OPT || kind == P_INT_OPT || kind == P_DICT_OPT || kind == P_LISTSTR_OPT;
}

static json_t *prop_schema(const param *p, int v014)
{
    if (v014 && is_optional(p->kind)) {
        char *title = mb_py_field_title(p->name);
        json_t *o = none_default_schema(p, title);
        free(title);
        return o;
    }
    char *title = mb_py_field_title(p->name);
    json_t *o = json_object();
    json_t *def = p->def ? json_loads(p->def, JSON_DECODE_ANY, NULL) : NULL;
    switch (p->kind) {
    case P_STR: case P_INT: case P_LISTLIST: case P_LISTSTR:
        if (p->kind == P_LISTLIST)
            json_object_set_new(o, "items", json_pack("{s:{},s:s}", "items", "type", "array"));
        if (p->kind == P_LISTSTR) json_object_set_new(o, "items", json_pack("{s:s}", "type", "string"));
        json_object_set_new(o, "title", json_string(title));
        json_object_set_new(o, "type", json_string(p->kind == P_STR ? "string"
                                                   : p->kind == P_INT ? "integer" : "array"));
        break;
    case P_STR_DEF: case P_BOOL_DEF: case P_INT_DEF:
        json_object_set_new(o, "default", def ? json_incref(def) : json_null());
        json_object_set_new(o, "title", json_string(title));
        json_object_set_new(o, "type", json_string(p->kind == P_STR_DEF ? "string"
                                                   : p->kind == P_BOOL_DEF ? "boolean" : "integer"));
        break;
    default: {
        json_t *any = json_array();
        if (p->kind == P_STR_OPT) json_array_append_new(any, json_pack("{s:s}", "type", "string"));
        else if (p->kind == P_INT_OPT) json_array_append_new(any, json_pack("{s:s}", "type", "integer"));
        else if (p->kind == P_DICT_OPT)
            json_array_append_new(any, json_pack("{s:b,s:s}", "additionalProperties", 1, "type", "object"));
        else
            json_array_append_new(any, json_pack("{s:{s:s},s:s}", "items", "type", "string", "type", "array"));
        json_array_append_new(any, json_pack("{s:s}", "type", "null"));
        json_object_set_new(o, "anyOf", any);
        json_object_set_new(o, "default", json_null());
        json_object_set_new(o, "title", json_string(title));
    }
    }
    json_decref(def);
    free(title);
    return o;
}

static char *input_schema(const tool_spec *t, int v014)
{
    json_t *props = json_object(), *req = json_array();
    for (const param *p = t->params; p->name; p++) {
        json_object_set_new(props, p->name, prop_schema(p, v014));
        if (p->kind == P_STR || p->kind == P_INT || p->kind == P_LISTLIST || p->kind == P_LISTSTR)
            json_array_append_new(req, json_string(p->name));
    }
    return mb_fastmcp_input_schema(t->name, props, req);
}

/* ---------------------------------------------------- argument checking */

static const tool_spec *spec_of(const char *name)
{
    for (size_t i = 0; i < NSPECS; i++)
        if (!strcmp(SPECS[i].name, name)) return &SPECS[i];
    return NULL;
}

/* Checks and normalises one argument in place (pydantic lax mode). */
static void check_param(const param *p, json_t *args, mb_pyv_errs *e, int v014)
{
    json_t *v = json_object_get(args, p->name);
    if (!v) {
        if (p->kind == P_STR || p->kind == P_INT || p->kind == P_LISTLIST || p->kind == P_LISTSTR)
            mb_pyv_add(e, p->name, "Field required", "missing", args);
        return;
    }
    /* 0.1.4's `str = None` takes a missing value, not an explicit null */
    int optional = is_optional(p->kind) && !v014;
    /* FastMCP's pre_parse_json: JSON text given for a non-str field */
    if (json_is_string(v) && p->kind != P_STR && p->kind != P_STR_DEF) {
        json_t *parsed = json_loads(json_string_value(v), JSON_DECODE_ANY, NULL);
        if (parsed && (json_is_array(parsed) || json_is_object(parsed) || json_is_null(parsed) ||
                       json_is_boolean(parsed))) {
            json_object_set_new(args, p->name, parsed);
            v = parsed;
        } else {
            json_decref(parsed);
        }
    }
    if (optional && json_is_null(v)) return;
    switch (p->kind) {
    case P_STR: case P_STR_OPT: case P_STR_DEF:
        if (!json_is_string(v)) mb_pyv_add(e, p->name, "Input should be a valid string", "string_type", v);
        break;
    case P_BOOL_DEF: {
        int b;
        if (!mb_py_lax_bool(v, 0, &b))
            mb_pyv_add(e, p->name, "Input should be a valid boolean", "bool_parsing", v);
        else json_object_set_new(args, p->name, json_boolean(b));
        break;
    }
    case P_INT: case P_INT_DEF: case P_INT_OPT: {
        if (json_is_integer(v)) break;
        if (json_is_boolean(v)) {
            json_object_set_new(args, p->name, json_integer(json_is_true(v)));
            break;
        }
        if (json_is_real(v)) {
            double d = json_real_value(v);
            if (d == (double)(long long)d) json_object_set_new(args, p->name, json_integer((long long)d));
            else mb_pyv_add(e, p->name, "Input should be a valid integer, got a number with a fractional part",
                            "int_from_float", v);
            break;
        }
        if (json_is_string(v)) {
            char *end;
            long long x = strtoll(json_string_value(v), &end, 10);
            if (*json_string_value(v) && !*end) {
                json_object_set_new(args, p->name, json_integer(x));
                break;
            }
            mb_pyv_add(e, p->name, "Input should be a valid integer, unable to parse string as an integer",
                       "int_parsing", v);
            break;
        }
        mb_pyv_add(e, p->name, "Input should be a valid integer", "int_type", v);
        break;
    }
    case P_DICT_OPT:
        if (!json_is_object(v)) mb_pyv_add(e, p->name, "Input should be a valid dictionary", "dict_type", v);
        break;
    case P_LISTLIST:
        if (!json_is_array(v)) {
            mb_pyv_add(e, p->name, "Input should be a valid list", "list_type", v);
            break;
        }
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *row = json_array_get(v, i);
            if (json_is_array(row)) continue;
            char loc[96];
            snprintf(loc, sizeof loc, "%s.%zu", p->name, i);
            mb_pyv_add(e, loc, "Input should be a valid list", "list_type", row);
        }
        break;
    case P_LISTSTR: case P_LISTSTR_OPT:
        if (!json_is_array(v)) {
            mb_pyv_add(e, p->name, "Input should be a valid list", "list_type", v);
            break;
        }
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *it = json_array_get(v, i);
            if (json_is_string(it)) continue;
            char loc[96];
            snprintf(loc, sizeof loc, "%s.%zu", p->name, i);
            mb_pyv_add(e, loc, "Input should be a valid string", "string_type", it);
        }
        break;
    }
}

/* Validates a call's arguments; on failure fails the call like FastMCP. */
static int validate(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const tool_spec *t = spec_of(mb_mcp_call_tool(call));
    if (!t) return 0;
    mb_pyv_errs e = {.version = "2.11"};
    const xl_server *xs = mb_mcp_call_data(call);
    for (const param *p = t->params; p->name; p++) check_param(p, args, &e, xs->v014);
    if (!e.n) return 0;
    mb_buf m = {0};
    mb_buf_printf(&m, "%d validation error%s for %sArguments%s", e.n, e.n > 1 ? "s" : "", t->name,
                  e.text.data);
    int rc = mb_mcp_fail_str(res, m.data);
    mb_buf_free(&m);
    mb_buf_free(&e.text);
    return rc;
}

/* ---------------------------------------------------------------- paths */

int xl_path(mb_mcp_call *call, mb_mcp_result *res, const char *given, int create, char **out)
{
    xl_server *xs = mb_mcp_call_data(call);
    *out = NULL;
    if (given[0] != '/')
        return mb_mcp_fail(res, "Invalid filename: %s, must be an absolute path when not in SSE mode",
                           given);
    char *abs = mb_path_resolve(NULL, given);
    char *roots = mb_mcp_roots_join(xs->roots, ", ");
    int rc = 0;
    if (!mb_mcp_roots_contains(xs->roots, abs)) {
        rc = mb_mcp_fail(res, "Access denied - path outside allowed directories: %s not in %s", abs,
                         roots);
        goto done;
    }
    /* the deepest existing ancestor must resolve inside too (no symlink out) */
    size_t cut = strlen(abs);
    char *prefix = mb_strdup(abs);
    char *real = NULL;
    for (;;) {
        real = realpath(prefix, NULL);
        if (real) break;
        char *slash = strrchr(prefix, '/');
        if (!slash || slash == prefix) {
            real = mb_strdup("/");
            cut = 0;
            break;
        }
        *slash = 0;
        cut = strlen(prefix);
    }
    free(prefix);
    if (!mb_mcp_roots_contains(xs->roots, real)) {
        rc = mb_mcp_fail(res, "Access denied - symlink target outside allowed directories: %s not in %s",
                         real, roots);
        free(real);
        goto done;
    }
    (void)create;
    *out = mb_asprintf("%s%s", strcmp(real, "/") ? real : "", abs + cut);
    free(real);
done:
    free(abs);
    free(roots);
    return rc;
}

/* -------------------------------------------------------------- dispatch */

typedef struct xl_state {
    xl_server xs;
    mb_mcp_tool tools[NSPECS + 1];
    char *schemas[2 * NSPECS];
} xl_state;

static int dispatch(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const tool_spec *t = spec_of(mb_mcp_call_tool(call));
    json_t *a = args ? json_deep_copy(args) : json_object();
    int rc = validate(call, a, res);
    if (!rc) {
        /* defaults, so handlers can read every field */
        for (const param *p = t->params; p->name; p++) {
            if (json_object_get(a, p->name)) continue;
            json_object_set_new(a, p->name,
                                p->def ? json_loads(p->def, JSON_DECODE_ANY, NULL) : json_null());
        }
        rc = t->fn(call, a, res);
        if (((const xl_server *)mb_mcp_call_data(call))->v014)
            mb_mcp_structured(res, NULL); /* mcp 1.9.0 has no structured output */
    }
    json_decref(a);
    return rc;
}

static void state_free(void *p)
{
    xl_state *st = p;
    if (!st) return;
    mb_mcp_roots_free(st->xs.roots);
    for (size_t i = 0; i < 2 * NSPECS; i++) free(st->schemas[i]);
    free(st);
}

static const mb_mcp_info INFO_014 = {
    .name = "excel-mcp",
    .version = "1.9.0", /* the mcp SDK of Toolathlon's lock */
    .flavor = MB_MCP_PY_FASTMCP,
    .capabilities = "{\"experimental\": {}, \"prompts\": {\"listChanged\": false}, \"resources\": "
                    "{\"subscribe\": false, \"listChanged\": false}, \"tools\": {\"listChanged\": false}}",
    .max_protocol = "2025-03-26",
};

static const mb_mcp_info INFO = {
    .name = "excel-mcp",
    .version = "1.10.1", /* FastMCP reports the mcp SDK's version */
    .flavor = MB_MCP_PY_FASTMCP,
    .capabilities = "{\"experimental\": {}, \"prompts\": {\"listChanged\": false}, \"resources\": "
                    "{\"subscribe\": false, \"listChanged\": false}, \"tools\": {\"listChanged\": false}}",
    .max_protocol = "2025-06-18", /* mcp 1.10.1's newest */
};

int mb_srv_excel_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"allowed-dir", required_argument, 0, 'd'},
        {"upstream-version", required_argument, 0, 'u'},
        {0, 0, 0, 0},
    };
    int v014 = 0;
    *out = NULL;
    char *dirs[16];
    size_t ndirs = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'd' && ndirs < 16) dirs[ndirs++] = optarg;
        else if (c == 'u' && (!strcmp(optarg, "0.1.4") || !strcmp(optarg, "0.1.7")))
            v014 = !strcmp(optarg, "0.1.4");
        else if (c == 'u')
            return mb_err_set(err, MB_EINVAL, "--upstream-version: 0.1.7 or 0.1.4, not \"%s\"",
                              optarg);
        else return mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
    }
    /* "stdio" (upstream's transport argument) is accepted and ignored */
    for (int i = optind; i < argc; i++)
        if (strcmp(argv[i], "stdio"))
            return mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\" (only stdio is served)",
                              argv[i]);
    if (!ndirs) {
        struct stat st;
        dirs[ndirs++] = stat("/data", &st) == 0 ? "/data" : "/";
    }
    xl_state *st = mb_calloc(1, sizeof *st);
    st->xs.v014 = v014;
    int rc = mb_mcp_roots_new(dirs, ndirs, &st->xs.roots, err);
    if (rc) {
        state_free(st);
        return rc;
    }
    size_t nt = 0;
    for (size_t i = 0; i < NSPECS; i++) {
        if (!SPECS[i].fn || (v014 && since_017(SPECS[i].name))) continue;
        st->schemas[2 * i] = input_schema(&SPECS[i], v014);
        st->schemas[2 * i + 1] = v014 ? NULL : mb_fastmcp_output_schema(SPECS[i].name);
        st->tools[nt++] = (mb_mcp_tool){.name = SPECS[i].name,
                                     .description = SPECS[i].doc,
                                     .input_schema = st->schemas[2 * i],
                                     .output_schema = st->schemas[2 * i + 1],
                                     .fn = dispatch};
    }
    return mb_mcp_server_new_with_tools(v014 ? &INFO_014 : &INFO, st->tools, st, state_free, out, err);
}
