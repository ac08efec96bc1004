"""Operations that check a sandbox, then wait for its lock, re-read it under
the lock: one that loses the race against a release answers 404 and leaves
nothing behind (no blob directory of the released sandbox comes back).

The race is driven many times over: each round acquires a sandbox, then
fires a dump (or an initialize, or an upload PUT) and the release at once."""
import os
import threading

import httpx
import pytest

ROUNDS = int(os.environ.get("MCPBOX_RACE_ROUNDS", "25"))


def acquire(api):
    r = api.post("/local-sandbox", json={"server_names": []})
    assert r.status_code == 201, r.text
    return r.json()["local_sandbox_id"]


def race(*calls):
    barrier = threading.Barrier(len(calls))
    out = [None] * len(calls)

    def run(i, fn):
        barrier.wait()
        out[i] = fn()

    ts = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(calls)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


@pytest.mark.parametrize("op", ["dump", "initialize", "upload"])
def test_op_racing_release_leaves_nothing(daemon, op):
    blobs = os.path.join(daemon.data_dir, "blobs")
    seen = set()
    with daemon.client() as a, daemon.client() as b:
        for _ in range(ROUNDS):
            sid = acquire(a)
            if op == "dump":
                fn = lambda: b.get(f"/local-sandbox/{sid}/dump").status_code
            elif op == "initialize":
                fn = lambda: b.post(f"/local-sandbox/{sid}/initialize").status_code
            else:
                url = b.post(f"/local-sandbox/{sid}/upload-url").json()["upload_url"]
                fn = lambda: httpx.put(url, content=b"\x1f\x8b" + b"x" * 4096,
                                       headers={"Content-Type": "application/gzip"}).status_code
            rel, got = race(lambda: a.delete(f"/local-sandbox/{sid}").status_code, fn)
            assert rel == 200
            # Before the release: done (dump 200; initialize 409 with nothing
            # uploaded). After it: 404. Never a 5xx.
            assert got in {"dump": (200, 404), "initialize": (409, 404),
                           "upload": (200, 404)}[op], got
            seen.add(got)
            assert not os.path.exists(os.path.join(blobs, sid)), (op, got, os.listdir(
                os.path.join(blobs, sid)))
    # The daemon is still whole.
    with daemon.client() as c:
        assert c.get("/local-sandbox/" + acquire(c)).status_code == 200
