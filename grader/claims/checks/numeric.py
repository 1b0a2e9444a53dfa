"""`numeric`: expr evaluated at the given values is the claimed figure (exact, or within its
stated digits)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import figure_result, needs_values

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "numeric"
FIELDS = {"expr": ("expr", True), "at": ("values", False), "claimed": ("figure", True),
          "tolerance": ("margin", False), "unit": ("unit", False)}
MEASURES = False
HELP = "expr evaluated at the given values is the claimed figure (exact, or within its stated digits)"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    return needs_values(site, params, [params["expr"]], "the expression uses it")


def run(ctx: Context, check: Check) -> CheckResult:
    """expr at the values is the claimed figure, exact or within half a unit of its last digit."""
    from ..tolerance import with_tolerance
    return figure_result("numeric", check["expr"], dict(check.get("at") or {}),
                         with_tolerance(check["claimed"], check.get("tolerance")), check=check)
