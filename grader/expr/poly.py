"""Sparse polynomials with exact coefficients: the parser's and the equivalence test's fast path.

A polynomial is a dict {monomial: coefficient}; a monomial is a tuple of (Symbol, exponent)
pairs sorted by symbol name, the empty tuple for the constant; coefficients are int or Fraction,
never 0. :func:`to_sympy` builds SymPy's own canonical form of the expanded polynomial directly
(``Add``/``Mul`` from sorted arguments), which equals, and hashes like, what ``sympy.expand``
would give, at a fraction of the cost; :func:`from_sympy` reads a rational function back as
(numerator, denominator), or None when the expression is not one.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Mapping, TypeAlias

import sympy
from sympy.core.add import _addsort
from sympy.core.mul import _mulsort

#: a coefficient: exact, never 0
Coeff: TypeAlias = "int | Fraction"
#: a monomial: (Symbol, exponent) pairs sorted by the symbol's name; () for the constant
Monomial: TypeAlias = "tuple[tuple[sympy.Symbol, int], ...]"
#: a sparse polynomial {monomial: coefficient}
Poly: TypeAlias = "dict[Monomial, Coeff]"
#: a rational function: (numerator, denominator)
Frac: TypeAlias = "tuple[Poly, Poly]"

ONE: Poly = {(): 1}


def const(c: Coeff) -> Poly:
    return {(): c} if c else {}


def var(s: sympy.Symbol) -> Poly:
    return {((s, 1),): 1}


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    return _mono_product(a, b)


@lru_cache(maxsize=16384)
def _mono_product(a: Monomial, b: Monomial) -> Monomial:
    out = dict(a)
    for s, e in b:
        out[s] = out.get(s, 0) + e
    return tuple(sorted(out.items(), key=lambda se: se[0].name))


def add(p: Poly, q: Poly, sign: int = 1) -> Poly:
    out = dict(p)
    for m, c in q.items():
        v = out.get(m, 0) + sign * c
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def mul(p: Poly, q: Poly) -> Poly:
    out: Poly = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = _mono_mul(m1, m2)
            v = out.get(m, 0) + c1 * c2
            if v:
                out[m] = v
            else:
                out.pop(m, None)
    return out


def scale(p: Poly, c: Coeff) -> Poly:
    return {m: v * c for m, v in p.items()} if c else {}


def power(p: Poly, k: int) -> Poly:
    out, base = dict(ONE), p
    while k:
        if k & 1:
            out = mul(out, base)
        k >>= 1
        if k:
            base = mul(base, base)
    return out


def constant_value(p: Poly) -> Coeff | None:
    """The value of a constant polynomial (int/Fraction), None if it has symbols."""
    if not p:
        return 0
    if len(p) == 1 and () in p:
        return p[()]
    return None


def degree(p: Poly) -> int:
    return max((sum(e for _, e in m) for m in p), default=0)


def _number(c: Coeff) -> sympy.Rational:
    if isinstance(c, Fraction):
        return sympy.Rational(c.numerator, c.denominator) if c.denominator != 1 else sympy.Integer(c.numerator)
    return sympy.Integer(c)


def to_sympy(p: Poly) -> sympy.Expr:
    """SymPy's canonical expanded form of ``p`` (built from sorted arguments, no flattening)."""
    terms = []
    constant = sympy.S.Zero
    for m, c in p.items():
        if not m:
            constant = _number(c)
            continue
        factors = [s if e == 1 else sympy.Pow(s, sympy.Integer(e)) for s, e in m]
        if len(factors) > 1:
            _mulsort(factors)
        if c == 1:
            term = factors[0] if len(factors) == 1 else sympy.Mul._from_args(factors)
        else:
            term = sympy.Mul._from_args([_number(c)] + factors)
        terms.append(term)
    if not terms:
        return constant
    if len(terms) == 1 and constant == 0:
        return terms[0]
    _addsort(terms)
    if constant != 0:
        terms.insert(0, constant)
    return sympy.Add._from_args(terms)


@lru_cache(maxsize=8192)
def from_sympy(expr: sympy.Basic, max_terms: int = 5000) -> Frac | None:
    """(numerator, denominator) polynomials of a rational function with rational coefficients;
    None for anything else (roots, logs, floats, functions) or when it grows past max_terms."""
    try:
        num, den = _frac(expr, max_terms)
    except _NotRational:
        return None
    return num, den


class _NotRational(Exception):
    pass


def _frac(e: sympy.Basic, max_terms: int) -> Frac:
    if e.is_Symbol:
        return var(e), ONE
    if e.is_Rational:
        return const(Fraction(int(e.p), int(e.q)) if e.q != 1 else int(e.p)), ONE
    if e.is_Add:
        num: Poly = {}
        den = ONE
        for a in e.args:
            n2, d2 = _frac(a, max_terms)
            if d2 == den:
                num = add(num, n2)
            else:
                num, den = add(mul(num, d2), mul(n2, den)), mul(den, d2)
            _guard(num, max_terms)
        return num, den
    if e.is_Mul:
        num, den = ONE, ONE
        for a in e.args:
            n2, d2 = _frac(a, max_terms)
            if len(num) * len(n2) > 50 * max_terms:
                raise _NotRational
            num = mul(num, n2)
            if d2 is not ONE and d2 != ONE:
                den = mul(den, d2)
            _guard(num, max_terms)
        return num, den
    if e.is_Pow and e.exp.is_Integer:
        k = int(e.exp)
        if abs(k) > 1000:
            raise _NotRational
        n2, d2 = _frac(e.base, max_terms)
        for q in (n2, d2):
            if len(q) > 1 and _power_terms(q, abs(k)) > max_terms:
                raise _NotRational
        if k < 0:
            n2, d2, k = d2, n2, -k
            if not d2:
                raise _NotRational
        num, den = power(n2, k), (power(d2, k) if d2 != ONE else ONE)
        _guard(num, max_terms)
        return num, den
    raise _NotRational


def _power_terms(p: Poly, k: int) -> float:
    """An upper bound on the number of terms of p**k (monomials of degree <= deg·k)."""
    nv = len({s for m in p for s, _ in m})
    deg = degree(p) * k
    return min(float(len(p)) ** k, math.comb(deg + nv, nv))


def _guard(p: Poly, max_terms: int) -> None:
    if len(p) > max_terms:
        raise _NotRational


def evaluate(p: Poly, point: Mapping[sympy.Symbol, Coeff]) -> Coeff | None:
    """The exact value of p at {Symbol: int/Fraction}; None if a symbol has no value."""
    total: Coeff = 0
    for m, c in p.items():
        v = c
        for s, e in m:
            x = point.get(s)
            if x is None:
                return None
            v = v * x ** e
        total += v
    return total
