"""`mcpbox mcp code-executor`: the MCP-Atlas variant (@geobio/code_execution_server 0.2.1)
and the Toolathlon variant (python_execute). Expected texts follow upstream's sources and
the MCP-Atlas trajectories in bench-data."""
import json
import os
import re
import subprocess

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import RpcError, StdioClient


class Checked(StdioClient):
    """Asserts a clean exit (ASan leak reports make the exit status non-zero)."""

    def __exit__(self, exc_type, *rest):
        rc = self.close()
        if exc_type is None:
            assert rc == 0, "server exit status %s; stderr:\n%s" % (rc, self.stderr())
        return False

HERE = os.path.dirname(__file__)
BENCH = os.path.join(HERE, "..", "..", "..", "shared", "bench-data")
PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture
def data(tmp_path):
    root = tmp_path / "data"
    storage = root / "repos" / "mcp_code_executor_workspace"
    storage.mkdir(parents=True)
    (root / "food.csv").write_text("Food Type,Total\nFast Food,3\nPizza,4\nFast Food,5\n")
    (tmp_path / "outside.py").write_text("print('outside')\n")
    (root / "link_out.py").symlink_to(tmp_path / "outside.py")
    return root


def atlas(root, env=None, *args):
    storage = root / "repos" / "mcp_code_executor_workspace"
    full = {"PATH": PATH, "CODE_STORAGE_DIR": str(storage), "ENV_TYPE": "venv-uv",
            "UV_VENV_PATH": str(storage / ".venv"), "PIP_FIND_LINKS": "", **(env or {})}
    c = Checked([MCPBOX_BIN, "mcp", "code-executor", "--variant", "atlas", "--allowed-dir",
                     str(root), *args], env=full, cwd=str(root))
    c.initialize()
    return c


def reply(res):
    """The single {type, text, isError} block; returns (parsed JSON, block isError)."""
    assert "isError" not in res, res
    (b,) = res["content"]
    assert list(b) == ["type", "text", "isError"]
    return json.loads(b["text"]), b["isError"]


def test_tools_and_descriptions(data):
    with atlas(data) as c:
        init = c.initialize()
        assert init["serverInfo"] == {"name": "code-executor", "version": "0.3.0"}
        assert init["protocolVersion"] == "2024-11-05"  # SDK 0.6.0 knows no newer one
        tools = {t["name"]: t for t in c.list_tools()}
        assert list(tools) == ["execute_code", "initialize_code_file", "append_to_code_file",
                               "execute_code_file", "read_code_file", "install_dependencies",
                               "check_installed_packages", "configure_environment",
                               "get_environment_config"]
        assert tools["execute_code"]["description"].startswith(
            "Execute Python code in the venv-uv environment. For short code snippets only.")
        assert tools["execute_code"]["inputSchema"] == {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Python code to execute"},
                           "filename": {"type": "string", "description":
                                        "Optional: Name of the file to save the code (default: generated UUID)"}},
            "required": ["code"]}
        assert tools["configure_environment"]["inputSchema"]["properties"]["type"]["enum"] == \
            ["conda", "venv", "venv-uv"]


def test_execute_code_shapes(data):
    storage = data / "repos" / "mcp_code_executor_workspace"
    with atlas(data) as c:
        # the observed Atlas call: pandas over a CSV in /data
        code = ("import pandas as pd; df=pd.read_csv(\"%s\"); "
                "print(f\"Number of Fast Food records: {df[df['Food Type']=='Fast Food'].shape[0]}\")"
                % (data / "food.csv"))
        out, is_err = reply(c.call("execute_code", {"code": code}))
        assert is_err is False
        assert list(out) == ["status", "output", "file_path", "generated_filename"]
        assert out["status"] == "success" and out["output"] == "Number of Fast Food records: 2\n"
        assert re.fullmatch(r"code_[0-9a-f]{8}\.py", out["generated_filename"])
        assert out["file_path"] == f"{storage}/{out['generated_filename']}"
        assert (storage / out["generated_filename"]).read_text() == code
        # user file name: base + random suffix
        out, _ = reply(c.call("execute_code", {"code": "print(1)", "filename": "calc.py"}))
        assert re.fullmatch(r"calc_[0-9a-f]{8}\.py", out["generated_filename"])
        # stderr output means status error, output = stderr (upstream drops stdout then)
        out, is_err = reply(c.call("execute_code", {"code": "import sys; print('o'); sys.stderr.write('w\\n')"}))
        assert (out["status"], out["output"], is_err) == ("error", "w\n", True)
        # a failing script: exec's error message
        out, is_err = reply(c.call("execute_code", {"code": "1/0"}))
        assert is_err is True and list(out) == ["status", "error", "file_path", "generated_filename"]
        assert out["error"].startswith(f'Command failed: python3 -u "{out["file_path"]}"\nTraceback')
        assert out["error"].endswith("ZeroDivisionError: division by zero\n")
        # thrown errors are JSON-RPC errors (low-level TypeScript Server)
        for args in [{}, {"code": ""}]:
            with pytest.raises(RpcError) as e:
                c.call("execute_code", args)
            assert (e.value.code, e.value.message) == (-32603, "Code is required")
        with pytest.raises(RpcError) as e:
            c.call("nope", {})
        assert (e.value.code, e.value.message) == (-32603, "Unknown tool")


def test_file_tools(data):
    storage = data / "repos" / "mcp_code_executor_workspace"
    with atlas(data) as c:
        out, is_err = reply(c.call("initialize_code_file", {"content": "x = 40\n", "filename": "big"}))
        assert is_err is False and out["status"] == "success"
        assert out["message"] == "File initialized successfully"
        assert re.fullmatch(r"big_[0-9a-f]{8}\.py", out["filename"])
        path = out["file_path"]
        assert path == f"{storage}/{out['filename']}"
        out, _ = reply(c.call("append_to_code_file", {"file_path": path, "content": "print(x + 2)\n"}))
        assert out == {"status": "success", "message": "Content appended successfully", "file_path": path}
        out, _ = reply(c.call("read_code_file", {"file_path": path}))
        assert out == {"status": "success", "content": "x = 40\nprint(x + 2)\n", "file_path": path}
        out, is_err = reply(c.call("execute_code_file", {"file_path": path}))
        assert (out, is_err) == ({"status": "success", "output": "42\n", "file_path": path}, False)
        missing = f"{storage}/nope.py"
        for tool, args in [("read_code_file", {}), ("execute_code_file", {}),
                           ("append_to_code_file", {"content": "x"})]:
            out, is_err = reply(c.call(tool, {"file_path": missing, **args}))
            assert is_err is True
            assert out == {"status": "error", "error":
                           f"ENOENT: no such file or directory, access '{missing}'", "file_path": missing}
        with pytest.raises(RpcError) as e:
            c.call("append_to_code_file", {"file_path": path})
        assert e.value.message == "Content is required"
        with pytest.raises(RpcError) as e:
            c.call("read_code_file", {})
        assert e.value.message == "File path is required"


@pytest.mark.parametrize("tool,args", [
    ("read_code_file", {"file_path": "/etc/passwd"}),
    ("read_code_file", {"file_path": "{root}/../outside.py"}),
    ("read_code_file", {"file_path": "{root}/link_out.py"}),
    ("execute_code_file", {"file_path": "{root}/../outside.py"}),
    ("execute_code_file", {"file_path": "{root}/link_out.py"}),
    ("append_to_code_file", {"file_path": "{root}/../outside.py", "content": "x"}),
    ("append_to_code_file", {"file_path": "{root}/link_out.py", "content": "x"}),
    ("execute_code", {"code": "print(1)", "filename": "../../../escaped"}),
    ("initialize_code_file", {"content": "x", "filename": "../../../escaped"}),
])
def test_escape_attempts(data, tool, args):
    args = {k: v.format(root=data) for k, v in args.items()}
    before = (data.parent / "outside.py").read_text()
    with atlas(data) as c:
        out, is_err = reply(c.call(tool, args))
    assert is_err is True and out["status"] == "error"
    assert out["error"].startswith("Access denied - "), out
    assert (data.parent / "outside.py").read_text() == before
    assert not list(data.parent.glob("escaped*"))


def test_packages_and_environment(data):
    with atlas(data) as c:
        out, is_err = reply(c.call("check_installed_packages",
                                   {"packages": ["pandas", "numpy", "scipy", "no_such_pkg_zz"]}))
        assert is_err is False
        assert out["status"] == "success" and out["env_type"] == "venv-uv"
        assert out["all_installed"] is False and out["not_installed"] == ["no_such_pkg_zz"]
        assert out["package_details"]["pandas"]["installed"] is True
        assert out["package_details"]["no_such_pkg_zz"] == {"installed": False, "error": "Package not found"}
        out, is_err = reply(c.call("install_dependencies", {"packages": ["requests"]}))
        assert is_err is True and out["status"] == "error" and out["env_type"] == "venv-uv"
        assert "no network access and no local package cache" in out["error"]
        assert "PIP_FIND_LINKS" in out["error"]
        out, _ = reply(c.call("install_dependencies", {"packages": []}))
        assert out == {"status": "error", "error": "No packages specified"}
        with pytest.raises(RpcError) as e:
            c.call("install_dependencies", {"packages": "pandas"})
        assert e.value.message == "Valid packages array is required"
        storage = data / "repos" / "mcp_code_executor_workspace"
        out, _ = reply(c.call("get_environment_config", {}))
        assert out == {"status": "success", "config": {"type": "venv-uv", "uv_venv_path": str(storage / ".venv")}}
        out, is_err = reply(c.call("configure_environment", {"type": "conda"}))
        assert (out, is_err) == ({"status": "error", "error": "conda_name is required when type is 'conda'"}, True)
        out, _ = reply(c.call("configure_environment", {"type": "bogus"}))
        assert out["error"] == ("Invalid arguments: 'type' is required and must be one of 'conda', "
                                "'venv', or 'venv-uv'")
        out, is_err = reply(c.call("configure_environment", {"type": "venv", "venv_path": "/opt/v"}))
        assert is_err is False
        assert out == {"status": "success", "message": "Environment configuration updated",
                       "previous": {"type": "venv-uv", "uv_venv_path": str(storage / ".venv")},
                       "current": {"type": "venv", "venv_path": "/opt/v", "uv_venv_path": str(storage / ".venv")}}
        assert c.list_tools()[0]["description"].startswith("Execute Python code in the venv environment.")


def test_offline_install_from_wheel_dir(data, tmp_path):
    """With a venv and a wheel directory, install_dependencies installs offline."""
    storage = data / "repos" / "mcp_code_executor_workspace"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", "--without-pip",
                    str(storage / ".venv")], check=True)
    wheels = tmp_path / "wheels"
    pkg = tmp_path / "src" / "mbdemo"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = '1.2.3'\n")
    (tmp_path / "src" / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='mbdemo', version='1.2.3', packages=['mbdemo'])\n")
    r = subprocess.run(["/usr/bin/python3", "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "-w", str(wheels), str(tmp_path / "src")], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot build a test wheel offline: " + r.stderr.decode()[-300:])
    with atlas(data, {"PIP_FIND_LINKS": str(wheels)}) as c:
        out, is_err = reply(c.call("install_dependencies", {"packages": ["mbdemo"]}))
        assert is_err is False, out
        assert out["status"] == "success" and out["installed_packages"] == ["mbdemo"]
        out, _ = reply(c.call("execute_code", {"code": "import mbdemo; print(mbdemo.__version__)"}))
        assert out["output"] == "1.2.3\n"


def test_system_env_type_and_missing_venv(data):
    with atlas(data, {"ENV_TYPE": "system"}) as c:
        out, _ = reply(c.call("execute_code", {"code": "import numpy; print(numpy.__name__)"}))
        assert out["output"] == "numpy\n"
    # a configured venv without bin/activate: python3 still runs (no seed venv)
    with atlas(data) as c:
        out, _ = reply(c.call("execute_code", {"code": "print('ok')"}))
        assert out["output"] == "ok\n"


def test_startup_requires_storage(tmp_path):
    p = subprocess.run([MCPBOX_BIN, "mcp", "code-executor"], env={"PATH": PATH},
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert p.returncode != 0 and b"Missing required environment variable: CODE_STORAGE_DIR" in p.stderr
    p = subprocess.run([MCPBOX_BIN, "mcp", "code-executor"], env={"PATH": PATH, "CODE_STORAGE_DIR": str(tmp_path)},
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert p.returncode != 0 and b"CONDA_ENV_NAME" in p.stderr


@pytest.mark.skipif(not os.path.isfile(os.path.join(BENCH, "mcp-atlas", "sample_tasks.json")),
                    reason="bench-data not available")
def test_matches_atlas_trajectories(tmp_path):
    """Replays every mcp-code-executor call of the Atlas samples on a seed built by
    scripts/build-atlas-seed and compares the output field (file names are random)."""
    seed = tmp_path / "seed"
    subprocess.run([os.path.join(HERE, "..", "..", "scripts", "build-atlas-seed"), str(seed)],
                   check=True, capture_output=True)
    tasks = json.load(open(os.path.join(BENCH, "mcp-atlas", "sample_tasks.json")))
    storage = seed / "repos" / "mcp_code_executor_workspace"
    env = {"PATH": PATH, "CODE_STORAGE_DIR": str(storage), "ENV_TYPE": "venv-uv",
           "UV_VENV_PATH": str(storage / ".venv")}
    checked = 0
    with Checked([MCPBOX_BIN, "mcp", "code-executor", "--variant", "atlas", "--allowed-dir",
                      str(seed)], env=env, cwd=str(seed)) as c:
        c.initialize()
        for t in tasks:
            traj = t["trajectory"]
            for i, m in enumerate(traj):
                for call in m.get("tool_calls") or []:
                    if call["function"]["name"] != "mcp-code-executor_execute_code":
                        continue
                    args = json.loads(call["function"]["arguments"].replace("/data", str(seed)))
                    want = json.loads(traj[i + 1]["content"][0]["text"])
                    got, is_err = reply(c.call("execute_code", args))
                    assert got["status"] == want["status"] and got["output"] == want["output"], t["task_id"]
                    assert is_err is traj[i + 1]["content"][0]["isError"]
                    checked += 1
    assert checked >= 4


# ------------------------------------------------------------ Toolathlon variant

def toolathlon(ws):
    c = Checked([MCPBOX_BIN, "mcp", "code-executor", "--variant", "toolathlon", "--workspace",
                     str(ws)], env={"PATH": PATH})
    c.initialize()
    return c


INFO = re.compile(r"=== EXECUTION INFO ===\nReturn code: (-?\d+)\nExecution time: \d+\.\d{3} seconds\n"
                  r"Timeout limit: (\S+) seconds$")


def text_of(res):
    assert not res.get("isError"), res
    (b,) = res["content"]
    return b["text"]


def test_python_execute(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "in.txt").write_text("data in workspace\n")
    with toolathlon(ws) as c:
        tools = c.list_tools()
        assert [t["name"] for t in tools] == ["python_execute"]
        assert tools[0]["inputSchema"]["properties"]["timeout"] == {
            "type": "number", "maximum": 120, "default": 30, "description":
            "Maximum execution time in seconds. Cannot exceed 120 seconds. If a value greater than "
            "120 is provided, it will be automatically limited to 120 seconds. Default is 30 seconds."}
        t = text_of(c.call("python_execute", {"code": "print(open('in.txt').read().strip())\n\n"}))
        head, _, info = t.partition("=== EXECUTION INFO ===")
        assert head == "=== STDOUT ===\ndata in workspace\n"
        assert INFO.search(t).groups() == ("0", "30")
        t = text_of(c.call("python_execute", {"code": "import sys\nprint('o')\nsys.stderr.write('e  \\n')\nsys.exit(3)",
                                              "filename": "job"}))
        assert t.startswith("=== STDOUT ===\no\n=== STDERR ===\ne\n=== EXECUTION INFO ===\n")
        assert INFO.search(t).groups() == ("3", "30")
        assert (ws / ".python_tmp" / "job.py").is_file()
        t = text_of(c.call("python_execute", {"code": "pass", "timeout": 200}))
        assert t.startswith("No console output produced.\n=== EXECUTION INFO ===")
        assert INFO.search(t).groups() == ("0", "120")
        t = text_of(c.call("python_execute", {"code": "import time; time.sleep(5)", "timeout": 1.5}))
        assert re.fullmatch(r"=== EXECUTION TIMEOUT ===\nExecution timed out after 1\.5 seconds\n"
                            r"Execution time: \d+\.\d{3} seconds", t)
        assert text_of(c.call("python_execute", {"code": "x", "timeout": "9"})) == \
            "Error executing Python code: '>' not supported between instances of 'str' and 'int'"
        assert text_of(c.call("python_execute", {"code": "x", "filename": 7})) == \
            "Error executing Python code: 'int' object has no attribute 'endswith'"
        t = text_of(c.call("python_execute", {"code": "print('x')", "filename": "/etc/evil.py"}))
        assert t == f"Error executing Python code: Access denied - path outside allowed directories: /etc/evil.py not in {ws}"
        t = text_of(c.call("python_execute", {"code": "print('x')", "filename": "../../escape.py"}))
        assert t.startswith("Error executing Python code: Access denied - path outside allowed directories")
        assert not (tmp_path / "escape.py").exists()
        names = sorted(os.listdir(ws / ".python_tmp"))
        assert "job.py" in names and any(re.fullmatch(r"[0-9a-f-]{36}\.py", n) for n in names)
