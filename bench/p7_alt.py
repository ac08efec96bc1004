#!/usr/bin/python3
"""The alternative side of P7: the work upstream's Python servers do for one
tool call (excel-mcp-server on openpyxl, pdf-tools-mcp on PyPDF2), done by
the same libraries in one long-lived Python process, without MCP, HTTP or a
sandbox around it. The upstream servers themselves cannot be installed here
(pip has no network), so this is the closest reachable comparison: it is a
floor for them, since it leaves out their transport.

  p7_alt.py xlsx-write XLSX DATA.json RUNS
  p7_alt.py xlsx-read XLSX SHEET ROWS COLS WINDOW RUNS
  p7_alt.py pdf-read PDF PAGES RUNS

Each mode does one untimed warm-up and RUNS timed repetitions, checks what it
produced, and prints one JSON line: {"ms": [...], "maxrss": bytes (the
process's peak RSS, ru_maxrss), "library": "name version", "check": ...}."""
import json
import resource
import sys
import time


def xlsx_write(path, data_path, runs):
    """upstream write_data: load_workbook, ws.cell(row, column, value=v) for
    each value, save; into a workbook create_workbook made (untimed)."""
    import openpyxl
    with open(data_path) as f:
        data = json.load(f)
    times = []
    for i in range(runs + 1):
        p = "%s.%d.xlsx" % (path, i)
        wb = openpyxl.Workbook()
        wb.active.title = "Sheet1"
        wb.save(p)
        t = time.perf_counter()
        wb = openpyxl.load_workbook(p)
        ws = wb["Sheet1"]
        for r, row in enumerate(data, start=1):
            for c, v in enumerate(row, start=1):
                ws.cell(row=r, column=c, value=v)
        wb.save(p)
        wb.close()
        if i:
            times.append((time.perf_counter() - t) * 1000)
    check = openpyxl.load_workbook(p).active.max_row
    return times, "openpyxl " + openpyxl.__version__, check


def validation_for(ws, address):
    """upstream get_data_validation_for_cell's search (the sheet has none)."""
    for dv in ws.data_validations.dataValidation:
        if address in dv.sqref:
            return {"has_validation": True, "validation_type": dv.type}
    return None


def xlsx_read(path, sheet, rows, cols, window, runs):
    """upstream read_data_from_excel, one call per window: load_workbook, the
    cells with their metadata, json.dumps(indent=2)."""
    import openpyxl
    from openpyxl.utils import get_column_letter
    times, size = [], 0
    for i in range(runs + 1):
        t = time.perf_counter()
        size = 0
        for start in range(1, rows + 1, window):
            end = min(start + window - 1, rows)
            wb = openpyxl.load_workbook(path, read_only=False)
            ws = wb[sheet]
            data = {"range": "A%d:%s%d" % (start, get_column_letter(cols), end),
                    "sheet_name": sheet, "cells": []}
            for r in range(start, end + 1):
                for c in range(1, cols + 1):
                    address = "%s%d" % (get_column_letter(c), r)
                    cell = {"address": address, "value": ws.cell(row=r, column=c).value,
                            "row": r, "column": c}
                    cell["validation"] = validation_for(ws, address) or {"has_validation": False}
                    data["cells"].append(cell)
            wb.close()
            size += len(json.dumps(data, indent=2, default=str))
        if i:
            times.append((time.perf_counter() - t) * 1000)
    return times, "openpyxl " + openpyxl.__version__, size


def pdf_read(path, pages, runs):
    """upstream read_pdf_pages: a reader, extract_text() per page, the reply text."""
    import pypdf
    times, out = [], ""
    for i in range(runs + 1):
        t = time.perf_counter()
        reader = pypdf.PdfReader(path)
        total = len(reader.pages)
        parts = ["PDF total pages: %d\nExtracted page range: 1-%d\n\n" % (total, pages)]
        for n in range(pages):
            text = reader.pages[n].extract_text()
            if text.strip():
                parts.append("=== Page %d ===\n%s\n\n" % (n + 1, text))
        out = "".join(parts)
        if i:
            times.append((time.perf_counter() - t) * 1000)
    return times, "pypdf " + pypdf.__version__, out


def main(argv):
    mode = argv[1]
    if mode == "xlsx-write":
        times, lib, check = xlsx_write(argv[2], argv[3], int(argv[4]))
    elif mode == "xlsx-read":
        times, lib, check = xlsx_read(argv[2], argv[3], int(argv[4]), int(argv[5]),
                                      int(argv[6]), int(argv[7]))
    elif mode == "pdf-read":
        times, lib, check = pdf_read(argv[2], int(argv[3]), int(argv[4]))
    else:
        sys.exit("p7_alt.py: unknown mode %s" % mode)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"ms": times, "maxrss": maxrss, "library": lib, "check": check}))


if __name__ == "__main__":
    main(sys.argv)
