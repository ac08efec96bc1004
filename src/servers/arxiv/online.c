/*
 * online.c - the optional online mode: asks the arXiv API and downloads PDFs
 * with curl (a program inside the sandbox, like poppler), through an HTTP
 * proxy when one is configured (--proxy, else curl's usual https_proxy /
 * http_proxy environment), one request at a time with arXiv's rate rule
 * ("no more than one request every three seconds") enforced between them.
 * Atom feeds are parsed with libxml2 (no network, no entity expansion).
 */
#define _GNU_SOURCE
#include <libxml/parser.h>
#include <libxml/tree.h>
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

static int is(const xmlNode *n, const char *ns, const char *name)
{
    return n->type == XML_ELEMENT_NODE && n->ns && !strcmp((const char *)n->ns->href, ns) &&
           !strcmp((const char *)n->name, name);
}

static char *text_of(const xmlNode *n)
{
    xmlChar *t = xmlNodeGetContent(n);
    char *s = mb_strdup(t ? (const char *)t : "");
    xmlFree(t);
    return s;
}

static char *attr(const xmlNode *n, const char *name)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (!v) return NULL;
    char *s = mb_strdup((const char *)v);
    xmlFree(v);
    return s;
}

static void push_str(char ***arr, size_t *n, char *s)
{
    *arr = mb_realloc(*arr, (*n + 1) * sizeof **arr);
    (*arr)[(*n)++] = s;
}

/* One <entry>; returns 1 if it became a paper, 0 to skip, -1 for an API
 * error entry (message in err). */
static int entry(const xmlNode *e, mb_arxiv_paper *p, mb_err *err)
{
    memset(p, 0, sizeof *p);
    char *entry_id = NULL, *title = NULL, *summary = NULL;
    int64_t published = -1, updated = -1;
    for (const xmlNode *c = e->children; c; c = c->next) {
        if (is(c, ATOM_NS, "id")) free(entry_id), entry_id = text_of(c);
        else if (is(c, ATOM_NS, "title")) free(title), title = text_of(c);
        else if (is(c, ATOM_NS, "summary")) free(summary), summary = text_of(c);
        else if (is(c, ATOM_NS, "published")) {
            char *t = text_of(c);
            published = mb_arxiv_parse_iso(t);
            free(t);
        } else if (is(c, ATOM_NS, "updated")) {
            char *t = text_of(c);
            updated = mb_arxiv_parse_iso(t);
            free(t);
        } else if (is(c, ATOM_NS, "author")) {
            for (const xmlNode *a = c->children; a; a = a->next)
                if (is(a, ATOM_NS, "name")) {
                    char *raw = text_of(a);
                    push_str(&p->authors, &p->n_authors, mb_arxiv_collapse_ws(raw));
                    free(raw);
                }
        } else if (is(c, ATOM_NS, "category")) {
            char *t = attr(c, "term");
            if (t) push_str(&p->cats, &p->n_cats, t);
        } else if (is(c, ARXIV_NS, "doi")) {
            free(p->doi), p->doi = text_of(c);
        } else if (is(c, ARXIV_NS, "comment")) {
            char *t = text_of(c);
            free(p->comment), p->comment = mb_arxiv_collapse_ws(t);
            free(t);
        } else if (is(c, ARXIV_NS, "journal_ref")) {
            char *t = text_of(c);
            free(p->journal_ref), p->journal_ref = mb_arxiv_collapse_ws(t);
            free(t);
        }
    }
    int rc = 1;
    char *clean_title = mb_arxiv_collapse_ws(title);
    if (!strcmp(clean_title, "Error") && entry_id && strstr(entry_id, "/api/errors")) {
        char *msg = mb_arxiv_strip(summary);
        mb_err_set(err, MB_EINVAL, "arXiv API error: %s", msg);
        free(msg);
        rc = -1;
    } else {
        const char *abs = entry_id ? strstr(entry_id, "arxiv.org/abs/") : NULL;
        int v = 0;
        if (!abs || mb_arxiv_id_parse(abs + 14, &p->id, &v) != MB_OK || published <= 0) {
            rc = 0;
        } else {
            p->version = v > 0 ? v : 1;
            p->title = clean_title;
            clean_title = NULL;
            p->abstract = mb_arxiv_strip(summary);
            p->published = published;
            p->versions[0] = published;
            if (p->version <= MB_ARXIV_MAX_VERSIONS)
                p->versions[p->version - 1] = updated > 0 ? updated : published;
        }
    }
    free(clean_title), free(entry_id), free(title), free(summary);
    if (rc != 1) mb_arxiv_paper_dispose(p);
    return rc;
}

int mb_arxiv_atom_parse(const char *xml, size_t len, mb_arxiv_paper **out, size_t *n, mb_err *err)
{
    *out = NULL;
    *n = 0;
    if (len > MAX_FEED || len > (size_t)0x7fffffff)
        return mb_err_set(err, MB_ETOOBIG, "the arXiv feed is too large");
    xmlDoc *doc = xmlReadMemory(xml, (int)len, "feed.xml", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) return mb_err_set(err, MB_EIO, "the arXiv API answered something that is not XML");
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || !is(root, ATOM_NS, "feed")) {
        xmlFreeDoc(doc);
        return mb_err_set(err, MB_EIO, "the arXiv API answered something that is not an Atom feed");
    }
    int rc = MB_OK;
    for (const xmlNode *c = root->children; c; c = c->next) {
        if (!is(c, ATOM_NS, "entry")) continue;
        mb_arxiv_paper p;
        int r = entry(c, &p, err);
        if (r < 0) {
            rc = MB_EINVAL;
            break;
        }
        if (r == 0) continue;
        *out = mb_realloc(*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = p;
    }
    xmlFreeDoc(doc);
    if (rc) {
        for (size_t i = 0; i < *n; i++) mb_arxiv_paper_dispose(&(*out)[i]);
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
