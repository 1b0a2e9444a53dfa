"""`grader serve --scheduler`: a job's progress comes back from the worker that runs it (the job
process's progress lines, sent as Dask worker events on a topic the service subscribes to), as
a job process's progress does on one machine: first ``(job, 0, total)``, last ``(job, total,
total)``."""
from __future__ import annotations

import time

import pytest
import yaml

pytest.importorskip("distributed")


def test_a_batch_job_on_the_cluster_reports_its_progress():
    from grader.cluster.jobs import DaskJobExecutor
    from grader.serve.jobwork import config
    from grader.serve.settings import Settings

    learners = 30
    answers = {"submissions": [{"learner": f"l{i}", "answers": {"17-08/practice-1": i, "17-08/params-formula": f"{i}*d^2"}}
                               for i in range(learners)]}
    # distinct answers: 30 of practice-1 and 30 of params-formula, each checked once
    unique = 2 * learners
    events: list[tuple[str, int, int | None]] = []
    ex = DaskJobExecutor("local:1", on_progress=lambda job, done, total: events.append((job, done, total)))
    try:
        fut = ex.submit("batch", "job-p", {"filename": "class.yaml"}, yaml.safe_dump(answers).encode(),
                        config(Settings()))
        result = fut.result(timeout=240)
        deadline = time.monotonic() + 30        # events travel through the scheduler: they may trail the result
        while time.monotonic() < deadline and not (events and events[-1][1] == unique):
            time.sleep(0.1)
    finally:
        ex.close()
    assert [s["learner"] for s in result["submissions"]] == [f"l{i}" for i in range(learners)]
    assert events and all(job == "job-p" for job, _, _ in events)
    assert events[0] == ("job-p", 0, unique)
    assert events[-1] == ("job-p", unique, unique)
    assert [d for _, d, _ in events] == sorted(d for _, d, _ in events)      # never backwards
