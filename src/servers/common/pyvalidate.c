/*
 * pyvalidate.c - the pieces of pydantic's lax-mode argument validation that the
 * FastMCP-served Python upstreams (excel, word, powerpoint) share: the Python
 * type name of a JSON value, the ValidationError line format, the str/int/float
 * to bool and str to int coercions; and FastMCP's field titles and the
 * <tool>Arguments / <tool>Output schemas of excel and google_cloud.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/common/pyschema.h"

const char *mb_py_type_name(const json_t *v)
{
    if (!v) return "NoneType";
    switch (json_typeof(v)) {
    case JSON_STRING: return "str";
    case JSON_INTEGER: return "int";
    case JSON_REAL: return "float";
    case JSON_TRUE: case JSON_FALSE: return "bool";
    case JSON_NULL: return "NoneType";
    case JSON_ARRAY: return "list";
    default: return "dict";
    }
}

void mb_pyv_add(mb_pyv_errs *e, const char *loc, const char *msg, const char *type, json_t *v)
{
    mb_buf r = {0};
    mb_py_repr_json(&r, v);
    mb_buf_printf(&e->text, "\n%s\n  %s [type=%s, input_value=", loc, msg, type);
    size_t len = e->shorten ? mb_utf8_length(r.data, r.len) : 0;
    if (len > 50) { /* pydantic_core shortens long reprs */
        size_t i = 0, k = 0;
        while (k < 25) mb_utf8_next(r.data, r.len, &i), k++;
        size_t j = i;
        while (k < len - 24) mb_utf8_next(r.data, r.len, &j), k++;
        mb_buf_printf(&e->text, "%.*s...%s", (int)i, r.data, r.data + j);
    } else {
        mb_buf_append(&e->text, r.data, r.len);
    }
    mb_buf_printf(&e->text, ", input_type=%s]\n    For further information visit "
                            "https://errors.pydantic.dev/%s/v/%s",
                  mb_py_type_name(v), e->version, type);
    mb_buf_free(&r);
    e->n++;
}

int mb_py_lax_bool(const json_t *v, int floats, int *out)
{
    if (json_is_boolean(v)) return *out = json_is_true(v), 1;
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
        return *out = (int)json_integer_value(v), 1;
    if (floats && json_is_real(v) && (json_real_value(v) == 0.0 || json_real_value(v) == 1.0))
        return *out = json_real_value(v) == 1.0, 1;
    if (json_is_string(v)) {
        static const char *const T[] = {"1", "on", "t", "true", "y", "yes", NULL};
        static const char *const F[] = {"0", "off", "f", "false", "n", "no", NULL};
        for (int i = 0; T[i]; i++)
            if (!strcasecmp(json_string_value(v), T[i])) return *out = 1, 1;
        for (int i = 0; F[i]; i++)
            if (!strcasecmp(json_string_value(v), F[i])) return *out = 0, 1;
    }
    return 0;
}

int mb_py_int_str(const char *s, long long *out)
{
    char *end;
    while (*s == ' ' || *s == '\t' || *s == '\n') s++;
    long long x = strtoll(s, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n') end++;
    if (!*s || *end) return 0;
    *out = x;
    return 1;
}

char *mb_py_field_title(const char *name)
{
    mb_buf t = {0};
    int up = 1;
    for (const char *p = name; *p; p++) {
        if (*p == '_') {
            mb_buf_putc(&t, ' ');
            up = 1;
            continue;
        }
        mb_buf_putc(&t, up && *p >= 'a' && *p <= 'z' ? (char)(*p - 32) : *p);
        up = 0;
    }
    return mb_buf_steal(&t);
}

char *mb_fastmcp_input_schema(const char *tool, json_t *props, json_t *required)
{
    json_t *s = json_object();
    json_object_set_new(s, "properties", props);
    if (json_array_size(required)) json_object_set_new(s, "required", required);
    else json_decref(required);
    char *title = mb_asprintf("%sArguments", tool);
    json_object_set_new(s, "title", json_string(title));
    json_object_set_new(s, "type", json_string("object"));
    free(title);
    char *text = json_dumps(s, JSON_PRESERVE_ORDER | JSON_COMPACT);
    json_decref(s);
    return text;
}

char *mb_fastmcp_output_schema(const char *tool)
{
    return mb_asprintf("{\"properties\":{\"result\":{\"title\":\"Result\",\"type\":\"string\"}},"
                       "\"required\":[\"result\"],\"title\":\"%sOutput\",\"type\":\"object\"}",
                       tool);
}
