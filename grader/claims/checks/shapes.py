"""`shapes`: the shapes of the named intermediates of mha's trace (meta device)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import result, show_values
from .measured import measured, mha_values, request, sizes_of

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "shapes"
FIELDS = {"at": ("values", True), "shapes": ("shapes", True)}
MEASURES = True
HELP = "shapes of the named intermediates of mha's trace (meta device)"


def _shape_quantity(name: Any) -> Any:
    return name if name.startswith("tensor.") else f"shape.{name}"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    return mha_values(site, params, sizes_of(params, "shape.Q"))


def requests(ctx: Context, check: Check) -> list[dict[str, Any]]:
    return [request(check, _shape_quantity(name), check["at"]) for name in check["shapes"]]


def run(ctx: Context, check: Check) -> CheckResult:
    """The shapes of the named intermediates of mha.trace at the given sizes (meta device)."""
    at = dict(check["at"])
    wrong, seen = [], []
    for name, claimed in check["shapes"].items():
        got = tuple(measured(ctx, check, _shape_quantity(name), at))
        seen.append(f"{name} {got}")
        if got != tuple(claimed):
            wrong.append(f"{name}: claimed {tuple(claimed)}, traced {got}")
    if wrong:
        return result("shapes", "refuted", f"at {show_values(at)}: " + "; ".join(wrong), "measured",
                      mismatches=wrong)
    return result("shapes", "holds", f"traced at {show_values(at)}: " + ", ".join(seen), "measured")
