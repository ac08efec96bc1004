"""Toolathlon's interview-report, done through the daemon's gateway with the
Toolathlon profile's word server (office-word-mcp-server 1.1.9 surface).

The task: read Candidates_resumes.docx and Interviewer_evaluation.docx, write
one Interview_Assessment_Report_<Name>.docx per candidate as Format.md says
(heading "Candidate Interview Assessment Report" in Calibri 14 bold, a
"Candidate Name:" paragraph, bold section titles with the resume and the
evaluation pasted under them, a 2x2 conclusion table with grid borders,
header shaded D9D9D9, data row DAEEF3, cells centered/top, the share of
Requirement.txt's criteria met and the recommendation), and recommend.txt
naming the best candidate.

A scripted agent does it with the word and filesystem tools only: every text
it writes comes from what the tools returned. Reports are written for three
candidates (the recommended one and two others) to keep the run short. The
check re-expresses Format.md on the dumped workspace, with python-docx, and
must fail on a report that is wrong."""
import io
import json
import os
import re
import tarfile

import httpx
import pytest

from gwharness import ScriptedAgent, Session

docx = pytest.importorskip("docx")

TASK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "interview-report")
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def task_file(*parts):
    p = os.path.join(TASK, *parts)
    if not os.path.exists(p):
        pytest.fail("test data missing: %s" % p)
    return p


def workspace_tar(root):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name in sorted(os.listdir(root)):
            tf.add(os.path.join(root, name), arcname=name)
    return buf.getvalue()




# ------------------------------------------------------------ the agent

TOP = ("Stanford", "MIT", "CMU", "Peking", "Tsinghua")
FAANG = ("Google", "Meta", "Facebook", "Amazon", "Apple", "Netflix")


def criteria(resume, evaluation):
    """Requirement.txt's ten criteria, judged from the texts."""
    line = {k: v for k, v in re.findall(r"^([A-Za-z ]+): (.*)$", resume, re.M)}
    edu, work = line.get("Education", ""), line.get("Work Experience", "")
    years = re.search(r"(\d+)\+? years", work)
    salary = [int(x) for x in re.findall(r"\$(\d+)K", line.get("Expected Salary", ""))]
    low = evaluation.lower()
    return [
        bool(years) and int(years.group(1)) >= 4,
        "Master" in edu or "PhD" in edu or "Ph.D" in edu,
        any(re.search(r"\b%s\b" % u, edu) for u in TOP),
        any(f in work for f in FAANG),
        "Led " in resume or "leadership" in low,
        bool(re.search(r"\d+M\+|\d+%", resume)),
        len([s for s in line.get("Technical Skills", "").split(",") if s.strip()]) >= 3,
        "exceptional" in low or "outstanding" in low,
        len(re.findall(r"excellen|exceptional|outstanding", low)) >= 2,
        bool(salary) and max(salary) < 150,
    ]


def read_candidates(agent):
    """{name: (resume text, evaluation text)} from the two documents."""
    out = {}
    res = json.loads(agent("word", "get_document_outline", {"filename": "Candidates_resumes.docx"}))
    for p in res["paragraphs"]:
        if re.fullmatch(r"Candidate \d+:", p["text"]):
            block = json.loads(agent("word", "get_paragraph_text_from_document",
                                     {"filename": "Candidates_resumes.docx",
                                      "paragraph_index": p["index"] + 1}))["text"]
            name = re.search(r"^Name: (.*)$", block, re.M).group(1).strip()
            out[name] = [block, None]
    ev = json.loads(agent("word", "get_document_outline", {"filename": "Interviewer_evaluation.docx"}))
    for p in ev["paragraphs"]:
        m = re.fullmatch(r"Candidate \d+ Name: (.*)", p["text"])
        if m:
            name = m.group(1).replace("_", " ").strip()
            text = json.loads(agent("word", "get_paragraph_text_from_document",
                                    {"filename": "Interviewer_evaluation.docx",
                                     "paragraph_index": p["index"] + 2}))["text"]
            out[name][1] = text
    return out


def write_report(agent, name, resume, evaluation, assessment, recommendation):
    f = "Interview_Assessment_Report_%s.docx" % name.replace(" ", "_")
    agent("word", "create_document", {"filename": f})
    agent("word", "add_heading", {"filename": f, "text": "Candidate Interview Assessment Report",
                                  "level": 1})
    heading = "Candidate Interview Assessment Report"
    agent("word", "format_text", {"filename": f, "paragraph_index": 0, "start_pos": 0,
                                  "end_pos": len(heading), "bold": True, "font_size": 14,
                                  "font_name": "Calibri"})
    body = ["Candidate Name: %s" % name, "Candidate Information:", resume,
            "Interviewer Evaluation:", evaluation, "Evaluation Conclusion:"]
    for i, text in enumerate(body, start=1):
        agent("word", "add_paragraph", {"filename": f, "text": text})
        agent("word", "format_text", {"filename": f, "paragraph_index": i, "start_pos": 0,
                                      "end_pos": len(text), "font_size": 11, "font_name": "Cambria",
                                      "bold": text.endswith(":") and not text.startswith("Candidate Name")})
    agent("word", "add_table", {"filename": f, "rows": 2, "cols": 2,
                                "data": [["Overall Assessment", "Recommendation"],
                                         [assessment, recommendation]]})
    agent("word", "format_table", {"filename": f, "table_index": 0, "border_style": "single"})
    for row, color in ((0, "D9D9D9"), (1, "DAEEF3")):
        for col in (0, 1):
            agent("word", "set_table_cell_shading", {"filename": f, "table_index": 0, "row_index": row,
                                                     "col_index": col, "fill_color": color})
    agent("word", "set_table_alignment_all", {"filename": f, "table_index": 0,
                                              "horizontal": "center", "vertical": "top"})
    return f


def do_task(agent, report_for):
    listing = agent("word", "list_available_documents", {"directory": "."})
    assert "Candidates_resumes.docx" in listing and "Interviewer_evaluation.docx" in listing
    agent("filesystem", "read_file", {"path": "/data/Requirement.txt"})
    cands = read_candidates(agent)
    scores = {n: criteria(r, e) for n, (r, e) in cands.items()}
    best = max(scores, key=lambda n: (all(scores[n]), sum(scores[n])))
    for name in report_for:
        met = sum(scores[name])
        write_report(agent, name, cands[name][0], cands[name][1], "%d%%" % (met * 10),
                     "Recommended" if name == best else "Not recommended")
    agent("filesystem", "write_file", {"path": "/data/recommend.txt", "content": best})
    return cands, scores, best


# ------------------------------------------------------------ the check

def check_report(path, name, resume, evaluation, recommended):
    """Format.md, re-expressed; returns the problems found."""
    bad = []
    d = docx.Document(path)
    ps = [p for p in d.paragraphs if p.text.strip()]
    head = ps[0]
    if head.text != "Candidate Interview Assessment Report" or not head.style.name.startswith("Heading 1"):
        bad.append("heading")
    hr = [r for r in head.runs if r.text]
    if not hr or not all(r.bold and r.font.name == "Calibri" and r.font.size and r.font.size.pt == 14
                         for r in hr):
        bad.append("heading format")
    if ps[1].text != "Candidate Name: %s" % name:
        bad.append("candidate name")
    texts = [p.text for p in ps]
    for title, content in (("Candidate Information:", resume), ("Interviewer Evaluation:", evaluation),
                           ("Evaluation Conclusion:", None)):
        if title not in texts:
            bad.append("missing " + title)
            continue
        p = ps[texts.index(title)]
        if not all(r.bold for r in p.runs if r.text):
            bad.append("not bold: " + title)
        if content is not None and texts[texts.index(title) + 1] != content:
            bad.append("content under " + title)
    for p in ps[1:]:
        for r in p.runs:
            if r.text and not (r.font.name == "Cambria" and r.font.size and r.font.size.pt == 11):
                bad.append("body font: %r" % p.text[:30])
                break
    if len(d.tables) != 1:
        return bad + ["table count"]
    t = d.tables[0]
    if (len(t.rows), len(t.columns)) != (2, 2):
        return bad + ["table size"]
    cells = [[c for c in r.cells] for r in t.rows]
    if [c.text for c in cells[0]] != ["Overall Assessment", "Recommendation"]:
        bad.append("header row")
    if not re.fullmatch(r"\d+%", cells[1][0].text):
        bad.append("assessment")
    if cells[1][1].text != ("Recommended" if recommended else "Not recommended"):
        bad.append("recommendation")
    for row, color in ((0, "D9D9D9"), (1, "DAEEF3")):
        for c in cells[row]:
            fills = [s.get(W + "fill") for s in c._tc.tcPr.iter(W + "shd")]
            if fills[-1:] != [color]:
                bad.append("shading %d" % row)
    for row in cells:
        for c in row:
            borders = c._tc.tcPr.find(W + "tcBorders")
            grid = t.style is not None and t.style.name == "Table Grid"
            if not grid and (borders is None or len(borders) < 4):
                bad.append("borders")
            va = c._tc.tcPr.find(W + "vAlign")
            if va is None or va.get(W + "val") != "top" or any(p.alignment != 1 for p in c.paragraphs):
                bad.append("alignment")
    return bad


def test_interview_report(api, tmp_path):
    initial = task_file("initial_workspace")
    gt = open(task_file("groundtruth_workspace", "strict_hiring_groundtruth.txt")).read()
    qualified = [l[1:].strip().replace("_", " ") for l in gt.splitlines() if l.startswith("\u2705")]
    r = api.post("/local-sandbox", json={"server_names": ["filesystem", "word"], "benchmark": "Toolathlon"})
    assert r.status_code == 201, r.text
    sb = r.json()
    sid = sb["local_sandbox_id"]
    up = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
    assert httpx.put(up, content=workspace_tar(initial),
                     headers={"Content-Type": "application/gzip"}).status_code in (200, 201)
    assert api.post(f"/local-sandbox/{sid}/initialize").status_code == 200

    agent = ScriptedAgent(sb, timeout=180)
    try:
        tools = [t["name"] for t in agent.sessions.setdefault(
            "word", Session(agent.urls["word"], timeout=180)).result("tools/list")["result"]["tools"]]
        assert len(tools) == 47  # the Toolathlon image's 1.1.9
        report_for = ["John Smith", "Anna Taylor", "Zhang San"]
        cands, scores, best = do_task(agent, report_for)
    finally:
        agent.close()
    assert len(cands) == 13 and all(e for _, e in cands.values())
    assert [n for n in scores if all(scores[n])] == qualified == [best]

    url = api.get(f"/local-sandbox/{sid}/dump").json()["download_url"]
    with tarfile.open(fileobj=io.BytesIO(httpx.get(url, timeout=120).content), mode="r:gz") as tf:
        tf.extractall(tmp_path / "out")
    out = tmp_path / "out"
    assert (out / "recommend.txt").read_text().strip() == "John Smith"
    for name in report_for:
        path = str(out / ("Interview_Assessment_Report_%s.docx" % name.replace(" ", "_")))
        assert check_report(path, name, cands[name][0], cands[name][1], name == best) == [], name

    # the check can fail: a wrong shade and a lost bold title are caught
    path = str(out / "Interview_Assessment_Report_Anna_Taylor.docx")
    d = docx.Document(path)
    d.tables[0].rows[1].cells[0]._tc.tcPr.find(W + "shd").set(W + "fill", "FFFFFF")
    for r in d.paragraphs[2].runs:
        r.bold = False
    d.save(str(tmp_path / "broken.docx"))
    assert check_report(str(tmp_path / "broken.docx"), "Anna Taylor", cands["Anna Taylor"][0],
                        cands["Anna Taylor"][1], False) == ["not bold: Candidate Information:", "shading 1"]
