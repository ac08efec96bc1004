# sandbox_probe.py - escape attempts made from inside a sandbox (run by
# tests/unit/test_sandbox_escape.c through mb_sandbox_exec as `python3 - ARGS`).
#
# Every probe returns {"ok": bool, "errno": int, "info": ...}: ok is True when
# the attempt *succeeded*. The C test asserts the exact outcome of each, and
# the "ctl_*" probes are positive controls (the same operation where it is
# allowed) so that a broken probe cannot pass by failing for the wrong reason.
#
# Arguments (key=value): host_pid, host_port, abstract, canary, other_ws,
# other_marker. Prints one JSON object.
import ctypes
import errno
import json
import os
import resource
import socket
import stat
import sys

ARGS = dict(a.split("=", 1) for a in sys.argv[1:])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# x86-64 system call numbers
NR = dict(
    ptrace=101, syslog=103, personality=135, adjtimex=159, chroot=161, acct=163,
    settimeofday=164, mount=165, umount2=166, swapon=167, reboot=169,
    sethostname=170, iopl=172, ioperm=173, init_module=175, quotactl=179,
    clock_settime=227, kexec_load=246, add_key=248, keyctl=250, unshare=272,
    perf_event_open=298, open_by_handle_at=304, setns=308, process_vm_readv=310,
    finit_module=313, kexec_file_load=320, bpf=321, userfaultfd=323,
    io_uring_setup=425, open_tree=428, fsopen=430, clone3=435, pidfd_getfd=438,
    pivot_root=155, mknod=133,
)

RESULTS = {}


def sc(name, *args):
    """Raw system call: returns (ok, errno)."""
    cargs = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(NR[name]), *cargs)
    return (r >= 0, 0 if r >= 0 else ctypes.get_errno())


def probe(name):
    def deco(fn):
        try:
            res = fn()
            if isinstance(res, tuple):
                ok, err = res[0], res[1]
                info = res[2] if len(res) > 2 else None
            else:
                ok, err, info = True, 0, res
        except OSError as e:
            ok, err, info = False, e.errno or 0, str(e)
        except Exception as e:  # a probe that breaks must not look like a pass
            ok, err, info = None, -1, "%s: %s" % (type(e).__name__, e)
        RESULTS[name] = {"ok": ok, "errno": err, "info": info}
        return fn
    return deco


def b(s):
    return ctypes.c_char_p(s.encode())


# ---------------------------------------------------------------- files
@probe("read_shadow")
def _():
    open("/etc/shadow").read()


@probe("read_canary")
def _():
    open(ARGS["canary"]).read()


@probe("read_other_workspace")
def _():
    open(os.path.join(ARGS["other_ws"], "secret.txt")).read()


@probe("other_marker_in_data")
def _():
    # True (= escape) if the other sandbox's file is visible in our /data
    found = any(ARGS["other_marker"] in n for n in os.listdir("/data"))
    return (found, 0, sorted(os.listdir("/data")))


@probe("list_root_home")
def _():
    os.listdir("/root")


@probe("list_home")
def _():
    os.listdir("/home")


@probe("ctl_read_data")
def _():
    return (open("/data/own.txt").read() == "own\n", 0)


@probe("write_etc")
def _():
    open("/etc/evil", "w").write("x")


@probe("write_root_dir")
def _():
    os.mkdir("/evil")


@probe("write_usr")
def _():
    open("/usr/bin/evil", "w").write("x")


@probe("write_mcpbox_bin")
def _():
    open("/.mcpbox/mcpbox", "r+b").write(b"x")


@probe("ctl_write_data_tmp")
def _():
    open("/data/new.txt", "w").write("x")
    open("/tmp/new.txt", "w").write("x")
    open("/dev/shm/new.txt", "w").write("x")


@probe("write_sys")
def _():
    open("/sys/kernel/uevent_helper", "w").write("/data/x")


@probe("sys_is_empty")
def _():
    return (len(os.listdir("/sys")) > 0, 0, os.listdir("/sys"))


@probe("write_sysrq")
def _():
    with open("/proc/sysrq-trigger", "w") as f:
        f.write("h")


@probe("write_core_pattern")
def _():
    with open("/proc/sys/kernel/core_pattern", "w") as f:
        f.write("|/data/x")


@probe("read_dev_mem")
def _():
    open("/dev/mem", "rb").read(1)


@probe("proc_self_root")
def _():
    # /proc/self/root is our own root: host paths stay invisible through it
    names = os.listdir("/proc/self/root")
    leaked = [n for n in ("home", "root", "work", "boot", "srv") if n in names]
    try:
        open("/proc/self/root/etc/shadow").read()
        leaked.append("etc/shadow")
    except OSError:
        pass
    try:
        os.stat("/proc/self/root/../../../" + ARGS["canary"].lstrip("/"))
        leaked.append("canary")
    except OSError:
        pass
    return (bool(leaked), 0, leaked)


@probe("proc_1_root")
def _():
    os.listdir("/proc/1/root")


@probe("proc_1_fd")
def _():
    # the init's fd numbers may be listed (same uid) but none may be opened
    # or resolved: that needs ptrace access, which children do not have
    opened = []
    errs = set()
    for fd in os.listdir("/proc/1/fd"):
        for how in ("readlink", "open"):
            try:
                if how == "readlink":
                    os.readlink("/proc/1/fd/" + fd)
                else:
                    os.close(os.open("/proc/1/fd/" + fd, os.O_RDONLY))
                opened.append(how + ":" + fd)
            except OSError as e:
                errs.add(e.errno)
    if opened:
        return (True, 0, opened)
    return (False, errs.pop() if len(errs) == 1 else -2, sorted(errs))


@probe("proc_1_environ")
def _():
    open("/proc/1/environ", "rb").read()


@probe("proc_any_cwd")
def _():
    # every /proc/*/cwd and /proc/*/root we can read must stay inside
    seen = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        for link in ("cwd", "root"):
            try:
                seen[p + "/" + link] = os.readlink("/proc/%s/%s" % (p, link))
            except OSError:
                pass
    bad = {k: v for k, v in seen.items() if v not in ("/", "/data", "/tmp")}
    return (bool(bad), 0, {"seen": len(seen), "bad": bad})


@probe("symlink_to_shadow")
def _():
    open("/data/link_shadow").read()


@probe("symlink_to_canary")
def _():
    open("/data/link_canary").read()


@probe("ctl_symlink_inside")
def _():
    return (open("/data/link_ok").read() == "own\n", 0)


@probe("hardlink_host_file")
def _():
    os.link("/usr/bin/python3", "/data/hl")


@probe("ctl_hardlink_inside")
def _():
    os.link("/data/own.txt", "/data/own_hl.txt")


@probe("inherited_fds")
def _():
    fds = sorted(int(x) for x in os.listdir("/proc/self/fd"))
    return (any(fd > 3 for fd in fds), 0, fds)


# ------------------------------------------------------------- processes
@probe("signal_host_pid")
def _():
    os.kill(int(ARGS["host_pid"]), 0)


@probe("see_other_processes")
def _():
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    cmds = []
    for p in pids:
        if p == str(os.getpid()):
            continue
        try:
            cmds.append(open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode())
        except OSError:
            pass
    leak = ARGS["host_pid"] in pids or any(ARGS["other_marker"] in c for c in cmds) or len(pids) > 20
    return (leak, 0, {"pids": pids, "cmds": cmds})


@probe("ptrace_init")
def _():
    return sc("ptrace", 16, 1, 0, 0)  # PTRACE_ATTACH


@probe("ptrace_traceme")
def _():
    return sc("ptrace", 0, 0, 0, 0)


@probe("process_vm_readv")
def _():
    buf = ctypes.create_string_buffer(8)
    iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 8)
    return sc("process_vm_readv", 1, iov, 1, iov, 1, 0)


@probe("pidfd_getfd")
def _():
    return sc("pidfd_getfd", 0, 0, 0)


@probe("ctl_kill_self")
def _():
    os.kill(os.getpid(), 0)


# ---------------------------------------------------------------- network
@probe("connect_host_loopback")
def _():
    s = socket.socket()
    s.settimeout(3)
    s.connect(("127.0.0.1", int(ARGS["host_port"])))


@probe("connect_outside")
def _():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("192.0.2.1", 53))  # TEST-NET-1: needs a route to exist
    s.send(b"x")


@probe("connect_host_abstract_unix")
def _():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + ARGS["abstract"])


@probe("ctl_loopback_inside")
def _():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    c = socket.create_connection(srv.getsockname(), timeout=3)
    c.close()


@probe("raw_socket")
def _():
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)


@probe("packet_socket")
def _():
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)


# ------------------------------------------------------- socket families
# Only AF_UNIX, AF_INET, AF_INET6 and NETLINK_ROUTE (read by getaddrinfo,
# getifaddrs, if_nameindex) are allowed; every other family is refused with
# EAFNOSUPPORT, other netlink protocols with EPROTONOSUPPORT.
AF_VSOCK, AF_ALG, AF_KEY, AF_XDP, AF_TIPC, AF_CAN, AF_BLUETOOTH = 40, 38, 15, 44, 30, 29, 31


def raw_socket(family, type_, proto):
    ctypes.set_errno(0)
    fd = libc.socket(family, type_, proto)
    if fd >= 0:
        os.close(fd)
        return (True, 0)
    return (False, ctypes.get_errno())


@probe("vsock_socket")
def _():
    return raw_socket(AF_VSOCK, socket.SOCK_STREAM, 0)


@probe("vsock_socket_dgram")
def _():
    return raw_socket(AF_VSOCK, socket.SOCK_DGRAM, 0)


@probe("vsock_socketpair")
def _():
    sv = (ctypes.c_int * 2)()
    ctypes.set_errno(0)
    r = libc.socketpair(AF_VSOCK, socket.SOCK_STREAM, 0, sv)
    return (r == 0, 0 if r == 0 else ctypes.get_errno())


@probe("vsock_high_bits")
def _():
    # the kernel reads the family as an int: upper bits must not slip past
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(41), ctypes.c_long((1 << 32) | AF_VSOCK),
                     ctypes.c_long(socket.SOCK_STREAM), ctypes.c_long(0))
    if r >= 0:
        os.close(r)
    return (r >= 0, 0 if r >= 0 else ctypes.get_errno())


@probe("alg_socket")
def _():
    return raw_socket(AF_ALG, socket.SOCK_SEQPACKET, 0)


@probe("key_socket")
def _():
    return raw_socket(AF_KEY, socket.SOCK_RAW, 2)


@probe("xdp_socket")
def _():
    return raw_socket(AF_XDP, socket.SOCK_RAW, 0)


@probe("tipc_socket")
def _():
    return raw_socket(AF_TIPC, socket.SOCK_RDM, 0)


@probe("packet_socket_dgram")
def _():
    return raw_socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0)


@probe("netlink_uevent")
def _():
    return raw_socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)  # NETLINK_KOBJECT_UEVENT


@probe("netlink_sock_diag")
def _():
    return raw_socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 4)  # NETLINK_SOCK_DIAG


@probe("netlink_audit")
def _():
    return raw_socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)  # NETLINK_AUDIT


@probe("ctl_netlink_route")
def _():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    s.close()
    names = [n for _, n in socket.if_nameindex()]
    return ("lo" in names, 0, names)


@probe("ctl_getaddrinfo")
def _():
    infos = socket.getaddrinfo("localhost", 80, 0, socket.SOCK_STREAM, 0, socket.AI_ADDRCONFIG)
    return (len(infos) > 0, 0, sorted(set(i[4][0] for i in infos)))


@probe("ctl_inet6_unix")
def _():
    srv = socket.socket(socket.AF_INET6)
    srv.bind(("::1", 0))
    srv.listen(1)
    c = socket.create_connection(srv.getsockname()[:2], timeout=3)
    c.close()
    a, b2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    a.send(b"x")
    ok = b2.recv(1) == b"x"
    u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    u.close()
    return (ok, 0)


# --------------------------------------------------------------- syscalls
@probe("mount_tmpfs")
def _():
    return sc("mount", b("none"), b("/tmp"), b("tmpfs"), 0, None)


@probe("mount_cgroup")
def _():
    return sc("mount", b("cgroup"), b("/tmp"), b("cgroup"), 0, b("memory"))


@probe("umount_data")
def _():
    return sc("umount2", b("/data"), 2)  # MNT_DETACH


@probe("pivot_root")
def _():
    return sc("pivot_root", b("/tmp"), b("/tmp"))


@probe("unshare_user")
def _():
    return sc("unshare", 0x10000000)


@probe("unshare_mount")
def _():
    return sc("unshare", 0x00020000)


@probe("setns_net")
def _():
    fd = os.open("/proc/self/ns/net", os.O_RDONLY)
    return sc("setns", fd, 0)


@probe("chroot")
def _():
    return sc("chroot", b("/tmp"))


@probe("fsopen")
def _():
    return sc("fsopen", b("tmpfs"), 0)


@probe("open_tree")
def _():
    return sc("open_tree", -100, b("/data"), 1)  # OPEN_TREE_CLONE


@probe("init_module")
def _():
    return sc("init_module", None, 0, b(""))


@probe("finit_module")
def _():
    fd = os.open("/dev/null", os.O_RDONLY)
    return sc("finit_module", fd, b(""), 0)


@probe("clock_settime")
def _():
    ts = (ctypes.c_long * 2)(0, 0)
    return sc("clock_settime", 0, ts)


@probe("settimeofday")
def _():
    tv = (ctypes.c_long * 2)(0, 0)
    return sc("settimeofday", tv, None)


@probe("adjtimex")
def _():
    buf = ctypes.create_string_buffer(256)
    return sc("adjtimex", buf)


@probe("raise_rlimit")
def _():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard + 1))
    except ValueError as e:
        return (False, errno.EPERM, str(e))


@probe("ctl_lower_rlimit")
def _():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 256), hard))


@probe("write_cgroup_limit")
def _():
    open("/sys/fs/cgroup/memory/memory.limit_in_bytes", "w").write("-1")


@probe("mknod_char_device")
def _():
    os.mknod("/data/mem", stat.S_IFCHR | 0o666, os.makedev(1, 1))


@probe("mknod_block_device")
def _():
    os.mknod("/tmp/sda", stat.S_IFBLK | 0o666, os.makedev(8, 0))


@probe("ctl_mkfifo")
def _():
    os.mkfifo("/data/fifo")


@probe("keyctl")
def _():
    return sc("keyctl", 0, -3, 0, 0)  # KEYCTL_GET_KEYRING_ID, session keyring


@probe("add_key")
def _():
    return sc("add_key", b("user"), b("k"), b("v"), 1, -3)


@probe("bpf")
def _():
    attr = ctypes.create_string_buffer(128)
    return sc("bpf", 0, attr, 128)  # BPF_MAP_CREATE


@probe("perf_event_open")
def _():
    attr = ctypes.create_string_buffer(128)
    ctypes.memmove(attr, (ctypes.c_uint32 * 2)(1, 128), 8)  # PERF_TYPE_SOFTWARE, size
    return sc("perf_event_open", attr, 0, -1, -1, 0)


@probe("kexec_load")
def _():
    return sc("kexec_load", 0, 0, None, 0)


@probe("kexec_file_load")
def _():
    return sc("kexec_file_load", -1, -1, 0, None, 4)


@probe("reboot")
def _():
    return sc("reboot", 0xfee1dead, 672274793, 0x4321fedc, None)  # RB_POWER_OFF


@probe("swapon")
def _():
    return sc("swapon", b("/data/own.txt"), 0)


@probe("userfaultfd")
def _():
    return sc("userfaultfd", 0)


@probe("io_uring_setup")
def _():
    params = ctypes.create_string_buffer(120)
    return sc("io_uring_setup", 4, params)


@probe("clone3")
def _():
    return sc("clone3", None, 0)


@probe("personality_exotic")
def _():
    return sc("personality", 0x0040000)  # ADDR_NO_RANDOMIZE


@probe("personality_read_implies_exec")
def _():
    return sc("personality", 0x0400000)


@probe("ctl_personality_query")
def _():
    return sc("personality", 0xffffffff)


@probe("sethostname")
def _():
    return sc("sethostname", b("evil"), 4)


@probe("iopl")
def _():
    return sc("iopl", 3)


@probe("ioperm")
def _():
    return sc("ioperm", 0x80, 1, 1)


@probe("open_by_handle_at")
def _():
    handle = ctypes.create_string_buffer(64)
    return sc("open_by_handle_at", -100, handle, 0)


@probe("syslog")
def _():
    buf = ctypes.create_string_buffer(64)
    return sc("syslog", 3, buf, 64)  # SYSLOG_ACTION_READ_ALL


@probe("acct")
def _():
    return sc("acct", b("/data/acct"))


@probe("quotactl")
def _():
    return sc("quotactl", 0x800002, b("/dev/null"), 0, None)  # Q_GETFMT


# -------------------------------------------------------------- hardening
@probe("confinement_state")
def _():
    st = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("NoNewPrivs", "Seccomp", "CapBnd", "CapEff", "CapPrm"):
            st[k] = v.strip()
    vfs = os.statvfs("/usr")
    st["usr_nosuid"] = bool(vfs.f_flag & os.ST_NOSUID)
    st["usr_rdonly"] = bool(vfs.f_flag & os.ST_RDONLY)
    st["data_nosuid"] = bool(os.statvfs("/data").f_flag & os.ST_NOSUID)
    st["su_is_setuid"] = bool(os.stat("/usr/bin/su").st_mode & stat.S_ISUID) if os.path.exists("/usr/bin/su") else None
    st["uid"] = os.getuid()
    return (True, 0, st)


print(json.dumps(RESULTS))
