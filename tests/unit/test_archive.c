/*
 * test_archive.c - unit tests for the archive layer: name and link rules,
 * extraction (both member styles, refusals leaving everything untouched,
 * limits, owner), dumps (order, skips, fd vs callback) and round trips.
 *
 * Archives are built here with libarchive's writer, which (unlike tar
 * tools) writes whatever names and types it is told, hostile ones included.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "archive/archive.h"
#include "archive/archive_int.h"

/* ------------------------------------------------------------ fixtures */

typedef struct spec {
    char type;            /* 'f' file, 'd' dir, 'l' symlink, 'h' hardlink, 'c' chr, 'p' fifo */
    const char *name;
    const char *data;     /* file data, or link target */
    int mode;             /* 0 = 0644 / 0755 */
    long mtime;           /* 0 = 1600000000 */
} spec;

#define END {0, NULL, NULL, 0, 0}
#define MT 1600000000L

typedef struct box {
    char root[64];  /* temp root */
    char ws[96];    /* root/ws: the workspace */
    char stage[96]; /* root/stage */
    char tgz[96];   /* root/in.tgz */
} box;

static int box_setup(void **state)
{
    box *b = mb_calloc(1, sizeof *b);
    snprintf(b->root, sizeof b->root, "/tmp/mbarchXXXXXX");
    assert_non_null(mkdtemp(b->root));
    snprintf(b->ws, sizeof b->ws, "%s/ws", b->root);
    snprintf(b->stage, sizeof b->stage, "%s/stage", b->root);
    snprintf(b->tgz, sizeof b->tgz, "%s/in.tgz", b->root);
    assert_int_equal(mkdir(b->ws, 0755), 0);
    assert_int_equal(mkdir(b->stage, 0755), 0);
    *state = b;
    return 0;
}

static int box_teardown(void **state)
{
    box *b = *state;
    assert_int_equal(mb_rm_rf(b->root, NULL), 0);
    free(b);
    return 0;
}

static void write_tgz(const char *path, const spec *s, int format)
{
    struct archive *a = archive_write_new();
    archive_write_add_filter_gzip(a);
    archive_write_set_format(a, format);
    assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
    struct archive_entry *e = archive_entry_new();
    for (; s->name; s++) {
        archive_entry_clear(e);
        archive_entry_copy_pathname(e, s->name);
        archive_entry_set_mtime(e, s->mtime ? s->mtime : MT, 0);
        size_t len = 0;
        switch (s->type) {
        case 'f':
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_perm(e, s->mode ? s->mode : 0644);
            len = s->data ? strlen(s->data) : 0;
            archive_entry_set_size(e, (la_int64_t)len);
            break;
        case 'd':
            archive_entry_set_filetype(e, AE_IFDIR);
            archive_entry_set_perm(e, s->mode ? s->mode : 0755);
            break;
        case 'l':
            archive_entry_set_filetype(e, AE_IFLNK);
            archive_entry_set_perm(e, 0777);
            archive_entry_copy_symlink(e, s->data);
            break;
        case 'h':
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_perm(e, 0644);
            archive_entry_copy_hardlink(e, s->data);
            break;
        case 'c':
            archive_entry_set_filetype(e, AE_IFCHR);
            archive_entry_set_perm(e, 0666);
            archive_entry_set_rdev(e, makedev(1, 3));
            break;
        case 'p':
            archive_entry_set_filetype(e, AE_IFIFO);
            archive_entry_set_perm(e, 0644);
            break;
        }
        assert_true(archive_write_header(a, e) >= ARCHIVE_WARN);
        if (len) assert_int_equal(archive_write_data(a, s->data, len), (la_ssize_t)len);
    }
    archive_entry_free(e);
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
}

/* Extracts b->tgz into b->ws with staging in b->stage. */
static int extract(box *b, const mb_archive_extract_opts *base, mb_archive_stats *st, mb_err *err)
{
    mb_archive_extract_opts o = MB_ARCHIVE_EXTRACT_OPTS_INIT;
    if (base) o = *base;
    o.staging_dir = b->stage;
    int fd = open(b->tgz, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    int rc = mb_archive_extract(fd, b->ws, &o, st, err);
    close(fd);
    return rc;
}

/* A listing of a tree, contents included: "path type mode mtime size"
 * lines (or "path l -> target"), names sorted per directory. */
static void listing_at(mb_buf *out, const char *root, const char *rel)
{
    char *path = *rel ? mb_asprintf("%s/%s", root, rel) : mb_strdup(root);
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);
    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        if (strcmp(nm, ".") && strcmp(nm, "..")) {
            char *crel = *rel ? mb_asprintf("%s/%s", rel, nm) : mb_strdup(nm);
            char *full = mb_asprintf("%s/%s", root, crel);
            struct stat st;
            assert_int_equal(lstat(full, &st), 0);
            if (S_ISLNK(st.st_mode)) {
                char t[4096];
                ssize_t k = readlink(full, t, sizeof t - 1);
                assert_true(k >= 0);
                t[k] = '\0';
                mb_buf_printf(out, "%s l -> %s\n", crel, t);
            } else {
                mb_buf_printf(out, "%s %c %04o %lld %lld\n", crel, S_ISDIR(st.st_mode) ? 'd' : 'f',
                              (unsigned)(st.st_mode & 07777), (long long)st.st_mtime,
                              S_ISDIR(st.st_mode) ? 0LL : (long long)st.st_size);
                if (S_ISREG(st.st_mode)) {
                    char *data;
                    size_t len;
                    assert_int_equal(mb_read_file(full, 1 << 20, &data, &len, NULL), 0);
                    mb_buf_append(out, data, len);
                    free(data);
                }
                if (S_ISDIR(st.st_mode)) listing_at(out, root, crel);
            }
            free(crel);
            free(full);
        }
        free(names[i]);
    }
    free(names);
    free(path);
}

static char *listing(const char *root)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    listing_at(&b, root, "");
    return mb_buf_steal(&b);
}

/* Blanks the mtime of the listing line of `dir` (a directory the archive
 * implies without a member of its own: it gets the time of extraction, which
 * differs between two extractions that straddle a second). */
static void blank_mtime(char *list, const char *dir)
{
    char *key = mb_asprintf("%s d ", dir);
    for (char *line = list; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, key, strlen(key))) continue;
        char *t = line + strlen(key) + 5; /* past the mode and its space */
        while (*t >= '0' && *t <= '9') *t++ = '*';
    }
    free(key);
}

static int dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    return n == 0;
}

static void put_file(const char *dir, const char *name, const char *data, mode_t mode, long mtime)
{
    char *p = mb_asprintf("%s/%s", dir, name);
    assert_int_equal(mb_write_file_atomic(p, data, strlen(data), mode, NULL), 0);
    struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};
    assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
    free(p);
}

/* ------------------------------------------------------------ name rules */

static void test_norm_name(void **state)
{
    char out[MB_ARCHIVE_PATH_MAX + 1];
    assert_null(mb_archive__norm_name("./a//b/", out));
    assert_string_equal(out, "a/b");
    assert_null(mb_archive__norm_name(".", out));
    assert_string_equal(out, "");
    assert_null(mb_archive__norm_name("./", out));
    assert_string_equal(out, "");
    assert_null(mb_archive__norm_name("a/./b/.", out));
    assert_string_equal(out, "a/b");
    assert_null(mb_archive__norm_name("...", out));
    assert_string_equal(out, "...");
    assert_null(mb_archive__norm_name("d\xc3\xa9j\xc3\xa0 vu/\xf0\x9f\x8e\x89", out));

    assert_non_null(mb_archive__norm_name("", out));
    assert_non_null(mb_archive__norm_name("/etc/passwd", out));
    assert_non_null(mb_archive__norm_name("../x", out));
    assert_non_null(mb_archive__norm_name("a/../b", out));
    assert_non_null(mb_archive__norm_name("a/..", out));
    assert_non_null(mb_archive__norm_name("caf\xe9", out));         /* latin-1 */
    assert_non_null(mb_archive__norm_name("\xc0\xaf", out));        /* overlong '/' */
    assert_non_null(mb_archive__norm_name("\xed\xa0\x80", out));    /* surrogate */
    assert_non_null(mb_archive__norm_name("\xf4\x90\x80\x80", out)); /* > U+10FFFF */

    char comp[300];
    memset(comp, 'c', 256);
    comp[256] = '\0';
    assert_non_null(mb_archive__norm_name(comp, out));
    comp[255] = '\0';
    assert_null(mb_archive__norm_name(comp, out));

    char *longp = mb_malloc(5000);
    for (int i = 0; i < 2500; i++) memcpy(longp + 2 * i, "a/", 2);
    memcpy(longp + 4094, "ab", 3); /* 4096 bytes, 2048 components */
    assert_non_null(mb_archive__norm_name(longp, out));
    longp[4095] = '\0';          /* 4095 bytes */
    assert_null(mb_archive__norm_name(longp, out));
    assert_int_equal(strlen(out), 4095);
    free(longp);
}

static void test_link_target_rules(void **state)
{
    assert_null(mb_archive__link_target_check("l", "target"));
    assert_null(mb_archive__link_target_check("a/b/l", "../x"));
    assert_null(mb_archive__link_target_check("a/b/l", "../../x"));
    assert_null(mb_archive__link_target_check("a/l", "./../b/./c"));
    assert_non_null(mb_archive__link_target_check("a/b/l", "../../../x"));
    assert_non_null(mb_archive__link_target_check("l", ".."));
    assert_non_null(mb_archive__link_target_check("l", "x/../.."));
    assert_non_null(mb_archive__link_target_check("l", "/etc"));
    assert_non_null(mb_archive__link_target_check("l", ""));
    assert_non_null(mb_archive__link_target_check("l", "bad\xff"));
}

static void test_quote(void **state)
{
    char q[64];
    mb_archive__quote("a b/\xc3\xa9\xff\n'", q, sizeof q);
    assert_string_equal(q, "'a b/\xc3\xa9\\xff\\x0a\\x27'");
    char longs[200];
    memset(longs, 'x', sizeof longs - 1);
    longs[sizeof longs - 1] = '\0';
    mb_archive__quote(longs, q, sizeof q);
    assert_true(strlen(q) < sizeof q);
    assert_non_null(strstr(q, "...'"));
}

/* -------------------------------------------------------------- extraction */

static void test_both_member_styles(void **state)
{
    box *b = *state;
    static const spec dotted[] = {
        {'d', ".", NULL, 0750, MT + 5}, {'d', "./dir", NULL, 0700, MT + 1},
        {'f', "./dir/f.txt", "hello", 0600, MT + 2}, {'d', "./empty", NULL, 0755, MT + 3},
        {'l', "./dir/link", "f.txt", 0, 0}, {'f', "./x/y/implicit.txt", "i", 0, 0}, END};
    static const spec plain[] = {
        {'d', "dir", NULL, 0700, MT + 1}, {'f', "dir/f.txt", "hello", 0600, MT + 2},
        {'d', "empty", NULL, 0755, MT + 3}, {'l', "dir/link", "f.txt", 0, 0},
        {'f', "x/y/implicit.txt", "i", 0, 0}, END};
    write_tgz(b->tgz, dotted, ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE);
    mb_archive_stats st;
    mb_err err = {0};
    assert_int_equal(extract(b, NULL, &st, &err), 0);
    assert_int_equal(st.entries, 6);
    assert_int_equal(st.bytes, 6);
    assert_true(st.expanded > 0 && st.compressed > 0);
    char *one = listing(b->ws);

    struct stat rs;
    assert_int_equal(stat(b->ws, &rs), 0);
    assert_int_equal(rs.st_mode & 07777, 0750); /* '.' applies to the root */
    assert_int_equal(rs.st_mtime, MT + 5);

    assert_int_equal(mb_rm_rf(b->ws, NULL), 0);
    assert_int_equal(mkdir(b->ws, 0755), 0);
    write_tgz(b->tgz, plain, ARCHIVE_FORMAT_TAR_USTAR);
    assert_int_equal(extract(b, NULL, &st, &err), 0);
    char *two = listing(b->ws);
    blank_mtime(one, "x"), blank_mtime(one, "x/y");
    blank_mtime(two, "x"), blank_mtime(two, "x/y");
    assert_string_equal(one, two);
    /* directory mtimes survive their contents being written */
    assert_non_null(strstr(one, "dir d 0700 1600000001"));
    assert_non_null(strstr(one, "dir/f.txt f 0600 1600000002 5\nhello"));
    assert_non_null(strstr(one, "empty d 0755 1600000003"));
    assert_non_null(strstr(one, "\nx d 0755 *"));
    assert_non_null(strstr(one, "\nx/y d 0755 *"));
    assert_true(dir_is_empty(b->stage));
    free(one);
    free(two);
}

typedef struct refusal {
    const char *what;
    spec s[5];
    int code;
    const char *msg;
} refusal;

static void test_refusals_change_nothing(void **state)
{
    box *b = *state;
    static const refusal cases[] = {
        {"dotdot", {{'f', "ok.txt", "ok", 0, 0}, {'f', "../x", "x", 0, 0}, END}, MB_EINVAL, "'../x'"},
        {"absolute", {{'f', "ok.txt", "ok", 0, 0}, {'f', "/etc/mbx", "x", 0, 0}, END}, MB_EINVAL, "absolute"},
        {"setuid", {{'f', "ok.txt", "ok", 0, 0}, {'f', "s", "x", 04755, 0}, END}, MB_EINVAL, "setuid"},
        {"setgid", {{'d', "g", NULL, 02755, 0}, END}, MB_EINVAL, "setgid"},
        {"chardev", {{'f', "ok.txt", "ok", 0, 0}, {'c', "null", NULL, 0, 0}, END}, MB_EINVAL, "character device"},
        {"fifo", {{'p', "p", NULL, 0, 0}, END}, MB_EINVAL, "fifo"},
        {"symlink out", {{'l', "l", "../..", 0, 0}, END}, MB_EINVAL, "outside"},
        {"symlink abs", {{'l', "l", "/etc", 0, 0}, {'f', "l/passwd", "x", 0, 0}, END}, MB_EINVAL, "absolute"},
        {"through planted", {{'d', "d", NULL, 0, 0}, {'l', "l", "d", 0, 0}, {'f', "l/x", "x", 0, 0}, END},
         MB_EINVAL, "symlink"},
        {"chain", {{'l', "a", ".", 0, 0}, {'l', "b", "a/..", 0, 0}, END}, MB_EINVAL, "'b'"},
        {"hardlink out", {{'h', "h", "../x", 0, 0}, END}, MB_EINVAL, "hard link"},
        {"hardlink ws", {{'h', "h", "keep.txt", 0, 0}, END}, MB_EINVAL, "earlier member"},
        {"file over dir", {{'d', "d", NULL, 0, 0}, {'f', "d", "x", 0, 0}, END}, MB_EINVAL, "directory"},
        {"conflict symlink", {{'f', "new.txt", "n", 0, 0}, {'f', "wslink/x", "x", 0, 0}, END},
         MB_ECONFLICT, "'wslink'"},
        {"conflict dir", {{'f', "keepdir", "x", 0, 0}, END}, MB_ECONFLICT, "'keepdir'"},
        {"dot file", {{'f', ".", "x", 0, 0}, END}, MB_EINVAL, "'.' must be a directory"},
    };
    put_file(b->ws, "keep.txt", "keep", 0644, MT);
    char *kd = mb_asprintf("%s/keepdir", b->ws);
    assert_int_equal(mkdir(kd, 0755), 0);
    free(kd);
    char *wl = mb_asprintf("%s/wslink", b->ws);
    assert_int_equal(symlink("/tmp", wl), 0);
    free(wl);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_tgz(b->tgz, cases[i].s, ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE);
        char *before_in = listing(b->root); /* the tgz changed */
        mb_err err = {0};
        int rc = extract(b, NULL, NULL, &err);
        if (rc != cases[i].code || !strstr(err.msg, cases[i].msg)) {
            print_error("case %s: rc %d, message: %s\n", cases[i].what, rc, err.msg);
            fail();
        }
        char *after = listing(b->root);
        if (strcmp(before_in, after)) fail_msg("%s changed the tree", cases[i].what);
        free(before_in);
        free(after);
    }
    assert_int_equal(access("/etc/mbx", F_OK), -1);
}

static void test_limits(void **state)
{
    box *b = *state;
    static const spec four[] = {{'f', "a", "1", 0, 0}, {'f', "b", "2", 0, 0},
                                {'f', "c", "3", 0, 0}, {'f', "d", "4", 0, 0}, END};
    write_tgz(b->tgz, four, ARCHIVE_FORMAT_TAR_USTAR);
    mb_archive_extract_opts o = MB_ARCHIVE_EXTRACT_OPTS_INIT;
    mb_err err = {0};
    o.max_entries = 3;
    assert_int_equal(extract(b, &o, NULL, &err), MB_ETOOBIG);
    assert_non_null(strstr(err.msg, "entries"));
    o.max_entries = 4;
    assert_int_equal(extract(b, &o, NULL, &err), 0);

    /* one member over the expanded-size limit: refused from its header */
    char *big = mb_malloc(2000001);
    memset(big, 'z', 2000000);
    big[2000000] = '\0';
    spec one[] = {{'f', "big", big, 0, 0}, END};
    write_tgz(b->tgz, one, ARCHIVE_FORMAT_TAR_USTAR);
    o = (mb_archive_extract_opts)MB_ARCHIVE_EXTRACT_OPTS_INIT;
    o.max_bytes = 1000000; /* well above what the reader reads ahead */
    assert_int_equal(extract(b, &o, NULL, &err), MB_ETOOBIG);
    assert_non_null(strstr(err.msg, "'big'"));
    char *p = mb_asprintf("%s/big", b->ws);
    assert_int_equal(access(p, F_OK), -1);
    free(p);
    free(big);

    /* headers alone over the limit: the expanded stream is what counts */
    struct archive *a = archive_write_new();
    archive_write_add_filter_gzip(a);
    archive_write_set_format_pax(a);
    assert_int_equal(archive_write_open_filename(a, b->tgz), ARCHIVE_OK);
    struct archive_entry *e = archive_entry_new();
    char *val = mb_malloc(60000);
    memset(val, 'v', 60000);
    for (int i = 0; i < 10; i++) {
        archive_entry_clear(e);
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        archive_entry_copy_pathname(e, name);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, 0);
        archive_entry_xattr_add_entry(e, "user.padding", val, 60000);
        assert_true(archive_write_header(a, e) >= ARCHIVE_WARN);
    }
    archive_entry_free(e);
    archive_write_close(a);
    archive_write_free(a);
    free(val);
    o.max_bytes = 300000;
    mb_archive_stats st;
    assert_int_equal(extract(b, &o, &st, &err), MB_ETOOBIG);
    assert_non_null(strstr(err.msg, "expands to more than 300000"));
    assert_true(st.expanded <= 300000);
    assert_true(dir_is_empty(b->stage));
}

static void test_owner(void **state)
{
    box *b = *state;
    if (geteuid() != 0) skip();
    static const spec s[] = {{'d', ".", NULL, 0755, 0}, {'d', "d", NULL, 0, 0},
                             {'f', "d/f", "f", 0, 0}, {'l', "d/l", "f", 0, 0},
                             {'f', "i/m/p.txt", "p", 0, 0}, {'h', "d/h", "d/f", 0, 0}, END};
    write_tgz(b->tgz, s, ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE);
    mb_archive_extract_opts o = MB_ARCHIVE_EXTRACT_OPTS_INIT;
    o.uid = 4321;
    o.gid = 8765;
    mb_err err = {0};
    assert_int_equal(extract(b, &o, NULL, &err), 0);
    const char *paths[] = {"", "/d", "/d/f", "/d/l", "/i", "/i/m", "/i/m/p.txt", "/d/h"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        char *p = mb_asprintf("%s%s", b->ws, paths[i]);
        struct stat st;
        assert_int_equal(lstat(p, &st), 0);
        if (st.st_uid != 4321 || st.st_gid != 8765) fail_msg("%s owned by %d:%d", p, st.st_uid, st.st_gid);
        free(p);
    }
}

static void test_overlay_and_conflict_is_atomic(void **state)
{
    box *b = *state;
    put_file(b->ws, "old.txt", "old", 0644, MT);
    put_file(b->ws, "replace.txt", "before", 0644, MT);
    static const spec s[] = {{'f', "replace.txt", "after", 0, 0}, {'f', "new.txt", "new", 0, 0}, END};
    write_tgz(b->tgz, s, ARCHIVE_FORMAT_TAR_GNUTAR);
    mb_err err = {0};
    assert_int_equal(extract(b, NULL, NULL, &err), 0);
    char *l = listing(b->ws);
    assert_non_null(strstr(l, "old.txt f 0644 1600000000 3\nold"));
    assert_non_null(strstr(l, "replace.txt f 0644 1600000000 5\nafter"));
    assert_non_null(strstr(l, "new.txt f"));
    free(l);

    /* a conflict found at the end still leaves everything as it was */
    char *d = mb_asprintf("%s/dir", b->ws);
    assert_int_equal(mkdir(d, 0755), 0);
    free(d);
    static const spec c[] = {{'f', "aaa.txt", "a", 0, 0}, {'f', "zzz/deep.txt", "z", 0, 0},
                             {'f', "dir", "file over dir", 0, 0}, END};
    write_tgz(b->tgz, c, ARCHIVE_FORMAT_TAR_GNUTAR);
    char *before = listing(b->ws);
    assert_int_equal(extract(b, NULL, NULL, &err), MB_ECONFLICT);
    assert_non_null(strstr(err.msg, "'dir'"));
    char *after = listing(b->ws);
    assert_string_equal(before, after);
    assert_true(dir_is_empty(b->stage));
    free(before);
    free(after);
}

static void test_bad_streams(void **state)
{
    box *b = *state;
    mb_err err = {0};
    assert_int_equal(mb_write_file_atomic(b->tgz, "", 0, 0644, NULL), 0);
    assert_int_equal(extract(b, NULL, NULL, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "empty"));

    assert_int_equal(mb_write_file_atomic(b->tgz, "hello world, not gzip", 21, 0644, NULL), 0);
    assert_int_equal(extract(b, NULL, NULL, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "not gzip"));

    static const spec s[] = {{'f', "a.txt", "some text that is long enough to matter", 0, 0},
                             {'f', "b.txt", "more", 0, 0}, END};
    write_tgz(b->tgz, s, ARCHIVE_FORMAT_TAR_USTAR);
    char *data;
    size_t len;
    assert_int_equal(mb_read_file(b->tgz, 1 << 20, &data, &len, NULL), 0);
    assert_int_equal(mb_write_file_atomic(b->tgz, data, len - 12, 0644, NULL), 0);
    free(data);
    assert_int_equal(extract(b, NULL, NULL, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "truncated"));
    assert_true(dir_is_empty(b->ws));
    assert_true(dir_is_empty(b->stage));

    /* a workspace that is not there */
    mb_archive_extract_opts o = MB_ARCHIVE_EXTRACT_OPTS_INIT;
    int fd = open(b->tgz, O_RDONLY | O_CLOEXEC);
    assert_int_equal(mb_archive_extract(fd, "/nonexistent/mbx", &o, NULL, &err), MB_ENOTFOUND);
    close(fd);
}

static void test_default_staging_is_beside_the_workspace(void **state)
{
    box *b = *state;
    static const spec s[] = {{'f', "a", "1", 0, 0}, {'f', "../b", "2", 0, 0}, END};
    write_tgz(b->tgz, s, ARCHIVE_FORMAT_TAR_USTAR);
    char *before = listing(b->root);
    int fd = open(b->tgz, O_RDONLY | O_CLOEXEC);
    mb_err err = {0};
    assert_int_equal(mb_archive_extract(fd, b->ws, NULL, NULL, &err), MB_EINVAL);
    close(fd);
    char *after = listing(b->root);
    assert_string_equal(before, after); /* no .mcpbox-extract-* left */
    free(before);
    free(after);
}

/* ------------------------------------------------------------------- dumps */

static void make_tree(const char *root)
{
    char *p;
    p = mb_asprintf("%s/b dir/empty", root);
    assert_int_equal(mb_mkdir_p(p, 0755, NULL), 0);
    free(p);
    p = mb_asprintf("%s/a", root);
    assert_int_equal(mkdir(p, 0700), 0);
    free(p);
    put_file(root, "a/x.txt", "x data", 0640, MT + 1);
    put_file(root, "b dir/\xc3\xa9t\xc3\xa9 file", "utf8", 0755, MT + 2);
    put_file(root, "z.bin", "", 0600, MT + 3);
    p = mb_asprintf("%s/b dir/rel", root);
    assert_int_equal(symlink("../a/x.txt", p), 0);
    free(p);
}

/* Sets the directories' mtimes (again, after entries came or went). */
static void stamp_dirs(const char *root)
{
    char *p;
    const char *dirs[] = {"b dir/empty", "b dir", "a"};
    for (int i = 0; i < 3; i++) {
        p = mb_asprintf("%s/%s", root, dirs[i]);
        struct timespec ts[2] = {{MT + 10 + i, 0}, {MT + 10 + i, 0}};
        assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
        free(p);
    }
}

typedef struct skips {
    int n;
    char seen[512];
} skips;

static void on_skip(void *payload, const char *path, const char *why)
{
    skips *s = payload;
    s->n++;
    size_t l = strlen(s->seen);
    snprintf(s->seen + l, sizeof s->seen - l, "%s|", path);
    (void)why;
}

static int collect(void *payload, const void *data, size_t len)
{
    mb_buf_append(payload, data, len);
    return 0;
}

static int refuse(void *payload, const void *data, size_t len)
{
    (void)payload;
    (void)data;
    (void)len;
    return -1;
}

static void test_dump_order_skips_and_round_trip(void **state)
{
    box *b = *state;
    char *src = mb_asprintf("%s/src", b->root);
    assert_int_equal(mkdir(src, 0755), 0);
    make_tree(src);
    char *abs = mb_asprintf("%s/abs", src), *esc = mb_asprintf("%s/a/esc", src);
    char *fifo = mb_asprintf("%s/fifo", src), *suid = mb_asprintf("%s/suid", src);
    assert_int_equal(symlink("/etc/passwd", abs), 0);
    assert_int_equal(symlink("../../outside", esc), 0);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    put_file(src, "suid", "s", 04755, MT);
    assert_int_equal(chmod(suid, 04755), 0);
    stamp_dirs(src);

    mb_archive_write_opts wo = MB_ARCHIVE_WRITE_OPTS_INIT;
    skips sk = {0};
    wo.on_skip = on_skip;
    wo.payload = &sk;
    int fd = open(b->tgz, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    mb_archive_stats st;
    mb_err err = {0};
    assert_int_equal(mb_archive_write_dir(src, fd, &wo, &st, &err), 0);
    close(fd);
    assert_int_equal(sk.n, 3);
    assert_int_equal(st.skipped, 3);
    assert_string_equal(sk.seen, "./a/esc|./abs|./fifo|");

    /* the same bytes through the callback (no timestamp in the gzip header) */
    mb_buf cb = {0};
    skips sk2 = {0};
    wo.payload = &sk2;
    assert_int_equal(mb_archive_write_dir_cb(src, collect, &cb, &wo, NULL, &err), 0);
    char *data;
    size_t len;
    assert_int_equal(mb_read_file(b->tgz, 1 << 20, &data, &len, NULL), 0);
    assert_int_equal(len, cb.len);
    assert_memory_equal(data, cb.data, len);
    free(data);
    mb_buf_free(&cb);

    /* member order, ownership, modes */
    struct archive *a = archive_read_new();
    archive_read_support_filter_gzip(a);
    archive_read_support_format_tar(a);
    assert_int_equal(archive_read_open_filename(a, b->tgz, 10240), ARCHIVE_OK);
    struct archive_entry *e;
    mb_buf names = {0};
    int r;
    /* ARCHIVE_WARN: this process runs in the C locale, names are UTF-8 */
    while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
        mb_buf_printf(&names, "%s|", archive_entry_pathname(e));
        assert_int_equal(archive_entry_uid(e), 0);
        assert_int_equal(archive_entry_gid(e), 0);
        assert_true(!archive_entry_uname(e) || !*archive_entry_uname(e));
        assert_true(!archive_entry_gname(e) || !*archive_entry_gname(e));
        assert_int_equal(archive_entry_perm(e) & 06000, 0);
    }
    archive_read_free(a);
    assert_string_equal(names.data, "./|./a/|./a/x.txt|./b dir/|./b dir/empty/|./b dir/rel|"
                                    "./b dir/\xc3\xa9t\xc3\xa9 file|./suid|./z.bin|");
    mb_buf_free(&names);

    /* round trip through our own extractor: identical but for what was skipped */
    unlink(abs);
    unlink(esc);
    unlink(fifo);
    assert_int_equal(chmod(suid, 0755), 0);
    stamp_dirs(src); /* unlinking touched them */
    assert_int_equal(extract(b, NULL, &st, &err), 0);
    char *want = listing(src), *got = listing(b->ws);
    assert_string_equal(want, got);
    free(want);
    free(got);
    free(abs);
    free(esc);
    free(fifo);
    free(suid);
    free(src);
}

static void test_dump_errors(void **state)
{
    box *b = *state;
    mb_err err = {0};
    assert_int_equal(mb_archive_write_dir("/nonexistent/mbx", 1, NULL, NULL, &err), MB_ENOTFOUND);
    mb_archive_write_opts wo = MB_ARCHIVE_WRITE_OPTS_INIT;
    wo.gzip_level = 10;
    assert_int_equal(mb_archive_write_dir(b->ws, 1, &wo, NULL, &err), MB_EINVAL);
    put_file(b->ws, "f", "data", 0644, MT);
    assert_int_equal(mb_archive_write_dir_cb(b->ws, refuse, NULL, NULL, NULL, &err), MB_EIO);
    assert_non_null(strstr(err.msg, "stopped"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_norm_name),
        cmocka_unit_test(test_link_target_rules),
        cmocka_unit_test(test_quote),
        cmocka_unit_test_setup_teardown(test_both_member_styles, box_setup, box_teardown),
        cmocka_unit_test_setup_teardown(test_refusals_change_nothing, box_setup, box_teardown),
        cmocka_unit_test_setup_teardown(test_limits, box_setup, box_teardown),
        cmocka_unit_test_setup_teardown(test_owner, box_setup, box_teardown),
        cmocka_unit_test_setup_teardown(test_overlay_and_conflict_is_atomic, box_setup, box_teardown),
        cmocka_unit_test_setup_teardown(test_bad_streams, box_setup, box_teardown),
        cmocka_unit_test_setup_teardown(test_default_staging_is_beside_the_workspace, box_setup,
                                        box_teardown),
        cmocka_unit_test_setup_teardown(test_dump_order_skips_and_round_trip, box_setup, box_teardown),
        cmocka_unit_test_setup_teardown(test_dump_errors, box_setup, box_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
