"""`mcpbox mcp canvas --db FILE` (the Canvas core in-process, no daemon): the
tools the sandbox tests leave out, through the fork's texts: files with the
3-step upload (upload_file_from_path, submit_assignment_with_file), grades,
conversations, account users' sessions and paging, reports, and the fork's
quirks (submit_grade's and submit_assignment_with_file's dropped comments)."""
import json
import os

import pytest

from conftest import MCPBOX_BIN
from mcp_stdio import StdioClient

USERS = os.path.join(os.path.dirname(__file__), "..", "data", "canvas", "users_small.json")


def text(r):
    return r["content"][0].get("text")


def data(r):
    assert not r.get("isError"), r
    return json.loads(text(r))


@pytest.fixture
def env(tmp_path):
    db = str(tmp_path / "canvas.db")
    (tmp_path / "essay.txt").write_text("my essay\n")
    admin = StdioClient([MCPBOX_BIN, "mcp", "canvas", "--db", db, "--users", USERS,
                         "--token", "mcpcanvasadmintoken1"], cwd=str(tmp_path))
    admin.initialize()
    yield tmp_path, db, admin
    admin.close()


def as_user(tmp_path, db, token):
    c = StdioClient([MCPBOX_BIN, "mcp", "canvas", "--db", db, "--token", token], cwd=str(tmp_path))
    c.initialize()
    return c


def test_files_grades_and_quirks(env):
    tmp, db, admin = env
    health = data(admin.call("canvas_health_check", {}))
    assert health["status"] == "ok" and health["user"]["name"] == "MCP Canvas Admin 1"
    c = data(admin.call("canvas_create_course", {"account_id": 1, "name": "Writing",
                                                 "course_code": "W1"}))
    cid = c["id"]
    admin.call("canvas_update_course", {"course_id": cid, "event": "offer"})
    enr = data(admin.call("canvas_enroll_user", {"course_id": cid, "user_id": 1}))
    assert enr["enrollment_state"] == "active" and enr["role"] == "StudentEnrollment"
    a = data(admin.call("canvas_create_assignment", {
        "course_id": cid, "name": "Essay", "points_possible": 10, "published": True,
        "submission_types": ["online_upload"], "allowed_extensions": ["txt"]}))
    assert a["allowed_extensions"] == ["txt"]
    student = as_user(tmp, db, "canvas_token_test_ronald1")
    try:
        f = data(student.call("canvas_upload_file_from_path", {"file_path": "essay.txt"}))
        assert f["display_name"] == "essay.txt" and f["size"] == 9
        f2 = data(student.call("canvas_upload_file_from_path", {"file_path": "essay.txt"}))
        assert f2["display_name"] == "essay-1.txt"  # on_duplicate: rename
        r = student.call("canvas_upload_file_from_path", {"file_path": "missing.txt"})
        assert r["isError"] and text(r).startswith("Error: ENOENT: no such file or directory, stat")
        sub = data(student.call("canvas_submit_assignment_with_file", {
            "course_id": cid, "assignment_id": a["id"], "file_path": "essay.txt",
            "comment": "dropped by the fork"}))
        assert sub["submission_type"] == "online_upload" and sub["workflow_state"] == "submitted"
        assert sub["attachments"][0]["display_name"] == "essay-2.txt"
        assert sub["submission_comments"] == []
        g = data(admin.call("canvas_submit_grade", {"course_id": cid, "assignment_id": a["id"],
                                                     "user_id": 1, "grade": 8, "comment": "ok"}))
        assert g["score"] == 8 and g["submission_comments"] == []  # the comment sits in submission
        mine = data(student.call("canvas_get_submission", {"course_id": cid, "assignment_id": a["id"]}))
        assert mine["grade"] == "8" and mine["assignment"]["name"] == "Essay"
        grades = data(admin.call("canvas_get_course_grades", {"course_id": cid}))
        assert grades[0]["grades"]["current_score"] == 80
        conv = data(student.call("canvas_create_conversation", {
            "recipients": [str(enr["user_id"] + 8)], "body": "hello", "subject": "s"}))
        assert conv[0]["subject"] == "s"
        r = student.call("canvas_get_dashboard", {})
        assert text(r) == ("Error: Canvas API Error (404): The specified resource does not exist.")
        up = data(student.call("canvas_get_upcoming_assignments", {}))
        assert up == []  # no due date
    finally:
        student.close()
    r = admin.call("canvas_delete_course", {"course_id": cid})
    assert text(r) == f"Successfully deleted course {cid}"
    assert data(admin.call("canvas_list_account_courses", {"account_id": 1})) == []


def test_account_user_sessions(env):
    _, _, admin = env
    out = text(admin.call("canvas_list_account_users", {"account_id": 1, "per_page": 4}))
    assert out.startswith("Users (Page 1):\n\n[\n  {")
    sid = out.split("Session ID: ")[1].split("\n")[0]
    assert sid.startswith("sess_")
    assert "Total pages: 3\n" in out and f'Next page: Use {{"session_id": "{sid}", "page": 2}}' in out
    out3 = text(admin.call("canvas_list_account_users", {"session_id": sid, "page": 3}))
    assert out3.startswith("Users (Page 3):") and "Previous page" in out3 and "Next page" not in out3
    assert len(json.loads(out3.split("\n\n")[1].split("\n\n===")[0])) == 3
    r = admin.call("canvas_list_account_users", {"session_id": "sess_nope"})
    assert text(r) == ("Error: Session sess_nope not found or expired. Please start a new search.")
    rep = data(admin.call("canvas_create_account_report", {"account_id": 1,
                                                             "report": "provisioning_csv"}))
    assert rep["status"] == "complete" and rep["report"] == "provisioning_csv"
    r = admin.call("canvas_no_such_tool", {})
    assert r["isError"] and text(r) == "Error: Unknown tool: canvas_no_such_tool"



def test_modules_and_pages_through_the_tools(env):
    """Tool side of modules and pages (their creation and the rest of their
    routes are in tests/unit/test_canvas.c)."""
    _, _, admin = env
    cid = data(admin.call("canvas_create_course", {"account_id": 1, "name": "M",
                                                   "course_code": "M1"}))["id"]
    assert data(admin.call("canvas_list_modules", {"course_id": cid})) == []
    r = admin.call("canvas_get_module", {"course_id": cid, "module_id": 5})
    assert text(r) == "Error: Canvas API Error (404): The specified resource does not exist."
    assert data(admin.call("canvas_list_pages", {"course_id": cid})) == []
    r = admin.call("canvas_mark_module_item_complete", {"course_id": cid, "module_id": 1,
                                                         "item_id": 1})
    assert r["isError"]
