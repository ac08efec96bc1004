"""The web dashboard at / in Debian's headless Chromium (chromium-headless-shell),
driven by playwright-core from runtime/playwright (tests/integration/dashboard_driver.mjs):
login with an API key, a sandbox the test acquires shows up within a second
with its servers' readiness, TTL and resource use, its call log updates after
a tool call (hostile tool names shown as text), reset and release from the
page act on the sandbox, and the page loads nothing from anywhere else.

UPDATE_SCREENSHOTS=1 writes the screenshots of the main views into docs/."""
import glob
import json
import os
import re
import subprocess
import time

import pytest

from conftest import API_KEY
from gwharness import Session, text_of

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
CORES = sorted(glob.glob(os.path.join(ROOT, "runtime/playwright/*/node_modules/playwright-core")))
NODE = os.path.join(ROOT, "tests/node/node22")

pytestmark = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and CORES and os.path.exists(NODE)),
    reason="needs chromium-headless-shell, runtime/playwright and tests/node/node22 "
           "(scripts/install-deps --test)")


class Browser:
    def __init__(self):
        self.p = subprocess.Popen(
            [NODE, os.path.join(os.path.dirname(__file__), "dashboard_driver.mjs"),
             os.path.abspath(CORES[-1]), CHROMIUM],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert json.loads(self.p.stdout.readline())["ready"]

    def __call__(self, op, **kw):
        self.p.stdin.write(json.dumps({"op": op, **kw}) + "\n")
        self.p.stdin.flush()
        out = json.loads(self.p.stdout.readline())
        assert out.pop("ok"), (op, kw, out)
        return out

    def close(self):
        try:
            self.p.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.p.stdin.flush()
            self.p.wait(timeout=20)
        except Exception:
            self.p.kill()


@pytest.fixture
def browser():
    b = Browser()
    yield b
    b.close()


def shot(browser, tmp_root, name):
    if os.environ.get("UPDATE_SCREENSHOTS"):
        path = os.path.join(ROOT, "docs", "images", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
    else:
        path = os.path.join(tmp_root, name)
    browser("screenshot", path=os.path.abspath(path))
    assert os.path.getsize(path) > 10000


def test_embedded_page_matches_its_source():
    assert subprocess.run([os.path.join(ROOT, "scripts/embed-dashboard"), "--check"]).returncode \
        == 0, "src/api/dashboard_page.h is stale: run scripts/embed-dashboard"


def test_dashboard_end_to_end(daemon, api, browser, tmp_root):
    r = api.get("/", headers={"Authorization": ""})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in r.headers["content-security-policy"]

    browser("goto", url=daemon.url + "/")
    browser("wait", sel="#key")
    shot(browser, tmp_root, "dashboard-login.png")
    browser("fill", sel="#key", text="not-a-key")
    browser("click", sel="#loginform button")
    browser("wait", sel="#loginerr:text('refused')")
    browser("clear")  # the refused key's 403 is the one expected error
    browser("fill", sel="#key", text=API_KEY)
    browser("click", sel="#loginform button")
    browser("wait", sel="#app")
    browser("wait", sel="#empty")

    # a sandbox acquired now is on the page within a second
    r = api.post("/local-sandbox", json={"server_names": ["filesystem", "git"]})
    assert r.status_code == 201, r.text
    sb = r.json()
    sid = sb["local_sandbox_id"]
    t0 = time.monotonic()
    browser("wait", sel=f'tr.sb[data-id="{sid}"]', timeout=1000)
    assert time.monotonic() - t0 < 1.0
    row = f'tr.sb[data-id="{sid}"]'
    for name in ("filesystem", "git"):
        browser("wait", sel=f'{row} .pill.ready[data-server="{name}"]', timeout=5000)
    browser("wait", sel=f"{row} td.ttl:text-matches('^1h 59m|^2h 0m')", timeout=5000)
    cells = browser("texts", sel=f"{row} td")["texts"]
    assert cells[1] == "occupied" and cells[2] == "none"
    assert re.search(r"\d+(\.\d)? (KiB|MiB)", cells[5]), cells  # memory
    assert re.match(r"\d+ / \d+", cells[6]), cells  # processes / max

    # its call log updates after a tool call; hostile names stay text
    browser("click", sel=f"{row} td:nth-child(3)")
    browser("wait", sel="#callcard")
    s = Session(next(x["mcp_server_url"] for x in sb["servers"]
                     if x["server_name"] == "filesystem"))
    t0 = time.monotonic()
    assert "/data" in text_of(s.call("list_allowed_directories"))
    browser("wait", sel="#calls td.tool:text-is('list_allowed_directories')", timeout=2000)
    assert time.monotonic() - t0 < 2.0
    hostile = '<img src=x onerror="window.pwned=1">'
    s.call(hostile)
    s.call("write_file", {"path": "/data/note.txt", "content": "x" * 3000})
    browser("wait", sel="#calls td.tool:text-is('write_file')", timeout=2000)
    assert hostile in browser("texts", sel="#calls td.tool")["texts"]
    assert browser("count", sel="#calls img")["count"] == 0
    assert browser("eval", js="window.pwned === undefined")["value"] is True
    s.close()
    browser("eval", js="refreshCharts()")  # this minute's calls in the chart now
    time.sleep(0.5)
    shot(browser, tmp_root, "dashboard-sandboxes.png")

    # reset from the page: /data back to its initial state
    browser("click", sel=f'button[data-action="reset:{sid}"]')
    browser("wait", sel=f'button[data-action="reset:{sid}"].armed')
    browser("click", sel=f'button[data-action="reset:{sid}"]')
    deadline = time.time() + 30
    while time.time() < deadline:
        s = Session(next(x["mcp_server_url"] for x in sb["servers"]
                         if x["server_name"] == "filesystem"))
        listing = text_of(s.call("list_directory", {"path": "/data"}))
        s.close()
        if "note.txt" not in listing:
            break
        time.sleep(0.5)
    assert "note.txt" not in listing

    # release from the page
    browser("click", sel=f'button[data-action="release:{sid}"]')
    browser("click", sel=f'button[data-action="release:{sid}"]')
    browser("gone", sel=row, timeout=15000)
    assert api.get(f"/local-sandbox/{sid}").status_code == 404
    browser("wait", sel="#empty")

    # nothing but this origin, no script errors; the only failed requests are
    # the released sandbox's own polls racing its release
    assert all(f.startswith("404 ") and sid in f for f in browser("failed")["failed"]), \
        browser("failed")
    reqs = browser("requests")["requests"]
    assert reqs and all(u.startswith(daemon.url + "/") for u in reqs), \
        [u for u in reqs if not u.startswith(daemon.url)]
    assert browser("errors")["errors"] == []

    # logging out forgets the key
    browser("click", sel="#logout")
    browser("wait", sel="#key")
    assert browser("eval", js="sessionStorage.getItem('mcpbox-key')")["value"] is None
