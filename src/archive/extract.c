/*
 * extract.c - mb_archive_extract: a gzip tar into a workspace, all or
 * nothing (the rules and the design are in archive.h).
 *
 * Sections:
 *   input    two libarchive readers stacked: `gz` (gzip filter, raw format)
 *            yields the decompressed stream, which our read callback counts
 *            against max_bytes and hands to `tar` (tar format, no filter).
 *            Counting between the two is what stops a gzip bomb early,
 *            whatever the tar headers claim.
 *   members  one function per member type, each writing into the staging
 *            directory through confined fds; directory metadata and symlink
 *            checks that must wait for the end are kept as records.
 *   finish   kernel check of every symlink, the merge into the workspace
 *            (merge.c), then directory modes and mtimes (after their
 *            contents, since adding an entry changes a directory's mtime).
 */
#define _GNU_SOURCE
#include "archive/archive_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IN_BLOCK (128 * 1024) /* compressed bytes per read(2) */
#define IMPLICIT_DIR_MODE 0755

/* A record kept until the end: a directory's final metadata, or a symlink
 * to check once the whole tree exists. Stored packed in an mb_buf as the
 * head, then `len` path bytes and a NUL. */
enum { REC_DIR = 1, REC_LINK = 2 };

typedef struct rec_head {
    uint32_t kind;
    uint32_t mode;
    int64_t mtime_sec, atime_sec;
    int64_t mtime_nsec, atime_nsec;
    uint64_t len;
} rec_head;

typedef struct extractor {
    uint64_t max_bytes, max_entries;
    uid_t uid;
    gid_t gid;
    int ws_fd;            /* the workspace root */
    int stage_parent_fd;  /* where the staging directory is made */
    char stage_name[64];  /* its name there */
    int st_fd;            /* the staging root; -1 until made */
    struct archive *gz;   /* gzip + raw format: the decompressed stream */
    struct archive *tar;  /* tar format reading from gz via gz_read */
    uint64_t expanded;    /* decompressed bytes handed to tar so far */
    int over_limit;       /* gz_read stopped at max_bytes */
    int gz_failed;        /* gz_read saw a gzip error, in gz_msg */
    char gz_msg[256];
    mb_buf recs;          /* rec_head records */
    char *cache_path;     /* last staging directory opened as a parent */
    int cache_fd;
    char *member;         /* raw name of the current member (owned) */
    mb_archive_stats st;
    char name[MB_ARCHIVE_PATH_MAX + 1];   /* normalised name of the member */
    char target[MB_ARCHIVE_PATH_MAX + 1]; /* normalised hard link target */
} extractor;

/* --------------------------------------------------------------- messages */

static int member_err(extractor *ex, mb_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int member_err(extractor *ex, mb_err *err, int code, const char *fmt, ...)
{
    char q[300], why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    mb_archive__quote(ex->member, q, sizeof q);
    return mb_err_set(err, code, "archive member %s refused: %s", q, why);
}

static int member_sys(extractor *ex, mb_err *err, int e, const char *what)
{
    char q[300];
    mb_archive__quote(ex->member, q, sizeof q);
    return mb_err_sys(err, e, "cannot extract archive member %s: %s", q, what);
}

/* ------------------------------------------------------------------ input */

static la_ssize_t gz_read(struct archive *a, void *payload, const void **buf)
{
    extractor *ex = payload;
    size_t len;
    la_int64_t off;
    int r = archive_read_data_block(ex->gz, buf, &len, &off);
    if (r == ARCHIVE_EOF) return 0;
    if (r < ARCHIVE_WARN) {
        ex->gz_failed = 1;
        snprintf(ex->gz_msg, sizeof ex->gz_msg, "%s",
                 archive_error_string(ex->gz) ? archive_error_string(ex->gz) : "read error");
        archive_set_error(a, EINVAL, "%s", ex->gz_msg);
        return -1;
    }
    if (len > ex->max_bytes - ex->expanded) {
        ex->over_limit = 1;
        archive_set_error(a, EFBIG, "expanded-size limit reached");
        return -1;
    }
    ex->expanded += len;
    return (la_ssize_t)len;
}

/* What the first bytes of a non-gzip upload look like, for the message. */
static const char *sniff(const unsigned char *p, size_t n)
{
    if (n >= 6 && !memcmp(p, "\xfd" "7zXZ\0", 6)) return "xz-compressed data";
    if (n >= 3 && !memcmp(p, "BZh", 3)) return "bzip2-compressed data";
    if (n >= 4 && !memcmp(p, "\x28\xb5\x2f\xfd", 4)) return "zstd-compressed data";
    if (n >= 4 && !memcmp(p, "PK\3\4", 4)) return "a zip file";
    if (n >= 262 && !memcmp(p + 257, "ustar", 5)) return "an uncompressed tar archive";
    return "plain text or unknown data";
}

/* Message for a failure reported by the tar reader `ex->tar`. */
static int input_error(extractor *ex, mb_err *err)
{
    if (ex->over_limit)
        return mb_err_set(err, MB_ETOOBIG,
                          "the archive expands to more than %llu bytes, the expanded-size limit",
                          (unsigned long long)ex->max_bytes);
    if (ex->gz_failed) {
        if (strstr(ex->gz_msg, "runcated"))
            return mb_err_set(err, MB_EINVAL,
                              "the archive is truncated: its gzip stream ends early");
        return mb_err_set(err, MB_EINVAL, "the archive's gzip stream is damaged (%s)",
                          ex->gz_msg);
    }
    const char *m = archive_error_string(ex->tar);
    if (!m) m = "unknown error";
    if (ex->st.entries == 0 && strstr(m, "Unrecognized archive format"))
        return mb_err_set(err, MB_EINVAL, "the archive is gzip data but not a tar archive");
    if (ex->member) {
        char q[300];
        mb_archive__quote(ex->member, q, sizeof q);
        return mb_err_set(err, MB_EINVAL, "the tar stream is damaged or truncated at or after "
                          "member %s (%s)", q, m);
    }
    return mb_err_set(err, MB_EINVAL, "the tar stream is damaged or truncated (%s)", m);
}

static int open_input(extractor *ex, int in_fd, mb_err *err)
{
    struct stat st;
    if (fstat(in_fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
        return mb_err_set(err, MB_EINVAL, "the archive is empty (0 bytes)");

    ex->gz = archive_read_new();
    archive_read_support_filter_gzip(ex->gz);
    archive_read_support_format_raw(ex->gz);
    struct archive_entry *e;
    if (archive_read_open_fd(ex->gz, in_fd, IN_BLOCK) != ARCHIVE_OK ||
        archive_read_next_header(ex->gz, &e) < ARCHIVE_WARN) {
        const char *m = archive_error_string(ex->gz);
        if (m && strstr(m, "runcated"))
            return mb_err_set(err, MB_EINVAL, "the archive is truncated: its gzip stream ends early");
        if (archive_filter_count(ex->gz) > 1 && archive_filter_code(ex->gz, 0) == ARCHIVE_FILTER_GZIP)
            return mb_err_set(err, MB_EINVAL, "the archive is gzip data but not a tar archive");
        return mb_err_set(err, MB_EINVAL, "the archive is not a gzip-compressed tar (%s)",
                          m ? m : "unreadable");
    }
    if (archive_filter_code(ex->gz, 0) != ARCHIVE_FILTER_GZIP) {
        const void *buf = NULL;
        size_t len = 0;
        la_int64_t off;
        if (archive_read_data_block(ex->gz, &buf, &len, &off) < ARCHIVE_WARN) len = 0;
        return mb_err_set(err, MB_EINVAL,
                          "the archive is not gzip-compressed (it looks like %s); upload a .tar.gz",
                          sniff(buf, len));
    }
    ex->tar = archive_read_new();
    archive_read_support_format_tar(ex->tar);
    if (archive_read_open(ex->tar, ex, NULL, gz_read, NULL) != ARCHIVE_OK) return input_error(ex, err);
    return 0;
}

/* ---------------------------------------------------------------- records */

static void rec_add(extractor *ex, int kind, struct archive_entry *e, const char *path)
{
    rec_head h;
    memset(&h, 0, sizeof h);
    h.kind = (uint32_t)kind;
    h.len = strlen(path);
    if (e) {
        h.mode = (uint32_t)(archive_entry_perm(e) & 07777);
        h.mtime_sec = archive_entry_mtime(e);
        h.mtime_nsec = archive_entry_mtime_nsec(e);
        h.atime_sec = archive_entry_atime_is_set(e) ? archive_entry_atime(e) : h.mtime_sec;
        h.atime_nsec = archive_entry_atime_is_set(e) ? archive_entry_atime_nsec(e) : h.mtime_nsec;
    }
    mb_buf_append(&ex->recs, &h, sizeof h);
    mb_buf_append(&ex->recs, path, h.len + 1);
}

/* Walks the records: *off is the cursor; fills *h and returns the path. */
static const char *rec_next(extractor *ex, size_t *off, rec_head *h)
{
    if (*off >= ex->recs.len) return NULL;
    memcpy(h, ex->recs.data + *off, sizeof *h);
    const char *path = ex->recs.data + *off + sizeof *h;
    *off += sizeof *h + h->len + 1;
    return path;
}

/* ------------------------------------------------------------ staging area */

static void entry_times(struct archive_entry *e, struct timespec ts[2])
{
    ts[1].tv_sec = archive_entry_mtime(e);
    ts[1].tv_nsec = archive_entry_mtime_nsec(e);
    if (archive_entry_atime_is_set(e)) {
        ts[0].tv_sec = archive_entry_atime(e);
        ts[0].tv_nsec = archive_entry_atime_nsec(e);
    } else {
        ts[0] = ts[1];
    }
}

static int owned(const extractor *ex)
{
    return ex->uid != (uid_t)-1 || ex->gid != (gid_t)-1;
}

/* Opens (making missing ones, mode 0755) the directories of `dir` under the
 * staging root one by one, so that a symlink or file on the way is named.
 * Returns the fd of the last one, or a negative mb_code. */
static int make_parents(extractor *ex, const char *dir, mb_err *err)
{
    char *path = mb_strdup(dir);
    int cur = ex->st_fd, rc = 0;
    char *p = path;
    for (;;) {
        char *slash = strchr(p, '/');
        if (slash) *slash = '\0';
        int fd = mb_archive__open_beneath(cur, p, O_RDONLY | O_DIRECTORY, 0);
        if (fd == -ENOENT) {
            if (mkdirat(cur, p, IMPLICIT_DIR_MODE) != 0 && errno != EEXIST) {
                rc = member_sys(ex, err, errno, "cannot create a parent directory");
                break;
            }
            fd = mb_archive__open_beneath(cur, p, O_RDONLY | O_DIRECTORY, 0);
            if (fd >= 0 && (fchmod(fd, IMPLICIT_DIR_MODE) != 0 ||
                            (owned(ex) && fchown(fd, ex->uid, ex->gid) != 0))) {
                rc = member_sys(ex, err, errno, "cannot set up a parent directory");
                close(fd);
                break;
            }
        }
        if (fd < 0) {
            char q[300];
            mb_archive__quote(path, q, sizeof q);
            struct stat st;
            /* O_DIRECTORY on a symlink gives ENOTDIR: say which it is. */
            if (fd == -ENOTDIR && fstatat(cur, p, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISLNK(st.st_mode))
                fd = -ELOOP;
            if (fd == -ELOOP)
                rc = member_err(ex, err, MB_EINVAL,
                                "%s is a symlink, and nothing is written through a symlink", q);
            else if (fd == -ENOTDIR)
                rc = member_err(ex, err, MB_EINVAL, "%s, on its path, is not a directory", q);
            else
                rc = member_sys(ex, err, -fd, "cannot open a parent directory");
            break;
        }
        if (cur != ex->st_fd) close(cur);
        cur = fd;
        if (!slash) break;
        *slash = '/';
        p = slash + 1;
    }
    free(path);
    if (rc) {
        if (cur != ex->st_fd) close(cur);
        return rc;
    }
    return cur;
}

/* Finds the staging directory that will hold ex->name, making it if
 * needed. *pfd is borrowed (the cache owns it); *base is the last
 * component of ex->name. */
static int stage_parent(extractor *ex, int *pfd, const char **base, mb_err *err)
{
    char *slash = strrchr(ex->name, '/');
    if (!slash) {
        *pfd = ex->st_fd;
        *base = ex->name;
        return 0;
    }
    size_t dlen = (size_t)(slash - ex->name);
    *base = slash + 1;
    if (ex->cache_path && strlen(ex->cache_path) == dlen &&
        !memcmp(ex->cache_path, ex->name, dlen)) {
        *pfd = ex->cache_fd;
        return 0;
    }
    char *dir = mb_strndup(ex->name, dlen);
    int fd = mb_archive__open_beneath(ex->st_fd, dir, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) fd = make_parents(ex, dir, err);
    if (fd < 0) {
        free(dir);
        return fd;
    }
    /* Directories are never removed or replaced in the staging area (a
     * type change is refused), so a cached fd stays the right one. */
    if (ex->cache_path) close(ex->cache_fd);
    free(ex->cache_path);
    ex->cache_path = dir;
    ex->cache_fd = fd;
    *pfd = fd;
    return 0;
}

/* Makes room for the member at (pfd, base). Returns 1 if a directory is
 * already there and the member is one too, 0 if the name is free (an
 * earlier file or symlink of the same name is removed: the later member
 * wins, as with tar), or a negative mb_code for a type change. */
static int clear_slot(extractor *ex, int pfd, const char *base, int want_dir, mb_err *err)
{
    struct stat st;
    if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return 0;
        return member_sys(ex, err, errno, "cannot inspect its path");
    }
    if (S_ISDIR(st.st_mode)) {
        if (want_dir) return 1;
        return member_err(ex, err, MB_EINVAL,
                          "an earlier member made it a directory, which a file cannot replace");
    }
    if (want_dir)
        return member_err(ex, err, MB_EINVAL, "an earlier member made it a %s, which a directory "
                          "cannot replace", S_ISLNK(st.st_mode) ? "symlink" : "file");
    if (unlinkat(pfd, base, 0) != 0) return member_sys(ex, err, errno, "cannot replace it");
    return 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
    const char *p = buf;
    while (len) {
        ssize_t n = pwrite(fd, p, len, off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

static int put_file(extractor *ex, struct archive_entry *e, mb_err *err)
{
    int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
    if (size < 0) size = 0;
    if ((uint64_t)size > ex->max_bytes - ex->st.bytes)
        return member_err(ex, err, MB_ETOOBIG,
                          "its %lld bytes take the archive over the expanded-size limit of %llu "
                          "bytes", (long long)size, (unsigned long long)ex->max_bytes);
    int pfd, rc;
    const char *base;
    if ((rc = stage_parent(ex, &pfd, &base, err)) < 0) return rc;
    if ((rc = clear_slot(ex, pfd, base, 0, err)) < 0) return rc;
    int fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return member_sys(ex, err, errno, "cannot create the file");
    int64_t end = 0;
    for (;;) {
        const void *buf;
        size_t len;
        la_int64_t off;
        int r = archive_read_data_block(ex->tar, &buf, &len, &off);
        if (r == ARCHIVE_EOF) break;
        if (r < ARCHIVE_WARN) {
            rc = input_error(ex, err);
            goto out;
        }
        if (off < 0 || off > size || (int64_t)len > size - off) {
            rc = member_err(ex, err, MB_EINVAL, "its data runs past its declared size");
            goto out;
        }
        if (len && (rc = pwrite_all(fd, buf, len, off)) < 0) {
            rc = member_sys(ex, err, -rc, "cannot write the file");
            goto out;
        }
        if (off + (int64_t)len > end) end = off + (int64_t)len;
    }
    struct timespec ts[2];
    entry_times(e, ts);
    if ((end < size && ftruncate(fd, size) != 0) ||
        (owned(ex) && fchown(fd, ex->uid, ex->gid) != 0) ||
        fchmod(fd, archive_entry_perm(e) & 07777) != 0 || futimens(fd, ts) != 0) {
        rc = member_sys(ex, err, errno, "cannot finish the file");
        goto out;
    }
    ex->st.bytes += (uint64_t)size;
    rc = 0;
out:
    if (close(fd) != 0 && rc == 0) rc = member_sys(ex, err, errno, "cannot write the file");
    return rc;
}

static int put_dir(extractor *ex, struct archive_entry *e, mb_err *err)
{
    if (!ex->name[0]) { /* "." : the workspace root, metadata only */
        rec_add(ex, REC_DIR, e, "");
        return 0;
    }
    int pfd, rc;
    const char *base;
    if ((rc = stage_parent(ex, &pfd, &base, err)) < 0) return rc;
    if ((rc = clear_slot(ex, pfd, base, 1, err)) < 0) return rc;
    if (rc == 0) {
        /* 0700 until the end: the final mode may forbid adding children. */
        if (mkdirat(pfd, base, 0700) != 0) return member_sys(ex, err, errno, "cannot create it");
        if (owned(ex) && fchownat(pfd, base, ex->uid, ex->gid, AT_SYMLINK_NOFOLLOW) != 0)
            return member_sys(ex, err, errno, "cannot set its owner");
    }
    rec_add(ex, REC_DIR, e, ex->name);
    return 0;
}

static int put_symlink(extractor *ex, struct archive_entry *e, mb_err *err)
{
    const char *target = archive_entry_symlink(e);
    const char *why = mb_archive__link_target_check(ex->name, target);
    if (why) {
        char q[300];
        mb_archive__quote(target, q, sizeof q);
        return member_err(ex, err, MB_EINVAL, "%s (symlink to %s)", why, q);
    }
    int pfd, rc;
    const char *base;
    if ((rc = stage_parent(ex, &pfd, &base, err)) < 0) return rc;
    if ((rc = clear_slot(ex, pfd, base, 0, err)) < 0) return rc;
    struct timespec ts[2];
    entry_times(e, ts);
    if (symlinkat(target, pfd, base) != 0) return member_sys(ex, err, errno, "cannot create it");
    if ((owned(ex) && fchownat(pfd, base, ex->uid, ex->gid, AT_SYMLINK_NOFOLLOW) != 0) ||
        utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW) != 0)
        return member_sys(ex, err, errno, "cannot set its owner or times");
    rec_add(ex, REC_LINK, NULL, ex->name);
    return 0;
}

static int put_hardlink(extractor *ex, struct archive_entry *e, mb_err *err)
{
    const char *raw = archive_entry_hardlink(e);
    char q[300];
    mb_archive__quote(raw, q, sizeof q);
    const char *why = mb_archive__norm_name(raw, ex->target);
    if (why) return member_err(ex, err, MB_EINVAL, "hard link target %s: %s", q, why);
    if (!ex->target[0] || !strcmp(ex->target, ex->name))
        return member_err(ex, err, MB_EINVAL, "a hard link to %s makes no sense", q);

    /* The target must be something this archive already created. */
    const char *tslash = strrchr(ex->target, '/');
    const char *tbase = tslash ? tslash + 1 : ex->target;
    int tfd = ex->st_fd;
    if (tslash) {
        char *tdir = mb_strndup(ex->target, (size_t)(tslash - ex->target));
        tfd = mb_archive__open_beneath(ex->st_fd, tdir, O_RDONLY | O_DIRECTORY, 0);
        free(tdir);
    }
    struct stat st;
    if (tfd < 0 || fstatat(tfd, tbase, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
        if (tfd >= 0 && tfd != ex->st_fd) close(tfd);
        return member_err(ex, err, MB_EINVAL, "its hard link target %s is not a file or symlink "
                          "that an earlier member of the archive created", q);
    }
    int pfd, rc;
    const char *base;
    if ((rc = stage_parent(ex, &pfd, &base, err)) >= 0 &&
        (rc = clear_slot(ex, pfd, base, 0, err)) >= 0) {
        rc = 0;
        if (linkat(tfd, tbase, pfd, base, 0) != 0)
            rc = member_sys(ex, err, errno, "cannot create the hard link");
    }
    if (tfd != ex->st_fd) close(tfd);
    return rc;
}

static int put_member(extractor *ex, struct archive_entry *e, mb_err *err)
{
    const char *why = mb_archive__norm_name(ex->member, ex->name);
    if (why) return member_err(ex, err, MB_EINVAL, "%s", why);
    mode_t perm = archive_entry_perm(e) & 07777;
    if (perm & (S_ISUID | S_ISGID))
        return member_err(ex, err, MB_EINVAL, "it has the %s bit set (mode %04o)",
                          (perm & S_ISUID) ? "setuid" : "setgid", (unsigned)perm);
    if (archive_entry_hardlink(e)) {
        if (!ex->name[0]) return member_err(ex, err, MB_EINVAL, "'.' must be a directory");
        return put_hardlink(ex, e, err);
    }
    mode_t type = archive_entry_filetype(e);
    if (!ex->name[0] && type != AE_IFDIR)
        return member_err(ex, err, MB_EINVAL, "'.' must be a directory");
    switch (type) {
    case AE_IFREG: return put_file(ex, e, err);
    case AE_IFDIR: return put_dir(ex, e, err);
    case AE_IFLNK: return put_symlink(ex, e, err);
    case AE_IFCHR: return member_err(ex, err, MB_EINVAL, "it is a character device");
    case AE_IFBLK: return member_err(ex, err, MB_EINVAL, "it is a block device");
    case AE_IFIFO: return member_err(ex, err, MB_EINVAL, "it is a fifo");
    case AE_IFSOCK: return member_err(ex, err, MB_EINVAL, "it is a socket");
    default:
        return member_err(ex, err, MB_EINVAL, "it has an unsupported file type (%06o)",
                          (unsigned)type);
    }
}

/* ------------------------------------------------------------------ finish */

/* Every symlink as the kernel resolves it with the whole tree in place:
 * catches chains such as "a -> ." then "b -> a/.." that text cannot. */
static int check_links(extractor *ex, mb_err *err)
{
    size_t off = 0;
    rec_head h;
    const char *path;
    while ((path = rec_next(ex, &off, &h))) {
        if (h.kind != REC_LINK) continue;
        int r = mb_archive__resolves_beneath(ex->st_fd, path);
        if (r == 0 || r == -ELOOP) continue; /* inside, dangling, or a harmless loop */
        free(ex->member);
        ex->member = mb_strdup(path);
        if (r == -EXDEV)
            return member_err(ex, err, MB_EINVAL,
                              "the symlink leads outside the workspace through other links");
        return member_sys(ex, err, -r, "cannot check the symlink");
    }
    return 0;
}

/* Directory owner, mode and times, applied in the workspace after the
 * merge. An entry gone or replaced by the sandbox meanwhile is skipped. */
static int apply_dirs(extractor *ex, mb_err *err)
{
    size_t off = 0;
    rec_head h;
    const char *path;
    while ((path = rec_next(ex, &off, &h))) {
        if (h.kind != REC_DIR) continue;
        int fd = mb_archive__open_beneath(ex->ws_fd, path, O_RDONLY | O_DIRECTORY, 0);
        if (fd == -ENOENT || fd == -ELOOP || fd == -ENOTDIR) continue;
        free(ex->member);
        ex->member = mb_strdup(*path ? path : ".");
        if (fd < 0) return member_sys(ex, err, -fd, "cannot open the directory");
        mode_t mode = h.mode & 01777;
        if (!*path) mode |= 0700; /* the owner keeps the workspace */
        struct timespec ts[2] = {{h.atime_sec, h.atime_nsec}, {h.mtime_sec, h.mtime_nsec}};
        int rc = 0;
        if ((owned(ex) && fchown(fd, ex->uid, ex->gid) != 0) || fchmod(fd, mode) != 0 ||
            futimens(fd, ts) != 0)
            rc = member_sys(ex, err, errno, "cannot set the directory's owner, mode or times");
        close(fd);
        if (rc) return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ driver */

static int open_dirs(extractor *ex, const char *workspace, const char *staging_dir, mb_err *err)
{
    ex->ws_fd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (ex->ws_fd < 0)
        return errno == ENOENT || errno == ENOTDIR
                   ? mb_err_set(err, MB_ENOTFOUND, "workspace %s is not a directory", workspace)
                   : mb_err_sys(err, errno, "cannot open workspace %s", workspace);
    char *parent = mb_strdup(staging_dir ? staging_dir : workspace);
    if (!staging_dir) { /* dirname(workspace) */
        size_t n = strlen(parent);
        while (n > 1 && parent[n - 1] == '/') parent[--n] = '\0';
        char *slash = strrchr(parent, '/');
        if (!slash) {
            free(parent);
            parent = mb_strdup(".");
        } else {
            slash[slash == parent ? 1 : 0] = '\0';
        }
    }
    ex->stage_parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (ex->stage_parent_fd < 0) {
        int rc = mb_err_sys(err, errno, "cannot open staging directory %s", parent);
        free(parent);
        return rc;
    }
    struct stat a, b;
    if (fstat(ex->ws_fd, &a) != 0 || fstat(ex->stage_parent_fd, &b) != 0) {
        free(parent);
        return mb_err_sys(err, errno, "cannot inspect the workspace");
    }
    if (a.st_dev != b.st_dev) {
        int rc = mb_err_set(err, MB_EIO, "staging directory %s is not on the workspace's file "
                            "system, so entries cannot be moved into place", parent);
        free(parent);
        return rc;
    }
    free(parent);

    ex->st_fd = mb_archive__stage_make(ex->stage_parent_fd, ex->stage_name, err);
    if (ex->st_fd < 0) {
        int rc = ex->st_fd;
        ex->st_fd = -1;
        return rc;
    }
    return 0;
}

static int read_members(extractor *ex, mb_err *err)
{
    for (;;) {
        struct archive_entry *e;
        int r = archive_read_next_header(ex->tar, &e);
        if (r == ARCHIVE_EOF) return 0;
        if (r < ARCHIVE_WARN) return input_error(ex, err);
        free(ex->member);
        ex->member = mb_strdup(archive_entry_pathname(e) ? archive_entry_pathname(e) : "");
        if (++ex->st.entries > ex->max_entries)
            return mb_err_set(err, MB_ETOOBIG, "the archive has more than %llu entries, the limit",
                              (unsigned long long)ex->max_entries);
        int rc = put_member(ex, e, err);
        if (rc < 0) return rc;
    }
}

int mb_archive_extract(int in_fd, const char *workspace, const mb_archive_extract_opts *opts,
                       mb_archive_stats *stats, mb_err *err)
{
    static const mb_archive_extract_opts defaults = MB_ARCHIVE_EXTRACT_OPTS_INIT;
    if (!opts) opts = &defaults;
    extractor *ex = mb_calloc(1, sizeof *ex);
    ex->max_bytes = opts->max_bytes ? opts->max_bytes : MB_ARCHIVE_DEFAULT_MAX_BYTES;
    ex->max_entries = opts->max_entries ? opts->max_entries : MB_ARCHIVE_DEFAULT_MAX_ENTRIES;
    ex->uid = opts->uid;
    ex->gid = opts->gid;
    ex->ws_fd = ex->stage_parent_fd = ex->st_fd = -1;
    mb_archive__locale l;
    mb_archive__locale_enter(&l);

    int rc = open_dirs(ex, workspace, opts->staging_dir, err);
    if (!rc) rc = open_input(ex, in_fd, err);
    if (!rc) rc = read_members(ex, err);
    if (!rc) rc = check_links(ex, err);
    if (!rc) rc = mb_archive__merge(ex->st_fd, ex->ws_fd, 1, err);
    if (!rc) rc = mb_archive__merge(ex->st_fd, ex->ws_fd, 0, err);
    if (!rc) rc = apply_dirs(ex, err);

    if (ex->gz) ex->st.compressed = (uint64_t)archive_filter_bytes(ex->gz, -1);
    ex->st.expanded = ex->expanded;
    if (stats) *stats = ex->st;
    if (ex->tar) archive_read_free(ex->tar);
    if (ex->gz) archive_read_free(ex->gz);
    if (ex->cache_path) close(ex->cache_fd);
    free(ex->cache_path);
    if (ex->st_fd >= 0) {
        /* Empty after a successful merge but for merged directories; a
         * refused archive's partial tree goes with it. Failing to clean up
         * loses nothing but space, and must not turn success into failure;
         * a stale .mcpbox-extract-* can be removed by whoever owns the
         * staging directory. */
        mb_archive__stage_remove(ex->stage_parent_fd, ex->stage_name, ex->st_fd);
        close(ex->st_fd);
    }
    if (ex->stage_parent_fd >= 0) close(ex->stage_parent_fd);
    if (ex->ws_fd >= 0) close(ex->ws_fd);
    mb_archive__locale_leave(&l);
    free(ex->member);
    mb_buf_free(&ex->recs);
    free(ex);
    return rc;
}
