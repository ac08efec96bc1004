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
import sys
import time

from p7_driver import alternative, doc_rows, in_sandbox, measure, table_data
from p7_office import timed_call


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


def word_side(ctx, d, sid, url, want_text, writes, rows, cols):
    def read(s, i):
        ms, text = timed_call(s, "get_document_text", {"filename": "big.docx"})
        return ms, int(text != want_text)

    def write(s, i):
        name = "w%d.docx" % i
        total, _ = timed_call(s, "create_document", {"filename": name})
        for k in range(writes):
            ms, _ = timed_call(s, "add_paragraph", {"filename": name, "text": "Written %d" % k})
            total += ms
        ms, _ = timed_call(s, "add_table", {"filename": name, "rows": rows, "cols": cols,
                                           "data": table_data(rows, cols)})
        return total + ms

    def check(s):
        _, info = timed_call(s, "get_document_info", {"filename": "w%d.docx" % ctx.runs})
        info = json.loads(info)
        errors = (info["paragraph_count"], info["table_count"]) != (writes, 1)
        _, text = timed_call(s, "get_document_text", {"filename": "w%d.docx" % ctx.runs})
        return errors + (not text.endswith("r%dc%d" % (rows - 1, cols - 1)))

    return measure(ctx, d, sid, url, "word", read, write, check)


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
    wd = in_sandbox(ctx, "P7W", "word", {"big.docx": data},
                    lambda d, sid, url: word_side(ctx, d, sid, url, want, writes, rows, cols))
    alt = alternative(__file__, work, big, writes, rows, cols, ctx.runs)
    alt_err = int(alt["check"] != writes or alt["text_chars"] != len(want))
    lib = "%s in one Python process (upstream's work, no MCP)" % alt["library"]
    return doc_rows(ctx, "P7W", "docx", "word", wd, alt, alt_err, lib,
                    "get_document_text of a %s-paragraph (~%d-page) .docx"
                    % ("{:,}".format(paragraphs), paragraphs // 30),
                    "create_document, %d add_paragraph and a %dx%d add_table, each call "
                    "opening and saving the file" % (writes, rows, cols), writes + 2)


if __name__ == "__main__" and len(sys.argv) == 8 and sys.argv[1] == "alt":
    alt_main(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]),
             int(sys.argv[7]))
