"""Issue #26, the service's part: one learner's request cannot stop grading for everyone; every
query parameter is checked with its range; a code job whose tests never ran is the grader's
failure, not the learner's score; the API's responses carry no-store and nosniff and no
server header; the database file is its owner's only; /docs works offline; a busy port is one
line and exit status 2."""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from concurrent.futures import Future
from pathlib import Path

import httpx
import pytest
from sqlalchemy import insert, select

import serve_pool_helpers as helpers
from grader.api import AnswerResult
from grader.api.service import answer_shape
from grader.db import Database
from grader.db.models import Answer, Job, Submission, User, now
from grader.serve import engine as serve_engine
from grader.serve import store
from grader.serve.jobs import MAX_TRIES, JobRunner
from grader.serve.workers import TaskFailed, WorkerPool
from serve_helpers import LiveServer, make_bank, users

ROOT = Path(__file__).resolve().parents[2]


def nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


# ------------------------------------------------------------------ B.1: the dispatcher

def test_a_task_that_cannot_be_handed_to_a_worker_fails_alone_and_the_pool_goes_on():
    pool = WorkerPool(helpers.init, (), helpers.handler, processes=1, memory_mb=256)
    pool.start()
    try:
        deep = pool.submit(("echo", nested(100_000)), 10)       # pickling it raises RecursionError
        with pytest.raises(TaskFailed) as e:
            deep.result(timeout=20)
        assert e.value.reason == "error" and "could not be handed" in str(e.value)
        after = [pool.submit(("echo", i), 10) for i in range(5)]
        assert [f.result(timeout=20)[0] for f in after] == list(range(5))       # the dispatcher is alive
    finally:
        pool.close()


def test_the_answer_shape_is_the_engines():
    shape = answer_shape()
    assert shape.problem(nested(1)) is None and shape.problem("4d^2") is None and shape.problem(7) is None
    assert "nested" in (shape.problem(nested(300)) or "")
    assert "items" in (shape.problem(list(range(shape.max_items + 1))) or "")
    from grader.answers.guard import MAX_ITEMS
    assert shape.max_items == MAX_ITEMS


class _Closed:
    """A pool whose every task fails as a service that cannot grade."""

    def __init__(self):
        self.calls = 0

    def call(self, payload, deadline_s):
        self.calls += 1
        raise TaskFailed("closed", "the grading workers are away")


class _State:
    def __init__(self, db):
        from grader.serve.settings import Settings
        self.db, self.pool, self.settings = db, _Closed(), Settings()


def test_a_stored_request_that_fails_again_on_recovery_is_failed_after_bounded_tries(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'recover.db'}")
    db.ensure_schema()
    try:
        with db.write() as conn:
            conn.execute(insert(User).values(id=1, login="mallory", name="", email="", role="learner",
                                             created_at=now()))
            conn.execute(insert(Submission).values(id="s1", user_id=1, body_hash="", source="api", status="received",
                                                   created_at=now()))
            conn.execute(insert(Answer).values(id="a1", submission_id="s1", user_id=1, problem_id="17-08/quiz-1",
                                               position=0, raw="B", created_at=now()))
        state = _State(db)
        store.recover(state)
        assert state.pool.calls == store.RECOVERY_TRIES
        with db.read() as conn:
            assert conn.execute(select(Submission.status).where(Submission.id == "s1")).scalar_one() == "failed"
            assert store.attempts_used(conn, 1, ["17-08/quiz-1"]) == {}     # a failed request uses no attempt
        store.recover(state)                                                  # the next start: not again
        assert state.pool.calls == store.RECOVERY_TRIES
    finally:
        db.dispose()


# ------------------------------------------------------------------ B.7: tests that never ran

def test_a_code_answer_whose_tests_did_not_run_is_not_a_grade(monkeypatch, tmp_path):
    from grader.api import load_bank
    from grader.grade.results import CodeTestResult
    bank = load_bank(make_bank(tmp_path))

    def crashed(bank, problem_id, path):
        return AnswerResult(problem_id, path.name, 0.0, 10.0, False,
                            "0/1 tests passed", "wrong",
                            tests=(CodeTestResult("tests", False,
                                                  "the tests did not run: the test run exited with code 70"),))
    monkeypatch.setattr(serve_engine, "grade_code_file", crashed)
    answer = serve_engine._code_answer(bank, "17-08/code-add", "solution.py", b"def add(a, b):\n    return a + b\n")
    assert answer["not_run"] == "the test run exited with code 70"


class _NotRun:
    capacity = 1

    def __init__(self):
        self.started = 0

    def submit(self, kind, job_id, params, data, config):
        self.started += 1
        fut = Future()
        fut.set_result({"not_run": "the test run exited with code 70"})
        return fut

    def close(self):
        pass


def test_a_code_job_whose_tests_never_ran_is_retried_then_failed_never_stored(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'jobs.db'}")
    db.ensure_schema()
    finished = []
    try:
        with db.write() as conn:
            conn.execute(insert(User).values(id=1, login="l", name="", email="", role="learner", created_at=now()))
            conn.execute(insert(Job).values(id="j", kind="code", user_id=1, problem_id="17-08/code-add",
                                            status="queued", params={}, done=0, tries=0, created_at=now()))
        ex = _NotRun()
        runner = JobRunner(db, ex, {}, prepare=None, finish=lambda conn, job, result: finished.append(result) or {})
        runner.start()
        deadline = time.monotonic() + 30
        try:
            while time.monotonic() < deadline:
                with db.read() as conn:
                    status = conn.execute(select(Job.status).where(Job.id == "j")).scalar_one()
                if status == "failed":
                    break
                runner.wake()
                time.sleep(0.05)
        finally:
            runner.stop()
        with db.read() as conn:
            row = conn.execute(select(Job.status, Job.tries, Job.error, Job.result).where(Job.id == "j")).one()
            subs = conn.execute(select(Submission.id)).all()
        assert row.status == "failed" and row.tries == MAX_TRIES and ex.started == MAX_TRIES
        assert "exited with code 70" in row.error and "not your answer" in row.error and row.result is None
        assert finished == [] and subs == []             # no score stored, no attempt counted
    finally:
        db.dispose()


# ------------------------------------------------------------------ a live server

@pytest.fixture(scope="module")
def live(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-hardening")
    bank = make_bank(tmp)
    database = f"sqlite:///{tmp / 'grader.db'}"
    tokens = users(database, prof="instructor", mallory="learner", alice="learner")
    server = LiveServer(database, bank, tmp).start()
    client = httpx.Client(base_url=server.url, timeout=60)
    yield server, client, tokens, tmp
    client.close()
    server.stop()


def auth(tokens, who):
    return {"Authorization": f"Bearer {tokens[who]}"}


def test_a_deeply_nested_answer_is_refused_at_the_door_and_grading_goes_on(live):
    server, client, tokens, _ = live
    for depth in (300, 3000):
        body = '{"answers": {"17-08/practice-1": ' + "[" * depth + "1" + "]" * depth + "}}"
        r = client.post("/api/v1/submissions", content=body, headers={**auth(tokens, "mallory"),
                                                                       "Content-Type": "application/json"})
        assert r.status_code in (400, 422), r.text
        assert r.json()["error"]["message"]
    body = '{"problem": "17-08/practice-1", "answer": ' + "[" * 300 + "1" + "]" * 300 + "}"
    r = client.post("/api/v1/validate", content=body, headers={**auth(tokens, "mallory"),
                                                              "Content-Type": "application/json"})
    assert r.status_code == 422 and "nested" in r.json()["error"]["message"]
    # nothing stored; the attacker's slot is free; everyone is graded
    assert client.get("/api/v1/submissions", headers=auth(tokens, "mallory")).json() == []
    for who in ("mallory", "alice"):
        r = client.post("/api/v1/submissions", json={"answers": {"17-08/practice-1": 64}}, headers=auth(tokens, who))
        assert r.status_code == 201, r.text
    assert client.get("/healthz").status_code == 200


@pytest.mark.parametrize("query", ["offset=99999999999999999999", f"offset={2**63}", "offset=-1", "limit=0",
                                   "limit=99999999999999999999", "learner=" + "x" * 500])
def test_every_query_parameter_is_checked_with_its_range(live, query):
    server, client, tokens, _ = live
    r = client.get(f"/api/v1/submissions?{query}", headers=auth(tokens, "prof"))
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "invalid"


def test_the_largest_offset_allowed_is_an_empty_page(live):
    server, client, tokens, _ = live
    r = client.get(f"/api/v1/submissions?offset={2**31 - 1}", headers=auth(tokens, "prof"))
    assert r.status_code == 200 and r.json() == []


def test_api_responses_are_not_cached_nor_sniffed_and_name_no_server(live):
    server, client, tokens, _ = live
    for r in (client.get("/api/v1/exercises", headers=auth(tokens, "alice")),
              client.get("/api/v1/jobs/nope", headers=auth(tokens, "alice")),
              client.get("/api/v1/exercises"), client.get("/healthz"), client.get("/openapi.json")):
        assert r.headers.get("cache-control") == "no-store", (r.url, r.headers)
        assert r.headers.get("x-content-type-options") == "nosniff"
        assert "server" not in r.headers


def test_the_database_file_is_its_owners_only(live):
    _, _, _, tmp = live
    for name in ("grader.db", "grader.secret"):
        assert stat.S_IMODE(os.stat(tmp / name).st_mode) == 0o600, name


def test_a_new_sqlite_database_is_made_owner_only(tmp_path):
    old = os.umask(0o022)
    try:
        db = Database(f"sqlite:///{tmp_path / 'new.db'}")
        db.ensure_schema()
        db.dispose()
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.db").st_mode) == 0o600


# ------------------------------------------------------------------ B.14: /docs offline, start-up

def test_the_api_documentation_needs_no_network(live):
    server, client, _, _ = live
    html = client.get("/docs").text
    assert "swagger" in html.lower() and "cdn" not in html and "https://" not in html
    for asset in ("/docs/static/swagger-ui-bundle.js", "/docs/static/swagger-ui.css",
                  "/docs/static/favicon-32x32.png"):
        assert asset in html
        r = client.get(asset)
        assert r.status_code == 200 and len(r.content) > 100, asset
    vendored = ROOT / "grader" / "serve" / "static" / "swagger"
    info = (vendored / "swagger-ui-bundle.VENDORED.txt").read_text()
    assert "package: swagger-ui-dist" in info and "version: 5." in info
    assert (vendored / "swagger-ui-bundle.LICENSE.txt").read_text().strip()


def test_the_start_up_line_names_the_pages(live):
    server, *_ = live
    line = next(t for t in server.log.read_text().splitlines() if t.startswith("grader serve: "))
    for path in ("/learn", "/staff", "/spec", "/docs"):
        assert f"{server.url}{path}" in line, line


def test_a_busy_port_is_one_line_and_exit_2(live, tmp_path):
    server, *_ = live
    r = subprocess.run([sys.executable, "-m", "grader", "serve", "--database", str(tmp_path / "g.db"),
                        "--port", str(server.port), "--secret-file", str(tmp_path / "s")],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = [t for t in r.stderr.splitlines() if t.strip() and not t.startswith("created the database")]
    assert lines == [f"error: cannot listen on 127.0.0.1:{server.port}: Address already in use"], r.stderr
    assert "grader serve: " not in r.stderr


def test_an_unusable_address_is_one_line_and_exit_2(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = subprocess.run([sys.executable, "-m", "grader", "serve", "--database", str(tmp_path / "g.db"),
                        "--host", "203.0.113.7", "--port", str(port), "--secret-file", str(tmp_path / "s")],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = [t for t in r.stderr.splitlines() if t.strip() and not t.startswith("created the database")]
    assert len(lines) == 1 and lines[0].startswith("error: cannot listen on 203.0.113.7:"), r.stderr
