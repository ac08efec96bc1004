"""Many nodes (docs/SCALE.md): a throwaway PostgreSQL (tests/pg/pgctl), three
`mcpbox serve --node N` on loopback ports sharing it, and nginx with the
shipped deploy/nginx/mcpbox.conf (node names replaced by those ports) in
front. Placement spread, MCP and signed URLs reaching the owner through the
router and through any node, the list across nodes, kill -9 of a node (its
ids answer 503 node N unavailable within 5 s, acquires go elsewhere) and its
restart (its sandboxes come back)."""
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from conftest import API_KEY, MCPBOX_BIN

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
NODES = 3
# Acquires in the spread test. The issue asks for 300; on this 2-core machine
# (shared by other jobs) an acquire of the ASan build takes 0.3 s (no servers)
# to 0.8 s (filesystem) with 6 in flight, so the default
# is 60 sandboxes without servers (20 a node) and MCPBOX_SCALE_ACQUIRES=300
# runs the full count.
ACQUIRES = int(os.environ.get("MCPBOX_SCALE_ACQUIRES", "60"))
CAPACITY = 200
AUTH = {"Authorization": "Bearer " + API_KEY}

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None and
                                not os.path.exists("/usr/sbin/nginx"),
                                reason="nginx is not installed (scripts/install-deps --test)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Node:
    def __init__(self, ordinal, root, db, public_url, port):
        self.ordinal = ordinal
        self.port = port
        self.data_dir = os.path.join(root, "node%d" % ordinal)
        self.log_path = self.data_dir + ".log"
        self.db = db
        self.public_url = public_url
        self.proc = None
        self.url = "http://127.0.0.1:%d" % port

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [MCPBOX_BIN, "serve", "--listen", "127.0.0.1:%d" % self.port, "--data-dir",
             self.data_dir, "--db", self.db, "--node", str(self.ordinal), "--capacity",
             str(CAPACITY), "--public-url", self.public_url],
            stdout=subprocess.PIPE, stderr=log,
            env=dict(os.environ, MCPBOX_API_KEY=API_KEY))
        log.close()
        line = self.proc.stdout.readline()
        assert b"serving on" in line, "node %d did not start: %r\n%s" % (
            self.ordinal, line, self.log()[-3000:])

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            rc = self.proc.wait(timeout=30)
            assert rc == 0, "node %d exited %d:\n%s" % (self.ordinal, rc, self.log()[-4000:])


class Cluster:
    """PostgreSQL, n nodes and (router=True, n = NODES) nginx; also used by
    bench/scale.py."""

    def __init__(self, root, n=NODES, router=True):
        self.root = root
        out = subprocess.run([os.path.join(ROOT, "tests", "pg", "pgctl"), "start"],
                             check=True, capture_output=True, text=True).stdout.split()
        self.pg_dir, self.db = out[0], out[1]
        self.router_port = free_port()
        self.router = "http://127.0.0.1:%d" % self.router_port
        self.with_router = router
        if not router:
            self.router = "http://127.0.0.1:%d" % self.router_port  # node 0 listens there
        ports = [self.router_port if not router and i == 0 else free_port() for i in range(n)]
        self.nodes = [Node(i, root, self.db, self.router, ports[i]) for i in range(n)]
        self.nginx = None

    def start(self):
        for n in self.nodes:
            n.start()
        if self.with_router:
            self.start_router()

    def start_router(self):
        conf = open(os.path.join(ROOT, "deploy", "nginx", "mcpbox.conf")).read()
        for n in self.nodes:
            conf = conf.replace("mcpbox-%d.mcpbox:8080" % n.ordinal, "127.0.0.1:%d" % n.port)
        conf = conf.replace("listen 8080;", "listen 127.0.0.1:%d;" % self.router_port)
        assert "mcpbox.mcpbox" not in conf
        ndir = os.path.join(self.root, "nginx")
        os.makedirs(ndir, exist_ok=True)
        with open(os.path.join(ndir, "mcpbox.conf"), "w") as f:
            f.write(conf)
        with open(os.path.join(ndir, "nginx.conf"), "w") as f:
            f.write("daemon off;\nworker_processes 1;\npid %s/nginx.pid;\n"
                    "error_log %s/error.log warn;\nevents { worker_connections 1024; }\n"
                    "http {\n access_log off;\n client_body_temp_path %s/tmp;\n"
                    " proxy_temp_path %s/tmp;\n include %s/mcpbox.conf;\n}\n"
                    % (ndir, ndir, ndir, ndir, ndir))
        # nginx's workers run as nobody by default when started by root
        os.makedirs(os.path.join(ndir, "tmp"), exist_ok=True)
        os.chmod(ndir, 0o777)
        os.chmod(os.path.join(ndir, "tmp"), 0o777)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.nginx = subprocess.Popen([nginx, "-p", ndir, "-c", os.path.join(ndir, "nginx.conf")],
                                      stderr=subprocess.PIPE)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                if httpx.get(self.router + "/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.nginx.poll() is None, self.nginx.stderr.read().decode()
            time.sleep(0.1)
        raise AssertionError("nginx did not come up")

    def client(self, url=None):
        return httpx.Client(base_url=url or self.router, headers=AUTH, timeout=120)

    def close(self):
        if self.nginx:
            self.nginx.send_signal(signal.SIGTERM)
            self.nginx.wait(timeout=10)
        errors = []
        for n in self.nodes:
            try:
                n.stop()
            except AssertionError as e:
                errors.append(str(e))
            subprocess.run([MCPBOX_BIN, "sandbox", "sweep", n.data_dir])
        subprocess.run([os.path.join(ROOT, "tests", "pg", "pgctl"), "stop", self.pg_dir])
        assert not errors, "\n".join(errors)


@pytest.fixture(scope="module")
def cluster():
    root = tempfile.mkdtemp(prefix="mcpbox-scale-")
    c = Cluster(root)
    try:
        c.start()
        yield c
    finally:
        c.close()
        shutil.rmtree(root, ignore_errors=True)


def owner(sid):
    return int(sid[:2], 16)


def acquire(c, servers=("filesystem",)):
    r = c.post("/local-sandbox", json={"server_names": list(servers)})
    assert r.status_code == 201, r.text
    return r.json()


def mcp_post(url, sid, body, session=None):
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = "2025-06-18"
    r = httpx.post(url, json=body, headers=headers, timeout=60)
    assert r.status_code in (200, 202), r.text
    if r.status_code == 202:
        return r, None
    text = r.text
    if r.headers["content-type"].startswith("text/event-stream"):
        text = "".join(l[5:].strip() for l in text.splitlines() if l.startswith("data:"))
    return r, json.loads(text)


def mcp_session(url, sid):
    r, msg = mcp_post(url, sid, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "scale", "version": "1"}}})
    assert msg["result"]["serverInfo"]
    session = r.headers["mcp-session-id"]
    mcp_post(url, sid, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


def mcp_tool(url, sid, session, name, args, rid=2):
    _, msg = mcp_post(url, sid, {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                 "params": {"name": name, "arguments": args}}, session)
    return msg["result"]


def tar_of(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def one_per_node(c, cl):
    """Acquires until each node owns one sandbox; releases the extras."""
    got, extra = {}, []
    for _ in range(30):
        sb = acquire(c)
        o = owner(sb["local_sandbox_id"])
        if o in got:
            extra.append(sb)
        else:
            got[o] = sb
        if len(got) == NODES:
            break
    for sb in extra:
        assert c.delete("/local-sandbox/" + sb["local_sandbox_id"]).status_code == 200
    assert sorted(got) == list(range(NODES)), got
    return got


def test_spread_and_list(cluster):
    """ACQUIRES acquires through the router (round-robin to the nodes, each
    placing by load) land within +-10% of each node's share of capacity; the
    list, read from the database by whichever node answers, has them all."""
    with cluster.client() as c:
        before = {sb["local_sandbox_id"] for sb in c.get("/local-sandbox").json()["local_sandboxes"]}

        def one(_):
            with cluster.client() as cc:
                return acquire(cc, servers=())["local_sandbox_id"]

        t0 = time.time()
        with ThreadPoolExecutor(6) as ex:
            ids = list(ex.map(one, range(ACQUIRES)))
        took = time.time() - t0
        counts = [sum(1 for i in ids if owner(i) == n) for n in range(NODES)]
        print("spread of %d acquires in %.1f s: %s" % (ACQUIRES, took, counts))
        share = ACQUIRES / NODES
        # +-10% of the share (the bound: +-10 at 300), never below
        # +-2. Every placement reads the loads from the database and adds
        # the placing node's own acquires the read may miss (cluster.c), so
        # what can skew it is only another node's acquire placed in the
        # milliseconds before its row is written; measured: at most 1 off in
        # 14 runs of 60 (6 with the CPU loaded 2x over) and 100/100/100
        # at 300. (With the loads copied once a second, every node sent its
        # next acquires to whichever node looked emptiest: 3 off at 60.)
        slack = max(0.10 * share, 2)
        for n in range(NODES):
            assert abs(counts[n] - share) <= slack, counts
        # every id is a UUIDv4
        for i in ids:
            assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", i)
        # the router sends every id's REST path, MCP URL and blob URL to its
        # owner directly (X-Mcpbox-Node: the upstream nginx used)
        port = {n.ordinal: "127.0.0.1:%d" % n.port for n in cluster.nodes}
        for i in ids:
            for method, path in (("GET", "/local-sandbox/" + i),
                                 ("POST", "/filesystem/mcp/?local_sandbox_id=" + i),
                                 ("GET", "/blobs/%s/dump.tar.gz?expires=1&signature=00" % i),
                                 ("POST", "/sandbox/local_dev/%s/upload-url" % i)):
                r = c.request(method, path, json={} if method == "POST" else None)
                assert r.headers.get("x-mcpbox-node") == port[owner(i)], (path, r.headers)
        for url in [cluster.router] + [n.url for n in cluster.nodes]:

            with cluster.client(url) as cc:
                body = cc.get("/local-sandbox").json()
                listed = {sb["local_sandbox_id"] for sb in body["local_sandboxes"]}
                assert listed - before == set(ids), url
                assert body["total_count"] == len(listed)

        def release(sid):
            with cluster.client() as cc:
                return cc.delete("/local-sandbox/" + sid).status_code

        with ThreadPoolExecutor(6) as ex:
            assert set(ex.map(release, ids)) == {200}
        assert not ({sb["local_sandbox_id"] for sb in c.get("/local-sandbox").json()["local_sandboxes"]}
                    & set(ids))


def test_klavis_flow_reaches_the_owner(cluster):
    """One sandbox on each node: upload (signed PUT), initialize, MCP calls,
    dump (signed GET) and release through the router; the same MCP URL sent
    to any node directly, and the signed URLs sent to a node that is not the
    owner, reach the owner too."""
    with cluster.client() as c:
        got = one_per_node(c, cluster)
        for o, sb in sorted(got.items()):
            sid = sb["local_sandbox_id"]
            r = c.post("/local-sandbox/%s/upload-url" % sid)
            assert r.status_code == 200, r.text
            up = r.json()["upload_url"]
            assert up.startswith(cluster.router + "/blobs/" + sid)
            data = tar_of({"hello.txt": b"node %d\n" % o})
            # the signed PUT sent to a node that is not the owner: streamed up to it
            other = cluster.nodes[(o + 1) % NODES]
            assert httpx.put(up.replace(cluster.router, other.url), content=data).status_code == 200
            assert c.post("/local-sandbox/%s/initialize" % sid).status_code == 200
            url = sb["servers"][0]["mcp_server_url"]
            assert url.startswith(cluster.router + "/filesystem/mcp")
            session = mcp_session(url, sid)
            res = mcp_tool(url, sid, session, "read_text_file", {"path": "/data/hello.txt"})
            assert res["content"][0]["text"] == "node %d\n" % o, res
            res = mcp_tool(url, sid, session, "write_file",
                           {"path": "/data/out.txt", "content": "written via router"}, 3)
            assert not res.get("isError"), res
            # any node forwards to the owner
            for n in cluster.nodes:
                direct = url.replace(cluster.router, n.url)
                s2 = mcp_session(direct, sid)
                res = mcp_tool(direct, sid, s2, "read_text_file", {"path": "/data/out.txt"}, 4)
                assert res["content"][0]["text"] == "written via router"
            d = c.get("/local-sandbox/%s/dump" % sid)
            assert d.status_code == 200, d.text
            tgz = httpx.get(d.json()["download_url"].replace(cluster.router, other.url))
            assert tgz.status_code == 200
            with tarfile.open(fileobj=io.BytesIO(tgz.content)) as t:
                names = t.getnames()
            assert "./hello.txt" in names and "./out.txt" in names
        for sb in got.values():
            assert c.delete("/local-sandbox/" + sb["local_sandbox_id"]).status_code == 200


def test_sse_stream_is_not_buffered(cluster):
    """A standalone GET SSE stream through the router and through a node that
    is not the owner: its head arrives at once, while the stream stays open."""
    with cluster.client() as c:
        got = one_per_node(c, cluster)
        sb = got[1]
        sid = sb["local_sandbox_id"]
        url = sb["servers"][0]["mcp_server_url"]
        session = mcp_session(url, sid)
        for base in (cluster.router, cluster.nodes[0].url):
            t0 = time.time()
            with httpx.stream("GET", url.replace(cluster.router, base),
                              headers={"Accept": "text/event-stream", "Mcp-Session-Id": session,
                                       "MCP-Protocol-Version": "2025-06-18"},
                              timeout=httpx.Timeout(10, read=2)) as r:
                assert r.status_code == 200, r.read()
                assert r.headers["content-type"].startswith("text/event-stream")
                assert time.time() - t0 < 2
        for sb in got.values():
            c.delete("/local-sandbox/" + sb["local_sandbox_id"])


def test_node_failure_and_return(cluster):
    """kill -9 node 1: its ids answer 503 node 1 unavailable within 5 s
    (REST and MCP, through the router and through another node), acquires go
    to the others; restarted, it heartbeats again and its sandboxes answer."""
    with cluster.client() as c:
        got = one_per_node(c, cluster)
        victim = cluster.nodes[1]
        sid = got[1]["local_sandbox_id"]
        url = got[1]["servers"][0]["mcp_server_url"]
        victim.kill9()
        t0 = time.time()
        while True:
            r = c.get("/local-sandbox/" + sid)
            if r.status_code == 503:
                break
            assert time.time() - t0 < 5, r.text
            time.sleep(0.1)
        took = time.time() - t0
        assert r.json() == {"detail": "node 1 unavailable"}
        print("node 1's ids answer 503 %.2f s after kill -9" % took)
        with cluster.client(cluster.nodes[2].url) as c2:
            r = c2.get("/local-sandbox/" + sid)
            assert r.status_code == 503 and r.json() == {"detail": "node 1 unavailable"}
            # a client that reaches a node directly cannot pass for a node: a
            # forwarding mark that does not carry the nodes' MAC is ignored,
            # so node 2 still routes the request to node 1 (down), for reads
            # and for a release alike (which would otherwise mark node 1's
            # sandbox released while its processes run on)
            now = int(time.time())
            forged = ["0", "1", "0 %d %s" % (now, "0" * 64), "1 %d %s" % (now, "ab" * 32),
                      "0 %d %s" % (now - 3600, "0" * 64), "0 %d %s extra" % (now, "0" * 64),
                      "0 99999999999999999999 " + "0" * 64, "x" * 200]
            for mark in forged:
                r = c2.get("/local-sandbox/" + sid, headers={"X-Mcpbox-Forwarded": mark})
                assert r.status_code == 503 and r.json() == {"detail": "node 1 unavailable"}, \
                    (mark, r.text)
            r = c2.delete("/local-sandbox/" + sid, headers={"X-Mcpbox-Forwarded": "0"})
            assert r.status_code == 503 and r.json() == {"detail": "node 1 unavailable"}, r.text
        # the router drops a client's own forwarding mark: the node that gets
        # the request still knows it is node 1's
        r = c.get("/local-sandbox/" + sid, headers={"X-Mcpbox-Forwarded": "0"})
        assert r.status_code == 503 and r.json() == {"detail": "node 1 unavailable"}, r.text
        r = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                       headers={"Accept": "application/json, text/event-stream"}, timeout=10)
        assert r.status_code == 503 and r.json() == {"detail": "node 1 unavailable"}
        # the others still serve theirs, and acquires avoid node 1
        assert c.get("/local-sandbox/" + got[0]["local_sandbox_id"]).status_code == 200
        new = [acquire(c)["local_sandbox_id"] for _ in range(6)]
        assert all(owner(i) != 1 for i in new), new
        # the list still reads every node's sandboxes from the database
        listed = {sb["local_sandbox_id"] for sb in c.get("/local-sandbox").json()["local_sandboxes"]}
        assert sid in listed
        # back: the node re-adopts its sandboxes
        victim.start()
        t0 = time.time()
        while c.get("/local-sandbox/" + sid).status_code != 200:
            assert time.time() - t0 < 30
            time.sleep(0.2)
        session = mcp_session(url, sid)
        res = mcp_tool(url, sid, session, "list_allowed_directories", {})
        assert "/data" in res["content"][0]["text"]
        # and takes new sandboxes again: it heartbeat when it started, and
        # every placement reads the nodes afresh
        more = [acquire(c)["local_sandbox_id"] for _ in range(6)]
        assert any(owner(i) == 1 for i in more), more
        for i in new + more + [sb["local_sandbox_id"] for sb in got.values()]:
            assert c.delete("/local-sandbox/" + i).status_code == 200


def test_chunked_upload_through_a_node(cluster):
    """A signed PUT whose body comes chunked (no Content-Length), sent to a
    node that is not the owner: re-chunked up to the owner, extracted whole."""
    with cluster.client() as c:
        got = one_per_node(c, cluster)
        sb = got[2]
        sid = sb["local_sandbox_id"]
        up = c.post("/local-sandbox/%s/upload-url" % sid).json()["upload_url"]
        big = os.urandom(300 * 1024)
        data = tar_of({"big.bin": big, "small.txt": b"x"})

        def pieces():
            for i in range(0, len(data), 7000):
                yield data[i:i + 7000]

        r = httpx.put(up.replace(cluster.router, cluster.nodes[0].url), content=pieces())
        assert r.status_code == 200, r.text
        assert c.post("/local-sandbox/%s/initialize" % sid).status_code == 200
        d = c.get("/local-sandbox/%s/dump" % sid).json()
        tgz = httpx.get(d["download_url"].replace(cluster.router, cluster.nodes[1].url))
        with tarfile.open(fileobj=io.BytesIO(tgz.content)) as t:
            assert t.extractfile("./big.bin").read() == big
        for sb in got.values():
            assert c.delete("/local-sandbox/" + sb["local_sandbox_id"]).status_code == 200
