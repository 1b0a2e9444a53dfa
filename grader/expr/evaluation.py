"""Error-bounded evaluation: whether a number SymPy builds (no symbols) is provably nonzero,
its sign, an enclosure of its value (interval arithmetic, mpmath's ``iv``, outward rounding)."""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping

import sympy

#: an interval of mpmath's interval context (``iv.mpf``: ends ``.a`` and ``.b``); mpmath is untyped
Interval = Any
#: a complex number of an mpmath context (``mp.mpc``)
Complex = Any

STRICT_DIGITS = 1000    # working precision SymPy may use to tell a value from 0 (answers' numbers: 400 digits)


def nonzero(v: sympy.Expr) -> bool:
    """Whether the number ``v`` (SymPy, no symbols) is provably not zero: exactly for a rational;
    otherwise by interval arithmetic (:func:`sign`). Anything it cannot bound is no proof: False."""
    if v.is_Rational:
        return bool(v != 0)
    return sign(v) is not None


def sign(v: sympy.Expr) -> int | None:
    """+1 or -1 when the real number ``v`` (SymPy, no symbols) is provably positive or negative,
    None when that cannot be shown (it may be 0, it is not real, or it holds something the
    intervals do not cover). The proof is interval arithmetic (mpmath's ``iv``, outward rounding)
    at about :data:`STRICT_DIGITS` digits, so a difference of 10⁻³⁰⁰ is told from 0; SymPy's own
    evalf is not used for this, since it can give 0 for log(1 + 10⁻³⁰⁰) even in strict mode."""
    if v.is_Rational:
        return 1 if v > 0 else -1 if v < 0 else None
    if getattr(v, "free_symbols", None) or not getattr(v, "is_number", False):
        return None
    for digits in (40, STRICT_DIGITS):       # most values are far from 0: 40 digits tell
        x = _enclosing(v, digits)
        if x is None:
            return None
        if x.a > 0 or x.b < 0:
            return 1 if x.a > 0 else -1
    return None


def enclosure(v: sympy.Expr, digits: int = 40) -> tuple[Fraction, Fraction] | None:
    """Exact bounds ``(low, high)`` (Fractions) of the real number ``v`` (SymPy, no symbols) from
    interval arithmetic at ``digits`` digits; None where the intervals do not cover it."""
    if v.is_Rational:
        f = Fraction(int(v.p), int(v.q))
        return f, f
    x = _enclosing(v, digits)
    if x is None:
        return None

    def exact(end: tuple[int, int, int, int]) -> Fraction:
        sign_, man, exp, _ = end
        f = Fraction(int(man)) * Fraction(2) ** int(exp)
        return -f if sign_ else f
    try:
        return exact(x._mpi_[0]), exact(x._mpi_[1])
    except (TypeError, ValueError, OverflowError):      # an infinite end
        return None


def _enclosing(v: sympy.Expr, digits: int) -> Interval | None:
    """The mpmath interval of ``v`` at ``digits`` digits, or None where interval arithmetic
    cannot enclose it (an operation it lacks, an overflow, too deep an expression)."""
    try:
        return _interval(v, _iv(digits))
    except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
        return None


@lru_cache(maxsize=4)
def _iv(digits: int) -> Any:
    """A private mpmath interval context at ``digits`` digits (mpmath's shared ``iv`` is left as
    it is)."""
    from mpmath.ctx_iv import MPIntervalContext
    ctx = MPIntervalContext()
    ctx.prec = int(digits * 3.33)
    return ctx


def _interval(e: sympy.Basic, iv: Any) -> Interval | None:
    """An interval (mpmath ``iv``) holding the value of the SymPy number ``e``, or None for what it
    does not cover: the parser's whitelist (sums, products, powers, sqrt, exp, log, abs, min,
    max, π and e) is."""
    if e.is_Rational:
        return iv.mpf(int(e.p)) / iv.mpf(int(e.q))
    if e is sympy.pi:
        return iv.pi
    if e is sympy.E:
        return iv.e
    parts = [_interval(a, iv) for a in e.args] if not e.is_Atom else []
    args: list[Interval] = [a for a in parts if a is not None]
    if len(args) != len(parts):
        return None
    if e.is_Add:
        total = args[0]
        for a in args[1:]:
            total = total + a
        return total
    if e.is_Mul:
        product = args[0]
        for a in args[1:]:
            product = product * a
        return product
    if e.is_Pow:
        base, exponent = args
        if e.exp.is_Integer:
            return base ** int(e.exp)
        if base.a > 0:
            return iv.exp(exponent * iv.log(base))
        return None
    if isinstance(e, sympy.exp):
        return iv.exp(args[0])
    if isinstance(e, sympy.log) and len(args) == 1:
        return iv.log(args[0]) if args[0].a > 0 else None
    if isinstance(e, sympy.Abs):
        x = args[0]
        if x.a >= 0:
            return x
        if x.b <= 0:
            return -x
        return iv.mpf([0, max(-x.a, x.b)])
    if isinstance(e, (sympy.Min, sympy.Max)):
        pick = min if isinstance(e, sympy.Min) else max
        return iv.mpf([pick(a.a for a in args), pick(a.b for a in args)])
    return None


# -- values that are not real ---------------------------------------------------------------
# SymPy's min and max compare real numbers only: built at a point where an argument is not real
# (√(d - 10⁴⁰) at d = 5), they raise instead of giving a value. There the expression has no
# value: :data:`NOT_REAL` says so, as :func:`value_at` gives it.

class _NotReal:
    """The value of an expression at a point where it is not a real number (a min or max of a
    value that is not real: it has none); never equal to a real number."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_REAL"

    def __reduce__(self) -> str:
        return "NOT_REAL"


NOT_REAL = _NotReal()

REAL_TOLERANCE = 1e-12      # an imaginary part above this, relative to the value, is not rounding


def not_real(v: sympy.Expr | _NotReal) -> bool:
    """Whether the number ``v`` (SymPy, no symbols) is clearly not real: its imaginary part,
    evaluated to 30 digits, exceeds :data:`REAL_TOLERANCE` of its size (the tolerance
    sampling uses to tell two values apart)."""
    if isinstance(v, _NotReal):
        return True
    if v.is_Rational or getattr(v, "free_symbols", None) or not getattr(v, "is_number", False):
        return False
    if v.is_extended_real is False and v.is_finite:
        return True
    try:
        z = complex(sympy.N(v, 30))
    except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
        return False
    return abs(z.imag) > REAL_TOLERANCE * (1 + abs(z.real))


def value_at(e: sympy.Basic, point: Mapping[sympy.Symbol, sympy.Expr]) -> sympy.Expr | _NotReal | None:
    """``e`` with the symbols set to ``point``'s values: a SymPy number (exact where SymPy keeps
    it so), :data:`NOT_REAL` where a min or max there has an argument that is clearly not real
    (:func:`not_real`), or None where it cannot be told. A min or max SymPy refuses to build at the
    point (it compares real numbers only) is evaluated here, to 30 digits."""
    try:
        return e.xreplace(point)
    except (ValueError, TypeError):
        pass
    try:
        z = _numeric(e, point, _mp(30))
    except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
        return None
    if z is None or isinstance(z, _NotReal):
        return z
    real, imag = sympy.Float._new(z.real._mpf_, 100), sympy.Float._new(z.imag._mpf_, 100)
    return real if imag == 0 else real + sympy.I * imag


@lru_cache(maxsize=2)
def _mp(digits: int) -> Any:
    """A private mpmath context at ``digits`` digits (mpmath's shared ``mp`` is left as it is)."""
    import mpmath
    ctx = mpmath.MPContext()
    ctx.dps = digits + 10
    return ctx


def _numeric(e: sympy.Basic, point: Mapping[sympy.Symbol, sympy.Expr], mp: Any) -> Complex | _NotReal | None:
    """The complex value (mpmath ``mpc``) of ``e`` at ``point``, the parser's whitelist only (sums,
    products, powers, sqrt, exp, log, abs, min, max, π, e); :data:`NOT_REAL` for a min or max of
    a value that is not real, and wherever such a value is used; None for what it does not cover
    (log of 0 included)."""
    if e in point:
        e = point[e]
    if e.is_Rational:
        return mp.mpc(mp.mpf(int(e.p)) / int(e.q))
    if e.is_Float:
        return mp.mpc(mp.mpf(e._mpf_))
    if e is sympy.pi:
        return mp.mpc(mp.pi)
    if e is sympy.E:
        return mp.mpc(mp.e)
    if e is sympy.I:
        return mp.mpc(0, 1)
    if e.is_Atom:
        return None
    parts = [_numeric(a, point, mp) for a in e.args]
    if any(isinstance(a, _NotReal) for a in parts):
        return NOT_REAL
    args: list[Complex] = [a for a in parts if a is not None]
    if len(args) != len(parts):
        return None
    if e.is_Add:
        return mp.fsum(args)
    if e.is_Mul:
        return mp.fprod(args)
    if e.is_Pow:
        base, exponent = args
        if base == 0:
            return None if exponent.real <= 0 else mp.mpc(0)
        return mp.power(base, exponent)
    if isinstance(e, sympy.exp):
        return mp.exp(args[0])
    if isinstance(e, sympy.log) and len(args) == 1:
        return None if args[0] == 0 else mp.log(args[0])
    if isinstance(e, sympy.Abs):
        return mp.mpc(abs(args[0]))
    if isinstance(e, (sympy.Min, sympy.Max)):
        if any(abs(a.imag) > REAL_TOLERANCE * (1 + abs(a.real)) for a in args):
            return NOT_REAL
        pick = min if isinstance(e, sympy.Min) else max
        return mp.mpc(pick(a.real for a in args))
    return None
