"""Figures as texts state them: "1,048,576", "≈ 34.4B", "≈ 16.8 MB", "~1M parameters",
"2.36 million", "about 1.05M", "128 dims".

The text is read by :mod:`grader.units.quantities`, the reader the learners' answers use too (the
same marks, magnitudes, units and count nouns). A figure is exact unless it is marked
approximate (≈, ~, about, approx.) or uses a magnitude (K, M, B/G, T, thousand, million,
billion) or a decimal point; an approximate figure's tolerance is half a unit in its last
stated digit ("34.4B" = 34.4·10⁹ ± 0.05·10⁹; "16.8 MB" = 16.8·10⁶ ± 0.05·10⁶ bytes). Byte
units are SI (kB, MB, GB = 10³ⁿ) or IEC (KiB, MiB, GiB = 2¹⁰ⁿ), their factors from pint
(imported only for a figure with a unit). A bare "B" after a number is a billion here.

Numbers are read as :class:`fractions.Fraction`, never evaluated.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from grader.units.quantities import DATA, UNITS, TextError, read_literal, split_number, strip_approx

EXPECTED = "expected a number like 1,048,576 or ≈ 34.4B or ≈ 16.8 MB"


class FigureError(ValueError):
    """A figure that cannot be read."""


@dataclass(frozen=True)
class Figure:
    """A stated number: value and tolerance (exact: 0), in base units (bytes for byte units)."""

    text: str
    value: Fraction
    tolerance: Fraction
    unit: str = ""
    dimension: tuple[tuple[str, int], ...] | None = None    # what its unit measures (grader.claims.dimensions)

    @property
    def approx(self) -> bool:
        return self.tolerance != 0

    def matches(self, x: object) -> bool:
        """Whether the exact number ``x`` (int, Fraction or sympy Rational) is what this figure states."""
        return abs(to_fraction(x) - self.value) <= self.tolerance

    def describe(self) -> str:
        from .dimensions import shown_unit
        u = shown_unit(self.dimension)
        if not self.approx:
            return f"{self.text} (= {fmt(self.value)}{u}, exact)"
        return f"{self.text} (= {fmt(self.value)} ± {fmt(self.tolerance)}{u})"


def to_fraction(x: object) -> Fraction:
    from grader.values import to_fraction as exact
    try:
        return exact(x)
    except (ValueError, TypeError):
        raise FigureError(f"not an exact number: {x!r}") from None


def parse_figure(text: object) -> Figure:
    """Read a stated figure; raises FigureError saying what was expected."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise FigureError(EXPECTED)
    if isinstance(text, (int, float)):
        text = repr(text) if isinstance(text, int) else _plain(text)
    try:
        lit = read_literal(text, units=True, nouns=True, bare_b_is_byte=False, max_digits=MAX_DIGITS)
    except TextError as e:
        raise FigureError(str(e)) from None
    if lit is None:
        raise FigureError(_why_not(text))
    from .dimensions import figure_unit
    dim, f = figure_unit(lit.unit, lit.noun)
    unit = lit.unit if lit.unit is not None and UNITS[lit.unit][1] == DATA else ""
    approx = lit.approx or lit.scaled or lit.point
    tolerance = Fraction(10) ** lit.stated_place / 2 * f if approx else Fraction(0)
    return Figure(text.strip(), lit.value * f, tolerance, unit, dim)


def _plain(x: float) -> str:
    """A YAML float as the number it writes (125e12 -> 125000000000000; 0.5 -> 0.5)."""
    r = repr(x)
    return r[:-2] if r.endswith(".0") and "e" not in r else r


def _why_not(text: str) -> str:
    _, body = strip_approx(text)
    found = split_number(body)
    if found is None:
        return EXPECTED
    m, rest = found
    if re.match(r"[,_'][0-9]", rest):
        return f"misplaced thousands separator in {body.strip()!r}"
    return (f"unknown unit {rest!r}; expected one of bytes, kB, MB, GB, KiB, MiB, GiB, a magnitude "
            "(K, M, B, thousand, million, billion) or a word like FLOPs, parameters, dims")


def fmt(x: object) -> str:
    """An exact number written out: 274,877,906,944; 1/2; 16,777,216 (one too long to write
    out, past :data:`MAX_SHOWN` digits: ≈ 1.23 × 10^5000, its leading digits and size)."""
    x = to_fraction(x)
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > MAX_SHOWN * 3.32:
        return _huge(x)
    if x.denominator == 1:
        return f"{x.numerator:,}"
    if (x * 1000).denominator == 1:
        return f"{float(x):,.3f}".rstrip("0").rstrip(".")
    places = _decimal_places(x.denominator)
    if places is not None:          # a terminating decimal (0.00403, 2e-05): written out exactly
        return _decimal(x, places)
    return f"{x.numerator}/{x.denominator} (≈ {float(x):.6g})"


def fmt_real(x: float, digits: int = 6) -> str:
    """A measured decimal number (a float, such as an arithmetic intensity) as the evidence writes
    it: ``digits`` significant digits (every digit of its integer part), grouped, trailing zeros
    cut — 1056/2368 = 0.445946, 1234.5678 = 1,234.57, 295.0 = 295, 123456789.1 = 123,456,789 (the
    comparison uses the number itself, not this text)."""
    import math
    from decimal import Decimal
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return fmt(round(x))
    if abs(x) < 1e-6:
        return f"{x:.{digits}g}"
    d = Decimal(repr(float(x)))
    out = f"{d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1)):,f}"
    return out.rstrip("0").rstrip(".") if "." in out else out


def _decimal_places(den: int) -> int | None:
    """The decimal places of 1/den when it terminates within 15 places (den = 2^a·5^b), else None."""
    a = b = 0
    while den % 2 == 0:
        den, a = den // 2, a + 1
    while den % 5 == 0:
        den, b = den // 5, b + 1
    places = max(a, b)
    return places if den == 1 and places <= 15 else None


def _decimal(x: Fraction, places: int) -> str:
    scaled = abs(x) * 10 ** places
    whole, frac = divmod(int(scaled), 10 ** places)
    sign = "-" if x < 0 else ""
    return f"{sign}{whole:,}." + f"{frac:0{places}d}".rstrip("0")


MAX_DIGITS = 100        # of a stated figure: no text states more
MAX_SHOWN = 1000        # digits written out; a longer number is shown by its size


def _huge(x: Fraction) -> str:
    """≈ 1.23 × 10^5000 for a number too long to write out, without turning it all into text."""
    import math
    sign = "-" if x < 0 else ""
    x = abs(x)
    if x == 0:
        return "0"
    # log10 from the bit lengths, then exact integer arithmetic for the leading digits
    e = int((x.numerator.bit_length() - x.denominator.bit_length()) * math.log10(2))
    scaled = x / Fraction(10) ** (e - 2)
    while scaled >= 1000:
        scaled /= 10
        e += 1
    while scaled < 100:
        scaled *= 10
        e -= 1
    lead = int(scaled)
    return f"≈ {sign}{lead // 100}.{lead % 100:02d} × 10^{e:,}"
