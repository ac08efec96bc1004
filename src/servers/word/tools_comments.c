/*
 * tools_comments.c - the comment tools of office-word-mcp-server
 * (tools/comment_tools.py, core/comments.py): the w:comment elements of the
 * part the main document relates to with a ".../comments" relationship.
 *
 * Upstream's fallback (scanning paragraphs when there is no comments part)
 * looks for "commentRangeStart" in str() of an lxml element, which is its
 * repr and never contains it: without a comments part the list is empty.
 * Comments read from the part carry paragraph_index null, so
 * get_comments_for_paragraph always answers an empty list. Both kept.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "servers/word/word.h"

static void answer_error(mb_mcp_result *res, const char *msg)
{
    wd_json_result(res, json_pack("{s:b,s:s}", "success", 0, "error", msg));
}

static int comments_rel(const mb_ooxml_rel *rel, void *payload)
{
    const char *slash = strrchr(rel->type, '/');
    if (rel->external || !slash || strcmp(slash + 1, "comments")) return 0;
    *(char **)payload = mb_strdup(rel->target);
    return 1;
}

/* datetime.fromisoformat(s.replace('Z', '+00:00')).isoformat(), or NULL */
static char *iso_date(const char *s)
{
    int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10) return NULL;
    const char *p = s + 10;
    char frac[8] = "";
    char tz[8] = "";
    if (*p == 'T' || *p == ' ') {
        int k = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &k) != 2 || k != 5) return NULL;
        p += 6;
        if (*p == ':') {
            if (!isdigit((unsigned char)p[1]) || !isdigit((unsigned char)p[2])) return NULL;
            sec = (p[1] - '0') * 10 + (p[2] - '0');
            p += 3;
            if (*p == '.' || *p == ',') {
                size_t m = strspn(p + 1, "0123456789");
                if (m != 3 && m != 6) return NULL;
                snprintf(frac, sizeof frac, "%.*s000", (int)m, p + 1);
                frac[6] = 0;
                p += 1 + m;
            }
        }
        if (*p == 'Z') {
            strcpy(tz, "+00:00");
            p++;
        } else if (*p == '+' || *p == '-') {
            if (strlen(p) < 6 || p[3] != ':') return NULL;
            snprintf(tz, sizeof tz, "%.6s", p);
            p += 6;
        }
    } else if (*p == 'Z') {
        return NULL;
    }
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59) return NULL;
    return mb_asprintf("%04d-%02d-%02dT%02d:%02d:%02d%s%s%s", y, mo, d, h, mi, sec, *frac ? "." : "",
                       frac, tz);
}

static char *py_strip(const char *s)
{
    size_t len = strlen(s), a = 0, b = len;
    while (a < b && (isspace((unsigned char)s[a]) || (unsigned char)s[a] == 0x1c)) a++;
    while (b > a && isspace((unsigned char)s[b - 1])) b--;
    return mb_strndup(s + a, b - a);
}

static void all_t(xmlNodePtr n, mb_buf *b)
{
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (wd_is(c, "t")) {
            xmlChar *s = xmlNodeGetContent(c);
            if (s) mb_buf_puts(b, (const char *)s);
            xmlFree(s);
        } else if (c->type == XML_ELEMENT_NODE) {
            all_t(c, b);
        }
    }
}

static void collect(xmlNodePtr n, json_t *out, int *index)
{
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (!wd_is(c, "comment")) {
            collect(c, out, index);
            continue;
        }
        char idx[32];
        snprintf(idx, sizeof idx, "%d", *index);
        const char *id = wd_attr(c, "id"), *author = wd_attr(c, "author");
        const char *initials = wd_attr(c, "initials"), *date = wd_attr(c, "date");
        json_t *jdate = json_null();
        if (date && *date) {
            char *iso = iso_date(date);
            jdate = json_string(iso ? iso : date);
            free(iso);
        }
        mb_buf t = {0};
        mb_buf_puts(&t, "");
        all_t(c, &t);
        char *text = py_strip(t.data);
        char cid[40];
        snprintf(cid, sizeof cid, "comment_%d", *index + 1);
        json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:n,s:b,s:s}", "id", cid,
                                             "comment_id", id ? id : idx, "author",
                                             author ? author : "Unknown", "initials",
                                             initials ? initials : "", "date", jdate, "text", text,
                                             "paragraph_index", "in_table", 0, "reference_text", ""));
        free(text);
        mb_buf_free(&t);
        (*index)++;
    }
}

/* All comments, or NULL with *why. */
static json_t *extract(const char *f, size_t *nparas, char **para_text, json_int_t pi, char **why)
{
    wd_doc *d;
    if (wd_doc_open(f, &d, why)) return NULL;
    json_t *out = json_array();
    if (nparas) {
        xmlNodePtr *ps;
        *nparas = wd_paragraphs(d, &ps);
        if (pi >= 0 && (size_t)pi < *nparas) *para_text = wd_para_text_dup(ps[pi]);
        free(ps);
    }
    char *target = NULL;
    mb_err err = {0};
    mb_ooxml_rels_each(d->pkg, d->main, comments_rel, &target, &err);
    if (target) {
        char *part = mb_ooxml_resolve(d->main, target);
        xmlDocPtr x = NULL;
        if (!mb_ooxml_xml(d->pkg, part, &x, &err)) {
            int index = 0;
            xmlNodePtr root = xmlDocGetRootElement(x);
            collect(root, out, &index);
        }
        free(part);
        free(target);
    }
    wd_doc_free(d);
    return out;
}

int wd_t_get_all_comments(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    char *why = NULL;
    if (!wd_exists(f)) {
        char *m = mb_asprintf("Document %s does not exist", f);
        answer_error(res, m);
        free(m);
    } else {
        json_t *c = extract(f, NULL, NULL, -1, &why);
        if (!c) {
            char *m = mb_asprintf("Failed to extract comments: %s", why);
            answer_error(res, m);
            free(m);
        } else {
            size_t n = json_array_size(c);
            wd_json_result(res, json_pack("{s:b,s:o,s:I}", "success", 1, "comments", c, "total_comments",
                                          (json_int_t)n));
        }
    }
    free(why);
    free(f);
    return 0;
}

static char *py_lower(const char *s)
{
    char *o = mb_strdup(s);
    for (char *p = o; *p; p++) *p = (char)tolower((unsigned char)*p);
    return o;
}

int wd_t_get_comments_by_author(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    const char *author = json_string_value(json_object_get(a, "author"));
    char *why = NULL, *stripped = py_strip(author);
    if (!wd_exists(f)) {
        char *m = mb_asprintf("Document %s does not exist", f);
        answer_error(res, m);
        free(m);
    } else if (!*stripped) {
        answer_error(res, "Author name cannot be empty");
    } else {
        json_t *c = extract(f, NULL, NULL, -1, &why);
        if (!c) {
            char *m = mb_asprintf("Failed to extract comments: %s", why);
            answer_error(res, m);
            free(m);
        } else {
            json_t *sel = json_array();
            char *want = py_lower(author);
            size_t i;
            json_t *v;
            json_array_foreach(c, i, v) {
                char *have = py_lower(json_string_value(json_object_get(v, "author")));
                if (!strcmp(have, want)) json_array_append(sel, v);
                free(have);
            }
            free(want);
            json_decref(c);
            size_t n = json_array_size(sel);
            wd_json_result(res, json_pack("{s:b,s:s,s:o,s:I}", "success", 1, "author", author, "comments",
                                          sel, "total_comments", (json_int_t)n));
        }
    }
    free(stripped);
    free(why);
    free(f);
    return 0;
}

int wd_t_get_comments_for_paragraph(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    json_int_t pi = json_integer_value(json_object_get(a, "paragraph_index"));
    char *why = NULL, *text = NULL;
    size_t np = 0;
    if (!wd_exists(f)) {
        char *m = mb_asprintf("Document %s does not exist", f);
        answer_error(res, m);
        free(m);
    } else if (pi < 0) {
        answer_error(res, "Paragraph index must be non-negative");
    } else {
        json_t *c = extract(f, &np, &text, pi, &why);
        if (!c) {
            char *m = mb_asprintf("Failed to extract comments: %s", why);
            answer_error(res, m);
            free(m);
        } else if ((size_t)pi >= np) {
            json_decref(c);
            char *m = mb_asprintf("Paragraph index %lld is out of range. Document has %zu paragraphs.",
                                  (long long)pi, np);
            answer_error(res, m);
            free(m);
        } else {
            json_decref(c); /* none of them carries a paragraph index */
            wd_json_result(res, json_pack("{s:b,s:I,s:s,s:[],s:i}", "success", 1, "paragraph_index", pi,
                                          "paragraph_text", text, "comments", "total_comments", 0));
        }
    }
    free(text);
    free(why);
    free(f);
    return 0;
}
