/*
 * pdftools.h - the pdf-tools server's inner face (lockon-n/pdf-tools-mcp 0.1.4,
 * the PDF server of Toolathlon). Files:
 *   server.c  start-up options, the tool table, pydantic-style argument checks
 *   tools.c   the nine tool handlers and their upstream texts
 *   paths.c   the workspace rule (validate_path) and URL downloads into the
 *             temp-file directory (resolve_path)
 *   pdfprog.c running poppler-utils and qpdf with time, memory and output caps:
 *             the PDF bytes are never parsed by mcpbox itself
 *   pages.c   pure page arithmetic (range clamping, page-size rule, pager math)
 *   search.c  pure regex search with Python re semantics (PCRE2) and the
 *             search sessions behind search_id
 */
#ifndef MB_SERVERS_PDFTOOLS_H
#define MB_SERVERS_PDFTOOLS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "mcp/mcp.h"
#include "util/util.h"

/* ------------------------------------------------------------ pages.c */

/* validate_page_range(): values below 1 become 1, above total become total,
 * then start and end are swapped if start > end. With total 0 both end as 0. */
void mb_pdf_clamp_range(long long *start, long long *end, long long total);
/* validate_page_size(): outside 10..50 -> 10 with a warning line appended to
 * `warning` ("Warning: Page size N is out of range (10-50). Using default
 * value 10.\n"). Returns the page size to use. */
long long mb_pdf_page_size(long long requested, mb_buf *warning);
/* Pages of `per_page` results needed for `count` results (ceil). */
long long mb_pdf_result_pages(long long count, long long per_page);
/* Python str.strip() would leave something (a non-whitespace code point). */
int mb_pdf_has_text(const char *s, size_t n);

/* ----------------------------------------------------------- search.c */

typedef struct mb_pdf_match {
    int page;            /* 1-based PDF page */
    size_t start, end;   /* byte offsets of the match in that page's text */
    size_t ctx_start;    /* up to 100 code points before start */
    size_t ctx_end;      /* up to 100 code points after end */
} mb_pdf_match;

typedef struct mb_pdf_texts {
    char **text;    /* text[i] is page i+1, NUL-terminated */
    size_t *len;
    int count;
} mb_pdf_texts;

void mb_pdf_texts_free(mb_pdf_texts *t);

/* Finds every match of `pattern` in every page, the way re.finditer(pattern,
 * text, re.IGNORECASE | re.MULTILINE) does (empty matches included). Returns
 * MB_OK with the matches (possibly none), MB_EINVAL when the pattern does not
 * compile (upstream then finds nothing), or MB_ETOOBIG when the regex exceeds
 * its backtracking budget or more than `max_matches` matches exist (err says
 * which). */
int mb_pdf_find(const mb_pdf_texts *texts, const char *pattern, size_t max_matches,
                mb_pdf_match **out, size_t *count, mb_err *err);

typedef struct mb_pdf_session {
    char id[9];          /* str(uuid4())[:8] */
    char *pdf_path;      /* as the client gave it */
    char *pattern;
    mb_pdf_texts texts;  /* owned: the text the matches point into */
    mb_pdf_match *matches;
    size_t count;
    long long current_page, page_size;
    time_t last_accessed;
} mb_pdf_session;

/* The search sessions of one server process (upstream's search_sessions). */
typedef struct mb_pdf_sessions {
    mb_pdf_session **items;
    size_t n, cap;
    size_t max;           /* hard cap; the least recently used goes first */
    int max_age_seconds;  /* upstream: 30 minutes */
} mb_pdf_sessions;

void mb_pdf_sessions_init(mb_pdf_sessions *s, size_t max, int max_age_seconds);
void mb_pdf_sessions_dispose(mb_pdf_sessions *s);
/* Stores a session (taking ownership). Upstream's rule first: with more than
 * 20 sessions, those idle longer than max_age go; then the hard cap. */
void mb_pdf_sessions_add(mb_pdf_sessions *s, mb_pdf_session *session, time_t now);
mb_pdf_session *mb_pdf_sessions_get(mb_pdf_sessions *s, const char *id);
void mb_pdf_session_free(mb_pdf_session *session);

/* The texts of the paging tools, byte for byte as upstream builds them. */
typedef enum { MB_PDF_FIRST, MB_PDF_NEXT, MB_PDF_PREV, MB_PDF_GO } mb_pdf_move;
/* search_pdf_content's reply for a fresh session (page 1, with "Results per
 * page" and the navigation hint). */
void mb_pdf_format_first(mb_buf *out, const mb_pdf_session *s);
/* next/prev/go: moves the session and appends the reply (or upstream's
 * "Already on ..."/"Error: Page number ..." text). `page` is used by GO. */
void mb_pdf_session_move(mb_buf *out, mb_pdf_session *s, mb_pdf_move move, long long page);
/* search_pdf_info's reply; `now` becomes last_accessed. */
void mb_pdf_format_info(mb_buf *out, mb_pdf_session *s, time_t now);

/* ---------------------------------------------------------- pdfprog.c */

typedef struct mb_pdf_limits {
    int timeout_ms;          /* per program run */
    uint64_t memory_bytes;   /* address-space cap of each program (prlimit) */
    size_t max_text;         /* cap of extracted text per run */
} mb_pdf_limits;

typedef struct mb_pdf_meta {
    long long pages;
    int has_info;            /* the Info dictionary exists and is not empty */
    char *title, *author, *creator, *creation_date; /* NULL when absent */
} mb_pdf_meta;

void mb_pdf_meta_dispose(mb_pdf_meta *m);

/* Every program failure below returns a negative mb_code with err->msg the
 * program's own last complaint (or the limit that stopped it). */

/* pdfinfo: page count and the four Info fields upstream prints. */
int mb_pdf_info(const mb_pdf_limits *lim, const char *path, mb_pdf_meta *out, mb_err *err);
/* pdftotext -raw: the text of pages first..last (1-based, inclusive). */
int mb_pdf_text(const mb_pdf_limits *lim, const char *path, long long first, long long last,
                mb_pdf_texts *out, mb_err *err);
/* qpdf --show-npages. */
int mb_pdf_qpdf_pages(const mb_pdf_limits *lim, const char *path, long long *pages, mb_err *err);
/* qpdf --empty --pages: writes `out_path` from the listed (path, pages)
 * pairs; pages is a qpdf range text ("1-z", "3,1,3"). The file's document
 * information is {/Producer (PyPDF2)}, as PyPDF2's PdfWriter writes it. */
int mb_pdf_qpdf_write(const mb_pdf_limits *lim, const char *const *paths,
                      const char *const *ranges, size_t n, const char *out_path, mb_err *err);
/* curl: downloads url to dest (timeout 30 s as upstream's requests.get).
 * Returns MB_OK with *status the HTTP status, or a failure with err set to
 * the transport error. */
int mb_pdf_download(const mb_pdf_limits *lim, const char *url, const char *dest, long *status,
                    char **final_url, mb_err *err);

/* ------------------------------------------------------------ paths.c */

typedef struct mb_pdf_state {
    char *workspace;   /* realpath, or NULL: no restriction (upstream default) */
    char *base;        /* where relative paths start: the workspace or the cwd */
    char *tempdir;     /* --tempfile_dir, absolute */
    mb_pdf_limits lim;
    mb_pdf_sessions sessions;
} mb_pdf_state;

int mb_pdf_is_url(const char *p);
/* An absolute path for a client path (relative ones start at st->base). */
char *mb_pdf_abs(const mb_pdf_state *st, const char *p);
/* validate_path(): NULL when allowed, else upstream's message (caller frees):
 * "Error: Path 'P' is outside the allowed workspace 'W'". */
char *mb_pdf_check_path(const mb_pdf_state *st, const char *p);
/* resolve_path() for URLs: the local copy in the temp-file directory,
 * downloaded once per URL (url_tempfile_mapping.json). On failure returns
 * NULL with *why set to upstream's exception text (caller frees). */
char *mb_pdf_fetch_url(mb_pdf_state *st, const char *url, char **why);

/* ------------------------------------------------------------ tools.c */

int mb_pdf_t_read_pages(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int mb_pdf_t_info(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int mb_pdf_t_merge(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int mb_pdf_t_extract(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int mb_pdf_t_search(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int mb_pdf_t_next(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int mb_pdf_t_prev(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int mb_pdf_t_go(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int mb_pdf_t_search_info(mb_mcp_call *call, json_t *args, mb_mcp_result *res);

/* ----------------------------------------------------------- server.c */

/* FastMCP's pydantic argument model, for the field kinds these tools use.
 * Each getter records a pydantic error line in `v` instead of failing; after
 * all fields, mb_pdf_args_fail() answers "N validation error(s) for
 * <tool>Arguments ..." if any was recorded. */
typedef struct mb_pdf_args {
    json_t *args;       /* borrowed; may be NULL */
    const char *tool;
    int errors;
    mb_buf msg;
} mb_pdf_args;

void mb_pdf_args_begin(mb_pdf_args *v, const char *tool, json_t *args);
const char *mb_pdf_arg_str(mb_pdf_args *v, const char *key);                /* required */
long long mb_pdf_arg_int(mb_pdf_args *v, const char *key, long long dflt, int required);
/* List[str] / List[int]: returns the array (new reference) or NULL. */
json_t *mb_pdf_arg_str_list(mb_pdf_args *v, const char *key);
json_t *mb_pdf_arg_int_list(mb_pdf_args *v, const char *key);
/* 0 when no error was recorded; else answers the call and returns MB_MCP_FAILED. */
int mb_pdf_args_end(mb_pdf_args *v, mb_mcp_result *res);

/* A tool's string reply: a text block and structuredContent {"result": text},
 * as FastMCP (mcp >= 1.10) answers a `-> str` tool. */
int mb_pdf_reply(mb_mcp_result *res, const char *text, size_t len);

#endif /* MB_SERVERS_PDFTOOLS_H */
