/*
 * cells.c - cell values: reading them the way openpyxl does (types, dates,
 * shared strings, shared formulas) and writing them the way openpyxl's
 * `cell.value = v` does (numbers, booleans, formulas, strings - written as
 * inline strings so that sharedStrings.xml is left as it was).
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servers/common/pyschema.h"
#include "servers/excel/excel.h"

/* ------------------------------------------------------ shared strings */

/* The text of an <si>/<is>: its <t>, or the <t>s of its runs (phonetic
 * runs left out), as openpyxl's Text.content. */
static void rich_text(xmlNodePtr si, mb_buf *out)
{
    for (xmlNodePtr n = si->children; n; n = n->next) {
        if (xl_is(n, "t")) {
            xmlChar *t = xmlNodeGetContent(n);
            if (t) mb_buf_puts(out, (const char *)t);
            xmlFree(t);
        } else if (xl_is(n, "r")) {
            xmlNodePtr t = xl_child(n, "t");
            xmlChar *tx = t ? xmlNodeGetContent(t) : NULL;
            if (tx) mb_buf_puts(out, (const char *)tx);
            xmlFree(tx);
        }
    }
}

typedef struct find_rel {
    const char *suffix;
    char *target;
} find_rel;

static int by_type(const mb_ooxml_rel *rel, void *payload)
{
    find_rel *f = payload;
    if (!mb_str_has_suffix(rel->type, f->suffix)) return 0;
    f->target = mb_strdup(rel->target);
    return 1;
}

static void sst_load(xl_book *b)
{
    b->sst_loaded = 1;
    find_rel f = {.suffix = "/sharedStrings"};
    mb_ooxml_rels_each(b->pkg, b->wb_part, by_type, &f, NULL);
    if (!f.target) return;
    char *part = mb_ooxml_resolve(b->wb_part, f.target);
    free(f.target);
    xmlDocPtr doc = NULL;
    if (mb_ooxml_xml(b->pkg, part, &doc, NULL) || !doc) {
        free(part);
        return;
    }
    free(part);
    xmlNodePtr root = xmlDocGetRootElement(doc);
    size_t n = 0;
    for (xmlNodePtr si = root->children; si; si = si->next) n += xl_is(si, "si");
    b->sst = mb_calloc(n ? n : 1, sizeof *b->sst);
    for (xmlNodePtr si = root->children; si; si = si->next) {
        if (!xl_is(si, "si")) continue;
        mb_buf t = {0};
        rich_text(si, &t);
        b->sst[b->nsst++] = t.data ? mb_buf_steal(&t) : mb_strdup("");
    }
}

const char *xl_sst_get(xl_book *b, size_t i)
{
    if (!b->sst_loaded) sst_load(b);
    return i < b->nsst ? b->sst[i] : NULL;
}

/* ---------------------------------------------------------------- dates */

static int is_leap(long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* days since 0001-01-01 (proleptic Gregorian) -> y, m, d */
static void civil_from_ordinal(long n, long *y, int *m, int *d)
{
    /* n: days since 0001-01-01; Howard Hinnant's civil_from_days on the epoch 1970 */
    long z = n - 719162 + 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static long ordinal(long y, int m, int d)
{
    static const int cum[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    long yy = y - 1;
    long n = yy * 365 + yy / 4 - yy / 100 + yy / 400 + cum[m - 1] + d - 1;
    if (m > 2 && is_leap(y)) n++;
    return n;
}

static void print_time(mb_buf *out, long long us)
{
    long long s = us / 1000000, frac = us % 1000000;
    mb_buf_printf(out, "%02lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
    if (frac) mb_buf_printf(out, ".%06lld", frac);
}

/* Python's str() of what openpyxl's from_excel returns. 0, or -1 when the
 * serial is outside what datetime can hold (openpyxl then shows #VALUE!). */
static int serial_to_text(double value, int date1904, int timedelta, mb_buf *out)
{
    if (!isfinite(value) || fabs(value) > 2958465.0 * 1.01) return -1;
    if (timedelta) {
        /* timedelta(days=value), rounded to milliseconds */
        long long us = llround(value * 86400e6);
        long long secs = (long long)floor((double)us / 1e6);
        long long micro = us - secs * 1000000;
        if (micro) micro = (long long)nearbyint((double)micro / 1000.0) * 1000;
        us = secs * 1000000 + micro;
        long long days = (long long)floor((double)us / 86400e6);
        long long rest = us - days * 86400000000LL;
        if (days) mb_buf_printf(out, "%lld day%s, ", days, (days == 1 || days == -1) ? "" : "s");
        long long s = rest / 1000000, frac = rest % 1000000;
        mb_buf_printf(out, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
        if (frac) mb_buf_printf(out, ".%06lld", frac);
        return 0;
    }
    double day = floor(value);
    double fraction = value - day;
    long long ms = (long long)nearbyint(fraction * 86400.0 * 1000.0);
    long long diff_us = ms * 1000;
    long long extra_days = diff_us / 86400000000LL;
    diff_us -= extra_days * 86400000000LL;
    if (value >= 0 && value < 1 && extra_days == 0) {
        print_time(out, diff_us);
        return 0;
    }
    long epoch = date1904 ? ordinal(1904, 1, 1) : ordinal(1899, 12, 30);
    if (!date1904 && value > 0 && value < 60) day += 1;
    long n = epoch + (long)day + (long)extra_days;
    if (n < 0 || n > ordinal(9999, 12, 31)) return -1;
    long y;
    int m, d;
    civil_from_ordinal(n, &y, &m, &d);
    mb_buf_printf(out, "%04ld-%02d-%02d ", y, m, d);
    print_time(out, diff_us);
    return 0;
}

/* ------------------------------------------------------ shared formulas */

/* Shifts the relative parts of A1 references in `f` by (dr, dc), as
 * openpyxl's Translator does for the cells of a shared formula. */
static char *translate(const char *f, long dr, long dc)
{
    mb_buf out = {0};
    size_t n = strlen(f);
    for (size_t i = 0; i < n;) {
        char ch = f[i];
        if (ch == '"' || ch == '\'') { /* string literal or quoted sheet name */
            size_t j = i + 1;
            while (j < n) {
                if (f[j] == ch) {
                    if (j + 1 < n && f[j + 1] == ch) {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j++;
            }
            if (j < n) j++;
            mb_buf_append(&out, f + i, j - i);
            i = j;
            continue;
        }
        int prev_word = i > 0 && (isalnum((unsigned char)f[i - 1]) || f[i - 1] == '_' ||
                                  f[i - 1] == '.');
        if (!prev_word && (ch == '$' || isalpha((unsigned char)ch))) {
            size_t j = i;
            int cabs = 0, rabs = 0;
            if (f[j] == '$') cabs = 1, j++;
            size_t ls = j;
            while (j < n && isalpha((unsigned char)f[j]) && j - ls < 4) j++;
            size_t nl = j - ls;
            if (j < n && f[j] == '$') rabs = 1, j++;
            size_t ds = j;
            while (j < n && isdigit((unsigned char)f[j])) j++;
            size_t nd = j - ds;
            int next_word = j < n && (isalnum((unsigned char)f[j]) || f[j] == '_' || f[j] == '(' ||
                                      f[j] == '.');
            unsigned col = nl >= 1 && nl <= 3 ? xl_col_index(f + ls, nl) : 0;
            if (col && nd >= 1 && nd <= 7 && !next_word) {
                long r = strtol(f + ds, NULL, 10);
                long c = (long)col;
                if (!cabs) c += dc;
                if (!rabs) r += dr;
                if (c < 1 || r < 1) {
                    mb_buf_puts(&out, "#REF!");
                } else {
                    char l[4];
                    xl_col_letter((unsigned)c, l);
                    mb_buf_printf(&out, "%s%s%s%ld", cabs ? "$" : "", l, rabs ? "$" : "", r);
                }
                i = j;
                continue;
            }
            /* a name or function: copy the word whole */
            size_t k = i;
            if (f[k] == '$') k++;
            while (k < n && (isalnum((unsigned char)f[k]) || f[k] == '_' || f[k] == '.')) k++;
            if (k == i) k = i + 1;
            mb_buf_append(&out, f + i, k - i);
            i = k;
            continue;
        }
        mb_buf_putc(&out, ch);
        i++;
    }
    if (!out.data) mb_buf_puts(&out, "");
    return mb_buf_steal(&out);
}

/* The master of shared formula `si` on this sheet: the first <f t="shared"
 * si=..> with text, in document order. */
static char *shared_formula(xl_sheet *s, const char *si, unsigned row, unsigned col)
{
    for (size_t i = 0; i < s->n; i++) {
        xl_row *r = &s->rows[i];
        for (size_t k = 0; k < r->n; k++) {
            xmlNodePtr f = xl_child(r->cells[k].node, "f");
            if (!f) continue;
            const char *t = xl_attr(f, "t"), *fsi = xl_attr(f, "si");
            if (!t || strcmp(t, "shared") || !fsi || strcmp(fsi, si)) continue;
            xmlChar *text = xmlNodeGetContent(f);
            if (!text || !*text) {
                xmlFree(text);
                continue;
            }
            char *res = translate((const char *)text, (long)row - (long)r->row,
                                  (long)col - (long)r->cells[k].col);
            xmlFree(text);
            return res;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- read */

unsigned xl_cell_style(xmlNodePtr c)
{
    const char *s = xl_attr(c, "s");
    return s ? (unsigned)strtoul(s, NULL, 10) : 0;
}

void xl_cell_set_style(xmlNodePtr c, unsigned xf)
{
    if (!xf) {
        xmlUnsetProp(c, BAD_CAST "s");
        return;
    }
    char buf[16];
    snprintf(buf, sizeof buf, "%u", xf);
    xmlSetProp(c, BAD_CAST "s", BAD_CAST buf);
}

static json_t *number(const char *text)
{
    if (strpbrk(text, ".eE")) return json_real(strtod(text, NULL));
    char *end;
    long long v = strtoll(text, &end, 10);
    if (*end) return json_real(strtod(text, NULL));
    return json_integer(v);
}

json_t *xl_cell_value(xl_book *b, xl_sheet *s, xmlNodePtr c, unsigned row, unsigned col)
{
    if (!c) return json_null();
    const char *t = xl_attr(c, "t");
    if (!t) t = "n";
    xmlNodePtr f = xl_child(c, "f");
    if (f) {
        xmlChar *text = xmlNodeGetContent(f);
        const char *ft = xl_attr(f, "t");
        json_t *res = NULL;
        if (ft && !strcmp(ft, "shared") && (!text || !*text)) {
            const char *si = xl_attr(f, "si");
            char *tr = si ? shared_formula(s, si, row, col) : NULL;
            if (tr) {
                char *v = mb_asprintf("=%s", tr);
                res = json_string(v);
                free(v);
                free(tr);
            }
        }
        if (!res) {
            char *v = mb_asprintf("=%s", text ? (const char *)text : "");
            res = json_string(v);
            free(v);
        }
        xmlFree(text);
        return res ? res : json_null();
    }
    if (!strcmp(t, "inlineStr")) {
        xmlNodePtr is = xl_child(c, "is");
        if (!is) return json_null();
        mb_buf tx = {0};
        rich_text(is, &tx);
        json_t *res = json_string(tx.data ? tx.data : "");
        mb_buf_free(&tx);
        return res ? res : json_null();
    }
    xmlNodePtr v = xl_child(c, "v");
    xmlChar *vt = v ? xmlNodeGetContent(v) : NULL;
    if (!vt || !*vt) {
        xmlFree(vt);
        return json_null();
    }
    const char *text = (const char *)vt;
    json_t *res = NULL;
    if (!strcmp(t, "n")) {
        res = number(text);
        unsigned xf = xl_cell_style(c);
        if (xf && !xl_styles_load(b, NULL)) {
            const char *fmt = xl_xf_format(b, xf);
            if (xl_is_date_format(fmt)) {
                mb_buf d = {0};
                double dv = json_number_value(res);
                if (serial_to_text(dv, b->date1904, xl_is_timedelta_format(fmt), &d) == 0) {
                    json_decref(res);
                    res = json_string(d.data);
                } else {
                    json_decref(res);
                    res = json_string("#VALUE!");
                }
                mb_buf_free(&d);
            }
        }
    } else if (!strcmp(t, "s")) {
        const char *str = xl_sst_get(b, strtoul(text, NULL, 10));
        res = str ? json_string(str) : json_null();
    } else if (!strcmp(t, "b")) {
        res = json_boolean(strtol(text, NULL, 10) != 0);
    } else if (!strcmp(t, "d")) {
        /* ISO 8601 stored date: shown as Python prints the datetime */
        char buf[40];
        snprintf(buf, sizeof buf, "%s", text);
        char *tpos = strchr(buf, 'T');
        if (tpos) *tpos = ' ';
        size_t bl = strlen(buf);
        if (bl == 10) snprintf(buf + bl, sizeof buf - bl, " 00:00:00");
        res = json_string(buf);
    } else {
        res = json_string(text); /* str, e */
    }
    xmlFree(vt);
    return res ? res : json_null();
}

/* --------------------------------------------------------------- write */

static int illegal_char(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p <= 8) || *p == 11 || *p == 12 || (*p >= 14 && *p <= 31)) return 1;
    return 0;
}

static void clear_value(xmlNodePtr c)
{
    for (xmlNodePtr n = c->children, next; n; n = next) {
        next = n->next;
        if (xl_is(n, "f") || xl_is(n, "v") || xl_is(n, "is")) {
            xmlUnlinkNode(n);
            xmlFreeNode(n);
        }
    }
    xmlUnsetProp(c, BAD_CAST "t");
}

static void add_text_child(xmlNodePtr parent, const char *name, const char *text)
{
    xmlNodePtr el = xl_new_el(parent, name);
    xmlNodePtr tn = xmlNewText(BAD_CAST text);
    xmlAddChild(el, tn);
    /* before an <extLst> if any */
    xmlNodePtr ext = xl_child(parent, "extLst");
    if (ext) xmlAddPrevSibling(ext, el);
    else xmlAddChild(parent, el);
}

int xl_cell_set(xl_book *b, xl_sheet *s, unsigned row, unsigned col, json_t *v, char **why)
{
    if (json_is_array(v) || json_is_object(v)) {
        mb_buf r = {0};
        mb_py_repr_json(&r, v);
        *why = mb_asprintf("Cannot convert %s to Excel", r.data);
        mb_buf_free(&r);
        return -1;
    }
    if (json_is_string(v) && illegal_char(json_string_value(v))) {
        *why = mb_asprintf("%s cannot be used in worksheets.", json_string_value(v));
        return -1;
    }
    xmlNodePtr c = xl_cell_get_or_add(s, row, col);
    clear_value(c);
    s->dirty = 1;
    b->stale = 1;
    if (json_is_null(v)) return 0;
    if (json_is_boolean(v)) {
        xmlSetProp(c, BAD_CAST "t", BAD_CAST "b");
        add_text_child(c, "v", json_is_true(v) ? "1" : "0");
    } else if (json_is_integer(v)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        add_text_child(c, "v", buf);
    } else if (json_is_real(v)) {
        mb_buf num = {0};
        xl_py_float(&num, json_real_value(v));
        add_text_child(c, "v", num.data);
        mb_buf_free(&num);
    } else {
        const char *str = json_string_value(v);
        if (strlen(str) > 1 && str[0] == '=') {
            add_text_child(c, "f", str + 1);
        } else if (!*str) {
            /* openpyxl keeps "" as a string cell but writes it without
             * content (<c t="inlineStr"/>), which reads back as empty */
            xmlSetProp(c, BAD_CAST "t", BAD_CAST "inlineStr");
        } else {
            xmlSetProp(c, BAD_CAST "t", BAD_CAST "inlineStr");
            xmlNodePtr is = xl_new_el(c, "is");
            xmlNodePtr ext = xl_child(c, "extLst");
            if (ext) xmlAddPrevSibling(ext, is);
            else xmlAddChild(c, is);
            xmlNodePtr t = xmlNewChild(is, c->ns, BAD_CAST "t", NULL);
            xmlAddChild(t, xmlNewText(BAD_CAST str));
            size_t n = strlen(str);
            if (n && (isspace((unsigned char)str[0]) || isspace((unsigned char)str[n - 1])))
                xmlNodeSetSpacePreserve(t, 1);
        }
    }
    return 0;
}
