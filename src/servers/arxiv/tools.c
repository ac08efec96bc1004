/*
 * tools.c - search_papers, list_papers and read_paper of arxiv-mcp-server
 * 0.2.10 / 0.2.11 (tools/search.py, list_papers.py, read_paper.py), answered
 * from the catalog (and, online, from the arXiv API).
 *
 * Texts are what upstream prints: json.dumps(..., indent=2) of the arxiv
 * package's Result fields for search and list, json.dumps(...) for read,
 * "Error: <str(exception)>" where upstream catches an exception. The arXiv
 * links are the API's of the 0.2.x era: http://arxiv.org/abs|pdf/<id>vN.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "servers/arxiv/arxiv.h"
#include "servers/common/pyfmt.h"

#define LINK_BASE "http://arxiv.org"
#define MAX_RESULTS 50

static void dumps(mb_buf *out, json_t *v, int indent)
{
    char *s = mb_py_json_dumps(v, indent, 1);
    mb_buf_puts(out, s);
    free(s);
    json_decref(v);
}

/* A JSON string of catalog text (repaired if a hand-made catalog holds
 * invalid UTF-8). */
static json_t *jstr(const char *s)
{
    if (!s) return json_string("");
    size_t n = strlen(s);
    if (mb_utf8_valid(s, n)) return json_stringn(s, n);
    size_t len;
    char *r = mb_utf8_repair(s, n, &len);
    json_t *j = json_stringn(r, len);
    free(r);
    return j;
}

static char *short_id(const mb_arxiv_paper *p, int version)
{
    return mb_asprintf("%sv%d", p->id, version > 0 ? version : p->version);
}

/* ------------------------------------------------------------ lookups */

mb_arxiv_catalog *mb_arxiv_server_catalog(mb_arxiv_server *s, const char **why)
{
    if (s->catalog) return s->catalog;
    mb_err err = {0};
    /* online, the catalog doubles as the cache of what was fetched */
    int writable = s->online;
    if (mb_arxiv_catalog_open(s->catalog_dir, writable, &s->catalog, &err) != MB_OK && writable) {
        mb_err_clear(&err);
        mb_arxiv_catalog_open(s->catalog_dir, 0, &s->catalog, &err);
    }
    if (!s->catalog) {
        free(s->catalog_error);
        /* No catalog file: say what this server is and how an operator gives it one.
         * Tried again on the next call, so a catalog that appears later is used. */
        char *file = mb_asprintf("%s/catalog.sqlite", s->catalog_dir);
        int absent = access(file, F_OK) != 0 && errno == ENOENT;
        free(file);
        if (absent)
            s->catalog_error = mb_asprintf(
                "no arXiv catalog at %s/catalog.sqlite: this server answers from an offline "
                "catalog and this mcpbox has none installed%s. The operator builds one on the "
                "host with `mcpbox arxiv import --catalog <the daemon's --data-dir>/arxiv-catalog "
                "--metadata <arXiv metadata snapshot, JSON lines>` (docs/servers/arxiv.md); "
                "sandboxes acquired after that see it",
                s->catalog_dir, s->online ? "" : " (and online mode is off)");
        else
            s->catalog_error = mb_strdup(err.msg);
        if (why) *why = s->catalog_error;
    }
    return s->catalog;
}

/* Stores fetched papers in the catalog when it can be written. */
static void remember(mb_arxiv_server *s, const mb_arxiv_paper *ps, size_t n)
{
    mb_arxiv_catalog *c = mb_arxiv_server_catalog(s, NULL);
    if (!c || !mb_arxiv_catalog_writable(c) || !n) return;
    mb_err err = {0};
    if (mb_arxiv_catalog_begin(c, &err) != MB_OK) return;
    for (size_t i = 0; i < n; i++)
        if (mb_arxiv_catalog_put(c, &ps[i], &err) != MB_OK)
            fprintf(stderr, "arxiv: could not store %s: %s\n", ps[i].id, err.msg);
    mb_arxiv_catalog_commit(c, &err);
}

static void free_papers(mb_arxiv_paper *ps, size_t n)
{
    for (size_t i = 0; i < n; i++) mb_arxiv_paper_dispose(&ps[i]);
    free(ps);
}

int mb_arxiv_lookup(mb_arxiv_server *s, const char *id, mb_arxiv_paper *out, mb_err *err)
{
    const char *why = NULL;
    mb_arxiv_catalog *c = mb_arxiv_server_catalog(s, &why);
    if (c && mb_arxiv_catalog_get(c, id, out, NULL) == MB_OK) return MB_OK;
    if (!s->online) {
        if (!c) return mb_err_set(err, MB_EIO, "%s", why);
        return mb_err_set(err, MB_ENOTFOUND, "not found");
    }
    mb_arxiv_paper *ps = NULL;
    size_t n = 0;
    int rc = mb_arxiv_online_query(&s->net, NULL, id, 0, 1, &ps, &n, err);
    if (rc) return rc;
    remember(s, ps, n);
    rc = mb_err_set(err, MB_ENOTFOUND, "not found");
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(ps[i].id, id)) {
            *out = ps[i];
            memset(&ps[i], 0, sizeof ps[i]);
            rc = MB_OK;
            break;
        }
    }
    free_papers(ps, n);
    return rc;
}

/* str() of the arxiv package's HTTPError for an id_list the API refuses. */
static char *http_400(const char *const *ids, size_t n)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "Page request resulted in HTTP 400 (https://export.arxiv.org/api/query?"
                    "search_query=&id_list=");
    mb_buf ids_b = {0};
    mb_buf_puts(&ids_b, "");
    for (size_t i = 0; i < n; i++) mb_buf_printf(&ids_b, "%s%s", i ? "," : "", ids[i]);
    mb_arxiv_quote_plus(&b, ids_b.data);
    mb_buf_free(&ids_b);
    mb_buf_puts(&b, "&sortBy=relevance&sortOrder=descending&start=0&max_results=100)");
    return mb_buf_steal(&b);
}

char *mb_arxiv_http_400(const char *id)
{
    const char *ids[1] = {id};
    return http_400(ids, 1);
}

/* -------------------------------------------------------------- search */

/* Python's str.isspace() for the code point at s (rem bytes left); *len is
 * its length in bytes. */
static int py_space(const char *s, size_t rem, size_t *len)
{
    unsigned char c = (unsigned char)s[0];
    *len = 1;
    if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) return 1;
    unsigned cp = 0;
    size_t n = mb_utf8_decode((const unsigned char *)s, rem, &cp);
    if (n <= 1) return 0;
    *len = n;
    return cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* 0.2.11's rewriting of plain queries (fix for upstream issue #33). */
static char *rewrite(const char *q, mb_arxiv_version v)
{
    static const char *const FIELDS[] = {"all:", "ti:", "abs:", "au:", "cat:", NULL};
    if (v == MB_ARXIV_0_2_10) return mb_strdup(q);
    for (size_t i = 0; FIELDS[i]; i++)
        if (strstr(q, FIELDS[i])) return mb_strdup(q);
    if (strchr(q, '"')) return mb_asprintf("all:%s", q);
    /* str.split(): runs of whitespace separate, ends ignored */
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t nterms = 0, i = 0, len = strlen(q), sl;
    while (i < len) {
        while (i < len && py_space(q + i, len - i, &sl)) i += sl;
        if (i >= len) break;
        size_t start = i;
        while (i < len && !py_space(q + i, len - i, &sl)) i += sl;
        mb_buf_printf(&b, "%sall:%.*s", nterms ? " AND " : "", (int)(i - start), q + start);
        nterms++;
    }
    if (nterms > 1) return mb_buf_steal(&b);
    mb_buf_free(&b);
    return mb_asprintf("all:%s", q);
}

static json_t *search_json(const mb_arxiv_paper *p)
{
    char *sid = short_id(p, 0);
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(sid));
    json_object_set_new(o, "title", jstr(p->title));
    json_t *au = json_array();
    for (size_t i = 0; i < p->n_authors; i++) json_array_append_new(au, jstr(p->authors[i]));
    json_object_set_new(o, "authors", au);
    json_object_set_new(o, "abstract", jstr(p->abstract));
    json_t *cats = json_array();
    for (size_t i = 0; i < p->n_cats; i++) json_array_append_new(cats, jstr(p->cats[i]));
    json_object_set_new(o, "categories", cats);
    char iso[32];
    mb_arxiv_iso_utc(p->published, iso);
    json_object_set_new(o, "published", json_string(iso));
    char *url = mb_asprintf(LINK_BASE "/pdf/%s", sid);
    json_object_set_new(o, "url", json_string(url));
    char *uri = mb_asprintf("arxiv://%s", sid);
    json_object_set_new(o, "resource_uri", json_string(uri));
    free(url), free(uri), free(sid);
    return o;
}

typedef struct search_ctx {
    int64_t from_us, to_us; /* -1: none */
    long max;
    json_t *papers;
} search_ctx;

static int search_each(const mb_arxiv_paper *p, void *arg)
{
    search_ctx *x = arg;
    int64_t t = p->published * 1000000;
    if ((x->from_us < 0 || t >= x->from_us) && (x->to_us < 0 || t <= x->to_us))
        json_array_append_new(x->papers, search_json(p));
    return (long)json_array_size(x->papers) >= x->max;
}

int mb_arxiv_t_search(mb_arxiv_server *s, json_t *args, mb_buf *out)
{
    json_t *mr = json_object_get(args, "max_results");
    long max = 10;
    if (json_is_integer(mr)) max = (long)(json_integer_value(mr) > 1000000000 ? 1000000000
                                          : json_integer_value(mr) < -1000000000 ? -1000000000
                                          : json_integer_value(mr));
    else if (json_is_real(mr)) max = (long)json_real_value(mr);
    if (max > MAX_RESULTS) max = MAX_RESULTS;

    char *query = rewrite(json_string_value(json_object_get(args, "query")), s->version);
    json_t *cats = json_object_get(args, "categories");
    if (json_is_array(cats) && json_array_size(cats) > 0) {
        mb_buf b = {0};
        mb_buf_printf(&b, "(%s) AND (", query);
        size_t i;
        json_t *c;
        json_array_foreach(cats, i, c) mb_buf_printf(&b, "%scat:%s", i ? " OR " : "",
                                                     json_string_value(c));
        mb_buf_putc(&b, ')');
        free(query);
        query = mb_buf_steal(&b);
    }

    search_ctx x = {.from_us = -1, .to_us = -1, .max = max};
    int64_t now = (int64_t)time(NULL);
    const char *keys[2] = {"date_from", "date_to"};
    int64_t *dst[2] = {&x.from_us, &x.to_us};
    for (int k = 0; k < 2; k++) {
        json_t *d = json_object_get(args, keys[k]);
        if (!d) continue;
        mb_buf msg = {0};
        mb_buf_puts(&msg, "");
        if (mb_arxiv_dateutil_parse(json_string_value(d), now, dst[k], &msg)) {
            mb_buf_printf(out, "Error: Invalid date format - %s", msg.data);
            mb_buf_free(&msg);
            free(query);
            return 0;
        }
        mb_buf_free(&msg);
    }

    /* The arxiv client yields at most max_results papers (none when
     * negative; all when 0), and upstream filters those by date. */
    long limit = max > 0 ? max : max == 0 ? -1 : 0;
    x.papers = json_array();
    if (x.max == 0) x.max = 1; /* `len(results) >= 0` stops after the first kept paper */
    mb_err err = {0};
    int rc = MB_OK, done = 0;
    if (s->online && limit != 0) {
        mb_arxiv_paper *ps = NULL;
        size_t n = 0;
        rc = mb_arxiv_online_query(&s->net, query, NULL, 1, limit > 0 ? limit : 100, &ps, &n, &err);
        if (rc == MB_OK) {
            remember(s, ps, n);
            for (size_t i = 0; i < n; i++)
                if (search_each(&ps[i], &x)) break;
            free_papers(ps, n);
            done = 1;
        } else {
            fprintf(stderr, "arxiv: online search failed (%s); answering from the catalog\n",
                    err.msg);
        }
    }
    if (!done) {
        const char *why = NULL;
        mb_arxiv_catalog *c = mb_arxiv_server_catalog(s, &why);
        if (!c) {
            mb_buf_printf(out, "Error: %s", s->online ? err.msg : why);
            json_decref(x.papers);
            free(query);
            return 0;
        }
        mb_err_clear(&err);
        if (limit != 0 && mb_arxiv_catalog_search(c, query, limit, search_each, &x, &err)) {
            mb_buf_printf(out, "Error: %s", err.msg);
            json_decref(x.papers);
            free(query);
            return 0;
        }
    }
    json_t *resp = json_object();
    json_object_set_new(resp, "total_results", json_integer((json_int_t)json_array_size(x.papers)));
    json_object_set_new(resp, "papers", x.papers);
    dumps(out, resp, 2);
    free(query);
    return 0;
}

/* ------------------------------------------------------------ storage */

/* Creates the storage directory as upstream's STORAGE_PATH property does on
 * every use; 0 or the errno of the failure. */
static int storage_ready(mb_arxiv_server *s)
{
    mb_err err = {0};
    if (mb_mkdir_p(s->storage, 0755, &err) == MB_OK) return 0;
    struct stat st;
    if (stat(s->storage, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : EEXIST;
    return errno ? errno : EACCES;
}

/* Path(storage).glob("*.md") stems, in directory order. */
static char **stored_stems(mb_arxiv_server *s, size_t *n)
{
    *n = 0;
    char **out = NULL;
    DIR *d = opendir(s->storage);
    if (!d) return NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (len < 3 || strcmp(e->d_name + len - 3, ".md")) continue;
        /* Path.stem of ".md" is ".md" itself */
        char *stem = len == 3 ? mb_strdup(".md") : mb_strndup(e->d_name, len - 3);
        out = mb_realloc(out, (*n + 1) * sizeof *out);
        out[(*n)++] = stem;
    }
    closedir(d);
    return out;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* ---------------------------------------------------------------- list */

static json_t *list_json(const mb_arxiv_paper *p, int version)
{
    char *sid = short_id(p, version);
    json_t *o = json_object();
    json_object_set_new(o, "title", jstr(p->title));
    json_object_set_new(o, "summary", jstr(p->abstract));
    json_t *au = json_array();
    for (size_t i = 0; i < p->n_authors; i++) json_array_append_new(au, jstr(p->authors[i]));
    json_object_set_new(o, "authors", au);
    json_t *links = json_array();
    if (p->doi) {
        char *l = mb_asprintf("http://dx.doi.org/%s", p->doi);
        json_array_append_new(links, json_string(l));
        free(l);
    }
    char *abs = mb_asprintf(LINK_BASE "/abs/%s", sid);
    char *pdf = mb_asprintf(LINK_BASE "/pdf/%s", sid);
    json_array_append_new(links, json_string(abs));
    json_array_append_new(links, json_string(pdf));
    json_object_set_new(o, "links", links);
    json_object_set_new(o, "pdf_url", json_string(pdf));
    free(abs), free(pdf), free(sid);
    return o;
}

int mb_arxiv_t_list(mb_arxiv_server *s, json_t *args, mb_buf *out)
{
    (void)args;
    int e = storage_ready(s);
    if (e) {
        char *m = mb_py_os_error(e, s->storage);
        mb_buf_printf(out, "Error: %s", m);
        free(m);
        return 0;
    }
    size_t n;
    char **stems = stored_stems(s, &n);
    for (size_t i = 0; i < n; i++) {
        char *id = NULL;
        int v;
        if (mb_arxiv_id_parse(stems[i], &id, &v) != MB_OK) {
            char *m = http_400((const char *const *)stems, n);
            mb_buf_printf(out, "Error: %s", m);
            free(m);
            free_strv(stems, n);
            return 0;
        }
        free(id);
    }
    json_t *papers = json_array();
    for (size_t i = 0; i < n; i++) {
        char *id = NULL;
        int v;
        mb_arxiv_id_parse(stems[i], &id, &v);
        mb_arxiv_paper p;
        mb_err err = {0};
        int rc = mb_arxiv_lookup(s, id, &p, &err);
        if (rc == MB_OK) {
            if (v <= p.version) json_array_append_new(papers, list_json(&p, v));
            mb_arxiv_paper_dispose(&p);
        } else if (rc != MB_ENOTFOUND) {
            mb_buf_printf(out, "Error: %s", err.msg);
            free(id);
            json_decref(papers);
            free_strv(stems, n);
            return 0;
        }
        free(id);
    }
    json_t *resp = json_object();
    json_object_set_new(resp, "total_papers", json_integer((json_int_t)n));
    json_object_set_new(resp, "papers", papers);
    dumps(out, resp, 2);
    free_strv(stems, n);
    return 0;
}

/* ---------------------------------------------------------------- read */

static void read_error(mb_buf *out, const char *msg)
{
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string("error"));
    json_object_set_new(o, "message", json_string(msg));
    dumps(out, o, -1);
}

int mb_arxiv_t_read(mb_arxiv_server *s, json_t *args, mb_buf *out)
{
    int e = storage_ready(s);
    if (e) {
        char *m = mb_py_os_error(e, s->storage);
        char *msg = mb_asprintf("Error reading paper: %s", m);
        read_error(out, msg);
        free(m), free(msg);
        return 0;
    }
    const char *paper_id = json_string_value(json_object_get(args, "paper_id"));
    size_t n;
    char **stems = stored_stems(s, &n);
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) found = !strcmp(stems[i], paper_id);
    free_strv(stems, n);
    if (!found) {
        char *msg = mb_asprintf("Paper %s not found in storage. You may need to download it "
                                "first using download_paper.", paper_id);
        read_error(out, msg);
        free(msg);
        return 0;
    }
    char *path = mb_asprintf("%s/%s.md", s->storage, paper_id);
    char *data = NULL;
    size_t len = 0;
    mb_err err = {0};
    if (mb_read_file(path, (size_t)1 << 30, &data, &len, &err) != MB_OK) {
        struct stat st;
        int en = stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? EISDIR : errno ? errno : EIO;
        char *m = mb_py_os_error(en, path);
        char *msg = mb_asprintf("Error reading paper: %s", m);
        read_error(out, msg);
        free(m), free(msg), free(path);
        return 0;
    }
    free(path);
    mb_buf why = {0};
    if (mb_py_utf8_error(&why, data, len) >= 0) {
        char *msg = mb_asprintf("Error reading paper: %s", why.data);
        read_error(out, msg);
        free(msg);
        mb_buf_free(&why);
        free(data);
        return 0;
    }
    mb_buf_free(&why);
    len = mb_py_universal_newlines(data, len);
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string("success"));
    json_object_set_new(o, "paper_id", json_string(paper_id));
    json_object_set_new(o, "content", json_stringn(data, len));
    free(data);
    dumps(out, o, -1);
    return 0;
}
