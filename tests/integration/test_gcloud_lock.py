"""google_cloud's initialize and dump hooks (src/api/svc_gcloud.c) run under
the sandbox's lock (mb_core_with_lock; their *_locked functions assert it in
the ASan build), as reset does (mb_core_reset): initialize, dump, reset and
release raced from several threads never answer 500, never leave a
half-written project, and a sandbox released meanwhile is never given its
project file again."""
import json
import os
import threading
import time

from test_server_google_cloud import SETUP, acquire


def test_initialize_dump_release_race(api, daemon):
    sid = acquire(api)
    assert api.post(f"/sandbox/google_cloud/{sid}/initialize", json=SETUP).status_code == 200
    seen, bad = [], []
    stop = time.monotonic() + 3.0
    released = threading.Event()

    def worker(kind):
        with daemon.client() as c:
            while time.monotonic() < stop:
                if kind == "init":
                    r = c.post(f"/sandbox/google_cloud/{sid}/initialize", json=SETUP)
                    if r.status_code == 200:
                        assert "5 datasets, 7 tables" in r.json()["message"]
                else:
                    r = c.get(f"/sandbox/google_cloud/{sid}/dump")
                    if r.status_code == 200:
                        # whole projects only: never one between two initializes
                        data = r.json()["data"]
                        if len(data["datasets"]) != 5 or len(data["tables"]) != 7:
                            bad.append(json.dumps(data)[:200])
                seen.append(r.status_code)
                if r.status_code == 404 and not released.is_set():
                    bad.append(f"404 before the release: {r.text}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in ("init", "init", "dump", "dump")]
    for t in threads:
        t.start()
    time.sleep(1.5)
    released.set()
    assert api.delete(f"/sandbox/google_cloud/{sid}").status_code in (200, 204)
    for t in threads:
        t.join()
    assert not bad, bad[:3]
    assert set(seen) <= {200, 404}, sorted(set(seen))
    assert seen.count(200) > 4 and 404 in seen
    # nothing made the released sandbox's project again
    state = os.path.join(daemon.data_dir, "workspaces", sid)
    assert not os.path.exists(os.path.join(state, "state", "gcloud.db")) and not os.path.isdir(state), \
        os.listdir(state) if os.path.isdir(state) else None
    assert api.post(f"/sandbox/google_cloud/{sid}/initialize", json=SETUP).status_code == 404
    assert api.get(f"/sandbox/google_cloud/{sid}/dump").status_code == 404


def test_initialize_reset_race(api, daemon):
    """Initializes with two different payloads and resets, raced: a reset
    replays whole projects only (never one between two initializes), nothing
    answers 500, and once the race is over a reset goes back to exactly the
    last initialize."""
    small = {"datasets": SETUP["datasets"], "tables": SETUP["tables"][:-1]}
    shapes = {(5, 7), (5, 6)}
    sid = acquire(api)
    assert api.post(f"/sandbox/google_cloud/{sid}/initialize", json=SETUP).status_code == 200
    seen, bad = [], []
    stop = time.monotonic() + 3.0

    def shape(c):
        r = c.get(f"/sandbox/google_cloud/{sid}/dump")
        seen.append(r.status_code)
        if r.status_code != 200:
            return None
        data = r.json()["data"]
        return len(data["datasets"]), len(data["tables"])

    def worker(kind):
        with daemon.client() as c:
            while time.monotonic() < stop:
                if kind == "reset":
                    r = c.post(f"/sandbox/google_cloud/{sid}/reset")
                    seen.append(r.status_code)
                    got = shape(c)
                    if got is not None and got not in shapes:
                        bad.append(f"after a reset: {got}")
                else:
                    r = c.post(f"/sandbox/google_cloud/{sid}/initialize",
                               json=SETUP if kind == "big" else small)
                    seen.append(r.status_code)

    threads = [threading.Thread(target=worker, args=(k,)) for k in ("big", "small", "reset", "reset")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad, bad[:3]
    assert set(seen) == {200}, sorted(set(seen))
    with daemon.client() as c:
        for payload, want in ((small, (5, 6)), (SETUP, (5, 7)), (small, (5, 6))):
            assert c.post(f"/sandbox/google_cloud/{sid}/initialize", json=payload).status_code == 200
            assert c.post(f"/sandbox/google_cloud/{sid}/reset").status_code == 200
            assert shape(c) == want
    assert api.delete(f"/sandbox/google_cloud/{sid}").status_code in (200, 204)
