"""The exercise pages without a browser (TestClient, one app for the module): the answer stays
in the box, a trailing newline is not stored, an unreadable answer is refused by the page and
is no attempt through the API either, a parse error says its column once, feedback renders its
math once; a code exercise's identifiers, template and grouped tests; error pages keep the
navigation; the problem page's counts; a batch learner's name."""
from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from serve_helpers import make_bank, users
from web_helpers import ROOT

TEMPLATE = ROOT / "exercises" / "17-08" / "code" / "template.py"
SOLUTION = ROOT / "exercises" / "17-08" / "code" / "solution.py"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    from grader.web import install
    tmp = tmp_path_factory.mktemp("web-exercise")
    database = f"sqlite:///{tmp / 'grader.db'}"
    tokens = users(database, prof="instructor", alice="learner", bob="learner", carol="learner", dan="learner")
    settings = Settings(database=database, exercises=str(make_bank(tmp)), workers=1, job_workers=1,
                        web_secret=b"e" * 32)
    app = create_app(settings, extensions=(install,))
    with TestClient(app, client=("10.7.7.7", 1)):
        app.tokens = tokens
        yield app


def form_csrf(html: str) -> str:
    return html.split('name="csrf" value="')[1].split('"')[0]


def signed_in(app, login: str) -> TestClient:
    c = TestClient(app, client=("10.7.0.1", 40000), follow_redirects=False)
    r = c.post("/learn/login", data={"token": app.tokens[login], "csrf": form_csrf(c.get("/learn/login").text)})
    assert r.status_code == 303, r.text
    return c


def api(app, login: str) -> TestClient:
    return TestClient(app, client=("10.7.0.2", 40000), headers={"Authorization": f"Bearer {app.tokens[login]}"})


def box(html: str) -> str:
    """The text in the answer box (as the browser shows it: the HTML's entities read)."""
    import html as h
    return h.unescape(re.search(r'<textarea id="answer"[^>]*>(.*?)</textarea>', html, re.S).group(1))


def section(html: str, id_: str) -> str:
    m = re.search(rf'<(\w+)[^>]*\bid="{id_}".*?</\1>', html, re.S)
    return m.group(0) if m else ""


def submitted(app, login: str) -> list:
    return api(app, login).get("/api/v1/submissions").json()


# ------------------------------------------------------------------ the answer box

def test_the_answer_stays_in_the_box_and_a_trailing_newline_is_not_stored(app):
    c = signed_in(app, "alice")
    page = c.get("/learn/exercise/17-08/params-formula").text
    r = c.post("/learn/exercise/17-08/params-formula",
               data={"answer": "4*d**2 + 4*d\n", "csrf": form_csrf(page)}, follow_redirects=True)
    assert r.status_code == 200
    assert 'id="result"' in r.text
    assert box(r.text) == "4*d**2 + 4*d"                     # kept in the box after submitting
    subs = submitted(app, "alice")
    assert len(subs) == 1
    sub = api(app, "alice").get(f"/api/v1/submissions/{subs[0]['id']}").json()
    assert sub["results"][0]["answer"] == "4*d**2 + 4*d"     # stored without its newline


def test_an_unreadable_answer_is_refused_by_the_page_and_nothing_is_stored(app):
    c = signed_in(app, "bob")
    page = c.get("/learn/exercise/17-08/params-formula").text
    r = c.post("/learn/exercise/17-08/params-formula", data={"answer": "4d(d+1", "csrf": form_csrf(page)})
    assert r.status_code == 422
    assert "never closed" in section(r.text, "submit-error") and "no attempt used" in section(r.text, "submit-error")
    assert box(r.text) == "4d(d+1"                           # the answer stays, to be mended
    reading = section(r.text, "reading")
    assert 'data-readable="no"' in reading and "^" in reading     # the caret under its column
    assert submitted(app, "bob") == []                        # nothing stored


def test_a_parse_error_says_its_column_once(app):
    c = signed_in(app, "alice")
    csrf = form_csrf(c.get("/learn/exercise/17-08/params-formula").text)
    r = c.post("/learn/validate", data={"problem": "17-08/params-formula", "answer": "4d(d+1", "csrf": csrf})
    text = re.sub(r"<[^>]+>", "", r.text)
    # the engine's message ends "(column 3)"; the page added it again before
    assert text.count("(column 3)") == 1, text
    assert 'aria-label="where: column 3"' in r.text


def test_the_reading_renders_its_math_once(app):
    c = signed_in(app, "alice")
    csrf = form_csrf(c.get("/learn/exercise/17-08/params-formula").text)
    r = c.post("/learn/validate", data={"problem": "17-08/params-formula", "answer": "4d^2 + 4d", "csrf": csrf})
    assert r.text.count("<math") == 1
    shown = re.sub(r"<[^>]+>", "", r.text)
    assert "4·d²" not in shown                                # not the text beside its rendering
    assert 'data-read-as="4·d² + 4·d"' in r.text


def test_feedback_renders_its_math_once_and_says_read_as_once(app):
    c = signed_in(app, "carol")
    page = c.get("/learn/exercise/17-08/params-formula").text
    r = c.post("/learn/exercise/17-08/params-formula", data={"answer": "3d^2 + 3d", "csrf": form_csrf(page)},
               follow_redirects=True)
    result = section(r.text, "result")
    assert "<msup><mi>W</mi><mi>O</mi></msup>" in result      # the author's W^O, as math
    assert "W^O" not in re.sub(r'aria-label="[^"]*"', "", result)
    assert result.count("read as") == 1, result


# ------------------------------------------------------------------ what counts as an attempt (API)

def test_an_unreadable_answer_is_stored_but_uses_no_attempt(app):
    """quiz-1 allows 2 attempts (make_bank). Two unreadable answers ("Z" is no choice) are
    stored (201, status invalid) and use none; then two readable answers use both, and a third
    is refused: 409. In the gradebook the unreadable ones are no grade: 2 attempts, not 4."""
    a = api(app, "dan")
    for _ in range(2):
        r = a.post("/api/v1/submissions", json={"answers": {"17-08/quiz-1": "Z"}})
        assert r.status_code == 201, r.text
        assert r.json()["results"][0]["status"] == "invalid"
    ex = a.get("/api/v1/exercises").json()
    quiz = next(e for e in (ex if isinstance(ex, list) else ex["exercises"]) if e["id"] == "17-08/quiz-1")
    assert quiz["attempts_used"] == 0
    for answer in ("B", "A"):
        assert a.post("/api/v1/submissions", json={"answers": {"17-08/quiz-1": answer}}).status_code == 201
    r = a.post("/api/v1/submissions", json={"answers": {"17-08/quiz-1": "C"}})
    assert r.status_code == 409 and "2 of 2 used" in r.json()["error"]["message"]
    cell = a.get("/api/v1/me/grades").json()["problems"]["17-08/quiz-1"]
    assert cell["attempts"] == 2


# ------------------------------------------------------------------ code exercises

def test_a_code_prompt_shows_identifiers_as_code_and_links_its_template(app):
    c = signed_in(app, "alice")
    html = c.get("/learn/exercise/17-08/code-mha").text
    prompt = section(html, "prompt") or html
    assert "<code>split_heads</code>" in html and "<msub><mi>split</mi>" not in html
    assert 'href="/learn/template/17-08/code-mha"' in html
    r = c.get("/learn/template/17-08/code-mha")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    assert r.content == TEMPLATE.read_bytes()
    assert r.content != SOLUTION.read_bytes()
    assert prompt
    # an exercise without a template.py beside its tests: no link, 404
    assert c.get("/learn/template/17-08/code-add").status_code == 404
    assert "/learn/template/" not in c.get("/learn/exercise/17-08/code-add").text
    assert c.get("/learn/template/17-08/params-formula").status_code == 404


def test_tests_are_grouped_by_function_and_hidden_ones_only_counted():
    from grader.web.code import by_function
    tests = [{"name": "t.py::test_split[0]", "passed": True, "message": ""},
             {"name": "t.py::test_split[1]", "passed": False, "message": "shape (2, 3) != (3, 2)"},
             {"name": "t.py::test_split[2]", "passed": False, "message": "x" * 500},
             {"name": "t.py::test_merge", "passed": True, "message": ""},
             {"name": "t_hidden.py::test_secret[0]", "passed": False, "message": "the secret case", "hidden": True},
             {"name": "t_hidden.py::test_secret[1]", "passed": True, "message": "", "hidden": True}]
    got = by_function(tests)
    # by hand: test_split 1 of 3 passed (cases [1] and [2] failed), test_merge 1 of 1; hidden 1 of 2
    assert [(g["function"], g["passed"], g["total"]) for g in got["groups"]] == [("test_split", 1, 3), ("test_merge", 1, 1)]
    assert [f["case"] for f in got["groups"][0]["failed"]] == ["[1]", "[2]"]
    assert got["hidden"] == {"total": 2, "passed": 1}
    assert (got["passed"], got["total"]) == (3, 6)
    assert "secret" not in repr(got["groups"])


def test_prompt_math_keeps_math_names_and_shows_code_as_code():
    from grader.web.render import prompt_math
    out = str(prompt_math("split_heads(x, h) of code/template.py; head_i, d_model and W_i^Q stay math"))
    assert "<code>split_heads(x, h)</code>" in out and "<code>code/template.py</code>" in out
    assert "<msub><mi>head</mi><mi>i</mi></msub>" in out and "<msub><mi>d</mi><mi>model</mi></msub>" in out
    assert "<msubsup><mi>W</mi><mi>i</mi><mi>Q</mi></msubsup>" in out


# ------------------------------------------------------------------ smaller

def test_error_pages_keep_the_navigation(app):
    c = signed_in(app, "alice")
    r = c.get("/staff")
    assert r.status_code == 403
    assert "Signed in as" in r.text and "Sign out" in r.text
    r = c.get("/learn/no-such-page", headers={"Accept": "text/html"})
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert "Signed in as" in r.text and '<nav aria-label="main">' in r.text
    r = c.get("/learn/exercise/17-08/no-such", headers={"Accept": "text/html"})
    assert r.status_code == 404 and "Signed in as" in r.text
    r = api(app, "alice").get("/api/v1/no-such")               # the API's 404 stays JSON
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_the_problem_page_counts_agree(app):
    """One free-text answer waiting for a person: 1 answer from 1 learner, 1 learner waiting,
    no graded answers yet (not "No answers yet")."""
    c = signed_in(app, "alice")
    page = c.get("/learn/exercise/17-08/practice-2").text
    r = c.post("/learn/exercise/17-08/practice-2", data={"answer": "Because each head attends in its own subspace.",
                                                          "csrf": form_csrf(page)})
    assert r.status_code == 303
    prof = signed_in(app, "prof")
    html = prof.get("/staff/problems/17-08/practice-2").text
    summary = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", section(html, "dist-h") + html.split('class="summary">')[1].split("</p>")[0]))
    assert "1 answer from 1 learner " in summary and "1 learner waiting for a person" in summary
    assert "answers" not in summary.split("·")[0] and "No answers yet" not in html
    assert "No graded answers yet: 1 learner waiting for a person." in html


def test_a_batch_learner_gets_a_name():
    from grader.serve.jobwork import name_of
    assert name_of("alice.smith@uni.edu") == "Alice Smith"
    assert name_of("bob") == "Bob"
    assert name_of("s1234") == "s1234"           # an id of digits is left as written


def test_pages_show_titles_with_ids_as_small_print(app):
    from grader.bank import load_bank
    title = load_bank().get("17-08/params-formula").title
    assert title and title != "17-08/params-formula"
    c = signed_in(app, "alice")
    html = c.get("/learn/exercise/17-08/params-formula").text
    assert re.search(r"<h1>(.*?)</h1>", html).group(1) == str(__import__("markupsafe").escape(title))
    assert '<small class="pid">17-08/params-formula</small>' in html
    prof = signed_in(app, "prof")
    html = prof.get("/staff/learners/alice").text
    assert str(__import__("markupsafe").escape(title)) in html
    html = prof.get("/staff/problems/17-08/params-formula").text
    assert re.search(r"<h1>(.*?)</h1>", html).group(1) == str(__import__("markupsafe").escape(title))


def test_a_submit_waits_for_a_live_reading_still_in_flight(app):
    """Typing then Enter at once: the box's live reading (the learner's reading slot, as
    ``State.busy(-id)`` holds it) is still in flight when the form arrives. The submit waits
    for it instead of answering "an earlier request of yours is still being graded"."""
    import threading
    from sqlalchemy import select
    from grader.db.models import User
    st = app.state.grader
    with st.db.read() as conn:
        uid = conn.execute(select(User.id).where(User.login == "dan")).scalar_one()
    c = signed_in(app, "dan")
    page = c.get("/learn/exercise/17-08/practice-1").text
    before = len(submitted(app, "dan"))
    with st._lock:
        st._inflight[-uid] = 1                          # a reading in flight ...
    release = threading.Timer(0.5, lambda: st._inflight.pop(-uid, None))   # ... answered 0.5 s later
    release.start()
    try:
        r = c.post("/learn/exercise/17-08/practice-1", data={"answer": "64", "csrf": form_csrf(page)})
    finally:
        release.join(10)
        st._inflight.pop(-uid, None)
    assert r.status_code == 303, r.text                  # without the wait: 429, "still being graded"
    assert len(submitted(app, "dan")) == before + 1
