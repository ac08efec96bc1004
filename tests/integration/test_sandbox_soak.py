"""Soak: 1,000 create -> exec -> spawn -> destroy cycles leave no processes,
mounts, cgroups, network namespaces, descriptors or directories behind
(tests/unit/test_sandbox_leaks.c counts them; `make test` runs 100 cycles)."""
import os
import subprocess

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
LEAKS = os.path.join(ROOT, "build", "asan", "tests", "test_sandbox_leaks")


@pytest.mark.soak
@pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root")
def test_thousand_cycles_leave_nothing():
    # `make soak` builds the binaries, not the unit tests: build this one.
    subprocess.run(["make", "-s", "build/asan/tests/test_sandbox_leaks"], cwd=ROOT, check=True)
    env = dict(os.environ, MCPBOX_SANDBOX_CYCLES="1000")
    p = subprocess.run([LEAKS], cwd=ROOT, env=env, capture_output=True, timeout=1800)
    out = (p.stdout + p.stderr).decode(errors="replace")
    print(out)
    assert p.returncode == 0, out
    assert "1000 cycles" in out
    assert "[  PASSED  ] 1 test(s)." in out
