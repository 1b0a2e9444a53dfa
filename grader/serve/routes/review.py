"""Manual grading (:mod:`grader.serve.reviews`). Instructors: ``GET /review`` (the queue:
answers waiting for a person and open regrade requests, by problem), ``POST /review/{answer_id}``
(a score or rubric items, a comment to the learner; optionally on every identical answer),
``POST /regrade-requests/{id}`` (the answer to a request). Learners: ``POST
/answers/{id}/regrade-request``, ``GET /me/reviews`` (their own reviews and requests)."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Path, Query, Request
from sqlalchemy.engine import Connection

from grader.db import audit

from .. import course, reviews
from ..auth import Principal, current_user, instructor
from ..schemas import (ERRORS, MyReview, Regrade, RegradeAnswered, RegradeAnswerIn, RegradeIn, ReviewIn, ReviewItem,
                       ReviewOut)
from .common import MAX_ROW_ID, FastJSON, state

router = APIRouter(tags=["review"], responses=ERRORS)


@router.get("/review", response_model=list[ReviewItem],
            summary="Answers waiting for a person and open regrade requests, by problem, oldest first")
def review_queue(request: Request, include_reviewed: bool = Query(False), anonymous: bool = Query(False),
                 limit: int = Query(500, ge=1, le=5000), who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    with st.db.read() as conn:
        return FastJSON(reviews.queue(conn, st.engine, include_reviewed=include_reviewed, anonymous=anonymous,
                                      limit=limit))


@router.post("/review/{answer_id}", status_code=201, response_model=ReviewOut,
             summary="Record a person's score (given, or from rubric items) and comment for an answer")
def review(answer_id: str, body: ReviewIn, request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    with st.db.write() as conn:
        out = reviews.add_review(conn, st.engine, answer_id, who, score=body.score, comment=body.comment,
                                 rubric=body.rubric, identical=body.identical, at=st.now())
        record_review(conn, request, who, out)
    return FastJSON(out, status_code=201)


def record_review(conn: Connection, request: Request, who: Principal, out: dict[str, Any]) -> None:
    """The audit line of a review, in its transaction (the review and its record commit together)."""
    applied = out["applied_to"]
    audit.write(conn, "review", actor=who.login, address=audit.address_of(request), target=str(out["answer_id"]),
                detail={"problem": out["problem"], "score": out["score"], "rubric": [i["id"] for i in out["rubric"]],
                        "identical": len(applied) - 1})


@router.post("/answers/{answer_id}/regrade-request", status_code=201, response_model=Regrade,
             summary="Ask a person to look at your graded answer again (one open request per answer)")
def regrade_request(answer_id: str, body: RegradeIn, request: Request,
                    who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    with st.db.write() as conn:
        out = reviews.request_regrade(conn, st.engine, who, answer_id, body.message, at=st.now())
        audit.write(conn, "review.request", actor=who.login, address=audit.address_of(request), target=answer_id,
                    detail={"problem": out["problem"]})
    return FastJSON(out, status_code=201)


@router.post("/regrade-requests/{request_id}", response_model=RegradeAnswered,
             summary="Answer a regrade request (with a score or rubric items: a new review too)")
def answer_regrade(body: RegradeAnswerIn, request: Request, request_id: int = Path(ge=1, le=MAX_ROW_ID),
                   who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    with st.db.write() as conn:
        out = reviews.answer_request(conn, st.engine, request_id, who, body.response, score=body.score,
                                     rubric=body.rubric, comment=body.comment, at=st.now())
        if out["review"] is not None:
            record_review(conn, request, who, out["review"])
        audit.write(conn, "review.response", actor=who.login, address=audit.address_of(request),
                    target=str(out["answer_id"]),
                    detail={"request": request_id, "new_score": out["review"]["score"] if out["review"] else None})
    return FastJSON(out)


@router.get("/me/reviews", response_model=list[MyReview],
            summary="Your answers a person reviewed or you asked to regrade: score, rubric items, comment, outcome")
def my_reviews(request: Request, problem: str | None = Query(None, max_length=200),
               who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    with st.db.read() as conn:
        mine = reviews.learner_reviews(conn, st.engine, who.id, problem)
        if st.engine.course is not None:        # not those of an assessment whose scores are not shown yet
            see = course.Shown(st, conn, who.id)
            mine = [r for r in mine if see.why(str(r["problem"])) is None]
        return FastJSON(mine)

