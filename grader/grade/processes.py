"""Check processes that stay up between calls: :class:`ProcessExecutor`.

Each worker is a fresh Python (``python -m grader.grade.processes``), never a fork: safe to
start from a process with threads (a web server), and nothing of the caller's state (its
``__main__``, its locks) goes with it. A worker imports the checker once, then answers
``(handler token, pickled handler or None, payload, limits)`` with the result (or a
:class:`~grader.grade.pool.Failure`), one task at a time, on its standard input and output.
It keeps the last handlers it was given (with their prepared specs), so a repeated handler is
sent once. In the worker each task runs under its limits (:class:`grader.grade.pool.Guard`:
SIGALRM, CPU and address-space limits); the caller kills a worker still busy past the time
limit plus the grace (stuck in C code) and starts another when one is next needed.

Any number of threads may call :meth:`ProcessExecutor.run` at once: each task takes a free
worker (starting one, up to ``workers``) or waits for one.
"""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from .pool import AnswerLimits, Failure, Guard, limits_for

HANDLERS_KEPT = 32      # handlers (with their prepared specs) a worker keeps, most recently used
PRELOAD = ("grader.grade.check", "grader.grade.reading", "grader.answers", "sympy")


def _serve(conn_in: Connection, conn_out: Connection) -> None:
    """A worker's loop, until its input closes."""
    guard = Guard()
    handlers: OrderedDict[str, Any] = OrderedDict()
    while True:
        try:
            token, data, payload, limits = conn_in.recv()
        except (EOFError, OSError):
            return
        if data is not None:
            handler = pickle.loads(data)
            if token is not None:
                handlers[token] = handler
                while len(handlers) > HANDLERS_KEPT:
                    handlers.popitem(last=False)
        else:
            handler = handlers[token]
            handlers.move_to_end(token)
        out = guard.run(handler, payload, limits)
        try:
            conn_out.send(out)
        except (TypeError, ValueError, AttributeError, RecursionError, MemoryError, pickle.PicklingError) as e:
            conn_out.send(Failure("error", f"result could not be sent: {type(e).__name__}"))


def main() -> None:
    """The worker process: its protocol on its own copies of stdin/stdout; stdout itself then
    points at stderr, so that nothing printed can corrupt the protocol."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn_in = Connection(os.dup(0), writable=False)
    conn_out = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    _serve(conn_in, conn_out)


class _Worker:
    def __init__(self) -> None:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])   # the folder holding grader/
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.popen = subprocess.Popen([sys.executable, "-m", "grader.grade.processes"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=env, close_fds=True)
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.send_conn = Connection(os.dup(self.popen.stdin.fileno()), readable=False)
        self.recv_conn = Connection(os.dup(self.popen.stdout.fileno()), writable=False)
        self.popen.stdin.close()
        self.popen.stdout.close()
        self.seen: OrderedDict[str, bool] = OrderedDict()   # the handler tokens the worker keeps, as it keeps them

    def send(self, handler: Any, payload: Any, limits: AnswerLimits) -> None:
        token = getattr(handler, "token", None)
        data = None
        if token is None or token not in self.seen:
            data = pickle.dumps(handler)
            if token is not None:
                self.seen[token] = True
                while len(self.seen) > HANDLERS_KEPT:
                    self.seen.popitem(last=False)
        else:
            self.seen.move_to_end(token)
        self.send_conn.send((token, data, payload, limits))

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        try:
            self.popen.kill()
        except OSError:
            pass
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for c in (self.send_conn, self.recv_conn):
            try:
                c.close()
            except OSError:
                pass


class ProcessExecutor:
    """Up to ``workers`` check processes, started when first needed and kept between calls
    (see the module doc). :meth:`close` stops them."""

    def __init__(self, workers: int = 2) -> None:
        self.workers = max(1, workers)
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._count = 0
        self._closed = False

    def _acquire(self, block: bool) -> _Worker | None:
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("this executor is closed")
                if self._idle:
                    return self._idle.pop()
                if self._count < self.workers:
                    self._count += 1
                    break
                if not block:
                    return None
                self._cond.wait()
        try:
            return _Worker()
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def _release(self, worker: _Worker, alive: bool) -> None:
        keep = alive and worker.alive()
        with self._cond:
            if keep and not self._closed:
                self._idle.append(worker)
                worker = None       # type: ignore[assignment]
            else:
                self._count -= 1
            self._cond.notify()
        if worker is not None:
            worker.kill()

    def run(self, tasks: Sequence[tuple[Any, Any]], handler: Callable[[Any], Any], *, limits: AnswerLimits,
            on_result: Callable[[int], None] | None = None) -> dict[Any, Any]:
        """``{task id: handler(payload) or Failure}``, the tasks spread over the free workers."""
        tasks = list(tasks)
        results: dict[int, Any] = {}
        queue = deque(range(len(tasks)))
        busy: dict[_Worker, tuple[int, float]] = {}     # worker -> (task index, deadline)
        try:
            while queue or busy:
                while queue:
                    w = self._acquire(block=not busy)
                    if w is None:
                        break
                    i = queue.popleft()
                    mine = limits_for(handler, tasks[i][1], limits)
                    try:
                        w.send(handler, tasks[i][1], mine)
                    except (OSError, ValueError, EOFError):
                        results[i] = Failure("died", "the worker process died")
                        self._release(w, alive=False)
                        continue
                    except (TypeError, AttributeError, RecursionError, pickle.PicklingError) as e:
                        results[i] = Failure("error", f"the task could not be sent: {type(e).__name__}")
                        self._release(w, alive=False)       # it may have part of a message: not reused
                        continue
                    busy[w] = (i, time.monotonic() + mine.timeout_s + mine.grace_s)
                if not busy:
                    continue
                left = max(0.0, min(d for _, d in busy.values()) - time.monotonic())
                ready = wait([w.recv_conn for w in busy], timeout=left)
                now = time.monotonic()
                for w in list(busy):
                    i, deadline = busy[w]
                    if w.recv_conn in ready:
                        try:
                            results[i] = w.recv_conn.recv()
                            alive = True
                        except (EOFError, OSError):
                            w.popen.poll()
                            results[i] = Failure("died", f"the worker process died (exit {w.popen.returncode})")
                            alive = False
                    elif now > deadline:
                        results[i], alive = Failure("timeout", "killed after the wall-clock limit"), False
                    else:
                        continue
                    del busy[w]
                    self._release(w, alive)
                    if on_result:
                        on_result(1)
        finally:
            for w in busy:          # interrupted: their tasks' results will never be read
                self._release(w, alive=False)
        return {tasks[i][0]: out for i, out in results.items()}

    def close(self) -> None:
        """Stop the idle workers (busy ones stop when their task ends); later runs fail."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._cond.notify_all()
        for w in idle:
            w.kill()


if __name__ == "__main__":
    main()
