"""The server executables (docs/ARCHITECTURE.md, "Server executables"):
beside each mcpbox the build makes one mcpbox-GROUP per link group of
src/servers/servers.c, holding only that group's servers and linked with
only the libraries their code reaches, and mcpbox-zygote (the sandbox layer
alone), which every sandbox's init is cloned from. Checked here: every
registered server is in exactly one group; each group executable answers
initialize and tools/list for each of its servers exactly as `mcpbox mcp
NAME` does, with every preset's own options; the light group (Atlas's 8
servers) loads none of the daemon's libraries; and a sandbox runs its native
servers from the group executables (profiles still say `${MCPBOX} mcp NAME`)
while its init comes from mcpbox-zygote."""
import glob
import os
import re
import subprocess

import pytest

from conftest import MCPBOX_BIN
from procutil import sandbox_pids
from test_tool_surfaces import load, make_data, surface

BIN_DIR = os.path.dirname(os.path.abspath(MCPBOX_BIN))
PROFILES = os.path.join(os.path.dirname(__file__), "..", "..", "profiles")
ATLAS = ["filesystem", "git", "terminal", "desktop-commander", "arxiv", "code-executor",
         "code-runner", "localmemory"]
# What a server executable of the light group may load: the libraries of the
# servers' job, libc, and the sanitizer runtimes of a test build.
LIGHT_OK = re.compile(r"^lib(jansson|sqlite3|pcre2-8|expat|m|c|asan|ubsan|tsan|stdc\+\+|gcc_s"
                      r"|pthread|dl|rt)\.so")
DAEMON_ONLY = ("libmicrohttpd", "libpq", "libcurl", "libcrypto", "libssl", "libxml2",
               "libarchive", "libseccomp", "libcap", "libgnutls", "libzip", "libharfbuzz")


def groups():
    exes = sorted(glob.glob(os.path.join(BIN_DIR, "mcpbox-*")))
    return {os.path.basename(p)[len("mcpbox-"):]: p for p in exes
            if not p.endswith("-zygote") and os.access(p, os.X_OK)}


def listing(argv):
    out = subprocess.run([*argv, "mcp", "--list"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout)


def static(path):
    """A static executable: no program interpreter, so it loads nothing (the
    release build links the light group and the zygote so, not PIE: Makefile)."""
    out = subprocess.run(["readelf", "-l", path], capture_output=True, text=True, check=True)
    return "INTERP" not in out.stdout and not needed(path)


def test_every_server_is_in_exactly_one_group():
    g = groups()
    assert {"light", "office", "services"} <= set(g), g
    everything = listing([MCPBOX_BIN])
    seen = {}
    for name, exe in g.items():
        for server in listing([exe]):
            assert server not in seen, f"{server} is in {seen[server]} and {name}"
            seen[server] = name
    assert sorted(seen) == sorted(everything)
    for server in ATLAS:
        assert seen[server] == "light", (server, seen[server])


def test_light_and_zygote_executables_load_none_of_the_daemons_libraries():
    if not static(groups()["light"]):
        light = needed(groups()["light"])
        assert light and all(LIGHT_OK.match(lib) for lib in light), light
    zyg_path = os.path.join(BIN_DIR, "mcpbox-zygote")
    if not static(zyg_path):
        zyg = needed(zyg_path)
        # the sandbox layer's own two (seccomp, capabilities) and nothing else of the daemon's
        sandbox_libs = ("libseccomp", "libcap")
        assert not [lib for lib in zyg if lib.startswith(DAEMON_ONLY) and
                    not lib.startswith(sandbox_libs)], zyg
        assert [lib for lib in zyg if lib.startswith(sandbox_libs)], zyg
    full = needed(MCPBOX_BIN)
    assert any(lib.startswith("libmicrohttpd") for lib in full)  # the check can fail


def preset_cases():
    for path in sorted(glob.glob(os.path.join(PROFILES, "*.json"))):
        preset = os.path.basename(path)[:-5]
        for server, entry in load(preset).get("servers", {}).items():
            if entry["argv"][:2] == ["${MCPBOX}", "mcp"]:
                yield preset, server


@pytest.mark.parametrize("preset,server", list(preset_cases()),
                         ids=[f"{p}-{s}" for p, s in preset_cases()])
def test_group_executable_answers_as_mcpbox_mcp(tmp_path, preset, server):
    prof = load(preset)
    entry = prof["servers"][server]
    name = entry["argv"][2]
    group = next((g for g, exe in groups().items() if name in listing([exe])), None)
    assert group, f"{name} is in no group executable"
    data = make_data(tmp_path)

    def run(bin_path):
        argv = [a.replace("${MCPBOX}", bin_path).replace("${DATA}", str(data))
                for a in entry["argv"]]
        env = {k: v.replace("${DATA}", str(data)).replace("${MCPBOX}", bin_path)
               for k, v in {**prof.get("base_env", {}), **entry.get("env", {})}.items()}
        return surface(argv, env, str(data))
    full = run(os.path.abspath(MCPBOX_BIN))
    assert full["tools"], full
    assert run(groups()[group]) == full


def sandbox_processes(sid):
    """(exe, argv) of every process in the sandbox's cgroup."""
    out = []
    for pid in sandbox_pids(sid):
        p = "/proc/" + pid
        try:
            with open(p + "/cmdline", "rb") as f:
                argv = [a.decode() for a in f.read().split(b"\0") if a]
            with open(p + "/comm") as f:
                out.append((os.readlink(p + "/exe"), argv, f.read().strip()))
        except OSError:
            continue
    return out


def test_sandbox_runs_servers_from_group_executables(api, daemon):
    r = api.post("/local-sandbox", json={"server_names": ATLAS, "benchmark": "MCP_Atlas"})
    assert r.status_code == 201, r.text
    sb = r.json()
    sid = sb["local_sandbox_id"]
    try:
        assert all(s["metadata"]["ready"] for s in sb["servers"]), sb
        procs = sandbox_processes(sid)
        servers = {argv[2]: exe for exe, argv, _ in procs if len(argv) > 2 and argv[1] == "mcp"}
        assert sorted(servers) == sorted(ATLAS), procs
        assert set(servers.values()) == {"/.mcpbox/bin/mcpbox-light"}, servers
        # the init (and the shepherds, its forks) are images of mcpbox-zygote
        inits = [exe for exe, _, comm in procs if comm in ("mcpbox-init", "mcpbox-shepherd")]
        assert inits and all(os.path.basename(e) == "mcpbox-zygote" for e in inits), procs
        # exec-only copies owned by the daemon's user
        copies = os.path.join(daemon.data_dir, "sandbox-bin")
        for g in groups():
            st = os.stat(os.path.join(copies, "mcpbox-" + g))
            assert st.st_mode & 0o7777 == 0o111 and st.st_uid == os.geteuid()
    finally:
        api.delete("/local-sandbox/" + sid)


@pytest.mark.parametrize("encode", [True, False], ids=["base64", "json"])
def test_poste_email_reads_a_base64_account_without_libcrypto(encode):
    """EMAIL_CONFIG as base64 JSON (decoded by src/util/base64.c in the light
    executable) is taken as the account: the call reaches the IMAP connection
    (refused here: nothing listens), not "configuration not found"; text that
    is neither JSON nor base64 is no account."""
    import base64
    import json as js
    import socket
    from mcp_stdio import StdioClient
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # a port nothing listens on
    acct = js.dumps({"email": "a@b.example", "password": "pw", "name": "A",
                     "imap_server": "127.0.0.1", "imap_port": port,
                     "smtp_server": "127.0.0.1", "smtp_port": port})
    value = base64.b64encode(acct.encode()).decode() + "\n" if encode else acct
    texts = {}
    for label, cfg in (("account", value), ("garbage", "not base64 at all!")):
        with StdioClient([groups()["light"], "mcp", "poste_email_toolathlon"],
                         env={"EMAIL_CONFIG": cfg}) as c:
            c.initialize()
            texts[label] = StdioClient.text(c.call("get_folders", {}))
    assert "Email configuration not found" not in texts["account"], texts
    assert "Email configuration not found" in texts["garbage"], texts


def test_without_server_executables_servers_run_from_mcpbox(tmp_root):
    """A daemon binary copied alone (no mcpbox-* beside it, no ../lib/mcpbox)
    says so and runs every server, and its zygote, from itself, as before."""
    import shutil
    import conftest
    from conftest import Daemon
    alone = os.path.join(tmp_root, "alone")
    os.makedirs(alone)
    binary = os.path.join(alone, "mcpbox")
    shutil.copy2(MCPBOX_BIN, binary)
    saved = conftest.MCPBOX_BIN
    conftest.MCPBOX_BIN = binary
    d = Daemon(os.path.join(tmp_root, "var"), ["--profiles-dir", os.path.abspath(PROFILES)])
    try:
        d.start()
        with d.client() as api:
            r = api.post("/local-sandbox", json={"server_names": ["filesystem"],
                                                 "benchmark": "MCP_Atlas"})
            assert r.status_code == 201, r.text
            sb = r.json()
            assert sb["servers"][0]["metadata"]["ready"], sb
            procs = sandbox_processes(sb["local_sandbox_id"])
            exes = [exe for exe, argv, _ in procs if argv[1:3] == ["mcp", "filesystem"]]
            assert exes == ["/.mcpbox/mcpbox"], procs
            api.delete("/local-sandbox/" + sb["local_sandbox_id"])
        assert not os.path.exists(os.path.join(d.data_dir, "sandbox-bin"))
        assert "no mcpbox-light beside" in d.log() and "no mcpbox-zygote beside" in d.log()
    finally:
        conftest.MCPBOX_BIN = saved
        d.stop()
