/*
 * headers.c - request headers a server reads per request
 * (mb_backend_spec.forward_headers, e.g. poste_email_toolathlon's
 * x-email-config): collected from a client's POST and checked, then written
 * into each request forwarded to that server as
 * params._meta["mcpbox/headers"] = {"name": "value"}, after dropping
 * whatever the client itself put under that key. Only that one member is
 * written; the rest of the message travels as the client sent it (jsonrpc.c
 * says why). A message whose keys the scanner cannot read as sent (escaped
 * keys, duplicate params or _meta) is rebuilt from its parsed tree instead,
 * where jansson has already resolved escapes and duplicates.
 */
#include "gateway/gateway_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_MEMBERS 1024

typedef struct hdr_seen {
    const char *name;
    int count;
    const char *value;
    size_t len;
} hdr_seen;

typedef struct hdr_scan {
    hdr_seen *v;
    size_t n;
} hdr_scan;

static enum MHD_Result seen_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    hdr_scan *h = cls;
    for (size_t i = 0; key && i < h->n; i++)
        if (strlen(h->v[i].name) == key_size && !strncasecmp(h->v[i].name, key, key_size)) {
            h->v[i].count++;
            h->v[i].value = value ? value : "";
            h->v[i].len = value ? value_size : 0;
        }
    return MHD_YES;
}

/* Why a header value cannot travel, or NULL. */
static const char *value_refused(const char *v, size_t n)
{
    if (n > MB_GW_MAX_HEADER_VALUE) return "is over the gateway's limit";
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
            return "holds control characters";
    if (!mb_utf8_valid(v, n)) return "is not valid UTF-8";
    return NULL;
}

char *mb_gw__headers_collect(struct MHD_Connection *conn, char *const *names, char **why)
{
    *why = NULL;
    size_t n = 0;
    while (names && names[n]) n++;
    hdr_seen *v = mb_calloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++) v[i].name = names[i];
    hdr_scan h = {v, n};
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, seen_one, &h);
    json_t *o = json_object();
    for (size_t i = 0; i < n && !*why; i++) {
        if (!v[i].count) continue;
        const char *bad = v[i].count > 1 ? NULL : value_refused(v[i].value, v[i].len);
        if (v[i].count > 1)
            *why = mb_asprintf("the %s header may be given only once", v[i].name);
        else if (bad)
            *why = mb_asprintf("the %s header (%zu bytes) %s (at most %d bytes of UTF-8 text)",
                               v[i].name, v[i].len, bad, MB_GW_MAX_HEADER_VALUE);
        else
            json_object_set_new(o, v[i].name, json_stringn(v[i].value, v[i].len));
    }
    free(v);
    char *t = *why ? NULL : mb_gw__json_text(o);
    json_decref(o);
    return t;
}

/* The text of `"key":value` for the reserved key. */
static void put_member(mb_buf *b, const char *headers_json)
{
    mb_buf_puts(b, "\"" MB_GW_META_HEADERS "\":");
    mb_buf_puts(b, headers_json);
}

static int has_escape(const char *s, mb_gw_span k) { return memchr(s + k.off, '\\', k.len) != NULL; }

static int key_is(const char *s, mb_gw_span k, const char *key)
{
    return k.len == strlen(key) && !memcmp(s + k.off, key, k.len);
}

/* Built from the tree: the fallback for text the scanner cannot place. */
static char *apply_tree(const json_t *j, const char *headers_json, size_t *out_len)
{
    json_t *c = json_deep_copy(j);
    json_t *params = json_object_get(c, "params");
    if (!params) json_object_set_new(c, "params", params = json_object());
    if (!json_is_object(params)) {
        json_decref(c);
        return NULL;
    }
    json_t *meta = json_object_get(params, "_meta");
    if (!json_is_object(meta)) json_object_set_new(params, "_meta", meta = json_object());
    json_error_t e;
    json_t *h = json_loads(headers_json, JSON_ALLOW_NUL, &e);
    /* never the client's value, even if the gateway's could not be read */
    json_object_set_new(meta, MB_GW_META_HEADERS, json_is_object(h) ? h : json_object());
    if (!json_is_object(h)) json_decref(h);
    char *t = mb_gw__json_text(c);
    json_decref(c);
    *out_len = strlen(t);
    return t;
}

/* The text of the object span `obj` of s with the member `key` (spans
 * k/v, or absent when !found) replaced by `with` text, or appended. */
static void object_with(mb_buf *b, const char *s, mb_gw_span obj, int found, mb_gw_span v,
                        const char *key, const char *with)
{
    if (found) {
        mb_buf_append(b, s + obj.off, v.off - obj.off);
        mb_buf_puts(b, with);
        mb_buf_append(b, s + v.off + v.len, obj.off + obj.len - v.off - v.len);
        return;
    }
    /* before the closing brace; a comma unless the object is empty */
    size_t close = obj.off + obj.len - 1, i = obj.off + 1;
    while (i < close && strchr(" \t\r\n", s[i])) i++;
    mb_buf_append(b, s + obj.off, close - obj.off);
    mb_buf_printf(b, "%s\"%s\":%s}", i < close ? "," : "", key, with);
}

char *mb_gw__headers_apply(const char *raw, size_t n, const json_t *j, const char *headers_json,
                           size_t *out_len)
{
    if (!json_is_object(j)) return NULL;
    json_t *jp = json_object_get(j, "params");
    if (jp && !json_is_object(jp)) return NULL; /* by-position params: nothing to carry it */
    mb_gw_span *k = mb_calloc(MAX_MEMBERS, sizeof *k), *v = mb_calloc(MAX_MEMBERS, sizeof *v);
    char *out = NULL;
    mb_buf b = {0}, meta = {0}, params = {0};
    /* the message's members: params found once, no escaped key */
    int cnt = mb_gw__object_members(raw, n, k, v, MAX_MEMBERS), np = 0;
    mb_gw_span pv = {0, 0};
    for (int i = 0; i < cnt; i++) {
        if (has_escape(raw, k[i])) cnt = -1;
        else if (key_is(raw, k[i], "params")) pv = v[i], np++;
    }
    if (cnt < 0 || np > 1) goto tree;
    size_t end = n, off = 0;
    while (end && strchr(" \t\r\n", raw[end - 1])) end--;
    while (off < end && strchr(" \t\r\n", raw[off])) off++;
    mb_gw_span whole = {off, end - off};
    if (!np) {
        mb_buf_puts(&meta, "{\"_meta\":{");
        put_member(&meta, headers_json);
        mb_buf_puts(&meta, "}}");
        mb_buf_putc(&meta, 0);
        object_with(&b, raw, whole, 0, pv, "params", meta.data);
        goto done;
    }
    /* params' members: _meta found at most once, no escaped key */
    int pc = mb_gw__object_members(raw + pv.off, pv.len, k, v, MAX_MEMBERS), nm = 0;
    mb_gw_span mv = {0, 0};
    for (int i = 0; i < pc; i++) {
        if (has_escape(raw + pv.off, k[i])) pc = -1;
        else if (key_is(raw + pv.off, k[i], "_meta")) mv = v[i], nm++;
    }
    if (pc < 0 || nm > 1) goto tree;
    mv.off += pv.off;
    const char *mstart = nm ? raw + mv.off : NULL;
    if (nm && *mstart == '{') {
        /* _meta's members: the client's own value of the key goes */
        int mc = mb_gw__object_members(mstart, mv.len, k, v, MAX_MEMBERS);
        if (mc < 0) goto tree;
        mb_buf_putc(&meta, '{');
        for (int i = 0; i < mc; i++) {
            if (has_escape(mstart, k[i])) goto tree;
            if (key_is(mstart, k[i], MB_GW_META_HEADERS)) continue;
            /* from the key's opening quote to the value's end */
            mb_buf_append(&meta, mstart + k[i].off - 1, v[i].off + v[i].len - k[i].off + 1);
            mb_buf_putc(&meta, ',');
        }
    } else {
        mb_buf_putc(&meta, '{'); /* absent, or not an object: MCP's _meta is one */
    }
    put_member(&meta, headers_json);
    mb_buf_putc(&meta, '}');
    mb_buf_putc(&meta, 0);
    object_with(&params, raw, pv, nm, mv, "_meta", meta.data);
    mb_buf_putc(&params, 0);
    object_with(&b, raw, whole, 1, pv, "params", params.data);
done:
    *out_len = b.len;
    mb_buf_putc(&b, 0);
    out = mb_buf_steal(&b);
    goto end;
tree:
    out = apply_tree(j, headers_json, out_len);
end:
    mb_buf_free(&b);
    mb_buf_free(&meta);
    mb_buf_free(&params);
    free(k);
    free(v);
    return out;
}
