"""Instructors: ``GET /audit``, the audit log (newest first, filtered, paginated): the JSON
twin of the page ``/staff/audit``."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request

from grader.db import audit
from grader.errors import InputError

from ..auth import Principal, instructor
from ..errors import APIError
from ..schemas import ERRORS
from .common import FastJSON, state

router = APIRouter(tags=["staff"], responses=ERRORS)


@router.get("/audit", summary="The audit log: who did what, when, from where (newest first)")
def audit_log(request: Request, since: str | None = Query(None, max_length=40),
              user: str | None = Query(None, max_length=200), action: str | None = Query(None, max_length=40),
              limit: int = Query(100, ge=1, le=audit.MAX_LIMIT), offset: int = Query(0, ge=0, le=audit.MAX_OFFSET),
              who: Principal = Depends(instructor)) -> FastJSON:
    try:
        at = audit.parse_since(since)
    except InputError as e:
        raise APIError(422, e.message, location="query.since") from None
    with state(request).db.read() as conn:
        return FastJSON(audit.page(conn, since=at, actor=user, action=action, limit=limit, offset=offset))
