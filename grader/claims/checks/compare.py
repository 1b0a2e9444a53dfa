"""`compare`: two measured quantities (or one in two layouts, or at two sets of sizes): left is less /
equal / greater than right, and/or left is ``ratio`` times right."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import result, show_values
from .measured import MODEL_FIELDS, measured, mha_values, request, show, sizes_of

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "compare"
FIELDS = {"left": ("quantity", True), "right": ("quantity", True), "at": ("values", False),
          "left_at": ("values", False), "right_at": ("values", False),
          "left_layout": ("choice:fused|per_head", False), "right_layout": ("choice:fused|per_head", False),
          "claimed": ("choice:less|equal|greater", False), "ratio": ("figure", False),
          "tolerance": ("margin", False), **MODEL_FIELDS}
MEASURES = True
HELP = ("two measured quantities (or one in two layouts or at two sets of sizes): left is less / equal / "
        "greater than right, and/or left is ratio times right")


def side_values(params: Any, side: str) -> dict[str, Any]:
    """The sizes one side is measured at: ``at``, with that side's ``left_at`` / ``right_at`` over it."""
    return {**dict(params.get("at") or {}), **dict(params.get(f"{side}_at") or {})}


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    if "claimed" not in params and "ratio" not in params:
        site.error("a compare check needs 'claimed' (less, equal, greater) or 'ratio' (a figure), or both",
                   site.mapping.loc)
        return False
    if not any(params.get(k) for k in ("at", "left_at", "right_at")):
        site.error("a compare check needs sizes: 'at' (both sides), and/or 'left_at' and 'right_at'",
                   site.mapping.loc)
        return False
    if not params.get("left_at") and not params.get("right_at"):      # one set of sizes for both
        return mha_values(site, params, sizes_of(params, params["left"], params["right"]))
    from ..settings import strict_settings
    given = set(dict(params.get("at") or {})) | set(dict(params.get("left_at") or {})) | set(
        dict(params.get("right_at") or {}))
    ok = strict_settings(site, params, [params["left"], params["right"]], given)
    for side in ("left", "right"):
        one = {k: v for k, v in params.items() if k not in ("left", "right", "at", "left_at", "right_at")}
        one.update(quantity=params[side], at=side_values(params, side), _one_side=True)
        ok = ok and mha_values(site, one, sizes_of(one, params[side]))
    return ok


def requests(ctx: Context, check: Check) -> list[dict[str, Any]]:
    return [request(check, check[side], side_values(check, side), check.get(f"{side}_layout"))
            for side in ("left", "right")]


def run(ctx: Context, check: Check) -> CheckResult:
    """Two measurements: the claimed relation (equal within a stated tolerance) and/or ratio."""
    from ..tolerance import close, with_tolerance
    names, values = [], []
    for side in ("left", "right"):
        layout = check.get(f"{side}_layout")
        names.append(check[side] + (f" ({layout})" if layout else ""))
        values.append(measured(ctx, check, check[side], side_values(check, side), check.get(f"{side}_layout")))
    left, right = values
    tol = check.get("tolerance")
    rel = "equal" if close(left, right, tol) else "less" if left < right else "greater"
    sym = {"less": "<", "equal": "=", "greater": ">"}
    lat, rat = side_values(check, "left"), side_values(check, "right")
    if lat == rat:
        parts = [f"measured at {show_values(lat)}: {names[0]} {show(left)} {sym[rel]} {names[1]} {show(right)}"]
    else:
        parts = [f"measured {names[0]} {show(left)} at {show_values(lat)} {sym[rel]} {names[1]} {show(right)} "
                 f"at {show_values(rat)}"]
    from ..settings import describe_settings
    settings = sorted({describe_settings(request(check, check[side], side_values(check, side)))
                       for side in ("left", "right")} - {""})
    if settings:
        parts[0] += f" ({'; '.join(settings)})"
    ok = True
    if check.get("claimed"):
        ok &= rel == check["claimed"]
        within = f" (within the {tol.describe()})" if tol is not None and tol.kind != "digits" and rel == "equal" else ""
        parts.append(f"claimed {names[0]} {sym[check['claimed']]} {names[1]}{within}")
    ratio = check.get("ratio")
    if ratio is not None:
        from fractions import Fraction

        from ..figures import fmt, fmt_real
        got = Fraction(left) / Fraction(right) if right else None
        shown = (fmt_real(float(got)) if isinstance(left, float) or isinstance(right, float) else fmt(got)) \
            if got is not None else "undefined (right is 0)"
        figure = with_tolerance(ratio, tol)
        from ..dimensions import mismatch
        wrong = mismatch(figure.dimension, check.get("_dim"), "the ratio left/right")
        if wrong:
            parts.insert(0, wrong)
        r_ok = got is not None and figure.matches(got) and not wrong
        ok &= r_ok
        parts.append(f"ratio left/right = {shown}; claimed "
                     f"{figure.describe()}" + ("" if r_ok else " (differs)"))
    return result("compare", "holds" if ok else "refuted", "; ".join(parts), "measured", left=left, right=right)
