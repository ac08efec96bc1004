"""`mcpbox mcp word` over stdio (office-word-mcp-server, GongRzhe: the Klavis
copy 568d8d8a by default, 1.1.9 with --upstream-version).

Tool surface: names, order, schemas and descriptions of both pinned versions
(and, where the upstream clone is on this machine, that surface.c is what
gen_surface.py makes of it). Round trips: documents written by python-docx
(Debian python3-docx) are read by the tools as python-docx reads them;
documents the tools write open in python-docx with the expected content, and
zip members no tool touched stay byte-identical. Hostile files give clear
errors. Toolathlon's interview-report flow is replayed and checked."""
import io
import json
import os
import subprocess
import zipfile

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient

docx = pytest.importorskip("docx")

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "word")
MIRROR = "/work/.mirror/GongRzhe+Office-Word-MCP-Server/repo"

HEAD_TOOLS = [
    "create_document", "copy_document", "get_document_info", "get_document_text",
    "get_document_outline", "list_available_documents", "get_document_xml",
    "insert_header_near_text", "insert_line_or_paragraph_near_text",
    "insert_numbered_list_near_text", "add_paragraph", "add_heading", "add_picture", "add_table",
    "add_page_break", "delete_paragraph", "search_and_replace", "create_custom_style",
    "format_text", "format_table", "set_table_cell_shading", "apply_table_alternating_rows",
    "highlight_table_header", "merge_table_cells", "merge_table_cells_horizontal",
    "merge_table_cells_vertical", "set_table_cell_alignment", "set_table_alignment_all",
    "protect_document", "unprotect_document", "add_footnote_to_document",
    "add_footnote_after_text", "add_footnote_before_text", "add_footnote_enhanced",
    "add_endnote_to_document", "customize_footnote_style", "delete_footnote_from_document",
    "add_footnote_robust", "validate_document_footnotes", "delete_footnote_robust",
    "get_paragraph_text_from_document", "find_text_in_document", "convert_to_pdf",
    "replace_paragraph_block_below_header", "replace_block_between_manual_anchors",
    "get_all_comments", "get_comments_by_author", "get_comments_for_paragraph",
    "set_table_column_width", "set_table_column_widths", "set_table_width",
    "auto_fit_table_columns", "format_table_cell_text", "set_table_cell_padding",
]
ONLY_HEAD = {"add_footnote_after_text", "add_footnote_before_text", "add_footnote_enhanced",
             "delete_footnote_from_document", "add_footnote_robust",
             "validate_document_footnotes", "delete_footnote_robust"}


class Checked(StdioClient):
    """Asserts a clean exit (ASan leak reports make the exit status non-zero)."""

    def __exit__(self, exc_type, *rest):
        rc = self.close()
        if exc_type is None:
            assert rc == 0, "server exit status %s; stderr:\n%s" % (rc, self.stderr())
        return False


def server(cwd, *extra):
    return Checked([MCPBOX_BIN, "mcp", "word", *extra], cwd=str(cwd), timeout=120)


@pytest.fixture
def root(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    return d


@pytest.fixture
def wd(root):
    with server(root) as c:
        c.initialize()

        def call(name, args, error=False):
            res = c.call(name, args)
            assert bool(res.get("isError")) == error, res
            assert "structuredContent" not in res
            return StdioClient.text(res)
        call.client = c
        yield call


def members(path):
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i.filename) for i in z.infolist()}


# ------------------------------------------------------------------ surface

def listed(root, *extra):
    with server(root, *extra) as c:
        init = c.initialize()
        tools = c.list_tools()
    return init, tools


def test_word_surface_head(root):
    init, tools = listed(root)
    assert init["serverInfo"]["name"] == "Word Document Server"
    assert [t["name"] for t in tools] == HEAD_TOOLS
    by = {t["name"]: t for t in tools}
    for t in tools:
        assert list(t) == ["name", "description", "inputSchema", "_meta"]
        assert t["_meta"] == {"_fastmcp": {"tags": []}}
        for prop in t["inputSchema"]["properties"].values():
            assert "title" not in prop
    assert by["add_paragraph"]["inputSchema"] == {
        "properties": {"filename": {"type": "string"}, "text": {"type": "string"},
                       "style": {"default": None, "type": "string"},
                       "font_name": {"default": None, "type": "string"},
                       "font_size": {"default": None, "type": "integer"},
                       "bold": {"default": None, "type": "boolean"},
                       "italic": {"default": None, "type": "boolean"},
                       "color": {"default": None, "type": "string"}},
        "required": ["filename", "text"], "type": "object"}
    assert by["list_available_documents"]["inputSchema"] == {
        "properties": {"directory": {"default": ".", "type": "string"}}, "type": "object"}
    assert by["add_table"]["inputSchema"]["properties"]["data"] == {
        "default": None, "items": {}, "type": "array"}
    assert by["replace_paragraph_block_below_header"]["inputSchema"]["properties"][
        "detect_block_end_fn"] == {"default": None}
    assert by["add_picture"]["inputSchema"]["properties"]["width"] == {"default": None, "type": "number"}
    assert by["add_footnote_robust"]["inputSchema"]["properties"]["footnote_text"] == {
        "default": "", "type": "string"}
    assert by["add_paragraph"]["description"].startswith(
        "Add a paragraph to a Word document with optional formatting.\n\nArgs:\n    filename: ")
    assert by["add_footnote_after_text"]["description"] == (
        "Add a footnote after specific text with proper superscript formatting.\n"
        "This enhanced function ensures footnotes display correctly as superscript.")
    assert by["replace_paragraph_block_below_header"]["description"] == (
        "Reemplaza el bloque de p\u00e1rrafos debajo de un encabezado, evitando modificar TOC.")


def test_word_surface_119(root):
    _, tools = listed(root, "--upstream-version", "1.1.9")
    assert [t["name"] for t in tools] == [n for n in HEAD_TOOLS if n not in ONLY_HEAD]
    by = {t["name"]: t for t in tools}
    assert by["add_paragraph"]["inputSchema"] == {
        "properties": {"filename": {"type": "string"}, "text": {"type": "string"},
                       "style": {"default": None, "type": "string"}},
        "required": ["filename", "text"], "type": "object"}
    assert list(by["add_heading"]["inputSchema"]["properties"]) == ["filename", "text", "level"]
    assert "bullet_type" not in by["insert_numbered_list_near_text"]["inputSchema"]["properties"]


@pytest.mark.skipif(not os.path.isdir(MIRROR), reason="upstream clone not on this machine")
def test_word_surface_provenance():
    """surface.c is exactly what gen_surface.py makes of the pinned commits."""
    src = os.path.join(HERE, "..", "..", "src", "servers", "word")
    out = subprocess.run(["/usr/bin/python3", os.path.join(src, "gen_surface.py"), MIRROR],
                         check=True, capture_output=True, text=True).stdout
    with open(os.path.join(src, "surface.c")) as f:
        assert f.read() == out


def test_word_validation(wd):
    text = wd("add_table", {"filename": "a", "rows": "x"}, error=True)
    assert text.startswith("2 validation errors for call[add_table]\nrows\n  Input should be a "
                           "valid integer, unable to parse string as an integer [type=int_parsing, "
                           "input_value='x', input_type=str]")
    assert "cols\n  Missing required argument [type=missing_argument" in text
    # lax coercion as pydantic does it: "2" is an int, "true" a bool
    assert wd("create_document", {"filename": "c"}) == "Document c.docx created successfully"
    assert wd("add_table", {"filename": "c", "rows": "2", "cols": 2.0}) == "Table (2x2) added to c.docx"
    assert "Unexpected keyword argument" in wd("get_document_text", {"filename": "c", "x": 1}, error=True)


# ------------------------------------------------------------- round trips

def python_docx_sample(path):
    d = docx.Document()
    d.core_properties.title = "Quarterly report"
    d.core_properties.author = "Ann"
    d.add_heading("Overview", level=1)
    p = d.add_paragraph("Revenue grew ")
    p.add_run("strongly").bold = True
    p.add_run(" in Q3.\tTabbed\nbroken")
    d.add_paragraph("Caf\u00e9 \u201cquoted\u201d text", style="List Bullet")
    t = d.add_table(rows=3, cols=3)
    for r in range(3):
        for c in range(3):
            t.cell(r, c).text = "r%dc%d" % (r, c)
    t.cell(0, 0).merge(t.cell(0, 1))
    t.cell(1, 2).merge(t.cell(2, 2))
    d.add_heading("Details", level=2)
    d.add_paragraph("x" * 150)
    d.save(str(path))


def expected_text(path):
    d = docx.Document(str(path))
    out = [p.text for p in d.paragraphs]
    for t in d.tables:
        for row in t.rows:
            for cell in row.cells:
                out.extend(p.text for p in cell.paragraphs)
    return "\n".join(out)


def test_word_reads_python_docx_files(wd, root):
    python_docx_sample(root / "r.docx")
    assert wd("get_document_text", {"filename": "r.docx"}) == expected_text(root / "r.docx")
    info = json.loads(wd("get_document_info", {"filename": "r"}))
    d = docx.Document(str(root / "r.docx"))
    assert info == {"title": "Quarterly report", "author": "Ann", "subject": "", "keywords": "",
                    "created": str(d.core_properties.created),
                    "modified": str(d.core_properties.modified),
                    "last_modified_by": d.core_properties.last_modified_by or "",
                    "revision": d.core_properties.revision,
                    "page_count": 1,
                    "word_count": sum(len(p.text.split()) for p in d.paragraphs),
                    "paragraph_count": len(d.paragraphs), "table_count": 1}
    outline_text = wd("get_document_outline", {"filename": "r"})
    outline = json.loads(outline_text)
    assert "\\u201c" in outline_text  # json.dumps escapes non-ASCII
    assert [(p["text"], p["style"]) for p in outline["paragraphs"]] == [
        (p.text[:100] + ("..." if len(p.text) > 100 else ""), p.style.name) for p in d.paragraphs]
    tbl = outline["tables"][0]
    assert (tbl["rows"], tbl["columns"]) == (3, 3)
    assert tbl["preview"] == [[d.tables[0].cell(r, c).text for c in range(3)] for r in range(3)]
    para = json.loads(wd("get_paragraph_text_from_document", {"filename": "r", "paragraph_index": 0}))
    assert para == {"index": 0, "text": "Overview", "style": "Heading 1", "is_heading": True}
    found = json.loads(wd("find_text_in_document", {"filename": "r", "text_to_find": "R0C",
                                                      "match_case": False}))
    # the merged cell ("r0c0\nr0c1") is seen twice, as row.cells repeats it
    assert found["total_count"] == 5
    assert found["occurrences"][0]["location"] == "Table 0, Row 0, Column 0"
    words = json.loads(wd("find_text_in_document", {"filename": "r", "text_to_find": "grew",
                                                      "whole_word": True}))
    assert words["occurrences"] == [{"paragraph_index": 1, "position": 1,
                                     "context": d.paragraphs[1].text}]
    xml = wd("get_document_xml", {"filename": "r"})
    assert xml == members(root / "r.docx")["word/document.xml"].decode()
    listing = wd("list_available_documents", {"directory": str(root)})
    size = os.path.getsize(root / "r.docx") / 1024
    assert listing == "Found 1 Word documents in %s:\n- r.docx (%.2f KB)\n" % (root, size)


def test_word_writes_for_python_docx(wd, root):
    assert wd("create_document", {"filename": "w", "title": "T", "author": "Me"}) == \
        "Document w.docx created successfully"
    before = members(root / "w.docx")
    assert wd("add_heading", {"filename": "w", "text": "Title", "level": 2, "font_name": "Calibri",
                              "font_size": 14, "bold": True}) == "Heading 'Title' (level 2) added to w.docx"
    assert wd("add_paragraph", {"filename": "w", "text": "Hello  world\tagain", "italic": True,
                                "color": "#1f4e79"}) == "Paragraph added to w.docx"
    assert wd("add_paragraph", {"filename": "w", "text": "styled", "style": "No Such"}) == \
        "Style 'No Such' not found, paragraph added with default style to w.docx"
    assert wd("add_table", {"filename": "w", "rows": 2, "cols": 2,
                            "data": [["Overall Assessment", "Recommendation"], ["80%", 1]]}) == \
        "Table (2x2) added to w.docx"
    assert wd("add_page_break", {"filename": "w"}) == "Page break added to w.docx."
    assert wd("search_and_replace", {"filename": "w", "find_text": "again", "replace_text": "AGAIN"}) == \
        "Replaced 1 occurrence(s) of 'again' with 'AGAIN'."
    assert wd("search_and_replace", {"filename": "w", "find_text": "zzz", "replace_text": "y"}) == \
        "No occurrences of 'zzz' found."
    assert wd("format_text", {"filename": "w", "paragraph_index": 1, "start_pos": 0, "end_pos": 5,
                              "bold": True, "underline": True, "color": "red", "font_size": 12}) == \
        "Text 'Hello' formatted successfully in paragraph 1."
    assert wd("format_text", {"filename": "w", "paragraph_index": 1, "start_pos": 3, "end_pos": 99}) == \
        "Invalid text positions. Paragraph has 18 characters."
    assert wd("set_table_cell_shading", {"filename": "w", "table_index": 0, "row_index": 0,
                                         "col_index": 1, "fill_color": "#d9d9d9"}) == \
        "Cell shading applied successfully to table 0, row 0, column 1."
    assert wd("format_table", {"filename": "w", "table_index": 0, "has_header_row": True,
                               "border_style": "double", "shading": [["", ""], ["DAEEF3"]]}) == \
        "Table at index 0 formatted successfully."
    assert wd("set_table_alignment_all", {"filename": "w", "table_index": 0, "horizontal": "center"}) == \
        "Table alignment set successfully for table 0 to center/top for all cells."
    assert wd("set_table_cell_alignment", {"filename": "w", "table_index": 0, "row_index": 1,
                                           "col_index": 1, "horizontal": "right",
                                           "vertical": "bottom"}) == \
        "Cell alignment set successfully for table 0, cell (1,1) to right/bottom."
    assert wd("create_custom_style", {"filename": "w", "style_name": "Mine", "bold": True}) == \
        "Style 'Mine' created successfully."
    assert wd("delete_paragraph", {"filename": "w", "paragraph_index": 2}) == \
        "Paragraph at index 2 deleted successfully."
    assert wd("copy_document", {"source_filename": "w"}) == "Document copied to w_copy.docx"

    d = docx.Document(str(root / "w.docx"))
    assert d.core_properties.title == "T" and d.core_properties.author == "Me"
    ps = d.paragraphs
    assert [p.style.name for p in ps[:2]] == ["Heading 2", "Normal"]
    assert ps[0].text == "Title"
    r = ps[0].runs[0]
    assert (r.font.name, r.font.size.pt, r.bold) == ("Calibri", 14.0, True)
    assert ps[1].text == "Hello  world\tAGAIN"
    runs = [x for x in ps[1].runs if x.text]
    assert runs[0].text == "Hello" and runs[0].bold and runs[0].underline
    assert str(runs[0].font.color.rgb) == "FF0000" and runs[0].font.size.pt == 12
    assert runs[1].text == "  world\tAGAIN"
    t = d.tables[0]
    assert t.style.name == "Table Grid"
    assert [[c.text for c in row.cells] for row in t.rows] == [
        ["Overall Assessment", "Recommendation"], ["80%", "1"]]
    assert t.rows[0].cells[0].paragraphs[0].runs[0].bold
    tcpr = t.rows[0].cells[1]._tc.tcPr
    shd = tcpr.find("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}shd")
    q = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    assert shd.get(q + "fill") == "D9D9D9" and shd.get(q + "val") == "clear"
    fills = [s.get(q + "fill") for s in t.rows[1].cells[0]._tc.tcPr.iter(q + "shd")]
    assert fills == ["DAEEF3"]
    assert t.rows[0].cells[0].paragraphs[0].alignment == 1  # CENTER
    assert t.rows[1].cells[1].paragraphs[0].alignment == 2  # RIGHT
    assert t.rows[1].cells[1]._tc.tcPr.find(q + "vAlign").get(q + "val") == "bottom"
    borders = t.rows[0].cells[0]._tc.tcPr.find(q + "tcBorders")
    assert [b.get(q + "val") for b in borders] == ["double"] * 4
    # index 2 was the "styled" paragraph; the page break stays (python-docx 0.8.11
    # reads a page break as "\n", 1.x as "")
    assert [p.text for p in ps[:2]] == ["Title", "Hello  world\tAGAIN"]
    assert len(ps) == 3 and ps[2].text in ("", "\n")
    assert ps[2].runs[0]._r.xml.count('w:type="page"') == 1
    after = members(root / "w.docx")
    changed = {n for n in before if before[n] != after.get(n)}
    assert changed == {"word/document.xml"}
    assert set(after) == set(before)
    assert members(root / "w_copy.docx") == after


def test_word_untouched_parts_identical(wd, root):
    python_docx_sample(root / "u.docx")
    before = members(root / "u.docx")
    wd("add_paragraph", {"filename": "u", "text": "more"})
    after = members(root / "u.docx")
    assert {n for n in before if before[n] != after[n]} == {"word/document.xml"}
    assert docx.Document(str(root / "u.docx")).paragraphs[-1].text == "more"


def test_word_errors_like_upstream(wd, root):
    assert wd("get_document_text", {"filename": "none"}) == "Document none.docx does not exist"
    assert wd("add_paragraph", {"filename": "none", "text": "x"}) == "Document none.docx does not exist"
    assert wd("add_heading", {"filename": "none", "text": "x", "level": 0}) == \
        "Invalid heading level: 0. Level must be between 1 and 9."
    assert wd("create_document", {"filename": "nodir/x"}) == \
        "Cannot create document: Directory nodir does not exist"
    wd("create_document", {"filename": "e"})
    assert wd("delete_paragraph", {"filename": "e", "paragraph_index": 0}) == \
        "Invalid paragraph index. Document has 0 paragraphs (0--1)."
    assert wd("format_table", {"filename": "e", "table_index": 0}) == \
        "Invalid table index. Document has 0 tables (0--1)."
    assert json.loads(wd("get_paragraph_text_from_document", {"filename": "e", "paragraph_index": 3})) == \
        {"error": "Invalid paragraph index: 3. Document has 0 paragraphs."}
    assert wd("get_paragraph_text_from_document", {"filename": "e", "paragraph_index": -1}) == \
        "Invalid parameter: paragraph_index must be a non-negative integer"
    assert wd("find_text_in_document", {"filename": "e", "text_to_find": ""}) == "Search text cannot be empty"
    assert wd("list_available_documents", {"directory": "nope"}) == "Directory nope does not exist"
    os.chmod(root / "e.docx", 0o444)
    if os.geteuid() != 0:
        assert wd("add_page_break", {"filename": "e"}) == (
            "Cannot modify document: File e.docx is not writeable (permission denied). "
            "Consider creating a copy first.")


# ----------------------------------------------------------------- hostile

def write_zip(path, entries, compress=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compress) as z:
        for name, data in entries.items():
            z.writestr(name, data)


def base_entries():
    buf = io.BytesIO()
    docx.Document().save(buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        return {n: z.read(n) for n in z.namelist()}


def test_word_hostile_files(wd, root):
    (root / "junk.docx").write_bytes(b"not a zip at all")
    assert wd("get_document_text", {"filename": "junk"}) == "Failed to extract text: File is not a zip file"
    assert json.loads(wd("get_document_info", {"filename": "junk"})) == {
        "error": "Failed to get document properties: File is not a zip file"}

    good = base_entries()
    raw = io.BytesIO()
    write_zip(raw, good)
    (root / "trunc.docx").write_bytes(raw.getvalue()[:len(raw.getvalue()) // 2])
    assert wd("get_document_text", {"filename": "trunc"}).startswith("Failed to extract text: ")

    bomb = dict(good)
    bomb["word/document.xml"] = good["word/document.xml"].replace(
        b"<w:body>", b"<w:body><!--" + b" " * (64 << 20) + b"-->")
    write_zip(root / "bomb.docx", bomb)
    text = wd("get_document_text", {"filename": "bomb"})
    assert text.startswith("Failed to extract text: ") and "zip file" not in text

    ent = dict(good)
    ent["word/document.xml"] = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
                                b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>' + good["word/document.xml"].split(b"?>", 1)[1])
    write_zip(root / "ent.docx", ent)
    assert wd("get_document_text", {"filename": "ent"}).startswith("Failed to extract text: ")

    norels = {k: v for k, v in good.items() if k != "_rels/.rels"}
    write_zip(root / "norels.docx", norels)
    assert wd("get_document_outline", {"filename": "norels"}).startswith('{\n  "error": "Failed to get')

    docm = dict(good)
    docm["[Content_Types].xml"] = good["[Content_Types].xml"].replace(
        b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
        b"application/vnd.ms-word.document.macroEnabled.main+xml")
    docm["word/vbaProject.bin"] = b"\xd0\xcf\x11\xe0 macro"
    write_zip(root / "macro.docx", docm)
    assert wd("add_paragraph", {"filename": "macro", "text": "x"}) == (
        "Failed to add paragraph: file 'macro.docx' is not a Word file, content type is "
        "'application/vnd.ms-word.document.macroEnabled.main+xml'")
    assert members(root / "macro.docx")["word/vbaProject.bin"] == b"\xd0\xcf\x11\xe0 macro"
    # the server is still there
    assert wd("get_document_text", {"filename": "none"}) == "Document none.docx does not exist"


# ----------------------------------------------------------------- picture

def png_bytes(w, h, ppm=None):
    import struct
    import zlib

    def chunk(t, data):
        return struct.pack(">I", len(data)) + t + data + struct.pack(">I", zlib.crc32(t + data))
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * w for _ in range(h))
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    if ppm:
        out += chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1))
    return out + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_word_add_picture(wd, root):
    (root / "img.png").write_bytes(png_bytes(40, 20, ppm=3780))  # 96 dpi
    (root / "plain.png").write_bytes(png_bytes(30, 30))
    (root / "bad.png").write_bytes(b"GIF but not really")
    wd("create_document", {"filename": "pic"})
    before = members(root / "pic.docx")
    assert wd("add_picture", {"filename": "pic", "image_path": "img.png", "width": 2.5}) == \
        "Picture img.png added to pic.docx"
    assert wd("add_picture", {"filename": "pic", "image_path": str(root / "img.png")}) == \
        "Picture %s added to pic.docx" % (root / "img.png")
    assert wd("add_picture", {"filename": "pic", "image_path": "plain.png"}) == \
        "Picture plain.png added to pic.docx"
    assert wd("add_picture", {"filename": "pic", "image_path": "nope.png"}) == \
        "Image file not found: %s" % (root / "nope.png")
    text = wd("add_picture", {"filename": "pic", "image_path": "bad.png"})
    assert text.startswith("Failed to add picture: UnrecognizedImageError - No error details "
                           "available\nDiagnostic info: Attempting to add image (%s" % (root / "bad.png"))
    after = members(root / "pic.docx")
    media = sorted(n for n in after if n.startswith("word/media/"))
    assert media == ["word/media/image1.png", "word/media/image2.png"]  # the same image once
    assert after["word/media/image1.png"] == (root / "img.png").read_bytes()
    assert {n for n in before if before[n] != after[n]} == {
        "word/document.xml", "word/_rels/document.xml.rels", "[Content_Types].xml"}

    # sizes and ids as python-docx computes them for the same calls
    ref = docx.Document()
    ref.add_picture(str(root / "img.png"), width=docx.shared.Inches(2.5))
    ref.add_picture(str(root / "img.png"))
    ref.add_picture(str(root / "plain.png"))
    d = docx.Document(str(root / "pic.docx"))
    got = [(s.width, s.height) for s in d.inline_shapes]
    assert got == [(s.width, s.height) for s in ref.inline_shapes]
    assert [s._inline.docPr.id for s in d.inline_shapes] == [1, 2, 3]
    blobs = [d.part.related_parts[s._inline.graphic.graphicData.pic.blipFill.blip.embed].blob
             for s in d.inline_shapes]
    assert blobs[0] == blobs[1] == (root / "img.png").read_bytes()


# ------------------------------------------------------ tables and inserts

def grid_doc(path, rows=4, cols=4):
    d = docx.Document()
    d.add_paragraph("before")
    t = d.add_table(rows=rows, cols=cols)
    for r in range(rows):
        for c in range(cols):
            t.cell(r, c).text = "%d%d" % (r, c)
    d.save(str(path))


def table_shape(path):
    """Every w:tc as (gridSpan, vMerge, width, paragraph texts), row by row."""
    d = docx.Document(str(path))
    out = []
    for tr in d.tables[0]._tbl.tr_lst:
        row = []
        for tc in tr.tc_lst:
            pr = tc.tcPr
            span = pr.find(W + "gridSpan") if pr is not None else None
            vm = pr.find(W + "vMerge") if pr is not None else None
            tcw = pr.find(W + "tcW") if pr is not None else None
            row.append((span.get(W + "val") if span is not None else None,
                        (vm.get(W + "val") or "continue") if vm is not None else None,
                        tcw.get(W + "w") if tcw is not None else None,
                        [p.text for p in tc.iter(W + "p")]))
        out.append(row)
    return out


W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


@pytest.mark.parametrize("tool,args,cells", [
    ("merge_table_cells", {"start_row": 0, "start_col": 0, "end_row": 1, "end_col": 1},
     ((0, 0), (1, 1))),
    ("merge_table_cells", {"start_row": 1, "start_col": 1, "end_row": 3, "end_col": 2},
     ((1, 1), (3, 2))),
    ("merge_table_cells_horizontal", {"row_index": 2, "start_col": 0, "end_col": 3}, ((2, 0), (2, 3))),
    ("merge_table_cells_vertical", {"col_index": 3, "start_row": 0, "end_row": 2}, ((0, 3), (2, 3))),
])
def test_word_merges_like_python_docx(wd, root, tool, args, cells):
    grid_doc(root / "m.docx")
    grid_doc(root / "ref.docx")
    text = wd(tool, dict(args, filename="m", table_index=0))
    assert "merged" in text and "successfully" in text or "horizontally" in text or "vertically" in text
    ref = docx.Document(str(root / "ref.docx"))
    t = ref.tables[0]
    (r1, c1), (r2, c2) = cells
    t.cell(r1, c1).merge(t.cell(r2, c2))
    ref.save(str(root / "ref.docx"))
    assert table_shape(root / "m.docx") == table_shape(root / "ref.docx")
    got, want = docx.Document(str(root / "m.docx")).tables[0], ref.tables[0]
    assert [[c.text for c in r.cells] for r in got.rows] == [[c.text for c in r.cells] for r in want.rows]


def test_word_table_tools(wd, root):
    grid_doc(root / "t.docx", 3, 2)
    assert wd("merge_table_cells", {"filename": "t", "table_index": 0, "start_row": 1, "start_col": 1,
                                    "end_row": 0, "end_col": 1}) == \
        "Invalid merge range: start indices must be <= end indices"
    assert wd("merge_table_cells", {"filename": "t", "table_index": 0, "start_row": 0, "start_col": 0,
                                    "end_row": 0, "end_col": 5}) == \
        "Failed to merge cells. Check that indices are valid."
    assert wd("apply_table_alternating_rows", {"filename": "t", "table_index": 0}) == \
        "Alternating row shading applied successfully to table 0."
    assert wd("highlight_table_header", {"filename": "t", "table_index": 0, "header_color": "#123abc"}) == \
        "Header highlighting applied successfully to table 0."
    t = docx.Document(str(root / "t.docx")).tables[0]
    fills = [[c._tc.tcPr.find(W + "shd").get(W + "fill") for c in r.cells] for r in t.rows]
    assert fills == [["123ABC"] * 2, ["F2F2F2"] * 2, ["FFFFFF"] * 2]
    run = t.rows[0].cells[0].paragraphs[0].runs[0]
    assert run.bold and str(run.font.color.rgb) == "FFFFFF"


def test_word_insert_near_text(wd, root):
    d = docx.Document()
    for text in ("Intro", "Anchor here", "Outro"):
        d.add_paragraph(text)
    d.save(str(root / "i.docx"))
    assert wd("insert_header_near_text", {"filename": "i", "target_text": "Anchor",
                                          "header_title": "New H", "position": "before"}) == \
        "Header 'New H' (style: Heading 1) inserted before the target paragraph."
    assert wd("insert_header_near_text", {"filename": "i", "target_paragraph_index": 0,
                                          "header_title": "Top", "header_style": "Title"}) == \
        "Header 'Top' (style: Title) inserted after paragraph (index 0)."
    assert wd("insert_header_near_text", {"filename": "i", "target_text": "zzz", "header_title": "x"}) == \
        "Target paragraph not found (by index or text). (TOC paragraphs are skipped in text search)"
    assert wd("insert_header_near_text", {"filename": "i", "target_paragraph_index": 99}) == \
        "Invalid target_paragraph_index: 99. Document has 5 paragraphs."
    assert wd("insert_line_or_paragraph_near_text", {"filename": "i", "target_text": "Outro",
                                                     "line_text": "After outro", "line_style": "Quote"}) == \
        "Line/paragraph inserted after the target paragraph with style 'Quote'."
    text = wd("insert_line_or_paragraph_near_text", {"filename": "i", "target_paragraph_index": 0,
                                                     "line_text": "same style"})
    assert text.startswith("Line/paragraph inserted after paragraph (index 0) with style "
                           "'_ParagraphStyle('Normal') id: ")
    assert wd("insert_numbered_list_near_text", {"filename": "i", "target_text": "Anchor",
                                                 "list_items": ["one", "two"], "bullet_type": "number"}) == \
        "Numbered list with 2 items inserted after the target paragraph."
    assert wd("insert_numbered_list_near_text", {"filename": "i", "target_paragraph_index": 0,
                                                 "list_items": ["a", "b"], "position": "before"}) == \
        "Bulleted list with 2 items inserted before paragraph (index 0)."
    ps = docx.Document(str(root / "i.docx")).paragraphs
    assert [(p.text, p.style.name) for p in ps] == [
        ("b", "List Paragraph"), ("a", "List Paragraph"),  # "before" reverses, as upstream does
        ("Intro", "Normal"), ("same style", "Normal"), ("Top", "Title"), ("New H", "Heading 1"),
        ("Anchor here", "Normal"), ("one", "List Paragraph"), ("two", "List Paragraph"),
        ("Outro", "Normal"), ("After outro", "Quote")]
    num = ps[7]._p.pPr.numPr
    assert (num.ilvl.val, num.numId.val) == (0, 2)


def test_word_insert_list_119(root):
    d = docx.Document()
    d.add_paragraph("Anchor")
    d.save(str(root / "l.docx"))
    with server(root, "--upstream-version", "1.1.9") as c:
        c.initialize()
        res = c.call("insert_numbered_list_near_text", {"filename": "l", "target_text": "Anchor",
                                                        "list_items": ["x"]})
        assert StdioClient.text(res) == "Numbered list inserted after the target paragraph."
        res = c.call("add_paragraph", {"filename": "l", "text": "t", "bold": True})
        assert res["isError"] and "Unexpected keyword argument" in StdioClient.text(res)
    ps = docx.Document(str(root / "l.docx")).paragraphs
    assert [(p.text, p.style.name) for p in ps] == [("Anchor", "Normal"), ("x", "List Number")]
    assert ps[1]._p.pPr.numPr is None


# ------------------------------------------------------- comments, notes

COMMENTS = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            b'<w:comments xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
            b'<w:comment w:id="0" w:author="Ann Lee" w:initials="AL" w:date="2024-01-01T10:00:00Z">'
            b'<w:p><w:r><w:t xml:space="preserve"> Check this </w:t></w:r></w:p>'
            b'<w:p><w:r><w:t>figure</w:t></w:r></w:p></w:comment>'
            b'<w:comment w:id="3" w:author="bob"><w:p><w:r><w:t>Caf\xc3\xa9?</w:t></w:r></w:p></w:comment>'
            b'</w:comments>')


def with_comments(path):
    d = docx.Document()
    d.add_paragraph("Commented paragraph")
    buf = io.BytesIO()
    d.save(buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    parts["word/comments.xml"] = COMMENTS
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
        b"</Types>", b'<Override PartName="/word/comments.xml" ContentType="application/'
        b'vnd.openxmlformats-officedocument.wordprocessingml.comments+xml"/></Types>')
    parts["word/_rels/document.xml.rels"] = parts["word/_rels/document.xml.rels"].replace(
        b"</Relationships>", b'<Relationship Id="rId99" Type="http://schemas.openxmlformats.org/'
        b'officeDocument/2006/relationships/comments" Target="comments.xml"/></Relationships>')
    write_zip(path, parts)


def test_word_comments(wd, root):
    with_comments(root / "c.docx")
    text = wd("get_all_comments", {"filename": "c"})
    assert "Caf\\u00e9?" in text
    assert json.loads(text) == {"success": True, "total_comments": 2, "comments": [
        {"id": "comment_1", "comment_id": "0", "author": "Ann Lee", "initials": "AL",
         "date": "2024-01-01T10:00:00+00:00", "text": "Check this figure", "paragraph_index": None,
         "in_table": False, "reference_text": ""},
        {"id": "comment_2", "comment_id": "3", "author": "bob", "initials": "", "date": None,
         "text": "Caf\u00e9?", "paragraph_index": None, "in_table": False, "reference_text": ""}]}
    by = json.loads(wd("get_comments_by_author", {"filename": "c", "author": "BOB"}))
    assert by["author"] == "BOB" and by["total_comments"] == 1 and by["comments"][0]["comment_id"] == "3"
    assert json.loads(wd("get_comments_by_author", {"filename": "c", "author": "  "})) == {
        "success": False, "error": "Author name cannot be empty"}
    assert json.loads(wd("get_comments_for_paragraph", {"filename": "c", "paragraph_index": 0})) == {
        "success": True, "paragraph_index": 0, "paragraph_text": "Commented paragraph",
        "comments": [], "total_comments": 0}
    assert json.loads(wd("get_comments_for_paragraph", {"filename": "c", "paragraph_index": 5})) == {
        "success": False, "error": "Paragraph index 5 is out of range. Document has 1 paragraphs."}
    assert json.loads(wd("get_all_comments", {"filename": "none"})) == {
        "success": False, "error": "Document none.docx does not exist"}
    wd("create_document", {"filename": "plain"})
    assert json.loads(wd("get_all_comments", {"filename": "plain"})) == {
        "success": True, "comments": [], "total_comments": 0}


def test_word_fake_notes(wd, root):
    wd("create_document", {"filename": "n"})
    wd("add_paragraph", {"filename": "n", "text": "Body"})
    assert wd("add_footnote_to_document", {"filename": "n", "paragraph_index": 0, "footnote_text": "A note"}) == \
        "Footnote added to paragraph 0 in n.docx (simplified approach)"
    assert wd("add_footnote_to_document", {"filename": "n", "paragraph_index": 0, "footnote_text": "B"}) == \
        "Footnote added to paragraph 0 in n.docx (simplified approach)"
    assert wd("add_endnote_to_document", {"filename": "n", "paragraph_index": 0, "endnote_text": "E"}) == \
        "Endnote added to paragraph 0 in n.docx"
    assert wd("add_endnote_to_document", {"filename": "n", "paragraph_index": 9, "endnote_text": "E"}) == \
        "Invalid paragraph index. Document has 8 paragraphs (0-7)."
    ps = docx.Document(str(root / "n.docx")).paragraphs
    texts = [p.text for p in ps]
    assert texts[0] == "Body\u00b9\u00b9\u2020"
    assert texts[2:5] == ["Footnotes:", "\u00b9 A note", "\u00b9 B"]
    assert texts[6:] == ["Endnotes:", "\u2020 E"] and ps[6].style.name == "Heading 1"
    assert [r.font.superscript for r in ps[0].runs] == [None, None, True, None, True, True]


def test_word_width_and_cell_tools(wd, root):
    grid_doc(root / "w.docx", 2, 3)
    assert wd("set_table_column_width", {"filename": "w", "table_index": 0, "col_index": 1, "width": 1.5,
                                         "width_type": "inches"}) == \
        "Column width set successfully for table 0, column 1 to 1.5 inches."
    assert wd("set_table_column_width", {"filename": "w", "table_index": 0, "col_index": 7, "width": 1}) == \
        "Invalid column index. Table has 3 columns (0-2)."
    assert wd("set_table_column_width", {"filename": "w", "table_index": 0, "col_index": 0, "width": 1,
                                         "width_type": "px"}) == \
        "Invalid width type. Valid options: points, inches, cm, percent, auto"
    assert wd("set_table_column_widths", {"filename": "w", "table_index": 0, "widths": [72, "36", 10, 99],
                                          "width_type": "points"}) == \
        "Column widths set successfully for table 0 with 4 columns in points."
    assert wd("set_table_width", {"filename": "w", "table_index": 0, "width": 80, "width_type": "percent"}) == \
        "Table width set successfully for table 0 to 80.0 percent."
    t = docx.Document(str(root / "w.docx")).tables[0]
    widths = [[(c._tc.tcPr.find(W + "tcW").get(W + "w"), c._tc.tcPr.find(W + "tcW").get(W + "type"))
               for c in r.cells] for r in t.rows]
    assert widths == [[("1440", "dxa"), ("720", "dxa"), ("200", "dxa")]] * 2
    tblw = t._tbl.tblPr.find(W + "tblW")
    assert (tblw.get(W + "w"), tblw.get(W + "type")) == ("4000", "pct")
    assert wd("auto_fit_table_columns", {"filename": "w", "table_index": 0}) == \
        "Table 0 set to auto-fit columns based on content."
    t = docx.Document(str(root / "w.docx")).tables[0]
    assert t._tbl.tblPr.find(W + "tblLayout").get(W + "type") == "autofit"
    assert {c._tc.tcPr.find(W + "tcW").get(W + "type") for r in t.rows for c in r.cells} == {"auto"}

    assert wd("format_table_cell_text", {"filename": "w", "table_index": 0, "row_index": 1, "col_index": 2,
                                         "text_content": "x" * 40, "bold": True, "color": "#00ff00",
                                         "font_size": 9, "font_name": "Arial"}) == (
        "Cell text formatted successfully in table 0, cell (1,2): content='%s...', bold=True, "
        "color=#00ff00, size=9pt, font=Arial." % ("x" * 30))
    assert wd("format_table_cell_text", {"filename": "w", "table_index": 0, "row_index": 0,
                                         "col_index": 0}) == \
        "Cell text formatted successfully in table 0, cell (0,0): no changes."
    assert wd("format_table_cell_text", {"filename": "w", "table_index": 0, "row_index": 5,
                                         "col_index": 0}) == "Invalid row index. Table has 2 rows (0-1)."
    assert wd("set_table_cell_padding", {"filename": "w", "table_index": 0, "row_index": 0, "col_index": 1,
                                         "top": 5, "left": 2.5}) == \
        "Cell padding set successfully for table 0, cell (0,1): top=5.0, left=2.5 points."
    assert wd("set_table_cell_padding", {"filename": "w", "table_index": 0, "row_index": 0, "col_index": 1,
                                         "unit": "cm"}) == "Invalid unit. Valid options: points, percent"
    t = docx.Document(str(root / "w.docx")).tables[0]
    cell = t.rows[1].cells[2]
    run = cell.paragraphs[0].runs[0]
    assert cell.text == "x" * 40 and run.bold and run.font.size.pt == 9 and run.font.name == "Arial"
    assert str(run.font.color.rgb) == "00FF00"
    mar = t.rows[0].cells[1]._tc.tcPr.find(W + "tcMar")
    assert [(m.tag.split("}")[1], m.get(W + "w"), m.get(W + "type")) for m in mar] == [
        ("top", "100", "dxa"), ("left", "50", "dxa")]


def test_word_replace_blocks(wd, root):
    d = docx.Document()
    d.add_heading("Intro", 1)
    d.add_paragraph("old 1")
    d.add_table(rows=1, cols=1).cell(0, 0).text = "kept table"
    d.add_paragraph("old 2")
    d.add_heading("Next", 1)
    d.add_paragraph("START")
    d.add_paragraph("mid")
    d.add_paragraph("END")
    d.add_paragraph("tail").runs[0].bold = True
    d.save(str(root / "b.docx"))
    assert wd("replace_paragraph_block_below_header", {"filename": "b.docx", "header_text": " intro ",
                                                       "new_paragraphs": ["new A", "new B"]}) == \
        "Replaced content under ' intro ' with 2 paragraph(s), style: Normal, removed 2 elements."
    assert wd("replace_paragraph_block_below_header", {"filename": "b.docx", "header_text": "nope",
                                                       "new_paragraphs": []}) == \
        "Header 'nope' not found in document."
    assert wd("replace_paragraph_block_below_header", {"filename": "b", "header_text": "x",
                                                       "new_paragraphs": []}) == "Document b not found."
    assert wd("replace_block_between_manual_anchors", {"filename": "b.docx", "start_anchor_text": "START",
                                                       "end_anchor_text": "END",
                                                       "new_paragraphs": ["between"],
                                                       "new_paragraph_style": "Quote"}) == \
        "Replaced content between 'START' and 'END' with 1 paragraph(s), style: Quote, removed 1 elements."
    assert wd("replace_block_between_manual_anchors", {"filename": "b.docx", "start_anchor_text": "END",
                                                       "new_paragraphs": ["last"]}) == \
        "Replaced content between 'END' and 'next logical header' with 1 paragraph(s), style: Normal, " \
        "removed 0 elements."
    text = wd("replace_block_between_manual_anchors", {"filename": "b.docx", "start_anchor_text": "END",
                                                       "new_paragraphs": [], "match_fn": "x"}, error=True)
    assert text == "Error calling tool 'replace_block_between_manual_anchors': 'str' object is not callable"
    got = docx.Document(str(root / "b.docx"))
    assert [p.text for p in got.paragraphs] == ["Intro", "new A", "new B", "Next", "START", "between",
                                                "END", "last", "tail"]
    assert got.paragraphs[5].style.name == "Quote"
    assert len(got.tables) == 1 and got.tables[0].cell(0, 0).text == "kept table"


@pytest.mark.parametrize("version", [None, "1.1.9"])
def test_word_convert_to_pdf_without_libreoffice(root, version):
    extra = ("--upstream-version", version) if version else ()
    with Checked([MCPBOX_BIN, "mcp", "word", *extra], cwd=str(root), timeout=60,
                 env=dict(os.environ, PATH="/nonexistent")) as c:
        c.initialize()
        assert StdioClient.text(c.call("create_document", {"filename": "q"})) == \
            "Document q.docx created successfully"
        text = StdioClient.text(c.call("convert_to_pdf", {"filename": "q"}))
    tail = ("To convert documents to PDF, please install either:\n"
            "1. LibreOffice (recommended for Linux/macOS)\n"
            "2. Microsoft Word (required for docx2pdf on Windows/macOS)")
    if version:
        assert text == (
            "Failed to convert document to PDF using LibreOffice or docx2pdf.\n"
            "LibreOffice errors: libreoffice error: [Errno 2] No such file or directory: 'libreoffice'; "
            "soffice error: [Errno 2] No such file or directory: 'soffice'\n"
            "docx2pdf error: No module named 'docx2pdf'\n" + tail)
    else:
        assert text == (
            "Failed to convert document to PDF using all available methods.\n"
            "Recorded errors: Command 'libreoffice' not found.; Command 'soffice' not found.; "
            "docx2pdf is not installed, skipping fallback.\n" + tail)


# -------------------------------------------------------------- protection

def test_word_protect_unprotect(wd, root):
    msoffcrypto = pytest.importorskip("msoffcrypto")
    python_docx_sample(root / "s.docx")
    original = (root / "s.docx").read_bytes()
    assert wd("protect_document", {"filename": "s", "password": "p\u00e4ss w0rd"}) == \
        "Document s.docx encrypted successfully with password."
    enc = (root / "s.docx").read_bytes()
    assert enc.startswith(b"\xd0\xcf\x11\xe0")
    # Debian's msoffcrypto-tool, an independent implementation, opens it
    f = msoffcrypto.OfficeFile(io.BytesIO(enc))
    f.load_key(password="p\u00e4ss w0rd", verify_password=True)
    out = io.BytesIO()
    f.decrypt(out)
    assert out.getvalue() == original
    assert wd("get_document_text", {"filename": "s"}) == "Failed to extract text: File is not a zip file"
    assert wd("protect_document", {"filename": "s", "password": "x"}) == \
        "Failed to encrypt document s.docx: File is already encrypted. Original file restored."
    assert wd("unprotect_document", {"filename": "s", "password": "wrong"}) == \
        "Failed to decrypt document s.docx: Incorrect password."
    assert (root / "s.docx").read_bytes() == enc
    assert wd("unprotect_document", {"filename": "s", "password": "p\u00e4ss w0rd"}) == \
        "Document s.docx decrypted successfully."
    assert (root / "s.docx").read_bytes() == original
    assert wd("unprotect_document", {"filename": "s", "password": "x"}) == \
        "Failed to decrypt document s.docx: File is not encrypted or is not a supported Office format."
    # a hostile compound file: the signature, then garbage
    (root / "ole.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + os.urandom(3000))
    text = wd("unprotect_document", {"filename": "ole", "password": "x"})
    assert text == "Failed to decrypt document ole.docx: File is not encrypted or is not a supported Office format."
    # a small package (streams under the mini-stream cutoff) round-trips too
    write_zip(root / "tiny.docx", {"a.txt": b"x" * 100})
    tiny = (root / "tiny.docx").read_bytes()
    assert wd("protect_document", {"filename": "tiny", "password": "t"}).endswith("successfully with password.")
    f = msoffcrypto.OfficeFile(io.BytesIO((root / "tiny.docx").read_bytes()))
    f.load_key(password="t", verify_password=True)
    out = io.BytesIO()
    f.decrypt(out)
    assert out.getvalue() == tiny


# --------------------------------------------------------- real footnotes

def test_word_real_footnotes(root):
    d = docx.Document()
    d.add_paragraph("First paragraph with target words")
    d.add_paragraph("Second one")
    t = d.add_table(rows=1, cols=1)
    t.cell(0, 0).text = "in a cell"
    d.save(str(root / "f.docx"))
    with server(root) as c:
        c.initialize()

        def text(name, args):
            res = c.call(name, args)
            assert not res.get("isError"), res
            return StdioClient.text(res)

        def structured(name, args):
            res = c.call(name, args)
            assert not res.get("isError"), res
            body = StdioClient.text(res)
            assert json.loads(body) == res["structuredContent"]
            assert ", " not in body.replace(", o", "")[:20]  # compact JSON
            return res["structuredContent"]

        assert text("add_footnote_after_text", {"filename": "f", "search_text": "target",
                                                "footnote_text": "Note A"}) == \
            "Successfully added footnote (ID: 2) to f.docx"
        assert text("add_footnote_before_text", {"filename": "f", "search_text": "Second",
                                                 "footnote_text": "Note B", "output_filename": "g.docx"}) == \
            "Successfully added footnote (ID: 3) to g.docx"
        assert text("add_footnote_enhanced", {"filename": "f", "paragraph_index": 2,
                                              "footnote_text": "Cell note"}) == \
            "Successfully added footnote (ID: 3) to f.docx"
        assert text("add_footnote_after_text", {"filename": "f", "search_text": "zzz", "footnote_text": "x"}) == \
            "Text 'zzz' not found in document"
        assert text("add_footnote_enhanced", {"filename": "f", "paragraph_index": 9, "footnote_text": "x"}) == \
            "Paragraph index 9 out of range"
        r = structured("add_footnote_robust", {"filename": "f", "paragraph_index": 1, "footnote_text": "Robust"})
        assert r == {"success": True, "message": "Successfully added footnote (ID: 4) to f.docx",
                     "details": {"footnote_id": 4, "location": "paragraph_index",
                                 "styles_created": ["FootnoteReference", "FootnoteText"],
                                 "coherence_verified": True}}
        assert structured("add_footnote_robust", {"filename": "f"}) == {
            "success": False, "message": "Must provide either search_text or paragraph_index", "details": None}
        v = structured("validate_document_footnotes", {"filename": "f"})
        assert v["valid"] is True and v["message"] == "Document footnotes are valid"
        assert (v["report"]["total_references"], v["report"]["total_content"]) == (3, 3)
        assert v["report"]["missing_styles"] == []
        assert text("delete_footnote_from_document", {"filename": "f", "search_text": "Second"}) == \
            "Successfully deleted footnote 4"
        r = structured("delete_footnote_robust", {"filename": "f", "footnote_id": 99})
        assert r == {"success": False, "message": "Footnote 99 not found", "details": None}
        r = structured("delete_footnote_robust", {"filename": "f", "footnote_id": 2})
        assert r["success"] and r["details"] == {"footnote_id": 2, "references_removed": 1,
                                                 "content_removed": 1, "orphans_removed": []}
        assert structured("validate_document_footnotes", {"filename": "none"}) == {
            "valid": False, "message": "Document none.docx does not exist", "report": {}}
    # the references and notes are real: python-docx's XML shows them where expected
    f = docx.Document(str(root / "f.docx"))
    assert 'w:footnoteReference w:id="3"' in f.tables[0].cell(0, 0)._tc.xml
    assert "footnoteReference" not in f.paragraphs[0]._p.xml
    with zipfile.ZipFile(root / "f.docx") as z:
        notes = z.read("word/footnotes.xml").decode()
        assert "Cell note" in notes and "Note A" not in notes and "Robust" not in notes
        assert "footnotes.xml" in z.read("word/_rels/document.xml.rels").decode()
        assert "/word/footnotes.xml" in z.read("[Content_Types].xml").decode()
    g = docx.Document(str(root / "g.docx"))
    xml = g.paragraphs[1]._p.xml
    assert xml.index("footnoteReference") < xml.index("Second one")


@pytest.mark.parametrize("version", [None, "1.1.9"])
def test_word_customize_footnote_style(root, version):
    extra = ("--upstream-version", version) if version else ()
    with server(root, *extra) as c:
        c.initialize()

        def call(name, args):
            res = c.call(name, args)
            assert not res.get("isError"), res
            return StdioClient.text(res)
        call("create_document", {"filename": "c"})
        call("add_paragraph", {"filename": "c", "text": "One"})
        call("add_paragraph", {"filename": "c", "text": "Two"})
        call("add_footnote_to_document", {"filename": "c", "paragraph_index": 0, "footnote_text": "first"})
        call("add_footnote_to_document", {"filename": "c", "paragraph_index": 1, "footnote_text": "second"})
        assert call("customize_footnote_style", {"filename": "c", "numbering_format": "a, b, c",
                                                 "font_name": "Arial", "font_size": 9}) == \
            "Footnote style and numbering customized in c.docx"
    d = docx.Document(str(root / "c.docx"))
    style = [s for s in d.styles if s.name == "Footnote Text"][0]
    assert (style.font.name, style.font.size.pt) == ("Arial", 9)
    got = [(p.text, p.style.name) for p in d.paragraphs]
    if version:  # 1.1.9 renumbers the marks and the notes under "Footnotes:"
        assert got[:2] == [("Onea", "Normal"), ("Twob", "Normal")]
        assert got[4:] == [("a first", "Footnote Text"), ("b second", "Footnote Text")]
    else:  # 568d8d8a renumbers the marks and styles their paragraphs
        assert got[:2] == [("Onea", "Footnote Text"), ("Twob", "Footnote Text")]
        assert got[4:] == [("\u00b9 first", "Normal"), ("\u00b9 second", "Normal")]
    assert [r.font.superscript for r in d.paragraphs[0].runs] == [None, None, True]


# ------------------------------------------------------------ odd arguments

ODD = {
    "string": ["", "zzz", "../outside", "\u00e9\u4e2d\U0001f600", "a\"b<c&d", "x" * 5000],
    "integer": [-1, 0, 1, 2**31, -(2**40)],
    "number": [-1.5, 0, 1e9],
    "boolean": [True, False],
    "array": [[], [["a", 1], "b", None, {"k": 1}], [1.5, "2", -3]],
    None: [None, "x", 0],
}


def test_word_every_tool_survives_odd_arguments(root):
    """Every tool, with awkward values for every parameter: an answer each time, no crash,
    no leak (the ASan build's exit status), the documents still readable."""
    python_docx_sample(root / "odd.docx")
    grid_doc(root / "grid.docx", 3, 3)
    with_comments(root / "cm.docx")
    (root / "img.png").write_bytes(png_bytes(4, 4))
    with server(root) as c:
        c.initialize()
        tools = c.list_tools()
        n = 0
        tools = [t for t in tools if t["name"] != "convert_to_pdf"]  # LibreOffice: tested above
        for t in tools:
            props = t["inputSchema"]["properties"]
            for i in range(2):
                for target in ("odd", "grid", "cm"):
                    args = {}
                    for k, p in props.items():
                        vals = ODD[p.get("type")]
                        args[k] = vals[(i + len(k)) % len(vals)]
                    if "filename" in props:
                        args["filename"] = target
                    if "image_path" in props:
                        args["image_path"] = "img.png"
                    args = {k: v for k, v in args.items() if v is not None or k in t["inputSchema"].get("required", [])}
                    res = c.call(t["name"], args)
                    assert isinstance(res.get("content"), list), (t["name"], args, res)
                    n += 1
        assert n == len(tools) * 6
        assert StdioClient.text(c.call("get_document_text", {"filename": "none"})) == \
            "Document none.docx does not exist"
    for name in ("grid.docx", "cm.docx"):
        if zipfile.is_zipfile(root / name):
            docx.Document(str(root / name))
