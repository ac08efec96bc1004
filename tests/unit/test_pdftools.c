/*
 * test_pdftools.c - unit tests for the pdf-tools server's pure parts: page-range
 * clamping and page-size rules (validate_page_range / validate_page_size of
 * pdf_tools_mcp 0.1.4), Python re.finditer semantics of the search, the texts of
 * the paged search sessions, the session store, and the pydantic-style argument
 * errors through a real server instance (mb_mcp_handle_line, no PDF program run).
 * Expected values come from CPython 3.11 (re, str.strip) and upstream's source.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "servers/pdf-tools/pdftools.h"
#include "servers/servers.h"
#include "util/util.h"

static void test_clamp(void **state)
{
    (void)state;
    struct { long long s, e, total, ws, we; } cases[] = {
        {1, 1, 10, 1, 1},  {0, 0, 10, 1, 1},   {-5, 3, 10, 1, 3}, {8, 20, 10, 8, 10},
        {9, 2, 10, 2, 9},  {50, 40, 10, 10, 10}, {3, -1, 10, 1, 3}, {1, 1, 0, 0, 0},
        {4, 4, 4, 4, 4},   {12, 1, 4, 1, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long long s = cases[i].s, e = cases[i].e;
        mb_pdf_clamp_range(&s, &e, cases[i].total);
        assert_int_equal(s, cases[i].ws);
        assert_int_equal(e, cases[i].we);
    }
}

static void test_page_size(void **state)
{
    (void)state;
    mb_buf w = {0};
    assert_int_equal(mb_pdf_page_size(10, &w), 10);
    assert_int_equal(mb_pdf_page_size(50, &w), 50);
    assert_int_equal(w.len, 0);
    assert_int_equal(mb_pdf_page_size(51, &w), 10);
    assert_string_equal(w.data, "Warning: Page size 51 is out of range (10-50). Using default value 10.\n");
    mb_buf_reset(&w);
    assert_int_equal(mb_pdf_page_size(-3, &w), 10);
    assert_string_equal(w.data, "Warning: Page size -3 is out of range (10-50). Using default value 10.\n");
    mb_buf_free(&w);
    assert_int_equal(mb_pdf_result_pages(25, 10), 3);
    assert_int_equal(mb_pdf_result_pages(20, 10), 2);
    assert_int_equal(mb_pdf_result_pages(1, 50), 1);
    assert_int_equal(mb_pdf_result_pages(0, 10), 0);
}

static void test_has_text(void **state)
{
    (void)state;
    assert_false(mb_pdf_has_text("", 0));
    assert_false(mb_pdf_has_text(" \n\t\f\r\v", 6));
    assert_false(mb_pdf_has_text("\xc2\xa0\xe3\x80\x80\xe2\x80\x89", 8)); /* NBSP, ideographic, thin */
    assert_true(mb_pdf_has_text("  x ", 4));
    assert_true(mb_pdf_has_text("\xe2\x80\x8b", 3)); /* ZERO WIDTH SPACE is not whitespace in Python */
    assert_true(mb_pdf_has_text("\xff", 1));
}

/* pages from C strings */
static mb_pdf_texts texts_of(const char *const *pages)
{
    mb_pdf_texts t = {0};
    while (pages[t.count]) t.count++;
    t.text = mb_calloc((size_t)t.count, sizeof *t.text);
    t.len = mb_calloc((size_t)t.count, sizeof *t.len);
    for (int i = 0; i < t.count; i++) {
        t.text[i] = mb_strdup(pages[i]);
        t.len[i] = strlen(pages[i]);
    }
    return t;
}

/* "page:start-end" of every match, as re.finditer reports them (code points here are ASCII) */
static char *spans(const char *const *pages, const char *pattern)
{
    mb_pdf_texts t = texts_of(pages);
    mb_pdf_match *m = NULL;
    size_t n = 0;
    mb_err err = {0};
    int rc = mb_pdf_find(&t, pattern, 1000, &m, &n, &err);
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    if (rc != MB_OK) mb_buf_printf(&b, "rc=%d", rc);
    for (size_t i = 0; i < n; i++) mb_buf_printf(&b, "%s%d:%zu-%zu", i ? " " : "", m[i].page, m[i].start, m[i].end);
    free(m);
    mb_pdf_texts_free(&t);
    return mb_buf_steal(&b);
}

static void expect_spans(const char *const *pages, const char *pattern, const char *want)
{
    char *got = spans(pages, pattern);
    assert_string_equal(got, want);
    free(got);
}

static void test_find_python_semantics(void **state)
{
    (void)state;
    const char *const p1[] = {"Total: 12\ntotal: 7", "TOTAL", NULL};
    /* re.IGNORECASE | re.MULTILINE */
    expect_spans(p1, "^total", "1:0-5 1:10-15 2:0-5");
    expect_spans(p1, "\\d+$", "1:7-9 1:17-18");
    /* [m.span() for m in re.finditer('a*', 'baa')] == [(0,0), (1,3), (3,3)] */
    const char *const p2[] = {"baa", NULL};
    expect_spans(p2, "a*", "1:0-0 1:1-3 1:3-3");
    /* re.finditer('', 'ab') -> (0,0) (1,1) (2,2) */
    const char *const p3[] = {"ab", NULL};
    expect_spans(p3, "", "1:0-0 1:1-1 1:2-2");
    /* '.' does not cross newlines; \s does */
    const char *const p4[] = {"a\nb", NULL};
    expect_spans(p4, "a.b", "");
    expect_spans(p4, "a\\sb", "1:0-3");
    /* Unicode-aware classes and case folding (re on str) */
    const char *const p5[] = {"\xc3\x89t\xc3\xa9 caf\xc3\xa9", NULL}; /* "Été café" */
    expect_spans(p5, "\xc3\xa9t\xc3\xa9", "1:0-5");
    expect_spans(p5, "\\w+", "1:0-5 1:6-11");
    /* named groups, lazy quantifiers, lookahead */
    const char *const p6[] = {"CNY 61.02 and CNY 7.50", NULL};
    expect_spans(p6, "(?P<cur>cny)\\s+(?=\\d)", "1:0-4 1:14-18");
    expect_spans(p6, "\\d+?", "1:4-5 1:5-6 1:7-8 1:8-9 1:18-19 1:20-21 1:21-22");
    /* a bad pattern is MB_EINVAL (upstream then reports no matches) */
    expect_spans(p6, "(unclosed", "rc=-1");
}

static void test_find_context_and_limits(void **state)
{
    (void)state;
    /* 120 two-byte code points, the match, 120 more: contexts are 100 code points */
    mb_buf page = {0};
    for (int i = 0; i < 120; i++) mb_buf_puts(&page, "\xc3\xa9");
    mb_buf_puts(&page, "NEEDLE");
    for (int i = 0; i < 120; i++) mb_buf_puts(&page, "\xc3\xa8");
    const char *pages[] = {page.data, NULL};
    mb_pdf_texts t = texts_of(pages);
    mb_pdf_match *m;
    size_t n;
    mb_err err = {0};
    assert_int_equal(mb_pdf_find(&t, "needle", 10, &m, &n, &err), MB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(m[0].start, 240);
    assert_int_equal(m[0].end, 246);
    assert_int_equal(m[0].ctx_start, 240 - 200);
    assert_int_equal(m[0].ctx_end, 246 + 200);
    free(m);
    /* too many matches: a clear error, not unbounded memory */
    assert_int_equal(mb_pdf_find(&t, "\xc3\xa9", 10, &m, &n, &err), MB_ETOOBIG);
    assert_non_null(strstr(err.msg, "more than 10 matches"));
    assert_null(m);
    /* catastrophic backtracking stops at PCRE2's match limit */
    mb_buf evil = {0};
    for (int i = 0; i < 40; i++) mb_buf_putc(&evil, 'a');
    mb_buf_putc(&evil, '!');
    const char *ep[] = {evil.data, NULL};
    mb_pdf_texts et = texts_of(ep);
    assert_int_equal(mb_pdf_find(&et, "(a+)+$", 10, &m, &n, &err), MB_ETOOBIG);
    assert_non_null(strstr(err.msg, "too costly"));
    mb_pdf_texts_free(&et);
    mb_buf_free(&evil);
    mb_pdf_texts_free(&t);
    mb_buf_free(&page);
}

/* a session of `count` matches "x<i>" on page 1 */
static mb_pdf_session *session_of(int count, long long page_size)
{
    mb_buf text = {0};
    for (int i = 0; i < count; i++) mb_buf_printf(&text, "x%d ", i + 1);
    const char *pages[] = {text.data, NULL};
    mb_pdf_session *s = mb_calloc(1, sizeof *s);
    strcpy(s->id, "abcd1234");
    s->pdf_path = mb_strdup("doc.pdf");
    s->pattern = mb_strdup("x\\d+");
    s->texts = texts_of(pages);
    mb_err err = {0};
    assert_int_equal(mb_pdf_find(&s->texts, s->pattern, 1000, &s->matches, &s->count, &err), MB_OK);
    assert_int_equal((int)s->count, count);
    s->current_page = 1;
    s->page_size = page_size;
    mb_buf_free(&text);
    return s;
}

static void test_session_paging(void **state)
{
    (void)state;
    mb_pdf_session *s = session_of(12, 10);
    mb_buf b = {0};
    mb_pdf_format_first(&b, s);
    assert_true(mb_str_has_prefix(b.data, "Search ID: abcd1234\nPattern: x\\d+\nTotal matches: 12\n"
                                          "Page: 1/2\nResults per page: 10\n\nMatch 1:\n  Page: 1\n"
                                          "  Text: \"x1\"\n  Context: ...[x1] x2 x3 x4 x5 x6 x7 x8 x9 "
                                          "x10 x11 x12 ...\n\nMatch 2:\n"));
    assert_true(mb_str_has_suffix(b.data, "Match 10:\n  Page: 1\n  Text: \"x10\"\n  Context: ...x1 x2 "
                                          "x3 x4 x5 x6 x7 x8 x9 [x10] x11 x12 ...\n\nUse "
                                          "search_pdf_next_page, search_pdf_prev_page, or "
                                          "search_pdf_go_page with search_id 'abcd1234' to navigate."));
    mb_buf_reset(&b);
    mb_pdf_session_move(&b, s, MB_PDF_PREV, 0);
    assert_string_equal(b.data, "Already on first page (1)");
    mb_buf_reset(&b);
    mb_pdf_session_move(&b, s, MB_PDF_NEXT, 0);
    assert_string_equal(b.data, "Search ID: abcd1234\nPattern: x\\d+\nTotal matches: 12\nPage: 2/2\n\n"
                                "Match 11:\n  Page: 1\n  Text: \"x11\"\n  Context: ...x1 x2 x3 x4 x5 x6 "
                                "x7 x8 x9 x10 [x11] x12 ...\n\nMatch 12:\n  Page: 1\n  Text: \"x12\"\n"
                                "  Context: ...x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 [x12] ...\n\n");
    assert_int_equal(s->current_page, 2);
    mb_buf_reset(&b);
    mb_pdf_session_move(&b, s, MB_PDF_NEXT, 0);
    assert_string_equal(b.data, "Already on last page (2/2)");
    mb_buf_reset(&b);
    mb_pdf_session_move(&b, s, MB_PDF_GO, 3);
    assert_string_equal(b.data, "Error: Page number 3 is out of range (1-2)");
    assert_int_equal(s->current_page, 2);
    mb_buf_reset(&b);
    mb_pdf_session_move(&b, s, MB_PDF_GO, 1);
    assert_true(mb_str_has_prefix(b.data, "Search ID: abcd1234\nPattern: x\\d+\nTotal matches: 12\n"
                                          "Page: 1/2\n\nMatch 1:\n"));
    mb_buf_reset(&b);
    mb_pdf_format_info(&b, s, 0);
    assert_true(mb_str_has_prefix(b.data, "Search Session Information:\nSearch ID: abcd1234\n"
                                          "PDF Path: doc.pdf\nPattern: x\\d+\nTotal matches: 12\n"
                                          "Current page: 1/2\nResults per page: 10\nLast accessed: "));
    assert_true(mb_str_has_suffix(b.data, "\n"));
    mb_buf_free(&b);
    mb_pdf_session_free(s);

    /* exactly one page: no navigation hint */
    s = session_of(3, 10);
    mb_pdf_format_first(&b, s);
    assert_null(strstr(b.data, "navigate"));
    assert_true(mb_str_has_suffix(b.data, "[x3] ...\n\n"));
    mb_buf_free(&b);
    mb_pdf_session_free(s);
}

static void test_session_store(void **state)
{
    (void)state;
    mb_pdf_sessions st;
    mb_pdf_sessions_init(&st, 25, 1800);
    for (int i = 0; i < 21; i++) {
        mb_pdf_session *s = session_of(1, 10);
        snprintf(s->id, sizeof s->id, "id%06d", i % 100);
        s->last_accessed = i < 5 ? 0 : 10000; /* five idle for hours */
        mb_pdf_sessions_add(&st, s, 10000);
    }
    assert_int_equal(st.n, 21); /* at most 20 before each add: nothing dropped yet */
    assert_non_null(mb_pdf_sessions_get(&st, "id000000"));
    /* more than 20: the idle ones go (upstream's cleanup_cache) */
    mb_pdf_session *s = session_of(1, 10);
    strcpy(s->id, "fresh001");
    s->last_accessed = 10000;
    mb_pdf_sessions_add(&st, s, 10000);
    assert_int_equal(st.n, 17);
    assert_null(mb_pdf_sessions_get(&st, "id000000"));
    assert_non_null(mb_pdf_sessions_get(&st, "id000005"));
    assert_non_null(mb_pdf_sessions_get(&st, "fresh001"));
    assert_null(mb_pdf_sessions_get(&st, "nope"));
    /* the hard cap drops the least recently used */
    for (int i = 0; i < 10; i++) {
        s = session_of(1, 10);
        snprintf(s->id, sizeof s->id, "more%04d", i % 100);
        s->last_accessed = 10001 + i; /* recent: nobody is idle now */
        mb_pdf_sessions_add(&st, s, 10001 + i);
    }
    assert_int_equal(st.n, 25);
    assert_non_null(mb_pdf_sessions_get(&st, "more0009"));
    assert_non_null(mb_pdf_sessions_get(&st, "more0000"));
    /* the two oldest (last_accessed 10000, first added) made room */
    assert_null(mb_pdf_sessions_get(&st, "id000005"));
    assert_null(mb_pdf_sessions_get(&st, "id000006"));
    assert_non_null(mb_pdf_sessions_get(&st, "id000007"));
    mb_pdf_sessions_dispose(&st);
}

/* -------------------------------------------- argument errors, end to end */

static char *roundtrip(mb_mcp_server *srv, const char *line)
{
    mb_buf out = {0};
    mb_mcp_handle_line(srv, line, strlen(line), &out);
    return mb_buf_steal(&out);
}

static void test_argument_errors(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/pdftools-unit-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *tempdir = mb_asprintf("%s/.tmp", tmpl);
    char *argv[] = {"pdf-tools", "--workspace_path", tmpl, "--tempfile_dir", tempdir, NULL};
    mb_mcp_server *srv = NULL;
    mb_err err = {0};
    const mb_server_entry *e = mb_server_find("pdf-tools");
    assert_non_null(e);
    assert_int_equal(e->create(5, argv, &srv, &err), MB_OK);
    char *r = roundtrip(srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                             "{\"name\":\"search_pdf_go_page\",\"arguments\":{\"search_id\":7}}}");
    assert_non_null(strstr(r, "\"isError\":true"));
    assert_non_null(strstr(r, "Error executing tool search_pdf_go_page: 2 validation errors for "
                              "search_pdf_go_pageArguments\\nsearch_id\\n  Input should be a valid "
                              "string [type=string_type, input_value=7, input_type=int]\\n    For "
                              "further information visit https://errors.pydantic.dev/2.11/v/"
                              "string_type\\npage_number\\n  Field required [type=missing, "
                              "input_value={'search_id': 7}, input_type=dict]"));
    free(r);
    r = roundtrip(srv, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"merge_pdfs\",\"arguments\":{\"pdf_paths\":\"a.pdf\","
                       "\"output_path\":\"o.pdf\"}}}");
    assert_non_null(strstr(r, "pdf_paths\\n  Input should be a valid list [type=list_type, "
                              "input_value='a.pdf', input_type=str]"));
    free(r);
    /* an unknown session is a normal reply, with structuredContent */
    r = roundtrip(srv, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"search_pdf_info\",\"arguments\":{\"search_id\":\"zz\"}}}");
    assert_non_null(strstr(r, "\"structuredContent\":{\"result\":\"Error: Search session 'zz' not "
                              "found or expired\"}"));
    assert_null(strstr(r, "\"isError\":true"));
    free(r);
    /* a bad option is a usage error */
    char *bad[] = {"pdf-tools", "--nope", NULL};
    mb_mcp_server *srv2 = NULL;
    assert_int_equal(e->create(2, bad, &srv2, &err), MB_EINVAL);
    mb_mcp_server_free(srv);
    mb_rm_rf(tmpl, &err);
    free(tempdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clamp),
        cmocka_unit_test(test_page_size),
        cmocka_unit_test(test_has_text),
        cmocka_unit_test(test_find_python_semantics),
        cmocka_unit_test(test_find_context_and_limits),
        cmocka_unit_test(test_session_paging),
        cmocka_unit_test(test_session_store),
        cmocka_unit_test(test_argument_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
