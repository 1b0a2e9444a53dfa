"""Manual grading through the API (issue 29): scores from a problem's rubric (clamped), comments
that reach only their learner, regrade requests, one review applied to identical answers, and
what a learner may not do. A live server on SQLite and on PostgreSQL."""
from __future__ import annotations

import httpx
import pytest

from serve_helpers import LiveServer, make_bank, users

# A problem of this test's own, with a cap below its points and a rubric whose sum can pass the
# cap and fall below 0, to check the clamp.
REVIEW_BANK = '''subject: 17-08
problems:
  - id: 17-08/review-capped
    title: "Why W^O"
    prompt: "Explain why the output projection W^O is needed."
    kind: free_text
    points: 3
    reference: "It mixes the heads' outputs back into the model's width."
    rubric:
      cap: 2
      items:
        - {id: a, text: "says W^O mixes the heads", points: 1.5}
        - {id: b, text: "names the model width d", points: 1}
        - {id: c, text: "claims W^O is optional", points: -2}
'''
# Its course: the queue is grouped by these assessments, in this order (not the bank's), then by
# problem; open from 2020 to 2099 so that no window refuses an answer of these tests.
COURSE = '''assessments:
  - id: essays
    title: "Essays"
    problems: [17-08/review-capped, 17-08/practice-5]
    opens: 2020-01-01 00:00
    due: 2099-12-31 23:59
  - id: hw
    title: "Homework"
    problems: [17-08/practice-2, 17-08/practice-3]
    opens: 2020-01-01 00:00
    due: 2099-12-31 23:59
'''
LEARNERS = ["alice", "bob", "carol", "dave", "erin", "frank", "gina"]


class Srv:
    def __init__(self, url, tokens):
        self.url, self.tokens = url, tokens
        self.client = httpx.Client(base_url=url, timeout=60)

    def get(self, who, path, **kw):
        return self.client.get("/api/v1" + path, headers={"Authorization": f"Bearer {self.tokens[who]}"}, **kw)

    def post(self, who, path, body=None):
        return self.client.post("/api/v1" + path, json=body, headers={"Authorization": f"Bearer {self.tokens[who]}"})

    def answer(self, who, problem, text):
        r = self.post(who, "/submissions", {"answers": {problem: text}})
        assert r.status_code == 201, r.text
        sub = r.json()
        return sub["id"], sub["results"][0]["answer_id"]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def srv(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"reviews-{request.param}")
    bank = make_bank(tmp)
    (bank / "17-08" / "08-review.yaml").write_text(REVIEW_BANK)
    (bank / "assessments.yaml").write_text(COURSE)
    database = (f"sqlite:///{tmp / 'grader.db'}" if request.param == "sqlite"
                else request.getfixturevalue("postgres").new_database())
    tokens = users(database, prof="instructor", **{name: "learner" for name in LEARNERS})
    server = LiveServer(database, bank, tmp, "--rate", "0").start()
    s = Srv(server.url, tokens)
    yield s
    s.client.close()
    server.stop()


@pytest.mark.parametrize("applied, expected", [
    (["a", "b"], 2),            # 1.5 + 1 = 2.5, clamped to the cap 2 (not the problem's 3 points)
    (["c"], 0),                 # -2, clamped to 0
    (["a", "c"], 0),            # 1.5 - 2 = -0.5, clamped to 0
    (["b"], 1),                 # 1
    (["a"], 1.5),               # 1.5
])
def test_the_score_is_the_rubric_sum_clamped(srv, applied, expected):
    _, answer_id = srv.answer("gina", "17-08/review-capped", f"an answer for {applied}")
    r = srv.post("prof", f"/review/{answer_id}", {"rubric": applied, "comment": "see the rubric"})
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["score"] == expected and out["score_from"] == "rubric" and out["applied_to"] == [answer_id]
    assert [i["id"] for i in out["rubric"]] == applied


def test_a_given_score_overrides_and_bad_items_are_refused(srv):
    _, answer_id = srv.answer("gina", "17-08/review-capped", "W^O mixes the heads back into width d.")
    r = srv.post("prof", f"/review/{answer_id}", {"rubric": ["a", "b"], "score": 0.5})
    assert r.status_code == 201 and r.json()["score"] == 0.5 and r.json()["score_from"] == "given"
    for body, where in (({"rubric": ["z"]}, "body.rubric"), ({"rubric": ["a", "a"]}, "body.rubric"),
                        ({"comment": "no score"}, "body.score"), ({"score": 3.5}, "body.score")):
        r = srv.post("prof", f"/review/{answer_id}", body)
        assert r.status_code == 422 and r.json()["error"]["location"] == where, (body, r.text)
    queue = srv.get("prof", "/review?include_reviewed=true").json()
    item = next(x for x in queue if x["answer_id"] == answer_id)
    assert item["rubric"] == {"cap": 2, "items": [{"id": "a", "text": "says W^O mixes the heads", "points": 1.5},
                                                  {"id": "b", "text": "names the model width d", "points": 1},
                                                  {"id": "c", "text": "claims W^O is optional", "points": -2}]}
    assert item["review"]["score"] == 0.5


def test_the_comment_and_rubric_reach_only_their_learner(srv):
    sub_id, answer_id = srv.answer("alice", "17-08/practice-2", "Each head is d × d/h, so h of them make d².")
    mine = srv.get("alice", f"/submissions/{sub_id}").json()["results"][0]
    assert mine.get("review") is None
    # practice-2's rubric (the bundled bank): a = +1, b = +1, d = -0.5: 1.5 of 2
    r = srv.post("prof", f"/review/{answer_id}", {"rubric": ["a", "b", "d"], "comment": "Show the 4d² count too."})
    assert r.status_code == 201 and r.json()["score"] == 1.5
    review = srv.get("alice", f"/submissions/{sub_id}").json()["results"][0]["review"]
    assert review["score"] == 1.5 and review["comment"] == "Show the 4d² count too." and review["reviewer"] == "prof"
    assert [(i["id"], i["points"]) for i in review["rubric"]] == [("a", 1), ("b", 1), ("d", -0.5)]
    assert review["rubric"][2]["text"] == "an assertion with no count behind it"
    reviews = srv.get("alice", "/me/reviews").json()
    got = next(x for x in reviews if x["answer_id"] == answer_id)
    assert got["score"] == 1.5 and got["points"] == 2 and got["review"]["comment"] == "Show the 4d² count too."
    assert srv.get("alice", "/me/grades").json()["problems"]["17-08/practice-2"]["score"] == 1.5
    # bob sees none of it
    assert srv.get("bob", f"/submissions/{sub_id}").status_code == 404
    assert answer_id not in [x["answer_id"] for x in srv.get("bob", "/me/reviews").json()]


def test_a_learner_can_neither_review_nor_see_the_queue(srv):
    _, answer_id = srv.answer("bob", "17-08/practice-5", "Q from the decoder, K and V from the encoder.")
    assert srv.post("bob", f"/review/{answer_id}", {"score": 1}).status_code == 403
    assert srv.get("bob", "/review").status_code == 403
    assert srv.post("bob", "/regrade-requests/1", {"response": "mine"}).status_code == 403


def test_regrade_request_flow(srv):
    sub_id, answer_id = srv.answer("carol", "17-08/practice-5", "K, V and Q all come from the encoder.")
    # not graded by a person yet: nothing to regrade
    assert srv.post("carol", f"/answers/{answer_id}/regrade-request", {"message": "?"}).status_code == 409
    assert srv.post("prof", f"/review/{answer_id}", {"rubric": ["b"], "comment": "Q is the decoder's."}).json()[
        "score"] == 0.5
    # another learner's answer: as if it did not exist
    assert srv.post("dave", f"/answers/{answer_id}/regrade-request", {"message": "x"}).status_code == 404
    assert srv.post("carol", f"/answers/{answer_id}/regrade-request", {"message": ""}).status_code == 422
    r = srv.post("carol", f"/answers/{answer_id}/regrade-request", {"message": "I meant the decoder for Q."})
    assert r.status_code == 201, r.text
    req = r.json()
    assert req["status"] == "open" and req["message"] == "I meant the decoder for Q." and req["response"] is None
    again = srv.post("carol", f"/answers/{answer_id}/regrade-request", {"message": "again"})
    assert again.status_code == 409                                   # one open request per answer
    item = next(x for x in srv.get("prof", "/review").json() if x["answer_id"] == answer_id)
    assert item["regrade"]["id"] == req["id"] and item["regrade"]["message"] == "I meant the decoder for Q."
    # answered with rubric items a + b: 0.5 + 0.5 = 1 of 1
    r = srv.post("prof", f"/regrade-requests/{req['id']}", {"response": "Fair: you wrote it.", "rubric": ["a", "b"]})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "answered" and r.json()["review"]["score"] == 1
    assert srv.post("prof", f"/regrade-requests/{req['id']}", {"response": "twice"}).status_code == 409
    seen = srv.get("carol", f"/submissions/{sub_id}").json()["results"][0]
    assert seen["regrade"]["response"] == "Fair: you wrote it." and seen["regrade"]["status"] == "answered"
    assert seen["review"]["score"] == 1 and seen["review"]["comment"] == "Q is the decoder's."   # comment kept
    mine = next(x for x in srv.get("carol", "/me/reviews").json() if x["answer_id"] == answer_id)
    assert mine["score"] == 1 and mine["regrade"]["response"] == "Fair: you wrote it."
    assert answer_id not in [x["answer_id"] for x in srv.get("prof", "/review").json()]   # out of the queue
    assert srv.post("carol", f"/answers/{answer_id}/regrade-request", {"message": "one more"}).status_code == 201
    actions = [e["action"] for e in srv.get("prof", "/audit?action=review&limit=1000").json()["entries"]
               if e["target"] == answer_id]
    # newest first: the second request, the response, its review, the first request, the first review
    assert actions == ["review.request", "review.response", "review", "review.request", "review"]


def test_one_review_for_all_identical_answers(srv):
    text = "Heads split d into h parts; the total stays 4d squared."
    ids = [srv.answer("dave", "17-08/practice-2", text)[1],
           srv.answer("erin", "17-08/practice-2", "  heads split d into h parts;\n the TOTAL stays 4d squared. ")[1],
           srv.answer("frank", "17-08/practice-2", text)[1]]
    other = srv.answer("gina", "17-08/practice-2", text + " And W^O.")[1]
    same_other_problem = srv.answer("gina", "17-08/practice-3", text)[1]
    r = srv.post("prof", f"/review/{ids[0]}", {"rubric": ["a"], "comment": "Count each matrix.", "identical": True})
    assert r.status_code == 201
    out = r.json()
    # dave's, then erin's (the same once whitespace and case are normalised) and frank's: 3
    assert out["applied_to"][0] == ids[0] and sorted(out["applied_to"]) == sorted(ids) and out["score"] == 1
    queue = [x["answer_id"] for x in srv.get("prof", "/review").json()]
    assert not set(ids) & set(queue) and other in queue and same_other_problem in queue
    for who, aid in zip(("erin", "frank"), ids[1:]):
        got = next(x for x in srv.get(who, "/me/reviews").json() if x["answer_id"] == aid)
        assert got["review"]["comment"] == "Count each matrix." and got["score"] == 1
    entry = next(e for e in srv.get("prof", "/audit?action=review").json()["entries"] if e["target"] == ids[0])
    assert entry["detail"]["identical"] == 2


def test_the_queue_anonymised(srv):
    _, answer_id = srv.answer("gina", "17-08/practice-3", "Different initialisations.")
    plain = next(x for x in srv.get("prof", "/review").json() if x["answer_id"] == answer_id)
    anon = next(x for x in srv.get("prof", "/review?anonymous=true").json() if x["answer_id"] == answer_id)
    assert plain["learner"] == "gina" and anon["learner"] is None
    assert anon["pseudonym"] == plain["pseudonym"] and anon["pseudonym"].startswith("learner-")
    assert "gina" not in anon["pseudonym"]


def test_the_queue_is_by_assessment_then_problem(srv):
    srv.answer("gina", "17-08/practice-2", "queue order: hw, practice-2")
    srv.answer("gina", "17-08/review-capped", "queue order: essays, review-capped")
    srv.answer("gina", "17-08/practice-5", "queue order: essays, practice-5")
    queue = srv.get("prof", "/review").json()
    order = [(x["assessment"]["id"] if x["assessment"] else None, x["problem"]) for x in queue]
    # essays (practice-5 before review-capped: the bank's order), then hw (practice-2, practice-3)
    runs = [k for i, k in enumerate(order) if i == 0 or order[i - 1] != k]
    assert runs == [("essays", "17-08/practice-5"), ("essays", "17-08/review-capped"),
                    ("hw", "17-08/practice-2"), ("hw", "17-08/practice-3")], runs
    capped = next(x for x in queue if x["problem"] == "17-08/review-capped")
    assert capped["assessment"] == {"id": "essays", "title": "Essays"}
    assert capped["title"] == "Why W^O"
    spec = srv.client.get("/openapi.json").json()["paths"]
    for path in ("/api/v1/review", "/api/v1/review/{answer_id}", "/api/v1/regrade-requests/{request_id}",
                 "/api/v1/answers/{answer_id}/regrade-request", "/api/v1/me/reviews"):
        assert path in spec, path
