"""State survives the daemon: kill -9 and start again; TTL deadlines kept and
met within a second, including those that passed while it was down."""
import os
import time

import httpx

from conftest import Daemon
import treeutil


def set_deadline(d, sid, deadline):
    d.sql("UPDATE sandboxes SET deadline=? WHERE id=?", (deadline, sid))


def status_row(d, sid):
    return d.sql("SELECT status, deadline, ttl_seconds FROM sandboxes WHERE id=?", (sid,))[0]


def test_kill9_restart_keeps_everything(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var")).start()
    src = os.path.join(tmp_root, "src")
    os.makedirs(src)
    treeutil.make_tree(src)
    with d.client() as api:
        keep = api.post("/local-sandbox", json={"server_names": ["filesystem"], "ttl_seconds": 3600}).json()
        forever = api.post("/local-sandbox", json={"server_names": ["git"], "ttl_seconds": None}).json()
        expiring = api.post("/local-sandbox", json={"server_names": ["git"], "ttl_seconds": 60}).json()
        sid = keep["local_sandbox_id"]
        up = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
        assert httpx.put(up, content=treeutil.tar_dot(src)).status_code == 200
        assert api.post(f"/local-sandbox/{sid}/initialize").status_code == 200
        before = status_row(d, sid)
    d.kill()
    # the third sandbox's deadline passes while the daemon is down
    set_deadline(d, expiring["local_sandbox_id"], time.time() - 1)
    d.start()
    try:
        with d.client() as api:
            ids = {s["local_sandbox_id"] for s in api.get("/local-sandbox").json()["local_sandboxes"]}
            assert ids == {sid, forever["local_sandbox_id"]}
            assert status_row(d, sid) == before  # deadline intact
            assert status_row(d, forever["local_sandbox_id"])[1] == 0
            # adopted servers come back (the daemon reconnects to them or starts
            # them again): once ready, the sandbox reads as it did before
            deadline = time.time() + 60
            while True:
                servers = api.get(f"/local-sandbox/{sid}").json()["servers"]
                if all(s["metadata"].get("ready") for s in servers) or time.time() > deadline:
                    break
                time.sleep(0.2)
            assert servers == keep["servers"]
            url = api.get(f"/local-sandbox/{sid}/dump").json()["download_url"]
            out = os.path.join(tmp_root, "out")
            treeutil.extract_data_filter(httpx.get(url).content, out)
            assert treeutil.snapshot(out) == treeutil.snapshot(src)
            # upload URLs signed before the restart still work (secret kept)
            assert httpx.put(up, content=treeutil.tar_dot(src)).status_code == 200
            assert api.delete(f"/local-sandbox/{expiring['local_sandbox_id']}").status_code == 200
            assert not os.path.exists(os.path.join(d.data_dir, "workspaces", expiring["local_sandbox_id"]))
    finally:
        d.stop()


def test_reaper_releases_within_a_second(daemon, api):
    sid = api.post("/local-sandbox", json={"server_names": ["git"], "ttl_seconds": 60}).json()["local_sandbox_id"]
    other = api.post("/local-sandbox", json={"server_names": ["git"]}).json()["local_sandbox_id"]
    ws = os.path.join(daemon.data_dir, "workspaces", sid, "data")
    assert os.path.isdir(ws)
    # bring the deadline near instead of waiting a minute; the reaper re-reads
    # deadlines at least every second
    deadline = time.time() + 2
    set_deadline(daemon, sid, deadline)
    while time.time() < deadline - 0.3:
        assert api.get(f"/local-sandbox/{sid}").status_code == 200
        time.sleep(0.1)
    while api.get(f"/local-sandbox/{sid}").status_code == 200:
        assert time.time() < deadline + 1.0, "not released within a second of its deadline"
        time.sleep(0.05)
    assert time.time() >= deadline
    # the record goes first, the sandbox's teardown follows at once
    gone_by = time.time() + 2
    while os.path.exists(ws) and time.time() < gone_by:
        time.sleep(0.02)
    assert not os.path.exists(ws)
    assert status_row(daemon, sid)[0] == "released"
    assert api.get(f"/local-sandbox/{other}").status_code == 200
