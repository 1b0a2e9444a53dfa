""""View as learner" (issue 29), in-process: an instructor sees a learner's home and exercise
pages as the learner does (their answers, their visibility rules: a score not shown before the
due date stays hidden), read only (a banner, forms disabled, every POST refused and nothing
stored), audited; a learner cannot use it; the learner's strings are escaped."""
from __future__ import annotations

import re
import time

import pytest
from fastapi.testclient import TestClient

from serve_helpers import users

BANK = """subject: 17-08
problems:
  - id: 17-08/shown-1
    title: Shown at once
    prompt: "Write 1."
    kind: number
    points: 1
    reference: 1
  - id: 17-08/hidden-2
    title: Shown after due
    prompt: "Write 2."
    kind: number
    points: 1
    reference: 2
"""
COURSE = """assessments:
  - id: now
    title: "Shown now"
    problems: [17-08/shown-1]
    opens: 2020-01-01 00:00
    due: 2099-12-31 23:59
    show: immediately
  - id: later
    title: "Shown later"
    problems: [17-08/hidden-2]
    opens: 2020-01-01 00:00
    due: 2099-12-31 23:59
    show: after_due
"""
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from sqlalchemy import update
    from grader.db import Database
    from grader.db.models import User
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    from grader.web import install
    tmp = tmp_path_factory.mktemp("viewas")
    bank = tmp / "exercises"
    (bank / "17-08").mkdir(parents=True)
    (bank / "17-08" / "items.yaml").write_text(BANK)
    (bank / "assessments.yaml").write_text(COURSE)
    database = f"sqlite:///{tmp / 'grader.db'}"
    tokens = users(database, prof="instructor", other="instructor", ann="learner", ben="learner")
    d = Database(database)
    with d.write() as conn:
        conn.execute(update(User).where(User.login == "ann").values(name=HOSTILE))
    d.dispose()
    settings = Settings(database=database, exercises=str(bank), workers=1, job_workers=1, rate=0,
                        web_secret=b"v" * 32)
    application = create_app(settings, extensions=(install,))
    with TestClient(application, client=("10.5.0.1", 1)) as c:
        for pid, value in (("17-08/shown-1", "1"), ("17-08/hidden-2", "9")):
            r = c.post("/api/v1/submissions", json={"answers": {pid: value}},
                       headers={"Authorization": f"Bearer {tokens['ann']}"})
            assert r.status_code == 201, r.text
        application.tokens = tokens
        yield application


def signed_in(app, who: str) -> TestClient:
    c = TestClient(app, client=("10.5.0.2", 1), follow_redirects=False)
    csrf = csrf_of(c.get("/learn/login").text)
    assert c.post("/learn/login", data={"token": app.tokens[who], "csrf": csrf}).status_code == 303
    return c


def csrf_of(html: str) -> str:
    return html.split('name="csrf" value="')[1].split('"')[0]


def main_of(html: str) -> str:
    """The page's <main>, without the view's banner, the per-page nonce and the session's CSRF value."""
    body = html.split('<main id="main" tabindex="-1">', 1)[1].split("</main>", 1)[0]
    body = re.sub(r'<p class="view-as".*?</p>', "", body, flags=re.S)
    return re.sub(r'name="(nonce|csrf)" value="[^"]*"', "", body)


def answers_of(app, login: str) -> int:
    r = TestClient(app).get("/api/v1/gradebook", headers={"Authorization": f"Bearer {app.tokens['prof']}"})
    row = next(x for x in r.json()["rows"] if x["learner"] == login)
    return sum(c["attempts"] for c in row["problems"].values())


def test_instructor_sees_the_learners_pages_as_the_learner(app):
    prof, ann = signed_in(app, "prof"), signed_in(app, "ann")
    home = prof.get("/staff/learners/ann/view")
    assert home.status_code == 200, home.text
    html = home.text
    assert "Viewing as" in html and "(ann) — read only" in html
    assert "Signed in as prof" in html                                      # the instructor's own session and nav
    assert HOSTILE not in html and "&lt;script&gt;alert(" in html          # the learner's name escaped
    assert 'href="/staff/learners/ann/view/assessments/now"' in html
    assert "sign-out-everywhere" not in html                                 # not the learner's account actions
    mine = ann.get("/learn").text
    assert "Shown now" in mine and "not shown yet" in mine and "not shown yet" in html
    # the exercise pages: the learner's answers and scores, as the learner sees them
    for pid in ("17-08/shown-1", "17-08/hidden-2"):
        viewed = prof.get(f"/staff/learners/ann/view/exercise/{pid}").text
        own = ann.get(f"/learn/exercise/{pid}").text
        assert main_of(viewed).replace("/staff/learners/ann/view", "/learn").replace(
            '<fieldset class="readonly" disabled>', "").replace("</fieldset>", "") == \
            main_of(own).replace("</fieldset>", "").replace("autofocus", "")
        assert '<code class="answer">' in viewed
    shown = prof.get("/staff/learners/ann/view/exercise/17-08/shown-1").text
    assert "1 / 1" in shown
    hidden = prof.get("/staff/learners/ann/view/exercise/17-08/hidden-2").text
    assert "0 / 1" not in hidden and "9" in hidden                           # the wrong answer's score stays hidden
    # an assessment's page: its problems linked under the view, its scores as the learner sees them
    later = prof.get("/staff/learners/ann/view/assessments/later").text
    assert 'href="/staff/learners/ann/view/exercise/17-08/hidden-2"' in later and "not shown yet" in later
    assert main_of(later).replace("/staff/learners/ann/view", "/learn") == main_of(ann.get("/learn/assessments/later").text)
    # read only: every form disabled and aimed at the refusing prefix
    forms = re.findall(r'<form method="post" action="([^"]*)"[^>]*>(.{0,60})', main_of(shown), flags=re.S)
    assert forms and all(a.startswith("/staff/learners/ann/view/") and "disabled" in rest for a, rest in forms)


def test_a_post_in_view_mode_is_refused_and_stores_nothing(app):
    prof = signed_in(app, "prof")
    page = prof.get("/staff/learners/ann/view/exercise/17-08/shown-1").text
    before = answers_of(app, "ann")
    for path in ("/staff/learners/ann/view/exercise/17-08/shown-1", "/staff/learners/ann/view/validate",
                 "/staff/learners/ann/view/assessments/now/start", "/staff/learners/ann/view"):
        r = prof.post(path, data={"csrf": csrf_of(page), "answer": "1", "problem": "17-08/shown-1"})
        assert r.status_code == 403 and "Read only" in r.text, path
    assert answers_of(app, "ann") == before


def test_only_instructors_and_only_learners(app):
    ann = signed_in(app, "ann")
    r = ann.get("/staff/learners/ben/view")
    assert r.status_code == 403 and 'aria-label="main"' in r.text and "course staff" in r.text
    assert ann.get("/staff/learners/ann/view/exercise/17-08/shown-1").status_code == 403
    prof = signed_in(app, "prof")
    assert prof.get("/staff/learners/other/view").status_code == 404         # an instructor is not viewable
    assert prof.get("/staff/learners/nobody/view").status_code == 404
    assert TestClient(app, follow_redirects=False).get("/staff/learners/ann/view").status_code == 303  # sign in


def test_each_view_is_audited(app):
    prof = signed_in(app, "prof")
    assert prof.get("/staff/learners/ben/view").status_code == 200
    headers = {"Authorization": f"Bearer {app.tokens['prof']}"}
    deadline, lines = time.monotonic() + 10, []
    for _ in range(100):            # the audit is written by the database's writer, just after
        lines = TestClient(app).get("/api/v1/audit?action=view_as", headers=headers).json()["entries"]
        if any(x["target"] == "ben" for x in lines) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    got = next(x for x in lines if x["target"] == "ben")
    assert got["actor"] == "prof" and got["detail"] == {"page": "/staff/learners/ben/view"}
