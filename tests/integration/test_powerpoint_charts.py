"""`mcpbox mcp powerpoint`: add_chart and update_chart_data (2.0.6's
structural_tools.add_chart + content_utils.format_chart, chart_tools.update_chart_data),
checked against what python-pptx 1.0 writes: a chart part per chart with the
ChartXmlWriter elements of its type, an embedded workbook laid out as
CategoryWorkbookWriter lays it out (read back with openpyxl), relationships
and content types; upstream's result and error texts; and LibreOffice Impress
both ways (files the server writes convert to PDF with their chart text;
a file LibreOffice saved is read by the read tools and its chart updated)."""
import io
import os
import shutil
import subprocess
import zipfile
import xml.etree.ElementTree as ET

import pytest

from test_server_powerpoint import Checked, pp, root, rels, slide_parts  # noqa: F401

C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
CT = "{http://schemas.openxmlformats.org/package/2006/content-types}"
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
IMPRESS = SOFFICE and any(os.path.exists(p) for p in (
    "/usr/lib/libreoffice/program/libsdlo.so", "/usr/lib/libreoffice/share/registry/impress.xcd"))


def deck(pp, slides=1):
    pp("create_presentation")
    pp("switch_presentation", {"presentation_id": "presentation_1"})
    for _ in range(slides):
        pp("add_slide", {"layout_index": 6})


def chart_args(t, **kw):
    a = {"slide_index": 0, "chart_type": t, "left": 1, "top": 1.5, "width": 6, "height": 4,
         "categories": ["Q1", "Q2", "Q3"], "series_names": ["Sales", "Costs"],
         "series_values": [[10, 20.5, 30], [5, 6, 7]]}
    a.update(kw)
    return a


def chart_of(z, slide, n):
    """The chart part of the n-th graphicFrame of a slide and its root."""
    sld = ET.fromstring(z.read(slide))
    frames = [f for f in sld.iter(P + "graphicFrame")]
    rid = frames[n].find(".//" + C + "chart").get(R + "id")
    part = rels(z, slide)[rid][1]
    return part, ET.fromstring(z.read(part)), frames[n]


def texts(el):
    return ["".join(t.text or "" for t in p.iter(A + "t")) for p in el.iter(A + "p")]


def workbook(z, chart_part):
    openpyxl = pytest.importorskip("openpyxl")
    (typ, target), = rels(z, chart_part).values()
    assert typ.endswith("/relationships/package")
    wb = openpyxl.load_workbook(io.BytesIO(z.read(target)))
    return target, [[c.value for c in row] for row in wb["Sheet1"].iter_rows()]


EXPECT = {  # type: (plot element, barDir, grouping, overlap, legend in template)
    "column": ("barChart", "col", "clustered", None, False),
    "stacked_column": ("barChart", "col", "stacked", "100", False),
    "bar": ("barChart", "bar", "clustered", None, False),
    "stacked_bar": ("barChart", "bar", "stacked", "100", False),
    "line": ("lineChart", None, "standard", None, True),
    "line_markers": ("lineChart", None, "standard", None, True),
    "pie": ("pieChart", None, None, None, False),
    "doughnut": ("doughnutChart", None, None, None, True),
    "area": ("areaChart", None, "standard", None, True),
    "stacked_area": ("areaChart", None, "stacked", None, True),
    "radar": ("radarChart", None, None, None, False),
    "radar_markers": ("radarChart", None, None, None, False),
}


def test_add_chart_writes_python_pptx_parts(pp, root):
    deck(pp)
    for i, t in enumerate(EXPECT):
        d = pp("add_chart", chart_args(t, title="Revenue " + t, x_axis_title="Quarter",
                                       y_axis_title="USD", has_legend=(i % 2 == 0)))
        assert d == {"message": "Added %s chart to slide 0" % t, "shape_index": i,
                     "chart_type": t, "series_count": 2, "categories_count": 3}
    pp("save_presentation", {"file_path": "c.pptx"})
    z = zipfile.ZipFile(str(root / "c.pptx"))
    slide = slide_parts(z)[0]
    types = {o.get("PartName"): o.get("ContentType")
             for o in ET.fromstring(z.read("[Content_Types].xml")).iter(CT + "Override")}
    defaults = {o.get("Extension"): o.get("ContentType")
                for o in ET.fromstring(z.read("[Content_Types].xml")).iter(CT + "Default")}
    assert defaults["xlsx"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    for i, (t, (plot, bar_dir, grouping, overlap, legend)) in enumerate(EXPECT.items()):
        part, cs, frame = chart_of(z, slide, i)
        assert part == "ppt/charts/chart%d.xml" % (i + 1)
        assert types["/" + part] == "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
        name = frame.find(P + "nvGraphicFramePr/" + P + "cNvPr")
        assert name.get("name") == "Chart %d" % (int(name.get("id")) - 1)
        assert frame.find(P + "xfrm/" + A + "off").get("y") == str(int(1.5 * 914400))
        assert frame.find(P + "xfrm/" + A + "ext").get("cx") == str(6 * 914400)
        chart = cs.find(C + "chart")
        pa = chart.find(C + "plotArea")
        x = pa.find(C + plot)
        assert x is not None, t
        if bar_dir:
            assert x.find(C + "barDir").get("val") == bar_dir
        if grouping:
            assert x.find(C + "grouping").get("val") == grouping
        assert (x.find(C + "overlap").get("val") if x.find(C + "overlap") is not None else None) == overlap
        sers = x.findall(C + "ser")
        assert len(sers) == (1 if t == "pie" else 2)
        s0 = sers[0]
        assert s0.find(C + "tx//" + C + "f").text == "Sheet1!$B$1"
        assert s0.find(C + "tx//" + C + "v").text == "Sales"
        assert s0.find(C + "cat//" + C + "f").text == "Sheet1!$A$2:$A$4"
        assert [v.text for v in s0.find(C + "cat").iter(C + "v")] == ["Q1", "Q2", "Q3"]
        assert s0.find(C + "val//" + C + "f").text == "Sheet1!$B$2:$B$4"
        # pydantic made floats of the values: str(10.0)
        assert [v.text for v in s0.find(C + "val").iter(C + "v")] == ["10.0", "20.5", "30.0"]
        marker = s0.find(C + "marker/" + C + "symbol")
        assert (marker is not None) == (t in ("line", "radar"))
        # format_chart: title, legend kept/added/removed, axis titles
        assert texts(chart.find(C + "title")) == ["Revenue " + t]
        assert (chart.find(C + "legend") is not None) == (i % 2 == 0)
        if t in ("pie", "doughnut"):
            assert pa.find(".//" + C + "title") is None
        else:
            cat_ax = pa.find(C + "catAx")
            val_ax = pa.find(C + "valAx")
            assert texts(cat_ax.find(C + "title")) == ["Quarter"]
            assert texts(val_ax.find(C + "title")) == ["USD"]
            order = [c.tag[len(C):] for c in val_ax]
            assert order.index("title") < order.index("majorTickMark")
        ext = cs.find(C + "externalData")
        assert ext.find(C + "autoUpdate").get("val") == "0"
        target, rows = workbook(z, part)
        assert target == "ppt/embeddings/Microsoft_Excel_Sheet%d.xlsx" % (i + 1)
        assert rows == [[None, "Sales", "Costs"], ["Q1", 10, 5], ["Q2", 20.5, 6], ["Q3", 30, 7]]
    # legend defaults: the template's own legend stays when has_legend is true
    assert not EXPECT["column"][4]


def test_add_chart_errors_are_upstream_texts(pp):
    d = pp("add_chart", chart_args("column"))
    assert d == {"error": "No presentation is currently loaded or the specified ID is invalid"}
    deck(pp)
    assert pp("add_chart", chart_args("column", slide_index=3)) == {
        "error": "Invalid slide index: 3. Available slides: 0-0"}
    assert pp("add_chart", chart_args("Gantt")) == {
        "error": "Invalid chart type: 'Gantt'. Valid types are: column, stacked_column, bar, "
                 "stacked_bar, line, line_markers, pie, doughnut, area, stacked_area, scatter, "
                 "radar, radar_markers"}
    assert pp("add_chart", chart_args("bar", series_names=["a"])) == {
        "error": "Number of series names (1) must match number of series values (2)"}
    assert pp("add_chart", chart_args("bar", categories=[], series_values=[[], []])) == {
        "error": "Categories list cannot be empty"}
    assert pp("add_chart", chart_args("bar", series_values=[[1, 2, 3], [1]])) == {
        "error": "Series 'Costs' has 1 values but there are 3 categories"}
    # python-pptx's XY writer asks CategoryChartData for x values it does not have
    assert pp("add_chart", chart_args("scatter")) == {
        "error": "Failed to add chart: 'CategoryWorkbookWriter' object has no attribute 'x_values_ref'"}
    # chart_type is compared lower-cased and echoed as given
    assert pp("add_chart", chart_args("COLUMN"))["message"] == "Added COLUMN chart to slide 0"
    text = pp("add_chart", chart_args("bar", series_values=[["x", 1, 2], [1, 2, 3]]), error=True)
    assert "validation error" in text and "series_values.0.0" in text
    # hostile text: escaped, never breaks the part
    d = pp("add_chart", chart_args("line", categories=["<a>&", "]]>", "\u00e9\u4e2d"],
                                   series_names=["</c:v>", "x"], title="<b>"))
    assert d["shape_index"] == 1
    assert pp("get_slide_info", {"slide_index": 0})["shapes"][1]["shape_type"] == "CHART (3)"


def test_update_chart_data(pp, root):
    deck(pp, 2)
    pp("add_chart", chart_args("column"))
    pp("add_chart", chart_args("line", slide_index=1))
    pp("manage_text", {"slide_index": 1, "operation": "add", "text": "not a chart",
                       "left": 1, "top": 1, "width": 2, "height": 1})
    d = pp("update_chart_data", {"slide_index": 0, "shape_index": 0, "categories": ["A", "B"],
                                 "series_data": [{"name": "n1", "values": [1, 2]},
                                                 {"name": "n2", "values": [3, 4]},
                                                 {"name": "n3", "values": [5.5, None]}]})
    assert d == {"message": "Updated chart data on slide 0, shape 0", "categories": ["A", "B"],
                 "series_count": 3, "series_names": ["n1", "n2", "n3"]}
    d = pp("update_chart_data", {"slide_index": 1, "shape_index": 0, "categories": ["only"],
                                 "series_data": [{"name": "solo", "values": [42]}],
                                 "presentation_id": "presentation_1"})
    assert d["series_count"] == 1
    assert pp("update_chart_data", {"slide_index": 1, "shape_index": 1, "categories": ["a"],
                                    "series_data": []}) == {"error": "Shape is not a chart"}
    assert pp("update_chart_data", {"slide_index": 1, "shape_index": 5, "categories": ["a"],
                                    "series_data": []}) == {"error": "Shape index 5 out of range"}
    assert pp("update_chart_data", {"slide_index": 7, "shape_index": 0, "categories": ["a"],
                                    "series_data": []}) == {"error": "Slide index 7 out of range"}
    assert pp("update_chart_data", {"slide_index": 0, "shape_index": 0, "categories": ["a"],
                                    "series_data": [], "presentation_id": "nope"}) == {
        "error": "Presentation not found"}
    assert pp("update_chart_data", {"slide_index": 0, "shape_index": 0, "categories": ["a"],
                                    "series_data": [{"name": "x"}]}) == {
        "error": "Each series must have 'name' and 'values' keys"}
    assert pp("update_chart_data", {"slide_index": 0, "shape_index": 0, "categories": ["a"],
                                    "series_data": [{"name": 5, "values": [1]}]}) == {
        "error": "Failed to update chart data: 'int' object has no attribute 'replace'"}
    assert pp("update_chart_data", {"slide_index": 0, "shape_index": 0, "categories": ["a"],
                                    "series_data": [{"name": "x", "values": 3}]}) == {
        "error": "Failed to update chart data: 'int' object is not iterable"}
    pp("save_presentation", {"file_path": "u.pptx"})
    z = zipfile.ZipFile(str(root / "u.pptx"))
    s0, s1 = slide_parts(z)
    part, cs, _ = chart_of(z, s0, 0)
    sers = cs.findall(".//" + C + "barChart/" + C + "ser")
    assert [s.find(C + "idx").get("val") for s in sers] == ["0", "1", "2"]
    assert [s.find(C + "tx//" + C + "v").text for s in sers] == ["n1", "n2", "n3"]
    assert sers[2].find(C + "val//" + C + "f").text == "Sheet1!$D$2:$D$3"
    # None is skipped but counted
    assert sers[2].find(C + "val//" + C + "ptCount").get("val") == "2"
    assert [v.text for v in sers[2].find(C + "val").iter(C + "v")] == ["5.5"]
    assert b'xmlns:c' not in z.read(part).split(b">", 2)[2]  # no redundant declarations
    assert workbook(z, part)[1] == [[None, "n1", "n2", "n3"], ["A", 1, 3, 5.5], ["B", 2, 4, None]]
    part, cs, _ = chart_of(z, s1, 0)
    sers = cs.findall(".//" + C + "lineChart/" + C + "ser")
    assert len(sers) == 1 and sers[0].find(C + "marker") is not None  # formatting kept
    assert workbook(z, part)[1] == [[None, "solo"], ["only", 42]]
    # the embedded workbook is replaced, not duplicated
    assert len([n for n in z.namelist() if n.startswith("ppt/embeddings/")]) == 2


# ------------------------------------------------------------- LibreOffice

@pytest.fixture(scope="module")
def soffice(tmp_path_factory):
    if not IMPRESS:
        pytest.skip("LibreOffice Impress is not installed; scripts/install-deps --test installs "
                    "libreoffice-impress-nogui")
    base = tmp_path_factory.mktemp("lo-impress")
    (base / "home").mkdir()

    def convert(src, fmt, outdir):
        os.makedirs(outdir, exist_ok=True)
        argv = [SOFFICE, "-env:UserInstallation=file://%s" % (base / "profile"), "--headless",
                "--convert-to", fmt, "--outdir", str(outdir), str(src)]
        env = dict(os.environ, HOME=str(base / "home"))
        subprocess.run(argv, env=env, check=True, timeout=240, capture_output=True)
        stem = os.path.splitext(os.path.basename(str(src)))[0]
        return os.path.join(str(outdir), stem + "." + fmt.split(":")[0])
    return convert


def test_libreoffice_round_trip(pp, root, soffice, tmp_path):
    deck(pp, 2)
    pp("manage_text", {"slide_index": 0, "operation": "add", "text": "Quarterly figures",
                       "left": 0.5, "top": 0.2, "width": 6, "height": 1})
    pp("add_chart", chart_args("column", categories=["North", "South", "East"],
                               title="Regional Revenue", x_axis_title="Region"))
    pp("add_chart", chart_args("pie", slide_index=1, categories=["Alpha", "Beta", "Gamma"],
                               title="Market Share"))
    pp("update_chart_data", {"slide_index": 1, "shape_index": 0, "categories": ["Alpha", "Beta", "Delta"],
                             "series_data": [{"name": "Share", "values": [50, 30, 20]}]})
    pp("create_slide_from_template", {"template_id": "title_slide"})  # text boxes, a shape
    pp("save_presentation", {"file_path": "deck.pptx"})
    pdf = soffice(root / "deck.pptx", "pdf", tmp_path / "pdf")
    text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True, check=True).stdout
    for s in ("Quarterly figures", "Regional Revenue", "North", "South", "Region", "Sales", "Costs",
              "Market Share", "Delta", "Transform Your Business", "Leadership Team"):
        assert s in text, (s, text)
    # LibreOffice writes the deck back as .pptx: the read tools see it and
    # its chart (LibreOffice's own chart XML) takes new data
    out = soffice(root / "deck.pptx", "pptx:Impress MS PowerPoint 2007 XML", tmp_path / "lo")
    shutil.copy(out, str(root / "lo.pptx"))
    pp("open_presentation", {"file_path": "lo.pptx", "id": "lo"})
    t = pp("extract_presentation_text", {"presentation_id": "lo"})
    assert t.get("total_slides") == 3, t
    assert "Quarterly figures" in t["slides_text"][0]["text_content"]["all_text_combined"]
    info = pp("get_slide_info", {"slide_index": 0, "presentation_id": "lo"})
    kinds = [s["shape_type"] for s in info["shapes"]]
    assert "CHART (3)" in kinds
    ci = kinds.index("CHART (3)")
    d = pp("update_chart_data", {"slide_index": 0, "shape_index": ci, "categories": ["W", "X"],
                                 "series_data": [{"name": "Fresh", "values": [1, 2]}],
                                 "presentation_id": "lo"})
    assert d["message"] == "Updated chart data on slide 0, shape %d" % ci
    pp("save_presentation", {"file_path": "lo2.pptx", "presentation_id": "lo"})
    z = zipfile.ZipFile(str(root / "lo2.pptx"))
    part, cs, _ = chart_of(z, slide_parts(z)[0], 0)
    sers = cs.findall(".//" + C + "ser")
    assert len(sers) == 1 and sers[0].find(C + "tx//" + C + "v").text == "Fresh"
    assert [v.text for v in sers[0].find(C + "cat").iter(C + "v")] == ["W", "X"]
    assert workbook(z, part)[1][:3] == [[None, "Fresh"], ["W", 1], ["X", 2]]


def test_update_chart_values_iterate_as_python(pp, root):
    deck(pp)
    pp("add_chart", chart_args("bar"))
    d = pp("update_chart_data", {"slide_index": 0, "shape_index": 0, "categories": ["a", "b"],
                                 "series_data": [{"name": "s", "values": "7\u00e9"},
                                                 {"name": "k", "values": {"1": 0, "2": 0}}]})
    assert d["series_count"] == 2
    pp("save_presentation", {"file_path": "i.pptx"})
    z = zipfile.ZipFile(str(root / "i.pptx"))
    part, cs, _ = chart_of(z, slide_parts(z)[0], 0)
    sers = cs.findall(".//" + C + "ser")
    assert [v.text for v in sers[0].find(C + "val").iter(C + "v")] == ["7", "\u00e9"]
    assert [v.text for v in sers[1].find(C + "val").iter(C + "v")] == ["1", "2"]
