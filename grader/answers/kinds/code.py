"""``code``: a code exercise; the answer names the learner's solution file, graded by the
exercise's tests in the sandbox (:mod:`grader.code.grade`), not by a checker of text."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..guard import MAX_FREE_TEXT, Screening
from .base import BankSite

NAME = "code"
HELP = "a solution file, graded by the exercise's tests in the sandbox"
GRADED = "tests"
SCREENING = Screening(bools=True, any_int=True, max_chars=MAX_FREE_TEXT)
REFERENCE = False       # the reference solution is a file (``solution``)


def _file_field(key: str) -> Callable[[BankSite], str | None]:
    def read(site: BankSite) -> str | None:
        value = site.item.get(key)
        if not value:
            return None
        if not isinstance(value, str):
            site.error(f"'{key}' must be a file name, relative to the bank file", key)
            return None
        return str(site.base / value)
    return read


FIELDS = {"solution": _file_field("solution"), "tests": _file_field("tests")}


def verify_plain(problem: Any) -> tuple[bool, str, str]:
    from pathlib import Path
    missing = [p for p in (problem.solution, problem.tests) if p and not Path(p).exists()]
    ok = not missing and bool(problem.solution or problem.tests)
    return ok, "missing: " + ", ".join(missing) if missing else "present", "code: graded by its tests (grader.code.grade)"


def describe(value: Any) -> str:
    return "solution and tests present"
