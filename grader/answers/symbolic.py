"""Expressions and relations: read through :func:`grader.expr.parse` (the whitelist parser,
never eval or sympify), compared with :func:`grader.expr.equivalent` (fast path, then
bounded SymPy; "undecided" is reported, never guessed).

A relation ``a > b`` (or ``<``, ``>=``, ``<=``) is oriented as ``f > 0`` with ``f = a − b``
(``b − a`` for ``<``); two relations say the same when both are strict or both are not and
``f₁ / f₂`` is positive under the symbols' assumptions (``n > 2d``, ``2d < n``, ``d < n/2``,
``4n²d > 8nd²`` all agree; so do the sets ``{n : n > 2d}`` and ``n ∈ (2d, ∞)``). A negative ratio is the relation reversed. When the ratio's sign
is not known, sampled points look for a counterexample; none found is "undecided".
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from .guard import shorten
from .model import Unreadable

EQUAL, DIFFERENT, UNDECIDED = "equal", "different", "undecided"


def read_expression(text, table, *, relations: bool = False):
    """``(sympy expr, read_as)`` of an answer; :class:`Unreadable` with the parser's message."""
    from grader.expr import ExprError, parse
    if isinstance(text, bool):
        raise Unreadable("true/false is not a formula")
    if isinstance(text, (int, float)):
        text = repr(text) if isinstance(text, float) else str(text)
    if not isinstance(text, str):
        raise Unreadable(f"expected a formula, not {type(text).__name__}")
    try:
        parsed = parse(text, table, relations=relations)
    except ExprError as e:
        where = f" (column {e.location.column})" if getattr(e, "location", None) and e.location.column else ""
        raise Unreadable(f"cannot read {shorten(text, 40)!r}: {e.message}{where}") from None
    except (RecursionError, MemoryError, OverflowError):
        raise Unreadable("too complex to read") from None
    return parsed.expr, parsed.read_as


_SET_BUILDER = re.compile(r"\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:[:|]|∈\s*\S+\s*[:|])\s*(.+)\}")
_INTERVAL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:∈|\bin\b)\s*([(\[\]])(.+),(.+)([)\[\]])")
_INFINITY = {"∞", "inf", "+∞", "+inf", "infinity", "oo"}


def read_relation(text, table):
    """``(sympy relational, read_as)``: an inequality (``n > 2d``), a set-builder set
    (``{n : n > 2d}``) or a half-line (``n ∈ (2d, ∞)``, ``n in [2d, inf)``, ``n ∈ (−∞, 2d)``)."""
    if isinstance(text, str):
        m = _SET_BUILDER.fullmatch(text.strip())
        if m:
            return read_expression(m.group(2), table, relations=True)
        m = _INTERVAL.fullmatch(text.strip())
        if m:
            return _half_line(m, table)
    return read_expression(text, table, relations=True)


def _half_line(m: re.Match, table):
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


def compare_expressions(answer, reference, table) -> str:
    """equal, different or undecided (from :func:`grader.expr.equivalent`)."""
    from grader.expr import equivalent
    return equivalent(answer, reference, table).verdict


@dataclass(frozen=True)
class Oriented:
    """A relation as ``f > 0`` (strict) or ``f >= 0``."""

    f: object
    strict: bool


_OPS = {">": (1, True), ">=": (1, False), "<": (-1, True), "<=": (-1, False)}


def orient(rel) -> Oriented:
    op = getattr(rel, "rel_op", None)
    if op not in _OPS:
        raise Unreadable("expected an inequality (>, <, >=, <=), e.g. n > 2d")
    sign, strict = _OPS[op]
    f = rel.lhs - rel.rhs
    return Oriented(f if sign > 0 else -f, strict)


def compare_relations(answer: Oriented, reference: Oriented, table, *, samples: int = 24) -> tuple[str, str]:
    """(verdict, how): how is "same", "reversed", "strictness" or "" (no common ground)."""
    import sympy
    if answer.f == 0 or reference.f == 0:
        return (EQUAL, "same") if answer == reference else (DIFFERENT, "")
    try:
        r = sympy.cancel(answer.f / reference.f)
    except (sympy.PolynomialError, TypeError, ValueError, RecursionError):
        r = None
    sign = _sign(r)
    if sign is not None:
        if sign > 0:
            return (EQUAL, "same") if answer.strict == reference.strict else (DIFFERENT, "strictness")
        return DIFFERENT, "reversed"
    # Unknown sign of the ratio: look for a point where the two relations disagree.
    symbols = sorted(answer.f.free_symbols | reference.f.free_symbols, key=str)
    rng = random.Random(1708)
    for _ in range(samples):
        point = {s: _draw(s, rng) for s in symbols}
        try:
            a, b = answer.f.subs(point), reference.f.subs(point)
            if not (a.is_number and b.is_number):
                return UNDECIDED, ""
            ha = a > 0 if answer.strict else a >= 0
            hb = b > 0 if reference.strict else b >= 0
            if bool(ha) != bool(hb):
                return DIFFERENT, ""
        except (TypeError, ValueError, ZeroDivisionError):
            continue
    return UNDECIDED, ""


def _sign(r) -> int | None:
    if r is None:
        return None
    if r.is_positive:
        return 1
    if r.is_negative:
        return -1
    return None


def _draw(symbol, rng: random.Random):
    import sympy
    if symbol.is_integer:
        n = rng.randint(1, 4096)
        return sympy.Integer(n if symbol.is_positive or symbol.is_nonnegative else n - 2048)
    x = sympy.Rational(rng.randint(1, 10**6), rng.randint(1, 1000))
    return x if symbol.is_positive or symbol.is_nonnegative else x - 500
