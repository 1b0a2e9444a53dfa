"""Accounts, tokens, submissions and their answers.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("login", sa.String(200), nullable=False, unique=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("revoked_at", TS, nullable=True),
    )
    op.create_index("ix_tokens_user_id", "tokens", ["user_id"])
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("idempotency_key", sa.String(200), nullable=True),
        sa.Column("body_hash", sa.String(64), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("graded_at", TS, nullable=True),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("max_score", sa.Float, nullable=True),
        sa.Column("pending_points", sa.Float, nullable=True),
        sa.Column("unanswered", sa.JSON, nullable=True),
        sa.UniqueConstraint("user_id", "idempotency_key", name="uq_submission_idempotency"),
    )
    op.create_index("ix_submissions_user_id", "submissions", ["user_id"])
    op.create_table(
        "answers",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("submission_id", sa.String(32), sa.ForeignKey("submissions.id"), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("problem_id", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("raw", sa.JSON, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("status", sa.String(20), nullable=True),
        sa.Column("correct", sa.Boolean, nullable=True),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("max_score", sa.Float, nullable=True),
        sa.Column("pending_points", sa.Float, nullable=True),
        sa.Column("feedback", sa.Text, nullable=True),
        sa.Column("result", sa.JSON, nullable=True),
    )
    op.create_index("ix_answers_submission_id", "answers", ["submission_id"])
    op.create_index("ix_answers_problem_id", "answers", ["problem_id"])
    op.create_index("ix_answers_user_problem", "answers", ["user_id", "problem_id"])


def downgrade() -> None:
    op.drop_table("answers")
    op.drop_table("submissions")
    op.drop_table("tokens")
    op.drop_table("users")
