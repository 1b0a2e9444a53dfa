"""Assessments as the API and the pages show them (issue 29): a learner's list and one
assessment with its problems, extensions (granted, revoked, listed), the start of a timed quiz,
the release of scores, and the gradebook of one assessment (JSON, and CSV an LMS imports).

Times are UTC in the JSON (``...Z``), beside the same time written in the course's time zone.
An item's ``points`` in the assessments file scales its problem's score in this gradebook (the
stored answer keeps the bank's points).
"""
from __future__ import annotations

import csv
import io
from collections import defaultdict
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from grader.api import Assessment, Course
from grader.api.service import json_number
from grader.db.models import Answer, AssessmentStart, Extension, Record, Release, Submission, User

from .course import Times, aware, extensions, iso, local, starts
from .errors import APIError, not_found
from .gradebook import counted, csv_safe, grade_of
from .store import latest_reviews

if TYPE_CHECKING:
    from .engine import Engine

JSON = dict[str, Any]


def get(engine: Engine, assessment_id: str) -> tuple[Course, Assessment]:
    """The course and one of its assessments (404: none of that id, or no assessments file)."""
    c = engine.course
    a = c.get(assessment_id) if c is not None else None
    if c is None or a is None:
        raise not_found("assessment")
    return c, a


def learner_id(conn: Connection, login: str) -> int:
    uid = conn.execute(select(User.id).where(User.login == login[:200], User.role == "learner")).scalar()
    if uid is None:
        raise APIError(404, f"no such learner: {login[:200]!r}", location="body.learner")
    return int(uid)


def points(engine: Engine, a: Assessment) -> dict[str, float]:
    """Each problem of ``a`` and its points in ``a`` (the item's override, else the bank's)."""
    return {it.problem_id: float(it.points) if it.points is not None else engine.points(it.problem_id)
            for it in a.items}


def short(title: str, size: int = 24) -> str:
    return title if len(title) <= size else title[: size - 1].rstrip() + "…"


# ------------------------------------------------------------------ staff actions

def grant(conn: Connection, a: Assessment, user_id: int, due: datetime, by: str, reason: str, at: datetime) -> JSON:
    if due.tzinfo is None:
        raise APIError(422, "the new due date needs its time zone (e.g. 2026-12-01T23:59:00Z)", location="body.due")
    conn.execute(insert(Extension).values(user_id=user_id, assessment_id=a.id, due=due, granted_by=by[:200],
                                          reason=reason, created_at=at))
    _passback(conn, [(user_id, a.id)], at, "extension")
    return {"assessment": a.id, "due": iso(due), "granted_by": by, "reason": reason, "created_at": iso(at)}


def revoke(conn: Connection, a: Assessment, user_id: int, by: str, at: datetime) -> bool:
    """The learner's extension ends (a row without a due date); False if they had none."""
    if (user_id, a.id) not in extensions(conn, user_id=user_id, assessment_id=a.id):
        return False
    conn.execute(insert(Extension).values(user_id=user_id, assessment_id=a.id, due=None, granted_by=by[:200],
                                          reason="revoked", created_at=at))
    _passback(conn, [(user_id, a.id)], at, "extension")
    return True


def extension_list(conn: Connection, course: Course, assessment_id: str | None = None) -> list[JSON]:
    """The extensions that count now (the latest of each learner and assessment), by assessment and learner."""
    q = (select(Extension.user_id, Extension.assessment_id, Extension.due, Extension.granted_by, Extension.reason,
                Extension.created_at, User.login, User.name)
         .join(User, User.id == Extension.user_id).order_by(Extension.created_at, Extension.id))
    if assessment_id is not None:
        q = q.where(Extension.assessment_id == assessment_id)
    latest: dict[tuple[int, str], Record] = {}
    for r in conn.execute(q):
        latest[(r.user_id, r.assessment_id)] = r
    out = []
    for r in sorted(latest.values(), key=lambda r: (r.assessment_id, r.login)):
        if r.due is None:
            continue
        a = course.get(r.assessment_id)
        out.append({"assessment": r.assessment_id, "learner": r.login, "name": r.name, "due": iso(r.due),
                    "due_local": local(r.due, course), "original_due": iso(a.due) if a else None,
                    "original_due_local": local(a.due, course) if a else None,
                    "granted_by": r.granted_by, "reason": r.reason, "created_at": iso(r.created_at)})
    return out


def start(conn: Connection, a: Assessment, user_id: int, at: datetime) -> tuple[datetime, bool]:
    """When the learner started ``a`` (now, if not before): (started_at, started now)."""
    from sqlalchemy.dialects import postgresql, sqlite
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(AssessmentStart).values(user_id=user_id, assessment_id=a.id, started_at=at)
    stmt = stmt.on_conflict_do_nothing(index_elements=["user_id", "assessment_id"])
    new = conn.execute(stmt.returning(AssessmentStart.id)).first() is not None
    return starts(conn, user_id=user_id, assessment_id=a.id)[(user_id, a.id)], new


def release(conn: Connection, a: Assessment, by: str, at: datetime) -> JSON:
    conn.execute(insert(Release).values(assessment_id=a.id, released_at=at, released_by=by[:200]))
    from .lti.outbox import enqueue_assessment           # the LMS's gradebook: in this transaction
    enqueue_assessment(conn, a.id, at, "release")
    return {"assessment": a.id, "released_at": iso(at), "released_by": by}


def _passback(conn: Connection, pairs: list[tuple[int, str]], at: datetime, cause: str) -> None:
    from .lti.outbox import enqueue                      # the LMS's gradebook: in this transaction
    enqueue(conn, pairs, at, cause)


# ------------------------------------------------------------------ a learner's view

def window_json(course: Course, a: Assessment, times: Times, now: datetime) -> JSON:
    w = times.window(a, now)
    return {"state": w.state, "message": w.message, "closes": iso(w.closes), "ends_at": iso(w.ends_at),
            "penalty": json_number(w.penalty, digits=6)}


def summary(engine: Engine, course: Course, a: Assessment, times: Times, row: JSON | None, now: datetime,
            staff: bool = False) -> JSON:
    """One assessment as ``GET /assessments`` lists it for a learner (``row``: their gradebook row)."""
    pts = points(engine, a)
    cells = (row or {}).get("problems", {})
    hidden = None if staff else times.hidden(a, now, course)
    answered = sum(1 for pid in pts if pid in cells)
    score = None
    if hidden is None and row is not None:
        score = json_number(round(sum(_scaled(cells.get(pid), pts[pid], engine.points(pid)) or 0 for pid in pts), 6),
                            digits=6)
    limit = a.time_limit.total_seconds() if a.time_limit is not None else None
    return {"id": a.id, "title": a.title, "description": a.description, "timezone": course.timezone,
            "opens": iso(a.opens), "due": iso(a.due), "late_until": iso(a.late_until),
            "opens_local": local(a.opens, course), "due_local": local(a.due, course),
            "late_until_local": local(a.late_until, course) if a.late_until else None,
            "late": {"kind": a.late.kind, "value": a.late.value}, "attempts": a.attempts, "show": a.show,
            "time_limit_s": json_number(limit) if limit is not None else None,
            "window": window_json(course, a, times, now), "extension": iso(times.extensions.get(a.id)),
            "started_at": iso(times.starts.get(a.id)), "problems": len(pts), "answered": answered,
            "score": score, "max_score": json_number(round(sum(pts.values()), 6), digits=6),
            "scores_shown": hidden is None, "hidden_reason": hidden}


def _scaled(c: JSON | None, points_here: float, bank_points: float) -> float | None:
    if not c or c.get("score") is None:
        return None
    s = float(c["score"])
    return round(s * points_here / bank_points, 6) if bank_points and points_here != bank_points else s


def detail(engine: Engine, course: Course, a: Assessment, times: Times, row: JSON | None, now: datetime,
           used: dict[str, int], staff: bool = False) -> JSON:
    """One assessment with its problems (titles, points, attempts used, the score where shown)."""
    out = summary(engine, course, a, times, row, now, staff)
    cells = (row or {}).get("problems", {})
    items = []
    for pid, pts in points(engine, a).items():
        p = engine.get(pid)
        c = cells.get(pid)
        items.append({"id": pid, "title": engine.title(pid), "kind": p.kind if p else None,
                      "points": json_number(pts, digits=6), "attempts": engine.attempts(pid),
                      "attempts_used": used.get(pid, 0), "answered": c is not None,
                      "score": json_number(_scaled(c, pts, engine.points(pid)), digits=6)
                      if out["scores_shown"] else None,
                      "pending": bool(c and c.get("pending")) if out["scores_shown"] else False,
                      "not_counted": engine.not_counted(pid, pts)})
    out["items"] = items
    return out


# ------------------------------------------------------------------ the gradebook of one assessment

def _late_answers(conn: Connection, problem_ids: list[str]) -> dict[str, tuple[float | None, float | None]]:
    q = (select(Answer.id, Answer.raw_score, Answer.penalty).where(Answer.problem_id.in_(problem_ids),
                                                                    Answer.penalty.is_not(None)))
    return {r.id: (r.raw_score, r.penalty) for r in conn.execute(q)}


def _attempts(conn: Connection, problem_ids: list[str], user_id: int | None = None) -> list[Record]:
    q = (select(Answer.id, Answer.user_id, Answer.problem_id, Answer.score, Answer.pending_points, Answer.status)
         .join(Submission, Submission.id == Answer.submission_id)
         .where(Answer.status.is_not(None), Answer.problem_id.in_(problem_ids)))
    if user_id is not None:
        q = q.where(Answer.user_id == user_id)
    return list(conn.execute(q.order_by(Submission.created_at, Answer.position)).all())


def _cell(attempts: list[Record], reviews: dict[str, JSON], bank_points: float, policy: str,
          late: dict[str, tuple[float | None, float | None]], factor: float, here: JSON) -> JSON:
    """A learner's cell of one problem, as :func:`gradebook.cell` counts it (a person's review,
    its late penalty taken, else the engine's score; pending while a person must grade), in the
    assessment's points, with the late penalty of the attempt that counts (a reviewed one's:
    the review's score and the penalty taken from it)."""
    grades = [grade_of(a, reviews) for a in attempts]
    score, chosen, pending = counted(grades, attempts, bank_points, policy)
    raw, lost = late.get(chosen.id, (None, None))
    rv = reviews.get(chosen.id)
    if rv is not None and (lost is not None or rv["penalty"] is not None):     # late (fraction unknown: none taken)
        raw, lost = float(rv["score"]), float(rv["penalty"] or 0)
    return {"score": None if score is None else json_number(round(score * factor, 6), digits=6),
            "max_score": here["max_score"], "attempts": len(attempts), "pending": pending,
            "status": "reviewed" if rv is not None else chosen.status, "late": lost is not None,
            "late_attempts": sum(1 for x in attempts if x.id in late) if late else 0,
            "penalty": json_number(round(lost * factor, 6), digits=6) if lost is not None else None,
            "raw_score": json_number(round(raw * factor, 6), digits=6) if raw is not None else None}


def book(conn: Connection, engine: Engine, a: Assessment, policy: str, user_id: int | None = None) -> JSON:
    """One row per learner (``user_id``: that learner's alone): each problem of ``a`` (its score
    in ``a``'s points; ``late``, the ``penalty`` points lost and the ``raw_score`` of the attempt
    that counts), the total, the learner's extension and start."""
    course = engine.course
    assert course is not None
    pts = points(engine, a)
    ids = list(pts)
    bank = {pid: engine.points(pid) for pid in ids}
    factor = {pid: pts[pid] / bank[pid] if bank[pid] else 1.0 for pid in ids}
    here = {pid: {"max_score": json_number(pts[pid], digits=6)} for pid in ids}
    q = select(User.id, User.login, User.name, User.email).where(User.role == "learner")
    learners = conn.execute(q.where(User.id == user_id) if user_id is not None else q.order_by(User.login)).all()
    by: defaultdict[tuple[int, str], list[Record]] = defaultdict(list)
    for r in _attempts(conn, ids, user_id):
        by[(r.user_id, r.problem_id)].append(r)
    reviews = latest_reviews(conn, problem_ids=ids) if by else {}
    late = _late_answers(conn, ids)
    ext = extensions(conn, assessment_id=a.id)
    began = starts(conn, assessment_id=a.id)
    max_total = json_number(round(sum(pts.values()), 6), digits=6)
    rows = []
    for u in learners:
        cells: dict[str, JSON] = {}
        total = 0.0
        for pid in ids:
            attempts = by.get((u.id, pid))
            if attempts:
                c = cells[pid] = _cell(attempts, reviews, bank[pid], policy, late, factor[pid], here[pid])
                total += c["score"] or 0
        rows.append({"learner": u.login, "name": u.name, "email": u.email, "problems": cells,
                     "total": json_number(round(total, 6), digits=6), "max_total": max_total,
                     "extension": iso(ext.get((u.id, a.id))), "started_at": iso(began.get((u.id, a.id)))})
    return {"assessment": a.id, "title": a.title, "policy": policy, "timezone": course.timezone,
            "due": iso(a.due), "problems": [{"id": pid, "title": engine.title(pid), "short": short(engine.title(pid)),
                                             "points": json_number(pts[pid], digits=6)} for pid in ids],
            "rows": rows}


CANVAS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def book_csv(b: JSON, per_problem: bool = False) -> str:
    """Canvas's gradebook import shape (docs/service.md): Student, ID, SIS User ID, SIS Login ID,
    Section, then one column ``Title (id)`` with the assessment's total (and, ``per_problem``,
    one ``Problem title (problem id)`` per problem). Canvas matches a row by its SIS Login ID;
    Moodle's CSV grade import maps the "SIS Login ID" column to the username."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    extra = [f"{p['title']} ({p['id']})" for p in b["problems"]] if per_problem else []
    w.writerow([*CANVAS, f"{b['title']} ({b['assessment']})", *extra])
    for r in b["rows"]:
        cells = [(r["problems"].get(p["id"]) or {}).get("score") for p in b["problems"]] if per_problem else []
        w.writerow([csv_safe(r["name"] or r["learner"]), "", csv_safe(r["learner"]), csv_safe(r["learner"]), "", r["total"],
                    *["" if c is None else c for c in cells]])
    return buf.getvalue()


def used_attempts(conn: Connection, user_id: int, a: Assessment) -> dict[str, int]:
    from .store import attempts_used
    return attempts_used(conn, user_id, [it.problem_id for it in a.items])


def parse_time(text: str, course: Course, where: str) -> datetime:
    """An ISO 8601 time; without a zone, read in the course's time zone; returned in UTC."""
    from zoneinfo import ZoneInfo
    try:
        t = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise APIError(422, f"{text[:60]!r} is not a time (ISO 8601, e.g. 2026-12-01T23:59 or "
                       "2026-12-01T23:59:00Z)", location=where) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=ZoneInfo(course.timezone))
    try:
        utc = aware(t).astimezone(timezone.utc)
    except OverflowError:       # e.g. 9999-12-31T23:59-23:59: past the last time Python has, in UTC
        utc = None
    if utc is None or not EARLIEST <= utc <= LATEST:
        raise APIError(422, f"{text[:60]!r} is out of range: a time from {EARLIEST.year} to {LATEST.year - 1}",
                       location=where)
    return utc


EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(9000, 1, 1, tzinfo=timezone.utc)     # far from datetime.max: a window's arithmetic never overflows
