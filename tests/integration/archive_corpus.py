"""archive_corpus - gzip tar archives, good and hostile, for mcpbox's extractor.

Built with Python's tarfile/gzip/bz2/lzma only, in memory, small (bombs
compress to kilobytes). No test functions here: test_archive_cli.py runs
every case through `mcpbox archive extract`, and the API tests PUT them
through the upload URL.

    cases()          -> [Case(name, data, expected, why)]  (good + hostile)
    LIMITS           the limits every case assumes (max_bytes, max_entries)
    WORKSPACE_SETUP  {case name: archive} to extract first, for the cases
                     about what the workspace already holds
    MESSAGE_HINTS    {case name: text} the error message must contain
                     (the member's name, or the archive-level problem)
    expected_tree(data), snapshot(dir)   compare an extraction with its archive
    data_filter_extract(data, dest)      tarfile extraction with the 'data'
                     filter (PEP 706), also on Pythons older than 3.11.4

`expected` is one of:
    "ok"        extracted; the workspace then matches expected_tree(data)
    "refused"   the archive or a member breaks a rule      (HTTP 400)
    "too_big"   over LIMITS                                 (HTTP 413)
    "conflict"  clashes with what WORKSPACE_SETUP put there (HTTP 409)
Every non-"ok" case must leave the workspace, and everything beside it,
exactly as it was.
"""

import bz2
import collections
import copy
import functools
import gzip
import io
import lzma
import os
import stat
import tarfile

LIMITS = {"max_bytes": 8 << 20, "max_entries": 1000}

Case = collections.namedtuple("Case", "name data expected why")

MTIME = 1_600_000_000  # 2020-09-13, so that kept mtimes differ from "now"


# ----------------------------------------------------------------- builders

def F(name, data=b"", mode=0o644, mtime=MTIME, **kw):
    """A regular file member."""
    ti = tarfile.TarInfo(name)
    ti.size, ti.mode, ti.mtime = len(data), mode, mtime
    for k, v in kw.items():
        setattr(ti, k, v)
    return ti, data


def D(name, mode=0o755, mtime=MTIME, **kw):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, mode, mtime
    for k, v in kw.items():
        setattr(ti, k, v)
    return ti, None


def L(name, target, **kw):
    """A symlink member."""
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname, ti.mode, ti.mtime = tarfile.SYMTYPE, target, 0o777, MTIME
    for k, v in kw.items():
        setattr(ti, k, v)
    return ti, None


def H(name, target):
    """A hard link member."""
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname, ti.mode, ti.mtime = tarfile.LNKTYPE, target, 0o644, MTIME
    return ti, None


def S(name, type_, **kw):
    """A special member: device, fifo, or any raw type flag."""
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.mtime = type_, 0o644, MTIME
    for k, v in kw.items():
        setattr(ti, k, v)
    return ti, None


def tar(members, fmt=tarfile.PAX_FORMAT):
    """Uncompressed tar bytes of [(TarInfo, data)]."""
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=fmt, encoding="utf-8",
                      errors="surrogateescape") as t:
        for ti, data in members:
            t.addfile(ti, io.BytesIO(data) if data is not None else None)
    return b.getvalue()


def gz(raw, level=6):
    return gzip.compress(raw, compresslevel=level, mtime=0)


def tgz(members, fmt=tarfile.PAX_FORMAT):
    return gz(tar(members, fmt))


GOOD_FIRST = F("aaa-good-first.txt", b"written before the bad member\n")


def hostile(members, fmt=tarfile.PAX_FORMAT):
    """A benign member first, so that a partial extraction would show."""
    return tgz([GOOD_FIRST] + members, fmt)


def _stream_of_zero_files(n, size):
    """tar stream of n files of `size` zero bytes, gzipped, built without
    holding the expanded stream: tar blocks are fed to the compressor."""
    c = io.BytesIO()
    with gzip.GzipFile(fileobj=c, mode="wb", compresslevel=6, mtime=0) as g:
        zeros = bytes(1 << 20)
        for i in range(n):
            ti = tarfile.TarInfo("zeros-%04d.bin" % i)
            ti.size, ti.mtime = size, MTIME
            g.write(ti.tobuf(tarfile.USTAR_FORMAT))
            left = size
            while left:
                k = min(left, len(zeros))
                g.write(zeros[:k])
                left -= k
            if size % 512:
                g.write(bytes(512 - size % 512))
        g.write(bytes(1024))
    return c.getvalue()


def _header_only(name, size):
    """A gzip tar whose one header claims `size` bytes it never delivers."""
    ti = tarfile.TarInfo(name)
    ti.size, ti.mtime = size, MTIME
    return gz(ti.tobuf(tarfile.GNU_FORMAT) + b"x" * 512)


def _gnu_sparse(name, realsize, regions, data):
    """A GNU sparse member ('S') with up to 4 map entries in its header
    (tarfile can read these but not write them)."""
    ti = tarfile.TarInfo(name)
    ti.type, ti.size, ti.mtime = tarfile.GNUTYPE_SPARSE, len(data), MTIME
    buf = bytearray(ti.tobuf(tarfile.GNU_FORMAT))

    def octal(n):
        return ("%011o" % n).encode() + b"\0"

    for i, (off, nb) in enumerate(regions):
        buf[386 + 24 * i: 398 + 24 * i] = octal(off)
        buf[398 + 24 * i: 410 + 24 * i] = octal(nb)
    buf[483:495] = octal(realsize)
    buf[148:156] = b" " * 8
    buf[148:156] = ("%06o" % sum(buf[:512])).encode() + b"\0 "
    return gz(bytes(buf) + data + bytes(-len(data) % 512) + bytes(1024))


def _pax_padding_bomb(n, pad):
    """n tiny files, each behind a pax header with `pad` bytes of an unknown
    keyword: little content, but a stream that expands past the limit."""
    members = []
    for i in range(n):
        ti, data = F("p%03d.txt" % i, b"x")
        ti.pax_headers = {"MCPBOX.padding": "z" * pad}
        members.append((ti, data))
    return tgz(members)


# -------------------------------------------------------------------- cases

def _good():
    long_dir = "/".join(["d%02d-%s" % (i, "x" * 40) for i in range(8)])
    xattr_file = F("mac/file.txt", b"from a mac\n")
    xattr_file[0].pax_headers = {
        "LIBARCHIVE.xattr.com.apple.quarantine": "MDA4MTs2NTRmMDAwMDtTYWZhcmk7",
        "SCHILY.xattr.com.apple.metadata:kMDItemWhereFroms": "YnBsaXN0MDA=",
        "SCHILY.dev": "16777220", "SCHILY.ino": "1234", "SCHILY.nlink": "1",
        "MCPBOX.unknown.vendor.keyword": "ignored",
    }
    nul_pax = F("nul-pax", b"nul\n")
    nul_pax[0].pax_headers = {"path": "nul-pax\x00tail"}
    mtime_frac = F("frac-mtime.txt", b"f\n")
    mtime_frac[0].mtime = MTIME + 0.5
    big = bytes((i * 7919) % 251 for i in range(1 << 20))
    return [
        ("good-relative", tgz([D("src"), F("src/main.c", b"int main(void){return 0;}\n"),
                               F("README", b"hello\n", mode=0o600)]),
         "plain relative names with directory entries"),
        ("good-dot-slash", tgz([D(".", mode=0o755, mtime=MTIME + 10), D("./docs"),
                                F("./docs/a.txt", b"a\n"), F("./b.txt", b"b\n", mode=0o755)]),
         "'.' member then './'-prefixed names, as `tar czf x.tgz -C dir .` makes"),
        ("good-empty-dirs", tgz([D("empty", mode=0o700, mtime=MTIME + 1),
                                 D("tree/leaf1", mtime=MTIME + 2), D("tree/leaf2", mode=0o750),
                                 D("tree", mode=0o755, mtime=MTIME + 3)]),
         "empty directories keep their modes and mtimes, parent entry after its children"),
        ("good-utf8-spaces", tgz([D("dossier été"), F("dossier été/naïve file.txt", "ü\n".encode()),
                                  F("日本語 ファイル.md", b"# hi\n"), F("emoji 🎉.txt", b"party\n")]),
         "UTF-8 names with spaces"),
        ("good-utf8-gnu", tgz([F("gnu ünïcödé.txt", b"g\n")], fmt=tarfile.GNU_FORMAT),
         "UTF-8 name in a GNU header (raw bytes, no pax)"),
        ("good-pax-xattrs", tgz([D("mac"), xattr_file, F("mac/._file.txt", b"\x00\x05\x16\x07")]),
         "unknown pax keywords (macOS xattrs, SCHILY.*) are ignored"),
        ("good-implicit-parents", tgz([F("x/y/z/deep.txt", b"deep\n"), F("x/top.txt", b"t\n")]),
         "nested files without directory entries: parents are created"),
        ("good-long-gnu", tgz([F(long_dir + "/f.txt", b"long\n")], fmt=tarfile.GNU_FORMAT),
         "GNU longname (././@LongLink) for a 350-byte path"),
        ("good-long-ustar", tgz([F("p" * 150 + "/" + "n" * 90, b"u\n")], fmt=tarfile.USTAR_FORMAT),
         "ustar prefix+name split for a 241-byte path"),
        ("good-long-pax", tgz([F(long_dir + "/" + "q" * 200, b"pax\n")]),
         "pax path= record for a 550-byte path"),
        ("good-symlinks-inside", tgz([D("docs/v1"), F("docs/v1/index.md", b"v1\n"),
                                      L("docs/latest", "v1"), L("docs/v1/up", "../latest/index.md"),
                                      L("dangling", "not-there-yet")]),
         "relative symlinks that stay inside, including a dangling one"),
        ("good-symlink-loop", tgz([L("loop-a", "loop-b"), L("loop-b", "loop-a")]),
         "a symlink loop inside the workspace is harmless"),
        ("good-hardlink", tgz([F("orig.txt", b"same inode\n"), H("copy.txt", "orig.txt"),
                               D("sub"), H("sub/copy2.txt", "./orig.txt")]),
         "hard links to a file earlier in the archive"),
        ("good-duplicates", tgz([F("dup.txt", b"first\n"), F("dup.txt", b"second wins\n"),
                                 L("s", "dup.txt"), F("s", b"file replaces symlink\n")]),
         "a later member replaces an earlier file or symlink of the same name"),
        ("good-empty-tar", gz(tar([])), "an empty tar: nothing to do"),
        ("good-modes", tgz([F("ro.txt", b"ro\n", mode=0o444), F("exec.sh", b"#!/bin/sh\n", mode=0o750),
                            D("rodir", mode=0o555), F("rodir/inside.txt", b"i\n"),
                            D("sticky", mode=0o1777)]),
         "read-only files, a read-only directory with contents, a sticky directory"),
        ("good-odd-names", tgz([F("...", b"dots\n"), F("a\\b.txt", b"backslash\n"),
                                F("-dash", b"-\n"), F(".hidden", b"h\n"), F("a/./b.txt", b"ab\n"),
                                F("new\nline", b"nl\n"), F("x//y.txt", b"xy\n")]),
         "odd but legal names: '...', backslash, leading dash, newline, './' and '//' inside"),
        ("good-nul-in-ustar-name", tgz([F("nul-ustar\x00tail", b"n\n")], fmt=tarfile.USTAR_FORMAT),
         "a header name field ends at its first NUL, as tar defines: becomes 'nul-ustar'"),
        ("good-nul-in-pax-path", tgz([nul_pax]),
         "a pax path with a NUL is read up to the NUL (libarchive): becomes 'nul-pax'"),
        ("good-contiguous-type", tgz([S("contig.bin", tarfile.CONTTYPE, size=0)]),
         "type '7' (contiguous file) is a regular file"),
        ("good-gnu-sparse", _gnu_sparse("sparse.bin", 1 << 20, [(0, 5), (512 << 10, 5)], b"helloworld"),
         "GNU sparse file: data at two offsets, holes between"),
        ("good-volume-header", tgz([S("volume label", b"V"), F("after-label.txt", b"v\n")],
                                   fmt=tarfile.GNU_FORMAT),
         "a GNU volume label is metadata and creates nothing"),
        ("good-frac-mtime", tgz([mtime_frac]), "sub-second pax mtime"),
        ("good-1mib-file", tgz([F("blob.bin", big)]), "1 MiB of data streams through"),
        ("good-multistream-gzip", gz(tar([F("m1.txt", b"1\n")])[:1024]) + gz(tar([F("m1.txt", b"1\n")])[1024:]),
         "a tar split over two concatenated gzip members (like `cat a.gz b.gz`)"),
        ("good-trailing-garbage", tgz([F("t.txt", b"t\n")]) + b"junk after the gzip stream",
         "bytes after the end of the tar stream are ignored"),
        ("good-entries-at-limit", tgz([F("n%04d" % i) for i in range(LIMITS["max_entries"])]),
         "exactly max_entries members"),
    ]


def _hostile():
    long_name = "/".join(["c" * 200] * 25)  # 5024 bytes, components fine
    gnu_long_dotdot = "a" * 120 + "/../../../../escape.txt"
    pax_abs = F("innocent.txt", b"pwn\n")
    pax_abs[0].pax_headers = {"path": "/etc/mcpbox-pwned"}
    pax_link = L("plink", "benign")
    pax_link[0].pax_headers = {"linkpath": "/etc/passwd"}
    raw_ok = tar([F("x.txt", b"x\n")])
    full = tgz([GOOD_FIRST, F("big.txt", b"y" * 200_000)])
    return [
        ("dotdot", hostile([F("../x", b"escape\n")]), "refused", "'..' as the first component"),
        ("dotdot-inner", hostile([F("a/../../x", b"escape\n")]), "refused", "'..' climbing out from a subdirectory"),
        ("dotdot-inside", hostile([F("a/../b", b"b\n")]), "refused", "'..' is refused even when it stays inside"),
        ("dotdot-alone", hostile([D("..")]), "refused", "a member named '..'"),
        ("dotdot-trailing", hostile([D("a/b/..")]), "refused", "a trailing '..'"),
        ("absolute", hostile([F("/etc/mcpbox-pwned", b"pwn\n")]), "refused", "absolute path"),
        ("absolute-dir", hostile([D("/tmp/mcpbox-pwned-dir")]), "refused", "absolute directory"),
        ("pax-absolute-path", hostile([pax_abs]), "refused", "pax path= record with an absolute path over a benign ustar name"),
        ("gnu-longname-dotdot", hostile([F(gnu_long_dotdot, b"e\n")], fmt=tarfile.GNU_FORMAT),
         "refused", "GNU longname hiding '..' past the 100-byte field"),
        ("symlink-absolute-then-write", hostile([L("l", "/etc"), F("l/passwd", b"root::0:0::/:/bin/sh\n")]),
         "refused", "symlink to /etc then a file through it"),
        ("symlink-dotdot-then-write", hostile([L("l", ".."), F("l/x", b"x\n")]), "refused",
         "symlink to '..' then a file through it"),
        ("symlink-deep-escape", hostile([D("a/b"), L("a/b/up", "../../../outside")]), "refused",
         "relative symlink climbing out from a subdirectory"),
        ("symlink-inside-then-write", hostile([D("real"), L("l", "real"), F("l/x", b"x\n")]), "refused",
         "writing through a symlink the archive planted, even one pointing inside"),
        ("symlink-then-dir", hostile([D("real"), L("l", "real"), D("l")]), "refused",
         "a directory entry over a symlink planted earlier in the archive"),
        ("symlink-chain", hostile([L("a", "."), L("b", "a/..")]), "refused",
         "each link looks inside as text, but b -> a/.. resolves to the workspace's parent"),
        ("symlink-chain-deep", hostile([D("x/y"), L("x/up", ".."), L("x/up2", "up/..")]), "refused",
         "x/up2 -> up/.. looks like x as text, but resolves above the root"),
        ("symlink-pax-linkpath", hostile([pax_link]), "refused", "pax linkpath= record with an absolute target"),
        ("symlink-target-too-long", hostile([L("toolong", "a/" * 2100)]), "refused", "symlink target over 4095 bytes"),
        ("symlink-target-not-utf8", hostile([L("badtarget", "bad\udcfftarget")], fmt=tarfile.GNU_FORMAT),
         "refused", "symlink target that is not UTF-8"),
        ("hardlink-etc-shadow", hostile([H("shadow", "/etc/shadow")]), "refused", "hard link to an absolute path"),
        ("hardlink-dotdot", hostile([H("hl", "../x")]), "refused", "hard link climbing out"),
        ("hardlink-not-in-archive", hostile([H("hl", "keep.txt")]), "refused",
         "hard link to a file the archive did not create (e.g. already in the workspace)"),
        ("hardlink-self", hostile([H("selfish", "selfish")]), "refused", "hard link to itself"),
        ("chardev", hostile([S("null", tarfile.CHRTYPE, devmajor=1, devminor=3)]), "refused", "character device"),
        ("blockdev", hostile([S("sda", tarfile.BLKTYPE, devmajor=8, devminor=0)]), "refused", "block device"),
        ("fifo", hostile([S("pipe", tarfile.FIFOTYPE)]), "refused", "fifo"),
        ("setuid-file", hostile([F("suid", b"#!/bin/sh\n", mode=0o4755)]), "refused", "setuid bit"),
        ("setgid-dir", hostile([D("sgid", mode=0o2775)]), "refused", "setgid directory"),
        ("name-too-long", hostile([F(long_name, b"l\n")]), "refused", "path over 4095 bytes"),
        ("component-too-long", hostile([F("d/" + "n" * 256, b"l\n")]), "refused", "a 256-byte component"),
        ("name-not-utf8", hostile([F("caf\udce9.txt", b"latin-1 name\n")], fmt=tarfile.GNU_FORMAT),
         "refused", "name bytes that are not UTF-8 (here latin-1)"),
        ("dot-is-file", hostile([F(".", b"not a dir\n")]), "refused", "'.' must be a directory"),
        ("dot-is-symlink", hostile([L(".", "elsewhere")]), "refused", "'.' must be a directory"),
        ("file-replaces-dir", hostile([D("d"), F("d/inner.txt", b"i\n"), F("d", b"file now\n")]), "refused",
         "a file replacing a directory the archive made"),
        ("sparse-map-past-size", _gnu_sparse("bad-sparse.bin", 100, [(0, 10), (1 << 30, 10)], b"x" * 20),
         "refused", "a GNU sparse map writing past the file's declared size"),
        ("gzip-bomb", gz(tar([F("zeros.bin", bytes(64 << 20))]), 9), "too_big",
         "64 MiB of zeros in one file, ~64 KiB compressed"),
        ("gzip-bomb-many", _stream_of_zero_files(12, 1 << 20), "too_big",
         "12 files of 1 MiB: each fine, together over the limit"),
        ("pax-padding-bomb", _pax_padding_bomb(12, 900_000), "too_big",
         "tiny files behind huge unknown pax records: the expanded stream is what counts"),
        ("size-header-lies", _header_only("huge.bin", 50 << 30), "too_big",
         "a header claiming 50 GiB, refused before any data is read"),
        ("entry-count-bomb", tgz([F("e%04d" % i) for i in range(LIMITS["max_entries"] + 1)]), "too_big",
         "one entry over max_entries"),
        ("truncated-gzip", full[: len(full) // 2], "refused", "gzip stream cut in the middle of a file"),
        ("truncated-gzip-tiny", full[:30], "refused", "only the first 30 bytes"),
        ("truncated-tar", gz(raw_ok[:700]), "refused", "complete gzip of a tar cut inside a member"),
        ("not-gzip", b"this is not an archive at all\n" * 10, "refused", "plain text"),
        ("plain-tar", raw_ok, "refused", "uncompressed tar: only .tar.gz is accepted"),
        ("bzip2-tar", bz2.compress(raw_ok), "refused", "bzip2-compressed tar"),
        ("xz-tar", lzma.compress(raw_ok), "refused", "xz-compressed tar"),
        ("gzip-of-garbage", gz(os.urandom(4096)), "refused", "gzip of random bytes, not tar"),
        ("gzip-of-nothing", gz(b""), "refused", "gzip of zero bytes"),
        ("empty-file", b"", "refused", "a 0-byte upload"),
        ("dir-over-workspace-symlink", tgz([D("s"), F("s/x.txt", b"x\n")]), "conflict",
         "directory entry where the workspace has a symlink (WORKSPACE_SETUP)"),
        ("write-through-workspace-symlink", tgz([F("s/y.txt", b"y\n")]), "conflict",
         "a file under a symlink already in the workspace (WORKSPACE_SETUP)"),
        ("file-over-workspace-dir", tgz([F("new.txt", b"n\n"), F("d", b"file\n")]), "conflict",
         "a file where the workspace has a directory (WORKSPACE_SETUP)"),
        ("dir-over-workspace-file", tgz([D("plain.txt/sub")]), "conflict",
         "a directory where the workspace has a file (WORKSPACE_SETUP)"),
    ]


_SETUP = tgz([D("sub"), F("sub/inside.txt", b"in\n"), L("s", "sub"), D("d"), F("d/keep.txt", b"k\n"),
              F("plain.txt", b"p\n")])

WORKSPACE_SETUP = {
    "dir-over-workspace-symlink": _SETUP,
    "write-through-workspace-symlink": _SETUP,
    "file-over-workspace-dir": _SETUP,
    "dir-over-workspace-file": _SETUP,
}

MESSAGE_HINTS = {
    "dotdot": "'../x'", "dotdot-inner": "'a/../../x'", "dotdot-inside": "'a/../b'",
    "dotdot-alone": "'../'", "dotdot-trailing": "'a/b/../'",
    "absolute": "'/etc/mcpbox-pwned'", "absolute-dir": "'/tmp/mcpbox-pwned-dir/'",
    "pax-absolute-path": "'/etc/mcpbox-pwned'", "gnu-longname-dotdot": "'aaaaaaaaaa",
    "symlink-absolute-then-write": "'l'", "symlink-dotdot-then-write": "'l'",
    "symlink-deep-escape": "'a/b/up'", "symlink-inside-then-write": "'l/x'",
    "symlink-then-dir": "'l/'", "symlink-chain": "'b'", "symlink-chain-deep": "'x/up2'",
    "symlink-pax-linkpath": "'plink'", "symlink-target-too-long": "'toolong'",
    "symlink-target-not-utf8": "'badtarget'", "hardlink-etc-shadow": "'shadow'",
    "hardlink-dotdot": "'hl'", "hardlink-not-in-archive": "'hl'", "hardlink-self": "'selfish'",
    "chardev": "'null'", "blockdev": "'sda'", "fifo": "'pipe'", "setuid-file": "'suid'",
    "setgid-dir": "'sgid/'", "name-too-long": "'cccccccccc", "component-too-long": "'d/nnnnnnnn",
    "name-not-utf8": "'caf\\xe9.txt'", "dot-is-file": "'.'", "dot-is-symlink": "'.'",
    "file-replaces-dir": "'d'", "sparse-map-past-size": "'bad-sparse.bin'",
    "gzip-bomb": "limit", "gzip-bomb-many": "limit", "pax-padding-bomb": "limit",
    "size-header-lies": "'huge.bin'", "entry-count-bomb": "entries",
    "truncated-gzip": "truncated", "truncated-gzip-tiny": "truncated", "truncated-tar": "truncated",
    "not-gzip": "not gzip", "plain-tar": "uncompressed tar", "bzip2-tar": "bzip2",
    "xz-tar": "xz", "gzip-of-garbage": "not a tar", "gzip-of-nothing": "not a tar",
    "empty-file": "empty",
    "dir-over-workspace-symlink": "'s'", "write-through-workspace-symlink": "'s'",
    "file-over-workspace-dir": "'d'", "dir-over-workspace-file": "'plain.txt'",
}


@functools.lru_cache(maxsize=1)
def cases():
    """Every case, good first; built once per process."""
    out = [Case(n, d, "ok", w) for n, d, w in _good()]
    out += [Case(*c) for c in _hostile()]
    names = [c.name for c in out]
    assert len(names) == len(set(names)), "duplicate case names"
    return out


# ---------------------------------------------------------- tree comparison

def _norm(name):
    """Member name as the extractor normalises it ('' for the root)."""
    name = name.split("\x00")[0]
    parts = [p for p in name.split("/") if p not in ("", ".")]
    return "/".join(parts)


def expected_tree(data):
    """What extracting the good archive `data` into an empty workspace must
    give, in the shape of snapshot(): {path: (kind, mode, mtime, payload)}
    where kind is 'f', 'd' or 'l', payload the bytes or the link target;
    mtime is None for symlinks and implicit directories. The root, when the
    archive has a '.' member, is under key '.'."""
    tree = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
        for m in t:
            if m.type == b"V":  # GNU volume label: metadata, nothing to extract
                continue
            p = _norm(m.name)
            if not p:
                tree["."] = ("d", (m.mode & 0o7777) | 0o700, int(m.mtime), None)
                continue
            parts = p.split("/")
            for i in range(1, len(parts)):
                tree.setdefault("/".join(parts[:i]), ("d", 0o755, None, None))
            if m.isdir():
                tree[p] = ("d", m.mode & 0o7777, int(m.mtime), None)
            elif m.issym():
                tree[p] = ("l", None, None, m.linkname)
            elif m.islnk():
                src = tree[_norm(m.linkname)]
                tree[p] = src
            else:
                tree[p] = ("f", m.mode & 0o7777, int(m.mtime), t.extractfile(m).read())
    return tree


def snapshot(root, with_root=False):
    """{relative path: (kind, mode, mtime, payload)} of everything under root,
    never following symlinks; the root itself under '.' if with_root."""
    out = {}

    def one(path):
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return ("l", None, None, os.readlink(path))
        if stat.S_ISDIR(st.st_mode):
            return ("d", stat.S_IMODE(st.st_mode), int(st.st_mtime), None)
        if stat.S_ISREG(st.st_mode):
            with open(path, "rb") as f:
                return ("f", stat.S_IMODE(st.st_mode), int(st.st_mtime), f.read())
        return ("other", st.st_mode, int(st.st_mtime), None)

    if with_root:
        out["."] = one(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            full = os.path.join(dirpath, n)
            out[os.path.relpath(full, root)] = one(full)
    return out


def matches(expected, actual):
    """Compares expected_tree() with snapshot(): entries whose mtime is None
    in `expected` (symlinks, implicit dirs) are compared without it.
    Returns a list of differences (empty when they match)."""
    diffs = []
    for p in sorted(set(expected) | set(actual)):
        e, a = expected.get(p), actual.get(p)
        if e is None or a is None:
            diffs.append((p, e and e[:3], a and a[:3]))
            continue
        if e[2] is None:
            a = (a[0], a[1] if e[1] is not None else None, None, a[3])
        if e != a:
            diffs.append((p, e[:3], a[:3]))
    return diffs


# ------------------------------------------------- tarfile's 'data' filter

def data_filter_extract(data, dest):
    """Extracts gzip tar bytes into `dest` as tarfile.extractall(filter='data')
    does. Pythons before 3.11.4 (Debian 12 ships 3.11.2) lack filters; there
    the PEP 706 'data' rules are applied here: refuse absolute names, names
    or links leaving dest, and special files; files lose high and group/other
    write bits and keep u+rw; directory modes and ownership are not applied.
    Raises tarfile.FilterError-like exceptions (ValueError) on refusal."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
        if hasattr(tarfile, "data_filter"):
            t.extractall(dest, filter="data")
            return
        dest_real = os.path.realpath(dest)

        def inside(p):
            return os.path.commonpath([p, dest_real]) == dest_real

        def checked(members):
            # Lazily, so that links extracted earlier count, as in the real filter.
            for m in members:
                m = copy.copy(m)
                name = m.name.lstrip("/")
                if os.path.isabs(name) or not inside(os.path.realpath(os.path.join(dest_real, name))):
                    raise ValueError("outside destination: %r" % m.name)
                if m.isreg() or m.islnk():
                    mode = m.mode & 0o755
                    if not mode & 0o100:
                        mode &= ~0o111
                    m.mode = mode | 0o600
                elif m.isdir():
                    m.mode = 0o777 & ~_umask()
                elif not m.issym():
                    raise ValueError("special file: %r" % m.name)
                if m.islnk() or m.issym():
                    if os.path.isabs(m.linkname):
                        raise ValueError("absolute link: %r" % m.name)
                    base = os.path.join(dest_real, os.path.dirname(name)) if m.issym() else dest_real
                    if not inside(os.path.realpath(os.path.join(base, m.linkname))):
                        raise ValueError("link outside destination: %r" % m.name)
                m.uid = m.gid = os.getuid()
                m.uname = m.gname = ""
                yield m

        t.extractall(dest, members=checked(t.getmembers()), numeric_owner=True)


def _umask():
    u = os.umask(0)
    os.umask(u)
    return u
