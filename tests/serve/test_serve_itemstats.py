"""Item statistics (issue 29): ``GET /api/v1/problems/{id}/stats`` (its ``item``),
``GET /api/v1/statistics?assessment=ID`` and ``/staff/statistics``, on a tiny class whose
figures are derived by hand below. In-process, SQLite.

Three 1-point number items in one assessment ``a1`` (right: 1, 2, 3; "9" is wrong), five
learners; the best attempt counts:

    learner  attempts (in order)                     best: i1 i2 i3
    ann      i1 right; i2 right; i3 right                   1  1  1
    ben      i1 wrong, right; i2 right; i3 wrong            1  1  0
    cat      i1 wrong, wrong, right; i2 wrong; i3 wrong     1  0  0
    dan      i1 wrong; i2 wrong; i3 wrong, right            0  0  1
    eve      nothing (in no population)

Mean fraction: i1 3/4 = 0.75, i2 2/4 = 0.5, i3 2/4 = 0.5.

Discrimination = Pearson r of (x = item score, y = total on the two other items), n = 4:
- i1: x = (1,1,1,0), y = i2+i3 = (2,1,0,1); means 0.75, 1; dx = (.25,.25,.25,-.75),
  dy = (1,0,-1,0): Sxy = .25 - .25 = 0  ->  r = 0.
- i2: x = (1,1,0,0), y = i1+i3 = (2,1,1,1); means .5, 1.25; dx = (.5,.5,-.5,-.5),
  dy = (.75,-.25,-.25,-.25): Sxy = .375 - .125 + .125 + .125 = .5, Sxx = 1,
  Syy = .5625 + 3 x .0625 = .75  ->  r = .5 / sqrt(.75) = 0.57735 -> 0.5774.
- i3: x = (1,0,0,1), y = i1+i2 = (2,2,1,0); means .5, 1.25; dx = (.5,-.5,-.5,.5),
  dy = (.75,.75,-.25,-1.25): Sxy = .375 - .375 + .125 - .625 = -.5, Sxx = 1,
  Syy = .5625 + .5625 + .0625 + 1.5625 = 2.75  ->  r = -.5 / sqrt(2.75) = -0.30151 -> -0.3015.

Attempts to the first right answer: i1: ann 1, ben 2, cat 3 -> mean 2, median 2, never 1 (dan);
i2: ann 1, ben 1 -> mean 1, median 1, never 2; i3: ann 1, dan 2 -> mean 1.5, median 1.5, never 2.
"""
from __future__ import annotations

import math

import pytest
from fastapi.testclient import TestClient

from serve_helpers import users

BANK = """subject: 17-08
problems:
  - id: 17-08/item-1
    title: "First <item> & co"
    prompt: "Write 1."
    kind: number
    points: 1
    reference: 1
  - id: 17-08/item-2
    title: Second item
    prompt: "Write 2."
    kind: number
    points: 1
    reference: 2
  - id: 17-08/item-3
    title: Third item
    prompt: "Write 3."
    kind: number
    points: 1
    reference: 3
  - id: 17-08/loose
    title: Not in the assessment
    prompt: "Write 5."
    kind: number
    points: 1
    reference: 5
"""
COURSE = """assessments:
  - id: a1
    title: "Assessment one"
    problems: [17-08/item-1, 17-08/item-2, 17-08/item-3]
    opens: 2020-01-01 00:00
    due: 2099-12-31 23:59
"""
P1, P2, P3 = "17-08/item-1", "17-08/item-2", "17-08/item-3"
PLAN = {           # learner: the answers, one submission each, in this order
    "ann": [(P1, 1), (P2, 2), (P3, 3)],
    "ben": [(P1, 9), (P1, 1), (P2, 2), (P3, 9)],
    "cat": [(P1, 9), (P1, 9), (P1, 1), (P2, 9), (P3, 9)],
    "dan": [(P1, 9), (P2, 9), (P3, 9), (P3, 3)],
}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    from grader.web import install
    tmp = tmp_path_factory.mktemp("itemstats")
    bank = tmp / "exercises"
    (bank / "17-08").mkdir(parents=True)
    (bank / "17-08" / "items.yaml").write_text(BANK)
    (bank / "assessments.yaml").write_text(COURSE)
    database = f"sqlite:///{tmp / 'grader.db'}"
    tokens = users(database, prof="instructor", ann="learner", ben="learner", cat="learner", dan="learner",
                   eve="learner")
    settings = Settings(database=database, exercises=str(bank), workers=1, job_workers=1, rate=0,
                        web_secret=b"i" * 32)
    application = create_app(settings, extensions=(install,))
    with TestClient(application, client=("10.4.0.1", 1)) as c:
        for who, answers in PLAN.items():
            for pid, value in answers:
                r = c.post("/api/v1/submissions", json={"answers": {pid: value}},
                           headers={"Authorization": f"Bearer {tokens[who]}"})
                assert r.status_code == 201, r.text
        application.tokens = tokens
        yield application


def get(app, who: str, path: str):
    return TestClient(app, client=("10.4.0.2", 1)).get(
        "/api/v1" + path, headers={"Authorization": f"Bearer {app.tokens[who]}"})


def test_statistics_of_the_assessment_by_hand(app):
    r = get(app, "prof", "/statistics?assessment=a1")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["assessment"] == "a1" and body["policy"] == "best"
    rows = {x["problem"]: x for x in body["problems"]}
    assert list(rows) == [P1, P2, P3]
    assert rows[P1]["title"] == "First <item> & co" and rows[P1]["points"] == 1
    assert [rows[p]["learners"] for p in (P1, P2, P3)] == [4, 4, 4]
    assert [rows[p]["mean_fraction"] for p in (P1, P2, P3)] == [0.75, 0.5, 0.5]
    assert [rows[p]["discrimination"] for p in (P1, P2, P3)] == [0.0, 0.5774, -0.3015]
    assert all(rows[p]["group"] == "a1" for p in rows)
    assert rows[P1]["attempts_to_correct"] == {"learners": 3, "never": 1, "waiting": 0, "mean": 2, "median": 2}
    assert rows[P2]["attempts_to_correct"] == {"learners": 2, "never": 2, "waiting": 0, "mean": 1, "median": 1}
    assert rows[P3]["attempts_to_correct"] == {"learners": 2, "never": 2, "waiting": 0, "mean": 1.5, "median": 1.5}


def test_problem_stats_carry_the_item_figures(app):
    body = get(app, "prof", "/problems/17-08/item-3/stats").json()
    assert body["item"] == {"learners": 4, "mean_fraction": 0.5, "discrimination": -0.3015, "group": "a1",
                            "attempts_to_correct": {"learners": 2, "never": 2, "waiting": 0, "mean": 1.5, "median": 1.5}}
    assert body["correct"] == 2 and body["learners"] == 4          # the existing figures stay
    # a problem nobody answered: no figures, no error
    loose = get(app, "prof", "/problems/17-08/loose/stats").json()["item"]
    assert loose == {"learners": 0, "mean_fraction": None, "discrimination": None, "group": None,
                     "attempts_to_correct": {"learners": 0, "never": 0, "waiting": 0, "mean": None, "median": None}}


def test_whole_bank_and_errors(app):
    rows = {x["problem"]: x for x in get(app, "prof", "/statistics").json()["problems"]}
    assert set(rows) == {P1, P2, P3, "17-08/loose"} and rows[P1]["group"] == "a1"
    r = get(app, "prof", "/statistics?assessment=nope")
    assert r.status_code == 404 and "assessment" in r.json()["error"]["message"]
    assert get(app, "ann", "/statistics").status_code == 403         # instructors only
    assert get(app, "ann", "/problems/17-08/item-1/stats").status_code == 403


def test_openapi_documents_the_models(app):
    spec = TestClient(app).get("/openapi.json").json()
    ref = spec["paths"]["/api/v1/statistics"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ref["$ref"].endswith("/Statistics")
    row = spec["components"]["schemas"]["StatisticsRow"]["properties"]
    assert {"discrimination", "mean_fraction", "attempts_to_correct", "title", "learners"} <= set(row)
    stats = spec["paths"]["/api/v1/problems/{problem_id}/stats"]["get"]["responses"]["200"]["content"]
    assert stats["application/json"]["schema"]["$ref"].endswith("/ProblemStats")


def test_pearson_edges():
    from grader.serve.itemstats import pearson
    assert pearson([1, 0], [2, 0]) is None                     # fewer than 3 learners
    assert pearson([1, 1, 1], [0, 1, 2]) is None               # everybody equal on the item
    assert math.isclose(pearson([0, 1, 2], [0, 2, 4]), 1.0)
    assert math.isclose(pearson([0, 1, 2], [4, 2, 0]), -1.0)


def _signed_in(app, who: str) -> TestClient:
    c = TestClient(app, client=("10.4.0.3", 1), follow_redirects=False)
    csrf = c.get("/learn/login").text.split('name="csrf" value="')[1].split('"')[0]
    assert c.post("/learn/login", data={"token": app.tokens[who], "csrf": csrf}).status_code == 303
    return c


def test_staff_statistics_page_sorted_with_links(app):
    c = _signed_in(app, "prof")
    html = c.get("/staff/statistics?assessment=a1&sort=discrimination&order=desc").text
    # rows in descending discrimination: item-2 (0.58), item-1 (0.00), item-3 (-0.30)
    at = [html.index(f'href="/staff/problems/{p}"') for p in (P2, P1, P3)]
    assert at == sorted(at)
    assert "First &lt;item&gt; &amp; co" in html and "<item>" not in html          # titles escaped
    assert 'aria-sort="descending"' in html and "0.58" in html and "-0.30" in html
    assert 'aria-current="page"' in html and "Assessment one" in html
    page = c.get("/staff/problems/17-08/item-1").text
    assert "Item statistics" in page and "0.75 of the points" in page and "mean 2, median 2" in page
    r = _signed_in(app, "ann").get("/staff/statistics")
    assert r.status_code == 403 and 'aria-label="main"' in r.text         # a learner: 403, navigation kept


def test_attempts_to_correct_with_reviews_and_waiting_answers():
    from types import SimpleNamespace as A
    from grader.serve.itemstats import attempts_to_correct
    tries = [   # a 2-point free-text problem, in order
        A(id="a1", user_id=1, status="partial", pending_points=0),      # 1: reviewed 2/2 below -> right at 1
        A(id="b1", user_id=2, status=None, pending_points=2),           # 2: waiting for a person -> waiting
        A(id="c1", user_id=3, status="wrong", pending_points=0),        # 3: wrong, then a review of 1/2 (not
        A(id="c2", user_id=3, status="partial", pending_points=0),      #    full points): never
        A(id="d1", user_id=4, status="wrong", pending_points=0),        # 4: right at the 3rd attempt
        A(id="d2", user_id=4, status="wrong", pending_points=0),
        A(id="d3", user_id=4, status="correct", pending_points=0),
    ]
    reviews = {"a1": {"score": 2}, "c2": {"score": 1}}
    # right: learner 1 at 1, learner 4 at 3 -> mean 2, median 2; never: learner 3; waiting: learner 2
    assert attempts_to_correct(tries, reviews, 2.0) == {"learners": 2, "never": 1, "waiting": 1, "mean": 2,
                                                        "median": 2}
