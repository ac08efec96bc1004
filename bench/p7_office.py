"""P7 office documents: the excel and pdf-tools servers of an acquired sandbox,
through the daemon's gateway (MCP Streamable HTTP):

  - write_data_to_excel of a 10,000-row x 10-column sheet into a new workbook
    (one call), and read_data_from_excel of it back (in 2,000-row windows, as
    an agent pages through a big sheet: the whole sheet in one answer is a
    37 MB message), with the excel server's peak RSS (VmHWM);
  - read_pdf_pages of pages 1-50 of a 50-page text PDF, with the pdf-tools
    server's peak RSS.

The upstream Python servers cannot be installed offline, so the alternative
is the work they do for the same calls, done by their libraries (openpyxl,
pypdf) in one Python process (bench/p7_alt.py): no MCP, HTTP or sandbox
around it, so it is a floor for them.

Checks: every read-back window is compared with the data written, cell by
cell (types included); the PDF answer must hold every page's header and
token; the alternative checks its own output the same way. --smoke uses 500
rows and 5 pages."""
import io
import json
import os
import re
import subprocess
import tarfile
import time

import benchlib as B
from p2_calls import upload

COLS = 10
HEADER = ["id", "name", "qty", "price", "total", "flag", "category", "code", "ratio", "note"]
ALT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "p7_alt.py")


def sizes(ctx):
    """(sheet rows including the header, rows per read window, PDF pages)."""
    if ctx.smoke:
        return 500, 250, 5
    return 10_000, 2_000, 50


def sheet_data(rows):
    """A header and rows-1 rows of ints, floats, booleans and strings; the same
    values every time."""
    out = [HEADER]
    for i in range(1, rows):
        qty = i % 97
        price = 1 + (i % 1000) / 8
        out.append([i, "item-%05d" % i, qty, price, round(qty * price, 2), i % 3 == 0,
                    "cat-%d" % (i % 12), "C%07d" % (i * 7919 % 10_000_000), (i % 1000) / 1000,
                    "row %d note" % i])
    return out


def page_token(n):
    return "P7PAGE%04d" % n


def make_pdf(pages):
    """A text PDF: on each page its token and 40 lines of text in Helvetica."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", None,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for p in range(1, pages + 1):
        lines = ["BT /F1 11 Tf 56 760 Td 15 TL", "(%s) Tj T*" % page_token(p)]
        for k in range(40):
            lines.append("(Line %02d of page %d: the quick brown fox jumps over the lazy dog "
                         "%d.%02d) Tj T*" % (k + 1, p, p * 100 + k, k))
        lines.append("ET")
        data = "\n".join(lines).encode()
        objs.append(b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream")
        content = len(objs)
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                    b"/Resources << /Font << /F1 3 0 R >> >> >>" % content)
        kids.append(len(objs))
    objs[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def tar_gz(files):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1700000000
            t.addfile(info, io.BytesIO(data))
    return bio.getvalue()


def server_pid(daemon_pid, sid, name):
    """The host pid of the sandbox's `mcpbox mcp NAME` process."""
    for p in B.descendants(daemon_pid):
        try:
            with open("/proc/%d/cmdline" % p, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%d/root/etc/hostname" % p) as f:
                host = f.read().strip()
        except OSError:
            continue
        if b"mcp" in argv and name.encode() in argv and host == "mcpbox-" + sid[:8]:
            return p
    raise B.BenchError("no `mcp %s` process found for sandbox %s" % (name, sid))


def timed_call(session, name, args):
    """(milliseconds until the whole answer arrived, result text); a failed
    call or an upstream-style "Error: ..." text raises."""
    session.next_id += 1
    msg = {"jsonrpc": "2.0", "id": session.next_id, "method": "tools/call",
           "params": {"name": name, "arguments": args}}
    t = time.perf_counter()
    st, hd, data = session._post(msg)
    ms = (time.perf_counter() - t) * 1000
    if st != 200:
        raise B.BenchError("%s: HTTP %d %s" % (name, st, data[:300]))
    for m in B.mcp_messages(hd, data):
        if m.get("id") == session.next_id:
            res = m.get("result")
            if not res or res.get("isError"):
                raise B.BenchError("%s: %s" % (name, str(m)[:300]))
            text = "".join(c.get("text", "") for c in res.get("content", []))
            if text.startswith("Error"):
                raise B.BenchError("%s: %s" % (name, text[:300]))
            return ms, text
    raise B.BenchError("%s: no answer" % name)


def alternative(ctx, *args, timeout=3600):
    out = subprocess.run(["/usr/bin/python3", ALT, *[str(a) for a in args]],
                         capture_output=True, text=True, timeout=timeout)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise B.BenchError("p7_alt.py %s failed (%d): %s" % (args[0], out.returncode,
                                                             out.stderr[-1000:]))


def child_peak_rss(argv):
    """Peak RSS (bytes) of one run of argv, measured by a Python parent that
    runs nothing else."""
    code = ("import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n")
    out = subprocess.run(["/usr/bin/python3", "-c", code, *argv], capture_output=True, text=True,
                         timeout=300)
    return int(out.stdout.strip()) if out.returncode == 0 else 0


def check_window(text, data, start, end):
    """Mismatches between a read_data_from_excel answer and data rows start..end."""
    got = json.loads(text)
    cells = got["cells"]
    bad = 0
    if len(cells) != (end - start + 1) * COLS:
        return 1 + abs(len(cells) - (end - start + 1) * COLS)
    for cell in cells:
        want = data[cell["row"] - 1][cell["column"] - 1]
        v = cell["value"]
        if v != want or type(v) is not type(want):
            bad += 1
    return bad


def excel_side(ctx, d, sid, url, data, window):
    rows = len(data)
    s = B.McpSession(url).open()
    pid = server_pid(d.pid, sid, "excel")
    rss_start = B.proc_status(pid)["VmHWM"]
    writes, reads, errors = [], [], 0
    try:
        for i in range(ctx.runs + 1):  # the first run is the warm-up
            path = "/data/w%d.xlsx" % i
            timed_call(s, "create_workbook", {"filepath": path})
            ms, text = timed_call(s, "write_data_to_excel", {"filepath": path,
                                                             "sheet_name": "Sheet1", "data": data})
            errors += text != "Data written to Sheet1"
            if i:
                writes.append(ms)
        path = "/data/w%d.xlsx" % ctx.runs
        for i in range(ctx.runs + 1):
            total = 0.0
            for start in range(1, rows + 1, window):
                end = min(start + window - 1, rows)
                ms, text = timed_call(s, "read_data_from_excel", {
                    "filepath": path, "sheet_name": "Sheet1", "start_cell": "A%d" % start,
                    "end_cell": "%s%d" % ("ABCDEFGHIJ"[COLS - 1], end)})
                total += ms
                if i <= 1:  # the warm-up and the first timed run are checked cell by cell
                    errors += check_window(text, data, start, end)
            if i:
                reads.append(total)
        rss = B.proc_status(pid)["VmHWM"]
    finally:
        s.close()
    return {"write": B.summary(writes), "read": B.summary(reads), "vmhwm": rss,
            "vmhwm_start": rss_start, "errors": errors}


def pdf_side(ctx, d, sid, url, pages):
    s = B.McpSession(url).open()
    pid = server_pid(d.pid, sid, "pdf-tools")
    rss_start = B.proc_status(pid)["VmHWM"]
    lat, errors = [], 0
    try:
        for i in range(ctx.runs + 1):
            ms, text = timed_call(s, "read_pdf_pages", {"pdf_file_path": "/data/doc.pdf",
                                                        "start_page": 1, "end_page": pages})
            errors += pdf_errors(text, pages)
            if i:
                lat.append(ms)
        rss = B.proc_status(pid)["VmHWM"]
    finally:
        s.close()
    return {"read": B.summary(lat), "vmhwm": rss, "vmhwm_start": rss_start, "errors": errors}


def pdf_errors(text, pages):
    """Pages whose header or token is missing from a read_pdf_pages answer."""
    if not text.startswith("PDF total pages: %d\nExtracted page range: 1-%d\n" % (pages, pages)):
        return pages
    flat = re.sub(r"\s", "", text)
    return sum(1 for p in range(1, pages + 1)
               if "===Page%d===" % p not in flat or page_token(p) not in flat)


def runs_text(n):
    return "%d run%s" % (n, "" if n == 1 else "s")


def run(ctx):
    rows, window, pages = sizes(ctx)
    work = ctx.tmp("p7")
    data = sheet_data(rows)
    pdf = make_pdf(pages)
    pdf_path = os.path.join(work, "doc.pdf")
    with open(pdf_path, "wb") as f:
        f.write(pdf)
    data_path = os.path.join(work, "data.json")
    with open(data_path, "w") as f:
        json.dump(data, f)

    d = api = None
    try:
        d = B.Daemon(ctx.workdir, name="p7-serve").start()
        api = B.Api(d.url)
        sb = api.acquire(["excel", "pdf-tools"], benchmark="Toolathlon")
        sid = sb["local_sandbox_id"]
        urls = {x["server_name"]: x["mcp_server_url"] for x in sb["servers"]}
        upload(api, sid, tar_gz({"doc.pdf": pdf}))
        xl = excel_side(ctx, d, sid, urls["excel"], data, window)
        ctx.log("  P7 excel: %s" % json.dumps(xl))
        pd = pdf_side(ctx, d, sid, urls["pdf-tools"], pages)
        ctx.log("  P7 pdf-tools: %s" % json.dumps(pd))
    finally:
        if api:
            api.close()
        if d:
            d.stop()

    alt_w = alternative(ctx, "xlsx-write", os.path.join(work, "alt"), data_path, ctx.runs)
    alt_w_err = int(alt_w["check"] != rows)
    alt_path = os.path.join(work, "alt.%d.xlsx" % ctx.runs)
    alt_r = alternative(ctx, "xlsx-read", alt_path, "Sheet1", rows, COLS, window, ctx.runs)
    alt_p = alternative(ctx, "pdf-read", pdf_path, pages, ctx.runs)
    alt_p_err = pdf_errors(alt_p["check"], pages)
    ctx.log("  P7 alternative: write %s; read %s; pdf %s" % (
        json.dumps({k: v for k, v in alt_w.items() if k != "check"}),
        json.dumps({k: v for k, v in alt_r.items() if k != "check"}),
        json.dumps({k: v for k, v in alt_p.items() if k != "check"})))
    pdftotext_rss = child_peak_rss(["pdftotext", "-raw", "-enc", "UTF-8", "-f", "1",
                                    "-l", str(pages), pdf_path, "-"])

    lib_x = "%s in one Python process (upstream's work, no MCP)" % alt_w["library"]
    lib_p = "%s in one Python process (upstream's work with PyPDF2's successor, no MCP)" % \
        alt_p["library"]
    aw, ar, ap = (B.summary(alt_w["ms"]), B.summary(alt_r["ms"]), B.summary(alt_p["ms"]))
    size = "%s rows x %d columns" % ("{:,}".format(rows), COLS)
    calls = (rows + window - 1) // window
    out = []
    r = B.Row("P7.xlsx_write", "write_data_to_excel of %s into a new workbook, one call, %s"
              % (size, runs_text(ctx.runs)), B.fmt_lat(xl["write"], thr=False),
              B.fmt_lat(aw, thr=False), alt_name=lib_x, ratio=B.ratio(aw["p50_ms"],
                                                                      xl["write"]["p50_ms"]),
              errors=int(xl["errors"] + alt_w_err))
    r.note = "ratio = alternative p50 / mcpbox p50; mcpbox through HTTP, gateway and sandbox"
    r.data = {"mcpbox": xl, "alternative": alt_w}
    out.append(r)
    r = B.Row("P7.xlsx_read", "read_data_from_excel of the same sheet, %d calls of %s rows, "
              "%s" % (calls, "{:,}".format(window), runs_text(ctx.runs)),
              B.fmt_lat(xl["read"], thr=False), B.fmt_lat(ar, thr=False), alt_name=lib_x,
              ratio=B.ratio(ar["p50_ms"], xl["read"]["p50_ms"]), errors=int(xl["errors"]))
    r.note = "time of all %d calls; ratio = alternative p50 / mcpbox p50" % calls
    r.data = {"mcpbox": xl, "alternative": alt_r}
    out.append(r)
    alt_rss = max(alt_w["maxrss"], alt_r["maxrss"])
    r = B.Row("P7.xlsx_rss", "excel server peak RSS (VmHWM) over the writes and reads above",
              "VmHWM %s (%s after start)" % (B.fmt_mb(xl["vmhwm"]), B.fmt_mb(xl["vmhwm_start"])),
              "peak RSS %s" % B.fmt_mb(alt_rss), alt_name=lib_x,
              ratio=B.ratio(alt_rss, xl["vmhwm"]))
    r.note = "ratio = alternative / mcpbox; alternative = the larger of its write and read processes"
    out.append(r)
    r = B.Row("P7.pdf_read", "read_pdf_pages of pages 1-%d of a %d-page text PDF, %s"
              % (pages, pages, runs_text(ctx.runs)), B.fmt_lat(pd["read"], thr=False),
              B.fmt_lat(ap, thr=False), alt_name=lib_p,
              ratio=B.ratio(ap["p50_ms"], pd["read"]["p50_ms"]),
              errors=int(pd["errors"] + alt_p_err))
    r.note = "ratio = alternative p50 / mcpbox p50; mcpbox runs pdfinfo and pdftotext per call"
    r.data = {"mcpbox": pd, "alternative": alt_p | {"check": None}}
    out.append(r)
    r = B.Row("P7.pdf_rss", "pdf-tools server peak RSS (VmHWM) over the reads above",
              "VmHWM %s (%s after start)" % (B.fmt_mb(pd["vmhwm"]), B.fmt_mb(pd["vmhwm_start"])),
              "peak RSS %s" % B.fmt_mb(alt_p["maxrss"]), alt_name=lib_p,
              ratio=B.ratio(alt_p["maxrss"], pd["vmhwm"]))
    r.note = ("ratio = alternative / mcpbox; the server's own memory: pdftotext runs as a child "
              "process, %s at its peak on this PDF" % B.fmt_mb(pdftotext_rss))
    out.append(r)
    return out
