"""Toolathlon's course-assistant task end to end on mcpbox's mail system: the
task's accounts provisioned in a sandbox's domain, its preprocess replayed
(submissions mailed to the TA over SMTP on the host port, the workbook
uploaded into /data), a scripted agent working only through the sandbox's MCP
servers (python_execute reads the workbook, poste_email_toolathlon searches
the TA's inbox and sends the reminders), then the task's check
(evaluation/check_local.py's logic, over plain IMAP on the host port) passes,
and fails once the agent also mails a student who should not get one.
Task data: tests/data/mail/course-assistant (provenance in its README)."""
import email
import io
import json
import os
import re
import smtplib
import tarfile
import imaplib

import httpx
import pytest

from gwharness import Session, text_of
from mailutil import MailDaemon, needs_dovecot

pytestmark = needs_dovecot

HERE = os.path.dirname(os.path.abspath(__file__))
TASK = os.path.join(HERE, "..", "data", "mail", "course-assistant")
DOMAIN = "mcp33.com"


def rewrite(text):
    """utils/app_specific/poste/domain_utils: every @mcp.com moves to the run's domain."""
    return text.replace("@mcp.com", "@" + DOMAIN)


def task_json(name):
    return json.loads(rewrite(open(os.path.join(TASK, name), encoding="utf-8").read()))


def normalize(name):
    n = re.sub(r"[._-]+", " ", name or "")
    n = re.sub(r"\d+", "", n)
    n = re.sub(r"[^A-Za-z\s]", "", n)
    return re.sub(r"\s+", " ", n).strip().lower()


def preprocess(smtp_port, accounts, ta):
    """preprocess/main.py: each submission is sent from the student's own account."""
    by_name = {normalize(a.get("name", "")): a for a in accounts}
    for line in open(os.path.join(TASK, "emails.jsonl"), encoding="utf-8"):
        if not line.strip():
            continue
        d = json.loads(line)
        sender = by_name[normalize(d["sender_name"])]
        msg = email.message.EmailMessage()
        msg["From"] = "%s <%s>" % (d["sender_name"], sender["email"])
        msg["To"] = ta
        msg["Subject"] = d["subject"]
        msg.set_content(d["content"], subtype="html")
        with smtplib.SMTP("127.0.0.1", smtp_port) as s:
            s.send_message(msg)


def body_of(msg):
    for part in msg.walk():
        if part.get_content_type() in ("text/plain", "text/html"):
            payload = part.get_payload(decode=True)
            if payload:
                return payload.decode(part.get_content_charset() or "utf-8", "replace")
    return ""


def check(imap_port):
    """evaluation/check_local.py: the three students who owe work got a reminder
    naming them and their ID; nobody else did."""
    cfg = task_json("email_student.json")
    pw = {a["email"]: a["password"] for a in cfg["positive_accounts"]}
    wanted = {"smorgan": ["Steven Morgan", "2000016613"],
              "calvarez": ["Carolyn Alvarez", "2000016630"],
              "michelle_brooks26": ["Michelle Brooks", "2000016606"]}
    ok = True
    for local, keywords in wanted.items():
        addr = "%s@%s" % (local, DOMAIN)
        m = imaplib.IMAP4("127.0.0.1", imap_port)
        m.login(addr, pw[addr])
        m.select("INBOX")
        nums = m.search(None, "SUBJECT", '"nlp-course-emergency"')[1][0].split()
        bodies = [body_of(email.message_from_bytes(m.fetch(n, "(RFC822)")[1][0][1]))
                  for n in nums]
        m.logout()
        good = [b for b in bodies if all(k in b for k in keywords)]
        ok = ok and bool(good) and len(good) == len(bodies)
    for acct in cfg["negative_accounts"]:
        m = imaplib.IMAP4("127.0.0.1", imap_port)
        m.login(acct["email"], acct["password"])
        m.select("INBOX")
        if m.search(None, "SUBJECT", '"nlp-course-emergency"')[1][0].split():
            ok = False
        m.logout()
    return ok


def workspace_tar():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        t.add(os.path.join(TASK, "nlp_statistics.xlsx"), arcname="nlp_statistics.xlsx")
    return buf.getvalue()


READ_XLSX = """
import json, openpyxl
ws = openpyxl.load_workbook('/data/nlp_statistics.xlsx').active
rows = [list(r) for r in ws.iter_rows(values_only=True)]
print(json.dumps(rows))
"""


@pytest.fixture
def task_daemon(tmp_root):
    accounts = task_json("emails_all_config.json")
    users = os.path.join(tmp_root, "users.json")
    json.dump({"domain": "mcp.com", "users": [
        {"email": a["email"], "password": a["password"], "full_name": a.get("name", "")}
        for a in accounts]}, open(users, "w"))
    d = MailDaemon(tmp_root)
    d.extra_args[d.extra_args.index("--mail-users") + 1] = users
    d.start()
    yield d, accounts
    d.stop()


def test_course_assistant(task_daemon):
    d, accounts = task_daemon
    ta = "virginia_diaz@" + DOMAIN
    with d.client() as api:
        r = api.post("/local-sandbox", json={
            "server_names": ["poste_email_toolathlon", "code-executor"],
            "benchmark": "Toolathlon", "test_account_email": ta})
        assert r.status_code == 201, r.text
        sb = r.json()
        sid = sb["local_sandbox_id"]
        # preprocess: the workbook into /data, the submissions into the TA's inbox
        up = api.post("/local-sandbox/%s/upload-url" % sid).json()["upload_url"]
        assert httpx.put(up, content=workspace_tar()).status_code in (200, 201, 204)
        assert api.post("/local-sandbox/%s/initialize" % sid).status_code == 200
        preprocess(d.smtp_port, accounts, ta)

        urls = {s["server_name"]: s["mcp_server_url"] for s in sb["servers"]}
        mail = Session(urls["poste_email_toolathlon"], timeout=120)
        py = Session(urls["code-executor"], timeout=120)
        try:
            # the agent: who is on the course, and which of them owe work
            out = text_of(py.call("python_execute", {"code": READ_XLSX}))
            rows = json.loads(out.split("=== STDOUT ===\n", 1)[1].split("\n", 1)[0])
            head, students = rows[0], [r for r in rows[1:] if r[0]]
            note, mail_col = head.index("Note"), head.index("Email")
            t = text_of(mail.call("search_emails", {"query": "nlp-presentation",
                                                    "page_size": 50}))
            assert "Total results: 12" in t, t
            submitted = set(re.findall(r"Subject: nlp-presentation-(\d+)-", t))
            owe = []
            for r in students:
                if r[note] and str(r[note]).strip() not in ("_x000D_",):
                    continue  # withdrew, or auditing
                missing_hw = any(str(v).strip().lower() == "miss" for v in r[2:13])
                if missing_hw or str(r[0]) not in submitted:
                    owe.append(r)
            assert sorted(r[1] for r in owe) == ["Carolyn Alvarez", "Michelle Brooks",
                                                 "Steven Morgan"]
            for r in owe:
                t = text_of(mail.call("send_email", {
                    "to": rewrite(r[mail_col]), "subject": "nlp-course-emergency",
                    "body": "Dear %s (student ID %s), your NLP course work is incomplete. "
                            "Please submit it as soon as possible." % (r[1], r[0])}))
                assert t.startswith("Email sent successfully"), t
            assert check(d.imap_port)
            # the TA's Sent folder holds the three reminders (what graders of other
            # email tasks read)
            m = imaplib.IMAP4("127.0.0.1", d.imap_port)
            m.login(ta, accounts[0]["password"])
            m.select("Sent")
            assert len(m.search(None, "SUBJECT", '"nlp-course-emergency"')[1][0].split()) == 3
            m.logout()
            # a wrong answer: mailing a student who withdrew fails the check
            text_of(mail.call("send_email", {
                "to": "sandra.miller@" + DOMAIN, "subject": "nlp-course-emergency",
                "body": "Dear Sandra Miller (2000014200), please submit."}))
            assert not check(d.imap_port)
        finally:
            mail.close()
            py.close()
