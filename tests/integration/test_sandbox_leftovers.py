"""Leftovers of a daemon killed mid-transfer (issue 12 item 13): kill -9
during an initialize leaves a `.mcpbox-extract-*` staging tree on the
workspace's tmpfs (charged to its quota), kill -9 during an upload leaves
`upload.tar.gz.part-*`; both are removed when the sandbox is adopted at the
next start, and a reset removes stale ones too."""
import glob
import io
import os
import socket
import tarfile
import threading
import time
import urllib.parse

import httpx

from conftest import Daemon


def many_files_tar(n=40000):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tf:
        for i in range(n):
            data = (b"%d\n" % i) * 40
            ti = tarfile.TarInfo("d%03d/f%05d.txt" % (i % 200, i))
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def wait_for(pattern, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        hits = glob.glob(pattern)
        if hits:
            return hits
        time.sleep(0.002)
    return []


def acquire(api):
    r = api.post("/local-sandbox", json={"server_names": ["filesystem"], "ttl_seconds": 3600})
    assert r.status_code in (200, 201), r.text
    return r.json()["local_sandbox_id"]


def test_kill9_during_initialize_and_upload_then_adopt_cleans(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var")).start()
    try:
        with d.client() as api:
            sid = acquire(api)
            up = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
            assert httpx.put(up, content=many_files_tar(), timeout=120).status_code == 200
            volume = os.path.join(d.data_dir, "workspaces", sid)
            blobs = os.path.join(d.data_dir, "blobs", sid)

            # an initialize, killed while it extracts
            t = threading.Thread(target=lambda: api.post(f"/local-sandbox/{sid}/initialize"),
                                 daemon=True)
            t.start()
            stages = wait_for(os.path.join(volume, ".mcpbox-extract-*"))
            assert stages, "no staging directory seen during initialize"
            d.kill()
            t.join(10)

        # an upload, killed while its body arrives
        d.start()
        with d.client() as api:
            up = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
        u = urllib.parse.urlsplit(up)
        s = socket.create_connection((u.hostname, u.port))
        s.sendall(("PUT %s?%s HTTP/1.1\r\nHost: %s\r\nContent-Length: 10000000\r\n\r\n"
                   % (u.path, u.query, u.netloc)).encode() + b"\x1f\x8b" + b"x" * 300000)
        parts = wait_for(os.path.join(blobs, "upload.tar.gz.part-*"))
        assert parts, "no partial upload seen"
        d.kill()
        s.close()
        # the staging tree of the first kill is gone already (adopted once)
        assert not glob.glob(os.path.join(volume, ".mcpbox-extract-*"))
        assert os.path.exists(parts[0])

        d.start()
        assert not glob.glob(os.path.join(blobs, "*.part*")), os.listdir(blobs)
        assert "leftover" in d.log()
        with d.client() as api:
            # the sandbox is whole: initialize from the kept upload works
            r = api.post(f"/local-sandbox/{sid}/initialize")
            assert r.status_code == 200, r.text
            assert os.path.exists(os.path.join(volume, "data", "d007", "f00007.txt"))
            assert not glob.glob(os.path.join(volume, ".mcpbox-extract-*"))
    finally:
        d.stop()


def test_reset_removes_stale_leftovers_and_keeps_fresh_parts(daemon, api):
    sid = acquire(api)
    volume = os.path.join(daemon.data_dir, "workspaces", sid)
    blobs = os.path.join(daemon.data_dir, "blobs", sid)
    os.makedirs(blobs, exist_ok=True)
    # a staging tree as an extraction killed long ago leaves it (deep, read-only dirs)
    stage = os.path.join(volume, ".mcpbox-extract-0123456789abcdef")
    deep = os.path.join(stage, *["x"] * 50)
    os.makedirs(deep)
    with open(os.path.join(deep, "big"), "wb") as f:
        f.write(b"\0" * (1 << 20))
    os.chmod(os.path.join(stage, "x"), 0o500)
    stale = os.path.join(blobs, "upload.tar.gz.part-deadbeef")
    fresh = os.path.join(blobs, "upload.tar.gz.part-cafebabe")
    for p in (stale, fresh):
        with open(p, "wb") as f:
            f.write(b"x" * 1000)
    old = time.time() - 3600
    os.utime(stale, (old, old))
    r = api.post(f"/local-sandbox/{sid}/reset")
    assert r.status_code == 200, r.text
    assert not os.path.exists(stage)
    assert not os.path.exists(stale)
    assert os.path.exists(fresh)  # could be an upload about to be committed
