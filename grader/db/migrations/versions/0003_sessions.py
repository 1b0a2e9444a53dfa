"""The pages' server-side sessions, the failed-authentication counters (throttling), and the
per-learner guard and per-token rate limit shared by several instances.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("token_id", sa.Integer, sa.ForeignKey("tokens.id"), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_index("ix_web_sessions_user_id", "web_sessions", ["user_id"])
    op.create_index("ix_web_sessions_token_id", "web_sessions", ["token_id"])
    op.create_index("ix_web_sessions_expires_at", "web_sessions", ["expires_at"])
    op.create_table(
        "auth_failures",
        sa.Column("key", sa.String(80), primary_key=True),
        sa.Column("window_start", sa.Float, nullable=False),
        sa.Column("failures", sa.Integer, nullable=False),
    )
    op.create_index("ix_auth_failures_window_start", "auth_failures", ["window_start"])
    op.create_table(
        "learner_slots",
        sa.Column("key", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("holder", sa.String(40), nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_table(
        "rate_buckets",
        sa.Column("token_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("level", sa.Float, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rate_buckets")
    op.drop_table("learner_slots")
    op.drop_table("auth_failures")
    op.drop_table("web_sessions")
