"""`mcpbox mcp git` over stdio, for both upstream versions (2025.7.1, 2025.1.14).

The expected texts are computed with GitPython (Debian's python3-git), formatted the
way mcp-server-git's handlers format GitPython objects, so the comparison is against
what upstream would print for the very same repository."""
import os
import re
import subprocess

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

git = pytest.importorskip("git")

PATH = "/usr/local/bin:/usr/bin:/bin"
ADDR = re.compile(r" at 0x[0-9a-f]+>")


def sh(cwd, *args, env=None):
    e = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", **(env or {}))
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=e).stdout


def commit(cwd, msg, date, author="Test User <test@example.com>"):
    name, email = author[:-1].split(" <")
    sh(cwd, "commit", "-q", "--allow-empty", "-m", msg, env={
        "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": date})


@pytest.fixture
def roots(tmp_path):
    """root/ holds repo/ (a history with edge cases), plain/ (not a repo) and an
    escaping symlink; outside/ holds another repository."""
    root = tmp_path / "root"
    repo = root / "repo"
    repo.mkdir(parents=True)
    sh(repo, "init", "-q", "-b", "main")
    sh(repo, "config", "user.name", "Test User")
    sh(repo, "config", "user.email", "test@example.com")
    (repo / "a.txt").write_text("line 1\nline 2\nline 3\n")
    (repo / "old name.txt").write_text("to be renamed\n" * 5)
    sh(repo, "add", ".")
    commit(repo, "Initial commit\n", "2024-01-20T17:33:08+01:00")
    (repo / "a.txt").write_text("line 1\nline two\nline 3\nline 4\n")
    sh(repo, "mv", "old name.txt", "new name.txt")
    (repo / "bin.dat").write_bytes(bytes(range(256)))
    sh(repo, "add", ".")
    commit(repo, "Update `file.ts`\n\nit's \"quoted\" and\ttabbed", "2024-03-29T14:43:08+11:00",
           author="\u265a PH\u2466 de Soria\u2122\u265b <hi@ph7.me>")
    os.remove(repo / "bin.dat")
    sh(repo, "add", "-A")
    commit(repo, "Remove binary", "2024-04-03T15:39:00-07:00")
    sh(repo, "branch", "feature")
    (root / "plain").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    sh(outside, "init", "-q")
    (root / "escape").symlink_to(outside)
    return root


def server(root, version, *extra):
    c = Checked([MCPBOX_BIN, "mcp", "git", "--upstream-version", version, "--repository",
                     str(root), *extra], env={"PATH": PATH, "LC_ALL": "C.UTF-8", "TZ": "UTC",
                                              "GIT_CONFIG_GLOBAL": "/dev/null"})
    c.initialize()
    return c


def ok(res):
    assert res["isError"] is False, res  # as the Python SDK serializes it
    assert len(res["content"]) == 1 and res["content"][0]["type"] == "text"
    return res["content"][0]["text"]


def err(res):
    assert res.get("isError") is True, res
    return StdioClient.text(res)


# --- GitPython oracles: what mcp-server-git's handlers print ------------------------

def log_text(repo, max_count, new):
    out = []
    for c in repo.iter_commits(max_count=max_count):
        if new:
            out.append(f"Commit: {c.hexsha!r}\nAuthor: {c.author!r}\nDate: {c.authored_datetime}\n"
                       f"Message: {c.message!r}\n")
        else:
            out.append(f"Commit: {c.hexsha}\nAuthor: {c.author}\nDate: {c.authored_datetime}\n"
                       f"Message: {c.message}\n")
    return "Commit history:\n" + "\n".join(out)


def show_text(repo, rev, new):
    c = repo.commit(rev)
    if new:
        out = [f"Commit: {c.hexsha!r}\nAuthor: {c.author!r}\nDate: {c.authored_datetime!r}\n"
               f"Message: {c.message!r}\n"]
    else:
        out = [f"Commit: {c.hexsha}\nAuthor: {c.author}\nDate: {c.authored_datetime}\n"
               f"Message: {c.message}\n"]
    diff = c.parents[0].diff(c, create_patch=True) if c.parents else \
        c.diff(git.NULL_TREE, create_patch=True)
    for d in diff:
        out.append(f"\n--- {d.a_path}\n+++ {d.b_path}\n")
        out.append(d.diff.decode("utf-8"))
    return "".join(out)


VERSIONS = ["2025.7.1", "2025.1.14"]


def test_tool_lists(roots):
    with server(roots, "2025.7.1") as c:
        init = c.initialize()
        assert init["serverInfo"]["name"] == "mcp-git"
        tools = {t["name"]: t for t in c.list_tools()}
        assert list(tools) == ["git_status", "git_diff_unstaged", "git_diff_staged", "git_diff",
                               "git_commit", "git_add", "git_reset", "git_log",
                               "git_create_branch", "git_checkout", "git_show", "git_init",
                               "git_branch"]
        assert tools["git_diff"]["inputSchema"] == {
            "properties": {"repo_path": {"title": "Repo Path", "type": "string"},
                           "target": {"title": "Target", "type": "string"},
                           "context_lines": {"default": 3, "title": "Context Lines", "type": "integer"}},
            "required": ["repo_path", "target"], "title": "GitDiff", "type": "object"}
        assert tools["git_create_branch"]["inputSchema"]["properties"]["base_branch"] == {
            "anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Base Branch"}
        assert tools["git_branch"]["inputSchema"]["required"] == ["repo_path", "branch_type"]
        assert tools["git_log"]["description"] == "Shows the commit logs"
    with server(roots, "2025.1.14") as c:
        tools = {t["name"]: t for t in c.list_tools()}
        assert len(tools) == 11 and "git_init" not in tools and "git_branch" not in tools
        assert "context_lines" not in tools["git_diff_unstaged"]["inputSchema"]["properties"]


@pytest.mark.parametrize("version", VERSIONS)
def test_log_and_show_match_gitpython(roots, version):
    new = version == "2025.7.1"
    repo = git.Repo(roots / "repo")
    with server(roots, version) as c:
        rp = str(roots / "repo")
        assert ok(c.call("git_log", {"repo_path": rp})) == log_text(repo, 10, new)
        assert ok(c.call("git_log", {"repo_path": rp, "max_count": 2})) == log_text(repo, 2, new)
        for rev in ["HEAD", "HEAD~1", "HEAD~2", "main", repo.head.commit.hexsha[:8]]:
            got = ok(c.call("git_show", {"repo_path": rp, "revision": rev}))
            assert ADDR.sub(" at 0x>", got) == ADDR.sub(" at 0x>", show_text(repo, rev, new)), rev


def test_log_shape_as_atlas_recorded(roots):
    with server(roots, "2025.7.1") as c:
        text = ok(c.call("git_log", {"repo_path": str(roots / "repo"), "max_count": 2}))
    lines = text.split("\n")
    assert lines[0] == "Commit history:"
    assert re.fullmatch(r"Commit: '[0-9a-f]{40}'", lines[1])
    assert lines[2] == 'Author: <git.Actor "Test User <test@example.com>">'
    assert lines[3] == "Date: 2024-04-03 15:39:00-07:00"
    assert lines[4] == "Message: 'Remove binary\\n'"
    assert lines[7] == 'Author: <git.Actor "\u265a PH\u2466 de Soria\u2122\u265b <hi@ph7.me>">'
    assert lines[8] == "Date: 2024-03-29 14:43:08+11:00"
    assert lines[9] == "Message: 'Update `file.ts`\\n\\nit\\'s \"quoted\" and\\ttabbed\\n'"


@pytest.mark.parametrize("version", VERSIONS)
def test_status_diff_add_commit_reset(roots, version):
    rp = str(roots / "repo")
    repo = git.Repo(rp)
    ctx = ["--unified=3"] if version == "2025.7.1" else []
    with server(roots, version) as c:
        assert ok(c.call("git_status", {"repo_path": rp})) == "Repository status:\n" + repo.git.status()
        (roots / "repo" / "a.txt").write_text("changed\n")
        (roots / "repo" / "new.txt").write_text("new\n")
        assert ok(c.call("git_diff_unstaged", {"repo_path": rp})) == \
            "Unstaged changes:\n" + repo.git.diff(*ctx)
        assert ok(c.call("git_add", {"repo_path": rp, "files": ["a.txt", "new.txt"]})) == \
            "Files staged successfully"
        assert ok(c.call("git_diff_staged", {"repo_path": rp})) == \
            "Staged changes:\n" + repo.git.diff(*ctx, "--cached")
        assert ok(c.call("git_diff", {"repo_path": rp, "target": "HEAD~2"})) == \
            "Diff with HEAD~2:\n" + repo.git.diff(*ctx, "HEAD~2")
        assert ok(c.call("git_reset", {"repo_path": rp})) == "All staged changes reset"
        assert repo.git.diff("--cached") == ""
        ok(c.call("git_add", {"repo_path": rp, "files": ["new.txt"]}))
        text = ok(c.call("git_commit", {"repo_path": rp, "message": "Add new.txt"}))
        sha = repo.head.commit.hexsha
        assert text == f"Changes committed successfully with hash {sha}"
        # the message is stored verbatim (no newline added), author from the repo config
        assert repo.head.commit.message == "Add new.txt"
        assert repo.head.commit.author.email == "test@example.com"
        assert repo.head.commit.parents[0].message == "Remove binary\n"
        assert "new.txt" in repo.git.ls_files().split("\n")
        assert repo.git.status("--porcelain") == " M a.txt"


def test_context_lines(roots):
    rp = str(roots / "repo")
    (roots / "repo" / "a.txt").write_text("line 1\nline two\nline 3\nline FOUR\n")
    with server(roots, "2025.7.1") as c:
        assert ok(c.call("git_diff_unstaged", {"repo_path": rp, "context_lines": 0})) == \
            "Unstaged changes:\n" + git.Repo(rp).git.diff("--unified=0")


@pytest.mark.parametrize("version", VERSIONS)
def test_branches(roots, version):
    rp = str(roots / "repo")
    repo = git.Repo(rp)
    with server(roots, version) as c:
        assert ok(c.call("git_create_branch", {"repo_path": rp, "branch_name": "dev"})) == \
            "Created branch 'dev' from 'main'"
        assert ok(c.call("git_create_branch", {"repo_path": rp, "branch_name": "dev2",
                                               "base_branch": "feature"})) == \
            "Created branch 'dev2' from 'feature'"
        assert repo.heads.dev2.commit == repo.heads.feature.commit
        assert err(c.call("git_create_branch", {"repo_path": rp, "branch_name": "x",
                                                "base_branch": "nope"})) == "No item found with id 'nope'"
        assert ok(c.call("git_checkout", {"repo_path": rp, "branch_name": "dev"})) == \
            "Switched to branch 'dev'"
        assert repo.active_branch.name == "dev"
        e = err(c.call("git_checkout", {"repo_path": rp, "branch_name": "nope"}))
        assert e == ("Cmd('git') failed due to: exit code(1)\n  cmdline: git checkout nope\n"
                     "  stderr: 'error: pathspec 'nope' did not match any file(s) known to git'")
        if version == "2025.7.1":
            assert ok(c.call("git_branch", {"repo_path": rp, "branch_type": "local"})) == \
                repo.git.branch()
            first = repo.commit("HEAD~2").hexsha
            assert ok(c.call("git_branch", {"repo_path": rp, "branch_type": "all",
                                            "contains": first})) == repo.git.branch("-a", "--contains", first)
            assert ok(c.call("git_branch", {"repo_path": rp, "branch_type": "weird"})) == \
                "Invalid branch type: weird"
        else:
            assert err(c.call("git_branch", {"repo_path": rp, "branch_type": "local"})) == \
                "Unknown tool: git_branch"


def test_errors_as_upstream_raises_them(roots):
    rp = str(roots / "repo")
    with server(roots, "2025.7.1") as c:
        assert err(c.call("git_show", {"repo_path": rp, "revision": "nope"})) == "nope"
        e = err(c.call("git_diff", {"repo_path": rp, "target": "nope"}))
        assert e.startswith("Cmd('git') failed due to: exit code(128)\n"
                            "  cmdline: git diff --unified=3 nope\n  stderr: 'fatal: ambiguous argument 'nope'")
        assert err(c.call("git_status", {"repo_path": str(roots / "plain")})) == str(roots / "plain")
        assert err(c.call("git_status", {"repo_path": str(roots / "missing")})) == str(roots / "missing")
        assert err(c.call("git_add", {"repo_path": rp, "files": ["missing.txt"]})) == \
            "[Errno 2] No such file or directory: 'missing.txt'"
        assert err(c.call("git_status", {})) == \
            "Input validation error: 'repo_path' is a required property"
        assert err(c.call("git_log", {"repo_path": rp, "max_count": "5"})) == \
            "Input validation error: '5' is not of type 'integer'"
        assert err(c.call("git_add", {"repo_path": rp, "files": ["a", 1]})) == \
            "Input validation error: 1 is not of type 'string'"
        assert err(c.call("git_create_branch", {"repo_path": rp, "branch_name": "b",
                                                "base_branch": 7})) == \
            "Input validation error: 7 is not valid under any of the given schemas"
        assert err(c.call("git_nope", {"repo_path": rp})) == "Unknown tool: git_nope"


@pytest.mark.parametrize("path", ["/etc", "{root}/escape", "{root}/../outside", "{root}/repo/../../outside",
                                  "/", "{root}2"])
def test_repo_path_confined(roots, path):
    p = path.format(root=roots)
    with server(roots, "2025.7.1") as c:
        for tool, extra in [("git_status", {}), ("git_log", {}), ("git_show", {"revision": "HEAD"}),
                            ("git_diff", {"target": "HEAD"}), ("git_add", {"files": ["."]}),
                            ("git_commit", {"message": "x"}), ("git_reset", {}),
                            ("git_checkout", {"branch_name": "main"}),
                            ("git_create_branch", {"branch_name": "z"}), ("git_init", {}),
                            ("git_branch", {"branch_type": "local"}),
                            ("git_diff_unstaged", {}), ("git_diff_staged", {})]:
            e = err(c.call(tool, {"repo_path": p, **extra}))
            assert e.startswith("Repository path '") and \
                e.endswith(f"' is outside the allowed repository '{roots}'"), (tool, e)


def test_option_injection_refused(roots, tmp_path):
    rp = str(roots / "repo")
    with server(roots, "2025.7.1") as c:
        assert err(c.call("git_diff", {"repo_path": rp, "target": f"--output={tmp_path}/x"})) == \
            f"Invalid target: '--output={tmp_path}/x' - cannot start with '-'"
        assert err(c.call("git_checkout", {"repo_path": rp, "branch_name": "--orphan=evil"})) == \
            "Invalid branch name: '--orphan=evil' - cannot start with '-'"
        assert err(c.call("git_show", {"repo_path": rp, "revision": "--output=/tmp/y"})) == \
            "--output=/tmp/y"
    assert not (tmp_path / "x").exists()


def test_init_only_in_2025_7_1(roots):
    target = roots / "fresh" / "nested"
    with server(roots, "2025.7.1") as c:
        assert ok(c.call("git_init", {"repo_path": str(target)})) == \
            f"Initialized empty Git repository in {target}/.git"
        assert (target / ".git" / "HEAD").is_file()
        # an unborn branch: git_log reports GitPython's ValueError
        assert err(c.call("git_log", {"repo_path": str(target)})) == \
            "Reference at 'refs/heads/master' does not exist"
    with server(roots, "2025.1.14") as c:
        # upstream opens the repository before it looks at the tool name
        assert err(c.call("git_init", {"repo_path": str(roots / "other")})) == str(roots / "other")
        assert err(c.call("git_init", {"repo_path": str(roots / "repo")})) == "Unknown tool: git_init"
    assert not (roots / "other").exists()


def test_first_commit_in_new_repo(roots):
    target = roots / "newrepo"
    with server(roots, "2025.7.1") as c:
        ok(c.call("git_init", {"repo_path": str(target)}))
        sh(target, "config", "user.name", "Ann")
        sh(target, "config", "user.email", "ann@example.com")
        (target / "f.txt").write_text("x\n")
        ok(c.call("git_add", {"repo_path": str(target), "files": ["."]}))
        text = ok(c.call("git_commit", {"repo_path": str(target), "message": "root"}))
        repo = git.Repo(target)
        assert text == f"Changes committed successfully with hash {repo.head.commit.hexsha}"
        shown = ok(c.call("git_show", {"repo_path": str(target), "revision": "HEAD"}))
        assert ADDR.sub(" at 0x>", shown) == ADDR.sub(" at 0x>", show_text(repo, "HEAD", True))
