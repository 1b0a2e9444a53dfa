"""Equivalence of two relations (``n > 2d`` and ``2d < n``): the same kind and a positive
ratio of their sides, else their truth values compared at the sample points (and at points on
their boundaries, where strict and non-strict relations part ways)."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from fractions import Fraction

import sympy

from . import poly as P
from .evaluation import _NotReal, not_real, sign, value_at
from .sampling import SEED, Constraint, Point, cons_symbols, draw, fits, plain_point, sample_points
from .verdict import DIFFERENT, EQUAL, UNDECIDED, Equivalence, within


def _oriented(rel: sympy.Basic) -> tuple[sympy.Expr, str] | None:
    """(f, kind) with the relation meaning f > 0, f >= 0 or f = 0; None if not one of those."""
    if isinstance(rel, sympy.StrictGreaterThan):
        return rel.lhs - rel.rhs, ">"
    if isinstance(rel, sympy.StrictLessThan):
        return rel.rhs - rel.lhs, ">"
    if isinstance(rel, sympy.GreaterThan):
        return rel.lhs - rel.rhs, ">="
    if isinstance(rel, sympy.LessThan):
        return rel.rhs - rel.lhs, ">="
    if isinstance(rel, sympy.Equality):
        return rel.lhs - rel.rhs, "="
    return None


def _truth(rel: sympy.Basic, point: Mapping[sympy.Symbol, sympy.Rational]) -> bool | None:
    """The truth value of a relation (or And) at a point; None when it cannot be told."""
    if isinstance(rel, sympy.And):
        vals = [_truth(r, point) for r in rel.args]
        if any(v is False for v in vals):
            return False
        return None if any(v is None for v in vals) else True
    o = _oriented(rel)
    if o is None:
        return None
    f, kind = o
    v = value_at(f, point)
    if v is None:
        return None
    if isinstance(v, _NotReal):
        return False
    if not v.is_Rational:
        # a side that is not a real number there (√(d - 10⁴⁰) at d = 5, a min of one): the
        # relation between real numbers does not hold at that point
        if any(_not_real_at(side, point) for side in (rel.lhs, rel.rhs)):
            return False
        s = sign(v)
        if s is None:
            return None           # on the boundary, or too close to it to tell
        return s > 0 if kind in (">", ">=") else False
    return bool(v > 0) if kind == ">" else bool(v >= 0) if kind == ">=" else bool(v == 0)


def _not_real_at(e: sympy.Basic, point: Mapping[sympy.Symbol, sympy.Rational]) -> bool:
    v = value_at(e, point)
    return v is not None and not_real(v)


def equivalent_relations(a: sympy.Basic, b: sympy.Basic, cons: tuple[Constraint, ...], timeout: float) -> Equivalence:
    if a == b:
        return Equivalence(EQUAL, "identical")
    syms = sorted(a.free_symbols | b.free_symbols | cons_symbols(cons), key=lambda s: s.name)
    # conjuncts that hold everywhere under the assumptions (0 < n for positive n) say nothing
    pa, pb = _essential(_parts(a)), _essential(_parts(b))
    if not pa and not pb:
        return Equivalence(EQUAL, "both always true")
    decided = None
    # a relation without symbols is true or false everywhere: only the sample points tell it apart
    if len(pa) == len(pb) and a.free_symbols and b.free_symbols:
        left = list(pb)
        for x in pa:
            match = next((y for y in left if _single(x, y, timeout).verdict == EQUAL), None)
            if match is None:
                break
            left.remove(match)
        else:
            same = _single(pa[0], pb[0], timeout) if len(pa) == 1 else Equivalence(EQUAL, "each relation")
            # the ratio's sign is SymPy's, which takes min, max and roots to be real: a side that
            # is not real at a sample point (where the relation fails) is looked for first
            if not all(_rational(r) for r in pa + pb):
                differ = _sampled(a, b, pa, pb, syms, cons, None)
                if differ is not None:
                    return differ
            return same
        if len(pa) == 1:
            decided = _single(pa[0], pb[0], timeout)
    differ = _sampled(a, b, pa, pb, syms, cons, decided)
    if differ is not None:
        return differ
    # "reversed" or "strictness" without a point to show it stays undecided: f may vanish or
    # keep one sign everywhere the assumptions allow
    return Equivalence(UNDECIDED, "relations agree at every sample but could not be shown equal")


def _rational(rel: sympy.Basic) -> bool:
    """Whether both sides of ``rel`` are rational functions with rational coefficients (real
    wherever they are defined)."""
    o = _oriented(rel)
    return o is not None and P.from_sympy(o[0]) is not None


def _sampled(a: sympy.Basic, b: sympy.Basic, pa: tuple[sympy.Basic, ...], pb: tuple[sympy.Basic, ...],
             syms: Sequence[sympy.Symbol], cons: tuple[Constraint, ...], decided: Equivalence | None) -> Equivalence | None:
    """DIFFERENT at the first sample point (then boundary point) where the truths of ``a`` and
    ``b`` are both known and differ, with ``decided``'s method when it says how; else None."""
    points = sample_points(tuple(syms), cons)
    for batch in (points, None):
        if batch is None:
            batch = _boundary_points(pa + pb, tuple(syms), cons)
        for point in batch:
            p = dict(point)
            ta, tb = _truth(a, p), _truth(b, p)
            if ta is not None and tb is not None and ta != tb:
                how = decided.method if decided is not None and decided.verdict == DIFFERENT else "sampling"
                return Equivalence(DIFFERENT, how, plain_point(point))
    return None


def _parts(rel: sympy.Basic) -> tuple[sympy.Basic, ...]:
    return tuple(rel.args) if isinstance(rel, sympy.And) else (rel,)


def _essential(parts: tuple[sympy.Basic, ...]) -> tuple[sympy.Basic, ...]:
    out = []
    for r in parts:
        o = _oriented(r)
        if o is not None and not o[0].free_symbols:     # a number: its sign, by intervals
            s = sign(o[0])
            if (o[1] == ">" and s == 1) or (o[1] == ">=" and (s == 1 or o[0] == 0)):
                continue
        elif o is not None and ((o[1] == ">" and o[0].is_positive) or (o[1] == ">=" and o[0].is_nonnegative)):
            continue
        out.append(r)
    return tuple(out)


def _constant_ratio(fa: sympy.Expr, fb: sympy.Expr) -> Fraction | None:
    """The constant c with fa = c·fb when both are rational functions and one exists, else None."""
    ra, rb = P.from_sympy(fa), P.from_sympy(fb)
    if ra is None or rb is None:
        return None
    x, y = P.mul(ra[0], rb[1]), P.mul(rb[0], ra[1])
    if not x or not y or len(x) != len(y):
        return None
    m = next(iter(y))
    if m not in x:
        return None
    c = Fraction(x[m]) / Fraction(y[m])
    return c if x == P.scale(y, c) else None


def _single(a: sympy.Basic, b: sympy.Basic, timeout: float = 2.0) -> Equivalence:
    """Two single relations compared by the sign of f₁/f₂ (no counterexample here); SymPy's
    cancel and factor under the time limit (a ratio holding exp(-508) is a polynomial of degree
    508 to them: seconds to factor)."""
    oa, ob = _oriented(a), _oriented(b)
    if oa is None or ob is None:
        return Equivalence(UNDECIDED, "unsupported relation")
    (fa, ka), (fb, kb) = oa, ob
    if fa == 0 or fb == 0:
        return Equivalence(UNDECIDED, "degenerate relation")
    c = _constant_ratio(fa, fb)
    if c is not None:
        positive, negative = c > 0, c < 0
    else:
        def ratio() -> tuple[bool, bool]:
            r = sympy.cancel(sympy.together(fa / fb))
            r = sympy.factor(r) if not (r.is_positive or r.is_negative) else r
            return bool(r.is_positive), bool(r.is_negative)
        try:
            positive, negative = within(ratio, timeout)
        except TimeoutError:
            return Equivalence(UNDECIDED, f"ratio timed out ({timeout:g}s)")
        except (sympy.PolynomialError, TypeError, ValueError, RecursionError):
            return Equivalence(UNDECIDED, "ratio")
    if ka == "=" or kb == "=":
        if ka == kb and (positive or negative):
            return Equivalence(EQUAL, "constant-sign factor")
        return Equivalence(UNDECIDED if ka == kb else DIFFERENT, "kind")
    if positive:
        return Equivalence(EQUAL, "positive factor") if ka == kb else Equivalence(DIFFERENT, "strictness")
    if negative:
        return Equivalence(DIFFERENT, "reversed")
    return Equivalence(UNDECIDED, "ratio of unknown sign")


def _boundary_points(parts: tuple[sympy.Basic, ...], syms: tuple[sympy.Symbol, ...],
                     cons: tuple[Constraint, ...]) -> tuple[Point, ...]:
    """Points on f = 0 (where strict and non-strict relations part ways), for each relation's
    f whose numerator is linear in one of its symbols: that symbol solved exactly, the others
    drawn; kept when they meet the assumptions and constraints."""
    out = []
    rng = random.Random(SEED + 1)
    for rel in parts:
        o = _oriented(rel)
        frac = P.from_sympy(o[0]) if o is not None else None
        if frac is None:
            continue
        num = frac[0]
        for s in sorted({v for m in num for v, _ in m}, key=lambda v: v.name):
            if any(e > 1 for m in num for v, e in m if v == s):
                continue
            coeff = {tuple((v, e) for v, e in m if v != s): c for m, c in num.items() if any(v == s for v, _ in m)}
            rest = {m: c for m, c in num.items() if all(v != s for v, _ in m)}
            for _ in range(6):
                point = {t: draw(t, rng, False) for t in syms if t != s}
                vals = {t: Fraction(int(v.p), int(v.q)) for t, v in point.items()}
                a_, b_ = P.evaluate(coeff, vals), P.evaluate(rest, vals)
                if not a_ or a_ is None or b_ is None:
                    continue
                x = -Fraction(b_) / a_
                v = sympy.Rational(x.numerator, x.denominator)
                # on the boundary, and (an integer symbol) its neighbours either side: where a
                # relation the boundary alone does not tell apart (n > 2d + √d against n > 2d,
                # at n = 2d + 1) is told apart
                near = (v, v + 1, v - 1) if s.is_integer and v.is_Integer else (v,)
                for w in near:
                    if fits(s, w) and _meets(point | {s: w}, cons):
                        out.append(tuple(sorted((point | {s: w}).items(), key=lambda kv: kv[0].name)))
    return tuple(out)


def _meets(point: Mapping[sympy.Symbol, sympy.Rational], cons: tuple[Constraint, ...]) -> bool:
    for c in cons:
        try:
            if c[0] == "divides":
                dv, mv = c[1].xreplace(point), c[2].xreplace(point)
                if not (dv.is_Integer and mv.is_Integer and dv != 0 and mv % dv == 0):
                    return False
            elif not bool(c[1].xreplace(point)):
                return False
        except (TypeError, ValueError):
            return False
    return True
