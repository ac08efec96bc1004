/*
 * rootfs.c - the sandbox's root filesystem, as a plan: a list of steps built
 * in the parent (where allocating, stat-ing the host and formatting strings
 * are all fine) and run in the freshly cloned child (which may only make
 * system calls: it is a copy of a multi-threaded daemon).
 *
 * The root is a small private tmpfs mounted on <state_dir>/root inside the
 * child's own mount namespace, populated with:
 *
 *   /usr, /lib*, ...  read-only, nosuid, nodev binds of the host's (or, with
 *                     an image, of every top-level entry of the image); the
 *                     host's /bin, /lib, /lib64, /sbin symlinks are recreated
 *   /etc              generated passwd, group, hostname, hosts, nsswitch.conf
 *                     and resolv.conf, plus read-only binds of a fixed list
 *                     of harmless host files (ld.so.cache, ssl certs,
 *                     alternatives, ...). No shadow, no keys, no host config
 *                     that names credentials (npmrc, pip.conf)
 *   /tmp /run /dev/shm  private tmpfs; /tmp and /dev/shm a quarter of
 *                     memory_bytes each (mb__tmpfs_bytes)
 *   /dev              tmpfs with binds of null, zero, full, random, urandom
 *                     and tty, a private devpts, fd/std* symlinks; read-only
 *   /proc             the sandbox's own proc (its own pid namespace)
 *   /sys              an empty directory: sysfs is not mounted
 *   /data             the workspace, read-write, nosuid, nodev
 *   /.mcpbox/mcpbox   the mcpbox binary, read-only
 *
 * then pivot_root into it, detach the old root and make the root read-only.
 * There is no /root, /home, /var (except /var/tmp -> /tmp), /mnt or /opt.
 *
 * Two phases, because the state dir and the workspace may sit under
 * directories only host root may search (0700): the child first opens every
 * bind source and the root mount point as O_PATH descriptors while it still
 * has the host uid 0 (mb__plan_open), then becomes root of its user
 * namespace (uid_base on the host) and runs the rest (mb__plan_run) through
 * those descriptors: the root tmpfs is created with fsopen/fsmount and
 * attached to the mount point by descriptor, every later path is relative
 * to it (the child's cwd), and binds are open_tree clones of the opened
 * sources, made read-only with mount_setattr(2) before they are attached
 * (recursive, and without touching the atime flags that a user namespace may
 * not change). Needs Linux >= 5.12.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

enum op_kind {
    OP_PRIVATE, /* make every inherited mount private */
    OP_ROOT,    /* new tmpfs attached on src (opened early); becomes the cwd */
    OP_MKDIR,
    OP_FILE,    /* create dst with data (possibly empty) */
    OP_SYMLINK, /* dst -> src */
    OP_BIND,    /* bind src on dst, then set attrs */
    OP_TMPFS,   /* tmpfs on dst with data as options */
    OP_PROC,
    OP_DEVPTS,
    OP_SETATTR, /* set attrs on the mount at dst */
    OP_PIVOT,   /* pivot_root into dst */
};

typedef struct op {
    int kind;
    const char *src;
    const char *dst;
    const char *data;
    size_t data_len;
    unsigned long mflags; /* mount(2) flags */
    uint64_t attrs;       /* MOUNT_ATTR_* to set */
    int rec;              /* recursive bind / setattr */
    mode_t mode;
    int fd;               /* child scratch: the O_PATH source of BIND / ROOT */
} op;

struct mb__plan {
    op *ops;
    size_t n, cap;
    char **strs; /* every string the ops point to, freed with the plan */
    size_t nstrs, capstrs;
    char *names; /* scratch for mb__plan_step_name */
};

static const char *keep(mb__plan *p, char *s)
{
    if (p->nstrs == p->capstrs) {
        p->capstrs = p->capstrs ? p->capstrs * 2 : 64;
        p->strs = mb_realloc(p->strs, p->capstrs * sizeof *p->strs);
    }
    p->strs[p->nstrs++] = s;
    return s;
}

static op *add(mb__plan *p, int kind)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->ops = mb_realloc(p->ops, p->cap * sizeof *p->ops);
    }
    op *o = &p->ops[p->n++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->fd = -1;
    return o;
}

/* Destinations are relative to the new root (the child's cwd once it runs). */
static const char *at(mb__plan *p, const char *rel)
{
    return keep(p, mb_strdup(rel));
}

static void mkdir_op(mb__plan *p, const char *rel, mode_t mode)
{
    op *o = add(p, OP_MKDIR);
    o->dst = at(p, rel);
    o->mode = mode;
}

static void file_op(mb__plan *p, const char *rel, const char *content, mode_t mode)
{
    op *o = add(p, OP_FILE);
    o->dst = at(p, rel);
    o->data = content ? keep(p, mb_strdup(content)) : NULL;
    o->data_len = content ? strlen(content) : 0;
    o->mode = mode;
}

static void symlink_op(mb__plan *p, const char *rel, const char *target)
{
    op *o = add(p, OP_SYMLINK);
    o->src = keep(p, mb_strdup(target));
    o->dst = at(p, rel);
}

static void bind_op(mb__plan *p, const char *src, const char *rel, uint64_t attrs, int rec)
{
    op *o = add(p, OP_BIND);
    o->src = keep(p, mb_strdup(src));
    o->dst = at(p, rel);
    o->attrs = attrs;
    o->rec = rec;
}

static void tmpfs_op(mb__plan *p, const char *rel, const char *opts, unsigned long flags)
{
    op *o = add(p, OP_TMPFS);
    o->dst = at(p, rel);
    o->data = keep(p, mb_strdup(opts));
    o->mflags = flags;
}

#define RO_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/* Mirrors the host (or image) entry src at rel: a symlink is recreated, a
 * directory or file is bound read-only. Missing entries are skipped. */
static void mirror(mb__plan *p, const char *src, const char *rel)
{
    struct stat st;
    if (lstat(src, &st) != 0) return;
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlink(src, target, sizeof target - 1);
        if (n <= 0) return;
        target[n] = '\0';
        symlink_op(p, rel, target);
    } else if (S_ISDIR(st.st_mode)) {
        mkdir_op(p, rel, 0755);
        bind_op(p, src, rel, RO_ATTRS, 1);
    } else if (S_ISREG(st.st_mode)) {
        file_op(p, rel, NULL, 0644);
        bind_op(p, src, rel, RO_ATTRS, 0);
    }
}

/* Host /etc entries that are bound read-only when present (fnmatch patterns
 * for the versioned ones). Everything else in the host's /etc stays out.
 * Each entry costs a bind mount per sandbox, so the list holds what programs
 * in a workspace really read: the dynamic linker's cache, time zone, name
 * service tables, MIME and magic databases, the alternatives symlinks that
 * /usr/bin points into, fonts, and the configuration of the language
 * runtimes and document tools the servers use. Interactive shell setup
 * (profile, bashrc, inputrc) is left out on purpose. */
static const char *const etc_keep[] = {
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "protocols",
    "services", "host.conf", "gai.conf", "networks", "mime.types", "magic", "magic.mime",
    "mailcap", "os-release", "debian_version", "lsb-release", "alternatives", "fonts",
    "python3*", "perl", "java-*", "ImageMagick-*", "gitconfig", "libreoffice", "chromium",
    "chromium.d", "papersize", "mtab", NULL,
};

static int etc_wanted(const char *name)
{
    for (const char *const *k = etc_keep; *k; k++)
        if (!fnmatch(*k, name, 0)) return 1;
    return 0;
}

static void host_etc(mb__plan *p, const mb_sandbox_opts *o)
{
    DIR *d = opendir("/etc");
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.' || !etc_wanted(de->d_name)) continue;
            char *src = mb_asprintf("/etc/%s", de->d_name);
            char *rel = mb_asprintf("etc/%s", de->d_name);
            mirror(p, src, rel);
            free(src);
            free(rel);
        }
        closedir(d);
    }
    /* TLS trust: certificates and OpenSSL's config, never ssl/private. */
    struct stat st;
    if (stat("/etc/ssl", &st) == 0) {
        mkdir_op(p, "etc/ssl", 0755);
        mirror(p, "/etc/ssl/certs", "etc/ssl/certs");
        mirror(p, "/etc/ssl/openssl.cnf", "etc/ssl/openssl.cnf");
    }
    if (o->allow_network) mirror(p, "/etc/resolv.conf", "etc/resolv.conf");
}

static void generated_etc(mb__plan *p, const char *hostname, const mb_sandbox_opts *o)
{
    file_op(p, "etc/passwd",
            "root:x:0:0:root:/tmp:/bin/sh\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
            0644);
    file_op(p, "etc/group", "root:x:0:\ntty:x:5:\nnogroup:x:65534:\n", 0644);
    char *s = mb_asprintf("%s\n", hostname);
    file_op(p, "etc/hostname", s, 0644);
    free(s);
    s = mb_asprintf("127.0.0.1\tlocalhost\n127.0.1.1\t%s\n"
                    "::1\tlocalhost ip6-localhost ip6-loopback\n",
                    hostname);
    file_op(p, "etc/hosts", s, 0644);
    free(s);
    file_op(p, "etc/nsswitch.conf",
            "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
            "networks: files\nprotocols: files\nservices: files\nethers: files\nrpc: files\n",
            0644);
    if (!o->allow_network)
        file_op(p, "etc/resolv.conf", "# this sandbox has no network\n", 0644);
}

static int image_skip(const char *name)
{
    static const char *const skip[] = {".", "..", "proc", "sys", "dev", "tmp", "run", "data",
                                       ".mcpbox", "lost+found", NULL};
    for (const char *const *s = skip; *s; s++)
        if (!strcmp(*s, name)) return 1;
    return 0;
}

int mb__plan_build(const mb_sandbox_opts *o, const mb_sandbox_limits *lim, const char *root,
                   const char *hostname, mb__plan **out, mb_err *err)
{
    mb__plan *p = mb_calloc(1, sizeof *p);
    char opts[160];

    add(p, OP_PRIVATE);
    op *ro = add(p, OP_ROOT);
    ro->src = keep(p, mb_strdup(root));

    if (o->image_dir) {
        DIR *d = opendir(o->image_dir);
        if (!d) {
            int e = errno;
            mb__plan_free(p);
            return mb_err_sys(err, e, "cannot read the image directory %s", o->image_dir);
        }
        int has_etc = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (image_skip(de->d_name)) continue;
            char *src = mb_asprintf("%s/%s", o->image_dir, de->d_name);
            mirror(p, src, de->d_name);
            if (!strcmp(de->d_name, "etc")) has_etc = 1;
            free(src);
        }
        closedir(d);
        if (!has_etc) {
            mkdir_op(p, "etc", 0755);
            generated_etc(p, hostname, o);
        }
    } else {
        static const char *const top[] = {"usr", "bin", "sbin", "lib", "lib32", "lib64",
                                           "libx32", NULL};
        for (const char *const *t = top; *t; t++) {
            char *src = mb_asprintf("/%s", *t);
            mirror(p, src, *t);
            free(src);
        }
        mkdir_op(p, "etc", 0755);
        generated_etc(p, hostname, o);
        host_etc(p, o);
        mkdir_op(p, "var", 0755);
        symlink_op(p, "var/tmp", "../tmp");
    }

    mkdir_op(p, "tmp", 01777);
    snprintf(opts, sizeof opts, "size=%" PRIu64 ",mode=1777", mb__tmpfs_bytes(lim));
    tmpfs_op(p, "tmp", opts, MS_NOSUID | MS_NODEV);
    mkdir_op(p, "run", 0755);
    tmpfs_op(p, "run", "size=16m,mode=0755", MS_NOSUID | MS_NODEV);

    mkdir_op(p, "dev", 0755);
    tmpfs_op(p, "dev", "size=64k,nr_inodes=64,mode=0755", MS_NOSUID | MS_NOEXEC);
    static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty", NULL};
    for (const char *const *n = nodes; *n; n++) {
        char *src = mb_asprintf("/dev/%s", *n);
        char *rel = mb_asprintf("dev/%s", *n);
        file_op(p, rel, NULL, 0666);
        bind_op(p, src, rel, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0);
        free(src);
        free(rel);
    }
    mkdir_op(p, "dev/pts", 0755);
    op *pts = add(p, OP_DEVPTS);
    pts->dst = at(p, "dev/pts");
    symlink_op(p, "dev/ptmx", "pts/ptmx");
    mkdir_op(p, "dev/shm", 01777);
    snprintf(opts, sizeof opts, "size=%" PRIu64 ",mode=1777", mb__tmpfs_bytes(lim));
    tmpfs_op(p, "dev/shm", opts, MS_NOSUID | MS_NODEV);
    symlink_op(p, "dev/fd", "/proc/self/fd");
    symlink_op(p, "dev/stdin", "/proc/self/fd/0");
    symlink_op(p, "dev/stdout", "/proc/self/fd/1");
    symlink_op(p, "dev/stderr", "/proc/self/fd/2");
    op *devro = add(p, OP_SETATTR);
    devro->dst = at(p, "dev");
    devro->attrs = MOUNT_ATTR_RDONLY;

    mkdir_op(p, "proc", 0555);
    op *proc = add(p, OP_PROC);
    proc->dst = at(p, "proc");
    mkdir_op(p, "sys", 0555);

    mkdir_op(p, "data", 0755);
    const char *data = o->workspace;
    if (o->data_subdir) data = keep(p, mb_asprintf("%s/%s", o->workspace, o->data_subdir));
    bind_op(p, data, "data", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 1);

    for (size_t i = 0; i < o->n_binds; i++) {
        /* Parents as plain directories of the root tmpfs, then the bind. */
        char *rel = mb_strdup(o->binds[i].inside + 1);
        for (char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
            *slash = '\0';
            mkdir_op(p, rel, 0755);
            *slash = '/';
        }
        char *host = realpath(o->binds[i].host, NULL);
        if (host) mirror(p, host, rel);
        free(host);
        free(rel);
    }

    mkdir_op(p, ".mcpbox", 0755);
    file_op(p, ".mcpbox/mcpbox", NULL, 0755);
    bind_op(p, o->mcpbox_bin, ".mcpbox/mcpbox", RO_ATTRS, 0);
    if (o->server_bin_dir) {
        mkdir_op(p, ".mcpbox/bin", 0755);
        bind_op(p, o->server_bin_dir, ".mcpbox/bin", RO_ATTRS, 0);
    }
    if (o->data_subdir) { /* services' per-sandbox state (e.g. the Google Cloud project) */
        mkdir_op(p, ".mcpbox/state", 0755);
        bind_op(p, keep(p, mb_asprintf("%s/" MB_SB_STATE_SUBDIR, o->workspace)), ".mcpbox/state",
                MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0);
    }

    op *pv = add(p, OP_PIVOT);
    pv->dst = keep(p, mb_strdup(root));
    *out = p;
    return 0;
}

void mb__plan_free(mb__plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nstrs; i++) free(p->strs[i]);
    free(p->strs);
    free(p->ops);
    free(p->names);
    free(p);
}

const char *mb__plan_step_name(const mb__plan *p, int step)
{
    mb__plan *mp = (mb__plan *)p;
    free(mp->names);
    mp->names = NULL;
    if (step < 0 || (size_t)step >= p->n) return (mp->names = mb_strdup("setup"));
    const op *o = &p->ops[step];
    switch (o->kind) {
    case OP_PRIVATE: mp->names = mb_strdup("make inherited mounts private"); break;
    case OP_ROOT: mp->names = mb_asprintf("mount the root tmpfs on %s", o->src); break;
    case OP_MKDIR: mp->names = mb_asprintf("create directory %s", o->dst); break;
    case OP_FILE: mp->names = mb_asprintf("create file %s", o->dst); break;
    case OP_SYMLINK: mp->names = mb_asprintf("create symlink %s", o->dst); break;
    case OP_BIND: mp->names = mb_asprintf("bind %s on %s", o->src, o->dst); break;
    case OP_TMPFS: mp->names = mb_asprintf("mount tmpfs on %s", o->dst); break;
    case OP_PROC: mp->names = mb_asprintf("mount proc on %s", o->dst); break;
    case OP_DEVPTS: mp->names = mb_asprintf("mount devpts on %s", o->dst); break;
    case OP_SETATTR: mp->names = mb_asprintf("make %s read-only", o->dst); break;
    case OP_PIVOT: mp->names = mb_asprintf("pivot_root into the new root"); break;
    default: mp->names = mb_strdup("unknown step"); break;
    }
    return mp->names;
}

/* ----------------------------------------------------- child side (no malloc) */

static unsigned long statfs_to_ms(unsigned long f)
{
    unsigned long m = 0;
    if (f & ST_RDONLY) m |= MS_RDONLY;
    if (f & ST_NOSUID) m |= MS_NOSUID;
    if (f & ST_NODEV) m |= MS_NODEV;
    if (f & ST_NOEXEC) m |= MS_NOEXEC;
    if (f & ST_NOATIME) m |= MS_NOATIME;
    if (f & ST_NODIRATIME) m |= MS_NODIRATIME;
    if (f & ST_RELATIME) m |= MS_RELATIME;
    return m;
}

/* Sets attrs on the mount at dfd/path; 0 or -errno. */
static int set_attrs(int dfd, const char *path, uint64_t attrs, int rec, int empty)
{
    struct mount_attr ma = {.attr_set = attrs};
    unsigned flags = (rec ? AT_RECURSIVE : 0) | (empty ? AT_EMPTY_PATH : 0);
    if (syscall(SYS_mount_setattr, dfd, path, flags, &ma, sizeof ma) == 0) return 0;
    if (errno != ENOSYS || empty) return -errno;
    /* Pre-5.12 kernels: remount the bind, repeating the flags it already has
     * (a user namespace may not drop locked ones). Not recursive. */
    struct statfs sf;
    if (statfs(path, &sf) != 0) return -errno;
    unsigned long fl = MS_REMOUNT | MS_BIND | statfs_to_ms((unsigned long)sf.f_flags);
    if (attrs & MOUNT_ATTR_RDONLY) fl |= MS_RDONLY;
    if (attrs & MOUNT_ATTR_NOSUID) fl |= MS_NOSUID;
    if (attrs & MOUNT_ATTR_NODEV) fl |= MS_NODEV;
    if (attrs & MOUNT_ATTR_NOEXEC) fl |= MS_NOEXEC;
    return mount(NULL, path, NULL, fl, NULL) == 0 ? 0 : -errno;
}

static int fscfg(int fs, const char *key, const char *value)
{
    return (int)syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, key, value, 0);
}

/* The root tmpfs, attached on the opened mount point; returns its fd. */
static int make_root(const op *o)
{
    int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0) return -errno;
    int m = -1;
    if (fscfg(fs, "size", "1m") != 0 || fscfg(fs, "nr_inodes", "2048") != 0 ||
        fscfg(fs, "mode", "0755") != 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0) {
        int e = errno;
        close(fs);
        return -e;
    }
    m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    int e = errno;
    close(fs);
    if (m < 0) return -e;
    if (syscall(SYS_move_mount, m, "", o->fd, "",
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0 ||
        fchdir(m) != 0) {
        e = errno;
        close(m);
        return -e;
    }
    return m;
}

static int bind(const op *o)
{
    int t = (int)syscall(SYS_open_tree, o->fd, "",
                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                             (o->rec ? AT_RECURSIVE : 0));
    if (t < 0) return -errno;
    int rc = o->attrs ? set_attrs(t, "", o->attrs, o->rec, 1) : 0;
    if (!rc && syscall(SYS_move_mount, t, "", AT_FDCWD, o->dst, MOVE_MOUNT_F_EMPTY_PATH) != 0)
        rc = -errno;
    close(t);
    return rc;
}

static int run_op(op *o)
{
    switch (o->kind) {
    case OP_PRIVATE:
        return 0; /* done by mb__plan_open */
    case OP_ROOT: {
        int m = make_root(o);
        if (m < 0) return m;
        close(m);
        close(o->fd);
        o->fd = -1;
        return 0;
    }
    case OP_MKDIR:
        if (mkdir(o->dst, o->mode) != 0 && errno != EEXIST) return -errno;
        /* mkdir applies the umask; the sticky /tmp needs the exact mode. */
        return chmod(o->dst, o->mode) == 0 ? 0 : -errno;
    case OP_FILE: {
        int fd = open(o->dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, o->mode);
        if (fd < 0) return -errno;
        size_t off = 0;
        while (off < o->data_len) {
            ssize_t n = write(fd, o->data + off, o->data_len - off);
            if (n < 0) {
                int e = errno;
                close(fd);
                return -e;
            }
            off += (size_t)n;
        }
        close(fd);
        return 0;
    }
    case OP_SYMLINK:
        return symlink(o->src, o->dst) == 0 || errno == EEXIST ? 0 : -errno;
    case OP_BIND: {
        int rc = bind(o);
        close(o->fd);
        o->fd = -1;
        return rc;
    }
    case OP_TMPFS:
        return mount("tmpfs", o->dst, "tmpfs", o->mflags, o->data) == 0 ? 0 : -errno;
    case OP_PROC:
        return mount("proc", o->dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0 ? 0
                                                                                        : -errno;
    case OP_DEVPTS:
        return mount("devpts", o->dst, "devpts", MS_NOSUID | MS_NOEXEC,
                     "newinstance,ptmxmode=0666,mode=0620,gid=5") == 0
                   ? 0
                   : -errno;
    case OP_SETATTR:
        return set_attrs(AT_FDCWD, o->dst, o->attrs, o->rec, 0);
    case OP_PIVOT:
        if (syscall(SYS_pivot_root, ".", ".") != 0) return -errno;
        if (umount2(".", MNT_DETACH) != 0) return -errno;
        if (chdir("/") != 0) return -errno;
        return set_attrs(AT_FDCWD, "/", RO_ATTRS, 0, 0);
    }
    return -EINVAL;
}

int mb__plan_open(mb__plan *p, int *failed_step)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        *failed_step = 0;
        return -errno;
    }
    for (size_t i = 0; i < p->n; i++) {
        op *o = &p->ops[i];
        if (o->kind != OP_BIND && o->kind != OP_ROOT) continue;
        o->fd = open(o->src, O_PATH | O_CLOEXEC);
        if (o->fd < 0) {
            *failed_step = (int)i;
            return -errno;
        }
    }
    return 0;
}

int mb__plan_run(mb__plan *p, int *failed_step)
{
    for (size_t i = 0; i < p->n; i++) {
        int rc = run_op(&p->ops[i]);
        if (rc) {
            *failed_step = (int)i;
            return rc;
        }
    }
    return 0;
}
