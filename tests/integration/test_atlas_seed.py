"""scripts/build-atlas-seed: assembles the MCP-Atlas /data layout offline from a copy of
Atlas' data directory and local git mirrors, and says what it skipped."""
import os
import subprocess

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "build-atlas-seed")
ENV = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@x",
           GIT_COMMITTER_NAME="A", GIT_COMMITTER_EMAIL="a@x")


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=ENV).stdout.strip()


def make_atlas_data(tmp_path):
    """A miniature of services/agent-environment/data plus a mirror with one repo."""
    src = tmp_path / "atlas-data"
    (src / "repos" / "memory_mcp_server").mkdir(parents=True)
    (src / "repos" / "mcp_code_executor_workspace").mkdir()
    for i, name in enumerate(["Barber Shop.csv", "Top Movies.csv", "a.csv", "b.csv", "c.csv",
                              "d.csv", "e.csv", "f.csv"]):
        p = src / name
        p.write_text(f"col\n{i}\n")
        p.chmod(0o444)
    mem = src / "repos" / "memory_mcp_server" / "memories-for-mcp.json"
    mem.write_text('{"type":"entity","name":"x","entityType":"t","observations":[]}\n')
    mem.chmod(0o444)
    (src / "repos" / "mcp_code_executor_workspace" / "this-folder-contains-venv.txt").write_text("venv\n")
    mirror = tmp_path / "mirrors"
    origin = mirror / "storyteller"
    origin.mkdir(parents=True)
    git(origin, "init", "-q")
    (origin / "README.md").write_text("one\n")
    git(origin, "add", ".")
    git(origin, "commit", "-qm", "one")
    pinned = git(origin, "rev-parse", "HEAD")
    (origin / "README.md").write_text("two\n")
    git(origin, "commit", "-qam", "two")
    (src / "repos" / "git_submodule_info.csv").write_text(
        f"https://github.com/lgrammel/storyteller.git,{pinned},/data/repos/storyteller\n"
        "https://github.com/x/absent.git,1111111111111111111111111111111111111111,/data/repos/absent\n"
        "https://github.com/x/other.git,2222222222222222222222222222222222222222,/data/repos/other\n")
    (mirror / "other.git").mkdir()
    git(mirror / "other.git", "init", "-q", "--bare")
    return src, mirror, pinned


def test_builds_offline_layout(tmp_path):
    src, mirror, pinned = make_atlas_data(tmp_path)
    seed = tmp_path / "seed"
    p = subprocess.run([SCRIPT, str(seed), "--from", str(src), "--mirror", str(mirror)],
                       capture_output=True, text=True, env=ENV)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "done:    8 CSV files" in out
    assert f"done:    repos/storyteller @ {pinned[:12]}" in out
    assert "skipped: repos/absent: no local mirror" in out
    assert "skipped: repos/other: " in out and "does not contain 2222222222222222222222222222222222222222" in out
    # CSVs and the memory file are copied, writable (the memory server writes its file)
    assert (seed / "Barber Shop.csv").read_text() == "col\n0\n"
    mem = seed / "repos" / "memory_mcp_server" / "memories-for-mcp.json"
    assert os.access(mem, os.W_OK) and mem.read_text().startswith('{"type":"entity"')
    assert (seed / "repos" / ".DS_Store").exists()
    # the repository sits at the pinned commit, detached, with the GitHub origin
    repo = seed / "repos" / "storyteller"
    assert git(repo, "rev-parse", "HEAD") == pinned
    assert git(repo, "log", "--format=%s") == "one"
    assert git(repo, "remote", "get-url", "origin") == "https://github.com/lgrammel/storyteller.git"
    assert not (seed / "repos" / "absent").exists() and not (seed / "repos" / "other").exists()
    # the executor workspace: a venv on Debian's python with the scientific stack
    ws = seed / "repos" / "mcp_code_executor_workspace"
    assert (ws / "pyproject.toml").is_file() and (ws / "this-folder-contains-venv.txt").is_file()
    r = subprocess.run([str(ws / ".venv" / "bin" / "python"), "-c", "import pandas, numpy, scipy"])
    assert r.returncode == 0
    # a second run keeps what is there
    p = subprocess.run([SCRIPT, str(seed), "--from", str(src), "--mirror", str(mirror), "--force"],
                       capture_output=True, text=True, env=ENV)
    assert p.returncode == 0 and "repos/storyteller @ " in p.stdout and "(kept)" in p.stdout


def test_refuses_without_source_or_on_non_empty_dir(tmp_path):
    p = subprocess.run([SCRIPT, str(tmp_path / "s"), "--from", str(tmp_path / "nope")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "no Atlas data directory" in p.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    src, _, _ = make_atlas_data(tmp_path)
    p = subprocess.run([SCRIPT, str(tmp_path / "full"), "--from", str(src)], capture_output=True, text=True)
    assert p.returncode == 1 and "is not empty" in p.stderr


def test_ds_store_only_where_atlas_shows_one(tmp_path):
    """Atlas's recorded listings show one .DS_Store, /data/repos/.DS_Store, as a [FILE]: a
    reused seed (--force) or a Mac copy with others has them stripped, except one a
    repository tracks at its pinned commit."""
    src, mirror, _ = make_atlas_data(tmp_path)
    tracked = mirror / "slackr"
    tracked.mkdir()
    git(tracked, "init", "-q")
    (tracked / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    git(tracked, "add", ".")
    git(tracked, "commit", "-qm", "with a .DS_Store")
    with open(src / "repos" / "git_submodule_info.csv", "a") as f:
        f.write(f"https://github.com/x/slackr.git,{git(tracked, 'rev-parse', 'HEAD')},/data/repos/slackr\n")
    (src / ".DS_Store").write_bytes(b"mac")
    (src / "repos" / "memory_mcp_server" / ".DS_Store").write_bytes(b"mac")
    seed = tmp_path / "seed"
    (seed / "repos" / ".DS_Store").mkdir(parents=True)  # a directory where the file belongs
    (seed / ".DS_Store").write_bytes(b"stale")
    (seed / "repos" / "storyteller").mkdir()
    (seed / "repos" / "memory_mcp_server").mkdir()
    (seed / "repos" / "memory_mcp_server" / ".DS_Store").write_bytes(b"stale")
    p = subprocess.run([SCRIPT, str(seed), "--from", str(src), "--mirror", str(mirror), "--force",
                        "--no-venv"], capture_output=True, text=True, env=ENV)
    assert p.returncode == 0, p.stderr
    found = sorted(str(q.relative_to(seed)) for q in seed.rglob(".DS_Store")
                   if ".git" not in q.relative_to(seed).parts)
    assert found == ["repos/.DS_Store", "repos/slackr/.DS_Store"], found
    assert (seed / "repos" / ".DS_Store").is_file() and (seed / "repos" / ".DS_Store").stat().st_size == 0
    assert "stripped 2 stray .DS_Store file(s)" in p.stdout, p.stdout
    assert (seed / "repos" / "slackr" / ".DS_Store").read_bytes() == b"\0\0\0\1Bud1"
    # the top of /data lists no dot files, as Atlas's list_directory /data shows
    assert not [n for n in os.listdir(seed) if n.startswith(".")]
