/*
 * test_sandbox_escape.c - escape attempts from inside a sandbox, each
 * asserted to fail in the specific way it should, next to positive controls
 * that prove the probe itself works.
 *
 * Setup: two sandboxes A and B under a 0700 scratch dir that also holds a
 * "daemon data dir" canary. B holds a secret file and runs a process with a
 * marker in its command line. The host listens on 127.0.0.1 and on an
 * abstract unix socket, plants symlinks to /etc/shadow and to the canary in
 * A's workspace, and keeps a descriptor open without O_CLOEXEC. Then A runs
 * tests/unit/sandbox_probe.py (python3 with ctypes) through mb_sandbox_exec;
 * every probe's outcome is one test below.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "sandbox_testlib.h"

typedef struct probe_case {
    const char *name;
    int expect_ok;   /* 1 = must succeed (control), 0 = must fail */
    int errnos[4];   /* acceptable errnos when it fails (0-terminated; empty = any) */
} probe_case;

static sbt_env env;
static sbt_box box_a, box_b;
static mb_child b_proc;
static json_t *results;
static char canary[512];
static char marker[64];
static char abstract_name[64];
static int host_port;
static int leaked_fd = -1, tcp_fd = -1, unix_fd = -1;
static int host_link_errno;

static char *slurp(const char *path)
{
    char *data = NULL;
    if (mb_read_file(path, 1 << 20, &data, NULL, NULL) != 0) return NULL;
    return data;
}

static int listen_tcp(void)
{
    tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (bind(tcp_fd, (struct sockaddr *)&sa, sizeof sa) || listen(tcp_fd, 8) ||
        getsockname(tcp_fd, (struct sockaddr *)&sa, &len))
        return -1;
    host_port = ntohs(sa.sin_port);
    return 0;
}

static int listen_abstract(void)
{
    unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(abstract_name, sizeof abstract_name, "mcpbox-escape-%d", (int)getpid());
    memcpy(sa.sun_path + 1, abstract_name, strlen(abstract_name));
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract_name));
    return bind(unix_fd, (struct sockaddr *)&sa, len) || listen(unix_fd, 8) ? -1 : 0;
}

static int setup(void **state)
{
    if (!sbt_is_root()) return 0;
    if (sbt_env_init(&env, "escape")) return -1;
    /* The "daemon's data dir" with a secret the sandboxes must not see. */
    char dir[400];
    snprintf(dir, sizeof dir, "%s/daemon-data", env.root);
    mkdir(dir, 0700);
    snprintf(canary, sizeof canary, "%s/secret", dir);
    FILE *f = fopen(canary, "w");
    fputs("canary\n", f);
    fclose(f);

    mb_sandbox_limits lim = {.memory_bytes = 256u << 20, .disk_bytes = 64u << 20};
    if (sbt_box_create(&box_a, &env, "a", &lim) || sbt_box_create(&box_b, &env, "b", &lim))
        return -1;

    /* B: a secret file and a marked process. */
    snprintf(marker, sizeof marker, "marker-b-%08x", (unsigned)box_b.opts.uid_base);
    sbt_put(&box_b, "secret.txt", "secret of b\n");
    sbt_put(&box_b, marker, "x\n");
    char script[128];
    snprintf(script, sizeof script, "sleep 1000; : %s", marker);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    mb_spawn_spec spec = {.argv = argv};
    mb_err err;
    if (mb_sandbox_spawn(box_b.sb, &spec, &b_proc, &err)) {
        fprintf(stderr, "spawn in b: %s\n", err.msg);
        return -1;
    }

    /* A: files and planted links. */
    sbt_put(&box_a, "own.txt", "own\n");
    char path[1024];
    snprintf(path, sizeof path, "%s/link_shadow", box_a.workspace);
    if (symlink("/etc/shadow", path)) return -1;
    snprintf(path, sizeof path, "%s/link_canary", box_a.workspace);
    if (symlink(canary, path)) return -1;
    snprintf(path, sizeof path, "%s/link_ok", box_a.workspace);
    if (symlink("/data/own.txt", path)) return -1;
    /* A host-side hardlink of a host file into the workspace must fail too. */
    snprintf(path, sizeof path, "%s/hardlink", box_a.workspace);
    host_link_errno = link("/etc/hostname", path) == 0 ? 0 : errno;

    if (listen_tcp() || listen_abstract()) return -1;
    /* Deliberately inheritable: it must not show up inside. */
    leaked_fd = open("/etc/hostname", O_RDONLY);

    char probe_path[PATH_MAX];
    snprintf(probe_path, sizeof probe_path, "%s", __FILE__);
    char *slash = strrchr(probe_path, '/');
    snprintf(slash ? slash + 1 : probe_path, sizeof probe_path - (size_t)(slash ? slash + 1 - probe_path : 0),
             "sandbox_probe.py");
    char *script_text = slurp(probe_path);
    if (!script_text) {
        fprintf(stderr, "cannot read %s\n", probe_path);
        return -1;
    }
    char a1[64], a2[64], a3[128], a4[600], a5[600], a6[96];
    snprintf(a1, sizeof a1, "host_pid=%d", (int)getpid());
    snprintf(a2, sizeof a2, "host_port=%d", host_port);
    snprintf(a3, sizeof a3, "abstract=%s", abstract_name);
    snprintf(a4, sizeof a4, "canary=%s", canary);
    snprintf(a5, sizeof a5, "other_ws=%s", box_b.workspace);
    snprintf(a6, sizeof a6, "other_marker=%s", marker);
    const char *pargv[] = {"python3", "-", a1, a2, a3, a4, a5, a6, NULL};
    mb_exec_spec es = {.argv = pargv, .stdin_data = script_text, .stdin_len = strlen(script_text),
                       .timeout_ms = 60000};
    mb_exec_result res;
    int rc = mb_sandbox_exec(box_a.sb, &es, &res, &err);
    free(script_text);
    if (rc || res.exit_code != 0) {
        fprintf(stderr, "probe failed (rc %d, exit %d): %s\n%s\n", rc, res.exit_code,
                rc ? err.msg : "", res.err.data ? res.err.data : "");
        mb_exec_result_free(&res);
        return -1;
    }
    json_error_t jerr;
    results = json_loads(res.out.data, 0, &jerr);
    mb_exec_result_free(&res);
    if (!results) {
        fprintf(stderr, "probe output is not JSON: %s\n", jerr.text);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    if (!sbt_is_root()) return 0;
    json_decref(results);
    mb_child_close(&b_proc);
    mb_err err;
    if (box_a.sb) mb_sandbox_destroy(box_a.sb, &err);
    if (box_b.sb) mb_sandbox_destroy(box_b.sb, &err);
    if (leaked_fd >= 0) close(leaked_fd);
    if (tcp_fd >= 0) close(tcp_fd);
    if (unix_fd >= 0) close(unix_fd);
    sbt_env_done(&env);
    return 0;
}

static void check_probe(void **state)
{
    if (!sbt_is_root()) skip();
    const probe_case *pc = *state;
    json_t *r = json_object_get(results, pc->name);
    if (!r) fail_msg("probe %s did not run", pc->name);
    json_t *ok = json_object_get(r, "ok");
    int err = (int)json_integer_value(json_object_get(r, "errno"));
    char *dump = json_dumps(r, JSON_COMPACT);
    if (json_is_null(ok)) fail_msg("probe %s broke: %s", pc->name, dump);
    if (pc->expect_ok) {
        if (!json_is_true(ok)) fail_msg("control %s should succeed: %s", pc->name, dump);
    } else {
        if (!json_is_false(ok)) fail_msg("escape %s succeeded: %s", pc->name, dump);
        if (pc->errnos[0]) {
            int match = 0;
            for (int i = 0; i < 4 && pc->errnos[i]; i++) match |= pc->errnos[i] == err;
            if (!match) fail_msg("escape %s failed with errno %d, not the expected one: %s",
                                 pc->name, err, dump);
        }
    }
    free(dump);
}

/* The expected outcome of every probe in sandbox_probe.py. errno 0 in the
 * list means "the attempt returned normally but found nothing". */
static const probe_case cases[] = {
    /* files outside the root */
    {"read_shadow", 0, {ENOENT}},
    {"read_canary", 0, {ENOENT}},
    {"read_other_workspace", 0, {ENOENT}},
    {"other_marker_in_data", 0, {0}},
    {"list_root_home", 0, {ENOENT}},
    {"list_home", 0, {ENOENT}},
    {"ctl_read_data", 1, {0}},
    /* writes outside /data */
    {"write_etc", 0, {EROFS}},
    {"write_root_dir", 0, {EROFS}},
    {"write_usr", 0, {EROFS}},
    {"write_mcpbox_bin", 0, {EACCES, EROFS, ETXTBSY}},
    {"ctl_write_data_tmp", 1, {0}},
    {"write_sys", 0, {ENOENT}},
    {"sys_is_empty", 0, {0}},
    {"write_sysrq", 0, {ENOENT, EACCES, EROFS}},
    {"write_core_pattern", 0, {EACCES, EROFS}},
    {"read_dev_mem", 0, {ENOENT}},
    /* /proc tricks */
    {"proc_self_root", 0, {0}},
    {"proc_1_root", 0, {EACCES}},
    {"proc_1_fd", 0, {EACCES}},
    {"proc_1_environ", 0, {EACCES}},
    {"proc_any_cwd", 0, {0}},
    /* planted links, fd passing */
    {"symlink_to_shadow", 0, {ENOENT}},
    {"symlink_to_canary", 0, {ENOENT}},
    {"ctl_symlink_inside", 1, {0}},
    {"hardlink_host_file", 0, {EXDEV}},
    {"ctl_hardlink_inside", 1, {0}},
    {"inherited_fds", 0, {0}},
    /* processes */
    {"signal_host_pid", 0, {ESRCH}},
    {"see_other_processes", 0, {0}},
    {"ptrace_init", 0, {EPERM}},
    {"ptrace_traceme", 0, {EPERM}},
    {"process_vm_readv", 0, {EPERM}},
    {"pidfd_getfd", 0, {EPERM}},
    {"ctl_kill_self", 1, {0}},
    /* network */
    {"connect_host_loopback", 0, {ECONNREFUSED}},
    {"connect_outside", 0, {ENETUNREACH}},
    {"connect_host_abstract_unix", 0, {ECONNREFUSED}},
    {"ctl_loopback_inside", 1, {0}},
    {"raw_socket", 0, {EPERM}},
    {"packet_socket", 0, {EPERM, EAFNOSUPPORT}},
    /* socket families: only unix, inet, inet6 and NETLINK_ROUTE */
    {"vsock_socket", 0, {EAFNOSUPPORT}},
    {"vsock_socket_dgram", 0, {EAFNOSUPPORT}},
    {"vsock_socketpair", 0, {EAFNOSUPPORT}},
    {"vsock_high_bits", 0, {EAFNOSUPPORT}},
    {"alg_socket", 0, {EAFNOSUPPORT}},
    {"key_socket", 0, {EAFNOSUPPORT}},
    {"xdp_socket", 0, {EAFNOSUPPORT}},
    {"tipc_socket", 0, {EAFNOSUPPORT}},
    {"packet_socket_dgram", 0, {EAFNOSUPPORT}},
    {"netlink_uevent", 0, {EPROTONOSUPPORT}},
    {"netlink_sock_diag", 0, {EPROTONOSUPPORT}},
    {"netlink_audit", 0, {EPROTONOSUPPORT}},
    {"ctl_netlink_route", 1, {0}},
    {"ctl_getaddrinfo", 1, {0}},
    {"ctl_inet6_unix", 1, {0}},
    /* mounts and namespaces */
    {"mount_tmpfs", 0, {EPERM}},
    {"mount_cgroup", 0, {EPERM}},
    {"umount_data", 0, {EPERM}},
    {"pivot_root", 0, {EPERM}},
    {"unshare_user", 0, {EPERM}},
    {"unshare_mount", 0, {EPERM}},
    {"setns_net", 0, {EPERM}},
    {"chroot", 0, {EPERM}},
    {"fsopen", 0, {EPERM}},
    {"open_tree", 0, {EPERM}},
    /* kernel and machine */
    {"init_module", 0, {EPERM}},
    {"finit_module", 0, {EPERM}},
    {"clock_settime", 0, {EPERM}},
    {"settimeofday", 0, {EPERM}},
    {"adjtimex", 0, {EPERM}},
    {"raise_rlimit", 0, {EPERM}},
    {"ctl_lower_rlimit", 1, {0}},
    {"write_cgroup_limit", 0, {ENOENT}},
    {"mknod_char_device", 0, {EPERM}},
    {"mknod_block_device", 0, {EPERM}},
    {"ctl_mkfifo", 1, {0}},
    {"keyctl", 0, {EPERM}},
    {"add_key", 0, {EPERM}},
    {"bpf", 0, {EPERM}},
    {"perf_event_open", 0, {EPERM}},
    {"kexec_load", 0, {EPERM}},
    {"kexec_file_load", 0, {EPERM}},
    {"reboot", 0, {EPERM}},
    {"swapon", 0, {EPERM}},
    {"userfaultfd", 0, {EPERM}},
    {"io_uring_setup", 0, {EPERM}},
    {"clone3", 0, {ENOSYS}},
    {"personality_exotic", 0, {EPERM}},
    {"personality_read_implies_exec", 0, {EPERM}},
    {"ctl_personality_query", 1, {0}},
    {"sethostname", 0, {EPERM}},
    {"iopl", 0, {EPERM}},
    {"ioperm", 0, {EPERM}},
    {"open_by_handle_at", 0, {EPERM}},
    {"syslog", 0, {EPERM}},
    {"acct", 0, {EPERM}},
    {"quotactl", 0, {EPERM}},
};

/* no_new_privs, seccomp mode 2, the reduced capability sets, nosuid binds. */
static void confinement_state(void **state)
{
    if (!sbt_is_root()) skip();
    json_t *info = json_object_get(json_object_get(results, "confinement_state"), "info");
    assert_non_null(info);
    assert_string_equal(json_string_value(json_object_get(info, "NoNewPrivs")), "1");
    assert_string_equal(json_string_value(json_object_get(info, "Seccomp")), "2");
    char want[32];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)0x4fbull);
    assert_string_equal(json_string_value(json_object_get(info, "CapBnd")), want);
    assert_string_equal(json_string_value(json_object_get(info, "CapEff")), want);
    assert_true(json_is_true(json_object_get(info, "usr_nosuid")));
    assert_true(json_is_true(json_object_get(info, "usr_rdonly")));
    assert_true(json_is_true(json_object_get(info, "data_nosuid")));
    assert_int_equal(json_integer_value(json_object_get(info, "uid")), 0);
}

/* The host cannot hardlink one of its files into a workspace either. */
static void host_hardlink_into_workspace(void **state)
{
    if (!sbt_is_root()) skip();
    assert_int_equal(host_link_errno, EXDEV);
}

/* Positive controls across the boundary: B sees its own secret; a file
 * written inside A appears on the host; B's process really was running. */
static void controls_across_boundary(void **state)
{
    if (!sbt_is_root()) skip();
    mb_exec_result r;
    assert_int_equal(sbt_sh(box_b.sb, "cat /data/secret.txt; pgrep -f marker-b- >/dev/null && echo running", 10000, &r), 0);
    assert_string_equal(r.out.data, "secret of b\nrunning\n");
    mb_exec_result_free(&r);
    char path[1024];
    snprintf(path, sizeof path, "%s/new.txt", box_a.workspace);
    char *text = slurp(path);
    assert_non_null(text);
    assert_string_equal(text, "x");
    free(text);
}

int main(void)
{
    size_t n = sizeof cases / sizeof cases[0];
    struct CMUnitTest *tests = calloc(n + 3, sizeof *tests);
    for (size_t i = 0; i < n; i++) {
        tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate(check_probe, (void *)&cases[i]);
        tests[i].name = cases[i].name;
    }
    tests[n] = (struct CMUnitTest)cmocka_unit_test(confinement_state);
    tests[n + 1] = (struct CMUnitTest)cmocka_unit_test(host_hardlink_into_workspace);
    tests[n + 2] = (struct CMUnitTest)cmocka_unit_test(controls_across_boundary);
    int rc = _cmocka_run_group_tests("sandbox_escape", tests, n + 3, setup, teardown);
    free(tests);
    return rc;
}
