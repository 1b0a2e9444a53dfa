"""What keeps honest learners' grading fast while others attack the service (the "under attack"
phase of benchmarks/bench_serve.py; the figures are the benchmark's, none is asserted here):

- the first learner listing the exercises does not load the spec and SymPy in the server's
  one process that answers every request: the variants' draws come from a grading worker;
- background jobs (batches, regrades, code files) run below the priority of the interactive
  grading (``nice``), so a stream of uploads cannot take the CPU from learners' submissions;
- a failed authentication and the jobs' bookkeeping (queued, claimed, progress, recorded) go
  through the database's group commit: none takes SQLite's one writer for an fsync of its own
  while the learners' submissions wait for it.
"""
from __future__ import annotations

import os
import threading
import time

import pytest
from fastapi.testclient import TestClient

from serve_helpers import make_bank, users


@pytest.fixture
def app(tmp_path):
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    tokens = users(database, alice="learner", prof="instructor")
    settings = Settings(database=database, exercises=str(make_bank(tmp_path)), workers=1, job_workers=1,
                        auth_failures=3, auth_window_s=300.0)
    app = create_app(settings)
    with TestClient(app, client=("10.9.9.9", 1)):        # runs the lifespan once; clients below share it
        app.tokens = tokens
        yield app


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def test_the_variants_draws_come_from_a_worker_and_the_listing_loads_no_spec(app, tmp_path):
    from grader.api import learner_variant, load_bank
    state = app.state.grader
    memo = state.engine.bank.__dict__["_memo"]
    variants = [p for p in state.engine.problems if p.variant is not None]
    assert variants, "the bank of the test has variant problems (17-08/variant.*)"
    assert all(("variant-draws", p) in memo for p in variants)
    r = TestClient(app).get("/api/v1/exercises", headers=bearer(app.tokens["alice"]))
    assert r.status_code == 200
    assert "subject" not in memo            # the spec (and SymPy) never loaded in the server's process
    # what alice is shown is what the bank derives from its spec, by itself
    fresh = load_bank(str(tmp_path / "exercises"))
    shown = {row["id"]: (row["prompt"], row.get("variant")) for row in r.json()}
    for p in variants:
        assert shown[p.id] == learner_variant(fresh.get(p.id), "alice", fresh)


def test_the_draws_are_derived_on_use_when_no_worker_gives_them(tmp_path):
    from grader.serve.app import _seed_draws
    from grader.serve.engine import Engine

    class BrokenPool:
        def call(self, payload, deadline_s):
            raise RuntimeError("no worker")

    class State:
        engine = Engine(str(make_bank(tmp_path)))
        pool = BrokenPool()
    _seed_draws(State)      # logged, not raised
    p = next(p for p in State.engine.problems if p.variant is not None)
    row = State.engine.exercise(p, "alice")
    assert row["variant"] and "{" not in row["prompt"]      # derived here, from the spec


def test_job_processes_run_below_the_priority_of_the_grading():
    from grader.serve.jobs import JOB_NICE, LocalJobExecutor
    ex = LocalJobExecutor(1)
    try:
        theirs = ex._pool.submit(os.nice, 0).result(timeout=120)
    finally:
        ex.close()
    assert JOB_NICE == 10
    assert theirs == min(19, os.nice(0) + JOB_NICE)     # e.g. 0 here -> 10 there


def test_failed_tokens_and_jobs_write_through_the_group_commit(app):
    """Every write they cause runs on the group writer's thread ("grader-db-writer"), in the
    transaction it shares with the other writes of the moment; before, a failed token wrote its
    counter from a request thread, and a job its row, claim and result from the job runner's."""
    db = app.state.grader.db
    seen: list[str] = []
    write = db.write

    def spying_write():
        seen.append(threading.current_thread().name)
        return write()
    db.write = spying_write
    try:
        api = TestClient(app, client=("10.1.2.3", 40000))
        assert api.get("/api/v1/me/grades", headers=bearer("grd_" + "x" * 43)).status_code == 401
        r = api.post("/api/v1/batches", headers=bearer(app.tokens["prof"]),
                     files={"file": ("a.yaml", b"learner: gina\nanswers: {17-08/practice-1: 64}\n")})
        assert r.status_code == 202, r.text
        job = r.json()["id"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            status = api.get(f"/api/v1/jobs/{job}", headers=bearer(app.tokens["prof"])).json()["status"]
            if status in ("done", "failed"):
                break
            time.sleep(0.2)
        assert status == "done"
    finally:
        db.write = write
    # the failed token, the job's row, its claim and its result: 4 writes at least, all grouped
    assert len(seen) >= 4 and set(seen) == {"grader-db-writer"}, seen
