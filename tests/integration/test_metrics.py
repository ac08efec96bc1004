"""GET /metrics, the call log and JSON logs (docs/OBSERVABILITY.md).

/metrics is parsed twice: by prometheus_client's text-format parser (Debian's
python3-prometheus-client, the reference implementation of the format) and by
a strict line checker here (every sample in a family announced by HELP and
TYPE, no series twice, histogram buckets cumulative and ending in +Inf equal
to _count). Counters must move as calls are made, and hostile tool names
must not create label values."""
import json
import os
import re
import subprocess

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import API_KEY, MCPBOX_BIN, Daemon
from gwharness import Session, text_of

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')


def strict_parse(text):
    """{(name, frozenset(labels)): value} after checking the format strictly."""
    assert text.endswith("\n")
    text.encode("utf-8")  # valid UTF-8 (httpx decoded it)
    families, series = {}, {}
    current = None
    for line in text.split("\n")[:-1]:
        if line.startswith("# HELP "):
            name = line.split(" ")[2]
            assert name not in families, "family %s twice" % name
            families[name] = None
            current = name
            continue
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ")
            assert name == current and families[name] is None, line
            assert typ in ("counter", "gauge", "histogram"), line
            families[name] = typ
            continue
        assert not line.startswith("#"), line
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line
        name, _, labels, value = m.groups()
        base = re.sub(r"_(bucket|sum|count)$", "", name) if families.get(current) == \
            "histogram" else name
        assert base == current, "sample %s outside its family %s" % (name, current)
        pairs = []
        rest = labels or ""
        while rest:
            lm = LABEL.match(rest)
            assert lm, "bad labels in %r" % line
            pairs.append((lm.group(1), lm.group(2)))
            rest = rest[lm.end():]
        key = (name, frozenset(pairs))
        assert key not in series, "series twice: %s" % line
        series[key] = float(value)
    # histograms: cumulative buckets, +Inf == _count
    for (name, labels), v in series.items():
        if name.endswith("_count") and families.get(name[:-6]) == "histogram":
            base = name[:-6]
            buckets = sorted(((float(dict(lab)["le"]), val) for (n, lab), val in series.items()
                              if n == base + "_bucket" and
                              lab - {("le", dict(lab)["le"])} == labels))
            assert buckets and buckets[-1][0] == float("inf"), (name, labels)
            assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), buckets
            assert buckets[-1][1] == v
    return series


def scrape(api):
    r = api.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    fams = {f.name: f for f in text_string_to_metric_families(r.text)}
    return strict_parse(r.text), fams


def value(series, name, **labels):
    want = frozenset(labels.items())
    return sum(v for (n, lab), v in series.items() if n == name and want <= lab)


def acquire(api, servers, **body):
    r = api.post("/local-sandbox", json={"server_names": servers, **body})
    assert r.status_code == 201, r.text
    return r.json()


def url_of(sb, server):
    return next(s["mcp_server_url"] for s in sb["servers"] if s["server_name"] == server)


HOSTILE = ["", "x" * 5000, 'a"b', "a\\b", "new\nline", "\u00e9\u4e2d\U0001F600", "{le=\"1\"}",
           "\x00nul", "list_allowed_directories ", "LIST_ALLOWED_DIRECTORIES"] + \
          ["random_%d" % i for i in range(40)]


def test_metrics_parse_and_counters_move_with_bounded_labels(daemon, api):
    before, fams = scrape(api)
    assert fams["mcpbox_mcp_call_duration_seconds"].type == "histogram"
    assert fams["mcpbox_sandboxes"].type == "gauge"
    acq0 = value(before, "mcpbox_operation_duration_seconds_count", op="acquire")

    sb = acquire(api, ["filesystem", "git"])
    sid = sb["local_sandbox_id"]
    s = Session(url_of(sb, "filesystem"))
    tools = [t["name"] for t in s.result("tools/list")["result"]["tools"]]
    for _ in range(3):
        assert "/data" in text_of(s.call("list_allowed_directories"))
    s.call("read_text_file", {"path": "/data/missing.txt"})  # a tool error
    for name in HOSTILE:
        s.call(name, {"x": 1})
    s.result("tools/call", {"arguments": {}})  # no name at all
    s.close()

    after, fams = scrape(api)
    assert value(after, "mcpbox_operation_duration_seconds_count", op="acquire") == acq0 + 1
    lab = dict(server="filesystem", method="tools/call")
    assert value(after, "mcpbox_mcp_call_duration_seconds_count",
                 tool="list_allowed_directories", **lab) == 3
    assert value(after, "mcpbox_mcp_calls_total", tool="read_text_file", outcome="tool_error",
                 **lab) == 1
    other = value(after, "mcpbox_mcp_call_duration_seconds_count", tool="other", **lab)
    assert other == len(HOSTILE) + 1
    assert value(after, "mcpbox_mcp_call_errors_total", tool="other", **lab) == other
    # tools/list went through too, with an empty tool label
    assert value(after, "mcpbox_mcp_call_duration_seconds_count", server="filesystem",
                 method="tools/list", tool="") >= 1
    # bounded: tool label values are listed tools, "other" or empty
    seen = {dict(l).get("tool") for (n, l) in after if n.startswith("mcpbox_mcp_")}
    assert seen <= set(tools) | {"other", ""}, seen - set(tools)
    assert value(after, "mcpbox_sandboxes", status="occupied", profile="none") >= 1
    # this owner's sandbox: cgroup figures
    assert value(after, "mcpbox_sandbox_memory_bytes", sandbox=sid) > 0
    assert value(after, "mcpbox_sandbox_pids", sandbox=sid) >= 2
    assert value(after, "mcpbox_sandbox_workspace_limit_bytes", sandbox=sid) > 0
    assert value(after, "mcpbox_sandbox_cpu_seconds_total", sandbox=sid) > 0

    # upload and dump bytes
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("a.txt")
        info.size = 5
        tf.addfile(info, io.BytesIO(b"hello"))
    blob = buf.getvalue()
    up0 = value(after, "mcpbox_upload_bytes_total")
    url = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
    assert httpx.put(url, content=blob).status_code == 200
    assert api.post(f"/local-sandbox/{sid}/initialize").status_code == 200
    assert api.get(f"/local-sandbox/{sid}/dump").status_code == 200
    assert api.delete(f"/local-sandbox/{sid}").status_code == 200
    last, _ = scrape(api)
    assert value(last, "mcpbox_upload_bytes_total") == up0 + len(blob)
    assert value(last, "mcpbox_dump_bytes_total") > 0
    for op in ("initialize", "dump", "release"):
        assert value(last, "mcpbox_operation_duration_seconds_count", op=op) >= 1, op
    assert value(last, "mcpbox_sandbox_memory_bytes", sandbox=sid) == 0  # gone with it

    # the text log format is unchanged by default
    lines = [l for l in daemon.log().splitlines() if l[:4].isdigit()]
    assert lines and all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (debug|info |warn |"
                                  r"error) ", l) for l in lines), lines[:5]
    assert not any(l.startswith("{") for l in daemon.log().splitlines())


def test_server_restarts_are_counted(api):
    import signal
    import time
    from test_daemon_sandboxes import _cmd, sandbox_pids
    before, _ = scrape(api)
    sb = acquire(api, ["filesystem"])
    pids = [p for p in sandbox_pids(sb["local_sandbox_id"]) if "mcp filesystem" in _cmd(p)]
    assert len(pids) == 1
    os.kill(pids[0], signal.SIGKILL)
    deadline = time.time() + 20
    while time.time() < deadline:
        now, _ = scrape(api)
        if value(now, "mcpbox_server_restarts_total", server="filesystem") > \
                value(before, "mcpbox_server_restarts_total", server="filesystem"):
            break
        time.sleep(0.3)
    assert value(now, "mcpbox_server_restarts_total", server="filesystem") == \
        value(before, "mcpbox_server_restarts_total", server="filesystem") + 1
    # a reset restarts servers on purpose: not counted
    assert api.post(f"/local-sandbox/{sb['local_sandbox_id']}/reset").status_code == 200
    after, _ = scrape(api)
    assert value(after, "mcpbox_server_restarts_total", server="filesystem") == \
        value(now, "mcpbox_server_restarts_total", server="filesystem")
    assert value(after, "mcpbox_operation_duration_seconds_count", op="reset") >= 1


def test_other_owners_never_see_a_sandbox_id(daemon, api):
    with daemon.client(key=None) as anon:
        assert anon.get("/metrics").status_code == 401
    with daemon.client(key="wrong") as bad:
        assert bad.get("/metrics").status_code in (401, 403)
    out = subprocess.run([MCPBOX_BIN, "keys", "create", "--owner", "eve", *daemon.store_args],
                         capture_output=True, text=True, check=True)
    sid = acquire(api, ["git"])["local_sandbox_id"]
    with daemon.client(out.stdout.strip()) as eve:
        r = eve.get("/metrics")
        assert r.status_code == 200 and sid not in r.text
        assert eve.get(f"/local-sandbox/{sid}/calls").status_code == 404
        assert eve.get(f"/local-sandbox/{sid}/stats").status_code == 404
    assert sid in api.get("/metrics").text
    st = api.get(f"/local-sandbox/{sid}/stats").json()
    assert st["memory_bytes"] > 0 and st["pids"] >= 1 and st["workspace_limit_bytes"] > 0


def test_call_log_records_calls_bounded_and_dumps_on_request(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var"), ["--call-log", "5"]).start()
    try:
        with d.client() as api:
            sb = acquire(api, ["filesystem"])
            sid = sb["local_sandbox_id"]
            assert api.get(f"/local-sandbox/{sid}/calls").json()["calls"] == []
            s = Session(url_of(sb, "filesystem"))
            s.call("write_file", {"path": "/data/x.txt", "content": "abc"})
            s.call("no_such_tool\u00e9\U0001F600")
            log = api.get(f"/local-sandbox/{sid}/calls").json()
            calls = log["calls"]
            assert [c["method"] for c in calls][-2:] == ["tools/call", "tools/call"]
            w = calls[-2]
            assert w["tool"] == "write_file" and w["outcome"] == "ok" and w["error"] is None
            assert w["arguments_bytes"] == len('{"path": "/data/x.txt", "content": "abc"}')
            assert w["result_bytes"] > 0 and w["latency_ms"] > 0 and w["server"] == "filesystem"
            bad = calls[-1]
            assert bad["tool"] == "no_such_tool\u00e9\U0001F600"
            assert bad["outcome"] in ("error", "tool_error")
            s.call("\u00e9" * 100)  # 200 bytes: cut on a character boundary
            assert api.get(f"/local-sandbox/{sid}/calls").json()["calls"][-1]["tool"] == \
                "\u00e9" * 65
            nxt = log["next"]
            for i in range(7):
                s.call("list_allowed_directories")
            log = api.get(f"/local-sandbox/{sid}/calls").json()
            assert len(log["calls"]) == 5 and log["dropped"] > 0  # the ring keeps 5
            newer = api.get(f"/local-sandbox/{sid}/calls", params={"after": nxt}).json()
            assert all(c["seq"] > nxt for c in newer["calls"])
            assert len(api.get(f"/local-sandbox/{sid}/calls", params={"limit": 2}).json()
                       ["calls"]) == 2
            assert api.get(f"/local-sandbox/{sid}/calls", params={"limit": "x"}).status_code \
                == 422
            s.close()
            # the dump carries no call log unless asked
            assert "calls_url" not in api.get(f"/local-sandbox/{sid}/dump").json()
            r = api.get(f"/local-sandbox/{sid}/dump", params={"include_calls": "true"}).json()
            lines = httpx.get(r["calls_url"]).text.splitlines()
            assert len(lines) == 5 and all(json.loads(x)["server"] == "filesystem"
                                           for x in lines)
            assert httpx.get(r["calls_url"] + "x").status_code == 403
            api.delete(f"/local-sandbox/{sid}")
            assert api.get(f"/local-sandbox/{sid}/calls").status_code == 404
    finally:
        d.stop()


def test_call_log_off_and_metrics_off(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var"), ["--call-log", "0", "--metrics", "off"]).start()
    try:
        with d.client() as api:
            sb = acquire(api, ["filesystem"])
            s = Session(url_of(sb, "filesystem"))
            s.call("list_allowed_directories")
            s.close()
            sid = sb["local_sandbox_id"]
            log = api.get(f"/local-sandbox/{sid}/calls").json()
            assert log["calls"] == [] and log["enabled"] is False
            series, _ = scrape(api)
            assert not any(n.startswith("mcpbox_mcp_call") for n, _ in series)
            assert value(series, "mcpbox_sandboxes", status="occupied") == 1
    finally:
        d.stop()


def test_pool_figures_match_healthz(tmp_root):
    import time
    d = Daemon(os.path.join(tmp_root, "var"), ["--pool", "none=1"]).start()
    try:
        with d.client() as api:
            deadline = time.time() + 120
            while api.get("/healthz").json()["pool"]["none"]["idle"] < 1:
                assert time.time() < deadline, api.get("/healthz").json()
                time.sleep(0.3)
            series, _ = scrape(api)
            assert value(series, "mcpbox_pool_target", profile="none") == 1
            assert value(series, "mcpbox_pool_idle", profile="none") == 1
            for _ in range(2):
                acquire(api, ["filesystem"])
            pool = api.get("/healthz").json()["pool"]["none"]
            series, _ = scrape(api)
            assert value(series, "mcpbox_pool_claims_total", profile="none") == pool["claimed"]
            assert value(series, "mcpbox_pool_misses_total", profile="none") == pool["misses"]
            assert pool["claimed"] >= 1 and pool["claimed"] + pool["misses"] == 2, pool
            assert value(series, "mcpbox_sandboxes", status="occupied", profile="none") == 2
    finally:
        d.stop()


def test_json_logs_tie_rest_gateway_and_sandbox_by_request_id(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var"), ["--log-format", "json"],
               env={"MCPBOX_LOG": "debug"}).start()
    try:
        with d.client() as api:
            r = api.post("/local-sandbox", json={"server_names": ["filesystem"]},
                         headers={"X-Request-Id": "req-acquire-1"})
            assert r.status_code == 201 and r.headers["x-request-id"] == "req-acquire-1"
            sb = r.json()
            sid = sb["local_sandbox_id"]
            s = Session(url_of(sb, "filesystem"))
            s.call("list_allowed_directories", headers={"X-Request-Id": "req-call-7"})
            s.close()
            calls = api.get(f"/local-sandbox/{sid}/calls").json()["calls"]
            assert calls[-1]["request_id"] == "req-call-7"
            # a hostile request id is replaced, not echoed
            r = api.get("/local-sandbox", headers={"X-Request-Id": "bad id\u00e9".encode()})
            assert re.fullmatch(r"[0-9a-f]{16}", r.headers["x-request-id"])
            api.delete(f"/local-sandbox/{sid}", headers={"X-Request-Id": "req-release-2"})
    finally:
        d.stop()
    records = []
    for line in open(d.log_path, "rb").read().decode("utf-8").splitlines():
        if not line.startswith("{"):
            continue  # sanitizer or child-process output
        rec = json.loads(line)
        assert set(rec) <= {"ts", "level", "msg", "request_id", "sandbox_id"}
        records.append(rec)
    assert records
    acq = [r for r in records if r.get("request_id") == "req-acquire-1"]
    assert any(r["msg"].startswith("acquired " + sid) and r.get("sandbox_id") == sid
               for r in acq), acq
    assert any(r.get("request_id") == "req-release-2" and r.get("sandbox_id") == sid and
               "released" in r["msg"] for r in records)
    gw = [r for r in records if r["msg"].startswith("gateway:") and r.get("sandbox_id") == sid]
    assert gw, "gateway records carry the sandbox id"
