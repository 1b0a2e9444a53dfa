"""Run untrusted learner code in a separate, locked-down process.

    from grader.sandbox import Limits, python_argv, run
    r = run([*python_argv(), "-c", "print(1)"], limits=Limits(wall_s=10))
    r.ok, r.exit_code, r.stdout, r.message, r.sandbox

    p = start([...], pass_fds=(r_fd, w_fd))     # a long-lived process (the solution server)
    ...; p.close()

Three backends, picked by :func:`choose` (``GRADER_SANDBOX`` = ``bubblewrap``, ``unshare``,
``rlimits`` or ``fallback`` forces one; a forced backend that cannot run here is refused):

``bubblewrap`` (preferred; Debian package ``bubblewrap``)
    ``bwrap`` builds a new root from the mounts of :mod:`grader.sandbox_layout` (read-only
    ``/usr``, the interpreter, torch and its dependencies, the run's folder; a private ``/tmp``
    and ``/dev/shm``; no ``/etc``, no home, no grader) with new network, PID, IPC and UTS
    namespaces; ``setpriv`` drops to an unused uid (``100000 + slot``, one per concurrent
    run) with no capabilities and no new privileges.
``unshare`` (fallback, root and util-linux's ``unshare``)
    The same mounts, namespaces and uid, built by :mod:`grader.sandbox_init` in a new mount
    and PID namespace: nothing it writes outlives it, nothing of the host but the mounts is
    there, and when its first process ends the kernel kills every other one.
``rlimits`` (weak: only with ``allow_weak``)
    rlimits, a pids cgroup (root), uid ``nobody`` where the interpreter is reachable by it,
    no network where a namespace can be made; the host's files and a shared ``/tmp``.
    :func:`describe` says what it does not prevent.

All: rlimits on CPU time, address space, file size and process count, a new session, a
wall-clock limit that kills the whole process group, and when a run ends every process of
its uid is killed (and of its pids cgroup, as root). Output is read with a cap.
"""
from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from grader import sandbox_layout as layout
from grader.cgroup import PidsGroup, pids_parent
from grader.sandbox_limits import GiB, MiB, Limits, diagnose, explain_limit, limit_message, size_text

__all__ = ["Limits", "SandboxResult", "Running", "run", "start", "choose", "describe", "backend", "problem",
           "python_argv", "explain_limit", "limit_message", "GiB", "MiB", "STRONG", "BACKENDS"]

NOBODY = 65534
UID_BASE = 100_000      # one unused uid per concurrent run (see UidSlot)
UID_SLOTS = 256
EXIT_GRACE_S = 1.0      # how long children may hold the output open after the main process ends
BACKENDS = ("bubblewrap", "unshare", "rlimits")
STRONG = ("bubblewrap", "unshare")
INIT = str(Path(__file__).with_name("sandbox_init.py"))


class SandboxUnavailable(Exception):
    """The backend asked for (``GRADER_SANDBOX``) cannot run here."""


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


def python_argv() -> list:
    """The sandbox's Python (``[interpreter, "-B", "-S"]``); torch is importable, nothing else."""
    return layout.python_argv()


@lru_cache(maxsize=None)
def problem(name: str) -> str | None:
    """Why backend ``name`` cannot run here, or None."""
    if name == "rlimits" or os.environ.get("GRADER_SANDBOX_CHECKED") == name:  # set by grader.code for its run
        return None
    if name == "bubblewrap":
        if shutil.which("bwrap") is None:
            return "bwrap is not installed"
        if shutil.which("setpriv") is None:
            return "setpriv (util-linux) is not installed"
    elif name == "unshare":
        if shutil.which("unshare") is None:
            return "unshare (util-linux) is not installed"
    else:
        return f"no sandbox backend {name!r}"
    if os.geteuid() != 0:
        return f"{name} needs the grader to run as root here (to give each run a uid of its own)"
    r = _run_plain(name, [*python_argv(), "-c", "import os; os.write(1, b'ok')"])
    if r.stdout != "ok":
        return f"{name} cannot run here: " + ((r.stderr.strip().splitlines() or [r.message])[-1])[:200]
    return None


def choose(name: str | None = None, *, force_fallback: bool = False) -> str:
    """The backend a run uses: ``name``, else ``GRADER_SANDBOX``, else the best that runs here
    (``fallback`` and ``force_fallback``: the best after bubblewrap)."""
    name = name or os.environ.get("GRADER_SANDBOX", "").strip() or ("fallback" if force_fallback else "auto")
    if name in ("auto", "fallback"):
        for candidate in (("unshare",) if name == "fallback" else STRONG):
            if problem(candidate) is None:
                return candidate
        return "rlimits"
    if name not in BACKENDS:
        raise SandboxUnavailable(f"GRADER_SANDBOX={name}: no such sandbox backend (one of {', '.join(BACKENDS)})")
    why = problem(name)
    if why:
        raise SandboxUnavailable(f"the {name} sandbox was asked for but cannot run here: {why}")
    return name


def describe(name: str) -> str:
    """The backend in words; for a fallback, why bubblewrap is not used; for ``rlimits``,
    what it does not prevent."""
    if name == "bubblewrap":
        return "bubblewrap"
    why = problem("bubblewrap")
    no_bwrap = f"no bubblewrap: {why}" if why else "bubblewrap not used: forced"
    if name == "unshare":
        return f"unshare: namespaces, private root and uid, as bubblewrap ({no_bwrap})"
    return f"{_weak_description()} ({no_bwrap})"


def backend() -> str:
    """The description of the backend a run uses by default (:func:`describe` of :func:`choose`)."""
    try:
        return describe(choose())
    except SandboxUnavailable as e:
        return f"none: {e}"


def _fallback_uid_ok() -> bool:
    """Whether the interpreter and its libraries are reachable by an unprivileged uid."""
    if os.geteuid() != 0:
        return False
    for top in {Path(layout.runtime().python), *(Path(p) for p, _ in layout.runtime().site)}:
        for d in [top, *top.parents]:
            if d.is_dir() and not (d.stat().st_mode & 0o001):
                return False
    return True


@lru_cache(maxsize=None)
def _weak_description() -> str:
    net = "no network" if _can_unshare_net() else "network NOT blocked"
    not_prevented = ("reading the host's files (/etc/passwd, the grader's own files), writing to a shared /tmp, "
                     "/var/tmp and /dev/shm (files may be left behind)")
    if not fallback_limits_processes():
        not_prevented += ", any number of processes (root is exempt from RLIMIT_NPROC, and no pids cgroup)"
    procs = ", processes capped by a pids cgroup" if os.geteuid() == 0 and pids_parent() else ""
    if _fallback_uid_ok():
        return f"rlimits+nobody: runs as nobody, {net}{procs}; NOT prevented: {not_prevented}"
    who = "root" if os.geteuid() == 0 else "the grader's own user"
    return (f"rlimits only: runs as {who} (the interpreter is not reachable by nobody), {net}{procs}; "
            f"NOT prevented: {not_prevented}, writing what {who} may write, signalling the grader's processes")


def fallback_limits_processes() -> bool:
    """Whether the ``rlimits`` backend enforces ``Limits.processes``: an unprivileged uid is
    held to ``RLIMIT_NPROC``; root only by a pids cgroup."""
    return os.geteuid() != 0 or _fallback_uid_ok() or pids_parent() is not None


def limits_processes(force_fallback: bool = False) -> bool:
    """Whether a run here enforces ``Limits.processes`` (a fork bomb is stopped)."""
    try:
        name = choose(force_fallback=force_fallback)
    except SandboxUnavailable:
        return False
    return name in STRONG or fallback_limits_processes()


def _tasks_of(uid: int) -> int:
    """Processes and threads of ``uid`` now: what ``RLIMIT_NPROC`` counts for it."""
    return sum(threads for _, threads in _processes_of(uid))


def _processes_of(uid: int) -> list:
    """(pid, threads) of the live processes of ``uid`` (zombies are dead already)."""
    out = []
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
        return libc.unshare(0x40000000) == 0  # CLONE_NEWNET
    except (OSError, AttributeError):
        return False


class UidSlot:
    """An unprivileged uid no other sandboxed run is using now (held by an flock)."""

    def __init__(self):
        import fcntl
        import tempfile
        # one folder for the whole machine (not $TMPDIR): every grader shares the slots
        d = Path("/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir()) / "grader-sandbox-uids"
        d.mkdir(mode=0o700, exist_ok=True)
        self.file = None
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


# ------------------------------------------------------------------ launching


@dataclass
class _Launch:
    argv: list
    env: dict
    cwd: str | None
    preexec: object
    description: str
    slot: UidSlot | None = None
    group: PidsGroup | None = None
    root_dir: str | None = None

    def cleanup(self) -> None:
        if self.slot is not None:
            self.slot.release()
        if self.group is not None:
            self.group.remove()
        if self.root_dir is not None:
            shutil.rmtree(self.root_dir, ignore_errors=True)


def _prepare(name, argv, limits, readable, binds, env, cwd, keep_fds, hide) -> _Launch:
    base_env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "PYTHONNOUSERSITE": "1",
                "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                **layout.env(name in STRONG), **(env or {})}
    argv = [str(a) for a in argv]
    if name == "rlimits":
        return _prepare_weak(argv, limits, base_env, cwd, readable, binds)
    slot = UidSlot()
    mounts = layout.mounts(tmp_bytes=limits.tmp_bytes, readable=readable, binds=binds, hide=hide)
    if name == "bubblewrap":
        drop = ["setpriv", f"--reuid={slot.uid}", f"--regid={slot.uid}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        full = layout.bwrap_argv(mounts, cwd=cwd, command=drop + argv)
        return _Launch(full, base_env, None, _preexec(limits), "bubblewrap", slot)
    import json
    import tempfile
    root = tempfile.mkdtemp(prefix="grader-root-")
    spec = {"root": root, "mounts": mounts, "uid": slot.uid, "cwd": cwd, "argv": argv, "keep_fds": list(keep_fds)}
    full = ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--net", "--ipc", "--uts", "--",
            layout.runtime().python, "-I", "-S", "-B", INIT, json.dumps(spec)]
    group = PidsGroup.make(limits.processes + 8)
    return _Launch(full, base_env, "/", _preexec(limits, join=group.join if group else None),
                   describe("unshare"), slot, group, root)


def _prepare_weak(argv, limits, base_env, cwd, readable, binds) -> _Launch:
    # no mounts: the paths the caller gave inside the sandbox are the host's
    for host, dest in binds:
        pattern = re.compile(re.escape(str(dest).rstrip("/")) + r'(?=/|$|")')
        cwd = pattern.sub(lambda _m: str(host), cwd)
        argv = [pattern.sub(lambda _m: str(host), a) for a in argv]
    if os.geteuid() == 0:  # root ignores RLIMIT_NPROC: a pids cgroup holds the count, where one can be made
        group = PidsGroup.make(limits.processes)
        preexec = _preexec(limits, drop_uid=_fallback_uid_ok(), unshare_net=True,
                           join=group.join if group else None)
        return _Launch(argv, base_env, cwd, preexec, describe("rlimits"), None, group)
    # the grader's own uid: RLIMIT_NPROC counts all its processes, so allow the ones it has now
    nproc = limits.processes + _tasks_of(os.getuid())
    return _Launch(argv, base_env, cwd, _preexec(limits, nproc=nproc), describe("rlimits"))


def _preexec(limits: Limits, drop_uid=False, unshare_net=False, join=None, nproc=None, with_parent=True):
    """The child's setup between fork and exec: rlimits, (weak) network, pids cgroup and uid;
    ``with_parent``: killed when the thread that started it ends (bwrap and unshare then end
    their namespace, and everything in it)."""

    def setup():
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


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _popen(launch: _Launch, pass_fds) -> subprocess.Popen:
    return subprocess.Popen(launch.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=launch.env, cwd=launch.cwd, start_new_session=True, preexec_fn=launch.preexec,
                            pass_fds=tuple(pass_fds), close_fds=True)


def _run_plain(name, argv) -> SandboxResult:
    """A run on backend ``name`` without asking :func:`problem` (which uses it to probe)."""
    limits = Limits(wall_s=30, cpu_s=30)
    launch = _prepare(name, argv, limits, (), (), None, "/tmp", (), ())
    return _finish(launch, limits, (), name)


# ------------------------------------------------------------------ running


def run(argv, *, limits: Limits = Limits(), readable=(), binds=(), env=None, cwd="/tmp",
        report_fds: int = 0, force_fallback: bool = False, backend: str | None = None, hide=()) -> SandboxResult:
    """Run ``argv`` sandboxed and wait for it (at most ``limits.wall_s``).

    readable: host paths the code may read (bound read-only at the same path).
    binds: ``(host_path, sandbox_path)`` pairs, bound read-only.
    report_fds: how many extra pipes to open; ``{fd0}``, ``{fd1}``, ... in ``argv`` become their
        numbers in the child, and what it writes there comes back in :attr:`SandboxResult.reports`.
    force_fallback: the best backend after bubblewrap (for tests); backend: this one.
    hide: host folders to cover with an empty tmpfs where they are inside a bound tree.
    """
    name = choose(backend, force_fallback=force_fallback)
    pipes = [os.pipe() for _ in range(report_fds)]
    numbers = {f"fd{i}": str(w) for i, (_, w) in enumerate(pipes)}
    argv = [re.sub(r"\{(fd\d+)\}", lambda m: numbers.get(m.group(1), m.group(0)), str(a)) for a in argv]
    launch = _prepare(name, argv, limits, readable, binds, env, cwd, [w for _, w in pipes], hide)
    return _finish(launch, limits, pipes, name)


def _finish(launch: _Launch, limits: Limits, pipes, name) -> SandboxResult:
    start = time.monotonic()
    try:
        try:
            proc = _popen(launch, [w for _, w in pipes])
        except OSError as e:
            return SandboxResult(None, "", str(e), False, None, f"could not start: {e}", launch.description)
        finally:
            for _, w in pipes:
                os.close(w)
        bufs, truncated, timed_out = _collect(proc, [r for r, _ in pipes], limits, start)
        status = proc.wait()
        _kill_group(proc.pid)  # leftovers die with the group
    finally:
        for r, _ in pipes:
            try:
                os.close(r)
            except OSError:
                pass
        launch.cleanup()
    out, err = (b.decode("utf-8", errors="replace") for b in bufs[:2])
    code, sig = _status(status, name)
    limit, message = diagnose(code, sig, timed_out, err, limits)
    return SandboxResult(code, out, err, timed_out, sig, message, launch.description, limit, tuple(bufs[2:]),
                         truncated)


def _status(status: int, name: str) -> tuple:
    code = status if status >= 0 else None
    sig = signal.Signals(-status).name if status < 0 else None
    if name in STRONG and code is not None and 128 < code < 128 + 65:
        try:  # bwrap's and unshare's init pass a signal death on as 128 + signal number
            sig, code = signal.Signals(code - 128).name, None
        except ValueError:
            pass
    return code, sig


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
            # the main process has ended, a leftover child holds the pipes: a short grace, then the group goes
            ended = ended or time.monotonic()
            if time.monotonic() - ended > EXIT_GRACE_S:
                _kill_group(proc.pid)
                break
    if proc.poll() is None and timed_out:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    sel.close()
    proc.stdout.close()
    proc.stderr.close()
    if truncated:
        for i in (0, 1):
            if len(bufs[i]) >= caps[i]:
                bufs[i] += f"\n[... cut at {size_text(caps[i])}]".encode()
    return [bytes(b) for b in bufs], truncated, timed_out


class Running:
    """A sandboxed process that keeps running (:func:`start`): its output is drained in the
    background (kept up to ``Limits.output_bytes`` each); :meth:`close` ends it and every
    process it left."""

    def __init__(self, launch: _Launch, proc: subprocess.Popen, name: str, limits: Limits):
        self.launch, self.proc, self.name, self.limits = launch, proc, name, limits
        self.description = launch.description
        self.output = [bytearray(), bytearray()]
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        sel = selectors.DefaultSelector()
        for i, f in enumerate((self.proc.stdout, self.proc.stderr)):
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
        code, sig = _status(status, self.name)
        return "exited with code 0" if code == 0 else diagnose(code, sig, False, self.stderr(), self.limits)[1]

    def stderr(self) -> str:
        return bytes(self.output[1]).decode("utf-8", errors="replace")

    def kill(self) -> None:
        _kill_group(self.proc.pid)
        if self.launch.slot is not None:
            kill_uid(self.launch.slot.uid)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        self.kill()
        self._drain.join(timeout=2)
        for f in (self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        self.launch.cleanup()


def start(argv, *, limits: Limits = Limits(), binds=(), env=None, cwd="/tmp", pass_fds=(),
          backend: str | None = None, hide=()) -> Running:
    """Start ``argv`` sandboxed and return at once; ``pass_fds`` are kept open in it (at the
    same numbers). The caller enforces time (:meth:`Running.kill`); rlimits hold as in :func:`run`."""
    name = choose(backend)
    launch = _prepare(name, argv, limits, (), binds, env, cwd, pass_fds, hide)
    try:
        proc = _popen(launch, pass_fds)
    except BaseException:
        launch.cleanup()
        raise
    return Running(launch, proc, name, limits)
