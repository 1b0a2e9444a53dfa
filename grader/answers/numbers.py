"""Read a number as learners write it, keeping the precision it states.

Literals are read by :mod:`grader.units.quantities`, the reader the spec's stated figures use too
(so ``~68.7B``, ``≈ 343.6B``, ``about 1.05M``, ``2.36 million``, ``128 dims`` read alike on
both sides); arithmetic goes through :mod:`grader.expr`. An approximation mark in front
(``≈``, ``~``, ``about``, ``approx.``) is allowed and changes nothing: the precision an answer
states is in its digits.

Forms (all exact: :class:`fractions.Fraction`, never a float for the value):

- integers and decimals: ``64``, ``-3``, ``0.125``, ``.5``, ``16.``
- thousands separators, groups of three: ``1,048,576``, ``1 048 576`` (also no-break and
  thin spaces), ``1_048_576``, ``1'048'576``
- exponents: ``1.05e6``, ``1.05E+06``, ``1.05×10^6``, ``1.05 x 10**6``, ``1.05*10^(6)``,
  ``1.05·10⁶``
- scale words and suffixes (decimal, short scale): ``k``/``K``/``thousand`` 10³,
  ``M``/``million`` 10⁶, ``B``/``bn``/``G``/``billion`` 10⁹, ``T``/``trillion`` 10¹²,
  ``quadrillion`` 10¹⁵, ``%`` 10⁻². Binary sizes are units (KiB, MiB): see
  :mod:`grader.answers.units`. Lower-case ``m`` and ``b`` are refused as ambiguous.
- a trailing count noun is allowed: ``275 GFLOPs``, ``1,048,576 parameters``, ``128 dims``
  (:data:`grader.units.quantities.COUNT_NOUNS`)
- arithmetic: ``1024/16``, ``2^20``, ``4*512^2``, ``sqrt(4096)`` — through
  :func:`grader.expr.parse` (never eval), and exact.

A literal states its precision: ``16.8`` is 3 significant figures, its last digit in the
tenths; ``275000000000`` and ``2.75e11`` are 3 significant figures; ``16.0`` is 3. An
integer's trailing zeros are not counted. Arithmetic is exact (no stated precision).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

from .guard import MAX_EXPONENT, MAX_INT_DIGITS, answer_limits, float_size, number_size, shorten
from .model import Unreadable

from grader.units.quantities import COUNT_NOUNS, DASHES, TextError, read_literal, strip_approx

if TYPE_CHECKING:
    import sympy

    from grader.expr import SymbolTable

_PLAIN_INT = re.compile(r"[+-]?[0-9]{1,400}")
_RATIO = re.compile(r"([+-]?[0-9]+)\s*/\s*([0-9]+)")
NOUNS = COUNT_NOUNS


@dataclass(frozen=True)
class NumberReading:
    """A number as read: its exact ``value``; the precision it states, as ``sig_figs`` and
    ``place`` (its last stated digit is worth 10**place), both None when exact; ``read_as``.

    ``expr`` is set for arithmetic whose value is not a rational number (``2^20 + exp(-200)``,
    ``sqrt(2)``): the SymPy value itself. ``value`` is then an approximation, off by at most
    :attr:`error`; such a reading is never *equal* to a number unless the exact paths prove it
    (:func:`grader.expr.equivalent`), and tolerances apply to it with that margin."""

    value: Fraction
    sig_figs: int | None
    place: int | None
    read_as: str
    expr: object = None

    @property
    def half_unit(self) -> Fraction | None:
        """Half of the last stated digit: how far a correctly rounded answer may stand off."""
        return None if self.place is None else Fraction(10) ** self.place / 2

    @property
    def exact(self) -> bool:
        return self.expr is None

    @property
    def error(self) -> Fraction | None:
        """How far :attr:`value` may be from the number (None: it is the number)."""
        if self.expr is None:
            return None
        return Fraction(abs(self.value), 10**APPROX_DIGITS) + Fraction(1, 10**(MAX_INT_DIGITS + APPROX_DIGITS))


APPROX_DIGITS = 25          # a value that is not rational is known to 30 digits; 25 are counted on

Reading = NumberReading     # the old name (grader.api.Reading is validate_answer's result)


def read_number(raw: object, *, nouns: bool = True) -> NumberReading:
    """Read an int, float or text as a number; :class:`Unreadable` says why not."""
    if isinstance(raw, bool):
        raise Unreadable("true/false is not a number")
    if isinstance(raw, int):
        return _from_int(raw)
    if isinstance(raw, float):
        text = repr(raw)
        return read_number(text[:-2] if text.endswith(".0") else text)
    if isinstance(raw, Fraction):
        return NumberReading(raw, None, None, format_value(raw))
    if not isinstance(raw, str):
        raise Unreadable(f"expected a number, not {type(raw).__name__}")
    approx, text = strip_approx(raw.translate(DASHES))
    if approx and not text:
        raise Unreadable("a number is expected after the approximation mark")
    if _PLAIN_INT.fullmatch(text):
        return _from_int(int(text))
    return _read_text(text, nouns)


def _from_int(n: int) -> NumberReading:
    digits = str(abs(n))
    if len(digits) > MAX_INT_DIGITS:
        raise Unreadable(f"number too large (more than {MAX_INT_DIGITS} digits)")
    stripped = digits.rstrip("0") or "0"
    return NumberReading(Fraction(n), len(stripped), len(digits) - len(stripped), format_value(Fraction(n)))


def _read_text(text: str, nouns: bool) -> NumberReading:
    try:
        lit = read_literal(text, nouns=nouns, max_digits=MAX_INT_DIGITS, max_exponent=MAX_EXPONENT)
    except TextError as e:
        raise Unreadable(f"{e}: {shorten(text, 30)!r}" if "too large" in str(e) else str(e)) from None
    if lit is not None:
        return NumberReading(lit.value, lit.sig_figs, lit.place, format_value(lit.value, lit.sig_figs))
    m = _RATIO.fullmatch(text)
    if m and int(m.group(2)) != 0 and len(text) < 60:
        value = Fraction(int(m.group(1)), int(m.group(2)))
        return NumberReading(value, None, None, f"{m.group(1)}/{m.group(2)} = {format_value(value)}")
    if _looks_decimal_comma(text):
        raise Unreadable(f"{shorten(text, 30)!r}: use a point for decimals and commas only between "
                         "groups of three digits (1,048,576 or 16.8)")
    unit = _trailing_unit(text)
    if unit:
        raise Unreadable(f"the question asks for a plain number, without a unit ({unit!r})")
    if nouns:                   # 2^20 parameters, as 1,048,576 parameters (a last word of its own)
        head, _, last = text.rpartition(" ")
        if head.strip() and last.lower() in NOUNS:
            text = head.strip()
    return read_arithmetic(text)


def _trailing_unit(text: str) -> str | None:
    """The unit of a number with a unit (``68.7 GB``, ``~16 MiB``): a plain number was asked."""
    try:
        lit = read_literal(text, units=True, nouns=False)
    except TextError:
        return None
    return lit.unit if lit is not None and lit.unit not in (None, *NOUNS) else None


def _looks_decimal_comma(text: str) -> bool:
    return re.fullmatch(r"[+-]?[0-9]+,[0-9]+", text) is not None


def read_arithmetic(text: str) -> NumberReading:
    """Arithmetic on numbers (``2^20``, ``4*512^2``, ``1024/16``) through :mod:`grader.expr`."""
    try:
        from grader.expr import ExprError, parse
    except ImportError:         # the parser is not there: only literals can be read
        unit = re.search(r"[A-Za-z]+$", text)
        if unit and _is_unit(unit.group(0)):
            raise Unreadable(f"the question asks for a plain number, without a unit ({unit.group(0)!r})") from None
        raise Unreadable(f"cannot read {shorten(text, 40)!r} as a number") from None
    try:
        parsed = parse(text, no_symbols(), limits=answer_limits())
    except ExprError as e:
        unit = re.search(r"[A-Za-z]+$", text)
        if unit and _is_unit(unit.group(0)):
            raise Unreadable(f"the question asks for a plain number, without a unit ({unit.group(0)!r})") from None
        where = f" (column {e.location.column})" if e.location is not None and e.location.column else ""
        raise Unreadable(f"cannot read {shorten(text, 40)!r} as a number: {e.message}{where}") from None
    value = exact_number(parsed.expr)
    if value is not None:
        why = number_size(value)
        if why:
            raise Unreadable(f"{why}: {shorten(text, 40)!r}")
        return NumberReading(value, None, None, f"{parsed.read_as} = {format_value(value)}"
                       if parsed.read_as.replace(",", "") != format_value(value).replace(",", "")
                       else format_value(value))
    approx = approximate(parsed.expr)
    if approx is None:
        raise Unreadable(f"{shorten(text, 40)!r} is not a finite real number")
    return NumberReading(approx, None, None, f"{parsed.read_as} ≈ {format_value(approx, 6)}", parsed.expr)


def _is_unit(word: str) -> bool:
    from grader.units.quantities import UNITS
    return word in UNITS and word not in NOUNS


@lru_cache(maxsize=1)
def no_symbols() -> SymbolTable:
    from grader.expr import SymbolTable
    return SymbolTable.build(symbols={})


def exact_number(expr: sympy.Basic) -> Fraction | None:
    """A SymPy rational number as a Fraction; None for anything else (see :func:`approximate`)."""
    if getattr(expr, "free_symbols", None):
        return None
    if getattr(expr, "is_Rational", False):
        return Fraction(int(expr.p), int(expr.q))
    return None


def approximate(expr: sympy.Basic) -> Fraction | None:
    """A finite real SymPy number that is not rational, to 30 significant digits (SymPy's
    error-bounded evalf, strict: digits it cannot guarantee are not given), as a Fraction; None
    for anything that is not a finite real number. Unreadable when it lies outside the answer
    rule's range (:func:`grader.answers.guard.float_size`)."""
    if getattr(expr, "free_symbols", None) or not getattr(expr, "is_number", False):
        return None
    if expr.is_real is False or expr.is_finite is False:
        return None
    from sympy.core.evalf import PrecisionExhausted
    try:
        approx = expr.evalf(30, strict=True, maxn=1000)
    except PrecisionExhausted:          # indistinguishable from 0 at the digits SymPy may use
        return Fraction(0)
    except (TypeError, ValueError, ArithmeticError, RecursionError):
        return None
    if not approx.is_Float or not approx.is_finite:
        return None
    why = float_size(approx)
    if why:
        raise Unreadable(why)
    sign, mantissa, exponent, _ = approx._mpf_          # the value is (-1)^sign · mantissa · 2^exponent
    value = Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
    return -value if sign else value


_SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def format_value(value: Fraction, sig: int | None = None) -> str:
    """1,048,576; 0.125; 16,800,000; 1/3; big or tiny ones as 2.75 × 10¹¹."""
    if value.denominator == 1:
        n = value.numerator
        if abs(n) < 10**24:
            return f"{n:,}"
        return _scientific(value, sig)
    d = value.denominator
    twos = fives = 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d == 1 and max(twos, fives) <= 12:
        places = max(twos, fives)
        text = f"{value.numerator * 10**places // value.denominator}"
        neg = text.startswith("-")
        text = text.lstrip("-").rjust(places + 1, "0")
        whole, frac = text[:-places], text[-places:]
        return ("-" if neg else "") + f"{int(whole):,}.{frac}"
    if abs(value) < 10**24 and abs(value.numerator) < 10**12 and value.denominator < 10**12:
        return f"{value.numerator}/{value.denominator}"
    return _scientific(value, sig)


def _scientific(value: Fraction, sig: int | None) -> str:
    sig = min(sig or 6, 30)
    text = f"{float(value):.{sig - 1}e}" if abs(value) < Fraction(10) ** 300 else _big_sci(value, sig)
    mant, exp = text.split("e")
    return f"{mant} × 10{str(int(exp)).translate(_SUP)}"


def _big_sci(value: Fraction, sig: int) -> str:
    n = abs(value.numerator // value.denominator)
    s = str(n)
    mant = s[0] + ("." + s[1:sig] if sig > 1 else "")
    return ("-" if value < 0 else "") + f"{mant}e{len(s) - 1}"
