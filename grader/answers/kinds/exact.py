"""Exact numbers, shared by the number and quantity kinds: references read exactly, a value
that is not rational compared by proof, and the notes and messages about precision."""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from grader.values import to_fraction

from .. import feedback as fb
from ..compare import ROUNDED, TOLERANCE
from ..model import AnswerSpec, Raw
from ..numbers import Reading, format_value, read_number

if TYPE_CHECKING:
    import sympy


def reading_of_reference(x: Raw) -> Reading:
    if isinstance(x, Fraction):
        return Reading(x, None, None, "")
    if hasattr(x, "p") and hasattr(x, "q"):          # a SymPy Rational/Integer
        return Reading(to_fraction(x), None, None, "")
    if isinstance(x, float):
        x = repr(x)
    elif getattr(x, "is_Float", False):                # a SymPy Float: its decimal text
        x = str(x)
    return read_number(x)


def exactly(expr: sympy.Expr, reference: Fraction, factor: Fraction = Fraction(1)) -> str:
    """Whether the SymPy number ``expr`` × ``factor`` is exactly ``reference``: equal, different
    or undecided, by :func:`grader.expr.equivalent` (exact, then error-bounded evaluation, then
    bounded SymPy)."""
    import sympy

    from grader.expr import equivalent
    from ..numbers import no_symbols
    target = sympy.Rational(reference.numerator, reference.denominator)
    scaled = expr * sympy.Rational(factor.numerator, factor.denominator)
    return equivalent(scaled, target, no_symbols()).verdict


def near(value: Fraction, reference: Fraction) -> bool:
    """Within a millionth of the reference: close enough that "not exact" is the news."""
    return abs(value - reference) <= abs(reference) / 10**6


def not_exact(reference: Fraction, expr: sympy.Expr, factor: Fraction, unit: str) -> str:
    """"Not exactly 1,048,576: ... differs from it by about 1.38 × 10⁻⁸⁷" (the difference from
    SymPy's error-bounded evaluation)."""
    import sympy

    from grader.expr.evaluation import enclosure, sign
    diff = expr * sympy.Rational(factor.numerator, factor.denominator) - sympy.Rational(reference.numerator,
                                                                                        reference.denominator)
    bounds = enclosure(diff, 1000) if sign(diff) is not None else None
    off = abs(bounds[0] + bounds[1]) / 2 if bounds else None
    shown = f"about {format_value(off, 3)}" if off else "a tiny amount"
    return (f"Not exactly {format_value(reference)}{unit}: the question asks for the exact value, and this "
            f"differs from it by {shown}.")


def accepted_note(v: str, r: Reading, ref: Fraction, spec: AnswerSpec, unit: str) -> str:
    if v == ROUNDED:
        assert r.sig_figs is not None       # a rounded answer states its figures
        return f"rounded to {fb.sig_figs_note(r.sig_figs)}; exactly {format_value(ref)}{unit}"
    if v == TOLERANCE:
        return f"within {spec.tolerance} of {format_value(ref)}{unit}"
    return ""


def rational(value: Fraction) -> Any:
    import sympy
    return sympy.Rational(value.numerator, value.denominator)


# ---------------------------------------------------------------- verification of a reference

def same(problem: Any, reference: Any, value: Any, spec: Any) -> bool:
    """The bank's reference is the spec's (or mha's) value, within the problem's relative tolerance."""
    ref, got = to_fraction(reference), to_fraction(value)
    tol = problem.tolerance if isinstance(problem.tolerance, (int, float)) and not isinstance(problem.tolerance, bool) else 0
    return abs(ref - got) <= abs(got) * to_fraction(tol)


def describe(value: Any) -> str:
    try:
        f = to_fraction(value)
        return f"{f.numerator:,}" if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
    except (ValueError, TypeError, ZeroDivisionError):
        return str(value)
