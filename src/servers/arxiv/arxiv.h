/*
 * arxiv.h - the arxiv server's own face (private to src/servers/arxiv): the
 * offline paper catalog, the arXiv query-grammar compiler, arXiv identifiers,
 * the import command and the optional online fetcher.
 *
 * The catalog is a directory:
 *   DIR/catalog.sqlite     papers' metadata + an FTS5 index over it
 *   DIR/pdf/<ID>v<N>.pdf   PDFs (old-style ids with '/' written as '_')
 *   DIR/md/<ID>v<N>.md     pre-converted markdown
 * A paper's rowid encodes its first-version submission time (published << 20
 * | sequence), so "newest first" is the rowid order FTS5 walks natively and a
 * search stops after max_results rows however many papers match.
 */
#ifndef MB_SERVERS_ARXIV_H
#define MB_SERVERS_ARXIV_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* ------------------------------------------------------------- papers */

#define MB_ARXIV_MAX_VERSIONS 64

typedef struct mb_arxiv_paper {
    char *id;          /* without version: "2107.05580", "quant-ph/0201082" */
    int version;       /* latest version, >= 1 */
    char *title;       /* as the API shows it (whitespace runs collapsed) */
    char *abstract;    /* leading/trailing whitespace stripped */
    char **authors;    /* names, "First Last" */
    size_t n_authors;
    char **cats;       /* primary first */
    size_t n_cats;
    char *comment, *journal_ref, *doi, *report_no; /* NULL when absent */
    int64_t published; /* v1 submission, unix seconds UTC */
    int64_t versions[MB_ARXIV_MAX_VERSIONS]; /* submission time of v1..vN (0 unknown) */
} mb_arxiv_paper;

void mb_arxiv_paper_dispose(mb_arxiv_paper *p);
/* Time of version v (the latest's when unknown). */
int64_t mb_arxiv_paper_updated(const mb_arxiv_paper *p, int v);

/* An arXiv identifier split into id and version (0 = none given). Accepts
 * new style (YYMM.NNNN[N]) and old style (archive[.SC]/YYMMNNN), with an
 * optional "vN". Returns 0, or MB_EINVAL for anything else. */
int mb_arxiv_id_parse(const char *s, char **id, int *version);
/* The file name form of an id: '/' becomes '_'. Caller frees. */
char *mb_arxiv_id_file(const char *id, int version, const char *ext);

/* ------------------------------------------------------------ catalog */

typedef struct mb_arxiv_catalog mb_arxiv_catalog;

/* Opens (writable: creates) the catalog in `dir`. Read-only catalogs may sit
 * on read-only mounts (opened immutable). */
int mb_arxiv_catalog_open(const char *dir, int writable, mb_arxiv_catalog **out, mb_err *err);
void mb_arxiv_catalog_close(mb_arxiv_catalog *c);
const char *mb_arxiv_catalog_dir(const mb_arxiv_catalog *c);
int mb_arxiv_catalog_writable(const mb_arxiv_catalog *c);

/* Batches writes (import). */
int mb_arxiv_catalog_begin(mb_arxiv_catalog *c, mb_err *err);
int mb_arxiv_catalog_commit(mb_arxiv_catalog *c, mb_err *err);
/* Inserts or replaces a paper (by id). */
int mb_arxiv_catalog_put(mb_arxiv_catalog *c, const mb_arxiv_paper *p, mb_err *err);
/* The paper `id` (no version), MB_ENOTFOUND if absent. */
int mb_arxiv_catalog_get(mb_arxiv_catalog *c, const char *id, mb_arxiv_paper *out, mb_err *err);
int64_t mb_arxiv_catalog_count(mb_arxiv_catalog *c);

/* Runs an arXiv search_query newest first. `each` is called per paper until
 * it returns non-zero or `limit` papers were given (limit < 0: no limit). */
typedef int (*mb_arxiv_each_fn)(const mb_arxiv_paper *p, void *ctx);
int mb_arxiv_catalog_search(mb_arxiv_catalog *c, const char *query, long limit,
                            mb_arxiv_each_fn each, void *ctx, mb_err *err);

/* Path of the catalog's PDF ("pdf") or markdown ("md") of id at `version`
 * (0: the newest version present, or the unversioned file). NULL if absent.
 * Caller frees. */
char *mb_arxiv_catalog_file(const mb_arxiv_catalog *c, const char *id, int version,
                            int latest, const char *kind);

/* ------------------------------------------------------------- queries */

/* A search_query compiled for the catalog: an FTS5 MATCH text for the part
 * the full-text index answers, and an SQL condition (over papers AS p) with
 * its parameters for the rest. */
typedef struct mb_arxiv_query {
    char *match;       /* NULL: no full-text part */
    char *where;       /* NULL: no other condition */
    json_t *params;    /* array of strings / integers, bound as ?1.. in order
                          of appearance: match first (if any), then where's */
    int nothing;       /* the query can match nothing (empty / only stop words) */
} mb_arxiv_query;

/* Compiles arXiv's grammar: field prefixes ti: au: abs: co: jr: cat: rn: id:
 * all:, AND / OR / ANDNOT (and NOT), "phrases", (groups), field:(groups),
 * trailing-* prefixes and submittedDate:[YYYYMMDDHHMM TO YYYYMMDDHHMM] /
 * lastUpdatedDate:[...] ranges. Adjacent terms without an operator are
 * OR-ed, AND and ANDNOT bind tighter than OR. Never fails on odd input
 * (unbalanced parentheses and quotes are closed, stray operators dropped):
 * returns 0 with *out filled (dispose with mb_arxiv_query_dispose). */
int mb_arxiv_query_compile(const char *q, mb_arxiv_query *out);
void mb_arxiv_query_dispose(mb_arxiv_query *q);

/* The FTS token form of a category / an id (".-/" folded into letters so
 * that each is one token of the unicode61 tokenizer). Caller frees. */
char *mb_arxiv_cat_token(const char *cat);
char *mb_arxiv_id_token(const char *id);

/* ------------------------------------------------------- text helpers */

/* Collapses whitespace runs into one space and trims (re.sub(r"\s+", " ")
 * after feedparser's strip). Caller frees. */
char *mb_arxiv_collapse_ws(const char *s);
/* Strips leading / trailing whitespace. Caller frees. */
char *mb_arxiv_strip(const char *s);
/* TeX accents and specials of author names ({\"o}, \'e, \ss...) as UTF-8,
 * braces dropped. Caller frees. */
char *mb_arxiv_tex_to_utf8(const char *s);
/* "Mon, 2 Apr 2007 19:18:42 GMT" -> unix seconds; -1 if unparseable. */
int64_t mb_arxiv_parse_rfc2822(const char *s);
/* "2007-04-02T19:18:42Z" (any offset) -> unix seconds; -1 if unparseable. */
int64_t mb_arxiv_parse_iso(const char *s);
/* Python datetime.isoformat() of a UTC-aware time: "2024-01-02T03:04:05+00:00". */
void mb_arxiv_iso_utc(int64_t t, char out[32]);

/* dateutil.parser.parse(s) with `now` as the default date, in microseconds
 * since the epoch (the zone is dropped, as upstream's .replace(tzinfo=utc)
 * does). Returns 0, or -1 with dateutil's message appended to err. */
int mb_arxiv_dateutil_parse(const char *s, int64_t now, int64_t *out_us, mb_buf *err);

/* A metadata record of the Kaggle/OAI snapshot (one JSON line) as a paper.
 * Returns 0 or MB_EINVAL with err saying what is missing. */
int mb_arxiv_paper_from_snapshot(const json_t *rec, mb_arxiv_paper *out, mb_err *err);

/* --------------------------------------------------------------- online */

/* A loopback TCP port relaying to the daemon's egress proxy socket (egress.c). */
typedef struct mb_arxiv_egress {
    int listener;
    int running;
    pthread_t thread;
    char path[108];     /* the unix socket ($MCPBOX_EGRESS_PROXY) */
    int relays;         /* connections being relayed (atomic) */
} mb_arxiv_egress;

/* Listens on 127.0.0.1:<any>; *proxy_url = "http://127.0.0.1:PORT" (caller frees). */
int mb_arxiv_egress_start(mb_arxiv_egress *e, const char *socket_path, char **proxy_url,
                          mb_err *err);
/* Stops listening and waits (up to 2 s) for the relays in flight. */
void mb_arxiv_egress_stop(mb_arxiv_egress *e);

typedef struct mb_arxiv_online {
    char *api_base;     /* "https://export.arxiv.org/api/query" */
    char *pdf_base;     /* "https://arxiv.org/pdf/" */
    char *proxy;        /* NULL: none (curl's own *_proxy environment applies) */
    char *egress_socket;/* the daemon's egress proxy; used when proxy is NULL */
    mb_arxiv_egress egress;
    int delay_ms;       /* between two requests (arXiv asks 3000) */
    int timeout_s;
    int64_t last_request_ms;
} mb_arxiv_online;

/* Asks the arXiv API (search_query or id_list, newest first when sorting by
 * submittedDate) and parses the Atom feed into papers. *out is an array of
 * *n papers (free each with mb_arxiv_paper_dispose, then the array). */
int mb_arxiv_online_query(mb_arxiv_online *o, const char *search_query, const char *id_list,
                          int sort_by_date, long max_results, mb_arxiv_paper **out, size_t *n,
                          mb_err *err);
/* Downloads the PDF of id vN to `dest`. */
int mb_arxiv_online_pdf(mb_arxiv_online *o, const char *id, int version, const char *dest,
                        mb_err *err);
/* Python's urllib.parse.quote_plus() of s, appended to b. */
void mb_arxiv_quote_plus(mb_buf *b, const char *s);
/* Parses an arXiv API Atom feed. Entries titled "Error" are reported as an
 * MB_EINVAL with their summary. */
int mb_arxiv_atom_parse(const char *xml, size_t len, mb_arxiv_paper **out, size_t *n,
                        mb_err *err);

/* --------------------------------------------------------------- server */

typedef enum mb_arxiv_version { MB_ARXIV_0_2_11 = 0, MB_ARXIV_0_2_10 = 1 } mb_arxiv_version;

/* One download in progress or done (upstream's ConversionStatus). */
typedef struct mb_arxiv_conv {
    char *paper_id;
    char status[16];      /* downloading, converting, success, error */
    double started_at, completed_at; /* 0: none */
    char *error;
    pthread_t thread;
    int has_thread;
    /* conversion job */
    char *src, *dest;     /* markdown to copy, or PDF to convert; dest = <id>.md */
    int src_is_md;
} mb_arxiv_conv;

typedef struct mb_arxiv_server {
    mb_arxiv_version version;
    char *storage;        /* resolved --storage-path */
    char *catalog_dir;
    mb_arxiv_catalog *catalog; /* NULL until opened (or when there is none) */
    char *catalog_error;  /* why it could not be opened */
    int online;
    mb_arxiv_online net;
    int convert_timeout_s;
    pthread_mutex_t lock; /* guards convs (conversion threads update them) */
    mb_arxiv_conv **convs;
    size_t nconvs;
} mb_arxiv_server;

/* The tools (tools.c, download.c). */
int mb_arxiv_t_search(mb_arxiv_server *s, json_t *args, mb_buf *out);
int mb_arxiv_t_list(mb_arxiv_server *s, json_t *args, mb_buf *out);
int mb_arxiv_t_read(mb_arxiv_server *s, json_t *args, mb_buf *out);
int mb_arxiv_t_download(mb_arxiv_server *s, json_t *args, mb_buf *out);
/* Looks a paper up by id (+ version), in the catalog and, online, at arXiv
 * (storing what it fetched). 0, MB_ENOTFOUND, or an error (text in err). */
int mb_arxiv_lookup(mb_arxiv_server *s, const char *id, mb_arxiv_paper *out, mb_err *err);
/* str() of the arxiv package's HTTPError for an id the API refuses (400). */
char *mb_arxiv_http_400(const char *id);
/* The catalog, opened on first use; NULL with *why set when there is none. */
mb_arxiv_catalog *mb_arxiv_server_catalog(mb_arxiv_server *s, const char **why);
/* Waits for conversions and frees their records. */
void mb_arxiv_convs_free(mb_arxiv_server *s);

#endif /* MB_SERVERS_ARXIV_H */
