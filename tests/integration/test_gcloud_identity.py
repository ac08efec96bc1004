"""A sandbox's clock and the identity endpoints of the Google Cloud REST
facade (src/gcloud/clock.c, identity.c), through the daemon.

- Clock: initialize's `clock` extension freezes a sandbox's "today";
  CURRENT_DATE()/CURRENT_TIMESTAMP() (MCP tool and REST), table / job /
  object / log stamps and logging_read_logs' 24-hour window read it; the
  facade's mcpbox/v1/projects/P/clock reads and moves it; a reset restores
  the initialize's clock; a second sandbox keeps the host's time.
- Identity: google-auth (Debian's python3-google-auth, unchanged) refreshes
  the service-account key file of auth_data at its token_uri, and an OAuth
  refresh-token credential; the token then reaches tokeninfo, userinfo and
  Cloud Resource Manager v1/v3 (the calls ab-testing's preprocess makes with
  googleapiclient: projects().search(), oauth2 v2 userinfo().get(); Debian
  does not package googleapiclient at a version with static discovery, so
  those are raw GETs on the discovery documents' paths). Malformed grants,
  another sandbox's project and a released sandbox's token are refused as
  Google refuses them."""
import base64
import json
import time
from datetime import datetime, timezone

import httpx
import pytest

from test_gcloud_rest import env, sandbox  # noqa: F401 (fixture)
from test_server_google_cloud import call, session

google_auth = pytest.importorskip("google.oauth2.service_account")
from google.auth import exceptions as gauth_exc  # noqa: E402
from google.auth.transport.requests import AuthorizedSession, Request  # noqa: E402
from google.oauth2 import credentials as oauth_creds  # noqa: E402

CLOCK = {"now": "2025-03-10T09:00:00Z", "frozen": True}
FROZEN_MS = "1741597200000"
SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


def today():
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def rest_query(base, project, sql):
    r = httpx.post(f"{base}/bigquery/v2/projects/{project}/queries", json={"query": sql, "useLegacySql": False})
    assert r.status_code == 200, r.text
    return r.json()


def test_clock_per_sandbox(env):  # noqa: F811
    api, base = env
    a, pa = sandbox(api, {"clock": CLOCK, "datasets": [{"id": "d"}]})
    b, pb = sandbox(api)
    s = session(api, a)
    text = call(s, "bigquery_run_query", {"query": "SELECT CURRENT_DATE() AS d, CURRENT_TIMESTAMP() AS t"})
    assert ("{'d': datetime.date(2025, 3, 10), "
            "'t': datetime.datetime(2025, 3, 10, 9, 0, tzinfo=datetime.timezone.utc)}") in text, text
    q = rest_query(base, pa, "SELECT CURRENT_DATE() AS d, DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AS w")
    assert [c["v"] for c in q["rows"][0]["f"]] == ["2025-03-10", "2025-03-03"]
    job = httpx.get(f"{base}/bigquery/v2/projects/{pa}/jobs/{q['jobReference']['jobId']}").json()
    assert job["statistics"]["creationTime"] == job["statistics"]["endTime"] == FROZEN_MS
    # the other sandbox keeps the host's time
    assert rest_query(base, pb, "SELECT CURRENT_DATE() AS d")["rows"][0]["f"][0]["v"] == today()
    # stamps: tables, datasets, objects, log entries
    t = httpx.post(f"{base}/bigquery/v2/projects/{pa}/datasets/d/tables",
                   json={"tableReference": {"projectId": pa, "datasetId": "d", "tableId": "t"},
                         "schema": {"fields": [{"name": "x", "type": "INTEGER"}]}}).json()
    assert t["creationTime"] == FROZEN_MS
    assert httpx.get(f"{base}/bigquery/v2/projects/{pa}/datasets/d").json()["creationTime"] == FROZEN_MS
    gcs = httpx.Client(base_url=f"{base}/p/{pa}")
    assert gcs.post("/storage/v1/b", json={"name": "clock-bucket"}).json()["timeCreated"] == "2025-03-10T09:00:00.000Z"
    o = gcs.post("/upload/storage/v1/b/clock-bucket/o", params={"uploadType": "media", "name": "a.txt"},
                 content=b"hi", headers={"Content-Type": "text/plain"}).json()
    assert o["timeCreated"] == o["updated"] == "2025-03-10T09:00:00.000Z"
    assert call(s, "logging_write_log", {"log_name": "app", "message": "started"}).startswith("Successfully wrote")
    assert "[2025-03-10T09:00:00+00:00] INFO" in call(s, "logging_read_logs", {"log_filter": 'logName:"app"'})
    dump = api.get(f"/sandbox/google_cloud/{a}/dump").json()["data"]
    assert dump["clock"] == {"now": "2025-03-10T09:00:00.000Z", "mode": "frozen"}
    assert dump["log_entries"][0]["timestamp"].startswith("2025-03-10T09:00:00")
    assert "clock" not in api.get(f"/sandbox/google_cloud/{b}/dump").json()["data"]
    # the facade's clock endpoint
    assert httpx.get(f"{base}/mcpbox/v1/projects/{pa}/clock").json() == {"now": "2025-03-10T09:00:00.000Z",
                                                                           "mode": "frozen"}
    assert httpx.get(f"{base}/mcpbox/v1/projects/{pb}/clock").json()["mode"] == "real"
    r = httpx.put(f"{base}/mcpbox/v1/projects/{pa}/clock", json={"now": "2030-01-01T00:00:00Z"})
    assert r.status_code == 200 and r.json()["mode"] == "running" and r.json()["now"].startswith("2030-01-01T00:00:0")
    assert rest_query(base, pa, "SELECT CURRENT_DATE() AS d")["rows"][0]["f"][0]["v"] == "2030-01-01"
    assert "datetime.date(2030, 1, 1)" in call(s, "bigquery_run_query", {"query": "SELECT CURRENT_DATE() AS d"})
    assert rest_query(base, pb, "SELECT CURRENT_DATE() AS d")["rows"][0]["f"][0]["v"] == today()
    for bad in ({"now": "tomorrow"}, {"now": 3}, {"frozen": "yes"}, [1]):
        r = httpx.put(f"{base}/mcpbox/v1/projects/{pa}/clock", json=bad)
        assert r.status_code == 400, (bad, r.text)
    assert httpx.put(f"{base}/mcpbox/v1/projects/{pa}/clock", content=b"{").status_code == 400
    assert httpx.get(f"{base}/mcpbox/v1/projects/mcpbox-000000000000/clock").status_code == 404
    # a bad clock in initialize is a 422 and changes nothing
    r = api.post(f"/sandbox/google_cloud/{a}/initialize", json={"clock": {"now": "soon"}})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "clock"]
    # reset: back to the initialize's clock
    assert api.post(f"/sandbox/google_cloud/{a}/reset").status_code == 200
    assert httpx.get(f"{base}/mcpbox/v1/projects/{pa}/clock").json()["now"] == "2025-03-10T09:00:00.000Z"
    # null: the host's time again
    assert httpx.put(f"{base}/mcpbox/v1/projects/{pa}/clock", content=b"null").json()["mode"] == "real"
    assert rest_query(base, pa, "SELECT CURRENT_DATE() AS d")["rows"][0]["f"][0]["v"] == today()
    s.close()
    api.delete(f"/sandbox/google_cloud/{a}")
    api.delete(f"/sandbox/google_cloud/{b}")


def b64(o):
    return base64.urlsafe_b64encode(json.dumps(o).encode()).rstrip(b"=").decode()


def test_google_auth_and_project_lookups(env):  # noqa: F811
    api, base = env
    a, pa = sandbox(api, {"datasets": [{"id": "ab_testing"}]})
    b, pb = sandbox(api)
    auth = api.get(f"/sandbox/google_cloud/{a}").json()["auth_data"]
    key = auth["service_account_key"]
    # google-auth's service-account flow: a signed JWT-bearer grant at the key's token_uri
    sa = google_auth.Credentials.from_service_account_info(key, scopes=SCOPES)
    sa.refresh(Request())
    assert sa.token == pa and sa.valid
    # an OAuth refresh-token credential (Klavis's auth_data), also at a token_uri without the prefix
    for uri in (auth["token_uri"], f"{base}/token"):
        oc = oauth_creds.Credentials(None, refresh_token=auth["refresh_token"], token_uri=uri,
                                     client_id=auth["client_id"], client_secret=auth["client_secret"], scopes=SCOPES)
        oc.refresh(Request())
        assert oc.token == pa
    # a reset keeps the key usable
    assert api.post(f"/sandbox/google_cloud/{a}/reset").status_code == 200
    again = google_auth.Credentials.from_service_account_info(key, scopes=SCOPES)
    again.refresh(Request())
    assert again.token == pa
    s = AuthorizedSession(sa)
    # userinfo (oauth2 v2, OpenID v3) and tokeninfo (v1, v3)
    ui = s.get(f"{base}/oauth2/v2/userinfo").json()
    assert ui["email"] == key["client_email"] and ui["verified_email"] is True and ui["id"] == key["client_id"]
    assert s.get(f"{base}/oauth2/v3/userinfo").json()["sub"] == key["client_id"]
    ti = httpx.get(f"{base}/oauth2/v3/tokeninfo", params={"access_token": sa.token}).json()
    assert ti["email"] == key["client_email"] and ti["scope"] == SCOPES[0] and int(ti["expires_in"]) > 0
    assert int(ti["exp"]) > time.time()
    ti1 = httpx.post(f"{base}/oauth2/v1/tokeninfo", data={"access_token": sa.token}).json()
    assert ti1["verified_email"] is True and ti1["user_id"] == key["client_id"]
    # Cloud Resource Manager: ab-testing's get_project_id (v3 projects.search, name -> number)
    found = s.get(f"{base}/v3/projects:search").json()["projects"]
    assert len(found) == 1 and found[0]["projectId"] == pa and found[0]["state"] == "ACTIVE"
    number = found[0]["name"].split("/")[-1]
    assert number.isdigit()
    assert s.get(f"{base}/v3/projects/{number}").json() == found[0]
    assert s.get(f"{base}/v3/projects/{pa}").json() == found[0]
    # ... and the number names the project on BigQuery paths as Google's does
    ds = httpx.get(f"{base}/bigquery/v2/projects/{number}/datasets").json()["datasets"]
    assert [d["datasetReference"] for d in ds] == [{"datasetId": "ab_testing", "projectId": pa}]
    v1 = s.get(f"{base}/v1/projects/{pa}").json()
    assert v1["projectNumber"] == number and v1["lifecycleState"] == "ACTIVE" and v1["projectId"] == pa
    assert s.get(f"{base}/v1/projects", params={"filter": f"id:{pa}"}).json()["projects"] == [v1]
    assert s.get(f"{base}/v1/projects", params={"filter": "id:other-project"}).json() == {}
    assert s.get(f"{base}/v3/projects", params={"parent": "organizations/1"}).json() == {}
    assert s.get(f"{base}/v1/projects", params={"filter": "labels.env:prod"}).status_code == 400
    # isolation: another sandbox's project is one the caller may not see
    r = s.get(f"{base}/v1/projects/{pb}")
    assert r.status_code == 403 and r.json()["error"]["status"] == "PERMISSION_DENIED"
    hb = {"Authorization": f"Bearer {pb}"}
    assert [p["projectId"] for p in httpx.get(f"{base}/v3/projects:search", headers=hb).json()["projects"]] == [pb]
    # no credentials
    r = httpx.get(f"{base}/v3/projects:search")
    assert r.status_code == 401 and r.json()["error"]["status"] == "UNAUTHENTICATED"
    assert httpx.get(f"{base}/oauth2/v2/userinfo").status_code == 401
    # malformed grants, as Google's token endpoint answers them
    r = httpx.post(f"{base}/token", data={"grant_type": "password"})
    assert r.status_code == 400 and r.json() == {"error": "unsupported_grant_type",
                                                 "error_description": "Invalid grant_type: password"}
    jwt_grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    r = httpx.post(f"{base}/token", data={"grant_type": jwt_grant, "assertion": "x.y.z"})
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    now = int(time.time())
    stale = b64({"alg": "RS256", "typ": "JWT"}) + "." + b64({"iss": key["client_email"], "aud": key["token_uri"],
                                                             "iat": now - 7200, "exp": now - 3600}) + ".c2ln"
    r = httpx.post(auth["token_uri"], data={"grant_type": jwt_grant, "assertion": stale})
    assert r.status_code == 400 and "short-lived token" in r.json()["error_description"]
    # the signature is checked against the key auth_data handed out
    from google.auth import crypt, jwt
    claims = {"iss": key["client_email"], "aud": key["token_uri"], "iat": now, "exp": now + 3600,
              "scope": SCOPES[0]}
    good = jwt.encode(crypt.RSASigner.from_service_account_info(key), claims).decode()
    r = httpx.post(auth["token_uri"], data={"grant_type": jwt_grant, "assertion": good})
    assert r.status_code == 200 and r.json()["access_token"] == pa
    h64, p64, s64 = good.split(".")
    forged = h64 + "." + b64({**claims, "scope": "x"}) + "." + s64
    unsigned = h64 + "." + p64 + ".c2ln"
    kb0 = api.get(f"/sandbox/google_cloud/{b}").json()["auth_data"]["service_account_key"]
    other = jwt.encode(crypt.RSASigner.from_service_account_info(kb0), claims).decode()  # B's key, A's claims
    for bad in (forged, unsigned, other):
        r = httpx.post(auth["token_uri"], data={"grant_type": jwt_grant, "assertion": bad})
        assert r.status_code == 400 and r.json() == {"error": "invalid_grant",
                                                     "error_description": "Invalid JWT Signature."}, r.text
    # B's key presented at A's token_uri: not A's account
    kb = api.get(f"/sandbox/google_cloud/{b}").json()["auth_data"]["service_account_key"]
    kb["token_uri"] = key["token_uri"]
    with pytest.raises(gauth_exc.RefreshError, match="invalid_grant"):
        google_auth.Credentials.from_service_account_info(kb, scopes=SCOPES).refresh(Request())
    assert httpx.post(f"{base}/token", data={"grant_type": "refresh_token"}).json()["error"] == "invalid_request"
    # a released sandbox's tokens name nothing
    api.delete(f"/sandbox/google_cloud/{b}")
    deadline = time.time() + 30
    while time.time() < deadline and httpx.get(f"{base}/oauth2/v2/userinfo", headers=hb).status_code == 200:
        time.sleep(0.2)
    assert httpx.get(f"{base}/oauth2/v2/userinfo", headers=hb).status_code == 401
    assert httpx.get(f"{base}/tokeninfo", params={"access_token": pb}).json() == {"error": "invalid_token",
                                                                                 "error_description": "Invalid Value"}
    r = httpx.post(f"{base}/token", data={"grant_type": "refresh_token", "refresh_token": pb})
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    api.delete(f"/sandbox/google_cloud/{a}")


def test_hostile_requests_to_the_new_endpoints(env):  # noqa: F811
    """Nothing a client sends to the token, identity, Resource Manager,
    clock or Logging paths crashes the facade; each gets a 4xx."""
    api, base = env
    a, pa = sandbox(api)
    jwt_grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    bodies = [b"grant_type=\xff\xfe%ff%00&assertion=%", b"&&&===&", b"grant_type=" + b"x" * 100000,
              ("grant_type=" + jwt_grant + "&assertion=" + "a" * 70000 + ".b.c").encode(),
              ("grant_type=" + jwt_grant + "&assertion=" + b64([1]) + "." + b64("s") + ".x").encode(),
              ("grant_type=" + jwt_grant + "&assertion=" + b64({"alg": "RS256"}) + "."
               + b64({"iss": "a@" + "x" * 50 + ".iam.gserviceaccount.com", "aud": 1, "iat": 1, "exp": 2}) + ".x.y").encode(),
              b"grant_type=refresh_token&refresh_token=mcpbox-zz", b"grant_type=refresh_token&refresh_token=" + b"%41" * 5000]
    for body in bodies:
        for path in ("/token", f"/p/{pa}/token"):
            r = httpx.post(base + path, content=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
            assert r.status_code == 400 and r.json()["error"], (path, body[:60], r.text)
    # a %00 does not cut a form value short: "refresh_token%00x" is not refresh_token
    r = httpx.post(base + "/token", content=b"grant_type=refresh_token%00x&refresh_token=mcpbox-zz",
                   headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 400 and r.json()["error"] == "unsupported_grant_type", r.text
    for path in ("/oauth2/v3/tokeninfo?access_token=%ff%fe", "/tokeninfo?access_token=" + "m" * 5000,
                 "/oauth2/v2/userinfo", "/v1/projects/%ff", "/v3/projects:search?query=" + "id:" * 3000,
                 "/v3/projects:search?query=%22%22%3A", "/v1/projects?filter=:::"):
        r = httpx.get(base + path, headers={"Authorization": b"Bearer mcpbox-\xe9"})
        assert 400 <= r.status_code < 500, (path, r.status_code, r.text)
    h = {"Authorization": f"Bearer {pa}"}
    for q in ("id:", "=x", "id:*", "state:ACTIVE AND AND", "name:'" + pa + "'"):
        assert httpx.get(f"{base}/v3/projects:search", params={"query": q}, headers=h).status_code in (200, 400)
    for body in (b"[]", b"1", b'"x"', b"{", b'{"resourceNames": "projects/x"}', b'{"resourceNames": [1]}',
                 b'{"entries": 5}', b'{"entries": [1, 2]}', b'{"entries": [{"logName": 1}]}',
                 b'{"entries": [{"logName": "projects/' + pa.encode() + b'/logs/a", "timestamp": "x"}]}',
                 b'{"entries": [{"logName": "projects/' + pa.encode() + b'/logs/a", "jsonPayload": [1]}]}',
                 b'{"resourceNames": ["projects/' + pa.encode() + b'"], "pageSize": "-5", "pageToken": "-9"}',
                 b'{"resourceNames": ["projects/' + pa.encode() + b'"], "orderBy": "severity"}'):
        for path in ("/v2/entries:list", "/v2/entries:write"):
            r = httpx.post(base + path, content=body)
            assert r.status_code in (200, 400, 403), (path, body, r.text)
    for path in (f"/v2/projects/{pa}/logs/" + "a/" * 200, f"/v2/projects/{pa}/locations/-/buckets/x/y",
                 "/v2/projects/" + "9" * 40 + "/logs", "/v2/projects//logs", f"/mcpbox/v1/projects/{pa}/clock/x"):
        assert 400 <= httpx.delete(base + path).status_code < 600
    r = httpx.put(f"{base}/mcpbox/v1/projects/{pa}/clock", json={"now": "9999-12-31T23:59:59Z", "frozen": True})
    assert r.status_code == 200 and r.json()["now"] == "9999-12-31T23:59:59.000Z"
    assert httpx.put(f"{base}/mcpbox/v1/projects/{pa}/clock", json={"now": "10000-01-01T00:00:00Z"}).status_code == 400
    # still serving
    assert httpx.get(f"{base}/mcpbox/v1/projects/{pa}/clock").status_code == 200
    api.delete(f"/sandbox/google_cloud/{a}")
