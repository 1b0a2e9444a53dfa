"""What grading gives back: one answer's grade, a submission's, a class's report, and their
JSON form (the objects of ``grader grade --format json``, defined once, here).

- :class:`AnswerGrade`: what checking one answer says before its points are applied (the
  fraction of the points, correct or not, feedback, how it was read, status).
- :class:`AnswerResult`: one answer's grade, with its points (``Result`` is its old name).
- :class:`SubmissionResult`: every answer of one learner's submission, scored.
- :class:`Report`: a class's submissions and the input errors found on the way.

An answer a person must grade (``correct`` None: free text, an undecided equivalence, an
answer the engine could not check) scores 0 until a person rules: its points stay in
``max_score`` and are also counted in ``pending_points``, so that an answer nobody has graded
can never raise a percentage.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from grader.errors import GraderError, Location

class Status(StrEnum):
    """An answer's status (a string: equal to its value, written as it in JSON and text)."""

    CORRECT = "correct"
    PARTIAL = "partial"             # wrong, with partial credit (a known mistake)
    WRONG = "wrong"
    INVALID = "invalid"             # not an answer the kind can read
    UNKNOWN = "unknown"             # no such problem id
    NEEDS_PERSON = "needs_person"   # a person grades it (free text, an undecided equivalence)
    ERROR = "error"                 # the engine could not check it: a person must look


STATUSES = tuple(Status)


@dataclass(frozen=True)
class CodeTestResult:
    """One test of a code answer: its name (``file::test[case]``), passed or not, its own
    message, and whether it is a hidden test (learners see it only once grades are published)."""

    name: str
    passed: bool
    message: str = ""
    hidden: bool = False


@dataclass(frozen=True)
class AnswerGrade:
    """What checking one answer says: ``credit`` (0..1 of the points), ``correct`` (None: a
    person decides), ``feedback``, ``read_as`` (how the answer was read), ``status`` (one of
    :data:`STATUSES`), and ``latex``, the reading as LaTeX where it is math (only when asked)."""

    credit: float
    correct: bool | None
    feedback: str
    read_as: str | None
    status: Status
    latex: str | None = None
    tests: tuple[CodeTestResult, ...] = ()     # a code answer: every test, with its own message


def invalid(message: str) -> AnswerGrade:
    """An answer that cannot be graded as given: 0 points, saying why."""
    return AnswerGrade(0.0, False, f"invalid answer: {message}", None, Status.INVALID)


@dataclass(frozen=True)
class AnswerResult:
    """One answer's grade. ``correct`` is None where a person must grade it."""

    id: str
    answer: object
    score: float
    max_score: float
    correct: bool | None
    feedback: str
    status: str                 # a Status: correct|partial|wrong|invalid|unknown|needs_person|error
    read_as: str | None = None
    variant: str | None = None
    location: Location | None = None
    pending_points: float = 0.0  # a person must grade it: its points (in max_score, counted 0 in score)
    latex: str | None = None     # the reading as LaTeX (SymPy's printer), where there is math
    tests: tuple[CodeTestResult, ...] = ()  # a code answer: every test, with its own message


Result = AnswerResult           # its name before the public API


@dataclass(frozen=True)
class SubmissionResult:
    learner: str
    file: str
    location: Location | None
    results: tuple[AnswerResult, ...]   # in the order given
    score: float
    max_score: float            # the bank's points (pending_points included: counted 0 until graded)
    unanswered: tuple[str, ...] = ()
    pending_points: float = 0.0  # points of the answers a person must grade


@dataclass(frozen=True)
class Report:
    submissions: tuple[SubmissionResult, ...]
    errors: tuple[GraderError, ...]     # unreadable files, malformed submissions
    unreadable: bool
    stats: dict[str, Any] = field(default_factory=dict)


_NONFINITE = {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}


def echo(raw: Any) -> Any:
    """The answer as it goes into reports (a megabyte string is cut, saying so; NaN and the
    infinities as YAML writes them, which JSON can hold)."""
    if isinstance(raw, str) and len(raw) > 200:
        return raw[:200] + f"… ({len(raw):,} characters)"
    if isinstance(raw, float) and repr(raw) in _NONFINITE:
        return _NONFINITE[repr(raw)]
    return raw


from grader.values import json_number as num  # noqa: E402  (2.0 -> 2: the one helper)


def result_json(r: AnswerResult) -> dict[str, Any]:
    """One answer's object in ``grader grade --format json`` (a code answer's has ``tests``:
    each test's name, passed, message, hidden)."""
    out = {"id": r.id, "answer": r.answer, "score": num(r.score), "max_score": num(r.max_score),
           "pending_points": num(r.pending_points), "correct": r.correct, "feedback": r.feedback,
           "status": r.status, "read_as": r.read_as, "variant": r.variant,
           "location": str(r.location) if r.location else None}
    if r.tests:
        out["tests"] = [{"name": t.name, "passed": t.passed, "message": t.message, "hidden": t.hidden}
                        for t in r.tests]
    return out


def submission_json(s: SubmissionResult) -> dict[str, Any]:
    """One submission's object in ``grader grade --format json``."""
    return {"learner": s.learner, "file": s.file, "score": num(s.score), "max_score": num(s.max_score),
            "pending_points": num(s.pending_points), "results": [result_json(r) for r in s.results],
            "unanswered": list(s.unanswered)}


def error_json(e: GraderError) -> dict[str, Any]:
    """One input error's object in ``grader grade --format json``."""
    return {"location": str(e.location) if e.location else None, "message": e.message}
