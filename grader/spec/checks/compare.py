"""`compare`: two measured quantities (or one in two layouts): left is less / equal / greater
than right."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import result, show_values
from .measured import MODEL_FIELDS, measured, mha_values, request, show, sizes_of

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "compare"
FIELDS = {"left": ("quantity", True), "right": ("quantity", True), "at": ("values", True),
          "left_layout": ("choice:fused|per_head", False), "right_layout": ("choice:fused|per_head", False),
          "claimed": ("choice:less|equal|greater", True), **MODEL_FIELDS}
MEASURES = True
HELP = "two measured quantities (or one in two layouts): left is less / equal / greater than right"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    return mha_values(site, params, sizes_of(params, params["left"], params["right"]))


def requests(ctx: Context, check: Check) -> list[dict[str, Any]]:
    return [request(check, check[side], check["at"], check.get(f"{side}_layout")) for side in ("left", "right")]


def run(ctx: Context, check: Check) -> CheckResult:
    """Two measured quantities (or one quantity in two layouts): claimed less / equal / greater."""
    at = dict(check["at"])
    names = []
    for side in ("left", "right"):
        layout = check.get(f"{side}_layout")
        names.append(check[side] + (f" ({layout})" if layout else ""))
    left = measured(ctx, check, check["left"], at, check.get("left_layout"))
    right = measured(ctx, check, check["right"], at, check.get("right_layout"))
    rel = "less" if left < right else "equal" if left == right else "greater"
    sym = {"less": "<", "equal": "=", "greater": ">"}
    summary = (f"measured at {show_values(at)}: {names[0]} {show(left)} {sym[rel]} {names[1]} {show(right)}; "
               f"claimed {names[0]} {sym[check['claimed']]} {names[1]}")
    return result("compare", "holds" if rel == check["claimed"] else "refuted", summary, "measured",
                  left=left, right=right)
