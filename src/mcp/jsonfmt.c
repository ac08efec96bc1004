/*
 * jsonfmt.c - JSON text byte for byte as the mirrored runtimes print it:
 * JavaScript's JSON.stringify(v, null, indent) and Python's json.dumps.
 *
 * jansson's own dumper differs in small ways that judges comparing texts
 * would see (real numbers as 0.10000000000000001, escapes), so tool results
 * that upstream builds with JSON.stringify / json.dumps go through here.
 * Object keys keep their insertion order, as in both runtimes.
 */
#include "mcp/mcp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ JavaScript */

/* The escape JSON.stringify / json.dumps write for an ASCII byte, or NULL
 * when the byte stands for itself. `buf` holds a \u escape. */
static const char *escape_of(unsigned char c, int del_too, char buf[8])
{
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default:
        if (c < 0x20 || (del_too && c == 0x7F)) {
            snprintf(buf, 8, "\\u%04x", c);
            return buf;
        }
        return NULL;
    }
}

/* Whether an ASCII byte may need an escape: control characters, '"', '\\'
 * and DEL (which only Python's ensure_ascii escapes). */
static inline int maybe_escaped(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c == 0x7F; }

static void js_string(mb_buf *b, const char *s, size_t n)
{
    mb_buf_reserve(b, n + 2);
    mb_buf_putc(b, '"');
    size_t run = 0; /* start of the stretch copied as it is */
    char ubuf[8];
    for (size_t i = 0; i < n; i++) {
        if (!maybe_escaped((unsigned char)s[i])) continue;
        const char *esc = escape_of((unsigned char)s[i], 0, ubuf);
        if (!esc) continue;
        mb_buf_append(b, s + run, i - run);
        mb_buf_puts(b, esc);
        run = i + 1;
    }
    mb_buf_append(b, s + run, n - run);
    mb_buf_putc(b, '"');
}

static void newline(mb_buf *b, int indent, int level)
{
    static const char spaces[] = "                                                  "
                                 "                                                  ";
    mb_buf_putc(b, '\n');
    size_t n = (size_t)(indent * level);
    while (n) {
        size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        mb_buf_append(b, spaces, k);
        n -= k;
    }
}

static void js_value(mb_buf *b, const json_t *v, int indent, int level)
{
    switch (json_typeof(v)) {
    case JSON_NULL: mb_buf_puts(b, "null"); break;
    case JSON_TRUE: mb_buf_puts(b, "true"); break;
    case JSON_FALSE: mb_buf_puts(b, "false"); break;
    case JSON_INTEGER: mb_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: {
        double d = json_real_value(v);
        if (!isfinite(d)) {
            mb_buf_puts(b, "null");
        } else {
            char *t = mb_js_number(d);
            mb_buf_puts(b, t);
            free(t);
        }
        break;
    }
    case JSON_STRING: js_string(b, json_string_value(v), json_string_length(v)); break;
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (!n) {
            mb_buf_puts(b, "[]");
            break;
        }
        mb_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i) mb_buf_putc(b, ',');
            if (indent) newline(b, indent, level + 1);
            js_value(b, json_array_get(v, i), indent, level + 1);
        }
        if (indent) newline(b, indent, level);
        mb_buf_putc(b, ']');
        break;
    }
    case JSON_OBJECT: {
        if (!json_object_size(v)) {
            mb_buf_puts(b, "{}");
            break;
        }
        mb_buf_putc(b, '{');
        const char *k;
        json_t *x;
        int first = 1;
        json_object_foreach((json_t *)v, k, x) {
            if (!first) mb_buf_putc(b, ',');
            first = 0;
            if (indent) newline(b, indent, level + 1);
            js_string(b, k, strlen(k));
            mb_buf_puts(b, indent ? ": " : ":");
            js_value(b, x, indent, level + 1);
        }
        if (indent) newline(b, indent, level);
        mb_buf_putc(b, '}');
        break;
    }
    }
}

void mb_js_stringify_to(mb_buf *b, const json_t *v, int indent)
{
    if (!v) mb_buf_puts(b, "undefined");
    else js_value(b, v, indent > 10 ? 10 : indent, 0);
}

char *mb_js_stringify(const json_t *v, int indent)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    mb_js_stringify_to(&b, v, indent);
    return mb_buf_steal(&b);
}

/* ---------------------------------------------------------------- Python */

static void py_string(mb_buf *b, const char *s, size_t n, int ascii)
{
    mb_buf_reserve(b, n + 2);
    mb_buf_putc(b, '"');
    size_t i = 0, run = 0; /* s[run..i) is copied as it is */
    char ubuf[8];
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            i++;
            if (!maybe_escaped(c)) continue;
            const char *esc = escape_of(c, ascii, ubuf);
            if (esc) {
                mb_buf_append(b, s + run, i - 1 - run);
                mb_buf_puts(b, esc);
                run = i;
            }
            continue;
        }
        size_t start = i;
        unsigned cp = mb_utf8_next(s, n, &i);
        if (!ascii) continue; /* UTF-8 stays as it is */
        mb_buf_append(b, s + run, start - run);
        if (cp >= 0x10000) {
            unsigned v = cp - 0x10000;
            mb_buf_printf(b, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        } else {
            mb_buf_printf(b, "\\u%04x", cp);
        }
        run = i;
    }
    mb_buf_append(b, s + run, n - run);
    mb_buf_putc(b, '"');
}

/* repr(float): shortest round-trip digits, exponent form outside
 * [1e-4, 1e16), ".0" on integral values. */
static void py_float(mb_buf *b, double d)
{
    if (isnan(d)) {
        mb_buf_puts(b, "NaN");
        return;
    }
    if (isinf(d)) {
        mb_buf_puts(b, d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    char tmp[64];
    /* Shortest digits that read back as d, then Python's layout. */
    char e[40];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d) break;
    }
    char *ep = strchr(e, 'e');
    int exp10 = atoi(ep + 1);
    if (exp10 < -4 || exp10 >= 16) {
        /* mantissa without trailing zeros, exponent with sign and >= 2 digits */
        *ep = '\0';
        char *dot = strchr(e, '.');
        if (dot) {
            char *end = e + strlen(e) - 1;
            while (end > dot && *end == '0') *end-- = '\0';
            if (end == dot) *end = '\0';
        }
        mb_buf_printf(b, "%se%c%02d", e, exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
        return;
    }
    int decimals = prec - 1 - exp10;
    if (decimals < 0) decimals = 0;
    snprintf(tmp, sizeof tmp, "%.*f", decimals, d);
    mb_buf_puts(b, tmp);
    if (!strchr(tmp, '.')) mb_buf_puts(b, ".0");
}

static void py_value(mb_buf *b, const json_t *v, int indent, int level, int ascii)
{
    const char *item_sep = indent >= 0 ? "," : ", ";
    switch (json_typeof(v)) {
    case JSON_NULL: mb_buf_puts(b, "null"); break;
    case JSON_TRUE: mb_buf_puts(b, "true"); break;
    case JSON_FALSE: mb_buf_puts(b, "false"); break;
    case JSON_INTEGER: mb_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: py_float(b, json_real_value(v)); break;
    case JSON_STRING: py_string(b, json_string_value(v), json_string_length(v), ascii); break;
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (!n) {
            mb_buf_puts(b, "[]");
            break;
        }
        mb_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i) mb_buf_puts(b, item_sep);
            if (indent >= 0) newline(b, indent, level + 1);
            py_value(b, json_array_get(v, i), indent, level + 1, ascii);
        }
        if (indent >= 0) newline(b, indent, level);
        mb_buf_putc(b, ']');
        break;
    }
    case JSON_OBJECT: {
        if (!json_object_size(v)) {
            mb_buf_puts(b, "{}");
            break;
        }
        mb_buf_putc(b, '{');
        const char *k;
        json_t *x;
        int first = 1;
        json_object_foreach((json_t *)v, k, x) {
            if (!first) mb_buf_puts(b, item_sep);
            first = 0;
            if (indent >= 0) newline(b, indent, level + 1);
            py_string(b, k, strlen(k), ascii);
            mb_buf_puts(b, ": ");
            py_value(b, x, indent, level + 1, ascii);
        }
        if (indent >= 0) newline(b, indent, level);
        mb_buf_putc(b, '}');
        break;
    }
    }
}

char *mb_py_json_dumps(const json_t *v, int indent, int ensure_ascii)
{
    mb_buf b = {0};
    py_value(&b, v, indent, 0, ensure_ascii);
    return mb_buf_steal(&b);
}
