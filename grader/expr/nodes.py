"""The parser's values: :class:`Parsed` (what :func:`grader.expr.parse` returns) and
:class:`Node` (a piece of the parse tree: its polynomial or SymPy value, how it is shown, and
the estimated bounds — decimal digits, degree, terms — checked before anything is computed),
with the estimates and the leaves every parse shares."""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

import sympy

from . import poly as P
from .symbols import SymbolTable

LOG2 = math.log10(2)


class Parsed:
    """What :func:`parse` understood: ``expr`` (SymPy, definitions expanded), ``read_as`` (the
    parse tree rendered with explicit operators: ``4·d·(d + 1)``; defined names as written),
    ``text`` (the input) and ``poly``: the expression as a sparse polynomial (:mod:`.poly`) when
    it is one, else None. ``expr`` is built from ``poly`` on first use: a caller that can work on
    the polynomial never pays for SymPy. Immutable (``poly`` is shared: never change it)."""

    __slots__ = ("_expr", "read_as", "text", "poly")
    _expr: sympy.Basic | None
    read_as: str
    text: str
    poly: P.Poly | None

    def __init__(self, expr: sympy.Basic | None, read_as: str, text: str, poly: P.Poly | None = None):
        if expr is None and poly is None:
            raise ValueError("Parsed needs an expression or a polynomial")
        for name, value in (("_expr", expr), ("read_as", read_as), ("text", text), ("poly", poly)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Parsed is immutable")

    @property
    def expr(self) -> sympy.Basic:
        if self._expr is None:
            assert self.poly is not None        # __init__ needs one of them
            object.__setattr__(self, "_expr", P.to_sympy(self.poly))
        return self._expr

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Parsed):
            return NotImplemented
        return (self.text, self.read_as, self.expr) == (other.text, other.read_as, other.expr)

    def __hash__(self) -> int:
        return hash((self.text, self.read_as))

    def __repr__(self) -> str:
        return f"Parsed(expr={self.expr!r}, read_as={self.read_as!r}, text={self.text!r})"

    def __reduce__(self) -> tuple[type[Parsed], tuple[Any, ...]]:
        return (Parsed, (self.expr, self.read_as, self.text, self.poly))


# precedence of a rendered piece: what brackets it needs inside a larger one
SUM, PRODUCT, UNARY, POWER, ATOM = 1, 2, 3, 4, 5


SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


class Node:
    """A parsed piece: ``poly`` (sparse polynomial) or ``sym`` (SymPy), its rendering ``shown``
    with precedence ``prec``, and bounds: ``mag`` (decimal digits of its numbers, an upper
    estimate), ``deg`` (total degree), ``terms`` (log10 of the number of terms once expanded),
    ``vars`` (names of the symbols involved)."""

    __slots__ = ("poly", "_sym", "shown", "prec", "mag", "deg", "terms", "vars")

    def __init__(self, poly: P.Poly | None, sym: sympy.Basic | None, shown: str, prec: int, mag: float = 0.0,
                 deg: float = 0.0, terms: float = 0.0, vars: frozenset[str] = frozenset()):
        self.poly, self._sym, self.shown, self.prec = poly, sym, shown, prec
        self.mag, self.deg, self.terms, self.vars = mag, deg, terms, vars

    @property
    def expr(self) -> sympy.Basic:
        if self._sym is None:
            assert self.poly is not None        # a node has its polynomial or its SymPy form
            self._sym = P.to_sympy(self.poly)
        return self._sym

    def constant(self) -> P.Coeff | sympy.Basic | None:
        """Its value when it is a number (int/Fraction, or a SymPy number), else None."""
        if self.poly is not None:
            return P.constant_value(self.poly)
        return self.expr if self.expr.is_number else None

    def wrap(self, prec: int) -> str:
        return self.shown if self.prec >= prec else f"({self.shown})"


def decimal_digits(n: int) -> float:
    return abs(n).bit_length() * LOG2


def number_mag(x: P.Coeff | sympy.Rational) -> float:
    if isinstance(x, Fraction):
        return max(decimal_digits(x.numerator), decimal_digits(x.denominator))
    if isinstance(x, int):
        return decimal_digits(x)
    return max(decimal_digits(int(x.p)), decimal_digits(int(x.q)))


@lru_cache(maxsize=4096)
def comb_log10(deg: float, nvars: int) -> float:
    """log10 of C(deg + nvars, nvars): the most monomials of total degree <= deg."""
    if nvars == 0:
        return 0.0
    return (math.lgamma(deg + nvars + 1) - math.lgamma(deg + 1) - math.lgamma(nvars + 1)) / math.log(10)


@lru_cache(maxsize=1024)
def bounds_of(expr: sympy.Basic) -> tuple[float, float, float]:
    """Bounds (mag, deg, terms) of an already-built expression (a definition)."""
    if expr.is_Number:
        return (number_mag(expr) if expr.is_Rational else 1.0, 0.0, 0.0)
    if expr.is_Symbol:
        return (0.0, 1.0, 0.0)
    parts = [bounds_of(a) for a in expr.args]
    if expr.is_Add:
        return (max(p[0] for p in parts) + 1, max(p[1] for p in parts),
                math.log10(sum(10 ** p[2] for p in parts)))
    if expr.is_Pow and expr.exp.is_Number:
        k = abs(float(expr.exp))
        return (parts[0][0] * k, parts[0][1] * k, parts[0][2] * k)
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))


def as_number(c: P.Coeff | sympy.Basic) -> sympy.Basic:
    if isinstance(c, Fraction):
        return sympy.Rational(c.numerator, c.denominator)
    if isinstance(c, int):
        return sympy.Integer(c)
    return c


# Leaves shared by every parse (a Node is never changed once built: each rule makes new ones).
@lru_cache(maxsize=256)
def symbol_node(s: sympy.Symbol) -> Node:
    return Node(P.var(s), s, s.name, ATOM, 0.0, 1.0, 0.0, frozenset((s.name,)))


@lru_cache(maxsize=4096)
def int_node(c: int) -> Node:
    return Node(P.const(c), None, str(c), ATOM, number_mag(c))


def split_names(word: str, table: SymbolTable) -> list[str] | None:
    """``word`` as a product of known names, longest first ("nd" -> [n, d]); None if impossible."""
    known = table._by_name.keys() | table._defs.keys()
    if word in known:
        return [word]
    return _split_cached(word, frozenset(known))


@lru_cache(maxsize=4096)
def _split_cached(word: str, known: frozenset[str]) -> list[str] | None:
    lengths = sorted({len(k) for k in known}, reverse=True)

    @lru_cache(maxsize=None)
    def go(i: int) -> tuple[str, ...] | None:
        if i == len(word):
            return ()
        for n in lengths:
            piece = word[i:i + n]
            if len(piece) == n and piece in known:
                rest = go(i + n)
                if rest is not None:
                    return (piece,) + rest
        return None

    out = go(0)
    return list(out) if out is not None else None
