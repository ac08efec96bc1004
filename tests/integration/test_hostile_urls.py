"""%00 and other hostile escapes in request targets. libmicrohttpd decodes the
path and the query arguments into C strings, where a %00 would cut them
short ("/local-sandbox/ID%00anything" read as "/local-sandbox/ID", and acted
on). The HTTP layer decodes %00 as 0xFF (src/http/unescape.c), so no route or
id matches and the request is refused with a JSON error; a query argument
that is not UTF-8 is refused with 400 before any handler reads it. Raw
sockets, so no client library normalises the target first; the REST API, a
gateway MCP URL, signed blob URLs and the Canvas service are driven, and each
keeps serving (the sandbox a refused request named is untouched)."""
import json
import os
import re
import tempfile

import pytest

from conftest import API_KEY, Daemon, sweep_sandboxes
from test_hostile_http import raw_request

HERE = os.path.dirname(__file__)
USERS = os.path.join(HERE, "..", "data", "canvas", "users_small.json")
STUDENT_TOKEN = "canvas_token_test_ronald1"
MCP_ACCEPT = b"Accept: application/json, text/event-stream\r\n"
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}}).encode()


@pytest.fixture(scope="module")
def d():
    root = tempfile.TemporaryDirectory(prefix="mcpbox-test-")
    dm = Daemon(os.path.join(root.name, "var"),
                extra_args=["--canvas-listen", "127.0.0.1:0", "--canvas-users", USERS]).start()
    m = re.search(r"canvas on (http://\S+)", dm.proc.stdout.readline().decode())
    assert m
    dm.canvas = m.group(1)
    yield dm
    dm.stop()
    sweep_sandboxes(root.name)
    root.cleanup()


@pytest.fixture(scope="module")
def sid(d):
    with d.client() as api:
        r = api.post("/local-sandbox", json={"server_names": ["filesystem"]})
        assert r.status_code == 201, r.text
        body = r.json()
        d.mcp_url = body["servers"][0]["mcp_server_url"]
        yield body["local_sandbox_id"]
        api.delete("/local-sandbox/" + body["local_sandbox_id"])


class At:
    def __init__(self, url):
        self.url = url


def send(base, method, target, token=API_KEY, body=b"", extra=b""):
    head = method + b" " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if token:
        head += b"Authorization: Bearer " + token.encode() + b"\r\n"
    if body:
        head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    head += extra + b"Connection: close\r\n\r\n"
    return raw_request(At(base), head, body)


def json_error(status, body, statuses):
    assert status in statuses, (status, body[:300])
    doc = json.loads(body.decode("utf-8"))  # valid UTF-8 and JSON, or this raises
    assert doc
    return doc


def assert_live(d, sid):
    assert d.proc.poll() is None, "daemon died:\n" + d.log()[-3000:]
    with d.client() as api:
        r = api.get("/local-sandbox/" + sid)
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "occupied"


# %00 right after the id, at the end, in the middle of a route word; and the
# escapes around it that must not be mistaken for it.
def rest_targets(s):
    return [
        (b"GET", b"/local-sandbox/" + s + b"%00"),
        (b"GET", b"/local-sandbox/" + s + b"%00anything"),
        (b"DELETE", b"/local-sandbox/" + s + b"%00"),
        (b"DELETE", b"/local-sandbox/" + s + b"%00/x"),
        (b"POST", b"/local-sandbox/" + s + b"%00/upload-url"),
        (b"POST", b"/local-sandbox/" + s + b"%00/initialize"),
        (b"GET", b"/local-sandbox/" + s + b"%00/dump"),
        (b"GET", b"/local-sandbox/" + s + b"/dump%00"),
        (b"POST", b"/local-sandbox/" + s + b"/upload-url%00"),
        (b"GET", b"/local-sandbox%00/" + s),
        (b"DELETE", b"/sandbox/filesystem/" + s + b"%00"),
        (b"GET", b"/local-sandbox/" + s[:-1] + b"%00" + s[-1:]),
        (b"GET", b"/local-sandbox/" + s + b"%C3%28"),      # invalid UTF-8
        (b"GET", b"/local-sandbox/" + s + b"%ED%A0%80"),   # a UTF-16 surrogate
        (b"GET", b"/local-sandbox/" + s + b"%FF%FE"),
        (b"GET", b"/local-sandbox/" + s + b"%F4%90%80%80"),  # past U+10FFFF
        (b"GET", b"/local-sandbox/" + s + b"%E2%82"),      # cut short
        (b"DELETE", b"/local-sandbox/" + s + b"%C0%80"),   # overlong NUL
        (b"GET", b"/local-sandbox/" + s + b"%0"),          # a bad escape stays text
        (b"GET", b"/local-sandbox/" + s + b"%zz"),
    ]


def test_rest_api_refuses_nul_and_bad_escapes(d, sid):
    s = sid.encode()
    for method, target in rest_targets(s):
        status, _, body = send(d.url, method, target)
        doc = json_error(status, body, (400, 404, 405))
        if status == 404 and "Local sandbox" in doc.get("detail", ""):
            # the id it names is the whole segment, never the id cut short
            assert doc["detail"] != f"Local sandbox {sid} not found", target
        assert_live(d, sid)
    # %2500 is the text "%00", not a NUL: a longer id, not found
    status, _, body = send(d.url, b"GET", b"/local-sandbox/" + s + b"%2500")
    assert json_error(status, body, (404,)) == {"detail": f"Local sandbox {sid}%00 not found"}
    status, _, body = send(d.url, b"DELETE", b"/local-sandbox/" + s + b"%2500")
    json_error(status, body, (404,))
    assert_live(d, sid)


@pytest.mark.parametrize("query", [b"is_ttl=true%00x", b"is_ttl=%00", b"is_ttl=%FF",
                                   b"is_ttl=%C3%28", b"x%00=1", b"%FF=1", b"is_ttl=1&%ED%A0%80"])
def test_rest_query_arguments_refused(d, sid, query):
    status, _, body = send(d.url, b"DELETE", b"/local-sandbox/" + sid.encode() + b"?" + query)
    doc = json_error(status, body, (400,))
    assert "query argument" in doc["detail"]
    assert_live(d, sid)  # the DELETE did not run


def test_rest_query_arguments_that_are_text_pass(d, sid):
    # %2500 and a UTF-8 value are text: is_ttl=%2500 is a bad boolean (422), as before
    status, _, body = send(d.url, b"DELETE", b"/local-sandbox/" + sid.encode() + b"?is_ttl=%2500")
    doc = json_error(status, body, (422,))
    assert doc["detail"][0]["input"] == "%00"
    status, _, body = send(d.url, b"DELETE",
                           b"/local-sandbox/" + sid.encode() + b"?is_ttl=%C3%A9")
    assert json_error(status, body, (422,))["detail"][0]["input"] == "é"
    assert_live(d, sid)


def test_signed_blob_urls_refuse_nul(d, sid):
    with d.client() as api:
        up = api.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
    path = up.split("//", 1)[1].split("/", 1)[1]
    target = ("/" + path).encode()
    head, _, query = target.partition(b"?")
    for t in (head.replace(b"/upload.tar.gz", b"%00/upload.tar.gz") + b"?" + query,
              head + b"%00?" + query,
              head + b"?" + query + b"%00",
              head + b"?" + query.replace(b"signature=", b"signature=%00")):
        status, _, body = send(d.url, b"PUT", t, token=None, body=b"x" * 10)
        json_error(status, body, (400, 401, 403, 404, 405))
    with d.client() as api:
        r = api.get(f"/local-sandbox/{sid}")
        assert r.status_code == 200
    # and the real URL still takes an upload
    status, _, body = send(d.url, b"PUT", target, token=None, body=b"\x1f\x8b" + b"\0" * 20)
    assert status in (200, 400), body  # not a valid archive is fine; not refused as a URL
    assert_live(d, sid)


def test_gateway_mcp_url_refuses_nul(d, sid):
    s = sid.encode()
    for target, statuses in ((b"/filesystem/mcp/?local_sandbox_id=" + s + b"%00x", (400,)),
                             (b"/filesystem/mcp/?local_sandbox_id=" + s + b"%00", (400,)),
                             (b"/filesystem/mcp/?local_sandbox_id%00=" + s, (400,)),
                             (b"/filesystem/mcp/?local_sandbox_id=" + s + b"&x=%FF", (400,)),
                             (b"/filesystem%00/mcp/?local_sandbox_id=" + s, (401, 404)),
                             (b"/filesystem/mcp%00/?local_sandbox_id=" + s, (401, 404)),
                             (b"/filesystem/mcp/%00?local_sandbox_id=" + s, (401, 404))):
        for token in (None, API_KEY):
            status, _, body = send(d.url, b"POST", target, token=token, body=INIT,
                                   extra=MCP_ACCEPT)
            json_error(status, body, statuses)
    # the real URL still serves
    target = d.mcp_url.split("//", 1)[1].split("/", 1)[1]
    status, _, body = send(d.url, b"POST", b"/" + target.encode(), body=INIT, extra=MCP_ACCEPT)
    assert status == 200, body
    assert b"protocolVersion" in body
    assert_live(d, sid)


def test_canvas_api_refuses_nul(d):
    with d.client() as api:
        r = api.post("/sandbox/canvas", json={"benchmark": "Toolathlon",
                                              "test_account_email": "rkelly1@mcp.com"})
        assert r.status_code == 201, r.text
        csid = r.json()["sandbox_id"]
    try:
        status, _, body = send(d.canvas, b"GET", b"/api/v1/users/self", token=STUDENT_TOKEN)
        assert status == 200 and json.loads(body)["login_id"] == "rkelly1@mcp.com"
        for target, statuses in ((b"/api/v1/users/self%00x", (404,)),
                                 (b"/api/v1/users/self%00", (404,)),
                                 (b"/api/v1/courses%00", (404,)),
                                 (b"/api/v1%00/users/self", (404,)),
                                 (b"/api/v1/users/self%FF", (404,)),
                                 (b"/api/v1/users/self%C3%28", (404,)),
                                 (b"/api/v1/accounts/1/users?search_term=a%00b", (400,)),
                                 (b"/api/v1/users/self?include[]=%00", (400,)),
                                 (b"/api/v1/users/self?x=%ED%A0%80", (400,)),
                                 (b"/api/v1/users/self%2500", (404,))):
            status, _, body = send(d.canvas, b"GET", target, token=STUDENT_TOKEN)
            json_error(status, body, statuses)
        status, _, body = send(d.canvas, b"GET", b"/api/v1/users/self", token=STUDENT_TOKEN)
        assert status == 200
    finally:
        with d.client() as api:
            api.delete(f"/sandbox/canvas/{csid}")


def test_very_long_paths(d, sid):
    s = sid.encode()
    # under the header limit (32K): an ordinary 404 naming it
    for target in (b"/local-sandbox/" + s + b"%00" + b"a" * 20000,
                   b"/local-sandbox/" + b"%00" * 6000,
                   b"/local-sandbox/" + b"%C3%A9" * 4000):
        status, _, body = send(d.url, b"GET", target)
        json_error(status, body, (404,))
    status, _, body = send(d.url, b"GET", b"/filesystem/mcp/?local_sandbox_id=" + b"%00" * 8000,
                           token=None)
    json_error(status, body, (400,))
    status, _, body = send(d.canvas, b"GET", b"/api/v1/users/" + b"%00" * 8000,
                           token=STUDENT_TOKEN)
    assert status in (401, 404), body[:200]
    # past it: refused by libmicrohttpd itself, and nothing else happens
    for base in (d.url, d.canvas):
        status, _, _ = send(base, b"GET", b"/local-sandbox/" + b"%00" * 40000)
        assert status in (0, 414, 431), status
    assert_live(d, sid)
