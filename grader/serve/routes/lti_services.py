"""LTI Advantage services for staff (instructors): the outbox of grade passbacks (``GET
/lti/outbox``: pending, held, being sent and failed; ``POST /lti/outbox/resend``), the LMS
courses (``GET /lti/contexts``) and a course's roster sync (``POST /lti/contexts/{id}/roster``).
The page ``/staff/lti`` (grader/web/staff_lti.py) is their twin."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field
from sqlalchemy import select

from grader.db import audit
from grader.db.models import LtiContext

from ..auth import Principal, instructor
from ..errors import APIError
from ..schemas import ERRORS
from .common import FastJSON, state

router = APIRouter(tags=["lti"], responses=ERRORS)
STATUSES = ("pending", "held", "sending", "failed", "sent", "superseded")


class ResendIn(BaseModel):
    ids: list[int] = Field(default_factory=list, max_length=1000, description="outbox rows to send again")
    all_failed: bool = Field(False, description="every failed row")


@router.get("/lti/outbox", summary="Grade passbacks to the LMSs not sent yet, or failed (newest first)")
def outbox(request: Request, status: list[str] = Query(["pending", "held", "sending", "failed"], max_length=6),
           limit: int = Query(200, ge=1, le=1000), who: Principal = Depends(instructor)) -> FastJSON:
    from ..lti.outbox import listing
    bad = [s for s in status if s not in STATUSES]
    if bad:
        raise APIError(422, f"no such status {bad[0][:40]!r} (one of {', '.join(STATUSES)})", location="query.status")
    with state(request).db.read() as conn:
        return FastJSON({"items": listing(conn, status, limit)})


def resend_now(request: Request, who: Principal, ids: list[int] | None) -> int:
    from ..lti.outbox import resend
    st = state(request)
    with st.db.write() as conn:
        return resend(conn, ids, st.now(), actor=who.login, address=audit.address_of(request))


@router.post("/lti/outbox/resend", summary="Send failed grade passbacks again (given ids, or every failed one)")
def resend(body: ResendIn, request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    if not body.ids and not body.all_failed:
        raise APIError(422, "give the ids of failed rows, or all_failed: true", location="body.ids")
    return FastJSON({"resent": resend_now(request, who, None if body.all_failed else body.ids)})


def context_list(conn: Any) -> list[dict[str, Any]]:
    from ..lti.outbox import iso
    rows = conn.execute(select(LtiContext.id, LtiContext.context_id, LtiContext.title, LtiContext.memberships_url,
                               LtiContext.roster_synced_at).order_by(LtiContext.id)).all()
    return [{"id": r.id, "context_id": r.context_id, "title": r.title, "roster": bool(r.memberships_url),
             "roster_synced_at": iso(r.roster_synced_at)} for r in rows]


@router.get("/lti/contexts", summary="The LMS courses that launched the tool")
def contexts(request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    with state(request).db.read() as conn:
        return FastJSON(context_list(conn))


def sync_roster(request: Request, who: Principal, context_pk: int) -> dict[str, Any]:
    from ..lti.ags import ServiceError
    st = state(request)
    with st.db.read() as conn:
        if conn.execute(select(LtiContext.id).where(LtiContext.id == context_pk)).first() is None:
            raise APIError(404, f"no LMS course {context_pk}", location="path.context_pk")
    try:
        out = st.lti.roster(context_pk, actor=who.login, address=audit.address_of(request))
    except ServiceError as e:
        raise APIError(502, f"the LMS refused or could not be reached: {e.message}", code="lms_error") from None
    return {"context": out.context, "members": out.members, "created": out.created, "removed": out.removed,
            "skipped": out.skipped, "pages": out.pages}


@router.post("/lti/contexts/{context_pk}/roster", summary="Sync an LMS course's roster (Names and Role Provisioning)")
def roster(context_pk: int, request: Request, who: Principal = Depends(instructor)) -> FastJSON:
    return FastJSON(sync_roster(request, who, context_pk))
