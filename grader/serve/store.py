"""Submissions: stored first (committed), then graded in a worker, then their grades stored.

A submission's row and its answers are committed before grading starts, and the response is
sent only after the grades are committed: whatever crashes, a 2xx means the submission is in
the database with its grade. One stored but not graded (the server died while grading it) is
graded at the next start-up, or when the client retries with the same ``Idempotency-Key``.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast

import anyio
from sqlalchemy import ColumnElement, Table, bindparam, func, insert, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from grader.api.service import answer_shape, json_number
from grader.db.models import Answer, Job, Record, Review, Submission, User, new_id, now

from .course import counted_review, late_fraction
from .errors import APIError, not_found
from .workers import TaskFailed

if TYPE_CHECKING:
    from .app import State
    from .auth import Principal

JSON = dict[str, Any]

log = logging.getLogger("grader.serve")
A, S = cast(Table, Answer.__table__), cast(Table, Submission.__table__)

# the hot path's statements, built once (a statement built per request costs more than running it)
INSERT_SUBMISSION, INSERT_ANSWERS = insert(S), insert(A)
BY_KEY = select(S.c.id, S.c.body_hash).where(S.c.user_id == bindparam("b_user"), S.c.idempotency_key == bindparam("b_key"))
GRADED = update(S).where(S.c.id == bindparam("b_sid"), S.c.status == "received").values(
    status="graded", graded_at=bindparam("b_at"), score=bindparam("b_score"), max_score=bindparam("b_max"),
    pending_points=bindparam("b_pending"), unanswered=bindparam("b_unanswered"))
UPDATE_ANSWER = update(A).where(A.c.id == bindparam("b_id")).values(
    status=bindparam("status"), correct=bindparam("correct"), score=bindparam("score"),
    max_score=bindparam("max_score"), pending_points=bindparam("pending_points"), feedback=bindparam("feedback"),
    result=bindparam("result"), assessment_id=bindparam("assessment_id"), raw_score=bindparam("raw_score"),
    penalty=bindparam("penalty"))


def iso(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:           # SQLite gives back what it was given, less the zone: UTC
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.isoformat().replace("+00:00", "Z")


NOT_READ = "invalid"     # an answer the engine could not read: stored and shown, never an attempt


def counts_as_attempt() -> ColumnElement[bool]:
    """An attempt is an answer the engine could read (graded, or waiting for a person) or one
    still being graded; one it could not read (``invalid``) is kept but is no attempt: it uses
    none of an ``attempts:`` limit and is no grade in the gradebook (docs/service.md)."""
    return or_(Answer.status.is_(None), Answer.status != NOT_READ)


def attempts_used(conn: Connection, user_id: int, problems: Iterable[str]) -> dict[str, int]:
    """How many attempts (answers, and code jobs not yet graded) the learner has made per problem."""
    problems = list(problems)
    used: dict[str, int] = dict(conn.execute(select(Answer.problem_id, func.count())
                             .join(Submission, Submission.id == Answer.submission_id).where(
        Answer.user_id == user_id, Answer.problem_id.in_(problems), Submission.status != "failed",
        counts_as_attempt())
        .group_by(Answer.problem_id)).all())
    for pid, n in conn.execute(select(Job.problem_id, func.count()).where(
            Job.user_id == user_id, Job.kind == "code", Job.status.in_(("queued", "running")),
            Job.problem_id.in_(problems)).group_by(Job.problem_id)).all():
        if pid is not None:
            used[pid] = used.get(pid, 0) + n
    return used


def check_attempts(state: State, conn: Connection, user_id: int, problems: Iterable[str]) -> None:
    """409 if a problem with an ``attempts:`` limit has none left (the learner's row locked
    first on PostgreSQL, so two requests cannot both take the last one)."""
    given = {pid: state.engine.attempts(pid) for pid in problems}
    limits = {pid: n for pid, n in given.items() if n}
    if not limits:
        return
    conn.execute(select(User.id).where(User.id == user_id).with_for_update())
    used = attempts_used(conn, user_id, limits)
    over = [f"{pid} ({used.get(pid, 0)} of {n} used)" for pid, n in limits.items() if used.get(pid, 0) >= n]
    if over:
        raise APIError(409, "no attempts left for " + ", ".join(over) + "; nothing was stored",
                       code="attempts_exhausted", location=f"answers.{over[0].split(' ')[0]}")


SHAPE = answer_shape()      # the engine's own limits on what an answer may be


def check_shape(answers: dict[str, object], where: str = "answers") -> None:
    """422 for an answer beyond the engine's limits on its shape (depth, items, text), checked
    once here, at the boundary, before anything is stored, pickled or handed to a worker."""
    for pid, raw in answers.items():
        why = SHAPE.problem(raw)
        if why:
            raise APIError(422, f"the answer to {str(pid)[:200]!r} cannot be an answer: {why}; nothing was stored",
                           location=f"{where}.{str(pid)[:200]}")


def _answer_rows(sub_id: str, user_id: int, answers: dict[str, object], created: datetime) -> list[JSON]:
    return [{"id": new_id(), "submission_id": sub_id, "user_id": user_id, "problem_id": pid, "position": i,
             "raw": raw, "created_at": created} for i, (pid, raw) in enumerate(answers.items())]


async def submit(state: State, who: Principal, answers: dict[str, object], key: str | None,
                 body_hash: str) -> tuple[int, JSON]:
    """Store (committed), grade (in a worker), store the grades (committed), answer: (HTTP
    status, the submission's object). Runs on the event loop; the database and the workers are
    reached through futures."""
    from . import course
    check_shape(answers)
    sub_id, created = new_id(), state.now()
    rows = _answer_rows(sub_id, who.id, answers, created)
    gates: dict[str, course.Gate] = {}

    def store(conn: Connection) -> Record | None:
        if key:
            found = conn.execute(BY_KEY, {"b_user": who.id, "b_key": key}).first()
            if found is not None:
                return found
        gates.update(course.gate(state, conn, who.id, list(answers), course.clock(state)))
        check_attempts(state, conn, who.id, answers)
        if gates:           # kept with the answer until it is graded (a recovery grades it with its window)
            for row in rows:
                row.update(course.stored_mark(gates.get(row["problem_id"])))
        conn.execute(INSERT_SUBMISSION, {"id": sub_id, "user_id": who.id, "idempotency_key": key,
                                         "body_hash": body_hash, "source": "api", "status": "received",
                                         "created_at": created})
        conn.execute(INSERT_ANSWERS, rows)
        return None
    try:
        existing = await asyncio.wrap_future(state.db.submit_write(store))
    except IntegrityError:              # the same key, committed meanwhile by a concurrent request
        existing = await anyio.to_thread.run_sync(_by_key, state, who.id, key or "")
    if existing is not None:
        if existing.body_hash != body_hash:
            raise APIError(422, "this Idempotency-Key was used for a different request",
                           code="idempotency_key_reused", location="header.Idempotency-Key")
        return 200, await anyio.to_thread.run_sync(replay, state, existing.id)
    state.metrics.submissions.labels("api").inc()
    t0 = time.perf_counter()
    try:
        obj = await asyncio.wrap_future(state.pool.submit(("grade", who.login, answers), _deadline(state, answers)))
    except TaskFailed as e:
        obj = await anyio.to_thread.run_sync(_one_by_one, state, who.login, answers, e)
    state.metrics.grading.labels("submission").observe(time.perf_counter() - t0)
    _check(obj, answers)
    if gates:
        course.mark(obj["results"], gates)
        course.rescore(obj)
    graded_at = state.now()
    await asyncio.wrap_future(state.db.submit_write(lambda conn: _record(conn, sub_id, rows, obj, graded_at)))
    view = {"id": sub_id, "learner": who.login, "source": "api", "status": "graded", "created_at": iso(created),
            "graded_at": iso(graded_at), **{k: v for k, v in obj.items() if k not in ("learner", "results")},
            "results": [{**r, "answer_id": row["id"]} for r, row in zip(obj["results"], rows)]}
    return 201, view


def _by_key(state: State, user_id: int, key: str) -> Record:
    with state.db.read() as conn:
        found = conn.execute(select(Submission.id, Submission.body_hash).where(
            Submission.user_id == user_id, Submission.idempotency_key == key)).first()
    if found is None:
        raise RuntimeError("an Idempotency-Key conflict, but no submission with that key")
    return found


def _deadline(state: State, answers: dict[str, object]) -> float:
    """The watchdog's: the engine's own limit per answer, and some slack."""
    return state.settings.timeout_s * max(1, len(answers)) + 10


def _check(obj: JSON, answers: dict[str, object]) -> None:
    if len(obj["results"]) != len(answers):     # the engine answers each once, in order
        raise RuntimeError("the engine did not return one result per answer")


def _one_by_one(state: State, learner: str, answers: dict[str, object], failure: TaskFailed) -> JSON:
    """The whole submission's check was killed (or its worker died): each answer alone, so
    that only the one past its limits gets 0 as too complex."""
    if failure.reason == "closed":
        raise APIError(503, f"grading is unavailable: {failure}", headers={"Retry-After": "5"})
    log.warning("a submission's grading failed (%s); its answers are graded one by one", failure)
    s, results = state.settings, []
    for pid, raw in answers.items():
        try:
            results.append(state.pool.call(("grade", learner, {pid: raw}), s.timeout_s + 5)["results"][0])
        except TaskFailed:
            results.append(state.engine.too_complex(pid, raw, s.timeout_s))
    return state.engine.assemble(learner, results)


def grade(state: State, learner: str, answers: dict[str, object]) -> JSON:
    """The submission's object, graded in a worker (from a thread: recovery, replays)."""
    try:
        obj: JSON = state.pool.call(("grade", learner, answers), _deadline(state, answers))
    except TaskFailed as e:
        obj = _one_by_one(state, learner, answers, e)
    _check(obj, answers)
    return obj


def record(state: State, sub_id: str, rows: list[JSON], obj: JSON) -> bool:
    """Store the grades (once: False if the submission was graded meanwhile)."""
    with state.db.write() as conn:
        return _record(conn, sub_id, rows, obj, state.now())


def _record(conn: Connection, sub_id: str, rows: list[JSON], obj: JSON, at: datetime) -> bool:
    n = conn.execute(GRADED, {"b_sid": sub_id, "b_at": at, "b_score": float(obj["score"]),
                              "b_max": float(obj["max_score"]), "b_pending": float(obj.get("pending_points") or 0),
                              "b_unanswered": obj.get("unanswered")}).rowcount
    if n:
        update_answers(conn, [(row["id"], r) for r, row in zip(obj["results"], rows)])
        if any(isinstance(r, dict) and r.get("assessment") for r in obj["results"]):
            from .lti.outbox import enqueue_results      # the LMS's gradebook: in this transaction
            uid = conn.execute(select(S.c.user_id).where(S.c.id == sub_id)).scalar_one()
            enqueue_results(conn, uid, obj["results"], at, "graded")
    return bool(n)


def update_answers(conn: Connection, graded: list[tuple[str, JSON]]) -> None:
    """Store each (answer id, per-answer object) as that answer's grade."""
    params = [{"b_id": aid, "status": r.get("status"), "correct": r.get("correct"),
               "score": float(r.get("score") or 0), "max_score": float(r.get("max_score") or 0),
               "pending_points": float(r.get("pending_points") or 0), "feedback": r.get("feedback"), "result": r,
               **late_columns(r)} for aid, r in graded]
    if params:
        conn.execute(UPDATE_ANSWER, params)


def late_columns(r: JSON) -> JSON:
    """An answer's assessment, raw score and late penalty, as its result names them."""
    def number(key: str) -> float | None:
        return None if r.get(key) is None else float(r[key])
    aid = r.get("assessment")
    return {"assessment_id": aid if isinstance(aid, str) else None, "raw_score": number("raw_score"),
            "penalty": number("penalty")}


def _stored_answers(conn: Connection, sub_id: str) -> Sequence[Record]:
    return conn.execute(select(Answer.id, Answer.problem_id, Answer.raw, Answer.result).where(Answer.submission_id == sub_id)
                        .order_by(Answer.position)).all()


def grade_stored(state: State, sub_id: str, learner: str) -> None:
    """Grade a submission that was stored but not graded (an answer to an assessment keeps the
    window it was accepted in: its late penalty)."""
    from .course import carry_late, rescore
    with state.db.read() as conn:
        stored = _stored_answers(conn, sub_id)
    answers = {a.problem_id: a.raw for a in stored}
    obj = grade(state, learner, answers)
    if any(isinstance(a.result, dict) for a in stored):
        obj["results"] = [carry_late(r, a.result if isinstance(a.result, dict) else None)
                          for r, a in zip(obj["results"], stored)]
        rescore(obj)
    record(state, sub_id, [{"id": a.id} for a in stored], obj)


def replay(state: State, sub_id: str) -> JSON:
    """The stored submission of a repeated Idempotency-Key (graded now if it was not yet)."""
    with state.db.read() as conn:
        row = conn.execute(select(Submission.status, User.login).join(User, User.id == Submission.user_id)
                           .where(Submission.id == sub_id)).one()
    if row.status == "received":
        grade_stored(state, sub_id, row.login)
    with state.db.read() as conn:
        return load(conn, sub_id)


RECOVERY_TRIES = 3      # a stored submission that cannot be graded at start-up: tries before it is failed


def recover(state: State) -> int:
    """At start-up: grade every submission stored but not graded by the last run."""
    with state.db.read() as conn:
        todo = conn.execute(select(Submission.id, User.login).join(User, User.id == Submission.user_id)
                            .where(Submission.status == "received").order_by(Submission.created_at)).all()
    for sub_id, login in todo:
        for attempt in range(1, RECOVERY_TRIES + 1):
            try:
                grade_stored(state, sub_id, login)
                break
            except Exception as e:
                log.exception("grading stored submission %s (try %d of %d)", sub_id, attempt, RECOVERY_TRIES)
                why = f"{type(e).__name__}: {e}"[:500]
        else:       # never again: a request that stops grading cannot stop it at every start
            with state.db.write() as conn:
                conn.execute(update(S).where(S.c.id == sub_id, S.c.status == "received")
                             .values(status="failed", graded_at=now()))
            log.error("stored submission %s could not be graded in %d tries (%s); it is marked failed",
                      sub_id, RECOVERY_TRIES, why)
    if todo:
        log.warning("%d submission(s) stored but not graded by the last run were graded", len(todo))
    return len(todo)


def latest_reviews(conn: Connection, answer_ids: Iterable[str] | None = None, user_id: int | None = None,
                   problem_ids: Iterable[str] | None = None) -> dict[str, JSON]:
    """The review that counts (the latest) of each reviewed answer: the reviewer's ``score``,
    and ``counted`` (after a late answer's ``penalty`` points: :func:`counted_review`)."""
    q = (select(Review.answer_id, Review.score, Review.comment, Review.created_at, Review.rubric, User.login,
                Answer.result, Answer.raw_score, Answer.penalty)
         .join(User, User.id == Review.reviewer_id).join(Answer, Answer.id == Review.answer_id)
         .order_by(Review.created_at, Review.id))
    if answer_ids is not None:
        q = q.where(Review.answer_id.in_(list(answer_ids)))
    if problem_ids is not None:
        q = q.where(Answer.problem_id.in_(list(problem_ids)))
    if user_id is not None:
        q = q.where(Answer.user_id == user_id)
    out = {}
    for r in conn.execute(q):
        f = late_fraction(r.result, r.raw_score, r.penalty)
        counted, lost = counted_review(float(r.score), f)
        out[r.answer_id] = {"score": r.score, "comment": r.comment, "reviewer": r.login, "at": iso(r.created_at),
                            "rubric": list(r.rubric or []), "counted": json_number(counted, digits=6),
                            "penalty": None if f is None else json_number(lost, digits=6), "late_fraction": f}
    return out


def load(conn: Connection, sub_id: str, *, owner: int | None = None) -> JSON:
    """A stored submission's object; ``owner``: only if it is that user's (else 404, as if it
    did not exist)."""
    q = (select(Submission.id, Submission.source, Submission.status, Submission.created_at, Submission.graded_at,
                Submission.score, Submission.max_score, Submission.pending_points, Submission.unanswered, User.login)
         .join(User, User.id == Submission.user_id).where(Submission.id == sub_id))
    if owner is not None:
        q = q.where(Submission.user_id == owner)
    sub = conn.execute(q).first()
    if sub is None:
        raise not_found("submission")
    answers = conn.execute(select(Answer.id, Answer.problem_id, Answer.raw, Answer.result)
                           .where(Answer.submission_id == sub_id).order_by(Answer.position)).all()
    reviews = latest_reviews(conn, [a.id for a in answers])
    results = []
    for a in answers:
        graded = isinstance(a.result, dict) and "id" in a.result      # (not a stored answer's assessment mark)
        r = dict(a.result) if graded else {"id": a.problem_id, "answer": a.raw, "status": None}
        r.pop("job_id", None)
        r["answer_id"] = a.id
        if a.id in reviews:
            r["review"] = reviews[a.id]
        results.append(r)
    return {"id": sub.id, "learner": sub.login, "source": sub.source, "status": sub.status,
            "created_at": iso(sub.created_at), "graded_at": iso(sub.graded_at), "score": _num(sub.score),
            "max_score": _num(sub.max_score), "pending_points": _num(sub.pending_points), "results": results,
            "unanswered": sub.unanswered}


_num = json_number


def insert_graded(conn: Connection, user_id: int, obj: JSON, source: str, created: datetime | None = None) -> str:
    """A submission graded elsewhere (a code job, a batch), stored with its grades (``created``:
    the service's clock, State.now, when it was graded)."""
    sub_id, created = new_id(), created or now()
    conn.execute(insert(S).values(id=sub_id, user_id=user_id, body_hash="", source=source, status="graded",
                                  created_at=created, graded_at=created, score=float(obj.get("score") or 0),
                                  max_score=float(obj.get("max_score") or 0),
                                  pending_points=float(obj.get("pending_points") or 0),
                                  unanswered=obj.get("unanswered")))
    rows = [{"id": new_id(), "submission_id": sub_id, "user_id": user_id, "problem_id": str(r["id"]), "position": i,
             "raw": r.get("answer"), "created_at": created, "status": r.get("status"), "correct": r.get("correct"),
             "score": float(r.get("score") or 0), "max_score": float(r.get("max_score") or 0),
             "pending_points": float(r.get("pending_points") or 0), "feedback": r.get("feedback"), "result": r,
             **late_columns(r)} for i, r in enumerate(obj["results"])]
    if rows:
        conn.execute(insert(A), rows)
        from .lti.outbox import enqueue_results          # the LMS's gradebook: in this transaction
        enqueue_results(conn, user_id, obj["results"], created, source)
    return sub_id
