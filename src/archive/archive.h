/*
 * archive.h - the face of the archive layer: gzip tar in (initialize) and out
 * (dump) of a sandbox workspace, with libarchive.
 *
 * IN: mb_archive_extract()
 *   The input is a gzip-compressed tar (ustar, pax or GNU). Every member is
 *   checked before anything it names is touched, and the whole archive is
 *   refused -- with a message naming the member or the archive problem --
 *   when any member breaks a rule:
 *     - names: relative, no ".." component, valid UTF-8, at most
 *       MB_ARCHIVE_PATH_MAX bytes and MB_ARCHIVE_NAME_MAX per component;
 *       "./a/b", "a/b" and "." (the workspace root itself) are all accepted;
 *     - types: regular files, directories, symlinks, hard links; never
 *       devices, fifos or sockets; never setuid or setgid bits (refused, not
 *       silently stripped, so that what lands in the workspace is what the
 *       archive says);
 *     - symlinks: relative targets that stay inside the workspace, both as
 *       text and as the kernel resolves them once the archive is in place;
 *     - hard links: to a regular file or symlink the same archive created;
 *     - nothing is ever written through a symlink, whether the archive
 *       planted it or it was already in the workspace;
 *     - limits: expanded size (the tar stream after gunzip, which bounds
 *       the compression ratio too) and entry count, see the opts below.
 *
 *   DESIGN (all-or-nothing). The archive is streamed, with fixed buffers,
 *   into a fresh staging directory created beside the workspace (in
 *   opts->staging_dir, default: the workspace's parent), which no sandbox
 *   process can see. Only when every member has been accepted and written
 *   is the staged tree moved into the workspace, by rename(2) under the
 *   same directory fds: first a dry run that finds any conflict with what
 *   the workspace already holds (a file where a directory is, a symlink
 *   where the archive needs a directory), then the moves themselves. A
 *   refused archive, a full disk or a conflict leaves the workspace exactly
 *   as it was and the staging directory removed. The only window where a
 *   partial result is possible is a process inside the sandbox changing
 *   the workspace between the dry run and the moves; even then nothing is
 *   written outside the workspace.
 *
 *   Overlay semantics: the workspace is not wiped first. Archive entries
 *   are added to it; a file or symlink replaces a file or symlink of the
 *   same name; a directory merges with an existing directory and applies
 *   its mode and mtime to it; everything else already there stays.
 *   The "." member applies its mtime and permission bits to the workspace
 *   root, keeping u+rwx so the owner never loses the workspace.
 *
 *   Safety: every file-system call is made relative to a directory fd of
 *   the staging area or the workspace, opened with openat2(RESOLVE_BENEATH |
 *   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), and the last component is
 *   handled with *at() calls that never follow it.
 *
 *   Memory: input and file data stream through fixed buffers. What grows
 *   is one small record per directory and per symlink entry (their final
 *   metadata and checks are applied at the end), so memory is bounded by
 *   the entry limit, not by the archive size.
 *
 * OUT: mb_archive_write_dir()
 *   Writes a gzip pax tar of a directory: "." first, then "./path" members
 *   in depth-first order with the names of each directory sorted bytewise;
 *   directories (empty ones too), regular files and relative symlinks that
 *   stay inside; uid/gid 0 and no user/group names; modes without the
 *   setuid/setgid bits; mtimes in whole seconds. Absolute or escaping
 *   symlinks, devices, fifos and sockets are skipped and reported through
 *   on_skip (Python's tarfile filter='data' would refuse them). Hard links
 *   are written as separate regular files. The walk never follows a
 *   symlink, so a process racing the dump cannot make it read outside.
 *
 * Thread-safety: no shared state; each call may run in its own thread.
 * A dump compresses on one helper thread of its own (gzpipe.c).
 * Character set: names are bytes; the calls switch the calling thread to
 * the C.UTF-8 locale for libarchive's sake and restore it before returning.
 */
#ifndef MB_ARCHIVE_H
#define MB_ARCHIVE_H

#include <stdint.h>
#include <sys/types.h>

#include "util/util.h"

/* Default limits (DESIGN.md 1.2); each can be overridden per call. */
#define MB_ARCHIVE_DEFAULT_MAX_BYTES (4ULL << 30) /* expanded tar stream */
#define MB_ARCHIVE_DEFAULT_MAX_ENTRIES 1000000ULL
/* Member names: whole path and each component, in bytes (Linux's limits). */
#define MB_ARCHIVE_PATH_MAX 4095
#define MB_ARCHIVE_NAME_MAX 255
/* gzip level of dumps. On /usr/include (294 MB, 24k files), 2 cores: levels
 * 1-3 take a third of the time of `tar czf` (gzip -6 in a second process);
 * 2 is as fast as 1 and 6% smaller (43.2 vs 45.7 MB), 3 is 20% slower;
 * gzip -6 would be 35.8 MB. Dumps are read once, by a grader on the same
 * machine: speed wins. */
#define MB_ARCHIVE_DEFAULT_GZIP_LEVEL 2

/* What one call did. Zero-initialise; the call overwrites every field. */
typedef struct mb_archive_stats {
    uint64_t entries;    /* members read or written, "." included */
    uint64_t bytes;      /* file content bytes */
    uint64_t expanded;   /* uncompressed tar stream bytes */
    uint64_t compressed; /* gzip bytes read or written */
    uint64_t skipped;    /* write only: entries left out (see on_skip) */
} mb_archive_stats;

/* ------------------------------------------------------------- extraction */

typedef struct mb_archive_extract_opts {
    uint64_t max_bytes;   /* refuse once the tar stream expands past this; 0 = default */
    uint64_t max_entries; /* refuse an archive with more members; 0 = default */
    uid_t uid;            /* owner of every entry created or named by the */
    gid_t gid;            /*   archive; (uid_t)-1 / (gid_t)-1 = leave as created */
    /* Existing directory on the workspace's file system, invisible to the
     * sandbox, in which a uniquely named staging directory is made (and
     * removed) for this call. NULL = the workspace's parent directory. */
    const char *staging_dir;
} mb_archive_extract_opts;

#define MB_ARCHIVE_EXTRACT_OPTS_INIT {0, 0, (uid_t)-1, (gid_t)-1, NULL}

/*
 * Extracts the gzip tar readable from `in_fd` (a file or a pipe, read to the
 * end of the tar stream; not closed) into the existing directory `workspace`,
 * all-or-nothing, as described at the top of this file. `opts` may be NULL
 * for the defaults; `stats` may be NULL.
 *
 * Returns 0, or:
 *   MB_EINVAL   the archive or one of its members breaks a rule (the
 *               message names the member, or says what is wrong with the
 *               archive: not gzip, truncated, not tar...);
 *   MB_ECONFLICT a member clashes with what the workspace already holds;
 *   MB_ETOOBIG  over max_bytes or max_entries;
 *   MB_ENOSPACE the disk or quota filled up;
 *   MB_EIO      any other system failure.
 */
int mb_archive_extract(int in_fd, const char *workspace, const mb_archive_extract_opts *opts,
                       mb_archive_stats *stats, mb_err *err);

/* Removes every staging directory (".mcpbox-extract-*") that an extraction
 * killed mid-way (kill -9 of the daemon) left in `staging_dir`, however deep
 * its tree, with a constant number of fds. Only for directories no
 * extraction is using now (the caller serialises). *removed (may be NULL)
 * counts them. A missing staging_dir is not an error. */
int mb_archive_stage_sweep(const char *staging_dir, unsigned *removed, mb_err *err);

/* ---------------------------------------------------------------- creation */

/* Receives the gzip bytes of a dump in order; returns 0, or non-zero to
 * stop (mb_archive_write_dir_cb then fails with MB_EIO). Called on the
 * dump's compression thread, one call at a time, never after the
 * mb_archive_write_dir_cb call that started it has returned. */
typedef int (*mb_archive_write_fn)(void *payload, const void *data, size_t len);

/* Told about each entry left out of a dump (or damaged while read):
 * `path` is the member name ("./a/b"), `why` a short reason. Called on
 * the calling thread. */
typedef void (*mb_archive_skip_fn)(void *payload, const char *path, const char *why);

typedef struct mb_archive_write_opts {
    int gzip_level;            /* 1..9; 0 = MB_ARCHIVE_DEFAULT_GZIP_LEVEL */
    mb_archive_skip_fn on_skip; /* may be NULL */
    void *payload;             /* handed to on_skip */
    /* Refuse (MB_ENOSPACE) a tree whose regular files add up to more than
     * this many bytes by apparent size (st_size: a sparse file counts in
     * full, as it would in the tar). Measured before anything is written,
     * so an oversized tree costs no compression, and enforced again while
     * writing (files grown meanwhile). 0 = no limit. */
    uint64_t max_bytes;
    /* mb_mono_ms() time after which the dump stops with MB_ETIMEOUT;
     * 0 = none. */
    int64_t deadline_ms;
} mb_archive_write_opts;

#define MB_ARCHIVE_WRITE_OPTS_INIT {0, NULL, NULL, 0, 0}

/*
 * Writes a gzip tar of directory `dir` to `out_fd` (not closed). `opts` and
 * `stats` may be NULL. Returns 0, MB_ENOTFOUND if `dir` is not a
 * directory, MB_EINVAL for a bad option, MB_ENOSPACE or MB_EIO (the output
 * failed). Unreadable files or odd entries inside are skipped and
 * reported, not fatal. Runs one helper thread for the gzip compression
 * (joined before returning), so that reading files and compressing overlap.
 */
int mb_archive_write_dir(const char *dir, int out_fd, const mb_archive_write_opts *opts,
                         mb_archive_stats *stats, mb_err *err);

/* The same, handing the gzip bytes to `write_fn` instead of an fd. */
int mb_archive_write_dir_cb(const char *dir, mb_archive_write_fn write_fn, void *payload,
                            const mb_archive_write_opts *opts, mb_archive_stats *stats,
                            mb_err *err);

#endif /* MB_ARCHIVE_H */
