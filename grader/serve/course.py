"""Assessments in the service (issue 29): the clock, each learner's window of an assessment
(its extension and the start of a timed quiz from the database), the gate a submission passes
(409 before it opens or after it closes, the late penalty after its due date) and what a
learner is shown of their grades (``show``: immediately, after the due date, on release).

The rules themselves are the bank's pure model (``grader.api``: ``window``, ``apply_late``);
this module only brings the database's rows to them. Without an assessments file
(``Engine.course`` is None) every function here lets everything through unchanged.

What counts as an attempt is :func:`grader.serve.store.counts_as_attempt` (an answer the engine
could read, or a code job queued or running); a submission refused here (409) stores nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from grader.api import Assessment, Course, Window, apply_late, penalised, scores_shown, when, window
from grader.api.service import json_number
from grader.db.models import AssessmentStart, Extension, Release

from .errors import APIError

if TYPE_CHECKING:
    from .app import State

JSON = dict[str, Any]


def clock(state: State) -> datetime:
    """Now, in UTC: ``Settings.now`` where a test sets one, else the system's clock."""
    return state.now()


def aware(dt: datetime) -> datetime:
    """A time from the database as UTC (SQLite gives it back without its zone)."""
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else aware(dt).astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


# ------------------------------------------------------------------ the database's rows

def extensions(conn: Connection, *, user_id: int | None = None,
               assessment_id: str | None = None) -> dict[tuple[int, str], datetime]:
    """The extension that counts (the latest row; a revoked one is absent) per (user, assessment)."""
    q = select(Extension.user_id, Extension.assessment_id, Extension.due).order_by(Extension.created_at, Extension.id)
    if user_id is not None:
        q = q.where(Extension.user_id == user_id)
    if assessment_id is not None:
        q = q.where(Extension.assessment_id == assessment_id)
    latest: dict[tuple[int, str], datetime | None] = {}
    for uid, aid, due in conn.execute(q):
        latest[(uid, aid)] = None if due is None else aware(due)
    return {k: v for k, v in latest.items() if v is not None}


def starts(conn: Connection, *, user_id: int | None = None,
           assessment_id: str | None = None) -> dict[tuple[int, str], datetime]:
    q = select(AssessmentStart.user_id, AssessmentStart.assessment_id, AssessmentStart.started_at)
    if user_id is not None:
        q = q.where(AssessmentStart.user_id == user_id)
    if assessment_id is not None:
        q = q.where(AssessmentStart.assessment_id == assessment_id)
    return {(uid, aid): aware(at) for uid, aid, at in conn.execute(q)}


def releases(conn: Connection) -> dict[str, datetime]:
    """When each released assessment was first released."""
    out: dict[str, datetime] = {}
    for aid, at in conn.execute(select(Release.assessment_id, Release.released_at)
                                .order_by(Release.released_at, Release.id)):
        out.setdefault(aid, aware(at))
    return out


@dataclass(frozen=True)
class Times:
    """One learner's rows: extensions and starts by assessment id, and the course's releases."""

    extensions: dict[str, datetime] = field(default_factory=dict)
    starts: dict[str, datetime] = field(default_factory=dict)
    released: dict[str, datetime] = field(default_factory=dict)

    @classmethod
    def load(cls, conn: Connection, user_id: int) -> Times:
        return cls({aid: d for (_, aid), d in extensions(conn, user_id=user_id).items()},
                   {aid: d for (_, aid), d in starts(conn, user_id=user_id).items()}, releases(conn))

    def window(self, a: Assessment, now: datetime) -> Window:
        return window(a, now, extension=self.extensions.get(a.id), started_at=self.starts.get(a.id))

    def shown_when(self, a: Assessment, now: datetime, course: Course) -> str | None:
        """When this learner's scores and feedback of ``a`` will be shown, while they are not
        yet ("after the due date, 2026-12-04 23:59 CET", "when the staff release them"); None:
        they are shown now."""
        released = self.released.get(a.id)
        w = self.window(a, now)
        if scores_shown(a, w, now, released=released is not None and released <= now):
            return None
        if released is not None and released <= now:    # a release shows an after_due one early too
            return None
        if a.show == "after_due":
            return f"after the due date, {local(w.due, course)}"
        return "when the staff release them"

    def hidden(self, a: Assessment, now: datetime, course: Course) -> str | None:
        """Why this learner's scores and feedback of ``a`` are not shown yet (None: they are)."""
        when = self.shown_when(a, now, course)
        return None if when is None else f"stored and graded; the score and feedback are shown {when}"


def local(dt: datetime, course: Course) -> str:
    """A time as the course shows it: in its time zone, with the zone's name."""
    return when(aware(dt), course.timezone)


# ------------------------------------------------------------------ the gate of a submission

@dataclass(frozen=True)
class Gate:
    """A problem of an assessment that takes the answer now: which, and its window (late: a penalty)."""

    assessment: str
    window: Window


def gate(state: State, conn: Connection, user_id: int, problems: list[str], now: datetime) -> dict[str, Gate]:
    """409 (nothing stored) if one of ``problems`` belongs to an assessment not open to this
    learner now: before it opens, after it closes (its late-until, the learner's extension or a
    timed quiz's end), or a timed quiz not started; else each assessment problem's gate."""
    course = state.engine.course
    if course is None:
        return {}
    mine = [(pid, a) for pid in problems if (a := course.of_problem(pid)) is not None]
    if not mine:
        return {}
    times = Times.load(conn, user_id)
    out: dict[str, Gate] = {}
    for pid, a in mine:
        w = times.window(a, now)
        if w.state in ("not_open", "closed"):
            raise APIError(409, f"{a.title} ({a.id}): {w.message}; nothing was stored",
                           code="not_open" if w.state == "not_open" else "closed", location=f"answers.{pid}")
        if a.time_limit is not None and a.id not in times.starts:
            raise APIError(409, f"{a.title} ({a.id}) is timed ({_minutes(a)}): start it first "
                           f"(POST /api/v1/assessments/{a.id}/start); nothing was stored",
                           code="not_started", location=f"answers.{pid}")
        out[pid] = Gate(a.id, w)
    return out


def _minutes(a: Assessment) -> str:
    limit = a.time_limit.total_seconds() / 60 if a.time_limit is not None else 0
    return f"{limit:g} minutes"


def mark(results: list[JSON], gates: dict[str, Gate]) -> None:
    """Each result of an assessment's problem names it; a late one keeps its raw score and loses
    its penalty (``apply_late``): ``score`` is then the final score."""
    for r in results:
        g = gates.get(str(r.get("id")))
        if g is None:
            continue
        r["assessment"] = g.assessment
        if g.window.state == "late":
            raw = float(r.get("score") or 0)
            final, lost = apply_late(raw, g.window)
            r.update(score=json_number(final, digits=6), raw_score=json_number(raw, digits=6),
                     penalty=json_number(lost, digits=6), late={"fraction": g.window.penalty})


def stored_mark(g: Gate | None) -> JSON:
    """The columns of an answer stored before it is graded: its assessment and, in ``result``,
    the window it was accepted in (replaced by its grade once graded)."""
    if g is None:
        return {"assessment_id": None, "result": None}
    mark: JSON = {"assessment": g.assessment}
    if g.window.state == "late":
        mark["late"] = {"fraction": g.window.penalty}
    return {"assessment_id": g.assessment, "result": mark}


def carry_late(new: JSON, old: JSON | None) -> JSON:
    """A regraded answer keeps its assessment and its late fraction (of the score lost), applied
    to its new score."""
    if not isinstance(old, dict) or "assessment" not in old:
        return new
    out = {**new, "assessment": old["assessment"]}
    late = old.get("late")
    if isinstance(late, dict) and late.get("fraction"):
        raw = float(new.get("score") or 0)
        final, lost = penalised(raw, float(late["fraction"]))   # as apply_late: raw x the window's penalty
        out.update(score=json_number(final, digits=6), raw_score=json_number(raw, digits=6),
                   penalty=json_number(lost, digits=6), late=late)
    return out


def late_fraction(result: object, raw_score: float | None, penalty: float | None) -> float | None:
    """The fraction a late answer loses: its result's ``late.fraction``, else (a row stored without
    it) ``penalty / raw_score`` where both are > 0, else None (on time, or unknown)."""
    late = result.get("late") if isinstance(result, dict) else None
    if isinstance(late, dict) and late.get("fraction") is not None:
        return float(late["fraction"])
    return penalty / raw_score if penalty and raw_score and penalty > 0 and raw_score > 0 else None


def counted_review(score: float, fraction: float | None) -> tuple[float, float]:
    """THE counted score of a reviewed answer: (score that counts, penalty points) of a person's
    ``score`` of an answer losing ``fraction`` (late; None: on time or unknown), by the late
    arithmetic of submissions (:func:`grader.api.penalised`). Every grade of a reviewed answer
    comes from here."""
    return penalised(score, fraction or 0.0)


def rescore(obj: JSON) -> None:
    """A submission's score: the sum of its answers' (after their penalties)."""
    obj["score"] = json_number(round(sum(float(r.get("score") or 0) for r in obj["results"]), 6), digits=6)


# ------------------------------------------------------------------ what a learner is shown

HIDDEN = ("score", "correct", "feedback", "status", "tests", "raw_score", "penalty", "late", "review", "regrade",
          "not_run", "pending_points")


class Shown:
    """What one learner may see of their grades now: :meth:`why` a problem's is hidden."""

    def __init__(self, state: State, conn: Connection | None, user_id: int, now: datetime | None = None) -> None:
        self.course = state.engine.course
        self.now = now or clock(state)
        self.times = Times.load(conn, user_id) if self.course is not None and conn is not None else Times()

    def why(self, problem_id: str) -> str | None:
        if self.course is None:
            return None
        a = self.course.of_problem(problem_id)
        return None if a is None else self.times.hidden(a, self.now, self.course)

    def result(self, r: JSON) -> JSON:
        why = self.why(str(r.get("id")))
        if why is None:
            return r
        out = {k: v for k, v in r.items() if k not in HIDDEN}
        out.update(score=None, correct=None, status="hidden", feedback=why, hidden=True)
        return out

    def submission(self, obj: JSON) -> JSON:
        results = [self.result(r) for r in obj.get("results") or []]
        hidden = sum(1 for r in results if r.get("hidden"))
        if not hidden:
            return obj
        return {**obj, "results": results, "score": None, "hidden": hidden}

    def row(self, row: JSON) -> JSON:
        """A gradebook row (``/me/grades``): hidden cells have no score; the total is of the shown."""
        cells: dict[str, JSON] = {}
        hidden = []
        for pid, c in row["problems"].items():
            if self.why(pid) is None:
                cells[pid] = c
            else:
                cells[pid] = {**c, "score": None, "pending": False, "status": "hidden"}
                hidden.append(pid)
        if not hidden:
            return row
        total = sum(float(c["score"] or 0) for c in cells.values())
        return {**row, "problems": cells, "total": json_number(round(total, 6), digits=6), "hidden": hidden}

    def job(self, job: JSON) -> JSON:
        """A code job: its result (score, tests) hidden like its answer's."""
        why = self.why(str(job.get("problem") or ""))
        if why is None or job.get("kind") != "code" or not isinstance(job.get("result"), dict):
            return job
        result = {k: v for k, v in job["result"].items() if k in ("submission_id", "max_score")}
        return {**job, "result": {**result, "hidden": True, "feedback": why}}


def not_viewable(state: State, conn: Connection, user_id: int, problem_id: str,
                 times: Times | None = None) -> str | None:
    """Why a learner may not see a problem's prompt yet (None: they may): its assessment is
    not open, or it is a timed quiz they have not started (its clock would not have run)."""
    c = state.engine.course
    a = c.of_problem(problem_id) if c is not None else None
    if c is None or a is None:
        return None
    times = times or Times.load(conn, user_id)
    w = times.window(a, clock(state))
    if w.state == "not_open":
        return f"{a.title}: {w.message}"
    if a.time_limit is not None and a.id not in times.starts:
        return f"{a.title} is timed ({_minutes(a)}): start it on its page first"
    return None
