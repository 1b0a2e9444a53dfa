"""Run untrusted learner code in a separate, locked-down process.

    from grader.sandbox import Limits, run
    r = run(["python", "-c", "print(1)"], limits=Limits(wall_s=10))
    r.ok, r.exit_code, r.stdout, r.message, r.sandbox

Two backends, picked by :func:`backend` (probed once per process):

``bubblewrap`` (preferred; Debian package ``bubblewrap``)
    ``bwrap`` builds a new root from read-only binds of only what Python needs (``/usr``, the
    interpreter, the virtualenv, the ``grader`` and ``mha`` packages, the caller's read-only
    folders), with new network, PID, IPC and UTS namespaces (no network at all), a private
    ``/tmp`` (a small tmpfs), a minimal ``/dev`` and ``/proc``, no ``/etc`` (so no
    ``/etc/passwd``), no home. Inside, ``setpriv`` drops to an unprivileged uid (``nobody`` by
    default) with no capabilities and no new privileges, so the limits below are the kernel's
    per-user ones (``RLIMIT_NPROC`` is not enforced on root).
``rlimits+nobody`` / ``rlimits only`` (fallback, when ``bwrap`` is missing or cannot start)
    The same rlimits and process-group kill; the uid drops to ``nobody`` only where the
    interpreter is reachable by it, the network is cut only where a new network namespace can
    be made. What is *not* prevented is said in :attr:`SandboxResult.sandbox`: the file system
    is the host's (read-only only by Unix permissions; ``/etc/passwd`` is readable), ``/tmp``
    is shared.

Both: rlimits on CPU time, address space, file size and process count (set in the child
before ``exec``), a new session, and a wall-clock time-out that kills the whole process
group (``os.killpg``); with bubblewrap, killing it also ends every process of its PID
namespace. Output is read through pipes with a cap, so a flood cannot fill memory; extra
pipes (``report_fds``) carry results out without any writable host folder.
"""
from __future__ import annotations

import errno
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from grader.cgroup import PidsGroup, pids_parent

NOBODY = 65534
UID_BASE = 100_000      # bubblewrap: one unused uid per concurrent run (see _uid_slot)
UID_SLOTS = 256
EXIT_GRACE_S = 1.0      # how long children may hold the output open after the main process ends
MiB = 1024 * 1024
GiB = 1024 * MiB


def _size(n: int) -> str:
    if n >= GiB and n % GiB == 0:
        return f"{n // GiB} GiB"
    if n >= MiB and n % MiB == 0:
        return f"{n // MiB} MiB"
    return f"{n} bytes"


@dataclass(frozen=True)
class Limits:
    """What one sandboxed run may use."""

    wall_s: float = 30.0            # wall clock; then the whole process group is killed
    cpu_s: int = 30                 # RLIMIT_CPU, per process
    memory_bytes: int = 3 * GiB     # RLIMIT_AS (torch alone maps ~0.8 GiB of address space)
    file_bytes: int = 1 * MiB       # RLIMIT_FSIZE: largest file a process may write
    processes: int = 64             # RLIMIT_NPROC: processes and threads of the sandbox's uid
    tmp_bytes: int = 64 * MiB       # size of the private /tmp (bubblewrap)
    output_bytes: int = 256 * 1024  # stdout/stderr kept (each); the rest is dropped

    def describe(self) -> str:
        return (f"wall {self.wall_s:g} s, CPU {self.cpu_s} s, memory {_size(self.memory_bytes)}, "
                f"file size {_size(self.file_bytes)}, {self.processes} processes")


@dataclass(frozen=True)
class SandboxResult:
    """How a sandboxed run ended. ``message`` says it in words ("time limit of 10 s exceeded")."""

    exit_code: int | None           # None when killed by a signal
    stdout: str
    stderr: str
    timed_out: bool
    killed_by: str | None           # "SIGKILL", "SIGXCPU", ... or None
    message: str
    sandbox: str                    # the backend that ran it, and what it does not prevent
    limit: str | None = None        # "time", "cpu", "memory", "file size", "processes", "network"
    reports: tuple = field(default=(), repr=False)   # bytes read from each of report_fds
    truncated: bool = False         # stdout or stderr went over Limits.output_bytes

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


# ---------------------------------------------------------------- backends


@lru_cache(maxsize=None)
def backend() -> str:
    """``"bubblewrap"`` when ``bwrap`` is installed and runs here, else the fallback's description."""
    reason = _bwrap_problem()
    if reason is None:
        return "bubblewrap"
    return f"{_fallback_description()} (no bubblewrap: {reason})"


def _bwrap_problem() -> str | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap is not installed; apt-get install -y bubblewrap"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    try:
        p = subprocess.run(_bwrap_argv([sys.executable, "-c", "pass"], Limits(), (), ()),
                           capture_output=True, timeout=30, preexec_fn=_preexec(Limits()))
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap failed to start: {e}"
    if p.returncode != 0:
        return "bwrap cannot run here: " + (p.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
    return None


def _fallback_uid_ok() -> bool:
    """Whether the interpreter and its libraries are reachable by an unprivileged uid."""
    if os.geteuid() != 0:
        return False
    for top in {Path(sys.executable).resolve(), Path(sys.base_prefix), Path(sys.prefix)}:
        for d in [top, *top.parents]:
            if d.is_dir() and not (d.stat().st_mode & 0o001):
                return False
    return True


@lru_cache(maxsize=None)
def _fallback_description() -> str:
    net = "no network" if _can_unshare_net() else "network NOT blocked"
    not_prevented = "reading world-readable host files (/etc/passwd included), a shared /tmp"
    if not fallback_limits_processes():
        not_prevented += ", any number of processes (root is exempt from RLIMIT_NPROC, and no pids cgroup)"
    procs = ", processes capped by a pids cgroup" if os.geteuid() == 0 and pids_parent() else ""
    if _fallback_uid_ok():
        return f"rlimits+nobody: runs as nobody, {net}{procs}; NOT prevented: {not_prevented}"
    who = "root" if os.geteuid() == 0 else "the grader's own user"
    return (f"rlimits only: runs as {who} (the interpreter is not reachable by nobody), {net}{procs}; "
            f"NOT prevented: {not_prevented}, writing what {who} may write")


def fallback_limits_processes() -> bool:
    """Whether the fallback enforces ``Limits.processes``: an unprivileged uid is held to
    ``RLIMIT_NPROC``; root only by a pids cgroup."""
    return os.geteuid() != 0 or _fallback_uid_ok() or pids_parent() is not None


def limits_processes(force_fallback: bool = False) -> bool:
    """Whether a run here enforces ``Limits.processes`` (a fork bomb is stopped)."""
    return (backend() == "bubblewrap" and not force_fallback) or fallback_limits_processes()


def _tasks_of(uid: int) -> int:
    """Processes and threads of ``uid`` now: what ``RLIMIT_NPROC`` counts for it."""
    n = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                n += int(fields["Threads"])
        except (OSError, KeyError, ValueError):
            pass
    return n


@lru_cache(maxsize=None)
def _can_unshare_net() -> bool:
    if not hasattr(os, "fork"):
        return False
    pid = os.fork()
    if pid == 0:
        os._exit(0 if _unshare_net() else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def _unshare_net() -> bool:
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.unshare(0x40000000) == 0  # CLONE_NEWNET
    except (OSError, AttributeError):
        return False


# ------------------------------------------------------------------ running


def run(argv, *, limits: Limits = Limits(), readable=(), binds=(), env=None, cwd="/tmp",
        report_fds: int = 0, force_fallback: bool = False) -> SandboxResult:
    """Run ``argv`` sandboxed and wait for it (at most ``limits.wall_s``).

    readable: host paths the code may read (bound read-only at the same path).
    binds: ``(host_path, sandbox_path)`` pairs, bound read-only.
    report_fds: how many extra pipes to open; ``{fd0}``, ``{fd1}``, ... in ``argv`` become their
        numbers in the child (write with ``os.write(N, ...)``: re-opening ``/dev/fd/N`` is
        refused to the unprivileged uid), and what it writes there comes back
        in :attr:`SandboxResult.reports` (16 MiB at most each).
    force_fallback: use the fallback even where bubblewrap works (for tests).
    """
    pipes = [os.pipe() for _ in range(report_fds)]
    child_fds = [w for _, w in pipes]
    numbers = {f"fd{i}": str(w) for i, w in enumerate(child_fds)}
    argv = [re.sub(r"\{(fd\d+)\}", lambda m: numbers.get(m.group(1), m.group(0)), str(a)) for a in argv]
    name = "bubblewrap" if not force_fallback and backend() == "bubblewrap" else None
    if name is None:
        name = (f"{_fallback_description()} (bubblewrap not used: forced)" if force_fallback else backend())
    base_env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    base_env.update(env or {})
    with (_uid_slot() if name == "bubblewrap" else nullcontext(NOBODY)) as uid:
        return _run(argv, name, uid, limits, readable, binds, base_env, cwd, pipes, child_fds)


def _run(argv, name, uid, limits, readable, binds, base_env, cwd, pipes, child_fds) -> SandboxResult:
    if name == "bubblewrap":
        full = _bwrap_argv(argv, limits, tuple(str(p) for p in readable), tuple(binds), cwd=cwd, uid=uid)
        preexec = _preexec(limits)
        return _start(full, name, limits, base_env, None, preexec, pipes, child_fds)
    if os.geteuid() == 0:  # root ignores RLIMIT_NPROC: a pids cgroup holds the count, where one can be made
        with PidsGroup.make(limits.processes) or nullcontext() as group:
            preexec = _preexec(limits, drop_uid=_fallback_uid_ok(), unshare_net=True,
                               join=group.join if group else None)
            return _start(argv, name, limits, base_env, cwd, preexec, pipes, child_fds)
    # the grader's own uid: RLIMIT_NPROC counts all its processes, so allow the ones it has now
    nproc = limits.processes + _tasks_of(os.getuid())
    return _start(argv, name, limits, base_env, cwd, _preexec(limits, nproc=nproc), pipes, child_fds)


def _start(full, name, limits, base_env, cwd, preexec, pipes, child_fds) -> SandboxResult:
    start = time.monotonic()
    try:
        proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=base_env, cwd=cwd, start_new_session=True,
                                preexec_fn=preexec, pass_fds=child_fds, close_fds=True)
    except OSError as e:
        for r, w in pipes:
            os.close(r)
            os.close(w)
        return SandboxResult(None, "", str(e), False, None, f"could not start: {e}", name)
    for _, w in pipes:
        os.close(w)
    bufs, truncated, timed_out = _collect(proc, [r for r, _ in pipes], limits, start)
    status = proc.wait()
    _kill_group(proc.pid)  # leftovers (fallback backend) die with the group
    out, err = (b.decode("utf-8", errors="replace") for b in bufs[:2])
    code = status if status >= 0 else None
    sig = signal.Signals(-status).name if status < 0 else None
    if name == "bubblewrap" and code is not None and 128 < code < 128 + 65:
        try:  # bwrap's init passes a signal death on as 128 + signal number
            sig, code = signal.Signals(code - 128).name, None
        except ValueError:
            pass
    limit, message = _diagnose(code, sig, timed_out, err, limits)
    return SandboxResult(code, out, err, timed_out, sig, message, name, limit, tuple(bufs[2:]), truncated)


def _collect(proc, report_readers, limits: Limits, start: float):
    """Read stdout, stderr and the report pipes until all close or the wall clock runs out."""
    sel = selectors.DefaultSelector()
    streams = [proc.stdout.fileno(), proc.stderr.fileno(), *report_readers]
    caps = [limits.output_bytes, limits.output_bytes] + [16 * MiB] * len(report_readers)
    bufs = [bytearray() for _ in streams]
    for i, fd in enumerate(streams):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, i)
    truncated = timed_out = False
    ended = None
    open_count = len(streams)
    while open_count:
        left = limits.wall_s - (time.monotonic() - start)
        if left <= 0:
            timed_out = True
            _kill_group(proc.pid)
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
            # the main process has ended, a leftover child holds the pipes: a short grace, then
            # the group goes (bubblewrap ends its PID namespace by itself)
            ended = ended or time.monotonic()
            if time.monotonic() - ended > EXIT_GRACE_S:
                _kill_group(proc.pid)
                break
    # a grandchild may hold the pipes open after the main process ended: end the group
    if proc.poll() is None and timed_out:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    sel.close()
    for fd in streams:
        try:
            os.close(fd) if fd in report_readers else None
        except OSError:
            pass
    proc.stdout.close()
    proc.stderr.close()
    if truncated:
        for i in (0, 1):
            if len(bufs[i]) >= caps[i]:
                bufs[i] += f"\n[... cut at {_size(caps[i])}]".encode()
    return [bytes(b) for b in bufs], truncated, timed_out


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _preexec(limits: Limits, drop_uid=False, unshare_net=False, join=None, nproc=None):
    """The child's setup between fork and exec: rlimits, (fallback) network, pids cgroup and uid.
    ``nproc``: the RLIMIT_NPROC to set, when not ``limits.processes``."""

    def setup():
        import resource
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


def _python_roots() -> list[str]:
    """What the interpreter, its standard library, the virtualenv and the grader need to read."""
    roots = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent.parent}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(Path(p))
    import grader
    roots.add(Path(grader.__file__).resolve().parent)
    try:
        import importlib.util
        spec = importlib.util.find_spec("mha")
        if spec and spec.origin:
            roots.add(Path(spec.origin).resolve().parent)
    except (ImportError, ValueError):
        pass
    # keep the outermost of nested roots; /usr is bound on its own
    out = []
    for r in sorted({r.resolve() for r in roots if r.exists()}, key=lambda p: len(p.parts)):
        if r == Path("/usr") or Path("/usr") in r.parents:
            continue
        if not any(o in r.parents for o in out):
            out.append(r)
    return [str(r) for r in out]


@contextmanager
def _uid_slot():
    """An unprivileged uid no other sandboxed run is using now (held by an flock)."""
    import fcntl
    import tempfile
    d = Path(tempfile.gettempdir()) / "grader-sandbox-uids"
    d.mkdir(mode=0o700, exist_ok=True)
    for n in range(UID_SLOTS):
        f = open(d / f"{n}.lock", "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            continue
        try:
            yield UID_BASE + n
        finally:
            f.close()
        return
    yield NOBODY  # every slot busy: share nobody


def _bwrap_argv(argv, limits: Limits, readable: tuple, binds: tuple, cwd="/tmp", uid=NOBODY) -> list[str]:
    a = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
         "--die-with-parent", "--new-session", "--hostname", "sandbox",
         "--ro-bind", "/usr", "/usr",
         # the private /tmp first: binds below it (a virtualenv under /tmp) are made on top of it
         "--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    for link in ("bin", "lib", "lib64", "sbin", "lib32"):
        p = Path("/") / link
        if p.is_symlink():
            a += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            a += ["--ro-bind", str(p), str(p)]
    made = {"/", "/usr", "/tmp", "/dev", "/proc"}
    pairs = [(r, r) for r in _python_roots()] + [(r, r) for r in readable] + [(str(h), str(s)) for h, s in binds]
    for host, dest in pairs:
        for parent in reversed(Path(dest).parents):
            if str(parent) not in made:
                a += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        a += ["--ro-bind", host, dest]
        made.add(dest)
    a += ["--chdir", cwd, "--",
          "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
          "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", *argv]
    return a


# --------------------------------------------------------------- diagnosis

_ERRNO_WORDS = {
    errno.EFBIG: "file size",
    errno.ENOMEM: "memory",
    errno.EAGAIN: "processes",
    errno.ENETUNREACH: "network",
}


def _diagnose(code, sig, timed_out, stderr: str, limits: Limits) -> tuple[str | None, str]:
    if timed_out:
        return "time", (f"time limit of {limits.wall_s:g} s exceeded (wall clock): "
                        "the whole process group was killed")
    if sig in ("SIGXCPU",) or (sig == "SIGKILL" and "cpu" in stderr.lower()):
        return "cpu", f"CPU time limit of {limits.cpu_s} s exceeded"
    if sig == "SIGXFSZ":
        return "file size", f"file size limit of {_size(limits.file_bytes)} exceeded"
    limit = explain_limit(stderr)
    if limit is not None:
        return limit, limit_message(limit, limits)
    if sig is not None:
        return None, f"killed by {sig}"
    if code == 0:
        return None, "ran to the end (exit code 0)"
    return None, f"exited with code {code}"


def explain_limit(text: str) -> str | None:
    """Which sandbox limit an error text shows, if any: "memory", "file size", "processes",
    "network", "files" (a host file that is not in the sandbox) — or None."""
    if re.search(r"\bMemoryError\b|Cannot allocate memory|std::bad_alloc|DefaultCPUAllocator: can't allocate", text):
        return "memory"
    if re.search(r"\[Errno 27\]|File too large", text):
        return "file size"
    if re.search(r"BlockingIOError: \[Errno 11\]|Resource temporarily unavailable|can't start new thread", text):
        return "processes"
    if re.search(r"\[Errno (101|99|97|111|113|-2|-3)\]|Network is unreachable|Temporary failure in name resolution"
                 r"|Name or service not known|Address family not supported", text):
        return "network"
    if re.search(r"No such file or directory: '/(etc|root|home|work|var|proc/1/)", text):
        return "files"
    return None


def limit_message(limit: str, limits: Limits = Limits()) -> str:
    """The sandbox's words for a limit that was hit."""
    return {
        "time": f"time limit of {limits.wall_s:g} s exceeded (wall clock)",
        "cpu": f"CPU time limit of {limits.cpu_s} s exceeded",
        "memory": f"memory limit of {_size(limits.memory_bytes)} exceeded",
        "file size": f"file size limit of {_size(limits.file_bytes)} exceeded (a file written was too large)",
        "processes": f"process limit of {limits.processes} exceeded (too many processes or threads)",
        "network": "network access is not allowed in the sandbox",
        "files": "that file is not available in the sandbox (only your solution and the tests are)",
    }[limit]
