"""Outcomes and their messages: the last stage, where a verdict becomes what the learner reads.

The most specific message that fits wins: the author's mistake, then a derived mistake, then
the author's feedback for a wrong answer, then a plain statement of what was wrong.
"""
from __future__ import annotations

from .model import Mistake, Outcome, Tolerance

NEEDS_PERSON = "recorded: a person will grade this answer"
UNDECIDED = ("the grader could not decide whether this is equivalent to the expected answer; "
             "a person will check it")


def correct(read_as: str, note: str = "") -> Outcome:
    return Outcome("correct", True, 1.0, read_as, f"correct ({note})" if note else "correct")


def wrong(read_as: str, message: str, credit: float = 0.0) -> Outcome:
    return Outcome("wrong", False, float(credit), read_as, message)


def from_mistake(read_as: str, mistake: Mistake) -> Outcome:
    message = mistake.message
    if mistake.credit:
        message = f"{message} (partial credit: {mistake.credit:.0%})"
    return wrong(read_as, message, mistake.credit)


def undecided(read_as: str) -> Outcome:
    return Outcome("undecided", None, 0.0, read_as, UNDECIDED)


def needs_person(read_as: str) -> Outcome:
    return Outcome("needs_person", None, 0.0, read_as, NEEDS_PERSON)


def otherwise(author: str | None, plain: str) -> str:
    """The author's text for a wrong answer if there is one, else ``plain``."""
    return author.strip() if author and author.strip() else plain


def sig_figs_note(sig: int) -> str:
    return f"{sig} significant figure{'s' if sig != 1 else ''}"


def too_coarse(read_as: str, sig: int, wanted: int | None, tolerance: Tolerance | None = None) -> str:
    """An answer that the reference rounds to, but at fewer figures than the problem asks."""
    if wanted is None and tolerance is not None and not tolerance.exact:
        return f"{read_as} is not within {tolerance} of the expected value."
    if wanted is None:
        return (f"{read_as} is rounded (to {sig_figs_note(sig)}); the question asks for the exact value.")
    return (f"{read_as} is rounded to {sig_figs_note(sig)}: too coarse to tell the answer from its "
            f"neighbours; give at least {sig_figs_note(wanted)}.")
