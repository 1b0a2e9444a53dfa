"""`grader users`: learners and instructors of the service, and their bearer tokens."""
from __future__ import annotations

import csv
import sys

from typing import Any

import click

from .db import DATABASE


def _db(database: str | None) -> Any:
    from grader.db import Database
    d = Database(database)
    if d.ensure_schema() == "created":
        click.echo(f"created the database {d.shown}", err=True)
    return d


def _issued(i: Any) -> None:
    click.echo(f"{i.role} {i.login}: token {i.token}")
    click.echo("  (shown once: only its hash is stored; `grader users token` makes a new one)", err=True)


@click.group("users")
def users() -> None:
    """Accounts of the grading service: `add-instructor`, `add-learner`, `import` a roster,
    `token` (a new one), `revoke`, `list`. A token is printed once; only its hash is stored."""


@users.command("add-instructor")
@click.argument("login")
@click.option("--name", default="", help="Full name.")
@click.option("--email", default="", help="E-mail address.")
@DATABASE
def add_instructor(login: str, name: str, email: str, database: str | None) -> None:
    """Add an instructor (everything of the course) and print its token."""
    from grader.serve.accounts import add_user
    _issued(add_user(_db(database), login, "instructor", name, email))


@users.command("add-learner")
@click.argument("login")
@click.option("--name", default="", help="Full name.")
@click.option("--email", default="", help="E-mail address.")
@DATABASE
def add_learner(login: str, name: str, email: str, database: str | None) -> None:
    """Add a learner (LOGIN: the id of answer files, `learner:`) and print its token."""
    from grader.serve.accounts import add_user
    _issued(add_user(_db(database), login, "learner", name, email))


@users.command("import")
@click.argument("roster", type=click.Path(exists=True, dir_okay=False))
@DATABASE
def import_roster(roster: str, database: str | None) -> None:
    """Add the learners of ROSTER (CSV: learner,name,email) not known yet; print
    learner,name,email,token for each (CSV, to mail them), once."""
    from grader.serve.accounts import import_roster as run, read_roster
    try:
        with open(roster, encoding="utf-8-sig") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise click.UsageError(f"{roster}: not UTF-8 text") from None
    rows = read_roster(text, roster)
    issued, existing = run(_db(database), rows)
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["learner", "name", "email", "token"])
    for i in issued:
        w.writerow([i.login, i.name, i.email, i.token])
    click.echo(f"{len(issued)} learners added" + (f"; {len(existing)} already there, unchanged "
                                                   f"({', '.join(existing[:5])}{'…' if len(existing) > 5 else ''})"
                                                   if existing else ""), err=True)


@users.command("token")
@click.argument("login")
@DATABASE
def token(login: str, database: str | None) -> None:
    """Give LOGIN a new token (its other tokens stay valid until revoked)."""
    from grader.serve.accounts import new_token_for
    _issued(new_token_for(_db(database), login))


@users.command("revoke")
@click.argument("login")
@click.option("--token", "prefix", default=None, metavar="PREFIX",
              help="Only the token starting with PREFIX (as `grader users list` shows it).")
@DATABASE
def revoke(login: str, prefix: str | None, database: str | None) -> None:
    """Revoke LOGIN's tokens: requests with them get 401 from now on."""
    from grader.serve.accounts import revoke as run
    n = run(_db(database), login, prefix)
    click.echo(f"{n} token(s) of {login} revoked")
    click.get_current_context().exit(0 if n else 1)


@users.command("list")
@DATABASE
def list_(database: str | None) -> None:
    """The accounts, with the prefixes of their valid tokens."""
    from grader.serve.accounts import list_users
    for u in list_users(_db(database)):
        click.echo(f"{u['role']:<10} {u['login']:<20} {u['name']:<24} {u['email']:<28} "
                   f"tokens: {', '.join(p + '…' for p in u['tokens']) or 'none'}")
