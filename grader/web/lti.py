"""LTI 1.3 launches (see docs/lti.md): ``GET|POST /lti/login`` (the third-party initiated OIDC
login), ``POST /lti/launch`` (resource-link and deep-linking launches) and ``POST
/lti/deep-link`` (the picker's form: the signed deep-linking response). The checks and records
are :mod:`grader.serve.lti`; this module makes the pages and the session.

A launch arrives as the platform's cross-site form POST: the session cookie (SameSite=Strict)
set on that response would not be sent on a redirect of the same cross-site navigation, so a
resource-link launch answers a small page that navigates on load (``/static/lti.js``; a link
too) to the assessment: a same-site navigation, which carries the cookie.

Every refusal is one page (400, 401 or 403) and one audit line ``lti.refused`` with its reason;
nothing is created."""
from __future__ import annotations

import hashlib
import hmac
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pylti1p3.exception import LtiException, OIDCException

from grader.db import audit
from grader.serve import assessbook
from grader.serve.lti import adapter, deep_link, launch as lti
from grader.serve.lti.launch import Refused
from grader.serve.lti.logins import TooManyLogins

from .render import CSP, page
from .session import secret, secure, start_session

router = APIRouter(include_in_schema=False)


async def _params(request: Request, query: bool = True) -> dict[str, str]:
    """The request's parameters: the form's, and (``query``) the query string's."""
    params = {k: v for k, v in request.query_params.items()} if query else {}
    if request.method == "POST":
        form = await request.form()
        params.update({k: v for k, v in form.items() if isinstance(v, str)})
    return params


def _public(request: Request) -> str | None:
    """``grader serve --public-url``: the base of every LTI URL (None: the request's)."""
    base: str | None = request.app.state.grader.settings.public_url
    return base


def _launch_url(request: Request) -> str:
    """The launch URL (the login's ``redirect_uri``, a deep link's ``url``): on the public URL
    when one is set, never on the request's ``Host`` then."""
    base = _public(request)
    return f"{base}/lti/launch" if base else str(request.url_for("lti_launch"))


def refused(request: Request, r: Refused, issuer: str = "") -> HTMLResponse:
    """The person's page and the audit line of a refusal."""
    audit.record(request, "lti.refused", target=issuer[:200], detail={"reason": r.reason, "why": r.detail})
    return page(request, "lti_refused.html", status=r.status, status_code=r.status, message=r.message)


@router.api_route("/lti/login", methods=["GET", "POST"], name="lti_login")
async def login(request: Request) -> Response:
    params = await _params(request)
    db = request.app.state.grader.db
    try:
        response: Response = await anyio.to_thread.run_sync(
            adapter.login, db, params, request.cookies, secure(request), _launch_url(request),
            audit.address_of(request))
    except TooManyLogins as e:
        # no audit line: a flood of them would fill the audit log (limits.ErrorBackoff slows it down)
        minutes = max(1, -(-e.retry_after_s // 60))
        return page(request, "lti_refused.html", status=429, headers={"Retry-After": str(e.retry_after_s)},
                    status_code=429,
                    message=f"Too many logins from your network address were started and not completed. Wait "
                            f"{minutes} minute{'s' if minutes > 1 else ''}, then open the tool again from your "
                            f"course.")
    except adapter.UnknownDeployment as e:
        return refused(request, Refused(401, "unknown_deployment", "This login names a deployment that is not "
                                                                   "registered with this grader.", str(e)),
                       params.get("iss", ""))
    except (OIDCException, LtiException) as e:
        missing = not params.get("iss") or not params.get("login_hint")
        r = (Refused(400, "missing_param", "This login request lacks its issuer (iss) or login_hint.", str(e))
             if missing else
             Refused(401, "unknown_platform", "This login comes from a platform (issuer and client id) that is not "
                                              "registered with this grader.", str(e)))
        return refused(request, r, params.get("iss", ""))
    return response


def _course(request: Request) -> Any:
    return request.app.state.grader.engine.course


@router.post("/lti/launch", name="lti_launch")
async def launch(request: Request) -> Response:
    # the form only: an id_token in the query string would be written to access logs and proxies
    # (OIDC's form_post response mode is the only one the login asks for)
    params = await _params(request, query=False)
    state = request.app.state.grader
    course = _course(request)
    ids = {a.id for a in course.assessments} if course is not None else set()

    def run() -> tuple[lti.Verified, Any]:
        v = lti.verify(adapter.new_launch(state.db, params, request.cookies, secure(request)), state.db, ids)
        who = lti.record(state.db, v, audit.address_of(request), lti.expiry(v.claims, state.now()))
        return v, who
    try:
        v, who = await anyio.to_thread.run_sync(run)
    except Refused as r:
        return refused(request, r, lti.claimed_issuer(params.get("id_token", "")))
    if v.kind == lti.DEEP_LINKING:
        launch_id = await anyio.to_thread.run_sync(deep_link.keep, state.db, v.claims, who.login)
        return _picker(request, launch_id, v.claims)
    assert v.assessment is not None
    a = course.get(v.assessment)
    target = (f"/staff/assessments/{v.assessment}" if who.instructor
              else f"/learn/assessments/{v.assessment}")
    request.state.who = who
    resp = page(request, "lti_landing.html", target=target, title=a.title if a else v.assessment)
    await start_session(request, who, resp)
    # the LMS course's roster, in the background (at most one sync per course an hour)
    await anyio.to_thread.run_sync(state.lti.sync_after_launch_of, v.platform_id, str(v.claims[lti.CONTEXT]["id"]))
    return resp


def _csrf(request: Request, launch_id: str) -> str:
    """The picker form's token, bound to its launch (the page has no session: it came cross-site)."""
    return hmac.new(secret(request), f"lti-deep-link:{launch_id}".encode(), hashlib.sha256).hexdigest()[:40]


def _choices(request: Request) -> list[deep_link.Choice]:
    state = request.app.state.grader
    course = _course(request)
    if course is None:
        return []
    return [deep_link.Choice(a.id, a.title, round(sum(assessbook.points(state.engine, a).values()), 6),
                             a.opens, a.due) for a in course.assessments]


def _picker(request: Request, launch_id: str, claims: dict[str, Any]) -> HTMLResponse:
    ctx = claims.get(lti.CONTEXT) or {}
    return page(request, "lti_deep_link.html", launch_id=launch_id, token=_csrf(request, launch_id),
                choices=_choices(request), course_title=str(ctx.get("title") or ctx.get("label") or ""))


@router.post("/lti/deep-link", name="lti_deep_link")
async def deep_link_answer(request: Request) -> Response:
    form = await request.form()
    launch_id, token, chosen = (str(form.get(k) or "")[:200] for k in ("launch_id", "csrf", "assessment"))
    if not launch_id or not hmac.compare_digest(token, _csrf(request, launch_id)):
        return refused(request, Refused(403, "deep_link_csrf", "This form has expired or did not come from this "
                                                               "site; add the assessment again from your course."))
    choice = next((c for c in _choices(request) if c.id == chosen), None)
    state = request.app.state.grader
    if choice is None:
        claims = await anyio.to_thread.run_sync(deep_link.kept, state.db, launch_id)
        if claims is not None:      # the person can pick again on the same page
            return _picker(request, launch_id, claims["claims"])
        return refused(request, Refused(400, "deep_link_expired", "This page has expired; add the assessment again "
                                                                  "from your course."))
    try:
        ans = await anyio.to_thread.run_sync(deep_link.answer, state.db, launch_id, choice, _launch_url(request),
                                             state.now())
    except Refused as r:
        return refused(request, r)
    audit.record(request, "lti.deep_link", actor=ans.login, target=choice.id,
                 detail={"return_url": ans.return_url[:300], "title": choice.title, "points": choice.points})
    csp = CSP.replace("form-action 'self'", f"form-action {ans.origin}")
    return page(request, "lti_deep_link_response.html", headers={"Content-Security-Policy": csp},
                return_url=ans.return_url, jwt=ans.jwt, title=choice.title)
