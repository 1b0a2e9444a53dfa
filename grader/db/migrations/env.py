"""Alembic's environment: run online on the connection :class:`grader.db.Database` passes."""
from alembic import context

from grader.db.models import Base

connection = context.config.attributes.get("connection")
if connection is None:      # pragma: no cover - only through grader.db
    raise RuntimeError("run the migrations with `grader db upgrade`")
context.configure(connection=connection, target_metadata=Base.metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
