"""The GoogleSQL corpora through the two ways a task reaches BigQuery:
bigquery_run_query of the google_cloud MCP server and jobs.query of the REST
facade (as google-cloud-bigquery's query_and_wait sends it). Each corpus file
is loaded into a fresh sandbox by Klavis's initialize and its cases run in
order; both paths must give every case's rows (or the error naming what
BigQuery refuses).

Data: tests/data/gcloud/corpus.json (constructs) and
tests/data/gcloud/tasks/<task>.json (every SQL statement of the eight
Toolathlon google-cloud tasks' preprocess and evaluation scripts, and what
their task texts ask an agent to write; provenance and build.py there). The
unit test test_gcloud runs the same files against src/gcloud directly."""
import datetime
import glob
import json
import os
import re
import socket
from decimal import Decimal

import httpx
import pytest

from conftest import Daemon
from gwharness import Session, text_of

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "gcloud")
FILES = [os.path.join(DATA, "corpus.json")] + sorted(glob.glob(os.path.join(DATA, "tasks", "*.json")))


def load(path):
    """A corpus file with tables[].data (lists in field order) made rows."""
    c = json.load(open(path))
    for t in c["setup"].get("tables", []):
        if "data" in t:
            names = [f["name"] for f in t["fields"]]
            t["rows"] = [dict(zip(names, r)) for r in t.pop("data")]
    return c


def table_rows(corpus, name):
    for t in corpus["setup"]["tables"]:
        if f"{t['dataset_id']}.{t['id']}" == name:
            return [[r.get(f["name"]) for f in t["fields"]] for r in t["rows"]]
    raise KeyError(name)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    port = free_port()
    d = Daemon(str(tmp_path_factory.mktemp("gccorpus") / "var"),
               env={"MCPBOX_GCLOUD_LISTEN": f"127.0.0.1:{port}"}).start()
    with d.client() as api:
        yield api, f"http://127.0.0.1:{port}"
    d.stop()


def sandbox(api, setup):
    r = api.post("/sandbox/google_cloud", json={"benchmark": "Toolathlon"})
    assert r.status_code == 201, r.text
    sid = r.json()["sandbox_id"]
    r = api.post(f"/sandbox/google_cloud/{sid}/initialize", json=setup)
    assert r.status_code == 200, r.text
    info = api.get(f"/sandbox/google_cloud/{sid}").json()
    return sid, info["auth_data"]["project_id"], info["server_url"]


def expected_rows(corpus, case):
    """(rows wanted, how to compare: 'ordered' / 'unordered' / 'within')."""
    if "rows_within" in case:
        return table_rows(corpus, case["rows_within"]), "within"
    return case["rows"], "unordered" if case.get("unordered") else "ordered"


def matches(got, want, how, count, equal):
    """got rows against want by the case's rule; equal(g, w) compares rows."""
    if how == "ordered":
        return len(got) == len(want) and all(equal(g, w) for g, w in zip(got, want))
    left = list(want)
    for g in got:
        hit = next((k for k, w in enumerate(left) if equal(g, w)), None)
        if hit is None:
            return False
        left.pop(hit)
    return len(got) == count


# ------------------------------------------------------------ the MCP tool

def py_rows(text):
    """bigquery_run_query's printed rows, evaluated as the Python reprs they are."""
    ns = {"datetime": datetime, "Decimal": Decimal, "__builtins__": {}}
    return [eval(m, ns) for m in re.findall(r"^Row \d+: (\{.*\})$", text, re.M)]  # noqa: S307


def py_same(got, want):
    if want is None or got is None:
        return got is want
    if isinstance(got, bool) or isinstance(want, bool):
        return got == want
    if isinstance(got, datetime.datetime):
        return got.replace(tzinfo=None) == datetime.datetime.fromisoformat(want)
    if isinstance(got, (datetime.date, datetime.time)):
        return got.isoformat() == want
    if isinstance(want, (int, float)):
        return abs(float(got) - want) <= 1e-9 * max(1.0, abs(want))
    return got == want


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.basename(p)[:-5])
def test_corpus_through_the_tool(env, path):
    """Every case through bigquery_run_query: the row count, the first 5 rows
    as the Python values the text shows, or the error naming the construct.
    Cases with query parameters are skipped (the tool takes none upstream)."""
    api, _ = env
    corpus = load(path)
    sid, project, url = sandbox(api, corpus["setup"])
    s = Session(url)
    for i, case in enumerate(corpus["cases"]):
        if case.get("params"):
            continue
        msg = s.call("bigquery_run_query", {"query": case["sql"].replace("test-proj", project)})
        assert "result" in msg, (i, msg)
        text = text_of(msg)
        if "error" in case:
            assert text.startswith("Error executing BigQuery query: "), (i, text)
            assert case["error"].replace("test-proj", project) in text, (i, text)
            continue
        assert text.startswith("Query executed successfully."), (i, text)
        want, how = expected_rows(corpus, case)
        count = case.get("row_count", len(want))
        assert f"Total rows: {count}, Returned: {count}" in text, (i, text[:300])
        got = [list(r.values()) for r in py_rows(text)]
        assert len(got) == min(5, count), (i, text[:300])

        def equal(g, w):
            return len(g) == len(w) and all(py_same(a, b) for a, b in zip(g, w))
        if how == "ordered":
            assert all(equal(g, w) for g, w in zip(got, want)), (i, got, want[:5])
        else:  # the first 5 shown: each one of the wanted rows
            assert matches(got, want, "within", len(got), equal), (i, got)
    s.close()
    api.delete(f"/sandbox/google_cloud/{sid}")


# ---------------------------------------------------------- the REST facade

def rest_decode(v, field, elem=False):
    """A REST cell ({"v": ...} already taken) as a plain value by its schema
    field: REPEATED as [{"v": x}], RECORD as {"f": [{"v": x}]}."""
    if v is None:
        return None
    if field.get("mode") == "REPEATED" and not elem:
        return [rest_decode(x["v"], field, True) for x in v]
    t = field.get("type")
    if t == "RECORD":
        return {f["name"]: rest_decode(c["v"], f) for f, c in zip(field["fields"], v["f"])}
    if t == "BOOLEAN":
        return v == "true"
    if t == "INTEGER":
        return int(v)
    if t == "FLOAT":
        return float(v)
    return v


def rest_equal(got, want, field):
    ftype = field["type"]
    if want is None or got is None:
        return got is want
    if field.get("mode") == "REPEATED" or ftype == "RECORD":
        return rest_decode(got, field) == want
    if isinstance(want, bool) or ftype == "BOOLEAN":
        return got == ("true" if want else "false")
    if isinstance(want, (int, float)):
        return abs(float(got) - want) <= 1e-9 * max(1.0, abs(want))
    if ftype == "TIMESTAMP":
        t = datetime.datetime.fromisoformat(want).replace(tzinfo=datetime.timezone.utc)
        return abs(float(got) - t.timestamp()) < 1e-6
    if ftype == "DATETIME":
        return got.replace("T", " ") == want
    return got == want


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.basename(p)[:-5])
def test_corpus_through_the_facade(env, path):
    """Every case, in order, through jobs.query (query parameters as
    QueryJobConfig sends them): all rows, or the error message."""
    api, base = env
    corpus = load(path)
    sid, project, _ = sandbox(api, corpus["setup"])
    h = httpx.Client(base_url=f"{base}/bigquery/v2/projects/{project}", timeout=60)
    for i, case in enumerate(corpus["cases"]):
        body = {"query": case["sql"].replace("test-proj", project), "useLegacySql": False}
        if case.get("params"):
            body["parameterMode"] = "NAMED"
            body["queryParameters"] = case["params"]
        r = h.post("/queries", json=body)
        if "error" in case:
            assert r.status_code >= 400, (i, r.text)
            assert case["error"].replace("test-proj", project) in r.json()["error"]["message"], (i, r.text)
            continue
        assert r.status_code == 200, (i, r.text[:500])
        out = r.json()
        fields = out["schema"]["fields"]
        got = [[c["v"] for c in row["f"]] for row in out.get("rows", [])]
        assert int(out.get("totalRows", len(got))) == len(got), (i, out.get("totalRows"))
        want, how = expected_rows(corpus, case)

        def equal(g, w):
            return len(g) == len(w) and all(rest_equal(a, b, f) for a, b, f in zip(g, w, fields))
        assert matches(got, want, how, case.get("row_count", len(want)), equal), (i, got[:5], want[:5])
    h.close()
    api.delete(f"/sandbox/google_cloud/{sid}")
