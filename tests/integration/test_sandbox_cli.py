"""`mcpbox sandbox run`: a throw-away sandbox around one command, with this
process's stdio, its exit status passed through, and nothing left behind."""
import glob
import os
import socket
import subprocess

import pytest

MCPBOX_BIN = os.environ.get("MCPBOX_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "asan", "mcpbox")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root")


def run(*args, input=None, timeout=120):
    return subprocess.run([MCPBOX_BIN, "sandbox", "run", *args], input=input,
                          capture_output=True, timeout=timeout)


def leftovers():
    return sorted(glob.glob("/tmp/mcpbox-sandbox-*"))


def test_exit_status_and_stdio_pass_through():
    before = leftovers()
    p = run("--", "/bin/sh", "-c", "cat; echo out; echo err >&2; exit 3", input=b"from stdin\n")
    assert p.returncode == 3
    assert p.stdout == b"from stdin\nout\n"
    assert b"err\n" in p.stderr
    assert b"mcpbox sandbox: exit status 3" in p.stderr
    assert leftovers() == before


def test_killed_command_reports_the_signal():
    p = run("--memory", "64M", "--disk", "16M", "--", "python3", "-c", "x = bytearray(1 << 30)")
    assert p.returncode == 128 + 9, p.stderr
    assert b"killed by signal 9" in p.stderr


def test_network_is_loopback_only_unless_asked():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    port = srv.getsockname()[1]
    probe = ("import socket\n"
             "try:\n"
             "    socket.create_connection(('127.0.0.1', %d), timeout=5); print('reached')\n"
             "except OSError as e:\n"
             "    print('refused', e.errno)\n" % port)
    try:
        p = run("--quiet", "--", "python3", "-c", probe)
        assert p.stdout == b"refused 111\n", p.stderr
        p = run("--quiet", "--net", "--", "python3", "-c", probe)
        assert p.stdout == b"reached\n", p.stderr
    finally:
        srv.close()


def test_usage_errors():
    p = subprocess.run([MCPBOX_BIN, "sandbox", "run"], capture_output=True)
    assert p.returncode == 2
    assert b"usage: mcpbox sandbox run" in p.stderr
    p = run("--memory", "lots", "--", "true")
    assert p.returncode == 2
    assert b"not a size" in p.stderr
    p = run("--", "no-such-command-here")
    assert p.returncode == 1
    assert b"no-such-command-here" in p.stderr
