"""A pids cgroup: the process limit of the sandbox's fallback when it runs as root.

The kernel never applies ``RLIMIT_NPROC`` to root, so without bubblewrap (which drops to an
unprivileged uid) a fork bomb run as root would fill the machine's process table. A cgroup's
``pids.max`` holds for root too::

    with PidsGroup.make(limit=32) as g:     # None where no pids controller can be written
        subprocess.Popen(argv, preexec_fn=g.join)   # the child enters it before exec
    # leaving: every process still in it is killed, then the group is removed

cgroup v1 (a ``pids`` hierarchy) and v2 (``pids`` in the parent's ``cgroup.subtree_control``)
are both found through ``/proc/self/cgroup`` and ``/proc/self/mountinfo``.
"""
from __future__ import annotations

import itertools
import os
import signal
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_counter = itertools.count()


@lru_cache(maxsize=None)
def pids_parent() -> Path | None:
    """The folder of this process's pids cgroup, where a child group can be made, or None."""
    mounts: dict[str, list[tuple[Path, str, set[str]]]] = {}
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, (fstype, _src, opts) = left.split(), right.split()[:3]
            mounts.setdefault(fstype, []).append((Path(fields[4]), fields[3], set(opts.split(","))))
        groups = [line.split(":", 2) for line in Path("/proc/self/cgroup").read_text().splitlines()]
    except (OSError, ValueError):
        return None
    for _, controllers, path in groups:
        if "pids" in controllers.split(","):
            for mount, root, options in mounts.get("cgroup", []):
                if "pids" in options:
                    return _writable(mount / os.path.relpath(path, root))
    for _, controllers, path in groups:
        if controllers == "":
            for mount, root, _ in mounts.get("cgroup2", []):
                here = mount / os.path.relpath(path, root)
                try:
                    if "pids" in (here / "cgroup.subtree_control").read_text().split():
                        return _writable(here)
                except OSError:
                    pass
    return None


def _writable(folder: Path) -> Path | None:
    probe = folder / f"grader-probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return None
    return folder


@dataclass(frozen=True)
class PidsGroup:
    """A child pids cgroup with ``pids.max`` set; ``join`` (in a child, before exec) enters it."""

    path: Path

    @classmethod
    def make(cls, limit: int) -> PidsGroup | None:
        parent = pids_parent()
        if parent is None:
            return None
        path = parent / f"grader-sandbox-{os.getpid()}-{next(_counter)}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(limit))
        except OSError:
            try:
                path.rmdir()
            except OSError:
                pass
            return None
        return cls(path)

    def join(self) -> None:
        """Move the calling process into the group (``0`` means the writer itself)."""
        with open(self.path / "cgroup.procs", "w") as f:
            f.write("0")

    def members(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, rounds: int = 200) -> None:
        """SIGKILL every member until none is left (a forking member may add one between reads)."""
        for _ in range(rounds):
            pids = self.members()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for _ in range(100):  # killed members leave the group once the kernel has reaped them
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)

    def __enter__(self) -> PidsGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()
