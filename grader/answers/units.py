"""Read a quantity with a unit: ``16777216 bytes``, ``16 MiB``, ``16.777216 MB``, ``2^24 B``,
``16384 KiB``, ``16.8 million bytes``.

The number is read by :mod:`grader.answers.numbers` (its stated precision kept); the unit is
the last word and must be one of :data:`UNITS`, a whitelist of spellings mapped to pint unit
names — the learner's text never reaches pint's parser. Pint (one registry per process,
created on first use from the definitions in ``grader/units/units.txt``; the spellings and the
registry are :mod:`grader.units.quantities`', shared with the spec's figures) gives the conversion factors and
says which units are compatible.

Bytes: ``KB``/``kB``/``MB``/``GB``/``TB`` are SI, 10³ᵏ bytes; ``KiB``/``MiB``/``GiB``/``TiB``
are binary, 2¹⁰ᵏ bytes. ``B`` is a byte here (in a plain number it is a billion). Factors
are exact fractions (a float factor from pint is read back through its decimal text).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from grader.units.quantities import UNITS, factor, strip_approx

from .guard import shorten
from .model import Unreadable
from .numbers import NumberReading, format_value, read_number


# A decimal unit and its binary counterpart (the MB/MiB confusion).
BINARY_OF = {f"{w}byte": f"{b}byte" for w, b in (("kilo", "kibi"), ("mega", "mebi"), ("giga", "gibi"),
                                                   ("tera", "tebi"), ("peta", "pebi"))}
DECIMAL_OF = {v: k for k, v in BINARY_OF.items()}
SYMBOL = {"byte": "B", "bit": "bit", **{f"{w}byte": f"{s}B" for s, w in (("k", "kilo"), ("M", "mega"), ("G", "giga"),
                                                                       ("T", "tera"), ("P", "peta"))},
          **{f"{b}byte": f"{s}iB" for s, b in (("K", "kibi"), ("M", "mebi"), ("G", "gibi"), ("T", "tebi"),
                                               ("P", "pebi"))}}


def plural(unit: str, value: Fraction | None = None) -> str:
    """byte -> bytes (but 1 byte), mebibyte -> MiB; others as named; a rate's numerator only:
    token / second -> tokens/second, flop / byte -> flops/byte."""
    if " / " in unit:
        top, _, per = unit.partition(" / ")
        return f"{plural(top, value)}/{SYMBOL.get(per, per) if per not in ('byte', 'bit') else per}"
    if unit in SYMBOL and unit not in ("byte", "bit"):
        return SYMBOL[unit]
    return unit if value == 1 else unit + "s"


def kind_of(unit: str) -> str:
    for pint_name, what in UNITS.values():
        if pint_name == unit:
            return what
    return "a quantity"


def split_unit(text: str) -> tuple[str, str]:
    """``("16.8", "MB")`` from ``"16.8 MB"`` (or ``"16.8MB."``): the trailing run of letters is
    the unit; found by walking back from the end (no regex backtracking on long input). A rate or
    ratio is one unit: ``("151", "tokens/s")``, ``("153", "FLOP/byte")``, ``("2,039", "GB/s")``
    (letters joined by ``/``; a ``/`` that does not stand between letters is left to the number)."""
    end = len(text.rstrip(" ."))
    start = end
    while start > 0 and (text[start - 1].isascii() and text[start - 1].isalpha() or text[start - 1] in "µμ"
                         or text[start - 1] == "/" and start < end and start > 1 and text[start - 2].isalpha()):
        start -= 1
    return text[:start].rstrip(), text[start:end]


@dataclass(frozen=True)
class QuantityReading:
    """A quantity as read: its number (with stated precision), its unit (pint name, or None
    when none was given), and its value in the reference unit (None when incompatible)."""

    number: NumberReading
    unit: str | None
    value: Fraction | None          # in the reference unit
    half_unit: Fraction | None      # stated precision, in the reference unit
    read_as: str
    factor: Fraction | None = None  # from the answer's unit to the reference unit

    @property
    def error(self) -> Fraction | None:
        """How far ``value`` may be off: a number that is not rational, approximated (None: exact)."""
        e = self.number.error
        return None if e is None or self.factor is None else e * self.factor


def read_quantity(raw: object, ref_unit: str) -> QuantityReading:
    """Read ``raw`` as a quantity to compare with one in ``ref_unit`` (a pint unit name)."""
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        number = read_number(raw)
        return QuantityReading(number, None, None, None, number.read_as)
    if not isinstance(raw, str):
        raise Unreadable(f"expected a quantity like '16 MiB', not {type(raw).__name__}")
    approx, text = strip_approx(raw)
    num, spelled = split_unit(text)
    if not spelled or not num:
        number = read_number(text, nouns=False)      # a bare number (or unreadable)
        return QuantityReading(number, None, None, None, number.read_as)
    if spelled not in UNITS:
        # maybe a scale word or an expression's tail (2 billion, 2^24): a bare number?
        try:
            number = read_number(text, nouns=False)
        except Unreadable:
            raise Unreadable(f"unknown unit {shorten(spelled, 20)!r}; use bytes, KB, KiB, MB, MiB, GB, GiB, "
                             "bits, or s, ms") from None
        return QuantityReading(number, None, None, None, number.read_as)
    unit = UNITS[spelled][0]
    number = read_number(num, nouns=False)
    f = factor(unit, ref_unit)
    shown = f"{number.read_as} {plural(unit, number.value)}"
    if f is None:
        return QuantityReading(number, unit, None, None, shown)
    value = number.value * f
    half = None if number.half_unit is None else number.half_unit * f
    if unit != ref_unit:
        shown += f" {'=' if number.exact else '≈'} {format_value(value)} {plural(ref_unit, value)}"
    return QuantityReading(number, unit, value, half, shown, f)
