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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from grader.errors import GraderError

if TYPE_CHECKING:
    from grader.code.grade import CodeSandbox

    from .executor import DaskExecutor


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


# what the shells use (through grader.api): light here, the cluster's modules imported when called

def check_scheduler(address: str) -> None:
    """A Dask scheduler's address (``tcp://HOST:8786``, ``local:N``) checked, nothing connected;
    :class:`ClusterError` says what is wrong."""
    from .connect import parse
    parse(address)


def cluster_executor(address: str) -> DaskExecutor:
    """An :class:`Executor` on the Dask cluster at ``address`` (connected, the workers' versions checked;
    :class:`ClusterError` otherwise); ``close()`` it."""
    from .executor import DaskExecutor
    return DaskExecutor(address)


def cluster_sandboxes(executor: DaskExecutor, allow_weak: bool) -> dict[str, CodeSandbox]:
    """Each worker's sandbox (worker -> status) of a :func:`cluster_executor`."""
    return executor.cluster.sandboxes(allow_weak)


def check_cluster(address: str, *, nothing: str) -> None:
    """The Dask cluster at ``address`` reached and its workers checked, then let go; :class:`ClusterError` (its
    message ending with ``nothing``) otherwise."""
    from .connect import connect
    connect(address, warm_up=False, nothing=nothing).close()


def cluster_job_executor(address: str) -> Callable[..., Any]:
    """What makes the service's job executor on the Dask cluster at ``address``."""
    from functools import partial

    from .jobs import DaskJobExecutor
    return partial(DaskJobExecutor, address)


__all__ = ["ClusterError", "DaskExecutor", "Cluster", "connect", "check_cluster", "check_scheduler", "cluster_executor",
           "cluster_job_executor", "cluster_sandboxes"]
