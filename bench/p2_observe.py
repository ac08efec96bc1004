"""P2O: what metrics and the call log cost. P2's tool calls (filesystem
list_allowed_directories, a trivial tool, and read_text_file of 1 KB) through
two daemons that differ only in observability: one as it starts by default
(metrics on, a call log of 256 calls per sandbox), one started with
`--metrics off --call-log 0`. Each round drives both daemons at the same
time (two generators), so that whatever else loads a shared machine loads
both alike; the median of the rounds' on/off throughput ratios counts, and
the server-side CPU per call (daemon and sandbox, summed over the rounds) is
reported beside it. Target: at most 5% throughput lost (issue 21)."""
import json
import os
import subprocess
import statistics
import threading
import time

import benchlib as B
import p2_calls as P2


def start(ctx, tree, name, extra):
    d = B.Daemon(ctx.workdir, extra_args=extra, name=name).start()
    api = B.Api(d.url)
    sb = api.acquire(["filesystem"])
    url = sb["servers"][0]["mcp_server_url"]
    P2.upload(api, sb["local_sandbox_id"], P2.tar_gz(tree))
    return d, api, url


def observer_cost(ctx, answer_bytes):
    """bench/observe_cost: CPU nanoseconds the observation of one call adds."""
    exe = os.path.join(B.ROOT, "build", "bench", "observe_cost")
    out = subprocess.run([exe, "20000" if ctx.smoke else "200000"], capture_output=True,
                         text=True, timeout=600, env=dict(os.environ,
                                                          ANSWER_BYTES=str(answer_bytes)))
    if out.returncode:
        raise B.BenchError("observe_cost failed: %s" % out.stderr[-500:])
    return json.loads(out.stdout)["observer_ns_per_call"]


def run(ctx):
    tree = ctx.tmp("p2o-tree")
    text, names = P2.make_tree(tree)
    on = off = None
    rows = []
    try:
        on = start(ctx, tree, "p2o-on", [])
        off = start(ctx, tree, "p2o-off", ["--metrics", "off", "--call-log", "0"])
        for _, _, url in (on, off):
            P2.check_side(url, "/data", text, names)
        read, _ = P2.bodies("/data")
        # Paired rounds: the generator drives both daemons at the same time, so
        # that whatever else loads the machine loads both alike; the figure is
        # the median of the rounds' on/off ratios. Short rounds, many of them.
        dur, warm = (0.5, 0.2) if ctx.smoke else (1.0, 0.3) if ctx.quick else (1.5, 0.3)
        rounds = 1 if ctx.smoke else 4 if ctx.quick else 12
        cases = [("trivial", 1), ("trivial", ctx.wide), ("read", 1), ("read", ctx.wide)]
        for kind, conc in cases:
            body, expect = ((P2.TRIVIAL, ["Allowed directories:"]) if kind == "trivial"
                            else (read, [P2.TOKEN]))
            thr = {"on": [], "off": []}
            ratios = []
            cpu = {"on": [0.0, 0.0], "off": [0.0, 0.0]}  # CPU seconds, calls
            res = {}

            def one(side):
                d, _, url = on if side == "on" else off
                c0, t0 = B.tree_cpu_s(d.pid), time.monotonic()
                res[side] = B.loadgen(url, mode="mcp", sessions=conc, duration=dur,
                                      warmup=warm, body=body, expect=expect,
                                      reject=['"isError":true'], windows=1)
                used, wall = B.tree_cpu_s(d.pid) - c0, time.monotonic() - t0
                t = res[side]["throughput"] or 0.0
                thr[side].append(t)
                cpu[side][0] += used
                cpu[side][1] += t * wall  # calls at the measured rate over the run

            for r in range(rounds):
                res.clear()
                ts = [threading.Thread(target=one, args=(side,)) for side in ("on", "off")]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                if "on" not in res or "off" not in res:
                    raise B.BenchError("P2O: a generator run failed")
                ratios.append(thr["on"][-1] / thr["off"][-1] if thr["off"][-1] else 0.0)
                ctx.log("  P2O %s c%d round %d: on %.0f/s, off %.0f/s" % (
                    kind, conc, r, thr["on"][-1], thr["off"][-1]))
            t_on, t_off = statistics.median(thr["on"]), statistics.median(thr["off"])
            ratio = statistics.median(ratios)
            loss = 100.0 * (1 - ratio)
            us = {k: 1e6 * v[0] / v[1] if v[1] else 0.0 for k, v in cpu.items()}
            what = ("list_allowed_directories (trivial)" if kind == "trivial"
                    else "read_text_file 1 KB")
            row = B.Row("P2O.%s.c%d" % (kind, conc),
                        "%s, %d session%s: metrics + call log on vs off" % (
                            what, conc, "s" if conc > 1 else ""),
                        B.fmt_lat(res["on"]), B.fmt_lat(res["off"]),
                        alt_name="the same daemon with --metrics off --call-log 0",
                        ratio=ratio,
                        errors=int(res["on"]["errors"] + res["off"]["errors"]))
            row.cmd = "bench/run --only P2O"
            row.note = ("ratio = median over %d paired rounds (both daemons driven at once) "
                        "of throughput on / off: %.1f%% %s (target ≤ 5%% lost); median "
                        "throughput on %.0f/s, off %.0f/s; server-side CPU per call "
                        "(daemon + server) %.0f µs on vs %.0f µs off (%+.1f%%)" % (
                            rounds, abs(loss), "lost" if loss >= 0 else "gained", t_on, t_off,
                            us["on"], us["off"],
                            100.0 * (us["on"] / us["off"] - 1) if us["off"] else 0.0))
            row.data = {"on": thr["on"], "off": thr["off"], "ratios": ratios,
                        "loss_percent": loss,
                        "cpu_us": us}
            rows.append(row)
        # The observer's own CPU per call, measured exactly (no other process
        # in the figure), against the server-side CPU per call of the calls
        # above with observability off: the throughput a CPU-bound daemon loses.
        costs = {n: observer_cost(ctx, n) for n in (100, 1000, 100000)}
        base = min(r.data["cpu_us"]["off"] for r in rows if r.data["cpu_us"]["off"] > 0)
        worst = max(costs.values()) / 1000.0
        row = B.Row("P2O.cpu", "CPU the observation of one call adds (gateway observer, "
                    "metrics registry, call log), results of 100 B / 1 KB / 100 KB",
                    " / ".join("%.2f µs" % (costs[n] / 1000.0) for n in sorted(costs)),
                    "%.0f µs" % base,
                    alt_name="server-side CPU per call with observability off (the least of "
                             "the rows above)",
                    ratio="%.2f%% of a call's CPU" % (100.0 * worst / base))
        row.cmd = "bench/run --only P2O"
        row.note = ("bench/observe_cost: the real code of a call's observation, best of 5 "
                    "runs of 200,000 calls, CPU time of its own process; bounded: results "
                    "over 4 KB are checked for isError at their ends only")
        row.data = {"observer_ns": costs, "call_cpu_us": base}
        rows.append(row)
    finally:
        for side in (on, off):
            if side:
                side[1].close()
                side[0].stop()
    return rows
