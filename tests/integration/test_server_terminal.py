"""`mcpbox mcp terminal` over stdio: cli-mcp-server 0.2.5 (MCP-Atlas settings) and the
lockon-n fork (Toolathlon settings). Expected texts come from the upstream sources and
from the MCP-Atlas trajectories in bench-data (sample_tasks.json)."""
import json
import os
import subprocess
import time

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient


class Checked(StdioClient):
    """Asserts a clean exit (ASan leak reports make the exit status non-zero)."""

    def __exit__(self, exc_type, *rest):
        rc = self.close()
        if exc_type is None:
            assert rc == 0, "server exit status %s; stderr:\n%s" % (rc, self.stderr())
        return False

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "bench-data")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ATLAS_ENV = {"ALLOWED_COMMANDS": "ls,cat,find", "ALLOWED_FLAGS": "", "MAX_COMMAND_LENGTH": "1024",
             "COMMAND_TIMEOUT": "30", "ALLOW_SHELL_OPERATORS": "false"}
TOOLATHLON_COMMANDS = ("ls,cat,pwd,echo,cd,mkdir,touch,rm,cp,mv,find,grep,head,tail,wc,sort,uniq,"
                       "diff,tree,chmod,stat,file,which,whoami,date,hostname,df,du,ps,env,history,"
                       "clear,sed,awk,cut,tr,basename,dirname,realpath,md5sum,sha256sum,tar,gzip,"
                       "gunzip,zip,unzip,less,more,python,wget,curl,ping,netstat,ifconfig,nslookup,"
                       "traceroute,helm,kubectl,git")
TOOLATHLON_ENV = {"ALLOWED_COMMANDS": TOOLATHLON_COMMANDS, "ALLOWED_FLAGS": "all",
                  "MAX_COMMAND_LENGTH": "2048", "COMMAND_TIMEOUT": "60",
                  "ALLOW_SHELL_OPERATORS": "true", "MAX_OUTPUT_LENGTH": "10240",
                  "MAX_STDOUT_LENGTH": "8192", "MAX_STDERR_LENGTH": "2048"}


@pytest.fixture
def ws(tmp_path):
    """A workspace like /data: files with spaces, a subdirectory, escape plants."""
    root = tmp_path / "data"
    root.mkdir()
    (root / "Barber Shop.csv").write_text("Customer Gender,Customer Age\nMale,42\n")
    (root / "notes.txt").write_text("hello\n")
    (root / "sub").mkdir()
    (root / "sub" / "inner.txt").write_text("inner\n")
    (root / "to_etc").symlink_to("/etc")
    (root / "to_passwd").symlink_to("/etc/passwd")
    (root / "to_sub").symlink_to("sub")
    sibling = tmp_path / "data2"
    sibling.mkdir()
    (sibling / "secret.txt").write_text("secret\n")
    return root


def server(ws, env, *args):
    full = {"PATH": PATH, "LC_ALL": "C.UTF-8", "ALLOWED_DIR": str(ws), **env}
    c = Checked([MCPBOX_BIN, "mcp", "terminal", *args], env=full)
    c.initialize()
    return c


def blocks(res):
    # the Python SDK sends its default isError: false on every success
    assert res["isError"] is False, res
    return res["content"]


def run(c, cmd):
    return blocks(c.call("run_command", {"command": cmd}))


def violation(c, cmd):
    b = run(c, cmd)
    assert len(b) == 1 and b[0].get("error") is True, b
    assert b[0]["text"].startswith("Security violation: "), b
    return b[0]["text"][len("Security violation: "):]


def test_initialize_and_tools(ws):
    with server(ws, ATLAS_ENV) as c:
        init = c.initialize()
        assert init["serverInfo"] == {"name": "cli-mcp-server", "version": "0.2.1"}
        tools = c.list_tools()
        assert [t["name"] for t in tools] == ["run_command", "show_security_rules"]
        run_tool = tools[0]
        assert run_tool["description"] == (
            f"Allows command (CLI) execution in the directory: {ws}\n\n"
            "Available commands: cat, find, ls\nAvailable flags: \n\n"
            "Shell operators (&&, ||, |, >, >>, <, <<, ;) are not supported. "
            "Set ALLOW_SHELL_OPERATORS=true to enable.")
        assert run_tool["inputSchema"] == {
            "type": "object",
            "properties": {"command": {"type": "string", "description":
                                       "Single command to execute (example: 'ls -l' or 'cat file.txt')"}},
            "required": ["command"]}
        assert tools[1]["description"] == "Show what commands and operations are allowed in this environment.\n"
        assert tools[1]["inputSchema"] == {"type": "object", "properties": {}}


def test_atlas_outputs(ws):
    with server(ws, ATLAS_ENV) as c:
        assert run(c, "ls") == [
            {"type": "text", "text": "Barber Shop.csv\nnotes.txt\nsub\nto_etc\nto_passwd\nto_sub\n"},
            {"type": "text", "text": "\nCommand completed with return code: 0"}]
        assert run(c, 'cat "Barber Shop.csv"')[0]["text"] == "Customer Gender,Customer Age\nMale,42\n"
        # relative paths with '/' are resolved (the error names the resolved path)
        b = run(c, "cat ./sub/missing.txt")
        assert b == [{"type": "text", "text": f"cat: {ws}/sub/missing.txt: No such file or directory\n",
                      "error": True},
                     {"type": "text", "text": "\nCommand completed with return code: 1"}]
        assert run(c, "find sub")[0]["text"] == "sub\nsub/inner.txt\n"
        # a symlink that stays inside is fine
        assert run(c, "cat to_sub/inner.txt")[0]["text"] == "inner\n"
        rules = blocks(c.call("show_security_rules", {}))
        assert rules == [{"type": "text", "text":
                          f"Security Configuration:\n==================\nWorking Directory: {ws}\n\n"
                          "Allowed Commands:\n----------------\ncat, find, ls\n\n"
                          "Allowed Flags:\n-------------\n\n\n"
                          "Security Limits:\n---------------\nMax Command Length: 1024 characters\n"
                          "Command Timeout: 30 seconds\n"}]


def test_refusals(ws):
    with server(ws, {**ATLAS_ENV, "MAX_COMMAND_LENGTH": "60"}) as c:
        assert violation(c, "rm notes.txt") == "Command 'rm' is not allowed"
        assert violation(c, "ls -la") == "Flag '-la' is not allowed"
        assert violation(c, "ls && cat notes.txt") == \
            "Shell operator '&&' is not supported. Set ALLOW_SHELL_OPERATORS=true to enable."
        assert violation(c, "cat notes.txt | cat") == \
            "Shell operator '|' is not supported. Set ALLOW_SHELL_OPERATORS=true to enable."
        assert violation(c, "cat x > y") == \
            "Shell operator '>' is not supported. Set ALLOW_SHELL_OPERATORS=true to enable."
        assert violation(c, "") == "Empty command"
        assert violation(c, "cat 'unterminated") == "Invalid command format: No closing quotation"
        assert violation(c, "cat trailing\\") == "Invalid command format: No escaped character"
        assert violation(c, "cat " + "x" * 70) == "Command exceeds maximum length of 60"


@pytest.mark.parametrize("cmd,arg", [
    ("cat /etc/passwd", "/etc/passwd"),
    ("cat ../data2/secret.txt", "../data2/secret.txt"),
    ("cat ./../data2/secret.txt", "./../data2/secret.txt"),
    ("cat sub/../../data2/secret.txt", "sub/../../data2/secret.txt"),
    ("cat to_etc/passwd", "to_etc/passwd"),
    ("cat to_passwd", "to_passwd"),
    ("find /", "/"),
    ("find ..", ".."),
    ("ls to_etc/", "to_etc/"),
])
def test_escape_attempts(ws, cmd, arg):
    with server(ws, ATLAS_ENV) as c:
        assert violation(c, cmd) == f"Path '{arg}' is outside of allowed directory: {ws}"


def test_sibling_prefix_is_outside(ws):
    # upstream compares string prefixes; /x/data2 must not count as inside /x/data
    with server(ws, ATLAS_ENV) as c:
        sib = f"{ws}2/secret.txt"
        assert violation(c, f"cat {sib}") == f"Path '{sib}' is outside of allowed directory: {ws}"


def test_input_validation_and_unknown_tool(ws):
    with server(ws, ATLAS_ENV) as c:
        r = c.call("run_command", {})
        assert r == {"content": [{"type": "text", "text":
                                  "Input validation error: 'command' is a required property"}],
                     "isError": True}
        r = c.call("run_command", {"command": ["ls"]})
        assert StdioClient.text(r) == "Input validation error: ['ls'] is not of type 'string'"
        assert r["isError"] is True
        r = c.call("rm_rf", {})
        assert r["isError"] is True and StdioClient.text(r) == "Unknown tool: rm_rf"


def test_exec_failures_and_timeout(ws):
    env = {"ALLOWED_COMMANDS": "all", "ALLOWED_FLAGS": "all", "COMMAND_TIMEOUT": "1"}
    with server(ws, env) as c:
        b = run(c, "no-such-program-xyz arg")
        assert b == [{"type": "text", "error": True, "text":
                      "Error: Command execution failed: [Errno 2] No such file or directory: "
                      "'no-such-program-xyz'"}]
        b = run(c, "sleep 5")
        assert b == [{"type": "text", "error": True, "text": "Error: Command timed out after 1 seconds"}]
        (ws / "script.sh").write_text("echo out\necho err >&2\nexit 3\n")
        b = run(c, "sh script.sh")
        assert [x["text"] for x in b] == ["out\n", "err\n", "\nCommand completed with return code: 3"]
        assert b[1]["error"] is True and "error" not in b[0]
        # killed by a signal: Python's negative return code
        (ws / "die.sh").write_text("kill -9 $$\n")
        b = run(c, "sh die.sh")
        assert b[-1]["text"] == "\nCommand completed with return code: -9"
        # text mode: CRLF becomes LF, invalid UTF-8 is an error
        assert run(c, "printf 'a\\r\\nb\\r'")[0]["text"] == "a\nb\n"
        b = run(c, "printf '\\377'")
        assert b == [{"type": "text", "error": True, "text":
                      "Error: Command execution failed: 'utf-8' codec can't decode byte 0xff in "
                      "position 0: invalid start byte"}]


def test_runs_in_allowed_dir_without_shell(ws):
    env = {"ALLOWED_COMMANDS": "pwd,echo", "ALLOWED_FLAGS": "all"}
    with server(ws, env) as c:
        assert run(c, "pwd")[0]["text"] == f"{ws}\n"
        # no shell: $HOME and globs are passed literally
        assert run(c, "echo $HOME *")[0]["text"] == "$HOME *\n"


def test_upstream_operators(ws):
    env = {"ALLOWED_COMMANDS": "ls,cat,echo,grep,wc", "ALLOWED_FLAGS": "all",
           "ALLOW_SHELL_OPERATORS": "true"}
    with server(ws, env, "--variant", "upstream") as c:
        assert run(c, "cat notes.txt | wc -c")[0]["text"].strip() == "6"
        b = run(c, "ls nope || echo fallback")
        assert b[0]["text"] == "fallback\n" and b[1]["error"] is True
        # 0.2.5 validates a redirection target as a command
        assert violation(c, "echo hi > out.txt") == \
            "Invalid command part 'out.txt': Command 'out.txt' is not allowed"
        assert violation(c, "ls; cat /etc/passwd") == \
            f"Invalid command part 'cat /etc/passwd': Path '/etc/passwd' is outside of allowed directory: {ws}"
        assert violation(c, "echo a && rm -rf x") == \
            "Invalid command part 'rm -rf x': Command 'rm' is not allowed"
        assert not (ws / "out.txt").exists()


def test_toolathlon_fork(ws):
    with server(ws, TOOLATHLON_ENV, "--variant", "toolathlon") as c:
        desc = c.list_tools()[0]["description"]
        assert "Available commands: ls, cat, pwd, echo" in desc and "Available flags: all flags" in desc
        b = run(c, "echo hello > out.txt && cat out.txt")
        assert [x["text"] for x in b] == ["hello\n", "\nCommand completed with return code: 0"]
        assert (ws / "out.txt").read_text() == "hello\n"
        assert violation(c, "echo x > /etc/evil") == \
            f"Invalid file path '/etc/evil': Path '/etc/evil' is outside of allowed directory: {ws}"
        assert violation(c, "cat notes.txt | nc localhost 1") == \
            "Invalid command part 'nc localhost 1': Command 'nc' is not allowed"
        # output caps: 8192 code points of stdout, then the marker
        b = run(c, "python -c \"print('é' * 9000)\"")
        assert b[0]["text"] == "é" * 8192 + "...[output truncated]"
        b = run(c, "python -c \"__import__('sys').stderr.write('x' * 3000)\"")
        assert b[0] == {"type": "text", "text": "x" * 2048 + "...[output truncated]", "error": True}
        rules = StdioClient.text(c.call("show_security_rules", {}))
        assert rules.endswith(
            "Max Command Length: 2048 characters\nCommand Timeout: 60 seconds\n"
            "Max Stdout Length: 8192 characters\nMax Stderr Length: 2048 characters\n"
            "Shell Operators: Enabled\n\nProxy Configuration:\n-------------------\n"
            "Proxy Enabled: No\nProxy URL: Not configured\n\nOutput Settings:\n"
            "---------------\nTruncate Message: ...[output truncated]\n")
        assert "All flags allowed" in rules


def test_flags_override_env(ws):
    with server(ws, ATLAS_ENV, "--allowed-commands", "echo", "--command-timeout", "7") as c:
        rules = StdioClient.text(c.call("show_security_rules", {}))
        assert "\necho\n" in rules and "Command Timeout: 7 seconds" in rules


def test_missing_allowed_dir_fails_to_start(tmp_path):
    p = subprocess.run([MCPBOX_BIN, "mcp", "terminal"], env={"PATH": PATH},
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert p.returncode != 0
    assert b"Valid ALLOWED_DIR is required" in p.stderr


def sleeps_under(pid):
    """`sleep` processes whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        if st[st.index("(") + 1:st.rindex(")")] == "sleep" and \
                int(st[st.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(d))
    return out


def test_cancellation_stops_command(ws):
    env = {"ALLOWED_COMMANDS": "sleep", "COMMAND_TIMEOUT": "60"}
    with server(ws, env) as c:
        c.send({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                "params": {"name": "run_command", "arguments": {"command": "sleep 30"}}})
        deadline = time.monotonic() + 10
        while not sleeps_under(c.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sleeps_under(c.proc.pid), "the command never started"
        c.notify("notifications/cancelled", {"requestId": 99, "reason": "test"})
        # the command is killed, and the server answers the next request
        while sleeps_under(c.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not sleeps_under(c.proc.pid), "the cancelled command still runs"
        r = c.result("ping", {}, timeout=10)
        assert r == {}
        # a cancelled request gets no response
        assert all(m.get("id") != 99 for m in c.notifications if isinstance(m, dict))


def test_calls_run_concurrently(ws):
    """A long command does not hold up another session's short one (the gateway
    multiplexes every session of a sandbox onto this one stdio stream)."""
    env = {"ALLOWED_COMMANDS": "sleep,echo", "COMMAND_TIMEOUT": "60"}
    with server(ws, env) as c:
        c.send({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
                "params": {"name": "run_command", "arguments": {"command": "sleep 3"}}})
        t0 = time.monotonic()
        r = c.call("run_command", {"command": "echo quick"}, timeout=10)
        assert "quick" in c.text(r)
        assert time.monotonic() - t0 < 2.0, "the short call waited for the long one"
        late = None
        while late is None:
            m = c.read_message(timeout=10)
            if isinstance(m, dict) and m.get("id") == 50:
                late = m
        text = "".join(b.get("text", "") for b in late["result"]["content"])
        assert "return code: 0" in text
        assert time.monotonic() - t0 >= 2.9


def test_calls_received_before_eof_are_answered(ws):
    env = {"ALLOWED_COMMANDS": "sleep,echo", "COMMAND_TIMEOUT": "60"}
    c = server(ws, env)
    for i, cmd in enumerate(["sleep 1", "echo one", "echo two"]):
        c.send({"jsonrpc": "2.0", "id": 70 + i, "method": "tools/call",
                "params": {"name": "run_command", "arguments": {"command": cmd}}})
    c.proc.stdin.close()
    seen = {}
    while len(seen) < 3:
        m = c.read_message(timeout=10)
        if isinstance(m, dict) and "id" in m:
            seen[m["id"]] = m
    assert sorted(seen) == [70, 71, 72]
    assert c.proc.wait(timeout=10) == 0, c.stderr()


@pytest.mark.skipif(not os.path.isfile(os.path.join(BENCH, "mcp-atlas", "sample_tasks.json")),
                    reason="bench-data not available")
def test_matches_atlas_trajectory(tmp_path):
    """Replays the cli-mcp-server calls of Atlas task 6888e207a34beb25cfedda3b on the seed."""
    seed = tmp_path / "seed"
    subprocess.run([os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "build-atlas-seed"),
                    str(seed), "--no-venv"], check=True, capture_output=True)
    tasks = json.load(open(os.path.join(BENCH, "mcp-atlas", "sample_tasks.json")))
    task = next(t for t in tasks if t["task_id"] == "6888e207a34beb25cfedda3b")
    traj = task["trajectory"]
    with server(seed, ATLAS_ENV) as c:
        checked = 0
        for i, m in enumerate(traj):
            for call in m.get("tool_calls") or []:
                name = call["function"]["name"]
                if not name.startswith("cli-mcp-server_"):
                    continue
                want = traj[i + 1]["content"]
                args = json.loads(call["function"]["arguments"] or "{}")
                got = c.call(name[len("cli-mcp-server_"):], args)["content"]
                want = json.loads(json.dumps(want).replace("/data", str(seed)))
                assert got == want
                checked += 1
        assert checked == 3
