"""What every benchmark of bench/ shares: the daemon under test, a light
keep-alive HTTP client for the REST API and MCP URLs, the load generator,
statistics, machine facts and the result rows that bench/run writes into
docs/PERFORMANCE.md.

Every row records how to reproduce it (`bench/run --only ID`), the figures of
mcpbox and of the alternative a user would run instead, their ratio, and the
number of wrong or failed answers (a fast wrong answer is a failure)."""
import http.client
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCPBOX = os.path.join(ROOT, "build", "mcpbox")
LOADGEN = os.path.join(ROOT, "build", "bench", "loadgen")
NODE_DIR = os.path.join(ROOT, "tests", "node")
NODE = os.path.join(NODE_DIR, "node22")
API_KEY = "bench-key-0123456789abcdef"
ATLAS_SERVERS = ["filesystem", "git", "terminal", "desktop-commander", "arxiv",
                 "code-executor", "code-runner", "localmemory"]


class BenchError(Exception):
    """A benchmark could not produce a correct measurement."""


# ------------------------------------------------------------------ stats

def pct(values, p):
    """The p-quantile (0..1) of values, nearest rank."""
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]


def summary(lat_ms, seconds=None):
    """p50/p99/max (ms), count and throughput of one run's latencies."""
    out = {"n": len(lat_ms), "p50_ms": pct(lat_ms, 0.5), "p99_ms": pct(lat_ms, 0.99),
           "max_ms": max(lat_ms) if lat_ms else 0.0}
    if seconds:
        out["throughput"] = len(lat_ms) / seconds
    return out


def acquire_probe(url, names, benchmark, wait_for, n, warmup=2, timeout=60.0):
    """build/bench/acquire_probe (bench/acquire_probe.c): n acquires after
    `warmup`, each until every server in wait_for (all if empty) answered
    tools/list in a new session, then released. Returns (ready ms list, POST
    ms list, errors, first error, the client's CPU seconds)."""
    body = json.dumps({"server_names": names, "benchmark": benchmark})
    argv = [ROOT + "/build/bench/acquire_probe", "--url", url, "--key", API_KEY,
            "--body", body, "--n", str(n), "--warmup", str(warmup),
            "--timeout", str(int(timeout))]
    for w in wait_for:
        argv += ["--wait", w]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout * (n + warmup + 2))
    try:
        j = json.loads(out.stdout)
    except ValueError:
        raise BenchError("acquire_probe: %r %r" % (out.stdout[-300:], out.stderr[-300:]))
    return j["ready_ms"], j["post_ms"], j["errors"], j["first_error"], j["cpu_s"]


def median_runs(runs):
    """The median, key by key, of several runs' summaries; errors are summed
    (every error of every run counts)."""
    out = {}
    for k in runs[0]:
        vals = [r[k] for r in runs if isinstance(r.get(k), (int, float))]
        if not vals:
            continue
        out[k] = sum(vals) if k == "errors" else statistics.median(vals)
    out["runs"] = len(runs)
    return out


# ------------------------------------------------------------------ rows

class Row:
    """One line of the results table."""

    def __init__(self, rid, measure, mcpbox, alt=None, alt_name="", ratio=None,
                 errors=0, cmd=None, note=""):
        self.id = rid
        self.measure = measure
        self.mcpbox = mcpbox      # text
        self.alt = alt or "—"     # text
        self.alt_name = alt_name
        self.ratio = ratio        # float (>1: mcpbox better) or text or None
        self.errors = errors
        self.cmd = cmd or "bench/run --only %s" % rid.split(".")[0]
        self.note = note
        self.data = {}

    def as_dict(self):
        return {"id": self.id, "measure": self.measure, "mcpbox": self.mcpbox,
                "alternative": self.alt, "alternative_name": self.alt_name,
                "ratio": self.ratio, "errors": self.errors, "command": self.cmd,
                "note": self.note, "data": self.data}


def fmt_ms(x):
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.2f" % x


def fmt_lat(s, thr=True):
    """'p50 / p99 / max ms, N/s' of a summary."""
    t = "%s / %s / %s ms" % (fmt_ms(s["p50_ms"]), fmt_ms(s["p99_ms"]), fmt_ms(s["max_ms"]))
    if thr and s.get("throughput"):
        t += ", %s/s" % fmt_num(s["throughput"])
    return t


def fmt_num(x):
    if x >= 100:
        return "{:,.0f}".format(x)
    return "%.1f" % x


def fmt_mb(b):
    return "%.1f MB" % (b / 1e6)


def ratio(alt, ours):
    """alt/ours, for quantities where less is better (times, bytes)."""
    if not ours or not alt:
        return None
    return alt / ours


# ------------------------------------------------------------------ machine

def machine():
    mem = meminfo()
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": cpu,
            "memory_gb": round(mem.get("MemTotal", 0) / 1024 / 1024, 1),
            "kernel": os.uname().release,
            "cgroup": "v2" if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else "v1"}


def meminfo():
    """/proc/meminfo in KiB."""
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":", 1)
            out[k] = int(v.split()[0])
    return out


def proc_status(pid):
    """VmRSS/VmHWM (bytes), thread count of pid."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0]) * 1024
            elif k == "Threads":
                out[k] = int(v)
    return out


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def descendants(pid):
    """Every process whose parent chain leads to pid (pid excluded)."""
    parent = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
            parent[int(d)] = int(s[s.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            continue
    out = []
    for p in parent:
        q, seen = p, 0
        while q in parent and seen < 64:
            q = parent[q]
            seen += 1
            if q == pid:
                out.append(p)
                break
    return out


def tree_cpu_s(pid):
    """CPU seconds (user + system) used so far by pid and every live
    descendant: a daemon with its sandboxes' servers, or supergateway with
    the node server it runs."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in [pid] + descendants(pid):
        try:
            with open("/proc/%d/stat" % p) as f:
                s = f.read()
            fields = s[s.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            continue
    return total / tick


def pss_bytes(pids):
    """Sum of PSS (shared pages divided among their users) of pids."""
    total = 0
    for p in pids:
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            continue
    return total


def rss_bytes(pids):
    total = 0
    for p in pids:
        try:
            total += proc_status(p).get("VmRSS", 0)
        except OSError:
            continue
    return total


def mount_lines(substr):
    """Mount table lines (of this mount namespace) whose text holds substr."""
    with open("/proc/self/mountinfo") as f:
        return [l for l in f if substr in l]


def cgroup_dirs(ids):
    """cgroup directories (any hierarchy) named after one of ids."""
    found = []
    roots = ["/sys/fs/cgroup"]
    for root in roots:
        for dirpath, dirnames, _ in os.walk(root):
            if dirpath.count("/") > 7:
                dirnames[:] = []
                continue
            for d in dirnames:
                for i in ids:
                    if i in d:
                        found.append(os.path.join(dirpath, d))
    return found


def sandbox_cgroup_memory(sid):
    """memory usage (bytes) of a sandbox's cgroup, or None."""
    for base in ("/sys/fs/cgroup/memory/mcpbox", "/sys/fs/cgroup/mcpbox"):
        if not os.path.isdir(base):
            continue
        for d in os.listdir(base):
            if sid in d:
                for fn in ("memory.usage_in_bytes", "memory.current"):
                    p = os.path.join(base, d, fn)
                    if os.path.exists(p):
                        with open(p) as f:
                            return int(f.read())
    return None


# ------------------------------------------------------------------ HTTP

class Http:
    """One keep-alive HTTP/1.1 connection (http.client: light enough that
    Python's cost per request stays far below the daemon's)."""

    def __init__(self, base, timeout=120):
        u = urllib.parse.urlsplit(base)
        self.host, self.port = u.hostname, u.port
        self.timeout = timeout
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        """(status, headers dict lower-cased, body bytes); one retry on a
        connection the server closed while idle."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = dict(headers or {}, **{"Content-Type": "application/json"})
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port,
                                                       timeout=self.timeout)
            try:
                self.conn.request(method, path, body=body, headers=headers or {})
                r = self.conn.getresponse()
                data = r.read()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, data
            except (http.client.RemoteDisconnected, ConnectionResetError,
                    BrokenPipeError, http.client.CannotSendRequest):
                self.close()
                if attempt:
                    raise

    def close(self):
        if self.conn:
            self.conn.close()
            self.conn = None


def path_of(url):
    u = urllib.parse.urlsplit(url)
    return u.path + ("?" + u.query if u.query else "")


class Api:
    """The REST API of one daemon, with the benchmark's key."""

    def __init__(self, base, key=API_KEY):
        self.base = base
        self.h = Http(base)
        self.auth = {"Authorization": "Bearer " + key}

    def call(self, method, path, body=None, expect=(200,)):
        st, hd, data = self.h.request(method, path, body, self.auth)
        if st not in expect:
            raise BenchError("%s %s: HTTP %d: %s" % (method, path, st, data[:300]))
        return json.loads(data) if data else None

    def acquire(self, servers, benchmark=None, ttl=None):
        body = {"server_names": servers, "benchmark": benchmark}
        if ttl is not None:
            body["ttl_seconds"] = ttl
        return self.call("POST", "/local-sandbox", body, expect=(201, 200))

    def release(self, sid):
        return self.call("DELETE", "/local-sandbox/" + sid)

    def close(self):
        self.h.close()


def mcp_messages(headers, data):
    """The JSON-RPC messages of an MCP answer (JSON or SSE)."""
    ctype = headers.get("content-type", "")
    if "text/event-stream" in ctype:
        out = []
        for block in data.decode().split("\n\n"):
            payload = "\n".join(l[5:].lstrip() for l in block.split("\n")
                                if l.startswith("data:"))
            if payload.strip():
                out.append(json.loads(payload))
        return out
    if not data:
        return []
    m = json.loads(data)
    return m if isinstance(m, list) else [m]


class McpSession:
    """One MCP Streamable HTTP session on one URL."""

    def __init__(self, url, http=None):
        self.url = url
        self.path = path_of(url)
        self.http = http or Http(url)
        self.sid = None
        self.next_id = 0

    def _post(self, msg):
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        if self.sid:
            headers["Mcp-Session-Id"] = self.sid
            headers["MCP-Protocol-Version"] = "2025-06-18"
        st, hd, data = self.http.request("POST", self.path, json.dumps(msg).encode(), headers)
        return st, hd, data

    def request(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        st, hd, data = self._post(msg)
        if st != 200:
            raise BenchError("%s %s: HTTP %d: %s" % (method, self.url, st, data[:300]))
        for m in mcp_messages(hd, data):
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise BenchError("%s %s: %s" % (method, self.url, m["error"]))
                return m["result"], hd
        raise BenchError("%s %s: no answer in %r" % (method, self.url, data[:300]))

    def open(self):
        _, hd = self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "mcpbox-bench", "version": "1"}})
        self.sid = hd.get("mcp-session-id")
        if not self.sid:
            raise BenchError("initialize %s: no Mcp-Session-Id" % self.url)
        st, _, data = self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if st not in (200, 202):
            raise BenchError("initialized %s: HTTP %d %s" % (self.url, st, data[:200]))
        return self

    def tools(self):
        res, _ = self.request("tools/list", {})
        tools = res.get("tools") or []
        if not tools:
            raise BenchError("tools/list %s: no tools" % self.url)
        return [t["name"] for t in tools]

    def call(self, name, args):
        res, _ = self.request("tools/call", {"name": name, "arguments": args})
        if res.get("isError"):
            raise BenchError("tools/call %s: %s" % (name, res))
        return "".join(c.get("text", "") for c in res.get("content", []))

    def close(self):
        if self.sid:
            try:
                self.http.request("DELETE", self.path, None, {"Mcp-Session-Id": self.sid})
            except OSError:
                pass
            self.sid = None


def tools_list_once(url, http=None):
    """A whole session (initialize, tools/list, DELETE), as a client that
    checks a server is up does; the tool names."""
    s = McpSession(url, http).open()
    try:
        return s.tools()
    finally:
        s.close()


# ------------------------------------------------------------------ processes

def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Daemon:
    """`mcpbox serve` (the optimized build) on a free port with a fresh data
    directory, started with the highest open-file limit the host allows."""

    def __init__(self, workdir, extra_args=(), name="serve"):
        self.data_dir = os.path.join(workdir, name + "-data")
        self.log_path = os.path.join(workdir, name + ".log")
        self.extra_args = list(extra_args)
        self.proc = None
        self.url = None

    def start(self, timeout=60):
        os.makedirs(self.data_dir, exist_ok=True)
        env = dict(os.environ, MCPBOX_API_KEY=API_KEY)
        env.setdefault("MCPBOX_LOG", "warn")
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [MCPBOX, "serve", "--listen", "127.0.0.1:0", "--data-dir", self.data_dir,
             "--profiles-dir", os.path.join(ROOT, "profiles"), *self.extra_args],
            stdout=subprocess.PIPE, stderr=log, env=env, preexec_fn=raise_nofile)
        log.close()
        deadline = time.time() + timeout
        line = b""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if line or self.proc.poll() is not None:
                break
        m = re.search(rb"serving on (http://\S+)", line)
        if not m:
            raise BenchError("mcpbox serve did not start: %r; log: %s" % (line, self.log()[-2000:]))
        self.url = m.group(1).decode()
        return self

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    @property
    def pid(self):
        return self.proc.pid

    def release_all(self, timeout=120):
        """Releases every sandbox of the bench key and waits until the
        daemon's list is empty (workspaces are mounts: nothing may stay)."""
        api = Api(self.url)
        try:
            for sb in api.call("GET", "/local-sandbox")["local_sandboxes"]:
                api.call("DELETE", "/local-sandbox/" + sb["local_sandbox_id"],
                         expect=(200, 404))
            deadline = time.time() + timeout
            while time.time() < deadline:
                if not api.call("GET", "/local-sandbox")["total_count"]:
                    return
                time.sleep(0.1)
        finally:
            api.close()

    def stop(self, timeout=60):
        if not self.proc or self.proc.poll() is not None:
            return
        try:
            self.release_all()
        except (BenchError, OSError, ValueError):
            pass
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def gateway_on(url):
    """Whether a daemon serves MCP (GET /healthz says mcp_gateway)."""
    h = Http(url)
    try:
        st, _, data = h.request("GET", "/healthz")
        return st == 200 and json.loads(data).get("mcp_gateway", True) is not False
    finally:
        h.close()


def serve_has_flag(flag):
    out = subprocess.run([MCPBOX, "serve", "--help"], capture_output=True, text=True)
    return flag in (out.stdout + out.stderr)


def wait_url(url, timeout=30, ok=(200,)):
    h = Http(url, timeout=5)
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            st, _, _ = h.request("GET", path_of(url))
            if st in ok:
                h.close()
                return True
            last = st
        except OSError as e:
            last = e
            h.close()
        time.sleep(0.05)
    raise BenchError("%s did not answer within %ds (last: %s)" % (url, timeout, last))


def loadgen(url, mode="mcp", sessions=1, duration=5.0, warmup=1.0, body=None,
            expect=(), reject=(), expect_count=None, requests=None, timeout=30, windows=1):
    """Runs bench/loadgen once: one warm-up, then `windows` consecutive
    measurement windows of `duration` seconds on the same sessions. The
    median, stat by stat, over the windows, with the run's errors, the
    generator's CPU seconds and the windows themselves."""
    cmd = [LOADGEN, "--url", url, "--mode", mode, "--sessions", str(sessions),
           "--duration", str(duration), "--warmup", str(warmup), "--timeout", str(timeout),
           "--windows", str(windows)]
    if body:
        cmd += ["--body", body]
    for e in expect:
        cmd += ["--expect", e]
    for r in reject:
        cmd += ["--reject", r]
    if expect_count:
        cmd += ["--expect-count", "%s=%d" % expect_count]
    if requests:
        cmd += ["--requests", str(requests)]
    bound = 2 * timeout + warmup + duration * (10 if requests else windows) + 30
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=bound)
    try:
        res = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise BenchError("loadgen failed (%d): %s %s" % (out.returncode, out.stdout, out.stderr))
    med = median_runs(res["windows"])
    med.update(errors=res["errors"], cpu_s=res["cpu_s"], first_error=res["first_error"],
               wall_s=warmup + duration * windows, windows=res["windows"])
    if not res.get("requests"):
        med["errors"] += 1
        med["first_error"] = med["first_error"] or "no call completed in the measured window"
    return med


class Proc:
    """A helper process of a benchmark (bridge, supergateway), killed with its
    process group when done."""

    def __init__(self, argv, log_path, env=None, cwd=None):
        self.log = open(log_path, "ab")
        self.p = subprocess.Popen(argv, stdout=self.log, stderr=self.log, env=env, cwd=cwd,
                                  start_new_session=True)

    def stop(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()
        self.log.close()


def parallel(n, fn):
    """Runs fn(i) for i in range(n) on n threads at once; results in order
    (an exception is returned in place of its result)."""
    out = [None] * n
    barrier = threading.Barrier(n)

    def work(i):
        try:
            barrier.wait()
            out[i] = fn(i)
        except Exception as e:  # noqa: BLE001 - reported by the caller
            out[i] = e
    ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


class Ctx:
    """What bench/run hands to each benchmark."""

    def __init__(self, quick, workdir, log, smoke=False):
        self.quick = quick
        self.smoke = smoke
        self.workdir = workdir
        self.log = log
        self.runs = 1 if smoke else 3
        self.wide = 8 if smoke else 64  # the "many sessions" case

    def tmp(self, name):
        d = os.path.join(self.workdir, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d
