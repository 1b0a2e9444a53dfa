"""Grading and checking on a Dask cluster (``--scheduler ADDR`` of grade, check-spec and serve).

A shell over the engine, holding no grading logic: :class:`DaskExecutor` implements the
:class:`grader.grade.executors.Executor` protocol by sending chunks of check tasks to Dask
workers, where each chunk runs in the local pool (:func:`grader.grade.pool.run_tasks`: the same
limits and the same blame for a hostile answer). Nothing here is imported unless a command is
given ``--scheduler`` (``distributed`` is the ``cluster`` extra).

- :mod:`grader.cluster.connect`: the scheduler's address (``tcp://HOST:8786`` or ``local:N``),
  the connection and the start-up check (every worker runs the client's grader and torch).
- :mod:`grader.cluster.remote`: what runs on a worker (importable there: the worker has grader).
- :mod:`grader.cluster.executor`: :class:`DaskExecutor`.
- :mod:`grader.cluster.claims`: check-spec's measured claims on a worker (GPU ones on a ``GPU`` worker).
"""
from __future__ import annotations

from typing import Any

from grader.errors import GraderError


class ClusterError(GraderError):
    """The cluster cannot be used as asked: the scheduler cannot be reached, no workers, a worker
    whose versions differ from the client's, the scheduler lost mid-batch. One line, said before
    anything is graded (or instead of a half-graded batch)."""


def __getattr__(name: str) -> Any:
    if name == "DaskExecutor":
        from .executor import DaskExecutor
        return DaskExecutor
    if name in ("connect", "Cluster"):
        from . import connect
        return getattr(connect, name)
    raise AttributeError(name)


__all__ = ["ClusterError", "DaskExecutor", "Cluster", "connect"]
