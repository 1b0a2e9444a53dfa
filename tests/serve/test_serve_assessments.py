"""Assessments in the service (issue 29), with a controlled clock (``Settings.now``): a
submission before opening or after closing is 409 and stores nothing; a late one is stored
with its raw score and its penalty; extensions (API and CLI), the time limit of a quiz, when
scores are shown (after due, on release); the per-assessment gradebook as JSON and CSV.

On SQLite and on PostgreSQL. The course (Europe/Paris, UTC+1 in December), derived by hand:
- hw1 = practice-1 (1 point) + params-formula (bank 2 points, 4 here): opens 2026-12-01 09:00
  (08:00Z), due 2026-12-07 23:59 (22:59Z), late until 2026-12-10 23:59 (22:59Z), 10% a started
  day, 2 attempts per problem, scores shown at once.
- hw2 = practice-1.check (1 point): opens 12-01 09:00, due 12-04 23:59 (22:59Z), no late
  answers, scores shown after the due date.
- q1 = quiz-1 + quiz-2 (1 point each): opens 12-02 10:00 (09:00Z), due 12-02 12:00 (11:00Z),
  30 minutes from its start, scores shown on release.
- c1 = code-add (4 points): due 12-05 23:59 (22:59Z), late until 12-10 23:59, late scores x 0.5.
"""
from __future__ import annotations

import csv
import io
import subprocess
import sys
from datetime import datetime, timezone

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from serve_helpers import make_bank, users

COURSE = """course: {timezone: Europe/Paris}
assessments:
  - id: hw1
    title: Homework 1
    description: Heads and parameters.
    problems: [17-08/practice-1, {id: 17-08/params-formula, points: 4}]
    opens: 2026-12-01 09:00
    due: 2026-12-07 23:59
    late: {until: 2026-12-10 23:59, penalty_per_day: 10%}
    attempts: 2
    show: immediately
  - id: hw2
    title: Homework 2
    problems: [17-08/practice-1.check]
    opens: 2026-12-01 09:00
    due: 2026-12-04 23:59
    show: after_due
  - id: q1
    title: Quiz 1
    problems: [17-08/quiz-1, 17-08/quiz-2]
    opens: 2026-12-02 10:00
    due: 2026-12-02 12:00
    time_limit: 30 min
    show: on_release
  - id: c1
    title: Code 1
    problems: [17-08/code-add]
    opens: 2026-12-01 09:00
    due: 2026-12-05 23:59
    late: {until: 2026-12-10 23:59, multiplier: 0.5}
"""


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


class Clock:
    def __init__(self, at: str) -> None:
        self.t = utc(at)

    def set(self, at: str) -> None:
        self.t = utc(at)

    def __call__(self) -> datetime:
        return self.t


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def app(request, tmp_path_factory):
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    from grader.web import install
    tmp = tmp_path_factory.mktemp("assess")
    bank = make_bank(tmp)
    (bank / "assessments.yaml").write_text(COURSE)
    database = (f"sqlite:///{tmp / 'grader.db'}" if request.param == "sqlite"
                else request.getfixturevalue("postgres").new_database())
    tokens = users(database, prof="instructor", alice="learner", bob="learner", carol="learner", dave="learner",
                   erin="learner")
    clock = Clock("2026-11-30T12:00:00Z")
    settings = Settings(database=database, exercises=str(bank), workers=1, job_workers=1, rate=0,
                        web_secret=b"s" * 32, now=clock)
    application = create_app(settings, extensions=(install,))
    with TestClient(application, client=("10.3.0.1", 1)):
        application.tokens, application.clock, application.bank, application.database = tokens, clock, bank, database
        yield application


def api(app, who: str, method: str, path: str, **kw):
    c = TestClient(app, client=("10.3.0.2", 1))
    return c.request(method, "/api/v1" + path, headers={"Authorization": f"Bearer {app.tokens[who]}"}, **kw)


def submit(app, who: str, answers: dict):
    return api(app, who, "POST", "/submissions", json={"answers": answers})


def stored(app, who: str) -> int:
    return len(api(app, who, "GET", "/submissions").json())


def test_before_opening_409_says_when_and_stores_nothing(app):
    app.clock.set("2026-11-30T12:00:00Z")          # a day before hw1 opens (2026-12-01 08:00Z)
    r = submit(app, "erin", {"17-08/practice-1": 64})
    assert r.status_code == 409, r.text
    err = r.json()["error"]
    assert err["code"] == "not_open" and err["location"] == "answers.17-08/practice-1"
    assert "Homework 1 (hw1): opens in 20 hours, on 2026-12-01 09:00 CET; nothing was stored" == err["message"]
    assert stored(app, "erin") == 0
    r = api(app, "erin", "GET", "/exercises/17-08/practice-1")    # its prompt is not shown before it opens
    assert r.status_code == 409 and "opens" in r.json()["error"]["message"]
    assert api(app, "prof", "GET", "/exercises/17-08/practice-1").status_code == 200
    listed = {r["id"] for r in api(app, "erin", "GET", "/exercises").json()}
    # hw1, hw2 not open; q1 not open (and not started): none of their prompts; the rest as before
    assert not listed & {"17-08/practice-1", "17-08/params-formula", "17-08/practice-1.check", "17-08/quiz-1"}
    assert "17-08/example-2.params" in listed
    assert "17-08/practice-1" in {r["id"] for r in api(app, "prof", "GET", "/exercises").json()}


def test_open_then_late_with_penalty_then_closed(app):
    from grader.db import Database
    from grader.db.models import Answer
    app.clock.set("2026-12-03T12:00:00Z")          # open
    r = submit(app, "alice", {"17-08/practice-1": 64, "17-08/params-formula": "4d^2 + 4d"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert [x["score"] for x in body["results"]] == [1, 2] and body["score"] == 3
    assert all(x["assessment"] == "hw1" and "penalty" not in x for x in body["results"])
    assert submit(app, "alice", {"17-08/practice-1": 63}).status_code == 201       # the second of 2 attempts
    r = submit(app, "alice", {"17-08/practice-1": 64})                              # hw1: attempts 2
    assert r.status_code == 409 and r.json()["error"]["code"] == "attempts_exhausted"
    assert stored(app, "alice") == 2

    app.clock.set("2026-12-07T22:59:00Z")          # exactly at due: on time
    r = submit(app, "dave", {"17-08/practice-1": 64})
    assert r.status_code == 201 and r.json()["results"][0]["score"] == 1 and "penalty" not in r.json()["results"][0]

    app.clock.set("2026-12-09T12:00:00Z")          # 1 day 13 h 1 min late: 2 started days, 20% off
    r = submit(app, "bob", {"17-08/params-formula": "4d^2 + 4d"})
    assert r.status_code == 201, r.text
    res = r.json()["results"][0]
    # raw 2 (the bank's points), penalty 2 × 0.2 = 0.4, final 1.6
    assert (res["score"], res["raw_score"], res["penalty"], res["late"]) == (1.6, 2, 0.4, {"fraction": 0.2})
    assert r.json()["score"] == 1.6
    assert r.json()["created_at"] == "2026-12-09T12:00:00Z"        # the one clock: Settings.now
    page = signed_in(app, "bob").get(f"/learn/exercise/17-08/params-formula?s={r.json()['id']}").text
    assert 'id="late-penalty"' in page                              # the exercise page says what the penalty took
    assert "2 before the penalty, 0.4 lost (20 % off), 1.6 counted" in " ".join(page.split())
    d = Database(app.database)
    with d.read() as conn:
        row = conn.execute(select(Answer.score, Answer.raw_score, Answer.penalty, Answer.assessment_id)
                           .where(Answer.id == res["answer_id"])).one()
    d.dispose()
    assert tuple(row) == (1.6, 2.0, 0.4, "hw1")

    app.clock.set("2026-12-10T22:59:01Z")          # one second after late-until: closed
    r = submit(app, "bob", {"17-08/practice-1": 64})
    assert r.status_code == 409 and r.json()["error"]["code"] == "closed"
    assert "closed since 2026-12-10 23:59 CET" in r.json()["error"]["message"]
    assert stored(app, "bob") == 1


def test_extension_past_late_until_then_revoked(app):
    app.clock.set("2026-12-11T12:00:00Z")          # hw1 closed for the class
    assert submit(app, "carol", {"17-08/practice-1": 64}).status_code == 409
    r = api(app, "carol", "POST", "/assessments/hw1/extensions", json={"learner": "carol", "due": "2026-12-12T23:59"})
    assert r.status_code == 403                                    # a learner grants nothing
    r = api(app, "prof", "POST", "/assessments/hw1/extensions",
            json={"learner": "carol", "due": "2026-12-12T23:59", "reason": "ill"})
    assert r.status_code == 201, r.text
    # 2026-12-12 23:59 in Paris = 22:59Z; the class's due 2026-12-07 22:59Z
    assert r.json() == {"assessment": "hw1", "learner": "carol", "name": "", "due": "2026-12-12T22:59:00Z",
                        "due_local": "2026-12-12 23:59 CET", "original_due": "2026-12-07T22:59:00Z",
                        "original_due_local": "2026-12-07 23:59 CET",
                        "granted_by": "prof", "reason": "ill", "created_at": "2026-12-11T12:00:00Z"}
    r = submit(app, "carol", {"17-08/practice-1": 64})             # on time for carol: no penalty
    assert r.status_code == 201 and r.json()["results"][0]["score"] == 1
    assert "penalty" not in r.json()["results"][0]
    mine = {a["id"]: a for a in api(app, "carol", "GET", "/assessments").json()}["hw1"]
    assert mine["extension"] == "2026-12-12T22:59:00Z" and mine["window"]["state"] == "open"
    assert [e["learner"] for e in api(app, "prof", "GET", "/assessments/hw1/extensions").json()] == ["carol"]
    assert api(app, "prof", "DELETE", "/assessments/hw1/extensions", params={"learner": "carol"}).status_code == 204
    assert api(app, "prof", "DELETE", "/assessments/hw1/extensions", params={"learner": "carol"}).status_code == 404
    assert api(app, "prof", "GET", "/assessments/hw1/extensions").json() == []
    assert submit(app, "carol", {"17-08/params-formula": "4d^2 + 4d"}).status_code == 409    # closed again
    log = api(app, "prof", "GET", "/audit", params={"action": "extension"}).json()["entries"]
    assert [e["action"] for e in log] == ["extension.revoked", "extension.granted"]
    assert log[1]["target"] == "hw1:carol" and log[1]["detail"]["due"] == "2026-12-12T22:59:00Z"


def test_timed_quiz_starts_once_and_ends(app):
    app.clock.set("2026-12-02T09:05:00Z")          # q1 open (09:00Z to 11:00Z), not started
    r = submit(app, "alice", {"17-08/quiz-1": "A"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "not_started"
    assert api(app, "alice", "GET", "/exercises/17-08/quiz-1").status_code == 409
    r = api(app, "alice", "POST", "/assessments/q1/start")
    assert r.status_code == 201 and r.json()["started_at"] == "2026-12-02T09:05:00Z" and r.json()["new"] is True
    assert r.json()["window"]["ends_at"] == "2026-12-02T09:35:00Z"      # 30 minutes
    app.clock.set("2026-12-02T09:20:00Z")
    again = api(app, "alice", "POST", "/assessments/q1/start")
    assert again.status_code == 200 and again.json()["started_at"] == "2026-12-02T09:05:00Z"
    assert submit(app, "alice", {"17-08/quiz-1": "A"}).status_code == 201
    app.clock.set("2026-12-02T09:35:01Z")          # one second past her 30 minutes
    r = submit(app, "alice", {"17-08/quiz-2": "D"})
    assert r.status_code == 409 and "your time ran out at 2026-12-02 10:35 CET" in r.json()["error"]["message"]
    app.clock.set("2026-12-02T10:45:00Z")          # dave starts 15 minutes before the due date
    r = api(app, "dave", "POST", "/assessments/q1/start")
    assert r.json()["window"]["ends_at"] == "2026-12-02T11:00:00Z"      # the due date, not 11:15Z
    assert api(app, "alice", "POST", "/assessments/hw1/start").status_code == 409      # hw1 is not timed


def test_scores_hidden_until_release_and_after_due(app):
    app.clock.set("2026-12-02T10:00:00Z")
    sub = api(app, "alice", "GET", "/submissions").json()
    quiz = next(s for s in sub if s["answers"] == 1 and s["score"] is None)        # q1: hidden
    one = api(app, "alice", "GET", f"/submissions/{quiz['id']}").json()
    r = one["results"][0]
    assert (r["id"], r["score"], r["correct"], r["status"], r["hidden"]) == ("17-08/quiz-1", None, None, "hidden", True)
    assert "when the staff release them" in r["feedback"] and one["score"] is None
    staff = api(app, "prof", "GET", f"/submissions/{quiz['id']}").json()
    assert staff["results"][0]["score"] == 1                           # the staff see it; it was graded
    grades = api(app, "alice", "GET", "/me/grades").json()
    assert grades["problems"]["17-08/quiz-1"]["status"] == "hidden" and "17-08/quiz-1" in grades["hidden"]
    # shown: hw1's practice-1 (1, best of 64 and 63) and params-formula (2): 3
    assert grades["total"] == 3
    q1 = {a["id"]: a for a in api(app, "alice", "GET", "/assessments").json()}["q1"]
    assert q1["scores_shown"] is False and q1["score"] is None and q1["answered"] == 1

    assert api(app, "alice", "POST", "/assessments/q1/release").status_code == 403
    r = api(app, "prof", "POST", "/assessments/q1/release")
    assert r.status_code == 201 and r.json() == {"assessment": "q1", "released_at": "2026-12-02T10:00:00Z",
                                                 "released_by": "prof"}
    assert api(app, "alice", "GET", f"/submissions/{quiz['id']}").json()["results"][0]["score"] == 1
    q1 = {a["id"]: a for a in api(app, "alice", "GET", "/assessments").json()}["q1"]
    assert (q1["scores_shown"], q1["score"], q1["max_score"]) == (True, 1, 2)

    app.clock.set("2026-12-03T12:00:00Z")          # hw2: after due; its due is 12-04 22:59Z
    r = submit(app, "erin", {"17-08/practice-1.check": 1024})
    assert r.status_code == 201 and r.json()["results"][0]["score"] is None and r.json()["hidden"] == 1
    assert "after the due date, 2026-12-04 23:59 CET" in r.json()["results"][0]["feedback"]
    sid = r.json()["id"]
    app.clock.set("2026-12-04T22:59:00Z")          # exactly at due: answers still on time, not shown yet
    assert api(app, "erin", "GET", f"/submissions/{sid}").json()["results"][0]["score"] is None
    app.clock.set("2026-12-04T22:59:01Z")          # a second after: shown
    assert api(app, "erin", "GET", f"/submissions/{sid}").json()["results"][0]["score"] == 1


def test_assessment_list_and_detail_json(app):
    app.clock.set("2026-12-03T12:00:00Z")
    got = api(app, "alice", "GET", "/assessments").json()
    assert [a["id"] for a in got] == ["hw1", "hw2", "q1", "c1"]
    hw1 = got[0]
    # alice: practice-1 best 1 of 1, params-formula 2 of the bank's 2 -> 4 of hw1's 4: 5 of 5
    assert hw1 == {"id": "hw1", "title": "Homework 1", "description": "Heads and parameters.",
                   "timezone": "Europe/Paris", "opens": "2026-12-01T08:00:00Z", "due": "2026-12-07T22:59:00Z",
                   "late_until": "2026-12-10T22:59:00Z", "opens_local": "2026-12-01 09:00 CET",
                   "due_local": "2026-12-07 23:59 CET", "late_until_local": "2026-12-10 23:59 CET",
                   "late": {"kind": "per_day", "value": 0.1}, "attempts": 2, "show": "immediately",
                   "time_limit_s": None, "window": hw1["window"], "extension": None, "started_at": None,
                   "problems": 2, "answered": 2, "score": 5, "max_score": 5, "scores_shown": True,
                   "hidden_reason": None}
    assert hw1["window"]["state"] == "open" and hw1["window"]["penalty"] == 0
    assert hw1["window"]["closes"] == "2026-12-10T22:59:00Z" and "due in 4 days" in hw1["window"]["message"]
    one = api(app, "alice", "GET", "/assessments/hw1").json()
    assert [(i["id"], i["points"], i["attempts"], i["attempts_used"], i["score"]) for i in one["items"]] == [
        ("17-08/practice-1", 1, 2, 2, 1), ("17-08/params-formula", 4, 2, 1, 4)]
    assert api(app, "alice", "GET", "/assessments/nope").status_code == 404
    spec = TestClient(app).get("/openapi.json").json()
    for path in ("/api/v1/assessments", "/api/v1/assessments/{assessment_id}", "/api/v1/assessments/{assessment_id}/start",
                 "/api/v1/assessments/{assessment_id}/extensions", "/api/v1/assessments/{assessment_id}/release",
                 "/api/v1/assessments/{assessment_id}/gradebook"):
        assert path in spec["paths"], path


def test_assessment_gradebook_json_and_csv(app):
    r = api(app, "alice", "GET", "/assessments/hw1/gradebook")
    assert r.status_code == 403
    b = api(app, "prof", "GET", "/assessments/hw1/gradebook").json()
    assert [p["id"] for p in b["problems"]] == ["17-08/practice-1", "17-08/params-formula"]
    assert [p["points"] for p in b["problems"]] == [1, 4]
    rows = {r["learner"]: r for r in b["rows"]}
    # alice: 1 + 2 × 4/2 = 5; bob: late params-formula 1.6 × 2 = 3.2 (raw 4, penalty 0.8 in hw1's points);
    # carol: practice-1 on her extension: 1; dave: practice-1 exactly at due: 1; erin: nothing
    assert {k: v["total"] for k, v in rows.items()} == {"alice": 5, "bob": 3.2, "carol": 1, "dave": 1, "erin": 0}
    cell = rows["bob"]["problems"]["17-08/params-formula"]
    assert (cell["score"], cell["raw_score"], cell["penalty"], cell["late"], cell["max_score"]) == (3.2, 4, 0.8, True, 4)
    assert rows["alice"]["problems"]["17-08/practice-1"]["attempts"] == 2
    assert rows["alice"]["problems"]["17-08/params-formula"]["late"] is False
    assert rows["carol"]["extension"] is None                      # revoked
    text = api(app, "prof", "GET", "/assessments/hw1/gradebook", params={"format": "csv"}).text
    assert list(csv.reader(io.StringIO(text))) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Homework 1 (hw1)"],
        ["alice", "", "alice", "alice", "", "5"], ["bob", "", "bob", "bob", "", "3.2"],
        ["carol", "", "carol", "carol", "", "1"], ["dave", "", "dave", "dave", "", "1"],
        ["erin", "", "erin", "erin", "", "0"]]
    wide = list(csv.reader(io.StringIO(api(app, "prof", "GET", "/assessments/hw1/gradebook",
                                           params={"format": "csv", "problems": "true"}).text)))
    assert wide[0][5:] == ["Homework 1 (hw1)", f"{_title(app, '17-08/practice-1')} (17-08/practice-1)",
                           f"{_title(app, '17-08/params-formula')} (17-08/params-formula)"]
    assert wide[2][5:] == ["3.2", "", "3.2"]       # bob answered params-formula only


def _title(app, pid: str) -> str:
    return app.state.grader.engine.title(pid)


def signed_in(app, login: str) -> TestClient:
    c = TestClient(app, client=("10.3.0.3", 1), follow_redirects=False)
    csrf = c.get("/learn/login").text.split('name="csrf" value="')[1].split('"')[0]
    assert c.post("/learn/login", data={"token": app.tokens[login], "csrf": csrf}).status_code == 303
    return c


def test_pages_list_assessments_and_the_tab(app):
    app.clock.set("2026-12-03T12:00:00Z")
    c = signed_in(app, "alice")
    home = c.get("/learn").text
    assert "Homework 1" in home and 'datetime="2026-12-07T22:59:00Z"' in home and 'title="2026-12-07 23:59 CET"' in home
    assert "due in 4 days" in home
    assert "/api/v1/" not in home                  # a learner's page links no JSON (it needs a token)
    page = c.get("/learn/assessments/hw1").text
    assert "Homework 1" in page and "17-08/practice-1" in page and "2 of 2" in page
    quiz = c.get("/learn/assessments/q1").text
    assert "Time limit: 30 minutes" in quiz
    # the problems of assessments are on their pages; the home lists only the others
    assert 'href="/learn/exercise/17-08/practice-1"' not in home
    assert 'href="/learn/exercise/17-08/example-2.params"' in home
    staff = signed_in(app, "prof")
    tab = staff.get("/staff/assessments/hw1").text
    assert 'aria-current="page" title="Homework 1 (hw1)"' in tab and "late −0.8" in tab     # bob: 0.4 x 4/2
    assert 'href="/staff/assessments/hw1/gradebook.csv"' in tab
    assert staff.get("/staff/assessments/hw1/gradebook.csv").text.startswith("Student,ID,SIS User ID")
    confirm = staff.get("/staff/regrade").text
    assert "Regrade everything?" in confirm and 'action="/staff/regrade"' in confirm
    assert signed_in(app, "alice").get("/staff/extensions").status_code == 403


def test_cli_grants_and_lists(app):
    env_db = ["--database", app.database, "--exercises", str(app.bank)]
    r = subprocess.run([sys.executable, "-m", "grader", "extensions", "grant", "erin", "hw1", "--until",
                        "2026-12-20T12:00Z", "--reason", "travel", *env_db], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    # 12:00Z is 13:00 in Paris
    assert r.stdout.strip() == "erin: hw1 due 2026-12-20 13:00 CET (2026-12-20T12:00:00Z), was 2026-12-07 23:59 CET"
    r = subprocess.run([sys.executable, "-m", "grader", "extensions", "list", *env_db], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.split()[:3] == ["hw1", "erin", "2026-12-20"] and "travel" in r.stdout
    bad = subprocess.run([sys.executable, "-m", "grader", "extensions", "grant", "erin", "hw9", "--until", "2026-12-20",
                          *env_db], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "no assessment 'hw9'" in bad.stderr and "Traceback" not in bad.stderr


def test_late_partial_says_what_the_penalty_took():
    from grader.web.render import env
    t = env().get_template("_late.html")
    # bob's late answer above: raw 2, 20% off: 0.4 lost, 1.6 counted
    text = " ".join(t.render(result={"score": 1.6, "raw_score": 2, "penalty": 0.4, "late": {"fraction": 0.2}}).split())
    assert "2 before the penalty, 0.4 lost (20 % off), 1.6 counted" in text
    assert t.render(result={"score": 1, "max_score": 1}).strip() == ""
    assert t.render(result={"score": None, "penalty": None, "hidden": True}).strip() == ""


def test_a_late_answer_stored_but_not_graded_keeps_its_penalty_when_recovered(app):
    """Stored as POST /submissions stores a late answer (its window's fraction beside it), then
    the server died before grading it: start-up grades it with that penalty."""
    from sqlalchemy import insert
    from grader.db import Database
    from grader.db.models import Answer, Submission, User, new_id
    from grader.serve import store
    d = Database(app.database)
    sid, aid, at = new_id(), new_id(), utc("2026-12-09T12:00:00Z")
    with d.write() as conn:
        uid = conn.execute(select(User.id).where(User.login == "erin")).scalar_one()
        conn.execute(insert(Submission).values(id=sid, user_id=uid, body_hash="", source="api", status="received",
                                               created_at=at))
        conn.execute(insert(Answer).values(id=aid, submission_id=sid, user_id=uid, problem_id="17-08/practice-1",
                                           position=0, raw=64, created_at=at, assessment_id="hw1",
                                           result={"assessment": "hw1", "late": {"fraction": 0.2}}))
    assert store.recover(app.state.grader) == 1
    with d.read() as conn:
        a = conn.execute(select(Answer.score, Answer.raw_score, Answer.penalty, Answer.assessment_id)
                         .where(Answer.id == aid)).one()
        s = conn.execute(select(Submission.status, Submission.score).where(Submission.id == sid)).one()
    d.dispose()
    # practice-1: 64 is right, 1 point; 20% off: 0.2 lost, 0.8 counted
    assert tuple(a) == (0.8, 1.0, 0.2, "hw1") and tuple(s) == ("graded", 0.8)


def test_a_late_code_file_keeps_the_window_it_was_uploaded_in(app):
    import time
    app.clock.set("2026-12-11T00:00:00Z")          # c1 closed (late until 12-10 22:59Z)
    code = {"file": ("add.py", b"def add(a, b):\n    return a + b\n")}
    r = api(app, "dave", "POST", "/code-submissions", files=code, data={"problem": "17-08/code-add"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "closed"
    app.clock.set("2026-12-08T12:00:00Z")          # late: scores x 0.5
    r = api(app, "dave", "POST", "/code-submissions", files=code, data={"problem": "17-08/code-add"})
    assert r.status_code == 202, r.text
    app.clock.set("2026-12-11T00:00:00Z")          # graded after the window closed: the upload's counts
    deadline = time.monotonic() + 180
    while (job := api(app, "dave", "GET", f"/jobs/{r.json()['id']}").json())["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    # both tests pass: raw 4, half lost: 2 counted
    assert job["status"] == "done" and job["result"]["score"] == 2, job
    sub = api(app, "prof", "GET", f"/submissions/{job['result']['submission_id']}").json()
    assert (sub["results"][0]["raw_score"], sub["results"][0]["penalty"], sub["score"]) == (4, 2, 2)


def test_a_persons_review_is_hidden_with_the_score(app):
    """hw2 shows scores after its due date (12-04 22:59Z): a person's review of erin's answer
    before then reaches her only after it."""
    app.clock.set("2026-12-04T12:00:00Z")
    r = submit(app, "erin", {"17-08/practice-1.check": 1000})          # wrong: 0 of 1
    assert r.status_code == 201
    answer_id = r.json()["results"][0]["answer_id"]
    rv = api(app, "prof", "POST", f"/review/{answer_id}", json={"score": 0.5, "comment": "close"})
    assert rv.status_code == 201 and rv.json()["at"] == "2026-12-04T12:00:00Z"     # the service's clock
    assert [x for x in api(app, "erin", "GET", "/me/reviews").json() if x["answer_id"] == answer_id] == []
    mine = api(app, "erin", "GET", f"/submissions/{r.json()['id']}").json()["results"][0]
    assert "review" not in mine and mine["score"] is None
    # what she is not shown she cannot dispute yet: 409, saying when (the due date, in CET)
    asked = api(app, "erin", "POST", f"/answers/{answer_id}/regrade-request", json={"message": "why 0.5?"})
    assert asked.status_code == 409 and asked.json()["error"]["code"] == "scores_hidden", asked.text
    assert "they are shown after the due date, 2026-12-04 23:59 CET" in asked.json()["error"]["message"]
    app.clock.set("2026-12-04T23:00:00Z")
    seen = [x for x in api(app, "erin", "GET", "/me/reviews").json() if x["answer_id"] == answer_id]
    assert seen[0]["review"]["score"] == 0.5 and seen[0]["review"]["comment"] == "close"
    asked = api(app, "erin", "POST", f"/answers/{answer_id}/regrade-request", json={"message": "why 0.5?"})
    assert asked.status_code == 201, asked.text


def test_the_csv_export_runs_no_learner_text_as_a_formula():
    """A learner's name or login that a spreadsheet would run (=, +, -, @) is written with a
    leading apostrophe in both exports; a plain one as it is."""
    import csv
    import io
    from types import SimpleNamespace
    from grader.serve.assessbook import book_csv
    from grader.serve.gradebook import as_csv
    book = {"assessment": "hw1", "title": "Homework 1", "problems": [{"id": "p", "title": "P"}],
            "rows": [{"name": '=HYPERLINK("http://x","y")', "learner": "@evil", "total": 1, "problems": {}},
                     {"name": "Alice", "learner": "alice", "total": 2, "problems": {}}]}
    rows = list(csv.reader(io.StringIO(book_csv(book))))
    assert rows[1][:4] == ['\'=HYPERLINK("http://x","y")', "", "'@evil", "'@evil"]
    assert rows[2][:4] == ["Alice", "", "alice", "alice"]
    table = [{"learner": "-1+1", "name": "+cmd", "email": "a@b", "problems": {}, "total": 0, "max_total": 1,
              "pending_points": 0}]
    rows = list(csv.reader(io.StringIO(as_csv(table, SimpleNamespace(problems=[])))))
    assert rows[1][:3] == ["'-1+1", "'+cmd", "a@b"]


def test_a_problem_kept_at_0_points_says_why_on_its_page(app):
    """17-08/quiz-4 is worth 0 points on purpose (its note in 04-quiz.yaml says why); it is in
    no assessment of this course, so it is open at any time."""
    c = signed_in(app, "alice")
    page = " ".join(c.get("/learn/exercise/17-08/quiz-4").text.split())
    assert 'id="not-counted"' in page and "Not counted (0 points)." in page
    assert "Defective in the text: the keyed option C is the fragment" in page
    assert 'id="not-counted"' not in c.get("/learn/exercise/17-08/params-formula").text     # worth 2: counts
