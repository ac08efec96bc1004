/*
 * book.c - the workbook model: opening a package as a workbook (sheets,
 * shared strings), creating a new one, indexing a worksheet's rows and cells
 * for lookup, merged ranges, and saving (after a value change, with what
 * openpyxl's save does to formula results: dropped, recalculated on load).
 *
 * A worksheet is indexed once when first used: its <row>s sorted by number,
 * each with its <c>s sorted by column, pointing at the DOM nodes. Lookups are
 * binary searches; new rows and cells are inserted into the DOM at their
 * place so the XML stays in the order Excel requires.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/excel/excel.h"

/* ---------------------------------------------------------------- open */

static const char *const SUPPORTED[] = {".xlsx", ".xlsm", ".xltx", ".xltm", NULL};

static char *format_error(const char *path, const char *shown)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot && slash && dot < slash) dot = NULL;
    char ext[64] = "";
    if (dot) {
        snprintf(ext, sizeof ext, "%s", dot);
        for (char *p = ext; *p; p++)
            if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    }
    for (int i = 0; SUPPORTED[i]; i++)
        if (!strcmp(ext, SUPPORTED[i])) return NULL;
    (void)shown;
    if (!strcmp(ext, ".xls"))
        return mb_strdup("openpyxl does not support the old .xls file format, please use xlrd to "
                         "read this file, or convert it to the more recent .xlsx file format.");
    if (!strcmp(ext, ".xlsb"))
        return mb_strdup("openpyxl does not support binary format .xlsb, please convert this file "
                         "to .xlsx format if you want to open it with openpyxl");
    return mb_asprintf("openpyxl does not support %s file format, please check you can open it "
                       "with Excel first. Supported formats are: .xlsx,.xlsm,.xltx,.xltm",
                       ext);
}

typedef struct find_type {
    const char *suffix;
    char *target;
} find_type;

static int rel_by_type(const mb_ooxml_rel *rel, void *payload)
{
    find_type *f = payload;
    if (!mb_str_has_suffix(rel->type, f->suffix)) return 0;
    f->target = mb_strdup(rel->target);
    return 1;
}

static int load_sheets(xl_book *b, char **why)
{
    xmlNodePtr root = xmlDocGetRootElement(b->wb);
    xmlNodePtr pr = xl_child(root, "workbookPr");
    const char *d1904 = pr ? xl_attr(pr, "date1904") : NULL;
    b->date1904 = d1904 && (!strcmp(d1904, "1") || !strcasecmp(d1904, "true"));
    xmlNodePtr views = xl_child(root, "bookViews");
    xmlNodePtr view = views ? xl_child(views, "workbookView") : NULL;
    const char *tab = view ? xl_attr(view, "activeTab") : NULL;
    b->active = tab ? atoi(tab) : 0;
    xmlNodePtr sheets = xl_child(root, "sheets");
    size_t n = 0;
    for (xmlNodePtr s = sheets ? sheets->children : NULL; s; s = s->next) n += xl_is(s, "sheet");
    b->sheets = mb_calloc(n ? n : 1, sizeof *b->sheets);
    for (xmlNodePtr s = sheets ? sheets->children : NULL; s; s = s->next) {
        if (!xl_is(s, "sheet")) continue;
        xl_sheet *sh = &b->sheets[b->nsheets++];
        const char *name = xl_attr(s, "name");
        const char *rid = xl_attr(s, "id");
        sh->name = mb_strdup(name ? name : "");
        sh->rid = mb_strdup(rid ? rid : "");
        sh->entry = s;
        sh->part = rid ? mb_ooxml_rel_part(b->pkg, b->wb_part, rid) : NULL;
        const char *ct = sh->part ? mb_ooxml_ct_get(b->pkg, sh->part) : NULL;
        sh->is_worksheet = sh->part && mb_ooxml_has(b->pkg, sh->part) &&
                           (!ct || strstr(ct, "worksheet+xml") || strstr(ct, "sheet.main+xml") ||
                            strstr(ct, "template.main+xml"));
    }
    if (b->active < 0 || (size_t)b->active >= b->nsheets) b->active = 0;
    (void)why;
    return MB_OK;
}

int xl_book_open(const char *path, const char *shown, xl_book **out, char **why)
{
    *out = NULL;
    char *fe = format_error(path, shown);
    if (fe) {
        *why = fe;
        return MB_EINVAL;
    }
    mb_err err = {0};
    mb_ooxml *pkg = NULL;
    int sys_errno = 0;
    int rc = mb_ooxml_open(path, NULL, &pkg, &sys_errno, &err);
    if (rc) {
        if (sys_errno) {
            *why = mb_py_os_error(sys_errno, shown);
        } else if (rc == MB_EINVAL && strstr(err.msg, "not a zip archive")) {
            *why = mb_strdup("File is not a zip file");
        } else {
            *why = mb_strdup(err.msg);
        }
        return rc;
    }
    xl_book *b = mb_calloc(1, sizeof *b);
    b->pkg = pkg;
    b->path = mb_strdup(path);
    find_type f = {.suffix = "/officeDocument"};
    mb_ooxml_rels_each(pkg, "", rel_by_type, &f, NULL);
    b->wb_part = f.target ? mb_ooxml_resolve("", f.target) : mb_strdup("xl/workbook.xml");
    free(f.target);
    rc = mb_ooxml_xml(pkg, b->wb_part, &b->wb, &err);
    if (rc) {
        *why = mb_asprintf("%s is not a workbook: %s", shown, err.msg);
        xl_book_free(b);
        return MB_EINVAL;
    }
    rc = load_sheets(b, why);
    if (rc) {
        xl_book_free(b);
        return rc;
    }
    *out = b;
    return MB_OK;
}

static void free_sheet(xl_sheet *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->rows[i].cells);
    free(s->rows);
    free(s->name);
    free(s->rid);
    free(s->part);
}

void xl_book_free(xl_book *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->nsheets; i++) free_sheet(&b->sheets[i]);
    free(b->sheets);
    for (size_t i = 0; i < b->nsst; i++) free(b->sst[i]);
    free(b->sst);
    free(b->xf_fmt);
    json_decref(b->fmts);
    free(b->styles_part);
    free(b->wb_part);
    free(b->path);
    mb_ooxml_free(b->pkg);
    free(b);
}

/* --------------------------------------------------------------- new */

static const char CT_XML[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
    "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
    "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
    "<Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>"
    "<Override PartName=\"/xl/styles.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>"
    "<Override PartName=\"/docProps/core.xml\" ContentType=\"application/vnd.openxmlformats-package.core-properties+xml\"/>"
    "<Override PartName=\"/docProps/app.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.extended-properties+xml\"/>"
    "</Types>";

static const char ROOT_RELS[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
    "<Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"xl/workbook.xml\"/>"
    "<Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties\" Target=\"docProps/core.xml\"/>"
    "<Relationship Id=\"rId3\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties\" Target=\"docProps/app.xml\"/>"
    "</Relationships>";

static const char APP_XML[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties\" "
    "xmlns:vt=\"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes\">"
    "<Application>Microsoft Excel</Application><DocSecurity>0</DocSecurity><ScaleCrop>false</ScaleCrop>"
    "</Properties>";

static const char CORE_XML_FMT[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" "
    "xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:dcterms=\"http://purl.org/dc/terms/\" "
    "xmlns:dcmitype=\"http://purl.org/dc/dcmitype/\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">"
    "<dc:creator>openpyxl</dc:creator>"
    "<dcterms:created xsi:type=\"dcterms:W3CDTF\">%s</dcterms:created>"
    "<dcterms:modified xsi:type=\"dcterms:W3CDTF\">%s</dcterms:modified>"
    "</cp:coreProperties>";

static const char WB_XML[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<workbook xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">"
    "<workbookPr/><bookViews><workbookView activeTab=\"0\"/></bookViews><sheets/>"
    "<calcPr calcId=\"124519\" fullCalcOnLoad=\"1\"/></workbook>";

static const char WB_RELS[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
    "<Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" Target=\"styles.xml\"/>"
    "</Relationships>";

static const char STYLES_XML[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<styleSheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">"
    "<numFmts count=\"0\"/>"
    "<fonts count=\"1\"><font><sz val=\"11\"/><color theme=\"1\"/><name val=\"Calibri\"/>"
    "<family val=\"2\"/><scheme val=\"minor\"/></font></fonts>"
    "<fills count=\"2\"><fill><patternFill/></fill><fill><patternFill patternType=\"gray125\"/></fill></fills>"
    "<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border></borders>"
    "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>"
    "<cellXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/></cellXfs>"
    "<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles>"
    "<tableStyles count=\"0\" defaultTableStyle=\"TableStyleMedium9\" defaultPivotStyle=\"PivotStyleLight16\"/>"
    "</styleSheet>";

xl_book *xl_book_new(const char *path, const char *sheet)
{
    mb_ooxml *pkg = mb_ooxml_new();
    mb_ooxml_put(pkg, "[Content_Types].xml", CT_XML, sizeof CT_XML - 1);
    mb_ooxml_put(pkg, "_rels/.rels", ROOT_RELS, sizeof ROOT_RELS - 1);
    mb_ooxml_put(pkg, "docProps/app.xml", APP_XML, sizeof APP_XML - 1);
    char now[40], stamp[32];
    mb_iso8601(mb_now(), now);
    snprintf(stamp, sizeof stamp, "%.19sZ", now);
    char *core = mb_asprintf(CORE_XML_FMT, stamp, stamp);
    mb_ooxml_put(pkg, "docProps/core.xml", core, strlen(core));
    free(core);
    mb_ooxml_put(pkg, "xl/workbook.xml", WB_XML, sizeof WB_XML - 1);
    mb_ooxml_put(pkg, "xl/_rels/workbook.xml.rels", WB_RELS, sizeof WB_RELS - 1);
    mb_ooxml_put(pkg, "xl/styles.xml", STYLES_XML, sizeof STYLES_XML - 1);
    xl_book *b = mb_calloc(1, sizeof *b);
    b->pkg = pkg;
    b->path = mb_strdup(path);
    b->wb_part = mb_strdup("xl/workbook.xml");
    mb_ooxml_xml(pkg, b->wb_part, &b->wb, NULL);
    b->sheets = mb_calloc(1, sizeof *b->sheets);
    char *why = NULL;
    xl_sheet_add(b, sheet, &why);
    free(why);
    return b;
}

/* --------------------------------------------------------------- sheets */

xl_sheet *xl_sheet_find(xl_book *b, const char *name)
{
    for (size_t i = 0; i < b->nsheets; i++)
        if (!strcmp(b->sheets[i].name, name)) return &b->sheets[i];
    return NULL;
}

void xl_sheet_touch(xl_sheet *s) { s->dirty = 1; }

static const char SHEET_XML[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">"
    "<sheetPr><outlinePr summaryBelow=\"1\" summaryRight=\"1\"/><pageSetUpPr/></sheetPr>"
    "<dimension ref=\"A1:A1\"/><sheetViews><sheetView workbookViewId=\"0\"/></sheetViews>"
    "<sheetFormatPr baseColWidth=\"8\" defaultRowHeight=\"15\"/><sheetData/>"
    "<pageMargins left=\"0.75\" right=\"0.75\" top=\"1\" bottom=\"1\" header=\"0.5\" footer=\"0.5\"/>"
    "</worksheet>";

xl_sheet *xl_sheet_add(xl_book *b, const char *name, char **why)
{
    mb_err err = {0};
    char *part = mb_ooxml_unique_name(b->pkg, "xl/worksheets/sheet%u.xml");
    mb_ooxml_put(b->pkg, part, SHEET_XML, sizeof SHEET_XML - 1);
    char *target = mb_ooxml_relative(b->wb_part, part);
    char *rid = NULL;
    if (mb_ooxml_rel_add(b->pkg, b->wb_part, XL_REL_BASE "worksheet", target, &rid, &err) ||
        mb_ooxml_ct_override(b->pkg, part, XL_CT_SHEET, &err)) {
        *why = mb_strdup(err.msg);
        free(target), free(rid), free(part);
        return NULL;
    }
    free(target);
    xmlNodePtr root = xmlDocGetRootElement(b->wb);
    xmlNodePtr sheets = xl_child(root, "sheets");
    if (!sheets) {
        sheets = xl_new_el(root, "sheets");
        xmlNodePtr after = xl_child(root, "bookViews");
        if (!after) after = xl_child(root, "workbookPr");
        if (after) xmlAddNextSibling(after, sheets);
        else if (root->children) xmlAddPrevSibling(root->children, sheets);
        else xmlAddChild(root, sheets);
    }
    unsigned maxid = 0;
    for (size_t i = 0; i < b->nsheets; i++) {
        const char *id = xl_attr(b->sheets[i].entry, "sheetId");
        unsigned v = id ? (unsigned)strtoul(id, NULL, 10) : 0;
        if (v > maxid) maxid = v;
    }
    xmlNodePtr el = xmlNewChild(sheets, root->ns, BAD_CAST "sheet", NULL);
    xmlSetProp(el, BAD_CAST "name", BAD_CAST name);
    char idbuf[16];
    snprintf(idbuf, sizeof idbuf, "%u", maxid + 1);
    xmlSetProp(el, BAD_CAST "sheetId", BAD_CAST idbuf);
    xmlNsPtr rns = xmlSearchNsByHref(b->wb, root, BAD_CAST XL_NS_R);
    if (!rns) rns = xmlNewNs(root, BAD_CAST XL_NS_R, BAD_CAST "r");
    xmlSetNsProp(el, rns, BAD_CAST "id", BAD_CAST rid);
    b->sheets = mb_realloc(b->sheets, (b->nsheets + 1) * sizeof *b->sheets);
    xl_sheet *s = &b->sheets[b->nsheets++];
    memset(s, 0, sizeof *s);
    s->name = mb_strdup(name);
    s->rid = rid;
    s->part = part;
    s->entry = el;
    s->is_worksheet = 1;
    b->wb_dirty = 1;
    return s;
}

/* Collects the parts of a sheet's table relationships (only this sheet uses them). */
static int table_rel(const mb_ooxml_rel *rel, void *p)
{
    json_t *list = p;
    if (!rel->external && !strcmp(rel->type, XL_REL_BASE "table"))
        json_array_append_new(list, json_string(rel->target));
    return 0;
}

void xl_sheet_remove(xl_book *b, xl_sheet *s)
{
    size_t idx = (size_t)(s - b->sheets);
    mb_err err = {0};
    xmlUnlinkNode(s->entry);
    xmlFreeNode(s->entry);
    mb_ooxml_rel_remove(b->pkg, b->wb_part, s->rid, &err);
    if (s->part) {
        json_t *tables = json_array();
        mb_ooxml_rels_each(b->pkg, s->part, table_rel, tables, &err);
        for (size_t i = 0; i < json_array_size(tables); i++) {
            char *tp = mb_ooxml_resolve(s->part, json_string_value(json_array_get(tables, i)));
            mb_ooxml_ct_remove(b->pkg, tp, &err);
            mb_ooxml_remove(b->pkg, tp);
            free(tp);
        }
        json_decref(tables);
        char *rels = mb_ooxml_rels_name(s->part);
        mb_ooxml_remove(b->pkg, rels);
        free(rels);
        mb_ooxml_ct_remove(b->pkg, s->part, &err);
        mb_ooxml_remove(b->pkg, s->part);
    }
    /* sheet-scoped names of this sheet go; later sheets' indexes move down */
    xmlNodePtr root = xmlDocGetRootElement(b->wb);
    xmlNodePtr names = xl_child(root, "definedNames");
    for (xmlNodePtr d = names ? names->children : NULL, next; d; d = next) {
        next = d->next;
        const char *ls = xl_is(d, "definedName") ? xl_attr(d, "localSheetId") : NULL;
        if (!ls) continue;
        long v = strtol(ls, NULL, 10);
        if ((size_t)v == idx) {
            xmlUnlinkNode(d);
            xmlFreeNode(d);
        } else if ((size_t)v > idx) {
            char buf[24];
            snprintf(buf, sizeof buf, "%ld", v - 1);
            xmlSetProp(d, BAD_CAST "localSheetId", BAD_CAST buf);
        }
    }
    if (names && !xl_child(names, "definedName")) {
        xmlUnlinkNode(names);
        xmlFreeNode(names);
    }
    xmlNodePtr views = xl_child(root, "bookViews");
    for (xmlNodePtr v = views ? views->children : NULL; v; v = v->next) {
        const char *at = xl_is(v, "workbookView") ? xl_attr(v, "activeTab") : NULL;
        if (at && (size_t)atoi(at) >= b->nsheets - 1) xmlSetProp(v, BAD_CAST "activeTab", BAD_CAST "0");
        const char *ft = xl_is(v, "workbookView") ? xl_attr(v, "firstSheet") : NULL;
        if (ft && (size_t)atoi(ft) >= b->nsheets - 1) xmlSetProp(v, BAD_CAST "firstSheet", BAD_CAST "0");
    }
    for (size_t i = 0; i < s->n; i++) free(s->rows[i].cells);
    free(s->rows), free(s->name), free(s->rid), free(s->part);
    memmove(s, s + 1, (b->nsheets - idx - 1) * sizeof *s);
    b->nsheets--;
    b->wb_dirty = 1;
    b->stale = 1; /* formulas that referred to the sheet */
}

/* ---------------------------------------------------------- sheet index */

static int cmp_row(const void *a, const void *b)
{
    const xl_row *x = a, *y = b;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_cell(const void *a, const void *b)
{
    const xl_cell *x = a, *y = b;
    return x->col < y->col ? -1 : x->col > y->col;
}

static void row_push(xl_row *r, unsigned col, xmlNodePtr node)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 8;
        r->cells = mb_realloc(r->cells, r->cap * sizeof *r->cells);
    }
    r->cells[r->n++] = (xl_cell){.col = col, .node = node};
}

int xl_sheet_load(xl_book *b, xl_sheet *s, char **why)
{
    if (s->doc) return MB_OK;
    if (!s->is_worksheet) {
        *why = mb_asprintf("'%s' is not a worksheet", s->name);
        return MB_EINVAL;
    }
    mb_err err = {0};
    int rc = mb_ooxml_xml(b->pkg, s->part, &s->doc, &err);
    if (rc) {
        *why = mb_strdup(err.msg);
        return rc;
    }
    xmlNodePtr ws = xmlDocGetRootElement(s->doc);
    s->data = xl_child(ws, "sheetData");
    if (!s->data) {
        s->data = xl_new_el(ws, "sheetData");
        xl_ws_insert(ws, s->data);
    }
    unsigned prev_row = 0;
    size_t ncells = 0;
    int sorted = 1;
    for (xmlNodePtr rn = s->data->children; rn; rn = rn->next) {
        if (!xl_is(rn, "row")) continue;
        const char *ra = xl_attr(rn, "r");
        unsigned rnum = ra ? (unsigned)strtoul(ra, NULL, 10) : prev_row + 1;
        if (rnum < 1 || rnum > XL_MAX_ROW) {
            *why = mb_asprintf("sheet '%s' has a row numbered %s, outside 1..%u", s->name,
                               ra ? ra : "?", XL_MAX_ROW);
            return MB_EINVAL;
        }
        if (rnum <= prev_row) sorted = 0;
        prev_row = rnum;
        if (s->n == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 64;
            s->rows = mb_realloc(s->rows, s->cap * sizeof *s->rows);
        }
        xl_row *r = &s->rows[s->n++];
        memset(r, 0, sizeof *r);
        r->row = rnum;
        r->node = rn;
        unsigned prev_col = 0;
        int csorted = 1;
        for (xmlNodePtr cn = rn->children; cn; cn = cn->next) {
            if (!xl_is(cn, "c")) continue;
            const char *ca = xl_attr(cn, "r");
            unsigned cr = 0, cc = 0;
            if (!ca || xl_parse_cell(ca, &cr, &cc)) cc = prev_col + 1;
            if (cc < 1 || cc > XL_MAX_COL) {
                *why = mb_asprintf("sheet '%s' has a cell %s outside the sheet", s->name,
                                   ca ? ca : "?");
                return MB_EINVAL;
            }
            if (cc <= prev_col) csorted = 0;
            prev_col = cc;
            row_push(r, cc, cn);
            if (++ncells > 20u * XL_MAX_CELLS) {
                *why = mb_asprintf("sheet '%s' has more than %u cells, too many to handle", s->name,
                                   20u * XL_MAX_CELLS);
                return MB_ETOOBIG;
            }
        }
        if (!csorted) qsort(r->cells, r->n, sizeof *r->cells, cmp_cell);
    }
    if (!sorted) qsort(s->rows, s->n, sizeof *s->rows, cmp_row);
    return MB_OK;
}

static xl_row *find_row(xl_sheet *s, unsigned row, size_t *pos)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->rows[mid].row < row) lo = mid + 1;
        else hi = mid;
    }
    if (pos) *pos = lo;
    return lo < s->n && s->rows[lo].row == row ? &s->rows[lo] : NULL;
}

static xl_cell *find_cell(xl_row *r, unsigned col, size_t *pos)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->cells[mid].col < col) lo = mid + 1;
        else hi = mid;
    }
    if (pos) *pos = lo;
    return lo < r->n && r->cells[lo].col == col ? &r->cells[lo] : NULL;
}

xmlNodePtr xl_cell_get(xl_sheet *s, unsigned row, unsigned col)
{
    xl_row *r = find_row(s, row, NULL);
    xl_cell *c = r ? find_cell(r, col, NULL) : NULL;
    return c ? c->node : NULL;
}

xmlNodePtr xl_cell_get_or_add(xl_sheet *s, unsigned row, unsigned col)
{
    size_t rpos;
    xl_row *r = find_row(s, row, &rpos);
    char buf[16];
    if (!r) {
        xmlNodePtr rn = xl_new_el(s->data, "row");
        snprintf(buf, sizeof buf, "%u", row);
        xmlSetProp(rn, BAD_CAST "r", BAD_CAST buf);
        if (rpos < s->n) xmlAddPrevSibling(s->rows[rpos].node, rn);
        else xmlAddChild(s->data, rn);
        if (s->n == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 64;
            s->rows = mb_realloc(s->rows, s->cap * sizeof *s->rows);
        }
        memmove(&s->rows[rpos + 1], &s->rows[rpos], (s->n - rpos) * sizeof *s->rows);
        s->n++;
        r = &s->rows[rpos];
        memset(r, 0, sizeof *r);
        r->row = row;
        r->node = rn;
    }
    size_t cpos;
    xl_cell *c = find_cell(r, col, &cpos);
    if (c) return c->node;
    xmlNodePtr cn = xl_new_el(s->data, "c");
    xl_cell_name(row, col, buf);
    xmlSetProp(cn, BAD_CAST "r", BAD_CAST buf);
    if (cpos < r->n) xmlAddPrevSibling(r->cells[cpos].node, cn);
    else xmlAddChild(r->node, cn);
    xmlUnsetProp(r->node, BAD_CAST "spans");
    row_push(r, 0, NULL);
    memmove(&r->cells[cpos + 1], &r->cells[cpos], (r->n - 1 - cpos) * sizeof *r->cells);
    r->cells[cpos] = (xl_cell){.col = col, .node = cn};
    s->dirty = 1;
    return cn;
}

void xl_cell_remove(xl_sheet *s, unsigned row, unsigned col)
{
    xl_row *r = find_row(s, row, NULL);
    size_t pos;
    xl_cell *c = r ? find_cell(r, col, &pos) : NULL;
    if (!c) return;
    xmlUnlinkNode(c->node);
    xmlFreeNode(c->node);
    memmove(&r->cells[pos], &r->cells[pos + 1], (r->n - pos - 1) * sizeof *r->cells);
    r->n--;
    s->dirty = 1;
}

void xl_sheet_extent(xl_sheet *s, unsigned *min_r, unsigned *min_c, unsigned *max_r,
                     unsigned *max_c)
{
    unsigned r1 = 0, c1 = 0, r2 = 0, c2 = 0;
    int any = 0;
    for (size_t i = 0; i < s->n; i++) {
        xl_row *r = &s->rows[i];
        if (!r->n) continue;
        if (!any || r->row < r1) r1 = r->row;
        if (!any || r->row > r2) r2 = r->row;
        if (!any || r->cells[0].col < c1) c1 = r->cells[0].col;
        if (!any || r->cells[r->n - 1].col > c2) c2 = r->cells[r->n - 1].col;
        any = 1;
    }
    /* openpyxl creates MergedCell objects for every cell of a merged range but
     * its top-left one: they count too */
    xmlNodePtr mc = xl_child(xmlDocGetRootElement(s->doc), "mergeCells");
    for (xmlNodePtr m = mc ? mc->children : NULL; m; m = m->next) {
        const char *ref = xl_is(m, "mergeCell") ? xl_attr(m, "ref") : NULL;
        unsigned a, bcol, c, d;
        if (!ref || xl_parse_range(ref, &a, &bcol, &c, &d)) continue;
        if (a == c && bcol == d) continue;
        /* all cells but the first: rows a..c, cols b..d minus (a,b) */
        unsigned mr1 = a, mc1 = bcol;
        if (a == c) mc1 = bcol + 1;
        else if (bcol == d) mr1 = a + 1;
        if (!any || mr1 < r1) r1 = mr1;
        if (!any || c > r2) r2 = c;
        if (!any || mc1 < c1) c1 = mc1;
        if (!any || d > c2) c2 = d;
        any = 1;
    }
    if (!any) r1 = c1 = r2 = c2 = 1;
    *min_r = r1, *min_c = c1, *max_r = r2, *max_c = c2;
}

/* ---------------------------------------------------------------- merges */

json_t *xl_merged_list(xl_sheet *s)
{
    json_t *a = json_array();
    xmlNodePtr mc = xl_child(xmlDocGetRootElement(s->doc), "mergeCells");
    for (xmlNodePtr m = mc ? mc->children : NULL; m; m = m->next) {
        const char *ref = xl_is(m, "mergeCell") ? xl_attr(m, "ref") : NULL;
        if (ref) json_array_append_new(a, json_string(ref));
    }
    return a;
}

static void merge_count(xmlNodePtr mc)
{
    unsigned n = 0;
    for (xmlNodePtr m = mc->children; m; m = m->next) n += xl_is(m, "mergeCell");
    char buf[16];
    snprintf(buf, sizeof buf, "%u", n);
    xmlSetProp(mc, BAD_CAST "count", BAD_CAST buf);
}

int xl_merge_add(xl_sheet *s, const char *ref)
{
    xmlNodePtr ws = xmlDocGetRootElement(s->doc);
    xmlNodePtr mc = xl_child(ws, "mergeCells");
    if (!mc) {
        mc = xl_new_el(ws, "mergeCells");
        xl_ws_insert(ws, mc);
    }
    for (xmlNodePtr m = mc->children; m; m = m->next) {
        const char *r = xl_is(m, "mergeCell") ? xl_attr(m, "ref") : NULL;
        if (r && !strcasecmp(r, ref)) return 0;
    }
    xmlNodePtr m = xmlNewChild(mc, mc->ns, BAD_CAST "mergeCell", NULL);
    xmlSetProp(m, BAD_CAST "ref", BAD_CAST ref);
    merge_count(mc);
    s->dirty = 1;
    return 0;
}

int xl_merge_remove(xl_sheet *s, const char *ref)
{
    xmlNodePtr ws = xmlDocGetRootElement(s->doc);
    xmlNodePtr mc = xl_child(ws, "mergeCells");
    int found = 0;
    for (xmlNodePtr m = mc ? mc->children : NULL, next; m; m = next) {
        next = m->next;
        const char *r = xl_is(m, "mergeCell") ? xl_attr(m, "ref") : NULL;
        if (r && !strcasecmp(r, ref)) {
            xmlUnlinkNode(m);
            xmlFreeNode(m);
            found = 1;
        }
    }
    if (found) {
        if (!xl_child(mc, "mergeCell")) {
            xmlUnlinkNode(mc);
            xmlFreeNode(mc);
        } else {
            merge_count(mc);
        }
        s->dirty = 1;
    }
    return found;
}

/* ----------------------------------------------------------------- save */

static void update_dimension(xl_sheet *s)
{
    xmlNodePtr ws = xmlDocGetRootElement(s->doc);
    unsigned r1 = 0, c1 = 0, r2 = 0, c2 = 0;
    int any = 0;
    for (size_t i = 0; i < s->n; i++) {
        xl_row *r = &s->rows[i];
        if (!r->n) continue;
        if (!any || r->row < r1) r1 = r->row;
        r2 = r->row > r2 ? r->row : r2;
        if (!any || r->cells[0].col < c1) c1 = r->cells[0].col;
        if (r->cells[r->n - 1].col > c2) c2 = r->cells[r->n - 1].col;
        any = 1;
    }
    char a[16], bb[16], ref[40];
    if (!any) snprintf(ref, sizeof ref, "A1");
    else {
        xl_cell_name(r1, c1, a);
        xl_cell_name(r2, c2, bb);
        if (r1 == r2 && c1 == c2) snprintf(ref, sizeof ref, "%s", a);
        else snprintf(ref, sizeof ref, "%s:%s", a, bb);
    }
    xmlNodePtr dim = xl_child(ws, "dimension");
    if (!dim) {
        dim = xl_new_el(ws, "dimension");
        xl_ws_insert(ws, dim);
    }
    xmlSetProp(dim, BAD_CAST "ref", BAD_CAST ref);
    /* drop empty rows we may have left behind (no cells, no attributes of note) */
}

/* Asks Excel to recompute every formula when the workbook is opened. */
static void full_calc_on_load(xl_book *b)
{
    xmlNodePtr root = xmlDocGetRootElement(b->wb);
    xmlNodePtr calc = xl_child(root, "calcPr");
    if (!calc) {
        calc = xl_new_el(root, "calcPr");
        /* CT_Workbook: calcPr comes before these */
        static const char *const after[] = {"oleSize", "customWorkbookViews", "pivotCaches",
                                            "smartTagPr", "smartTagTypes", "webPublishing",
                                            "fileRecoveryPr", "webPublishObjects", "extLst",
                                            NULL};
        xmlNodePtr before = NULL;
        for (xmlNodePtr n = root->children; n && !before; n = n->next)
            for (int i = 0; after[i] && !before; i++)
                if (xl_is(n, after[i])) before = n;
        if (before) xmlAddPrevSibling(before, calc);
        else xmlAddChild(root, calc);
    }
    const char *cur = xl_attr(calc, "fullCalcOnLoad");
    if (!cur || (strcmp(cur, "1") && strcasecmp(cur, "true"))) {
        xmlSetProp(calc, BAD_CAST "fullCalcOnLoad", BAD_CAST "1");
        b->wb_dirty = 1;
    }
}

/* Drops the cached results of the formulas of one worksheet document;
 * returns how many formulas it holds, and sets *changed when it removed
 * something. */
static size_t drop_results(xmlDocPtr doc, int *changed)
{
    size_t formulas = 0;
    xmlNodePtr data = xl_child(xmlDocGetRootElement(doc), "sheetData");
    for (xmlNodePtr r = data ? data->children : NULL; r; r = r->next) {
        if (!xl_is(r, "row")) continue;
        for (xmlNodePtr c = r->children; c; c = c->next) {
            if (!xl_is(c, "c") || !xl_child(c, "f")) continue;
            formulas++;
            xmlNodePtr v = xl_child(c, "v");
            if (v) {
                xmlUnlinkNode(v);
                xmlFreeNode(v);
                *changed = 1;
            }
            /* t describes the cached result; a formula cell has none now */
            if (xmlHasProp(c, BAD_CAST "t")) {
                xmlUnsetProp(c, BAD_CAST "t");
                *changed = 1;
            }
        }
    }
    return formulas;
}

typedef struct calc_chain {
    char *id, *target;
} calc_chain;

static int calc_chain_rel(const mb_ooxml_rel *rel, void *payload)
{
    calc_chain *cc = payload;
    if (rel->external || !mb_str_has_suffix(rel->type, "/calcChain")) return 0;
    cc->id = mb_strdup(rel->id);
    cc->target = mb_strdup(rel->target);
    return 1;
}

/* What a save after a value change does to the formulas (see excel.h).
 * A worksheet that cannot be parsed is left as it is: the tool's own sheet
 * was parsed already, and an unreadable other one is not this call's to
 * refuse. */
/* Whether sheet XML text can hold a formula: an element named f, with or
 * without a namespace prefix. A sheet that cannot is not parsed at all. */
static int may_hold_formulas(const char *data, size_t len)
{
    /* UTF-16 text (a BOM, or NULs between characters) is not scanned here. */
    if (len >= 2 && (memchr(data, '\0', len < 64 ? len : 64) ||
                     ((unsigned char)data[0] == 0xFF && (unsigned char)data[1] == 0xFE) ||
                     ((unsigned char)data[0] == 0xFE && (unsigned char)data[1] == 0xFF)))
        return 1;
    for (const char *p = data; (p = memchr(p, 'f', (size_t)(data + len - p))); p++) {
        if (p == data || (p[-1] != '<' && p[-1] != ':')) continue;
        if (p + 1 < data + len && strchr(" \t\r\n/>", p[1]) && p[1]) return 1;
    }
    return 0;
}

static void invalidate_results(xl_book *b)
{
    size_t formulas = 0;
    for (size_t i = 0; i < b->nsheets; i++) {
        xl_sheet *s = &b->sheets[i];
        if (!s->is_worksheet) continue;
        xmlDocPtr doc = s->doc;
        if (!doc) {
            char *raw = NULL;
            size_t rl = 0;
            if (mb_ooxml_read(b->pkg, s->part, &raw, &rl, NULL)) continue;
            int maybe = may_hold_formulas(raw, rl);
            free(raw);
            if (!maybe) continue;
        }
        if (!doc && mb_ooxml_xml(b->pkg, s->part, &doc, NULL)) continue;
        int changed = 0;
        formulas += drop_results(doc, &changed);
        if (changed) mb_ooxml_touch(b->pkg, s->part);
    }
    if (!formulas) return;
    full_calc_on_load(b);
    calc_chain cc = {0};
    mb_ooxml_rels_each(b->pkg, b->wb_part, calc_chain_rel, &cc, NULL);
    if (cc.id) {
        char *part = mb_ooxml_resolve(b->wb_part, cc.target);
        mb_ooxml_rel_remove(b->pkg, b->wb_part, cc.id, NULL);
        mb_ooxml_ct_remove(b->pkg, part, NULL);
        mb_ooxml_remove(b->pkg, part);
        free(part);
    }
    free(cc.id);
    free(cc.target);
}

/* Hands changed sheets, workbook and styles to the package. */
static void flush(xl_book *b)
{
    if (b->stale) invalidate_results(b);
    for (size_t i = 0; i < b->nsheets; i++) {
        xl_sheet *s = &b->sheets[i];
        if (!s->dirty || !s->doc) continue;
        update_dimension(s);
        mb_ooxml_touch(b->pkg, s->part);
    }
    if (b->wb_dirty) mb_ooxml_touch(b->pkg, b->wb_part);
    if (b->styles && b->styles_dirty) mb_ooxml_touch(b->pkg, b->styles_part);
}

int xl_book_bytes(xl_book *b, char **data, size_t *len, char **why)
{
    flush(b);
    mb_err err = {0};
    int rc = mb_ooxml_save_mem(b->pkg, data, len, &err);
    if (rc) *why = mb_strdup(err.msg);
    return rc;
}

int xl_book_save(xl_book *b, char **why)
{
    flush(b);
    mb_err err = {0};
    /* a package opened from a file is saved in place; a new one is written */
    int rc = mb_ooxml_from_file(b->pkg) ? mb_ooxml_save(b->pkg, &err)
                                        : mb_ooxml_save_as(b->pkg, b->path, &err);
    if (rc) *why = mb_strdup(err.msg);
    return rc;
}
