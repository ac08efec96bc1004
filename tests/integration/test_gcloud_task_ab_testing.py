"""Toolathlon's ab-testing task end to end against one local sandbox with
the filesystem and google_cloud servers (as Toolathlon acquires it).

Task (tasks/finalpool/ab-testing/docs/task.md): from the clickstream tables
of dataset ab_testing fill /data/record.csv with each scenario's A and B
conversion rates (store views / clicks) and the overall rate (the mean of
the scenarios'); if B wins, create a Cloud Storage bucket prefixed
promo-assets-for-b and write no log; if A wins, log
{'status': 'AB_Test_Concluded', ...} to the log bucket prefixed
abtesting_logging.

- preprocess (preprocess/main.py) re-expressed as its REST calls: the
  project comes from Cloud Resource Manager v3 projects().search() with
  Klavis's OAuth credentials (auth_data's access token), and it is the
  project NUMBER (utils._extract_project_id takes name.split("/")[-1]),
  which every later call uses, as on Google; then clean_log (log bucket
  abtesting_logging-<hex>), clean_dataset, clean_bucket (delete buckets
  prefixed promo-assets-for-b with their objects) and one multipart CSV
  load job per files/ab_*.csv (autodetect; the files start with a UTF-8
  byte order mark, which BigQuery drops).
- a scripted agent: google_cloud tools for the numbers (a wildcard query,
  export, download), filesystem tools (Toolathlon pins server-filesystem 2025.7.1: read_file,
  write_file) to read them and write record.csv,
  then the bucket (or, when wrong, the A log).
- evaluation (evaluation/main.py) re-expressed: record.csv within 0.1
  points of expected_ratio.csv; a bucket prefixed promo-assets-for-b listed
  with the service-account key (google-auth's token); no entry in the log
  bucket's log between launch and evaluation (its filter, including
  `NOT jsonPayload.logging\\.googleapis\\.com/diagnostic`).
- wrong agents are caught: rates swapped between A and B; A declared the
  winner (log written, no bucket); the bucket made but the log written too.

Data: tests/data/gcloud/ab-testing/ (PROVENANCE.md)."""
import csv
import glob
import io
import os
import re
import uuid

import httpx
import pytest

from gwharness import Session, text_of
from test_gcloud_rest import multipart
from test_gcloud_task_academic_warning import clock_now, env  # noqa: F401 (fixture)

google_auth = pytest.importorskip("google.oauth2.service_account")
from google.auth.transport.requests import Request  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "gcloud", "ab-testing")
SCENARIOS = sorted(os.path.basename(p)[3:-4] for p in glob.glob(os.path.join(DATA, "ab_*.csv")))
OVERALL = "overall (total_store_views/total_clicks)"


def call(url, tool, args):
    s = Session(url)
    try:
        msg = s.call(tool, args)
        assert "result" in msg, msg
        return text_of(msg)
    finally:
        s.close()


def preprocess(base, auth):
    """preprocess/main.py through the facade; returns (project number, log bucket)."""
    h = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {auth['access_token']}"}, timeout=60)
    projects = h.get("/v3/projects:search").json()["projects"]
    assert len(projects) == 1
    number = projects[0]["name"].split("/")[-1]
    # clean_log: manage_log_bucket(prefix abtesting_logging)
    lb = f"/v2/projects/{number}/locations/global/buckets"
    found = [b["name"].split("/")[-1] for b in h.get(lb).json().get("buckets", [])
             if b["name"].split("/")[-1].startswith("abtesting_logging") and b["lifecycleState"] == "ACTIVE"]
    log_bucket = found[0] if found else f"abtesting_logging-{uuid.uuid4().hex[:12]}"
    if not found:
        assert h.post(lb, params={"bucketId": log_bucket}, json={"retentionDays": 30}).status_code == 200
    # clean_dataset
    bq = f"/bigquery/v2/projects/{number}"
    if h.get(f"{bq}/datasets/ab_testing").status_code == 200:
        assert h.delete(f"{bq}/datasets/ab_testing", params={"deleteContents": "true"}).status_code == 204
    assert h.post(f"{bq}/datasets", json={"datasetReference": {"projectId": number, "datasetId": "ab_testing"},
                                          "location": "US"}).status_code == 200
    # clean_bucket: delete_storage_bucket_if_exists(prefix), Bucket.delete(force=True)
    for b in h.get("/storage/v1/b", params={"project": number}).json().get("items", []):
        if b["name"].startswith("promo-assets-for-b"):
            for o in h.get(f"/storage/v1/b/{b['name']}/o").json().get("items", []):
                assert h.delete(f"/storage/v1/b/{b['name']}/o/{o['name']}").status_code == 204
            assert h.delete(f"/storage/v1/b/{b['name']}").status_code == 204
    # upload_csvs_to_bigquery
    for sc in SCENARIOS:
        cfg = {"configuration": {"load": {"sourceFormat": "CSV", "skipLeadingRows": 1, "autodetect": True,
                                          "writeDisposition": "WRITE_TRUNCATE",
                                          "destinationTable": {"projectId": number, "datasetId": "ab_testing",
                                                               "tableId": f"ab_{sc}"}}},
               "jobReference": {"projectId": number, "jobId": str(uuid.uuid4())}}
        with open(os.path.join(DATA, f"ab_{sc}.csv"), "rb") as f:
            body, hdr = multipart(cfg, f.read())
        r = h.post(f"/upload{bq}/jobs", params={"uploadType": "multipart"}, content=body, headers=hdr)
        assert r.status_code == 200, r.text
        t = h.get(f"{bq}/datasets/ab_testing/tables/ab_{sc}").json()
        assert t["numRows"] == "360" and t["schema"]["fields"][0]["name"] == "time_window", t["schema"]
    return number, log_bucket


def agent(urls, log_bucket, wrong=None):
    gc, fs = urls["google_cloud"], urls["filesystem"]
    out = call(gc, "bigquery_run_query", {"query": """
        CREATE OR REPLACE TABLE ab_testing.rates AS
        SELECT _TABLE_SUFFIX AS scenario,
               SUM(A_store_views) / SUM(A_clicks) * 100 AS a_rate,
               SUM(B_store_views) / SUM(B_clicks) * 100 AS b_rate
        FROM `ab_testing.ab_*`
        GROUP BY scenario"""})
    assert out.startswith("Query executed successfully."), out
    assert call(gc, "storage_create_bucket", {"bucket_name": "ab-scratch"}).startswith("Successfully")
    assert call(gc, "bigquery_export_table", {"dataset_id": "ab_testing", "table_id": "rates",
                                              "destination_bucket": "ab-scratch",
                                              "destination_path": "rates.csv"}).startswith("Successfully")
    assert call(gc, "storage_download_file", {"bucket_name": "ab-scratch", "source_blob_name": "rates.csv",
                                              "destination_file_path": "/data/rates.csv"}).startswith("Successfully")
    rates = {r["scenario"]: (float(r["a_rate"]), float(r["b_rate"]))
             for r in csv.DictReader(io.StringIO(call(fs, "read_file", {"path": "/data/rates.csv"})))}
    assert sorted(rates) == SCENARIOS
    if wrong == "record":
        rates = {k: (b, a) for k, (a, b) in rates.items()}
    a = sum(v[0] for v in rates.values()) / len(rates)
    b = sum(v[1] for v in rates.values()) / len(rates)
    lines = ["scenario,A_conversion %,B_conversion %"]
    lines += [f"{k},{v[0]:.3f}%,{v[1]:.3f}%" for k, v in sorted(rates.items())]
    lines.append(f"{OVERALL},{a:.3f}%,{b:.3f}%")
    out = call(fs, "write_file", {"path": "/data/record.csv", "content": "\n".join(lines) + "\n"})
    assert "Successfully wrote" in out, out
    b_wins = b > a and wrong != "decision"
    if b_wins:
        out = call(gc, "storage_create_bucket", {"bucket_name": f"promo-assets-for-b-{uuid.uuid4().hex[:8]}"})
        assert out.startswith("Successfully"), out
    if not b_wins or wrong == "extra-log":
        # the task text names the log bucket by its prefix; the scripted agent is told the name
        out = call(gc, "logging_write_log", {"log_name": log_bucket, "message": str(
            {"status": "AB_Test_Concluded", "winner": "A", "action": "No_Change"})})
        assert out.startswith("Successfully wrote"), out


def read_record(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {r["scenario"].strip(): (float(r["A_conversion %"].replace("%", "")),
                                        float(r["B_conversion %"].replace("%", "")))
                for r in csv.DictReader(f)}


def evaluate(daemon, base, lid, auth, number, log_bucket, launch, now):
    """evaluation/main.py's checks; (passed, reason)."""
    path = os.path.join(daemon.data_dir, "workspaces", lid, "data", "record.csv")
    if not os.path.isfile(path):
        return False, "Missing record.csv file"
    got, want = read_record(path), read_record(os.path.join(DATA, "expected_ratio.csv"))
    if set(got) != set(want):
        return False, "scenarios differ"
    for sc, (ea, eb) in want.items():
        if abs(got[sc][0] - ea) > 0.1 or abs(got[sc][1] - eb) > 0.1:
            return False, f"Record validation failed: {sc}"
    # the grader's own credentials: the service-account key file, its project id
    key = auth["service_account_key"]
    sa = google_auth.Credentials.from_service_account_info(key, scopes=["https://www.googleapis.com/auth/cloud-platform"])
    sa.refresh(Request())
    h = {"Authorization": f"Bearer {sa.token}"}
    buckets = httpx.get(f"{base}/storage/v1/b", params={"project": key["project_id"]}, headers=h).json().get("items", [])
    if not any(b["name"].startswith("promo-assets-for-b") for b in buckets):
        return False, "storage bucket with prefix 'promo-assets-for-b' was not created"
    flt = (f'logName="projects/{key["project_id"]}/logs/{log_bucket}" AND NOT '
           f'jsonPayload.logging\\.googleapis\\.com/diagnostic AND timestamp >= "{launch}" AND timestamp <= "{now}"')
    r = httpx.post(f"{base}/v2/entries:list", headers=h, json={
        "resourceNames": [f"projects/{key['project_id']}"], "filter": flt, "orderBy": "timestamp desc", "pageSize": 500})
    assert r.status_code == 200, r.text
    if r.json().get("entries"):
        return False, "abtesting_logging bucket should contain only the preprocessing test log"
    return True, None


@pytest.mark.parametrize("wrong", [None, "record", "decision", "extra-log"],
                         ids=["correct", "wrong-record", "wrong-decision", "wrong-extra-log"])
def test_ab_testing(env, wrong):  # noqa: F811
    daemon, api, base = env
    r = api.post("/local-sandbox", json={"server_names": ["filesystem", "google_cloud"], "benchmark": "Toolathlon"})
    assert r.status_code == 201, r.text
    lid = r.json()["local_sandbox_id"]
    urls = {s["server_name"]: s["mcp_server_url"] for s in r.json()["servers"]}
    auth = next(s for s in r.json()["servers"] if s["server_name"] == "google_cloud")["auth_data"]
    pid = auth["project_id"]
    r = api.post(f"/local-sandbox/google_cloud/{lid}/initialize", json={"clock": {"now": "2025-07-30T09:00:00Z"}})
    assert r.status_code == 200, r.text
    # an earlier run's bucket, which clean_bucket removes
    gcs = httpx.Client(base_url=f"{base}/p/{pid}")
    assert gcs.post("/storage/v1/b", json={"name": "promo-assets-for-b-old"}).status_code == 200
    assert gcs.post("/upload/storage/v1/b/promo-assets-for-b-old/o", params={"uploadType": "media", "name": "x"},
                    content=b"x").status_code == 200
    number, log_bucket = preprocess(base, auth)
    assert number != pid and number.isdigit()
    assert [b["name"] for b in gcs.get("/storage/v1/b").json().get("items", [])] == []
    launch = clock_now(base, pid)
    agent(urls, log_bucket, wrong)
    ok, why = evaluate(daemon, base, lid, auth, number, log_bucket, launch, clock_now(base, pid))
    if wrong == "record":
        assert not ok and why.startswith("Record validation failed"), why
    elif wrong == "decision":
        assert (ok, why) == (False, "storage bucket with prefix 'promo-assets-for-b' was not created"), why
    elif wrong == "extra-log":
        assert (ok, why) == (False, "abtesting_logging bucket should contain only the preprocessing test log"), why
    else:
        assert ok, why
    api.delete(f"/local-sandbox/{lid}")
