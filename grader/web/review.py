"""Manual grading in the pages: the staff's review queue (``/staff/review``: by assessment and
problem, rubric checkboxes, score, comment, keyboard shortcuts in ``static/review.js``, one
review for every identical answer, regrade requests answered), and the learner's side (their
reviews on the exercise page through ``_review.html``, a regrade request).

Everything goes through :mod:`grader.serve.reviews`, as the API's ``/review`` routes do, and
each review, request and answer is written to the audit log in its own transaction."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, Form, Path, Request
from fastapi.responses import Response

from grader.db import audit
from grader.serve import reviews
from grader.serve.auth import Principal
from grader.serve.errors import APIError
from grader.serve.routes.common import MAX_ROW_ID
from grader.serve.routes.review import record_review

from . import service
from .render import page, redirect
from .session import PageError, as_page_error, check_csrf, page_instructor, page_user

if TYPE_CHECKING:
    from grader.db.models import Record

router = APIRouter(include_in_schema=False)
JSON = dict[str, Any]
MAX_TEXT = 10_000


def groups(items: list[JSON]) -> list[JSON]:
    """The queue's items as [{assessment, problems: [{problem, title, prompt, rubric, items}]}],
    in the queue's order; each item with its index in the page (1-based) and how many identical
    answers of its problem wait beside it."""
    same = Counter((x["problem"], reviews.normalised(x["answer"])) for x in items if x["review"] is None)
    out: list[JSON] = []
    for n, x in enumerate(items, 1):
        key = (x["assessment"] or {}).get("id")
        if not out or out[-1]["key"] != key:
            out.append({"key": key, "assessment": x["assessment"], "problems": []})
        probs = out[-1]["problems"]
        if not probs or probs[-1]["problem"] != x["problem"]:
            probs.append({"problem": x["problem"], "title": x["title"], "prompt": x["prompt"], "rubric": x["rubric"],
                          "points": x["points"], "answers": []})
        twins = same[(x["problem"], reviews.normalised(x["answer"]))] - 1 if x["review"] is None else 0
        probs[-1]["answers"].append({**x, "n": n, "identical": twins})
    return out


def _queue_page(request: Request, who: Principal, anonymous: bool, everything: bool, *, error: str | None = None,
                status: int = 200) -> Response:
    st = service.state(request)
    with st.db.read() as conn:
        items = reviews.queue(conn, st.engine, include_reviewed=everything, anonymous=anonymous, limit=500)
    ids = [x["answer_id"] for x in items]
    return page(request, "staff_review.html", status=status, who=who, groups=groups(items), count=len(items),
                anonymous=anonymous, everything=everything, error=error,
                next_of={a: (ids[i + 1] if i + 1 < len(ids) else "") for i, a in enumerate(ids)},
                query=_query(anonymous, everything))


def _query(anonymous: bool, everything: bool) -> str:
    parts = [k + "=1" for k, on in (("anonymous", anonymous), ("all", everything)) if on]
    return ("?" + "&".join(parts)) if parts else ""


@router.get("/staff/review")
def review_page(request: Request, anonymous: int = 0, all: int = 0,
                who: Principal = Depends(page_instructor)) -> Response:
    return _queue_page(request, who, bool(anonymous), bool(all))


def _score(text: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise APIError(422, f"the score {text[:20]!r} is not a number") from None
    if not (value >= 0 and value < float("inf")):
        raise APIError(422, "the score must be a number from 0 to the problem's points")
    return value


@router.post("/staff/review/{answer_id}", dependencies=[Depends(check_csrf)])
async def save_review(answer_id: str, request: Request, who: Principal = Depends(page_instructor)) -> Response:
    form = await request.form()
    text = {k: str(form.get(k) or "")[:MAX_TEXT] for k in ("score", "comment", "next", "anonymous", "all")}
    rubric = [str(v)[:40] for v in form.getlist("rubric")][:20]
    anonymous, everything = text["anonymous"] == "1", text["all"] == "1"
    st = service.state(request)
    try:
        score = _score(text["score"])
        with st.db.write() as conn:
            out = reviews.add_review(conn, st.engine, answer_id[:64], who, score=score, comment=text["comment"],
                                     rubric=rubric, identical=form.get("identical") == "1", at=st.now())
            record_review(conn, request, who, out)
    except APIError as e:
        return _queue_page(request, who, anonymous, everything, error=e.message, status=e.status)
    nxt = text["next"] if text["next"].isalnum() else ""
    return redirect("/staff/review" + _query(anonymous, everything) + (f"#a-{nxt}" if nxt else ""))


@router.post("/staff/regrade-requests/{request_id}", dependencies=[Depends(check_csrf)])
def answer_request(request: Request, request_id: int = Path(ge=1, le=MAX_ROW_ID),
                   response: str = Form("", max_length=MAX_TEXT),
                   score: str = Form("", max_length=40), anonymous: str = Form(""), all: str = Form(""),
                   who: Principal = Depends(page_instructor)) -> Response:
    st = service.state(request)
    try:
        if not response.strip():
            raise APIError(422, "write a response to the learner first")
        with st.db.write() as conn:
            out = reviews.answer_request(conn, st.engine, request_id, who, response.strip(), score=_score(score),
                                         at=st.now())
            if out["review"] is not None:
                record_review(conn, request, who, out["review"])
            audit.write(conn, "review.response", actor=who.login, address=audit.address_of(request),
                        target=str(out["answer_id"]),
                        detail={"request": request_id, "new_score": out["review"]["score"] if out["review"] else None})
    except APIError as e:
        return _queue_page(request, who, anonymous == "1", all == "1", error=e.message, status=e.status)
    return redirect("/staff/review" + _query(anonymous == "1", all == "1"))


# ------------------------------------------------------------------ the learner's side

def learner_context(request: Request, who: Principal, problem_id: str, attempts: Sequence[Record],
                    result: JSON | None) -> JSON:
    """What ``_review.html`` shows on an exercise page (the learner's reviews of this problem,
    a regrade form where one may be asked), and the attempts and result as the learner sees
    them once a person has graded them: the person's score, not "a person must grade"."""
    st = service.state(request)
    with st.db.read() as conn:
        mine = reviews.learner_reviews(conn, st.engine, who.id, problem_id)
    by_id = {r["answer_id"]: r for r in mine}
    for r in mine:
        r["can_request"] = r["review"] is not None and (r["regrade"] is None or r["regrade"]["status"] != "open")
    seen = []
    for a in attempts:
        got = by_id.get(getattr(a, "id", ""))
        row = dict(a._mapping)
        if got is not None and got["review"] is not None:
            rv = got["review"]
            row.update(score=rv["counted"], max_score=got["points"], status="reviewed",
                       feedback="graded by a person" + (": " + rv["comment"] if rv["comment"] else ""))
        seen.append(row)
    if result is not None and result.get("review"):
        rv = result["review"]
        result = {**result, "score": rv["counted"], "max_score": st.engine.points(problem_id), "status": "reviewed",
                  "pending_points": 0, "feedback": "graded by a person — see the review below"}
    return {"reviews": mine, "attempts": seen, "result": result}


@router.post("/learn/regrade/{answer_id}", dependencies=[Depends(check_csrf)])
def regrade_request(answer_id: str, request: Request, message: str = Form("", max_length=5000),
                    who: Principal = Depends(page_user)) -> Response:
    st = service.state(request)
    if not message.strip():
        raise PageError(422, "Write why you ask for a regrade first.")
    try:
        with st.db.write() as conn:
            out = reviews.request_regrade(conn, st.engine, who, answer_id[:64], message.strip(),
                                          at=st.now())
            audit.write(conn, "review.request", actor=who.login, address=audit.address_of(request),
                        target=out["answer_id"], detail={"problem": out["problem"]})
    except APIError as e:
        raise as_page_error(e) from None
    return redirect(service.url("/learn/exercise/", str(out["problem"])) + "#review")
