"""Toolathlon's canvas-art-quiz end to end (tests/data/canvas/PROVENANCE.md):
its preprocess (the Art History course AH101 made by the admin
mcpcanvasadmintoken3 through the REST port, the teacher bruiz@mcp.com, six
students from student_list.csv, two assignments from the task's markdown
files, the course published), an agent, the teacher, creating the quiz of
docs/task.md through the canvas MCP server, and the grader's REST checks
(evaluation/main.py with canvas_api.py's get_quiz_info, as the teacher:
the course's first quiz is titled "Classic Art History Questions", has the
four questions as multiple choice worth 1 point each, their texts and options
in order, exactly one answer of weight > 0 and it is the expected letter).
A second run marks one wrong option right and the grader must fail it."""
import csv
import json
import os
import re

import pytest

from canvastask import acquire, daemon_fixture, enroll, release, rest
from gwharness import Session, text_of

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "canvas", "art-quiz")
TEACHER = "bruiz@mcp.com"
TEACHER_TOKEN = "canvas_token_brian1990$p1"   # the task's canvas_api_token
ADMIN_TOKEN = "mcpcanvasadmintoken3"           # ... and its canvas_admin_api_token
TITLE = "Classic Art History Questions"
EXPECTED_LETTERS = ["B", "B", "B", "A"]        # the grader's correct_answer of each question


canvas = daemon_fixture(os.path.join(DATA, "users.json"))


def task_questions():
    """The numbered questions of docs/task.md with their lettered options."""
    out = []
    for line in open(os.path.join(DATA, "task.md"), encoding="utf-8"):
        q = re.match(r"^(\d+)\. (.*)$", line.rstrip())
        o = re.match(r"^\s+([A-D])\. (.*)$", line.rstrip())
        if q:
            out.append({"text": q.group(2), "options": []})
        elif o and out:
            out[-1]["options"].append(o.group(2))
    return out


def preprocess(d):
    admin = rest(d, ADMIN_TOKEN)

    r = admin.post("/api/v1/accounts/1/courses", json={"course": {
        "name": "Art History", "course_code": "AH101", "is_public": True,
        "is_public_to_auth_users": True,
        "syllabus_body": "Welcome to Introduction to AI! This course covers fundamental concepts "
                         "in artificial intelligence."}})
    assert r.status_code == 200, r.text
    cid = r.json()["id"]

    enroll(admin, cid, TEACHER, "TeacherEnrollment")
    with open(os.path.join(DATA, "student_list.csv"), encoding="utf-8") as f:
        for row in list(csv.DictReader(f))[:6]:
            enroll(admin, cid, row["email"].strip())
    for i, name in enumerate(["homework1.md", "project1.md"]):
        text = open(os.path.join(DATA, name), encoding="utf-8").read()
        title = text.splitlines()[0].lstrip("# ").strip()
        r = admin.post(f"/api/v1/courses/{cid}/assignments", json={"assignment": {
            "name": title, "description": text, "points_possible": 100, "published": True,
            "submission_types": ["online_text_entry"]}})
        assert r.status_code == 200, r.text
    for q in admin.get(f"/api/v1/courses/{cid}/quizzes").json():
        admin.delete(f"/api/v1/courses/{cid}/quizzes/{q['id']}")
    r = admin.put(f"/api/v1/courses/{cid}", json={"course": {"event": "offer"}})
    assert r.json()["workflow_state"] == "available"
    return cid


def agent(url, wrong=False):
    """The teacher makes the quiz through the MCP tools (the right letters are
    what a correct agent knows; `wrong` marks C right in question 3)."""
    s = Session(url)
    courses = json.loads(text_of(s.call("canvas_list_courses")))
    cid = next(c["id"] for c in courses if c["course_code"] == "AH101")
    quiz = json.loads(text_of(s.call("canvas_create_quiz", {
        "course_id": cid, "title": TITLE, "quiz_type": "assignment", "published": True})))
    for i, q in enumerate(task_questions()):
        letter = "C" if wrong and i == 2 else EXPECTED_LETTERS[i]
        r = s.call("canvas_create_quiz_question", {
            "course_id": cid, "quiz_id": quiz["id"], "question_name": f"Question {i + 1}",
            "question_text": q["text"], "question_type": "multiple_choice_question",
            "points_possible": 1,
            "answers": [{"text": t, "weight": 100 if "ABCD"[j] == letter else 0}
                        for j, t in enumerate(q["options"])]})
        assert not r["result"].get("isError"), text_of(r)
    s.close()


def norm(s):
    return " ".join(s.lower().split())


def grade(d):
    """evaluation/main.py's checks, as the teacher."""
    me = rest(d, TEACHER_TOKEN)
    course = next((c for c in me.get("/api/v1/courses").json()
                   if "art history" in norm(c.get("name", "")) or "ah101" in norm(c.get("course_code", ""))),
                  None)
    if not course:
        return False, "no course"
    quizzes = me.get(f"/api/v1/courses/{course['id']}/quizzes").json()
    if not quizzes:
        return False, "Can not find quiz in the course"
    info = me.get(f"/api/v1/courses/{course['id']}/quizzes/{quizzes[0]['id']}").json()
    questions = me.get(f"/api/v1/courses/{course['id']}/quizzes/{quizzes[0]['id']}/questions").json()
    if norm(info.get("title", "")) != norm(TITLE):
        return False, "title"
    expected = task_questions()
    if len(questions) != len(expected):
        return False, "question count"
    for i, (got, want) in enumerate(zip(questions, expected)):
        if got.get("question_type") != "multiple_choice_question" or got.get("points_possible", 0) != 1:
            return False, f"question {i + 1} type or points"
        a, b = norm(got.get("question_text", "")), norm(want["text"])
        if not (b in a or a in b):
            return False, f"question {i + 1} text"
        answers = got.get("answers", [])
        if len(answers) != len(want["options"]):
            return False, f"question {i + 1} option count"
        for ans, opt in zip(answers, want["options"]):
            a, b = norm(ans.get("text", "")), norm(opt)
            if not (b in a or a in b):
                return False, f"question {i + 1} option text"
        right = [j for j, ans in enumerate(answers) if ans.get("weight", 0) > 0]
        if len(right) != 1:
            return False, f"question {i + 1} has {len(right)} correct answers"
        if "ABCD"[right[0]] != EXPECTED_LETTERS[i]:
            return False, f"Question {i + 1} correct answer mismatch"
    return True, None


@pytest.mark.parametrize("wrong", [False, True], ids=["correct", "one-wrong-answer"])
def test_canvas_art_quiz(canvas, wrong):
    api, sid, url = acquire(canvas, TEACHER)
    preprocess(canvas)
    assert grade(canvas) == (False, "Can not find quiz in the course")
    agent(url, wrong=wrong)
    ok, why = grade(canvas)
    if wrong:
        assert not ok and why == "Question 3 correct answer mismatch"
    else:
        assert ok, why
    release(api, sid)
