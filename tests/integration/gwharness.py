"""Helpers for the gateway suites: a running `mcpbox bridge`, a raw MCP
Streamable HTTP session over httpx, and the SDK client script runner.

The bridge is the gateway with a plain fork/exec spawn: what these suites
check about transport, sessions and misbehaving servers holds for the
daemon's MCP URLs too (same code, different spawn callback)."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import httpx

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BIN = os.environ.get("MCPBOX_BIN") or os.path.join(REPO, "build", "asan", "mcpbox")
NODE_DIR = os.path.join(REPO, "tests", "node")
NODE22 = os.path.join(NODE_DIR, "node22")
EVERYTHING = os.path.join(NODE_DIR, "node_modules", "@modelcontextprotocol",
                          "server-everything", "dist", "index.js")
MOCK = os.path.join(HERE, "servers", "mock_server.py")
SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "ThreadSanitizer", "runtime error:")
ACCEPT_BOTH = "application/json, text/event-stream"


def mock_cmd(*flags):
    return [sys.executable, MOCK, *flags]


def everything_cmd():
    return [NODE22, EVERYTHING, "stdio"]


class Bridge:
    """One `mcpbox bridge` process on a free port."""

    def __init__(self, cmd, *opts, env=None, timeout=60):
        self.errlog = tempfile.NamedTemporaryFile(prefix="bridge-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [BIN, "bridge", "--listen", "127.0.0.1:0", *opts, "--", *cmd],
            stdout=subprocess.PIPE, stderr=self.errlog, env=dict(os.environ, **(env or {})))
        deadline = time.time() + timeout
        line = b""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if line or self.proc.poll() is not None:
                break
        m = re.search(rb"at (http://\S+/mcp)", line)
        if not m:
            self.proc.kill()
            raise RuntimeError("bridge did not start: %r\n%s" % (line, self.log()))
        self.url = m.group(1).decode()
        self.base = self.url[: -len("/mcp")]

    def log(self):
        with open(self.errlog.name, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def children(self):
        """pids of the bridge's child processes (the stdio servers)."""
        kids = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % d) as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == self.proc.pid and fields[0] != "Z":
                kids.append(int(d))
        return kids

    def health(self):
        r = httpx.get(self.base + "/health", timeout=10)
        return r.status_code, r.json()

    def stop(self, check=True):
        """SIGTERM, then the exit status; no sanitizer report allowed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("bridge did not stop on SIGTERM\n" + self.log())
        log = self.log()
        os.unlink(self.errlog.name)
        if check:
            for mark in SANITIZER_MARKS:
                assert mark not in log, log
            assert self.proc.returncode == 0, log
        return log


def parse_sse(text):
    """[{'id':..., 'event':..., 'data':...}] of an SSE body; comments dropped."""
    events, cur = [], {}
    for line in text.split("\n"):
        if line == "":
            if cur:
                events.append(cur)
            cur = {}
        elif line.startswith(":"):
            continue
        else:
            k, _, v = line.partition(":")
            v = v[1:] if v.startswith(" ") else v
            cur[k] = cur[k] + "\n" + v if k == "data" and k in cur else v
    if cur:
        events.append(cur)
    return events


def messages(resp):
    """JSON-RPC messages in a POST response (JSON body or SSE stream)."""
    ctype = resp.headers.get("content-type", "")
    if ctype.startswith("text/event-stream"):
        return [json.loads(e["data"]) for e in parse_sse(resp.text) if e.get("data")]
    if not resp.content:
        return []
    body = resp.json()
    return body if isinstance(body, list) else [body]


class Session:
    """A raw MCP session: exact control over headers and bodies."""

    def __init__(self, url, version="2025-11-25", capabilities=None, accept=ACCEPT_BOTH,
                 timeout=60, client_name="raw-test"):
        self.url = url
        self.http = httpx.Client(timeout=timeout)
        self.accept = accept
        r = self.http.post(url, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": capabilities or {},
                       "clientInfo": {"name": client_name, "version": "1"}}},
            headers={"Accept": ACCEPT_BOTH})
        assert r.status_code == 200, r.text
        self.init = messages(r)[0]
        self.sid = r.headers["mcp-session-id"]
        self.version = self.init["result"]["protocolVersion"]
        self.next_id = 1
        r = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert r.status_code == 202, r.text

    def headers(self, extra=None):
        h = {"Accept": self.accept, "Content-Type": "application/json",
             "Mcp-Session-Id": self.sid, "MCP-Protocol-Version": self.version}
        h.update(extra or {})
        return h

    def post(self, body, headers=None, raw=None):
        data = raw if raw is not None else json.dumps(body)
        return self.http.post(self.url, content=data, headers=self.headers(headers))

    def request(self, method, params=None, rid=None, headers=None):
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        r = self.post({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}},
                      headers=headers)
        return r

    def result(self, method, params=None, **kw):
        """The response message (not the notifications before it)."""
        r = self.request(method, params, **kw)
        assert r.status_code == 200, (r.status_code, r.text)
        resp = [m for m in messages(r) if "result" in m or "error" in m]
        assert len(resp) == 1, r.text
        return resp[0]

    def call(self, tool, args=None, **kw):
        return self.result("tools/call", {"name": tool, "arguments": args or {}}, **kw)

    def close(self):
        r = self.http.delete(self.url, headers=self.headers())
        self.http.close()
        return r


def text_of(msg):
    return "".join(c.get("text", "") for c in msg["result"]["content"])


class ScriptedAgent:
    """A scripted benchmark agent: one MCP session per server of an acquired
    sandbox (as an agent keeps them), opened on first use; every call must
    succeed. Servers that report failures as ordinary text results (FastMCP
    tools returning "Error ...") are caught too when refuse_error_text is set."""

    def __init__(self, sandbox, timeout=120, refuse_error_text=False):
        self.urls = {s["server_name"]: s["mcp_server_url"] for s in sandbox["servers"]}
        self.sessions = {}
        self.timeout = timeout
        self.refuse_error_text = refuse_error_text

    def __call__(self, server, tool, args):
        if server not in self.sessions:
            self.sessions[server] = Session(self.urls[server], timeout=self.timeout)
        msg = self.sessions[server].call(tool, args)
        assert "result" in msg, msg
        assert not msg["result"].get("isError"), msg
        text = text_of(msg)
        if self.refuse_error_text:
            assert not text.startswith("Error"), (tool, text)
        return text

    def close(self):
        for s in self.sessions.values():
            s.close()


def node_client(mode, url, *args, timeout=300):
    """Runs tests/node/gateway_client.mjs under Node 22; its JSON output."""
    r = subprocess.run([NODE22, os.path.join(NODE_DIR, "gateway_client.mjs"), mode, url,
                        *[str(a) for a in args]],
                       capture_output=True, timeout=timeout, cwd=NODE_DIR)
    out = r.stdout.decode().strip().splitlines()
    assert r.returncode == 0 and out, (r.returncode, r.stdout.decode(), r.stderr.decode())
    return json.loads(out[-1])
