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


# ------------------------------------------------------------------ item 7

def start_put(daemon, url, length, first=1 << 20):
    """Opens a PUT of `length` bytes to the signed URL and sends `first` of
    them; returns the socket (the rest is sent by finish_put)."""
    path = url.split(daemon.url, 1)[1]
    s = socket.create_connection(host_port(daemon), timeout=30)
    s.sendall(("PUT %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/gzip\r\n"
               "Content-Length: %d\r\n\r\n" % (path, length)).encode())
    s.sendall(b"\0" * first)
    return s


def finish_put(s, left):
    chunk = b"\0" * (1 << 20)
    while left > 0:
        n = min(left, len(chunk))
        s.sendall(chunk[:n])
        left -= n
    data = b""
    while b"\r\n\r\n" not in data:
        got = s.recv(65536)
        if not got:
            break
        data += got
    s.close()
    return int(data.split(b" ", 2)[1])


def part_files(daemon, sid):
    d = os.path.join(daemon.data_dir, "blobs", sid)
    return [n for n in os.listdir(d) if ".part" in n] if os.path.isdir(d) else []


def test_one_upload_per_sandbox_at_a_time(daemon, api):
    sid = acquire(api, ["filesystem"])["local_sandbox_id"]
    url = api.post("/local-sandbox/%s/upload-url" % sid).json()["upload_url"]
    size = 48 << 20
    first = start_put(daemon, url, size)
    deadline = time.time() + 10
    while not part_files(daemon, sid) and time.time() < deadline:
        time.sleep(0.05)
    assert len(part_files(daemon, sid)) == 1
    # 5 more PUTs to the same URL while the first is in flight: each is
    # refused with 409, none writes a file
    for _ in range(5):
        r = httpx.put(url, content=b"\0" * (4 << 20), timeout=30)
        assert r.status_code == 409, r.text
        assert "one upload per sandbox at a time" in r.json()["detail"]
        assert len(part_files(daemon, sid)) == 1
    assert finish_put(first, size - (1 << 20)) == 200
    assert part_files(daemon, sid) == []
    # once it is done, the next upload is taken
    r = httpx.put(url, content=b"\0" * 1024, timeout=30)
    assert r.status_code == 200, r.text


# ------------------------------------------------------------------ item 8

def new_key(daemon, owner):
    out = __import__("subprocess").run(
        [daemon_bin(), "keys", "create", "--owner", owner, *daemon.store_args],
        capture_output=True, check=True)
    return out.stdout.decode().strip()


def daemon_bin():
    from conftest import MCPBOX_BIN
    return MCPBOX_BIN


@pytest.fixture
def quota_daemon(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var"),
               ["--key-max-sandboxes", "2", "--key-max-acquiring", "1",
                "--key-max-upload", "10M"]).start()
    yield d
    d.stop()


def test_per_key_quotas(quota_daemon):
    d = quota_daemon
    other_key = new_key(d, "other-tenant")
    with d.client() as api, d.client(other_key) as other:
        # live sandboxes: 2 per owner, then 429 with Retry-After
        sids = [acquire(api, ["filesystem"])["local_sandbox_id"] for _ in range(2)]
        r = api.post("/local-sandbox", json={"server_names": ["filesystem"]})
        assert r.status_code == 429, r.text
        assert int(r.headers["Retry-After"]) >= 1
        assert "live sandboxes" in r.json()["detail"]
        # another owner is not affected
        osid = acquire(other, ["filesystem"])["local_sandbox_id"]

        # upload bytes in flight: 6M + 6M > 10M for one owner
        u1 = api.post("/local-sandbox/%s/upload-url" % sids[0]).json()["upload_url"]
        u2 = api.post("/local-sandbox/%s/upload-url" % sids[1]).json()["upload_url"]
        uo = other.post("/local-sandbox/%s/upload-url" % osid).json()["upload_url"]
        s = start_put(d, u1, 6 << 20)
        time.sleep(0.2)
        r = httpx.put(u2, content=b"\0" * (6 << 20), timeout=30)
        assert r.status_code == 429, r.text
        assert "Retry-After" in r.headers and "upload" in r.json()["detail"].lower()
        r = httpx.put(uo, content=b"\0" * (6 << 20), timeout=30)
        assert r.status_code == 200, r.text
        assert finish_put(s, 5 << 20) == 200
        r = httpx.put(u2, content=b"\0" * (6 << 20), timeout=30)
        assert r.status_code == 200, r.text

        # after a release there is room again
        assert api.delete("/local-sandbox/%s" % sids.pop()).status_code == 200
        sids.append(acquire(api, ["filesystem"])["local_sandbox_id"])
        assert api.delete("/local-sandbox/%s" % sids.pop()).status_code == 200

        # acquires in progress: 1 per owner; of 4 at once, the extra ones get 429
        codes = []

        def one():
            with d.client() as c:
                r = c.post("/local-sandbox", json={"server_names": ["filesystem"]})
                codes.append((r.status_code, r.headers.get("Retry-After"), r.text))
                if r.status_code == 201:
                    c.delete("/local-sandbox/%s" % r.json()["local_sandbox_id"])

        ts = [threading.Thread(target=one) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert any(c == 201 for c, _, _ in codes), codes
        busy = [c for c in codes if c[0] == 429]
        assert busy and all(ra == "1" and "in progress" in t for _, ra, t in busy), codes


# ------------------------------------------------------------------ item 6

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def open_session(mcp_url):
    r = httpx.post(mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "t", "version": "1"}}},
                   headers=MCP_HEADERS, timeout=30)
    assert r.status_code == 200, r.text
    return r.headers["Mcp-Session-Id"]


def session_alive(mcp_url, sid):
    r = httpx.post(mcp_url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                   headers=dict(MCP_HEADERS, **{"Mcp-Session-Id": sid,
                                                "MCP-Protocol-Version": "2025-06-18"}),
                   timeout=30)
    assert r.status_code in (200, 404), r.text
    return r.status_code == 200


@pytest.fixture
def session_daemon(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var"),
               ["--max-sessions", "7", "--max-sessions-per-sandbox", "3",
                "--max-sessions-per-key", "4"]).start()
    yield d
    d.stop()


def test_sessions_capped_per_sandbox_and_key_never_evicting_other_tenants(session_daemon):
    d = session_daemon
    key_b = new_key(d, "tenant-b")
    with d.client() as a, d.client(key_b) as b:
        a1 = acquire(a, ["filesystem"])["servers"][0]["mcp_server_url"]
        a2 = acquire(a, ["filesystem"])["servers"][0]["mcp_server_url"]
        b1 = acquire(b, ["filesystem"])["servers"][0]["mcp_server_url"]
        b2 = acquire(b, ["filesystem"])["servers"][0]["mcp_server_url"]
    tenant_b = [(b1, open_session(b1)), (b1, open_session(b1)), (b2, open_session(b2))]

    # per sandbox: a 4th session of a1 evicts a1's least recently used one
    s_a1 = [open_session(a1) for _ in range(3)]
    session_alive(a1, s_a1[0])  # now s_a1[1] is the least recently used
    s_a1.append(open_session(a1))
    assert [session_alive(a1, s) for s in s_a1] == [True, False, True, True]

    # per key: tenant a has 3; a2's 2nd session makes 5 > 4, so a's least
    # recently used goes (one of a1's), never one of tenant b's
    s_a2 = [open_session(a2), open_session(a2)]
    alive_a = [session_alive(a1, s) for s in s_a1 if s != s_a1[1]] + \
              [session_alive(a2, s) for s in s_a2]
    assert alive_a.count(True) == 4, alive_a
    assert all(session_alive(u, s) for u, s in tenant_b)

    # in all (7): b has 3, a has 4; b's next session takes one of b's own
    new_b = open_session(b2)
    alive_b = [session_alive(u, s) for u, s in tenant_b] + [session_alive(b2, new_b)]
    assert alive_b.count(True) == 3 and alive_b[-1], alive_b
    assert [session_alive(a2, s) for s in s_a2] == [True, True]
    assert sum(session_alive(a1, s) for s in s_a1) == 2


# ------------------------------------------- refused bodies: drained, bounded

def read_status(s, timeout=10):
    """The status code of the answer on socket s, or None when the server
    closed (or reset) without one."""
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            got = s.recv(4096)
            if not got:
                break
            data += got
    except (ConnectionResetError, socket.timeout):
        pass
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else None


def stream_body(addr, head, chunked, limit, chunk=1 << 20, pause=0.0, timeout=20):
    """Sends head, then body chunks (chunked encoding or raw) until the
    server stops reading or `limit` bytes went; returns (status or None,
    bytes sent, seconds taken)."""
    s = socket.create_connection(addr, timeout=timeout)
    t0 = time.time()
    sent = 0
    try:
        s.sendall(head.encode())
        data = b"\0" * chunk
        while sent < limit:
            try:
                s.sendall(b"%x\r\n%s\r\n" % (chunk, data) if chunked else data)
            except (BrokenPipeError, ConnectionResetError, socket.timeout):
                break
            sent += chunk
            if pause:
                time.sleep(pause)
        code = read_status(s)
    finally:
        s.close()
    return code, sent, time.time() - t0


@pytest.fixture
def drain_daemon(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var"), ["--max-upload", "1M"]).start()
    yield d
    d.stop()


def test_refused_bodies_are_drained_within_bounds(drain_daemon):
    """A request refused before its body is in (401 without a key, 404 on an
    MCP URL of no sandbox, 413 over --max-upload) is answered after its body
    has been read and dropped, so the client reads the answer (not a reset);
    a body far beyond --drain-max (4M) is cut off at once, or after the
    bound, and one trickled past --drain-timeout (2 s) is closed soon after."""
    d = drain_daemon
    addr = host_port(d)
    body = b"{" + b" " * (3 << 20) + b"}"
    for _ in range(10):
        r = httpx.post(d.url + "/local-sandbox", content=body,
                       headers={"Content-Type": "application/json"}, timeout=30)
        assert r.status_code == 401, r.text
        r = httpx.post(d.url + "/filesystem/mcp/?local_sandbox_id=%s" % uuid.uuid4(),
                       content=body, headers=dict(MCP_HEADERS, **{"Content-Type": "application/json"}),
                       timeout=30)
        assert r.status_code == 404, r.text
    with d.client() as api:
        sid = acquire(api, ["filesystem"])["local_sandbox_id"]
        url = api.post("/local-sandbox/%s/upload-url" % sid).json()["upload_url"]
    path = url.split(d.url, 1)[1]
    head = "PUT %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/gzip\r\n" % path

    # declared far beyond the bound: answered at once, nothing drained
    code, sent, took = stream_body(addr, head + "Content-Length: %d\r\n\r\n" % (1 << 30),
                                   False, 1 << 30)
    assert code in (413, None) and sent < 64 << 20 and took < 10, (code, sent, took)

    # chunked, endless: 413 at 1M, then 4M drained, then the connection is cut
    code, sent, took = stream_body(addr, head + "Transfer-Encoding: chunked\r\n\r\n", True,
                                   1 << 30)
    assert code in (413, None) and sent < 64 << 20 and took < 10, (code, sent, took)

    # trickled after the refusal (2 KiB/s, under --min-body-rate): closed
    # after --drain-timeout plus what the rate allows, without an answer
    code, sent, took = stream_body(
        addr, "POST /local-sandbox HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
        "application/json\r\nContent-Length: %d\r\n\r\n" % (1 << 20), False, 1 << 20,
        chunk=1024, pause=0.5)
    assert code is None and 1.5 < took < 8, (code, sent, took)
    # the daemon is fine
    assert httpx.get(d.url + "/healthz").status_code == 200
    assert part_files(d, sid) == []


# ------------------------------------------------------------------ item 5

@pytest.fixture
def guard_daemon(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var"),
               ["--max-connections", "120", "--max-anon-connections", "60",
                "--max-connections-per-ip", "20", "--header-timeout", "5"]).start()
    yield d
    d.stop()


def closed_by_server(s):
    """Whether the server closed s (end of stream or reset), without waiting."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def half_open(addr, source, head=b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"):
    """A connection whose request headers never end; None if refused."""
    try:
        s = socket.create_connection(addr, timeout=5, source_address=(source, 0))
        s.sendall(head)
        return s
    except OSError:
        return None


def test_slowloris_cannot_lock_out_a_client_with_a_key(guard_daemon):
    """200 half-open connections from 8 addresses (more than the 120 the
    daemon takes in all, which locked everyone out): each address keeps at
    most 20, all of them together at most 60 (--max-anon-connections), so a
    client with a key, from another address, is served at once, also while
    the attacker reconnects as fast as it can; and connections trickling
    their headers, or a body, are closed at --header-timeout (5 s)."""
    from collections import Counter
    d = guard_daemon
    addr = host_port(d)
    sources = ["127.0.0.%d" % (i + 2) for i in range(8)]
    held = [(src, half_open(addr, src)) for src in sources for _ in range(25)]
    # (the daemon takes a moment to accept them all: connections it closed
    # count against --max-connections until their threads are gone)
    t0 = time.time()
    while True:
        alive = [(src, s) for src, s in held if s and not closed_by_server(s)]
        per_source = Counter(src for src, _ in alive)
        if (len(alive) <= 60 and max(per_source.values()) <= 20) or time.time() - t0 > 4:
            break
        time.sleep(0.2)
    assert max(per_source.values()) <= 20, per_source
    assert 40 <= len(alive) <= 60, len(alive)

    # the attacker keeps every slot it loses busy again, trickling a header
    # byte now and then so that an idle timeout would never fire
    stop = threading.Event()
    reconnects = [0]

    def attack():
        socks = [s for _, s in held if s]
        i = 0
        while not stop.is_set():
            src = sources[i % len(sources)]
            i += 1
            s = half_open(addr, src)
            if s:
                socks.append(s)
                reconnects[0] += 1
            for s in list(socks):
                if closed_by_server(s):
                    socks.remove(s)
                    s.close()
                elif i % 50 == 0:
                    try:
                        s.send(b"X")
                    except OSError:
                        pass
        for s in socks:
            s.close()

    t = threading.Thread(target=attack)
    t.start()
    try:
        took = []
        for _ in range(10):
            t0 = time.time()
            with d.client() as api:  # a new connection each time
                r = api.get("/local-sandbox", timeout=10)
            took.append(time.time() - t0)
            assert r.status_code == 200, r.text
            time.sleep(0.2)
        assert max(took) < 2, took
    finally:
        stop.set()
        t.join(30)
    assert reconnects[0] > 100, reconnects

    # deadlines: headers trickled a byte a second, and a body trickled by a
    # client with a key (2 bytes/s, under --min-body-rate), are both closed
    # about --header-timeout (5 s) after they started
    time.sleep(0.5)
    trick = [half_open(addr, "127.0.0.20") for _ in range(5)]
    body = half_open(addr, "127.0.0.21",
                     ("POST /local-sandbox HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
                      "Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n"
                      "\r\n{" % API_KEY).encode())
    socks = [s for s in trick + [body] if s]
    assert len(socks) == 6
    t0 = time.time()
    closed_at = {}
    while len(closed_at) < len(socks) and time.time() - t0 < 12:
        for s in socks:
            if s not in closed_at and closed_by_server(s):
                closed_at[s] = time.time() - t0
        for s in socks:
            if s not in closed_at:
                try:
                    s.send(b" " if s is body else b"X")
                except OSError:
                    pass
        time.sleep(0.5)
    for s in socks:
        s.close()
    assert len(closed_at) == len(socks), closed_at
    assert all(4.0 < v < 7.5 for v in closed_at.values()), sorted(closed_at.values())
    assert httpx.get(d.url + "/healthz").status_code == 200
