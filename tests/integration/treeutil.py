"""Builds sample workspace trees and compares trees, for archive round trips."""
import io
import os
import stat
import tarfile

MTIME = 1_600_000_000  # a fixed past time, so kept mtimes are visible


def make_tree(root):
    """A tree with nested files, empty directories, UTF-8 names with spaces,
    a hidden directory, an executable and a relative symlink."""
    files = {
        "hello.txt": b"hello world\n",
        "config.json": b'{"a": 1}\n',
        "notes.md": b"# notes\n" * 100,
        "Barber Shop.csv": b"a,b\n1,2\n",
        "docs/report final.txt": b"report\n",
        "docs/deep/er/leaf.bin": bytes(range(256)) * 40,
        "中文 目录/文件.pdf": b"%PDF-1.4 fake\n",
        ".hidden/state.json": b"{}",
        "bin/run.sh": b"#!/bin/sh\necho hi\n",
    }
    for rel, data in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        os.chmod(p, 0o755 if rel.endswith(".sh") else 0o644)
    for d in ("empty", "docs/empty inner", "a/b/c"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    os.symlink("../hello.txt", os.path.join(root, "docs", "link-to-hello"))
    # mtimes last, deepest first, so directory mtimes stick
    for dirpath, dirnames, filenames in sorted(os.walk(root), key=lambda t: -t[0].count(os.sep)):
        for n in filenames:
            os.utime(os.path.join(dirpath, n), (MTIME, MTIME + 1), follow_symlinks=False)
        for n in dirnames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                os.utime(p, (MTIME, MTIME + 2))
    return files


def snapshot(root, dir_mtimes=True):
    """relpath -> (kind, mode, mtime, payload) for everything under root."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", None, None, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode),
                            int(st.st_mtime) if dir_mtimes else None, None)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", stat.S_IMODE(st.st_mode), int(st.st_mtime), f.read())
    return out


def tar_relative(root):
    """Toolathlon style: files only, relative names, no directory entries."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for dirpath, dirnames, filenames in os.walk(root):
            for n in sorted(filenames):
                p = os.path.join(dirpath, n)
                tf.add(p, arcname=os.path.relpath(p, root), recursive=False)
            for n in dirnames:
                p = os.path.join(dirpath, n)
                if os.path.islink(p) or not os.listdir(p):
                    tf.add(p, arcname=os.path.relpath(p, root), recursive=False)
    return buf.getvalue()


def tar_dot(root):
    """MCP-Mark style: arcname='.', so '.', './a', './a/b', dirs included."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(root, arcname=".")
    return buf.getvalue()


def check_data_filter(member, dest):
    """The checks of Python's tarfile 'data' filter (PEP 706), for Pythons
    whose tarfile predates it (Debian 12's 3.11.2): raises on what the filter
    would refuse."""
    dest = os.path.realpath(dest)
    name = member.name
    if name.startswith("/") or os.path.isabs(name):
        raise ValueError("absolute member %r" % name)
    target = os.path.realpath(os.path.join(dest, name))
    if os.path.commonpath([target, dest]) != dest:
        raise ValueError("member %r is outside the destination" % name)
    if member.ischr() or member.isblk() or member.isfifo() or member.isdev():
        raise ValueError("special file %r" % name)
    if member.issym() or member.islnk():
        link = member.linkname
        if os.path.isabs(link):
            raise ValueError("absolute link %r -> %r" % (name, link))
        base = os.path.dirname(target) if member.issym() else dest
        resolved = os.path.realpath(os.path.join(base, link))
        if os.path.commonpath([resolved, dest]) != dest:
            raise ValueError("link %r -> %r leaves the destination" % (name, link))
    if member.mode & 0o6000:
        raise ValueError("setuid/setgid member %r" % name)


def extract_data_filter(data, dest):
    """extractall(filter='data'), as the benchmark clients call it."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
        names = tf.getnames()
        if hasattr(tarfile, "data_filter"):
            tf.extractall(dest, filter="data")
        else:
            members = tf.getmembers()
            for m in members:
                check_data_filter(m, dest)
            tf.extractall(dest, members=members)
    return names
