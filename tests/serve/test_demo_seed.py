"""`grader demo seed`: a demo class played through the service (issue 29).

The counts, by hand from the rules of grader/serve/demo_class.py for 30 learners (i = 0..29):
- hw1: everyone submits once (30); i % 3 == 0 once more (0, 3, ..., 27: 10) -> 40 submissions;
  late: i % 6 == 5 (5, 11, 17, 23, 29) -> 5; learner 4 has an extension (+2 days) and is not late.
- quiz1: everyone but i % 15 == 14 (14, 29) -> 28 started, 28 submissions, none late (no late policy).
- formulas: everyone but i % 10 == 9 (9, 19, 29) -> 27; late: i % 5 == 2 (2, 7, 12, 17, 22, 27;
  none of them absent) -> 6, each losing half its raw score (multiplier 0.5); learner 13 has an
  extension (+3 days).
- free text (hw1's practice-2 and -3 by all 30, practice-5 by even i: 15) -> 75; reviewed: the
  practice-2 answers of learners 0..9 -> 10; waiting 65; learner 1 asks for a regrade of its review -> 1 open.
- submissions: 40 + 28 + 27 = 95.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

LEARNERS = 30
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("demo")
    database = f"sqlite:///{tmp / 'demo.db'}"
    r = subprocess.run([sys.executable, "-m", "grader", "demo", "seed", "--database", "demo.db",     # as the README
                        "--learners", str(LEARNERS), "--seed", "17"], capture_output=True, text=True, timeout=600,
                       cwd=tmp)
    assert r.returncode == 0, r.stderr[-3000:]
    return database, r.stdout, tmp


@pytest.fixture(scope="module")
def app(seeded):
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    database, out, _ = seeded
    token = out.split("instructor token: ")[1].split()[0]
    from grader.web import install
    application = create_app(Settings(database=database, course=str(ROOT / "docs" / "examples" / "course.yaml"),
                                      workers=1, job_workers=1, rate=0, web_secret=b"d" * 32), extensions=(install,))
    with TestClient(application) as c:
        c.headers["Authorization"] = f"Bearer {token}"
        c.token = token
        yield c


def test_the_command_says_what_it_made_and_how_to_serve_it(seeded):
    _, out, _ = seeded
    lines = out.splitlines()
    assert re.fullmatch(r"seeded sqlite:///demo.db: 1 instructor \(prof\), 30 learners, 95 submissions "
                        r"\(\d+ answers\)", lines[0]), lines[0]
    assert lines[1:4] == ["  hw1: 40 submissions, 5 late", "  quiz1: 28 submissions, 0 late",
                          "  formulas: 27 submissions, 6 late"]
    assert lines[4].startswith("  timed quiz started by 28; extensions: hw1:") and ", formulas:" in lines[4]
    assert lines[5] == "  free text: 75 answers, 10 reviewed, 65 waiting for review; regrade requests open: 1"
    assert re.fullmatch(r"instructor token: grd_[A-Za-z0-9_-]{43}", lines[6])
    # run from another folder: the example course by its full path
    assert lines[7] == f"serve it: grader serve --database demo.db --course {ROOT / 'docs' / 'examples' / 'course.yaml'}"
    assert len(lines) == 9


def test_the_readme_shows_the_real_output(seeded):
    """The README's block: its lines are the command's, "…" any text, the token by its form."""
    _, out, _ = seeded
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    marker = "<!-- docs-output: tested (tests/serve/test_demo_seed.py::test_the_readme_shows_the_real_output) -->"
    block = text.split(marker)[1].split("```console\n")[1].split("```")[0].splitlines()
    assert block[0].startswith("$ grader demo seed --database demo.db ")
    shown = block[1:]
    real = out.splitlines()
    assert len(shown) == len(real)
    for doc, line in zip(shown, real):
        parts = [re.escape(x).replace(re.escape("…"), ".*") for x in re.split(r"grd_[A-Za-z0-9_-]{43}", doc)]
        pattern = r"grd_[A-Za-z0-9_-]{43}".join(parts)
        assert re.fullmatch(pattern, line), (doc, line)


def test_a_second_run_is_refused_in_one_line(seeded):
    _, _, tmp = seeded
    r = subprocess.run([sys.executable, "-m", "grader", "demo", "seed", "--database", "demo.db"],
                       capture_output=True, text=True, timeout=300, cwd=tmp)
    # 1 instructor + 30 learners
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "error: sqlite:///demo.db already has data (31 accounts); the demo seeds only a new, empty database "
        "(give another --database)"], r.stderr


def test_the_homework_gradebook_has_the_class_its_late_answers_and_the_extension(app):
    from grader.serve.demo_class import learners
    people = learners(LEARNERS, 17)
    book = app.get("/api/v1/assessments/hw1/gradebook").json()
    rows = {r["learner"]: r for r in book["rows"]}
    assert set(rows) == {p.login for p in people}
    late = {r["learner"] for r in book["rows"] if any(c.get("late") for c in r["problems"].values())}
    assert late == {people[i].login for i in (5, 11, 17, 23, 29)}
    assert [r["learner"] for r in book["rows"] if r["extension"]] == [people[4].login]
    # a late cell: 10 % per started day, 1 to 3 days late -> 10 % to 30 % of its raw score lost
    for r in book["rows"]:
        for c in r["problems"].values():
            if c.get("late") and c["raw_score"]:
                assert round(c["penalty"] / c["raw_score"], 6) in (0.1, 0.2, 0.3)


def test_the_formulas_gradebook_halves_late_answers(app):
    from grader.serve.demo_class import learners
    people = learners(LEARNERS, 17)
    book = app.get("/api/v1/assessments/formulas/gradebook").json()
    answered = {r["learner"] for r in book["rows"] if r["problems"]}
    assert answered == {p.login for p in people if p.index % 10 != 9}
    late = {r["learner"] for r in book["rows"] if any(c.get("late") for c in r["problems"].values())}
    assert late == {people[i].login for i in (2, 7, 12, 17, 22, 27)}
    halves = [(c["penalty"], c["raw_score"]) for r in book["rows"] for c in r["problems"].values() if c.get("late")]
    assert halves and all(p == raw / 2 for p, raw in halves)
    assert [r["learner"] for r in book["rows"] if r["extension"]] == [people[13].login]


def test_wrong_answers_are_the_bank_s_mistakes_and_the_reviews_are_there(app):
    from grader.api import load_bank
    p = next(x for x in load_bank().problems if x.id == "17-08/practice-1")
    stats = app.get("/api/v1/problems/17-08/practice-1/stats").json()
    wrong = [str(x) for g in stats["common_wrong"] for x in g["examples"]]
    assert wrong and set(wrong) <= {str(m.answer) for m in p.mistakes}          # 16384 and 1024
    queue = app.get("/api/v1/review", params={"include_reviewed": "true"}).json()
    assert len(queue) == 75
    waiting = app.get("/api/v1/review").json()
    assert len(waiting) == 65 + 1               # never reviewed, and the reviewed one with an open regrade request
    asked = [(q["learner"], q["problem"], q["regrade"]["status"]) for q in queue if q.get("regrade")]
    from grader.serve.demo_class import learners
    assert asked == [(learners(LEARNERS, 17)[1].login, "17-08/practice-2", "open")]


def test_the_same_seed_plays_the_same_class_and_another_seed_another():
    from grader.api import load_bank, load_course
    from grader.serve import demo_class
    bank = load_bank()
    course, problems = load_course(bank, ROOT / "docs" / "examples" / "course.yaml"), {p.id: p for p in bank.problems}

    def play(seed):
        return demo_class.plan(course, problems, demo_class.learners(LEARNERS, seed), seed, "prof")
    assert play(17) == play(17)
    assert play(17) != play(18)
    assert demo_class.learners(LEARNERS, 17) != demo_class.learners(LEARNERS, 18)


def test_learners_out_of_range_are_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "grader", "demo", "seed", "--database", str(tmp_path / "x.db"),
                        "--learners", "0"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--learners" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x.db").exists()


def test_the_staff_pages_show_the_class(app):
    from grader.serve.demo_class import learners
    people = learners(LEARNERS, 17)
    page = TestClient(app.app)
    form = page.get("/learn/login").text
    csrf = form.split('name="csrf" value="')[1].split('"')[0]
    r = page.post("/learn/login", data={"token": app.token, "csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303, r.text
    for path in ("/staff", "/staff/assessments/hw1", "/staff/assessments/quiz1", "/staff/assessments/formulas",
                 "/staff/extensions", "/staff/review", "/staff/problems/17-08/practice-1",
                 f"/staff/learners/{people[0].login}"):
        r = page.get(path)
        assert r.status_code == 200, (path, r.text[:500])
    book = page.get("/staff/assessments/hw1").text
    assert all(p.login in book for p in people) and book.count('class="mark late"') >= 1 + 5     # the legend, then 5 late learners
    assert people[4].login in page.get("/staff/extensions").text
    review = page.get("/staff/review").text
    assert "17-08/practice-3" in review            # free text waiting for a person


def test_a_database_url_of_no_known_kind_is_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "grader", "demo", "seed", "--database", "foo://u:secret@host/db"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines() == ["error: foo://u:***@host/db: no database of that kind (foo); use a "
                                             "SQLite file or postgresql+psycopg://user@host/db"]


def test_a_refused_step_stops_the_seed_and_says_the_database_is_partial(tmp_path, monkeypatch):
    # one event only: a submission to hw1 a day before it opens (the service answers 409)
    from datetime import timedelta

    from grader.errors import GraderError
    from grader.serve import demo, demo_class

    def one_early(course, problems, people, seed, instructor):
        a = course.get("hw1")
        return [demo_class.Event(a.opens - timedelta(days=1), "submit", people[0].login, "hw1",
                                 {"17-08/practice-1": 64})]
    monkeypatch.setattr(demo_class, "plan", one_early)
    with pytest.raises(GraderError) as e:
        demo.seed(f"sqlite:///{tmp_path / 'd.db'}", learners=2, workers=1)
    assert "POST /api/v1/submissions was answered 409" in e.value.message
    assert e.value.message.endswith(f"sqlite:///{tmp_path / 'd.db'} is seeded in part: delete it before seeding again")


def test_on_postgresql_too_and_refused_the_second_time(postgres, tmp_path):
    # 3 learners (i = 0, 1, 2): hw1 3 + 1 second attempt (learner 0) = 4, none late (i % 6 == 5 needs i = 5);
    # quiz1 3; formulas 3, one late (i = 2); free text 3 + 3 + 2 (practice-5: even i = 0, 2) = 8, 3 reviewed
    from grader.errors import GraderError
    from grader.serve import demo
    url = postgres.new_database()
    made = demo.seed(url, learners=3, workers=1)
    assert (made.learners, made.submissions, made.starts, made.free_text, made.reviewed, made.regrade_requests) \
        == (3, 10, 3, 8, 3, 1)
    assert dict(made.by_assessment) == {"hw1": 4, "quiz1": 3, "formulas": 3}
    assert dict(made.late) == {"formulas": 1}
    with pytest.raises(GraderError) as e:
        demo.seed(url, learners=3, workers=1)
    assert "already has data (4 accounts)" in e.value.message


def test_the_seed_runs_from_a_thread_whose_event_loop_is_running(tmp_path):
    """Called where an event loop already runs (a notebook; pytest after Playwright's sync API),
    the seed still plays the class (asyncio.run alone refuses there)."""
    import asyncio
    import threading
    from grader.serve import demo
    got = {}

    async def inside():                 # a coroutine: its loop is running when it calls seed()
        return demo.seed(f"sqlite:///{tmp_path / 'd.db'}", learners=1, workers=1)

    def in_a_thread():                  # a thread of the test's own (this one may already have a loop)
        try:
            got["made"] = asyncio.run(inside())
        except BaseException as e:
            got["error"] = e
    t = threading.Thread(target=in_a_thread)
    t.start()
    t.join(timeout=300)
    assert "error" not in got, got.get("error")
    assert got["made"].learners == 1 and got["made"].submissions > 0
