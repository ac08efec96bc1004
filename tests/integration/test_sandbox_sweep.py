"""Nothing a stopped daemon left running is out of reach (issue 12 item 14):
`mcpbox sandbox sweep DIR` tears sandboxes down even when DIR/run is gone
(an `rm -rf DIR` that stopped at the busy workspace mounts), from the mount
table and the cgroup tree; `mcpbox serve --release-on-exit` releases every
sandbox when it stops."""
import glob
import os
import subprocess

import pytest

from conftest import MCPBOX_BIN, Daemon

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root")


def mounts_under(path):
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if line.split()[4].startswith(path + "/")]


def cgroups_of(sid):
    return glob.glob("/sys/fs/cgroup/*/mcpbox/*." + sid) + glob.glob("/sys/fs/cgroup/mcpbox/*." + sid)


def acquire(api, servers=("filesystem",)):
    r = api.post("/local-sandbox", json={"server_names": list(servers), "ttl_seconds": 3600})
    assert r.status_code in (200, 201), r.text
    return r.json()["local_sandbox_id"]


def init_alive(sid):
    for procs in cgroups_of(sid):
        try:
            with open(os.path.join(procs, "cgroup.procs")) as f:
                if f.read().strip():
                    return True
        except OSError:
            pass
    return False


def test_sweep_when_run_dir_is_gone(tmp_root):
    data = os.path.join(tmp_root, "var")
    d = Daemon(data).start()
    with d.client() as api:
        sids = [acquire(api), acquire(api, ("filesystem", "git"))]
    d.kill()
    assert all(init_alive(s) for s in sids)
    # rm -rf empties the workspaces but cannot remove their mount points
    p = subprocess.run(["rm", "-rf", data], capture_output=True)
    assert p.returncode != 0 and b"busy" in p.stderr.lower(), p.stderr
    assert not os.path.exists(os.path.join(data, "run"))
    assert len(mounts_under(data)) == 2
    assert all(cgroups_of(s) for s in sids)

    p = subprocess.run([MCPBOX_BIN, "sandbox", "sweep", data], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert b"sweeping from the mount table" in p.stderr
    assert mounts_under(data) == []
    for s in sids:
        assert cgroups_of(s) == [], s
    subprocess.run(["rm", "-rf", data], check=True)


def test_sweep_with_a_relative_dir_and_nothing_left(tmp_root):
    data = os.path.join(tmp_root, "var")
    d = Daemon(data).start()
    with d.client() as api:
        sid = acquire(api)
    d.kill()
    subprocess.run(["rm", "-rf", os.path.join(data, "run")], check=True)
    p = subprocess.run([MCPBOX_BIN, "sandbox", "sweep", "var"], cwd=tmp_root,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert mounts_under(data) == [] and cgroups_of(sid) == []
    # a second sweep finds nothing and says so without failing
    p = subprocess.run([MCPBOX_BIN, "sandbox", "sweep", data], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr


def test_serve_release_on_exit(tmp_root):
    data = os.path.join(tmp_root, "var")
    d = Daemon(data, extra_args=["--release-on-exit"]).start()
    with d.client() as api:
        sids = [acquire(api), acquire(api, ("filesystem", "localmemory"))]
    d.stop()  # SIGTERM; asserts a clean exit
    assert mounts_under(data) == []
    for s in sids:
        assert cgroups_of(s) == []
        assert not os.path.exists(os.path.join(data, "run", s))
    rows = d.sql("SELECT status FROM sandboxes")
    assert rows and all(r[0] == "released" for r in rows), rows
    assert "released 2 sandboxes before exiting" in d.log()
    # without the flag they outlive the daemon (and are adopted again)
    d = Daemon(data, db=d.db).start()
    with d.client() as api:
        sid = acquire(api)
    d.stop()
    assert cgroups_of(sid)
    assert len(mounts_under(data)) == 1
