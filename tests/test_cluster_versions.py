"""A worker that joins a running cluster with other versions than the client's does no work:
`grade --scheduler` (:class:`DaskExecutor`), `serve --scheduler` (:class:`DaskJobExecutor`) and
`check-spec --scheduler` (:class:`DaskMeasurer`) each connect while only a good worker is there
(the start-up check passes), then that worker leaves and an "old" one joins: a real `dask
worker` whose ``importlib.metadata`` finds a ``grader-0.0.0.dist-info`` first (as on a machine
with an older grader installed; see tests/test_cluster.py). Being the only worker, it receives
the work, and must refuse it: grade and check-spec end with one line naming what differs (no
report, no verdict); the service records nothing from it, keeps the job queued while no other
worker is there, and grades it once on the next good worker.
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from test_cluster import SLOW_RIGHT, DaskProcesses, _add_bank_and_jobs  # noqa: E402

from grader.cluster import ClusterError  # noqa: E402
from grader.cluster.connect import Cluster, connect  # noqa: E402
from grader.cluster.remote import VersionMismatch, check_versions, versions  # noqa: E402

WAIT_S = 180.0      # a bound on each wait below (a loaded machine starts processes slowly)


def old_grader_env(folder: Path) -> dict[str, str]:
    """A worker environment in which grader's installed metadata says 0.0.0."""
    meta = folder / "old-site" / "grader-0.0.0.dist-info"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: grader\nVersion: 0.0.0\n")
    return {"PYTHONPATH": os.pathsep.join([str(meta.parent), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def differs() -> str:
    """What the old worker's versions differ in, said as the check says it (only grader's)."""
    return f"grader 0.0.0 (client: {version('grader')})"


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory) -> Iterator[DaskProcesses]:
    procs = DaskProcesses(tmp_path_factory.mktemp("dask-versions"))
    try:
        procs.scheduler()
        yield procs
    finally:
        procs.close()


@contextmanager
def old_worker_joined_late(procs: DaskProcesses, folder: Path) -> Iterator[Cluster]:
    """A connection made (and checked) with a good worker, which then leaves; the old worker
    joins after, the only worker left. Both stopped at the end."""
    procs.worker("good")
    cluster = connect(procs.address, warm_up=False)
    try:
        procs.stop("good")
        procs.wait_for(lambda n: "good" not in n, "the good worker to leave")
        procs.worker("old", env=old_grader_env(folder))
        yield cluster
    finally:
        cluster.close()
        for name in [n for n in procs.procs if n != "scheduler"]:
            procs.stop(name)
        procs.wait_for(lambda n: not n, "the workers to leave")


def test_the_one_check_names_only_what_differs():
    mine = versions()
    check_versions(dict(mine))                  # the same versions: nothing said
    with pytest.raises(VersionMismatch) as e:
        check_versions(dict(mine, torch="0.1.0"))
    assert str(e.value) == f"torch {mine['torch']} (client: 0.1.0)"
    with pytest.raises(VersionMismatch) as e:
        check_versions(dict(mine, grader="9.9", python="2.7"))
    assert str(e.value) == f"grader {mine['grader']} (client: 9.9), python {mine['python']} (client: 2.7)"


def test_grade_refuses_a_worker_that_joined_after_the_check(scheduler, tmp_path):
    from grader.cluster.executor import DaskExecutor
    from grader.grade.pool import AnswerLimits
    with old_worker_joined_late(scheduler, tmp_path) as cluster:
        graded: list[int] = []
        with pytest.raises(ClusterError) as e:
            DaskExecutor(cluster).run([(0, -3), (1, 4)], abs, limits=AnswerLimits(timeout_s=30.0, cpu_s=30),
                                      on_result=graded.append)
    msg = e.value.message
    assert f"runs {differs()}; refused" in msg and "nothing was graded" in msg, msg
    assert "source" not in msg and "torch" not in msg and "\n" not in msg
    assert graded == []         # not one answer graded by the old worker


def test_check_spec_refuses_a_worker_that_joined_after_the_check(scheduler, tmp_path):
    from grader.cluster.claims import DaskMeasurer
    from grader.claims.run import check_paths
    with old_worker_joined_late(scheduler, tmp_path) as cluster:
        old = next(iter(cluster.workers()))
        with pytest.raises(ClusterError) as e:      # no verdict measured there: the run ends
            check_paths(None, only="s-4-*", measurer_factory=lambda: DaskMeasurer(cluster))
    assert e.value.message == f"worker old at {old} runs {differs()}; refused, nothing was checked"


def test_serve_records_nothing_from_a_worker_that_joined_after_the_check(scheduler, tmp_path, caplog):
    from sqlalchemy import select

    from grader.cluster.jobs import REFUSED_WAIT_S, DaskJobExecutor
    from grader.db.models import Job
    from grader.serve.jobs import MAX_TRIES, JobRunner
    from grader.serve.jobwork import config
    from grader.serve.settings import Settings

    caplog.set_level(logging.ERROR, logger="grader.serve")
    bank, db, jobs = _add_bank_and_jobs(tmp_path, 1)        # job-0: a right answer (1.5 s)
    recorded: list[str] = []

    def finish(conn, job, result):
        recorded.append(job.id)
        return result

    def job() -> Job:
        with db.read() as conn:
            return conn.execute(select(Job.status, Job.tries, Job.error, Job.result)).one()

    def refusals() -> list[str]:
        return [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]

    with old_worker_joined_late(scheduler, tmp_path) as cluster:
        old = next(iter(cluster.workers()))
        executor = DaskJobExecutor(cluster)
        runner = JobRunner(db, executor, config(Settings(exercises=str(bank))), prepare=None, finish=finish)
        runner.start()
        try:
            deadline = time.monotonic() + WAIT_S
            while not refusals() and job().status not in ("done", "failed") and time.monotonic() < deadline:
                time.sleep(0.2)
            assert refusals() == [f"worker {old} of {cluster.address} runs {differs()}; refused, job job-0 was not "
                                  "run there; it goes back in the queue"]
            # the only worker is the old one: the job waits in the queue, tries not spent on it
            time.sleep(2 * REFUSED_WAIT_S + 2)
            row = job()
            assert recorded == [] and row.status in ("queued", "running") and row.error is None
            assert row.tries < MAX_TRIES and len(refusals()) == 1
            scheduler.worker("good")                # a good worker joins: the job is graded there, once
            deadline = time.monotonic() + WAIT_S
            while job().status not in ("done", "failed") and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            runner.stop()
            executor.close()
    row = job()
    db.dispose()
    assert row.status == "done", row.error
    assert recorded == list(jobs) and jobs["job-0"] is SLOW_RIGHT
    assert row.result["answer"]["status"] == "correct"
    assert row.tries == 2           # the refused run and the real one
    assert len(refusals()) == 1     # the old worker got no other job
