"""Expressions and relations: read through :func:`grader.expr.parse` (the whitelist parser,
never eval or sympify), compared with :func:`grader.expr.equivalent` (fast path, then
bounded SymPy; "undecided" is reported, never guessed).

Relations are compared by :func:`grader.expr.equivalent` too (``n > 2d``, ``2d < n``,
``d < n/2`` and ``4n²d > 8nd²`` agree: the ratio of the two sides' differences is positive);
it also says when an answer is the relation reversed, or strict against non-strict. The sets
``{n : n > 2d}`` and ``n ∈ (2d, ∞)`` are read as the inequality they describe.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeAlias

from .guard import answer_limits, shorten
from .model import Raw, Unreadable

if TYPE_CHECKING:
    import sympy

    from grader.expr import Parsed, SymbolTable
    from grader.expr.poly import Poly

#: exact values of an expression at the diagonal points (:func:`fingerprint`)
Fingerprint: TypeAlias = "tuple[int | Fraction, ...]"
#: whether a relation holds at each of a set of points (None: cannot be told, or on its boundary)
Truths: TypeAlias = "tuple[bool | None, ...]"
#: a polynomial with integer coefficients over the table's columns: ((coefficient, ((column, exponent), ...)), ...)
IntPoly: TypeAlias = "tuple[tuple[int, tuple[tuple[int, int], ...]], ...]"

EQUAL, DIFFERENT, UNDECIDED = "equal", "different", "undecided"


def read_expression(text: Raw, table: SymbolTable, *, relations: bool = False) -> tuple[sympy.Basic, str]:
    """``(sympy expr, read_as)`` of an answer; :class:`Unreadable` with the parser's message."""
    parsed = read_formula(text, table, relations=relations)
    return parsed.expr, parsed.read_as


def read_formula(text: Raw, table: SymbolTable, *, relations: bool = False) -> Parsed:
    """The :class:`grader.expr.Parsed` of an answer (its ``poly`` set when it is a polynomial:
    :func:`polynomial_fingerprint` and :func:`compare_polynomials` then need no SymPy);
    :class:`Unreadable` with the parser's message."""
    from grader.expr import ExprError, parse
    if isinstance(text, bool):
        raise Unreadable("true/false is not a formula")
    if isinstance(text, (int, float)):
        text = repr(text) if isinstance(text, float) else str(text)
    if not isinstance(text, str):
        raise Unreadable(f"expected a formula, not {type(text).__name__}")
    try:
        return parse(text, table, relations=relations, limits=answer_limits())
    except ExprError as e:
        where = f" (column {e.location.column})" if e.location is not None and e.location.column else ""
        raise Unreadable(f"cannot read {shorten(text, 40)!r}: {e.message}{where}") from None
    except (RecursionError, MemoryError, OverflowError):
        raise Unreadable("too complex to read") from None


_SET_BUILDER = re.compile(r"\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:[:|]|∈\s*\S+\s*[:|])\s*(.+)\}")
_INTERVAL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:∈|\bin\b)\s*([(\[\]])(.+),(.+)([)\[\]])")
_INFINITY = {"∞", "inf", "+∞", "+inf", "infinity", "oo"}


def read_relation(text: Raw, table: SymbolTable) -> tuple[sympy.Basic, str]:
    """``(sympy relational, read_as)``: an inequality (``n > 2d``), a set-builder set
    (``{n : n > 2d}``) or a half-line (``n ∈ (2d, ∞)``, ``n in [2d, inf)``, ``n ∈ (−∞, 2d)``)."""
    if isinstance(text, str) and len(text) <= 200:     # set forms are short; the parser bounds the rest
        m = _SET_BUILDER.fullmatch(text.strip())
        if m:
            return read_expression(m.group(2), table, relations=True)
        m = _INTERVAL.fullmatch(text.strip())
        if m:
            return _half_line(m, table)
    return read_expression(text, table, relations=True)


def _half_line(m: re.Match[str], table: SymbolTable) -> tuple[sympy.Basic, str]:
    import sympy
    var, _ = read_expression(m.group(1), table)
    lo, hi = m.group(3).strip(), m.group(4).strip()
    low_open, high_open = m.group(2) in "(]", m.group(5) in ")["
    lo_inf = lo.lstrip("-−") in _INFINITY and lo[:1] in "-−"
    if hi.lower().lstrip("+") in {x.lstrip("+") for x in _INFINITY} and not lo_inf:
        bound, shown = read_expression(lo, table)
        rel = sympy.StrictGreaterThan(var, bound) if low_open else sympy.GreaterThan(var, bound)
        return rel, f"{m.group(1)} {'>' if low_open else '≥'} {shown}"
    if lo_inf:
        bound, shown = read_expression(hi, table)
        rel = sympy.StrictLessThan(var, bound) if high_open else sympy.LessThan(var, bound)
        return rel, f"{m.group(1)} {'<' if high_open else '≤'} {shown}"
    raise Unreadable("a bounded interval is two inequalities; answer with one inequality, e.g. n > 2d")


DIAGONAL = (7,)


@lru_cache(maxsize=8192)
def fingerprint(expr: sympy.Basic, table: SymbolTable) -> Fingerprint | None:
    """The exact value of ``expr`` with every symbol set to 7 (definitions expanded), as int or
    Fraction, or None when that says nothing (a symbol whose assumptions such a value breaks, a
    value that is not rational). Two different fingerprints prove two expressions different
    at a point every constraint of the form "h divides d" allows, so the costlier
    :func:`compare_expressions` runs only where fingerprints agree."""
    from fractions import Fraction

    import sympy
    try:
        e = table.expand(expr)
        symbols = e.free_symbols
        if not all(_takes_diagonal(sym) for sym in symbols):
            return None
        out = []
        for v in DIAGONAL:
            x = e.xreplace({sym: sympy.Integer(v) for sym in symbols})
            if not x.is_Rational:
                return None
            out.append(_exact(Fraction(int(x.p), int(x.q))))
        return tuple(out)
    except (TypeError, ValueError, ArithmeticError, AttributeError, RecursionError):
        return None


@lru_cache(maxsize=256)
def _takes_diagonal(sym: sympy.Symbol) -> bool:
    """Whether every value of :data:`DIAGONAL` meets ``sym``'s assumptions."""
    import sympy
    return all(getattr(sympy.Integer(v), "is_" + key) is holds
               for v in DIAGONAL for key, holds in sym.assumptions0.items())


def polynomial(expr: sympy.Basic, table: SymbolTable) -> Poly | None:
    """``expr`` (definitions expanded) as a sparse polynomial of :mod:`grader.expr.poly`, or None
    when it is not a polynomial with rational coefficients."""
    from grader.expr import poly as P
    frac = P.from_sympy(table.expand(expr))
    return frac[0] if frac is not None and frac[1] == P.ONE else None


def polynomial_fingerprint(poly: Poly) -> Fingerprint | None:
    """:func:`fingerprint` of a polynomial, evaluated exactly without SymPy (the same values):
    with every symbol at v, a monomial is v to its total degree."""
    from fractions import Fraction
    if not all(_takes_diagonal(s) for m in poly for s, _ in m):
        return None
    out = []
    for v in DIAGONAL:
        total = 0               # int arithmetic while the coefficients are ints
        for m, c in poly.items():
            total += c * v ** sum(e for _, e in m)
        out.append(total if isinstance(total, int) else _exact(Fraction(total)))
    return tuple(out)


def _exact(x: Fraction) -> int | Fraction:
    """An int when ``x`` is whole (fingerprints compare at C speed), else the Fraction."""
    return x.numerator if x.denominator == 1 else x


def compare_polynomials(a: Poly, b: Poly) -> str:
    """equal or different, exactly: two polynomials with rational coefficients are equal for
    all values of their symbols (positive integers, or any infinite set of values each) only
    when they are the same polynomial, which is what :func:`grader.expr.equivalent` decides too."""
    return EQUAL if a == b else DIFFERENT


def may_equal(a: Fingerprint | None, b: Fingerprint | None) -> bool:
    """False only when the fingerprints prove the two expressions different."""
    return a is None or b is None or a == b


def compare_expressions(answer: sympy.Basic, reference: sympy.Basic, table: SymbolTable) -> str:
    """equal, different or undecided (from :func:`grader.expr.equivalent`)."""
    from grader.expr import equivalent
    return equivalent(answer, reference, table).verdict


_POINTS = tuple(tuple(2 ** ((7 * i + 3 * j) % 13) for j in range(12)) for i in range(12))
# Points whose ratios between symbols vary widely (n/d from 1/1000 to 1000, not only powers
# of 2): they tell apart relations the points above do not (n > 4d and n > 5d, n > 2hd and
# n > 25d), but they ignore the constraints ("h divides d"), so they only serve
# :func:`spread_truths`.
def _spread(n: int = 96, columns: int = 12, seed: int = 17) -> tuple[tuple[int, ...], ...]:
    """``n`` points of ``columns`` integers from 1 to 1000, log-uniform and independent, drawn by
    a seeded :class:`random.Random` (the same on every run)."""
    import random
    rng = random.Random(seed)
    return tuple(tuple(round(10 ** (3 * rng.random())) for _ in range(columns)) for _ in range(n))


SPREAD = _spread()


@lru_cache(maxsize=8192)
def truths(rel: sympy.Basic, table: SymbolTable, points: tuple[tuple[int, ...], ...] = _POINTS) -> Truths | None:
    """Whether ``rel`` holds at twelve fixed points (the table's symbols, in its order, take powers
    of 2 from 1 to 4096, so that "h divides d" often holds), None where it cannot be told or the
    point is on its boundary; None in all when a symbol's assumptions rule such values out.
    Relations whose truths differ at a point are different: :func:`compare_relations` runs only
    where they never do (or always do)."""
    signs = _signs(rel, table, points)
    if signs is not None:
        return signs
    import sympy
    try:
        e = table.expand(rel)
        column = {sym: j for j, (_, sym) in enumerate(table.symbols)}   # a symbol's values: always the same
        if not all(column.get(sym, 99) < len(points[0]) for sym in e.free_symbols):
            return None
        out = []
        for values in points:
            point = {}
            for sym in e.free_symbols:
                value = sympy.Integer(values[column[sym]])
                if any(getattr(value, "is_" + k) is not holds for k, holds in sym.assumptions0.items()):
                    return None
                point[sym] = value
            out.append(_holds(e, point))
        return tuple(out)
    except (TypeError, ValueError, ArithmeticError, AttributeError, RecursionError):
        return None


@lru_cache(maxsize=8192)
def spread_truths(rel: sympy.Basic, table: SymbolTable) -> Truths | None:
    """Whether the inequality ``rel`` holds at 96 points of positive integers with widely varied
    ratios between the symbols (constraints ignored, as :func:`compare_relations` ignores them);
    None at a point on its boundary (the sides equal: there > and ≥ part ways), and None in all
    when it is not one inequality between sums of monomials or a symbol's assumptions rule such
    values out. Off the boundary two relations equivalent for all positive values agree, so a
    point where their truths differ (:func:`differ_somewhere`) proves them different before
    :func:`compare_relations` runs; relations that differ only in strictness never differ here."""
    return _signs(rel, table, SPREAD)


def _signs(rel: sympy.Basic, table: SymbolTable, points: tuple[tuple[int, ...], ...]) -> Truths | None:
    """The truths of one inequality at ``points`` (rows of positive integers, a column per symbol
    of the table) from the sign of its sides' difference, exactly and without SymPy per point."""
    frac = _integer_difference(rel, table)
    if frac is None:
        return None
    num, den = frac
    out = []
    for row in points:          # more symbols than columns: they share values (still valid points)
        a, b = _value_at(num, row), _value_at(den, row)
        out.append(None if a == 0 or b == 0 else (a > 0) == (b > 0))
    return tuple(out)


def _value_at(poly: IntPoly, row: tuple[int, ...]) -> int:
    v = 0
    for coef, powers in poly:
        for j, e in powers:
            coef *= row[j % len(row)] ** e
        v += coef
    return v


# Beyond this many terms the sides' difference is not expanded here (a power the parser left
# unexpanded, (n + d + h + b + 1)^16): the truths then come from SymPy at the twelve points.
MAX_TERMS = 200


@lru_cache(maxsize=8192)
def _integer_difference(rel: sympy.Basic, table: SymbolTable) -> tuple[IntPoly, IntPoly] | None:
    """For an inequality ``a > b`` (``≥``, ``<``, ``≤``: oriented so that it reads ``g > 0``),
    g = p/q as two polynomials with integer coefficients (each multiplied by the positive lcm of
    its coefficients' denominators: the sign of p·q is g's), ``((coefficient, ((column,
    exponent), ...)), ...)`` each. None for anything else, for more than :data:`MAX_TERMS`
    terms, or when a symbol may take values the points do not fit (not positive; even, odd or
    prime)."""
    import math
    from grader.expr import poly as P
    op = getattr(rel, "rel_op", None)
    if op not in (">", "<", ">=", "<="):
        return None
    try:
        e = table.expand(rel)
        if any(not sym.is_positive or any(getattr(sym, "is_" + k) is not None for k in ("even", "odd", "prime"))
               for sym in e.free_symbols):
            return None         # the points are positive integers of every kind: fit only such symbols
        frac = P.from_sympy(e.lhs - e.rhs if op in (">", ">=") else e.rhs - e.lhs, MAX_TERMS)
    except (TypeError, ValueError, ArithmeticError, AttributeError, RecursionError):
        return None
    if frac is None:
        return None
    column = {name: j for j, (name, _) in enumerate(table.symbols)}
    out: list[IntPoly] = []
    for poly in frac:
        if any(s.name not in column for m in poly for s, _ in m):
            return None
        lcm = math.lcm(*(getattr(c, "denominator", 1) for c in poly.values())) if poly else 1
        out.append(tuple((int(c * lcm), tuple((column[s.name], k) for s, k in m)) for m, c in poly.items()))
    return out[0], out[1]


def disagreement(mine: sympy.Basic, ref: sympy.Basic, probes_mine: tuple[Truths | None, Truths | None],
                 probes_ref: tuple[Truths | None, Truths | None], table: SymbolTable) -> str | None:
    """Where ``mine`` is wrong, as the feedback says it: "at d = 316, n = 1000 it holds, but should
    not", from the first sample point where the probes ((truths, spread truths) of each) differ,
    both known; None when they never do."""
    for k, rows in ((1, SPREAD), (0, _POINTS)):
        a, b = probes_mine[k], probes_ref[k]
        if a is None or b is None:
            continue
        at = next((i for i, (x, y) in enumerate(zip(a, b)) if x is not None and y is not None and x != y), None)
        if at is None:
            continue
        names = {str(sym) for rel in (mine, ref) for sym in table.expand(rel).free_symbols}
        row = rows[at]
        values = ", ".join(f"{name} = {row[j % len(row)]}" for j, (name, _) in enumerate(table.symbols)
                           if name in names)
        return f"at {values} it holds, but should not" if a[at] else f"at {values} it fails, but should hold"
    return None


def differ_somewhere(a: Truths | None, b: Truths | None) -> bool:
    """True when the truths (from the same function) prove two relations not equivalent: at some
    point both are known and differ."""
    return a is not None and b is not None and any(x is not None and y is not None and x != y for x, y in zip(a, b))


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {">": lambda a, b: a > b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b}


def _holds(rel: sympy.Basic, point: Mapping[sympy.Symbol, sympy.Integer]) -> bool | None:
    """Whether ``rel`` holds at ``point``: one inequality by its two sides' exact values (cheap;
    None on its boundary, where the sides are equal), anything else through SymPy; None where
    that cannot be told."""
    import sympy
    compare = _COMPARE.get(str(getattr(rel, "rel_op", "")))
    if compare is not None:
        lhs, rhs = rel.lhs.xreplace(point), rel.rhs.xreplace(point)
        if lhs.is_Rational and rhs.is_Rational:
            return None if lhs == rhs else compare(lhs, rhs)     # on the boundary: > and ≥ part ways
    t = rel.xreplace(point)
    return bool(t) if isinstance(t, sympy.logic.boolalg.BooleanAtom) else None


def truths_differ(a: Truths | None, b: Truths | None) -> bool:
    """True when the truths prove two relations different, and they are not simply each
    other's reverse (for that, :func:`compare_relations` says "reversed")."""
    if a is None or b is None:
        return False
    known = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if not any(x != y for x, y in known):
        return False
    return not all(x != y for x, y in known)


def check_relation(rel: sympy.Basic) -> sympy.Basic:
    """``rel`` itself when it is an inequality (or several joined by "and"); else Unreadable."""
    import sympy
    parts = rel.args if isinstance(rel, sympy.And) else (rel,)
    if not all(getattr(p, "rel_op", None) in (">", "<", ">=", "<=") for p in parts):
        raise Unreadable("expected an inequality (>, <, >=, <=), e.g. n > 2d")
    return rel


def compare_relations(answer: sympy.Basic, reference: sympy.Basic, table: SymbolTable) -> tuple[str, str]:
    """(verdict, method) from :func:`grader.expr.equivalent`; the method says "reversed" or
    "strictness" when the two relations differ in that way."""
    from grader.expr import equivalent
    e = equivalent(answer, reference, table)
    return e.verdict, e.method
