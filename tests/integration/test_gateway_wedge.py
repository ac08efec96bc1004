"""A server whose stdin-reading thread is stuck (a blocking open of a FIFO,
a busy loop) must not wedge its URL for good (issue 12 item 10): after a
request is cancelled, by its client or by the call timeout, the gateway
pings the server, and one that does not answer within the grace period
(5 s) is killed and restarted. A server that answers the ping (its call
hangs on another thread) is left alone."""
import json
import re
import threading
import time

import pytest

import gwharness as h


@pytest.fixture
def mock():
    b = h.Bridge(h.mock_cmd(), "--call-timeout", "1000")
    yield b
    b.stop()


def pid_of(session):
    return re.search(r"pid=(\d+)", h.text_of(session.call("counter"))).group(1)


def wait_restarted(bridge, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        code, health = bridge.health()
        if health.get("restarts", 0) >= 1 and health.get("state") == "ready":
            return health
        time.sleep(0.1)
    raise AssertionError("not restarted: %r" % (bridge.health(),))


def test_timed_out_call_on_a_wedged_server_restarts_it(mock):
    a = h.Session(mock.url)
    before = pid_of(a)
    t0 = time.time()
    r = a.call("wedge")
    assert r["error"]["code"] == -32001 and "timed out" in r["error"]["message"]
    assert time.time() - t0 < 5
    health = wait_restarted(mock)
    assert time.time() - t0 < 12
    assert "did not answer a ping" in health.get("last_error", "") or \
        "did not answer a ping" in mock.log()
    # a new session lists the tools and calls them, on a new process
    b = h.Session(mock.url)
    tools = b.result("tools/list")["result"]["tools"]
    assert any(t["name"] == "echo" for t in tools)
    assert h.text_of(b.call("echo", {"text": "alive"})) == "alive"
    assert pid_of(b) != before
    assert mock.children() == [int(pid_of(b))]
    b.close()


def test_client_cancel_on_a_wedged_server_restarts_it(mock):
    a = h.Session(mock.url)
    before = pid_of(a)
    got = {}

    def call():
        got["r"] = a.call("wedge", rid=77)

    t = threading.Thread(target=call)
    t.start()
    time.sleep(0.3)
    r = a.post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 77, "reason": "test"}})
    assert r.status_code == 202
    t.join(10)
    assert "cancelled" in got["r"]["error"]["message"]
    wait_restarted(mock)
    b = h.Session(mock.url)
    assert pid_of(b) != before
    b.close()


def test_hung_call_on_a_live_server_is_not_restarted(mock):
    a = h.Session(mock.url)
    before = pid_of(a)
    r = a.call("hang")  # hangs on a worker thread; the server still answers ping
    assert "timed out" in r["error"]["message"]
    time.sleep(6.5)  # past the grace period
    code, health = mock.health()
    assert health["restarts"] == 0, health
    assert pid_of(a) == before
    cancelled = json.loads(h.text_of(a.call("cancelled")))
    assert len(cancelled) == 1
