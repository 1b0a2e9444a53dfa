"""Figures as texts state them: "1,048,576", "≈ 34.4B", "≈ 16.8 MB", "~1M parameters".

A figure is exact unless it is marked approximate (≈, ~, "about") or uses a scale
suffix (K, M, B/G, T) or a decimal point; an approximate figure's tolerance is half a
unit in its last stated digit ("34.4B" = 34.4·10⁹ ± 0.05·10⁹; "16.8 MB" = 16.8·10⁶ ±
0.05·10⁶ bytes). Byte units are SI (kB, MB, GB = 10³ⁿ) or IEC (KiB, MiB, GiB = 2¹⁰ⁿ).

Numbers are parsed with :class:`fractions.Fraction`, never evaluated. (A small table, not
pint: the whole of ``check-spec`` must stay within 1.5× a bare ``import torch``.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

SCALES = {"": 1, "K": 10**3, "k": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
UNITS = {"bytes": 1, "byte": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
WORDS = {"", "FLOPs", "FLOP", "flops", "parameters", "params", "heads", "attention matrices", "matrices"}
_FIGURE = re.compile(
    r"^\s*(?P<approx>≈|~|about\s+)?\s*(?P<num>[0-9][0-9,]*(?:\.[0-9]+)?)\s*(?P<scale>[KkMBGT]?)(?![A-Za-z])"
    r"(?:\s*(?P<unit>[A-Za-z]+(?:\s+[a-z]+)?))?\s*$")


class FigureError(ValueError):
    """A figure that cannot be read."""


@dataclass(frozen=True)
class Figure:
    """A stated number: value and tolerance (exact: 0), in base units (bytes for byte units)."""

    text: str
    value: Fraction
    tolerance: Fraction
    unit: str = ""

    @property
    def approx(self) -> bool:
        return self.tolerance != 0

    def matches(self, x) -> bool:
        """Whether the exact number ``x`` (int, Fraction or sympy Rational) is what this figure states."""
        x = to_fraction(x)
        return abs(x - self.value) <= self.tolerance

    def describe(self) -> str:
        if not self.approx:
            return f"{self.text} (= {fmt(self.value)}, exact)"
        return f"{self.text} (= {fmt(self.value)} ± {fmt(self.tolerance)})"


def to_fraction(x) -> Fraction:
    from grader.values import to_fraction as exact
    try:
        return exact(x)
    except (ValueError, TypeError):
        raise FigureError(f"not an exact number: {x!r}") from None


def parse_figure(text) -> Figure:
    """Read a stated figure; raises FigureError saying what was expected."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise FigureError("expected a number like 1,048,576 or ≈ 34.4B or ≈ 16.8 MB")
    if isinstance(text, (int, float)):
        text = repr(text)
    m = _FIGURE.match(text)
    if not m:
        raise FigureError("expected a number like 1,048,576 or ≈ 34.4B or ≈ 16.8 MB")
    num, scale, unit = m.group("num"), m.group("scale"), m.group("unit") or ""
    if "," in num and not re.fullmatch(r"[0-9]{1,3}(,[0-9]{3})+(\.[0-9]+)?", num):
        raise FigureError(f"misplaced thousands separator in {num!r}")
    if unit and unit not in UNITS and unit not in WORDS:
        raise FigureError(f"unknown unit {unit!r}; expected one of {', '.join(UNITS)} or a word like FLOPs")
    digits = num.replace(",", "")
    if len(digits) > MAX_DIGITS:
        raise FigureError(f"a stated figure has at most {MAX_DIGITS} digits, not {len(digits):,}")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    factor = SCALES[scale] * UNITS.get(unit, 1)
    value = Fraction(digits) * factor
    approx = bool(m.group("approx")) or bool(scale) or decimals > 0
    tolerance = Fraction(1, 2) * Fraction(1, 10**decimals) * factor if approx else Fraction(0)
    return Figure(text.strip(), value, tolerance, unit if unit in UNITS else "")


def fmt(x) -> str:
    """An exact number written out: 274,877,906,944; 1/2; 16,777,216 (one too long to write
    out, past :data:`MAX_SHOWN` digits: ≈ 1.23 × 10^5000, its leading digits and size)."""
    x = to_fraction(x)
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > MAX_SHOWN * 3.32:
        return _huge(x)
    if x.denominator == 1:
        return f"{x.numerator:,}"
    if (x * 1000).denominator == 1:
        return f"{float(x):,.3f}".rstrip("0").rstrip(".")
    return f"{x.numerator}/{x.denominator} (≈ {float(x):.6g})"


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
