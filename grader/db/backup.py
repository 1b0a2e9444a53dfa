"""`grader db backup`: a consistent copy of the service's database while it runs.

- SQLite: the online backup API (``sqlite3.Connection.backup``: one read transaction, so the
  copy is the database at one instant, writers wait only for it), then switched to a rollback
  journal so the copy is one self-contained file, and checked (``PRAGMA quick_check``).
- PostgreSQL: ``pg_dump --format=custom`` (restore with ``pg_restore``); the password goes
  to it in ``PGPASSWORD``, never on its command line.

The copy is written beside its destination and renamed into place once complete, owner-only
(0600: it holds every answer and the tokens' hashes); an existing file is kept unless
``force``."""
from __future__ import annotations

import os
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import inspect
from sqlalchemy.engine import make_url

from grader.errors import GraderError

from .database import Database

PG_DUMP_TIMEOUT_S = 24 * 3600.0


def default_path(db: Database, folder: str | Path | None = None) -> Path:
    """Where an automatic backup goes: beside the SQLite file (or in ``folder``), named with
    the time (UTC); for PostgreSQL in ``folder`` or the current directory."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    url = make_url(db.url)
    if db.dialect == "sqlite":
        source = Path(url.database or "grader.db")
        return (Path(folder) if folder else source.parent) / f"{source.name}.backup-{stamp}"
    return Path(folder or ".") / f"{url.database or 'grader'}.backup-{stamp}.dump"


def backup(db: Database, dest: str | Path, *, force: bool = False) -> Path:
    """Copy the database to ``dest``: its path. A :class:`GraderError` (one line) if it cannot."""
    dest = Path(dest)
    if dest.is_dir():
        raise GraderError(f"{dest}: is a folder; give the backup's file name")
    if dest.exists() and not force:
        raise GraderError(f"{dest}: exists already; give --force to overwrite it")
    if not dest.parent.is_dir():
        raise GraderError(f"{dest.parent}: no such folder for the backup")
    tmp = dest.parent / f".{dest.name}.{os.getpid()}.partial"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise GraderError(f"{dest}: cannot write the backup there ({e.strerror})") from None
    os.close(fd)
    try:
        if db.dialect == "sqlite":
            _sqlite(db, tmp)
        elif db.dialect == "postgresql":
            _pg_dump(db, tmp)
        else:
            raise GraderError(f"cannot back up a {db.dialect} database: SQLite and PostgreSQL only")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def _sqlite(db: Database, tmp: Path) -> None:
    import sqlite3
    path = make_url(db.url).database
    if not path or not Path(path).is_file():
        raise GraderError(f"no database file to back up: {path}")
    try:
        src = sqlite3.connect(path, timeout=60)
        dst = sqlite3.connect(tmp)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")
            ok = dst.execute("PRAGMA quick_check").fetchone()
        finally:
            dst.close()
            src.close()
    except sqlite3.Error as e:
        raise GraderError(f"{db.shown}: the backup failed: {e}") from None
    if not ok or ok[0] != "ok":
        raise GraderError(f"{db.shown}: the backup's copy does not check out: {ok[0] if ok else 'no answer'}")


def _pg_dump(db: Database, tmp: Path) -> None:
    exe = shutil.which("pg_dump")
    if exe is None:
        raise GraderError("pg_dump is not on PATH: install PostgreSQL's client programs (Debian: postgresql-client) "
                          "or put their folder on PATH")
    url = make_url(db.url)
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    target = url.set(drivername="postgresql", password=None).render_as_string(hide_password=False)
    try:
        r = subprocess.run([exe, "--format=custom", "--no-owner", "--file", str(tmp), "--dbname", target],
                           capture_output=True, text=True, env=env, timeout=PG_DUMP_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise GraderError(f"{db.shown}: pg_dump did not finish in {PG_DUMP_TIMEOUT_S:g} s") from None
    if r.returncode != 0:
        first = next((ln for ln in r.stderr.splitlines() if ln.strip()), f"exit {r.returncode}")
        raise GraderError(f"{db.shown}: pg_dump failed: {first.strip()}")


def missing(database: str | None) -> str | None:
    """Why there is no database to back up at ``--database`` (a SQLite file that does not
    exist: opening it would make an empty one), or None."""
    from .database import database_url
    url = make_url(database_url(database))
    if url.get_backend_name() == "sqlite" and not (url.database and Path(url.database).is_file()):
        return f"no database file to back up: {url.database}"
    return None


def has_audit(db: Database) -> bool:
    """Whether the database has the audit log yet (a schema older than 0004 does not)."""
    with db.reader.connect() as conn:
        return "audit_log" in inspect(conn).get_table_names()
