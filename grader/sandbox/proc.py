"""The processes of a sandboxed run: their uid, their setup before exec, their output, their end.

Used by :mod:`grader.sandbox`, which picks the backend and builds the command line:

- :class:`UidSlot`: an unprivileged uid that no other run on this machine uses now, and
  :func:`kill_uid`, which ends every process of it when the run is over;
- :func:`preexec`: rlimits, the pids cgroup, the weak backend's network and uid, the
  parent-death signal, between fork and exec;
- :func:`collect`: a finished run's output, read with caps and the wall clock;
  :class:`Running`: a run that keeps going (the solution server), its output drained.
"""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from grader.sandbox.limits import MiB, Limits, diagnose, size_text

if TYPE_CHECKING:
    from grader.sandbox import _Launch

NOBODY = 65534
UID_BASE = 100_000      # one unused uid per concurrent run (see UidSlot)
UID_SLOTS = 256
EXIT_GRACE_S = 1.0      # how long children may hold the output open after the main process ends
STRONG = ("bubblewrap", "unshare")


def _tasks_of(uid: int) -> int:
    """Processes and threads of ``uid`` now: what ``RLIMIT_NPROC`` counts for it."""
    return sum(threads for _, threads in _processes_of(uid))


def _processes_of(uid: int) -> list[tuple[int, int]]:
    """(pid, threads) of the live processes of ``uid`` (zombies are dead already)."""
    out: list[tuple[int, int]] = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
            if int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] not in ("Z", "X"):
                out.append((int(status.parent.name), int(fields["Threads"])))
        except (OSError, KeyError, ValueError):
            pass
    return out


def kill_uid(uid: int, rounds: int = 50) -> None:
    """SIGKILL every process of ``uid`` (a run's own uid: nothing else has it)."""
    for _ in range(rounds):
        pids = [pid for pid, _ in _processes_of(uid)]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


@lru_cache(maxsize=None)
def _can_unshare_net() -> bool:
    pid = os.fork()
    if pid == 0:
        os._exit(0 if _unshare_net() else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def _unshare_net() -> bool:
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        ok: bool = libc.unshare(0x40000000) == 0  # CLONE_NEWNET
        return ok
    except (OSError, AttributeError):
        return False


class UidSlot:
    """An unprivileged uid no other sandboxed run is using now (held by an flock)."""

    def __init__(self) -> None:
        import fcntl
        import tempfile
        # one folder for the whole machine (not $TMPDIR): every grader shares the slots
        d = Path("/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir()) / "grader-sandbox-uids"
        d.mkdir(mode=0o700, exist_ok=True)
        self.file: IO[str] | None = None
        self.uid = NOBODY   # every slot busy: share nobody
        for n in range(UID_SLOTS):
            f = open(d / f"{n}.lock", "w")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.close()
                continue
            self.file, self.uid = f, UID_BASE + n
            break

    def release(self) -> None:
        if self.uid != NOBODY:
            kill_uid(self.uid)
        if self.file is not None:
            self.file.close()
            self.file = None



def preexec(limits: Limits, drop_uid: bool = False, unshare_net: bool = False, join: Callable[[], object] | None = None,
            nproc: int | None = None, with_parent: bool = True) -> Callable[[], None]:
    """The child's setup between fork and exec: rlimits, (weak) network, pids cgroup and uid;
    ``with_parent``: killed when the thread that started it ends (bwrap and unshare then end
    their namespace, and everything in it)."""

    def setup() -> None:
        import resource
        if with_parent:
            import ctypes
            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if unshare_net and os.geteuid() == 0:
            _unshare_net()
        if join is not None:
            join()
        if drop_uid:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        # NPROC last: root (uid 0) is exempt from it, an unprivileged uid is not
        n = limits.processes if nproc is None else nproc
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))

    return setup


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def exit_status(status: int, name: str) -> tuple[int | None, str | None]:
    code: int | None = status if status >= 0 else None
    sig = signal.Signals(-status).name if status < 0 else None
    if name in STRONG and code is not None and 128 < code < 128 + 65:
        try:  # bwrap's and unshare's init pass a signal death on as 128 + signal number
            sig, code = signal.Signals(code - 128).name, None
        except ValueError:
            pass
    return code, sig


def collect(proc: subprocess.Popen[bytes], report_readers: Sequence[int], limits: Limits,
            start: float) -> tuple[list[bytes], bool, bool]:
    """Read stdout, stderr and the report pipes until all close or the wall clock runs out."""
    sel = selectors.DefaultSelector()
    stdout, stderr = _pipes(proc)
    streams = [stdout.fileno(), stderr.fileno(), *report_readers]
    caps = [limits.output_bytes, limits.output_bytes] + [16 * MiB] * len(report_readers)
    bufs = [bytearray() for _ in streams]
    for i, fd in enumerate(streams):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, i)
    truncated = timed_out = False
    ended: float | None = None
    open_count = len(streams)
    while open_count:
        left = limits.wall_s - (time.monotonic() - start)
        if left <= 0:
            timed_out = True
            kill_group(proc.pid)
            break
        for key, _ in sel.select(timeout=min(left, 0.5)):
            i = key.data
            try:
                chunk = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                sel.unregister(key.fd)
                open_count -= 1
                continue
            room = caps[i] - len(bufs[i])
            if room > 0:
                bufs[i] += chunk[:room]
            if len(chunk) > room and i < 2:
                truncated = True
        if open_count and proc.poll() is not None:
            # the main process has ended, a leftover child holds the pipes: a short grace, then the group goes
            ended = ended or time.monotonic()
            if time.monotonic() - ended > EXIT_GRACE_S:
                kill_group(proc.pid)
                break
    if proc.poll() is None and timed_out:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    sel.close()
    stdout.close()
    stderr.close()
    if truncated:
        for i in (0, 1):
            if len(bufs[i]) >= caps[i]:
                bufs[i] += f"\n[... cut at {size_text(caps[i])}]".encode()
    return [bytes(b) for b in bufs], truncated, timed_out


def _pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    """The process's stdout and stderr: pipes (grader.sandbox starts it with both PIPE), never None."""
    return cast(IO[bytes], proc.stdout), cast(IO[bytes], proc.stderr)


class Running:
    """A sandboxed process that keeps running (:func:`start`): its output is drained in the
    background (kept up to ``Limits.output_bytes`` each); :meth:`close` ends it and every
    process it left."""

    def __init__(self, launch: _Launch, proc: subprocess.Popen[bytes], name: str, limits: Limits) -> None:
        self.launch, self.proc, self.name, self.limits = launch, proc, name, limits
        self.description = launch.description
        self.output = [bytearray(), bytearray()]
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        sel = selectors.DefaultSelector()
        for i, f in enumerate(_pipes(self.proc)):
            sel.register(f.fileno(), selectors.EVENT_READ, i)
        open_count = 2
        while open_count:
            for key, _ in sel.select(timeout=1.0):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                    open_count -= 1
                    continue
                buf = self.output[key.data]
                room = self.limits.output_bytes - len(buf)
                if room > 0:
                    buf += chunk[:room]
        sel.close()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ended(self) -> str:
        """How the process ended, in words ("exited with code 1", "killed by SIGSEGV")."""
        status = self.proc.poll()
        if status is None:
            return "still running"
        code, sig = exit_status(status, self.name)
        return "exited with code 0" if code == 0 else diagnose(code, sig, False, self.stderr(), self.limits)[1]

    def stderr(self) -> str:
        return bytes(self.output[1]).decode("utf-8", errors="replace")

    def kill(self) -> None:
        kill_group(self.proc.pid)
        if self.launch.slot is not None:
            kill_uid(self.launch.slot.uid)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        self.kill()
        self._drain.join(timeout=2)
        for f in _pipes(self.proc):
            try:
                f.close()
            except OSError:
                pass
        self.launch.cleanup()

