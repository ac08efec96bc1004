/*
 * opc.c - Open Packaging Conventions helpers: [Content_Types].xml entries,
 * relationship parts (_rels/NAME.rels), part-name arithmetic.
 *
 * Relationship targets are URIs relative to the directory of their source
 * part; mb_ooxml_resolve/mb_ooxml_relative convert between them and part
 * names. Relationship ids are "rId" + a number one past the highest in use.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ooxml/ooxml_int.h"

/* ------------------------------------------------------------ part names */

char *mb_ooxml_rels_name(const char *source)
{
    if (source[0] == '/') source++;
    if (!*source) return mb_strdup("_rels/.rels");
    const char *slash = strrchr(source, '/');
    if (!slash) return mb_asprintf("_rels/%s.rels", source);
    return mb_asprintf("%.*s/_rels/%s.rels", (int)(slash - source), source, slash + 1);
}

/* Appends the '/'-separated segments of `path` to parts[], resolving "." and "..". */
static void push_segments(char **segs, size_t *n, char *path)
{
    char *save = NULL;
    for (char *s = strtok_r(path, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        if (!strcmp(s, ".")) continue;
        if (!strcmp(s, "..")) {
            if (*n) (*n)--;
            continue;
        }
        segs[(*n)++] = s;
    }
}

char *mb_ooxml_resolve(const char *source, const char *target)
{
    size_t cap = strlen(source) + strlen(target) + 2;
    char **segs = mb_calloc(cap, sizeof *segs);
    size_t n = 0;
    char *a = NULL, *b = mb_strdup(target);
    if (target[0] != '/') {
        a = mb_strdup(source[0] == '/' ? source + 1 : source);
        char *slash = strrchr(a, '/');
        if (slash) {
            *slash = 0;
            push_segments(segs, &n, a);
        }
    }
    push_segments(segs, &n, b);
    mb_buf out = {0};
    for (size_t i = 0; i < n; i++) {
        if (i) mb_buf_putc(&out, '/');
        mb_buf_puts(&out, segs[i]);
    }
    if (!out.data) mb_buf_puts(&out, "");
    free(a), free(b), free(segs);
    return mb_buf_steal(&out);
}

char *mb_ooxml_relative(const char *source, const char *part)
{
    if (source[0] == '/') source++;
    if (part[0] == '/') part++;
    /* common directory prefix */
    const char *sdir_end = strrchr(source, '/');
    size_t sdir = sdir_end ? (size_t)(sdir_end - source) + 1 : 0;
    size_t common = 0;
    for (size_t i = 0; i < sdir && part[i] == source[i]; i++)
        if (source[i] == '/') common = i + 1;
    mb_buf out = {0};
    for (size_t i = common; i < sdir; i++)
        if (source[i] == '/') mb_buf_puts(&out, "../");
    mb_buf_puts(&out, part + common);
    return mb_buf_steal(&out);
}

char *mb_ooxml_unique_name(const mb_ooxml *pkg, const char *pattern)
{
    for (unsigned i = 1;; i++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        char *name = mb_asprintf(pattern, i);
#pragma GCC diagnostic pop
        if (!mb_ooxml__find(pkg, name)) return name;
        free(name);
    }
}

/* --------------------------------------------------------- content types */

static int ct_doc(mb_ooxml *pkg, int create, xmlDocPtr *out, mb_err *err)
{
    if (!mb_ooxml_has(pkg, MB_OOXML_CT_PART)) {
        if (!create) {
            *out = NULL;
            return MB_OK;
        }
        xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
        doc->standalone = 1;
        xmlNodePtr root = xmlNewNode(NULL, BAD_CAST "Types");
        xmlSetNs(root, xmlNewNs(root, BAD_CAST MB_OOXML_NS_CT, NULL));
        xmlDocSetRootElement(doc, root);
        mb_ooxml_put_xml(pkg, MB_OOXML_CT_PART, doc);
    }
    return mb_ooxml_xml(pkg, MB_OOXML_CT_PART, out, err);
}

static int is_el(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* attribute value (a libxml2 copy, xmlFree it) */
static xmlChar *attr(xmlNodePtr n, const char *name) { return xmlGetProp(n, BAD_CAST name); }

const char *mb_ooxml_ct_get(mb_ooxml *pkg, const char *name)
{
    xmlDocPtr doc;
    if (ct_doc(pkg, 0, &doc, NULL) || !doc) return NULL;
    if (name[0] == '/') name++;
    const char *dot = strrchr(name, '.');
    const char *found_default = NULL;
    for (xmlNodePtr n = xmlDocGetRootElement(doc)->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) continue;
        xmlAttrPtr a = NULL;
        if (is_el(n, "Override")) {
            a = xmlHasProp(n, BAD_CAST "PartName");
            const xmlChar *v = a && a->children ? a->children->content : NULL;
            if (v && v[0] == '/' && !strcasecmp((const char *)v + 1, name)) {
                xmlAttrPtr t = xmlHasProp(n, BAD_CAST "ContentType");
                return t && t->children ? (const char *)t->children->content : NULL;
            }
        } else if (is_el(n, "Default") && dot) {
            a = xmlHasProp(n, BAD_CAST "Extension");
            const xmlChar *v = a && a->children ? a->children->content : NULL;
            if (v && !strcasecmp((const char *)v, dot + 1)) {
                xmlAttrPtr t = xmlHasProp(n, BAD_CAST "ContentType");
                if (t && t->children) found_default = (const char *)t->children->content;
            }
        }
    }
    return found_default;
}

int mb_ooxml_ct_override(mb_ooxml *pkg, const char *name, const char *type, mb_err *err)
{
    xmlDocPtr doc;
    int rc = ct_doc(pkg, 1, &doc, err);
    if (rc) return rc;
    if (name[0] == '/') name++;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    for (xmlNodePtr n = root->children; n; n = n->next) {
        if (!is_el(n, "Override")) continue;
        xmlChar *v = attr(n, "PartName");
        int same = v && v[0] == '/' && !strcasecmp((const char *)v + 1, name);
        xmlFree(v);
        if (same) {
            xmlSetProp(n, BAD_CAST "ContentType", BAD_CAST type);
            mb_ooxml_touch(pkg, MB_OOXML_CT_PART);
            return MB_OK;
        }
    }
    xmlNodePtr el = xmlNewChild(root, root->ns, BAD_CAST "Override", NULL);
    char *pn = mb_asprintf("/%s", name);
    xmlSetProp(el, BAD_CAST "PartName", BAD_CAST pn);
    free(pn);
    xmlSetProp(el, BAD_CAST "ContentType", BAD_CAST type);
    mb_ooxml_touch(pkg, MB_OOXML_CT_PART);
    return MB_OK;
}

int mb_ooxml_ct_default(mb_ooxml *pkg, const char *ext, const char *type, mb_err *err)
{
    xmlDocPtr doc;
    int rc = ct_doc(pkg, 1, &doc, err);
    if (rc) return rc;
    xmlNodePtr root = xmlDocGetRootElement(doc), last_default = NULL;
    for (xmlNodePtr n = root->children; n; n = n->next) {
        if (!is_el(n, "Default")) continue;
        last_default = n;
        xmlChar *v = attr(n, "Extension");
        int same = v && !strcasecmp((const char *)v, ext);
        xmlFree(v);
        if (same) return MB_OK;
    }
    xmlNodePtr el = xmlNewNode(root->ns, BAD_CAST "Default");
    xmlSetProp(el, BAD_CAST "Extension", BAD_CAST ext);
    xmlSetProp(el, BAD_CAST "ContentType", BAD_CAST type);
    /* Defaults come before Overrides, as Office writes them */
    if (last_default) xmlAddNextSibling(last_default, el);
    else if (root->children) xmlAddPrevSibling(root->children, el);
    else xmlAddChild(root, el);
    mb_ooxml_touch(pkg, MB_OOXML_CT_PART);
    return MB_OK;
}

int mb_ooxml_ct_remove(mb_ooxml *pkg, const char *name, mb_err *err)
{
    xmlDocPtr doc;
    int rc = ct_doc(pkg, 0, &doc, err);
    if (rc || !doc) return rc;
    if (name[0] == '/') name++;
    for (xmlNodePtr n = xmlDocGetRootElement(doc)->children, next; n; n = next) {
        next = n->next;
        if (!is_el(n, "Override")) continue;
        xmlChar *v = attr(n, "PartName");
        int same = v && v[0] == '/' && !strcasecmp((const char *)v + 1, name);
        xmlFree(v);
        if (same) {
            xmlUnlinkNode(n);
            xmlFreeNode(n);
            mb_ooxml_touch(pkg, MB_OOXML_CT_PART);
        }
    }
    return MB_OK;
}

/* --------------------------------------------------------- relationships */

static int rels_doc(mb_ooxml *pkg, const char *source, int create, xmlDocPtr *out, char **out_name,
                    mb_err *err)
{
    char *name = mb_ooxml_rels_name(source);
    *out = NULL;
    int rc = MB_OK;
    if (!mb_ooxml_has(pkg, name)) {
        if (!create) goto out;
        xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
        doc->standalone = 1;
        xmlNodePtr root = xmlNewNode(NULL, BAD_CAST "Relationships");
        xmlSetNs(root, xmlNewNs(root, BAD_CAST MB_OOXML_NS_RELS, NULL));
        xmlDocSetRootElement(doc, root);
        mb_ooxml_put_xml(pkg, name, doc);
        rc = mb_ooxml_ct_default(pkg, "rels",
                                 "application/vnd.openxmlformats-package.relationships+xml", err);
        if (rc) goto out;
    }
    rc = mb_ooxml_xml(pkg, name, out, err);
out:
    if (out_name && !rc) *out_name = name;
    else free(name);
    return rc;
}

int mb_ooxml_rels_each(mb_ooxml *pkg, const char *source,
                       int (*fn)(const mb_ooxml_rel *rel, void *payload), void *payload,
                       mb_err *err)
{
    xmlDocPtr doc;
    int rc = rels_doc(pkg, source, 0, &doc, NULL, err);
    if (rc || !doc) return rc;
    for (xmlNodePtr n = xmlDocGetRootElement(doc)->children; n; n = n->next) {
        if (!is_el(n, "Relationship")) continue;
        xmlChar *id = attr(n, "Id"), *type = attr(n, "Type"), *target = attr(n, "Target"),
                *mode = attr(n, "TargetMode");
        mb_ooxml_rel rel = {
            .id = id ? (const char *)id : "",
            .type = type ? (const char *)type : "",
            .target = target ? (const char *)target : "",
            .external = mode && !strcmp((const char *)mode, "External"),
        };
        int r = fn(&rel, payload);
        xmlFree(id), xmlFree(type), xmlFree(target), xmlFree(mode);
        if (r) return r;
    }
    return MB_OK;
}

typedef struct find_ctx {
    const char *id;
    char *target;
    int external;
} find_ctx;

static int find_rel(const mb_ooxml_rel *rel, void *payload)
{
    find_ctx *f = payload;
    if (strcmp(rel->id, f->id)) return 0;
    f->target = mb_strdup(rel->target);
    f->external = rel->external;
    return 1;
}

char *mb_ooxml_rel_part(mb_ooxml *pkg, const char *source, const char *id)
{
    find_ctx f = {.id = id};
    if (mb_ooxml_rels_each(pkg, source, find_rel, &f, NULL) != 1 || f.external) {
        free(f.target);
        return NULL;
    }
    char *part = mb_ooxml_resolve(source, f.target);
    free(f.target);
    return part;
}

int mb_ooxml_rel_add(mb_ooxml *pkg, const char *source, const char *type, const char *target,
                     char **out_id, mb_err *err)
{
    xmlDocPtr doc;
    char *name = NULL;
    int rc = rels_doc(pkg, source, 1, &doc, &name, err);
    if (rc) return rc;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    unsigned long max = 0;
    for (xmlNodePtr n = root->children; n; n = n->next) {
        if (!is_el(n, "Relationship")) continue;
        xmlChar *id = attr(n, "Id");
        if (id && !strncmp((const char *)id, "rId", 3)) {
            char *end;
            unsigned long v = strtoul((const char *)id + 3, &end, 10);
            if (!*end && v > max) max = v;
        }
        xmlFree(id);
    }
    char *id = mb_asprintf("rId%lu", max + 1);
    xmlNodePtr el = xmlNewChild(root, root->ns, BAD_CAST "Relationship", NULL);
    xmlSetProp(el, BAD_CAST "Id", BAD_CAST id);
    xmlSetProp(el, BAD_CAST "Type", BAD_CAST type);
    xmlSetProp(el, BAD_CAST "Target", BAD_CAST target);
    mb_ooxml_touch(pkg, name);
    free(name);
    if (out_id) *out_id = id;
    else free(id);
    return MB_OK;
}

int mb_ooxml_rel_remove(mb_ooxml *pkg, const char *source, const char *id, mb_err *err)
{
    xmlDocPtr doc;
    char *name = NULL;
    int rc = rels_doc(pkg, source, 0, &doc, &name, err);
    if (rc || !doc) {
        free(name);
        return rc;
    }
    for (xmlNodePtr n = xmlDocGetRootElement(doc)->children, next; n; n = next) {
        next = n->next;
        if (!is_el(n, "Relationship")) continue;
        xmlChar *v = attr(n, "Id");
        int same = v && !strcmp((const char *)v, id);
        xmlFree(v);
        if (same) {
            xmlUnlinkNode(n);
            xmlFreeNode(n);
            mb_ooxml_touch(pkg, name);
        }
    }
    free(name);
    return MB_OK;
}
