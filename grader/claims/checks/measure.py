"""`measure`: a quantity measured on the real mha equals the claimed figure and/or formula."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..figures import fmt
from .common import evaluate_exact, pretty, result, show_values
from .measured import MODEL_FIELDS, measured, mha_values, request, show, sizes_of

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "measure"
FIELDS = {"quantity": ("quantity", True), "at": ("values", True), "claimed": ("figure", False),
          "formula": ("expr", False), "layout": ("choice:fused|per_head", False), "bias": ("bool", False),
          "tolerance": ("margin", False), **MODEL_FIELDS}
MEASURES = True
HELP = "a quantity measured on the real mha equals the claimed figure and/or formula"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    return mha_values(site, params, sizes_of(params, params["quantity"]))


def requests(ctx: Context, check: Check) -> list[dict[str, Any]]:
    return [request(check, check["quantity"], check["at"])]


def run(ctx: Context, check: Check) -> CheckResult:
    """A quantity measured on mha against the claimed figure and/or the formula at the same sizes;
    when the figure and the formula disagree with each other, that is said."""
    at, q = dict(check["at"]), check["quantity"]
    got = measured(ctx, check, q, at)
    from ..settings import describe_settings
    settings = describe_settings(request(check, q, at))
    how = f" ({settings})" if settings else ""
    parts, ok, details = [f"measured {q} = {show(got)} at {show_values(at)}{how}"], True, {"measured": got, "at": at,
                                                                                "quantity": q}
    if settings:
        details["settings"] = settings
    formula = check.get("formula")
    if formula is not None:
        from ..spec_units import scale_values
        value = evaluate_exact(formula, scale_values(at, check.get("_scale") or {}))
        f_ok = value == got
        ok &= f_ok
        parts.append(f"formula {pretty(formula)} = {fmt(value)}" + ("" if f_ok else " (differs)"))
        details["formula"] = pretty(formula)
        details["formula_value"] = fmt(value)
    claimed = check.get("claimed")
    if claimed is not None:
        from ..tolerance import with_tolerance
        claimed = with_tolerance(claimed, check.get("tolerance"))
        from ..dimensions import describe, mismatch
        wrong = mismatch(claimed.dimension, check.get("_dim"), q)
        c_ok = claimed.matches(got) and not wrong
        ok &= c_ok
        if wrong:
            parts[0] = f"measured {q} = {show(got)} {describe(check.get('_dim'))} at {show_values(at)}{how}"
            parts.insert(0, wrong)
            details["dimension"] = wrong
        parts.append(f"claimed {claimed.describe()}" + ("" if c_ok else " (differs)"))
        details["claimed"] = claimed.text
    return result("measure", "holds" if ok else "refuted", "; ".join(parts), "measured", **details)
