/*
 * package.c - opening, reading and saving OOXML zip packages with libzip.
 *
 * Design: the source archive stays open (libzip, read-write mode) while the
 * package lives. Parts are read on demand, bounded by their declared size.
 * Changes are kept in memory (replacement bytes, dirty documents, removals);
 * mb_ooxml_save hands them to libzip with zip_file_replace/add/delete and
 * zip_close writes a temp file beside the original and renames it over, which
 * copies the compressed bytes of every unchanged entry as they were.
 *
 * Sections: limits and lookup; open; read and parse; changes; save.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ooxml/ooxml_int.h"

/* -------------------------------------------------------- limits, lookup */

void mb_ooxml_limits_default(mb_ooxml_limits *lim)
{
    lim->max_entries = MB_OOXML_MAX_ENTRIES;
    lim->max_total = MB_OOXML_MAX_TOTAL;
    lim->max_part = MB_OOXML_MAX_PART;
    lim->max_ratio = MB_OOXML_MAX_RATIO;
    lim->ratio_floor = MB_OOXML_RATIO_FLOOR;
}

/* Part names are kept without leading '/' (zip entry names have none; a
 * name given as an OPC part name "/xl/x.xml" has one): every leading '/'
 * is dropped, when a part is made and when one is looked up, so that a
 * part is always found by the name it is listed under. */
mb_ooxml_part *mb_ooxml__find(const mb_ooxml *pkg, const char *name)
{
    while (name[0] == '/') name++;
    for (size_t i = 0; i < pkg->n; i++)
        if (!pkg->parts[i].removed && !strcasecmp(pkg->parts[i].name, name)) return &pkg->parts[i];
    return NULL;
}

static mb_ooxml_part *part_new(mb_ooxml *pkg, const char *name)
{
    if (pkg->n == pkg->cap) {
        pkg->cap = pkg->cap ? pkg->cap * 2 : 16;
        pkg->parts = mb_realloc(pkg->parts, pkg->cap * sizeof *pkg->parts);
    }
    mb_ooxml_part *p = &pkg->parts[pkg->n++];
    memset(p, 0, sizeof *p);
    while (name[0] == '/') name++;
    p->name = mb_strdup(name);
    p->index = -1;
    return p;
}

size_t mb_ooxml_count(const mb_ooxml *pkg)
{
    size_t c = 0;
    for (size_t i = 0; i < pkg->n; i++) c += !pkg->parts[i].removed;
    return c;
}

const char *mb_ooxml_name(const mb_ooxml *pkg, size_t i)
{
    for (size_t k = 0; k < pkg->n; k++) {
        if (pkg->parts[k].removed) continue;
        if (i-- == 0) return pkg->parts[k].name;
    }
    return NULL;
}

int mb_ooxml_has(const mb_ooxml *pkg, const char *name) { return mb_ooxml__find(pkg, name) != NULL; }

/* ------------------------------------------------------------------ open */

mb_ooxml *mb_ooxml_new(void)
{
    mb_ooxml *pkg = mb_calloc(1, sizeof *pkg);
    mb_ooxml_limits_default(&pkg->lim);
    return pkg;
}

/* The text for a libzip error code; `buf` holds libzip's own text for the
 * codes not named here (zip_error_strerror allocates it in the error, which
 * zip_error_fini frees). */
static const char *zip_why(int ze, char *buf, size_t cap)
{
    switch (ze) {
    case ZIP_ER_NOZIP: return "not a zip archive";
    case ZIP_ER_INCONS: return "the zip archive is inconsistent (truncated or corrupt)";
    case ZIP_ER_EOF: return "the zip archive ends too early (truncated)";
    case ZIP_ER_READ: return "the zip archive could not be read (truncated?)";
    case ZIP_ER_SEEK: return "the zip archive could not be read (truncated?)";
    case ZIP_ER_CRC: return "a zip entry fails its CRC check (corrupt)";
    case ZIP_ER_COMPNOTSUPP: return "a zip entry uses an unsupported compression method";
    case ZIP_ER_ENCRNOTSUPP: return "the zip archive is encrypted";
    case ZIP_ER_MEMORY: return "out of memory";
    default: {
        zip_error_t e;
        zip_error_init_with_code(&e, ze);
        snprintf(buf, cap, "%s", zip_error_strerror(&e));
        zip_error_fini(&e);
        return buf;
    }
    }
}

int mb_ooxml_open(const char *path, const mb_ooxml_limits *lim, mb_ooxml **out, int *sys_errno,
                  mb_err *err)
{
    *out = NULL;
    if (sys_errno) *sys_errno = 0;
    /* open(2) first, so that a missing or unreadable file reports its errno
     * and a FIFO or device fails (ENXIO) instead of blocking; libzip then
     * reads this descriptor, never the path again (zipsrc.c) */
    int fd = mb_open_file(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        if (sys_errno) *sys_errno = e;
        return mb_err_set(err, e == ENOENT ? MB_ENOTFOUND : MB_EIO, "cannot open %s: %s", path,
                          strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        if (sys_errno) *sys_errno = EISDIR;
        return mb_err_set(err, MB_EIO, "cannot open %s: %s", path, strerror(EISDIR));
    }

    char why[128];
    zip_error_t zerr;
    zip_error_init(&zerr);
    zip_source_t *src = mb_ooxml__fd_source(fd, path, &zerr);
    zip_t *za = src ? zip_open_from_source(src, ZIP_CHECKCONS, &zerr) : NULL;
    int ze = zip_error_code_zip(&zerr);
    zip_error_fini(&zerr);
    if (!za) {
        if (src) zip_source_free(src);
        if (ze == ZIP_ER_OPEN || ze == ZIP_ER_NOENT)
            return mb_err_set(err, MB_EIO, "cannot open %s", path);
        return mb_err_set(err, MB_EINVAL, "%s is not a valid Office document: %s", path,
                          zip_why(ze, why, sizeof why));
    }
    mb_ooxml *pkg = mb_calloc(1, sizeof *pkg);
    pkg->za = za;
    pkg->path = mb_strdup(path);
    if (lim) pkg->lim = *lim;
    else mb_ooxml_limits_default(&pkg->lim);

    int rc = MB_OK;
    zip_int64_t n = zip_get_num_entries(za, 0);
    if (n < 0 || (uint64_t)n > pkg->lim.max_entries) {
        rc = mb_err_set(err, MB_ETOOBIG, "%s has %lld zip entries, more than the %llu allowed",
                        path, (long long)n, (unsigned long long)pkg->lim.max_entries);
        goto out;
    }
    uint64_t total = 0;
    for (zip_int64_t i = 0; i < n; i++) {
        zip_stat_t zs;
        if (zip_stat_index(za, (zip_uint64_t)i, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME)) {
            rc = mb_err_set(err, MB_EINVAL, "%s is not a valid Office document: %s", path,
                            zip_why(zip_error_code_zip(zip_get_error(za)), why, sizeof why));
            goto out;
        }
        size_t nl = strlen(zs.name);
        if (nl && zs.name[nl - 1] == '/') continue; /* a directory entry: not a part */
        uint64_t size = (zs.valid & ZIP_STAT_SIZE) ? zs.size : 0;
        uint64_t comp = (zs.valid & ZIP_STAT_COMP_SIZE) ? zs.comp_size : 0;
        if (size > pkg->lim.max_part) {
            rc = mb_err_set(err, MB_ETOOBIG,
                            "%s: part %s inflates to %llu bytes, more than the %llu allowed (a zip bomb?)", path,
                            zs.name, (unsigned long long)size,
                            (unsigned long long)pkg->lim.max_part);
            goto out;
        }
        if (size >= pkg->lim.ratio_floor && (comp == 0 || size / comp > pkg->lim.max_ratio)) {
            rc = mb_err_set(err, MB_ETOOBIG,
                            "%s: part %s expands %llu times (a zip bomb?); at most %llu is allowed",
                            path, zs.name, (unsigned long long)(comp ? size / comp : size),
                            (unsigned long long)pkg->lim.max_ratio);
            goto out;
        }
        total += size;
        if (total > pkg->lim.max_total) {
            rc = mb_err_set(err, MB_ETOOBIG,
                            "%s inflates to more than %llu bytes in total (a zip bomb?)", path,
                            (unsigned long long)pkg->lim.max_total);
            goto out;
        }
        /* A second entry for a part (names compare without case and leading
         * '/', as OPC says) is ignored: reads and saves both see the first. */
        if (mb_ooxml__find(pkg, zs.name)) continue;
        mb_ooxml_part *p = part_new(pkg, zs.name);
        p->index = i;
        p->size = size;
    }
    if (!mb_ooxml__find(pkg, MB_OOXML_CT_PART)) {
        rc = mb_err_set(err, MB_EINVAL,
                        "%s is not a valid Office document: it has no [Content_Types].xml", path);
        goto out;
    }
out:
    if (rc) {
        mb_ooxml_free(pkg);
        return rc;
    }
    *out = pkg;
    return MB_OK;
}

void mb_ooxml_free(mb_ooxml *pkg)
{
    if (!pkg) return;
    for (size_t i = 0; i < pkg->n; i++) {
        free(pkg->parts[i].name);
        free(pkg->parts[i].data);
        if (pkg->parts[i].doc) xmlFreeDoc(pkg->parts[i].doc);
    }
    free(pkg->parts);
    if (pkg->za) zip_discard(pkg->za);
    free(pkg->path);
    free(pkg);
}

/* ---------------------------------------------------------- read, parse */

static int read_entry(mb_ooxml *pkg, mb_ooxml_part *p, char **data, size_t *len, mb_err *err)
{
    char why[128];
    zip_file_t *zf = zip_fopen_index(pkg->za, (zip_uint64_t)p->index, 0);
    if (!zf)
        return mb_err_set(err, MB_EINVAL, "part %s cannot be read: %s", p->name,
                          zip_why(zip_error_code_zip(zip_get_error(pkg->za)), why, sizeof why));
    /* one byte more than declared, to notice an entry that inflates past it */
    size_t want = (size_t)p->size + 1;
    char *buf = mb_malloc(want + 1);
    size_t got = 0;
    int rc = MB_OK;
    while (got < want) {
        zip_int64_t r = zip_fread(zf, buf + got, want - got);
        if (r < 0) {
            rc = mb_err_set(err, MB_EINVAL, "part %s cannot be read: %s", p->name,
                            zip_why(zip_error_code_zip(zip_file_get_error(zf)), why, sizeof why));
            break;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    zip_fclose(zf);
    if (!rc && got != p->size)
        rc = mb_err_set(err, got > p->size ? MB_ETOOBIG : MB_EINVAL,
                        "part %s inflates to %s its declared size of %llu bytes (corrupt or a "
                        "zip bomb)",
                        p->name, got > p->size ? "more than" : "less than",
                        (unsigned long long)p->size);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[got] = 0;
    *data = buf;
    if (len) *len = got;
    return MB_OK;
}

static char *memdup0(const void *p, size_t n)
{
    char *s = mb_malloc(n + 1);
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static int part_bytes(mb_ooxml *pkg, mb_ooxml_part *p, char **data, size_t *len, mb_err *err)
{
    if (p->doc && p->dirty) {
        xmlChar *mem = NULL;
        int n = 0;
        xmlDocDumpMemoryEnc(p->doc, &mem, &n, "UTF-8");
        if (!mem) return mb_err_set(err, MB_ENOMEM, "cannot serialize part %s", p->name);
        *data = memdup0(mem, (size_t)n);
        if (len) *len = (size_t)n;
        xmlFree(mem);
        return MB_OK;
    }
    if (p->has_data) {
        *data = memdup0(p->data, p->len);
        if (len) *len = p->len;
        return MB_OK;
    }
    if (p->index < 0) {
        *data = mb_strdup("");
        if (len) *len = 0;
        return MB_OK;
    }
    return read_entry(pkg, p, data, len, err);
}

int mb_ooxml_read(mb_ooxml *pkg, const char *name, char **data, size_t *len, mb_err *err)
{
    mb_ooxml_part *p = mb_ooxml__find(pkg, name);
    if (!p) return mb_err_set(err, MB_ENOTFOUND, "the package has no part %s", name);
    return part_bytes(pkg, p, data, len, err);
}

int mb_ooxml_xml(mb_ooxml *pkg, const char *name, xmlDocPtr *out, mb_err *err)
{
    mb_ooxml_part *p = mb_ooxml__find(pkg, name);
    if (!p) return mb_err_set(err, MB_ENOTFOUND, "the package has no part %s", name);
    if (!p->doc) {
        char *data;
        size_t len;
        int rc = part_bytes(pkg, p, &data, &len, err);
        if (rc) return rc;
        rc = mb_ooxml_parse(data, len, p->name, &p->doc, err);
        free(data);
        if (rc) return rc;
        if (p->has_data) { /* the document now stands for these bytes */
            free(p->data);
            p->data = NULL;
            p->has_data = 0;
            p->dirty = 1;
        }
    }
    *out = p->doc;
    return MB_OK;
}

void mb_ooxml_touch(mb_ooxml *pkg, const char *name)
{
    mb_ooxml_part *p = mb_ooxml__find(pkg, name);
    if (p && p->doc) p->dirty = 1;
}

/* --------------------------------------------------------------- changes */

void mb_ooxml_put(mb_ooxml *pkg, const char *name, const void *data, size_t len)
{
    mb_ooxml_part *p = mb_ooxml__find(pkg, name);
    if (!p) p = part_new(pkg, name);
    if (p->doc) xmlFreeDoc(p->doc);
    p->doc = NULL;
    p->dirty = 0;
    free(p->data);
    p->data = mb_malloc(len + 1);
    memcpy(p->data, data, len);
    p->data[len] = 0;
    p->len = len;
    p->has_data = 1;
}

void mb_ooxml_put_xml(mb_ooxml *pkg, const char *name, xmlDocPtr doc)
{
    mb_ooxml_part *p = mb_ooxml__find(pkg, name);
    if (!p) p = part_new(pkg, name);
    if (p->doc && p->doc != doc) xmlFreeDoc(p->doc);
    free(p->data);
    p->data = NULL;
    p->has_data = 0;
    p->doc = doc;
    p->dirty = 1;
}

void mb_ooxml_remove(mb_ooxml *pkg, const char *name)
{
    mb_ooxml_part *p = mb_ooxml__find(pkg, name);
    if (!p) return;
    p->removed = 1;
    if (p->doc) xmlFreeDoc(p->doc);
    p->doc = NULL;
    free(p->data);
    p->data = NULL;
}

/* ------------------------------------------------------------------ save */

static int stage_part(zip_t *za, mb_ooxml *pkg, mb_ooxml_part *p, int fresh, mb_err *err)
{
    char *data;
    size_t len;
    int rc = part_bytes(pkg, p, &data, &len, err);
    if (rc) return rc;
    /* libzip does not take (or free) the buffer of an empty source. */
    if (!len) {
        free(data);
        data = NULL;
    }
    zip_source_t *src = zip_source_buffer(za, data, len, 1);
    if (!src) {
        free(data);
        return mb_err_set(err, MB_ENOMEM, "cannot stage part %s", p->name);
    }
    zip_int64_t idx;
    if (!fresh && p->index >= 0) {
        idx = p->index;
        if (zip_file_replace(za, (zip_uint64_t)idx, src, 0) != 0) idx = -1;
    } else {
        idx = zip_file_add(za, p->name, src, ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE);
    }
    if (idx < 0) {
        zip_source_free(src);
        return mb_err_set(err, MB_EIO, "cannot stage part %s: %s", p->name, zip_strerror(za));
    }
    zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_DEFLATE, 0);
    return MB_OK;
}

int mb_ooxml_from_file(const mb_ooxml *pkg) { return pkg->za != NULL; }

int mb_ooxml_save(mb_ooxml *pkg, mb_err *err)
{
    if (!pkg->za) return mb_err_set(err, MB_EINVAL, "the package was not opened from a file");
    struct stat st;
    int have_mode = stat(pkg->path, &st) == 0;
    for (size_t i = 0; i < pkg->n; i++) {
        mb_ooxml_part *p = &pkg->parts[i];
        if (p->removed) {
            if (p->index >= 0 && zip_delete(pkg->za, (zip_uint64_t)p->index) != 0)
                return mb_err_set(err, MB_EIO, "cannot remove part %s: %s", p->name,
                                  zip_strerror(pkg->za));
            continue;
        }
        if ((p->doc && p->dirty) || p->has_data || p->index < 0) {
            int rc = stage_part(pkg->za, pkg, p, 0, err);
            if (rc) return rc;
        }
    }
    if (zip_close(pkg->za) != 0) {
        int rc = mb_err_set(err, MB_EIO, "cannot write %s: %s", pkg->path, zip_strerror(pkg->za));
        zip_discard(pkg->za);
        pkg->za = NULL;
        return rc;
    }
    pkg->za = NULL;
    if (have_mode) (void)chmod(pkg->path, st.st_mode & 07777);
    return MB_OK;
}

/* Every live part into a fresh archive, [Content_Types].xml first as Office
 * writes it. */
static int stage_all(zip_t *za, mb_ooxml *pkg, mb_err *err)
{
    int rc = MB_OK;
    mb_ooxml_part *ct = mb_ooxml__find(pkg, MB_OOXML_CT_PART);
    if (ct) rc = stage_part(za, pkg, ct, 1, err);
    for (size_t i = 0; !rc && i < pkg->n; i++) {
        mb_ooxml_part *p = &pkg->parts[i];
        if (p->removed || p == ct) continue;
        rc = stage_part(za, pkg, p, 1, err);
    }
    return rc;
}

int mb_ooxml_save_mem(mb_ooxml *pkg, char **data, size_t *len, mb_err *err)
{
    *data = NULL;
    *len = 0;
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_TRUNCATE, &ze) : NULL;
    if (!za) {
        int rc = mb_err_set(err, MB_ENOMEM, "cannot create an in-memory package: %s", zip_error_strerror(&ze));
        zip_error_fini(&ze);
        if (src) zip_source_free(src);
        return rc;
    }
    zip_error_fini(&ze);
    zip_source_keep(src); /* read back after zip_close */
    int rc = stage_all(za, pkg, err);
    if (!rc && zip_close(za) != 0) rc = mb_err_set(err, MB_EIO, "cannot write the package: %s", zip_strerror(za));
    if (rc) {
        zip_discard(za);
        zip_source_free(src);
        return rc;
    }
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_source_stat(src, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) || zip_source_open(src) != 0) {
        zip_source_free(src);
        return mb_err_set(err, MB_EIO, "cannot read the in-memory package");
    }
    char *buf = mb_malloc(st.size + 1);
    zip_int64_t got = zip_source_read(src, buf, st.size);
    zip_source_close(src);
    zip_source_free(src);
    if (got < 0 || (zip_uint64_t)got != st.size) {
        free(buf);
        return mb_err_set(err, MB_EIO, "cannot read the in-memory package");
    }
    buf[st.size] = 0;
    *data = buf;
    *len = (size_t)st.size;
    return MB_OK;
}

int mb_ooxml_save_as(mb_ooxml *pkg, const char *path, mb_err *err)
{
    int ze = 0;
    char why[128];
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &ze);
    if (!za) return mb_err_set(err, MB_EIO, "cannot create %s: %s", path, zip_why(ze, why, sizeof why));
    int rc = stage_all(za, pkg, err);
    if (rc) {
        zip_discard(za);
        return rc;
    }
    if (zip_close(za) != 0) {
        rc = mb_err_set(err, MB_EIO, "cannot write %s: %s", path, zip_strerror(za));
        zip_discard(za);
        return rc;
    }
    mode_t um = umask(0);
    umask(um);
    (void)chmod(path, 0666 & ~um);
    return MB_OK;
}
