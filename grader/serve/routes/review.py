"""Instructors: ``GET /review`` (answers a person must grade), ``POST /review/{answer_id}``
(a person's score and comment, recorded with who and when; it counts from then on)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request

from grader.db import audit

from .. import gradebook
from ..auth import Principal, instructor
from ..schemas import ERRORS, ReviewIn, ReviewItem
from .common import FastJSON, state

router = APIRouter(tags=["review"], responses=ERRORS)


@router.get("/review", response_model=list[ReviewItem], summary="Answers waiting for a person, oldest first")
def review_queue(request: Request, include_reviewed: bool = Query(False), limit: int = Query(500, ge=1, le=5000),
                 who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    with st.db.read() as conn:
        return FastJSON(gradebook.review_queue(conn, st.engine, include_reviewed, limit))


@router.post("/review/{answer_id}", status_code=201, summary="Record a person's score and comment for an answer")
def review(answer_id: str, body: ReviewIn, request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    with st.db.write() as conn:
        out = gradebook.add_review(conn, st.engine, answer_id, who, body.score, body.comment)
        audit.write(conn, "review", actor=who.login, address=audit.address_of(request), target=answer_id,
                    detail={"problem": out["problem"], "score": out["score"]})
    return FastJSON(out, status_code=201)
