/*
 * tools_custom.c - customize_footnote_style of office-word-mcp-server, in
 * its two versions (tools/footnote_tools.py + core/footnotes.py): the
 * "Footnote Text" style (added when missing) gets the font, and every
 * superscript run that looks like a note mark (digits, or text found in
 * the mark characters - an empty run included, as Python's `in` finds it)
 * is renumbered with the chosen symbols. 568d8d8a also gives the mark's
 * paragraph the style; 1.1.9 offsets the symbols by start_number and
 * rewrites the paragraphs after a "Footnotes:" paragraph.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servers/word/word.h"


static int superscript(xmlNodePtr r)
{
    const char *v = wd_attr(wd_child(wd_child(r, "rPr"), "vertAlign"), "val");
    return v && !strcmp(v, "superscript");
}

/* str.isdigit() for the digits a note mark uses */
static int py_isdigit(const char *s)
{
    size_t len = strlen(s), i = 0;
    if (!len) return 0;
    while (i < len) {
        unsigned cp = mb_utf8_next(s, len, &i);
        int ok = (cp >= '0' && cp <= '9') || cp == 0xB2 || cp == 0xB3 || cp == 0xB9 || cp == 0x2070 ||
                 (cp >= 0x2074 && cp <= 0x2079) || (cp >= 0x2080 && cp <= 0x2089);
        if (!ok) return 0;
    }
    return 1;
}

/* one mark: the run and its paragraph */
typedef struct mark {
    xmlNodePtr p, r;
    size_t pi, ri;
} mark;

static size_t find_marks(wd_doc *d, const char *chars, mark **out)
{
    xmlNodePtr *ps;
    size_t np = wd_paragraphs(d, &ps), n = 0;
    *out = NULL;
    for (size_t i = 0; i < np; i++) {
        xmlNodePtr *rs;
        size_t nr = wd_para_runs(ps[i], &rs);
        for (size_t k = 0; k < nr; k++) {
            if (!superscript(rs[k])) continue;
            mb_buf t = {0};
            mb_buf_puts(&t, "");
            wd_run_text(rs[k], &t);
            int hit = py_isdigit(t.data) || strstr(chars, t.data) != NULL;
            mb_buf_free(&t);
            if (!hit) continue;
            *out = mb_realloc(*out, (n + 1) * sizeof **out);
            (*out)[n++] = (mark){ps[i], rs[k], i, k};
        }
        free(rs);
    }
    free(ps);
    return n;
}

static char *roman(long n)
{
    static const struct {
        int v;
        const char *s;
    } M[] = {{10, "x"}, {9, "ix"}, {5, "v"}, {4, "iv"}, {1, "i"}};
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (int i = 0; i < 5; i++)
        while (n >= M[i].v) mb_buf_puts(&b, M[i].s), n -= M[i].v;
    return mb_buf_steal(&b);
}

/* get_format_symbols of 568d8d8a: symbol number i (1-based) */
static char *symbol_head(const char *fmt, long i)
{
    static const char *const SPECIAL[] = {"*", "\xe2\x80\xa0", "\xe2\x80\xa1", "\xc2\xa7", "\xc2\xb6", "#"};
    if (!strcmp(fmt, "i, ii, iii")) return roman(i);
    if (!strcmp(fmt, "a, b, c")) {
        if (i <= 26) return mb_asprintf("%c", (char)(96 + i));
        return mb_asprintf("%c%c", (char)(96 + (i - 1) / 26), (char)(96 + (i - 1) % 26 + 1));
    }
    if (!strcmp(fmt, "*, \xe2\x80\xa0, \xe2\x80\xa1")) {
        if (i <= 6) return mb_strdup(SPECIAL[i - 1]);
        return mb_asprintf("%s%ld", SPECIAL[(i - 1) % 6], (i - 1) / 6 + 1);
    }
    return mb_asprintf("%ld", i);
}

/* get_format_symbols of 1.1.9: the first lists, then numbers */
static char *symbol_119(const char *fmt, long i)
{
    static const char *const ROMAN[] = {"i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x",
                                        "xi", "xii", "xiii", "xiv", "xv", "xvi", "xvii", "xviii", "xix", "xx"};
    static const char *const SYM[] = {"*", "\xe2\x80\xa0", "\xe2\x80\xa1", "\xc2\xa7", "\xc2\xb6", "||",
                                      "**", "\xe2\x80\xa0\xe2\x80\xa0", "\xe2\x80\xa1\xe2\x80\xa1", "\xc2\xa7\xc2\xa7"};
    if (!strcmp(fmt, "i, ii, iii") && i <= 20) return mb_strdup(ROMAN[i - 1]);
    if (!strcmp(fmt, "a, b, c") && i <= 26) return mb_asprintf("%c", (char)(96 + i));
    if (!strcmp(fmt, "*, \xe2\x80\xa0, \xe2\x80\xa1") && i <= 10) return mb_strdup(SYM[i - 1]);
    return mb_asprintf("%ld", i);
}

static void style_font(wd_doc *d, xmlNodePtr style, const char *font, json_int_t size)
{
    xmlNsPtr w = xmlDocGetRootElement(d->styles)->ns;
    xmlNodePtr rpr = wd_child(style, "rPr");
    if (!rpr) {
        rpr = xmlNewDocNode(d->styles, w, (const xmlChar *)"rPr", NULL);
        xmlNodePtr at = wd_child(style, "tblPr");
        if (!at) at = wd_child(style, "trPr");
        if (!at) at = wd_child(style, "tcPr");
        if (!at) at = wd_child(style, "tblStylePr");
        if (at) xmlAddPrevSibling(at, rpr);
        else xmlAddChild(style, rpr);
    }
    if (font && *font) {
        xmlNodePtr f = wd_child(rpr, "rFonts");
        if (!f) {
            f = xmlNewDocNode(d->styles, w, (const xmlChar *)"rFonts", NULL);
            xmlNodePtr first = NULL;
            for (xmlNodePtr c = rpr->children; c && !first; c = c->next)
                if (c->type == XML_ELEMENT_NODE && !wd_is(c, "rStyle")) first = c;
            if (first) xmlAddPrevSibling(first, f);
            else xmlAddChild(rpr, f);
        }
        xmlSetNsProp(f, w, (const xmlChar *)"ascii", (const xmlChar *)font);
        xmlSetNsProp(f, w, (const xmlChar *)"hAnsi", (const xmlChar *)font);
    }
    if (size) {
        static const char *const AFTER[] = {"szCs", "highlight", "u", "effect", "bdr", "shd", "fitText",
                                            "vertAlign", "rtl", "cs", "em", "lang", "eastAsianLayout",
                                            "specVanish", "oMath", NULL};
        xmlNodePtr s = wd_child(rpr, "sz");
        if (!s) {
            s = xmlNewDocNode(d->styles, w, (const xmlChar *)"sz", NULL);
            xmlNodePtr at = NULL;
            for (xmlNodePtr c = rpr->children; c && !at; c = c->next)
                for (int i = 0; AFTER[i] && !at; i++)
                    if (wd_is(c, AFTER[i])) at = c;
            if (at) xmlAddPrevSibling(at, s);
            else xmlAddChild(rpr, s);
        }
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)size * 2);
        xmlSetNsProp(s, w, (const xmlChar *)"val", (const xmlChar *)v);
    }
    wd_doc_touch_styles(d);
}

int wd_t_customize_footnote_style(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    int v119 = ((wd_server *)mb_mcp_call_data(call))->v119;
    char *f = wd_docx_name(wd_str(a, "filename"));
    const char *fmt = wd_str(a, "numbering_format"), *font = wd_str(a, "font_name");
    json_int_t start = json_integer_value(json_object_get(a, "start_number"));
    json_t *size = json_object_get(a, "font_size");
    wd_doc *d = wd_open_rw(res, f, 0, "customize footnote style");
    if (!d) {
        free(f);
        return 0;
    }
    if (!wd_styles(d)) {
        mb_mcp_text(res, "Failed to customize footnote style: the document has no styles part");
        goto out;
    }
    xmlNodePtr style = wd_style_by_name(d, "Footnote Text", NULL);
    if (!style) { /* styles.add_style("Footnote Text", PARAGRAPH) */
        xmlNodePtr root = xmlDocGetRootElement(d->styles);
        xmlNsPtr w = root->ns;
        style = xmlNewChild(root, w, (const xmlChar *)"style", NULL);
        xmlSetNsProp(style, w, (const xmlChar *)"type", (const xmlChar *)"paragraph");
        xmlSetNsProp(style, w, (const xmlChar *)"customStyle", (const xmlChar *)"1");
        xmlSetNsProp(style, w, (const xmlChar *)"styleId", (const xmlChar *)"FootnoteText");
        xmlSetNsProp(xmlNewChild(style, w, (const xmlChar *)"name", NULL), w, (const xmlChar *)"val",
                     (const xmlChar *)"Footnote Text");
        wd_doc_touch_styles(d);
    }
    json_int_t sz = json_is_integer(size) ? json_integer_value(size) : 0;
    if ((font && *font) || sz) style_font(d, style, font, sz);
    mark *marks;
    size_t n = find_marks(d, v119 ? "\xc2\xb9\xc2\xb2\xc2\xb3\xe2\x81\xb4\xe2\x81\xb5\xe2\x81\xb6\xe2\x81\xb7\xe2\x81\xb8\xe2\x81\xb9"
                                  : "\xc2\xb9\xc2\xb2\xc2\xb3\xe2\x81\xb4\xe2\x81\xb5\xe2\x81\xb6\xe2\x81\xb7\xe2\x81\xb8\xe2\x81\xb9"
                                    "\xe2\x81\xb0\xe2\x80\xa0\xe2\x80\xa1\xc2\xa7\xc2\xb6",
                           &marks);
    long count = (long)n + (long)start; /* symbols generated */
    for (size_t i = 0; i < n; i++) {
        if (v119) {
            long idx = (long)i + (long)start - 1;
            char *sym = idx >= 0 && idx < count ? symbol_119(fmt, idx + 1) : mb_asprintf("%ld", idx + 1);
            wd_run_set_text(d, marks[i].r, sym);
            free(sym);
        } else if ((long)i < count) {
            char *sym = symbol_head(fmt, (long)i + 1);
            wd_run_set_text(d, marks[i].r, sym);
            free(sym);
            wd_run_superscript(d, marks[i].r);
            wd_para_set_style(d, marks[i].p, "Footnote Text");
        }
    }
    if (v119) { /* the paragraphs after "Footnotes:" get the new symbols */
        xmlNodePtr *ps;
        size_t np = wd_paragraphs(d, &ps);
        for (size_t k = 0; k < np; k++) {
            char *t = wd_para_text_dup(ps[k]);
            int sec = !strncmp(t, "Footnotes:", 10) || !strcmp(t, "Footnotes");
            free(t);
            if (!sec) continue;
            for (size_t i = 0; i < n && k + i + 1 < np; i++) {
                xmlNodePtr p = ps[k + i + 1];
                char *old = wd_para_text_dup(p);
                const char *body = old;
                if (strchr(old, ' ') && mb_utf8_length(old, strlen(old)) > 2) body = strchr(old, ' ') + 1;
                long idx = (long)i + (long)start - 1;
                char *sym = idx >= 0 && idx < count ? symbol_119(fmt, idx + 1) : mb_asprintf("%ld", idx + 1);
                char *nt = mb_asprintf("%s %s", sym, body);
                for (xmlNodePtr c = p->children, next; c; c = next) { /* paragraph.text = ... */
                    next = c->next;
                    if (wd_is(c, "pPr")) continue;
                    xmlUnlinkNode(c);
                    xmlFreeNode(c);
                }
                wd_add_run(d, p, nt);
                wd_para_set_style(d, p, "Footnote Text");
                free(nt);
                free(sym);
                free(old);
            }
            break;
        }
        free(ps);
    }
    free(marks);
    wd_doc_touch(d);
    char *ok = mb_asprintf("Footnote style and numbering customized in %s", f);
    wd_save_answer(d, f, res, "customize footnote style", ok);
    free(ok);
out:
    wd_doc_free(d);
    free(f);
    return 0;
}
