"""``GET /exercises``, ``GET /exercises/{id}``: what is asked, with the learner's own numbers;
never a reference, a mistake or a solution."""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, Request

from ..auth import Principal, current_user
from .. import course
from ..errors import APIError, not_found
from ..schemas import ERRORS, Exercise
from ..store import attempts_used
from .common import FastJSON, state

if TYPE_CHECKING:
    from grader.api.service import BankProblem

    from ..app import State

router = APIRouter(tags=["exercises"], responses=ERRORS)


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if v is not None}


def _rows(st: State, who: Principal, problems: Iterable[BankProblem]) -> list[dict[str, Any]]:
    learner = None if who.instructor else who.login
    rows = [st.engine.exercise(p, learner) for p in problems]
    if not who.instructor:
        limited = [r["id"] for r in rows if r["attempts"]]
        if limited:
            with st.db.read() as conn:
                used = attempts_used(conn, who.id, limited)
            for r in rows:
                if r["attempts"]:
                    r["attempts_used"] = used.get(r["id"], 0)
    return rows


@router.get("/exercises", response_model=list[Exercise], response_model_exclude_none=True,
            summary="The problems, each as this learner sees it (not those of an assessment not open to them)")
def list_exercises(request: Request, who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    problems = list(st.engine.problems)
    if not who.instructor and st.engine.course is not None:     # not a prompt of what has not opened to them
        with st.db.read() as conn:
            times = course.Times.load(conn, who.id)
            problems = [p for p in problems if course.not_viewable(st, conn, who.id, p.id, times) is None]
    return FastJSON([_plain(r) for r in _rows(st, who, problems)])


@router.get("/exercises/{problem_id:path}", response_model=Exercise, response_model_exclude_none=True,
            summary="One problem, as this learner sees it")
def get_exercise(problem_id: str, request: Request, who: Principal = Depends(current_user)) -> FastJSON:
    st = state(request)
    p = st.engine.get(problem_id)
    if p is None:
        raise not_found("problem")
    if not who.instructor and st.engine.course is not None:
        with st.db.read() as conn:
            why = course.not_viewable(st, conn, who.id, problem_id)
        if why:
            raise APIError(409, why, code="not_open")
    return FastJSON(_plain(_rows(st, who, [p])[0]))
