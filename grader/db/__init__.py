"""The service's database: SQLAlchemy 2 tables (:mod:`.models`) and Alembic migrations
(``migrations/``, shipped inside the package so ``grader db upgrade`` works from a wheel).

    db = Database("sqlite:///grader.db")      # or postgresql+psycopg://user@host/dbname
    db.ensure_schema()                        # a new, empty database is created; one behind refused
    with db.write() as conn: ...              # one transaction (SQLite: BEGIN IMMEDIATE)
    with db.read() as conn: ...

SQLite runs in WAL mode with ``synchronous=FULL``: a transaction is on disk when its commit
returns, so a response sent after it survives a crash of the process or of the machine.
"""
from .database import Database, SchemaError, database_url

__all__ = ["Database", "SchemaError", "database_url"]
