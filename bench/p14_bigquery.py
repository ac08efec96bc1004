"""P14 BigQuery on SQLite: `bigquery_run_query` of a GROUP BY over a table of N rows
(100,000; 20,000 with --smoke) in a google_cloud sandbox, through the MCP gateway, against
the same query run directly on the same rows with Python's sqlite3 (the engine underneath:
the ratio is the cost of the translation, the result rendering and the MCP/HTTP round trip),
and with pandas when it is installed (context). Also the time of an initialize of an empty
project (a fresh project database, its snapshot and the GoogleCloudData answer).

The table is made by the agent's own SQL (CREATE TABLE ... AS WITH RECURSIVE ...), so the
rows never cross the API. Checks: every answer has the 100 groups, and the first group's
count and sum equal the direct SQLite result."""
import re
import sqlite3
import time

import benchlib as B

QUERY = ("SELECT grp, COUNT(*) AS n, SUM(amount) AS total, ROUND(AVG(amount), 4) AS mean "
         "FROM `bench.t` GROUP BY grp ORDER BY grp")
DIRECT = ("SELECT grp, count(*) AS n, sum(amount) AS total, round(avg(amount), 4) AS mean "
          "FROM t GROUP BY grp ORDER BY grp")


def direct(n, rounds):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t(id INTEGER, grp INTEGER, amount REAL)")
    db.executemany("INSERT INTO t VALUES(?,?,?)", ((i, i % 100, i * 0.5) for i in range(1, n + 1)))
    lat = []
    rows = None
    for _ in range(rounds):
        t = time.perf_counter()
        rows = db.execute(DIRECT).fetchall()
        lat.append((time.perf_counter() - t) * 1000)
    return lat, rows


def pandas_side(n, rounds):
    try:
        import pandas as pd
    except ImportError:
        return None
    df = pd.DataFrame({"id": range(1, n + 1)})
    df["grp"] = df["id"] % 100
    df["amount"] = df["id"] * 0.5
    lat = []
    for _ in range(rounds):
        t = time.perf_counter()
        g = df.groupby("grp")["amount"].agg(["count", "sum", "mean"])
        g["mean"] = g["mean"].round(4)
        lat.append((time.perf_counter() - t) * 1000)
    return lat


def run(ctx):
    n = 20000 if ctx.smoke else 100000
    rounds = 5 if ctx.smoke else 10 if ctx.quick else 30
    d = B.Daemon(ctx.workdir, name="p13-serve").start()
    api = B.Api(d.url)
    rows = []
    try:
        t = time.perf_counter()
        sb = api.acquire(["google_cloud"], benchmark="Toolathlon")
        sid = sb["local_sandbox_id"]
        url = sb["servers"][0]["mcp_server_url"]
        init = []
        for _ in range(5):
            t = time.perf_counter()
            api.call("POST", "/local-sandbox/google_cloud/%s/initialize" % sid)
            init.append((time.perf_counter() - t) * 1000)
        s = B.McpSession(url).open()
        s.call("bigquery_create_dataset", {"dataset_id": "bench"})
        t = time.perf_counter()
        out = s.call("bigquery_run_query", {"query": (
            "CREATE TABLE `bench.t` AS WITH RECURSIVE seq AS (SELECT 1 AS i UNION ALL "
            "SELECT i + 1 FROM seq WHERE i < %d) SELECT i AS id, MOD(i, 100) AS grp, i * 0.5 AS amount "
            "FROM seq" % n)})
        make_s = time.perf_counter() - t
        if not out.startswith("Query executed successfully."):
            raise B.BenchError("CTAS: %s" % out[:300])
        dlat, drows = direct(n, rounds)
        want = "Row 1: {'grp': 0, 'n': %d, 'total': %s" % (drows[0][1], repr(float(drows[0][2])))
        lat, errors = [], 0
        for r in range(rounds + 1):
            t = time.perf_counter()
            text = s.call("bigquery_run_query", {"query": QUERY})
            dt = (time.perf_counter() - t) * 1000
            if r:
                lat.append(dt)
            ok = ("Total rows: 100, Returned: 100" in text and want in text
                  and text.endswith("... and 95 more rows"))
            errors += not ok
        s.close()
        ours, alt = B.summary(lat), B.summary(dlat)
        r = B.Row("P14.groupby", "bigquery_run_query GROUP BY over %s rows (100 groups; COUNT, SUM, "
                  "AVG) through the gateway; vs the same query in SQLite directly (Python sqlite3, "
                  "in-process, no MCP)" % B.fmt_num(n),
                  B.fmt_lat(ours, thr=False), alt=B.fmt_lat(alt, thr=False), alt_name="sqlite3 direct",
                  ratio=B.ratio(alt["p50_ms"], ours["p50_ms"]), errors=errors, cmd="bench/run --only P14")
        r.data = {"rows": n, "ours": ours, "sqlite": alt, "ctas_s": make_s}
        rows.append(r)
        pl = pandas_side(n, rounds)
        if pl:
            ps = B.summary(pl)
            rows.append(B.Row("P14.pandas", "the same aggregation in pandas (context)", B.fmt_lat(ours, thr=False),
                              alt=B.fmt_lat(ps, thr=False), alt_name="pandas groupby",
                              ratio=B.ratio(ps["p50_ms"], ours["p50_ms"]), cmd="bench/run --only P14"))
        rows.append(B.Row("P14.ctas", "CREATE TABLE AS of %s generated rows through bigquery_run_query"
                          % B.fmt_num(n), "%.2f s" % make_s, cmd="bench/run --only P14"))
        si = B.summary(init)
        rows.append(B.Row("P14.init", "initialize of an empty google_cloud project (new database, "
                          "snapshot, answer) through the REST API", B.fmt_lat(si, thr=False),
                          cmd="bench/run --only P14"))
        api.release(sid)
    finally:
        api.close()
        d.stop()
    return rows
