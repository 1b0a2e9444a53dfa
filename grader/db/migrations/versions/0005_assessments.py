"""Assessments (issue 29): per-learner extensions, the start of a timed quiz, staff releases of
scores, and on each answer the assessment it counted for, its raw score and its late penalty.

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "extensions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("assessment_id", sa.String(200), nullable=False),
        sa.Column("due", sa.DateTime(timezone=True), nullable=True),
        sa.Column("granted_by", sa.String(200), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_extensions_user_assessment", "extensions", ["user_id", "assessment_id"])
    op.create_table(
        "assessment_starts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("assessment_id", sa.String(200), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("user_id", "assessment_id", name="uq_assessment_start"),
    )
    op.create_table(
        "releases",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("assessment_id", sa.String(200), nullable=False),
        sa.Column("released_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("released_by", sa.String(200), nullable=False),
    )
    op.create_index("ix_releases_assessment_id", "releases", ["assessment_id"])
    with op.batch_alter_table("answers") as batch:
        batch.add_column(sa.Column("assessment_id", sa.String(200), nullable=True))
        batch.add_column(sa.Column("raw_score", sa.Float, nullable=True))
        batch.add_column(sa.Column("penalty", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("answers") as batch:
        batch.drop_column("penalty")
        batch.drop_column("raw_score")
        batch.drop_column("assessment_id")
    op.drop_table("releases")
    op.drop_table("assessment_starts")
    op.drop_table("extensions")
