"""Assessments: ``GET /assessments`` (each with this learner's window, progress and the score
where shown), ``GET /assessments/{id}`` (its problems), ``POST /assessments/{id}/start`` (a timed
quiz); instructors: ``GET|POST|DELETE /assessments/{id}/extensions``, ``POST
/assessments/{id}/release``, ``GET /assessments/{id}/gradebook?format=json|csv``. Without an
assessments file the list is empty and an id is 404."""
from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from grader.db import audit

from .. import assessbook, course, gradebook
from ..auth import Principal, current_user, instructor
from ..course_schemas import (AssessmentBook, AssessmentDetail, AssessmentSummary, ExtensionIn, ExtensionOut,
                              ReleaseOut, Started)
from ..errors import APIError
from ..schemas import ERRORS
from .common import FastJSON, state

router = APIRouter(tags=["assessments"], responses=ERRORS)


@router.get("/assessments", response_model=list[AssessmentSummary],
            summary="The assessments, each with your window now, your progress and your score where shown")
def list_assessments(request: Request, who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    c = st.engine.course
    if c is None:
        return FastJSON([])
    now = course.clock(st)
    with st.db.read() as conn:
        times = course.Times() if who.instructor else course.Times.load(conn, who.id)
        row = None if who.instructor else gradebook.rows(conn, st.engine, st.settings.policy, user_id=who.id)[0]
    return FastJSON([assessbook.summary(st.engine, c, a, times, row, now, staff=who.instructor)
                     for a in c.assessments])


@router.get("/assessments/{assessment_id}", response_model=AssessmentDetail,
            summary="One assessment: its problems by title, with your attempts and scores where shown")
def get_assessment(assessment_id: str, request: Request, who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    c, a = assessbook.get(st.engine, assessment_id)
    now = course.clock(st)
    with st.db.read() as conn:
        if who.instructor:
            return FastJSON(assessbook.detail(st.engine, c, a, course.Times(), None, now, {}, staff=True))
        times = course.Times.load(conn, who.id)
        row = gradebook.rows(conn, st.engine, st.settings.policy, user_id=who.id)[0]
        used = assessbook.used_attempts(conn, who.id, a)
    return FastJSON(assessbook.detail(st.engine, c, a, times, row, now, used))


@router.post("/assessments/{assessment_id}/start", response_model=Started, status_code=201,
             responses={200: {"model": Started, "description": "started before: the clock runs from then"}},
             summary="Start a timed quiz: its time limit runs from now (once; again: when it was started)")
def start(assessment_id: str, request: Request, who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    c, a = assessbook.get(st.engine, assessment_id)
    if a.time_limit is None:
        raise APIError(409, f"{a.title} ({a.id}) has no time limit: there is nothing to start", code="not_timed")
    now = course.clock(st)
    with st.db.write() as conn:
        times = course.Times.load(conn, who.id)
        w = times.window(a, now)
        if a.id not in times.starts and w.state in ("not_open", "closed"):
            raise APIError(409, f"{a.title} ({a.id}): {w.message}", code=w.state)
        at, new = assessbook.start(conn, a, who.id, now)
    times = course.Times({**times.extensions}, {**times.starts, a.id: at}, times.released)
    body = {"assessment": a.id, "started_at": course.iso(at), "new": new,
            "window": assessbook.window_json(c, a, times, now)}
    return FastJSON(body, status_code=201 if new else 200)


# ------------------------------------------------------------------ instructors

@router.get("/assessments/{assessment_id}/extensions", response_model=list[ExtensionOut],
            summary="The extensions of an assessment that count now")
def list_extensions(assessment_id: str, request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    c, a = assessbook.get(st.engine, assessment_id)
    with st.db.read() as conn:
        return FastJSON(assessbook.extension_list(conn, c, a.id))


@router.post("/assessments/{assessment_id}/extensions", response_model=ExtensionOut, status_code=201,
             summary="Grant a learner their own due date (the latest grant counts)")
def grant_extension(assessment_id: str, body: ExtensionIn, request: Request,
                    who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    c, a = assessbook.get(st.engine, assessment_id)
    due = assessbook.parse_time(body.due, c, "body.due")
    now = course.clock(st)
    with st.db.write() as conn:
        uid = assessbook.learner_id(conn, body.learner)
        assessbook.grant(conn, a, uid, due, who.login, body.reason, now)
        audit.write(conn, "extension.granted", actor=who.login, address=audit.address_of(request),
                    target=f"{a.id}:{body.learner}", detail={"due": course.iso(due), "reason": body.reason[:200]})
        out = [e for e in assessbook.extension_list(conn, c, a.id) if e["learner"] == body.learner]
    return FastJSON(out[0], status_code=201)


@router.delete("/assessments/{assessment_id}/extensions", status_code=204,
               summary="Revoke a learner's extension (the assessment's own dates apply again)")
def revoke_extension(assessment_id: str, request: Request, learner: str = Query(..., max_length=200),
                     who: Principal = Depends(instructor)) -> Response:
    st = state(request)
    _, a = assessbook.get(st.engine, assessment_id)
    with st.db.write() as conn:
        uid = assessbook.learner_id(conn, learner)
        if not assessbook.revoke(conn, a, uid, who.login, course.clock(st)):
            raise APIError(404, f"{learner} has no extension of {a.id}", location="query.learner")
        audit.write(conn, "extension.revoked", actor=who.login, address=audit.address_of(request),
                    target=f"{a.id}:{learner}")
    return Response(status_code=204)


@router.post("/assessments/{assessment_id}/release", response_model=ReleaseOut, status_code=201,
             summary="Show the assessment's scores and feedback to its learners from now on")
def release(assessment_id: str, request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    _, a = assessbook.get(st.engine, assessment_id)
    with st.db.write() as conn:
        out = assessbook.release(conn, a, who.login, course.clock(st))
        audit.write(conn, "release", actor=who.login, address=audit.address_of(request), target=a.id)
    return FastJSON(out, status_code=201)


@router.get("/assessments/{assessment_id}/gradebook", response_model=AssessmentBook,
            responses={200: {"content": {"text/csv": {}},
                             "description": "JSON, or with ?format=csv the CSV Canvas and Moodle import"}},
            summary="The gradebook of one assessment: a row per learner, late, penalty and extension marked")
def assessment_gradebook(assessment_id: str, request: Request, format: Literal["json", "csv"] = Query("json"),
                         problems: bool = Query(False, description="CSV: a column per problem after the total"),
                         who: Principal = Depends(instructor)) -> Response:
    st = state(request)
    _, a = assessbook.get(st.engine, assessment_id)
    with st.db.read() as conn:
        b = assessbook.book(conn, st.engine, a, st.settings.policy)
    audit.record(request, "export", actor=who.login, target=f"gradebook:{a.id}",
                 detail={"format": format, "rows": len(b["rows"])})
    if format == "csv":
        return Response(assessbook.book_csv(b, problems), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="gradebook-{csv_name(a.id)}.csv"'})
    return FastJSON(b)


def csv_name(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)[:80] or "assessment"
