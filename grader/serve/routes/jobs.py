"""Jobs: ``POST /code-submissions`` (a learner's file), ``POST /batches`` and ``POST /regrade``
(instructors), each answered 202 with the job; ``GET /jobs[/{id}]``."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from sqlalchemy import func, insert, select
from sqlalchemy.engine import Connection

from grader.db import audit
from grader.db.models import Job, Record, User, new_id

from .. import course, store
from ..auth import Principal, current_user, instructor
from ..engine import safe_name
from ..errors import APIError, not_found
from ..schemas import ERRORS, Job as JobOut
from .common import FastJSON, state

if TYPE_CHECKING:
    from ..app import State

router = APIRouter(tags=["jobs"], responses=ERRORS)


def view(row: Record, login: str) -> dict[str, Any]:
    return {"id": row.id, "kind": row.kind, "status": row.status, "learner": login, "problem": row.problem_id,
            "created_at": store.iso(row.created_at), "started_at": store.iso(row.started_at),
            "finished_at": store.iso(row.finished_at), "progress": {"done": row.done, "total": row.total},
            "result": row.result, "error": row.error}


COLUMNS = (Job.id, Job.kind, Job.status, Job.problem_id, Job.created_at, Job.started_at, Job.finished_at, Job.done,
           Job.total, Job.result, Job.error, Job.user_id)


def _create(st: State, who: Principal, kind: str, *, problem: str | None = None, params: dict[str, Any] | None = None,
            data: bytes | None = None, check: Callable[[Connection], None] | None = None) -> dict[str, Any]:
    job_id, created = new_id(), st.now()
    with st.db.write() as conn:
        if check:
            check(conn)
        conn.execute(insert(Job).values(id=job_id, kind=kind, user_id=who.id, problem_id=problem, status="queued",
                                        params=params or {}, data=data, done=0, tries=0, created_at=created))
        row = conn.execute(select(*COLUMNS).where(Job.id == job_id)).one()   # as stored: queued
    st.runner.wake()
    return view(row, who.login)


async def _read(upload: UploadFile, limit: int, what: str) -> bytes:
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise APIError(413, f"the {what} is over {limit:,} bytes", location="body.file")
    if not data:
        raise APIError(422, f"the {what} is empty", location="body.file")
    return data


@router.post("/code-submissions", status_code=202, response_model=JobOut,
             summary="Submit a code exercise's file: a job grades it in the sandbox")
async def code_submission(request: Request, problem: str = Form(..., max_length=200),
                          file: UploadFile = File(..., description="the learner's solution (Python, UTF-8)"),
                          who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    p = st.engine.get(problem)
    if p is None:
        raise APIError(404, f"no such problem: {problem!r}", location="body.problem")
    if p.kind != "code":
        raise APIError(422, f"{problem} is not a code exercise: submit its answer to /api/v1/submissions",
                       location="body.problem")
    data = await _read(file, st.settings.max_code, "solution file")
    filename = safe_name(file.filename or "", "solution.py", (".py",))
    params: dict[str, Any] = {"problem": problem, "filename": filename}

    def check(conn: Connection) -> None:
        queued = conn.execute(select(func.count()).select_from(Job).where(
            Job.user_id == who.id, Job.status.in_(("queued", "running")))).scalar_one()
        if queued >= st.settings.max_queued_jobs and not who.instructor:
            raise APIError(429, f"{queued} of your jobs are waiting; submit again when one is done",
                           headers={"Retry-After": "10"})
        g = course.gate(st, conn, who.id, [problem], course.clock(st)).get(problem)
        store.check_attempts(st, conn, who.id, [problem])
        if g is not None:       # graded later: the window of the moment it was accepted counts
            params["assessment"] = g.assessment
            if g.window.state == "late":
                params["late"] = {"fraction": g.window.penalty}
    from anyio import to_thread
    job = await to_thread.run_sync(lambda: _create(st, who, "code", problem=problem, params=params,
                                                   data=data, check=check))
    return FastJSON(job, status_code=202, headers={"Location": f"/api/v1/jobs/{job['id']}"})


@router.post("/batches", status_code=202, response_model=JobOut,
             summary="Grade an answers file (YAML or JSON, one submission or many), as `grader grade` does")
async def batch(request: Request, file: UploadFile = File(..., description="answers.yaml or .json"),
                who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    data = await _read(file, st.settings.max_upload, "answers file")
    filename = safe_name(file.filename or "", "answers.yaml", (".yaml", ".yml", ".json"))
    from anyio import to_thread
    job = await to_thread.run_sync(lambda: _create(st, who, "batch", params={"filename": filename}, data=data))
    audit.record(request, "batch.uploaded", actor=who.login, target=job["id"],
                 detail={"filename": filename, "bytes": len(data)})
    return FastJSON(job, status_code=202, headers={"Location": f"/api/v1/jobs/{job['id']}"})


@router.post("/regrade", status_code=202, response_model=JobOut,
             summary="Reload the bank and regrade every stored answer; the job lists each score that changed")
def regrade(request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    job = _create(st, who, "regrade")
    audit.record(request, "regrade", actor=who.login, target=job["id"])
    return FastJSON(job, status_code=202, headers={"Location": f"/api/v1/jobs/{job['id']}"})


@router.get("/jobs/{job_id}", response_model=JobOut, summary="A job: queued, running, done or failed, with its result")
def get_job(job_id: str, request: Request, who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    q = select(*COLUMNS, User.login).join(User, User.id == Job.user_id).where(Job.id == job_id)
    if not who.instructor:
        q = q.where(Job.user_id == who.id)
    with st.db.read() as conn:
        row = conn.execute(q).first()
        if row is None:
            raise not_found("job")
        out = view(row, row.login)
        if not who.instructor and st.engine.course is not None:
            out = course.Shown(st, conn, who.id).job(out)
    return FastJSON(out)


@router.get("/jobs", response_model=list[JobOut], summary="Your jobs (instructors: everyone's), newest first")
def list_jobs(request: Request, who: Principal = Depends(current_user), limit: int = Query(100, ge=1, le=1000)) -> FastJSON:
    st = state(request)
    q = select(*COLUMNS, User.login).join(User, User.id == Job.user_id).order_by(Job.created_at.desc()).limit(limit)
    if not who.instructor:
        q = q.where(Job.user_id == who.id)
    with st.db.read() as conn:
        out = [view(r, r.login) for r in conn.execute(q).all()]
        if not who.instructor and st.engine.course is not None:
            see = course.Shown(st, conn, who.id)
            out = [see.job(j) for j in out]
    return FastJSON(out)
