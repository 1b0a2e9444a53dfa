"""Sign-in for the pages: the token once, then a server-side session; CSRF bound to it.

- The session is a row of ``web_sessions`` (user, token, expiry: 12 hours): the cookie carries
  a random id (256 bits) and an HMAC of it under the service's secret (``grader serve
  --secret-file``: a restart signs nobody out, a new secret signs everyone out); the database
  keeps only the id's SHA-256. Every page request looks the row up, with its token not
  revoked, so sign-out (the row deleted), "sign out everywhere" (all the user's rows deleted)
  and ``grader users revoke`` (the token's rows deleted) end a session at once, on every
  instance sharing the database; a saved cookie opens nothing after that.
- CSRF: every form (and htmx's ``X-CSRF-Token`` header) carries an HMAC of the session id, or,
  before sign-in, of a random pre-session cookie (``grader_csrf``). A POST without the value
  bound to this browser's own session is 403, whatever its cookies: a pair taken from another
  session does not fit.
- Cookies are httpOnly, SameSite=Strict, Path=/. When the browser reaches grader over HTTPS
  (``--public-url https://...``; without one, the request's own scheme: TLS, or a proxy's
  forwarded scheme with uvicorn's ``--proxy-headers``), they are named
  ``__Host-grader_session`` and ``__Host-grader_csrf`` and marked Secure with no Domain, so no
  other site or sub-domain can set them; over plain HTTP they keep their plain names.
"""
from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time

import anyio
from fastapi import Request
from sqlalchemy import delete, insert, select
from starlette.responses import Response

from grader.db import Database
from grader.db.models import Token, User, WebSession
from grader.serve.auth import Principal, Throttled, authenticate
from grader.serve.errors import APIError

SESSION, CSRF = "grader_session", "grader_csrf"
SESSION_S = 12 * 3600
HOST_PREFIX = "__Host-"


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


# ------------------------------------------------------------------ cookies

def secure(request: Request) -> bool:
    """Whether the browser reaches grader over HTTPS: the scheme of ``grader serve --public-url``
    when one is set (behind a proxy that terminates TLS and forwards no scheme, the request
    itself is plain http), else the request's."""
    base: str | None = request.app.state.grader.settings.public_url
    return base.startswith("https://") if base else request.url.scheme == "https"


def cookie_name(request: Request, name: str) -> str:
    """``__Host-`` + name over HTTPS, the plain name over HTTP."""
    return HOST_PREFIX + name if secure(request) else name


def cookie(request: Request, name: str) -> str:
    return request.cookies.get(cookie_name(request, name), "")


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int | None = None) -> None:
    response.set_cookie(cookie_name(request, name), value, max_age=max_age, httponly=True, samesite="strict",
                        path="/", secure=secure(request))


def delete_cookie(request: Request, response: Response, name: str) -> None:
    response.delete_cookie(cookie_name(request, name), path="/", secure=secure(request), httponly=True,
                           samesite="strict")


# ------------------------------------------------------------------ sessions

def session_hash(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()


def session_id(request: Request) -> str | None:
    """The session id of this browser's cookie, if its signature holds (alive or not)."""
    raw = cookie(request, SESSION)
    sid, _, sig = raw.partition(".")
    if len(sid) != 43 or not hmac.compare_digest(sig, _sign(secret(request), "session:" + sid)):
        return None
    return sid


def _new_session(db: Database, who: Principal, sid: str, now: float) -> None:
    with db.write() as conn:
        conn.execute(delete(WebSession).where(WebSession.expires_at <= now))       # expired ones pruned
        conn.execute(insert(WebSession).values(id_hash=session_hash(sid), user_id=who.id, token_id=who.token_id,
                                               created_at=now, expires_at=now + SESSION_S))


def _delete_session(db: Database, digest: str) -> None:
    with db.write() as conn:
        conn.execute(delete(WebSession).where(WebSession.id_hash == digest))


def end_all_sessions(db: Database, user_id: int) -> int:
    """Delete every session of the user: how many."""
    with db.write() as conn:
        n: int = conn.execute(delete(WebSession).where(WebSession.user_id == user_id)).rowcount
    return n


def _session_user(db: Database, digest: str, now: float) -> Principal | None:
    with db.read() as conn:
        row = conn.execute(select(User.id, User.login, User.name, User.role, Token.id.label("tid"))
                           .join(WebSession, WebSession.user_id == User.id)
                           .join(Token, Token.id == WebSession.token_id)
                           .where(WebSession.id_hash == digest, WebSession.expires_at > now,
                                  Token.revoked_at.is_(None))).first()
    return Principal(row.id, row.login, row.name, row.role, row.tid) if row else None


async def start_session(request: Request, who: Principal, response: Response) -> None:
    """A signed-in browser: a new session row and its cookie (the one path of a successful
    sign-in)."""
    sid = secrets.token_urlsafe(32)
    await anyio.to_thread.run_sync(_new_session, request.app.state.grader.db, who, sid, time.time())
    set_cookie(request, response, SESSION, f"{sid}.{_sign(secret(request), 'session:' + sid)}", max_age=SESSION_S)


async def end_session(request: Request, response: Response) -> None:
    """Sign-out: this browser's session row deleted (a saved copy of the cookie opens nothing)
    and its cookie cleared."""
    sid = session_id(request)
    if sid is not None:
        await anyio.to_thread.run_sync(_delete_session, request.app.state.grader.db, session_hash(sid))
    delete_cookie(request, response, SESSION)


async def end_sessions_everywhere(request: Request, who: Principal, response: Response) -> int:
    """"Sign out everywhere": every session of the user deleted, this browser's cookie cleared."""
    n = await anyio.to_thread.run_sync(end_all_sessions, request.app.state.grader.db, who.id)
    delete_cookie(request, response, SESSION)
    return n


# ------------------------------------------------------------------ CSRF

def csrf_cookie(request: Request) -> str:
    """This browser's pre-session CSRF cookie value (made now if it has none; the page sets it)."""
    value = cookie(request, CSRF)
    if len(value) != 43:
        value = getattr(request.state, "new_csrf", None) or secrets.token_urlsafe(32)
        request.state.new_csrf = value
    return value


def _expected_csrf(request: Request, pre: str | None) -> str | None:
    sid = session_id(request)
    if sid is not None:
        return _sign(secret(request), "csrf:session:" + sid)[:40]
    if pre is not None and len(pre) == 43:
        return _sign(secret(request), "csrf:pre:" + pre)[:40]
    return None


def csrf_token(request: Request) -> str:
    """The value this browser's forms carry: bound to its session (before sign-in, to its
    pre-session cookie)."""
    expected = _expected_csrf(request, csrf_cookie(request) if session_id(request) is None else None)
    assert expected is not None
    return expected


async def check_csrf(request: Request) -> None:
    """Every POST of the pages: the form's ``csrf`` field (or the X-CSRF-Token header) must be
    the value bound to this browser's session (or pre-session cookie); then no text field of
    the form may hold a NUL character (422 before anything is stored, on every backend: SQLite
    would store it, PostgreSQL's text columns refuse it)."""
    form = await request.form()         # parsed once: the route's own Form fields read the same
    sent = request.headers.get("x-csrf-token")
    if sent is None:
        field = form.get("csrf")
        sent = field if isinstance(field, str) else None
    expected = _expected_csrf(request, cookie(request, CSRF))
    if not expected or not isinstance(sent, str) or not hmac.compare_digest(sent, expected):
        raise PageError(403, "This form has expired or did not come from this site (no valid CSRF token). "
                             "Reload the page and try again.")
    bad = next((name for name, value in form.multi_items() if isinstance(value, str) and "\x00" in value), None)
    if bad is not None:
        raise PageError(422, f"The form's field {bad[:40]!r} contains a NUL character (\\u0000), which no text "
                             "may hold; nothing was stored.")


# ------------------------------------------------------------------ who is signed in

async def sign_in(request: Request, token: str) -> Principal | None:
    """The token of the sign-in form: its user, or None (the failure counted and logged);
    :class:`~grader.serve.auth.Throttled` after too many failures."""
    return await authenticate(request, token.strip(), "sign-in")


def throttled_page(e: Throttled) -> PageError:
    return PageError(429, f"Too many failed sign-ins from this address or with this token; retry in "
                          f"{e.retry_after} s.", {"Retry-After": e.retry_after})


async def page_user(request: Request) -> Principal:
    """The dependency of every page: the session's user (within the token's rate limit)."""
    sid = session_id(request)
    if sid is None:
        raise PageError(401, "Please sign in.")
    state = request.app.state.grader
    who = await anyio.to_thread.run_sync(_session_user, state.db, session_hash(sid), time.time())
    if who is None:
        raise PageError(401, "Your session has ended or your token was revoked; please sign in again.")
    request.state.who = who         # an error page after this point keeps the user's navigation
    wait = await state.rate_wait(who.token_id)
    if wait:
        raise PageError(429, f"Too many requests; retry in {wait:.1f} s.",
                        {"Retry-After": str(max(1, math.ceil(wait)))})
    return who


async def session_user(request: Request) -> Principal | None:
    """The session's user where there is one (an error page's navigation), else None."""
    sid = session_id(request)
    if sid is None:
        return None
    return await anyio.to_thread.run_sync(_session_user, request.app.state.grader.db, session_hash(sid), time.time())


async def page_instructor(request: Request) -> Principal:
    who = await page_user(request)
    if not who.instructor:
        raise PageError(403, "This page is for course staff; your account is a learner's.")
    return who


def as_page_error(e: APIError) -> PageError:
    return PageError(e.status, e.message, getattr(e, "headers", None))
