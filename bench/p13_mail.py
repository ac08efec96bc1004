"""P13 mail (poste_email_toolathlon): the mail part of acquire and release for a domain
of 503 users (the size of Toolathlon's users_data.json; synthetic users here), read from
the daemon's own timing of attach and detach (file writes and sockets, no Dovecot
restart; Dovecot itself starts once, at the first acquire, not counted); then
get_emails and search_emails through the gateway on a folder of 1,000 messages against
Python's imaplib doing the same work (SELECT, SEARCH, FETCH RFC822 and FLAGS of a
page of 20) directly against the same Dovecot. Targets (issue 17): attach and release
p50 <= 20 ms.

Checks: every get_emails answer lists 20 messages of 1,000; every search answer finds
the 100 messages that hold the word; imaplib sees the same counts."""
import imaplib
import json
import os
import re
import statistics
import time

import benchlib as B


def users_file(path, n=503):
    users = [{"email": "user%03d@mcp.com" % i, "password": "pw_%03d" % i,
              "full_name": "User %d" % i} for i in range(n - 3)]
    users += [{"email": "mcpcanvasadmin%d@mcp.com" % i, "password": "mcpcanvasadminpass%d" % i,
               "full_name": "MCP Canvas Admin %d" % i} for i in (1, 2, 3)]
    json.dump({"domain": "mcp.com", "users": users}, open(path, "w"))


def imap_page(port, user, pw, criteria=None):
    m = imaplib.IMAP4("127.0.0.1", port)
    m.login(user, pw)
    m.select("INBOX")
    if criteria:
        ids = m.search("UTF-8", *criteria)[1][0].split()
    else:
        ids = m.search(None, "ALL")[1][0].split()
    for n in list(reversed(ids))[:20]:
        m.fetch(n, "(RFC822)")
        m.fetch(n, "(FLAGS)")
    m.logout()
    return len(ids)


def run(ctx):
    os.chmod(ctx.workdir, 0o711)  # the dovecot user reaches the Maildirs under it
    users = os.path.join(ctx.workdir, "mail-users.json")
    users_file(users)
    imap, smtp = B.free_port(), B.free_port()
    old = os.environ.get("MCPBOX_LOG")
    os.environ["MCPBOX_LOG"] = "info"
    d = B.Daemon(ctx.workdir, ["--mail-users", users, "--mail-imap", "127.0.0.1:%d" % imap,
                               "--mail-smtp", "127.0.0.1:%d" % smtp], name="mail")
    try:
        d.start()
    finally:
        if old is None:
            del os.environ["MCPBOX_LOG"]
        else:
            os.environ["MCPBOX_LOG"] = old
    api = B.Api(d.url)
    rows, errors = [], 0
    try:
        n = 5 if ctx.smoke else 30
        first = api.call("POST", "/local-sandbox", {"server_names": ["poste_email_toolathlon"],
                                                     "benchmark": "Toolathlon",
                                                     "test_account_email": "user000@mcp1.com"},
                         expect=(201,))
        for i in range(n):
            sb = api.call("POST", "/local-sandbox", {
                "server_names": ["poste_email_toolathlon"], "benchmark": "Toolathlon",
                "test_account_email": "user001@mcp%d.com" % (100 + i)}, expect=(201,))
            api.release(sb["local_sandbox_id"])
        deadline = time.time() + 60
        while time.time() < deadline and d.log().count("no longer owns") < n:
            time.sleep(0.1)
        log = d.log()
        att = [float(x) for x in re.findall(r"owns mcp\d+\.com \(503 users, ([\d.]+) ms\)", log)][1:]
        det = [float(x) for x in re.findall(r"no longer owns mcp\d+\.com \(([\d.]+) ms\)", log)]
        errors += (len(att) != n) + (len(det) != n)
        sa, sd = B.summary(att), B.summary(det)
        r = B.Row("P13.attach", "mail part of acquire, a domain of 503 users (claim, passwd-file, "
                  "sockets), %d acquires; target p50 <= 20 ms" % n, B.fmt_lat(sa),
                  errors=errors, cmd="bench/run --only P13")
        r.data = {"attach": sa}
        rows.append(r)
        r = B.Row("P13.release", "mail part of release (sockets closed, the domain's sessions "
                  "ended, passwd-file and Maildirs removed); target p50 <= 20 ms",
                  B.fmt_lat(sd), cmd="bench/run --only P13")
        r.data = {"release": sd}
        rows.append(r)

        # 1,000 messages in one INBOX, 100 of them holding "quarterly"
        sid = first["local_sandbox_id"]
        emails = [{"subject": ("quarterly report %d" if i % 10 == 0 else "note %d") % i,
                   "from_addr": "user%03d@mcp1.com" % (i % 400), "to_addr": "user000@mcp1.com",
                   "body_text": "message body %d\n" % i * 5} for i in range(1000)]
        api.call("POST", "/local-sandbox/poste_email_toolathlon/%s/initialize" % sid,
                 {"users": {"user000@mcp1.com": {"emails": emails}}})
        url = [s for s in first["servers"] if s["server_name"] == "poste_email_toolathlon"][0]
        s = B.McpSession(url["mcp_server_url"]).open()
        calls = 5 if ctx.smoke else 20
        lat_g, lat_s, lat_ig, lat_is = [], [], [], []
        for _ in range(calls):
            t0 = time.perf_counter()
            t = s.call("get_emails", {"page": 2})
            lat_g.append((time.perf_counter() - t0) * 1000)
            errors += "Total emails: 1000" not in t or t.count(". ID: ") != 20
            t0 = time.perf_counter()
            t = s.call("search_emails", {"query": "quarterly"})
            lat_s.append((time.perf_counter() - t0) * 1000)
            errors += "Total results: 100" not in t
            t0 = time.perf_counter()
            errors += imap_page(imap, "user000@mcp1.com", "pw_000") != 1000
            lat_ig.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            errors += imap_page(imap, "user000@mcp1.com", "pw_000",
                                ("TEXT", '"quarterly"')) != 100
            lat_is.append((time.perf_counter() - t0) * 1000)
        s.close()
        for rid, what, ours, alt in (("P13.get_emails", "get_emails (page of 20)", lat_g, lat_ig),
                                     ("P13.search", "search_emails 'quarterly' (100 hits, page "
                                      "of 20)", lat_s, lat_is)):
            so, sa2 = B.summary(ours), B.summary(alt)
            r = B.Row(rid, "%s over a 1,000-message INBOX through the gateway, %d calls; "
                      "ratio = imaplib time / ours" % (what, calls), B.fmt_lat(so),
                      alt=B.fmt_lat(sa2), alt_name="Python imaplib, same commands, direct",
                      ratio=B.ratio(sa2["p50_ms"], so["p50_ms"]), errors=errors,
                      cmd="bench/run --only P13")
            r.data = {"ours": so, "imaplib": sa2}
            rows.append(r)
        # memory: the daemon and Dovecot (not the sandboxes) with many domains and logins
        k = 10 if ctx.smoke else 100
        for i in range(k - 1):
            api.call("POST", "/local-sandbox", {
                "server_names": ["poste_email_toolathlon"], "benchmark": "Toolathlon",
                "test_account_email": "user%03d@mcp%d.com" % (i % 500, 1000 + i)},
                expect=(201,))
        conns = []
        for i in range(k):
            c = imaplib.IMAP4("127.0.0.1", imap)
            dom = "mcp1.com" if i == 0 else "mcp%d.com" % (1000 + i - 1)
            c.login("user%03d@%s" % (i % 500, dom), "pw_%03d" % (i % 500))
            c.select("INBOX")
            conns.append(c)
        dovecot = [p for p in B.descendants(d.pid)
                   if open("/proc/%d/cmdline" % p, "rb").read().startswith(b"dovecot")
                   or b"dovecot" in open("/proc/%d/cmdline" % p, "rb").read()[:40]]
        r = B.Row("P13.rss", "RSS with %d live mail domains and %d IMAP sessions open: the "
                  "daemon / Dovecot (all its processes)" % (k, k),
                  "%s / %s (%d processes)" % (B.fmt_mb(B.rss_bytes([d.pid])),
                                              B.fmt_mb(B.rss_bytes(dovecot)), len(dovecot)),
                  cmd="bench/run --only P13")
        r.data = {"domains": k, "sessions": k, "daemon_rss": B.rss_bytes([d.pid]),
                  "dovecot_rss": B.rss_bytes(dovecot), "dovecot_procs": len(dovecot)}
        rows.append(r)
        for c in conns:
            c.logout()
    finally:
        api.close()
        d.release_all()
        d.stop()
    return rows
