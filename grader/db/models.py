"""The service's tables (SQLAlchemy 2 declarative models).

Public ids (submissions, answers, jobs) are random (uuid4 hex), never sequential, so an id
tells nothing about how many others exist or whose they are. Answers, grades and job results
are stored as the engine's JSON objects (``result`` holds exactly the per-answer object of
``grader grade --format json``); the columns beside them are what queries filter and sum.
"""
from __future__ import annotations

import uuid
from typing import Any, TypeAlias, Unpack
from datetime import datetime, timezone

from sqlalchemy import (JSON, Row, Boolean, DateTime, Float, ForeignKey, Index, Integer, LargeBinary, String, Text,
                        UniqueConstraint)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def new_id() -> str:
    return uuid.uuid4().hex


def now() -> datetime:
    return datetime.now(timezone.utc)



Record: TypeAlias = "Row[Unpack[tuple[Any, ...]]]"     # a row of a select(), any columns

class Base(DeclarativeBase):
    pass


class User(Base):
    """A learner (``login`` is the learner id of answer files) or an instructor."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    login: Mapped[str] = mapped_column(String(200), unique=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    email: Mapped[str] = mapped_column(String(320), default="")
    role: Mapped[str] = mapped_column(String(20))               # learner | instructor
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class Token(Base):
    """A bearer token: only its SHA-256 is stored; ``prefix`` names it in listings."""

    __tablename__ = "tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Submission(Base):
    """One submission: stored (``received``) before it is graded (``graded``)."""

    __tablename__ = "submissions"
    __table_args__ = (UniqueConstraint("user_id", "idempotency_key", name="uq_submission_idempotency"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(200), nullable=True)
    body_hash: Mapped[str] = mapped_column(String(64), default="")
    source: Mapped[str] = mapped_column(String(20), default="api")      # api | batch | code
    status: Mapped[str] = mapped_column(String(20), default="received")  # received | graded
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    graded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    pending_points: Mapped[float | None] = mapped_column(Float, nullable=True)
    unanswered: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)


class Answer(Base):
    """One answer of a submission, and its grade (``result``: the engine's JSON object)."""

    __tablename__ = "answers"
    __table_args__ = (Index("ix_answers_user_problem", "user_id", "problem_id"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    problem_id: Mapped[str] = mapped_column(String(200), index=True)
    position: Mapped[int] = mapped_column(Integer)
    raw: Mapped[object] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    status: Mapped[str | None] = mapped_column(String(20), nullable=True)
    correct: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    pending_points: Mapped[float | None] = mapped_column(Float, nullable=True)
    feedback: Mapped[str | None] = mapped_column(Text, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # an answer to a problem of an assessment (grader.serve.course): which, and, when it came late,
    # the engine's score before the penalty and the points the penalty took (``score`` is after it)
    assessment_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    raw_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    penalty: Mapped[float | None] = mapped_column(Float, nullable=True)


class Review(Base):
    """A person's grade of an answer (free text, an undecided equivalence): who, when, what.
    The latest review of an answer is the one that counts."""

    __tablename__ = "reviews"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    answer_id: Mapped[str] = mapped_column(ForeignKey("answers.id"), index=True)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    score: Mapped[float] = mapped_column(Float)
    comment: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    rubric: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)     # the rubric items applied (ids)


class RegradeRequest(Base):
    """A learner's request that a person look at a graded answer again: their message, and the
    staff's answer (``response``, who, when; a new score is a new :class:`Review`). At most one
    ``open`` request per answer."""

    __tablename__ = "regrade_requests"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    answer_id: Mapped[str] = mapped_column(ForeignKey("answers.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    message: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    status: Mapped[str] = mapped_column(String(20), default="open", index=True)    # open | answered
    response: Mapped[str | None] = mapped_column(Text, nullable=True)
    answered_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    answered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Job(Base):
    """Work done outside a request: a code submission, a batch, a regrade. A row, so a crash
    loses none: at start-up, jobs left ``running`` are ``queued`` again."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_status_created", "status", "created_at"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(20))                       # code | batch | regrade
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    problem_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="queued")   # queued | running | done | failed
    params: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    data: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int | None] = mapped_column(Integer, nullable=True)
    tries: Mapped[int] = mapped_column(Integer, default=0)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class AuditEntry(Base):
    """One line of the audit log (:mod:`grader.db.audit`): who, when, from where, what, on
    what, a small JSON detail. Append-only: no code updates or deletes a row, and the
    migration's triggers refuse UPDATE and DELETE (SQLite and PostgreSQL)."""

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_at", "at"), Index("ix_audit_log_actor", "actor"),
                      Index("ix_audit_log_action", "action"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    actor: Mapped[str] = mapped_column(String(200))           # a login, "os:<user>" for the CLI, "" if unknown
    address: Mapped[str] = mapped_column(String(64))          # the client's address, or "cli"
    action: Mapped[str] = mapped_column(String(40))           # token.issued, login.failed, batch.uploaded, ...
    target: Mapped[str] = mapped_column(String(200), default="")
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class WebSession(Base):
    """A signed-in browser (the pages' session): only the SHA-256 of the cookie's random id is
    stored; the row is deleted at sign-out, at "sign out everywhere" and when its token is
    revoked, and pruned once expired."""

    __tablename__ = "web_sessions"
    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    token_id: Mapped[int] = mapped_column(ForeignKey("tokens.id"), index=True)
    created_at: Mapped[float] = mapped_column(Float)                  # seconds since the epoch
    expires_at: Mapped[float] = mapped_column(Float, index=True)


class AuthFailure(Base):
    """Failed authentications counted per key (``addr:<client address>`` or ``prefix:<token
    prefix>``) in a fixed window, shared by every instance on the database; rows whose window
    has ended are pruned."""

    __tablename__ = "auth_failures"
    key: Mapped[str] = mapped_column(String(80), primary_key=True)
    window_start: Mapped[float] = mapped_column(Float, index=True)    # seconds since the epoch
    failures: Mapped[int] = mapped_column(Integer)


class LearnerSlot(Base):
    """A learner's grading request in progress, held in the database so several instances
    share the one-at-a-time guard: ``key`` is the user's id (negative: a live reading);
    ``holder`` names the request; a row past ``expires_at`` (its instance died) may be taken."""

    __tablename__ = "learner_slots"
    key: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    holder: Mapped[str] = mapped_column(String(40))
    expires_at: Mapped[float] = mapped_column(Float)                  # seconds since the epoch


class RateBucket(Base):
    """A token's rate-limit bucket (``level`` requests left at ``at``), shared by instances."""

    __tablename__ = "rate_buckets"
    token_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    level: Mapped[float] = mapped_column(Float)
    at: Mapped[float] = mapped_column(Float)                          # seconds since the epoch


class Extension(Base):
    """A learner's own due date for an assessment, granted by a member of staff; the latest row
    of a (learner, assessment) counts, and a row whose ``due`` is NULL revokes the one before."""

    __tablename__ = "extensions"
    __table_args__ = (Index("ix_extensions_user_assessment", "user_id", "assessment_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    assessment_id: Mapped[str] = mapped_column(String(200))
    due: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)     # UTC; NULL: revoked
    granted_by: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class AssessmentStart(Base):
    """When a learner started a timed assessment (its clock runs from here); one per learner."""

    __tablename__ = "assessment_starts"
    __table_args__ = (UniqueConstraint("user_id", "assessment_id", name="uq_assessment_start"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    assessment_id: Mapped[str] = mapped_column(String(200))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class Release(Base):
    """Staff released an assessment's scores and feedback to its learners (its ``show`` is
    ``on_release``, or earlier than its due date): from the first row on, they are shown."""

    __tablename__ = "releases"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    assessment_id: Mapped[str] = mapped_column(String(200), index=True)
    released_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    released_by: Mapped[str] = mapped_column(String(200))


# --- LTI 1.3 (grader.serve.lti): platforms, the tool's keys, launches' contexts and links ---

class LtiPlatform(Base):
    """A registered LMS (an issuer and the client id it gave this tool) and its endpoints:
    the OIDC authorisation (login) URL, the OAuth 2 token URL and its key set's URL."""

    __tablename__ = "lti_platforms"
    __table_args__ = (UniqueConstraint("issuer", "client_id", name="uq_lti_platform"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    issuer: Mapped[str] = mapped_column(String(255))
    client_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(200), default="")
    login_url: Mapped[str] = mapped_column(String(1000))
    token_url: Mapped[str] = mapped_column(String(1000))
    keyset_url: Mapped[str] = mapped_column(String(1000))
    token_audience: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class LtiDeployment(Base):
    """A deployment id of a platform (a launch naming another one is refused)."""

    __tablename__ = "lti_deployments"
    __table_args__ = (UniqueConstraint("platform_id", "deployment_id", name="uq_lti_deployment"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id"))
    deployment_id: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class LtiKey(Base):
    """One of the tool's RSA key pairs (PEM private key, public JWK). The newest key not
    retired signs; a retired key is still served in the key set until ``expires_at``."""

    __tablename__ = "lti_keys"
    kid: Mapped[str] = mapped_column(String(64), primary_key=True)
    private_pem: Mapped[str] = mapped_column(Text)
    public_jwk: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    retired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class LtiNonce(Base):
    """A launch's nonce already used (SHA-256 of issuer and nonce), kept until its token expires."""

    __tablename__ = "lti_nonces"
    hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[float] = mapped_column(Float, index=True)      # seconds since the epoch


class LtiAccount(Base):
    """A platform's user (issuer + subject, stable) mapped to one of grader's users."""

    __tablename__ = "lti_accounts"
    __table_args__ = (UniqueConstraint("issuer", "subject", name="uq_lti_account"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    issuer: Mapped[str] = mapped_column(String(255))
    subject: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class LtiContext(Base):
    """An LMS course (a platform's context) that launched the tool, with its services' URLs
    (Names and Role Provisioning: ``memberships_url``; Assignment and Grade: ``lineitems_url``)."""

    __tablename__ = "lti_contexts"
    __table_args__ = (UniqueConstraint("platform_id", "context_id", name="uq_lti_context"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id"))
    deployment_id: Mapped[str] = mapped_column(String(255))
    context_id: Mapped[str] = mapped_column(String(255))
    title: Mapped[str] = mapped_column(String(500), default="")
    memberships_url: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    lineitems_url: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    ags_scopes: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    roster_synced_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class LtiMember(Base):
    """A user seen in an LMS course (by a launch or a roster sync), with the LTI roles given."""

    __tablename__ = "lti_members"
    __table_args__ = (UniqueConstraint("context_pk", "user_id", name="uq_lti_member"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    context_pk: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    roles: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class LtiLink(Base):
    """A resource link placed in an LMS course (by deep linking) that opens one assessment;
    ``lineitem_url`` is its gradebook column (Assignment and Grade Services), once known."""

    __tablename__ = "lti_links"
    __table_args__ = (UniqueConstraint("context_pk", "resource_link_id", name="uq_lti_link"),
                      Index("ix_lti_links_assessment", "assessment_id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    context_pk: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id"))
    resource_link_id: Mapped[str] = mapped_column(String(255))
    assessment_id: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(String(500), default="")
    lineitem_url: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class LtiState(Base):
    """Short-lived values of the OIDC login and launch (state, nonce, a launch's data for deep
    linking), kept server-side by key (pylti1p3's launch-data storage) until ``expires_at``."""

    __tablename__ = "lti_states"
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON)
    expires_at: Mapped[float] = mapped_column(Float, index=True)      # seconds since the epoch


class LtiOutbox(Base):
    """A score to post to an LMS gradebook (AGS) for one learner and resource link
    (grader.serve.lti.outbox): pending (``next_at``), sending (claimed until ``claimed_until``),
    sent, failed (``error``), superseded (by a newer one before it was sent) or held (not released)."""

    __tablename__ = "lti_outbox"
    __table_args__ = (Index("ix_lti_outbox_status_next", "status", "next_at"),
                      Index("ix_lti_outbox_link_user", "link_id", "user_id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    link_id: Mapped[int] = mapped_column(ForeignKey("lti_links.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    assessment_id: Mapped[str] = mapped_column(String(200))
    cause: Mapped[str] = mapped_column(String(40))
    timestamp: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(20), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    claimed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    claimed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    score_given: Mapped[float | None] = mapped_column(Float, nullable=True)
    score_maximum: Mapped[float | None] = mapped_column(Float, nullable=True)
    grading_progress: Mapped[str | None] = mapped_column(String(20), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
