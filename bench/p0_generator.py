"""P0 generator ceiling: bench/loadgen against the daemon's GET /healthz (the
cheapest endpoint there is), 1 and 64 connections. Every other throughput in
the table is below this line, so the generator is not what limits them; the
generator's own CPU time says how much of a core it needed."""
import json

import benchlib as B


def run(ctx):
    d = B.Daemon(ctx.workdir, name="p0-serve").start()
    rows = []
    try:
        dur, warm = (1.0, 0.5) if ctx.quick else (3.0, 1.0)
        if ctx.smoke:
            dur, warm = 0.5, 0.2
        for conc in (1, ctx.wide):
            m = B.loadgen(d.url + "/healthz", mode="get", sessions=conc, duration=dur,
                          warmup=warm, expect=['"status":"ok"'], windows=ctx.runs)
            ctx.log("  P0 c%d: %s" % (conc, json.dumps(m)))
            r = B.Row("P0.healthz.c%d" % conc,
                      "GET /healthz, %d keep-alive connection%s: the load generator's ceiling"
                      % (conc, "s" if conc > 1 else ""),
                      B.fmt_lat(m), errors=int(m["errors"]))
            r.note = "generator CPU %.0f%% of a core" % (100 * m["cpu_s"] / m["wall_s"])
            r.data = m
            rows.append(r)
    finally:
        d.stop()
    return rows
