"""axe-core on EVERY page of the service (issue 29: "no serious or critical violation on every
page"), in Chromium, on the demo class (`grader demo seed`, 6 learners, the example course). The service
is the application `grader serve --course docs/examples/course.yaml` makes, under uvicorn on
127.0.0.1, run in this process so that its assessments' clock is fixed (NOW, in the class's
term): the pages then show open, late, closed and not-yet-open assessments whatever today's date.

The list of pages comes from the application itself: every GET route under /learn, /staff and
/spec, less the CSV exports, the htmx status fragments and the template download (not pages).
Each one is either visited below (as the instructor or as a learner) or named in EXCLUDED with
the reason: a new page with neither makes ``test_every_page_route_is_checked`` fail.
"""
from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from serve_helpers import free_port
from web_helpers import axe_violations, sign_in

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "docs" / "examples" / "course.yaml"
LEARNERS = 6
# the clock of the assessments' windows, as the demo's events are on it: hw1 is late (due Dec 7,
# late until Dec 10), quiz1 is over (after due: scores shown), formulas and code1 are open, hw3
# has not opened (docs/examples/course.yaml, Europe/Paris)
NOW = datetime(2026, 12, 9, 12, 0, tzinfo=timezone.utc)
LEARNER = 1          # daniel.li with --seed 17: a reviewed free-text answer and an open regrade request
NUMBER, FREE_TEXT, CODE, FORMULA = ("17-08/example-1.d_k", "17-08/practice-2", "17-08/code-mha",
                                    "17-08/params-formula")

# Page routes not visited, each with its reason.
EXCLUDED = {
    # a learner's code job: the demo course's one code exercise (17-08/code-mha) runs torch tests
    # (tens of seconds of CPU after the page is shown); the page is checked queued and done by
    # test_web_learner.py::test_code_upload_queued_to_done (a small code exercise, no torch)
    "/learn/jobs/{job_id}",
}


def _routes(routes, prefix: str = ""):
    """(path, methods) of every route, through the routers included (FastAPI >= 0.165 keeps them
    as ``_IncludedRouter`` entries of ``app.routes``)."""
    for rt in routes:
        inner = getattr(rt, "original_router", None)
        if inner is not None:
            yield from _routes(inner.routes, prefix + rt.include_context.prefix)
        elif getattr(rt, "methods", None):
            yield prefix + rt.path, rt.methods


class _Server:
    """The service's application (as `grader serve --course` makes it, with the example course and
    the clock at NOW) under uvicorn on 127.0.0.1, in a thread of this process."""

    def __init__(self, app) -> None:
        import uvicorn
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                                    lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, name="every-page-server", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 120
        while not self.server.started:
            assert self.thread.is_alive(), "the server's thread ended before it started"
            assert time.monotonic() < deadline, "the server did not start in 120 s"
            time.sleep(0.1)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=60)


def _is_page(path: str) -> bool:
    if not path.startswith(("/learn", "/staff", "/spec")):
        return False
    return not (path.endswith((".csv", "/status")) or path.startswith("/learn/template/"))


@pytest.fixture(scope="module")
def demo(tmp_path_factory, browser):
    """The demo class in a throwaway SQLite database, served on 127.0.0.1 with the example course;
    a token for one of its learners; the application's page routes."""
    tmp = tmp_path_factory.mktemp("every-page")
    r = subprocess.run([sys.executable, "-m", "grader", "demo", "seed", "--database", "demo.db",
                        "--learners", str(LEARNERS), "--seed", "17", "--course", str(COURSE)],
                       capture_output=True, text=True, timeout=600, cwd=tmp, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    prof = r.stdout.split("instructor token: ")[1].split()[0]
    database = f"sqlite:///{tmp / 'demo.db'}"

    from sqlalchemy import select
    from grader.db import Database
    from grader.db.models import User
    from grader.serve.accounts import new_token_for
    db = Database(database)
    try:
        with db.read() as conn:
            logins = list(conn.execute(select(User.login).where(User.role == "learner").order_by(User.id)).scalars())
        learner = logins[LEARNER]
        learner_token = new_token_for(db, learner).token
    finally:
        db.dispose()

    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    from grader.web import install
    app = create_app(Settings(database=database, course=str(COURSE), workers=1, job_workers=1, rate=0,
                              web_secret=b"e" * 32, now=lambda: NOW), extensions=(install,))
    # /spec's first visit would start `grader check-spec` (torch, minutes) in a process this test
    # could not end: its report is set here as one already started, so /spec shows its waiting page
    from grader.web.spec import SpecReport
    app.state.spec_report = SpecReport(None)
    app.state.spec_report._thread = threading.Thread(target=lambda: None)     # "started": start() does nothing
    routes = {path for path, methods in _routes(app.routes) if "GET" in methods and _is_page(path)}
    server = _Server(app)
    server.prof, server.learner, server.learner_token, server.routes = prof, learner, learner_token, routes
    try:
        yield server
    finally:
        server.stop()


def _assessments(page) -> list[str]:
    """The assessment ids linked from the page (in order, once each)."""
    hrefs = page.eval_on_selector_all("a[href*='/assessments/']", "es => es.map(e => e.getAttribute('href'))")
    ids = [re.split(r"/assessments/", h)[1].split("?")[0].split("#")[0] for h in hrefs]
    return list(dict.fromkeys(ids))


def _check(page, url: str, visited: dict, route: str, status: int | None = 200) -> None:
    response = page.goto(url)
    assert response is not None
    if status is not None:
        assert response.status == status, f"{url}: HTTP {response.status}"
    assert axe_violations(page) == [], f"axe on {url} (route {route})"
    visited.setdefault(route, []).append(url)


VISITED: dict[str, list[str]] = {}


def test_learner_pages(demo, new_page):
    page = new_page()
    sign_in(page, demo.url, demo.learner_token)
    _check(page, demo.url + "/learn/login", VISITED, "/learn/login")      # signed in: the form still shows
    _check(page, demo.url + "/learn", VISITED, "/learn")
    ids = _assessments(page)
    assert {"hw1", "quiz1", "formulas", "code1", "hw3"} <= set(ids), ids
    for a in ids:
        _check(page, f"{demo.url}/learn/assessments/{a}", VISITED, "/learn/assessments/{assessment_id}")
    for pid in (NUMBER, FREE_TEXT, CODE, FORMULA):
        _check(page, f"{demo.url}/learn/exercise/{pid}", VISITED, "/learn/exercise/{problem_id:path}")
    _check(page, demo.url + "/learn/exercise/17-08/no-such-problem", VISITED, "404", status=404)
    _check(page, demo.url + "/staff", VISITED, "403", status=403)
    # signed out: the sign-in page as a newcomer sees it
    page.context.clear_cookies()
    _check(page, demo.url + "/learn/login", VISITED, "/learn/login")


def test_staff_pages(demo, new_page, tmp_path):
    page = new_page()
    sign_in(page, demo.url, demo.prof)
    u, who = demo.url, demo.learner
    for route in ("/staff", "/staff/audit", "/staff/batch", "/staff/extensions", "/staff/lti", "/staff/regrade",
                  "/staff/review", "/staff/statistics"):
        _check(page, u + route, VISITED, route)
    page.goto(u + "/staff")
    ids = _assessments(page)
    assert {"hw1", "quiz1", "formulas", "code1", "hw3"} <= set(ids), ids
    for a in ids:
        _check(page, f"{u}/staff/assessments/{a}", VISITED, "/staff/assessments/{assessment_id}")
    for pid in (NUMBER, FREE_TEXT, CODE, FORMULA):
        _check(page, f"{u}/staff/problems/{pid}", VISITED, "/staff/problems/{problem_id:path}")
    _check(page, f"{u}/staff/learners/{who}", VISITED, "/staff/learners/{login}")
    _check(page, f"{u}/staff/learners/{who}/view", VISITED, "/staff/learners/{login}/view")
    _check(page, f"{u}/staff/learners/{who}/view/assessments/hw1", VISITED,
           "/staff/learners/{login}/view/assessments/{assessment_id}")
    for pid in (NUMBER, FREE_TEXT, CODE):
        _check(page, f"{u}/staff/learners/{who}/view/exercise/{pid}", VISITED,
               "/staff/learners/{login}/view/exercise/{problem_id:path}")
    _check(page, f"{u}/staff/learners/no-such-login", VISITED, "404", status=404)
    # a job: a batch of one submission uploaded through /staff/batch, its page once done
    batch = tmp_path / "batch.yaml"
    batch.write_text(f"submissions:\n  - {{learner: {who}, answers: {{{NUMBER}: 64}}}}\n")
    page.goto(u + "/staff/batch")
    page.set_input_files("#file", str(batch))
    page.click("main form button[type=submit]")
    page.wait_for_url(re.compile(r".*/staff/jobs/[0-9a-f]+$"))
    page.wait_for_selector("#job[data-status=done]", timeout=120_000)
    assert "1 submission" in page.locator("#job").inner_text()
    assert axe_violations(page) == [], f"axe on {page.url} (route /staff/jobs/{{job_id}})"
    VISITED.setdefault("/staff/jobs/{job_id}", []).append(page.url)
    # /spec: the page that waits for the check (see the fixture); the report itself is
    # `grader check-spec --format html`'s own document, served as it is
    _check(page, u + "/spec", VISITED, "/spec")


def test_every_page_route_is_checked(demo):
    """Every GET page route of the app was visited above (with no axe violation) or is excluded with a reason."""
    assert "/learn" in demo.routes and "/staff/review" in demo.routes          # the list is the app's
    missing = sorted(demo.routes - set(VISITED) - EXCLUDED)
    assert not missing, (f"page routes with no axe check: {missing} (visit them in this module or exclude them; "
                         "run the module whole: the two tests above record the visits)")
    assert not EXCLUDED - demo.routes, f"excluded but no longer routes: {sorted(EXCLUDED - demo.routes)}"
