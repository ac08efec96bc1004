/*
 * confine.c - what every process started inside a sandbox gets just before
 * exec: no_new_privs, a reduced capability set and a seccomp filter.
 *
 * Capabilities. Processes run as root inside the user namespace, which
 * matters only for objects that namespace owns (its /data, its /tmp, its own
 * processes). They keep the few capabilities ordinary programs expect of
 * root there: CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETUID, SETGID,
 * NET_BIND_SERVICE. Every other capability is dropped from the bounding,
 * permitted, effective, inheritable and ambient sets: SYS_ADMIN, SYS_MODULE,
 * SYS_PTRACE, SYS_TIME, SYS_BOOT, MKNOD, NET_ADMIN, NET_RAW, SYS_RAWIO,
 * SYS_RESOURCE, AUDIT_*, MAC_*, SYSLOG, BPF, PERFMON, SETPCAP, SETFCAP,
 * LINUX_IMMUTABLE, IPC_LOCK, IPC_OWNER, SYS_NICE, SYS_CHROOT, SYS_PACCT,
 * SYS_TTY_CONFIG, LEASE, WAKE_ALARM, BLOCK_SUSPEND, DAC_READ_SEARCH,
 * CHECKPOINT_RESTORE.
 *
 * Seccomp. The filter allows by default and returns EPERM for the calls that
 * reach kernel surface a sandboxed program has no business with (modules,
 * kexec, bpf, perf, keyrings, every mount API, namespace creation and entry,
 * ptrace and cross-process memory access, reboot, swap, clocks, accounting,
 * quotas, file handles, userfaultfd, port I/O, the kernel log, io_uring,
 * fanotify, legacy calls), for clone/unshare with namespace flags, for mknod
 * of devices, for exotic personalities and for socket families other than
 * unix, inet, inet6 and netlink-route (EAFNOSUPPORT / EPROTONOSUPPORT). clone3 returns ENOSYS so that
 * libc falls back to clone, whose flags the filter can inspect. Calls from
 * another architecture (32-bit int 0x80) kill the process.
 *
 * The filter is compiled once by the zygote (mb__confine_build) and loaded
 * as raw BPF by each sandbox's init into itself (mb__confine_install) once
 * its root is assembled, before it accepts a request: every shepherd and
 * command is a fork of the init and inherits it, and a spawn does not pay
 * for the kernel's check and JIT of the program again (a good part of a
 * spawn's kernel time on this project's test machine). The init needs none
 * of the calls the filter refuses. The init drops the bounding set the same
 * way, once (about 90 prctl calls a spawn saved, at several microseconds
 * each in a virtual machine); it never execs, so its own capabilities are
 * what they were, and each command still sets its permitted, effective,
 * inheritable and ambient sets itself.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const cap_value_t kept_caps[] = {
    CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID,
    CAP_KILL,  CAP_SETUID,       CAP_SETGID, CAP_NET_BIND_SERVICE,
};

uint64_t mb__confine_kept_caps(void)
{
    uint64_t m = 0;
    for (size_t i = 0; i < sizeof kept_caps / sizeof kept_caps[0]; i++) m |= 1ull << kept_caps[i];
    return m;
}

/* Denied outright with EPERM. Names unknown to this libseccomp or absent on
 * this architecture are skipped. */
static const char *const denied[] = {
    /* kernel modules and kexec */
    "init_module", "finit_module", "delete_module", "create_module", "query_module",
    "get_kernel_syms", "kexec_load", "kexec_file_load",
    /* bpf, perf, keyrings */
    "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
    /* every mount API and namespace entry */
    "mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen",
    "fsmount", "fspick", "fsconfig", "mount_setattr", "setns", "chroot",
    /* other processes' memory and descriptors */
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    /* the machine */
    "reboot", "swapon", "swapoff", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "stime", "acct", "quotactl", "quotactl_fd", "sethostname", "setdomainname",
    "iopl", "ioperm", "syslog", "vhangup",
    /* file handles bypass path checks */
    "open_by_handle_at", "name_to_handle_at",
    /* kernel attack surface without use here */
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "fanotify_init",
    "lookup_dcookie", "nfsservctl", "uselib", "_sysctl", "sysfs", "ustat", "vm86", "vm86old",
    NULL,
};

static const unsigned long ns_flags[] = {
    CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
    CLONE_NEWCGROUP,
};

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Socket families. Sandboxes need AF_UNIX, AF_INET, AF_INET6 and, for
 * glibc's getaddrinfo (AI_ADDRCONFIG), getifaddrs and if_nameindex (python,
 * node, git, chromium), AF_NETLINK with NETLINK_ROUTE: in the sandbox's own
 * network namespace, and without CAP_NET_ADMIN, that only reads its own
 * interfaces. socket() and socketpair() of any other family (vsock, whose
 * port space is the host's; packet; alg; key; xdp; tipc; bluetooth; ... and
 * every number up to and past AF_MAX) fail with EAFNOSUPPORT, as for a
 * family the kernel lacks, and other netlink protocols (uevent, sock_diag,
 * audit, xfrm, ...) with EPROTONOSUPPORT: callers see a clean error, nothing
 * is killed. The filter compares all 64 bits of the argument, so a family
 * with high bits set (the kernel reads an int) is refused as well. */
#define SB_AF_LIMIT 46 /* AF_MAX of Linux 6.x; larger numbers are refused wholesale */

static int socket_rules(scmp_filter_ctx ctx, mb_err *err)
{
    static const int allowed[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
    const uint32_t noaf = SCMP_ACT_ERRNO(EAFNOSUPPORT);
    const int calls[2] = {SCMP_SYS(socket), SCMP_SYS(socketpair)};
    int rc;
    for (int c = 0; c < 2; c++) {
        for (int fam = 0; fam < SB_AF_LIMIT; fam++) {
            int ok = 0;
            for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) ok |= allowed[i] == fam;
            if (ok) continue;
            if ((rc = seccomp_rule_add(ctx, noaf, calls[c], 1,
                                       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fam, 0))) != 0)
                return mb_err_sys(err, -rc, "seccomp rule for socket family %d", fam);
        }
        if ((rc = seccomp_rule_add(ctx, noaf, calls[c], 1,
                                   SCMP_A0(SCMP_CMP_GE, (scmp_datum_t)SB_AF_LIMIT, 0))) != 0)
            return mb_err_sys(err, -rc, "seccomp rule for socket families");
    }
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), 2,
                               SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)AF_NETLINK, 0),
                               SCMP_A2(SCMP_CMP_NE, (scmp_datum_t)NETLINK_ROUTE, 0))) != 0)
        return mb_err_sys(err, -rc, "seccomp rule for netlink sockets");
    /* a netlink socketpair does not exist; refuse it like the rest */
    if ((rc = seccomp_rule_add(ctx, noaf, SCMP_SYS(socketpair), 1,
                               SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)AF_NETLINK, 0))) != 0)
        return mb_err_sys(err, -rc, "seccomp rule for netlink socketpair");
    return 0;
}

static int build_ctx(scmp_filter_ctx ctx, mb_err *err)
{
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
    int rc;
    for (const char *const *n = denied; *n; n++) {
        int nr = seccomp_syscall_resolve_name(*n);
        if (nr == __NR_SCMP_ERROR || nr < 0) continue;
        if ((rc = seccomp_rule_add(ctx, eperm, nr, 0)) != 0)
            return mb_err_sys(err, -rc, "seccomp rule for %s", *n);
    }
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) != 0)
        return mb_err_sys(err, -rc, "seccomp rule for clone3");
    /* clone: flags are argument 0 on x86-64 (and every architecture but s390). */
    for (size_t i = 0; i < sizeof ns_flags / sizeof ns_flags[0]; i++) {
        if ((rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(clone), 1,
                                   SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]))) != 0)
            return mb_err_sys(err, -rc, "seccomp rule for clone");
        if ((rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(unshare), 1,
                                   SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]))) != 0)
            return mb_err_sys(err, -rc, "seccomp rule for unshare");
    }
    if ((rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(unshare), 1,
                               SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWTIME, CLONE_NEWTIME))) != 0)
        return mb_err_sys(err, -rc, "seccomp rule for unshare");
    /* mknod(path, mode, dev) / mknodat(dirfd, path, mode, dev) of devices. */
    static const unsigned dev_types[] = {S_IFCHR, S_IFBLK};
    for (int i = 0; i < 2; i++) {
        if ((rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(mknod), 1,
                                   SCMP_A1(SCMP_CMP_MASKED_EQ, S_IFMT, dev_types[i]))) != 0 ||
            (rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(mknodat), 1,
                                   SCMP_A2(SCMP_CMP_MASKED_EQ, S_IFMT, dev_types[i]))) != 0)
            return mb_err_sys(err, -rc, "seccomp rule for mknod");
    }
    if ((rc = socket_rules(ctx, err))) return rc;
    /* personality: only PER_LINUX (0), PER_LINUX32 (8), UNAME26 (0x20000),
     * their union (0x20008) and the query 0xffffffff are allowed; the rest
     * (READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, ADDR_NO_RANDOMIZE, foreign
     * personas...) is refused. libseccomp allows one comparison per argument
     * per rule, so the refused set is covered by masked-equality cubes: with F
     * = every bit but 3 and 17, an allowed value has F all clear or (the
     * query) all set; so refuse when two F bits adjacent in bit order differ,
     * or when F is all set but bit 3 or 17 is clear. */
    uint32_t fbits[30];
    int nf = 0;
    uint32_t fmask = 0;
    for (int b = 0; b < 32; b++)
        if (b != 3 && b != 17) {
            fbits[nf++] = 1u << b;
            fmask |= 1u << b;
        }
    for (int k = 0; k + 1 < nf; k++) {
        uint32_t m = fbits[k] | fbits[k + 1];
        uint32_t pats[2] = {fbits[k], fbits[k + 1]};
        for (int i = 0; i < 2; i++)
            if ((rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(personality), 1,
                                       SCMP_A0(SCMP_CMP_MASKED_EQ, m, pats[i]))) != 0)
                return mb_err_sys(err, -rc, "seccomp rule for personality");
    }
    uint32_t extra[2] = {1u << 3, 1u << 17};
    for (int i = 0; i < 2; i++)
        if ((rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(personality), 1,
                                   SCMP_A0(SCMP_CMP_MASKED_EQ, fmask | extra[i], fmask))) != 0)
            return mb_err_sys(err, -rc, "seccomp rule for personality");
    return 0;
}

int mb__confine_build(mb__confine *c, mb_err *err)
{
    memset(c, 0, sizeof *c);
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) return mb_err_set(err, MB_EIO, "seccomp_init failed");
    int rc = 0;
    if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0 ||
        seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0) {
        rc = mb_err_set(err, MB_EIO, "cannot set seccomp filter attributes");
        goto out;
    }
    if ((rc = build_ctx(ctx, err))) goto out;
    int fd = memfd_create("mcpbox-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        rc = mb_err_sys(err, errno, "memfd_create");
        goto out;
    }
    int e = seccomp_export_bpf(ctx, fd);
    if (e != 0) {
        close(fd);
        rc = mb_err_sys(err, -e, "cannot export the seccomp filter");
        goto out;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
        size / (off_t)sizeof(struct sock_filter) > 0xffff) {
        close(fd);
        rc = mb_err_set(err, MB_EIO, "the seccomp filter has an odd size (%lld)", (long long)size);
        goto out;
    }
    c->insns = mb_malloc((size_t)size);
    if (pread(fd, c->insns, (size_t)size, 0) != size) {
        close(fd);
        free(c->insns);
        c->insns = NULL;
        rc = mb_err_sys(err, errno, "cannot read the seccomp filter back");
        goto out;
    }
    close(fd);
    c->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
out:
    seccomp_release(ctx);
    return rc;
}

void mb__confine_free(mb__confine *c)
{
    free(c->insns);
    c->insns = NULL;
    c->len = 0;
}

static int load(const mb__confine *c)
{
    struct sock_fprog prog = {.len = c->len, .filter = c->insns};
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0 ? -errno : 0;
}

/* Drops from the calling process's bounding set every capability children
 * do not keep: one prctl per capability the kernel knows (libcap learns how
 * many once, when the process starts: cap_max_bits). */
static int drop_bounding(void)
{
    uint64_t keep = mb__confine_kept_caps();
    cap_value_t last = cap_max_bits();
    if (last <= 0) last = 64; /* unknown: try them all (EINVAL for the unknown) */
    for (cap_value_t cap = 0; cap < last && cap <= 63; cap++) {
        if (keep & (1ull << cap)) continue;
        if (cap_drop_bound(cap) != 0 && errno != EINVAL) return -errno;
    }
    return 0;
}

int mb__confine_install(mb__confine *c)
{
    int rc = c->insns ? load(c) : -EINVAL;
    if (!rc) rc = drop_bounding();
    if (!rc) c->in_force = 1;
    return rc;
}

int mb__confine_apply(const mb__confine *c)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    int rc = c->in_force ? 0 : drop_bounding();
    if (rc) return rc;
    (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    cap_t caps = cap_init();
    if (!caps) return -ENOMEM;
    int n = (int)(sizeof kept_caps / sizeof kept_caps[0]);
    if (cap_set_flag(caps, CAP_PERMITTED, n, kept_caps, CAP_SET) != 0 ||
        cap_set_flag(caps, CAP_EFFECTIVE, n, kept_caps, CAP_SET) != 0 ||
        cap_set_flag(caps, CAP_INHERITABLE, n, kept_caps, CAP_SET) != 0 || cap_set_proc(caps) != 0) {
        int e = errno;
        cap_free(caps);
        return -e;
    }
    cap_free(caps);
    return c->in_force ? 0 : load(c);
}
