"""The learner's pages (``/learn``): sign in, the exercises with progress, an exercise with the
live reading of the answer, its result and earlier attempts, a code upload and its job.

Every grade goes through the service's own paths: ``store.submit`` (as ``POST
/api/v1/submissions``), the grading workers (as ``POST /api/v1/validate``) and the job routes."""
from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, Form, Request, UploadFile
from fastapi.responses import Response
from sqlalchemy import select

from grader.db import audit
from grader.db.models import Answer, Record
from grader.serve import course, gradebook, store
from grader.serve.auth import Principal
from grader.serve.errors import APIError
from grader.serve.workers import TaskFailed

from . import assessments, review, service
from .code import by_function, template_of
from .render import page, redirect
from grader.serve.auth import Throttled

from .session import (PageError, as_page_error, check_csrf, end_session, end_sessions_everywhere, page_user,
                      sign_in, start_session, throttled_page)

if TYPE_CHECKING:
    from grader.serve.app import State

router = APIRouter(include_in_schema=False)
MAX_ANSWER = 10_000


@router.get("/learn/login")
def login_form(request: Request) -> Response:
    return page(request, "login.html", error=None)


@router.post("/learn/login", dependencies=[Depends(check_csrf)])
async def login(request: Request, token: str = Form("", max_length=300)) -> Response:
    try:
        who = await sign_in(request, token)
    except Throttled as e:
        err = throttled_page(e)
        return page(request, "login.html", status=err.status, headers=err.headers, error=err.message)
    audit.record(request, "login" if who else "login.failed", actor=who.login if who else "", target="/learn/login")
    if who is None:
        return page(request, "login.html", status=401, error="That token is not valid (or was revoked).")
    resp = redirect("/staff" if who.instructor else "/learn")
    await start_session(request, who, resp)
    return resp


@router.post("/logout", dependencies=[Depends(check_csrf)])
async def logout(request: Request) -> Response:
    """Sign out: this browser's session ends (its row deleted)."""
    resp = redirect("/learn/login")
    await end_session(request, resp)
    return resp


@router.post("/learn/sign-out-everywhere", dependencies=[Depends(check_csrf)])
async def sign_out_everywhere(request: Request, who: Principal = Depends(page_user)) -> Response:
    """Every session of this user ends, in every browser."""
    resp = redirect("/learn/login")
    await end_sessions_everywhere(request, who, resp)
    return resp


@router.get("/learn")
def exercises(request: Request, who: Principal = Depends(page_user)) -> Response:
    st = service.state(request)
    with st.db.read() as conn:
        row = gradebook.rows(conn, st.engine, st.settings.policy, user_id=who.id)[0]
        if not who.instructor and st.engine.course is not None:
            row = course.Shown(st, conn, who.id).row(row)
    c = st.engine.course             # with assessments, their problems are on their pages; the others here
    items = [{"id": p.id, "kind": p.kind, "points": p.points, "cell": row["problems"].get(p.id),
              "title": st.engine.title(p.id)} for p in st.engine.problems if c is None or c.of_problem(p.id) is None]
    return page(request, "learn_index.html", who=who, items=items, row=row,
                assessments=assessments.summaries(st, who))


def _attempts(st: State, who: Principal, problem_id: str) -> Sequence[Record]:
    with st.db.read() as conn:
        return conn.execute(select(Answer.id, Answer.submission_id, Answer.raw, Answer.created_at, Answer.score, Answer.max_score,
                                   Answer.status, Answer.feedback, Answer.result)
                            .where(Answer.user_id == who.id, Answer.problem_id == problem_id)
                            .order_by(Answer.created_at.desc()).limit(50)).all()


def _exercise(request: Request, who: Principal, problem_id: str, *, result: dict[str, Any] | None = None,
              job: dict[str, Any] | None = None, error: str | None = None, answer: str = "",
              reading: dict[str, Any] | None = None, status: int = 200) -> Response:
    st = service.state(request)
    p = st.engine.get(problem_id)
    if p is None:
        raise PageError(404, "No such exercise.")
    if not who.instructor and st.engine.course is not None:
        with st.db.read() as conn:
            why = course.not_viewable(st, conn, who.id, problem_id)
        if why:
            raise PageError(409, why)
    ex = st.engine.exercise(p, None if who.instructor else who.login)
    attempts = _attempts(st, who, problem_id)
    if ex.get("attempts"):
        with st.db.read() as conn:          # what the limit counts (store.attempts_used), not every row
            ex["attempts_used"] = store.attempts_used(conn, who.id, [problem_id]).get(problem_id, 0)
    if p.kind == "code":
        ex["template"] = template_of(st, problem_id) is not None
    seen = review.learner_context(request, who, problem_id, attempts, result)   # a person's grades (review.py)
    seen = assessments.shown_context(st, who, problem_id, seen)     # ... hidden until its assessment shows them
    return page(request, "learn_code.html" if p.kind == "code" else "learn_exercise.html", status=status, who=who,
                ex=ex, error=error, answer=answer, job=job, reading=reading, nonce=secrets.token_urlsafe(12), **seen)


def _shown(raw: object) -> str:
    """An answer as the box shows it again (a number or a choice from the API as written)."""
    return raw if isinstance(raw, str) else "" if raw is None or isinstance(raw, (dict, list)) else str(raw)


@router.get("/learn/exercise/{problem_id:path}")
def exercise(problem_id: str, request: Request, s: str | None = None, who: Principal = Depends(page_user)) -> Response:
    st = service.state(request)
    result = None
    if s:
        with st.db.read() as conn:
            try:
                sub = store.load(conn, s[:64], owner=None if who.instructor else who.id)
            except APIError as e:
                raise as_page_error(e) from None
        sub = assessments.shown_submission(st, who, sub)
        result = next((r for r in sub["results"] if r["id"] == problem_id), None)
    # the answer stays in the box after submitting: the one this result graded
    return _exercise(request, who, problem_id, result=result, answer=_shown(result.get("answer")) if result else "")


async def _read(st: State, who: Principal, problem: str, answer: str) -> dict[str, Any]:
    """How the engine reads ``answer`` (the worker task of POST /api/v1/validate)."""
    async with st.busy(-who.id):          # one reading at a time per learner, apart from their submissions
        try:
            out: dict[str, Any] = await asyncio.wrap_future(
                st.pool.submit(("validate", problem, answer), st.settings.timeout_s + 3))
        except TaskFailed:
            out = {"ok": False, "error": f"too complex to read within {st.settings.timeout_s:g} s", "column": None}
    return out


async def _read_when_free(st: State, who: Principal, problem: str, answer: str) -> dict[str, Any]:
    """:func:`_read` for a submit: a live reading of the box still in flight (typing, then Enter
    at once) holds the learner's reading slot; wait for it (polled every 0.1 s, bounded by a
    reading's own time-out) rather than refuse the answer with "still being graded"."""
    waited, limit = 0.0, st.settings.timeout_s + 5
    while True:
        try:
            return await _read(st, who, problem, answer)
        except APIError as e:
            if e.status != 429 or waited >= limit:
                raise
        await asyncio.sleep(0.1)
        waited += 0.1


@router.post("/learn/exercise/{problem_id:path}", dependencies=[Depends(check_csrf)])
async def submit(problem_id: str, request: Request, answer: str = Form("", max_length=MAX_ANSWER),
                 nonce: str = Form("", max_length=64), who: Principal = Depends(page_user)) -> Response:
    st = service.state(request)
    kind = st.engine.kind(problem_id)
    if kind is None or kind == "code":
        raise PageError(404, "No such exercise.")
    answer = answer.strip()         # a trailing newline (or space) is never part of an answer
    if not answer:
        return _exercise(request, who, problem_id, error="Write an answer first.", status=422)
    if kind != "free_text":         # an answer the engine cannot read is refused here: nothing stored, no attempt
        try:
            reading = await _read_when_free(st, who, problem_id, answer)
        except APIError as e:
            return _exercise(request, who, problem_id, error=e.message, answer=answer, status=e.status)
        if not reading.get("ok"):
            return _exercise(request, who, problem_id, answer=answer, reading=reading, status=422,
                             error=f"Not submitted (no attempt used): this answer cannot be read. {reading.get('error')}")
    answers: dict[str, object] = {problem_id: answer}
    body_hash = hashlib.sha256(json.dumps({"answers": answers}, ensure_ascii=False).encode()).hexdigest()
    try:
        async with st.busy(who.id):
            _, obj = await store.submit(st, who, answers, ("page-" + nonce) if nonce else None, body_hash)
    except APIError as e:
        return _exercise(request, who, problem_id, error=e.message, answer=answer, status=e.status)
    return redirect(service.url("/learn/exercise/", problem_id) + f"?s={obj['id']}#result")


@router.post("/learn/validate", dependencies=[Depends(check_csrf)])
async def validate(request: Request, problem: str = Form(..., max_length=200),
                   answer: str = Form("", max_length=MAX_ANSWER), who: Principal = Depends(page_user)) -> Response:
    """The live reading (htmx, as the learner types): the same task as POST /api/v1/validate."""
    st = service.state(request)
    kind = st.engine.kind(problem)
    if kind is None or kind == "code":
        raise PageError(404, "No such exercise.")
    if not answer.strip():
        return page(request, "_reading.html", reading=None, answer=answer)
    try:
        out = await _read(st, who, problem, answer)
    except APIError:
        return page(request, "_reading.html", status=200, reading={"busy": True}, answer=answer)
    return page(request, "_reading.html", reading=out, answer=answer)


@router.get("/learn/template/{problem_id:path}")
def template(problem_id: str, request: Request, who: Principal = Depends(page_user)) -> Response:
    """A code exercise's template (``template.py`` beside its tests): that file only, never
    the reference solution or the tests."""
    st = service.state(request)
    path = template_of(st, problem_id)
    if path is None:
        raise PageError(404, "This exercise has no template.")
    if not who.instructor and st.engine.course is not None:    # as its page: not before its assessment opens
        with st.db.read() as conn:
            why = course.not_viewable(st, conn, who.id, problem_id)
        if why:
            raise PageError(409, why)
    return Response(path.read_bytes(), media_type="text/x-python; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="template.py"',
                             "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"})


@router.post("/learn/code/{problem_id:path}", dependencies=[Depends(check_csrf)])
async def code(problem_id: str, request: Request, file: UploadFile, who: Principal = Depends(page_user)) -> Response:
    try:
        job = await service.code_submission(request, problem_id, file, who)
    except APIError as e:
        return _exercise(request, who, problem_id, error=e.message, status=e.status)
    return redirect(f"/learn/jobs/{job['id']}")


@router.get("/learn/jobs/{job_id}")
def job_page(job_id: str, request: Request, who: Principal = Depends(page_user)) -> Response:
    job = service.job(request, job_id, who)
    p = service.state(request).engine.get(str(job.get("problem") or ""))
    return page(request, "learn_job.html", who=who, job=job, tests=_tests(job), title=p.title if p else None)


@router.get("/learn/jobs/{job_id}/status")
def job_status(job_id: str, request: Request, who: Principal = Depends(page_user)) -> Response:
    job = service.job(request, job_id, who)
    return page(request, "_job.html", who=who, job=job, tests=_tests(job))


def _tests(job: dict[str, Any]) -> dict[str, Any]:
    result = job.get("result")
    return by_function(list(result.get("tests") or []) if isinstance(result, dict) else [])
