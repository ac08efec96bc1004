"""Shared fixtures: a running `mcpbox serve` (the ASan build) on a free port
with its own data directory and API key, and an httpx client for it."""
import os
import re
import signal
import subprocess
import tempfile
import time

import httpx
import pytest

MCPBOX_BIN = os.environ.get("MCPBOX_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "asan", "mcpbox")
API_KEY = "test-key-" + "0123456789abcdef"


class Daemon:
    """One `mcpbox serve` process. start()/kill()/stop() may be called again
    on the same data directory to test restarts."""

    def __init__(self, data_dir, extra_args=(), env=None):
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.env = dict(os.environ, MCPBOX_API_KEY=API_KEY, **(env or {}))
        self.proc = None
        self.url = None
        self.listen = "127.0.0.1:0"  # the first start picks a port; restarts keep it
        self.log_path = data_dir.rstrip("/") + ".log"

    def start(self, timeout=30):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [MCPBOX_BIN, "serve", "--listen", self.listen, "--data-dir", self.data_dir,
             *self.extra_args],
            stdout=subprocess.PIPE, stderr=log, env=self.env)
        log.close()
        deadline = time.time() + timeout
        line = b""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if line or self.proc.poll() is not None:
                break
        m = re.search(rb"serving on (http://\S+)", line)
        if not m:
            raise RuntimeError("daemon did not start: %r\n%s" % (line, self.log()))
        self.url = m.group(1).decode()
        self.listen = self.url.split("//", 1)[1]
        return self

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def client(self, key=API_KEY):
        headers = {"Authorization": "Bearer " + key} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def kill(self):
        """kill -9: no chance to clean up."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        """SIGTERM, then check the exit was clean (ASan reports leaks here)."""
        if not self.proc or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("daemon did not stop on SIGTERM")
        assert rc == 0, "daemon exited %d:\n%s" % (rc, self.log()[-4000:])
        assert "ThreadSanitizer" not in self.log(), self.log()[-8000:]


# The suites that drive the daemon's threads hardest (gateway sessions and streams,
# concurrent acquire/release, restarts) run a second time under ThreadSanitizer.
TSAN_SUITES = {"test_gateway_hostile.py", "test_gateway_sdk.py", "test_gateway_transport.py",
               "test_daemon_sandboxes.py", "test_api_lifecycle.py", "test_hostile_http.py",
               "test_canvas.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if os.path.basename(str(item.fspath)) in TSAN_SUITES:
            item.add_marker(pytest.mark.tsan)


def sweep_sandboxes(root):
    """Sandboxes outlive a stopped daemon by design; tear down those of any
    data dir under root (`mcpbox sandbox sweep`) so that it can be removed."""
    for dirpath, dirs, _ in os.walk(root):
        if "run" in dirs and os.path.exists(os.path.join(dirpath, "mcpbox.db")):
            subprocess.run([MCPBOX_BIN, "sandbox", "sweep", dirpath], check=True)
        if dirpath.count(os.sep) - root.count(os.sep) >= 2:
            dirs[:] = []


@pytest.fixture
def tmp_root():
    with tempfile.TemporaryDirectory(prefix="mcpbox-test-") as d:
        yield d
        sweep_sandboxes(d)


@pytest.fixture
def daemon(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var")).start()
    yield d
    d.stop()


@pytest.fixture
def api(daemon):
    with daemon.client() as c:
        yield c
