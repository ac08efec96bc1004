"""The archive corpus (archive_corpus.py) through the real upload path: PUT on
the signed URL, then initialize. Good archives land byte for byte; every
hostile one is refused with a 4xx whose message names the member (or the
archive problem), and nothing changes outside the workspace -- nor inside it,
since a refused archive is all-or-nothing."""
import os

import httpx
import pytest

import archive_corpus as corpus
from conftest import Daemon, sweep_sandboxes

STATUS = {"ok": 200, "refused": 400, "too_big": 413, "conflict": 409}


def outside_snapshot(root, workspace):
    """Everything under root except the workspace, the daemon's own files
    that legitimately change (database, blobs, log)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if dirpath == workspace or dirpath.startswith(workspace + os.sep):
            continue
        if rel_dir.split(os.sep)[:2] == ["var", "blobs"]:
            continue
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            if p == workspace or n.startswith("mcpbox.db") or n.endswith(".log"):
                continue
            st = os.lstat(p)
            # a directory's mtime moves when the daemon adds or removes its
            # own entries (staging directories, blobs); its contents are
            # compared entry by entry instead
            mtime = None if os.path.isdir(p) and not os.path.islink(p) else st.st_mtime_ns
            out[os.path.relpath(p, root)] = (st.st_mode, st.st_size if mtime else None, mtime)
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("archives"))
    # canaries next to the data dir that an escaping member would hit
    os.makedirs(os.path.join(root, "canary"))
    with open(os.path.join(root, "canary", "x"), "w") as f:
        f.write("canary")
    d = Daemon(os.path.join(root, "var"),
               ["--max-expanded", str(corpus.LIMITS["max_bytes"]),
                "--max-entries", str(corpus.LIMITS["max_entries"])]).start()
    yield root, d
    d.stop()
    sweep_sandboxes(root)


def put_and_initialize(api, sid, data):
    url = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
    r = httpx.put(url, content=data, headers={"Content-Type": "application/gzip"})
    assert r.status_code == 200, r.text
    return api.post(f"/local-sandbox/{sid}/initialize")


def test_corpus_is_large_enough():
    hostile = [c for c in corpus.cases() if c.expected != "ok"]
    assert len(hostile) >= 30


@pytest.mark.parametrize("case", corpus.cases(), ids=lambda c: c.name)
def test_case_through_api(server, case):
    root, d = server
    with d.client() as api:
        sid = api.post("/local-sandbox", json={"server_names": ["filesystem"]}).json()["local_sandbox_id"]
        ws = os.path.join(d.data_dir, "workspaces", sid, "data")
        if case.name in corpus.WORKSPACE_SETUP:
            assert put_and_initialize(api, sid, corpus.WORKSPACE_SETUP[case.name]).status_code == 200
        before_out = outside_snapshot(root, ws)
        before_ws = corpus.snapshot(ws)
        r = put_and_initialize(api, sid, case.data)
        assert r.status_code == STATUS[case.expected], (case.why, r.text)
        assert r.headers["content-type"].startswith("application/json")
        if case.expected == "ok":
            expected = corpus.expected_tree(case.data)
            diffs = corpus.matches(expected, corpus.snapshot(ws, with_root="." in expected))
            assert not diffs, (case.why, diffs)
        else:
            detail = r.json()["detail"]
            hint = corpus.MESSAGE_HINTS.get(case.name)
            if hint:
                assert hint in detail, (case.name, detail)
            assert corpus.snapshot(ws) == before_ws, "a refused archive changed the workspace"
        assert outside_snapshot(root, ws) == before_out, "something changed outside the workspace"
        assert not os.path.exists("/etc/mcpbox-pwned")
        assert not os.path.exists("/tmp/mcpbox-pwned-dir")
        api.delete(f"/local-sandbox/{sid}")
