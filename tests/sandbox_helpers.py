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


LEFTOVER_MARKS = ("solution_server.py", "sandbox_init.py", "grader-hostile", "7777")


def _learners(uid: int) -> bool:
    return sandbox.UID_BASE <= uid < sandbox.UID_BASE + sandbox.UID_SLOTS or uid == sandbox.NOBODY


def host_state(*marks: str) -> tuple:
    """What a learner's run could leave on the host: files in the shared folders that a
    sandbox uid owns or whose name holds ``grader-hostile``, and live processes whose command
    line holds one of ``marks`` (by default the solution server's and the hostile corpus's).
    (Processes are not told by their uid: other graders on this machine use the same uids.)"""
    marks = marks or LEFTOVER_MARKS
    files = set()
    for d in SHARED:
        try:
            entries = os.listdir(d)
        except OSError:
            continue
        for n in entries:
            try:
                owner = os.lstat(f"{d}/{n}").st_uid
            except OSError:
                continue
            if "grader-hostile" in n or _learners(owner):
                files.add(f"{d}/{n}")
    procs = set()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
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
        if any(m.encode() in cmd for m in marks):
            procs.add((p.name, uid, cmd[:120]))
    return files, procs
