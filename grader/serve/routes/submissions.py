"""``POST /validate``, ``POST /submissions`` (Idempotency-Key), ``GET /submissions[/{id}]``,
``GET /me/grades``."""
from __future__ import annotations

import asyncio
import hashlib
import time
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from sqlalchemy import func, select

from grader.db.models import Answer, Submission, User

from .. import gradebook, reviews, store
from ..auth import Principal, current_user
from ..errors import APIError, not_found
from ..schemas import ERRORS, GradeRow, Reading, Submission as SubmissionOut, SubmissionBrief, SubmissionIn, ValidateIn
from ..workers import TaskFailed
from .common import FastJSON, parse_json, require_json, state

if TYPE_CHECKING:
    from ..app import State

router = APIRouter(tags=["submissions"], responses=ERRORS)

IDEMPOTENCY_MAX = 200
MAX_OFFSET = 2**31 - 1     # any offset a database takes (past it: 422, never an overflow and a 500)


@router.post("/validate", response_model=Reading, summary="How an answer is read (nothing is stored or graded)",
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": ValidateIn.model_json_schema()}}}})
async def validate(request: Request, who: Principal = Depends(current_user)) -> FastJSON:
    require_json(request)
    doc = parse_json(await request.body())
    if not isinstance(doc, dict) or set(doc) != {"problem", "answer"}:
        raise APIError(422, 'the body must be {"problem": id, "answer": answer}', location="body")
    problem, answer = doc["problem"], doc["answer"]
    st = state(request)
    kind = st.engine.kind(problem) if isinstance(problem, str) else None
    if kind is None:
        raise APIError(404, f"no such problem: {str(problem)[:200]!r}", location="body.problem")
    if kind == "code":
        raise APIError(422, "a code exercise is a file: submit it to /api/v1/code-submissions", location="body.problem")
    store.check_shape({problem: answer}, where="body.answer")

    t0 = time.perf_counter()
    async with st.busy(who.id):
        try:
            out = await asyncio.wrap_future(st.pool.submit(("validate", problem, answer), st.settings.timeout_s + 3))
        except TaskFailed as e:
            if e.reason == "closed":
                raise APIError(503, "validation is unavailable", headers={"Retry-After": "5"}) from None
            out = {"ok": False, "read_as": None, "latex": None, "mathml": None,
                   "error": f"too complex to read within {st.settings.timeout_s:g} s", "column": None}
    st.metrics.grading.labels("validate").observe(time.perf_counter() - t0)
    return FastJSON(out)


def _answers(doc: object, st: State) -> dict[str, object]:
    if not isinstance(doc, dict):
        raise APIError(422, 'the body must be an object: {"answers": {problem: answer, ...}}', location="body")
    extra = [k for k in doc if k != "answers"]
    if extra:
        raise APIError(422, f"unknown field {extra[0]!r}; the body is {{\"answers\": {{...}}}}", location=f"body.{extra[0]}")
    answers = doc.get("answers")
    if not isinstance(answers, dict):
        raise APIError(422, "'answers' must map problem ids to answers", location="body.answers")
    if not answers:
        raise APIError(422, "no answers: 'answers' is empty", location="body.answers")
    if len(answers) > st.settings.max_answers:
        raise APIError(413, f"{len(answers):,} answers in one submission; at most {st.settings.max_answers:,}",
                       location="body.answers")
    for pid in answers:
        if len(pid) > 200:
            raise APIError(422, "a problem id is at most 200 characters", location="body.answers")
        if st.engine.kind(pid) == "code":
            raise APIError(422, f"{pid} is a code exercise: submit its file to /api/v1/code-submissions",
                           location=f"body.answers.{pid}")
    return answers          # their shape is checked once, by store.submit, before anything is stored


@router.post("/submissions", status_code=201, response_model=SubmissionOut,
             responses={200: {"model": SubmissionOut, "description": "a repeated Idempotency-Key: the stored submission"}},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": SubmissionIn.model_json_schema()}}}},
             summary="Submit answers: stored, graded, answered with the grades")
async def submit(request: Request, who: Principal = Depends(current_user),
                 idempotency_key: str | None = Header(None, max_length=IDEMPOTENCY_MAX,
                                                      description="the same key again returns the stored submission"),
                 ) -> FastJSON:
    require_json(request)
    raw = await request.body()
    st = state(request)
    answers = _answers(parse_json(raw), st)
    if idempotency_key is not None and (not idempotency_key.strip() or not idempotency_key.isprintable()):
        raise APIError(400, "Idempotency-Key must be printable text", location="header.Idempotency-Key")
    body_hash = hashlib.sha256(raw).hexdigest()
    async with st.busy(who.id):
        status, obj = await store.submit(st, who, answers, idempotency_key, body_hash)
    headers = {"Location": f"/api/v1/submissions/{obj['id']}"}
    if status == 200:
        headers["Idempotent-Replayed"] = "true"
    return FastJSON(obj, status_code=status, headers=headers)


@router.get("/submissions", response_model=list[SubmissionBrief], summary="Your submissions (instructors: anyone's)")
def list_submissions(request: Request, who: Principal = Depends(current_user),
                     learner: str | None = Query(None, max_length=200, description="instructors: one learner's"),
                     limit: int = Query(100, ge=1, le=1000),
                     offset: int = Query(0, ge=0, le=MAX_OFFSET)) -> list[dict[str, Any]]:
    st = state(request)
    q = (select(Submission.id, User.login, Submission.source, Submission.status, Submission.created_at,
                Submission.score, Submission.max_score,
                select(func.count()).where(Answer.submission_id == Submission.id).scalar_subquery().label("n"))
         .join(User, User.id == Submission.user_id).order_by(Submission.created_at.desc(), Submission.id)
         .limit(limit).offset(offset))
    if not who.instructor:
        q = q.where(Submission.user_id == who.id)
    elif learner is not None:
        q = q.where(User.login == learner)
    with st.db.read() as conn:
        rows = conn.execute(q).all()
    return [{"id": r.id, "learner": r.login, "source": r.source, "status": r.status,
             "created_at": store.iso(r.created_at), "score": r.score, "max_score": r.max_score, "answers": r.n}
            for r in rows]


@router.get("/submissions/{submission_id}", response_model=SubmissionOut, summary="One submission with its grades")
def get_submission(submission_id: str, request: Request, who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    if len(submission_id) > 64:
        raise not_found("submission")
    with st.db.read() as conn:
        obj = reviews.annotate(conn, st.engine, store.load(conn, submission_id, owner=None if who.instructor else who.id))
    return FastJSON(obj)


@router.get("/me/grades", response_model=GradeRow, summary="Your grades: each problem under the gradebook's policy")
def my_grades(request: Request, who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    with st.db.read() as conn:
        got = gradebook.rows(conn, st.engine, st.settings.policy, user_id=who.id)
    return FastJSON({**got[0], "policy": st.settings.policy})
