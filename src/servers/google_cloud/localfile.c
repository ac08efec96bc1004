/*
 * localfile.c - the sandbox's own files a tool reads (storage_upload_file's
 * source, bigquery_load_csv_data's CSV): only regular files in the
 * workspace /data, symlinks resolved, and no larger than the tool's limit,
 * which is checked from the file's size before any of it is read. Upstream
 * reads any path its process can; here a link or a path out of /data (the
 * project database in /.mcpbox/state, /proc/self/environ) is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/google_cloud/gc_srv.h"

/* The workspace a local file must lie in, symlinks resolved: /data in a
 * sandbox, anything outside one (the server run by hand). */
#define GC_WORKSPACE "/data"

/* Opens the regular file `src` names, refusing one that resolves outside the
 * workspace or is larger than max, before a byte of it is read. The fd, or
 * -1 with the error text in *why. */
static int open_local(const char *src, long long max, const char *limit, char **why)
{
    struct stat st;
    int missing = stat(src, &st) != 0;
    if (missing || S_ISDIR(st.st_mode)) {
        *why = mb_py_os_error(missing ? errno : EISDIR, src);
        return -1;
    }
    char *real = realpath(src, NULL);
    if (!real) {
        *why = mb_py_os_error(errno, src);
        return -1;
    }
    char *root = realpath(GC_WORKSPACE, NULL);
    size_t rl = root ? strlen(root) : 0;
    if (root && strcmp(root, "/") &&
        (strncmp(real, root, rl) != 0 || (real[rl] != '/' && real[rl] != '\0'))) {
        *why = strcmp(real, src) ? mb_asprintf("'%s' resolves to '%s', outside the workspace %s",
                                               src, real, GC_WORKSPACE)
                                 : mb_asprintf("'%s' is outside the workspace %s", src,
                                               GC_WORKSPACE);
        free(root);
        free(real);
        return -1;
    }
    free(root);
    /* the resolved path, its last component not followed again: a link
     * swapped in since realpath fails instead of being read */
    int fd = mb_open_file(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
    int e = errno;
    free(real);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0) {
            e = S_ISDIR(st.st_mode) ? EISDIR : ENXIO;
            close(fd);
        }
        *why = mb_py_os_error(e, src);
        return -1;
    }
    if (st.st_size > max) {
        *why = mb_asprintf("'%s' is %lld bytes, larger than the %lld bytes %s", src,
                           (long long)st.st_size, max, limit);
        close(fd);
        return -1;
    }
    return fd;
}

int gc_read_local(const char *src, long long max, const char *limit, char **data, size_t *len,
                  char **why)
{
    *why = NULL;
    *data = NULL;
    *len = 0;
    int fd = open_local(src, max, limit, why);
    if (fd < 0) return -1;
    /* max again: the file may have grown since fstat */
    if (mb_read_fd(fd, (size_t)max, data, len)) {
        *why = errno == EFBIG ? mb_asprintf("'%s' grew past the %lld bytes %s", src, max, limit)
                              : mb_py_os_error(errno, src);
    }
    close(fd);
    return *why ? -1 : 0;
}
