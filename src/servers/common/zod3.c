/*
 * zod3.c - zod 3's safeParse verdicts for the schema subset in zod3.h.
 *
 * zod 3 never stops at the first problem: an object reports every property
 * in its shape's order, an array every element; a value of the wrong type
 * gives one invalid_type issue and is not looked into further. The issue
 * objects keep zod's key order (addIssueToContext spreads the issue data,
 * then adds path and message), since the upstream prints them as JSON.
 */
#include "servers/common/zod3.h"

#include <string.h>

#include "mcp/mcp.h"

static int is_type(const json_t *v, const char *type)
{
    return v && !strcmp(mb_mcp_zod_type(v), type);
}

/* util.joinValues: 'a' | 'b' (non-strings as they print) */
static char *join_values(const json_t *values)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t i;
    json_t *x;
    json_array_foreach(values, i, x) {
        if (i) mb_buf_puts(&b, " | ");
        if (json_is_string(x)) {
            mb_buf_putc(&b, '\'');
            mb_buf_append(&b, json_string_value(x), json_string_length(x));
            mb_buf_putc(&b, '\'');
        } else {
            char *s = mb_js_stringify(x, 0);
            mb_buf_puts(&b, s);
            free(s);
        }
    }
    return mb_buf_steal(&b);
}

/* {code: "invalid_type", expected, received, path, message}; an enum puts
 * expected and received first, as ZodEnum builds its issue that way. */
static void invalid_type(json_t *issues, const char *expected, const json_t *v, const json_t *path,
                         int enum_order)
{
    const char *received = mb_mcp_zod_type(v);
    char *msg = v ? mb_asprintf("Expected %s, received %s", expected, received) : mb_strdup("Required");
    json_t *issue;
    if (enum_order)
        issue = json_pack("{s:s, s:s, s:s, s:O, s:s}", "expected", expected, "received", received,
                          "code", "invalid_type", "path", path, "message", msg);
    else
        issue = json_pack("{s:s, s:s, s:s, s:O, s:s}", "code", "invalid_type", "expected", expected,
                          "received", received, "path", path, "message", msg);
    json_array_append_new(issues, issue);
    free(msg);
}

static void check(const json_t *s, json_t *v, json_t *path, json_t *issues);

static json_t *path_with(const json_t *path, json_t *step)
{
    json_t *p = json_copy((json_t *)path);
    json_array_append_new(p, step);
    return p;
}

static int is_required(const json_t *s, const char *key)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(s, "required"), i, r) if (!strcmp(json_string_value(r), key)) return 1;
    return 0;
}

static void check_object(const json_t *s, json_t *v, json_t *path, json_t *issues)
{
    if (!is_type(v, "object")) {
        invalid_type(issues, "object", v, path, 0);
        return;
    }
    const char *key;
    json_t *prop;
    json_object_foreach(json_object_get(s, "properties"), key, prop) {
        json_t *x = json_object_get(v, key);
        if (!x) {
            json_t *def = json_object_get(prop, "default");
            if (def) {
                json_object_set_new(v, key, json_deep_copy(def));
                continue;
            }
            if (!is_required(s, key)) continue; /* .optional() */
        }
        json_t *p = path_with(path, json_string(key));
        check(prop, x, p, issues);
        json_decref(p);
    }
}

static void check(const json_t *s, json_t *v, json_t *path, json_t *issues)
{
    const char *type = json_string_value(json_object_get(s, "type"));
    json_t *values = json_object_get(s, "enum");
    if (json_is_array(values)) {
        if (!is_type(v, "string")) {
            char *exp = join_values(values);
            invalid_type(issues, exp, v, path, 1);
            free(exp);
            return;
        }
        size_t i;
        json_t *x;
        json_array_foreach(values, i, x) if (json_equal(x, v)) return;
        char *exp = join_values(values);
        char *msg = mb_asprintf("Invalid enum value. Expected %s, received '%s'", exp, json_string_value(v));
        json_array_append_new(issues, json_pack("{s:O, s:s, s:O, s:O, s:s}", "received", v, "code",
                                                "invalid_enum_value", "options", values, "path", path,
                                                "message", msg));
        free(msg);
        free(exp);
        return;
    }
    if (!type) return; /* z.any() */
    if (!strcmp(type, "object")) {
        check_object(s, v, path, issues);
        return;
    }
    if (!strcmp(type, "array")) {
        if (!is_type(v, "array")) {
            invalid_type(issues, "array", v, path, 0);
            return;
        }
        const json_t *items = json_object_get(s, "items");
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            json_t *p = path_with(path, json_integer((json_int_t)i));
            if (items) check(items, x, p, issues);
            json_decref(p);
        }
        return;
    }
    if (!is_type(v, type)) invalid_type(issues, type, v, path, 0);
}

int mb_zod3_check(const json_t *schema, json_t *value, json_t **issues)
{
    json_t *list = json_array(), *path = json_array();
    check(schema, value, path, list);
    json_decref(path);
    if (json_array_size(list) == 0) {
        json_decref(list);
        *issues = NULL;
        return MB_OK;
    }
    *issues = list;
    return MB_EINVAL;
}

char *mb_zod3_message(const json_t *issues) { return mb_js_stringify(issues, 2); }
