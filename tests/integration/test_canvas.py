"""Canvas (src/canvas, src/servers/canvas): the REST service on the graders'
port against Canvas's documented shapes (status, body, Link pagination, role
visibility, error bodies), the quiz-taking flow as the Toolathlon graders
check it (score, quiz_points_possible, a second start is 409), tenancy (a
fixed token set is held by one sandbox; two sandboxes see only their own
Canvas), Klavis initialize/dump/reset, and the canvas MCP server through the
gateway acting as the sandbox's agent user."""
import json
import os
import re

import httpx
import pytest

import tempfile

from conftest import Daemon, sweep_sandboxes
from gwharness import Session, text_of

HERE = os.path.dirname(__file__)
USERS = os.path.join(HERE, "..", "data", "canvas", "users_small.json")
ADMIN = "mcpcanvasadmintoken1"
STUDENT = ("rkelly1@mcp.com", "canvas_token_test_ronald1")
STUDENT2 = ("mlopez2@mcp.com", "canvas_token_test_maria2")
TEACHER = ("ktanaka3@mcp.com", "canvas_token_test_kenji3")


@pytest.fixture(scope="module")
def canvas():
    """One daemon for the module (each test acquires and releases its own sandboxes)."""
    root = tempfile.TemporaryDirectory(prefix="mcpbox-test-")
    d = Daemon(os.path.join(root.name, "var"),
               extra_args=["--canvas-listen", "127.0.0.1:0", "--canvas-users", USERS]).start()
    line = d.proc.stdout.readline().decode()
    m = re.search(r"canvas on (http://\S+)", line)
    assert m, line
    d.canvas = m.group(1)
    yield d
    d.stop()
    sweep_sandboxes(root.name)
    root.cleanup()


@pytest.fixture
def api(canvas):
    with canvas.client() as c:
        yield c


def rest(d, token):
    return httpx.Client(base_url=d.canvas + "/api/v1",
                        headers={"Authorization": "Bearer " + token} if token else {}, timeout=30)


def acquire(api, bench="Toolathlon", **kw):
    body = {"benchmark": bench, **kw} if bench else dict(kw)
    r = api.post("/sandbox/canvas", json=body)
    return r


def user_id(admin, email):
    users = admin.get("/accounts/1/users", params={"search_term": email}).json()
    return [u for u in users if u["login_id"] == email][0]["id"]


def make_course(admin, name="Biology 101", publish=True):
    c = admin.post("/accounts/1/courses", json={"course": {"name": name, "course_code": name[:3]}})
    assert c.status_code == 200, c.text
    cid = c.json()["id"]
    if publish:
        assert admin.put(f"/courses/{cid}", json={"course": {"event": "offer"}}).status_code == 200
    return cid


def enroll(admin, cid, email, role="StudentEnrollment"):
    r = admin.post(f"/courses/{cid}/enrollments", json={"enrollment": {
        "user_id": user_id(admin, email), "type": role, "enrollment_state": "active"}})
    assert r.status_code == 200, r.text
    return r.json()


def make_quiz(admin, cid, publish=True):
    q = admin.post(f"/courses/{cid}/quizzes", json={"quiz": {
        "title": "Cells", "quiz_type": "assignment", "allowed_attempts": 1}}).json()
    qids = []
    for i, (right, wrong) in enumerate([("Mitochondria", "Ribosome"), ("DNA", "Lipid")]):
        r = admin.post(f"/courses/{cid}/quizzes/{q['id']}/questions", json={"question": {
            "question_name": f"Q{i + 1}", "question_text": f"Question {i + 1}?",
            "question_type": "multiple_choice_question", "points_possible": 5,
            "answers": [{"answer_text": right, "answer_weight": 100},
                        {"answer_text": wrong, "answer_weight": 0}]}})
        assert r.status_code == 200, r.text
        qids.append(r.json())
    if publish:
        admin.put(f"/courses/{cid}/quizzes/{q['id']}", json={"quiz": {"published": True}})
    return q["id"], qids


def test_contract_shapes_pagination_and_errors(api, canvas):
    r = acquire(api, test_account_email=STUDENT[0])
    assert r.status_code == 201, r.text
    sid = r.json()["sandbox_id"]
    admin = rest(canvas, ADMIN)
    # the caller
    p = admin.get("/users/self/profile")
    assert p.status_code == 200
    assert p.json()["primary_email"] == "mcpcanvasadmin1@mcp.com"
    assert p.json()["login_id"] == "mcpcanvasadmin1@mcp.com"
    # errors: no token, a wrong token, an unknown route, a missing object
    r = rest(canvas, None).get("/courses")
    assert r.status_code == 401 and r.json()["errors"][0]["message"] == "user authorization required"
    r = rest(canvas, "nope").get("/courses")
    assert r.status_code == 401 and r.json() == {"errors": [{"message": "Invalid access token."}]}
    assert admin.get("/no/such/route").status_code == 404
    r = admin.get("/courses/999")
    assert r.status_code == 404
    assert r.json() == {"errors": [{"message": "The specified resource does not exist."}]}
    # Link pagination: default 10 per page, per_page, rel next/last
    r = admin.get("/accounts/1/users")
    assert len(r.json()) == 10
    assert 'rel="next"' in r.headers["link"] and 'rel="last"' in r.headers["link"]
    r = admin.get("/accounts/1/users", params={"per_page": 4, "page": 3})
    assert len(r.json()) == 3  # 11 users: 4 + 4 + 3
    links = dict((rel, url) for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', r.headers["link"]))
    assert "next" not in links and "page=2" in links["prev"] and "per_page=4" in links["last"]
    assert set(r.json()[0]) >= {"id", "name", "sortable_name", "short_name", "login_id", "created_at"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r.json()[0]["created_at"])
    # courses: creation, shapes, includes
    cid = make_course(admin)
    enroll(admin, cid, STUDENT[0])
    enroll(admin, cid, TEACHER[0], "TeacherEnrollment")
    c = admin.get(f"/courses/{cid}", params=[("include[]", "teachers"), ("include[]", "total_students"),
                                              ("include[]", "term")]).json()
    assert c["workflow_state"] == "available" and c["course_code"] == "Bio"
    assert c["total_students"] == 1 and c["teachers"][0]["display_name"] == "Kenji Tanaka"
    assert c["term"]["name"] == "Default Term"
    assert {"id", "name", "account_id", "uuid", "enrollment_term_id", "created_at",
            "default_view", "is_public", "time_zone"} <= set(c)
    # visibility by role
    student = rest(canvas, STUDENT[1])
    assert [x["id"] for x in student.get("/courses").json()] == [cid]
    assert student.get("/courses").json()[0]["enrollments"][0]["type"] == "student"
    assert student.get("/accounts/1/users").status_code == 401
    assert student.get("/accounts/1/courses").status_code == 401
    hidden = make_course(admin, "Hidden", publish=False)
    enroll(admin, hidden, STUDENT[0])
    assert student.get(f"/courses/{hidden}").status_code == 401
    assert hidden not in [x["id"] for x in student.get("/courses").json()]
    other = rest(canvas, STUDENT2[1])
    assert other.get(f"/courses/{cid}").status_code == 401
    # enrollments: a student sees its own, a teacher all
    assert len(student.get(f"/courses/{cid}/enrollments").json()) == 1
    teacher = rest(canvas, TEACHER[1])
    assert len(teacher.get(f"/courses/{cid}/enrollments").json()) == 2
    # assignments: unpublished ones are the teacher's; a grade through the API
    a = teacher.post(f"/courses/{cid}/assignments", json={"assignment": {
        "name": "Essay", "points_possible": 20, "submission_types": ["online_text_entry"],
        "due_at": "2030-01-01T00:00:00Z"}}).json()
    assert a["published"] is False and a["submission_types"] == ["online_text_entry"]
    assert student.get(f"/courses/{cid}/assignments").json() == []
    teacher.put(f"/courses/{cid}/assignments/{a['id']}", json={"assignment": {"published": True}})
    s = student.post(f"/courses/{cid}/assignments/{a['id']}/submissions", json={
        "submission": {"submission_type": "online_text_entry", "body": "<p>hi</p>"}})
    assert s.status_code == 200 and s.json()["workflow_state"] == "submitted", s.text
    g = teacher.put(f"/courses/{cid}/assignments/{a['id']}/submissions/{s.json()['user_id']}",
                    json={"submission": {"posted_grade": "90%"}, "comment": {"text_comment": "good"}})
    assert g.json()["score"] == 18 and g.json()["grade"] == "18"
    assert g.json()["submission_comments"][0]["comment"] == "good"
    mine = student.get(f"/courses/{cid}/assignments/{a['id']}/submissions/self").json()
    assert mine["score"] == 18 and mine["workflow_state"] == "graded"
    # forms are read as Canvas's Rails reads them
    r = teacher.post(f"/courses/{cid}/discussion_topics",
                     data={"title": "Welcome", "message": "Hello", "is_announcement": "true"})
    assert r.status_code == 200 and r.json()["is_announcement"] is True
    anns = student.get(f"/courses/{cid}/discussion_topics", params={"only_announcements": "true"})
    assert [x["title"] for x in anns.json()] == ["Welcome"]
    # conversations: to a user, listed for both, a reply
    tid = user_id(admin, TEACHER[0])
    conv = student.post("/conversations", json={"recipients": [str(tid)], "subject": "Q",
                                                "body": "When is the exam?"})
    assert conv.status_code == 201 and conv.json()[0]["subject"] == "Q", conv.text
    cvid = conv.json()[0]["id"]
    inbox = teacher.get("/conversations").json()
    assert inbox[0]["id"] == cvid and inbox[0]["workflow_state"] == "unread"
    reply = teacher.post(f"/conversations/{cvid}/add_message", json={"body": "Friday"}).json()
    assert [m["body"] for m in reply["messages"]] == ["Friday"]
    full = student.get(f"/conversations/{cvid}").json()
    assert [m["body"] for m in full["messages"]] == ["Friday", "When is the exam?"]
    assert other.get(f"/conversations/{cvid}").status_code == 404
    api.delete(f"/sandbox/canvas/{sid}")
    # released: its tokens are gone
    assert rest(canvas, ADMIN).get("/users/self/profile").status_code == 401


def test_quiz_flow_as_graders_check_it(api, canvas):
    sid = acquire(api, test_account_email=STUDENT[0]).json()["sandbox_id"]
    admin = rest(canvas, ADMIN)
    cid = make_course(admin)
    enroll(admin, cid, STUDENT[0])
    enroll(admin, cid, STUDENT2[0])
    qid, questions = make_quiz(admin, cid)
    quiz = admin.get(f"/courses/{cid}/quizzes/{qid}").json()
    assert quiz["points_possible"] == 10 and quiz["question_count"] == 2 and quiz["published"]
    student = rest(canvas, STUDENT[1])
    # students see no weights
    assert student.get(f"/courses/{cid}/quizzes/{qid}/questions").status_code == 401
    start = student.post(f"/courses/{cid}/quizzes/{qid}/submissions")
    assert start.status_code == 200, start.text
    qs = start.json()["quiz_submissions"][0]
    assert qs["workflow_state"] == "untaken" and qs["attempt"] == 1 and qs["validation_token"]
    again = student.post(f"/courses/{cid}/quizzes/{qid}/submissions")
    assert again.status_code == 409
    listed = student.get(f"/quiz_submissions/{qs['id']}/questions").json()["quiz_submission_questions"]
    assert [q["id"] for q in listed] == [q["id"] for q in questions]
    assert "weight" not in listed[0]["answers"][0]
    right = [next(a["id"] for a in q["answers"] if a["weight"] == 100) for q in questions]
    bad = student.post(f"/quiz_submissions/{qs['id']}/questions", json={
        "attempt": 1, "validation_token": "wrong", "quiz_questions": []})
    assert bad.status_code == 403
    r = student.post(f"/quiz_submissions/{qs['id']}/questions", json={
        "attempt": 1, "validation_token": qs["validation_token"],
        "quiz_questions": [{"id": str(questions[0]["id"]), "answer": right[0]},
                           {"id": str(questions[1]["id"]), "answer": right[1]}]})
    assert r.status_code == 200, r.text
    done = student.post(f"/courses/{cid}/quizzes/{qid}/submissions/{qs['id']}/complete",
                        json={"attempt": 1, "validation_token": qs["validation_token"]})
    assert done.status_code == 200, done.text
    # the grader's read (canvas-do-quiz's check_remote.py)
    sub = student.get(f"/courses/{cid}/quizzes/{qid}/submissions/self").json()["quiz_submissions"][0]
    assert sub["score"] == 10 and sub["quiz_points_possible"] == 10
    assert sub["workflow_state"] == "complete"
    # one attempt allowed: no second one
    assert student.post(f"/courses/{cid}/quizzes/{qid}/submissions").status_code == 403
    # a wrong answer scores less
    other = rest(canvas, STUDENT2[1])
    qs2 = other.post(f"/courses/{cid}/quizzes/{qid}/submissions").json()["quiz_submissions"][0]
    other.post(f"/quiz_submissions/{qs2['id']}/questions", json={
        "attempt": 1, "validation_token": qs2["validation_token"],
        "quiz_questions": [{"id": questions[0]["id"], "answer": right[0]},
                           {"id": questions[1]["id"], "answer": right[1] + 1}]})
    other.post(f"/courses/{cid}/quizzes/{qid}/submissions/{qs2['id']}/complete",
               json={"attempt": 1, "validation_token": qs2["validation_token"]})
    sub2 = other.get(f"/courses/{cid}/quizzes/{qid}/submissions/self").json()["quiz_submissions"][0]
    assert sub2["score"] == 5
    # the teacher sees both; a student only its own
    assert len(admin.get(f"/courses/{cid}/quizzes/{qid}/submissions").json()["quiz_submissions"]) == 2
    assert len(other.get(f"/courses/{cid}/quizzes/{qid}/submissions").json()["quiz_submissions"]) == 1
    # the quiz's assignment carries the kept score
    aid = quiz["assignment_id"]
    assert admin.get(f"/courses/{cid}/assignments/{aid}/submissions/{sub['user_id']}").json()["score"] == 10
    api.delete(f"/sandbox/canvas/{sid}")


def test_tenancy_claims_and_isolation(api, canvas):
    a = acquire(api)
    assert a.status_code == 201, a.text
    # the fixed token set is held: a second Toolathlon Canvas is refused
    b = acquire(api)
    assert b.status_code == 409 and "token set" in b.json()["detail"]
    # a sandbox without the users file gets its own admin token
    n = acquire(api, None)
    assert n.status_code == 201, n.text
    info = api.get(f"/sandbox/canvas/{n.json()['sandbox_id']}").json()
    token = info["auth_data"]["api_token"]
    assert info["auth_data"]["base_url"].startswith("http://127.0.0.1:")
    mine = rest(canvas, token)
    theirs = rest(canvas, ADMIN)
    c1 = make_course(theirs, "Toolathlon course")
    c2 = make_course(mine, "None course")
    names = lambda cl: [c["name"] for c in cl.get("/accounts/1/courses").json()]
    assert names(theirs) == ["Toolathlon course"] and names(mine) == ["None course"]
    assert mine.get(f"/courses/{c1}").status_code in (401, 404) or c1 == c2
    api.delete(f"/sandbox/canvas/{a.json()['sandbox_id']}")
    # released: the set may be claimed again
    c = acquire(api)
    assert c.status_code == 201, c.text
    assert names(rest(canvas, ADMIN)) == []
    api.delete(f"/sandbox/canvas/{c.json()['sandbox_id']}")
    api.delete(f"/sandbox/canvas/{n.json()['sandbox_id']}")


def test_klavis_initialize_dump_reset(api, canvas):
    sid = acquire(api).json()["sandbox_id"]
    data = {"courses": [{
        "name": "Art History", "course_code": "ART101",
        "assignments": [{"name": "Essay", "points_possible": 10, "submission_types": ["online_upload"]}],
        "quizzes": [{"title": "Baroque", "questions": [{
            "question_text": "Who painted Las Meninas?", "points_possible": 2,
            "answers": [{"answer_text": "Velazquez", "answer_weight": 100},
                        {"answer_text": "Goya", "answer_weight": 0}]}]}],
        "enrollments": [{"user_email": STUDENT[0], "role": "StudentEnrollment"},
                        {"user_email": TEACHER[0], "role": "Teacher"}],
        "announcements": [{"title": "Hi", "message": "<p>Welcome</p>"}]}]}
    r = api.post(f"/sandbox/canvas/{sid}/initialize", json=data)
    assert r.status_code == 200, r.text
    bad = api.post(f"/sandbox/canvas/{sid}/initialize",
                   json={"courses": [{"name": "x", "course_code": "x",
                                      "enrollments": [{"user_email": "nobody@x.com"}]}]})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][-1] == "user_email"
    r = api.post(f"/sandbox/canvas/{sid}/initialize", json=data)
    assert r.status_code == 200, r.text
    dump = api.get(f"/sandbox/canvas/{sid}/dump").json()
    assert dump["server_name"] == "canvas"
    (course,) = dump["data"]["courses"]
    assert course["name"] == "Art History" and course["published"] is True
    assert course["quizzes"][0]["points_possible"] == 2
    assert course["quizzes"][0]["questions"][0]["answers"][0]["answer_text"] == "Velazquez"
    assert sorted(e["role"] for e in course["enrollments"]) == ["StudentEnrollment", "TeacherEnrollment"]
    student = rest(canvas, STUDENT[1])
    cid = student.get("/courses").json()[0]["id"]
    assert [q["title"] for q in student.get(f"/courses/{cid}/quizzes").json()] == ["Baroque"]
    # reset returns to the state after the last initialize
    rest(canvas, ADMIN).post("/accounts/1/courses", json={"course": {"name": "Extra"}})
    assert len(rest(canvas, ADMIN).get("/accounts/1/courses").json()) == 2
    assert api.post(f"/sandbox/canvas/{sid}/reset").status_code == 200
    assert [c["name"] for c in rest(canvas, ADMIN).get("/accounts/1/courses").json()] == ["Art History"]
    api.delete(f"/sandbox/canvas/{sid}")


def test_mcp_server_through_the_gateway(api, canvas):
    r = acquire(api, test_account_email=STUDENT[0]).json()
    url = r["server_urls"]["canvas"]
    admin = rest(canvas, ADMIN)
    cid = make_course(admin)
    enroll(admin, cid, STUDENT[0])
    qid, questions = make_quiz(admin, cid)
    s = Session(url)
    assert s.init["result"]["serverInfo"] == {"name": "canvas-mcp-server", "version": "2.2.3"}
    tools = s.result("tools/list")["result"]["tools"]
    assert len(tools) == 69
    prof = json.loads(text_of(s.call("canvas_get_user_profile")))
    assert prof["primary_email"] == STUDENT[0]  # the agent user of test_account_email
    courses = json.loads(text_of(s.call("canvas_list_courses")))
    assert [c["id"] for c in courses] == [cid]
    assert text_of(s.call("canvas_list_courses")).startswith("[\n  {\n    \"id\": ")
    start = json.loads(text_of(s.call("canvas_start_quiz_attempt", {"course_id": cid, "quiz_id": qid})))
    qs = start["quiz_submissions"][0]
    # a second start: the 409 is answered with the existing submission
    again = json.loads(text_of(s.call("canvas_start_quiz_attempt", {"course_id": cid, "quiz_id": qid})))
    assert again["id"] == qs["id"]
    listed = json.loads(text_of(s.call("canvas_list_quiz_questions", {
        "course_id": cid, "quiz_id": qid, "quiz_submission_id": qs["id"],
        "use_submission_endpoint": True})))
    assert len(listed) == 2
    right = [next(a["id"] for a in q["answers"] if a["weight"] == 100) for q in questions]
    done = json.loads(text_of(s.call("canvas_submit_quiz_answers", {
        "course_id": cid, "quiz_id": qid, "submission_id": qs["id"],
        "validation_token": qs["validation_token"],
        "answers": [{"question_id": questions[0]["id"], "answer_id": right[0]},
                    {"question_id": questions[1]["id"], "answer_id": right[1]}]})))
    assert done["quiz_submissions"][0]["score"] == 10
    # errors as the fork words them
    err = s.call("canvas_get_course", {"course_id": 999})["result"]
    assert err["isError"] and err["content"][0]["text"] == (
        "Error: Canvas API Error (404): The specified resource does not exist.")
    err = s.call("canvas_get_course", {})["result"]
    assert err["content"][0]["text"] == "Error: Missing required field: course_id"
    err = s.call("canvas_get_dashboard")["result"]
    assert err["isError"]
    s.close()
    api.delete(f"/sandbox/canvas/{r['sandbox_id']}")


def test_restart_serves_live_canvases_again(api, canvas):
    r = acquire(api, test_account_email=STUDENT[0]).json()
    sid, url = r["sandbox_id"], r["server_urls"]["canvas"]
    admin = rest(canvas, ADMIN)
    cid = make_course(admin, "Survives")
    enroll(admin, cid, STUDENT[0])
    api.close()
    canvas.stop()
    canvas.start()
    m = re.search(r"canvas on (http://\S+)", canvas.proc.stdout.readline().decode())
    canvas.canvas = m.group(1)
    assert [c["name"] for c in rest(canvas, STUDENT[1]).get("/courses").json()] == ["Survives"]
    s = Session(url)
    courses = json.loads(text_of(s.call("canvas_list_courses")))
    assert [c["id"] for c in courses] == [cid]
    s.close()
    with canvas.client() as c:
        c.delete(f"/sandbox/canvas/{sid}")
