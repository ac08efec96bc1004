/*
 * pyjson.c - what Python's json.loads says about text it refuses, for
 * import_emails' json_string (emails-mcp reports str(JSONDecodeError)): the
 * same walk as CPython's scanner (Modules/_json.c and json/decoder.py of
 * Python 3.12, upstream's image), so the first error, its wording and its
 * position (in characters, with line and column) are Python's. Also what
 * Python accepts and jansson does not (NaN, Infinity), so that the caller
 * does not call those errors.
 */
#include "servers/poste_email/poste.h"

#include <stdlib.h>
#include <string.h>

/* CPython raises RecursionError about this deep (it depends on the stack
 * the call already uses); the walk never goes deeper. */
#define MAX_DEPTH 990

typedef struct pj {
    const char *s;
    size_t n;
    const char *err; /* NULL while fine */
    size_t pos;      /* byte offset of the error */
    int depth;
    int recursion;   /* the error is a RecursionError (0: JSONDecodeError) */
    int nonstd;      /* NaN / Infinity seen */
} pj;

static size_t fail(pj *p, const char *msg, size_t at)
{
    if (!p->err) {
        p->err = msg;
        p->pos = at;
    }
    return SIZE_MAX;
}

static size_t ws(const pj *p, size_t i)
{
    while (i < p->n && strchr(" \t\n\r", p->s[i]) && p->s[i]) i++;
    return i;
}

static int lit(const pj *p, size_t i, const char *w)
{
    size_t l = strlen(w);
    return i + l <= p->n && !memcmp(p->s + i, w, l);
}

static int digit(const pj *p, size_t i) { return i < p->n && p->s[i] >= '0' && p->s[i] <= '9'; }

static int hex4(const pj *p, size_t i)
{
    for (size_t k = 0; k < 4; k++)
        if (i + k >= p->n || !strchr("0123456789abcdefABCDEF", p->s[i + k]) || !p->s[i + k])
            return 0;
    return 1;
}

/* i: after the opening quote. Returns the index after the closing one. */
static size_t string(pj *p, size_t i)
{
    size_t begin = i - 1;
    for (;;) {
        while (i < p->n && p->s[i] != '"' && p->s[i] != '\\') {
            if ((unsigned char)p->s[i] < 0x20) return fail(p, "Invalid control character at", i);
            i++;
        }
        if (i >= p->n) return fail(p, "Unterminated string starting at", begin);
        if (p->s[i] == '"') return i + 1;
        i++; /* the backslash */
        if (i >= p->n) return fail(p, "Unterminated string starting at", begin);
        if (p->s[i] != 'u') {
            if (!strchr("\"\\/bfnrt", p->s[i]) || !p->s[i])
                return fail(p, "Invalid \\escape", i - 1);
            i++;
            continue;
        }
        /* \uXXXX: four hex digits, and the closing quote still to come */
        if (i + 5 >= p->n || !hex4(p, i + 1))
            return fail(p, "Invalid \\uXXXX escape", i);
        i += 5;
    }
}

static size_t value(pj *p, size_t i);

static size_t number(pj *p, size_t i)
{
    size_t start = i;
    if (i < p->n && p->s[i] == '-') {
        i++;
        if (i >= p->n) return fail(p, "Expecting value", start);
    }
    if (i < p->n && p->s[i] >= '1' && p->s[i] <= '9') {
        while (digit(p, i)) i++;
    } else if (i < p->n && p->s[i] == '0') {
        i++;
    } else {
        return fail(p, "Expecting value", start);
    }
    if (i + 1 < p->n && p->s[i] == '.' && digit(p, i + 1)) {
        i += 2;
        while (digit(p, i)) i++;
    }
    if (i + 1 < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
        size_t e = i++;
        if (i + 1 < p->n && (p->s[i] == '-' || p->s[i] == '+')) i++;
        size_t d = i;
        while (digit(p, i)) i++;
        if (i == d) i = e;
    }
    return i;
}

static size_t nest(pj *p, size_t i, int array)
{
    if (++p->depth > MAX_DEPTH) {
        p->recursion = 1;
        return fail(p, array ? "maximum recursion depth exceeded while decoding a JSON array "
                               "from a unicode string"
                             : "maximum recursion depth exceeded while decoding a JSON "
                               "object from a unicode string", i);
    }
    i = ws(p, i);
    char close = array ? ']' : '}';
    if (i < p->n && p->s[i] == close) {
        p->depth--;
        return i + 1;
    }
    for (;;) {
        if (!array) {
            if (i >= p->n || p->s[i] != '"')
                return fail(p, "Expecting property name enclosed in double quotes", i);
            if ((i = string(p, i + 1)) == SIZE_MAX) return i;
            i = ws(p, i);
            if (i >= p->n || p->s[i] != ':') return fail(p, "Expecting ':' delimiter", i);
            i = ws(p, i + 1);
        }
        if ((i = value(p, i)) == SIZE_MAX) return i;
        i = ws(p, i);
        if (i < p->n && p->s[i] == close) {
            p->depth--;
            return i + 1;
        }
        if (i >= p->n || p->s[i] != ',') return fail(p, "Expecting ',' delimiter", i);
        i = ws(p, i + 1);
    }
}

static size_t value(pj *p, size_t i)
{
    if (i >= p->n) return fail(p, "Expecting value", i);
    switch (p->s[i]) {
    case '"': return string(p, i + 1);
    case '{': return nest(p, i + 1, 0);
    case '[': return nest(p, i + 1, 1);
    case 'n': if (lit(p, i, "null")) return i + 4; break;
    case 't': if (lit(p, i, "true")) return i + 4; break;
    case 'f': if (lit(p, i, "false")) return i + 5; break;
    case 'N': if (lit(p, i, "NaN")) return p->nonstd = 1, i + 3; break;
    case 'I': if (lit(p, i, "Infinity")) return p->nonstd = 1, i + 8; break;
    case '-': if (lit(p, i, "-Infinity")) return p->nonstd = 1, i + 9; break;
    default: break;
    }
    return number(p, i);
}

int pe_py_json_check(const char *s, size_t n, char **msg, int *nonstd)
{
    pj p = {.s = s, .n = n};
    *msg = NULL;
    if (nonstd) *nonstd = 0;
    if (n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) {
        fail(&p, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
    } else {
        size_t i = value(&p, ws(&p, 0));
        if (i != SIZE_MAX && (i = ws(&p, i)) != n) fail(&p, "Extra data", i);
    }
    if (!p.err) {
        if (nonstd) *nonstd = p.nonstd;
        return 0;
    }
    if (p.recursion) {
        *msg = mb_strdup(p.err);
        return -2;
    }
    /* Python counts characters: line, column and char from the byte offset */
    size_t chars = 0, line = 1, line_start = 0;
    for (size_t i = 0; i < p.pos && i < n; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80) chars++;
        if (s[i] == '\n') {
            line++;
            line_start = chars;
        }
    }
    *msg = mb_asprintf("%s: line %zu column %zu (char %zu)", p.err, line, chars - line_start + 1,
                       chars);
    return -1;
}

char *pe_py_json_std(const char *s, size_t n, size_t *out_n)
{
    mb_buf b = {0};
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_str) {
            if (s[i] == '\\' && i + 1 < n) {
                mb_buf_append(&b, s + i, 2);
                i++;
                continue;
            }
            if (s[i] == '"') in_str = 0;
            mb_buf_putc(&b, s[i]);
            continue;
        }
        if (s[i] == '"') in_str = 1;
        size_t l = n - i >= 3 && !memcmp(s + i, "NaN", 3) ? 3
                 : n - i >= 8 && !memcmp(s + i, "Infinity", 8) ? 8
                 : n - i >= 9 && !memcmp(s + i, "-Infinity", 9) ? 9 : 0;
        if (l) {
            mb_buf_puts(&b, "1.0"); /* a float, true, as NaN and inf are */
            i += l - 1;
            continue;
        }
        mb_buf_putc(&b, s[i]);
    }
    *out_n = b.len;
    mb_buf_putc(&b, 0);
    return mb_buf_steal(&b);
}
