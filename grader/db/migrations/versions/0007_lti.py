"""LTI 1.3: registered platforms and deployments, the tool's keys, used nonces, accounts,
LMS courses (contexts), their members and resource links; the login's short-lived state.

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "lti_platforms",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("issuer", sa.String(255), nullable=False),
        sa.Column("client_id", sa.String(255), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("login_url", sa.String(1000), nullable=False),
        sa.Column("token_url", sa.String(1000), nullable=False),
        sa.Column("keyset_url", sa.String(1000), nullable=False),
        sa.Column("token_audience", sa.String(1000), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("issuer", "client_id", name="uq_lti_platform"),
    )
    op.create_table(
        "lti_deployments",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("platform_id", sa.Integer, sa.ForeignKey("lti_platforms.id"), nullable=False),
        sa.Column("deployment_id", sa.String(255), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("platform_id", "deployment_id", name="uq_lti_deployment"),
    )
    op.create_table(
        "lti_keys",
        sa.Column("kid", sa.String(64), primary_key=True),
        sa.Column("private_pem", sa.Text, nullable=False),
        sa.Column("public_jwk", sa.JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("retired_at", TS, nullable=True),
        sa.Column("expires_at", TS, nullable=True),
    )
    op.create_table(
        "lti_nonces",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_index("ix_lti_nonces_expires_at", "lti_nonces", ["expires_at"])
    op.create_table(
        "lti_accounts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("issuer", sa.String(255), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("issuer", "subject", name="uq_lti_account"),
    )
    op.create_index("ix_lti_accounts_user_id", "lti_accounts", ["user_id"])
    op.create_table(
        "lti_contexts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("platform_id", sa.Integer, sa.ForeignKey("lti_platforms.id"), nullable=False),
        sa.Column("deployment_id", sa.String(255), nullable=False),
        sa.Column("context_id", sa.String(255), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("memberships_url", sa.String(1000), nullable=True),
        sa.Column("lineitems_url", sa.String(1000), nullable=True),
        sa.Column("ags_scopes", sa.JSON, nullable=True),
        sa.Column("roster_synced_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("platform_id", "context_id", name="uq_lti_context"),
    )
    op.create_table(
        "lti_members",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("context_pk", sa.Integer, sa.ForeignKey("lti_contexts.id"), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("roles", sa.JSON, nullable=True),
        sa.Column("seen_at", TS, nullable=False),
        sa.UniqueConstraint("context_pk", "user_id", name="uq_lti_member"),
    )
    op.create_index("ix_lti_members_context_pk", "lti_members", ["context_pk"])
    op.create_index("ix_lti_members_user_id", "lti_members", ["user_id"])
    op.create_table(
        "lti_links",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("context_pk", sa.Integer, sa.ForeignKey("lti_contexts.id"), nullable=False),
        sa.Column("resource_link_id", sa.String(255), nullable=False),
        sa.Column("assessment_id", sa.String(200), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("lineitem_url", sa.String(1000), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("context_pk", "resource_link_id", name="uq_lti_link"),
    )
    op.create_index("ix_lti_links_assessment", "lti_links", ["assessment_id"])
    op.create_table(
        "lti_states",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("value", sa.JSON, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_index("ix_lti_states_expires_at", "lti_states", ["expires_at"])


def downgrade() -> None:
    for table in ("lti_states", "lti_links", "lti_members", "lti_contexts", "lti_accounts", "lti_nonces", "lti_keys",
                  "lti_deployments", "lti_platforms"):
        op.drop_table(table)
