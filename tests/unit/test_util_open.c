/*
 * test_util_open.c - mb_open_file and the readers built on it never block on
 * a FIFO or a device (issue 12 item 10), and open regular files and
 * directories as open(2) does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

typedef struct dir {
    char path[64];
} dir;

static int setup(void **state)
{
    dir *d = calloc(1, sizeof *d);
    strcpy(d->path, "/tmp/mbopen-XXXXXX");
    if (!mkdtemp(d->path)) return -1;
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    dir *d = *state;
    mb_rm_rf(d->path, NULL);
    free(d);
    return 0;
}

static char *in(void **state, const char *name)
{
    return mb_asprintf("%s/%s", ((dir *)*state)->path, name);
}

static void test_fifo_fails_with_enxio_for_reading_and_writing(void **state)
{
    char *p = in(state, "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    errno = 0;
    assert_int_equal(mb_open_file(p, O_RDONLY | O_CLOEXEC, 0), -1);
    assert_int_equal(errno, ENXIO);
    errno = 0;
    assert_int_equal(mb_open_file(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666), -1);
    assert_int_equal(errno, ENXIO);
    /* a writer waiting on the FIFO: our reader opens, sees a FIFO, refuses */
    int r = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    assert_true(r >= 0);
    errno = 0;
    assert_int_equal(mb_open_file(p, O_WRONLY | O_CLOEXEC, 0), -1);
    assert_int_equal(errno, ENXIO);
    close(r);

    char *data = NULL;
    mb_err err = {0};
    assert_int_not_equal(mb_read_file(p, 100, &data, NULL, &err), MB_OK);
    assert_null(data);
    assert_non_null(strstr(err.msg, "No such device or address"));
    free(p);
}

static void test_devices_are_refused(void **state)
{
    (void)state;
    errno = 0;
    assert_int_equal(mb_open_file("/dev/null", O_RDONLY | O_CLOEXEC, 0), -1);
    assert_int_equal(errno, ENXIO);
    errno = 0;
    assert_int_equal(mb_open_file("/dev/zero", O_WRONLY | O_CLOEXEC, 0), -1);
    assert_int_equal(errno, ENXIO);
}

static void test_regular_files_and_directories_open_blocking(void **state)
{
    char *p = in(state, "plain");
    int fd = mb_open_file(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    assert_int_equal(write(fd, "abc", 3), 3);
    close(fd);
    fd = mb_open_file(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0); /* asked for: kept */
    assert_true(fd >= 0);
    assert_int_not_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    close(fd);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(mb_read_file(p, 100, &data, &len, NULL), MB_OK);
    assert_int_equal(len, 3);
    assert_string_equal(data, "abc");
    free(data);
    /* directories open (callers report EISDIR as upstream does) */
    fd = mb_open_file(((dir *)*state)->path, O_RDONLY | O_CLOEXEC, 0);
    assert_true(fd >= 0);
    close(fd);
    /* errors of open(2) itself come through unchanged */
    char *missing = in(state, "missing");
    errno = 0;
    assert_int_equal(mb_open_file(missing, O_RDONLY | O_CLOEXEC, 0), -1);
    assert_int_equal(errno, ENOENT);
    free(missing);
    free(p);
}

static void test_atomic_write_replaces_a_planted_fifo_temp(void **state)
{
    char *p = in(state, "target.json");
    char *tmp = mb_asprintf("%s.tmp.%d", p, (int)getpid());
    assert_int_equal(mkfifo(tmp, 0600), 0);
    assert_int_equal(mb_write_file_atomic(p, "{}", 2, 0644, NULL), MB_OK);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_size, 2);
    assert_int_not_equal(access(tmp, F_OK), 0);
    free(tmp);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fifo_fails_with_enxio_for_reading_and_writing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_devices_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_regular_files_and_directories_open_blocking, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_atomic_write_replaces_a_planted_fifo_temp, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
