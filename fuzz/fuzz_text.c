/*
 * fuzz_text.c - the UTF-8 module of util/ (validation, repair, cuts, copies,
 * mb_text_format), the runtime text rules of mcp/ (UTF-16 length, JS
 * whitespace, toLowerCase, localeCompare, minimatch) and the JSON printers
 * (mb_js_stringify, mb_py_json_dumps), each checked against the rule it
 * promises: repaired text is valid, a cut never splits a character, a valid
 * string survives every copy unchanged, printed JSON parses back to the same
 * value.
 *
 * Input: the first byte picks the cap used for copies and formats; the rest
 * is the text. For JSON, the text is also parsed with jansson.
 */
#include "fuzz.h"
#include "mcp/mcp.h"
#include "util/util.h"

#include <jansson.h>
#include <math.h>

/* Code points of valid UTF-8, counted the simple way. */
static size_t count_leads(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

static void check_utf8(const char *s, size_t n, size_t cap)
{
    int valid = mb_utf8_valid(s, n);
    size_t vp = mb_utf8_valid_prefix(s, n);
    FUZZ_CHECK(vp <= n && (vp == n) == valid, "valid_prefix %zu of %zu, valid %d", vp, n, valid);
    FUZZ_CHECK(mb_utf8_valid(s, vp), "the valid prefix is not valid");

    /* Repair: always valid; the identity on valid text; never shorter in
     * characters than the valid prefix. */
    size_t rl = 0;
    char *r = mb_utf8_repair(s, n, &rl);
    FUZZ_CHECK(r[rl] == '\0', "repair is not terminated");
    FUZZ_CHECK(mb_utf8_valid(r, rl), "repair output is not valid UTF-8");
    FUZZ_CHECK(!valid || (rl == n && !memcmp(r, s, n)), "repair changed valid text");
    FUZZ_CHECK(rl >= vp && !memcmp(r, s, vp), "repair changed the valid prefix");
    /* Every code point of the repaired text: one per valid sequence or per
     * maximal invalid subpart, so no more than there were bytes. */
    FUZZ_CHECK(mb_utf8_length(r, rl) <= n + (n == 0), "repair made more characters than bytes");
    size_t rl2 = 0;
    char *r2 = mb_utf8_repair(r, rl, &rl2);
    FUZZ_CHECK(rl2 == rl && !memcmp(r, r2, rl), "repair is not idempotent");
    free(r2);

    /* Decoding the repaired text and encoding it again gives it back. */
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t i = 0, chars = 0;
    while (i < rl) {
        unsigned cp = 0;
        size_t k = mb_utf8_decode((const unsigned char *)r + i, rl - i, &cp);
        FUZZ_CHECK(k >= 1 && k <= 4, "decode of valid text failed at %zu", i);
        FUZZ_CHECK(cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF), "decoded U+%X", cp);
        size_t j = i;
        unsigned cp2 = mb_utf8_next(r, rl, &j);
        FUZZ_CHECK(cp2 == cp && j == i + k, "next and decode disagree at %zu", i);
        mb_utf8_put(&b, cp);
        i += k;
        chars++;
    }
    FUZZ_CHECK(b.len == rl && !memcmp(b.data, r, rl), "decode + put is not the identity");
    mb_buf_free(&b);
    FUZZ_CHECK(mb_utf8_length(r, rl) == chars && count_leads(r, rl) == chars,
               "length %zu, %zu characters decoded", mb_utf8_length(r, rl), chars);
    FUZZ_CHECK(mb_utf16_len(r, rl) >= chars && mb_utf16_len(r, rl) <= 2 * chars,
               "UTF-16 length out of range");

    /* Cuts: never past max, never more than a character short of it, and on
     * valid text never inside a character. */
    for (size_t max = 0; max <= rl + 1; max += 1 + max / 3) {
        size_t c = mb_utf8_cut(r, rl, max);
        if (rl <= max) {
            FUZZ_CHECK(c == rl, "cut of a short text changed it");
            continue;
        }
        FUZZ_CHECK(c <= max && c + 3 >= max, "cut(%zu) = %zu", max, c);
        FUZZ_CHECK(mb_utf8_valid(r, c), "cut(%zu) = %zu splits a character", max, c);
        size_t cs = mb_utf8_cut(s, n, max);
        if (n > max) FUZZ_CHECK(cs <= max && cs + 3 >= max, "cut(%zu) of raw text = %zu", max, cs);
        else FUZZ_CHECK(cs == n, "cut of a short raw text changed it");
    }

    /* Copies and formats into a cap-byte buffer: valid, terminated, within
     * the cap, a prefix of the repaired text on a character boundary. */
    char *dst = malloc(cap + 1);
    dst[cap] = 'X';
    size_t w = mb_utf8_copy(dst, cap, s, n);
    FUZZ_CHECK(dst[cap] == 'X', "copy wrote past the cap");
    if (cap) {
        FUZZ_CHECK(w < cap && dst[w] == '\0', "copy %zu of cap %zu", w, cap);
        FUZZ_CHECK(mb_utf8_valid(dst, w), "copy is not valid UTF-8");
        FUZZ_CHECK(w <= rl && !memcmp(dst, r, w), "copy is not a prefix of the repair");
        FUZZ_CHECK(rl < cap ? w == rl : w + 3 >= cap - 1, "copy %zu of %zu at cap %zu", w, rl, cap);
    }
    char *z = fuzz_str((const uint8_t *)s, n); /* as %s sees it: up to the first NUL */
    size_t zl = strlen(z);
    w = mb_text_format(dst, cap, "%s", z);
    FUZZ_CHECK(dst[cap] == 'X', "format wrote past the cap");
    if (cap) {
        FUZZ_CHECK(w < cap && dst[w] == '\0' && mb_utf8_valid(dst, w), "format is not valid");
        if (zl < cap && mb_utf8_valid(z, zl))
            FUZZ_CHECK(w == zl && !memcmp(dst, z, zl), "format changed a valid short text");
    }
    /* In place: the argument points into the destination (mb_err_wrap). */
    if (cap > 8) {
        mb_text_format(dst, cap, "%s", z);
        w = mb_text_format(dst, cap, "wrap: %s", dst);
        FUZZ_CHECK(w < cap && mb_utf8_valid(dst, w) && !strncmp(dst, "wrap: ", 6),
                   "in-place format broke");
    }
    free(z);
    free(dst);

    /* JavaScript whitespace trims stay on character boundaries. */
    size_t pre = mb_js_space_prefix(r, rl), suf = mb_js_space_suffix(r, rl);
    FUZZ_CHECK(pre <= rl && suf <= rl, "trim past the text");
    FUZZ_CHECK(mb_utf8_valid(r, pre) && mb_utf8_valid(r + rl - suf, suf), "trim splits");
    if (pre < rl) FUZZ_CHECK(pre + suf <= rl, "trims overlap on a non-blank text");

    /* toLowerCase of valid text is valid text. */
    size_t ll = 0;
    char *low = mb_js_lower(r, rl, &ll);
    FUZZ_CHECK(mb_utf8_valid(low, ll), "toLowerCase made invalid UTF-8");
    FUZZ_CHECK(low[ll] == '\0', "toLowerCase is not terminated");
    free(low);

    /* localeCompare is antisymmetric and reflexive. */
    size_t half = mb_utf8_cut(r, rl, rl / 2);
    char *a = fuzz_str((const uint8_t *)r, half), *bb = fuzz_str((const uint8_t *)r + half, rl - half);
    int ab = mb_js_locale_compare(a, bb), ba = mb_js_locale_compare(bb, a);
    FUZZ_CHECK((ab > 0) == (ba < 0) && (ab == 0) == (ba == 0), "localeCompare %d / %d", ab, ba);
    FUZZ_CHECK(mb_js_locale_compare(a, a) == 0, "localeCompare(a, a) != 0");
    /* minimatch on a quarter of the inputs (a match may take its whole step
     * budget, which would dominate the run): the first half is the pattern. */
    if ((cap & 3) == 3 && strlen(a) <= 64 && strlen(bb) <= 64) {
        mb_minimatch(bb, a, 0);
        mb_minimatch(bb, a, MB_GLOB_DOT);
    }
    free(a);
    free(bb);
    free(r);
}

/* ------------------------------------------------------------------ JSON */

/* Same value, with numbers compared as numbers: JSON.stringify prints 1.0
 * as 1, which jansson reads back as an integer. */
static int same_json(const json_t *x, const json_t *y)
{
    if (json_is_number(x) && json_is_number(y)) {
        if (json_is_integer(x) && json_is_integer(y))
            return json_integer_value(x) == json_integer_value(y);
        return json_number_value(x) == json_number_value(y);
    }
    if (json_typeof(x) != json_typeof(y)) return 0;
    if (json_is_array(x)) {
        if (json_array_size(x) != json_array_size(y)) return 0;
        for (size_t i = 0; i < json_array_size(x); i++)
            if (!same_json(json_array_get(x, i), json_array_get(y, i))) return 0;
        return 1;
    }
    if (json_is_object(x)) {
        if (json_object_size(x) != json_object_size(y)) return 0;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)x, k, v) {
            json_t *w = json_object_get(y, k);
            if (!w || !same_json(v, w)) return 0;
        }
        return 1;
    }
    return json_equal((json_t *)x, (json_t *)y);
}

static int has_non_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80) return 1;
    return 0;
}

static void check_printed(const json_t *v, const char *text, const char *who)
{
    FUZZ_CHECK(mb_utf8_valid(text, strlen(text)), "%s printed invalid UTF-8", who);
    json_error_t e;
    json_t *back = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    FUZZ_CHECK(back, "%s printed what jansson cannot read (%s): %s", who, e.text, text);
    FUZZ_CHECK(same_json(v, back), "%s changed the value: %s", who, text);
    json_decref(back);
}

static void check_json(const char *s, size_t n, unsigned sel)
{
    json_error_t e;
    json_t *v = json_loadb(s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    if (!v) return;
    int indent = (int)(sel % 4);
    char *js = mb_js_stringify(v, indent);
    check_printed(v, js, "JSON.stringify");
    free(js);
    char *py = mb_py_json_dumps(v, indent ? indent : -1, 0);
    check_printed(v, py, "json.dumps");
    free(py);
    py = mb_py_json_dumps(v, -1, 1);
    check_printed(v, py, "json.dumps(ensure_ascii)");
    FUZZ_CHECK(!has_non_ascii(py), "ensure_ascii printed a non-ASCII byte");
    free(py);
    json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    unsigned sel = fuzz_byte(&in);
    size_t cap = sel % 67;
    const char *s = (const char *)in.p;
    size_t n = in.n;
    check_utf8(s, n, cap);
    check_json(s, n, sel >> 6);
    uint64_t sz;
    char *z = fuzz_str(in.p, in.n);
    mb_parse_size(z, &sz);
    free(z);
    return 0;
}
