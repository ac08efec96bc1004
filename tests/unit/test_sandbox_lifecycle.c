/*
 * test_sandbox_lifecycle.c - the sandbox API end to end: exec and spawn
 * semantics, reset, destroy idempotency, concurrent use of one handle,
 * crash + adopt + sweep, the warm pool, image roots, and the cgroup mode.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdatomic.h>

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>

#include "sandbox_testlib.h"
#include "sandbox/sandbox_int.h" /* mb__pool_settle */

static sbt_env env;
static sbt_box box;

static int setup(void **state)
{
    if (!sbt_is_root()) return 0;
    if (sbt_env_init(&env, "life")) return -1;
    return sbt_box_create(&box, &env, "main", NULL);
}

static int teardown(void **state)
{
    if (!sbt_is_root()) return 0;
    mb_err err;
    if (box.sb) mb_sandbox_destroy(box.sb, &err);
    sbt_env_done(&env);
    return 0;
}

/* Counts this scope's cgroups (in the memory hierarchy) whose name holds id. */
static int cgroup_exists(const sbt_box *b)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -d /sys/fs/cgroup/memory/mcpbox/*.%s /sys/fs/cgroup/mcpbox/*.%s 2>/dev/null | wc -l",
             b->id, b->id);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (p) {
        if (fscanf(p, "%d", &n) != 1) n = 0;
        pclose(p);
    }
    return n;
}

static int is_mounted(const char *path)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[4096];
    int found = 0;
    size_t n = strlen(path);
    while (f && fgets(line, sizeof line, f)) {
        char mnt[2048];
        if (sscanf(line, "%*s %*s %*s %*s %2047s", mnt) == 1 && strlen(mnt) == n &&
            !strcmp(mnt, path))
            found = 1;
    }
    if (f) fclose(f);
    return found;
}

/* ------------------------------------------------------------------ exec */

static void exec_exit_codes_and_stdin(void **state)
{
    if (!sbt_is_root()) skip();
    mb_exec_result r;
    assert_int_equal(sbt_sh(box.sb, "echo out; echo err >&2; exit 7", 10000, &r), 0);
    assert_int_equal(r.exit_code, 7);
    assert_string_equal(r.out.data, "out\n");
    assert_string_equal(r.err.data, "err\n");
    assert_int_equal(r.term_signal, 0);
    mb_exec_result_free(&r);

    assert_int_equal(sbt_sh(box.sb, "kill -TERM $$", 10000, &r), 0);
    assert_int_equal(r.term_signal, SIGTERM);
    assert_int_equal(r.exit_code, -1);
    mb_exec_result_free(&r);

    /* 1 MiB through stdin and back: the pipes are pumped both ways. */
    size_t n = 1u << 20;
    char *in = mb_malloc(n);
    for (size_t i = 0; i < n; i++) in[i] = (char)('a' + i % 26);
    const char *argv[] = {"cat", NULL};
    mb_exec_spec spec = {.argv = argv, .stdin_data = in, .stdin_len = n, .timeout_ms = 20000,
                         .output_cap = 2u << 20};
    mb_err err;
    assert_int_equal(mb_sandbox_exec(box.sb, &spec, &r, &err), 0);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.out.len, n);
    assert_memory_equal(r.out.data, in, n);
    assert_false(r.truncated);
    mb_exec_result_free(&r);
    free(in);
}

static void exec_environment_and_identity(void **state)
{
    if (!sbt_is_root()) skip();
    mb_exec_result r;
    assert_int_equal(sbt_sh(box.sb, "pwd; hostname; id -u; echo $HOME; cat /proc/1/comm", 10000, &r), 0);
    char want[256];
    snprintf(want, sizeof want, "/data\nmcpbox-%.8s\n0\n/tmp\nmcpbox-init\n", box.id);
    assert_string_equal(r.out.data, want);
    mb_exec_result_free(&r);

    const char *argv[] = {"/bin/sh", "-c", "pwd; echo $FOO; echo ${PATH:-nopath}", NULL};
    const char *envp[] = {"FOO=bar", NULL};
    mb_exec_spec spec = {.argv = argv, .envp = envp, .cwd = "/tmp", .timeout_ms = 10000};
    mb_err err;
    assert_int_equal(mb_sandbox_exec(box.sb, &spec, &r, &err), 0);
    assert_non_null(strstr(r.out.data, "/tmp\nbar\n"));
    mb_exec_result_free(&r);
}

static void exec_missing_command_and_bad_cwd(void **state)
{
    if (!sbt_is_root()) skip();
    const char *argv[] = {"no-such-command-xyz", NULL};
    mb_exec_spec spec = {.argv = argv, .timeout_ms = 10000};
    mb_exec_result r;
    mb_err err = {0};
    assert_int_equal(mb_sandbox_exec(box.sb, &spec, &r, &err), MB_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no-such-command-xyz"));
    mb_exec_result_free(&r);
    const char *argv2[] = {"true", NULL};
    mb_exec_spec spec2 = {.argv = argv2, .cwd = "/nonexistent", .timeout_ms = 10000};
    assert_int_equal(mb_sandbox_exec(box.sb, &spec2, &r, &err), MB_ENOTFOUND);
    assert_non_null(strstr(err.msg, "/nonexistent"));
    mb_exec_result_free(&r);
}

/* A timeout kills the command and everything it started, even processes
 * that left its session; processes left behind after a normal exit die too. */
static void exec_timeout_kills_the_tree(void **state)
{
    if (!sbt_is_root()) skip();
    mb_exec_result r;
    int64_t t0 = mb_mono_ms();
    assert_int_equal(sbt_sh(box.sb,
                            "sleep 101 & setsid sh -c 'sleep 102' & "
                            "python3 -c 'import os\nif os.fork() == 0:\n os.setsid()\n os.execvp(\"sleep\", [\"sleep\", \"103\"])' ; "
                            "sleep 100",
                            800, &r),
                     0);
    assert_true(r.timed_out);
    assert_true(mb_mono_ms() - t0 < 8000);
    mb_exec_result_free(&r);
    assert_int_equal(sbt_sh(box.sb, "pgrep -l sleep; true", 10000, &r), 0);
    assert_string_equal(r.out.data ? r.out.data : "", "");
    mb_exec_result_free(&r);

    t0 = mb_mono_ms();
    assert_int_equal(sbt_sh(box.sb, "sleep 104 & echo started", 10000, &r), 0);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out.data, "started\n");
    assert_true(mb_mono_ms() - t0 < 3000); /* not waiting for the background sleep */
    mb_exec_result_free(&r);
    assert_int_equal(sbt_sh(box.sb, "pgrep -l sleep; true", 10000, &r), 0);
    assert_string_equal(r.out.data ? r.out.data : "", "");
    mb_exec_result_free(&r);
}

/* ----------------------------------------------------------------- spawn */

static void spawn_pipes_wait_and_kill(void **state)
{
    if (!sbt_is_root()) skip();
    const char *argv[] = {"/bin/sh", "-c", "while read l; do echo \"got $l\"; done; exit 3", NULL};
    mb_spawn_spec spec = {.argv = argv};
    mb_child c;
    mb_err err;
    assert_int_equal(mb_sandbox_spawn(box.sb, &spec, &c, &err), 0);
    assert_true(c.pid > 1);
    assert_true(c.child_id > 0);
    assert_int_equal(write(c.in_fd, "hello\n", 6), 6);
    char buf[64] = {0};
    ssize_t n = 0;
    while (n < 10) {
        ssize_t k = read(c.out_fd, buf + n, sizeof buf - 1 - (size_t)n);
        assert_true(k > 0);
        n += k;
    }
    assert_string_equal(buf, "got hello\n");
    assert_int_equal(mb_child_wait(&c, 50, &err), MB_ETIMEOUT);
    close(c.in_fd);
    c.in_fd = -1;
    assert_int_equal(mb_child_wait(&c, 10000, &err), 0);
    assert_true(WIFEXITED(c.wait_status));
    assert_int_equal(WEXITSTATUS(c.wait_status), 3);
    mb_child_close(&c);
    mb_child_close(&c); /* twice is fine */

    /* Killing by handle and by id. */
    const char *argv2[] = {"sleep", "100", NULL};
    mb_spawn_spec spec2 = {.argv = argv2};
    assert_int_equal(mb_sandbox_spawn(box.sb, &spec2, &c, &err), 0);
    assert_int_equal(mb_child_kill(&c, SIGTERM, &err), 0);
    assert_int_equal(mb_child_wait(&c, 10000, &err), 0);
    assert_true(WIFSIGNALED(c.wait_status));
    assert_int_equal(WTERMSIG(c.wait_status), SIGTERM);
    mb_child_close(&c);
    assert_int_equal(mb_sandbox_spawn(box.sb, &spec2, &c, &err), 0);
    assert_int_equal(mb_sandbox_kill_child(box.sb, c.child_id, SIGINT, &err), 0);
    assert_int_equal(mb_child_wait(&c, 10000, &err), 0);
    assert_int_equal(WTERMSIG(c.wait_status), SIGINT);
    mb_child_close(&c);
    assert_int_equal(mb_sandbox_kill_child(box.sb, 999999, SIGINT, &err), MB_ENOTFOUND);

    /* Closing the control fd kills the process. */
    assert_int_equal(mb_sandbox_spawn(box.sb, &spec2, &c, &err), 0);
    mb_child_close(&c);
    mb_exec_result r;
    int64_t deadline = mb_mono_ms() + 5000;
    for (;;) {
        assert_int_equal(sbt_sh(box.sb, "pgrep -x sleep >/dev/null && echo yes || echo no", 10000, &r), 0);
        int gone = !strcmp(r.out.data, "no\n");
        mb_exec_result_free(&r);
        if (gone) break;
        assert_true(mb_mono_ms() < deadline);
        usleep(20000);
    }
}

/* A server spawn: one socket for stdin and stdout, stderr to a given fd, no
 * control connection kept; the socket is the life line both ways. */
static int read_line(int fd, char *buf, size_t cap, int timeout_ms)
{
    size_t n = 0;
    int64_t deadline = mb_mono_ms() + timeout_ms;
    while (n + 1 < cap && mb_mono_ms() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0) continue;
        ssize_t k = read(fd, buf + n, 1);
        if (k <= 0) break;
        if (buf[n++] == '\n') break;
    }
    buf[n] = '\0';
    return (int)n;
}

static int sleeps_left(mb_sandbox *sb)
{
    mb_exec_result r;
    if (sbt_sh(sb, "pgrep -x sleep >/dev/null && echo yes || echo no", 10000, &r)) return -1;
    int yes = r.out.data && !strcmp(r.out.data, "yes\n");
    mb_exec_result_free(&r);
    return yes;
}

static void spawn_server_socket_and_life_line(void **state)
{
    if (!sbt_is_root()) skip();
    char path[512];
    snprintf(path, sizeof path, "%s/server.err", env.root);
    int errfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(errfd >= 0);
    const char *argv[] = {"/bin/sh", "-c",
                          "sleep 1000 & echo to-stderr >&2; "
                          "while read l; do [ \"$l\" = quit ] && exit 0; echo \"got $l\"; done",
                          NULL};
    mb_spawn_spec spec = {.argv = argv};
    int sock;
    pid_t pid;
    mb_err err;
    assert_int_equal(mb_sandbox_spawn_server(box.sb, &spec, errfd, &sock, &pid, &err), 0);
    close(errfd);
    assert_true(pid > 1);
    assert_int_equal(write(sock, "hello\n", 6), 6);
    char buf[128];
    read_line(sock, buf, sizeof buf, 10000);
    assert_string_equal(buf, "got hello\n");
    char *text = NULL;
    assert_int_equal(mb_read_file(path, 4096, &text, NULL, NULL), 0);
    assert_string_equal(text, "to-stderr\n");
    free(text);
    assert_int_equal(sleeps_left(box.sb), 1);

    /* The server exits by itself: what it left behind is killed, and the
     * socket reads EOF (the background sleep held stdout too). */
    assert_int_equal(write(sock, "quit\n", 5), 5);
    int64_t deadline = mb_mono_ms() + 10000;
    ssize_t k = 1;
    while (k > 0 && mb_mono_ms() < deadline) {
        struct pollfd p = {.fd = sock, .events = POLLIN};
        if (poll(&p, 1, 100) > 0) k = read(sock, buf, sizeof buf);
    }
    assert_int_equal(k, 0);
    close(sock);
    deadline = mb_mono_ms() + 5000;
    while (sleeps_left(box.sb) == 1 && mb_mono_ms() < deadline) usleep(20000);
    assert_int_equal(sleeps_left(box.sb), 0);

    /* The caller closes the socket: the whole tree dies. */
    const char *argv2[] = {"/bin/sh", "-c", "sleep 1000 & cat", NULL};
    mb_spawn_spec spec2 = {.argv = argv2};
    assert_int_equal(mb_sandbox_spawn_server(box.sb, &spec2, -1, &sock, NULL, &err), 0);
    assert_int_equal(write(sock, "x\n", 2), 2);
    read_line(sock, buf, sizeof buf, 10000);
    assert_string_equal(buf, "x\n");
    assert_int_equal(sleeps_left(box.sb), 1);
    close(sock);
    deadline = mb_mono_ms() + 5000;
    while (sleeps_left(box.sb) == 1 && mb_mono_ms() < deadline) usleep(20000);
    assert_int_equal(sleeps_left(box.sb), 0);

    /* Bad requests are refused. */
    int fds[3] = {0, 1, 2};
    mb_spawn_spec bad = {.argv = argv2, .stdio = fds};
    assert_int_equal(mb_sandbox_spawn_server(box.sb, &bad, -1, &sock, NULL, &err), MB_EINVAL);
    assert_int_equal(sock, -1);
    const char *missing[] = {"no-such-server-xyz", NULL};
    mb_spawn_spec spec3 = {.argv = missing};
    assert_int_equal(mb_sandbox_spawn_server(box.sb, &spec3, -1, &sock, NULL, &err),
                     MB_ENOTFOUND);
    assert_int_equal(sock, -1);
}

/* A server is started by the init itself (no shepherd: its parent is pid
 * 1), and the init keeps the shepherd's promises for it: closing the life
 * line kills its whole tree, a descendant in a session of its own included;
 * a server that exits leaves nothing of its session behind; a server that
 * cannot start is reported, not left half made. */
static void server_runs_under_the_init_and_its_tree_dies_with_it(void **state)
{
    if (!sbt_is_root()) skip();
    /* (it outlives its stdin's EOF, so that the life line is what ends it: a
     * server that exits first leaves a descendant in a session of its own
     * untraceable, which is the one case the init does not cover) */
    const char *argv[] = {"/bin/sh", "-c",
                          "echo \"ppid $PPID\"; setsid sleep 1001 & sleep 1002 & cat; "
                          "exec tail -f /dev/null",
                          NULL};
    mb_spawn_spec spec = {.argv = argv};
    int sock;
    pid_t pid;
    mb_err err;
    assert_int_equal(mb_sandbox_spawn_server(box.sb, &spec, -1, &sock, &pid, &err), 0);
    char buf[128];
    read_line(sock, buf, sizeof buf, 10000);
    assert_string_equal(buf, "ppid 1\n");
    assert_int_equal(write(sock, "x\n", 2), 2);
    read_line(sock, buf, sizeof buf, 10000);
    assert_string_equal(buf, "x\n");
    assert_int_equal(sleeps_left(box.sb), 1);
    close(sock);
    int64_t deadline = mb_mono_ms() + 5000;
    while (sleeps_left(box.sb) == 1 && mb_mono_ms() < deadline) usleep(20000);
    assert_int_equal(sleeps_left(box.sb), 0);

    /* Exits at once: the sleep it started in its session goes too, and the
     * socket reads EOF (the sleep held stdout). */
    const char *argv2[] = {"/bin/sh", "-c", "sleep 1003 & exit 0", NULL};
    mb_spawn_spec spec2 = {.argv = argv2};
    assert_int_equal(mb_sandbox_spawn_server(box.sb, &spec2, -1, &sock, NULL, &err), 0);
    deadline = mb_mono_ms() + 10000;
    ssize_t k = 1;
    while (k > 0 && mb_mono_ms() < deadline) {
        struct pollfd p = {.fd = sock, .events = POLLIN};
        if (poll(&p, 1, 100) > 0) k = read(sock, buf, sizeof buf);
    }
    assert_int_equal(k, 0);
    close(sock);
    deadline = mb_mono_ms() + 5000;
    while (sleeps_left(box.sb) == 1 && mb_mono_ms() < deadline) usleep(20000);
    assert_int_equal(sleeps_left(box.sb), 0);

    /* Many at once, as an acquire starts them: each answers on its own socket. */
    int socks[8];
    const char *argv3[] = {"/bin/cat", NULL};
    mb_spawn_spec spec3 = {.argv = argv3};
    for (int i = 0; i < 8; i++)
        assert_int_equal(mb_sandbox_spawn_server(box.sb, &spec3, -1, &socks[i], NULL, &err), 0);
    for (int i = 0; i < 8; i++) {
        char line[16];
        int n = snprintf(line, sizeof line, "s%d\n", i);
        assert_int_equal(write(socks[i], line, (size_t)n), n);
        read_line(socks[i], buf, sizeof buf, 10000);
        assert_string_equal(buf, line);
        close(socks[i]);
    }
    const char *cwd_missing[] = {"/bin/cat", NULL};
    mb_spawn_spec spec4 = {.argv = cwd_missing, .cwd = "/no/such/dir"};
    assert_int_not_equal(mb_sandbox_spawn_server(box.sb, &spec4, -1, &sock, NULL, &err), 0);
    assert_true(strstr(err.msg, "/no/such/dir") != NULL);
}

/* ----------------------------------------------------------------- reset */

static void reset_kills_processes_and_empties_tmp(void **state)
{
    if (!sbt_is_root()) skip();
    const char *argv[] = {"sleep", "100", NULL};
    mb_spawn_spec spec = {.argv = argv};
    mb_child c;
    mb_err err;
    assert_int_equal(mb_sandbox_spawn(box.sb, &spec, &c, &err), 0);
    mb_exec_result r;
    assert_int_equal(sbt_sh(box.sb, "echo t > /tmp/t; echo s > /dev/shm/s; echo d > /data/keep", 10000, &r), 0);
    mb_exec_result_free(&r);
    assert_int_equal(mb_sandbox_reset(box.sb, &err), 0);
    /* The child's supervision channel reports it gone. */
    int rc = mb_child_wait(&c, 10000, &err);
    assert_true(rc == 0 || rc == MB_EIO);
    mb_child_close(&c);
    assert_int_equal(sbt_sh(box.sb, "ls -A /tmp /dev/shm; cat /data/keep; pgrep sleep; true", 10000, &r), 0);
    assert_string_equal(r.out.data, "/dev/shm:\n\n/tmp:\nd\n");
    mb_exec_result_free(&r);
}

/* SIGTERM to the init from outside is forwarded to every process, which
 * gets to clean up, then the sandbox ends; from inside it is ignored. */
static void sigterm_from_outside_is_forwarded(void **state)
{
    if (!sbt_is_root()) skip();
    sbt_box b;
    assert_int_equal(sbt_box_create(&b, &env, "term", NULL), 0);
    mb_exec_result r;
    assert_int_equal(sbt_sh(b.sb, "kill -TERM 1; kill -INT 1; sleep 0.2; echo alive", 10000, &r), 0);
    assert_string_equal(r.out.data, "alive\n");
    mb_exec_result_free(&r);
    const char *argv[] = {"/bin/sh", "-c",
                          "trap 'echo bye > /data/bye; exit 0' TERM; echo ready; "
                          "while :; do sleep 0.05; done",
                          NULL};
    mb_spawn_spec spec = {.argv = argv};
    mb_child c;
    mb_err err;
    assert_int_equal(mb_sandbox_spawn(b.sb, &spec, &c, &err), 0);
    char buf[8] = {0};
    assert_int_equal(read(c.out_fd, buf, 6), 6);
    assert_string_equal(buf, "ready\n");
    pid_t init = mb_sandbox_init_pid(b.sb);
    assert_int_equal(kill(init, SIGTERM), 0);
    assert_int_equal(mb_child_wait(&c, 10000, &err), 0);
    assert_true(WIFEXITED(c.wait_status));
    mb_child_close(&c);
    char path[512];
    snprintf(path, sizeof path, "%s/bye", b.workspace);
    int64_t deadline = mb_mono_ms() + 10000;
    while (access(path, F_OK) != 0 && mb_mono_ms() < deadline) usleep(10000);
    assert_int_equal(access(path, F_OK), 0);
    /* The init exits after its grace; new requests then fail cleanly. */
    deadline = mb_mono_ms() + 10000;
    int rc;
    do {
        usleep(20000);
        rc = sbt_sh(b.sb, "true", 2000, &r);
        mb_exec_result_free(&r);
    } while (rc == 0 && mb_mono_ms() < deadline);
    assert_int_equal(rc, MB_EIO);
    assert_int_equal(mb_sandbox_destroy(b.sb, &err), 0);
    assert_int_equal(cgroup_exists(&b), 0);
}

/* --------------------------------------------------------- concurrency */

typedef struct worker {
    mb_sandbox *sb;
    int runs, oks, errs;
    int long_rc;               /* the exec that destroy cut short */
    atomic_int *in_long;       /* workers inside their last exec */
} worker;

/* Quick execs, then one long one that is in flight when the sandbox is
 * destroyed. A worker never calls again after that: mb_sandbox_destroy
 * frees the handle, so no call may start after it (the daemon guarantees
 * this with core/live.c's references). */
static void *worker_main(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 20; i++) {
        mb_exec_result r;
        const char *argv[] = {"/bin/sh", "-c", "echo $$", NULL};
        mb_exec_spec spec = {.argv = argv, .timeout_ms = 10000};
        mb_err err;
        int rc = mb_sandbox_exec(w->sb, &spec, &r, &err);
        w->runs++;
        if (rc == 0 && r.exit_code == 0) w->oks++;
        else w->errs++;
        mb_exec_result_free(&r);
    }
    mb_exec_result r;
    const char *argv[] = {"/bin/sleep", "30", NULL};
    mb_exec_spec spec = {.argv = argv, .timeout_ms = 60000};
    mb_err err;
    atomic_fetch_add(w->in_long, 1);
    w->long_rc = mb_sandbox_exec(w->sb, &spec, &r, &err);
    if (w->long_rc == 0 && r.exit_code == 0) w->long_rc = 1; /* it was not cut short */
    mb_exec_result_free(&r);
    return NULL;
}

static void concurrent_execs_then_destroy(void **state)
{
    if (!sbt_is_root()) skip();
    sbt_box b;
    assert_int_equal(sbt_box_create(&b, &env, "conc", NULL), 0);
    worker w[4];
    pthread_t t[4];
    atomic_int in_long = 0;
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.sb = b.sb, .in_long = &in_long};
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    while (atomic_load(&in_long) < 4) usleep(10000);
    usleep(300000); /* every long exec has taken its reference */
    int64_t t0 = mb_mono_ms();
    mb_err err;
    assert_int_equal(mb_sandbox_destroy(b.sb, &err), 0);
    int oks = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        oks += w[i].oks;
        assert_true(w[i].long_rc != 1); /* in flight at destroy: it failed */
    }
    assert_true(mb_mono_ms() - t0 < 10000); /* promptly, not after the 30 s sleep */
    assert_true(oks >= 4);
    assert_int_equal(cgroup_exists(&b), 0);
    assert_false(is_mounted(b.workspace));
    assert_int_equal(access(b.state_dir, F_OK), -1);
    assert_int_equal(access(b.workspace, F_OK), -1);
    /* Destroying what is gone is fine. */
    assert_int_equal(mb_sandbox_destroy_by_opts(&b.opts, &err), 0);
    assert_int_equal(mb_sandbox_destroy_by_opts(&b.opts, &err), 0);
}

/* ------------------------------------------------------ crash and adopt */

static int keep_first(void *ctx, const char *id) { return !strcmp((const char *)ctx, id); }

static void crash_adopt_and_sweep(void **state)
{
    if (!sbt_is_root()) skip();
    enum { N = 3 };
    /* Its own state root: the sweep removes everything there it is not told
     * to keep (including the suite's main sandbox if it shared the root). */
    sbt_env cenv = env;
    snprintf(cenv.state_root, sizeof cenv.state_root, "%s/state-crash", env.root);
    assert_int_equal(mkdir(cenv.state_root, 0700), 0);
    sbt_box b[N];
    for (int i = 0; i < N; i++) sbt_box_init(&b[i], &cenv, "crash", NULL);
    /* A "daemon" process creates the sandboxes, starts a server in one, and
     * dies by SIGKILL without releasing anything. */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < N; i++) {
            mb_err err;
            if (mb_sandbox_create(&b[i].opts, &b[i].sb, &err)) _exit(1);
            char path[512];
            snprintf(path, sizeof path, "%s/mark", b[i].workspace);
            FILE *f = fopen(path, "w");
            fprintf(f, "%d\n", i);
            fclose(f);
        }
        const char *argv[] = {"sleep", "1000", NULL};
        mb_spawn_spec spec = {.argv = argv};
        mb_child c;
        mb_err err;
        if (mb_sandbox_spawn(b[0].sb, &spec, &c, &err)) _exit(2);
        kill(getpid(), SIGKILL);
        _exit(3);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

    /* Restart: adopt every sandbox, each works; the dead daemon's server
     * died with its connection. */
    mb_err err;
    for (int i = 0; i < N; i++) {
        assert_int_equal(mb_sandbox_adopt(&b[i].opts, &b[i].sb, &err), 0);
        assert_true(mb_sandbox_init_pid(b[i].sb) > 1);
        mb_exec_result r;
        assert_int_equal(sbt_sh(b[i].sb, "cat /data/mark; pgrep -x sleep; true", 10000, &r), 0);
        char want[16];
        snprintf(want, sizeof want, "%d\n", i);
        assert_string_equal(r.out.data, want);
        mb_exec_result_free(&r);
        mb_sandbox_close(b[i].sb); /* forget the handle, keep the sandbox */
    }

    /* Sweep keeps b[0] and removes the others completely. */
    assert_int_equal(mb_sandbox_sweep(cenv.state_root, keep_first, b[0].id, &err), 0);
    for (int i = 1; i < N; i++) {
        assert_int_equal(mb_sandbox_adopt(&b[i].opts, &b[i].sb, &err), MB_ENOTFOUND);
        assert_int_equal(cgroup_exists(&b[i]), 0);
        assert_false(is_mounted(b[i].workspace));
        assert_int_equal(access(b[i].state_dir, F_OK), -1);
    }
    assert_int_equal(mb_sandbox_adopt(&b[0].opts, &b[0].sb, &err), 0);
    mb_exec_result r;
    assert_int_equal(sbt_sh(b[0].sb, "cat /data/mark", 10000, &r), 0);
    assert_string_equal(r.out.data, "0\n");
    mb_exec_result_free(&r);
    /* The sweep also finds leftovers with no state dir (only a cgroup and a
     * workspace mount). */
    assert_int_equal(mb_rm_rf(b[0].state_dir, &err), 0);
    mb_sandbox_close(b[0].sb);
    assert_int_equal(mb_sandbox_sweep(cenv.state_root, keep_first, "none", &err), 0);
    assert_int_equal(cgroup_exists(&b[0]), 0);
    assert_false(is_mounted(b[0].workspace));
    /* Sandboxes of another state root were not touched. */
    mb_exec_result r2;
    assert_int_equal(sbt_sh(box.sb, "true", 10000, &r2), 0);
    mb_exec_result_free(&r2);
}

static void adopt_refuses_what_is_gone(void **state)
{
    if (!sbt_is_root()) skip();
    sbt_box b;
    sbt_box_init(&b, &env, "gone", NULL);
    mb_err err;
    assert_int_equal(mb_sandbox_adopt(&b.opts, &b.sb, &err), MB_ENOTFOUND);
    assert_non_null(strstr(err.msg, "not running"));
}

static void create_refuses_bad_options(void **state)
{
    if (!sbt_is_root()) skip();
    sbt_box b;
    sbt_box_init(&b, &env, "bad", NULL);
    mb_err err;
    mb_sandbox *sb;
    b.opts.uid_base = 0;
    assert_int_equal(mb_sandbox_create(&b.opts, &sb, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "uid_base"));
    b.opts.uid_base = sbt_uid_base();
    b.opts.zygote = NULL;
    assert_int_equal(mb_sandbox_create(&b.opts, &sb, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "zygote"));
    b.opts.zygote = env.zygote;
    b.opts.uid_base = sbt_uid_base();
    b.opts.id = "not-a-uuid";
    assert_int_equal(mb_sandbox_create(&b.opts, &sb, &err), MB_EINVAL);
    b.opts.id = b.id;
    b.opts.mcpbox_bin = "/nonexistent/mcpbox";
    assert_int_equal(mb_sandbox_create(&b.opts, &sb, &err), MB_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent/mcpbox"));
    /* A workspace that already holds files is refused and left alone. */
    b.opts.mcpbox_bin = env.bin;
    mkdir(b.workspace, 0755);
    char path[512];
    snprintf(path, sizeof path, "%s/precious", b.workspace);
    FILE *f = fopen(path, "w");
    fclose(f);
    assert_int_equal(mb_sandbox_create(&b.opts, &sb, &err), MB_ECONFLICT);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(cgroup_exists(&b), 0);
    unlink(path);
    rmdir(b.workspace);
    /* A state dir already in use by a running sandbox is refused. */
    sbt_box twin = box;
    mb_uuid4(twin.id);
    twin.opts.id = twin.id;
    snprintf(twin.workspace, sizeof twin.workspace, "%s/ws-twin", env.root);
    twin.opts.workspace = twin.workspace;
    twin.opts.state_dir = box.state_dir;
    assert_int_equal(mb_sandbox_create(&twin.opts, &sb, &err), MB_ECONFLICT);
    mb_exec_result r;
    assert_int_equal(sbt_sh(box.sb, "true", 10000, &r), 0); /* the original is untouched */
    mb_exec_result_free(&r);
}

/* ---------------------------------------------------------------- zygote */

/* Inits are cloned by the zygote helper, not exec'd: they show as
 * `mcpbox sandbox-init`, outlive the helper, and a helper that died is
 * replaced on the next create. */
static void zygote_clones_restarts_and_is_outlived(void **state)
{
    if (!sbt_is_root()) skip();
    mb_err err;
    mb_zygote *z;
    assert_int_equal(mb_zygote_start(env.bin, &z, &err), 0);
    pid_t zpid = mb_zygote_pid(z);
    assert_true(zpid > 1);
    sbt_box a;
    sbt_box_init(&a, &env, "zya", NULL);
    a.opts.zygote = z;
    assert_int_equal(mb_sandbox_create(&a.opts, &a.sb, &err), 0);
    char path[64], buf[256] = {0};
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)mb_sandbox_init_pid(a.sb));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    assert_true(n > 20);
    assert_string_equal(buf, "mcpbox");
    assert_string_equal(buf + 7, "sandbox-init");
    /* its parent is the helper, which reaps it */
    snprintf(path, sizeof path, "/proc/%d/stat", (int)mb_sandbox_init_pid(a.sb));
    f = fopen(path, "r");
    assert_non_null(f);
    int ppid = 0;
    assert_int_equal(fscanf(f, "%*d %*s %*c %d", &ppid), 1);
    fclose(f);
    assert_int_equal(ppid, zpid);

    /* The helper dies: the next create starts another. */
    assert_int_equal(kill(zpid, SIGKILL), 0);
    sbt_box b;
    sbt_box_init(&b, &env, "zyb", NULL);
    b.opts.zygote = z;
    assert_int_equal(mb_sandbox_create(&b.opts, &b.sb, &err), 0);
    assert_true(mb_zygote_pid(z) > 1 && mb_zygote_pid(z) != zpid);

    /* Stopping the zygote leaves both sandboxes running. */
    mb_zygote_stop(z);
    mb_exec_result r;
    assert_int_equal(sbt_sh(a.sb, "echo a", 10000, &r), 0);
    assert_string_equal(r.out.data, "a\n");
    mb_exec_result_free(&r);
    assert_int_equal(sbt_sh(b.sb, "echo b", 10000, &r), 0);
    assert_string_equal(r.out.data, "b\n");
    mb_exec_result_free(&r);
    assert_int_equal(mb_sandbox_destroy(a.sb, &err), 0);
    assert_int_equal(mb_sandbox_destroy(b.sb, &err), 0);
    assert_int_equal(cgroup_exists(&a), 0);
    assert_int_equal(cgroup_exists(&b), 0);
}

/* ------------------------------------------------------------------ pool */

typedef struct factory_ctx {
    sbt_box boxes[16];
    int made, retired;
    pthread_mutex_t mu;
} factory_ctx;

static int make_opts(void *ctx, const char *key, mb_sandbox_opts *opts, void **cookie,
                     mb_err *err)
{
    factory_ctx *f = ctx;
    pthread_mutex_lock(&f->mu);
    int i = f->made++;
    pthread_mutex_unlock(&f->mu);
    if (i >= 16) return mb_err_set(err, MB_EBUSY, "test factory exhausted");
    sbt_box_init(&f->boxes[i], &env, key, NULL);
    *opts = f->boxes[i].opts;
    *cookie = &f->boxes[i];
    return 0;
}

static void retire(void *ctx, const char *key, void *cookie)
{
    factory_ctx *f = ctx;
    pthread_mutex_lock(&f->mu);
    f->retired++;
    pthread_mutex_unlock(&f->mu);
}

static void warm_pool_claims_and_refills(void **state)
{
    if (!sbt_is_root()) skip();
    static factory_ctx f;
    memset(&f, 0, sizeof f);
    pthread_mutex_init(&f.mu, NULL);
    mb_pool_factory fac = {.make_opts = make_opts, .retire = retire, .ctx = &f};
    mb_pool *p;
    mb_err err;
    assert_int_equal(mb_pool_new(&fac, &p, &err), 0);
    assert_int_equal(mb_pool_claim(p, "prof", &(mb_sandbox *){0}, NULL), MB_ENOTFOUND);
    assert_int_equal(mb_pool_set_target(p, "prof", 2, &err), 0);
    assert_int_equal(mb_pool_wait_ready(p, "prof", 60000), 0);
    mb_pool_stats st;
    assert_int_equal(mb_pool_stats_get(p, "prof", &st), 0);
    assert_int_equal(st.idle, 2);

    mb_sandbox *sb;
    void *cookie; /* how fast a claim is: bench P1 */
    assert_int_equal(mb_pool_claim(p, "prof", &sb, &cookie), 0);
    sbt_box *cb = cookie;
    assert_string_equal(mb_sandbox_id(sb), cb->id);
    mb_exec_result r;
    assert_int_equal(sbt_sh(sb, "echo claimed", 10000, &r), 0);
    assert_string_equal(r.out.data, "claimed\n");
    mb_exec_result_free(&r);
    assert_int_equal(mb_sandbox_destroy(sb, &err), 0);

    /* The pool refills behind the claim. */
    assert_int_equal(mb_pool_wait_ready(p, "prof", 60000), 0);
    assert_int_equal(mb_pool_stats_get(p, "prof", &st), 0);
    assert_int_equal(st.idle, 2);
    assert_int_equal(st.claimed, 1);
    assert_int_equal(st.misses, 0);

    /* Shrinking and freeing destroy the idle ones. */
    assert_int_equal(mb_pool_set_target(p, "prof", 1, &err), 0);
    assert_int_equal(mb_pool_stats_get(p, "prof", &st), 0);
    assert_int_equal(st.idle, 1);

    /* Claiming the last idle one: its refill waits REFILL_PAUSE_MS (50 ms), so that
     * it does not compete with the first requests of the sandbox just claimed. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(mb_pool_claim(p, "prof", &sb, NULL), 0);
    assert_int_equal(mb_pool_stats_get(p, "prof", &st), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    if (ms < 40) assert_int_equal(st.creating, 0); /* not started yet */
    assert_int_equal(mb_pool_wait_ready(p, "prof", 60000), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    assert_true(ms >= 50);
    assert_int_equal(mb_sandbox_destroy(sb, &err), 0);
    mb_pool_free(p);
    assert_int_equal(f.made, 4);
    assert_int_equal(f.retired, 2);
    for (int i = 0; i < f.made; i++) {
        assert_int_equal(cgroup_exists(&f.boxes[i]), 0);
        assert_false(is_mounted(f.boxes[i].workspace));
    }
    pthread_mutex_destroy(&f.mu);
}

/* A pool sandbox counts as idle once its processes are quiet: the wait ends
 * with the first window of little CPU, gives up at its bound, and stops at
 * once when usage says so. */
typedef struct fake_cpu {
    int calls, busy_calls, stop;
    uint64_t ns;
} fake_cpu;

static int fake_usage(void *ctx, uint64_t *ns)
{
    fake_cpu *c = ctx;
    if (c->stop) return 1;
    c->ns += ++c->calls <= c->busy_calls ? 40000000 : 1000000; /* 40 ms busy, 1 ms quiet */
    *ns = c->ns;
    return 0;
}

static void warm_pool_settles(void **state)
{
    fake_cpu c = {.busy_calls = 4};
    /* call 1 is the baseline; windows 1-3 busy (calls 2-4), window 4 quiet */
    assert_int_equal(mb__pool_settle(fake_usage, &c, 10, 5000000, 2000), 4);
    c = (fake_cpu){.busy_calls = 1000};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int w = mb__pool_settle(fake_usage, &c, 10, 5000000, 200);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    assert_true(w >= 5 && w <= 20);
    assert_true(ms >= 100 && ms < 1000);
    c = (fake_cpu){.stop = 1};
    assert_int_equal(mb__pool_settle(fake_usage, &c, 10, 5000000, 2000), 0);
}

/* A readied sandbox whose processes are still busy settles before it counts
 * as idle, and a claim in that time takes it rather than missing. */
static atomic_int burner_started;
static int burner_sock = -1;
static int prepare_burner(void *ctx, const char *key, mb_sandbox *sb, void *cookie, mb_err *err)
{
    /* a server-like process that keeps a core busy for a second or so */
    const char *argv[] = {"/bin/sh", "-c",
                          "i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done", NULL};
    mb_spawn_spec spec = {.argv = argv};
    int rc = mb_sandbox_spawn_server(sb, &spec, -1, &burner_sock, NULL, err);
    atomic_store(&burner_started, 1);
    return rc;
}

static void warm_pool_claims_a_settling_sandbox(void **state)
{
    if (!sbt_is_root()) skip();
    static factory_ctx f;
    memset(&f, 0, sizeof f);
    pthread_mutex_init(&f.mu, NULL);
    atomic_store(&burner_started, 0);
    mb_pool_factory fac = {.make_opts = make_opts, .prepare = prepare_burner, .retire = retire,
                           .ctx = &f};
    mb_pool *p;
    mb_err err;
    assert_int_equal(mb_pool_new(&fac, &p, &err), 0);
    assert_int_equal(mb_pool_set_target(p, "prof", 1, &err), 0);
    for (int i = 0; i < 3000 && !atomic_load(&burner_started); i++) usleep(10 * 1000);
    assert_true(atomic_load(&burner_started));
    usleep(150 * 1000); /* busy: settling, not idle */
    mb_pool_stats st;
    assert_int_equal(mb_pool_stats_get(p, "prof", &st), 0);
    assert_int_equal(st.idle, 0);
    assert_int_equal(st.creating, 1);
    mb_sandbox *sb = NULL;
    assert_int_equal(mb_pool_claim(p, "prof", &sb, NULL), 0);
    int first = burner_sock; /* the refill's next one starts 50 ms after the claim */
    assert_int_equal(mb_pool_stats_get(p, "prof", &st), 0);
    assert_int_equal(st.claimed, 1);
    assert_int_equal(st.misses, 0);
    assert_int_equal(mb_sandbox_destroy(sb, &err), 0);
    close(first);
    mb_pool_free(p);
    if (burner_sock != first) close(burner_sock);
    burner_sock = -1;
    pthread_mutex_destroy(&f.mu);
}

/* A factory that fails is retried with back-off and its error is kept. */
static int failing_opts(void *ctx, const char *key, mb_sandbox_opts *opts, void **cookie,
                        mb_err *err)
{
    (*(int *)ctx)++;
    return mb_err_set(err, MB_EIO, "no uid range left");
}

static void warm_pool_reports_failures(void **state)
{
    if (!sbt_is_root()) skip();
    int calls = 0;
    mb_pool_factory fac = {.make_opts = failing_opts, .ctx = &calls};
    mb_pool *p;
    mb_err err;
    assert_int_equal(mb_pool_new(&fac, &p, &err), 0);
    assert_int_equal(mb_pool_set_target(p, "x", 1, &err), 0);
    assert_int_equal(mb_pool_wait_ready(p, "x", 500), MB_ETIMEOUT);
    mb_pool_stats st;
    assert_int_equal(mb_pool_stats_get(p, "x", &st), 0);
    assert_true(st.failures >= 1 && st.failures <= 4); /* backed off, not spinning */
    assert_string_equal(st.last_error, "no uid range left");
    mb_pool_free(p);
}

/* ----------------------------------------------------------- image root */

static void image_dir_root(void **state)
{
    if (!sbt_is_root()) skip();
    char img[512], path[600];
    snprintf(img, sizeof img, "%s/image", env.root);
    mkdir(img, 0755);
    snprintf(path, sizeof path, "%s/usr", img);
    mkdir(path, 0755);
    assert_int_equal(mount("/usr", path, NULL, MS_BIND | MS_REC, NULL), 0);
    const char *links[][2] = {{"bin", "usr/bin"}, {"lib", "usr/lib"}, {"lib64", "usr/lib64"}};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", img, links[i][0]);
        assert_int_equal(symlink(links[i][1], path), 0);
    }
    snprintf(path, sizeof path, "%s/etc", img);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/etc/flavour", img);
    FILE *f = fopen(path, "w");
    fputs("image\n", f);
    fclose(f);
    sbt_box b;
    sbt_box_init(&b, &env, "img", NULL);
    b.opts.image_dir = img;
    mb_err err;
    int rc = mb_sandbox_create(&b.opts, &b.sb, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    mb_exec_result r;
    assert_int_equal(sbt_sh(b.sb, "cat /etc/flavour; ls /etc; touch /etc/x 2>/dev/null || echo ro", 10000, &r), 0);
    assert_string_equal(r.out.data, "image\nflavour\nro\n");
    mb_exec_result_free(&r);
    assert_int_equal(mb_sandbox_destroy(b.sb, &err), 0);
    snprintf(path, sizeof path, "%s/usr", img);
    assert_int_equal(umount2(path, MNT_DETACH), 0);
}

/* ------------------------------------------------------------- cgroups */

static void cgroup_mode_and_v2(void **state)
{
    if (!sbt_is_root()) skip();
    const char *mode;
    mb_err err;
    assert_int_equal(mb_sandbox_cgroup_mode(&mode, &err), 0);
    assert_true(!strcmp(mode, "v1") || !strcmp(mode, "v2") || !strcmp(mode, "hybrid"));
    mb_sandbox_stats st;
    assert_int_equal(mb_sandbox_stats_get(box.sb, &st, &err), 0);
    assert_int_equal(st.memory_limit_bytes, MB_SANDBOX_DEFAULT_MEMORY + MB_SANDBOX_DEFAULT_DISK);
    assert_int_equal(st.pids_max, MB_SANDBOX_DEFAULT_PIDS);
    assert_true(st.pids >= 1);
    assert_true(st.memory_bytes > 0);
    if (strcmp(mode, "v2") != 0) {
        fprintf(stderr, "note: this host limits sandboxes with cgroup %s; the v2 path "
                        "(memory.max, pids.max, cpu.max, cgroup.kill) is exercised only on "
                        "a v2 host\n", mode);
        skip();
    }
    /* v2: the limits landed in the unified hierarchy. */
    char pattern[256];
    snprintf(pattern, sizeof pattern, "/sys/fs/cgroup/mcpbox/*.%s", box.id);
    glob_t g;
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, 1);
    char path[512];
    snprintf(path, sizeof path, "%s/memory.max", g.gl_pathv[0]);
    char *text = NULL;
    assert_int_equal(mb_read_file(path, 64, &text, NULL, NULL), 0);
    assert_int_equal(strtoull(text, NULL, 10), MB_SANDBOX_DEFAULT_MEMORY + MB_SANDBOX_DEFAULT_DISK);
    free(text);
    snprintf(path, sizeof path, "%s/pids.max", g.gl_pathv[0]);
    assert_int_equal(mb_read_file(path, 64, &text, NULL, NULL), 0);
    assert_int_equal(atoi(text), MB_SANDBOX_DEFAULT_PIDS);
    free(text);
    globfree(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exec_exit_codes_and_stdin),
        cmocka_unit_test(exec_environment_and_identity),
        cmocka_unit_test(exec_missing_command_and_bad_cwd),
        cmocka_unit_test(exec_timeout_kills_the_tree),
        cmocka_unit_test(spawn_pipes_wait_and_kill),
        cmocka_unit_test(spawn_server_socket_and_life_line),
        cmocka_unit_test(server_runs_under_the_init_and_its_tree_dies_with_it),
        cmocka_unit_test(reset_kills_processes_and_empties_tmp),
        cmocka_unit_test(sigterm_from_outside_is_forwarded),
        cmocka_unit_test(concurrent_execs_then_destroy),
        cmocka_unit_test(crash_adopt_and_sweep),
        cmocka_unit_test(adopt_refuses_what_is_gone),
        cmocka_unit_test(create_refuses_bad_options),
        cmocka_unit_test(zygote_clones_restarts_and_is_outlived),
        cmocka_unit_test(warm_pool_claims_and_refills),
        cmocka_unit_test(warm_pool_settles),
        cmocka_unit_test(warm_pool_claims_a_settling_sandbox),
        cmocka_unit_test(warm_pool_reports_failures),
        cmocka_unit_test(image_dir_root),
        cmocka_unit_test(cgroup_mode_and_v2),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
