"""Long-lived worker processes that run the engine on untrusted input, one task at a time each.

A request's answers are graded in a worker, never in the server: a hostile answer that burns
CPU, memory or time harms only the worker it runs in. Each worker has an address-space limit
(``RLIMIT_AS``: past it, MemoryError) and each task a deadline; a worker past its deadline (stuck
in C code, where the engine's own per-answer alarm cannot reach) is killed from outside and
replaced, and only its task fails (:class:`TaskFailed`). Other requests' tasks wait in the queue
or run in the other workers.

Workers are started from a fork server (``multiprocessing``'s "forkserver": a clean process
that preloaded the engine's modules), never forked from the threaded server; each loads the
bank itself (``init``) before it says it is ready.

Why not the engine's :class:`grader.api.ProcessExecutor` (its supervisor of check processes):
that runs *check tasks* only. With it, ``grade_submission`` would screen and plan a request's
answers in the server's process, and ``validate_answer`` would read an answer there (it uses no
process at all); here a worker holding the loaded bank runs the whole request — policy, checks,
totals, or a validation — under one deadline and an address-space limit, so nothing of an
untrusted answer is computed in the server. The pool also gives ``/healthz`` and ``/metrics``
their numbers (workers ready, queue depth) and is recycled with a reloaded bank by a regrade.
Inside each worker the checks run in the engine's own :class:`grader.api.SerialExecutor`.

Nothing a task holds can stop the dispatcher thread: a task is pickled whole before a byte is
sent, and one that cannot be (too deep, not picklable), or anything raised while handing it over
or reading its answer, fails that task alone (:class:`TaskFailed`).
"""
from __future__ import annotations

import itertools
import logging
import multiprocessing as mp
import os
import pickle
import resource
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkServerContext
from typing import Any

from .lifeline import die_with, die_with_parent, lifeline

__all__ = ["TaskFailed", "WorkerPool", "context", "die_with", "die_with_parent", "lifeline"]
log = logging.getLogger("grader.serve")
PRELOAD = ["grader.serve.engine", "sympy"]     # the engine (grader.api and what it imports), imported once


class TaskFailed(Exception):
    """A task that did not finish: its worker died, or was killed past the deadline."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(detail or reason)
        self.reason = reason        # "timeout" | "died" | "error" | "closed"


def context() -> ForkServerContext:
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def _vm_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _main(conn: Connection, init: Callable[..., None], init_args: tuple[Any, ...], handler: Callable[[Any], Any],
          memory_mb: int, line: Connection | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    if line is not None:
        die_with(line)
    try:
        init(*init_args)
    except BaseException as e:  # the bank cannot be loaded: said once, to the parent
        conn.send(("failed", f"{type(e).__name__}: {e}"[:2000]))
        return
    if memory_mb:
        cap = _vm_bytes() + memory_mb * 2**20
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        except (ValueError, OSError):
            pass
    conn.send(("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        tid, payload = msg
        try:
            out = ("ok", handler(payload))
        except MemoryError:
            out = ("error", "memory")
        except BaseException as e:  # a bug in the handler: this task's failure only
            out = ("error", f"{type(e).__name__}: {e}"[:500])
        try:
            conn.send((tid, out))
        except Exception as e:     # MemoryError, a result too deep or not picklable: this task's failure only
            conn.send((tid, ("error", f"result could not be sent: {type(e).__name__}")))


def _resolve(fut: Future[Any], value: Any) -> None:
    try:
        fut.set_result(value)
    except InvalidStateError:      # cancelled by its caller meanwhile
        pass


def _fail(fut: Future[Any], error: BaseException) -> None:
    try:
        fut.set_exception(error)
    except InvalidStateError:
        pass


class _Worker:
    def __init__(self, ctx: ForkServerContext, init: Callable[..., None], init_args: tuple[Any, ...],
                 handler: Callable[[Any], Any], memory_mb: int) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_main, args=(child, init, init_args, handler, memory_mb, lifeline()),
                                daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.task: tuple[int, Future[Any], float] | None = None     # (tid, future, deadline)
        self.retire = False

    def kill(self) -> None:
        try:
            self.proc.kill()
        except (OSError, ValueError, AttributeError):
            pass
        self.proc.join(timeout=5)
        self.conn.close()


class WorkerPool:
    """``submit(payload, deadline_s) -> Future`` of ``handler(payload)`` in a worker process."""

    def __init__(self, init: Callable[..., None], init_args: tuple[Any, ...], handler: Callable[[Any], Any], *,
                 processes: int = 2, memory_mb: int = 1024, ctx: ForkServerContext | None = None) -> None:
        self._ctx = ctx or context()
        self._init, self._init_args, self._handler = init, init_args, handler
        self._n, self._memory_mb = max(1, processes), memory_mb
        self._queue: deque[tuple[int, Any, float, Future[Any]]] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._workers: list[_Worker] = []
        self._closed = False
        self.broken: str | None = None       # why the workers cannot start (the bank cannot load)
        self.restarts = 0                    # the dispatcher recovered from a failure of its own (metrics)
        self.failed: dict[str, int] = {}     # tasks failed, by TaskFailed.reason (metrics)
        self._ready = threading.Event()
        self._started = False
        self._thread = threading.Thread(target=self._loop, name="grader-workers", daemon=True)

    # ---------------------------------------------------------------- public

    def start(self, wait_s: float = 300.0) -> None:
        """Start the workers and wait until they are ready (or one cannot start)."""
        self._workers = [self._spawn() for _ in range(self._n)]
        self._started = True
        self._thread.start()
        self._ready.wait(wait_s)
        if self.broken:
            raise RuntimeError(f"the grading workers cannot start: {self.broken}")

    def submit(self, payload: Any, deadline_s: float) -> Future[Any]:
        fut: Future[Any] = Future()
        if self._closed or self.broken:
            fut.set_exception(TaskFailed("closed", self.broken or "the service is stopping"))
            return fut
        with self._lock:
            self._queue.append((next(self._ids), payload, deadline_s, fut))
        self.ensure_dispatcher()
        self._wake()
        return fut

    def ensure_dispatcher(self) -> bool:
        """Start the dispatcher thread again if it ended (it catches every ``Exception``; this is
        for anything else): counted in :attr:`restarts`. True when it is running."""
        with self._lock:
            if not self._started or self._closed:
                return self._thread.is_alive()
            if not self._thread.is_alive():
                log.error("the grading dispatcher had stopped; it is started again")
                self.restarts += 1
                self._thread = threading.Thread(target=self._loop, name="grader-workers", daemon=True)
                self._thread.start()
        return True

    def call(self, payload: Any, deadline_s: float) -> Any:
        """``submit`` and wait: the handler's result, or :class:`TaskFailed`."""
        return self.submit(payload, deadline_s).result(timeout=deadline_s + 600)

    @property
    def depth(self) -> int:
        """Tasks waiting or running."""
        return len(self._queue) + sum(1 for w in self._workers if w.task)

    @property
    def alive_workers(self) -> int:
        """Worker processes alive (ready or loading the bank)."""
        return sum(1 for w in self._workers if w.proc.is_alive())

    @property
    def dispatcher_alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def ready_workers(self) -> int:
        """Workers ready for a task; 0 when the dispatcher thread is not running (then nothing
        would be handed to them: /healthz says so)."""
        if not self._thread.is_alive():
            return 0
        return sum(1 for w in self._workers if w.ready)

    def recycle(self, init_args: tuple[Any, ...]) -> None:
        """Replace every worker by one started with ``init_args`` (a reloaded bank); a worker
        busy with a task finishes it first."""
        with self._lock:
            self._init_args = init_args
            for w in self._workers:
                w.retire = True
        self._wake()

    def close(self) -> None:
        self._closed = True
        self._wake()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        for w in self._workers:
            try:
                w.conn.send(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.proc.join(timeout=2)
            if w.proc.is_alive():
                w.kill()
        with self._lock:
            pending, self._queue = list(self._queue), deque()
        for _, _, _, fut in pending:
            _fail(fut, TaskFailed("closed", "the service is stopping"))
        os.close(self._wake_r)
        os.close(self._wake_w)

    # ---------------------------------------------------------------- the dispatcher thread

    def _spawn(self) -> _Worker:
        return _Worker(self._ctx, self._init, self._init_args, self._handler, self._memory_mb)

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass

    def _task_failed(self, fut: Future[Any], error: TaskFailed) -> None:
        self.failed[error.reason] = self.failed.get(error.reason, 0) + 1
        _fail(fut, error)

    def _replace(self, w: _Worker, reason: str, detail: str) -> None:
        w.kill()
        if w.task:
            self._task_failed(w.task[1], TaskFailed(reason, detail))
            w.task = None
        if not self._closed:
            self._workers[self._workers.index(w)] = self._spawn()

    def _loop(self) -> None:
        """The dispatcher. Nothing a task holds can stop it: a task that cannot be handed over
        (or whose handling raises anything) fails alone (:meth:`_step`), and the loop goes on."""
        while not self._closed:
            try:
                self._step()
            except Exception:       # a bug here: logged; the tasks in flight are failed, never lost
                log.exception("the grading dispatcher")
                self.restarts += 1
                self._fail_all("the grading dispatcher failed; try again")
                time.sleep(0.05)

    def _fail_all(self, why: str) -> None:
        for w in list(self._workers):
            if w.task:
                try:
                    self._replace(w, "error", why)     # its task fails with it
                except Exception:
                    log.exception("replacing a grading worker")

    def _step(self) -> None:
        self._assign()
        now = time.monotonic()
        deadlines = [w.task[2] for w in self._workers if w.task]
        timeout = max(0.0, min(deadlines) - now) if deadlines else 1.0
        conns = [w.conn for w in self._workers] + [w.proc.sentinel for w in self._workers]
        try:
            ready = wait([self._wake_r, *conns], timeout=min(timeout, 1.0))
        except OSError:
            ready = []
        if self._wake_r in ready:
            try:
                os.read(self._wake_r, 4096)
            except OSError:
                pass
        for w in list(self._workers):
            self._service(w, ready)

    def _service(self, w: _Worker, ready: list[Any]) -> None:
        if w.conn in ready:
            try:
                while w.conn.poll():
                    msg = w.conn.recv()
                    if msg[0] == "ready":
                        w.ready = True
                        if all(x.ready for x in self._workers):
                            self._ready.set()
                    elif msg[0] == "failed":
                        self.broken = msg[1]
                        log.error("a grading worker cannot start: %s", msg[1])
                        self._ready.set()
                        self._fail_queue(msg[1])
                    elif w.task and msg[0] == w.task[0]:
                        status, value = msg[1]
                        fut = w.task[1]
                        w.task = None
                        if status == "ok":
                            _resolve(fut, value)
                        else:
                            self._task_failed(fut, TaskFailed("memory" if value == "memory" else "error", value))
            except (EOFError, OSError):
                self._replace(w, "died", "the worker process died")
                return
        if w.proc.sentinel in ready and not w.proc.is_alive():
            if self.broken:
                return
            self._replace(w, "died", f"the worker process died (exit {w.proc.exitcode})")
        elif w.task and time.monotonic() > w.task[2]:
            log.warning("a grading task ran past its deadline; its worker is replaced")
            self._replace(w, "timeout", "killed past its deadline")
        elif w.retire and not w.task:
            try:
                w.conn.send(None)
            except (OSError, ValueError):
                pass
            w.proc.join(timeout=5)
            if w.proc.is_alive():
                w.kill()
            self._workers[self._workers.index(w)] = self._spawn()

    def _fail_queue(self, why: str) -> None:
        with self._lock:
            pending, self._queue = list(self._queue), deque()
        for _, _, _, fut in pending:
            _fail(fut, TaskFailed("closed", why))

    def _assign(self) -> None:
        for w in self._workers:
            if not self._queue:
                return
            if not w.ready or w.task or w.retire:
                continue
            with self._lock:
                if not self._queue:
                    return
                tid, payload, deadline_s, fut = self._queue.popleft()
            if not fut.set_running_or_notify_cancel():
                continue
            try:        # pickled whole before a byte is written: a payload that cannot be is never sent
                data = pickle.dumps((tid, payload), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as e:      # too deep (RecursionError), not picklable: this task fails alone
                self._task_failed(fut, TaskFailed("error",
                                                  f"the task could not be handed to a worker ({type(e).__name__})"))
                continue
            w.task = (tid, fut, time.monotonic() + deadline_s)
            try:
                w.conn.send_bytes(data)
            except (OSError, ValueError):
                self._replace(w, "died", "the worker process died")
