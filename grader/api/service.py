"""The API's part for the service: what `grader serve` (grader/serve, grader/web) needs of the
engine beyond grading, and only that. The service imports nothing of grader but :mod:`grader.api`,
this module, grader.errors and grader.db (tests/test_imports.py holds it to it)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from grader.bank.model import Bank
from grader.errors import Location
from grader.grade.pool import AnswerLimits
from grader.grade.results import AnswerResult
from grader.bank.model import Problem as BankProblem   # api.Problem is a draft's
from grader.bank.rubric import Rubric, RubricItem      # a problem's rubric (grader serve's reviews)
from grader.grade.run import Totals
from grader import __version__ as VERSION              # the version the service reports
from grader.values import json_number


def answer_failed(bank: Bank, problem_id: str, raw: object, *, reason: str,
                  limits: AnswerLimits = AnswerLimits(), detail: str = "",
                  location: str | None = None) -> AnswerResult:
    """The result of an answer whose check did not finish (``reason``: "timeout", "memory",
    "died", "error"), as the engine grades such an answer in a submission: "too complex to grade"
    (or an internal error left to a person); an unknown problem id is "unknown" as always."""
    from grader.grade.plan import result, too_complex
    from grader.grade.pool import Failure
    from grader.grade.results import AnswerGrade, Status
    problem = bank.get(problem_id) if isinstance(problem_id, str) else None
    where = Location(location) if location else None
    if problem is None:
        grade = AnswerGrade(0.0, False, f"unknown problem id {problem_id!r}", None, Status.UNKNOWN)
        return result(problem_id, raw, None, None, grade, where)
    return result(problem_id, raw, problem, None, too_complex(Failure(reason, detail), limits), where)


def grade_code_file(bank: Bank, problem_id: str, path: Path) -> AnswerResult:
    """A code exercise's answer (the learner's file at ``path``) graded by the engine's own code
    path, as ``grader grade`` grades it: its tests in the sandbox, each test in ``tests``."""
    from grader.grade.check import grade_code_task
    from grader.grade.plan import result
    problem = bank.get(problem_id)
    if problem is None or problem.kind != "code":
        raise KeyError(problem_id)
    return result(problem_id, str(path.name), problem, None, grade_code_task(problem, path), None)


def code_not_run(r: AnswerResult) -> str | None:
    """Why a code answer's tests did not run at all, where that is the grader's fault and not
    the learner's (the test runner crashed or exited abnormally, its folder went missing, the
    grader's own processes ran out of memory, no usable sandbox): its cause, or None when the
    tests ran (whatever they found). Such a grade is not the learner's score."""
    if r.status == "error":         # no safe sandbox here, or the exercise's tests are missing
        return r.feedback
    if len(r.tests) == 1 and r.tests[0].name == "tests" and not r.tests[0].passed:
        message = r.tests[0].message
        if message.startswith("the tests did not run: ") and "time limit" not in message:
            return message[len("the tests did not run: "):]
    return None


class AnswerShape:
    """The engine's own limits on what an answer may be (:mod:`grader.answers.guard`), as a
    shell checks them once at its boundary, before anything is stored, pickled or sent to a
    worker: a value nested at most ``max_depth`` levels (a shape is a flat list: 1), with at most
    ``max_items`` items in a list, ``max_chars`` characters of text. An answer within them may
    still be invalid (the engine says why); one beyond them is refused whole."""

    def __init__(self) -> None:
        from grader.answers.guard import MAX_FREE_TEXT, MAX_INT_DIGITS, MAX_ITEMS
        self.max_depth = 2          # a list of lists at most: the engine then says "not a list of integers"
        self.max_items = MAX_ITEMS
        self.max_chars = MAX_FREE_TEXT
        self.max_int_digits = MAX_INT_DIGITS

    def problem(self, raw: object) -> str | None:
        """Why ``raw`` is beyond the limits (None: within them). Iterative: any depth is safe."""
        stack: list[tuple[object, int]] = [(raw, 0)]
        seen = 0
        while stack:
            value, depth = stack.pop()
            seen += 1
            if seen > (self.max_items + 1) ** self.max_depth:
                return f"more than {(self.max_items + 1) ** self.max_depth} values"
            if isinstance(value, (list, tuple, dict)):
                if depth >= self.max_depth:
                    return f"nested more than {self.max_depth} levels deep"
                if len(value) > self.max_items:
                    return f"a list of {len(value):,} items (at most {self.max_items})"
                items = list(value.items()) if isinstance(value, dict) else list(value)
                for item in items:
                    if isinstance(item, tuple) and isinstance(value, dict):
                        stack.extend([(item[0], depth + 1), (item[1], depth + 1)])
                    else:
                        stack.append((item, depth + 1))
            elif isinstance(value, str) and len(value) > self.max_chars:
                return f"{len(value):,} characters of text (at most {self.max_chars:,})"
        return None


def answer_shape() -> AnswerShape:
    """The engine's limits on an answer's shape (see :class:`AnswerShape`)."""
    return AnswerShape()



def distribution_plot(points: float, distribution: list[dict[str, Any]], title: str) -> str:
    """The staff pages' score distribution as inline SVG: a bar per score, how many learners have it."""
    from grader.reports.plots import distribution as _plot
    return _plot(points, distribution, title)


__all__ = ["VERSION", "distribution_plot", "AnswerShape", "BankProblem", "Rubric", "RubricItem", "Totals", "answer_failed", "answer_shape",
            "code_not_run", "grade_code_file", "json_number"]

