/*
 * pyschema.c - a small jsonschema (Draft 2020-12 subset) validator that reports
 * the error Python's jsonschema.best_match would pick (see pyschema.h).
 *
 * best_match keeps the most relevant error: the one with the shortest path
 * (errors about the arguments object itself beat errors about one property),
 * the first one in schema-keyword order among equals; for anyOf it descends
 * into the sub-errors only when one of them is strictly more relevant.
 */
#include "servers/common/pyschema.h"

#include <math.h>
#include <string.h>

#include "servers/common/pyfmt.h"

typedef struct verr {
    int depth;   /* length of the instance path */
    char *msg;
} verr;

typedef struct verrs {
    verr *v;
    size_t n, cap;
} verrs;

static void add_err(verrs *e, int depth, char *msg)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 8;
        e->v = mb_realloc(e->v, e->cap * sizeof(verr));
    }
    e->v[e->n++] = (verr){depth, msg};
}

static void free_errs(verrs *e)
{
    for (size_t i = 0; i < e->n; i++) free(e->v[i].msg);
    free(e->v);
}

void mb_py_repr_json(mb_buf *out, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL: mb_buf_puts(out, "None"); break;
    case JSON_TRUE: mb_buf_puts(out, "True"); break;
    case JSON_FALSE: mb_buf_puts(out, "False"); break;
    case JSON_INTEGER: mb_buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: mb_py_float_str(out, json_real_value(v)); break;
    case JSON_STRING: mb_py_repr_str(out, json_string_value(v), json_string_length(v)); break;
    case JSON_ARRAY: {
        mb_buf_putc(out, '[');
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (i) mb_buf_puts(out, ", ");
            mb_py_repr_json(out, x);
        }
        mb_buf_putc(out, ']');
        break;
    }
    case JSON_OBJECT: {
        mb_buf_putc(out, '{');
        const char *k;
        json_t *x;
        int first = 1;
        json_object_foreach(v, k, x) {
            if (!first) mb_buf_puts(out, ", ");
            first = 0;
            mb_py_repr_str(out, k, strlen(k));
            mb_buf_puts(out, ": ");
            mb_py_repr_json(out, x);
        }
        mb_buf_putc(out, '}');
        break;
    }
    }
}

static int is_type(json_t *v, const char *t)
{
    if (!strcmp(t, "string")) return json_is_string(v);
    if (!strcmp(t, "integer"))
        return json_is_integer(v) ||
               (json_is_real(v) && floor(json_real_value(v)) == json_real_value(v));
    if (!strcmp(t, "number")) return json_is_number(v);
    if (!strcmp(t, "boolean")) return json_is_boolean(v);
    if (!strcmp(t, "array")) return json_is_array(v);
    if (!strcmp(t, "object")) return json_is_object(v);
    if (!strcmp(t, "null")) return json_is_null(v);
    return 1;
}

static char *repr_of(json_t *v)
{
    mb_buf b = {0};
    mb_py_repr_json(&b, v);
    return mb_buf_steal(&b);
}

static void validate(json_t *schema, json_t *inst, int depth, verrs *errs);

/* anyOf: one error for the keyword; best_match would descend only when one
 * sub-error is strictly more relevant than the others. */
static void check_any_of(json_t *alts, json_t *inst, int depth, verrs *errs)
{
    size_t i;
    json_t *alt;
    verrs all = {0};
    json_array_foreach(alts, i, alt) {
        verrs sub = {0};
        validate(alt, inst, depth, &sub);
        if (sub.n == 0) {
            free_errs(&sub);
            free_errs(&all);
            return;
        }
        for (size_t k = 0; k < sub.n; k++) add_err(&all, sub.v[k].depth, sub.v[k].msg);
        free(sub.v);
    }
    /* the two least relevant (deepest) context errors tie unless depths differ */
    int min = 1 << 30, count_min = 0;
    size_t at = 0;
    for (size_t k = 0; k < all.n; k++) {
        int rel = -all.v[k].depth;
        if (rel < min) min = rel, count_min = 1, at = k;
        else if (rel == min) count_min++;
    }
    char *r = repr_of(inst);
    if (all.n >= 2 && count_min == 1) {
        add_err(errs, all.v[at].depth, mb_strdup(all.v[at].msg));
    } else {
        add_err(errs, depth, mb_asprintf("%s is not valid under any of the given schemas", r));
    }
    free(r);
    free_errs(&all);
}

static void validate(json_t *schema, json_t *inst, int depth, verrs *errs)
{
    if (!json_is_object(schema)) return;
    const char *kw;
    json_t *val;
    json_object_foreach(schema, kw, val) {
        if (!strcmp(kw, "type")) {
            int ok = 0;
            mb_buf names = {0};
            if (json_is_string(val)) {
                ok = is_type(inst, json_string_value(val));
                mb_buf_printf(&names, "'%s'", json_string_value(val));
            } else if (json_is_array(val)) {
                size_t i;
                json_t *t;
                json_array_foreach(val, i, t) {
                    if (json_is_string(t) && is_type(inst, json_string_value(t))) ok = 1;
                    mb_buf_printf(&names, "%s'%s'", i ? ", " : "", json_string_value(t));
                }
            } else {
                ok = 1;
            }
            if (!ok) {
                char *r = repr_of(inst);
                add_err(errs, depth, mb_asprintf("%s is not of type %s", r, names.data));
                free(r);
            }
            mb_buf_free(&names);
        } else if (!strcmp(kw, "properties") && json_is_object(inst) && json_is_object(val)) {
            const char *pname;
            json_t *psch;
            json_object_foreach(val, pname, psch) {
                json_t *pv = json_object_get(inst, pname);
                if (pv) validate(psch, pv, depth + 1, errs);
            }
        } else if (!strcmp(kw, "required") && json_is_object(inst) && json_is_array(val)) {
            size_t i;
            json_t *r;
            json_array_foreach(val, i, r) {
                if (json_is_string(r) && !json_object_get(inst, json_string_value(r))) {
                    mb_buf b = {0};
                    mb_py_repr_str(&b, json_string_value(r), json_string_length(r));
                    mb_buf_puts(&b, " is a required property");
                    add_err(errs, depth, mb_buf_steal(&b));
                }
            }
        } else if (!strcmp(kw, "items") && json_is_array(inst) && json_is_object(val)) {
            size_t i;
            json_t *x;
            json_array_foreach(inst, i, x) validate(val, x, depth + 1, errs);
        } else if (!strcmp(kw, "anyOf") && json_is_array(val)) {
            check_any_of(val, inst, depth, errs);
        } else if (!strcmp(kw, "enum") && json_is_array(val)) {
            size_t i;
            json_t *x;
            int found = 0;
            json_array_foreach(val, i, x) if (json_equal(x, inst)) found = 1;
            if (!found) {
                char *r = repr_of(inst), *l = repr_of(val);
                add_err(errs, depth, mb_asprintf("%s is not one of %s", r, l));
                free(r), free(l);
            }
        } else if ((!strcmp(kw, "maximum") || !strcmp(kw, "minimum")) && json_is_number(val) &&
                   json_is_number(inst) && !json_is_boolean(inst)) {
            double lim = json_number_value(val), x = json_number_value(inst);
            int bad = kw[1] == 'a' ? x > lim : x < lim;
            if (bad) {
                char *r = repr_of(inst), *l = repr_of(val);
                add_err(errs, depth,
                        mb_asprintf("%s is %s than the %s of %s", r,
                                    kw[1] == 'a' ? "greater" : "less", kw, l));
                free(r), free(l);
            }
        }
    }
}

int mb_pyschema_check(json_t *schema, json_t *instance, mb_buf *msg)
{
    verrs errs = {0};
    validate(schema, instance, 0, &errs);
    if (!errs.n) return 0;
    size_t best = 0;
    for (size_t i = 1; i < errs.n; i++)
        if (-errs.v[i].depth > -errs.v[best].depth) best = i;
    mb_buf_puts(msg, errs.v[best].msg);
    free_errs(&errs);
    return 1;
}
