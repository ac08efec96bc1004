"""bench/ must not rot: a smoke run of the load-generator ceiling, the tool
call benchmark (mcpbox against supergateway + the npm filesystem server), the
archive benchmark, the sandbox life cycle, the office documents benchmark (excel and pdf-tools against
openpyxl and pypdf) and the per-tool latency benchmark (filesystem, memory and
code-runner against their npm references), written into a scratch doc and
JSON file, must give well-formed rows with no errors (every answer checked by
the benchmarks); and the many-nodes benchmark (bench/scale.py) with tiny counts."""
import json
import os
import re
import subprocess

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ROW = re.compile(r"^\| (P\d\w*\.[\w.]+) \| (.+?) \| (.+?) \| (.+?) \| (.+?) \| (\d+) \| `(bench/run [^`]+)` \|$")


def test_bench_smoke(tmp_path):
    subprocess.run(["make", "-s", "--no-print-directory", "build/bench/loadgen", "build/mcpbox",
                    "build/bench/observe_cost"],
                   cwd=ROOT, check=True, timeout=300)
    doc = tmp_path / "PERFORMANCE.md"
    doc.write_text("# Performance\n\nprose kept\n")
    out = tmp_path / "results.json"
    r = subprocess.run([os.path.join(ROOT, "bench", "run"), "--smoke", "--no-setup",
                        "--only", "P0,P2,P2O,P4,P7,P7W,P8,P9", "--doc", str(doc), "--json", str(out),
                        "--workdir", str(tmp_path / "work")],
                       capture_output=True, text=True, timeout=420)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

    text = doc.read_text()
    assert text.startswith("# Performance\n\nprose kept\n")
    assert "<!-- bench:results:start" in text and "<!-- bench:results:end -->" in text
    assert re.search(r"Run of \d{4}-\d\d-\d\d \d\d:\d\d UTC on .+: \d+ cores", text)
    rows = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(1)] = m.groups()
    want = {"P0.healthz.c1", "P0.healthz.c8", "P2.read.c1", "P2.read.c8", "P2.list.c1",
            "P2.list.c8", "P2.read.s1", "P2.trivial.c1", "P2.trivial.c8",
            "P4.put_init", "P4.dump_get", "P4.upload_rss",
            "P7.xlsx_write", "P7.xlsx_read", "P7.xlsx_rss", "P7.pdf_read", "P7.pdf_rss",
            "P7W.docx_read", "P7W.docx_write", "P7W.docx_rss",
            "P9.create", "P9.create_fs", "P9.warm", "P9.release", "P9.idle",
            "P2O.trivial.c1", "P2O.trivial.c8", "P2O.read.c1", "P2O.read.c8", "P2O.cpu"}
    p8 = {"P8.fs." + t for t in ("read_text_file", "read_multiple_files", "write_file",
                                 "edit_file", "list_directory_with_sizes", "directory_tree",
                                 "search_files", "get_file_info", "list_allowed_directories")}
    p8 |= {"P8.mem." + t for t in ("read_graph", "search_nodes", "open_nodes",
                                   "add_observations", "create_entities")}
    p8 |= {"P8.cr.javascript", "P8.cr.python"}
    want |= p8
    assert want <= set(rows), (sorted(rows), text)
    for rid in want:
        assert rows[rid][5] == "0", rows[rid]
        assert "--smoke" in rows[rid][6]
    # latency rows carry p50 / p99 / max and a throughput; side-by-side rows a ratio
    for rid in ("P2.read.c1", "P2.list.c8", *sorted(p8)):
        assert re.match(r"[\d.]+ / [\d.]+ / [\d.]+ ms, [\d,.]+/s", rows[rid][2]), rows[rid]
        assert re.match(r"supergateway .*: [\d.]+ / [\d.]+ / [\d.]+ ms, [\d,.]+/s", rows[rid][3])
        assert re.match(r"[\d.]+×", rows[rid][4]), rows[rid]
    assert re.match(r"[\d.]+×", rows["P4.put_init"][4])
    assert re.match(r"VmHWM [\d.]+ MB", rows["P4.upload_rss"][2])
    # office rows: latencies against openpyxl / pypdf in a Python process, and peak RSS
    for rid in ("P7.xlsx_write", "P7.xlsx_read", "P7.pdf_read"):
        assert re.match(r"[\d.]+ / [\d.]+ / [\d.]+ ms$", rows[rid][2]), rows[rid]
        assert re.match(r"(openpyxl|pypdf) [\d.]+ in one Python process .*: [\d.]+ / [\d.]+ / "
                        r"[\d.]+ ms$", rows[rid][3]), rows[rid]
        assert re.match(r"[\d.]+×", rows[rid][4]), rows[rid]
    for rid in ("P7.xlsx_rss", "P7.pdf_rss"):
        assert re.match(r"VmHWM [\d.]+ MB \([\d.]+ MB after start\)$", rows[rid][2]), rows[rid]
        assert re.match(r".*: peak RSS [\d.]+ MB$", rows[rid][3]), rows[rid]
    for rid in ("P9.create", "P9.create_fs", "P9.warm", "P9.release"):
        assert re.match(r"[\d.]+ / [\d.]+ / [\d.]+ ms", rows[rid][2]), rows[rid]
    assert re.match(r"\d+ idle sandboxes", rows["P9.idle"][2]), rows["P9.idle"]

    data = json.loads(out.read_text())
    assert data["meta"]["machine"]["cores"] >= 1 and data["meta"]["mode"] == "--smoke"
    by_id = {r["id"]: r for r in data["rows"]}
    # the office benchmark checked every cell it read back and timed every call
    xl = by_id["P7.xlsx_read"]["data"]["mcpbox"]
    assert xl["errors"] == 0 and xl["read"]["n"] == 1 and xl["write"]["n"] == 1
    # the generator saw the answers it was told to check, and timed some calls
    for rid in ("P2.read.c1", "P2.list.c1"):
        for side in ("mcpbox", "supergateway"):
            assert by_id[rid]["data"][side]["requests"] > 0
            assert by_id[rid]["data"][side]["errors"] == 0
    # the trivial tool runs behind both fronts over the same stdio server, and
    # each side's CPU was counted
    for side in ("mcpbox", "supergateway-native"):
        assert by_id["P2.trivial.c1"]["data"][side]["requests"] > 0
        assert by_id["P2.trivial.c1"]["data"][side]["server_cpu_us"] > 0
    assert "server-side CPU per call" in rows["P2.trivial.c8"][1] or \
        "server-side CPU per call" in by_id["P2.trivial.c8"].get("note", "")
    # P8: every timed call of every run was counted, on both sides
    for rid in p8:
        calls = by_id[rid]["data"]["calls"]
        for side in ("mcpbox", "supergateway"):
            runs = by_id[rid]["data"][side]
            assert runs and all(r["requests"] == calls and r["errors"] == 0 for r in runs), runs

    # --merge: a partial re-run keeps the other rows, and says which run is which
    r = subprocess.run([os.path.join(ROOT, "bench", "run"), "--smoke", "--no-setup",
                        "--only", "P0", "--merge", "--doc", str(doc), "--json", str(out),
                        "--workdir", str(tmp_path / "work2")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    text2 = doc.read_text()
    ids2 = {m.group(1) for m in map(ROW.match, text2.splitlines()) if m}
    assert set(rows) <= ids2, sorted(set(rows) - ids2)
    assert re.search(r"Rows P0: commit \S+ at .*; the other rows: commit ", text2), text2[:2000]
    merged = json.loads(out.read_text())
    assert [r["id"] for r in merged["rows"]] == [r["id"] for r in data["rows"]]
    assert merged["meta"]["rerun"] == ["P0"]


def test_scale_bench_smoke():
    """bench/scale.py (docs/SCALE.md Figures, docs/PERFORMANCE.md Many nodes)
    with tiny counts: one node, then three behind nginx; every figure there."""
    import shutil
    import pytest
    if shutil.which("nginx") is None and not os.path.exists("/usr/sbin/nginx"):
        pytest.skip("nginx is not installed (scripts/install-deps --test)")
    r = subprocess.run([os.path.join(ROOT, "bench", "scale.py"), "--acquires", "2", "--calls", "4",
                        "--burst", "6", "--concurrency", "3"],
                       capture_output=True, text=True, timeout=400)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    one, three = res["1 node"], res["3 nodes"]
    assert one["acquire"]["n"] == 2 and three["acquire"]["n"] == 2
    assert one["call direct"]["n"] == 4
    for k in ("call router", "call owner direct", "call other node (forwards)"):
        assert three[k]["n"] == 4 and three[k]["p50_ms"] > 0, k
    assert one["burst"]["per_node"] == [6]
    assert sum(three["burst"]["per_node"]) == 6 and len(three["burst"]["per_node"]) == 3


def test_partial_run_keeps_the_other_rows(tmp_path):
    """`bench/run --only P0` on a doc that holds a results table rewrites P0's
    rows and keeps every other benchmark's row and the prose around the table
    (the Reproduce column's commands are partial runs)."""
    subprocess.run(["make", "-s", "--no-print-directory", "build/bench/loadgen", "build/mcpbox"],
                   cwd=ROOT, check=True, timeout=300)
    doc = tmp_path / "PERFORMANCE.md"
    kept = ("| P9.create | sandbox create | 4.53 / 13.1 / 13.1 ms | — | — | 0 | "
            "`bench/run --only P9` |")
    stale = "| P0.healthz.c1 | stale row | 9 / 9 / 9 ms | — | — | 0 | `bench/run --only P0` |"
    p15 = "| P15.rest | Canvas REST | 0.4 / 8 / 11 ms | — | — | 0 | `bench/run --only P15` |"
    doc.write_text("# Performance\n\nbefore\n\n<!-- bench:results:start (written by bench/run; "
                   "edit outside these markers) -->\n\nRun of an earlier day.\n\n"
                   "Rows P0: re-run of an earlier hour.\nRows P9: re-run of an earlier hour.\n"
                   "\n| Row | Measure | mcpbox | Alternative | Ratio | Errors | Reproduce |\n"
                   "|---|---|---|---|---|---|---|\n" + stale + "\n" + kept + "\n" + p15 + "\n\n"
                   "Rows P15 (Canvas): measured apart.\nRows P0 and P15: both.\n\n"
                   "<!-- bench:results:end -->\n\nafter\n")
    r = subprocess.run([os.path.join(ROOT, "bench", "run"), "--smoke", "--no-setup",
                        "--only", "P0", "--doc", str(doc), "--json", str(tmp_path / "r.json"),
                        "--workdir", str(tmp_path / "work")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    text = doc.read_text()
    assert text.startswith("# Performance\n\nbefore\n") and text.endswith("after\n")
    assert kept in text and stale not in text and "Run of an earlier day." in text
    p0 = [ln for ln in text.splitlines() if ln.startswith("| P0.")]
    assert p0 and all(ROW.match(ln) and "--smoke" in ln for ln in p0), p0
    assert re.search(r"^Rows P0: re-run \d{4}-\d\d-\d\d", text, re.M)
    assert text.index(p0[-1]) < text.index(kept) < text.index(p15)  # benchmark order
    # the notes of other benchmarks stay where they were, P0's is replaced
    assert "Rows P0: re-run of an earlier hour." not in text
    assert "Rows P9: re-run of an earlier hour." in text
    assert "Rows P15 (Canvas): measured apart." in text and "Rows P0 and P15: both." in text
    assert text.index("Rows P9: re-run of") < text.index("| Row |") < text.index("Rows P15 (")
    assert "\n\n\n" not in text
    # applying the same results again changes nothing
    r = subprocess.run([os.path.join(ROOT, "bench", "run"), "--doc-from", str(tmp_path / "r.json"),
                        "--doc", str(doc)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert doc.read_text() == text
