/*
 * test_arxiv.c - unit tests for the arxiv server's pure parts: arXiv ids, the
 * query grammar compiled to FTS5/SQL, the search semantics over a small
 * catalog built in a temporary directory (fields, booleans, phrases,
 * prefixes, categories, dates, newest-first order), the snapshot record
 * format, TeX accents of author names, and dateutil-style date parsing with
 * its error texts, and the Atom feeds of online mode. Integration tests drive the tools themselves
 * (tests/integration/test_server_arxiv.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "servers/arxiv/arxiv.h"
#include "util/util.h"

static void test_ids(void **state)
{
    (void)state;
    struct { const char *in, *id; int v; } ok[] = {
        {"2107.05580", "2107.05580", 0},       {"2107.05580v1", "2107.05580", 1},
        {"0704.0001v12", "0704.0001", 12},     {"quant-ph/0201082v1", "quant-ph/0201082", 1},
        {"hep-th/9901001", "hep-th/9901001", 0}, {"math.GT/0309136", "math.GT/0309136", 0},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char *id;
        int v;
        assert_int_equal(mb_arxiv_id_parse(ok[i].in, &id, &v), MB_OK);
        assert_string_equal(id, ok[i].id);
        assert_int_equal(v, ok[i].v);
        free(id);
    }
    const char *bad[] = {"abc", "", "2107.055", "2107.05580v", "2107.05580v0", "../etc/passwd",
                         "2107.05580/../x", "hep-th/990100", "HEP-TH/9901001", "2107.05580 ",
                         "/2107.05580", "2107.05580v1.md"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *id;
        int v;
        assert_int_equal(mb_arxiv_id_parse(bad[i], &id, &v), MB_EINVAL);
        assert_null(id);
    }
    char *f = mb_arxiv_id_file("hep-th/9901001", 2, "pdf");
    assert_string_equal(f, "hep-th_9901001v2.pdf");
    free(f);
}

static void expect(const char *q, const char *match, const char *where)
{
    mb_arxiv_query c;
    assert_int_equal(mb_arxiv_query_compile(q, &c), MB_OK);
    if (match) {
        if (!c.match) fail_msg("%s: no match part (where %s)", q, c.where ? c.where : "-");
        assert_string_equal(c.match, match);
    } else if (c.match) {
        fail_msg("%s: unexpected match %s", q, c.match);
    }
    if (where) {
        if (!c.where) fail_msg("%s: no where part", q);
        assert_string_equal(c.where, where);
    } else if (c.where) {
        fail_msg("%s: unexpected where %s", q, c.where);
    }
    assert_int_equal(c.nothing, !match && !where);
    mb_arxiv_query_dispose(&c);
}

#define ALL "{ti au abs co jr rn} : "

static void test_grammar(void **state)
{
    (void)state;
    expect("all:quantum", ALL "\"quantum\"", NULL);
    expect("quantum", ALL "\"quantum\"", NULL);
    expect("ti:quantum AND au:smith", "(ti : \"quantum\") AND (au : \"smith\")", NULL);
    /* adjacency is OR, AND binds tighter */
    expect("ti:x b AND c", "(ti : \"x\") OR ((" ALL "\"b\") AND (" ALL "\"c\"))", NULL);
    expect("ti:a b", ALL "\"b\"", NULL); /* \"a\" is a stop word */
    expect("abs:x ANDNOT ti:y", "(abs : \"x\") NOT (ti : \"y\")", NULL);
    expect("ti:\"surface codes\"", "ti : \"surface codes\"", NULL);
    /* a quote ends at the next quote; empty phrases vanish */
    expect("all:\"say \"\"hi\"", "(" ALL "\"say \") OR (" ALL "\"hi\")", NULL);
    expect("ti:quant*", "ti : \"quant\" *", NULL);
    expect("ti:(quantum OR chemistry)", "(ti : \"quantum\") OR (ti : \"chemistry\")", NULL);
    expect("au:del_maestro", "au : \"del_maestro\"", NULL);
    expect("cat:cs.AI", "cat : \"cs0ai\"", NULL);
    expect("cat:hep-th", "cat : \"hep1th\"", NULL);
    expect("cat:cs", "cat : (\"cs\" OR \"cs0\" *)", NULL);
    expect("cat:cs.*", "cat : \"cs0\" *", NULL);
    expect("id:2107.05580v2", "idx : \"2107x05580\"", NULL);
    expect("(all:x) AND (cat:cs.LG OR cat:stat.ML)",
           "(" ALL "\"x\") AND ((cat : \"cs0lg\") OR (cat : \"stat0ml\"))", NULL);
    /* stop words and token-less terms vanish */
    expect("all:the AND all:quantum", ALL "\"quantum\"", NULL);
    expect("the", NULL, NULL);
    expect("all:", NULL, NULL);
    expect("&& -- ::", NULL, NULL);
    expect("", NULL, NULL);
    expect("NOT quantum", NULL, NULL);
    expect("ti:\"the\"", "ti : \"the\"", NULL); /* phrases keep them */
    /* lenient with broken input */
    expect("((ti:x", "ti : \"x\"", NULL);
    expect("ti:x))) OR ti:b", "(ti : \"x\") OR (ti : \"b\")", NULL);
    expect("AND OR ti:x ANDNOT", "ti : \"x\"", NULL);
    expect("unknown:field", ALL "\"unknown:field\"", NULL);
    expect("TI:x", "ti : \"x\"", NULL);
    /* dates */
    expect("submittedDate:[202401010000 TO 202401312359]", NULL,
           "p.rowid BETWEEN 1786843968307200 AND 1789652474265599");
    expect("ti:x AND submittedDate:[20240101 TO *]", "ti : \"x\"",
           "p.rowid BETWEEN 1786843968307200 AND 9223372036854775807");
    expect("ti:x OR lastUpdatedDate:[* TO 20200101]", NULL,
           "(p.rowid IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?)) OR "
           "(p.updated BETWEEN -9223372036854775808 AND 1577923199)");
    expect("ti:x ANDNOT submittedDate:[20240101 TO 20241231]", "ti : \"x\"",
           "NOT (p.rowid BETWEEN 1786843968307200 AND 1820002458009599)");
    expect("submittedDate:[bad TO 2020]", NULL, NULL);
    /* hostile sizes stay bounded */
    char *deep = malloc(20001);
    memset(deep, '(', 20000);
    deep[20000] = '\0';
    mb_arxiv_query c;
    mb_arxiv_query_compile(deep, &c);
    assert_true(c.nothing);
    mb_arxiv_query_dispose(&c);
    for (int i = 0; i < 20000; i += 4) memcpy(deep + i, "NOT ", 4);
    mb_arxiv_query_compile(deep, &c);
    mb_arxiv_query_dispose(&c);
    for (int i = 0; i < 20000; i += 2) memcpy(deep + i, "x ", 2);
    mb_arxiv_query_compile(deep, &c);
    assert_non_null(c.match);
    mb_arxiv_query_dispose(&c);
    free(deep);
}

/* ----------------------------------------------------------- catalog */

typedef struct hits {
    char ids[64][32];
    int n;
} hits;

static int collect(const mb_arxiv_paper *p, void *ctx)
{
    hits *h = ctx;
    if (h->n < 64) snprintf(h->ids[h->n++], 32, "%sv%d", p->id, p->version);
    return 0;
}

static const char *const RECORDS[] = {
    "{\"id\":\"2401.00001\",\"title\":\"Quantum Error Correction with\\n  Surface Codes\","
    "\"abstract\":\"  We study surface codes.\\nThey correct errors.\\n\","
    "\"authors_parsed\":[[\"Quantum\",\"Alice\",\"\"],[\"Bal\\\\'azs\",\"C.\",\"\"]],"
    "\"categories\":\"quant-ph cs.IT\",\"versions\":[{\"version\":\"v1\",\"created\":\"Tue, 2 Jan 2024 03:04:05 GMT\"},"
    "{\"version\":\"v2\",\"created\":\"Thu, 1 Feb 2024 10:00:00 GMT\"}]}",
    "{\"id\":\"2405.22222\",\"title\":\"Transformer Networks for Quantum Chemistry\","
    "\"abstract\":\"Attention meets molecules.\",\"authors_parsed\":[[\"Smith\",\"Jane\",\"\"]],"
    "\"categories\":\"physics.chem-ph cs.LG\",\"versions\":[{\"version\":\"v1\",\"created\":\"Sat, 25 May 2024 12:00:00 GMT\"}]}",
    "{\"id\":\"2405.11111\",\"title\":\"Attention Mechanisms in Transformer Networks\","
    "\"abstract\":\"Self-attention is all you need.\",\"authors_parsed\":[[\"Maestro\",\"Adrian Del\",\"\"]],"
    "\"categories\":\"cs.CL cs.LG\",\"versions\":[{\"version\":\"v1\",\"created\":\"Mon, 20 May 2024 08:00:00 GMT\"}]}",
    "{\"id\":\"hep-th/9901001\",\"title\":\"String Dualities\",\"abstract\":\"Old quantum strings.\","
    "\"authors\":\"E. Witten and J. Polchinski\",\"categories\":\"hep-th\","
    "\"versions\":[{\"version\":\"v1\",\"created\":\"Mon, 4 Jan 1999 00:00:00 GMT\"}]}",
    "{\"id\":\"2002.00001\",\"title\":\"Graph Neural Networks: A Survey\",\"abstract\":\"Graphs.\","
    "\"authors_parsed\":[[\"Zhou\",\"Jie\",\"\"]],\"categories\":\"cs.LG\",\"doi\":\"10.1000/gnn\","
    "\"versions\":[{\"version\":\"v1\",\"created\":\"Sat, 1 Feb 2020 00:00:00 GMT\"}]}",
};

static char *make_catalog(mb_arxiv_catalog **out)
{
    char tmpl[] = "/tmp/test_arxiv.XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    dir = mb_strdup(dir);
    mb_arxiv_catalog *c;
    mb_err err = {0};
    assert_int_equal(mb_arxiv_catalog_open(dir, 1, &c, &err), MB_OK);
    assert_int_equal(mb_arxiv_catalog_begin(c, &err), MB_OK);
    for (size_t i = 0; i < sizeof RECORDS / sizeof *RECORDS; i++) {
        json_error_t je;
        json_t *rec = json_loads(RECORDS[i], 0, &je);
        if (!rec) fail_msg("record %zu: %s", i, je.text);
        mb_arxiv_paper p;
        if (mb_arxiv_paper_from_snapshot(rec, &p, &err)) fail_msg("%s", err.msg);
        assert_int_equal(mb_arxiv_catalog_put(c, &p, &err), MB_OK);
        /* putting it again replaces it */
        assert_int_equal(mb_arxiv_catalog_put(c, &p, &err), MB_OK);
        mb_arxiv_paper_dispose(&p);
        json_decref(rec);
    }
    assert_int_equal(mb_arxiv_catalog_commit(c, &err), MB_OK);
    *out = c;
    return dir;
}

static void search(mb_arxiv_catalog *c, const char *q, const char *expected)
{
    hits h = {0};
    mb_err err = {0};
    if (mb_arxiv_catalog_search(c, q, -1, collect, &h, &err)) fail_msg("%s: %s", q, err.msg);
    char got[1024] = "";
    for (int i = 0; i < h.n; i++) {
        if (i) strcat(got, " ");
        strcat(got, h.ids[i]);
    }
    if (strcmp(got, expected)) fail_msg("%s: got [%s], expected [%s]", q, got, expected);
}

static void test_catalog_search(void **state)
{
    (void)state;
    mb_arxiv_catalog *c;
    char *dir = make_catalog(&c);
    assert_int_equal(mb_arxiv_catalog_count(c), 5);
    /* newest first */
    search(c, "all:networks", "2405.22222v1 2405.11111v1 2002.00001v1");
    search(c, "all:quantum", "2405.22222v1 2401.00001v2 hep-th/9901001v1");
    search(c, "all:quantum AND all:transformer", "2405.22222v1");
    search(c, "all:quantum transformer", "2405.22222v1 2405.11111v1 2401.00001v2 hep-th/9901001v1");
    search(c, "ti:quantum ANDNOT ti:chemistry", "2401.00001v2");
    search(c, "ti:\"surface codes\"", "2401.00001v2");
    search(c, "ti:\"codes surface\"", "");
    search(c, "abs:\"self-attention\"", "2405.11111v1");
    search(c, "ti:transf*", "2405.22222v1 2405.11111v1");
    search(c, "au:del_maestro", "2405.11111v1");
    search(c, "au:balazs", "2401.00001v2"); /* TeX accent folded, diacritics removed */
    search(c, "au:witten", "hep-th/9901001v1");
    search(c, "cat:cs.LG", "2405.22222v1 2405.11111v1 2002.00001v1");
    search(c, "cat:cs", "2405.22222v1 2405.11111v1 2401.00001v2 2002.00001v1");
    search(c, "cat:hep-th", "hep-th/9901001v1");
    search(c, "cat:physics.chem-ph", "2405.22222v1");
    search(c, "cat:chem", "");
    search(c, "id:2002.00001", "2002.00001v1");
    search(c, "id:hep-th/9901001v1", "hep-th/9901001v1");
    search(c, "(all:networks) AND (cat:cs.CL OR cat:physics.chem-ph)", "2405.22222v1 2405.11111v1");
    search(c, "submittedDate:[202401010000 TO 202405202359]", "2405.11111v1 2401.00001v2");
    search(c, "all:networks AND submittedDate:[20200101 TO 20240521]", "2405.11111v1 2002.00001v1");
    search(c, "all:graphs OR submittedDate:[19990101 TO 19991231]", "2002.00001v1 hep-th/9901001v1");
    search(c, "lastUpdatedDate:[20240201 TO 20240201]", "2401.00001v2");
    search(c, "all:quantum ANDNOT submittedDate:[2024010100 TO 2024]", "2405.22222v1 2401.00001v2 hep-th/9901001v1");
    search(c, "all:quantum ANDNOT submittedDate:[20240101 TO 20241231]", "hep-th/9901001v1");
    /* a date OR inside an AND inside an OR keeps its precedence */
    search(c, "ti:graph OR (ti:quantum AND (submittedDate:[20240101 TO 20240131] OR "
              "lastUpdatedDate:[* TO 20000101]))", "2401.00001v2 2002.00001v1");
    /* long chains stay within FTS5's and SQLite's parser depths */
    mb_buf chain = {0}, nots = {0}, dates = {0};
    for (int i = 0; i < 1500; i++) {
        mb_buf_printf(&chain, "%sall:quantum", i ? " AND " : "");
        mb_buf_printf(&nots, "%s", i ? " ANDNOT ti:zzz" : "all:quantum");
        mb_buf_printf(&dates, "%s(all:quantum AND submittedDate:[19990101 TO 19990201])",
                      i ? " OR " : "");
    }
    search(c, chain.data, "2405.22222v1 2401.00001v2 hep-th/9901001v1");
    search(c, nots.data, "2405.22222v1 2401.00001v2 hep-th/9901001v1");
    search(c, dates.data, "hep-th/9901001v1");
    mb_buf_free(&chain), mb_buf_free(&nots), mb_buf_free(&dates);
    search(c, "all:the", "");
    search(c, "\"unbalanced", "");
    search(c, "all:\"error correction\" AND (", "2401.00001v2");

    /* limit and the stored record */
    hits h = {0};
    mb_err err = {0};
    assert_int_equal(mb_arxiv_catalog_search(c, "cat:cs", 2, collect, &h, &err), MB_OK);
    assert_int_equal(h.n, 2);
    mb_arxiv_paper p;
    assert_int_equal(mb_arxiv_catalog_get(c, "2401.00001", &p, &err), MB_OK);
    assert_string_equal(p.title, "Quantum Error Correction with Surface Codes");
    assert_string_equal(p.abstract, "We study surface codes.\nThey correct errors.");
    assert_int_equal(p.n_authors, 2);
    assert_string_equal(p.authors[0], "Alice Quantum");
    assert_string_equal(p.authors[1], "C. Balázs");
    assert_int_equal(p.n_cats, 2);
    assert_string_equal(p.cats[0], "quant-ph");
    assert_int_equal(p.version, 2);
    char iso[32];
    mb_arxiv_iso_utc(p.published, iso);
    assert_string_equal(iso, "2024-01-02T03:04:05+00:00");
    assert_int_equal(mb_arxiv_paper_updated(&p, 2), 1706781600);
    mb_arxiv_paper_dispose(&p);
    assert_int_equal(mb_arxiv_catalog_get(c, "hep-th/9901001", &p, &err), MB_OK);
    assert_int_equal(p.n_authors, 2);
    assert_string_equal(p.authors[1], "J. Polchinski");
    mb_arxiv_paper_dispose(&p);
    assert_int_equal(mb_arxiv_catalog_get(c, "9999.99999", &p, &err), MB_ENOTFOUND);
    mb_arxiv_catalog_close(c);

    /* read-only (immutable) open of the same catalog */
    assert_int_equal(mb_arxiv_catalog_open(dir, 0, &c, &err), MB_OK);
    search(c, "all:survey", "2002.00001v1");
    assert_int_equal(mb_arxiv_catalog_put(c, &p, &err), MB_EDENIED);
    mb_arxiv_catalog_close(c);
    char *cmd = mb_asprintf("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(dir);
    assert_int_equal(mb_arxiv_catalog_open("/nonexistent/cat", 0, &c, &err), MB_EIO);
}

static void test_tex(void **state)
{
    (void)state;
    struct { const char *in, *out; } cases[] = {
        {"C. Bal\\'azs", "C. Balázs"}, {"G{\\\"u}nter", "Günter"}, {"Fran\\c{c}ois", "François"},
        {"J. Ma\\v{s}ek", "J. Mašek"}, {"{\\O}rsted", "Ørsted"}, {"Stra\\ss e", "Straße"},
        {"Erd\\H{o}s", "Erdős"}, {"\\'{\\i}ndice", "índice"}, {"A.~B. \\L{}ukasz", "A.~B. Łukasz"},
        {"No TeX", "No TeX"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *s = mb_arxiv_tex_to_utf8(cases[i].in);
        assert_string_equal(s, cases[i].out);
        free(s);
    }
    char *s = mb_arxiv_collapse_ws("  a\n  b\t\tc  ");
    assert_string_equal(s, "a b c");
    free(s);
}

static void date_ok(const char *in, int64_t now, const char *expected_iso)
{
    int64_t us;
    mb_buf err = {0};
    mb_buf_puts(&err, "");
    if (mb_arxiv_dateutil_parse(in, now, &us, &err)) fail_msg("%s: %s", in, err.data);
    char iso[32];
    mb_arxiv_iso_utc(us / 1000000, iso);
    assert_string_equal(iso, expected_iso);
    mb_buf_free(&err);
}

static void date_bad(const char *in, const char *msg)
{
    int64_t us;
    mb_buf err = {0};
    mb_buf_puts(&err, "");
    assert_int_equal(mb_arxiv_dateutil_parse(in, 1700000000, &us, &err), -1);
    assert_string_equal(err.data, msg);
    mb_buf_free(&err);
}

static void test_dates(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    int64_t now = 1732406400; /* 2024-11-24 */
    date_ok("2024-01-02", now, "2024-01-02T00:00:00+00:00");
    date_ok("2024-01-02T10:20:30Z", now, "2024-01-02T10:20:30+00:00");
    date_ok("2024-01-02T10:20:30+05:00", now, "2024-01-02T10:20:30+00:00"); /* zone replaced */
    date_ok("2024-01-02 10:20", now, "2024-01-02T10:20:00+00:00");
    date_ok("20240102", now, "2024-01-02T00:00:00+00:00");
    date_ok("2024/01/02", now, "2024-01-02T00:00:00+00:00");
    date_ok("01/02/2024", now, "2024-01-02T00:00:00+00:00"); /* month first */
    date_ok("2023", now, "2023-11-24T00:00:00+00:00");       /* today's month and day */
    date_ok("2023-02", 1735603200 /* 2024-12-31 */, "2023-02-28T00:00:00+00:00");
    date_ok("January 2024", now, "2024-01-24T00:00:00+00:00");
    date_ok("Jan 5, 2024", now, "2024-01-05T00:00:00+00:00");
    date_ok("5 January 2024 10:30", now, "2024-01-05T10:30:00+00:00");
    date_ok("Friday, 5 Jan 2024", now, "2024-01-05T00:00:00+00:00");
    date_bad("yesterday", "Unknown string format: yesterday");
    date_bad("", "String does not contain a date: ");
    date_bad("2024-13-01", "month must be in 1..12: 2024-13-01");
    date_bad("2024-02-30", "day is out of range for month: 2024-02-30");
    date_bad("2024-01-01T25:00", "hour must be in 0..23: 2024-01-01T25:00");
}

/* The arXiv API's Atom feeds (online mode), read with expat. */
#define FEED_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" \
    "<feed xmlns=\"http://www.w3.org/2005/Atom\" xmlns:arxiv=\"http://arxiv.org/schemas/atom\">" \
    "<title>query</title><id>http://arxiv.org/api/x</id>"

static int atom(const char *xml, mb_arxiv_paper **p, size_t *n, mb_err *err)
{
    return mb_arxiv_atom_parse(xml, strlen(xml), p, n, err);
}

static void test_atom(void **state)
{
    (void)state;
    mb_arxiv_paper *p = NULL;
    size_t n = 0;
    mb_err err = {0};
    const char *feed =
        FEED_HEAD
        "<entry><id>http://arxiv.org/abs/2507.00042v3</id>"
        "<updated>2025-07-03T10:00:00Z</updated><published>2025-07-01T09:30:00Z</published>"
        "<title>Online Only:\n  Fresh &amp; <b>New</b>  Paper</title>"
        "<summary>\n  Fetched from the API.\n</summary>"
        "<author><name>Ada  Lovelace</name><arxiv:affiliation>X</arxiv:affiliation></author>"
        "<author><name>Alan Turing</name></author>"
        "<arxiv:doi>10.1000/xyz</arxiv:doi><arxiv:comment>12 pages,\n 3 figures</arxiv:comment>"
        "<arxiv:primary_category term=\"cs.LG\"/>"
        "<category term=\"cs.LG\" scheme=\"s\"/><category term=\"stat.ML\"/></entry>"
        "<entry><id>http://example.org/not-a-paper</id><title>Skip</title>"
        "<published>2025-07-01T09:30:00Z</published></entry>"
        "</feed>";
    assert_int_equal(atom(feed, &p, &n, &err), MB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(p[0].id, "2507.00042");
    assert_int_equal(p[0].version, 3);
    assert_string_equal(p[0].title, "Online Only: Fresh & New Paper");
    assert_string_equal(p[0].abstract, "Fetched from the API.");
    assert_int_equal(p[0].n_authors, 2);
    assert_string_equal(p[0].authors[0], "Ada Lovelace");
    assert_string_equal(p[0].authors[1], "Alan Turing");
    assert_int_equal(p[0].n_cats, 2);
    assert_string_equal(p[0].cats[0], "cs.LG");
    assert_string_equal(p[0].cats[1], "stat.ML");
    assert_string_equal(p[0].doi, "10.1000/xyz");
    assert_string_equal(p[0].comment, "12 pages, 3 figures");
    assert_int_equal(p[0].published, 1751362200);
    assert_int_equal(p[0].versions[2], 1751536800);
    mb_arxiv_paper_dispose(&p[0]);
    free(p);

    /* an error entry, with its summary */
    const char *error_feed = FEED_HEAD
        "<entry><id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id>"
        "<title>Error</title><summary>incorrect id format for 1234</summary>"
        "<updated>2025-07-01T00:00:00Z</updated></entry></feed>";
    assert_int_equal(atom(error_feed, &p, &n, &err), MB_EINVAL);
    assert_string_equal(err.msg, "arXiv API error: incorrect id format for 1234");
    assert_null(p);
    assert_int_equal(n, 0);

    /* not XML, not a feed, cut short, and entity declarations (the billion
     * laughs) are all refused */
    assert_int_equal(atom("<html><body>503</body></html>", &p, &n, &err), MB_EIO);
    assert_string_equal(err.msg, "the arXiv API answered something that is not an Atom feed");
    static const char *const broken[] = {
        "Service Unavailable",
        FEED_HEAD "<entry><id>http://arxiv.org/abs/2507.00042v1</id>",
        "<?xml version=\"1.0\"?><!DOCTYPE feed [<!ENTITY a \"aaaaaaaaaa\">"
        "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>"
        "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><title>&b;</title></entry></feed>",
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        assert_int_equal(atom(broken[i], &p, &n, &err), MB_EIO);
        assert_string_equal(err.msg, "the arXiv API answered something that is not XML");
        assert_null(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_catalog_search),
        cmocka_unit_test(test_tex),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_atom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
