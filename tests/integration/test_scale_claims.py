"""Exclusive claims across real nodes (docs/SCALE.md, Claims): two `mcpbox
serve --node N` sharing one PostgreSQL, each with its own mail system
(Dovecot) and Canvas service, race through acquires for the same mail domain
and for Toolathlon's fixed Canvas token set. In every round exactly one
acquire wins (201) and the other gets 409 with the documented detail, the
database holds one claim naming the winner, and the loser's node provisioned
nothing. A released claim is taken by the other node in the next round.

Each racing acquire is pinned to its node with the header a forwarding node
sets (X-Mcpbox-Forwarded, signed with the nodes' shared secret read from the
database as a node would: the receiver serves it itself), so the two claims
always come from two processes; one more set of rounds goes through normal
placement (both acquires sent to node 0, which places them)."""
import hashlib
import hmac
import os
import shutil
import subprocess
import tempfile
import threading
import time

import httpx
import pytest

from conftest import API_KEY, sweep_sandboxes
from mailutil import DOVECOT, MailDaemon, free_port

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CANVAS_USERS = os.path.join(os.path.dirname(__file__), "..", "data", "canvas", "users_small.json")
AUTH = {"Authorization": "Bearer " + API_KEY}
# Rounds of the mail-domain race; a round is two concurrent acquires (each
# makes a sandbox before it claims: the loser's is torn down) and a release,
# 2-4 s of the ASan build on this shared 2-core machine. 20 by default to keep
# the file near a minute and a half; MCPBOX_CLAIM_ROUNDS=50 for a longer run.
MAIL_ROUNDS = int(os.environ.get("MCPBOX_CLAIM_ROUNDS", "20"))
CANVAS_ROUNDS = max(1, MAIL_ROUNDS // 5)
PLACED_ROUNDS = max(1, MAIL_ROUNDS // 10)

pytestmark = pytest.mark.skipif(not os.path.exists(DOVECOT),
                                reason="Dovecot is not installed (scripts/install-deps)")


def mail_conflict(domain):
    return ("mail domain %s is in use by another live sandbox; release it first or choose "
            "another test_account_email domain" % domain)


@pytest.fixture(scope="module")
def nodes():
    out = subprocess.run([os.path.join(ROOT, "tests", "pg", "pgctl"), "start"],
                         check=True, capture_output=True, text=True).stdout.split()
    pg_dir, db = out
    root = tempfile.mkdtemp(prefix="mcpbox-claims-")
    os.chmod(root, 0o711)
    started = []
    try:
        for i in range(2):
            port = free_port()
            sub = os.path.join(root, "n%d" % i)
            os.mkdir(sub)
            d = MailDaemon(sub, db=db, extra=[
                "--node", str(i), "--node-url", "http://127.0.0.1:%d" % port,
                "--capacity", "100", "--canvas-listen", "127.0.0.1:0",
                "--canvas-users", CANVAS_USERS])
            d.listen = "127.0.0.1:%d" % port
            d.start()
            started.append(d)
        yield started, db
    finally:
        errors = []
        for d in started:
            try:
                d.stop()
            except AssertionError as e:
                errors.append(str(e))
        sweep_sandboxes(root)
        subprocess.run([os.path.join(ROOT, "tests", "pg", "pgctl"), "stop", pg_dir])
        shutil.rmtree(root, ignore_errors=True)
        assert not errors, "\n".join(errors)


def psql(db, query):
    out = subprocess.run(["psql", "-qAt", "-F", "\t", db, "-c", query],
                         check=True, capture_output=True, text=True).stdout
    return [tuple(line.split("\t")) for line in out.splitlines() if line]


def race(requests):
    """Sends the (url, path, body, headers) requests at once; the responses in order."""
    out = [None] * len(requests)
    gate = threading.Barrier(len(requests))

    def one(i, url, path, body, headers):
        try:
            with httpx.Client(base_url=url, headers=AUTH, timeout=120) as c:
                c.get("/healthz")  # the connection is open before the gate
                gate.wait(timeout=60)
                out[i] = c.post(path, json=body, headers=headers)
        except Exception as e:  # noqa: BLE001 (reported below)
            out[i] = e

    ts = [threading.Thread(target=one, args=(i, *r)) for i, r in enumerate(requests)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    errors = [r for r in out if isinstance(r, Exception)]
    assert not errors, errors
    return out


def pin(db, node, path, method="POST"):
    """The forwarding mark another node would put on a request to `node`
    (src/cluster/trust.c): its ordinal, the time, and the HMAC-SHA256 keyed
    with the nodes' shared secret."""
    secret = psql(db, "SELECT secret FROM cluster_secret")[0][0]
    sender, now = 1 - node, int(time.time())
    mac = hmac.new(secret.encode(), ("%d %d %s %s" % (sender, now, method, path)).encode(),
                   hashlib.sha256).hexdigest()
    return {"X-Mcpbox-Forwarded": "%d %d %s" % (sender, now, mac)}


def one_winner(rs, conflict_detail):
    codes = sorted(r.status_code for r in rs)
    assert codes == [201, 409], [(r.status_code, r.text) for r in rs]
    win = next(r for r in rs if r.status_code == 201).json()
    lose = next(r for r in rs if r.status_code == 409).json()
    assert lose == {"detail": conflict_detail(win)}, lose
    return win


def retake(ds, db, owner, body, domain):
    """The node that lost takes the released domain; the other is refused it."""
    other = ds[1 - owner]
    r = httpx.post(other.url + "/local-sandbox", json=body,
                   headers={**AUTH, **pin(db, 1 - owner, "/local-sandbox")}, timeout=120)
    assert r.status_code == 201, r.text
    sid = r.json()["local_sandbox_id"]
    assert int(sid[:2], 16) == 1 - owner
    assert psql(db, "SELECT sandbox_id FROM claims WHERE value = '%s'" % domain) == [(sid,)]
    r = httpx.post(ds[owner].url + "/local-sandbox", json=body,
                   headers={**AUTH, **pin(db, owner, "/local-sandbox")},
                   timeout=120)
    assert r.status_code == 409 and r.json()["detail"] == mail_conflict(domain), r.text
    r = httpx.delete(other.url + "/local-sandbox/" + sid, headers=AUTH, timeout=60)
    assert r.status_code == 200, r.text


def test_mail_domain_race(nodes):
    ds, db = nodes
    wins = [0, 0]
    for k in range(MAIL_ROUNDS):
        domain = "mcp%d.com" % (100 + k)
        body = {"server_names": ["poste_email_toolathlon"], "benchmark": "Toolathlon",
                "test_account_email": "amoss1@" + domain}
        # the node listed first changes every round
        order = [k % 2, 1 - k % 2]
        rs = race([(ds[i].url, "/local-sandbox", body, pin(db, i, "/local-sandbox"))
                   for i in order])
        win = one_winner(rs, lambda w: mail_conflict(domain))
        sid = win["local_sandbox_id"]
        owner = int(sid[:2], 16)
        assert owner in (0, 1)
        wins[owner] += 1
        assert psql(db, "SELECT sandbox_id FROM claims WHERE kind = 'mail-domain' AND "
                        "value = '%s'" % domain) == [(sid,)]
        # only the winner's node has the domain
        for i, d in enumerate(ds):
            have = os.path.isdir(os.path.join(d.mail_root(), "domains", domain))
            assert have == (i == owner), (k, i, owner)
        r = httpx.delete(ds[owner].url + "/local-sandbox/" + sid, headers=AUTH, timeout=60)
        assert r.status_code == 200, r.text
        if k % 5 == 4:
            retake(ds, db, owner, body, domain)
    print("mail-domain rounds won by node 0 / 1:", wins)
    assert psql(db, "SELECT count(*) FROM claims") == [("0",)]


def test_mail_domain_race_through_placement(nodes):
    """Both acquires sent to node 0, which places each on the better node."""
    ds, db = nodes
    for k in range(PLACED_ROUNDS):
        domain = "mcp%d.com" % (300 + k)
        body = {"server_names": ["poste_email_toolathlon"], "benchmark": "Toolathlon",
                "test_account_email": "bhart2@" + domain}
        rs = race([(ds[0].url, "/local-sandbox", body, {})] * 2)
        win = one_winner(rs, lambda w: mail_conflict(domain))
        sid = win["local_sandbox_id"]
        assert psql(db, "SELECT sandbox_id FROM claims WHERE value = '%s'" % domain) == [(sid,)]
        r = httpx.delete(ds[0].url + "/local-sandbox/" + sid, headers=AUTH, timeout=60)
        assert r.status_code == 200, r.text
    assert psql(db, "SELECT count(*) FROM claims") == [("0",)]


def test_canvas_token_set_race(nodes):
    ds, db = nodes
    body = {"benchmark": "Toolathlon"}
    wins = [0, 0]

    def conflict(w):
        return ("the Canvas token set of Toolathlon is held by live sandbox %s (one sandbox at "
                "a time may use a fixed token set)" % w["sandbox_id"])

    for k in range(CANVAS_ROUNDS):
        order = [k % 2, 1 - k % 2]
        rs = race([(ds[i].url, "/sandbox/canvas", body, pin(db, i, "/sandbox/canvas"))
                   for i in order])
        win = one_winner(rs, conflict)
        sid = win["sandbox_id"]
        owner = int(sid[:2], 16)
        wins[owner] += 1
        rows = psql(db, "SELECT sandbox_id FROM claims WHERE kind <> 'mail-domain'")
        assert rows == [(sid,)], rows
        r = httpx.delete(ds[owner].url + "/sandbox/canvas/" + sid, headers=AUTH, timeout=60)
        assert r.status_code == 200, r.text
    print("Canvas rounds won by node 0 / 1:", wins)
    assert psql(db, "SELECT count(*) FROM claims") == [("0",)]
