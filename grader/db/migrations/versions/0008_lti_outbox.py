"""LTI Assignment and Grade Services: the outbox of scores to post to the LMSs' gradebooks.

Revision ID: 0008
Revises: 0007
"""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "lti_outbox",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("link_id", sa.Integer, sa.ForeignKey("lti_links.id"), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("assessment_id", sa.String(200), nullable=False),
        sa.Column("cause", sa.String(40), nullable=False),
        sa.Column("timestamp", TS, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_at", TS, nullable=False),
        sa.Column("claimed_by", sa.String(64), nullable=True),
        sa.Column("claimed_until", TS, nullable=True),
        sa.Column("score_given", sa.Float, nullable=True),
        sa.Column("score_maximum", sa.Float, nullable=True),
        sa.Column("grading_progress", sa.String(20), nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("sent_at", TS, nullable=True),
    )
    op.create_index("ix_lti_outbox_status_next", "lti_outbox", ["status", "next_at"])
    op.create_index("ix_lti_outbox_link_user", "lti_outbox", ["link_id", "user_id"])


def downgrade() -> None:
    op.drop_table("lti_outbox")
