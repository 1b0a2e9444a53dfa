"""``interval``: a range of values, ``[0, 1]``, ``(0, 1]``, ``]0, 1[``, ``0 to 1``,
``0 <= x < 1``, ``[0, ∞)`` or a YAML list ``[0, 1]`` (closed), with exact endpoints.

The question it answers: "in which interval does ... lie?" (the entries of a softmax row
lie in [0, 1]; the largest one of n entries in [1/n, 1)). An answer is right when both
endpoints are the reference's (exactly, or within the problem's ``tolerance``) and each end is
open or closed as the reference's. The feedback says what is off: an end included that is not
reached (or the other way), one end right, an interval too wide or too narrow. The reference is
verified from ``derive: {lo, hi, at}``, two spec formulas for its endpoints (whether an end is
reached is the author's statement, not derived).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
import re
from typing import Any

from .. import feedback as fb
from ..guard import TEXT, Screening, screen, shorten
from ..model import AnswerSpec, Mistake, Outcome, Raw, Tolerance, Unreadable
from ..prepared import prepare as prepared
from .base import BankSite, Shown

NAME = "interval"
HELP = "an interval of values, [0, 1] or (0, 1] or 0 to 1, compared by its endpoints and which ends it includes"
DERIVE_KEYS = frozenset({"lo", "hi", "at"})
DRAWN = False           # a drawn reference would be its endpoints only: which ends are reached is not derived

_INFINITY = {"inf", "infinity", "∞", "oo"}
_OPEN = {"(": True, "[": False, "]": True}          # "]0, 1[" is the open interval (0, 1)
_CLOSE = {")": True, "]": False, "[": True}
_WORDS = re.compile(r"^(?:from\s+|between\s+)?(?P<lo>.+?)\s+(?:to|and|until)\s+(?P<hi>.+)$", re.IGNORECASE)
_CHAIN = re.compile(r"^(?P<lo>.+?)\s*(?P<a><=|≤|<)\s*[A-Za-z_][A-Za-z0-9_]{0,20}\s*(?P<b><=|≤|<)\s*(?P<hi>.+)$")


def _items(raw: list[Any] | tuple[Any, ...]) -> str | None:
    """A YAML list is a closed interval: exactly two numbers."""
    if len(raw) != 2:
        return f"an interval is two endpoints, [lo, hi], not {len(raw):,} values"
    for item in raw:
        if isinstance(item, bool) or not isinstance(item, (int, float, str)):
            return "an interval's endpoints are numbers"
        why = screen(item, TEXT)
        if why:
            return why
    return None


SCREENING = Screening(items=_items)


@dataclass(frozen=True)
class Interval:
    """Endpoints (None: unbounded on that side) and whether each end is open."""

    lo: Fraction | None
    hi: Fraction | None
    lo_open: bool
    hi_open: bool

    def __str__(self) -> str:
        return (("(" if self.lo_open else "[") + _show(self.lo, "-∞") + ", " + _show(self.hi, "∞")
                + (")" if self.hi_open else "]"))

    def contains(self, other: "Interval") -> bool:
        """Whether every value of ``other`` is in this interval."""
        def below(a: Fraction | None, a_open: bool, b: Fraction | None, b_open: bool) -> bool:        # lower end a is at or below b (as lower ends)
            if a is None:
                return True
            if b is None:
                return False
            return a < b or (a == b and (not a_open or b_open))

        def above(a: Fraction | None, a_open: bool, b: Fraction | None, b_open: bool) -> bool:        # upper end a is at or above b (as upper ends)
            if a is None:
                return True
            if b is None:
                return False
            return a > b or (a == b and (not a_open or b_open))
        return (below(self.lo, self.lo_open, other.lo, other.lo_open)
                and above(self.hi, self.hi_open, other.hi, other.hi_open))


def _show(x: Fraction | None, infinite: str) -> str:
    if x is None:
        return infinite
    from ..numbers import format_value
    return format_value(x)


def _endpoint(raw: Raw, side: str) -> Fraction | None:
    """One endpoint: a number (exact), or ±∞ (None; only on its own side)."""
    if isinstance(raw, str):
        text = raw.strip()
        sign = text[:1] if text[:1] in "+-−" else ""
        if text[len(sign):].strip().lower() in _INFINITY:
            if (sign in ("-", "−")) != (side == "lower"):
                raise Unreadable(f"{text} cannot be the {side} end of an interval")
            return None
    from ..numbers import read_number
    r = read_number(raw)
    if r.error is not None:
        raise Unreadable(f"the {side} end {shorten(str(raw), 30)!r} is not an exact number")
    return r.value


def _split(inner: str) -> tuple[str, str]:
    if ";" in inner:
        parts = inner.split(";")
    elif inner.count(",") == 1:
        parts = inner.split(",")
    else:
        words = _WORDS.match(inner)
        if words:
            return words.group("lo"), words.group("hi")
        if "," in inner:
            raise Unreadable("cannot tell the two endpoints apart: separate them with ';' (e.g. [1,024; 2,048]) "
                             "or write them without thousands separators")
        raise Unreadable("expected an interval such as [0, 1], (0, 1], 0 to 1 or 0 <= x <= 1")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise Unreadable("an interval has two endpoints, e.g. [0, 1]")
    return parts[0], parts[1]


def read_interval(raw: Raw) -> Interval:
    """An interval as the learner (or the bank) writes it; :class:`Unreadable` says why not."""
    if isinstance(raw, (list, tuple)):
        if len(raw) != 2:
            raise Unreadable("an interval is two endpoints, [lo, hi]")
        return _checked(_endpoint(raw[0], "lower"), _endpoint(raw[1], "upper"), False, False)
    if not isinstance(raw, str):
        raise Unreadable("expected an interval such as [0, 1], (0, 1] or 0 to 1")
    text = " ".join(raw.split())
    if text[:1] in _OPEN and text[-1:] in _CLOSE and len(text) > 2:
        lo, hi = _split(text[1:-1])
        return _checked(_endpoint(lo, "lower"), _endpoint(hi, "upper"), _OPEN[text[0]], _CLOSE[text[-1]])
    chain = _CHAIN.match(text)
    if chain:
        return _checked(_endpoint(chain.group("lo"), "lower"), _endpoint(chain.group("hi"), "upper"),
                        chain.group("a") == "<", chain.group("b") == "<")
    words = _WORDS.match(text)
    if words:
        return _checked(_endpoint(words.group("lo"), "lower"), _endpoint(words.group("hi"), "upper"), False, False)
    raise Unreadable("expected an interval such as [0, 1], (0, 1], 0 to 1 or 0 <= x <= 1")


def _checked(lo: Fraction | None, hi: Fraction | None, lo_open: bool, hi_open: bool) -> Interval:
    if (lo is None and not lo_open) or (hi is None and not hi_open):
        raise Unreadable("∞ is not a number an interval can include: write ( or ) at an infinite end")
    if lo is not None and hi is not None:
        if lo > hi:
            raise Unreadable(f"the lower end {_show(lo, '')} is above the upper end {_show(hi, '')}: "
                             "write the lower end first")
        if lo == hi and (lo_open or hi_open):
            raise Unreadable(f"an empty interval: only {_show(lo, '')} could be in it, and an open end leaves it out")
    return Interval(lo, hi, lo_open, hi_open)


# ---------------------------------------------------------------- checking

def prepare(spec: AnswerSpec) -> tuple[Interval, tuple[tuple[Interval, Mistake], ...]]:
    """(reference, ((interval, Mistake), ...))."""
    return read_interval(spec.reference), tuple((read_interval(m.value), m) for m in spec.mistakes)


def _near(a: Fraction | None, b: Fraction | None, tolerance: Tolerance | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (tolerance is not None and tolerance.allows(a, b))


def check(spec: AnswerSpec, raw: Raw) -> Outcome:
    ref, mistakes = prepared(spec)
    mine = read_interval(raw)
    shown = str(mine)
    tol = spec.tolerance
    lo_ok, hi_ok = _near(mine.lo, ref.lo, tol), _near(mine.hi, ref.hi, tol)
    if lo_ok and hi_ok and (mine.lo_open, mine.hi_open) == (ref.lo_open, ref.hi_open):
        return fb.correct(shown)
    for mv, m in mistakes:
        if mine == mv:
            return fb.from_mistake(shown, m)
    if lo_ok and hi_ok:
        return fb.wrong(shown, _ends(mine, ref))
    how = ("too wide: it holds the expected interval and more" if mine.contains(ref) else
           "too narrow: values outside it are possible too" if ref.contains(mine) else "not the expected interval")
    if lo_ok or hi_ok:
        right, other = ("lower", "upper") if lo_ok else ("upper", "lower")
        how += f" (the {right} end is right, the {other} end is not)"
    return fb.wrong(shown, fb.otherwise(spec.feedback, how))


def _ends(mine: Interval, ref: Interval) -> str:
    """The endpoints are right; what to say about the ends that are open where they should be closed."""
    said = []
    for end, answer_open, ref_open, x, bracket in (("lower", mine.lo_open, ref.lo_open, ref.lo, "(["),
                                                   ("upper", mine.hi_open, ref.hi_open, ref.hi, ")]")):
        if answer_open == ref_open:
            continue
        value = _show(x, "∞")
        if ref_open:
            said.append(f"{value} itself is never reached: leave it out with '{bracket[0]}'")
        else:
            said.append(f"{value} itself is reached: include it with '{bracket[1]}'")
    return "The endpoints are right, but " + "; and ".join(said) + "."


def read(spec: AnswerSpec, text: Raw) -> Shown:
    import sympy
    mine = read_interval(text)

    def num(x: Fraction | None, infinite: sympy.Basic) -> sympy.Basic:
        return infinite if x is None else sympy.Rational(x.numerator, x.denominator)
    return Shown(str(mine), sympy.Interval(num(mine.lo, -sympy.oo), num(mine.hi, sympy.oo), mine.lo_open, mine.hi_open))


# ---------------------------------------------------------------- verification of the reference

def read_derive(raw: Any, site: BankSite) -> tuple[Any, str | None] | None:
    """``derive: {lo, hi, at}``: a spec formula (or a number) for each endpoint."""
    lo, hi = raw.get("lo"), raw.get("hi")
    if not all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in (lo, hi)):
        site.error("an interval's 'derive' must be {lo, hi, at}: a spec formula or a number for each endpoint",
                   "derive")
        return None
    return (str(lo), str(hi)), None


def derived(problem: Any, spec: Any, values: dict[str, Any]) -> Any:
    """The endpoints the spec gives, exactly."""
    from grader.values import to_fraction
    return tuple(to_fraction(spec.evaluate(f, values)) for f in problem.derive.formula)


def same(problem: Any, reference: Any, value: Any, spec: Any) -> bool:
    ref = read_interval(reference)
    return (ref.lo, ref.hi) == tuple(value)


def describe(value: Any) -> str:
    if isinstance(value, tuple) and len(value) == 2 and not isinstance(value[0], (str, int)):
        return f"endpoints {_show(value[0], '-∞')} and {_show(value[1], '∞')}"
    try:
        return str(read_interval(value))
    except Unreadable:
        return str(value)
