"""The LMS's people as grader's users: one rule for a launch (:mod:`.launch`) and a roster sync
(:mod:`.nrps`). A platform's user (issuer + subject, kept exactly) is one grader user, made once
with a stable login; its name and e-mail follow the LMS's; an LMS instructor is made staff, a
learner never demoted."""
from __future__ import annotations

import hashlib
import secrets
import unicodedata
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from grader.db.models import LtiAccount, User

BIDI = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def login_for(issuer: str, subject: str) -> str:
    """The login of a new LTI user: stable (a digest of issuer and subject), a valid grader id,
    nothing of the LMS's user id shown (``lti-`` + 16 hex)."""
    return "lti-" + hashlib.sha256(f"{issuer}\n{subject}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def clean_text(x: object, n: int) -> str:
    """A claim's text as kept: control characters (a newline, a terminal's escape) and bidi
    overrides (which make a name read as another on staff pages and in a terminal) dropped,
    spaces trimmed, at most ``n`` characters."""
    if not isinstance(x, str):
        return ""
    return "".join(c for c in x if c not in BIDI and unicodedata.category(c) != "Cc").strip()[:n]


def person_name(claims: Mapping[str, object]) -> str:
    """``name``, else ``given_name family_name`` (an id_token's claims or a roster's member)."""
    return clean_text(claims.get("name"), 200) or " ".join(
        p for p in (clean_text(claims.get("given_name"), 100), clean_text(claims.get("family_name"), 99)) if p)


def ensure_user(conn: Connection, issuer: str, subject: str, *, name: str, email: str, role: str,
                now: datetime) -> tuple[int, bool]:
    """The user of (issuer, subject), made (with ``role``) if there is none: (user id, made)."""
    uid = conn.execute(select(LtiAccount.user_id).where(LtiAccount.issuer == issuer,
                                                        LtiAccount.subject == subject)).scalar()
    if uid is not None:
        changes = {k: v for k, v in (("name", name[:200]), ("email", email[:320])) if v}
        if role == "instructor":        # the LMS's instructor is staff here; a learner is never demoted
            changes["role"] = "instructor"
        if changes:
            conn.execute(update(User).where(User.id == uid).values(**changes))
        return int(uid), False
    login = login_for(issuer, subject)
    for _ in range(20):                 # an id taken by hand: another, bounded
        if conn.execute(select(User.id).where(User.login == login)).first() is None:
            break
        login = f"{login_for(issuer, subject)}-{secrets.token_hex(2)}"
    uid = conn.execute(insert(User).values(login=login, name=name[:200], email=email[:320],
                                           role=role, created_at=now).returning(User.id)).scalar_one()
    conn.execute(insert(LtiAccount).values(issuer=issuer, subject=subject, user_id=uid, created_at=now))
    return int(uid), True


__all__ = ["login_for", "clean_text", "person_name", "ensure_user"]
