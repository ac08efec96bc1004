"""Issue 12, crashes 1-2 and protocol item 16: bytes that are not UTF-8 (or
UTF-8 cut in the middle of a character) in paths, query strings and headers,
with and without a key, get a JSON error whose body is valid UTF-8, and the
daemon keeps serving. Raw sockets, so that no client library cleans the bytes
up first."""
import json
import socket

import pytest

from conftest import API_KEY


def raw_request(daemon, head, body=b""):
    host, port = daemon.url.split("//", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(head + body)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                hdr, _, rest = data.partition(b"\r\n\r\n")
                length = None
                for line in hdr.split(b"\r\n")[1:]:
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v.strip())
                if length is not None and len(rest) >= length:
                    break
    hdr, _, rest = data.partition(b"\r\n\r\n")
    status = int(hdr.split(b" ", 2)[1]) if hdr else 0
    return status, hdr, rest


def get(daemon, target, key=None, extra=b"", host=None):
    head = b"GET " + target + b" HTTP/1.1\r\nHost: " + (host or b"127.0.0.1") + b"\r\n"
    if key:
        head += b"Authorization: Bearer " + key.encode() + b"\r\n"
    head += extra + b"Connection: close\r\n\r\n"
    return raw_request(daemon, head)


def assert_alive(daemon):
    assert daemon.proc.poll() is None, "daemon died:\n" + daemon.log()[-3000:]
    with daemon.client() as c:
        assert c.get("/healthz").status_code == 200


def assert_json_answer(status, body):
    assert 200 <= status < 600, status
    json.loads(body.decode("utf-8"))


def assert_json_error(status, body):
    assert 400 <= status < 600, status
    text = body.decode("utf-8")  # raises if the daemon sent invalid UTF-8
    json.loads(text)


UE40 = "ü" * 40  # 80 bytes: an id cut at 63 bytes splits a character
EURO400 = "€" * 400

NO_KEY_TARGETS = [
    b"/filesystem/mcp/?local_sandbox_id=%C0%AE",
    b"/filesystem/mcp/?local_sandbox_id=%FF%FE",
    b"/filesystem/mcp/?local_sandbox_id=" + UE40.encode(),
    b"/filesystem/mcp/?local_sandbox_id=" + "".join("%%%02X" % b for b in UE40.encode()).encode(),
    b"/filesystem/mcp/?local_sandbox_id=\xff\xc0\xae",
    b"/\xff\xfe/mcp/?local_sandbox_id=x",
    b"/local-sandbox/%FF",
    b"/local-sandbox/\xed\xa0\x80",
    b"/%C0%AE%C0%AE/",
]

KEY_TARGETS = [
    b"/local-sandbox/%FF",
    b"/local-sandbox/\xff",
    b"/sandbox/local_dev/%FF/dump",
    b"/sandbox/local_dev/\xc0\xae/dump",
    b"/local-sandbox/" + EURO400.encode(),
    b"/local-sandbox/" + "".join("%%%02X" % b for b in EURO400.encode()).encode(),
    b"/local-sandbox/" + UE40.encode() + b"/dump",
    b"/filesystem/mcp/?local_sandbox_id=%C0%AE",
    b"/filesystem/mcp/?local_sandbox_id=" + EURO400.encode(),
]


@pytest.mark.parametrize("target", NO_KEY_TARGETS)
def test_invalid_utf8_without_key(daemon, target):
    status, _, body = get(daemon, target)
    assert_json_error(status, body)
    assert_alive(daemon)


@pytest.mark.parametrize("target", KEY_TARGETS)
def test_invalid_utf8_with_key(daemon, target):
    status, _, body = get(daemon, target, key=API_KEY)
    assert_json_error(status, body)
    assert_alive(daemon)


@pytest.mark.parametrize("header", [
    b"Origin: http://\xff\xfe.example\r\n",
    b"Origin: http://" + UE40.encode()[:63] + b"\r\n",
    b"Mcp-Session-Id: \xc0\xae\r\n",
    b"MCP-Protocol-Version: \xff\r\n",
    b"Accept: \xff\r\n",
])
def test_invalid_utf8_mcp_headers(daemon, header):
    for key in (None, API_KEY):
        status, _, body = get(daemon, b"/filesystem/mcp/?local_sandbox_id=x", key=key,
                              extra=header)
        assert_json_error(status, body)
    # POST too: the JSON-RPC error path
    msg = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    head = (b"POST /filesystem/mcp/?local_sandbox_id=%C0%AE HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + header + b"Content-Type: application/json\r\nAccept: application/json, "
            b"text/event-stream\r\nContent-Length: " + str(len(msg)).encode()
            + b"\r\nConnection: close\r\n\r\n")
    status, _, body = raw_request(daemon, head, msg)
    assert_json_error(status, body)
    assert_alive(daemon)


@pytest.mark.parametrize("host", [b"\xff\xfe", b"127.0.0.1\xc0\xae", UE40.encode()[:63]])
def test_invalid_utf8_host(daemon, host):
    for target in (b"/filesystem/mcp/?local_sandbox_id=x", b"/local-sandbox"):
        for key in (None, API_KEY):
            status, _, body = get(daemon, target, key=key, host=host)
            (assert_json_answer if key and target == b"/local-sandbox" else assert_json_error)(
                status, body)
    assert_alive(daemon)


def test_real_sandbox_ids_still_work(daemon, api):
    """The repair does not touch valid text: a real id and a UTF-8 one round-trip."""
    sb = api.post("/local-sandbox", json={"server_names": ["filesystem"]}).json()
    sid = sb["local_sandbox_id"]
    assert api.get(f"/local-sandbox/{sid}").status_code == 200
    r = api.get("/local-sandbox/" + "é" * 10)
    assert r.status_code == 404
    assert "é" * 10 in r.json()["detail"]
    api.delete(f"/local-sandbox/{sid}")


@pytest.mark.parametrize("headers", [
    b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: chunked\r\nContent-Length: 2\r\n",
    b"Content-Length: 2\r\nContent-Length: 2\r\n",
    b"Content-Length: 2\r\nContent-Length: 3\r\n",
    b"Host: other\r\n",
])
def test_request_smuggling_shapes_rejected(daemon, headers):
    """RFC 9112: Content-Length with Transfer-Encoding, a repeated
    Content-Length and a second Host are 400, and the connection is closed."""
    head = (b"POST /local-sandbox HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + API_KEY.encode() + b"\r\nContent-Type: application/json\r\n" + headers + b"\r\n")
    body = b"{}" if b"chunked" not in headers else b"2\r\n{}\r\n0\r\n\r\n"
    status, hdr, _ = raw_request(daemon, head, body)
    assert status == 400, hdr
    assert b"connection: close" in hdr.lower()
    assert_alive(daemon)
