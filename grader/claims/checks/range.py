"""`range`: a derived quantity (expr at the given values) lies within [lo, hi], bounds included.

    - {kind: range, expr: d_k, at: {d: 512, h: 8}, lo: 32, hi: 128}
    - {kind: range, expr: "4*b*h*n^2", at: {b: 32, h: 8, n: 128}, hi: 1e8}

Either bound may be left out (no lower or no upper limit), not both; the value is exact
(fractions stay fractions), compared with the bounds exactly. Where the expression's symbols
declare units, it is evaluated in base units (bytes, FLOPs, seconds, their ratios) and the bounds
are read in those units: X/W with X in GB and W in GB/s lies within [0.007, 0.008] seconds.
"""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .common import evaluate_exact, needs_values, num, pretty, result, show_values

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "range"
FIELDS = {"expr": ("expr", True), "at": ("values", False), "lo": ("real", False), "hi": ("real", False)}
MEASURES = False
HELP = "expr evaluated at the given values lies within [lo, hi] (bounds included; either may be left out)"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    lo, hi = params.get("lo"), params.get("hi")
    if lo is None and hi is None:
        site.error(f"{site.what} needs 'lo', 'hi' or both (the range's bounds)", site.mapping.loc)
        return False
    if lo is not None and hi is not None and lo > hi:
        site.error(f"{site.what}: lo ({lo}) is above hi ({hi}): an empty range", site.mapping.loc_of("lo"))
        return False
    return needs_values(site, params, [params["expr"]], "the expression uses it")


def _bound(x: Any) -> Fraction:
    return Fraction(str(x)) if isinstance(x, float) else Fraction(x)    # 0.1 as written, not its binary value


def run(ctx: Context, check: Check) -> CheckResult:
    """lo <= expr(at) <= hi, exactly."""
    from ..figures import to_fraction
    from ..dimensions import shown_unit
    from ..spec_units import scale_expr
    expr, at = check["expr"], dict(check.get("at") or {})
    unit = shown_unit(check.get("_dim"))
    lo, hi = check.get("lo"), check.get("hi")
    shown_range = f"[{'-∞' if lo is None else num(_bound(lo))}, {'∞' if hi is None else num(_bound(hi))}]"
    try:
        value = evaluate_exact(scale_expr(expr, check.get("_scale") or {}), at)
    except ValueError as e:
        return result("range", "error", f"cannot evaluate {pretty(expr)}: {e}")
    if not value.is_Rational:
        return result("range", "error", f"{pretty(expr)} at {show_values(at)} is not an exact number: {value}")
    v = to_fraction(value)
    where = f" at {show_values(at)}" if at else ""
    below = lo is not None and v < _bound(lo)
    above = hi is not None and v > _bound(hi)
    if below or above:
        side = f"below {num(_bound(lo))}" if below else f"above {num(_bound(hi))}"
        return result("range", "refuted", f"{pretty(expr)}{where} = {num(v)}{unit}, {side} (range {shown_range})",
                      "symbolic", expr=pretty(expr), at=at, value=num(v), lo=lo, hi=hi)
    return result("range", "holds", f"{pretty(expr)}{where} = {num(v)}{unit}, within {shown_range}", "symbolic",
                  expr=pretty(expr), at=at, value=num(v), lo=lo, hi=hi)
