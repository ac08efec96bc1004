/*
 * online.c - the optional online mode: asks the arXiv API and downloads PDFs
 * with curl (a program inside the sandbox, like poppler), through an HTTP
 * proxy when one is configured (--proxy, else curl's usual https_proxy /
 * http_proxy environment), one request at a time with arXiv's rate rule
 * ("no more than one request every three seconds") enforced between them.
 * Atom feeds are parsed with expat (no network, no entity declarations).
 */
#define _GNU_SOURCE
#include <expat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "servers/arxiv/arxiv.h"
#include "servers/common/proc.h"

#define ATOM_NS "http://www.w3.org/2005/Atom"
#define ARXIV_NS "http://arxiv.org/schemas/atom"
#define MAX_FEED ((size_t)64 << 20)

/* ------------------------------------------------------------ fetching */

static void wait_turn(mb_arxiv_online *o)
{
    int64_t now = mb_mono_ms();
    if (o->last_request_ms && now - o->last_request_ms < o->delay_ms) {
        int64_t ms = o->delay_ms - (now - o->last_request_ms);
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0) {}
    }
}

/* Runs curl for url (body to `dest`, or to *body when dest is NULL).
 * Returns the HTTP status, or -1 with err set. */
static int curl_get(mb_arxiv_online *o, const char *url, const char *dest, mb_buf *body,
                    mb_err *err)
{
    wait_turn(o);
    if (!(o->proxy && *o->proxy) && o->egress_socket && !o->egress.running) {
        char *relay = NULL;
        if (mb_arxiv_egress_start(&o->egress, o->egress_socket, &relay, err) != MB_OK) return -1;
        free(o->proxy);
        o->proxy = relay;
    }
    char timeout[32];
    snprintf(timeout, sizeof timeout, "%d", o->timeout_s > 0 ? o->timeout_s : 60);
    const char *argv[24];
    int k = 0;
    argv[k++] = "curl";
    argv[k++] = "-sS";
    argv[k++] = "-L";
    argv[k++] = "--max-redirs";
    argv[k++] = "5";
    argv[k++] = "--max-time";
    argv[k++] = timeout;
    argv[k++] = "-A";
    argv[k++] = "mcpbox-arxiv (arxiv-mcp-server compatible)";
    if (o->proxy && *o->proxy) {
        argv[k++] = "--proxy";
        argv[k++] = o->proxy;
        argv[k++] = "--noproxy"; /* a NO_PROXY of the environment must not bypass it */
        argv[k++] = "";
    }
    argv[k++] = "-w";
    argv[k++] = "%{stderr}\n%{http_code}";
    argv[k++] = "-o";
    argv[k++] = dest ? dest : "-";
    argv[k++] = "--";
    argv[k++] = url;
    argv[k] = NULL;
    mb_proc_spec spec = {.argv = argv, .timeout_ms = (o->timeout_s > 0 ? o->timeout_s : 60) * 1000 + 5000,
                         .max_output = MAX_FEED, .kill_on_overflow = 1, .watch_fd = -1};
    mb_proc_result r;
    int rc = mb_proc_run(&spec, &r, err);
    o->last_request_ms = mb_mono_ms();
    if (rc != MB_OK) return -1;
    int status = -1;
    const char *nl = r.err.data ? strrchr(r.err.data, '\n') : NULL;
    if (nl) status = atoi(nl + 1);
    if (r.spawn_errno) {
        mb_err_set(err, MB_EIO, "cannot run curl: %s", strerror(r.spawn_errno));
        status = -1;
    } else if (!r.exited || r.exit_code != 0 || status <= 0) {
        size_t n = nl ? (size_t)(nl - r.err.data) : r.err.len;
        while (n && (r.err.data[n - 1] == '\n' || r.err.data[n - 1] == ' ')) n--;
        mb_err_set(err, MB_EIO, "request to %s failed: %.*s", url, (int)(n > 300 ? 300 : n),
                   n ? r.err.data : "curl failed");
        status = -1;
    } else if (body) {
        mb_buf_append(body, r.out.data ? r.out.data : "", r.out.len);
    }
    mb_proc_result_free(&r);
    return status;
}

void mb_arxiv_quote_plus(mb_buf *b, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            *c == '_' || *c == '.' || *c == '-' || *c == '~')
            mb_buf_putc(b, (char)*c);
        else if (*c == ' ')
            mb_buf_putc(b, '+');
        else
            mb_buf_printf(b, "%%%02X", *c);
    }
}

int mb_arxiv_online_query(mb_arxiv_online *o, const char *search_query, const char *id_list,
                          int sort_by_date, long max_results, mb_arxiv_paper **out, size_t *n,
                          mb_err *err)
{
    *out = NULL;
    *n = 0;
    mb_buf url = {0};
    mb_buf_printf(&url, "%s?search_query=", o->api_base);
    mb_arxiv_quote_plus(&url, search_query ? search_query : "");
    mb_buf_puts(&url, "&id_list=");
    mb_arxiv_quote_plus(&url, id_list ? id_list : "");
    mb_buf_printf(&url, "&sortBy=%s&sortOrder=descending&start=0&max_results=%ld",
                  sort_by_date ? "submittedDate" : "relevance", max_results > 0 ? max_results : 100);
    mb_buf body = {0};
    mb_buf_puts(&body, "");
    int status = curl_get(o, url.data, NULL, &body, err);
    int rc = MB_OK;
    if (status < 0) {
        rc = MB_EIO;
    } else if (status != 200) {
        rc = mb_err_set(err, MB_EIO, "Page request resulted in HTTP %d (%s)", status, url.data);
    } else {
        rc = mb_arxiv_atom_parse(body.data, body.len, out, n, err);
    }
    mb_buf_free(&body);
    mb_buf_free(&url);
    return rc;
}

int mb_arxiv_online_pdf(mb_arxiv_online *o, const char *id, int version, const char *dest,
                        mb_err *err)
{
    char *url = mb_asprintf("%s%sv%d", o->pdf_base, id, version);
    int status = curl_get(o, url, dest, NULL, err);
    int rc = MB_OK;
    if (status < 0) rc = MB_EIO;
    else if (status != 200) rc = mb_err_set(err, MB_EIO, "HTTP Error %d: %s", status, url);
    if (rc) unlink(dest);
    free(url);
    return rc;
}

/* --------------------------------------------------------------- Atom */

/* The feed is read with expat as a stream of events (an element's text is
 * everything inside it, as libxml2's node content would be). A document that
 * declares entities is refused: arXiv's feeds declare none, and nothing in a
 * feed gets to expand into more than it is. */

enum field { F_NONE, F_ID, F_TITLE, F_SUMMARY, F_PUBLISHED, F_UPDATED, F_AUTHOR_NAME,
             F_DOI, F_COMMENT, F_JOURNAL_REF };

typedef struct atom_state {
    XML_Parser xp;
    int depth;
    int root_ok;        /* the root is an Atom <feed> */
    int in_entry;       /* inside an <entry> of the feed */
    int in_author;      /* inside its <author> */
    int cap_depth;      /* depth of the element whose text is collected, 0 = none */
    enum field cap;
    mb_buf text;
    int entities;       /* the document declared an entity */
    /* the entry being read */
    mb_arxiv_paper p;
    char *entry_id, *title, *summary;
    int64_t published, updated;
    /* what was read */
    mb_arxiv_paper *out;
    size_t n;
    int api_failed;
    mb_err api_err;
} atom_state;

/* expat names namespaced elements "URI NAME" (XML_ParserCreateNS, ' '). */
static int is(const char *qname, const char *ns, const char *name)
{
    size_t k = strlen(ns);
    return !strncmp(qname, ns, k) && qname[k] == ' ' && !strcmp(qname + k + 1, name);
}

static void push_str(char ***arr, size_t *n, char *s)
{
    *arr = mb_realloc(*arr, (*n + 1) * sizeof **arr);
    (*arr)[(*n)++] = s;
}

static void entry_begin(atom_state *st)
{
    memset(&st->p, 0, sizeof st->p);
    st->entry_id = st->title = st->summary = NULL;
    st->published = st->updated = -1;
    st->in_entry = 1;
}

/* The end of an <entry>: a paper, an API error entry, or nothing. */
static void entry_end(atom_state *st)
{
    mb_arxiv_paper *p = &st->p;
    int ok = 0;
    char *clean_title = mb_arxiv_collapse_ws(st->title);
    if (!strcmp(clean_title, "Error") && st->entry_id && strstr(st->entry_id, "/api/errors")) {
        if (!st->api_failed) {
            char *msg = mb_arxiv_strip(st->summary);
            mb_err_set(&st->api_err, MB_EINVAL, "arXiv API error: %s", msg);
            free(msg);
            st->api_failed = 1;
        }
    } else {
        const char *abs = st->entry_id ? strstr(st->entry_id, "arxiv.org/abs/") : NULL;
        int v = 0;
        if (abs && mb_arxiv_id_parse(abs + 14, &p->id, &v) == MB_OK && st->published > 0) {
            p->version = v > 0 ? v : 1;
            p->title = clean_title;
            clean_title = NULL;
            p->abstract = mb_arxiv_strip(st->summary);
            p->published = st->published;
            p->versions[0] = st->published;
            if (p->version <= MB_ARXIV_MAX_VERSIONS)
                p->versions[p->version - 1] = st->updated > 0 ? st->updated : st->published;
            ok = 1;
        }
    }
    free(clean_title), free(st->entry_id), free(st->title), free(st->summary);
    st->entry_id = st->title = st->summary = NULL;
    if (ok) {
        st->out = mb_realloc(st->out, (st->n + 1) * sizeof *st->out);
        st->out[st->n++] = *p;
    } else {
        mb_arxiv_paper_dispose(p);
    }
    memset(p, 0, sizeof *p);
    st->in_entry = 0;
}

static enum field field_of(const char *q)
{
    static const struct { const char *ns, *name; enum field f; } map[] = {
        {ATOM_NS, "id", F_ID},           {ATOM_NS, "title", F_TITLE},
        {ATOM_NS, "summary", F_SUMMARY}, {ATOM_NS, "published", F_PUBLISHED},
        {ATOM_NS, "updated", F_UPDATED}, {ARXIV_NS, "doi", F_DOI},
        {ARXIV_NS, "comment", F_COMMENT}, {ARXIV_NS, "journal_ref", F_JOURNAL_REF},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (is(q, map[i].ns, map[i].name)) return map[i].f;
    return F_NONE;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    atom_state *st = ud;
    st->depth++;
    if (st->cap_depth) return; /* inside a collected element: its text only */
    if (st->depth == 1) {
        st->root_ok = is(name, ATOM_NS, "feed");
    } else if (st->depth == 2 && st->root_ok && is(name, ATOM_NS, "entry")) {
        entry_begin(st);
    } else if (st->depth == 3 && st->in_entry) {
        enum field f = field_of(name);
        if (f != F_NONE) {
            st->cap = f;
            st->cap_depth = st->depth;
            mb_buf_reset(&st->text);
        } else if (is(name, ATOM_NS, "author")) {
            st->in_author = 1;
        } else if (is(name, ATOM_NS, "category")) {
            for (size_t i = 0; atts[i]; i += 2)
                if (!strcmp(atts[i], "term")) {
                    push_str(&st->p.cats, &st->p.n_cats, mb_strdup(atts[i + 1]));
                    break;
                }
        }
    } else if (st->depth == 4 && st->in_author && is(name, ATOM_NS, "name")) {
        st->cap = F_AUTHOR_NAME;
        st->cap_depth = st->depth;
        mb_buf_reset(&st->text);
    }
}

static void replace(char **slot, char *s)
{
    free(*slot);
    *slot = s;
}

static void field_end(atom_state *st)
{
    const char *t = st->text.data ? st->text.data : "";
    mb_arxiv_paper *p = &st->p;
    switch (st->cap) {
    case F_ID: replace(&st->entry_id, mb_strdup(t)); break;
    case F_TITLE: replace(&st->title, mb_strdup(t)); break;
    case F_SUMMARY: replace(&st->summary, mb_strdup(t)); break;
    case F_PUBLISHED: st->published = mb_arxiv_parse_iso(t); break;
    case F_UPDATED: st->updated = mb_arxiv_parse_iso(t); break;
    case F_AUTHOR_NAME: push_str(&p->authors, &p->n_authors, mb_arxiv_collapse_ws(t)); break;
    case F_DOI: replace(&p->doi, mb_strdup(t)); break;
    case F_COMMENT: replace(&p->comment, mb_arxiv_collapse_ws(t)); break;
    case F_JOURNAL_REF: replace(&p->journal_ref, mb_arxiv_collapse_ws(t)); break;
    case F_NONE: break;
    }
    st->cap = F_NONE;
    st->cap_depth = 0;
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    atom_state *st = ud;
    if (st->cap_depth == st->depth) field_end(st);
    else if (!st->cap_depth && st->depth == 3 && st->in_author) st->in_author = 0;
    else if (!st->cap_depth && st->depth == 2 && st->in_entry) entry_end(st);
    st->depth--;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    atom_state *st = ud;
    if (st->cap_depth && len > 0) mb_buf_append(&st->text, s, (size_t)len);
}

static void XMLCALL on_entity_decl(void *ud, const XML_Char *name, int is_param,
                                   const XML_Char *value, int value_len, const XML_Char *base,
                                   const XML_Char *system_id, const XML_Char *public_id,
                                   const XML_Char *notation)
{
    atom_state *st = ud;
    st->entities = 1;
    XML_StopParser(st->xp, XML_FALSE);
}

int mb_arxiv_atom_parse(const char *xml, size_t len, mb_arxiv_paper **out, size_t *n, mb_err *err)
{
    *out = NULL;
    *n = 0;
    if (len > MAX_FEED || len > (size_t)0x7fffffff)
        return mb_err_set(err, MB_ETOOBIG, "the arXiv feed is too large");
    atom_state st;
    memset(&st, 0, sizeof st);
    st.xp = XML_ParserCreateNS(NULL, ' ');
    if (!st.xp) abort(); /* out of memory */
    XML_SetUserData(st.xp, &st);
    XML_SetElementHandler(st.xp, on_start, on_end);
    XML_SetCharacterDataHandler(st.xp, on_text);
    XML_SetEntityDeclHandler(st.xp, on_entity_decl);
    XML_SetParamEntityParsing(st.xp, XML_PARAM_ENTITY_PARSING_NEVER);
    int parsed = XML_Parse(st.xp, xml, (int)len, XML_TRUE) == XML_STATUS_OK && !st.entities;
    XML_ParserFree(st.xp);
    if (st.in_entry) mb_arxiv_paper_dispose(&st.p);
    free(st.entry_id), free(st.title), free(st.summary);
    mb_buf_free(&st.text);
    int rc = MB_OK;
    if (!parsed)
        rc = mb_err_set(err, MB_EIO, "the arXiv API answered something that is not XML");
    else if (!st.root_ok)
        rc = mb_err_set(err, MB_EIO, "the arXiv API answered something that is not an Atom feed");
    else if (st.api_failed) {
        if (err) *err = st.api_err;
        rc = MB_EINVAL;
    }
    if (rc) {
        for (size_t i = 0; i < st.n; i++) mb_arxiv_paper_dispose(&st.out[i]);
        free(st.out);
        return rc;
    }
    *out = st.out;
    *n = st.n;
    return MB_OK;
}
