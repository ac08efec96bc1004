"""Request shapes of the three benchmark clients (shared/reference/benchmarks.md §5),
replayed as each client sends them."""
import io
import os
import tarfile

import httpx

import treeutil

ATLAS_SERVERS = ["filesystem", "git", "terminal", "desktop-commander", "arxiv",
                 "code-executor", "code-runner", "localmemory"]


def test_mcp_mark_client(api, tmp_root):
    # src/klavis_util.py: acquire one service, arcname='.', upload, dump, release
    r = api.post("/local-sandbox", json={"server_names": ["filesystem"],
                                         "benchmark": "MCP_Mark", "ttl_seconds": 7200})
    assert r.status_code == 201, r.text
    body = r.json()
    sid = body["local_sandbox_id"]
    assert body["benchmark"] == "MCP_Mark"
    assert body["servers"][0]["benchmark"] == "MCP_Mark"
    src = os.path.join(tmp_root, "task")
    os.makedirs(os.path.join(src, "empty"))
    with open(os.path.join(src, "f.txt"), "w") as f:
        f.write("x")
    up = api.post(f"/local-sandbox/{sid}/upload-url").json()
    assert httpx.put(up["upload_url"], content=treeutil.tar_dot(src),
                     headers={"Content-Type": "application/gzip"}).status_code == 200
    assert api.post(f"/local-sandbox/{sid}/initialize").status_code == 200
    url = api.get(f"/local-sandbox/{sid}/dump").json()["download_url"]
    with tarfile.open(fileobj=io.BytesIO(httpx.get(url).content), mode="r:gz") as tf:
        tf.extractall(os.path.join(tmp_root, "out"))  # MCP-Mark extracts without a filter
    assert os.path.isdir(os.path.join(tmp_root, "out", "empty"))
    assert api.delete(f"/local-sandbox/{sid}").status_code == 200


def test_mcp_atlas_client(api, daemon):
    # klavis_sandbox_client.py: 8 servers, benchmark MCP_Atlas, no ttl_seconds
    r = api.post("/local-sandbox", json={"server_names": ATLAS_SERVERS, "benchmark": "MCP_Atlas"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert [s["server_name"] for s in body["servers"]] == ATLAS_SERVERS
    urls = {s["server_name"]: s["mcp_server_url"] for s in body["servers"]}
    assert urls["terminal"].startswith(daemon.url + "/terminal/mcp/?local_sandbox_id=")
    # default TTL of 7200 s applies: the sandbox is there and has a deadline
    import sqlite3
    db = sqlite3.connect(os.path.join(daemon.data_dir, "mcpbox.db"))
    ttl, deadline, created = db.execute(
        "SELECT ttl_seconds, deadline, created_at FROM sandboxes WHERE id=?",
        (body["local_sandbox_id"],)).fetchone()
    db.close()
    assert ttl == 7200 and abs(deadline - created - 7200) < 1
    assert api.delete(f"/local-sandbox/{body['local_sandbox_id']}").status_code == 200


def test_toolathlon_local_dev_client(api, tmp_root, daemon):
    # utils/klavis_sandbox.py: POST /sandbox/local_dev {"benchmark":"Toolathlon"}
    r = api.post("/sandbox/local_dev", json={"benchmark": "Toolathlon"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert set(body) == {"sandbox_id", "server_name", "server_urls", "status", "message"}
    assert body["server_name"] == "local_dev"
    sid = body["sandbox_id"]
    for name in ("filesystem", "git", "terminal", "code-executor", "pdf-tools", "excel"):
        assert body["server_urls"][name] == f"{daemon.url}/{name}/mcp/?local_sandbox_id={sid}"
    # files only, relative names (bills.tar.gz style, with macOS xattr pax keywords)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tf:
        data = "收据 one".encode()
        ti = tarfile.TarInfo("bills/收据 1.pdf")
        ti.size = len(data)
        ti.pax_headers = {"LIBARCHIVE.xattr.com.apple.quarantine": "MDA4MTs=",
                          "SCHILY.xattr.com.apple.provenance": "AQAA"}
        tf.addfile(ti, io.BytesIO(data))
    up = api.post(f"/sandbox/local_dev/{sid}/upload-url").json()
    assert httpx.put(up["upload_url"], content=buf.getvalue()).status_code == 200
    r = api.post(f"/sandbox/local_dev/{sid}/initialize")
    assert r.status_code == 200, r.text
    assert r.json()["sandbox_id"] == sid
    got = api.get(f"/sandbox/local_dev/{sid}").json()
    assert got["sandbox_id"] == sid and got["server_name"] == "local_dev"
    url = api.get(f"/sandbox/local_dev/{sid}/dump").json()["download_url"]
    dest = os.path.join(tmp_root, "out")
    treeutil.extract_data_filter(httpx.get(url).content, dest)
    with open(os.path.join(dest, "bills", "收据 1.pdf"), "rb") as f:
        assert f.read() == data
    r = api.delete(f"/sandbox/local_dev/{sid}")
    assert r.status_code == 200 and r.json()["status"] == "idle"
    assert api.get(f"/local-sandbox/{sid}").status_code == 404
