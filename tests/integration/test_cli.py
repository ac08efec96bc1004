"""The CLI client (`mcpbox acquire|ls|get|rm|reset|push|pull|tools|call|logs`)
end to end against a real daemon, its errors (bad key, unknown id, daemon
down: non-zero exits and messages that name the fix), the first-run key of
`serve --first-run-key`, and `make install`. Hostile answers from a fake
daemon are in test_cli_hostile.py."""
import os
import pty
import re
import select
import shutil
import subprocess
import tarfile
import time

import conftest
import treeutil
from cliutil import (AUTH, FAIL, NOTFOUND, OK, REFUSED, SANITIZER_MARKS, TOOL_ERROR, UNREACHABLE,
                     USAGE, cli, cli_json, free_port)
from conftest import API_KEY, MCPBOX_BIN, Daemon


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
    assert rc == USAGE and "acquire wants server names" in err, err
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
    # the call log (GET /local-sandbox/ID/calls): no MCP call made yet, nothing to show
    rc, out, err = cli(url, "logs", sid)
    assert rc == OK, err
    cli(url, "rm", sid)
    rc, out, err = cli(url, "--help")
    assert rc == OK
    # a key that worked, revoked
    r = subprocess.run([MCPBOX_BIN, "keys", "create", *daemon.store_args],
                       capture_output=True, check=True)
    key = r.stdout.decode().strip()
    assert cli(url, "ls", key=key)[0] == OK
    subprocess.run([MCPBOX_BIN, "keys", "revoke", key[:12], *daemon.store_args],
                   capture_output=True, check=True)
    rc, out, err = cli(url, "ls", key=key)
    assert rc == AUTH and "MCPBOX_API_KEY" in err, err


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
    if not d.db:
        with open(os.path.join(data, "mcpbox.db"), "rb") as f:
            assert key.encode() not in f.read()
    rows = d.sql("select * from keys")
    assert len(rows) == 1 and key not in repr(rows), rows
    # the next start has a key: nothing is made or printed
    d2 = Daemon(data, extra_args=["--first-run-key"], db=d.db)
    d2.env.pop("MCPBOX_API_KEY")
    d2.start()
    try:
        rc, out, err = cli(d2.url, "ls", key=key)
        assert rc == OK, err
    finally:
        d2.proc.stdout.close()
        d2.stop()
    r = subprocess.run([MCPBOX_BIN, "keys", "list", *d.store_args], capture_output=True)
    assert r.stdout.decode().count("first-run") == 1


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
    for exe in ("mcpbox-light", "mcpbox-office", "mcpbox-services", "mcpbox-zygote"):
        assert os.access(os.path.join(usr, "lib/mcpbox", exe), os.X_OK), exe
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
        # the installed daemon found its server executables in lib/mcpbox
        assert os.path.exists(os.path.join(d.data_dir, "sandbox-bin", "mcpbox-light"))
    finally:
        conftest.MCPBOX_BIN = saved
        d.stop()
    r = subprocess.run(["make", "--no-print-directory", "-C", top, "uninstall",
                        "DESTDIR=" + dest, "PREFIX=/usr"], capture_output=True)
    assert r.returncode == 0 and not os.path.exists(binary)
    assert not os.path.exists(os.path.join(usr, "share/mcpbox"))
    assert not os.path.exists(os.path.join(usr, "lib/mcpbox"))
