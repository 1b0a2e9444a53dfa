"""``free_text``: recorded as written and graded by a person against the model answer."""
from __future__ import annotations

from typing import Any

from .. import feedback as fb
from ..guard import MAX_FREE_TEXT, Screening, shorten
from ..model import AnswerSpec, Outcome, Raw
from .base import Shown

NAME = "free_text"
HELP = "text recorded for a person, who grades it against the model answer"
GRADED = "person"
SCREENING = Screening(bools=True, any_int=True, max_chars=MAX_FREE_TEXT)


def prepare(spec: AnswerSpec) -> None:
    return None


def check(spec: AnswerSpec, raw: Raw) -> Outcome:
    text = str(raw).lower() if isinstance(raw, bool) else str(raw)
    return fb.needs_person(shorten(text, 200))


def read(spec: AnswerSpec, text: Raw) -> Shown:
    return Shown()        # recorded as written, for a person


def verify_plain(problem: Any) -> tuple[bool, str, str]:
    ok = isinstance(problem.reference, str) and bool(problem.reference.strip())
    return ok, "model answer recorded" if ok else "no model answer", "free text: graded by a person against the model answer"
