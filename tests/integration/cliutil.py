"""Helpers of the CLI client's tests (test_cli.py, test_cli_hostile.py): running
`mcpbox` client commands, and a fake daemon whose answers a test sets."""
import http.server
import json
import os
import socket
import subprocess
import threading

from conftest import API_KEY, MCPBOX_BIN

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


def sandbox_info(fake_url):
    return {"local_sandbox_id": SID, "status": "occupied", "benchmark": None,
            "created_at": "2026-01-01T00:00:00+00:00",
            "servers": [{"server_name": "filesystem", "status": "occupied",
                         "mcp_server_url": fake_url + "/filesystem/mcp/?local_sandbox_id=" + SID,
                         "metadata": {"ready": True}}]}
