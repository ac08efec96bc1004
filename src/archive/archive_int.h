/*
 * archive_int.h - what the files of the archive layer share and nobody else
 * uses: member-name rules, confined opens, the UTF-8 locale switch and
 * quoting names for messages. Semi-private: names are mb_archive__*.
 */
#ifndef MB_ARCHIVE_INT_H
#define MB_ARCHIVE_INT_H

#include <archive.h>
#include <locale.h>
#include <stddef.h>
#include <sys/types.h>

#include "archive/archive.h"

/* ------------------------------------------------------------ member names */

/*
 * Normalises a member name into `out` (MB_ARCHIVE_PATH_MAX + 1 bytes):
 * leading "./" and "." or empty components dropped, so "./a//b/" gives
 * "a/b" and "." gives "" (the root). Returns NULL on success, or a short
 * reason the name is refused (absolute, "..", too long, not UTF-8, empty).
 */
const char *mb_archive__norm_name(const char *raw, char *out);


/*
 * Checks a symlink target as text: `target` is what the link at normalised
 * path `name` points to. Returns NULL if it is relative and, resolving "."
 * and ".." from the link's directory, never climbs above the root; else a
 * short reason. Links through other symlinks are the kernel's to check
 * (mb_archive__resolves_beneath).
 */
const char *mb_archive__link_target_check(const char *name, const char *target);

/*
 * Writes `s` into `out` (size n >= 16) for an error message: in single
 * quotes, printable UTF-8 kept, other bytes as \xNN, cut with "..." when
 * long so that a message stays readable.
 */
void mb_archive__quote(const char *s, char *out, size_t n);

/* ------------------------------------------------------------ confined opens */

/*
 * openat2(dirfd, path, flags | O_CLOEXEC | O_NOFOLLOW, mode) with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: no
 * component may be a symlink and the result is inside dirfd's tree.
 * `path` "" means dirfd itself. Returns the fd, or -errno (ELOOP for a
 * symlink on the way, ENOTDIR for a file on the way).
 */
int mb_archive__open_beneath(int dirfd, const char *path, int flags, mode_t mode);

/*
 * 0 if `path` under dirfd resolves, following symlinks, to somewhere inside
 * dirfd's tree or to nothing (dangling); -EXDEV if the resolution leaves
 * the tree; -ELOOP for a loop; other -errno for failures.
 */
int mb_archive__resolves_beneath(int dirfd, const char *path);

/* --------------------------------------------------------------- staging */

/* Makes a fresh, uniquely named (written to `name`) 0700 directory in
 * parent_fd; returns its fd, or a negative mb_code. */
int mb_archive__stage_make(int parent_fd, char name[64], mb_err *err);

/* Removes the staging directory `name` of parent_fd and everything in it,
 * given its open fd (not closed), with a bounded number of fds whatever
 * the depth. Returns 0 or -errno. */
int mb_archive__stage_remove(int parent_fd, const char *name, int stage_fd);

/* ---------------------------------------------------------------- gzpipe */

/* gzip compression on a second thread (gzpipe.c). Opaque. */
typedef struct mb_archive__gzpipe mb_archive__gzpipe;

/* Starts a pipe compressing at `level` to out_fd, or to fn(payload, ...)
 * when fn is set (then called on the compressor thread). */
int mb_archive__gzpipe_start(mb_archive__gzpipe **out, int level, int out_fd,
                             mb_archive_write_fn fn, void *payload, mb_err *err);

/* libarchive write callback for the tar writer; payload is the pipe. */
la_ssize_t mb_archive__gzpipe_write(struct archive *a, void *payload, const void *buf,
                                    size_t len);

/* Ends the pipe: `ok` flushes the gzip stream, else it is abandoned. Frees
 * the pipe; returns 0 or the compressor's error; *compressed = bytes out. */
int mb_archive__gzpipe_finish(mb_archive__gzpipe *p, int ok, uint64_t *compressed, mb_err *err);

/* ----------------------------------------------------------------- merge */

/*
 * Moves the tree under `stage_fd` into the workspace `ws_fd` (merge.c).
 * With dry_run, only looks for conflicts. Returns 0, MB_ECONFLICT naming
 * the member, or the mb_err_sys code of a failed system call.
 */
int mb_archive__merge(int stage_fd, int ws_fd, int dry_run, mb_err *err);

/* --------------------------------------------------------------- locale */

/* Switches the calling thread to C.UTF-8 (LC_CTYPE) so that libarchive
 * reads and writes UTF-8 names without lossy conversion; returns what
 * mb_archive__locale_leave needs to restore. Never fails: without C.UTF-8
 * the thread's locale is left alone. */
typedef struct mb_archive__locale {
    locale_t utf8;
    locale_t saved;
} mb_archive__locale;

void mb_archive__locale_enter(mb_archive__locale *l);
void mb_archive__locale_leave(mb_archive__locale *l);

#endif /* MB_ARCHIVE_INT_H */
