/*
 * sandbox.c - the life of a sandbox handle: create, adopt, close, destroy,
 * stats and reset.
 *
 * On-disk state of one sandbox (host paths):
 *   <state_dir>/           0711, root's: searchable so that the init, which
 *                          runs as uid_base, can be started from it; nothing in
 *                          it is readable by others
 *   <state_dir>/ctl.sock   0600: the control socket, listened on by the init
 *   <state_dir>/meta       0600: "id=", "workspace=", "uid_base=" lines, read
 *                          by the sweep to find the workspace of a leftover
 *   <state_dir>/init.log   0600: the init's stderr (rarely written)
 *   <state_dir>/root       the mount point of the root tmpfs (inside the
 *                          sandbox's mount namespace only; empty on the host)
 *   <workspace>            the workspace tmpfs (workspace.c)
 *   cgroups mcpbox/<id>    (cgroup.c)
 *
 * Destruction order: SIGKILL the init and wait for it to be gone (its death
 * takes the pid namespace down: every process inside dies with it, before
 * the init's pidfd turns readable), SIGKILL whatever the cgroup still lists,
 * wait for calls in flight on the handle, then remove the cgroups, the
 * workspace mount and the state dir. Each step
 * treats "already gone" as success, which makes destroy idempotent and lets
 * destroy_by_opts and the sweep share it.
 *
 * Handle invariants: refs counts calls in flight (spawn, exec, stats, reset);
 * once `dying` is set no new call starts; the handle is freed only by destroy
 * or close, after refs has dropped to zero.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define KILL_TIMEOUT_MS 10000

/* ------------------------------------------------------------- helpers */

static int validate(const mb_sandbox_opts *o, int for_create, mb_err *err)
{
    if (!o) return mb_err_set(err, MB_EINVAL, "no sandbox options");
    if (!o->id || !mb_is_uuid(o->id))
        return mb_err_set(err, MB_EINVAL, "sandbox id '%s' is not a lower-case UUID",
                          o->id ? o->id : "(null)");
    if (!o->state_dir || o->state_dir[0] != '/')
        return mb_err_set(err, MB_EINVAL, "the sandbox state dir must be an absolute path");
    if (!o->workspace || o->workspace[0] != '/')
        return mb_err_set(err, MB_EINVAL, "the sandbox workspace must be an absolute path");
    if (o->data_subdir && (!*o->data_subdir || strchr(o->data_subdir, '/') ||
                           !strcmp(o->data_subdir, ".") || !strcmp(o->data_subdir, "..")))
        return mb_err_set(err, MB_EINVAL, "the data subdirectory must be a single name");
    if (!for_create) return 0;
    for (size_t i = 0; i < o->n_binds; i++) {
        const char *in = o->binds[i].inside, *host = o->binds[i].host;
        if (!in || (strncmp(in, "/opt/", 5) && strncmp(in, "/srv/", 5) && strncmp(in, "/mnt/", 5)) ||
            strstr(in, "/..") || strstr(in, "//") || in[strlen(in) - 1] == '/')
            return mb_err_set(err, MB_EINVAL,
                              "bind target '%s' must be an absolute path under /opt, /srv or "
                              "/mnt, without '..'", in ? in : "(null)");
        if (!host || host[0] != '/' || access(host, R_OK) != 0)
            return mb_err_set(err, MB_EINVAL, "bind source '%s' (for %s) is not a readable "
                              "absolute host path", host ? host : "(null)", in);
    }
    if (!o->zygote)
        return mb_err_set(err, MB_EINVAL, "a sandbox is created through a zygote "
                                          "(mb_zygote_start), and none was given");
    if (!o->mcpbox_bin || o->mcpbox_bin[0] != '/')
        return mb_err_set(err, MB_EINVAL, "the mcpbox binary path must be absolute");
    if (access(o->mcpbox_bin, X_OK) != 0)
        return mb_err_sys(err, errno, "the mcpbox binary %s is not executable", o->mcpbox_bin);
    if (o->server_bin_dir && o->server_bin_dir[0] != '/')
        return mb_err_set(err, MB_EINVAL, "the server executables' directory must be absolute");
    if (o->image_dir && o->image_dir[0] != '/')
        return mb_err_set(err, MB_EINVAL, "the image directory must be an absolute path");
    if (o->uid_base < MB_SANDBOX_UID_RANGE ||
        (uint64_t)o->uid_base + MB_SANDBOX_UID_RANGE > 0xfffffffeull)
        return mb_err_set(err, MB_EINVAL,
                          "uid_base %u is not usable: the range uid_base..uid_base+65535 must "
                          "lie between 65536 and 4294967294",
                          o->uid_base);
    if (o->limits.cpu_millis && o->limits.cpu_millis < 10)
        return mb_err_set(err, MB_EINVAL, "a CPU quota below 10 milli-cores is not usable");
    if (o->limits.pids_max && o->limits.pids_max < 8)
        return mb_err_set(err, MB_EINVAL, "a sandbox needs at least 8 processes");
    if (o->limits.memory_bytes && o->limits.memory_bytes < (16u << 20))
        return mb_err_set(err, MB_EINVAL, "a sandbox needs at least 16 MiB of memory");
    return 0;
}

/* Fills sa with path; if it is too long for sun_path, goes through an O_PATH
 * descriptor of its directory (*dirfd, to be closed by the caller). */
static int unix_addr(const char *path, struct sockaddr_un *sa, socklen_t *len, int *dirfd,
                     mb_err *err)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    *dirfd = -1;
    size_t n = strlen(path);
    if (n < sizeof sa->sun_path) {
        memcpy(sa->sun_path, path, n);
    } else {
        const char *slash = strrchr(path, '/');
        char *dir = mb_strndup(path, (size_t)(slash - path));
        *dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int e = errno;
        free(dir);
        if (*dirfd < 0) return mb_err_sys(err, e, "cannot open the directory of %s", path);
        snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", *dirfd, slash + 1);
    }
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1);
    return 0;
}

int mb__connect_path(const char *path, int *fd_out, mb_err *err)
{
    struct sockaddr_un sa;
    socklen_t len;
    int dirfd;
    int rc = unix_addr(path, &sa, &len, &dirfd, err);
    if (rc) return rc;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rc = mb_err_sys(err, errno, "socket");
    } else {
        int r;
        do r = connect(fd, (struct sockaddr *)&sa, len);
        while (r != 0 && errno == EINTR);
        if (r != 0) {
            int e = errno;
            close(fd);
            fd = -1;
            if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR)
                rc = mb_err_set(err, MB_ENOTFOUND, "the sandbox at %s is not running", path);
            else
                rc = mb_err_sys(err, e, "cannot connect to %s", path);
        }
    }
    if (dirfd >= 0) close(dirfd);
    if (!rc) {
        int big = MB__MSG_MAX + 4096;
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
        *fd_out = fd;
    }
    return rc;
}

int mb__sb_connect(mb_sandbox *sb, int *fd, mb_err *err)
{
    int rc = mb__connect_path(sb->ctl_path, fd, err);
    if (rc == MB_ENOTFOUND) return mb_err_set(err, MB_EIO, "sandbox %s is not running", sb->id);
    return rc;
}

int mb__sb_ref(mb_sandbox *sb, mb_err *err)
{
    pthread_mutex_lock(&sb->mu);
    int dying = sb->dying;
    if (!dying) sb->refs++;
    pthread_mutex_unlock(&sb->mu);
    if (dying) return mb_err_set(err, MB_ECONFLICT, "sandbox %s is being destroyed", sb->id);
    return 0;
}

void mb__sb_unref(mb_sandbox *sb)
{
    pthread_mutex_lock(&sb->mu);
    if (--sb->refs == 0) pthread_cond_broadcast(&sb->cv);
    pthread_mutex_unlock(&sb->mu);
}

static mb_sandbox *handle_new(const mb_sandbox_opts *o, const mb_sandbox_limits *lim)
{
    mb_sandbox *sb = mb_calloc(1, sizeof *sb);
    sb->id = mb_strdup(o->id);
    mb__sb_name(o->state_dir, o->id, sb->name);
    sb->state_dir = mb_strdup(o->state_dir);
    sb->workspace = mb_strdup(o->workspace);
    sb->ctl_path = mb_asprintf("%s/" MB__CTL_NAME, o->state_dir);
    sb->uid_base = o->uid_base;
    sb->lim = *lim;
    sb->pidfd = -1;
    pthread_mutex_init(&sb->mu, NULL);
    pthread_cond_init(&sb->cv, NULL);
    return sb;
}

static void handle_free(mb_sandbox *sb)
{
    if (sb->pidfd >= 0) close(sb->pidfd);
    pthread_mutex_destroy(&sb->mu);
    pthread_cond_destroy(&sb->cv);
    free(sb->id);
    free(sb->state_dir);
    free(sb->workspace);
    free(sb->ctl_path);
    free(sb);
}

/* Waits for the process behind pidfd to exit; reaps it if it is our child. */
static void wait_gone(int pidfd, int timeout_ms)
{
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    int64_t deadline = mb_mono_ms() + timeout_ms;
    for (;;) {
        int64_t left = deadline - mb_mono_ms();
        if (left <= 0) break;
        int r = poll(&p, 1, (int)left);
        if (r > 0 || (r < 0 && errno != EINTR)) break;
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    (void)waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG);
}

/* The init's host pid as SO_PEERCRED reports it on a connection. */
static pid_t peer_pid(int fd)
{
    struct ucred uc;
    socklen_t len = sizeof uc;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) != 0) return -1;
    return uc.pid;
}

static int ping(int fd, int64_t *version, mb_err *err)
{
    int rc = mb__msg_send_simple(fd, MB__MSG_PING, 0, 0, 0);
    mb__msg m;
    if (!rc) rc = mb__msg_recv(fd, &m, 5000);
    if (rc) return mb_err_set(err, MB_EIO, "the sandbox init does not answer: %s", strerror(-rc));
    int ok = m.h.type == MB__MSG_PONG;
    if (version) *version = m.h.a;
    mb__msg_free(&m);
    if (!ok) return mb_err_set(err, MB_EIO, "the sandbox init gave an unexpected answer");
    return 0;
}

/* Kills, collects and removes everything of one sandbox. pidfd is its init
 * if the caller knows it (-1: found through the control socket). */
static int teardown(const char *name, const char *state_dir, const char *workspace, int pidfd,
                    mb_err *err)
{
    int rc = 0, own_pidfd = -1;
    if (pidfd < 0 && state_dir) {
        char *ctl = mb_asprintf("%s/" MB__CTL_NAME, state_dir);
        int fd;
        if (mb__connect_path(ctl, &fd, NULL) == 0) {
            pid_t pid = peer_pid(fd);
            if (pid > 0) own_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
            close(fd);
        }
        free(ctl);
        pidfd = own_pidfd;
    }
    /* The init's end is the end of its pid namespace: the kernel kills every
     * process in it and reaps them before the init's pidfd turns readable.
     * So wait for that event, then let the cgroup confirm (and catch what a
     * missing init left). */
    if (pidfd >= 0) {
        (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        wait_gone(pidfd, KILL_TIMEOUT_MS);
    }
    mb_err e2;
    int r = mb__cg_kill(name, KILL_TIMEOUT_MS, &e2);
    if (r && !rc) {
        rc = r;
        if (err) *err = e2;
    }
    if (own_pidfd >= 0) close(own_pidfd);
    if ((r = mb__cg_remove(name, &e2)) && !rc) {
        rc = r;
        if (err) *err = e2;
    }
    if (workspace && (r = mb__ws_unmount(workspace, &e2)) && !rc) {
        rc = r;
        if (err) *err = e2;
    }
    if (state_dir && (r = mb_rm_rf(state_dir, &e2)) && !rc) {
        rc = r;
        if (err) *err = e2;
    }
    return rc;
}

/* Not fsync'd: the meta file only matters while the sandbox's processes and
 * mounts exist, and a machine crash takes those (and the tmpfs workspace)
 * down with it. */
static int write_meta(const mb_sandbox_opts *o, mb_err *err)
{
    char *path = mb_asprintf("%s/" MB__META_NAME, o->state_dir);
    char *text = mb_asprintf("id=%s\nworkspace=%s\nuid_base=%u\n", o->id, o->workspace,
                             o->uid_base);
    int rc = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len)
        rc = mb_err_sys(err, errno, "cannot write %s", path);
    if (fd >= 0) close(fd);
    free(path);
    free(text);
    return rc;
}

static int bind_ctl(const char *path, int *out, mb_err *err)
{
    struct sockaddr_un sa;
    socklen_t len;
    int dirfd;
    int rc = unix_addr(path, &sa, &len, &dirfd, err);
    if (rc) return rc;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) rc = mb_err_sys(err, errno, "socket");
    if (!rc) {
        (void)unlink(path);
        if (bind(fd, (struct sockaddr *)&sa, len) != 0 || chmod(path, 0600) != 0) {
            rc = mb_err_sys(err, errno, "cannot bind the control socket %s", path);
            close(fd);
        }
    }
    if (dirfd >= 0) close(dirfd);
    if (!rc) *out = fd;
    return rc;
}

/* ------------------------------------------------------------------ API */

int mb_sandbox_create(const mb_sandbox_opts *o, mb_sandbox **out, mb_err *err)
{
    *out = NULL;
    int rc = validate(o, 1, err);
    if (rc) return rc;
    mb_sandbox_limits lim;
    mb__limits_resolve(&o->limits, &lim);
    const mb__cg_layout *layout;
    if ((rc = mb__cg_layout_get(&layout, err))) return rc;

    /* A running sandbox with this state dir must not be overwritten. */
    char *ctl = mb_asprintf("%s/" MB__CTL_NAME, o->state_dir);
    int probe;
    if (mb__connect_path(ctl, &probe, NULL) == 0) {
        close(probe);
        free(ctl);
        return mb_err_set(err, MB_ECONFLICT, "a sandbox is already running in %s",
                          o->state_dir);
    }
    char *root = mb_asprintf("%s/" MB__ROOT_NAME, o->state_dir);
    char hostname[32];
    snprintf(hostname, sizeof hostname, "mcpbox-%.8s", o->id);
    int lfd = -1;
    pid_t pid = -1;
    int pidfd = -1;
    char name[MB__NAME_MAX];
    mb__sb_name(o->state_dir, o->id, name); /* provisional: the root may not exist yet */

    if ((rc = mb_mkdir_p(o->state_dir, 0711, err))) goto fail;
    mb__sb_name(o->state_dir, o->id, name);
    if (chmod(o->state_dir, 0711) != 0) {
        rc = mb_err_sys(err, errno, "cannot chmod %s", o->state_dir);
        goto fail;
    }
    if (mkdir(root, 0755) != 0 && errno != EEXIST) {
        rc = mb_err_sys(err, errno, "cannot create %s", root);
        goto fail;
    }
    if ((rc = write_meta(o, err))) goto fail;
    if ((rc = mb__ws_mount(o->workspace, name, lim.disk_bytes, o->uid_base, err))) {
        if (rc == MB_ECONFLICT) { /* not ours: leave the workspace alone */
            mb_err e2;
            (void)mb_rm_rf(o->state_dir, &e2);
            free(ctl);
            free(root);
            return rc;
        }
        goto fail;
    }
    for (int k = 0; o->data_subdir && k < 2; k++) { /* /data, then /.mcpbox/state */
        char *data = mb_asprintf("%s/%s", o->workspace, k ? MB_SB_STATE_SUBDIR : o->data_subdir);
        if (mkdir(data, 0755) != 0 && errno != EEXIST) rc = mb_err_sys(err, errno, "cannot create %s", data);
        else if (chown(data, o->uid_base, o->uid_base) != 0)
            rc = mb_err_sys(err, errno, "cannot chown %s", data);
        free(data);
        if (rc) goto fail;
    }
    if ((rc = mb__cg_create(name, &lim, err))) goto fail;
    if ((rc = bind_ctl(ctl, &lfd, err))) goto fail;
    mb__launch_args la = {.opts = o, .lim = &lim, .root = root, .hostname = hostname,
                          .name = name, .listen_fd = lfd};
    int is_child = 0;
    rc = mb__launch(&la, &pid, &pidfd, &is_child, err);
    close(lfd);
    if (rc) goto fail;

    mb_sandbox *sb = handle_new(o, &lim);
    sb->init_pid = pid;
    sb->pidfd = pidfd;
    sb->is_child = is_child;
    free(ctl);
    free(root);
    *out = sb;
    return 0;

fail:;
    mb_err e2;
    (void)teardown(name, o->state_dir, o->workspace, pidfd, &e2);
    if (pidfd >= 0) close(pidfd);
    free(ctl);
    free(root);
    return rc;
}

int mb_sandbox_adopt(const mb_sandbox_opts *o, mb_sandbox **out, mb_err *err)
{
    *out = NULL;
    int rc = validate(o, 0, err);
    if (rc) return rc;
    char *ctl = mb_asprintf("%s/" MB__CTL_NAME, o->state_dir);
    int fd;
    rc = mb__connect_path(ctl, &fd, err);
    free(ctl);
    if (rc) return rc == MB_ENOTFOUND ? mb_err_set(err, MB_ENOTFOUND,
                                                   "sandbox %s is not running (no init "
                                                   "answers in %s)",
                                                   o->id, o->state_dir)
                                      : rc;
    int64_t version = 0;
    rc = ping(fd, &version, err);
    pid_t pid = rc ? -1 : peer_pid(fd);
    close(fd);
    if (rc) return mb_err_set(err, MB_ENOTFOUND, "sandbox %s does not answer", o->id);
    if (version != MB__PROTO_VERSION)
        return mb_err_set(err, MB_ECONFLICT,
                          "sandbox %s runs an init of protocol %lld, this binary speaks %d: "
                          "destroy it",
                          o->id, (long long)version, MB__PROTO_VERSION);
    int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    if (pidfd < 0) return mb_err_sys(err, errno, "cannot open the init of sandbox %s", o->id);
    if (!mb__ws_is_mount(o->workspace)) {
        close(pidfd);
        return mb_err_set(err, MB_ENOTFOUND,
                          "the workspace of sandbox %s is no longer mounted at %s", o->id,
                          o->workspace);
    }
    mb_sandbox_limits lim;
    mb__limits_resolve(&o->limits, &lim);
    mb_sandbox *sb = handle_new(o, &lim);
    sb->init_pid = pid;
    sb->pidfd = pidfd;
    /* An init we started before a restart of this same process is still our
     * child; the sweep of a new process never is. waitid tells. */
    siginfo_t si;
    memset(&si, 0, sizeof si);
    sb->is_child = waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
    *out = sb;
    return 0;
}

void mb_sandbox_close(mb_sandbox *sb)
{
    if (!sb) return;
    pthread_mutex_lock(&sb->mu);
    sb->dying = 1;
    while (sb->refs > 0) pthread_cond_wait(&sb->cv, &sb->mu);
    pthread_mutex_unlock(&sb->mu);
    handle_free(sb);
}

int mb_sandbox_destroy(mb_sandbox *sb, mb_err *err)
{
    if (!sb) return 0;
    pthread_mutex_lock(&sb->mu);
    sb->dying = 1;
    pthread_mutex_unlock(&sb->mu);
    /* Killing the init first makes every call in flight fail promptly. */
    if (sb->pidfd >= 0) (void)syscall(SYS_pidfd_send_signal, sb->pidfd, SIGKILL, NULL, 0);
    pthread_mutex_lock(&sb->mu);
    while (sb->refs > 0) pthread_cond_wait(&sb->cv, &sb->mu);
    pthread_mutex_unlock(&sb->mu);
    int rc = teardown(sb->name, sb->state_dir, sb->workspace, sb->pidfd, err);
    handle_free(sb);
    return rc;
}

int mb_sandbox_destroy_by_opts(const mb_sandbox_opts *o, mb_err *err)
{
    int rc = validate(o, 0, err);
    if (rc) return rc;
    char name[MB__NAME_MAX];
    mb__sb_name(o->state_dir, o->id, name);
    return teardown(name, o->state_dir, o->workspace, -1, err);
}

const char *mb_sandbox_id(const mb_sandbox *sb) { return sb->id; }
const char *mb_sandbox_workspace(const mb_sandbox *sb) { return sb->workspace; }
pid_t mb_sandbox_init_pid(const mb_sandbox *sb) { return sb->init_pid; }

int mb_sandbox_stats_get(mb_sandbox *sb, mb_sandbox_stats *st, mb_err *err)
{
    memset(st, 0, sizeof *st);
    int rc = mb__sb_ref(sb, err);
    if (rc) return rc;
    st->init_pid = sb->init_pid;
    rc = mb__cg_stats(sb->name, st, err);
    struct statfs sf;
    if (!rc && statfs(sb->workspace, &sf) == 0) {
        st->disk_limit_bytes = (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize;
        st->disk_used_bytes = (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize;
    }
    mb__sb_unref(sb);
    return rc;
}

int mb_sandbox_reset(mb_sandbox *sb, mb_err *err)
{
    int rc = mb__sb_ref(sb, err);
    if (rc) return rc;
    int fd = -1;
    mb__msg m;
    memset(&m, 0, sizeof m);
    if (!(rc = mb__sb_connect(sb, &fd, err))) {
        int r = mb__msg_send_simple(fd, MB__MSG_RESET, 0, 0, 0);
        if (!r) r = mb__msg_recv(fd, &m, 30000);
        if (r) rc = mb_err_set(err, MB_EIO, "cannot reset sandbox %s: %s", sb->id, strerror(-r));
        else if (m.h.type != MB__MSG_OK)
            rc = mb_err_set(err, MB_EIO, "sandbox %s refused the reset", sb->id);
        mb__msg_free(&m);
        close(fd);
    }
    mb__sb_unref(sb);
    return rc;
}
