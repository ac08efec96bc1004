"""Toolathlon's canvas-new-students-notification end to end
(tests/data/canvas/PROVENANCE.md): its preprocess (the course "Introduction
to AI-8" made by the admin through the REST port, the students at indices 0,
2, 4, 9, 14 of student_list.csv enrolled, the first teacher of
teacher_list.csv added), an agent (the admin mcpcanvasadmintoken1, the
task's canvas_api_token) enrolling the other students and messaging each of
them privately through the canvas MCP server, and the grader's checks
(evaluation/main.py: the enrollments through REST with include[]=user, as
utils/app_specific/canvas/evaluator.py reads them; the users mapped by
canvas_list_account_users with the local part of each email; conversations
1..20 read with canvas_get_conversation through the MCP server; every new
student a participant of one whose subject names the assignment, policy or
the course, and no existing student). A second run also messages one
existing student and the grader must fail it."""
import csv
import json
import os

import pytest

from canvastask import acquire, daemon_fixture, enroll, release, rest
from gwharness import Session, text_of

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "canvas", "new-students")
ADMIN_EMAIL = "mcpcanvasadmin1@mcp.com"
ADMIN_TOKEN = "mcpcanvasadmintoken1"   # the task's canvas_api_token (preprocess and agent)
COURSE = "Introduction to AI-8"
EXISTING = [0, 2, 4, 9, 14]            # the preprocess's (and the grader's) indices


canvas = daemon_fixture(os.path.join(DATA, "users.json"))


def students():
    with open(os.path.join(DATA, "student_list.csv"), encoding="utf-8") as f:
        emails = [r["email"].strip() for r in csv.DictReader(f)]
    existing = [emails[i] for i in EXISTING]
    return existing, [e for i, e in enumerate(emails) if i not in EXISTING]


def preprocess(d):
    admin = rest(d, ADMIN_TOKEN)

    r = admin.post("/api/v1/accounts/1/courses", json={"course": {
        "name": COURSE, "course_code": "AI101", "is_public": True, "is_public_to_auth_users": True,
        "syllabus_body": "Welcome to Introduction to AI-8!"}})
    assert r.status_code == 200, r.text
    cid = r.json()["id"]
    existing, _ = students()
    for email in existing:
        enroll(admin, cid, email)
    with open(os.path.join(DATA, "teacher_list.csv"), encoding="utf-8") as f:
        teacher = next(csv.DictReader(f))["email"].strip()
    enroll(admin, cid, teacher, "TeacherEnrollment")
    admin.put(f"/api/v1/courses/{cid}", json={"course": {"event": "offer"}})
    return cid


def agent(url, also=None):
    """Enrolls the students of the list not yet in the course and messages each
    privately (and `also`, an existing student, when given)."""
    s = Session(url)
    cid = next(c["id"] for c in json.loads(text_of(s.call("canvas_list_account_courses", {
        "account_id": 1}))) if c["name"] == COURSE)
    existing, new = students()

    def user_id(email):
        text = text_of(s.call("canvas_list_account_users", {"account_id": 1, "search_term": email}))
        users = json.loads(text[text.find("["):text.rfind("]") + 1])
        return next(u["id"] for u in users if u["login_id"] == email)

    for email in new:
        r = s.call("canvas_enroll_user", {"course_id": cid, "user_id": user_id(email),
                                          "role": "StudentEnrollment", "enrollment_state": "active"})
        assert not r["result"].get("isError"), text_of(r)
    for email in new + ([also] if also else []):
        r = s.call("canvas_create_conversation", {
            "recipients": [str(user_id(email))], "subject": "Introduction to AI-8: first assignment policy",
            "body": "Your first assignment grade will be the same as your second one. Please "
                    "complete the assignment diligently."})
        assert not r["result"].get("isError"), text_of(r)
    s.close()


def grade(d, url):
    """evaluation/main.py's checks."""
    existing, new = students()
    me = rest(d, ADMIN_TOKEN)
    courses = me.get("/api/v1/accounts/1/courses", params={"per_page": 100}).json()
    course = next((c for c in courses if c.get("name") == COURSE), None)
    if not course:
        return False, "no course"
    enrollments = me.get(f"/api/v1/courses/{course['id']}/enrollments",
                         params={"include[]": "user", "per_page": 100}).json()
    enrolled = {(e.get("user") or {}).get("email") or (e.get("user") or {}).get("login_id", "")
                for e in enrollments if e.get("type") == "StudentEnrollment"}
    if [e for e in existing if e not in enrolled]:
        return False, "preprocessing failed"
    missing_enrollments = [e for e in new if e not in enrolled]
    s = Session(url)
    mapping = {}
    for email in new + existing:
        text = text_of(s.call("canvas_list_account_users", {
            "account_id": 1, "search_term": email.split("@")[0], "per_page": 20}))
        a, b = text.find("["), text.rfind("]") + 1
        if a >= 0 and b > a:
            for u in json.loads(text[a:b]):
                if u.get("login_id") == email:
                    mapping[str(u["id"])] = email
                    break
    contacted_new, contacted_existing = set(), set()
    for conv_id in range(1, 21):
        r = s.call("canvas_get_conversation", {"conversation_id": conv_id})
        try:
            conv = json.loads(text_of(r))
        except ValueError:
            continue
        if not isinstance(conv, dict) or "id" not in conv:
            continue
        subject = (conv.get("subject") or "").lower()
        if any(k in subject for k in ("assignment", "policy", "introduction to ai")):
            for p in conv.get("participants", []):
                email = mapping.get(str(p.get("id", "")))
                if email in new:
                    contacted_new.add(email)
                elif email in existing:
                    contacted_existing.add(email)
    s.close()
    if missing_enrollments:
        return False, f"{len(missing_enrollments)} new students not enrolled"
    if [e for e in new if e not in contacted_new]:
        return False, "new students not contacted"
    if contacted_existing:
        return False, f"{len(contacted_existing)} existing students incorrectly received messages"
    return True, None


@pytest.mark.parametrize("wrong", [False, True], ids=["correct", "messages-an-existing-student"])
def test_canvas_new_students_notification(canvas, wrong):
    api, sid, url = acquire(canvas, ADMIN_EMAIL)
    preprocess(canvas)
    _, new = students()
    assert grade(canvas, url) == (False, f"{len(new)} new students not enrolled")
    existing, _ = students()
    agent(url, also=existing[1] if wrong else None)
    ok, why = grade(canvas, url)
    if wrong:
        assert (ok, why) == (False, "1 existing students incorrectly received messages")
    else:
        assert ok, why
    release(api, sid)
