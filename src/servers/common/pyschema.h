/*
 * pyschema.h - input validation the way the Python MCP SDK does it.
 *
 * The low-level Python SDK (mcp >= 1.10) validates tools/call arguments with
 * jsonschema.validate(arguments, tool.inputSchema) before the server's handler
 * runs, and answers an isError result "Input validation error: <message>" with
 * jsonschema's best_match message. The Python-upstream servers mirrored here
 * (cli-mcp-server, mcp-server-git) therefore show texts like
 *   'repo_path' is a required property
 *   5 is not of type 'string'
 *   None is not valid under any of the given schemas
 * This module reproduces that for the schema subset those servers use: type,
 * properties, required, items, anyOf, enum, minimum/maximum.
 */
#ifndef MB_SERVERS_PYSCHEMA_H
#define MB_SERVERS_PYSCHEMA_H

#include <jansson.h>

#include "util/util.h"

/* Returns 1 and appends jsonschema's best-match message to `msg` when `instance`
 * does not validate against `schema`; returns 0 when it does. */
int mb_pyschema_check(json_t *schema, json_t *instance, mb_buf *msg);

/* Python repr() of a JSON value as json.loads would produce it
 * (None/True/False, 'str', [a, b], {'k': v}). */
void mb_py_repr_json(mb_buf *out, json_t *v);

/* pydantic lax-mode validation pieces (pyvalidate.c), shared by the
 * FastMCP-served Python upstreams. */

/* A ValidationError being built: n lines in text. version is the pydantic
 * minor in the errors.pydantic.dev URL ("2.12"); shorten makes input_value
 * reprs over 50 characters shortened to 25...24 as pydantic_core does. */
typedef struct mb_pyv_errs {
    int n;
    mb_buf text;
    const char *version;
    int shorten;
} mb_pyv_errs;

/* Python type name of a JSON value (str, int, float, bool, NoneType, list, dict);
 * NoneType for NULL. */
const char *mb_py_type_name(const json_t *v);

/* Appends one "\n<loc>\n  <msg> [type=<type>, input_value=..., input_type=...]
 *     For further information visit <url>" entry and counts it. */
void mb_pyv_add(mb_pyv_errs *e, const char *loc, const char *msg, const char *type, json_t *v);

/* pydantic's lax bool: bools, ints 0/1, (with floats) 0.0/1.0, and the strings
 * 1/on/t/true/y/yes and 0/off/f/false/n/no (any case). Returns 1 and sets *out
 * when v converts. */
int mb_py_lax_bool(const json_t *v, int floats, int *out);

/* A decimal int string, surrounding spaces/tabs/newlines allowed. Returns 1 and
 * sets *out when the whole string parses. */
int mb_py_int_str(const char *s, long long *out);

/* FastMCP's schemas (pyvalidate.c). The title pydantic gives a field
 * ("sheet_name" -> "Sheet Name"); malloc'ed. */
char *mb_py_field_title(const char *name);
/* The "<tool>Arguments" object schema text around props and required
 * (both stolen; required left out when empty). */
char *mb_fastmcp_input_schema(const char *tool, json_t *props, json_t *required);
/* The "<tool>Output" {result: str} schema text of a `-> str` tool (mcp >= 1.10). */
char *mb_fastmcp_output_schema(const char *tool);

#endif /* MB_SERVERS_PYSCHEMA_H */
