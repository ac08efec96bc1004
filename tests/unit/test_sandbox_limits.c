/*
 * test_sandbox_limits.c - bombs: a fork bomb stops at the pids limit, a
 * memory hog is OOM-killed inside, a disk fill gets ENOSPC, an output flood
 * is capped, a CPU hog is held to its quota; meanwhile a second sandbox keeps
 * answering `echo ok` within a bound (checked repeatedly during each bomb),
 * and the victim is usable again afterwards.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>

#include "sandbox_testlib.h"

#define PIDS_MAX 64
#define BYSTANDER_BOUND_MS 3000

static sbt_env env;
static sbt_box victim, bystander;

typedef struct bomb {
    const char *script; /* sh -c */
    int timeout_ms;
    size_t cap;
    mb_exec_result res;
    int rc;
    volatile int done;
} bomb;

static void *bomb_main(void *arg)
{
    bomb *b = arg;
    const char *argv[] = {"/bin/sh", "-c", b->script, NULL};
    mb_exec_spec spec = {.argv = argv, .timeout_ms = b->timeout_ms, .output_cap = b->cap};
    mb_err err;
    b->rc = mb_sandbox_exec(victim.sb, &spec, &b->res, &err);
    __atomic_store_n(&b->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Runs the bomb in a thread while the bystander answers; returns how many
 * times the bystander answered and the slowest answer. */
static void run_bomb(bomb *b, int *answers, int64_t *slowest, uint32_t *max_pids)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, bomb_main, b), 0);
    *answers = 0;
    *slowest = 0;
    *max_pids = 0;
    while (!__atomic_load_n(&b->done, __ATOMIC_SEQ_CST)) {
        mb_sandbox_stats st;
        if (mb_sandbox_stats_get(victim.sb, &st, NULL) == 0 && st.pids > *max_pids)
            *max_pids = st.pids;
        int64_t t0 = mb_mono_ms();
        mb_exec_result r;
        assert_int_equal(sbt_sh(bystander.sb, "echo ok", 10000, &r), 0);
        int64_t dt = mb_mono_ms() - t0;
        assert_string_equal(r.out.data ? r.out.data : "", "ok\n");
        mb_exec_result_free(&r);
        if (dt > *slowest) *slowest = dt;
        (*answers)++;
        usleep(50000);
    }
    pthread_join(t, NULL);
}

static void victim_recovers(void)
{
    /* Within a few seconds the victim is back to its init and answers. */
    mb_exec_result r;
    int64_t deadline = mb_mono_ms() + 10000;
    for (;;) {
        /* While the bomb's leftovers are being killed the sandbox may still
         * be at its process limit: MB_EBUSY means "not yet". */
        int rc = sbt_sh(victim.sb, "echo alive", 10000, &r);
        if (rc != MB_EBUSY) assert_int_equal(rc, 0);
        int ok = !rc && r.out.data && !strcmp(r.out.data, "alive\n");
        mb_exec_result_free(&r);
        mb_sandbox_stats st;
        assert_int_equal(mb_sandbox_stats_get(victim.sb, &st, NULL), 0);
        if (ok && st.pids <= 2) break;
        if (mb_mono_ms() > deadline) fail_msg("the victim did not recover (%u tasks)", st.pids);
        usleep(100000);
    }
}

static int setup(void **state)
{
    if (!sbt_is_root()) return 0;
    if (sbt_env_init(&env, "limits")) return -1;
    mb_sandbox_limits lim = {.memory_bytes = 128u << 20, .disk_bytes = 32u << 20,
                             .pids_max = PIDS_MAX, .cpu_millis = 500};
    if (sbt_box_create(&victim, &env, "victim", &lim)) return -1;
    mb_sandbox_limits small = {.memory_bytes = 128u << 20, .disk_bytes = 16u << 20};
    return sbt_box_create(&bystander, &env, "bystander", &small);
}

static int teardown(void **state)
{
    if (!sbt_is_root()) return 0;
    mb_err err;
    if (victim.sb) mb_sandbox_destroy(victim.sb, &err);
    if (bystander.sb) mb_sandbox_destroy(bystander.sb, &err);
    sbt_env_done(&env);
    return 0;
}

static void check_bystander(int answers, int64_t slowest)
{
    if (answers < 1) fail_msg("the bystander was never asked during the bomb");
    if (slowest > BYSTANDER_BOUND_MS)
        fail_msg("the bystander took %lld ms to answer during the bomb",
                 (long long)slowest);
}

/* A counting fork loop: forking fails with EAGAIN once pids.max is reached. */
static void fork_bomb_stops_at_pids_limit(void **state)
{
    if (!sbt_is_root()) skip();
    bomb b = {.timeout_ms = 30000,
              .script = "exec python3 -c '\n"
                        "import os, time, errno\n"
                        "n = fails = 0\n"
                        "while fails < 20:\n"
                        "    try:\n"
                        "        pid = os.fork()\n"
                        "    except OSError as e:\n"
                        "        assert e.errno == errno.EAGAIN, e\n"
                        "        fails += 1\n"
                        "        time.sleep(0.02)\n"
                        "        continue\n"
                        "    if pid == 0:\n"
                        "        time.sleep(60)\n"
                        "        os._exit(0)\n"
                        "    n += 1\n"
                        "print(n, fails)\n"
                        "'"};
    int answers;
    int64_t slowest;
    uint32_t max_pids;
    run_bomb(&b, &answers, &slowest, &max_pids);
    assert_int_equal(b.rc, 0);
    assert_int_equal(b.res.exit_code, 0);
    int forked = -1, fails = -1;
    assert_int_equal(sscanf(b.res.out.data ? b.res.out.data : "", "%d %d", &forked, &fails), 2);
    /* init + shepherd + python take 3 of the 64. */
    assert_true(forked > 0 && forked <= PIDS_MAX - 3);
    assert_int_equal(fails, 20);
    assert_true(max_pids <= PIDS_MAX);
    mb_sandbox_stats st;
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &st, NULL), 0);
    assert_true(st.pids_denied >= 20);
    mb_exec_result_free(&b.res);
    check_bystander(answers, slowest);
    victim_recovers();
}

/* The classic exponential shell bomb: held by the pids limit until the
 * timeout, then the whole tree is killed. */
static void shell_bomb_is_killed_at_timeout(void **state)
{
    if (!sbt_is_root()) skip();
    mb_sandbox_stats before, after;
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &before, NULL), 0);
    /* Long enough for the bomb to reach the limit on a loaded machine. */
    bomb b = {.timeout_ms = 6000, .script = "b() { b | b & }; b; sleep 30"};
    int answers;
    int64_t slowest;
    uint32_t max_pids;
    run_bomb(&b, &answers, &slowest, &max_pids);
    assert_int_equal(b.rc, 0);
    assert_true(b.res.timed_out);
    assert_true(max_pids <= PIDS_MAX);
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &after, NULL), 0);
    assert_true(after.pids_denied > before.pids_denied); /* it hit the limit */
    mb_exec_result_free(&b.res);
    check_bystander(answers, slowest);
    victim_recovers();
}

static void memory_hog_is_oom_killed_inside(void **state)
{
    if (!sbt_is_root()) skip();
    mb_sandbox_stats before;
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &before, NULL), 0);
    assert_int_equal(before.memory_limit_bytes, (128u << 20) + (32u << 20));
    bomb b = {.timeout_ms = 60000,
              .script = "exec python3 -c 'x = bytearray(1 << 30); print(\"survived\")'"};
    int answers;
    int64_t slowest;
    uint32_t max_pids;
    run_bomb(&b, &answers, &slowest, &max_pids);
    assert_int_equal(b.rc, 0);
    assert_int_equal(b.res.term_signal, SIGKILL);
    assert_false(b.res.out.data && strstr(b.res.out.data, "survived"));
    mb_exec_result_free(&b.res);
    mb_sandbox_stats after;
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &after, NULL), 0);
    assert_true(after.oom_kills > before.oom_kills);
    check_bystander(answers, slowest);
    victim_recovers();
}

static void disk_fill_gets_enospc(void **state)
{
    if (!sbt_is_root()) skip();
    bomb b = {.timeout_ms = 60000,
              .script = "dd if=/dev/zero of=/data/fill bs=1M count=100 2>&1; "
                        "exec python3 -c '\n"
                        "import errno\n"
                        "try:\n"
                        "    open(\"/data/more\", \"wb\").write(b\"x\" * (1 << 20))\n"
                        "except OSError as e:\n"
                        "    print(\"errno\", e.errno == errno.ENOSPC)\n"
                        "'"};
    int answers;
    int64_t slowest;
    uint32_t max_pids;
    run_bomb(&b, &answers, &slowest, &max_pids);
    assert_int_equal(b.rc, 0);
    assert_non_null(b.res.out.data);
    assert_non_null(strstr(b.res.out.data, "No space left on device"));
    assert_non_null(strstr(b.res.out.data, "errno True"));
    mb_exec_result_free(&b.res);
    mb_sandbox_stats st;
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &st, NULL), 0);
    assert_true(st.disk_used_bytes >= (30u << 20));
    assert_int_equal(st.disk_limit_bytes, 32u << 20);
    check_bystander(answers, slowest);
    /* Files count too: a file-count bomb ends in ENOSPC as well. */
    mb_exec_result r;
    assert_int_equal(sbt_sh(victim.sb,
                            "rm -f /data/fill /data/more; exec python3 -c '\n"
                            "import os, errno\n"
                            "os.mkdir(\"/data/many\")\n"
                            "n = 0\n"
                            "try:\n"
                            "    while n < 1000000:\n"
                            "        open(\"/data/many/%d\" % n, \"w\").close()\n"
                            "        n += 1\n"
                            "except OSError as e:\n"
                            "    print(n, e.errno == errno.ENOSPC)\n"
                            "'; rm -rf /data/many",
                            60000, &r),
                     0);
    int n = 0;
    char flag[8] = "";
    assert_int_equal(sscanf(r.out.data ? r.out.data : "", "%d %7s", &n, flag), 2);
    assert_string_equal(flag, "True");
    assert_true(n > 1000 && n < 20000);
    mb_exec_result_free(&r);
    victim_recovers();
}

/* /tmp and /dev/shm are tmpfs charged to the same cgroup: filled together
 * with the workspace they end in ENOSPC, never in an OOM kill, and half of
 * memory_bytes is still there for processes. */
static void tmp_and_shm_fill_get_enospc(void **state)
{
    if (!sbt_is_root()) skip();
    mb_sandbox_stats before;
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &before, NULL), 0);
    bomb b = {.timeout_ms = 60000,
              .script = "exec python3 -c '\n"
                        "import errno, os\n"
                        "out = []\n"
                        "for d in (\"/data\", \"/tmp\", \"/dev/shm\"):\n"
                        "    n = 0\n"
                        "    try:\n"
                        "        with open(d + \"/fill\", \"wb\") as f:\n"
                        "            while n < 4096:\n"
                        "                f.write(b\"x\" * (1 << 20)); f.flush(); n += 1\n"
                        "    except OSError as e:\n"
                        "        out.append(\"%s %d %s\" % (d, n, e.errno == errno.ENOSPC))\n"
                        "x = bytearray(48 << 20)\n"
                        "for i in range(0, len(x), 4096): x[i] = 1\n"
                        "out.append(\"alive\")\n"
                        "print(\" \".join(out))\n"
                        "'; rm -f /data/fill /tmp/fill /dev/shm/fill"};
    int answers;
    int64_t slowest;
    uint32_t max_pids;
    run_bomb(&b, &answers, &slowest, &max_pids);
    assert_int_equal(b.rc, 0);
    if (!b.res.out.data || !strstr(b.res.out.data, "alive"))
        fail_msg("the filler died (signal %d): %s", b.res.term_signal,
                 b.res.out.data ? b.res.out.data : "");
    int nd = 0, nt = 0, ns = 0;
    char fd[8], ft[8], fs[8];
    assert_int_equal(sscanf(b.res.out.data, "/data %d %7s /tmp %d %7s /dev/shm %d %7s", &nd, fd,
                            &nt, ft, &ns, fs),
                     6);
    assert_string_equal(fd, "True");
    assert_string_equal(ft, "True");
    assert_string_equal(fs, "True");
    assert_true(nt >= 28 && nt <= 32); /* a quarter of 128 MiB each */
    assert_true(ns >= 28 && ns <= 32);
    mb_exec_result_free(&b.res);
    mb_sandbox_stats after;
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &after, NULL), 0);
    assert_int_equal(after.oom_kills, before.oom_kills);
    check_bystander(answers, slowest);
    victim_recovers();
}

static void output_flood_is_capped(void **state)
{
    if (!sbt_is_root()) skip();
    bomb b = {.timeout_ms = 20000, .cap = 65536, .script = "exec yes"};
    int answers;
    int64_t slowest;
    uint32_t max_pids;
    run_bomb(&b, &answers, &slowest, &max_pids);
    assert_int_equal(b.rc, 0);
    assert_true(b.res.truncated);
    assert_int_equal(b.res.out.len, 65536);
    assert_false(b.res.timed_out);          /* the pipe was closed, not the clock */
    assert_int_equal(b.res.term_signal, SIGPIPE);
    assert_memory_equal(b.res.out.data, "y\ny\ny\n", 6);
    mb_exec_result_free(&b.res);
    check_bystander(answers, slowest);
}

static void cpu_hog_is_held_to_quota(void **state)
{
    if (!sbt_is_root()) skip();
    mb_sandbox_stats a, z;
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &a, NULL), 0);
    if (!a.cpu_usage_ns) skip(); /* the host does not account CPU per cgroup */
    bomb b = {.timeout_ms = 3000,
              .script = "for i in 1 2 3 4; do python3 -c 'while 1: pass' & done; wait"};
    int answers;
    int64_t slowest;
    uint32_t max_pids;
    int64_t t0 = mb_mono_ms();
    run_bomb(&b, &answers, &slowest, &max_pids);
    int64_t wall = mb_mono_ms() - t0;
    assert_true(b.res.timed_out);
    mb_exec_result_free(&b.res);
    assert_int_equal(mb_sandbox_stats_get(victim.sb, &z, NULL), 0);
    double used_s = (double)(z.cpu_usage_ns - a.cpu_usage_ns) / 1e9;
    /* 0.5 core for ~3 s: well under what four spinning processes would take. */
    if (used_s > 0.5 * (double)wall / 1000.0 + 0.6)
        fail_msg("the sandbox used %.2f s of CPU in %.2f s with a 0.5-core quota", used_s,
                 (double)wall / 1000.0);
    check_bystander(answers, slowest);
    victim_recovers();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fork_bomb_stops_at_pids_limit),
        cmocka_unit_test(shell_bomb_is_killed_at_timeout),
        cmocka_unit_test(memory_hog_is_oom_killed_inside),
        cmocka_unit_test(disk_fill_gets_enospc),
        cmocka_unit_test(tmp_and_shm_fill_get_enospc),
        cmocka_unit_test(output_flood_is_capped),
        cmocka_unit_test(cpu_hog_is_held_to_quota),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
