"""The HTTP API of `grader serve`, driven with httpx against a live server on 127.0.0.1, on
SQLite and on PostgreSQL (one server per backend for this module)."""
from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import yaml

from serve_helpers import LiveServer, make_bank, users

ROOT = Path(__file__).resolve().parents[2]
LEARNERS = ["alice", "bob", "carol", "dave", "erin", "frank", "gina", "hank", "ivan", "judy", "kim", "leo", "mia",
            "nina", "olga", "pete", "rate", "mallory", "norm"]


class Srv:
    def __init__(self, url, tokens, bank, database, tmp):
        self.url, self.tokens, self.bank, self.database, self.tmp = url, tokens, bank, database, tmp
        self.client = httpx.Client(base_url=url, timeout=60)

    def h(self, who: str, **extra) -> dict:
        return {"Authorization": f"Bearer {self.tokens[who]}", **extra}

    def get(self, who, path, **kw):
        return self.client.get("/api/v1" + path, headers=self.h(who), **kw)

    def post(self, who, path, body=None, headers=None, **kw):
        hs = self.h(who, **(headers or {}))
        if isinstance(body, (str, bytes)):
            hs.setdefault("Content-Type", "application/json")
            return self.client.post("/api/v1" + path, content=body, headers=hs, **kw)
        return self.client.post("/api/v1" + path, json=body, headers=hs, **kw)

    def submit(self, who, answers, key=None):
        return self.post(who, "/submissions", {"answers": answers}, headers={"Idempotency-Key": key} if key else None)

    def wait_job(self, who, job_id, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = self.get(who, f"/jobs/{job_id}").json()
            if job["status"] in ("done", "failed"):
                return job
            time.sleep(0.2)
        raise AssertionError(f"job {job_id} did not finish in {timeout} s: {job}")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def srv(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"serve-{request.param}")
    bank = make_bank(tmp)
    database = (f"sqlite:///{tmp / 'grader.db'}" if request.param == "sqlite"
                else request.getfixturevalue("postgres").new_database())
    tokens = users(database, prof="instructor", **{name: "learner" for name in LEARNERS})
    server = LiveServer(database, bank, tmp, "--rate", "20", "--burst", "30").start()
    s = Srv(server.url, tokens, bank, database, tmp)
    yield s
    s.client.close()
    server.stop()


def error_of(r) -> dict:
    body = r.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] and body["error"]["message"], body
    return body["error"]


# ------------------------------------------------------------------ service basics

def test_health_openapi_and_docs(srv):
    r = srv.client.get("/healthz")
    assert r.status_code == 200 and r.json()["status"] == "ok" and r.json()["workers_ready"] == 2
    spec = srv.client.get("/openapi.json").json()
    for path in ("/api/v1/submissions", "/api/v1/validate", "/api/v1/code-submissions", "/api/v1/jobs/{job_id}",
                 "/api/v1/gradebook", "/api/v1/review/{answer_id}", "/api/v1/regrade", "/api/v1/batches"):
        assert path in spec["paths"], path
    assert "requestBody" in spec["paths"]["/api/v1/submissions"]["post"]
    assert "swagger" in srv.client.get("/docs").text.lower()


def test_metrics_in_prometheus_format(srv):
    srv.get("alice", "/exercises")
    text = srv.client.get("/metrics").text
    assert 'grader_http_requests_total{method="GET",route="/api/v1/exercises",status="200"}' in text
    assert "grader_queue_depth" in text and "grader_grading_seconds_bucket" in text


# ------------------------------------------------------------------ exercises and validation

def test_exercises_show_the_learners_own_numbers_and_no_reference(srv):
    rows = srv.get("alice", "/exercises").json()
    from grader.bank import load_bank
    bank = load_bank(srv.bank)
    assert [r["id"] for r in rows] == [p.id for p in bank.problems]
    cli = subprocess.run([sys.executable, "-m", "grader", "exercises", "--exercises", str(srv.bank), "--learner",
                          "alice", "--format", "json"], capture_output=True, text=True, check=True)
    drawn = {row["id"]: (row["prompt"], row["drawn"]) for row in json.loads(cli.stdout)}
    for r in rows:
        assert set(r) <= {"id", "title", "kind", "points", "prompt", "choices", "attempts", "attempts_used",
                          "variant", "not_counted"}, r
        # a problem worth 0 points says why it is kept (the bank's note); one that counts says nothing
        assert ("not_counted" in r) == (bank.get(r["id"]).points == 0), r
        assert r["title"] == bank.get(r["id"]).title and r["title"]       # every bundled problem has one
        assert r["prompt"] == drawn[r["id"]][0]
        assert r.get("variant") == drawn[r["id"]][1]
    assert any(r.get("variant") for r in rows)
    text = json.dumps(rows, ensure_ascii=False)
    for p in bank.problems:
        if p.kind == "free_text":
            assert p.reference[:40] not in text
        elif p.kind == "number" and int(p.reference) >= 100_000:     # smaller ones are sizes in prompts
            assert str(p.reference) not in text and f"{int(p.reference):,}" not in text
    quiz4 = srv.get("alice", "/exercises/17-08/quiz-4").json()     # kept on purpose at 0 points (04-quiz.yaml)
    assert quiz4["points"] == 0 and quiz4["not_counted"].startswith("Defective in the text: the keyed option C")
    one = srv.get("alice", "/exercises/17-08/quiz-1").json()
    assert one["attempts"] == 2 and one["attempts_used"] == 0 and one["choices"]["A"]
    assert srv.get("alice", "/exercises/17-08/nope").status_code == 404


def test_validate_reads_without_storing(srv):
    r = srv.post("bob", "/validate", {"problem": "17-08/params-formula", "answer": "4d^2 + 4d"})
    assert r.status_code == 200
    got = r.json()
    assert got["ok"] and got["read_as"] == "4·d² + 4·d" and got["latex"] == "4 d^{2} + 4 d"
    assert "<msup><mi>d</mi><mn>2</mn></msup>" in got["mathml"]
    rel = srv.post("bob", "/validate", {"problem": "17-08/crossover", "answer": "2d < n"}).json()
    assert rel["ok"] and rel["read_as"] == "2·d < n" and rel["latex"] == "2 d < n"
    from xml.etree import ElementTree     # well-formed (MathML's named entity aside): a page may embed it
    ElementTree.fromstring("<math>" + rel["mathml"].replace("&InvisibleTimes;", "") + "</math>")
    bad = srv.post("bob", "/validate", {"problem": "17-08/params-formula", "answer": "4d^^2"}).json()
    assert bad["ok"] is False and bad["column"] == 4 and "^" in bad["error"]     # the second ^ is the 4th character
    unknown = srv.post("bob", "/validate", {"problem": "17-08/nope", "answer": "1"})
    assert unknown.status_code == 404 and error_of(unknown)["location"] == "body.problem"
    assert srv.get("bob", "/submissions").json() == []         # nothing stored
    assert srv.get("bob", "/me/grades").json()["problems"] == {}


# ------------------------------------------------------------------ submissions

# one JSON text, sent as the request body and written as an answers file for `grader grade`;
# 3.44e11 is a JSON number with an exponent: both must keep its text (3 significant figures)
PARITY_ANSWERS = """{
  "17-08/example-1.d_k": 64,
  "17-08/example-1.q_i_shape": [128, 64],
  "17-08/example-1.scores_shape": "128x64",
  "17-08/example-2.params": 786432,
  "17-08/example-3.total_flops": 3.44e11,
  "17-08/practice-1": "2^6",
  "17-08/practice-2": "Each head has its own projections, so the count is the same.",
  "17-08/practice-4.bytes": "16 MiB",
  "17-08/params-formula": "4d(d+1)",
  "17-08/flops-formula": "4nd^2 + 2n^2d",
  "17-08/crossover": "2d < n",
  "17-08/quiz-2": "B",
  "17-08/variant.d_k": 64,
  "17-08/variant.params": "4*768^2",
  "17-08/not-a-problem": 1
}"""


def same_but_where(r: dict) -> dict:
    """A result without where it was given (a file:line for `grader grade`, a field of the
    request for the service), which an unknown id's feedback names too."""
    where = r.get("location")
    return {k: (v.replace(where, "<where>") if k == "feedback" and where else v) for k, v in r.items()
            if k not in ("location", "answer_id")}


def test_submission_results_equal_grader_grade_json(srv, tmp_path):
    r = srv.post("carol", "/submissions", '{"answers": ' + PARITY_ANSWERS + "}")
    assert r.status_code == 201, r.text
    got = r.json()
    answers_file = tmp_path / "carol.json"
    answers_file.write_text('{"learner": "carol", "answers": ' + PARITY_ANSWERS + "}")
    cli = subprocess.run([sys.executable, "-m", "grader", "grade", str(answers_file), "--format", "json",
                          "--exercises", str(srv.bank)], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    (want,) = json.loads(cli.stdout)["submissions"]
    for key in ("learner", "score", "max_score", "pending_points", "unanswered"):
        assert got[key] == want[key], key
    assert len(got["results"]) == len(want["results"]) == 15
    for mine, theirs in zip(got["results"], want["results"]):
        assert same_but_where(mine) == same_but_where(theirs)
    statuses = {r["id"]: r["status"] for r in got["results"]}
    assert statuses["17-08/practice-2"] == "needs_person" and statuses["17-08/not-a-problem"] == "unknown"
    assert got["results"][4]["answer"] == "3.44e11"
    stored = srv.get("carol", f"/submissions/{got['id']}").json()
    assert [x["feedback"] for x in stored["results"]] == [x["feedback"] for x in got["results"]]
    assert stored["score"] == got["score"] and stored["status"] == "graded"


def test_idempotency_key(srv):
    answers = {"17-08/practice-1": 64}
    first = srv.submit("dave", answers, key="k-1")
    assert first.status_code == 201
    again = srv.submit("dave", answers, key="k-1")
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"] and again.json()["score"] == first.json()["score"] == 1
    other = srv.submit("dave", {"17-08/practice-1": 65}, key="k-1")
    assert other.status_code == 422 and error_of(other)["code"] == "idempotency_key_reused"
    elsewhere = srv.submit("erin", answers, key="k-1")        # keys are per learner
    assert elsewhere.status_code == 201 and elsewhere.json()["id"] != first.json()["id"]
    assert [s["id"] for s in srv.get("dave", "/submissions").json()] == [first.json()["id"]]


def test_attempts_limit_and_best_attempt(srv):
    assert srv.submit("frank", {"17-08/quiz-1": "B"}).status_code == 201      # wrong
    assert srv.submit("frank", {"17-08/quiz-1": "A"}).status_code == 201      # right
    third = srv.submit("frank", {"17-08/quiz-1": "A", "17-08/quiz-3": "A"})
    assert third.status_code == 409
    err = error_of(third)
    assert err["code"] == "attempts_exhausted" and err["location"] == "answers.17-08/quiz-1"
    assert "2 of 2" in err["message"]
    assert len(srv.get("frank", "/submissions").json()) == 2               # nothing stored
    assert srv.get("frank", "/exercises/17-08/quiz-1").json()["attempts_used"] == 2
    cell = srv.get("frank", "/me/grades").json()["problems"]["17-08/quiz-1"]
    assert cell == {"score": 1, "max_score": 1, "attempts": 2, "pending": False, "status": "correct"}


def test_errors_are_json_with_status(srv):
    c = srv.client
    r = c.get("/api/v1/exercises")
    assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith("Bearer") and error_of(r)
    r = c.get("/api/v1/exercises", headers={"Authorization": "Bearer grd_not-a-token"})
    assert r.status_code == 401 and error_of(r)["code"] == "unauthorized"
    assert srv.get("alice", "/gradebook").status_code == 403
    r = srv.get("alice", "/no-such-thing")
    assert r.status_code == 404 and error_of(r)["code"] == "not_found"
    cases = [('{"answers": {', 400), ('{"answers": {"17-08/practice-1": NaN}}', 400), ("[]", 422),
             ('{"answers": {}}', 422), ('{"answers": {"17-08/practice-1": 1}, "learner": "bob"}', 422),
             ('{"answers": {"17-08/quiz-2": "A", "17-08/quiz-2": "B"}}', 422),
             ('{"answers": {"17-08/code-add": "solution.py"}}', 422), ("[" * 100_000 + "]" * 100_000, 400)]
    for body, status in cases:
        r = srv.post("alice", "/submissions", body)
        assert r.status_code == status, (body[:60], r.text)
        error_of(r)
    assert error_of(srv.post("alice", "/submissions", '{"answers": {"17-08/quiz-2": "A", "17-08/quiz-2": "B"}}')
                    )["location"] == "body.17-08/quiz-2"
    r = srv.post("alice", "/submissions", "x", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    big = json.dumps({"answers": {"17-08/practice-2": "x" * (2 << 20)}})
    r = srv.post("alice", "/submissions", big)
    assert r.status_code == 413 and error_of(r)["code"] == "too_large"

    def chunks():                   # no Content-Length: counted as it streams in
        yield b'{"answers": {"17-08/practice-2": "'
        for _ in range(40):
            yield b"y" * 65536
        yield b'"}}'
    r = c.post("/api/v1/submissions", content=chunks(), headers=srv.h("alice", **{"Content-Type": "application/json"}))
    assert r.status_code == 413
    r = srv.post("prof", "/review/not-an-answer", {"score": 1})
    assert r.status_code == 404
    r = srv.post("prof", "/review/x", {"score": -1})
    assert r.status_code == 422 and error_of(r)["location"] == "body.score"
    assert srv.get("alice", "/submissions").json() == []


def test_rate_limit_per_token(srv):
    # 90 requests, 8 at a time: they come far faster than the 20 a second the bucket refills
    # (on PostgreSQL each request also writes the shared bucket), so past the burst of 30 some
    # are refused whatever the machine's load
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: srv.get("rate", "/exercises/17-08/quiz-3"), range(90)))
    codes, retry = [], []
    for r in answers:
        codes.append(r.status_code)
        if r.status_code == 429:
            retry.append(r.headers["Retry-After"])
            assert error_of(r)["code"] == "rate_limited"
    assert 200 in codes and 429 in codes and set(codes) == {200, 429}
    assert all(x.isdigit() and int(x) >= 1 for x in retry)
    assert srv.get("alice", "/exercises/17-08/quiz-3").status_code == 200     # another token: not limited


def test_hostile_answers_do_not_harm_another_learner(srv):
    hostile = yaml.safe_load((ROOT / "tests" / "hostile" / "mallory.yaml").read_text())["answers"]
    hostile = {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v) for k, v in hostile.items()
               if k != "17-08/attn-memory-formula"}       # that problem's statistics are tested below
    normal = {"17-08/params-formula": "4d^2 + 4d", "17-08/practice-1": "2^6", "17-08/crossover": "n > 2d"}
    alone = srv.submit("norm", normal).json()

    def one(i):
        return srv.submit("mallory", hostile) if i % 2 else srv.submit("norm", normal)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(one, range(6)))
    for i, r in enumerate(got):
        if r.status_code == 429:        # one request of a learner is graded at a time
            continue
        if i % 2 and r.status_code == 409 and r.json()["error"]["code"] == "attempts_exhausted":
            continue    # mallory's third, when none of hers overlapped another: quiz-1 allows 2 attempts
        assert r.status_code == 201, r.text
        if i % 2 == 0:
            assert r.json()["score"] == alone["score"] == 5
            assert [x["feedback"] for x in r.json()["results"]] == [x["feedback"] for x in alone["results"]]
        else:
            assert r.json()["score"] == 1      # only the good answer scores
    assert any(r.status_code == 201 for r in got[1::2]) and any(r.status_code == 201 for r in got[0::2])
    assert srv.client.get("/healthz").json()["workers_ready"] == 2
    assert not (srv.tmp / "PWNED").exists()


# ------------------------------------------------------------------ who sees what

def test_a_learner_cannot_see_another_learners_data(srv):
    secret = "gina-secret-answer about heads"
    sub = srv.submit("gina", {"17-08/practice-3": secret, "17-08/quiz-3": "A"}).json()
    job = srv.post("gina", "/code-submissions", files={"file": ("gina.py", b"def add(a, b):\n    return a + b\n")},
                   data={"problem": "17-08/code-add"}).json()
    srv.submit("hank", {"17-08/quiz-3": "B"})
    nowhere = uuid.uuid4().hex
    for path in (f"/submissions/{sub['id']}", f"/jobs/{job['id']}"):
        mine, missing = srv.get("hank", path), srv.get("hank", path.rsplit("/", 1)[0] + "/" + nowhere)
        assert mine.status_code == missing.status_code == 404
        assert mine.json() == missing.json()
    seen = []
    for path in ("/submissions", "/submissions?learner=gina", "/jobs", "/me/grades", "/exercises"):
        r = srv.get("hank", path)
        assert r.status_code == 200
        seen.append(r.text)
    for path in ("/gradebook", "/gradebook?format=csv", "/problems/17-08/practice-3/stats", "/review"):
        r = srv.get("hank", path)
        assert r.status_code == 403
        seen.append(r.text)
    for path, body in ((f"/review/{sub['results'][0]['answer_id']}", {"score": 0}), ("/regrade", None)):
        r = srv.post("hank", path, body)
        assert r.status_code == 403
        seen.append(r.text)
    r = srv.post("hank", "/batches", files={"file": ("a.yaml", b"learner: gina\nanswers: {17-08/quiz-3: C}\n")})
    assert r.status_code == 403
    everything = "\n".join(seen)
    assert "gina" not in everything and secret not in everything and sub["id"] not in everything
    assert job["id"] not in everything
    assert [s["learner"] for s in srv.get("hank", "/submissions?learner=gina").json()] == ["hank"]
    # the instructor sees both
    assert srv.get("prof", f"/submissions/{sub['id']}").json()["learner"] == "gina"
    srv.wait_job("gina", job["id"])


def test_a_revoked_token_gets_401(srv):
    from grader.db import Database
    from grader.serve.accounts import revoke
    assert srv.get("ivan", "/me/grades").status_code == 200
    db = Database(srv.database)
    try:
        assert revoke(db, "ivan") == 1
    finally:
        db.dispose()
    deadline = time.monotonic() + 5         # a valid token is looked up again after at most 1 s
    while (r := srv.get("ivan", "/me/grades")).status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert r.status_code == 401 and error_of(r)["code"] == "unauthorized"


# ------------------------------------------------------------------ staff

def test_review_counts_and_reaches_the_learner(srv):
    sub = srv.submit("judy", {"17-08/practice-2": "W^O stays d × d; the heads share the width.",
                              "17-08/quiz-3": "A"}).json()
    answer_id = sub["results"][0]["answer_id"]
    queue = srv.get("prof", "/review").json()
    item = next(x for x in queue if x["answer_id"] == answer_id)
    assert item["learner"] == "judy" and item["problem"] == "17-08/practice-2" and item["points"] == 2
    too_many = srv.post("prof", f"/review/{answer_id}", {"score": 3, "comment": "?"})
    assert too_many.status_code == 422
    r = srv.post("prof", f"/review/{answer_id}", {"score": 1.5, "comment": "right idea, no reason given"})
    assert r.status_code == 201
    review = r.json()
    assert review["reviewer"] == "prof" and review["score"] == 1.5 and review["at"].endswith("Z")
    mine = srv.get("judy", f"/submissions/{sub['id']}").json()["results"][0]["review"]
    # not a late answer: it counts at the reviewer's score, no penalty
    assert mine == {"score": 1.5, "comment": "right idea, no reason given", "reviewer": "prof", "at": review["at"],
                    "rubric": [], "counted": 1.5, "penalty": None, "late_fraction": None}
    cell = srv.get("judy", "/me/grades").json()["problems"]["17-08/practice-2"]
    assert cell["score"] == 1.5 and cell["pending"] is False and cell["status"] == "reviewed"
    assert answer_id not in [x["answer_id"] for x in srv.get("prof", "/review").json()]
    assert answer_id in [x["answer_id"] for x in srv.get("prof", "/review?include_reviewed=true").json()]


def test_gradebook_csv_and_problem_stats(srv):
    srv.submit("kim", {"17-08/attn-memory-formula": "4bhn", "17-08/example-1.d_k": 64})
    srv.submit("leo", {"17-08/attn-memory-formula": "4bhn"})
    srv.submit("mia", {"17-08/attn-memory-formula": "4*b*h*n^2"})
    srv.submit("nina", {"17-08/attn-memory-formula": "4 b h n"})
    book = srv.get("prof", "/gradebook").json()
    assert book["policy"] == "best"
    rows = {r["learner"]: r for r in book["rows"]}
    assert set(LEARNERS) <= set(rows)
    assert rows["kim"]["problems"]["17-08/attn-memory-formula"]["score"] == 0
    assert rows["mia"]["problems"]["17-08/attn-memory-formula"]["score"] == 2
    assert rows["kim"]["total"] == 1 and rows["mia"]["total"] == 2
    for r in rows.values():
        assert r["total"] == sum(c["score"] or 0 for c in r["problems"].values())
    table = list(csv.DictReader(io.StringIO(srv.get("prof", "/gradebook?format=csv").text)))
    by = {r["learner"]: r for r in table}
    assert by["kim"]["17-08/attn-memory-formula"] == "0" and by["kim"]["17-08/example-1.d_k"] == "1"
    assert by["mia"]["17-08/attn-memory-formula"] == "2" and by["mia"]["17-08/quiz-1"] == ""
    assert float(by["kim"]["total"]) == 1 and float(by["kim"]["max_total"]) == rows["kim"]["max_total"]
    stats = srv.get("prof", "/problems/17-08/attn-memory-formula/stats").json()
    assert stats["learners"] == 4 and stats["answers"] == 4 and stats["correct"] == 1
    assert stats["distribution"] == [{"score": 0, "learners": 3}, {"score": 2, "learners": 1}]
    top = stats["common_wrong"][0]
    assert top["answers"] == 3 and top["learners"] == 3 and "n is missing" in top["feedback"]
    assert top["examples"][0] == "4bhn"


def test_batch_job_grades_like_grader_grade(srv, tmp_path):
    text = ("submissions:\n"
            "  - {learner: batch-1, answers: {17-08/practice-1: 64, 17-08/params-formula: '3d^2'}}\n"
            "  - {learner: batch-2, answers: {17-08/practice-1: '2^6', 17-08/quiz-2: D}}\n"
            "  - {learner: batch-3}\n")
    r = srv.post("prof", "/batches", files={"file": ("class.yaml", text.encode())})
    assert r.status_code == 202 and r.headers["Location"].endswith(r.json()["id"])
    job = srv.wait_job("prof", r.json()["id"])
    assert job["status"] == "done", job
    res = job["result"]
    assert res["summary"] == {"submissions": 2, "answers": 4, "errors": 1}
    assert job["progress"]["done"] == job["progress"]["total"] >= 1
    assert res["learners_created"] == ["batch-1", "batch-2"]
    assert res["errors"][0]["location"].startswith("class.yaml:")
    (tmp_path / "class.yaml").write_text(text)
    cli = json.loads(subprocess.run([sys.executable, "-m", "grader", "grade", str(tmp_path / "class.yaml"), "--format",
                                     "json", "--exercises", str(srv.bank)], capture_output=True, text=True).stdout)
    want = {s["learner"]: s["score"] for s in cli["submissions"]}
    rows = {r["learner"]: r for r in srv.get("prof", "/gradebook").json()["rows"]}
    assert rows["batch-1"]["total"] == want["batch-1"] and rows["batch-2"]["total"] == want["batch-2"] == 2


def test_code_submission_job(srv):
    good = srv.post("olga", "/code-submissions", files={"file": ("mine.py", b"def add(a, b):\n    return a + b\n")},
                    data={"problem": "17-08/code-add"})
    bad = srv.post("olga", "/code-submissions", files={"file": ("mine.py", b"def add(a, b):\n    return a - b\n")},
                   data={"problem": "17-08/code-add"})
    assert good.status_code == bad.status_code == 202 and good.json()["status"] in ("queued", "running")
    done = srv.wait_job("olga", good.json()["id"])
    assert done["status"] == "done" and done["result"]["score"] == 4 and done["result"]["status"] == "correct"
    assert [t["passed"] for t in done["result"]["tests"]] == [True, True]
    failed = srv.wait_job("olga", bad.json()["id"])["result"]
    assert failed["score"] == 0 and not any(t["passed"] for t in failed["tests"])
    assert "assert -1 == 5" in failed["tests"][0]["message"]
    assert srv.get("olga", "/me/grades").json()["problems"]["17-08/code-add"]["score"] == 4
    r = srv.post("olga", "/code-submissions", files={"file": ("x.py", b"x = 1\n")}, data={"problem": "17-08/quiz-1"})
    assert r.status_code == 422
    r = srv.post("olga", "/code-submissions", files={"file": ("x.py", b"")}, data={"problem": "17-08/code-add"})
    assert r.status_code == 422


def test_regrade_after_the_bank_changed(srv):
    """Last in this module: it changes the bank (and restores it, with a second regrade)."""
    srv.submit("pete", {"17-08/params-formula": "4d^2 + 4d", "17-08/quiz-3": "A"})
    formulas = srv.bank / "17-08" / "03-formulas.yaml"
    before = formulas.read_text()
    marker = '  - id: 17-08/params-formula\n'
    block = before.index(marker)
    points_at = before.index("    points: 2\n", block)
    formulas.write_text(before[:points_at] + "    points: 5\n" + before[points_at + len("    points: 2\n"):])
    try:
        job = srv.wait_job("prof", srv.post("prof", "/regrade").json()["id"])
        assert job["status"] == "done", job
        changed = [c for c in job["result"]["changed"] if c["problem"] == "17-08/params-formula"]
        pete = [c for c in changed if c["learner"] == "pete"]
        assert pete and pete[0]["old"] == 2 and pete[0]["new"] == 5
        assert all(c["new"] == 5 and c["old"] == 2 for c in changed)
        assert srv.get("pete", "/me/grades").json()["problems"]["17-08/params-formula"]["score"] == 5
        assert srv.submit("pete", {"17-08/params-formula": "4d^2+4d"}).json()["results"][0]["score"] == 5
    finally:
        formulas.write_text(before)
    job = srv.wait_job("prof", srv.post("prof", "/regrade").json()["id"])
    assert {(c["old"], c["new"]) for c in job["result"]["changed"] if c["learner"] == "pete"} == {(5, 2)}
