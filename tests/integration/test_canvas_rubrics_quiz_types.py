"""Canvas (src/canvas) contract tests for rubrics (creation with criteria and
ratings, association with an assignment, the assignment's rubric and
rubric_settings, grading by rubric assessment, reading back with
include[]=rubric_assessment / assessments / associations, errors) and for
the scoring of the quiz question types beyond multiple choice as Canvas
scores them (matching, fill in multiple blanks, multiple dropdowns, multiple
answers' partial credit), against Canvas's API documentation."""
import pytest

from test_canvas import (ADMIN, STUDENT, STUDENT2, TEACHER, acquire, canvas, api,  # noqa: F401
                         enroll, make_course, rest, user_id)


@pytest.fixture
def course(api, canvas):
    sid = acquire(api, test_account_email=STUDENT[0]).json()["sandbox_id"]
    admin = rest(canvas, ADMIN)
    cid = make_course(admin)
    enroll(admin, cid, STUDENT[0])
    enroll(admin, cid, STUDENT2[0])
    enroll(admin, cid, TEACHER[0], "TeacherEnrollment")
    yield cid
    api.delete(f"/sandbox/canvas/{sid}")


def test_rubric_create_associate_assess_read_back(canvas, course):
    cid = course
    teacher, student = rest(canvas, TEACHER[1]), rest(canvas, STUDENT[1])
    a = teacher.post(f"/courses/{cid}/assignments", json={"assignment": {
        "name": "Essay", "points_possible": 10, "published": True,
        "submission_types": ["online_text_entry"]}}).json()
    # a form body, as Rails reads rubric[criteria][0][ratings][1][points]
    form = {
        "rubric[title]": "Essay rubric", "rubric[free_form_criterion_comments]": "true",
        "rubric[criteria][0][description]": "Thesis",
        "rubric[criteria][0][ratings][0][description]": "Weak",
        "rubric[criteria][0][ratings][0][points]": "1",
        "rubric[criteria][0][ratings][1][description]": "Strong",
        "rubric[criteria][0][ratings][1][points]": "6",
        "rubric[criteria][1][description]": "Grammar", "rubric[criteria][1][points]": "4",
        "rubric_association[association_type]": "Assignment",
        "rubric_association[association_id]": str(a["id"]),
        "rubric_association[use_for_grading]": "true",
        "rubric_association[purpose]": "grading",
    }
    r = teacher.post(f"/courses/{cid}/rubrics", data=form)
    assert r.status_code == 200, r.text
    body = r.json()
    rub, assoc = body["rubric"], body["rubric_association"]
    assert rub["title"] == "Essay rubric" and rub["points_possible"] == 10
    assert rub["context_type"] == "Course" and rub["context_id"] == cid
    assert rub["free_form_criterion_comments"] is True
    thesis, grammar = rub["data"]
    assert thesis["points"] == 6 and [x["points"] for x in thesis["ratings"]] == [6, 1]
    assert [x["description"] for x in thesis["ratings"]] == ["Strong", "Weak"]
    assert all(x["criterion_id"] == thesis["id"] for x in thesis["ratings"])
    # no ratings given: Full Marks / No Marks
    assert [(x["description"], x["points"]) for x in grammar["ratings"]] == [
        ("Full Marks", 4), ("No Marks", 0)]
    assert assoc == {**assoc, "rubric_id": rub["id"], "association_id": a["id"],
                     "association_type": "Assignment", "use_for_grading": True,
                     "purpose": "grading"}
    # the assignment carries it, also for students
    got = student.get(f"/courses/{cid}/assignments/{a['id']}").json()
    assert got["use_rubric_for_grading"] is True
    assert got["rubric_settings"]["id"] == rub["id"]
    assert got["rubric_settings"]["points_possible"] == 10
    assert [c["description"] for c in got["rubric"]] == ["Thesis", "Grammar"]
    assert "criterion_id" not in got["rubric"][0]["ratings"][0]
    # listed and read back
    assert [x["id"] for x in teacher.get(f"/courses/{cid}/rubrics").json()] == [rub["id"]]
    one = teacher.get(f"/courses/{cid}/rubrics/{rub['id']}",
                      params=[("include[]", "associations")]).json()
    assert one["associations"][0]["association_id"] == a["id"] and "assessments" not in one
    # a student cannot manage rubrics; a missing one is Canvas's 404
    assert student.post(f"/courses/{cid}/rubrics", json={"rubric": {"title": "x"}}).status_code == 401
    assert teacher.get(f"/courses/{cid}/rubrics/99999").status_code == 404
    # no title: Canvas's blank error; an assignment of no course: 404
    assert teacher.post(f"/courses/{cid}/rubrics", json={"rubric": {}}).status_code == 400
    assert teacher.post(f"/courses/{cid}/rubrics", json={
        "rubric": {"title": "t"}, "rubric_association": {
            "association_type": "Assignment", "association_id": 99999}}).status_code == 404
    # the student submits; the teacher grades with the rubric
    student.post(f"/courses/{cid}/assignments/{a['id']}/submissions", json={
        "submission": {"submission_type": "online_text_entry", "body": "my essay"}})
    me = user_id(rest(canvas, ADMIN), STUDENT[0])
    strong = thesis["ratings"][0]["id"]
    g = teacher.put(f"/courses/{cid}/assignments/{a['id']}/submissions/{me}",
                    params=[("include[]", "rubric_assessment")], json={"rubric_assessment": {
                        thesis["id"]: {"rating_id": strong, "comments": "clear"},
                        grammar["id"]: {"points": 2.5}}})
    assert g.status_code == 200, g.text
    assert g.json()["score"] == 8.5 and g.json()["workflow_state"] == "graded"
    assert g.json()["rubric_assessment"] == {
        thesis["id"]: {"rating_id": strong, "comments": "clear", "points": 6.0},
        grammar["id"]: {"rating_id": None, "comments": "", "points": 2.5}}
    # the student reads its own assessment back
    mine = student.get(f"/courses/{cid}/assignments/{a['id']}/submissions/self",
                       params=[("include[]", "rubric_assessment")]).json()
    assert mine["score"] == 8.5 and mine["rubric_assessment"][thesis["id"]]["points"] == 6
    # without the include there is none; an unassessed submission has no key
    assert "rubric_assessment" not in student.get(
        f"/courses/{cid}/assignments/{a['id']}/submissions/self").json()
    other = user_id(rest(canvas, ADMIN), STUDENT2[0])
    assert "rubric_assessment" not in teacher.get(
        f"/courses/{cid}/assignments/{a['id']}/submissions/{other}",
        params=[("include[]", "rubric_assessment")]).json()
    # the rubric's assessments, in full or comments only
    full = teacher.get(f"/courses/{cid}/rubrics/{rub['id']}",
                       params=[("include[]", "assessments")]).json()["assessments"]
    assert len(full) == 1 and full[0]["score"] == 8.5
    assert full[0]["artifact_type"] == "Submission" and full[0]["assessment_type"] == "grading"
    assert full[0]["rubric_association_id"] == assoc["id"]
    short = teacher.get(f"/courses/{cid}/rubrics/{rub['id']}", params=[
        ("include[]", "graded_assessments"), ("style", "comments_only")]).json()["assessments"]
    assert short[0]["comments"] == ["clear"] and "data" not in short[0]
    # the assessments route of the association grades the second student
    r = teacher.post(f"/courses/{cid}/rubric_associations/{assoc['id']}/rubric_assessments", json={
        "rubric_assessment": {"user_id": other, "assessment_type": "grading",
                              thesis["id"]: {"points": 1}, grammar["id"]: {"points": 4}}})
    assert r.status_code == 200, r.text
    assert r.json()["score"] == 5 and r.json()["data"][0]["rating_id"] is None
    assert teacher.get(f"/courses/{cid}/assignments/{a['id']}/submissions/{other}").json()["score"] == 5
    # a new grading rubric replaces the assignment's old one; delete removes it
    r2 = teacher.post(f"/courses/{cid}/rubrics", json={
        "rubric": {"title": "Short", "criteria": [{"description": "All", "points": 10}]},
        "rubric_association": {"association_type": "Assignment", "association_id": a["id"],
                               "purpose": "grading"}}).json()
    assert r2["rubric"]["points_possible"] == 10 and r2["rubric_association"]["use_for_grading"] is False
    got = teacher.get(f"/courses/{cid}/assignments/{a['id']}").json()
    assert got["rubric_settings"]["title"] == "Short" and got["use_rubric_for_grading"] is False
    # update: the title and the criteria
    up = teacher.put(f"/courses/{cid}/rubrics/{r2['rubric']['id']}", json={
        "rubric": {"title": "Shorter", "criteria": {"0": {"description": "A", "points": 3},
                                                    "1": {"description": "B", "points": 2}}}})
    assert up.json()["rubric"]["title"] == "Shorter" and up.json()["rubric"]["points_possible"] == 5
    assert teacher.delete(f"/courses/{cid}/rubrics/{r2['rubric']['id']}").status_code == 200
    assert "rubric" not in teacher.get(f"/courses/{cid}/assignments/{a['id']}").json()
    # a bookmark rubric of the course (no association given)
    bm = teacher.post(f"/courses/{cid}/rubrics", json={"rubric": {"title": "Spare"}}).json()
    assert bm["rubric_association"]["association_type"] == "Course"
    assert bm["rubric_association"]["purpose"] == "bookmark"
    assert bm["rubric_association"]["association_id"] == cid


def take(canvas, cid, qid, token, answers):
    """A student's attempt: start, answer {question id: answer}, complete; its score."""
    s = rest(canvas, token)
    qs = s.post(f"/courses/{cid}/quizzes/{qid}/submissions").json()["quiz_submissions"][0]
    r = s.post(f"/quiz_submissions/{qs['id']}/questions", json={
        "attempt": qs["attempt"], "validation_token": qs["validation_token"],
        "quiz_questions": [{"id": k, "answer": v} for k, v in answers.items()]})
    assert r.status_code == 200, r.text
    r = s.post(f"/courses/{cid}/quizzes/{qid}/submissions/{qs['id']}/complete",
               json={"attempt": qs["attempt"], "validation_token": qs["validation_token"]})
    assert r.status_code == 200, r.text
    return r.json()["quiz_submissions"][0]["score"]


def test_quiz_types_scored_as_canvas_scores_them(canvas, course):
    cid = course
    admin = rest(canvas, ADMIN)
    quiz = admin.post(f"/courses/{cid}/quizzes", json={"quiz": {
        "title": "Mixed", "allowed_attempts": -1, "scoring_policy": "keep_latest"}}).json()
    qid = quiz["id"]

    def question(**q):
        r = admin.post(f"/courses/{cid}/quizzes/{qid}/questions", json={"question": q})
        assert r.status_code == 200, r.text
        return r.json()

    match = question(question_name="M", question_text="Pair them", question_type="matching_question",
                     points_possible=4, matching_answer_incorrect_matches="Neptune\nPluto",
                     answers=[{"answer_match_left": "Red", "answer_match_right": "Mars"},
                              {"answer_match_left": "Ringed", "answer_match_right": "Saturn"}])
    blanks = question(question_name="F", question_text="[c1] and [c2]",
                      question_type="fill_in_multiple_blanks_question", points_possible=3,
                      answers=[{"answer_text": "red", "blank_id": "c1"},
                               {"answer_text": "Crimson", "blank_id": "c1"},
                               {"answer_text": "blue", "blank_id": "c2"}])
    drops = question(question_name="D", question_text="[a] [b]",
                     question_type="multiple_dropdowns_question", points_possible=2,
                     answers=[{"answer_text": "x", "blank_id": "a", "answer_weight": 100},
                              {"answer_text": "y", "blank_id": "a", "answer_weight": 0},
                              {"answer_text": "z", "blank_id": "b", "answer_weight": 100}])
    multi = question(question_name="A", question_text="Primes?",
                     question_type="multiple_answers_question", points_possible=6,
                     answers=[{"answer_text": "2", "answer_weight": 100},
                              {"answer_text": "3", "answer_weight": 100},
                              {"answer_text": "4", "answer_weight": 0}])
    admin.put(f"/courses/{cid}/quizzes/{qid}", json={"quiz": {"published": True}})
    # the teacher's view: pairs and every choice, distractors after the answers
    assert [m["text"] for m in match["matches"]] == ["Mars", "Saturn", "Neptune", "Pluto"]
    assert len({m["match_id"] for m in match["matches"]}) == 4
    assert [(x["left"], x["right"]) for x in match["answers"]] == [("Red", "Mars"), ("Ringed", "Saturn")]
    assert match["matching_answer_incorrect_matches"] == "Neptune\nPluto"
    assert all(x["weight"] == 100 for x in blanks["answers"])  # every blank answer is a right one
    # the student's view hides the pairs
    s = rest(canvas, STUDENT[1])
    qs = s.post(f"/courses/{cid}/quizzes/{qid}/submissions").json()["quiz_submissions"][0]
    seen = s.get(f"/quiz_submissions/{qs['id']}/questions").json()["quiz_submission_questions"]
    m_seen = next(q for q in seen if q["id"] == match["id"])
    assert "right" not in m_seen["answers"][0] and len(m_seen["matches"]) == 4
    s.post(f"/courses/{cid}/quizzes/{qid}/submissions/{qs['id']}/complete",
           json={"attempt": 1, "validation_token": qs["validation_token"]})
    mid = {m["text"]: m["match_id"] for m in match["matches"]}
    (red, ringed), (x, y, z), (p2, p3, p4) = (
        [a["id"] for a in match["answers"]], [a["id"] for a in drops["answers"]],
        [a["id"] for a in multi["answers"]])
    right = {match["id"]: [{"answer_id": red, "match_id": mid["Mars"]},
                           {"answer_id": ringed, "match_id": mid["Saturn"]}],
             blanks["id"]: {"c1": "  CRIMSON ", "c2": "blue"},
             drops["id"]: {"a": x, "b": z},
             multi["id"]: [p2, p3]}
    assert take(canvas, cid, qid, STUDENT[1], right) == 15
    # partial credit: half the pairs (a distractor), one blank of two, one dropdown of two,
    # multiple answers 2 right + 1 wrong of 2 right = 6 - 3
    half = {match["id"]: [{"answer_id": red, "match_id": mid["Mars"]},
                          {"answer_id": ringed, "match_id": mid["Pluto"]}],
            blanks["id"]: {"c1": "green", "c2": "Blue"},
            drops["id"]: {"a": y, "b": z},
            multi["id"]: [p2, p3, p4]}
    assert take(canvas, cid, qid, STUDENT[1], half) == 2 + 1.5 + 1 + 3
    # nothing right: one wrong answer only docks to 0, never below
    wrong = {match["id"]: [{"answer_id": red, "match_id": mid["Neptune"]}],
             blanks["id"]: {"c1": "", "c2": "red"}, drops["id"]: {"a": y},
             multi["id"]: [p4]}
    assert take(canvas, cid, qid, STUDENT[1], wrong) == 0
    # hostile answers score 0 and break nothing
    junk = {match["id"]: [1, "x", {"answer_id": {}}], blanks["id"]: [None], drops["id"]: "a",
            multi["id"]: {"a": 1}}
    assert take(canvas, cid, qid, STUDENT[1], junk) == 0
    # the teacher's list sees the latest kept
    subs = admin.get(f"/courses/{cid}/quizzes/{qid}/submissions").json()["quiz_submissions"]
    assert subs[0]["kept_score"] == 0
