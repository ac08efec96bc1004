/*
 * zod3.h - argument checks with zod 3's verdicts and texts, for upstream
 * servers that run `Schema.safeParse(args)` themselves and print the error
 * (server-filesystem 2025.7.1: "Invalid arguments for read_file: " followed
 * by ZodError#message, the issue list as JSON.stringify(issues, null, 2)).
 *
 * The schema is the JSON Schema that zod-to-json-schema printed for the zod
 * schema - the text the server lists in tools/list - read back as zod types:
 *   {"type":"object","properties":{..},"required":[..]}  z.object (unknown keys
 *                                                        are stripped, not reported)
 *   {"type":"string"|"number"|"boolean"}                z.string() / number() / boolean()
 *   {"type":"array","items":S}                           z.array(S)
 *   {"type":"string","enum":[..]}                        z.enum([..])
 *   a property missing from "required"                   .optional()
 *   "default": V                                         .default(V), filled in when absent
 * Issues come in zod's order (properties in schema order, array items in
 * index order) with zod's fields and English messages: "Required",
 * "Expected string, received number", "Invalid enum value. Expected 'a' |
 * 'b', received 'c'".
 */
#ifndef MB_SERVERS_ZOD3_H
#define MB_SERVERS_ZOD3_H

#include <jansson.h>

#include "util/util.h"

/*
 * Checks `value` (NULL = undefined, e.g. a call without "arguments") against
 * `schema`. Returns 0 when it passes, with absent properties that have a
 * default filled into `value`; else MB_EINVAL with *issues (caller decrefs)
 * set to zod's issue array.
 */
int mb_zod3_check(const json_t *schema, json_t *value, json_t **issues);

/* ZodError#message for an issue array: JSON.stringify(issues, null, 2).
 * Caller frees. */
char *mb_zod3_message(const json_t *issues);

#endif /* MB_SERVERS_ZOD3_H */
