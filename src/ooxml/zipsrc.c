/*
 * zipsrc.c - the libzip source a package is opened through: it reads an
 * already open descriptor and writes by name.
 *
 * Why: zip_open(path) opens the path again, with a blocking open(2), after
 * mb_open_file has checked what is there; a FIFO swapped in between would
 * block the server. Reading from the descriptor the check opened leaves no
 * such window. Saving still needs libzip's named-file writing (a temp file
 * beside the path, renamed over it on commit), so the write commands go to
 * a file source made for the path, whose read side is never used (it only
 * stat(2)s the path when made, which does not block).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ooxml/ooxml_int.h"

typedef struct fdsrc {
    zip_source_t *rd; /* the descriptor */
    zip_source_t *wr; /* the path, for writing; made at the first BEGIN_WRITE */
    char *path;
    zip_error_t error;
} fdsrc;

/* An inner call's result; on failure its error becomes ours. */
static zip_int64_t pass(fdsrc *s, zip_source_t *inner, zip_int64_t r)
{
    if (r < 0) {
        zip_error_t *e = zip_source_error(inner);
        zip_error_set(&s->error, zip_error_code_zip(e), zip_error_code_system(e));
    }
    return r;
}

static zip_int64_t fdsrc_cb(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
    fdsrc *s = ud;
    switch (cmd) {
    case ZIP_SOURCE_OPEN: return pass(s, s->rd, zip_source_open(s->rd));
    case ZIP_SOURCE_READ: return pass(s, s->rd, zip_source_read(s->rd, data, len));
    case ZIP_SOURCE_CLOSE: return pass(s, s->rd, zip_source_close(s->rd));
    case ZIP_SOURCE_STAT: {
        zip_stat_t *st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &s->error);
        if (!st) return -1;
        if (pass(s, s->rd, zip_source_stat(s->rd, st)) < 0) return -1;
        return sizeof *st;
    }
    case ZIP_SOURCE_SEEK: {
        zip_source_args_seek_t *a = ZIP_SOURCE_GET_ARGS(zip_source_args_seek_t, data, len, &s->error);
        if (!a) return -1;
        return pass(s, s->rd, zip_source_seek(s->rd, a->offset, a->whence));
    }
    case ZIP_SOURCE_TELL: return pass(s, s->rd, zip_source_tell(s->rd));
    case ZIP_SOURCE_BEGIN_WRITE:
        if (!s->wr && !(s->wr = zip_source_file_create(s->path, 0, -1, &s->error))) return -1;
        return pass(s, s->wr, zip_source_begin_write(s->wr));
    case ZIP_SOURCE_WRITE: return pass(s, s->wr, zip_source_write(s->wr, data, len));
    case ZIP_SOURCE_SEEK_WRITE: {
        zip_source_args_seek_t *a = ZIP_SOURCE_GET_ARGS(zip_source_args_seek_t, data, len, &s->error);
        if (!a) return -1;
        return pass(s, s->wr, zip_source_seek_write(s->wr, a->offset, a->whence));
    }
    case ZIP_SOURCE_TELL_WRITE: return pass(s, s->wr, zip_source_tell_write(s->wr));
    case ZIP_SOURCE_COMMIT_WRITE: return pass(s, s->wr, zip_source_commit_write(s->wr));
    case ZIP_SOURCE_ROLLBACK_WRITE:
        if (s->wr) zip_source_rollback_write(s->wr);
        return 0;
    case ZIP_SOURCE_REMOVE: /* every entry was deleted: libzip removes the file */
        if (unlink(s->path) != 0 && errno != ENOENT) {
            zip_error_set(&s->error, ZIP_ER_REMOVE, errno);
            return -1;
        }
        return 0;
    case ZIP_SOURCE_ERROR: return zip_error_to_data(&s->error, data, len);
    case ZIP_SOURCE_FREE:
        zip_source_free(s->rd);
        if (s->wr) zip_source_free(s->wr);
        zip_error_fini(&s->error);
        free(s->path);
        free(s);
        return 0;
    case ZIP_SOURCE_SUPPORTS: return ZIP_SOURCE_SUPPORTS_WRITABLE;
    default: zip_error_set(&s->error, ZIP_ER_OPNOTSUPP, 0); return -1;
    }
}

zip_source_t *mb_ooxml__fd_source(int fd, const char *path, zip_error_t *error)
{
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        zip_error_set(error, ZIP_ER_OPEN, errno);
        close(fd);
        return NULL;
    }
    zip_source_t *rd = zip_source_filep_create(f, 0, -1, error);
    if (!rd) {
        fclose(f);
        return NULL;
    }
    fdsrc *s = mb_calloc(1, sizeof *s);
    s->rd = rd;
    s->path = mb_strdup(path);
    zip_error_init(&s->error);
    zip_source_t *src = zip_source_function_create(fdsrc_cb, s, error);
    if (!src) {
        zip_source_free(rd);
        zip_error_fini(&s->error);
        free(s->path);
        free(s);
    }
    return src;
}
