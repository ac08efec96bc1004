"""Request shapes of the three benchmark clients (shared/reference/benchmarks.md §5),
replayed as each client sends them."""
import io
import json
import os
import tarfile

import httpx
import pytest

import treeutil

ATLAS_SERVERS = ["filesystem", "git", "terminal", "desktop-commander", "arxiv",
                 "code-executor", "code-runner", "localmemory"]


def test_mcp_mark_client(api, tmp_root):
    # src/klavis_util.py: acquire one service, arcname='.', upload, dump, release
    r = api.post("/local-sandbox", json={"server_names": ["filesystem"],
                                         "benchmark": "MCP_Mark", "ttl_seconds": 7200})
    assert r.status_code == 201, r.text
    body = r.json()
    sid = body["local_sandbox_id"]
    assert body["benchmark"] == "MCP_Mark"
    assert body["servers"][0]["benchmark"] == "MCP_Mark"
    src = os.path.join(tmp_root, "task")
    os.makedirs(os.path.join(src, "empty"))
    with open(os.path.join(src, "f.txt"), "w") as f:
        f.write("x")
    up = api.post(f"/local-sandbox/{sid}/upload-url").json()
    assert httpx.put(up["upload_url"], content=treeutil.tar_dot(src),
                     headers={"Content-Type": "application/gzip"}).status_code == 200
    assert api.post(f"/local-sandbox/{sid}/initialize").status_code == 200
    url = api.get(f"/local-sandbox/{sid}/dump").json()["download_url"]
    with tarfile.open(fileobj=io.BytesIO(httpx.get(url).content), mode="r:gz") as tf:
        tf.extractall(os.path.join(tmp_root, "out"))  # MCP-Mark extracts without a filter
    assert os.path.isdir(os.path.join(tmp_root, "out", "empty"))
    assert api.delete(f"/local-sandbox/{sid}").status_code == 200


def profile_servers(name):
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "profiles",
                           name + ".json")) as f:
        return set(json.load(f)["servers"])


# klavis_sandbox_client.py (Klavis-AI/mcp-atlas @ bedd5525): regular sandboxes
# acquired beside the local one (a few of its 28), and its name aliases
ATLAS_REGULAR = ["calculator", "wikipedia", "github", "notion", "fetch"]
ATLAS_ALIASES = {"cli-mcp-server": "terminal", "memory": "localmemory",
                 "mcp-code-executor": "code-executor", "mcp-server-code-runner": "code-runner"}


def test_mcp_atlas_client(api, daemon):
    # acquire_all(): the local sandbox (8 servers, benchmark MCP_Atlas, no
    # ttl_seconds) and the regular sandboxes, in parallel; failures are logged
    from concurrent.futures import ThreadPoolExecutor
    from gwharness import Session

    def regular(name):
        return name, api.post(f"/sandbox/{name}", json={"benchmark": "MCP_Atlas"})

    with ThreadPoolExecutor(6) as pool:
        local = pool.submit(api.post, "/local-sandbox",
                            json={"server_names": ATLAS_SERVERS, "benchmark": "MCP_Atlas"})
        regulars = dict(pool.map(regular, ATLAS_REGULAR))
        r = local.result()
    assert r.status_code == 201, r.text
    body = r.json()
    assert [s["server_name"] for s in body["servers"]] == ATLAS_SERVERS
    hosted = profile_servers("MCP_Atlas")
    for name, resp in regulars.items():  # SaaS and online servers: not hosted
        assert resp.status_code == 404 and "serves" in resp.json()["detail"], (name, resp.text)
    # the client keeps the servers that have a URL ...
    urls = {s["server_name"]: s["mcp_server_url"] for s in body["servers"]
            if s["server_name"] and s["mcp_server_url"]}
    assert set(urls) == hosted & set(ATLAS_SERVERS)
    assert urls["terminal"].startswith(daemon.url + "/terminal/mcp/?local_sandbox_id=")
    # ... lists the tools of every one, prefixed with its ground-truth name ...
    reverse = {v: k for k, v in ATLAS_ALIASES.items()}
    tools = {}
    for name, url in sorted(urls.items()):
        s = Session(url)
        for t in s.result("tools/list")["result"]["tools"]:
            tools[f"{reverse.get(name, name)}_{t['name']}"] = name
        s.close()
    assert "filesystem_read_text_file" in tools and "git_git_log" in tools
    assert "cli-mcp-server_run_command" in tools and "memory_read_graph" in tools
    # ... and calls one by splitting at the first "_", one session per call
    for tool in ("filesystem_list_allowed_directories", "cli-mcp-server_show_security_rules"):
        server, real = tool.split("_", 1)
        s = Session(urls[ATLAS_ALIASES.get(server, server)])
        out = s.call(real)["result"]
        s.close()
        assert not out.get("isError") and "/data" in out["content"][0]["text"], out
    # default TTL of 7200 s applies: the sandbox is there and has a deadline
    ttl, deadline, created = daemon.sql(
        "SELECT ttl_seconds, deadline, created_at FROM sandboxes WHERE id=?",
        (body["local_sandbox_id"],))[0]
    assert ttl == 7200 and abs(deadline - created - 7200) < 1
    # release_all()
    assert api.delete(f"/local-sandbox/{body['local_sandbox_id']}").status_code == 200


def test_toolathlon_local_dev_client(api, tmp_root, daemon):
    # utils/klavis_sandbox.py: POST /sandbox/local_dev {"benchmark":"Toolathlon"}
    r = api.post("/sandbox/local_dev", json={"benchmark": "Toolathlon"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert set(body) == {"sandbox_id", "server_name", "server_urls", "status", "message"}
    assert body["server_name"] == "local_dev"
    sid = body["sandbox_id"]
    for name in ("filesystem", "git", "terminal", "code-executor", "pdf-tools", "excel"):
        assert body["server_urls"][name] == f"{daemon.url}/{name}/mcp/?local_sandbox_id={sid}"
    # files only, relative names (bills.tar.gz style, with macOS xattr pax keywords)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tf:
        data = "收据 one".encode()
        ti = tarfile.TarInfo("bills/收据 1.pdf")
        ti.size = len(data)
        ti.pax_headers = {"LIBARCHIVE.xattr.com.apple.quarantine": "MDA4MTs=",
                          "SCHILY.xattr.com.apple.provenance": "AQAA"}
        tf.addfile(ti, io.BytesIO(data))
    up = api.post(f"/sandbox/local_dev/{sid}/upload-url").json()
    assert httpx.put(up["upload_url"], content=buf.getvalue()).status_code == 200
    r = api.post(f"/sandbox/local_dev/{sid}/initialize")
    assert r.status_code == 200, r.text
    assert r.json()["sandbox_id"] == sid
    got = api.get(f"/sandbox/local_dev/{sid}").json()
    assert got["sandbox_id"] == sid and got["server_name"] == "local_dev"
    url = api.get(f"/sandbox/local_dev/{sid}/dump").json()["download_url"]
    dest = os.path.join(tmp_root, "out")
    treeutil.extract_data_filter(httpx.get(url).content, dest)
    with open(os.path.join(dest, "bills", "收据 1.pdf"), "rb") as f:
        assert f.read() == data
    r = api.delete(f"/sandbox/local_dev/{sid}")
    assert r.status_code == 200 and r.json()["status"] == "idle"
    assert api.get(f"/local-sandbox/{sid}").status_code == 404


# --- Toolathlon's utils/klavis_sandbox.py + utils/roles/task_agent.py, as the
# Klavis fork (Klavis-AI/Toolathlon @ 45d20b06) drives them: the local group is
# one /sandbox/local_dev acquire whose server_urls keys are mapped back to task
# names; every other needed server is its own POST /sandbox/{name} (renamed by
# TASK_SERVER_TO_SANDBOX_NAME; emails with test_account_email); a failed acquire
# is skipped; the details of google_cloud (and others) are read with
# GET /sandbox/{server_name}/{id}; release_all deletes every acquired sandbox by
# the server_name and sandbox_id of its acquire answer.
TOOLATHLON_LOCAL_DEV = {"filesystem", "git", "terminal", "python_execute", "pdf-tools",
                        "excel", "word", "pptx", "arxiv_local"}
TOOLATHLON_LOCAL_REMOTE = {"python_execute": "code-executor", "pptx": "powerpoint",
                           "arxiv_local": "arxiv"}
TOOLATHLON_SANDBOX_NAME = {"arxiv-latex": "arxiv_latex", "google_sheet": "google_sheets",
                           "wandb": "weights_and_biases", "emails": "poste_email_toolathlon"}
# task server name -> the Klavis local server that mcpbox would serve it with
# (None: a SaaS server, never hosted)
TOOLATHLON_KLAVIS = {"memory": "localmemory", "emails": "poste_email_toolathlon",
                     "canvas": "canvas", "google-cloud": "google_cloud",
                     "playwright_with_chunk": "playwright", "notion": None}


class ToolathlonKlavis:
    def __init__(self, base, key):
        self.base, self.key = base, key
        self.acquired = []
        self.failed = {}  # sandbox name -> response of a failed acquire

    def headers(self, json_body=False):
        h = {"Authorization": f"Bearer {self.key}"}
        if json_body:
            h["Content-Type"] = "application/json"
        return h

    def acquire(self, name, extra=None):
        body = {"benchmark": "Toolathlon", **(extra or {})}
        r = httpx.post(f"{self.base}/sandbox/{name}", json=body, headers=self.headers(True),
                       timeout=60)
        if r.status_code >= 400:  # resp.raise_for_status() -> caught, None
            self.failed[name] = r
            return None
        data = r.json()
        self.acquired.append(data)
        return data

    def acquire_for_servers(self, names, extra):
        overrides = {}
        local = [n for n in names if n in TOOLATHLON_LOCAL_DEV]
        if local:
            res = self.acquire("local_dev")
            if res and res.get("server_urls"):
                for n in local:
                    remote = TOOLATHLON_LOCAL_REMOTE.get(n, n)
                    if remote in res["server_urls"]:
                        overrides[n] = res["server_urls"][remote]
        for n in names:
            if n in TOOLATHLON_LOCAL_DEV:
                continue
            sname = TOOLATHLON_SANDBOX_NAME.get(n, n)
            res = self.acquire(sname, extra.get(n))
            if res and res.get("server_urls"):
                for k, url in res["server_urls"].items():
                    overrides[n if k == sname else k] = url
        return overrides

    def details(self, server_name, sid):
        r = httpx.get(f"{self.base}/sandbox/{server_name}/{sid}", headers=self.headers(),
                      timeout=30)
        r.raise_for_status()
        return r.json()

    def release_all(self):
        for sb in self.acquired:
            r = httpx.delete(f"{self.base}/sandbox/{sb['server_name']}/{sb['sandbox_id']}",
                             headers=self.headers(), timeout=30)
            r.raise_for_status()
        self.acquired.clear()


@pytest.fixture
def mail_daemon(tmp_root):
    """Toolathlon's harness writes the email server's auth_data (IMAP/SMTP) for its
    tasks: a daemon with the node's mail system, as a Toolathlon operator runs it."""
    from mailutil import MailDaemon
    d = MailDaemon(tmp_root).start()
    yield d
    d.stop()


def test_toolathlon_klavis_client(mail_daemon):
    daemon = mail_daemon
    api = daemon.client()
    from conftest import API_KEY
    from gwharness import Session
    hosted = profile_servers("Toolathlon")
    needed = ["filesystem", "terminal", "excel", "pdf-tools", "python_execute", "pptx",
              "memory", "emails", "canvas", "google-cloud", "playwright_with_chunk", "notion"]
    client = ToolathlonKlavis(daemon.url, API_KEY)
    email = "alice@mcp7.com"
    overrides = client.acquire_for_servers(needed, {"emails": {"test_account_email": email}})
    # the local group: every server this build hosts for Toolathlon, nothing else
    for task_name in ("filesystem", "terminal", "excel", "pdf-tools", "python_execute", "pptx"):
        remote = TOOLATHLON_LOCAL_REMOTE.get(task_name, task_name)
        assert (task_name in overrides) == (remote in hosted), task_name
    # the service servers: acquired when hosted, else a 404 that names what is
    for task_name, klavis in TOOLATHLON_KLAVIS.items():
        sname = TOOLATHLON_SANDBOX_NAME.get(task_name, task_name)
        if klavis in hosted:
            assert task_name in overrides, (task_name, client.failed.get(sname))
            assert overrides[task_name].startswith(f"{daemon.url}/{klavis}/mcp/?local_sandbox_id=")
        else:
            assert task_name not in overrides
            r = client.failed[sname]
            assert r.status_code == 404, r.text
            detail = r.json()["detail"]
            assert set(detail.rsplit(": ", 1)[1].split(", ")) == hosted, detail
            if klavis:
                assert f"'{klavis}' is not hosted" in detail, detail
    # every URL handed out answers tools/list (the harness connects to all of them,
    # and preprocess/eval open more sessions through KLAVIS_MCP_SERVER_URLS)
    for task_name, url in overrides.items():
        s = Session(url)
        assert s.result("tools/list")["result"]["tools"], task_name
        s.close()
    # task_agent.py reads each acquired sandbox's details by its answer's server_name
    names = {sb["server_name"] for sb in client.acquired}
    assert "local_dev" in names and "localmemory" in names
    for sb in client.acquired:
        d = client.details(sb["server_name"], sb["sandbox_id"])
        assert d["sandbox_id"] == sb["sandbox_id"] and d["server_name"] == sb["server_name"]
        assert "auth_data" in d and "metadata" in d
        if sb["server_name"] == "google_cloud":
            assert isinstance(d["auth_data"], dict)  # written to google_cloud_credentials.json
        if sb["server_name"] == "poste_email_toolathlon":
            assert isinstance(d["auth_data"], dict)  # IMAP/SMTP connection info
    # memory's own sandbox takes Klavis's LocalMemoryData JSON and dumps it back
    mem = next(sb for sb in client.acquired if sb["server_name"] == "localmemory")
    graph = {"entities": [{"name": "Bob", "entityType": "person", "observations": ["x"]}],
             "relations": []}
    r = api.post(f"/sandbox/memory/{mem['sandbox_id']}/initialize", json=graph)
    assert r.status_code == 200, r.text
    s = Session(overrides["memory"])
    assert '"Bob"' in s.call("read_graph")["result"]["content"][0]["text"]
    s.close()
    dump = api.get(f"/sandbox/memory/{mem['sandbox_id']}/dump").json()
    assert dump["data"] == graph and dump["server_name"] == "localmemory"
    # release after evaluation: every sandbox, by the acquire answer's names
    client.release_all()
    assert api.get("/local-sandbox").json()["total_count"] == 0
    assert api.get("/sandbox").json()["total_count"] == 0
