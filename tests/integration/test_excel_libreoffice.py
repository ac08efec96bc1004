"""`mcpbox mcp excel` against LibreOffice, both ways.

(a) Workbooks written by LibreOffice Calc (`soffice --headless --convert-to xlsx`
from an openpyxl workbook, from a flat ODS document, from a CSV file, and from
an .ods) are read by every read tool exactly as openpyxl - what upstream runs -
reads them: every cell of every sheet, the used ranges, merged cells, data
validations.

(b) Workbooks changed by the write tools open in LibreOffice with the expected
values and formulas: LibreOffice converts them to CSV, one file per sheet
(computed values, then formulas), and recalculates and re-saves them as xlsx
for openpyxl to inspect. This is where formulas whose cached results went
stale after a write were caught (LibreOffice does not recalculate xlsx files
on load, so it showed the old numbers).

Every soffice run has a private profile directory and HOME (parallel runs do
not collide) and a time limit. The module is skipped, with the reason, only
when soffice is not installed (scripts/install-deps --test installs
libreoffice-calc-nogui)."""
import csv
import datetime
import json
import os
import shutil
import re
import signal
import subprocess
import zipfile

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient
from test_server_excel import Checked

openpyxl = pytest.importorskip("openpyxl")
from openpyxl.utils import get_column_letter  # noqa: E402

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
pytestmark = pytest.mark.skipif(
    SOFFICE is None, reason="LibreOffice (soffice) is not installed; "
                            "scripts/install-deps --test installs libreoffice-calc-nogui")

SOFFICE_TIMEOUT = 180
# Calc's CSV filter: comma, double quote, UTF-8, from line 1, raw values (not
# as shown), formulas or not, every sheet into <name>-<Sheet>.csv
CSV_VALUES = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1"
CSV_FORMULAS = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,true,false,-1"


@pytest.fixture(scope="module")
def lo(tmp_path_factory):
    """Runs soffice with a profile and HOME of this module's own."""
    base = tmp_path_factory.mktemp("libreoffice")
    home = base / "home"
    home.mkdir()

    def convert(src, target, outdir):
        os.makedirs(outdir, exist_ok=True)
        argv = [SOFFICE, "-env:UserInstallation=file://%s" % (base / "profile"), "--headless",
                "--norestore", "--nologo", "--nodefault", "--nolockcheck",
                "--convert-to", target, "--outdir", str(outdir), str(src)]
        env = dict(os.environ, HOME=str(home))
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=SOFFICE_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            pytest.fail("soffice did not finish converting %s within %d s" % (src, SOFFICE_TIMEOUT))
        text = out.decode(errors="replace")
        assert p.returncode == 0, text
        return text
    return convert


def to_xlsx(lo, src, outdir):
    """LibreOffice's own .xlsx of src."""
    lo(src, "xlsx", outdir)
    out = os.path.join(outdir, os.path.splitext(os.path.basename(src))[0] + ".xlsx")
    assert os.path.exists(out), os.listdir(outdir)
    return out


def to_csv(lo, src, outdir, formulas=False):
    """{sheet name: rows}, in sheet order, as LibreOffice computes (or, with
    formulas, shows) them."""
    text = lo(src, CSV_FORMULAS if formulas else CSV_VALUES, outdir)
    sheets = {}
    for m in re.finditer(r"^Writing sheet (.+) -> (.+\.csv)$", text, re.M):
        with open(m.group(2), newline="", encoding="utf-8") as f:
            sheets[m.group(1)] = list(csv.reader(f))
    assert sheets, text
    return sheets


@pytest.fixture
def xl(tmp_path):
    with Checked([MCPBOX_BIN, "mcp", "excel", "stdio", "--allowed-dir", str(tmp_path)],
                 timeout=120) as c:
        c.initialize()

        def call(name, args):
            res = c.call(name, args)
            text = StdioClient.text(res)
            assert not res.get("isError"), text
            return text
        yield call


# ------------------------------------------------------------- workbooks

def openpyxl_source(path):
    """Numbers, strings, booleans, dates under many date formats, formulas,
    merged cells, data validations, a comment, a defined name, several
    sheets (one hidden, one empty, one starting at C3)."""
    from openpyxl.comments import Comment
    from openpyxl.workbook.defined_name import DefinedName
    from openpyxl.worksheet.datavalidation import DataValidation
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Mixed Data"
    cases = [("yyyy-mm-dd", datetime.datetime(2024, 2, 29)),
             ("dd.mm.yyyy", datetime.datetime(1999, 12, 31)),
             ("mm/dd/yy", datetime.datetime(2000, 1, 1)),
             ("[$-409]mmmm d, yyyy;@", datetime.datetime(2025, 7, 4)),
             ("d-mmm-yy", datetime.datetime(1900, 3, 1)),
             ("yyyy-mm-dd hh:mm:ss", datetime.datetime(2024, 1, 7, 13, 45, 30)),
             ("hh:mm:ss", datetime.time(8, 30, 15)),
             ("h:mm AM/PM", datetime.time(17, 5)),
             ("[hh]:mm:ss", datetime.timedelta(hours=30, minutes=5)),
             ("yyyy\\-mm", datetime.datetime(2025, 4, 1)),
             ("0.00%", 0.125),
             ("#,##0.00", 1234567.891),
             ("0.00E+00", 6.02e23),
             ('"$"#,##0.00', -42.5),
             ("@", "0042"),
             ("General", 12345678901234)]
    for i, (fmt, value) in enumerate(cases, start=1):
        ws.cell(row=i, column=1, value=fmt)
        ws.cell(row=i, column=2, value=value).number_format = fmt
    for ref, value in [("C1", "=B11*2"), ("C2", "=1/0"), ("C3", '=CONCATENATE("a","b")'),
                       ("C4", "=SUM(B11:B12)"), ("C5", '=IF(B11>0,"pos","neg")'),
                       ("C6", "=B1+1"), ("C7", "  spaces  "), ("C8", "line1\nline2"),
                       ("C9", True), ("C10", False), ("C11", -0.0001), ("C12", 3),
                       ("D1", "commented"), ("H1", "red"), ("H2", "green"), ("H3", "blue")]:
        ws[ref] = value
    ws["D1"].comment = Comment("a note", "me")
    ws.merge_cells("E1:F2")
    ws["E1"] = "m1"
    ws.merge_cells("E4:E6")
    ws["E4"] = 7
    dv = DataValidation(type="list", formula1="$H$1:$H$3", allow_blank=False)
    ws.add_data_validation(dv)
    dv.add("G1:G5")
    dv2 = DataValidation(type="decimal", operator="greaterThan", formula1="0", promptTitle="Pos",
                         prompt="Enter >0", errorTitle="Bad", error="Must be >0",
                         showErrorMessage=True, showInputMessage=True)
    ws.add_data_validation(dv2)
    dv2.add("C11:C12")
    dv2.add("B13")
    dv3 = DataValidation(type="list", formula1='"Yes,No,Maybe"', allow_blank=True)
    ws.add_data_validation(dv3)
    dv3.add("D2:D3")
    ws2 = wb.create_sheet("Ünï Sheet")
    ws2["C3"] = "starts at C3"
    ws2["C4"] = 10
    ws2["D5"] = 1.5
    wb.create_sheet("Empty")
    hidden = wb.create_sheet("Hidden")
    hidden["A1"] = "h"
    hidden.sheet_state = "hidden"
    wb.defined_names.append(DefinedName("MyName", attr_text="'Mixed Data'!$B$11"))
    wb.save(path)


FODS = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
 xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0"
 xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" office:version="1.2"
 office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
 <office:automatic-styles>
  <style:style style:name="T1" style:family="text"><style:text-properties fo:font-weight="bold"/></style:style>
  <number:date-style style:name="N1"><number:day number:style="long"/><number:text>/</number:text><number:month number:style="long"/><number:text>/</number:text><number:year number:style="long"/></number:date-style>
  <style:style style:name="ce1" style:family="table-cell" style:data-style-name="N1"/>
 </office:automatic-styles>
 <office:body><office:spreadsheet>
  <table:calculation-settings><table:null-date table:date-value="1904-01-01"/></table:calculation-settings>
  <table:table table:name="Rich">
   <table:table-row>
    <table:table-cell office:value-type="string"><text:p>plain <text:span text:style-name="T1">bold</text:span> tail</text:p></table:table-cell>
    <table:table-cell table:style-name="ce1" office:value-type="date" office:date-value="2024-03-15"/>
    <table:table-cell table:formula="of:=1/0" office:value-type="float" office:value="0"/>
    <table:table-cell table:formula="of:=&quot;x&quot;&amp;&quot;y&quot;" office:value-type="string" office:string-value="xy"><text:p>xy</text:p></table:table-cell>
   </table:table-row>
   <table:table-row>
    <table:table-cell office:value-type="string"><text:p>two</text:p><text:p>paragraphs</text:p></table:table-cell>
    <table:table-cell office:value-type="float" office:value="1e-10"/>
    <table:table-cell office:value-type="float" office:value="123456789012345"/>
    <table:table-cell office:value-type="boolean" office:boolean-value="true"/>
   </table:table-row>
  </table:table>
 </office:spreadsheet></office:body>
</office:document>
"""


@pytest.fixture(scope="module")
def lo_books(lo, tmp_path_factory):
    """{kind: path} of workbooks LibreOffice wrote."""
    d = tmp_path_factory.mktemp("lo-books")
    src = d / "src"
    src.mkdir()
    openpyxl_source(str(src / "mixed.xlsx"))
    (src / "rich.fods").write_text(FODS)
    (src / "plain.csv").write_text('name,qty,price\napple,3,1.25\npear,10,0.1\n'
                                   '2024-01-05,TRUE,"=2+3"\n')
    books = {
        "from-openpyxl": to_xlsx(lo, src / "mixed.xlsx", d / "lo1"),
        "from-fods": to_xlsx(lo, src / "rich.fods", d / "lo2"),
        "from-csv": to_xlsx(lo, src / "plain.csv", d / "lo3"),
    }
    lo(src / "mixed.xlsx", "ods", d / "ods")
    books["from-ods"] = to_xlsx(lo, d / "ods" / "mixed.ods", d / "lo4")
    return books


def py_value(v):
    """What upstream puts into its JSON for an openpyxl value."""
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
        return str(v)
    return v


def copy_into(tmp_path, path, name):
    dst = str(tmp_path / name)
    shutil.copy(path, dst)
    return dst


# ----------------------------------------------------------- (a) reading

@pytest.mark.parametrize("kind", ["from-openpyxl", "from-fods", "from-csv", "from-ods"])
def test_read_tools_on_libreoffice_workbooks(kind, lo_books, xl, tmp_path):
    p = copy_into(tmp_path, lo_books[kind], kind + ".xlsx")
    with zipfile.ZipFile(p) as z:
        assert b"LibreOffice" in z.read("docProps/app.xml")
    wb = openpyxl.load_workbook(p)
    meta = xl("get_workbook_metadata", {"filepath": p, "include_ranges": True})
    used = {ws.title: "A1:%s%d" % (get_column_letter(ws.max_column), ws.max_row)
            for ws in wb.worksheets}
    assert meta.startswith("{'filename': '%s.xlsx', 'sheets': %r, 'size': %d, 'modified': "
                           % (kind, wb.sheetnames, os.path.getsize(p))), meta
    assert meta.endswith("'used_ranges': %r}" % used), meta
    for ws in wb.worksheets:
        got = json.loads(xl("read_data_from_excel", {"filepath": p, "sheet_name": ws.title}))
        assert got["sheet_name"] == ws.title
        assert got["range"] == "%s%d:%s%d" % (get_column_letter(ws.min_column), ws.min_row,
                                              get_column_letter(ws.max_column), ws.max_row)
        by = {c["address"]: c for c in got["cells"]}
        want = {}
        for row in ws.iter_rows(min_row=ws.min_row, max_row=ws.max_row,
                                min_col=ws.min_column, max_col=ws.max_column):
            for c in row:
                want[c.coordinate] = py_value(c.value)
        assert list(by) == list(want), ws.title
        for ref, v in want.items():
            g = by[ref]["value"]
            assert g == v and type(g) is type(v), (kind, ws.title, ref, g, v)
            assert (by[ref]["row"], by[ref]["column"]) == (ws[ref].row, ws[ref].column)
        merged = [str(r) for r in ws.merged_cells.ranges]
        assert xl("get_merged_cells", {"filepath": p, "sheet_name": ws.title}) == str(merged)
        assert xl("validate_excel_range", {"filepath": p, "sheet_name": ws.title,
                                           "start_cell": "A1", "end_cell": "B2"}) == \
            "Range 'A1:B2' is valid. Sheet contains data in range '%s'" % used[ws.title]
        if not ws.data_validations.dataValidation:
            assert xl("get_data_validation_info", {"filepath": p, "sheet_name": ws.title}) == \
                "No data validation rules found in this worksheet"


def test_libreoffice_values_and_validations(lo_books, xl, tmp_path):
    """What the openpyxl source looks like after LibreOffice rewrote it."""
    p = copy_into(tmp_path, lo_books["from-openpyxl"], "mixed.xlsx")
    got = json.loads(xl("read_data_from_excel", {"filepath": p, "sheet_name": "Mixed Data"}))
    assert got["range"] == "A1:H16"
    cell = {c["address"]: c for c in got["cells"]}
    v = {a: c["value"] for a, c in cell.items()}
    # dates under every date format LibreOffice rewrote, as datetimes
    assert [v["B%d" % r] for r in range(1, 11)] == [
        "2024-02-29 00:00:00", "1999-12-31 00:00:00", "2000-01-01 00:00:00",
        "2025-07-04 00:00:00", "1900-03-01 00:00:00", "2024-01-07 13:45:30", "08:30:15",
        "17:05:00", "1 day, 6:05:00", "2025-04-01 00:00:00"]
    assert [v["B%d" % r] for r in range(11, 17)] == [0.125, 1234567.891, 6.02e23, -42.5,
                                                      "0042", 12345678901234]
    # formulas as text; LibreOffice stores booleans as TRUE()/FALSE() formulas
    assert [v["C%d" % r] for r in range(1, 7)] == [
        "=B11*2", "=1/0", '=CONCATENATE("a","b")', "=SUM(B11:B12)", '=IF(B11>0,"pos","neg")',
        "=B1+1"]
    assert v["C7"] == "  spaces  " and v["C8"] == "line1\nline2"
    assert v["C9"] == "=TRUE()" and v["C10"] == "=FALSE()"
    assert v["C11"] == -0.0001 and v["C12"] == 3 and v["D1"] == "commented"
    assert v["E1"] == "m1" and v["F2"] is None and v["E4"] == 7 and v["E5"] is None
    # validations: a list from a range, a list of literals, a decimal rule with texts
    assert cell["G1"]["validation"] == {
        "cell": "G1", "has_validation": True, "validation_type": "list", "allow_blank": False,
        "operator": "between", "allowed_values": ["red", "green", "blue"]}
    assert cell["D2"]["validation"]["allowed_values"] == ["Yes", "No", "Maybe"]
    assert cell["B13"]["validation"] == {
        "cell": "B13", "has_validation": True, "validation_type": "decimal",
        "allow_blank": False, "operator": "greaterThan", "prompt": "Enter >0",
        "prompt_title": "Pos", "error_message": "Must be >0", "error_title": "Bad",
        "formula1": "0", "formula2": "0"}
    assert cell["A1"]["validation"] == {"has_validation": False}
    info = json.loads(xl("get_data_validation_info", {"filepath": p, "sheet_name": "Mixed Data"}))
    rules = {r["ranges"]: r for r in info["validation_rules"]}
    assert rules["G1:G5"] == {"ranges": "G1:G5", "validation_type": "list", "allow_blank": False,
                              "allowed_values": ["red", "green", "blue"]}
    assert rules["D2:D3"]["allowed_values"] == ["Yes", "No", "Maybe"]
    assert rules["C11:C12 B13"] == {"ranges": "C11:C12 B13", "validation_type": "decimal",
                                    "allow_blank": False}
    assert xl("get_merged_cells", {"filepath": p, "sheet_name": "Mixed Data"}) == "['E1:F2', 'E4:E6']"
    # the sheet that starts at C3, and the empty one
    t = json.loads(xl("read_data_from_excel", {"filepath": p, "sheet_name": "Ünï Sheet"}))
    assert t["range"] == "C3:D5" and t["cells"][0]["value"] == "starts at C3"
    assert xl("read_data_from_excel", {"filepath": p, "sheet_name": "Empty", "start_cell": "B2"}) == \
        "No data found in specified range"

    # the flat ODS: rich text runs, paragraphs, the 1904 date system, errors and text results
    p = copy_into(tmp_path, lo_books["from-fods"], "rich.xlsx")
    v = {c["address"]: c["value"] for c in
         json.loads(xl("read_data_from_excel", {"filepath": p, "sheet_name": "Rich"}))["cells"]}
    assert v == {"A1": "plain bold tail", "B1": "2024-03-15 00:00:00", "C1": "=1/0",
                 "D1": '="x"&"y"', "A2": "two\nparagraphs", "B2": 1e-10,
                 "C2": 123456789012345, "D2": True}
    # the CSV: types detected by LibreOffice
    p = copy_into(tmp_path, lo_books["from-csv"], "plain.xlsx")
    v = {c["address"]: c["value"] for c in
         json.loads(xl("read_data_from_excel", {"filepath": p, "sheet_name": "plain"}))["cells"]}
    assert v["B2"] == 3 and v["C2"] == 1.25 and v["C3"] == 0.1
    assert v["A4"] == "2024-01-05 00:00:00" and v["C4"] == "=2+3"


# ---------------------------------------------------------- (b) writing

def write_everything(xl, p, sheet):
    """One call of every write tool on `sheet` of p (and on new sheets)."""
    def ok(name, args, want):
        t = xl(name, dict(args, filepath=p))
        assert t == want, (name, t)
    ok("write_data_to_excel", {"sheet_name": sheet, "start_cell": "J1",
                               "data": [["k", 1, 2.5, True, "", None, "=K1+L1", "ünï"],
                                        ["k2", -3, 1e-3, False, "t", 7, "=SUM(K1:K2)", " sp "]]},
       "Data written to %s" % sheet)
    ok("apply_formula", {"sheet_name": sheet, "cell": "J3", "formula": "=K1*100"},
       "Applied formula '=K1*100' to cell J3")
    ok("format_range", {"sheet_name": sheet, "start_cell": "J1", "end_cell": "L1", "bold": True,
                        "italic": True, "font_size": 14, "font_color": "FF0000",
                        "bg_color": "00FF00", "border_style": "thin", "number_format": "0.00",
                        "alignment": "center", "wrap_text": True},
       "Range formatted successfully")
    ok("format_range", {"sheet_name": sheet, "start_cell": "R1", "number_format": "yyyy-mm-dd"},
       "Range formatted successfully")
    ok("write_data_to_excel", {"sheet_name": sheet, "start_cell": "R1", "data": [[45000]]},
       "Data written to %s" % sheet)
    ok("merge_cells", {"sheet_name": sheet, "start_cell": "J5", "end_cell": "K6"},
       "Range 'J5:K6' merged in sheet '%s'" % sheet)
    ok("copy_range", {"sheet_name": sheet, "source_start": "J1", "source_end": "L2",
                      "target_start": "J8"}, "Range copied successfully")
    ok("delete_range", {"sheet_name": sheet, "start_cell": "J8", "end_cell": "L8"},
       "Range J8:L8 deleted successfully")
    ok("insert_rows", {"sheet_name": sheet, "start_row": 30, "count": 2},
       "Inserted 2 row(s) starting at row 30 in sheet '%s'" % sheet)
    ok("insert_columns", {"sheet_name": sheet, "start_col": 30, "count": 1},
       "Inserted 1 column(s) starting at column 30 in sheet '%s'" % sheet)
    ok("create_worksheet", {"sheet_name": "Added"}, "Sheet Added created successfully")
    ok("write_data_to_excel", {"sheet_name": "Added",
                               "data": [["Region", "Sales"], ["N", 10], ["S", 20], ["N", 5],
                                        ["drop me", 0]]},
       "Data written to Added")
    ok("delete_sheet_rows", {"sheet_name": "Added", "start_row": 5},
       "Deleted 1 row(s) starting at row 5 in sheet 'Added'")
    ok("insert_columns", {"sheet_name": "Added", "start_col": 3}, "Inserted 1 column(s) starting "
       "at column 3 in sheet 'Added'")
    ok("write_data_to_excel", {"sheet_name": "Added", "start_cell": "C1", "data": [["gone"]]},
       "Data written to Added")
    ok("delete_sheet_columns", {"sheet_name": "Added", "start_col": 3},
       "Deleted 1 column(s) starting at column 3 in sheet 'Added'")
    ok("rename_worksheet", {"old_name": "Added", "new_name": "Renamed"},
       "Sheet renamed from 'Added' to 'Renamed'")
    ok("copy_worksheet", {"source_sheet": "Renamed", "target_sheet": "Copy"},
       "Sheet 'Renamed' copied to 'Copy'")
    ok("create_worksheet", {"sheet_name": "Doomed"}, "Sheet Doomed created successfully")
    ok("delete_worksheet", {"sheet_name": "Doomed"}, "Sheet 'Doomed' deleted")
    ok("create_table", {"sheet_name": "Renamed", "data_range": "A1:B4", "table_name": "Sales"},
       "Successfully created table 'Sales' in sheet 'Renamed'.")
    ok("create_chart", {"sheet_name": "Renamed", "data_range": "A1:B4", "chart_type": "bar",
                        "target_cell": "D2", "title": "Sales"}, "Bar chart created successfully")
    ok("create_pivot_table", {"sheet_name": "Renamed", "data_range": "A1:B4", "rows": ["Region"],
                              "values": ["Sales"], "agg_func": "sum"},
       "Summary table created successfully")


def check_in_libreoffice(lo, p, outdir, sheet, first_sheets):
    vals = to_csv(lo, p, os.path.join(outdir, "values"))
    forms = to_csv(lo, p, os.path.join(outdir, "formulas"), formulas=True)
    assert list(vals) == first_sheets + ["Renamed", "Copy", "Renamed_pivot"]
    grid = vals[sheet]
    row1, row2 = grid[0][9:17], grid[1][9:17]
    # J..Q: text, numbers, booleans, "" and None empty, the formulas computed by LibreOffice
    assert row1 == ["k", "1", "2.5", "TRUE", "", "", "3.5", "ünï"], row1
    assert row2 == ["k2", "-3", "0.001", "FALSE", "t", "7", "-2", " sp "], row2
    assert grid[2][9] == "100"
    assert grid[0][17] == "2023-03-15"  # 45000 under yyyy-mm-dd
    # row 8 was deleted after the copy: the copy of row 2 moved up into it
    assert grid[7][9:12] == ["k2", "-3", "0.001"], grid[7]
    f = forms[sheet]
    assert f[0][15] == "=K1+L1" and f[1][15] == "=SUM(K1:K2)" and f[2][9] == "=K1*100"
    for name in ("Renamed", "Copy"):
        assert vals[name] == [["Region", "Sales"], ["N", "10"], ["S", "20"], ["N", "5"]], name
    assert vals["Renamed_pivot"] == [["Region", "Sales (sum)"], ["N", "15"], ["S", "20"]]

    # recalculated and saved by LibreOffice: openpyxl finds formulas, their results,
    # formats, merges, the table and the chart
    resaved = to_xlsx(lo, p, os.path.join(outdir, "resaved"))
    wb = openpyxl.load_workbook(resaved)
    ws = wb[sheet]
    assert ws["P1"].value == "=K1+L1" and ws["J3"].value == "=K1*100"
    j1 = ws["J1"]
    assert j1.font.b and j1.font.i and j1.font.sz == 14 and j1.font.color.rgb == "FFFF0000"
    assert j1.fill.fgColor.rgb == "FF00FF00" and j1.border.left.style == "thin"
    assert j1.number_format == "0.00" and j1.alignment.horizontal == "center"
    assert j1.alignment.wrap_text
    assert "J5:K6" in [str(r) for r in ws.merged_cells.ranges]
    assert ws["R1"].value == datetime.datetime(2023, 3, 15)
    assert dict(wb["Renamed"].tables.items()) == {"Sales": "A1:B4"}
    assert len(wb["Renamed"]._charts) == 1
    values = openpyxl.load_workbook(resaved, data_only=True)[sheet]
    assert values["P1"].value == 3.5 and values["P2"].value == -2 and values["J3"].value == 100
    return vals, values


def test_write_tools_open_in_libreoffice(lo, lo_books, xl, tmp_path):
    """The write tools on a workbook LibreOffice wrote, then back into LibreOffice."""
    p = copy_into(tmp_path, lo_books["from-openpyxl"], "edited.xlsx")
    write_everything(xl, p, "Mixed Data")
    vals, values = check_in_libreoffice(lo, p, tmp_path / "lo", "Mixed Data",
                                        ["Mixed Data", "Ünï Sheet", "Empty", "Hidden"])
    grid = vals["Mixed Data"]
    # LibreOffice's own formulas compute again; they kept their references when
    # delete_range removed row 8 (as openpyxl does), so B11 is what was B12
    assert grid[0][2] == "2469135.782" and grid[4][2] == "pos"
    assert values["C1"].value == 2469135.782


def test_write_tools_on_new_workbook_open_in_libreoffice(lo, xl, tmp_path):
    p = str(tmp_path / "new.xlsx")
    assert xl("create_workbook", {"filepath": p}) == "Created workbook at %s" % p
    write_everything(xl, p, "Sheet1")
    check_in_libreoffice(lo, p, tmp_path / "lo", "Sheet1", ["Sheet1"])


def test_stale_formula_results_recomputed(lo, lo_books, xl, tmp_path):
    """A value written under formulas LibreOffice had computed (and cached): the
    formulas, on this sheet and on another, show the new results in LibreOffice."""
    src = tmp_path / "src.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    ws.append(["qty", "price", "total"])
    ws.append([3, 1.25, "=A2*B2"])
    ws.append([10, 0.1, "=A3*B3"])
    wb.create_sheet("Summary")["A1"] = "=SUM(Data!C2:C3)"
    wb.create_sheet("Notes")["A1"] = "no formulas here"
    wb.save(str(src))
    p = to_xlsx(lo, src, tmp_path / "lo")
    before = openpyxl.load_workbook(p, data_only=True)
    assert before["Data"]["C2"].value == 3.75 and before["Summary"]["A1"].value == 4.75
    with zipfile.ZipFile(p) as z:
        notes_before = z.read("xl/worksheets/sheet3.xml")
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Data", "start_cell": "A2",
                                      "data": [[4]]}) == "Data written to Data"
    vals = to_csv(lo, p, tmp_path / "csv")
    assert vals["Data"][1] == ["4", "1.25", "5"]
    assert vals["Summary"] == [["6"]]
    # the sheet without formulas was not rewritten
    with zipfile.ZipFile(p) as z:
        assert z.read("xl/worksheets/sheet3.xml") == notes_before
