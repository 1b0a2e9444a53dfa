"""`asymptotic`: expr is O(of) or Θ(of) as the listed symbols grow."""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from .common import pretty, result

if TYPE_CHECKING:
    from ..model import Check, CheckResult
    from .common import Context

NAME = "asymptotic"
FIELDS = {"expr": ("expr", True), "class": ("choice:O|Theta", True), "of": ("expr", True), "as": ("symbols", True)}
MEASURES = False
HELP = "expr is O(of) or Θ(of) as the listed symbols grow"


def run(ctx: Context, check: Check) -> CheckResult:
    """expr ∈ O(of) / Θ(of) as the listed symbols → ∞: the limit of expr/of along every path
    symbols = t^a (a ∈ {0,1,2,3}^k, not all 0) is finite (O) and also nonzero (Θ)."""
    import sympy
    expr, of, cls, grow = check["expr"], check["of"], check["class"], check["as"]
    t = sympy.Symbol("t", positive=True)
    ratio = sympy.cancel(expr / of)
    fixed = sorted((ratio.free_symbols - set(grow)), key=lambda s: s.name)
    leading = _leading_terms(ratio, grow)
    for exps in itertools.product(range(4), repeat=len(grow)):
        if not any(exps):
            continue
        if leading is not None:
            lim = _path_limit(leading, exps)
        else:
            path = {s: t**a for s, a in zip(grow, exps)}
            rt = sympy.cancel(ratio.subs(path))
            num_, den = sympy.fraction(rt)
            if rt.free_symbols - {t} - set(fixed) == set() and num_.is_polynomial(t) and den.is_polynomial(t):
                dn, dd = sympy.degree(num_, t), sympy.degree(den, t)
                lim = sympy.oo if dn > dd else (sympy.Integer(0) if dn < dd else sympy.LC(num_, t) / sympy.LC(den, t))
            else:
                lim = sympy.limit(rt, t, sympy.oo)
        if lim.has(sympy.oo, -sympy.oo, sympy.zoo) or lim is sympy.nan or (cls == "Theta" and lim == 0):
            how = ", ".join(f"{s} = t^{a}" for s, a in zip(grow, exps))
            return result("asymptotic", "refuted",
                          f"{pretty(expr)} is not {cls}({pretty(of)}): along {how}, t → ∞, "
                          f"the ratio → {pretty(lim)}", "symbolic", path=how, limit=pretty(lim))
    sym = "Θ" if cls == "Theta" else "O"
    return result("asymptotic", "holds",
                  f"{pretty(expr)} = {sym}({pretty(of)}) as {', '.join(map(str, grow))} → ∞ "
                  f"(ratio bounded{' and bounded away from 0' if cls == 'Theta' else ''} along every path)",
                  "symbolic", ratio=pretty(ratio))


def _leading_terms(ratio: Any, grow: Any) -> Any:
    """(numerator, denominator) of a ratio of polynomials in the growing symbols, as Polys whose
    coefficients may hold the other symbols; None when it is not one (sqrt, log, ...)."""
    import sympy
    num_, den = sympy.fraction(ratio)
    try:
        pn, pd = sympy.Poly(num_, *grow), sympy.Poly(den, *grow)
    except sympy.PolynomialError:
        return None
    if pn.is_zero or pd.is_zero:
        return None
    return pn, pd


def _path_limit(leading: Any, exps: Any) -> Any:
    """The limit, t → ∞, of numerator/denominator with each growing symbol = t^a: a monomial
    Π sᵢ^mᵢ becomes t^(a·m), so each polynomial's degree in t is the largest a·m whose
    coefficients do not sum to 0, and that sum is its leading coefficient (exact arithmetic;
    the same as cancelling the substituted ratio, without building it)."""
    import sympy
    (dn, cn), (dd, cd) = (_lead(p, exps) for p in leading)
    if cd == 0:
        return sympy.zoo            # the denominator vanishes along this path: (n - d) with n = d
    if cn == 0:
        return sympy.Integer(0)
    if dn > dd:
        return sympy.oo * sympy.sign(sympy.cancel(cn / cd))
    if dn < dd:
        return sympy.Integer(0)
    return sympy.cancel(cn / cd)


def _lead(poly: Any, exps: Any) -> Any:
    import sympy
    groups: dict[int, Any] = {}
    for monom, coeff in poly.terms():
        k = sum(a * m for a, m in zip(exps, monom))
        groups[k] = groups.get(k, 0) + coeff
    for k in sorted(groups, reverse=True):
        c = sympy.expand(groups[k])
        if c != 0:
            return k, c
    return 0, sympy.Integer(0)      # every group cancels: the polynomial is 0 along this path
