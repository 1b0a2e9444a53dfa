"""Sums of monomials with exact coefficients: the formulas :mod:`.derive` varies, without
SymPy arithmetic (reading one from SymPy, showing it, evaluating it, back to SymPy)."""
from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

from grader.values import to_fraction

if TYPE_CHECKING:
    import sympy

    from grader.expr import SymbolTable

# ---------------------------------------------------------------- sums of monomials
# A polynomial ("poly") is a tuple of (powers, coefficient), sorted, without zero coefficients;
# powers is a sorted tuple of (symbol name, nonzero integer exponent). Hashable and canonical:
# two equal polys are equal tuples.
Powers: TypeAlias = "tuple[tuple[str, int], ...]"
Poly: TypeAlias = "tuple[tuple[Powers, Fraction], ...]"


def _canon(terms: Mapping[Powers, Fraction]) -> Poly:
    return tuple(sorted((k, c) for k, c in terms.items() if c))


def _mono_mul(a: Powers, b: Powers) -> Powers:
    out = dict(a)
    for name, e in b:
        out[name] = out.get(name, 0) + e
    return tuple(sorted((n, e) for n, e in out.items() if e))


def linear_combination(*scaled: tuple[int | Fraction, Poly]) -> Poly:
    """Σ k · poly over ``(k, poly)`` pairs."""
    out: dict[Powers, Fraction] = {}
    for k, poly in scaled:
        if not k:
            continue
        for powers, c in poly:
            out[powers] = out.get(powers, 0) + k * c
    return _canon(out)


def times_monomial(poly: Poly, powers: Powers) -> Poly:
    return _canon({_mono_mul(p, powers): c for p, c in poly})


def substitute(poly: Poly, name: str, by: Powers) -> Poly:
    """``poly`` with the symbol ``name`` replaced by the monomial ``by`` (d -> d·h⁻¹)."""
    out: dict[Powers, Fraction] = {}
    for powers, c in poly:
        rest = tuple(p for p in powers if p[0] != name)
        e = dict(powers).get(name, 0)
        key = _mono_mul(rest, tuple((n, k * e) for n, k in by)) if e else rest
        out[key] = out.get(key, 0) + c
    return _canon(out)


@lru_cache(maxsize=4096)
def poly_of(expr: sympy.Basic) -> Poly | None:
    """A SymPy expression as a poly, or None when it is not a sum of monomials with rational
    coefficients and integer powers of symbols."""
    import sympy
    expr = sympy.expand(expr)
    out: dict[Powers, Fraction] = {}
    for term in sympy.Add.make_args(expr):
        coef, rest = term.as_coeff_Mul()
        if not coef.is_Rational:
            return None
        powers: dict[str, int] = {}
        for f in sympy.Mul.make_args(rest):
            if f == 1:
                continue
            base, e = f.as_base_exp()
            if not (isinstance(base, sympy.Symbol) and e.is_Integer):
                return None
            powers[base.name] = powers.get(base.name, 0) + int(e)
        key = tuple(sorted((n, e) for n, e in powers.items() if e))
        out[key] = out.get(key, 0) + to_fraction(coef)
    return _canon(out)


def to_sympy(poly: Poly, table: SymbolTable) -> sympy.Expr:
    """The poly as a SymPy expression in the table's symbols."""
    import sympy
    total = sympy.Integer(0)
    for powers, c in poly:
        term = sympy.Rational(c.numerator, c.denominator)
        for name, e in powers:
            term *= table.symbol(name) ** e
        total += term
    return total


_SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def show(poly: Poly) -> str:
    """``4·d² + 4·d``, ``8·d²·n/h²``: as the answers' ``read_as`` writes formulas."""
    if not poly:
        return "0"
    out = []
    for powers, coef in sorted(poly, key=lambda t: (-sum(e for _, e in t[0] if e > 0), t[0])):
        num = [] if abs(coef.numerator) == 1 and powers else [str(abs(coef.numerator))]
        den = [] if coef.denominator == 1 else [str(coef.denominator)]
        for name, e in powers:
            (num if e > 0 else den).append(name + (str(abs(e)).translate(_SUP) if abs(e) != 1 else ""))
        text = "·".join(num) or "1"
        if den:
            text += "/" + (den[0] if len(den) == 1 else "(" + "·".join(den) + ")")
        out.append(("- " if coef < 0 else "+ ") + text)
    first = out[0]
    return (first[2:] if first.startswith("+") else "-" + first[2:]) + "".join(" " + t for t in out[1:])


def value_at(poly: Poly, values: Mapping[str, Fraction]) -> Fraction | None:
    """The poly at ``values`` (symbol name -> Fraction), exactly; None if a symbol has no value."""
    total = Fraction(0)
    for powers, coef in poly:
        x = coef
        for name, e in powers:
            v = values.get(name)
            if v is None or (e < 0 and v == 0):
                return None
            x *= v ** e
        total += x
    return total
