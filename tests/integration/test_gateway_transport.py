"""Streamable HTTP transport rules of the gateway, checked with raw HTTP
against `mcpbox bridge` and the mock server: sessions, protocol version
header, batches, Origin/Host, CORS, JSON vs SSE answers, priming events,
GET streams with keep-alives, and server requests that have to travel on a
GET stream."""
import json
import threading
import time

import httpx
import pytest

import gwharness as h


@pytest.fixture(scope="module")
def mock():
    b = h.Bridge(h.mock_cmd(), "--keepalive", "400", "--allowed-origin", "https://app.example")
    yield b
    b.stop()


def post(url, body, **headers):
    hd = {"Accept": h.ACCEPT_BOTH, "Content-Type": "application/json"}
    hd.update({k.replace("_", "-"): v for k, v in headers.items()})
    return httpx.post(url, content=json.dumps(body), headers=hd, timeout=30)


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}


def test_sessions_are_issued_and_enforced(mock):
    r = post(mock.url, INIT)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    sid = r.headers["mcp-session-id"]
    assert len(sid) == 32 and all(c in "0123456789abcdef" for c in sid)
    assert post(mock.url, INIT).headers["mcp-session-id"] != sid
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    r = post(mock.url, ping)
    assert r.status_code == 400 and "Mcp-Session-Id" in r.json()["error"]["message"]
    r = post(mock.url, ping, Mcp_Session_Id="0" * 32)
    assert r.status_code == 404
    r = post(mock.url, ping, Mcp_Session_Id=sid)
    assert r.status_code == 200 and r.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    # header names are case-insensitive
    r = post(mock.url, ping, **{"mcp-session-id": sid})
    assert r.status_code == 200
    r = httpx.delete(mock.url, headers={"Mcp-Session-Id": sid})
    assert r.status_code == 200
    assert post(mock.url, ping, Mcp_Session_Id=sid).status_code == 404
    assert httpx.delete(mock.url, headers={"Mcp-Session-Id": sid}).status_code == 404
    # also served below any /{name}/mcp path, with or without the slash
    for path in ("/mcp/", "/filesystem/mcp", "/filesystem/mcp/"):
        assert post(mock.base + path, INIT).status_code == 200
    assert post(mock.base + "/a/b/mcp", INIT).status_code == 404


def test_versions_negotiated_per_session(mock):
    seen = {}
    for asked, expect in (("2024-11-05", "2024-11-05"), ("2025-03-26", "2025-03-26"),
                          ("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"),
                          ("1999-01-01", "2025-11-25")):
        s = h.Session(mock.url, version=asked)
        assert s.version == expect
        assert s.init["result"]["serverInfo"]["name"] == "mock-server"
        seen[asked] = s
    s = seen["2025-06-18"]
    r = s.request("ping", headers={"MCP-Protocol-Version": "1999-01-01"})
    assert r.status_code == 400 and "1999-01-01" in r.json()["error"]["message"]
    batch = [{"jsonrpc": "2.0", "id": "a", "method": "ping"},
             {"jsonrpc": "2.0", "id": "b", "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": "in a batch"}}},
             {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]
    r = s.post(batch)
    assert r.status_code == 400 and "batch" in r.json()["error"]["message"]
    r = seen["2025-03-26"].post(batch, headers={"MCP-Protocol-Version": "2025-03-26"})
    assert r.status_code == 200
    answers = {m["id"]: m for m in r.json()}
    assert set(answers) == {"a", "b"}
    assert h.text_of(answers["b"]) == "in a batch"
    r = seen["2025-03-26"].post([INIT])
    assert r.status_code == 400
    r = s.post(INIT)  # initialize with a session header: simply a new session
    assert r.status_code == 200 and r.headers["mcp-session-id"] != s.sid
    for x in seen.values():
        x.close()


def test_origin_host_and_cors(mock):
    assert post(mock.url, INIT, Origin="http://evil.example").status_code == 403
    assert post(mock.url, INIT, Host="evil.example").status_code == 403
    assert post(mock.url, INIT, Host="evil.example:80", Origin="http://evil.example").status_code == 403
    assert post(mock.url, INIT, Origin="null").status_code == 403
    r = post(mock.url, INIT, Origin="http://localhost:5173")
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == "http://localhost:5173"
    assert "Mcp-Session-Id" in r.headers["access-control-expose-headers"]
    r = post(mock.url, INIT, Origin="https://app.example")
    assert r.status_code == 200
    assert post(mock.url, INIT, Origin="http://app.example").status_code == 403
    assert post(mock.url, INIT, Host="localhost").status_code == 200
    r = httpx.request("OPTIONS", mock.url, headers={"Origin": "http://127.0.0.1:3000"})
    assert r.status_code == 204
    assert "POST" in r.headers["access-control-allow-methods"]
    assert "mcp-session-id" in r.headers["access-control-allow-headers"].lower()
    r = httpx.put(mock.url, content="{}")
    assert r.status_code == 405 and "POST" in r.headers["allow"]


def test_json_or_sse_answers(mock):
    s = h.Session(mock.url)  # 2025-11-25
    r = s.request("tools/call", {"name": "echo", "arguments": {"text": "fast"}})
    assert r.headers["content-type"] == "application/json"
    assert r.headers.get("x-accel-buffering") is None
    # progress before the answer: SSE, priming event first, answer last
    r = s.request("tools/call", {"name": "progress", "arguments": {"steps": 3},
                                 "_meta": {"progressToken": 7}})
    assert r.headers["content-type"] == "text/event-stream"
    assert r.headers["x-accel-buffering"] == "no"
    ev = h.parse_sse(r.text)
    assert ev[0].get("id") and ev[0].get("data", "") == ""  # the priming event
    msgs = [json.loads(e["data"]) for e in ev if e.get("data")]
    assert [m["params"]["progress"] for m in msgs[:-1]] == [1, 2, 3]
    assert all(m["params"]["progressToken"] == 7 for m in msgs[:-1])
    assert h.text_of(msgs[-1]) == "done 3 steps"
    ids = [e["id"] for e in ev]
    assert len(set(ids)) == len(ids)
    # an older session gets no priming event
    old = h.Session(mock.url, version="2025-06-18")
    r = old.request("tools/call", {"name": "log", "arguments": {}})
    ev = h.parse_sse(r.text)
    assert all(e.get("data") for e in ev)
    assert ev[0]["data"] and json.loads(ev[0]["data"])["method"] == "notifications/message"
    # a client that only takes JSON gets JSON, without the notifications
    r = s.request("tools/call", {"name": "progress", "arguments": {"steps": 2},
                                 "_meta": {"progressToken": "p"}},
                  headers={"Accept": "application/json"})
    assert r.headers["content-type"] == "application/json"
    assert h.text_of(r.json()) == "done 2 steps"
    # one that only takes SSE gets SSE even for a fast answer
    r = s.request("ping", headers={"Accept": "text/event-stream"})
    assert r.headers["content-type"] == "text/event-stream"
    assert [json.loads(e["data"]) for e in h.parse_sse(r.text) if e.get("data")][0]["result"] == {}
    # a slow answer switches to SSE after the keep-alive interval (400 ms
    # here) and carries keep-alive comments until it is ready
    r = s.request("tools/call", {"name": "sleep", "arguments": {"ms": 1500}})
    assert r.headers["content-type"] == "text/event-stream"
    assert ": keepalive" in r.text
    assert h.text_of([json.loads(e["data"]) for e in h.parse_sse(r.text) if e.get("data")][-1]) == "slept"
    # notifications and responses alone: 202
    r = s.post({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    assert r.status_code == 202 and r.content == b""
    s.close()
    old.close()


class GetStream:
    """A GET stream read on a thread."""

    def __init__(self, session, headers=None):
        self.events, self.comments, self.status = [], 0, None
        self.session = session
        self.http = httpx.Client(timeout=None)
        hd = session.headers({"Accept": "text/event-stream"})
        hd.update(headers or {})
        self.ready = threading.Event()
        self.t = threading.Thread(target=self.run, args=(hd,), daemon=True)
        self.t.start()
        assert self.ready.wait(10)

    def run(self, hd):
        try:
            with self.http.stream("GET", self.session.url, headers=hd) as r:
                self.status = r.status_code
                self.ready.set()
                buf = ""
                for chunk in r.iter_text():
                    buf += chunk
                    while "\n\n" in buf:
                        block, buf = buf.split("\n\n", 1)
                        if block.startswith(":"):
                            self.comments += 1
                        else:
                            self.events.extend(h.parse_sse(block + "\n\n"))
        except httpx.HTTPError:
            pass
        finally:
            self.ready.set()

    def wait_for(self, pred, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for e in self.events:
                if e.get("data") and pred(json.loads(e["data"])):
                    return json.loads(e["data"])
            time.sleep(0.02)
        raise AssertionError("no such event: %r" % self.events)


def test_get_stream(mock):
    s = h.Session(mock.url, capabilities={"roots": {}})
    other = h.Session(mock.url)
    g = GetStream(s)
    assert g.status == 200
    time.sleep(1.0)
    assert g.comments >= 1  # keep-alive comments every 400 ms
    # server notifications outside any request reach every GET stream
    g2 = GetStream(other)
    assert h.text_of(other.call("notify")) == "notified"
    for stream in (g, g2):
        stream.wait_for(lambda m: m.get("method") == "notifications/resources/list_changed")
    # a server request during a call whose POST takes JSON only travels on
    # the session's GET stream; the answer goes back in a POST
    got = {}
    t = threading.Thread(target=lambda: got.setdefault(
        "r", s.call("roots", headers={"Accept": "application/json"})))
    t.start()
    q = g.wait_for(lambda m: m.get("method") == "roots/list")
    assert isinstance(q["id"], int)
    r = s.post({"jsonrpc": "2.0", "id": q["id"], "result": {"roots": [{"uri": "file:///x"}]}})
    assert r.status_code == 202
    t.join(10)
    assert "file:///x" in h.text_of(got["r"])
    # the same answer twice, or from another session, is refused
    r = other.post({"jsonrpc": "2.0", "id": q["id"], "result": {"roots": []}})
    assert r.status_code == 400
    # a GET without a session, or not accepting SSE
    r = httpx.get(mock.url, headers={"Accept": "text/event-stream"})
    assert r.status_code == 400
    r = httpx.get(mock.url, headers={"Accept": "application/json", "Mcp-Session-Id": s.sid})
    assert r.status_code == 406
    # resuming a finished POST stream is refused without a retry loop
    r = httpx.get(mock.url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": s.sid,
                                     "Last-Event-ID": "p1-3"})
    assert r.status_code == 405
    # ending the session ends its streams
    s.close()
    g.t.join(10)
    assert not g.t.is_alive()
    other.close()
    g2.t.join(10)
    assert not g2.t.is_alive()
