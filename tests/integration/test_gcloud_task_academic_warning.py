"""Toolathlon's academic-warning task end to end against one sandbox.

Task (tasks/finalpool/academic-warning/docs/task.md): read
/data/latest_quiz_scores.csv, compare it with the averages of the seven
score tables scores_2501..2507 in BigQuery dataset academic_warning, write
the students whose score dropped more than 25% to /data/bad_student.csv,
and write one CRITICAL log entry (name and student id) for each student
whose score dropped more than 45% to the log of the existing log bucket
whose name starts with exam_log. Entries older than the task do not count.

- preprocess (preprocess/main.py: ggcloud_clean_log.manage_log_bucket,
  ggcloud_clean_dataset.manage_bigquery_dataset, ggcloud_upload
  .upload_csvs_to_bigquery) re-expressed as the REST calls google-cloud-
  logging's ConfigServiceV2Client (transport="rest") and google-cloud-
  bigquery make: list the log buckets, create exam_log-<12 hex>; get /
  delete / create the dataset; one multipart load job per CSV (CSV,
  skipLeadingRows 1, autodetect, WRITE_TRUNCATE), job.result(), get_table.
- the sandbox's clock runs from 2025-09-01T08:00:00Z (initialize's clock
  extension); an old CRITICAL entry for a student who must not be flagged
  lies before the launch time, so only the clock keeps it out.
- the agent is scripted and uses only the google_cloud MCP tools (load
  the CSV from /data, a wildcard-table query, export, download to /data,
  logging_write_log).
- evaluation (evaluation/main.py) re-expressed: bad_student.csv's ids must
  equal expected_alerts.csv's students above 25% (100% accuracy); the
  CRITICAL entries between launch and evaluation time (Logging v2
  entries:list with the evaluation's filter, as google-cloud-logging's
  list_entries sends it) must name every student above 45% and no other.
- a wrong agent (threshold 15% for the list, or logs above 40%) is caught.

Data: tests/data/gcloud/academic-warning/ (PROVENANCE.md)."""
import ast
import csv
import io
import os
import re
import tarfile
import uuid

import httpx
import pytest

from conftest import Daemon
from test_gcloud_rest import free_port, multipart
from test_server_google_cloud import call, session

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "gcloud", "academic-warning")
TABLES = [f"scores_25{m:02d}" for m in range(1, 8)]


@pytest.fixture
def env(tmp_root):
    port = free_port()
    d = Daemon(os.path.join(tmp_root, "var"), env={"MCPBOX_GCLOUD_LISTEN": f"127.0.0.1:{port}"}).start()
    with d.client() as api:
        yield d, api, f"http://127.0.0.1:{port}"
    d.stop()


def read_csv(name):
    with open(os.path.join(DATA, name), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def clock_now(base, project):
    return httpx.get(f"{base}/mcpbox/v1/projects/{project}/clock").json()["now"]


def preprocess(base, project):
    """The task's preprocess through the facade; returns the log bucket's name."""
    h = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {project}"}, timeout=60)
    # manage_log_bucket: an ACTIVE bucket with the prefix, else a new one
    lb = f"/v2/projects/{project}/locations/global/buckets"
    found = [b["name"].split("/")[-1] for b in h.get(lb).json().get("buckets", [])
             if b["name"].split("/")[-1].startswith("exam_log") and b["lifecycleState"] == "ACTIVE"]
    bucket = found[0] if found else f"exam_log-{uuid.uuid4().hex[:12]}"
    if not found:
        r = h.post(lb, params={"bucketId": bucket}, json={"retentionDays": 30})
        assert r.status_code == 200 and r.json()["name"] == f"projects/{project}/locations/global/buckets/{bucket}"
    # manage_bigquery_dataset(delete_if_exists=True)
    bq = f"/bigquery/v2/projects/{project}"
    if h.get(f"{bq}/datasets/academic_warning").status_code == 200:
        assert h.delete(f"{bq}/datasets/academic_warning", params={"deleteContents": "true"}).status_code == 204
    r = h.post(f"{bq}/datasets", json={"datasetReference": {"projectId": project, "datasetId": "academic_warning"},
                                        "location": "US", "labels": {},
                                        "description": "Academic warning system dataset for student performance analysis"})
    assert r.status_code == 200, r.text
    # upload_csvs_to_bigquery: load_table_from_file per CSV, then job.result() and get_table
    for t in TABLES:
        cfg = {"configuration": {"load": {"sourceFormat": "CSV", "skipLeadingRows": 1, "autodetect": True,
                                          "writeDisposition": "WRITE_TRUNCATE",
                                          "destinationTable": {"projectId": project, "datasetId": "academic_warning",
                                                               "tableId": t}}},
               "jobReference": {"projectId": project, "jobId": str(uuid.uuid4())}}
        with open(os.path.join(DATA, f"{t}.csv"), "rb") as f:
            body, hdr = multipart(cfg, f.read())
        r = h.post(f"/upload{bq}/jobs", params={"uploadType": "multipart"}, content=body, headers=hdr)
        assert r.status_code == 200, r.text
        job = r.json()["jobReference"]["jobId"]
        assert h.get(f"{bq}/jobs/{job}", params={"location": "US"}).json()["status"]["state"] == "DONE"
        assert h.get(f"{bq}/datasets/academic_warning/tables/{t}").json()["numRows"] == "150"
    return bucket


def seed_workspace(api, sid):
    """initial_workspace as the Toolathlon client uploads it: latest_quiz_scores.csv in /data."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(os.path.join(DATA, "latest_quiz_scores.csv"), arcname="latest_quiz_scores.csv")
    r = api.post(f"/local-sandbox/{sid}/upload-url")
    assert r.status_code == 200, r.text
    assert httpx.put(r.json()["upload_url"], content=buf.getvalue(),
                     headers={"Content-Type": "application/gzip"}).status_code == 200
    assert api.post(f"/local-sandbox/{sid}/initialize").status_code == 200


def rows(text):
    return [ast.literal_eval(m) for m in re.findall(r"^Row \d+: (\{.*\})$", text, re.M)]


def agent(s, list_above=0.25, log_above=0.45):
    """A scripted agent that uses only the google_cloud tools."""
    logs = call(s, "logging_list_logs", {})
    bucket = re.search(r"- (exam_log-[0-9a-f]{12})", logs).group(1)
    out = call(s, "bigquery_load_csv_data", {"dataset_id": "academic_warning", "table_id": "latest_quiz",
                                              "csv_file_path": "/data/latest_quiz_scores.csv"})
    assert out.startswith("Successfully loaded"), out
    out = call(s, "bigquery_run_query", {"query": f"""
        CREATE OR REPLACE TABLE academic_warning.bad_student AS
        WITH hist AS (
          SELECT student_id, AVG(score) AS hist_avg
          FROM `academic_warning.scores_*`
          WHERE _TABLE_SUFFIX BETWEEN '2501' AND '2507'
          GROUP BY student_id)
        SELECT l.student_id, l.name, l.score, h.hist_avg,
               SAFE_DIVIDE(h.hist_avg - l.score, h.hist_avg) AS drop_ratio
        FROM academic_warning.latest_quiz AS l JOIN hist AS h ON l.student_id = h.student_id
        WHERE SAFE_DIVIDE(h.hist_avg - l.score, h.hist_avg) > {list_above}"""})
    assert out.startswith("Query executed successfully."), out
    assert call(s, "storage_create_bucket", {"bucket_name": "aw-export"}).startswith("Successfully")
    assert call(s, "bigquery_export_table", {"dataset_id": "academic_warning", "table_id": "bad_student",
                                             "destination_bucket": "aw-export",
                                             "destination_path": "bad_student.csv"}).startswith("Successfully")
    assert call(s, "storage_download_file", {"bucket_name": "aw-export", "source_blob_name": "bad_student.csv",
                                             "destination_file_path": "/data/bad_student.csv"}).startswith("Successfully")
    crit = rows(call(s, "bigquery_run_query", {"query": f"""
        SELECT student_id, name, ROUND(drop_ratio * 100, 1) AS pct FROM academic_warning.bad_student
        WHERE drop_ratio > {log_above} ORDER BY drop_ratio DESC""", "max_results": 5}))
    assert crit
    for r in crit:
        out = call(s, "logging_write_log", {
            "log_name": bucket, "severity": "CRITICAL",
            "message": f"CRITICAL ACADEMIC WARNING - Student ID: {r['student_id']}, Name: {r['name']}, "
                       f"Score Drop: {r['pct']}%"})
        assert out == f"Successfully wrote log entry to '{bucket}' with severity 'CRITICAL'", out


def evaluate(daemon, base, sid, project, bucket, launch, now):
    """evaluation/main.py's checks; (passed, reason)."""
    path = os.path.join(daemon.data_dir, "workspaces", sid, "data", "bad_student.csv")
    if not os.path.isfile(path):
        return False, "Missing agent output file"
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if "student_id" not in (reader.fieldnames or []):
            return False, "no student_id column"
        agent_ids = {r["student_id"].strip() for r in reader if r["student_id"].strip()}
    gt = read_csv("expected_alerts.csv")
    gt25 = {r["student_id"] for r in gt if float(r["drop_ratio"]) > 0.25}
    gt45 = [(r["name"], r["student_id"]) for r in gt if float(r["drop_ratio"]) > 0.45]
    everyone = [(r["name"], r["student_id"]) for r in read_csv("scores_2501.csv")]
    unneeded = [x for x in everyone if x not in gt45]
    accuracy = len(agent_ids & gt25) / len(agent_ids) if agent_ids else 0
    if accuracy < 1.0:
        return False, f"bad_student.csv accuracy {accuracy:.2%} is below required 100%"
    flt = (f'logName="projects/{project}/logs/{bucket}" AND severity="CRITICAL"'
           f' AND timestamp >= "{launch}" AND timestamp <= "{now}"')
    r = httpx.post(f"{base}/v2/entries:list", json={"resourceNames": [f"projects/{project}"], "filter": flt,
                                                     "orderBy": "timestamp desc", "pageSize": 500})
    assert r.status_code == 200, r.text
    entries = r.json().get("entries", [])
    if not entries:
        return False, "No CRITICAL log entries found"
    used = set()
    for name, sid_ in gt45:
        hit = next((i for i, e in enumerate(entries) if i not in used and sid_ in e.get("textPayload", "")
                    and name in e.get("textPayload", "")), None)
        if hit is None:
            return False, f"Missing CRITICAL log for {name} {sid_}"
        used.add(hit)
    for e in entries:
        for name, sid_ in unneeded:
            if sid_ in e.get("textPayload", "") or name in e.get("textPayload", ""):
                return False, f"Found CRITICAL log for an unneeded student {name} {sid_}"
    return True, None


@pytest.mark.parametrize("wrong", [None, "list", "logs"], ids=["correct", "wrong-list", "wrong-logs"])
def test_academic_warning(env, wrong):
    daemon, api, base = env
    r = api.post("/sandbox/google_cloud", json={"benchmark": "Toolathlon"})
    assert r.status_code == 201, r.text
    sid = r.json()["sandbox_id"]
    project = api.get(f"/sandbox/google_cloud/{sid}").json()["auth_data"]["project_id"]
    seed_workspace(api, sid)
    # the sandbox's clock runs from 2025-09-01 08:00
    r = api.post(f"/sandbox/google_cloud/{sid}/initialize", json={"clock": {"now": "2025-09-01T08:00:00Z"}})
    assert r.status_code == 200, r.text
    bucket = preprocess(base, project)
    # an entry from before the task (about S009, who must not be flagged), as entries:write sends it
    r = httpx.post(f"{base}/v2/entries:write", json={
        "logName": f"projects/{project}/logs/{bucket}", "resource": {"type": "global"},
        "entries": [{"severity": "CRITICAL", "timestamp": "2025-08-31T17:00:00Z",
                     "textPayload": "CRITICAL ACADEMIC WARNING - Student ID: S009, Name: Edward Jones"}]})
    assert r.status_code == 200 and r.json() == {}, r.text
    launch = clock_now(base, project)
    assert launch.startswith("2025-09-01T08:")
    s = session(api, sid)
    if wrong == "list":
        agent(s, list_above=0.15)
    elif wrong == "logs":
        agent(s, log_above=0.40)
    else:
        agent(s)
    s.close()
    ok, why = evaluate(daemon, base, sid, project, bucket, launch, clock_now(base, project))
    if wrong == "list":
        assert (ok, why[:25]) == (False, "bad_student.csv accuracy "), why
    elif wrong == "logs":
        assert not ok and why.startswith("Found CRITICAL log for an unneeded student"), why
    else:
        assert ok, why
        # the old entry is in the log: only the launch time keeps it out
        r = httpx.post(f"{base}/v2/entries:list", json={
            "resourceNames": [f"projects/{project}"],
            "filter": f'logName="projects/{project}/logs/{bucket}" AND severity="CRITICAL"'})
        assert len(r.json()["entries"]) == 4 and "S009" in r.json()["entries"][0]["textPayload"]
        assert r.json()["entries"][0]["timestamp"] == "2025-08-31T17:00:00.000Z"
        assert r.json()["entries"][1]["receiveTimestamp"].startswith("2025-09-01T08:")
    api.delete(f"/sandbox/google_cloud/{sid}")
