"""Bearer tokens, roles and per-token rate limits.

A token is ``grd_`` and 43 random URL-safe characters (256 bits); only its SHA-256 is stored
(a token that random needs no slow hash), with a short prefix to name it in listings. It is
shown once, when made. A revoked token, an unknown one or none at all is 401.
"""
from __future__ import annotations

import hashlib
import math
import secrets
import threading
import time
from dataclasses import dataclass

import anyio
from fastapi import Depends, Request
from sqlalchemy import select

from grader.db import Database, audit
from grader.db.models import Token, User

from .errors import APIError

PREFIX = "grd_"


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
    token = token.strip()
    if len(token) > 200 or not token.startswith(PREFIX):
        audit.record(request, "auth.failed", target=token_prefix(token), detail={"why": "malformed"})
        raise _unauthorized("invalid or revoked token")
    state = request.app.state.grader
    digest = token_hash(token)
    who = state.tokens.get(digest)
    if who is None:
        who = await anyio.to_thread.run_sync(lookup_hash, state.db, digest)
        if who is None:
            audit.record(request, "auth.failed", target=token_prefix(token), detail={"why": "unknown or revoked"})
            raise _unauthorized("invalid or revoked token")
        state.tokens.put(digest, who)
    wait = state.limiter.take(who.token_id)
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
