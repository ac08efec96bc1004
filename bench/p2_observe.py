"""P2O: what metrics and the call log cost. P2's tool calls (filesystem
list_allowed_directories, a trivial tool, and read_text_file of 1 KB) through
two daemons that differ only in observability: one as it starts by default
(metrics on, a call log of 256 calls per sandbox), one started with
`--metrics off --call-log 0`. Short rounds alternate on/off/off/on so that a
shared machine's drift falls on both sides alike; the median round counts,
and the server-side CPU per call (daemon and sandbox, summed over the rounds)
is reported beside it as the figure load does not move. Target: at most 5%
throughput lost (issue 21)."""
import json
import statistics
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
        # Many short alternating rounds: on a shared machine throughput drifts
        # by more than the effect, and alternation spreads the drift evenly.
        dur, warm = (0.5, 0.2) if ctx.smoke else (1.0, 0.3) if ctx.quick else (1.0, 0.3)
        rounds = 1 if ctx.smoke else 4 if ctx.quick else 10
        cases = [("trivial", 1), ("trivial", ctx.wide), ("read", 1), ("read", ctx.wide)]
        for kind, conc in cases:
            body, expect = ((P2.TRIVIAL, ["Allowed directories:"]) if kind == "trivial"
                            else (read, [P2.TOKEN]))
            thr = {"on": [], "off": []}
            cpu = {"on": [0.0, 0.0], "off": [0.0, 0.0]}  # CPU seconds, calls
            res = {}
            for r in range(rounds):
                for side in (("on", "off") if r % 2 == 0 else ("off", "on")):
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
                    ctx.log("  P2O %s c%d %s: %.0f/s" % (kind, conc, side, t))
            t_on, t_off = statistics.median(thr["on"]), statistics.median(thr["off"])
            loss = 100.0 * (1 - t_on / t_off) if t_off else 0.0
            us = {k: 1e6 * v[0] / v[1] if v[1] else 0.0 for k, v in cpu.items()}
            what = ("list_allowed_directories (trivial)" if kind == "trivial"
                    else "read_text_file 1 KB")
            row = B.Row("P2O.%s.c%d" % (kind, conc),
                        "%s, %d session%s: metrics + call log on vs off" % (
                            what, conc, "s" if conc > 1 else ""),
                        B.fmt_lat(res["on"]), B.fmt_lat(res["off"]),
                        alt_name="the same daemon with --metrics off --call-log 0",
                        ratio=t_on / t_off if t_off else None,
                        errors=int(res["on"]["errors"] + res["off"]["errors"]))
            row.cmd = "bench/run --only P2O"
            row.note = ("median throughput on %.0f/s vs off %.0f/s over %d alternating "
                        "rounds: %.1f%% %s (target ≤ 5%% lost); server-side CPU per call "
                        "(daemon + server) %.0f µs on vs %.0f µs off (%+.1f%%)" % (
                            t_on, t_off, rounds, abs(loss), "lost" if loss >= 0 else "gained",
                            us["on"], us["off"],
                            100.0 * (us["on"] / us["off"] - 1) if us["off"] else 0.0))
            row.data = {"on": thr["on"], "off": thr["off"], "loss_percent": loss,
                        "cpu_us": us}
            rows.append(row)
    finally:
        for side in (on, off):
            if side:
                side[1].close()
                side[0].stop()
    return rows
