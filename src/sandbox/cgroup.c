/*
 * cgroup.c - per-sandbox cgroups on the host: memory, pids and cpu limits,
 * usage numbers, and killing everything a sandbox runs.
 *
 * Layout: every sandbox gets <hierarchy>/mcpbox/<scope>.<id> in each hierarchy that
 * provides a controller we use. On a v1 host those are /sys/fs/cgroup/memory,
 * .../pids, .../cpu (wherever mountinfo says they are, co-mounted or not); on
 * a v2 host the single unified hierarchy, where the mcpbox parent enables the
 * controllers for its children through cgroup.subtree_control. A hybrid host
 * (v1 controllers plus a v2 mount without them, like Debian's default before
 * 11 or this project's test machine) uses the v1 hierarchies; a controller is
 * taken from v2 only when no v1 hierarchy has it.
 *
 * The probe of the layout runs once per process (pthread_once) and its result
 * never changes: mounting or unmounting cgroup hierarchies under a running
 * daemon is not supported.
 *
 * Memory: the limit is memory + disk (see sandbox.h) and swap is forbidden
 * (v1 memory.memsw.limit_in_bytes, v2 memory.swap.max = 0) where the host
 * accounts swap. The OOM killer stays enabled (v1 memory.oom_control
 * oom_kill_disable = 0, v2 memory.oom.group = 0): when the cgroup is full the
 * kernel kills the largest process inside it, never one outside, and not the
 * whole sandbox.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CFS_PERIOD_US 100000

static pthread_once_t layout_once = PTHREAD_ONCE_INIT;
static mb__cg_layout layout;
static mb_err layout_err;
static int layout_rc;

void mb__limits_resolve(const mb_sandbox_limits *in, mb_sandbox_limits *out)
{
    mb_sandbox_limits l = in ? *in : (mb_sandbox_limits){0};
    if (!l.memory_bytes) l.memory_bytes = MB_SANDBOX_DEFAULT_MEMORY;
    if (!l.pids_max) l.pids_max = MB_SANDBOX_DEFAULT_PIDS;
    if (!l.cpu_millis) l.cpu_millis = MB_SANDBOX_DEFAULT_CPU_MILLIS;
    if (!l.disk_bytes) l.disk_bytes = MB_SANDBOX_DEFAULT_DISK;
    *out = l;
}

uint64_t mb__tmpfs_bytes(const mb_sandbox_limits *resolved)
{
    uint64_t b = resolved->memory_bytes / 4;
    return b < (1u << 20) ? (1u << 20) : b;
}

/* ---------------------------------------------------------------- names */

char *mb__resolve_partly(const char *path)
{
    char *real = realpath(path, NULL);
    if (real) return real;
    char *abs;
    if (path[0] == '/') {
        abs = mb_strdup(path);
    } else {
        char *cwd = getcwd(NULL, 0);
        if (!cwd) return NULL;
        abs = mb_asprintf("%s/%s", cwd, path);
        free(cwd);
    }
    /* Split at each '/' from the right until a prefix resolves. */
    size_t n = strlen(abs);
    char *base = NULL;
    size_t cut = n;
    while (cut > 0) {
        while (cut > 0 && abs[cut - 1] != '/') cut--;
        if (cut == 0) break;
        size_t keep = cut - 1;
        char *prefix = mb_strndup(abs, keep ? keep : 1);
        base = realpath(prefix, NULL);
        free(prefix);
        if (base) break;
        cut = keep;
    }
    if (!base) {
        free(abs);
        return NULL;
    }
    mb_buf b = {0};
    mb_buf_puts(&b, strcmp(base, "/") ? base : "");
    free(base);
    char *rest = abs + cut, *save = NULL;
    for (char *c = strtok_r(rest, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, ".")) continue;
        if (!strcmp(c, "..")) {
            while (b.len && b.data[b.len - 1] != '/') b.len--;
            if (b.len) b.len--;
            continue;
        }
        mb_buf_putc(&b, '/');
        mb_buf_puts(&b, c);
    }
    if (!b.len) mb_buf_putc(&b, '/');
    mb_buf_putc(&b, '\0');
    free(abs);
    return b.data;
}

void mb__scope_of_root(const char *state_root, char out[MB__SCOPE_LEN + 1])
{
    char *real = mb__resolve_partly(state_root);
    const char *p = real ? real : state_root;
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') n--;
    uint64_t h = mb_hash_bytes(p, n);
    snprintf(out, MB__SCOPE_LEN + 1, "%016" PRIx64, h);
    free(real);
}

void mb__sb_name(const char *state_dir, const char *id, char out[MB__NAME_MAX])
{
    size_t n = strlen(state_dir);
    while (n > 1 && state_dir[n - 1] == '/') n--;
    char *dir = mb_strndup(state_dir, n);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) *slash = '\0';
    else if (slash) slash[1] = '\0';
    char scope[MB__SCOPE_LEN + 1];
    mb__scope_of_root(dir, scope);
    snprintf(out, MB__NAME_MAX, "%s.%s", scope, id);
    free(dir);
}

/* ------------------------------------------------------------- probing */

static int has_word(const char *list, const char *word, char sep)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, sep);
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, word, n)) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static void add_hier(mb__cg_layout *l, const char *path, int version, unsigned ctrls)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->h[i].path, path)) {
            l->h[i].ctrls |= ctrls;
            return;
        }
    if (l->n == MB__CG_MAX_HIER) return;
    mb__cg_hier *h = &l->h[l->n++];
    snprintf(h->path, sizeof h->path, "%s", path);
    h->version = version;
    h->ctrls = ctrls;
}

int mb__cg_layout_parse(const char *mountinfo,
                        int (*read_ctrl)(void *ctx, const char *mnt, char *out, size_t cap),
                        void *ctx, mb__cg_layout *l, mb_err *err)
{
    memset(l, 0, sizeof *l);
    char v1[4][256] = {{0}}; /* memory, pids, cpu, cpuacct */
    static const char *const names[4] = {"memory", "pids", "cpu", "cpuacct"};
    char v2[256] = "";
    for (const char *line = mountinfo; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char buf[2048];
        snprintf(buf, sizeof buf, "%.*s", (int)len, line);
        line = eol ? eol + 1 : NULL;
        /* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
        char *sep = strstr(buf, " - ");
        if (!sep) continue;
        char mnt[256], fstype[64], source[256], super[512] = "";
        if (sscanf(buf, "%*s %*s %*s %*s %255s", mnt) != 1) continue;
        if (sscanf(sep + 3, "%63s %255s %511s", fstype, source, super) < 2) continue;
        if (!strcmp(fstype, "cgroup")) {
            for (int i = 0; i < 4; i++)
                if (!v1[i][0] && has_word(super, names[i], ','))
                    snprintf(v1[i], sizeof v1[i], "%s", mnt);
        } else if (!strcmp(fstype, "cgroup2") && !v2[0]) {
            snprintf(v2, sizeof v2, "%s", mnt);
        }
    }
    char v2ctrl[512] = "";
    if (v2[0] && read_ctrl(ctx, v2, v2ctrl, sizeof v2ctrl) == 0) {
        char *nl = strchr(v2ctrl, '\n');
        if (nl) *nl = '\0';
    }
    static const unsigned bits[4] = {MB__CG_MEMORY, MB__CG_PIDS, MB__CG_CPU, MB__CG_CPUACCT};
    int used_v1 = 0, used_v2 = 0;
    for (int i = 0; i < 4; i++) {
        /* v2 has no cpuacct: its cpu.stat (present in every cgroup) counts. */
        int in_v2 = v2[0] && (bits[i] == MB__CG_CPUACCT ? (l->ctrls & MB__CG_CPU) && !v1[3][0] &&
                                                               has_word(v2ctrl, "cpu", ' ')
                                                         : has_word(v2ctrl, names[i], ' '));
        if (v1[i][0]) {
            add_hier(l, v1[i], 1, bits[i]);
            used_v1 = 1;
        } else if (in_v2) {
            add_hier(l, v2, 2, bits[i]);
            used_v2 = 1;
        } else {
            continue;
        }
        l->ctrls |= bits[i];
    }
    l->mode = used_v1 && used_v2 ? "hybrid" : used_v2 ? "v2" : "v1";
    if (!(l->ctrls & MB__CG_MEMORY) || !(l->ctrls & MB__CG_PIDS))
        return mb_err_set(err, MB_EIO,
                          "this host has no %s cgroup controller available (mount the v1 "
                          "hierarchy under /sys/fs/cgroup, or enable it in the v2 root's "
                          "cgroup.subtree_control)",
                          !(l->ctrls & MB__CG_MEMORY) ? "memory" : "pids");
    return 0;
}

static int read_ctrl_file(void *ctx, const char *mnt, char *out, size_t cap)
{
    char *p = mb_asprintf("%s/cgroup.controllers", mnt);
    char *data = NULL;
    int rc = mb_read_file(p, 4096, &data, NULL, NULL);
    free(p);
    if (rc) return rc;
    snprintf(out, cap, "%s", data);
    free(data);
    return 0;
}

static void probe(void)
{
    char *text = NULL;
    if (mb_read_file("/proc/self/mountinfo", 64u << 20, &text, NULL, &layout_err) != 0) {
        layout_rc = MB_EIO;
        return;
    }
    layout_rc = mb__cg_layout_parse(text, read_ctrl_file, NULL, &layout, &layout_err);
    free(text);
}

int mb__cg_layout_get(const mb__cg_layout **out, mb_err *err)
{
    pthread_once(&layout_once, probe);
    if (layout_rc) {
        if (err) *err = layout_err;
        return layout_rc;
    }
    *out = &layout;
    return 0;
}

int mb_sandbox_cgroup_mode(const char **mode, mb_err *err)
{
    const mb__cg_layout *l;
    int rc = mb__cg_layout_get(&l, err);
    if (rc) return rc;
    *mode = l->mode;
    return 0;
}

/* ------------------------------------------------------------- helpers */

static int write_file(const char *dir, const char *name, const char *value, mb_err *err)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return mb_err_sys(err, errno, "cannot open %s", path);
    size_t len = strlen(value);
    ssize_t n = write(fd, value, len);
    int e = errno;
    close(fd);
    if (n != (ssize_t)len) return mb_err_sys(err, n < 0 ? e : EIO, "cannot write '%s' to %s", value, path);
    return 0;
}

/* Reads a small file; returns 0 and the text, or -errno. */
static int read_small(const char *dir, const char *name, char *out, size_t cap)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t n = read(fd, out, cap - 1);
    int e = errno;
    close(fd);
    if (n < 0) return -e;
    out[n] = '\0';
    return 0;
}

static uint64_t read_u64(const char *dir, const char *name)
{
    char buf[64];
    if (read_small(dir, name, buf, sizeof buf)) return 0;
    if (!strncmp(buf, "max", 3)) return UINT64_MAX;
    return strtoull(buf, NULL, 10);
}

/* Value of "key N" in a flat keyed file (memory.events, cpu.stat, oom_control). */
static uint64_t read_key(const char *dir, const char *name, const char *key)
{
    char buf[4096];
    if (read_small(dir, name, buf, sizeof buf)) return 0;
    size_t kl = strlen(key);
    for (char *p = buf; p && *p;) {
        if (!strncmp(p, key, kl) && p[kl] == ' ') return strtoull(p + kl + 1, NULL, 10);
        p = strchr(p, '\n');
        if (p) p++;
    }
    return 0;
}

static void cg_dir(const mb__cg_hier *h, const char *name, char *out, size_t cap)
{
    if (name) snprintf(out, cap, "%s/%s/%s", h->path, MB__CG_PARENT, name);
    else snprintf(out, cap, "%s/%s", h->path, MB__CG_PARENT);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* v2: makes sure `dir` hands our controllers to its children. */
static int v2_delegate(const char *dir, unsigned ctrls, mb_err *err)
{
    char have[512];
    if (read_small(dir, "cgroup.subtree_control", have, sizeof have) != 0) have[0] = '\0';
    char *nl = strchr(have, '\n');
    if (nl) *nl = '\0';
    char want[128] = "";
    if ((ctrls & MB__CG_MEMORY) && !has_word(have, "memory", ' ')) strcat(want, "+memory ");
    if ((ctrls & MB__CG_PIDS) && !has_word(have, "pids", ' ')) strcat(want, "+pids ");
    if ((ctrls & MB__CG_CPU) && !has_word(have, "cpu", ' ')) strcat(want, "+cpu ");
    if (!want[0]) return 0;
    want[strlen(want) - 1] = '\0';
    mb_err e2;
    int rc = write_file(dir, "cgroup.subtree_control", want, &e2);
    if (rc)
        mb_err_set(err, MB_EIO,
                   "cannot enable '%s' in %s/cgroup.subtree_control (on a v2 host the "
                   "daemon needs a delegated subtree): %s",
                   want, dir, e2.msg);
    return rc;
}

/* ------------------------------------------------------------------ API */

int mb__cg_create(const char *name, const mb_sandbox_limits *lim, mb_err *err)
{
    const mb__cg_layout *l;
    int rc = mb__cg_layout_get(&l, err);
    if (rc) return rc;
    return mb__cg_create_in(l, name, lim, err);
}

int mb__cg_create_in(const mb__cg_layout *l, const char *name, const mb_sandbox_limits *lim,
                     mb_err *err)
{
    int rc;
    char dir[512], val[64];
    for (int i = 0; i < l->n; i++) {
        const mb__cg_hier *h = &l->h[i];
        cg_dir(h, NULL, dir, sizeof dir);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return mb_err_sys(err, errno, "cannot create cgroup %s", dir);
        if (h->version == 2) {
            if ((rc = v2_delegate(h->path, h->ctrls, err))) return rc;
            if ((rc = v2_delegate(dir, h->ctrls, err))) return rc;
        }
        cg_dir(h, name, dir, sizeof dir);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return mb_err_sys(err, errno, "cannot create cgroup %s", dir);
    }
    uint64_t mem = lim->memory_bytes + lim->disk_bytes;
    for (int i = 0; i < l->n; i++) {
        const mb__cg_hier *h = &l->h[i];
        cg_dir(h, name, dir, sizeof dir);
        if (h->ctrls & MB__CG_MEMORY) {
            snprintf(val, sizeof val, "%" PRIu64, mem);
            if (h->version == 1) {
                if ((rc = write_file(dir, "memory.limit_in_bytes", val, err))) return rc;
                char probe_path[600];
                snprintf(probe_path, sizeof probe_path, "%s/memory.memsw.limit_in_bytes", dir);
                if (access(probe_path, F_OK) == 0 &&
                    (rc = write_file(dir, "memory.memsw.limit_in_bytes", val, err)))
                    return rc;
            } else {
                if ((rc = write_file(dir, "memory.max", val, err))) return rc;
                char probe_path[600];
                snprintf(probe_path, sizeof probe_path, "%s/memory.swap.max", dir);
                if (access(probe_path, F_OK) == 0 &&
                    (rc = write_file(dir, "memory.swap.max", "0", err)))
                    return rc;
            }
        }
        if (h->ctrls & MB__CG_PIDS) {
            snprintf(val, sizeof val, "%u", lim->pids_max);
            if ((rc = write_file(dir, "pids.max", val, err))) return rc;
        }
        if (h->ctrls & MB__CG_CPU) {
            uint64_t quota = (uint64_t)lim->cpu_millis * CFS_PERIOD_US / 1000;
            if (quota < 1000) quota = 1000; /* the kernel's minimum */
            if (h->version == 1) {
                snprintf(val, sizeof val, "%d", CFS_PERIOD_US);
                if ((rc = write_file(dir, "cpu.cfs_period_us", val, err))) return rc;
                snprintf(val, sizeof val, "%" PRIu64, quota);
                if ((rc = write_file(dir, "cpu.cfs_quota_us", val, err))) return rc;
            } else {
                snprintf(val, sizeof val, "%" PRIu64 " %d", quota, CFS_PERIOD_US);
                if ((rc = write_file(dir, "cpu.max", val, err))) return rc;
            }
        }
    }
    return 0;
}

int mb__cg_open_self_join(const char *name, int fds[MB__CG_MAX_HIER], int *n, mb_err *err)
{
    *n = 0;
    for (int i = 0; i < MB__CG_MAX_HIER; i++) fds[i] = -1;
    const mb__cg_layout *l;
    int rc = mb__cg_layout_get(&l, err);
    if (rc) return rc;
    char dir[512], path[600];
    for (int i = 0; i < l->n; i++) {
        if (l->h[i].version != 1) continue;
        cg_dir(&l->h[i], name, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/tasks", dir);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            rc = mb_err_sys(err, errno, "cannot open %s", path);
            for (int k = 0; k < *n; k++) close(fds[k]);
            *n = 0;
            return rc;
        }
        fds[(*n)++] = fd;
    }
    return 0;
}

int mb__cg_attach(const char *name, pid_t pid, int all, mb_err *err)
{
    const mb__cg_layout *l;
    int rc = mb__cg_layout_get(&l, err);
    if (rc) return rc;
    char dir[512], val[32];
    snprintf(val, sizeof val, "%d", (int)pid);
    for (int i = 0; i < l->n; i++) {
        if (!all && l->h[i].version == 1) continue;
        cg_dir(&l->h[i], name, dir, sizeof dir);
        if ((rc = write_file(dir, "cgroup.procs", val, err))) return rc;
    }
    return 0;
}

/* Kills every pid listed in dir/cgroup.procs; returns how many were listed. */
static int kill_listed(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    int n = 0;
    long pid;
    while (fscanf(f, "%ld", &pid) == 1) {
        if (pid > 0) kill((pid_t)pid, SIGKILL);
        n++;
    }
    fclose(f);
    return n;
}

int mb__cg_kill(const char *name, int timeout_ms, mb_err *err)
{
    const mb__cg_layout *l;
    int rc = mb__cg_layout_get(&l, err);
    if (rc) return rc;
    char dir[512];
    int64_t deadline = mb_mono_ms() + timeout_ms;
    for (int round = 0;; round++) {
        int left = 0;
        for (int i = 0; i < l->n; i++) {
            cg_dir(&l->h[i], name, dir, sizeof dir);
            if (l->h[i].version == 2 && round == 0) {
                char p[600];
                snprintf(p, sizeof p, "%s/cgroup.kill", dir);
                if (access(p, F_OK) == 0) (void)write_file(dir, "cgroup.kill", "1", NULL);
            }
            left += kill_listed(dir);
        }
        if (!left) return 0;
        if (mb_mono_ms() >= deadline)
            return mb_err_set(err, MB_ETIMEOUT,
                              "%d processes of sandbox %s survived SIGKILL for %d ms", left, name,
                              timeout_ms);
        sleep_ms(round < 10 ? 1 : 10);
    }
}

int mb__cg_remove(const char *name, mb_err *err)
{
    const mb__cg_layout *l;
    int rc = mb__cg_layout_get(&l, err);
    if (rc) return rc;
    char dir[512];
    for (int i = 0; i < l->n; i++) {
        cg_dir(&l->h[i], name, dir, sizeof dir);
        int64_t deadline = mb_mono_ms() + 5000;
        for (int round = 0;; round++) {
            if (rmdir(dir) == 0 || errno == ENOENT) break;
            if (errno != EBUSY || mb_mono_ms() >= deadline) {
                int e = errno;
                rc = mb_err_sys(err, e, "cannot remove cgroup %s", dir);
                break;
            }
            kill_listed(dir);
            sleep_ms(round < 10 ? 1 : 10);
        }
    }
    return rc;
}

int mb__cg_stats(const char *name, mb_sandbox_stats *st, mb_err *err)
{
    const mb__cg_layout *l;
    int rc = mb__cg_layout_get(&l, err);
    if (rc) return rc;
    return mb__cg_stats_in(l, name, st, err);
}

int mb__cg_stats_in(const mb__cg_layout *l, const char *name, mb_sandbox_stats *st, mb_err *err)
{
    char dir[512];
    for (int i = 0; i < l->n; i++) {
        const mb__cg_hier *h = &l->h[i];
        cg_dir(h, name, dir, sizeof dir);
        if (access(dir, F_OK) != 0) return mb_err_set(err, MB_ENOTFOUND, "cgroup %s is gone", dir);
        if (h->ctrls & MB__CG_MEMORY) {
            if (h->version == 1) {
                st->memory_bytes = read_u64(dir, "memory.usage_in_bytes");
                st->memory_peak_bytes = read_u64(dir, "memory.max_usage_in_bytes");
                st->memory_limit_bytes = read_u64(dir, "memory.limit_in_bytes");
                st->oom_kills = read_key(dir, "memory.oom_control", "oom_kill");
            } else {
                st->memory_bytes = read_u64(dir, "memory.current");
                st->memory_peak_bytes = read_u64(dir, "memory.peak");
                st->memory_limit_bytes = read_u64(dir, "memory.max");
                st->oom_kills = read_key(dir, "memory.events", "oom_kill");
            }
        }
        if (h->ctrls & MB__CG_PIDS) {
            st->pids = (uint32_t)read_u64(dir, "pids.current");
            uint64_t m = read_u64(dir, "pids.max");
            st->pids_max = m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
            st->pids_denied = read_key(dir, "pids.events", "max");
        }
        if (h->ctrls & MB__CG_CPUACCT) {
            if (h->version == 1) st->cpu_usage_ns = read_u64(dir, "cpuacct.usage");
            else st->cpu_usage_ns = read_key(dir, "cpu.stat", "usage_usec") * 1000;
        }
    }
    return 0;
}

int mb__cg_list(void (*fn)(void *ctx, const char *name), void *ctx, mb_err *err)
{
    const mb__cg_layout *l;
    int rc = mb__cg_layout_get(&l, err);
    if (rc) return rc;
    char **seen = NULL;
    size_t nseen = 0;
    char dir[512];
    for (int i = 0; i < l->n; i++) {
        cg_dir(&l->h[i], NULL, dir, sizeof dir);
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_type != DT_DIR || de->d_name[0] == '.') continue;
            int dup = 0;
            for (size_t k = 0; k < nseen && !dup; k++) dup = !strcmp(seen[k], de->d_name);
            if (dup) continue;
            seen = mb_realloc(seen, (nseen + 1) * sizeof *seen);
            seen[nseen++] = mb_strdup(de->d_name);
        }
        closedir(d);
    }
    for (size_t k = 0; k < nseen; k++) {
        fn(ctx, seen[k]);
        free(seen[k]);
    }
    free(seen);
    return 0;
}
