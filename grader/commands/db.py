"""`grader db`: the service's database schema (Alembic migrations shipped with grader)."""
from __future__ import annotations

import click

DATABASE = click.option("--database", "database", default=None, metavar="URL",
                        help="A SQLAlchemy URL (postgresql+psycopg://user@host/db) or a SQLite file "
                             "(default: ./grader.db).")


@click.group("db")
def db() -> None:
    """The service's database: `grader db upgrade` runs the migrations."""


@db.command("upgrade")
@DATABASE
def upgrade(database: str | None) -> None:
    """Bring the database's schema up to this grader's (creates it if new). Back it up first."""
    from grader.db import Database
    d = Database(database)
    before, after = d.upgrade()
    if before == after:
        click.echo(f"{d.shown}: schema at {after}, already current")
    else:
        click.echo(f"{d.shown}: schema upgraded from {before or 'nothing'} to {after}")


@db.command("current")
@DATABASE
def current(database: str | None) -> None:
    """Show the database's schema revision and this grader's."""
    from grader.db import Database
    d = Database(database)
    rev, head = d.revision(), d.head()
    state = "current" if rev == head else "empty" if rev is None else "behind: run `grader db upgrade`"
    click.echo(f"{d.shown}: schema {rev or 'none'}, this grader's {head} ({state})")
    click.get_current_context().exit(0 if rev == head else 1)
