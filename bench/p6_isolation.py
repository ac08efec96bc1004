"""P6 isolation: create a sandbox and start the filesystem server in it until
the server answers tools/list on stdio, then end it; `mcpbox sandbox run`
(namespaces, pivot_root root, tmpfs /data with a quota, cgroup limits,
seccomp, init) against `bwrap` (Debian bubblewrap: namespaces, a read-only
/usr, tmpfs /tmp, /data bound from the host; no cgroup, no seccomp, no quota)
and `unshare` (namespaces only, host root), all starting the same binary,
`mcpbox mcp filesystem /data`.

Checks: the tools/list answer must list the 14 filesystem tools, and every
run must exit 0 after its stdin closes."""
import json
import shutil
import subprocess
import time

import benchlib as B

MSGS = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "mcpbox-bench", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
INPUT = "".join(json.dumps(m) + "\n" for m in MSGS).encode()


def argv_for(kind, ws):
    if kind == "mcpbox":
        return [B.MCPBOX, "sandbox", "run", "--quiet", "--", "/.mcpbox/mcpbox", "mcp",
                "filesystem", "/data"]
    if kind == "bwrap":
        return ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
                "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
                "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc", "/etc",
                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                "--bind", ws, "/data", "--ro-bind", B.MCPBOX, "/.mcpbox/mcpbox",
                "--", "/.mcpbox/mcpbox", "mcp", "filesystem", "/data"]
    if kind == "unshare":
        return ["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork",
                "--net", "--ipc", "--uts", "--kill-child", B.MCPBOX, "mcp", "filesystem", ws]
    raise ValueError(kind)


def once(argv, timeout=30):
    """Seconds until tools/list was answered, and until the process ended."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        p.stdin.write(INPUT)
        p.stdin.flush()
        ready = None
        deadline = t0 + timeout
        while time.perf_counter() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            m = json.loads(line)
            if m.get("id") == 2:
                tools = [t["name"] for t in m["result"]["tools"]]
                if len(tools) != 14 or "read_text_file" not in tools:
                    raise B.BenchError("%s: tools/list gave %s" % (argv[0], tools))
                ready = time.perf_counter() - t0
                break
        if ready is None:
            raise B.BenchError("%s: no tools/list answer: %s" % (
                " ".join(argv[:3]), p.stderr.read()[:300]))
        p.stdin.close()
        rc = p.wait(timeout)
        done = time.perf_counter() - t0
        if rc != 0:
            raise B.BenchError("%s exited %d: %s" % (" ".join(argv[:3]), rc,
                                                      p.stderr.read()[:300]))
        return ready, done
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def run(ctx):
    ws = ctx.tmp("p6-ws")
    n = 10 if ctx.quick else 40
    kinds = ["mcpbox", "bwrap", "unshare"]
    if not shutil.which("bwrap"):
        kinds.remove("bwrap")
    res = {}
    for k in kinds:
        argv = argv_for(k, ws)
        for _ in range(3):  # warm-up: page cache, first namespaces
            once(argv)
        ready, done = [], []
        for _ in range(n):
            r, d = once(argv)
            ready.append(r * 1000)
            done.append(d * 1000)
        res[k] = {"ready": B.summary(ready), "total": B.summary(done)}
        ctx.log("  P6 %s: ready %s, total %s" % (k, res[k]["ready"], res[k]["total"]))
    rows = []
    m = res["mcpbox"]
    for alt in kinds[1:]:
        a = res[alt]
        r = B.Row("P6.%s" % alt,
                  "sandbox create + filesystem server start until tools/list (stdio), %d runs" % n,
                  B.fmt_lat(m["ready"]) + "; with teardown p50 %s ms" % B.fmt_ms(
                      m["total"]["p50_ms"]),
                  B.fmt_lat(a["ready"]) + "; with teardown p50 %s ms" % B.fmt_ms(
                      a["total"]["p50_ms"]),
                  alt_name={"bwrap": "bwrap (namespaces, ro /usr; no cgroup/seccomp/quota)",
                            "unshare": "unshare (namespaces only, host root)"}[alt],
                  ratio=B.ratio(a["ready"]["p50_ms"], m["ready"]["p50_ms"]))
        r.note = "ratio = alternative p50 / mcpbox p50"
        r.data = res
        rows.append(r)
    return rows
