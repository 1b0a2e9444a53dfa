"""Sign-in for the pages: the token once, then a session cookie; CSRF on every form.

- The session cookie (``grader_session``) is httpOnly, SameSite=Strict, path ``/``: the
  token's SHA-256 (what the database keeps, never the token), an expiry, and an HMAC of both
  under the service's secret, kept in a file (``grader serve --secret-file``, default
  ./grader.secret: a restart signs nobody out; a new secret signs everyone out). Every request
  looks the digest up again (through the service's 1 s token cache), so ``grader users
  revoke`` ends a session as it ends the token.
- CSRF: a random ``grader_csrf`` cookie (httpOnly, SameSite=Strict) and, in every form (and
  htmx's ``X-CSRF-Token`` header), an HMAC of it. A POST without the matching value is 403,
  whatever its cookies.
"""
from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time

import anyio
from starlette.responses import Response
from fastapi import Request

from grader.serve.auth import PREFIX, Principal, lookup_hash, token_hash
from grader.serve.errors import APIError

SESSION, CSRF = "grader_session", "grader_csrf"
SESSION_S = 12 * 3600


class PageError(Exception):
    """An error shown as a page (status, message); 401 sends the browser to sign in."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


def secret(request: Request) -> bytes:
    """The service's secret (``grader serve --secret-file``: the same after a restart), or one
    made for this app's life where it was started without one."""
    app = request.app
    key = getattr(app.state, "web_secret", None)
    if key is None:
        key = app.state.web_secret = app.state.grader.settings.web_secret or secrets.token_bytes(32)
    return key


def _sign(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def session_value(request: Request, digest: str) -> str:
    body = f"{digest}.{int(time.time()) + SESSION_S}"
    return f"{body}.{_sign(secret(request), 'session:' + body)}"


def _session_digest(request: Request) -> str | None:
    raw = request.cookies.get(SESSION, "")
    parts = raw.split(".")
    if len(parts) != 3 or len(raw) > 200:
        return None
    digest, exp, sig = parts
    if not hmac.compare_digest(sig, _sign(secret(request), f"session:{digest}.{exp}")):
        return None
    if not exp.isdigit() or int(exp) < time.time():
        return None
    return digest


def set_cookie(response: Response, name: str, value: str, max_age: int | None = None) -> None:
    response.set_cookie(name, value, max_age=max_age, httponly=True, samesite="strict", path="/",
                        secure=False)   # the service listens on 127.0.0.1 behind a TLS proxy (docs/service.md)


# ------------------------------------------------------------------ CSRF

def csrf_cookie(request: Request) -> str:
    """This browser's CSRF cookie value (made now if it has none; the page sets it)."""
    value = request.cookies.get(CSRF, "")
    if len(value) != 43:
        value = getattr(request.state, "new_csrf", None) or secrets.token_urlsafe(32)
        request.state.new_csrf = value
    return value


def csrf_token(request: Request) -> str:
    return _sign(secret(request), "csrf:" + csrf_cookie(request))[:40]


async def check_csrf(request: Request) -> None:
    """Every POST of the pages: the form's ``csrf`` field (or the X-CSRF-Token header) must be
    the HMAC of this browser's CSRF cookie."""
    cookie = request.cookies.get(CSRF, "")
    sent = request.headers.get("x-csrf-token")
    if sent is None:
        form = await request.form()
        field = form.get("csrf")
        sent = field if isinstance(field, str) else None
    expected = _sign(secret(request), "csrf:" + cookie)[:40] if len(cookie) == 43 else None
    if not expected or not isinstance(sent, str) or not hmac.compare_digest(sent, expected):
        raise PageError(403, "This form has expired or did not come from this site (no valid CSRF token). "
                             "Reload the page and try again.")


# ------------------------------------------------------------------ who is signed in

async def sign_in(request: Request, token: str) -> tuple[Principal, str] | None:
    token = token.strip()
    if not token.startswith(PREFIX) or len(token) > 200:
        return None
    digest = token_hash(token)
    who = await anyio.to_thread.run_sync(lookup_hash, request.app.state.grader.db, digest)
    return (who, digest) if who else None


async def page_user(request: Request) -> Principal:
    """The dependency of every page: the session's user (within the token's rate limit)."""
    digest = _session_digest(request)
    if digest is None:
        raise PageError(401, "Please sign in.")
    state = request.app.state.grader
    who = state.tokens.get(digest)
    if who is None:
        who = await anyio.to_thread.run_sync(lookup_hash, state.db, digest)
        if who is None:
            raise PageError(401, "Your token was revoked or your session has ended; please sign in again.")
        state.tokens.put(digest, who)
    wait = state.limiter.take(who.token_id)
    if wait:
        raise PageError(429, f"Too many requests; retry in {wait:.1f} s.",
                        {"Retry-After": str(max(1, math.ceil(wait)))})
    assert isinstance(who, Principal)
    return who


async def page_instructor(request: Request) -> Principal:
    who = await page_user(request)
    if not who.instructor:
        raise PageError(403, "This page is for course staff; your account is a learner's.")
    return who


def as_page_error(e: APIError) -> PageError:
    return PageError(e.status, e.message, getattr(e, "headers", None))
