"""The learner's flow in a real Chromium, keyboard only: sign in, type an answer and watch its
reading change, submit, see score and feedback; a wrong answer's misconception; a code
upload from queued to done with each test's result."""
from __future__ import annotations

import re

import yaml

from grader.api import load_bank

try:
    from playwright.sync_api import expect
except ImportError:        # the browser fixture skips (or, in CI, fails) with the reason
    expect = None

from web_helpers import ROOT
from web_helpers import axe_violations, sign_in, tab_to, unlabelled_inputs

BANK = ROOT / "exercises" / "17-08"


def _mistake(problem_id: str, answer) -> str:
    """The feedback the bank's author wrote for a mistake (read from the YAML, not the engine)."""
    for f in sorted(BANK.glob("*.yaml")):
        for p in yaml.safe_load(f.read_text())["problems"]:
            if p["id"] == problem_id:
                return next(m["feedback"] for m in p["mistakes"] if m["answer"] == answer)
    raise KeyError(problem_id)


def test_learner_flow_keyboard_only(live, new_page, shot):
    page = new_page()
    page.goto(live.url + "/learn/login")
    assert axe_violations(page) == []                                  # the sign-in page
    sign_in(page, live.url, live.tokens["alice"])
    assert page.url.endswith("/learn")
    assert page.locator("h1").inner_text() == "Exercises"
    assert axe_violations(page) == []                                  # the learner's exercise list
    # to the exercise by keyboard: Tab to its link, Enter
    # the link is the problem's title (its id in small print beside it)
    title = next(p.title for p in load_bank(live.bank).problems if p.id == "17-08/params-formula")
    tab_to(page, lambda f: f["tag"] == "A" and f["text"] == title)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/learn/exercise/17-08/params-formula$"))
    assert page.evaluate("document.activeElement.id") == "answer"      # the answer box has focus
    assert unlabelled_inputs(page) == []

    reading = page.locator("#reading")
    page.keyboard.type("4d(d+1", delay=20)
    # the parse error points at the column of the unclosed parenthesis (1-based: 3)
    expect(reading).to_contain_text("never closed")
    assert "column 3" in reading.inner_text()
    caret = page.locator("#reading pre.caret").inner_text().splitlines()
    assert caret[0] == "4d(d+1" and caret[1].index("^") == 2
    page.keyboard.type(")", delay=20)
    expect(reading.locator(".read-as")).to_have_count(1)
    first = reading.locator(".read-as").get_attribute("data-read-as")
    assert page.locator("#reading math").count() == 1                  # SymPy's MathML, rendered (once)
    # the reading follows the text as it changes
    page.keyboard.press("End")
    for _ in range(5):                              # "4d(d+1)" -> "4d"
        page.keyboard.press("Backspace")
    page.keyboard.type("^2 + 4d", delay=20)
    expect(reading.locator(".read-as")).to_have_attribute("data-read-as", "4·d² + 4·d")
    assert first != "4·d² + 4·d"

    tab_to(page, lambda f: f["tag"] == "BUTTON" and f["text"] == "Submit")
    page.keyboard.press("Enter")
    page.wait_for_selector("#result")
    assert page.locator("#result .score").inner_text() == "2 / 2"          # params-formula: 2 points
    assert "correct" in page.locator("#result .feedback").inner_text()
    assert page.locator("table.attempts tbody tr").count() == 1
    shot(page, "learner-exercise-feedback")
    assert axe_violations(page) == []


def test_wrong_answer_gets_the_misconception(live, new_page):
    page = new_page()
    sign_in(page, live.url, live.tokens["alice"])
    page.goto(live.url + "/learn/exercise/17-08/example-2.params")
    page.fill("#answer", "786432")
    page.click("form.answer button[type=submit]")
    page.wait_for_selector("#result")
    expected = _mistake("17-08/example-2.params", 786432)
    # the author's names (W^O) are MathML now: read back as written through each <math>'s aria-label
    shown = page.evaluate("""() => { const f = document.querySelector('#result .feedback').cloneNode(true);
        f.querySelectorAll('math').forEach(m => m.replaceWith(m.getAttribute('aria-label') || m.textContent));
        return f.textContent; }""")
    assert expected in shown
    assert page.locator("#result .score").inner_text().startswith("0 / ")


def test_code_upload_queued_to_done(live, new_page, tmp_path, shot):
    page = new_page()
    sign_in(page, live.url, live.tokens["alice"])
    page.goto(live.url + "/learn/exercise/17-08/code-add")
    assert unlabelled_inputs(page) == []
    assert axe_violations(page) == []                                  # the code exercise page
    sol = tmp_path / "solution.py"
    sol.write_text("def add(a, b):\n    return a + b\n")
    page.set_input_files("#file", str(sol))
    page.click("main form button[type=submit]")
    page.wait_for_url(re.compile(r".*/learn/jobs/[0-9a-f]+$"))
    seen = [page.locator("#job").get_attribute("data-status")]
    assert seen[0] in ("queued", "running")         # the page shows the job before it is graded
    assert axe_violations(page) == []               # the job page while queued (or running)
    for _ in range(600):                            # polled by htmx every second, until done
        s = page.locator("#job").get_attribute("data-status")
        if s != seen[-1]:
            seen.append(s)
        if s in ("done", "failed"):
            break
        page.wait_for_timeout(100)
    assert seen[-1] == "done", (seen, page.locator("#job").inner_text())
    groups = page.locator(".tests-by-function details")
    assert groups.count() == 2                       # the two test functions of the code exercise
    assert [g.get_attribute("class") for g in groups.all()] == ["pass", "pass"]
    assert "2 of 2 tests passed" in page.locator(".score").inner_text()
    assert page.locator(".score").inner_text().startswith("Score: 4 / 4")
    shot(page, "learner-code-job")
    assert axe_violations(page) == []               # the job page when done, with each test
