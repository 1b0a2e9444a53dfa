"""The API's models of assessments (issue 29): what /openapi.json shows of ``/assessments``."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .schemas import Text


class WindowOut(BaseModel):
    state: Literal["not_open", "open", "late", "closed"]
    message: str = Field(description="what the learner is told: when it opens, is due, closes, or closed")
    closes: str | None = Field(None, description="UTC: after this no answer is taken (late-until, extension, time limit)")
    ends_at: str | None = Field(None, description="UTC: a started timed quiz's end")
    penalty: float = Field(description="the fraction of the score a late answer loses now (0..1)")


class LateOut(BaseModel):
    kind: Literal["none", "per_day", "multiplier"]
    value: float


class AssessmentSummary(BaseModel):
    id: str
    title: str
    description: str
    timezone: str = Field(description="the course's time zone, in which the *_local times are written")
    opens: str
    due: str
    late_until: str | None = None
    opens_local: str
    due_local: str
    late_until_local: str | None = None
    late: LateOut
    attempts: int | None = Field(None, description="answers that count per problem; null: the problem's own rule")
    show: Literal["immediately", "after_due", "on_release"]
    time_limit_s: float | None = None
    window: WindowOut = Field(description="this learner's window now (with their extension and start)")
    extension: str | None = Field(None, description="UTC: this learner's own due date")
    started_at: str | None = Field(None, description="UTC: when this learner started a timed quiz")
    problems: int
    answered: int
    score: float | None = Field(None, description="null while scores are not shown")
    max_score: float
    scores_shown: bool
    hidden_reason: str | None = None


class AssessmentItemOut(BaseModel):
    id: str
    title: str
    kind: str | None = None
    points: float
    attempts: int | None = None
    attempts_used: int
    answered: bool
    score: float | None = None
    pending: bool
    not_counted: str | None = None      # worth 0 points here: why it is kept (the bank's note)


class AssessmentDetail(AssessmentSummary):
    items: list[AssessmentItemOut]


class Started(BaseModel):
    assessment: str
    started_at: str
    new: bool = Field(description="false: it had been started before (the clock runs from then)")
    window: WindowOut


class ExtensionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    learner: Text = Field(max_length=200)
    due: Text = Field(max_length=60, description="ISO 8601; without a zone, in the course's time zone",
                     examples=["2026-12-08T23:59"])
    reason: Text = Field("", max_length=2000)


class ExtensionOut(BaseModel):
    assessment: str
    learner: str
    name: str
    due: str
    due_local: str
    original_due: str | None = None
    original_due_local: str | None = None
    granted_by: str
    reason: str
    created_at: str


class ReleaseOut(BaseModel):
    assessment: str
    released_at: str
    released_by: str


class BookCell(BaseModel):
    score: float | None
    max_score: float
    attempts: int
    pending: bool
    status: str | None = None
    late: bool = Field(description="the attempt that counts came after the due date")
    late_attempts: int
    penalty: float | None = Field(None, description="points its late penalty took")
    raw_score: float | None = Field(None, description="its score before the penalty")


class BookRow(BaseModel):
    learner: str
    name: str
    email: str
    problems: dict[str, BookCell]
    total: float
    max_total: float
    extension: str | None = None
    started_at: str | None = None


class BookProblem(BaseModel):
    id: str
    title: str
    short: str
    points: float


class AssessmentBook(BaseModel):
    assessment: str
    title: str
    policy: Literal["best", "last"]
    timezone: str
    due: str
    problems: list[BookProblem]
    rows: list[BookRow]
