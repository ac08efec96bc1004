"""mcp_stdio.py - a small synchronous MCP client over stdio, for tests.

Starts a server process and speaks newline-delimited JSON-RPC 2.0 with it:

    with StdioClient([os.environ["MCPBOX_BIN"], "mcp", "filesystem", root]) as c:
        c.initialize()
        tools = c.list_tools()                    # list of tool dicts
        res = c.call("read_text_file", {"path": "a.txt"})   # the result dict
        text = StdioClient.text(res)              # joined text blocks

`call()` returns the `result` object (whether or not it has isError) and raises
RpcError for a JSON-RPC error. Notifications the server sends (progress, log
messages) are collected in `.notifications`. stderr is captured to a temp file and
shown in exceptions, so that ASan reports are visible when a test fails.
"""

import json
import os
import select
import subprocess
import tempfile
import time


class RpcError(Exception):
    def __init__(self, error):
        self.error = error
        self.code = error.get("code")
        self.message = error.get("message")
        super().__init__(f"JSON-RPC error {self.code}: {self.message}")


class StdioClient:
    def __init__(self, argv, env=None, cwd=None, timeout=30.0):
        self.timeout = timeout
        self._id = 0
        self._buf = b""
        self.notifications = []
        self._stderr = tempfile.TemporaryFile()
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            env=full_env, cwd=cwd)

    # ------------------------------------------------------------ plumbing

    def stderr(self):
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def send_raw(self, line):
        """Writes one line (str or bytes) followed by a newline."""
        if isinstance(line, str):
            line = line.encode()
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def send(self, msg):
        self.send_raw(json.dumps(msg))

    def read_message(self, timeout=None):
        """Returns the next message the server writes (a dict or list)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from the server; stderr:\n" + self.stderr())
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise EOFError("the server closed stdout; stderr:\n" + self.stderr())
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return json.loads(line)

    def request(self, method, params=None, timeout=None):
        """Sends a request; returns the whole response message (dict)."""
        self._id += 1
        rid = self._id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        while True:
            m = self.read_message(timeout)
            if isinstance(m, dict) and m.get("id") == rid and "method" not in m:
                return m
            self.notifications.append(m)

    def result(self, method, params=None, timeout=None):
        m = self.request(method, params, timeout)
        if "error" in m:
            raise RpcError(m["error"])
        return m["result"]

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    # ----------------------------------------------------------------- MCP

    def initialize(self, protocol="2025-06-18", capabilities=None):
        r = self.result("initialize", {
            "protocolVersion": protocol,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "mcpbox-tests", "version": "1.0"},
        })
        self.notify("notifications/initialized")
        return r

    def list_tools(self):
        return self.result("tools/list", {})["tools"]

    def call(self, name, arguments=None, timeout=None):
        params = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return self.result("tools/call", params, timeout)

    @staticmethod
    def text(result):
        return "".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")

    def close(self):
        """Closes stdin, waits for exit; returns the exit status."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
