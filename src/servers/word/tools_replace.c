/*
 * tools_replace.c - replace_paragraph_block_below_header and
 * replace_block_between_manual_anchors of office-word-mcp-server
 * (utils/document_utils.py). Upstream's wrappers catch nothing, so failures
 * surface as FastMCP tool errors (isError "Error calling tool 'X': ...");
 * the file name gets no ".docx" appended.
 *
 * Quirks kept: the block below a header ends at the next paragraph whose
 * style starts with heading/título/toc and only paragraphs are removed
 * (tables stay); the deletion finds the header again without skipping TOC
 * entries; between anchors, without an end anchor the block ends at the next
 * paragraph with a bold, caps or size run property - or takes everything to
 * the end of the body, w:sectPr included; match_fn / detect_block_end_fn
 * cannot be callables over JSON (a truthy value fails as a call would).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "servers/common/pyschema.h"
#include "servers/word/word.h"


static void tool_error(mb_mcp_call *call, mb_mcp_result *res, const char *msg)
{
    mb_mcp_textf(res, "Error calling tool '%s': %s", mb_mcp_call_tool(call), msg);
    mb_mcp_set_is_error(res, 1);
}

static int truthy(json_t *v)
{
    return v && !json_is_null(v) && !json_is_false(v) && !(json_is_integer(v) && !json_integer_value(v)) &&
           !(json_is_real(v) && json_real_value(v) == 0) && !(json_is_string(v) && !*json_string_value(v)) &&
           !(json_is_array(v) && !json_array_size(v)) && !(json_is_object(v) && !json_object_size(v));
}

/* new paragraphs must be texts python-docx can iterate */
static int check_items(mb_mcp_call *call, json_t *items, mb_mcp_result *res)
{
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);
        if (json_is_string(it) || !truthy(it)) continue;
        char *m = mb_asprintf("'%s' object is not iterable", mb_py_type_name(it));
        if (json_is_array(it) || json_is_object(it)) {
            free(m);
            m = mb_strdup("new_paragraphs items must be strings");
        }
        tool_error(call, res, m);
        free(m);
        return 0;
    }
    return 1;
}

/* inserts the items after `after`, each with `style`; -1 when the style is missing */
static int insert_after(wd_doc *d, xmlNodePtr after, json_t *items, const char *style)
{
    for (size_t i = 0; i < json_array_size(items); i++) {
        xmlNodePtr p = wd_add_paragraph(d, json_string_value(json_array_get(items, i)));
        if (wd_para_set_style(d, p, style)) return -1;
        xmlUnlinkNode(p);
        xmlAddNextSibling(after, p);
        after = p;
    }
    return 0;
}

static int text_matches(xmlNodePtr p, const char *want_lower)
{
    char *t = wd_para_text_dup(p), *s = wd_py_strip(t), *l = wd_py_lower(s);
    int hit = !strcmp(l, want_lower);
    free(t);
    free(s);
    free(l);
    return hit;
}

/* The document at f, or NULL with the answer given. */
static wd_doc *open_existing(mb_mcp_call *call, mb_mcp_result *res, const char *f)
{
    struct stat st;
    if (stat(f, &st)) {
        mb_mcp_textf(res, "Document %s not found.", f);
        return NULL;
    }
    char *why = NULL;
    wd_doc *d = NULL;
    if (wd_doc_open(f, &d, &why)) {
        tool_error(call, res, why);
        free(why);
        return NULL;
    }
    return d;
}

int wd_t_replace_paragraph_block_below_header(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *f = wd_str(a, "filename"), *header = wd_str(a, "header_text");
    json_t *items = json_object_get(a, "new_paragraphs");
    wd_doc *d = open_existing(call, res, f);
    if (!d) return 0;
    char *why = NULL;
    char *hs = wd_py_strip(header), *want = wd_py_lower(hs);
    free(hs);
    xmlNodePtr *ps;
    size_t n = wd_paragraphs(d, &ps);
    xmlNodePtr head = NULL;
    size_t hi2 = n;
    for (size_t i = 0; i < n; i++) {
        if (!text_matches(ps[i], want)) continue;
        const char *style = wd_para_style_name(d, ps[i]);
        char *up = style ? mb_strdup(style) : NULL;
        int toc = up && !strncasecmp(up, "toc", 3);
        free(up);
        if (hi2 == n) hi2 = i; /* delete_block_under_header: the first match, TOC or not */
        if (!toc && !head) head = ps[i];
    }
    if (!head) {
        mb_mcp_textf(res, "Header '%s' not found in document.", header);
        goto out;
    }
    if (!check_items(call, items, res)) goto out;
    size_t end = n;
    for (size_t i = hi2 + 1; i < n && end == n; i++) {
        const char *style = wd_para_style_name(d, ps[i]);
        char *l = style ? wd_py_lower(style) : NULL;
        if (l && (!strncmp(l, "heading", 7) || !strncmp(l, "t\xc3\xadtulo", 7) || !strncmp(l, "toc", 3))) end = i;
        free(l);
    }
    size_t removed = 0;
    for (size_t i = hi2 + 1; i < end; i++) {
        if (ps[i] == head) continue; /* never the header itself */
        xmlUnlinkNode(ps[i]);
        xmlFreeNode(ps[i]);
        removed++;
    }
    if (insert_after(d, head, items, "Normal")) {
        tool_error(call, res, "\"no style with name 'Normal'\"");
        goto out;
    }
    wd_doc_touch(d);
    if (wd_doc_save(d, f, &why)) tool_error(call, res, why);
    else
        mb_mcp_textf(res, "Replaced content under '%s' with %zu paragraph(s), style: Normal, removed %zu elements.",
                     header, json_array_size(items), removed);
out:
    free(ps);
    free(want);
    free(why);
    wd_doc_free(d);
    return 0;
}

/* "".join(node.text for every descendant whose tag ends in "}t").strip() */
static void t_text(xmlNodePtr n, mb_buf *b)
{
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (c->ns && !strcmp((const char *)c->name, "t")) {
            for (xmlNodePtr x = c->children; x && (x->type == XML_TEXT_NODE || x->type == XML_CDATA_SECTION_NODE); x = x->next)
                mb_buf_puts(b, (const char *)x->content);
        }
        t_text(c, b);
    }
}

static char *anchor_text(xmlNodePtr p)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    t_text(p, &b);
    char *s = wd_py_strip(b.data);
    mb_buf_free(&b);
    return s;
}

static int visually_distinct(xmlNodePtr n)
{
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (c->ns && !strcmp((const char *)c->name, "r")) {
            xmlNodePtr rpr = wd_child(c, "rPr");
            if (rpr && (wd_child(rpr, "b") || wd_child(rpr, "caps") || wd_child(rpr, "sz"))) return 1;
        }
        if (visually_distinct(c)) return 1;
    }
    return 0;
}

int wd_t_replace_block_between_manual_anchors(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *f = wd_str(a, "filename"), *start = wd_str(a, "start_anchor_text");
    const char *end_text = wd_str(a, "end_anchor_text"), *style = wd_str(a, "new_paragraph_style");
    json_t *items = json_object_get(a, "new_paragraphs"), *match = json_object_get(a, "match_fn");
    if (!style || !*style) style = "Normal";
    wd_doc *d = open_existing(call, res, f);
    if (!d) return 0;
    char *why = NULL;
    size_t n = 0;
    for (xmlNodePtr c = d->body->children; c; c = c->next) n += c->type == XML_ELEMENT_NODE;
    xmlNodePtr *els = mb_calloc(n ? n : 1, sizeof *els);
    n = 0;
    for (xmlNodePtr c = d->body->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE) els[n++] = c;
    char *want = wd_py_strip(start);
    size_t si = n, ei = n;
    for (size_t i = 0; i < n && si == n; i++) {
        if (!wd_is(els[i], "p")) continue;
        if (truthy(match)) {
            char *m = mb_asprintf("'%s' object is not callable", mb_py_type_name(match));
            tool_error(call, res, m);
            free(m);
            goto out;
        }
        char *t = anchor_text(els[i]);
        if (!strcmp(t, want)) si = i;
        free(t);
    }
    if (si == n) {
        mb_mcp_textf(res, "Start anchor '%s' not found.", start);
        goto out;
    }
    if (end_text && *end_text) {
        char *ew = wd_py_strip(end_text);
        for (size_t i = si + 1; i < n && ei == n; i++) {
            if (!wd_is(els[i], "p")) continue;
            char *t = anchor_text(els[i]);
            if (!strcmp(t, ew)) ei = i;
            free(t);
        }
        free(ew);
    } else {
        for (size_t i = si + 1; i < n && ei == n; i++)
            if (wd_is(els[i], "p") && visually_distinct(els[i])) ei = i;
    }
    size_t removed = 0;
    for (size_t i = si + 1; i < ei; i++) {
        xmlUnlinkNode(els[i]);
        xmlFreeNode(els[i]);
        removed++;
    }
    wd_doc_touch(d);
    if (wd_doc_save(d, f, &why)) { /* upstream saves the deletion first */
        tool_error(call, res, why);
        goto out;
    }
    if (!check_items(call, items, res)) goto out;
    /* upstream saves, reloads and finds the anchor again among the paragraphs by .text */
    xmlNodePtr *ps;
    size_t np = wd_paragraphs(d, &ps);
    xmlNodePtr anchor = NULL;
    for (size_t i = 0; i < np && !anchor; i++) {
        char *t = wd_para_text_dup(ps[i]), *s = wd_py_strip(t);
        if (!strcmp(s, want)) anchor = ps[i];
        free(t);
        free(s);
    }
    free(ps);
    if (!anchor) {
        mb_mcp_textf(res, "Start anchor '%s' not found after deletion (unexpected).", start);
        goto out;
    }
    if (insert_after(d, anchor, items, style)) {
        char *m = mb_asprintf("\"no style with name '%s'\"", style);
        tool_error(call, res, m);
        free(m);
        goto out;
    }
    if (wd_doc_save(d, f, &why)) tool_error(call, res, why);
    else
        mb_mcp_textf(res, "Replaced content between '%s' and '%s' with %zu paragraph(s), style: %s, removed %zu elements.",
                     start, end_text && *end_text ? end_text : "next logical header", json_array_size(items),
                     style, removed);
out:
    free(want);
    free(els);
    free(why);
    wd_doc_free(d);
    return 0;
}
