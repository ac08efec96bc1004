/*
 * search.c - search_pdf_content's matching and the paged search sessions.
 *
 * Upstream runs re.finditer(pattern, page_text, re.IGNORECASE | re.MULTILINE)
 * on every page and keeps the matches in a session named by the first 8
 * characters of a uuid4, paged 10-50 at a time. Here the regex engine is
 * PCRE2 set up like Python's re on str: Unicode-aware classes and caseless
 * matching (UTF + UCP), '^'/'$' at "\n" only, '.' not matching "\n", and
 * finditer's empty-match rule. Contexts are 100 code points either side, as
 * Python slices str. Nothing here runs a program or touches a file.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "servers/pdf-tools/pdftools.h"

#define CONTEXT_CHARS 100

void mb_pdf_texts_free(mb_pdf_texts *t)
{
    if (!t) return;
    for (int i = 0; i < t->count; i++) free(t->text[i]);
    free(t->text);
    free(t->len);
    memset(t, 0, sizeof *t);
}

static int cont(unsigned char c) { return (c & 0xc0) == 0x80; }

/* back up to `chars` code points from pos */
static size_t back_chars(const char *s, size_t pos, int chars)
{
    while (pos > 0 && chars-- > 0) {
        pos--;
        int k = 0; /* at most 3 continuation bytes belong to one code point */
        while (pos > 0 && cont((unsigned char)s[pos]) && k++ < 3) pos--;
    }
    return pos;
}

static size_t fwd_chars(const char *s, size_t n, size_t pos, int chars)
{
    while (pos < n && chars-- > 0) {
        pos++;
        int k = 0;
        while (pos < n && cont((unsigned char)s[pos]) && k++ < 3) pos++;
    }
    return pos;
}

typedef struct mvec {
    mb_pdf_match *v;
    size_t n, cap;
} mvec;

static void push(mvec *m, const mb_pdf_match *x)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->v = mb_realloc(m->v, m->cap * sizeof *m->v);
    }
    m->v[m->n++] = *x;
}

int mb_pdf_find(const mb_pdf_texts *texts, const char *pattern, size_t max_matches,
                mb_pdf_match **out, size_t *count, mb_err *err)
{
    *out = NULL;
    *count = 0;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    int ecode;
    PCRE2_SIZE eoff;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_CASELESS | PCRE2_MULTILINE |
                                       PCRE2_MATCH_INVALID_UTF,
                                   &ecode, &eoff, cc);
    pcre2_compile_context_free(cc);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ecode, msg, sizeof msg);
        return mb_err_set(err, MB_EINVAL, "%s at position %zu", (char *)msg, (size_t)eoff);
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    mvec m = {0};
    int rc = MB_OK;
    for (int p = 0; p < texts->count && rc == MB_OK; p++) {
        const char *s = texts->text[p];
        size_t n = texts->len[p];
        size_t at = 0;
        uint32_t opts = 0;
        for (;;) {
            if (at > n) break;
            int r = pcre2_match(re, (PCRE2_SPTR)s, n, at, opts, md, NULL);
            if (r == PCRE2_ERROR_NOMATCH) {
                if (!opts) break;
                /* no non-empty match at `at` after an empty one: step one code point */
                opts = 0;
                if (at >= n) break;
                at = fwd_chars(s, n, at, 1);
                continue;
            }
            if (r < 0) {
                PCRE2_UCHAR msg[256];
                pcre2_get_error_message(r, msg, sizeof msg);
                rc = mb_err_set(err, MB_ETOOBIG, "the pattern is too costly to match (%s)",
                                (char *)msg);
                break;
            }
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            mb_pdf_match x = {.page = p + 1, .start = ov[0], .end = ov[1]};
            if (x.end < x.start) x.end = x.start; /* \K tricks */
            x.ctx_start = back_chars(s, x.start, CONTEXT_CHARS);
            x.ctx_end = fwd_chars(s, n, x.end, CONTEXT_CHARS);
            if (m.n >= max_matches) {
                rc = mb_err_set(err, MB_ETOOBIG,
                                "more than %zu matches; use a more specific pattern", max_matches);
                break;
            }
            push(&m, &x);
            at = ov[1];
            /* after an empty match, look for a non-empty one at the same place first */
            opts = ov[0] == ov[1] ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
        }
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    if (rc != MB_OK) {
        free(m.v);
        return rc;
    }
    *out = m.v;
    *count = m.n;
    return MB_OK;
}

/* ------------------------------------------------------------ sessions */

void mb_pdf_session_free(mb_pdf_session *s)
{
    if (!s) return;
    free(s->pdf_path);
    free(s->pattern);
    mb_pdf_texts_free(&s->texts);
    free(s->matches);
    free(s);
}

void mb_pdf_sessions_init(mb_pdf_sessions *s, size_t max, int max_age_seconds)
{
    memset(s, 0, sizeof *s);
    s->max = max ? max : 1;
    s->max_age_seconds = max_age_seconds;
}

void mb_pdf_sessions_dispose(mb_pdf_sessions *s)
{
    for (size_t i = 0; i < s->n; i++) mb_pdf_session_free(s->items[i]);
    free(s->items);
    memset(s, 0, sizeof *s);
}

static void drop_at(mb_pdf_sessions *s, size_t i)
{
    mb_pdf_session_free(s->items[i]);
    memmove(s->items + i, s->items + i + 1, (s->n - i - 1) * sizeof *s->items);
    s->n--;
}

void mb_pdf_sessions_add(mb_pdf_sessions *s, mb_pdf_session *session, time_t now)
{
    if (s->n > 20) /* upstream's cleanup_cache(): drop the idle ones */
        for (size_t i = s->n; i-- > 0;)
            if (now - s->items[i]->last_accessed > s->max_age_seconds) drop_at(s, i);
    while (s->n >= s->max) { /* mcpbox: bounded memory, least recently used first */
        size_t lru = 0;
        for (size_t i = 1; i < s->n; i++)
            if (s->items[i]->last_accessed < s->items[lru]->last_accessed) lru = i;
        drop_at(s, lru);
    }
    for (size_t i = 0; i < s->n; i++) /* a repeated id replaces, as a dict assignment does */
        if (!strcmp(s->items[i]->id, session->id)) {
            drop_at(s, i);
            break;
        }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->items = mb_realloc(s->items, s->cap * sizeof *s->items);
    }
    s->items[s->n++] = session;
}

mb_pdf_session *mb_pdf_sessions_get(mb_pdf_sessions *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->items[i]->id, id)) return s->items[i];
    return NULL;
}

/* ---------------------------------------------------------- formatting */

static void header(mb_buf *out, const mb_pdf_session *s, long long page, long long pages)
{
    mb_buf_printf(out, "Search ID: %s\nPattern: ", s->id);
    mb_buf_puts(out, s->pattern);
    mb_buf_printf(out, "\nTotal matches: %zu\nPage: %lld/%lld\n", s->count, page, pages);
}

static void results(mb_buf *out, const mb_pdf_session *s, long long page)
{
    size_t first = (size_t)((page - 1) * s->page_size);
    size_t last = first + (size_t)s->page_size;
    if (last > s->count) last = s->count;
    for (size_t i = first; i < last; i++) {
        const mb_pdf_match *m = &s->matches[i];
        const char *t = s->texts.text[m->page - 1];
        mb_buf_printf(out, "Match %zu:\n  Page: %d\n  Text: \"", i + 1, m->page);
        mb_buf_append(out, t + m->start, m->end - m->start);
        mb_buf_puts(out, "\"\n  Context: ...");
        mb_buf_append(out, t + m->ctx_start, m->start - m->ctx_start);
        mb_buf_putc(out, '[');
        mb_buf_append(out, t + m->start, m->end - m->start);
        mb_buf_putc(out, ']');
        mb_buf_append(out, t + m->end, m->ctx_end - m->end);
        mb_buf_puts(out, "...\n\n");
    }
}

void mb_pdf_format_first(mb_buf *out, const mb_pdf_session *s)
{
    long long pages = mb_pdf_result_pages((long long)s->count, s->page_size);
    header(out, s, 1, pages);
    mb_buf_printf(out, "Results per page: %lld\n\n", s->page_size);
    results(out, s, 1);
    if ((long long)s->count > s->page_size)
        mb_buf_printf(out,
                      "Use search_pdf_next_page, search_pdf_prev_page, or search_pdf_go_page "
                      "with search_id '%s' to navigate.",
                      s->id);
}

void mb_pdf_session_move(mb_buf *out, mb_pdf_session *s, mb_pdf_move move, long long page)
{
    long long pages = mb_pdf_result_pages((long long)s->count, s->page_size);
    switch (move) {
    case MB_PDF_NEXT:
        if (s->current_page >= pages) {
            mb_buf_printf(out, "Already on last page (%lld/%lld)", s->current_page, pages);
            return;
        }
        s->current_page++;
        break;
    case MB_PDF_PREV:
        if (s->current_page <= 1) {
            mb_buf_puts(out, "Already on first page (1)");
            return;
        }
        s->current_page--;
        break;
    case MB_PDF_GO:
        if (page < 1 || page > pages) {
            mb_buf_printf(out, "Error: Page number %lld is out of range (1-%lld)", page, pages);
            return;
        }
        s->current_page = page;
        break;
    case MB_PDF_FIRST:
        s->current_page = 1;
        break;
    }
    header(out, s, s->current_page, pages);
    mb_buf_putc(out, '\n');
    results(out, s, s->current_page);
}

void mb_pdf_format_info(mb_buf *out, mb_pdf_session *s, time_t now)
{
    s->last_accessed = now;
    long long pages = mb_pdf_result_pages((long long)s->count, s->page_size);
    struct tm tm;
    char when[32];
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    mb_buf_printf(out, "Search Session Information:\nSearch ID: %s\nPDF Path: ", s->id);
    mb_buf_puts(out, s->pdf_path);
    mb_buf_puts(out, "\nPattern: ");
    mb_buf_puts(out, s->pattern);
    mb_buf_printf(out,
                  "\nTotal matches: %zu\nCurrent page: %lld/%lld\nResults per page: %lld\n"
                  "Last accessed: %s\n",
                  s->count, s->current_page, pages, s->page_size, when);
}
