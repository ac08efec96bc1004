/*
 * validate.c - checks tool arguments (and structuredContent) against the
 * JSON Schema a tool declares, reporting problems with the texts zod 4 gives
 * through the TypeScript SDK, and filling in "default" values as zod does.
 *
 * Supported keywords: type (single or list), properties, required,
 * additionalProperties:false, items, enum, const, minItems/maxItems,
 * minLength/maxLength, minimum/maximum (+exclusive), anyOf/oneOf, default.
 * Others are accepted silently. Issues come in schema order (properties in
 * declaration order, then array items), joined by '\n', each followed by
 * " at <path>" (the SDK's getDotPath: a.b[0].c).
 */
#include "mcp/mcp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct seg {
    const char *key; /* NULL for an index */
    size_t index;
} seg;

typedef struct ctx {
    seg path[64];
    int depth;
    mb_buf out;
    int count;
} ctx;

const char *mb_mcp_zod_type(const json_t *v)
{
    if (!v) return "undefined";
    switch (json_typeof(v)) {
    case JSON_NULL: return "null";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_ARRAY: return "array";
    default: return "object";
    }
}

static void issue(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void issue(ctx *c, const char *fmt, ...)
{
    if (c->count++) mb_buf_putc(&c->out, '\n');
    va_list ap;
    va_start(ap, fmt);
    mb_buf_vprintf(&c->out, fmt, ap);
    va_end(ap);
    if (c->depth > 0) {
        mb_buf_puts(&c->out, " at ");
        for (int i = 0; i < c->depth; i++) {
            const seg *s = &c->path[i];
            if (i == 0) {
                if (s->key) mb_buf_puts(&c->out, s->key);
                else mb_buf_printf(&c->out, "%zu", s->index);
            } else if (s->key) {
                mb_buf_printf(&c->out, ".%s", s->key);
            } else {
                mb_buf_printf(&c->out, "[%zu]", s->index);
            }
        }
    }
}

static int type_matches(const char *t, const json_t *v)
{
    if (!v) return 0;
    if (!strcmp(t, "string")) return json_is_string(v);
    if (!strcmp(t, "number")) return json_is_number(v);
    if (!strcmp(t, "integer"))
        return json_is_integer(v) || (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)));
    if (!strcmp(t, "boolean")) return json_is_boolean(v);
    if (!strcmp(t, "array")) return json_is_array(v);
    if (!strcmp(t, "object")) return json_is_object(v);
    if (!strcmp(t, "null")) return json_is_null(v);
    return 1;
}

static char *num_text(const json_t *n) { return mb_js_number(json_number_value(n)); }

static void check(ctx *c, const json_t *schema, json_t *v);

/* True if `v` passes `schema` with no issues (used for anyOf). */
static int passes(const json_t *schema, json_t *v)
{
    ctx sub = {0};
    json_t *copy = v ? json_deep_copy(v) : NULL;
    check(&sub, schema, copy);
    json_decref(copy);
    mb_buf_free(&sub.out);
    return sub.count == 0;
}

static void check_enum(ctx *c, const json_t *en, const json_t *v)
{
    size_t i;
    json_t *e;
    json_array_foreach(en, i, e) if (v && json_equal(e, (json_t *)v)) return;
    mb_buf list = {0};
    json_array_foreach(en, i, e) {
        char *t = mb_js_stringify(e, 0);
        if (i) mb_buf_putc(&list, '|');
        mb_buf_puts(&list, t);
        free(t);
    }
    if (json_array_size(en) == 1) issue(c, "Invalid input: expected %s", list.data);
    else issue(c, "Invalid option: expected one of %s", list.data ? list.data : "");
    mb_buf_free(&list);
}

static void check_object(ctx *c, const json_t *schema, json_t *v)
{
    json_t *props = json_object_get(schema, "properties");
    json_t *req = json_object_get(schema, "required");
    const char *k;
    json_t *ps;
    json_object_foreach(props, k, ps) {
        json_t *pv = json_object_get(v, k);
        int required = 0;
        size_t i;
        json_t *r;
        json_array_foreach(req, i, r) if (json_is_string(r) && !strcmp(json_string_value(r), k)) required = 1;
        if (!pv) {
            json_t *def = json_object_get(ps, "default");
            if (def) {
                json_object_set_new(v, k, json_deep_copy(def));
                continue;
            }
            if (!required) continue;
        }
        if (c->depth < 64) c->path[c->depth] = (seg){.key = k};
        c->depth++;
        check(c, ps, pv);
        c->depth--;
    }
    json_t *ap = json_object_get(schema, "additionalProperties");
    if (json_is_false(ap)) {
        mb_buf extra = {0};
        int n = 0;
        json_t *x;
        json_object_foreach(v, k, x) {
            if (json_object_get(props, k)) continue;
            json_t *ks = json_string(k);
            char *q = mb_js_stringify(ks, 0);
            json_decref(ks);
            if (n++) mb_buf_puts(&extra, ", ");
            mb_buf_puts(&extra, q);
            free(q);
        }
        if (n) issue(c, "Unrecognized key%s: %s", n > 1 ? "s" : "", extra.data);
        mb_buf_free(&extra);
    }
}

static void check(ctx *c, const json_t *schema, json_t *v)
{
    if (!json_is_object(schema)) return;
    json_t *any = json_object_get(schema, "anyOf");
    if (!any) any = json_object_get(schema, "oneOf");
    if (json_is_array(any)) {
        size_t i;
        json_t *alt;
        json_array_foreach(any, i, alt) if (passes(alt, v)) {
            check(c, alt, v); /* applies defaults of the matching branch */
            return;
        }
        issue(c, "Invalid input");
        return;
    }
    json_t *en = json_object_get(schema, "enum");
    if (json_is_array(en)) {
        check_enum(c, en, v);
        return;
    }
    json_t *cst = json_object_get(schema, "const");
    if (cst) {
        if (!v || !json_equal(cst, v)) {
            char *t = mb_js_stringify(cst, 0);
            issue(c, "Invalid input: expected %s", t);
            free(t);
        }
        return;
    }
    json_t *type = json_object_get(schema, "type");
    const char *t = json_string_value(type);
    if (json_is_array(type)) {
        size_t i;
        json_t *tv;
        t = NULL;
        json_array_foreach(type, i, tv) {
            const char *ts = json_string_value(tv);
            if (!ts) continue;
            if (type_matches(ts, v)) {
                t = ts;
                break;
            }
        }
        if (!t) {
            const char *first = json_string_value(json_array_get(type, 0));
            issue(c, "Invalid input: expected %s, received %s", first ? first : "value", mb_mcp_zod_type(v));
            return;
        }
    }
    if (!t) {
        if (!v) issue(c, "Invalid input: expected nonoptional, received undefined");
        return;
    }
    if (!type_matches(t, v)) {
        if (!strcmp(t, "integer") && json_is_number(v))
            issue(c, "Invalid input: expected int, received number");
        else
            issue(c, "Invalid input: expected %s, received %s", !strcmp(t, "integer") ? "number" : t,
                  mb_mcp_zod_type(v));
        return;
    }
    if (json_is_string(v)) {
        size_t n = mb_utf16_len(json_string_value(v), json_string_length(v));
        json_t *mn = json_object_get(schema, "minLength"), *mx = json_object_get(schema, "maxLength");
        if (json_is_number(mn) && (double)n < json_number_value(mn)) {
            char *s = num_text(mn);
            issue(c, "Too small: expected string to have >=%s characters", s);
            free(s);
        }
        if (json_is_number(mx) && (double)n > json_number_value(mx)) {
            char *s = num_text(mx);
            issue(c, "Too big: expected string to have <=%s characters", s);
            free(s);
        }
    } else if (json_is_number(v)) {
        double d = json_number_value(v);
        json_t *b;
        char *s;
        if (json_is_number(b = json_object_get(schema, "minimum")) && d < json_number_value(b)) {
            issue(c, "Too small: expected number to be >=%s", s = num_text(b));
            free(s);
        }
        if (json_is_number(b = json_object_get(schema, "exclusiveMinimum")) && d <= json_number_value(b)) {
            issue(c, "Too small: expected number to be >%s", s = num_text(b));
            free(s);
        }
        if (json_is_number(b = json_object_get(schema, "maximum")) && d > json_number_value(b)) {
            issue(c, "Too big: expected number to be <=%s", s = num_text(b));
            free(s);
        }
        if (json_is_number(b = json_object_get(schema, "exclusiveMaximum")) && d >= json_number_value(b)) {
            issue(c, "Too big: expected number to be <%s", s = num_text(b));
            free(s);
        }
    } else if (json_is_array(v)) {
        json_t *items = json_object_get(schema, "items");
        size_t i;
        json_t *el;
        json_array_foreach(v, i, el) {
            if (c->depth < 64) c->path[c->depth] = (seg){.key = NULL, .index = i};
            c->depth++;
            check(c, items, el);
            c->depth--;
        }
        size_t n = json_array_size(v);
        json_t *mn = json_object_get(schema, "minItems"), *mx = json_object_get(schema, "maxItems");
        if (json_is_number(mn) && (double)n < json_number_value(mn)) {
            char *s = num_text(mn);
            issue(c, "Too small: expected array to have >=%s items", s);
            free(s);
        }
        if (json_is_number(mx) && (double)n > json_number_value(mx)) {
            char *s = num_text(mx);
            issue(c, "Too big: expected array to have <=%s items", s);
            free(s);
        }
    } else if (json_is_object(v)) {
        check_object(c, schema, v);
    }
}

int mb_mcp_validate_zod(const json_t *schema, json_t *args, char **msg)
{
    ctx c = {0};
    check(&c, schema, args);
    if (!c.count) {
        mb_buf_free(&c.out);
        if (msg) *msg = NULL;
        return 0;
    }
    if (msg) *msg = mb_buf_steal(&c.out);
    else mb_buf_free(&c.out);
    return MB_EINVAL;
}
