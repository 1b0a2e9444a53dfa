"""`grader extensions`: a learner's own due date for an assessment of the bank (issue 29), as
the API's ``/assessments/{id}/extensions`` grants it; each grant is a line of the audit log."""
from __future__ import annotations

from typing import Any

import click

from .db import DATABASE

EXERCISES = click.option("--exercises", default=None, metavar="PATH",
                         help="The bank whose assessments file names ASSESSMENT (default: the bundled one).")
COURSE = click.option("--course", default=None, metavar="FILE", type=click.Path(exists=True, dir_okay=False),
                      help="The assessments file, as `grader serve --course` (default: the bank folder's own).")


def _course(exercises: str | None, course: str | None) -> Any:
    from grader.api import load_bank, load_course
    c = load_course(load_bank(exercises), course)
    if c is None:
        raise click.ClickException(f"the bank {exercises or '(bundled)'} has no assessments file (give --course FILE)")
    return c


def _db(database: str | None) -> Any:
    from grader.db import Database
    d = Database(database)
    d.ensure_schema()
    return d


@click.group("extensions")
def extensions() -> None:
    """Extensions of assessments: `grant` a learner their own due date, `list` those that count."""


@extensions.command("grant")
@click.argument("login")
@click.argument("assessment")
@click.option("--until", "until", required=True, metavar="TIME",
              help="The new due date, ISO 8601 (2026-12-08T23:59; without a zone: the course's time zone).")
@click.option("--reason", default="", help="Why (shown to staff).")
@EXERCISES
@COURSE
@DATABASE
def grant(login: str, assessment: str, until: str, reason: str, exercises: str | None, course: str | None,
          database: str | None) -> None:
    """Give LOGIN until TIME for ASSESSMENT (the latest grant counts)."""
    from grader.db import audit
    from grader.db.models import now
    from grader.serve import assessbook
    from grader.serve.course import iso, local
    from grader.serve.errors import APIError
    c = _course(exercises, course)
    a = c.get(assessment)
    if a is None:
        raise click.ClickException(f"no assessment {assessment!r} (the bank's are: "
                                   f"{', '.join(x.id for x in c.assessments)})")
    d = _db(database)
    try:
        due = assessbook.parse_time(until, c, "--until")
        with d.write() as conn:
            uid = assessbook.learner_id(conn, login)
            assessbook.grant(conn, a, uid, due, audit.operator(), reason, now())
            audit.write(conn, "extension.granted", actor=audit.operator(), target=f"{a.id}:{login}",
                        detail={"due": iso(due), "reason": reason[:200]})
    except APIError as e:
        raise click.ClickException(f"{e.location}: {e.message}" if e.location == "--until" else e.message) from None
    finally:
        d.dispose()
    click.echo(f"{login}: {a.id} due {local(due, c)} ({iso(due)}), was {local(a.due, c)}")


@extensions.command("list")
@click.option("--assessment", default=None, help="Only this assessment's.")
@EXERCISES
@COURSE
@DATABASE
def list_extensions(assessment: str | None, exercises: str | None, course: str | None,
                    database: str | None) -> None:
    """The extensions that count now: assessment, learner, new due date (course time), who, why."""
    from grader.serve import assessbook
    c = _course(exercises, course)
    d = _db(database)
    try:
        with d.read() as conn:
            rows = assessbook.extension_list(conn, c, assessment)
    finally:
        d.dispose()
    for r in rows:
        click.echo(f"{r['assessment']:<16} {r['learner']:<20} {r['due_local']:<24} by {r['granted_by']}"
                   + (f": {r['reason']}" if r["reason"] else ""))
    if not rows:
        click.echo("no extensions", err=True)
