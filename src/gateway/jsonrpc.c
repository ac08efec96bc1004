/*
 * jsonrpc.c - JSON-RPC messages as text: finding members, splicing ids,
 * error bodies, protocol versions and the tools/list drift hash.
 *
 * Why text: a gateway that parsed every message into a tree and printed it
 * again would change what servers said (jansson prints 0.1 as
 * 0.10000000000000001 and cannot hold integers beyond 64 bits) and would
 * spend most of its time re-serializing large tool results. Instead jansson
 * validates a message and reads the few values the gateway needs (id,
 * method, progress token), mb_gw__scan() locates where those values sit in the
 * text, and mb_gw__splice() swaps them. The scanner trusts that its input is
 * JSON: it only tracks strings and nesting, which is all that locating a
 * top-level member needs.
 */
#include "gateway/gateway_int.h"

#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- scanning */

static size_t skip_ws(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

/* s[i] is '"'. Returns the index after the closing quote, or n+1. */
static size_t skip_string(const char *s, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\') {
            i++;
            continue;
        }
        if (s[i] == '"') return i + 1;
    }
    return n + 1;
}

/* Skips one value starting at s[i]; returns the index after it or n+1. */
static size_t skip_value(const char *s, size_t i, size_t n)
{
    if (i >= n) return n + 1;
    char c = s[i];
    if (c == '"') return skip_string(s, i, n);
    if (c == '{' || c == '[') {
        size_t depth = 0;
        while (i < n) {
            c = s[i];
            if (c == '"') {
                i = skip_string(s, i, n);
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth == 0) return i + 1;
            }
            i++;
        }
        return n + 1;
    }
    size_t start = i;
    while (i < n && !strchr(",}] \t\r\n{[\":", s[i])) i++;
    return i > start ? i : n + 1;
}

/* Calls fn for each member of the object text s[0..n): the key's text
 * between its quotes (escapes as sent) and the value's span. Returns the
 * number of members, or -1 when s is not one object. */
static int each_member(const char *s, size_t n,
                       void (*fn)(void *arg, mb_gw_span key, mb_gw_span val), void *arg)
{
    size_t i = skip_ws(s, 0, n);
    if (i >= n || s[i] != '{') return -1;
    i = skip_ws(s, i + 1, n);
    int count = 0;
    if (i < n && s[i] == '}') {
        i++;
    } else {
        for (;;) {
            if (i >= n || s[i] != '"') return -1;
            size_t kstart = i + 1;
            i = skip_string(s, i, n);
            if (i > n) return -1;
            mb_gw_span key = {kstart, i - 1 - kstart};
            i = skip_ws(s, i, n);
            if (i >= n || s[i] != ':') return -1;
            i = skip_ws(s, i + 1, n);
            size_t vstart = i;
            i = skip_value(s, i, n);
            if (i > n) return -1;
            fn(arg, key, (mb_gw_span){vstart, i - vstart});
            count++;
            i = skip_ws(s, i, n);
            if (i < n && s[i] == ',') {
                i = skip_ws(s, i + 1, n);
                continue;
            }
            if (i < n && s[i] == '}') {
                i++;
                break;
            }
            return -1;
        }
    }
    return skip_ws(s, i, n) == n ? count : -1;
}

typedef struct scan_arg {
    const char *s;
    const char *const *keys;
    size_t nkeys;
    mb_gw_span *spans;
} scan_arg;

static void scan_one(void *arg, mb_gw_span key, mb_gw_span val)
{
    scan_arg *a = arg;
    for (size_t k = 0; k < a->nkeys; k++)
        if (strlen(a->keys[k]) == key.len && !memcmp(a->keys[k], a->s + key.off, key.len))
            a->spans[k] = val;
}

int mb_gw__scan(const char *s, size_t n, const char *const *keys, size_t nkeys, mb_gw_span *spans)
{
    for (size_t k = 0; k < nkeys; k++) spans[k].off = spans[k].len = 0;
    scan_arg a = {s, keys, nkeys, spans};
    return each_member(s, n, scan_one, &a);
}

typedef struct members_arg {
    mb_gw_span *keys, *vals;
    size_t max, n;
} members_arg;

static void members_one(void *arg, mb_gw_span key, mb_gw_span val)
{
    members_arg *a = arg;
    if (a->n < a->max) a->keys[a->n] = key, a->vals[a->n] = val;
    a->n++;
}

int mb_gw__object_members(const char *s, size_t n, mb_gw_span *keys, mb_gw_span *vals, size_t max)
{
    members_arg a = {keys, vals, max, 0};
    int count = each_member(s, n, members_one, &a);
    return count >= 0 && (size_t)count <= max ? count : -1;
}

char *mb_gw__splice(const char *s, size_t n, mb_gw_span at, const char *with, size_t with_len,
                   size_t *out_len)
{
    size_t len = n - at.len + with_len;
    char *out = mb_malloc(len + 1);
    memcpy(out, s, at.off);
    memcpy(out + at.off, with, with_len);
    memcpy(out + at.off + with_len, s + at.off + at.len, n - at.off - at.len);
    out[len] = '\0';
    if (out_len) *out_len = len;
    return out;
}

int mb_gw__array_items(const char *s, size_t n, mb_gw_span *items, size_t max)
{
    size_t i = skip_ws(s, 0, n), count = 0;
    if (i >= n || s[i] != '[') return -1;
    i = skip_ws(s, i + 1, n);
    if (i < n && s[i] == ']') return skip_ws(s, i + 1, n) == n ? 0 : -1;
    for (;;) {
        size_t start = i;
        i = skip_value(s, i, n);
        if (i > n) return -1;
        if (count < max) items[count].off = start, items[count].len = i - start;
        count++;
        i = skip_ws(s, i, n);
        if (i < n && s[i] == ',') {
            i = skip_ws(s, i + 1, n);
            continue;
        }
        if (i < n && s[i] == ']') break;
        return -1;
    }
    return skip_ws(s, i + 1, n) == n && count <= max ? (int)count : -1;
}

char *mb_gw__member_text(const char *raw, size_t raw_len, const char *key, const json_t *v)
{
    const char *keys[1] = {key};
    mb_gw_span sp;
    if (raw && mb_gw__scan(raw, raw_len, keys, 1, &sp) >= 0 && sp.len)
        return mb_strndup(raw + sp.off, sp.len);
    return mb_gw__json_text(v);
}

char *mb_gw__with_id(char *text, const char *id_text)
{
    static const char *const keys[1] = {"id"};
    mb_gw_span sp;
    if (!id_text || mb_gw__scan(text, strlen(text), keys, 1, &sp) < 0 || !sp.len) return text;
    char *t = mb_gw__splice(text, strlen(text), sp, id_text, strlen(id_text), NULL);
    free(text);
    return t;
}

json_t *mb_gw__span_json(const char *s, mb_gw_span sp)
{
    if (!sp.len) return NULL;
    json_error_t e;
    return json_loadb(s + sp.off, sp.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
}

char *mb_gw__json_text(const json_t *v)
{
    /* NULL stands for a value that could not be built: it prints as null
     * rather than taking the daemon down. jansson's values hold valid UTF-8
     * only, so json_dumps fails on memory alone. */
    char *t = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    return t ? t : mb_strdup("null");
}

/* ----------------------------------------------------- guessing an id */

static int in_set(char c, const char *set) { return c && strchr(set, c); }

static int parse_int(const char *s, size_t n, size_t *i, int64_t *out)
{
    size_t j = *i;
    int neg = 0;
    if (j < n && s[j] == '-') {
        neg = 1;
        j++;
    }
    size_t start = j;
    int64_t v = 0;
    while (j < n && s[j] >= '0' && s[j] <= '9' && j - start < 18) v = v * 10 + (s[j++] - '0');
    if (j == start) return 0;
    *i = j;
    *out = neg ? -v : v;
    return 1;
}

static int match(const char *s, size_t n, size_t *i, const char *lit)
{
    size_t l = strlen(lit);
    if (*i + l > n || memcmp(s + *i, lit, l)) return 0;
    *i += l;
    return 1;
}

static int guess_head(const char *s, size_t n, int64_t *id)
{
    size_t i = skip_ws(s, 0, n);
    if (!match(s, n, &i, "{")) return 0;
    i = skip_ws(s, i, n);
    size_t save = i;
    if (match(s, n, &i, "\"jsonrpc\"")) {
        i = skip_ws(s, i, n);
        if (!match(s, n, &i, ":")) return 0;
        i = skip_ws(s, i, n);
        if (!match(s, n, &i, "\"2.0\"")) return 0;
        i = skip_ws(s, i, n);
        if (!match(s, n, &i, ",")) return 0;
        i = skip_ws(s, i, n);
    } else {
        i = save;
    }
    if (!match(s, n, &i, "\"id\"")) return 0;
    i = skip_ws(s, i, n);
    if (!match(s, n, &i, ":")) return 0;
    i = skip_ws(s, i, n);
    return parse_int(s, n, &i, id) && i < n && in_set(s[i], ", \t}");
}

static int guess_tail(const char *s, size_t n, int64_t *id)
{
    size_t e = n;
    while (e && in_set(s[e - 1], " \t\r")) e--;
    if (!e || s[e - 1] != '}') return 0;
    e--;
    while (e && in_set(s[e - 1], " \t")) e--;
    size_t d = e;
    while (d && s[d - 1] >= '0' && s[d - 1] <= '9') d--;
    if (d == e) return 0;
    if (d && s[d - 1] == '-') d--;
    size_t i = d;
    if (!parse_int(s, e, &i, id)) return 0;
    while (d && in_set(s[d - 1], " \t")) d--;
    if (!d || s[d - 1] != ':') return 0;
    d--;
    while (d && in_set(s[d - 1], " \t")) d--;
    if (d < 4 || memcmp(s + d - 4, "\"id\"", 4)) return 0;
    return d == 4 || in_set(s[d - 5], ",{ \t");
}

int mb_gw__guess_id(const char *head, size_t head_len, const char *tail, size_t tail_len,
                   int64_t *id)
{
    return guess_head(head, head_len, id) || guess_tail(tail, tail_len, id);
}

/* --------------------------------------------------------------- errors */

char *mb_gw__error_text(const char *id_text, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    mb_text_vformat(msg, sizeof msg, fmt, ap); /* valid UTF-8 whatever the client sent */
    va_end(ap);
    /* The id goes back as the client wrote it (12345678901234567890123,
     * 0.1, 1e2 unchanged): the body is built with a null id and the id's
     * text spliced in. */
    json_t *o = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code",
                          code, "message", msg);
    if (!o)
        return mb_asprintf("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":%d,"
                           "\"message\":\"Internal error\"}}", MB_GW_EINTERNAL);
    char *t = mb_gw__json_text(o);
    json_decref(o);
    return mb_gw__with_id(t, id_text);
}

/* ------------------------------------------------------------- versions */

const char *const mb_gw_versions[MB_GW_NVERSIONS + 1] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25",
                                      NULL};

int mb_gw__version_supported(const char *v)
{
    if (!v) return 0;
    for (const char *const *p = mb_gw_versions; *p; p++)
        if (!strcmp(*p, v)) return 1;
    return 0;
}

const char *mb_gw__version_negotiate(const char *requested)
{
    for (const char *const *p = mb_gw_versions; *p; p++)
        if (requested && !strcmp(*p, requested)) return *p;
    return MB_GW_PROTO_LATEST;
}

int mb_gw__version_allows_batch(const char *v) { return strcmp(v, "2025-06-18") < 0; }

int mb_gw__version_primes(const char *v) { return strcmp(v, "2025-11-25") >= 0; }

/* ------------------------------------------------------------ tools hash */

static int by_name(const void *a, const void *b)
{
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "name"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "name"));
    return strcmp(x ? x : "", y ? y : "");
}

int mb_gw__tools_hash(const json_t *tools, char out_hex[65], size_t *count)
{
    size_t n = json_is_array(tools) ? json_array_size(tools) : 0;
    json_t **items = mb_calloc(n ? n : 1, sizeof *items);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(tools, i);
        const char *name = json_string_value(json_object_get(t, "name"));
        if (!name) continue;
        json_t *schema = json_object_get(t, "inputSchema");
        items[k++] = json_pack("{s:s, s:O}", "name", name, "inputSchema",
                               schema ? schema : json_null());
    }
    qsort(items, k, sizeof *items, by_name);
    json_t *arr = json_array();
    for (size_t i = 0; i < k; i++) json_array_append_new(arr, items[i]);
    free(items);
    char *text = json_dumps(arr, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(arr);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int ok = text && EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) == 1;
    free(text);
    if (!ok) return MB_EIO;
    mb_hex(md, mdlen, out_hex);
    if (count) *count = k;
    return MB_OK;
}
