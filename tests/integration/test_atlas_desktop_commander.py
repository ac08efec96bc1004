"""MCP-Atlas with desktop-commander, through the daemon and the gateway:
  - the acquire with Atlas's exact request (its 8 servers, benchmark
    MCP_Atlas) has every server the profile offers ready (all 8 once arxiv
    is in profiles/MCP_Atlas.json; until then arxiv answers that it is not
    available);
  - the public sample trajectories that call desktop-commander
    (../shared/bench-data/mcp-atlas/sample_tasks.json) are replayed as the
    Atlas harness runs them - one sandbox per task, the harness's
    set_config_value right after tools/list, then one MCP session per tool
    call with the Python SDK's clientInfo - and every recorded output is
    reproduced byte for byte, masking only clientId, firstUsed and lastUsed;
    /data is the Atlas seed that scripts/build-atlas-seed makes (the 8 git
    clones stand in as empty directories: the listing is what matters here);
  - the same from a warm-pool sandbox (its server initialized long before);
  - a python3 REPL started with start_process keeps its state across MCP
    sessions (one server process per sandbox), and its processes are killed
    when the sandbox is released;
  - a reset kills them too, and the server starts with a fresh config.
"""
import json
import os
import random
import re
import subprocess
import time

import httpx
import pytest

from conftest import Daemon
from gwharness import ACCEPT_BOTH, messages

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BENCH = "/work/shared/bench-data/mcp-atlas"
ATLAS_REQUEST = ["filesystem", "git", "terminal", "desktop-commander", "arxiv", "code-executor",
                 "code-runner", "localmemory"]
PY_CLIENT = {"name": "mcp", "version": "0.1.0"}

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(BENCH, "sample_tasks.json")),
                                reason="bench data not present: " + BENCH)


class Mcp:
    """One MCP session over Streamable HTTP, opened as the Python SDK opens it."""

    def __init__(self, url):
        self.url, self.http, self.next_id = url, httpx.Client(timeout=120), 1
        r = self.http.post(url, headers={"Accept": ACCEPT_BOTH}, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": PY_CLIENT}})
        assert r.status_code == 200, r.text
        self.sid = r.headers["mcp-session-id"]
        self.version = messages(r)[0]["result"]["protocolVersion"]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202

    def post(self, body):
        return self.http.post(self.url, json=body, headers={
            "Accept": ACCEPT_BOTH, "Mcp-Session-Id": self.sid, "MCP-Protocol-Version": self.version})

    def request(self, method, params):
        rid, self.next_id = self.next_id, self.next_id + 1
        r = self.post({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        assert r.status_code == 200, r.text
        return [m for m in messages(r) if m.get("id") == rid][0]["result"]

    def call(self, tool, args):
        return self.request("tools/call", {"name": tool, "arguments": args})

    def close(self):
        self.http.delete(self.url, headers={"Mcp-Session-Id": self.sid,
                                            "MCP-Protocol-Version": self.version})
        self.http.close()


def once(url, tool, args):
    s = Mcp(url)
    try:
        return s.call(tool, args)
    finally:
        s.close()


def text(result):
    return "".join(c["text"] for c in result["content"] if c["type"] == "text")


def mask(t):
    t = re.sub(r'"clientId": "[0-9a-f-]{36}"', '"clientId": "@ID"', t)
    return re.sub(r'"(firstUsed|lastUsed)": \d+', r'"\1": @MS', t)


def build_seed(root):
    seed = os.path.join(root, "seed")
    r = subprocess.run([os.path.join(REPO, "scripts", "build-atlas-seed"), seed, "--from",
                        os.path.join(BENCH, "data"), "--no-venv"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(BENCH, "data", "repos", "git_submodule_info.csv")) as f:
        for line in f:
            name = os.path.basename(line.strip().split(",")[2])
            os.makedirs(os.path.join(seed, "repos", name), exist_ok=True)
    return seed


@pytest.fixture(scope="module")
def atlas(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("atlas-dc"))
    d = Daemon(os.path.join(root, "var"), ["--seed", "MCP_Atlas=" + build_seed(root)]).start()
    yield d
    d.stop()
    subprocess.run([os.environ.get("MCPBOX_BIN", os.path.join(REPO, "build", "asan", "mcpbox")),
                    "sandbox", "sweep", os.path.join(root, "var")])


def offered():
    prof = json.load(open(os.path.join(REPO, "profiles", "MCP_Atlas.json")))
    return [s for s in ATLAS_REQUEST if s in prof["servers"]]


def acquire(api):
    """Atlas's exact request; every server the profile offers is ready (all 8
    once arxiv is there), a missing one says so."""
    names = offered()
    assert "desktop-commander" in names
    r = api.post("/local-sandbox", json={"server_names": ATLAS_REQUEST, "benchmark": "MCP_Atlas"})
    assert r.status_code == 201, r.text
    sb = r.json()
    assert sorted(s["server_name"] for s in sb["servers"]) == sorted(ATLAS_REQUEST)
    for s in sb["servers"]:
        if s["server_name"] in names:
            assert s["metadata"]["ready"], s
        else:
            assert "is not available in the 'MCP_Atlas' profile" in json.dumps(s), s
    return sb, {s["server_name"]: s["mcp_server_url"] for s in sb["servers"]}


def dc_tasks():
    tasks = json.load(open(os.path.join(BENCH, "sample_tasks.json")))
    return [t for t in tasks if "desktop-commander" in t["servers_used"]]


@pytest.mark.parametrize("task", dc_tasks(), ids=lambda t: t["task_id"])
def test_trajectory_outputs_byte_for_byte(atlas, task):
    with atlas.client() as api:
        replay(api, task)


def test_trajectory_from_the_warm_pool(tmp_path):
    """A pool sandbox's server was initialized by the gateway long before the
    client came: get_config still shows the client's own clientInfo."""
    root = str(tmp_path)
    d = Daemon(os.path.join(root, "var"), ["--pool", "MCP_Atlas=1",
                                           "--seed", "MCP_Atlas=" + build_seed(root)]).start()
    try:
        with d.client() as api:
            deadline = time.time() + 120
            while api.get("/healthz").json().get("pool", {}).get("MCP_Atlas", {}).get("idle", 0) < 1:
                assert time.time() < deadline, api.get("/healthz").json()
                time.sleep(0.2)
            task = [t for t in dc_tasks() if t["task_id"] == "68993ef3cf3e953b8ab83fa9"][0]
            replay(api, task)
    finally:
        d.stop()
        subprocess.run([os.environ.get("MCPBOX_BIN", os.path.join(REPO, "build", "asan", "mcpbox")),
                        "sandbox", "sweep", os.path.join(root, "var")])


def replay(api, task):
    """One Atlas task as the harness runs it, in a sandbox of its own."""
    sb, urls = acquire(api)
    url = urls["desktop-commander"]
    # the harness: tools/list, then set_config_value on the same client
    s = Mcp(url)
    names = [t["name"] for t in s.request("tools/list", {})["tools"]]
    assert len(names) == 21
    r = s.call("set_config_value", {"key": "allowedDirectories", "value": ["/data"]})
    assert not r.get("isError"), r
    s.close()
    replayed = 0
    traj = task["trajectory"]
    for i, m in enumerate(traj):
        for call in m.get("tool_calls") or []:
            name = call["function"]["name"]
            if not name.startswith("desktop-commander_"):
                continue
            recorded = [x for x in traj if x.get("tool_call_id") == call["id"]][0]["content"]
            res = once(url, name[len("desktop-commander_"):],
                       json.loads(call["function"]["arguments"]))
            assert not res.get("isError"), res
            assert len(res["content"]) == len(recorded) == 1
            assert mask(res["content"][0]["text"]) == mask(recorded[0]["text"]), name
            replayed += 1
    assert replayed >= 3
    assert api.delete(f"/local-sandbox/{sb['local_sandbox_id']}").status_code == 200


def host_pids(pattern):
    r = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def test_repl_across_sessions_and_killed_at_release(atlas):
    with atlas.client() as api:
        sb, urls = acquire(api)
        url = urls["desktop-commander"]
        r = once(url, "start_process", {"command": "python3 -i", "timeout_ms": 10000})
        pid = int(re.match(r"Process started with PID (\d+) ", text(r)).group(1))
        assert text(r).endswith('waiting for input (detected: ">>>")'), text(r)
        once(url, "interact_with_process", {"pid": pid, "input": "x = 41"})
        r = once(url, "interact_with_process", {"pid": pid, "input": "print(x + 1)"})
        assert "Output:\n42\n" in text(r), text(r)
        r = once(url, "list_sessions", {})
        assert text(r).startswith(f"PID: {pid}, Blocked: true, Runtime: ")
        # the pid is the sandbox's own (its pid namespace)
        r = once(url, "list_processes", {})
        assert f"PID: {pid}, Command: -i," in text(r), text(r)
        # a long-lived process of the sandbox, found on the host by its marker
        marker = "%d.%d" % (80000 + random.randrange(9999), random.randrange(99))
        r = once(url, "start_process", {"command": "sleep " + marker, "timeout_ms": 300})
        assert "Process is running" in text(r)
        assert host_pids("sleep " + marker)
        # it runs in the sandbox: cwd /data, the Atlas seed, no host /root
        r = once(url, "start_process", {"command": "pwd; ls -A /data/repos | head -2; ls /root",
                                        "timeout_ms": 3000})
        assert "Initial output:\n/data\n.DS_Store\nballdontlie-mcp\n" in text(r), text(r)
        assert "cannot access '/root'" in text(r)
        assert api.delete(f"/local-sandbox/{sb['local_sandbox_id']}").status_code == 200
        deadline = time.time() + 15
        while host_pids("sleep " + marker) and time.time() < deadline:
            time.sleep(0.1)
        assert not host_pids("sleep " + marker)


def test_reset_kills_processes_and_starts_afresh(atlas):
    with atlas.client() as api:
        sb, urls = acquire(api)
        url = urls["desktop-commander"]
        once(url, "set_config_value", {"key": "fileReadLineLimit", "value": 7})
        marker = "%d.%d" % (70000 + random.randrange(9999), random.randrange(99))
        once(url, "start_process", {"command": "sleep " + marker, "timeout_ms": 300})
        assert host_pids("sleep " + marker)
        r = api.post(f"/local-sandbox/{sb['local_sandbox_id']}/reset")
        assert r.status_code == 200, r.text
        deadline = time.time() + 15
        while host_pids("sleep " + marker) and time.time() < deadline:
            time.sleep(0.1)
        assert not host_pids("sleep " + marker)
        assert text(once(url, "list_sessions", {})) == "No active sessions"
        # its state was in the sandbox's /tmp, which reset empties: a fresh config
        cfg = json.loads(text(once(url, "get_config", {})).split("\n", 1)[1])
        assert cfg["fileReadLineLimit"] == 1000 and cfg["allowedDirectories"] == ["/data"]
        assert cfg["usageStats"]["toolCounts"] == {"list_sessions": 1}
        assert api.delete(f"/local-sandbox/{sb['local_sandbox_id']}").status_code == 200
