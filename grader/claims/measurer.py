"""The checking process's side of the measuring process (:mod:`grader.claims.worker`).

A claim's measurements run there under the claim's time limit, counted from when the process
starts on them (its own start and torch's import are counted to no claim). If they run past
it, or the process dies (a crash in torch's C code, out of memory), the process is killed,
that claim is an error saying so, and a fresh process measures the claims after it: one
claim's failure or time-out never stops the others, and no signal ever interrupts torch inside
the checking process.
"""
from __future__ import annotations

import atexit
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypedDict, cast



class MeasureError(Exception):
    """A measurement that failed (its message says why), or one that was not made."""


class WorkerInfo(TypedDict, total=False):
    """What :meth:`Measurer.ready` says: the process's ready message (``cuda``, ``torch``,
    ``memory_budget``), or ``fatal`` when it cannot start (nothing at all: not ready in time)."""

    cuda: bool
    torch: str
    memory_budget: int
    fatal: str


@dataclass
class Measurements:
    """What the measuring process gave for one claim (not :class:`grader.answers.Outcome`, an
    answer's grade): its measurements: ``values`` (one per request: a value, or an Exception), or
    ``failure`` (why none came: time limit, the process died), and the seconds they took."""

    values: list[Any] | None = None        # a measured value (JSON: numbers, lists, dicts) or a MeasureError
    failure: str = ""
    timed_out: bool = False
    seconds: float = 0.0


@dataclass
class _Job:
    key: int
    requests: list[Mapping[str, Any]]       # as grader.claims.checks.measured makes them
    budget: float | None
    outcome: Measurements | None = None
    started: float | None = None


@dataclass
class _Process:
    popen: subprocess.Popen[str]
    stderr: IO[bytes]
    outbox: queue.Queue[str | None] = field(default_factory=queue.Queue)   # lines for its stdin (a writer thread)
    ready: bool = False
    info: WorkerInfo = field(default_factory=WorkerInfo)
    running: int | None = None
    expired: int | None = None
    timer: threading.Timer | None = None


class Measurer:
    """The checking process's side: submit a claim's requests, read its outcome later.

    Starts its process on :meth:`start` (or the first :meth:`submit`) and restarts one when a
    claim kills it; :meth:`close` ends it. ``command`` replaces the process (for tests);
    ``memory_budget`` (bytes) is what a measurement may need (:mod:`grader.claims.budget`)."""

    READY_TIMEOUT = 600.0   # seconds for the process to import torch and say it is ready

    def __init__(self, command: Iterable[str] | None = None, ready_timeout: float | None = None,
                 memory_budget: int | None = None) -> None:
        self._command = list(command) if command else [sys.executable, "-m", "grader.claims.worker"]
        self._memory_budget = memory_budget     # bytes (None: the process's default, grader.claims.budget)
        self._ready_timeout = self.READY_TIMEOUT if ready_timeout is None else ready_timeout
        self._cond = threading.Condition()
        self._jobs: dict[int, _Job] = {}
        self._queue: list[int] = []          # submitted to the current process, not done, in order
        self._proc: _Process | None = None
        self._fatal = ""                      # the process cannot start: every claim fails with this
        self._next = 0
        self._closed = False
        self._idle_deaths = 0
        self.restarts = 0

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> "Measurer":
        with self._cond:
            if self._proc is None and not self._fatal and not self._closed:
                self._spawn()
        return self

    def _spawn(self) -> None:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])   # the folder holding grader/ and mha/
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        if self._memory_budget is not None:
            from .budget import ENV
            env[ENV] = str(int(self._memory_budget))
        stderr = tempfile.TemporaryFile()
        popen = subprocess.Popen(self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                 env=env, text=True, encoding="utf-8", bufsize=1)
        proc = self._proc = _Process(popen, stderr)
        threading.Thread(target=self._read, args=(proc,), daemon=True, name="grader-measurer-read").start()
        threading.Thread(target=self._write, args=(proc,), daemon=True, name="grader-measurer-write").start()
        proc.timer = threading.Timer(self._ready_timeout, self._not_ready, (proc,))
        proc.timer.daemon = True
        proc.timer.start()
        for key in self._queue:
            self._send(proc, self._jobs[key])

    def _send(self, proc: _Process, job: _Job) -> None:
        proc.outbox.put(json.dumps({"claim": job.key, "requests": job.requests}) + "\n")

    @staticmethod
    def _write(proc: _Process) -> None:
        """Feed the process its claims, never blocking the checking thread on a full pipe."""
        stdin = cast(IO[str], proc.popen.stdin)        # stdin=PIPE: never None
        while True:
            line = proc.outbox.get()
            try:
                if line is None:
                    stdin.close()
                    return
                stdin.write(line)
                stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                return      # the process is gone; its reader thread sees it and starts another

    def close(self) -> None:
        """End the process (claims not measured yet fail, saying so)."""
        with self._cond:
            self._closed = True
            proc, self._proc = self._proc, None
            for key in self._queue:
                self._jobs[key].outcome = Measurements(failure="the measuring process was closed")
            self._queue.clear()
            self._cond.notify_all()
        if proc is None:
            return
        if proc.timer:
            proc.timer.cancel()
        proc.outbox.put(None)
        proc.popen.kill()       # nothing is left for it to do (or it is still importing torch)
        proc.popen.wait()

    def __enter__(self) -> Measurer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- use ----------------------------------------------------------------------------------
    def ready(self, timeout: float | None = None) -> WorkerInfo:
        """Wait until the process has imported torch: its info ({"cuda": bool, "torch": version}),
        or {"fatal": message} if it cannot."""
        self.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._fatal and not (self._proc and self._proc.ready):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return {}
                self._cond.wait(left)
            # no fatal error: the loop ended on a process that is ready
            return {"fatal": self._fatal} if self._fatal else cast(_Process, self._proc).info.copy()

    def submit(self, requests: Sequence[Mapping[str, Any]], budget: float | None = None) -> int:
        """Queue a claim's requests; ``budget``: seconds they may take, once started (None: no limit)."""
        with self._cond:
            key = self._next
            self._next += 1
            job = self._jobs[key] = _Job(key, list(requests), budget)
            if self._fatal:
                job.outcome = Measurements(failure=self._fatal)
                return key
            self._queue.append(key)
            if self._proc is None:
                self._spawn()
            else:
                self._send(self._proc, job)
        return key

    def outcome(self, key: int) -> Measurements:
        """Wait for a claim's outcome."""
        with self._cond:
            job = self._jobs[key]
            while job.outcome is None:
                self._cond.wait()
            del self._jobs[key]
            return job.outcome

    # -- the reader thread --------------------------------------------------------------------
    def _read(self, proc: _Process) -> None:
        for line in cast(IO[str], proc.popen.stdout):      # stdout=PIPE: never None
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            with self._cond:
                self._handle(proc, msg)
        proc.popen.wait()
        with self._cond:
            self._died(proc)

    def _handle(self, proc: _Process, msg: dict[str, Any]) -> None:
        if "ready" in msg:
            if proc.timer:
                proc.timer.cancel()
                proc.timer = None
            proc.ready, proc.info = True, cast(WorkerInfo, {k: v for k, v in msg.items() if k != "ready"})
        elif "fatal" in msg:
            self._fatal = f"the measuring process could not start: {msg['fatal']}"
        elif "start" in msg:
            job = self._jobs.get(msg["start"])
            proc.running = msg["start"]
            if job is not None:
                job.started = time.monotonic()
                if job.budget is not None:
                    proc.timer = threading.Timer(max(job.budget, 0.0), self._expire, (proc, job.key))
                    proc.timer.daemon = True
                    proc.timer.start()
        elif "done" in msg:
            key = msg["done"]
            if proc.timer:
                proc.timer.cancel()
                proc.timer = None
            proc.running = None
            job = self._jobs.get(key)
            if job is not None and job.outcome is None:
                values = [r["value"] if "value" in r else MeasureError(r.get("error", "failed"))
                          for r in msg["results"]]
                job.outcome = Measurements(values=values, seconds=float(msg.get("seconds", 0.0)))
            if key in self._queue:
                self._queue.remove(key)
            self._idle_deaths = 0
        self._cond.notify_all()

    def _not_ready(self, proc: _Process) -> None:
        with self._cond:
            if proc.ready or proc.popen.poll() is not None:
                return
            self._fatal = f"the measuring process was not ready within {self._ready_timeout:g} s"
        proc.popen.kill()

    def _expire(self, proc: _Process, key: int) -> None:
        with self._cond:
            if proc.running != key or proc.popen.poll() is not None:
                return
            proc.expired = key
        proc.popen.kill()

    def _died(self, proc: _Process) -> None:
        if proc.timer:
            proc.timer.cancel()
        if proc is not self._proc:      # closed, or already replaced
            _close_quietly(proc.stderr)
            self._cond.notify_all()
            return
        self._proc = None
        if proc.ready and proc.running is None:     # died between claims: no claim to blame
            self._idle_deaths += 1
            if self._idle_deaths > 2:
                self._fatal = (f"the measuring process keeps dying between claims "
                               f"({_status(proc.popen.returncode)}){_tail(proc)}")
        if not proc.ready and not self._fatal:
            self._fatal = f"the measuring process could not start ({_status(proc.popen.returncode)}){_tail(proc)}"
        if self._fatal:
            for key in self._queue:
                self._jobs[key].outcome = Measurements(failure=self._fatal)
            self._queue.clear()
        elif proc.running is not None and proc.running in self._jobs:
            job = self._jobs[proc.running]
            spent = time.monotonic() - job.started if job.started else 0.0
            if proc.expired == job.key:
                job.outcome = Measurements(failure=f"time limit exceeded while measuring ({_limit(job.budget)} left "
                                              f"for the measurements)", timed_out=True, seconds=spent)
            else:
                job.outcome = Measurements(failure=f"the measuring process died ({_status(proc.popen.returncode)}) "
                                              f"while measuring this claim{_tail(proc)}", seconds=spent)
            if job.key in self._queue:
                self._queue.remove(job.key)
        if self._queue and not self._closed:
            self.restarts += 1
            self._spawn()
        proc.outbox.put(None)
        _close_quietly(proc.stderr)
        self._cond.notify_all()


def _close_quietly(f: IO[bytes]) -> None:
    try:
        f.close()
    except OSError:
        pass


_SHARED: Measurer | None = None
_SHARED_LOCK = threading.Lock()


def shared() -> Measurer:
    """One measuring process for this whole Python process (started now if none is alive),
    closed at exit: repeated runs (tests, tools) pay torch's import once."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None or _SHARED._closed or _SHARED._fatal:
            if _SHARED is None:
                atexit.register(_close_shared)
            _SHARED = Measurer()
        return _SHARED.start()


def _close_shared() -> None:
    if _SHARED is not None:
        _SHARED.close()


def _limit(budget: float | None) -> str:
    return "no time" if budget is None or budget <= 0 else f"{budget:.3g} s"


def _status(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _tail(proc: _Process) -> str:
    try:
        proc.stderr.seek(0)
        text = proc.stderr.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return f": {' / '.join(lines[-3:])[-500:]}" if lines else ""
