"""Error-bounded evaluation: whether a number SymPy builds (no symbols) is provably nonzero,
its sign, an enclosure of its value (interval arithmetic, mpmath's ``iv``, outward rounding)."""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import sympy

STRICT_DIGITS = 1000    # working precision SymPy may use to tell a value from 0 (answers' numbers: 400 digits)


def nonzero(v) -> bool:
    """Whether the number ``v`` (SymPy, no symbols) is provably not zero: exactly for a rational;
    otherwise by interval arithmetic (:func:`sign`). Anything it cannot bound is no proof: False."""
    if v.is_Rational:
        return v != 0
    return sign(v) is not None


def sign(v) -> int | None:
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


def enclosure(v, digits: int = 40) -> tuple | None:
    """Exact bounds ``(low, high)`` (Fractions) of the real number ``v`` (SymPy, no symbols) from
    interval arithmetic at ``digits`` digits; None where the intervals do not cover it."""
    if v.is_Rational:
        f = Fraction(int(v.p), int(v.q))
        return f, f
    x = _enclosing(v, digits)
    if x is None:
        return None

    def exact(end):
        sign_, man, exp, _ = end
        f = Fraction(int(man)) * Fraction(2) ** int(exp)
        return -f if sign_ else f
    try:
        return exact(x._mpi_[0]), exact(x._mpi_[1])
    except (TypeError, ValueError, OverflowError):      # an infinite end
        return None


def _enclosing(v, digits: int):
    """The mpmath interval of ``v`` at ``digits`` digits, or None where interval arithmetic
    cannot enclose it (an operation it lacks, an overflow, too deep an expression)."""
    try:
        return _interval(v, _iv(digits))
    except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
        return None


@lru_cache(maxsize=4)
def _iv(digits: int):
    """A private mpmath interval context at ``digits`` digits (mpmath's shared ``iv`` is left as
    it is)."""
    from mpmath.ctx_iv import MPIntervalContext
    ctx = MPIntervalContext()
    ctx.prec = int(digits * 3.33)
    return ctx


def _interval(e, iv):
    """An interval (mpmath ``iv``) holding the value of the SymPy number ``e``, or None for what it
    does not cover: the parser's whitelist (sums, products, powers, sqrt, exp, log, abs, min,
    max, π and e) is."""
    if e.is_Rational:
        return iv.mpf(int(e.p)) / iv.mpf(int(e.q))
    if e is sympy.pi:
        return iv.pi
    if e is sympy.E:
        return iv.e
    args = [_interval(a, iv) for a in e.args] if not e.is_Atom else []
    if any(a is None for a in args):
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


# -- the bounded SymPy step ---------------------------------------------------------------
