/*
 * staging.c - the private directory an archive is extracted into before it
 * is moved into the workspace: making it, and removing whatever is left
 * (also what a killed daemon left: mb_archive_stage_sweep).
 *
 * Removal must work for any tree an accepted-so-far archive can build,
 * including 2,000 levels deep, with a constant number of open fds (a
 * recursive rm holding one fd per level would hit RLIMIT_NOFILE and leave
 * the tree behind). So it keeps a stack of relative paths instead of fds:
 * each directory is scanned, its files and empty subdirectories removed
 * and its other subdirectories pushed; once those are done it is scanned
 * again, finds only empty directories, and is popped. Every directory is
 * thus scanned about twice, and nothing is ever followed (symlinks are
 * unlinked like files, directories opened with mb_archive__open_beneath).
 */
#define _GNU_SOURCE
#include "archive/archive_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mb_archive__stage_make(int parent_fd, char name[64], mb_err *err)
{
    unsigned char rnd[8];
    char hex[17];
    if (mb_random_bytes(rnd, sizeof rnd, err) != 0) return MB_EIO;
    mb_hex(rnd, sizeof rnd, hex);
    snprintf(name, 64, ".mcpbox-extract-%s", hex);
    if (mkdirat(parent_fd, name, 0700) != 0)
        return mb_err_sys(err, errno, "cannot create a staging directory");
    int fd = mb_archive__open_beneath(parent_fd, name, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) {
        unlinkat(parent_fd, name, AT_REMOVEDIR);
        return mb_err_sys(err, -fd, "cannot open the staging directory");
    }
    return fd;
}

/* Scans directory `path` under root_fd: removes files, symlinks and empty
 * directories, pushes the paths of non-empty subdirectories onto `stack`
 * (NUL-terminated strings). Returns how many were pushed, or -errno. */
static int sweep(int root_fd, const char *path, mb_buf *stack)
{
    int fd = mb_archive__open_beneath(root_fd, path, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) return fd;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return -e;
    }
    int pushed = 0, rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..")) continue;
        if (unlinkat(fd, n, 0) == 0 || errno == ENOENT) continue;
        if (errno != EISDIR && errno != EPERM) {
            rc = -errno;
            break;
        }
        if (unlinkat(fd, n, AT_REMOVEDIR) == 0 || errno == ENOENT) continue;
        if (errno != ENOTEMPTY && errno != EEXIST) {
            rc = -errno;
            break;
        }
        if (*path) {
            mb_buf_puts(stack, path);
            mb_buf_putc(stack, '/');
        }
        mb_buf_append(stack, n, strlen(n) + 1);
        pushed++;
    }
    closedir(d);
    return rc ? rc : pushed;
}

int mb_archive__stage_remove(int parent_fd, const char *name, int stage_fd)
{
    /* Each stack entry is a path followed by its NUL; `tops` holds offsets. */
    mb_buf stack = {0}, tops = {0};
    size_t zero = 0;
    int rc = 0;
    mb_buf_append(&stack, "", 1);
    mb_buf_append(&tops, &zero, sizeof zero);
    while (tops.len) {
        size_t at;
        memcpy(&at, tops.data + tops.len - sizeof at, sizeof at);
        char *path = mb_strdup(stack.data + at);
        size_t before = stack.len;
        int n = sweep(stage_fd, path, &stack);
        free(path);
        if (n < 0) {
            rc = n;
            break;
        }
        if (n == 0) { /* empty now: pop; its parent will rmdir it */
            stack.len = at;
            stack.data[at] = '\0';
            tops.len -= sizeof at;
            continue;
        }
        for (size_t off = before; off < stack.len; off += strlen(stack.data + off) + 1)
            mb_buf_append(&tops, &off, sizeof off);
    }
    mb_buf_free(&stack);
    mb_buf_free(&tops);
    if (!rc && unlinkat(parent_fd, name, AT_REMOVEDIR) != 0) rc = -errno;
    return rc;
}

int mb_archive_stage_sweep(const char *staging_dir, unsigned *removed, mb_err *err)
{
    if (removed) *removed = 0;
    int dfd = open(staging_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOENT) return 0;
        return mb_err_sys(err, errno, "cannot open %s", staging_dir);
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        return mb_err_sys(err, e, "cannot read %s", staging_dir);
    }
    /* Names first: removing while readdir walks the same directory may skip. */
    mb_buf names = {0};
    static const char prefix[] = ".mcpbox-extract-";
    struct dirent *de;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, prefix, sizeof prefix - 1))
            mb_buf_append(&names, de->d_name, strlen(de->d_name) + 1);
    int rc = 0;
    for (size_t off = 0; off < names.len; off += strlen(names.data + off) + 1) {
        const char *n = names.data + off;
        int sfd = mb_archive__open_beneath(dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
        int r = sfd;
        if (sfd >= 0) {
            r = mb_archive__stage_remove(dfd, n, sfd);
            close(sfd);
        } else if (sfd == -ENOTDIR || sfd == -ELOOP) { /* not ours to have made: a stray name */
            r = unlinkat(dfd, n, 0) == 0 ? 0 : -errno;
        }
        if (r == -ENOENT) continue;
        if (r < 0) {
            rc = mb_err_sys(err, -r, "cannot remove the leftover staging directory %s/%s",
                            staging_dir, n);
            break;
        }
        if (removed) (*removed)++;
    }
    mb_buf_free(&names);
    closedir(d);
    return rc;
}
