/*
 * ref.c - A1 cell references the way upstream (openpyxl + excel-mcp-server's
 * cell_utils) reads them, small XML helpers, and Python text formatting.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/common/pyfmt.h"
#include "servers/excel/excel.h"

unsigned xl_col_index(const char *letters, size_t n)
{
    if (n == 0 || n > 3) return 0;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        int ch = toupper((unsigned char)letters[i]);
        if (ch < 'A' || ch > 'Z') return 0;
        v = v * 26 + (unsigned)(ch - 'A' + 1);
    }
    return v;
}

void xl_col_letter(unsigned col, char out[4])
{
    char tmp[4];
    int n = 0;
    while (col > 0 && n < 3) {
        unsigned r = (col - 1) % 26;
        tmp[n++] = (char)('A' + r);
        col = (col - 1) / 26;
    }
    for (int i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    out[n] = 0;
}

void xl_cell_name(unsigned row, unsigned col, char out[16])
{
    char l[4];
    xl_col_letter(col, l);
    snprintf(out, 16, "%s%u", l, row);
}

int xl_parse_cell(const char *ref, unsigned *row, unsigned *col)
{
    size_t i = 0;
    while (ref[i] && isalpha((unsigned char)ref[i]) && (unsigned char)ref[i] < 128) i++;
    size_t nl = i;
    if (nl == 0) return -1;
    size_t j = i;
    while (isdigit((unsigned char)ref[j])) j++;
    if (j == i) return -1;
    unsigned c = xl_col_index(ref, nl);
    if (!c) return -1;
    if (j - i > 9) return -1;
    unsigned long r = strtoul(ref + i, NULL, 10);
    *row = (unsigned)r;
    *col = c;
    return 0;
}

int xl_valid_cell_ref(const char *ref)
{
    if (!ref || !*ref) return 0;
    int have_col = 0, have_row = 0;
    for (const char *p = ref; *p; p++) {
        if (isalpha((unsigned char)*p)) {
            if (have_row) return 0;
            have_col = 1;
        } else if (isdigit((unsigned char)*p)) {
            have_row = 1;
        } else {
            return 0;
        }
    }
    return have_col && have_row;
}

int xl_parse_range(const char *ref, unsigned *r1, unsigned *c1, unsigned *r2, unsigned *c2)
{
    const char *colon = strchr(ref, ':');
    if (xl_parse_cell(ref, r1, c1)) return -1;
    if (!colon) {
        *r2 = *r1;
        *c2 = *c1;
        return 0;
    }
    return xl_parse_cell(colon + 1, r2, c2);
}

/* ------------------------------------------------------------- XML */

int xl_is(xmlNodePtr n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

xmlNodePtr xl_child(xmlNodePtr parent, const char *name)
{
    for (xmlNodePtr n = parent ? parent->children : NULL; n; n = n->next)
        if (xl_is(n, name)) return n;
    return NULL;
}

xmlNodePtr xl_new_el(xmlNodePtr parent_for_ns, const char *name)
{
    return xmlNewNode(parent_for_ns ? parent_for_ns->ns : NULL, BAD_CAST name);
}

const char *xl_attr(xmlNodePtr n, const char *name)
{
    for (xmlAttrPtr a = n ? n->properties : NULL; a; a = a->next) {
        if (strcmp((const char *)a->name, name)) continue;
        if (a->ns && strcmp(name, "id")) continue; /* only r:id is namespaced */
        return a->children && a->children->content ? (const char *)a->children->content : "";
    }
    return NULL;
}

/* CT_Worksheet's sequence, for inserting children where the schema wants them. */
static const char *const WS_ORDER[] = {
    "sheetPr", "dimension", "sheetViews", "sheetFormatPr", "cols", "sheetData", "sheetCalcPr",
    "sheetProtection", "protectedRanges", "scenarios", "autoFilter", "sortState",
    "dataConsolidate", "customSheetViews", "mergeCells", "phoneticPr", "conditionalFormatting",
    "dataValidations", "hyperlinks", "printOptions", "pageMargins", "pageSetup", "headerFooter",
    "rowBreaks", "colBreaks", "customProperties", "cellWatches", "ignoredErrors", "smartTags",
    "drawing", "legacyDrawing", "legacyDrawingHF", "drawingHF", "picture", "oleObjects",
    "controls", "webPublishItems", "tableParts", "extLst", NULL,
};

static int ws_rank(const char *name)
{
    for (int i = 0; WS_ORDER[i]; i++)
        if (!strcmp(WS_ORDER[i], name)) return i;
    return 1000;
}

void xl_ws_insert(xmlNodePtr ws, xmlNodePtr child)
{
    int mine = ws_rank((const char *)child->name);
    for (xmlNodePtr n = ws->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) continue;
        /* conditionalFormatting repeats: go after the existing ones */
        if (ws_rank((const char *)n->name) > mine) {
            xmlAddPrevSibling(n, child);
            return;
        }
    }
    xmlAddChild(ws, child);
}

/* ------------------------------------------------------------ Python */

void xl_py_float(mb_buf *out, double v) { mb_py_float_str(out, v); }

void xl_py_repr(mb_buf *out, const char *s) { mb_py_repr_str(out, s, strlen(s)); }
