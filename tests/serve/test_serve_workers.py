"""The grading workers: a task past its deadline, a worker that dies or runs out of memory
costs that task only; the other worker goes on, and the pool replaces the lost one."""
from __future__ import annotations

import pytest

import serve_pool_helpers as helpers
from grader.serve.workers import TaskFailed, WorkerPool


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(helpers.init, (), helpers.handler, processes=2, memory_mb=256)
    p.start()
    yield p
    p.close()


def test_tasks_run_in_worker_processes(pool):
    import os
    value, pid = pool.call(("echo", 7), 10)
    assert value == 7 and pid != os.getpid()


def test_a_hung_task_is_killed_and_the_other_worker_goes_on(pool):
    hung = pool.submit(("hang", 60), 1.0)
    quick = [pool.submit(("echo", i), 10) for i in range(20)]
    assert [f.result(timeout=30)[0] for f in quick] == list(range(20))
    with pytest.raises(TaskFailed) as e:
        hung.result(timeout=30)
    assert e.value.reason == "timeout"
    assert pool.call(("echo", "after"), 30)[0] == "after"


def test_a_dying_worker_fails_its_task_only(pool):
    with pytest.raises(TaskFailed) as e:
        pool.call(("die", None), 10)
    assert e.value.reason == "died"
    assert pool.call(("echo", 1), 30)[0] == 1


def test_memory_is_limited_per_worker(pool):
    with pytest.raises(TaskFailed) as e:
        pool.call(("hog", 2 << 30), 30)
    assert e.value.reason == "memory"
    assert pool.call(("hog", 1 << 20), 30) == 1 << 20


def test_a_worker_that_cannot_start_is_reported():
    p = WorkerPool(helpers.init, (True,), helpers.handler, processes=1)
    with pytest.raises(RuntimeError, match="the bank is broken"):
        p.start(wait_s=60)
    with pytest.raises(TaskFailed):
        p.call(("echo", 1), 5)
    p.close()
