"""Issue #26's last hardening items, against a live `grader serve` (real uvicorn) on SQLite and
on PostgreSQL:

- a regrade request on an answer whose score the learner is not shown yet (``show:
  on_release``) is 409, through the API and the page's form alike (one check,
  reviews.request_regrade), and 201 once the scores are released;
- two staff (16 requests) answering one open regrade request at once leave one answer: one 200
  (the page: one 303), the others 409, one review and one audit line (the request's row lock);
- 16 concurrent starts of a timed quiz by one learner record one start: through the API one
  201 and fifteen 200 with the same ``started_at``; through the page's form sixteen 303;
- a page form with a NUL character, or a field that FastAPI refuses (too long, out of range),
  or a page address the database refuses, is answered with an HTML error page with its status
  (422) and a clear message; the API keeps answering JSON, whatever the Accept header says.

Bursts: the connections are opened first (a GET /healthz each), then every request is sent
together past a barrier (as tests/serve/test_serve_hostile_corpus.py's ``_regrade_burst``).
"""
from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from serve_helpers import LiveServer, make_bank, users

# open from 2020 to 2099: no window refuses an answer; "hid" shows its scores on release only;
# "quiz" is timed (30 minutes from each learner's start; these tests take far less)
COURSE = """course: {timezone: UTC}
assessments:
  - id: hw
    title: Homework
    problems: [17-08/practice-1]
    opens: 2020-01-01 00:00
    due: 2099-12-31 23:59
    show: immediately
  - id: hid
    title: Hidden homework
    problems: [17-08/practice-1.check]
    opens: 2020-01-01 00:00
    due: 2099-12-31 23:59
    show: on_release
  - id: quiz
    title: Timed quiz
    problems: [17-08/quiz-1]
    opens: 2020-01-01 00:00
    due: 2099-12-31 23:59
    time_limit: 30 min
"""
LEARNERS = ["alice", "bob", "carol", "dave", "erin", "frank"]
BURST = 16


class Srv:
    def __init__(self, server: LiveServer, tokens: dict, backend: str):
        self.server, self.url, self.tokens, self.backend = server, server.url, tokens, backend
        self.client = httpx.Client(base_url=server.url, timeout=60, follow_redirects=False)

    def api(self, who: str, method: str, path: str, **kw) -> httpx.Response:
        return self.client.request(method, "/api/v1" + path, headers={"Authorization": f"Bearer {self.tokens[who]}"},
                                   **kw)

    def graded_answer(self, who: str, problem: str, answer) -> str:
        r = self.api(who, "POST", "/submissions", json={"answers": {problem: answer}})
        assert r.status_code == 201 and r.json()["status"] == "graded", r.text
        return r.json()["results"][0]["answer_id"]

    def browser(self, who: str) -> dict:
        """A signed-in browser: its cookies and the CSRF value of its session."""
        with httpx.Client(base_url=self.url, timeout=60) as c:
            csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/learn/login").text).group(1)
            r = c.post("/learn/login", data={"token": self.tokens[who], "csrf": csrf})
            assert r.status_code == 303, r.text
            csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/learn").text).group(1)
            return {"cookies": dict(c.cookies), "csrf": csrf}

    def form(self, browser: dict, path: str, data: dict, **kw) -> httpx.Response:
        with httpx.Client(base_url=self.url, timeout=60, cookies=browser["cookies"]) as c:
            return c.post(path, data={**data, "csrf": browser["csrf"]}, **kw)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def srv(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"races-{request.param}")
    bank = make_bank(tmp)
    (bank / "assessments.yaml").write_text(COURSE)
    database = (f"sqlite:///{tmp / 'grader.db'}" if request.param == "sqlite"
                else request.getfixturevalue("postgres").new_database())
    tokens = users(database, prof="instructor", ta="instructor", **{name: "learner" for name in LEARNERS})
    server = LiveServer(database, bank, tmp, "--rate", "0").start()
    s = Srv(server, tokens, request.param)
    yield s
    s.client.close()
    server.stop()


def burst(url: str, send, cookies=lambda i: None) -> list:
    """``send(client, i)`` for i in 0..15, all at once past a barrier; their results in order
    (client i with ``cookies(i)``: a browser's)."""
    clients = [httpx.Client(base_url=url, timeout=120, follow_redirects=False, cookies=cookies(i))
               for i in range(BURST)]
    barrier = threading.Barrier(BURST, timeout=60)

    def one(i: int):
        c = clients[i]
        assert c.get("/healthz").status_code == 200        # the connection is open before the burst
        barrier.wait()
        return send(c, i)
    try:
        with ThreadPoolExecutor(BURST) as ex:
            return list(ex.map(one, range(BURST)))
    finally:
        for c in clients:
            c.close()


# ------------------------------------------------------------------ 1. scores not shown yet

def test_no_regrade_request_while_scores_are_hidden(srv):
    """practice-1.check is in "hid" (show: on_release): 1024 is its right answer (graded, 1 of 1,
    hidden from alice). Before the release her request is 409 through the API and the page's
    form (nothing stored: /me/reviews lists nothing of it); after it, 201."""
    answer = srv.graded_answer("alice", "17-08/practice-1.check", 1024)
    r = srv.api("alice", "POST", f"/answers/{answer}/regrade-request", json={"message": "please look"})
    assert r.status_code == 409, r.text
    err = r.json()["error"]
    assert err["code"] == "scores_hidden"
    assert err["message"] == ("Hidden homework (hid): its scores are not shown yet; they are shown when the staff "
                              "release them. Ask for a regrade once they are")
    page = srv.form(srv.browser("alice"), f"/learn/regrade/{answer}", {"message": "please look"})
    assert page.status_code == 409 and page.headers["content-type"].startswith("text/html"), page.text[:300]
    assert "its scores are not shown yet; they are shown when the staff release them" in page.text
    assert srv.api("prof", "GET", "/review").json() == []          # no request reached the queue
    assert srv.api("alice", "GET", "/me/reviews").json() == []
    assert srv.api("prof", "POST", "/assessments/hid/release").status_code == 201
    r = srv.api("alice", "POST", f"/answers/{answer}/regrade-request", json={"message": "please look"})
    assert r.status_code == 201, r.text
    # answered at once, so that no open request is left for the tests below
    rid = r.json()["id"]
    assert srv.api("prof", "POST", f"/regrade-requests/{rid}", json={"response": "It is right."}).status_code == 200


# ------------------------------------------------------------------ 2. staff answering at once

def _open_request(srv, who: str) -> tuple[str, int]:
    """A graded answer of ``who`` (practice-1, 64 = 8 x 8: right) with an open regrade request."""
    answer = srv.graded_answer(who, "17-08/practice-1", 64)
    r = srv.api(who, "POST", f"/answers/{answer}/regrade-request", json={"message": "look again"})
    assert r.status_code == 201, r.text
    return answer, r.json()["id"]


def _audit(srv, action: str, target: str) -> list[dict]:
    entries = srv.api("prof", "GET", "/audit", params={"action": action, "limit": 1000}).json()["entries"]
    return [e for e in entries if e["target"] == target and e["action"] == action]


def test_two_staff_answer_one_request_at_once_through_the_api(srv):
    """16 answers at once (prof and ta in turn), request i with score i/16 (each different): one
    200, fifteen 409; the stored review is the winner's, the only one; one response logged."""
    answer, rid = _open_request(srv, "bob")

    def send(c: httpx.Client, i: int) -> httpx.Response:
        who = ("prof", "ta")[i % 2]
        return c.post(f"/api/v1/regrade-requests/{rid}", json={"response": f"answer {i}", "score": i / BURST},
                      headers={"Authorization": f"Bearer {srv.tokens[who]}"})
    got = burst(srv.url, send)
    codes = sorted(r.status_code for r in got)
    assert codes == [200] + [409] * (BURST - 1), [(r.status_code, r.text[:100]) for r in got]
    won = next(r.json() for r in got if r.status_code == 200)
    assert all(r.json()["error"]["message"] == "this regrade request was answered already"
               for r in got if r.status_code == 409)
    mine = next(x for x in srv.api("bob", "GET", "/me/reviews").json() if x["answer_id"] == answer)
    assert mine["regrade"]["status"] == "answered" and mine["regrade"]["response"] == won["response"]
    assert mine["score"] == won["review"]["score"]
    assert len(_audit(srv, "review.response", answer)) == 1 and len(_audit(srv, "review", answer)) == 1


def test_two_staff_answer_one_request_at_once_through_the_page(srv):
    """The same through /staff/regrade-requests/{id}: one 303 (to the queue), fifteen 409 pages
    saying so; one review, one response logged."""
    answer, rid = _open_request(srv, "carol")
    browsers = [srv.browser("prof"), srv.browser("ta")]

    def send(c: httpx.Client, i: int) -> httpx.Response:
        b = browsers[i % 2]
        return c.post(f"/staff/regrade-requests/{rid}", data={"response": f"answer {i}", "score": str(i / BURST),
                                                                "csrf": b["csrf"]})
    got = burst(srv.url, send, cookies=lambda i: browsers[i % 2]["cookies"])
    codes = sorted(r.status_code for r in got)
    assert codes == [303] + [409] * (BURST - 1), [(r.status_code, r.text[:100]) for r in got]
    assert all("this regrade request was answered already" in r.text for r in got if r.status_code == 409)
    mine = next(x for x in srv.api("carol", "GET", "/me/reviews").json() if x["answer_id"] == answer)
    assert mine["regrade"]["status"] == "answered" and mine["regrade"]["response"].startswith("answer ")
    i = int(mine["regrade"]["response"].split()[1])
    assert mine["score"] == pytest.approx(i / BURST)                # the winner's score, its review the only one
    assert len(_audit(srv, "review.response", answer)) == 1 and len(_audit(srv, "review", answer)) == 1


# ------------------------------------------------------------------ 3. one start of a timed quiz

def test_sixteen_starts_of_a_timed_quiz_through_the_api(srv):
    got = burst(srv.url, lambda c, i: c.post("/api/v1/assessments/quiz/start",
                                             headers={"Authorization": f"Bearer {srv.tokens['dave']}"}))
    codes = sorted(r.status_code for r in got)
    assert codes == [200] * (BURST - 1) + [201], [(r.status_code, r.text[:100]) for r in got]
    started = {r.json()["started_at"] for r in got}
    assert len(started) == 1                                        # one start time, given to all 16
    assert [r.json()["new"] for r in got].count(True) == 1
    assert srv.api("dave", "GET", "/assessments/quiz").json()["started_at"] == started.pop()


def test_sixteen_starts_of_a_timed_quiz_through_the_page(srv):
    b = srv.browser("erin")
    got = burst(srv.url, lambda c, i: c.post("/learn/assessments/quiz/start", data={"csrf": b["csrf"]}),
                cookies=lambda i: b["cookies"])
    assert [r.status_code for r in got] == [303] * BURST, [(r.status_code, r.text[:100]) for r in got]
    first = srv.api("erin", "GET", "/assessments/quiz").json()["started_at"]
    again = srv.api("erin", "POST", "/assessments/quiz/start")
    assert again.status_code == 200 and again.json()["new"] is False and again.json()["started_at"] == first


# ------------------------------------------------------------------ 4. a page's errors are pages

def _is_page(r: httpx.Response, status: int, *words: str) -> None:
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("text/html"), (r.headers["content-type"], r.text[:300])
    text = r.text.replace("&#39;", "'")
    assert "<h1>" + str(status) + "</h1>" in text and "Signed in as" in text
    for w in words:
        assert w in text, (w, text[:1500])


def test_nul_in_a_page_form_is_an_html_422_and_stores_nothing(srv):
    """Without the check a NUL was stored on SQLite (303) and answered as JSON on PostgreSQL
    (the DataError safety net). Now a 422 page on both, the learner's request not stored."""
    answer = srv.graded_answer("frank", "17-08/practice-1", 64)
    learner = srv.browser("frank")
    r = srv.form(learner, f"/learn/regrade/{answer}", {"message": "a\x00b"})
    _is_page(r, 422, "The form's field 'message' contains a NUL character")
    assert srv.api("frank", "GET", "/me/reviews").json() == []     # no request stored
    staff = srv.browser("prof")
    r = srv.form(staff, f"/staff/review/{answer}", {"score": "1", "comment": "x\x00"})
    _is_page(r, 422, "The form's field 'comment' contains a NUL character")
    r = srv.form(learner, "/learn/exercise/17-08/practice-1", {"answer": "6\x004"})
    _is_page(r, 422, "The form's field 'answer' contains a NUL character")
    # the API refuses it as JSON, even for a client that asks for HTML
    r = srv.client.post(f"/api/v1/answers/{answer}/regrade-request", json={"message": "a\x00b"},
                        headers={"Authorization": f"Bearer {srv.tokens['frank']}", "Accept": "text/html"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid", r.text


def test_the_safety_nets_answer_a_page_with_a_page(srv):
    """Refused before the page's route runs, each answered JSON before: a field over its
    max_length, a path parameter out of range (FastAPI's validation), and an answer id with a
    NUL that PostgreSQL's driver refuses (the DataError net; on SQLite the route finds no such
    answer: its own 404 page)."""
    learner = srv.browser("frank")
    r = srv.form(learner, "/learn/regrade/whatever", {"message": "m" * 5001})
    _is_page(r, 422, "The form's field 'message': String should have at most 5000 characters.")
    r = srv.form(srv.browser("prof"), "/staff/regrade-requests/0", {"response": "x"})
    _is_page(r, 422, "The address's 'request_id': Input should be greater than or equal to 1.")
    r = srv.form(learner, "/learn/regrade/a%00b", {"message": "x"})
    if srv.backend == "postgresql":
        _is_page(r, 422, "Text cannot contain a NUL character")
    else:
        _is_page(r, 404, "no such answer")
    # the same refusals through the API stay JSON
    r = srv.client.post("/api/v1/answers/a%00b/regrade-request", json={"message": "x"},
                        headers={"Authorization": f"Bearer {srv.tokens['frank']}", "Accept": "text/html"})
    assert r.status_code in (404, 422) and r.json()["error"]["code"] in ("not_found", "invalid"), r.text
    r = srv.client.post("/api/v1/regrade-requests/0", json={"response": "x"},
                        headers={"Authorization": f"Bearer {srv.tokens['prof']}"})
    assert r.status_code == 422 and r.json()["error"]["location"] == "path.request_id", r.text
