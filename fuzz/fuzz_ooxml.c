/*
 * fuzz_ooxml.c - the OOXML package reader (ooxml/): a hostile zip opened
 * with small limits, every part read and (when it looks like XML) parsed,
 * content types and relationships walked, part-name arithmetic checked,
 * then the package saved and opened again: every part must come back with
 * the same bytes.
 *
 * Input: either a zip ("PK\3\4..."), written as it is, or parts to zip:
 * byte 0 holds flags (bit 0: deflate, else store; bit 7: then flip one byte
 * of the zip, at a place the other bits pick), the rest is NAME \0 DATA \0
 * NAME \0 DATA ... which the harness writes with libzip. Raw zips reach the
 * zip checks; built ones reach what lies behind them (content types,
 * relationships, XML), which random bytes in a zip seldom do.
 */
#define _GNU_SOURCE
#include "fuzz.h"
#include "ooxml/ooxml.h"

#include <zip.h>

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

static char dir[PATH_MAX], in_path[PATH_MAX + 16], out_path[PATH_MAX + 16];

static void cleanup(void)
{
    mb_err err;
    if (dir[0]) mb_rm_rf(dir, &err);
}

static void quiet_xml(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/mcpbox-fuzz-ooxml-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) abort();
    atexit(cleanup);
    snprintf(in_path, sizeof in_path, "%s/in.xlsx", dir);
    snprintf(out_path, sizeof out_path, "%s/out.xlsx", dir);
    xmlSetGenericErrorFunc(NULL, quiet_xml);
    return 0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcasecmp(s + a - b, suf);
}

/* A resolved part name is plain: no leading '/', no "." or ".." or empty
 * components. */
static void check_plain(const char *name, const char *what)
{
    FUZZ_CHECK(name[0] != '/', "%s starts with '/': %s", what, name);
    for (const char *p = name; *p;) {
        const char *s = strchr(p, '/');
        size_t k = s ? (size_t)(s - p) : strlen(p);
        FUZZ_CHECK(k > 0, "%s has an empty component: %s", what, name);
        FUZZ_CHECK(!(k == 1 && p[0] == '.') && !(k == 2 && p[0] == '.' && p[1] == '.'),
                   "%s has a dot component: %s", what, name);
        p += k + (s ? 1 : 0);
    }
}

static int is_plain(const char *name)
{
    if (!*name || name[0] == '/') return 0;
    for (const char *p = name; *p;) {
        const char *s = strchr(p, '/');
        size_t k = s ? (size_t)(s - p) : strlen(p);
        if (!k || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.')) return 0;
        p += k + (s ? 1 : 0);
    }
    return 1;
}

typedef struct walk {
    mb_ooxml *pkg;
    const char *source;
    int n;
} walk;

static int on_rel(const mb_ooxml_rel *rel, void *payload)
{
    walk *w = payload;
    FUZZ_CHECK(rel->id && rel->type && rel->target, "relationship with a NULL field");
    if (!rel->external) {
        char *r = mb_ooxml_resolve(w->source, rel->target);
        check_plain(r, "resolved target");
        free(r);
    }
    char *part = mb_ooxml_rel_part(w->pkg, w->source, rel->id);
    if (part) check_plain(part, "rel_part");
    free(part);
    return ++w->n >= 50; /* enough of one part's relationships */
}

static void read_all(mb_ooxml *pkg, const mb_ooxml_limits *lim)
{
    size_t count = mb_ooxml_count(pkg);
    for (size_t i = 0; i < count && i < 64; i++) {
        const char *name = mb_ooxml_name(pkg, i);
        FUZZ_CHECK(name && mb_ooxml_has(pkg, name), "part %zu has no name or is not found", i);
        char *data = NULL;
        size_t len = 0;
        mb_err err = {0};
        if (mb_ooxml_read(pkg, name, &data, &len, &err) == MB_OK) {
            FUZZ_CHECK(len <= lim->max_part, "read %zu bytes past the part limit", len);
            FUZZ_CHECK(data[len] == '\0', "part data not terminated");
        } else {
            FUZZ_CHECK(mb_utf8_valid(err.msg, strlen(err.msg)), "error not valid UTF-8");
        }
        free(data);
        if (ends_with(name, ".xml") || ends_with(name, ".rels")) {
            xmlDocPtr doc = NULL;
            if (mb_ooxml_xml(pkg, name, &doc, &err) == MB_OK)
                FUZZ_CHECK(doc != NULL, "parsed part without a document");
        }
        mb_ooxml_ct_get(pkg, name);
        walk w = {pkg, name, 0};
        mb_ooxml_rels_each(pkg, name, on_rel, &w, &err);
        char *rels = mb_ooxml_rels_name(name);
        free(rels);
        /* relative() and resolve() are inverses on plain names. */
        if (i + 1 < count) {
            const char *other = mb_ooxml_name(pkg, i + 1);
            if (is_plain(name) && is_plain(other)) {
                char *rel = mb_ooxml_relative(name, other);
                char *back = mb_ooxml_resolve(name, rel);
                FUZZ_CHECK(!strcmp(back, other), "resolve(%s, relative(%s)) = %s", name, other,
                           back);
                free(rel);
                free(back);
            }
        }
    }
    walk w = {pkg, "", 0};
    mb_err err;
    mb_ooxml_rels_each(pkg, "", on_rel, &w, &err);
}

/* Every readable part of a has the same bytes in b. */
static void same_parts(mb_ooxml *a, mb_ooxml *b)
{
    FUZZ_CHECK(mb_ooxml_count(a) == mb_ooxml_count(b), "saved package has %zu parts, not %zu",
               mb_ooxml_count(b), mb_ooxml_count(a));
    for (size_t i = 0; i < mb_ooxml_count(a) && i < 64; i++) {
        const char *name = mb_ooxml_name(a, i);
        char *x = NULL, *y = NULL;
        size_t xl = 0, yl = 0;
        mb_err err;
        if (mb_ooxml_read(a, name, &x, &xl, &err) != MB_OK) continue;
        FUZZ_CHECK(mb_ooxml_read(b, name, &y, &yl, &err) == MB_OK, "part %s unreadable after save: %s",
                   name, err.msg);
        FUZZ_CHECK(xl == yl && !memcmp(x, y, xl), "part %s changed in the save", name);
        free(x);
        free(y);
    }
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FUZZ_CHECK(fd >= 0, "cannot write %s", path);
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        FUZZ_CHECK(w > 0, "write");
        off += (size_t)w;
    }
    close(fd);
}

/* Zips NAME \0 DATA pairs into in_path (see the top of the file). */
static void build_zip(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    unsigned flags = fuzz_byte(&in);
    int ze = 0;
    zip_t *za = zip_open(in_path, ZIP_CREATE | ZIP_TRUNCATE, &ze);
    FUZZ_CHECK(za, "cannot create %s", in_path);
    for (int parts = 0; in.n && parts < 64; parts++) {
        const uint8_t *name, *body;
        size_t nl = fuzz_part(&in, 0, &name);
        size_t bl = fuzz_part(&in, 0, &body);
        char *nm = fuzz_str(name, nl);
        zip_source_t *src = zip_source_buffer(za, body, bl, 0);
        zip_int64_t idx = src && nl ? zip_file_add(za, nm, src, ZIP_FL_ENC_UTF_8) : -1;
        if (idx < 0) zip_source_free(src);
        else zip_set_file_compression(za, (zip_uint64_t)idx, flags & 1 ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 1);
        free(nm);
    }
    if (zip_close(za) != 0) {
        zip_discard(za);
        return;
    }
    if (!(flags & 0x80)) return;
    /* One byte flipped where the flags say. */
    int fd = open(in_path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return; /* no parts: libzip writes no file */
    off_t len = lseek(fd, 0, SEEK_END);
    if (len > 0) {
        off_t at = (off_t)(((flags >> 1) & 0x3F) * 2654435761u % (uint64_t)len);
        unsigned char c;
        if (pread(fd, &c, 1, at) == 1) {
            c ^= 0x5A;
            if (pwrite(fd, &c, 1, at) != 1) abort();
        }
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 4 && !memcmp(data, "PK\3\4", 4)) write_file(in_path, data, size);
    else build_zip(data, size);

    mb_ooxml_limits lim;
    mb_ooxml_limits_default(&lim);
    lim.max_entries = 200;
    lim.max_total = 16u << 20;
    lim.max_part = 8u << 20;
    lim.max_ratio = 200;
    lim.ratio_floor = 64u << 10;
    mb_ooxml *pkg = NULL;
    int sys_errno = 0;
    mb_err err = {0};
    int orc = mb_ooxml_open(in_path, &lim, &pkg, &sys_errno, &err);
    if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "open: rc %d, %s\n", orc, orc ? err.msg : "ok");
    if (orc != MB_OK) {
        FUZZ_CHECK(err.msg[0] && mb_utf8_valid(err.msg, strlen(err.msg)), "bad open error");
        return 0;
    }
    read_all(pkg, &lim);

    /* Save untouched, open again: the same parts with the same bytes. */
    if (mb_ooxml_save_as(pkg, out_path, &err) == MB_OK) {
        mb_ooxml *again = NULL;
        FUZZ_CHECK(mb_ooxml_open(out_path, &lim, &again, NULL, &err) == MB_OK,
                   "the saved package does not open: %s", err.msg);
        same_parts(pkg, again);
        mb_ooxml_free(again);
    }
    /* Edits as the servers make them: a relationship, a content type. */
    if (mb_ooxml_count(pkg)) {
        const char *first = mb_ooxml_name(pkg, 0);
        char *id = NULL;
        if (mb_ooxml_rel_add(pkg, first, "http://fuzz/rel", "fuzz.xml", &id, &err) == MB_OK) {
            char *part = mb_ooxml_rel_part(pkg, first, id);
            FUZZ_CHECK(part, "the relationship just added is not found");
            free(part);
            mb_ooxml_rel_remove(pkg, first, id, &err);
        }
        free(id);
        mb_ooxml_ct_override(pkg, "fuzz.xml", "application/xml", &err);
        mb_ooxml_ct_default(pkg, "fz", "application/x-fuzz", &err);
        mb_ooxml_put(pkg, "fuzz.xml", "<a/>", 4);
        mb_ooxml_save_as(pkg, out_path, &err);
    }
    mb_ooxml_free(pkg);
    return 0;
}
