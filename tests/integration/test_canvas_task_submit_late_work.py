"""Toolathlon's canvas-submit-late-work end to end on its Canvas side
(tests/data/canvas/PROVENANCE.md): its preprocess for the course the grader
reads (FILM101 of course_config.json, made by the admin mcpcanvasadmintoken2,
its teacher, through the REST port: six assignments, the announcement, the
students), the student's written work in the sandbox's workspace (the
groundtruth files, uploaded as a tar.gz), an agent, the student Zachary
Edwards (canvas_token_Zedwards5385), submitting Assignments 4 and 6 with
their files through the canvas MCP server, and the grader's REST checks
(evaluation/check_remote.py as the student: no file on Assignments 1, 2,
3, 5; on 4 and 6 an attachment whose url, fetched with the student's bearer
token, equals the groundtruth file up to whitespace). The grader's check for
the leave email is the mail server's part. A second run submits Assignment
4's file to Assignment 6 too and the grader must fail it."""
import io
import json
import os
import tarfile

import httpx
import pytest

from canvastask import acquire, daemon_fixture, enroll, release, rest
from gwharness import Session, text_of

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "canvas", "submit-late-work")
STUDENT_EMAIL = "zedwards@mcp.com"
STUDENT_TOKEN = "canvas_token_Zedwards5385"
ADMIN_TOKEN = "mcpcanvasadmintoken2"
GT = "2201210606_FILM101_Assignment%d.md"


canvas = daemon_fixture(os.path.join(DATA, "users.json"))


def preprocess(d):
    cfg = json.load(open(os.path.join(DATA, "course_config.json")))
    course = next(c for c in cfg["courses"] if c["course_code"] == "FILM101")
    admin = rest(d, ADMIN_TOKEN)

    r = admin.post("/api/v1/accounts/1/courses", json={"course": {
        "name": course["name"], "course_code": course["course_code"]}})
    assert r.status_code == 200, r.text
    cid = r.json()["id"]
    for email, role in [(course["teacher"], "TeacherEnrollment")] + [
            (e, "StudentEnrollment") for e in course["students"]]:
        enroll(admin, cid, email, role)
    for a in course["assignments"]:
        r = admin.post(f"/api/v1/courses/{cid}/assignments", json={"assignment": {
            k: a[k] for k in ("name", "description", "points_possible", "due_at", "submission_types",
                              "allowed_extensions", "published")}})
        assert r.status_code == 200, r.text
    ann = course["announcement"]
    assert admin.post(f"/api/v1/courses/{cid}/discussion_topics", json={
        "title": ann["title"], "message": ann["content"], "is_announcement": True}).status_code == 200
    assert admin.put(f"/api/v1/courses/{cid}", json={"course": {"event": "offer"}}).status_code == 200


def workspace(api, sid):
    """The student's finished (unsubmitted) work, in /data/homework/."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for n in (4, 6):
            tar.add(os.path.join(DATA, GT % n), arcname="homework/" + GT % n)
    r = api.post(f"/local-sandbox/{sid}/upload-url")
    assert r.status_code == 200, r.text
    assert httpx.put(r.json()["upload_url"], content=buf.getvalue(),
                     headers={"Content-Type": "application/gzip"}).status_code == 200
    r = api.post(f"/local-sandbox/{sid}/initialize")
    assert r.status_code == 200, r.text


def agent(url, wrong=False):
    s = Session(url)
    cid = next(c["id"] for c in json.loads(text_of(s.call("canvas_list_courses")))
               if c["course_code"] == "FILM101")
    assignments = json.loads(text_of(s.call("canvas_list_assignments", {"course_id": cid})))
    for n in (4, 6):
        aid = next(a["id"] for a in assignments if a["name"].startswith(f"Assignment {n}:"))
        f = GT % (4 if wrong else n)
        r = s.call("canvas_submit_assignment_with_file", {
            "course_id": cid, "assignment_id": aid, "file_path": "/data/homework/" + f})
        assert not r["result"].get("isError"), text_of(r)
    s.close()


def norm(b):
    return b.decode("utf-8", "replace").replace("\r\n", "\n").strip()


def same(a, b):
    return a == b or norm(a) == norm(b) or " ".join(norm(a).split()) == " ".join(norm(b).split())


def grade(d):
    """evaluation/check_remote.py's Canvas checks, as the student."""
    me = rest(d, STUDENT_TOKEN)
    if not me.get("/api/v1/users/self/profile").json().get("id"):
        return False, "Failed to get current user ID"
    r = me.get("/api/v1/accounts/1/courses")
    courses = r.json() if r.status_code == 200 else me.get("/api/v1/courses").json()
    course = next((c for c in courses if "FILM101" in c.get("course_code", "").upper()), None)
    if not course:
        return False, "FILM101 course not found"
    cid = course["id"]
    assignments = me.get(f"/api/v1/courses/{cid}/assignments").json()

    def find(n):
        return next((a for a in assignments if f"Assignment {n}" in a.get("name", "")), None)

    for n in (1, 2, 3, 5):
        a = find(n)
        if a and me.get(f"/api/v1/courses/{cid}/assignments/{a['id']}/submissions/self").json().get(
                "attachments"):
            return False, f"Found file submission for Assignment {n}; evaluation aborted"
    ok = 0
    for n in (4, 6):
        a = find(n)
        if not a:
            continue
        sub = me.get(f"/api/v1/courses/{cid}/assignments/{a['id']}/submissions/self").json()
        want = open(os.path.join(DATA, GT % n), "rb").read()
        for att in sub.get("attachments", []):
            url = d.canvas + att["url"][att["url"].index("/files/"):]   # the test's port
            got = httpx.get(url, headers={"Authorization": "Bearer " + STUDENT_TOKEN}, timeout=30)
            if got.status_code == 200 and got.content and same(got.content, want):
                ok += 1
                break
    if ok == 2:
        return True, None
    return False, f"Only {ok}/2 assignments match groundtruth files"


@pytest.mark.parametrize("wrong", [False, True], ids=["correct", "wrong-file"])
def test_canvas_submit_late_work(canvas, wrong):
    api, sid, url = acquire(canvas, STUDENT_EMAIL)
    preprocess(canvas)
    workspace(api, sid)
    assert grade(canvas) == (False, "Only 0/2 assignments match groundtruth files")
    agent(url, wrong=wrong)
    ok, why = grade(canvas)
    if wrong:
        assert (ok, why) == (False, "Only 1/2 assignments match groundtruth files")
    else:
        assert ok, why
    release(api, sid)
