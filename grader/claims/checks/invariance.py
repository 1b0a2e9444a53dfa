"""`invariance`: a measured quantity (and its formula) does not change as the varied symbols do."""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from .common import pretty, result, show_values
from .measured import MODEL_FIELDS, measured, mha_values, request, show, sizes_of

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "invariance"
FIELDS = {"quantity": ("quantity", True), "at": ("values", True), "vary": ("values_list", True),
          "formula": ("expr", False), "tolerance": ("margin", False), **MODEL_FIELDS}
MEASURES = True
HELP = "a measured quantity (and its formula) does not change as the varied symbols do"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    return mha_values(site, params, sizes_of(params, params["quantity"]))


def _points(check: Check) -> Any:
    at, vary = dict(check["at"]), dict(check["vary"])
    names = list(vary)
    for combo in itertools.product(*(vary[n] for n in names)):
        yield dict(zip(names, combo)), {**at, **dict(zip(names, combo))}


def requests(ctx: Context, check: Check) -> list[dict[str, Any]]:
    return [request(check, check["quantity"], point) for _, point in _points(check)]


def run(ctx: Context, check: Check) -> CheckResult:
    """The quantity is the same for every value of the varied symbols (and so is its formula)."""
    at, q, names = dict(check["at"]), check["quantity"], list(check["vary"])
    seen = {show_values(varied): measured(ctx, check, q, point) for varied, point in _points(check)}
    distinct = set(seen.values())
    listing = "; ".join(f"{k}: {show(v)}" for k, v in seen.items())
    parts = [f"{q} at {show_values(at)} — {listing}"]
    tol = check.get("tolerance")
    if tol is None or tol.kind == "digits" or not all(isinstance(v, int) for v in distinct):
        ok = len(distinct) == 1
    else:
        from ..tolerance import close
        ok = close(min(distinct), max(distinct), tol)
        parts.append(f"spread {show(max(distinct) - min(distinct))} " + ("within" if ok else "beyond")
                     + f" the {tol.describe()}")
    formula = check.get("formula")
    if formula is not None:
        import sympy
        free = {s.name for s in formula.free_symbols}
        depends = [n for n in names if n in free and sympy.diff(formula, next(s for s in formula.free_symbols
                                                                               if s.name == n)) != 0]
        parts.append(f"formula {pretty(formula)} " + (f"depends on {', '.join(depends)}" if depends
                                                       else f"is free of {', '.join(names)}"))
        if bool(depends) == ok:   # the symbolic and the measured answers differ
            parts.append("symbolic and measured disagree")
        ok &= not depends
    return result("invariance", "holds" if ok else "refuted", "; ".join(parts), "measured",
                  values={k: v for k, v in seen.items()})
