/*
 * tools_data.c - the data and workbook tools: read_data_from_excel,
 * write_data_to_excel, create_workbook, create_worksheet,
 * get_workbook_metadata, apply_formula, validate_formula_syntax,
 * validate_excel_range, get_data_validation_info. Texts are upstream's
 * (excel_mcp/data.py, workbook.py, calculations.py, validation.py,
 * cell_validation.py and server.py).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "servers/common/pyfmt.h"
#include "servers/common/pyschema.h"
#include "servers/excel/tools.h"

/* ------------------------------------------------------------- helpers */

int xl_ok(mb_mcp_result *res, const char *text)
{
    mb_mcp_text(res, text);
    mb_mcp_structured(res, json_pack("{s:s}", "result", text));
    return 0;
}

int xl_okf(mb_mcp_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    xl_ok(res, b.data ? b.data : "");
    mb_buf_free(&b);
    return 0;
}

int xl_error(mb_mcp_result *res, const char *msg) { return xl_okf(res, "Error: %s", msg); }

int xl_fail_book(xl_book *b, mb_mcp_result *res, char *why)
{
    int rc = xl_error(res, why);
    free(why);
    xl_book_free(b);
    return rc;
}

int xl_save_ok(xl_book *b, mb_mcp_result *res, const char *text)
{
    char *why = NULL;
    int rc = xl_book_save(b, &why) ? xl_error(res, why) : xl_ok(res, text);
    free(why);
    xl_book_free(b);
    return rc;
}

const char *xl_str(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

int xl_bool(json_t *args, const char *key) { return json_is_true(json_object_get(args, key)); }

long long xl_int(json_t *args, const char *key)
{
    return json_integer_value(json_object_get(args, key));
}

/* Opens the workbook a tool names. Returns 1 and fills *b, or 0 after the
 * call has been answered: as "Error: msg" when upstream catches the failure
 * (`caught`), as a raised exception otherwise. */
static int begin(mb_mcp_call *call, mb_mcp_result *res, json_t *args, int caught, xl_book **b,
                 int *rc)
{
    const char *given = xl_str(args, "filepath");
    char *real = NULL;
    *b = NULL;
    *rc = xl_path(call, res, given, 0, &real);
    if (*rc) return 0;
    char *why = NULL;
    if (xl_book_open(real, given, b, &why)) {
        *rc = caught ? xl_error(res, why) : mb_mcp_fail_str(res, why);
        free(why);
        free(real);
        return 0;
    }
    free(real);
    return 1;
}

static int finish(xl_book *b, mb_mcp_result *res, int caught, const char *text)
{
    char *why = NULL;
    int rc;
    if (xl_book_save(b, &why)) rc = caught ? xl_error(res, why) : mb_mcp_fail_str(res, why);
    else rc = xl_ok(res, text);
    free(why);
    xl_book_free(b);
    return rc;
}

static char *sheet_not_found(const char *name) { return mb_asprintf("Sheet '%s' not found", name); }

/* parse_cell_range(f"{c}:{c}") failures, as data.py words them */
static char *cell_format_error(const char *what, const char *ref)
{
    size_t i = 0;
    while (ref[i] && isalpha((unsigned char)ref[i])) i++;
    if (i > 3 && isdigit((unsigned char)ref[i])) {
        char *up = mb_strndup(ref, i);
        for (char *p = up; *p; p++) *p = (char)toupper((unsigned char)*p);
        char *m = mb_asprintf("Invalid %s cell format: %s is not a valid column name", what, up);
        free(up);
        return m;
    }
    return mb_asprintf("Invalid %s cell format: Invalid cell reference: %s:%s", what, ref, ref);
}

/* ---------------------------------------------------- data validations */

typedef struct dv {
    xmlNodePtr node;
    unsigned (*ranges)[4];
    size_t n;
} dv;

static dv *dv_list(xl_sheet *s, size_t *count)
{
    xmlNodePtr dvs = xl_child(xmlDocGetRootElement(s->doc), "dataValidations");
    size_t n = 0;
    for (xmlNodePtr d = dvs ? dvs->children : NULL; d; d = d->next) n += xl_is(d, "dataValidation");
    dv *list = mb_calloc(n ? n : 1, sizeof *list);
    *count = 0;
    for (xmlNodePtr d = dvs ? dvs->children : NULL; d; d = d->next) {
        if (!xl_is(d, "dataValidation")) continue;
        dv *v = &list[(*count)++];
        v->node = d;
        const char *sq = xl_attr(d, "sqref");
        char *copy = mb_strdup(sq ? sq : ""), *save = NULL;
        for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            unsigned r1, c1, r2, c2;
            if (xl_parse_range(tok, &r1, &c1, &r2, &c2)) continue;
            v->ranges = mb_realloc(v->ranges, (v->n + 1) * sizeof *v->ranges);
            v->ranges[v->n][0] = r1, v->ranges[v->n][1] = c1;
            v->ranges[v->n][2] = r2, v->ranges[v->n][3] = c2;
            v->n++;
        }
        free(copy);
    }
    return list;
}

static void dv_free(dv *list, size_t n)
{
    for (size_t i = 0; i < n; i++) free(list[i].ranges);
    free(list);
}

static char *child_text(xmlNodePtr n, const char *name)
{
    xmlNodePtr c = xl_child(n, name);
    xmlChar *t = c ? xmlNodeGetContent(c) : NULL;
    char *r = t && *t ? mb_strdup((const char *)t) : NULL;
    xmlFree(t);
    return r;
}

/* cell_validation._extract_list_values */
static json_t *list_values(xl_book *b, xl_sheet *s, const char *formula)
{
    size_t n = strlen(formula);
    size_t a = 0;
    while (a < n && formula[a] == '"') a++;
    while (n > a && formula[n - 1] == '"') n--;
    char *f = mb_strndup(formula + a, n - a);
    json_t *out = json_array();
    if (strchr(f, ',')) {
        char *save = NULL;
        char *copy = mb_strdup(f);
        /* split keeps empty fields; strip spaces then quotes; drop empties */
        char *p = copy;
        for (;;) {
            char *comma = strchr(p, ',');
            if (comma) *comma = 0;
            char *v = p;
            while (isspace((unsigned char)*v)) v++;
            size_t l = strlen(v);
            while (l && isspace((unsigned char)v[l - 1])) v[--l] = 0;
            while (*v == '"') v++, l--;
            while (l && v[l - 1] == '"') v[--l] = 0;
            if (*v) json_array_append_new(out, json_string(v));
            if (!comma) break;
            p = comma + 1;
        }
        (void)save;
        free(copy);
    } else if (strchr(f, ':') || f[0] == '$') {
        const char *ref = f[0] == '=' ? f + 1 : f;
        unsigned r1, c1, r2, c2;
        char *plain = mb_strdup(ref);
        char *w = plain;
        for (const char *p = ref; *p; p++)
            if (*p != '$') *w++ = *p;
        *w = 0;
        if (strchr(ref, '!') || xl_parse_range(plain, &r1, &c1, &r2, &c2)) {
            char *m = mb_asprintf("Range: %s (resolution error)", formula + a);
            json_array_append_new(out, json_string(m));
            free(m);
        } else {
            for (unsigned r = r1; r <= r2; r++)
                for (unsigned c = c1; c <= c2; c++) {
                    json_t *v = xl_cell_value(b, s, xl_cell_get(s, r, c), r, c);
                    if (json_is_string(v)) json_array_append(out, v);
                    else if (!json_is_null(v)) {
                        mb_buf t = {0};
                        if (json_is_real(v)) xl_py_float(&t, json_real_value(v));
                        else if (json_is_integer(v)) mb_buf_printf(&t, "%lld", (long long)json_integer_value(v));
                        else mb_buf_puts(&t, json_is_true(v) ? "True" : "False");
                        json_array_append_new(out, json_string(t.data));
                        mb_buf_free(&t);
                    }
                    json_decref(v);
                }
            if (!json_array_size(out)) {
                char *m = mb_asprintf("Range: %s (empty or unresolvable)", f);
                json_array_append_new(out, json_string(m));
                free(m);
            }
        }
        free(plain);
    } else {
        json_array_append_new(out, json_string(f));
    }
    free(f);
    return out;
}

static json_t *attr_or_null(xmlNodePtr n, const char *name)
{
    const char *v = xl_attr(n, name);
    return v ? json_string(v) : json_null();
}

static int attr_bool(xmlNodePtr n, const char *name)
{
    const char *v = xl_attr(n, name);
    return v && (!strcmp(v, "1") || !strcmp(v, "true"));
}

static json_t *dv_for_cell(xl_book *b, xl_sheet *s, dv *list, size_t n, unsigned row, unsigned col,
                           const char *addr)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < list[i].n; k++) {
            unsigned *r = list[i].ranges[k];
            if (row < r[0] || row > r[2] || col < r[1] || col > r[3]) continue;
            xmlNodePtr d = list[i].node;
            json_t *o = json_object();
            json_object_set_new(o, "cell", json_string(addr));
            json_object_set_new(o, "has_validation", json_true());
            json_object_set_new(o, "validation_type", attr_or_null(d, "type"));
            json_object_set_new(o, "allow_blank", json_boolean(attr_bool(d, "allowBlank")));
            static const char *const opt[][2] = {{"operator", "operator"},
                                                 {"prompt", "prompt"},
                                                 {"promptTitle", "prompt_title"},
                                                 {"error", "error_message"},
                                                 {"errorTitle", "error_title"}};
            for (size_t j = 0; j < 5; j++) {
                const char *v = xl_attr(d, opt[j][0]);
                if (v && *v) json_object_set_new(o, opt[j][1], json_string(v));
            }
            char *f1 = child_text(d, "formula1"), *f2 = child_text(d, "formula2");
            const char *type = xl_attr(d, "type");
            if (type && !strcmp(type, "list") && f1) {
                json_object_set_new(o, "allowed_values", list_values(b, s, f1));
            } else if (f1) {
                json_object_set_new(o, "formula1", json_string(f1));
                if (f2) json_object_set_new(o, "formula2", json_string(f2));
            }
            free(f1), free(f2);
            return o;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------- read_data */

int xl_t_read_data(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    int rc;
    if (!begin(call, res, args, 0, &b, &rc)) return rc;
    const char *sheet = xl_str(args, "sheet_name");
    char *start = mb_strdup(xl_str(args, "start_cell"));
    char *end = xl_str(args, "end_cell") ? mb_strdup(xl_str(args, "end_cell")) : NULL;
    char *why = NULL;
    json_t *out = NULL;
    xl_sheet *s = xl_sheet_find(b, sheet);
    if (!s) {
        why = sheet_not_found(sheet);
        goto fail;
    }
    if (xl_sheet_load(b, s, &why)) goto fail;
    char *colon = strchr(start, ':');
    if (colon) {
        if (strchr(colon + 1, ':')) {
            why = mb_strdup("too many values to unpack (expected 2)");
            goto fail;
        }
        free(end);
        end = mb_strdup(colon + 1);
        *colon = 0;
    }
    unsigned sr, sc, er, ec;
    if (xl_parse_cell(start, &sr, &sc)) {
        why = cell_format_error("start", start);
        goto fail;
    }
    unsigned min_r, min_c, max_r, max_c;
    xl_sheet_extent(s, &min_r, &min_c, &max_r, &max_c);
    if (end && *end) {
        if (xl_parse_cell(end, &er, &ec)) {
            why = cell_format_error("end", end);
            goto fail;
        }
    } else {
        json_t *a1 = xl_cell_value(b, s, xl_cell_get(s, 1, 1), 1, 1);
        int empty = max_r == 1 && max_c == 1 && json_is_null(a1);
        json_decref(a1);
        if (empty) {
            er = sr, ec = sc;
        } else {
            er = max_r, ec = max_c;
            if (!strcmp(start, "A1")) sr = min_r, sc = min_c;
        }
    }
    out = json_object();
    json_t *cells = json_array();
    if (sr > max_r || sc > max_c) {
        json_decref(cells);
        goto nodata;
    }
    char rng[40], a[16], bb[16];
    xl_cell_name(sr, sc, a);
    xl_cell_name(er, ec, bb);
    snprintf(rng, sizeof rng, "%s:%s", a, bb);
    if (er >= sr && ec >= sc && (unsigned long long)(er - sr + 1) * (ec - sc + 1) > XL_MAX_CELLS) {
        json_decref(cells);
        why = mb_asprintf("range %s holds %llu cells, more than the %u one call may read; read "
                          "it in parts with start_cell and end_cell",
                          rng, (unsigned long long)(er - sr + 1) * (ec - sc + 1), XL_MAX_CELLS);
        goto fail;
    }
    json_object_set_new(out, "range", json_string(rng));
    json_object_set_new(out, "sheet_name", json_string(sheet));
    size_t ndv;
    dv *dvs = dv_list(s, &ndv);
    for (unsigned r = sr; r <= er; r++) {
        if (mb_mcp_call_cancelled(call)) break;
        for (unsigned c = sc; c <= ec; c++) {
            char addr[16];
            xl_cell_name(r, c, addr);
            json_t *cell = json_object();
            json_object_set_new(cell, "address", json_string(addr));
            json_object_set_new(cell, "value", xl_cell_value(b, s, xl_cell_get(s, r, c), r, c));
            json_object_set_new(cell, "row", json_integer(r));
            json_object_set_new(cell, "column", json_integer(c));
            json_t *v = dv_for_cell(b, s, dvs, ndv, r, c, addr);
            json_object_set_new(cell, "validation", v ? v : json_pack("{s:b}", "has_validation", 0));
            json_array_append_new(cells, cell);
        }
    }
    dv_free(dvs, ndv);
    json_object_set_new(out, "cells", cells);
    if (!json_array_size(cells)) goto nodata;
    char *text = mb_py_json_dumps(out, 2, 1);
    xl_ok(res, text);
    free(text);
    goto done;
nodata:
    xl_ok(res, "No data found in specified range");
    goto done;
fail:
    rc = mb_mcp_fail_str(res, why);
done:
    json_decref(out);
    free(why), free(start), free(end);
    xl_book_free(b);
    return rc;
}

/* ---------------------------------------------------------- write_data */

int xl_t_write_data(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    json_t *data = json_object_get(args, "data");
    const char *given = xl_str(args, "filepath");
    char *real = NULL;
    int rc = xl_path(call, res, given, 0, &real);
    if (rc) return rc;
    free(real);
    if (!json_array_size(data)) return xl_error(res, "No data provided to write");
    xl_book *b;
    if (!begin(call, res, args, 1, &b, &rc)) return rc;
    char *why = NULL;
    const char *name = xl_str(args, "sheet_name");
    xl_sheet *s;
    if (!name || !*name) {
        s = b->nsheets ? &b->sheets[b->active] : NULL;
        if (!s) {
            why = mb_strdup("No active sheet found in workbook");
            goto fail;
        }
    } else if (!(s = xl_sheet_find(b, name))) {
        if (strpbrk(name, "\\*?:/[]")) {
            char bad[2] = {*strpbrk(name, "\\*?:/[]"), 0};
            why = mb_asprintf("Invalid character %s found in sheet title", bad);
            goto fail;
        }
        s = xl_sheet_add(b, name, &why);
        if (!s) goto fail;
    }
    if (xl_sheet_load(b, s, &why)) goto fail;
    const char *start = xl_str(args, "start_cell");
    unsigned sr, sc;
    if (xl_parse_cell(start, &sr, &sc)) {
        why = mb_asprintf("Invalid start cell format: Invalid cell reference: %s", start);
        goto fail;
    }
    size_t total = 0;
    for (size_t i = 0; i < json_array_size(data); i++) total += json_array_size(json_array_get(data, i));
    if (total > XL_MAX_CELLS) {
        why = mb_asprintf("data holds %zu cells, more than the %u one call may write", total,
                          XL_MAX_CELLS);
        goto fail;
    }
    for (size_t i = 0; i < json_array_size(data); i++) {
        json_t *row = json_array_get(data, i);
        for (size_t j = 0; j < json_array_size(row); j++) {
            unsigned long r = sr + i, c = sc + j;
            if (r < 1 || c < 1) {
                why = mb_strdup("Row or column values must be at least 1");
                goto fail;
            }
            if (r > XL_MAX_ROW || c > XL_MAX_COL) {
                why = mb_asprintf("cell row %lu, column %lu lies outside the sheet (at most %u rows "
                                  "and %u columns)", r, c, XL_MAX_ROW, XL_MAX_COL);
                goto fail;
            }
            json_t *v = json_array_get(row, j);
            /* upstream's ws.cell(row, column, value=None) leaves the cell as it is */
            if (json_is_null(v)) continue;
            if (xl_cell_set(b, s, (unsigned)r, (unsigned)c, v, &why)) goto fail;
        }
    }
    xl_sheet_touch(s);
    char *msg = mb_asprintf("Data written to %s", s->name);
    rc = finish(b, res, 1, msg);
    free(msg);
    return rc;
fail:
    return xl_fail_book(b, res, why);
}

/* ----------------------------------------------------- create_workbook */

int xl_t_create_workbook(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *given = xl_str(args, "filepath");
    char *real = NULL;
    int rc = xl_path(call, res, given, 1, &real);
    if (rc) return rc;
    char *dir = mb_strdup(real);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) *slash = 0;
    mb_err err = {0};
    if (slash && slash != dir && mb_mkdir_p(dir, 0755, &err)) {
        char *m = mb_asprintf("Failed to create workbook: %s", err.msg);
        rc = xl_error(res, m);
        free(m);
        free(dir), free(real);
        return rc;
    }
    free(dir);
    xl_book *b = xl_book_new(real, "Sheet1");
    char *why = NULL;
    if (xl_book_save(b, &why)) {
        char *m = mb_asprintf("Failed to create workbook: %s", why);
        rc = xl_error(res, m);
        free(m);
    } else {
        rc = xl_okf(res, "Created workbook at %s", given);
    }
    free(why);
    xl_book_free(b);
    free(real);
    return rc;
}

/* ---------------------------------------------------- create_worksheet */

int xl_t_create_worksheet(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    int rc;
    if (!begin(call, res, args, 1, &b, &rc)) return rc;
    const char *name = xl_str(args, "sheet_name");
    char *why = NULL;
    if (xl_sheet_find(b, name)) {
        why = mb_asprintf("Sheet %s already exists", name);
    } else if (strpbrk(name, "\\*?:/[]")) {
        char bad[2] = {*strpbrk(name, "\\*?:/[]"), 0};
        why = mb_asprintf("Invalid character %s found in sheet title", bad);
    } else if (!xl_sheet_add(b, name, &why)) {
        /* why set */
    } else {
        char *msg = mb_asprintf("Sheet %s created successfully", name);
        rc = finish(b, res, 1, msg);
        free(msg);
        return rc;
    }
    return xl_fail_book(b, res, why);
}

/* ------------------------------------------------------------ metadata */

int xl_t_metadata(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *given = xl_str(args, "filepath");
    char *real = NULL;
    int rc = xl_path(call, res, given, 0, &real);
    if (rc) return rc;
    struct stat st;
    if (stat(real, &st) != 0) {
        free(real);
        char *m = mb_asprintf("File not found: %s", given);
        rc = xl_error(res, m);
        free(m);
        return rc;
    }
    free(real);
    xl_book *b;
    if (!begin(call, res, args, 1, &b, &rc)) return rc;
    json_t *info = json_object();
    const char *base = strrchr(given, '/');
    json_object_set_new(info, "filename", json_string(base ? base + 1 : given));
    json_t *names = json_array();
    for (size_t i = 0; i < b->nsheets; i++) json_array_append_new(names, json_string(b->sheets[i].name));
    json_object_set_new(info, "sheets", names);
    json_object_set_new(info, "size", json_integer((json_int_t)st.st_size));
    json_object_set_new(info, "modified",
                        json_real((double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec * 1e-9));
    char *why = NULL;
    if (xl_bool(args, "include_ranges")) {
        json_t *ranges = json_object();
        for (size_t i = 0; i < b->nsheets; i++) {
            xl_sheet *s = &b->sheets[i];
            if (!s->is_worksheet) continue;
            if (xl_sheet_load(b, s, &why)) break;
            unsigned r1, c1, r2, c2;
            xl_sheet_extent(s, &r1, &c1, &r2, &c2);
            char l[4], rng[32];
            xl_col_letter(c2, l);
            snprintf(rng, sizeof rng, "A1:%s%u", l, r2);
            json_object_set_new(ranges, s->name, json_string(rng));
        }
        json_object_set_new(info, "used_ranges", ranges);
    }
    if (why) {
        rc = xl_error(res, why);
    } else {
        mb_buf t = {0};
        mb_py_repr_json(&t, info);
        rc = xl_ok(res, t.data);
        mb_buf_free(&t);
    }
    free(why);
    json_decref(info);
    xl_book_free(b);
    return rc;
}

/* ------------------------------------------------------------- formulas */

/* validation.validate_formula */
static const char *formula_problem(const char *f)
{
    if (f[0] != '=') return "Formula must start with '='";
    int parens = 0;
    for (const char *p = f + 1; *p; p++) {
        if (*p == '(') parens++;
        else if (*p == ')') parens--;
        if (parens < 0) return "Unmatched closing parenthesis";
    }
    if (parens > 0) return "Unclosed parenthesis";
    static const char *const unsafe[] = {"INDIRECT", "HYPERLINK", "WEBSERVICE", "DGET", "RTD", NULL};
    for (const char *p = f + 1; *p; p++) {
        if (!isupper((unsigned char)*p) || (p > f + 1 && isupper((unsigned char)p[-1]))) continue;
        const char *q = p;
        while (isupper((unsigned char)*q)) q++;
        if (*q != '(') continue;
        for (int i = 0; unsafe[i]; i++)
            if ((size_t)(q - p) == strlen(unsafe[i]) && !strncmp(p, unsafe[i], (size_t)(q - p))) {
                static char buf[64];
                snprintf(buf, sizeof buf, "Unsafe function: %s", unsafe[i]);
                return buf;
            }
    }
    return NULL;
}

/* validate_formula_in_cell_operation: NULL when valid (then *message is set)
 * or the error text (caller frees). */
static char *check_formula(xl_book *b, const char *sheet, const char *cell, const char *formula,
                           char **message)
{
    xl_sheet *s = xl_sheet_find(b, sheet);
    if (!s) return sheet_not_found(sheet);
    if (!xl_valid_cell_ref(cell)) return mb_asprintf("Invalid cell reference: %s", cell);
    const char *p = formula_problem(formula);
    if (p) return mb_asprintf("Invalid formula syntax: %s", p);
    char *why = NULL;
    if (xl_sheet_load(b, s, &why)) return why;
    unsigned r, c;
    if (xl_parse_cell(cell, &r, &c)) return mb_asprintf("Invalid cell reference: %s", cell);
    json_t *cur = xl_cell_value(b, s, xl_cell_get(s, r, c), r, c);
    const char *cs = json_string_value(cur);
    if (cs && cs[0] == '=') {
        *message = mb_strdup(strcmp(cs, formula) ? "Formula is valid but doesn't match cell content"
                                                 : "Formula is valid and matches cell content");
    } else {
        *message = mb_strdup("Formula is valid but cell contains no formula");
    }
    json_decref(cur);
    return NULL;
}

int xl_t_validate_formula(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    int rc;
    if (!begin(call, res, args, 1, &b, &rc)) return rc;
    char *msg = NULL;
    char *why = check_formula(b, xl_str(args, "sheet_name"), xl_str(args, "cell"),
                              xl_str(args, "formula"), &msg);
    rc = why ? xl_error(res, why) : xl_ok(res, msg);
    free(why), free(msg);
    xl_book_free(b);
    return rc;
}

int xl_t_apply_formula(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    int rc;
    if (!begin(call, res, args, 1, &b, &rc)) return rc;
    const char *sheet = xl_str(args, "sheet_name"), *cell = xl_str(args, "cell");
    const char *formula = xl_str(args, "formula");
    char *msg = NULL;
    char *why = check_formula(b, sheet, cell, formula, &msg);
    free(msg);
    if (why) {
        return xl_fail_book(b, res, why);
    }
    xl_sheet *s = xl_sheet_find(b, sheet);
    unsigned r, c;
    xl_parse_cell(cell, &r, &c);
    if (r < 1 || r > XL_MAX_ROW || c > XL_MAX_COL) {
        why = mb_asprintf("Failed to apply formula to cell: cell %s lies outside the sheet", cell);
    } else {
        json_t *v = json_string(formula);
        if (xl_cell_set(b, s, r, c, v, &why)) {
            char *m = mb_asprintf("Failed to apply formula to cell: %s", why);
            free(why);
            why = m;
        }
        json_decref(v);
    }
    if (why) {
        return xl_fail_book(b, res, why);
    }
    char *text = mb_asprintf("Applied formula '%s' to cell %s", formula, cell);
    rc = finish(b, res, 1, text);
    free(text);
    return rc;
}

/* ------------------------------------------------------ validate_range */

int xl_t_validate_range(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    int rc;
    if (!begin(call, res, args, 1, &b, &rc)) return rc;
    const char *sheet = xl_str(args, "sheet_name"), *start = xl_str(args, "start_cell");
    const char *end = xl_str(args, "end_cell");
    /* upstream passes "start:end" as the start cell, so only its first cell is checked */
    char *range = end && *end ? mb_asprintf("%s:%s", start, end) : mb_strdup(start);
    char *why = NULL;
    xl_sheet *s = xl_sheet_find(b, sheet);
    unsigned r, c, r1, c1, r2, c2;
    if (!s) why = sheet_not_found(sheet);
    else if (xl_sheet_load(b, s, &why)) {
    } else if (xl_parse_cell(range, &r, &c)) {
        why = mb_asprintf("Invalid range: Invalid cell reference: %s", range);
    } else {
        xl_sheet_extent(s, &r1, &c1, &r2, &c2);
        char l[4], l2[4];
        if (r < 1 || r > r2) why = mb_asprintf("Start row %u out of bounds (1-%u)", r, r2);
        else if (c > c2) {
            xl_col_letter(c, l);
            xl_col_letter(c2, l2);
            why = mb_asprintf("Start column %s out of bounds (A-%s)", l, l2);
        } else {
            xl_col_letter(c2, l2);
            rc = xl_okf(res, "Range '%s' is valid. Sheet contains data in range 'A1:%s%u'", range,
                        l2, r2);
        }
    }
    if (why) rc = xl_error(res, why);
    free(why), free(range);
    xl_book_free(b);
    return rc;
}

/* ---------------------------------------------- get_data_validation_info */

int xl_t_validation_info(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    xl_book *b;
    int rc;
    if (!begin(call, res, args, 0, &b, &rc)) return rc;
    const char *sheet = xl_str(args, "sheet_name");
    xl_sheet *s = xl_sheet_find(b, sheet);
    char *why = NULL;
    if (!s) {
        rc = xl_okf(res, "Error: Sheet '%s' not found", sheet);
    } else if (xl_sheet_load(b, s, &why)) {
        rc = mb_mcp_fail_str(res, why);
    } else {
        size_t n;
        dv *list = dv_list(s, &n);
        if (!n) {
            rc = xl_ok(res, "No data validation rules found in this worksheet");
        } else {
            json_t *rules = json_array();
            for (size_t i = 0; i < n; i++) {
                xmlNodePtr d = list[i].node;
                json_t *o = json_object();
                const char *sq = xl_attr(d, "sqref");
                json_object_set_new(o, "ranges", json_string(sq ? sq : ""));
                json_object_set_new(o, "validation_type", attr_or_null(d, "type"));
                json_object_set_new(o, "allow_blank", json_boolean(attr_bool(d, "allowBlank")));
                const char *type = xl_attr(d, "type");
                char *f1 = child_text(d, "formula1");
                if (type && !strcmp(type, "list") && f1)
                    json_object_set_new(o, "allowed_values", list_values(b, s, f1));
                free(f1);
                json_array_append_new(rules, o);
            }
            json_t *out = json_pack("{s:s,s:o}", "sheet_name", sheet, "validation_rules", rules);
            char *text = mb_py_json_dumps(out, 2, 1);
            rc = xl_ok(res, text);
            free(text);
            json_decref(out);
        }
        dv_free(list, n);
    }
    free(why);
    xl_book_free(b);
    return rc;
}
