"""P12 desktop-commander per-tool latency: mcpbox's native 0.2.7 (one
acquired sandbox, behind the daemon's gateway) against npm
@wonderwhy-er/desktop-commander 0.2.10 (the version on the registry; its
file, search and process code is 0.2.7's) behind npm supergateway
(--stateful), on the same data, N sequential calls on one session per run
(bench/loadgen, as P8 drives it):
  - read_file of a 51-line CSV (the shape of MCP-Atlas's Top Movies.csv);
  - search_code for a word in 100 files (ripgrep on both sides: Debian's rg
    inside the sandbox, @vscode/ripgrep's for npm);
  - start_process of `echo call-N` (a shell spawned and waited for each call;
    mcpbox spawns it inside the sandbox);
  - interact_with_process on a python3 -i REPL started before the run (input
    written, output read until the prompt comes back: the
    start_process + read_process_output work of an agent's REPL session).
Every answer, warm-up included, is checked off the timed path: no isError,
the text this benchmark expects for that call, and the same text as the
reference's once each side's root and pids are replaced by placeholders
(search_code's file blocks sorted: ripgrep's threads finish in any order)."""
import io
import os
import re
import shutil
import tarfile
import time

import benchlib as B
from p2_calls import upload
from p8_tools import Side, counts, start_alternative

ALT = "supergateway 4.0.0 + npm @wonderwhy-er/desktop-commander 0.2.10"
HOST_PATH = "/usr/local/bin:/usr/bin:/bin"
N_CODE, N_NEEDLE = 100, 20


def make_tree(root):
    b = os.path.join(root, "bench10")
    os.makedirs(os.path.join(b, "code"), exist_ok=True)
    rows = ["Title,IMDb Rating,Runtime,Genre,Votes"] + [
        'Movie %02d,%.1f,%d min,Drama,"%d,%03d"' % (i, 9.3 - i * 0.02, 90 + i, i + 1, i)
        for i in range(50)]
    csv = "\n".join(rows)
    with open(os.path.join(b, "movies.csv"), "w") as f:
        f.write(csv)
    for i in range(N_CODE):
        with open(os.path.join(b, "code", "m%03d.py" % i), "w") as f:
            for k in range(40):
                word = "needle" if i < N_NEEDLE and k == 7 else "hay"
                f.write("def f_%d_%d():\n    return '%s %d'\n" % (i, k, word, k))
    for dirpath, _, files in os.walk(b):
        for fn in files:
            os.utime(os.path.join(dirpath, fn), (1700000000, 1700000000))
    return {"csv": csv}


def tar_gz(tree):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w:gz") as t:
        t.add(os.path.join(tree, "bench10"), arcname="bench10")
    return bio.getvalue()


def pid_of(text):
    m = re.match(r"Process started with PID (\d+) ", text)
    if not m:
        raise B.BenchError("start_process: %r" % text[:200])
    return int(m.group(1))


def comparable(tool, text, pids):
    for p in pids:
        text = re.sub(r"\b%d\b" % p, "<PID>", text)
    if tool == "search_code":
        text = "\n\n".join(sorted(text.split("\n\n")))
    return text


def specs(facts):
    """(row id, tool, args(i, R, repl_pid), check(i, text), label, kind)."""
    def read_check(i, t):
        want = "[Reading 51 lines from start (total: 51 lines, 0 remaining)]\n\n" + facts["csv"]
        return None if t == want else "not the file"

    def search_check(i, t):
        n = t.count(": needle")
        return None if n == N_NEEDLE and t.count(":\n  ") == N_NEEDLE else "%d matches" % n

    def start_check(i, t):
        ok = re.fullmatch(r"Process started with PID <PID> \(shell: /bin/sh\)\nInitial output:\n"
                          r"call-%d\n(\n.*)?" % i, t, re.S)
        return None if ok else "not the echo"

    def repl_check(i, t):
        ok = t.startswith("\u2705 Input executed in process <PID>:\n\n\U0001F4E4 Output:\n%d\n"
                          % (2 * i))
        return None if ok else "not the REPL's answer"

    return [
        ("P12.read_file", "read_file", lambda i, R, p: {"path": R + "/bench10/movies.csv"},
         read_check, "51-line CSV (3 KB)", "fast"),
        ("P12.search_code", "search_code",
         lambda i, R, p: {"path": R + "/bench10/code", "pattern": "needle"},
         search_check, "a word in 20 of 100 files (ripgrep)", "fast"),
        ("P12.start_process", "start_process",
         lambda i, R, p: {"command": "echo call-%d" % i, "timeout_ms": 10000},
         start_check, "`echo` in /bin/sh, until it exits", "spawn"),
        ("P12.interact", "interact_with_process",
         lambda i, R, p: {"pid": p, "input": "print(%d * 2)" % i, "timeout_ms": 10000},
         repl_check, "`print(i * 2)` in a python3 -i REPL", "spawn"),
    ]


def repl_run(side, tool, arg_list, warm, repl):
    """The REPL row: supergateway --stateful gives each MCP session its own
    server process, so the npm side's REPL only lives in the session that
    started it. Both sides therefore run here, from Python: one session,
    start_process python3 -i and read_process_output (untimed), then the
    calls one after another;
    a summary of the shape bench/loadgen prints."""
    s = B.McpSession(side.urls["desktop-commander"]).open()
    texts, times = [], []
    errors, first = 0, None
    try:
        pid = pid_of(s.call("start_process", {"command": "python3 -i", "timeout_ms": 10000}))
        repl[side.name] = pid
        # the banner and first prompt are still unread: the first read takes them
        s.call("read_process_output", {"pid": pid, "timeout_ms": 3000})
        t_all = time.perf_counter()
        for k, a in enumerate(arg_list):
            a = dict(a, pid=pid)
            t = time.perf_counter()
            try:
                res, _ = s.request("tools/call", {"name": tool, "arguments": a})
                text = "".join(c.get("text", "") for c in res.get("content", []))
                texts.append((text, None) if not res.get("isError") else (None, "isError: " + text[:200]))
            except B.BenchError as e:
                texts.append((None, str(e)[:200]))
            if k >= warm:
                times.append((time.perf_counter() - t) * 1000)
            if k == warm - 1:
                t_all = time.perf_counter()
        secs = time.perf_counter() - t_all
    finally:
        s.http.close()
    times.sort()
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]
    return {"requests": len(times), "p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": times[-1],
            "throughput": len(times) / secs if secs > 0 else 0, "seconds": secs,
            "errors": errors, "first_error": first, "gen_cpu_us": 0}, texts


def measure(ctx, sides, repl, spec):
    rid, tool, args, check, label, kind = spec
    warm, n = counts(ctx)[0 if kind == "fast" else 1]
    runs = {s.name: [] for s in sides}
    errors, first = 0, ""
    for r in range(ctx.runs):
        idxs = list(range(r * (warm + n), (r + 1) * (warm + n)))
        outs = {}
        for side in sides:
            arg_list = [args(i, side.root, repl.get(side.name)) for i in idxs]
            if tool == "interact_with_process":
                summary, outs[side.name] = repl_run(side, tool, arg_list, warm, repl)
            else:
                summary, outs[side.name] = side.run("desktop-commander", tool, arg_list, warm,
                                                    60 if kind == "fast" else 300)
            runs[side.name].append(summary)
            if summary["errors"]:
                errors += summary["errors"]
                first = first or "%s: %s" % (side.name, summary["first_error"])
        for k, idx in enumerate(idxs):
            texts = {}
            for name, (text, err) in ((s, outs[s][k]) for s in outs):
                if err is None:
                    pids = ([pid_of(text)] if tool == "start_process" else
                            [repl[name]] if tool == "interact_with_process" else [])
                    text = comparable(tool, text, pids)
                    err = check(idx, text)
                if err:
                    errors += 1
                    first = first or "%s call %d: %s" % (name, idx, err)
                else:
                    texts[name] = text
            if len(texts) == 2 and texts["mcpbox"] != texts["supergateway"]:
                errors += 1
                first = first or "call %d: mcpbox %r != reference %r" % (
                    idx, texts["mcpbox"][:160], texts["supergateway"][:160])
    m, a = B.median_runs(runs["mcpbox"]), B.median_runs(runs["supergateway"])
    row = B.Row(rid, "desktop-commander %s, %s, %d sequential calls on one session" % (
                    tool, label, n), B.fmt_lat(m), B.fmt_lat(a), alt_name=ALT,
                ratio=m["throughput"] / a["throughput"] if a.get("throughput") else None,
                errors=int(errors), cmd="bench/run --only P12")
    row.note = "ratio = calls/s; generator CPU %.0f µs per call" % m["gen_cpu_us"]
    if tool == "interact_with_process":
        row.note = ("ratio = calls/s; calls made from Python on one session per run (npm: "
                    "supergateway --stateful starts a server process per session, so its REPL "
                    "lives only in the session that started it; mcpbox's is shared by all)")
    if kind == "spawn":
        row.note += "; mcpbox runs the process inside the sandbox, npm on the host"
    if errors:
        row.note += "; first error: %s" % first[:300]
    row.data = {"mcpbox": runs["mcpbox"], "supergateway": runs["supergateway"],
                "warmup": warm, "calls": n}
    return row


def run(ctx):
    work = ctx.tmp("p10-upload")
    facts = make_tree(work)
    tree = ctx.tmp("p10-tree")
    shutil.copytree(os.path.join(work, "bench10"), os.path.join(tree, "bench10"))
    home = ctx.tmp("p10-home")
    d = api = alt = None
    rows = []
    try:
        d = B.Daemon(ctx.workdir, name="p10-serve").start()
        api = B.Api(d.url)
        sb = api.acquire(["desktop-commander"])
        if sb["servers"][0].get("status") == "error":
            raise B.BenchError("acquire: %s" % sb["servers"])
        upload(api, sb["local_sandbox_id"], tar_gz(work))
        ours = Side("mcpbox", {"desktop-commander": sb["servers"][0]["mcp_server_url"]},
                    "/data", ctx.workdir)
        ref = os.path.join(B.NODE_DIR, "node_modules", "desktop-commander-0.2.10", "dist",
                           "index.js")
        env = dict(os.environ, HOME=home, PATH=HOST_PATH + ":" + os.environ.get("PATH", ""))
        alt, url = start_alternative(ctx, "desktop-commander", [B.NODE, ref], env)
        theirs = Side("supergateway", {"desktop-commander": url}, tree, ctx.workdir)
        s = B.McpSession(url).open()
        s.call("set_config_value", {"key": "allowedDirectories", "value": [tree]})
        s.http.close()
        sides = [ours, theirs]
        repl = {}
        ctx.log("  P12: both sides up")
        for spec in specs(facts):
            row = measure(ctx, sides, repl, spec)
            ctx.log("  %s: %s | %s | errors %d" % (row.id, row.mcpbox, row.alt, row.errors))
            rows.append(row)
    finally:
        if alt:
            alt.stop()
        if api:
            api.close()
        if d:
            d.stop()
    return rows
