"""`mcpbox archive extract|create`: the archive corpus, round trips with
Python's tarfile, overlay semantics, ownership and memory.

Each corpus case is extracted into a workspace `root/ws` that sits beside
canary files in `root/outside`; the staging area is a separate directory,
so that "nothing outside the workspace changed" can be checked strictly by
snapshotting the whole of `root` (mtimes included) before and after.
"""

import gzip
import io
import os
import re
import stat
import subprocess
import tarfile

import pytest

import archive_corpus as corpus

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("MCPBOX_BIN", os.path.join(HERE, "..", "..", "build", "asan", "mcpbox"))
REL_BIN = os.environ.get("MCPBOX_REL_BIN", os.path.join(HERE, "..", "..", "build", "mcpbox"))
LIMIT_ARGS = ["--max-bytes", str(corpus.LIMITS["max_bytes"]),
              "--max-entries", str(corpus.LIMITS["max_entries"])]
PWNED = ["/etc/mcpbox-pwned", "/tmp/mcpbox-pwned-dir"]


def run(*args, binary=None):
    r = subprocess.run([binary or BIN, "archive", *args], capture_output=True, timeout=300)
    err = r.stderr.decode("utf-8", "replace")
    for bad in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
        assert bad not in err, err
    return r.returncode, err


@pytest.fixture
def box(tmp_path):
    """root/{ws/keep.txt, outside/canary.txt, outside/dir/}, stage/ beside root."""
    root = tmp_path / "root"
    (root / "ws").mkdir(parents=True)
    (root / "ws" / "keep.txt").write_text("already in the workspace\n")
    (root / "outside" / "dir").mkdir(parents=True)
    (root / "outside" / "canary.txt").write_text("must not change\n")
    os.utime(root / "outside", (1_500_000_000, 1_500_000_000))
    stage = tmp_path / "stage"
    stage.mkdir()
    return root, root / "ws", stage


def extract(data, ws, stage, tmp, *extra):
    src = os.path.join(tmp, "in.tar.gz")
    with open(src, "wb") as f:
        f.write(data)
    return run("extract", src, str(ws), "--staging", str(stage), *LIMIT_ARGS, *extra)


GOOD = [c for c in corpus.cases() if c.expected == "ok"]
BAD = [c for c in corpus.cases() if c.expected != "ok"]


def test_corpus_is_big_enough():
    assert len(BAD) >= 30 and len(GOOD) >= 10


@pytest.mark.parametrize("case", GOOD, ids=[c.name for c in GOOD])
def test_good_archive_extracts(case, box, tmp_path):
    root, ws, stage = box
    os.unlink(ws / "keep.txt")
    outside = corpus.snapshot(root / "outside", with_root=True)
    rc, err = extract(case.data, ws, stage, tmp_path)
    assert rc == 0, err
    expected = corpus.expected_tree(case.data)
    actual = corpus.snapshot(ws, with_root="." in expected)
    assert corpus.matches(expected, actual) == [], case.why
    assert corpus.snapshot(root / "outside", with_root=True) == outside
    assert os.listdir(stage) == []
    if case.name == "good-hardlink":
        assert os.stat(ws / "orig.txt").st_ino == os.stat(ws / "copy.txt").st_ino == \
            os.stat(ws / "sub" / "copy2.txt").st_ino


@pytest.mark.parametrize("case", BAD, ids=[c.name for c in BAD])
def test_hostile_archive_is_refused(case, box, tmp_path):
    root, ws, stage = box
    setup = corpus.WORKSPACE_SETUP.get(case.name)
    if setup:
        rc, err = extract(setup, ws, stage, tmp_path)
        assert rc == 0, err
    before = corpus.snapshot(root, with_root=True)
    rc, err = extract(case.data, ws, stage, tmp_path)
    assert rc == 1, "accepted: %s" % case.why
    hint = corpus.MESSAGE_HINTS[case.name]
    assert hint in err, (hint, err)
    assert err.count("\n") == 1, "one line of message: %r" % err
    # All or nothing, and nothing outside: the whole root is as it was.
    assert corpus.snapshot(root, with_root=True) == before
    assert os.listdir(stage) == []
    for p in PWNED:
        assert not os.path.lexists(p)


def test_default_staging_leaves_no_trace(box, tmp_path):
    root, ws, _ = box
    names = sorted(os.listdir(root))
    src = tmp_path / "a.tar.gz"
    for case in ("good-relative", "dotdot", "gzip-bomb"):
        src.write_bytes(dict((c.name, c.data) for c in corpus.cases())[case])
        rc, _ = run("extract", str(src), str(ws), *LIMIT_ARGS)
        assert rc == (0 if case.startswith("good") else 1)
        assert sorted(os.listdir(root)) == names
    assert (ws / "src" / "main.c").exists()


def test_overlay_keeps_replaces_and_merges(box, tmp_path):
    root, ws, stage = box
    (ws / "d").mkdir()
    (ws / "d" / "old.txt").write_text("old\n")
    (ws / "replace.txt").write_text("before\n")
    os.symlink("keep.txt", ws / "link")
    data = corpus.tgz([corpus.D("d", mode=0o700, mtime=1_234_567_890), corpus.F("d/new.txt", b"new\n"),
                       corpus.F("replace.txt", b"after\n"), corpus.F("link", b"file replaces link\n")])
    rc, err = extract(data, ws, stage, tmp_path)
    assert rc == 0, err
    assert (ws / "keep.txt").read_text() == "already in the workspace\n"
    assert (ws / "d" / "old.txt").read_text() == "old\n"
    assert (ws / "d" / "new.txt").read_text() == "new\n"
    assert (ws / "replace.txt").read_text() == "after\n"
    assert not os.path.islink(ws / "link") and (ws / "link").read_text() == "file replaces link\n"
    st = os.stat(ws / "d")
    assert stat.S_IMODE(st.st_mode) == 0o700 and int(st.st_mtime) == 1_234_567_890


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_owner_applies_to_every_entry(box, tmp_path):
    root, ws, stage = box
    data = corpus.tgz([corpus.D("."), corpus.D("a"), corpus.F("a/f", b"f"), corpus.L("a/l", "f"),
                       corpus.F("x/y/implicit.txt", b"i"), corpus.H("a/h", "a/f")])
    rc, err = extract(data, ws, stage, tmp_path, "--owner", "1234:5678")
    assert rc == 0, err
    for p in [ws, ws / "a", ws / "a" / "f", ws / "a" / "l", ws / "x", ws / "x" / "y",
              ws / "x" / "y" / "implicit.txt", ws / "a" / "h"]:
        st = os.lstat(p)
        assert (st.st_uid, st.st_gid) == (1234, 5678), p
    assert os.stat(ws / "keep.txt").st_uid == 0  # not named by the archive


# ---------------------------------------------------------------- round trips

def make_tree(base):
    """A tree with everything a dump must carry, plus what it must skip."""
    os.makedirs(base / "empty dir")
    os.makedirs(base / "private", mode=0o700)
    os.makedirs(base / "ünïcödé dir" / "nested" / "deeper")
    (base / "ünïcödé dir" / "naïve file.txt").write_text("café\n")
    (base / "ünïcödé dir" / "nested" / "deeper" / "data.bin").write_bytes(os.urandom(300_000))
    (base / "script.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(base / "script.sh", 0o755)
    (base / "readonly.txt").write_text("ro\n")
    os.chmod(base / "readonly.txt", 0o444)
    (base / "private" / "secret.txt").write_text("s\n")
    os.chmod(base / "private" / "secret.txt", 0o600)
    (base / "empty file").write_bytes(b"")
    os.symlink("ünïcödé dir/naïve file.txt", base / "rel link")
    os.symlink("../script.sh", base / "private" / "up link")
    t = 1_500_000_000
    for dirpath, dirnames, filenames in sorted(os.walk(base), reverse=True):
        for n in filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                os.utime(p, (t, t))
                t += 7
        os.utime(dirpath, (t, t))
        t += 11


def add_unsafe(base):
    os.symlink("/etc/passwd", base / "absolute link")
    os.symlink("../../outside", base / "private" / "escaping link")
    os.mkfifo(base / "a fifo")
    (base / "suid").write_text("x")
    os.chmod(base / "suid", 0o4755)


def dump_members(path):
    with tarfile.open(path, "r:gz") as t:
        return t.getmembers()


def test_dump_is_extractable_by_tarfile_data_filter(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    make_tree(src)
    add_unsafe(src)
    out = tmp_path / "dump.tar.gz"
    rc, err = run("create", str(src), str(out))
    assert rc == 0, err
    for skipped in ("./absolute link", "./private/escaping link", "./a fifo"):
        assert "skipped " + skipped in err

    members = dump_members(out)
    names = [m.name for m in members]
    assert names[0] == "." and all(n.startswith("./") for n in names[1:])
    # depth first, each directory's names sorted bytewise
    def key(n):
        return [p.encode() for p in n.split("/")]
    assert names[1:] == sorted(names[1:], key=key)
    for m in members:
        assert (m.uid, m.gid, m.uname, m.gname) == (0, 0, "", "")
        assert m.isreg() or m.isdir() or m.issym()
        assert not m.mode & 0o6000
        if m.issym():
            assert not m.linkname.startswith("/")
    assert "./empty dir" in names and "./suid" in names

    dest = tmp_path / "dest"
    dest.mkdir()
    corpus.data_filter_extract(out.read_bytes(), str(dest))
    # drop what the dump skipped, keeping the two directories' mtimes as dumped
    kept = {d: os.stat(d).st_mtime_ns for d in (src, src / "private")}
    os.unlink(src / "absolute link")
    os.unlink(src / "private" / "escaping link")
    os.unlink(src / "a fifo")
    for d, ns in kept.items():
        os.utime(d, ns=(ns, ns))
    want, got = corpus.snapshot(src, with_root=True), corpus.snapshot(dest, with_root=True)
    assert sorted(want) == sorted(got)
    for p, (kind, mode, mtime, payload) in want.items():
        g = got[p]
        assert g[0] == kind and g[3] == payload, p
        if kind != "l":
            assert g[2] == mtime, p  # mtimes of files and (empty) directories
        if kind == "f":  # the data filter's mode rule
            m = mode & 0o755
            m = (m if m & 0o100 else m & ~0o111) | 0o600
            assert g[1] == m, p


def test_dump_then_extract_is_exact(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    make_tree(src)
    out = tmp_path / "dump.tar.gz"
    rc, err = run("create", str(src), str(out), "--level", "6")
    assert rc == 0, err
    dest = tmp_path / "dest"
    dest.mkdir()
    rc, err = run("extract", str(out), str(dest))
    assert rc == 0, err
    assert corpus.snapshot(dest, with_root=True) == corpus.snapshot(src, with_root=True)


@pytest.mark.parametrize("style", ["arcname-dot", "relative-names", "gnu-format"])
def test_python_made_archive_extracts_exactly(style, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    make_tree(src)
    out = tmp_path / "py.tar.gz"
    fmt = tarfile.GNU_FORMAT if style == "gnu-format" else tarfile.PAX_FORMAT
    with tarfile.open(out, "w:gz", format=fmt) as t:
        if style == "relative-names":
            for n in sorted(os.listdir(src)):
                t.add(src / n, arcname=n)
        else:
            t.add(src, arcname=".")
    dest = tmp_path / "dest"
    dest.mkdir()
    rc, err = run("extract", str(out), str(dest))
    assert rc == 0, err
    with_root = style != "relative-names"
    assert corpus.snapshot(dest, with_root=with_root) == corpus.snapshot(src, with_root=with_root)


def test_stdin_stdout_and_usage(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "f").write_text("f\n")
    r = subprocess.run([BIN, "archive", "create", str(src), "-"], capture_output=True, timeout=60)
    assert r.returncode == 0 and r.stdout[:2] == b"\x1f\x8b"
    dest = tmp_path / "dest"
    dest.mkdir()
    r = subprocess.run([BIN, "archive", "extract", "-", str(dest)], input=r.stdout,
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (dest / "f").read_text() == "f\n"
    assert run("extract", "only-one-arg")[0] == 2
    assert run("create", str(src), str(tmp_path / "x.tgz"), "--level", "12")[0] == 2
    rc, err = run("extract", str(tmp_path / "missing.tgz"), str(dest))
    assert rc == 1 and "missing.tgz" in err
    rc, err = run("extract", "-", str(tmp_path / "no-such-dir"))
    assert rc == 1 and "not a directory" in err


# --------------------------------------------------------------------- memory

def _zero_archive(path, total, files=4):
    """gzip tar of `files` files of zeros, `total` bytes in all, streamed."""
    size = total // files
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as g:
        zeros = bytes(1 << 20)
        for i in range(files):
            ti = tarfile.TarInfo("big/zeros-%d.bin" % i)
            ti.size = size
            g.write(ti.tobuf(tarfile.PAX_FORMAT))
            left = size
            while left:
                k = min(left, len(zeros))
                g.write(zeros[:k])
                left -= k
            g.write(bytes(-size % 512))
        g.write(bytes(1024))


def _peak_rss_kib(args):
    """Peak RSS of one run, as the command reports it (VmHWM: the rusage of
    a child would include the forked Python image before exec)."""
    r = subprocess.run(args, capture_output=True, timeout=600)
    err = r.stderr.decode()
    assert r.returncode == 0, err
    m = re.search(r"peak RSS (\d+) KiB", err)
    assert m and int(m.group(1)) > 0, err
    return int(m.group(1))


def _rss_check(tmp_path, total):
    small, big = tmp_path / "small.tgz", tmp_path / "big.tgz"
    _zero_archive(small, 8 << 20)
    _zero_archive(big, total)
    rss = {}
    for name, path in (("small", small), ("big", big)):
        d = tmp_path / ("ws-" + name)
        d.mkdir()
        rss["x-" + name] = _peak_rss_kib([REL_BIN, "archive", "extract", str(path), str(d)])
        rss["c-" + name] = _peak_rss_kib([REL_BIN, "archive", "create", str(d), str(tmp_path / "out.tgz")])
        os.unlink(tmp_path / "out.tgz")
    assert rss["x-big"] < 64 * 1024 and rss["c-big"] < 64 * 1024, rss
    # does not grow with the archive: within 4 MiB of the 8 MiB run
    assert rss["x-big"] - rss["x-small"] < 4096 and rss["c-big"] - rss["c-small"] < 4096, rss


def test_memory_does_not_grow_with_archive_size(tmp_path):
    _rss_check(tmp_path, 256 << 20)


@pytest.mark.soak
def test_memory_2gib_archive(tmp_path):
    _rss_check(tmp_path, 2 << 30)
