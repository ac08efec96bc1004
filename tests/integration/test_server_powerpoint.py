"""`mcpbox mcp powerpoint` over stdio (office-powerpoint-mcp-server 2.0.6,
GongRzhe).

Tool surface: 37 tools, and (where the upstream clone is on this machine)
that surface.c is what gen_surface.py makes of upstream's source. State: the
presentation registry and its current-presentation quirk. Round trips: files
the tools write are read back with an oracle that does not share mcpbox's code
(Python's zipfile + ElementTree); Toolathlon's ppt-analysis input
(Compile.pptx) is read by the text tools as upstream's traversal reads it,
checked against the same oracle and the grader's code snippets. Hostile files
give clear errors."""
import json
import os
import re
import shutil
import subprocess
import zipfile
import xml.etree.ElementTree as ET

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "ppt-analysis")
REPO = os.path.dirname(os.path.dirname(HERE))
MIRROR = "/work/.mirror/GongRzhe+Office-PowerPoint-MCP-Server/repo"

P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
PR = "{http://schemas.openxmlformats.org/package/2006/relationships}"
SHAPE_TAGS = {P + t for t in ("sp", "grpSp", "graphicFrame", "cxnSp", "pic", "contentPart")}

TOOLS = [
    "create_presentation", "create_presentation_from_template", "open_presentation",
    "save_presentation", "get_presentation_info", "get_template_file_info", "set_core_properties",
    "add_slide", "get_slide_info", "extract_slide_text", "extract_presentation_text",
    "populate_placeholder", "add_bullet_points", "manage_text", "manage_image", "add_table",
    "format_table_cell", "add_shape", "add_chart", "apply_professional_design",
    "apply_picture_effects", "manage_fonts", "list_slide_templates", "apply_slide_template",
    "create_slide_from_template", "create_presentation_from_templates", "get_template_info",
    "auto_generate_presentation", "optimize_slide_text", "manage_hyperlinks", "update_chart_data",
    "add_connector", "manage_slide_masters", "manage_slide_transitions", "list_presentations",
    "switch_presentation", "get_server_info",
]
LAYOUTS = ["Title Slide", "Title and Content", "Section Header", "Two Content", "Comparison",
           "Title Only", "Blank", "Content with Caption", "Picture with Caption",
           "Title and Vertical Text", "Vertical Title and Text"]


class Checked(StdioClient):
    """Asserts a clean exit (ASan leak reports make the exit status non-zero)."""

    def __exit__(self, exc_type, *rest):
        rc = self.close()
        if exc_type is None:
            assert rc == 0, "server exit status %s; stderr:\n%s" % (rc, self.stderr())
        return False


@pytest.fixture
def root(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    return d


@pytest.fixture
def pp(root):
    with Checked([MCPBOX_BIN, "mcp", "powerpoint"], cwd=str(root), timeout=120) as c:
        c.initialize()

        def call(name, args=None, error=False):
            res = c.call(name, args or {})
            assert bool(res.get("isError")) == error, res
            text = StdioClient.text(res)
            if error:
                return text
            d = json.loads(text)
            assert res["structuredContent"] == {"result": d}
            # pydantic_core.to_json(indent=2): 2-space indent, non-ASCII raw
            assert text == json.dumps(d, indent=2, ensure_ascii=False).replace(
                "\\u000b", "\\u000b"), text
            return d
        call.client = c
        yield call


# ------------------------------------------------------------------ oracle

def rels(z, part):
    d, f = part.rsplit("/", 1) if "/" in part else ("", part)
    name = (d + "/" if d else "") + "_rels/" + f + ".rels"
    out = {}
    if name not in z.namelist():
        return out
    for r in ET.fromstring(z.read(name)).iter(PR + "Relationship"):
        t = r.get("Target")
        out[r.get("Id")] = (r.get("Type"), os.path.normpath(os.path.join(d, t)).lstrip("/")
                            if not t.startswith("/") else t[1:])
    return out


def slide_parts(z):
    pres = ET.fromstring(z.read("ppt/presentation.xml"))
    rs = rels(z, "ppt/presentation.xml")
    return [rs[s.get(R + "id")][1] for s in pres.find(P + "sldIdLst") or []]


def ph_of(shape):
    first = list(shape)[0]
    nvpr = first.find(P + "nvPr")
    return None if nvpr is None else nvpr.find(P + "ph")


def frame_text(tx):
    if tx is None:
        return ""
    paras = []
    for p in tx.findall(A + "p"):
        s = ""
        for c in p:
            if c.tag in (A + "r", A + "fld"):
                t = c.find(A + "t")
                s += (t.text or "") if t is not None else ""
            elif c.tag == A + "br":
                s += "\v"
        paras.append(s)
    return "\n".join(paras)


def oracle_slide(z, part):
    """upstream's extract_slide_text_content, re-expressed on the XML."""
    tree = ET.fromstring(z.read(part)).find(P + "cSld").find(P + "spTree")
    shapes = [s for s in tree if s.tag in SHAPE_TAGS]
    texts, title, tables, placeholders = [], "", 0, 0
    for s in shapes:
        ph = ph_of(s)
        if ph is not None and int(ph.get("idx", "0")) == 0:
            if s.tag == P + "sp":
                title = frame_text(s.find(P + "txBody")).strip()
                if title:
                    texts.append(title)
            break
    for s in shapes:
        if s.tag == P + "sp":
            t = frame_text(s.find(P + "txBody")).strip()
            if t:
                texts.append(t)
                placeholders += ph_of(s) is not None
        elif s.tag == P + "graphicFrame":
            tbl = s.find(A + "graphic/" + A + "graphicData/" + A + "tbl")
            if tbl is None:
                continue
            found = False
            for tr in tbl.findall(A + "tr"):
                for tc in tr.findall(A + "tc"):
                    t = frame_text(tc.find(A + "txBody")).strip()
                    if t:
                        texts.append(t)
                        found = True
            tables += found
    return {"all": "\n".join(texts), "title": title, "tables": tables, "placeholders": placeholders}


def oracle_presentation(path):
    with zipfile.ZipFile(path) as z:
        slides = [oracle_slide(z, p) for p in slide_parts(z)]
    combined = []
    for i, s in enumerate(slides):
        if s["all"]:
            combined += ["=== SLIDE %d ===" % (i + 1), s["all"], ""]
    return slides, "\n".join(combined)


# ----------------------------------------------------------------- surface

def test_tool_list_is_the_2_0_6_surface(pp):
    tools = pp.client.list_tools()
    assert [t["name"] for t in tools] == TOOLS
    for t in tools:
        assert t["inputSchema"]["title"] == t["name"] + "Arguments"
        assert t["outputSchema"] == {
            "properties": {"result": {"additionalProperties": True, "title": "Result", "type": "object"}},
            "required": ["result"], "title": t["name"] + "Output", "type": "object"}
    by = {t["name"]: t for t in tools}
    assert by["manage_hyperlinks"]["inputSchema"]["properties"]["url"] == {
        "default": None, "title": "Url", "type": "string"}
    assert by["create_presentation"]["inputSchema"]["properties"]["id"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Id"}


@pytest.mark.skipif(not os.path.isdir(MIRROR), reason="upstream clone not on this machine")
def test_surface_c_is_generated_from_upstream():
    gen = os.path.join(REPO, "src", "servers", "powerpoint", "gen_surface.py")
    out = subprocess.run(["/usr/bin/python3", gen, MIRROR], check=True, capture_output=True,
                         text=True).stdout
    with open(os.path.join(REPO, "src", "servers", "powerpoint", "surface.c")) as f:
        assert f.read() == out
    ref = subprocess.run(["/usr/bin/python3", gen, MIRROR, "--json"], check=True,
                         capture_output=True, text=True).stdout
    with open(os.path.join(REPO, "tests", "surfaces", "office-powerpoint-mcp-server-2.0.6.json")) as f:
        assert f.read() == ref


def test_validation_errors_are_pydantic_texts(pp):
    text = pp("get_slide_info", {"slide_index": "x"}, error=True)
    assert text.startswith("Error executing tool get_slide_info: 1 validation error for "
                           "get_slide_infoArguments\nslide_index\n  Input should be a valid integer, "
                           "unable to parse string as an integer [type=int_parsing, input_value='x', "
                           "input_type=str]"), text
    text = pp("add_bullet_points", {"slide_index": 0}, error=True)
    assert "2 validation errors for add_bullet_pointsArguments" in text
    assert "placeholder_idx\n  Field required [type=missing" in text


# ------------------------------------------------------------------- state

def test_current_presentation_quirk_and_registry(pp, root):
    d = pp("create_presentation")
    assert d == {"presentation_id": "presentation_1",
                 "message": "Created new presentation with ID: presentation_1", "slide_count": 0}
    # create does not make it current
    assert pp("add_slide") == {"error": "No presentation is currently loaded or the specified ID is invalid"}
    assert pp("get_presentation_info")["error"].startswith("No presentation is currently loaded")
    assert pp("switch_presentation", {"presentation_id": "nope"}) == {
        "error": "Presentation 'nope' not found. Available presentations: ['presentation_1']"}
    assert pp("switch_presentation", {"presentation_id": "presentation_1"}) == {
        "message": "Switched from presentation 'None' to 'presentation_1'",
        "previous_presentation_id": None, "current_presentation_id": "presentation_1"}
    assert pp("add_slide")["slide_index"] == 0
    pp("create_presentation", {"id": "deck"})
    lst = pp("list_presentations")
    assert lst == {"presentations": [{"id": "presentation_1", "slide_count": 1, "is_current": True},
                                     {"id": "deck", "slide_count": 0, "is_current": False}],
                   "current_presentation_id": "presentation_1", "total_presentations": 2}
    # ids count presentations: the third is presentation_3
    assert pp("create_presentation")["presentation_id"] == "presentation_3"
    assert pp("open_presentation", {"file_path": "missing.pptx"}) == {"error": "File not found: missing.pptx"}
    info = pp("get_server_info")
    assert info["total_tools"] == 32 and info["loaded_presentations"] == 3


def test_new_presentation_is_python_pptx_default(pp):
    pp("create_presentation", {"id": "a"})
    info = pp("get_presentation_info", {"presentation_id": "a"})
    assert [l["name"] for l in info["slide_layouts"]] == LAYOUTS
    assert info["slide_width"] == 9144000 and info["slide_height"] == 6858000
    assert info["core_properties"]["created"] == "2013-01-27T09:14:16"
    assert info["core_properties"]["last_modified_by"] == "Steve Canny"
    assert info["presentation_id"] == "a"


# -------------------------------------------------------------- round trip

def test_written_presentation_reads_back_with_an_independent_oracle(pp, root):
    pp("create_presentation", {"id": "w"})
    for i in range(11):
        d = pp("add_slide", {"layout_index": i, "title": "Slide %d é" % i, "presentation_id": "w"})
        assert d == {"message": "Added slide %d with layout %d" % (i, i), "slide_index": i,
                     "layout_name": LAYOUTS[i]}
    assert pp("add_slide", {"layout_index": 11, "presentation_id": "w"}) == {
        "error": "Invalid layout index: 11. Available layouts: 0-10"}
    assert pp("populate_placeholder", {"slide_index": 1, "placeholder_idx": 1,
                                       "text": "one\ntwo\vthree", "presentation_id": "w"}) == {
        "message": "Populated placeholder 1 on slide 1"}
    assert pp("populate_placeholder", {"slide_index": 1, "placeholder_idx": 9, "text": "x",
                                       "presentation_id": "w"}) == {
        "error": "Failed to populate placeholder: 'no placeholder on this slide with idx == 9'"}
    assert pp("add_bullet_points", {"slide_index": 3, "placeholder_idx": 1,
                                    "bullet_points": ["alpha", "beta"], "presentation_id": "w"}) == {
        "message": "Added 2 bullet points to placeholder 1 on slide 3"}
    d = pp("manage_text", {"slide_index": 6, "operation": "add", "text": "free text", "left": 1.5,
                           "font_size": 18, "bold": True, "color": [0, 128, 255], "presentation_id": "w"})
    # slide 6 is Blank: no placeholders are cloned (date, footer, number never are)
    assert d == {"message": "Added text box to slide 6", "shape_index": 0, "text": "free text"}
    assert pp("manage_text", {"slide_index": 6, "operation": "bogus", "presentation_id": "w"}) == {
        "error": "Invalid operation: bogus. Must be 'add', 'format', 'validate', or 'format_runs'"}
    d = pp("add_table", {"slide_index": 5, "rows": 2, "cols": 3, "left": 1, "top": 2, "width": 6,
                         "height": 2, "data": [["a", "b", "c"], ["1", "", "3"]],
                         "header_bg_color": [10, 20, 30], "presentation_id": "w"})
    assert d == {"message": "Added 2x3 table to slide 5", "shape_index": 1, "rows": 2, "cols": 3}
    assert pp("add_table", {"slide_index": 5, "rows": 3, "cols": 1, "left": 0, "top": 0, "width": 1,
                            "height": 1, "data": [["a"]], "presentation_id": "w"}) == {
        "error": "Data has 1 rows but table should have 3 rows"}
    pp("set_core_properties", {"title": "T", "author": "Me", "presentation_id": "w"})
    assert pp("save_presentation", {"file_path": "out.pptx", "presentation_id": "w"}) == {
        "message": "Presentation saved to out.pptx", "file_path": "out.pptx"}
    path = str(root / "out.pptx")
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        parts = slide_parts(z)
        assert len(parts) == 11
        ct = z.read("[Content_Types].xml").decode()
        for p in parts:
            assert '/%s"' % p in ct
            layout = [t for ty, t in rels(z, p).values() if ty.endswith("/slideLayout")]
            name = ET.fromstring(z.read(layout[0])).find(P + "cSld").get("name")
            assert name == LAYOUTS[parts.index(p)]
        s1 = ET.fromstring(z.read(parts[1]))
        assert [frame_text(t) for t in s1.iter(P + "txBody")] == ["Slide 1 é", "one\ntwo\vthree"]
        s3 = ET.fromstring(z.read(parts[3]))
        body = [t for t in s3.iter(P + "txBody")][1]
        assert frame_text(body) == "\nalpha\nbeta"  # clear() keeps one empty paragraph
        s6 = ET.fromstring(z.read(parts[6]))
        box = [s for s in s6.iter(P + "sp") if ph_of(s) is None][0]
        assert box.find(P + "spPr/" + A + "xfrm/" + A + "off").get("x") == str(int(1.5 * 914400))
        rpr = box.find(".//" + A + "rPr")
        assert rpr.get("sz") == "1800" and rpr.get("b") == "1"
        assert rpr.find(A + "solidFill/" + A + "srgbClr").get("val") == "0080FF"
        s5 = ET.fromstring(z.read(parts[5]))
        tbl = s5.find(".//" + A + "tbl")
        assert [[frame_text(tc.find(A + "txBody")) for tc in tr.findall(A + "tc")]
                for tr in tbl.findall(A + "tr")] == [["a", "b", "c"], ["1", "", "3"]]
        assert tbl.find(A + "tr/" + A + "tc/" + A + "tcPr/" + A + "solidFill/" + A + "srgbClr").get("val") == "0A141E"
        core = z.read("docProps/core.xml").decode()
        assert "<dc:title>T</dc:title>" in core and "<dc:creator>Me</dc:creator>" in core
        with zipfile.ZipFile(os.path.join(REPO, "src", "servers", "powerpoint", "default.pptx")) as t:
            for n in t.namelist():  # parts no tool touched are byte-identical
                if n.startswith("ppt/slideLayouts/") or n.startswith("ppt/slideMasters/") or \
                        n.startswith("ppt/theme/"):
                    assert z.read(n) == t.read(n), n
    # and read back by the server itself, in a fresh presentation
    pp("open_presentation", {"file_path": "out.pptx", "id": "r"})
    text = pp("extract_presentation_text", {"presentation_id": "r"})
    slides, combined = oracle_presentation(path)
    assert text["all_presentation_text_combined"] == combined
    assert text["slides_with_tables"] == 1
    info = pp("get_slide_info", {"slide_index": 1, "presentation_id": "r"})
    assert [s["shape_type"] for s in info["shapes"]] == ["PLACEHOLDER (14)"] * 2
    # placeholders without xfrm inherit the layout's geometry
    with zipfile.ZipFile(path) as z:
        lay = ET.fromstring(z.read([t for ty, t in rels(z, parts[1]).values() if ty.endswith("/slideLayout")][0]))
    body_ph = [s for s in lay.iter(P + "sp") if ph_of(s) is not None and ph_of(s).get("idx") == "1"][0]
    off = body_ph.find(P + "spPr/" + A + "xfrm/" + A + "off")
    if off is not None:
        assert info["shapes"][1]["left"] == int(off.get("x"))
    info6 = pp("get_slide_info", {"slide_index": 6, "presentation_id": "r"})
    assert [s["shape_type"] for s in info6["shapes"]] == ["TEXT_BOX (17)"]


def test_open_and_save_keeps_every_part(pp, root):
    src = os.path.join(DATA, "Compile.pptx")
    shutil.copy(src, root / "Compile.pptx")
    pp("open_presentation", {"file_path": "Compile.pptx"})
    pp("save_presentation", {"file_path": "copy.pptx", "presentation_id": "presentation_1"})
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(str(root / "copy.pptx")) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())
        for n in a.namelist():
            assert a.read(n) == b.read(n), n


# ------------------------------------------------------------- ppt-analysis

def snippets():
    with open(os.path.join(DATA, "code.md"), encoding="utf-8") as f:
        return re.findall(r"```\n(.*?)```", f.read(), re.S)


def norm(s):
    return re.sub(r"\s+", "", s.replace("\v", "\n"))


def test_ppt_analysis_reads_what_upstream_reads(pp, root):
    shutil.copy(os.path.join(DATA, "Compile.pptx"), root / "Compile.pptx")
    d = pp("open_presentation", {"file_path": "Compile.pptx"})
    assert d == {"presentation_id": "presentation_1",
                 "message": "Opened presentation from Compile.pptx with ID: presentation_1",
                 "slide_count": 26}
    pid = {"presentation_id": "presentation_1"}
    info = pp("get_presentation_info", pid)
    assert info["slide_count"] == 26
    text = pp("extract_presentation_text", pid)
    slides, combined = oracle_presentation(str(root / "Compile.pptx"))
    assert text["total_slides"] == 26 and text["slides_with_tables"] == 2
    assert text["all_presentation_text_combined"] == combined
    assert [s["text_content"]["all_text_combined"] for s in text["slides_text"]] == [s["all"] for s in slides]
    assert [s["text_content"]["slide_title"] for s in text["slides_text"]] == [s["title"] for s in slides]
    assert text["total_text_shapes"] == sum(s["placeholders"] for s in slides)
    for s in text["slides_text"]:
        tc = s["text_content"]
        assert tc["text_shapes"] == []
        if tc["slide_title"]:  # titles appear twice
            assert tc["all_text_combined"].split("\n")[:2] == [tc["slide_title"].split("\n")[0]] * 2 or \
                tc["all_text_combined"].count(tc["slide_title"]) >= 2
    # the code the grader looks for is all in what the tools return
    whole = norm(text["all_presentation_text_combined"])
    # all but `function f`, which the slides show with line numbers
    assert [sn[:10] for sn in snippets() if norm(sn) not in whole] == ["function f"]
    assert "1 function f(a:int,b:int,c:int)=\n2\t(print_int (a+c);" in text["all_presentation_text_combined"]
    one = pp("extract_slide_text", {"slide_index": 3, **pid})
    assert one["slide_index"] == 3 and one["success"] is True
    assert one["text_content"] == text["slides_text"][3]["text_content"]
    assert pp("get_slide_info", {"slide_index": 26, **pid}) == {
        "error": "Invalid slide index: 26. Available slides: 0-25"}
    si = pp("get_slide_info", {"slide_index": 0, **pid})
    assert si["shape_count"] == len(si["shapes"]) and si["layout_name"]


# ----------------------------------------------------------------- hostile

def write_zip(path, members, compress=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compress) as z:
        for n, data in members.items():
            z.writestr(n, data)


def test_hostile_files_give_clear_errors(pp, root):
    (root / "notzip.pptx").write_bytes(b"hello, not a zip")
    d = pp("open_presentation", {"file_path": "notzip.pptx"})
    assert d["error"].startswith("Failed to open presentation: File is not a zip file")
    with zipfile.ZipFile(os.path.join(DATA, "Compile.pptx")) as z:
        members = {n: z.read(n) for n in z.namelist()}
    # macro-enabled: refused
    ct = members["[Content_Types].xml"].decode().replace(
        "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
        "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml")
    write_zip(str(root / "m.pptm"), {**members, "[Content_Types].xml": ct})
    d = pp("open_presentation", {"file_path": "m.pptm"})
    assert "macro-enabled" in d["error"] and d["error"].startswith("Failed to open presentation")
    # an entity bomb in presentation.xml
    bomb = ('<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
            '<p:presentation xmlns:p="%s">&b;</p:presentation>' % P[1:-1])
    write_zip(str(root / "e.pptx"), {**members, "ppt/presentation.xml": bomb})
    d = pp("open_presentation", {"file_path": "e.pptx"})
    assert d["error"].startswith("Failed to open presentation")
    # a zip bomb: one part inflating far past the ratio cap
    write_zip(str(root / "z.pptx"), {**members, "ppt/slides/slide1.xml": b"<" + b" " * (300 << 20)})
    d = pp("open_presentation", {"file_path": "z.pptx"})
    assert d["error"].startswith("Failed to open presentation")
    # a docx is not a presentation
    write_zip(str(root / "w.pptx"), {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.wordprocessingml.document.main+xml"/></Types>',
        "_rels/.rels": '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="word/document.xml"/></Relationships>',
        "word/document.xml": "<w/>"})
    d = pp("open_presentation", {"file_path": "w.pptx"})
    assert "is not a PowerPoint file" in d["error"]
    assert pp("list_presentations")["total_presentations"] == 0


def test_connector_table_cell_masters_transitions(pp, root):
    pp("create_presentation")
    pid = {"presentation_id": "presentation_1"}
    pp("add_slide", {"layout_index": 6, **pid})
    # these modules look up `presentation_id or current`
    assert pp("add_connector", {"slide_index": 0, "connector_type": "straight", "start_x": 0,
                                "start_y": 0, "end_x": 1, "end_y": 1}) == {"error": "Presentation not found"}
    d = pp("add_connector", {"slide_index": 0, "connector_type": "Elbow", "start_x": 3, "start_y": 1,
                             "end_x": 1, "end_y": 2.5, "line_width": 2, "color": [1, 2, 3], **pid})
    assert d == {"message": "Added Elbow connector to slide 0", "connector_type": "Elbow",
                 "start_point": [3.0, 1.0], "end_point": [1.0, 2.5], "shape_index": 0}
    assert pp("add_connector", {"slide_index": 0, "connector_type": "zigzag", "start_x": 0, "start_y": 0,
                                "end_x": 1, "end_y": 1, **pid}) == {
        "error": "Invalid connector type. Use: ['straight', 'elbow', 'curved']"}
    assert pp("add_connector", {"slide_index": 4, "connector_type": "straight", "start_x": 0,
                                "start_y": 0, "end_x": 1, "end_y": 1, **pid}) == {
        "error": "Slide index 4 out of range"}
    pp("add_table", {"slide_index": 0, "rows": 2, "cols": 2, "left": 1, "top": 1, "width": 4,
                     "height": 2, "data": [["a", "b"], ["c", "d"]], **pid})
    assert pp("format_table_cell", {"slide_index": 0, "shape_index": 1, "row": 1, "col": 1,
                                    "bg_color": [255, 255, 0], "italic": True, "font_name": "Arial", **pid}) == {
        "message": "Formatted cell at row 1, column 1 in table at shape index 1 on slide 0"}
    assert pp("format_table_cell", {"slide_index": 0, "shape_index": 0, "row": 0, "col": 0, **pid}) == {
        "error": "Shape at index 0 is not a table"}
    assert pp("format_table_cell", {"slide_index": 0, "shape_index": 1, "row": 0, "col": 2, **pid}) == {
        "error": "Invalid column index: 2. Available columns: 0-1"}
    t = pp("manage_slide_transitions", {"slide_index": 0, "operation": "set", "transition_type": "fade", **pid})
    assert t["duration"] == 1.0 and "placeholder for future enhancement" in t["note"]
    m = pp("manage_slide_masters", {"operation": "get_layouts", **pid})
    assert [l["name"] for l in m["layouts"]] == LAYOUTS and m["message"] == "Master 0 has 11 layouts"
    assert pp("manage_slide_masters", {"operation": "get_info", "master_index": 3, **pid}) == {
        "error": "Master index 3 out of range"}
    pp("save_presentation", {"file_path": "c.pptx", **pid})
    with zipfile.ZipFile(str(root / "c.pptx")) as z:
        s = ET.fromstring(z.read(slide_parts(z)[0]))
    cxn = s.find(".//" + P + "cxnSp")
    xf = cxn.find(P + "spPr/" + A + "xfrm")
    assert xf.get("flipH") == "1" and xf.get("flipV") is None
    assert xf.find(A + "off").get("x") == str(914400) and xf.find(A + "ext").get("cx") == str(2 * 914400)
    assert cxn.find(P + "spPr/" + A + "prstGeom").get("prst") == "bentConnector3"
    assert cxn.find(P + "spPr/" + A + "ln").get("w") == str(2 * 12700)
    tc = s.findall(".//" + A + "tc")[3]
    assert tc.find(A + "tcPr/" + A + "solidFill/" + A + "srgbClr").get("val") == "FFFF00"
    rpr = tc.find(".//" + A + "rPr")
    assert rpr.get("i") == "1" and rpr.find(A + "latin").get("typeface") == "Arial"


def test_add_shape_keeps_2_0_6_integer_mapping(pp, root):
    pp("create_presentation", {"id": "s"})
    pid = {"presentation_id": "s"}
    pp("add_slide", {"layout_index": 6, **pid})
    d = pp("add_shape", {"slide_index": 0, "shape_type": "star", "left": 1, "top": 1, "width": 2,
                         "height": 1, "fill_color": [255, 0, 0], "line_color": [0, 0, 255],
                         "line_width": 1.5, "text": "Hi", "font_size": 20, **pid})
    assert d == {"message": "Added star shape to slide 0", "shape_index": 0}
    pp("add_shape", {"slide_index": 0, "shape_type": "oval", "left": 0, "top": 0, "width": 1,
                     "height": 1, **pid})
    e = pp("add_shape", {"slide_index": 0, "shape_type": "blob", "left": 0, "top": 0, "width": 1,
                         "height": 1, **pid})
    assert e["error"].startswith("Unsupported shape type: 'blob'. Available shape types: arrow, cloud, diamond,")
    info = pp("get_slide_info", {"slide_index": 0, **pid})
    assert [(s["name"], s["shape_type"]) for s in info["shapes"]] == [
        ("Regular Pentagon 1", "AUTO_SHAPE (1)"), ("Oval 2", "AUTO_SHAPE (1)")]
    pp("save_presentation", {"file_path": "s.pptx", **pid})
    with zipfile.ZipFile(str(root / "s.pptx")) as z:
        s = ET.fromstring(z.read(slide_parts(z)[0]))
    sp = s.findall(".//" + P + "sp")[0]
    # 2.0.6 maps 'star' to 12, python-pptx's REGULAR_PENTAGON
    assert sp.find(P + "spPr/" + A + "prstGeom").get("prst") == "pentagon"
    assert sp.find(P + "spPr/" + A + "solidFill/" + A + "srgbClr").get("val") == "FF0000"
    ln = sp.find(P + "spPr/" + A + "ln")
    assert ln.get("w") == str(int(1.5 * 12700)) and ln.find(A + "solidFill/" + A + "srgbClr").get("val") == "0000FF"
    assert frame_text(sp.find(P + "txBody")) == "Hi"
    assert sp.find(".//" + A + "rPr").get("sz") == "2000"


def test_hyperlinks_round_trip(pp, root):
    pp("create_presentation", {"id": "h"})
    pid = {"presentation_id": "h"}
    pp("add_slide", {"layout_index": 6, **pid})
    pp("manage_text", {"slide_index": 0, "operation": "add", "text": "See ", **pid})
    assert pp("manage_hyperlinks", {"operation": "add", "slide_index": 0, "shape_index": 0,
                                    "text": "docs", "url": "https://example.org/a", **pid}) == {
        "message": "Added hyperlink 'docs' -> 'https://example.org/a' to shape 0",
        "text": "docs", "url": "https://example.org/a"}
    lst = pp("manage_hyperlinks", {"operation": "list", "slide_index": 0, **pid})
    assert lst == {"message": "Found 1 hyperlinks on slide 0", "hyperlinks": [
        {"shape_index": 0, "paragraph_index": 0, "run_index": 1, "text": "docs", "url": "https://example.org/a"}]}
    assert pp("manage_hyperlinks", {"operation": "update", "slide_index": 0, "shape_index": 0,
                                    "run_index": 1, "url": "https://example.org/b", **pid}) == {
        "message": "Updated hyperlink from 'https://example.org/a' to 'https://example.org/b'",
        "old_url": "https://example.org/a", "new_url": "https://example.org/b", "text": "docs"}
    assert pp("manage_hyperlinks", {"operation": "remove", "slide_index": 0, "shape_index": 0,
                                    "run_index": 0, **pid}) == {
        "message": "Removed hyperlink 'None' from text 'See '", "removed_url": None, "text": "See "}
    assert pp("manage_hyperlinks", {"operation": "update", "slide_index": 0, "shape_index": 0,
                                    "run_index": 5, "url": "x", **pid}) == {"error": "Run index 5 out of range"}
    pp("save_presentation", {"file_path": "h.pptx", **pid})
    with zipfile.ZipFile(str(root / "h.pptx")) as z:
        part = slide_parts(z)[0]
        rs = rels(z, part)
        s = ET.fromstring(z.read(part))
        relxml = z.read(part.replace("slides/", "slides/_rels/") + ".rels").decode()
    h = s.find(".//" + A + "hlinkClick")
    assert 'TargetMode="External"' in relxml and "https://example.org/a" not in relxml
    assert rs[h.get(R + "id")][0].endswith("/hyperlink")
    assert 'Target="https://example.org/b"' in relxml


def test_template_catalogue(pp):
    lst = pp("list_slide_templates")
    assert lst["total_templates"] == 23 and lst["message"] == "Use apply_slide_template to apply templates to slides"
    ids = [t["id"] for t in lst["available_templates"]]
    assert ids[:3] == ["title_slide", "text_with_image", "two_column_text"]
    assert lst["usage_examples"]["single_slide_example"]["code"]["template_id"] == "text_with_image"
    info = pp("get_template_info", {"template_id": "title_slide"})
    assert info["elements"][0]["position"] == {"left": 1.0, "top": 2.0, "width": 8.0, "height": 2.0}
    assert info["elements"][0]["styling_options"][:2] == ["font_type", "font_size"]
    assert info["color_schemes"] == ["modern_blue", "corporate_gray", "elegant_green", "warm_red",
                                     "pastel_dream", "nature_earth", "neon_vibrant", "minimalist_mono"]
    assert info["element_count"] == len(info["elements"])
    assert pp("get_template_info", {"template_id": "nope"}) == {
        "error": "Template 'nope' not found", "available_templates": ids}
    if os.path.isdir(MIRROR):  # against upstream's own file, read by Python
        data = json.loads(subprocess.run(["git", "--git-dir", MIRROR, "show",
                                          "2b8bde35:slide_layout_templates.json"],
                                         check=True, capture_output=True, text=True).stdout)
        for tid, t in data["templates"].items():
            got = pp("get_template_info", {"template_id": tid})
            assert [e["position"] for e in got["elements"]] == [e.get("position") for e in t.get("elements", [])]
            assert got["name"] == t.get("name") and got["background_type"] == t.get("background", {}).get("type")


@pytest.mark.skipif(not os.path.isdir(MIRROR), reason="upstream clone not on this machine")
def test_templates_data_c_is_generated_from_upstream():
    gen = os.path.join(REPO, "src", "servers", "powerpoint", "gen_templates.py")
    out = subprocess.run(["/usr/bin/python3", gen, MIRROR], check=True, capture_output=True, text=True).stdout
    with open(os.path.join(REPO, "src", "servers", "powerpoint", "templates_data.c"), encoding="utf-8") as f:
        assert f.read() == out


def test_template_files(pp, root):
    (root / "templates").mkdir()
    shutil.copy(os.path.join(DATA, "Compile.pptx"), root / "templates" / "Deck.pptx")
    d = pp("create_presentation_from_template", {"template_path": "/nowhere/Deck.pptx"})
    assert d == {"presentation_id": "presentation_1",
                 "message": "Created new presentation from template './templates/Deck.pptx' with ID: presentation_1",
                 "template_path": "./templates/Deck.pptx", "slide_count": 26,
                 "layout_count": d["layout_count"]}
    info = pp("get_template_file_info", {"template_path": "templates/Deck.pptx"})
    assert info["template_path"] == "templates/Deck.pptx" and info["slide_count"] == 26
    assert info["file_size_bytes"] == os.path.getsize(os.path.join(DATA, "Compile.pptx"))
    assert info["layout_count"] == len(info["slide_layouts"]) == d["layout_count"]
    e = pp("get_template_file_info", {"template_path": "missing.pptx"})
    assert e == {"error": "Template file not found: missing.pptx. Searched in ., ./templates"}


def png(w, h, dpi=None):
    import struct
    import zlib

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    raw = b"".join(b"\0" + b"\x80\x40\x20" * w for _ in range(h))
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    if dpi:
        ppm = round(dpi / 0.0254)
        out += chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1))
    return out + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_manage_image_add(pp, root):
    import base64
    (root / "a.png").write_bytes(png(200, 100, dpi=144))
    (root / "bad.png").write_bytes(b"not an image at all")
    pp("create_presentation", {"id": "i"})
    pid = {"presentation_id": "i"}
    pp("add_slide", {"layout_index": 6, **pid})
    assert pp("manage_image", {"slide_index": 0, "operation": "add", "image_source": "a.png", **pid}) == {
        "message": "Added image to slide 0", "shape_index": 0, "image_path": "a.png"}
    pp("manage_image", {"slide_index": 0, "operation": "add", "image_source": "a.png", "width": 2.0, **pid})
    d = pp("manage_image", {"slide_index": 0, "operation": "add", "source_type": "base64",
                            "image_source": base64.b64encode(png(10, 10)).decode(), "left": 0, "top": 0, **pid})
    assert d == {"message": "Added image from base64 to slide 0", "shape_index": 2}
    assert pp("manage_image", {"slide_index": 0, "operation": "add", "image_source": "nope.png", **pid}) == {
        "error": "Image file not found: nope.png"}
    assert pp("manage_image", {"slide_index": 0, "operation": "add", "image_source": "bad.png", **pid}) == {
        "error": "Failed to add image: cannot identify image file 'bad.png'"}
    assert pp("manage_image", {"slide_index": 0, "operation": "add", "source_type": "base64",
                               "image_source": "abc", **pid}) == {
        "error": "Failed to process base64 image: Incorrect padding"}
    info = pp("get_slide_info", {"slide_index": 0, **pid})
    assert [s["shape_type"] for s in info["shapes"]] == ["PICTURE (13)"] * 3
    # native size: pixels at the PNG's DPI; width given: height keeps the aspect ratio
    assert (info["shapes"][0]["width"], info["shapes"][0]["height"]) == (int(914400 * 200 / 144), int(914400 * 100 / 144))
    assert (info["shapes"][1]["width"], info["shapes"][1]["height"]) == (2 * 914400, 914400)
    assert (info["shapes"][2]["width"], info["shapes"][2]["height"]) == (int(914400 * 10 / 72),) * 2
    pp("save_presentation", {"file_path": "i.pptx", **pid})
    with zipfile.ZipFile(str(root / "i.pptx")) as z:
        media = sorted(n for n in z.namelist() if n.startswith("ppt/media/"))
        assert media == ["ppt/media/image1.png", "ppt/media/image2.png"]  # the same image is one part
        assert z.read("ppt/media/image1.png") == (root / "a.png").read_bytes()
        part = slide_parts(z)[0]
        s = ET.fromstring(z.read(part))
        rs = rels(z, part)
        assert '<Default Extension="png" ContentType="image/png"/>' in z.read("[Content_Types].xml").decode()
    embeds = [b.get(R + "embed") for b in s.iter(A + "blip")]
    assert [rs[e][1] for e in embeds] == ["ppt/media/image1.png", "ppt/media/image1.png", "ppt/media/image2.png"]
    assert [c.get("descr") for c in s.iter(P + "cNvPr")][1:] == ["a.png", "a.png", "image.png"]


def test_manage_text_format_runs(pp, root):
    pp("create_presentation", {"id": "f"})
    pid = {"presentation_id": "f"}
    pp("add_slide", {"layout_index": 6, **pid})
    pp("manage_text", {"slide_index": 0, "operation": "add", "text": "old", **pid})
    assert pp("manage_text", {"slide_index": 0, "operation": "format_runs", "shape_index": 0, **pid}) == {
        "error": "text_runs parameter is required for format_runs operation"}
    runs = [{"text": "Bold", "bold": True, "font_size": 24}, {"no_text": 1},
            {"text": "link", "hyperlink": "https://example.org", "color": [255, 0, 0]}]
    d = pp("manage_text", {"slide_index": 0, "operation": "format_runs", "shape_index": 0,
                           "text_runs": runs, **pid})
    assert d == {"message": "Applied formatting to 2 text runs on shape 0", "slide_index": 0, "shape_index": 0,
                 "formatted_runs": [
                     {"text": "Bold", "formatting_applied": {"bold": True, "font_size": 24}},
                     {"text": "link", "formatting_applied": {"hyperlink": "https://example.org", "color": [255, 0, 0]}}]}
    assert pp("manage_hyperlinks", {"operation": "list", "slide_index": 0, **pid})["hyperlinks"] == [
        {"shape_index": 0, "paragraph_index": 2, "run_index": 0, "text": "link", "url": "https://example.org"}]
    assert pp("manage_text", {"slide_index": 0, "operation": "format_runs", "shape_index": 3,
                              "text_runs": runs, **pid}) == {
        "error": "Invalid shape index for format_runs: 3. Available shapes: 0-0"}
    pp("save_presentation", {"file_path": "f.pptx", **pid})
    with zipfile.ZipFile(str(root / "f.pptx")) as z:
        s = ET.fromstring(z.read(slide_parts(z)[0]))
    tx = s.find(".//" + P + "txBody")
    assert frame_text(tx) == "\nBold\nlink"  # clear() leaves the first paragraph empty
    rpr = tx.findall(A + "p")[1].find(A + "r/" + A + "rPr")
    assert rpr.get("b") == "1" and rpr.get("sz") == "2400"


def test_professional_design_schemes(pp):
    d = pp("apply_professional_design", {"operation": "get_schemes"})  # needs no presentation
    assert d["available_schemes"] == ["modern_blue", "corporate_gray", "elegant_green", "warm_red"]
    assert d["schemes"]["modern_blue"]["primary"] == [0, 120, 215]
    assert d["color_types"] == ["primary", "secondary", "accent1", "accent2", "light", "text"]
    assert pp("apply_professional_design", {"operation": "theme"})["error"].startswith("No presentation")
    pp("create_presentation")
    assert pp("apply_professional_design", {"operation": "theme", "presentation_id": "presentation_1"}) == {
        "message": "Applied modern_blue theme to presentation", "color_scheme": "modern_blue",
        "applied_to_existing": True}
