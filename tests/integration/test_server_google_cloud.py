"""google_cloud through the daemon: Klavis's initialize (GoogleCloudData) /
dump / auth_data, the native MCP server reading the same project inside the
sandbox (tools/list as upstream, bigquery_run_query's text), reset back to
the last initialize, two sandboxes that do not see each other, and the
game-statistics task (Toolathlon) played through the tools and graded with
its evaluation's queries, passing and catching a wrong leaderboard.

Data: tests/data/gcloud/corpus.json (provenance there)."""
import ast
import json
import os
import re

import pytest

from gwharness import Session, text_of

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = json.load(open(os.path.join(HERE, "..", "data", "gcloud", "corpus.json")))
SETUP = CORPUS["setup"]

TOP_QUERY = CORPUS["cases"][0]["sql"]  # game-statistics evaluation, verbatim


def acquire(api, **body):
    r = api.post("/sandbox/google_cloud", json={"benchmark": "Toolathlon", **body})
    assert r.status_code == 201, r.text
    return r.json()["sandbox_id"]


def session(api, sid):
    return Session(api.get(f"/sandbox/google_cloud/{sid}").json()["server_url"])


def call(s, name, args):
    msg = s.call(name, args)
    assert "result" in msg, msg
    return text_of(msg)


def rows_of(text):
    """The rows bigquery_run_query printed (Python dict reprs of ints/strings)."""
    return [ast.literal_eval(m) for m in re.findall(r"^Row \d+: (\{.*\})$", text, re.M)]


def test_initialize_query_dump_reset(api):
    sid = acquire(api)
    r = api.post(f"/sandbox/google_cloud/{sid}/initialize", json=SETUP)
    assert r.status_code == 200, r.text
    assert "5 datasets, 7 tables" in r.json()["message"]
    info = api.get(f"/sandbox/google_cloud/{sid}").json()
    project = info["auth_data"]["project_id"]
    assert project.startswith("mcpbox-") and info["auth_data"]["access_token"]
    s = session(api, sid)
    tools = s.result("tools/list", {})["result"]["tools"]
    assert len(tools) == 39
    rq = next(t for t in tools if t["name"] == "bigquery_run_query")
    assert rq["inputSchema"] == {
        "properties": {"query": {"title": "Query", "type": "string"},
                       "dry_run": {"default": False, "title": "Dry Run", "type": "boolean"},
                       "max_results": {"default": 1000, "title": "Max Results", "type": "integer"}},
        "required": ["query"], "title": "bigquery_run_queryArguments", "type": "object"}
    assert rq["description"].startswith("Execute a BigQuery SQL query\n    \n    Args:\n")
    text = call(s, "bigquery_run_query", {"query": TOP_QUERY})
    assert re.fullmatch(
        r"Query executed successfully\.\nTotal rows: 3, Returned: 3\nBytes processed: \d+, Execution time: \d+ms\n\n"
        r"Sample results \(first 5 rows\):\n"
        r"Row 1: \{'player_id': 'p1', 'total_score': 36\}\n"
        r"Row 2: \{'player_id': 'p2', 'total_score': 30\}\n"
        r"Row 3: \{'player_id': 'p3', 'total_score': 15\}\n", text), text
    # Python reprs of dates, timestamps, records; "... and K more rows"
    text = call(s, "bigquery_run_query", {"query": "SELECT * FROM `game_analytics.daily_scores_stream` ORDER BY game_id"})
    assert ("Row 1: {'player_id': 'p1', 'player_region': 'US', 'scores': {'online_score': 10, 'task_score': 5}, "
            "'game_id': 'g1', 'timestamp': datetime.datetime(2025, 3, 10, 9, 0, tzinfo=datetime.timezone.utc)}") in text
    assert text.endswith("... and 0 more rows") is False and "Total rows: 5, Returned: 5" in text
    text = call(s, "bigquery_run_query", {"query": f"SELECT date, total_score FROM `{project}.game_analytics.player_historical_stats` ORDER BY date, total_score", "max_results": 6})
    assert "Row 1: {'date': datetime.date(2025, 3, 6), 'total_score': 2}" in text
    text = call(s, "bigquery_run_query", {"query": "SELECT x FROM `game_analytics.player_historical_stats`, (SELECT 1 AS x UNION ALL SELECT 2) ORDER BY x"})
    assert text.endswith("... and 5 more rows") and "Total rows: 10, Returned: 10" in text
    text = call(s, "bigquery_run_query", {"query": "SELECT * FROM `game_analytics.nope`"})
    assert text.startswith("Error executing BigQuery query: 404 Not found: Table "
                           f"{project}:game_analytics.nope was not found in location US; reason: notFound")
    text = call(s, "bigquery_run_query", {"query": "SELECT * FROM `ab_testing.events` TABLESAMPLE SYSTEM (10 PERCENT)"})
    assert "Unsupported: TABLESAMPLE is not supported by this emulator" in text
    text = call(s, "bigquery_run_query", {"query": "SELECT x, [x, 2] AS a, STRUCT(x AS n) AS s FROM UNNEST([1]) AS x"})
    assert "Row 1: {'x': 1, 'a': [1, 2], 's': {'n': 1}}" in text, text
    assert call(s, "bigquery_list_datasets", {}) == (
        f"Found 5 datasets:\n- ab_testing (Project: {project})\n- academic (Project: {project})\n"
        f"- fin (Project: {project})\n- game_analytics (Project: {project})\n- price (Project: {project})")
    # FastMCP's validation text
    msg = s.call("bigquery_run_query", {"dry_run": "maybe"})
    assert msg["result"]["isError"] is True
    assert text_of(msg).startswith("Error executing tool bigquery_run_query: 2 validation errors for bigquery_run_queryArguments\n")
    # the agent writes a table; the dump shows it
    call(s, "bigquery_run_query", {"query": "CREATE TABLE `game_analytics.leaderboard_20250310` AS SELECT 1 AS x"})
    assert call(s, "storage_create_bucket", {"bucket_name": "exports-1"}) == "Successfully created bucket 'exports-1' in location 'US'"
    assert call(s, "logging_write_log", {"log_name": "app", "message": "hello"}) == \
        "Successfully wrote log entry to 'app' with severity 'INFO'"
    s.close()
    dump = api.get(f"/sandbox/google_cloud/{sid}/dump").json()["data"]
    assert any(t["id"] == "leaderboard_20250310" and t["row_count"] == 1 for t in dump["tables"])
    assert [b["name"] for b in dump["buckets"]] == ["exports-1"]
    assert dump["log_entries"][0]["log_name"] == "app" and dump["log_entries"][0]["message"] == "hello"
    by_id = {(t["dataset_id"], t["id"]): t for t in dump["tables"]}
    assert by_id[("game_analytics", "daily_scores_stream")]["row_count"] == 5
    assert by_id[("game_analytics", "daily_scores_stream")]["fields"][2]["fields"][0] == \
        {"name": "online_score", "type": "INTEGER", "mode": "NULLABLE"}
    # reset: back to the state after the last initialize
    assert api.post(f"/sandbox/google_cloud/{sid}/reset").status_code == 200
    dump = api.get(f"/local-sandbox/google_cloud/{sid}/dump").json()["data"]
    assert not any(t["id"] == "leaderboard_20250310" for t in dump["tables"]) and dump["buckets"] == []
    assert len(dump["tables"]) == 7
    s = session(api, sid)
    assert "Total rows: 3," in call(s, "bigquery_run_query", {"query": TOP_QUERY})
    s.close()
    # a bad document: 422 naming each problem, nothing changed
    r = api.post(f"/sandbox/google_cloud/{sid}/initialize", json={"datasets": [{"description": "x"}], "buckets": 3})
    assert r.status_code == 422
    locs = [tuple(d["loc"]) for d in r.json()["detail"]]
    assert ("body", "datasets", 0, "id") in locs and ("body", "buckets") in locs
    assert len(api.get(f"/sandbox/google_cloud/{sid}/dump").json()["data"]["tables"]) == 7
    # no body: an empty project
    assert api.post(f"/sandbox/google_cloud/{sid}/initialize").status_code == 200
    assert api.get(f"/sandbox/google_cloud/{sid}/dump").json()["data"]["datasets"] == []
    api.delete(f"/sandbox/google_cloud/{sid}")


def test_two_sandboxes_do_not_see_each_other(api):
    a, b = acquire(api), acquire(api)
    assert api.post(f"/sandbox/google_cloud/{a}/initialize", json=SETUP).status_code == 200
    sa, sb = session(api, a), session(api, b)
    assert call(sb, "bigquery_list_datasets", {}) == "No datasets found or no access to allowed datasets"
    pa = api.get(f"/sandbox/google_cloud/{a}").json()["auth_data"]["project_id"]
    assert call(sb, "bigquery_run_query", {"query": f"SELECT 1 FROM `{pa}.game_analytics.daily_scores_stream`"}) \
        .startswith(f"Error executing BigQuery query: 404 Not found: Project {pa}")
    call(sa, "storage_create_bucket", {"bucket_name": "only-in-a"})
    call(sa, "logging_write_log", {"log_name": "a-log", "message": "x"})
    assert call(sb, "storage_list_buckets", {}) == "Found 0 buckets:\n"
    assert call(sb, "logging_list_logs", {}) == "No logs found"
    assert call(sa, "logging_list_logs", {}) == "Found 1 logs:\n- a-log"
    sa.close()
    sb.close()
    api.delete(f"/sandbox/google_cloud/{a}")
    api.delete(f"/sandbox/google_cloud/{b}")


def grade_leaderboard(s, day):
    """game-statistics' verify_daily_leaderboard, on this data (3 players, not 100)."""
    table = f"leaderboard_{day.replace('-', '')}"
    got = rows_of(call(s, "bigquery_run_query", {"query": f"""
            SELECT player_id, total_score, rank
            FROM `game_analytics.{table}`
            ORDER BY rank
        """}))
    want = rows_of(call(s, "bigquery_run_query", {"query": TOP_QUERY.replace("2025-03-10", day)}))
    if not got or len(got) != len(want):
        return False
    for i, r in enumerate(got):
        if r["rank"] != i + 1 or (i and got[i - 1]["total_score"] < r["total_score"]):
            return False
    return {r["player_id"]: r["total_score"] for r in got} == {r["player_id"]: r["total_score"] for r in want}


def test_game_statistics_task_end_to_end(api):
    sid = acquire(api)
    assert api.post(f"/sandbox/google_cloud/{sid}/initialize", json=SETUP).status_code == 200
    s = session(api, sid)
    # what the task asks the agent to do: today's leaderboard and the historical stats
    out = call(s, "bigquery_run_query", {"query": """
        CREATE TABLE `game_analytics.leaderboard_20250310` AS
        SELECT player_id, SUM(scores.online_score + scores.task_score) AS total_score,
               ROW_NUMBER() OVER (ORDER BY SUM(scores.online_score + scores.task_score) DESC) AS rank
        FROM `game_analytics.daily_scores_stream`
        WHERE DATE(timestamp) = '2025-03-10'
        GROUP BY player_id"""})
    assert out.startswith("Query executed successfully."), out
    call(s, "bigquery_run_query", {"query": """
        INSERT INTO `game_analytics.player_historical_stats`
          (player_id, player_region, date, total_online_score, total_task_score, total_score, game_count)
        SELECT player_id, ANY_VALUE(player_region), DATE '2025-03-10', SUM(scores.online_score),
               SUM(scores.task_score), SUM(scores.online_score + scores.task_score), COUNT(*)
        FROM `game_analytics.daily_scores_stream` WHERE DATE(timestamp) = '2025-03-10' GROUP BY player_id"""})
    assert grade_leaderboard(s, "2025-03-10") is True
    hist = rows_of(call(s, "bigquery_run_query", {"query": """
            SELECT player_id, total_score, game_count
            FROM `game_analytics.player_historical_stats`
            WHERE date = '2025-03-10'
            ORDER BY player_id
        """}))
    assert hist == [{"player_id": "p1", "total_score": 36, "game_count": 2},
                    {"player_id": "p2", "total_score": 30, "game_count": 1},
                    {"player_id": "p3", "total_score": 15, "game_count": 1}]
    # a wrong answer is caught: ranks in the wrong order
    call(s, "bigquery_run_query", {"query": """
        CREATE OR REPLACE TABLE `game_analytics.leaderboard_20250310` AS
        SELECT player_id, SUM(scores.online_score + scores.task_score) AS total_score,
               RANK() OVER (ORDER BY SUM(scores.online_score + scores.task_score)) AS rank
        FROM `game_analytics.daily_scores_stream` WHERE DATE(timestamp) = '2025-03-10' GROUP BY player_id"""})
    assert grade_leaderboard(s, "2025-03-10") is False
    s.close()
    api.delete(f"/sandbox/google_cloud/{sid}")


def test_storage_logging_compute_tools(api, tmp_root):
    sid = acquire(api)
    s = session(api, sid)
    # files in /data: load a CSV, export, upload, download
    api.post(f"/sandbox/google_cloud/{sid}/initialize")
    assert call(s, "bigquery_create_dataset", {"dataset_id": "d", "description": "x"}) == \
        "Successfully created dataset 'd' in location 'US'"
    assert call(s, "bigquery_create_dataset", {"dataset_id": "d"}).startswith(
        "Error creating BigQuery dataset: 409 POST https://bigquery.googleapis.com/bigquery/v2/projects/")
    assert call(s, "bigquery_load_csv_data", {"dataset_id": "d", "table_id": "t", "csv_file_path": "/data/nope.csv"}) == \
        "Error loading CSV data to BigQuery: [Errno 2] No such file or directory: '/data/nope.csv'"
    assert call(s, "storage_create_bucket", {"bucket_name": "b-1"}).startswith("Successfully")
    # a file made through the MCP server itself: export a query result, download it to /data
    call(s, "bigquery_run_query", {"query": "CREATE TABLE d.src AS SELECT 1 AS a, 'x,y' AS b UNION ALL SELECT 2, 'z'"})
    assert call(s, "bigquery_export_table", {"dataset_id": "d", "table_id": "src", "destination_bucket": "b-1",
                                             "destination_path": "out/src.csv"}) == \
        "Successfully exported table 'd.src' to 'gs://b-1/out/src.csv'"
    assert call(s, "storage_download_file", {"bucket_name": "b-1", "source_blob_name": "out/src.csv",
                                             "destination_file_path": "/data/dl/src.csv"}) == \
        "Successfully downloaded 'b-1/out/src.csv' to '/data/dl/src.csv'"
    assert call(s, "bigquery_load_csv_data", {"dataset_id": "d", "table_id": "t", "csv_file_path": "/data/dl/src.csv"}) == \
        "Successfully loaded CSV data from '/data/dl/src.csv' to table 'd.t'"
    assert "Row 1: {'a': 1, 'b': 'x,y'}" in call(s, "bigquery_run_query", {"query": "SELECT a, b FROM d.t ORDER BY a"})
    assert call(s, "storage_upload_file", {"bucket_name": "b-1", "source_file_path": "/data/dl/src.csv",
                                           "destination_blob_name": "copy.csv"}) == \
        "Successfully uploaded '/data/dl/src.csv' to 'b-1/copy.csv'"
    assert call(s, "storage_list_objects", {"bucket_name": "b-1"}) == \
        "Found 2 objects in bucket 'b-1':\n- copy.csv: 16 bytes\n- out/src.csv: 16 bytes"
    assert call(s, "storage_delete_object", {"bucket_name": "b-1", "blob_name": "nope"}) == \
        "Object 'nope' not found in bucket 'b-1'"
    info = call(s, "storage_get_bucket_info", {"bucket_name": "b-1"})
    assert info.startswith("Bucket Information for 'b-1':\nLocation: US\nStorage Class: STANDARD\nCreated: 20")
    assert info.endswith("Versioning: Disabled\nLabels: {}\nLifecycle Rules: 0")
    call(s, "storage_set_bucket_lifecycle", {"bucket_name": "b-1"})
    assert call(s, "storage_get_bucket_info", {"bucket_name": "b-1"}).endswith("Lifecycle Rules: 1")
    assert call(s, "storage_get_bucket_size", {"bucket_name": "b-1"}) == (
        "Bucket Size Statistics for 'b-1':\nTotal Objects: 2\nTotal Size: 32 bytes\nSize (MB): 0.00 MB\nSize (GB): 0.00 GB")
    assert "1 BigQuery jobs" not in call(s, "bigquery_list_jobs", {})
    # logging: text entries print "No message" (upstream's precedence slip), filters apply
    call(s, "logging_write_log", {"log_name": "app", "message": "started", "severity": "WARNING"})
    out = call(s, "logging_read_logs", {"log_filter": "severity>=WARNING"})
    assert re.fullmatch(r"Found 1 log entries:\n\[20\d\d-\d\d-\d\dT[\d:.]+\+00:00\] WARNING: No message\n", out), out
    assert call(s, "logging_read_logs", {"log_filter": "severity>=ERROR"}) == \
        "No log entries found matching the filter criteria"
    assert call(s, "logging_export_logs_to_bigquery", {"dataset_id": "d", "table_id": "logs"}) == (
        "Error exporting logs to BigQuery: CloudLoggingManager.export_logs_to_bigquery() got an unexpected "
        "keyword argument 'table_id'")
    assert call(s, "logging_create_log_sink", {"sink_name": "s1", "destination": "storage.googleapis.com/b-1"}) == \
        "Successfully created log sink 's1' to destination 'storage.googleapis.com/b-1'"
    assert call(s, "logging_list_log_sinks", {}) == \
        "Found 1 log sinks:\n- s1\n  Destination: storage.googleapis.com/b-1\n  Filter: \n"
    # compute: create, stop, restart refused, start, wait
    assert call(s, "compute_create_instance", {"instance_name": "vm-1", "zone": "us-central1-a"}) == \
        "Successfully initiated creation of instance 'vm-1' in zone 'us-central1-a'"
    assert call(s, "compute_list_instances", {}) == "Found 1 instances:\n- vm-1: RUNNING in us-central1-a"
    call(s, "compute_stop_instance", {"instance_name": "vm-1", "zone": "us-central1-a"})
    assert call(s, "compute_restart_instance", {"instance_name": "vm-1", "zone": "us-central1-a"}) == (
        "Cannot restart instance 'vm-1': current status is 'TERMINATED'. Instance must be RUNNING or STOPPING to restart.")
    got = call(s, "compute_get_instance", {"instance_name": "vm-1", "zone": "us-central1-a"})
    assert got.startswith("Instance Information for 'vm-1':\nStatus: TERMINATED\nZone: us-central1-a\nMachine Type: e2-micro\n")
    assert call(s, "compute_list_zones", {}).startswith("Found 24 available zones:\n- asia-east1-a\n")
    assert call(s, "compute_wait_for_operation", {"operation_name": "nope", "zone": "us-central1-a"}) == \
        "Operation 'nope' timed out after 5 minutes"
    s.close()
    api.delete(f"/sandbox/google_cloud/{sid}")



def test_storage_upload_file_limits(api, daemon):
    """storage_upload_file sends at most MB_GC_OBJECT_MAX (256 MiB), refused
    from the file's size before any of it is read (a sparse file, so the test
    is fast), and only files in the workspace: a symlink (or a path) out of
    /data is refused, one that stays inside is followed. bigquery_load_csv_data
    reads its CSV by the same rule (src/servers/google_cloud/localfile.c)."""
    sid = acquire(api)
    s = session(api, sid)
    assert call(s, "storage_create_bucket", {"bucket_name": "b-2"}).startswith("Successfully")
    ws = os.path.join(daemon.data_dir, "workspaces", sid, "data")
    limit = 256 << 20
    with open(os.path.join(ws, "big.bin"), "wb") as f:
        f.truncate(limit + 1)
    with open(os.path.join(ws, "huge.bin"), "wb") as f:
        f.truncate(1 << 40)  # 1 TiB, no block of it written
    with open(os.path.join(ws, "small.csv"), "w") as f:
        f.write("a,b\n1,2\n")
    os.makedirs(os.path.join(ws, "sub"))
    os.symlink("../small.csv", os.path.join(ws, "sub", "inside.csv"))
    os.symlink("/data/big.bin", os.path.join(ws, "to-big"))
    os.symlink("/etc/hostname", os.path.join(ws, "to-etc"))
    os.symlink("/.mcpbox/state/gcloud.db", os.path.join(ws, "to-state"))
    os.symlink("../../..", os.path.join(ws, "sub", "up"))
    os.mkfifo(os.path.join(ws, "fifo"))

    def upload(src, dest="x"):
        return call(s, "storage_upload_file", {"bucket_name": "b-2", "source_file_path": src,
                                               "destination_blob_name": dest})

    pre = "Error uploading file to bucket 'b-2': "
    too_big = "'%s' is %d bytes, larger than the 268435456 bytes (256 MiB) an object may hold"
    assert upload("/data/big.bin") == pre + too_big % ("/data/big.bin", limit + 1)
    assert upload("/data/huge.bin") == pre + too_big % ("/data/huge.bin", 1 << 40)
    assert upload("/data/to-big") == pre + too_big % ("/data/to-big", limit + 1)
    assert upload("/data/to-etc") == pre + "'/data/to-etc' resolves to '/etc/hostname', outside the workspace /data"
    assert upload("/data/to-state") == \
        pre + "'/data/to-state' resolves to '/.mcpbox/state/gcloud.db', outside the workspace /data"
    assert upload("/data/sub/up/etc/hostname") == \
        pre + "'/data/sub/up/etc/hostname' resolves to '/etc/hostname', outside the workspace /data"
    assert upload("/.mcpbox/state/gcloud.db") == pre + "'/.mcpbox/state/gcloud.db' is outside the workspace /data"
    environ = upload("/proc/self/environ")
    assert environ.startswith(pre + "'/proc/self/environ' resolves to '/proc/"), environ
    assert environ.endswith("/environ', outside the workspace /data"), environ
    assert upload("/data/sub") == pre + "[Errno 21] Is a directory: '/data/sub'"
    assert upload("/data/nope") == pre + "[Errno 2] No such file or directory: '/data/nope'"
    assert upload("/data/fifo") == pre + "[Errno 6] No such device or address: '/data/fifo'"
    assert call(s, "storage_list_objects", {"bucket_name": "b-2"}) == "Found 0 objects in bucket 'b-2':\n"
    # inside the workspace, through a symlink too: uploaded
    assert upload("/data/sub/inside.csv", "in.csv") == "Successfully uploaded '/data/sub/inside.csv' to 'b-2/in.csv'"
    assert upload("/data/small.csv", "s.csv") == "Successfully uploaded '/data/small.csv' to 'b-2/s.csv'"
    assert call(s, "storage_list_objects", {"bucket_name": "b-2"}) == \
        "Found 2 objects in bucket 'b-2':\n- in.csv: 8 bytes\n- s.csv: 8 bytes"
    # bigquery_load_csv_data reads its CSV the same way (its limit: 1 GiB)
    call(s, "bigquery_create_dataset", {"dataset_id": "d2"})
    load = "Error loading CSV data to BigQuery: "
    assert call(s, "bigquery_load_csv_data", {"dataset_id": "d2", "table_id": "t", "csv_file_path": "/data/huge.bin"}) == \
        load + "'/data/huge.bin' is 1099511627776 bytes, larger than the 1073741824 bytes (1 GiB) a CSV load reads"
    assert call(s, "bigquery_load_csv_data", {"dataset_id": "d2", "table_id": "t", "csv_file_path": "/data/to-state"}) == \
        load + "'/data/to-state' resolves to '/.mcpbox/state/gcloud.db', outside the workspace /data"
    assert call(s, "bigquery_load_csv_data", {"dataset_id": "d2", "table_id": "t", "csv_file_path": "/data/fifo"}) == \
        load + "[Errno 6] No such device or address: '/data/fifo'"
    assert call(s, "bigquery_load_csv_data", {"dataset_id": "d2", "table_id": "t",
                                              "csv_file_path": "/data/sub/inside.csv"}) == \
        "Successfully loaded CSV data from '/data/sub/inside.csv' to table 'd2.t'"
    api.delete(f"/sandbox/google_cloud/{sid}")
