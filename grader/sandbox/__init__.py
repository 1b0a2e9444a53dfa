"""Run untrusted learner code in a separate, locked-down process.

    from grader.sandbox import Limits, python_argv, run
    r = run([*python_argv(), "-c", "print(1)"], limits=Limits(wall_s=10))
    r.ok, r.exit_code, r.stdout, r.message, r.sandbox

    p = start([...], pass_fds=(r_fd, w_fd))     # a long-lived process (the solution server)
    ...; p.close()

Three backends, picked by :func:`choose` (``GRADER_SANDBOX`` = ``bubblewrap``, ``unshare``,
``rlimits`` or ``fallback`` forces one; a forced backend that cannot run here is refused):

``bubblewrap`` (preferred; Debian package ``bubblewrap``)
    ``bwrap`` builds a new root from the mounts of :mod:`grader.sandbox.layout` (read-only
    ``/usr``, the interpreter, torch and its dependencies, the run's folder; a private ``/tmp``
    and ``/dev/shm``; no ``/etc``, no home, no grader) with new network, PID, IPC and UTS
    namespaces; ``setpriv`` drops to an unused uid (``100000 + slot``, one per concurrent
    run) with no capabilities and no new privileges.
``unshare`` (fallback, root and util-linux's ``unshare``)
    The same mounts, namespaces and uid, built by :mod:`grader.sandbox.init` in a new mount
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
import shutil
import subprocess
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from grader.sandbox import layout
from grader.sandbox.layout import Bind, StrPath
from grader.sandbox.cgroup import PidsGroup, pids_parent
from grader.sandbox.limits import GiB, MiB, Limits, diagnose, explain_limit, limit_message
from grader.sandbox.proc import (STRONG, Running, UidSlot, _can_unshare_net, _tasks_of, collect, exit_status,
                                 kill_group, preexec)

__all__ = ["Limits", "SandboxResult", "Running", "run", "start", "choose", "describe", "backend", "problem",
           "python_argv", "explain_limit", "limit_message", "GiB", "MiB", "STRONG", "BACKENDS"]

BACKENDS = ("bubblewrap", "unshare", "rlimits")
INIT = str(Path(__file__).with_name("init.py"))


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
    reports: tuple[bytes, ...] = field(default=(), repr=False)   # bytes read from each of report_fds
    truncated: bool = False         # stdout or stderr went over Limits.output_bytes

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


# ---------------------------------------------------------------- backends


def python_argv() -> list[str]:
    """The sandbox's Python (``[interpreter, "-B", "-S"]``); torch is importable, nothing else."""
    return layout.python_argv()


@lru_cache(maxsize=None)
def problem(name: str) -> str | None:
    """Why backend ``name`` cannot run here, or None."""
    if name == "rlimits" or os.environ.get("GRADER_SANDBOX_CHECKED") == name:  # set by grader.code.grade for its run
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


# ------------------------------------------------------------------ launching


@dataclass
class _Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    preexec: Callable[[], None]
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


def _prepare(name: str, command: Iterable[StrPath], limits: Limits, readable: Iterable[StrPath], binds: Iterable[Bind],
             env: Mapping[str, str] | None, cwd: str, keep_fds: Iterable[int], hide: Iterable[StrPath],
             scratch: str | None = None) -> _Launch:
    base_env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "PYTHONNOUSERSITE": "1",
                "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                **layout.env(name in STRONG), **(env or {})}
    argv = [str(a) for a in command]
    if name == "rlimits":
        return _prepare_weak(argv, limits, base_env, cwd, readable, binds)
    slot = UidSlot()
    mounts = layout.mounts(tmp_bytes=limits.tmp_bytes, readable=readable, binds=binds, hide=hide)
    if name == "bubblewrap":
        drop = ["setpriv", f"--reuid={slot.uid}", f"--regid={slot.uid}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        full = layout.bwrap_argv(mounts, cwd=cwd, command=drop + argv)
        return _Launch(full, base_env, None, preexec(limits), "bubblewrap", slot)
    import json
    import tempfile
    root = tempfile.mkdtemp(prefix="grader-root-", dir=scratch)
    spec = {"root": root, "mounts": mounts, "uid": slot.uid, "cwd": cwd, "argv": argv, "keep_fds": list(keep_fds)}
    full = ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--net", "--ipc", "--uts", "--",
            layout.runtime().python, "-I", "-S", "-B", INIT, json.dumps(spec)]
    group = PidsGroup.make(limits.processes + 8)
    return _Launch(full, base_env, "/", preexec(limits, join=group.join if group else None),
                   describe("unshare"), slot, group, root)


def _prepare_weak(argv: list[str], limits: Limits, base_env: dict[str, str], cwd: str, readable: Iterable[StrPath],
                  binds: Iterable[Bind]) -> _Launch:
    # no mounts: the paths the caller gave inside the sandbox are the host's
    for host, dest in binds:
        pattern = re.compile(re.escape(str(dest).rstrip("/")) + r'(?=/|$|")')
        cwd = pattern.sub(lambda _m: str(host), cwd)
        argv = [pattern.sub(lambda _m: str(host), a) for a in argv]
    if os.geteuid() == 0:  # root ignores RLIMIT_NPROC: a pids cgroup holds the count, where one can be made
        group = PidsGroup.make(limits.processes)
        setup = preexec(limits, drop_uid=_fallback_uid_ok(), unshare_net=True, join=group.join if group else None)
        return _Launch(argv, base_env, cwd, setup, describe("rlimits"), None, group)
    # the grader's own uid: RLIMIT_NPROC counts all its processes, so allow the ones it has now
    nproc = limits.processes + _tasks_of(os.getuid())
    return _Launch(argv, base_env, cwd, preexec(limits, nproc=nproc), describe("rlimits"))


def _popen(launch: _Launch, pass_fds: Iterable[int]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(launch.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=launch.env, cwd=launch.cwd, start_new_session=True, preexec_fn=launch.preexec,
                            pass_fds=tuple(pass_fds), close_fds=True)


def _run_plain(name: str, argv: list[str]) -> SandboxResult:
    """A run on backend ``name`` without asking :func:`problem` (which uses it to probe)."""
    limits = Limits(wall_s=30, cpu_s=30)
    launch = _prepare(name, argv, limits, (), (), None, "/tmp", (), ())
    return _finish(launch, limits, (), name)


# ------------------------------------------------------------------ running


def run(argv: Iterable[StrPath], *, limits: Limits = Limits(), readable: Iterable[StrPath] = (),
        binds: Iterable[Bind] = (), env: Mapping[str, str] | None = None, cwd: str = "/tmp", report_fds: int = 0,
        force_fallback: bool = False, backend: str | None = None, hide: Iterable[StrPath] = ()) -> SandboxResult:
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


def _finish(launch: _Launch, limits: Limits, pipes: Sequence[tuple[int, int]], name: str) -> SandboxResult:
    start = time.monotonic()
    try:
        try:
            proc = _popen(launch, [w for _, w in pipes])
        except OSError as e:
            return SandboxResult(None, "", str(e), False, None, f"could not start: {e}", launch.description)
        finally:
            for _, w in pipes:
                os.close(w)
        bufs, truncated, timed_out = collect(proc, [r for r, _ in pipes], limits, start)
        status = proc.wait()
        kill_group(proc.pid)  # leftovers die with the group
    finally:
        for r, _ in pipes:
            try:
                os.close(r)
            except OSError:
                pass
        launch.cleanup()
    out, err = (b.decode("utf-8", errors="replace") for b in bufs[:2])
    code, sig = exit_status(status, name)
    limit, message = diagnose(code, sig, timed_out, err, limits)
    return SandboxResult(code, out, err, timed_out, sig, message, launch.description, limit, tuple(bufs[2:]),
                         truncated)


def start(argv: Iterable[StrPath], *, limits: Limits = Limits(), binds: Iterable[Bind] = (),
          env: Mapping[str, str] | None = None, cwd: str = "/tmp", pass_fds: Collection[int] = (),
          backend: str | None = None, hide: Iterable[StrPath] = (), scratch: str | None = None) -> Running:
    """Start ``argv`` sandboxed and return at once; ``pass_fds`` are kept open in it (at the
    same numbers). The caller enforces time (:meth:`Running.kill`); rlimits hold as in :func:`run`.
    ``scratch``: a folder of the caller's for what the run needs on the host (the unshare
    backend's mount point), so that a caller who is killed leaves it where its own caller cleans."""
    name = choose(backend)
    launch = _prepare(name, argv, limits, (), binds, env, cwd, pass_fds, hide, scratch)
    try:
        proc = _popen(launch, pass_fds)
    except BaseException:
        launch.cleanup()
        raise
    return Running(launch, proc, name, limits)
