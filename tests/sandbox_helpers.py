"""Which sandbox backends run here, and a look at what a run may have left on the host."""
import os
from pathlib import Path

import pytest

from grader import sandbox

STRONG = [b for b in sandbox.STRONG if sandbox.problem(b) is None]   # bubblewrap, unshare where they run
needs_strong = pytest.mark.skipif(not STRONG, reason="no namespace sandbox runs here (bubblewrap, unshare): "
                                                     + "; ".join(f"{b}: {sandbox.problem(b)}" for b in sandbox.STRONG))
strong_backends = pytest.mark.parametrize("backend", STRONG or [pytest.param("none", marks=needs_strong)])
SHARED = ("/tmp", "/var/tmp", "/dev/shm")
OURS = ("grader-sandbox-uids", "pytest-of-")   # the grader's uid locks, pytest's own tmp_path


LEFTOVER_MARKS = ("solution_server.py", "sandbox_init.py", "grader-hostile")


def host_state(*marks: str) -> tuple:
    """What a learner's run could leave on the host: entries of the shared folders, and the
    live processes whose command line holds one of ``marks`` (the solution server's, the
    hostile corpus's marker)."""
    marks = marks or LEFTOVER_MARKS
    files = set()
    for d in SHARED:
        try:
            files |= {f"{d}/{n}" for n in os.listdir(d) if not n.startswith(OURS)}
        except OSError:
            pass
    procs = set()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            status = (p / "status").read_text()
            uid = int(status.split("Uid:")[1].split()[0])
            state = status.split("State:")[1].split()[0]
            cmd = (p / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if state in "ZX":
            continue
        if any(m.encode() in cmd for m in marks) and int(p.name) != os.getpid():
            procs.add((p.name, uid, cmd[:120]))
    return files, procs
