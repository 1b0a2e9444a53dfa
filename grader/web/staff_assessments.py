"""The staff's assessment pages (issue 29): the gradebook of one assessment as a tab of
``/staff`` (its CSV, the release of its scores), the extensions (grant, revoke) and the
confirmation before "Regrade everything". Their JSON twins: ``/api/v1/assessments/{id}/gradebook``,
``/api/v1/assessments/{id}/extensions``, ``POST /api/v1/regrade`` (the same functions)."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import func, select

from grader.db import audit
from grader.db.models import Answer, Submission, User
from grader.serve import assessbook, course
from grader.serve.auth import Principal
from grader.serve.errors import APIError

from . import service
from .render import HEADERS, page, redirect
from .session import as_page_error, check_csrf, page_instructor
from .staff import gradebook_html

router = APIRouter(include_in_schema=False)

SHOW = {"immediately": "at once", "after_due": "after the due date", "on_release": "when you release them"}


def _get(request: Request, assessment_id: str) -> Any:
    try:
        return assessbook.get(service.state(request).engine, assessment_id)
    except APIError as e:
        raise as_page_error(e) from None


@router.get("/staff/assessments/{assessment_id}")
def book_page(assessment_id: str, request: Request, sort: str = "learner", order: str = "asc",
              who: Principal = Depends(page_instructor)) -> Response:
    st = service.state(request)
    c, a = _get(request, assessment_id)
    with st.db.read() as conn:
        b = assessbook.book(conn, st.engine, a, st.settings.policy)
        released = course.releases(conn).get(a.id)
    html = gradebook_html(request, st, b["rows"], sort, order, who, **{
        "book": b, "columns": b["problems"], "due_local": course.local(a.due, c), "show_text": SHOW.get(a.show, ""),
        "released": course.local(released, c) if released else None})
    return HTMLResponse(html, headers=HEADERS)


@router.get("/staff/assessments/{assessment_id}/gradebook.csv")
def book_csv(assessment_id: str, request: Request, problems: bool = False,
             who: Principal = Depends(page_instructor)) -> Response:
    from grader.serve.routes.assessments import csv_name
    st = service.state(request)
    _, a = _get(request, assessment_id)
    with st.db.read() as conn:
        b = assessbook.book(conn, st.engine, a, st.settings.policy)
    audit.record(request, "export", actor=who.login, target=f"gradebook:{a.id}",
                 detail={"format": "csv", "rows": len(b["rows"])})
    return Response(assessbook.book_csv(b, problems), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="gradebook-{csv_name(a.id)}.csv"',
                             **HEADERS})


@router.post("/staff/assessments/{assessment_id}/release", dependencies=[Depends(check_csrf)])
def release(assessment_id: str, request: Request, who: Principal = Depends(page_instructor)) -> Response:
    from grader.serve.routes import assessments as routes
    try:
        routes.release(assessment_id, request, who=who)
    except APIError as e:
        raise as_page_error(e) from None
    return redirect(f"/staff/assessments/{assessment_id}")


# ------------------------------------------------------------------ extensions

def _extensions_page(request: Request, who: Principal, error: str | None = None, status: int = 200) -> Response:
    st = service.state(request)
    c = st.engine.course
    with st.db.read() as conn:
        rows = assessbook.extension_list(conn, c) if c is not None else []
        learners = [r.login for r in conn.execute(select(User.login).where(User.role == "learner")
                                                   .order_by(User.login).limit(5000))]
    return page(request, "staff_extensions.html", status=status, who=who, extensions=rows, learners=learners,
                assessments=list(c.assessments) if c is not None else [], timezone=c.timezone if c else "UTC",
                error=error)


@router.get("/staff/extensions")
def extensions_page(request: Request, who: Principal = Depends(page_instructor)) -> Response:
    return _extensions_page(request, who)


@router.post("/staff/extensions", dependencies=[Depends(check_csrf)])
def grant(request: Request, learner: str = Form(..., max_length=200), assessment: str = Form(..., max_length=200),
          due: str = Form(..., max_length=60), reason: str = Form("", max_length=2000),
          who: Principal = Depends(page_instructor)) -> Response:
    from grader.serve.course_schemas import ExtensionIn
    from grader.serve.routes import assessments as routes
    try:
        routes.grant_extension(assessment, ExtensionIn(learner=learner, due=due, reason=reason), request, who=who)
    except APIError as e:
        return _extensions_page(request, who, error=e.message, status=e.status)
    return redirect("/staff/extensions")


@router.post("/staff/extensions/revoke", dependencies=[Depends(check_csrf)])
def revoke(request: Request, learner: str = Form(..., max_length=200), assessment: str = Form(..., max_length=200),
           who: Principal = Depends(page_instructor)) -> Response:
    from grader.serve.routes import assessments as routes
    try:
        routes.revoke_extension(assessment, request, learner=learner, who=who)
    except APIError as e:
        return _extensions_page(request, who, error=e.message, status=e.status)
    return redirect("/staff/extensions")


# ------------------------------------------------------------------ regrade, confirmed

@router.get("/staff/regrade")
def regrade_confirm(request: Request, who: Principal = Depends(page_instructor)) -> Response:
    """What "Regrade everything" would do, and the one button that does it (POST /staff/regrade)."""
    st = service.state(request)
    with st.db.read() as conn:
        answers = conn.execute(select(func.count()).select_from(Answer).join(
            Submission, Submission.id == Answer.submission_id).where(Submission.status == "graded")).scalar_one()
        learners = conn.execute(select(func.count(func.distinct(Submission.user_id)))
                                .where(Submission.status == "graded")).scalar_one()
    return page(request, "staff_regrade.html", who=who, answers=answers, learners=learners)
