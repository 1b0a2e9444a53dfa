"""Executors: what runs the check tasks of a grading, under each answer's limits.

An :class:`Executor` runs ``handler(payload)`` for each ``(task id, payload)`` and returns
``{task id: result or Failure}``; a task past its limits is a :class:`~grader.grade.pool.Failure`
("timeout", "memory", "died", "error"), never the batch's failure. The handler may give a
task limits of its own (``handler.limits_for(payload, limits)``).

- :class:`LocalPoolExecutor`: worker processes forked for one batch (:func:`grader.grade.pool.run_tasks`):
  the fastest for a class (the handler is inherited, tasks go in chunks); what ``grader grade``
  uses. Forking copies only the calling thread: use it from a process without other threads.
- :class:`ProcessExecutor` (:mod:`grader.grade.processes`): worker processes that stay up
  between calls (started fresh with ``python -m``, never forked, so safe in a threaded server)
  and serve any thread, one task per worker at a time; what the API uses by default, one per bank.
- :class:`SerialExecutor`: in the calling process and thread, each task under its time limit
  (:func:`grader.deadline.call_with_limit`; no memory limit): for tests and tools, not for
  answers nobody has screened.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .pool import AnswerLimits, Failure, limits_for, run_tasks

Tasks = Sequence[tuple[Any, Any]]
OnResult = Callable[[int], None]


class Executor(Protocol):
    """Runs check tasks: local pools here, a cluster's workers elsewhere."""

    def run(self, tasks: Tasks, handler: Callable[[Any], Any], *, limits: AnswerLimits,
            on_result: OnResult | None = None) -> dict[Any, Any]:
        """``{task id: handler(payload) or Failure}`` for each ``(task id, payload)`` of ``tasks``."""
        ...


class LocalPoolExecutor:
    """``jobs`` worker processes forked for each batch (see :func:`grader.grade.pool.run_tasks`)."""

    def __init__(self, jobs: int = 2) -> None:
        self.jobs = jobs

    def run(self, tasks: Tasks, handler: Callable[[Any], Any], *, limits: AnswerLimits,
            on_result: OnResult | None = None) -> dict[Any, Any]:
        return run_tasks(tasks, handler, jobs=self.jobs, limits=limits, on_result=on_result)


class SerialExecutor:
    """Each task in the calling thread, one after another, under its time limit (no memory
    limit, and a check stuck in C code cannot be stopped: use a process executor for
    answers nobody has screened)."""

    def run(self, tasks: Tasks, handler: Callable[[Any], Any], *, limits: AnswerLimits,
            on_result: OnResult | None = None) -> dict[Any, Any]:
        from grader.deadline import TimeUp, call_with_limit
        out: dict[Any, Any] = {}
        for tid, payload in tasks:
            mine = limits_for(handler, payload, limits)
            try:
                out[tid] = call_with_limit(lambda: handler(payload), mine.timeout_s)
            except TimeUp:
                out[tid] = Failure("timeout", "time")
            except MemoryError:
                out[tid] = Failure("memory")
            except RecursionError:
                out[tid] = Failure("timeout", "recursion")
            except Exception as e:  # the handler's bug, reported for this task only
                out[tid] = Failure("error", f"{type(e).__name__}: {e}"[:300])
            if on_result:
                on_result(1)
        return out


from .processes import ProcessExecutor  # noqa: E402  (a pool that stays up; see its module)

__all__ = ["Executor", "LocalPoolExecutor", "ProcessExecutor", "SerialExecutor"]
