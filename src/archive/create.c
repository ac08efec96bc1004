/*
 * create.c - mb_archive_write_dir: a gzip pax tar of a directory, the dump
 * of a workspace (the output rules are in archive.h).
 *
 * The walk is depth first with each directory's names sorted bytewise, so
 * the same tree always gives the same member order, and parents come
 * before their contents (what extractors want to set directory mtimes
 * last). Each directory is opened from the root with
 * mb_archive__open_beneath (no symlink followed anywhere on the way) and
 * closed again before descending, so depth costs no file descriptors;
 * files are opened with O_NOFOLLOW | O_NONBLOCK relative to their
 * directory and re-checked with fstat, so a process racing the dump can
 * neither make it follow a link nor hang it on a fifo.
 *
 * The tar stream goes to gzpipe.c, which compresses it on a second thread
 * (as `tar czf` overlaps tar and gzip in two processes).
 *
 * Bounds: with opts->max_bytes, the tree is first measured (apparent sizes,
 * one fstatat per entry) and refused before anything is compressed when it
 * is over; the limit is checked again per file while writing, and
 * opts->deadline_ms per copied chunk.
 *
 * Memory: one copy buffer, the pipe's ring, libarchive's fixed buffers,
 * and the sorted names of the directories on the current path.
 */
#define _GNU_SOURCE
#include "archive/archive_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_BUF (256 * 1024)
#define TAR_BLOCK (256 * 1024) /* what the tar writer hands the pipe at a time */

typedef struct writer {
    struct archive *a;        /* pax tar, no filter, writing into `pipe` */
    struct archive_entry *e;  /* reused for every member */
    int root_fd;
    const mb_archive_write_opts *o;
    mb_archive__gzpipe *pipe;
    char *buf;                /* COPY_BUF bytes */
    mb_archive_stats st;
    mb_err *err;
} writer;

static void skip(writer *w, const char *member, const char *why)
{
    w->st.skipped++;
    if (w->o->on_skip) w->o->on_skip(w->o->payload, member, why);
}

/* A libarchive failure of the tar writer. When the pipe failed first, the
 * caller replaces this with the pipe's own error. */
static int fatal(writer *w)
{
    const char *m = archive_error_string(w->a);
    int e = archive_errno(w->a);
    if (e > 0) return mb_err_sys(w->err, e, "cannot write the archive%s%s", m ? " - " : "", m ? m : "");
    return mb_err_set(w->err, MB_EIO, "cannot write the archive: %s", m ? m : "unknown error");
}

/* Writes one header. Returns 0 written, 1 skipped (reported), <0 fatal. */
static int put_header(writer *w, const char *member, const struct stat *st, const char *link)
{
    archive_entry_clear(w->e);
    archive_entry_copy_pathname(w->e, member);
    archive_entry_set_filetype(w->e, st->st_mode & S_IFMT);
    /* setuid/setgid never leave the workspace (our own extractor and
     * tarfile's data filter would refuse or strip them anyway). */
    archive_entry_set_perm(w->e, st->st_mode & 01777);
    archive_entry_set_mtime(w->e, st->st_mtim.tv_sec, 0);
    archive_entry_set_uid(w->e, 0);
    archive_entry_set_gid(w->e, 0);
    archive_entry_set_size(w->e, S_ISREG(st->st_mode) ? st->st_size : 0);
    if (link) archive_entry_copy_symlink(w->e, link);
    int r = archive_write_header(w->a, w->e);
    if (r == ARCHIVE_FATAL) return fatal(w);
    if (r == ARCHIVE_FAILED) {
        skip(w, member, archive_error_string(w->a) ? archive_error_string(w->a) : "rejected");
        return 1;
    }
    w->st.entries++;
    return 0;
}

static int too_big(writer *w, uint64_t bytes)
{
    return mb_err_set(w->err, MB_ENOSPACE,
                      "the directory holds at least %llu bytes of files by apparent size "
                      "(sparse files count in full), over the limit of %llu bytes",
                      (unsigned long long)bytes, (unsigned long long)w->o->max_bytes);
}

static int past_deadline(writer *w)
{
    return mb_err_set(w->err, MB_ETIMEOUT,
                      "the dump took too long and was stopped after %llu bytes of files",
                      (unsigned long long)w->st.bytes);
}

/* Adds up the apparent size of the regular files under directory fd dfd
 * (closed here) into *total, stopping once it passes limit. Never follows
 * a symlink. Returns 0, or 1 once over the limit. */
static int measure(int dfd, uint64_t limit, uint64_t *total, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return 0;
    }
    struct dirent *de;
    int over = 0;
    while (!over && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISREG(st.st_mode)) {
            *total += (uint64_t)st.st_size;
            over = *total > limit;
        } else if (S_ISDIR(st.st_mode) && depth < MB_ARCHIVE_PATH_MAX / 2) {
            int sub = openat(dirfd(d), de->d_name,
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) over = measure(sub, limit, total, depth + 1);
        }
    }
    closedir(d);
    return over;
}

static int put_data(writer *w, const void *buf, size_t len)
{
    if (archive_write_data(w->a, buf, len) < 0) return fatal(w);
    return 0;
}

/* Writes regular file `name` of directory dfd. With `guess` (readdir said
 * it is a file, unchecked), returns 2 instead of skipping when it turns out
 * not to be one, so that the caller looks again. */
static int add_file(writer *w, int dfd, const char *name, const char *member, int guess)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && guess && (errno == ELOOP || errno == ENOENT)) return 2;
    if (fd < 0) {
        char why[128];
        snprintf(why, sizeof why, "cannot open it: %s", strerror(errno));
        skip(w, member, why);
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (guess) {
            close(fd);
            return 2;
        }
        skip(w, member, "it changed while the dump was made");
        close(fd);
        return 0;
    }
    if (w->o->max_bytes && (uint64_t)st.st_size > w->o->max_bytes - w->st.bytes) {
        close(fd);
        return too_big(w, w->st.bytes + (uint64_t)st.st_size);
    }
    int rc = put_header(w, member, &st, NULL);
    if (rc) {
        close(fd);
        return rc < 0 ? rc : 0;
    }
    off_t left = st.st_size;
    int short_read = 0;
    while (left > 0) {
        size_t want = left < COPY_BUF ? (size_t)left : COPY_BUF;
        ssize_t n = short_read ? 0 : read(fd, w->buf, want);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            /* Shrunk or unreadable meanwhile: the header promised `size`
             * bytes, so the rest is zeros, and the caller is told. */
            if (!short_read) skip(w, member, "it shrank or failed while read; the rest is zeros");
            short_read = 1;
            memset(w->buf, 0, want);
            n = (ssize_t)want;
        }
        if ((rc = put_data(w, w->buf, (size_t)n)) < 0) break;
        left -= n;
        if (w->o->deadline_ms && mb_mono_ms() > w->o->deadline_ms) {
            rc = past_deadline(w);
            break;
        }
    }
    close(fd);
    if (rc < 0) return rc;
    w->st.bytes += (uint64_t)st.st_size;
    return 0;
}

static int add_link(writer *w, int dfd, const char *name, const char *rel, const char *member,
                    const struct stat *st)
{
    char target[MB_ARCHIVE_PATH_MAX + 2];
    ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
    if (n < 0 || n > MB_ARCHIVE_PATH_MAX) {
        skip(w, member, n < 0 ? "cannot read the symlink" : "its target is too long");
        return 0;
    }
    target[n] = '\0';
    const char *why = mb_archive__link_target_check(rel, target);
    if (!why && mb_archive__resolves_beneath(w->root_fd, rel) == -EXDEV)
        why = "its link target leads outside the workspace through other links";
    if (why) {
        skip(w, member, why);
        return 0;
    }
    int rc = put_header(w, member, st, target);
    return rc < 0 ? rc : 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the names of directory `fd` (not consumed), sorted. *names is an
 * array into *store; both are freed by the caller. The byte before each
 * name is its readdir d_type (a hint that saves an fstatat per file). */
static int list_sorted(int fd, mb_buf *store, char ***names, size_t *count)
{
    int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
    if (!d) {
        int e = errno;
        if (dup_fd >= 0) close(dup_fd);
        return -e;
    }
    mb_buf offs = {0};
    struct dirent *de;
    size_t n = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        mb_buf_putc(store, (char)de->d_type);
        size_t at = store->len;
        mb_buf_append(&offs, &at, sizeof at);
        mb_buf_append(store, de->d_name, strlen(de->d_name) + 1);
        n++;
    }
    closedir(d);
    char **v = mb_calloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        size_t at;
        memcpy(&at, offs.data + i * sizeof at, sizeof at);
        v[i] = store->data + at;
    }
    mb_buf_free(&offs);
    qsort(v, n, sizeof *v, cmp_names);
    *names = v;
    *count = n;
    return 0;
}

/* Writes the contents of directory `rel` ("" = root), whose own header is
 * already written. */
static int walk(writer *w, const char *rel)
{
    int dfd = mb_archive__open_beneath(w->root_fd, rel, O_RDONLY | O_DIRECTORY, 0);
    char *member = mb_asprintf("./%s", rel);
    if (dfd < 0) {
        skip(w, member, "cannot open the directory");
        free(member);
        return 0;
    }
    mb_buf store = {0};
    char **names = NULL;
    size_t count = 0;
    int rc = list_sorted(dfd, &store, &names, &count);
    if (rc < 0) {
        skip(w, member, "cannot list the directory");
        rc = 0;
        count = 0;
    }
    free(member);
    for (size_t i = 0; i < count && rc >= 0; i++) {
        if (w->o->deadline_ms && mb_mono_ms() > w->o->deadline_ms) {
            rc = past_deadline(w);
            break;
        }
        const char *name = names[i];
        char *child = *rel ? mb_asprintf("%s/%s", rel, name) : mb_strdup(name);
        member = mb_asprintf("./%s", child);
        struct stat st;
        int too_long = strlen(child) > MB_ARCHIVE_PATH_MAX, done = 0;
        if (!too_long && (unsigned char)name[-1] == DT_REG) {
            rc = add_file(w, dfd, name, member, 1);
            done = rc != 2; /* 2: not a file after all, look again */
            if (rc == 2) rc = 0;
        }
        if (done) {
            /* written, skipped or fatal */
        } else if (too_long) {
            skip(w, member, "its path is longer than 4095 bytes");
        } else if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            skip(w, member, "it vanished while the dump was made");
        } else if (S_ISDIR(st.st_mode)) {
            rc = put_header(w, member, &st, NULL);
            if (rc == 0) {
                /* Close before descending: depth must not cost fds. */
                close(dfd);
                rc = walk(w, child);
                dfd = mb_archive__open_beneath(w->root_fd, rel, O_RDONLY | O_DIRECTORY, 0);
                if (dfd < 0 && rc >= 0) {
                    skip(w, member, "its parent vanished while the dump was made");
                    free(child);
                    free(member);
                    break;
                }
            }
        } else if (S_ISREG(st.st_mode)) {
            rc = add_file(w, dfd, name, member, 0);
        } else if (S_ISLNK(st.st_mode)) {
            rc = add_link(w, dfd, name, child, member, &st);
        } else {
            skip(w, member, S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "it is a device node"
                            : S_ISFIFO(st.st_mode)                      ? "it is a fifo"
                                                                        : "it is a socket");
        }
        if (rc > 0) rc = 0;
        free(child);
        free(member);
    }
    if (dfd >= 0) close(dfd);
    free(names);
    mb_buf_free(&store);
    return rc;
}

static int write_dir(const char *dir, int out_fd, mb_archive_write_fn write_fn, void *payload,
                     const mb_archive_write_opts *opts, mb_archive_stats *stats, mb_err *err)
{
    static const mb_archive_write_opts defaults = MB_ARCHIVE_WRITE_OPTS_INIT;
    if (!opts) opts = &defaults;
    int level = opts->gzip_level ? opts->gzip_level : MB_ARCHIVE_DEFAULT_GZIP_LEVEL;
    if (level < 1 || level > 9)
        return mb_err_set(err, MB_EINVAL, "gzip level %d is out of range 1..9", level);
    writer w;
    memset(&w, 0, sizeof w);
    w.o = opts;
    w.err = err;
    w.root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (w.root_fd < 0)
        return errno == ENOENT || errno == ENOTDIR
                   ? mb_err_set(err, MB_ENOTFOUND, "%s is not a directory", dir)
                   : mb_err_sys(err, errno, "cannot open %s", dir);
    if (opts->max_bytes) {
        uint64_t total = 0;
        int sub = openat(w.root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sub >= 0 && measure(sub, opts->max_bytes, &total, 0)) {
            close(w.root_fd);
            return too_big(&w, total);
        }
    }
    int rc = mb_archive__gzpipe_start(&w.pipe, level, out_fd, write_fn, payload, err);
    if (rc) {
        close(w.root_fd);
        return rc;
    }
    mb_archive__locale l;
    mb_archive__locale_enter(&l);
    w.buf = mb_malloc(COPY_BUF);
    w.a = archive_write_new();
    w.e = archive_entry_new();
    struct stat st;
    if (archive_write_set_format_pax_restricted(w.a) != ARCHIVE_OK ||
        archive_write_set_bytes_per_block(w.a, TAR_BLOCK) != ARCHIVE_OK ||
        archive_write_set_bytes_in_last_block(w.a, 1) != ARCHIVE_OK ||
        archive_write_open(w.a, w.pipe, NULL, mb_archive__gzpipe_write, NULL) != ARCHIVE_OK) {
        rc = fatal(&w);
    } else if (fstat(w.root_fd, &st) != 0) {
        rc = mb_err_sys(err, errno, "cannot inspect %s", dir);
    } else {
        rc = put_header(&w, ".", &st, NULL);
        if (rc == 0) rc = walk(&w, "");
        if (rc >= 0 && archive_write_close(w.a) != ARCHIVE_OK) rc = fatal(&w);
        if (rc > 0) rc = 0;
    }
    w.st.expanded = (uint64_t)archive_filter_bytes(w.a, -1);
    /* The pipe's error, if any, is the cause of ours: it wins. */
    mb_err perr = {0};
    int prc = mb_archive__gzpipe_finish(w.pipe, rc == 0, &w.st.compressed, &perr);
    if (prc) rc = mb_err_set(err, prc, "%s", perr.msg);
    if (stats) *stats = w.st;
    archive_entry_free(w.e);
    archive_write_free(w.a);
    free(w.buf);
    close(w.root_fd);
    mb_archive__locale_leave(&l);
    return rc;
}

int mb_archive_write_dir(const char *dir, int out_fd, const mb_archive_write_opts *opts,
                         mb_archive_stats *stats, mb_err *err)
{
    return write_dir(dir, out_fd, NULL, NULL, opts, stats, err);
}

int mb_archive_write_dir_cb(const char *dir, mb_archive_write_fn write_fn, void *payload,
                            const mb_archive_write_opts *opts, mb_archive_stats *stats,
                            mb_err *err)
{
    return write_dir(dir, -1, write_fn, payload, opts, stats, err);
}
