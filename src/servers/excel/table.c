/*
 * table.c - Excel tables (ListObjects) as openpyxl writes them: a table part
 * xl/tables/tableN.xml (autoFilter, one tableColumn per column named after
 * its header cell, tableStyleInfo), its content type, the worksheet's
 * relationship to it and the worksheet's <tableParts> entry. Used by
 * create_table and create_pivot_table.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/excel/excel.h"

#define XL_CT_TABLE "application/vnd.openxmlformats-officedocument.spreadsheetml.table+xml"

/* Calls back for each table part of the package (root element given). */
static void each_table(xl_book *b, void (*fn)(xmlNodePtr t, void *p), void *p)
{
    for (size_t i = 0; i < mb_ooxml_count(b->pkg); i++) {
        const char *name = mb_ooxml_name(b->pkg, i);
        const char *ct = mb_ooxml_ct_get(b->pkg, name);
        if (!ct || strcmp(ct, XL_CT_TABLE)) continue;
        xmlDocPtr doc = NULL;
        mb_err err = {0};
        if (mb_ooxml_xml(b->pkg, name, &doc, &err)) continue; /* unreadable: not ours to judge */
        xmlNodePtr root = xmlDocGetRootElement(doc);
        if (root) fn(root, p);
    }
}

typedef struct taken_ctx {
    const char *name;
    int found;
    unsigned maxid;
} taken_ctx;

static void check_one(xmlNodePtr t, void *p)
{
    taken_ctx *c = p;
    const char *n = xl_attr(t, "displayName");
    const char *n2 = xl_attr(t, "name");
    if (c->name && ((n && !strcasecmp(n, c->name)) || (n2 && !strcasecmp(n2, c->name))))
        c->found = 1;
    const char *id = xl_attr(t, "id");
    unsigned v = id ? (unsigned)strtoul(id, NULL, 10) : 0;
    if (v > c->maxid) c->maxid = v;
}

int xl_defined_name_exists(xl_book *b, const char *name)
{
    xmlNodePtr names = xl_child(xmlDocGetRootElement(b->wb), "definedNames");
    for (xmlNodePtr d = names ? names->children : NULL; d; d = d->next) {
        const char *n = xl_is(d, "definedName") ? xl_attr(d, "name") : NULL;
        if (n && !strcmp(n, name)) return 1;
    }
    return 0;
}

int xl_table_name_taken(xl_book *b, const char *name)
{
    taken_ctx c = {.name = name};
    each_table(b, check_one, &c);
    if (c.found) return 1;
    /* openpyxl lower-cases the name before looking among defined names */
    char *low = mb_strdup(name);
    for (char *q = low; *q; q++)
        if (*q >= 'A' && *q <= 'Z') *q = (char)(*q + 32);
    int r = xl_defined_name_exists(b, low);
    free(low);
    return r;
}

void xl_random_name(const char *prefix, char *out, size_t n)
{
    unsigned char raw[4] = {0};
    mb_err err = {0};
    mb_random_bytes(raw, sizeof raw, &err);
    snprintf(out, n, "%s%02x%02x%02x%02x", prefix, raw[0], raw[1], raw[2], raw[3]);
}

/* Python's str() of a header cell's value. */
static char *header_text(xl_book *b, xl_sheet *s, unsigned row, unsigned col)
{
    json_t *v = xl_cell_value(b, s, xl_cell_get(s, row, col), row, col);
    mb_buf t = {0};
    if (json_is_string(v)) mb_buf_puts(&t, json_string_value(v));
    else if (json_is_integer(v)) mb_buf_printf(&t, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) xl_py_float(&t, json_real_value(v));
    else if (json_is_true(v)) mb_buf_puts(&t, "True");
    else if (json_is_false(v)) mb_buf_puts(&t, "False");
    else mb_buf_puts(&t, "None");
    json_decref(v);
    if (!t.data) mb_buf_puts(&t, "");
    return mb_buf_steal(&t);
}

int xl_table_add(xl_book *b, xl_sheet *s, unsigned r1, unsigned c1, unsigned r2, unsigned c2,
                 const char *name, const char *style, int col_stripes, char **why)
{
    char a[16], z[16], ref[40];
    xl_cell_name(r1, c1, a);
    xl_cell_name(r2, c2, z);
    if (r1 == r2 && c1 == c2) snprintf(ref, sizeof ref, "%s", a);
    else snprintf(ref, sizeof ref, "%s:%s", a, z);

    taken_ctx c = {0};
    each_table(b, check_one, &c);
    char idbuf[16];
    snprintf(idbuf, sizeof idbuf, "%u", c.maxid + 1);

    xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
    xmlNodePtr t = xmlNewNode(NULL, BAD_CAST "table");
    xmlNsPtr ns = xmlNewNs(t, BAD_CAST XL_NS_MAIN, NULL);
    xmlSetNs(t, ns);
    xmlDocSetRootElement(doc, t);
    xmlSetProp(t, BAD_CAST "id", BAD_CAST idbuf);
    xmlSetProp(t, BAD_CAST "name", BAD_CAST name);
    xmlSetProp(t, BAD_CAST "displayName", BAD_CAST name);
    xmlSetProp(t, BAD_CAST "ref", BAD_CAST ref);
    xmlNodePtr af = xmlNewChild(t, ns, BAD_CAST "autoFilter", NULL);
    xmlSetProp(af, BAD_CAST "ref", BAD_CAST ref);
    xmlNodePtr cols = xmlNewChild(t, ns, BAD_CAST "tableColumns", NULL);
    char buf[24];
    snprintf(buf, sizeof buf, "%u", c2 - c1 + 1);
    xmlSetProp(cols, BAD_CAST "count", BAD_CAST buf);
    for (unsigned col = c1; col <= c2; col++) {
        xmlNodePtr tc = xmlNewChild(cols, ns, BAD_CAST "tableColumn", NULL);
        snprintf(buf, sizeof buf, "%u", col - c1 + 1);
        xmlSetProp(tc, BAD_CAST "id", BAD_CAST buf);
        char *h = header_text(b, s, r1, col);
        xmlSetProp(tc, BAD_CAST "name", BAD_CAST h);
        free(h);
    }
    xmlNodePtr si = xmlNewChild(t, ns, BAD_CAST "tableStyleInfo", NULL);
    xmlSetProp(si, BAD_CAST "name", BAD_CAST style);
    xmlSetProp(si, BAD_CAST "showFirstColumn", BAD_CAST "0");
    xmlSetProp(si, BAD_CAST "showLastColumn", BAD_CAST "0");
    xmlSetProp(si, BAD_CAST "showRowStripes", BAD_CAST "1");
    xmlSetProp(si, BAD_CAST "showColumnStripes", BAD_CAST(col_stripes ? "1" : "0"));

    mb_err err = {0};
    char *part = mb_ooxml_unique_name(b->pkg, "xl/tables/table%u.xml");
    mb_ooxml_put_xml(b->pkg, part, doc);
    char *target = mb_ooxml_relative(s->part, part);
    char *rid = NULL;
    int rc = mb_ooxml_ct_override(b->pkg, part, XL_CT_TABLE, &err);
    if (!rc) rc = mb_ooxml_rel_add(b->pkg, s->part, XL_REL_BASE "table", target, &rid, &err);
    free(target);
    free(part);
    if (rc) {
        *why = mb_strdup(err.msg);
        return rc;
    }
    xmlNodePtr ws = xmlDocGetRootElement(s->doc);
    xmlNodePtr tp = xl_child(ws, "tableParts");
    if (!tp) {
        tp = xl_new_el(ws, "tableParts");
        xl_ws_insert(ws, tp);
    }
    xmlNodePtr el = xmlNewChild(tp, ws->ns, BAD_CAST "tablePart", NULL);
    xmlNsPtr rns = xmlSearchNsByHref(s->doc, ws, BAD_CAST XL_NS_R);
    if (!rns) rns = xmlNewNs(ws, BAD_CAST XL_NS_R, BAD_CAST "r");
    xmlSetNsProp(el, rns, BAD_CAST "id", BAD_CAST rid);
    free(rid);
    unsigned n = 0;
    for (xmlNodePtr k = tp->children; k; k = k->next) n += xl_is(k, "tablePart");
    snprintf(buf, sizeof buf, "%u", n);
    xmlSetProp(tp, BAD_CAST "count", BAD_CAST buf);
    s->dirty = 1;
    return MB_OK;
}
