"""Toolathlon's canvas-homework-grader-python end to end on its Canvas side
(tests/data/canvas/PROVENANCE.md): its preprocess (the course "CS5123
Programming Fundamentals" made by the admin through the REST port, the
teacher Teresa Torres and the students of student_list.csv enrolled, the
assignment homework2 worth 10 points, the course published; the students'
Canvas ids listed as extract_student_ids.py writes them for the agent), an
agent, the teacher, grading homework2 through the canvas MCP server
(canvas_submit_grade: 10 for a correct latest submission, 0 otherwise, as
the emails of emails.jsonl say; reading the mail and running the code is
the task's other servers' part), and the grader's REST checks
(evaluation/main.py, as the admin: the course by code or by its teacher,
homework2 worth 10, each student's submission read through the course's
enrollments with include[]=user, grades compared with emails.jsonl's latest
homework2 expectations, the 10/0 rule, Timothy Ruiz's latest submission).
A second run grades one correct solution 0 and the grader must fail it."""
import csv
import json
import os

import pytest

from canvastask import acquire, daemon_fixture, enroll, release, rest, user_id
from gwharness import Session, text_of

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "canvas", "homework-grader")
TEACHER_EMAIL = "teresat@mcp.com"     # canvas_api_token canvas_token_TT1021#WQtww
ADMIN_TOKEN = "mcpcanvasadmintoken1"  # the task's admin_canvas_api_token (the grader's)


canvas = daemon_fixture(os.path.join(DATA, "users.json"))


def expected():
    """The grader's load_expected_grades: homework2 only, the latest submission wins."""
    out = {}
    for line in open(os.path.join(DATA, "emails.jsonl"), encoding="utf-8"):
        if not line.strip():
            continue
        e = json.loads(line)
        if e.get("homework_assignment", "homework2") != "homework2":
            continue
        if e["sender_name"] not in out or e.get("is_latest_submission", False):
            out[e["sender_name"]] = e
    return out


def preprocess(d):
    admin = rest(d, ADMIN_TOKEN)

    r = admin.post("/api/v1/accounts/1/courses", json={"course": {
        "name": "CS5123 Programming Fundamentals", "course_code": "CS5123",
        "syllabus_body": "Two Sum Problem homework assignment course"}})
    assert r.status_code == 200, r.text
    cid = r.json()["id"]

    enroll(admin, cid, TEACHER_EMAIL, "TeacherEnrollment")
    ids = {}
    with open(os.path.join(DATA, "student_list.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            enroll(admin, cid, row["email"].strip())
            ids[row["Name"].strip()] = user_id(admin, row["email"].strip())
    r = admin.post(f"/api/v1/courses/{cid}/assignments", json={"assignment": {
        "name": "homework2", "description": "Two Sum Problem - Submit your Python solution",
        "points_possible": 10, "published": True}})
    assert r.status_code == 200, r.text
    assert admin.put(f"/api/v1/courses/{cid}", json={"course": {"event": "offer"}}).status_code == 200
    return ids


def agent(url, ids, wrong=False):
    s = Session(url)
    cid = next(c["id"] for c in json.loads(text_of(s.call("canvas_list_courses")))
               if c["course_code"] == "CS5123")
    aid = next(a["id"] for a in json.loads(text_of(s.call("canvas_list_assignments", {"course_id": cid})))
               if a["name"] == "homework2")
    for name, e in expected().items():
        grade = 10 if e["is_correct"] else 0
        if wrong and name == "Shirley Rodriguez":
            grade = 0
        r = s.call("canvas_submit_grade", {"course_id": cid, "assignment_id": aid,
                                            "user_id": ids[name], "grade": grade})
        assert not r["result"].get("isError"), text_of(r)
        assert json.loads(text_of(r))["score"] == grade
    s.close()


def grade(d):
    """evaluation/main.py's checks, as the admin."""
    me = rest(d, ADMIN_TOKEN)
    courses = me.get("/api/v1/accounts/1/courses", params={"per_page": 100}).json()

    def enrollments(cid):
        return me.get(f"/api/v1/courses/{cid}/enrollments",
                      params={"include[]": "user", "per_page": 100}).json()

    course = next((c for c in courses if c.get("course_code") == "CS5123" or any(
        e.get("type") == "TeacherEnrollment" and e.get("user", {}).get("name") == "Teresa Torres"
        for e in enrollments(c["id"]))), None)
    if not course:
        return False, "Failed to find course or assignment"
    cid = course["id"]
    assignment = next((a for a in me.get(f"/api/v1/courses/{cid}/assignments").json()
                       if "homework2" in a.get("name", "").lower()), None)
    if not assignment or assignment.get("points_possible") != 10:
        return False, "Failed to find course or assignment"
    actual = {}
    for e in enrollments(cid):
        if e.get("type") != "StudentEnrollment":
            continue
        user = e.get("user", {})
        sub = me.get(f"/api/v1/courses/{cid}/assignments/{assignment['id']}/submissions/{user['id']}").json()
        actual[user.get("name")] = float(sub["score"]) if sub.get("workflow_state") == "graded" and \
            sub.get("score") is not None else 0.0
    want = expected()
    failed = []
    if any(actual.get(n) != e["expected_grade"] for n, e in want.items()):
        failed.append("accuracy")
    if any((e["is_correct"] and actual.get(n) != 10) or (not e["is_correct"] and actual.get(n) != 0)
           for n, e in want.items() if n in actual):
        failed.append("logic")
    if actual.get("Timothy Ruiz") != 10:
        failed.append("submissions")
    if failed:
        return False, "Task failed - Issues with: " + ", ".join(failed)
    return True, None


@pytest.mark.parametrize("wrong", [False, True], ids=["correct", "one-wrong-grade"])
def test_canvas_homework_grader(canvas, wrong):
    api, sid, url = acquire(canvas, TEACHER_EMAIL)
    ids = preprocess(canvas)
    assert grade(canvas) == (False, "Task failed - Issues with: accuracy, logic, submissions")
    agent(url, ids, wrong=wrong)
    ok, why = grade(canvas)
    if wrong:
        assert (ok, why) == (False, "Task failed - Issues with: accuracy, logic")
    else:
        assert ok, why
    release(api, sid)
