/*
 * path.c - the rules for member names and link targets, and the confined
 * opens every file-system call of the archive layer goes through.
 *
 * Names are judged as text here (absolute, "..", length, UTF-8); what text
 * cannot judge -- a symlink on the way, a link whose target runs through
 * another link -- is left to the kernel: openat2() with RESOLVE_BENEATH
 * refuses to leave the directory it starts from, and RESOLVE_NO_SYMLINKS
 * refuses to follow any link at all.
 */
#define _GNU_SOURCE
#include "archive/archive_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------ member names */

const char *mb_archive__norm_name(const char *raw, char *out)
{
    if (!raw || !*raw) return "its name is empty";
    if (raw[0] == '/') return "its path is absolute";
    if (!mb_utf8_valid(raw, strlen(raw))) return "its name is not valid UTF-8";
    size_t len = 0;
    const char *p = raw;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') return "its path contains a '..' component";
        if (n > MB_ARCHIVE_NAME_MAX) return "a component of its path is longer than 255 bytes";
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            if (len + (len ? 1 : 0) + n > MB_ARCHIVE_PATH_MAX)
                return "its path is longer than 4095 bytes";
            if (len) out[len++] = '/';
            memcpy(out + len, p, n);
            len += n;
        }
        p += n;
        if (*p == '/') p++;
    }
    out[len] = '\0';
    return NULL;
}

const char *mb_archive__link_target_check(const char *name, const char *target)
{
    if (!target || !*target) return "its link target is empty";
    if (target[0] == '/') return "its link target is absolute";
    if (strlen(target) > MB_ARCHIVE_PATH_MAX) return "its link target is longer than 4095 bytes";
    if (!mb_utf8_valid(target, strlen(target))) return "its link target is not valid UTF-8";
    /* Depth of the directory holding the link: its number of components. */
    long depth = 0;
    for (const char *p = name; *p; p++)
        if (*p == '/') depth++;
    const char *p = target;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0) return "its link target leads outside the workspace";
        } else if (n > 0 && !(n == 1 && p[0] == '.')) {
            depth++;
        }
        p += n;
        if (*p == '/') p++;
    }
    return NULL;
}

void mb_archive__quote(const char *s, char *out, size_t n)
{
    /* Room kept for "'", "...'" and the NUL. */
    size_t lim = n - 6, o = 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    out[o++] = '\'';
    while (*p) {
        char tmp[8];
        size_t k;
        if (*p >= 0x20 && *p < 0x7f && *p != '\\' && *p != '\'') {
            tmp[0] = (char)*p;
            k = 1;
        } else if (*p >= 0x80) {
            /* Keep a whole valid UTF-8 sequence, else escape the byte. */
            int len = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 ? 2 : 0;
            char seq[5] = {0};
            int ok = len > 0;
            for (int i = 0; ok && i < len; i++) {
                if (i && (p[i] & 0xc0) != 0x80) ok = 0;
                seq[i] = (char)p[i];
            }
            if (ok && mb_utf8_valid(seq, strlen(seq))) {
                memcpy(tmp, seq, (size_t)len);
                k = (size_t)len;
            } else {
                snprintf(tmp, sizeof tmp, "\\x%02x", *p);
                k = 4;
                len = 1;
            }
            if (o + k > lim) break;
            memcpy(out + o, tmp, k);
            o += k;
            p += len;
            continue;
        } else {
            snprintf(tmp, sizeof tmp, "\\x%02x", *p);
            k = 4;
        }
        if (o + k > lim) break;
        memcpy(out + o, tmp, k);
        o += k;
        p++;
    }
    if (*p) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o++] = '\'';
    out[o] = '\0';
}

/* ------------------------------------------------------------ confined opens */

static int openat2_raw(int dirfd, const char *path, int flags, mode_t mode, unsigned long long resolve)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = resolve;
    long fd;
    int tries = 0;
    /* EAGAIN: a rename raced the lookup; the kernel asks for a retry. */
    do {
        fd = syscall(SYS_openat2, dirfd, *path ? path : ".", &how, sizeof how);
    } while (fd < 0 && (errno == EINTR || errno == EAGAIN) && ++tries < 32);
    return fd < 0 ? -errno : (int)fd;
}

/* Without openat2 (kernels before 5.6, valgrind): the same guarantee for
 * the paths this layer uses, one component at a time with O_NOFOLLOW; a
 * ".." component is refused as RESOLVE_BENEATH would refuse to climb. */
static int open_by_components(int dirfd, const char *path, int flags, mode_t mode)
{
    char *copy = mb_strdup(*path ? path : ".");
    int cur = dirfd, fd = -EINVAL;
    char *save = NULL;
    char *c = strtok_r(copy, "/", &save);
    while (c) {
        char *next = strtok_r(NULL, "/", &save);
        if (!strcmp(c, "..")) {
            fd = -EXDEV;
            break;
        }
        int f = next ? (O_PATH | O_DIRECTORY) : flags;
        fd = openat(cur, c, f | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0) fd = -errno;
        if (cur != dirfd) close(cur);
        cur = dirfd;
        if (fd < 0 || !next) break;
        cur = fd;
        c = next;
    }
    if (cur != dirfd && cur != fd) close(cur);
    free(copy);
    return fd;
}

int mb_archive__open_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
    int fd = openat2_raw(dirfd, path, flags | O_NOFOLLOW, mode,
                         RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    if (fd == -ENOSYS) fd = open_by_components(dirfd, path, flags, mode);
    return fd;
}

int mb_archive__resolves_beneath(int dirfd, const char *path)
{
    int fd = openat2_raw(dirfd, path, O_PATH, 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (fd == -ENOENT || fd == -ENOTDIR) return 0; /* dangling: judged as text */
    return fd;
}

/* --------------------------------------------------------------- locale */

void mb_archive__locale_enter(mb_archive__locale *l)
{
    l->saved = (locale_t)0;
    l->utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (l->utf8) l->saved = uselocale(l->utf8);
}

void mb_archive__locale_leave(mb_archive__locale *l)
{
    if (!l->utf8) return;
    uselocale(l->saved);
    freelocale(l->utf8);
    l->utf8 = (locale_t)0;
}
