"""The warm pool and what a sandbox costs the daemon: pool sandboxes are
seeded and run their profile's servers before anyone asks, so that acquire
only claims one (the servers answer at once, those not asked for are gone);
a server costs the daemon one descriptor, and its stderr goes to a log whose
tail explains a failure."""
import json
import os
import shutil
import time

import pytest

from conftest import Daemon, sweep_sandboxes
from gwharness import Session, text_of

REPO = os.path.join(os.path.dirname(__file__), "..", "..")


def wait_pool(api, profile, n, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        pool = api.get("/healthz").json().get("pool", {}).get(profile, {})
        if pool.get("idle", 0) >= n:
            return pool
        time.sleep(0.2)
    raise AssertionError("the pool did not fill: %s" % api.get("/healthz").json())


def url_of(sb, server):
    return next(s["mcp_server_url"] for s in sb["servers"] if s["server_name"] == server)


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def test_pool_sandboxes_are_seeded_and_serving_before_acquire(tmp_root):
    seed = os.path.join(tmp_root, "seed")
    os.makedirs(os.path.join(seed, "docs"))
    with open(os.path.join(seed, "docs", "hello.txt"), "w") as f:
        f.write("from the seed")
    d = Daemon(os.path.join(tmp_root, "var"),
               ["--pool", "MCP_Atlas=2", "--seed", "MCP_Atlas=" + seed]).start()
    try:
        with d.client() as api:
            wait_pool(api, "MCP_Atlas", 2)
            t0 = time.time()
            r = api.post("/local-sandbox", json={"server_names": ["filesystem", "git"],
                                                 "benchmark": "MCP_Atlas"})
            took = time.time() - t0
            assert r.status_code == 201, r.text
            sb = r.json()
            sid = sb["local_sandbox_id"]
            assert [s["server_name"] for s in sb["servers"]] == ["filesystem", "git"]
            assert all(s["metadata"]["ready"] for s in sb["servers"]), sb
            assert took < 5, took  # a claim (the ASan build is slow; the bench measures it)
            pool = api.get("/healthz").json()["pool"]["MCP_Atlas"]
            assert pool["claimed"] == 1 and pool["misses"] == 0, pool

            # /data holds the seed, already there when the servers started
            fs = Session(url_of(sb, "filesystem"))
            assert text_of(fs.call("read_text_file", {"path": "/data/docs/hello.txt"})) == \
                "from the seed"
            fs.call("write_file", {"path": "/data/docs/hello.txt", "content": "changed"})
            fs.close()

            # servers the pool started but the request did not name are gone
            base = sb["servers"][0]["mcp_server_url"].split("/filesystem/")[0]
            for other in ("localmemory", "terminal"):
                r2 = api.post("%s/%s/mcp/?local_sandbox_id=%s" % (base, other, sid), json={
                    "jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "t", "version": "1"}}},
                    headers={"Accept": "application/json, text/event-stream"})
                assert r2.status_code == 404, (other, r2.text)

            # reset of a pooled sandbox: seed back, servers restarted
            assert api.post(f"/local-sandbox/{sid}/reset").status_code == 200
            fs = Session(url_of(sb, "filesystem"))
            assert text_of(fs.call("read_text_file", {"path": "/data/docs/hello.txt"})) == \
                "from the seed"
            fs.close()

            # a server the profile does not offer is an error item, the rest work
            r = api.post("/local-sandbox", json={"server_names": ["filesystem", "word"],
                                                 "benchmark": "MCP_Atlas"})
            assert r.status_code == 201, r.text
            items = {s["server_name"]: s for s in r.json()["servers"]}
            assert items["word"]["status"] == "error"
            assert items["filesystem"]["metadata"]["ready"]

            # the pool refills behind the claims
            wait_pool(api, "MCP_Atlas", 2)
            for x in (sid, r.json()["local_sandbox_id"]):
                assert api.delete("/local-sandbox/" + x).status_code == 200
    finally:
        d.stop()


def test_a_server_costs_the_daemon_one_descriptor(api, daemon):
    servers = ["filesystem", "git", "terminal", "localmemory", "code-runner", "code-executor"]
    # warm up the keep-alive connection and the gateway's lazily made state
    sb = api.post("/local-sandbox", json={"server_names": ["filesystem"]}).json()
    api.delete("/local-sandbox/" + sb["local_sandbox_id"])
    before = fd_count(daemon.proc.pid)
    r = api.post("/local-sandbox", json={"server_names": servers})
    assert r.status_code == 201, r.text
    sb = r.json()
    assert all(s["metadata"]["ready"] for s in sb["servers"]), sb
    after = fd_count(daemon.proc.pid)
    # the init's pidfd plus one socket per server (no pipes, no control fds)
    assert after - before == 1 + len(servers), (before, after)
    sid = sb["local_sandbox_id"]
    logs = os.path.join(daemon.data_dir, "workspaces", sid, ".logs")
    assert sorted(os.listdir(logs)) == sorted(s + ".log" for s in servers)
    api.delete("/local-sandbox/" + sid)
    deadline = time.time() + 10
    while fd_count(daemon.proc.pid) > before and time.time() < deadline:
        time.sleep(0.1)
    assert fd_count(daemon.proc.pid) <= before


def test_a_failing_server_is_explained_by_its_stderr(tmp_path):
    profiles = tmp_path / "profiles"
    shutil.copytree(os.path.join(REPO, "profiles"), profiles)
    with open(profiles / "none.json") as f:
        none = json.load(f)
    none["servers"]["arxiv"] = {
        "upstream": "a server that cannot start (test)",
        "argv": ["/bin/sh", "-c", "echo starting; echo boom-stderr-marker >&2; exit 3"],
    }
    with open(profiles / "none.json", "w") as f:
        json.dump(none, f)
    d = Daemon(str(tmp_path / "var"), ["--profiles-dir", str(profiles)]).start()
    try:
        with d.client() as api:
            r = api.post("/local-sandbox", json={"server_names": ["arxiv", "filesystem"]})
            assert r.status_code == 201, r.text
            items = {s["server_name"]: s for s in r.json()["servers"]}
            assert items["filesystem"]["metadata"]["ready"]
            arxiv = items["arxiv"]
            assert arxiv["status"] == "error", arxiv
            assert "boom-stderr-marker" in arxiv["metadata"]["error"], arxiv
            sid = r.json()["local_sandbox_id"]
            log = os.path.join(str(tmp_path / "var"), "workspaces", sid, ".logs", "arxiv.log")
            with open(log) as f:
                assert "boom-stderr-marker" in f.read()
            api.delete("/local-sandbox/" + sid)
    finally:
        d.stop()
        sweep_sandboxes(str(tmp_path))
