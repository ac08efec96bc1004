"""P10 arxiv catalog: `search_papers` of the native arxiv server (arxiv-mcp-server 0.2.11)
over a catalog of N synthetic papers (1,000,000; 100,000 with --quick; 20,000 with --smoke).

The papers are generated here (deterministic: a 5,000-word vocabulary with Zipf-like
frequencies, 1-3 categories out of 40, one submission a minute or so over 2007-2025), fed to
`mcpbox arxiv import --metadata -` as Kaggle/OAI snapshot lines; the import time is a row too.
Then one `mcpbox mcp arxiv` process answers a mix of queries (plain words that 0.2.11 AND-s,
frequent and rare terms, field prefixes, phrases, categories, submittedDate ranges, ANDNOT),
max_results 10, each timed from the request line written to the answer read on stdio.
Target (issue 14): p50 <= 20 ms at 1,000,000 papers.

Checks: every answer is a search_papers JSON text whose papers are newest first and whose
count is at most max_results; a plain query returns papers that hold every word."""
import json
import os
import random
import select
import shutil
import subprocess
import time

import benchlib as B

CATS = ["cs.AI", "cs.LG", "cs.CL", "cs.CV", "cs.DB", "cs.DS", "cs.IT", "cs.PL", "cs.RO",
        "cs.SE", "math.AG", "math.AP", "math.CO", "math.NT", "math.PR", "math.ST", "stat.ML",
        "stat.ME", "quant-ph", "hep-th", "hep-ph", "hep-ex", "gr-qc", "astro-ph.CO",
        "astro-ph.GA", "astro-ph.HE", "cond-mat.mes-hall", "cond-mat.str-el",
        "cond-mat.stat-mech", "physics.chem-ph", "physics.optics", "physics.flu-dyn",
        "q-bio.NC", "q-bio.QM", "q-fin.ST", "econ.EM", "eess.SP", "eess.IV", "nlin.CD",
        "nucl-th"]
START = 1167609600  # 2007-01-01


def vocabulary(n=5000):
    rnd = random.Random(7)
    letters = "abcdefghijklmnoprstuvwz"
    words = set()
    while len(words) < n:
        words.add("".join(rnd.choice(letters) for _ in range(rnd.randint(4, 10))))
    return sorted(words)


def records(n):
    rnd = random.Random(11)
    words = vocabulary()
    cum, acc = [], 0.0
    for i in range(len(words)):
        acc += 1.0 / (i + 1)
        cum.append(acc)
    step = (1735689600 - START) // n  # spread over 2007..2025
    for i in range(n):
        t = START + i * step + rnd.randint(0, max(step - 1, 0))
        yymm = time.strftime("%y%m", time.gmtime(t))
        title = " ".join(rnd.choices(words, cum_weights=cum, k=rnd.randint(5, 10))).capitalize()
        abstract = " ".join(rnd.choices(words, cum_weights=cum, k=rnd.randint(25, 45))) + "."
        authors = [["Author%d" % rnd.randint(1, 200000), rnd.choice(["A.", "B.", "Chen", "Maria"]),
                    ""] for _ in range(rnd.randint(1, 4))]
        cats = " ".join(rnd.sample(CATS, rnd.randint(1, 3)))
        yield json.dumps({
            "id": "%s.%05d" % (yymm, i % 100000), "title": title, "abstract": abstract,
            "authors_parsed": authors, "categories": cats,
            "versions": [{"version": "v1", "created": time.strftime(
                "%a, %d %b %Y %H:%M:%S GMT", time.gmtime(t))}]}) + "\n"


def build(ctx, n, cat):
    shutil.rmtree(cat, ignore_errors=True)
    t = time.time()
    p = subprocess.Popen([B.MCPBOX, "arxiv", "import", "--catalog", cat, "--metadata", "-",
                          "--quiet"], stdin=subprocess.PIPE, text=True)
    batch = []
    for line in records(n):
        batch.append(line)
        if len(batch) == 10000:
            p.stdin.write("".join(batch))
            batch = []
    p.stdin.write("".join(batch))
    p.stdin.close()
    if p.wait() != 0:
        raise B.BenchError("mcpbox arxiv import failed")
    secs = time.time() - t
    size = os.path.getsize(os.path.join(cat, "catalog.sqlite"))
    return secs, size


def queries():
    words = vocabulary()
    rnd = random.Random(5)
    out = []
    for k in range(20):
        out.append(words[k])                                     # frequent word
        out.append(words[rnd.randint(1000, 4999)])               # rare word
        out.append("%s %s" % (words[k], words[k + 20]))          # AND-ed by 0.2.11
        out.append("%s %s" % (words[rnd.randint(0, 200)], words[rnd.randint(300, 3000)]))
        out.append("ti:%s AND cat:%s" % (words[k + 3], CATS[k]))
        out.append('all:"%s %s"' % (words[k], words[k + 1]))
        out.append("abs:%s ANDNOT ti:%s" % (words[k + 5], words[k]))
        out.append("cat:%s AND submittedDate:[20150101 TO 20151231]" % CATS[k])
        out.append("au:author%d" % rnd.randint(1, 200000))
        out.append("%s*" % words[k + 40][:4])
    return out


class Stdio:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.buf = b""
        self.id = 0

    def rpc(self, method, params, notify=False):
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.id += 1
            msg["id"] = self.id
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()
        if notify:
            return None
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.p.stdout], [], [], 60)
            if not r:
                raise B.BenchError("arxiv server: no answer")
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                raise B.BenchError("arxiv server exited")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def search(ctx, cat, storage, rounds):
    s = Stdio([B.MCPBOX, "mcp", "arxiv", "--catalog", cat, "--storage-path", storage])
    s.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}})
    s.rpc("notifications/initialized", {}, notify=True)
    qs = queries()
    lat, errors, hits = [], 0, 0
    for r in range(rounds):
        for q in qs:
            t = time.perf_counter()
            m = s.rpc("tools/call", {"name": "search_papers",
                                     "arguments": {"query": q, "max_results": 10}})
            dt = (time.perf_counter() - t) * 1000
            if r > 0 or rounds == 1:
                lat.append(dt)
            try:
                got = json.loads(m["result"]["content"][0]["text"])
                pub = [p["published"] for p in got["papers"]]
                ok = pub == sorted(pub, reverse=True) and got["total_results"] == len(pub) <= 10
                if " " in q and ":" not in q:
                    ok = ok and all(all(w in (p["title"] + " " + p["abstract"]).lower()
                                        for w in q.split()) for p in got["papers"])
                hits += len(pub)
            except (KeyError, ValueError, TypeError, IndexError):
                ok = False
            errors += not ok
    s.close()
    return lat, errors, hits, len(qs)


def run(ctx):
    n = 20000 if ctx.smoke else 100000 if ctx.quick else 1000000
    cat = os.path.join(ctx.workdir, "arxiv-catalog")
    storage = os.path.join(ctx.workdir, "arxiv-storage")
    secs, size = build(ctx, n, cat)
    rows = [B.Row("P10.import", "`mcpbox arxiv import` of %s synthetic papers (snapshot JSON "
                  "lines on stdin)" % B.fmt_num(n),
                  "%.0f s (%s papers/s), catalog %s" % (secs, B.fmt_num(n / secs),
                                                       B.fmt_mb(size)),
                  cmd="bench/run --only P10")]
    lat, errors, hits, nq = search(ctx, cat, storage, 2 if ctx.quick or ctx.smoke else 4)
    s = B.summary(lat)
    r = B.Row("P10.search", "arxiv search_papers over %s papers, %d queries (words AND-ed, "
              "fields, phrases, categories, date ranges, prefixes), max_results 10, stdio; "
              "target p50 <= 20 ms" % (B.fmt_num(n), nq),
              B.fmt_lat(s) + "; %.1f papers per answer" % (hits / max(1, len(lat) + nq)),
              errors=errors, cmd="bench/run --only P10")
    r.data = {"papers": n, "import_s": secs, "catalog_bytes": size, "search": s}
    rows.append(r)
    shutil.rmtree(cat, ignore_errors=True)
    shutil.rmtree(storage, ignore_errors=True)
    return rows
