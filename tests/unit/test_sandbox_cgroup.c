/*
 * test_sandbox_cgroup.c - cgroup layout detection for v1, hybrid and v2 hosts
 * (from synthetic /proc/self/mountinfo text), and the files a v1 and a v2
 * sandbox cgroup get (written into a fake hierarchy in a scratch directory).
 * This is how the v2 path is tested on a host that only has v1 controllers;
 * tests/unit/test_sandbox_lifecycle.c checks the real hierarchy when the host
 * is v2.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

/* This project's test machine: v1 controllers, a v2 mount holding none. */
static const char *const hybrid_v1 =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

/* Debian 10 style: cpu and cpuacct co-mounted. */
static const char *const v1_comounted =
    "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
    "31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
    "32 25 0:28 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids\n";

/* Debian 12 / systemd: the unified hierarchy only. */
static const char *const pure_v2 =
    "25 22 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

/* Memory in v1, pids only in v2. */
static const char *const mixed =
    "31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    "41 25 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

static const char *v2_controllers;

static int fake_ctrl(void *ctx, const char *mnt, char *out, size_t cap)
{
    snprintf(out, cap, "%s\n", v2_controllers);
    return 0;
}

static const mb__cg_hier *find(const mb__cg_layout *l, const char *path)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->h[i].path, path)) return &l->h[i];
    return NULL;
}

static void layout_hybrid_uses_v1(void **state)
{
    mb__cg_layout l;
    v2_controllers = "hugetlb";
    assert_int_equal(mb__cg_layout_parse(hybrid_v1, fake_ctrl, NULL, &l, NULL), 0);
    assert_string_equal(l.mode, "v1");
    assert_int_equal(l.n, 4);
    assert_int_equal(find(&l, "/sys/fs/cgroup/memory")->ctrls, MB__CG_MEMORY);
    assert_int_equal(find(&l, "/sys/fs/cgroup/pids")->ctrls, MB__CG_PIDS);
    assert_int_equal(find(&l, "/sys/fs/cgroup/cpu")->ctrls, MB__CG_CPU);
    assert_int_equal(find(&l, "/sys/fs/cgroup/cpuacct")->ctrls, MB__CG_CPUACCT);
    assert_null(find(&l, "/sys/fs/cgroup/unified"));
}

static void layout_v1_comounted(void **state)
{
    mb__cg_layout l;
    assert_int_equal(mb__cg_layout_parse(v1_comounted, fake_ctrl, NULL, &l, NULL), 0);
    assert_string_equal(l.mode, "v1");
    assert_int_equal(l.n, 3);
    const mb__cg_hier *h = find(&l, "/sys/fs/cgroup/cpu,cpuacct");
    assert_non_null(h);
    assert_int_equal(h->ctrls, MB__CG_CPU | MB__CG_CPUACCT);
    assert_int_equal(h->version, 1);
}

static void layout_pure_v2(void **state)
{
    mb__cg_layout l;
    v2_controllers = "cpuset cpu io memory hugetlb pids rdma misc";
    assert_int_equal(mb__cg_layout_parse(pure_v2, fake_ctrl, NULL, &l, NULL), 0);
    assert_string_equal(l.mode, "v2");
    assert_int_equal(l.n, 1);
    assert_string_equal(l.h[0].path, "/sys/fs/cgroup");
    assert_int_equal(l.h[0].version, 2);
    assert_int_equal(l.h[0].ctrls, MB__CG_MEMORY | MB__CG_PIDS | MB__CG_CPU | MB__CG_CPUACCT);
}

static void layout_mixed_is_hybrid(void **state)
{
    mb__cg_layout l;
    v2_controllers = "pids";
    assert_int_equal(mb__cg_layout_parse(mixed, fake_ctrl, NULL, &l, NULL), 0);
    assert_string_equal(l.mode, "hybrid");
    assert_int_equal(find(&l, "/sys/fs/cgroup/memory")->version, 1);
    assert_int_equal(find(&l, "/sys/fs/cgroup/unified")->ctrls, MB__CG_PIDS);
    assert_int_equal(find(&l, "/sys/fs/cgroup/unified")->version, 2);
}

static void layout_without_memory_is_an_error(void **state)
{
    mb__cg_layout l;
    mb_err err = {0};
    v2_controllers = "cpu pids";
    assert_int_equal(mb__cg_layout_parse(pure_v2, fake_ctrl, NULL, &l, &err), MB_EIO);
    assert_non_null(strstr(err.msg, "no memory cgroup controller"));
}

/* ------------------------------------------------- files in a fake tree */

static char tree[256];

static void touch(const char *rel, const char *content)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tree, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static char *slurp(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tree, rel);
    char *data = NULL;
    assert_int_equal(mb_read_file(path, 4096, &data, NULL, NULL), 0);
    return data;
}

static void assert_file(const char *rel, const char *want)
{
    char *got = slurp(rel);
    assert_string_equal(got, want);
    free(got);
}

static void make_tree(const char *name, const char *const *files)
{
    snprintf(tree, sizeof tree, "/tmp/mcpbox-cgtree-XXXXXX");
    assert_non_null(mkdtemp(tree));
    char path[512];
    snprintf(path, sizeof path, "%s/mcpbox", tree);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/mcpbox/%s", tree, name);
    assert_int_equal(mkdir(path, 0755), 0);
    for (const char *const *f = files; *f; f++) {
        snprintf(path, sizeof path, "mcpbox/%s/%s", name, *f);
        touch(path, "");
    }
}

static void v2_cgroup_files(void **state)
{
    const char *name = "0123456789abcdef.00000000-0000-4000-8000-000000000000";
    const char *files[] = {"memory.max", "memory.swap.max", "pids.max", "cpu.max",
                           "memory.current", "memory.peak", "memory.events", "pids.current",
                           "cpu.stat", NULL};
    make_tree(name, files);
    touch("cgroup.subtree_control", "cpuset io\n");
    touch("mcpbox/cgroup.subtree_control", "");
    mb__cg_layout l = {.n = 1, .mode = "v2"};
    snprintf(l.h[0].path, sizeof l.h[0].path, "%s", tree);
    l.h[0].version = 2;
    l.h[0].ctrls = l.ctrls = MB__CG_MEMORY | MB__CG_PIDS | MB__CG_CPU | MB__CG_CPUACCT;
    mb_sandbox_limits lim = {.memory_bytes = 256u << 20, .disk_bytes = 64u << 20,
                             .pids_max = 100, .cpu_millis = 1500};
    mb_err err = {0};
    assert_int_equal(mb__cg_create_in(&l, name, &lim, &err), 0);
    char p[256];
    assert_file("cgroup.subtree_control", "+memory +pids +cpu");
    assert_file("mcpbox/cgroup.subtree_control", "+memory +pids +cpu");
    snprintf(p, sizeof p, "mcpbox/%s/memory.max", name);
    assert_file(p, "335544320"); /* memory + disk */
    snprintf(p, sizeof p, "mcpbox/%s/memory.swap.max", name);
    assert_file(p, "0");
    snprintf(p, sizeof p, "mcpbox/%s/pids.max", name);
    assert_file(p, "100");
    snprintf(p, sizeof p, "mcpbox/%s/cpu.max", name);
    assert_file(p, "150000 100000");

    /* Stats read the v2 names. */
    snprintf(p, sizeof p, "mcpbox/%s/memory.current", name);
    touch(p, "1234\n");
    snprintf(p, sizeof p, "mcpbox/%s/memory.events", name);
    touch(p, "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n");
    snprintf(p, sizeof p, "mcpbox/%s/pids.current", name);
    touch(p, "7\n");
    snprintf(p, sizeof p, "mcpbox/%s/cpu.stat", name);
    touch(p, "usage_usec 5000\nuser_usec 4000\n");
    snprintf(p, sizeof p, "mcpbox/%s/memory.max", name);
    touch(p, "max\n");
    mb_sandbox_stats st = {0};
    assert_int_equal(mb__cg_stats_in(&l, name, &st, &err), 0);
    assert_int_equal(st.memory_bytes, 1234);
    assert_int_equal(st.oom_kills, 2);
    assert_int_equal(st.pids, 7);
    assert_int_equal(st.cpu_usage_ns, 5000000);
    assert_true(st.memory_limit_bytes == UINT64_MAX);
    assert_int_equal(mb_rm_rf(tree, NULL), 0);
}

static void v1_cgroup_files(void **state)
{
    const char *name = "0123456789abcdef.00000000-0000-4000-8000-000000000001";
    const char *files[] = {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "pids.max",
                           "cpu.cfs_period_us", "cpu.cfs_quota_us", NULL};
    make_tree(name, files);
    mb__cg_layout l = {.n = 1, .mode = "v1"};
    snprintf(l.h[0].path, sizeof l.h[0].path, "%s", tree);
    l.h[0].version = 1;
    l.h[0].ctrls = l.ctrls = MB__CG_MEMORY | MB__CG_PIDS | MB__CG_CPU;
    mb_sandbox_limits lim = {.memory_bytes = 100, .disk_bytes = 20, .pids_max = 9,
                             .cpu_millis = 5};
    mb_err err = {0};
    assert_int_equal(mb__cg_create_in(&l, name, &lim, &err), 0);
    char p[256];
    snprintf(p, sizeof p, "mcpbox/%s/memory.limit_in_bytes", name);
    assert_file(p, "120");
    snprintf(p, sizeof p, "mcpbox/%s/memory.memsw.limit_in_bytes", name);
    assert_file(p, "120");
    snprintf(p, sizeof p, "mcpbox/%s/pids.max", name);
    assert_file(p, "9");
    snprintf(p, sizeof p, "mcpbox/%s/cpu.cfs_quota_us", name);
    assert_file(p, "1000"); /* clamped to the kernel's minimum */
    assert_int_equal(mb_rm_rf(tree, NULL), 0);
}

static void limits_defaults(void **state)
{
    mb_sandbox_limits l;
    mb__limits_resolve(NULL, &l);
    assert_int_equal(l.memory_bytes, MB_SANDBOX_DEFAULT_MEMORY);
    assert_int_equal(l.pids_max, MB_SANDBOX_DEFAULT_PIDS);
    assert_int_equal(l.cpu_millis, MB_SANDBOX_DEFAULT_CPU_MILLIS);
    assert_int_equal(l.disk_bytes, MB_SANDBOX_DEFAULT_DISK);
    mb_sandbox_limits in = {.pids_max = 7};
    mb__limits_resolve(&in, &l);
    assert_int_equal(l.pids_max, 7);
    assert_int_equal(l.memory_bytes, MB_SANDBOX_DEFAULT_MEMORY);
}

static void names_are_scoped_by_state_root(void **state)
{
    char a[MB__NAME_MAX], b[MB__NAME_MAX], c[MB__NAME_MAX], scope[MB__SCOPE_LEN + 1];
    const char *id = "00000000-0000-4000-8000-000000000000";
    mb__sb_name("/nonexistent-x/state/00000000-0000-4000-8000-000000000000", id, a);
    mb__sb_name("/nonexistent-x/state/00000000-0000-4000-8000-000000000000/", id, b);
    mb__sb_name("/nonexistent-y/state/00000000-0000-4000-8000-000000000000", id, c);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    mb__scope_of_root("/nonexistent-x/state", scope);
    assert_memory_equal(a, scope, MB__SCOPE_LEN);
    assert_int_equal(a[MB__SCOPE_LEN], '.');
    assert_string_equal(a + MB__SCOPE_LEN + 1, id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout_hybrid_uses_v1),
        cmocka_unit_test(layout_v1_comounted),
        cmocka_unit_test(layout_pure_v2),
        cmocka_unit_test(layout_mixed_is_hybrid),
        cmocka_unit_test(layout_without_memory_is_an_error),
        cmocka_unit_test(v2_cgroup_files),
        cmocka_unit_test(v1_cgroup_files),
        cmocka_unit_test(limits_defaults),
        cmocka_unit_test(names_are_scoped_by_state_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
