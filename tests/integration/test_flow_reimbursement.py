"""Toolathlon's reimbursement-form-filler, done through the daemon's gateway.

The task: from the taxi receipts among the PDFs of bills/ (last three months),
fill Bill_Format.xlsx (monthly totals, then one line per receipt in file-name
order, months as YYYY-MM, amounts as numbers with two decimals), keep its
layout, and rename it department_expenses.xlsx. Its check reads the result
and the ground truth with pandas (header=None, empty rows dropped): exactly 40
rows, the template's labels in place, and every value of the monthly and
detail parts equal to the ground truth's.

A scripted agent does the work in an acquired Toolathlon sandbox with the
task's servers: terminal unpacks the bills, filesystem lists and renames,
pdf-tools reads every receipt, excel reads the template and writes the form.
Every value written comes from what the tools returned (the receipt texts,
the template's cells); the ground truth is only read by the check at the
end, on the workspace dumped through the API."""
import io
import os
import re
import string
import tarfile

import httpx
import pytest

from gwharness import ScriptedAgent

openpyxl = pytest.importorskip("openpyxl")
pandas = pytest.importorskip("pandas")

TASK = "/work/shared/bench-data/toolathlon/reimbursement-form-filler"


def task_file(*parts):
    p = os.path.join(TASK, *parts)
    if not os.path.exists(p):
        pytest.skip("bench data not present: %s" % p)
    return p


def workspace_tar(root):
    """The task's initial_workspace as the Toolathlon client uploads it (files only)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for dirpath, _, files in os.walk(root):
            for name in sorted(files):
                full = os.path.join(dirpath, name)
                tf.add(full, arcname=os.path.relpath(full, root))
    return buf.getvalue()




# ------------------------------------------------------------ the agent

def receipts_from_pdfs(agent, names):
    """(file name without extension, 'YYYY-MM', amount) of every taxi receipt,
    from the text pdf-tools returns."""
    out = []
    for name in names:
        text = agent("pdf-tools", "read_pdf_pages",
                     {"pdf_file_path": "/data/bills/" + name, "start_page": 1, "end_page": 1})
        assert text.startswith("PDF total pages: 1\n"), text
        if "TAXI RECEIPT" not in text:
            continue
        date = re.search(r"Date:\s*(\d{4})-(\d{2})-\d{2}", text)
        amount = re.search(r"Amount:\s*CNY\s*([0-9]+(?:\.[0-9]+)?)", text)
        assert date and amount, text
        out.append((name[:-len(".pdf")], "%s-%s" % date.groups(), float(amount.group(1))))
    return out


def template_layout(agent, path):
    """Where the template wants things, from read_data_from_excel's cells."""
    import json
    cells = json.loads(agent("excel", "read_data_from_excel",
                             {"filepath": path, "sheet_name": "Sheet1"}))["cells"]
    v = {c["address"]: c["value"] for c in cells}
    rows = sorted({c["row"] for c in cells})

    def row_of(label, after=0):
        return next(r for r in rows if r > after and v.get("A%d" % r) == label)
    total_head = row_of("Total reimbursement")
    month_head = row_of("Month", total_head)
    assert v["B%d" % month_head] == "Amount"
    total_row = row_of("Total_amount", month_head)
    month_rows = list(range(month_head + 1, total_row))
    # the template lists the months as dates under a yyyy-mm format
    months = [v["A%d" % r][:7] for r in month_rows]
    detail_head = row_of("File_name", total_row)
    assert [v["B%d" % detail_head], v["C%d" % detail_head]] == ["Month", "Amount"]
    return month_rows, months, total_row, detail_head + 1


def do_task(agent):
    out = agent("terminal", "run_command", {"command": "tar -xzf bills/bills.tar.gz -C bills"})
    listing = agent("filesystem", "list_directory", {"path": "/data/bills"})
    names = sorted(l[len("[FILE] "):] for l in listing.splitlines()
                   if l.startswith("[FILE] ") and l.endswith(".pdf"))
    assert len(names) == 40, (out, listing)
    receipts = receipts_from_pdfs(agent, names)
    # the last three months the receipts cover
    last3 = sorted({m for _, m, _ in receipts})[-3:]
    receipts = sorted(r for r in receipts if r[1] in last3)

    src = "/data/Bill_Format.xlsx"
    month_rows, months, total_row, first_detail = template_layout(agent, src)
    assert months == last3, (months, last3)
    totals = {m: round(sum(a for _, mm, a in receipts if mm == m), 2) for m in months}
    write = [[m, totals[m]] for m in months]
    assert agent("excel", "write_data_to_excel",
                 {"filepath": src, "sheet_name": "Sheet1", "start_cell": "A%d" % month_rows[0],
                  "data": write}) == "Data written to Sheet1"
    assert agent("excel", "write_data_to_excel",
                 {"filepath": src, "sheet_name": "Sheet1", "start_cell": "B%d" % total_row,
                  "data": [[round(sum(totals.values()), 2)]]}) == "Data written to Sheet1"
    details = [[name, month, round(amount, 2)] for name, month, amount in receipts]
    assert agent("excel", "write_data_to_excel",
                 {"filepath": src, "sheet_name": "Sheet1", "start_cell": "A%d" % first_detail,
                  "data": details}) == "Data written to Sheet1"
    agent("filesystem", "move_file", {"source": src, "destination": "/data/department_expenses.xlsx"})
    return receipts


# ------------------------------------------------------------ the check

def normalize_str(s):
    """The check's string comparison: whitespace and punctuation dropped, lower case."""
    return re.sub(r"\s", "", s).lower().translate(str.maketrans("", "", string.punctuation))


def differs(agent, gt):
    if isinstance(agent, (int, float)) and not isinstance(agent, bool):
        return float(agent) != float(gt)
    if type(agent) is not type(gt):
        return True
    if isinstance(agent, str):
        return normalize_str(agent) != normalize_str(gt)
    return False


def task_check(path, gt_path):
    """The task's check (format, then content), as its docs describe it; the list of problems."""
    df = pandas.read_excel(path, header=None).dropna(how="all").reset_index(drop=True)
    gt = pandas.read_excel(gt_path, header=None).dropna(how="all").reset_index(drop=True)
    problems = []
    if len(df) != 40:
        return ["%d non-empty rows, not 40" % len(df)]
    labels = {(0, 0): "Department", (0, 1): "Applicant's name", (1, 0): "R&D Department",
              (1, 1): "Lei WANG", (2, 0): "Total reimbursement", (8, 0): "Expense details",
              (3, 0): "Month", (3, 1): "Amount", (9, 0): "File_name", (9, 1): "Month",
              (9, 2): "Amount"}
    for (r, c), want in labels.items():
        if df.iloc[r, c] != want:
            problems.append("row %d col %d is %r, not %r" % (r, c, df.iloc[r, c], want))
    for i in range(40):
        if i in (0, 1, 2, 3, 8, 9):
            continue
        for j in range(2 if i in (4, 5, 6, 7) else 3):
            if differs(df.iloc[i, j], gt.iloc[i, j]):
                problems.append("row %d col %d: %r, ground truth %r" % (i, j, df.iloc[i, j],
                                                                       gt.iloc[i, j]))
    return problems


def test_reimbursement_form_filler(api, tmp_path):
    initial = task_file("initial_workspace")
    gt_path = task_file("groundtruth_workspace", "department_expenses.xlsx")
    r = api.post("/local-sandbox", json={"server_names": ["filesystem", "excel", "pdf-tools",
                                                          "terminal"],
                                         "benchmark": "Toolathlon"})
    assert r.status_code == 201, r.text
    sb = r.json()
    sid = sb["local_sandbox_id"]
    assert all(s["status"] == "occupied" for s in sb["servers"]), sb
    up = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
    assert httpx.put(up, content=workspace_tar(initial),
                     headers={"Content-Type": "application/gzip"}).status_code in (200, 201)
    assert api.post(f"/local-sandbox/{sid}/initialize").status_code == 200

    agent = ScriptedAgent(sb, refuse_error_text=True)
    try:
        receipts = do_task(agent)
    finally:
        agent.close()
    assert len(receipts) == 30

    url = api.get(f"/local-sandbox/{sid}/dump").json()["download_url"]
    result = tmp_path / "department_expenses.xlsx"
    with tarfile.open(fileobj=io.BytesIO(httpx.get(url, timeout=120).content), mode="r:gz") as tf:
        names = tf.getnames()
        assert "./Bill_Format.xlsx" not in names and len([n for n in names if n.endswith(".pdf")]) == 40
        result.write_bytes(tf.extractfile("./department_expenses.xlsx").read())
    assert task_check(str(result), gt_path) == []

    # the layout is the template's: its number formats and empty rows are still there
    ws = openpyxl.load_workbook(str(result))["Sheet1"]
    assert ws["B6"].number_format == "0.00" and ws["C13"].number_format == "0.00"
    assert ws["B13"].number_format == "yyyy\\-mm"
    assert all(c.value is None for c in ws[3]) and all(c.value is None for c in ws[10])
    assert ws["A12"].value == "File_name" and ws["A13"].value == "receipt_20250402_1"
    assert ws.max_row == 12 + len(receipts)
    # a check that can fail: one wrong amount is caught
    ws["C20"] = ws["C20"].value + 0.01
    broken = tmp_path / "broken.xlsx"
    ws.parent.save(str(broken))
    assert task_check(str(broken), gt_path) == ["row 17 col 2: %r, ground truth %r" % (
        ws["C20"].value, round(ws["C20"].value - 0.01, 2))]
