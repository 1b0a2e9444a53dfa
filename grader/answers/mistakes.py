"""Common mistakes, derived from the reference, each with a message that teaches.

The author's :class:`~grader.answers.model.Mistake` entries are tried first (they know the
problem); then the mistakes derived from the spec (:mod:`grader.answers.derive`: a term
missing, biases added, d instead of d_k, ...); then these, from the kind of answer and what
it measures (``AnswerSpec.measures``), so that a message never names a mistake that cannot
happen there:

- any count (or a problem whose measure is not known): twice or half the value, "is
  something counted twice?"; four times or a quarter only when the measure is not known;
- FLOPs: half is multiply-adds instead of FLOPs (1 multiply-add = 2 FLOPs);
- bytes: a quarter is elements instead of float32 bytes, half float16, twice float64, eight
  times bits; a quantity given in bits that is an eighth: bits and bytes differ by 8; a
  quantity given in MB (or MiB) worth the reference × 10⁶/2²⁰ (or its inverse): MB and MiB;
- a dimension (d_k, a width) and a shape: no factor at all (d instead of d_k comes from the
  spec); shapes: the transpose or another order of the same axes, an axis missing, an axis
  too many, the right number of elements in another layout;
- expressions: the same factors as numbers, said of a formula; relations: the inequality
  reversed, or strict against non-strict.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .numbers import format_value
from .shapes import format_shape


@dataclass(frozen=True)
class Derived:
    """A variant of the reference: a factor (numbers, expressions) and what to say."""

    factor: Fraction
    message: str


def _factors(noun: str, its: str) -> dict[str | None, tuple[Derived, ...]]:
    """The factor variants per measure; ``noun`` is "answer"/"formula", ``its`` "value"/"one"."""
    half, double = f"Your {noun} is half the expected {its}", f"Your {noun} is twice the expected {its}"
    quarter, four = f"Your {noun} is a quarter of the expected {its}", f"Your {noun} is four times the expected {its}"
    plain = (Derived(Fraction(1, 2), f"{half}: is something counted once that happens twice?"),
             Derived(Fraction(2), f"{double}: is something counted twice?"))
    return {
        None: plain + (Derived(Fraction(1, 4), f"{quarter}: is something counted once that happens four times?"),
                       Derived(Fraction(4), f"{four}: is something counted four times?")),
        "flops": (Derived(Fraction(1, 2), f"{half}: did you count multiply-adds instead of FLOPs "
                                          "(1 multiply-add = 2 FLOPs)?"),
                  Derived(Fraction(2), f"{double}: is something counted twice? A multiply-add is 2 FLOPs, not 4.")),
        "bytes": (Derived(Fraction(1, 4), f"{quarter}: did you count elements instead of bytes? A float32 takes "
                                          "4 bytes."),
                  Derived(Fraction(1, 2), f"{half}: 2 bytes per element is float16 or bfloat16; a float32 takes 4."),
                  Derived(Fraction(2), f"{double}: 8 bytes per element is float64; a float32 takes 4."),
                  Derived(Fraction(8), f"Your {noun} is eight times the expected {its}: did you count bits instead of "
                                       "bytes (1 byte = 8 bits)?")),
        "params": plain,
        "count": plain,
        "dim": (),
        "shape": (),
    }


NUMBER_FACTORS = _factors("answer", "value")
EXPRESSION_FACTORS = _factors("formula", "one")
BITS = ("Your answer is an eighth of the expected value: bits and bytes differ by 8 (1 byte = 8 bits); "
        "the question asks for bytes.")

_SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_PREFIX = {1: ("k", "Ki"), 2: ("M", "Mi"), 3: ("G", "Gi"), 4: ("T", "Ti"), 5: ("P", "Pi")}


def binary_decimal(k: int) -> tuple[Derived, Derived]:
    """The 10³ᵏ-against-2¹⁰ᵏ variants of level ``k`` (1: kB/KiB, 2: MB/MiB, ...): for a quantity
    given in that level's units only."""
    dec, binary = f"10{str(3 * k).translate(_SUP)}", f"2{str(10 * k).translate(_SUP)}"
    si, iec = _PREFIX[k]
    smaller = Derived(Fraction(10 ** (3 * k), 2 ** (10 * k)),
                      f"Your answer is {dec}/{binary} of the expected value: {si} ({dec}) and {iec} ({binary}) "
                      f"were confused — {si}B and {iec}B differ.")
    larger = Derived(Fraction(2 ** (10 * k), 10 ** (3 * k)),
                     f"Your answer is {binary}/{dec} times the expected value: {iec} ({binary}) and {si} ({dec}) "
                     f"were confused — {iec}B and {si}B differ.")
    return smaller, larger


def unit_confusion(shown: str, value: Fraction, answer_unit: str, reference: Fraction, ref_unit: str) -> str | None:
    """The MB/MiB message for a quantity given in ``answer_unit`` (``shown``, worth ``value``
    in ``ref_unit``) whose number is the reference counted in the other kind of unit."""
    from grader.units.quantities import factor

    from .units import BINARY_OF, DECIMAL_OF, plural
    other = BINARY_OF.get(answer_unit) or DECIMAL_OF.get(answer_unit)
    if other is None:
        return None
    f_ans, f_other = factor(answer_unit, ref_unit), factor(other, ref_unit)
    if f_ans is None or f_other is None:
        return None
    return (f"{shown} is {format_value(value)} {plural(ref_unit)}; the expected {format_value(reference)} "
            f"{plural(ref_unit)} is {format_value(reference / f_other)} {plural(other)} "
            f"({format_value(f_other)} {plural(ref_unit)} each), or about "
            f"{format_value(round_sig(reference / f_ans, 3))} {plural(answer_unit)} "
            f"({format_value(f_ans)} {plural(ref_unit)} each): {plural(answer_unit)} and {plural(other)} differ.")


def round_sig(x: Fraction, sig: int) -> Fraction:
    if x == 0:
        return x
    digits = len(str(abs(x.numerator) // abs(x.denominator))) if abs(x) >= 1 else 0
    if abs(x) < 1:
        places = sig
        probe = abs(x)
        while probe < Fraction(1, 10):
            probe *= 10
            places += 1
    else:
        places = sig - digits
    scale = Fraction(10) ** places
    return Fraction(round(x * scale)) / scale


def shape_mistake(answer: tuple[int, ...], reference: tuple[int, ...]) -> tuple[str, bool] | None:
    """What a wrong shape is, compared with the reference: (message, specific), or None.
    ``specific`` is False for a bare description (an axis off, the number of axes), which
    the author's own feedback outranks."""
    a, r = tuple(answer), tuple(reference)
    shown = format_shape(a)
    if len(a) == len(r) and sorted(a) == sorted(r) and a != r:
        if len(a) == 2:
            return (f"{shown} is the transpose of the expected shape: check which axis is rows and which "
                    "is columns.", True)
        return f"{shown} has the right axes in the wrong order: check which axis comes first.", True
    if len(a) == len(r) - 1 and any(r[:i] + r[i + 1:] == a for i in range(len(r))):
        return f"{shown} has one axis too few ({len(a)} instead of {len(r)}): an axis is missing.", True
    if len(a) == len(r) + 1:
        for i in range(len(a)):
            if a[:i] + a[i + 1:] == r:
                return (f"{shown} has one axis too many: the extra axis of length {a[i]} does not belong "
                        "(are heads or a batch stacked?).", True)
    if len(a) == len(r) and _product(a) == _product(r):
        return f"{shown} has the right number of elements ({_product(a):,}) but another layout.", True
    if _product(a) == _product(r):
        return (f"{shown} has the right number of elements ({_product(a):,}) but {len(a)} "
                f"ax{'is' if len(a) == 1 else 'es'} instead of {len(r)}: axes merged or split?", True)
    if len(a) == len(r):
        off = [i for i in range(len(r)) if a[i] != r[i]]
        if len(off) == 1:
            return f"{shown} is right except axis {off[0] + 1} (of {len(r)}).", False
        return None
    return f"{shown} has {len(a)} ax{'is' if len(a) == 1 else 'es'}; the expected shape has {len(r)}.", False


def _product(shape: tuple[int, ...]) -> int:
    p = 1
    for n in shape:
        p *= n
    return p
