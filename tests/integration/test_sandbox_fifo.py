"""A FIFO (or any blocking special file) an agent makes in /data must not
wedge the servers that open user paths (issue 12 item 10, the file half):
every read or write of one fails at once with ENXIO, worded as the upstream
runtime words it (Node: "ENXIO: no such device or address, open '...'",
Python: "[Errno 6] No such device or address: '...'"), and the server keeps
answering, a new session's tools/list included. The gateway half (a server
that still hangs is killed and restarted) is test_gateway_wedge.py."""
import time

import pytest

from gwharness import Session, text_of
from test_daemon_sandboxes import acquire, url_of

PROMPT = 5.0  # seconds; a wedged server would hang for the whole call timeout
SERVERS = ["filesystem", "excel", "pdf-tools", "localmemory", "code-executor"]


def timed_call(s, tool, args):
    t0 = time.time()
    r = s.call(tool, args)
    took = time.time() - t0
    assert took < PROMPT, f"{tool} took {took:.1f} s"
    if "error" in r:  # upstream memory throws: a JSON-RPC error
        return True, r["error"]["message"]
    return r["result"].get("isError", False), text_of(r)


def python(sb, code):
    s = Session(url_of(sb, "code-executor"))
    try:
        return text_of(s.call("python_execute", {"code": code}))
    finally:
        s.close()


@pytest.fixture
def fifo_sandbox(api):
    sb = acquire(api, SERVERS, benchmark="Toolathlon")
    out = python(sb, "import os\n"
                     "os.makedirs('/data/memory', exist_ok=True)\n"
                     "os.makedirs('/data/.python_tmp', exist_ok=True)\n"
                     "for p in ['/data/pipe.txt', '/data/pipe.xlsx', '/data/pipe.pdf',\n"
                     "          '/data/memory/memory.json', '/data/.python_tmp/piped.py']:\n"
                     "    os.mkfifo(p)\n"
                     "print('made', len([p for p in os.listdir('/data') if p.startswith('pipe')]))")
    assert "made 3" in out, out
    return sb


def test_fifo_in_data_wedges_no_server(fifo_sandbox):
    sb = fifo_sandbox
    node_enxio = "ENXIO: no such device or address, open '/data/pipe.txt'"

    fs = Session(url_of(sb, "filesystem"))
    for tool, args in [("read_file", {"path": "/data/pipe.txt"}),
                       ("read_file", {"path": "/data/pipe.txt", "head": 2}),
                       ("edit_file", {"path": "/data/pipe.txt",
                                      "edits": [{"oldText": "a", "newText": "b"}]})]:
        err, text = timed_call(fs, tool, args)
        assert err and node_enxio in text, (tool, args, text)
    # upstream's tailFile stats first and answers "" for a size of 0, a FIFO's
    err, text = timed_call(fs, "read_file", {"path": "/data/pipe.txt", "tail": 2})
    assert not err and text == "", text
    err, text = timed_call(fs, "read_multiple_files", {"paths": ["/data/pipe.txt"]})
    assert node_enxio in text, text
    err, text = timed_call(fs, "get_file_info", {"path": "/data/pipe.txt"})
    assert not err, text

    xl = Session(url_of(sb, "excel"))
    err, text = timed_call(xl, "read_data_from_excel",
                           {"filepath": "/data/pipe.xlsx", "sheet_name": "Sheet1"})
    assert "[Errno 6] No such device or address" in text, text

    pdf = Session(url_of(sb, "pdf-tools"))
    for tool, args in [("read_pdf_pages", {"pdf_file_path": "/data/pipe.pdf",
                                           "start_page": 1, "end_page": 1}),
                       ("get_pdf_info", {"pdf_file_path": "/data/pipe.pdf"})]:
        err, text = timed_call(pdf, tool, args)
        assert "[Errno 6] No such device or address" in text, (tool, text)
    # upstream's extract_all_text_from_pdf turns every failure into "no text"
    err, text = timed_call(pdf, "search_pdf_content", {"pdf_file_path": "/data/pipe.pdf",
                                                       "pattern": "x"})
    assert text == "Error: Could not extract text from PDF or PDF is empty", text

    mem = Session(url_of(sb, "localmemory"))
    err, text = timed_call(mem, "read_graph", {})
    assert err and "ENXIO: no such device or address, open '/data/memory/memory.json'" in text, \
        text

    ce = Session(url_of(sb, "code-executor"))
    err, text = timed_call(ce, "python_execute", {"code": "print(1)", "filename": "piped"})
    assert "[Errno 6] No such device or address: '/data/.python_tmp/piped.py'" in text, text

    # writes that replace the path (rename over it, as upstream does) succeed
    err, text = timed_call(fs, "write_file", {"path": "/data/pipe.txt", "content": "now a file"})
    assert not err, text
    err, text = timed_call(fs, "read_file", {"path": "/data/pipe.txt"})
    assert text == "now a file", text

    for s in (fs, xl, pdf, mem, ce):
        s.close()
    # every server still answers a new session at once
    for name in SERVERS:
        t0 = time.time()
        s = Session(url_of(sb, name))
        tools = s.result("tools/list")["result"]["tools"]
        s.close()
        assert tools and time.time() - t0 < PROMPT, name


def test_fifo_as_an_output_path_is_refused_at_once(fifo_sandbox):
    sb = fifo_sandbox
    pdf = Session(url_of(sb, "pdf-tools"))
    err, text = timed_call(pdf, "merge_pdfs", {"pdf_paths": ["/data/pipe.pdf"],
                                               "output_path": "/data/out.pdf"})
    assert "No such device or address" in text, text
    pdf.close()
    out = python(sb, "import stat, os\n"
                     "print('fifo' if stat.S_ISFIFO(os.lstat('/data/memory/memory.json').st_mode)"
                     " else 'replaced')")
    assert "fifo" in out, out
    mem = Session(url_of(sb, "localmemory"))
    err, text = timed_call(mem, "create_entities", {"entities": [
        {"name": "a", "entityType": "t", "observations": []}]})
    assert err and "ENXIO" in text, text
    mem.close()


def test_fifo_default_profile_servers(api):
    """The default profile's variants: filesystem 2026 (read_text_file,
    read_media_file), code-executor as MCP-Atlas runs it (read/append a code
    file) and code-runner, whose fixed temp file /tmp/tmp.python an agent can
    replace with a FIFO."""
    sb = acquire(api, ["filesystem", "code-executor", "code-runner"])
    cr = Session(url_of(sb, "code-runner"))
    err, text = timed_call(cr, "run-code", {"languageId": "python", "code": (
        "import os\n"
        "os.mkfifo('/data/pipe.py')\n"
        "os.unlink('/tmp/tmp.python'); os.mkfifo('/tmp/tmp.python')\n"
        "print('fifos made')")})
    assert "fifos made" in text, text
    err, text = timed_call(cr, "run-code", {"languageId": "python", "code": "print(1)"})
    assert err and "ENXIO: no such device or address, open '/tmp/tmp.python'" in text, text

    fs = Session(url_of(sb, "filesystem"))
    for tool in ("read_text_file", "read_media_file"):
        err, text = timed_call(fs, tool, {"path": "/data/pipe.py"})
        assert err and "ENXIO: no such device or address, open '/data/pipe.py'" in text, \
            (tool, text)

    ce = Session(url_of(sb, "code-executor"))
    for tool, args in [("read_code_file", {"file_path": "/data/pipe.py"}),
                       ("append_to_code_file", {"file_path": "/data/pipe.py",
                                                "content": "print(2)"})]:
        err, text = timed_call(ce, tool, args)
        assert "ENXIO: no such device or address" in text, (tool, text)
    for s in (cr, fs, ce):
        s.close()
    for name in ("filesystem", "code-executor", "code-runner"):
        s = Session(url_of(sb, name))
        assert s.result("tools/list")["result"]["tools"], name
        s.close()
