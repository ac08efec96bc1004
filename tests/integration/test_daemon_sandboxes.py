"""The daemon end to end with real sandboxes and real servers: acquire starts
an isolated environment and its MCP servers, the MCP URLs reach them through
the gateway, archives land in their /data, reset and release act on the
processes, and a restarted daemon re-adopts what was running."""
import io
import os
import re
import signal
import subprocess
import tarfile
import time

import httpx
import pytest

from conftest import MCPBOX_BIN, Daemon
from gwharness import Session, node_client, text_of

NATIVE = ["filesystem", "git", "terminal", "localmemory", "code-runner", "code-executor"]


def acquire(api, servers, **body):
    r = api.post("/local-sandbox", json={"server_names": servers, **body})
    assert r.status_code == 201, r.text
    return r.json()


def url_of(sb, server):
    return next(s["mcp_server_url"] for s in sb["servers"] if s["server_name"] == server)


def tar_gz(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1700000000
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def upload(api, sid, blob):
    url = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
    assert httpx.put(url, content=blob).status_code in (200, 201)
    r = api.post(f"/local-sandbox/{sid}/initialize")
    assert r.status_code == 200, r.text


def run_python(sb, code):
    s = Session(url_of(sb, "code-runner"))
    try:
        return text_of(s.call("run-code", {"code": code, "languageId": "python"}))
    finally:
        s.close()


def sandbox_pids(sid):
    """Host pids of processes whose hostname namespace belongs to the sandbox."""
    host = "mcpbox-" + sid[:8]
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            uts = os.readlink(f"/proc/{p}/ns/uts")
        except OSError:
            continue
        pids.append((int(p), uts))
    # processes of the sandbox share its uts namespace with its init
    inits = [pid for pid, _ in pids if _cmd(pid).startswith("mcpbox sandbox-init")
             and _hostname_of(pid) == host]
    if not inits:
        return []
    ns = os.readlink(f"/proc/{inits[0]}/ns/uts")
    return [pid for pid, uts in pids if uts == ns]


def _cmd(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _hostname_of(pid):
    try:
        with open(f"/proc/{pid}/root/etc/hostname") as f:
            return f.read().strip()
    except OSError:
        return ""


def test_acquire_starts_every_native_server_ready_with_drift_metadata(api):
    sb = acquire(api, NATIVE + ["arxiv"])
    by = {s["server_name"]: s for s in sb["servers"]}
    for name in NATIVE + ["arxiv"]:
        md = by[name]["metadata"]
        assert by[name]["status"] == "occupied", by[name]
        assert md["ready"] is True and md["state"] == "ready", md
        assert re.fullmatch(r"[0-9a-f]{64}", md["tools_sha256"]), md
        assert md["tools_count"] > 0 and md["server_info"]["name"], md
        assert md["upstream"], md
    # a server the profile does not offer (MCP_Mark has filesystem and
    # playwright only) is reported, not hidden
    mark = acquire(api, ["filesystem", "git"], benchmark="MCP_Mark")
    mby = {s["server_name"]: s for s in mark["servers"]}
    assert mby["filesystem"]["metadata"]["ready"] is True, mby
    assert mby["git"]["status"] == "error"
    assert "not available" in mby["git"]["metadata"]["error"]
    assert mby["git"]["metadata"]["ready"] is False
    # the same tool surface gives the same hash in the next sandbox
    sb2 = acquire(api, ["filesystem"])
    assert sb2["servers"][0]["metadata"]["tools_sha256"] == by["filesystem"]["metadata"]["tools_sha256"]
    # get shows the same readiness
    got = api.get(f"/local-sandbox/{sb['local_sandbox_id']}").json()
    assert {s["server_name"]: s["metadata"]["ready"] for s in got["servers"]} == \
        {n: True for n in NATIVE + ["arxiv"]}


def test_mcp_url_routing_errors(api, daemon):
    sb = acquire(api, ["filesystem", "arxiv"])
    sid = sb["local_sandbox_id"]
    mark = acquire(api, ["filesystem", "git"], benchmark="MCP_Mark")["local_sandbox_id"]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    h = {"Accept": "application/json, text/event-stream"}
    for path, words in [
        (f"/terminal/mcp/?local_sandbox_id={sid}", "did not acquire"),
        (f"/git/mcp/?local_sandbox_id={mark}", "did not acquire"),
        ("/filesystem/mcp/?local_sandbox_id=6f1c1d52-0000-4000-8000-000000000000", "no sandbox"),
        ("/filesystem/mcp/", "local_sandbox_id"),
    ]:
        r = httpx.post(daemon.url + path, json=init, headers=h)
        assert r.status_code == 404, (path, r.text)
        assert words in r.text, (path, r.text)
    # both URL spellings work
    for path in (f"/filesystem/mcp?local_sandbox_id={sid}", f"/filesystem/mcp/?local_sandbox_id={sid}"):
        r = httpx.post(daemon.url + path, json=init, headers=h)
        assert r.status_code == 200, r.text
    api.delete(f"/local-sandbox/{sid}")
    r = httpx.post(url_of(sb, "filesystem"), json=init, headers=h)
    assert r.status_code == 404 and "no sandbox" in r.text


def test_uploaded_files_reach_the_servers_and_their_writes_reach_the_dump(api):
    sb = acquire(api, ["filesystem", "code-runner"])
    sid = sb["local_sandbox_id"]
    upload(api, sid, tar_gz({"notes/a.txt": b"from the client\n"}))
    fs = Session(url_of(sb, "filesystem"))
    assert text_of(fs.call("read_text_file", {"path": "/data/notes/a.txt"})) == "from the client\n"
    fs.call("write_file", {"path": "/data/notes/b.txt", "content": "by the agent"})
    fs.close()
    out = run_python(sb, "import os\nprint(os.getuid(), sorted(os.listdir('/data/notes')))\n"
                         "open('/data/notes/c.txt','w').write('by code')")
    assert "0 ['a.txt', 'b.txt']" in out, out
    url = api.get(f"/local-sandbox/{sid}/dump").json()["download_url"]
    with tarfile.open(fileobj=io.BytesIO(httpx.get(url).content), mode="r:gz") as tf:
        names = set(tf.getnames())
        assert {"./notes/a.txt", "./notes/b.txt", "./notes/c.txt"} <= names, names
        assert tf.extractfile("./notes/c.txt").read() == b"by code"


def test_isolation_seen_from_a_server(api, daemon):
    a = acquire(api, ["code-runner"])
    b = acquire(api, ["code-runner"])
    upload(api, b["local_sandbox_id"], tar_gz({"secret.txt": b"b's data"}))
    port = daemon.url.rsplit(":", 1)[1]
    code = f"""
import os, socket
def probe(what, fn):
    try:
        fn(); print(what, 'OPEN')
    except Exception as e:
        print(what, 'blocked', type(e).__name__)
probe('shadow', lambda: open('/etc/shadow').read())
probe('datadir', lambda: open({daemon.data_dir!r} + '/mcpbox.db', 'rb').read())
probe('other', lambda: open({daemon.data_dir!r} + '/workspaces/{b["local_sandbox_id"]}/data/secret.txt').read())
probe('root_home', lambda: os.listdir('/root'))
probe('write_usr', lambda: open('/usr/evil', 'w').write('x'))
probe('daemon_port', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=2))
probe('outside_net', lambda: socket.create_connection(('1.1.1.1', 53), timeout=2))
print('hostname', socket.gethostname())
print('pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit())[:3])
"""
    out = run_python(a, code)
    for what in ("shadow", "datadir", "other", "root_home", "write_usr", "daemon_port", "outside_net"):
        assert f"{what} blocked" in out, out
    assert f"hostname mcpbox-{a['local_sandbox_id'][:8]}" in out, out
    assert "pids [1, " in out, out  # its own pid namespace


def test_reset_restores_data_and_restarts_servers(api):
    sb = acquire(api, ["filesystem", "code-runner"])
    sid = sb["local_sandbox_id"]
    upload(api, sid, tar_gz({"keep.txt": b"baseline"}))
    run_python(sb, "open('/data/keep.txt','w').write('changed')\nopen('/data/extra.txt','w').write('x')\n"
                   "import subprocess\nsubprocess.Popen(['sleep','1000'], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)")
    before = api.get(f"/local-sandbox/{sid}").json()
    cmds_before = {p: _cmd(p) for p in sandbox_pids(sid)}
    assert any("sleep 1000" in c for c in cmds_before.values())
    r = api.post(f"/local-sandbox/{sid}/reset")
    assert r.status_code == 200, r.text
    fs = Session(url_of(sb, "filesystem"))
    assert text_of(fs.call("read_text_file", {"path": "/data/keep.txt"})) == "baseline"
    listing = text_of(fs.call("list_directory", {"path": "/data"}))
    assert "extra.txt" not in listing
    fs.close()
    pids_after = set(sandbox_pids(sid))
    assert not any("sleep 1000" in _cmd(p) for p in pids_after)
    # the servers are new processes, and ready again
    servers_before = {p for p, c in cmds_before.items() if "mcp filesystem" in c}
    servers_after = {p for p in pids_after if "mcp filesystem" in _cmd(p)}
    assert servers_before and servers_after and not servers_before & servers_after
    after = api.get(f"/local-sandbox/{sid}").json()
    assert all(s["metadata"]["ready"] for s in after["servers"]), after
    assert before["status"] == after["status"] == "occupied"


def test_release_leaves_no_process_mount_or_directory(api, daemon):
    sb = acquire(api, NATIVE)
    sid = sb["local_sandbox_id"]
    run_python(sb, "import subprocess\nsubprocess.Popen(['sleep','1000'], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)")
    assert sandbox_pids(sid)
    r = api.delete(f"/local-sandbox/{sid}")
    assert r.status_code == 200
    deadline = time.time() + 10
    while sandbox_pids(sid) and time.time() < deadline:
        time.sleep(0.1)
    assert not sandbox_pids(sid)
    with open("/proc/self/mountinfo") as f:
        assert sid not in f.read()
    assert not os.path.exists(os.path.join(daemon.data_dir, "workspaces", sid))
    assert not os.path.exists(os.path.join(daemon.data_dir, "run", sid))
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        assert not any(sid in d for d in dirs), root
        if root.count("/") > 6:
            dirs[:] = []


def test_dead_server_is_restarted(api):
    sb = acquire(api, ["filesystem", "code-runner"])
    sid = sb["local_sandbox_id"]
    fs_pids = [p for p in sandbox_pids(sid) if "mcp filesystem" in _cmd(p)]
    assert len(fs_pids) == 1
    os.kill(fs_pids[0], signal.SIGKILL)
    s = Session(url_of(sb, "filesystem"))  # may wait for the restart
    deadline = time.time() + 15
    while True:
        msg = s.call("list_allowed_directories")
        if "result" in msg or time.time() > deadline:
            break
        time.sleep(0.2)
    assert "/data" in text_of(msg), msg
    s.close()
    md = next(x for x in api.get(f"/local-sandbox/{sid}").json()["servers"]
              if x["server_name"] == "filesystem")["metadata"]
    assert md["restarts"] >= 1 and md["ready"], md


@pytest.mark.parametrize("how", ["sigterm", "kill9"])
def test_sandboxes_survive_a_daemon_restart(tmp_root, how):
    d = Daemon(os.path.join(tmp_root, "var")).start()
    try:
        with d.client() as api:
            sb = acquire(api, ["filesystem", "code-runner"])
            sid = sb["local_sandbox_id"]
            run_python(sb, "open('/data/state.txt','w').write('alive')")
        if how == "sigterm":
            d.stop()
        else:
            d.kill()
        assert sandbox_pids(sid), "the sandbox's init should outlive the daemon"
        d.start()
        with d.client() as api:
            got = api.get(f"/local-sandbox/{sid}").json()
            assert got["status"] == "occupied", got
            s = Session(url_of(sb, "filesystem"))
            assert text_of(s.call("read_text_file", {"path": "/data/state.txt"})) == "alive"
            s.close()
            assert api.delete(f"/local-sandbox/{sid}").status_code == 200
        assert not sandbox_pids(sid)
    finally:
        d.stop()


def test_sdk_client_through_the_daemon(api):
    """The official TypeScript SDK against a sandbox URL: MCP-Atlas's pattern
    of one session per call, then many sessions at once."""
    sb = acquire(api, ["filesystem"])
    url = url_of(sb, "filesystem")
    out = node_client("sequential", url, 20, "list_allowed_directories", "{}")
    assert len(out["texts"]) == 20 and all("/data" in t for t in out["texts"]), out
    assert len(set(out["sessions"])) == 20
    out = node_client("concurrent", url, 10, 3, "list_allowed_directories", "{}")
    assert len(out["texts"]) == 30 and all("/data" in t for t in out["texts"]), out
    assert len(set(out["sessions"])) == 10


def test_kill9_with_20_live_sandboxes_leaves_no_orphans(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var")).start()
    try:
        with d.client() as api:
            sids = [acquire(api, ["filesystem"])["local_sandbox_id"] for _ in range(20)]
            sbs = {sid: api.get(f"/local-sandbox/{sid}").json() for sid in sids}
        d.kill()
        d.start()
        with d.client() as api:
            for sid in sids:
                got = api.get(f"/local-sandbox/{sid}").json()
                assert got["status"] == "occupied", got
                s = Session(url_of(sbs[sid], "filesystem"))
                assert "/data" in text_of(s.call("list_allowed_directories"))
                s.close()
            for sid in sids:
                assert api.delete(f"/local-sandbox/{sid}").status_code == 200
        deadline = time.time() + 10
        while any(sandbox_pids(sid) for sid in sids) and time.time() < deadline:
            time.sleep(0.1)
        assert not any(sandbox_pids(sid) for sid in sids)
        with open("/proc/self/mountinfo") as f:
            mounts = f.read()
        assert not any(sid in mounts for sid in sids)
        assert os.listdir(os.path.join(d.data_dir, "run")) == []
        assert os.listdir(os.path.join(d.data_dir, "workspaces")) == []
    finally:
        d.stop()


def test_pdf_tools_inside_a_sandbox(api):
    """pdf-tools runs poppler and qpdf under prlimit inside the sandbox."""
    from test_server_pdftools import make_pdf
    sb = acquire(api, ["pdf-tools", "filesystem"])
    sid = sb["local_sandbox_id"]
    upload(api, sid, tar_gz({"docs/a.pdf": make_pdf(["first page text", "second page"])}))
    s = Session(url_of(sb, "pdf-tools"))
    out = text_of(s.call("read_pdf_pages", {"pdf_file_path": "/data/docs/a.pdf", "start_page": 1, "end_page": 2}))
    flat = "".join(out.split())  # the generated PDF has no font widths: one glyph per line
    assert "firstpagetext" in flat and "secondpage" in flat, out
    out = text_of(s.call("extract_pdf_pages", {"source_path": "/data/docs/a.pdf", "page_numbers": [2],
                                               "output_path": "/data/docs/b.pdf"}))
    assert "b.pdf" in out, out
    # qpdf's metadata update (a private file in the sandbox's /tmp) works there too
    out = text_of(s.call("get_pdf_info", {"pdf_file_path": "/data/docs/b.pdf"}))
    assert out.endswith("Total pages: 1\nTitle: Unknown\nAuthor: Unknown\nCreator: Unknown\n"
                        "Creation date: Unknown\n"), out
    s.close()
    fs = Session(url_of(sb, "filesystem"))
    listing = text_of(fs.call("list_directory", {"path": "/data/docs"}))
    assert "b.pdf" in listing, listing
    fs.close()


def test_excel_inside_a_sandbox(api):
    """excel edits a workbook in /data; openpyxl on the host reads the dump."""
    import openpyxl
    sb = acquire(api, ["excel"], benchmark="Toolathlon")
    sid = sb["local_sandbox_id"]
    s = Session(url_of(sb, "excel"))
    out = text_of(s.call("create_workbook", {"filepath": "/data/book.xlsx"}))
    assert "book.xlsx" in out, out
    out = text_of(s.call("write_data_to_excel", {"filepath": "/data/book.xlsx", "sheet_name": "Sheet",
                                                 "data": [["a", "b"], [1, 2]], "start_cell": "A1"}))
    assert "Error" not in out, out
    s.close()
    url = api.get(f"/local-sandbox/{sid}/dump").json()["download_url"]
    with tarfile.open(fileobj=io.BytesIO(httpx.get(url).content), mode="r:gz") as tf:
        wb = openpyxl.load_workbook(io.BytesIO(tf.extractfile("./book.xlsx").read()))
    ws = wb["Sheet"]
    assert [[c.value for c in row] for row in ws.iter_rows(min_row=1, max_row=2, max_col=2)] == \
        [["a", "b"], [1, 2]]


def test_max_message_bounds_tool_results_both_ways(tmp_root):
    """--max-message: an answer within it arrives whole, a bigger one becomes a
    JSON-RPC error naming the limit, a bigger request gets HTTP 413; and the
    session keeps working after both."""
    d = Daemon(os.path.join(tmp_root, "var"), extra_args=["--max-message", "64K"]).start()
    try:
        with d.client() as api:
            sb = acquire(api, ["filesystem"])
            upload(api, sb["local_sandbox_id"],
                   tar_gz({"small.txt": b"s" * 30000, "big.txt": b"b" * 100000}))
            s = Session(url_of(sb, "filesystem"))
            try:
                assert text_of(s.call("read_text_file", {"path": "/data/small.txt"})) == "s" * 30000
                big = s.call("read_text_file", {"path": "/data/big.txt"})
                assert "error" in big, big
                assert "limit of 65536 bytes" in big["error"]["message"], big
                r = s.request("tools/call", {"name": "write_file", "arguments": {
                    "path": "/data/w.txt", "content": "w" * 70000}})
                assert r.status_code == 413, r.text
                assert text_of(s.call("read_text_file", {"path": "/data/small.txt"})) == "s" * 30000
            finally:
                s.close()
    finally:
        d.stop()
    bad = subprocess.run([MCPBOX_BIN, "serve", "--max-message", "1K"], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2 and "--max-message must be at least 4K" in bad.stderr
