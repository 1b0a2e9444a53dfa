"""Compare a number read from an answer with a reference, the way a careful teacher would.

An answer is right when it is

1. exactly the reference (``1,048,576``, ``2^20``, ``1.048576e6``), or
2. within the problem's tolerance, if it has one, or
3. the reference correctly rounded at the precision the answer states, when that precision
   is at least the problem's minimum number of significant figures: ``16.8 MB`` for
   16,777,216 bytes (3 s.f., |16.8 − 16.777216| ≤ 0.05) but not ``16.7 MB``, and not
   ``17 MB`` (2 s.f. are too few; the verdict says so).

The minimum (:func:`min_sig_figs`) is the problem's ``sig_figs``; without one, an exact
integer reference of a number problem wants the exact value (or a tolerance), and any other
reference (a quantity, a non-integer) accepts 3 significant figures.
"""
from __future__ import annotations

from fractions import Fraction

from .model import AnswerSpec, Tolerance

DEFAULT_SIG_FIGS = 3

EQUAL, TOLERANCE, ROUNDED, COARSE = "equal", "tolerance", "rounded", "coarse"
ACCEPTED = (EQUAL, TOLERANCE, ROUNDED)


def min_sig_figs(spec: AnswerSpec, reference: Fraction) -> int | None:
    """The fewest significant figures a rounded answer may state (None: exact answers only)."""
    if spec.sig_figs is not None:
        return spec.sig_figs
    if spec.tolerance is not None:
        return None
    if spec.kind == "number" and reference.denominator == 1:
        return None
    return DEFAULT_SIG_FIGS


def verdict(value: Fraction, sig: int | None, half_unit: Fraction | None, reference: Fraction,
            tolerance: Tolerance | None, min_sig: int | None, error: Fraction | None = None) -> str | None:
    """How ``value`` (stating ``sig`` significant figures, ±``half_unit``) stands to ``reference``:
    equal, tolerance, rounded (all accepted), coarse (rounded at too few figures) or None.
    ``error``: ``value`` approximates a number that is not rational, to within ``error``: it is
    never equal here (only :func:`grader.expr.equivalent` may prove it so), and a tolerance
    holds only with that margin."""
    if error is not None:
        if tolerance is not None and tolerance.allows(value, reference, error):
            return TOLERANCE
        return None
    if value == reference:
        return EQUAL
    if tolerance is not None and tolerance.allows(value, reference):
        return TOLERANCE
    if half_unit is not None and abs(value - reference) <= half_unit:
        if min_sig is not None and sig is not None and sig >= min_sig:
            return ROUNDED
        return COARSE
    return None


def accepted(value: Fraction, sig: int | None, half_unit: Fraction | None, reference: Fraction,
             tolerance: Tolerance | None, min_sig: int | None, error: Fraction | None = None) -> bool:
    """Whether :func:`verdict` accepts (the same rule, without telling coarse from wrong)."""
    if error is not None:
        return tolerance is not None and tolerance.allows(value, reference, error)
    if value == reference:
        return True
    if tolerance is not None and tolerance.allows(value, reference):
        return True
    if min_sig is None or sig is None or sig < min_sig or half_unit is None:
        return False
    return bool(abs(value - reference) <= half_unit)


def ratio(value: Fraction, reference: Fraction) -> Fraction | None:
    """value / reference (None for a zero reference)."""
    return None if reference == 0 else value / reference
