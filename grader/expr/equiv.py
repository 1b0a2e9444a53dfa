"""Are two expressions (or two relations) equal under the symbols' assumptions?

:func:`equivalent` answers "equal", "different" or "undecided", never a guess:

1. definitions are expanded (d_k -> d/h);
2. **rational** (both sides rational functions with rational coefficients): the numerator of
   ``a - b`` over a common denominator is expanded as a polynomial (``sympy.Poly``); zero means
   "equal" (exact), nonzero "different", with a counterexample found by evaluation;
3. otherwise, **sampling**: seeded evaluation at points that respect the assumptions (positive
   integers, ...) and the constraints (``("divides", h, d)``), in exact rationals where possible
   (30 digits otherwise); one clear mismatch is "different" with that point;
4. all points agree: a SymPy ``simplify(a - b) == 0`` under a time limit confirms "equal";
   anything else is "undecided".

The time limit is a SIGALRM timer (``signal.setitimer``) armed around the SymPy step, nested
inside any timer the caller already runs (the grading workers and check-spec's per-claim limit);
it needs the main thread, so off the main thread step 4 is skipped ("undecided").

Relations ``f > 0`` / ``f ≥ 0`` / ``f = 0`` (``n > 2d``, ``2d < n``, ``n/2 > d``) are "equal" when
their kinds agree and ``f₁/f₂`` is positive under the assumptions; otherwise their truth values
are compared at the sample points.

The steps live in their own modules: :mod:`.verdict` (:class:`Equivalence`, :func:`bounded`),
:mod:`.sampling` (the sample points and a proven mismatch), :mod:`.evaluation` (error-bounded
evaluation: :func:`sign`, :func:`enclosure`), :mod:`.relations`; this module puts them in order.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from functools import lru_cache

import sympy
from sympy.core.relational import Relational

from . import poly as P
from .evaluation import nonzero
from .relations import equivalent_relations
from .sampling import Constraint, cons_symbols, mismatch, plain_point, sample_points
from .symbols import SymbolTable
from .verdict import DIFFERENT, EQUAL, UNDECIDED, Equivalence, bounded


def _as_sympy(x: object) -> sympy.Basic:
    if isinstance(x, sympy.Basic):
        return x
    if isinstance(x, bool):
        raise TypeError("a truth value is not an expression")
    if isinstance(x, int):
        return sympy.Integer(x)
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    raise TypeError(f"expected a SymPy expression (from grader.expr.parse), got {type(x).__name__}")


def equivalent(a: sympy.Basic | int | Fraction, b: sympy.Basic | int | Fraction, table: SymbolTable, *,
               constraints: Iterable[object] = (), timeout: float = 2.0) -> Equivalence:
    """Whether ``a`` and ``b`` (SymPy expressions or relations, e.g. ``parse(...).expr``) are
    equal for every value of the symbols allowed by their assumptions and ``constraints``
    (a tuple of ``("divides", a, b)`` or SymPy relations like ``n > d``; objects with ``kind``
    and ``args`` as in the spec's Constraint are read too). ``timeout`` bounds the SymPy step."""
    a, b = _as_sympy(a), _as_sympy(b)
    cons = tuple(_constraint(c) for c in constraints)
    r = _equivalent(a, b, table, cons, float(timeout))
    # results are cached: hand out a copy of the counterexample, never the cached dict
    return r if r.counterexample is None else Equivalence(r.verdict, r.method, dict(r.counterexample))


def _constraint(c: object) -> Constraint:
    kind = getattr(c, "kind", None)
    if isinstance(kind, str):       # the spec's Constraint(text, kind, args, location)
        args = tuple(getattr(c, "args", ()))
        return ("divides", args[0], args[1]) if kind == "divides" else ("holds", args[0])
    if isinstance(c, tuple) and c and c[0] == "divides":
        return ("divides", _as_sympy(c[1]), _as_sympy(c[2]))
    return ("holds", _as_sympy(c))


@lru_cache(maxsize=16384)
def _equivalent(a: sympy.Basic, b: sympy.Basic, table: SymbolTable, cons: tuple[Constraint, ...],
                timeout: float) -> Equivalence:
    a, b = table.expand(a), table.expand(b)
    cons = tuple(_expanded(c, table) for c in cons)
    ra, rb = _is_relation(a), _is_relation(b)
    if ra or rb:
        if ra != rb:
            return Equivalence(DIFFERENT, "kind")
        return equivalent_relations(a, b, cons, timeout)
    if a == b:
        return Equivalence(EQUAL, "identical")
    syms = sorted(a.free_symbols | b.free_symbols | cons_symbols(cons), key=lambda s: s.name)
    fa, fb = P.from_sympy(a), P.from_sympy(b)
    if fa is not None and fb is not None:
        return _rational(fa, fb, syms, cons)
    diff = a - b
    if diff == 0:
        return Equivalence(EQUAL, "identical")
    points = sample_points(tuple(syms), cons)
    cx = mismatch(a, b, points)
    if cx is not None:
        return Equivalence(DIFFERENT, "sampling", cx)
    return _simplify_zero(diff, timeout)


def _expanded(c: Constraint, table: SymbolTable) -> Constraint:
    if c[0] == "divides":
        return ("divides", table.expand(c[1]), table.expand(c[2]))
    return ("holds", table.expand(c[1]))


def _rational(fa: P.Frac, fb: P.Frac, syms: Sequence[sympy.Symbol], cons: tuple[Constraint, ...]) -> Equivalence:
    """Both sides rational functions with rational coefficients: exact, by cross-multiplying
    (a_num·b_den = b_num·a_den as polynomials); a counterexample from exact evaluation."""
    (na, da), (nb, db) = fa, fb
    same = na == nb if da == db else P.mul(na, db) == P.mul(nb, da)
    if same:
        return Equivalence(EQUAL, "rational")
    for point in sample_points(tuple(syms), cons):
        p = {s: (int(v) if v.is_Integer else Fraction(int(v.p), int(v.q))) for s, v in point}
        xa, ya, xb, yb = (P.evaluate(q, p) for q in (na, da, nb, db))
        if xa is not None and xb is not None and ya and yb and Fraction(xa) / ya != Fraction(xb) / yb:
            return Equivalence(DIFFERENT, "rational", plain_point(point))
    # A nonzero rational function cannot vanish on all the points allowed by sign/integer
    # assumptions and "divides" constraints (they are Zariski-dense): different, though no
    # sample showed it. Other constraints (n = 2d) may confine the points: then undecided.
    if all(c[0] == "divides" for c in cons):
        return Equivalence(DIFFERENT, "rational")
    return Equivalence(UNDECIDED, "rational functions differ, but not at any sample meeting the constraints")


def _is_relation(e: sympy.Basic) -> bool:
    return isinstance(e, (Relational, sympy.And))


def _simplify_zero(diff: sympy.Expr, timeout: float) -> Equivalence:
    def run() -> bool | sympy.Expr:
        simple = sympy.simplify(diff)
        if simple == 0:
            return True
        return simple if not simple.free_symbols and nonzero(simple) else False
    try:
        zero = bounded(run, timeout)
    except TimeoutError:
        return Equivalence(UNDECIDED, f"simplify timed out ({timeout:g}s)")
    except RuntimeError as e:
        return Equivalence(UNDECIDED, f"simplify skipped: {e}")
    except (TypeError, ValueError, NotImplementedError, RecursionError):
        return Equivalence(UNDECIDED, "simplify failed")
    if zero is True:
        return Equivalence(EQUAL, "simplify")
    if zero is not False:           # a - b simplified to a number provably not 0
        return Equivalence(DIFFERENT, "simplify")
    return Equivalence(UNDECIDED, "agree at every sample; simplify could not show a - b = 0")

