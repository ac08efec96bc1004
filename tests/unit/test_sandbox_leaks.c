/*
 * test_sandbox_leaks.c - N acquire -> exec -> release cycles leave nothing
 * behind. Counted before and after: processes (our descendants and anything
 * in this run's cgroups), network namespaces (distinct /proc/.../ns/net of
 * those processes and of all processes outside other runs' sandboxes), our
 * mounts (mountinfo lines naming this run's directories or workspaces),
 * cgroup directories of this run's scope, descriptors of this process, and
 * the workspace and state directories.
 *
 * N is $MCPBOX_SANDBOX_CYCLES (default 100; `make soak` runs 1000 through
 * tests/integration/test_sandbox_soak.py). Each cycle also starts a
 * long-lived process with spawn and leaves it running for release to kill.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sandbox_testlib.h"

static sbt_env env;

typedef struct counts {
    int procs;    /* our children, the zygote's (inits, zombies included) + tasks in this run's cgroups */
    int netns;    /* distinct net namespaces of processes not in other runs' sandboxes */
    int mounts;   /* mountinfo lines naming this run */
    int cgroups;  /* cgroup dirs of this run, all hierarchies */
    int fds;      /* our open descriptors */
    int dirs;     /* entries in the scratch dir and the state root */
} counts;

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* The memory-cgroup path of a process, or "" (v1 line "N:memory:/path"). */
static void proc_cgroup(const char *pid, char *out, size_t cap)
{
    char path[300], line[512];
    snprintf(path, sizeof path, "/proc/%s/cgroup", pid);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        if (!c) continue;
        char *d = strchr(c + 1, ':');
        if (!d) continue;
        *d = '\0';
        if (!strcmp(c + 1, "memory") || !strcmp(c + 1, "")) {
            snprintf(out, cap, "%s", d + 1);
            char *nl = strchr(out, '\n');
            if (nl) *nl = '\0';
            if (!strcmp(c + 1, "memory")) break;
        }
    }
    fclose(f);
}

static int ppid_of(const char *pid)
{
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    int ppid = -1;
    if (rp) sscanf(rp + 1, " %*c %d", &ppid);
    return ppid;
}

static void take(counts *c, const char *scope_hint)
{
    memset(c, 0, sizeof *c);
    int zpid = (int)mb_zygote_pid(env.zygote);
    unsigned long ns[4096];
    int nns = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        char cg[512];
        proc_cgroup(de->d_name, cg, sizeof cg);
        int in_mcpbox = strstr(cg, "/mcpbox/") != NULL;
        int ours = in_mcpbox && strstr(cg, scope_hint) != NULL;
        int ppid = ppid_of(de->d_name);
        if (ours || ppid == (int)getpid() || (zpid > 0 && ppid == zpid)) c->procs++;
        if (in_mcpbox && !ours) continue; /* another run's sandbox */
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/ns/net", de->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        int seen = 0;
        for (int i = 0; i < nns && !seen; i++) seen = ns[i] == (unsigned long)st.st_ino;
        if (!seen && nns < 4096) ns[nns++] = (unsigned long)st.st_ino;
    }
    closedir(d);
    c->netns = nns;

    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[4096];
    while (fgets(line, sizeof line, f))
        if (strstr(line, env.root) || strstr(line, scope_hint)) c->mounts++;
    fclose(f);

    const char *hier[] = {"memory", "pids", "cpu", "cpuacct", NULL};
    for (int i = 0; hier[i]; i++) {
        char pattern[256];
        snprintf(pattern, sizeof pattern, "/sys/fs/cgroup/%s/mcpbox/%s*", hier[i], scope_hint);
        glob_t g;
        if (glob(pattern, 0, NULL, &g) == 0) c->cgroups += (int)g.gl_pathc;
        globfree(&g);
    }
    char pattern[256];
    snprintf(pattern, sizeof pattern, "/sys/fs/cgroup/mcpbox/%s*", scope_hint);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0) c->cgroups += (int)g.gl_pathc;
    globfree(&g);

    c->fds = count_dir("/proc/self/fd");
    c->dirs = count_dir(env.root) + count_dir(env.state_root);
}

static void print_counts(const char *what, const counts *c)
{
    fprintf(stderr, "%s: procs %d netns %d mounts %d cgroups %d fds %d dirs %d\n", what, c->procs,
            c->netns, c->mounts, c->cgroups, c->fds, c->dirs);
}

static int setup(void **state)
{
    if (!sbt_is_root()) return 0;
    return sbt_env_init(&env, "leaks");
}

static int teardown(void **state)
{
    if (!sbt_is_root()) return 0;
    sbt_env_done(&env);
    return 0;
}

static void cycles_leave_nothing(void **state)
{
    if (!sbt_is_root()) skip();
    const char *s = getenv("MCPBOX_SANDBOX_CYCLES");
    int n = s ? atoi(s) : 100;
    if (n < 1) n = 1;

    /* The scope of this run's names: from a throw-away name computation. */
    sbt_box probe;
    sbt_box_init(&probe, &env, "probe", NULL);
    char scope[40];
    {
        /* cgroup names are "<scope>.<id>": create one sandbox to learn it. */
        mb_err err;
        assert_int_equal(mb_sandbox_create(&probe.opts, &probe.sb, &err), 0);
        char pattern[256];
        snprintf(pattern, sizeof pattern, "/sys/fs/cgroup/memory/mcpbox/*.%s", probe.id);
        glob_t g;
        assert_int_equal(glob(pattern, 0, NULL, &g), 0);
        const char *base = strrchr(g.gl_pathv[0], '/') + 1;
        snprintf(scope, sizeof scope, "%.16s", base);
        globfree(&g);
        assert_int_equal(mb_sandbox_destroy(probe.sb, &err), 0);
    }

    counts before, after;
    pid_t zygote_before = mb_zygote_pid(env.zygote); /* it must not have died meanwhile */
    take(&before, scope);
    print_counts("before", &before);
    int64_t t0 = mb_mono_ms();
    for (int i = 0; i < n; i++) {
        sbt_box b;
        if (sbt_box_create(&b, &env, "cycle", NULL)) fail_msg("create failed in cycle %d", i);
        mb_exec_result r;
        assert_int_equal(sbt_sh(b.sb, "echo $$ > /data/pid; cat /data/pid >/dev/null; echo ok", 10000, &r), 0);
        assert_string_equal(r.out.data, "ok\n");
        mb_exec_result_free(&r);
        const char *argv[] = {"sleep", "1000", NULL};
        mb_spawn_spec spec = {.argv = argv};
        mb_child c;
        mb_err err;
        assert_int_equal(mb_sandbox_spawn(b.sb, &spec, &c, &err), 0);
        if (mb_sandbox_destroy(b.sb, &err)) fail_msg("destroy failed in cycle %d: %s", i, err.msg);
        mb_child_close(&c);
    }
    int64_t dt = mb_mono_ms() - t0;
    fprintf(stderr, "%d cycles in %lld ms (%.1f ms each)\n", n, (long long)dt, (double)dt / n);

    /* Processes and namespaces go away asynchronously after SIGKILL; give
     * them a moment before calling anything a leak. */
    int64_t deadline = mb_mono_ms() + 5000;
    for (;;) {
        take(&after, scope);
        if ((after.procs <= before.procs && after.netns <= before.netns) ||
            mb_mono_ms() > deadline)
            break;
        usleep(100000);
    }
    print_counts("after", &after);
    /* no unreaped children of ours (the zygote's are counted in procs) */
    assert_true(waitpid(-1, NULL, WNOHANG) <= 0);
    assert_int_equal(mb_zygote_pid(env.zygote), zygote_before);
    assert_true(after.procs <= before.procs);
    assert_true(after.netns <= before.netns);
    assert_int_equal(after.mounts, before.mounts);
    assert_int_equal(after.cgroups, before.cgroups);
    assert_int_equal(after.fds, before.fds);
    assert_int_equal(after.dirs, before.dirs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cycles_leave_nothing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
