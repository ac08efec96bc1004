/*
 * tools_doc.c - the document tools of office-word-mcp-server
 * (tools/document_tools.py, tools/extended_document_tools.py): create, copy,
 * info, text, outline, listing, raw XML, paragraph text, find, PDF.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "servers/common/proc.h"
#include "servers/word/word.h"

#define NS_CP "http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
#define NS_DC "http://purl.org/dc/elements/1.1/"
#define NS_DCTERMS "http://purl.org/dc/terms/"

/* ------------------------------------------------------------- create */

static int core_rel(const mb_ooxml_rel *rel, void *payload)
{
    if (rel->external || !mb_str_has_suffix(rel->type, "/metadata/core-properties")) return 0;
    *(char **)payload = mb_ooxml_resolve("", rel->target);
    return 1;
}

static xmlNodePtr core_root(wd_doc *d, char **part)
{
    mb_err err = {0};
    char *name = NULL;
    mb_ooxml_rels_each(d->pkg, "", core_rel, &name, &err);
    xmlDocPtr x = NULL;
    if (!name || mb_ooxml_xml(d->pkg, name, &x, &err)) {
        free(name);
        return NULL;
    }
    if (part) *part = name;
    else free(name);
    return xmlDocGetRootElement(x);
}

static xmlNodePtr ns_child(xmlNodePtr n, const char *ns, const char *local)
{
    for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && c->ns && !strcmp((const char *)c->ns->href, ns) &&
            !strcmp((const char *)c->name, local))
            return c;
    return NULL;
}

static void set_core_text(wd_doc *d, const char *ns, const char *local, const char *value)
{
    char *part = NULL;
    xmlNodePtr root = core_root(d, &part);
    if (!root) return;
    xmlNodePtr n = ns_child(root, ns, local);
    if (!n) {
        xmlNsPtr x = xmlSearchNsByHref(root->doc, root, (const xmlChar *)ns);
        if (!x) x = xmlNewNs(root, (const xmlChar *)ns, (const xmlChar *)(strcmp(ns, NS_DC) ? "cp" : "dc"));
        n = xmlNewChild(root, x, (const xmlChar *)local, NULL);
    }
    xmlNodeSetContent(n, NULL);
    xmlNodeAddContent(n, (const xmlChar *)value);
    mb_ooxml_touch(d->pkg, part);
    free(part);
}

int wd_t_create_document(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    const char *title = json_string_value(json_object_get(a, "title"));
    const char *author = json_string_value(json_object_get(a, "author"));
    char *msg = NULL, *why = NULL;
    wd_doc *d = NULL;
    if (!wd_writeable(f, &msg)) mb_mcp_textf(res, "Cannot create document: %s", msg);
    else if (wd_doc_new(&d, &why)) mb_mcp_textf(res, "Failed to create document: %s", why);
    else {
        if (title && *title) set_core_text(d, NS_DC, "title", title);
        if (author && *author) set_core_text(d, NS_DC, "creator", author);
        if (wd_doc_save(d, f, &why)) mb_mcp_textf(res, "Failed to create document: %s", why);
        else mb_mcp_textf(res, "Document %s created successfully", f);
    }
    wd_doc_free(d);
    free(msg);
    free(why);
    free(f);
    return 0;
}

/* --------------------------------------------------------------- copy */

static int copy_file(const char *src, const char *dst, char **why)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) return *why = mb_py_os_error(errno, src), -1;
    struct stat st;
    fstat(in, &st);
    if (S_ISDIR(st.st_mode)) {
        close(in);
        *why = mb_py_os_error(EISDIR, src);
        return -1;
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        *why = mb_py_os_error(errno, dst);
        close(in);
        return -1;
    }
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) {
            rc = -1;
            *why = mb_py_os_error(errno, dst);
            break;
        }
    fchmod(out, st.st_mode & 07777);
    struct timespec ts[2] = {st.st_atim, st.st_mtim};
    futimens(out, ts);
    close(in);
    close(out);
    return rc;
}

int wd_t_copy_document(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *src = wd_docx_name(json_string_value(json_object_get(a, "source_filename")));
    const char *given = json_string_value(json_object_get(a, "destination_filename"));
    char *dst = given && *given ? wd_docx_name(given) : NULL;
    char *why = NULL;
    if (!wd_exists(src)) {
        mb_mcp_textf(res, "Failed to copy document: Source document %s does not exist", src);
    } else {
        if (!dst) {
            /* os.path.splitext: the extension of the last component */
            const char *slash = strrchr(src, '/');
            const char *base = slash ? slash + 1 : src;
            while (*base == '.') base++;
            const char *dot = strrchr(base, '.');
            size_t cut = dot ? (size_t)(dot - src) : strlen(src);
            dst = mb_asprintf("%.*s_copy%s", (int)cut, src, dot ? dot : "");
        }
        if (copy_file(src, dst, &why))
            mb_mcp_textf(res, "Failed to copy document: Failed to copy document: %s", why);
        else mb_mcp_textf(res, "Document copied to %s", dst);
    }
    free(why);
    free(src);
    free(dst);
    return 0;
}

/* --------------------------------------------------------------- info */

/* python-docx's W3CDTF parse, printed as str(datetime); NULL when absent or
 * unparseable. */
static char *core_date(xmlNodePtr root, const char *local)
{
    xmlNodePtr n = ns_child(root, NS_DCTERMS, local);
    if (!n) return NULL;
    xmlChar *s = xmlNodeGetContent(n);
    if (!s) return NULL;
    char text[64];
    snprintf(text, sizeof text, "%s", (const char *)s);
    xmlFree(s);
    struct tm tm = {0};
    tm.tm_mday = 1;
    const char *fmts[] = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d", "%Y-%m", "%Y"};
    char head[20];
    snprintf(head, sizeof head, "%.19s", text);
    int ok = 0;
    for (int i = 3; i >= 0 && !ok; i--) { /* python-docx keeps the last that parses */
        struct tm t = {0};
        t.tm_mday = 1;
        const char *end = strptime(head, fmts[i], &t);
        if (end && !*end) ok = 1, tm = t;
    }
    if (!ok) return NULL;
    const char *off = strlen(text) > 19 ? text + 19 : "";
    if (strlen(off) == 6 && (off[0] == '+' || off[0] == '-')) {
        int h = atoi(off + 1), m = atoi(off + 4);
        int sign = off[0] == '+' ? -1 : 1; /* UTC = local - offset */
        time_t t = timegm(&tm) + sign * (h * 3600 + m * 60);
        gmtime_r(&t, &tm);
    }
    char out[40];
    strftime(out, sizeof out, "%Y-%m-%d %H:%M:%S", &tm);
    return mb_strdup(out);
}

static const char *core_text(xmlNodePtr root, const char *ns, const char *local, char **hold)
{
    xmlNodePtr n = ns_child(root, ns, local);
    xmlChar *s = n ? xmlNodeGetContent(n) : NULL;
    *hold = s ? mb_strdup((const char *)s) : mb_strdup("");
    xmlFree(s);
    return *hold;
}

int wd_t_get_document_info(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    char *why = NULL;
    wd_doc *d = NULL;
    if (!wd_exists(f)) {
        mb_mcp_textf(res, "Document %s does not exist", f);
    } else if (wd_doc_open(f, &d, &why)) {
        char *m = mb_asprintf("Failed to get document properties: %s", why);
        wd_json_result(res, json_pack("{s:s}", "error", m));
        free(m);
    } else {
        xmlNodePtr core = core_root(d, NULL);
        char *h[6];
        json_t *o = json_object();
        if (core) {
            json_object_set_new(o, "title", json_string(core_text(core, NS_DC, "title", &h[0])));
            json_object_set_new(o, "author", json_string(core_text(core, NS_DC, "creator", &h[1])));
            json_object_set_new(o, "subject", json_string(core_text(core, NS_DC, "subject", &h[2])));
            json_object_set_new(o, "keywords", json_string(core_text(core, NS_CP, "keywords", &h[3])));
        } else { /* python-docx makes default core properties */
            json_object_set_new(o, "title", json_string("Word Document"));
            json_object_set_new(o, "author", json_string(""));
            json_object_set_new(o, "subject", json_string(""));
            json_object_set_new(o, "keywords", json_string(""));
            for (int i = 0; i < 4; i++) h[i] = NULL;
        }
        char *created = core ? core_date(core, "created") : NULL;
        char *modified = core ? core_date(core, "modified") : NULL;
        json_object_set_new(o, "created", json_string(created ? created : ""));
        json_object_set_new(o, "modified", json_string(modified ? modified : ""));
        json_object_set_new(o, "last_modified_by",
                            json_string(core ? core_text(core, NS_CP, "lastModifiedBy", &h[4])
                                             : (h[4] = NULL, "python-docx")));
        long rev = 0;
        if (core) {
            const char *r = core_text(core, NS_CP, "revision", &h[5]);
            char *end;
            long x = strtol(r, &end, 10);
            if (*r && !*end && x > 0) rev = x;
        } else {
            h[5] = NULL;
            rev = 1;
        }
        json_object_set_new(o, "revision", json_integer(rev));
        long sections = 0;
        for (xmlNodePtr c = d->body->children; c; c = c->next) {
            if (wd_is(c, "sectPr")) sections++;
            else if (wd_is(c, "p") && wd_child(wd_child(c, "pPr"), "sectPr")) sections++;
        }
        json_object_set_new(o, "page_count", json_integer(sections));
        xmlNodePtr *ps, *ts;
        size_t np = wd_paragraphs(d, &ps), nt = wd_tables(d, &ts);
        size_t words = 0;
        for (size_t i = 0; i < np; i++) {
            char *t = wd_para_text_dup(ps[i]);
            words += wd_word_count(t);
            free(t);
        }
        json_object_set_new(o, "word_count", json_integer((json_int_t)words));
        json_object_set_new(o, "paragraph_count", json_integer((json_int_t)np));
        json_object_set_new(o, "table_count", json_integer((json_int_t)nt));
        free(ps);
        free(ts);
        free(created);
        free(modified);
        for (int i = 0; i < 6; i++) free(h[i]);
        wd_json_result(res, o);
    }
    wd_doc_free(d);
    free(why);
    free(f);
    return 0;
}

/* --------------------------------------------------------- text/outline */

int wd_t_get_document_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    char *why = NULL;
    wd_doc *d = NULL;
    if (!wd_exists(f)) mb_mcp_textf(res, "Document %s does not exist", f);
    else if (wd_doc_open(f, &d, &why)) mb_mcp_textf(res, "Failed to extract text: %s", why);
    else {
        mb_buf b = {0};
        mb_buf_puts(&b, "");
        int first = 1;
        xmlNodePtr *ps, *ts;
        size_t np = wd_paragraphs(d, &ps), nt = wd_tables(d, &ts);
        for (size_t i = 0; i < np; i++) {
            if (!first) mb_buf_putc(&b, '\n');
            first = 0;
            wd_para_text(ps[i], &b);
        }
        for (size_t t = 0; t < nt; t++) {
            xmlNodePtr *rows;
            size_t nr = wd_table_rows(ts[t], &rows);
            for (size_t r = 0; r < nr; r++) {
                xmlNodePtr *cells;
                size_t nc = wd_row_cells(ts[t], rows[r], &cells);
                for (size_t c = 0; c < nc; c++)
                    for (xmlNodePtr p = cells[c]->children; p; p = p->next) {
                        if (!wd_is(p, "p")) continue;
                        if (!first) mb_buf_putc(&b, '\n');
                        first = 0;
                        wd_para_text(p, &b);
                    }
                free(cells);
            }
            free(rows);
        }
        mb_mcp_text_n(res, b.data, b.len);
        mb_buf_free(&b);
        free(ps);
        free(ts);
    }
    wd_doc_free(d);
    free(why);
    free(f);
    return 0;
}

/* table.cell(r, c).text as python-docx finds it (None when out of range). */
static char *table_cell_text(xmlNodePtr tbl, size_t r, size_t c)
{
    xmlNodePtr *rows;
    size_t nr = wd_table_rows(tbl, &rows);
    char *out = NULL;
    if (r < nr) {
        xmlNodePtr *cells;
        size_t nc = wd_row_cells(tbl, rows[r], &cells);
        if (c < nc) out = wd_cell_text(cells[c]);
        free(cells);
    }
    free(rows);
    return out;
}

int wd_t_get_document_outline(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    char *why = NULL;
    wd_doc *d = NULL;
    if (!wd_exists(f)) {
        char *m = mb_asprintf("Document %s does not exist", f);
        wd_json_result(res, json_pack("{s:s}", "error", m));
        free(m);
    } else if (wd_doc_open(f, &d, &why)) {
        char *m = mb_asprintf("Failed to get document structure: %s", why);
        wd_json_result(res, json_pack("{s:s}", "error", m));
        free(m);
    } else {
        json_t *paras = json_array(), *tables = json_array();
        xmlNodePtr *ps, *ts;
        size_t np = wd_paragraphs(d, &ps), nt = wd_tables(d, &ts);
        for (size_t i = 0; i < np; i++) {
            char *t = wd_para_text_dup(ps[i]);
            char *pv = wd_preview(t, 100);
            const char *style = wd_para_style_name(d, ps[i]);
            json_array_append_new(paras, json_pack("{s:I,s:s,s:s}", "index", (json_int_t)i, "text", pv,
                                                   "style", style ? style : "Normal"));
            free(pv);
            free(t);
        }
        for (size_t i = 0; i < nt; i++) {
            xmlNodePtr *rows;
            size_t nr = wd_table_rows(ts[i], &rows), ncols = wd_table_cols(ts[i]);
            free(rows);
            json_t *preview = json_array();
            for (size_t r = 0; r < (nr < 3 ? nr : 3); r++) {
                json_t *row = json_array();
                for (size_t c = 0; c < (ncols < 3 ? ncols : 3); c++) {
                    char *t = table_cell_text(ts[i], r, c);
                    char *pv = t ? wd_preview(t, 20) : mb_strdup("N/A");
                    json_array_append_new(row, json_string(pv));
                    free(pv);
                    free(t);
                }
                json_array_append_new(preview, row);
            }
            json_array_append_new(tables, json_pack("{s:I,s:I,s:I,s:o}", "index", (json_int_t)i, "rows",
                                                    (json_int_t)nr, "columns", (json_int_t)ncols,
                                                    "preview", preview));
        }
        free(ps);
        free(ts);
        wd_json_result(res, json_pack("{s:o,s:o}", "paragraphs", paras, "tables", tables));
    }
    wd_doc_free(d);
    free(why);
    free(f);
    return 0;
}

/* --------------------------------------------------------------- list */

int wd_t_list_available_documents(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    const char *dir = json_string_value(json_object_get(a, "directory"));
    if (!wd_exists(dir)) {
        mb_mcp_textf(res, "Directory %s does not exist", dir);
        return 0;
    }
    DIR *dp = opendir(dir);
    if (!dp) {
        char *e = mb_py_os_error(errno, dir);
        mb_mcp_textf(res, "Failed to list documents: %s", e);
        free(e);
        return 0;
    }
    mb_buf lines = {0};
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        if (!mb_str_has_suffix(de->d_name, ".docx")) continue;
        char *path = mb_asprintf("%s%s%s", dir, mb_str_has_suffix(dir, "/") || !*dir ? "" : "/",
                                 de->d_name);
        struct stat st;
        if (stat(path, &st)) {
            char *e = mb_py_os_error(errno, path);
            mb_mcp_textf(res, "Failed to list documents: %s", e);
            free(e);
            free(path);
            closedir(dp);
            mb_buf_free(&lines);
            return 0;
        }
        mb_buf_printf(&lines, "- %s (%.2f KB)\n", de->d_name, (double)st.st_size / 1024.0);
        n++;
        free(path);
    }
    closedir(dp);
    if (!n) mb_mcp_textf(res, "No Word documents found in %s", dir);
    else mb_mcp_textf(res, "Found %zu Word documents in %s:\n%s", n, dir, lines.data);
    mb_buf_free(&lines);
    return 0;
}

/* ---------------------------------------------------------------- xml */

int wd_t_get_document_xml(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    if (!wd_exists(f)) {
        mb_mcp_textf(res, "Document %s does not exist", f);
        free(f);
        return 0;
    }
    mb_ooxml *pkg = NULL;
    mb_err err = {0};
    int sys = 0;
    char *data = NULL;
    size_t len = 0;
    if (mb_ooxml_open(f, NULL, &pkg, &sys, &err)) {
        char *e = sys ? mb_py_os_error(sys, f) : mb_strdup("File is not a zip file");
        mb_mcp_textf(res, "Failed to extract XML: %s", e);
        free(e);
    } else if (mb_ooxml_read(pkg, "word/document.xml", &data, &len, &err)) {
        mb_mcp_text(res, "Failed to extract XML: \"There is no item named 'word/document.xml' in the archive\"");
    } else if (!mb_utf8_valid(data, len)) {
        mb_mcp_text(res, "Failed to extract XML: 'utf-8' codec can't decode bytes");
    } else {
        mb_mcp_text_n(res, data, len);
    }
    free(data);
    mb_ooxml_free(pkg);
    free(f);
    return 0;
}

/* ------------------------------------------------------ paragraph text */

int wd_t_get_paragraph_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    json_int_t idx = json_integer_value(json_object_get(a, "paragraph_index"));
    char *why = NULL;
    wd_doc *d = NULL;
    if (!wd_exists(f)) mb_mcp_textf(res, "Document %s does not exist", f);
    else if (idx < 0) mb_mcp_text(res, "Invalid parameter: paragraph_index must be a non-negative integer");
    else if (wd_doc_open(f, &d, &why)) {
        char *m = mb_asprintf("Failed to get paragraph text: %s", why);
        wd_json_result(res, json_pack("{s:s}", "error", m));
        free(m);
    } else {
        xmlNodePtr *ps;
        size_t np = wd_paragraphs(d, &ps);
        if ((size_t)idx >= np) {
            char *m = mb_asprintf("Invalid paragraph index: %lld. Document has %zu paragraphs.",
                                  (long long)idx, np);
            wd_json_result(res, json_pack("{s:s}", "error", m));
            free(m);
        } else {
            char *t = wd_para_text_dup(ps[idx]);
            const char *style = wd_para_style_name(d, ps[idx]);
            wd_json_result(res, json_pack("{s:I,s:s,s:s,s:b}", "index", idx, "text", t, "style",
                                          style ? style : "Normal", "is_heading",
                                          style && !strncmp(style, "Heading", 7)));
            free(t);
        }
        free(ps);
    }
    wd_doc_free(d);
    free(why);
    free(f);
    return 0;
}

/* ---------------------------------------------------------------- find */

/* Code points of a UTF-8 string, lower-cased when asked (str.lower()). */
static unsigned *cps(const char *s, size_t *n, int lower)
{
    char *low = lower ? wd_py_lower(s) : NULL;
    const char *src = low ? low : s;
    size_t len = strlen(src), i = 0, k = 0;
    unsigned *out = mb_malloc((len + 1) * sizeof *out);
    while (i < len) out[k++] = mb_utf8_next(src, len, &i);
    *n = k;
    free(low);
    return out;
}

static int is_space_cp(unsigned cp)
{
    return (cp >= 9 && cp <= 13) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

static void find_in(json_t *occ, json_int_t *count, const char *text, const char *query, int match_case,
                    int whole_word, json_int_t pindex, const char *location)
{
    size_t nt, nq;
    unsigned *t = cps(text, &nt, !match_case), *q = cps(query, &nq, !match_case);
    char *ctx = wd_preview(text, 100);
    if (whole_word) {
        size_t i = 0, w = 0;
        while (i < nt) {
            while (i < nt && is_space_cp(t[i])) i++;
            if (i >= nt) break;
            size_t s = i;
            while (i < nt && !is_space_cp(t[i])) i++;
            if (i - s == nq && !memcmp(t + s, q, nq * sizeof *q)) {
                json_t *o = location ? json_pack("{s:s,s:I,s:s}", "location", location, "position",
                                                 (json_int_t)w, "context", ctx)
                                     : json_pack("{s:I,s:I,s:s}", "paragraph_index", pindex,
                                                 "position", (json_int_t)w, "context", ctx);
                json_array_append_new(occ, o);
                (*count)++;
            }
            w++;
        }
    } else if (nq <= nt) {
        size_t start = 0;
        for (;;) {
            size_t pos = (size_t)-1;
            for (size_t i = start; i + nq <= nt; i++)
                if (!memcmp(t + i, q, nq * sizeof *q)) {
                    pos = i;
                    break;
                }
            if (pos == (size_t)-1) break;
            json_t *o = location ? json_pack("{s:s,s:I,s:s}", "location", location, "position",
                                             (json_int_t)pos, "context", ctx)
                                 : json_pack("{s:I,s:I,s:s}", "paragraph_index", pindex, "position",
                                             (json_int_t)pos, "context", ctx);
            json_array_append_new(occ, o);
            (*count)++;
            start = pos + nq;
            if (!nq) break;
        }
    }
    free(ctx);
    free(t);
    free(q);
}

int wd_t_find_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    const char *q = json_string_value(json_object_get(a, "text_to_find"));
    int mc = json_is_true(json_object_get(a, "match_case"));
    int ww = json_is_true(json_object_get(a, "whole_word"));
    char *why = NULL;
    wd_doc *d = NULL;
    if (!wd_exists(f)) mb_mcp_textf(res, "Document %s does not exist", f);
    else if (!*q) mb_mcp_text(res, "Search text cannot be empty");
    else if (wd_doc_open(f, &d, &why)) {
        char *m = mb_asprintf("Failed to search for text: %s", why);
        wd_json_result(res, json_pack("{s:s}", "error", m));
        free(m);
    } else {
        json_t *occ = json_array();
        json_int_t count = 0;
        xmlNodePtr *ps, *ts;
        size_t np = wd_paragraphs(d, &ps), nt = wd_tables(d, &ts);
        for (size_t i = 0; i < np; i++) {
            char *t = wd_para_text_dup(ps[i]);
            find_in(occ, &count, t, q, mc, ww, (json_int_t)i, NULL);
            free(t);
        }
        for (size_t ti = 0; ti < nt; ti++) {
            xmlNodePtr *rows;
            size_t nr = wd_table_rows(ts[ti], &rows);
            for (size_t r = 0; r < nr; r++) {
                xmlNodePtr *cells;
                size_t nc = wd_row_cells(ts[ti], rows[r], &cells);
                for (size_t c = 0; c < nc; c++) {
                    char loc[96];
                    snprintf(loc, sizeof loc, "Table %zu, Row %zu, Column %zu", ti, r, c);
                    for (xmlNodePtr p = cells[c]->children; p; p = p->next) {
                        if (!wd_is(p, "p")) continue;
                        char *t = wd_para_text_dup(p);
                        find_in(occ, &count, t, q, mc, ww, 0, loc);
                        free(t);
                    }
                }
                free(cells);
            }
            free(rows);
        }
        free(ps);
        free(ts);
        wd_json_result(res, json_pack("{s:s,s:b,s:b,s:o,s:I}", "query", q, "match_case", mc,
                                      "whole_word", ww, "occurrences", occ, "total_count", count));
    }
    wd_doc_free(d);
    free(why);
    free(f);
    return 0;
}

/* ----------------------------------------------------------------- pdf */

static char *abspath(const char *p)
{
    if (p[0] == '/') return mb_path_resolve(NULL, p);
    return mb_path_resolve(NULL, p); /* resolved against the cwd */
}

static int cancelled_cb(void *ctx) { return mb_mcp_call_cancelled(ctx); }

int wd_t_convert_to_pdf(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    int v119 = ((wd_server *)mb_mcp_call_data(call))->v119;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    const char *given = json_string_value(json_object_get(a, "output_filename"));
    if (!wd_exists(f)) {
        mb_mcp_textf(res, "Document %s does not exist", f);
        free(f);
        return 0;
    }
    char *out;
    if (!given || !*given) {
        const char *slash = strrchr(f, '/');
        const char *base = slash ? slash + 1 : f;
        while (*base == '.') base++;
        const char *dot = strrchr(base, '.');
        out = mb_asprintf("%.*s.pdf", (int)(dot ? (size_t)(dot - f) : strlen(f)), f);
    } else {
        size_t n = strlen(given);
        int has = n >= 4 && !strcasecmp(given + n - 4, ".pdf");
        out = has ? mb_strdup(given) : mb_asprintf("%s.pdf", given);
    }
    char *abs = abspath(out);
    free(out);
    out = abs;
    char *dir = mb_strndup(out, (size_t)(strrchr(out, '/') - out));
    if (!*dir) {
        free(dir);
        dir = mb_strdup("/");
    }
    mb_err err = {0};
    char *msg = NULL;
    if (mb_mkdir_p(dir, 0777, &err)) {
        mb_mcp_textf(res, "Failed to convert document to PDF: %s", err.msg);
        goto done;
    }
    if (!wd_writeable(out, &msg)) {
        mb_mcp_textf(res, "Cannot create PDF: %s (Path: %s, Dir: %s)", msg, out, dir);
        goto done;
    }
    mb_buf errors = {0};
    static const char *const CMDS[] = {"libreoffice", "soffice", NULL};
    for (int i = 0; CMDS[i]; i++) {
        /* a private LibreOffice profile, so concurrent conversions do not clash */
        char *home = mb_asprintf("-env:UserInstallation=file:///tmp/mcpbox-word-lo-%d", (int)getpid());
        const char *argv[] = {CMDS[i], home, "--headless", "--convert-to", "pdf", "--outdir", dir, f, NULL};
        mb_proc_spec spec = {.argv = argv, .timeout_ms = 60000, .kill_group = 1,
                             .watch_fd = mb_mcp_call_input_fd(call), .cancelled = cancelled_cb,
                             .ctx = call};
        mb_proc_result pr = {0};
        int rc = mb_proc_run(&spec, &pr, &err);
        free(home);
        if (v119) { /* 1.1.9: "<cmd> error: ..." and success on exit status 0 */
            const char *sep = errors.len ? "; " : "";
            if (rc) mb_buf_printf(&errors, "%s%s error: %s", sep, CMDS[i], err.msg);
            else if (pr.spawn_errno) {
                char *e = mb_py_os_error(pr.spawn_errno, CMDS[i]);
                mb_buf_printf(&errors, "%s%s error: %s", sep, CMDS[i], e);
                free(e);
            } else if (pr.timed_out) {
                mb_buf_printf(&errors, "%s%s error: Command '[...]' timed out after 60 seconds", sep, CMDS[i]);
            } else if (pr.exited && pr.exit_code == 0) {
                const char *slash = strrchr(f, '/');
                const char *base = slash ? slash + 1 : f;
                char *created = mb_asprintf("%s/%.*s.pdf", strcmp(dir, "/") ? dir : "", (int)(strlen(base) - 5), base);
                if (strcmp(created, out) && wd_exists(created)) rename(created, out);
                free(created);
                mb_mcp_textf(res, "Document successfully converted to PDF: %s", out);
                mb_proc_result_free(&pr);
                mb_buf_free(&errors);
                goto done;
            } else {
                mb_buf_printf(&errors, "%s%s error: %s", sep, CMDS[i], pr.err.data ? pr.err.data : "");
            }
            mb_proc_result_free(&pr);
            continue;
        }
        if (rc) {
            mb_buf_printf(&errors, "%sAn error occurred with %s: %s", errors.len ? "; " : "", CMDS[i], err.msg);
        } else if (pr.spawn_errno == ENOENT) {
            mb_buf_printf(&errors, "%sCommand '%s' not found.", errors.len ? "; " : "", CMDS[i]);
        } else if (pr.timed_out) {
            mb_buf_printf(&errors, "%sAn error occurred with %s: Command '[...]' timed out after 60 seconds",
                          errors.len ? "; " : "", CMDS[i]);
        } else if (pr.exited && pr.exit_code == 0) {
            const char *slash = strrchr(f, '/');
            const char *base = slash ? slash + 1 : f;
            size_t blen = strlen(base) - 5; /* f ends in .docx */
            char *created = mb_asprintf("%s/%.*s.pdf", strcmp(dir, "/") ? dir : "", (int)blen, base);
            if (wd_exists(created)) {
                if (strcmp(created, out) && rename(created, out)) {
                    mb_buf_printf(&errors, "%sAn error occurred with %s: %s", errors.len ? "; " : "",
                                  CMDS[i], strerror(errno));
                } else if (wd_exists(out)) {
                    mb_mcp_textf(res, "Document successfully converted to PDF via %s: %s", CMDS[i], out);
                    free(created);
                    mb_proc_result_free(&pr);
                    mb_buf_free(&errors);
                    goto done;
                }
            } else {
                mb_buf_printf(&errors, "%s%s returned success code, but output file '%s' was not found.",
                              errors.len ? "; " : "", CMDS[i], created);
            }
            free(created);
        } else {
            /* Python strips the captured stderr */
            char *e = pr.err.data ? pr.err.data : "";
            size_t n = pr.err.len;
            while (n && (e[n - 1] == ' ' || e[n - 1] == '\n' || e[n - 1] == '\t' || e[n - 1] == '\r')) n--;
            while (n && (*e == ' ' || *e == '\n' || *e == '\t' || *e == '\r')) e++, n--;
            mb_buf_printf(&errors, "%s%s failed. Stderr: %.*s", errors.len ? "; " : "", CMDS[i], (int)n, e);
        }
        mb_proc_result_free(&pr);
    }
    if (v119) {
        mb_mcp_textf(res,
                     "Failed to convert document to PDF using LibreOffice or docx2pdf.\n"
                     "LibreOffice errors: %s\n"
                     "docx2pdf error: No module named 'docx2pdf'\n"
                     "To convert documents to PDF, please install either:\n"
                     "1. LibreOffice (recommended for Linux/macOS)\n"
                     "2. Microsoft Word (required for docx2pdf on Windows/macOS)",
                     errors.data ? errors.data : "");
        mb_buf_free(&errors);
        goto done;
    }
    mb_buf_printf(&errors, "%sdocx2pdf is not installed, skipping fallback.", errors.len ? "; " : "");
    mb_mcp_textf(res,
                 "Failed to convert document to PDF using all available methods.\n"
                 "Recorded errors: %s\n"
                 "To convert documents to PDF, please install either:\n"
                 "1. LibreOffice (recommended for Linux/macOS)\n"
                 "2. Microsoft Word (required for docx2pdf on Windows/macOS)",
                 errors.data);
    mb_buf_free(&errors);
done:
    free(msg);
    free(dir);
    free(out);
    free(f);
    return 0;
}
