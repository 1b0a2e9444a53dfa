"""`distribution`: a claim about a distribution over random inputs — the mean, the variance or a tail
probability of q·k, or of the largest weight / the entropy of softmax over n scores — checked by Monte
Carlo with a stated seed, sample size and confidence bound (grader.claims.statistics, in the measuring
process), and symbolically with sympy.stats where it can (the mean and variance of q·k).

    {kind: distribution, quantity: dot, statistic: variance, at: {d_k: 64}, expected: d_k}
    -> holds: variance 63.8 ± 1.9 (95%) at d_k = 64, 20,000 samples (seed 0) ...

Holds when the expected value lies within the estimate's confidence bound (widened by a stated
``tolerance``), at every point (``at``, and each value of ``vary``); with ``trend``, when the estimates
rise (or fall) from each point to the next by more than both bounds. The bounds are large-sample
normal approximations (mha.experiments.stats); tests/test_spec_distribution.py checks their coverage.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import num, pretty, result

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "distribution"
FIELDS = {"quantity": ("choice:dot|softmax_max|softmax_entropy", True),
          "statistic": ("choice:mean|variance|tail", True), "at": ("stat_sizes", True),
          "vary": ("stat_vary", False), "expected": ("stat_expr", False), "claimed": ("figure", False),
          "trend": ("choice:increasing|decreasing", False), "threshold": ("real", False),
          "components": ("choice:normal|uniform|rademacher", False), "scaled": ("bool", False),
          "samples": ("int", False), "seed": ("seed", False), "level": ("real", False),
          "tolerance": ("margin", False)}
MEASURES = True
HELP = ("a mean, variance or tail probability over random inputs is the expected value, within a Monte Carlo "
        "confidence bound (and symbolically, with sympy.stats, where it can)")
DEFAULT_SAMPLES = 20_000
NAMES = {"dot": "q·k", "softmax_max": "max softmax weight", "softmax_entropy": "softmax entropy"}


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    from ..statistics import MAX_SAMPLES, MAX_WORK, work

    def bad(field: str, message: str) -> bool:
        site.error(f"a distribution check: {message}",
                   site.mapping.loc_of(field) if field in site.mapping else site.mapping.loc)
        return False

    goals = [k for k in ("expected", "claimed", "trend") if k in params]
    if len(goals) != 1:
        return bad("expected", "give one of 'expected' (an expression in d_k and n), 'claimed' (a figure) or "
                               "'trend' (increasing, decreasing, with vary)")
    if "trend" in params and not params.get("vary"):
        return bad("trend", "a trend needs 'vary' (e.g. vary: {d_k: [16, 64, 256]})")
    if params["statistic"] == "tail" and "threshold" not in params:
        return bad("statistic", "a tail probability P(X > threshold) needs 'threshold'")
    samples = params.get("samples", DEFAULT_SAMPLES)
    if not 100 <= samples <= MAX_SAMPLES:
        return bad("samples", f"samples must be from 100 to {MAX_SAMPLES:,}, got {samples:,}")
    level = params.get("level", 0.95)
    if not 0.5 <= level <= 0.999:
        return bad("level", f"level must be a confidence level from 0.5 to 0.999, got {level}")
    for point in points(params):
        if params["quantity"] != "dot" and "n" not in point:
            return bad("at", f"{params['quantity']} is over n keys: give n in 'at'")
        if work(point, params["quantity"], samples) > MAX_WORK:
            return bad("samples", f"{samples:,} samples at {_show(point)} would draw "
                                  f"{work(point, params['quantity'], samples):,} random numbers, more than "
                                  f"{MAX_WORK:,}")
        if "expected" in params:
            free = {s.name for s in params["expected"].free_symbols} - set(point)
            if free:
                return bad("expected", f"the expected value uses {', '.join(sorted(free))}: give it in 'at'")
    return True


def points(params: Any) -> list[dict[str, int]]:
    at, vary = dict(params["at"]), dict(params.get("vary") or {})
    if not vary:
        return [at]
    (name, values), = vary.items()
    return [{**at, name: v} for v in values]


def request(check: Any, point: dict[str, int]) -> dict[str, Any]:
    return {"statistic": {"quantity": check["quantity"], "statistic": check["statistic"], "sizes": dict(point),
                          "components": check.get("components", "normal"), "scaled": bool(check.get("scaled", False)),
                          "threshold": check.get("threshold"), "samples": check.get("samples", DEFAULT_SAMPLES),
                          "seed": check.get("seed", 0), "level": check.get("level", 0.95)}}


def requests(ctx: Context, check: Check) -> list[dict[str, Any]]:
    return [request(check, p) for p in points(check)]


def _show(point: dict[str, int]) -> str:
    return ", ".join(f"{k} = {v:,}" for k, v in point.items())


def _what(check: Any) -> str:
    s = check["statistic"]
    thing = NAMES[check["quantity"]] + (" (scaled by 1/√d_k)" if check.get("scaled") else "")
    if s == "tail":
        return f"P({thing} > {check['threshold']})"
    return f"{s} of {thing}"


def run(ctx: Context, check: Check) -> CheckResult:
    """Each point's estimate and bound against the expected value (or the trend), and sympy.stats."""
    from ..tolerance import with_tolerance
    got = [(p, ctx.measured(request(check, p))) for p in points(check)]
    first = got[0][1]
    how = (f"{first['samples']:,} samples (seed {first['seed']}, {check.get('components', 'normal')} "
           f"components)")
    pct = f"{round(first['level'] * 100, 1):g}%"
    shown = [f"{e['estimate']:.4g} ± {e['half']:.2g} ({pct}) at {_show(p)}" for p, e in got]
    ok, notes = True, []
    tol = check.get("tolerance")
    if check.get("trend"):
        up = check["trend"] == "increasing"
        for (p0, a), (p1, b) in zip(got, got[1:]):
            step = (b["estimate"] - b["half"]) - (a["estimate"] + a["half"]) if up else \
                (a["estimate"] - a["half"]) - (b["estimate"] + b["half"])
            if step <= 0:
                ok = False
                notes.append(f"from {_show(p0)} to {_show(p1)} the bounds do not show it {check['trend']}")
        notes.append(f"claimed {check['trend']}")
    else:
        for p, e in got:
            if "expected" in check.params:
                from .common import evaluate_exact
                value = evaluate_exact(check["expected"], p)
                want, label = float(value), f"{pretty(check['expected'])} = {num(value) if value.is_Rational else f'{float(value):.6g}'}"
                slack = float(tol.allowed(value)) if tol is not None and tol.kind != "digits" and value.is_Rational else 0.0
            else:
                fig = with_tolerance(check["claimed"], tol)
                want, label, slack = float(fig.value), fig.describe(), float(fig.tolerance)
            inside = abs(e["estimate"] - want) <= e["half"] + slack
            ok &= inside
            notes.append(f"expected {label} at {_show(p)}: " + ("within the bound" if inside else
                                                               f"outside it (differs by {abs(e['estimate'] - want):.3g})"))
    sym = symbolic(check)
    if sym is not None:
        s_ok, s_text = sym
        ok &= s_ok
        notes.append(s_text)
    verdict = "holds" if ok else "refuted"
    summary = f"{verdict}: {_what(check)} " + "; ".join(shown) + f", {how}; " + "; ".join(notes)
    return result("distribution", verdict, summary, "measured",
                  estimates=[{"at": p, **{k: e[k] for k in ("estimate", "half", "level", "samples", "seed")}}
                             for p, e in got])


def symbolic(check: Any) -> tuple[bool, str] | None:
    """sympy.stats: the mean or variance of q·k = Σ q_i k_i over d_k independent terms, against the
    expected expression (None where sympy.stats cannot say: softmax, tails, a claimed figure)."""
    if check["quantity"] != "dot" or check["statistic"] == "tail" or "expected" not in check.params:
        return None
    import sympy
    from sympy import stats as S
    comp = check.get("components", "normal")

    def component(name: str) -> Any:
        if comp == "normal":
            return S.Normal(name, 0, 1)
        if comp == "uniform":
            return S.Uniform(name, -sympy.sqrt(3), sympy.sqrt(3))
        return S.Rademacher(name)

    x, y = component("q_1"), component("k_1")
    d_k = sympy.Symbol("d_k", positive=True, integer=True)
    scale = 1 / sympy.sqrt(d_k) if check.get("scaled") else 1
    if check["statistic"] == "mean":
        value = sympy.simplify(d_k * S.E(x * y) * scale)
        what = "E[q·k] = d_k·E[q_1 k_1]" + ("/√d_k" if scale != 1 else "")
    else:
        value = sympy.simplify(d_k * S.variance(x * y) * scale ** 2)
        what = "Var(q·k) = d_k·Var(q_1 k_1)" + ("/d_k" if scale != 1 else "")
    expected = check["expected"].xreplace({s: d_k for s in check["expected"].free_symbols if s.name == "d_k"})
    same = sympy.simplify(value - expected) == 0
    return same, (f"symbolically (sympy.stats, d_k independent terms): {what} = {pretty(value)}"
                  + ("" if same else f", not {pretty(expected)}"))

