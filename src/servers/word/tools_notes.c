/*
 * tools_notes.c - add_footnote_to_document and add_endnote_to_document of
 * office-word-mcp-server (tools/footnote_tools.py). Neither makes a real
 * note: python-docx's Run has no add_footnote, so upstream always takes its
 * fallback - a superscript "¹" / "†" run on the paragraph (after the empty
 * run its first attempt left) and the note text as a paragraph under a
 * "Footnotes:" paragraph / a page break and an "Endnotes:" heading.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servers/word/word.h"


/* `"Name" in doc.styles`: a style whose w:name is exactly the internal name */
static const char *note_style(wd_doc *d, const char *name)
{
    return wd_style_by_name(d, name, NULL) ? name : "Normal";
}

static int any_para(wd_doc *d, const char *a, const char *b, int prefix)
{
    xmlNodePtr *ps;
    size_t n = wd_paragraphs(d, &ps);
    int hit = 0;
    for (size_t i = 0; i < n && !hit; i++) {
        char *t = wd_para_text_dup(ps[i]);
        hit = prefix ? !strncmp(t, a, strlen(a)) : (!strcmp(t, a) || (b && !strcmp(t, b)));
        free(t);
    }
    free(ps);
    return hit;
}

static xmlNodePtr para_at(wd_doc *d, json_int_t i, mb_mcp_result *res)
{
    xmlNodePtr *ps;
    size_t n = wd_paragraphs(d, &ps);
    xmlNodePtr p = NULL;
    if (i < 0 || (size_t)i >= n)
        mb_mcp_textf(res, "Invalid paragraph index. Document has %zu paragraphs (0-%lld).", n, (long long)n - 1);
    else p = ps[i];
    free(ps);
    return p;
}

int wd_t_add_footnote_to_document(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t i = json_integer_value(json_object_get(a, "paragraph_index"));
    wd_doc *d = wd_open_rw(res, f, 0, "add footnote");
    xmlNodePtr p = d ? para_at(d, i, res) : NULL;
    if (p) {
        wd_add_run(d, p, NULL); /* the first attempt's run, left empty */
        wd_run_superscript(d, wd_add_run(d, p, "\xc2\xb9"));
        if (!any_para(d, "Footnotes:", NULL, 1)) {
            wd_add_run(d, wd_add_paragraph(d, "\n"), NULL);
            wd_add_paragraph(d, "Footnotes:");
        }
        char *text = mb_asprintf("\xc2\xb9 %s", wd_str(a, "footnote_text"));
        xmlNodePtr np = wd_add_paragraph(d, text);
        free(text);
        wd_para_set_style(d, np, note_style(d, "Footnote Text"));
        wd_doc_touch(d);
        char *ok = mb_asprintf("Footnote added to paragraph %lld in %s (simplified approach)", (long long)i, f);
        wd_save_answer(d, f, res, "add footnote", ok);
        free(ok);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

int wd_t_add_endnote_to_document(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_int_t i = json_integer_value(json_object_get(a, "paragraph_index"));
    wd_doc *d = wd_open_rw(res, f, 0, "add endnote");
    xmlNodePtr p = d ? para_at(d, i, res) : NULL;
    if (p) {
        wd_run_superscript(d, wd_add_run(d, p, "\xe2\x80\xa0"));
        if (!any_para(d, "Endnotes:", "ENDNOTES", 0)) {
            xmlNodePtr r = wd_add_run(d, wd_add_paragraph(d, NULL), NULL);
            wd_set(d, wd_add(d, r, "br"), "type", "page");
            xmlNodePtr h = wd_add_paragraph(d, "Endnotes:");
            if (wd_para_set_style(d, h, "Heading 1")) {
                mb_mcp_text(res, "Failed to add endnote: \"no style with name 'Heading 1'\"");
                goto out;
            }
        }
        char *text = mb_asprintf("\xe2\x80\xa0 %s", wd_str(a, "endnote_text"));
        xmlNodePtr np = wd_add_paragraph(d, text);
        free(text);
        wd_para_set_style(d, np, note_style(d, "Endnote Text"));
        wd_doc_touch(d);
        char *ok = mb_asprintf("Endnote added to paragraph %lld in %s", (long long)i, f);
        wd_save_answer(d, f, res, "add endnote", ok);
        free(ok);
    }
out:
    wd_doc_free(d);
    free(f);
    return 0;
}
