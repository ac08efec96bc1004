"""P4 archives: PUT+initialize and dump+GET of a mixed workspace (200 MB: many
small files and a few large; 40 MB with --quick) against GNU tar with gzip on
the same data (`tar xzf` of the same .tar.gz, `tar czf` of the same tree),
both on tmpfs (the medium of mcpbox workspaces); and the daemon's peak RSS
(VmHWM) during a 2 GB upload (256 MB with --quick).

Checks: every dump is extracted with Python's tarfile (filter='data' where Python has it) and
compared with the source tree file by file (path, size, SHA-256); tar's
extraction is compared the same way; the uploaded 2 GB blob must have
arrived whole (its size in the data directory)."""
import gzip
import hashlib
import http.client
import os
import random
import shutil
import subprocess
import tarfile
import threading
import time
import urllib.parse

import benchlib as B

VERSION = "ws-v1"


def gen_tree(root, scale):
    """The mixed workspace, the same bytes for the same scale: 12,000*scale
    small text files (200 B..16 KB) in nested directories, a few empty
    directories, and four large files (two of random bytes, two of text) of
    25 MB*scale each."""
    stamp = os.path.join(root, ".stamp")
    want = "%s scale=%s" % (VERSION, scale)
    if os.path.exists(stamp) and open(stamp).read() == want:
        return
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    rng = random.Random(20261121)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10)))
             for _ in range(3000)]
    words = rng.choices(vocab, k=700_000)
    text = (" ".join(words)).encode()
    n_small = int(12_000 * scale)
    for i in range(n_small):
        d = os.path.join(root, "src", "d%02d" % (i % 40), "e%02d" % (i % 7))
        os.makedirs(d, exist_ok=True)
        size = rng.randint(200, 16_384)
        off = rng.randrange(0, len(text) - size)
        with open(os.path.join(d, "file-%05d.txt" % i), "wb") as f:
            f.write(b"# %d\n" % i + text[off:off + size])
    for i in range(5):
        os.makedirs(os.path.join(root, "empty", "e%d" % i), exist_ok=True)
    big = int(25_000_000 * scale)
    os.makedirs(os.path.join(root, "assets"), exist_ok=True)
    for i in range(2):
        with open(os.path.join(root, "assets", "blob-%d.bin" % i), "wb") as f:
            left = big
            while left:
                n = min(left, 1 << 22)
                f.write(rng.randbytes(n))
                left -= n
        with open(os.path.join(root, "assets", "corpus-%d.txt" % i), "wb") as f:
            left = big
            while left:
                off = rng.randrange(0, len(text) - (1 << 20))
                chunk = text[off:off + min(left, 1 << 20)]
                f.write(chunk)
                left -= len(chunk)
    with open(stamp, "w") as f:
        f.write(want)


def manifest(root):
    """{relative path: (kind, size, sha256)} of a tree, without the stamp."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for d in dirnames:
            out[os.path.normpath(os.path.join(rel, d))] = ("dir", 0, "")
        for fn in filenames:
            if fn == ".stamp" and rel == ".":
                continue
            p = os.path.join(dirpath, fn)
            h = hashlib.sha256()
            with open(p, "rb") as f:
                for b in iter(lambda: f.read(1 << 20), b""):
                    h.update(b)
            out[os.path.normpath(os.path.join(rel, fn))] = ("file", os.path.getsize(p),
                                                            h.hexdigest())
    return out


def tree_bytes(m):
    return sum(v[1] for v in m.values())


def compare(want, got, what):
    if want != got:
        missing = sorted(set(want) - set(got))[:3]
        extra = sorted(set(got) - set(want))[:3]
        diff = sorted(k for k in set(want) & set(got) if want[k] != got[k])[:3]
        raise B.BenchError("%s differs from the source: missing %s, extra %s, changed %s" % (
            what, missing, extra, diff))


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def put_file(url, path):
    h = B.Http(url, timeout=600)
    with open(path, "rb") as f:
        st, _, body = h.request("PUT", B.path_of(url), f, {
            "Content-Type": "application/gzip",
            "Content-Length": str(os.path.getsize(path))})
    h.close()
    if st != 200:
        raise B.BenchError("PUT: HTTP %d %s" % (st, body[:200]))


def get_file(url, path):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    c.request("GET", B.path_of(url))
    r = c.getresponse()
    if r.status != 200:
        raise B.BenchError("GET dump: HTTP %d %s" % (r.status, r.read()[:200]))
    with open(path, "wb") as f:
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            f.write(b)
    c.close()


def shm_dir(ctx, name):
    """A scratch directory on tmpfs (the medium of mcpbox workspaces)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else ctx.workdir
    d = os.path.join(base, "mcpbox-bench-%d-%s" % (os.getpid(), name))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def one_round(ctx, api, src_tgz, tree, want, check):
    """One measured round on a fresh sandbox: times of PUT+initialize,
    tar xzf, dump+GET, tar czf (seconds)."""
    out = {}
    sb = api.acquire(["filesystem"])
    sid = sb["local_sandbox_id"]
    try:
        def put_init():
            up = api.call("POST", "/local-sandbox/%s/upload-url" % sid)["upload_url"]
            put_file(up, src_tgz)
            api.call("POST", "/local-sandbox/%s/initialize" % sid)
        out["put_init"] = timed(put_init)
        dump_path = os.path.join(ctx.workdir, "p4-dump.tar.gz")

        def dump_get():
            dl = api.call("GET", "/local-sandbox/%s/dump" % sid)["download_url"]
            get_file(dl, dump_path)
        out["dump_get"] = timed(dump_get)
    finally:
        api.release(sid)
    x = shm_dir(ctx, "xzf")
    try:
        out["xzf"] = timed(lambda: subprocess.run(["tar", "xzf", src_tgz, "-C", x], check=True))
        if check:
            compare(want, manifest(x), "tar xzf's extraction")
        czf_out = os.path.join(ctx.workdir, "p4-czf.tar.gz")
        out["czf"] = timed(lambda: subprocess.run(["tar", "czf", czf_out, "-C", x, "."],
                                                  check=True))
    finally:
        shutil.rmtree(x, ignore_errors=True)
    if check:
        y = shm_dir(ctx, "dump")
        try:
            with tarfile.open(dump_path) as t:
                if hasattr(tarfile, "data_filter"):
                    t.extractall(y, filter="data")
                else:  # Python without extraction filters (3.11.2)
                    t.extractall(y)
            compare(want, manifest(y), "the dump")
        finally:
            shutil.rmtree(y, ignore_errors=True)
    out["dump_bytes"] = os.path.getsize(dump_path)
    return out


def make_big(path, size):
    """A valid .tar.gz of one file of random bytes, size bytes in all
    (gzip level 0: writing it is as fast as the disk)."""
    if os.path.exists(path) and os.path.getsize(path) >= size:
        return os.path.getsize(path)
    rng = random.Random(7)
    payload = size - 64 * 1024
    tmp = path + ".tmp"
    with gzip.open(tmp, "wb", compresslevel=0) as gz:
        with tarfile.open(fileobj=gz, mode="w|") as t:
            info = tarfile.TarInfo("big.bin")
            info.size = payload

            class R:
                left = payload

                def read(self, n=-1):
                    n = self.left if n < 0 else min(n, self.left)
                    self.left -= n
                    return rng.randbytes(n)
            t.addfile(info, R())
    os.replace(tmp, path)
    return os.path.getsize(path)


def peak_rss_upload(ctx, size):
    """A fresh daemon takes one PUT of `size` bytes; its VmHWM before and
    after, and the highest VmRSS sampled every 20 ms during the upload."""
    big = os.path.join(B.ROOT, "build", "bench", "data", "upload-%d.tar.gz" % size)
    os.makedirs(os.path.dirname(big), exist_ok=True)
    sent = make_big(big, size)
    d = B.Daemon(ctx.workdir, name="p4-rss", extra_args=["--max-upload", "8G"]).start()
    api = B.Api(d.url)
    try:
        sb = api.acquire(["filesystem"])
        sid = sb["local_sandbox_id"]
        before = B.proc_status(d.pid)
        peak = [0]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                try:
                    peak[0] = max(peak[0], B.proc_status(d.pid)["VmRSS"])
                except OSError:
                    pass
                time.sleep(0.02)
        th = threading.Thread(target=sample)
        th.start()
        up = api.call("POST", "/local-sandbox/%s/upload-url" % sid)["upload_url"]
        t = timed(lambda: put_file(up, big))
        stop.set()
        th.join()
        after = B.proc_status(d.pid)
        blob = os.path.join(d.data_dir, "blobs", sid, "upload.tar.gz")
        got = os.path.getsize(blob) if os.path.exists(blob) else -1
        if got != sent:
            raise B.BenchError("the %d-byte upload arrived as %d bytes (%s)" % (sent, got, blob))
        api.release(sid)
        return {"bytes": sent, "seconds": t, "hwm_before": before["VmHWM"],
                "hwm_after": after["VmHWM"], "rss_peak_sampled": peak[0]}
    finally:
        api.close()
        d.stop()


def run(ctx):
    scale = 0.02 if ctx.smoke else 0.2 if ctx.quick else 1.0
    tree = os.path.join(B.ROOT, "build", "bench", "data", "ws-%s" % scale)
    t = time.time()
    gen_tree(tree, scale)
    want = manifest(tree)
    nbytes = tree_bytes(want)
    nfiles = sum(1 for v in want.values() if v[0] == "file")
    ctx.log("  P4: workspace %s: %d files, %.1f MB (made/checked in %.0f s)" % (
        tree, nfiles, nbytes / 1e6, time.time() - t))
    src_tgz = os.path.join(ctx.workdir, "p4-src.tar.gz")
    subprocess.run(["tar", "czf", src_tgz, "-C", tree, "--exclude", "./.stamp", "."], check=True)
    d = B.Daemon(ctx.workdir, name="p4-serve").start()
    api = B.Api(d.url)
    rounds = []
    try:
        one_round(ctx, api, src_tgz, tree, want, check=False)  # warm-up
        for i in range(ctx.runs):
            rounds.append(one_round(ctx, api, src_tgz, tree, want, check=(i == ctx.runs - 1)))
            ctx.log("  P4 round %d: %s" % (i, rounds[-1]))
    finally:
        api.close()
        d.stop()
    med = B.median_runs(rounds)
    mb = nbytes / 1e6
    rows = []
    for rid, key, alt_key, what, alt_name in (
            ("P4.put_init", "put_init", "xzf",
             "PUT + initialize of a %.0f MB workspace (%d files), .tar.gz of %.0f MB" % (
                 mb, nfiles, os.path.getsize(src_tgz) / 1e6), "tar xzf (GNU tar, gzip)"),
            ("P4.dump_get", "dump_get", "czf",
             "dump + GET of the same workspace", "tar czf (GNU tar, gzip)")):
        r = B.Row(rid, what, "%.2f s, %.0f MB/s" % (med[key], mb / med[key]),
                  "%.2f s, %.0f MB/s" % (med[alt_key], mb / med[alt_key]),
                  alt_name=alt_name, ratio=med[alt_key] / med[key])
        r.note = "ratio = tar time / mcpbox time; target ≥ 1.0"
        r.data = {"rounds": rounds, "median": med, "bytes": nbytes, "files": nfiles}
        rows.append(r)
    size = (32 << 20) if ctx.smoke else (256 << 20) if ctx.quick else (2 << 30)
    try:
        rss = peak_rss_upload(ctx, size)
        r = B.Row("P4.upload_rss", "daemon peak RSS (VmHWM) during a %s upload" % (
            "%.0f MB" % (size / 1e6) if size < 1e9 else "%.1f GB" % (size / 1e9)),
            "VmHWM %s (was %s before the PUT; sampled VmRSS peak %s), %.0f MB/s" % (
                B.fmt_mb(rss["hwm_after"]), B.fmt_mb(rss["hwm_before"]),
                B.fmt_mb(rss["rss_peak_sampled"]), rss["bytes"] / 1e6 / rss["seconds"]))
        r.note = "target ≤ 64 MB"
        r.data = rss
    except B.BenchError as e:
        r = B.Row("P4.upload_rss", "daemon peak RSS during a large upload", "failed: %s" % e,
                  errors=1)
    rows.append(r)
    return rows
