"""The Google Cloud REST facade (src/gcloud/rest.c) with raw HTTP calls shaped
as google-cloud-bigquery 3.x and google-cloud-storage 3.x send them (Debian
packages neither library, so the shapes are written out here; source: the
libraries' Client methods as of python-bigquery 3.35 / python-storage 3.2:
create_dataset, create_table, insert_rows_json, query + result
(jobs.insert then getQueryResults with formatOptions.useInt64Timestamp),
query_and_wait (jobs.query), load_table_from_file (multipart upload),
list_buckets, create_bucket, Blob.upload_from_string (multipart upload),
Blob.download_as_bytes (/download/... alt=media)). The project id selects
the sandbox; two sandboxes do not see each other."""
import json
import os
import socket
import time
import uuid

import httpx
import pytest

from conftest import Daemon

HERE = os.path.dirname(os.path.abspath(__file__))
SETUP = json.load(open(os.path.join(HERE, "..", "data", "gcloud", "corpus.json")))["setup"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def env(tmp_root):
    port = free_port()
    d = Daemon(os.path.join(tmp_root, "var"), env={"MCPBOX_GCLOUD_LISTEN": f"127.0.0.1:{port}"}).start()
    with d.client() as api:
        yield api, f"http://127.0.0.1:{port}"
    d.stop()


def sandbox(api, setup=None):
    r = api.post("/sandbox/google_cloud", json={"benchmark": "Toolathlon"})
    assert r.status_code == 201, r.text
    sid = r.json()["sandbox_id"]
    if setup is not None:
        assert api.post(f"/sandbox/google_cloud/{sid}/initialize", json=setup).status_code == 200
    return sid, api.get(f"/sandbox/google_cloud/{sid}").json()["auth_data"]["project_id"]


def multipart(meta, data, ctype="application/octet-stream"):
    b = "===============%s==" % uuid.uuid4().hex
    body = (f"--{b}\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n{json.dumps(meta)}\r\n"
            f"--{b}\r\ncontent-type: {ctype}\r\n\r\n").encode() + data + f"\r\n--{b}--\r\n".encode()
    return body, {"Content-Type": f'multipart/related; boundary="{b}"'}


def test_bigquery_as_the_client_library_calls_it(env):
    api, base = env
    sid, project = sandbox(api, SETUP)
    h = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {project}"}, timeout=30)
    bq = f"/bigquery/v2/projects/{project}"
    # list_datasets, get_dataset
    ds = h.get(f"{bq}/datasets").json()
    assert [d["datasetReference"]["datasetId"] for d in ds["datasets"]][:2] == ["ab_testing", "academic"]
    assert h.get(f"{bq}/datasets/nope").status_code == 404
    # create_dataset / create_table / insert_rows_json
    r = h.post(f"{bq}/datasets", json={"datasetReference": {"projectId": project, "datasetId": "wh"},
                                        "labels": {}, "location": "US"})
    assert r.status_code == 200 and r.json()["id"] == f"{project}:wh"
    assert h.post(f"{bq}/datasets", json={"datasetReference": {"projectId": project, "datasetId": "wh"}}).status_code == 409
    r = h.post(f"{bq}/datasets/wh/tables", json={
        "tableReference": {"projectId": project, "datasetId": "wh", "tableId": "t"},
        "schema": {"fields": [{"name": "id", "type": "INTEGER", "mode": "REQUIRED"},
                              {"name": "ts", "type": "TIMESTAMP"}, {"name": "ok", "type": "BOOLEAN"}]}, "labels": {}})
    assert r.status_code == 200, r.text
    r = h.post(f"{bq}/datasets/wh/tables/t/insertAll", json={"rows": [
        {"insertId": "a", "json": {"id": 1, "ts": "2025-03-10T09:00:00Z", "ok": True}},
        {"insertId": "b", "json": {"id": 2, "ts": None, "ok": False}}]})
    assert r.json() == {"kind": "bigquery#tableDataInsertAllResponse"}
    r = h.post(f"{bq}/datasets/wh/tables/t/insertAll", json={"rows": [{"json": {"id": "x"}}]})
    assert r.json()["insertErrors"][0]["index"] == 0
    assert h.get(f"{bq}/datasets/wh/tables/t").json()["numRows"] == "2"
    # client.query(): jobs.insert, then getQueryResults
    job = {"jobReference": {"jobId": "job_abc", "projectId": project, "location": "US"},
           "configuration": {"query": {"useLegacySql": False,
                                       "query": "SELECT id, ts, ok FROM `wh.t` ORDER BY id"}}}
    r = h.post(f"{bq}/jobs", json=job)
    assert r.status_code == 200, r.text
    assert r.json()["status"]["state"] == "DONE" and r.json()["jobReference"]["jobId"] == "job_abc"
    assert r.json()["statistics"]["query"]["statementType"] == "SELECT"
    r = h.get(f"{bq}/queries/job_abc", params={"maxResults": 0, "location": "US",
                                               "formatOptions.useInt64Timestamp": "True"})
    assert r.json()["jobComplete"] is True and r.json()["totalRows"] == "2"
    assert [f["type"] for f in r.json()["schema"]["fields"]] == ["INTEGER", "TIMESTAMP", "BOOLEAN"]
    r = h.get(f"{bq}/queries/job_abc", params={"location": "US", "formatOptions.useInt64Timestamp": "True"})
    assert r.json()["rows"] == [{"f": [{"v": "1"}, {"v": "1741597200000000"}, {"v": "true"}]},
                                {"f": [{"v": "2"}, {"v": None}, {"v": "false"}]}]
    assert h.get(f"{bq}/jobs/job_abc", params={"location": "US"}).json()["status"]["state"] == "DONE"
    # query_and_wait(): jobs.query with parameters; RECORD values as f/v
    r = h.post(f"{bq}/queries", json={
        "query": "SELECT player_id, scores FROM `game_analytics.daily_scores_stream` WHERE game_id = @g",
        "useLegacySql": False, "parameterMode": "NAMED",
        "queryParameters": [{"name": "g", "parameterType": {"type": "STRING"}, "parameterValue": {"value": "g1"}}],
        "formatOptions": {"useInt64Timestamp": True}, "location": "US"})
    assert r.json()["rows"] == [{"f": [{"v": "p1"}, {"v": {"f": [{"v": "10"}, {"v": "5"}]}}]}]
    # FLOAT64 cells: the shortest text that reads back as the same double (float() of it)
    r = h.post(f"{bq}/queries", json={"query": "SELECT 0.1 AS a, 1 / 3 AS b, 2.5e20 AS c, 0.1 + 0.2 AS d, -1.5 AS e",
                                      "useLegacySql": False})
    assert [c["v"] for c in r.json()["rows"][0]["f"]] == ["0.1", "0.3333333333333333", "2.5e+20",
                                                          "0.30000000000000004", "-1.5"], r.text
    # a failing query: BigQuery's error shape naming the construct
    r = h.post(f"{bq}/queries", json={"query": "SELECT * FROM wh.t PIVOT (SUM(id) FOR x IN (1))", "useLegacySql": False})
    assert r.status_code == 400 and "PIVOT" in r.json()["error"]["message"]
    assert r.json()["error"]["errors"][0]["reason"] == "invalid"
    # DML through a job: numDmlAffectedRows
    r = h.post(f"{bq}/queries", json={"query": "DELETE FROM wh.t WHERE id = 2", "useLegacySql": False})
    assert r.json()["numDmlAffectedRows"] == "1"
    # load_table_from_file: a multipart upload of CSV with autodetect
    body, hdr = multipart({"jobReference": {"jobId": "load1", "projectId": project},
                           "configuration": {"load": {"sourceFormat": "CSV", "skipLeadingRows": 1, "autodetect": True,
                                                      "destinationTable": {"projectId": project, "datasetId": "wh",
                                                                           "tableId": "csv"}}}},
                          b"a,b\n1,x\n2,y\n")
    r = h.post(f"/upload{bq}/jobs", params={"uploadType": "multipart"}, content=body, headers=hdr)
    assert r.status_code == 200, r.text
    assert h.get(f"{bq}/datasets/wh/tables/csv/data").json()["rows"] == [{"f": [{"v": "1"}, {"v": "x"}]},
                                                                          {"f": [{"v": "2"}, {"v": "y"}]}]
    # delete_dataset(delete_contents=True)
    assert h.delete(f"{bq}/datasets/wh", params={"deleteContents": "true"}).status_code == 204
    assert h.get(f"{bq}/datasets/wh").status_code == 404
    # what the MCP server sees is the same project
    dump = api.get(f"/sandbox/google_cloud/{sid}/dump").json()["data"]
    assert not any(d["id"] == "wh" for d in dump["datasets"])


def test_storage_as_the_client_library_calls_it(env):
    api, base = env
    sid, project = sandbox(api)
    h = httpx.Client(base_url=f"{base}/p/{project}", timeout=30)  # STORAGE_EMULATOR_HOST with /p/PROJECT
    r = h.post("/storage/v1/b", params={"project": project}, json={"name": "my-bucket", "location": "US"})
    assert r.status_code == 200 and r.json()["name"] == "my-bucket"
    assert h.post("/storage/v1/b", params={"project": project}, json={"name": "my-bucket"}).status_code == 409
    body, hdr = multipart({"name": "dir/a.csv", "contentType": "text/csv"}, b"x,y\n1,2\n", "text/csv")
    r = h.post("/upload/storage/v1/b/my-bucket/o", params={"uploadType": "multipart"}, content=body, headers=hdr)
    assert r.status_code == 200, r.text
    assert r.json()["size"] == "8" and r.json()["contentType"] == "text/csv"
    r = h.post("/upload/storage/v1/b/my-bucket/o", params={"uploadType": "media", "name": "top.txt"}, content=b"hi")
    assert r.status_code == 200
    listing = h.get("/storage/v1/b/my-bucket/o", params={"delimiter": "/", "projection": "noAcl"}).json()
    assert [o["name"] for o in listing["items"]] == ["top.txt"] and listing["prefixes"] == ["dir/"]
    assert h.get("/download/storage/v1/b/my-bucket/o/dir%2Fa.csv", params={"alt": "media"}).content == b"x,y\n1,2\n"
    assert h.get("/storage/v1/b/my-bucket/o/dir%2Fa.csv").json()["md5Hash"]
    # a load job from the object (gs:// URI)
    bq = f"{base}/bigquery/v2/projects/{project}"
    httpx.post(f"{bq}/datasets", json={"datasetReference": {"projectId": project, "datasetId": "d"}})
    r = httpx.post(f"{bq}/jobs", json={"configuration": {"load": {
        "sourceUris": ["gs://my-bucket/dir/a.csv"], "sourceFormat": "CSV", "skipLeadingRows": 1, "autodetect": True,
        "destinationTable": {"projectId": project, "datasetId": "d", "tableId": "t"}}}})
    assert r.status_code == 200, r.text
    assert httpx.get(f"{bq}/datasets/d/tables/t").json()["numRows"] == "1"
    assert h.delete("/storage/v1/b/my-bucket/o/top.txt").status_code == 204
    assert h.get("/storage/v1/b/my-bucket/o/top.txt").status_code == 404
    # the MCP server sees the object
    assert [o["name"] for o in api.get(f"/sandbox/google_cloud/{sid}/dump").json()["data"]["objects"]] == ["dir/a.csv"]


def test_storage_copy_rewrite_compose(env):
    """Objects copied, rewritten and composed as google-cloud-storage sends
    them (Bucket.copy_blob: POST .../o/SRC/copyTo/b/DST/o/NAME with the
    destination's metadata; Blob.rewrite: .../rewriteTo/... answered done in
    one call; Blob.compose: POST .../o/NAME/compose), names with slashes
    escaped as the library escapes them; errors for a missing source and a
    bad component count, and nothing written by them."""
    api, base = env
    sid, project = sandbox(api)
    h = httpx.Client(base_url=f"{base}/p/{project}", timeout=30)
    for b in ("src", "dst"):
        assert h.post("/storage/v1/b", params={"project": project}, json={"name": b}).status_code == 200
    for name, data, ctype in (("dir/a.csv", b"x,y\n1,2\n", "text/csv"), ("b.csv", b"3,4\n", "text/plain")):
        assert h.post("/upload/storage/v1/b/src/o", params={"uploadType": "media", "name": name}, content=data,
                      headers={"Content-Type": ctype}).status_code == 200
    r = h.post("/storage/v1/b/src/o/dir%2Fa.csv/copyTo/b/dst/o/copies%2Fa.csv", params={"projection": "noAcl"}, json={})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["bucket"] == "dst" and got["name"] == "copies/a.csv" and got["size"] == "8"
    assert got["contentType"] == "text/csv"
    assert got["md5Hash"] == h.get("/storage/v1/b/src/o/dir%2Fa.csv").json()["md5Hash"]
    assert h.get("/download/storage/v1/b/dst/o/copies%2Fa.csv", params={"alt": "media"}).content == b"x,y\n1,2\n"
    # rewrite with a new content type, in one call
    r = h.post("/storage/v1/b/src/o/b.csv/rewriteTo/b/dst/o/b2.csv", json={"contentType": "text/csv"})
    assert r.status_code == 200, r.text
    rw = r.json()
    assert rw["kind"] == "storage#rewriteResponse" and rw["done"] is True
    assert rw["totalBytesRewritten"] == rw["objectSize"] == "4" and "rewriteToken" not in rw
    assert rw["resource"]["name"] == "b2.csv" and rw["resource"]["contentType"] == "text/csv"
    # compose: the components' bytes in order
    r = h.post("/storage/v1/b/src/o/all.csv/compose",
               json={"sourceObjects": [{"name": "dir/a.csv"}, {"name": "b.csv"}], "destination": {"contentType": "text/csv"}})
    assert r.status_code == 200, r.text
    assert r.json()["size"] == "12" and r.json()["contentType"] == "text/csv"
    assert h.get("/download/storage/v1/b/src/o/all.csv", params={"alt": "media"}).content == b"x,y\n1,2\n3,4\n"
    # errors, and nothing written
    r = h.post("/storage/v1/b/src/o/nope/copyTo/b/dst/o/x", json={})
    assert r.status_code == 404, r.text
    assert h.post("/storage/v1/b/src/o/x/compose", json={"sourceObjects": []}).status_code == 400
    assert h.post("/storage/v1/b/src/o/x/compose", json={"sourceObjects": [{"name": "b.csv"}] * 33}).status_code == 400
    assert h.post("/storage/v1/b/src/o/x/compose", json={"sourceObjects": [{"name": "b.csv"}, {"name": "gone"}]}).status_code == 404
    assert h.post("/storage/v1/b/src/o/b.csv/copyTo/b/nobucket/o/x", json={}).status_code == 404
    # hostile names and bodies: refused, nothing written, the facade keeps serving
    for path, body in (("/storage/v1/b/src/o/b.csv/copyTo/b/dst/o/%FF%FE", {}),
                       ("/storage/v1/b/src/o/b.csv/copyTo/b/dst/o/a%00b", {}),
                       ("/storage/v1/b/src/o/b.csv/copyTo/b/dst/o/" + "n" * 10000, {}),
                       ("/storage/v1/b/src/o/%FF/compose", {"sourceObjects": [{"name": "b.csv"}]}),
                       ("/storage/v1/b/src/o/x/compose", {"sourceObjects": "b.csv"}),
                       ("/storage/v1/b/src/o/x/compose", {"sourceObjects": [7, None]}),
                       ("/storage/v1/b/src/o/x/compose", {"sourceObjects": [{"name": ""}]}),
                       ("/storage/v1/b/src/o/x/compose", {"sourceObjects": [{"name": "\u00e9" * 5000}]})):
        r = h.post(path, json=body)
        assert r.status_code in (400, 404), (path, r.status_code, r.text[:300])
    r = h.post("/storage/v1/b/src/o/x/compose", content=b"\xff{not json", headers={"Content-Type": "application/json"})
    assert 400 <= r.status_code < 500, r.text
    # a compose larger than the emulator takes is refused before it is all in memory
    big = b"z" * (9 << 20)
    assert h.post("/upload/storage/v1/b/src/o", params={"uploadType": "media", "name": "big"}, content=big).status_code == 200
    r = h.post("/storage/v1/b/src/o/huge/compose", json={"sourceObjects": [{"name": "big"}] * 30})
    assert r.status_code == 413 and "256 MiB" in r.json()["error"]["message"], r.text[:300]
    assert h.delete("/storage/v1/b/src/o/big").status_code == 204
    assert h.get("/storage/v1/b/src/o/x").status_code == 404 and h.get("/storage/v1/b/dst/o/x").status_code == 404
    assert h.get("/storage/v1/b/src/o/huge").status_code == 404
    names = sorted(o["name"] for o in api.get(f"/sandbox/google_cloud/{sid}/dump").json()["data"]["objects"])
    assert names == ["all.csv", "b.csv", "b2.csv", "copies/a.csv", "dir/a.csv"]


def test_projects_select_sandboxes(env):
    api, base = env
    _, pa = sandbox(api, SETUP)
    _, pb = sandbox(api)
    assert httpx.get(f"{base}/bigquery/v2/projects/{pa}/datasets").json()["datasets"]
    assert httpx.get(f"{base}/bigquery/v2/projects/{pb}/datasets").json()["datasets"] == []
    # B cannot reach A's tables by naming A's project inside SQL
    r = httpx.post(f"{base}/bigquery/v2/projects/{pb}/queries",
                   json={"query": f"SELECT * FROM `{pa}.game_analytics.daily_scores_stream`"})
    assert r.status_code == 404 and f"Not found: Project {pa}" in r.json()["error"]["message"]
    assert httpx.get(f"{base}/bigquery/v2/projects/mcpbox-000000000000/datasets").status_code == 404
    assert httpx.get(f"{base}/storage/v1/b").status_code == 400  # no project at all
    assert httpx.get(f"{base}/storage/v1/b", headers={"Authorization": f"Bearer {pb}"}).json()["items"] == []
    # the token endpoint refuses what Google's refuses (test_gcloud_identity has the rest)
    assert httpx.post(f"{base}/token", data={"grant_type": "x"}).json()["error"] == "unsupported_grant_type"


def test_service_account_key_and_token(env):
    """auth_data carries a key file whose token_uri is the facade (google-auth's
    service_account.Credentials POSTs a JWT-bearer grant there) and the emulator hosts."""
    api, base = env
    sid, project = sandbox(api)
    a = api.get(f"/sandbox/google_cloud/{sid}").json()["auth_data"]
    key = a["service_account_key"]
    assert key["type"] == "service_account" and key["project_id"] == project
    assert key["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    assert key["token_uri"] == a["token_uri"] == f"{base}/p/{project}/token"
    assert a["bigquery_emulator_host"] == base and a["storage_emulator_host"] == f"{base}/p/{project}"
    # the same key on the next read
    assert api.get(f"/sandbox/google_cloud/{sid}").json()["auth_data"]["service_account_key"] == key
    # the grant google-auth's service_account.Credentials sends: an RS256 JWT signed with the key
    crypt = pytest.importorskip("google.auth.crypt")
    from google.auth import jwt
    now = int(time.time())
    claims = {"iss": key["client_email"], "aud": key["token_uri"], "iat": now, "exp": now + 3600,
              "scope": "https://www.googleapis.com/auth/cloud-platform"}
    assertion = jwt.encode(crypt.RSASigner.from_service_account_info(key), claims).decode()
    tok = httpx.post(key["token_uri"], data={"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                                             "assertion": assertion}).json()
    assert tok["access_token"] == project and tok["token_type"] == "Bearer"
    # that token selects the project on Storage paths without a prefix
    h = {"Authorization": f"Bearer {tok['access_token']}"}
    assert httpx.post(f"{base}/storage/v1/b", json={"name": "via-token"}, headers=h).status_code == 200
    assert [b["name"] for b in httpx.get(f"{base}/storage/v1/b", headers=h).json()["items"]] == ["via-token"]


def test_resumable_upload_as_the_client_library_does_it(env):
    """google-resumable-media's protocol (python-storage Blob.upload_from_file
    with chunk_size): POST uploadType=resumable -> Location; PUT chunks with
    Content-Range bytes S-E/* -> 308 + Range; a status query bytes */*; the
    last chunk bytes S-E/N -> 200 and the object resource; DELETE cancels."""
    api, base = env
    sid, project = sandbox(api)
    h = httpx.Client(base_url=f"{base}/p/{project}", timeout=60)
    assert h.post("/storage/v1/b", json={"name": "up-bucket"}).status_code == 200
    data = os.urandom(256 * 1024 * 2 + 1000)
    r = h.post("/upload/storage/v1/b/up-bucket/o?uploadType=resumable",
               json={"name": "dir/big.bin", "contentType": "application/x-test"},
               headers={"X-Upload-Content-Type": "application/x-test"})
    assert r.status_code == 200, r.text
    loc = r.headers["location"]
    assert loc.startswith(f"{base}/p/{project}/upload/storage/v1/b/up-bucket/o?uploadType=resumable&upload_id=")
    c1, c2 = data[:262144], data[262144:524288]
    r = httpx.put(loc, content=c1, headers={"Content-Range": "bytes 0-262143/*"})
    assert r.status_code == 308 and r.headers["range"] == "bytes=0-262143", (r.status_code, r.headers)
    # a status query, and a resent chunk (a retry after a lost answer) change nothing
    r = httpx.put(loc, content=b"", headers={"Content-Range": "bytes */*"})
    assert r.status_code == 308 and r.headers["range"] == "bytes=0-262143"
    r = httpx.put(loc, content=c1, headers={"Content-Range": "bytes 0-262143/*"})
    assert r.status_code == 308 and r.headers["range"] == "bytes=0-262143"
    r = httpx.put(loc, content=c2, headers={"Content-Range": "bytes 262144-524287/*"})
    assert r.status_code == 308 and r.headers["range"] == "bytes=0-524287"
    # hostile ranges: refused, the session unharmed
    for bad in ("bytes 0-10/5", "bytes 9-3/*", "bytes 600000-600009/*", "bits 0-1/2", "bytes -1-2/3",
                "bytes 0-1/99999999999999999999", "bytes */x", "bytes 524288-524289/10"):
        r = httpx.put(loc, content=b"xx" if "-" in bad.split()[-1].split("/")[0] else b"",
                      headers={"Content-Range": bad})
        assert r.status_code == 400, (bad, r.status_code, r.text)
    rest = data[524288:]
    r = httpx.put(loc, content=rest, headers={"Content-Range": f"bytes 524288-{len(data) - 1}/{len(data)}"})
    assert r.status_code == 200, r.text
    obj = r.json()
    assert obj["name"] == "dir/big.bin" and obj["size"] == str(len(data))
    assert obj["contentType"] == "application/x-test"
    assert h.get("/download/storage/v1/b/up-bucket/o/dir/big.bin?alt=media").content == data
    # the session is gone once the object is made
    assert httpx.put(loc, content=b"", headers={"Content-Range": f"bytes */{len(data)}"}).status_code == 404
    # a known size up front, one PUT without Content-Range
    r = h.post("/upload/storage/v1/b/up-bucket/o?uploadType=resumable&name=one.txt",
               headers={"X-Upload-Content-Length": "5"})
    assert httpx.put(r.headers["location"], content=b"hello").json()["size"] == "5"
    assert h.get("/storage/v1/b/up-bucket/o/one.txt?alt=media").content == b"hello"
    # cancel
    r = h.post("/upload/storage/v1/b/up-bucket/o?uploadType=resumable", json={"name": "gone"})
    loc = r.headers["location"]
    assert httpx.delete(loc).status_code == 499
    assert httpx.put(loc, content=b"x", headers={"Content-Range": "bytes 0-0/1"}).status_code == 404
    # a session belongs to its project: another sandbox's prefix does not find it
    _, other = sandbox(api)
    r = h.post("/upload/storage/v1/b/up-bucket/o?uploadType=resumable", json={"name": "mine"})
    theirs = r.headers["location"].replace(f"/p/{project}/", f"/p/{other}/")
    assert httpx.put(theirs, content=b"x", headers={"Content-Range": "bytes 0-0/1"}).status_code == 404
    # no bucket, no name, bad metadata
    assert h.post("/upload/storage/v1/b/nope/o?uploadType=resumable", json={"name": "x"}).status_code == 404
    assert h.post("/upload/storage/v1/b/up-bucket/o?uploadType=resumable", json={}).status_code == 400
    assert h.post("/upload/storage/v1/b/up-bucket/o?uploadType=resumable", content=b"[1").status_code == 400
    # the MCP side sees the objects
    names = [o["name"] for o in api.get(f"/sandbox/google_cloud/{sid}/dump").json()["data"]["objects"]]
    assert "dir/big.bin" in names and "one.txt" in names and "gone" not in names


def test_hostile_sql_through_the_facade(env):
    """Deep nesting and long operator chains are refused with 400 on the
    facade's 1 MiB thread stacks, and it keeps serving."""
    api, base = env
    _, project = sandbox(api, SETUP)
    h = httpx.Client(base_url=f"{base}/bigquery/v2/projects/{project}", timeout=60)
    for q in ("SELECT " + "[" * 5000 + "1" + "]" * 5000, "SELECT " + "STRUCT(" * 3000 + "1" + " AS a)" * 3000,
              "SELECT " + "ARRAY_AGG(" * 3000 + "1" + ")" * 3000, "SELECT 1" + "/1" * 20000,
              "SELECT " + "ROUND(" * 3000 + "1" + ")" * 3000, "SELECT ARRAY(SELECT " * 2000 + "1" + ")" * 2000):
        r = h.post("/queries", json={"query": q, "useLegacySql": False})
        assert r.status_code == 400, (q[:40], r.status_code, r.text[:200])
    r = h.post("/queries", json={"query": "SELECT [1, 2][OFFSET(1)] AS x", "useLegacySql": False})
    assert r.status_code == 200 and r.json()["rows"] == [{"f": [{"v": "2"}]}]


def test_log_entry_labels_trace_and_request(env):
    """An entry's labels (the request's default labels under them, the
    entry's own winning), trace, spanId, traceSampled, httpRequest, operation
    and sourceLocation are kept, given back by entries:list in LogEntry's
    shape and usable in filters (as python-logging's log_struct(labels=..,
    trace=.., http_request=..) sends them); other fields, a non-string label
    and oversized fields are refused, the whole request with them."""
    api, base = env
    _, p = sandbox(api)
    log = f"projects/{p}/logs/web"
    http = {"requestMethod": "GET", "requestUrl": "https://shop.example/cart", "status": 502,
            "latency": "0.250s", "remoteIp": "10.0.0.7"}
    body = {"logName": log, "resource": {"type": "global", "labels": {}},
            "labels": {"env": "prod", "team": "core"},
            "entries": [
                {"textPayload": "upstream timeout", "severity": "ERROR", "timestamp": "2025-03-10T09:00:01Z",
                 "labels": {"team": "checkout"}, "trace": f"projects/{p}/traces/4bf92f3577b34da6",
                 "spanId": "00f067aa0ba902b7", "traceSampled": True, "httpRequest": http,
                 "operation": {"id": "op-1", "producer": "lb", "first": True},
                 "sourceLocation": {"file": "cart.py", "line": "42", "function": "checkout"}},
                {"jsonPayload": {"event": "ok"}, "severity": "INFO", "timestamp": "2025-03-10T09:00:02Z"}]}
    r = httpx.post(f"{base}/v2/entries:write", json=body)
    assert r.status_code == 200, r.text

    def listing(flt=None):
        r = httpx.post(f"{base}/v2/entries:list", json={"resourceNames": [f"projects/{p}"], "orderBy": "timestamp asc",
                                                        **({"filter": flt} if flt else {})})
        assert r.status_code == 200, r.text
        return r.json().get("entries", [])

    first, second = listing()
    assert first["labels"] == {"env": "prod", "team": "checkout"}
    assert first["trace"] == f"projects/{p}/traces/4bf92f3577b34da6" and first["spanId"] == "00f067aa0ba902b7"
    assert first["traceSampled"] is True and first["httpRequest"] == http
    assert first["operation"] == {"id": "op-1", "producer": "lb", "first": True}
    assert first["sourceLocation"]["function"] == "checkout"
    assert second["labels"] == {"env": "prod", "team": "core"} and "trace" not in second
    assert set(second) == {"logName", "resource", "timestamp", "receiveTimestamp", "severity", "insertId",
                           "jsonPayload", "labels"}
    for flt, want in (('labels.team="checkout"', ["upstream timeout"]), ("labels.env=prod", ["upstream timeout", None]),
                      ('labels.team!="checkout"', [None]), ("httpRequest.status>=500", ["upstream timeout"]),
                      ('httpRequest.requestUrl:"cart"', ["upstream timeout"]), ("operation.id=op-1", ["upstream timeout"]),
                      (f'trace="projects/{p}/traces/4bf92f3577b34da6"', ["upstream timeout"]),
                      ("spanId=00f067aa0ba902b7 AND severity>=ERROR", ["upstream timeout"]),
                      ("traceSampled=true", ["upstream timeout"]), ("NOT labels.missing=x", ["upstream timeout", None]),
                      ('sourceLocation.file="cart.py"', ["upstream timeout"])):
        assert [e.get("textPayload") for e in listing(flt)] == want, flt
    # refused: the whole request, nothing written
    for bad, word in (({"labels": {"n": 1}}, "labels are strings"), ({"split": {"uid": "x"}}, "split"),
                      ({"trace": 7}, "trace"), ({"httpRequest": "GET /"}, "httpRequest"),
                      ({"labels": {"big": "x" * 70000}}, "too large"), ({"labels": {"": "v"}}, "label key"),
                      ({"labels": {"k" * 10000: "v"}}, "label key"), ({"trace": "t" * 10000}, "trace"),
                      ({"operation": {"id": "\u00e9" * 40000}}, "too large")):
        r = httpx.post(f"{base}/v2/entries:write", json={"logName": log, "entries": [
            {"textPayload": "fine"}, {"textPayload": "not written", **bad}]})
        assert r.status_code == 400 and word in r.json()["error"]["message"], (bad, r.text)
        assert "entries[1]" in r.json()["error"]["message"], r.text
    # bodies that are not JSON, or carry invalid UTF-8 or a NUL, and hostile filters: refused
    for raw in (b'{"entries": [{"logName": "' + log.encode() + b'", "labels": {"k": "\xff\xfe"}}]}',
                b'{"entries": [{"logName": "' + log.encode() + b'", "labels": {"k": "a\\u0000b"}}]}',
                b"\x00\x01", b""):
        r = httpx.post(f"{base}/v2/entries:write", content=raw, headers={"Content-Type": "application/json"})
        assert r.status_code == 400, (raw[:40], r.text)
    for flt in ("labels." + "a" * 10000 + "=x", "httpRequest." + "." * 5000 + "=1", "labels.=x", "trace=" + "\u00e9" * 5000,
                "operation.id=\"" + "x" * 10000):
        r = httpx.post(f"{base}/v2/entries:list", json={"resourceNames": [f"projects/{p}"], "filter": flt})
        assert r.status_code in (200, 400), (flt[:40], r.text[:200])
    assert len(listing()) == 2


def test_signed_urls_are_served_and_checked(env):
    """storage_generate_signed_url makes a V4 URL signed with the project's key;
    the facade serves it (GET reads, a PUT-signed URL writes) and refuses a
    changed path, method, host or signature with GCS's XML errors."""
    from urllib.parse import urlsplit
    from test_server_google_cloud import call, session
    api, base = env
    sid, project = sandbox(api)
    h = httpx.Client(base_url=f"{base}/p/{project}", timeout=60)
    assert h.post("/storage/v1/b", json={"name": "sig-bucket"}).status_code == 200
    assert h.post("/upload/storage/v1/b/sig-bucket/o?uploadType=media&name=dir/r%C3%A9port.txt",
                  content=b"secret data").status_code == 200
    s = session(api, sid)
    text = call(s, "storage_generate_signed_url", {"bucket_name": "sig-bucket", "blob_name": "dir/réport.txt",
                                                    "expiration_minutes": 5})
    assert text.startswith("Signed URL for 'sig-bucket/dir/réport.txt' (expires in 5 minutes):\n"), text
    url = text.split("\n", 1)[1]
    u = urlsplit(url)
    assert u.path == f"/p/{project}/sig-bucket/dir/r%C3%A9port.txt" and "X-Goog-Expires=300" in u.query

    def get(path, query=u.query, method="GET", host=u.netloc, content=None):
        return httpx.request(method, f"{base}{path}?{query}", headers={"Host": host}, content=content)

    r = get(u.path)
    assert r.status_code == 200 and r.content == b"secret data"
    assert get(u.path, method="HEAD").status_code == 200
    for bad in (get(f"/p/{project}/sig-bucket/dir/other.txt"), get(u.path, method="PUT", content=b"x"),
                get(u.path, host="localhost:1"), get(u.path, query=u.query.replace("X-Goog-Signature=", "X-Goog-Signature=00")),
                get(u.path, query=u.query.replace("X-Goog-Expires=300", "X-Goog-Expires=600"))):
        assert bad.status_code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in bad.content, (bad.status_code, bad.text)
    assert get(u.path, query=u.query.replace("GOOG4-RSA-SHA256", "GOOG4-HMAC-SHA256")).status_code == 400
    # another sandbox's project does not take this project's signature
    _, other = sandbox(api)
    assert get(u.path.replace(project, other)).status_code == 403
    # a PUT-signed URL uploads
    text = call(s, "storage_generate_signed_url", {"bucket_name": "sig-bucket", "blob_name": "up.txt", "method": "PUT"})
    pu = urlsplit(text.split("\n", 1)[1])
    assert get(pu.path, query=pu.query, method="PUT", content=b"uploaded").status_code == 200
    assert h.get("/storage/v1/b/sig-bucket/o/up.txt?alt=media").content == b"uploaded"
    assert get(pu.path, query=pu.query).status_code == 403  # signed for PUT, not GET
    s.close()


def test_logging_as_the_client_library_calls_it(env):
    """Cloud Logging v2 as google-cloud-logging's HTTP transport sends it
    (python-logging 3.x _http.py: entries:write from Logger.log_text /
    log_struct, entries:list from Client.list_entries with resourceNames,
    filter, orderBy, pageSize, pageToken in the body, Logger.delete) and the
    REST GAPIC ConfigServiceV2Client (list/create/get log buckets, sinks).
    Two sandboxes: each project's names reach only its own entries."""
    api, base = env
    a, pa = sandbox(api)
    b, pb = sandbox(api)
    entries = [{"logName": f"projects/{pa}/logs/app", "resource": {"type": "global", "labels": {}},
                "textPayload": f"line {i}", "severity": "INFO" if i % 2 else "ERROR",
                "timestamp": f"2025-03-10T09:00:0{i}Z"} for i in range(5)]
    entries.append({"logName": f"projects/{pa}/logs/app", "resource": {"type": "gce_instance",
                                                                      "labels": {"zone": "us-central1-a"}},
                    "jsonPayload": {"event": "login", "user": {"id": 7}}, "severity": "NOTICE"})
    r = httpx.post(f"{base}/v2/entries:write", json={"entries": entries})
    assert r.status_code == 200 and r.json() == {}, r.text
    # a dry run checks and writes nothing; a bad entry rejects the whole request
    assert httpx.post(f"{base}/v2/entries:write", json={"entries": entries[:1], "dryRun": True}).status_code == 200
    bad = [entries[0], {"logName": f"projects/{pa}/logs/app", "protoPayload": {}}]
    r = httpx.post(f"{base}/v2/entries:write", json={"entries": bad})
    assert r.status_code == 400 and "protoPayload" in r.json()["error"]["message"]
    r = httpx.post(f"{base}/v2/entries:write", json={"entries": [{"logName": f"projects/{pb}/logs/x", "textPayload": "x"},
                                                                {"logName": f"projects/{pa}/logs/x", "textPayload": "y"}]})
    assert r.status_code == 400  # one request, one project

    def listing(project, **kw):
        r = httpx.post(f"{base}/v2/entries:list", json={"resourceNames": [f"projects/{project}"], **kw})
        assert r.status_code == 200, r.text
        return r.json()

    got = listing(pa)["entries"]
    assert [e.get("textPayload") for e in got] == ["line 0", "line 1", "line 2", "line 3", "line 4", None]
    assert got[5]["jsonPayload"] == {"event": "login", "user": {"id": 7}} and got[5]["severity"] == "NOTICE"
    assert got[5]["resource"] == {"type": "gce_instance", "labels": {"zone": "us-central1-a"}}
    assert got[0]["timestamp"] == "2025-03-10T09:00:00.000Z" and got[0]["insertId"]
    assert set(got[0]) == {"logName", "resource", "timestamp", "receiveTimestamp", "severity", "insertId", "textPayload"}
    desc = listing(pa, filter=f'logName="projects/{pa}/logs/app" AND severity>=ERROR', orderBy="timestamp desc")
    assert [e["textPayload"] for e in desc["entries"]] == ["line 4", "line 2", "line 0"]
    page = listing(pa, pageSize=2)
    assert len(page["entries"]) == 2 and page["nextPageToken"]
    rest = listing(pa, pageSize=10, pageToken=page["nextPageToken"])
    assert len(rest["entries"]) == 4 and "nextPageToken" not in rest
    assert listing(pa, filter='jsonPayload.user.id=7')["entries"][0]["jsonPayload"]["event"] == "login"
    assert listing(pa, filter='timestamp >= "2025-03-10T09:00:03Z" AND timestamp < "2025-03-10T09:00:05Z"')[
        "entries"][0]["textPayload"] == "line 3"
    r = httpx.post(f"{base}/v2/entries:list", json={"resourceNames": [f"projects/{pa}"],
                                                    "filter": "protoPayload.status.code=1"})
    assert r.status_code == 400 and "filter" in r.json()["error"]["message"]
    assert httpx.post(f"{base}/v2/entries:list", json={}).status_code == 400
    assert httpx.post(f"{base}/v2/entries:list", json={"resourceNames": ["projects/mcpbox-000000000000"]}).status_code == 403
    # the project number names the project too
    number = int(pa.split("-")[1], 16)
    assert len(listing(str(number))["entries"]) == 6
    # the other sandbox sees none of it
    assert listing(pb) == {}
    assert httpx.get(f"{base}/v2/projects/{pb}/logs").json() == {"logNames": []}
    # logs: list, delete (Logger.delete)
    assert httpx.get(f"{base}/v2/projects/{pa}/logs").json() == {"logNames": [f"projects/{pa}/logs/app"]}
    assert httpx.delete(f"{base}/v2/projects/{pa}/logs/app").json() == {}
    assert httpx.delete(f"{base}/v2/projects/{pa}/logs/app").status_code == 404
    assert listing(pa) == {}
    # log buckets (ConfigServiceV2Client list_buckets / create_bucket / get_bucket)
    lb = f"{base}/v2/projects/{pa}/locations/global/buckets"
    defaults = httpx.get(lb).json()["buckets"]  # every project has them, as on Google
    assert [(d["name"].rsplit("/", 1)[1], d["retentionDays"], d.get("locked", False)) for d in defaults] == [
        ("_Required", 400, True), ("_Default", 30, False)]
    assert all(d["name"].startswith(f"projects/{pa}/locations/global/buckets/") and
               d["lifecycleState"] == "ACTIVE" for d in defaults)
    assert httpx.get(f"{lb}/_Default").json() == defaults[1]
    for bad in ("_Default", "_mine", "x" * 101):
        r = httpx.post(lb, params={"bucketId": bad}, json={})
        assert r.status_code == 400 and "first a letter or a digit" in r.json()["error"]["message"], r.text
    r = httpx.post(lb, params={"bucketId": "exam_log-1"}, json={"retentionDays": 14, "description": "d"})
    assert r.status_code == 200, r.text
    made = r.json()
    assert made["name"] == f"projects/{pa}/locations/global/buckets/exam_log-1" and made["retentionDays"] == 14
    assert made["lifecycleState"] == "ACTIVE" and made["description"] == "d"
    assert httpx.post(lb, params={"bucketId": "exam_log-1"}, json={}).status_code == 409
    assert httpx.get(f"{lb}/exam_log-1").json() == made
    assert httpx.get(f"{base}/v2/projects/{pa}/locations/-/buckets").json()["buckets"] == defaults + [made]
    assert httpx.get(f"{base}/v2/projects/{pa}/locations/us-east1/buckets").json() == {}
    r = httpx.get(f"{lb}/nope")
    assert r.status_code == 404 and r.json()["error"]["message"] == "Bucket `nope` does not exist."
    assert [b["name"].rsplit("/", 1)[1] for b in
            httpx.get(f"{base}/v2/projects/{pb}/locations/global/buckets").json()["buckets"]] == ["_Required", "_Default"]
    # sinks
    sk = f"{base}/v2/projects/{pa}/sinks"
    r = httpx.post(sk, json={"name": "to-gcs", "destination": "storage.googleapis.com/b", "filter": "severity>=ERROR"})
    assert r.status_code == 200 and r.json()["name"] == "to-gcs" and r.json()["writerIdentity"].startswith("serviceAccount:")
    assert httpx.get(sk).json()["sinks"][0]["filter"] == "severity>=ERROR"
    assert httpx.get(f"{sk}/to-gcs").json()["destination"] == "storage.googleapis.com/b"
    assert httpx.delete(f"{sk}/to-gcs").json() == {}
    assert httpx.get(f"{sk}/to-gcs").status_code == 404
    assert httpx.get(f"{base}/v2/projects/{pa}/exclusions").status_code == 501
