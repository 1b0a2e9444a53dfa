"""The job runner on its own (a SQLite database, executors made up here): jobs left running are
queued again; a job whose process keeps dying is tried three times, then failed; a job's
result and its effects are recorded in one transaction."""
from __future__ import annotations

import time
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool

import pytest
from sqlalchemy import insert, select

from grader.db import Database
from grader.db.models import Job, User, now
from grader.serve.jobs import MAX_TRIES, JobRunner


class Executor:
    """Resolves each job at once with ``outcome(kind)``: a result, or an exception to raise."""

    capacity = 1

    def __init__(self, outcome):
        self.outcome, self.started = outcome, []

    def submit(self, kind, job_id, params, data, config):
        self.started.append(job_id)
        fut = Future()
        out = self.outcome(kind)
        fut.set_exception(out) if isinstance(out, BaseException) else fut.set_result(out)
        return fut

    def close(self):
        pass


@pytest.fixture
def db(tmp_path):
    d = Database(f"sqlite:///{tmp_path / 'jobs.db'}")
    d.ensure_schema()
    with d.write() as conn:
        conn.execute(insert(User).values(id=1, login="l", name="", email="", role="learner", created_at=now()))
    yield d
    d.dispose()


def add_job(db, job_id, status="queued"):
    with db.write() as conn:
        conn.execute(insert(Job).values(id=job_id, kind="code", user_id=1, status=status, params={}, done=0, tries=0,
                                        created_at=now()))


def job(db, job_id):
    with db.read() as conn:
        return conn.execute(select(Job.status, Job.tries, Job.error, Job.result).where(Job.id == job_id)).one()


def run_until(runner, db, job_id, statuses, timeout=20):
    runner.start()
    deadline = time.monotonic() + timeout
    try:
        while job(db, job_id).status not in statuses and time.monotonic() < deadline:
            runner.wake()
            time.sleep(0.05)
    finally:
        runner.stop()
    return job(db, job_id)


def test_jobs_left_running_are_queued_again(db):
    add_job(db, "a", status="running")
    add_job(db, "b", status="done")
    runner = JobRunner(db, Executor(lambda kind: {}), {}, prepare=None, finish=None)
    assert runner.recover() == 1
    assert job(db, "a").status == "queued" and job(db, "b").status == "done"


def test_a_job_whose_process_keeps_dying_is_failed_after_three_tries(db):
    add_job(db, "x")
    ex = Executor(lambda kind: BrokenProcessPool("killed"))
    got = run_until(JobRunner(db, ex, {}, prepare=None, finish=None), db, "x", ("failed",))
    assert got.status == "failed" and got.tries == MAX_TRIES == 3 and "gave up" in got.error
    assert ex.started == ["x"] * 3


def test_a_result_and_its_effects_are_recorded_together(db):
    add_job(db, "ok")
    add_job(db, "bad")

    def finish(conn, row, result):
        conn.execute(insert(User).values(login=f"made-by-{row.id}", name="", email="", role="learner",
                                         created_at=now()))
        if row.id == "bad":
            raise ValueError("cannot store this")
        return {"stored": result["n"]}
    runner = JobRunner(db, Executor(lambda kind: {"n": 7}), {}, prepare=None, finish=finish)
    run_until(runner, db, "bad", ("done", "failed"))
    runner = JobRunner(db, Executor(lambda kind: {"n": 7}), {}, prepare=None, finish=finish)
    run_until(runner, db, "ok", ("done", "failed"))
    assert job(db, "ok").status == "done" and job(db, "ok").result == {"stored": 7}
    bad = job(db, "bad")
    assert bad.status == "failed" and "cannot store this" in bad.error
    with db.read() as conn:
        logins = set(conn.execute(select(User.login)).scalars())
    assert "made-by-ok" in logins and "made-by-bad" not in logins        # the failed one's effects rolled back
