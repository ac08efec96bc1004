"""--released-retention: the records of released sandboxes (the tombstone, its
servers, blobs and claims rows) are purged by the reaper once they are older
than the retention; live sandboxes are never touched. Until the purge a
released id answers as it did (GET 404, a repeated DELETE 200 for its owner);
after it, as an id never seen (DELETE 404 too)."""
import os
import subprocess
import time
import uuid

import pytest

from conftest import MCPBOX_BIN, Daemon


def rows(daemon, table, column, sid):
    return daemon.sql(f"SELECT count(*) FROM {table} WHERE {column}=?", (sid,))[0][0]


def wait_for(cond, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


def test_released_records_purged_live_kept(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var"), ["--released-retention", "2s"]).start()
    try:
        with d.client() as api:
            got = {}
            for name in ("gone", "kept"):
                r = api.post("/local-sandbox", json={"server_names": ["filesystem", "git"]})
                assert r.status_code == 201, r.text
                got[name] = r.json()["local_sandbox_id"]
            gone, kept = got["gone"], got["kept"]
            r = api.get(f"/local-sandbox/{gone}/dump")  # a blobs row
            assert r.status_code == 200, r.text
            assert rows(d, "blobs", "sandbox_id", gone) == 1
            assert api.delete(f"/local-sandbox/{gone}").status_code == 200
            # A tombstone until the purge: its rows are there, GET is a 404,
            # a repeated DELETE by its owner stays a 200.
            assert d.sql("SELECT status FROM sandboxes WHERE id=?", (gone,)) == [("released",)]
            assert rows(d, "servers", "sandbox_id", gone) == 2
            unknown = str(uuid.uuid4())
            r_gone, r_unknown = api.get(f"/local-sandbox/{gone}"), api.get(f"/local-sandbox/{unknown}")
            assert r_gone.status_code == r_unknown.status_code == 404
            assert r_gone.json() == {"detail": r_unknown.json()["detail"].replace(unknown, gone)}
            assert api.delete(f"/local-sandbox/{gone}").status_code == 200

            # Purged within retention (2 s) + the purge period (2 s here) + slack.
            wait_for(lambda: rows(d, "sandboxes", "id", gone) == 0, 15, "the purge")
            assert rows(d, "servers", "sandbox_id", gone) == 0
            assert rows(d, "blobs", "sandbox_id", gone) == 0
            assert rows(d, "claims", "sandbox_id", gone) == 0
            r = api.get(f"/local-sandbox/{gone}")
            assert r.status_code == 404
            assert r.json() == {"detail": r_unknown.json()["detail"].replace(unknown, gone)}
            # DELETE now answers as for an unknown id.
            r_gone = api.delete(f"/local-sandbox/{gone}")
            r_unknown = api.delete(f"/local-sandbox/{unknown}")
            assert r_gone.status_code == r_unknown.status_code == 404
            assert r_gone.json() == {"detail": r_unknown.json()["detail"].replace(unknown, gone)}
            assert "purged the records of 1 sandbox released more than 2 s ago" in d.log()

            # The live one, older than the retention by now, is untouched.
            r = api.get(f"/local-sandbox/{kept}")
            assert r.status_code == 200, r.text
            assert r.json()["status"] == "occupied"
            assert rows(d, "servers", "sandbox_id", kept) == 2
            # and its MCP server still answers
            url = r.json()["servers"][0]["mcp_server_url"]
            init = api.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                       "params": {"protocolVersion": "2025-03-26",
                                                  "capabilities": {},
                                                  "clientInfo": {"name": "t", "version": "1"}}},
                            headers={"Accept": "application/json, text/event-stream"})
            assert init.status_code == 200, init.text
            assert api.delete(f"/local-sandbox/{kept}").status_code == 200
    finally:
        d.stop()


def test_retention_zero_keeps_and_default_is_a_day(tmp_root):
    d = Daemon(os.path.join(tmp_root, "var"), ["--released-retention", "0"]).start()
    try:
        with d.client() as api:
            r = api.post("/local-sandbox", json={"server_names": ["filesystem"]})
            sid = r.json()["local_sandbox_id"]
            assert api.delete(f"/local-sandbox/{sid}").status_code == 200
        # Made to look two days old: 0 keeps it anyway.
        d.sql("UPDATE sandboxes SET updated_at=updated_at-172800 WHERE id=?", (sid,))
        time.sleep(2.5)
        assert rows(d, "sandboxes", "id", sid) == 1
        d.stop()
        # Restarted with the default (24 h): the purge at start takes it.
        d.extra_args.remove("--released-retention")
        d.extra_args.remove("0")
        d.start()
        wait_for(lambda: rows(d, "sandboxes", "id", sid) == 0, 10, "the purge at start")
        assert rows(d, "servers", "sandbox_id", sid) == 0
    finally:
        d.stop()
    help_text = subprocess.run([MCPBOX_BIN, "serve", "--help"], capture_output=True,
                               text=True).stdout
    assert "--released-retention DURATION" in help_text and "default 24h" in help_text


@pytest.mark.parametrize("value", ["-1", "1.5h", "5x", "", "h", "3651d", "99999999999999999999",
                                   " 5", "5 h", "24hh", "0x10"])
def test_retention_refuses_bad_values(tmp_root, value):
    for argv, env in ((["--released-retention", value], {}),
                      ([], {"MCPBOX_RELEASED_RETENTION": value})):
        if not value and env:
            continue  # an empty variable is unset
        p = subprocess.run([MCPBOX_BIN, "serve", "--data-dir", os.path.join(tmp_root, "v"),
                            "--listen", "127.0.0.1:0", "--no-mail", *argv],
                           capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, **env))
        assert p.returncode == 2, (value, p.stderr)
        assert "--released-retention wants a duration" in p.stderr
