"""The worker pool: an answer past its limits fails alone, a dead worker is replaced,
and every task comes back exactly once."""
import os
import signal
import time

from grader.grade.pool import AnswerLimits as Limits, Failure, run_tasks


class _Bomb:
    """A result whose pickling kills the worker: it dies between tasks, sending its results."""

    def __reduce__(self):
        os._exit(3)


def handler(payload):
    kind, value = payload
    if kind == "bomb":
        return _Bomb()
    if kind == "loop":
        while True:
            pass
    if kind == "hog":
        return len(bytearray(8 * 2**30))          # past RLIMIT_AS
    if kind == "die":
        os._exit(7)
    if kind == "raise":
        raise ValueError("boom")
    if kind == "big":
        return len(value)
    if kind == "stuck":         # deaf to the worker's own alarm, as if blocked in C code
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGXCPU})
        time.sleep(60)
    return value * 3


def test_each_task_once_with_failures_isolated():
    payloads = [("ok", 1), ("loop", 0), ("ok", 2), ("hog", 0), ("die", 0), ("raise", 0)] + [("ok", i) for i in range(10, 60)]
    tasks = list(enumerate(payloads))
    out = run_tasks(tasks, handler, jobs=2, limits=Limits(timeout_s=0.5, grace_s=0.5))
    assert sorted(out) == [t for t, _ in tasks]
    assert out[0] == 3 and out[2] == 6
    assert out[1] == Failure("timeout", "time")
    assert isinstance(out[3], Failure) and out[3].reason == "memory"
    assert isinstance(out[4], Failure) and out[4].reason == "died"
    assert out[5].reason == "error" and "ValueError: boom" in out[5].detail
    assert [out[i] for i in range(6, len(tasks))] == [3 * i for i in range(10, 60)]


def test_no_tasks_no_workers():
    assert run_tasks([], handler) == {}


def test_a_worker_stuck_past_its_alarm_is_killed_and_only_its_task_fails():
    # one chunk: two quick tasks whose results the worker may still hold, the stuck one, more
    # after it; the parent kills the worker after timeout + grace and blames the stuck task only
    payloads = [("ok", 1), ("ok", 2), ("stuck", 0), ("ok", 4), ("ok", 5)]
    out = run_tasks(list(enumerate(payloads)), handler, jobs=1, limits=Limits(timeout_s=0.3, grace_s=0.3))
    assert out == {0: 3, 1: 6, 2: Failure("timeout", "killed after the wall-clock limit"), 3: 12, 4: 15}


def test_a_stuck_worker_with_big_answers_queued_behind_it_does_not_stall_the_parent():
    # chunks of two 150,000-character answers (300 kB pickled: more than a pipe's buffer) are not
    # sent ahead to a busy worker; were they, the parent would block writing to the stuck one
    import threading
    payloads = [("stuck", 0)] + [("big", "x" * 150_000)] * 9
    got = {}
    t = threading.Thread(target=lambda: got.update(run_tasks(
        list(enumerate(payloads)), handler, jobs=1, limits=Limits(timeout_s=0.3, grace_s=0.3))), daemon=True)
    t.start()
    t.join(timeout=30)
    assert not t.is_alive(), "the parent stalled"
    assert got == {0: Failure("timeout", "killed after the wall-clock limit"), **{i: 150_000 for i in range(1, 10)}}


def test_a_worker_that_dies_sending_results_costs_only_the_task_that_killed_it():
    # the results of tasks 0-4 may be in the same batch as the one that cannot be sent: they go
    # back once, each alone, and only task 5 fails
    payloads = [("ok", i) for i in range(5)] + [("bomb", 0)] + [("ok", i) for i in range(6, 10)]
    out = run_tasks(list(enumerate(payloads)), handler, jobs=1, limits=Limits(timeout_s=1, grace_s=0.5))
    assert out[5].reason == "died"
    assert {i: out[i] for i in out if i != 5} == {i: 3 * i for i in range(10) if i != 5}


def test_task_ids_are_the_callers_own():
    assert run_tasks([("a", ("ok", 1)), (("b", 2), ("ok", 2))], handler, jobs=2) == {"a": 3, ("b", 2): 6}
