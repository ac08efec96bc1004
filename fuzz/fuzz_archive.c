/*
 * fuzz_archive.c - the archive layer: the member-name and link-target rules
 * (archive/path.c) and mb_archive_extract on a hostile tar.gz, with small
 * limits, into a workspace made once and emptied after every run.
 *
 * Input: byte 0 picks the mode.
 *   even  the rest is a tar stream (or any bytes); the harness gzips it
 *         (unless it is gzip already) and extracts it. Checked: nothing is
 *         written outside the workspace, no staging directory is left, a
 *         failed extraction leaves the workspace as it was (empty), every
 *         symlink created stays inside the workspace, and a dump of what
 *         was extracted extracts to the same tree.
 *   odd   the rest is "NAME\nTARGET": the path rules, checked against what
 *         they promise (normal form, no "..", no way out of the root).
 */
#define _GNU_SOURCE
#include "fuzz.h"
#include "archive/archive_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[PATH_MAX], ws[PATH_MAX + 8], ws2[PATH_MAX + 8], stage[PATH_MAX + 8],
    outside[PATH_MAX + 16];

static void cleanup(void)
{
    mb_err err;
    if (base[0]) mb_rm_rf(base, &err);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/mcpbox-fuzz-archive-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(base)) abort();
    atexit(cleanup);
    /* base/ws is the workspace, base/stage the staging parent, base/outside a
     * neighbour that must stay empty. */
    snprintf(ws, sizeof ws, "%s/ws", base);
    snprintf(ws2, sizeof ws2, "%s/ws2", base);
    snprintf(stage, sizeof stage, "%s/stage", base);
    snprintf(outside, sizeof outside, "%s/outside", base);
    if (mkdir(ws, 0755) || mkdir(ws2, 0755) || mkdir(stage, 0700) || mkdir(outside, 0755))
        abort();
    return 0;
}

static size_t entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    FUZZ_CHECK(d, "cannot open %s", dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Every symlink in the workspace, judged as text from where it sits. */
static int check_link(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type != FTW_SL) return 0;
    char target[PATH_MAX + 1];
    ssize_t n = readlink(path, target, PATH_MAX);
    FUZZ_CHECK(n > 0, "cannot read link %s", path);
    target[n] = '\0';
    const char *rel = path + strlen(ws) + 1;
    FUZZ_CHECK(target[0] != '/', "absolute symlink %s -> %s", rel, target);
    FUZZ_CHECK(mb_archive__link_target_check(rel, target) == NULL,
               "symlink %s -> %s leads out of the workspace", rel, target);
    return 0;
}

/* A tree as sorted text lines: path, type, permissions (without setuid and
 * setgid, which dumps drop), a hash of a file's bytes, a link's target. */
static mb_buf listing;
static size_t root_len;

static int list_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (strlen(path) <= root_len) return 0; /* the root itself */
    const char *rel = path + root_len + 1;
    char extra[PATH_MAX + 32] = "";
    if (type == FTW_SL) {
        ssize_t n = readlink(path, extra, PATH_MAX);
        extra[n > 0 ? n : 0] = '\0';
    } else if (S_ISREG(st->st_mode)) {
        uint64_t h = 1469598103934665603ull;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        FUZZ_CHECK(fd >= 0, "cannot read %s", rel);
        unsigned char buf[8192];
        ssize_t r;
        while ((r = read(fd, buf, sizeof buf)) > 0)
            for (ssize_t i = 0; i < r; i++) h = (h ^ buf[i]) * 1099511628211ull;
        close(fd);
        snprintf(extra, sizeof extra, "%lld:%016llx", (long long)st->st_size,
                 (unsigned long long)h);
    }
    mb_buf_printf(&listing, "%s\x01%c%o\x01%s\n", rel,
                  type == FTW_SL ? 'l' : S_ISDIR(st->st_mode) ? 'd' : S_ISREG(st->st_mode) ? 'f' : '?',
                  (unsigned)(st->st_mode & 01777), extra);
    return 0;
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *tree_of(const char *root)
{
    mb_buf_reset(&listing);
    mb_buf_puts(&listing, "");
    root_len = strlen(root);
    nftw(root, list_entry, 16, FTW_PHYS);
    /* sort the lines */
    size_t n = 0;
    for (size_t i = 0; i < listing.len; i++) n += listing.data[i] == '\n';
    char **lines = calloc(n + 1, sizeof *lines);
    size_t k = 0;
    for (char *p = listing.data, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = '\0';
        lines[k++] = p;
    }
    qsort(lines, k, sizeof *lines, cmp_lines);
    mb_buf out = {0};
    mb_buf_puts(&out, "");
    for (size_t i = 0; i < k; i++) {
        mb_buf_puts(&out, lines[i]);
        mb_buf_putc(&out, '\n');
    }
    free(lines);
    return mb_buf_steal(&out);
}

static void empty(const char *dir)
{
    mb_err err;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    FUZZ_CHECK(fd >= 0, "cannot open %s", dir);
    /* Modes such as 000 on a directory must not stop the cleanup. */
    FUZZ_CHECK(mb_empty_dir_at(fd, &err) == MB_OK, "cannot empty %s: %s", dir, err.msg);
    close(fd);
}

static void on_skip(void *payload, const char *path, const char *why)
{
    (void)payload;
    FUZZ_CHECK(0, "the dump skipped %s (%s), which extraction accepted", path, why);
}

/* What was extracted is dumped (mb_archive_write_dir) and extracted again:
 * the same tree comes back. */
static void round_trip(void)
{
    int fd = memfd_create("fuzz-dump", MFD_CLOEXEC);
    FUZZ_CHECK(fd >= 0, "memfd");
    mb_archive_write_opts wo = MB_ARCHIVE_WRITE_OPTS_INIT;
    wo.on_skip = on_skip;
    mb_archive_stats st;
    mb_err err = {0};
    FUZZ_CHECK(mb_archive_write_dir(ws, fd, &wo, &st, &err) == MB_OK, "dump failed: %s", err.msg);
    lseek(fd, 0, SEEK_SET);
    mb_archive_extract_opts o = MB_ARCHIVE_EXTRACT_OPTS_INIT;
    o.staging_dir = stage;
    FUZZ_CHECK(mb_archive_extract(fd, ws2, &o, &st, &err) == MB_OK,
               "the dump of an extracted tree does not extract: %s", err.msg);
    close(fd);
    char *a = tree_of(ws), *b = tree_of(ws2);
    FUZZ_CHECK(!strcmp(a, b), "the tree changed in a dump and extract:\n%s---\n%s", a, b);
    free(a);
    free(b);
    empty(ws2);
}

/* The input gzipped (raw format: one stream, no tar framing added). */
static unsigned char *gzip_of(const uint8_t *p, size_t n, size_t *out_len)
{
    size_t cap = n + n / 2 + 1024;
    unsigned char *out = malloc(cap);
    struct archive *a = archive_write_new();
    archive_write_add_filter_gzip(a);
    archive_write_set_filter_option(a, "gzip", "compression-level", "1");
    archive_write_set_format_raw(a);
    archive_write_set_bytes_in_last_block(a, 1);
    size_t used = 0;
    if (archive_write_open_memory(a, out, cap, &used) != ARCHIVE_OK) abort();
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_pathname(e, "x");
    archive_entry_set_size(e, (la_int64_t)n);
    if (archive_write_header(a, e) != ARCHIVE_OK) abort();
    if (n && archive_write_data(a, p, n) != (la_ssize_t)n) abort();
    archive_entry_free(e);
    if (archive_write_close(a) != ARCHIVE_OK) abort();
    archive_write_free(a);
    *out_len = used;
    return out;
}

static void run_extract(const uint8_t *p, size_t n)
{
    size_t glen = n;
    unsigned char *gz = NULL;
    if (n < 2 || p[0] != 0x1f || p[1] != 0x8b) gz = gzip_of(p, n, &glen);
    int fd = memfd_create("fuzz-upload", MFD_CLOEXEC);
    FUZZ_CHECK(fd >= 0, "memfd");
    const unsigned char *src = gz ? gz : p;
    for (size_t off = 0; off < glen;) {
        ssize_t w = write(fd, src + off, glen - off);
        FUZZ_CHECK(w > 0, "write memfd");
        off += (size_t)w;
    }
    free(gz);
    lseek(fd, 0, SEEK_SET);

    mb_archive_extract_opts o = MB_ARCHIVE_EXTRACT_OPTS_INIT;
    o.max_bytes = 1 << 20;
    o.max_entries = 200;
    o.staging_dir = stage;
    mb_archive_stats st;
    mb_err err = {0};
    int rc = mb_archive_extract(fd, ws, &o, &st, &err);
    close(fd);
    if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "extract: rc %d, %s\n", rc, rc ? err.msg : "ok");
    FUZZ_CHECK(mb_utf8_valid(err.msg, strlen(err.msg)), "error message is not valid UTF-8");
    FUZZ_CHECK(entries_in(stage) == 0, "a staging directory was left behind");
    FUZZ_CHECK(entries_in(outside) == 0, "something was written outside the workspace");
    if (rc == MB_OK) {
        FUZZ_CHECK(st.entries <= 200, "%llu entries past the limit",
                   (unsigned long long)st.entries);
        nftw(ws, check_link, 16, FTW_PHYS);
        round_trip();
    } else {
        FUZZ_CHECK(err.msg[0], "a failure without a message");
        FUZZ_CHECK(entries_in(ws) == 0, "a failed extraction changed the workspace");
    }
    empty(ws);
}

/* --------------------------------------------------------------- path rules */

static void check_name(const char *raw)
{
    static char out[MB_ARCHIVE_PATH_MAX + 1];
    const char *why = mb_archive__norm_name(raw, out);
    if (why) return;
    size_t n = strlen(out);
    FUZZ_CHECK(n <= MB_ARCHIVE_PATH_MAX, "normal name too long");
    FUZZ_CHECK(mb_utf8_valid(out, n), "normal name not UTF-8");
    FUZZ_CHECK(out[0] != '/' && (n == 0 || out[n - 1] != '/'), "normal name %s", out);
    FUZZ_CHECK(!strstr(out, "//"), "empty component in %s", out);
    for (const char *p = out; *p;) {
        const char *s = strchr(p, '/');
        size_t k = s ? (size_t)(s - p) : strlen(p);
        FUZZ_CHECK(k > 0 && k <= MB_ARCHIVE_NAME_MAX, "component of %zu bytes", k);
        FUZZ_CHECK(!(k == 1 && p[0] == '.') && !(k == 2 && p[0] == '.' && p[1] == '.'),
                   "dot component in %s", out);
        p += k + (s ? 1 : 0);
    }
    /* Normal form is a fixed point. */
    static char again[MB_ARCHIVE_PATH_MAX + 1];
    if (n) {
        FUZZ_CHECK(mb_archive__norm_name(out, again) == NULL && !strcmp(out, again),
                   "normalising %s again changed it", out);
    }
}

/* Resolves target from the directory of name by text alone; 0 if it climbs
 * above the root. */
static int stays_inside(const char *name, const char *target)
{
    long depth = 0;
    for (const char *p = name; *p; p++) depth += *p == '/';
    for (const char *p = target; *p;) {
        const char *s = strchr(p, '/');
        size_t k = s ? (size_t)(s - p) : strlen(p);
        if (k == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0) return 0;
        } else if (k && !(k == 1 && p[0] == '.')) {
            depth++;
        }
        p += k + (s ? 1 : 0);
    }
    return 1;
}

static void check_link_rule(const char *raw_name, const char *target)
{
    static char name[MB_ARCHIVE_PATH_MAX + 1];
    if (mb_archive__norm_name(raw_name, name)) return;
    if (mb_archive__link_target_check(name, target)) return;
    FUZZ_CHECK(target[0] && target[0] != '/', "accepted target '%s'", target);
    FUZZ_CHECK(stays_inside(name, target), "accepted %s -> %s, which leaves the root", name,
               target);
}

static void check_quote(const char *s, size_t cap)
{
    char *out = malloc(cap + 1);
    out[cap] = 'X';
    mb_archive__quote(s, out, cap);
    FUZZ_CHECK(out[cap] == 'X', "quote wrote past %zu bytes", cap);
    size_t n = strlen(out);
    FUZZ_CHECK(n < cap && mb_utf8_valid(out, n), "quote is not valid UTF-8 within the cap");
    FUZZ_CHECK(out[0] == '\'' && out[n - 1] == '\'', "quote is not quoted");
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    unsigned sel = fuzz_byte(&in);
    if (!(sel & 1)) {
        run_extract(in.p, in.n);
        return 0;
    }
    const uint8_t *a, *b;
    size_t al = fuzz_part(&in, '\n', &a);
    size_t bl = fuzz_part(&in, '\n', &b);
    char *name = fuzz_str(a, al), *target = fuzz_str(b, bl);
    check_name(name);
    check_link_rule(name, target);
    check_quote(name, 16 + sel % 300);
    free(name);
    free(target);
    return 0;
}
