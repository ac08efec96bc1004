"""Toolathlon's canvas-art-manager end to end on its Canvas side
(tests/data/canvas/PROVENANCE.md): an agent, the registrar admin3
(mcpcanvasadmintoken3, the task's canvas_api_token), creates through the
canvas MCP server every course of course_schedule.md whose administrator is
admin3, makes its instructor the teacher, posts an announcement with the
instructor's name and the class time, and publishes it (reading the
schedule from the mail is the mail server's part); then the grader's REST
checks (evaluation/main.py: with each instructor's own token, GET
/api/v1/courses lists the course by its full name, and it is published,
workflow_state "available"). A second run leaves one course unpublished and
the grader must fail it."""
import json
import os

import pytest

from canvastask import acquire, daemon_fixture, release, rest
from gwharness import Session, text_of

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "canvas", "art-manager")
ADMIN_EMAIL = "mcpcanvasadmin3@mcp.com"


canvas = daemon_fixture(os.path.join(DATA, "users.json"))


def admin3_courses():
    """The grader's parse_admin3_courses: table rows whose 4th cell is admin3."""
    out = []
    for line in open(os.path.join(DATA, "course_schedule.md"), encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("|---") or not line.startswith("|") or line.count("|") < 4:
            continue
        parts = [x.strip() for x in line.split("|")[1:-1]]
        if len(parts) >= 4 and parts[3] == "admin3":
            out.append({"course_name": parts[0], "instructor": parts[1], "class_time": parts[2]})
    return out


def tokens():
    """Instructor name -> token (the grader's teacher_keys, from the users file)."""
    users = json.load(open(os.path.join(DATA, "users.json")))["users"]
    return {u["full_name"]: u["canvas_token"] for u in users}


def agent(url, skip_publish=None):
    s = Session(url)

    def user_id(name):
        text = text_of(s.call("canvas_list_account_users", {"account_id": 1, "search_term": name}))
        return next(u["id"] for u in json.loads(text[text.find("["):text.rfind("]") + 1])
                    if u["name"] == name)

    for c in admin3_courses():
        course = json.loads(text_of(s.call("canvas_create_course", {
            "account_id": 1, "name": c["course_name"],
            "course_code": c["course_name"].split("-")[0].strip()})))
        r = s.call("canvas_enroll_user", {"course_id": course["id"], "user_id": user_id(c["instructor"]),
                                          "role": "TeacherEnrollment", "enrollment_state": "active"})
        assert not r["result"].get("isError"), text_of(r)
        r = s.call("canvas_create_announcement", {
            "course_id": course["id"], "title": f"Welcome to {c['course_name']}",
            "message": f"Instructor: {c['instructor']}. Class time: {c['class_time']}."})
        assert not r["result"].get("isError"), text_of(r)
        if c["course_name"] != skip_publish:
            r = s.call("canvas_update_course", {"course_id": course["id"], "event": "offer"})
            assert json.loads(text_of(r))["workflow_state"] == "available", text_of(r)
    s.close()


def grade(d):
    """evaluation/main.py's checks, with each instructor's token."""
    keys = tokens()
    missing, unpublished = [], []
    for c in admin3_courses():
        if c["instructor"] not in keys:
            return False, f"no token for {c['instructor']}"
        mine = rest(d, keys[c["instructor"]]).get("/api/v1/courses").json()
        info = next((x for x in mine if x["name"] == c["course_name"]), None)
        if not info:
            missing.append(c["course_name"])
        elif not (info.get("workflow_state") == "available" or info.get("published") is True):
            unpublished.append(c["course_name"])
    if missing:
        return False, f"{len(missing)} courses missing"
    if unpublished:
        return False, "unpublished: " + ", ".join(unpublished)
    return True, None


@pytest.mark.parametrize("wrong", [False, True], ids=["correct", "one-course-unpublished"])
def test_canvas_art_manager(canvas, wrong):
    api, sid, url = acquire(canvas, ADMIN_EMAIL)
    courses = admin3_courses()
    assert len(courses) == 27
    assert grade(canvas) == (False, "27 courses missing")
    agent(url, skip_publish="Optics-7" if wrong else None)
    ok, why = grade(canvas)
    if wrong:
        assert (ok, why) == (False, "unpublished: Optics-7")
    else:
        assert ok, why
    # the announcements carry the instructor and the class time
    admin = rest(canvas, "mcpcanvasadmintoken3")
    course = next(x for x in admin.get("/api/v1/accounts/1/courses", params={
        "search_term": "Genetics-7"}).json() if x["name"] == "Genetics-7")
    ann = admin.get(f"/api/v1/courses/{course['id']}/discussion_topics",
                    params={"only_announcements": "true"}).json()
    assert "Brian Scott" in ann[0]["message"] and "Monday 7,8,9" in ann[0]["message"]
    release(api, sid)
