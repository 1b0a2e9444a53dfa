"""LTI Advantage Names and Role Provisioning Services, the tool's side: an LMS course's roster
(its context's ``memberships_url``, pages followed through ``Link: rel=next``, bounded) into
grader's users, LTI accounts (issuer + subject) and the course's members.

Roles: an ``Instructor``, ``TeachingAssistant`` or ``Administrator`` of the context is an
instructor, a ``Learner`` a learner; other roles (Mentor, ...) are left out. A user is made only
for someone grader does not know yet (by issuer and subject), with the login a launch would
give them; an existing user takes the roster's name and e-mail, and an instructor of the LMS
course becomes an instructor (never the reverse), as a launch does (grader/serve/lti/launch.py).
A member the LMS marks ``Inactive`` or ``Deleted`` stops being a member (no more passbacks).
The HTTP calls run outside any transaction; the roster is written in one; each sync is a line
of the audit log.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import httpx
from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from grader.db import audit
from grader.db.models import LtiAccount, LtiContext, LtiMember

from . import ags
from .ags import ServiceError, SigningKey
from .launch import MAX_ID, role_of as launch_role_of
from .people import clean_text, ensure_user, person_name
from .passback import endpoint, platform_of_context

if TYPE_CHECKING:
    from grader.db.database import Database

MEMBERS_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
MAX_MEMBERS = 20_000


@dataclass(frozen=True)
class Synced:
    context: str
    members: int            # in the roster as read (active, with a role grader maps)
    created: int            # users made
    removed: int            # members no longer active
    skipped: int            # roles grader does not map, or no user id
    pages: int


def role_of(roles: list[str]) -> str | None:
    """``instructor``, ``learner`` or None: the launch's rule (:func:`.launch.role_of`: the course's
    roles decide; an institution role never makes a course's learner staff)."""
    return launch_role_of(roles)


def fetch(client: httpx.Client, token: Callable[[], str], url: str) -> tuple[list[dict[str, Any]], int]:
    """Every member of the roster at ``url`` (pages followed, at most :data:`ags.MAX_PAGES`)."""
    members: list[dict[str, Any]] = []
    nxt: str | None = url
    pages = 0
    while nxt is not None and pages < ags.MAX_PAGES and len(members) < MAX_MEMBERS:
        resp = ags.send(client, "GET", nxt, "reading the roster",
                        headers={"Authorization": f"Bearer {token()}", "Accept": MEMBERS_TYPE})
        pages += 1
        try:
            body = resp.json()
        except ValueError:
            raise ServiceError("reading the roster: the answer is not JSON") from None
        got = body.get("members") if isinstance(body, dict) else None
        if not isinstance(got, list):
            raise ServiceError("reading the roster: the answer has no members list")
        members.extend(m for m in got if isinstance(m, dict))
        nxt = ags.next_link(resp) or (str(body["next"]) if isinstance(body.get("next"), str) else None)
        if nxt is not None and _origin(nxt) != _origin(url):     # the token goes to the roster's own host only
            raise ServiceError(f"reading the roster: its next page is on another host ({httpx.URL(nxt).host[:100]})")
    return members[:MAX_MEMBERS], pages


def _origin(url: str) -> tuple[str, str, int | None]:
    u = httpx.URL(url)
    return (u.scheme, u.host, u.port)


def store(conn: Connection, context_pk: int, issuer: str, members: list[dict[str, Any]], now: datetime) -> Synced:
    """The roster written: users, accounts, members (in the caller's transaction)."""
    ctx = conn.execute(select(LtiContext.context_id).where(LtiContext.id == context_pk)).scalar_one()
    created = removed = skipped = n = 0
    for m in members:
        subject, roles = m.get("user_id"), m.get("roles")
        role = role_of(roles) if isinstance(roles, list) else None
        if not isinstance(subject, str) or not subject or len(subject) > MAX_ID or role is None:
            skipped += 1
            continue
        active = str(m.get("status") or "Active") == "Active"
        if not active:
            uid = conn.execute(select(LtiAccount.user_id).where(LtiAccount.issuer == issuer,
                                                                 LtiAccount.subject == subject)).scalar()
            if uid is not None:
                removed += conn.execute(delete(LtiMember).where(LtiMember.context_pk == context_pk,
                                                                LtiMember.user_id == uid)).rowcount
            continue
        email = clean_text(m.get("email"), 320)
        uid, made = ensure_user(conn, issuer, subject, name=person_name(m), email=email if "@" in email else "",
                                role=role, now=now)
        created += made
        n += 1
        kept = [str(r)[:200] for r in roles][:20] if isinstance(roles, list) else []
        if conn.execute(update(LtiMember).where(LtiMember.context_pk == context_pk, LtiMember.user_id == uid)
                        .values(roles=kept, seen_at=now)).rowcount == 0:
            conn.execute(insert(LtiMember).values(context_pk=context_pk, user_id=uid, roles=kept, seen_at=now))
    conn.execute(update(LtiContext).where(LtiContext.id == context_pk).values(roster_synced_at=now))
    return Synced(ctx, n, created, removed, skipped, 0)


def sync(db: Database, context_pk: int, *, client: httpx.Client, tokens: ags.Tokens,
         key: Callable[[], SigningKey], now: datetime, actor: str, address: str = audit.CLI) -> Synced:
    """Read the context's roster from its platform and store it; a refusal or an LMS that cannot
    be reached is a :class:`ServiceError` (and a line of the audit log), nothing changed."""
    with db.read() as conn:
        ctx, p = platform_of_context(conn, context_pk)
        url, ctx_id, ep = ctx.memberships_url, ctx.context_id, endpoint(p)
    try:
        if not url:
            raise ServiceError(f"the LMS course {ctx_id!r} gave no memberships URL: the platform does not offer "
                               "Names and Role Provisioning to this tool")
        signing = key()

        def token() -> str:
            return tokens.get(client, ep, signing, (ags.NRPS,))
        members, pages = fetch(client, token, url)
    except ServiceError as e:
        with db.write() as conn:
            audit.write(conn, "lti.roster.failed", actor=actor, address=address, target=ctx_id[:200],
                        detail={"error": e.message})
        raise
    with db.write() as conn:
        out = store(conn, context_pk, ep.issuer, members, now)
        out = Synced(out.context, out.members, out.created, out.removed, out.skipped, pages)
        audit.write(conn, "lti.roster", actor=actor, address=address, target=ctx_id[:200],
                    detail={"members": out.members, "created": out.created, "removed": out.removed,
                            "skipped": out.skipped, "pages": pages})
    return out


def find_context(conn: Connection, text: str) -> int:
    """A context by its row id or its LMS context id (the only one of that id); ServiceError if none."""
    q = select(LtiContext.id).where(LtiContext.context_id == text[:255])
    ids = list(conn.execute(q).scalars())
    if not ids and text.isdigit():
        ids = list(conn.execute(select(LtiContext.id).where(LtiContext.id == int(text))).scalars())
    if len(ids) != 1:
        raise ServiceError(f"no LMS course {text[:100]!r}" if not ids else
                           f"{len(ids)} LMS courses have the id {text[:100]!r}: give the row id instead")
    return int(ids[0])
