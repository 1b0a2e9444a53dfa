"""A time limit on Python work, from any thread.

:func:`call_with_limit` runs ``fn()`` and raises the given exception (:class:`TimeUp` by
default) in the caller once ``seconds`` have passed:

- in the main thread, with a wall-clock alarm (``SIGALRM``): the exception is raised inside
  the work and unwinds it;
- in any other thread (where no signal can be delivered), the work runs in a helper thread
  while the caller waits for it at most ``seconds``; past them the caller gets the exception
  at once, and the work is stopped by raising the exception inside it, asynchronously
  (CPython's ``PyThreadState_SetAsyncExc``), again every 50 ms until it has ended.

Either way only Python work is interrupted: a single C call that never returns to Python
cannot be, so work that may block in C (or use unbounded memory) belongs in a process of its
own (:mod:`grader.grade.executors` checks untrusted answers in one).

``TimeUp`` is a ``BaseException``: a checker's ``except Exception`` never swallows it.
"""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")
RETRY_S = 0.05      # a stopped thread that swallowed the exception gets it again this often


class TimeUp(BaseException):
    """The time limit of :func:`call_with_limit` is over."""


def call_with_limit(fn: Callable[[], T], seconds: float | None, exc: type[BaseException] = TimeUp) -> T:
    """``fn()``, or ``exc`` raised once ``seconds`` have passed (None: no limit; <= 0: at once)."""
    if seconds is None:
        return fn()
    if seconds <= 0:
        raise exc()
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        with alarm(seconds, exc):
            return fn()
    return _in_thread(fn, seconds, exc)


@contextmanager
def alarm(seconds: float, exc: type[BaseException]) -> Iterator[None]:
    """``exc`` raised in the guarded block after ``seconds`` (main thread only: SIGALRM)."""
    def fire(signum: int, frame: FrameType | None) -> None:
        raise exc()

    old = signal.signal(signal.SIGALRM, fire)
    start = time.monotonic()
    left, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if left:        # an outer alarm: what is left of it
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.monotonic() - start), 1e-3))


def _in_thread(fn: Callable[[], T], seconds: float, exc: type[BaseException]) -> T:
    box: dict[str, Any] = {}
    done = threading.Event()
    running = [True]

    def run() -> None:
        try:
            try:
                box["value"] = fn()
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                box["error"] = e
            finally:
                running[0] = False
                done.set()
        except BaseException:   # a stop that arrived as the work ended: nothing left to stop
            done.set()

    worker = threading.Thread(target=run, name="grader-time-limited", daemon=True)
    worker.start()
    if not done.wait(seconds):
        threading.Thread(target=_stop, args=(worker, running, exc), name="grader-stop", daemon=True).start()
        raise exc()
    if "error" in box:
        raise box["error"]
    return box["value"]         # type: ignore[no-any-return]


def _stop(worker: threading.Thread, running: list[bool], exc: type[BaseException]) -> None:
    """Raise ``exc`` inside ``worker`` until its work has ended."""
    import ctypes
    set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc
    while running[0] and worker.is_alive() and worker.ident is not None:
        set_async(ctypes.c_ulong(worker.ident), ctypes.py_object(exc))
        time.sleep(RETRY_S)
