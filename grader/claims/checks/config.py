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
FIELDS = {"model": ("model", True), "expr": ("expr", True), "claimed": ("figure", True),
          "values": ("values", False), "tolerance": ("margin", False), "unit": ("unit", False)}
MEASURES = False
HELP = "expr evaluated on a real model's recorded configuration is the claimed figure"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    """The model records a value for every symbol the expression uses."""
    model = params["model"]
    added = dict(params.get("values") or {})
    lost = sorted(site.free(params["expr"]) - set(model.values) - set(added))
    if lost:
        site.error(f"model {model.key!r} records no value for {', '.join(lost)}, which the expression uses "
                   f"(a check may add values: values: {{{lost[0]}: ...}})", site.mapping.loc_of("expr"))
        return False
    clash = sorted(k for k in added if k in model.values)
    if clash:
        site.error(f"model {model.key!r} records {', '.join(clash)} already (from {model.citation}); 'values' "
                   f"may only add what the model card does not hold", site.mapping.loc_of("values"))
        return False
    return not added or site.meets_constraints({**model.values, **added}, "the model's values with the check's")


def run(ctx: Context, check: Check) -> CheckResult:
    """expr on a real model's recorded configuration (with its citation) is the claimed figure."""
    from ..tolerance import with_tolerance
    model = check["model"]
    added = dict(check.get("values") or {})
    values = {**model.values, **added}
    r = figure_result("config", check["expr"], values, with_tolerance(check["claimed"], check.get("tolerance")),
                      where="", method="config", check=check)
    extra = f" with {show_values(added)}" if added else ""
    summary = r.summary.replace(f" at {show_values(values)}", f" for {model.name}{extra}") + f" [{model.citation}]"
    return type(r)(r.kind, r.verdict, summary, r.details, "config")
