"""Instructors: ``GET /gradebook?format=json|csv``, ``GET /problems/{id}/stats``, ``GET /statistics``."""
from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from grader.db import audit

from .. import assessbook, gradebook, itemstats
from ..auth import Principal, instructor
from ..errors import not_found
from ..schemas import ERRORS, Gradebook
from ..stats_schemas import ProblemStats, Statistics
from .common import FastJSON, state

router = APIRouter(tags=["staff"], responses=ERRORS)


@router.get("/gradebook", response_model=Gradebook,
            responses={200: {"content": {"text/csv": {}}, "description": "JSON, or CSV with ?format=csv"}},
            summary="One row per learner, one column per problem, totals")
def get_gradebook(request: Request, format: Literal["json", "csv"] = Query("json"),
                  who: Principal = Depends(instructor)) -> Response:
    st = state(request)
    with st.db.read() as conn:
        table = gradebook.rows(conn, st.engine, st.settings.policy)
    audit.record(request, "export", actor=who.login, target="gradebook", detail={"format": format, "rows": len(table)})
    if format == "csv":
        return Response(gradebook.as_csv(table, st.engine), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": 'attachment; filename="gradebook.csv"'})
    return FastJSON({"policy": st.settings.policy, "problems": [p.id for p in st.engine.problems], "rows": table})


@router.get("/problems/{problem_id:path}/stats", response_model=ProblemStats,
            summary="A problem's score distribution, most common wrong answers and item statistics")
def problem_stats(problem_id: str, request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    if st.engine.get(problem_id) is None:
        raise not_found("problem")
    with st.db.read() as conn:
        return FastJSON(itemstats.problem(conn, st.engine, problem_id, st.settings.policy))


@router.get("/statistics", response_model=Statistics,
            summary="Item statistics: one row per problem (of an assessment, or of the bank)")
def statistics(request: Request, assessment: str | None = Query(None, max_length=200),
               who: Principal = Depends(instructor)) -> FastJSON:
    """Mean score, discrimination (item-rest correlation) and attempts to the first right
    answer of each problem (see :mod:`grader.serve.itemstats`); ``?assessment=ID``: its problems."""
    st = state(request)
    a = assessbook.get(st.engine, assessment)[1] if assessment else None
    with st.db.read() as conn:
        rows = itemstats.class_table(conn, st.engine, st.settings.policy, a)
    return FastJSON({"assessment": assessment or None, "policy": st.settings.policy, "problems": rows})
