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

#endif /* MB_SERVERS_PYSCHEMA_H */
