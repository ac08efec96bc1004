"""Toolathlon's ppt-analysis, done through the daemon's gateway with the
Toolathlon profile's powerpoint server (office-powerpoint-mcp-server 2.0.6).

The task: study Compile.pptx and write NOTE.md with the lecture's key points
and all of its code (the grader looks for the code snippets of
evaluation/code.md in NOTE.md). A scripted agent opens the deck in one MCP
session, reads it from a second session (presentations are shared by every
session of the sandbox, as upstream's process globals are), and writes the
slide texts the tools returned into NOTE.md with the filesystem server. The
check re-expresses the grader's snippet test on the dumped workspace and must
fail on a note that lacks a snippet."""
import io
import json
import os
import re
import tarfile

import httpx

from gwharness import Session, text_of

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "ppt-analysis")


def snippets():
    with open(os.path.join(DATA, "code.md"), encoding="utf-8") as f:
        return re.findall(r"```\n(.*?)```", f.read(), re.S)


def norm(s):
    return re.sub(r"\s+", "", s.replace("\v", "\n"))


def missing_snippets(note):
    n = norm(note)
    return [s for s in snippets() if norm(s) not in n]


def workspace_tar():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(os.path.join(DATA, "Compile.pptx"), arcname="Compile.pptx")
    return buf.getvalue()


def call(session, tool, args):
    msg = session.call(tool, args)
    assert "result" in msg and not msg["result"].get("isError"), msg
    return json.loads(text_of(msg))


def test_ppt_analysis(api, tmp_path):
    r = api.post("/local-sandbox", json={"server_names": ["filesystem", "powerpoint"], "benchmark": "Toolathlon"})
    assert r.status_code == 201, r.text
    sb = r.json()
    sid = sb["local_sandbox_id"]
    urls = {s["server_name"]: s["mcp_server_url"] for s in sb["servers"]}
    up = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
    assert httpx.put(up, content=workspace_tar(),
                     headers={"Content-Type": "application/gzip"}).status_code in (200, 201)
    assert api.post(f"/local-sandbox/{sid}/initialize").status_code == 200
    a = Session(urls["powerpoint"], timeout=180)
    b = Session(urls["powerpoint"], timeout=180)
    fs = Session(urls["filesystem"], timeout=180)
    try:
        tools = a.result("tools/list")["result"]["tools"]
        assert len(tools) == 37
        opened = call(a, "open_presentation", {"file_path": "Compile.pptx"})
        assert opened["slide_count"] == 26
        # the second session sees the first one's presentation, not yet current
        listed = call(b, "list_presentations", {})
        assert listed["presentations"] == [{"id": "presentation_1", "slide_count": 26, "is_current": False}]
        assert call(b, "get_presentation_info", {})["error"].startswith("No presentation is currently loaded")
        call(b, "switch_presentation", {"presentation_id": "presentation_1"})
        info = call(a, "get_presentation_info", {})  # current for every session now
        assert info["slide_count"] == 26
        text = call(b, "extract_presentation_text", {"include_slide_info": True})
        assert text["total_slides"] == 26 and text["slides_with_tables"] == 2
        note = ["# Compiler Principles: symbol tables", ""]
        for s in text["slides_text"]:
            tc = s["text_content"]
            note += ["## Slide %d: %s" % (s["slide_index"] + 1, tc["slide_title"].replace("\v", " ")), "",
                     "```", tc["all_text_combined"].replace("\v", "\n"), "```", ""]
        fs_res = fs.call("write_file", {"path": "/data/NOTE.md", "content": "\n".join(note)})
        assert not fs_res["result"].get("isError"), fs_res
    finally:
        for s in (a, b, fs):
            s.close()
    url = api.get(f"/local-sandbox/{sid}/dump").json()["download_url"]
    with tarfile.open(fileobj=io.BytesIO(httpx.get(url, timeout=120).content), mode="r:gz") as tf:
        tf.extractall(tmp_path / "out")
    written = (tmp_path / "out" / "NOTE.md").read_text(encoding="utf-8")
    # every code snippet the grader looks for comes from the tools' text; one
    # (the `function f` example) is on the slides with line numbers, so it is
    # there but not character for character
    assert [s[:10] for s in missing_snippets(written)] == ["function f"]
    assert len(missing_snippets(written)) <= 1, missing_snippets(written)
    # the check can fail: a note without the hash function is caught
    broken = written.replace("65599", "31")
    assert len(missing_snippets(broken)) > len(missing_snippets(written))
