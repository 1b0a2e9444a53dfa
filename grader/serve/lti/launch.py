"""The launch (``POST /lti/launch``): the id_token checked by pylti1p3 step by step, each
failure a :class:`Refused` with its own reason, then what the launch records.

Checks, in order: id_token and state present; the JWT's format; the issuer and client id
registered; the signature against the platform's key set, with ``exp`` and ``iat`` required
(expired, or issued in the future, by more than :data:`~.adapter.LEEWAY_S` of clock skew: refused); the deployment registered; the nonce issued by this
tool's login and never used before (``lti_nonces``, on every instance); the state (its cookie,
or the state stored at login); the message (pylti1p3's validators: version, subject, roles,
resource link or deep-linking settings); grader's own needs (a context; a role it knows; for a
resource link, an assessment of the course). Nothing is written before every check passed.

Then, in one transaction: the nonce recorded (a concurrent replay loses there), the state
used up, the user (an :class:`LtiAccount` per issuer and subject: the same person is the same
user on every launch), the context with its services' URLs, the membership, the resource link
and the audit line ``lti.launch``.
"""
from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jwt
from pylti1p3.exception import LtiException
from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from grader.db import Database, audit
from grader.db.models import (LtiContext, LtiLink, LtiMember, LtiNonce, LtiState, Token, User,
                              now)
from grader.serve.auth import Principal, new_token, token_hash, token_prefix

from . import registry
from .adapter import LEEWAY_S, LtiLaunch
from .people import clean_text, ensure_user, person_name


LTI = "https://purl.imsglobal.org/spec/lti/claim/"
MESSAGE_TYPE, ROLES, CONTEXT, RESOURCE_LINK, CUSTOM, DEPLOYMENT = (
    LTI + "message_type", LTI + "roles", LTI + "context", LTI + "resource_link", LTI + "custom", LTI + "deployment_id")
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
RESOURCE, DEEP_LINKING = "LtiResourceLinkRequest", "LtiDeepLinkingRequest"
LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
MAX_ID = 255                        # sub, context id, resource link id (OIDC: sub is at most 255)
STAFF = {"Instructor", "Administrator", "TeachingAssistant"}
LEARNERS = {"Learner", "Student"}


class Refused(Exception):
    """A launch refused: ``status`` (400/401/403), ``reason`` (a short code for the audit log)
    and ``message`` (for the person: no library internals); ``detail``: for the audit log only."""

    def __init__(self, status: int, reason: str, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.status, self.reason, self.message, self.detail = status, reason, message, detail[:300]


@dataclass(frozen=True)
class Verified:
    """A launch whose id_token passed every check (nothing recorded yet)."""

    claims: dict[str, Any]
    platform_id: int
    issuer: str
    state_key: str                  # the login's state, used up by the launch
    role: str                       # instructor | learner
    kind: str                       # RESOURCE | DEEP_LINKING
    assessment: str | None          # a resource link's assessment


def role_of(roles: object) -> str | None:
    """grader's role for the LTI roles claim. The context (course) roles decide: instructor for
    Instructor, Administrator or TeachingAssistant (``…/membership#…`` of LIS v2 and their
    sub-roles, or their short names), learner for Learner (or Student). Institution and system
    roles never outweigh them: Canvas sends ``institution/person#Instructor`` for anyone who
    teaches *some* course, and a teacher of another course who is a learner in this one is a
    learner here. Only with no context role at all does an institution or system Administrator
    (an LMS administrator opening a course) count as instructor. None: no role grader serves."""
    context, admin = set(), False
    for r in roles if isinstance(roles, list) else []:
        if not isinstance(r, str):
            continue
        if r.startswith(LIS + "membership"):
            context.add(r.rpartition("#")[2] if "#" in r else r.rpartition("/")[2])
        elif r.startswith((LIS + "institution/", LIS + "system/")):
            admin = admin or r.rpartition("#")[2] == "Administrator"
        elif ":" not in r and "/" not in r:     # LTI's short names are context roles
            context.add(r)
    if context & STAFF:
        return "instructor"
    if context & LEARNERS:
        return "learner"
    return "instructor" if admin and not context else None


def _audience(claims: dict[str, Any], client_id: str) -> None:
    """OIDC Core 3.1.3.7 (LTI's security framework): ``aud`` contains the tool's client id; with
    several audiences, ``azp`` is required; ``azp``, when present, is the tool's client id."""
    aud, azp = claims.get("aud"), claims.get("azp")
    auds = aud if isinstance(aud, list) else [aud]
    if client_id not in auds or (len(auds) > 1 and azp is None) or (azp is not None and azp != client_id):
        raise Refused(401, "bad_audience", "This launch was not issued for this grader (its audience or "
                                           "authorized party is another tool).")


def _step(status: int, reason: str, message: str, fn: Any) -> None:
    try:
        fn()
    except LtiException as e:
        raise Refused(status, reason, message, str(e)) from None


def claimed_issuer(id_token: str) -> str:
    """The ``iss`` an id_token claims, unverified (for the audit line of a refusal), or ""."""
    try:
        iss = jwt.decode(id_token, options={"verify_signature": False}).get("iss")
    except (jwt.InvalidTokenError, ValueError, TypeError):
        return ""
    return iss[:200] if isinstance(iss, str) else ""


def nonce_hash(issuer: str, nonce: str) -> str:
    return hashlib.sha256(f"{issuer}\n{nonce}".encode("utf-8", "surrogatepass")).hexdigest()


def verify(launch: LtiLaunch, db: Database, course_ids: set[str]) -> Verified:
    """Every check of the launch (see the module's doc); :class:`Refused` at the first that fails."""
    req = launch._request
    id_token, state = req.get_param("id_token"), req.get_param("state")
    if not id_token or not state:
        raise Refused(400, "missing_param", "This launch carried no id_token or no state: open the tool again "
                                            "from your course.")
    launch.set_auto_validation(False)
    _step(400, "malformed", "The launch's id_token is not a readable JWT.", launch.validate_jwt_format)
    claims = launch.body()
    issuer = claims.get("iss")
    if not isinstance(issuer, str) or not issuer:
        raise Refused(400, "missing_claim", "The launch's id_token names no issuer (iss).")
    _step(401, "unknown_platform", "This launch comes from a platform (issuer and client id) that is not "
                                   "registered with this grader.", launch.validate_registration)
    platform = launch.get_tool_conf().platform
    assert platform is not None
    _audience(claims, platform.client_id)
    try:
        launch.validate_jwt_signature()
    except LtiException as e:
        cause = e.__cause__
        if isinstance(cause, jwt.ExpiredSignatureError):
            raise Refused(401, "expired", "This launch has expired; open the tool again from your course.",
                          str(e)) from None
        if isinstance(cause, jwt.ImmatureSignatureError):
            raise Refused(401, "not_yet_valid", "This launch is dated in the future (issued at or valid from a "
                                                "time not yet come); check the platform's clock.", str(e)) from None
        if str(e).startswith(("Error during fetch URL", "Invalid response from")):
            raise Refused(401, "keyset_unavailable", "The platform's key set could not be read, so this launch "
                                                     "could not be checked; try again later.", str(e)) from None
        raise Refused(401, "bad_signature", "This launch's signature does not verify with the platform's keys.",
                      str(e)) from None
    if not all(isinstance(claims.get(k), (int, float)) for k in ("exp", "iat")):     # PyJWT checks them if there
        raise Refused(400, "missing_claim", "The launch's id_token lacks its expiry (exp) or issue time (iat).")
    if not isinstance(claims.get(DEPLOYMENT), str) or not claims.get(DEPLOYMENT):
        raise Refused(400, "missing_claim", "The launch's id_token names no deployment.")
    _step(401, "unknown_deployment", "This launch names a deployment that is not registered with this grader.",
          launch.validate_deployment)
    nonce = claims.get("nonce")
    if not isinstance(nonce, str) or not nonce:
        raise Refused(400, "missing_claim", "The launch's id_token carries no nonce.")
    with db.read() as conn:
        used = conn.execute(select(LtiNonce.hash).where(LtiNonce.hash == nonce_hash(issuer, nonce))).first()
    if used is not None:
        raise Refused(401, "replayed", "This launch was already used (its nonce was seen before); open the tool "
                                       "again from your course.")
    session = launch.get_session_service()
    if not session.check_nonce(nonce):
        raise Refused(401, "unknown_nonce", "This launch's nonce was not issued by this grader's login, or has "
                                            "expired; open the tool again from your course.")
    stored = session.storage.get_value(state)
    bound = (isinstance(stored, dict) and hmac.compare_digest(str(stored.get("nonce", "")), nonce)
             and stored.get("platform") == platform.id)
    cookie = launch._cookie_service.get_cookie(state)
    if not bound or (req.is_secure() and cookie != state):
        raise Refused(401, "bad_state", "This launch's state is unknown or has expired (the login did not start "
                                        "here, or took too long); open the tool again from your course.")
    kind = claims.get(MESSAGE_TYPE)
    if kind not in (RESOURCE, DEEP_LINKING):
        raise Refused(400, "wrong_message_type", "This kind of LTI message is not supported here (only resource "
                                                 "link and deep-linking launches).")
    _step(400, "bad_message", "The launch's message is incomplete (its version, user, roles, resource link or "
                              "deep-linking settings).", launch.validate_message)
    context = claims.get(CONTEXT)
    if not isinstance(context, dict) or not isinstance(context.get("id"), str) or not context["id"]:
        raise Refused(400, "missing_claim", "The launch names no course (context claim).")
    # identifiers are kept whole or not at all: cut to the columns' 255, two long ones would be one
    link = claims.get(RESOURCE_LINK)
    ids = [claims.get("sub"), context["id"]] + ([link.get("id")] if isinstance(link, dict) else [])
    if not all(isinstance(i, str) and 0 < len(i) <= MAX_ID for i in ids):
        raise Refused(400, "bad_message", f"The launch's user (sub), course or link id is empty or longer than "
                                          f"{MAX_ID} characters.")
    role = role_of(claims.get(ROLES))
    if role is None:
        raise Refused(403, "no_role", "Your role in this course is neither instructor nor learner; grader only "
                                      "serves those.")
    if kind == DEEP_LINKING and role != "instructor":
        raise Refused(403, "learner_deep_linking", "Only the course's instructors can add grader's assessments "
                                                   "to the course.")
    assessment = None
    if kind == RESOURCE:
        assessment = _assessment(db, platform.id, claims, course_ids)
    return Verified(claims, platform.id, issuer, session.storage.key(state), role, str(kind), assessment)


def _assessment(db: Database, platform_id: int, claims: dict[str, Any], course_ids: set[str]) -> str:
    """The assessment a resource link opens: the one recorded for it, else the ``assessment``
    custom parameter that deep linking put in it."""
    link_id = str((claims.get(RESOURCE_LINK) or {}).get("id", ""))
    with db.read() as conn:
        known = conn.execute(select(LtiLink.assessment_id).join(LtiContext, LtiContext.id == LtiLink.context_pk)
                             .where(LtiContext.platform_id == platform_id,
                                    LtiContext.context_id == claims[CONTEXT]["id"],
                                    LtiLink.resource_link_id == link_id)).scalar()
    custom = claims.get(CUSTOM)
    wanted = known or (custom.get("assessment") if isinstance(custom, dict) else None)
    if not isinstance(wanted, str) or not wanted:
        raise Refused(400, "no_assessment", "This link names no assessment of grader (its custom parameter "
                                            "'assessment'); ask the instructor to add it again by deep linking.")
    if wanted not in course_ids:
        raise Refused(400, "unknown_assessment", "This link names an assessment this course does not have; ask "
                                                 "the instructor to add it again by deep linking.")
    return wanted


# ------------------------------------------------------------------ what a launch records

def record(db: Database, v: Verified, address: str, exp: float) -> Principal:
    """The launch's rows in one transaction (see the module's doc): the launching user."""
    c = v.claims
    try:
        with db.write() as conn:
            # used nonces kept until their token has expired (a replay after that is refused as expired)
            conn.execute(delete(LtiNonce).where(LtiNonce.expires_at < now().timestamp()))
            conn.execute(insert(LtiNonce).values(hash=nonce_hash(v.issuer, c["nonce"]), expires_at=exp))
            conn.execute(delete(LtiState).where(LtiState.key == v.state_key))
            who = _user(conn, v)
            ctx = _context(conn, v)
            _member(conn, ctx, who.id, c.get(ROLES))
            if v.kind == RESOURCE and v.assessment is not None:
                _link(conn, ctx, c, v.assessment)
            audit.write(conn, "lti.launch", actor=who.login,
                        address=address, target=v.assessment or str(c[CONTEXT]["id"])[:200],
                        detail={"issuer": v.issuer, "deployment": c.get(DEPLOYMENT), "context": c[CONTEXT]["id"],
                                "resource_link": (c.get(RESOURCE_LINK) or {}).get("id"), "role": v.role,
                                "message": v.kind})
    except IntegrityError:      # another request recorded this nonce first
        raise Refused(401, "replayed", "This launch was already used (its nonce was seen before); open the tool "
                                       "again from your course.") from None
    return who


def _user(conn: Connection, v: Verified) -> Principal:
    c = v.claims
    uid, _ = ensure_user(conn, v.issuer, str(c["sub"]),        # the subject exactly as signed (1 to 255 characters)
                         name=person_name(c), email=clean_text(c.get("email"), 320), role=v.role, now=now())
    u = conn.execute(select(User.id, User.login, User.name, User.role).where(User.id == uid)).one()
    tid = conn.execute(select(Token.id).where(Token.user_id == uid, Token.revoked_at.is_(None))
                       .order_by(Token.id.desc())).scalar()
    if tid is None and conn.execute(select(Token.id).where(Token.user_id == uid).limit(1)).first() is not None:
        # every token of this user was revoked (`grader users revoke`): a launch does not undo that
        raise Refused(403, "revoked", "Your access to grader was revoked by the course's staff; ask them to "
                                      "restore it.")
    if tid is None:     # a session needs a token row: one made here, never shown to anyone
        token = new_token()
        tid = conn.execute(insert(Token).values(user_id=uid, hash=token_hash(token), prefix=token_prefix(token),
                                                created_at=now()).returning(Token.id)).scalar_one()
        audit.write(conn, "token.issued", actor="lti", address="lti", target=u.login,
                    detail={"prefix": token_prefix(token), "via": "lti launch (not shown)"})
    return Principal(u.id, u.login, u.name, u.role, tid)


def service_url(x: object) -> str | None:
    """A service URL of the claims (roster, line items, a line item) kept only if grader may call
    it: absolute https (plain http only to a loopback host, as in tests), at most 1000 characters
    (never cut: a cut URL is another URL). grader sends the platform's access token there."""
    if not isinstance(x, str) or len(x) > 1000:
        return None
    try:
        return registry.check_url(x, "service URL")
    except registry.LtiError:
        return None


def _services(c: dict[str, Any]) -> dict[str, Any]:
    nrps, ags = c.get(NRPS), c.get(AGS)
    out: dict[str, Any] = {}
    if isinstance(nrps, dict) and service_url(nrps.get("context_memberships_url")):
        out["memberships_url"] = service_url(nrps["context_memberships_url"])
    if isinstance(ags, dict):
        if service_url(ags.get("lineitems")):
            out["lineitems_url"] = service_url(ags["lineitems"])
        if isinstance(ags.get("scope"), list):
            out["ags_scopes"] = [s for s in ags["scope"] if isinstance(s, str)][:20]
    return out


def _context(conn: Connection, v: Verified) -> int:
    c = v.claims
    ctx = c[CONTEXT]
    values = {"deployment_id": str(c[DEPLOYMENT])[:255], "title": clean_text(ctx.get("title"), 500)
              or clean_text(ctx.get("label"), 500), **_services(c)}
    pk = conn.execute(select(LtiContext.id).where(LtiContext.platform_id == v.platform_id,
                                                  LtiContext.context_id == ctx["id"])).scalar()
    if pk is None:
        return int(conn.execute(insert(LtiContext).values(platform_id=v.platform_id, context_id=ctx["id"][:255],
                                                          created_at=now(), **values)
                                .returning(LtiContext.id)).scalar_one())
    conn.execute(update(LtiContext).where(LtiContext.id == pk).values(**values))
    return int(pk)


def _member(conn: Connection, ctx: int, user_id: int, roles: object) -> None:
    kept = [r[:200] for r in roles if isinstance(r, str)][:20] if isinstance(roles, list) else []
    pk = conn.execute(select(LtiMember.id).where(LtiMember.context_pk == ctx, LtiMember.user_id == user_id)).scalar()
    if pk is None:
        conn.execute(insert(LtiMember).values(context_pk=ctx, user_id=user_id, roles=kept, seen_at=now()))
    else:
        conn.execute(update(LtiMember).where(LtiMember.id == pk).values(roles=kept, seen_at=now()))


def _link(conn: Connection, ctx: int, c: dict[str, Any], assessment: str) -> None:
    rl = c.get(RESOURCE_LINK) or {}
    ags = c.get(AGS)
    lineitem = service_url(ags.get("lineitem")) if isinstance(ags, dict) else None
    row = conn.execute(select(LtiLink.id, LtiLink.lineitem_url).where(
        LtiLink.context_pk == ctx, LtiLink.resource_link_id == str(rl["id"])[:255])).first()
    if row is None:
        conn.execute(insert(LtiLink).values(context_pk=ctx, resource_link_id=str(rl["id"])[:255],
                                            assessment_id=assessment, title=clean_text(rl.get("title"), 500),
                                            lineitem_url=lineitem[:1000] if lineitem else None, created_at=now()))
    elif lineitem and row.lineitem_url != lineitem:
        conn.execute(update(LtiLink).where(LtiLink.id == row.id).values(lineitem_url=lineitem[:1000]))


def expiry(claims: dict[str, Any], fallback: datetime) -> float:
    """Until when a nonce is kept: the token's ``exp`` (checked present) and the clock skew
    allowed past it, at least an hour."""
    exp = claims.get("exp")
    base = fallback.timestamp() + 3600
    return max(float(exp) + LEEWAY_S, base) if isinstance(exp, (int, float)) else base
