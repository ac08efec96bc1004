"""The processes of a sandbox, found by its cgroup, for tests that look at
what runs inside (executables, argv, signal and capability state)."""
import glob
import os


def sandbox_pids(sid):
    """The pids (as strings) whose cgroup names the sandbox; a process that
    exits while being read is left out."""
    for p in glob.glob("/proc/[0-9]*"):
        try:
            with open(p + "/cgroup") as f:
                if sid in f.read():
                    yield os.path.basename(p)
        except OSError:
            continue
