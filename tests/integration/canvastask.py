"""What the Toolathlon Canvas task tests (test_canvas_task_*.py) share: a
daemon per module with the task's users file and the graders' port on a free
port, REST clients with a task's bearer tokens, the preprocess scripts'
user lookup and enrollment, and the sandbox a task's agent works in."""
import os
import re
import tempfile

import httpx
import pytest

from conftest import Daemon, sweep_sandboxes


def daemon_fixture(users_json):
    """A module-scoped `canvas` fixture: the daemon, its Canvas URL as .canvas."""
    @pytest.fixture(scope="module")
    def canvas():
        root = tempfile.TemporaryDirectory(prefix="mcpbox-test-")
        d = Daemon(os.path.join(root.name, "var"), extra_args=[
            "--canvas-listen", "127.0.0.1:0", "--canvas-users", users_json]).start()
        m = re.search(r"canvas on (http://\S+)", d.proc.stdout.readline().decode())
        d.canvas = m.group(1)
        yield d
        d.stop()
        sweep_sandboxes(root.name)
        root.cleanup()
    return canvas


def rest(d, token):
    """A client of the graders' port with a bearer token (paths start /api/v1)."""
    return httpx.Client(base_url=d.canvas, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def user_id(admin, email):
    """The preprocess scripts' find_user_by_email: the account's user search."""
    users = admin.get("/api/v1/accounts/1/users", params={"search_term": email}).json()
    return next(u["id"] for u in users if u.get("login_id") == email or u.get("email") == email)


def enroll(admin, cid, email, role="StudentEnrollment"):
    r = admin.post(f"/api/v1/courses/{cid}/enrollments", json={"enrollment": {
        "user_id": user_id(admin, email), "type": role, "enrollment_state": "active"}})
    assert r.status_code == 200, r.text


def acquire(d, agent_email):
    """A Toolathlon Canvas sandbox whose agent user is agent_email:
    (api client, sandbox id, the canvas MCP server's URL)."""
    api = d.client()
    r = api.post("/sandbox/canvas", json={"benchmark": "Toolathlon", "test_account_email": agent_email})
    assert r.status_code == 201, r.text
    return api, r.json()["sandbox_id"], r.json()["server_urls"]["canvas"]


def release(api, sid):
    api.delete(f"/sandbox/canvas/{sid}")
    api.close()
