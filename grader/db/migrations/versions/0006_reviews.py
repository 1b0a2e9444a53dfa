"""Reviews keep the rubric items applied; learners' regrade requests.

Revision ID: 0006
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0004"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("reviews", sa.Column("rubric", sa.JSON, nullable=True))
    op.create_table(
        "regrade_requests",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("answer_id", sa.String(32), sa.ForeignKey("answers.id"), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("response", sa.Text, nullable=True),
        sa.Column("answered_by", sa.Integer, sa.ForeignKey("users.id"), nullable=True),
        sa.Column("answered_at", TS, nullable=True),
    )
    op.create_index("ix_regrade_requests_answer_id", "regrade_requests", ["answer_id"])
    op.create_index("ix_regrade_requests_status", "regrade_requests", ["status"])


def downgrade() -> None:
    op.drop_table("regrade_requests")
    with op.batch_alter_table("reviews") as batch:
        batch.drop_column("rubric")
