/*
 * fs.c - filesystem helpers: mkdir -p, rm -rf that never follows links,
 * whole-file reads, atomic writes and tree copies.
 */
#define _GNU_SOURCE
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

int mb_mkdir_p(const char *path, mode_t mode, mb_err *err)
{
    char *p = mb_strdup(path);
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/') p[--len] = '\0';
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, mode) != 0 && errno != EEXIST) {
            int e = errno;
            mb_err_sys(err, e, "cannot create directory %s", p);
            free(p);
            return MB_EIO;
        }
        *s = '/';
    }
    if (mkdir(p, mode) != 0 && errno != EEXIST) {
        int e = errno;
        mb_err_sys(err, e, "cannot create directory %s", p);
        free(p);
        return MB_EIO;
    }
    free(p);
    return MB_OK;
}

/* Removes the entries of the directory open at `fd` (consumed). */
static int empty_dir_fd(int fd, mb_err *err)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return mb_err_sys(err, e, "cannot read directory");
    }
    int rc = MB_OK;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        if (unlinkat(dirfd(d), de->d_name, 0) == 0) continue;
        if (errno != EISDIR && errno != EPERM) {
            if (errno == ENOENT) continue;
            rc = mb_err_sys(err, errno, "cannot remove %s", de->d_name);
            break;
        }
        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
            rc = mb_err_sys(err, errno, "cannot open %s", de->d_name);
            break;
        }
        rc = empty_dir_fd(sub, err);
        if (rc) break;
        if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
            rc = mb_err_sys(err, errno, "cannot remove directory %s", de->d_name);
            break;
        }
    }
    closedir(d);
    return rc;
}

int mb_empty_dir_at(int dirfd, mb_err *err)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return mb_err_sys(err, errno, "cannot open directory");
    return empty_dir_fd(fd, err);
}

int mb_rm_rf(const char *path, mb_err *err)
{
    if (unlink(path) == 0 || errno == ENOENT) return MB_OK;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? MB_OK : mb_err_sys(err, errno, "cannot open %s", path);
    int rc = empty_dir_fd(fd, err);
    if (rc) return rc;
    if (rmdir(path) != 0 && errno != ENOENT) return mb_err_sys(err, errno, "cannot remove %s", path);
    return MB_OK;
}

int mb_open_file(const char *path, int flags, mode_t mode)
{
    int fd = open(path, flags | O_NONBLOCK, mode);
    if (fd < 0) return -1;
    struct stat st;
    int e = fstat(fd, &st) != 0 ? errno : (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) ? 0 : ENXIO;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    if (!(flags & O_NONBLOCK)) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    return fd;
}

int mb_read_fd(int fd, size_t max, char **out, size_t *len)
{
    mb_buf b = {0};
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || (n > 0 && b.len + (size_t)n > max)) {
            int e = n < 0 ? errno : EFBIG;
            mb_buf_free(&b);
            errno = e;
            return -1;
        }
        if (n == 0) break;
        mb_buf_append(&b, chunk, (size_t)n);
    }
    if (len) *len = b.len;
    *out = mb_buf_steal(&b);
    return 0;
}

int mb_read_file(const char *path, size_t max, char **out, size_t *len, mb_err *err)
{
    int fd = mb_open_file(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        if (errno == ENOENT) return mb_err_set(err, MB_ENOTFOUND, "%s does not exist", path);
        return mb_err_sys(err, errno, "cannot open %s", path);
    }
    int rc = mb_read_fd(fd, max, out, len), e = errno;
    close(fd);
    if (!rc) return MB_OK;
    if (e == EFBIG) return mb_err_set(err, MB_ETOOBIG, "%s is larger than %zu bytes", path, max);
    return mb_err_sys(err, e, "cannot read %s", path);
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int mb_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
                         mb_err *err)
{
    char *tmp = mb_asprintf("%s.tmp.%d", path, (int)getpid());
    /* The temp name is predictable: whatever already has it (a leftover, or
     * a FIFO or symlink someone planted) is removed, never opened. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return mb_err_sys(err, e, "cannot create %s", path);
    }
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return mb_err_sys(err, e, "cannot write %s", path);
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return mb_err_sys(err, e, "cannot rename into %s", path);
    }
    free(tmp);
    return MB_OK;
}

/* Who owns what a copy creates; (uid_t)-1 keeps the copier's. */
typedef struct copy_owner {
    uid_t uid;
    gid_t gid;
} copy_owner;

static int copy_file(int sfd, int dfd, const char *name, const struct stat *st,
                     const copy_owner *own, mb_err *err)
{
    int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0) return mb_err_sys(err, errno, "cannot open %s", name);
    int out = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                     st->st_mode & 07777);
    if (out < 0) {
        int e = errno;
        close(in);
        return mb_err_sys(err, e, "cannot create %s", name);
    }
    char buf[65536];
    int rc = MB_OK;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { rc = mb_err_sys(err, errno, "cannot read %s", name); break; }
        if (n == 0) break;
        if (write_all(out, buf, (size_t)n) != 0) { rc = mb_err_sys(err, errno, "cannot write %s", name); break; }
    }
    if (!rc && own->uid != (uid_t)-1 && fchown(out, own->uid, own->gid) != 0)
        rc = mb_err_sys(err, errno, "cannot chown %s", name);
    if (!rc) {
        fchmod(out, st->st_mode & 07777);
        struct timespec ts[2] = {st->st_atim, st->st_mtim};
        futimens(out, ts);
    }
    close(in);
    close(out);
    return rc;
}

static int copy_dir_fd(int sfd, int dfd, const copy_owner *own, mb_err *err)
{
    int iter = dup(sfd);
    DIR *d = iter >= 0 ? fdopendir(iter) : NULL;
    if (!d) {
        if (iter >= 0) close(iter);
        return mb_err_sys(err, errno, "cannot read directory");
    }
    int rc = MB_OK;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        struct stat st;
        if (fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = mb_err_sys(err, errno, "cannot stat %s", de->d_name);
        } else if (S_ISDIR(st.st_mode)) {
            if (mkdirat(dfd, de->d_name, st.st_mode & 07777) != 0 && errno != EEXIST) {
                rc = mb_err_sys(err, errno, "cannot create %s", de->d_name);
                break;
            }
            int s2 = openat(sfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int d2 = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (s2 < 0 || d2 < 0) rc = mb_err_sys(err, errno, "cannot open %s", de->d_name);
            else rc = copy_dir_fd(s2, d2, own, err);
            if (!rc && own->uid != (uid_t)-1 && fchown(d2, own->uid, own->gid) != 0)
                rc = mb_err_sys(err, errno, "cannot chown %s", de->d_name);
            if (!rc) {
                fchmod(d2, st.st_mode & 07777);
                struct timespec ts[2] = {st.st_atim, st.st_mtim};
                futimens(d2, ts);
            }
            if (s2 >= 0) close(s2);
            if (d2 >= 0) close(d2);
        } else if (S_ISLNK(st.st_mode)) {
            char target[4096];
            ssize_t n = readlinkat(sfd, de->d_name, target, sizeof target - 1);
            if (n < 0) { rc = mb_err_sys(err, errno, "cannot read link %s", de->d_name); break; }
            target[n] = '\0';
            if (symlinkat(target, dfd, de->d_name) != 0 && errno != EEXIST)
                rc = mb_err_sys(err, errno, "cannot create link %s", de->d_name);
            else if (own->uid != (uid_t)-1 &&
                     fchownat(dfd, de->d_name, own->uid, own->gid, AT_SYMLINK_NOFOLLOW) != 0)
                rc = mb_err_sys(err, errno, "cannot chown link %s", de->d_name);
        } else if (S_ISREG(st.st_mode)) {
            rc = copy_file(sfd, dfd, de->d_name, &st, own, err);
        }
        /* devices, fifos and sockets are not copied */
    }
    closedir(d);
    return rc;
}

int mb_copy_tree(const char *src, const char *dst, uid_t uid, gid_t gid, mb_err *err)
{
    copy_owner own = {uid, gid};
    int rc = mb_mkdir_p(dst, 0755, err);
    if (rc) return rc;
    int sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0) return mb_err_sys(err, errno, "cannot open %s", src);
    int dfd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        int e = errno;
        close(sfd);
        return mb_err_sys(err, e, "cannot open %s", dst);
    }
    rc = copy_dir_fd(sfd, dfd, &own, err);
    close(sfd);
    close(dfd);
    return rc;
}
