"""Canvas (src/canvas): a file's `url` downloads on the graders' port, as
Toolathlon's graders fetch a submission's attachment (canvas-submit-late-work's
check_remote.py: GET attachment.url with the student's bearer token): the
3-step upload as a student, a submission with the file, then
GET /files/:id/download by who may read it (the owner, the course's
teacher, an admin, anyone with the file's verifier) and 404 for the others."""
import httpx

from test_canvas import ADMIN, STUDENT, STUDENT2, TEACHER, canvas, api, rest  # noqa: F401
from test_canvas_rubrics_quiz_types import course  # noqa: F401

BODY = "# Assignment 4\n\nThe long take in *Touch of Evil*.\n".encode()


def test_file_download_as_graders_fetch_it(canvas, course):
    cid = course
    teacher, student = rest(canvas, TEACHER[1]), rest(canvas, STUDENT[1])
    a = teacher.post(f"/courses/{cid}/assignments", json={"assignment": {
        "name": "Assignment 4", "published": True, "submission_types": ["online_upload"]}}).json()
    step1 = student.post("/users/self/files", json={
        "name": "2201210606_FILM101_Assignment4.md", "size": len(BODY), "content_type": "text/markdown"})
    assert step1.status_code == 200, step1.text
    up = step1.json()
    step2 = httpx.post(up["upload_url"], data=up["upload_params"],
                       files={"file": ("2201210606_FILM101_Assignment4.md", BODY)}, timeout=30)
    assert step2.status_code in (200, 201), step2.text
    fid = step2.json()["id"]
    sub = student.post(f"/courses/{cid}/assignments/{a['id']}/submissions", json={
        "submission": {"submission_type": "online_upload", "file_ids": [fid]}}).json()
    url = student.get(f"/courses/{cid}/assignments/{a['id']}/submissions/self").json()["attachments"][0]["url"]
    # URLs in bodies name the origin the request came to (the test's port,
    # not the default 10001), so the grader's GET of `url` reaches this Canvas
    assert url.startswith(canvas.canvas + "/files/%d/download?" % fid), url
    assert a["html_url"] == "%s/courses/%d/assignments/%d" % (canvas.canvas, cid, a["id"]), a
    # a Host header unfit for URLs gets the default origin
    odd = httpx.get(f"{canvas.canvas}/api/v1/courses/{cid}/assignments/{a['id']}",
                    headers={"Authorization": "Bearer " + TEACHER[1], "Host": "x\"y<z>"}, timeout=30)
    assert odd.status_code == 200 and odd.json()["html_url"].startswith("http://localhost:10001/"), odd.text

    def get(token, u=url):
        return httpx.get(u, headers={"Authorization": "Bearer " + token} if token else {}, timeout=30)

    # the grader's fetch with the student's own token; the teacher; an admin
    for token in (STUDENT[1], TEACHER[1], ADMIN):
        r = get(token)
        assert r.status_code == 200 and r.content == BODY, (token, r.status_code, r.text)
    assert r.headers["content-type"].startswith("text/markdown")
    assert 'filename="2201210606_FILM101_Assignment4.md"' in r.headers["content-disposition"]
    # the verifier alone is enough (Canvas's public file links)
    assert get(None).content == BODY
    # another student of the course with a wrong verifier: no; no verifier: no
    bare = url.split("?")[0]
    assert get(STUDENT2[1], bare + "?verifier=nope").status_code == 404
    assert get(None, bare).status_code == 404
    assert get("not-a-token", bare).status_code == 401
    # hostile ids and paths answer, the daemon serves on
    for path in ("/files/0/download", "/files/99999999999999999999/download", "/files/1/download/x",
                 "/files//download"):
        assert httpx.get(canvas.canvas + path, timeout=30).status_code == 404, path
    # a query argument that is not UTF-8 (or holds %00) is a bad request, as Canvas's Rails
    # answers an invalid %-encoding, before any handler reads it
    r = httpx.get(canvas.canvas + "/files/1/download?verifier=%00%ff", timeout=30)
    assert r.status_code == 400 and "not valid UTF-8" in r.text, r.text
    assert sub["workflow_state"] == "submitted"
