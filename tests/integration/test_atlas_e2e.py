"""MCP-Atlas end to end: a seed directory built here (a CSV, a git repo with
a commit, the memory file), served with --seed MCP_Atlas=DIR; acquire the
Atlas servers with benchmark MCP_Atlas and call their tools through the
gateway with the official TypeScript SDK client, one session per call as the
Atlas harness does."""
import json
import os
import subprocess

import pytest

from conftest import Daemon
from gwharness import node_client

ATLAS = ["filesystem", "terminal", "git", "localmemory", "code-executor"]


def build_seed(root):
    seed = os.path.join(root, "seed")
    os.makedirs(os.path.join(seed, "repos", "memory_mcp_server"))
    os.makedirs(os.path.join(seed, "repos", "mcp_code_executor_workspace"))
    with open(os.path.join(seed, "cities.csv"), "w") as f:
        f.write("city,population\nLyon,522250\nNantes,320732\n")
    memory = [
        {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["wrote notes"]},
        {"type": "relation", "from": "Ada", "to": "Engine", "relationType": "described"},
    ]
    with open(os.path.join(seed, "repos", "memory_mcp_server", "memories-for-mcp.json"), "w") as f:
        f.write("\n".join(json.dumps(m) for m in memory) + "\n")
    repo = os.path.join(seed, "repos", "demo")
    os.makedirs(repo)
    git = ["git", "-C", repo, "-c", "user.name=Seed", "-c", "user.email=seed@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
    with open(os.path.join(repo, "README.md"), "w") as f:
        f.write("demo\n")
    subprocess.run(git + ["add", "README.md"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "first commit"], check=True)
    return seed


def call(url, tool, args):
    out = node_client("sequential", url, 1, tool, json.dumps(args))
    assert len(out["texts"]) == 1, out
    return out["texts"][0]


@pytest.fixture
def atlas(tmp_root):
    seed = build_seed(tmp_root)
    d = Daemon(os.path.join(tmp_root, "var"), ["--seed", "MCP_Atlas=" + seed]).start()
    yield d
    d.stop()


def test_atlas_servers_on_a_seeded_workspace(atlas):
    with atlas.client() as api:
        r = api.post("/local-sandbox", json={"server_names": ATLAS, "benchmark": "MCP_Atlas"})
        assert r.status_code == 201, r.text
        sb = r.json()
        urls = {s["server_name"]: s["mcp_server_url"] for s in sb["servers"]}
        assert all(s["metadata"]["ready"] for s in sb["servers"]), sb

        text = call(urls["filesystem"], "read_text_file", {"path": "/data/cities.csv"})
        assert "Lyon,522250" in text
        text = call(urls["terminal"], "run_command", {"command": "cat cities.csv"})
        assert "Nantes,320732" in text and "return code: 0" in text, text
        # Atlas's terminal allows ls, cat and find only, without shell operators
        text = call(urls["terminal"], "run_command", {"command": "rm cities.csv"})
        assert "not allowed" in text, text
        text = call(urls["git"], "git_log", {"repo_path": "/data/repos/demo"})
        assert "first commit" in text and "Seed" in text, text
        text = call(urls["git"], "git_status", {"repo_path": "/data/repos/demo"})
        assert "main" in text, text
        text = call(urls["localmemory"], "read_graph", {})
        graph = json.loads(text)
        assert [e["name"] for e in graph["entities"]] == ["Ada"]
        assert graph["relations"][0]["to"] == "Engine"
        text = call(urls["code-executor"], "execute_code",
                    {"code": "import csv\nprint(sum(int(r['population']) for r in "
                             "csv.DictReader(open('/data/cities.csv'))))",
                     "filename": "sum_pop"})
        assert "842982" in text, text
        # the seed is the reset point
        call(urls["filesystem"], "write_file", {"path": "/data/cities.csv", "content": "gone"})
        assert api.post(f"/local-sandbox/{sb['local_sandbox_id']}/reset").status_code == 200
        assert "Lyon" in call(urls["filesystem"], "read_text_file", {"path": "/data/cities.csv"})
