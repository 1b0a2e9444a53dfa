"""The audit log: who did what, when, from where (table ``audit_log``, :class:`AuditEntry`).

Recorded: tokens issued and revoked, sign-ins to the pages and failed ones, failed API
authentication, batches uploaded, regrades, reviews, exports (the gradebook as JSON or CSV),
``grader db upgrade`` and ``grader db backup``. The service has no configuration that changes
while it runs (its settings are its command line).

Append-only: this module only inserts and reads; the migration's triggers refuse UPDATE and
DELETE. Every field is bounded (``actor`` and ``target`` 200 characters, ``detail`` at most
:data:`MAX_DETAIL` characters of JSON, else replaced by its start), so a hostile name or body
cannot grow a row.

- :func:`write` adds a line inside the caller's transaction (the action and its record commit
  together: tokens, reviews);
- :func:`record` adds a line for an HTTP request without waiting (the database's group commit;
  a failure is logged, never the request's), for sign-ins, failed authentication, exports;
- :func:`entries` reads them, newest first, filtered and paginated.
"""
from __future__ import annotations

import getpass
import json
import logging
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from .models import AuditEntry, now

if TYPE_CHECKING:
    from starlette.requests import Request

    from .database import Database

log = logging.getLogger("grader.db")

MAX_DETAIL = 2000
MAX_WAITING = 10_000        # lines of record() not yet written: beyond, a line is dropped (and logged)
_waiting = [0]
_lock = threading.Lock()
CLI = "cli"
ACTIONS = ("token.issued", "token.revoked", "login", "login.failed", "auth.failed", "batch.uploaded", "regrade",
           "review", "review.request", "review.response", "export", "db.upgrade", "db.backup", "extension.granted",
           "extension.revoked", "release", "view_as", "lti.platform", "lti.deployment", "lti.keys", "lti.launch",
           "lti.refused", "lti.deep_link", "lti.passback", "lti.passback.failed", "lti.passback.resend", "lti.roster",
           "lti.roster.failed")


def operator() -> str:
    """Who runs a command: ``os:`` and the system user's name."""
    try:
        return "os:" + getpass.getuser()[:100]
    except (KeyError, OSError):
        return "os:?"


def bounded_detail(detail: dict[str, Any] | None) -> dict[str, Any] | None:
    """``detail`` if its JSON has at most :data:`MAX_DETAIL` characters; else its start, marked."""
    if detail is None:
        return None
    text = json.dumps(detail, default=str, ensure_ascii=False)
    if len(text) <= MAX_DETAIL:
        parsed: dict[str, Any] = json.loads(text)
        return parsed
    return {"truncated": True, "start": text[: MAX_DETAIL - 100]}


INSERT = insert(AuditEntry)     # built once: a line's values are its parameters (built per line, it cost more)


def values(actor: str, address: str, action: str, target: str = "",
           detail: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"at": now(), "actor": str(actor)[:200], "address": str(address)[:64], "action": str(action)[:40],
            "target": str(target)[:200], "detail": bounded_detail(detail)}


def write(conn: Connection, action: str, *, actor: str, address: str = CLI, target: str = "",
          detail: dict[str, Any] | None = None) -> None:
    """One line, in the caller's transaction."""
    conn.execute(INSERT, values(actor, address, action, target, detail))


def address_of(request: Request) -> str:
    return request.client.host if request.client else "?"


def record(request: Request, action: str, *, actor: str = "", target: str = "",
           detail: dict[str, Any] | None = None) -> None:
    """One line for an HTTP request, written by the database's writer without waiting for it."""
    row = values(actor, address_of(request), action, target, detail)
    with _lock:
        if _waiting[0] >= MAX_WAITING:
            log.error("audit: %s from %s not recorded: %d lines are waiting to be written", action, row["address"],
                      _waiting[0])
            return
        _waiting[0] += 1
    try:
        db: Database = request.app.state.grader.db
        fut = db.submit_write(lambda conn: conn.execute(INSERT, row))
    except Exception as e:      # the audit never fails the request it records
        _written(None)
        log.error("audit: %s not recorded: %s", action, e)
        return

    def done(f: Any) -> None:
        _written(None)
        if f.exception() is not None:
            log.error("audit: %s not recorded: %s", action, f.exception())
    fut.add_done_callback(done)


def _written(_: object) -> None:
    with _lock:
        _waiting[0] -= 1


def entries(conn: Connection, *, since: datetime | None = None, actor: str | None = None,
            action: str | None = None, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
    """The lines, newest first; ``action`` matches itself and its sub-actions (``token``:
    ``token.issued``, ``token.revoked``)."""
    q = select(AuditEntry.id, AuditEntry.at, AuditEntry.actor, AuditEntry.address, AuditEntry.action,
               AuditEntry.target, AuditEntry.detail)
    if since is not None:
        q = q.where(AuditEntry.at >= since)
    if actor:
        q = q.where(AuditEntry.actor == actor)
    if action:
        q = q.where((AuditEntry.action == action) | AuditEntry.action.startswith(action + ".", autoescape=True))
    q = q.order_by(AuditEntry.id.desc()).limit(limit).offset(offset)
    return [{"id": r.id, "at": _iso(r.at), "actor": r.actor, "address": r.address, "action": r.action,
             "target": r.target, "detail": r.detail} for r in conn.execute(q).all()]


def _iso(at: datetime) -> str:
    from datetime import timezone
    if at.tzinfo is None:           # SQLite gives naive datetimes back: they were stored in UTC
        at = at.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


MAX_LIMIT = 1000
MAX_OFFSET = 10**9


def parse_since(text: str | None) -> datetime | None:
    """``--since``/``?since=``: an ISO date or date and time (UTC unless it says otherwise)."""
    from datetime import timezone
    from grader.errors import InputError
    if not text:
        return None
    try:
        at = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"since: {text[:40]!r} is not a date or time (e.g. 2026-11-28 or 2026-11-28T19:00Z)") \
            from None
    at = at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at.astimezone(timezone.utc)
    return at


def page(conn: Connection, *, since: datetime | None = None, actor: str | None = None, action: str | None = None,
         limit: int = 100, offset: int = 0) -> dict[str, Any]:
    """One page of :func:`entries`, and the offset of the next (None: the last page)."""
    limit, offset = max(1, min(limit, MAX_LIMIT)), max(0, min(offset, MAX_OFFSET))
    rows = entries(conn, since=since, actor=actor, action=action, limit=limit + 1, offset=offset)
    return {"entries": rows[:limit], "offset": offset, "limit": limit,
            "next_offset": offset + limit if len(rows) > limit else None}
