"""New client sessions and the server process behind them (docs/GATEWAY.md, "One
process, many sessions"): the gateway answers `initialize` from the server's
InitializeResult and tells the server of the client (notifications/mcpbox/
client_initialized) only with the session's first message that reaches it, and
again when another session spoke in between, so a session the gateway answers
alone (initialize, tools/list of a tools_static server, DELETE) costs the server
nothing, while a server that keeps "the current client" sees the one whose
request it serves.

Through `mcpbox bridge` with the mock server (whose `clients` tool lists the
notes it got), and through the daemon with native servers (tools_static by
default: their tools/list is the gateway's copy, byte for byte)."""
import json
import threading
import time

import httpx
import pytest

import gwharness as h
from conftest import Daemon
from gwharness import ACCEPT_BOTH, messages, text_of
from test_daemon_sandboxes import _cmd, sandbox_pids


def clients(s):
    return json.loads(text_of(s.call("clients")))


@pytest.fixture
def mock():
    b = h.Bridge(h.mock_cmd())
    yield b
    b.stop()


def test_the_server_hears_of_a_client_when_it_reaches_it(mock):
    idle = h.Session(mock.url, client_name="idle")     # initialize + initialized only
    gone = h.Session(mock.url, client_name="gone")
    assert gone.close().status_code == 200            # DELETE before anything reached it
    c = h.Session(mock.url, client_name="gamma")
    assert clients(c) == ["gamma"]                    # the note came with gamma's call
    assert clients(c) == ["gamma"]                    # once, while gamma is the last
    a = h.Session(mock.url, client_name="alpha")
    assert clients(a) == ["gamma", "alpha"]
    assert clients(c) == ["gamma", "alpha", "gamma"]  # told again after alpha spoke
    # a notification counts as reaching the server too
    r = a.post({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    assert r.status_code == 202
    assert clients(c) == ["gamma", "alpha", "gamma", "alpha", "gamma"]
    # idle's and gone's clients never reached it; idle still works when it speaks
    assert clients(idle) == ["gamma", "alpha", "gamma", "alpha", "gamma", "idle"]
    for s in (idle, c, a):
        assert s.close().status_code == 200


def test_a_restarted_server_hears_of_the_client_again(mock):
    s = h.Session(mock.url, client_name="survivor")
    assert clients(s) == ["survivor"]
    err = s.call("exit")
    assert "error" in err, err
    deadline = time.time() + 30
    while True:  # restarted after a short backoff; the session survives
        r = s.call("clients")
        if "result" in r:
            break
        assert time.time() < deadline, r
        time.sleep(0.1)
    assert json.loads(text_of(r)) == ["survivor"]
    s.close()


def test_server_requests_reach_a_session_whose_first_message_is_the_call(mock):
    """roots/list from the server during the session's first upstream message:
    it goes to that session's GET stream and its answer back to the server."""
    s = h.Session(mock.url, capabilities={"roots": {}}, client_name="rooted")
    with httpx.Client(timeout=30) as g:
        with g.stream("GET", mock.url, headers={"Accept": "text/event-stream",
                                                "Mcp-Session-Id": s.sid,
                                                "MCP-Protocol-Version": s.version}) as stream:
            assert stream.status_code == 200
            box = {}
            t = threading.Thread(target=lambda: box.update(
                r=s.call("roots", headers={"Accept": "application/json"})))
            t.start()
            buf = ""
            q = None
            for chunk in stream.iter_text():
                buf += chunk
                for ev in h.parse_sse(buf):
                    if ev.get("data"):
                        m = json.loads(ev["data"])
                        if m.get("method") == "roots/list":
                            q = m
                if q:
                    break
            r = s.post({"jsonrpc": "2.0", "id": q["id"],
                        "result": {"roots": [{"uri": "file:///rooted"}]}})
            assert r.status_code == 202, r.text
            t.join(30)
    assert "file:///rooted" in text_of(box["r"])
    assert clients(s) == ["rooted"]
    s.close()


# ------------------------------------------------------------- the daemon

def mcp_session(url, client_name):
    c = httpx.Client(timeout=60)
    r = c.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": client_name, "version": "9"}}},
               headers={"Accept": ACCEPT_BOTH})
    assert r.status_code == 200, r.text
    hd = {"Accept": ACCEPT_BOTH, "Mcp-Session-Id": r.headers["mcp-session-id"],
          "MCP-Protocol-Version": "2025-06-18"}
    assert c.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                  headers=hd).status_code == 202
    return c, hd


def rpc(c, url, hd, rid, method, params):
    r = c.post(url, json={"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
               headers=hd)
    assert r.status_code == 200, r.text
    return r


def proc_io(pid):
    with open(f"/proc/{pid}/io") as f:
        return {k: int(v) for k, v in (line.split(":") for line in f)}


@pytest.fixture(scope="module")
def atlas(tmp_path_factory):
    d = Daemon(str(tmp_path_factory.mktemp("gwsess") / "var")).start()
    with d.client() as api:
        sb = api.post("/local-sandbox", json={"server_names": ["desktop-commander", "filesystem"],
                                              "benchmark": "MCP_Atlas"}).json()
        yield d, sb
        api.delete(f"/local-sandbox/{sb['local_sandbox_id']}")
    d.stop()


def test_native_tools_list_is_the_gateways_copy(atlas):
    """A native server's tools/list in new sessions: the server's own bytes (the
    same as its answer to the gateway's tools/list), and the process reads and
    writes nothing for them (no note, no tools/list)."""
    d, sb = atlas
    url = {s["server_name"]: s["mcp_server_url"] for s in sb["servers"]}["filesystem"]
    pids = [p for p in sandbox_pids(sb["local_sandbox_id"]) if " mcp filesystem " in _cmd(p)]
    assert len(pids) == 1, [(p, _cmd(p)) for p in sandbox_pids(sb["local_sandbox_id"])]
    bodies = []
    before = proc_io(pids[0])
    for i in range(5):
        c, hd = mcp_session(url, "lister-%d" % i)
        bodies.append(rpc(c, url, hd, 7, "tools/list", {}).text)
        assert c.delete(url, headers=hd).status_code == 200
        c.close()
    after = proc_io(pids[0])
    assert after["rchar"] == before["rchar"] and after["wchar"] == before["wchar"], (before, after)
    assert len(set(bodies)) == 1
    tools = json.loads(bodies[0])
    assert tools["id"] == 7 and len(tools["result"]["tools"]) >= 10
    # a request with a cursor is the server's to answer (src/mcp lists every
    # tool on one page): the same list
    c, hd = mcp_session(url, "cursor")
    r = rpc(c, url, hd, 8, "tools/list", {"cursor": "x"})
    c.close()
    up = [m for m in messages(r) if "result" in m][0]
    assert up["id"] == 8 and up["result"] == tools["result"]


def test_desktop_commander_sees_the_calling_client(atlas):
    """get_config's currentClient is the clientInfo of the session that calls,
    even when other sessions opened (and called) in between."""
    d, sb = atlas
    url = {s["server_name"]: s["mcp_server_url"] for s in sb["servers"]}["desktop-commander"]

    def current(c, hd, rid):
        r = rpc(c, url, hd, rid, "tools/call", {"name": "get_config", "arguments": {}})
        msg = [m for m in messages(r) if "result" in m][0]
        text = msg["result"]["content"][0]["text"]
        return json.loads(text[text.index("{"):])["currentClient"]

    a, ha = mcp_session(url, "client-a")
    b, hb = mcp_session(url, "client-b")
    assert current(b, hb, 1) == {"name": "client-b", "version": "9"}
    assert current(a, ha, 2) == {"name": "client-a", "version": "9"}
    assert current(b, hb, 3) == {"name": "client-b", "version": "9"}
    for c, hd in ((a, ha), (b, hb)):
        assert c.delete(url, headers=hd).status_code == 200
        c.close()
