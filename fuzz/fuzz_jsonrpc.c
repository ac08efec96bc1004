/*
 * fuzz_jsonrpc.c - the gateway's JSON-RPC text handling (gateway/jsonrpc.c
 * and framing.c): the member scanner, batch splitting, id splicing, error
 * bodies, id guessing in over-long lines, the tools/list hash and the stdout
 * line framer. The scanner runs on whatever a server prints, before anything
 * checks that it is JSON, so it must survive any bytes; on text that is JSON
 * its answers must agree with jansson's, and a spliced id must come back byte
 * for byte.
 *
 * Input: byte 0 picks the framer's line limit and the chunking of the
 * stream; the rest is the message text.
 */
#include "fuzz.h"
#include "gateway/gateway_int.h"

#include <jansson.h>

enum { K_ID, K_METHOD, K_PARAMS, K_RESULT, K_ERROR, K_JSONRPC, K_N };
static const char *const keys[K_N] = {"id", "method", "params", "result", "error", "jsonrpc"};

/* Integers beyond 64 bits are valid JSON ids too: read as reals here. */
static json_t *parse(const char *s, size_t n)
{
    json_error_t e;
    return json_loadb(s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &e);
}

static json_t *span_value(const char *s, mb_gw_span sp)
{
    json_decref(mb_gw__span_json(s, sp)); /* what the gateway does with it */
    json_t *v = parse(s + sp.off, sp.len);
    FUZZ_CHECK(v, "a span of valid JSON does not parse: %.*s", (int)sp.len, s + sp.off);
    return v;
}

/* Members as the scanner sees them versus jansson, for JSON objects. */
static void check_scan(const char *s, size_t n, const json_t *v, int escapes)
{
    mb_gw_span sp[K_N];
    int count = mb_gw__scan(s, n, keys, K_N, sp);
    for (int k = 0; k < K_N; k++)
        FUZZ_CHECK(sp[k].len == 0 || sp[k].off + sp[k].len <= n, "span past the text");
    if (!v) return;
    if (!json_is_object(v)) {
        FUZZ_CHECK(count < 0 || escapes, "a non-object scanned as an object");
        return;
    }
    FUZZ_CHECK(escapes || (count >= 0 && (size_t)count >= json_object_size(v)),
               "scan of a valid object failed (%d members, jansson has %zu)", count,
               json_object_size(v));
    for (int k = 0; k < K_N; k++) {
        json_t *want = json_object_get(v, keys[k]);
        if (sp[k].len) {
            json_t *got = span_value(s, sp[k]);
            /* A key spelled with escapes is another key to the scanner. */
            if (!escapes)
                FUZZ_CHECK(want && json_equal(got, want), "member %s differs", keys[k]);
            json_decref(got);
        } else if (!escapes) {
            FUZZ_CHECK(!want, "member %s not found by the scanner", keys[k]);
        }
    }
    /* member_text: the id as written, or jansson's text of the value. */
    json_t *id = json_object_get(v, "id");
    char *t = mb_gw__member_text(s, n, "id", id);
    json_t *back = parse(t, strlen(t));
    FUZZ_CHECK(back, "member_text gave text that is not JSON: %s", t);
    if (id && !escapes) FUZZ_CHECK(json_equal(back, id), "member_text changed the id");
    if (id && !escapes && sp[K_ID].len)
        FUZZ_CHECK(strlen(t) == sp[K_ID].len && !memcmp(t, s + sp[K_ID].off, sp[K_ID].len),
                   "member_text is not the id as written");

    /* An error answering this message keeps its id byte for byte. */
    char *err = mb_gw__error_text(t, MB_GW_EINTERNAL, "bad request %.*s", (int)(n > 300 ? 300 : n), s);
    json_t *ev = parse(err, strlen(err));
    FUZZ_CHECK(ev && json_is_object(ev), "error body is not a JSON object: %s", err);
    FUZZ_CHECK(mb_utf8_valid(err, strlen(err)), "error body is not valid UTF-8");
    FUZZ_CHECK(strstr(err, t) != NULL, "the id text is not in the error body");
    json_t *eid = json_object_get(ev, "id");
    FUZZ_CHECK(eid && json_equal(eid, back), "error body id differs");
    FUZZ_CHECK(json_is_string(json_object_get(json_object_get(ev, "error"), "message")),
               "error body has no message");
    json_decref(ev);
    json_decref(back);
    free(err);
    free(t);

    /* tools/list drift hash over whatever "tools" holds. */
    char hex[65];
    size_t cnt;
    mb_gw__tools_hash(json_object_get(json_object_get(v, "result"), "tools"), hex, &cnt);
}

/* Batch splitting versus jansson, for any text. */
static void check_array(const char *s, size_t n, const json_t *v, int nul)
{
    mb_gw_span items[64];
    int c = mb_gw__array_items(s, n, items, 64);
    for (int i = 0; i < c; i++)
        FUZZ_CHECK(items[i].off + items[i].len <= n && items[i].len, "item span out of range");
    if (!json_is_array(v)) {
        if (v) FUZZ_CHECK(c < 0 || nul, "a non-array split into %d items", c);
        return;
    }
    /* jansson reads a raw NUL between tokens as whitespace; the splitter
     * does not, and the gateway then re-serializes the items (http.c). */
    if (nul) return;
    size_t want = json_array_size(v);
    if (want > 64) {
        FUZZ_CHECK(c < 0, "a batch over the limit was split");
        return;
    }
    FUZZ_CHECK(c >= 0 && (size_t)c == want, "batch split into %d items, jansson has %zu", c, want);
    for (int i = 0; i < c; i++) {
        json_t *got = span_value(s, items[i]);
        FUZZ_CHECK(json_equal(got, json_array_get(v, (size_t)i)), "batch item %d differs", i);
        json_decref(got);
    }
}

/* with_id on any text: an id replaced only where the scanner found one. */
static void check_with_id(const char *s, size_t n)
{
    char *text = fuzz_str((const uint8_t *)s, n);
    size_t len = strlen(text);
    char *out = mb_gw__with_id(text, "\"fz\"");
    if (out != text) {
        mb_gw_span sp;
        const char *k[1] = {"id"};
        FUZZ_CHECK(mb_gw__scan(out, strlen(out), k, 1, &sp) >= 0 && sp.len == 4 &&
                       !memcmp(out + sp.off, "\"fz\"", 4),
                   "the spliced id is not where the scanner looks");
    } else {
        FUZZ_CHECK(strlen(out) == len, "with_id changed text without an id");
    }
    free(out);
}

/* ---------------------------------------------------------------- framer */

typedef struct frames {
    mb_buf got; /* "L<len>:<bytes>" and "O<len>:<head>|<tail>" records */
} frames;

static void on_line(void *payload, const char *line, size_t len)
{
    frames *f = payload;
    mb_buf_printf(&f->got, "L%zu:", len);
    mb_buf_append(&f->got, line, len);
}

static void on_oversize(void *payload, size_t len, const char *head, size_t head_len,
                        const char *tail, size_t tail_len)
{
    frames *f = payload;
    mb_buf_printf(&f->got, "O%zu:", len);
    mb_buf_append(&f->got, head, head_len);
    mb_buf_putc(&f->got, '|');
    mb_buf_append(&f->got, tail, tail_len);
}

/* What the framer must produce, computed line by line. */
static void expected_frames(const char *s, size_t n, size_t max, mb_buf *out)
{
    size_t i = 0;
    while (i < n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (s + i)) : n - i;
        const char *line = s + i;
        if (len > max) {
            size_t hl = len < MB_GW_FRAMER_EDGE ? len : MB_GW_FRAMER_EDGE;
            size_t tl = hl;
            const char *tail = line + len - tl;
            if (tl && tail[tl - 1] == '\r') tl--;
            mb_buf_printf(out, "O%zu:", len);
            mb_buf_append(out, line, hl);
            mb_buf_putc(out, '|');
            mb_buf_append(out, tail, tl);
        } else {
            size_t l = len;
            if (l && line[l - 1] == '\r') l--;
            int blank = 1;
            for (size_t k = 0; k < l; k++)
                if (line[k] != ' ' && line[k] != '\t' && line[k] != '\r') blank = 0;
            if (!blank) {
                mb_buf_printf(out, "L%zu:", l);
                mb_buf_append(out, line, l);
            }
        }
        i += len + 1;
    }
}

static void check_framer(const char *s, size_t n, unsigned sel)
{
    static const size_t maxes[] = {1, 2, 7, 64, 255, 256, 257, 600, 4096};
    size_t max = maxes[sel % (sizeof maxes / sizeof *maxes)];
    frames f = {{0}};
    mb_buf_puts(&f.got, "");
    mb_gw_framer fr;
    mb_gw__framer_init(&fr, max);
    mb_gw_framer_cb cb = {on_line, on_oversize, &f};
    /* Chunks of 1..16 bytes, sizes drawn from the text itself. */
    size_t i = 0, step = sel;
    while (i < n) {
        size_t k = 1 + (step + (unsigned char)s[i]) % 16;
        if (sel & 0x80) k = n - i; /* or all at once */
        if (k > n - i) k = n - i;
        mb_gw__framer_feed(&fr, s + i, k, &cb);
        i += k;
        step = step * 31 + 7;
    }
    mb_gw__framer_feed(&fr, "\n", 1, &cb); /* end of stream, as the reactor does */
    mb_gw__framer_dispose(&fr);
    /* The reference sees the same final newline. */
    char *t = malloc(n + 1);
    memcpy(t, s, n);
    t[n] = '\n';
    mb_buf want = {0};
    mb_buf_puts(&want, "");
    expected_frames(t, n + 1, max, &want);
    free(t);
    FUZZ_CHECK(want.len == f.got.len && !memcmp(want.data, f.got.data, want.len),
               "framer output differs at max %zu", max);
    mb_buf_free(&want);
    mb_buf_free(&f.got);
}

/* Forwarded headers (gateway/headers.c): on any JSON object, the rewritten
 * request parses, carries exactly the gateway's headers under
 * params._meta["mcpbox/headers"], and keeps every other member (as jansson
 * reads them) - whatever the client wrote under that key. */
static void check_headers(const char *s, size_t n, const json_t *v)
{
    if (!json_is_object(v)) return;
    static const char hdrs[] = "{\"x-h\":\"v\\\"}\\u0000\"}";
    json_t *want = parse(hdrs, strlen(hdrs));
    json_t *params = json_object_get(v, "params");
    size_t len = 0;
    char *t = mb_gw__headers_apply(s, n, v, hdrs, &len);
    if (params && !json_is_object(params)) {
        FUZZ_CHECK(!t, "by-position params rewritten");
        json_decref(want);
        return;
    }
    FUZZ_CHECK(t, "no rewrite for an object with object params");
    json_t *w = parse(t, len);
    FUZZ_CHECK(json_is_object(w), "the rewrite is not a JSON object: %.*s", (int)len, t);
    json_t *wp = json_object_get(w, "params"), *wm = json_object_get(wp, "_meta");
    FUZZ_CHECK(json_equal(json_object_get(wm, MB_GW_META_HEADERS), want),
               "the headers are not what the gateway set: %.*s", (int)len, t);
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x)
        if (strcmp(k, "params")) FUZZ_CHECK(json_equal(json_object_get(w, k), x), "member %s changed", k);
    FUZZ_CHECK(json_object_size(w) == json_object_size(v) + (params ? 0 : 1), "members added");
    json_t *om = json_object_get(params, "_meta");
    json_object_foreach(params, k, x)
        if (strcmp(k, "_meta")) FUZZ_CHECK(json_equal(json_object_get(wp, k), x), "params.%s changed", k);
    json_object_foreach(json_is_object(om) ? om : NULL, k, x)
        if (strcmp(k, MB_GW_META_HEADERS))
            FUZZ_CHECK(json_equal(json_object_get(wm, k), x), "_meta.%s changed", k);
    json_decref(w);
    json_decref(want);
    free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    unsigned sel = fuzz_byte(&in);
    const char *s = (const char *)in.p;
    size_t n = in.n;
    json_t *v = parse(s, n);
    /* A key spelled with escapes is another key to the scanner, and jansson
     * reads a raw NUL between tokens as whitespace, which the scanner (and
     * RFC 8259) do not: on such text only the weaker checks apply. */
    int escapes = memchr(s, '\\', n) != NULL || memchr(s, '\0', n) != NULL;
    check_scan(s, n, v, escapes);
    check_array(s, n, v, memchr(s, '\0', n) != NULL);
    check_with_id(s, n);
    check_headers(s, n, v);
    int64_t id;
    size_t half = n / 2;
    mb_gw__guess_id(s, n, s + half, n - half, &id);
    char *z = fuzz_str(in.p, in.n);
    mb_gw__version_supported(z);
    const char *ver = mb_gw__version_negotiate(z);
    FUZZ_CHECK(mb_gw__version_supported(ver), "negotiated an unsupported version");
    free(z);
    check_framer(s, n, sel);
    json_decref(v);
    return 0;
}
