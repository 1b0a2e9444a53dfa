"""`config`: expr evaluated on a real model's recorded configuration (with its citation) is
the claimed figure."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import figure_result, show_values

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "config"
FIELDS = {"model": ("model", True), "expr": ("expr", True), "claimed": ("figure", True)}
MEASURES = False
HELP = "expr evaluated on a real model's recorded configuration is the claimed figure"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    """The model records a value for every symbol the expression uses."""
    model = params["model"]
    lost = sorted(site.free(params["expr"]) - set(model.values))
    if lost:
        site.error(f"model {model.key!r} records no value for {', '.join(lost)}, which the expression uses",
                   site.mapping.loc_of("expr"))
    return not lost


def run(ctx: Context, check: Check) -> CheckResult:
    """expr on a real model's recorded configuration (with its citation) is the claimed figure."""
    model = check["model"]
    r = figure_result("config", check["expr"], dict(model.values), check["claimed"], where="", method="config")
    summary = r.summary.replace(f" at {show_values(model.values)}", f" for {model.name}") + f" [{model.citation}]"
    return type(r)(r.kind, r.verdict, summary, r.details, "config")
