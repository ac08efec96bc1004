/*
 * cmd_sandbox.c - `mcpbox sandbox ...` (debugging and benchmarks) and the
 * hidden `mcpbox sandbox-zygote` (the helper that clones every sandbox's
 * init, zygote.c).
 *
 *   mcpbox sandbox run [--memory SIZE] [--pids N] [--cpu MILLIS] [--disk SIZE]
 *                      [--net] [--image DIR] [--uid-base N] [--quiet] -- CMD ARGS...
 *       creates a sandbox in a temporary directory, runs CMD inside with this
 *       terminal's stdin/stdout/stderr, prints its exit status on stderr,
 *       destroys the sandbox and exits with CMD's status (128 + signal if it
 *       was killed).
 *   mcpbox sandbox bench [-n N] [--exec] [--json]
 *       creates and destroys N sandboxes one after another through a zygote
 *       helper, as the daemon does (running `true` in
 *       each with --exec) and prints create/exec/destroy latencies.
 */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------------------------------------------------------- sandbox-zygote */

/* The argument area argv[0] .. end of the last argument (contiguous, as the
 * kernel lays it out; here argv[0] is the command's name, after the
 * program's "mcpbox"), which the inits rewrite as their ps title. */
static size_t arg_area(int argc, char **argv)
{
    if (argc < 1) return 0;
    return (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - argv[0]);
}

int mb_cmd_sandbox_zygote(int argc, char **argv)
{
    char *end = NULL;
    long fd = argc == 3 && !strcmp(argv[1], "--fd") ? strtol(argv[2], &end, 10) : -1;
    struct stat st;
    if (fd < 3 || !end || *end || fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        fprintf(stderr, "mcpbox sandbox-zygote: this helper clones sandboxes for mcpbox and "
                        "is started by mcpbox itself\n");
        return 2;
    }
    return mb_zygote_helper_main((int)fd, argv[0], arg_area(argc, argv));
}

/* ------------------------------------------------------------- helpers */

typedef struct tmp_sandbox {
    char dir[PATH_MAX];
    char state[PATH_MAX + 16];
    char data[PATH_MAX + 16];
    char id[37];
    char bin[PATH_MAX];
    mb_sandbox_opts opts;
} tmp_sandbox;

static int tmp_prepare(tmp_sandbox *t, const mb_sandbox_limits *lim, const char *image, int net,
                       uint32_t uid_base, mb_zygote *z)
{
    snprintf(t->dir, sizeof t->dir, "/tmp/mcpbox-sandbox-XXXXXX");
    if (!mkdtemp(t->dir)) {
        fprintf(stderr, "mcpbox sandbox: cannot create a temporary directory: %s\n",
                strerror(errno));
        return -1;
    }
    ssize_t n = readlink("/proc/self/exe", t->bin, sizeof t->bin - 1);
    if (n <= 0) {
        fprintf(stderr, "mcpbox sandbox: cannot find my own binary\n");
        rmdir(t->dir);
        return -1;
    }
    t->bin[n] = '\0';
    mb_uuid4(t->id);
    snprintf(t->state, sizeof t->state, "%s/state", t->dir);
    snprintf(t->data, sizeof t->data, "%s/data", t->dir);
    if (!uid_base) {
        uint32_t r;
        mb_random_bytes(&r, sizeof r, NULL);
        uid_base = 0x10000000u + (r % 0x6000u) * MB_SANDBOX_UID_RANGE;
    }
    t->opts = (mb_sandbox_opts){.id = t->id, .state_dir = t->state, .workspace = t->data,
                                .image_dir = image, .mcpbox_bin = t->bin, .uid_base = uid_base,
                                .limits = *lim, .allow_network = net, .zygote = z};
    return 0;
}

static void tmp_cleanup(tmp_sandbox *t)
{
    (void)mb_sandbox_destroy_by_opts(&t->opts, NULL);
    (void)rmdir(t->dir);
}

static int parse_size(const char *s, uint64_t *out, const char *what)
{
    if (mb_parse_size(s, out) != 0 || !*out) {
        fprintf(stderr, "mcpbox sandbox: %s '%s' is not a size (e.g. 512M, 2G)\n", what, s);
        return -1;
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mcpbox sandbox run [--memory SIZE] [--pids N] [--cpu MILLICORES] [--disk SIZE]\n"
            "                          [--net] [--image DIR] [--uid-base N] [--quiet] -- CMD ARGS...\n"
            "       mcpbox sandbox bench [-n N] [--exec] [--json]\n"
            "       mcpbox sandbox sweep DATA_DIR\n"
            "\n"
            "run    runs CMD in a throw-away sandbox with this terminal's stdio and exits with its\n"
            "       status; the workspace (/data inside) is a temporary directory\n"
            "bench  creates and destroys N sandboxes and prints latency percentiles\n"
            "sweep  tears down every sandbox a stopped `mcpbox serve --data-dir DATA_DIR`\n"
            "       left running (processes, mounts, cgroups, workspaces); their records\n"
            "       show status error at the next start\n");
}

/* ------------------------------------------------------------------ run */

static int cmd_run(int argc, char **argv)
{
    mb_sandbox_limits lim = {0};
    const char *image = NULL;
    int net = 0, quiet = 0;
    uint32_t uid_base = 0;
    static const struct option lo[] = {
        {"memory", required_argument, 0, 'm'}, {"pids", required_argument, 0, 'p'},
        {"cpu", required_argument, 0, 'c'},    {"disk", required_argument, 0, 'd'},
        {"net", no_argument, 0, 'N'},          {"image", required_argument, 0, 'i'},
        {"uid-base", required_argument, 0, 'u'}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+hq", lo, NULL)) != -1) {
        switch (c) {
        case 'm': if (parse_size(optarg, &lim.memory_bytes, "memory")) return 2; break;
        case 'd': if (parse_size(optarg, &lim.disk_bytes, "disk")) return 2; break;
        case 'p': lim.pids_max = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'c': lim.cpu_millis = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'N': net = 1; break;
        case 'i': image = optarg; break;
        case 'u': uid_base = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    /* This process stays single-threaded: it clones the init itself (whose
     * ps title stays this command's). */
    mb_err err = {0};
    mb_zygote *z;
    if (mb_zygote_local(NULL, 0, &z, &err) != 0) {
        fprintf(stderr, "mcpbox sandbox: %s\n", err.msg);
        return 1;
    }
    tmp_sandbox t;
    if (tmp_prepare(&t, &lim, image, net, uid_base, z)) {
        mb_zygote_stop(z);
        return 1;
    }
    mb_sandbox *sb;
    int64_t t0 = mb_mono_ms();
    if (mb_sandbox_create(&t.opts, &sb, &err) != 0) {
        fprintf(stderr, "mcpbox sandbox: %s\n", err.msg);
        tmp_cleanup(&t);
        mb_zygote_stop(z);
        return 1;
    }
    int64_t t1 = mb_mono_ms();
    /* Keep terminal signals for ourselves: they end the command. */
    sigset_t sigs, old;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    sigprocmask(SIG_BLOCK, &sigs, &old);

    int stdio[3] = {0, 1, 2};
    mb_spawn_spec spec = {.argv = (const char *const *)(argv + optind), .stdio = stdio};
    mb_child ch;
    int status = 1;
    if (mb_sandbox_spawn(sb, &spec, &ch, &err) != 0) {
        fprintf(stderr, "mcpbox sandbox: %s\n", err.msg);
    } else {
        for (;;) {
            int rc = mb_child_wait(&ch, 100, &err);
            if (rc == 0) break;
            if (rc != MB_ETIMEOUT) {
                fprintf(stderr, "mcpbox sandbox: %s\n", err.msg);
                break;
            }
            struct timespec zero = {0, 0};
            if (sigtimedwait(&sigs, NULL, &zero) > 0) (void)mb_child_kill(&ch, SIGKILL, NULL);
        }
        if (ch.exited) {
            if (WIFEXITED(ch.wait_status)) {
                status = WEXITSTATUS(ch.wait_status);
                if (!quiet) fprintf(stderr, "mcpbox sandbox: exit status %d\n", status);
            } else if (WIFSIGNALED(ch.wait_status)) {
                status = 128 + WTERMSIG(ch.wait_status);
                if (!quiet)
                    fprintf(stderr, "mcpbox sandbox: killed by signal %d (%s)\n",
                            WTERMSIG(ch.wait_status), strsignal(WTERMSIG(ch.wait_status)));
            }
        }
        mb_child_close(&ch);
    }
    int64_t t2 = mb_mono_ms();
    if (mb_sandbox_destroy(sb, &err) != 0) fprintf(stderr, "mcpbox sandbox: %s\n", err.msg);
    int64_t t3 = mb_mono_ms();
    (void)rmdir(t.dir);
    mb_zygote_stop(z);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (!quiet)
        fprintf(stderr, "mcpbox sandbox: create %lld ms, run %lld ms, destroy %lld ms\n",
                (long long)(t1 - t0), (long long)(t2 - t1), (long long)(t3 - t2));
    return status;
}

/* ---------------------------------------------------------------- sweep */

static int keep_none(void *ctx, const char *id) { return 0; }

static int cmd_sweep(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        usage(stderr);
        return 2;
    }
    /* DIR/run may be gone (an `rm -rf DIR` that stopped at busy workspace
     * mounts): the sweep then finds the sandboxes from the mount table and
     * the cgroup tree, whose names carry the hash of DIR/run's absolute path. */
    char *abs = mb_asprintf("%s/run", argv[1]);
    struct stat st;
    if (stat(abs, &st) != 0)
        fprintf(stderr, "mcpbox sandbox sweep: %s: %s; sweeping from the mount table and the "
                "cgroups\n", abs, strerror(errno));
    mb_err err;
    int rc = mb_sandbox_sweep(abs, keep_none, NULL, &err);
    free(abs);
    if (rc) {
        fprintf(stderr, "mcpbox sandbox sweep: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- bench */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts us[0..n) and prints its percentiles (text, or one JSON member). */
static void report(const char *what, int64_t *us, int n, int json, int first)
{
    qsort(us, (size_t)n, sizeof *us, cmp_i64);
    double p50 = (double)us[n / 2] / 1000.0, p90 = (double)us[(n * 9) / 10] / 1000.0,
           p99 = (double)us[(n * 99) / 100] / 1000.0, max = (double)us[n - 1] / 1000.0;
    if (json)
        printf("%s\"%s\":{\"n\":%d,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,"
               "\"max_ms\":%.3f}",
               first ? "" : ",", what, n, p50, p90, p99, max);
    else
        printf("%-8s p50 %7.2f ms  p90 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n", what, p50, p90,
               p99, max);
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int cmd_bench(int argc, char **argv)
{
    int n = 20, do_exec = 0, json = 0;
    static const struct option lo[] = {{"exec", no_argument, 0, 'e'},
                                       {"json", no_argument, 0, 'j'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
        if (c == 'n') n = atoi(optarg);
        else if (c == 'e') do_exec = 1;
        else if (c == 'j') json = 1;
        else {
            usage(stderr);
            return 2;
        }
    }
    if (n < 1) n = 1;
    /* Through a zygote helper, as the daemon creates sandboxes. */
    char bin[PATH_MAX];
    ssize_t bl = readlink("/proc/self/exe", bin, sizeof bin - 1);
    mb_err err = {0};
    mb_zygote *z = NULL;
    if (bl > 0) bin[bl] = '\0';
    if (bl <= 0 || mb_zygote_start(bin, &z, &err) != 0) {
        fprintf(stderr, "mcpbox sandbox bench: %s\n", bl > 0 ? err.msg : "cannot find my binary");
        return 1;
    }
    int64_t *cr = mb_calloc((size_t)n, sizeof *cr), *ex = mb_calloc((size_t)n, sizeof *ex),
            *de = mb_calloc((size_t)n, sizeof *de);
    mb_sandbox_limits lim = {0};
    int failures = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        tmp_sandbox t;
        if (tmp_prepare(&t, &lim, NULL, 0, 0, z)) {
            rc = 1;
            break;
        }
        mb_sandbox *sb;
        int64_t a = now_us();
        if (mb_sandbox_create(&t.opts, &sb, &err) != 0) {
            fprintf(stderr, "create: %s\n", err.msg);
            tmp_cleanup(&t);
            failures++;
            i--;
            if (failures > 3) {
                rc = 1;
                break;
            }
            continue;
        }
        int64_t b = now_us();
        if (do_exec) {
            const char *argv_true[] = {"true", NULL};
            mb_exec_spec es = {.argv = argv_true, .timeout_ms = 10000};
            mb_exec_result r;
            if (mb_sandbox_exec(sb, &es, &r, &err) != 0 || r.exit_code != 0) {
                fprintf(stderr, "exec: %s (exit %d)\n", err.msg, r.exit_code);
                failures++;
            }
            mb_exec_result_free(&r);
        }
        int64_t d = now_us();
        (void)mb_sandbox_destroy(sb, &err);
        int64_t e = now_us();
        (void)rmdir(t.dir);
        cr[i] = b - a;
        ex[i] = d - b;
        de[i] = e - d;
    }
    mb_zygote_stop(z);
    if (!rc) {
        if (json) printf("{");
        report("create", cr, n, json, 1);
        if (do_exec) report("exec", ex, n, json, 0);
        report("destroy", de, n, json, 0);
        if (json) printf(",\"failures\":%d}\n", failures);
    }
    free(cr);
    free(ex);
    free(de);
    return rc;
}

int mb_cmd_sandbox(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "run")) return cmd_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "bench")) return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(argv[1], "sweep")) return cmd_sweep(argc - 1, argv + 1);
    fprintf(stderr, "mcpbox sandbox: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
