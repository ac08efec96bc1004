"""The official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2 under
Node 22) against `mcpbox bridge`: the reference server-everything and the
mock server behind one long-lived process each.

What must hold: connect, list and call tools and end the session; 50
sequential initialize -> call -> close sessions (MCP-Atlas's pattern) and 10
concurrent long-lived sessions on one URL all succeed and see ONE server
process and its state; server-to-client requests, progress and logging reach
the session that caused them."""
import re
import time

import httpx
import pytest

import gwharness as h



@pytest.fixture(scope="module")
def everything():
    b = h.Bridge(h.everything_cmd())
    yield b
    b.stop()


@pytest.fixture
def mock():
    b = h.Bridge(h.mock_cmd())
    yield b
    b.stop()


COUNT = re.compile(r"^count=(\d+) pid=(\d+) token=([0-9a-f]+)$")


def counts(texts):
    parsed = [COUNT.match(t) for t in texts]
    assert all(parsed), texts
    return [int(m.group(1)) for m in parsed], {(m.group(2), m.group(3)) for m in parsed}


def test_sdk_connect_list_call_end(everything):
    out = h.node_client("basic", everything.url)
    assert out["echo"] == "Echo: hello gateway"
    assert "echo" in out["tools"] and "trigger-long-running-operation" in out["tools"]
    assert out["serverInfo"]["name"] == "mcp-servers/everything"
    assert out["protocolVersion"] == "2025-11-25"
    assert re.fullmatch(r"[0-9a-f]{32}", out["sessionId"])
    # The SDK ended its session with DELETE: the id is dead now.
    r = httpx.post(everything.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                   headers={"Mcp-Session-Id": out["sessionId"], "Accept": h.ACCEPT_BOTH})
    assert r.status_code == 404
    assert len(everything.children()) == 1


def test_sdk_sequential_and_concurrent_everything(everything):
    before = everything.children()
    assert len(before) == 1
    seq = h.node_client("sequential", everything.url, 50, "echo", '{"message":"seq"}')
    assert seq["texts"] == ["Echo: seq"] * 50
    assert len(set(seq["sessions"])) == 50
    conc = h.node_client("concurrent", everything.url, 10, 5, "get-sum", '{"a":2,"b":3}')
    assert len(conc["texts"]) == 50 and all("5" in t for t in conc["texts"]), conc["texts"]
    assert len(set(conc["sessions"])) == 10
    assert everything.children() == before  # the same single process throughout
    code, health = everything.health()
    assert code == 200 and health["sessions"] == 0  # every session was ended
    assert health["restarts"] == 0


def test_sdk_sequential_sessions_share_one_process(mock):
    out = h.node_client("sequential", mock.url, 50, "counter", "{}")
    n, procs = counts(out["texts"])
    assert n == list(range(1, 51))  # one counter, incremented by every session
    assert len(procs) == 1  # one pid, one per-process token
    assert len(set(out["sessions"])) == 50
    pid = int(next(iter(procs))[0])
    assert mock.children() == [pid]


def test_sdk_concurrent_sessions_share_one_process(mock):
    out = h.node_client("concurrent", mock.url, 10, 5, "counter", "{}")
    n, procs = counts(out["texts"])
    assert sorted(n) == list(range(1, 51))
    assert len(procs) == 1
    assert len(set(out["sessions"])) == 10
    # long-lived sessions with slow calls in parallel: all finish together
    out = h.node_client("concurrent", mock.url, 10, 2, "sleep", '{"ms": 300}')
    assert out["texts"] == ["slept"] * 20
    assert len(mock.children()) == 1


def test_sdk_sampling_reaches_the_calling_session(everything, mock):
    out = h.node_client("sampling", everything.url, "trigger-sampling-request",
                        '{"prompt":"hey","maxTokens":5}')
    assert "sampled-by-client" in out["text"]
    assert out["asked"]["maxTokens"] == 5
    # the mock uses a string id for its request: it must come back as sent
    out = h.node_client("sampling", mock.url, "sample")
    assert "sampled-by-client" in out["text"] and "test-model" in out["text"]


def test_sdk_roots_logging_progress(everything, mock):
    out = h.node_client("roots", mock.url, "roots")
    assert "file:///data" in out["text"]
    out = h.node_client("logging", mock.url, "log")
    assert out["text"] == "logged"
    assert any(l.get("data") == "hello from the log" for l in out["logs"]), out
    out = h.node_client("progress", everything.url, "trigger-long-running-operation",
                        '{"duration":0.3,"steps":3}')
    assert [p["progress"] for p in out["progress"]] == [1, 2, 3]
    assert "completed" in out["text"]
    out = h.node_client("progress", mock.url, "progress", '{"steps":4}')
    assert [p["progress"] for p in out["progress"]] == [1, 2, 3, 4]


def test_health_reports_drift_hash(mock):
    code, first = mock.health()
    assert code == 200 and first["ready"] is True
    assert first["server_info"] == {"name": "mock-server", "version": "1.2.3"}
    assert first["tools_count"] == 19 and re.fullmatch(r"[0-9a-f]{64}", first["tools_sha256"])
    # a crash and restart does not change the tool surface, so not the hash
    s = h.Session(mock.url)
    r = s.call("exit")
    assert "error" in r
    s.close()
    h.Session(mock.url).call("counter")  # waits for the restart
    for _ in range(50):  # the tools/list after initialize may still be on its way
        code, after = mock.health()
        if code == 200:
            break
        time.sleep(0.1)
    assert code == 200 and after["tools_sha256"] == first["tools_sha256"]
    assert after["restarts"] == 1
