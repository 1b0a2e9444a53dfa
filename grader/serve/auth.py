"""Bearer tokens, roles and per-token rate limits.

A token is ``grd_`` and 43 random URL-safe characters (256 bits); only its SHA-256 is stored
(a token that random needs no slow hash), with a short prefix to name it in listings. It is
shown once, when made. A revoked token, an unknown one or none at all is 401.

Failed authentications (a token presented that is not valid, on the API or the sign-in page)
are counted per client address and per token prefix in the database (``auth_failures``, so
every instance on one database shares them) and logged, one line with the prefix only; after
``Settings.auth_failures`` in ``auth_window_s`` seconds, a token that is not valid from that
address or with that prefix gets 429 with ``Retry-After`` until the window ends (and costs a
read, no write); a valid one is still accepted.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import secrets
import threading
import time
from dataclasses import dataclass

import anyio
from fastapi import Depends, Request
from sqlalchemy import bindparam, case, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.sql.dml import ReturningInsert

from grader.db import Database, audit
from grader.db.models import AuthFailure, Token, User

from .errors import APIError

PREFIX = "grd_"
log = logging.getLogger("grader.serve.auth")


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_prefix(token: str) -> str:
    return token[: len(PREFIX) + 6]


@dataclass(frozen=True)
class Principal:
    """Who makes the request."""

    id: int
    login: str
    name: str
    role: str           # learner | instructor
    token_id: int

    @property
    def instructor(self) -> bool:
        return self.role == "instructor"


class RateLimiter:
    """A token bucket per bearer token: ``rate`` requests a second, ``burst`` at once."""

    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = float(rate), float(burst)
        self._buckets: dict[int, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: int) -> float:
        """0 if the request may go on; else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            level, then = self._buckets.get(key, (self.burst, now))
            level = min(self.burst, level + (now - then) * self.rate)
            if level >= 1.0:
                self._buckets[key] = (level - 1.0, now)
                return 0.0
            self._buckets[key] = (level, now)
            return (1.0 - level) / self.rate


class Throttled(Exception):
    """Too many failed authentications from this address or for this token prefix."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"retry in {wait:.0f} s")
        self.wait = wait

    @property
    def retry_after(self) -> str:
        return str(max(1, math.ceil(self.wait)))


def failure_keys(addr: str, credential: str) -> list[str]:
    """What a failure counts against: the client's address, and the token's prefix when it
    looks like one of ours."""
    keys = ["addr:" + addr[:70]]
    if credential.startswith(PREFIX) and len(credential) > len(PREFIX) + 6:
        keys.append("prefix:" + token_prefix(credential))
    return keys


def shown(credential: str) -> str:
    """A presented token as a log may show it: its prefix only."""
    if credential.startswith(PREFIX) and len(credential) > len(PREFIX) + 6:
        return ascii(token_prefix(credential) + "...")
    return "(not a grd_ token)"


class FailureThrottle:
    """Fixed-window counters of failed authentications in the ``auth_failures`` table: one row
    per key, read and written by its primary key; rows whose window has ended are deleted (at
    most every ``prune_s`` seconds per process, through the index on ``window_start``), so
    the table holds only the keys that failed in the last window."""

    def __init__(self, limit: int, window_s: float, prune_s: float = 30.0) -> None:
        self.limit, self.window_s, self.prune_s = limit, window_s, prune_s
        self._pruned = 0.0
        self._upserts: dict[str, ReturningInsert[int]] = {}

    def wait(self, db: Database, keys: list[str], now: float | None = None) -> float:
        """0 if these keys may try; else the seconds until their window ends."""
        if self.limit <= 0:
            return 0.0
        now = time.time() if now is None else now
        with db.read() as conn:
            rows = conn.execute(select(AuthFailure.window_start, AuthFailure.failures)
                                .where(AuthFailure.key.in_(keys))).all()
        waits = [r.window_start + self.window_s - now for r in rows if r.failures >= self.limit]
        return max([w for w in waits if w > 0], default=0.0)

    def fail(self, db: Database, keys: list[str], now: float | None = None) -> int:
        """Count one failure against each key, in a transaction of its own: the highest count in
        the current windows."""
        with db.write() as conn:
            return self.count(conn, db.dialect, keys, now)

    def count(self, conn: Connection, dialect: str, keys: list[str], now: float | None = None) -> int:
        """:meth:`fail` in the caller's write transaction (the service's: the database's group
        commit, so that failed attempts share their commit with every other write instead of
        holding SQLite's one writer for an fsync each)."""
        if self.limit <= 0:
            return 0
        now = time.time() if now is None else now
        stmt = self._upserts.get(dialect)
        if stmt is None:
            stmt = self._upserts[dialect] = upsert_failure(dialect)
        most = 0
        for key in keys:
            n: int = conn.execute(stmt, {"b_key": key, "b_now": now, "b_ended": now - self.window_s}).scalar_one()
            most = max(most, n)
        if now - self._pruned >= self.prune_s:
            self._pruned = now
            conn.execute(delete(AuthFailure).where(AuthFailure.window_start <= now - self.window_s))
        return most


def upsert_failure(dialect: str) -> ReturningInsert[int]:
    """One failure counted against ``b_key`` at ``b_now`` (a window that began at ``b_ended`` or
    before has ended: it starts again), returning the count. Built once per dialect: under a
    stream of wrong tokens, building it (its CASE expressions) cost more than running it."""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    ended = AuthFailure.window_start <= bindparam("b_ended", type_=AuthFailure.window_start.type)
    now = bindparam("b_now", type_=AuthFailure.window_start.type)
    stmt = insert(AuthFailure).values(key=bindparam("b_key"), window_start=now, failures=1)
    stmt = stmt.on_conflict_do_update(          # the row's values before this update
        index_elements=[AuthFailure.key],
        set_={"failures": case((ended, 1), else_=AuthFailure.failures + 1),
              "window_start": case((ended, now), else_=AuthFailure.window_start)})
    return stmt.returning(AuthFailure.failures)


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def auth_failed(request: Request, credential: str, where: str) -> None:
    """The one place a failed authentication goes: counted for the throttle, logged (the
    token's prefix only)."""
    state = request.app.state.grader
    addr = client_address(request)
    keys, at, db = failure_keys(addr, credential), time.time(), state.db
    n: int = await asyncio.wrap_future(db.submit_write(lambda conn: state.throttle.count(conn, db.dialect, keys, at)))
    if where == "api":       # the sign-in page records its own "login.failed"
        audit.record(request, "auth.failed", target=token_prefix(credential) if credential.startswith(PREFIX) else "",
                     detail={"why": "unknown or revoked" if credential.startswith(PREFIX) else "malformed"})
    log.warning("authentication failed on %s from %s with token %s (%d of %d allowed in %g s)", where, ascii(addr),
                shown(credential), n, state.settings.auth_failures, state.settings.auth_window_s)


def _throttled(request: Request, credential: str, where: str, wait: float) -> Throttled:
    log.warning("authentication throttled on %s from %s with token %s: too many failures, retry in %d s", where,
                ascii(client_address(request)), shown(credential), max(1, math.ceil(wait)))
    return Throttled(wait)


async def authenticate(request: Request, credential: str, where: str) -> Principal | None:
    """A presented token's user, for the API and the sign-in page alike. A token that is not
    valid is None, its failure counted and logged, or :class:`Throttled` when its address or
    prefix failed too often (then nothing is written). A valid token is never refused here, so
    neither failures from a shared address (a campus NAT, a proxy) nor someone who knows a
    token's prefix can lock its owner out; 256 random bits are not guessed in any case."""
    state = request.app.state.grader
    digest = token_hash(credential)
    who: Principal | None = state.tokens.get(digest)
    if who is not None:
        return who
    ours = len(credential) <= 200 and credential.startswith(PREFIX)
    who, wait = await anyio.to_thread.run_sync(look_up, state.db, state.throttle, digest if ours else None,
                                               failure_keys(client_address(request), credential))
    if who is not None:
        state.tokens.put(digest, who)
        return who
    if wait > 0:
        raise _throttled(request, credential, where, wait)
    await auth_failed(request, credential, where)
    return None


def look_up(db: Database, throttle: FailureThrottle, digest: str | None,
            keys: list[str]) -> tuple[Principal | None, float]:
    """The token's user (``digest`` None: not one of ours, not looked up); where none, the
    throttle's wait for ``keys``: one trip to a thread for a token that is not valid, not one
    for each read."""
    who = lookup_hash(db, digest) if digest is not None else None
    return (who, 0.0) if who is not None else (None, throttle.wait(db, keys))


def _unauthorized(message: str) -> APIError:
    return APIError(401, message, headers={"WWW-Authenticate": 'Bearer realm="grader"'})


def lookup(db: Database, token: str) -> Principal | None:
    return lookup_hash(db, token_hash(token))


def lookup_hash(db: Database, digest: str) -> Principal | None:
    with db.read() as conn:
        row = conn.execute(select(User.id, User.login, User.name, User.role, Token.id.label("tid"))
                           .join(Token, Token.user_id == User.id)
                           .where(Token.hash == digest, Token.revoked_at.is_(None))).first()
    return Principal(row.id, row.login, row.name, row.role, row.tid) if row else None


class TokenCache:
    """Tokens found valid, for ``ttl`` seconds: a revoked token is refused at most that long
    after `grader users revoke` (an unknown or revoked one is never cached)."""

    def __init__(self, ttl: float, size: int = 50_000):
        self.ttl, self.size = ttl, size
        self._found: dict[str, tuple[Principal, float]] = {}

    def get(self, digest: str) -> Principal | None:
        hit = self._found.get(digest)
        if hit is not None and hit[1] > time.monotonic():
            return hit[0]
        return None

    def put(self, digest: str, who: Principal) -> None:
        if len(self._found) >= self.size:
            self._found.clear()
        self._found[digest] = (who, time.monotonic() + self.ttl)


async def current_user(request: Request) -> Principal:
    """The dependency every API route takes: the token's user, within its rate limit."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if not header:
        raise _unauthorized("no token: send the header 'Authorization: Bearer <token>'")
    if scheme.lower() != "bearer" or not token.strip():
        raise _unauthorized("the Authorization header must be 'Bearer <token>'")
    state = request.app.state.grader
    try:
        who = await authenticate(request, token.strip(), "api")
    except Throttled as e:
        raise APIError(429, f"too many failed authentications from this address or for this token; "
                            f"retry in {e.retry_after} s", headers={"Retry-After": e.retry_after}) from None
    if who is None:
        raise _unauthorized("invalid or revoked token")
    wait = await state.rate_wait(who.token_id)
    if wait:
        raise APIError(429, f"too many requests: at most {state.settings.rate:g} a second per token "
                            f"(bursts of {state.settings.burst}); retry in {wait:.2f} s",
                       headers={"Retry-After": str(max(1, math.ceil(wait)))})
    assert isinstance(who, Principal)
    return who


async def instructor(who: Principal = Depends(current_user)) -> Principal:
    if not who.instructor:
        raise APIError(403, "this needs an instructor's token")
    return who
