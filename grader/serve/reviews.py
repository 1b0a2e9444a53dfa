"""Manual grading: a person's review of an answer (score from the problem's rubric or given,
a comment to the learner), the same review applied to identical answers, the staff's queue,
and learners' regrade requests.

- Score: an explicit ``score`` (from 0 to the problem's points) overrides; otherwise the sum of
  the applied rubric items' points clamped to ``[0, cap]`` (cap: the rubric's, else the
  problem's points; :meth:`grader.api.Rubric.score`). The latest review of an answer counts,
  a late answer's at score x (1 - its late fraction) (:func:`grader.serve.course.counted_review`).
- Identical answers: the same problem and the same normalised raw answer (text: whitespace
  runs as one space, case folded; anything else: its JSON), among answers waiting for a person
  that nobody has reviewed yet.
- A regrade request: a learner's own graded answer (one a person must grade only once a person
  has), one ``open`` request per answer; answering it records the response, and a new review
  when a score or rubric items come with it.
"""
from __future__ import annotations

from datetime import datetime

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from grader.api.service import json_number

from grader.db.models import Answer, RegradeRequest, Review, User, now

from .course import Times, counted_review, late_fraction
from .errors import APIError, not_found
from .store import iso, latest_reviews

if TYPE_CHECKING:
    from grader.api.service import BankProblem

    from .auth import Principal
    from .engine import Engine

JSON = dict[str, Any]
MAX_IDENTICAL = 5000


def pseudonym(login: str) -> str:
    """A stable name that hides the login (the same learner, the same name, in every queue)."""
    return "learner-" + hashlib.sha256(("grader-pseudonym:" + login).encode()).hexdigest()[:6]


def normalised(raw: object) -> str:
    if isinstance(raw, str):
        return " ".join(raw.split()).casefold()
    return json.dumps(raw, sort_keys=True, ensure_ascii=False)


def rubric_of(p: BankProblem | None) -> JSON | None:
    """A problem's rubric as JSON: its items and the cap the sum is clamped to."""
    if p is None or p.rubric is None:
        return None
    return {"items": [{"id": i.id, "text": i.text, "points": json_number(i.points, digits=6)} for i in p.rubric.items],
            "cap": json_number(p.rubric.ceiling(float(p.points)), digits=6)}


def applied_items(p: BankProblem | None, ids: Sequence[str] | None) -> list[JSON]:
    """The applied items with their text and points (an id the bank no longer has: text '?')."""
    out = []
    for item_id in ids or ():
        item = p.rubric.get(item_id) if p is not None and p.rubric is not None else None
        out.append({"id": item_id, "text": item.text if item else "?",
                    "points": json_number(item.points, digits=6) if item else None})
    return out


def expand(review: JSON | None, engine: Engine, problem_id: str) -> JSON | None:
    """A stored review with its rubric items' texts and points."""
    if review is None:
        return None
    return {**review, "rubric": applied_items(engine.get(problem_id), review.get("rubric"))}


def _score(p: BankProblem | None, points: float, score: float | None, rubric: list[str] | None) -> float:
    if rubric:
        if p is None or p.rubric is None:
            raise APIError(422, "this problem has no rubric; give a score", location="body.rubric")
        unknown = [r for r in rubric if p.rubric.get(r) is None]
        if unknown:
            raise APIError(422, f"rubric item {unknown[0]!r} is not one of this problem's "
                                f"({', '.join(i.id for i in p.rubric.items)})", location="body.rubric")
        if len(set(rubric)) != len(rubric):
            raise APIError(422, "a rubric item is applied at most once", location="body.rubric")
    if score is not None:
        if score > points:
            raise APIError(422, f"score {score:g} is more than the problem's {points:g} points", location="body.score")
        return float(score)
    if rubric and p is not None and p.rubric is not None:
        return p.rubric.score(rubric, points)
    raise APIError(422, "give a score or the rubric items that apply", location="body.score")


def _answer(conn: Connection, answer_id: str, *, lock: bool = False) -> Any:
    """The answer's row; ``lock``: held until the transaction ends (PostgreSQL's ``FOR UPDATE``,
    so that two requests about one answer are decided one after the other; SQLite's writes
    are one at a time already)."""
    q = select(Answer.id, Answer.problem_id, Answer.max_score, Answer.pending_points, Answer.status,
               Answer.raw, Answer.user_id, Answer.result, Answer.raw_score, Answer.penalty).where(Answer.id == answer_id[:64])
    a = conn.execute(q.with_for_update() if lock else q).first()
    if a is None:
        raise not_found("answer")
    return a


def _identical(conn: Connection, a: Any) -> list[str]:
    """Answers of the same problem with the same normalised raw answer, waiting for a person and
    not reviewed yet (``a`` itself excluded)."""
    rows = conn.execute(select(Answer.id, Answer.raw).where(Answer.problem_id == a.problem_id,
                                                             Answer.pending_points > 0, Answer.id != a.id)
                        .limit(MAX_IDENTICAL)).all()
    key = normalised(a.raw)
    same = [r.id for r in rows if normalised(r.raw) == key]
    done = latest_reviews(conn, same) if same else {}
    return [i for i in same if i not in done]


def add_review(conn: Connection, engine: Engine, answer_id: str, reviewer: Principal, *, score: float | None,
               comment: str, rubric: list[str] | None = None, identical: bool = False,
               at: datetime | None = None) -> JSON:
    """Record a review (and, with ``identical``, the same on every identical answer waiting)."""
    a = _answer(conn, answer_id)
    if a.status is None:
        raise APIError(409, "this answer is not graded yet; review it once it is")
    p = engine.get(a.problem_id)
    points = engine.points(a.problem_id) if p else (a.max_score or 0) + (a.pending_points or 0)
    value = _score(p, points, score, rubric)
    targets = [a.id, *(_identical(conn, a) if identical else [])]
    at = at or now()            # the service's clock (State.now: Settings.now where a test sets one)
    conn.execute(insert(Review), [{"answer_id": t, "reviewer_id": reviewer.id, "score": value, "comment": comment,
                                   "rubric": list(rubric or []), "created_at": at} for t in targets])
    from .lti.outbox import enqueue_answers              # the LMS's gradebook: in this transaction
    enqueue_answers(conn, targets, at, "review")
    fraction = late_fraction(a.result, a.raw_score, a.penalty)
    final, lost = counted_review(value, fraction)
    return {"answer_id": a.id, "problem": a.problem_id, "score": json_number(value, digits=6), "comment": comment,
            "counted": json_number(final, digits=6), "late_fraction": fraction,
            "penalty": None if fraction is None else json_number(lost, digits=6),
            "rubric": applied_items(p, rubric), "reviewer": reviewer.login, "at": iso(at),
            "score_from": "given" if score is not None else "rubric", "applied_to": targets}


# ------------------------------------------------------------------ regrade requests

def _request_json(r: Any) -> JSON:
    return {"id": r.id, "answer_id": r.answer_id, "message": r.message, "status": r.status,
            "created_at": iso(r.created_at), "response": r.response, "answered_at": iso(r.answered_at)}


_REQ = (RegradeRequest.id, RegradeRequest.answer_id, RegradeRequest.message, RegradeRequest.status,
        RegradeRequest.created_at, RegradeRequest.response, RegradeRequest.answered_at)


def latest_requests(conn: Connection, answer_ids: Iterable[str]) -> dict[str, JSON]:
    """The latest regrade request of each answer that has one."""
    q = select(*_REQ).where(RegradeRequest.answer_id.in_(list(answer_ids))).order_by(RegradeRequest.id)
    return {r.answer_id: _request_json(r) for r in conn.execute(q)}


def request_regrade(conn: Connection, engine: Engine, who: Principal, answer_id: str, message: str,
                    at: datetime | None = None) -> JSON:
    """A learner's request (the API's and the page's form): 404 for another's answer; 409 while
    its assessment's scores are not shown to the learner (``show``), before it is graded, while
    a person has not graded it yet, or while it has an open request."""
    a = _answer(conn, answer_id, lock=True)     # one open request per answer, however many come at once
    if a.user_id != who.id:
        raise not_found("answer")       # another's answer: as if it did not exist
    at = at or now()
    hidden_until(conn, engine, who, a.problem_id, at)
    if a.status is None:
        raise APIError(409, "this answer is not graded yet; ask for a regrade once it is")
    if (a.pending_points or 0) > 0 and not latest_reviews(conn, [a.id]):
        raise APIError(409, "a person has not graded this answer yet; it is in the queue already")
    if conn.execute(select(RegradeRequest.id).where(RegradeRequest.answer_id == a.id,
                                                    RegradeRequest.status == "open")).first():
        raise APIError(409, "this answer has an open regrade request already; wait for its answer")
    rid = conn.execute(insert(RegradeRequest).values(answer_id=a.id, user_id=who.id, message=message, created_at=at,
                                                     status="open")).inserted_primary_key
    assert rid is not None
    return {"id": rid[0], "answer_id": a.id, "problem": a.problem_id, "message": message, "status": "open",
            "created_at": iso(at), "response": None, "answered_at": None}


def hidden_until(conn: Connection, engine: Engine, who: Principal, problem_id: str, at: datetime) -> None:
    """409 while the learner's score of this problem is not shown (its assessment's ``show``:
    after the due date, on release): what the pages do not show cannot be disputed."""
    c = engine.course
    a = c.of_problem(problem_id) if c is not None else None
    if c is None or a is None or who.instructor:        # staff see every score (course.Shown)
        return
    when = Times.load(conn, who.id).shown_when(a, at, c)
    if when is not None:
        raise APIError(409, f"{a.title} ({a.id}): its scores are not shown yet; they are shown {when}. "
                            "Ask for a regrade once they are", code="scores_hidden")


def answer_request(conn: Connection, engine: Engine, request_id: int, who: Principal, response: str, *,
                   score: float | None = None, rubric: list[str] | None = None, comment: str | None = None,
                   at: datetime | None = None) -> JSON:
    r = conn.execute(select(*_REQ).where(RegradeRequest.id == request_id).with_for_update()).first()   # answered once
    if r is None:
        raise not_found("regrade request")
    if r.status != "open":
        raise APIError(409, "this regrade request was answered already")
    review = None
    if score is not None or rubric:
        previous = latest_reviews(conn, [r.answer_id]).get(r.answer_id)
        keep = comment if comment is not None else (previous or {}).get("comment", "")
        review = add_review(conn, engine, r.answer_id, who, score=score, comment=keep, rubric=rubric, at=at)
    at = at or now()
    conn.execute(update(RegradeRequest).where(RegradeRequest.id == request_id, RegradeRequest.status == "open")
                 .values(status="answered", response=response, answered_by=who.id, answered_at=at))
    return {**_request_json(r), "status": "answered", "response": response, "answered_at": iso(at),
            "review": review}


# ------------------------------------------------------------------ what each side sees

def learner_reviews(conn: Connection, engine: Engine, user_id: int, problem_id: str | None = None) -> list[JSON]:
    """A learner's answers that a person reviewed or that have a regrade request, newest first,
    with the review (rubric items' texts), the problem's points and the latest request."""
    q = (select(Answer.id, Answer.problem_id, Answer.raw, Answer.created_at, Answer.status, Answer.pending_points,
                Answer.score)
         .where(Answer.user_id == user_id).order_by(Answer.created_at.desc(), Answer.id).limit(500))
    if problem_id is not None:
        q = q.where(Answer.problem_id == problem_id)
    answers = conn.execute(q).all()
    ids = [a.id for a in answers]
    reviews = latest_reviews(conn, ids) if ids else {}
    requests = latest_requests(conn, ids) if ids else {}
    out = []
    for a in answers:
        if a.id not in reviews and a.id not in requests:
            continue
        p = engine.get(a.problem_id)
        out.append({"answer_id": a.id, "problem": a.problem_id, "answer": a.raw, "submitted_at": iso(a.created_at),
                    "points": json_number(float(p.points) if p else 0.0, digits=6),
                    "score": json_number(reviews[a.id]["counted"] if a.id in reviews else a.score, digits=6),
                    "review": expand(reviews.get(a.id), engine, a.problem_id), "regrade": requests.get(a.id)})
    return out


def may_request(a: Any, reviewed: bool, request: JSON | None) -> bool:
    """Whether a learner may ask for a regrade of this answer now."""
    graded = a.status is not None and (reviewed or not (a.pending_points or 0) > 0)
    return graded and (request is None or request["status"] != "open")


def _course(engine: Engine) -> Any:
    """The service's course (its assessments, loaded with the bank), or None."""
    return engine.course


def queue(conn: Connection, engine: Engine, *, include_reviewed: bool = False, anonymous: bool = False,
          limit: int = 500) -> list[JSON]:
    """Answers waiting for a person, and answers with an open regrade request, by assessment
    (the course's order; problems in none last) and problem (the bank's order), oldest first
    within a problem."""
    open_ids = {r.answer_id: _request_json(r) for r in
                conn.execute(select(*_REQ).where(RegradeRequest.status == "open").order_by(RegradeRequest.id))}
    q = (select(Answer.id, Answer.submission_id, Answer.problem_id, Answer.raw, Answer.feedback, Answer.status,
                Answer.pending_points, Answer.max_score, Answer.created_at, User.login, Answer.result,
                Answer.raw_score, Answer.penalty)
         .join(User, User.id == Answer.user_id)
         .where((Answer.pending_points > 0) | Answer.id.in_(list(open_ids)))
         .order_by(Answer.created_at, Answer.id))
    items = conn.execute(q).all()
    reviews = latest_reviews(conn, [a.id for a in items]) if items else {}
    course = _course(engine)
    assessments = list(course.assessments) if course is not None else []
    order = {p.id: i for i, p in enumerate(engine.problems)}

    def where(pid: str) -> tuple[int, int]:
        a = course.of_problem(pid) if course is not None else None
        return (assessments.index(a) if a is not None else len(assessments), order.get(pid, len(order)))
    items = sorted(items, key=lambda a: where(a.problem_id))
    out = []
    for a in items:
        if a.id in reviews and not include_reviewed and a.id not in open_ids:
            continue
        p = engine.get(a.problem_id)
        points = float(p.points) if p else float((a.max_score or 0) + (a.pending_points or 0))
        of = course.of_problem(a.problem_id) if course is not None else None
        out.append({"assessment": {"id": of.id, "title": of.title} if of is not None else None,"answer_id": a.id, "submission_id": a.submission_id,
                    "learner": None if anonymous else a.login, "pseudonym": pseudonym(a.login),
                    "problem": a.problem_id, "title": p.title if p else "",
                    "prompt": engine.prompt(a.problem_id, a.login) if p else "", "answer": a.raw,
                    "feedback": a.feedback, "status": a.status, "points": json_number(points, digits=6),
                    "submitted_at": iso(a.created_at), "rubric": rubric_of(p),
                    "late_fraction": late_fraction(a.result, a.raw_score, a.penalty),
                    "review": expand(reviews.get(a.id), engine, a.problem_id), "regrade": open_ids.get(a.id)})
        if len(out) >= limit:
            break
    return out


def annotate(conn: Connection, engine: Engine, obj: JSON) -> JSON:
    """A submission's object (:func:`grader.serve.store.load`) with each review's rubric items
    and each answer's latest regrade request."""
    results = obj.get("results") or []
    requests = latest_requests(conn, [r["answer_id"] for r in results]) if results else {}
    for r in results:
        if r.get("review") is not None:
            r["review"] = expand(r["review"], engine, str(r.get("id")))
        if r["answer_id"] in requests:
            r["regrade"] = requests[r["answer_id"]]
    return obj
