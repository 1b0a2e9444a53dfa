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
"""
from __future__ import annotations

import random
import signal
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy
from sympy.core.relational import Relational

from . import poly as P
from .symbols import SymbolTable

EQUAL, DIFFERENT, UNDECIDED = "equal", "different", "undecided"
SEED = 1708
SAMPLES = 24


@dataclass(frozen=True)
class Equivalence:
    """``verdict``: "equal", "different" or "undecided"; ``method``: how it was decided
    ("identical", "rational", "sampling", "simplify", "positive factor", ...);
    ``counterexample``: {Symbol: value} where the two differ (values are int or sympy.Rational),
    else None."""

    verdict: str
    method: str
    counterexample: dict | None = None

    @property
    def equal(self) -> bool:
        return self.verdict == EQUAL


def _as_sympy(x):
    if isinstance(x, sympy.Basic):
        return x
    if isinstance(x, bool):
        raise TypeError("a truth value is not an expression")
    if isinstance(x, int):
        return sympy.Integer(x)
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    raise TypeError(f"expected a SymPy expression (from grader.expr.parse), got {type(x).__name__}")


def equivalent(a, b, table: SymbolTable, *, constraints=(), timeout: float = 2.0) -> Equivalence:
    """Whether ``a`` and ``b`` (SymPy expressions or relations, e.g. ``parse(...).expr``) are
    equal for every value of the symbols allowed by their assumptions and ``constraints``
    (a tuple of ``("divides", a, b)`` or SymPy relations like ``n > d``; objects with ``kind``
    and ``args`` as in the spec's Constraint are read too). ``timeout`` bounds the SymPy step."""
    a, b = _as_sympy(a), _as_sympy(b)
    cons = tuple(_constraint(c) for c in constraints)
    r = _equivalent(a, b, table, cons, float(timeout))
    # results are cached: hand out a copy of the counterexample, never the cached dict
    return r if r.counterexample is None else Equivalence(r.verdict, r.method, dict(r.counterexample))


def _constraint(c):
    kind = getattr(c, "kind", None)
    if isinstance(kind, str):       # the spec's Constraint(text, kind, args, location)
        args = tuple(getattr(c, "args", ()))
        return (kind,) + args if kind == "divides" else ("holds", args[0])
    if isinstance(c, tuple) and c and c[0] == "divides":
        return ("divides", _as_sympy(c[1]), _as_sympy(c[2]))
    return ("holds", _as_sympy(c))


@lru_cache(maxsize=16384)
def _equivalent(a, b, table, cons, timeout) -> Equivalence:
    a, b = table.expand(a), table.expand(b)
    cons = tuple((c[0],) + tuple(table.expand(x) for x in c[1:]) for c in cons)
    ra, rb = _is_relation(a), _is_relation(b)
    if ra or rb:
        if ra != rb:
            return Equivalence(DIFFERENT, "kind")
        return _relations(a, b, cons, timeout)
    if a == b:
        return Equivalence(EQUAL, "identical")
    syms = sorted(a.free_symbols | b.free_symbols | _cons_symbols(cons), key=lambda s: s.name)
    fa, fb = P.from_sympy(a), P.from_sympy(b)
    if fa is not None and fb is not None:
        return _rational(fa, fb, syms, cons)
    diff = a - b
    if diff == 0:
        return Equivalence(EQUAL, "identical")
    points = _points(tuple(syms), cons)
    cx = _mismatch(a, b, points)
    if cx is not None:
        return Equivalence(DIFFERENT, "sampling", cx)
    return _simplify_zero(diff, timeout)


def _rational(fa, fb, syms, cons) -> Equivalence:
    """Both sides rational functions with rational coefficients: exact, by cross-multiplying
    (a_num·b_den = b_num·a_den as polynomials); a counterexample from exact evaluation."""
    (na, da), (nb, db) = fa, fb
    same = na == nb if da == db else P.mul(na, db) == P.mul(nb, da)
    if same:
        return Equivalence(EQUAL, "rational")
    for point in _points(tuple(syms), cons):
        p = {s: (int(v) if v.is_Integer else Fraction(int(v.p), int(v.q))) for s, v in point}
        xa, ya, xb, yb = (P.evaluate(q, p) for q in (na, da, nb, db))
        if ya and yb and Fraction(xa) / ya != Fraction(xb) / yb:
            return Equivalence(DIFFERENT, "rational", _plain(point))
    # A nonzero rational function cannot vanish on all the points allowed by sign/integer
    # assumptions and "divides" constraints (they are Zariski-dense): different, though no
    # sample showed it. Other constraints (n = 2d) may confine the points: then undecided.
    if all(c[0] == "divides" for c in cons):
        return Equivalence(DIFFERENT, "rational")
    return Equivalence(UNDECIDED, "rational functions differ, but not at any sample meeting the constraints")


def _is_relation(e) -> bool:
    return isinstance(e, (Relational, sympy.And))


def _cons_symbols(cons) -> set:
    out = set()
    for c in cons:
        for x in c[1:]:
            out |= getattr(x, "free_symbols", set())
    return out


# -- sample points --------------------------------------------------------------------------

_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71)


def _draw(s, rng: random.Random, big: bool):
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
def _points(syms: tuple | list, cons) -> tuple:
    """Seeded points {Symbol: value} that satisfy the assumptions and constraints."""
    syms = tuple(syms)
    rng = random.Random(SEED)
    out = []
    tries = 0
    while len(out) < SAMPLES and tries < SAMPLES * 20:
        big = tries % 3 == 2
        tries += 1
        point = {s: _draw(s, rng, big) for s in syms}
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
        if ok and all(_fits(s, v) for s, v in point.items()):
            out.append(tuple(point.items()))
    return tuple(out)


def _fits(s, v) -> bool:
    """Whether value v meets symbol s's assumptions (constraints may have moved it)."""
    for name in ("positive", "integer", "nonnegative", "even", "odd"):
        if getattr(s, "is_" + name) and not getattr(v, "is_" + name):
            return False
    return True


def _value(e, point: dict):
    v = e.xreplace(point)
    if v.is_Rational:
        return v
    if v.free_symbols or v.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    try:
        n = sympy.N(v, 30)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return n if n.is_number and not n.has(sympy.zoo, sympy.nan) else None


def _differs(x, y) -> bool | None:
    """Whether two values differ clearly (exact for rationals; 30-digit relative otherwise)."""
    if x is None or y is None:
        return None
    if x.is_Rational and y.is_Rational:
        return x != y
    try:
        gap = abs(complex(sympy.N(x - y, 30)))
        scale = 1 + abs(complex(sympy.N(x, 30))) + abs(complex(sympy.N(y, 30)))
    except (TypeError, ValueError):
        return None
    return gap > 1e-12 * scale


def _plain(point) -> dict:
    return {s: (int(v) if v.is_Integer else v) for s, v in point}


STRICT_POINTS = 4       # points where a - b is evaluated with error bounds when no clear mismatch shows
STRICT_DIGITS = 1000    # working precision SymPy may use to tell a value from 0 (answers' numbers: 400 digits)


def _mismatch(a, b, points):
    """A point where ``a`` and ``b`` provably differ, or None: first a clear mismatch of their
    values (exact, or 30 digits); then ``a - b`` itself at the first points, exactly or with
    SymPy's error-bounded evaluation, so that a difference far below the 30 digits
    (``4d² + 4d + exp(-200)`` against ``4d² + 4d``) is still a proof."""
    for point in points:
        p = dict(point)
        if _differs(_value(a, p), _value(b, p)):
            return _plain(point)
    diff = a - b
    for point in points[:STRICT_POINTS]:
        if nonzero(diff.xreplace(dict(point))):
            return _plain(point)
    return None


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
        try:
            x = _interval(v, _iv(digits))
        except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
            return None
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
    try:
        x = _interval(v, _iv(digits))
    except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
        return None
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

class _TimeUp(Exception):
    pass


def bounded(fn, seconds: float):
    """``fn()`` under a SIGALRM time limit of ``seconds`` (main thread only); raises TimeoutError
    when it runs out, RuntimeError off the main thread. An outer timer (setitimer) is honoured:
    if it was due first, it is re-armed to fire right after."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        raise RuntimeError("no time limit available off the main thread")

    def fire(signum, frame):
        raise _TimeUp()

    old_handler = signal.signal(signal.SIGALRM, fire)
    outer, interval = signal.setitimer(signal.ITIMER_REAL, 0)
    mine = seconds if not outer else min(seconds, outer)
    start = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, max(mine, 1e-6))
        return fn()
    except _TimeUp:
        raise TimeoutError(f"over {seconds:g}s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if outer:
            left = outer - (time.monotonic() - start)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6), interval)


def _simplify_zero(diff, timeout) -> Equivalence:
    def run():
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


# -- relations --------------------------------------------------------------------------------

def _oriented(rel):
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


def _truth(rel, point: dict):
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
    v = f.xreplace(point)
    if not v.is_Rational:
        s = sign(v)
        if s is None:
            return None           # on the boundary, or too close to it to tell
        return s > 0 if kind in (">", ">=") else False
    return bool(v > 0) if kind == ">" else bool(v >= 0) if kind == ">=" else bool(v == 0)


def _relations(a, b, cons, timeout) -> Equivalence:
    if a == b:
        return Equivalence(EQUAL, "identical")
    syms = sorted(a.free_symbols | b.free_symbols | _cons_symbols(cons), key=lambda s: s.name)
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
            return _single(pa[0], pb[0], timeout) if len(pa) == 1 else Equivalence(EQUAL, "each relation")
        if len(pa) == 1:
            decided = _single(pa[0], pb[0], timeout)
    points = _points(tuple(syms), cons)
    for batch in (points, None):
        if batch is None:
            batch = _boundary_points(pa + pb, tuple(syms), cons)
        for point in batch:
            p = dict(point)
            ta, tb = _truth(a, p), _truth(b, p)
            if ta is not None and tb is not None and ta != tb:
                how = decided.method if decided is not None and decided.verdict == DIFFERENT else "sampling"
                return Equivalence(DIFFERENT, how, _plain(point))
    # "reversed" or "strictness" without a point to show it stays undecided: f may vanish or
    # keep one sign everywhere the assumptions allow
    return Equivalence(UNDECIDED, "relations agree at every sample but could not be shown equal")


def _parts(rel):
    return tuple(rel.args) if isinstance(rel, sympy.And) else (rel,)


def _essential(parts) -> tuple:
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


def _constant_ratio(fa, fb):
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


def _single(a, b, timeout: float = 2.0) -> Equivalence:
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
        def ratio():
            r = sympy.cancel(sympy.together(fa / fb))
            r = sympy.factor(r) if not (r.is_positive or r.is_negative) else r
            return bool(r.is_positive), bool(r.is_negative)
        try:
            positive, negative = _within(ratio, timeout)
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


def _within(fn, seconds: float):
    """``fn()`` under :func:`bounded`'s time limit where there is one (the main thread), else as it is."""
    try:
        return bounded(fn, seconds)
    except RuntimeError as e:
        if "main thread" not in str(e):
            raise
        return fn()


def _boundary_points(parts, syms: tuple, cons) -> tuple:
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
                point = {t: _draw(t, rng, False) for t in syms if t != s}
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
                    if _fits(s, w) and _meets(point | {s: w}, cons):
                        out.append(tuple(sorted((point | {s: w}).items(), key=lambda kv: kv[0].name)))
    return tuple(out)


def _meets(point: dict, cons) -> bool:
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
