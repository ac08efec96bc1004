/*
 * execbin.c - the exec-only copies of the executables that sandboxes run
 * their native servers from: the mcpbox binary (bound at
 * MB_SANDBOX_MCPBOX_PATH) and the server executables mcpbox-GROUP (in the
 * directory bound at MB_SANDBOX_SERVER_BIN_DIR; src/servers/servers.c).
 *
 * Why: everything in a sandbox runs as its root, so any process there passes
 * the same-uid half of the kernel's ptrace access check for another; what
 * keeps agent code out of a server's /proc/PID/mem (and fd/, environ, maps)
 * is that the server is not dumpable and nothing there has CAP_SYS_PTRACE.
 * execve(2) makes a process dumpable again, and a server that calls
 * prctl(PR_SET_DUMPABLE, 0) itself leaves a window between exec and that
 * call in which a process spinning on /proc can open its memory for good.
 * The kernel closes the window on its own for a binary the exec'ing process
 * may not read: it marks such an exec non-dumpable (fs.suid_dumpable, 0 or
 * 2) and moves the memory's owning user namespace up to one that is
 * privileged over the file. This copy is owned by the daemon's user (host
 * root, which no sandbox maps) with mode 0111: sandbox root may execute it,
 * not read it, so every server is non-dumpable from its first instruction,
 * and its memory is owned by the host's namespace, where no sandbox has
 * CAP_SYS_PTRACE. Processes the servers start (python, git, shell
 * commands) exec readable binaries and are dumpable, as agent code is.
 *
 * A copy lives in a directory of the caller's (the data dir; when that is
 * mounted noexec, the binary itself is used, with a warning, or the caller
 * falls back on the mcpbox copy), is written beside and renamed over, and is
 * kept while it matches the source (same size and modification time), so a
 * daemon start copies only after an upgrade; a running server keeps the
 * inode it was started from (and a sandbox its bound mcpbox copy), while
 * servers started after an upgrade in the directory of server executables
 * run the new ones.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define EXEC_COPY_MODE 0111

static int same_copy(const struct stat *src, const struct stat *dst)
{
    return S_ISREG(dst->st_mode) && (dst->st_mode & 07777) == EXEC_COPY_MODE &&
           dst->st_uid == geteuid() && dst->st_size == src->st_size &&
           dst->st_mtim.tv_sec == src->st_mtim.tv_sec &&
           dst->st_mtim.tv_nsec == src->st_mtim.tv_nsec;
}

static int copy_bytes(int in, int out, off_t size)
{
    off_t done = 0;
    while (done < size) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(size - done), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP ||
                      errno == EINVAL)) {
            /* another file system or an old kernel: plain reads and writes */
            char buf[65536];
            ssize_t r;
            while ((r = pread(in, buf, sizeof buf, done)) != 0) {
                if (r < 0) {
                    if (errno == EINTR) continue;
                    return -1;
                }
                for (ssize_t w = 0; w < r;) {
                    ssize_t k = write(out, buf + w, (size_t)(r - w));
                    if (k < 0) {
                        if (errno == EINTR) continue;
                        return -1;
                    }
                    w += k;
                }
                done += r;
            }
            break;
        }
        if (n < 0) return -1;
        if (n == 0) break;
        done += n;
    }
    if (done != size) {
        errno = EIO; /* the source changed under us */
        return -1;
    }
    return 0;
}

int mb_sandbox_exec_copy(const char *bin, const char *dir, const char *name, int noexec_fails,
                         char **out, mb_err *err)
{
    *out = NULL;
    int in = open(bin, O_RDONLY | O_CLOEXEC);
    if (in < 0) return mb_err_sys(err, errno, "cannot read the mcpbox binary %s", bin);
    struct stat st, cur;
    if (fstat(in, &st) != 0) {
        int e = errno;
        close(in);
        return mb_err_sys(err, e, "cannot stat the mcpbox binary %s", bin);
    }
    if (!S_ISREG(st.st_mode)) {
        close(in);
        return mb_err_set(err, MB_EINVAL, "the mcpbox binary %s is not a regular file", bin);
    }
    struct statvfs vfs;
    if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
        /* nothing could run from there: the binary itself, dumpable until
         * the servers' own prctl */
        close(in);
        if (noexec_fails)
            return mb_err_set(err, MB_ECONFLICT, "%s is on a noexec file system", dir);
        mb_warn("%s is on a noexec file system: sandboxes run %s itself, and its "
                "servers are dumpable for a moment after each start", dir, bin);
        *out = mb_strdup(bin);
        return MB_OK;
    }
    char *dst = mb_asprintf("%s/%s", dir, name);
    if (lstat(dst, &cur) == 0 && same_copy(&st, &cur)) {
        close(in);
        *out = dst;
        return MB_OK;
    }
    char *tmp = mb_asprintf("%s/.%s.%d", dir, name, (int)getpid());
    (void)unlink(tmp);
    int rc = MB_OK;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = mb_err_sys(err, errno, "cannot create %s", tmp);
        goto out;
    }
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    if (copy_bytes(in, fd, st.st_size) != 0 || fchmod(fd, EXEC_COPY_MODE) != 0 ||
        futimens(fd, times) != 0) {
        rc = mb_err_sys(err, errno, "cannot copy %s to %s", bin, tmp);
    }
    if (close(fd) != 0 && !rc) rc = mb_err_sys(err, errno, "cannot write %s", tmp);
    if (!rc && rename(tmp, dst) != 0)
        rc = mb_err_sys(err, errno, "cannot rename %s to %s", tmp, dst);
    if (rc) (void)unlink(tmp);
out:
    close(in);
    free(tmp);
    if (rc) {
        free(dst);
        return rc;
    }
    *out = dst;
    return MB_OK;
}
