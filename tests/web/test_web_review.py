"""Manual grading in Chromium (issue 29): an instructor grades free text with the rubric, with
the keyboard only, applies one review to an identical answer and answers a regrade request;
the learner sees the score, the rubric items and the comment, asks for the regrade and sees its
outcome; axe-core on the review page and the learner's page."""
from __future__ import annotations

import httpx

from web_helpers import axe_violations, sign_in, unlabelled_inputs

HOSTILE = '<b>bold</b><img src=x onerror=alert(1)> Each head has d·d/h parameters per projection.'
SAME = "Q from the decoder; K and V from the encoder."


def _api(live, who, method, path, body=None):
    r = httpx.request(method, live.url + "/api/v1" + path, json=body, timeout=60,
                      headers={"Authorization": f"Bearer {live.tokens[who]}"})
    assert r.status_code in (200, 201), r.text
    return r.json()


SUBMISSION = {}


def _answer(live, who, problem, text):
    sub = _api(live, who, "POST", "/submissions", {"answers": {problem: text}})
    SUBMISSION[sub["results"][0]["answer_id"]] = sub["id"]
    return sub["results"][0]["answer_id"]


def _review_of(live, who, answer_id):
    return next(x for x in _api(live, who, "GET", "/me/reviews") if x["answer_id"] == answer_id)


def test_instructor_grades_with_the_keyboard_and_the_learner_sees_it(live, new_page, shot):
    essay = _answer(live, "alice", "17-08/practice-2", HOSTILE)
    mine = _answer(live, "alice", "17-08/practice-5", SAME)
    twin = _answer(live, "bob", "17-08/practice-5", "  q from the decoder;  K and V from the ENCODER. ")
    prof = new_page()
    sign_in(prof, live.url, live.tokens["prof"])
    prof.goto(live.url + "/staff/review")
    assert prof.locator(".keys").inner_text().count("next / previous answer") == 1         # the key legend
    assert axe_violations(prof) == [] and unlabelled_inputs(prof) == []
    item = prof.locator(f"#a-{essay}")
    assert HOSTILE in item.locator("pre.answer").inner_text()                              # shown as text
    assert prof.locator("pre.answer img").count() == 0
    shot(prof, "staff-review")
    prof.evaluate("window.scrollTo(0, 0)")                                                 # the legend in view
    shot.viewport(prof, "staff-review-top", 1200, 900)                                    # docs/img/staff-review.png
    # the first answer is the current one; its rubric (practice-2): 1 = a (+1), 2 = b (+1), 4 = d (-0.5)
    prof.wait_for_function(f"document.activeElement && document.activeElement.id === 'a-{essay}'")
    for key in ("1", "2", "4"):
        prof.keyboard.press(key)
    assert item.locator("output").inner_text() == "1.5"                                    # 1 + 1 - 0.5
    prof.keyboard.press("c")
    prof.keyboard.type("Count W^O too: 4d² in all.")
    prof.keyboard.press("Escape")
    with prof.expect_navigation():
        prof.keyboard.press("s")
    got = _review_of(live, "alice", essay)
    assert got["score"] == 1.5 and got["review"]["comment"] == "Count W^O too: 4d² in all."
    assert [i["id"] for i in got["review"]["rubric"]] == ["a", "b", "d"]
    # saved and on to the next: alice's practice-5, with bob's identical answer beside it
    prof.wait_for_function(f"document.activeElement && document.activeElement.id === 'a-{mine}'")
    assert prof.locator(f"#a-{essay}").count() == 0                                        # out of the queue
    prof.keyboard.press("k")                                                               # no previous: stays
    prof.keyboard.press("j")
    prof.keyboard.press("k")
    prof.wait_for_function(f"document.activeElement && document.activeElement.id === 'a-{mine}'")
    for key in ("1", "2"):                                                                 # 0.5 + 0.5 = 1
        prof.keyboard.press(key)
    prof.focus(f"#same-{mine}")
    prof.keyboard.press("Space")                                                           # also the identical one
    with prof.expect_navigation():
        prof.keyboard.press("Enter")
    assert _review_of(live, "alice", mine)["score"] == 1 and _review_of(live, "bob", twin)["score"] == 1
    assert _review_of(live, "bob", twin)["review"]["rubric"][1]["text"] == "K and V from the encoder's output"

    # the learner: score, rubric items and comment on the exercise page; no "a person must grade"
    alice = new_page()
    sign_in(alice, live.url, live.tokens["alice"])
    alice.goto(live.url + "/learn/exercise/17-08/practice-2")
    section = alice.locator("section#review")
    text = section.inner_text()
    assert "1.5 / 2" in text and "Count W^O too: 4d² in all." in text
    assert "an assertion with no count behind it (-0.5)" in text and "(+1)" in text
    assert "a person must grade" not in alice.locator("main").inner_text()
    alice.goto(live.url + f"/learn/exercise/17-08/practice-2?s={SUBMISSION[essay]}")      # the result of it
    assert "Result: 1.5 / 2 — reviewed" in alice.locator("#result h2").inner_text()
    assert "a person must grade" not in alice.locator("main").inner_text()
    assert axe_violations(alice) == [] and unlabelled_inputs(alice) == []
    alice.get_by_label("Ask for a regrade").fill("I did count W^O: it is the last d² in my answer.")
    with alice.expect_navigation():
        alice.get_by_role("button", name="Ask for a regrade").click()
    assert "waiting for an answer" in alice.locator("section#review").inner_text()
    assert alice.get_by_role("button", name="Ask for a regrade").count() == 0              # one open request
    shot(alice, "learn-review")

    # the request in the queue, answered with a new score
    prof.goto(live.url + "/staff/review")
    request = prof.locator(f"#a-{essay} .regrade")
    assert "I did count W^O" in request.inner_text()
    request.get_by_label("Response to the learner").fill("Right, you did: full marks.")
    request.get_by_label("New score").fill("2")
    with prof.expect_navigation():
        request.get_by_role("button", name="Answer the request").click()
    assert prof.locator(f"#a-{essay}").count() == 0
    alice.reload()
    text = alice.locator("section#review").inner_text()
    assert "answered:" in text and alice.locator("section#review q.response").inner_text() == "Right, you did: full marks."
    assert "the score is now 2 / 2" in text
    entries = _api(live, "prof", "GET", "/audit?action=review&limit=1000")["entries"]
    assert {e["action"] for e in entries if e["target"] == essay} == {"review", "review.request", "review.response"}


def test_a_learner_gets_403_with_navigation_and_a_form_without_csrf_is_refused(live, new_page):
    bob = new_page()
    sign_in(bob, live.url, live.tokens["bob"])
    r = bob.goto(live.url + "/staff/review")
    assert r.status == 403 and bob.locator("nav a[href='/learn']").count() == 1
    answer = _answer(live, "alice", "17-08/practice-3", "Their own projections.")
    assert bob.request.post(live.url + f"/staff/review/{answer}", form={"score": "1"}).status == 403
    prof = new_page()
    sign_in(prof, live.url, live.tokens["prof"])
    assert prof.request.post(live.url + f"/staff/review/{answer}", form={"score": "1"}).status == 403   # no CSRF
    assert prof.request.post(live.url + f"/learn/regrade/{answer}", form={"message": "x"}).status == 403
    prof.goto(live.url + "/staff/review?anonymous=1")
    assert prof.locator(f"#a-{answer} h4").inner_text().count("alice") == 0
    assert "learner-" in prof.locator(f"#a-{answer} h4").inner_text()
    assert axe_violations(prof) == []
