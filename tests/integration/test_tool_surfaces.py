"""The tool surface of every server of every preset equals its benchmark's
pinned upstream, field by field: the list of tool names in order, and for
each tool its title, description, inputSchema, outputSchema and annotations;
plus serverInfo and the protocol version answered to a 2025-06-18 client.

Where the upstream is an npm package it is captured here from the real
package (tests/node, scripts/install-node-tools), started as the preset
starts ours. Where it is a Python package (not installable here) or a build
that npm no longer serves, the reference is a file in tests/surfaces/ whose
provenance is in that folder's README.md.

Data driven: every entry of profiles/*.json ("servers" and "planned") is a
case. A preset server without a pin below fails (record its reference); a
server the preset does not serve yet, or that this build has no native
server for, is reported as not hosted (skipped, naming its upstream)."""
import copy
import json
import os
import re
import subprocess

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PROFILES = os.path.join(ROOT, "profiles")
SURFACES = os.path.join(ROOT, "tests", "surfaces")
NODE = os.path.join(ROOT, "tests", "node", "node22")
MODULES = os.path.join(ROOT, "tests", "node", "node_modules")
FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def npm(entry, *args, env=None):
    """A reference captured live: node ENTRY ARGS ({data} = the preset's /data)."""
    return {"kind": "npm", "entry": os.path.join(MODULES, entry), "args": list(args),
            "env": env or {}}


def ref_file(name, replace=None, set_lines=()):
    """A recorded reference, tests/surfaces/NAME.json; `replace` maps text in
    descriptions to what this preset's settings make of it; description lines
    starting with one of `set_lines` list a Python set (", "-joined, in an
    order that changes with every start of upstream) and are compared as sets.
    "{data}" in a description is the preset's /data (its realpath)."""
    return {"kind": "file", "name": name, "replace": replace or {}, "set_lines": set_lines}


CLI_SETS = ("Available commands: ", "Available flags: ")


def elsewhere(test):
    """The surface is compared with its upstream by a dedicated test (a live
    npm package or the upstream's own texts at its tag), named "FILE::FUNCTION"."""
    return {"kind": "elsewhere", "test": test}


FS_2026 = npm("@modelcontextprotocol/server-filesystem/dist/index.js", "{data}")
FS_2025_11 = npm("server-filesystem-2025.11.25/dist/index.js", "{data}")
FS_2025_7 = npm("server-filesystem-2025.7.1/dist/index.js", "{data}")


def memory(pkg, path):
    return npm(pkg + "/dist/index.js", env={"MEMORY_FILE_PATH": path})


CODE_RUNNER = npm("mcp-server-code-runner/dist/cli.js")

# (preset, server) -> the upstream that preset's benchmark pinned
PINS = {
    ("none", "filesystem"): FS_2026,
    ("MCP_Mark", "filesystem"): FS_2026,
    ("MCP_Atlas", "filesystem"): FS_2025_11,
    ("Toolathlon", "filesystem"): FS_2025_7,
    ("none", "localmemory"): memory("@modelcontextprotocol/server-memory", "{data}/memory.json"),
    ("MCP_Atlas", "localmemory"): memory(
        "@modelcontextprotocol/server-memory",
        "{data}/repos/memory_mcp_server/memories-for-mcp.json"),
    ("Toolathlon", "localmemory"): memory("server-memory-2025.4.25", "{data}/memory/memory.json"),
    ("none", "code-runner"): CODE_RUNNER,
    ("MCP_Atlas", "code-runner"): CODE_RUNNER,
    ("MCP_Atlas", "code-executor"): ref_file("code-executor-0.2.1"),
    # ENV_TYPE=system is an mcpbox addition (docs/servers/code-executor.md):
    # the descriptions name it where upstream names its own type
    ("none", "code-executor"): ref_file("code-executor-0.2.1",
                                        {" venv-uv environment": " system environment"}),
    ("Toolathlon", "code-executor"): ref_file("toolathlon-python-execute"),
    ("none", "git"): ref_file("mcp-server-git-2025.7.1"),
    ("MCP_Atlas", "git"): ref_file("mcp-server-git-2025.7.1"),
    ("Toolathlon", "git"): ref_file("mcp-server-git-2025.1.14"),
    ("none", "terminal"): ref_file("cli-mcp-server-0.2.5-defaults", set_lines=CLI_SETS),
    ("MCP_Atlas", "terminal"): ref_file("cli-mcp-server-0.2.5-atlas", set_lines=CLI_SETS),
    ("Toolathlon", "terminal"): ref_file("cli-mcp-server-lockon-da1dcb5-toolathlon",
                                         set_lines=CLI_SETS),
    ("none", "pdf-tools"): ref_file("pdf-tools-mcp-0.1.4"),
    ("Toolathlon", "pdf-tools"): ref_file("pdf-tools-mcp-0.1.4"),
    ("none", "poste_email_toolathlon"): ref_file("emails-mcp-klavis-669e95dc"),
    ("Toolathlon", "poste_email_toolathlon"): ref_file("emails-mcp-klavis-669e95dc"),
    ("none", "excel"): ref_file("excel-mcp-server-0.1.7"),
    ("Toolathlon", "excel"): ref_file("excel-mcp-server-0.1.4"),
    # generated from upstream main.py at each commit by src/servers/word/gen_surface.py
    ("none", "word"): ref_file("office-word-mcp-server-568d8d8a"),
    ("Toolathlon", "word"): ref_file("office-word-mcp-server-1.1.9"),
    # generated from upstream 2.0.6 by src/servers/powerpoint/gen_surface.py (py_surface rules)
    ("none", "powerpoint"): ref_file("office-powerpoint-mcp-server-2.0.6"),
    ("Toolathlon", "powerpoint"): ref_file("office-powerpoint-mcp-server-2.0.6"),
    # generated from the Klavis copy's server.py by py_surface.py (tests/surfaces/README.md)
    ("none", "google_cloud"): ref_file("google-cloud-mcp-klavis-788dedf8"),
    ("Toolathlon", "google_cloud"): ref_file("google-cloud-mcp-klavis-788dedf8"),
    # the TOOLS array of the fork's src/index.ts (tests/surfaces/README.md)
    ("none", "canvas"): ref_file("canvas-mcp-server-lockon-1097704"),
    ("Toolathlon", "canvas"): ref_file("canvas-mcp-server-lockon-1097704"),
    ("none", "desktop-commander"): elsewhere(
        "test_diff_desktop_commander.py::test_same_results_as_npm_0_2_10"),
    ("MCP_Atlas", "desktop-commander"): elsewhere(
        "test_diff_desktop_commander.py::test_same_results_as_npm_0_2_10"),
    ("MCP_Atlas", "arxiv"): elsewhere("test_server_arxiv.py::test_tools_list_and_server_info"),
    ("Toolathlon", "arxiv"): elsewhere("test_server_arxiv.py::test_tools_list_and_server_info"),
    ("none", "arxiv"): elsewhere("test_server_arxiv.py::test_tools_list_and_server_info"),
    ("none", "playwright"): elsewhere("test_server_playwright.py::test_mcpmark_tools_equal_npm_0_0_68"),
    ("MCP_Mark", "playwright"): elsewhere(
        "test_server_playwright.py::test_mcpmark_tools_equal_npm_0_0_68"),
    ("Toolathlon", "playwright"): elsewhere(
        "test_server_playwright.py::test_toolathlon_tools_are_0_0_32_plus_the_fork"),
}


def native_servers():
    out = subprocess.run([MCPBOX_BIN, "mcp", "--list"], capture_output=True, text=True,
                         timeout=30).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def cases():
    for name in sorted(os.listdir(PROFILES)):
        if not name.endswith(".json"):
            continue
        prof = json.load(open(os.path.join(PROFILES, name)))
        preset = name[:-5]
        for server in prof.get("servers", {}):
            yield preset, server
        for server in prof.get("planned", {}):
            yield preset, server


def load(preset):
    return json.load(open(os.path.join(PROFILES, preset + ".json")))


def expand(s, data):
    return s.replace("${MCPBOX}", os.path.abspath(MCPBOX_BIN)).replace("${DATA}", str(data))


def make_data(tmp_path):
    data = tmp_path / "data"
    for d in ("repos/memory_mcp_server", "repos/mcp_code_executor_workspace/.venv", "memory",
              "code_executor_workspace"):
        (data / d).mkdir(parents=True, exist_ok=True)
    return data


class LogTolerant(StdioClient):
    """Some references print log lines on stdout (mcp-server-code-runner's
    "running on stdio"): anything that is not JSON is skipped."""

    def read_message(self, timeout=None):
        while True:
            try:
                return super().read_message(timeout)
            except json.JSONDecodeError:
                continue


def surface(argv, env, cwd, client=StdioClient):
    with client(argv, env=env, cwd=cwd) as c:
        init = c.initialize(protocol="2025-06-18")
        tools = c.list_tools()
    return {"serverInfo": init["serverInfo"], "protocolVersion": init["protocolVersion"],
            "tools": tools}


def ours(preset, server, data):
    prof = load(preset)
    entry = prof["servers"][server]
    argv = [expand(a, data) for a in entry["argv"]]
    env = {k: expand(v, data)
           for k, v in {**prof.get("base_env", {}), **entry.get("env", {})}.items()}
    return surface(argv, env, expand(entry.get("cwd", "${DATA}"), data))


def reference(pin, data):
    if pin["kind"] == "npm":
        if not (os.path.exists(NODE) and os.path.exists(pin["entry"])):
            pytest.skip("Node peers missing: run scripts/install-node-tools")
        args = [a.replace("{data}", str(data)) for a in pin["args"]]
        env = {k: v.replace("{data}", str(data)) for k, v in pin["env"].items()}
        return surface([NODE, pin["entry"], *args], env, str(data), client=LogTolerant)
    path = os.path.join(SURFACES, pin["name"] + ".json")
    assert os.path.exists(path), f"no recorded reference {path}"
    ref = copy.deepcopy(json.load(open(path)))
    for tool in ref["tools"]:
        if isinstance(tool.get("description"), str):
            for old, new in pin["replace"].items():
                tool["description"] = tool["description"].replace(old, new)
            tool["description"] = tool["description"].replace("{data}", os.path.realpath(data))
    return ref


def sort_set_lines(surf, prefixes):
    """Description lines that print a set, with their items sorted."""
    for tool in surf["tools"]:
        desc = tool.get("description")
        if not prefixes or not isinstance(desc, str):
            continue
        lines = desc.split("\n")
        for i, line in enumerate(lines):
            for p in prefixes:
                if line.startswith(p):
                    lines[i] = p + ", ".join(sorted(line[len(p):].split(", ")))
        tool["description"] = "\n".join(lines)


def diff(ref, got):
    """Every difference, as readable lines."""
    out = []
    for key in ("serverInfo", "protocolVersion"):
        if key in ref and ref[key] != got[key]:
            out.append(f"{key}: upstream {ref[key]!r}, served {got[key]!r}")
    rn = [t["name"] for t in ref["tools"]]
    gn = [t["name"] for t in got["tools"]]
    if rn != gn:
        out.append(f"tool names: upstream {rn}, served {gn}")
    gt = {t["name"]: t for t in got["tools"]}
    for t in ref["tools"]:
        g = gt.get(t["name"])
        if g is None:
            continue
        for f in FIELDS:
            if t.get(f) != g.get(f):
                out.append(f"{t['name']}.{f}: upstream {json.dumps(t.get(f))}\n"
                           f"{' ' * len(t['name'])}  served   {json.dumps(g.get(f))}")
        extra = set(g) - set(FIELDS) - {"execution", "icons", "_meta"}
        if extra:
            out.append(f"{t['name']}: served fields upstream has no name for: {sorted(extra)}")
    return out


@pytest.mark.parametrize("preset,server", list(cases()), ids=[f"{p}-{s}" for p, s in cases()])
def test_tool_surface_equals_pinned_upstream(tmp_path, preset, server):
    prof = load(preset)
    if server not in prof.get("servers", {}):
        up = prof["planned"][server].get("upstream", "?")
        pytest.skip(f"not hosted: {preset} does not serve {server} yet (planned: {up})")
    pin = PINS.get((preset, server))
    assert pin, (f"{preset}/{server} has no pinned reference: add it to PINS "
                 f"(upstream per the profile: {prof['servers'][server].get('upstream')})")
    if pin["kind"] == "elsewhere":
        pytest.skip(f"compared with its upstream by {pin['test']}")
    if server not in native_servers():
        pytest.skip(f"not hosted: this build has no native server {server}")
    data = make_data(tmp_path)
    got = ours(preset, server, data)
    ref = reference(pin, data)
    sort_set_lines(ref, pin.get("set_lines"))
    sort_set_lines(got, pin.get("set_lines"))
    problems = diff(ref, got)
    assert not problems, f"{preset}/{server} differs from its pinned upstream:\n" + \
        "\n".join(problems)


def test_every_pin_is_a_preset_server():
    """A pin whose preset entry was renamed or removed is stale."""
    served = {(p, s) for p, s in cases() if s in load(p).get("servers", {})}
    assert set(PINS) <= served, sorted(set(PINS) - served)


def test_pins_checked_elsewhere_name_real_tests():
    for pin in PINS.values():
        if pin["kind"] != "elsewhere":
            continue
        fname, func = pin["test"].split("::")
        with open(os.path.join(HERE, fname)) as f:
            assert re.search(r"^def %s\(" % re.escape(func), f.read(), re.M), pin["test"]


def test_the_comparison_sees_a_difference(tmp_path):
    """The comparison is not blind: a pinned upstream with one word changed in
    one description, one tool missing, and another protocol fails it."""
    data = make_data(tmp_path)
    got = ours("Toolathlon", "filesystem", data)
    ref = copy.deepcopy(got)
    ref["tools"][0]["description"] += " (changed)"
    ref["tools"].pop()
    ref["protocolVersion"] = "2024-11-05"
    problems = diff(ref, got)
    assert len(problems) == 3, problems
