"""`mcpbox mcp excel` over stdio (excel-mcp-server 0.1.7 semantics).

Workbooks are written by openpyxl (Debian's python3-openpyxl) and read back
through the tools; workbooks the tools change are checked with openpyxl and
pandas, and zip members no tool touched must be byte-identical. Real flows
replay the work of Toolathlon's excel tasks against their ground truth.
Hostile inputs (truncated zip, zip bomb, entity bomb, huge sheet) must give
a clear error, never a crash or a hang."""
import datetime
import json
import os
import shutil
import zipfile
import zlib

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient

openpyxl = pytest.importorskip("openpyxl")
pandas = pytest.importorskip("pandas")

BENCH = "/work/shared/bench-data/toolathlon"


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
def xl(root):
    with Checked([MCPBOX_BIN, "mcp", "excel", "stdio", "--allowed-dir", str(root)],
                 timeout=120) as c:
        c.initialize()

        def call(name, args, error=None):
            res = c.call(name, args)
            text = StdioClient.text(res)
            if error is None:
                assert not res.get("isError"), text
                assert res.get("structuredContent") == {"result": text}
            else:
                assert res.get("isError") == error, text
            return text
        call.client = c
        yield call


def members(path):
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i.filename) for i in z.infolist()}


def sample_workbook(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    ws.append(["Name", "Qty", "Price", "When", "Ok"])
    ws.append(["apple", 3, 1.25, datetime.datetime(2024, 1, 7, 0, 0), True])
    ws.append(["pear", 10, 0.1, datetime.datetime(2023, 12, 25, 13, 30), False])
    ws["F2"] = "=B2*C2"
    ws.merge_cells("A5:B6")
    ws["A5"] = "merged"
    from openpyxl.worksheet.datavalidation import DataValidation
    dv = DataValidation(type="list", formula1='"Yes,No,Maybe"', allow_blank=True)
    ws.add_data_validation(dv)
    dv.add("E2:E3")
    wb.create_sheet("Other")["A1"] = "ünïcode"
    wb.save(path)


def cells(text):
    return {c["address"]: c["value"] for c in json.loads(text)["cells"]}


# ------------------------------------------------------------------ listing

def test_tools_list(xl):
    tools = {t["name"]: t for t in xl.client.list_tools()}
    for name in ["create_workbook", "create_worksheet", "read_data_from_excel",
                 "write_data_to_excel", "get_workbook_metadata", "apply_formula",
                 "validate_formula_syntax", "format_range", "copy_range", "delete_range",
                 "merge_cells", "unmerge_cells", "get_merged_cells", "insert_rows",
                 "insert_columns", "delete_sheet_rows", "delete_sheet_columns",
                 "rename_worksheet", "delete_worksheet", "validate_excel_range",
                 "get_data_validation_info", "create_table", "copy_worksheet", "create_chart",
                 "create_pivot_table"]:
        assert name in tools
    assert len(tools) == 25
    pv = tools["create_pivot_table"]["inputSchema"]
    assert pv["required"] == ["filepath", "sheet_name", "data_range", "rows", "values"]
    assert pv["properties"]["agg_func"] == {"default": "mean", "title": "Agg Func", "type": "string"}
    assert pv["properties"]["columns"]["anyOf"] == [{"items": {"type": "string"}, "type": "array"},
                                                    {"type": "null"}]
    assert tools["create_table"]["description"] == "Creates a native Excel table from a specified range of data."
    assert tools["create_chart"]["inputSchema"]["required"] == ["filepath", "sheet_name", "data_range",
                                                                "chart_type", "target_cell"]
    rd = tools["read_data_from_excel"]["inputSchema"]
    assert rd["required"] == ["filepath", "sheet_name"]
    assert rd["title"] == "read_data_from_excelArguments"
    assert rd["properties"]["start_cell"] == {"default": "A1", "title": "Start Cell", "type": "string"}
    assert rd["properties"]["end_cell"] == {"anyOf": [{"type": "string"}, {"type": "null"}],
                                            "default": None, "title": "End Cell"}
    wd = tools["write_data_to_excel"]["inputSchema"]["properties"]["data"]
    assert wd == {"items": {"items": {}, "type": "array"}, "title": "Data", "type": "array"}
    assert tools["apply_formula"]["outputSchema"]["title"] == "apply_formulaOutput"


# ------------------------------------------------------------------ reading

def test_read_openpyxl_workbook(xl, root):
    p = str(root / "s.xlsx")
    sample_workbook(p)
    got = json.loads(xl("read_data_from_excel", {"filepath": p, "sheet_name": "Data"}))
    assert got["range"] == "A1:F6" and got["sheet_name"] == "Data"
    v = {c["address"]: c["value"] for c in got["cells"]}
    assert v["A1"] == "Name" and v["B2"] == 3 and v["C2"] == 1.25 and v["C3"] == 0.1
    assert v["D2"] == "2024-01-07 00:00:00" and v["D3"] == "2023-12-25 13:30:00"
    assert v["E2"] is True and v["E3"] is False
    assert v["F2"] == "=B2*C2" and v["A5"] == "merged" and v["B6"] is None
    e2 = [c for c in got["cells"] if c["address"] == "E2"][0]
    assert e2["validation"] == {"cell": "E2", "has_validation": True, "validation_type": "list",
                                "allow_blank": True, "allowed_values": ["Yes", "No", "Maybe"]}
    assert [c for c in got["cells"] if c["address"] == "A1"][0]["validation"] == {"has_validation": False}
    # a window, and Unicode escaped as json.dumps does
    t = xl("read_data_from_excel", {"filepath": p, "sheet_name": "Data", "start_cell": "B2", "end_cell": "C3"})
    assert list(cells(t)) == ["B2", "C2", "B3", "C3"]
    t = xl("read_data_from_excel", {"filepath": p, "sheet_name": "Other"})
    assert '"\\u00fcn\\u00efcode"' in t
    assert xl("read_data_from_excel", {"filepath": p, "sheet_name": "Data", "start_cell": "Z99"}) == \
        "No data found in specified range"
    meta = xl("get_workbook_metadata", {"filepath": p, "include_ranges": True})
    assert meta.startswith("{'filename': 's.xlsx', 'sheets': ['Data', 'Other'], 'size': %d, 'modified': "
                           % os.path.getsize(p))
    assert meta.endswith("'used_ranges': {'Data': 'A1:F6', 'Other': 'A1:A1'}}")
    assert xl("get_merged_cells", {"filepath": p, "sheet_name": "Data"}) == "['A5:B6']"
    info = json.loads(xl("get_data_validation_info", {"filepath": p, "sheet_name": "Data"}))
    assert info == {"sheet_name": "Data", "validation_rules": [
        {"ranges": "E2:E3", "validation_type": "list", "allow_blank": True,
         "allowed_values": ["Yes", "No", "Maybe"]}]}
    assert xl("get_data_validation_info", {"filepath": p, "sheet_name": "Other"}) == \
        "No data validation rules found in this worksheet"
    assert xl("validate_excel_range", {"filepath": p, "sheet_name": "Data", "start_cell": "A1",
                                       "end_cell": "C3"}) == \
        "Range 'A1:C3' is valid. Sheet contains data in range 'A1:F6'"
    assert xl("validate_excel_range", {"filepath": p, "sheet_name": "Data", "start_cell": "A9"}) == \
        "Error: Start row 9 out of bounds (1-6)"
    assert xl("validate_formula_syntax", {"filepath": p, "sheet_name": "Data", "cell": "F2",
                                          "formula": "=B2*C2"}) == "Formula is valid and matches cell content"
    assert xl("validate_formula_syntax", {"filepath": p, "sheet_name": "Data", "cell": "A1",
                                          "formula": "=INDIRECT(A1)"}) == \
        "Error: Invalid formula syntax: Unsafe function: INDIRECT"


def test_read_bench_workbooks(xl, root):
    for name in ["Market_Data.xlsx", "Household_Appliances.xlsx", "Account_Book.xlsx"]:
        src = [os.path.join(BENCH, t, "initial_workspace", name) for t in os.listdir(BENCH)
               if os.path.exists(os.path.join(BENCH, t, "initial_workspace", name))]
        if not src:
            pytest.skip("bench data not present")
        p = str(root / name)
        shutil.copy(src[0], p)
        wb = openpyxl.load_workbook(p)
        for ws in wb.worksheets:
            got = cells(xl("read_data_from_excel", {"filepath": p, "sheet_name": ws.title,
                                                    "start_cell": "A1", "end_cell": "Z130"}))
            for row in ws.iter_rows(min_row=1, max_row=min(ws.max_row, 130), max_col=min(ws.max_column, 26)):
                for c in row:
                    want = c.value
                    if isinstance(want, datetime.datetime):
                        want = str(want)
                    assert got[c.coordinate] == want, (name, c.coordinate)


# ------------------------------------------------------------------ writing

def test_write_and_untouched_parts(xl, root):
    p = str(root / "w.xlsx")
    sample_workbook(p)
    before = members(p)
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Data", "start_cell": "A8",
                                      "data": [["kiwi", 7, 2.5, None, True, "=B8*C8"],
                                               [" spaced ", -1, 1e-7, "x", False, 12345678901]]}) == \
        "Data written to Data"
    after = members(p)
    changed = {n for n in before if before[n] != after.get(n)}
    assert changed == {"xl/worksheets/sheet1.xml"}, changed
    ws = openpyxl.load_workbook(p)["Data"]
    assert [c.value for c in ws[8]] == ["kiwi", 7, 2.5, None, True, "=B8*C8"]
    assert [c.value for c in ws[9]][:6] == [" spaced ", -1, 1e-7, "x", False, 12345678901]
    assert ws["D2"].value == datetime.datetime(2024, 1, 7)  # dates kept
    assert ws.merged_cells.ranges and str(ws.merged_cells.ranges[0]) == "A5:B6"
    df = pandas.read_excel(p, sheet_name="Data")
    assert df.shape[0] == 8 and df.iloc[6]["Name"] == "kiwi"
    # a new sheet is created on the fly, as upstream does
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Fresh", "data": [["a"]]}) == \
        "Data written to Fresh"
    assert openpyxl.load_workbook(p).sheetnames == ["Data", "Other", "Fresh"]
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Data", "data": []}) == \
        "Error: No data provided to write"
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Data", "data": [[[1, 2]]]}) == \
        "Error: Cannot convert [1, 2] to Excel"


def test_write_empty_string_and_none(xl, root):
    """As upstream's ws.cell(row, column, value=v): "" makes an empty string cell
    (openpyxl writes it without content, so it reads back empty), None leaves
    the cell as it was."""
    p = str(root / "e.xlsx")
    sample_workbook(p)
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Data", "start_cell": "A2",
                                      "data": [["", None, "", None], [None, "", None, ""]]}) == \
        "Data written to Data"
    ws = openpyxl.load_workbook(p)["Data"]
    assert [c.value for c in ws[2]][:5] == [None, 3, None, datetime.datetime(2024, 1, 7), True]
    assert [c.value for c in ws[3]][:5] == ["pear", None, 0.1, None, False]
    with zipfile.ZipFile(p) as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
    assert '<c r="A2" t="inlineStr"/>' in sheet and '<c r="B3" t="inlineStr"/>' in sheet
    df = pandas.read_excel(p, sheet_name="Data")
    assert pandas.isna(df.iloc[0]["Name"]) and df.iloc[0]["Qty"] == 3
    assert pandas.isna(df.iloc[1]["Qty"]) and df.iloc[1]["Name"] == "pear"
    v = cells(xl("read_data_from_excel", {"filepath": p, "sheet_name": "Data",
                                          "start_cell": "A2", "end_cell": "D3"}))
    assert v == {"A2": None, "B2": 3, "C2": None, "D2": "2024-01-07 00:00:00",
                 "A3": "pear", "B3": None, "C3": 0.1, "D3": None}
    # an empty cell written past the data still counts for the used range, as in openpyxl
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Other", "start_cell": "C4",
                                      "data": [[""]]}) == "Data written to Other"
    assert openpyxl.load_workbook(p)["Other"].dimensions == "A1:C4"
    assert "'Other': 'A1:C4'" in xl("get_workbook_metadata", {"filepath": p, "include_ranges": True})


def test_workbook_and_sheet_tools(xl, root):
    p = str(root / "sub" / "dir" / "new.xlsx")
    assert xl("create_workbook", {"filepath": p}) == "Created workbook at %s" % p
    assert openpyxl.load_workbook(p).sheetnames == ["Sheet1"]
    assert xl("create_worksheet", {"filepath": p, "sheet_name": "Two"}) == "Sheet Two created successfully"
    assert xl("create_worksheet", {"filepath": p, "sheet_name": "Two"}) == "Error: Sheet Two already exists"
    assert xl("rename_worksheet", {"filepath": p, "old_name": "Two", "new_name": "Deux"}) == \
        "Sheet renamed from 'Two' to 'Deux'"
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Sheet1",
                                      "data": [[1, 2, 3], [4, 5, 6], [7, 8, 9]]}) == "Data written to Sheet1"
    assert xl("apply_formula", {"filepath": p, "sheet_name": "Sheet1", "cell": "D1",
                                "formula": "=SUM(A1:C1)"}) == "Applied formula '=SUM(A1:C1)' to cell D1"
    assert xl("apply_formula", {"filepath": p, "sheet_name": "Sheet1", "cell": "D2",
                                "formula": "SUM(A2:C2)"}) == \
        "Error: Invalid formula syntax: Formula must start with '='"
    assert xl("merge_cells", {"filepath": p, "sheet_name": "Sheet1", "start_cell": "A5", "end_cell": "B6"}) == \
        "Range 'A5:B6' merged in sheet 'Sheet1'"
    assert xl("unmerge_cells", {"filepath": p, "sheet_name": "Sheet1", "start_cell": "A5", "end_cell": "B6"}) == \
        "Range 'A5:B6' unmerged successfully"
    assert xl("unmerge_cells", {"filepath": p, "sheet_name": "Sheet1", "start_cell": "A5", "end_cell": "B6"}) == \
        "Error: Range 'A5:B6' is not merged"
    assert xl("format_range", {"filepath": p, "sheet_name": "Sheet1", "start_cell": "A1", "end_cell": "C1",
                               "bold": True, "italic": True, "font_size": 14, "font_color": "FF0000",
                               "bg_color": "00FF00", "border_style": "thin", "number_format": "0.00",
                               "alignment": "center", "wrap_text": True}) == "Range formatted successfully"
    assert xl("format_range", {"filepath": p, "sheet_name": "Sheet1", "start_cell": "A1",
                               "font_color": "#zz"}) == "Error: Invalid font color: Colors must be aRGB hex values"
    assert xl("copy_range", {"filepath": p, "sheet_name": "Sheet1", "source_start": "A1", "source_end": "C1",
                             "target_start": "A10"}) == "Range copied successfully"
    assert xl("insert_rows", {"filepath": p, "sheet_name": "Sheet1", "start_row": 2, "count": 2}) == \
        "Inserted 2 row(s) starting at row 2 in sheet 'Sheet1'"
    assert xl("delete_sheet_columns", {"filepath": p, "sheet_name": "Sheet1", "start_col": 2}) == \
        "Deleted 1 column(s) starting at column 2 in sheet 'Sheet1'"
    assert xl("insert_columns", {"filepath": p, "sheet_name": "Sheet1", "start_col": 1}) == \
        "Inserted 1 column(s) starting at column 1 in sheet 'Sheet1'"
    assert xl("delete_sheet_rows", {"filepath": p, "sheet_name": "Sheet1", "start_row": 1}) == \
        "Deleted 1 row(s) starting at row 1 in sheet 'Sheet1'"
    assert xl("insert_rows", {"filepath": p, "sheet_name": "Sheet1", "start_row": 0}) == \
        "Error: Start row must be 1 or greater"
    wb = openpyxl.load_workbook(p)
    ws = wb["Sheet1"]
    rows = [[c.value for c in r] for r in ws.iter_rows(min_row=1, max_row=4, max_col=4)]
    assert rows == [[None] * 4, [None] * 4, [None, 4, 6, None], [None, 7, 9, None]]
    a10 = ws["B11"]  # A10 after +2 rows -1 row and -1 +1 column
    assert a10.value == 1 and a10.font.b and a10.font.i and a10.font.sz == 14
    assert a10.fill.fgColor.rgb == "FF00FF00" and a10.border.left.style == "thin"
    assert a10.number_format == "0.00" and a10.alignment.horizontal == "center" and a10.alignment.wrap_text
    assert wb.sheetnames == ["Sheet1", "Deux"]
    assert xl("delete_range", {"filepath": p, "sheet_name": "Sheet1", "start_cell": "B3", "end_cell": "C3"}) == \
        "Range B3:C3 deleted successfully"
    assert openpyxl.load_workbook(p)["Sheet1"]["B3"].value == 7
    assert xl("delete_worksheet", {"filepath": p, "sheet_name": "Deux"}) == "Sheet 'Deux' deleted"
    assert xl("delete_worksheet", {"filepath": p, "sheet_name": "Sheet1"}) == \
        "Error: Cannot delete the only sheet in workbook"
    assert openpyxl.load_workbook(p).sheetnames == ["Sheet1"]
    assert pandas.read_excel(p).shape[1] >= 3


# ------------------------------------------------------------------- errors

def test_paths_and_errors(xl, root, tmp_path):
    p = str(root / "e.xlsx")
    sample_workbook(p)
    assert xl("read_data_from_excel", {"filepath": "e.xlsx", "sheet_name": "Data"}, error=True) == \
        "Error executing tool read_data_from_excel: Invalid filename: e.xlsx, must be an absolute " \
        "path when not in SSE mode"
    out = str(tmp_path / "outside.xlsx")
    shutil.copy(p, out)
    t = xl("read_data_from_excel", {"filepath": out, "sheet_name": "Data"}, error=True)
    assert "Access denied - path outside allowed directories" in t
    os.symlink(out, str(root / "link.xlsx"))
    t = xl("read_data_from_excel", {"filepath": str(root / "link.xlsx"), "sheet_name": "Data"}, error=True)
    assert "outside allowed directories" in t
    assert xl("read_data_from_excel", {"filepath": str(root / "nope.xlsx"), "sheet_name": "Data"},
              error=True) == "Error executing tool read_data_from_excel: [Errno 2] No such file or " \
                             "directory: '%s'" % (root / "nope.xlsx")
    assert xl("read_data_from_excel", {"filepath": p, "sheet_name": "Nope"}, error=True) == \
        "Error executing tool read_data_from_excel: Sheet 'Nope' not found"
    assert xl("get_workbook_metadata", {"filepath": str(root / "nope.xlsx")}) == \
        "Error: File not found: %s" % (root / "nope.xlsx")
    t = xl("write_data_to_excel", {"filepath": p, "sheet_name": "Data", "data": "oops"}, error=True)
    assert "1 validation error for write_data_to_excelArguments\ndata\n  Input should be a valid list" in t
    # JSON text for a list field is parsed, as FastMCP does
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Data", "data": "[[1, 2]]",
                                      "start_cell": "H1"}) == "Data written to Data"
    (root / "t.txt").write_text("x")
    assert "openpyxl does not support .txt file format" in \
        xl("read_data_from_excel", {"filepath": str(root / "t.txt"), "sheet_name": "A"}, error=True)


# ------------------------------------------------------------------ hostile

def test_hostile_files(xl, root):
    good = str(root / "g.xlsx")
    sample_workbook(good)
    data = open(good, "rb").read()
    trunc = str(root / "trunc.xlsx")
    open(trunc, "wb").write(data[: len(data) // 2])
    t = xl("read_data_from_excel", {"filepath": trunc, "sheet_name": "Data"}, error=True)
    assert "File is not a zip file" in t or "not a valid Office document" in t
    assert xl("write_data_to_excel", {"filepath": trunc, "sheet_name": "Data", "data": [[1]]}).startswith("Error: ")

    # zip bomb: a part that inflates more than 1000 times, over 1 MiB
    bomb = str(root / "bomb.xlsx")
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED,
                                                       compresslevel=9) as dst:
        for i in src.infolist():
            if i.filename != "xl/worksheets/sheet1.xml":
                dst.writestr(i, src.read(i.filename))
        big = b"<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData/>" \
            + b" " * (300 << 20) + b"</worksheet>"
        dst.writestr("xl/worksheets/sheet1.xml", big)
    t = xl("read_data_from_excel", {"filepath": bomb, "sheet_name": "Data"}, error=True)
    assert "zip bomb" in t

    # XML entity bomb inside the sheet part
    ent = str(root / "ent.xlsx")
    lol = b"<?xml version=\"1.0\"?><!DOCTYPE w [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">" \
          b"<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;\"><!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;\">]>" \
          b"<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>" \
          b"<row r=\"1\"><c r=\"A1\" t=\"inlineStr\"><is><t>&d;</t></is></c></row></sheetData></worksheet>"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(ent, "w", zipfile.ZIP_DEFLATED) as dst:
        for i in src.infolist():
            dst.writestr(i, lol if i.filename == "xl/worksheets/sheet1.xml" else src.read(i.filename))
    t = xl("read_data_from_excel", {"filepath": ent, "sheet_name": "Data"}, error=True)
    assert "DOCTYPE" in t

    # huge sheet: two cells spanning the whole grid
    huge = str(root / "huge.xlsx")
    sheet = b"<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>" \
            b"<row r=\"1\"><c r=\"A1\"><v>1</v></c></row>" \
            b"<row r=\"1048576\"><c r=\"XFD1048576\"><v>2</v></c></row></sheetData></worksheet>"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(huge, "w", zipfile.ZIP_DEFLATED) as dst:
        for i in src.infolist():
            dst.writestr(i, sheet if i.filename == "xl/worksheets/sheet1.xml" else src.read(i.filename))
    t = xl("read_data_from_excel", {"filepath": huge, "sheet_name": "Data"}, error=True)
    assert "more than the" in t and "read it in parts" in t
    t = xl("format_range", {"filepath": huge, "sheet_name": "Data", "start_cell": "A1",
                            "end_cell": "XFD1048576", "bold": True})
    assert t.startswith("Error: ") and "too many" in t
    # the server is still alive and well
    assert xl("read_data_from_excel", {"filepath": huge, "sheet_name": "Data", "start_cell": "A1",
                                       "end_cell": "A1"}).startswith("{")


# --------------------------------------------------------------- real flows

def bench(task, *parts):
    p = os.path.join(BENCH, task, *parts)
    if not os.path.exists(p):
        pytest.skip("bench data not present")
    return p


def test_flow_sales_accounting(xl, root):
    src = bench("sales-accounting", "initial_workspace", "Account_Book.xlsx")
    gt = openpyxl.load_workbook(bench("sales-accounting", "groundtruth_workspace",
                                      "Account_Book_Complete.xlsx")).active
    p = str(root / "Account_Book.xlsx")
    shutil.copy(src, p)
    before = members(p)
    meta = xl("get_workbook_metadata", {"filepath": p, "include_ranges": True})
    assert "'Ledger': 'A1:H121'" in meta
    last = cells(xl("read_data_from_excel", {"filepath": p, "sheet_name": "Ledger",
                                             "start_cell": "A121", "end_cell": "H121"}))
    assert last["A121"] == "2024-01-06"
    # the agent's work: the five transactions of the two weeks before, from memory.json
    new_rows = [[c.value for c in r][:8] for r in gt.iter_rows(min_row=122, max_row=126)]
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Ledger", "data": new_rows,
                                      "start_cell": "A122"}) == "Data written to Ledger"
    after = members(p)
    assert {n for n in before if before[n] != after[n]} == {"xl/worksheets/sheet1.xml"}
    # the task's check: 126 rows, the first 121 as the reference, the last 5 (7 columns) too
    ws = openpyxl.load_workbook(p)["Ledger"]
    got = [[c.value for c in r] for r in ws.iter_rows(min_row=1, max_row=ws.max_row)]
    want = [[c.value for c in r] for r in gt.iter_rows(min_row=1, max_row=gt.max_row)]
    assert len(got) == 126
    assert got[:121] == want[:121]
    assert [r[:7] for r in got[121:]] == [r[:7] for r in want[121:]]
    df = pandas.read_excel(p)
    assert len(df) == 125


def test_flow_market_research(xl, root):
    src = bench("excel-market-research", "initial_workspace", "Market_Data.xlsx")
    gt_path = bench("excel-market-research", "groundtruth_workspace", "segment_growth_rates.xlsx")
    p = str(root / "Market_Data.xlsx")
    shutil.copy(src, p)
    meth = cells(xl("read_data_from_excel", {"filepath": p, "sheet_name": "Methodology"}))
    raw = cells(xl("read_data_from_excel", {"filepath": p, "sheet_name": "RawData"}))
    # the tool returns formulas as upstream does (openpyxl, data_only=False); for those the
    # agent takes the cached value another way (python_execute in Toolathlon)
    cached = openpyxl.load_workbook(p, data_only=True)["RawData"]
    for k, v in list(raw.items()):
        if isinstance(v, str) and v.startswith("="):
            raw[k] = cached[k].value
    # segment/source weights from the Methodology sheet (rows 4.., sources in row 2)
    sources = {}
    col = 3
    while meth.get("%s2" % openpyxl.utils.get_column_letter(col)):
        sources[col] = meth["%s2" % openpyxl.utils.get_column_letter(col)]
        col += 1
    segments = []
    row = 4
    while meth.get("B%d" % row):
        name = meth["B%d" % row]
        if name != "Total":
            w = {sources[c]: meth.get("%s%d" % (openpyxl.utils.get_column_letter(c), row))
                 for c in sources}
            segments.append((name, {k: v for k, v in w.items() if isinstance(v, (int, float))}))
        row += 1
    # RawData: headers in row 4, years from row 5
    heads = {}
    c = 2
    while raw.get("%s4" % openpyxl.utils.get_column_letter(c)):
        heads[raw["%s4" % openpyxl.utils.get_column_letter(c)]] = openpyxl.utils.get_column_letter(c)
        c += 1
    years = {}
    r = 5
    while isinstance(raw.get("A%d" % r), int):
        years[raw["A%d" % r]] = r
        r += 1

    def growth(seg, y):
        # the sheet's rule: each source's YoY growth, then the weighted sum
        tot = 0.0
        for src_name, w in seg.items():
            col = heads[src_name]
            a = raw.get("%s%d" % (col, years[y - 1]))
            b = raw.get("%s%d" % (col, years[y]))
            if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or not a:
                return "N/A"
            tot += w * (b / a - 1) * 100
        return round(tot, 1)

    table = [["Year"] + [s for s, _ in segments]]
    for y in range(2015, 2025):
        table.append([y] + [growth(seg, y) for _, seg in segments])
    out = str(root / "segment_growth_rates.xlsx")
    assert xl("create_workbook", {"filepath": out}) == "Created workbook at %s" % out
    assert xl("write_data_to_excel", {"filepath": out, "sheet_name": "Sheet1", "data": table}) == \
        "Data written to Sheet1"
    got = [[c.value for c in r] for r in openpyxl.load_workbook(out).active.iter_rows()]
    want = [[c.value for c in r] for r in openpyxl.load_workbook(gt_path).active.iter_rows()]
    assert got == want


def test_flow_data_transformation(xl, root):
    src = bench("excel-data-transformation", "initial_workspace", "Household_Appliances.xlsx")
    fmt = bench("excel-data-transformation", "initial_workspace", "Format_Example.xlsx")
    gt = pandas.read_excel(bench("excel-data-transformation", "groundtruth_workspace", "Processed.xlsx"))
    p = str(root / "Household_Appliances.xlsx")
    shutil.copy(src, p)
    shutil.copy(fmt, str(root / "Format_Example.xlsx"))
    example = cells(xl("read_data_from_excel", {"filepath": str(root / "Format_Example.xlsx"),
                                                "sheet_name": "Format_Example"}))
    header = [example["%s1" % c] for c in "ABCDEF"]
    data = cells(xl("read_data_from_excel", {"filepath": p, "sheet_name": "Sheet1"}))
    kinds = [("Household Refrigerators", "B"), ("Air Conditioners", "F"), ("Household Washing Machines", "J")]
    rows = [header]
    r = 3
    while ("A%d" % r) in data:
        when = data["A%d" % r]
        if isinstance(when, str) and when[:7] <= "2024-12":
            block = []
            for name, c0 in kinds:
                ci = openpyxl.utils.column_index_from_string(c0)
                vals = [data.get("%s%d" % (openpyxl.utils.get_column_letter(ci + k), r)) for k in range(4)]
                if vals[2] is not None:
                    vals[2] = round(vals[2] * 100, 10)
                if vals[3] is not None:
                    vals[3] = round(vals[3] * 100, 10)
                block.append([when[:7], name] + vals)
            if any(v is not None for b in block for v in b[2:]):
                rows.extend(block)
        r += 1
    out = str(root / "Processed.xlsx")
    assert xl("create_workbook", {"filepath": out}) == "Created workbook at %s" % out
    assert xl("rename_worksheet", {"filepath": out, "old_name": "Sheet1", "new_name": "Processed_Data"}) == \
        "Sheet renamed from 'Sheet1' to 'Processed_Data'"
    assert xl("write_data_to_excel", {"filepath": out, "sheet_name": "Processed_Data", "data": rows}) == \
        "Data written to Processed_Data"
    got = pandas.read_excel(out)
    assert list(got.columns) == list(gt.columns)
    assert got.shape == gt.shape
    assert list(got["Time"]) == list(gt["Time"])
    assert list(got["Appliance types"]) == list(gt["Appliance types"])
    for col in gt.columns[2:]:
        a, b = got[col].fillna(-1e9).tolist(), gt[col].fillna(-1e9).tolist()
        assert all(abs(x - y) < 1e-6 for x, y in zip(a, b)), col


# ------------------------------------------------------ tables and sheets

def test_create_table(xl, root):
    p = str(root / "t.xlsx")
    sample_workbook(p)
    before = members(p)
    assert xl("create_table", {"filepath": p, "sheet_name": "Data", "data_range": "A1:C3",
                               "table_name": "Fruit"}) == \
        "Successfully created table 'Fruit' in sheet 'Data'."
    after = members(p)
    changed = {n for n in before if before[n] != after.get(n)}
    assert changed == {"xl/worksheets/sheet1.xml", "[Content_Types].xml"}, changed
    added = set(after) - set(before)
    assert "xl/tables/table1.xml" in added and "xl/worksheets/_rels/sheet1.xml.rels" in added
    ws = openpyxl.load_workbook(p)["Data"]
    t = ws.tables["Fruit"]
    assert t.ref == "A1:C3" and t.tableStyleInfo.name == "TableStyleMedium9"
    assert t.tableStyleInfo.showRowStripes and not t.tableStyleInfo.showColumnStripes
    assert t.column_names == ["Name", "Qty", "Price"]
    assert ws["B2"].value == 3 and ws["A3"].value == "pear"
    # a generated name, another style, a second table in the same sheet
    text = xl("create_table", {"filepath": p, "sheet_name": "Data", "data_range": "e1:f3",
                               "table_style": "TableStyleLight1"})
    assert text.startswith("Successfully created table 'Table_") and text.endswith("' in sheet 'Data'.")
    name = text.split("'")[1]
    assert len(name) == len("Table_") + 8
    ws = openpyxl.load_workbook(p)["Data"]
    assert sorted(ws.tables) == sorted(["Fruit", name])
    assert ws.tables[name].ref == "E1:F3" and ws.tables[name].tableStyleInfo.name == "TableStyleLight1"
    assert ws.tables[name].column_names == ["Ok", "None"]  # str() of an empty header, as openpyxl
    assert pandas.read_excel(p, sheet_name="Data").iloc[0]["Name"] == "apple"
    base = {"filepath": p, "sheet_name": "Data", "data_range": "A8:B9"}
    assert xl("create_table", dict(base, table_name="fruit")) == "Error: Table with name fruit already exists"
    assert xl("create_table", dict(base, table_name="My Table")) == "Error: Table names cannot have spaces"
    assert xl("create_table", dict(base, sheet_name="Nope")) == "Error: Sheet 'Nope' not found."
    assert xl("create_table", dict(base, data_range="1A:B2")).startswith(
        "Error: Value does not match pattern ^[$]?([A-Za-z]{1,3})")
    assert xl("create_table", dict(base, data_range="B9:A8")) == \
        "Error: Table range B9:A8 is reversed or lies outside the sheet"
    assert xl("create_table", dict(base, filepath=str(root / "none.xlsx"))) == \
        "Error: [Errno 2] No such file or directory: '%s'" % (root / "none.xlsx")
    assert len(openpyxl.load_workbook(p)["Data"].tables) == 2


def test_copy_worksheet(xl, root):
    p = str(root / "c.xlsx")
    sample_workbook(p)
    wb = openpyxl.load_workbook(p)
    wb["Data"]["G1"].hyperlink = "https://example.com/x"
    wb.save(p)
    assert xl("create_table", {"filepath": p, "sheet_name": "Data", "data_range": "A1:C3",
                               "table_name": "Src"}).startswith("Successfully")
    before = members(p)
    assert xl("copy_worksheet", {"filepath": p, "source_sheet": "Data", "target_sheet": "Data 2"}) == \
        "Sheet 'Data' copied to 'Data 2'"
    after = members(p)
    changed = {n for n in before if before[n] != after.get(n)}
    assert changed == {"xl/workbook.xml", "xl/_rels/workbook.xml.rels", "[Content_Types].xml"}, changed
    wb = openpyxl.load_workbook(p)
    assert wb.sheetnames == ["Data", "Other", "Data 2"]
    src, dst = wb["Data"], wb["Data 2"]
    vals = lambda ws: [[c.value for c in r] for r in ws.iter_rows()]
    assert vals(src) == vals(dst) and len(vals(dst)) >= 5
    assert [str(r) for r in dst.merged_cells.ranges] == ["A5:B6"]
    assert dst["G1"].hyperlink.target == "https://example.com/x"
    assert dst["D2"].number_format == src["D2"].number_format
    assert list(dst.tables) == [] and list(src.tables) == ["Src"]  # a table belongs to one sheet
    assert pandas.read_excel(p, sheet_name="Data 2").equals(pandas.read_excel(p, sheet_name="Data"))
    # the copy is independent of its source
    assert xl("write_data_to_excel", {"filepath": p, "sheet_name": "Data 2", "data": [["changed"]]}) == \
        "Data written to Data 2"
    wb = openpyxl.load_workbook(p)
    assert wb["Data 2"]["A1"].value == "changed" and wb["Data"]["A1"].value == "Name"
    assert xl("copy_worksheet", {"filepath": p, "source_sheet": "Nope", "target_sheet": "X"}) == \
        "Error: Source sheet 'Nope' not found"
    assert xl("copy_worksheet", {"filepath": p, "source_sheet": "Data", "target_sheet": "Other"}) == \
        "Error: Target sheet 'Other' already exists"
    assert xl("copy_worksheet", {"filepath": p, "source_sheet": "Data", "target_sheet": "a/b"}) == \
        "Error: Invalid character / found in sheet title"
    # a case-insensitive clash is renamed as openpyxl does
    assert xl("copy_worksheet", {"filepath": p, "source_sheet": "Other", "target_sheet": "other"}) == \
        "Sheet 'Other' copied to 'other'"
    wb = openpyxl.load_workbook(p)
    assert wb.sheetnames == ["Data", "Other", "Data 2", "other1"]
    assert wb["other1"]["A1"].value == "ünïcode"


def chart_workbook(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales Data"
    ws.append(["Month", "North", "South"])
    for i, m in enumerate(["Jan", "Feb", "Mar", "Apr"]):
        ws.append([m, 10 + i, 20 - i])
    wb.create_sheet("Other")["A1"] = 1
    wb.save(path)


def test_create_chart(xl, root):
    p = str(root / "ch.xlsx")
    chart_workbook(p)
    before = members(p)
    base = {"filepath": p, "sheet_name": "Sales Data", "data_range": "A1:C5", "target_cell": "E2"}
    assert xl("create_chart", dict(base, chart_type="bar", title="Sales", x_axis="Month",
                                   y_axis="Units")) == "Bar chart created successfully"
    after = members(p)
    changed = {n for n in before if before[n] != after.get(n)}
    assert changed == {"xl/worksheets/sheet1.xml", "[Content_Types].xml"}, changed
    assert {"xl/charts/chart1.xml", "xl/drawings/drawing1.xml",
            "xl/drawings/_rels/drawing1.xml.rels"} <= set(after)
    ct = after["[Content_Types].xml"].decode()
    assert "/xl/charts/chart1.xml" in ct and "drawingml.chart+xml" in ct and "/xl/drawings/drawing1.xml" in ct
    wb = openpyxl.load_workbook(p)
    ws = wb["Sales Data"]
    assert len(ws._charts) == 1
    ch = ws._charts[0]
    assert ch.tagname == "barChart" and len(ch.series) == 2
    assert ch.series[0].val.numRef.f == "'Sales Data'!$B$2:$B$5"
    assert ch.series[1].tx.strRef.f == "'Sales Data'!$C$1"
    assert ch.series[0].cat.numRef.f == "'Sales Data'!$A$2:$A$5"
    assert ch.anchor._from.col == 4 and ch.anchor._from.row == 1
    assert ch.title.tx.rich.p[0].r[0].t == "Sales"
    assert ch.x_axis.title.tx.rich.p[0].r[0].t == "Month"
    assert ws["B2"].value == 10  # data untouched
    # a second chart goes into the same drawing; every supported type loads
    for kind, tag in [("LINE", "lineChart"), ("pie", "pieChart"), ("scatter", "scatterChart"),
                      ("Area", "areaChart")]:
        assert xl("create_chart", dict(base, chart_type=kind, target_cell="E20")) == \
            "%s chart created successfully" % kind.capitalize()
    after2 = members(p)
    assert "xl/drawings/drawing2.xml" not in after2 and "xl/charts/chart5.xml" in after2
    ws = openpyxl.load_workbook(p)["Sales Data"]
    assert [c.tagname for c in ws._charts] == ["barChart", "lineChart", "pieChart", "scatterChart",
                                               "areaChart"]
    sc = ws._charts[3]
    assert sc.series[0].xVal.numRef.f == "'Sales Data'!$A$2:$A$5"
    assert sc.series[0].yVal.numRef.f == "'Sales Data'!$B$3:$B$5"
    assert after2["xl/worksheets/sheet2.xml"] == before["xl/worksheets/sheet2.xml"]
    # errors, as upstream words them
    assert xl("create_chart", dict(base, chart_type="radar")) == \
        "Error: Unsupported chart type: radar. Supported types: line, bar, pie, scatter, area"
    assert xl("create_chart", dict(base, chart_type="bar", sheet_name="No")) == "Error: Sheet 'No' not found"
    assert xl("create_chart", dict(base, chart_type="bar", data_range="Nope!A1:C5")) == \
        "Error: Sheet 'Nope' referenced in data range not found"
    assert xl("create_chart", dict(base, chart_type="bar", data_range="A1")) == \
        "Error: Invalid data range format: not enough values to unpack (expected 2, got 1)"
    assert xl("create_chart", dict(base, chart_type="bar", target_cell="E")) == \
        "Error: Failed to create chart drawing: Invalid target cell format: E"
    assert xl("create_chart", dict(base, chart_type="bar", target_cell="AA5")) == \
        "Error: Invalid target cell: invalid literal for int() with base 10: 'A5'"
    assert xl("create_chart", dict(base, chart_type="bar", filepath=str(root / "x.xlsx"))) == \
        "Error: Unexpected error creating chart: [Errno 2] No such file or directory: '%s'" % (root / "x.xlsx")
    assert len(openpyxl.load_workbook(p)["Sales Data"]._charts) == 5
    # a copied sheet keeps its values but not the drawing, which belongs to its source
    assert xl("copy_worksheet", {"filepath": p, "source_sheet": "Sales Data", "target_sheet": "Copy"}) == \
        "Sheet 'Sales Data' copied to 'Copy'"
    wb = openpyxl.load_workbook(p)
    assert len(wb["Copy"]._charts) == 0 and len(wb["Sales Data"]._charts) == 5
    assert wb["Copy"]["C5"].value == 17


def test_create_pivot_table(xl, root):
    p = str(root / "pv.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    for r in [["Region", "Product", "Sales", "Qty"], ["North", "A", 10, 1], ["South", "A", 20, 2],
              ["North", "B", 30, 3], ["North", "A", 5, 4]]:
        ws.append(r)
    wb.create_sheet("Other")["A1"] = "keep"
    wb.save(p)
    before = members(p)
    base = {"filepath": p, "sheet_name": "Data", "data_range": "A1:D5"}
    # upstream's default agg_func ("mean") is one its own check refuses
    assert xl("create_pivot_table", dict(base, rows=["Region"], values=["Sales"])) == \
        "Error: Invalid aggregation function. Must be one of: sum, average, count, min, max"
    assert members(p) == before
    assert xl("create_pivot_table", dict(base, rows=["Region"], values=["Sales"], agg_func="sum")) == \
        "Summary table created successfully"
    after = members(p)
    assert after["xl/worksheets/sheet1.xml"] == before["xl/worksheets/sheet1.xml"]
    assert after["xl/worksheets/sheet2.xml"] == before["xl/worksheets/sheet2.xml"]
    wb = openpyxl.load_workbook(p)
    assert wb.sheetnames == ["Data", "Other", "Data_pivot"]
    pv = wb["Data_pivot"]
    assert [[c.value for c in r] for r in pv.iter_rows()] == \
        [["Region", "Sales (sum)"], ["North", 45], ["South", 20]]
    assert pv["A1"].font.b and pv["B1"].font.b
    tname, = list(pv.tables)
    t = pv.tables[tname]
    assert tname.startswith("PivotTable_") and len(tname) == len("PivotTable_") + 8
    assert t.ref == "A1:B3" and t.tableStyleInfo.name == "TableStyleMedium9"
    assert t.tableStyleInfo.showColumnStripes and t.column_names == ["Region", "Sales (sum)"]
    # two row fields: every combination, suffixes dropped, the sheet replaced
    assert xl("create_pivot_table", dict(base, rows=["Region", "product"], values=["Sales (sum)", "Qty"],
                                         agg_func="average")) == "Summary table created successfully"
    wb = openpyxl.load_workbook(p)
    assert wb.sheetnames == ["Data", "Other", "Data_pivot"]
    pv = wb["Data_pivot"]
    got = [[c.value for c in r] for r in pv.iter_rows()]
    # "product" matches case-insensitively but its records are looked up by the exact name,
    # so upstream finds no value for it: one "" combination, nothing matched, zeros
    assert got == [["Region", "product", "Sales (average)", "Qty (average)"],
                   ["North", None, 0, 0], ["South", None, 0, 0]], got
    assert xl("create_pivot_table", dict(base, rows=["Region", "Product"], values=["Sales", "Qty"],
                                         agg_func="average")) == "Summary table created successfully"
    pv = openpyxl.load_workbook(p)["Data_pivot"]
    assert [[c.value for c in r] for r in pv.iter_rows()] == [
        ["Region", "Product", "Sales (average)", "Qty (average)"],
        ["North", "A", 7.5, 2.5], ["North", "B", 30, 3], ["South", "A", 20, 2], ["South", "B", 0, 0]]
    assert len(pv.tables) == 1 and list(pv.tables.values())[0].ref == "A1:D5"
    assert len([n for n in members(p) if n.startswith("xl/tables/")]) == 1  # the old table went with its sheet
    df = pandas.read_excel(p, sheet_name="Data_pivot")
    assert list(df.columns) == ["Region", "Product", "Sales (average)", "Qty (average)"] and len(df) == 4
    assert xl("create_pivot_table", dict(base, rows=["Region"], values=["Qty"], agg_func="max")) == \
        "Summary table created successfully"
    pv = openpyxl.load_workbook(p)["Data_pivot"]
    assert [[c.value for c in r] for r in pv.iter_rows()] == [["Region", "Qty (max)"], ["North", 4], ["South", 2]]
    # errors
    assert xl("create_pivot_table", dict(base, rows=["Nope"], values=["Sales"], agg_func="sum")) == \
        "Error: Invalid row field 'Nope'. Available fields: Product, Qty, Region, Sales"
    assert xl("create_pivot_table", dict(base, rows=["Region"], values=["Sales"], columns=["X"],
                                         agg_func="sum")) == \
        "Error: Invalid column field 'X'. Available fields: Product, Qty, Region, Sales"
    assert xl("create_pivot_table", dict(base, data_range="A1", rows=["Region"], values=["Sales"],
                                         agg_func="sum")) == "Error: Data range must be in format 'A1:B2'"
    assert xl("create_pivot_table", dict(base, data_range="A1:D1", rows=["Region"], values=["Sales"],
                                         agg_func="sum")) == \
        "Error: Failed to read or process source data: Source data must have a header row and at least one data row."
    assert xl("create_pivot_table", dict(base, sheet_name="No", rows=["Region"], values=["Sales"])) == \
        "Error: Sheet 'No' not found"
