"""`mcpbox mcp desktop-commander` over stdio: what 0.2.7 (MCP-Atlas's pin)
does where it differs from the npm 0.2.10 that test_diff_desktop_commander.py
compares against - initialize, the descriptions, get_config and the usage
statistics (checked against the get_config text an MCP-Atlas trajectory
recorded), the process tools with real processes (a python3 REPL keeps its
state), and mcpbox's one deliberate difference: symlinks never lead out of
the allowed directories."""
import json
import os
import re
import signal
import time

import pytest

from mcp_stdio import StdioClient

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MCPBOX = os.environ.get("MCPBOX_BIN", os.path.join(ROOT, "build", "asan", "mcpbox"))
ATLAS_TASKS = "/work/shared/bench-data/mcp-atlas/sample_tasks.json"

NAMES = ["get_config", "set_config_value", "read_file", "read_multiple_files", "write_file",
         "create_directory", "list_directory", "move_file", "search_files", "search_code",
         "get_file_info", "edit_block", "start_process", "read_process_output",
         "interact_with_process", "force_terminate", "list_sessions", "list_processes",
         "kill_process", "get_usage_stats", "give_feedback_to_desktop_commander"]

ATLAS_CLIENT = {"name": "mcp", "version": "0.1.0"}  # the Python SDK's default clientInfo


@pytest.fixture
def dirs(tmp_path):
    root, home, state = tmp_path / "data", tmp_path / "home", tmp_path / "state"
    for d in (root, home):
        d.mkdir()
    return str(root), str(home), str(state)


def server(dirs, *extra):
    root, home, state = dirs
    return StdioClient([MCPBOX, "mcp", "desktop-commander", "--allowed-dir", root,
                        "--state-dir", state, *extra], env={"HOME": home}, cwd=root)


def init(c, client=ATLAS_CLIENT, version="2025-06-18"):
    return c.result("initialize", {"protocolVersion": version, "capabilities": {},
                                   "clientInfo": client})


def text(res):
    return StdioClient.text(res)


def mask(t):
    t = re.sub(r'"clientId": "[0-9a-f-]{36}"', '"clientId": "@ID"', t)
    return re.sub(r'"(firstUsed|lastUsed)": \d+', r'"\1": @MS', t)


def test_initialize_and_tools_list(dirs):
    with server(dirs) as c:
        r = init(c, version="2025-11-25")
        assert r["protocolVersion"] == "2024-11-05"
        assert r["capabilities"] == {"tools": {}, "resources": {}, "prompts": {}, "logging": {}}
        assert r["serverInfo"] == {"name": "desktop-commander", "version": "0.2.7"}
        c.notify("notifications/initialized")
        tools = c.list_tools()
        assert [t["name"] for t in tools] == NAMES
        assert c.result("resources/list", {}) == {"resources": []}
        assert c.result("prompts/list", {}) == {"prompts": []}
        desc = {t["name"]: t["description"] for t in tools}
        # 0.2.7's system info: no container detection, Linux guidance
        assert not any("DOCKER" in d or "Docker" in d for d in desc.values())
        assert "Running on Linux. Default shell: bash." in desc["start_process"]
        assert ("IMPORTANT: Always use absolute paths for reliability. Paths are automatically "
                "normalized regardless of slash direction. Relative paths may fail") in desc["read_file"]
        for t in tools:
            assert t["inputSchema"]["$schema"] == "http://json-schema.org/draft-07/schema#"
        # an unknown tool is an ordinary error result
        r = c.call("nope", {})
        assert r["isError"] and text(r) == "Error: Unknown tool: nope"


def test_get_config_as_an_atlas_trajectory_recorded(dirs):
    if not os.path.exists(ATLAS_TASKS):
        pytest.skip("bench data not present: " + ATLAS_TASKS)
    recorded = None
    for task in json.load(open(ATLAS_TASKS)):
        for i, m in enumerate(task["trajectory"]):
            for call in m.get("tool_calls") or []:
                if call["function"]["name"] == "desktop-commander_get_config":
                    recorded = task["trajectory"][i + 1]["content"][0]["text"]
    assert recorded
    with server(dirs) as c:
        init(c)
        c.notify("notifications/initialized")
        # what the Atlas harness does right after tools/list
        r = c.call("set_config_value", {"key": "allowedDirectories", "value": ["/data"]})
        assert not r.get("isError"), r
        assert text(r).startswith('Successfully set allowedDirectories to [\n  "/data"\n]\n\n'
                                  'Updated configuration:\n{\n  "blockedCommands": [')
        got = text(c.call("get_config", {}))
        assert mask(got) == mask(recorded)
        cfg = json.loads(got.split("\n", 1)[1])
        assert cfg["usageStats"]["firstUsed"] <= cfg["usageStats"]["lastUsed"] <= time.time() * 1000
        stats = text(c.call("get_usage_stats", {}))
        assert stats.startswith("\U0001F4CA **Usage Summary**\n\u2022 Total calls: 2 (2 successful, 0 failed)\n"
                                "\u2022 Success rate: 100%\n\u2022 Days using: 0\n\u2022 Sessions: 2\n"
                                "\u2022 Unique tools: 2\n\u2022 Most used: set_config_value: 1, get_config: 1\n"), stats
    # the config lives in --state-dir, not in HOME
    root, home, state = dirs
    saved = json.load(open(os.path.join(state, ".claude-server-commander", "config.json")))
    assert saved["allowedDirectories"] == ["/data"] and saved["version"] == "0.2.7"
    assert not os.path.exists(os.path.join(home, ".claude-server-commander"))
    # a restart keeps it, as upstream's config.json does
    with server(dirs) as c:
        init(c, client={"name": "other", "version": "2"})
        cfg = json.loads(text(c.call("get_config", {})).split("\n", 1)[1])
        assert cfg["allowedDirectories"] == ["/data"]
        assert cfg["clientId"] == saved["clientId"]
        assert cfg["currentClient"] == {"name": "other", "version": "2"}
        assert cfg["usageStats"]["totalToolCalls"] == 3


def test_set_config_value_texts(dirs):
    with server(dirs) as c:
        init(c)
        r = c.call("set_config_value", {"key": "fileReadLineLimit", "value": 3})
        assert text(r).startswith("Successfully set fileReadLineLimit to 3\n\nUpdated configuration:\n")
        # a string that holds JSON is parsed; allowedDirectories always becomes an array
        r = c.call("set_config_value", {"key": "allowedDirectories", "value": '["/x", "/y"]'})
        assert text(r).startswith('Successfully set allowedDirectories to [\n  "/x",\n  "/y"\n]')
        r = c.call("set_config_value", {"key": "allowedDirectories", "value": "/only"})
        assert text(r).startswith('Successfully set allowedDirectories to [\n  "/only"\n]')
        r = c.call("set_config_value", {"value": 1})
        assert r["isError"] and text(r).startswith("Invalid arguments: ")
        r = c.call("read_file", {"path": "/etc/hostname"})
        assert r["isError"]
        assert text(r) == ("Error: Path not allowed: /etc/hostname. Must be within one of these "
                           "directories: /only")


def start(c, command, timeout_ms=3000, **kw):
    r = c.call("start_process", dict(command=command, timeout_ms=timeout_ms, **kw))
    m = re.match(r"Process started with PID (\d+) \(shell: ([^)]*)\)\nInitial output:\n", text(r))
    assert m, text(r)
    return int(m.group(1)), text(r)[m.end():]


def test_python_repl_keeps_its_state(dirs):
    with server(dirs) as c:
        init(c)
        pid, out = start(c, "python3 -i", 10000)
        assert out.endswith(">>> \n\U0001F504 Process %d is waiting for input (detected: \">>>\")" % pid), out
        r = c.call("interact_with_process", {"pid": pid, "input": "x = 41"})
        assert text(r).startswith("\u2705 Input executed in process %d" % pid)
        r = c.call("interact_with_process", {"pid": pid, "input": "print(x + 1)"})
        assert text(r) == ("\u2705 Input executed in process %d:\n\n\U0001F4E4 Output:\n42\n\n\n"
                           "\U0001F504 Process %d is waiting for input (detected: \">>>\")" % (pid, pid))
        r = c.call("interact_with_process", {"pid": pid, "input": "y = 1", "wait_for_prompt": False})
        assert text(r) == ("\u2705 Input sent to process %d. Use read_process_output to get the "
                           "response." % pid)
        r = c.call("interact_with_process", {"pid": pid, "input": "print(x * y * 2)"})
        assert "\n82\n" in text(r)
        assert text(c.call("list_sessions", {})).startswith("PID: %d, Blocked: true, Runtime: " % pid)
        r = c.call("force_terminate", {"pid": pid})
        assert text(r) == "Successfully initiated termination of session %d" % pid
        deadline = time.time() + 10
        while "PID: %d," % pid in text(c.call("list_sessions", {})) and time.time() < deadline:
            time.sleep(0.1)
        assert text(c.call("list_sessions", {})) == "No active sessions"
        r = c.call("read_process_output", {"pid": pid})
        # 0.2.7: a finished session is no longer found (0.2.10 shows its output)
        assert r["isError"] and text(r) == "No active session found for PID %d" % pid


def test_process_texts(dirs):
    with server(dirs) as c:
        init(c)
        pid, out = start(c, "printf 'hello\\n'")
        assert out == "hello\n", out
        pid, out = start(c, "sleep 30", 300)
        assert out == "\n\u23F3 Process is running. Use read_process_output to get more output."
        r = c.call("read_process_output", {"pid": pid, "timeout_ms": 300})
        assert text(r) == ("No new output available\n\u23F1\uFE0F Timeout reached - process may "
                           "still be running")
        # kill_process signals any pid (here: the sleep, a real process)
        r = c.call("kill_process", {"pid": pid})
        assert text(r) == "Successfully terminated process %d" % pid
        deadline = time.time() + 10
        while "PID: %d," % pid in text(c.call("list_sessions", {})) and time.time() < deadline:
            time.sleep(0.1)
        assert "PID: %d," % pid not in text(c.call("list_sessions", {}))
        r = c.call("kill_process", {"pid": 2 ** 22 + 17})
        assert r["isError"] and text(r) == "Error: Failed to kill process: kill ESRCH"
        for cmd in ("sudo ls", "ls | grep x; mount /dev/x /mnt", "FOO=1 shutdown now"):
            r = c.call("start_process", {"command": cmd, "timeout_ms": 300})
            assert r["isError"] and text(r) == "Error: Command not allowed: " + cmd
        r = c.call("force_terminate", {"pid": 999999})
        assert text(r) == "No active session found for PID 999999"
        r = c.call("start_process", {"command": "true"})
        assert r["isError"] and text(r).startswith('Error: [\n  {\n    "code": "invalid_type"')
        # the shell argument, and the configured default
        pid, out = start(c, "echo $0", shell="/bin/bash")
        assert out.startswith("/bin/bash\n"), out
        c.call("set_config_value", {"key": "defaultShell", "value": "/bin/bash"})
        r = c.call("start_process", {"command": "echo hi", "timeout_ms": 3000})
        assert text(r).startswith("Process started with PID ") and "(shell: /bin/bash)" in text(r)
        # list_processes: ps aux, the last word of each command
        r = c.call("list_processes", {})
        lines = text(r).split("\n")
        line_re = r"PID: \d+, Command: \S*, CPU: \S+, Memory: \S+"
        assert [l for l in lines if not re.fullmatch(line_re, l)] == []
        assert any(l.startswith("PID: %d, Command: " % c.proc.pid) for l in lines)


def test_processes_end_with_the_server(dirs):
    with server(dirs) as c:
        init(c)
        pid, _ = start(c, "sleep 600", 300)
        os.kill(pid, 0)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the child outlived its server")


def test_symlinks_never_lead_out(dirs, tmp_path):
    root = dirs[0]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    os.symlink(str(outside), os.path.join(root, "escape"))
    os.symlink(str(outside / "secret.txt"), os.path.join(root, "secret-link"))
    with open(os.path.join(root, "inside.txt"), "w") as f:
        f.write("fine\n")
    os.symlink("inside.txt", os.path.join(root, "good-link"))
    refused = "Error: Path not allowed: %s. Must be within one of these directories: " + root
    with server(dirs) as c:
        init(c)
        calls = [
            ("read_file", {"path": root + "/escape/secret.txt"}),
            ("read_file", {"path": root + "/secret-link"}),
            ("read_multiple_files", {"paths": [root + "/secret-link"]}),
            ("write_file", {"path": root + "/escape/new.txt", "content": "x"}),
            ("create_directory", {"path": root + "/escape/d"}),
            ("list_directory", {"path": root + "/escape"}),
            ("move_file", {"source": root + "/inside.txt", "destination": root + "/escape/m.txt"}),
            ("get_file_info", {"path": root + "/secret-link"}),
            ("search_files", {"path": root + "/escape", "pattern": "secret"}),
            ("search_code", {"path": root + "/escape", "pattern": "secret"}),
            ("edit_block", {"file_path": root + "/secret-link", "old_string": "secret",
                            "new_string": "x"}),
        ]
        for tool, args in calls:
            r = c.call(tool, args)
            t = text(r)
            path = args.get("path") or args.get("file_path") or args.get("destination") or args["paths"][0]
            if tool in ("search_files", "search_code"):
                # upstream answers a refused root as an empty search
                assert t == "No matches found or search timed out after 30000ms.", t
                continue
            if tool == "read_multiple_files":
                assert t == path + ": Error - Path not allowed: %s. Must be within one of these " \
                    "directories: %s" % (path, root), t
                continue
            assert r.get("isError"), (tool, t)
            assert (refused % path) in t, (tool, t)
        assert text(c.call("read_file", {"path": root + "/good-link"})).endswith("\n\nfine")
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret\n"
    assert os.path.exists(os.path.join(root, "inside.txt"))


def test_hostile_arguments_never_crash(dirs):
    """Every tool with arguments of every wrong shape: an answer each time
    (the ASan build aborts on any memory error), and the server lives on."""
    root = dirs[0]
    odd = [None, True, -0.0, 1e308, -1e308, 2.5, 4194321, "", "\u0000", "x" * 70000,
           "../" * 50 + "etc/passwd", "~", "~/x", root + "/\u00e9\U0001F600", [], [None], {},
           {"a": [1, {"b": 2}]}]
    keys = ["path", "paths", "content", "mode", "source", "destination", "pattern", "timeoutMs",
            "filePattern", "ignoreCase", "maxResults", "includeHidden", "contextLines",
            "file_path", "old_string", "new_string", "expected_replacements", "command",
            "timeout_ms", "shell", "pid", "input", "wait_for_prompt", "key", "value", "offset",
            "length", "isUrl"]
    with server(dirs) as c:
        init(c)
        n = 0
        for tool in NAMES:
            if tool in ("kill_process", "give_feedback_to_desktop_commander", "list_processes"):
                continue
            for i, v in enumerate(odd):
                args = {k: v for k in keys}
                if tool == "set_config_value":
                    args = {"key": "x%d" % i, "value": v}
                if tool == "start_process":
                    args["timeout_ms"] = 50
                if tool in ("read_process_output", "interact_with_process"):
                    args["timeout_ms"] = 50
                r = c.call(tool, args)
                assert "content" in r, (tool, v, r)
                n += 1
            # arguments that are not an object at all
            for raw in (None, [], "x", 5):
                r = c.request("tools/call", {"name": tool, "arguments": raw})
                assert "result" in r or "error" in r
        for pid in (1e308, 2.5, "x", None, 4194321):
            r = c.call("kill_process", {"pid": pid})
            assert r["isError"], r
        assert n > 300
        assert text(c.call("list_sessions", {})) is not None
        assert c.call("get_config", {})["content"]
    assert c.proc.returncode == 0, c.stderr()[-3000:]


def test_telemetry_is_never_sent(dirs, tmp_path):
    """The config says telemetryEnabled true and has a clientId, as upstream's;
    upstream then posts every call to Google Analytics. Here no socket of an
    internet family is ever opened, by the server or anything it runs, over
    a session that touches every kind of tool (strace -f)."""
    import shutil
    strace = shutil.which("strace")
    if not strace:
        pytest.skip("strace not installed (scripts/install-deps --test)")
    root, home, state = dirs
    with open(os.path.join(root, "f.txt"), "w") as f:
        f.write("alpha\nbeta\n")
    trace = str(tmp_path / "trace")
    argv = [strace, "-f", "-qq", "-e", "trace=socket,connect,sendto,sendmsg", "-o", trace,
            MCPBOX, "mcp", "desktop-commander", "--allowed-dir", root, "--state-dir", state]
    with StdioClient(argv, env={"HOME": home}, cwd=root, timeout=60) as c:
        init(c)
        c.call("set_config_value", {"key": "allowedDirectories", "value": [root]})
        cfg = json.loads(text(c.call("get_config", {})).split("\n", 1)[1])
        assert cfg["telemetryEnabled"] is True and re.fullmatch(r"[0-9a-f-]{36}", cfg["clientId"])
        c.call("read_file", {"path": root + "/f.txt"})
        c.call("read_file", {"path": "https://www.google-analytics.com/mp/collect", "isUrl": True})
        c.call("edit_block", {"file_path": root + "/f.txt", "old_string": "betta", "new_string": "b"})
        c.call("search_code", {"path": root, "pattern": "alpha"})
        c.call("start_process", {"command": "echo hi", "timeout_ms": 3000})
        c.call("give_feedback_to_desktop_commander", {})
        c.call("get_usage_stats", {})
    calls = open(trace).read()
    inet = [l for l in calls.splitlines() if "AF_INET" in l]
    assert inet == [], inet


def test_config_that_cannot_be_saved(tmp_path):
    """A config directory that cannot be made: defaults in memory (version
    and clientId included), and set_config_value says what fs.writeFile said."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    state = str(blocker / "state")
    with StdioClient([MCPBOX, "mcp", "desktop-commander", "--state-dir", state],
                     env={"HOME": str(tmp_path)}, cwd=str(tmp_path)) as c:
        init(c)
        cfg = json.loads(text(c.call("get_config", {})).split("\n", 1)[1])
        assert cfg["version"] == "0.2.7" and cfg["allowedDirectories"] == []
        r = c.call("set_config_value", {"key": "fileReadLineLimit", "value": 5})
        assert r["isError"]
        assert text(r) == ("Value changed in memory but couldn't be saved to disk: ENOTDIR: not a "
                           "directory, open '%s/.claude-server-commander/config.json'" % state)
        cfg = json.loads(text(c.call("get_config", {})).split("\n", 1)[1])
        assert cfg["fileReadLineLimit"] == 5
