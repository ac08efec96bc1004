/*
 * tools_objects.c - tools that add whole objects to a workbook: create_table
 * (a native table part), copy_worksheet (a new sheet part copied from
 * another) and create_pivot_table (upstream's summary sheet "<sheet>_pivot"
 * with a table over it, not a pivot cache). Texts are upstream's
 * (excel_mcp/tables.py, sheet.py, pivot.py, server.py).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/excel/tools.h"

/* Opens the workbook a tool names; 0 and *b set, or the call answered
 * (path refusals fail the call, open errors come back as "Error: <prefix>..."). */
static int open_book(mb_mcp_call *call, mb_mcp_result *res, json_t *args, const char *prefix,
                     xl_book **b, int *rc)
{
    const char *given = xl_str(args, "filepath");
    char *real = NULL, *why = NULL;
    *b = NULL;
    *rc = xl_path(call, res, given, 0, &real);
    if (*rc) return -1;
    if (xl_book_open(real, given, b, &why)) {
        free(real);
        char *m = mb_asprintf("%s%s", prefix, why);
        *rc = xl_error(res, m);
        free(m);
        free(why);
        return -1;
    }
    free(real);
    return 0;
}

/* ------------------------------------------------------------ create_table */

/* openpyxl's CellRange descriptor pattern, quoted in its error text. */
#define CELLRANGE_PATTERN                                                                   \
    "^[$]?([A-Za-z]{1,3})[$]?(\\d+)(:[$]?([A-Za-z]{1,3})[$]?(\\d+)?)?$|^[A-Za-z]{1,3}:[A-Za-z]{1,3}$"

/* Reads [$]LETTERS[$]DIGITS from *p; digits optional when opt_digits. */
static int ref_part(const char **p, unsigned *col, unsigned *row, int dollars, int opt_digits)
{
    const char *s = *p;
    if (dollars && *s == '$') s++;
    const char *l = s;
    while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')) s++;
    if (s - l < 1 || s - l > 3) return -1;
    *col = xl_col_index(l, (size_t)(s - l));
    if (dollars && *s == '$') s++;
    const char *d = s;
    unsigned long v = 0;
    while (*s >= '0' && *s <= '9') {
        if (v < 100000000ul) v = v * 10 + (unsigned long)(*s - '0');
        s++;
    }
    if (s == d && !opt_digits) return -1;
    *row = s == d ? 0 : (unsigned)v;
    *p = s;
    return 0;
}

/* -1: does not match openpyxl's pattern; -2: matches but is not a block of
 * cells (column-only or open-ended); -3: outside the grid or reversed. */
static int table_ref(const char *ref, unsigned *r1, unsigned *c1, unsigned *r2, unsigned *c2)
{
    const char *p = ref;
    if (!ref_part(&p, c1, r1, 1, 0)) {
        if (!*p) {
            *r2 = *r1, *c2 = *c1;
        } else {
            if (*p++ != ':') return -1;
            if (ref_part(&p, c2, r2, 1, 1) || *p) return -1;
            if (!*r2) return -2;
        }
    } else {
        p = ref;
        if (ref_part(&p, c1, r1, 0, 1) || *r1 || *p++ != ':') return -1;
        if (ref_part(&p, c2, r2, 0, 1) || *r2 || *p) return -1;
        return -2;
    }
    if (!*c1 || !*c2 || !*r1 || *c1 > XL_MAX_COL || *c2 > XL_MAX_COL || *r1 > XL_MAX_ROW ||
        *r2 > XL_MAX_ROW || *r2 < *r1 || *c2 < *c1)
        return -3;
    return 0;
}

int xl_t_create_table(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    int rc;
    if (open_book(call, res, args, "", &b, &rc)) return rc;
    const char *sname = xl_str(args, "sheet_name"), *range = xl_str(args, "data_range");
    const char *style = xl_str(args, "table_style");
    xl_sheet *s = xl_sheet_find(b, sname);
    if (!s) return xl_fail_book(b, res, mb_asprintf("Sheet '%s' not found.", sname));
    char *why = NULL;
    if (xl_sheet_load(b, s, &why)) return xl_fail_book(b, res, why);
    char gen[32];
    const char *name = xl_str(args, "table_name");
    if (!name || !*name) {
        xl_random_name("Table_", gen, sizeof gen);
        name = gen;
    }
    if (xl_defined_name_exists(b, name))
        return xl_fail_book(b, res, mb_asprintf("Table name '%s' already exists.", name));
    if (strchr(name, ' ')) return xl_fail_book(b, res, mb_strdup("Table names cannot have spaces"));
    unsigned r1, c1, r2, c2;
    int pr = table_ref(range, &r1, &c1, &r2, &c2);
    if (pr == -1) return xl_fail_book(b, res, mb_strdup("Value does not match pattern " CELLRANGE_PATTERN));
    if (pr == -2)
        return xl_fail_book(b, res, mb_asprintf("Table range %s must name a block of cells like A1:D5", range));
    if (pr == -3)
        return xl_fail_book(b, res, mb_asprintf("Table range %s is reversed or lies outside the sheet", range));
    if ((unsigned long long)(c2 - c1 + 1) > XL_MAX_COL)
        return xl_fail_book(b, res, mb_strdup("Table range has too many columns"));
    if (xl_table_name_taken(b, name))
        return xl_fail_book(b, res, mb_asprintf("Table with name %s already exists", name));
    if (xl_table_add(b, s, r1, c1, r2, c2, name, style, 0, &why)) return xl_fail_book(b, res, why);
    char *msg = mb_asprintf("Successfully created table '%s' in sheet '%s'.", name, sname);
    rc = xl_save_ok(b, res, msg);
    free(msg);
    return rc;
}

/* ---------------------------------------------------------- copy_worksheet */

/* openpyxl's avoid_duplicate_name: a case-insensitive clash gets the next
 * number appended. */
static char *unique_title(xl_book *b, const char *extra, const char *value)
{
    size_t n = strlen(value);
    int clash = 0;
    unsigned long high = 0;
    for (size_t i = 0; i <= b->nsheets; i++) {
        const char *nm = i < b->nsheets ? b->sheets[i].name : extra;
        if (!strcasecmp(nm, value)) clash = 1;
        if (strncasecmp(nm, value, n)) continue;
        const char *d = nm + n;
        if (!*d) continue;
        if (strspn(d, "0123456789") != strlen(d)) continue;
        unsigned long v = strtoul(d, NULL, 10);
        if (v > high) high = v;
    }
    return clash ? mb_asprintf("%s%lu", value, high + 1) : mb_strdup(value);
}

typedef struct rel_list {
    json_t *drop; /* ids of relationships the copy does not keep */
    int any;
} rel_list;

static int note_rel(const mb_ooxml_rel *rel, void *p)
{
    rel_list *l = p;
    l->any = 1;
    /* hyperlinks point outside or nowhere: safe to share; other targets
     * (drawings, tables, comments, printer settings) belong to one sheet */
    if (strcmp(rel->type, XL_REL_BASE "hyperlink"))
        json_array_append_new(l->drop, json_string(rel->id));
    return 0;
}

static int dropped(json_t *drop, const char *id)
{
    for (size_t i = 0; i < json_array_size(drop); i++)
        if (!strcmp(json_string_value(json_array_get(drop, i)), id)) return 1;
    return 0;
}

/* Removes what refers to dropped relationships (and wrappers left empty). */
static void strip_refs(xmlNodePtr root, xmlNodePtr n, json_t *drop)
{
    for (xmlNodePtr k = n->children, next; k; k = next) {
        next = k->next;
        if (k->type != XML_ELEMENT_NODE) continue;
        if (xl_is(k, "sheetView")) xmlUnsetProp(k, BAD_CAST "tabSelected");
        const char *rid = NULL;
        for (xmlAttrPtr a = k->properties; a; a = a->next)
            if (a->ns && a->ns->href && !strcmp((const char *)a->ns->href, XL_NS_R) &&
                !strcmp((const char *)a->name, "id") && a->children)
                rid = (const char *)a->children->content;
        if (rid && dropped(drop, rid)) {
            if (xl_is(k, "pageSetup")) {
                xmlUnsetNsProp(k, xmlSearchNsByHref(k->doc, k, BAD_CAST XL_NS_R), BAD_CAST "id");
                continue;
            }
            xmlUnlinkNode(k);
            xmlFreeNode(k);
            continue;
        }
        strip_refs(root, k, drop);
        if (k->parent && k != root && xmlFirstElementChild(k) == NULL && k->children == NULL &&
            (xl_is(k, "tableParts") || xl_is(k, "oleObjects") || xl_is(k, "controls") ||
             xl_is(k, "AlternateContent"))) {
            xmlUnlinkNode(k);
            xmlFreeNode(k);
        }
    }
}

int xl_t_copy_worksheet(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    int rc;
    if (open_book(call, res, args, "", &b, &rc)) return rc;
    const char *from = xl_str(args, "source_sheet"), *to = xl_str(args, "target_sheet");
    xl_sheet *src = xl_sheet_find(b, from);
    if (!src) return xl_fail_book(b, res, mb_asprintf("Source sheet '%s' not found", from));
    if (xl_sheet_find(b, to)) return xl_fail_book(b, res, mb_asprintf("Target sheet '%s' already exists", to));
    if (!src->is_worksheet)
        return xl_fail_book(b, res, mb_asprintf("'%s' is not a worksheet and cannot be copied", from));
    if (!*to) return xl_fail_book(b, res, mb_strdup("Title must have at least one character"));
    const char *bad = strpbrk(to, "\\*?:/[]");
    if (bad) return xl_fail_book(b, res, mb_asprintf("Invalid character %c found in sheet title", *bad));
    char *tmp = mb_asprintf("%s Copy", from);
    char *title = unique_title(b, tmp, to);
    free(tmp);
    size_t si = (size_t)(src - b->sheets);
    mb_err err = {0};
    char *data = NULL;
    size_t len = 0;
    if (mb_ooxml_read(b->pkg, src->part, &data, &len, &err)) {
        free(title);
        return xl_fail_book(b, res, mb_strdup(err.msg));
    }
    char *why = NULL;
    xl_sheet *t = xl_sheet_add(b, title, &why);
    free(title);
    if (!t) {
        free(data);
        return xl_fail_book(b, res, why);
    }
    src = &b->sheets[si];
    mb_ooxml_put(b->pkg, t->part, data, len);
    free(data);
    rel_list rl = {.drop = json_array()};
    mb_ooxml_rels_each(b->pkg, src->part, note_rel, &rl, &err);
    if (rl.any) {
        char *srels = mb_ooxml_rels_name(src->part), *trels = mb_ooxml_rels_name(t->part);
        if (!mb_ooxml_read(b->pkg, srels, &data, &len, &err)) {
            mb_ooxml_put(b->pkg, trels, data, len);
            free(data);
            for (size_t i = 0; i < json_array_size(rl.drop); i++)
                mb_ooxml_rel_remove(b->pkg, t->part, json_string_value(json_array_get(rl.drop, i)), &err);
        }
        free(srels), free(trels);
    }
    if (xl_sheet_load(b, t, &why)) {
        json_decref(rl.drop);
        return xl_fail_book(b, res, why);
    }
    xmlNodePtr root = xmlDocGetRootElement(t->doc);
    strip_refs(root, root, rl.drop);
    json_decref(rl.drop);
    t->dirty = 1;
    char *msg = mb_asprintf("Sheet '%s' copied to '%s'", from, to);
    rc = xl_save_ok(b, res, msg);
    free(msg);
    return rc;
}

/* ------------------------------------------------------ create_pivot_table */

/* Python's str() of a cell value. */
static char *py_str(json_t *v)
{
    mb_buf t = {0};
    if (json_is_string(v)) mb_buf_puts(&t, json_string_value(v));
    else if (json_is_integer(v)) mb_buf_printf(&t, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) xl_py_float(&t, json_real_value(v));
    else if (json_is_true(v)) mb_buf_puts(&t, "True");
    else if (json_is_false(v)) mb_buf_puts(&t, "False");
    else mb_buf_puts(&t, "None");
    if (!t.data) mb_buf_puts(&t, "");
    return mb_buf_steal(&t);
}

/* upstream's clean_field_name: strip, then drop one " (sum)"-style suffix. */
static char *clean_field(const char *f)
{
    while (*f == ' ' || *f == '\t' || *f == '\n' || *f == '\r' || *f == '\f' || *f == '\v') f++;
    size_t n = strlen(f);
    while (n && strchr(" \t\n\r\f\v", f[n - 1])) n--;
    static const char *const SUFFIX[] = {" (sum)", " (average)", " (count)", " (min)", " (max)", NULL};
    for (int i = 0; SUFFIX[i]; i++) {
        size_t k = strlen(SUFFIX[i]);
        if (n >= k && !strncasecmp(f + n - k, SUFFIX[i], k)) return mb_strndup(f, n - k);
    }
    return mb_strndup(f, n);
}

static char *lower_ascii(const char *s)
{
    char *l = mb_strdup(s);
    for (char *q = l; *q; q++)
        if (*q >= 'A' && *q <= 'Z') *q = (char)(*q + 32);
    return l;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* upstream's read_excel_range: rows start..end, all-empty rows skipped, []
 * when the start lies past the used area. */
static json_t *read_rows(xl_book *b, xl_sheet *s, unsigned r1, unsigned c1, unsigned r2, unsigned c2,
                         char **why)
{
    unsigned mr1, mc1, mr2, mc2;
    xl_sheet_extent(s, &mr1, &mc1, &mr2, &mc2);
    json_t *rows = json_array();
    if (r1 > mr2 || c1 > mc2 || r2 < r1 || c2 < c1) return rows;
    if ((unsigned long long)(r2 - r1 + 1) * (c2 - c1 + 1) > XL_MAX_CELLS) {
        *why = mb_asprintf("the range holds more than %u cells", XL_MAX_CELLS);
        json_decref(rows);
        return NULL;
    }
    for (unsigned r = r1; r <= r2; r++) {
        json_t *row = json_array();
        int any = 0;
        for (unsigned c = c1; c <= c2; c++) {
            json_t *v = xl_cell_value(b, s, xl_cell_get(s, r, c), r, c);
            any |= !json_is_null(v);
            json_array_append_new(row, v);
        }
        if (any) json_array_append_new(rows, row);
        else json_decref(row);
    }
    return rows;
}

/* The aggregate of the numeric values (ints, floats, booleans) of `field`
 * in the records matching `combo`, as upstream's _aggregate_values. */
static json_t *aggregate(json_t *records, json_t *combo, const char *field, const char *agg)
{
    json_t *vals = json_array();
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec) {
        const char *k;
        json_t *want;
        int match = 1;
        json_object_foreach(combo, k, want) {
            json_t *have = json_object_get(rec, k);
            if (!json_is_string(have) || strcmp(json_string_value(have), json_string_value(want))) match = 0;
        }
        json_t *v = match ? json_object_get(rec, field) : NULL;
        if (v && (json_is_number(v) || json_is_boolean(v))) json_array_append(vals, v);
    }
    size_t n = json_array_size(vals);
    json_t *out;
    if (!n) {
        out = json_integer(0);
    } else if (!strcmp(agg, "count")) {
        out = json_integer((json_int_t)n);
    } else if (!strcmp(agg, "min") || !strcmp(agg, "max")) {
        int want_max = !strcmp(agg, "max");
        json_t *best = json_array_get(vals, 0);
        for (size_t j = 1; j < n; j++) {
            json_t *v = json_array_get(vals, j);
            double x = json_is_boolean(v) ? json_is_true(v) : json_number_value(v);
            double y = json_is_boolean(best) ? json_is_true(best) : json_number_value(best);
            if (want_max ? x > y : x < y) best = v; /* first of equals wins, as Python */
        }
        out = json_deep_copy(best);
    } else {
        int all_int = 1;
        long long isum = 0;
        double dsum = 0;
        for (size_t j = 0; j < n; j++) {
            json_t *v = json_array_get(vals, j);
            if (json_is_real(v)) all_int = 0;
            double x = json_is_boolean(v) ? json_is_true(v) : json_number_value(v);
            dsum += x;
            if (json_is_integer(v)) isum += json_integer_value(v);
            else if (json_is_true(v)) isum += 1;
        }
        if (!strcmp(agg, "average")) out = json_real(dsum / (double)n);
        else out = all_int ? json_integer(isum) : json_real(dsum);
    }
    json_decref(vals);
    return out;
}

static char *available(json_t *headers)
{
    size_t n = json_object_size(headers), i = 0;
    const char **keys = mb_calloc(n ? n : 1, sizeof *keys);
    const char *k;
    json_t *v;
    json_object_foreach(headers, k, v) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_str);
    mb_buf m = {0};
    for (i = 0; i < n; i++) mb_buf_printf(&m, "%s%s", i ? ", " : "", keys[i]);
    free(keys);
    if (!m.data) mb_buf_puts(&m, "");
    return mb_buf_steal(&m);
}

int xl_t_create_pivot(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    int rc;
    if (open_book(call, res, args, "", &b, &rc)) return rc;
    const char *sname = xl_str(args, "sheet_name"), *range = xl_str(args, "data_range");
    const char *agg = xl_str(args, "agg_func");
    json_t *rows = json_object_get(args, "rows"), *values = json_object_get(args, "values");
    json_t *columns = json_object_get(args, "columns");
    xl_sheet *s = xl_sheet_find(b, sname);
    if (!s) return xl_fail_book(b, res, mb_asprintf("Sheet '%s' not found", sname));
    char *why = NULL;
    if (xl_sheet_load(b, s, &why)) return xl_fail_book(b, res, why);
    const char *colon = strchr(range, ':');
    if (!colon) return xl_fail_book(b, res, mb_strdup("Data range must be in format 'A1:B2'"));
    if (strchr(colon + 1, ':'))
        return xl_fail_book(b, res, mb_strdup("Invalid data range format: too many values to unpack (expected 2)"));
    char *start = mb_strndup(range, (size_t)(colon - range));
    unsigned r1, c1, r2, c2;
    if (xl_parse_cell(start, &r1, &c1)) {
        char *m = mb_asprintf("Invalid data range format: Invalid cell reference: %s", start);
        free(start);
        return xl_fail_book(b, res, m);
    }
    free(start);
    if (xl_parse_cell(colon + 1, &r2, &c2))
        return xl_fail_book(b, res, mb_asprintf("Invalid data range format: Invalid cell reference: %s", colon + 1));
    json_t *table = read_rows(b, s, r1, c1, r2, c2, &why);
    if (!table) {
        char *m = mb_asprintf("Failed to read or process source data: %s", why);
        free(why);
        return xl_fail_book(b, res, m);
    }
    if (json_array_size(table) < 2) {
        json_decref(table);
        return xl_fail_book(b, res, mb_strdup("Failed to read or process source data: Source data must have a "
                                          "header row and at least one data row."));
    }
    /* records: header text -> value (a repeated header keeps its last column) */
    json_t *head = json_array_get(table, 0), *headers = json_object(), *records = json_array();
    size_t i, j;
    json_t *v;
    char **hnames = mb_calloc(json_array_size(head) + 1, sizeof *hnames);
    json_array_foreach(head, j, v) {
        hnames[j] = py_str(v);
        json_object_set_new(headers, hnames[j], json_true());
    }
    for (i = 1; i < json_array_size(table); i++) {
        json_t *rec = json_object();
        json_array_foreach(json_array_get(table, i), j, v) json_object_set(rec, hnames[j], v);
        json_array_append_new(records, rec);
    }
    for (j = 0; j < json_array_size(head); j++) free(hnames[j]);
    free(hnames);
    json_decref(table);
    char *msg = NULL;
    char *low = lower_ascii(agg);
    if (strcmp(low, "sum") && strcmp(low, "average") && strcmp(low, "count") && strcmp(low, "min") &&
        strcmp(low, "max"))
        msg = mb_strdup("Invalid aggregation function. Must be one of: sum, average, count, min, max");
    free(low);
    /* every field must name a column (case-insensitive, suffixes dropped) */
    json_t *avail = json_object();
    const char *k;
    json_object_foreach(headers, k, v) {
        char *c = clean_field(k), *l = lower_ascii(c);
        json_object_set_new(avail, l, json_true());
        free(c), free(l);
    }
    json_t *lists[3] = {rows, values, columns};
    const char *kinds[3] = {"row", "value", "column"};
    for (int li = 0; li < 3 && !msg; li++) {
        json_array_foreach(json_is_array(lists[li]) ? lists[li] : NULL, j, v) {
            char *c = clean_field(json_string_value(v)), *l = lower_ascii(c);
            int ok = json_object_get(avail, l) != NULL;
            free(c), free(l);
            if (ok) continue;
            char *av = available(headers);
            msg = mb_asprintf("Invalid %s field '%s'. Available fields: %s", kinds[li], json_string_value(v), av);
            free(av);
            break;
        }
    }
    json_decref(avail);
    json_decref(headers);
    if (msg) {
        json_decref(records);
        return xl_fail_book(b, res, msg);
    }
    size_t nr = json_array_size(rows), nv = json_array_size(values);
    char **crow = mb_calloc(nr + 1, sizeof *crow), **cval = mb_calloc(nv + 1, sizeof *cval);
    for (j = 0; j < nr; j++) crow[j] = clean_field(json_string_value(json_array_get(rows, j)));
    for (j = 0; j < nv; j++) cval[j] = clean_field(json_string_value(json_array_get(values, j)));
    /* distinct row fields (first occurrence), each with its sorted distinct str() values */
    json_t *fields = json_array(), *fvals = json_array();
    unsigned long long ncombo = 1;
    for (j = 0; j < nr; j++) {
        int seen = 0;
        for (size_t q = 0; q < json_array_size(fields); q++)
            seen |= !strcmp(json_string_value(json_array_get(fields, q)), crow[j]);
        if (seen) continue;
        json_t *set = json_object();
        json_t *rec;
        json_array_foreach(records, i, rec) {
            json_t *fv = json_object_get(rec, crow[j]);
            char *t = fv ? py_str(fv) : mb_strdup("");
            json_object_set_new(set, t, json_true());
            free(t);
        }
        size_t n = json_object_size(set), q = 0;
        char **arr = mb_calloc(n ? n : 1, sizeof *arr);
        json_t *dummy;
        json_object_foreach(set, k, dummy) arr[q++] = mb_strdup(k);
        qsort(arr, n, sizeof *arr, cmp_str);
        json_t *list = json_array();
        for (q = 0; q < n; q++) {
            json_array_append_new(list, json_string(arr[q]));
            free(arr[q]);
        }
        free(arr);
        json_decref(set);
        json_array_append_new(fields, json_string(crow[j]));
        json_array_append_new(fvals, list);
        ncombo *= n ? n : 1;
        if (ncombo > XL_MAX_ROW) break;
    }
    unsigned long long ncells = ncombo * (nr + nv);
    if (ncombo + 1 > XL_MAX_ROW || ncells > XL_MAX_CELLS || nr + nv > XL_MAX_COL)
        msg = mb_asprintf("Failed to create pivot table: the summary would need %llu rows of %zu cells, "
                          "over the limit of %u cells", ncombo, nr + nv, XL_MAX_CELLS);
    xl_sheet *ps = NULL;
    char *pname = mb_asprintf("%s_pivot", sname);
    if (!msg && nr + nv == 0) msg = mb_strdup("Failed to create pivot table formatting: Invalid column index 0");
    if (!msg) {
        xl_sheet *old = xl_sheet_find(b, pname);
        if (old) xl_sheet_remove(b, old);
        ps = xl_sheet_add(b, pname, &why);
        if (!ps || xl_sheet_load(b, ps, &why)) msg = why, why = NULL;
    }
    unsigned bold = 0;
    if (!msg && xl_style_bold(b, &bold, &why)) msg = why, why = NULL;
    /* header row */
    unsigned col = 1;
    for (j = 0; !msg && j < nr + nv; j++, col++) {
        char *h = j < nr ? mb_strdup(crow[j]) : mb_asprintf("%s (%s)", cval[j - nr], agg);
        json_t *hv = json_string(h);
        free(h);
        if (xl_cell_set(b, ps, 1, col, hv, &why)) msg = why, why = NULL;
        else xl_cell_set_style(xl_cell_get_or_add(ps, 1, col), bold);
        json_decref(hv);
    }
    /* one row per combination of the row fields' values (odometer order) */
    size_t nf = json_array_size(fields);
    size_t *at = mb_calloc(nf + 1, sizeof *at);
    unsigned row = 2;
    for (unsigned long long cnum = 0; !msg && cnum < ncombo; cnum++, row++) {
        json_t *combo = json_object();
        for (size_t f = 0; f < nf; f++)
            json_object_set(combo, json_string_value(json_array_get(fields, f)),
                            json_array_get(json_array_get(fvals, f), at[f]));
        col = 1;
        for (j = 0; !msg && j < nr; j++, col++) {
            /* openpyxl stores an empty string as an empty cell */
            json_t *cv = json_object_get(combo, crow[j]);
            if (json_is_string(cv) && !*json_string_value(cv)) cv = NULL;
            json_t *nul = json_null();
            if (xl_cell_set(b, ps, row, col, cv ? cv : nul, &why)) msg = why, why = NULL;
            json_decref(nul);
        }
        for (j = 0; !msg && j < nv; j++, col++) {
            json_t *agv = aggregate(records, combo, cval[j], agg);
            if (xl_cell_set(b, ps, row, col, agv, &why)) msg = why, why = NULL;
            json_decref(agv);
        }
        json_decref(combo);
        for (size_t f = nf; f-- > 0;) {
            if (++at[f] < json_array_size(json_array_get(fvals, f))) break;
            at[f] = 0;
        }
    }
    free(at);
    if (!msg) {
        char tname[32];
        xl_random_name("PivotTable_", tname, sizeof tname);
        if (xl_table_add(b, ps, 1, 1, (unsigned)ncombo + 1, (unsigned)(nr + nv), tname,
                         "TableStyleMedium9", 1, &why)) {
            msg = mb_asprintf("Failed to create pivot table formatting: %s", why);
            free(why);
        }
    }
    for (j = 0; j < nr; j++) free(crow[j]);
    for (j = 0; j < nv; j++) free(cval[j]);
    free(crow), free(cval), free(pname);
    json_decref(fields), json_decref(fvals), json_decref(records);
    if (msg) return xl_fail_book(b, res, msg);
    if (xl_book_save(b, &why)) {
        char *m = mb_asprintf("Failed to save workbook: %s", why);
        free(why);
        return xl_fail_book(b, res, m);
    }
    xl_book_free(b);
    return xl_ok(res, "Summary table created successfully");
}
