/*
 * test_ooxml_fd.c - a package is read through the descriptor its open
 * checked, never through the path again (issue 12 item 10): a FIFO in place
 * of the file, before the open or swapped in after it, never blocks (reads
 * go on from the descriptor; a save over it fails); saving writes by name
 * (a temp file renamed over the path).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ooxml/ooxml.h"
#include "util/util.h"

#define CT "<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>"

static char *make_package(const char *dir)
{
    char *path = mb_asprintf("%s/book.xlsx", dir);
    mb_ooxml *pkg = mb_ooxml_new();
    mb_ooxml_put(pkg, "[Content_Types].xml", CT, strlen(CT));
    mb_ooxml_put(pkg, "a.txt", "first", 5);
    mb_ooxml_put(pkg, "b.txt", "kept as is", 10);
    mb_err err = {0};
    assert_int_equal(mb_ooxml_save_as(pkg, path, &err), MB_OK);
    mb_ooxml_free(pkg);
    return path;
}

static void read_part(mb_ooxml *pkg, const char *name, const char *want)
{
    char *data = NULL;
    size_t len = 0;
    mb_err err = {0};
    assert_int_equal(mb_ooxml_read(pkg, name, &data, &len, &err), MB_OK);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(data, want, len);
    free(data);
}

static void test_fifo_swapped_in_after_open_neither_blocks_reads_nor_saves(void **state)
{
    (void)state;
    char dir[] = "/tmp/mbooxml-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *path = make_package(dir);

    mb_ooxml *pkg = NULL;
    int sys_errno = 0;
    mb_err err = {0};
    assert_int_equal(mb_ooxml_open(path, NULL, &pkg, &sys_errno, &err), MB_OK);
    /* the agent swaps the workbook for a FIFO */
    char *moved = mb_asprintf("%s.orig", path);
    assert_int_equal(rename(path, moved), 0);
    assert_int_equal(mkfifo(path, 0644), 0);
    read_part(pkg, "a.txt", "first");
    read_part(pkg, "b.txt", "kept as is");
    /* saving over a FIFO fails (libzip writes only over regular files), at once */
    mb_ooxml_put(pkg, "a.txt", "second", 6);
    assert_int_equal(mb_ooxml_save(pkg, &err), MB_EIO);
    assert_non_null(strstr(err.msg, "cannot write"));
    mb_ooxml_free(pkg);

    /* the workbook back: saving writes it by name, unchanged parts as they were */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rename(moved, path), 0);
    pkg = NULL;
    assert_int_equal(mb_ooxml_open(path, NULL, &pkg, &sys_errno, &err), MB_OK);
    struct stat before, st;
    assert_int_equal(stat(path, &before), 0);
    mb_ooxml_put(pkg, "a.txt", "second", 6);
    assert_int_equal(mb_ooxml_save(pkg, &err), MB_OK);
    mb_ooxml_free(pkg);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_not_equal(st.st_ino, before.st_ino); /* a temp file renamed over */
    pkg = NULL;
    assert_int_equal(mb_ooxml_open(path, NULL, &pkg, &sys_errno, &err), MB_OK);
    read_part(pkg, "a.txt", "second");
    read_part(pkg, "b.txt", "kept as is");
    mb_ooxml_free(pkg);

    /* a FIFO at open time: ENXIO at once */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0644), 0);
    pkg = NULL;
    assert_int_not_equal(mb_ooxml_open(path, NULL, &pkg, &sys_errno, &err), MB_OK);
    assert_null(pkg);
    assert_int_equal(sys_errno, ENXIO);

    /* not a zip: the descriptor's source is freed on the error path */
    assert_int_equal(unlink(path), 0);
    FILE *f = fopen(path, "w");
    fputs("not a zip at all", f);
    fclose(f);
    assert_int_equal(mb_ooxml_open(path, NULL, &pkg, &sys_errno, &err), MB_EINVAL);
    assert_int_equal(sys_errno, 0);
    assert_non_null(strstr(err.msg, "not a zip archive"));

    free(moved);
    free(path);
    mb_rm_rf(dir, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_swapped_in_after_open_neither_blocks_reads_nor_saves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
