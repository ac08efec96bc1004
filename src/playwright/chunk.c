/*
 * chunk.c - Toolathlon's `playwright_with_chunk` (the lockon-n fork of
 * @playwright/mcp 0.0.32, published as @lockon0927/playwright-mcp-with-chunk
 * 0.1.2) re-implemented as a text layer over upstream 0.0.32's answers.
 *
 * The fork keeps, per tab, the last full snapshot, its spans and the current
 * span. Here the same state lives beside the upstream server:
 *   - the page-state block of an answer ("- Page Snapshot:" + yaml fence) is
 *     replaced by the current span with the fork's header and footer;
 *   - spans are the fork's: lines packed greedily up to the span size (in
 *     UTF-16 code units, as JavaScript counts), long lines truncated, each
 *     span trimEnd()ed; when the snapshot text changes the current span is
 *     kept only if the span count is the same and no other span changed;
 *   - browser_navigate and closing a tab reset a tab's spans (the fork's
 *     Tab.navigate / page close); tabs are followed through the tab tools and
 *     the "### Open tabs" lists upstream prints;
 *   - the 7 tools are answered here, with the fork's texts and zod's
 *     validation errors; browser_snapshot_search uses PCRE2 configured like a
 *     JavaScript RegExp, including the `g`/`y` lastIndex carried from line to
 *     line (so, as in the fork, a `g` search can miss lines).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "playwright/playwright.h"

#include <math.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp.h"

/* ---------------------------------------------------------------- state */

typedef struct span_range {
    size_t start, end; /* 1-based global lines */
} span_range;

typedef struct tab_state {
    char *full;          /* last snapshot text, NULL before the first */
    char **spans;
    size_t nspans;
    size_t current;
    char **lines;        /* the snapshot split on '\n' */
    size_t nlines;
    span_range *ranges;
    size_t nranges;
    char *modal;         /* "### Modal state..." while one is shown */
} tab_state;

struct mb_pw_chunk {
    int span_size;
    tab_state **tabs;
    size_t ntabs;
    size_t current;
};

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static void tab_reset(tab_state *t)
{
    free(t->full);
    strv_free(t->spans, t->nspans);
    strv_free(t->lines, t->nlines);
    free(t->ranges);
    free(t->modal);
    memset(t, 0, sizeof *t);
}

static void tab_free(tab_state *t)
{
    if (!t) return;
    tab_reset(t);
    free(t);
}

mb_pw_chunk *mb_pw_chunk_new(int span_size)
{
    mb_pw_chunk *c = mb_calloc(1, sizeof *c);
    c->span_size = span_size ? span_size : 2000;
    return c;
}

void mb_pw_chunk_free(mb_pw_chunk *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->ntabs; i++) tab_free(c->tabs[i]);
    free(c->tabs);
    free(c);
}

static void tabs_resize(mb_pw_chunk *c, size_t n)
{
    for (size_t i = n; i < c->ntabs; i++) tab_free(c->tabs[i]);
    c->tabs = mb_realloc(c->tabs, (n ? n : 1) * sizeof *c->tabs);
    for (size_t i = c->ntabs; i < n; i++) c->tabs[i] = mb_calloc(1, sizeof(tab_state));
    c->ntabs = n;
    if (c->current >= n) c->current = n ? n - 1 : 0;
}

static void tab_remove(mb_pw_chunk *c, size_t i)
{
    if (i >= c->ntabs) return;
    tab_free(c->tabs[i]);
    memmove(&c->tabs[i], &c->tabs[i + 1], (c->ntabs - i - 1) * sizeof *c->tabs);
    c->ntabs--;
    /* upstream: the tab at min(index, count - 1) becomes current */
    if (c->ntabs) c->current = i < c->ntabs ? i : c->ntabs - 1;
    else c->current = 0;
}

static tab_state *cur(mb_pw_chunk *c)
{
    return c->ntabs ? c->tabs[c->current] : NULL;
}

/* ------------------------------------------------------- JS string bits */

/* Byte length of the first `units` UTF-16 code units of s (a code point
 * that would be cut in half is left out). */
static size_t u16_prefix_bytes(const char *s, size_t len, size_t units)
{
    size_t i = 0, u = 0;
    while (i < len) {
        size_t j = i;
        unsigned cp = mb_utf8_next(s, len, &j);
        size_t w = cp > 0xffff ? 2 : 1;
        if (u + w > units) break;
        u += w;
        i = j;
    }
    return i;
}

static void split_lines(const char *s, char ***out, size_t *n)
{
    size_t cap = 16, k = 0;
    char **v = mb_malloc(cap * sizeof *v);
    for (const char *p = s;;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (k == cap) v = mb_realloc(v, (cap *= 2) * sizeof *v);
        v[k++] = mb_strndup(p, len);
        if (!nl) break;
        p = nl + 1;
    }
    *out = v;
    *n = k;
}

/* The fork's _splitSnapshotIntoSpans. */
static void split_spans(mb_pw_chunk *c, tab_state *t, const char *snap)
{
    strv_free(t->lines, t->nlines);
    split_lines(snap, &t->lines, &t->nlines);
    free(t->ranges);
    t->ranges = mb_calloc(t->nlines + 1, sizeof *t->ranges);
    t->nranges = 0;
    size_t cap = 4, n = 0;
    char **spans = mb_malloc(cap * sizeof *spans);
    if (c->span_size == -1) {
        t->ranges[t->nranges++] = (span_range){1, t->nlines};
        spans[n++] = mb_strdup(snap);
    } else {
        size_t size = (size_t)c->span_size;
        mb_buf span = {0};
        size_t span_units = 0, start = 0;
        for (size_t i = 0; i < t->nlines; i++) {
            const char *line = t->lines[i];
            size_t lb = strlen(line), lu = mb_utf16_len(line, lb);
            mb_buf add = {0};
            if (lu + 1 > size) {
                size_t keep = size >= 50 ? size - 50 : 0;
                mb_buf_append(&add, line, u16_prefix_bytes(line, lb, keep));
                mb_buf_printf(&add, "... [line truncated, originally with %zu chars]\n", lu);
            } else {
                mb_buf_append(&add, line, lb);
                mb_buf_putc(&add, '\n');
            }
            size_t au = mb_utf16_len(add.data, add.len);
            if (span_units + au > size && span.len > 0) {
                size_t keep = span.len - mb_js_space_suffix(span.data, span.len);
                if (n == cap) spans = mb_realloc(spans, (cap *= 2) * sizeof *spans);
                spans[n++] = mb_strndup(span.data, keep);
                t->ranges[t->nranges++] = (span_range){start + 1, i};
                mb_buf_reset(&span);
                span_units = 0;
                start = i;
            }
            mb_buf_append(&span, add.data, add.len);
            span_units += au;
            mb_buf_free(&add);
        }
        if (span.len && mb_js_space_prefix(span.data, span.len) < span.len) {
            size_t keep = span.len - mb_js_space_suffix(span.data, span.len);
            if (n == cap) spans = mb_realloc(spans, (cap *= 2) * sizeof *spans);
            spans[n++] = mb_strndup(span.data, keep);
            t->ranges[t->nranges++] = (span_range){start + 1, t->nlines};
        }
        mb_buf_free(&span);
        if (!n) spans[n++] = mb_strdup("");
    }
    t->spans = spans;
    t->nspans = n;
}

/* The fork's captureSnapshot bookkeeping for a fresh snapshot text. */
static void take_snapshot(mb_pw_chunk *c, tab_state *t, const char *snap)
{
    if (t->full && !strcmp(t->full, snap)) return;
    char **prev = t->spans;
    size_t nprev = t->nspans, prev_cur = t->current;
    t->spans = NULL;
    t->nspans = 0;
    free(t->full);
    t->full = mb_strdup(snap);
    split_spans(c, t, snap);
    size_t next = 0;
    if (nprev && nprev == t->nspans && prev_cur < t->nspans) {
        int others_same = 1;
        for (size_t i = 0; i < t->nspans && others_same; i++)
            if (i != prev_cur && strcmp(t->spans[i], prev[i])) others_same = 0;
        if (others_same) next = prev_cur;
    }
    t->current = next < t->nspans ? next : t->nspans - 1;
    strv_free(prev, nprev);
}

/* ------------------------------------------------------------ tools/list */

static const char snapshot_description[] =
    "Capture accessibility snapshot of the current page. The snapshot is divided into manageable "
    "spans (configurable via --span-size, default 2000 characters, or use -1 to show complete "
    "snapshot) and shows the first span by default. Use browser_snapshot_navigate_* tools to view "
    "other spans or browser_snapshot_search to find content across all spans. This provides "
    "structured element data with ref attributes for interaction, making it better than "
    "screenshots for automation.";

#define EMPTY_SCHEMA                                                                               \
    "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false,"                      \
    "\"$schema\":\"http://json-schema.org/draft-07/schema#\"}"

static const struct {
    const char *name, *title, *description, *schema;
} span_tools[] = {
    {"browser_snapshot_navigate_to_span", "Navigate to specific snapshot span",
     "Navigate to a specific span in the current page snapshot by index. Each span contains a "
     "portion of the page content (limited by span size). Use this when you know the exact span "
     "number you want to view, typically after using browser_snapshot_search to locate content.",
     "{\"type\":\"object\",\"properties\":{\"spanIndex\":{\"type\":\"integer\",\"minimum\":0,"
     "\"description\":\"The span index to navigate to (0-based)\"}},\"required\":[\"spanIndex\"],"
     "\"additionalProperties\":false,\"$schema\":\"http://json-schema.org/draft-07/schema#\"}"},
    {"browser_snapshot_navigate_to_first_span", "Navigate to first snapshot span",
     "Navigate to the first span of the current page snapshot. This shows the beginning of the "
     "page content and is useful for starting from the top of the page when exploring content "
     "sequentially.",
     EMPTY_SCHEMA},
    {"browser_snapshot_navigate_to_last_span", "Navigate to last snapshot span",
     "Navigate to the last span of the current page snapshot. This shows the end of the page "
     "content and is useful for accessing footer content, final form elements, or bottom "
     "navigation.",
     EMPTY_SCHEMA},
    {"browser_snapshot_navigate_to_next_span", "Navigate to next snapshot span",
     "Navigate to the next span in the current page snapshot. If already at the last span, stays "
     "at the last span. Use this for sequential exploration of page content from top to bottom.",
     EMPTY_SCHEMA},
    {"browser_snapshot_navigate_to_prev_span", "Navigate to previous snapshot span",
     "Navigate to the previous span in the current page snapshot. If already at the first span, "
     "stays at the first span. Use this for sequential exploration of page content from bottom "
     "to top.",
     EMPTY_SCHEMA},
    {"browser_snapshot_navigate_to_line", "Navigate to specific line in snapshot",
     "Navigate to a specific global line number in the current page snapshot with configurable "
     "surrounding context lines. Shows which spans contain the context lines. The target line is "
     "marked with \">>>\". Use this to quickly jump to specific content found via search results.",
     "{\"type\":\"object\",\"properties\":{\"globalLineNumber\":{\"type\":\"integer\",\"minimum\":1,"
     "\"description\":\"The global line number to navigate to (1-based)\"},\"contextLines\":{"
     "\"type\":\"integer\",\"minimum\":0,\"maximum\":10,\"description\":\"Number of context lines "
     "to show before and after the target line (default: 3)\"}},\"required\":"
     "[\"globalLineNumber\"],\"additionalProperties\":false,"
     "\"$schema\":\"http://json-schema.org/draft-07/schema#\"}"},
    {"browser_snapshot_search", "Search in current snapshot",
     "Search for a pattern across all spans of the current page snapshot using regular "
     "expressions. Returns matches with both global line numbers (across entire snapshot) and "
     "in-span line numbers (within each span). Shows which spans contain matches for navigation. "
     "Supports regex flags like \"gi\" for global case-insensitive search.",
     "{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":\"string\",\"description\":"
     "\"The regex pattern to search for\"},\"flags\":{\"type\":\"string\",\"description\":"
     "\"Optional regex flags (e.g., \\\"gi\\\" for global case-insensitive)\"}},\"required\":"
     "[\"pattern\"],\"additionalProperties\":false,"
     "\"$schema\":\"http://json-schema.org/draft-07/schema#\"}"},
};
#define N_SPAN_TOOLS (sizeof span_tools / sizeof span_tools[0])

int mb_pw_chunk_is_local(const char *tool)
{
    for (size_t i = 0; i < N_SPAN_TOOLS; i++)
        if (!strcmp(span_tools[i].name, tool)) return 1;
    return 0;
}

void mb_pw_chunk_tools(mb_pw_chunk *c, json_t *result)
{
    (void)c;
    json_t *tools = json_object_get(result, "tools");
    if (!json_is_array(tools)) return;
    size_t at = json_array_size(tools);
    for (size_t i = 0; i < json_array_size(tools); i++) {
        json_t *t = json_array_get(tools, i);
        const char *name = json_string_value(json_object_get(t, "name"));
        if (!name) continue;
        if (!strcmp(name, "browser_snapshot"))
            json_object_set_new(t, "description", json_string(snapshot_description));
        if (!strcmp(name, "browser_select_option")) at = i + 1;
    }
    for (size_t k = 0; k < N_SPAN_TOOLS; k++) {
        json_t *schema = json_loads(span_tools[k].schema, JSON_DECODE_ANY, NULL);
        json_t *t = json_pack("{s:s,s:s,s:o,s:{s:s,s:b,s:b,s:b}}", "name", span_tools[k].name,
                              "description", span_tools[k].description, "inputSchema", schema,
                              "annotations", "title", span_tools[k].title, "readOnlyHint", 1,
                              "destructiveHint", 0, "openWorldHint", 1);
        json_array_insert_new(tools, at + k, t);
    }
}

/* --------------------------------------------------- following the tabs */

static int arg_index(json_t *args, const char *key, size_t *out)
{
    json_t *v = json_object_get(args, key);
    if (!json_is_number(v)) return 0;
    double d = json_number_value(v);
    if (d < 0 || d != floor(d)) return 0;
    *out = (size_t)d;
    return 1;
}

/* What an answer tells about the tabs: the tool's own effect, then the
 * "### Open tabs" list when upstream printed one. */
static void follow_tabs(mb_pw_chunk *c, const char *tool, json_t *args, const char *text,
                        int is_error)
{
    if (!strcmp(tool, "browser_navigate")) {
        /* Tab.navigate resets the tab even when goto then fails. */
        if (!c->ntabs) tabs_resize(c, 1);
        tab_reset(cur(c));
    } else if (!is_error && !strcmp(tool, "browser_tab_new")) {
        tabs_resize(c, c->ntabs + 1);
        c->current = c->ntabs - 1;
    } else if (!is_error && !strcmp(tool, "browser_tab_select")) {
        size_t i;
        if (arg_index(args, "index", &i) && i < c->ntabs) c->current = i;
    } else if (!is_error && !strcmp(tool, "browser_tab_close")) {
        size_t i = c->current;
        if (!json_object_get(args, "index") || arg_index(args, "index", &i)) tab_remove(c, i);
    } else if (!is_error && !strcmp(tool, "browser_close")) {
        tabs_resize(c, 0);
    }
    if (strstr(text, "### No open tabs\n")) {
        tabs_resize(c, 0);
        return;
    }
    const char *list = strstr(text, "### Open tabs\n");
    if (!list) {
        /* One tab and no list: upstream prints the list only for several. */
        if (!c->ntabs && strstr(text, "### Page state\n")) tabs_resize(c, 1);
        return;
    }
    size_t n = 0, current = 0;
    for (const char *p = list + 14; !strncmp(p, "- ", 2); n++) {
        const char *eol = strchr(p, '\n');
        const char *colon = strchr(p, ':');
        if (colon && eol && colon < eol && !strncmp(colon, ": (current)", 11)) current = n;
        if (!eol) {
            n++;
            break;
        }
        p = eol + 1;
    }
    /* Pages opened by the page itself (popups) are appended upstream. */
    if (n != c->ntabs) tabs_resize(c, n);
    c->current = current < n ? current : 0;
}

static const char yaml_open[] = "- Page Snapshot:\n```yaml\n";

char *mb_pw_chunk_result_text(mb_pw_chunk *c, const char *tool, const char *text)
{
    (void)tool;
    tab_state *t = cur(c);
    if (!t) return NULL;
    const char *modal = strstr(text, "### Modal state\n");
    if (modal && !strstr(text, yaml_open)) {
        free(t->modal);
        t->modal = mb_strdup(modal);
        size_t l = strlen(t->modal);
        while (l && t->modal[l - 1] == '\n') t->modal[--l] = '\0';
        return NULL;
    }
    free(t->modal);
    t->modal = NULL;
    /* The page state is the last part of the answer: "...- Page Snapshot:\n
     * ```yaml\n" SNAPSHOT "\n```\n". */
    const char *open = NULL;
    for (const char *p = strstr(text, yaml_open); p; p = strstr(p + 1, yaml_open)) open = p;
    size_t tl = strlen(text);
    if (!open || tl < 5 || strcmp(text + tl - 5, "\n```\n")) return NULL;
    const char *snap = open + sizeof yaml_open - 1;
    if (snap > text + tl - 5) return NULL;
    char *s = mb_strndup(snap, (size_t)(text + tl - 5 - snap));
    take_snapshot(c, t, s);
    free(s);
    mb_buf b = {0};
    mb_buf_append(&b, text, (size_t)(open - text));
    const char *span = t->spans[t->current];
    if (c->span_size == -1) {
        mb_buf_printf(&b, "%s%s\n```\n", yaml_open, span);
    } else {
        mb_buf_printf(&b, "- Page Snapshot (Span %zu of %zu):\n```yaml\n%s\n```\n\n*Use snapshot "
                      "navigation tools to view other spans. Current span size: %d characters*\n",
                      t->current + 1, t->nspans, span, c->span_size);
    }
    return mb_buf_steal(&b);
}

void mb_pw_chunk_after_call(mb_pw_chunk *c, const char *tool, json_t *args, const char *text,
                            int is_error)
{
    follow_tabs(c, tool, args, text ? text : "", is_error);
}

/* ------------------------------------------------------ zod validation */

static const char *zod_type(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    case JSON_ARRAY: return "array";
    default: return "object";
    }
}

static void issue_type(json_t *issues, const char *key, const char *expected, json_t *v)
{
    const char *got = v ? zod_type(v) : "undefined";
    char msg[80];
    snprintf(msg, sizeof msg, "Expected %s, received %s", expected, got);
    json_array_append_new(issues, json_pack("{s:s,s:s,s:s,s:[s],s:s}", "code", "invalid_type",
                                            "expected", expected, "received", got, "path", key,
                                            "message", v ? msg : "Required"));
}

/* z.number().int().min(lo)[.max(hi)][.optional()] */
static void check_int(json_t *issues, json_t *args, const char *key, int optional, double lo,
                      int has_hi, double hi)
{
    json_t *v = json_object_get(args, key);
    if (!v && optional) return;
    if (!json_is_number(v)) {
        issue_type(issues, key, "number", v);
        return;
    }
    double d = json_number_value(v);
    if (d != floor(d))
        json_array_append_new(issues, json_pack("{s:s,s:s,s:s,s:s,s:[s]}", "code", "invalid_type",
                                                "expected", "integer", "received", "float",
                                                "message", "Expected integer, received float",
                                                "path", key));
    char msg[80];
    if (d < lo) {
        snprintf(msg, sizeof msg, "Number must be greater than or equal to %g", lo);
        json_array_append_new(issues, json_pack("{s:s,s:I,s:s,s:b,s:b,s:s,s:[s]}", "code",
                                                "too_small", "minimum", (json_int_t)lo, "type",
                                                "number", "inclusive", 1, "exact", 0, "message",
                                                msg, "path", key));
    }
    if (has_hi && d > hi) {
        snprintf(msg, sizeof msg, "Number must be less than or equal to %g", hi);
        json_array_append_new(issues, json_pack("{s:s,s:I,s:s,s:b,s:b,s:s,s:[s]}", "code",
                                                "too_big", "maximum", (json_int_t)hi, "type",
                                                "number", "inclusive", 1, "exact", 0, "message",
                                                msg, "path", key));
    }
}

static void check_str(json_t *issues, json_t *args, const char *key, int optional)
{
    json_t *v = json_object_get(args, key);
    if ((!v && optional) || json_is_string(v)) return;
    issue_type(issues, key, "string", v);
}

/* ------------------------------------------------------- JS-like RegExp */

/* A search must not stall the launcher (which relays every session of the
 * sandbox) on a catastrophic pattern: a line whose match runs into these
 * limits counts as not matching. V8 would run on; the agent's call would hang. */
#define JS_REGEX_MATCH_LIMIT 1000000
#define JS_REGEX_DEPTH_LIMIT 100000

typedef struct js_regex {
    pcre2_code *code;
    pcre2_match_data *md;
    pcre2_match_context *mc;
    int global, sticky;
    size_t last_index; /* in UTF-16 code units, as RegExp#lastIndex */
} js_regex;

static const char *v8_message(int code, const char *pcre_msg)
{
    switch (code) {
    case PCRE2_ERROR_MISSING_CLOSING_PARENTHESIS: return "Unterminated group";
    case PCRE2_ERROR_MISSING_SQUARE_BRACKET: return "Unterminated character class";
    case PCRE2_ERROR_END_BACKSLASH: return "\\ at end of pattern";
    case PCRE2_ERROR_QUANTIFIER_OUT_OF_ORDER: return "numbers out of order in {} quantifier";
    case PCRE2_ERROR_QUANTIFIER_INVALID: return "Nothing to repeat";
    case PCRE2_ERROR_UNMATCHED_CLOSING_PARENTHESIS: return "Unmatched ')'";
    case PCRE2_ERROR_DUPLICATE_SUBPATTERN_NAME: return "Duplicate capture group name";
    case PCRE2_ERROR_CLASS_RANGE_ORDER: return "Range out of order in character class";
    case PCRE2_ERROR_LOOKBEHIND_NOT_FIXED_LENGTH: return "Invalid regular expression";
    default: return pcre_msg;
    }
}

/* new RegExp(pattern, flags); NULL with *why (a new string) on a SyntaxError. */
static js_regex *js_regex_new(const char *pattern, const char *flags, char **why)
{
    uint32_t opts = PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_ALLOW_EMPTY_CLASS |
                    PCRE2_MATCH_UNSET_BACKREF | PCRE2_DOLLAR_ENDONLY;
    int g = 0, y = 0, seen[128] = {0};
    for (const char *f = flags; *f; f++) {
        unsigned char ch = (unsigned char)*f;
        if (ch >= 128 || !strchr("dgimsuvy", ch) || seen[ch]++ || (ch == 'u' && seen['v']) ||
            (ch == 'v' && seen['u'])) {
            *why = mb_asprintf("Invalid flags supplied to RegExp constructor '%s'", flags);
            return NULL;
        }
        if (ch == 'g') g = 1;
        if (ch == 'y') y = 1;
        if (ch == 'i') opts |= PCRE2_CASELESS;
        if (ch == 'm') opts |= PCRE2_MULTILINE;
        if (ch == 's') opts |= PCRE2_DOTALL;
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
    pcre2_set_newline(cc, PCRE2_NEWLINE_ANY); /* '.' and '$' stop at \r, \u2028, \u2029 too */
    int err;
    PCRE2_SIZE off;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &err, &off, cc);
    pcre2_compile_context_free(cc);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        *why = mb_asprintf("Invalid regular expression: /%s/%s: %s", pattern, flags,
                           v8_message(err, (const char *)msg));
        return NULL;
    }
    js_regex *r = mb_calloc(1, sizeof *r);
    r->code = code;
    r->md = pcre2_match_data_create_from_pattern(code, NULL);
    r->mc = pcre2_match_context_create(NULL);
    pcre2_set_match_limit(r->mc, JS_REGEX_MATCH_LIMIT);
    pcre2_set_depth_limit(r->mc, JS_REGEX_DEPTH_LIMIT);
    r->global = g;
    r->sticky = y;
    return r;
}

static void js_regex_free(js_regex *r)
{
    if (!r) return;
    pcre2_match_data_free(r->md);
    pcre2_match_context_free(r->mc);
    pcre2_code_free(r->code);
    free(r);
}

/* RegExp#test(line), lastIndex included. */
static int js_regex_test(js_regex *r, const char *line)
{
    size_t len = strlen(line);
    size_t start_u16 = r->global || r->sticky ? r->last_index : 0;
    if (start_u16 > mb_utf16_len(line, len)) {
        r->last_index = 0;
        return 0;
    }
    size_t start = u16_prefix_bytes(line, len, start_u16);
    int rc = pcre2_match(r->code, (PCRE2_SPTR)line, len, start, r->sticky ? PCRE2_ANCHORED : 0,
                         r->md, r->mc);
    if (rc < 0) {
        if (r->global || r->sticky) r->last_index = 0;
        return 0;
    }
    if (r->global || r->sticky) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
        r->last_index = mb_utf16_len(line, ov[1]);
    }
    return 1;
}

/* ------------------------------------------------------- the 7 tools */

static char *result_text(mb_buf *results)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "### Result\n");
    mb_buf_append(&b, results->data, results->len);
    mb_buf_puts(&b, "\n");
    mb_buf_free(results);
    return mb_buf_steal(&b);
}

static void add_result(mb_buf *b, const char *s)
{
    if (b->len) mb_buf_putc(b, '\n');
    mb_buf_puts(b, s);
}

static char *span_answer(tab_state *t, long index, const char *label_fmt)
{
    mb_buf r = {0};
    if (!t->nspans) {
        add_result(&r, "No snapshot available. Take a snapshot first.");
        return result_text(&r);
    }
    long last = (long)t->nspans - 1;
    size_t i = (size_t)(index < 0 ? 0 : index > last ? last : index);
    t->current = i;
    if (!strcmp(label_fmt, "first")) mb_buf_printf(&r, "Navigated to first span (1 of %zu)", t->nspans);
    else if (!strcmp(label_fmt, "last"))
        mb_buf_printf(&r, "Navigated to last span (%zu of %zu)", i + 1, t->nspans);
    else mb_buf_printf(&r, "Navigated to span %zu of %zu", i + 1, t->nspans);
    mb_buf_printf(&r, "\n```yaml\n%s\n```", t->spans[i]);
    return result_text(&r);
}

static char *search(tab_state *t, const char *pattern, const char *flags)
{
    mb_buf r = {0};
    char *why = NULL;
    js_regex *re = js_regex_new(pattern, flags && *flags ? flags : "gi", &why);
    if (!re) {
        mb_buf_printf(&r, "Error searching: %s", why);
        free(why);
        return result_text(&r);
    }
    size_t nmatch = 0, nspans_hit = 0;
    mb_buf hits = {0}, shown = {0};
    for (size_t s = 0; s < t->nspans; s++) {
        char **lines;
        size_t nl;
        split_lines(t->spans[s], &lines, &nl);
        int hit = 0;
        for (size_t l = 0; l < nl; l++) {
            if (!js_regex_test(re, lines[l])) continue;
            hit = 1;
            size_t global = s < t->nranges ? t->ranges[s].start + l : l + 1;
            if (nmatch < 10) {
                size_t len = strlen(lines[l]);
                size_t a = mb_js_space_prefix(lines[l], len);
                size_t z = a < len ? mb_js_space_suffix(lines[l] + a, len - a) : 0;
                mb_buf_printf(&shown, "\n\n**Span %zu, Global Line %zu, In-Span Line %zu:**\n", s + 1,
                              global, l + 1);
                mb_buf_append(&shown, lines[l] + a, len - a - z);
            }
            nmatch++;
        }
        strv_free(lines, nl);
        if (hit) {
            mb_buf_printf(&hits, "%s%zu", nspans_hit ? ", " : "", s + 1);
            nspans_hit++;
        }
    }
    js_regex_free(re);
    if (!nspans_hit) {
        mb_buf_printf(&r, "No matches found for pattern: %s", pattern);
    } else {
        mb_buf_printf(&r, "Found %zu matches in %zu spans:\nSpans with matches: ", nmatch, nspans_hit);
        mb_buf_append(&r, hits.data, hits.len);
        mb_buf_append(&r, shown.data, shown.len);
        if (nmatch > 10) mb_buf_printf(&r, "\n\n... and %zu more matches", nmatch - 10);
        mb_buf_puts(&r, "\n\nUse navigation tools to view specific spans with matches.");
    }
    mb_buf_free(&hits);
    mb_buf_free(&shown);
    return result_text(&r);
}

static char *to_line(tab_state *t, long target, long context)
{
    mb_buf r = {0};
    if (!t->nlines) {
        add_result(&r, "No snapshot available. Take a snapshot first.");
        return result_text(&r);
    }
    long idx = target - 1, n = (long)t->nlines;
    if (idx < 0 || idx >= n) {
        mb_buf_printf(&r, "Line %ld is out of range. Snapshot has %ld lines.", target, n);
        return result_text(&r);
    }
    long a = idx - context < 0 ? 0 : idx - context;
    long z = idx + context > n - 1 ? n - 1 : idx + context;
    mb_buf spans = {0};
    size_t k = 0;
    for (size_t s = 0; s < t->nranges; s++)
        if ((long)t->ranges[s].start - 1 <= z && (long)t->ranges[s].end - 1 >= a)
            mb_buf_printf(&spans, "%s%zu", k++ ? ", " : "", s + 1);
    mb_buf_printf(&r, "Showing lines %ld-%ld (\xc2\xb1%ld context around line %ld)\n", a + 1, z + 1,
                  context, target);
    if (k) mb_buf_printf(&r, "Lines from spans: %s", spans.data);
    else mb_buf_puts(&r, "Span information unavailable");
    mb_buf_free(&spans);
    mb_buf_puts(&r, "\n```yaml\n");
    for (long i = a; i <= z; i++)
        mb_buf_printf(&r, "%s%s%ld: %s", i > a ? "\n" : "", i == idx ? ">>> " : "    ", i + 1,
                      t->lines[i]);
    mb_buf_puts(&r, "\n```");
    return result_text(&r);
}

char *mb_pw_chunk_call(mb_pw_chunk *c, const char *tool, json_t *args, int *is_error)
{
    *is_error = 0;
    json_t *empty = NULL;
    if (!json_is_object(args)) args = empty = json_object();
    /* Arguments first (the SDK parses them before the tool runs). */
    json_t *issues = json_array();
    if (!strcmp(tool, "browser_snapshot_navigate_to_span")) {
        check_int(issues, args, "spanIndex", 0, 0, 0, 0);
    } else if (!strcmp(tool, "browser_snapshot_navigate_to_line")) {
        check_int(issues, args, "globalLineNumber", 0, 1, 0, 0);
        check_int(issues, args, "contextLines", 1, 0, 1, 10);
    } else if (!strcmp(tool, "browser_snapshot_search")) {
        check_str(issues, args, "pattern", 0);
        check_str(issues, args, "flags", 1);
    }
    char *out = NULL;
    if (json_array_size(issues)) {
        *is_error = 1;
        out = mb_js_stringify(issues, 2);
        goto done;
    }
    tab_state *t = cur(c);
    if (!t) {
        *is_error = 1;
        out = mb_strdup("Error: No open pages available. Use the \"browser_navigate\" tool to "
                        "navigate to a page first.");
        goto done;
    }
    if (t->modal) {
        *is_error = 1;
        out = mb_asprintf("Error: Tool \"%s\" does not handle the modal state.\n%s", tool, t->modal);
        goto done;
    }
    if (!strcmp(tool, "browser_snapshot_navigate_to_span"))
        out = span_answer(t, (long)json_number_value(json_object_get(args, "spanIndex")), "span");
    else if (!strcmp(tool, "browser_snapshot_navigate_to_first_span")) out = span_answer(t, 0, "first");
    else if (!strcmp(tool, "browser_snapshot_navigate_to_last_span"))
        out = span_answer(t, (long)t->nspans - 1, "last");
    else if (!strcmp(tool, "browser_snapshot_navigate_to_next_span"))
        out = span_answer(t, (long)t->current + 1, "span");
    else if (!strcmp(tool, "browser_snapshot_navigate_to_prev_span"))
        out = span_answer(t, (long)t->current - 1, "span");
    else if (!strcmp(tool, "browser_snapshot_navigate_to_line")) {
        json_t *cl = json_object_get(args, "contextLines");
        out = to_line(t, (long)json_number_value(json_object_get(args, "globalLineNumber")),
                      cl ? (long)json_number_value(cl) : 3);
    } else {
        out = search(t, json_string_value(json_object_get(args, "pattern")),
                     json_string_value(json_object_get(args, "flags")));
    }
done:
    json_decref(issues);
    json_decref(empty);
    return out;
}
