"""`numeric`: expr evaluated at the given values is the claimed figure (exact, or within its
stated digits)."""
from __future__ import annotations

from .common import figure_result, needs_values

NAME = "numeric"
FIELDS = {"expr": ("expr", True), "at": ("values", False), "claimed": ("figure", True)}
MEASURES = False
HELP = "expr evaluated at the given values is the claimed figure (exact, or within its stated digits)"


def validate(site, params) -> bool:
    return needs_values(site, params, [params["expr"]], "the expression uses it")


def run(ctx, check):
    """expr at the values is the claimed figure, exact or within half a unit of its last digit."""
    return figure_result("numeric", check["expr"], dict(check.get("at") or {}), check["claimed"])
