"""`mcpbox mcp pdf-tools` (lockon-n/pdf-tools-mcp 0.1.4, Toolathlon's PDF server) over stdio.

Expected texts follow upstream's pdf_tools_mcp/server.py. Page text is compared with pypdf
(Debian python3-pypdf) after collapsing whitespace: the server extracts with poppler's
pdftotext -raw, which keeps pypdf's content-stream order but not always its line breaks
(docs/servers/pdf-tools.md). The PDFs are generated here; Toolathlon's receipts
(reimbursement-form-filler) are used too when ../shared/bench-data is present."""
import io
import os
import re
import tarfile
import time
import zlib

import pypdf
import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient

HERE = os.path.dirname(__file__)
BENCH = os.path.join(HERE, "..", "..", "..", "shared", "bench-data")
BILLS = os.path.join(BENCH, "toolathlon", "reimbursement-form-filler", "initial_workspace",
                     "bills", "bills.tar.gz")
PATH = "/usr/local/bin:/usr/bin:/bin"
NAMES = ["read_pdf_pages", "get_pdf_info", "merge_pdfs", "extract_pdf_pages", "search_pdf_content",
         "search_pdf_next_page", "search_pdf_prev_page", "search_pdf_go_page", "search_pdf_info"]


# --------------------------------------------------------------- a tiny PDF writer

def _esc(s):
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages, info=None, compress=False, raw_content=None, count_override=None, raw_all=False):
    """A PDF with one Helvetica text line per list entry on each page. `raw_content` replaces
    the first page's content stream bytes (every page's with `raw_all`; already compressed
    when `compress`)."""
    objs = []

    def add(body):
        objs.append(body)
        return len(objs)

    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    pages_id = len(objs) + 1 + 0  # placeholder, fixed below
    objs.append(None)
    pages_id = len(objs)
    kids = []
    for i, lines in enumerate(pages):
        if raw_content is not None and (i == 0 or raw_all):
            data = raw_content
        else:
            ops = ["BT /F1 12 Tf 72 720 Td 14 TL"]
            for ln in lines:
                ops.append("(%s) Tj T*" % _esc(ln))
            ops.append("ET")
            data = "\n".join(ops).encode("latin-1")
            if compress:
                data = zlib.compress(data)
        filt = b" /Filter /FlateDecode" if compress else b""
        content = add(b"<< /Length %d%s >>\nstream\n" % (len(data), filt) + data + b"\nendstream")
        kids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                        b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (pages_id, content, font)))
    count = len(kids) if count_override is None else count_override
    objs[pages_id - 1] = (b"<< /Type /Pages /Kids [%s] /Count %d >>"
                          % (b" ".join(b"%d 0 R" % k for k in kids), count))
    catalog = add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id)
    info_id = None
    if info:
        info_id = add(b"<< " + b" ".join(b"/%s (%s)" % (k.encode(), _esc(v).encode("latin-1"))
                                         for k, v in info.items()) + b" >>")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objs) + 1, catalog)
    if info_id:
        trailer += b" /Info %d 0 R" % info_id
    out.write(b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


# ------------------------------------------------------------------ fixtures/helpers

class Checked(StdioClient):
    """Asserts a clean exit (ASan leak reports make the exit status non-zero)."""

    def __exit__(self, exc_type, *rest):
        rc = self.close()
        if exc_type is None:
            assert rc == 0, "server exit status %s; stderr:\n%s" % (rc, self.stderr())
        return False


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    (root / "doc.pdf").write_bytes(make_pdf(
        [["Invoice number 1001", "Total: CNY 61.02"], ["Second page", "needle one"],
         [], ["Fourth page", "Amount due 42"]],
        info={"Title": "Quarterly Report", "Author": "Wang Lei",
              "CreationDate": "D:20250714230500+08'00'"}))
    (root / "noinfo.pdf").write_bytes(make_pdf([["alpha"], ["beta"]]))
    (tmp_path / "outside.pdf").write_bytes(make_pdf([["secret"]]))
    return root


def server(root, *extra):
    c = Checked([MCPBOX_BIN, "mcp", "pdf-tools", "--workspace_path", str(root),
                 "--tempfile_dir", str(root / ".pdf_tools_tempfiles"), *extra],
                env={"PATH": PATH}, cwd="/")
    c.initialize()
    return c


def call(c, name, args, timeout=None):
    r = c.call(name, args, timeout=timeout)
    assert not r.get("isError"), r
    text = StdioClient.text(r)
    assert r["structuredContent"] == {"result": text}
    return text


def pages_of(text):
    """{page: text} from read_pdf_pages' reply."""
    parts = re.split(r"(?:\n\n)?=== Page (\d+) ===\n", text)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


def norm(s):
    return " ".join(s.split())


# ------------------------------------------------------------------------ tests

def test_tools_list(ws):
    with server(ws) as c:
        tools = {t["name"]: t for t in c.list_tools()}
        assert list(tools) == NAMES
        assert tools["read_pdf_pages"]["inputSchema"] == {
            "properties": {"pdf_file_path": {"title": "Pdf File Path", "type": "string"},
                           "start_page": {"default": 1, "title": "Start Page", "type": "integer"},
                           "end_page": {"default": 1, "title": "End Page", "type": "integer"}},
            "required": ["pdf_file_path"], "title": "read_pdf_pagesArguments", "type": "object"}
        assert tools["extract_pdf_pages"]["inputSchema"]["properties"]["page_numbers"] == {
            "items": {"type": "integer"}, "title": "Page Numbers", "type": "array"}
        assert tools["search_pdf_go_page"]["inputSchema"]["required"] == ["search_id", "page_number"]
        assert tools["merge_pdfs"]["outputSchema"] == {
            "properties": {"result": {"title": "Result", "type": "string"}}, "required": ["result"],
            "title": "merge_pdfsOutput", "type": "object"}
        assert tools["search_pdf_content"]["description"].startswith(
            "Search for regex pattern in PDF content and return paginated results.\n    \n")
    assert (ws / ".pdf_tools_tempfiles").is_dir()


def test_read_pages_and_ranges(ws):
    ref = pypdf.PdfReader(str(ws / "doc.pdf"))
    with server(ws) as c:
        t = call(c, "read_pdf_pages", {"pdf_file_path": "doc.pdf"})
        assert t.startswith("PDF total pages: 4\nExtracted page range: 1-1\n\n=== Page 1 ===\n")
        assert norm(pages_of(t)[1]) == norm(ref.pages[0].extract_text())
        # clamping and swapping as validate_page_range; page 3 is empty and left out
        t = call(c, "read_pdf_pages", {"pdf_file_path": str(ws / "doc.pdf"), "start_page": 9,
                                        "end_page": -3})
        assert t.startswith("PDF total pages: 4\nExtracted page range: 1-4\n\n")
        got = pages_of(t)
        assert sorted(got) == [1, 2, 4]
        for p in got:
            assert norm(got[p]) == norm(ref.pages[p - 1].extract_text())
        assert call(c, "read_pdf_pages", {"pdf_file_path": "doc.pdf", "start_page": 3,
                                          "end_page": 3}) == \
            "PDF total pages: 4\nSpecified page range (3-3) has no extractable text content."
        t = call(c, "read_pdf_pages", {"pdf_file_path": "doc.pdf", "start_page": 1, "end_page": 60})
        assert t.startswith("Warning: Reading more than 50 pages at once may cause performance "
                            "issues or errors.\nPDF total pages: 4\nExtracted page range: 1-4")
        # lax ints, as pydantic
        t = call(c, "read_pdf_pages", {"pdf_file_path": "doc.pdf", "start_page": "2",
                                        "end_page": 2.0})
        assert "Extracted page range: 2-2" in t


def test_errors_and_workspace(ws):
    with server(ws) as c:
        assert call(c, "read_pdf_pages", {"pdf_file_path": "missing.pdf"}) == \
            "Error: File not found 'missing.pdf'"
        assert call(c, "get_pdf_info", {"pdf_file_path": "missing.pdf"}) == \
            "Error: File not found 'missing.pdf'"
        assert call(c, "read_pdf_pages", {"pdf_file_path": "."}) == \
            "Error reading PDF file: [Errno 21] Is a directory: '.'"
        for tool, key in (("read_pdf_pages", "pdf_file_path"), ("get_pdf_info", "pdf_file_path"),
                          ("search_pdf_content", "pdf_file_path")):
            args = {key: "../outside.pdf", "pattern": "x"}
            assert call(c, tool, args) == \
                "Error: Path '../outside.pdf' is outside the allowed workspace '%s'" % ws
        (ws / "link.pdf").symlink_to(ws.parent / "outside.pdf")
        assert call(c, "read_pdf_pages", {"pdf_file_path": "link.pdf"}).startswith(
            "Error: Path 'link.pdf' is outside")
        assert call(c, "merge_pdfs", {"pdf_paths": ["doc.pdf"], "output_path": "../o.pdf"}) == \
            "Error: Path '../o.pdf' is outside the allowed workspace '%s'" % ws
        assert call(c, "merge_pdfs", {"pdf_paths": ["doc.pdf"], "output_path": "http://x/o.pdf"}) == \
            "Error: Output path cannot be a URL, must be a local file path"
        # pydantic's validation, surfaced by FastMCP as an error result
        r = c.call("read_pdf_pages", {})
        assert r["isError"] is True
        assert StdioClient.text(r) == (
            "Error executing tool read_pdf_pages: 1 validation error for read_pdf_pagesArguments\n"
            "pdf_file_path\n  Field required [type=missing, input_value={}, input_type=dict]\n"
            "    For further information visit https://errors.pydantic.dev/2.11/v/missing")
        r = c.call("extract_pdf_pages", {"source_path": 5, "page_numbers": [1, "x", 2.5],
                                         "output_path": "o.pdf"})
        t = StdioClient.text(r)
        assert r["isError"] and t.startswith(
            "Error executing tool extract_pdf_pages: 3 validation errors for extract_pdf_pagesArguments\n"
            "source_path\n  Input should be a valid string [type=string_type, input_value=5, "
            "input_type=int]")
        assert "page_numbers.1\n  Input should be a valid integer, unable to parse string as an " \
               "integer [type=int_parsing, input_value='x', input_type=str]" in t
        assert "page_numbers.2\n  Input should be a valid integer, got a number with a fractional " \
               "part [type=int_from_float, input_value=2.5, input_type=float]" in t
        r = c.call("no_such_tool", {})
        assert r["isError"] and StdioClient.text(r) == "Unknown tool: no_such_tool"


def test_info(ws):
    with server(ws) as c:
        assert call(c, "get_pdf_info", {"pdf_file_path": "doc.pdf"}) == (
            "PDF file information:\nTotal pages: 4\nTitle: Quarterly Report\nAuthor: Wang Lei\n"
            "Creator: Unknown\nCreation date: D:20250714230500+08'00'\n")
        # no Info dictionary: only the page count, as upstream's `if info:`
        assert call(c, "get_pdf_info", {"pdf_file_path": "noinfo.pdf"}) == \
            "PDF file information:\nTotal pages: 2\n"


def test_merge_and_extract(ws):
    with server(ws) as c:
        t = call(c, "merge_pdfs", {"pdf_paths": ["doc.pdf", "noinfo.pdf", "doc.pdf"],
                                   "output_path": "out/merged.pdf"})
        assert t == "Error merging PDFs: [Errno 2] No such file or directory: 'out/merged.pdf'"
        (ws / "out").mkdir()
        t = call(c, "merge_pdfs", {"pdf_paths": ["doc.pdf", "noinfo.pdf", "doc.pdf"],
                                   "output_path": "out/merged.pdf"})
        assert t == "Successfully merged 3 PDFs into 'out/merged.pdf'\nTotal pages: 10"
        m = pypdf.PdfReader(str(ws / "out" / "merged.pdf"))
        assert len(m.pages) == 10
        assert "beta" in m.pages[5].extract_text()
        # PyPDF2's PdfWriter gives what it writes {/Producer (PyPDF2)}, so upstream's
        # get_pdf_info prints its four metadata lines, all Unknown
        assert m.metadata == {"/Producer": "PyPDF2"}
        unknown = ("PDF file information:\nTotal pages: %d\nTitle: Unknown\nAuthor: Unknown\n"
                   "Creator: Unknown\nCreation date: Unknown\n")
        assert call(c, "get_pdf_info", {"pdf_file_path": "out/merged.pdf"}) == unknown % 10
        assert not [f for f in os.listdir(os.environ.get("TMPDIR", "/tmp"))
                    if f.startswith("mcpbox-pdfinfo-")]  # its temporary file is gone
        t = call(c, "merge_pdfs", {"pdf_paths": ["doc.pdf", "nope.pdf"], "output_path": "x.pdf"})
        assert t == "Error reading PDF 'nope.pdf': [Errno 2] No such file or directory: 'nope.pdf'"
        assert not (ws / "x.pdf").exists()

        t = call(c, "extract_pdf_pages", {"source_path": "doc.pdf", "page_numbers": [4, 1, 4, 9, 0],
                                          "output_path": "ext.pdf"})
        assert t == ("Successfully extracted 3 pages from 'doc.pdf' to 'ext.pdf'\n"
                     "Extracted pages: [4, 1, 4]\nSource PDF total pages: 4")
        e = pypdf.PdfReader(str(ws / "ext.pdf"))
        assert len(e.pages) == 3
        assert call(c, "get_pdf_info", {"pdf_file_path": "ext.pdf"}) == unknown % 3
        assert "Fourth page" in e.pages[0].extract_text()
        assert "Invoice number" in e.pages[1].extract_text()
        assert call(c, "extract_pdf_pages", {"source_path": "doc.pdf", "page_numbers": [7],
                                             "output_path": "e2.pdf"}) == \
            "Error: No valid pages to extract from PDF (total pages: 4)"
        assert call(c, "extract_pdf_pages", {"source_path": "nope.pdf", "page_numbers": [1],
                                             "output_path": "e2.pdf"}) == \
            "Error: File not found 'nope.pdf'"
        # the output may be one of the inputs
        t = call(c, "extract_pdf_pages", {"source_path": "ext.pdf", "page_numbers": "[2]",
                                          "output_path": "ext.pdf"})
        assert t.startswith("Successfully extracted 1 pages")
        assert len(pypdf.PdfReader(str(ws / "ext.pdf")).pages) == 1


def test_search_paging(ws):
    lines = ["needle %d here" % i for i in range(9)]
    (ws / "many.pdf").write_bytes(make_pdf([lines, lines, lines[:7]], compress=True))
    with server(ws) as c:
        assert call(c, "search_pdf_content", {"pdf_file_path": "many.pdf", "pattern": "zzz"}) == \
            "No matches found for pattern: zzz"
        assert call(c, "search_pdf_content", {"pdf_file_path": "many.pdf", "pattern": "(unclosed"}) == \
            "No matches found for pattern: (unclosed"
        assert call(c, "search_pdf_content", {"pdf_file_path": "nope.pdf", "pattern": "x"}) == \
            "Error: Could not extract text from PDF or PDF is empty"
        t = call(c, "search_pdf_content", {"pdf_file_path": "many.pdf", "pattern": r"NEEDLE \d+"})
        sid = re.match(r"Search ID: ([0-9a-f]{8})\n", t).group(1)
        assert t.startswith("Search ID: %s\nPattern: NEEDLE \\d+\nTotal matches: 25\nPage: 1/3\n"
                            "Results per page: 10\n\nMatch 1:\n  Page: 1\n  Text: \"needle 0\"\n"
                            "  Context: ...[needle 0] here" % sid)
        assert t.endswith("...\n\nUse search_pdf_next_page, search_pdf_prev_page, or "
                          "search_pdf_go_page with search_id '%s' to navigate." % sid)
        assert re.findall(r"Match (\d+):", t) == [str(i) for i in range(1, 11)]

        def page(text):
            return re.search(r"\nPage: (\d+/\d+)\n", text).group(1), \
                [int(x) for x in re.findall(r"Match (\d+):", text)]

        t = call(c, "search_pdf_next_page", {"search_id": sid})
        assert t.startswith("Search ID: %s\nPattern: NEEDLE \\d+\nTotal matches: 25\nPage: 2/3\n\n"
                            "Match 11:\n  Page: 2\n  Text: \"needle 1\"" % sid)
        assert page(t) == ("2/3", list(range(11, 21)))
        t = call(c, "search_pdf_next_page", {"search_id": sid})
        assert page(t) == ("3/3", list(range(21, 26)))
        assert "  Page: 3\n" in t
        assert call(c, "search_pdf_next_page", {"search_id": sid}) == "Already on last page (3/3)"
        assert page(call(c, "search_pdf_prev_page", {"search_id": sid})) == ("2/3", list(range(11, 21)))
        assert page(call(c, "search_pdf_go_page", {"search_id": sid, "page_number": 1})) == \
            ("1/3", list(range(1, 11)))
        assert call(c, "search_pdf_prev_page", {"search_id": sid}) == "Already on first page (1)"
        assert call(c, "search_pdf_go_page", {"search_id": sid, "page_number": 4}) == \
            "Error: Page number 4 is out of range (1-3)"
        assert call(c, "search_pdf_go_page", {"search_id": sid, "page_number": 0}) == \
            "Error: Page number 0 is out of range (1-3)"
        info = call(c, "search_pdf_info", {"search_id": sid})
        assert re.fullmatch(
            r"Search Session Information:\nSearch ID: %s\nPDF Path: many.pdf\nPattern: NEEDLE \\d\+\n"
            r"Total matches: 25\nCurrent page: 1/3\nResults per page: 10\n"
            r"Last accessed: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\n" % sid, info), info
        for tool in ("search_pdf_next_page", "search_pdf_prev_page", "search_pdf_info"):
            assert call(c, tool, {"search_id": "deadbeef"}) == \
                "Error: Search session 'deadbeef' not found or expired"
        assert call(c, "search_pdf_go_page", {"search_id": "nope", "page_number": 1}) == \
            "Error: Search session 'nope' not found or expired"
        # page_size outside 10..50: the warning and 10
        t = call(c, "search_pdf_content", {"pdf_file_path": "many.pdf", "pattern": "needle",
                                           "page_size": 5})
        assert t.startswith("Warning: Page size 5 is out of range (10-50). Using default value 10.\n"
                            "Search ID: ")
        assert "Results per page: 10\n" in t
        t = call(c, "search_pdf_content", {"pdf_file_path": "many.pdf", "pattern": "needle",
                                           "page_size": 30})
        assert "Page: 1/1\nResults per page: 30\n" in t and "to navigate" not in t
        assert re.findall(r"Match (\d+):", t) == [str(i) for i in range(1, 26)]


def test_search_python_re_semantics(ws):
    (ws / "re.pdf").write_bytes(make_pdf([["Total: 12.50", "total: 7", "CAFE au lait"]]))
    with server(ws) as c:
        t = call(c, "search_pdf_content", {"pdf_file_path": "re.pdf", "pattern": r"^total"})
        assert "Total matches: 2\n" in t  # IGNORECASE | MULTILINE
        t = call(c, "search_pdf_content", {"pdf_file_path": "re.pdf", "pattern": r"(?P<n>\d+)\.\d\d"})
        assert "Total matches: 1\n" in t and 'Text: "12.50"' in t
        t = call(c, "search_pdf_content", {"pdf_file_path": "re.pdf", "pattern": r"x*"})
        # finditer's empty matches: one per position, as Python
        ref = pypdf.PdfReader(str(ws / "re.pdf")).pages[0].extract_text()
        n = int(re.search(r"Total matches: (\d+)", t).group(1))
        assert n == len(call(c, "read_pdf_pages", {"pdf_file_path": "re.pdf"})
                        .split("=== Page 1 ===\n", 1)[1]) + 1
        assert n > len(norm(ref))


def test_url_input_without_network(ws):
    with server(ws) as c:
        t = call(c, "read_pdf_pages", {"pdf_file_path": "http://127.0.0.1:9/x.pdf"}, timeout=60)
        assert t.startswith("Error resolving path: Failed to download PDF from URL: "), t
        t = call(c, "merge_pdfs", {"pdf_paths": ["http://127.0.0.1:9/x.pdf"], "output_path": "m.pdf"},
                 timeout=60)
        assert t.startswith("Error resolving path 'http://127.0.0.1:9/x.pdf': Failed to download")


def test_hostile_files(ws):
    good = make_pdf([["hello world"]] * 3)
    (ws / "trunc.pdf").write_bytes(good[: len(good) // 2])
    (ws / "garbage.pdf").write_bytes(os.urandom(4096))
    (ws / "empty.pdf").write_bytes(b"")
    (ws / "count.pdf").write_bytes(make_pdf([["one page"]], count_override=2_000_000_000))
    # a text bomb: 2 KB of compressed content per page that shows ~50 KB of text, 120 pages
    body = b"".join(b"BT /F1 0.5 Tf 20 %d Td (" % (20 + i) + b"AB" * 60 + b") Tj ET\n"
                    for i in range(700))
    (ws / "bomb.pdf").write_bytes(make_pdf([["x"]] * 120, compress=True,
                                           raw_content=zlib.compress(body, 9), raw_all=True))
    # a zero bomb: ~1 GB of zeros behind 1 MB
    zeros = zlib.compressobj(9)
    blob = b"".join(zeros.compress(b"\0" * (1 << 24)) for _ in range(64)) + zeros.flush()
    (ws / "zeros.pdf").write_bytes(make_pdf([["x"]], compress=True, raw_content=blob))
    with server(ws, "--max-text", "4M", "--timeout", "20", "--memory-limit", "512M") as c:
        for name in ("trunc.pdf", "garbage.pdf", "empty.pdf", "count.pdf", "bomb.pdf", "zeros.pdf"):
            t0 = time.monotonic()
            for tool, args in (("read_pdf_pages", {"pdf_file_path": name, "end_page": 5}),
                               ("get_pdf_info", {"pdf_file_path": name}),
                               ("search_pdf_content", {"pdf_file_path": name, "pattern": "A+"}),
                               ("extract_pdf_pages", {"source_path": name, "page_numbers": [1],
                                                      "output_path": "h.pdf"}),
                               ("merge_pdfs", {"pdf_paths": [name], "output_path": "h.pdf"})):
                t = call(c, tool, args, timeout=120)
                assert t, (name, tool)
            assert time.monotonic() - t0 < 150
        t = call(c, "read_pdf_pages", {"pdf_file_path": "garbage.pdf"})
        assert t.startswith("Error processing PDF: "), t
        assert call(c, "get_pdf_info", {"pdf_file_path": "garbage.pdf"}).startswith(
            "Error getting PDF information: ")
        assert call(c, "search_pdf_content", {"pdf_file_path": "garbage.pdf", "pattern": "a"}) == \
            "Error: Could not extract text from PDF or PDF is empty"
        assert call(c, "merge_pdfs", {"pdf_paths": ["garbage.pdf"], "output_path": "h.pdf"}) \
            .startswith("Error reading PDF 'garbage.pdf': ")
        assert call(c, "extract_pdf_pages", {"source_path": "garbage.pdf", "page_numbers": [1],
                                             "output_path": "h.pdf"}).startswith("Error extracting pages: ")
        t = call(c, "read_pdf_pages", {"pdf_file_path": "bomb.pdf", "end_page": 120})
        assert t.startswith("Warning: Reading more than 50 pages")
        assert t.endswith("\nError processing PDF: the output of pdftotext exceeds 4194304 bytes and "
                          "was stopped"), t[:300]
        assert call(c, "search_pdf_content", {"pdf_file_path": "bomb.pdf", "pattern": "AB"}) == \
            "Error: Could not extract text from PDF or PDF is empty"
        t = call(c, "read_pdf_pages", {"pdf_file_path": "bomb.pdf", "start_page": 7, "end_page": 7})
        assert t.startswith("PDF total pages: 120\nExtracted page range: 7-7\n\n=== Page 7 ===\nABAB")
        # still serving
        assert call(c, "get_pdf_info", {"pdf_file_path": "doc.pdf"}).startswith(
            "PDF file information:\nTotal pages: 4\n")


@pytest.mark.skipif(not os.path.exists(BILLS), reason="bench-data (Toolathlon bills) not present")
def test_toolathlon_receipts_match_pypdf(tmp_path):
    root = tmp_path / "data"
    (root / "bills").mkdir(parents=True)
    with tarfile.open(BILLS) as tar:
        names = []
        for m in tar.getmembers():
            base = os.path.basename(m.name)
            if m.isfile() and base.endswith(".pdf"):  # plain files only, flattened
                (root / "bills" / base).write_bytes(tar.extractfile(m).read())
                names.append(base)
    names.sort()
    assert len(names) >= 10
    with server(root) as c:
        for name in names:
            rel = "bills/" + name
            ref = pypdf.PdfReader(str(root / rel))
            t = call(c, "read_pdf_pages", {"pdf_file_path": rel, "end_page": len(ref.pages)})
            assert t.startswith("PDF total pages: %d\n" % len(ref.pages)), t
            got = pages_of(t)
            for i, page in enumerate(ref.pages, 1):
                want = page.extract_text()
                if want.strip():
                    assert norm(got[i]) == norm(want), (name, i)
            info = call(c, "get_pdf_info", {"pdf_file_path": rel})
            md = ref.metadata
            assert info.startswith("PDF file information:\nTotal pages: %d\n" % len(ref.pages))
            if md:
                assert "Title: %s\nAuthor: %s\nCreator: %s\nCreation date: %s\n" % (
                    md.get("/Title", "Unknown"), md.get("/Author", "Unknown"),
                    md.get("/Creator", "Unknown"), md.get("/CreationDate", "Unknown")) in info
        # the amounts an agent looks for
        t = call(c, "search_pdf_content", {"pdf_file_path": "bills/" + names[0],
                                           "pattern": r"CNY\s*[\d.]+"})
        assert "Total matches: " in t and "Text: \"CNY" in t
