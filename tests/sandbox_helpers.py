"""Which sandbox backends run here, and a look at what a run may have left on the host."""
import os
from pathlib import Path

import pytest

from grader import sandbox
from grader.sandbox import proc as sandbox_proc

STRONG = [b for b in sandbox.STRONG if sandbox.problem(b) is None]   # bubblewrap, unshare where they run
needs_strong = pytest.mark.skipif(not STRONG, reason="no namespace sandbox runs here (bubblewrap, unshare): "
                                                     + "; ".join(f"{b}: {sandbox.problem(b)}" for b in sandbox.STRONG))
strong_backends = pytest.mark.parametrize("backend", STRONG or [pytest.param("none", marks=needs_strong)])
SHARED = ("/tmp", "/var/tmp", "/dev/shm")


LEFTOVER_MARKS = ("solution_server.py", "sandbox/init.py", "grader-hostile", "7777")


def _learners(uid: int) -> bool:
    return sandbox_proc.UID_BASE <= uid < sandbox_proc.UID_BASE + sandbox_proc.UID_SLOTS or uid == sandbox_proc.NOBODY


def _parent_and_cmd(pid: int) -> tuple:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1]), Path(f"/proc/{pid}/cmdline").read_bytes()


def _ours(pid: int, ours: bytes | None) -> bool:
    """Whether a marked process belongs to this test's runs: an ancestor names ``ours`` (the
    run's private TMPDIR, in bwrap's and unshare's command lines), or it is an orphan, with no
    live grader above it. (Graders of other checkouts may run the same files at the same time.)"""
    if ours is None:
        return True
    seen = 0
    while pid > 1 and seen < 64:
        try:
            parent, cmd = _parent_and_cmd(pid)
        except (OSError, IndexError, ValueError):
            return False
        if ours in cmd:
            return True
        if b"grader.code.runner" in cmd or b"-m\x00grader" in cmd or b"pytest" in cmd:
            return False
        pid, seen = parent, seen + 1
    return True


def host_state(*marks: str, ours: str | None = None) -> tuple:
    """What a learner's run could leave on the host: files in the shared folders that a
    sandbox uid owns or whose name holds ``grader-hostile``, and live processes whose command
    line holds one of ``marks`` (by default the solution server's and the hostile corpus's)
    — with ``ours``, only those of this test's runs (see :func:`_ours`)."""
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
        if state in "ZX" or not any(m.encode() in cmd for m in marks):
            continue
        if _ours(int(p.name), ours.encode() if ours else None):
            procs.add((p.name, uid, cmd[:120]))
    return files, procs
