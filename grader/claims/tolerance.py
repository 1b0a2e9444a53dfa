"""Tolerances an author states (``tolerance:`` on numeric, measure, config, compare and invariance checks).

    tolerance: 0.5M          absolute: a figure as texts write it (1000, 0.5M, 64 MiB)
    tolerance: "5%"          relative: a share of the claimed value (compare: of the right side)
    tolerance: digits        what the claimed figure's digits imply (the default: "65M" is 65M ± 0.5M)

A figure's own tolerance (:mod:`grader.claims.figures`) is replaced by the stated one; nothing is
evaluated: the text is read with :func:`grader.claims.figures.parse_figure` or as a percentage.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from .figures import Figure, FigureError, fmt, parse_figure, to_fraction

_PERCENT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*$")
MAX_PERCENT = 100


@dataclass(frozen=True)
class Tolerance:
    """``kind``: "absolute" (``value`` in the figure's units), "relative" (``value`` a fraction) or
    "digits" (the figure's own); ``text`` as the author wrote it."""

    kind: str
    value: Fraction
    text: str

    def allowed(self, reference: Any) -> Fraction:
        """The largest |difference| allowed around ``reference`` (an exact number)."""
        if self.kind == "relative":
            return abs(to_fraction(reference)) * self.value
        return self.value

    def describe(self) -> str:
        return f"stated tolerance {self.text}"


def parse_tolerance(v: Any) -> Tolerance:
    """A stated tolerance; FigureError saying what is expected."""
    if isinstance(v, str) and v.strip() == "digits":
        return Tolerance("digits", Fraction(0), "digits")
    if isinstance(v, str):
        m = _PERCENT.match(v)
        if m:
            share = Fraction(m.group(1)) / 100
            if share > MAX_PERCENT / 100:
                raise FigureError(f"a relative tolerance is at most {MAX_PERCENT}%")
            return Tolerance("relative", share, v.strip())
    try:
        f = parse_figure(v)
    except FigureError:
        raise FigureError("expected an absolute tolerance (1000, 0.5M, 64 MiB), a relative one (\"5%\") "
                          "or 'digits'") from None
    return Tolerance("absolute", f.value, f.text)


@dataclass(frozen=True)
class StatedFigure(Figure):
    """A claimed figure with the tolerance its author stated instead of its digits'."""

    stated: str = ""

    def describe(self) -> str:
        from .dimensions import shown_unit
        return f"{self.text} (= {fmt(self.value)} ± {fmt(self.tolerance)}{shown_unit(self.dimension)}, {self.stated})"


def with_tolerance(figure: Figure, tol: Tolerance | None) -> Figure:
    """``figure`` with the stated tolerance (unchanged when none is stated, or 'digits')."""
    if tol is None or tol.kind == "digits":
        return figure
    return StatedFigure(figure.text, figure.value, tol.allowed(figure.value), figure.unit,
                        dimension=figure.dimension, stated=tol.describe())


def close(a: Any, b: Any, tol: Tolerance | None) -> bool:
    """|a − b| within the tolerance (relative: of b); exact equality without one."""
    if tol is None or tol.kind == "digits" or not all(isinstance(x, (int, Fraction)) for x in (a, b)):
        return bool(a == b)
    return abs(to_fraction(a) - to_fraction(b)) <= tol.allowed(b)


__all__ = ["StatedFigure", "Tolerance", "close", "parse_tolerance", "replace", "with_tolerance"]
