"""Outstanding OIDC logins per source address: ``/lti/login`` is unauthenticated and each login
stores a state (and pylti1p3's nonce) in ``lti_states`` for :data:`~.adapter.LOGIN_S`. A cap on
the whole table would let anyone block every login; so each source address (an IPv6 address
by its /64: one host has that many) may have at most ``limit`` states outstanding (issued, not
yet used by a launch, not expired). Past it, the login is refused (429, retry after the oldest
expires) and nothing is written; other addresses' logins are unaffected.

The states issued to an address are listed in one row of ``lti_states`` (``login-source-`` and a
digest of the address), which expires with its newest state; a launch deletes its state, so a
completed login frees its place at once (a campus NAT's learners who launch are not counted
for 10 minutes). The row's list is read and written under the database's write lock (and
``FOR UPDATE`` where the database has it): concurrent logins of one address cannot pass it."""
from __future__ import annotations

import hashlib
import ipaddress
import math
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from grader.db import Database
from grader.db.models import LtiState

MAX_OUTSTANDING = 50        # states (logins not completed) per source address at once
PREFIX = "login-source-"


class TooManyLogins(Exception):
    """Refused: the source address has ``limit`` states outstanding; the oldest expires in
    ``retry_after_s`` seconds."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"too many logins outstanding; retry after {retry_after_s} s")
        self.retry_after_s = retry_after_s


def source_key(address: str) -> str:
    """The ``lti_states`` key listing ``address``'s states: an IPv6 address by its /64, an
    IPv4-mapped one as IPv4, anything else as given."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        net = address[:200]
    else:
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        net = str(ipaddress.ip_network(f"{ip}/64", strict=False)) if ip.version == 6 else str(ip)
    return PREFIX + hashlib.sha256(net.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def _outstanding(conn: Connection, row_key: str, now: float, lock: bool) -> list[Any]:
    """(key, expires_at) of the address's states still stored and not expired, oldest first."""
    q = select(LtiState.value).where(LtiState.key == row_key, LtiState.expires_at > now)
    row = conn.execute(q.with_for_update() if lock else q).first()
    listed = row.value.get("states") if row is not None and isinstance(row.value, dict) else None
    keys = [k for k in listed if isinstance(k, str)] if isinstance(listed, list) else []
    if not keys:
        return []
    return list(conn.execute(select(LtiState.key, LtiState.expires_at)
                             .where(LtiState.key.in_(keys), LtiState.expires_at > now)
                             .order_by(LtiState.expires_at)).all())


def _refuse(live: list[Any], now: float) -> TooManyLogins:
    return TooManyLogins(max(1, math.ceil(float(live[0].expires_at) - now)))


def check(db: Database, address: str, now: float, limit: int = MAX_OUTSTANDING) -> None:
    """Raise :class:`TooManyLogins` when ``address`` has ``limit`` states outstanding (before
    the login writes anything)."""
    with db.read() as conn:
        live = _outstanding(conn, source_key(address), now, lock=False)
    if len(live) >= limit:
        raise _refuse(live, now)


def admit(db: Database, address: str, now: float, state_key: str, value: Any, lifetime_s: float,
          written: list[str], limit: int = MAX_OUTSTANDING) -> None:
    """Store the login's state (``state_key`` -> ``value``) and list it for ``address``, in one
    transaction; when ``address`` has ``limit`` states outstanding after all (a concurrent
    login took the last place), the login's other rows (``written``: its nonce) are deleted
    and :class:`TooManyLogins` raised."""
    row_key = source_key(address)
    refused: TooManyLogins | None = None
    for attempt in (1, 2):
        try:
            with db.write() as conn:
                live = _outstanding(conn, row_key, now, lock=True)
                if len(live) >= limit:  # raised once this is committed (raised inside, it would be rolled back)
                    conn.execute(delete(LtiState).where(LtiState.key.in_(written)))
                    refused = _refuse(live, now)
                else:
                    _store(conn, row_key, live, now, state_key, value, lifetime_s)
            break
        except IntegrityError:          # another instance listed this address's first state at the same time
            if attempt == 2:
                raise
    if refused is not None:
        raise refused


def _store(conn: Connection, row_key: str, live: list[Any], now: float, state_key: str, value: Any,
           lifetime_s: float) -> None:
    conn.execute(delete(LtiState).where((LtiState.key == state_key) | (LtiState.expires_at <= now)))
    conn.execute(insert(LtiState).values(key=state_key, value=value, expires_at=now + lifetime_s))
    listing = {"states": [r.key for r in live] + [state_key]}
    if conn.execute(update(LtiState).where(LtiState.key == row_key)
                    .values(value=listing, expires_at=now + lifetime_s)).rowcount == 0:
        conn.execute(insert(LtiState).values(key=row_key, value=listing, expires_at=now + lifetime_s))
