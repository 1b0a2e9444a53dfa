"""Open a database by URL, check its schema against the migrations, run them."""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, inspect
from sqlalchemy.engine import Connection, Engine, make_url

from grader.errors import GraderError

_LOCKS: dict[str, int] = {}     # lock file -> its descriptor, held until the process ends
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
DEFAULT = "grader.db"


class SchemaError(GraderError):
    """The database's schema is not the one this grader's migrations end at."""


def database_url(value: str | None) -> str:
    """A SQLAlchemy URL from ``--database``: a URL, or a path of a SQLite file (default
    ``./grader.db``); ``postgresql://`` means psycopg 3."""
    value = (value or DEFAULT).strip()
    if "://" not in value:
        if value == ":memory:":
            raise GraderError("an in-memory SQLite database cannot be shared by the service's connections; "
                              "give a file")
        return "sqlite:///" + value
    url = make_url(value)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url.render_as_string(hide_password=False)


def _sqlite_engine(url: str, begin: str) -> Engine:
    engine = create_engine(url, pool_size=8, max_overflow=8, pool_timeout=60,
                           connect_args={"check_same_thread": False, "timeout": 60})
    path = make_url(url).database

    @event.listens_for(engine, "do_connect")
    def _check(*_: Any) -> None:
        # a file of the database that cannot be written (immutable, a read-only mount) is refused
        # before SQLite opens it: SQLite would open it read-only, and an -shm it cannot grow is
        # a SIGBUS in its shared-memory map; this is an OperationalError (a 503) instead
        why = unwritable_files(path) if path else None
        if why:
            import sqlite3
            raise sqlite3.OperationalError(why)

    @event.listens_for(engine, "connect")
    def _connect(dbapi: Any, record: Any) -> None:
        dbapi.isolation_level = None                # transactions are begun below, not by the driver
        cur = dbapi.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=FULL")      # a commit that returned is on disk
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute("PRAGMA mmap_size=0")           # no memory map of the file: an I/O error, never SIGBUS
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        if begin != "BEGIN" and path:
            # a write on a connection opened before the file became unwritable would go on into
            # the -wal (and be lost to a checkpoint that cannot happen): refused here, a 503
            why = unwritable_files(path)
            if why:
                import sqlite3
                from sqlalchemy.exc import OperationalError
                raise OperationalError(begin, None, sqlite3.OperationalError(why))
        conn.exec_driver_sql(begin)

    return engine


def unwritable_files(path: str) -> str | None:
    """Why the SQLite database at ``path`` cannot be written, or None: the file, its ``-wal``
    and ``-shm`` (those that exist) are each asked with access(2), which refuses root too an
    immutable file or a read-only mount. Never by opening them: closing any descriptor of a file
    drops every POSIX lock this process holds on it, SQLite's own included, and another process
    would then take the database for unused and remove the -wal this one still writes."""
    import os
    for name in (path, path + "-wal", path + "-shm"):
        if not os.path.exists(name) or os.access(name, os.W_OK):
            continue
        try:
            read_only = bool(os.statvfs(name).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        why = ("Read-only file system" if read_only else
               "Operation not permitted" if os.geteuid() == 0 else "Permission denied")
        return f"{name} cannot be written ({why})"
    return None


def _owner_only(path: Path) -> None:
    """A new SQLite file is made readable and writable by its owner only (0600), like
    grader.secret: it holds every learner's answers and the tokens' hashes. SQLite gives its
    ``-wal`` and ``-shm`` files the mode of the database file."""
    import os
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:     # it exists, or cannot be made (a read-only folder: said by Database.unwritable)
        return
    os.close(fd)


class Database:
    """The engines of one database: ``read()`` and ``write()`` give a connection inside one
    transaction, committed when the block ends without an exception."""

    def __init__(self, url: str | None = None) -> None:
        self.url = database_url(url)
        self.dialect = make_url(self.url).get_backend_name()
        if self.dialect == "sqlite":
            path = make_url(self.url).database
            if path and not Path(path).parent.is_dir():
                raise GraderError(f"no such folder for the database file: {Path(path).parent}")
            # reads take no lock; a write takes the write lock at BEGIN, so a transaction that
            # reads and then writes (attempts, idempotency keys) never fails half-way as busy
            self.reader = _sqlite_engine(self.url, "BEGIN")
            self.writer = _sqlite_engine(self.url, "BEGIN IMMEDIATE")
            # one writer at a time in this process: threads wait here, in turn, instead of in
            # SQLite's busy handler, which sleeps and retries (up to 100 ms a time) under load
            self._write_lock: AbstractContextManager[Any] = threading.Lock()
            if path:
                _owner_only(Path(path))
        else:
            from sqlalchemy.exc import NoSuchModuleError
            try:
                self.reader = self.writer = create_engine(self.url, pool_size=8, max_overflow=8, pool_pre_ping=True,
                                                          pool_timeout=60)
            except (NoSuchModuleError, ImportError):        # an unknown scheme, or its driver not installed
                raise GraderError(f"{make_url(self.url).render_as_string(hide_password=True)}: no database of "
                                  f"that kind ({self.dialect}); use a SQLite file or "
                                  "postgresql+psycopg://user@host/db") from None
            self._write_lock = nullcontext()
        from .batch import GroupWriter
        self._group = GroupWriter(self) if self.dialect == "sqlite" else None   # its thread starts on first use
        self._pool = None if self._group else ThreadPoolExecutor(8, thread_name_prefix="grader-db")

    @property
    def sqlite_file(self) -> Path | None:
        """The SQLite database's file (None: another database, or SQLite in memory)."""
        path = make_url(self.url).database if self.dialect == "sqlite" else None
        return Path(path) if path and path != ":memory:" else None

    def lock(self) -> None:
        """SQLite: take an exclusive lock on ``FILE.lock`` beside the database file, held until
        this process ends (the service's per-learner guards and rate limits are per process: one
        SQLite file serves one process). Raises :class:`GraderError` when another process holds
        it, or it cannot be made. Other databases: nothing."""
        import fcntl
        import os
        path = self.sqlite_file
        if path is None:
            return
        lock = str(path.resolve()) + ".lock"
        if lock in _LOCKS:
            return
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise GraderError(f"cannot make the lock file {lock}: {e.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise GraderError(f"another grader serve is using the database {path} (it holds {lock}); a SQLite "
                              "file serves one process: for several instances use PostgreSQL "
                              "(--database postgresql://..., docs/service.md)") from None
        _LOCKS[lock] = fd

    def unwritable(self, *, folder: bool = False) -> str | None:
        """Why the database cannot be written now, or None. SQLite: its files are opened for
        writing (``folder``: and a file is made and removed beside them, as SQLite makes its -wal
        and -shm there); then, where the schema exists, a write transaction that changes nothing
        is committed (``UPDATE alembic_version``), on any database."""
        path = self.sqlite_file
        if path is not None:
            if folder:
                import tempfile
                try:
                    with tempfile.TemporaryFile(dir=path.parent):
                        pass
                except OSError as e:
                    return f"the database's folder {path.parent} cannot be written ({e.strerror})"
            why = unwritable_files(str(path))
            if why:
                return why
            if not path.exists():
                return None
        from sqlalchemy import text
        from sqlalchemy.exc import DBAPIError
        try:
            if "alembic_version" not in self.tables():
                return None
            with self.write() as conn:
                conn.execute(text("UPDATE alembic_version SET version_num = version_num"))
        except DBAPIError as e:
            return f"the database {self.shown} cannot be written ({str(e.orig).splitlines()[0][:200]})"
        return None

    def tables(self) -> list[str]:
        with self.reader.connect() as conn:
            return inspect(conn).get_table_names()

    @property
    def shown(self) -> str:
        """The URL without its password."""
        return make_url(self.url).render_as_string(hide_password=True)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.reader.begin() as conn:
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self._write_lock, self.writer.begin() as conn:
            yield conn

    def submit_write(self, fn: Callable[[Connection], Any]) -> Future[Any]:
        """``fn(conn)`` in a write transaction, as a future resolved once it is committed. On
        SQLite, writes queued together commit together (:class:`~grader.db.batch.GroupWriter`);
        elsewhere each runs in a transaction of its own on a small thread pool."""
        if self._group is not None:
            return self._group.submit(fn)

        def run() -> Any:
            with self.write() as conn:
                return fn(conn)
        assert self._pool is not None
        return self._pool.submit(run)

    def dispose(self) -> None:
        if self._group is not None:
            self._group.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False)
        self.reader.dispose()
        if self.writer is not self.reader:
            self.writer.dispose()

    # ------------------------------------------------------------------ migrations

    def _config(self, conn: Connection | None = None) -> Any:
        from alembic.config import Config
        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        cfg.attributes["connection"] = conn
        return cfg

    def head(self) -> str:
        from alembic.script import ScriptDirectory
        head = ScriptDirectory.from_config(self._config()).get_current_head()
        assert head is not None
        return head

    def revision(self) -> str | None:
        """The schema revision the database is at (None: no grader schema at all)."""
        from alembic.runtime.migration import MigrationContext
        with self.reader.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    def is_empty(self) -> bool:
        with self.reader.connect() as conn:
            return not inspect(conn).get_table_names()

    def upgrade(self, target: str = "head") -> tuple[str | None, str]:
        """Run the migrations up to ``target``: (revision before, revision after)."""
        from alembic import command
        before = self.revision()
        with self.writer.begin() as conn:
            command.upgrade(self._config(conn), target)
        return before, self.revision() or ""

    def ensure_schema(self, *, create: bool = True) -> str | None:
        """Check the schema is the migrations' head. A database with no tables at all is created
        (returns "created"); one behind (or ahead, or not grader's) raises :class:`SchemaError`
        naming ``grader db upgrade``."""
        head, current = self.head(), self.revision()
        if current == head:
            return None
        if current is None and self.is_empty() and create:
            self.upgrade()
            return "created"
        cmd = f"grader db upgrade --database '{self.shown}'"
        if current is None:
            raise SchemaError(f"the database {self.shown} has tables but no grader schema version; "
                              "give an empty database or one made by grader")
        from alembic.script import ScriptDirectory
        known = {s.revision for s in ScriptDirectory.from_config(self._config()).walk_revisions()}
        if current not in known:
            raise SchemaError(f"the database {self.shown} is at schema revision {current}, which this grader "
                              f"does not know (its newest is {head}): it was made by a newer grader")
        raise SchemaError(f"the database {self.shown} is at schema revision {current}, behind this grader's "
                          f"{head}: back it up, then run `{cmd}`")
