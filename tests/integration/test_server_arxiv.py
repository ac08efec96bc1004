"""`mcpbox mcp arxiv` (blazickjp/arxiv-mcp-server 0.2.11 for MCP-Atlas, 0.2.10 for Toolathlon)
over stdio, answered from an offline catalog that `mcpbox arxiv import` builds here from
synthetic papers (metadata in the Kaggle/OAI snapshot format, markdown, PDFs made by
test_server_pdftools.make_pdf). Never real arXiv data, never the network: online mode is
driven against a fake arXiv API + PDF host (and HTTP proxy) that this file starts on
127.0.0.1.

Expected texts follow upstream's tools/*.py at 6d3419a (0.2.11) and c29796a (0.2.10):
json.dumps(..., indent=2) for search/list, json.dumps(...) for download/read, the arxiv
package's Result fields (id with version, published isoformat, http://arxiv.org links)."""
import json
import shutil
import os
import socket
import subprocess
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import MCPBOX_BIN
from test_server_pdftools import Checked, make_pdf

HERE = os.path.dirname(__file__)
ATLAS_TASKS = os.path.join(HERE, "..", "..", "..", "shared", "bench-data", "mcp-atlas",
                           "sample_tasks.json")
NO_PROXY_ENV = {"http_proxy": "", "https_proxy": "", "HTTP_PROXY": "", "HTTPS_PROXY": "",
                "ARXIV_ONLINE": "", "ARXIV_CATALOG": "", "TZ": "UTC"}

# ------------------------------------------------------------------ the synthetic papers

def rfc(ts):
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%a, %-d %b %Y %H:%M:%S GMT")


def ts(s):
    return int(datetime.fromisoformat(s).replace(tzinfo=timezone.utc).timestamp())


# id, title, abstract, authors_parsed, categories, version dates, doi
PAPERS = [
    ("2401.00001", "Quantum Error Correction with\n  Surface Codes",
     "  We study surface codes for fault tolerant quantum memories.\n",
     [["Quantum", "Alice", ""], ["Bal\\'azs", "C.", ""]], "quant-ph cs.IT",
     ["2024-01-02T03:04:05", "2024-02-01T10:00:00"], "10.1000/qec"),
    ("2405.22222", "Transformer Networks for Quantum Chemistry",
     "Attention meets molecules and quantum chemistry.", [["Smith", "Jane", ""]],
     "physics.chem-ph cs.LG", ["2024-05-25T12:00:00"], None),
    ("2405.11111", "Attention Mechanisms in Transformer Networks",
     "Self-attention is all you need, again.", [["Maestro", "Adrian Del", ""]],
     "cs.CL cs.LG", ["2024-05-20T08:00:00"], None),
    ("2312.09999", "Surface Plasmons in Graphene",
     "Plasmonic surface waves, no codes involved.", [["Kim", "Min", ""]],
     "cond-mat.mes-hall", ["2023-12-15T09:30:00"], None),
    ("2002.00001", "Graph Neural Networks: A Survey", "Graphs everywhere.",
     [["Zhou", "Jie", ""]], "cs.LG", ["2020-02-01T00:00:00"], "10.1000/gnn"),
    ("hep-th/9901001", "String Dualities", "Old quantum strings.",
     None, "hep-th", ["1999-01-04T00:00:00"], None),
]
# 60 more, one an hour, to exercise max_results and its cap of 50
for k in range(60):
    PAPERS.append(("2403.%05d" % (k + 1), "Benchmark Paper %d on Widgets" % k,
                   "Widgets number %d." % k, [["Author%d" % k, "Bob", ""]], "cs.DB",
                   ["2024-03-%02dT%02d:00:00" % (1 + k // 24, k % 24)],
                   None))


def snapshot_line(p):
    pid, title, abstract, authors, cats, versions, doi = p
    rec = {"id": pid, "submitter": "x", "title": title, "abstract": abstract,
           "categories": cats, "comments": None, "journal-ref": None, "doi": doi,
           "versions": [{"version": "v%d" % (i + 1), "created": rfc(ts(v))}
                        for i, v in enumerate(versions)],
           "update_date": versions[-1][:10]}
    if authors:
        rec["authors_parsed"] = authors
        rec["authors"] = " and ".join("%s %s" % (a[1], a[0]) for a in authors)
    else:
        rec["authors"] = "E. Witten and J. Polchinski"
    return json.dumps(rec)


def author_names(p):
    if not p[3]:
        return ["E. Witten", "J. Polchinski"]
    return [("%s %s" % (a[1], a[0])).replace("Bal\\'azs", "Bal\u00e1zs") for a in p[3]]


def expected_paper(pid):
    """search_papers' _process_paper() of a catalog paper."""
    p = next(x for x in PAPERS if x[0] == pid)
    sid = "%sv%d" % (pid, len(p[5]))
    return {"id": sid, "title": " ".join(p[1].split()), "authors": author_names(p),
            "abstract": p[2].strip(), "categories": p[4].split(),
            "published": datetime.fromtimestamp(ts(p[5][0]), timezone.utc).isoformat(),
            "url": "http://arxiv.org/pdf/" + sid, "resource_uri": "arxiv://" + sid}


def search_text(ids):
    return json.dumps({"total_results": len(ids), "papers": [expected_paper(i) for i in ids]},
                      indent=2)


MD_2401 = "# Quantum Error Correction\n\nSurface codes, pre-converted.\n"
PDF_PAGES = [["Attention Mechanisms", "in Transformer Networks"], ["Second page text"]]


def mcpbox(*args, **kw):
    return subprocess.run([MCPBOX_BIN, *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **NO_PROXY_ENV), **kw)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    root = tmp_path_factory.mktemp("arxiv")
    meta = root / "meta.jsonl"
    lines = [snapshot_line(p) for p in PAPERS]
    lines.insert(3, "{not json")
    lines.insert(5, json.dumps({"id": "nonsense", "title": "x"}))
    meta.write_text("\n".join(lines) + "\n")
    md = root / "md"
    (md / "sub").mkdir(parents=True)
    (md / "sub" / "2401.00001v2.md").write_text(MD_2401)
    (md / "README.txt").write_text("not markdown")
    (md / "notanid.md").write_text("skipped")
    pdf = root / "pdf"
    pdf.mkdir()
    (pdf / "2405.11111v1.pdf").write_bytes(make_pdf(PDF_PAGES))
    (pdf / "hep-th_9901001v1.pdf").write_bytes(make_pdf([["String dualities"]]))
    (pdf / "2312.09999v1.pdf").write_bytes(b"%PDF-1.4 this is not a PDF at all")
    (pdf / "2401.00001.pdf").write_bytes(make_pdf([["Surface codes PDF"]]))
    cat = root / "catalog"
    r = mcpbox("arxiv", "import", "--catalog", str(cat), "--metadata", str(meta),
               "--md-dir", str(md), "--pdf-dir", str(pdf))
    assert r.returncode == 0, r.stderr
    assert "%s: %d imported, 2 skipped" % (meta, len(PAPERS)) in r.stderr, r.stderr
    assert "md: 1 imported, 1 skipped" in r.stderr, r.stderr
    assert "holds %d papers" % len(PAPERS) in r.stderr
    return cat


def server(catalog, storage, *extra, env=None):
    argv = [MCPBOX_BIN, "mcp", "arxiv", "--catalog", str(catalog), "--storage-path",
            str(storage), *extra]
    c = Checked(argv, env=dict(NO_PROXY_ENV, **(env or {})))
    c.initialize()
    return c


def call(c, name, args):
    res = c.call(name, args)
    return Checked.text(res)


# ------------------------------------------------------------------------- the tests

UPSTREAM_TOOLS = [
    {"name": "search_papers", "description": "Search for papers on arXiv with advanced filtering",
     "inputSchema": {"type": "object", "properties": {
         "query": {"type": "string"}, "max_results": {"type": "integer"},
         "date_from": {"type": "string"}, "date_to": {"type": "string"},
         "categories": {"type": "array", "items": {"type": "string"}}},
         "required": ["query"]}},
    {"name": "download_paper", "description": "Download a paper and create a resource for it",
     "inputSchema": {"type": "object", "properties": {
         "paper_id": {"type": "string", "description": "The arXiv ID of the paper to download"},
         "check_status": {"type": "boolean", "description":
                          "If true, only check conversion status without downloading",
                          "default": False}},
         "required": ["paper_id"]}},
    {"name": "list_papers", "description": "List all existing papers available as resources",
     "inputSchema": {"type": "object", "properties": {}, "required": []}},
    {"name": "read_paper",
     "description": "Read the full content of a stored paper in markdown format",
     "inputSchema": {"type": "object", "properties": {
         "paper_id": {"type": "string", "description": "The arXiv ID of the paper to read"}},
         "required": ["paper_id"]}},
]


@pytest.mark.parametrize("version", ["0.2.11", "0.2.10"])
def test_tools_list_and_server_info(catalog, tmp_path, version):
    extra = [] if version == "0.2.11" else ["--upstream-version", "0.2.10"]
    argv = [MCPBOX_BIN, "mcp", "arxiv", "--catalog", str(catalog), "--storage-path",
            str(tmp_path / "s"), *extra]
    with Checked(argv, env=NO_PROXY_ENV) as c:
        info = c.initialize()
        assert info["serverInfo"] == {"name": "arxiv-mcp-server", "version": version}
        tools = c.list_tools()
        assert [{k: t[k] for k in ("name", "description", "inputSchema")} for t in tools] \
            == UPSTREAM_TOOLS
        # MCP-Atlas enables it under the Klavis name arxiv_<tool>
        if os.path.exists(ATLAS_TASKS):
            with open(ATLAS_TASKS) as f:
                enabled = {t for task in json.load(f) for t in task["enabled_tools"]
                           if t.startswith("arxiv_")}
            assert enabled and enabled <= {"arxiv_" + t["name"] for t in tools}
        res = c.call("nope", {})
        assert Checked.text(res) == "Error: Unknown tool nope"


def test_search_texts_order_and_rewriting(catalog, tmp_path):
    with server(catalog, tmp_path / "s") as c:
        # plain words: all:w1 AND all:w2 (0.2.11), newest first
        assert call(c, "search_papers", {"query": "quantum"}) == \
            search_text(["2405.22222", "2401.00001", "hep-th/9901001"])
        plain = call(c, "search_papers", {"query": "surface codes"})
        assert plain == call(c, "search_papers", {"query": "all:surface AND all:codes"})
        # "no codes involved" matches too: all: is every field
        assert plain == search_text(["2401.00001", "2312.09999"])
        assert call(c, "search_papers", {"query": "transformer chemistry"}) == \
            search_text(["2405.22222"])
        # a quote: all:<query> as is
        assert call(c, "search_papers", {"query": '"quantum chemistry"'}) == \
            search_text(["2405.22222"])
        # a field prefix anywhere: no rewriting (so adjacency is OR, as Lucene's default)
        assert call(c, "search_papers", {"query": "ti:transformer chemistry"}) == \
            search_text(["2405.22222", "2405.11111"])
        assert call(c, "search_papers", {"query": "au:del_maestro"}) == search_text(["2405.11111"])
        assert call(c, "search_papers", {"query": "ti:quantum ANDNOT ti:chemistry"}) == \
            search_text(["2401.00001"])
        assert call(c, "search_papers", {"query": "ti:(graph OR string)"}) == \
            search_text(["2002.00001", "hep-th/9901001"])
        # categories OR-ed, then AND-ed with the query
        assert call(c, "search_papers", {"query": "networks",
                                         "categories": ["cs.CL", "physics.chem-ph"]}) == \
            search_text(["2405.22222", "2405.11111"])
        assert call(c, "search_papers", {"query": "networks", "categories": ["cs.LG"]}) == \
            search_text(["2405.22222", "2405.11111", "2002.00001"])
        # old-style ids keep their archive; Witten's authors string is split on "and"
        assert call(c, "search_papers", {"query": "au:witten"}) == search_text(["hep-th/9901001"])
        # nothing / stop words only
        assert call(c, "search_papers", {"query": "the"}) == \
            json.dumps({"total_results": 0, "papers": []}, indent=2)


def test_search_max_results_and_dates(catalog, tmp_path):
    widgets = sorted((p for p in PAPERS if p[4] == "cs.DB"), key=lambda p: p[5][0],
                     reverse=True)
    with server(catalog, tmp_path / "s") as c:
        assert call(c, "search_papers", {"query": "widgets"}) == \
            search_text([p[0] for p in widgets[:10]])
        assert call(c, "search_papers", {"query": "widgets", "max_results": 3}) == \
            search_text([p[0] for p in widgets[:3]])
        got = json.loads(call(c, "search_papers", {"query": "widgets", "max_results": 500}))
        assert got["total_results"] == 50  # settings.MAX_RESULTS
        # dates filter the fetched page client-side on `published`
        got = json.loads(call(c, "search_papers", {"query": "cat:cs.LG OR cat:quant-ph",
                                                   "date_from": "2024-01-01",
                                                   "date_to": "2024-05-21"}))
        assert [p["id"] for p in got["papers"]] == ["2405.11111v1", "2401.00001v2"]
        got = json.loads(call(c, "search_papers", {"query": "quantum", "date_to": "2000"}))
        assert [p["id"] for p in got["papers"]] == ["hep-th/9901001v1"]
        # bounds are inclusive, to the second; the zone is replaced by UTC
        got = json.loads(call(c, "search_papers", {"query": "quantum",
                                                   "date_from": "2024-01-02T03:04:05+09:00",
                                                   "date_to": "January 2, 2024 03:04:05"}))
        assert [p["id"] for p in got["papers"]] == ["2401.00001v2"]
        assert call(c, "search_papers", {"query": "quantum", "date_from": "yesterday"}) == \
            "Error: Invalid date format - Unknown string format: yesterday"
        assert call(c, "search_papers", {"query": "quantum", "date_to": "2024-02-30"}) == \
            "Error: Invalid date format - day is out of range for month: 2024-02-30"
        # the grammar's own date ranges
        got = json.loads(call(c, "search_papers",
                              {"query": "cat:cs.LG AND submittedDate:[202401010000 TO 202405202359]"}))
        assert [p["id"] for p in got["papers"]] == ["2405.11111v1"]
        # schema errors come from the SDK's validation, before upstream's handler
        res = c.call("search_papers", {"query": 5})
        assert res.get("isError") and "Input validation error" in Checked.text(res)
        res = c.call("search_papers", {})
        assert res.get("isError") and "'query' is a required property" in Checked.text(res)


def wait_status(c, pid, want="success", timeout=30):
    deadline = time.time() + timeout
    while True:
        st = json.loads(call(c, "download_paper", {"paper_id": pid, "check_status": True}))
        if st["status"] == want or time.time() > deadline:
            return st
        time.sleep(0.1)


def test_download_and_read_round_trip(catalog, tmp_path):
    storage = tmp_path / "store"
    with server(catalog, storage) as c:
        assert call(c, "list_papers", {}) == json.dumps({"total_papers": 0, "papers": []},
                                                         indent=2)
        assert call(c, "read_paper", {"paper_id": "2401.00001"}) == json.dumps(
            {"status": "error", "message": "Paper 2401.00001 not found in storage. You may need "
             "to download it first using download_paper."})
        assert json.loads(call(c, "download_paper", {"paper_id": "2401.00001",
                                                     "check_status": True})) == \
            {"status": "unknown", "message": "No download or conversion in progress"}

        # pre-converted markdown: converting, then success
        first = json.loads(call(c, "download_paper", {"paper_id": "2401.00001"}))
        assert list(first) == ["status", "message", "started_at"]
        assert first["status"] == "converting"
        assert first["message"] == "Paper downloaded, conversion started"
        datetime.fromisoformat(first["started_at"])
        st = wait_status(c, "2401.00001")
        assert list(st) == ["status", "started_at", "completed_at", "error", "message"]
        assert st["status"] == "success" and st["error"] is None
        assert st["message"] == "Paper conversion success"
        md_path = os.path.realpath(storage) + "/2401.00001.md"
        assert call(c, "download_paper", {"paper_id": "2401.00001"}) == json.dumps(
            {"status": "success", "message": "Paper already available",
             "resource_uri": "file://" + md_path})
        # the PDF is kept beside it (upstream >= 0.2.10 no longer unlinks it)
        assert (storage / "2401.00001.pdf").read_bytes().startswith(b"%PDF")
        assert call(c, "read_paper", {"paper_id": "2401.00001"}) == json.dumps(
            {"status": "success", "paper_id": "2401.00001", "content": MD_2401})

        # PDF only: converted with poppler, pages separated by a rule
        assert json.loads(call(c, "download_paper",
                               {"paper_id": "2405.11111v1"}))["status"] == "converting"
        assert wait_status(c, "2405.11111v1")["status"] == "success"
        content = json.loads(call(c, "read_paper", {"paper_id": "2405.11111v1"}))["content"]
        assert content == ("Attention Mechanisms\nin Transformer Networks\n\n-----\n\n"
                           "Second page text\n\n-----\n\n")

        # a broken PDF: the conversion fails, the status says why
        assert json.loads(call(c, "download_paper",
                               {"paper_id": "2312.09999"}))["status"] == "converting"
        st = wait_status(c, "2312.09999", want="error")
        assert st["status"] == "error" and st["error"] and st["completed_at"]
        assert st["message"] == "Paper conversion error"
        # ...and a later download repeats the status (upstream keeps it per process)
        again = json.loads(call(c, "download_paper", {"paper_id": "2312.09999"}))
        assert again["status"] == "error" and again["message"] == "Paper conversion error"
        # old-style ids: <storage>/hep-th/9901001.pdf, whose directory does not exist
        assert call(c, "download_paper", {"paper_id": "hep-th/9901001"}) == json.dumps(
            {"status": "error", "message": "Error: [Errno 2] No such file or directory: '%s'"
             % (os.path.realpath(storage) + "/hep-th/9901001.pdf")})

        # unknown id / a version the catalog does not have / no PDF offline
        assert call(c, "download_paper", {"paper_id": "9999.99999"}) == json.dumps(
            {"status": "error", "message": "Paper 9999.99999 not found on arXiv"})
        assert call(c, "download_paper", {"paper_id": "2401.00001v7"}) == json.dumps(
            {"status": "error", "message": "Paper 2401.00001v7 not found on arXiv"})
        # upstream's status table keeps the failed download as "downloading"
        assert json.loads(call(c, "download_paper", {"paper_id": "9999.99999",
                                                     "check_status": True}))["status"] == \
            "downloading"
        nopdf = json.loads(call(c, "download_paper", {"paper_id": "2002.00001"}))
        assert nopdf["status"] == "error" and "online mode is off" in nopdf["message"]
        # ids that are no arXiv ids are the API's HTTP 400
        bad = json.loads(call(c, "download_paper", {"paper_id": "../../etc/passwd"}))
        assert bad == {"status": "error", "message": "Error: Page request resulted in HTTP 400 "
                       "(https://export.arxiv.org/api/query?search_query=&id_list=..%2F..%2Fetc"
                       "%2Fpasswd&sortBy=relevance&sortOrder=descending&start=0&max_results=100)"}
        assert not os.path.exists(tmp_path / "etc")
        assert json.loads(call(c, "read_paper", {"paper_id": "../store/2401.00001"}))[
            "status"] == "error"

        # list_papers: every stored markdown, with the arxiv package's fields
        got = json.loads(call(c, "list_papers", {}))
        assert got["total_papers"] == 2
        by_title = {p["title"]: p for p in got["papers"]}
        assert by_title["Quantum Error Correction with Surface Codes"] == {
            "title": "Quantum Error Correction with Surface Codes",
            "summary": "We study surface codes for fault tolerant quantum memories.",
            "authors": ["Alice Quantum", "C. Bal\u00e1zs"],
            "links": ["http://dx.doi.org/10.1000/qec", "http://arxiv.org/abs/2401.00001v2",
                      "http://arxiv.org/pdf/2401.00001v2"],
            "pdf_url": "http://arxiv.org/pdf/2401.00001v2"}
        assert "Attention Mechanisms in Transformer Networks" in by_title

    # a new process: the markdown on disk is what counts
    with server(catalog, storage) as c:
        assert json.loads(call(c, "download_paper", {"paper_id": "2405.11111v1",
                                                     "check_status": True}))["message"] == \
            "Paper is ready"


def test_toolathlon_storage_and_0_2_10(catalog, tmp_path):
    data = tmp_path / "data"
    with server(catalog, data / "arxiv_local_storage", "--upstream-version", "0.2.10") as c:
        # like upstream's STORAGE_PATH property: made on first use, not at start
        call(c, "search_papers", {"query": "quantum"})
        assert not (data / "arxiv_local_storage").exists()
        call(c, "list_papers", {})
        assert (data / "arxiv_local_storage").is_dir()
        # 0.2.10 sends plain queries as they are: adjacent words are OR-ed
        got = json.loads(call(c, "search_papers", {"query": "transformer chemistry"}))
        assert [p["id"] for p in got["papers"]] == ["2405.22222v1", "2405.11111v1"]
        call(c, "download_paper", {"paper_id": "2405.11111"})
        assert wait_status(c, "2405.11111")["status"] == "success"
        assert (data / "arxiv_local_storage" / "2405.11111.pdf").exists()
        assert (data / "arxiv_local_storage" / "2405.11111.md").exists()


def test_no_catalog_and_hostile_queries(catalog, tmp_path):
    with server(tmp_path / "none", tmp_path / "s") as c:
        text = call(c, "search_papers", {"query": "quantum"})
        assert text.startswith("Error: ") and "mcpbox arxiv import" in text
        assert call(c, "download_paper", {"paper_id": "2401.00001"}).startswith(
            '{"status": "error", "message": "Error: ')
    with server(catalog, tmp_path / "s") as c:
        for q in ["(" * 5000, ")" * 500 + "ti:x", "NOT " * 2000, '"' * 999, "ti:" * 1000,
                  "submittedDate:[", "cat:", "id:..", "all:*", "*", "a" * 100000,
                  "\u00e9t\u00e9 \u4e2d\u6587 \U0001F600", "x\u0000y", "ti:x AND (" * 300]:
            text = call(c, "search_papers", {"query": q})
            assert text.startswith('{\n  "total_results": ') or text.startswith("Error: "), \
                (q[:40], text[:200])
        got = json.loads(call(c, "search_papers", {"query": "\u00e9t\u00e9"}))
        assert got["total_results"] == 0


# --------------------------------------------------------------- online mode (fake arXiv)

def atom_entry(pid, v, title, summary, authors, cats, published, updated, doi=None):
    base = "http://arxiv.org/abs/%sv%d" % (pid, v)
    out = ["<entry>", "<id>%s</id>" % base, "<updated>%s</updated>" % updated,
           "<published>%s</published>" % published, "<title>%s</title>" % title,
           "<summary>%s</summary>" % summary]
    out += ["<author><name>%s</name></author>" % a for a in authors]
    if doi:
        out.append('<arxiv:doi xmlns:arxiv="http://arxiv.org/schemas/atom">%s</arxiv:doi>' % doi)
        out.append('<link title="doi" href="http://dx.doi.org/%s" rel="related"/>' % doi)
    out.append('<link href="%s" rel="alternate" type="text/html"/>' % base)
    out.append('<link title="pdf" href="http://arxiv.org/pdf/%sv%d" rel="related" '
               'type="application/pdf"/>' % (pid, v))
    out.append('<arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="%s" '
               'scheme="http://arxiv.org/schemas/atom"/>' % cats[0])
    out += ['<category term="%s" scheme="http://arxiv.org/schemas/atom"/>' % c for c in cats]
    out.append("</entry>")
    return "\n".join(out)


ONLINE = {
    "2507.00042": atom_entry("2507.00042", 3, "Online Only:\n  Fresh Paper", "\n  Fetched from "
                             "the fake API.\n", ["Ada Lovelace", "Alan Turing"],
                             ["cs.AI", "cs.LG"], "2025-07-01T12:00:00Z", "2025-07-09T12:00:00Z",
                             doi="10.9/fresh"),
    "2506.00007": atom_entry("2506.00007", 1, "Second Fresh Paper", "Also fetched.",
                             ["Grace Hopper"], ["cs.PL"], "2025-06-02T08:00:00Z",
                             "2025-06-02T08:00:00Z"),
}


def feed(entries):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
            '<title type="html">ArXiv Query</title><id>http://arxiv.org/api/x</id>'
            '<opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">%d'
            '</opensearch:totalResults>%s</feed>' % (len(entries), "".join(entries)))


class FakeArxiv(BaseHTTPRequestHandler):
    requests = []  # (monotonic time, host, path, query dict)

    def log_message(self, *a):
        pass

    def do_GET(self):
        u = urlsplit(self.path)  # absolute-form when used as a proxy
        host = u.netloc or self.headers.get("Host", "")
        q = parse_qs(u.query, keep_blank_values=True)
        FakeArxiv.requests.append((time.monotonic(), host, u.path, q))
        if u.path == "/api/query":
            if q.get("search_query") == ["all:broken"]:
                body = feed(['<entry><id>http://arxiv.org/api/errors#x</id><title>Error</title>'
                             '<summary>malformed query</summary></entry>'])
            elif q.get("id_list", [""])[0]:
                ids = q["id_list"][0].split(",")
                body = feed([ONLINE[i] for i in ids if i in ONLINE])
            else:
                body = feed(list(ONLINE.values()))
            self.reply(200, "application/atom+xml", body.encode())
        elif u.path == "/pdf/2507.00042v3":
            self.reply(200, "application/pdf", make_pdf([["Fresh paper body"]]))
        else:
            self.reply(404, "text/plain", b"not found")

    def reply(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def fake_arxiv():
    FakeArxiv.requests = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeArxiv)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield "http://127.0.0.1:%d" % srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def test_online_mode_fetches_and_keeps(fake_arxiv, tmp_path):
    cat = tmp_path / "catalog"
    storage = tmp_path / "store"
    online = ["--online", "--api-url", fake_arxiv + "/api/query", "--pdf-url",
              fake_arxiv + "/pdf/", "--request-delay", "0.3"]
    with server(cat, storage, *online) as c:
        got = json.loads(call(c, "search_papers", {"query": "fresh paper", "max_results": 5}))
        assert [p["id"] for p in got["papers"]] == ["2507.00042v3", "2506.00007v1"]
        assert got["papers"][0] == {
            "id": "2507.00042v3", "title": "Online Only: Fresh Paper",
            "authors": ["Ada Lovelace", "Alan Turing"], "abstract": "Fetched from the fake API.",
            "categories": ["cs.AI", "cs.LG"], "published": "2025-07-01T12:00:00+00:00",
            "url": "http://arxiv.org/pdf/2507.00042v3", "resource_uri": "arxiv://2507.00042v3"}
        _, host, path, q = FakeArxiv.requests[0]
        assert path == "/api/query"
        assert q == {"search_query": ["all:fresh AND all:paper"], "id_list": [""],
                     "sortBy": ["submittedDate"], "sortOrder": ["descending"], "start": ["0"],
                     "max_results": ["5"]}
        # an API error entry: answered from the catalog (which lacks such papers)
        assert call(c, "search_papers", {"query": "all:broken"}) == \
            json.dumps({"total_results": 0, "papers": []}, indent=2)
        assert "arXiv API error: malformed query" in c.stderr()
        # download: the id is looked up, then the PDF fetched and converted
        assert json.loads(call(c, "download_paper", {"paper_id": "2507.00042"}))["status"] == \
            "converting"
        assert wait_status(c, "2507.00042")["status"] == "success"
        assert json.loads(call(c, "read_paper", {"paper_id": "2507.00042"}))["content"] == \
            "Fresh paper body\n\n-----\n\n"
        assert any(p == "/pdf/2507.00042v3" for _, _, p, _ in FakeArxiv.requests)
        # unknown at arXiv too
        assert call(c, "download_paper", {"paper_id": "2501.99999"}) == json.dumps(
            {"status": "error", "message": "Paper 2501.99999 not found on arXiv"})
        # arXiv's rate rule: requests are spaced by the delay
        times = [t for t, _, _, _ in FakeArxiv.requests]
        assert all(b - a >= 0.29 for a, b in zip(times, times[1:])), times
    n = len(FakeArxiv.requests)

    # a second run offline: the catalog kept what was fetched (metadata and the PDF)
    with server(cat, tmp_path / "store2") as c:
        got = json.loads(call(c, "search_papers", {"query": "fresh"}))
        assert [p["id"] for p in got["papers"]] == ["2507.00042v3", "2506.00007v1"]
        call(c, "download_paper", {"paper_id": "2507.00042v3"})
        assert wait_status(c, "2507.00042v3")["status"] == "success"
        assert json.loads(call(c, "read_paper", {"paper_id": "2507.00042v3"}))["content"] == \
            "Fresh paper body\n\n-----\n\n"
    assert len(FakeArxiv.requests) == n
    r = mcpbox("arxiv", "search", "--catalog", str(cat), "au:lovelace")
    assert r.returncode == 0 and r.stdout.startswith("2507.00042v3\t2025-07-01T12:00:00+00:00\t")


def test_online_through_proxy(fake_arxiv, tmp_path):
    # the fake host doubles as an HTTP proxy: requests arrive in absolute form
    argv = ["--online", "--proxy", fake_arxiv, "--api-url",
            "http://export.arxiv.test/api/query", "--pdf-url", "http://arxiv.test/pdf/",
            "--request-delay", "0"]
    with server(tmp_path / "catalog", tmp_path / "s", *argv) as c:
        got = json.loads(call(c, "search_papers", {"query": "cat:cs.PL"}))
        assert got["total_results"] == 2  # the fake answers every search with both
        call(c, "download_paper", {"paper_id": "2507.00042"})
        assert wait_status(c, "2507.00042")["status"] == "success"
    hosts = [h for _, h, _, _ in FakeArxiv.requests]
    assert hosts[0] == "export.arxiv.test" and "arxiv.test" in hosts


class UnixHTTPServer(ThreadingHTTPServer):
    address_family = socket.AF_UNIX

    def server_bind(self):
        self.socket.bind(self.server_address)
        self.server_name, self.server_port = "egress", 0

    def get_request(self):
        conn, _ = self.socket.accept()
        return conn, ("egress", 0)


def test_online_through_the_daemons_egress_socket(tmp_path):
    # $MCPBOX_EGRESS_PROXY: a unix socket speaking HTTP proxy protocol (the daemon's
    # egress proxy); the server relays curl's proxy connections to it
    FakeArxiv.requests = []
    sock = str(tmp_path / "arxiv.sock")
    srv = UnixHTTPServer(sock, FakeArxiv)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        argv = ["--online", "--api-url", "http://export.arxiv.test/api/query", "--pdf-url",
                "http://arxiv.test/pdf/", "--request-delay", "0"]
        env = {"MCPBOX_EGRESS_PROXY": sock, "NO_PROXY": "*", "no_proxy": "*"}
        with server(tmp_path / "catalog", tmp_path / "s", *argv, env=env) as c:
            got = json.loads(call(c, "search_papers", {"query": "fresh"}))
            assert [p["id"] for p in got["papers"]] == ["2507.00042v3", "2506.00007v1"]
            call(c, "download_paper", {"paper_id": "2507.00042"})
            assert wait_status(c, "2507.00042")["status"] == "success"
        hosts = [h for _, h, _, _ in FakeArxiv.requests]
        assert hosts[0] == "export.arxiv.test" and "arxiv.test" in hosts
    finally:
        srv.shutdown()
        srv.server_close()
    # offline (the default), the socket is never used
    FakeArxiv.requests = []
    with server(tmp_path / "catalog", tmp_path / "s2", env={"MCPBOX_EGRESS_PROXY": sock}) as c:
        got = json.loads(call(c, "search_papers", {"query": "fresh"}))
        assert got["total_results"] == 2
    assert FakeArxiv.requests == []


def test_online_unreachable_falls_back_to_catalog(catalog, tmp_path):
    argv = ["--online", "--api-url", "http://127.0.0.1:9/api/query", "--request-delay", "0",
            "--timeout", "2"]
    # the catalog still answers while arXiv cannot be reached
    with server(catalog, tmp_path / "s", *argv) as c:
        assert call(c, "search_papers", {"query": "transformer chemistry"}) == \
            search_text(["2405.22222"])


# ----------------------------------------------------------- in sandboxes, through the daemon

ATLAS_REQUEST = ["filesystem", "git", "terminal", "desktop-commander", "arxiv", "code-executor",
                 "code-runner", "localmemory"]  # klavis_sandbox_client.py


def test_in_atlas_and_toolathlon_sandboxes(catalog, tmp_path):
    from conftest import Daemon, sweep_sandboxes
    from gwharness import REPO, Session, text_of
    import shutil
    profiles = tmp_path / "profiles"
    shutil.copytree(os.path.join(REPO, "profiles"), profiles)
    with open(profiles / "MCP_Atlas.json") as f:
        atlas = json.load(f)
    assert atlas["servers"]["arxiv"]["argv"] == ["${MCPBOX}", "mcp", "arxiv"]
    # how an operator shows a catalog to the sandboxes (docs/servers/arxiv.md)
    atlas["sandbox"]["binds"] = {"/srv/arxiv-catalog": str(catalog)}
    with open(profiles / "MCP_Atlas.json", "w") as f:
        json.dump(atlas, f)
    d = Daemon(str(tmp_path / "var"), ["--profiles-dir", str(profiles)]).start()
    try:
        with d.client() as api:
            # MCP-Atlas's exact request: every server the preset defines is ready
            r = api.post("/local-sandbox", json={"server_names": ATLAS_REQUEST,
                                                 "benchmark": "MCP_Atlas"})
            assert r.status_code == 201, r.text
            sb = r.json()
            assert [s["server_name"] for s in sb["servers"]] == ATLAS_REQUEST
            assert all(s["metadata"]["ready"] for s in sb["servers"]
                       if s["server_name"] in atlas["servers"]), sb
            assert "arxiv" in atlas["servers"]
            url = {s["server_name"]: s["mcp_server_url"] for s in sb["servers"]}["arxiv"]
            s = Session(url)
            assert s.init["result"]["serverInfo"] == {"name": "arxiv-mcp-server",
                                                      "version": "0.2.11"}
            assert text_of(s.call("search_papers", {"query": "quantum"})) == \
                search_text(["2405.22222", "2401.00001", "hep-th/9901001"])
            first = json.loads(text_of(s.call("download_paper", {"paper_id": "2405.11111"})))
            assert first["status"] == "converting", first
            deadline = time.time() + 30
            while time.time() < deadline:
                st = json.loads(text_of(s.call("download_paper", {"paper_id": "2405.11111",
                                                                  "check_status": True})))
                if st["status"] != "converting":
                    break
                time.sleep(0.1)
            assert st["status"] == "success", st
            # the default storage of Atlas's settings, ~/.arxiv-mcp-server/papers, with the
            # sandbox's home (/tmp: the sandbox has no /root)
            assert text_of(s.call("download_paper", {"paper_id": "2405.11111"})) == json.dumps(
                {"status": "success", "message": "Paper already available",
                 "resource_uri": "file:///tmp/.arxiv-mcp-server/papers/2405.11111.md"})
            got = json.loads(text_of(s.call("read_paper", {"paper_id": "2405.11111"})))
            assert got["content"].startswith("Attention Mechanisms\nin Transformer Networks")
            s.close()
            api.delete("/local-sandbox/" + sb["local_sandbox_id"])

            # Toolathlon: 0.2.10, storage in the workspace; no catalog shown: errors, not 404
            r = api.post("/local-sandbox", json={"server_names": ["arxiv"],
                                                 "benchmark": "Toolathlon"})
            assert r.status_code == 201, r.text
            sb = r.json()
            assert sb["servers"][0]["metadata"]["ready"], sb
            s = Session(sb["servers"][0]["mcp_server_url"])
            assert s.init["result"]["serverInfo"]["version"] == "0.2.10"
            text = text_of(s.call("search_papers", {"query": "quantum"}))
            assert text.startswith("Error: no arXiv catalog at /srv/arxiv-catalog/"), text
            got = json.loads(text_of(s.call("list_papers", {})))
            assert got == {"total_papers": 0, "papers": []}
            s.close()
            api.delete("/local-sandbox/" + sb["local_sandbox_id"])
    finally:
        d.stop()
        sweep_sandboxes(str(tmp_path))


def test_catalog_in_the_daemons_data_dir_with_the_shipped_profiles(catalog, tmp_path):
    """Out of the box: the shipped MCP_Atlas and Toolathlon profiles bind
    <--data-dir>/arxiv-catalog at /srv/arxiv-catalog. Before an operator builds it the
    tools say so (what the server is, the command to run); a catalog imported there is
    seen by the sandboxes acquired after, with no profile edit and no restart."""
    from conftest import Daemon, sweep_sandboxes
    from gwharness import Session, text_of
    var = tmp_path / "var"
    d = Daemon(str(var)).start()
    try:
        with d.client() as api:
            def search(benchmark):
                r = api.post("/local-sandbox", json={"server_names": ["arxiv"],
                                                     "benchmark": benchmark})
                assert r.status_code == 201, r.text
                sb = r.json()
                assert sb["servers"][0]["metadata"]["ready"], sb
                s = Session(sb["servers"][0]["mcp_server_url"])
                try:
                    return text_of(s.call("search_papers", {"query": "quantum"}))
                finally:
                    s.close()
                    api.delete("/local-sandbox/" + sb["local_sandbox_id"])
            text = search("MCP_Atlas")
            assert text.startswith("Error: no arXiv catalog at /srv/arxiv-catalog/catalog.sqlite: "
                                   "this server answers from an offline catalog"), text
            assert "(and online mode is off)" in text and \
                "mcpbox arxiv import --catalog <the daemon's --data-dir>/arxiv-catalog" in text, text
            # the operator builds the catalog where the profiles look (a copy of the
            # module's, made by `mcpbox arxiv import`)
            shutil.copytree(catalog, var / "arxiv-catalog")
            for bench in ("MCP_Atlas", "Toolathlon"):
                assert search(bench) == search_text(["2405.22222", "2401.00001",
                                                     "hep-th/9901001"]), bench
    finally:
        d.stop()
        sweep_sandboxes(str(tmp_path))
