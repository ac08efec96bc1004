"""P8 per-tool latency: one row per tool of filesystem, localmemory and
code-runner, each measured as N sequential calls on one MCP session
(p50/p99/max and calls per second); mcpbox (the three servers of one acquired
sandbox, behind the daemon's gateway) against the npm reference servers
behind npm supergateway (--stateful), on the same data:
  - filesystem: @modelcontextprotocol/server-filesystem on a host copy of the
    tree that is uploaded into the sandbox (the Klavis flow);
  - localmemory: @modelcontextprotocol/server-memory, both seeded with the
    same graph of 200 entities and 200 relations through create_entities and
    create_relations;
  - code-runner: mcp-server-code-runner (it runs the snippet on the host;
    mcpbox runs it inside the sandbox).

The calls are made by bench/loadgen (one session, --bodies: each call its own
arguments, --warmup-requests: a counted warm-up, --answers: every answer
saved). Each run is a new session: W warm-up calls, then N timed calls; three
runs per side, the sides alternating. Every answer, warm-up included, is
checked after the run, off the timed path: HTTP 200, a JSON-RPC result
without isError, the text this benchmark expects for that call (a file's
bytes, the doubled number a snippet prints, the entity it created...), and
the same text as the reference's answer to the same call once each side's
root directory is replaced by a placeholder. The one value that cannot be
equal is left out: the "created" and "accessed" lines of get_file_info (the
two copies were made at different moments). Both sides get the same calls in
the same order, so stateful tools (write_file, add_observations,
create_entities) see the same state on both sides."""
import io
import json
import os
import re
import shutil
import subprocess
import tarfile

import benchlib as B
from p2_calls import upload

ALT_FS = "supergateway 4.0.0 + npm server-filesystem"
ALT_MEM = "supergateway 4.0.0 + npm server-memory"
ALT_CR = "supergateway 4.0.0 + npm mcp-server-code-runner (runs code on the host)"
HOST_PATH = "/usr/local/bin:/usr/bin:/bin"  # the interpreters the sandbox sees too
N_ENTITIES = 200


# ------------------------------------------------------------------ data

def line_text(n, tag):
    return "".join("%s line %03d: the quick brown fox jumps over the lazy dog\n" % (tag, i)
                   for i in range(n))


def make_tree(root):
    """bench8/ under root; the same bytes every time. Returns what the checks
    need to know about it."""
    b = os.path.join(root, "bench8")
    for d in ("multi", "sizes", "tree"):
        os.makedirs(os.path.join(b, d), exist_ok=True)
    facts = {}
    text = line_text(80, "file4k")[:4096]
    with open(os.path.join(b, "file4k.txt"), "w") as f:
        f.write(text)
    facts["file4k"] = text
    facts["multi"] = []
    for name in ("one", "two", "three"):
        t = line_text(16, name)[:1024]
        with open(os.path.join(b, "multi", name + ".txt"), "w") as f:
            f.write(t)
        facts["multi"].append(("bench8/multi/%s.txt" % name, t))
    with open(os.path.join(b, "edit.txt"), "w") as f:
        f.write(line_text(100, "edit"))
    with open(os.path.join(b, "write.txt"), "w") as f:
        f.write("before\n")
    for i in range(100):
        with open(os.path.join(b, "sizes", "f%03d.dat" % i), "w") as f:
            f.write("x" * (i * 37 % 5000))
    for i in range(10):
        os.makedirs(os.path.join(b, "sizes", "d%02d" % i), exist_ok=True)
    facts["sizes"] = (100, 10)
    n_md = 0
    for i in range(5):
        for j in range(4):
            d = os.path.join(b, "tree", "dir%d" % i, "sub%d" % j)
            os.makedirs(d, exist_ok=True)
            for k in range(5):
                ext = "md" if k == 0 else "txt"
                n_md += ext == "md"
                with open(os.path.join(d, "note%d.%s" % (k, ext)), "w") as f:
                    f.write("note %d %d %d\n" % (i, j, k))
    facts["tree"] = (5 + 5 * 4, 5 * 4 * 5)  # directories, files
    facts["tree_md"] = n_md
    for dirpath, dirnames, files in os.walk(b):
        for fn in files:
            os.utime(os.path.join(dirpath, fn), (1700000000, 1700000000))
    return facts


def entity(i):
    return {"name": "entity-%03d" % i, "entityType": "kind-%02d" % (i % 20),
            "observations": ["fact %d about entity %d" % (k, i) for k in range(3)]}


def seed_calls():
    ents = [entity(i) for i in range(N_ENTITIES)]
    rels = [{"from": "entity-%03d" % i, "to": "entity-%03d" % ((i * 7 + 1) % N_ENTITIES),
             "relationType": "relates to"} for i in range(N_ENTITIES)]
    return [("create_entities", {"entities": ents}), ("create_relations", {"relations": rels})]


# ------------------------------------------------------------------ tools
# Each tool: (row id, server, tool, args(i, R), check(i, text) -> error or None,
#             label, kind); R is the side's root directory; check sees the
# text with R already replaced by "<ROOT>".

def tools(facts):
    F = facts

    def eq(want):
        return lambda i, t: None if t == want(i) else "expected %r" % want(i)[:120]

    def multi_text(i):
        return "\n---\n".join("<ROOT>/%s:\n%s\n" % (p, t) for p, t in F["multi"])

    def multi_check(i, t):
        missing = [p for p, txt in F["multi"] if txt not in t or p not in t]
        return "missing %s" % missing if missing else None

    def edit_check(i, t):
        ok = t.startswith("```diff") and "-edit line 050:" in t and "+edit line fifty" in t
        return None if ok else "not the expected diff"

    def sizes_check(i, t):
        files, dirs = F["sizes"]
        ok = t.count("[FILE] ") == files and t.count("[DIR] ") == dirs and "Total: " in t
        return None if ok else "not %d files and %d directories" % (files, dirs)

    def tree_check(i, t):
        try:
            tree = json.loads(t)
        except ValueError:
            return "not JSON"
        counts = [0, 0]

        def walk(nodes):
            for n in nodes:
                counts[n["type"] == "file"] += 1
                walk(n.get("children", []))
        walk(tree)
        return None if tuple(counts) == F["tree"] else "counted %s" % counts

    def search_check(i, t):
        lines = [l for l in t.split("\n") if l]
        ok = len(lines) == F["tree_md"] and all(l.endswith(".md") for l in lines)
        return None if ok else "%d matches" % len(lines)

    def info_check(i, t):
        ok = "size: 4096" in t.split("\n") and "isFile: true" in t.split("\n")
        return None if ok else "no size/isFile line"

    def json_eq(want):
        def check(i, t):
            try:
                got = json.loads(t)
            except ValueError:
                return "not JSON"
            return None if got == want(i) else "expected %s" % json.dumps(want(i))[:120]
        return check

    def graph_check(i, t):
        try:
            g = json.loads(t)
        except ValueError:
            return "not JSON"
        ok = len(g["entities"]) >= N_ENTITIES and len(g["relations"]) >= N_ENTITIES
        return None if ok else "%d entities" % len(g["entities"])

    def search_nodes_want(i):
        return sorted(e["name"] for e in map(entity, range(N_ENTITIES))
                      if e["entityType"] == "kind-%02d" % (i % 20))

    def nodes_check(want):
        def check(i, t):
            try:
                got = sorted(e["name"] for e in json.loads(t)["entities"])
            except (ValueError, KeyError, TypeError):
                return "not a graph"
            return None if got == want(i) else "entities %s" % got[:5]
        return check

    def open_names(i):
        return sorted("entity-%03d" % ((i * 13 + k * 41) % N_ENTITIES) for k in range(5))

    fs = [
        ("read_text_file", lambda i, R: {"path": R + "/bench8/file4k.txt"},
         eq(lambda i: F["file4k"]), "4 KB file"),
        ("read_multiple_files", lambda i, R: {"paths": [R + "/" + p for p, _ in F["multi"]]},
         multi_check, "three 1 KB files"),
        ("write_file", lambda i, R: {"path": R + "/bench8/write.txt",
                                     "content": "written by call %d\n" % i},
         eq(lambda i: "Successfully wrote to <ROOT>/bench8/write.txt"), "a 20 B file"),
        ("edit_file", lambda i, R: {"path": R + "/bench8/edit.txt", "dryRun": True,
                                    "edits": [{"oldText": "edit line 050:",
                                               "newText": "edit line fifty:"}]},
         edit_check, "dryRun, one edit in 100 lines"),
        ("list_directory_with_sizes", lambda i, R: {"path": R + "/bench8/sizes"},
         sizes_check, "100 files + 10 directories"),
        ("directory_tree", lambda i, R: {"path": R + "/bench8/tree"},
         tree_check, "25 directories, 100 files"),
        ("search_files", lambda i, R: {"path": R + "/bench8/tree", "pattern": "**/*.md"},
         search_check, "glob **/*.md over 125 entries"),
        ("get_file_info", lambda i, R: {"path": R + "/bench8/file4k.txt"},
         info_check, "4 KB file"),
        ("list_allowed_directories", lambda i, R: {},
         eq(lambda i: "Allowed directories:\n<ROOT>"), ""),
    ]
    mem = [
        ("read_graph", lambda i, R: {}, graph_check, "200 entities, 200 relations"),
        ("search_nodes", lambda i, R: {"query": "kind-%02d" % (i % 20)},
         nodes_check(search_nodes_want), "query matching 10 entities"),
        ("open_nodes", lambda i, R: {"names": open_names(i)},
         nodes_check(open_names), "5 names"),
        ("add_observations", lambda i, R: {"observations": [{
            "entityName": "entity-%03d" % (i % N_ENTITIES),
            "contents": ["observation of call %d" % i]}]},
         json_eq(lambda i: [{"entityName": "entity-%03d" % (i % N_ENTITIES),
                             "addedObservations": ["observation of call %d" % i]}]),
         "one new observation"),
        ("create_entities", lambda i, R: {"entities": [{
            "name": "new-%d" % i, "entityType": "bench", "observations": ["made by %d" % i]}]},
         json_eq(lambda i: [{"name": "new-%d" % i, "entityType": "bench",
                             "observations": ["made by %d" % i]}]),
         "one new entity (the graph grows)"),
    ]
    cr = [
        ("javascript", lambda i, R: {"code": "console.log(%d * 2)" % i,
                                     "languageId": "javascript"},
         eq(lambda i: "%d\n" % (2 * i)), "console.log(i * 2)"),
        ("python", lambda i, R: {"code": "print(%d * 2)" % i, "languageId": "python"},
         eq(lambda i: "%d\n" % (2 * i)), "print(i * 2)"),
    ]
    out = []
    for name, args, check, label in fs:
        out.append(("P8.fs.%s" % name, "filesystem", name, args, check, label, "fast"))
    for name, args, check, label in mem:
        out.append(("P8.mem.%s" % name, "localmemory", name, args, check, label, "fast"))
    for lang, args, check, label in cr:
        out.append(("P8.cr.%s" % lang, "code-runner", "run-code", args, check, label, "spawn"))
    return out


# ------------------------------------------------------------------ sides

def parse_answers(path):
    """The records bench/loadgen --answers wrote: {call: (timed, body bytes)}."""
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        call, timed, length = (int(x) for x in data[pos:nl].split())
        body = data[nl + 1:nl + 1 + length]
        out[call] = (bool(timed), body)
        pos = nl + 1 + length + 1
    return out


def rpc_result(body):
    """(result text, None) or (None, what was wrong) of one answer body, JSON
    or an SSE stream (the content type is not recorded: sniffed)."""
    try:
        text = body.decode()
        if text.lstrip().startswith("{") or text.lstrip().startswith("["):
            msgs = B.mcp_messages({"content-type": "application/json"}, body)
        else:
            msgs = B.mcp_messages({"content-type": "text/event-stream"}, body)
    except ValueError as e:
        return None, "unparsable answer (%s): %r" % (e, body[:200])
    for m in msgs:
        if "id" not in m:
            continue
        if "error" in m:
            return None, "JSON-RPC error %s" % json.dumps(m["error"])[:200]
        res = m.get("result") or {}
        text = "".join(c.get("text", "") for c in res.get("content", []))
        if res.get("isError"):
            return None, "isError: %s" % text[:200]
        return text, None
    return None, "no JSON-RPC answer in %r" % body[:200]


class Side:
    """The MCP URLs of one side's three servers; root is the directory in
    which the filesystem server sees bench8/."""

    def __init__(self, name, urls, root, workdir):
        self.name, self.urls, self.root, self.workdir = name, urls, root, workdir

    def run(self, srv, tool, arg_list, warm, bound):
        """One bench/loadgen run: a new session on srv, then the calls of
        arg_list one after another (the first `warm` untimed). The generator's
        summary and, per call, (text with the root replaced, None) or (None,
        what was wrong)."""
        bodies = os.path.join(self.workdir, "p8-%s-bodies.jsonl" % self.name)
        answers = os.path.join(self.workdir, "p8-%s-answers.bin" % self.name)
        with open(bodies, "w") as f:
            for a in arg_list:
                f.write('{"jsonrpc":"2.0","id":%%ID%%,"method":"tools/call","params":%s}\n'
                        % json.dumps({"name": tool, "arguments": a}))
        n = len(arg_list) - warm
        cmd = [B.LOADGEN, "--url", self.urls[srv], "--mode", "mcp", "--sessions", "1",
               "--bodies", bodies, "--answers", answers, "--warmup-requests", str(warm),
               "--requests", str(n), "--duration", "%.0f" % (bound / 10 + 1), "--timeout", "60",
               "--reject", '"isError":true']
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=bound + 200)
        try:
            res = json.loads(out.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            raise B.BenchError("loadgen failed (%d): %s %s" % (out.returncode, out.stdout,
                                                                out.stderr))
        got = parse_answers(answers)
        texts = []
        for k in range(len(arg_list)):
            if k not in got:
                texts.append((None, "no answer recorded for call %d" % k))
                continue
            timed, body = got[k]
            if timed != (k >= warm):
                texts.append((None, "call %d was %stimed" % (k, "" if timed else "not ")))
                continue
            text, err = rpc_result(body)
            texts.append((text.replace(self.root, "<ROOT>"), None) if err is None
                         else (None, err))
        summary = {k: res[k] for k in ("requests", "p50_ms", "p99_ms", "max_ms", "throughput",
                                       "seconds")}
        summary["errors"] = res["errors"]
        summary["first_error"] = res["first_error"]
        summary["gen_cpu_us"] = 1e6 * res["cpu_s"] / max(1, len(arg_list))
        if res["requests"] != n:
            summary["errors"] += 1
            summary["first_error"] = summary["first_error"] or "%d timed calls, not %d" % (
                res["requests"], n)
        return summary, texts


def comparable(tool, text):
    if tool == "get_file_info":
        return re.sub(r"^(created|accessed): .*$", r"\1: <TIME>", text, flags=re.M)
    return text


def start_mcpbox(ctx, tree):
    d = B.Daemon(ctx.workdir, name="p8-serve").start()
    api = B.Api(d.url)
    try:
        sb = api.acquire(["filesystem", "localmemory", "code-runner"])
        urls = {s["server_name"]: s["mcp_server_url"] for s in sb["servers"]}
        bad = [s["server_name"] for s in sb["servers"] if s.get("status") == "error"]
        if bad or len(urls) != 3:
            raise B.BenchError("acquire: servers not offered: %s" % sb["servers"])
        upload(api, sb["local_sandbox_id"], tar_gz(tree))
    except BaseException:
        api.close()
        d.stop()
        raise
    return d, api, urls


def tar_gz(tree):
    """bench8/ of tree as the .tar.gz the sandbox is initialized with."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w:gz") as t:
        t.add(os.path.join(tree, "bench8"), arcname="bench8")
    return bio.getvalue()


def start_alternative(ctx, name, server_argv, env=None):
    port = B.free_port()
    sg = os.path.join(B.NODE_DIR, "node_modules", "supergateway", "dist", "index.js")
    argv = [B.NODE, sg, "--stdio", " ".join(server_argv),
            "--outputTransport", "streamableHttp", "--stateful", "--port", str(port),
            "--logLevel", "none", "--healthEndpoint", "/healthz"]
    p = B.Proc(argv, os.path.join(ctx.workdir, "p8-%s.log" % name), env=env)
    try:
        B.wait_url("http://127.0.0.1:%d/healthz" % port, timeout=60)
    except B.BenchError:
        p.stop()
        raise
    return p, "http://127.0.0.1:%d/mcp" % port


def start_alternatives(ctx, tree, procs):
    """The three npm servers behind supergateway, on the host copy of the tree
    (under /dev/shm when there is one: a sandbox workspace is a tmpfs too)."""
    mods = os.path.join(B.NODE_DIR, "node_modules")
    env = dict(os.environ, PATH=HOST_PATH + ":" + os.environ.get("PATH", ""))
    mem_dir = ctx.tmp("p8-memory")
    tmp_dir = ctx.tmp("p8-tmp")  # code-runner writes tmp.<ext> into its TMPDIR
    urls = {}
    p, urls["filesystem"] = start_alternative(ctx, "filesystem", [
        B.NODE, os.path.join(mods, "@modelcontextprotocol", "server-filesystem", "dist",
                             "index.js"), tree], env)
    procs.append(p)
    p, urls["localmemory"] = start_alternative(ctx, "memory", [
        B.NODE, os.path.join(mods, "@modelcontextprotocol", "server-memory", "dist",
                             "index.js")], dict(env, MEMORY_FILE_PATH=os.path.join(
                                 mem_dir, "memory.json")))
    procs.append(p)
    p, urls["code-runner"] = start_alternative(ctx, "code-runner", [
        B.NODE, os.path.join(mods, "mcp-server-code-runner", "dist", "cli.js")],
        dict(env, TMPDIR=tmp_dir))
    procs.append(p)
    return urls


def tree_dir(ctx):
    """The reference's copy of the tree: on tmpfs like the sandbox's /data."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        d = os.path.join("/dev/shm", "mcpbox-p8-%d" % os.getpid())
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d, True
    return ctx.tmp("p8-tree"), False


# ------------------------------------------------------------------ measure

def counts(ctx):
    """(warm-up calls, timed calls) per run, for fast tools and for code runs."""
    if ctx.smoke:
        return (2, 10), (1, 3)
    if ctx.quick:
        return (10, 100), (3, 15)
    return (30, 300), (5, 40)


def measure(ctx, sides, spec):
    rid, srv, tool, args, check, label, kind = spec
    warm, n = counts(ctx)[0 if kind == "fast" else 1]
    bound = 60 if kind == "fast" else 300  # seconds a run may take at most
    errors, first = 0, ""
    runs = {s.name: [] for s in sides}

    def compare(idx, outs, bad):
        """Checks one call's answers; bad[side] counts that side's wrong ones.
        Returns 1 when both are right but differ from each other."""
        nonlocal first
        texts = {}
        for side, (text, err) in outs.items():
            if err is None:
                err = check(idx, text)
                if err:
                    err = "wrong answer: %s; got %r" % (err, text[:160])
            if err:
                bad[side] += 1
                first = first or "%s call %d: %s" % (side, idx, err)
            else:
                texts[side] = comparable(tool, text)
        if len(texts) == 2 and texts["mcpbox"] != texts["supergateway"]:
            first = first or "call %d: mcpbox %r != reference %r" % (
                idx, texts["mcpbox"][:160], texts["supergateway"][:160])
            return 1
        return 0

    for r in range(ctx.runs):
        base = r * (warm + n)
        idxs = list(range(base, base + warm + n))
        outs, bad = {}, {}
        for side in sides:
            summary, outs[side.name] = side.run(srv, tool, [args(i, side.root) for i in idxs],
                                                warm, bound)
            runs[side.name].append(summary)
            bad[side.name] = 0
        for k, idx in enumerate(idxs):
            errors += compare(idx, {name: a[k] for name, a in outs.items()}, bad)
        for side in sides:
            # the generator sees the same wrong calls (HTTP status, isError) and
            # failed handshakes we cannot see: the larger count, not the sum
            gen = runs[side.name][-1]
            errors += max(bad[side.name], gen["errors"])
            if gen["errors"]:
                first = first or "%s: %s" % (side.name, gen["first_error"])
    m, a = B.median_runs(runs["mcpbox"]), B.median_runs(runs["supergateway"])
    alt_name = {"filesystem": ALT_FS, "localmemory": ALT_MEM, "code-runner": ALT_CR}[srv]
    what = "%s %s" % (srv, tool if srv != "code-runner" else "run-code %s" % rid.split(".")[-1])
    measure_ = "%s, %s" % (what, label) if label else what
    measure_ += ", %d sequential calls on one session" % n
    row = B.Row(rid, measure_, B.fmt_lat(m), B.fmt_lat(a), alt_name=alt_name,
                ratio=m["throughput"] / a["throughput"] if a.get("throughput") else None,
                errors=int(errors), cmd="bench/run --only P8")
    row.note = "ratio = calls/s; generator CPU %.0f µs per call" % m["gen_cpu_us"]
    if srv == "code-runner":
        row.note += "; mcpbox runs the snippet inside the sandbox, the npm server on the host"
    if errors:
        row.note += "; first error: %s" % first[:300]
    row.data = {"mcpbox": runs["mcpbox"], "supergateway": runs["supergateway"],
                "median": {"mcpbox": m, "supergateway": a}, "warmup": warm, "calls": n}
    return row


def seed_memory(sides):
    """The same 200-entity graph on both sides (checked)."""
    for tool, args in seed_calls():
        texts = []
        for side in sides:
            s = B.McpSession(side.urls["localmemory"]).open()
            try:
                texts.append(s.call(tool, args))
            finally:
                s.close()
                s.http.close()
        if texts[0] != texts[1] or len(json.loads(texts[0])) != N_ENTITIES:
            raise B.BenchError("seeding %s: answers differ or are incomplete" % tool)


def run(ctx):
    work_tree = ctx.tmp("p8-upload")
    facts = make_tree(work_tree)
    tree, shm = tree_dir(ctx)
    shutil.copytree(os.path.join(work_tree, "bench8"), os.path.join(tree, "bench8"),
                    symlinks=True)
    d = api = None
    procs, sides, rows = [], [], []
    try:
        d, api, urls = start_mcpbox(ctx, work_tree)
        sides.append(Side("mcpbox", urls, "/data", ctx.workdir))
        alt_urls = start_alternatives(ctx, tree, procs)
        sides.append(Side("supergateway", alt_urls, tree, ctx.workdir))
        seed_memory(sides)
        for spec in tools(facts):
            row = measure(ctx, sides, spec)
            if not shm and spec[0] == "P8.fs.read_text_file":
                row.note += "; the reference's tree is on disk (no /dev/shm here)"
            ctx.log("  %s: %s | %s | errors %d" % (row.id, row.mcpbox, row.alt, row.errors))
            rows.append(row)
    finally:
        for p in procs:
            p.stop()
        if api:
            api.close()
        if d:
            d.stop()
        if shm:
            shutil.rmtree(tree, ignore_errors=True)
    return rows
