"""P3 density: acquire sandboxes with MCP-Atlas's request, each waited on
until its servers answer tools/list, until 2,000 are up (50 with --quick) or
a bound stops it: 70% of the machine's memory in use, 70% of pid_max in
tasks, 90% of the daemon's open-file limit, a time bound, or an acquire the
daemon refuses. Reported: the count reached and why it stopped, and per
sandbox: memory taken from the machine (MemAvailable drop), kernel memory
(Slab delta), PSS of its processes, its cgroup's memory usage (v1
memory.usage_in_bytes / v2 memory.current), and the daemon's own growth.

Checks: every 10th sandbox must still answer tools/list on all its servers
at the end; then all are released and the time that takes is reported."""
import os
import time

import benchlib as B
import p1_acquire as P1


def tasks():
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[1])


def pid_max():
    with open("/proc/sys/kernel/pid_max") as f:
        return int(f.read())


def nofile_limit(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    return 1 << 20


def slab_kb(mi):
    return mi.get("Slab", mi.get("SReclaimable", 0) + mi.get("SUnreclaim", 0))


def run(ctx):
    target, bound = (50, 90) if ctx.quick else (2000, 300)
    # MCPBOX_BENCH_P3_MAX caps the count on a machine shared with others (the row says so)
    cap = int(os.environ.get("MCPBOX_BENCH_P3_MAX", "0") or 0)
    if cap > 0:
        target = min(target, cap)
    # Density is the point here: no per-key cap on live sandboxes.
    d = B.Daemon(ctx.workdir, name="p3-serve", extra_args=["--key-max-sandboxes", "0"]).start()
    api = B.Api(d.url)
    sids = []
    try:
        if not B.gateway_on(d.url):
            return [B.Row("P3", "density: sandboxes with Atlas's 8 servers started",
                          "n/a: this daemon serves no MCP yet (/healthz: mcp_gateway false)")]
        names, wait_for, missing = P1.choose_names(api)
        acq = P1.Acquirer(api, names, wait_for)
        mi0 = B.meminfo()
        rss0 = B.proc_status(d.pid)["VmRSS"]
        procs0 = set(B.descendants(d.pid))
        fds0 = B.fd_count(d.pid)
        limit_fd = nofile_limit(d.pid)
        pmax = pid_max()
        stop = "reached the target"
        errors = 0
        t0 = time.time()
        urls = {}
        while len(sids) < target:
            mi = B.meminfo()
            used = 1 - mi["MemAvailable"] / mi["MemTotal"]
            if used > 0.70:
                stop = "70% of memory in use"
                break
            if tasks() > 0.7 * pmax:
                stop = "70% of pid_max (%d) in tasks" % pmax
                break
            if B.fd_count(d.pid) > 0.9 * limit_fd:
                stop = "90%% of the daemon's open-file limit (%d)" % limit_fd
                break
            if time.time() - t0 > bound:
                stop = "the %d s time bound" % bound
                break
            try:
                _, _, sid = acq.once()
            except B.BenchError as e:
                msg = str(e)
                if "HTTP 4" in msg or "HTTP 5" in msg:
                    stop = "the daemon refused: %s" % msg[:160]
                else:
                    stop = "failed: %s" % msg[:160]
                    errors += 1
                break
            sids.append(sid)
            if len(sids) % 200 == 0:
                ctx.log("  P3: %d sandboxes, %.0f%% memory in use, %d tasks" % (
                    len(sids), 100 * used, tasks()))
        wall = time.time() - t0
        n = len(sids)
        time.sleep(1)
        mi1 = B.meminfo()
        procs = [p for p in B.descendants(d.pid) if p not in procs0]
        pss = B.pss_bytes(procs)
        rss1 = B.proc_status(d.pid)["VmRSS"]
        fds1 = B.fd_count(d.pid)
        cg = [B.sandbox_cgroup_memory(s) for s in sids]
        cg = [c for c in cg if c is not None]
        # every 10th sandbox still answers on all its servers
        for sid in sids[::10]:
            sb = api.call("GET", "/local-sandbox/" + sid)
            for srv in sb["servers"]:
                if srv["server_name"] in wait_for:
                    try:
                        B.tools_list_once(srv["mcp_server_url"])
                    except B.BenchError as e:
                        errors += 1
                        stop += "; not answering at the end: %s" % str(e)[:120]
                        break
        t1 = time.time()
        for sid in sids:
            api.release(sid)
        deadline = time.time() + 120
        while len(B.descendants(d.pid)) > len(procs0) and time.time() < deadline:
            time.sleep(0.2)
        release_s = time.time() - t1
        sids = []
        if not n:
            return [B.Row("P3", "density", "0 sandboxes: %s" % stop, errors=max(errors, 1))]
        per = {
            "mem_available_drop": (mi0["MemAvailable"] - mi1["MemAvailable"]) * 1024 / n,
            "slab": (slab_kb(mi1) - slab_kb(mi0)) * 1024 / n,
            "pss": pss / n,
            "cgroup": sum(cg) / len(cg) if cg else None,
            "daemon_rss": (rss1 - rss0) / n,
            "procs": len(procs) / n,
            "daemon_fds": (fds1 - fds0) / n,
        }
        text = ("%d sandboxes (%d servers each) in %.0f s; per sandbox: %s of memory "
                "(MemAvailable drop), kernel slab %s, PSS %s, cgroup %s, daemon +%s and "
                "%.0f descriptors, %.1f processes; all released in %.1f s" % (
                    n, len(wait_for), wall, B.fmt_mb(per["mem_available_drop"]),
                    B.fmt_mb(per["slab"]), B.fmt_mb(per["pss"]),
                    B.fmt_mb(per["cgroup"]) if per["cgroup"] is not None else "n/a",
                    B.fmt_mb(per["daemon_rss"]), per["daemon_fds"], per["procs"], release_s))
        note = "stopped: %s" % stop
        if cap > 0:
            note += " (capped at %d by MCPBOX_BENCH_P3_MAX: the machine is shared; per-sandbox " \
                    "figures, not the count, are the result)" % cap
        if missing:
            note += "; waited on %d of 8: this build serves no %s" % (
                len(wait_for), ", ".join(missing))
        r = B.Row("P3.density", "sandboxes with Atlas's servers started, up to %d" % target,
                  text, errors=errors, note=note)
        r.data = {"count": n, "per_sandbox": per, "stop": stop, "seconds": wall,
                  "release_s": release_s}
        ctx.log("  P3: %s (%s)" % (text, note))
        return [r]
    finally:
        for sid in sids:
            try:
                api.release(sid)
            except (B.BenchError, OSError):
                pass
        api.close()
        d.stop()
