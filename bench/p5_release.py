"""P5 release and leaks: cycles of acquire (one filesystem server), one tool
call in a session of its own (list_allowed_directories, which must name
/data), release; 10,000 cycles (200 with --quick) on 4 clients at once,
within a time bound. Reported: DELETE latency p50/p99/max, and what is left
once the cycles are over against a baseline taken after a warm-up: the
daemon's descendant processes, workspace mounts (lines of
/proc/self/mountinfo under the data directory), cgroups of released
sandboxes, the daemon's open descriptors and its RSS drift.

Any process, mount or cgroup left behind, or more than 4 extra descriptors,
is an error."""
import os
import threading
import time

import benchlib as B

WORKERS = 4


def cycle(api, lat_release):
    sb = api.acquire(["filesystem"])
    sid = sb["local_sandbox_id"]
    url = sb["servers"][0]["mcp_server_url"]
    try:
        s = B.McpSession(url, api.h).open()
        try:
            text = s.call("list_allowed_directories", {})
        finally:
            s.close()
        if "/data" not in text:
            raise B.BenchError("list_allowed_directories: %r" % text[:200])
    finally:
        t0 = time.perf_counter()
        api.release(sid)
        lat_release.append((time.perf_counter() - t0) * 1000)
    return sid


def cgroups_of(ids):
    """cgroup directories left for any of ids (mcpbox/<scope>.<id>)."""
    left = []
    for base in ["/sys/fs/cgroup/mcpbox"] + [
            os.path.join("/sys/fs/cgroup", h, "mcpbox") for h in
            (os.listdir("/sys/fs/cgroup") if os.path.isdir("/sys/fs/cgroup") else [])]:
        if not os.path.isdir(base):
            continue
        for d in os.listdir(base):
            if d[-36:] in ids:
                left.append(os.path.join(base, d))
    return left


def snapshot(d):
    return {"procs": len(B.descendants(d.pid)), "mounts": len(B.mount_lines(d.data_dir)),
            "fds": B.fd_count(d.pid), "rss": B.proc_status(d.pid)["VmRSS"]}


def settle(d, base, timeout=30):
    """Waits until processes and mounts are back to the baseline (released
    sandboxes end asynchronously); the last snapshot."""
    deadline = time.time() + timeout
    while True:
        s = snapshot(d)
        if (s["procs"] <= base["procs"] and s["mounts"] <= base["mounts"]) or \
                time.time() > deadline:
            return s
        time.sleep(0.2)


def run(ctx):
    n, bound = (200, 60) if ctx.quick else (10_000, 420)
    d = B.Daemon(ctx.workdir, name="p5-serve").start()
    if not B.gateway_on(d.url):
        d.stop()
        return [B.Row("P5", "release and leaks over acquire/call/release cycles",
                      "n/a: this daemon serves no MCP yet (/healthz: mcp_gateway false)")]
    ids = set()
    lock = threading.Lock()
    lat = []
    errors = [0, ""]
    try:
        warm_api = B.Api(d.url)
        for _ in range(20):
            ids.add(cycle(warm_api, []))
        # The probes must see a live sandbox, or they could not see a leak.
        sb = warm_api.acquire(["filesystem"])
        live = snapshot(d)
        live_cg = cgroups_of({sb["local_sandbox_id"]})
        warm_api.release(sb["local_sandbox_id"])
        ids.add(sb["local_sandbox_id"])
        warm_api.close()
        if not live["procs"] or not live["mounts"] or not live_cg:
            raise B.BenchError("a live sandbox shows %d processes, %d mounts under %s and "
                               "%d cgroups: the leak probes would not see a leak" % (
                                   live["procs"], live["mounts"], d.data_dir, len(live_cg)))
        base = settle(d, {"procs": 0, "mounts": 0})
        t0 = time.time()
        done = [0]

        def worker(i):
            api = B.Api(d.url)
            mine = []
            try:
                while time.time() - t0 < bound:
                    with lock:
                        if done[0] >= n:
                            return
                        done[0] += 1
                    try:
                        ids.add(cycle(api, mine))
                    except (B.BenchError, OSError, ValueError) as e:
                        with lock:
                            errors[0] += 1
                            errors[1] = errors[1] or str(e)[:300]
            finally:
                api.close()
                with lock:
                    lat.extend(mine)
        B.parallel(WORKERS, worker)
        wall = time.time() - t0
        cycles = len(lat)
        after = settle(d, base)
        left_cg = cgroups_of(ids)
        leaks = []
        if after["procs"] > base["procs"]:
            leaks.append("%d processes" % (after["procs"] - base["procs"]))
        if after["mounts"] > base["mounts"]:
            leaks.append("%d mounts" % (after["mounts"] - base["mounts"]))
        if left_cg:
            leaks.append("%d cgroups (%s)" % (len(left_cg), left_cg[0]))
        if after["fds"] > base["fds"] + 4:
            leaks.append("%d descriptors" % (after["fds"] - base["fds"]))
        s = B.summary(lat, wall)
        rows = []
        r = B.Row("P5.release", "DELETE /local-sandbox/{id} latency over %d acquire/call/release "
                  "cycles on %d clients" % (cycles, WORKERS),
                  B.fmt_lat(s, thr=False) + "; %.0f cycles/s" % (cycles / wall),
                  errors=errors[0], note=("first error: %s" % errors[1]) if errors[1] else "")
        r.data = s
        rows.append(r)
        short = "" if cycles >= n else " (of %d: stopped at the %d s bound)" % (n, bound)
        r = B.Row("P5.leaks", "left after %d cycles%s: processes, mounts, cgroups, daemon fds, "
                  "daemon RSS" % (cycles, short),
                  "processes %+d, mounts %+d, cgroups left %d, fds %d→%d, RSS %s→%s (%+.1f MB)" % (
                      after["procs"] - base["procs"], after["mounts"] - base["mounts"],
                      len(left_cg), base["fds"], after["fds"], B.fmt_mb(base["rss"]),
                      B.fmt_mb(after["rss"]), (after["rss"] - base["rss"]) / 1e6),
                  errors=len(leaks), note=("leaked: " + ", ".join(leaks)) if leaks else "")
        r.data = {"base": base, "after": after, "cgroups_left": left_cg, "cycles": cycles}
        rows.append(r)
        ctx.log("  P5: %s | %s" % (rows[0].mcpbox, rows[1].mcpbox))
        return rows
    finally:
        d.stop()
