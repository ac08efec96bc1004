"""P7W word documents: the word server (office-word-mcp-server 1.1.9 surface) of an
acquired Toolathlon sandbox, through the daemon's gateway:

  - get_document_text of a ~100-page .docx (3,000 paragraphs written by python-docx);
  - writing: create_document, 200 add_paragraph calls and one add_table of 50 x 10
    cells with data, each call opening and saving the file as upstream does;
  - the word server's peak RSS (VmHWM).

The alternative is upstream's work for the same calls done by python-docx (Debian's
python3-docx) in one Python process: Document(path), the change, save(path) per
call; no MCP, HTTP or sandbox around it, so it is a floor for upstream.

Checks: the text read equals what python-docx reads from the same file; the written
document holds 200 paragraphs and one 50 x 10 table (get_document_info) and its last
cell's text. --smoke uses 300 paragraphs, 20 writes and a 10 x 10 table."""
import io
import json
import os
import subprocess
import sys
import time

import benchlib as B
from p2_calls import upload
from p7_office import runs_text, server_pid, tar_gz, timed_call


def sizes(ctx):
    """(paragraphs of the big document, paragraphs written, table rows, table cols)."""
    if ctx.smoke:
        return 300, 20, 10, 10
    return 3000, 200, 50, 10


def big_docx(paragraphs):
    import docx
    d = docx.Document()
    for i in range(paragraphs):
        if i % 40 == 0:
            d.add_heading("Section %d" % (i // 40 + 1), 1)
        d.add_paragraph("Paragraph %d: the quick brown fox jumps over the lazy dog, "
                        "lorem ipsum dolor sit amet %d." % (i, i * 7))
    bio = io.BytesIO()
    d.save(bio)
    return bio.getvalue()


def expected_text(data):
    import docx
    d = docx.Document(io.BytesIO(data))
    return "\n".join(p.text for p in d.paragraphs)


def table_data(rows, cols):
    return [["r%dc%d" % (r, c) for c in range(cols)] for r in range(rows)]


def word_side(ctx, d, sid, url, want_text, writes, rows, cols):
    s = B.McpSession(url).open()
    pid = server_pid(d.pid, sid, "word")
    rss_start = B.proc_status(pid)["VmHWM"]
    reads, writes_ms, errors = [], [], 0
    try:
        for i in range(ctx.runs + 1):  # the first run is the warm-up
            ms, text = timed_call(s, "get_document_text", {"filename": "big.docx"})
            errors += text != want_text
            if i:
                reads.append(ms)
        for i in range(ctx.runs + 1):
            name = "w%d.docx" % i
            total, text = timed_call(s, "create_document", {"filename": name})
            for k in range(writes):
                ms, text = timed_call(s, "add_paragraph", {"filename": name, "text": "Written %d" % k})
                total += ms
            ms, text = timed_call(s, "add_table", {"filename": name, "rows": rows, "cols": cols,
                                                   "data": table_data(rows, cols)})
            total += ms
            if i:
                writes_ms.append(total)
        _, info = timed_call(s, "get_document_info", {"filename": "w%d.docx" % ctx.runs})
        info = json.loads(info)
        errors += (info["paragraph_count"], info["table_count"]) != (writes, 1)
        _, text = timed_call(s, "get_document_text", {"filename": "w%d.docx" % ctx.runs})
        errors += not text.endswith("r%dc%d" % (rows - 1, cols - 1))
        rss = B.proc_status(pid)["VmHWM"]
    finally:
        s.close()
    return {"read": B.summary(reads), "write": B.summary(writes_ms), "vmhwm": rss,
            "vmhwm_start": rss_start, "errors": errors}


def alternative(work, paragraphs_path, writes, rows, cols, runs):
    out = subprocess.run(["/usr/bin/python3", os.path.abspath(__file__), "alt", work, paragraphs_path,
                          str(writes), str(rows), str(cols), str(runs)],
                         capture_output=True, text=True, timeout=3600,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(__file__))))
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise B.BenchError("p7_word.py alt failed (%d): %s" % (out.returncode, out.stderr[-1000:]))


def alt_main(work, big, writes, rows, cols, runs):
    """Upstream's work with python-docx in this process: read, then the writes."""
    import resource
    import docx
    reads, wr = [], []
    text = None
    for i in range(runs + 1):
        t = time.perf_counter()
        d = docx.Document(big)
        text = "\n".join(p.text for p in d.paragraphs)
        if i:
            reads.append((time.perf_counter() - t) * 1000)
    for i in range(runs + 1):
        path = os.path.join(work, "alt%d.docx" % i)
        t = time.perf_counter()
        docx.Document().save(path)
        for k in range(writes):
            d = docx.Document(path)
            d.add_paragraph("Written %d" % k)
            d.save(path)
        d = docx.Document(path)
        tb = d.add_table(rows=rows, cols=cols)
        tb.style = "Table Grid"
        for r, row in enumerate(table_data(rows, cols)):
            for c, v in enumerate(row):
                tb.cell(r, c).text = v
        d.save(path)
        if i:
            wr.append((time.perf_counter() - t) * 1000)
    check = len(docx.Document(path).paragraphs)
    print(json.dumps({"library": "python-docx %s" % getattr(docx, "__version__", "?"),
                      "read_ms": reads, "write_ms": wr, "text_chars": len(text), "check": check,
                      "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))


def run(ctx):
    paragraphs, writes, rows, cols = sizes(ctx)
    work = ctx.tmp("p7w")
    data = big_docx(paragraphs)
    big = os.path.join(work, "big.docx")
    with open(big, "wb") as f:
        f.write(data)
    want = expected_text(data)
    d = api = None
    try:
        d = B.Daemon(ctx.workdir, name="p7w-serve").start()
        api = B.Api(d.url)
        sb = api.acquire(["word"], benchmark="Toolathlon")
        sid = sb["local_sandbox_id"]
        upload(api, sid, tar_gz({"big.docx": data}))
        wd = word_side(ctx, d, sid, sb["servers"][0]["mcp_server_url"], want, writes, rows, cols)
        ctx.log("  P7W word: %s" % json.dumps(wd))
    finally:
        if api:
            api.close()
        if d:
            d.stop()
    alt = alternative(work, big, writes, rows, cols, ctx.runs)
    alt_err = int(alt["check"] != writes or alt["text_chars"] != len(want))
    ar, aw = B.summary(alt["read_ms"]), B.summary(alt["write_ms"])
    lib = "%s in one Python process (upstream's work, no MCP)" % alt["library"]
    cmd = "bench/run --only P7W"
    out = []
    r = B.Row("P7W.docx_read", "get_document_text of a %s-paragraph (~%d-page) .docx, %s"
              % ("{:,}".format(paragraphs), paragraphs // 30, runs_text(ctx.runs)),
              B.fmt_lat(wd["read"], thr=False), B.fmt_lat(ar, thr=False), alt_name=lib,
              ratio=B.ratio(ar["p50_ms"], wd["read"]["p50_ms"]), errors=int(wd["errors"] + alt_err), cmd=cmd)
    r.note = "ratio = alternative p50 / mcpbox p50; mcpbox through HTTP, gateway and sandbox"
    r.data = {"mcpbox": wd, "alternative": alt}
    out.append(r)
    r = B.Row("P7W.docx_write", "create_document, %d add_paragraph and a %dx%d add_table, each call "
              "opening and saving the file, %s" % (writes, rows, cols, runs_text(ctx.runs)),
              B.fmt_lat(wd["write"], thr=False), B.fmt_lat(aw, thr=False), alt_name=lib,
              ratio=B.ratio(aw["p50_ms"], wd["write"]["p50_ms"]), errors=int(wd["errors"] + alt_err), cmd=cmd)
    r.note = "time of all %d calls; ratio = alternative p50 / mcpbox p50" % (writes + 2)
    out.append(r)
    r = B.Row("P7W.docx_rss", "word server peak RSS (VmHWM) over the reads and writes above",
              "VmHWM %s (%s after start)" % (B.fmt_mb(wd["vmhwm"]), B.fmt_mb(wd["vmhwm_start"])),
              "peak RSS %s" % B.fmt_mb(alt["maxrss"]), alt_name=lib,
              ratio=B.ratio(alt["maxrss"], wd["vmhwm"]), cmd=cmd)
    r.note = "ratio = alternative / mcpbox"
    out.append(r)
    return out


if __name__ == "__main__" and len(sys.argv) == 8 and sys.argv[1] == "alt":
    alt_main(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]),
             int(sys.argv[7]))
