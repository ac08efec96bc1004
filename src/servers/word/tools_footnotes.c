/*
 * tools_footnotes.c - the real-footnote tools of office-word-mcp-server
 * 568d8d8a (core/footnotes.py, tools/footnote_tools.py): they edit the zip's
 * parts directly, not through python-docx - word/document.xml,
 * word/footnotes.xml (created with separators -1/0 when absent),
 * word/styles.xml (FootnoteReference / FootnoteText), the content types and
 * the document's relationships - and write the result to `output_filename`
 * or in place.
 *
 * Upstream's rules kept: paragraphs are every w:p in document order (table
 * cells included); a paragraph's text is all its w:t; new ids are the
 * lowest free from 2; the reference run goes after the paragraph's last run
 * or before its first run with text; deleting cleans "orphans" (every
 * footnote but -1 and 0 that nothing references - Word's own separators use
 * ids 0 and 1, so 1 goes too, as upstream does). Dict results are compact
 * JSON text plus structuredContent (FastMCP 2.x).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "servers/word/word.h"

#define CT_FOOTNOTES "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"


static const char MIN_FOOTNOTES[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<w:footnotes xmlns:w=\"" WD_NS_W "\">\n"
    "    <w:footnote w:type=\"separator\" w:id=\"-1\">\n        <w:p>\n            <w:pPr>\n"
    "                <w:spacing w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/>\n            </w:pPr>\n"
    "            <w:r>\n                <w:separator/>\n            </w:r>\n        </w:p>\n    </w:footnote>\n"
    "    <w:footnote w:type=\"continuationSeparator\" w:id=\"0\">\n        <w:p>\n            <w:pPr>\n"
    "                <w:spacing w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/>\n            </w:pPr>\n"
    "            <w:r>\n                <w:continuationSeparator/>\n            </w:r>\n        </w:p>\n"
    "    </w:footnote>\n</w:footnotes>";

/* ------------------------------------------------------------- helpers */

typedef struct nodes {
    xmlNodePtr *v;
    size_t n, cap;
} nodes;

static void push(nodes *s, xmlNodePtr n)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = mb_realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = n;
}

/* every descendant element w:local, in document order */
static void all_w(xmlNodePtr n, const char *local, nodes *out)
{
    for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (wd_is(c, local)) push(out, c);
        all_w(c, local, out);
    }
}

static char *all_t_text(xmlNodePtr p)
{
    nodes ts = {0};
    all_w(p, "t", &ts);
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (size_t i = 0; i < ts.n; i++)
        for (xmlNodePtr x = ts.v[i]->children; x; x = x->next)
            if (x->type == XML_TEXT_NODE || x->type == XML_CDATA_SECTION_NODE) mb_buf_puts(&b, (const char *)x->content);
    free(ts.v);
    return mb_buf_steal(&b);
}

static xmlNodePtr el(xmlNodePtr parent, xmlNsPtr w, const char *name)
{
    return xmlNewChild(parent, w, (const xmlChar *)name, NULL);
}

static void wv(xmlNodePtr n, xmlNsPtr w, const char *name, const char *v)
{
    xmlSetNsProp(n, w, (const xmlChar *)name, (const xmlChar *)v);
}

static const char *id_of(xmlNodePtr n)
{
    return wd_attr(n, "id");
}

/* dict result: compact JSON text and structuredContent */
static void dict_result(mb_mcp_result *res, json_t *d)
{
    char *t = json_dumps(d, JSON_COMPACT);
    mb_mcp_text(res, t ? t : "{}");
    free(t);
    mb_mcp_structured(res, json_incref(d));
}

static char *copy_to(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb");
    if (!in) return mb_py_os_error(errno, src);
    FILE *out = fopen(dst, "wb");
    if (!out) {
        fclose(in);
        return mb_py_os_error(errno, dst);
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
    fclose(in);
    fclose(out);
    return NULL;
}

/* ----------------------------------------------------------------- add */

static int has_fn_rel(const mb_ooxml_rel *rel, void *payload)
{
    if (strstr(rel->type, "footnotes")) *(int *)payload = 1;
    return 0;
}

typedef struct outcome {
    int ok;
    char *message;
    json_t *details; /* or NULL */
} outcome;

static outcome fail(char *msg) { return (outcome){0, msg, NULL}; }

static outcome add_robust(const char *f, const char *search, json_t *pindex, const char *text, const char *output,
                          const char *position)
{
    if ((!search || !*search) && !json_is_integer(pindex))
        return fail(mb_strdup("Must provide either search_text or paragraph_index"));
    if (search && *search && json_is_integer(pindex))
        return fail(mb_strdup("Cannot provide both search_text and paragraph_index"));
    if (!wd_exists(f)) return fail(mb_asprintf("File not found: %s", f));
    const char *working = output && *output ? output : f;
    if (output && *output && strcmp(output, f)) {
        char *e = copy_to(f, output);
        if (e) return fail(e);
    }
    mb_ooxml *pkg = NULL;
    mb_err err = {0};
    int sys = 0;
    outcome o = {0};
    if (mb_ooxml_open(f, NULL, &pkg, &sys, &err)) {
        o = fail(mb_asprintf("Error adding footnote: %s", sys ? strerror(sys) : "File is not a zip file"));
        goto out;
    }
    static const char *const NEED[] = {"word/document.xml", "[Content_Types].xml", "word/_rels/document.xml.rels"};
    for (int i = 0; i < 3; i++)
        if (!mb_ooxml_has(pkg, NEED[i])) {
            o = fail(mb_asprintf("Error adding footnote: \"There is no item named '%s' in the archive\"", NEED[i]));
            goto out;
        }
    if (!mb_ooxml_has(pkg, "word/footnotes.xml")) mb_ooxml_put(pkg, "word/footnotes.xml", MIN_FOOTNOTES, sizeof MIN_FOOTNOTES - 1);
    if (!mb_ooxml_has(pkg, "word/styles.xml")) {
        static const char S[] = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><w:styles xmlns:w=\"" WD_NS_W "\"/>";
        mb_ooxml_put(pkg, "word/styles.xml", S, sizeof S - 1);
    }
    xmlDocPtr doc, fn, st;
    if (mb_ooxml_xml(pkg, "word/document.xml", &doc, &err) || mb_ooxml_xml(pkg, "word/footnotes.xml", &fn, &err) ||
        mb_ooxml_xml(pkg, "word/styles.xml", &st, &err)) {
        o = fail(mb_asprintf("Error adding footnote: %s", err.msg));
        goto out;
    }
    xmlNodePtr droot = xmlDocGetRootElement(doc), froot = xmlDocGetRootElement(fn), sroot = xmlDocGetRootElement(st);
    xmlNsPtr w = xmlSearchNsByHref(doc, droot, (const xmlChar *)WD_NS_W);
    xmlNsPtr fw = xmlSearchNsByHref(fn, froot, (const xmlChar *)WD_NS_W);
    xmlNsPtr sw = xmlSearchNsByHref(st, sroot, (const xmlChar *)WD_NS_W);
    if (!w || !fw || !sw) {
        o = fail(mb_strdup("Error adding footnote: the parts are not WordprocessingML"));
        goto out;
    }
    nodes ps = {0};
    all_w(droot, "p", &ps);
    if (wd_is(droot, "p")) push(&ps, droot);
    xmlNodePtr target = NULL;
    if (search && *search) {
        for (size_t i = 0; i < ps.n && !target; i++) {
            char *t = all_t_text(ps.v[i]);
            if (strstr(t, search)) target = ps.v[i];
            free(t);
        }
        if (!target) o = fail(mb_asprintf("Text '%s' not found in document", search));
    } else {
        json_int_t i = json_integer_value(pindex);
        if (i >= (json_int_t)ps.n) o = fail(mb_asprintf("Paragraph index %lld out of range", (long long)i));
        else if (i < -(json_int_t)ps.n) o = fail(mb_strdup("Error adding footnote: list index out of range"));
        else target = ps.v[i < 0 ? (json_int_t)ps.n + i : i];
    }
    free(ps.v);
    if (!target) goto out;
    /* the lowest free id from 2 */
    nodes fns = {0};
    all_w(froot, "footnote", &fns);
    long id = 2;
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < fns.n; i++) {
            const char *v = id_of(fns.v[i]);
            char *end;
            if (v && strtol(v, &end, 10) == id && !*end && *v) {
                id++;
                again = 1;
            }
        }
        if (id > 32767) {
            free(fns.v);
            o = fail(mb_strdup("Error adding footnote: No available footnote IDs"));
            goto out;
        }
    }
    free(fns.v);
    char sid[24];
    snprintf(sid, sizeof sid, "%ld", id);
    /* where the reference goes */
    xmlNodePtr before = NULL;
    int at_end = 0;
    nodes runs = {0};
    all_w(target, "r", &runs);
    if (!strcmp(position, "after")) {
        if (runs.n) {
            xmlNodePtr last = runs.v[runs.n - 1];
            if (last->parent != target) {
                free(runs.v);
                o = fail(mb_strdup("Error adding footnote: list.index(x): x not in list"));
                goto out;
            }
            before = last->next; /* NULL: append */
        }
        at_end = !before;
    } else {
        xmlNodePtr first = NULL;
        for (size_t i = 0; i < runs.n && !first; i++)
            if (wd_child(runs.v[i], "t")) first = runs.v[i];
        if (first && first->parent != target) {
            free(runs.v);
            o = fail(mb_strdup("Error adding footnote: list.index(x): x not in list"));
            goto out;
        }
        before = first ? first : target->children;
        at_end = !before;
    }
    free(runs.v);
    xmlNodePtr ref = xmlNewDocNode(doc, w, (const xmlChar *)"r", NULL);
    wv(el(el(ref, w, "rPr"), w, "rStyle"), w, "val", "FootnoteReference");
    wv(el(ref, w, "footnoteReference"), w, "id", sid);
    if (at_end) xmlAddChild(target, ref);
    else xmlAddPrevSibling(before, ref);
    /* the footnote */
    xmlNodePtr note = el(froot, fw, "footnote");
    wv(note, fw, "id", sid);
    xmlNodePtr p = el(note, fw, "p");
    wv(el(el(p, fw, "pPr"), fw, "pStyle"), fw, "val", "FootnoteText");
    xmlNodePtr mr = el(p, fw, "r");
    wv(el(el(mr, fw, "rPr"), fw, "rStyle"), fw, "val", "FootnoteReference");
    el(mr, fw, "footnoteRef");
    xmlNodePtr sp = el(el(p, fw, "r"), fw, "t");
    xmlNodeSetSpacePreserve(sp, 1);
    xmlNodeAddContent(sp, (const xmlChar *)" ");
    xmlNodePtr tt = el(el(p, fw, "r"), fw, "t");
    xmlNodeAddContent(tt, (const xmlChar *)text);
    /* styles */
    int has_ref = 0, has_text = 0;
    nodes styles = {0};
    all_w(sroot, "style", &styles);
    for (size_t i = 0; i < styles.n; i++) {
        const char *v = wd_attr(styles.v[i], "styleId");
        if (v && !strcmp(v, "FootnoteReference")) has_ref = 1;
        if (v && !strcmp(v, "FootnoteText")) has_text = 1;
    }
    free(styles.v);
    if (!has_ref) {
        xmlNodePtr s = el(sroot, sw, "style");
        wv(s, sw, "type", "character"), wv(s, sw, "styleId", "FootnoteReference");
        wv(el(s, sw, "name"), sw, "val", "footnote reference");
        wv(el(s, sw, "basedOn"), sw, "val", "DefaultParagraphFont");
        wv(el(el(s, sw, "rPr"), sw, "vertAlign"), sw, "val", "superscript");
    }
    if (!has_text) {
        xmlNodePtr s = el(sroot, sw, "style");
        wv(s, sw, "type", "paragraph"), wv(s, sw, "styleId", "FootnoteText");
        wv(el(s, sw, "name"), sw, "val", "footnote text");
        wv(el(s, sw, "basedOn"), sw, "val", "Normal");
        wv(el(el(s, sw, "pPr"), sw, "sz"), sw, "val", "20");
    }
    mb_ooxml_touch(pkg, "word/document.xml");
    mb_ooxml_touch(pkg, "word/footnotes.xml");
    mb_ooxml_touch(pkg, "word/styles.xml");
    /* content type and relationship, when missing */
    const char *ct = mb_ooxml_ct_get(pkg, "word/footnotes.xml");
    if (!ct || strcmp(ct, CT_FOOTNOTES)) mb_ooxml_ct_override(pkg, "word/footnotes.xml", CT_FOOTNOTES, &err);
    int has_rel = 0;
    mb_ooxml_rels_each(pkg, "word/document.xml", has_fn_rel, &has_rel, &err);
    if (!has_rel) mb_ooxml_rel_add(pkg, "word/document.xml", WD_REL_BASE "footnotes", "footnotes.xml", NULL, &err);
    if (mb_ooxml_save_as(pkg, working, &err)) {
        o = fail(mb_asprintf("Error adding footnote: %s", err.msg));
        goto out;
    }
    o.ok = 1;
    o.message = mb_asprintf("Successfully added footnote (ID: %ld) to %s", id, working);
    o.details = json_pack("{s:i,s:s,s:[ss],s:b}", "footnote_id", (int)id, "location",
                          search && *search ? "search_text" : "paragraph_index", "styles_created",
                          "FootnoteReference", "FootnoteText", "coherence_verified", 1);
out:
    mb_ooxml_free(pkg);
    return o;
}

/* -------------------------------------------------------------- delete */

static outcome delete_robust(const char *f, json_int_t fid, const char *search, const char *output, int clean)
{
    if (!fid && (!search || !*search)) return fail(mb_strdup("Must provide either footnote_id or search_text"));
    if (!wd_exists(f)) return fail(mb_asprintf("File not found: %s", f));
    const char *working = output && *output ? output : f;
    if (output && *output && strcmp(output, f)) {
        char *e = copy_to(f, output);
        if (e) return fail(e);
    }
    mb_ooxml *pkg = NULL;
    mb_err err = {0};
    int sys = 0;
    outcome o = {0};
    xmlDocPtr doc, fn;
    if (mb_ooxml_open(f, NULL, &pkg, &sys, &err)) {
        o = fail(mb_asprintf("Error deleting footnote: %s", sys ? strerror(sys) : "File is not a zip file"));
        goto out;
    }
    if (!mb_ooxml_has(pkg, "word/document.xml")) {
        o = fail(mb_strdup("Error deleting footnote: \"There is no item named 'word/document.xml' in the archive\""));
        goto out;
    }
    if (!mb_ooxml_has(pkg, "word/footnotes.xml")) {
        o = fail(mb_strdup("No footnotes in document"));
        goto out;
    }
    if (mb_ooxml_xml(pkg, "word/document.xml", &doc, &err) || mb_ooxml_xml(pkg, "word/footnotes.xml", &fn, &err)) {
        o = fail(mb_asprintf("Error deleting footnote: %s", err.msg));
        goto out;
    }
    xmlNodePtr droot = xmlDocGetRootElement(doc), froot = xmlDocGetRootElement(fn);
    if (search && *search) {
        nodes ps = {0};
        all_w(droot, "p", &ps);
        for (size_t i = 0; i < ps.n; i++) {
            char *t = all_t_text(ps.v[i]);
            int hit = strstr(t, search) != NULL;
            free(t);
            if (!hit) continue;
            nodes refs = {0};
            all_w(ps.v[i], "footnoteReference", &refs);
            if (refs.n) {
                const char *v = id_of(refs.v[0]);
                char *end = NULL;
                long x = v ? strtol(v, &end, 10) : 0;
                free(refs.v);
                if (!v || *end || !*v) {
                    free(ps.v);
                    o = fail(mb_asprintf("Error deleting footnote: invalid literal for int() with base 10: '%s'", v ? v : ""));
                    goto out;
                }
                fid = x;
                break;
            }
            free(refs.v);
        }
        free(ps.v);
        if (!fid) {
            o = fail(mb_asprintf("No footnote found near text '%s'", search));
            goto out;
        }
    }
    char sid[24];
    snprintf(sid, sizeof sid, "%lld", (long long)fid);
    nodes refs = {0};
    all_w(droot, "footnoteReference", &refs);
    long removed = 0;
    for (size_t i = 0; i < refs.n; i++) {
        const char *v = id_of(refs.v[i]);
        if (!v || strcmp(v, sid)) continue;
        xmlNodePtr run = refs.v[i]->parent;
        if (run && wd_is(run, "r") && run->parent) {
            xmlUnlinkNode(run);
            xmlFreeNode(run);
            removed++;
        }
    }
    free(refs.v);
    if (!removed) {
        o = fail(mb_asprintf("Footnote %lld not found", (long long)fid));
        goto out;
    }
    nodes fns = {0};
    all_w(froot, "footnote", &fns);
    long content = 0;
    for (size_t i = 0; i < fns.n; i++) {
        const char *v = id_of(fns.v[i]);
        if (v && !strcmp(v, sid) && fns.v[i]->parent == froot) {
            xmlUnlinkNode(fns.v[i]);
            xmlFreeNode(fns.v[i]);
            fns.v[i] = NULL;
            content++;
        }
    }
    json_t *orphans = json_array();
    if (clean) {
        nodes left = {0};
        all_w(droot, "footnoteReference", &left);
        for (size_t i = 0; i < fns.n; i++) {
            if (!fns.v[i] || fns.v[i]->parent != froot) continue;
            const char *v = id_of(fns.v[i]);
            if (!v || !*v || !strcmp(v, "-1") || !strcmp(v, "0")) continue;
            int used = 0;
            for (size_t k = 0; k < left.n && !used; k++) {
                const char *r = id_of(left.v[k]);
                used = r && !strcmp(r, v);
            }
            if (used) continue;
            json_array_append_new(orphans, json_string(v));
            xmlUnlinkNode(fns.v[i]);
            xmlFreeNode(fns.v[i]);
        }
        free(left.v);
    }
    free(fns.v);
    mb_ooxml_touch(pkg, "word/document.xml");
    mb_ooxml_touch(pkg, "word/footnotes.xml");
    if (mb_ooxml_save_as(pkg, working, &err)) {
        json_decref(orphans);
        o = fail(mb_asprintf("Error deleting footnote: %s", err.msg));
        goto out;
    }
    o.ok = 1;
    size_t no = json_array_size(orphans);
    o.message = no ? mb_asprintf("Successfully deleted footnote %lld and %zu orphaned footnotes", (long long)fid, no)
                   : mb_asprintf("Successfully deleted footnote %lld", (long long)fid);
    o.details = json_pack("{s:I,s:i,s:i,s:o}", "footnote_id", (json_int_t)fid, "references_removed", (int)removed,
                          "content_removed", (int)content, "orphans_removed", orphans);
out:
    mb_ooxml_free(pkg);
    return o;
}

/* ------------------------------------------------------------ validate */

static int cmp_ids(const void *a, const void *b)
{
    long x = strtol(json_string_value(*(json_t *const *)a), NULL, 10);
    long y = strtol(json_string_value(*(json_t *const *)b), NULL, 10);
    return x < y ? -1 : x > y;
}

/* strings of `a` not in `b` (nor in the excluded separators when asked), sorted */
static json_t *difference(nodes *a, nodes *b, int skip_separators)
{
    json_t *seen = json_object(), *out = json_array();
    for (size_t i = 0; i < a->n; i++) {
        const char *v = id_of(a->v[i]);
        if (!v || !*v || json_object_get(seen, v)) continue;
        if (skip_separators && (!strcmp(v, "-1") || !strcmp(v, "0"))) continue;
        int in_b = 0;
        for (size_t k = 0; k < b->n && !in_b; k++) {
            const char *r = id_of(b->v[k]);
            in_b = r && !strcmp(r, v);
        }
        json_object_set_new(seen, v, json_true());
        if (!in_b) json_array_append_new(out, json_string(v));
    }
    json_decref(seen);
    size_t n = json_array_size(out);
    json_t **items = mb_calloc(n ? n : 1, sizeof *items);
    for (size_t i = 0; i < n; i++) items[i] = json_incref(json_array_get(out, i));
    qsort(items, n, sizeof *items, cmp_ids);
    json_array_clear(out);
    for (size_t i = 0; i < n; i++) json_array_append_new(out, items[i]);
    free(items);
    return out;
}

typedef struct relcount {
    int n;
} relcount;

static int count_fn_rel(const mb_ooxml_rel *rel, void *payload)
{
    if (strstr(rel->type, "footnotes")) ((relcount *)payload)->n++;
    return 0;
}

static int validate(const char *f, json_t **report, char **message)
{
    json_t *r = json_pack("{s:i,s:i,s:[],s:[],s:[],s:[],s:[],s:[]}", "total_references", 0, "total_content", 0,
                          "id_conflicts", "orphaned_content", "missing_references", "invalid_locations",
                          "missing_styles", "coherence_issues");
    *report = r;
    mb_ooxml *pkg = NULL;
    mb_err err = {0};
    int sys = 0, valid = 0;
    xmlDocPtr doc = NULL, fn = NULL, st = NULL;
    if (mb_ooxml_open(f, NULL, &pkg, &sys, &err)) {
        *message = mb_asprintf("Error validating document: %s", sys ? strerror(sys) : "File is not a zip file");
        return 0;
    }
    if (!mb_ooxml_has(pkg, "word/document.xml") || mb_ooxml_xml(pkg, "word/document.xml", &doc, &err)) {
        *message = mb_asprintf("Error validating document: %s",
                               *err.msg ? err.msg : "\"There is no item named 'word/document.xml' in the archive\"");
        goto out;
    }
    nodes refs = {0}, fns = {0};
    all_w(xmlDocGetRootElement(doc), "footnoteReference", &refs);
    int total_refs = 0;
    for (size_t i = 0; i < refs.n; i++)
        if (id_of(refs.v[i]) && *id_of(refs.v[i])) total_refs++;
    json_object_set_new(r, "total_references", json_integer(total_refs));
    int total_content = 0;
    if (mb_ooxml_has(pkg, "word/footnotes.xml")) {
        if (mb_ooxml_xml(pkg, "word/footnotes.xml", &fn, &err)) {
            *message = mb_asprintf("Error validating document: %s", err.msg);
            free(refs.v);
            goto out;
        }
        all_w(xmlDocGetRootElement(fn), "footnote", &fns);
        for (size_t i = 0; i < fns.n; i++) {
            const char *v = id_of(fns.v[i]);
            if (v && *v && strcmp(v, "-1") && strcmp(v, "0")) total_content++;
        }
        json_object_set_new(r, "total_content", json_integer(total_content));
        json_object_set_new(r, "orphaned_content", difference(&fns, &refs, 1));
        json_object_set_new(r, "missing_references", difference(&refs, &fns, 0));
    } else if (total_refs > 0) {
        json_array_append_new(json_object_get(r, "coherence_issues"), json_string("References exist but no footnotes.xml"));
    }
    free(refs.v);
    free(fns.v);
    if (mb_ooxml_has(pkg, "word/_rels/document.xml.rels")) {
        relcount rc = {0};
        mb_ooxml_rels_each(pkg, "word/document.xml", count_fn_rel, &rc, &err);
        if (total_content > 0 && rc.n == 0)
            json_array_append_new(json_object_get(r, "coherence_issues"), json_string("Missing footnotes relationship"));
        else if (rc.n > 1) {
            char *m = mb_asprintf("Multiple footnote relationships: %d", rc.n);
            json_array_append_new(json_object_get(r, "coherence_issues"), json_string(m));
            free(m);
        }
    }
    const char *ct = mb_ooxml_ct_get(pkg, "word/footnotes.xml");
    int override = ct && !strcmp(ct, CT_FOOTNOTES);
    if (total_content > 0 && !override)
        json_array_append_new(json_object_get(r, "coherence_issues"), json_string("Missing footnotes content type"));
    if (mb_ooxml_has(pkg, "word/styles.xml") && !mb_ooxml_xml(pkg, "word/styles.xml", &st, &err)) {
        nodes ss = {0};
        all_w(xmlDocGetRootElement(st), "style", &ss);
        int has_ref = 0, has_text = 0;
        for (size_t i = 0; i < ss.n; i++) {
            const char *v = wd_attr(ss.v[i], "styleId");
            if (v && !strcmp(v, "FootnoteReference")) has_ref = 1;
            if (v && !strcmp(v, "FootnoteText")) has_text = 1;
        }
        free(ss.v);
        if (!has_ref) json_array_append_new(json_object_get(r, "missing_styles"), json_string("FootnoteReference"));
        if (!has_text) json_array_append_new(json_object_get(r, "missing_styles"), json_string("FootnoteText"));
    }
    valid = !json_array_size(json_object_get(r, "id_conflicts")) &&
            !json_array_size(json_object_get(r, "orphaned_content")) &&
            !json_array_size(json_object_get(r, "missing_references")) &&
            !json_array_size(json_object_get(r, "invalid_locations")) &&
            !json_array_size(json_object_get(r, "coherence_issues"));
    *message = mb_strdup(valid ? "Document footnotes are valid" : "Document has footnote issues");
out:
    mb_ooxml_free(pkg);
    return valid;
}

/* ------------------------------------------------------------------ tools */

/* the str-returning wrappers: existence and writeability, then the message */
static int text_tool(mb_mcp_result *res, const char *f, const char *search, json_t *pindex, json_t *a,
                     const char *position)
{
    char *msg = NULL;
    if (!wd_exists(f)) mb_mcp_textf(res, "Document %s does not exist", f);
    else if (!wd_writeable(f, &msg)) mb_mcp_textf(res, "Cannot modify document: %s. Consider creating a copy first.", msg);
    else {
        outcome o = add_robust(f, search, pindex, wd_str(a, "footnote_text"), wd_str(a, "output_filename"), position);
        mb_mcp_text(res, o.message);
        free(o.message);
        json_decref(o.details);
    }
    free(msg);
    return 0;
}

int wd_t_add_footnote_after_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    text_tool(res, f, wd_str(a, "search_text"), NULL, a, "after");
    free(f);
    return 0;
}

int wd_t_add_footnote_before_text(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    text_tool(res, f, wd_str(a, "search_text"), NULL, a, "before");
    free(f);
    return 0;
}

int wd_t_add_footnote_enhanced(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    text_tool(res, f, NULL, json_object_get(a, "paragraph_index"), a, "after");
    free(f);
    return 0;
}

int wd_t_add_footnote_robust(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    char *msg = NULL;
    json_t *d;
    if (!wd_writeable(f, &msg)) {
        char *m = mb_asprintf("Cannot modify document: %s", msg);
        d = json_pack("{s:b,s:s,s:n}", "success", 0, "message", m, "details");
        free(m);
    } else {
        outcome o = add_robust(f, wd_str(a, "search_text"), json_object_get(a, "paragraph_index"),
                               wd_str(a, "footnote_text"), NULL, "after");
        d = json_pack("{s:b,s:s,s:o}", "success", o.ok, "message", o.message, "details",
                      o.details ? o.details : json_null());
        free(o.message);
    }
    dict_result(res, d);
    json_decref(d);
    free(msg);
    free(f);
    return 0;
}

int wd_t_delete_footnote_from_document(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    char *msg = NULL;
    if (!wd_exists(f)) mb_mcp_textf(res, "Document %s does not exist", f);
    else if (!wd_writeable(f, &msg)) mb_mcp_textf(res, "Cannot modify document: %s. Consider creating a copy first.", msg);
    else {
        outcome o = delete_robust(f, json_integer_value(json_object_get(a, "footnote_id")), wd_str(a, "search_text"),
                                  wd_str(a, "output_filename"), 1);
        mb_mcp_text(res, o.message);
        free(o.message);
        json_decref(o.details);
    }
    free(msg);
    free(f);
    return 0;
}

int wd_t_delete_footnote_robust(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    char *msg = NULL;
    json_t *d;
    if (!wd_writeable(f, &msg)) {
        char *m = mb_asprintf("Cannot modify document: %s", msg);
        d = json_pack("{s:b,s:s,s:n}", "success", 0, "message", m, "details");
        free(m);
    } else {
        outcome o = delete_robust(f, json_integer_value(json_object_get(a, "footnote_id")), wd_str(a, "search_text"),
                                  NULL, json_is_true(json_object_get(a, "clean_orphans")));
        d = json_pack("{s:b,s:s,s:o}", "success", o.ok, "message", o.message, "details",
                      o.details ? o.details : json_null());
        free(o.message);
    }
    dict_result(res, d);
    json_decref(d);
    free(msg);
    free(f);
    return 0;
}

int wd_t_validate_document_footnotes(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(wd_str(a, "filename"));
    json_t *d;
    if (!wd_exists(f)) {
        char *m = mb_asprintf("Document %s does not exist", f);
        d = json_pack("{s:b,s:s,s:{}}", "valid", 0, "message", m, "report");
        free(m);
    } else {
        json_t *report;
        char *message = NULL;
        int valid = validate(f, &report, &message);
        d = json_pack("{s:b,s:s,s:o}", "valid", valid, "message", message, "report", report);
        free(message);
    }
    dict_result(res, d);
    json_decref(d);
    free(f);
    return 0;
}
