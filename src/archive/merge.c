/*
 * merge.c - moves a fully extracted staging tree into the workspace
 * (overlay), the last step of mb_archive_extract.
 *
 * The two trees are walked together, breadth first, one directory pair at a
 * time (so the number of open fds stays constant however deep the tree):
 *   - a name the workspace lacks is moved over whole, by one renameat();
 *   - a directory meeting a directory is descended into;
 *   - a file or symlink meeting a file or symlink replaces it (renameat()
 *     replaces the name, never what a symlink points to);
 *   - anything else is a conflict: a directory over a file, a file over a
 *     directory, or a directory where the workspace has a symlink (which
 *     would mean writing through that symlink).
 * The caller runs the walk twice, first with dry_run to find conflicts
 * while nothing has moved yet, then for real. Every directory of the
 * workspace is opened with mb_archive__open_beneath (no symlinks followed).
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

/* Relative paths still to visit, NUL-separated, consumed from `head`. */
typedef struct queue {
    mb_buf buf;
    size_t head;
} queue;

static void queue_push(queue *q, const char *dir, const char *name)
{
    if (*dir) {
        mb_buf_puts(&q->buf, dir);
        mb_buf_putc(&q->buf, '/');
    }
    mb_buf_append(&q->buf, name, strlen(name) + 1);
}

static int conflict(mb_err *err, const char *dir, const char *name, const char *why)
{
    char *path = *dir ? mb_asprintf("%s/%s", dir, name) : mb_strdup(name);
    char q[320];
    mb_archive__quote(path, q, sizeof q);
    free(path);
    return mb_err_set(err, MB_ECONFLICT, "archive member %s conflicts with the workspace: %s", q,
                      why);
}

static int sys_fail(mb_err *err, int e, const char *what, const char *dir, const char *name)
{
    char *path = *dir ? mb_asprintf("%s/%s", dir, name) : mb_strdup(name);
    char q[320];
    mb_archive__quote(path, q, sizeof q);
    free(path);
    return mb_err_sys(err, e, "cannot %s %s in the workspace", what, q);
}

/* Lists the names in directory `fd` (not consumed) into `names`, NUL-separated. */
static int list_names(int fd, mb_buf *names, size_t *count)
{
    int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dup_fd < 0) return -errno;
    DIR *d = fdopendir(dup_fd);
    if (!d) {
        int e = errno;
        close(dup_fd);
        return -e;
    }
    struct dirent *de;
    *count = 0;
    errno = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        mb_buf_append(names, de->d_name, strlen(de->d_name) + 1);
        (*count)++;
    }
    int e = errno;
    closedir(d);
    return e ? -e : 0;
}

/* Handles one directory pair `rel` (staging fd `sfd`, workspace fd `wfd`). */
static int merge_dir(int sfd, int wfd, const char *rel, int dry_run, queue *q, mb_err *err)
{
    mb_buf names = {0};
    size_t count = 0;
    int rc = list_names(sfd, &names, &count);
    if (rc < 0) {
        rc = sys_fail(err, -rc, "read staged directory", "", *rel ? rel : ".");
        goto out;
    }
    const char *name = names.data;
    for (size_t i = 0; i < count; i++, name += strlen(name) + 1) {
        struct stat ss, ws;
        if (fstatat(sfd, name, &ss, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = sys_fail(err, errno, "inspect staged", rel, name);
            goto out;
        }
        int have = fstatat(wfd, name, &ws, AT_SYMLINK_NOFOLLOW) == 0;
        if (!have && errno != ENOENT) {
            rc = sys_fail(err, errno, "inspect", rel, name);
            goto out;
        }
        if (have && S_ISDIR(ss.st_mode) && S_ISDIR(ws.st_mode)) {
            queue_push(q, rel, name);
            continue;
        }
        if (have && S_ISDIR(ss.st_mode)) {
            rc = conflict(err, rel, name,
                          S_ISLNK(ws.st_mode)
                              ? "the workspace has a symlink there, and nothing is written "
                                "through a symlink"
                              : "the workspace has a file there, and the archive a directory");
            goto out;
        }
        if (have && S_ISDIR(ws.st_mode)) {
            rc = conflict(err, rel, name,
                          "the workspace has a directory there, and a file cannot replace it");
            goto out;
        }
        if (!dry_run && renameat(sfd, name, wfd, name) != 0) {
            rc = sys_fail(err, errno, "move", rel, name);
            goto out;
        }
    }
    rc = 0;
out:
    mb_buf_free(&names);
    return rc;
}

int mb_archive__merge(int stage_fd, int ws_fd, int dry_run, mb_err *err)
{
    queue q = {{0}, 0};
    mb_buf_append(&q.buf, "", 1); /* the roots */
    int rc = 0;
    while (q.head < q.buf.len) {
        /* Copy: pushing may move the buffer. */
        char *rel = mb_strdup(q.buf.data + q.head);
        q.head += strlen(rel) + 1;
        int sfd = mb_archive__open_beneath(stage_fd, rel, O_RDONLY | O_DIRECTORY, 0);
        if (sfd < 0) {
            rc = sys_fail(err, -sfd, "open staged directory", "", *rel ? rel : ".");
            free(rel);
            break;
        }
        int wfd = mb_archive__open_beneath(ws_fd, rel, O_RDONLY | O_DIRECTORY, 0);
        if (wfd < 0) {
            /* It was a directory moments ago: something inside the sandbox
             * is changing the workspace under us. */
            if (wfd == -ELOOP || wfd == -ENOTDIR)
                rc = conflict(err, "", rel, "it stopped being a directory during extraction");
            else
                rc = sys_fail(err, -wfd, "open directory", "", rel);
            close(sfd);
            free(rel);
            break;
        }
        rc = merge_dir(sfd, wfd, rel, dry_run, &q, err);
        close(sfd);
        close(wfd);
        free(rel);
        if (rc) break;
    }
    mb_buf_free(&q.buf);
    return rc;
}
