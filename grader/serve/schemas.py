"""The API's request and response models: what /openapi.json and /docs show."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Raw = Any   # an answer as JSON gives it: text, a number, a list (a shape), true/false, null


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


class Review(BaseModel):
    score: float
    comment: str
    reviewer: str
    at: str


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
    model_config = ConfigDict(extra="forbid")
    score: float = Field(ge=0, description="points, from 0 to the problem's points")
    comment: str = Field("", max_length=10_000)


class ReviewItem(BaseModel):
    answer_id: str
    submission_id: str
    learner: str
    problem: str
    prompt: str
    answer: Raw = None
    feedback: str | None = None
    status: str | None = None
    points: float
    submitted_at: str
    review: Review | None = None


class Health(BaseModel):
    status: str
    database: str
    schema_revision: str | None
    workers_ready: int
    queue: int
