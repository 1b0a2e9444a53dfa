"""Instructors: ``GET /gradebook?format=json|csv``, ``GET /problems/{id}/stats``."""
from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from grader.db import audit

from .. import gradebook
from ..auth import Principal, instructor
from ..errors import not_found
from ..schemas import ERRORS, Gradebook
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


@router.get("/problems/{problem_id:path}/stats", summary="A problem's score distribution and most common wrong answers")
def problem_stats(problem_id: str, request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    st = state(request)
    if st.engine.get(problem_id) is None:
        raise not_found("problem")
    with st.db.read() as conn:
        return FastJSON(gradebook.stats(conn, st.engine, problem_id, st.settings.policy))
