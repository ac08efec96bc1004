"""Differential test: `mcpbox mcp desktop-commander` (0.2.7) against npm
@wonderwhy-er/desktop-commander 0.2.10 (tests/node, alias
desktop-commander-0.2.10), side by side on two copies of the same tree.

0.2.7, the version MCP-Atlas pins, is not on the npm registry any more. Its
file, edit and search code is the same as 0.2.10's (v0.2.7..2b75c192 touches
only index.ts, server.ts's telemetry, terminal-manager.ts, the process
tools, config.ts and system-info.ts), so for those tools every result must
be equal. Compared:
  - tools/list: the same 21 names in the same order with the same input
    schemas (descriptions differ: 0.2.10 appends what its container
    detection found, docs/servers/desktop-commander.md);
  - read_file, read_multiple_files, write_file, create_directory,
    list_directory, move_file, search_files, search_code, get_file_info,
    edit_block: whole results (content and isError), valid calls and bad
    ones (zod errors, missing files, paths outside allowedDirectories).
Normalised, because they cannot be equal between two runs: each side's own
directory and HOME (replaced by placeholders), get_file_info's created and
accessed lines (and modified for files the sequence rewrote), and the
milliseconds edit_block's fuzzy search reports, and the order of search_code's
file blocks (ripgrep searches files in parallel, so upstream's order varies
from run to run too).
Not compared here (0.2.7's texts differ from 0.2.10's): get_config,
set_config_value, the process tools; test_server_desktop_commander.py checks
them against 0.2.7's texts.
"""
import base64
import json
import os
import re
import shutil

import pytest

from mcp_stdio import StdioClient

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NODE = os.path.join(ROOT, "tests", "node", "node22")
REF = os.path.join(ROOT, "tests", "node", "node_modules", "desktop-commander-0.2.10", "dist",
                   "index.js")
MCPBOX = os.environ.get("MCPBOX_BIN", os.path.join(ROOT, "build", "asan", "mcpbox"))

pytestmark = pytest.mark.skipif(not (os.path.exists(NODE) and os.path.exists(REF)),
                                reason="Node peers missing: run scripts/install-node-tools")

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def make_tree(d):
    os.makedirs(os.path.join(d, "sub", "deep"))
    os.makedirs(os.path.join(d, ".hidden"))
    os.makedirs(os.path.join(d, "Mixed Case"))
    files = {
        "notes.txt": "alpha\nbeta\ngamma\n",
        "data.csv": "\n".join(f"row{i},{i * 3},Beta" for i in range(51)),
        "sub/deep/code.py": "def beta():\n    return 'BETA beta'\n\n\nprint(beta())\n",
        "sub/readme.md": "# Beta project\nsee code.py\n",
        ".hidden/secret.txt": "beta hidden\n",
        "unicode.txt": "héllo wörld ✓\nzweite Zeile\n",
        "crlf.txt": "one\r\ntwo\r\nthree\r\n",
        "dup.txt": "x = 1\ny = 2\nx = 1\n",
        "empty.txt": "",
        "Mixed Case/File Name.TXT": "spaces and case\n",
        "long.txt": "".join(f"line {i}\n" for i in range(1500)),
    }
    for rel, text in files.items():
        with open(os.path.join(d, rel), "w", encoding="utf-8", newline="") as f:
            f.write(text)
    # over 10 MB: upstream's other reading paths (byte estimate, reading backwards)
    with open(os.path.join(d, "big.log"), "w") as f:
        f.write("".join("log line %07d with some payload text\n" % i for i in range(300000)))
    with open(os.path.join(d, "pixel.png"), "wb") as f:
        f.write(PNG)
    with open(os.path.join(d, "blob.bin"), "wb") as f:
        f.write(bytes(range(256)) * 4)
    os.symlink("notes.txt", os.path.join(d, "link.txt"))
    # mtimes the two copies share, so that get_file_info's modified line compares
    for dirpath, dirs, names in os.walk(d):
        for n in names + dirs:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                os.utime(p, (1700000000, 1700000000))


# (tool, args); "@R" stands for the side's root directory.
CALLS = [
    ("list_directory", {"path": "@R"}),
    ("list_directory", {"path": "@R/sub"}),
    ("list_directory", {"path": "@R/missing"}),
    ("list_directory", {"path": "@R/notes.txt"}),
    ("list_directory", {}),
    ("read_file", {"path": "@R/notes.txt"}),
    ("read_file", {"path": "@R/notes.txt", "offset": 1, "length": 1}),
    ("read_file", {"path": "@R/notes.txt", "offset": -2}),
    ("read_file", {"path": "@R/notes.txt", "offset": 10}),
    ("read_file", {"path": "@R/data.csv"}),
    ("read_file", {"path": "@R/long.txt"}),
    ("read_file", {"path": "@R/long.txt", "offset": 1490, "length": 20}),
    ("read_file", {"path": "@R/unicode.txt", "length": 1}),
    ("read_file", {"path": "@R/big.log", "length": 3}),
    ("read_file", {"path": "@R/big.log", "offset": 250000, "length": 2}),
    ("read_file", {"path": "@R/big.log", "offset": -3}),
    ("read_file", {"path": "@R/big.log", "offset": -1000, "length": 2}),
    ("read_file", {"path": "@R/big.log", "offset": 400000}),
    ("read_file", {"path": "@R/crlf.txt"}),
    ("read_file", {"path": "@R/empty.txt"}),
    ("read_file", {"path": "@R/pixel.png"}),
    ("read_file", {"path": "@R/blob.bin"}),
    ("read_file", {"path": "@R/link.txt"}),
    ("read_file", {"path": "@R/missing.txt"}),
    ("read_file", {"path": "@R/sub"}),
    ("read_file", {"path": "@R/notes.txt", "offset": "x"}),
    ("read_file", {}),
    # URLs under .invalid never resolve: both sides fail the same way, network or not
    ("read_file", {"path": "HTTP://Example.INVALID", "isUrl": True}),
    ("read_file", {"path": "https://user@x.invalid:8443/a?b=1#c", "isUrl": True}),
    ("read_file", {"path": "notaurl", "isUrl": True}),
    ("read_file", {"path": "ftp://x.invalid/y", "isUrl": True}),
    ("read_multiple_files", {"paths": ["@R/notes.txt", "@R/missing.txt", "@R/pixel.png",
                                       "@R/unicode.txt"]}),
    ("read_multiple_files", {"paths": "@R/notes.txt"}),
    ("write_file", {"path": "@R/new.txt", "content": "first\nsecond"}),
    ("write_file", {"path": "@R/new.txt", "content": "\nthird\n", "mode": "append"}),
    ("read_file", {"path": "@R/new.txt"}),
    ("write_file", {"path": "@R/big.txt", "content": "".join(f"l{i}\n" for i in range(60))}),
    ("write_file", {"path": "@R/nodir/x.txt", "content": "x"}),
    ("write_file", {"path": "@R/new.txt", "content": "x", "mode": "prepend"}),
    ("create_directory", {"path": "@R/made/a/b"}),
    ("create_directory", {"path": "@R/made"}),
    ("create_directory", {"path": "@R/notes.txt/x"}),
    ("move_file", {"source": "@R/new.txt", "destination": "@R/made/moved.txt"}),
    ("move_file", {"source": "@R/missing.txt", "destination": "@R/x.txt"}),
    ("list_directory", {"path": "@R/made"}),
    ("get_file_info", {"path": "@R/notes.txt"}),
    ("get_file_info", {"path": "@R/sub"}),
    ("get_file_info", {"path": "@R/empty.txt"}),
    ("get_file_info", {"path": "@R/missing.txt"}),
    ("search_files", {"path": "@R", "pattern": "readme"}),
    ("search_files", {"path": "@R", "pattern": "FILE NAME"}),
    ("search_files", {"path": "@R", "pattern": "nothing-like-this"}),
    ("search_files", {"path": "@R/missing", "pattern": "x"}),
    ("search_code", {"path": "@R", "pattern": "beta"}),
    ("search_code", {"path": "@R", "pattern": "beta", "ignoreCase": False}),
    ("search_code", {"path": "@R", "pattern": "beta", "filePattern": "*.py"}),
    ("search_code", {"path": "@R", "pattern": "beta", "includeHidden": True}),
    ("search_code", {"path": "@R", "pattern": "gamma", "contextLines": 1}),
    ("search_code", {"path": "@R", "pattern": "row1[0-9],", "maxResults": 3}),
    ("search_code", {"path": "@R", "pattern": "no such text anywhere"}),
    ("search_code", {"path": "@R", "pattern": "wörld"}),
    ("edit_block", {"file_path": "@R/notes.txt", "old_string": "beta", "new_string": "BETA"}),
    ("read_file", {"path": "@R/notes.txt"}),
    ("edit_block", {"file_path": "@R/dup.txt", "old_string": "x = 1", "new_string": "x = 9"}),
    ("edit_block", {"file_path": "@R/dup.txt", "old_string": "x = 1", "new_string": "x = 9",
                    "expected_replacements": 2}),
    ("read_file", {"path": "@R/dup.txt"}),
    ("edit_block", {"file_path": "@R/notes.txt", "old_string": "gamna", "new_string": "delta"}),
    ("edit_block", {"file_path": "@R/notes.txt", "old_string": "completely different text here",
                    "new_string": "z"}),
    ("edit_block", {"file_path": "@R/notes.txt", "old_string": "", "new_string": "z"}),
    ("edit_block", {"file_path": "@R/crlf.txt", "old_string": "two\nthree", "new_string": "2\n3"}),
    ("read_file", {"path": "@R/crlf.txt"}),
    ("edit_block", {"file_path": "@R/missing.txt", "old_string": "a", "new_string": "b"}),
    ("edit_block", {"file_path": "@R/notes.txt", "old_string": "alpha"}),
    ("edit_block", {"file_path": "@R/long.txt", "old_string": "".join(f"line {i}\n" for i in range(3, 70)),
                    "new_string": "cut\n"}),
    ("read_file", {"path": "@R/long.txt", "length": 5}),
    # arguments zod refuses, tool by tool
    ("get_file_info", {}),
    ("move_file", {"source": "@R/notes.txt"}),
    ("search_code", {"path": "@R"}),
    ("search_files", {"path": "@R", "pattern": 1}),
    ("create_directory", {"path": 5}),
    ("write_file", {"path": "@R/a.txt"}),
    ("edit_block", {"file_path": "@R/notes.txt", "old_string": "a", "new_string": "b",
                    "expected_replacements": "2"}),
    ("read_file", {"path": "@R/notes.txt", "length": -1}),
    ("read_file", {"path": "@R/notes.txt", "offset": 0.5, "length": 1.5}),
    ("search_code", {"path": "@R", "pattern": "(unclosed"}),
    ("search_code", {"path": "@R", "pattern": "beta", "maxResults": 0}),
    ("set_config_value", {"key": "allowedDirectories", "value": ["@R"]}),
    ("list_directory", {"path": "/etc"}),
    ("read_file", {"path": "/etc/hostname"}),
    ("read_multiple_files", {"paths": ["/etc/hostname", "@R/notes.txt"]}),
    ("write_file", {"path": "@R/../outside.txt", "content": "x"}),
    ("create_directory", {"path": "/tmp/dc-should-not-exist"}),
    ("move_file", {"source": "@R/notes.txt", "destination": "/tmp/dc-moved"}),
    ("get_file_info", {"path": "/etc"}),
    ("search_files", {"path": "/etc", "pattern": "host"}),
    ("search_code", {"path": "/etc", "pattern": "root"}),
    ("edit_block", {"file_path": "/etc/hostname", "old_string": "a", "new_string": "b"}),
    ("list_directory", {"path": "@R/sub"}),
]
NOT_COMPARED = {"set_config_value"}
REWRITTEN = {"notes.txt", "new.txt", "dup.txt", "crlf.txt", "long.txt", "big.txt"}


def start(argv, home, root):
    c = StdioClient(argv, env={"HOME": home}, cwd=root)
    c.initialize()
    return c


def normalise(text, root, home, tool, args):
    text = text.replace(root, "@R").replace(home, "@HOME")
    if tool == "get_file_info":
        text = re.sub(r"(?m)^(created|accessed): .*$", r"\1: @T", text)
        if os.path.basename(args.get("path", "")) in REWRITTEN:
            text = re.sub(r"(?m)^modified: .*$", "modified: @T", text)
    if tool == "edit_block":
        text = re.sub(r"\d+(\.\d+)?ms", "@MSms", text)
    if tool == "search_code":
        # files come in the order ripgrep's threads finish them, on both sides
        text = "\n\n".join(sorted(text.split("\n\n")))
    return text


def run(argv, root, home):
    out = []
    with start(argv, home, root) as c:
        tools = c.list_tools()
        for tool, args in CALLS:
            a = json.loads(json.dumps(args).replace("@R", root))
            r = c.call(tool, a)
            if tool in NOT_COMPARED:
                out.append(None)
                continue
            blocks = [dict(b, text=normalise(b["text"], root, home, tool, args)) if "text" in b
                      else b for b in r.get("content", [])]
            out.append({"content": blocks, "isError": bool(r.get("isError"))})
        if argv[0] == NODE:
            c.proc.terminate()  # upstream keeps running after stdin ends
    return tools, out


def snapshot(root):
    tree = {}
    for dirpath, dirs, names in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for n in names:
            p = os.path.join(dirpath, n)
            tree[os.path.join(rel, n)] = (os.readlink(p) if os.path.islink(p)
                                          else open(p, "rb").read())
        for n in dirs:
            tree[os.path.join(rel, n) + "/"] = None
    return tree


def test_same_results_as_npm_0_2_10(tmp_path):
    sides = {}
    for side in ("ours", "ref"):
        root, home = tmp_path / side / "root", tmp_path / side / "home"
        os.makedirs(home)
        make_tree(str(root))
        sides[side] = (str(root), str(home))
    ours_tools, ours = run([MCPBOX, "mcp", "desktop-commander"], *sides["ours"])
    ref_tools, ref = run([NODE, REF], *sides["ref"])

    assert [t["name"] for t in ours_tools] == [t["name"] for t in ref_tools]
    assert len(ours_tools) == 21
    for a, b in zip(ours_tools, ref_tools):
        assert a["inputSchema"] == b["inputSchema"], a["name"]
        assert set(a) == set(b), a["name"]

    diffs = [(i, CALLS[i], o, r) for i, (o, r) in enumerate(zip(ours, ref)) if o != r]
    assert not diffs, "\n\n".join(
        f"#{i} {c[0]} {json.dumps(c[1])[:200]}\n ours: {json.dumps(o)[:1500]}\n  ref: {json.dumps(r)[:1500]}"
        for i, c, o, r in diffs)
    assert snapshot(sides["ours"][0]) == snapshot(sides["ref"][0])
    assert not os.path.exists("/tmp/dc-should-not-exist")
    # the fuzzy-search log each side wrote under its HOME has the same rows
    logs = []
    for root, home in sides.values():
        with open(os.path.join(home, ".claude-server-commander-logs", "fuzzy-search.log")) as f:
            logs.append([line.split("\t")[1:3] for line in f.read().splitlines()])
    assert logs[0] == logs[1]
    shutil.rmtree(tmp_path, ignore_errors=True)


# The process tools whose 0.2.7 code 0.2.10 kept (start_process,
# interact_with_process, read_process_output of a running session,
# list_sessions, force_terminate, kill_process); "@P<n>" stands for the pid
# the n-th start_process answered on each side.
PROC_CALLS = [
    ("start_process", {"command": "python3 -i", "timeout_ms": 10000}),
    ("interact_with_process", {"pid": "@P1", "input": "x = 41"}),
    ("interact_with_process", {"pid": "@P1", "input": "print(x + 1)"}),
    ("interact_with_process", {"pid": "@P1", "input": "print('a\\nb')\n"}),
    ("interact_with_process", {"pid": "@P1", "input": "1/0"}),
    ("interact_with_process", {"pid": "@P1", "input": "y = 2", "wait_for_prompt": False}),
    ("interact_with_process", {"pid": "@P1", "input": "print(x * y)"}),
    ("list_sessions", {}),
    ("start_process", {"command": "printf 'one\\ntwo\\n'", "timeout_ms": 5000}),
    ("start_process", {"command": "sleep 5", "timeout_ms": 200}),
    ("read_process_output", {"pid": "@P3", "timeout_ms": 300}),
    ("force_terminate", {"pid": "@P3"}),
    ("force_terminate", {"pid": 999999}),
    ("kill_process", {"pid": 4194321}),
    ("start_process", {"command": "sudo rm -rf /", "timeout_ms": 100}),
    ("start_process", {"command": "echo ok && (reboot)", "timeout_ms": 100}),
    ("start_process", {"command": "echo x"}),
    ("interact_with_process", {"pid": 999999, "input": "x"}),
    ("interact_with_process", {"pid": "@P1"}),
    ("read_process_output", {"pid": "x"}),
    ("interact_with_process", {"pid": "@P1", "input": "def f(x):\n    return x * 3\n"}),
    ("interact_with_process", {"pid": "@P1", "input": "f(14)"}),
    ("interact_with_process", {"pid": "@P1",
                               "input": "for i in range(3):\n    print(i)\n"}),
    ("force_terminate", {"pid": "@P1"}),
    ("start_process", {"command": "node -i", "timeout_ms": 10000}),
    ("interact_with_process", {"pid": "@P4", "input": "const a = 20"}),
    ("interact_with_process", {"pid": "@P4", "input": "a * 2 + 2"}),
    ("interact_with_process", {"pid": "@P4", "input": "console.log('x'.repeat(5))"}),
    ("force_terminate", {"pid": "@P4"}),
    ("start_process", {"command": "sh -i", "timeout_ms": 5000}),
    ("interact_with_process", {"pid": "@P5", "input": "echo $((6*7))"}),
    ("force_terminate", {"pid": "@P5"}),
]


def run_procs(argv, root, home):
    out, pids = [], {}
    with start(argv, home, root) as c:
        for tool, args in PROC_CALLS:
            a = dict(args)
            if isinstance(a.get("pid"), str) and a["pid"].startswith("@P"):
                a["pid"] = pids[a["pid"]]
            r = c.call(tool, a)
            t = StdioClient.text(r)
            m = re.match(r"Process started with PID (\d+) ", t)
            if m:
                pids["@P%d" % (len(pids) + 1)] = int(m.group(1))
            for name, pid in pids.items():
                t = re.sub(r"\b%d\b" % pid, name, t)
            t = re.sub(r"Runtime: \d+s", "Runtime: @s", t)
            out.append({"text": t, "isError": bool(r.get("isError"))})
        if argv[0] == NODE:
            c.proc.terminate()
    return out


def test_process_tools_as_npm_0_2_10(tmp_path):
    res = {}
    for side, argv in (("ours", [MCPBOX, "mcp", "desktop-commander"]), ("ref", [NODE, REF])):
        root, home = tmp_path / side / "root", tmp_path / side / "home"
        os.makedirs(root)
        os.makedirs(home)
        res[side] = run_procs(argv, str(root), str(home))
    diffs = [(PROC_CALLS[i], o, r) for i, (o, r) in enumerate(zip(res["ours"], res["ref"])) if o != r]
    assert not diffs, "\n\n".join(f"{c}\n ours: {json.dumps(o)}\n  ref: {json.dumps(r)}"
                                  for c, o, r in diffs)
