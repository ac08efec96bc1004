"""Toolathlon's canvas-do-quiz end to end (tests/data/canvas/PROVENANCE.md): its
preprocess (the courses of course_config.json, made as the admin
mcpcanvasadmintoken2 through the REST port), an agent taking every quiz of
the student stepheng@mcp.com through the canvas MCP server, and the grader's
REST checks (evaluation/check_remote.py: every quiz of the student's active
courses has quiz_submissions[0].score == quiz_points_possible). The agent is
an oracle that knows the answers; a second run answers one question wrong
and the grader must fail it."""
import json
import os

import pytest


from canvastask import acquire, daemon_fixture, enroll, release, rest
from gwharness import Session, text_of

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "canvas", "do-quiz")
AGENT_EMAIL = "stepheng@mcp.com"
AGENT_TOKEN = "canvas_token_Gsteqwb9GHRe"   # the task's token_key_session.canvas_api_token
ADMIN_TOKEN = "mcpcanvasadmintoken2"        # ... and its admin_canvas_token


canvas = daemon_fixture(os.path.join(DATA, "users.json"))


def preprocess(d):
    """What the task's preprocess does, through the same REST calls."""
    cfg = json.load(open(os.path.join(DATA, "course_config.json")))
    admin = rest(d, ADMIN_TOKEN)

    for course in cfg["courses"]:
        r = admin.post("/api/v1/accounts/1/courses", json={"course": {
            "name": course["name"], "course_code": course["course_code"]}})
        assert r.status_code == 200, r.text
        cid = r.json()["id"]
        enroll(admin, cid, course["teacher"], "TeacherEnrollment")
        a = course["announcement"]
        assert admin.post(f"/api/v1/courses/{cid}/discussion_topics", json={
            "title": a["title"], "message": a["content"], "is_announcement": True}).status_code == 200
        q = course["quiz"]
        r = admin.post(f"/api/v1/courses/{cid}/quizzes", json={"quiz": {
            k: q[k] for k in ("title", "description", "quiz_type", "time_limit", "shuffle_answers",
                              "show_correct_answers", "allowed_attempts", "scoring_policy",
                              "points_possible", "due_at")}})
        assert r.status_code == 200, r.text
        qid = r.json()["id"]
        for question in q["questions"]:
            r = admin.post(f"/api/v1/courses/{cid}/quizzes/{qid}/questions", json={"question": {
                "question_text": question["question_text"],
                "question_type": question["question_type"],
                "points_possible": question["points_possible"],
                "answers": question["answers"]}})
            assert r.status_code == 200, r.text
        assert admin.put(f"/api/v1/courses/{cid}/quizzes/{qid}",
                         json={"quiz": {"published": True}}).status_code == 200
        for email in course["students"]:
            if email not in course.get("exclude_students", []):
                enroll(admin, cid, email)
        assert admin.put(f"/api/v1/courses/{cid}",
                         json={"course": {"event": "offer"}}).status_code == 200
    return cfg


def agent(url, cfg, wrong_in=None):
    """Takes every quiz of the agent's courses through the MCP tools,
    answering from the config (one wrong answer in quiz `wrong_in`)."""
    right = {q["question_text"]: next(a["answer_text"] for a in q["answers"] if a["answer_weight"] == 100)
             for c in cfg["courses"] for q in c["quiz"]["questions"]}
    s = Session(url)
    taken = []
    for course in json.loads(text_of(s.call("canvas_list_courses"))):
        for quiz in json.loads(text_of(s.call("canvas_list_quizzes", {"course_id": course["id"]}))):
            start = json.loads(text_of(s.call("canvas_start_quiz_attempt", {
                "course_id": course["id"], "quiz_id": quiz["id"]})))
            sub = start["quiz_submissions"][0] if "quiz_submissions" in start else start
            questions = json.loads(text_of(s.call("canvas_list_quiz_questions", {
                "course_id": course["id"], "quiz_id": quiz["id"], "quiz_submission_id": sub["id"],
                "use_submission_endpoint": True})))
            answers = []
            for i, q in enumerate(questions):
                want = right[q["question_text"]]
                pick = next(a for a in q["answers"] if (a["text"] == want) != (quiz["title"] == wrong_in and i == 0))
                answers.append({"question_id": q["id"], "answer_id": pick["id"]})
            done = s.call("canvas_submit_quiz_answers", {
                "course_id": course["id"], "quiz_id": quiz["id"], "submission_id": sub["id"],
                "validation_token": sub["validation_token"], "answers": answers})
            assert not done["result"].get("isError"), text_of(done)
            taken.append(quiz["title"])
    s.close()
    return taken


def grade(d):
    """evaluation/check_remote.py's checks, as the student."""
    me = rest(d, AGENT_TOKEN)
    profile = me.get("/api/v1/users/self/profile")
    if profile.status_code != 200:
        return False, "no profile"
    courses = me.get("/api/v1/courses", params={"per_page": 100, "enrollment_state": "active"}).json()
    if not courses:
        return False, "no active courses"
    total = full = 0
    for course in courses:
        for quiz in me.get(f"/api/v1/courses/{course['id']}/quizzes").json():
            total += 1
            r = me.get(f"/api/v1/courses/{course['id']}/quizzes/{quiz['id']}/submissions/self")
            subs = r.json().get("quiz_submissions", []) if r.status_code == 200 else []
            if subs:
                score = subs[0].get("score")
                possible = subs[0].get("quiz_points_possible", quiz.get("points_possible", 0))
                if score is not None and possible and abs(float(score) - float(possible)) < 1e-6:
                    full += 1
    if total and full == total:
        return True, None
    return False, f"{full}/{total} full scores"


@pytest.mark.parametrize("wrong", [False, True], ids=["correct", "one-wrong-answer"])
def test_canvas_do_quiz(canvas, wrong):
    api, sid, url = acquire(canvas, AGENT_EMAIL)
    cfg = preprocess(canvas)
    mine = [c for c in cfg["courses"] if AGENT_EMAIL in c["students"]]
    assert grade(canvas) == (False, f"0/{len(mine)} full scores")  # nothing taken yet
    target = mine[0]["quiz"]["title"] if wrong else None
    taken = agent(url, cfg, wrong_in=target)
    assert sorted(taken) == sorted(c["quiz"]["title"] for c in mine)
    ok, why = grade(canvas)
    if wrong:
        assert not ok and why == f"{len(mine) - 1}/{len(mine)} full scores"
    else:
        assert ok, why
    release(api, sid)
