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


# MCPBOX_TEST_PG=postgresql://USER@/DB?host=DIR (a server tests/pg/pgctl
# started): every daemon gets a database of its own there (--db), so the
# suites run against the PostgreSQL store instead of SQLite.
PG_SERVER = os.environ.get("MCPBOX_TEST_PG")


def pg_database():
    """A new empty database on PG_SERVER; its URL."""
    name = "t%d_%d" % (os.getpid(), int(time.time() * 1e6))
    subprocess.run(["psql", "-q", PG_SERVER, "-c", "CREATE DATABASE " + name], check=True)
    base, _, query = PG_SERVER.partition("?")
    return "%s/%s%s" % (base.rsplit("/", 1)[0], name, "?" + query if query else "")


class Daemon:
    """One `mcpbox serve` process. start()/kill()/stop() may be called again
    on the same data directory to test restarts."""

    def __init__(self, data_dir, extra_args=(), env=None, db=None):
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        # The node's mail system (Dovecot on 1143/1587) only where a test asks for it.
        if not any(a.startswith("--mail") or a == "--no-mail" for a in self.extra_args):
            self.extra_args.append("--no-mail")
        # The Google Cloud REST facade (fixed port 10050) only where a test asks for it.
        self.env = dict(os.environ, MCPBOX_API_KEY=API_KEY, MCPBOX_GCLOUD_LISTEN="off")
        self.env.update(env or {})
        # where `mcpbox keys` finds this daemon's keys
        self.store_args = ["--data-dir", data_dir]
        # db: a state database the caller chose (nodes sharing one PostgreSQL,
        # or a second daemon on the first one's); None: SQLite in data_dir
        self.db = db or (pg_database() if PG_SERVER else None)
        if self.db:
            self.store_args = ["--db", self.db]
            self.extra_args += self.store_args
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

    def sql(self, query, params=()):
        """Runs one statement (? placeholders) on the daemon's state database,
        SQLite or PostgreSQL; the rows as tuples."""
        if not self.db:
            import sqlite3
            db = sqlite3.connect(os.path.join(self.data_dir, "mcpbox.db"), timeout=10)
            rows = db.execute(query, params).fetchall()
            db.commit()
            db.close()
            return rows
        def literal(v):
            if v is None:
                return "NULL"
            if isinstance(v, (int, float)):
                return repr(v)
            return "'" + str(v).replace("'", "''") + "'"
        parts = query.split("?")
        assert len(parts) == len(params) + 1
        text = parts[0] + "".join(literal(v) + p for v, p in zip(params, parts[1:]))
        out = subprocess.run(["psql", "-qAt", "-F", "\t", self.db, "-c", text],
                             check=True, capture_output=True, text=True).stdout
        def value(f):
            for conv in (int, float):
                try:
                    return conv(f)
                except ValueError:
                    pass
            return f
        return [tuple(value(f) for f in line.split("\t")) for line in out.splitlines() if line]

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
               "test_metrics.py", "test_canvas.py", "test_gateway_headers.py",
               "test_mail_system.py", "test_api_retention.py"}


# The suites `tests/run --pg` (make test-pg) runs again with every daemon on
# PostgreSQL (MCPBOX_TEST_PG): those whose daemons keep state in the store
# (keys, sandboxes, servers, blobs, claims) and read it back.
PG_SUITES = {"test_metrics.py", "test_cli.py", "test_canvas.py", "test_gcloud_rest.py",
             "test_mail_system.py", "test_hard_limits.py", "test_gateway_transport.py",
             "test_sandbox_sweep.py", "test_sandbox_leftovers.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = os.path.basename(str(item.fspath))
        if name in TSAN_SUITES:
            item.add_marker(pytest.mark.tsan)
        if name in PG_SUITES or name.startswith(("test_api_", "test_daemon_")):
            item.add_marker(pytest.mark.pg)


# The clean-up after each test runs the release build when there is one: a
# sanitizer build's start and exit (the leak check) cost about 0.5 s a run,
# and `sandbox sweep` itself is tested under ASan by test_sandbox_sweep.py.
SWEEP_BIN = os.environ.get("MCPBOX_REL_BIN")
if not SWEEP_BIN or not os.access(SWEEP_BIN, os.X_OK):
    SWEEP_BIN = MCPBOX_BIN


def sweep_sandboxes(root):
    """Sandboxes outlive a stopped daemon by design; tear down those of any
    data dir under root (`mcpbox sandbox sweep`) so that it can be removed."""
    for dirpath, dirs, _ in os.walk(root):
        if "run" in dirs and (PG_SERVER or os.path.exists(os.path.join(dirpath, "mcpbox.db"))):
            subprocess.run([SWEEP_BIN, "sandbox", "sweep", dirpath], check=True)
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
