"""The trusted runner: one process that has imported pytest, torch and mha once, and forks a
fresh copy of itself for each code answer's test run.

    r = runner().run(["-q", "tests/", ...], cwd=work, env=env, out=work / "out.txt",
                     report=work / "report.jsonl", timeout=150)
    r.exit_code, r.timed_out, r.died

A test run of a code exercise is trusted code (the exercise's tests, its checks, the
reference, mha): it runs here, never in the sandbox, and starts the sandboxed process that
serves the learner's functions itself (:mod:`grader.pytest_plugin.code`). What it costs to start —
Python, pytest, torch, mha, the first FLOP count on the meta device — is paid once per grader
process instead of once per answer: each job is a ``fork`` of a runner that is already warm,
so no state passes from one answer's run to the next.

The runner is ``python -m grader.code.runner``; jobs and results are JSON lines on its stdin
and stdout. A job's run writes pytest's output to ``out`` and its results (``{report}`` in
``argv`` becomes the descriptor) to ``report``. Thread-safe; a runner that dies is started
again for the next job; a job past its ``timeout`` is killed with its process group.
"""
from __future__ import annotations

import atexit
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, TypedDict, cast

if TYPE_CHECKING:
    from grader.sandbox.layout import StrPath

PRELOAD = ("pytest", "torch", "mha", "grader.pytest_plugin", "grader.pytest_plugin.bank", "grader.pytest_plugin.code",
           "grader.code.solution_proxy", "grader.code.grade")


@dataclass(frozen=True)
class RunnerResult:
    exit_code: int | None     # pytest's exit code; None when killed
    timed_out: bool = False
    died: str = ""            # why there is no exit code (the runner died, a signal)


class RunnerJob(TypedDict):
    """A job as the runner process reads it (one JSON line on its stdin)."""

    id: int
    argv: list[str]
    cwd: str
    env: dict[str, str]
    out: str
    report: str


class _Waiting(TypedDict):
    """A job the grader waits for: set when its status (or the runner's end) is known."""

    event: threading.Event
    pid: int | None
    status: int | None


class Runner:
    """The grader's handle on a runner process (see :func:`runner`)."""

    def __init__(self) -> None:
        self.pid_of_owner = os.getpid()
        # torch's compiler caches go to a folder of ours: removed when this process ends or the
        # runner is replaced, even if the runner was killed
        self.cache = tempfile.mkdtemp(prefix="grader-runner-")
        atexit.register(self.shutdown)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        env.update({"OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "TORCHINDUCTOR_CACHE_DIR": self.cache})
        self.proc = subprocess.Popen([sys.executable, "-m", "grader.code.runner"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                     start_new_session=True)   # it ends when its stdin closes
        self.lock = threading.Lock()
        self.jobs: dict[int, _Waiting] = {}
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def alive(self) -> bool:
        return self.proc.poll() is None and os.getpid() == self.pid_of_owner

    def _read(self) -> None:
        for line in cast(IO[bytes], self.proc.stdout):         # stdout=PIPE: never None
            try:
                msg = json.loads(line)
                job = self.jobs[msg["id"]]
            except (ValueError, KeyError, TypeError):
                continue
            if "pid" in msg:
                job["pid"] = msg["pid"]
            if "status" in msg:
                job["status"] = msg["status"]
                job["event"].set()
        with self.lock:  # the runner is gone: nobody will answer
            for job in self.jobs.values():
                job["event"].set()

    def run(self, argv: Iterable[StrPath], *, cwd: StrPath, env: dict[str, str], out: StrPath, report: StrPath,
            timeout: float) -> RunnerResult:
        with self.lock:
            self.next_id += 1
            n = self.next_id
            job = self.jobs[n] = {"event": threading.Event(), "pid": None, "status": None}
            msg: RunnerJob = {"id": n, "argv": [str(a) for a in argv], "cwd": str(cwd), "env": env, "out": str(out),
                   "report": str(report)}
            try:
                stdin = cast(IO[bytes], self.proc.stdin)       # stdin=PIPE: never None
                stdin.write((json.dumps(msg) + "\n").encode())
                stdin.flush()
            except OSError:
                del self.jobs[n]
                return RunnerResult(None, died="the trusted runner is not running")
        try:
            timed_out = not job["event"].wait(timeout)
            if timed_out and job["pid"]:
                try:
                    os.killpg(job["pid"], signal.SIGKILL)
                except OSError:
                    pass
                job["event"].wait(10)
            status = job["status"]
        finally:
            with self.lock:
                self.jobs.pop(n, None)
        if status is None:
            return RunnerResult(None, timed_out, "" if timed_out else "the trusted runner died")
        if os.WIFEXITED(status):
            return RunnerResult(os.WEXITSTATUS(status), timed_out)
        return RunnerResult(None, timed_out, f"killed by {signal.Signals(os.WTERMSIG(status)).name}")

    def close(self) -> None:
        """End the runner: it ends when its stdin closes (after its warm-up, if it is still in it);
        one that takes longer than 5 s is killed with its process group."""
        try:
            cast(IO[bytes], self.proc.stdin).close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)   # its own session: the runner and its forks
            except OSError:
                self.proc.kill()
            self.proc.wait()

    def shutdown(self) -> None:
        """At the grader's exit: end the runner first, then remove its cache folder (removed while
        the runner still ran, the folder came back as the runner wrote to it)."""
        if os.getpid() != self.pid_of_owner:
            return
        if self.proc.poll() is None:
            self.close()
        shutil.rmtree(self.cache, ignore_errors=True)


_runner: Runner | None = None
_runner_lock = threading.Lock()


def runner() -> Runner:
    """This process's runner, started on first use (again if it died, or after a fork)."""
    global _runner
    with _runner_lock:
        if _runner is None or not _runner.alive():
            if _runner is not None and os.getpid() == _runner.pid_of_owner:
                _runner.shutdown()
            _runner = Runner()
        return _runner


# ------------------------------------------------------------------ the runner process


def _warm() -> None:
    """Import what every test run imports, and take the first meta-device FLOP count (it
    imports torch's compiler stack, a second on its own) — once, here."""
    import importlib
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    try:
        import torch
        torch.set_num_threads(1)
        import mha
        for need_weights in (False, True):
            x = torch.empty(1, 2, 8, device="meta")
            mha.measure_flops(mha.MultiHeadAttention(8, 2, device="meta"), x, x, x, need_weights=need_weights)
    except Exception:
        pass


def _child(job: RunnerJob, keep_out: Iterable[int]) -> None:
    """A forked job: its own session, folder, environment and output; pytest, then exit."""
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(job["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        report = os.open(job["report"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        for fd in keep_out:
            os.close(fd)
        os.chdir(job["cwd"])
        cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
        os.environ.clear()
        os.environ.update(job["env"])
        if cache:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        import pytest
        argv = [a.replace("{report}", str(report)) for a in job["argv"]]
        code = pytest.main(argv)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(code))
    except BaseException:
        os._exit(70)


def main() -> None:
    """Serve jobs until stdin closes and the last job has ended; then remove the compiler cache
    folder the grader gave us (its owner removes it too, but a pool worker that made this runner
    ends with ``os._exit``, running no exit handler)."""
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")
    try:
        _serve()
    finally:
        if os.path.basename(cache).startswith("grader-runner-"):
            shutil.rmtree(cache, ignore_errors=True)


def _serve() -> None:
    _warm()
    r, w = os.pipe()
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    jobs: dict[int, int] = {}   # pid -> job id
    out = sys.stdout.buffer

    def say(obj: Mapping[str, object]) -> None:
        out.write((json.dumps(obj) + "\n").encode())
        out.flush()

    sel = selectors.DefaultSelector()
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "job")
    sel.register(r, selectors.EVENT_READ, "child")
    pending = b""
    reading = True
    while reading or jobs:
        for key, _ in sel.select(timeout=1.0):
            if key.data == "job":
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    reading = False
                    sel.unregister(key.fd)
                    continue
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    job = json.loads(line)
                    pid = os.fork()
                    if pid == 0:
                        _child(job, [r, w, sys.stdin.fileno()])
                    jobs[pid] = job["id"]
                    say({"id": job["id"], "pid": pid})
            else:
                try:
                    os.read(r, 4096)
                except BlockingIOError:
                    pass
        while jobs:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in jobs:
                say({"id": jobs.pop(pid), "status": status})


if __name__ == "__main__":
    main()
