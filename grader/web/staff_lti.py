"""The staff's LTI page (``/staff/lti``): the grade passbacks pending or failed (resend one,
or every failed one) and the LMS courses (sync a roster). Its JSON twin is ``/api/v1/lti/...``
(grader/serve/routes/lti_services.py, the same functions)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import Response

from grader.serve.auth import Principal
from grader.serve.errors import APIError
from grader.serve.routes import lti_services

from . import service
from .render import page, redirect
from .session import as_page_error, check_csrf, page_instructor

router = APIRouter(include_in_schema=False)


def _page(request: Request, who: Principal, message: str | None = None, error: str | None = None,
          status: int = 200) -> Response:
    from grader.serve.lti.outbox import listing
    st = service.state(request)
    with st.db.read() as conn:
        items = listing(conn, limit=500)
        contexts = lti_services.context_list(conn)
    return page(request, "staff_lti.html", status=status, who=who, items=items, contexts=contexts,
                message=message, error=error)


@router.get("/staff/lti")
def lti_page(request: Request, who: Principal = Depends(page_instructor)) -> Response:
    return _page(request, who)


@router.post("/staff/lti/resend", dependencies=[Depends(check_csrf)])
def resend(request: Request, outbox_id: int | None = Form(None), all_failed: bool = Form(False),
           who: Principal = Depends(page_instructor)) -> Response:
    if outbox_id is None and not all_failed:
        return _page(request, who, error="Choose a passback to resend.", status=422)
    lti_services.resend_now(request, who, None if all_failed else [outbox_id] if outbox_id is not None else [])
    return redirect("/staff/lti")


@router.post("/staff/lti/contexts/{context_pk}/roster", dependencies=[Depends(check_csrf)])
def roster(context_pk: int, request: Request, who: Principal = Depends(page_instructor)) -> Response:
    try:
        out = lti_services.sync_roster(request, who, context_pk)
    except APIError as e:
        if e.status == 502:
            return _page(request, who, error=e.message, status=502)
        raise as_page_error(e) from None
    return _page(request, who, message=f"{out['context']}: {out['members']} members read, {out['created']} new, "
                                        f"{out['removed']} no longer active, {out['skipped']} left out.")
