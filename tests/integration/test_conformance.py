"""`@modelcontextprotocol/conformance` 0.1.16, `server` suite, against
server-everything behind `mcpbox bridge` (its stdio transport, one process
for every scenario's sessions).

The reference is the same server's own Streamable HTTP transport, run in the
same test: every scenario that passes there must pass through the gateway,
and dns-rebinding-protection must pass too (the reference fails it). The
rest are expected failures listed, with reasons, in
tests/conformance-baseline.txt; the suite itself checks that list (an
unexpected failure or a stale entry fails the run)."""
import os
import re
import socket
import subprocess
import time

import pytest

import gwharness as h

CONFORMANCE = os.path.join(h.NODE_DIR, "node_modules", "@modelcontextprotocol", "conformance",
                           "dist", "index.js")
BASELINE = os.path.join(h.REPO, "tests", "conformance-baseline.txt")



def run_suite(url, workdir, expected=None):
    """Runs the server suite; {scenario: passed?}, exit code, output."""
    cmd = [h.NODE22, CONFORMANCE, "server", "--url", url, "-o", os.path.join(workdir, "out")]
    if expected:
        cmd += ["--expected-failures", expected]
    r = subprocess.run(cmd, capture_output=True, timeout=600, cwd=workdir)
    out = r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")
    summary = out.split("=== SUMMARY ===", 1)[-1]
    results = {m.group(2): m.group(1) == "✓"
               for m in re.finditer(r"^([✓✗]) ([\w-]+): \d+ passed", summary, re.M)}
    assert results, out
    return results, r.returncode, out


def baseline_yaml(path):
    names = []
    with open(BASELINE) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, reason = line.partition(":")
                assert reason.strip(), "baseline entry without a reason: " + line
                names.append(name.strip())
    with open(path, "w") as f:
        f.write("server:\n" + "".join("  - %s\n" % n for n in names))
    return names


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def check_against_reference(reference, got, code, out, names, where):
    """What passes against server-everything's own HTTP passes `where` too,
    plus dns-rebinding-protection; the failures are exactly the baseline (the
    suite exits non-zero on an unexpected failure or a stale entry)."""
    passing_ref = {s for s, ok in reference.items() if ok}
    assert passing_ref, reference
    lost = sorted(s for s in passing_ref if not got.get(s))
    assert not lost, "pass against server-everything's own HTTP but not %s: %s\n%s" % (
        where, lost, out)
    assert got.get("dns-rebinding-protection"), out
    assert code == 0, out
    assert sorted(s for s, ok in got.items() if not ok) == sorted(names)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """server-everything's own Streamable HTTP transport."""
    port = free_port()
    proc = subprocess.Popen([h.NODE22, h.EVERYTHING, "streamableHttp"],
                            env=dict(os.environ, PORT=str(port)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        results, _, out = run_suite("http://localhost:%d/mcp" % port,
                                    str(tmp_path_factory.mktemp("conf-ref")))
    finally:
        proc.terminate()
        proc.wait(10)
    return results


def test_conformance_through_the_gateway(reference, tmp_path):
    expected = str(tmp_path / "baseline.yml")
    names = baseline_yaml(expected)
    b = h.Bridge(h.everything_cmd())
    try:
        got, code, out = run_suite(b.url, str(tmp_path), expected)
    finally:
        b.stop()
    check_against_reference(reference, got, code, out, names, "through the gateway")
    # and the baseline only lists what fails against the reference too
    assert not [n for n in names if reference.get(n)], reference


def test_conformance_in_a_sandbox(reference, tmp_path):
    """The same suite through the daemon: server-everything runs as a
    third-party server inside a real sandbox, named by a profile (here as the
    `playwright` server of a test copy of the `none` profile, with the npm
    tree and Node bound read-only under /opt)."""
    import json
    import shutil
    from conftest import API_KEY, Daemon, sweep_sandboxes
    profiles = tmp_path / "profiles"
    shutil.copytree(os.path.join(h.REPO, "profiles"), profiles)
    with open(profiles / "none.json") as f:
        none = json.load(f)
    none.setdefault("sandbox", {})["binds"] = {
        "/opt/mcpbox-tests/node_modules": os.path.join(h.NODE_DIR, "node_modules"),
        "/opt/mcpbox-tests/node": os.path.realpath(h.NODE22),
    }
    none["servers"]["playwright"] = {
        "upstream": "@modelcontextprotocol/server-everything (test stand-in)",
        "argv": ["/opt/mcpbox-tests/node",
                 "/opt/mcpbox-tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
                 "stdio"],
    }
    with open(profiles / "none.json", "w") as f:
        json.dump(none, f)
    d = Daemon(str(tmp_path / "var"), ["--profiles-dir", str(profiles)]).start()
    try:
        with d.client() as api:
            r = api.post("/local-sandbox", json={"server_names": ["playwright"]})
            assert r.status_code == 201, r.text
            item = r.json()["servers"][0]
            assert item["metadata"]["ready"], item
            expected = str(tmp_path / "baseline.yml")
            names = baseline_yaml(expected)
            got, code, out = run_suite(item["mcp_server_url"], str(tmp_path), expected)
            api.delete("/local-sandbox/" + r.json()["local_sandbox_id"])
    finally:
        d.stop()
        sweep_sandboxes(str(tmp_path))
    check_against_reference(reference, got, code, out, names, "in a sandbox")
