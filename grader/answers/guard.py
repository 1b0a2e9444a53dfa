"""The rule for what an answer may be, and its first stage: refuse, cheaply and before any
parsing, what cannot be an answer.

A learner's answer is hostile until shown otherwise. **The rule** (every reader of
:mod:`grader.answers` keeps to it, so that whatever the engine cannot represent, evaluate or
bound is ``invalid answer: <what> [at column N]``, never an internal error):

- plain data: text, a whole number, a finite float, or a list only where the kind reads one
  (a shape: a flat list of at most :data:`MAX_ITEMS` integers; an interval: two numbers);
  true/false only for a choice (and free text); no mapping. Each kind declares its
  :class:`Screening` (:mod:`grader.answers.kinds`);
- text of at most :data:`MAX_CHARS` characters (free text :data:`MAX_FREE_TEXT`), valid
  Unicode (no lone surrogate, no U+FFFD from bytes that were not UTF-8), no control or
  invisible formatting character;
- numbers of bounded size: an exact number's numerator and denominator have at most
  :data:`MAX_INT_DIGITS` digits (so a value is 0 or lies between 10⁻⁴⁰⁰ and 10⁴⁰⁰), a stated
  exponent at most :data:`MAX_EXPONENT`, and a value that is not rational (``exp(-200)``,
  ``sqrt(2)``) lies in the same range; formulas within :func:`answer_limits` (length, tokens,
  nesting, the estimated size of every number built while reading, degree and terms),
  checked before anything is computed.

Within the rule, an answer is read and compared; "needs a person" is left only for answers
the exact, sampling and symbolic paths cannot decide.
"""
from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import sympy

    from grader.expr import ParseLimits

MAX_CHARS = 2_000           # any answer but free text; no formula of a problem comes near it
MAX_FREE_TEXT = 10_000
MAX_ITEMS = 16              # axes of a shape
MAX_INT_DIGITS = 400        # |value| < 10**400: beyond any count of anything
MAX_EXPONENT = 400          # 1e400, 10^400, 10⁴⁰⁰
MAX_DEGREE = 64             # a formula's total degree (answers are of degree 4 or so)
MAX_TERMS = 10_000          # a formula's terms once expanded
ALLOWED_SPACE = "\t\n\r"
NOT_UNICODE = "\ufffd"      # what bytes that were not UTF-8 are read as (grader.files.yamlio)
_BAD_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


@lru_cache(maxsize=1)
def answer_limits() -> ParseLimits:
    """The :class:`grader.expr.ParseLimits` every formula of an answer is read within (numbers
    of at most :data:`MAX_INT_DIGITS` estimated digits, so 1/10^999 and exp(1000) are refused
    where they stand, with the column)."""
    from grader.expr import ParseLimits
    return ParseLimits(max_length=MAX_CHARS, max_magnitude=float(MAX_INT_DIGITS), max_exponent=1000,
                       max_degree=MAX_DEGREE, max_terms=MAX_TERMS)


def number_size(value: int | Fraction) -> str | None:
    """Why an exact number (a Fraction or int) is out of the rule's bounds (None: within)."""
    num, den = (value, 1) if isinstance(value, int) else (value.numerator, value.denominator)
    limit = MAX_INT_DIGITS * 3.3219      # bits of 10**MAX_INT_DIGITS
    if abs(num).bit_length() > limit:
        return f"number too large (more than {MAX_INT_DIGITS} digits)"
    if den.bit_length() > limit:
        return f"number too small or too precise (a denominator of more than {MAX_INT_DIGITS} digits)"
    return None


def float_size(approx: sympy.Float) -> str | None:
    """Why a value that is not rational, given as a SymPy Float, is out of the rule's bounds."""
    if approx == 0:
        return None
    exponent = approx._mpf_[2] + approx._mpf_[3] if getattr(approx, "_mpf_", None) else None
    if exponent is None:
        return None
    digits = abs(exponent) * 0.30103
    if digits > MAX_INT_DIGITS:
        return (f"number too large (about 10^{exponent * 0.30103:,.0f}; at most {MAX_INT_DIGITS} digits)"
                if exponent > 0 else f"number too small (about 10^{exponent * 0.30103:,.0f}; at least "
                                     f"10^-{MAX_INT_DIGITS} unless it is 0)")
    return None


@dataclass(frozen=True)
class Screening:
    """What a kind lets through the first stage (each kind declares its own,
    ``SCREENING`` in :mod:`grader.answers.kinds`): true/false (a choice's yes/no, free text);
    integers of any size (free text records them); the longest text; and ``items``, the rule
    for a list (None: no list is an answer of this kind), ``items(raw) -> why | None``."""

    bools: bool = False
    any_int: bool = False
    max_chars: int = MAX_CHARS
    items: Callable[[list[Any] | tuple[Any, ...]], str | None] | None = None


TEXT = Screening()


def screen(raw: Any, kind: str | Screening) -> str | None:
    """Why ``raw`` cannot be an answer of ``kind`` (a kind's name, or its :class:`Screening`;
    None: it may go on to be read)."""
    if isinstance(kind, Screening):
        rule = kind
    else:
        from .kinds import KINDS
        entry = KINDS.get(kind)
        rule = entry.screening if entry is not None else TEXT
    if raw is None:
        return "empty answer"
    if isinstance(raw, bool):
        return None if rule.bools else "true/false is not an answer here"
    if isinstance(raw, int):
        if rule.any_int:
            return None
        return None if _int_ok(raw) else f"number too large (more than {MAX_INT_DIGITS} digits)"
    if isinstance(raw, float):
        if not math.isfinite(raw):
            return f"{raw} is not a finite number"
        return None
    if isinstance(raw, str):
        return screen_text(raw, rule.max_chars)
    if isinstance(raw, (list, tuple)):
        if rule.items is None:
            return "expected text or a number, not a list"
        return rule.items(raw)
    if isinstance(raw, dict):
        return "expected text or a number, not a mapping"
    return f"unsupported value of type {type(raw).__name__}"


def _int_ok(n: int) -> bool:
    # bit_length bounds the digit count without converting a huge int to text
    return number_size(n) is None


def screen_text(text: str, limit: int = MAX_CHARS) -> str | None:
    if len(text) > limit:
        return f"too long ({len(text):,} characters; at most {limit:,})"
    if not text.isprintable() or NOT_UNICODE in text:
        for i, ch in enumerate(text):
            if ch == NOT_UNICODE or "\ud800" <= ch <= "\udfff":
                return f"not valid Unicode at column {i + 1}"
            if ch not in ALLOWED_SPACE and unicodedata.category(ch) in _BAD_CATEGORIES:
                return f"control character U+{ord(ch):04X} at column {i + 1}"
    if not text.strip():
        return "empty answer"
    return None


def shorten(text: str, limit: int = 80) -> str:
    """Text for a message: one line, cut at ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
