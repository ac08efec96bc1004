"""Hostile JSON-RPC and misbehaving servers behind `mcpbox bridge`.

Every case must end in a defined error (an HTTP status with a JSON-RPC error
body, or a JSON-RPC error response) while the gateway and the other sessions
keep working. The servers are modes of tests/integration/servers/mock_server.py:
garbage and floods on stdout, a process that exits mid-call or hangs, one
that crashes at start, refuses or ignores initialize."""
import json
import re
import subprocess
import threading
import time

import httpx
import pytest

import gwharness as h


@pytest.fixture
def mock():
    b = h.Bridge(h.mock_cmd(), "--max-message", "1M", "--call-timeout", "3000")
    yield b
    b.stop()


def err_of(resp):
    body = resp.json()
    assert "error" in body, body
    return body["error"]


def token_of(session):
    m = re.search(r"pid=(\d+) token=(\w+)", h.text_of(session.call("counter")))
    return m.group(1), m.group(2)


def test_invalid_json_and_invalid_messages(mock):
    s = h.Session(mock.url)
    r = s.post(None, raw="{not json")
    assert r.status_code == 400 and err_of(r)["code"] == -32700
    r = s.post({"jsonrpc": "1.0", "id": 1, "method": "ping"})
    assert r.status_code == 400
    assert r.json()["id"] == 1 and err_of(r)["code"] == -32600 and "2.0" in err_of(r)["message"]
    r = s.post({"id": 2, "method": "ping"})  # no version at all
    assert r.status_code == 400 and err_of(r)["code"] == -32600
    for bad in ([], 42, "str", {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"},
                {"jsonrpc": "2.0", "id": 3, "method": 7}):
        r = s.post(bad)
        assert r.status_code == 400, (bad, r.text)
        assert err_of(r)["code"] in (-32600, -32700)
    r = s.post(None, raw="{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    r = s.post(None, raw="")
    assert r.status_code == 400 and err_of(r)["code"] == -32700
    # a request that is not a method the server knows: the server's own error
    resp = s.result("no/such/method")
    assert resp["error"]["code"] == -32601
    assert h.text_of(s.call("echo", {"text": "still fine"})) == "still fine"
    s.close()


def test_huge_messages(mock):
    s = h.Session(mock.url)
    pid, tok = token_of(s)
    big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": "x" * (2 << 20)}}}
    r = s.post(big)
    assert r.status_code == 413
    assert "over the gateway's limit" in err_of(r)["message"]
    # just under the limit passes both ways, byte for byte
    t = "y" * (900 << 10)
    assert h.text_of(s.call("echo", {"text": t})) == t
    # a server answer over the limit becomes a JSON-RPC error for its caller
    resp = s.call("huge", {"bytes": 3 << 20})
    assert "over the gateway's limit" in resp["error"]["message"]
    assert token_of(s) == (pid, tok)  # no restart was needed
    s.close()


def test_duplicate_ids(mock):
    a, b = h.Session(mock.url), h.Session(mock.url)
    got = {}

    def slow():
        got["slow"] = a.call("sleep", {"ms": 800}, rid=5)

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.3)
    dup = a.call("echo", {"text": "dup"}, rid=5)
    assert dup["id"] == 5 and "duplicate request id" in dup["error"]["message"]
    # the same id in another session is someone else's business
    assert h.text_of(b.call("echo", {"text": "other"}, rid=5)) == "other"
    t.join()
    assert got["slow"]["id"] == 5 and h.text_of(got["slow"]) == "slept"
    # string and number ids with the same digits are different ids
    assert a.call("echo", {"text": "s"}, rid="5")["id"] == "5"
    a.close()
    b.close()


def test_responses_to_unknown_ids(mock):
    s = h.Session(mock.url)
    r = s.post({"jsonrpc": "2.0", "id": 424242, "result": {}})
    assert r.status_code == 400 and "no request with id 424242" in err_of(r)["message"]
    r = s.post({"jsonrpc": "2.0", "id": "x", "error": {"code": 1, "message": "m"}})
    assert r.status_code == 400
    # the server answering twice, or answering ids nobody sent
    assert h.text_of(s.call("double")) == "first"
    assert h.text_of(s.call("stray")) == "after stray"
    assert h.text_of(s.call("echo", {"text": "ok"})) == "ok"
    s.close()


def test_server_prints_garbage():
    b = h.Bridge(h.mock_cmd("--banner"))
    try:
        s = h.Session(b.url)
        assert h.text_of(s.call("garbage")) == "after garbage"
        assert h.text_of(s.call("echo", {"text": "fine"})) == "fine"
        # awkward but valid numbers are forwarded verbatim
        r = s.request("tools/call", {"name": "numbers", "arguments": {}})
        assert '"a":0.1' in r.text and "123456789012345678901234567890" in r.text
        assert "1e400" in r.text
        s.close()
    finally:
        log = b.stop()
    assert "dropped a stdout line (not JSON" in log
    assert "mock server starting" in log  # the banner, quoted in the warning


def test_server_floods_stdout():
    b = h.Bridge(h.mock_cmd(), "--max-message", "4M")
    try:
        a, other = h.Session(b.url), h.Session(b.url)
        result = {}

        def flood():
            result["r"] = a.call("flood", {"mb": 24})

        t = threading.Thread(target=flood)
        t.start()
        slowest = 0
        while t.is_alive():
            t0 = time.time()
            assert h.text_of(other.call("echo", {"text": "alive"})) == "alive"
            slowest = max(slowest, time.time() - t0)
        t.join()
        assert h.text_of(result["r"]) == "after flood"
        assert slowest < 5, slowest
        assert h.text_of(other.call("echo", {"text": "after"})) == "after"
        a.close()
        other.close()
    finally:
        log = b.stop()
    assert "over the 4194304-byte limit" in log


def test_server_exits_mid_call(mock):
    a, b = h.Session(mock.url), h.Session(mock.url)
    pid, tok = token_of(a)
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("slow", b.call("sleep", {"ms": 3000})))
    t.start()
    time.sleep(0.3)
    died = a.call("exit")
    assert "stopped while handling this request" in died["error"]["message"]
    t.join()
    # the other session's call in flight got the same clear error
    assert "stopped while handling" in got["slow"]["error"]["message"]
    # both sessions survive; the next call runs on a restarted process
    pid2, tok2 = token_of(b)
    assert tok2 != tok and pid2 != pid
    assert token_of(a) == (pid2, tok2)
    assert mock.children() == [int(pid2)]
    code, health = mock.health()
    assert code == 200 and health["restarts"] == 1 and "last_error" not in health
    a.close()
    b.close()


def test_hung_call_times_out_and_is_cancelled(mock):  # --call-timeout 3000
    a, b = h.Session(mock.url), h.Session(mock.url)
    got = {}

    def hang():
        t0 = time.time()
        got["r"] = a.call("hang")
        got["t"] = time.time() - t0

    t = threading.Thread(target=hang)
    t.start()
    time.sleep(0.2)
    for _ in range(5):  # a hung call does not block anyone else
        assert h.text_of(b.call("echo", {"text": "x"})) == "x"
    t.join()
    assert got["r"]["error"]["code"] == -32001
    assert "timed out" in got["r"]["error"]["message"]
    assert 2.9 <= got["t"] < 6, got["t"]
    # the server heard notifications/cancelled for its (upstream) request id
    cancelled = json.loads(h.text_of(b.call("cancelled")))
    assert len(cancelled) == 1 and isinstance(cancelled[0], int)
    a.close()
    b.close()


def test_server_that_cannot_start():
    b = h.Bridge(h.mock_cmd("--crash-at-start"), "--lazy")
    try:
        r = httpx.post(b.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                    "params": {"protocolVersion": "2025-06-18"}},
                       headers={"Accept": h.ACCEPT_BOTH}, timeout=60)
        assert r.status_code == 503
        msg = err_of(r)["message"]
        assert "exited" in msg and "crashing at start as asked" in msg
        assert r.json()["id"] == 1
        assert b.health()[0] == 503
    finally:
        b.stop()
    for flag, words in (("--refuse-init", "refused initialize: mock refuses to initialize"),
                        ("--no-init", "not ready yet")):
        b = h.Bridge(h.mock_cmd(flag), "--lazy", "--init-timeout", "1500")
        try:
            r = httpx.post(b.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                        "params": {"protocolVersion": "2025-06-18"}},
                           headers={"Accept": h.ACCEPT_BOTH}, timeout=60)
            assert r.status_code == 503 and words in err_of(r)["message"], r.text
        finally:
            b.stop()


def test_bridge_refuses_a_missing_command():
    r = subprocess.run([h.BIN, "bridge", "--listen", "127.0.0.1:0", "--",
                        "/nonexistent/mcp-server"], capture_output=True, timeout=60)
    assert r.returncode == 1
    assert b"cannot run '/nonexistent/mcp-server'" in r.stderr


RAW_IDS = ["12345678901234567890123", "0.1", "1e2", "-0", "1E+2", "-12.50",
           '"\\u00e9t\\u00e9"', '"a\\"b"', "9007199254740993"]


def raw_id_of(text, rid):
    """The id member of a JSON-RPC response as written on the wire."""
    m = re.search(r'"id":\s*(' + re.escape(rid) + r')\s*[,}]', text)
    return m.group(1) if m else None


@pytest.mark.parametrize("rid", RAW_IDS)
def test_ids_come_back_byte_for_byte(mock, rid):
    """Issue 12 item 15: the client's id text is what it gets back, for
    results, for errors the gateway makes, in batches and for initialize."""
    s = h.Session(mock.url)
    body = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo",' \
           '"arguments":{"text":"x"}}}' % rid
    r = s.post(None, raw=body)
    assert r.status_code == 200
    assert raw_id_of(r.text, rid) == rid, r.text
    # an error the server makes, and one the gateway makes (duplicate method
    # name unknown to the server)
    r = s.post(None, raw='{"jsonrpc":"2.0","id":%s,"method":"no/such"}' % rid)
    assert raw_id_of(r.text, rid) == rid, r.text
    r = s.post(None, raw='{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{}}' % rid)
    assert raw_id_of(r.text, rid) == rid, r.text
    s.close()
    # initialize itself, on a new session
    init = ('{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":'
            '"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' % rid)
    r = httpx.post(mock.url, content=init, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    assert r.status_code == 200
    assert raw_id_of(r.text, rid) == rid, r.text
    # a batch (2025-03-26 allows them): each element keeps its id text
    sid = r.headers["mcp-session-id"]
    batch = '[{"jsonrpc":"2.0","id":%s,"method":"ping"}, {"jsonrpc":"2.0","id":"b","method":"ping"}]' % rid
    r = httpx.post(mock.url, content=batch, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"})
    assert r.status_code == 200, r.text
    assert raw_id_of(r.text, rid) == rid, r.text
    httpx.delete(mock.url, headers={"Mcp-Session-Id": sid})
