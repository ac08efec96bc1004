/*
 * test_ooxml.c - the OOXML package layer: round trips that keep untouched
 * parts byte-identical (compressed bytes included), refusals of truncated
 * zips, zip bombs, too many entries and XML entity bombs, and the OPC
 * helpers (part names, content types, relationships).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zip.h>

#include "ooxml/ooxml.h"

static char dir[] = "/tmp/mb-ooxml-XXXXXX";

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

static const char CT[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
    "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
    "<Override PartName=\"/a/doc.xml\" ContentType=\"test/doc\"/></Types>";

/* A package with [Content_Types].xml, a document part, a big text part and a binary part. */
static char *make_package(const char *name)
{
    char *p = path_of(name);
    mb_ooxml *pkg = mb_ooxml_new();
    mb_ooxml_put(pkg, "[Content_Types].xml", CT, sizeof CT - 1);
    const char doc[] = "<?xml version=\"1.0\"?><root><item n=\"1\">one</item></root>";
    mb_ooxml_put(pkg, "a/doc.xml", doc, sizeof doc - 1);
    mb_buf big = {0};
    for (int i = 0; i < 5000; i++) mb_buf_printf(&big, "<row r=\"%d\"><c>%d</c></row>\n", i, i * 7);
    mb_ooxml_put(pkg, "a/big.xml", big.data, big.len);
    mb_buf_free(&big);
    unsigned char bin[300];
    for (size_t i = 0; i < sizeof bin; i++) bin[i] = (unsigned char)(i * 31 + 7);
    mb_ooxml_put(pkg, "media/image.bin", bin, sizeof bin);
    mb_err err = {0};
    assert_int_equal(mb_ooxml_save_as(pkg, p, &err), 0);
    mb_ooxml_free(pkg);
    return p;
}

/* The raw (compressed) bytes of an entry, for checking verbatim copies. */
static char *raw_entry(const char *path, const char *name, zip_uint64_t *len, zip_uint32_t *crc)
{
    zip_t *za = zip_open(path, ZIP_RDONLY, NULL);
    assert_non_null(za);
    zip_int64_t i = zip_name_locate(za, name, 0);
    assert_true(i >= 0);
    zip_stat_t st;
    assert_int_equal(zip_stat_index(za, (zip_uint64_t)i, 0, &st), 0);
    zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)i, ZIP_FL_COMPRESSED);
    assert_non_null(zf);
    char *buf = mb_malloc(st.comp_size + 1);
    zip_int64_t got = zip_fread(zf, buf, st.comp_size);
    assert_int_equal((zip_uint64_t)got, st.comp_size);
    zip_fclose(zf);
    zip_close(za);
    *len = st.comp_size;
    *crc = st.crc;
    return buf;
}

static void test_ooxml_roundtrip_untouched_identical(void **state)
{
    (void)state;
    char *p = make_package("rt.zip");
    zip_uint64_t l1, l2, b1, b2;
    zip_uint32_t c1, c2, d1, d2;
    char *big1 = raw_entry(p, "a/big.xml", &l1, &c1);
    char *bin1 = raw_entry(p, "media/image.bin", &b1, &d1);

    mb_ooxml *pkg = NULL;
    mb_err err = {0};
    assert_int_equal(mb_ooxml_open(p, NULL, &pkg, NULL, &err), 0);
    assert_int_equal(mb_ooxml_count(pkg), 4);
    xmlDocPtr doc = NULL;
    assert_int_equal(mb_ooxml_xml(pkg, "A/DOC.XML", &doc, &err), 0); /* case-insensitive */
    xmlNodePtr item = xmlDocGetRootElement(doc)->children;
    xmlSetProp(item, BAD_CAST "n", BAD_CAST "2");
    mb_ooxml_touch(pkg, "a/doc.xml");
    mb_ooxml_put(pkg, "a/new.xml", "<x/>", 4);
    assert_int_equal(mb_ooxml_save(pkg, &err), 0);
    mb_ooxml_free(pkg);

    char *big2 = raw_entry(p, "a/big.xml", &l2, &c2);
    char *bin2 = raw_entry(p, "media/image.bin", &b2, &d2);
    assert_int_equal(l1, l2);
    assert_int_equal(c1, c2);
    assert_memory_equal(big1, big2, l1);
    assert_int_equal(b1, b2);
    assert_int_equal(d1, d2);
    assert_memory_equal(bin1, bin2, b1);

    assert_int_equal(mb_ooxml_open(p, NULL, &pkg, NULL, &err), 0);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(mb_ooxml_read(pkg, "a/doc.xml", &data, &len, &err), 0);
    assert_non_null(strstr(data, "n=\"2\""));
    free(data);
    assert_int_equal(mb_ooxml_read(pkg, "a/new.xml", &data, &len, &err), 0);
    assert_string_equal(data, "<x/>");
    free(data);
    assert_int_equal(mb_ooxml_read(pkg, "missing.xml", &data, &len, &err), MB_ENOTFOUND);
    mb_ooxml_free(pkg);
    free(big1), free(big2), free(bin1), free(bin2), free(p);
}

static void test_ooxml_truncated_refused(void **state)
{
    (void)state;
    char *p = make_package("trunc-src.zip");
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(mb_read_file(p, 1 << 24, &data, &len, NULL), 0);
    char *t = path_of("trunc.zip");
    for (size_t cut = len / 2; cut < len; cut += len / 4 + 1) {
        assert_int_equal(mb_write_file_atomic(t, data, cut, 0644, NULL), 0);
        mb_ooxml *pkg = NULL;
        mb_err err = {0};
        int rc = mb_ooxml_open(t, NULL, &pkg, NULL, &err);
        assert_int_equal(rc, MB_EINVAL);
        assert_null(pkg);
        assert_non_null(strstr(err.msg, "not a valid Office document"));
    }
    /* not a zip at all */
    assert_int_equal(mb_write_file_atomic(t, "hello, world", 12, 0644, NULL), 0);
    mb_ooxml *pkg = NULL;
    mb_err err = {0};
    assert_int_equal(mb_ooxml_open(t, NULL, &pkg, NULL, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "not a zip archive"));
    /* missing file: errno kept */
    int e = 0;
    char *missing = path_of("nope.zip");
    assert_int_equal(mb_ooxml_open(missing, NULL, &pkg, &e, &err), MB_ENOTFOUND);
    assert_int_equal(e, 2);
    free(missing), free(data), free(t), free(p);
}

static void test_ooxml_zip_bomb_refused(void **state)
{
    (void)state;
    char *p = path_of("bomb.zip");
    mb_ooxml *pkg = mb_ooxml_new();
    mb_ooxml_put(pkg, "[Content_Types].xml", CT, sizeof CT - 1);
    size_t n = 4u << 20; /* 4 MiB of zeros: deflates ~1000:1 */
    char *zeros = mb_calloc(1, n);
    mb_ooxml_put(pkg, "bomb.xml", zeros, n);
    free(zeros);
    mb_err err = {0};
    assert_int_equal(mb_ooxml_save_as(pkg, p, &err), 0);
    mb_ooxml_free(pkg);

    mb_ooxml_limits lim;
    mb_ooxml_limits_default(&lim);
    lim.max_ratio = 100;
    assert_int_equal(mb_ooxml_open(p, &lim, &pkg, NULL, &err), MB_ETOOBIG);
    assert_non_null(strstr(err.msg, "zip bomb"));

    mb_ooxml_limits_default(&lim);
    lim.max_total = 1u << 20;
    assert_int_equal(mb_ooxml_open(p, &lim, &pkg, NULL, &err), MB_ETOOBIG);

    mb_ooxml_limits_default(&lim);
    lim.max_part = 1u << 20;
    assert_int_equal(mb_ooxml_open(p, &lim, &pkg, NULL, &err), MB_ETOOBIG);

    mb_ooxml_limits_default(&lim);
    lim.max_entries = 1;
    assert_int_equal(mb_ooxml_open(p, &lim, &pkg, NULL, &err), MB_ETOOBIG);
    assert_non_null(strstr(err.msg, "zip entries"));
    free(p);
}

static void test_ooxml_entity_bomb_refused(void **state)
{
    (void)state;
    const char bomb[] =
        "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n"
        " <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
        " <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
        " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
        " <!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
        " <!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;\">\n"
        " <!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;\">\n"
        " <!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;\">\n"
        " <!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;\">\n"
        " <!ENTITY lol9 \"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;\">\n"
        "]>\n<lolz>&lol9;</lolz>";
    xmlDocPtr doc = NULL;
    mb_err err = {0};
    assert_int_equal(mb_ooxml_parse(bomb, sizeof bomb - 1, "x.xml", &doc, &err), MB_EINVAL);
    assert_null(doc);
    assert_non_null(strstr(err.msg, "DOCTYPE"));
    const char xxe[] = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
                       "<r>&x;</r>";
    assert_int_equal(mb_ooxml_parse(xxe, sizeof xxe - 1, "y.xml", &doc, &err), MB_EINVAL);
    const char bad[] = "<a><b></a>";
    assert_int_equal(mb_ooxml_parse(bad, sizeof bad - 1, "z.xml", &doc, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "malformed"));
    const char good[] = "<a x=\"1\">t</a>";
    assert_int_equal(mb_ooxml_parse(good, sizeof good - 1, "g.xml", &doc, &err), 0);
    xmlFreeDoc(doc);
}

static void test_ooxml_opc_helpers(void **state)
{
    (void)state;
    char *s = mb_ooxml_rels_name("xl/worksheets/sheet1.xml");
    assert_string_equal(s, "xl/worksheets/_rels/sheet1.xml.rels");
    free(s);
    s = mb_ooxml_rels_name("");
    assert_string_equal(s, "_rels/.rels");
    free(s);
    s = mb_ooxml_resolve("xl/worksheets/sheet1.xml", "../drawings/drawing1.xml");
    assert_string_equal(s, "xl/drawings/drawing1.xml");
    free(s);
    s = mb_ooxml_resolve("xl/workbook.xml", "/xl/styles.xml");
    assert_string_equal(s, "xl/styles.xml");
    free(s);
    s = mb_ooxml_resolve("", "xl/workbook.xml");
    assert_string_equal(s, "xl/workbook.xml");
    free(s);
    s = mb_ooxml_relative("xl/worksheets/sheet1.xml", "xl/drawings/drawing1.xml");
    assert_string_equal(s, "../drawings/drawing1.xml");
    free(s);
    s = mb_ooxml_relative("xl/workbook.xml", "xl/worksheets/sheet2.xml");
    assert_string_equal(s, "worksheets/sheet2.xml");
    free(s);

    mb_ooxml *pkg = mb_ooxml_new();
    mb_ooxml_put(pkg, "[Content_Types].xml", CT, sizeof CT - 1);
    assert_string_equal(mb_ooxml_ct_get(pkg, "a/doc.xml"), "test/doc");
    assert_string_equal(mb_ooxml_ct_get(pkg, "b/other.xml"), "application/xml");
    assert_null(mb_ooxml_ct_get(pkg, "c.bin"));
    mb_err err = {0};
    assert_int_equal(mb_ooxml_ct_override(pkg, "c.bin", "test/bin", &err), 0);
    assert_string_equal(mb_ooxml_ct_get(pkg, "c.bin"), "test/bin");
    assert_int_equal(mb_ooxml_ct_remove(pkg, "c.bin", &err), 0);
    assert_null(mb_ooxml_ct_get(pkg, "c.bin"));

    char *id = NULL;
    assert_int_equal(mb_ooxml_rel_add(pkg, "a/doc.xml", "t/one", "pics/p.png", &id, &err), 0);
    assert_string_equal(id, "rId1");
    free(id);
    assert_int_equal(mb_ooxml_rel_add(pkg, "a/doc.xml", "t/two", "../x.xml", &id, &err), 0);
    assert_string_equal(id, "rId2");
    char *part = mb_ooxml_rel_part(pkg, "a/doc.xml", id);
    assert_string_equal(part, "x.xml");
    free(part), free(id);
    assert_true(mb_ooxml_has(pkg, "a/_rels/doc.xml.rels"));
    assert_string_equal(mb_ooxml_ct_get(pkg, "a/_rels/doc.xml.rels"),
                        "application/vnd.openxmlformats-package.relationships+xml");
    assert_int_equal(mb_ooxml_rel_remove(pkg, "a/doc.xml", "rId1", &err), 0);
    assert_null(mb_ooxml_rel_part(pkg, "a/doc.xml", "rId1"));
    char *u = mb_ooxml_unique_name(pkg, "c%u.bin");
    assert_string_equal(u, "c1.bin");
    free(u);
    mb_ooxml_free(pkg);
}

/* mb_ooxml_save_mem: the same package as bytes, which open back with every
 * part (written to a file here only to reopen them). */
static void test_ooxml_save_mem(void **state)
{
    (void)state;
    char *p = make_package("mem-src.zip");
    mb_ooxml *pkg = NULL;
    mb_err err = {0};
    assert_int_equal(mb_ooxml_open(p, NULL, &pkg, NULL, &err), 0);
    mb_ooxml_put(pkg, "extra.txt", "hello", 5);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(mb_ooxml_save_mem(pkg, &data, &len, &err), 0);
    assert_true(len > 100);
    assert_memory_equal(data, "PK\x03\x04", 4);
    mb_ooxml_free(pkg);
    char *q = path_of("mem-copy.zip");
    assert_int_equal(mb_write_file_atomic(q, data, len, 0644, &err), 0);
    free(data);
    assert_int_equal(mb_ooxml_open(q, NULL, &pkg, NULL, &err), 0);
    assert_int_equal(mb_ooxml_count(pkg), 5);
    assert_string_equal(mb_ooxml_name(pkg, 0), "[Content_Types].xml");
    char *got = NULL;
    size_t gl = 0;
    assert_int_equal(mb_ooxml_read(pkg, "extra.txt", &got, &gl, &err), 0);
    assert_int_equal(gl, 5);
    assert_memory_equal(got, "hello", 5);
    free(got);
    assert_int_equal(mb_ooxml_read(pkg, "a/big.xml", &got, &gl, &err), 0);
    assert_non_null(strstr(got, "<row r=\"4999\"><c>34993</c></row>"));
    free(got);
    mb_ooxml_free(pkg);
    free(p), free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ooxml_roundtrip_untouched_identical),
        cmocka_unit_test(test_ooxml_truncated_refused),
        cmocka_unit_test(test_ooxml_zip_bomb_refused),
        cmocka_unit_test(test_ooxml_entity_bomb_refused),
        cmocka_unit_test(test_ooxml_opc_helpers),
        cmocka_unit_test(test_ooxml_save_mem),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
