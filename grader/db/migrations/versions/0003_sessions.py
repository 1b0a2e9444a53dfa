"""The pages' server-side sessions and the failed-authentication counters (throttling).

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


def downgrade() -> None:
    op.drop_table("auth_failures")
    op.drop_table("web_sessions")
