/*
 * test_excel.c - the excel server's workbook model: what writing "" and
 * null into a cell stores (openpyxl's rules), and what a save after a value
 * change does to the formulas of the workbook (cached results dropped,
 * full recalculation asked for, calcChain removed) - and does not do to a
 * workbook without formulas.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "servers/excel/excel.h"

static char dir[] = "/tmp/mb-excel-XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    mb_rm_rf(dir, NULL);
    return 0;
}

static char *path_of(const char *name) { return mb_asprintf("%s/%s", dir, name); }

static xl_book *open_book(const char *p)
{
    xl_book *b = NULL;
    char *why = NULL;
    assert_int_equal(xl_book_open(p, p, &b, &why), 0);
    assert_null(why);
    return b;
}

static xl_sheet *sheet(xl_book *b, const char *name)
{
    xl_sheet *s = xl_sheet_find(b, name);
    assert_non_null(s);
    char *why = NULL;
    assert_int_equal(xl_sheet_load(b, s, &why), 0);
    return s;
}

static void set(xl_book *b, xl_sheet *s, unsigned r, unsigned c, json_t *v)
{
    char *why = NULL;
    assert_int_equal(xl_cell_set(b, s, r, c, v, &why), 0);
    json_decref(v);
}

static void save(xl_book *b)
{
    char *why = NULL;
    assert_int_equal(xl_book_save(b, &why), 0);
    assert_null(why);
}

static char *part(const char *p, const char *name)
{
    mb_ooxml *pkg = NULL;
    mb_err err = {0};
    assert_int_equal(mb_ooxml_open(p, NULL, &pkg, NULL, &err), 0);
    char *data = NULL;
    size_t len = 0;
    int rc = mb_ooxml_read(pkg, name, &data, &len, &err);
    mb_ooxml_free(pkg);
    return rc ? NULL : data;
}

static void test_excel_cells__empty_string_and_null(void **state)
{
    (void)state;
    char *p = path_of("empty.xlsx");
    xl_book *b = xl_book_new(p, "Sheet1");
    xl_sheet *s = sheet(b, "Sheet1");
    set(b, s, 1, 1, json_string("text"));
    set(b, s, 1, 1, json_string(""));
    set(b, s, 2, 3, json_string(""));
    set(b, s, 3, 1, json_integer(7));
    set(b, s, 3, 1, json_null());
    /* "" is a string cell without content, as openpyxl writes it: it reads
     * back as empty but the cell exists and counts for the used range */
    xmlNodePtr c = xl_cell_get(s, 1, 1);
    assert_non_null(c);
    assert_string_equal(xl_attr(c, "t"), "inlineStr");
    assert_null(xl_child(c, "is"));
    assert_null(xl_child(c, "v"));
    json_t *v = xl_cell_value(b, s, c, 1, 1);
    assert_true(json_is_null(v));
    json_decref(v);
    /* null empties a cell */
    c = xl_cell_get(s, 3, 1);
    assert_non_null(c);
    assert_null(xl_attr(c, "t"));
    assert_null(xl_child(c, "v"));
    save(b);
    xl_book_free(b);

    b = open_book(p);
    s = sheet(b, "Sheet1");
    unsigned r1, c1, r2, c2;
    xl_sheet_extent(s, &r1, &c1, &r2, &c2);
    assert_int_equal(r2, 3);
    assert_int_equal(c2, 3);
    v = xl_cell_value(b, s, xl_cell_get(s, 2, 3), 2, 3);
    assert_true(json_is_null(v));
    json_decref(v);
    xl_book_free(b);
    free(p);
}

static const char CHAIN[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<calcChain xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">"
    "<c r=\"A1\" i=\"2\"/></calcChain>";

static void test_excel_book__value_change_drops_cached_results(void **state)
{
    (void)state;
    char *p = path_of("stale.xlsx");
    /* a workbook as Excel leaves it: a formula on another sheet with its
     * cached result (a string here), and a calculation chain */
    xl_book *b = xl_book_new(p, "Data");
    char *why = NULL;
    xl_sheet *other = xl_sheet_add(b, "Sum", &why);
    assert_non_null(other);
    save(b);
    xl_book_free(b);
    b = open_book(p);
    xl_sheet *s = sheet(b, "Sum");
    set(b, s, 1, 1, json_string("=Data!A1&\"x\""));
    xmlNodePtr c = xl_cell_get(s, 1, 1);
    xmlSetProp(c, BAD_CAST "t", BAD_CAST "str");
    xmlNewTextChild(c, c->ns, BAD_CAST "v", BAD_CAST "oldx");
    xmlNodePtr calc = xl_child(xmlDocGetRootElement(b->wb), "calcPr");
    xmlUnsetProp(calc, BAD_CAST "fullCalcOnLoad");
    b->wb_dirty = 1;
    b->stale = 0;
    mb_err err = {0};
    mb_ooxml_put(b->pkg, "xl/calcChain.xml", CHAIN, sizeof CHAIN - 1);
    assert_int_equal(mb_ooxml_ct_override(b->pkg, "xl/calcChain.xml",
                                          "application/vnd.openxmlformats-officedocument."
                                          "spreadsheetml.calcChain+xml", &err), 0);
    assert_int_equal(mb_ooxml_rel_add(b->pkg, b->wb_part, XL_REL_BASE "calcChain",
                                      "calcChain.xml", NULL, &err), 0);
    save(b);
    xl_book_free(b);
    char *sum = part(p, "xl/worksheets/sheet2.xml");
    assert_non_null(strstr(sum, "<v>oldx</v>"));
    free(sum);

    /* a value written on the first sheet */
    b = open_book(p);
    set(b, sheet(b, "Data"), 1, 1, json_string("new"));
    assert_true(b->stale);
    save(b);
    xl_book_free(b);

    sum = part(p, "xl/worksheets/sheet2.xml");
    assert_null(strstr(sum, "<v>"));
    assert_null(strstr(sum, "t=\"str\""));
    assert_non_null(strstr(sum, "Data!A1"));
    free(sum);
    char *wb = part(p, "xl/workbook.xml");
    assert_non_null(strstr(wb, "fullCalcOnLoad=\"1\""));
    free(wb);
    char *chain = part(p, "xl/calcChain.xml");
    assert_null(chain);
    char *rels = part(p, "xl/_rels/workbook.xml.rels");
    assert_null(strstr(rels, "calcChain"));
    free(rels);
    char *ct = part(p, "[Content_Types].xml");
    assert_null(strstr(ct, "calcChain"));
    free(ct);
    b = open_book(p);
    json_t *v = xl_cell_value(b, sheet(b, "Sum"), xl_cell_get(sheet(b, "Sum"), 1, 1), 1, 1);
    assert_string_equal(json_string_value(v), "=Data!A1&\"x\"");
    json_decref(v);
    xl_book_free(b);
    free(p);
}

static void test_excel_book__no_formulas_no_changes(void **state)
{
    (void)state;
    char *p = path_of("plain.xlsx");
    xl_book *b = xl_book_new(p, "Data");
    char *why = NULL;
    assert_non_null(xl_sheet_add(b, "Other", &why));
    xmlUnsetProp(xl_child(xmlDocGetRootElement(b->wb), "calcPr"), BAD_CAST "fullCalcOnLoad");
    save(b);
    xl_book_free(b);
    b = open_book(p);
    set(b, sheet(b, "Other"), 2, 2, json_real(2.5));
    save(b);
    xl_book_free(b);
    char *wb0 = part(p, "xl/workbook.xml"), *other0 = part(p, "xl/worksheets/sheet2.xml");
    char *data0 = part(p, "xl/worksheets/sheet1.xml");

    b = open_book(p);
    set(b, sheet(b, "Data"), 1, 1, json_integer(3));
    save(b);
    xl_book_free(b);
    char *wb1 = part(p, "xl/workbook.xml"), *other1 = part(p, "xl/worksheets/sheet2.xml");
    char *data1 = part(p, "xl/worksheets/sheet1.xml");
    assert_string_equal(wb0, wb1);
    assert_null(strstr(wb1, "fullCalcOnLoad"));
    assert_string_equal(other0, other1);
    assert_string_not_equal(data0, data1);
    free(wb0), free(wb1), free(other0), free(other1), free(data0), free(data1);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_excel_cells__empty_string_and_null),
        cmocka_unit_test(test_excel_book__value_change_drops_cached_results),
        cmocka_unit_test(test_excel_book__no_formulas_no_changes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
