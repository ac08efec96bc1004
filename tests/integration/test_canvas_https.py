"""Canvas (src/canvas): the graders' service over HTTPS too
(`--canvas-https ADDR:PORT --canvas-tls FILE`, a PEM with a certificate and
its key; Toolathlon puts an HTTPS proxy on 20001 before the unmodified Node
server): the same answers as over HTTP, Link URLs with https, a file's
download, a client that checks the certificate against it, and a PEM
without a key refused with a warning while the daemon serves on."""
import json
import os
import re
import ssl
import subprocess
import tempfile

import httpx
import pytest

from conftest import Daemon, sweep_sandboxes

HERE = os.path.dirname(__file__)
USERS = os.path.join(HERE, "..", "data", "canvas", "users_small.json")
ADMIN = "mcpcanvasadmintoken1"


def make_pem(path):
    key, crt = path + ".key", path + ".crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", key, "-out", crt], check=True, capture_output=True)
    with open(path, "w") as f:
        f.write(open(crt).read() + open(key).read())
    return crt


@pytest.fixture(scope="module")
def tls_canvas():
    root = tempfile.TemporaryDirectory(prefix="mcpbox-test-")
    pem = os.path.join(root.name, "canvas.pem")
    crt = make_pem(pem)
    d = Daemon(os.path.join(root.name, "var"), extra_args=[
        "--canvas-listen", "127.0.0.1:0", "--canvas-users", USERS,
        "--canvas-https", "127.0.0.1:0", "--canvas-tls", pem]).start()
    lines = [d.proc.stdout.readline().decode() for _ in range(2)]
    d.canvas = re.search(r"canvas on (http://\S+)", "".join(lines)).group(1)
    d.https = re.search(r"canvas on (https://\S+)", "".join(lines)).group(1)
    d.crt = crt
    yield d
    d.stop()
    sweep_sandboxes(root.name)
    root.cleanup()


def test_https_serves_the_same_canvas(tls_canvas):
    d = tls_canvas
    api = d.client()
    sid = api.post("/sandbox/canvas", json={"benchmark": "Toolathlon"}).json()["sandbox_id"]
    auth = {"Authorization": "Bearer " + ADMIN}
    ctx = ssl.create_default_context(cafile=d.crt)
    https = httpx.Client(base_url=d.https + "/api/v1", headers=auth, verify=ctx, timeout=30)
    http = httpx.Client(base_url=d.canvas + "/api/v1", headers=auth, timeout=30)
    # the same profile, but for the URLs in it: each names the origin it was asked on
    ps, p = https.get("/users/self/profile").json(), http.get("/users/self/profile").json()
    assert ps["avatar_url"].startswith(d.https + "/") and p["avatar_url"].startswith(d.canvas + "/")
    assert json.dumps(ps).replace(d.https, "ORIGIN") == json.dumps(p).replace(d.canvas, "ORIGIN")
    c = https.post("/accounts/1/courses", json={"course": {"name": "Secure", "course_code": "S1"}})
    assert c.status_code == 200, c.text
    assert http.get(f"/courses/{c.json()['id']}").json()["name"] == "Secure"
    r = https.get("/accounts/1/users", params={"per_page": 2})
    assert 'rel="next"' in r.headers["link"] and "<https://" in r.headers["link"]
    assert http.get("/accounts/1/users", params={"per_page": 2}).headers["link"].startswith("<http://")
    # a wrong token over TLS: Canvas's 401
    assert httpx.get(d.https + "/api/v1/courses", headers={"Authorization": "Bearer x"},
                     verify=ctx, timeout=30).status_code == 401
    # plain HTTP to the TLS port does not get an answer as if it were HTTP
    with pytest.raises(httpx.HTTPError):
        httpx.get(d.https.replace("https://", "http://") + "/api/v1/courses", timeout=5).json()
    api.delete(f"/sandbox/canvas/{sid}")
    api.close()


def test_a_pem_without_key_is_a_warning():
    root = tempfile.TemporaryDirectory(prefix="mcpbox-test-")   # short: socket paths
    crt = make_pem(os.path.join(root.name, "only.pem"))
    d = Daemon(os.path.join(root.name, "var"), extra_args=[
        "--canvas-listen", "off", "--canvas-https", "127.0.0.1:0", "--canvas-tls", crt]).start()
    try:
        r = d.client().post("/sandbox/canvas", json={})
        assert r.status_code == 201, r.text   # the service runs on, with no port
        d.client().delete(f"/sandbox/canvas/{r.json()['sandbox_id']}")
        assert "no HTTPS port" in d.log() and "private key" in d.log()
    finally:
        d.stop()
        sweep_sandboxes(root.name)
        root.cleanup()
