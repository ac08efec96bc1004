"""Processes of one sandbox cannot open each other's /proc/PID/mem (issue 12
item 12). Every native server is non-dumpable from its first instruction
(the sandbox runs an exec-only copy of mcpbox, so the kernel marks every
exec of it non-dumpable, and the server also says so itself), the init and
its shepherds are non-dumpable, and nothing in a sandbox has CAP_SYS_PTRACE;
so agent code (a terminal command, code-executor's python, code-runner)
cannot read or write a server's memory, descriptors or environment, even as
the same uid. Agent processes themselves stay dumpable: they can open their
own /proc/self/mem (and each other's, which is one trust domain)."""
import json
import os
import re
import stat
import threading
import time

import pytest

from gwharness import Session, text_of
from test_daemon_sandboxes import acquire, url_of

PROBE = r'''
import json, os, ctypes, subprocess
me = os.getpid()
def cmd(p):
    try:
        return open('/proc/%s/cmdline' % p, 'rb').read().split(b'\0')
    except OSError:
        return []
def try_open(p, what='mem', mode='r+b'):
    try:
        with open('/proc/%s/%s' % (p, what), mode, buffering=0):
            return 'open'
    except OSError as e:
        return 'denied:%d' % e.errno
child = subprocess.Popen(['sleep', '30'])
mine = {me, child.pid}
out = {'servers': {}, 'others': {}}
for p in sorted(int(x) for x in os.listdir('/proc') if x.isdigit()):
    if p in mine:
        continue
    c = cmd(p)
    if not c or not c[0]:
        continue
    r = {w: try_open(p, w, m) for w, m in
         [('mem', 'r+b'), ('mem', 'rb'), ('environ', 'rb'), ('maps', 'rb')]}
    r['fd'] = 'open' if os.access('/proc/%d/fd' % p, os.R_OK) else 'denied'
    try:
        os.listdir('/proc/%d/fd' % p)
    except OSError as e:
        r['fd'] = 'denied:%d' % e.errno
    r['cmd'] = b' '.join(c[:3]).decode(errors='replace')
    key = c[2].decode() if len(c) > 2 and c[1] == b'mcp' else str(p)
    (out['servers'] if len(c) > 2 and c[1] == b'mcp' else out['others'])[key] = r
# its own memory, through /proc/self/mem: read and write a buffer back
buf = ctypes.create_string_buffer(b'before', 16)
addr = ctypes.addressof(buf)
with open('/proc/self/mem', 'r+b', buffering=0) as f:
    f.seek(addr)
    seen = f.read(6)
    f.seek(addr)
    f.write(b'AFTER!')
out['self'] = [seen.decode(), buf.raw[:6].decode()]
out['child'] = try_open(child.pid)
child.kill()
out['dumpable_self'] = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
print('PROBE' + json.dumps(out))
'''

SERVERS = ["filesystem", "terminal", "code-executor", "localmemory", "excel", "pdf-tools", "git"]


def run_probe(sb):
    s = Session(url_of(sb, "code-executor"))
    try:
        text = text_of(s.call("python_execute", {"code": PROBE, "timeout": 60}))
    finally:
        s.close()
    m = re.search(r"PROBE(\{.*\})", text)
    assert m, text
    return json.loads(m.group(1))


@pytest.fixture
def sandbox(api):
    return acquire(api, SERVERS, benchmark="Toolathlon")


def test_agent_code_cannot_open_a_servers_memory(sandbox):
    out = run_probe(sandbox)
    servers = out["servers"]
    # every server of the sandbox was seen (code-executor: its own parent)
    assert set(servers) >= set(SERVERS), servers
    for name, r in servers.items():
        for what in ("mem", "environ", "maps", "fd"):
            assert r[what].startswith("denied"), (name, what, r)
    # the init and the shepherds (mcpbox processes that are not servers) too
    mcpbox = {p: r for p, r in out["others"].items() if "mcpbox" in r["cmd"]}
    assert mcpbox, out["others"]
    for p, r in mcpbox.items():
        assert r["mem"].startswith("denied"), (p, r)
    # its own memory: read, then written, as proc(5) documents
    assert out["self"] == ["before", "AFTER!"], out["self"]
    assert out["dumpable_self"] == 1
    # agent processes are one trust domain: its own child is open to it
    assert out["child"] == "open", out


def test_servers_restarted_after_a_kill_are_non_dumpable_at_once(sandbox, daemon):
    """No window between exec and the server's own prctl: the kernel marks
    the exec non-dumpable (the binary the sandbox runs is exec-only). A probe
    that spins on /proc while the terminal server is killed and restarted
    never opens the new process's memory."""
    spin = r'''
import os, signal, time
def servers():
    r = {}
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try:
            c = open('/proc/%s/cmdline' % p, 'rb').read().split(b'\0')
        except OSError:
            continue
        if len(c) > 2 and c[1] == b'mcp':
            r[int(p)] = c[2].decode()
    return r
old = [p for p, n in servers().items() if n == 'terminal']
os.kill(old[0], signal.SIGKILL)
opened, tries, seen = [], 0, set()
deadline = time.time() + 20
while time.time() < deadline:
    for p, n in servers().items():
        if n != 'terminal' or p in old:
            continue
        seen.add(p)
        tries += 1
        try:
            open('/proc/%d/mem' % p, 'rb', buffering=0).close()
            opened.append(p)
        except OSError:
            pass
    if seen and tries > 2000:
        break
print('SPIN', len(seen), tries, len(opened))
'''
    got = {}

    def run_spin():
        s = Session(url_of(sandbox, "code-executor"))
        got["text"] = text_of(s.call("python_execute", {"code": spin, "timeout": 60}))
        s.close()

    t = threading.Thread(target=run_spin)
    t.start()
    time.sleep(1.5)
    # a request to the killed server (restarts it if the gateway waits for one)
    deadline = time.time() + 15
    while time.time() < deadline:
        term = Session(url_of(sandbox, "terminal"))
        msg = term.call("show_security_rules")
        term.close()
        if "result" in msg:
            break
        time.sleep(0.2)
    t.join(60)
    text = got["text"]
    m = re.search(r"SPIN (\d+) (\d+) (\d+)", text)
    assert m, text
    assert int(m.group(1)) >= 1, text  # the restarted terminal was seen
    assert m.group(3) == "0", text


def test_the_sandbox_runs_an_exec_only_copy_of_mcpbox(sandbox, daemon):
    out = run_probe(sandbox)
    assert out["servers"]
    copy = os.path.join(daemon.data_dir, "sandbox-mcpbox")
    st = os.stat(copy)
    assert stat.S_IMODE(st.st_mode) == 0o111, oct(st.st_mode)
    from conftest import MCPBOX_BIN
    assert st.st_size == os.stat(MCPBOX_BIN).st_size


def test_the_same_probe_from_a_terminal_command(sandbox):
    """Through the terminal server (its allow-list has python): the command
    is a child of the terminal server, yet cannot open its parent's memory
    or any other server's."""
    fs = Session(url_of(sandbox, "filesystem"))
    r = fs.call("write_file", {"path": "/data/probe.py", "content": PROBE})
    assert not r["result"].get("isError"), r
    fs.close()
    term = Session(url_of(sandbox, "terminal"))
    text = text_of(term.call("run_command", {"command": "python /data/probe.py"}))
    term.close()
    m = re.search(r"PROBE(\{.*\})", text)
    assert m, text
    out = json.loads(m.group(1))
    assert "terminal" in out["servers"], out["servers"]
    for name, r in out["servers"].items():
        assert r["mem"].startswith("denied:13"), (name, r)
    assert out["self"] == ["before", "AFTER!"] and out["child"] == "open", out
