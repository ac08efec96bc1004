"""`mcpbox mcp powerpoint`: the template tools of 2.0.6 (tools/template_tools.py on
utils/template_utils.py) and optimize_slide_text, gradient backgrounds.

The oracle re-derives what upstream's engine computes from the facts of
slide_layout_templates.json quoted here (positions, styling of `title_slide`),
with its own implementation of upstream's character-width estimate, and reads
the written slides with zipfile + ElementTree; gradient pictures are decoded
with zlib and their pixels checked against upstream's interpolation."""
import struct
import zipfile
import zlib
import xml.etree.ElementTree as ET

from test_server_powerpoint import Checked, pp, root, rels, slide_parts  # noqa: F401

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
DC = "{http://purl.org/dc/elements/1.1/}"


def deck(pp, layout=6):
    pp("create_presentation")
    pp("switch_presentation", {"presentation_id": "presentation_1"})
    if layout is not None:
        pp("add_slide", {"layout_index": layout})


# ---------------------------------------------------------------- oracle

def est_units(text):
    """upstream's per-character widths, summed left to right"""
    u = 0.0
    for ch in text:
        u += 0.6 if ch in "iltj" else 1.3 if ch in "mwMW" else 0.5 if ch == " " else 1.0
    return u


def fits(text, size, w, h):
    lines = len(text.split("\n"))
    return (est_units(text) * size * 0.6 <= w * 72 * 0.9 and lines * size * 1.2 * 1.3 <= h * 72 * 0.9)


def best_size(text, w, h, lo, hi):
    for size in range(hi, lo - 1, -1):
        if fits(text, size, w, h):
            return size
    return lo


def wrap(text, width, size):
    out, line = [], []
    for word in text.split():
        if est_units(" ".join(line + [word])) * size * 0.6 <= width * 72:
            line.append(word)
        elif line:
            out.append(" ".join(line))
            line = [word]
        else:
            out.append(word)
    if line:
        out.append(" ".join(line))
    return "\n".join(out)


def shapes(z, part):
    tree = ET.fromstring(z.read(part)).find(P + "cSld/" + P + "spTree")
    return [e for e in tree if e.tag in {P + t for t in ("sp", "grpSp", "graphicFrame", "cxnSp", "pic")}]


def para_texts(sp):
    return ["".join(t.text or "" for t in p.iter(A + "t")) for p in sp.iter(A + "p")]


def run_props(sp):
    return [r.find(A + "rPr") for r in sp.iter(A + "r")]


def png_pixels(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat = 8, b""
    while i < len(data):
        n, = struct.unpack(">I", data[i:i + 4])
        t, c = data[i + 4:i + 8], data[i + 8:i + 8 + n]
        if t == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", c[:10])
            assert (depth, ctype) == (8, 2)
        elif t == b"IDAT":
            idat += c
        i += 12 + n
    raw = zlib.decompress(idat)
    stride = w * 3 + 1
    rows, prev = [], bytearray(w * 3)
    for y in range(h):
        f, line = raw[y * stride], bytearray(raw[y * stride + 1:(y + 1) * stride])
        for x in range(len(line)):
            a = line[x - 3] if x >= 3 else 0
            b, c = prev[x], prev[x - 3] if x >= 3 else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, lambda x, y: tuple(rows[y][3 * x:3 * x + 3])


def mix(a, b, ratio):
    return tuple(int(a[i] * (1 - ratio) + b[i] * ratio) for i in range(3))


# ------------------------------------------------------------------ tests

def test_apply_slide_template_title_slide(pp, root):
    deck(pp)
    d = pp("apply_slide_template", {"slide_index": 0, "template_id": "title_slide",
                                    "color_scheme": "warm_red",
                                    "content_mapping": {"title": "Hello World", "author": ""}})
    assert d["message"] == "Applied template 'title_slide' to slide 0"
    t = d["template_applied"]
    assert [k for k in t] == ["success", "template_id", "template_name", "color_scheme",
                              "elements_created", "enhanced_features_applied"]
    assert t["template_name"] == "Dynamic Title Slide" and t["color_scheme"] == "warm_red"
    made = t["elements_created"]
    assert [(e["type"], e["role"], e["index"]) for e in made] == [
        ("text", "title", 0), ("text", "subtitle", 1), ("text", "author", 2),
        ("shape", "decorative_accent", 3)]
    assert made[0]["enhanced_features"] == ["Dynamic text sizing", "Automatic text wrapping",
                                            "Text visual effects", "Auto-fit content"]
    assert made[2]["enhanced_features"] == ["Automatic text wrapping", "Text visual effects"]
    assert made[3]["enhanced_features"] == ["Gradient fills", "Advanced visual effects"]
    assert t["enhanced_features_applied"] == ["Dynamic text sizing", "Automatic text wrapping",
                                              "Visual effects", "Intelligent content adaptation"]
    pp("save_presentation", {"file_path": "t.pptx"})
    z = zipfile.ZipFile(str(root / "t.pptx"))
    title, sub, author, accent = shapes(z, slide_parts(z)[0])
    # title: 1,2 8x2 in; "Hello World" sized by the estimate within 18-44 (title)
    size = best_size("Hello World", 8.0, 2.0, 18, 44)
    assert para_texts(title) == [wrap("Hello World", 8.0, size)]
    off = title.find(P + "spPr/" + A + "xfrm/" + A + "off")
    assert (off.get("x"), off.get("y")) == (str(914400), str(2 * 914400))
    body = title.find(P + "txBody/" + A + "bodyPr")
    assert body.get("wrap") == "square" and body.find(A + "spAutoFit") is not None
    rpr = run_props(title)[0]
    # warm_red primary (192, 80, 77); bold from the title weight and the shadow effect
    assert (rpr.get("sz"), rpr.get("b"), rpr.get("i"), rpr.get("u")) == (str(size * 100), "1", "0", "none")
    assert rpr.find(A + "solidFill/" + A + "srgbClr").get("val") == "C0504D"
    assert rpr.find(A + "latin").get("typeface") == "Segoe UI"
    ppr = title.find(P + "txBody/" + A + "p/" + A + "pPr")
    assert ppr.get("algn") == "ctr"
    assert ppr.find(A + "lnSpc/" + A + "spcPct").get("val") == "120000"
    # subtitle: its placeholder text, italic, subtitle font, 14-24
    text = "Strategic Innovation for 2024"
    size = best_size(text, 8.0, 1.0, 14, 24)
    assert para_texts(sub) == wrap(text, 8.0, size).split("\n")
    rpr = run_props(sub)[0]
    assert (rpr.get("sz"), rpr.get("i"), rpr.get("b")) == (str(size * 100), "1", "1")
    assert rpr.find(A + "latin").get("typeface") == "Segoe UI Light"
    # author: "" maps to the placeholder text; "medium" is the body default 14
    assert para_texts(author) == ["Leadership Team"]
    rpr = run_props(author)[0]
    assert (rpr.get("sz"), rpr.get("b")) == ("1400", "1")
    assert rpr.find(A + "solidFill/" + A + "srgbClr").get("val") == "E67E22"  # warm_red accent1
    # decorative accent: a rectangle without a border (gradient fills are only named)
    assert accent.find(P + "spPr/" + A + "prstGeom").get("prst") == "rect"
    assert accent.find(P + "spPr/" + A + "ln/" + A + "noFill") is not None
    assert accent.find(P + "spPr/" + A + "solidFill") is None
    assert accent.find(P + "nvSpPr/" + P + "cNvPr").get("name").startswith("Rectangle ")


def test_template_errors_and_fallbacks(pp, root):
    assert pp("apply_slide_template", {"slide_index": 0, "template_id": "title_slide"}) == {
        "error": "No presentation is currently loaded or the specified ID is invalid"}
    deck(pp)
    assert pp("apply_slide_template", {"slide_index": 4, "template_id": "title_slide"}) == {
        "error": "Invalid slide index: 4. Available slides: 0-0"}
    assert pp("apply_slide_template", {"slide_index": 0, "template_id": "nope"}) == {
        "error": "Failed to apply template: Template 'nope' not found"}
    assert pp("create_slide_from_template", {"template_id": "x", "layout_index": 11}) == {
        "error": "Invalid layout index: 11. Available layouts: 0-10"}
    # the slide is added before the template fails, as upstream adds it
    assert pp("create_slide_from_template", {"template_id": "x"}) == {
        "error": "Failed to apply template to new slide: Template 'x' not found"}
    assert pp("get_presentation_info")["slide_count"] == 2
    text = pp("apply_slide_template", {"slide_index": 0, "template_id": "title_slide",
                                       "content_mapping": {"title": 5}}, error=True)
    assert "content_mapping.title" in text and "valid string" in text
    # an image element without a path is an "Image Placeholder" rectangle; a path
    # that is not an image falls back to it too; organic_blob is no shape upstream knows
    (root / "bad.png").write_bytes(b"not an image")
    d = pp("create_slide_from_template", {"template_id": "nature_organic",
                                          "image_paths": {"nature_image": "bad.png"}})
    assert d["message"] == "Created slide 2 using template 'nature_organic'"
    pp("save_presentation", {"file_path": "f.pptx"})
    z = zipfile.ZipFile(str(root / "f.pptx"))
    texts = [para_texts(s) for s in shapes(z, slide_parts(z)[2])]
    assert ["Shape: organic_blob"] in texts
    names = [s.find(".//" + P + "cNvPr").get("name") for s in shapes(z, slide_parts(z)[2])]
    assert not any(n.startswith("Picture") for n in names)


def test_table_chart_and_gradient_templates(pp, root):
    deck(pp, layout=None)
    d = pp("create_slide_from_template", {"template_id": "data_table_slide", "color_scheme": "elegant_green"})
    kinds = [e["type"] for e in d["template_applied"]["elements_created"]]
    assert "table" in kinds
    pp("create_slide_from_template", {"template_id": "chart_comparison"})
    pp("create_slide_from_template", {"template_id": "thank_you_slide", "color_scheme": "corporate_gray"})
    pp("add_slide", {"layout_index": 6, "background_type": "gradient",
                     "background_colors": [[255, 0, 0], [0, 0, 255]], "gradient_direction": "diagonal"})
    pp("add_slide", {"layout_index": 6, "background_type": "gradient", "background_colors": [[1, 2, 3]]})
    pp("save_presentation", {"file_path": "g.pptx"})
    z = zipfile.ZipFile(str(root / "g.pptx"))
    s_table, s_chart, s_thanks, s_diag, s_none = slide_parts(z)
    tbl = [s for s in shapes(z, s_table) if s.tag == P + "graphicFrame"][0]
    rows = tbl.findall(".//" + A + "tr")
    assert len(rows) == 5 and ["".join(t.text for t in c.iter(A + "t")) for c in rows[0]] == [
        "Metric", "Q1", "Q2", "Q3"]
    head = rows[0].find(A + "tc")
    assert head.find(A + "tcPr/" + A + "solidFill/" + A + "srgbClr").get("val") == "468847"
    hr = head.find(".//" + A + "rPr")
    assert hr.get("b") == "1" and hr.find(A + "solidFill/" + A + "srgbClr").get("val") == "FFFFFF"
    assert rows[1].find(A + "tc/" + A + "tcPr/" + A + "solidFill/" + A + "srgbClr").get("val") == "EEECE1"
    charts = [rels(z, s_chart)[f.find(".//{http://schemas.openxmlformats.org/drawingml/2006/chart}chart")
                               .get(R + "id")][1]
              for f in shapes(z, s_chart) if f.tag == P + "graphicFrame"]
    assert len(charts) == 2
    cs = z.read(charts[0]).decode()
    assert "Before Implementation" in cs and "<c:v>100</c:v>" in cs and "<c:legend/>" in cs
    # thank_you_slide: upstream's professional gradient, subtle, horizontal, from
    # design_utils' corporate_gray light (242,242,242) to secondary (0,120,215)
    # after the layout's two placeholders, before the template's elements
    pic = shapes(z, s_thanks)[2]
    assert pic.tag == P + "pic"
    ext = pic.find(P + "spPr/" + A + "xfrm/" + A + "ext")
    assert (ext.get("cx"), ext.get("cy")) == ("9144000", "6858000")
    img = rels(z, s_thanks)[pic.find(".//" + A + "blip").get(R + "embed")][1]
    w, h, px = png_pixels(z.read(img))
    assert (w, h) == (1920, 1080)
    for x in (0, 700, 1919):
        assert px(x, 0) == px(x, 1079) == mix((242, 242, 242), (0, 120, 215), x / 1920)
    pic = shapes(z, s_diag)[0]
    img = rels(z, s_diag)[pic.find(".//" + A + "blip").get(R + "embed")][1]
    w, h, px = png_pixels(z.read(img))
    for x, y in ((0, 0), (1919, 1079), (1000, 3), (5, 900)):
        assert px(x, y) == mix((255, 0, 0), (0, 0, 255), (x + y) / (1920 + 1080))
    # a colour list too short: upstream's IndexError is swallowed, no picture
    assert shapes(z, s_none) == []


def test_create_presentation_from_templates(pp, root):
    assert pp("create_presentation_from_templates", {"template_sequence": []}) == {
        "error": "No presentation is currently loaded or the specified ID is invalid"}
    deck(pp, layout=None)
    assert pp("create_presentation_from_templates", {"template_sequence": []}) == {
        "error": "Template sequence cannot be empty"}
    d = pp("create_presentation_from_templates", {
        "template_sequence": [
            {"template_id": "title_slide", "content": {"title": "Annual Review"}},
            {"content": {"title": "no id"}},
            {"template_id": "agenda_slide"},
        ],
        "presentation_title": "Deck Title", "color_scheme": "modern_blue"})
    assert d["message"] == "Created presentation with 3 slides"
    assert d["presentation_id"] == "presentation_1" and d["total_slides"] == 2
    r = d["creation_result"]
    assert r["success"] is True and r["total_slides"] == 3
    assert r["slides_created"][1] == {"slide_index": 1, "success": False, "error": "No template_id specified"}
    assert r["slides_created"][0]["slide_index"] == 0 and r["slides_created"][2]["template_id"] == "agenda_slide"
    d = pp("create_presentation_from_templates", {"template_sequence": [{"template_id": "zzz"}]})
    assert d["warning"] == "Presentation created with some errors" and "message" not in d
    assert d["creation_result"]["slides_created"][0] == {
        "success": False, "error": "Template 'zzz' not found", "slide_index": 0}
    assert d["total_slides"] == 3
    pp("save_presentation", {"file_path": "s.pptx"})
    z = zipfile.ZipFile(str(root / "s.pptx"))
    core = ET.fromstring(z.read("docProps/core.xml"))
    assert core.find(DC + "title").text == "Deck Title"
    # layout 1 (Title and Content) is the base of every sequence slide
    first = slide_parts(z)[0]
    assert rels(z, first)["rId1"][1].endswith("slideLayout2.xml")
    assert ["Annual Review"] in [para_texts(s) for s in shapes(z, first)]


def test_auto_generate_presentation(pp, root):
    deck(pp, layout=None)
    assert pp("auto_generate_presentation", {"topic": "x", "slide_count": 2}) == {
        "error": "Slide count must be between 3 and 20"}
    d = pp("auto_generate_presentation", {"topic": "Quantum", "slide_count": 3,
                                          "presentation_type": "academic"})
    assert d["templates_used"] == ["title_slide", "agenda_slide", "text_with_image"]
    assert d["message"] == "Auto-generated 3-slide presentation on 'Quantum'"
    assert [k for k in d] == ["message", "topic", "presentation_type", "color_scheme", "slide_count",
                              "generation_result", "templates_used"]
    d = pp("auto_generate_presentation", {"topic": "Growth", "slide_count": 9})
    assert d["templates_used"] == ["title_slide", "agenda_slide", "key_metrics_dashboard",
                                   "text_with_image", "two_column_text", "chart_comparison",
                                   "two_column_text", "two_column_text", "thank_you_slide"]
    d = pp("auto_generate_presentation", {"topic": "Art", "slide_count": 8, "presentation_type": "other",
                                          "include_charts": False, "include_images": True})
    assert d["templates_used"] == ["title_slide", "full_image_slide", "three_column_layout",
                                   "quote_testimonial", "process_flow", "text_with_image",
                                   "text_with_image", "thank_you_slide"]
    assert pp("get_presentation_info")["slide_count"] == 20
    t = pp("extract_presentation_text")["all_presentation_text_combined"]
    assert "Research on Quantum" in t and "Creative Vision: Art" in t and "Growth - Analysis" in t


def test_optimize_slide_text(pp, root):
    deck(pp)
    long = "word " * 80
    pp("manage_text", {"slide_index": 0, "operation": "add", "text": "Short title",
                       "left": 1, "top": 1, "width": 4, "height": 1})
    pp("manage_text", {"slide_index": 0, "operation": "add", "text": long.strip(),
                       "left": 1, "top": 2, "width": 3, "height": 2})
    pp("add_shape", {"slide_index": 0, "shape_type": "oval", "left": 5, "top": 5, "width": 1, "height": 1})
    d = pp("optimize_slide_text", {"slide_index": 0, "max_font_size": 20})
    s1 = min(best_size("Short title", 4, 1, 8, 36), 20)
    s2 = min(best_size(long.strip(), 3, 2, 8, 36), 20)
    assert d["optimizations_applied"] == [
        {"shape_index": 0, "optimizations": ["Font resized to %dpt" % s1, "Line spacing set to 1.2"]},
        {"shape_index": 1, "optimizations": ["Font resized to %dpt" % s2, "Text wrapped automatically",
                                             "Line spacing set to 1.4"]},
    ]
    assert d["message"] == "Optimized 2 text elements on slide 0"
    assert d["settings"] == {"auto_resize": True, "auto_wrap": True, "optimize_spacing": True,
                             "font_size_range": "8-20pt"}
    pp("save_presentation", {"file_path": "o.pptx"})
    z = zipfile.ZipFile(str(root / "o.pptx"))
    sp = shapes(z, slide_parts(z)[0])[1]
    # the wrap replaced the text: new runs without the size, each line its own paragraph
    assert para_texts(sp) == wrap(long.strip(), 3, s2).split("\n")
    assert all(r.find(A + "rPr") is None for r in sp.iter(A + "r"))
    assert {p.find(A + "pPr/" + A + "lnSpc/" + A + "spcPct").get("val") for p in sp.iter(A + "p")} == {"140000"}
    d = pp("optimize_slide_text", {"slide_index": 0, "auto_resize": False, "auto_wrap": False,
                                   "optimize_spacing": False})
    assert d["optimizations_applied"] == [] and d["message"] == "Optimized 0 text elements on slide 0"
    assert pp("optimize_slide_text", {"slide_index": 3}) == {
        "error": "Invalid slide index: 3. Available slides: 0-0"}
