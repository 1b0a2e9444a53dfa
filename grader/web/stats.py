"""The staff's item statistics (``/staff/statistics``, issue 29): one row per problem of an
assessment (a tab each) or of the whole bank, sortable, each title a link to its problem's page.
Its JSON twin: ``GET /api/v1/statistics?assessment=ID`` (the same :mod:`grader.serve.itemstats`)."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from grader.serve import assessbook, itemstats
from grader.serve.auth import Principal
from grader.serve.errors import APIError

from . import service
from .render import page
from .session import as_page_error, page_instructor

router = APIRouter(include_in_schema=False)
KEYS = ("title", "points", "learners", "mean_fraction", "discrimination", "attempts", "never")


def _key(row: dict[str, Any], key: str) -> Any:
    if key == "title":
        return row["title"].lower()
    if key == "attempts":
        return row["attempts_to_correct"]["mean"]
    if key == "never":
        return row["attempts_to_correct"]["never"]
    return row[key]


def sort_rows(rows: list[dict[str, Any]], key: str, order: str) -> list[dict[str, Any]]:
    """Rows by a column; a figure not defined (None) last either way."""
    have = [r for r in rows if _key(r, key) is not None]
    rest = [r for r in rows if _key(r, key) is None]
    return sorted(have, key=lambda r: _key(r, key), reverse=order == "desc") + rest


@router.get("/staff/statistics")
def statistics_page(request: Request, assessment: str = Query("", max_length=200), sort: str = "",
                    order: str = "asc", who: Principal = Depends(page_instructor)) -> Response:
    st = service.state(request)
    try:
        a = assessbook.get(st.engine, assessment)[1] if assessment else None
    except APIError as e:
        raise as_page_error(e) from None
    with st.db.read() as conn:
        rows = itemstats.class_table(conn, st.engine, st.settings.policy, a)
    order = "desc" if order == "desc" else "asc"
    if sort in KEYS:
        rows = sort_rows(rows, sort, order)
    else:
        sort = ""
    c = st.engine.course
    tabs = [{"id": x.id, "title": x.title, "short": assessbook.short(x.title)} for x in c.assessments] if c else []
    return page(request, "staff_statistics.html", who=who, rows=rows, a=a, tabs=tabs, sort=sort, order=order,
                policy=st.settings.policy, query=f"assessment={assessment}&" if a is not None else "")
