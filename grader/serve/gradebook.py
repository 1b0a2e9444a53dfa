"""The gradebook (one row per learner, one cell per problem) and a problem's statistics (the
answers waiting for a person: :mod:`grader.serve.reviews`).

A cell is the learner's grade of one problem under the policy: the ``best`` of their attempts
or the ``last`` one. An attempt's grade is a person's review where there is one (a late
answer's penalty applied to it), else the engine's score; an answer a person must grade and
nobody has is pending (no score yet).
"""
from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from grader.api import AnswerResult, Report, SubmissionResult
from grader.api import summarize_class
from grader.api.service import json_number

from grader.db.models import Answer, Record, Submission, User

from .errors import not_found
from .store import NOT_READ, latest_reviews

if TYPE_CHECKING:
    from .engine import Engine

JSON = dict[str, Any]


def _attempts(conn: Connection, user_id: int | None = None, problem_id: str | None = None) -> Sequence[Record]:
    q = (select(Answer.id, Answer.user_id, Answer.problem_id, Answer.score, Answer.pending_points, Answer.status,
                Answer.raw, Answer.feedback, Answer.result)
         .join(Submission, Submission.id == Answer.submission_id)
         .where(Answer.status.is_not(None), Answer.status != NOT_READ)      # graded attempts (store.counts_as_attempt)
         .order_by(Submission.created_at, Answer.position))
    if user_id is not None:
        q = q.where(Answer.user_id == user_id)
    if problem_id is not None:
        q = q.where(Answer.problem_id == problem_id)
    return conn.execute(q).all()


def grade_of(a: Record, reviews: dict[str, JSON]) -> float | None:
    """An attempt's grade: a person's review where there is one (the score that counts: a late
    answer's penalty taken, ``course.counted_review``), else the engine's; None while pending."""
    if a.id in reviews:
        return float(reviews[a.id]["counted"])
    if a.pending_points:
        return None
    return None if a.score is None else float(a.score)


def counted(grades: Sequence[float | None], attempts: Sequence[Record], points: float,
            policy: str) -> tuple[float | None, Record, bool]:
    """The attempt that counts under ``policy`` (``last``, or ``best`` of those with a grade):
    (its grade, the attempt, whether the cell is pending: a grade still to come from a person
    that could change it). ``grades[i]`` is ``attempts[i]``'s (None: not graded yet)."""
    if policy == "last":
        return grades[-1], attempts[-1], grades[-1] is None
    known = [(g, a) for g, a in zip(grades, attempts) if g is not None]
    score, chosen = max(known, key=lambda t: t[0]) if known else (None, attempts[-1])
    return score, chosen, any(g is None for g in grades) and (score is None or score < points)


def cell(attempts: Sequence[Record], reviews: dict[str, JSON], points: float, policy: str) -> JSON:
    grades = [grade_of(a, reviews) for a in attempts]
    score, chosen, pending = counted(grades, attempts, points, policy)
    status = "reviewed" if chosen.id in reviews else chosen.status
    return {"score": json_number(score, digits=6), "max_score": json_number(points, digits=6),
            "attempts": len(attempts), "pending": pending, "status": status}


def rows(conn: Connection, engine: Engine, policy: str, user_id: int | None = None) -> list[JSON]:
    """One row per learner (or only ``user_id``'s)."""
    q = select(User.id, User.login, User.name, User.email).where(User.role == "learner").order_by(User.login)
    if user_id is not None:
        q = select(User.id, User.login, User.name, User.email).where(User.id == user_id)
    learners = conn.execute(q).all()
    by: defaultdict[tuple[int, str], list[Record]] = defaultdict(list)
    for a in _attempts(conn, user_id=user_id):
        by[(a.user_id, a.problem_id)].append(a)
    reviews = latest_reviews(conn, user_id=user_id)
    out = []
    for u in learners:
        cells: dict[str, JSON] = {}
        total, pending_points = 0.0, 0.0
        for p in engine.problems:
            attempts = by.get((u.id, p.id))
            if not attempts:
                continue
            c = cell(attempts, reviews, float(p.points), policy)
            cells[p.id] = c
            total += c["score"] or 0
            if c["score"] is None and c["pending"]:
                pending_points += float(p.points)
        out.append({"learner": u.login, "name": u.name, "email": u.email, "problems": cells,
                    "total": json_number(total, digits=6), "max_total": json_number(engine.total, digits=6),
                    "pending_points": json_number(pending_points, digits=6)})
    return out


def as_csv(table: list[JSON], engine: Engine) -> str:
    """One row per learner, one column per problem (empty: not answered or waiting for a
    person), then total, max_total and pending_points: a spreadsheet's or an LMS's import."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    ids = [p.id for p in engine.problems]
    w.writerow(["learner", "name", "email", *ids, "total", "max_total", "pending_points"])
    for r in table:
        cells = [r["problems"].get(pid, {}).get("score") for pid in ids]
        w.writerow([csv_safe(r["learner"]), csv_safe(r["name"]), csv_safe(r["email"]),
                    *["" if c is None else c for c in cells], r["total"], r["max_total"], r["pending_points"]])
    return buf.getvalue()


def csv_safe(text: str) -> str:
    """A cell a spreadsheet will not run as a formula (CSV injection): one that starts with
    ``= + - @``, a tab or a carriage return gets a leading apostrophe."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _shown(raw: object) -> str:
    """An answer as the class summary writes it (its examples): text as it is, a number as
    written, anything else as its repr."""
    return raw if isinstance(raw, str) else str(raw) if isinstance(raw, (int, float)) else repr(raw)


def _wrong_groups(attempts: Sequence[Record], reviews: dict[str, JSON], points: float) -> list[JSON]:
    """The most common wrong answers (wrong, partial, invalid; a person's review takes an answer
    out), grouped by their feedback: the engine's class summary (``grader grade --summary``) of
    these attempts, each attempt a submission of its own."""
    subs: list[SubmissionResult] = []
    raws: dict[str, object] = {}
    for a in attempts:
        wrong = a.status in ("wrong", "partial", "invalid") and a.id not in reviews
        r = a.result if isinstance(a.result, dict) else {}
        raws.setdefault(_shown(a.raw), a.raw)
        result = AnswerResult(id=a.problem_id, answer=a.raw, score=float(a.score or 0), max_score=points,
                              correct=False if wrong else True, feedback=a.feedback or "", status=a.status or "",
                              read_as=r.get("read_as"), variant=r.get("variant"))
        subs.append(SubmissionResult(str(a.user_id), "", None, (result,), float(a.score or 0), points))
    summary = summarize_class(Report(tuple(subs), (), False), {attempts[0].problem_id: points} if attempts else None)
    groups = summary.problems[0].wrong if summary.problems else ()
    return [{"feedback": g.feedback.strip(), "answers": g.answers, "learners": g.learners,
             "examples": [raws.get(text, text) for text, _ in g.examples]} for g in groups[:10]]


def stats(conn: Connection, engine: Engine, problem_id: str, policy: str) -> JSON:
    p = engine.get(problem_id)
    if p is None:
        raise not_found("problem")
    attempts = _attempts(conn, problem_id=problem_id)
    reviews = latest_reviews(conn, [a.id for a in attempts]) if attempts else {}
    per_learner: defaultdict[int, list[Record]] = defaultdict(list)
    for a in attempts:
        per_learner[a.user_id].append(a)
    cells = [cell(v, reviews, float(p.points), policy) for v in per_learner.values()]
    scores = [c["score"] for c in cells if c["score"] is not None]
    return {
        "problem": p.id, "kind": p.kind, "points": json_number(float(p.points), digits=6), "policy": policy,
        "answers": len(attempts), "learners": len(per_learner),
        "correct": sum(1 for a in attempts if a.status == "correct"),
        "pending": sum(1 for c in cells if c["pending"]),
        "mean": json_number(round(sum(scores) / len(scores), 4), digits=6) if scores else None,
        "distribution": [{"score": json_number(s, digits=6), "learners": n}
                         for s, n in sorted(Counter(scores).items())],
        "common_wrong": _wrong_groups(attempts, reviews, float(p.points)),
    }
