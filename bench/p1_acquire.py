"""P1 acquire: from `POST /local-sandbox` with MCP-Atlas's request (its 8
server names, benchmark MCP_Atlas) until every server of the sandbox answers
tools/list on its MCP URL (each probed in a whole session of its own, in
parallel, as a client checking its servers does): 100 one after another and
a burst of 100 at once (20 and 20 with --quick), with a cold daemon and, when
`mcpbox serve` has a --pool flag, a warm pool (twice the sequence's claims,
waited for until all of it is idle and settled); and the acquire + release
round trip (POST then DELETE, one filesystem server) over 1,000 sandboxes
(100 with --quick), the figure issue 2 asks for.

The sequential rows P1.seq.* are measured by build/bench/acquire_probe (C,
bench/acquire_probe.c: the POST, then every server's initialize,
notifications/initialized and tools/list at once, each server on a
keep-alive connection of its own, all from one thread over epoll), so that
the figure is mcpbox's; rows
P1.py.* are the same sequence with this module's Python client (a thread and
a whole session per server, DELETE included), as a Python harness sees it.

Checks: 201 with one server item per name asked, and a non-empty tools/list
on every server URL within 60 s; a server that does not answer is an error.
Names this build has no server for (`mcpbox mcp --list`) are asked for, as
Atlas does, but not waited on; the row says which."""
import json
import subprocess
import threading
import time

import benchlib as B

READY_TIMEOUT = 60.0


def native_servers():
    out = subprocess.run([B.MCPBOX, "mcp", "--list"], capture_output=True, text=True)
    return set(out.stdout.split())


def probe(url, deadline):
    """tools/list in a session of its own, retried while the server is not
    up yet (503) until the deadline; the tool names."""
    h = B.Http(url, timeout=READY_TIMEOUT)
    try:
        while True:
            try:
                return B.tools_list_once(url, h)
            except B.BenchError as e:
                if "HTTP 503" not in str(e) or time.time() > deadline:
                    raise
            time.sleep(0.005)
    finally:
        h.close()


class Acquirer:
    def __init__(self, api, names, wait_for):
        self.api = api
        self.names = names
        self.wait_for = wait_for

    def once(self):
        """(seconds until ready, seconds of the POST, sandbox id)."""
        t0 = time.perf_counter()
        sb = self.api.acquire(self.names, benchmark="MCP_Atlas")
        t_post = time.perf_counter() - t0
        sid = sb["local_sandbox_id"]
        got = {s["server_name"]: s["mcp_server_url"] for s in sb["servers"]}
        if sorted(got) != sorted(self.names):
            raise B.BenchError("acquire answered servers %s for %s" % (sorted(got), self.names))
        deadline = time.time() + READY_TIMEOUT
        errs = []

        def one(name):
            try:
                probe(got[name], deadline)
            except Exception as e:  # noqa: BLE001 - collected below
                errs.append("%s: %s" % (name, e))
        ts = [threading.Thread(target=one, args=(n,)) for n in self.wait_for]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errs:
            raise B.BenchError("sandbox %s: %s" % (sid, "; ".join(errs)[:400]))
        return time.perf_counter() - t0, t_post, sid


def choose_names(api):
    """Atlas's 8 names if the daemon accepts them, and those it serves."""
    have = native_servers()
    wait_for = [n for n in B.ATLAS_SERVERS if n in have]
    names = list(B.ATLAS_SERVERS)
    try:
        sb = api.acquire(names, benchmark="MCP_Atlas")
        api.release(sb["local_sandbox_id"])
    except B.BenchError as e:
        if "HTTP 422" not in str(e):
            raise
        names = wait_for
    missing = [n for n in B.ATLAS_SERVERS if n not in wait_for]
    return names, wait_for, missing


def sequential(acq, api, n, log):
    ready, post, errors, first = [], [], 0, ""
    for i in range(n + 2):
        try:
            r, p, sid = acq.once()
        except B.BenchError as e:
            errors += 1
            first = first or str(e)
            continue
        api.release(sid)
        if i >= 2:  # the first two are the warm-up
            ready.append(r * 1000)
            post.append(p * 1000)
    return ready, post, errors, first


def burst(acq_factory, api, n):
    def work(i):
        a = acq_factory()
        try:
            return a.once()
        finally:
            a.api.close()
    t0 = time.perf_counter()
    res = B.parallel(n, work)
    wall = time.perf_counter() - t0
    ok = [r for r in res if not isinstance(r, Exception)]
    errs = [r for r in res if isinstance(r, Exception)]
    for r in ok:
        api.release(r[2])
    return [r[0] * 1000 for r in ok], wall, len(errs), str(errs[0]) if errs else ""


def roundtrip(api, n):
    lat, errors, first = [], 0, ""
    for i in range(n + 10):
        t0 = time.perf_counter()
        try:
            sb = api.acquire(["filesystem"])
            api.release(sb["local_sandbox_id"])
        except B.BenchError as e:
            errors += 1
            first = first or str(e)
            continue
        if i >= 10:
            lat.append((time.perf_counter() - t0) * 1000)
    return lat, errors, first


def wait_pool(url, n, timeout=180):
    """Waits until the daemon's MCP_Atlas pool holds n idle sandboxes (built
    and settled: /healthz pool.MCP_Atlas.idle); False if it did not get
    there in time."""
    h = B.Http(url)
    deadline = time.time() + timeout
    try:
        while time.time() < deadline:
            st, _, data = h.request("GET", "/healthz")
            if st == 200:
                pool = json.loads(data).get("pool", {}).get("MCP_Atlas", {})
                if pool.get("idle", 0) >= n:
                    return True
            time.sleep(0.2)
        return False
    finally:
        h.close()


def rt_row(api, n, ctx):
    lat, errs, first = roundtrip(api, n)
    s = B.summary(lat)
    r = B.Row("P1.roundtrip", "acquire + release round trip (POST, DELETE; one "
              "filesystem server), %d sandboxes one after another" % n,
              B.fmt_lat(s, thr=False), errors=errs,
              note=("first error: %s" % first[:200]) if first else "")
    r.data = s
    ctx.log("  P1 round trip: %s" % r.mcpbox)
    return r


def run(ctx):
    n_seq, n_burst, n_rt = (20, 20, 100) if ctx.quick else (100, 100, 1000)
    rows = []
    pool = B.serve_has_flag("--pool")
    for warm in (False, True):
        label = "warm pool" if warm else "cold"
        if warm and not pool:
            for rid in ("P1.seq.warm", "P1.burst.warm"):
                rows.append(B.Row(rid, "acquire of Atlas's 8 servers until tools/list, warm pool",
                                  "n/a: no pool flag (`mcpbox serve --help` has no --pool)"))
            continue
        # Twice what one sequence claims (its warm-up included), so that no
        # claim of it finds the pool below a quarter of its target, where the
        # refill starts at once on the same cores (sandbox/pool.c).
        n_pool = max(n_burst, 2 * (n_seq + 2))
        extra = ["--pool", "MCP_Atlas=%d" % n_pool] if warm else []
        d = B.Daemon(ctx.workdir, extra_args=extra, name="p1-%s" % ("warm" if warm else "cold"))
        d.start()
        api = B.Api(d.url)
        try:
            if warm and not wait_pool(d.url, n_pool):
                ctx.log("  P1: the pool did not fill to %d within 180 s" % n_pool)
            if not B.gateway_on(d.url):
                rows.append(B.Row("P1.%s" % ("warm" if warm else "cold"),
                                  "acquire of Atlas's 8 servers until tools/list, %s" % label,
                                  "n/a: this daemon serves no MCP yet (/healthz: mcp_gateway "
                                  "false)"))
                if not warm:
                    rows.append(rt_row(api, n_rt, ctx))
                continue
            names, wait_for, missing = choose_names(api)
            note = ""
            if missing:
                note = "waited on %d of 8: this build serves no %s" % (
                    len(wait_for), ", ".join(missing))
            kind = "warm" if warm else "cold"
            ready, post, errs, first, cpu = B.acquire_probe(d.url, names, "MCP_Atlas", wait_for, n_seq, timeout=READY_TIMEOUT)
            s = B.summary(ready)
            r = B.Row("P1.seq.%s" % kind,
                      "acquire of Atlas's 8 servers until each answers tools/list, "
                      "%d one after another, %s (C client: sessions at once, keep-alive)"
                      % (n_seq, label),
                      B.fmt_lat(s) + "; POST alone p50 %s ms" % B.fmt_ms(B.pct(post, 0.5)),
                      errors=errs, note=note + ("; first error: %s" % first[:200] if first else "")
                      + "; client CPU %.1f ms per acquire" % (cpu * 1000 / (n_seq + 2)))
            r.data = {"ready": s, "post": B.summary(post), "names": names, "waited": wait_for}
            rows.append(r)
            ctx.log("  P1 seq %s (C client): %s" % (label, r.mcpbox))
            if warm and not wait_pool(d.url, n_pool):
                ctx.log("  P1: the pool did not refill to %d within 180 s" % n_pool)
            acq = Acquirer(api, names, wait_for)
            ready, post, errs, first = sequential(acq, api, n_seq, ctx.log)
            s = B.summary(ready)
            r = B.Row("P1.py.%s" % kind,
                      "the same with the Python client (a thread and a whole session per "
                      "server, DELETE included), %d one after another, %s" % (n_seq, label),
                      B.fmt_lat(s) + "; POST alone p50 %s ms" % B.fmt_ms(B.pct(post, 0.5)),
                      errors=errs, note=note + ("; first error: %s" % first[:200] if first else ""))
            r.data = {"ready": s, "post": B.summary(post), "names": names, "waited": wait_for}
            rows.append(r)
            ctx.log("  P1 seq %s (Python client): %s" % (label, r.mcpbox))
            if warm and not wait_pool(d.url, n_pool):
                ctx.log("  P1: the pool did not refill to %d within 180 s" % n_pool)
            lat, wall, errs, first = burst(lambda: Acquirer(B.Api(d.url), names, wait_for),
                                           api, n_burst)
            s = B.summary(lat)
            r = B.Row("P1.burst.%s" % ("warm" if warm else "cold"),
                      "burst of %d concurrent acquires of Atlas's 8 servers until tools/list, %s"
                      % (n_burst, label),
                      B.fmt_lat(s, thr=False) + "; all %d ready after %.2f s" % (n_burst, wall),
                      errors=errs, note=note + ("; first error: %s" % first[:200] if first else ""))
            r.data = {"ready": s, "wall_s": wall}
            rows.append(r)
            ctx.log("  P1 burst %s: %s" % (label, r.mcpbox))
            if not warm:
                rows.append(rt_row(api, n_rt, ctx))
        finally:
            api.close()
            d.stop()
    return rows
