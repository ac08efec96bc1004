"""P2 tool calls: filesystem read_text_file of a 1 KB file and list_directory
of 100 entries, over MCP Streamable HTTP, with 1 and 64 concurrent sessions,
and MCP-Atlas's one-session-per-call pattern; mcpbox (the filesystem server of
an acquired sandbox, behind the daemon's gateway) against the npm reference
server @modelcontextprotocol/server-filesystem behind npm supergateway
(--stateful, one session per client), on the same files.

Before any timing, one call on each side is checked against the files
(exact text); then bench/loadgen checks every answer for the file's token or
the directory's entry count, and rejects error results."""
import io
import json
import os
import tarfile
import time

import benchlib as B

TOKEN = "P2-TOKEN-7f3a9c"


def make_tree(root):
    """bench/file1k.txt (1,024 bytes ending in TOKEN) and bench/dir100/
    (100 files); the same bytes every time."""
    os.makedirs(os.path.join(root, "bench", "dir100"), exist_ok=True)
    line = "the quick brown fox jumps over the lazy dog 0123456789\n"
    text = (line * 40)[: 1024 - len(TOKEN) - 1] + TOKEN + "\n"
    assert len(text) == 1024
    with open(os.path.join(root, "bench", "file1k.txt"), "w") as f:
        f.write(text)
    names = ["entry-%03d.txt" % i for i in range(100)]
    for n in names:
        with open(os.path.join(root, "bench", "dir100", n), "w") as f:
            f.write(n)
    return text, names


def tar_gz(root):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w:gz") as t:
        t.add(os.path.join(root, "bench"), arcname="bench")
    return bio.getvalue()


def upload(api, sid, data):
    """upload-url, PUT, initialize: the Klavis flow."""
    up = api.call("POST", "/local-sandbox/%s/upload-url" % sid)["upload_url"]
    h = B.Http(up)
    st, _, body = h.request("PUT", B.path_of(up), data, {"Content-Type": "application/gzip"})
    h.close()
    if st not in (200, 201, 204):
        raise B.BenchError("PUT upload: HTTP %d %s" % (st, body[:200]))
    api.call("POST", "/local-sandbox/%s/initialize" % sid)


def check_side(url, root, text, names):
    """One exact check of both tools on a server whose files are under root."""
    s = B.McpSession(url).open()
    try:
        got = s.call("read_text_file", {"path": root + "/bench/file1k.txt"})
        if got != text:
            raise B.BenchError("read_text_file at %s: wrong text (%d bytes)" % (url, len(got)))
        got = s.call("list_directory", {"path": root + "/bench/dir100"})
        want = "\n".join("[FILE] " + n for n in names)
        if got.strip() != want:
            raise B.BenchError("list_directory at %s: wrong listing: %r" % (url, got[:200]))
    finally:
        s.close()


def raw_count(url, body, needle):
    """How often needle occurs in the raw answer to body (the figure the
    generator then expects of every answer)."""
    s = B.McpSession(url).open()
    try:
        st, hd, data = s._post(json.loads(body.replace("%ID%", "1")))
        if st != 200:
            raise B.BenchError("reference call: HTTP %d" % st)
        return data.decode().count(needle)
    finally:
        s.close()


def bodies(root):
    read = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {
        "name": "read_text_file", "arguments": {"path": root + "/bench/file1k.txt"}}})
    lst = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {
        "name": "list_directory", "arguments": {"path": root + "/bench/dir100"}}})
    return read.replace('"id": 0', '"id": %ID%'), lst.replace('"id": 0', '"id": %ID%')


TRIVIAL = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {
    "name": "list_allowed_directories", "arguments": {}}}).replace('"id": 0', '"id": %ID%')


class Side:
    """One server setup under test. pid roots the process tree whose CPU is
    counted as the server side's (the daemon with its sandboxes' servers, or
    supergateway with its node children)."""

    def __init__(self, name, url, root, pid):
        self.name, self.url, self.root, self.pid = name, url, root, pid
        self.read, self.list = bodies(root)
        self.list_count = raw_count(url, self.list, "[FILE] ")

    def case(self, kind, sessions, mode, dur, warm, runs):
        cpu0, t0 = B.tree_cpu_s(self.pid), time.monotonic()
        res = self._run(kind, sessions, mode, dur, warm, runs)
        cpu, wall = B.tree_cpu_s(self.pid) - cpu0, time.monotonic() - t0
        # Server-side CPU per call: the share of a core used over the whole
        # run (warm-up included, whose rate is the same) over the median rate.
        res["server_cpu_share"] = cpu / wall
        res["server_cpu_us"] = (1e6 * cpu / wall / res["throughput"]
                                if res.get("throughput") else None)
        return res

    def _run(self, kind, sessions, mode, dur, warm, runs):
        if kind == "trivial":
            return B.loadgen(self.url, mode=mode, sessions=sessions, duration=dur, warmup=warm,
                             body=TRIVIAL, expect=["Allowed directories:"],
                             reject=['"isError":true'], windows=runs)
        if kind == "read":
            return B.loadgen(self.url, mode=mode, sessions=sessions, duration=dur, warmup=warm,
                             body=self.read, expect=[TOKEN], reject=['"isError":true'],
                             windows=runs)
        return B.loadgen(self.url, mode=mode, sessions=sessions, duration=dur, warmup=warm,
                         windows=runs, body=self.list,
                         expect=["entry-000.txt", "entry-099.txt"],
                         expect_count=("[FILE] ", self.list_count),
                         reject=['"isError":true'])


def start_mcpbox(ctx, tree, text, names):
    """An acquired sandbox's filesystem server through the daemon; if this
    daemon does not serve MCP yet (503), `mcpbox bridge` running the same
    native server on the tree, and the rows say so."""
    d = B.Daemon(ctx.workdir, name="p2-serve").start()
    api = B.Api(d.url)
    sb = api.acquire(["filesystem"])
    sid = sb["local_sandbox_id"]
    url = sb["servers"][0]["mcp_server_url"]
    upload(api, sid, tar_gz(tree))
    try:
        check_side(url, "/data", text, names)
        return d, api, url, "/data", None, d.pid
    except B.BenchError as e:
        if "HTTP 503" not in str(e):
            raise
    ctx.log("  P2: the daemon answers 503 on MCP URLs; measuring `mcpbox bridge` instead")
    port = B.free_port()
    br = B.Proc([B.MCPBOX, "bridge", "--listen", "127.0.0.1:%d" % port, "--",
                 B.MCPBOX, "mcp", "filesystem", tree],
                os.path.join(ctx.workdir, "p2-bridge.log"))
    B.wait_url("http://127.0.0.1:%d/health" % port)
    url = "http://127.0.0.1:%d/filesystem/mcp" % port
    check_side(url, tree, text, names)
    return d, api, url, tree, br, br.p.pid


def start_alternative(ctx, tree, native=False):
    """supergateway in front of the npm server, or (native) in front of the
    same stdio server the sandbox runs, `mcpbox mcp filesystem`."""
    port = B.free_port()
    server = os.path.join(B.NODE_DIR, "node_modules", "@modelcontextprotocol",
                          "server-filesystem", "dist", "index.js")
    sg = os.path.join(B.NODE_DIR, "node_modules", "supergateway", "dist", "index.js")
    cmd = ("%s mcp filesystem %s" % (B.MCPBOX, tree) if native
           else "%s %s %s" % (B.NODE, server, tree))
    argv = [B.NODE, sg, "--stdio", cmd,
            "--outputTransport", "streamableHttp", "--stateful", "--port", str(port),
            "--logLevel", "none", "--healthEndpoint", "/healthz"]
    p = B.Proc(argv, os.path.join(ctx.workdir, "p2-supergateway%s.log" % (
        "-native" if native else "")))
    B.wait_url("http://127.0.0.1:%d/healthz" % port, timeout=60)
    return p, "http://127.0.0.1:%d/mcp" % port


def run(ctx):
    tree = ctx.tmp("p2-tree")
    text, names = make_tree(tree)
    d = api = alt = alt2 = bridge = None
    rows = []
    try:
        d, api, url, root, bridge, pid = start_mcpbox(ctx, tree, text, names)
        ours = Side("mcpbox", url, root, pid)
        alt, alt_url = start_alternative(ctx, tree)
        check_side(alt_url, tree, text, names)
        theirs = Side("supergateway", alt_url, tree, alt.p.pid)
        alt2, alt2_url = start_alternative(ctx, tree, native=True)
        check_side(alt2_url, tree, text, names)
        theirs_native = Side("supergateway-native", alt2_url, tree, alt2.p.pid)
        dur, warm = (0.5, 0.2) if ctx.smoke else (1.0, 0.5) if ctx.quick else (4.0, 1.0)
        cases = [("read", 1, "mcp"), ("read", ctx.wide, "mcp"), ("list", 1, "mcp"),
                 ("list", ctx.wide, "mcp"), ("read", 1, "mcp-per-call"),
                 ("trivial", 1, "mcp"), ("trivial", ctx.wide, "mcp")]
        for kind, conc, mode in cases:
            res = {}
            # The trivial tool compares the two HTTP fronts over one and the
            # same stdio server: the gateway against supergateway.
            other = theirs_native if kind == "trivial" else theirs
            for side in (ours, other):
                # a whole session per call takes the npm side ~0.3 s: longer windows
                d_ = max(dur, 3.0) if mode == "mcp-per-call" else dur
                res[side.name] = side.case(kind, conc, mode, d_, warm, ctx.runs)
                ctx.log("  P2 %s c%d %s %s: %s" % (kind, conc, mode, side.name, json.dumps(
                    {k: v for k, v in res[side.name].items() if k != "windows"})))
            m, a = res["mcpbox"], res[other.name]
            what = {"read": "read_text_file 1 KB", "list": "list_directory 100 entries",
                    "trivial": "list_allowed_directories (a trivial tool)"}[kind]
            sess = "%d session%s" % (conc, "s" if conc > 1 else "")
            if mode == "mcp-per-call":
                sess = "a new session per call (initialize, call, DELETE)"
            rid = "P2.%s.%s%d" % (kind, "s" if mode == "mcp-per-call" else "c", conc)
            alt_name = ("supergateway 4.0.0 + the same `mcpbox mcp filesystem` (on the host)"
                        if kind == "trivial" else "supergateway 4.0.0 + npm server-filesystem")
            row = B.Row(rid, "%s, %s" % (what, sess), B.fmt_lat(m), B.fmt_lat(a),
                        alt_name=alt_name,
                        ratio=m["throughput"] / a["throughput"] if a.get("throughput") else None,
                        errors=int(m["errors"] + a["errors"]))
            row.note = "ratio = throughput; generator CPU %.0f%% of a core" % (
                100 * m["cpu_s"] / m["wall_s"])
            if m.get("server_cpu_us") and a.get("server_cpu_us"):
                row.note += ("; server-side CPU per call %.0f µs (mcpbox: daemon + server) vs "
                             "%.0f µs (supergateway + server), %.1f× less" % (
                                 m["server_cpu_us"], a["server_cpu_us"],
                                 a["server_cpu_us"] / m["server_cpu_us"]))
            for side, v in (("mcpbox", m), ("alternative", a)):
                if v["errors"]:
                    row.note += "; %s first error: %s" % (side, v["first_error"][:200])
            if bridge:
                row.note += "; mcpbox side: `mcpbox bridge` (this daemon serves no MCP yet)"
            row.data = res
            rows.append(row)
    finally:
        if alt:
            alt.stop()
        if alt2:
            alt2.stop()
        if bridge:
            bridge.stop()
        if api:
            api.close()
        if d:
            d.stop()
    return rows
