"""The whole Klavis Local Sandbox flow over HTTP, as the Klavis notebook and
the benchmark clients drive it: acquire -> upload-url -> PUT tar.gz ->
initialize -> dump -> GET -> release."""
import os

import httpx
import pytest

import treeutil


def upload_and_initialize(api, sid, data, prefix="/local-sandbox"):
    r = api.post(f"{prefix}/{sid}/upload-url")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["expires_in_minutes"] == 30
    put = httpx.put(body["upload_url"], content=data,
                    headers={"Content-Type": "application/gzip"})
    assert put.status_code == 200, put.text
    r = api.post(f"{prefix}/{sid}/initialize")
    assert r.status_code == 200, r.text
    return r.json()


def dump(api, sid, prefix="/local-sandbox"):
    r = api.get(f"{prefix}/{sid}/dump")
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"download_url", "expires_in_minutes"}
    got = httpx.get(body["download_url"])
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/gzip"
    return got.content


@pytest.mark.parametrize("style", ["relative", "dot"])
def test_round_trip_byte_for_byte(api, tmp_root, style):
    src = os.path.join(tmp_root, "src")
    os.makedirs(src)
    treeutil.make_tree(src)
    data = treeutil.tar_relative(src) if style == "relative" else treeutil.tar_dot(src)

    r = api.post("/local-sandbox", json={"server_names": ["filesystem", "git", "terminal"]})
    assert r.status_code == 201, r.text
    sid = r.json()["local_sandbox_id"]

    init = upload_and_initialize(api, sid, data)
    assert init == {"sandbox_id": sid, "status": "occupied",
                    "message": "Extracted archive to workspace"}

    out = dump(api, sid)
    dest = os.path.join(tmp_root, "out")
    names = treeutil.extract_data_filter(out, dest)
    assert names[0] == "."
    assert all(n == "." or n.startswith("./") for n in names)
    # The relative style has no directory entries, so only the dot style
    # carries directory mtimes through.
    with_dirs = style == "dot"
    assert treeutil.snapshot(dest, with_dirs) == treeutil.snapshot(src, with_dirs)

    r = api.delete(f"/local-sandbox/{sid}")
    assert r.status_code == 200
    assert r.json() == {"message": f"Local sandbox release started for {sid}: it will be "
                                   "released asynchronously in background."}
    assert api.get(f"/local-sandbox/{sid}").status_code == 404


def test_acquire_get_list_shapes(api, daemon):
    r = api.post("/local-sandbox", json={"server_names": ["filesystem", "git"]})
    assert r.status_code == 201
    acq = r.json()
    assert set(acq) == {"local_sandbox_id", "status", "benchmark", "servers", "message"}
    assert acq["status"] == "occupied"
    assert acq["benchmark"] is None
    assert acq["message"] == "Local sandbox environment acquired successfully"
    sid = acq["local_sandbox_id"]
    assert [s["server_name"] for s in acq["servers"]] == ["filesystem", "git"]
    for s in acq["servers"]:
        assert set(s) == {"server_name", "id", "mcp_server_url", "status", "benchmark",
                          "updated_at", "metadata", "auth_data", "tags"}
        assert s["id"] != sid
        assert s["mcp_server_url"] == f"{daemon.url}/{s['server_name']}/mcp/?local_sandbox_id={sid}"
        assert s["status"] == "occupied"
    info = api.get(f"/local-sandbox/{sid}").json()
    assert set(info) == {"local_sandbox_id", "created_at", "status", "benchmark", "servers"}
    assert info["servers"] == acq["servers"]
    listing = api.get("/local-sandbox").json()
    assert listing["total_count"] == 1
    assert listing["local_sandboxes"][0]["local_sandbox_id"] == sid


def test_all_servers_and_release_is_idempotent(api):
    r = api.post("/local-sandbox", json={"server_names": "ALL", "ttl_seconds": None})
    assert r.status_code == 201
    names = [s["server_name"] for s in r.json()["servers"]]
    assert len(names) == 16 and names[0] == "filesystem" and names[-1] == "playwright"
    sid = r.json()["local_sandbox_id"]
    assert api.delete(f"/local-sandbox/{sid}", params={"is_ttl": "false"}).status_code == 200
    assert api.delete(f"/local-sandbox/{sid}").status_code == 200
    assert api.get("/local-sandbox").json() == {"local_sandboxes": [], "total_count": 0}


def test_reset_returns_to_last_initialize(api, tmp_root):
    src = os.path.join(tmp_root, "src")
    os.makedirs(src)
    treeutil.make_tree(src)
    sid = api.post("/local-sandbox", json={"server_names": ["filesystem"]}).json()["local_sandbox_id"]
    upload_and_initialize(api, sid, treeutil.tar_dot(src))
    ws = os.path.join(tmp_root, "var", "workspaces", sid, "data")
    # an agent changes the workspace
    os.remove(os.path.join(ws, "hello.txt"))
    with open(os.path.join(ws, "new.txt"), "w") as f:
        f.write("agent output")
    r = api.post(f"/local-sandbox/{sid}/reset")
    assert r.status_code == 200, r.text
    dest = os.path.join(tmp_root, "out")
    treeutil.extract_data_filter(dump(api, sid), dest)
    assert treeutil.snapshot(dest) == treeutil.snapshot(src)


def test_reinitialize_overlays_and_dump_reflects_changes(api, tmp_root):
    sid = api.post("/local-sandbox", json={"server_names": ["filesystem"]}).json()["local_sandbox_id"]
    src = os.path.join(tmp_root, "src")
    os.makedirs(src)
    with open(os.path.join(src, "a.txt"), "w") as f:
        f.write("first")
    upload_and_initialize(api, sid, treeutil.tar_relative(src))
    os.remove(os.path.join(src, "a.txt"))
    with open(os.path.join(src, "b.txt"), "w") as f:
        f.write("second")
    upload_and_initialize(api, sid, treeutil.tar_relative(src))
    dest = os.path.join(tmp_root, "out")
    treeutil.extract_data_filter(dump(api, sid), dest)
    assert sorted(os.listdir(dest)) == ["a.txt", "b.txt"]
