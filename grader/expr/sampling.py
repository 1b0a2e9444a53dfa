"""Sample points for equivalence: seeded draws that respect the symbols' assumptions
(positive integers, ...) and the constraints (``("divides", h, d)``), the two sides' values
there (exact where possible), and a point where they provably differ."""
from __future__ import annotations

import random
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal, TypeAlias

import sympy

from .evaluation import NOT_REAL, _NotReal, nonzero, not_real, value_at

#: a constraint as equivalence reads it: ("divides", divisor, multiple) or ("holds", relation)
Constraint: TypeAlias = "tuple[Literal['divides'], sympy.Expr, sympy.Expr] | tuple[Literal['holds'], sympy.Basic]"
#: a sample point: (Symbol, value) pairs, values exact (sympy.Integer or sympy.Rational)
Point: TypeAlias = "tuple[tuple[sympy.Symbol, sympy.Rational], ...]"
#: a counterexample as :class:`~.verdict.Equivalence` gives it: {Symbol: int or sympy.Rational}
Counterexample: TypeAlias = "dict[sympy.Symbol, int | sympy.Rational]"
#: a value at a point: a SymPy number, not real, or unknown
Value: TypeAlias = "sympy.Expr | _NotReal | None"

SEED = 1708
SAMPLES = 24


def cons_symbols(cons: Iterable[Constraint]) -> set[sympy.Symbol]:
    out: set[sympy.Symbol] = set()
    for c in cons:
        for x in c[1:]:
            out |= getattr(x, "free_symbols", set())
    return out


_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71)


def draw(s: sympy.Symbol, rng: random.Random, big: bool) -> sympy.Rational:
    top = 5000 if big else 12
    if s.is_prime:
        return sympy.Integer(rng.choice(_PRIMES))
    if s.is_integer:
        if s.is_even or s.is_odd:
            k = rng.randint(1, top)
            v = 2 * k if s.is_even else 2 * k - 1
        else:
            v = rng.randint(1, top)
        if s.is_positive or s.is_nonnegative:
            return sympy.Integer(v - (1 if s.is_nonnegative and not s.is_positive and rng.random() < 0.2 else 0))
        if s.is_negative or s.is_nonpositive:
            return sympy.Integer(-v)
        return sympy.Integer(v if rng.random() < 0.5 else -v)
    x = sympy.Rational(rng.randint(1, 1000 if big else 40), rng.randint(1, 97))
    if s.is_positive or s.is_nonnegative:
        return x
    if s.is_negative or s.is_nonpositive:
        return -x
    return x if rng.random() < 0.5 else -x


@lru_cache(maxsize=512)
def sample_points(syms: tuple[sympy.Symbol, ...], cons: tuple[Constraint, ...]) -> tuple[Point, ...]:
    """Seeded points {Symbol: value} that satisfy the assumptions and constraints."""
    rng = random.Random(SEED)
    out: list[Point] = []
    tries = 0
    while len(out) < SAMPLES and tries < SAMPLES * 20:
        big = tries % 3 == 2
        tries += 1
        point = {s: draw(s, rng, big) for s in syms}
        ok = True
        for c in cons:
            if c[0] == "divides":
                div, mult = c[1], c[2]
                if isinstance(mult, sympy.Symbol) and mult in point:
                    dv = div.xreplace(point)
                    if dv.is_Integer and dv != 0:
                        point[mult] = sympy.Integer(abs(dv) * rng.randint(1, 64 if big else 4))
        for c in cons:
            try:
                if c[0] == "divides":
                    dv, mv = c[1].xreplace(point), c[2].xreplace(point)
                    ok = ok and dv.is_Integer and mv.is_Integer and dv != 0 and mv % dv == 0
                else:
                    ok = ok and bool(c[1].xreplace(point))
            except (TypeError, ValueError):
                ok = False
        if ok and all(fits(s, v) for s, v in point.items()):
            out.append(tuple(point.items()))
    return tuple(out)


def fits(s: sympy.Symbol, v: sympy.Rational) -> bool:
    """Whether value v meets symbol s's assumptions (constraints may have moved it)."""
    for name in ("positive", "integer", "nonnegative", "even", "odd"):
        if getattr(s, "is_" + name) and not getattr(v, "is_" + name):
            return False
    return True


def _value(e: sympy.Basic, point: dict[sympy.Symbol, sympy.Rational]) -> Value:
    v = value_at(e, point)
    if v is None or isinstance(v, _NotReal) or v.is_Rational:
        return v
    if v.free_symbols or v.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    try:
        n = sympy.N(v, 30)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return n if n.is_number and not n.has(sympy.zoo, sympy.nan) else None


def _differs(x: Value, y: Value) -> bool | None:
    """Whether two values differ clearly (exact for rationals; 30-digit relative otherwise). A
    value that is not real (:data:`NOT_REAL`: a min or max of a value that is not real) differs
    from every real one."""
    if x is None or y is None:
        return None
    if isinstance(x, _NotReal) or isinstance(y, _NotReal):
        other = y if isinstance(x, _NotReal) else x
        return None if isinstance(other, _NotReal) else bool(other.is_Rational) or not not_real(other)
    if x.is_Rational and y.is_Rational:
        return bool(x != y)
    try:
        gap = abs(complex(sympy.N(x - y, 30)))
        scale = 1 + abs(complex(sympy.N(x, 30))) + abs(complex(sympy.N(y, 30)))
    except (TypeError, ValueError):
        return None
    return gap > 1e-12 * scale


def plain_point(point: Point) -> Counterexample:
    return {s: (int(v) if v.is_Integer else v) for s, v in point}


STRICT_POINTS = 4       # points where a - b is evaluated with error bounds when no clear mismatch shows


def mismatch(a: sympy.Expr, b: sympy.Expr, points: tuple[Point, ...]) -> Counterexample | None:
    """A point where ``a`` and ``b`` provably differ, or None: first a clear mismatch of their
    values (exact, or 30 digits); then ``a - b`` itself at the first points, exactly or with
    SymPy's error-bounded evaluation, so that a difference far below the 30 digits
    (``4d² + 4d + exp(-200)`` against ``4d² + 4d``) is still a proof."""
    for point in points:
        p = dict(point)
        if _differs(_value(a, p), _value(b, p)):
            return plain_point(point)
    diff = a - b
    for point in points[:STRICT_POINTS]:
        v = value_at(diff, dict(point))
        if v is not None and v is not NOT_REAL and nonzero(v):
            return plain_point(point)
    return None
