"""playwright in real sandboxes: the real @playwright/mcp (0.0.68 for MCP_Mark, 0.0.32 plus
mcpbox's re-implementation of the lockon-n chunk fork for Toolathlon) driving Debian's
chromium-headless-shell inside the sandbox, reaching a local fixture site only through the
daemon's egress proxy.

One daemon for the module, started with fixture hosts that map names to a site this test
serves on the host's loopback (`--egress-fixture NAME=127.0.0.1:PORT`); sandboxes reach it
only through the proxy (they have no network of their own). MCP-Mark's extraction_table task
is replayed against a local copy of its page (tests/integration/data/playwright).

Run: tests/run --integration -k playwright
"""
import csv
import http.server
import io
import json
import os
import re
import shutil
import socket
import tarfile
import threading
import time

import httpx
import pytest

from conftest import MCPBOX_BIN, Daemon
from gwharness import Session, text_of
from test_daemon_sandboxes import _cmd, acquire, sandbox_pids, tar_gz, upload, url_of

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
PROFILES = os.path.join(REPO, "profiles")
RUNTIME = os.path.join(REPO, "runtime", "playwright")
DATA_CSV = os.path.join(HERE, "data", "playwright", "extraction_table.csv")
CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
HEADER = "Title, Rating, Likes, Views, Replies"

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM) or not all(
        os.path.exists(os.path.join(RUNTIME, v, "node_modules", "@playwright", "mcp", "cli.js"))
        for v in ("0.0.32", "0.0.68")),
    reason="needs chromium-headless-shell and runtime/playwright (scripts/install-deps)")


# ------------------------------------------------------------------ the site

def extraction_rows():
    with open(DATA_CSV, newline="") as f:
        rows = list(csv.reader(f, skipinitialspace=True))
    return rows[0], rows[1:]


def extraction_page():
    head, rows = extraction_rows()
    cells = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>\n" for r in rows)
    return ("<!doctype html><html><head><title>Data Extraction</title></head><body>"
            "<h1>Data Extraction</h1><table><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>\n" + cells
            + "</tbody></table></body></html>")


HOME = """<!doctype html><html><head><title>Fixture Home</title></head><body>
<h1>Fixture Home</h1>
<a href="/second.html">Second page</a>
<label for="name">Name</label><input id="name">
<label for="color">Color</label>
<select id="color"><option value="red">Red</option><option value="blue">Blue</option></select>
<button onclick="document.getElementById('out').textContent = 'Hello ' +
  document.getElementById('name').value + ' in ' + document.getElementById('color').value">Greet</button>
<p id="out">waiting</p>
<label for="file">Attachment</label>
<input type="file" id="file" onchange="const f = this.files[0];
  f.text().then(t => { document.getElementById('upl').textContent = f.name + ':' + t.trim(); })">
<p id="upl">no file</p>
</body></html>"""

LONG = ("<!doctype html><html><head><title>Long List</title></head><body><h1>Long List</h1><ul>"
        + "".join(f"<li>Item number {i} of the long list</li>" for i in range(1, 301))
        + "</ul><p>The very end</p></body></html>")

PAGES = {
    "/": HOME,
    "/second.html": "<!doctype html><title>Second Page</title><h1>Second</h1>",
    "/long.html": LONG,
    "/extraction": None,  # built from data.csv
}


class Site(http.server.BaseHTTPRequestHandler):
    seen = []

    def do_GET(self):
        Site.seen.append((self.headers.get("Host"), self.path))
        body = PAGES.get(self.path.split("?")[0], False)
        if body is None:
            body = extraction_page()
        if body is False:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


@pytest.fixture(scope="module")
def site():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def fixture_args(port):
    return ["--egress-fixture", f"site.test=127.0.0.1:{port}",
            "--egress-fixture", f"eval-web.mcpmark.ai=127.0.0.1:{port}",
            "--egress-fixture", f"other.test=127.0.0.1:{port}"]


@pytest.fixture(scope="module")
def pw_daemon(site, tmp_path_factory):
    from conftest import sweep_sandboxes
    root = str(tmp_path_factory.mktemp("pw"))
    d = Daemon(os.path.join(root, "var"), fixture_args(site)).start()
    yield d
    d.stop()
    sweep_sandboxes(root)


@pytest.fixture(scope="module")
def pw_api(pw_daemon):
    with pw_daemon.client() as c:
        c.timeout = 120
        yield c


@pytest.fixture(scope="module")
def mark(pw_api):
    """One MCP_Mark sandbox with playwright 0.0.68, a file in /data to upload."""
    sb = acquire(pw_api, ["playwright"], benchmark="MCP_Mark")
    upload(pw_api, sb["local_sandbox_id"], tar_gz({"report.txt": b"quarterly numbers\n"}))
    yield sb
    pw_api.delete(f"/local-sandbox/{sb['local_sandbox_id']}")


@pytest.fixture(scope="module")
def toolathlon(pw_api):
    sb = acquire(pw_api, ["playwright"], benchmark="Toolathlon")
    yield sb
    pw_api.delete(f"/local-sandbox/{sb['local_sandbox_id']}")


def session(sb):
    return Session(url_of(sb, "playwright"), timeout=120)


def call_ok(s, tool, args=None):
    msg = s.call(tool, args or {})
    assert "result" in msg and not msg["result"].get("isError"), msg
    return text_of(msg)


def ref_of(text, role, name):
    m = re.search(r'%s "%s"[^\n]*\[ref=(e\d+)\]' % (re.escape(role), re.escape(name)), text)
    assert m, (role, name, text)
    return m.group(1)


def dump_members(api, sid):
    url = api.get(f"/local-sandbox/{sid}/dump").json()["download_url"]
    blob = httpx.get(url, timeout=60).content
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tf:
        return {re.sub(r"^\./", "", m.name): (tf.extractfile(m).read() if m.isfile() else None)
                for m in tf.getmembers()}


def host_tools(version, *args):
    """tools/list of the same npm package run directly on the host (no mcpbox)."""
    from mcp_stdio import StdioClient
    cli = os.path.join(RUNTIME, version, "node_modules", "@playwright", "mcp", "cli.js")
    with StdioClient(["node", cli, "--headless", "--isolated", "--no-sandbox", *args],
                     env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}, timeout=60) as c:
        c.initialize()
        return c.list_tools()


def gateway_tools(sb):
    s = session(sb)
    try:
        return s.result("tools/list")["result"]["tools"]
    finally:
        s.close()


# ------------------------------------------------------------- tool surfaces

def test_mcpmark_tools_equal_npm_0_0_68(mark):
    got = gateway_tools(mark)
    assert got == host_tools("0.0.68")
    assert len(got) == 22 and "browser_tabs" in [t["name"] for t in got]
    md = mark["servers"][0]["metadata"]
    assert md["ready"] and md["server_info"] == {"name": "Playwright", "version": "0.0.68"}, md


FORK_TOOLS = ["browser_snapshot_navigate_to_span", "browser_snapshot_navigate_to_first_span",
              "browser_snapshot_navigate_to_last_span", "browser_snapshot_navigate_to_next_span",
              "browser_snapshot_navigate_to_prev_span", "browser_snapshot_navigate_to_line",
              "browser_snapshot_search"]


def test_toolathlon_tools_are_0_0_32_plus_the_fork(toolathlon):
    got = gateway_tools(toolathlon)
    base = host_tools("0.0.32")
    names = [t["name"] for t in got]
    assert len(got) == 31 and names[19:26] == FORK_TOOLS
    assert [t for t in got if t["name"] not in FORK_TOOLS and t["name"] != "browser_snapshot"] == \
        [t for t in base if t["name"] != "browser_snapshot"]
    snap = next(t for t in got if t["name"] == "browser_snapshot")
    assert "divided into manageable spans" in snap["description"]
    # the 0.0.32 schemas are whole (the npm overrides of runtime/playwright/0.0.32)
    nav = next(t for t in got if t["name"] == "browser_navigate")
    assert nav["inputSchema"]["required"] == ["url"], nav
    search = next(t for t in got if t["name"] == "browser_snapshot_search")
    assert search["inputSchema"]["required"] == ["pattern"]
    assert search["annotations"]["readOnlyHint"] is True
    md = toolathlon["servers"][0]["metadata"]
    assert md["server_info"] == {"name": "Playwright", "version": "0.1.2"}, md


# ----------------------------------------------------- browsing a fixture site

def test_fixture_site_flow(mark, pw_api):
    sid = mark["local_sandbox_id"]
    s = session(mark)
    try:
        t = call_ok(s, "browser_navigate", {"url": "http://site.test/"})
        assert "- Page Title: Fixture Home" in t and 'heading "Fixture Home"' in t, t
        snap = call_ok(s, "browser_snapshot")
        call_ok(s, "browser_type", {"element": "Name", "ref": ref_of(snap, "textbox", "Name"),
                                    "text": "Ada"})
        call_ok(s, "browser_select_option", {"element": "Color",
                                             "ref": ref_of(snap, "combobox", "Color"),
                                             "values": ["blue"]})
        t = call_ok(s, "browser_click", {"element": "Greet", "ref": ref_of(snap, "button", "Greet")})
        assert "Hello Ada in blue" in t, t
        t = call_ok(s, "browser_evaluate",
                    {"function": "() => document.getElementById('out').textContent"})
        assert '"Hello Ada in blue"' in t, t
        # a screenshot lands in /data/.playwright_output
        t = call_ok(s, "browser_take_screenshot", {"type": "png", "filename": "home.png"})
        assert "(home.png)" in t, t  # 0.0.68: a relative name is relative to the cwd, /data
        t = call_ok(s, "browser_take_screenshot", {"type": "png"})
        shot = re.search(r"\]\((\S*page-[^)]*\.png)\)", t)
        assert shot, t
        # a file upload from /data
        t = call_ok(s, "browser_click", {"element": "Attachment",
                                         "ref": ref_of(snap, "button", "Attachment")})
        assert "File chooser" in t, t
        call_ok(s, "browser_file_upload", {"paths": ["/data/report.txt"]})
        t = call_ok(s, "browser_evaluate",
                    {"function": "() => document.getElementById('upl').textContent"})
        assert '"report.txt:quarterly numbers"' in t, t
        # tabs
        call_ok(s, "browser_tabs", {"action": "new"})  # 0.0.68: no url; the new tab is current
        call_ok(s, "browser_navigate", {"url": "http://site.test/second.html"})
        t = call_ok(s, "browser_tabs", {"action": "list"})
        assert "Fixture Home" in t and "(current) [Second Page]" in t, t
        t = call_ok(s, "browser_tabs", {"action": "select", "index": 0})
        bad = s.call("browser_click", {"element": "x", "ref": "e999"})
        assert bad["result"]["isError"] is True and "e999" in text_of(bad), bad
    finally:
        s.close()
    # a new MCP session of the sandbox finds the same browser, tabs and page
    s2 = session(mark)
    try:
        t = call_ok(s2, "browser_tabs", {"action": "list"})
        assert "(current) [Fixture Home]" in t and "Second Page" in t, t
        call_ok(s2, "browser_tabs", {"action": "close", "index": 1})
    finally:
        s2.close()
    files = dump_members(pw_api, sid)
    assert files["home.png"].startswith(b"\x89PNG"), sorted(files)
    auto = [n for n in files if re.fullmatch(r"\.playwright_output/page-.*\.png", n)]
    assert len(auto) == 1 and files[auto[0]].startswith(b"\x89PNG"), (shot.group(1), sorted(files))


def test_mcpmark_extraction_table_replayed(mark):
    """eval_web/extraction_table: a scripted agent reads the table from the snapshot and
    answers CSV; the task's check (verify.py, re-expressed) accepts it."""
    s = session(mark)
    try:
        call_ok(s, "browser_navigate", {"url": "http://eval-web.mcpmark.ai/extraction"})
        call_ok(s, "browser_wait_for", {"text": "Data Extraction"})
        snap = call_ok(s, "browser_snapshot")
    finally:
        s.close()
    cells = re.findall(r'- cell "([^"]*)"', snap)
    header = re.findall(r'- columnheader "([^"]*)"', snap)
    assert header == ["Title", "Rating", "Likes", "Views", "Replies"], header
    rows = [cells[i:i + 5] for i in range(0, len(cells), 5)]
    answer = "```csv\n" + HEADER + "\n" + "\n".join(
        f'{t}, "{r}", {lk}, {v}, {rp}' for t, r, lk, v, rp in rows) + "\n```"
    assert extraction_check(answer)
    assert not extraction_check(answer.replace("\n```", "", 1).rsplit("\n", 2)[0] + "\n```")


def extraction_check(message):
    """MCP-Mark extraction_table's check: a CSV (a csv fence, or the lines from the header
    on) of exactly 98 lines whose header is exact and whose rows equal data.csv."""
    m = re.search(r"```csv\s*\n(.*?)```", message, re.S)
    body = m.group(1) if m else message[message.find(HEADER):] if HEADER in message else ""
    lines = [ln.strip() for ln in body.strip().split("\n") if ln.strip()]
    with open(DATA_CSV) as f:
        want = [ln.strip() for ln in f.read().strip().split("\n")]
    if len(lines) != 98 or lines[0] != HEADER:
        return False
    parse = lambda ln: next(csv.reader([ln], skipinitialspace=True))
    return all(parse(a) == parse(b) for a, b in zip(lines[1:], want[1:]))


# ------------------------------------------------ Toolathlon's chunk layer live

def test_toolathlon_spans_on_a_long_page(toolathlon):
    s = session(toolathlon)
    try:
        t = call_ok(s, "browser_navigate", {"url": "http://site.test/long.html"})
        m = re.search(r"- Page Snapshot \(Span 1 of (\d+)\):\n```yaml\n", t)
        assert m and int(m.group(1)) >= 3, t
        n = int(m.group(1))
        assert t.endswith("```\n\n*Use snapshot navigation tools to view other spans. "
                          "Current span size: 5000 characters*\n"), t[-300:]
        assert "Item number 1 of" in t and "The very end" not in t
        t = call_ok(s, "browser_snapshot_navigate_to_last_span")
        assert t.startswith(f"### Result\nNavigated to last span ({n} of {n})\n```yaml\n"), t[:200]
        assert "The very end" in t
        # the default flags are "gi": lastIndex carries from line to line, so every other
        # of these similar lines is missed, as in the fork
        t = call_ok(s, "browser_snapshot_search", {"pattern": "item number 29\\d"})
        assert t.startswith(f"### Result\nFound 5 matches in 1 spans:\nSpans with matches: {n}\n"), t[:300]
        t = call_ok(s, "browser_snapshot_search", {"pattern": "item number 29\\d", "flags": "i"})
        assert t.startswith(f"### Result\nFound 10 matches in 1 spans:"), t[:300]
        t = call_ok(s, "browser_snapshot_search", {"pattern": "no such thing"})
        assert t == "### Result\nNo matches found for pattern: no such thing\n", t
        # a snapshot keeps the span the agent moved to when the page did not change
        call_ok(s, "browser_snapshot_navigate_to_span", {"spanIndex": 1})
        t = call_ok(s, "browser_snapshot")
        assert f"- Page Snapshot (Span 2 of {n}):" in t, t[:400]
        # navigating resets to the first span
        t = call_ok(s, "browser_navigate", {"url": "http://site.test/second.html"})
        assert "- Page Snapshot (Span 1 of 1):" in t, t
        t = call_ok(s, "browser_tab_new", {"url": "http://site.test/long.html"})
        assert "### Open tabs" in t and f"(Span 1 of {n})" in t, t[:600]
        bad = s.call("browser_snapshot_navigate_to_line", {"globalLineNumber": 0})
        assert bad["result"]["isError"] is True and "too_small" in text_of(bad), bad
    finally:
        s.close()


def test_toolathlon_site_flow(toolathlon, pw_api):
    """0.0.32's own tools through the chunk layer: every page state is a span."""
    s = session(toolathlon)
    try:
        t = call_ok(s, "browser_navigate", {"url": "http://site.test/"})
        assert "- Page Snapshot (Span 1 of 1):" in t, t
        call_ok(s, "browser_type", {"element": "Name", "ref": ref_of(t, "textbox", "Name"),
                                    "text": "Lin"})
        call_ok(s, "browser_select_option", {"element": "Color",
                                             "ref": ref_of(t, "combobox", "Color"),
                                             "values": ["red"]})
        c = call_ok(s, "browser_click", {"element": "Greet", "ref": ref_of(t, "button", "Greet")})
        assert "Hello Lin in red" in c and "- Page Snapshot (Span 1 of 1):" in c, c
        t = call_ok(s, "browser_take_screenshot", {})
        m = re.search(r"saved it as /data/(\.playwright_output/page-\S+\.jpeg)", t)
        assert m, t
        assert "image" not in [b["type"] for b in s.call("browser_take_screenshot", {})["result"]["content"]]
    finally:
        s.close()
    files = dump_members(pw_api, toolathlon["local_sandbox_id"])
    assert files[m.group(1)].startswith(b"\xff\xd8"), sorted(files)  # a JPEG


# ---------------------------------------------------------------- egress

def test_egress_denies_loopback_and_other_sandboxes(mark, pw_daemon):
    """Allow-list "*": public names pass, but the host's loopback (the daemon itself, which
    routes to every sandbox's MCP URL) is refused with a clear page, and logged."""
    sid = mark["local_sandbox_id"]
    s = session(mark)
    try:
        port = pw_daemon.url.rsplit(":", 1)[1]
        t = call_ok(s, "browser_navigate", {"url": f"http://127.0.0.1:{port}/local-sandbox"})
        assert "non-public addresses" in t or "sandboxes may not reach" in t, t
        t = call_ok(s, "browser_navigate", {"url": f"http://localhost:{port}/"})
        assert "sandboxes may not reach" in t, t
    finally:
        s.close()
    log = open(os.path.join(pw_daemon.data_dir, "workspaces", sid, ".logs", "egress.log")).read()
    assert re.search(r"playwright GET 127\.0\.0\.1:%s denied" % port, log), log
    assert re.search(r"playwright GET site\.test:80 allowed", log), log


def test_egress_none_profile_denies_everything(pw_api):
    sb = acquire(pw_api, ["playwright"])  # benchmark null: the none profile, egress []
    s = session(sb)
    try:
        t = call_ok(s, "browser_navigate", {"url": "http://site.test/"})
        assert "not in the egress allow-list" in t, t
        msg = s.call("browser_navigate", {"url": "https://site.test/"})
        assert msg["result"]["isError"] is True and "ERR_TUNNEL_CONNECTION_FAILED" in text_of(msg), msg
    finally:
        s.close()
        pw_api.delete(f"/local-sandbox/{sb['local_sandbox_id']}")


def test_acquire_egress_may_only_narrow(pw_api):
    """The acquire request's "egress" narrows the profile's allow-list, never widens it:
    hostile or widening lists are 422 before anything starts."""
    def post(body):
        return pw_api.post("/local-sandbox", json=body)
    before = pw_api.get("/local-sandbox").json()["total_count"]
    # the none profile gives playwright egress []: any host widens it
    r = post({"server_names": ["playwright"], "egress": ["site.test"]})
    assert r.status_code == 422, r.text
    item = r.json()["detail"][0]
    assert item["type"] == "value_error" and item["loc"] == ["body", "egress", 0], item
    assert "'site.test' is not within the egress allow-list" in item["msg"], item
    assert "may only narrow it" in item["msg"] and 'playwright []' in item["msg"], item
    # a server without egress has nothing to narrow
    r = post({"server_names": ["filesystem"], "benchmark": "MCP_Mark", "egress": ["site.test"]})
    assert r.status_code == 422 and "none of them has egress" in r.text, r.text
    # malformed entries, wrong types, too many
    for bad in ("*", ["http://site.test/"], ["a b"], [1], ["site.test:80"], [""],
                ["x.test"] * 1 + ["h%d.test" % i for i in range(40)], {"a": 1}):
        r = post({"server_names": ["playwright"], "benchmark": "MCP_Mark", "egress": bad})
        assert r.status_code == 422, (bad, r.text)
    assert pw_api.get("/local-sandbox").json()["total_count"] == before  # nothing was made


def test_warm_pool_and_a_profile_allow_list(site, tmp_path):
    """A warm-pool sandbox has its browser running before it is claimed, so acquire is a
    claim. Its profile (MCP_Mark with egress ["site.test", "other.test"]) is narrowed by
    the acquire's own "egress": ["site.test"] (widening to eval-web.mcpmark.ai or "*" is
    422): site.test goes through, other.test (allowed by the profile, not by the request)
    and eval-web.mcpmark.ai are denied with a clear error; the egress socket refuses the
    same over raw CONNECT, the narrowing holds after a daemon restart (it is stored with
    the sandbox), and the socket goes away at release."""
    prof = tmp_path / "profiles"
    prof.mkdir()
    for name in os.listdir(PROFILES):
        shutil.copy(os.path.join(PROFILES, name), prof / name)
    p = json.load(open(prof / "MCP_Mark.json"))
    p["servers"]["playwright"]["egress"] = ["site.test", "other.test"]
    json.dump(p, open(prof / "MCP_Mark.json", "w"))
    d = Daemon(str(tmp_path / "var"), [*fixture_args(site), "--profiles-dir", str(prof),
                                       "--pool", "MCP_Mark=1"]).start()
    try:
        with d.client() as api:
            api.timeout = 120
            from test_daemon_pool import wait_pool
            wait_pool(api, "MCP_Mark", 1)
            before = {p for p in map(int, filter(str.isdigit, os.listdir("/proc")))
                      if _cmd(p).startswith("/usr/lib/chromium/")}
            for wider in (["eval-web.mcpmark.ai"], ["*"], ["site.test", "test"]):
                r = api.post("/local-sandbox", json={"server_names": ["playwright"],
                                                     "benchmark": "MCP_Mark", "egress": wider})
                assert r.status_code == 422, (wider, r.text)
                assert r.json()["detail"][-1]["loc"][:2] == ["body", "egress"], r.text
                assert 'playwright ["site.test","other.test"]' in r.json()["detail"][-1]["msg"], r.text
            t0 = time.time()
            r = api.post("/local-sandbox", json={"server_names": ["playwright"],
                                                 "benchmark": "MCP_Mark",
                                                 "egress": ["Site.Test"]})
            took = time.time() - t0
            assert r.status_code == 201, r.text
            sb = r.json()
            sid = sb["local_sandbox_id"]
            assert api.get("/healthz").json()["pool"]["MCP_Mark"]["claimed"] == 1
            running = chromium_pids(sid)
            assert running and set(running) <= before, (running, before)
            # the pool sandbox ran filesystem too: only playwright has an egress socket
            assert os.listdir(os.path.join(d.data_dir, "egress", sid)) == ["playwright.sock"]
            # a claim, not a start (which takes Node + Chromium: 5-20 s on a busy 2-core host,
            # ASan build); bench/ measures the release build
            assert took < 8, took
            warm_sessions_stay_in_the_gateway(sb)
            s = session(sb)
            try:
                t = call_ok(s, "browser_navigate", {"url": "http://site.test/second.html"})
                assert "Page Title: Second Page" in t, t
                t = call_ok(s, "browser_navigate", {"url": "http://other.test/second.html"})
                assert "'other.test' is not in the egress allow-list" in t, t
                t = call_ok(s, "browser_navigate", {"url": "http://eval-web.mcpmark.ai/"})
                assert "'eval-web.mcpmark.ai' is not in the egress allow-list" in t, t
            finally:
                s.close()
            sock = os.path.join(d.data_dir, "egress", sid, "playwright.sock")
            assert raw_connect(sock, "other.test:80").startswith(b"HTTP/1.1 403")
            assert raw_connect(sock, "site.test:80").startswith(b"HTTP/1.1 200")
            assert raw_connect(sock, "not a target").startswith(b"HTTP/1.1 400")
            # a sandbox acquired without "egress" has the profile's whole list
            sb2 = acquire(api, ["playwright"], benchmark="MCP_Mark")
            sock2 = os.path.join(d.data_dir, "egress", sb2["local_sandbox_id"], "playwright.sock")
            assert raw_connect(sock2, "other.test:80").startswith(b"HTTP/1.1 200")
            api.delete(f"/local-sandbox/{sb2['local_sandbox_id']}")
        # a restarted daemon re-adopts the sandbox and listens on its socket again (the
        # directory bound into the sandbox stays across the restart)
        d.stop()
        d.start()
        s = session(sb)
        try:
            deadline = time.time() + 60
            while True:  # the new daemon starts the server again
                msg = s.call("browser_navigate", {"url": "http://site.test/second.html"})
                if "result" in msg and not msg["result"].get("isError") or time.time() > deadline:
                    break
                time.sleep(0.5)
            assert "Page Title: Second Page" in text_of(msg), msg
            msg = s.call("browser_navigate", {"url": "http://other.test/second.html"})
            assert "'other.test' is not in the egress allow-list" in text_of(msg), msg
        finally:
            s.close()
        assert raw_connect(sock, "other.test:80").startswith(b"HTTP/1.1 403")
        with d.client() as api:
            api.delete(f"/local-sandbox/{sid}")
            assert not os.path.exists(sock)
    finally:
        d.stop()
        from conftest import sweep_sandboxes
        sweep_sandboxes(str(tmp_path))


def proc_io(pid):
    with open(f"/proc/{pid}/io") as f:
        return {k: int(v) for k, v in (line.split(":") for line in f)}


def warm_sessions_stay_in_the_gateway(sb):
    """New sessions on a claimed sandbox, as a client checking it is up opens them
    (initialize, tools/list, DELETE): the list is upstream's (the gateway's copy of the
    launcher's first answer, which held it until the browser ran), and neither the
    launcher nor Node does anything for them: the gateway answers tools/list itself
    (tools_static) and the launcher drops the gateway's client_initialized note, so no
    tools/list answer (~14 KB) comes out of the launcher and no note (~150 bytes) reaches
    Node (5 of either would be over 700 bytes; an idle Node reads a few dozen bytes from
    Chromium now and then)."""
    sid = sb["local_sandbox_id"]
    pids = sandbox_pids(sid)
    launcher = [p for p in pids if " playwright --package " in _cmd(p)]
    node = [p for p in pids if _cmd(p).startswith("/usr/bin/node ")]
    assert len(launcher) == 1 and len(node) == 1, [(p, _cmd(p)) for p in pids]
    want = host_tools("0.0.68")
    before = proc_io(launcher[0]), proc_io(node[0])
    for i in range(5):
        assert gateway_tools(sb) == want
    after = proc_io(launcher[0]), proc_io(node[0])
    assert after[0]["wchar"] - before[0]["wchar"] < 600, (before, after)
    assert after[1]["rchar"] - before[1]["rchar"] < 600, (before, after)


def raw_connect(path, target):
    short = "/tmp/mcpbox-pw-%d" % os.getpid()  # unix socket paths are short
    if os.path.lexists(short):
        os.unlink(short)
    os.symlink(os.path.dirname(path), short)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(20)
    try:
        c.connect(os.path.join(short, os.path.basename(path)))
    finally:
        os.unlink(short)
    c.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    data = c.recv(4096)
    c.close()
    return data


# ---------------------------------------------------------------- lifecycle

def chromium_pids(sid):
    return [p for p in sandbox_pids(sid) if _cmd(p).startswith("/usr/lib/chromium/")]


@pytest.mark.parametrize("which", ["mark", "toolathlon"])
def test_crashed_browser_and_release(which, request, pw_api):
    """(The last test on the module's sandboxes: it releases them.)"""
    sb = request.getfixturevalue(which)
    sid = sb["local_sandbox_id"]
    assert sb["servers"][0]["metadata"]["ready"] is True
    pids = chromium_pids(sid)
    assert pids, "the browser runs"
    # memory: the sandbox's cgroup holds Node + Chromium with two tabs, well inside 2G
    mem = sandbox_memory(sid)
    assert mem, "no memory cgroup for the sandbox"
    print(f"\nplaywright sandbox memory: {mem[0] / 2**20:.0f} MiB of {mem[1] / 2**20:.0f}")
    disk = {"mark": 2, "toolathlon": 4}[which]
    assert mem[1] == (2 + disk) * 2**30 and mem[0] < 2**30, mem  # the limit: memory 2G + disk
    for p in pids:
        try:
            os.kill(p, 9)
        except ProcessLookupError:
            pass
    # the launcher sees the browser's process end and has upstream start a new one: the
    # next call gets a clear error saying so, the one after works on the new browser
    s = session(sb)
    try:
        msg = s.call("browser_navigate", {"url": "http://site.test/second.html"})
        assert msg["result"]["isError"] is True, msg
        assert text_of(msg).startswith("Error: the browser crashed (its process ended "
                                       "unexpectedly). mcpbox has started a new one"), msg
        msg = s.call("browser_navigate", {"url": "http://site.test/second.html"})
        assert not msg["result"].get("isError") and "Second Page" in text_of(msg), msg
        assert chromium_pids(sid), "a new browser runs"
        # a second crash is handled the same way, with time for the launcher to notice it
        for p in chromium_pids(sid):
            try:
                os.kill(p, 9)
            except ProcessLookupError:
                pass
        time.sleep(2)
        msg = s.call("browser_tabs" if which == "mark" else "browser_tab_list",
                     {"action": "list"} if which == "mark" else {})
        assert msg["result"]["isError"] is True and "the browser crashed" in text_of(msg), msg
        msg = s.call("browser_navigate", {"url": "http://site.test/"})
        assert not msg["result"].get("isError") and "Fixture Home" in text_of(msg), msg
        # browser_close is not a crash: no error, the next call starts a browser as upstream does
        call_ok(s, "browser_close")
        time.sleep(1)
        t = call_ok(s, "browser_navigate", {"url": "http://site.test/second.html"})
        assert "Second Page" in t, t
    finally:
        s.close()
    assert pw_api.delete(f"/local-sandbox/{sid}").status_code == 200
    deadline = time.time() + 10
    while sandbox_pids(sid) and time.time() < deadline:
        time.sleep(0.1)
    assert not chromium_pids(sid) and not sandbox_pids(sid)


def sandbox_memory(sid):
    """(bytes in use, limit) of the sandbox's memory cgroup (v2 or v1), or None."""
    for base, cur, lim in (("/sys/fs/cgroup/mcpbox", "memory.current", "memory.max"),
                           ("/sys/fs/cgroup/memory/mcpbox", "memory.usage_in_bytes",
                            "memory.limit_in_bytes")):
        try:
            names = [d for d in os.listdir(base) if d.endswith(sid)]
        except OSError:
            continue
        for d in names:
            try:
                return (int(open(os.path.join(base, d, cur)).read()),
                        int(open(os.path.join(base, d, lim)).read()))
            except (OSError, ValueError):
                pass
    return None


def test_runtime_not_installed_fails_only_playwright(tmp_path):
    """Before scripts/install-playwright the profiles' bind has nothing to show: the other
    servers of the sandbox still work, playwright says what to run."""
    prof = tmp_path / "profiles"
    shutil.copytree(PROFILES, prof)
    p = json.load(open(prof / "none.json"))
    p["sandbox"]["binds"] = {"/opt/playwright": "runtime/not-installed"}
    json.dump(p, open(prof / "none.json", "w"))
    d = Daemon(str(tmp_path / "var"), ["--profiles-dir", str(prof)]).start()
    try:
        with d.client() as api:
            sb = acquire(api, ["filesystem", "playwright"])
            by = {s["server_name"]: s for s in sb["servers"]}
            assert by["filesystem"]["metadata"]["ready"] is True, by
            assert by["playwright"]["status"] == "error", by
            assert "scripts/install-playwright" in by["playwright"]["metadata"]["error"], by
            api.delete(f"/local-sandbox/{sb['local_sandbox_id']}")
    finally:
        d.stop()
        from conftest import sweep_sandboxes
        sweep_sandboxes(str(tmp_path))

