"""`dominance`: larger > smaller over a region (``where``: n < d), at a point (``at``), and/or a
claimed crossover (``crossover``: n = d) against the exact one."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import evaluate_exact, needs_values, num, pretty, result, show_values, substitute

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "dominance"
FIELDS = {"larger": ("expr", True), "smaller": ("expr", True), "where": ("relation", False), "at": ("values", False),
          "crossover": ("relation", False)}
MEASURES = False
HELP = "larger > smaller over a region (or at a point); the exact crossover"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    if "at" not in params:
        return True
    return needs_values(site, params, [params["larger"], params["smaller"]], "the expressions use it")


def _region(relation: Any) -> Any:
    """(var, bound, lo, hi) in terms of t = var/bound for a relation like n < d or n > 2*d."""
    import sympy
    lhs, rhs = relation.lhs, relation.rhs
    if not isinstance(lhs, sympy.Symbol):
        raise ValueError(f"the region must be written 'symbol < expression', got {pretty(relation)}")
    if isinstance(relation, (sympy.StrictLessThan, sympy.LessThan)):
        return lhs, rhs, sympy.Integer(0), sympy.Integer(1)
    if isinstance(relation, (sympy.StrictGreaterThan, sympy.GreaterThan)):
        return lhs, rhs, sympy.Integer(1), sympy.oo
    raise ValueError(f"the region must be '<' or '>', got {pretty(relation)}")


def _ratio_in(var: Any, bound: Any, larger: Any, smaller: Any) -> Any:
    """larger/smaller with var = t·bound, as a function of t alone (or ValueError)."""
    import sympy
    t = sympy.Symbol("t", positive=True)
    r = sympy.cancel((larger / smaller).subs(var, t * bound))
    if r.free_symbols - {t}:
        raise ValueError(f"larger/smaller depends on more than {var}/{pretty(bound)}: {pretty(r)}")
    return t, r


def _crossovers(t: Any, r: Any) -> Any:
    """Positive real t where r(t) = 1, sorted (exact)."""
    import sympy
    roots = sympy.solve(sympy.numer(sympy.together(r - 1)), t)
    return sorted({x for x in roots if x.is_real and x.is_positive}, key=lambda x: float(x))


def _example_point(ctx: Context, var: Any, bound: Any, tval: Any, fixed: Any) -> Any:
    """Concrete values with var = tval·bound: the bound's symbols from ``fixed`` (else 64, or h=1)."""
    import sympy
    vals = {}
    for s in sorted(bound.free_symbols, key=lambda s: s.name):
        vals[s.name] = fixed.get(s.name, 64)
    b = substitute(bound, vals)
    vals[var.name] = sympy.Rational(tval) * b
    if not vals[var.name].is_integer:
        scale = sympy.denom(vals[var.name])
        for s in vals:
            if s != var.name:
                vals[s] = vals[s] * scale
        vals[var.name] = vals[var.name] * scale
    return {k: int(v) for k, v in vals.items()}


def run(ctx: Context, check: Check) -> CheckResult:
    """larger > smaller: at a point (``at``), over a region (``where``: n < d), and/or a claimed
    crossover (``crossover``: n = d) against the exact one."""
    import sympy
    from ..spec_units import scale_expr
    larger, smaller = check["larger"], check["smaller"]
    stated = f"{pretty(larger)} > {pretty(smaller)}"
    scale = check.get("_scale") or {}
    larger, smaller = scale_expr(larger, scale), scale_expr(smaller, scale)   # in base units (symbols' units)
    parts: list[str] = []
    verdict = "holds"
    details: dict[str, Any] = {"larger": pretty(check["larger"]), "smaller": pretty(check["smaller"])}
    at = dict(check.get("at") or {})
    if "at" in check.params:
        a, b = evaluate_exact(larger, at), evaluate_exact(smaller, at)
        ok = bool(a > b)
        ratio = sympy.Rational(a, b) if b else sympy.oo
        parts.append(f"{'at ' + show_values(at) + ': ' if at else ''}{num(a)} {'>' if ok else '≤'} {num(b)} (ratio {num(ratio)})")
        details["at"] = {"values": at, "larger": num(a), "smaller": num(b), "ratio": num(ratio)}
        verdict = "holds" if ok else "refuted"
    for key in ("where", "crossover"):
        rel = check.get(key)
        if rel is None:
            continue
        try:
            if key == "where":
                var, bound, lo, hi = _region(rel)
            else:
                if not isinstance(rel, sympy.Equality) or not isinstance(rel.lhs, sympy.Symbol):
                    raise ValueError(f"a crossover is written 'symbol = expression', got {pretty(rel)}")
                var, bound = rel.lhs, rel.rhs
            t, r = _ratio_in(var, bound, larger, smaller)
            cross = _crossovers(t, r)
        except (ValueError, NotImplementedError, TypeError) as e:
            return result("dominance", "error", f"cannot decide {stated}: {e}", "symbolic")
        real = ", ".join(f"{var} = {pretty(c * bound)}" for c in cross) or "none"
        details["crossover"] = real
        if key == "crossover":
            claimed_t = sympy.Integer(1)
            ok = len(cross) == 1 and sympy.simplify(cross[0] - claimed_t) == 0
            parts.append(f"claimed crossover {var} = {pretty(bound)}, exact {real}")
            if not ok:
                verdict = "refuted"
                details["claimed_crossover"] = f"{var} = {pretty(bound)}"
            continue
        # region lo < t < hi: test every sub-interval between crossovers inside it
        cuts = [lo] + [c for c in cross if lo < c < hi] + [hi]
        bad = None
        for x, y in zip(cuts, cuts[1:]):
            mid = (x + y) / 2 if y != sympy.oo else x + 1
            if not bool(r.subs(t, mid) > 1):
                bad = mid
                break
        region = pretty(rel)
        if bad is None:
            parts.append(f"{stated} everywhere in {region} (crossover {real})")
        else:
            cx = _example_point(ctx, var, bound, bad, at)
            a, b = evaluate_exact(larger, cx), evaluate_exact(smaller, cx)
            parts.append(f"fails in {region}: at {show_values(cx)}, {num(a)} ≤ {num(b)} (exact crossover {real})")
            details["counterexample"] = {**cx, "larger": num(a), "smaller": num(b)}
            verdict = "refuted"
    return result("dominance", verdict, f"{stated}: " + "; ".join(parts), "symbolic", **details)
