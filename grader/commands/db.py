"""`grader db`: the service's database schema (Alembic migrations shipped with grader), and
its backups."""
from __future__ import annotations

from typing import Any

import click

DATABASE = click.option("--database", "database", default=None, metavar="URL",
                        help="A SQLAlchemy URL (postgresql+psycopg://user@host/db) or a SQLite file "
                             "(default: ./grader.db).")


def _record(d: Any, action: str, target: str, detail: dict[str, Any]) -> None:
    """A line of the audit log, where the schema has one (a failure to write it is a warning)."""
    from grader.db import audit
    from grader.db.backup import has_audit
    try:
        if has_audit(d):
            with d.write() as conn:
                audit.write(conn, action, actor=audit.operator(), target=target, detail=detail)
    except Exception as e:      # the copy or the upgrade is done; the log line alone is missing
        click.echo(f"warning: not written to the audit log: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
                   err=True)


@click.group("db")
def db() -> None:
    """The service's database: `grader db upgrade` runs the migrations (after a backup),
    `grader db backup DEST` copies it while the service runs."""


@db.command("upgrade")
@DATABASE
@click.option("--backup-dir", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Write the backup made first into DIR (default: beside the SQLite file; "
                   "PostgreSQL: the current directory).")
@click.option("--no-backup", is_flag=True, help="Upgrade without a backup first.")
def upgrade(database: str | None, backup_dir: str | None, no_backup: bool) -> None:
    """Bring the database's schema up to this grader's (creates it if new). A database that
    has a schema to change is backed up first; if that fails, nothing is upgraded."""
    from grader.db import Database
    from grader.db.backup import backup, default_path
    from grader.errors import GraderError
    d = Database(database)
    rev, head = d.revision(), d.head()
    saved = None
    if rev != head and not no_backup and not (rev is None and d.is_empty()):
        try:
            saved = backup(d, default_path(d, backup_dir))
        except GraderError as e:
            raise GraderError(f"{e.message}; nothing was upgraded (--no-backup upgrades without a backup)") from None
        click.echo(f"{d.shown}: backed up to {saved}")
    before, after = d.upgrade()
    if before == after:
        click.echo(f"{d.shown}: schema at {after}, already current")
    else:
        click.echo(f"{d.shown}: schema upgraded from {before or 'nothing'} to {after}")
        _record(d, "db.upgrade", d.shown, {"from": before, "to": after, "backup": str(saved) if saved else None})


@db.command("backup")
@click.argument("dest", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite DEST if it exists.")
@DATABASE
def backup_(dest: str, force: bool, database: str | None) -> None:
    """Copy the database to DEST while the service runs: SQLite's online backup (a file that
    replaces grader.db to restore), or pg_dump's custom format for PostgreSQL (pg_restore)."""
    from grader.db import Database
    from grader.db.backup import backup, missing
    from grader.errors import GraderError
    why = missing(database)
    if why:
        raise GraderError(why)
    d = Database(database)
    path = backup(d, dest, force=force)
    click.echo(f"{d.shown}: backed up to {path}")
    _record(d, "db.backup", d.shown, {"dest": str(path)})


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
