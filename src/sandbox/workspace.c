/*
 * workspace.c - the workspace quota: each sandbox's /data is a tmpfs of
 * disk_bytes mounted at opts->workspace in the host's mount namespace.
 *
 * Why tmpfs (docs/SANDBOX.md has the whole trade-off): it needs nothing from
 * the host filesystem (no project-quota feature, no loop devices, no mkfs),
 * mounts in microseconds, stays visible to the daemon at a host path and
 * survives a daemon restart, returns a plain ENOSPC when full, makes
 * hardlinks between the workspace and any host file impossible (EXDEV), and
 * is freed by one umount. The price is that workspace bytes live in RAM
 * (tmpfs pages can go to swap where there is swap) and vanish at reboot,
 * which is fine for disposable benchmark workspaces.
 *
 * The inode count is bounded too (one inode per 4 KiB of quota, at least
 * 4096), so a file-count bomb ends in ENOSPC rather than in kernel memory.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int mb__ws_is_mount(const char *path)
{
    struct statx sx;
    if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) != 0) return 0;
    if (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
        return (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
    /* Older kernels: a mount root has another device than its parent. */
    char *parent = mb_asprintf("%s/..", path);
    struct stat a, b;
    int r = stat(path, &a) == 0 && stat(parent, &b) == 0 &&
            (a.st_dev != b.st_dev || a.st_ino == b.st_ino);
    free(parent);
    return r;
}

static int dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return 1;
    struct dirent *de;
    int empty = 1;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            empty = 0;
            break;
        }
    closedir(d);
    return empty;
}

int mb__ws_mount(const char *path, const char *name, uint64_t bytes, uint32_t uid,
                 mb_err *err)
{
    int rc = mb_mkdir_p(path, 0755, err);
    if (rc) return rc;
    if (mb__ws_is_mount(path))
        return mb_err_set(err, MB_ECONFLICT,
                          "workspace %s is already a mount point (is another sandbox using it?)",
                          path);
    if (!dir_is_empty(path))
        return mb_err_set(err, MB_ECONFLICT,
                          "workspace %s is not empty; a new sandbox needs an empty or absent "
                          "directory (fill it after creation)",
                          path);
    uint64_t inodes = bytes / 4096;
    if (inodes < 4096) inodes = 4096;
    char source[96], data[160];
    snprintf(source, sizeof source, MB__WS_SOURCE_PREFIX "%s", name);
    snprintf(data, sizeof data, "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=0755,uid=%u,gid=%u",
             bytes, inodes, uid, uid);
    if (mount(source, path, "tmpfs", MS_NOSUID | MS_NODEV, data) != 0)
        return mb_err_sys(err, errno, "cannot mount the workspace tmpfs on %s", path);
    return 0;
}

int mb__ws_unmount(const char *path, mb_err *err)
{
    for (int i = 0; i < 16 && mb__ws_is_mount(path); i++)
        if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) != 0) {
            if (errno == EINVAL || errno == ENOENT) break;
            return mb_err_sys(err, errno, "cannot unmount workspace %s", path);
        }
    if (mb__ws_is_mount(path))
        return mb_err_set(err, MB_EIO, "workspace %s is still mounted", path);
    return mb_rm_rf(path, err);
}
