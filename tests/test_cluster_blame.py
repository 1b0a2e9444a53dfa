"""Blame on the cluster, for what the local pool blames too: an answer that exhausts its memory
limit fails alone ("memory"), and an answer whose check kills the Dask worker itself (not
only its check process) costs only itself: the chunk that killed the worker is split, each of
its answers tried alone, and only the culprit ends as ``Failure("died")``; every other answer
comes back once, with its result.

The handlers are this module's functions: the workers of ``local:N`` (and their check
processes) find it through PYTHONPATH, as a course's checker module would be found on a
worker that has the course installed.
"""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from grader.grade.executors import LocalPoolExecutor  # noqa: E402
from grader.grade.pool import AnswerLimits, Failure  # noqa: E402

HERE = Path(__file__).resolve().parent


def kill_the_worker_on(payload: str) -> str:
    """A check that, for the payload "kill", SIGKILLs its check process's parent: the Dask
    worker (in the local pool, the pool's worker process)."""
    if payload == "kill":
        os.kill(os.getppid(), signal.SIGKILL)
    return payload.upper()


def allocate(mib: int) -> int:
    """A check that allocates ``mib`` MiB (and touches it)."""
    block = bytearray(mib << 20)
    return len(block) >> 20


@pytest.fixture
def on_path(monkeypatch):
    """This folder on the workers' PYTHONPATH (a LocalCluster's workers inherit the environment)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))


def test_an_answer_past_its_memory_limit_fails_alone_on_the_cluster(on_path):
    from grader.cluster.executor import DaskExecutor
    limits = AnswerLimits(timeout_s=20.0, cpu_s=20, memory_mb=256)
    tasks = [(0, 1), (1, 2048), (2, 3)]     # 2 GiB past a limit of 256 MiB more than the check process had
    with DaskExecutor("local:1", chunk_max=3) as ex:
        got = ex.run(tasks, allocate, limits=limits)
    local = LocalPoolExecutor(1).run(tasks, allocate, limits=limits)
    assert got[0] == 1 and got[2] == 3
    assert isinstance(got[1], Failure) and got[1].reason == "memory"
    assert {k: getattr(v, "reason", v) for k, v in got.items()} == {k: getattr(v, "reason", v) for k, v in local.items()}


def test_an_answer_that_kills_its_worker_is_blamed_alone(on_path):
    import dask
    from grader.cluster.executor import DaskExecutor
    limits = AnswerLimits(timeout_s=20.0, cpu_s=20)
    tasks = [(i, "kill" if i == 5 else f"a{i}") for i in range(12)]
    seen: list[int] = []
    # a task on a worker that dies counts once (the default would try it 3 more times first)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with DaskExecutor("local:1", chunk_max=4) as ex:
            chunks = ex.chunks(tasks, kill_the_worker_on, limits)
            assert any(len(c) > 1 and (5, "kill") in c for c in chunks)     # the culprit shares a chunk
            got = ex.run(tasks, kill_the_worker_on, limits=limits, on_result=seen.append)
    assert sorted(got) == list(range(12))
    assert isinstance(got[5], Failure) and got[5].reason == "died"
    assert {k: v for k, v in got.items() if k != 5} == {i: f"A{i}" for i in range(12) if i != 5}
    assert sum(seen) == 12          # each answer reported once, the split chunk's too
