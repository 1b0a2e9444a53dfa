"""Assessments in a real Chromium (issue 29): a learner, keyboard only, answers a homework
before its due date (its score not shown until then), one after it (accepted with its late
penalty) and a timed quiz (start, time left); an instructor sees the assessment's gradebook tab
with the late marker, grants an extension and downloads the CSV. axe on every page.

The server runs on the real clock: the assessments file is written around now (Europe/Paris):
- hw1 "Homework 1" (practice-1, 1 point): due 1.5 days ago, late until in 3 days, 10% a
  started day: an answer now is 2 started days late, 20% off: 1 -> 0.8;
- hw2 "Homework 2" (practice-1.check, 1 point): due in 3 days and 1 hour, shown after due;
- q1 "Quiz 1" (quiz-1, quiz-2): opened an hour ago, due in 2 hours, 30 minutes from the start.
"""
from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timedelta, timezone

import pytest

from serve_helpers import LiveServer, make_bank, users
from web_helpers import axe_violations, sign_in, tab_to, unlabelled_inputs


def _at(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:00Z")


@pytest.fixture(scope="module")
def course_live(tmp_path_factory, browser):
    tmp = tmp_path_factory.mktemp("web-assess")
    bank = make_bank(tmp)
    now = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    d = timedelta(days=1)
    (bank / "assessments.yaml").write_text(f"""course: {{timezone: Europe/Paris}}
assessments:
  - id: hw1
    title: Homework 1
    problems: [17-08/practice-1]
    opens: "{_at(now - 10 * d)}"
    due: "{_at(now - 1.5 * d)}"
    late: {{until: "{_at(now + 3 * d)}", penalty_per_day: 10%}}
  - id: hw2
    title: Homework 2
    problems: [17-08/practice-1.check]
    opens: "{_at(now - d)}"
    due: "{_at(now + 3 * d + timedelta(hours=1))}"
    show: after_due
  - id: q1
    title: Quiz 1
    problems: [17-08/quiz-1, 17-08/quiz-2]
    opens: "{_at(now - timedelta(hours=1))}"
    due: "{_at(now + timedelta(hours=2))}"
    time_limit: 30 min
""")
    db = f"sqlite:///{tmp / 'grader.db'}"
    tokens = users(db, prof="instructor", alice="learner", bob="learner")
    server = LiveServer(db, bank, tmp, "--workers", "1", "--rate", "0").start()
    server.tokens = tokens
    yield server
    server.stop()


def _link(text: str):
    return lambda f: f["tag"] == "A" and f["text"] == text


def _title(bank_problem: str) -> str:
    from grader.api import load_bank
    from serve_helpers import ROOT
    return next(p.title for p in load_bank(ROOT / "exercises" / "17-08").problems if p.id == bank_problem)


def test_learner_homework_before_and_after_due_and_a_timed_quiz(course_live, new_page, shot):
    page = new_page()
    sign_in(page, course_live.url, course_live.tokens["alice"])
    home = page.locator("table.assessments")
    assert home.locator("tbody tr").count() == 3
    hw2 = home.locator("tr", has_text="Homework 2")
    assert hw2.locator("time").inner_text() == "due in 3 days"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d CES?T", hw2.locator("time").get_attribute("title"))
    assert home.locator("tr", has_text="Homework 1").locator("td").nth(1).inner_text().startswith("late")
    shot.viewport(page, "learner-assessments", 1200, 540)           # docs/img/learner-assessments.png
    assert axe_violations(page) == []                                  # the learner's home with assessments

    # homework 2, before its due date: stored, the score not shown yet
    tab_to(page, _link("Homework 2"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/learn/assessments/hw2$"))
    assert axe_violations(page) == []                                  # an assessment's page
    tab_to(page, _link(_title("17-08/practice-1.check")))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/learn/exercise/17-08/practice-1.check$"))
    assert unlabelled_inputs(page) == []
    page.keyboard.type("1024", delay=20)
    tab_to(page, lambda f: f["tag"] == "BUTTON" and f["text"] == "Submit")
    page.keyboard.press("Enter")
    page.wait_for_selector("#result")
    assert "shown after the due date" in page.locator("#result .feedback").inner_text()
    assert page.locator("#result .score").inner_text().startswith(" / 1") or \
        page.locator("#result .score").inner_text().strip().startswith("/ 1")       # no score yet
    assert axe_violations(page) == []

    # homework 1, after its due date: accepted, 20% off (2 started days late): 1 -> 0.8
    page.goto(course_live.url + "/learn")
    tab_to(page, _link("Homework 1"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/learn/assessments/hw1$"))
    assert "late" in page.locator("p.window").inner_text() and "20 %" in page.locator("p.window").inner_text()
    tab_to(page, _link(_title("17-08/practice-1")))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/learn/exercise/17-08/practice-1$"))
    page.keyboard.type("64", delay=20)
    tab_to(page, lambda f: f["tag"] == "BUTTON" and f["text"] == "Submit")
    page.keyboard.press("Enter")
    page.wait_for_selector("#result")
    assert page.locator("#result .score").inner_text() == "0.8 / 1"

    # the timed quiz: its problems are not links until it is started; then the time left
    page.goto(course_live.url + "/learn/assessments/q1")
    assert page.locator("table.exercises tbody a").count() == 0
    tab_to(page, lambda f: f["tag"] == "BUTTON" and f["text"] == "Start the quiz")
    assert axe_violations(page) == []                                  # a timed quiz, not started
    with page.expect_navigation():
        page.keyboard.press("Enter")
    left = page.locator("section.timer").inner_text()
    assert re.search(r"(29|30) minutes left", left), left
    assert page.locator("table.exercises tbody a").count() == 2
    shot(page, "learner-timed-quiz")
    assert axe_violations(page) == []


def test_instructor_tab_extension_and_csv(course_live, new_page, shot, tmp_path):
    page = new_page()
    sign_in(page, course_live.url, course_live.tokens["prof"])
    page.goto(course_live.url + "/staff")
    page.click("nav.tabs >> text=Homework 1")
    page.wait_for_url(re.compile(r".*/staff/assessments/hw1$"))
    row = page.locator("table.gradebook tbody tr", has_text="alice")
    assert "late −0.2" in row.inner_text()                              # 1 raw, 0.2 lost
    assert row.locator("td.sticky-right").inner_text() == "0.8"
    shot(page, "staff-assessment-gradebook")
    assert axe_violations(page) == []                                  # an assessment's gradebook tab

    page.goto(course_live.url + "/staff/extensions")
    assert unlabelled_inputs(page) == []
    page.fill("#ext-learner", "bob")
    page.select_option("#ext-assessment", "hw1")
    page.fill("#ext-due", "2030-01-15T12:00")
    page.fill("#ext-reason", "ill")
    page.click("form.grant button[type=submit]")
    page.wait_for_url(re.compile(r".*/staff/extensions$"))
    got = page.locator("table.extensions tbody tr").first.inner_text()
    assert "bob" in got and "2030-01-15 12:00 CET" in got and "ill" in got
    shot(page, "staff-extensions")
    assert axe_violations(page) == []                                  # the extensions page

    page.goto(course_live.url + "/staff/assessments/hw1")
    assert page.locator("table.gradebook tbody tr", has_text="bob").locator(".mark.ext").count() == 1
    with page.expect_download() as dl:
        page.click("text=Download CSV (Canvas, Moodle)")
    path = tmp_path / "hw1.csv"
    dl.value.save_as(path)
    rows = list(csv.reader(io.StringIO(path.read_text())))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Homework 1 (hw1)"]
    assert ["alice", "", "alice", "alice", "", "0.8"] in rows and ["bob", "", "bob", "bob", "", "0"] in rows
