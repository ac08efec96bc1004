"""The CLI client (`mcpbox acquire|ls|get|rm|reset|push|pull|tools|call|logs`)
end to end against a real daemon, its errors (bad key, unknown id, daemon
down: non-zero exits and messages that name the fix), the first-run key of
`serve --first-run-key`, and hostile answers from a fake daemon (huge or
invalid JSON, an unsafe archive, terminal escapes, SSE streams)."""
import gzip
import http.server
import io
import json
import os
import pty
import re
import select
import shutil
import socket
import sqlite3
import subprocess
import tarfile
import threading
import time

import pytest

import conftest
import treeutil
from conftest import API_KEY, MCPBOX_BIN, Daemon

SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "runtime error:")

# Exit statuses (docs/CLI.md).
OK, FAIL, USAGE, UNREACHABLE, AUTH, NOTFOUND, REFUSED, TOOL_ERROR = range(8)


def cli(url, *args, key=API_KEY, stdin=None, timeout=120, env=None):
    e = dict(os.environ)
    e.pop("MCPBOX_API_KEY", None)
    e["MCPBOX_URL"] = url
    if key is not None:
        e["MCPBOX_API_KEY"] = key
    e.update(env or {})
    r = subprocess.run([MCPBOX_BIN, *args], capture_output=True, timeout=timeout, env=e,
                       input=stdin)
    err = r.stderr.decode("utf-8", "replace")
    for bad in SANITIZER_MARKS:
        assert bad not in err, err
    return r.returncode, r.stdout.decode("utf-8", "replace"), err


def cli_json(url, *args, **kw):
    rc, out, err = cli(url, args[0], "--json", *args[1:], **kw)
    assert rc == OK, err
    return json.loads(out)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------- the real flow

def test_flow_acquire_push_call_pull_rm(daemon, tmp_root):
    url = daemon.url
    acq = cli_json(url, "acquire", "filesystem", "git", "--ttl", "600")
    sid = acq["local_sandbox_id"]
    assert [s["server_name"] for s in acq["servers"]] == ["filesystem", "git"]

    listed = cli_json(url, "ls")
    assert sid in [s["local_sandbox_id"] for s in listed["local_sandboxes"]]
    assert cli_json(url, "get", sid[:8])["local_sandbox_id"] == sid  # a unique prefix will do

    rc, out, err = cli(url, "ls")
    assert rc == OK and sid in out and "filesystem" in out and out.startswith("ID "), out
    rc, out, err = cli(url, "get", sid)
    assert rc == OK and "filesystem" in out and "/filesystem/mcp/?local_sandbox_id=" + sid in out

    src = os.path.join(tmp_root, "src")
    os.makedirs(src)
    treeutil.make_tree(src)
    pushed = cli_json(url, "push", sid, src)
    assert pushed["initialize"]["message"] == "Extracted archive to workspace"
    assert pushed["entries"] > 10 and pushed["uploaded_bytes"] > 0

    tools = cli_json(url, "tools", sid, "filesystem")
    assert "read_text_file" in [t["name"] for t in tools]
    rc, out, err = cli(url, "tools", sid, "filesystem")
    assert rc == OK and re.search(r"^read_text_file\s+Read", out, re.M), out

    rc, out, err = cli(url, "call", sid, "filesystem", "read_text_file",
                       '{"path": "/data/hello.txt"}')
    assert (rc, out) == (OK, "hello world\n"), err
    res = cli_json(url, "call", sid, "filesystem", "write_file",
                   '{"path": "/data/docs/new.txt", "content": "made by a tool\\n"}')
    assert not res.get("isError"), res
    rc, out, err = cli(url, "call", sid, "filesystem", "read_text_file", "-",
                       stdin=b'{"path": "/data/docs/new.txt"}')
    assert (rc, out) == (OK, "made by a tool\n"), err
    # A tool error is exit status 7, its text still printed.
    rc, out, err = cli(url, "call", sid, "filesystem", "read_text_file",
                       '{"path": "/data/missing.txt"}')
    assert rc == TOOL_ERROR and "missing.txt" in out, (rc, out, err)

    dest = os.path.join(tmp_root, "pulled")
    pulled = cli_json(url, "pull", sid, dest)
    assert pulled["entries"] > 10 and pulled["path"] == dest
    with open(os.path.join(src, "docs", "new.txt"), "w") as f:
        f.write("made by a tool\n")
    want, got = treeutil.snapshot(src, False), treeutil.snapshot(dest, False)
    want.pop("docs/new.txt")
    assert got.pop("docs/new.txt")[3] == b"made by a tool\n"
    # mtimes of the tool-written file's parent changed; compare the rest in full
    assert {k: v for k, v in got.items() if k != "docs"} == \
        {k: v for k, v in want.items() if k != "docs"}

    tgz = os.path.join(tmp_root, "dump.tar.gz")
    rc, out, err = cli(url, "pull", sid, tgz)
    assert rc == OK and "pulled" in out, err
    with tarfile.open(tgz) as t:
        names = t.getnames()
    assert names[0] == "." and "./hello.txt" in names
    r = subprocess.run([MCPBOX_BIN, "pull", sid, "-"], capture_output=True, timeout=120,
                       env=dict(os.environ, MCPBOX_URL=url, MCPBOX_API_KEY=API_KEY))
    assert r.returncode == OK and r.stdout[:2] == b"\x1f\x8b" and r.stdout == open(tgz, "rb").read()

    # reset: back to the pushed state (the tool's file is gone)
    rc, out, err = cli(url, "reset", sid)
    assert rc == OK and out.startswith("reset " + sid), err
    rc, out, err = cli(url, "call", sid, "filesystem", "read_text_file",
                       '{"path": "/data/docs/new.txt"}')
    assert rc == TOOL_ERROR, out

    released = cli_json(url, "rm", sid)
    assert released[0]["local_sandbox_id"] == sid and "release" in released[0]["message"]
    rc, out, err = cli(url, "get", sid)
    assert rc == NOTFOUND and "mcpbox ls" in err, err
    assert cli_json(url, "ls")["total_count"] == 0


def test_push_tarball_and_acquire_quiet(daemon, tmp_root):
    url = daemon.url
    rc, out, err = cli(url, "acquire", "-q", "filesystem")
    sid = out.strip()
    assert rc == OK and re.fullmatch(r"[0-9a-f-]{36}", sid), (out, err)
    src = os.path.join(tmp_root, "src")
    os.makedirs(src)
    treeutil.make_tree(src)
    tgz = os.path.join(tmp_root, "in.tar.gz")
    with open(tgz, "wb") as f:
        f.write(treeutil.tar_dot(src))
    rc, out, err = cli(url, "push", sid, tgz)
    assert rc == OK and "Extracted archive to workspace" in out, err
    dest = os.path.join(tmp_root, "out")
    rc, out, err = cli(url, "pull", sid, dest)
    assert rc == OK, err
    assert treeutil.snapshot(dest) == treeutil.snapshot(src)
    # pull refuses to mix into a tree that conflicts, and changes nothing there
    os.remove(os.path.join(dest, "hello.txt"))
    os.makedirs(os.path.join(dest, "hello.txt"))
    before = treeutil.snapshot(dest)
    rc, out, err = cli(url, "pull", sid, dest)
    assert rc == FAIL and "nothing was changed" in err, err
    assert treeutil.snapshot(dest) == before
    rc, out, err = cli(url, "rm", sid, "00000000-0000-4000-8000-000000000000")
    assert rc == NOTFOUND and out.startswith("released " + sid), (out, err)


def on_pty(url, *args):
    """Runs the CLI with stdin, stdout and stderr on a pseudo-terminal; its output."""
    master, slave = pty.openpty()
    env = dict(os.environ, MCPBOX_URL=url, MCPBOX_API_KEY=API_KEY)
    p = subprocess.Popen([MCPBOX_BIN, *args], stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    deadline = time.time() + 60
    while time.time() < deadline:
        r, _, _ = select.select([master], [], [], 1)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif p.poll() is not None:
            break
    p.wait(timeout=30)
    os.close(master)
    text = seen.decode("utf-8", "replace")
    assert p.returncode == OK, text
    for bad in SANITIZER_MARKS:
        assert bad not in text, text
    return text


def test_progress_bar_only_on_a_terminal(daemon, tmp_root):
    url = daemon.url
    sid = cli_json(url, "acquire", "filesystem")["local_sandbox_id"]
    src = os.path.join(tmp_root, "big")
    os.makedirs(src)
    with open(os.path.join(src, "blob.bin"), "wb") as f:
        f.write(os.urandom(3 << 20))
    # not a terminal: quiet
    rc, out, err = cli(url, "push", sid, src)
    assert rc == OK and "B/s" not in out + err, (out, err)
    # a terminal: a bar with bytes/s
    text = on_pty(url, "push", sid, src)
    assert re.search(r"push\s+\[#+\]\s+100%\s+3\.0 MiB / 3\.0 MiB\s+[\d.]+ (B|KiB|MiB|GiB)/s",
                     text), text
    assert "pushed" in text
    text = on_pty(url, "pull", sid, os.path.join(tmp_root, "out"))
    assert re.search(r"pull\s+\[#+\]\s+100%\s+3\.0 MiB / 3\.0 MiB\s+[\d.]+ (B|KiB|MiB|GiB)/s",
                     text), text
    rc, out, err = cli(url, "pull", sid, os.path.join(tmp_root, "out2"))
    assert rc == OK and "B/s" not in out + err, (out, err)
    cli(url, "rm", sid)


# ------------------------------------------------------------------ errors

def test_errors_name_the_fix(daemon):
    url = daemon.url
    rc, out, err = cli(url, "ls", key="mbx_not_a_key")
    assert rc == AUTH and "MCPBOX_API_KEY" in err and "refused the API key" in err, err
    rc, out, err = cli(url, "ls", key=None)
    assert rc == AUTH and "export MCPBOX_API_KEY=" in err, err
    rc, out, err = cli(url, "get", "00000000-0000-4000-8000-000000000000")
    assert rc == NOTFOUND and "`mcpbox ls`" in err, err
    rc, out, err = cli(url, "get", "not-an-id!")
    assert rc == USAGE and "not a sandbox id" in err, err
    rc, out, err = cli(url, "call", "00000000-0000-4000-8000-000000000000", "filesystem",
                       "read_text_file", "{not json")
    assert rc == USAGE and "JSON object" in err, err
    rc, out, err = cli(url, "acquire", "no_such_server")
    assert rc == REFUSED and "server_names.0" in err, err
    rc, out, err = cli(url, "acquire")
    assert rc == USAGE and "which servers" in err, err
    rc, out, err = cli(url, "frobnicate")
    assert rc == USAGE
    sid = cli_json(url, "acquire", "--benchmark", "MCP_Atlas", "filesystem",
                   "excel")["local_sandbox_id"]
    # a server the profile does not offer: its state, the reason, and no session
    rc, out, err = cli(url, "get", sid)
    assert rc == OK and re.search(r"^excel\s+error\s+-$", out, re.M), out
    assert "excel: 'excel' is not available in the 'MCP_Atlas' profile" in out, out
    rc, out, err = cli(url, "tools", sid, "excel")
    assert rc == FAIL and "is not running ('excel' is not available" in err, err
    rc, out, err = cli(url, "tools", sid, "git")
    assert rc == NOTFOUND and "has no server 'git'" in err and "mcpbox acquire git" in err, err
    # The call log comes with the observe branch: until then the message says so.
    rc, out, err = cli(url, "logs", sid)
    assert rc == NOTFOUND and "/calls" in err, err
    cli(url, "rm", sid)
    rc, out, err = cli(url, "--help")
    assert rc == OK


def test_daemon_down(tmp_root):
    url = "http://127.0.0.1:%d" % free_port()
    for args in (["ls"], ["acquire", "filesystem"], ["get", "00000000-0000-4000-8000-000000000000"],
                 ["push", "00000000-0000-4000-8000-000000000000", tmp_root]):
        rc, out, err = cli(url, *args)
        assert rc == UNREACHABLE, (args, rc, err)
        assert "Is `mcpbox serve` running at " + url in err, err
    rc, out, err = cli("ftp://example", "ls")
    assert rc == USAGE and "http://" in err


# --------------------------------------------------------------- first run

def test_first_run_key(tmp_root):
    data = os.path.join(tmp_root, "var")
    d = Daemon(data, extra_args=["--first-run-key"])
    d.env.pop("MCPBOX_API_KEY")
    d.start()
    try:
        lines = b""
        deadline = time.time() + 10
        while b"More keys:" not in lines and time.time() < deadline:
            lines += d.proc.stdout.readline()
        text = lines.decode()
        m = re.search(r"^    export MCPBOX_API_KEY=(mbx_[0-9a-f]{40})$", text, re.M)
        assert m, text
        key = m.group(1)
        assert "    export MCPBOX_URL=%s\n" % d.url in text
        assert "Dashboard: %s/" % d.url in text
        rc, out, err = cli(d.url, "ls", key=key)
        assert rc == OK, err
    finally:
        d.stop()
    # only its digest is stored
    with open(os.path.join(data, "mcpbox.db"), "rb") as f:
        assert key.encode() not in f.read()
    db = sqlite3.connect(os.path.join(data, "mcpbox.db"))
    assert key not in repr(db.execute("select * from keys").fetchall())
    db.close()
    # the next start has a key: nothing is made or printed
    d2 = Daemon(data, extra_args=["--first-run-key"])
    d2.env.pop("MCPBOX_API_KEY")
    d2.start()
    try:
        rc, out, err = cli(d2.url, "ls", key=key)
        assert rc == OK, err
    finally:
        d2.proc.stdout.close()
        d2.stop()
    r = subprocess.run([MCPBOX_BIN, "keys", "list", "--data-dir", data], capture_output=True)
    assert r.stdout.decode().count("first-run") == 1


# ------------------------------------------------------- a hostile daemon

SID = "11111111-2222-4333-8444-555555555555"


class Fake:
    """A fake daemon: routes[(method, path)] = (status, content_type, body)."""

    def __init__(self):
        self.routes = {}
        fake = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                path = self.path.split("?")[0]
                r = fake.routes.get((self.command, path))
                if r is None:
                    r = (404, "application/json", b'{"detail":"Not Found"}')
                status, ctype, body = r
                if callable(body):
                    body = body()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                if ctype == "text/event-stream" or "mcp" in path:
                    self.send_header("Mcp-Session-Id", "fake-session")
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_DELETE = answer

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def json(self, method, path, obj, status=200):
        self.routes[(method, path)] = (status, "application/json", json.dumps(obj).encode())

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def fake():
    f = Fake()
    yield f
    f.close()


def sandbox_info(fake_url):
    return {"local_sandbox_id": SID, "status": "occupied", "benchmark": None,
            "created_at": "2026-01-01T00:00:00+00:00",
            "servers": [{"server_name": "filesystem", "status": "occupied",
                         "mcp_server_url": fake_url + "/filesystem/mcp/?local_sandbox_id=" + SID,
                         "metadata": {"ready": True}}]}


def test_hostile_json_answers(fake):
    huge = b'{"local_sandboxes": ["' + b"x" * (40 << 20) + b'"]}'
    fake.routes[("GET", "/local-sandbox")] = (200, "application/json", huge)
    rc, out, err = cli(fake.url, "ls")
    assert rc == FAIL and "over 32 MiB" in err, err
    for body in (b"{not json", b"[1,2]", b"", b"\xff\xfe garbage"):
        fake.routes[("GET", "/local-sandbox")] = (200, "application/json", body)
        rc, out, err = cli(fake.url, "ls")
        assert rc == FAIL and "not a JSON object" in err, (body, err)
    # wrong types everywhere: printed as blanks, never a crash
    fake.json("GET", "/local-sandbox", {"local_sandboxes": [
        {"local_sandbox_id": 5, "status": None, "servers": "nope"}, 7, None,
        {"local_sandbox_id": "x", "servers": [3, {"server_name": ["a"]}]}], "total_count": "x"})
    rc, out, err = cli(fake.url, "ls")
    assert rc == OK, err
    fake.json("GET", "/local-sandbox/" + SID, {"servers": {"a": 1}, "benchmark": 3})
    rc, out, err = cli(fake.url, "get", SID)
    assert rc == OK, err
    # terminal escapes and invalid UTF-8 in what the daemon says never reach the terminal
    fake.routes[("GET", "/local-sandbox/" + SID)] = (
        404, "application/json", b'{"detail": "gone \\u001b]0;pwned\\u0007 \\u009b2J"}')
    rc, out, err = cli(fake.url, "get", SID)
    assert rc == NOTFOUND and "\x1b" not in err and "\x07" not in err and "\x9b" not in err
    assert "gone ?]0;pwned? ?2J" in err, err
    fake.routes[("GET", "/local-sandbox/" + SID)] = (502, "text/plain", b"\x1b[2J raw \xff\x9b")
    rc, out, err = cli(fake.url, "get", SID)
    assert rc == FAIL and "\x1b" not in err and "?[2J raw \ufffd\ufffd" in err, err
    # a FastAPI 422 list
    fake.json("POST", "/local-sandbox", {"detail": [
        {"loc": ["body", "ttl_seconds"], "msg": "too small", "type": "x"}]}, status=422)
    rc, out, err = cli(fake.url, "acquire", "filesystem")
    assert rc == REFUSED and "ttl_seconds: too small" in err, err
    fake.json("GET", "/local-sandbox", {"detail": "Invalid API key"}, status=403)
    rc, out, err = cli(fake.url, "ls")
    assert rc == AUTH and "MCPBOX_API_KEY" in err
    fake.json("GET", "/local-sandbox", {"detail": "boom"}, status=500)
    rc, out, err = cli(fake.url, "ls")
    assert rc == FAIL and "boom" in err


def tar_gz(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as t:
        for name, kind, data in members:
            ti = tarfile.TarInfo(name)
            if kind == "file":
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
            elif kind == "link":
                ti.type = tarfile.SYMTYPE
                ti.linkname = data
                t.addfile(ti)
    return buf.getvalue()


@pytest.mark.parametrize("members", [
    [("./ok.txt", "file", b"ok"), ("../escape.txt", "file", b"pwned")],
    [("/abs.txt", "file", b"pwned")],
    [("./l", "link", "../../outside"), ("./l/x.txt", "file", b"pwned")],
    "not a tar",
])
def test_unsafe_archive_is_refused(fake, tmp_path, members):
    fake.json("GET", "/local-sandbox/%s/dump" % SID,
              {"download_url": fake.url + "/blobs/dump.tar.gz", "expires_in_minutes": 30})
    data = b"\x1f\x8b garbage" if members == "not a tar" else tar_gz(members)
    fake.routes[("GET", "/blobs/dump.tar.gz")] = (200, "application/gzip", data)
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = outside / "dest"
    rc, out, err = cli(fake.url, "pull", SID, str(dest))
    assert rc == FAIL and "refused" in err and "nothing was written" in err, err
    assert not dest.exists()
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["outside"]


def test_download_url_not_http(fake, tmp_path):
    fake.json("GET", "/local-sandbox/%s/dump" % SID,
              {"download_url": "file:///etc/passwd", "expires_in_minutes": 30})
    rc, out, err = cli(fake.url, "pull", SID, str(tmp_path / "x.tar.gz"))
    assert rc == FAIL and "not http" in err, err
    assert not (tmp_path / "x.tar.gz").exists() and not (tmp_path / "x.tar.gz.part").exists()


def sse(*events):
    return b"".join(b": keep-alive\n\n" + b"event: message\ndata: " + e + b"\n\n" for e in events)


def test_mcp_sse_and_hostile_streams(fake):
    fake.json("GET", "/local-sandbox/" + SID, sandbox_info(fake.url))
    mcp = "/filesystem/mcp/"
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "f"}}}).encode()
    result = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {
        "content": [{"type": "text", "text": "line one\nline \x1b[31mtwo"}]}}).encode()
    progress = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'
    # initialize answered as SSE, the call as SSE with notifications and junk first
    calls = {"n": 0}

    def answer():
        calls["n"] += 1
        return [sse(init), b"", sse(progress, b"not json {", result)][calls["n"] - 1] \
            if calls["n"] <= 3 else b""
    fake.routes[("POST", mcp)] = (200, "text/event-stream", answer)
    rc, out, err = cli(fake.url, "call", SID, "filesystem", "t", "{}")
    assert (rc, out) == (OK, "line one\nline ?[31mtwo\n"), err
    # a JSON answer with the wrong id, then one that is no JSON-RPC at all
    for body in (b'{"jsonrpc":"2.0","id":99,"result":{}}', b"<html>", b""):
        calls["n"] = 0

        def answer2(body=body):
            calls["n"] += 1
            return init if calls["n"] == 1 else (b"" if calls["n"] == 2 else body)
        fake.routes[("POST", mcp)] = (200, "application/json", answer2)
        rc, out, err = cli(fake.url, "call", SID, "filesystem", "t", "{}")
        assert rc == FAIL and "not the JSON-RPC response to request 2" in err, (body, err)
    # an SSE event over the cap
    calls["n"] = 0

    def answer3():
        calls["n"] += 1
        if calls["n"] == 1:
            return sse(init)
        return b"" if calls["n"] == 2 else b"data: " + b"x" * (65 << 20) + b"\n\n"
    fake.routes[("POST", mcp)] = (200, "text/event-stream", answer3)
    rc, out, err = cli(fake.url, "call", SID, "filesystem", "t", "{}")
    assert rc == FAIL and "over 64 MiB" in err, err
    # a JSON-RPC error
    calls["n"] = 0

    def answer4():
        calls["n"] += 1
        if calls["n"] == 1:
            return init
        return b"" if calls["n"] == 2 else \
            b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: t"}}'
    fake.routes[("POST", mcp)] = (200, "application/json", answer4)
    rc, out, err = cli(fake.url, "call", SID, "filesystem", "t", "{}")
    assert rc == REFUSED and "Unknown tool: t" in err, err


def test_logs_reads_the_call_log(fake):
    fake.json("GET", "/local-sandbox/" + SID, sandbox_info(fake.url))
    # the observe branch's shape (docs/OBSERVABILITY.md there), and older names
    calls = [{"seq": 1, "time": "2026-11-24T23:05:45.123456+00:00", "server": "filesystem",
              "method": "tools/call", "tool": "read_text_file", "arguments_bytes": 40,
              "result_bytes": 120, "latency_ms": 3.5, "outcome": "ok", "error": None,
              "request_id": "5d0c"},
             {"seq": 2, "time": 1795000000.25, "server": "git", "method": "tools/list",
              "duration_ms": 1, "error": "server crashed \x1b[2J"},
             {"seq": 3, "server": "filesystem", "method": "tools/call", "tool": "write_file",
              "latency_ms": 2, "outcome": "tool_error", "error": None},
             {"garbage": True}, 5]
    fake.json("GET", "/local-sandbox/%s/calls" % SID,
              {"calls": calls, "next": 3, "dropped": 4, "enabled": True})
    rc, out, err = cli(fake.url, "logs", SID)
    assert rc == OK and "4 older calls were dropped" in err, err
    lines = out.splitlines()
    assert len(lines) == 4, out
    assert lines[0].startswith("23:05:45.123  filesystem") and "read_text_file" in lines[0] \
        and "3.5 ms" in lines[0] and lines[0].endswith("  ok") and "40>120 B" in lines[0], lines
    assert lines[1].endswith("error: server crashed ?[2J") and "\x1b" not in out
    assert lines[2].endswith("  tool_error") and "write_file" in lines[2]
    rc, out, err = cli(fake.url, "logs", SID, "git")
    assert rc == OK and len(out.splitlines()) == 1 and "tools/list" in out
    got = cli_json(fake.url, "logs", SID)
    assert got["calls"][:3] == calls[:3]
    fake.json("GET", "/local-sandbox/%s/calls" % SID, {"calls": [], "enabled": False})
    rc, out, err = cli(fake.url, "logs", SID)
    assert rc == OK and "--call-log 0" in err and out == "", err
    fake.json("GET", "/local-sandbox/%s/calls" % SID, {"calls": "nope"})
    rc, out, err = cli(fake.url, "logs", SID)
    assert rc == FAIL and "no calls array" in err


def test_logs_follow(fake):
    fake.json("GET", "/local-sandbox/" + SID, sandbox_info(fake.url))
    calls = [{"seq": 1, "server": "filesystem", "method": "tools/call", "tool": "first"}]
    fake.routes[("GET", "/local-sandbox/%s/calls" % SID)] = (
        200, "application/json", lambda: json.dumps({"calls": calls}).encode())
    env = dict(os.environ, MCPBOX_URL=fake.url, MCPBOX_API_KEY=API_KEY)
    p = subprocess.Popen([MCPBOX_BIN, "logs", SID, "-f"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    try:
        assert b"first" in p.stdout.readline()
        calls.append({"seq": 2, "server": "git", "method": "tools/call", "tool": "second"})
        assert b"second" in p.stdout.readline()
        time.sleep(1.5)  # more polls: nothing is printed twice
        p.send_signal(2)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == OK, err
    assert b"first" not in out and b"second" not in out, out
    for bad in SANITIZER_MARKS:
        assert bad.encode() not in err, err


def test_timeout_and_revoked_key(daemon, fake):
    def slow():
        time.sleep(4)
        return b"{}"
    fake.routes[("GET", "/local-sandbox")] = (200, "application/json", slow)
    t0 = time.time()
    rc, out, err = cli(fake.url, "ls", "--timeout", "1")
    assert rc == UNREACHABLE and "no answer" in err and "--timeout" in err, err
    assert time.time() - t0 < 4
    r = subprocess.run([MCPBOX_BIN, "keys", "create", "--data-dir", daemon.data_dir],
                       capture_output=True, check=True)
    key = r.stdout.decode().strip()
    assert cli(daemon.url, "ls", key=key)[0] == OK
    subprocess.run([MCPBOX_BIN, "keys", "revoke", key[:12], "--data-dir", daemon.data_dir],
                   capture_output=True, check=True)
    rc, out, err = cli(daemon.url, "ls", key=key)
    assert rc == AUTH and "MCPBOX_API_KEY" in err, err


# -------------------------------------------------------------- make install

def test_make_install(tmp_root):
    """`make install DESTDIR=... PREFIX=/usr`: the tree, the unit, the man page; the
    installed binary finds its profiles beside bin/ and serves a sandbox."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    dest = os.path.join(tmp_root, "root")
    r = subprocess.run(["make", "--no-print-directory", "-C", top, "install", "DESTDIR=" + dest,
                        "PREFIX=/usr"], capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    usr = os.path.join(dest, "usr")
    binary = os.path.join(usr, "bin", "mcpbox")
    assert os.access(binary, os.X_OK)
    for rel in ("share/mcpbox/profiles/none.json", "share/mcpbox/profiles/Toolathlon.json",
                "share/mcpbox/runtime/playwright/0.0.68/package.json",
                "share/man/man1/mcpbox.1", "share/doc/mcpbox/CLI.md"):
        assert os.path.isfile(os.path.join(usr, rel)), rel
    with open(os.path.join(usr, "lib/systemd/system/mcpbox.service")) as f:
        unit = f.read()
    assert "ExecStart=/usr/bin/mcpbox serve\n" in unit and "@BINDIR@" not in unit
    assert "Delegate=yes" in unit and "WantedBy=multi-user.target" in unit
    if shutil.which("systemd-analyze"):  # every key known to systemd, the command there
        check = os.path.join(tmp_root, "mcpbox.service")
        with open(check, "w") as f:
            f.write(unit.replace("ExecStart=/usr/bin/", "ExecStart=%s/" % os.path.dirname(binary)))
        r = subprocess.run(["systemd-analyze", "verify", check], capture_output=True, timeout=60)
        complaints = [l for l in r.stderr.decode().splitlines() if "man mcpbox(1)" not in l]
        assert not complaints, complaints
    man = subprocess.run(["man", "-l", os.path.join(usr, "share/man/man1/mcpbox.1")],
                         capture_output=True, env=dict(os.environ, MANWIDTH="80"))
    if man.returncode == 0:
        text = man.stdout.decode()
        assert "EXIT STATUS" in text and "MCPBOX_API_KEY" in text
    assert subprocess.run([binary, "--help"], capture_output=True).stdout.count(b"client:") == 10
    d = Daemon(os.path.join(tmp_root, "var"))
    saved = conftest.MCPBOX_BIN
    conftest.MCPBOX_BIN = binary  # Daemon.start runs the installed binary
    try:
        d.start()
        sid = cli_json(d.url, "acquire", "filesystem")["local_sandbox_id"]
        rc, out, err = cli(d.url, "call", sid, "filesystem", "list_allowed_directories")
        assert rc == OK and "/data" in out, err
        assert cli(d.url, "rm", sid)[0] == OK
    finally:
        conftest.MCPBOX_BIN = saved
        d.stop()
    r = subprocess.run(["make", "--no-print-directory", "-C", top, "uninstall",
                        "DESTDIR=" + dest, "PREFIX=/usr"], capture_output=True)
    assert r.returncode == 0 and not os.path.exists(binary)
    assert not os.path.exists(os.path.join(usr, "share/mcpbox"))
