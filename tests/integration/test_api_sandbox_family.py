"""Klavis's /sandbox/{server_name} family (shared/reference/klavis-api.md §1.4)
served for every server mcpbox hosts: shapes, names and aliases, the 404 for
servers that are not hosted, localmemory's JSON initialize/dump through the
real server, workspace initialize/dump through an archive, release with
is_ttl/instance_id; plus /sandbox/local_dev's live URLs and the key-first 404."""
import io
import os
import subprocess
import tarfile

import httpx
import pytest

from conftest import MCPBOX_BIN, Daemon
from gwharness import Session, text_of

GRAPH = {
    "entities": [
        {"name": "Alice", "entityType": "person", "observations": ["engineer", "likes tea"]},
        {"name": "TechCorp", "entityType": "organization", "observations": []},
    ],
    "relations": [{"from": "Alice", "to": "TechCorp", "relationType": "works_at"}],
}


def acquire(api, name, **body):
    r = api.post(f"/sandbox/{name}", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def test_acquire_shape_and_aliases(api, daemon):
    body = acquire(api, "memory", benchmark="Toolathlon", ttl_seconds=7200, tag="t1")
    assert set(body) == {"sandbox_id", "server_urls", "server_name", "status", "message"}
    sid = body["sandbox_id"]
    # keyed by the name asked for (what Toolathlon maps back), named as Klavis names it
    assert body["server_urls"] == {"memory": f"{daemon.url}/localmemory/mcp/?local_sandbox_id={sid}"}
    assert body["server_name"] == "localmemory"
    assert body["status"] == "occupied"
    info = api.get(f"/sandbox/memory/{sid}").json()
    assert info["sandbox_id"] == sid and info["server_name"] == "localmemory"
    assert info["server_url"] == body["server_urls"]["memory"]
    assert info["benchmark"] == "Toolathlon" and info["auth_data"] is None
    assert info["tags"] == ["t1"] and info["metadata"]["ready"] is True
    assert "server-memory 2025.4.25" in info["metadata"]["upstream"]
    # the same id under Klavis's own name, and as a local sandbox
    assert api.get(f"/sandbox/localmemory/{sid}").status_code == 200
    assert api.get(f"/local-sandbox/{sid}").json()["servers"][0]["server_name"] == "localmemory"
    # list, filtered by server (alias) and tag
    lst = api.get("/sandbox", params={"server_name": "memory", "tag": "t1"}).json()
    assert lst["total_count"] == 1 and lst["sandboxes"][0]["sandbox_id"] == sid
    assert api.get("/sandbox", params={"tag": "other"}).json()["total_count"] == 0
    assert api.post("/sandbox/prepare", params={"benchmark": "Toolathlon"}).json() == {}
    # not the server this sandbox holds
    assert api.get(f"/sandbox/filesystem/{sid}").status_code == 404
    r = api.delete(f"/sandbox/localmemory/{sid}")
    assert r.json() == {"sandbox_id": sid, "status": "idle", "message": "Sandbox released successfully"}
    assert api.get(f"/sandbox/memory/{sid}").status_code == 404


def test_unhosted_names_are_404_naming_what_is_hosted(api):
    for name in ("notion", "github", "weights_and_biases"):
        r = api.post(f"/sandbox/{name}", json={"benchmark": "Toolathlon"})
        assert r.status_code == 404, r.text
        detail = r.json()["detail"]
        assert "filesystem" in detail and "localmemory" in detail and name not in detail
    # a Klavis local name this build serves, but not in this benchmark's profile
    r = api.post("/sandbox/desktop-commander", json={"benchmark": "Toolathlon"})
    assert r.status_code == 404
    assert "'desktop-commander' is not hosted" in r.json()["detail"], r.text
    # code-runner is served by none but not by Toolathlon's profile
    assert api.post("/sandbox/code-runner", json={"benchmark": "Toolathlon"}).status_code == 404
    assert api.post("/sandbox/code-runner", json={"benchmark": "MCP_Atlas"}).status_code == 201
    # validation comes first, FastAPI-style
    r = api.post("/sandbox/memory", json={"ttl_seconds": 5})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "ttl_seconds"]


def test_localmemory_initialize_and_dump_through_the_server(api):
    sid = acquire(api, "localmemory", benchmark="MCP_Atlas")["sandbox_id"]
    r = api.post(f"/sandbox/localmemory/{sid}/initialize", json=GRAPH)
    assert r.status_code == 200, r.text
    assert r.json()["sandbox_id"] == sid and "2 entities and 1 relations" in r.json()["message"]
    # the server reads the graph the initialize wrote
    url = api.get(f"/sandbox/localmemory/{sid}").json()["server_url"]
    s = Session(url)
    graph = text_of(s.call("read_graph", {}))
    assert '"Alice"' in graph and '"works_at"' in graph
    s.call("add_observations", {"observations": [{"entityName": "TechCorp", "contents": ["founded 2015"]}]})
    s.close()
    dump = api.get(f"/sandbox/localmemory/{sid}/dump").json()
    assert set(dump) == {"sandbox_id", "server_name", "dumped_at", "data"}
    assert dump["server_name"] == "localmemory" and dump["dumped_at"].startswith("20")
    assert dump["data"]["relations"] == GRAPH["relations"]
    assert dump["data"]["entities"][0] == GRAPH["entities"][0]
    assert dump["data"]["entities"][1]["observations"] == ["founded 2015"]
    # the same under /local-sandbox/{server}/{id}/dump
    assert api.get(f"/local-sandbox/localmemory/{sid}/dump").json()["data"] == dump["data"]
    # invalid data: every problem reported, nothing written
    bad = {"entities": [{"name": 1}, "x"], "relations": [{"from": "a"}]}
    r = api.post(f"/sandbox/localmemory/{sid}/initialize", json=bad)
    assert r.status_code == 422
    locs = [tuple(d["loc"]) for d in r.json()["detail"]]
    assert ("body", "entities", 0, "name") in locs and ("body", "entities", 0, "entityType") in locs
    assert ("body", "entities", 1) in locs and ("body", "relations", 0, "to") in locs
    assert api.get(f"/sandbox/localmemory/{sid}/dump").json()["data"] == dump["data"]
    r = api.post(f"/sandbox/localmemory/{sid}/initialize", content=b"{nope")
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_invalid"
    r = api.post(f"/sandbox/localmemory/{sid}/initialize", params={"init_default_data": "true"})
    assert r.status_code in (400, 422) and "no default" in r.text
    # reset empties the graph; an initialize without a body too
    assert api.post(f"/sandbox/localmemory/{sid}/reset").json()["status"] == "occupied"
    assert api.get(f"/sandbox/localmemory/{sid}/dump").json()["data"] == {"entities": [], "relations": []}
    api.post(f"/sandbox/localmemory/{sid}/initialize", json=GRAPH)
    assert api.post(f"/sandbox/localmemory/{sid}/initialize").status_code == 200
    assert api.get(f"/sandbox/localmemory/{sid}/dump").json()["data"] == {"entities": [], "relations": []}
    api.delete(f"/sandbox/localmemory/{sid}")


def test_a_symlink_in_data_does_not_redirect_the_memory_write(api, daemon):
    sid = acquire(api, "localmemory", benchmark="MCP_Atlas")["sandbox_id"]
    # an agent's symlink at the memory file's directory, pointing out of /data
    ws = os.path.join(daemon.data_dir, "workspaces", sid, "data")
    os.makedirs(os.path.join(ws, "repos"), exist_ok=True)
    target = os.path.join(daemon.data_dir, "escaped")
    os.makedirs(target)
    os.symlink(target, os.path.join(ws, "repos", "memory_mcp_server"))
    api.post(f"/sandbox/localmemory/{sid}/initialize", json=GRAPH)
    assert os.listdir(target) == []  # the sandbox's own /data is all it can see
    api.delete(f"/sandbox/localmemory/{sid}")


def test_workspace_servers_initialize_and_dump_through_archives(api, tmp_root):
    sid = acquire(api, "filesystem", benchmark="MCP_Mark")["sandbox_id"]
    up = api.post(f"/sandbox/filesystem/{sid}/upload-url").json()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = b"hello"
        ti = tarfile.TarInfo("a/b.txt")
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    assert httpx.put(up["upload_url"], content=buf.getvalue()).status_code == 200
    r = api.post(f"/sandbox/filesystem/{sid}/initialize", json={"files": []})
    assert r.status_code == 422 and "upload-url" in r.text
    r = api.post(f"/sandbox/filesystem/{sid}/initialize")
    assert r.status_code == 200, r.text
    dump = api.get(f"/sandbox/filesystem/{sid}/dump").json()
    assert dump["server_name"] == "filesystem"
    got = httpx.get(dump["data"]["download_url"]).content
    with tarfile.open(fileobj=io.BytesIO(got), mode="r:gz") as tf:
        assert tf.extractfile("./a/b.txt").read() == b"hello"
    api.delete(f"/sandbox/filesystem/{sid}")


def test_release_with_is_ttl_and_instance_id(api):
    sid = acquire(api, "git")["sandbox_id"]
    other = "00000000-0000-4000-8000-000000000000"
    r = api.delete(f"/sandbox/git/{sid}", params={"is_ttl": "true", "instance_id": other})
    assert r.status_code == 200 and r.json()["status"] == "occupied" and "skipped" in r.json()["message"]
    assert api.get(f"/sandbox/git/{sid}").status_code == 200
    assert api.delete(f"/sandbox/git/{sid}", params={"is_ttl": "maybe"}).status_code == 422
    r = api.delete(f"/sandbox/git/{sid}", params={"is_ttl": "true", "instance_id": sid})
    assert r.json()["status"] == "idle"
    assert api.get(f"/sandbox/git/{sid}").status_code == 404


def test_planned_servers_say_what_is_missing(api):
    # playwright has no state: initialize/dump answer 501 with the reason
    sid = acquire(api, "filesystem")["sandbox_id"]
    r = api.get(f"/sandbox/playwright/{sid}/dump")
    assert r.status_code == 404  # this sandbox does not hold playwright
    api.delete(f"/sandbox/filesystem/{sid}")


def test_local_dev_hands_out_only_live_urls(api):
    for bench in ("Toolathlon", None):
        body = {"benchmark": bench} if bench else {}
        r = api.post("/sandbox/local_dev", json=body)
        assert r.status_code == 201, r.text
        out = r.json()
        urls = out["server_urls"]
        assert "filesystem" in urls and "canvas" not in urls and "google_cloud" in urls
        if bench == "Toolathlon":
            assert "code-runner" not in urls  # the Toolathlon profile does not offer it
        for name, url in urls.items():
            s = Session(url)
            tools = s.result("tools/list")["result"]["tools"]
            assert tools, name
            s.close()
        api.delete(f"/sandbox/local_dev/{out['sandbox_id']}")


def test_key_is_checked_before_unknown_routes(daemon):
    with daemon.client(key=None) as c:
        assert c.get("/no/such/route").status_code == 401
        assert c.patch("/local-sandbox").status_code == 401
        assert c.post("/sandbox/notion").status_code == 401
    with daemon.client(key="wrong-key-0123456789") as c:
        assert c.get("/no/such/route").status_code == 403
    with daemon.client() as c:
        assert c.get("/no/such/route").status_code == 404
        assert c.patch("/local-sandbox").status_code == 405
        assert c.get("/healthz").status_code == 200


def test_seed_is_checked_at_start(tmp_root):
    r = subprocess.run([MCPBOX_BIN, "serve", "--listen", "127.0.0.1:0", "--data-dir",
                        os.path.join(tmp_root, "v"), "--seed", "MCP_Atlas=/nonexistent"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "--seed MCP_Atlas: /nonexistent cannot be used as a seed directory: No such file" in r.stderr
    assert "scripts/build-atlas-seed" in r.stderr
    f = os.path.join(tmp_root, "file")
    open(f, "w").close()
    r = subprocess.run([MCPBOX_BIN, "serve", "--data-dir", os.path.join(tmp_root, "v"),
                        "--seed", "Toolathlon=" + f], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not a directory" in r.stderr


def test_atlas_without_seed_says_data_is_empty(api, tmp_root):
    r = api.post("/local-sandbox", json={"server_names": ["filesystem"], "benchmark": "MCP_Atlas"})
    msg = r.json()["message"]
    assert msg.startswith("Local sandbox environment acquired successfully")
    assert "/data is empty" in msg and "scripts/build-atlas-seed" in msg
    api.delete(f"/local-sandbox/{r.json()['local_sandbox_id']}")
    r = api.post("/local-sandbox", json={"server_names": ["filesystem"], "benchmark": "MCP_Mark"})
    assert r.json()["message"] == "Local sandbox environment acquired successfully"
    api.delete(f"/local-sandbox/{r.json()['local_sandbox_id']}")
    # with a seed, no note
    seed = os.path.join(tmp_root, "seed")
    os.makedirs(seed)
    d = Daemon(os.path.join(tmp_root, "var2"), ["--seed", "MCP_Atlas=" + seed]).start()
    try:
        with d.client() as c:
            r = c.post("/local-sandbox", json={"server_names": ["git"], "benchmark": "MCP_Atlas"})
            assert r.json()["message"] == "Local sandbox environment acquired successfully"
    finally:
        d.stop()
