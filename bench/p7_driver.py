"""The gateway driver shared by the document rows P7W (word) and P7P (powerpoint): a
daemon with one Toolathlon sandbox holding the server and the big input file, one
MCP session timing a read and a write workload (the first run of each is the
warm-up) with the server's peak RSS, the alternative run as this script's own "alt"
child process, and the three rows (read, write, RSS) both modules report."""
import json
import os
import subprocess

import benchlib as B
from p2_calls import upload
from p7_office import runs_text, server_pid, tar_gz


def table_data(rows, cols):
    return [["r%dc%d" % (r, c) for c in range(cols)] for r in range(rows)]


def measure(ctx, d, sid, url, server, read, write, check):
    """On one session to `server`: ctx.runs + 1 reads (read(s, i) -> (ms, errors)), then
    as many writes (write(s, i) -> ms), then check(s) -> errors; the server's VmHWM
    at the start and at the end."""
    s = B.McpSession(url).open()
    pid = server_pid(d.pid, sid, server)
    rss_start = B.proc_status(pid)["VmHWM"]
    reads, writes_ms, errors = [], [], 0
    try:
        for i in range(ctx.runs + 1):  # the first run is the warm-up
            ms, err = read(s, i)
            errors += err
            if i:
                reads.append(ms)
        for i in range(ctx.runs + 1):
            ms = write(s, i)
            if i:
                writes_ms.append(ms)
        errors += check(s)
        rss = B.proc_status(pid)["VmHWM"]
    finally:
        s.close()
    return {"read": B.summary(reads), "write": B.summary(writes_ms), "vmhwm": rss,
            "vmhwm_start": rss_start, "errors": errors}


def in_sandbox(ctx, row, server, files, side):
    """side(daemon, sandbox id, MCP URL) on a fresh daemon's Toolathlon sandbox with
    `server` and `files` in /data; its result is logged and returned."""
    d = api = None
    try:
        d = B.Daemon(ctx.workdir, name="%s-serve" % row.lower()).start()
        api = B.Api(d.url)
        sb = api.acquire([server], benchmark="Toolathlon")
        sid = sb["local_sandbox_id"]
        upload(api, sid, tar_gz(files))
        out = side(d, sid, sb["servers"][0]["mcp_server_url"])
        ctx.log("  %s %s: %s" % (row, server, json.dumps(out)))
    finally:
        if api:
            api.close()
        if d:
            d.stop()
    return out


def alternative(script, *args):
    """The JSON line `python3 script alt ARGS...` prints last."""
    out = subprocess.run(["/usr/bin/python3", os.path.abspath(script), "alt", *[str(a) for a in args]],
                         capture_output=True, text=True, timeout=3600,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(__file__))))
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise B.BenchError("%s alt failed (%d): %s" % (os.path.basename(script), out.returncode,
                                                       out.stderr[-1000:]))


def doc_rows(ctx, row, kind, server, ours, alt, alt_err, lib, read_what, write_what, write_calls):
    """ROW.KIND_read, ROW.KIND_write and ROW.KIND_rss."""
    ar, aw = B.summary(alt["read_ms"]), B.summary(alt["write_ms"])
    cmd = "bench/run --only %s" % row
    errors = int(ours["errors"] + alt_err)
    out = []
    r = B.Row("%s.%s_read" % (row, kind), "%s, %s" % (read_what, runs_text(ctx.runs)),
              B.fmt_lat(ours["read"], thr=False), B.fmt_lat(ar, thr=False), alt_name=lib,
              ratio=B.ratio(ar["p50_ms"], ours["read"]["p50_ms"]), errors=errors, cmd=cmd)
    r.note = "ratio = alternative p50 / mcpbox p50; mcpbox through HTTP, gateway and sandbox"
    r.data = {"mcpbox": ours, "alternative": alt}
    out.append(r)
    r = B.Row("%s.%s_write" % (row, kind), "%s, %s" % (write_what, runs_text(ctx.runs)),
              B.fmt_lat(ours["write"], thr=False), B.fmt_lat(aw, thr=False), alt_name=lib,
              ratio=B.ratio(aw["p50_ms"], ours["write"]["p50_ms"]), errors=errors, cmd=cmd)
    r.note = "time of all %d calls; ratio = alternative p50 / mcpbox p50" % write_calls
    out.append(r)
    r = B.Row("%s.%s_rss" % (row, kind), "%s server peak RSS (VmHWM) over the reads and writes above"
              % server, "VmHWM %s (%s after start)" % (B.fmt_mb(ours["vmhwm"]), B.fmt_mb(ours["vmhwm_start"])),
              "peak RSS %s" % B.fmt_mb(alt["maxrss"]), alt_name=lib,
              ratio=B.ratio(alt["maxrss"], ours["vmhwm"]), cmd=cmd)
    r.note = "ratio = alternative / mcpbox"
    out.append(r)
    return out
