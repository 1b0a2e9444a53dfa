"""Symbolic check kinds (SymPy, no torch): identity, numeric, config, dominance, asymptotic,
and unverifiable."""
from __future__ import annotations

import itertools

import sympy

from ..figures import to_fraction
from .common import evaluate_exact, num, result, show_values, substitute


def _pretty(e) -> str:
    return sympy.sstr(e).replace("**", "^")


def identity(ctx, check):
    """lhs = rhs under the symbols' assumptions (grader.expr.equivalent)."""
    from grader.expr import equivalent

    lhs, rhs = check["lhs"], check["rhs"]
    eq = equivalent(lhs, rhs, ctx.subject.table, constraints=ctx.subject.constraints)
    if eq.verdict == "equal":
        return result("identity", "holds", f"{_pretty(lhs)} = {_pretty(rhs)} identically ({eq.method})",
                      "symbolic", lhs=_pretty(lhs), rhs=_pretty(rhs))
    if eq.verdict == "different":
        used = {s.name for s in (lhs - rhs).free_symbols} | {s.name for s in lhs.free_symbols | rhs.free_symbols}
        cx = {getattr(k, "name", str(k)): v for k, v in (eq.counterexample or {}).items()
              if getattr(k, "name", str(k)) in used}
        if not cx or not satisfies(ctx.subject, cx):
            cx = _counterexample(ctx.subject, lhs, rhs) or cx
        extra = ""
        if cx:
            try:
                a, b = evaluate_exact(lhs, cx), evaluate_exact(rhs, cx)
                extra = f"; at {show_values(cx)}: {num(a)} ≠ {num(b)}"
            except (ValueError, TypeError):
                extra = f"; counterexample {show_values(cx)}"
        return result("identity", "refuted", f"{_pretty(lhs)} ≠ {_pretty(rhs)}{extra}", "symbolic",
                      lhs=_pretty(lhs), rhs=_pretty(rhs), counterexample={k: int(v) if sympy.Integer(v) == v else str(v) for k, v in cx.items()})
    return result("identity", "error", f"could not decide {_pretty(lhs)} = {_pretty(rhs)} ({eq.method})",
                  "symbolic")


def satisfies(subject, values) -> bool:
    """Whether values meet the subject's constraints (h divides d, ...); unknown symbols pass."""
    for c in subject.constraints:
        try:
            if c.kind == "divides":
                a, b = (evaluate_exact(x, values) for x in c.args)
                if b % a != 0:
                    return False
            elif not bool(evaluate_exact(c.args[0], values)):
                return False
        except (ValueError, TypeError, ZeroDivisionError):
            continue
    return True


def _counterexample(subject, lhs, rhs):
    """Small values meeting the constraints where lhs ≠ rhs (deterministic search)."""
    syms = sorted((lhs - rhs).free_symbols, key=lambda s: s.name)
    if len(syms) > 4:
        return None
    for vals in itertools.product((1, 2, 4, 8, 64, 512), repeat=len(syms)):
        cx = {s.name: v for s, v in zip(syms, vals)}
        if satisfies(subject, cx) and evaluate_exact(lhs, cx) != evaluate_exact(rhs, cx):
            return cx
    return None


def _numeric(kind, expr, values, claimed, where=""):
    try:
        value = evaluate_exact(expr, values)
    except ValueError as e:
        return result(kind, "error", f"cannot evaluate {_pretty(expr)}: {e}")
    if not value.is_number or not value.is_real:
        return result(kind, "error", f"{_pretty(expr)} at {show_values(values)} is not a real number: {value}")
    exact = value if value.is_Rational else None
    computed = to_fraction(exact) if exact is not None else None
    ok = claimed.matches(exact) if exact is not None else abs(float(value) - float(claimed.value)) <= float(claimed.tolerance)
    shown = num(computed) if computed is not None else f"{float(value):.10g}"
    unit = " bytes" if claimed.unit else ""
    at = f" at {show_values(values)}" if values else ""
    summary = (f"{_pretty(expr)}{at}{where} = {shown}{unit}; claimed {claimed.describe()}")
    return result(kind, "holds" if ok else "refuted", summary, "symbolic" if kind == "numeric" else "config",
                  expr=_pretty(expr), at=dict(values), computed=shown, claimed=claimed.text,
                  claimed_value=num(claimed.value), tolerance=num(claimed.tolerance))


def numeric(ctx, check):
    """expr at the values is the claimed figure, exact or within half a unit of its last digit."""
    return _numeric("numeric", check["expr"], dict(check.get("at") or {}), check["claimed"])


def config(ctx, check):
    """expr on a real model's recorded configuration (with its citation) is the claimed figure."""
    model = check["model"]
    r = _numeric("config", check["expr"], dict(model.values), check["claimed"], where="")
    summary = r.summary.replace(f" at {show_values(model.values)}", f" for {model.name}") + f" [{model.citation}]"
    return type(r)(r.kind, r.verdict, summary, r.details, "config")


# -- dominance and crossover -----------------------------------------------------------------

def _region(relation):
    """(var, bound, lo, hi) in terms of t = var/bound for a relation like n < d or n > 2*d."""
    lhs, rhs = relation.lhs, relation.rhs
    if not isinstance(lhs, sympy.Symbol):
        raise ValueError(f"the region must be written 'symbol < expression', got {_pretty(relation)}")
    if isinstance(relation, (sympy.StrictLessThan, sympy.LessThan)):
        return lhs, rhs, sympy.Integer(0), sympy.Integer(1)
    if isinstance(relation, (sympy.StrictGreaterThan, sympy.GreaterThan)):
        return lhs, rhs, sympy.Integer(1), sympy.oo
    raise ValueError(f"the region must be '<' or '>', got {_pretty(relation)}")


def _ratio_in(var, bound, larger, smaller):
    """larger/smaller with var = t·bound, as a function of t alone (or ValueError)."""
    t = sympy.Symbol("t", positive=True)
    r = sympy.cancel((larger / smaller).subs(var, t * bound))
    if r.free_symbols - {t}:
        raise ValueError(f"larger/smaller depends on more than {var}/{_pretty(bound)}: {_pretty(r)}")
    return t, r


def _crossovers(t, r):
    """Positive real t where r(t) = 1, sorted (exact)."""
    roots = sympy.solve(sympy.numer(sympy.together(r - 1)), t)
    return sorted({x for x in roots if x.is_real and x.is_positive}, key=lambda x: float(x))


def _example_point(ctx, var, bound, tval, fixed):
    """Concrete values with var = tval·bound: the bound's symbols from ``fixed`` (else 64, or h=1)."""
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


def dominance(ctx, check):
    """larger > smaller: at a point (``at``), over a region (``where``: n < d), and/or a claimed
    crossover (``crossover``: n = d) against the exact one."""
    larger, smaller = check["larger"], check["smaller"]
    pretty = f"{_pretty(larger)} > {_pretty(smaller)}"
    parts, verdict, details = [], "holds", {"larger": _pretty(larger), "smaller": _pretty(smaller)}
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
                    raise ValueError(f"a crossover is written 'symbol = expression', got {_pretty(rel)}")
                var, bound = rel.lhs, rel.rhs
            t, r = _ratio_in(var, bound, larger, smaller)
            cross = _crossovers(t, r)
        except (ValueError, NotImplementedError, TypeError) as e:
            return result("dominance", "error", f"cannot decide {pretty}: {e}", "symbolic")
        real = ", ".join(f"{var} = {_pretty(c * bound)}" for c in cross) or "none"
        details["crossover"] = real
        if key == "crossover":
            claimed_t = sympy.Integer(1)
            ok = len(cross) == 1 and sympy.simplify(cross[0] - claimed_t) == 0
            parts.append(f"claimed crossover {var} = {_pretty(bound)}, exact {real}")
            if not ok:
                verdict = "refuted"
                details["claimed_crossover"] = f"{var} = {_pretty(bound)}"
            continue
        # region lo < t < hi: test every sub-interval between crossovers inside it
        cuts = [lo] + [c for c in cross if lo < c < hi] + [hi]
        bad = None
        for x, y in zip(cuts, cuts[1:]):
            mid = (x + y) / 2 if y != sympy.oo else x + 1
            if not bool(r.subs(t, mid) > 1):
                bad = mid
                break
        region = _pretty(rel)
        if bad is None:
            parts.append(f"{pretty} everywhere in {region} (crossover {real})")
        else:
            cx = _example_point(ctx, var, bound, bad, at)
            a, b = evaluate_exact(larger, cx), evaluate_exact(smaller, cx)
            parts.append(f"fails in {region}: at {show_values(cx)}, {num(a)} ≤ {num(b)} (exact crossover {real})")
            details["counterexample"] = {**cx, "larger": num(a), "smaller": num(b)}
            verdict = "refuted"
    return result("dominance", verdict, f"{pretty}: " + "; ".join(parts), "symbolic", **details)


# -- asymptotic class ------------------------------------------------------------------------

def asymptotic(ctx, check):
    """expr ∈ O(of) / Θ(of) as the listed symbols → ∞: the limit of expr/of along every path
    symbols = t^a (a ∈ {0,1,2,3}^k, not all 0) is finite (O) and also nonzero (Θ)."""
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
                          f"{_pretty(expr)} is not {cls}({_pretty(of)}): along {how}, t → ∞, "
                          f"the ratio → {_pretty(lim)}", "symbolic", path=how, limit=_pretty(lim))
    sym = "Θ" if cls == "Theta" else "O"
    return result("asymptotic", "holds",
                  f"{_pretty(expr)} = {sym}({_pretty(of)}) as {', '.join(map(str, grow))} → ∞ "
                  f"(ratio bounded{' and bounded away from 0' if cls == 'Theta' else ''} along every path)",
                  "symbolic", ratio=_pretty(ratio))


def _leading_terms(ratio, grow):
    """(numerator, denominator) of a ratio of polynomials in the growing symbols, as Polys whose
    coefficients may hold the other symbols; None when it is not one (sqrt, log, ...)."""
    num_, den = sympy.fraction(ratio)
    try:
        pn, pd = sympy.Poly(num_, *grow), sympy.Poly(den, *grow)
    except sympy.PolynomialError:
        return None
    if pn.is_zero or pd.is_zero:
        return None
    return pn, pd


def _path_limit(leading, exps):
    """The limit, t → ∞, of numerator/denominator with each growing symbol = t^a: a monomial
    Π sᵢ^mᵢ becomes t^(a·m), so each polynomial's degree in t is the largest a·m whose
    coefficients do not sum to 0, and that sum is its leading coefficient (exact arithmetic;
    the same as cancelling the substituted ratio, without building it)."""
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


def _lead(poly, exps):
    groups = {}
    for monom, coeff in poly.terms():
        k = sum(a * m for a, m in zip(exps, monom))
        groups[k] = groups.get(k, 0) + coeff
    for k in sorted(groups, reverse=True):
        c = sympy.expand(groups[k])
        if c != 0:
            return k, c
    return 0, sympy.Integer(0)      # every group cancels: the polynomial is 0 along this path


def unverifiable(ctx, check):
    return result("unverifiable", "unverifiable", check["reason"])
