"""What runs on a Dask worker (:mod:`grader.cluster.remote`), driven here without a cluster:
:func:`run_chunk` outside a worker uses one check process of this test's own, as a worker's
thread would.

- A check process serves both whole chunks (:class:`ChunkRunner`, each task under its own
  limits) and single tasks (a failed chunk's tasks run again one by one, on whichever of the
  worker's check processes is free): after a single task, a chunk in that process must still
  hold each of its tasks to the memory limit, as the local pool does.
- A code answer is graded under the client's ``--allow-weak-sandbox`` alone, every one of them
  alike, whatever the worker's own environment says; that environment is left as it was.

The handlers are this module's functions: the check processes find it through PYTHONPATH.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader.cluster import remote
from grader.grade.executors import LocalPoolExecutor
from grader.grade.pool import AnswerLimits, Failure

HERE = Path(__file__).resolve().parent


def allocate(mib: int) -> int:
    """A check that allocates ``mib`` MiB (and touches it)."""
    block = bytearray(mib << 20)
    return len(block) >> 20


@pytest.fixture
def checks(monkeypatch):
    """This folder on the check processes' PYTHONPATH; the check processes :func:`run_chunk`
    starts outside a worker, stopped at the end."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    remote._checks.clear()
    try:
        yield remote._executor()
    finally:
        ex = remote._checks.pop("ex", None)
        if ex is not None:
            ex.close()


def test_a_chunk_after_a_task_run_alone_in_the_same_check_process_keeps_the_memory_limit(checks):
    limits = AnswerLimits(timeout_s=20.0, cpu_s=20, memory_mb=64)
    checker = remote.pack(allocate)
    expected = remote.versions()
    hog = [(0, 1), (1, 512), (2, 2)]     # 512 MiB past a limit of 64 MiB more than the check process had
    local = LocalPoolExecutor(1).run(hog, allocate, limits=limits)
    assert isinstance(local[1], Failure) and local[1].reason == "memory"     # what the local pool says
    first = remote.unpack(remote.run_chunk(hog, checker, limits, expected))
    assert {k: getattr(v, "reason", v) for k, v in first.items()} == {0: 1, 1: "memory", 2: 2}
    # the tasks of another chunk, run again one by one after that chunk's process died or hung
    # (what run_chunk does), land on this check process too
    assert checks.run([(0, 3)], remote.Landed(allocate), limits=limits) == {0: 3}
    again = remote.unpack(remote.run_chunk(hog, checker, limits, expected))
    assert {k: getattr(v, "reason", v) for k, v in again.items()} == {k: getattr(v, "reason", v) for k, v in local.items()}


def test_each_code_answer_is_graded_under_the_clients_weak_sandbox_choice_alone(monkeypatch):
    from grader.grade import check
    seen: list[str | None] = []

    def grade_code_task(problem, path):
        seen.append(os.environ.get(remote.WEAK_ENV))
        return "graded"

    monkeypatch.setattr(check, "grade_code_task", grade_code_task)
    monkeypatch.setenv(remote.WEAK_ENV, "1")        # the worker's own environment allows the weak sandbox
    landed = remote.Landed(checker=None)
    choices = [False, False, True, False]            # the client's --allow-weak-sandbox, sent with each answer
    for allow in choices:
        assert landed(("landed", None, "solution.py", allow)) == "graded"
    assert seen == ["1" if allow else None for allow in choices]
    assert os.environ.get(remote.WEAK_ENV) == "1"   # the worker's environment as it was
    monkeypatch.delenv(remote.WEAK_ENV)
    seen.clear()
    for allow in choices:
        landed(("landed", None, "solution.py", allow))
    assert seen == ["1" if allow else None for allow in choices]
    assert remote.WEAK_ENV not in os.environ
