"""The tool's RSA key pairs (table ``lti_keys``): the newest key not retired signs the tool's
messages (deep-linking responses, the service-token assertions); every key not yet expired is
published in the key set (``/.well-known/jwks.json``) so platforms can still check a message
signed just before a rotation.

The private key is kept in the database (PEM, unencrypted): a database backup holds it, and
whoever can read the database can sign as this tool. ``grader lti keys --rotate`` retires the
signing key (served ``overlap`` longer, then dropped) and makes a new one.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, insert, select, update

from grader.db.models import LtiKey

KEY_BITS = 2048
OVERLAP = timedelta(days=7)


@dataclass(frozen=True)
class ToolKey:
    """A key pair: ``kid`` names it in JWT headers and the key set."""

    kid: str
    private_pem: str
    public_jwk: dict[str, str]
    created_at: datetime | None = None
    retired_at: datetime | None = None
    expires_at: datetime | None = None


def _new_key(conn: Connection, now: datetime) -> ToolKey:
    from jwcrypto import jwk
    key = jwk.JWK.generate(kty="RSA", size=KEY_BITS)
    kid = key.thumbprint()                                  # RFC 7638: the same key, the same kid
    public: dict[str, Any] = key.export_public(as_dict=True)
    public = {**{k: str(v) for k, v in public.items()}, "kid": kid, "alg": "RS256", "use": "sig"}
    pem = key.export_to_pem(private_key=True, password=None).decode("ascii")
    conn.execute(insert(LtiKey).values(kid=kid, private_pem=pem, public_jwk=public, created_at=now))
    return ToolKey(kid, pem, public, now)


def _row(r: Any) -> ToolKey:
    return ToolKey(r.kid, r.private_pem, dict(r.public_jwk), r.created_at, r.retired_at, r.expires_at)


def signing_key(conn: Connection, now: datetime) -> ToolKey:
    """The key that signs now: the newest not retired (the first one is made here)."""
    row = conn.execute(select(LtiKey).where(LtiKey.retired_at.is_(None))
                       .order_by(LtiKey.created_at.desc(), LtiKey.kid).limit(1)).first()
    return _row(row) if row is not None else _new_key(conn, now)


def rotate(conn: Connection, now: datetime, overlap: timedelta = OVERLAP) -> ToolKey:
    """Retire the signing key(s) (still served until ``now + overlap``) and make a new one."""
    conn.execute(update(LtiKey).where(LtiKey.retired_at.is_(None)).values(retired_at=now, expires_at=now + overlap))
    return _new_key(conn, now)


def keys(conn: Connection) -> list[ToolKey]:
    """Every key on record, newest first (``grader lti keys``)."""
    return [_row(r) for r in conn.execute(select(LtiKey).order_by(LtiKey.created_at.desc(), LtiKey.kid))]


def _aware(t: datetime) -> datetime:
    from datetime import timezone
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)   # SQLite gives naive UTC back


def key_set(conn: Connection, now: datetime) -> dict[str, list[dict[str, str]]]:
    """The public key set (RFC 7517) of every key not expired: what platforms fetch."""
    live = [k for k in keys(conn) if k.expires_at is None or _aware(k.expires_at) > now]
    return {"keys": [k.public_jwk for k in live]}


def has_signing_key(conn: Connection) -> bool:
    return conn.execute(select(LtiKey.kid).where(LtiKey.retired_at.is_(None)).limit(1)).first() is not None


__all__ = ["ToolKey", "signing_key", "rotate", "keys", "key_set", "has_signing_key", "OVERLAP"]
