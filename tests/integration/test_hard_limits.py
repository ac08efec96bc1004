"""Resource limits a client or a tenant cannot get around (issue 12, items
3-8): bodies to wrong MCP URLs are never held, slow or half-open connections
cannot lock others out, one tenant cannot evict another's MCP sessions, one
upload per sandbox at a time, per-key quotas answer 429 with Retry-After, and
a dump of sparse files is refused fast without blocking other sandboxes.

Loopback only; every test is bounded in time."""
import os
import socket
import threading
import time
import uuid

import httpx
import pytest

from conftest import API_KEY, Daemon


def vm_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s for %d" % (field, pid))


def host_port(daemon):
    host, port = daemon.url.split("//", 1)[1].rsplit(":", 1)
    return host, int(port)


def acquire(api, servers, **body):
    r = api.post("/local-sandbox", json={"server_names": servers, **body})
    assert r.status_code == 201, r.text
    return r.json()


def raw_request(addr, head, body_len=0, chunk=1 << 20, source="127.0.0.1", timeout=20):
    """Sends a request whose body is body_len zero bytes; returns the status
    line's code (or None when the server closed before answering) and how
    many body bytes went out before the server stopped reading."""
    s = socket.create_connection(addr, timeout=timeout, source_address=(source, 0))
    sent = 0
    try:
        s.sendall(head.encode())
        buf = b"\0" * chunk
        while sent < body_len:
            n = min(chunk, body_len - sent)
            try:
                s.sendall(buf[:n])
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += n
        data = b""
        try:
            while b"\r\n" not in data:
                got = s.recv(4096)
                if not got:
                    break
                data += got
        except (ConnectionResetError, socket.timeout):
            pass
    finally:
        s.close()
    code = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else None
    return code, sent


# ------------------------------------------------------------------ item 4

def test_mcp_bodies_to_wrong_urls_are_not_held(daemon, api):
    """8 x 40 MiB POSTs to an MCP URL of no sandbox, and to a server the
    sandbox did not acquire, are answered 404 from their headers: the
    daemon's peak memory stays flat (it grew by 336 MiB when it buffered
    them)."""
    sb = acquire(api, ["filesystem"])
    sid = sb["local_sandbox_id"]
    addr = host_port(daemon)
    pid = daemon.proc.pid
    hwm0 = vm_kib(pid, "VmHWM")
    size = 40 << 20
    urls = ["/filesystem/mcp/?local_sandbox_id=%s" % uuid.uuid4(),
            "/git/mcp/?local_sandbox_id=%s" % sid]
    results = []

    def post(i):
        url = urls[i % 2]
        head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n"
                % (url, size))
        results.append(raw_request(addr, head, size))

    ts = [threading.Thread(target=post, args=(i,)) for i in range(8)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert time.time() - t0 < 60
    assert len(results) == 8
    grew = vm_kib(pid, "VmHWM") - hwm0
    assert grew < 48 << 10, "daemon peak RSS grew by %d KiB" % grew
    # answered (404) or cut off, but never read to the end
    for code, sent in results:
        assert code in (404, None), results
        assert sent < size, results
    # the gateway still works for the right URL
    r = httpx.post(daemon.url + "/filesystem/mcp/?local_sandbox_id=" + sid,
                   json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "t", "version": "1"}}},
                   headers={"Accept": "application/json, text/event-stream"}, timeout=30)
    assert r.status_code == 200, r.text


# ------------------------------------------------------------------ item 3

def workspace(daemon, sid):
    return os.path.join(daemon.data_dir, "workspaces", sid, "data")


def test_sparse_dumps_are_bounded_and_hold_no_shared_lock(daemon, api):
    """A sparse file costs no quota but a dump reads it in full: dumps are
    bounded by the workspace quota (1G here) measured as apparent size, and
    refused at once (507) beyond it. A long dump holds only its own
    sandbox's lock: another sandbox's dump and release go ahead meanwhile."""
    a, b, c = (acquire(api, ["filesystem"])["local_sandbox_id"] for _ in range(3))
    sparse = os.path.join(workspace(daemon, a), "sparse")
    with open(sparse, "wb") as f:
        f.truncate(6 << 30)
    for size in (6 << 30, (1 << 63) - 1):  # 6 GiB, then the largest file size there is
        os.truncate(sparse, size)
        t0 = time.time()
        r = api.get("/local-sandbox/%s/dump" % a)
        took = time.time() - t0
        assert r.status_code == 507, r.text
        assert "apparent size" in r.json()["detail"] and "quota" in r.json()["detail"]
        assert took < 2, "refusing took %.1f s" % took
    assert not os.path.exists(os.path.join(daemon.data_dir, "blobs", a, "dump.tar.gz.part"))

    # Within the quota a dump of zeros runs a while; meanwhile the others
    # must not wait for it.
    os.truncate(sparse, 1000 << 20)
    res = {}

    def dump_a():
        res["a"] = api.get("/local-sandbox/%s/dump" % a, timeout=120)
        res["a_end"] = time.time()

    t = threading.Thread(target=dump_a)
    t.start()
    time.sleep(0.3)
    with daemon.client() as other:
        t0 = time.time()
        rb = other.get("/local-sandbox/%s/dump" % b)
        rc = other.delete("/local-sandbox/%s" % c)
        others_end = time.time()
    t.join(120)
    assert rb.status_code == 200, rb.text
    assert rc.status_code == 200, rc.text
    assert res["a"].status_code == 200, res["a"].text
    assert others_end - t0 < 2, "the others took %.1f s" % (others_end - t0)
    assert others_end < res["a_end"], "A's dump ended first: nothing was shown"
