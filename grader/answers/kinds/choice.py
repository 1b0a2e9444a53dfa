"""``choice``: one of the problem's options, by its letter (C, (C), option C) or its text."""
from __future__ import annotations

from typing import Any

from grader.errors import SpecError

from .. import feedback as fb
from ..choices import read_choice
from ..guard import Screening, shorten
from ..model import AnswerSpec, Mistake, Outcome, Raw
from ..prepared import prepare as prepared
from .base import BankSite, Shown

NAME = "choice"
HELP = "one of the problem's options, by its letter or its text"
SCREENING = Screening(bools=True)       # an option may be yes/no (YAML reads them as true/false)


def _choices_field(site: BankSite) -> tuple[tuple[str, str], ...]:
    """``choices: {A: text, B: text, ...}``, required; the reference must be one of them."""
    raw = site.item.get("choices")
    if not isinstance(raw, dict) or not raw:
        site.error("a choice problem needs 'choices: {A: text, B: text, ...}'", "choices")
        return ()
    choices = tuple((str(k), str(v)) for k, v in raw.items())
    reference = site.item.get("reference")
    if str(reference) not in dict(choices):
        site.error(f"reference {reference!r} is not one of the choices {', '.join(dict(choices))}", "reference")
    return choices


FIELDS = {"choices": _choices_field}


def prepare(spec: AnswerSpec) -> tuple[str, tuple[tuple[str, Mistake], ...]]:
    if not spec.choices:
        raise SpecError("a choice problem needs its choices")
    ref = read_choice(spec.reference, spec.choices)
    return ref, tuple((read_choice(m.value, spec.choices), m) for m in spec.mistakes)


def check(spec: AnswerSpec, raw: Raw) -> Outcome:
    ref, mistakes = prepared(spec)
    choices = spec.choices or ()        # prepared: there are choices
    key = read_choice(raw, choices)
    shown = f"{key}: {shorten(dict(choices)[key], 60)}"
    if key == ref:
        return fb.correct(shown)
    for mv, m in mistakes:
        if key == mv:
            return fb.from_mistake(shown, m)
    return fb.wrong(shown, fb.otherwise(spec.feedback, f"{key} is not the right choice"))


def read(spec: AnswerSpec, text: Raw) -> Shown:
    choices = spec.choices or ()
    key = read_choice(text, choices)
    return Shown(f"{key}: {shorten(dict(choices)[key], 60)}")


def verify_plain(problem: Any) -> tuple[bool, str, str]:
    text = dict(problem.choices)[str(problem.reference)]
    return True, f"option {problem.reference}: {text}", "a choice: the reference is one of the options (nothing to derive)"
