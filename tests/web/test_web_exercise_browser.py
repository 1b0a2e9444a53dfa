"""The exercise pages in Chromium: a learner, keyboard only, types an answer, presses Enter and
sees the feedback with the answer still in the box; Shift+Enter starts a new line; an answer
the live reading cannot read is not submitted. A code job's result (tests grouped by function,
hidden tests counted, long messages) fits a 1,280 px window. axe: no serious or critical
violation on these pages."""
from __future__ import annotations

import re

import pytest

try:
    from playwright.sync_api import expect
except ImportError:        # the browser fixture skips (or, in CI, fails) with the reason
    expect = None

from serve_helpers import LiveServer, make_bank, users
from web_helpers import axe_violations, sign_in

LONG = "the message of a failed case that goes on " * 40 + "x" * 600     # ~2,300 characters, a 600-char word
LONG_TESTS = f'''import pytest


@pytest.mark.parametrize("n", range(4))
def test_add_many(solution, n):
    assert solution.add(n, 1) == n + 1, {LONG!r}
'''
HIDDEN_TESTS = '''def test_secret_case(solution):
    assert solution.add(10, 10) == 20, "SECRET-HIDDEN-MESSAGE"
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory, browser):
    tmp = tmp_path_factory.mktemp("web-exercise-browser")
    db = f"sqlite:///{tmp / 'grader.db'}"
    tokens = users(db, prof="instructor", erin="learner", fay="learner")
    bank = make_bank(tmp)
    (bank / "17-08" / "add" / "test_add_long.py").write_text(LONG_TESTS)
    (bank / "17-08" / "add" / "test_add_hidden.py").write_text(HIDDEN_TESTS)
    (bank / "17-08" / "add" / "template.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    s = LiveServer(db, bank, tmp, "--workers", "1", "--rate", "0").start()
    s.tokens = tokens
    yield s
    s.stop()


def _reading_settled(page) -> None:
    page.wait_for_function("!document.querySelector('.htmx-request')", timeout=60_000)


def test_keyboard_only_enter_submits_and_the_answer_stays(server, new_page, shot):
    page = new_page()
    sign_in(page, server.url, server.tokens["erin"])
    page.goto(server.url + "/learn/exercise/17-08/example-2.params")
    page.wait_for_function("document.activeElement && document.activeElement.id === 'answer'")
    # Shift+Enter starts a new line (nothing is submitted)
    page.keyboard.type("7864", delay=20)
    page.keyboard.press("Shift+Enter")
    assert page.locator("#answer").input_value() == "7864\n"
    assert "/learn/exercise/17-08/example-2.params" in page.url and page.locator("#result").count() == 0
    page.keyboard.press("Backspace")
    page.keyboard.type("32", delay=20)
    expect(page.locator("#reading .read-as")).to_have_count(1, timeout=60_000)
    _reading_settled(page)
    with page.expect_navigation():
        page.keyboard.press("Enter")                     # Enter submits the one-line answer
    page.wait_for_selector("#result")
    assert page.locator("#answer").input_value() == "786432"          # still in the box, no newline
    assert "W^O" not in page.locator("#result .feedback").inner_text()  # as math, not ASCII
    assert page.locator("#result .feedback math").count() >= 1
    assert page.locator("#result .score").inner_text().startswith("0 / ")
    shot(page, "learner-exercise-keyboard")
    assert axe_violations(page) == []


def test_an_unreadable_answer_is_not_submitted(server, new_page):
    page = new_page()
    sign_in(page, server.url, server.tokens["erin"])
    page.goto(server.url + "/learn/exercise/17-08/params-formula")
    page.wait_for_function("document.activeElement && document.activeElement.id === 'answer'")
    page.keyboard.type("4d(d+1", delay=20)
    expect(page.locator("#reading .parse-error")).to_contain_text("never closed", timeout=60_000)
    _reading_settled(page)
    assert page.locator("form.answer button[type=submit]").get_attribute("aria-disabled") == "true"
    page.keyboard.press("Enter")
    page.wait_for_timeout(500)
    assert page.locator("#result").count() == 0 and page.locator("#submit-error").count() == 0
    assert page.locator("#answer").input_value() == "4d(d+1"
    assert page.evaluate("document.activeElement.id") == "answer"
    assert axe_violations(page) == []
    page.keyboard.type(")", delay=20)                    # mended: readable, submitted by Enter
    expect(page.locator("#reading .read-as")).to_have_count(1, timeout=60_000)
    _reading_settled(page)
    assert page.locator("form.answer button[type=submit]").get_attribute("aria-disabled") == "false"
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("#result")
    assert page.locator("#answer").input_value() == "4d(d+1)"


def test_a_code_result_fits_the_window(server, new_page, tmp_path, shot):
    page = new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    sign_in(page, server.url, server.tokens["fay"])
    page.goto(server.url + "/learn/exercise/17-08/code-add")
    with page.expect_download() as got:
        page.click("p.template a")
    assert got.value.suggested_filename == "template.py"
    sol = tmp_path / "solution.py"
    sol.write_text("def add(a, b):\n    return a - b\n")       # add(n, 1) == n - 1: every visible case fails
    page.set_input_files("#file", str(sol))
    page.click("main form button[type=submit]")
    page.wait_for_url(re.compile(r".*/learn/jobs/[0-9a-f]+$"))
    page.wait_for_selector("#job[data-status=done], #job[data-status=failed]", timeout=180_000)
    assert page.locator("#job").get_attribute("data-status") == "done", page.locator("#job").inner_text()
    # by hand, with add = a - b: test_add (2 - 3 != 5), test_add_negative (-2 - 2 != 0) and the 4 cases
    # of test_add_many (n - 1 != n + 1) fail: 3 groups; the hidden test (10 - 10 != 20) is only counted
    groups = page.locator(".tests-by-function details")
    assert groups.count() == 3
    assert "4 of 4 failed" in page.locator(".tests-by-function").inner_text()
    assert "Hidden tests: 0 of 1 passed" in page.locator(".hidden-tests").inner_text()
    assert "SECRET-HIDDEN-MESSAGE" not in page.content()
    shot(page, "learner-code-result")                    # for docs/web.md: each group collapsed
    for i in range(groups.count()):                      # every detail open: the widest the page gets
        groups.nth(i).locator("summary").click()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280, f"the job page is {width} px wide at a 1,280 px window"
    assert axe_violations(page) == []
    page.goto(server.url + "/learn/exercise/17-08/code-add")
    page.locator("section.attempts summary").click()
    assert page.locator("table.attempts tbody tr").count() == 1
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280, f"the code exercise page is {width} px wide at a 1,280 px window"
    assert "SECRET-HIDDEN-MESSAGE" not in page.content()
    assert axe_violations(page) == []


def test_error_pages_keep_the_navigation_and_pass_axe(server, new_page):
    page = new_page()
    sign_in(page, server.url, server.tokens["erin"])
    r = page.goto(server.url + "/learn/no-such-page")
    assert r.status == 404
    assert page.locator("header nav button", has_text="Sign out").count() == 1
    assert axe_violations(page) == []
    r = page.goto(server.url + "/staff/problems/17-08/params-formula")
    assert r.status == 403
    assert page.locator("header nav .who").count() == 1
    staff = new_page()
    sign_in(staff, server.url, server.tokens["prof"])
    staff.goto(server.url + "/staff/problems/17-08/params-formula")
    assert axe_violations(staff) == []
    staff.goto(server.url + "/staff/learners/erin")
    assert axe_violations(staff) == []
