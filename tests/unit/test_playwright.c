/*
 * test_playwright.c - unit tests for the playwright layer's pure parts: the
 * re-implementation of the lockon-n chunk fork (span splitting, span headers,
 * span navigation, search with JavaScript RegExp semantics, line navigation,
 * validation texts, the tools/list rewrite) on fixed snapshot texts, and the
 * egress policy (allow-lists, public addresses, request targets).
 *
 * Expected search hits were computed with Node 20's RegExp (`regex.test(line)`
 * over the lines, flags defaulting to "gi"), i.e. with the lastIndex carried
 * from line to line that a `g` or `y` RegExp has; the texts follow the fork's
 * src/tab.ts and tools (lockon-n/playwright-mcp).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress.h"
#include "playwright/playwright.h"
#include "util/util.h"

/* Ten lines of 29 characters: with a span size of 100, three lines (3 x 30
 * with their newlines) fill a span, so the spans are lines 1-3, 4-6, 7-9, 10. */
#define L1 "- heading \"Fruit\" [ref=e2] .."
#define L2 "- listitem: apple pie ......."
#define L3 "- listitem: apple ..........x"
#define L4 "- listitem: banana .........x"
#define L5 "- listitem: Apple tart .....x"
#define L6 "- listitem: cherry .........x"
#define L7 "- link \"Apple store\" ........"
#define L8 "- listitem: date ............"
#define L9 "- listitem: fig ............x"
#define L10 "- button \"Go\" [ref=e9] ......"
#define SNAP L1 "\n" L2 "\n" L3 "\n" L4 "\n" L5 "\n" L6 "\n" L7 "\n" L8 "\n" L9 "\n" L10

#define FOOTER(size) "\n```\n\n*Use snapshot navigation tools to view other spans. Current span size: " size " characters*\n"

/* An upstream 0.0.32 answer with a page-state block around `snap`. */
static char *answer(const char *snap)
{
    return mb_asprintf("### Ran Playwright code\n```js\n// Navigate to http://site.test/\n"
                       "await page.goto('http://site.test/');\n```\n\n### Page state\n"
                       "- Page URL: http://site.test/\n- Page Title: Fruit\n"
                       "- Page Snapshot:\n```yaml\n%s\n```\n",
                       snap);
}

/* Feeds one upstream answer of `tool` through the layer; the rewritten text. */
static char *feed(mb_pw_chunk *c, const char *tool, json_t *args, const char *snap)
{
    char *text = answer(snap);
    mb_pw_chunk_after_call(c, tool, args, text, 0);
    char *out = mb_pw_chunk_result_text(c, tool, text);
    free(text);
    return out;
}

static char *call(mb_pw_chunk *c, const char *tool, const char *args_json, int *is_error)
{
    json_t *args = args_json ? json_loads(args_json, 0, NULL) : NULL;
    char *out = mb_pw_chunk_call(c, tool, args, is_error);
    json_decref(args);
    return out;
}

static void expect_call(mb_pw_chunk *c, const char *tool, const char *args, const char *want)
{
    int err = -1;
    char *got = call(c, tool, args, &err);
    assert_int_equal(err, 0);
    assert_string_equal(got, want);
    free(got);
}

static void test_fixture_lines(void **state)
{
    (void)state;
    const char *lines[] = {L1, L2, L3, L4, L5, L6, L7, L8, L9, L10};
    for (size_t i = 0; i < 10; i++) assert_int_equal(strlen(lines[i]), 29);
}

static void test_span_header_and_navigation(void **state)
{
    (void)state;
    mb_pw_chunk *c = mb_pw_chunk_new(100);
    char *out = feed(c, "browser_navigate", NULL, SNAP);
    assert_non_null(out);
    assert_string_equal(out, "### Ran Playwright code\n```js\n// Navigate to http://site.test/\n"
                             "await page.goto('http://site.test/');\n```\n\n### Page state\n"
                             "- Page URL: http://site.test/\n- Page Title: Fruit\n"
                             "- Page Snapshot (Span 1 of 4):\n```yaml\n" L1 "\n" L2 "\n" L3
                             FOOTER("100"));
    free(out);
    expect_call(c, "browser_snapshot_navigate_to_last_span", NULL,
                "### Result\nNavigated to last span (4 of 4)\n```yaml\n" L10 "\n```\n");
    expect_call(c, "browser_snapshot_navigate_to_next_span", NULL,
                "### Result\nNavigated to span 4 of 4\n```yaml\n" L10 "\n```\n");
    expect_call(c, "browser_snapshot_navigate_to_prev_span", "{}",
                "### Result\nNavigated to span 3 of 4\n```yaml\n" L7 "\n" L8 "\n" L9 "\n```\n");
    expect_call(c, "browser_snapshot_navigate_to_first_span", NULL,
                "### Result\nNavigated to first span (1 of 4)\n```yaml\n" L1 "\n" L2 "\n" L3 "\n```\n");
    expect_call(c, "browser_snapshot_navigate_to_prev_span", NULL,
                "### Result\nNavigated to span 1 of 4\n```yaml\n" L1 "\n" L2 "\n" L3 "\n```\n");
    /* an index past the end is clamped to the last span */
    expect_call(c, "browser_snapshot_navigate_to_span", "{\"spanIndex\": 99}",
                "### Result\nNavigated to span 4 of 4\n```yaml\n" L10 "\n```\n");
    expect_call(c, "browser_snapshot_navigate_to_span", "{\"spanIndex\": 1}",
                "### Result\nNavigated to span 2 of 4\n```yaml\n" L4 "\n" L5 "\n" L6 "\n```\n");
    mb_pw_chunk_free(c);
}

static void test_span_kept_or_reset(void **state)
{
    (void)state;
    mb_pw_chunk *c = mb_pw_chunk_new(100);
    free(feed(c, "browser_navigate", NULL, SNAP));
    expect_call(c, "browser_snapshot_navigate_to_span", "{\"spanIndex\": 1}",
                "### Result\nNavigated to span 2 of 4\n```yaml\n" L4 "\n" L5 "\n" L6 "\n```\n");
    /* the same text again: the current span stays */
    char *out = feed(c, "browser_snapshot", NULL, SNAP);
    assert_non_null(strstr(out, "- Page Snapshot (Span 2 of 4):\n```yaml\n" L4 "\n"));
    free(out);
    /* only the current span changed (a click changed one of its lines): it stays */
    const char *l5b = "- listitem: Apple tart .....y";
    char *changed = mb_asprintf("%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s", L1, L2, L3, L4, l5b, L6,
                                L7, L8, L9, L10);
    out = feed(c, "browser_click", NULL, changed);
    assert_non_null(strstr(out, "- Page Snapshot (Span 2 of 4):\n```yaml\n" L4 "\n"));
    free(out);
    /* another span changed too: back to the first */
    char *changed2 = mb_asprintf("%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s", L1, L2, L3, L4, L5, L6,
                                 L7, L8, L9, "- button \"Stop\" [ref=e9] ....");
    expect_call(c, "browser_snapshot_navigate_to_span", "{\"spanIndex\": 1}",
                "### Result\nNavigated to span 2 of 4\n```yaml\n" L4 "\n" "- listitem: Apple tart .....y"
                "\n" L6 "\n```\n");
    out = feed(c, "browser_click", NULL, changed2);
    assert_non_null(strstr(out, "- Page Snapshot (Span 1 of 4):\n"));
    free(out);
    /* browser_navigate resets even to an identical text */
    expect_call(c, "browser_snapshot_navigate_to_span", "{\"spanIndex\": 2}",
                "### Result\nNavigated to span 3 of 4\n```yaml\n" L7 "\n" L8 "\n" L9 "\n```\n");
    out = feed(c, "browser_navigate", NULL, changed2);
    assert_non_null(strstr(out, "- Page Snapshot (Span 1 of 4):\n"));
    free(out);
    free(changed);
    free(changed2);
    mb_pw_chunk_free(c);
}

static void test_search_js_semantics(void **state)
{
    (void)state;
    mb_pw_chunk *c = mb_pw_chunk_new(100);
    free(feed(c, "browser_navigate", NULL, SNAP));
    /* "g": lastIndex (29, the end of the match) carries to the next line of the
     * same length, so lines 4 and 6 are missed, as in the fork (Node: [3,5,9]) */
    expect_call(c, "browser_snapshot_search", "{\"pattern\": \"x\", \"flags\": \"g\"}",
                "### Result\nFound 3 matches in 3 spans:\nSpans with matches: 1, 2, 3\n\n"
                "**Span 1, Global Line 3, In-Span Line 3:**\n" L3 "\n\n"
                "**Span 2, Global Line 5, In-Span Line 2:**\n" L5 "\n\n"
                "**Span 3, Global Line 9, In-Span Line 3:**\n" L9 "\n\n"
                "Use navigation tools to view specific spans with matches.\n");
    /* without g every line is tested from its start (Node: [3,4,5,6,9]) */
    int err;
    char *out = call(c, "browser_snapshot_search", "{\"pattern\": \"x\", \"flags\": \"i\"}", &err);
    assert_non_null(strstr(out, "Found 5 matches in 3 spans:\nSpans with matches: 1, 2, 3\n"));
    assert_non_null(strstr(out, "**Span 2, Global Line 6, In-Span Line 3:**\n" L6 "\n"));
    free(out);
    /* the default flags are "gi" (Node: [2,5,7]) */
    out = call(c, "browser_snapshot_search", "{\"pattern\": \"apple\"}", &err);
    assert_non_null(strstr(out, "Found 3 matches in 3 spans:\n"));
    assert_non_null(strstr(out, "**Span 1, Global Line 2, In-Span Line 2:**\n"));
    assert_non_null(strstr(out, "**Span 2, Global Line 5, In-Span Line 2:**\n"));
    assert_non_null(strstr(out, "**Span 3, Global Line 7, In-Span Line 1:**\n"));
    assert_null(strstr(out, "Global Line 3,"));
    free(out);
    /* "" is falsy: "gi" too */
    out = call(c, "browser_snapshot_search", "{\"pattern\": \"apple\", \"flags\": \"\"}", &err);
    assert_non_null(strstr(out, "Found 3 matches in 3 spans:\n"));
    free(out);
    /* "i" alone (Node: [2,3,5,7]) */
    out = call(c, "browser_snapshot_search", "{\"pattern\": \"APPLE\", \"flags\": \"i\"}", &err);
    assert_non_null(strstr(out, "Found 4 matches in 3 spans:\nSpans with matches: 1, 2, 3\n"));
    free(out);
    expect_call(c, "browser_snapshot_search", "{\"pattern\": \"kiwi\"}",
                "### Result\nNo matches found for pattern: kiwi\n");
    /* every line, without g: all 10 shown, nothing left over */
    out = call(c, "browser_snapshot_search", "{\"pattern\": \"^-\", \"flags\": \"m\"}", &err);
    assert_non_null(strstr(out, "Found 10 matches in 4 spans:\nSpans with matches: 1, 2, 3, 4\n"));
    assert_non_null(strstr(out, "**Span 4, Global Line 10, In-Span Line 1:**\n" L10 "\n\nUse navigation"));
    assert_null(strstr(out, "more matches"));
    free(out);
    /* with g, the same: lastIndex 1 finds no second "-" on the next line (Node: [1,3,5,7,9]) */
    out = call(c, "browser_snapshot_search", "{\"pattern\": \"-\"}", &err);
    assert_non_null(strstr(out, "Found 5 matches in 3 spans:\nSpans with matches: 1, 2, 3\n"));
    free(out);
    /* V8's SyntaxError texts */
    expect_call(c, "browser_snapshot_search", "{\"pattern\": \"(\"}",
                "### Result\nError searching: Invalid regular expression: /(/gi: Unterminated group\n");
    expect_call(c, "browser_snapshot_search", "{\"pattern\": \"[a\"}",
                "### Result\nError searching: Invalid regular expression: /[a/gi: Unterminated "
                "character class\n");
    expect_call(c, "browser_snapshot_search", "{\"pattern\": \"*\"}",
                "### Result\nError searching: Invalid regular expression: /*/gi: Nothing to repeat\n");
    expect_call(c, "browser_snapshot_search", "{\"pattern\": \"x\", \"flags\": \"gg\"}",
                "### Result\nError searching: Invalid flags supplied to RegExp constructor 'gg'\n");
    mb_pw_chunk_free(c);
}

static void test_navigate_to_line(void **state)
{
    (void)state;
    mb_pw_chunk *c = mb_pw_chunk_new(100);
    free(feed(c, "browser_navigate", NULL, SNAP));
    expect_call(c, "browser_snapshot_navigate_to_line", "{\"globalLineNumber\": 3, \"contextLines\": 1}",
                "### Result\nShowing lines 2-4 (\xc2\xb1" "1 context around line 3)\nLines from spans: 1, 2\n"
                "```yaml\n    2: " L2 "\n>>> 3: " L3 "\n    4: " L4 "\n```\n");
    /* default context 3, clipped at the start */
    expect_call(c, "browser_snapshot_navigate_to_line", "{\"globalLineNumber\": 1}",
                "### Result\nShowing lines 1-4 (\xc2\xb1" "3 context around line 1)\nLines from spans: 1, 2\n"
                "```yaml\n>>> 1: " L1 "\n    2: " L2 "\n    3: " L3 "\n    4: " L4 "\n```\n");
    expect_call(c, "browser_snapshot_navigate_to_line", "{\"globalLineNumber\": 11}",
                "### Result\nLine 11 is out of range. Snapshot has 10 lines.\n");
    mb_pw_chunk_free(c);
}

static void test_validation_and_no_snapshot(void **state)
{
    (void)state;
    mb_pw_chunk *c = mb_pw_chunk_new(100);
    int err = 0;
    char *out = call(c, "browser_snapshot_navigate_to_span", "{\"spanIndex\": -1}", &err);
    assert_int_equal(err, 1);
    assert_non_null(strstr(out, "\"code\": \"too_small\""));
    assert_non_null(strstr(out, "\"message\": \"Number must be greater than or equal to 0\""));
    free(out);
    out = call(c, "browser_snapshot_navigate_to_line", "{\"globalLineNumber\": 2, \"contextLines\": 11}", &err);
    assert_int_equal(err, 1);
    assert_non_null(strstr(out, "\"message\": \"Number must be less than or equal to 10\""));
    free(out);
    out = call(c, "browser_snapshot_search", "{}", &err);
    assert_int_equal(err, 1);
    assert_non_null(strstr(out, "\"message\": \"Required\""));
    free(out);
    out = call(c, "browser_snapshot_navigate_to_span", "{\"spanIndex\": 1.5}", &err);
    assert_int_equal(err, 1);
    assert_non_null(strstr(out, "Expected integer, received float"));
    free(out);
    /* no tab yet */
    out = call(c, "browser_snapshot_navigate_to_first_span", NULL, &err);
    assert_int_equal(err, 1);
    assert_string_equal(out, "Error: No open pages available. Use the \"browser_navigate\" tool to "
                             "navigate to a page first.");
    free(out);
    /* a tab without a snapshot (the navigation failed) */
    mb_pw_chunk_after_call(c, "browser_navigate", NULL, "### Result\nError: net::ERR_FAILED", 1);
    expect_call(c, "browser_snapshot_navigate_to_first_span", NULL,
                "### Result\nNo snapshot available. Take a snapshot first.\n");
    expect_call(c, "browser_snapshot_navigate_to_line", "{\"globalLineNumber\": 1}",
                "### Result\nNo snapshot available. Take a snapshot first.\n");
    mb_pw_chunk_free(c);
}

static void test_long_lines_and_no_spans(void **state)
{
    (void)state;
    /* a line longer than the span is cut to size - 50 characters + a note */
    char long_line[301];
    memset(long_line, 'a', 300);
    long_line[300] = '\0';
    char *snap = mb_asprintf("- short\n%s\n- tail", long_line);
    mb_pw_chunk *c = mb_pw_chunk_new(100);
    char *out = feed(c, "browser_navigate", NULL, snap);
    assert_non_null(strstr(out, "- Page Snapshot (Span 1 of 3):\n```yaml\n- short\n```"));
    free(out);
    expect_call(c, "browser_snapshot_navigate_to_first_span", NULL,
                "### Result\nNavigated to first span (1 of 3)\n```yaml\n- short\n```\n");
    out = call(c, "browser_snapshot_navigate_to_next_span", NULL, &(int){0});
    assert_non_null(strstr(out, "... [line truncated, originally with 300 chars]\n```\n"));
    assert_non_null(strstr(out, "\n```yaml\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa..."));
    free(out);
    mb_pw_chunk_free(c);
    /* --span-size -1: the whole snapshot under the plain header */
    c = mb_pw_chunk_new(-1);
    out = feed(c, "browser_navigate", NULL, snap);
    assert_non_null(out);
    char *tail = mb_asprintf("- Page Snapshot:\n```yaml\n%s\n```\n", snap);
    size_t ol = strlen(out), tl = strlen(tail);
    assert_true(ol > tl && !strcmp(out + ol - tl, tail));
    free(tail);
    free(out);
    mb_pw_chunk_free(c);
    free(snap);
}

static void test_more_than_ten_matches(void **state)
{
    (void)state;
    mb_buf b = {0};
    for (int i = 1; i <= 13; i++) mb_buf_printf(&b, "%s- row %d", i > 1 ? "\n" : "", i);
    mb_pw_chunk *c = mb_pw_chunk_new(2000);
    free(feed(c, "browser_navigate", NULL, b.data));
    int err = 0;
    char *out = call(c, "browser_snapshot_search", "{\"pattern\": \"row\", \"flags\": \"i\"}", &err);
    assert_non_null(strstr(out, "Found 13 matches in 1 spans:\nSpans with matches: 1\n"));
    assert_non_null(strstr(out, "**Span 1, Global Line 10, In-Span Line 10:**\n- row 10\n\n"
                                "... and 3 more matches\n\nUse navigation tools to view specific "
                                "spans with matches.\n"));
    assert_null(strstr(out, "Global Line 11"));
    free(out);
    mb_buf_free(&b);
    mb_pw_chunk_free(c);
}

static void test_catastrophic_pattern_is_bounded(void **state)
{
    (void)state;
    char line[4001];
    memset(line, 'a', 3999);
    line[3999] = 'b';
    line[4000] = '\0';
    char *snap = mb_asprintf("- text: %s\n- text: aaa", line);
    mb_pw_chunk *c = mb_pw_chunk_new(-1);
    free(feed(c, "browser_navigate", NULL, snap));
    int err = 0;
    char *out = call(c, "browser_snapshot_search", "{\"pattern\": \"(a+)+$\", \"flags\": \"\"}", &err);
    /* the long line runs into the match limit; the short one matches */
    assert_string_equal(out, "### Result\nFound 1 matches in 1 spans:\nSpans with matches: 1\n\n"
                             "**Span 1, Global Line 2, In-Span Line 2:**\n- text: aaa\n\n"
                             "Use navigation tools to view specific spans with matches.\n");
    free(out);
    free(snap);
    mb_pw_chunk_free(c);
}

static void test_tabs_are_followed(void **state)
{
    (void)state;
    mb_pw_chunk *c = mb_pw_chunk_new(100);
    free(feed(c, "browser_navigate", NULL, SNAP));
    expect_call(c, "browser_snapshot_navigate_to_last_span", NULL,
                "### Result\nNavigated to last span (4 of 4)\n```yaml\n" L10 "\n```\n");
    /* a new tab with a small page is current: its own spans */
    char *text = mb_asprintf("### Open tabs\n- 0: [Fruit] (http://site.test/)\n- 1: (current) "
                             "[Small] (http://site.test/s)\n\n### Page state\n- Page URL: x\n"
                             "- Page Title: Small\n- Page Snapshot:\n```yaml\n- heading \"Small\"\n```\n");
    mb_pw_chunk_after_call(c, "browser_tab_new", NULL, text, 0);
    char *out = mb_pw_chunk_result_text(c, "browser_tab_new", text);
    assert_non_null(strstr(out, "### Open tabs\n- 0: [Fruit]"));
    assert_non_null(strstr(out, "- Page Snapshot (Span 1 of 1):\n```yaml\n- heading \"Small\"\n```"));
    free(out);
    free(text);
    /* back on tab 0: its current span is still the last */
    json_t *args = json_pack("{s:i}", "index", 0);
    mb_pw_chunk_after_call(c, "browser_tab_select", args, "### Open tabs\n- 0: (current) [Fruit] "
                           "(http://site.test/)\n- 1: [Small] (http://site.test/s)\n", 0);
    json_decref(args);
    expect_call(c, "browser_snapshot_navigate_to_next_span", NULL,
                "### Result\nNavigated to span 4 of 4\n```yaml\n" L10 "\n```\n");
    /* every tab closed */
    mb_pw_chunk_after_call(c, "browser_close", NULL, "### No open tabs\nUse the \"browser_navigate\" "
                           "tool to navigate to a page first.\n", 0);
    int err = 0;
    free(call(c, "browser_snapshot_navigate_to_first_span", NULL, &err));
    assert_int_equal(err, 1);
    mb_pw_chunk_free(c);
}

static void test_tools_list_rewrite(void **state)
{
    (void)state;
    json_t *res = json_loads("{\"tools\":[{\"name\":\"browser_close\"},{\"name\":\"browser_snapshot\","
                             "\"description\":\"old\"},{\"name\":\"browser_select_option\"},"
                             "{\"name\":\"browser_tab_list\"}]}", 0, NULL);
    mb_pw_chunk *c = mb_pw_chunk_new(5000);
    mb_pw_chunk_tools(c, res);
    json_t *tools = json_object_get(res, "tools");
    assert_int_equal(json_array_size(tools), 11);
    const char *order[] = {"browser_close", "browser_snapshot", "browser_select_option",
                           "browser_snapshot_navigate_to_span", "browser_snapshot_navigate_to_first_span",
                           "browser_snapshot_navigate_to_last_span", "browser_snapshot_navigate_to_next_span",
                           "browser_snapshot_navigate_to_prev_span", "browser_snapshot_navigate_to_line",
                           "browser_snapshot_search", "browser_tab_list"};
    for (size_t i = 0; i < 11; i++) {
        const char *n = json_string_value(json_object_get(json_array_get(tools, i), "name"));
        assert_string_equal(n, order[i]);
        assert_int_equal(mb_pw_chunk_is_local(n), i >= 3 && i <= 9);
    }
    const char *d = json_string_value(json_object_get(json_array_get(tools, 1), "description"));
    assert_non_null(strstr(d, "divided into manageable spans"));
    json_t *line = json_array_get(tools, 8);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(
                         json_object_get(line, "inputSchema"), "properties"), "contextLines"), "maximum")),
                     10);
    json_decref(res);
    mb_pw_chunk_free(c);
}

/* --------------------------------------------------------------- egress */

static void test_egress_allow_list(void **state)
{
    (void)state;
    const char *any[] = {"*", NULL};
    const char *some[] = {"example.com", "*.test.org", "10.1.2.3", NULL};
    const char *none[] = {NULL};
    assert_true(mb_egress_allowed(any, "anything.example"));
    assert_true(mb_egress_allowed(some, "example.com"));
    assert_true(mb_egress_allowed(some, "www.example.com"));
    assert_true(mb_egress_allowed(some, "WWW.Example.COM"));
    assert_false(mb_egress_allowed(some, "badexample.com"));
    assert_false(mb_egress_allowed(some, "example.com.evil.net"));
    assert_true(mb_egress_allowed(some, "test.org"));
    assert_true(mb_egress_allowed(some, "a.b.test.org"));
    assert_true(mb_egress_allowed(some, "10.1.2.3"));
    assert_false(mb_egress_allowed(some, "10.1.2.4"));
    assert_false(mb_egress_allowed(none, "example.com"));
    assert_false(mb_egress_allowed(NULL, "example.com"));
}

/* An acquire request's entries: well-formed, and within the profile's list or not. */
static void test_egress_entries_narrow_only(void **state)
{
    (void)state;
    const char *good[] = {"*", "example.com", "*.example.com", "a-b_c.d9.org", "10.0.0.1",
                          "::1", "2001:db8::7", "x", NULL};
    for (size_t i = 0; good[i]; i++) assert_true(mb_egress_entry_valid(good[i]));
    char long_label[80], long_name[300];
    memset(long_label, 'a', 64), long_label[64] = '\0';
    for (int i = 0; i < 295; i += 2) long_name[i] = 'a', long_name[i + 1] = '.';
    long_name[295] = 'a', long_name[296] = '\0';
    const char *bad[] = {"", ".", "a..b", ".a", "a.", "**", "*.", "*.*", "a/b", "a b",
                         "http://a.com", "a.com:80", "[::1]", "a\xc3\xa9.com", "\n", "a*.com",
                         "*a.com", "a.*.com", long_label, long_name, NULL};
    for (size_t i = 0; bad[i]; i++) assert_false(mb_egress_entry_valid(bad[i]));
    assert_false(mb_egress_entry_valid(NULL));

    const char *any[] = {"*", NULL};
    const char *some[] = {"example.com", "*.test.org", "10.1.2.3", NULL};
    const char *none[] = {NULL};
    /* narrowing */
    assert_true(mb_egress_within(any, "example.com"));
    assert_true(mb_egress_within(any, "*"));
    assert_true(mb_egress_within(some, "example.com"));
    assert_true(mb_egress_within(some, "api.example.com"));
    assert_true(mb_egress_within(some, "*.example.com"));
    assert_true(mb_egress_within(some, "deep.a.test.org"));
    assert_true(mb_egress_within(some, "10.1.2.3"));
    /* widening */
    assert_false(mb_egress_within(some, "*"));
    assert_false(mb_egress_within(some, "com"));
    assert_false(mb_egress_within(some, "*.com"));
    assert_false(mb_egress_within(some, "evil.net"));
    assert_false(mb_egress_within(some, "badexample.com"));
    assert_false(mb_egress_within(some, "10.1.2.4"));
    assert_false(mb_egress_within(none, "example.com"));
    assert_false(mb_egress_within(none, "*"));
}

static int public4(const char *ip)
{
    struct sockaddr_in s = {.sin_family = AF_INET};
    assert_int_equal(inet_pton(AF_INET, ip, &s.sin_addr), 1);
    return mb_egress_addr_public((struct sockaddr *)&s);
}

static int public6(const char *ip)
{
    struct sockaddr_in6 s = {.sin6_family = AF_INET6};
    assert_int_equal(inet_pton(AF_INET6, ip, &s.sin6_addr), 1);
    return mb_egress_addr_public((struct sockaddr *)&s);
}

static void test_egress_public_addresses(void **state)
{
    (void)state;
    assert_true(public4("93.184.216.34"));
    assert_true(public4("8.8.8.8"));
    const char *not4[] = {"127.0.0.1", "127.9.9.9", "10.0.0.1", "172.16.0.1", "172.31.255.255",
                          "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1",
                          "255.255.255.255", "192.0.2.1", "198.18.0.1", NULL};
    for (size_t i = 0; not4[i]; i++) assert_false(public4(not4[i]));
    assert_true(public4("172.32.0.1"));
    assert_true(public6("2606:4700::1111"));
    const char *not6[] = {"::1", "::", "fe80::1", "fc00::1", "fd12::1", "ff02::1", "::ffff:127.0.0.1",
                          "::ffff:10.0.0.1", "2001:db8::1", "64:ff9b::a00:1", "2002:7f00:1::1", NULL};
    for (size_t i = 0; not6[i]; i++) assert_false(public6(not6[i]));
    assert_true(public6("::ffff:8.8.8.8"));
}

static void test_egress_authority(void **state)
{
    (void)state;
    char host[256];
    int port = 0;
    assert_int_equal(mb_egress_split_authority("Example.COM:443", 15, 0, host, sizeof host, &port), 0);
    assert_string_equal(host, "example.com");
    assert_int_equal(port, 443);
    assert_int_equal(mb_egress_split_authority("site.test", 9, 80, host, sizeof host, &port), 0);
    assert_int_equal(port, 80);
    assert_int_equal(mb_egress_split_authority("[::1]:8080", 10, 0, host, sizeof host, &port), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 8080);
    const char *bad[] = {"site.test", "site.test:0", "site.test:65536", "site.test:x", "a b:80",
                         ":80", "[::1", "[nothex]:80", "..:80", "-x.test:80", "a/b:80", "", NULL};
    for (size_t i = 0; bad[i]; i++)
        assert_int_equal(mb_egress_split_authority(bad[i], strlen(bad[i]), 0, host, sizeof host, &port),
                         MB_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_lines),
        cmocka_unit_test(test_span_header_and_navigation),
        cmocka_unit_test(test_span_kept_or_reset),
        cmocka_unit_test(test_search_js_semantics),
        cmocka_unit_test(test_navigate_to_line),
        cmocka_unit_test(test_validation_and_no_snapshot),
        cmocka_unit_test(test_long_lines_and_no_spans),
        cmocka_unit_test(test_more_than_ten_matches),
        cmocka_unit_test(test_catastrophic_pattern_is_bounded),
        cmocka_unit_test(test_tabs_are_followed),
        cmocka_unit_test(test_tools_list_rewrite),
        cmocka_unit_test(test_egress_allow_list),
        cmocka_unit_test(test_egress_entries_narrow_only),
        cmocka_unit_test(test_egress_public_addresses),
        cmocka_unit_test(test_egress_authority),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
