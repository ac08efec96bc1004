"""Forwarded request headers (docs/GATEWAY.md#forwarded-headers): the gateway
copies the headers a server is declared to read into every request it forwards,
under params._meta["mcpbox/headers"], drops whatever a client put under that
key itself, and refuses values that cannot travel (too long, not UTF-8, control
characters, given twice) with 400. The server here is the mock's echo tool with
show_meta, which answers the _meta it received."""
import json
import types
import urllib.parse

import pytest

import gwharness as h
from test_hostile_http import raw_request

KEY = "mcpbox/headers"


@pytest.fixture(scope="module")
def bridge():
    b = h.Bridge(h.mock_cmd(), "--forward-header", "x-email-config",
                 "--forward-header", "X-Auth-Data")
    yield b
    b.stop()


def seen(session, headers=None, meta=None, raw=None):
    """The _meta the server read for one echo call."""
    if raw is None:
        params = {"name": "echo", "arguments": {"show_meta": True}}
        if meta is not None:
            params["_meta"] = meta
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
        r = session.post(body, headers=headers)
    else:
        r = session.post(None, raw=raw, headers=headers)
    assert r.status_code == 200, r.text
    msg = [m for m in h.messages(r) if "result" in m or "error" in m][0]
    return json.loads(h.text_of(msg))


def raw_post(bridge, session, header_lines, body):
    """A POST written byte for byte (httpx refuses what these tests send)."""
    u = urllib.parse.urlsplit(bridge.url)
    data = json.dumps(body).encode()
    head = (b"POST " + u.path.encode() + b" HTTP/1.1\r\nHost: " + u.netloc.encode() +
            b"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
            b"\r\nMcp-Session-Id: " + session.sid.encode() +
            b"\r\nContent-Length: " + str(len(data)).encode() + b"\r\nConnection: close\r\n")
    for line in header_lines:
        head += line + b"\r\n"
    status, _, rest = raw_request(types.SimpleNamespace(url=bridge.base), head + b"\r\n", data)
    return status, rest


CALL = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"show_meta": True}}}


def test_headers_reach_the_server(bridge):
    s = h.Session(bridge.url)
    # none given: the key is there, empty
    assert seen(s) == {KEY: {}}
    # given (names case-insensitive, lowercase in _meta), the value exactly as sent
    tricky = 'eyJ"},"x":{"y":"\\u0000 \t end'
    got = seen(s, headers={"X-Email-Config": tricky, "x-auth-data": "abc="})
    assert got == {KEY: {"x-email-config": tricky, "x-auth-data": "abc="}}
    # a header not on the list does not travel
    assert seen(s, headers={"x-other": "1"}) == {KEY: {}}
    # UTF-8 in a value (as raw bytes on the wire)
    got = seen(s, headers={"x-email-config": "caf\u00e9 \u2713".encode()})
    assert got == {KEY: {"x-email-config": "caf\u00e9 \u2713"}}
    # the limit: 8192 bytes pass, 8193 do not
    got = seen(s, headers={"x-email-config": "a" * 8192})
    assert got[KEY]["x-email-config"] == "a" * 8192
    r = s.post(CALL, headers={"x-email-config": "a" * 8193})
    assert r.status_code == 400
    assert "x-email-config" in r.json()["error"]["message"]
    assert "8192" in r.json()["error"]["message"]
    s.close()


def test_client_cannot_supply_the_key(bridge):
    s = h.Session(bridge.url)
    spoof = {"x-email-config": "spoofed"}
    real = {"x-email-config": "real"}
    # as a plain member of _meta, with the client's other _meta kept
    got = seen(s, headers=real, meta={KEY: spoof, "progressToken": "t1", "other": [1, 0.5]})
    assert got[KEY] == real and got["other"] == [1, 0.5]
    assert isinstance(got["progressToken"], int)  # the gateway's own token, as always
    # without a header at all
    assert seen(s, meta={KEY: spoof}) == {KEY: {}}
    # spelled with escapes, twice, or in a second _meta member
    params = '"name":"echo","arguments":{"show_meta":true}'
    for meta_text in ('"_meta":{"mcpbox\\/headers":{"x-email-config":"spoofed"}}',
                      '"_meta":{"mcpbox/headers":{"x-email-config":"spoofed"},'
                      '"mcpbox/headers":{"x-email-config":"spoofed"}}',
                      '"_meta":{},"_meta":{"mcpbox/headers":{"x-email-config":"spoofed"}}',
                      '"\\u005fmeta":{"mcpbox/headers":{"x-email-config":"spoofed"}}',
                      '"_meta":"not an object"'):
        raw = '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{%s,%s}}' % (
            params, meta_text)
        assert seen(s, headers=real, raw=raw)[KEY] == real, meta_text
        assert seen(s, raw=raw)[KEY] == {}, meta_text
    # escaped top-level keys and no params at all are handled too
    raw = ('{"jsonrpc":"2.0","id":12,"method":"tools/call","p\\u0061rams":{%s,'
           '"_meta":{"mcpbox/headers":{"x-email-config":"spoofed"}}}}' % params)
    assert seen(s, headers=real, raw=raw)[KEY] == real
    r = s.post({"jsonrpc": "2.0", "id": 13, "method": "tools/list"}, headers=real)
    assert r.status_code == 200 and "result" in h.messages(r)[0]
    s.close()


def test_values_that_cannot_travel(bridge):
    s = h.Session(bridge.url)
    cases = [
        [b"x-email-config: \xff\xfe bad"],              # not UTF-8
        [b"x-email-config: a\x01b"],                    # a control character
        [b"x-email-config: a", b"X-Email-Config: b"],   # given twice
        [b"x-auth-data: " + b"b" * 9000],               # over the limit
    ]
    for lines in cases:
        status, body = raw_post(bridge, s, lines, CALL)
        assert status == 400, (lines, status, body[:200])
        if status == 400 and body.startswith(b"{"):
            err = json.loads(body)["error"]
            assert err["code"] == -32600 and ("x-email-config" in err["message"]
                                              or "x-auth-data" in err["message"]), err
    # a header trying to smuggle another line is not a header at all
    status, body = raw_post(bridge, s, [b"x-email-config: a\rx-auth-data: b"], CALL)
    assert status == 400
    # and the session keeps working
    assert seen(s, headers={"x-email-config": "ok"}) == {KEY: {"x-email-config": "ok"}}
    s.close()
