"""The API's request and response models: what /openapi.json and /docs show."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

Raw = Any   # an answer as JSON gives it: text, a number, a list (a shape), true/false, null


def _no_nul(text: str) -> str:
    if "\x00" in text:
        raise ValueError("text cannot contain a NUL character (\\u0000)")
    return text


Text = Annotated[str, AfterValidator(_no_nul)]
"""Text a person writes that is stored (a comment, a message, a reason): no NUL character,
which PostgreSQL's text columns refuse (a 500 before this check)."""


class ErrorDetail(BaseModel):
    code: str = Field(examples=["invalid"])
    message: str
    location: str | None = Field(None, description="where in the request: a header, a field, answers.<problem>")


class ErrorBody(BaseModel):
    error: ErrorDetail


ERRORS: dict[int | str, dict[str, Any]] = {s: {"model": ErrorBody} for s in (400, 401, 403, 404, 409, 413, 422, 429)}


class Exercise(BaseModel):
    id: str
    title: str = Field("", description="a short human title (the bank's `title:`, else derived from the prompt)")
    kind: str
    points: float
    prompt: str = Field(description="with the learner's own numbers for a variant problem")
    choices: dict[str, str] | None = None
    attempts: int | None = Field(None, description="how many submissions of this problem count; null: no limit")
    attempts_used: int | None = None
    not_counted: str | None = Field(None, description="a problem worth 0 points: why it is kept (the bank's note)")
    variant: dict[str, int] | None = Field(None, description="the learner's own numbers, e.g. {\"d\": 768, \"h\": 12}")
    variant_choices: dict[str, list[int]] | None = Field(None, description="instructors: the candidate values")


class ValidateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    problem: str = Field(max_length=200, examples=["17-08/params-formula"])
    answer: Raw = Field(examples=["4d^2 + 4d"])


class Reading(BaseModel):
    ok: bool
    read_as: str | None = Field(None, examples=["4·d² + 4·d"])
    latex: str | None = None
    mathml: str | None = None
    error: str | None = None
    column: int | None = Field(None, description="1-based column of the error in the answer's text")


class SubmissionIn(BaseModel):
    """``{"answers": {problem: answer}}``. A number written with a point or an exponent
    (``1.05e6``) keeps its digits, as in an answers file."""

    model_config = ConfigDict(extra="forbid")
    answers: dict[str, Raw] = Field(examples=[{"17-08/params-formula": "4d^2 + 4d", "17-08/practice-1": 64}])


class AppliedItem(BaseModel):
    id: str
    text: str
    points: float | None = Field(None, description="null: the bank no longer has this item")


LATE_FRACTION = "the fraction a late answer loses (null: on time, or not known)"


class Review(BaseModel):
    score: float = Field(description="the reviewer's score")
    counted: float | None = Field(None, description="the score that counts: a late answer's is score x (1 - late_fraction)")
    penalty: float | None = Field(None, description="the late penalty's points taken from score (null: none)")
    late_fraction: float | None = Field(None, description=LATE_FRACTION)
    comment: str
    reviewer: str
    at: str
    rubric: list[AppliedItem] = Field([], description="the rubric items the reviewer applied")


class Regrade(BaseModel):
    """A learner's regrade request and its outcome (the new score, if any, is the answer's review)."""
    id: int
    answer_id: str
    problem: str | None = None
    message: str
    status: Literal["open", "answered"]
    created_at: str
    response: str | None = None
    answered_at: str | None = None


class Result(BaseModel):
    """One answer: exactly the object of `grader grade --format json`, with its id here and a
    person's review where there is one."""

    model_config = ConfigDict(extra="allow")
    id: str
    answer: Raw = None
    score: float | None = None
    max_score: float | None = None
    pending_points: float | None = None
    correct: bool | None = None
    feedback: str | None = None
    status: str | None = None
    read_as: str | None = None
    variant: str | None = None
    location: str | None = None
    answer_id: str
    review: Review | None = None
    regrade: Regrade | None = None


class Submission(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    learner: str
    source: Literal["api", "batch", "code"]
    status: Literal["received", "graded", "failed"]
    created_at: str
    graded_at: str | None = None
    score: float | None = None
    max_score: float | None = None
    pending_points: float | None = None
    results: list[Result]
    unanswered: list[str] | None = None


class SubmissionBrief(BaseModel):
    id: str
    learner: str
    source: str
    status: str
    created_at: str
    score: float | None = None
    max_score: float | None = None
    answers: int


class Cell(BaseModel):
    score: float | None = Field(description="null: not answered, or waiting for a person")
    max_score: float
    attempts: int
    pending: bool
    status: str | None = None


class GradeRow(BaseModel):
    learner: str
    name: str
    email: str
    problems: dict[str, Cell]
    total: float
    max_total: float
    pending_points: float
    policy: str | None = None


class Gradebook(BaseModel):
    policy: Literal["best", "last"]
    problems: list[str]
    rows: list[GradeRow]


class Job(BaseModel):
    id: str
    kind: Literal["code", "batch", "regrade"]
    status: Literal["queued", "running", "done", "failed"]
    learner: str
    problem: str | None = None
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    progress: dict[str, int | None]
    result: dict[str, Any] | None = None
    error: str | None = None


class ReviewIn(BaseModel):
    """A score, or the rubric items that apply (the score is then their points' sum clamped to
    [0, cap]); a score given with rubric items overrides their sum."""
    model_config = ConfigDict(extra="forbid")
    score: float | None = Field(None, ge=0, description="points, from 0 to the problem's points")
    rubric: list[Text] | None = Field(None, max_length=20, description="ids of the rubric items that apply")
    comment: Text = Field("", max_length=10_000, description="to the learner")
    identical: bool = Field(False, description="also every identical answer (same problem, same normalised "
                                               "text) waiting for a person and not reviewed yet")


class ReviewOut(BaseModel):
    answer_id: str
    problem: str
    score: float = Field(description="the reviewer's score")
    counted: float = Field(description="the score that counts: a late answer's is score x (1 - late_fraction)")
    penalty: float | None = Field(None, description="the late penalty's points taken from score (null: none)")
    late_fraction: float | None = Field(None, description=LATE_FRACTION)
    comment: str
    rubric: list[AppliedItem]
    reviewer: str
    at: str
    score_from: Literal["given", "rubric"]
    applied_to: list[str] = Field(description="the answers this review was recorded on (this one first)")


class RubricItem(BaseModel):
    id: str
    text: str
    points: float


class Rubric(BaseModel):
    items: list[RubricItem]
    cap: float = Field(description="the sum of the applied items is clamped to [0, cap]")


class ReviewItem(BaseModel):
    answer_id: str
    submission_id: str
    learner: str | None = Field(None, description="null when asked with anonymous=true")
    pseudonym: str = Field(description="a stable name for the learner that hides the login")
    assessment: dict[str, str] | None = Field(None, description="{id, title} of the problem's assessment")
    problem: str
    title: str = ""
    prompt: str
    answer: Raw = None
    feedback: str | None = None
    status: str | None = None
    points: float
    submitted_at: str
    late_fraction: float | None = Field(None, description="late: the fraction of the score given that it loses")
    rubric: Rubric | None = None
    review: Review | None = None
    regrade: Regrade | None = Field(None, description="an open regrade request of this answer")


class RegradeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: Text = Field(min_length=1, max_length=5000, description="why the learner asks")


class RegradeAnswerIn(BaseModel):
    """The staff's answer; with a score or rubric items, a new review is recorded too."""
    model_config = ConfigDict(extra="forbid")
    response: Text = Field(min_length=1, max_length=10_000)
    score: float | None = Field(None, ge=0)
    rubric: list[Text] | None = Field(None, max_length=20)
    comment: Text | None = Field(None, max_length=10_000, description="the new review's comment (default: the last)")


class RegradeAnswered(Regrade):
    review: ReviewOut | None = None


class MyReview(BaseModel):
    answer_id: str
    problem: str
    answer: Raw = None
    submitted_at: str
    points: float
    score: float | None = Field(None, description="the score that counts for this answer")
    review: Review | None = None
    regrade: Regrade | None = None


class Health(BaseModel):
    status: str
    database: str
    schema_revision: str | None
    workers_ready: int
    queue: int
