/*
 * tools_insert.c - the "near text" tools of office-word-mcp-server
 * (utils/document_utils.py): a heading, a paragraph or a list inserted
 * before or after a paragraph found by index or by text (TOC paragraphs
 * skipped).
 *
 * Upstream quirks kept: when the target is found by text the answer says
 * "the target paragraph" (its index lookup compares fresh python-docx
 * objects by identity and never matches); "before" inserts list items in
 * reverse order; an omitted line_style prints the style object's repr.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "servers/word/word.h"


/* The target paragraph; NULL with `res` answered. *by_index tells how it was found. */
static xmlNodePtr find_target(wd_doc *d, json_t *a, mb_mcp_result *res, int *by_index, json_int_t *idx)
{
    xmlNodePtr *ps;
    size_t n = wd_paragraphs(d, &ps);
    xmlNodePtr found = NULL;
    json_t *ji = json_object_get(a, "target_paragraph_index");
    const char *text = wd_str(a, "target_text");
    *by_index = json_is_integer(ji);
    if (*by_index) {
        *idx = json_integer_value(ji);
        if (*idx < 0 || (size_t)*idx >= n) {
            mb_mcp_textf(res, "Invalid target_paragraph_index: %lld. Document has %zu paragraphs.",
                         (long long)*idx, n);
            free(ps);
            return NULL;
        }
        found = ps[*idx];
    } else if (text && *text) {
        for (size_t i = 0; i < n && !found; i++) {
            const char *style = wd_para_style_name(d, ps[i]);
            if (style && !strncasecmp(style, "toc", 3)) continue;
            char *t = wd_para_text_dup(ps[i]);
            if (strstr(t, text)) found = ps[i];
            free(t);
        }
    }
    free(ps);
    if (!found)
        mb_mcp_text(res, "Target paragraph not found (by index or text). (TOC paragraphs are skipped in text search)");
    return found;
}

static void place(xmlNodePtr anchor, xmlNodePtr p, const char *position)
{
    xmlUnlinkNode(p);
    if (!strcmp(position, "before")) xmlAddPrevSibling(anchor, p);
    else xmlAddNextSibling(anchor, p);
}

static wd_doc *open_doc(mb_mcp_result *res, const char *f, const char *verb)
{
    struct stat st;
    char *why = NULL;
    wd_doc *d = NULL;
    if (stat(f, &st)) mb_mcp_textf(res, "Document %s does not exist", f);
    else if (wd_doc_open(f, &d, &why)) mb_mcp_textf(res, "Failed to %s: %s", verb, why);
    free(why);
    return d;
}

/* "inserted after paragraph (index 3)" / "inserted after the target paragraph" */
static char *where(const char *position, int by_index, json_int_t idx)
{
    return by_index ? mb_asprintf("%s paragraph (index %lld)", position, (long long)idx)
                    : mb_asprintf("%s the target paragraph", position);
}

int wd_t_insert_header_near_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    const char *title = wd_str(a, "header_title"), *style = wd_str(a, "header_style");
    const char *position = wd_str(a, "position");
    wd_doc *d = open_doc(res, f, "insert header");
    int by_index;
    json_int_t idx = 0;
    xmlNodePtr anchor = d ? find_target(d, a, res, &by_index, &idx) : NULL;
    if (anchor) {
        xmlNodePtr p = wd_add_paragraph(d, title);
        if (wd_para_set_style(d, p, style)) {
            mb_mcp_textf(res, "Failed to insert header: \"no style with name '%s'\"", style);
        } else {
            place(anchor, p, position);
            wd_doc_touch(d);
            char *w = where(position, by_index, idx);
            char *ok = mb_asprintf("Header '%s' (style: %s) inserted %s.", title ? title : "None", style, w);
            wd_save_answer(d, f, res, "insert header", ok);
            free(ok);
            free(w);
        }
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

int wd_t_insert_line_or_paragraph_near_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    const char *text = wd_str(a, "line_text"), *style = wd_str(a, "line_style");
    const char *position = wd_str(a, "position");
    wd_doc *d = open_doc(res, f, "insert line/paragraph");
    int by_index;
    json_int_t idx = 0;
    xmlNodePtr anchor = d ? find_target(d, a, res, &by_index, &idx) : NULL;
    if (anchor) {
        char *shown;
        const char *use = style && *style ? style : wd_para_style_name(d, anchor);
        if (style && *style) shown = mb_strdup(style);
        else if (use) /* repr() of python-docx's style object; id() is process-local */
            shown = mb_asprintf("_ParagraphStyle('%s') id: %lu", use,
                                (unsigned long)(140000000000000ul + ((unsigned long)(size_t)anchor & 0xffffffu)));
        else shown = mb_strdup("None");
        xmlNodePtr p = wd_add_paragraph(d, text);
        if (use && wd_para_set_style(d, p, use)) {
            mb_mcp_textf(res, "Failed to insert line/paragraph: \"no style with name '%s'\"", use);
        } else {
            place(anchor, p, position);
            wd_doc_touch(d);
            char *w = where(position, by_index, idx);
            char *ok = mb_asprintf("Line/paragraph inserted %s with style '%s'.", w, shown);
            wd_save_answer(d, f, res, "insert line/paragraph", ok);
            free(ok);
            free(w);
        }
        free(shown);
    }
    wd_doc_free(d);
    free(f);
    return 0;
}

int wd_t_insert_numbered_list_near_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    wd_server *ws = mb_mcp_call_data(call);
    char *f = wd_docx_name(wd_str(a, "filename"));
    const char *position = wd_str(a, "position");
    const char *bullet = ws->v119 ? "number" : wd_str(a, "bullet_type");
    json_t *items = json_object_get(a, "list_items");
    wd_doc *d = open_doc(res, f, "insert numbered list");
    int by_index;
    json_int_t idx = 0;
    xmlNodePtr anchor = d ? find_target(d, a, res, &by_index, &idx) : NULL;
    if (!anchor) goto out;
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);
        int falsy = json_is_null(it) || json_is_false(it) ||
                    (json_is_integer(it) && !json_integer_value(it)) ||
                    (json_is_real(it) && json_real_value(it) == 0) ||
                    (json_is_array(it) && !json_array_size(it)) ||
                    (json_is_object(it) && !json_object_size(it));
        if (json_is_string(it) || falsy) continue;
        /* python-docx iterates the item as text */
        const char *type = json_is_integer(it) ? "int" : json_is_real(it) ? "float"
                           : json_is_true(it) ? "bool" : NULL;
        if (type) mb_mcp_textf(res, "Failed to insert numbered list: '%s' object is not iterable", type);
        else mb_mcp_text(res, "Failed to insert numbered list: list items must be strings");
        goto out;
    }
    static const char *const HEAD_STYLES[] = {"List Paragraph", "ListParagraph", "Normal", NULL};
    static const char *const V119_STYLES[] = {"List Number", "List Paragraph", "Normal", NULL};
    const char *style = NULL;
    for (const char *const *c = ws->v119 ? V119_STYLES : HEAD_STYLES; *c && !style; c++)
        if (wd_style_by_name(d, *c, NULL)) style = *c;
    size_t n = json_array_size(items);
    xmlNodePtr *made = mb_calloc(n ? n : 1, sizeof *made);
    for (size_t i = 0; i < n; i++) {
        made[i] = wd_add_paragraph(d, json_string_value(json_array_get(items, i))); /* NULL: empty */
        if (style && wd_para_set_style(d, made[i], style)) {
            mb_mcp_textf(res, "Failed to insert numbered list: \"no style with name '%s'\"", style);
            free(made);
            goto out;
        }
        if (!ws->v119) { /* add_bullet_numbering: numPr appended to pPr */
            xmlNodePtr ppr = wd_get_ppr(d, made[i]);
            xmlNodePtr old = wd_child(ppr, "numPr");
            if (old) {
                xmlUnlinkNode(old);
                xmlFreeNode(old);
            }
            xmlNodePtr np = wd_add(d, ppr, "numPr");
            wd_set(d, wd_add(d, np, "ilvl"), "val", "0");
            wd_set(d, wd_add(d, np, "numId"), "val", !strcmp(bullet, "bullet") ? "1" : "2");
        }
    }
    for (size_t i = n; i-- > 0;) place(anchor, made[i], position);
    free(made);
    wd_doc_touch(d);
    char *w = where(position, by_index, idx);
    char *ok = ws->v119 ? mb_asprintf("Numbered list inserted %s.", w)
                        : mb_asprintf("%s list with %zu items inserted %s.",
                                      !strcmp(bullet, "bullet") ? "Bulleted" : "Numbered", n, w);
    wd_save_answer(d, f, res, "insert numbered list", ok);
    free(ok);
    free(w);
out:
    wd_doc_free(d);
    free(f);
    return 0;
}
