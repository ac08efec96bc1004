"""Every server entry of every preset in profiles/ starts as written: placeholders
substituted the way the loader does (${MCPBOX}, ${DATA}), the entry's env over the
base_env, then initialize + tools/list succeed and report the expected tool sets."""
import json
import os
import subprocess

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient

HERE = os.path.dirname(__file__)
PROFILES = os.path.join(HERE, "..", "..", "profiles")
NAMES = ["none", "MCP_Atlas", "Toolathlon", "MCP_Mark"]

# tool counts the presets promise (upstream versions in the profile)
EXPECTED_TOOLS = {
    ("MCP_Atlas", "git"): 13, ("Toolathlon", "git"): 11, ("none", "git"): 13,
    ("MCP_Atlas", "terminal"): 2, ("Toolathlon", "terminal"): 2,
    ("MCP_Atlas", "code-executor"): 9, ("Toolathlon", "code-executor"): 1,
    ("MCP_Atlas", "code-runner"): 1, ("MCP_Atlas", "localmemory"): 9,
    ("MCP_Atlas", "desktop-commander"): 21, ("none", "desktop-commander"): 21,
    ("MCP_Atlas", "filesystem"): 14, ("MCP_Mark", "filesystem"): 14, ("Toolathlon", "filesystem"): 12,
    ("Toolathlon", "localmemory"): 9,
    ("Toolathlon", "pdf-tools"): 9, ("none", "pdf-tools"): 9,
    ("Toolathlon", "playwright"): 31, ("MCP_Mark", "playwright"): 22, ("none", "playwright"): 22,
}


def expand(s, data, prof=None):
    s = s.replace("${MCPBOX}", os.path.abspath(MCPBOX_BIN)).replace("${DATA}", str(data))
    # sandbox.binds: a path inside the sandbox is its host path here
    for inside, host in (prof or {}).get("sandbox", {}).get("binds", {}).items():
        if s.startswith(inside + "/") or s == inside:
            s = os.path.abspath(os.path.join(PROFILES, "..", host)) + s[len(inside):]
    return s


def entries():
    for name in NAMES:
        prof = json.load(open(os.path.join(PROFILES, name + ".json")))
        for server, entry in prof["servers"].items():
            yield name, server, prof, entry


@pytest.mark.parametrize("name,server,prof,entry", list(entries()),
                         ids=[f"{n}-{s}" for n, s, _, _ in entries()])
def test_preset_server_starts(tmp_path, name, server, prof, entry):
    data = tmp_path / "data"
    (data / "repos" / "memory_mcp_server").mkdir(parents=True)
    (data / "memory").mkdir()
    argv = [expand(a, data, prof) for a in entry["argv"]]
    env = {k: expand(v, data) for k, v in {**prof.get("base_env", {}), **entry.get("env", {})}.items()}
    cwd = expand(entry.get("cwd", "${DATA}"), data)
    with StdioClient(argv, env=env, cwd=cwd) as c:
        init = c.initialize()
        assert init["serverInfo"]["name"]
        tools = c.list_tools()
        want = EXPECTED_TOOLS.get((name, server))
        if want is not None:
            assert len(tools) == want, [t["name"] for t in tools]
    assert c.proc.returncode == 0, c.stderr()


def test_planned_servers_are_not_offered():
    for name in NAMES:
        prof = json.load(open(os.path.join(PROFILES, name + ".json")))
        for planned in prof.get("planned", {}):
            assert planned not in prof["servers"]


def test_every_native_server_is_known():
    listing = subprocess.run([MCPBOX_BIN, "mcp", "--list"], capture_output=True, text=True,
                             timeout=30).stdout
    for _, server, _, entry in entries():
        if entry["argv"][1] == "playwright":  # the real npm package under `mcpbox playwright`
            continue
        assert entry["argv"][1:3] == ["mcp", server]
        assert server in listing
