"""`mcpbox mcp powerpoint`: apply_picture_effects, apply_professional_design's
presentation operations and manage_text "validate" (2.0.6's
professional_tools.py, design_utils.py, validation_utils.py), with upstream's
texts; the written XML read back with zipfile + ElementTree."""
import zipfile
import xml.etree.ElementTree as ET

from test_server_powerpoint import Checked, pp, root, slide_parts  # noqa: F401

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"


def deck(pp, layout=6):
    pp("create_presentation")
    pp("switch_presentation", {"presentation_id": "presentation_1"})
    pp("add_slide", {"layout_index": layout})


def shapes(z, part):
    tree = ET.fromstring(z.read(part)).find(P + "cSld/" + P + "spTree")
    return [e for e in tree if e.tag in {P + t for t in ("sp", "grpSp", "graphicFrame", "cxnSp", "pic")}]


def test_apply_picture_effects(pp, root):
    assert pp("apply_picture_effects", {"slide_index": 0, "shape_index": 0, "effects": {}}) == {
        "error": "No presentation is currently loaded or the specified ID is invalid"}
    deck(pp)
    pp("add_shape", {"slide_index": 0, "shape_type": "oval", "left": 1, "top": 1, "width": 2, "height": 2})
    pp("add_shape", {"slide_index": 0, "shape_type": "oval", "left": 1, "top": 1, "width": 2, "height": 2})
    pp("add_table", {"slide_index": 0, "rows": 1, "cols": 1, "left": 1, "top": 4, "width": 2, "height": 1})
    assert pp("apply_picture_effects", {"slide_index": 0, "shape_index": 3, "effects": {}}) == {
        "error": "Invalid shape index: 3. Available shapes: 0-2"}
    assert pp("apply_picture_effects", {"slide_index": 2, "shape_index": 0, "effects": {}}) == {
        "error": "Invalid slide index: 2. Available slides: 0-0"}
    d = pp("apply_picture_effects", {"slide_index": 0, "shape_index": 0, "effects": {
        "shadow": {"blur_radius": 5}, "sparkle": {}, "rotation": {"rotation": 390.5}, "glow": {},
        "filter": {"filter_type": "sepia"}}})
    assert d == {"message": "Applied 4 effects to shape 0 on slide 0",
                 "applied_effects": ["shadow", "rotation", "glow", "filter"],
                 "warnings": ["Unknown effect type: sparkle"]}
    # a rotation value Python cannot round fails inside upstream's own try: still "applied"
    d = pp("apply_picture_effects", {"slide_index": 0, "shape_index": 1, "effects": {"rotation": {"rotation": "x"}}})
    assert d == {"message": "Applied 1 effects to shape 1 on slide 0", "applied_effects": ["rotation"]}
    d = pp("apply_picture_effects", {"slide_index": 0, "shape_index": 2, "effects": {"rotation": {"rotation": -30}}})
    assert d["applied_effects"] == ["rotation"]
    text = pp("apply_picture_effects", {"slide_index": 0, "shape_index": 0, "effects": {"shadow": 3}}, error=True)
    assert "effects.shadow" in text and "valid dictionary" in text
    pp("save_presentation", {"file_path": "e.pptx"})
    z = zipfile.ZipFile(str(root / "e.pptx"))
    s0, s1, s2 = shapes(z, slide_parts(z)[0])
    # 390.5 degrees: int(round(390.5 * 60000)) % 21600000; shadow/glow/filter write nothing
    assert s0.find(P + "spPr/" + A + "xfrm").get("rot") == str(int(round(390.5 * 60000)) % 21600000)
    assert s0.find(P + "spPr/" + A + "effectLst") is None
    assert s1.find(P + "spPr/" + A + "xfrm").get("rot") is None
    assert s2.find(P + "xfrm").get("rot") is None  # a graphic frame fails inside upstream's try


def test_professional_design_operations(pp, root):
    deck(pp)
    d = pp("apply_professional_design", {"operation": "professional_slide", "slide_type": "title_content",
                                         "title": "Results", "content": ["Up 10%", "Costs down"],
                                         "color_scheme": "warm_red"})
    assert d == {"message": "Added professional title_content slide", "slide_index": 1,
                 "color_scheme": "warm_red", "slide_type": "title_content"}
    d = pp("apply_professional_design", {"operation": "professional_slide", "slide_type": "blank",
                                         "title": "ignored", "content": ["x"]})
    assert d["slide_index"] == 2
    assert pp("apply_professional_design", {"operation": "professional_slide", "slide_index": 9}) == {
        "error": "Invalid slide index: 9. Available slides: 0-2"}
    assert pp("apply_professional_design", {"operation": "enhance"}) == {
        "error": "slide_index is required for enhance operation"}
    assert pp("apply_professional_design", {"operation": "enhance", "slide_index": 5}) == {
        "error": "Invalid slide index: 5. Available slides: 0-2"}
    d = pp("apply_professional_design", {"operation": "enhance", "slide_index": 1})
    assert d == {"message": "Enhanced slide 1 with modern_blue scheme", "slide_index": 1,
                 "color_scheme": "modern_blue", "enhancements_applied": ["title", "shapes"]}
    d = pp("apply_professional_design", {"operation": "enhance", "slide_index": 0, "enhance_shapes": False})
    assert d["enhancements_applied"] == []  # the blank slide has no title
    assert pp("apply_professional_design", {"operation": "theme", "apply_to_existing": False}) == {
        "message": "Applied modern_blue theme to presentation", "color_scheme": "modern_blue",
        "applied_to_existing": False}
    assert pp("apply_professional_design", {"operation": "slide"}) == {
        "error": "Invalid operation: slide. Must be 'slide', 'theme', 'enhance', or 'get_schemes'"}
    pp("save_presentation", {"file_path": "p.pptx"})
    z = zipfile.ZipFile(str(root / "p.pptx"))
    texts = [["".join(t.text or "" for t in s.iter(A + "t"))] for s in shapes(z, slide_parts(z)[1])]
    assert texts == [["Results"], ["\u2022 Up 10%\u2022 Costs down"]]
    paras = [["".join(t.text or "" for t in p.iter(A + "t")) for p in s.iter(A + "p")]
             for s in shapes(z, slide_parts(z)[1])]
    assert paras[1] == ["\u2022 Up 10%", "\u2022 Costs down"]
    assert shapes(z, slide_parts(z)[2]) == []


def test_manage_text_validate(pp, root):
    deck(pp)
    pp("manage_text", {"slide_index": 0, "operation": "add", "text": "short", "left": 1, "top": 1,
                       "width": 4, "height": 1})
    long = "x" * 120
    pp("manage_text", {"slide_index": 0, "operation": "add", "text": long, "left": 1, "top": 3,
                       "width": 2, "height": 1})
    pp("manage_text", {"slide_index": 0, "operation": "add", "text": "a\n\n\n\nb", "left": 5, "top": 3,
                       "width": 1, "height": 1})
    assert pp("manage_text", {"slide_index": 0, "operation": "validate"}) == {
        "error": "Invalid shape index for validation: None. Available shapes: 0-2"}
    d = pp("manage_text", {"slide_index": 0, "operation": "validate", "shape_index": 0})
    assert d == {"fits": True, "estimated_overflow": False, "suggested_font_size": 12,
                 "suggested_dimensions": None, "warnings": [], "needs_optimization": False}
    # 120 chars at 0.6 x 12pt against 2in = 144pt: overflow, and a line over 100
    d = pp("manage_text", {"slide_index": 0, "operation": "validate", "shape_index": 1, "validation_only": True})
    est = 120 * (12 * 0.6)
    sugg = max(int((144.0 / 120) * 0.8), 8)
    assert d == {"fits": False, "estimated_overflow": True, "suggested_font_size": sugg,
                 "suggested_dimensions": {"width": est * 1.2, "height": 72.0},
                 "warnings": ["Text may overflow. Consider font size %d or increase width to %.1f points"
                              % (sugg, est * 1.2),
                              "Very long lines detected. Consider adding line breaks."],
                 "needs_optimization": True}
    # given text instead of the shape's, font size 20
    d = pp("manage_text", {"slide_index": 0, "operation": "validate", "shape_index": 0, "text": "abc",
                           "font_size": 20})
    assert d["fits"] is True and d["suggested_font_size"] == 20
    # without validation_only the slide is fixed: every overflowing shape gets the size
    d = pp("manage_text", {"slide_index": 0, "operation": "validate", "shape_index": 1, "min_font_size": 9})
    assert d["fits"] is False
    assert d["validation_passed"] is False
    assert d["issues_found"] == ["Shape 1: Text may not fit properly"]
    assert d["fixes_applied"] == ["Shape 1: Adjusted font size to 9pt"]
    assert d["warnings"] == ["Shape 2: Contains 3 empty paragraphs"]  # replaced by the fix's warnings
    assert (d["shapes_processed"], d["text_shapes_optimized"]) == (3, 1)
    assert d["summary"] == "Found 1 issues, applied 1 fixes"
    pp("save_presentation", {"file_path": "v.pptx"})
    z = zipfile.ZipFile(str(root / "v.pptx"))
    sp = shapes(z, slide_parts(z)[0])[1]
    assert {r.find(A + "rPr").get("sz") for r in sp.iter(A + "r")} == {"900"}


# ------------------------------------------------------------------ fonts

import os  # noqa: E402
import shutil  # noqa: E402

import pytest  # noqa: E402

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def upstream_analysis(path):
    """analyze_font_file's fields computed with fontTools, as upstream does"""
    from fontTools.ttLib import TTFont
    font = TTFont(path)
    family = style = ""
    for record in font["name"].names:
        if record.nameID == 1:
            family = str(record)
        elif record.nameID == 2:
            style = str(record)
    return {"file_path": path, "font_family": family, "font_style": style,
            "num_glyphs": len(font.getGlyphSet().keys()), "file_size": os.path.getsize(path),
            "analysis_success": True}


@pytest.mark.skipif(not os.path.exists(DEJAVU), reason="fonts-dejavu-core is not installed")
def test_manage_fonts(pp, root):
    pytest.importorskip("fontTools")
    from fontTools.ttLib import TTFont
    shutil.copy(DEJAVU, str(root / "f.ttf"))
    expected = dict(upstream_analysis(str(root / "f.ttf")), file_path="f.ttf")
    assert pp("manage_fonts", {"operation": "analyze", "font_path": "f.ttf"}) == expected
    (root / "bad.ttf").write_bytes(b"\x00" * 40)
    assert pp("manage_fonts", {"operation": "analyze", "font_path": "bad.ttf"}) == {
        "file_path": "bad.ttf", "analysis_success": False,
        "error": "Not a TrueType or OpenType font (bad sfntVersion)"}
    (root / "tiny.ttf").write_bytes(b"OT")
    assert pp("manage_fonts", {"operation": "analyze", "font_path": "tiny.ttf"})["error"] == \
        "Not a TrueType or OpenType font (not enough data)"
    assert pp("manage_fonts", {"operation": "analyze", "font_path": "none.ttf"}) == {
        "file_path": "none.ttf", "analysis_success": False,
        "error": "[Errno 2] No such file or directory: 'none.ttf'"}
    d = pp("manage_fonts", {"operation": "recommend", "font_path": "f.ttf"})
    assert d["presentation_type"] == "business" and d["font_analysis"]["font_family"] == "DejaVu Sans"
    assert d["recommendations"] == {
        "suitable_for": ["titles", "body_text", "captions"],
        "recommended_sizes": {"title": "24-36pt", "subtitle": "16-20pt", "body": "12-16pt"},
        "usage_tips": ["Use for professional presentations", "Good for readability at distance",
                       "Works well with business themes"], "compatibility": "good"}
    d = pp("manage_fonts", {"operation": "recommend", "font_path": "f.ttf", "presentation_type": "creative"})
    assert d["recommendations"] == {"suitable_for": [], "recommended_sizes": {}, "usage_tips": [],
                                    "compatibility": "good"}
    # optimize: subset to the text's characters; fontTools reads the result
    d = pp("manage_fonts", {"operation": "optimize", "font_path": "f.ttf", "output_path": "small.ttf",
                            "text_content": "Hello"})
    assert d == {"message": "Optimized font: f.ttf", "original_path": "f.ttf", "optimized_path": "small.ttf"}
    small = TTFont(str(root / "small.ttf"))
    assert set(small.getBestCmap()) == {ord(c) for c in "Helo"}
    assert os.path.getsize(str(root / "small.ttf")) < os.path.getsize(str(root / "f.ttf")) / 10
    d = pp("manage_fonts", {"operation": "optimize", "font_path": "f.ttf"})
    assert d["optimized_path"].startswith("/tmp/tmp") and d["optimized_path"].endswith(".ttf")
    assert TTFont(d["optimized_path"])["maxp"].numGlyphs == TTFont(str(root / "f.ttf"))["maxp"].numGlyphs
    os.unlink(d["optimized_path"])
    assert pp("manage_fonts", {"operation": "optimize", "font_path": "bad.ttf"}) == {
        "error": "Failed to optimize font: Font optimization failed: Not a TrueType or OpenType font "
                 "(bad sfntVersion)"}
    assert pp("manage_fonts", {"operation": "optimize", "font_path": "f.ttf", "output_path": "no/dir/x.ttf"}) == {
        "error": "Failed to optimize font: Font optimization failed: [Errno 2] No such file or directory: "
                 "'no/dir/x.ttf'"}
    assert pp("manage_fonts", {"operation": "shrink", "font_path": "f.ttf"}) == {
        "error": "Invalid operation: shrink. Must be 'analyze', 'optimize', or 'recommend'"}


# ------------------------------------------------------------ hostile input

import random  # noqa: E402
import struct  # noqa: E402
import zlib  # noqa: E402


def sfnt(tables):
    """an sfnt with the given tables (tag -> bytes), offsets as the directory says"""
    n = len(tables)
    head = struct.pack(">IHHHH", 0x00010000, n, 16, 0, 0)
    off = 12 + 16 * n
    dirs, body = b"", b""
    for tag, data in tables.items():
        dirs += struct.pack(">4sIII", tag.encode(), 0, off + len(body), len(data))
        body += data + b"\0" * (-len(data) % 4)
    return head + dirs + body


def test_hostile_inputs_of_the_new_tools(pp, root):
    rnd = random.Random(11)
    # fonts: random tables, lying offsets and counts, a WOFF whose table does not inflate
    for i in range(30):
        tables = {"name": bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 80))),
                  "maxp": bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 10)))}
        if i % 3 == 0:
            tables["name"] = struct.pack(">HHH", 0, 5000, 6) + tables["name"]
        (root / ("r%d.ttf" % i)).write_bytes(sfnt(tables))
        d = pp("manage_fonts", {"operation": "analyze", "font_path": "r%d.ttf" % i})
        assert d["file_path"] == "r%d.ttf" % i and isinstance(d["analysis_success"], bool)
        pp("manage_fonts", {"operation": "optimize", "font_path": "r%d.ttf" % i, "text_content": "abc",
                            "output_path": "o%d.ttf" % i})
    woff = b"wOFF" + struct.pack(">IIHHIHHIIIII", 0x00010000, 200, 1, 0, 100, 1, 0, 0, 0, 0, 0, 0)
    woff += struct.pack(">4sIIII", b"name", 64, 20, 1000000, 0) + b"\x78\x9c" + b"\xff" * 18
    (root / "w.woff").write_bytes(woff)
    d = pp("manage_fonts", {"operation": "analyze", "font_path": "w.woff"})
    assert d["analysis_success"] is False
    # an image that declares 60000 x 60000 pixels
    ihdr = struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\0" * 64)
    png = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
           + struct.pack(">I", len(idat)) + b"IDAT" + idat + struct.pack(">I", zlib.crc32(b"IDAT" + idat)))
    (root / "huge.png").write_bytes(png)
    deck(pp)
    d = pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "huge.png"})
    assert d == {"error": "Failed to enhance image: image too large for mcpbox's enhance (16 Mpixels)"}
    # charts over the point cap are refused before anything is built
    text = pp("add_chart", {"slide_index": 0, "chart_type": "line", "left": 1, "top": 1, "width": 1,
                            "height": 1, "categories": ["c"] * 2000, "series_names": ["s"] * 600,
                            "series_values": [[1] * 2000] * 600}, error=True)
    assert "data points" in text
    # template sequences with odd members: no id, an object id, non-object content
    d = pp("create_presentation_from_templates", {"template_sequence": [
        {"template_id": {"x": 1}}, {"template_id": 7}, {"template_id": "title_slide", "content": "oops"},
        {"template_id": "title_slide", "content": {"title": 5}}]})
    res = d["creation_result"]["slides_created"]
    assert res[0]["error"] == "Failed to apply enhanced template: unhashable type: 'dict'"
    assert res[1]["error"] == "Template '7' not found"
    assert res[2]["success"] is True
    assert res[3]["elements_created"][0] == {"type": "text", "role": "title",
                                             "error": "'int' object has no attribute 'split'"}
    assert d["warning"] == "Presentation created with some errors"
