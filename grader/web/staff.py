"""The staff's pages (``/staff``): the gradebook (sortable, CSV), a problem's statistics with
its score distribution plotted, a learner, a batch upload and a regrade with their jobs, the
audit log."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, Query, Request, UploadFile
from fastapi.responses import Response
from sqlalchemy import select

from grader.db import audit
from grader.db.models import Answer, User
from grader.serve import gradebook, itemstats
from grader.serve.assessbook import short
from grader.serve.auth import Principal
from grader.serve.errors import APIError
from grader.errors import InputError

from grader.api.service import distribution_plot

from . import service
from .render import HEADERS, page, redirect
from .session import PageError, as_page_error, check_csrf, page_instructor

if TYPE_CHECKING:
    from grader.serve.app import State

router = APIRouter(include_in_schema=False)
PAGE = 100


def sort_rows(table: list[dict[str, Any]], key: str, order: str) -> list[dict[str, Any]]:
    """Rows by learner, name, total or one problem's score (unanswered last either way)."""
    reverse = order == "desc"
    if key in ("learner", "name"):
        return sorted(table, key=lambda r: (r[key] or "").lower(), reverse=reverse)
    if key == "total":
        return sorted(table, key=lambda r: float(r["total"]), reverse=reverse)
    have = [r for r in table if (r["problems"].get(key) or {}).get("score") is not None]
    rest = [r for r in table if (r["problems"].get(key) or {}).get("score") is None]
    return sorted(have, key=lambda r: float(r["problems"][key]["score"]), reverse=reverse) + rest


def gradebook_html(request: Request, st: State, table: list[dict[str, Any]], sort: str, order: str,
                   who: Principal | None = None, **extra: Any) -> str:
    from .render import env
    from .session import csrf_token
    problems = [p.id for p in st.engine.problems]
    if sort not in ("learner", "name", "total", *problems):
        sort = "learner"
    order = "desc" if order == "desc" else "asc"
    rows = sort_rows(table, sort, order)
    titles = [getattr(p, "title", "") or p.id for p in st.engine.problems]
    columns = [{"id": pid, "title": t, "short": short(t)} for pid, t in zip(problems, titles)]
    ctx: dict[str, Any] = {"columns": columns, "book": None, **extra}     # extra: an assessment's tab
    html: str = env().get_template("staff_gradebook.html").render(
        request=request, who=who, csrf=csrf_token(request), rows=rows, problems=problems, sort=sort, order=order,
        policy=st.settings.policy, total=st.engine.total, tabs=tabs(st), **ctx)
    return html


def tabs(st: State) -> list[dict[str, str]]:
    """One tab per assessment of the course (none without an assessments file)."""
    c = getattr(st.engine, "course", None)        # (a benchmark's stand-in engine has none)
    return [{"id": a.id, "title": a.title, "short": short(a.title, 20)} for a in c.assessments] if c else []


@router.get("/staff")
def gradebook_page(request: Request, sort: str = "learner", order: str = "asc", who: Principal = Depends(page_instructor)) -> Response:
    st = service.state(request)
    with st.db.read() as conn:
        table = gradebook.rows(conn, st.engine, st.settings.policy)
    html = gradebook_html(request, st, table, sort, order, who)
    from fastapi.responses import HTMLResponse
    return HTMLResponse(html, headers=HEADERS)


@router.get("/staff/gradebook.csv")
def gradebook_csv(request: Request, who: Principal = Depends(page_instructor)) -> Response:
    st = service.state(request)
    with st.db.read() as conn:
        table = gradebook.rows(conn, st.engine, st.settings.policy)
    audit.record(request, "export", actor=who.login, target="gradebook", detail={"format": "csv", "rows": len(table)})
    return Response(gradebook.as_csv(table, st.engine), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="gradebook.csv"', **HEADERS})


@router.get("/staff/problems/{problem_id:path}")
def problem_page(problem_id: str, request: Request, who: Principal = Depends(page_instructor)) -> Response:
    st = service.state(request)
    p = st.engine.get(problem_id)
    if p is None:
        raise PageError(404, "No such problem.")
    with st.db.read() as conn:
        stats = itemstats.problem(conn, st.engine, problem_id, st.settings.policy)
    plot = distribution_plot(float(p.points), stats["distribution"],
                              f"{problem_id}: learners by score ({st.settings.policy} attempt)") \
        if stats["distribution"] else None
    return page(request, "staff_problem.html", who=who, stats=stats, plot=plot, prompt=p.prompt,
                title=getattr(p, "title", None))


@router.get("/staff/learners/{login}")
def learner_page(login: str, request: Request, who: Principal = Depends(page_instructor)) -> Response:
    st = service.state(request)
    with st.db.read() as conn:
        uid = conn.execute(select(User.id).where(User.login == login[:200], User.role == "learner")).scalar()
        if uid is None:
            raise PageError(404, "No such learner.")
        row = gradebook.rows(conn, st.engine, st.settings.policy, user_id=uid)[0]
        answers = conn.execute(select(Answer.problem_id, Answer.raw, Answer.created_at, Answer.score, Answer.max_score,
                                      Answer.status, Answer.feedback).where(Answer.user_id == uid)
                               .order_by(Answer.created_at.desc()).limit(500)).all()
    return page(request, "staff_learner.html", who=who, row=row, answers=answers,
                problems=[p.id for p in st.engine.problems], titles={p.id: p.title for p in st.engine.problems})


@router.get("/staff/batch")
def batch_form(request: Request, who: Principal = Depends(page_instructor)) -> Response:
    return page(request, "staff_batch.html", who=who, error=None)


@router.post("/staff/batch", dependencies=[Depends(check_csrf)])
async def batch(request: Request, file: UploadFile, who: Principal = Depends(page_instructor)) -> Response:
    try:
        job = await service.batch(request, file, who)
    except APIError as e:
        return page(request, "staff_batch.html", status=e.status, who=who, error=e.message)
    return redirect(f"/staff/jobs/{job['id']}")


@router.post("/staff/regrade", dependencies=[Depends(check_csrf)])
def regrade(request: Request, who: Principal = Depends(page_instructor)) -> Response:
    try:
        job = service.regrade(request, who)
    except APIError as e:
        raise as_page_error(e) from None
    return redirect(f"/staff/jobs/{job['id']}")


@router.get("/staff/jobs/{job_id}")
def job_page(job_id: str, request: Request, who: Principal = Depends(page_instructor)) -> Response:
    return page(request, "staff_job.html", who=who, job=service.job(request, job_id, who))


@router.get("/staff/jobs/{job_id}/status")
def job_status(job_id: str, request: Request, who: Principal = Depends(page_instructor)) -> Response:
    return page(request, "_staff_job.html", who=who, job=service.job(request, job_id, who))


@router.get("/staff/audit")
def audit_page(request: Request, since: str = Query("", max_length=40), user: str = Query("", max_length=200),
               action: str = Query("", max_length=40), offset: int = Query(0, ge=0, le=audit.MAX_OFFSET),
               who: Principal = Depends(page_instructor)) -> Response:
    """The audit log, 100 lines a page (its JSON twin: ``/api/v1/audit``)."""
    st = service.state(request)
    filters = {"since": since, "user": user, "action": action}
    query = {k: v for k, v in filters.items() if v}
    error, at = None, None
    try:
        at = audit.parse_since(since)
    except InputError as e:
        error = e.message
    with st.db.read() as conn:
        log = audit.page(conn, since=at, actor=user or None, action=action or None, limit=PAGE, offset=offset)
    return page(request, "staff_audit.html", status=422 if error else 200, who=who, log=log, filters=filters,
                query=query, error=error)
