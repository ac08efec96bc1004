"""`mcpbox mcp code-runner` against the npm reference `mcp-server-code-runner` 0.1.7
(tests/node/node_modules, run with Node 22): the same calls, compared result for result.

Both servers write the snippet to $TMPDIR/tmp.<ext>; they get the same TMPDIR and run one
after the other, so even the paths inside error texts are equal. The one documented
difference: when a language's interpreter is missing, mcpbox adds a line naming it after
upstream's text (docs/servers/code-runner.md); that line is checked and then removed."""
import json
import os
import shutil

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient

HERE = os.path.dirname(__file__)
NODE = os.path.join(HERE, "..", "node", "node22")
REF = os.path.join(HERE, "..", "node", "node_modules", "mcp-server-code-runner", "dist", "cli.js")
PATH = "/usr/local/bin:/usr/bin:/bin"
HINT = "\n(mcpbox: no interpreter for languageId "

pytestmark = pytest.mark.skipif(not (os.path.exists(NODE) and os.path.exists(REF)),
                                reason="Node peers missing: run scripts/install-node-tools")


class Tolerant(StdioClient):
    """The reference prints log lines on stdout; skip anything that is not JSON.
    On exit, a clean status is required (ASan leak reports make it non-zero)."""

    def __exit__(self, exc_type, *rest):
        rc = self.close()
        if exc_type is None:
            assert rc == 0, "server exit status %s; stderr:\n%s" % (rc, self.stderr())
        return False

    def read_message(self, timeout=None):
        while True:
            try:
                return super().read_message(timeout)
            except json.JSONDecodeError:
                continue


def have(prog):
    return shutil.which(prog, path=PATH) is not None


CALLS = [
    {"code": "print('hello')", "languageId": "python"},
    {"code": "import sys\nprint(sys.version_info[0])", "languageId": "python"},
    {"code": "print(sum(range(10)))\nprint('é中')", "languageId": "python"},
    {"code": "import sys; sys.stderr.write('warning\\n'); print(2)", "languageId": "python"},
    {"code": "raise SystemExit(3)", "languageId": "python"},
    {"code": "1/0", "languageId": "python"},
    {"code": "import sys; sys.stdout.buffer.write(b'\\xff\\xfe ok\\n')", "languageId": "python"},
    {"code": "print('x' * 2000000)", "languageId": "python"},
    {"code": "import pandas; print(pandas.DataFrame({'a': [1, 2]}).sum().to_dict())", "languageId": "python"},
    {"code": "console.log([1, 2, 3].map(x => x * 2).join(','))", "languageId": "javascript"},
    {"code": "console.error('to stderr'); console.log('to stdout')", "languageId": "javascript"},
    {"code": "process.exit(4)", "languageId": "javascript"},
    {"code": "throw new Error('boom')", "languageId": "javascript"},
    {"code": "echo hi; echo err >&2", "languageId": "shellscript"},
    {"code": "for i in 1 2 3; do echo $i; done", "languageId": "shellscript"},
    {"code": "exit 7", "languageId": "shellscript"},
    {"code": "echo $0", "languageId": "shellscript"},
    {"code": "print \"perl says hi\\n\";", "languageId": "perl"},
    {"code": "die \"perl dies\\n\";", "languageId": "perl"},
    {"code": "", "languageId": "python"},
    {"code": "x", "languageId": "cobol"},
    {"code": 5, "languageId": "python"},
    {"code": "x", "languageId": 3},
    {"code": None, "languageId": None},
    {"code": ["x"], "languageId": True},
    {"languageId": "python"},
    {"code": "print(1)"},
    {},
    {"code": "print(1)", "languageId": "python", "extra": "ignored"},
    {"code": "puts 'ruby'", "languageId": "ruby"},
    {"code": "<?php echo 'php';", "languageId": "php"},
    {"code": "print('lua')", "languageId": "lua"},
    {"code": "main = putStrLn \"hs\"", "languageId": "haskell"},
    {"code": "Write-Host hi", "languageId": "powershell"},
    {"code": "console.log(1)", "languageId": "typescript"},
]


def session(argv, tmp):
    out = []
    env = {"PATH": PATH, "TMPDIR": tmp, "LC_ALL": "C.UTF-8"}
    with Tolerant(argv, env=env, timeout=60) as c:
        out.append(c.initialize())
        out.append(c.list_tools())
        for args in CALLS:
            out.append(c.call("run-code", args))
        out.append(c.call("run-code"))  # no arguments at all
        out.append(c.call("no-such-tool", {}))
        out.append(c.request("tools/call", {"name": 5})["error"]["code"])
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("coderunner-tmp"))
    ours = session([MCPBOX_BIN, "mcp", "code-runner"], tmp)
    theirs = session([NODE, REF], tmp)
    return ours, theirs


def test_initialize_and_tools_equal(both):
    ours, theirs = both
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    assert [t["name"] for t in ours[1]] == ["run-code"]


def test_calls_equal(both):
    ours, theirs = both
    assert len(ours) == len(theirs) == len(CALLS) + 5
    hints = 0
    for i, (o, t) in enumerate(zip(ours[2:], theirs[2:])):
        if isinstance(o, dict) and o.get("isError") and HINT in StdioClient.text(o):
            text = StdioClient.text(o)
            assert text.startswith(StdioClient.text(t)), (i, o, t)
            assert text[len(StdioClient.text(t)):].startswith(HINT)
            o = {**o, "content": [{"type": "text", "text": text[:text.index(HINT)]}]}
            hints += 1
        assert o == t, (CALLS[i] if i < len(CALLS) else i, o, t)
    missing = [p for p in ("ruby", "php", "lua", "runhaskell", "powershell", "ts-node") if not have(p)]
    assert hints == len(missing)


def test_outcomes_are_meaningful(both):
    """The comparison above could pass with two broken servers: pin a few outcomes."""
    ours, _ = both
    res = dict(zip([json.dumps(c, sort_keys=True) for c in CALLS], ours[2:]))

    def r(args):
        return res[json.dumps(args, sort_keys=True)]

    assert r(CALLS[0]) == {"content": [{"type": "text", "text": "hello\n"}]}
    assert StdioClient.text(r(CALLS[3])) == "Stderr: warning\n"
    assert StdioClient.text(r(CALLS[6])) == "\ufffd\ufffd ok\n"
    assert StdioClient.text(r(CALLS[7])) == "Error: stdout maxBuffer length exceeded"
    assert StdioClient.text(r(CALLS[9])) == "2,4,6\n"
    assert StdioClient.text(r(CALLS[15])).startswith("Error: Command failed: bash \"")
    assert StdioClient.text(r(CALLS[19])) == "Code is required."
    assert StdioClient.text(r(CALLS[27])) == ("MCP error -32602: Input validation error: Invalid "
                                              "arguments for tool run-code: Required at code\n"
                                              "Required at languageId")


def test_missing_interpreter_message(tmp_path):
    with Tolerant([MCPBOX_BIN, "mcp", "code-runner"],
                  env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)}) as c:
        c.initialize()
        res = c.call("run-code", {"code": "x", "languageId": "crystal"})
        assert res["isError"] is True
        assert StdioClient.text(res) == (
            f"Error: Command failed: crystal \"{tmp_path}/tmp.crystal\"\n/bin/sh: 1: crystal: not found\n"
            "\n(mcpbox: no interpreter for languageId 'crystal': 'crystal' is not installed in this sandbox)")


def test_timeout_option(tmp_path):
    with Tolerant([MCPBOX_BIN, "mcp", "code-runner", "--timeout", "1"],
                  env={"PATH": PATH, "TMPDIR": str(tmp_path)}) as c:
        c.initialize()
        res = c.call("run-code", {"code": "import time; time.sleep(10)", "languageId": "python"})
        assert res["isError"] is True
        assert StdioClient.text(res).endswith("(mcpbox: stopped after the 1 s time limit)")
