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


# ------------------------------------------------------------------ 4xx answers to an erring address wait

def _backoff_app(burst: int, window_s: float, delay_s: float):
    """ErrorBackoff around an app answering the status the path names (/status/404, /status/201)."""
    from grader.serve.limits import ErrorBackoff

    async def inner(scope, receive, send):
        status = int(scope["path"].rsplit("/", 1)[1])
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})
    return ErrorBackoff(inner, burst=burst, window_s=window_s, delay_s=delay_s)


def test_refusals_past_the_burst_wait_and_successes_never(monkeypatch):
    from grader.serve import limits
    waited: list[float] = []

    async def sleep(s):
        waited.append(s)
    monkeypatch.setattr(limits.asyncio, "sleep", sleep)
    app = _backoff_app(burst=3, window_s=10.0, delay_s=0.25)
    one, other = TestClient(app, client=("10.0.0.1", 1)), TestClient(app, client=("10.0.0.2", 1))
    for _ in range(3):                              # the burst: 3 refusals, none delayed
        assert one.get("/status/404").status_code == 404
    assert waited == []
    assert one.get("/status/422").status_code == 422        # the 4th: delayed
    assert waited == [0.25]
    assert one.get("/status/201").status_code == 201        # a success from that address: never
    assert one.get("/status/303").status_code == 303
    assert other.get("/status/401").status_code == 401      # another address: its own count
    assert waited == [0.25]
    assert one.get("/status/429").status_code == 429        # the 5th refusal of the first one
    assert waited == [0.25, 0.25]


def test_the_count_starts_again_with_each_window_and_is_bounded():
    app = _backoff_app(burst=2, window_s=10.0, delay_s=0.25)
    assert [app.refused("a", t) for t in (0.0, 1.0, 9.9)] == [1, 2, 3]
    assert app.refused("a", 10.0) == 1              # 10 s after the window began: a new one
    app.size = 2
    app.refused("b", 11.0)
    assert app.refused("c", 11.0) == 1 and set(app._seen) == {"c"}     # full: forgotten, not grown


def test_no_delay_when_turned_off(monkeypatch):
    from grader.serve import limits
    waited: list[float] = []

    async def sleep(s):
        waited.append(s)
    monkeypatch.setattr(limits.asyncio, "sleep", sleep)
    c = TestClient(_backoff_app(burst=0, window_s=10.0, delay_s=0.0))
    assert [c.get("/status/404").status_code for _ in range(3)] == [404] * 3 and waited == []


def test_the_service_delays_an_erring_address_only(app, monkeypatch):
    from grader.serve import limits
    from grader.serve.settings import Settings
    assert (Settings().error_burst, Settings().error_window_s, Settings().error_delay_s) == (50, 10.0, 0.25)
    waited: list[float] = []

    async def sleep(s):
        waited.append(s)
    monkeypatch.setattr(limits.asyncio, "sleep", sleep)
    mallory, alice = TestClient(app, client=("10.6.6.6", 1)), TestClient(app, client=("10.1.1.1", 1))
    for _ in range(50):
        assert mallory.get("/api/v1/gradebook").status_code == 401      # no token: refused, 50 of them
    assert waited == []
    assert mallory.get("/api/v1/gradebook").status_code == 401          # the 51st in 10 s waits
    assert waited == [0.25]
    assert alice.get("/api/v1/exercises", headers=bearer(app.tokens["alice"])).status_code == 200
    assert waited == [0.25]


# ------------------------------------------------------------------ the start-up heap, out of the collector's reach

def test_the_service_freezes_its_start_up_heap_only_where_it_owns_the_process(tmp_path, monkeypatch):
    """A full cycle collection walks the whole heap with the event loop stopped (75-200 ms in
    the benchmark's server, every few seconds, collecting nothing): `grader serve` freezes what
    start-up made, once it is made (the engine loaded, the workers started); an app made
    elsewhere (a test, a library) leaves the process's collector alone."""
    import gc
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    calls: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(hasattr(app.state.grader, "engine")))
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    for freeze, expected in ((False, []), (True, [True])):       # True: frozen once, after the engine was loaded
        calls.clear()
        app = create_app(Settings(database=database, exercises=str(make_bank(tmp_path / str(freeze))), workers=1,
                                  job_workers=1, freeze_heap=freeze))
        with TestClient(app):
            pass
        assert calls == expected


def test_grader_serve_asks_for_the_frozen_heap(tmp_path, monkeypatch):
    import uvicorn
    from click.testing import CliRunner
    from grader.commands.serve import serve
    from serve_helpers import free_port
    import sys
    seen: list[object] = []

    def run(self, sockets=None):            # what uvicorn would serve, not served
        seen.append(self.config.app.state.grader.settings.freeze_heap)
        for s in sockets or ():
            s.close()
    monkeypatch.setattr(uvicorn.Server, "run", run)
    monkeypatch.setattr(sys, "setswitchinterval", lambda s: None)      # the test process's own is kept
    r = CliRunner().invoke(serve, ["--database", f"sqlite:///{tmp_path / 'grader.db'}", "--port",
                                  str(free_port()), "--secret-file", str(tmp_path / "secret")])
    assert r.exit_code == 0, r.output
    assert seen == [True]


def test_the_routing_is_built_before_the_first_request(tmp_path, monkeypatch):
    """FastAPI derives an included router's matching state on the first request that walks it
    (~150 ms with the pages, the event loop stopped): the start-up does it, so that the first
    unknown path or first page an attacker asks for stalls nobody. Spied on FastAPI's own builder
    (skipped where FastAPI has none: nothing to warm up then)."""
    import fastapi.routing
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    from grader.web import install as pages
    included = getattr(fastapi.routing, "_IncludedRouter", None)
    if included is None or not hasattr(included, "_build_effective_context"):
        pytest.skip("this FastAPI builds no routing state on first use")
    built: list[str] = []
    build = included._build_effective_context

    def spy(self, route):
        built.append(str(getattr(route, "path", route)))
        return build(self, route)
    monkeypatch.setattr(included, "_build_effective_context", spy)
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    app = create_app(Settings(database=database, exercises=str(make_bank(tmp_path)), workers=1, job_workers=1),
                     extensions=(pages,))
    with TestClient(app) as c:
        assert built, "the start-up walked every router"
        n = len(built)
        for path in ("/no/such/page", "/learn", "/staff", "/api/v1/jobs/nope", "/healthz"):
            c.get(path, follow_redirects=False)
        assert built[n:] == []          # nothing left to build on a request


# ------------------------------------------------------------------ a refused token costs less of the server's one process

def test_a_wrong_token_takes_one_trip_to_a_thread_and_builds_no_statement(app, monkeypatch):
    """A token that is not valid: its look-up and the throttle's read in one trip to a thread
    (they were two), its failure counted and its audit line written with statements built once
    (building the upsert's CASE expressions per failure cost more than running it); still 401,
    then 429 past the limit (3 in this app), every failure counted."""
    import anyio.to_thread
    from grader.db import audit as audit_mod
    from grader.serve import auth
    trips: list[str] = []
    run_sync = anyio.to_thread.run_sync

    async def spy_trip(fn, *args, **kw):
        if getattr(fn, "__module__", "") == "grader.serve.auth" or getattr(fn, "__self__", None) is not None:
            trips.append(getattr(fn, "__qualname__", repr(fn)))
        return await run_sync(fn, *args, **kw)
    built: list[str] = []
    case, insert = auth.case, audit_mod.insert
    monkeypatch.setattr(anyio.to_thread, "run_sync", spy_trip)
    monkeypatch.setattr(auth, "case", lambda *a, **kw: built.append("case") or case(*a, **kw))
    monkeypatch.setattr(audit_mod, "insert", lambda *a, **kw: built.append("insert") or insert(*a, **kw))
    api = TestClient(app, client=("10.7.7.7", 1))
    wrong = bearer("grd_" + "w" * 43)
    assert [api.get("/api/v1/me/grades", headers=wrong).status_code for _ in range(4)] == [401, 401, 401, 429]
    assert trips == ["look_up"] * 4             # one trip per refused request (it was 2: the look-up, the read)
    assert built.count("insert") == 0           # the audit line's statement was built at import
    assert built.count("case") <= 2             # the upsert: built once (its 2 CASEs), not 2 per failure
    from grader.db.models import AuditEntry, AuthFailure
    from sqlalchemy import func, select
    db = app.state.grader.db
    with db.read() as conn:
        counted = dict(conn.execute(select(AuthFailure.key, AuthFailure.failures)).all())
    assert counted["addr:10.7.7.7"] == 3 and counted["prefix:grd_wwwwww"] == 3    # the 429 writes nothing
    lines, deadline = 0, time.monotonic() + 30      # the audit's lines are written without being waited for
    while lines < 3 and time.monotonic() < deadline:
        with db.read() as conn:
            lines = conn.execute(select(func.count()).select_from(AuditEntry).where(
                AuditEntry.action == "auth.failed")).scalar_one()
        time.sleep(0.05)
    assert lines == 3


def test_the_prebuilt_upsert_counts_and_restarts_windows_as_before(tmp_path):
    """The failure counter's statement, built once with parameters: 1, 2, 3 in one window of 300 s;
    a failure 300 s after the window began starts a new one (count 1, window moved)."""
    from grader.db import Database
    from grader.db.models import AuthFailure
    from grader.serve.auth import FailureThrottle
    from sqlalchemy import select
    db = Database(f"sqlite:///{tmp_path / 'g.db'}")
    db.ensure_schema()
    t = FailureThrottle(limit=3, window_s=300.0, prune_s=1e9)
    assert [t.fail(db, ["addr:a"], now=1000.0 + i) for i in range(3)] == [1, 2, 3]
    assert t.wait(db, ["addr:a"], now=1010.0) == 290.0          # 1000 + 300 - 1010
    assert t.fail(db, ["addr:a", "prefix:grd_abcdef"], now=1300.0) == 1      # 1300 - 1000 >= 300: a new window
    with db.read() as conn:
        assert conn.execute(select(AuthFailure.window_start).where(AuthFailure.key == "addr:a")).scalar_one() == 1300.0
    db.dispose()


# ------------------------------------------------------------------ a job process keeps its bank

def test_a_job_process_loads_its_bank_again_only_when_it_changed_or_for_a_regrade(tmp_path, monkeypatch):
    """Each batch upload loaded the bank and derived its spec's references again (~0.3 s of CPU
    in the job process, the whole cost of a small batch): now once, again when a file of it
    changes on disk, and always for a regrade."""
    from grader.serve import engine
    loads: list[str] = []
    load = engine.load_bank
    monkeypatch.setattr(engine, "load_bank", lambda *a, **kw: loads.append("load") or load(*a, **kw))
    monkeypatch.setattr(engine, "_HELD", {})
    bank_dir = make_bank(tmp_path)
    config = {"exercises": str(bank_dir), "spec": None}
    first = engine.job_bank(config)
    assert engine.job_bank(config) is first and len(loads) == 1         # the second job: kept
    quiz = bank_dir / "17-08" / "04-quiz.yaml"
    past = time.time() - 60
    os.utime(quiz, (past, past))                # changed on disk (its mtime moved)
    second = engine.job_bank(config)
    assert second is not first and len(loads) == 2
    assert engine.job_bank(config) is second and len(loads) == 2
    assert engine.job_bank(config, fresh=True) is not second and len(loads) == 3     # a regrade

    asked: list[bool] = []

    def spy(config, fresh=False):
        asked.append(fresh)
        raise LookupError("enough")
    monkeypatch.setattr(engine, "job_bank", spy)
    for kind in ("batch", "code", "regrade"):
        with pytest.raises(LookupError):
            engine.run_job(kind, "j", {}, None, config)
    assert asked == [False, False, True]
