"""A service job in a process of its own on a Dask worker: ``python -m grader.serve.jobrun`` (started by :class:`grader.cluster.jobs.DaskJobExecutor`).

A Dask worker is a daemon process with threads: a job (whose batch forks a worker pool, whose
code runs in the sandbox) runs in a fresh Python instead, as it runs in a job process of
`grader serve` (:func:`grader.serve.engine.run_job`). It reads ``(kind, job id, params, data,
config)`` (pickled, from the worker: trusted) on stdin and writes JSON lines on its own copy of
stdout: ``{"progress": [done, total]}`` as it goes, then ``{"result": ...}`` or ``{"error": ...}``.
It dies with the worker that started it (``PR_SET_PDEATHSIG``).
"""
from __future__ import annotations

import json
import os
import pickle
import sys
from typing import Any


def main() -> int:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)       # a stray print goes to stderr, never into the protocol
    from grader.serve.workers import die_with_parent
    die_with_parent()
    kind, job_id, params, data, config = pickle.loads(sys.stdin.buffer.read())

    class Progress:
        def put_nowait(self, item: Any) -> None:
            out.write(json.dumps({"progress": [item[1], item[2]]}) + "\n")

    from grader.serve import engine
    engine._JOB["progress"] = Progress()
    try:
        result = engine.run_job(kind, job_id, params, data, config)
    except Exception as e:  # noqa: BLE001  (the job's own failure: recorded as the job's error)
        out.write(json.dumps({"error": str(e)[:2000], "type": type(e).__name__}) + "\n")
        return 0
    out.write(json.dumps({"result": result}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
