/*
 * test_sandbox_execbin.c - mb_sandbox_exec_copy: the exec-only copy of the
 * mcpbox binary (mode 0111, same bytes), kept while it matches its source
 * and made again when the source changes. That the kernel then makes the
 * servers non-dumpable is tests/integration/test_sandbox_dumpable.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "util/util.h"

static void write_text(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void test_copy_is_exec_only_kept_and_renewed(void **state)
{
    (void)state;
    char dir[] = "/tmp/mbexec-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *src = mb_asprintf("%s/bin", dir);
    write_text(src, "#!/bin/sh\necho copied-ok\n", 0755);

    char *out = NULL;
    mb_err err = {0};
    assert_int_equal(mb_sandbox_exec_copy(src, dir, "sandbox-mcpbox", 0, &out, &err), MB_OK);
    char *want = mb_asprintf("%s/sandbox-mcpbox", dir);
    assert_string_equal(out, want);
    struct stat st, st2;
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0111);
    assert_int_equal(st.st_size, strlen("#!/bin/sh\necho copied-ok\n"));
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(mb_read_file(out, 100, &text, &len, NULL), MB_OK); /* root reads anyway */
    assert_string_equal(text, "#!/bin/sh\necho copied-ok\n");
    free(text);
    free(out);

    /* unchanged source: the same file is kept (same inode) */
    assert_int_equal(mb_sandbox_exec_copy(src, dir, "sandbox-mcpbox", 0, &out, &err), MB_OK);
    assert_int_equal(stat(out, &st2), 0);
    assert_int_equal(st2.st_ino, st.st_ino);
    free(out);

    /* a new build: copied again, renamed over */
    write_text(src, "#!/bin/sh\necho second build\n", 0755);
    struct timespec t[2] = {{0, UTIME_OMIT}, {st.st_mtim.tv_sec + 5, 0}};
    assert_int_equal(utimensat(AT_FDCWD, src, t, 0), 0);
    assert_int_equal(mb_sandbox_exec_copy(src, dir, "sandbox-mcpbox", 0, &out, &err), MB_OK);
    assert_int_equal(stat(out, &st2), 0);
    assert_int_not_equal(st2.st_ino, st.st_ino);
    assert_int_equal(st2.st_size, strlen("#!/bin/sh\necho second build\n"));
    assert_int_equal(st2.st_mode & 07777, 0111);
    free(out);

    /* a leftover temp file of a killed start does not stop the next one */
    char *tmp = mb_asprintf("%s/.sandbox-mcpbox.%d", dir, (int)getpid());
    assert_int_equal(mkfifo(tmp, 0600), 0);
    unlink(want);
    assert_int_equal(mb_sandbox_exec_copy(src, dir, "sandbox-mcpbox", 0, &out, &err), MB_OK);
    assert_int_equal(access(tmp, F_OK), -1);
    free(out);
    free(tmp);

    /* a missing source is an error naming it */
    char *missing = mb_asprintf("%s/none", dir);
    assert_int_not_equal(mb_sandbox_exec_copy(missing, dir, "sandbox-mcpbox", 0, &out, &err), MB_OK);
    assert_null(out);
    assert_non_null(strstr(err.msg, missing));
    free(missing);

    free(want);
    free(src);
    mb_rm_rf(dir, NULL);
}

static void test_noexec_dir_falls_back_to_the_binary(void **state)
{
    (void)state;
    char dir[] = "/tmp/mbexecnx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    if (mount("tmpfs", dir, "tmpfs", MS_NOEXEC, "size=1m") != 0) {
        rmdir(dir);
        skip(); /* not root */
    }
    char *out = NULL;
    mb_err err = {0};
    assert_int_equal(mb_sandbox_exec_copy("/bin/sh", dir, "sandbox-mcpbox", 0, &out, &err), MB_OK);
    assert_string_equal(out, "/bin/sh");
    free(out);
    char *copy = mb_asprintf("%s/sandbox-mcpbox", dir);
    assert_int_not_equal(access(copy, F_OK), 0);
    free(copy);
    /* a server executable (noexec_fails): refused, so the caller falls back */
    out = NULL;
    assert_int_equal(mb_sandbox_exec_copy("/bin/sh", dir, "mcpbox-light", 1, &out, &err),
                     MB_ECONFLICT);
    assert_null(out);
    assert_int_equal(umount(dir), 0);
    rmdir(dir);
}

/* The server executables' copies: any name, the same exec-only mode. */
static void test_named_copy(void **state)
{
    (void)state;
    char dir[] = "/tmp/mbexecnm-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *out = NULL;
    mb_err err = {0};
    assert_int_equal(mb_sandbox_exec_copy("/bin/true", dir, "mcpbox-light", 1, &out, &err), MB_OK);
    char *want = mb_asprintf("%s/mcpbox-light", dir);
    assert_string_equal(out, want);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0111);
    free(want);
    free(out);
    mb_rm_rf(dir, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_is_exec_only_kept_and_renewed),
        cmocka_unit_test(test_noexec_dir_falls_back_to_the_binary),
        cmocka_unit_test(test_named_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
