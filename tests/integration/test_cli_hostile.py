"""The CLI client against a hostile fake daemon: huge or invalid JSON, wrong
types, terminal escapes, unsafe archives, non-HTTP URLs, SSE streams with junk
and over-size events, JSON-RPC errors, call logs, and time-outs."""
import io
import json
import os
import subprocess
import tarfile
import time

import pytest

from cliutil import (AUTH, FAIL, NOTFOUND, OK, REFUSED, SANITIZER_MARKS, SID, UNREACHABLE, Fake,
                     cli, cli_json, sandbox_info)
from conftest import API_KEY, MCPBOX_BIN


@pytest.fixture
def fake():
    f = Fake()
    yield f
    f.close()


# ------------------------------------------------------- a hostile daemon

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


def test_timeout(fake):
    def slow():
        time.sleep(4)
        return b"{}"
    fake.routes[("GET", "/local-sandbox")] = (200, "application/json", slow)
    t0 = time.time()
    rc, out, err = cli(fake.url, "ls", "--timeout", "1")
    assert rc == UNREACHABLE and "no answer" in err and "--timeout" in err, err
    assert time.time() - t0 < 4
