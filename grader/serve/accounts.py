"""Accounts for `grader users`: learners and instructors, their tokens (printed once, stored
as a hash), revocation. Every id passes the one rule of :mod:`grader.db.ids`; every token
issued or revoked is a line of the audit log, in the same transaction."""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from grader.db import Database, audit

from grader.db.ids import check_login
from grader.db.models import Token, User, WebSession, now
from grader.errors import GraderError, InputError, Location

from .auth import new_token, token_hash, token_prefix

ROSTER_COLUMNS = ("learner", "name", "email")


@dataclass(frozen=True)
class Issued:
    login: str
    name: str
    email: str
    role: str
    token: str


def _issue(conn: Connection, user_id: int, login: str, actor: str | None, address: str) -> str:
    token = new_token()
    conn.execute(insert(Token).values(user_id=user_id, hash=token_hash(token), prefix=token_prefix(token),
                                      created_at=now()))
    audit.write(conn, "token.issued", actor=actor or audit.operator(), address=address, target=login,
                detail={"prefix": token_prefix(token)})
    return token


def add_user(db: Database, login: str, role: str, name: str = "", email: str = "", *, actor: str | None = None,
             address: str = audit.CLI) -> Issued:
    """A new user and its first token; an id that exists is an error (use :func:`new_token_for`)."""
    login = check_login(login)
    with db.write() as conn:
        if conn.execute(select(User.id).where(User.login == login)).first():
            raise InputError(f"{login!r} exists already; `grader users token {login}` gives it a new token")
        uid = conn.execute(insert(User).values(login=login, name=name, email=email, role=role, created_at=now())
                           .returning(User.id)).scalar_one()
        token = _issue(conn, uid, login, actor, address)
    return Issued(login, name, email, role, token)


def new_token_for(db: Database, login: str, *, actor: str | None = None, address: str = audit.CLI) -> Issued:
    with db.write() as conn:
        u = conn.execute(select(User.id, User.login, User.name, User.email, User.role)
                         .where(User.login == login)).first()
        if u is None:
            raise InputError(f"no user {login!r}")
        token = _issue(conn, u.id, u.login, actor, address)
    return Issued(u.login, u.name, u.email, u.role, token)


def revoke(db: Database, login: str, prefix: str | None = None, *, actor: str | None = None,
           address: str = audit.CLI) -> int:
    """Revoke the user's tokens (or the one whose prefix is given): how many. The pages'
    sessions opened with those tokens end with them (their rows deleted)."""
    with db.write() as conn:
        uid = conn.execute(select(User.id).where(User.login == login)).scalar()
        if uid is None:
            raise InputError(f"no user {login!r}")
        q = update(Token).where(Token.user_id == uid, Token.revoked_at.is_(None))
        if prefix:
            q = q.where(Token.prefix == prefix)
        ids = list(conn.execute(q.values(revoked_at=now()).returning(Token.id)).scalars())
        n = len(ids)
        if ids:
            conn.execute(delete(WebSession).where(WebSession.token_id.in_(ids)))
            audit.write(conn, "token.revoked", actor=actor or audit.operator(), address=address, target=login,
                        detail={"prefix": prefix or "all", "count": n})
        return n


def read_roster(text: str, file: str) -> list[tuple[str, str, str, Location]]:
    """(learner, name, email, where) of each row of a roster CSV with a header
    ``learner,name,email`` (name and email may be left out)."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise InputError("the roster is empty", Location(file, 1))
    header = [h.strip().lower() for h in rows[0]]
    if "learner" not in header:
        raise InputError(f"the roster's first line must name its columns: learner,name,email (found {rows[0]!r})",
                         Location(file, 1))
    unknown = [h for h in header if h not in ROSTER_COLUMNS]
    if unknown:
        raise InputError(f"unknown column {unknown[0]!r}; the columns are learner,name,email", Location(file, 1))
    out: list[tuple[str, str, str, Location]] = []
    errors: list[GraderError] = []
    seen: dict[str, int] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        rec = dict(zip(header, (c.strip() for c in row)))
        where = Location(file, n)
        try:
            login = check_login(rec.get("learner", ""), where)
        except InputError as e:
            errors.append(e)
            continue
        if login in seen:
            errors.append(InputError(f"learner {login!r} is listed twice (first on line {seen[login]})", where))
            continue
        seen[login] = n
        out.append((login, rec.get("name", ""), rec.get("email", ""), where))
    if errors:
        from grader.errors import ErrorList
        raise ErrorList(errors)
    return out


def import_roster(db: Database, roster: list[tuple[str, str, str, Location]], *, actor: str | None = None,
                  address: str = audit.CLI) -> tuple[list[Issued], list[str]]:
    """Add the learners not yet known, each with a token: (issued, ids already there)."""
    issued: list[Issued] = []
    existing: list[str] = []
    with db.write() as conn:
        for login, name, email, where in roster:
            login = check_login(login, where)
            if conn.execute(select(User.id).where(User.login == login)).first():
                existing.append(login)
                continue
            uid = conn.execute(insert(User).values(login=login, name=name, email=email, role="learner",
                                                   created_at=now()).returning(User.id)).scalar_one()
            issued.append(Issued(login, name, email, "learner", _issue(conn, uid, login, actor, address)))
    return issued, existing


def list_users(db: Database) -> list[dict[str, Any]]:
    with db.read() as conn:
        users = conn.execute(select(User.id, User.login, User.name, User.email, User.role)
                             .order_by(User.role, User.login)).all()
        tokens = conn.execute(select(Token.user_id, Token.prefix, Token.revoked_at)).all()
    active: dict[int, list[str]] = {}
    for t in tokens:
        if t.revoked_at is None:
            active.setdefault(t.user_id, []).append(t.prefix)
    return [{"login": u.login, "name": u.name, "email": u.email, "role": u.role, "tokens": active.get(u.id, [])}
            for u in users]
