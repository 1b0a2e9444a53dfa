"""The learner's assessment pages (issue 29): the list on ``/learn`` (due dates, progress,
scores where shown), ``/learn/assessments/{id}`` (its problems by title, a timed quiz's start
button and remaining time) and what a learner's exercise page may show of a grade. Their JSON
twins: ``GET /api/v1/assessments`` and ``GET /api/v1/assessments/{id}`` (the same functions of
:mod:`grader.serve.assessbook`)."""
from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from grader.serve import assessbook, course, gradebook
from grader.serve.auth import Principal
from grader.serve.errors import APIError

from . import service
from .render import page, redirect
from .session import as_page_error, check_csrf, page_user

if TYPE_CHECKING:
    from grader.serve.app import State

router = APIRouter(include_in_schema=False)
JSON = dict[str, Any]


def relative(when: str | None, now: datetime) -> str:
    """"in 3 days", "in 5 hours", "2 days ago": how far ``when`` (UTC, ISO) is from now."""
    if not when:
        return ""
    t = datetime.fromisoformat(when.replace("Z", "+00:00"))
    s = (t - now).total_seconds()
    n, unit = abs(s), "minute"
    for size, name in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if n >= size:
            n, unit = n / size, name
            break
    else:
        return "now"
    k = int(n)
    text = f"{k} {unit}{'s' if k != 1 else ''}"
    return f"in {text}" if s > 0 else f"{text} ago"


def summaries(st: State, who: Principal) -> list[JSON]:
    """The assessments as ``GET /api/v1/assessments`` gives them to ``who``, with "due in ...". """
    c = st.engine.course
    if c is None:
        return []
    now = course.clock(st)
    with st.db.read() as conn:
        times = course.Times() if who.instructor else course.Times.load(conn, who.id)
        row = None if who.instructor else gradebook.rows(conn, st.engine, st.settings.policy, user_id=who.id)[0]
    out = []
    for a in c.assessments:
        s = assessbook.summary(st.engine, c, a, times, row, now, staff=who.instructor)
        due = s["extension"] or s["due"]
        s["due_in"] = relative(due, now)
        s["due_shown"] = course.local(datetime.fromisoformat(due.replace("Z", "+00:00")), c)
        out.append(s)
    return out


def shown_submission(st: State, who: Principal, sub: JSON) -> JSON:
    """A submission as this learner may see it now (scores and feedback hidden until shown)."""
    if who.instructor or st.engine.course is None:
        return sub
    with st.db.read() as conn:
        return course.Shown(st, conn, who.id).submission(sub)


def shown_context(st: State, who: Principal, problem_id: str, seen: JSON) -> JSON:
    """The exercise page's earlier attempts, result and a person's reviews (``review.learner_context``)
    as this learner may see them now: while its assessment's scores are not shown, none of them
    (and no regrade request can be asked of what cannot be seen)."""
    if who.instructor or st.engine.course is None:
        return seen
    with st.db.read() as conn:
        see = course.Shown(st, conn, who.id)
    why = see.why(problem_id)
    if why is None:
        return seen
    attempts = [{**a, "score": None, "feedback": why, "status": "hidden"} for a in seen["attempts"]]
    result = see.result(seen["result"]) if seen.get("result") else seen.get("result")
    return {**seen, "attempts": attempts, "result": result, "reviews": []}


@router.get("/learn/assessments/{assessment_id}")
def assessment_page(assessment_id: str, request: Request, who: Principal = Depends(page_user)) -> Response:
    st = service.state(request)
    try:
        c, a = assessbook.get(st.engine, assessment_id)
    except APIError as e:
        raise as_page_error(e) from None
    now = course.clock(st)
    with st.db.read() as conn:
        if who.instructor:
            d = assessbook.detail(st.engine, c, a, course.Times(), None, now, {}, staff=True)
        else:
            times = course.Times.load(conn, who.id)
            row = gradebook.rows(conn, st.engine, st.settings.policy, user_id=who.id)[0]
            d = assessbook.detail(st.engine, c, a, times, row, now, assessbook.used_attempts(conn, who.id, a))
    due = d["extension"] or d["due"]
    d["due_in"] = relative(due, now)
    remaining = None
    ends = d["window"]["ends_at"]
    if ends:
        left = (datetime.fromisoformat(ends.replace("Z", "+00:00")) - now).total_seconds()
        remaining = max(0, int(left // 60))
    timed = a.time_limit is not None
    can_open = not timed or (d["started_at"] is not None and d["window"]["state"] in ("open", "late"))
    return page(request, "learn_assessment.html", who=who, a=d, timed=timed, remaining=remaining,
                can_open=can_open or who.instructor, ends_local=course.local(
                    datetime.fromisoformat(ends.replace("Z", "+00:00")), c) if ends else None)


@router.post("/learn/assessments/{assessment_id}/start", dependencies=[Depends(check_csrf)])
def start_page(assessment_id: str, request: Request, who: Principal = Depends(page_user)) -> Response:
    from grader.serve.routes import assessments as routes
    try:
        routes.start(assessment_id, request, who=who)
    except APIError as e:
        raise as_page_error(e) from None
    return redirect(f"/learn/assessments/{assessment_id}")
