"""`hardware`: a claim about an accelerator, checked against its cited card (the spec's
``hardware:`` section, :mod:`grader.claims.hardware`): its peak, bandwidth, memory, or a roofline
quantity derived from them (ridge point, time bound by memory, time bound by compute)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import result

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "hardware"
FIELDS = {"card": ("card", True), "quantity": ("choice:peak|bandwidth|memory|ridge|time_memory|time_compute", True),
          "dtype": ("choice:fp64|fp32|tf32|fp16|bf16|fp8|int8|fp4", False), "bytes": ("figure", False),
          "flops": ("figure", False), "claimed": ("figure", True), "tolerance": ("margin", False)}
MEASURES = False
HELP = "a figure of an accelerator (peak, bandwidth, memory) or a roofline quantity derived from its cited card"
_NEEDS = {"peak": ("dtype",), "ridge": ("dtype",), "time_compute": ("dtype", "flops"), "time_memory": ("bytes",),
          "bandwidth": (), "memory": ()}


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    """The fields the quantity needs, and only those; amounts in their dimension."""
    from ..dimensions import describe
    q = params["quantity"]
    need = _NEEDS[q]
    ok = True
    for f in ("dtype", "bytes", "flops"):
        if f in need and f not in params:
            site.error(f"a hardware check of {q} needs {f!r}", site.mapping.loc)
            ok = False
        elif f in params and f not in need:
            site.error(f"a hardware check of {q} does not take {f!r} (it would be ignored)", site.mapping.key_loc(f))
            ok = False
    for f, dim in (("bytes", (("byte", 1),)), ("flops", (("flop", 1),))):
        fig = params.get(f)
        if fig is not None and fig.dimension not in (None, dim):
            site.error(f"{f} must be in {describe(dim)}, got {fig.text!r} ({describe(fig.dimension)})",
                       site.mapping.loc_of(f))
            ok = False
    card = params["card"]
    if ok and "dtype" in need and params["dtype"] not in card.peak:
        site.error(f"hardware {card.key!r} records no peak for {params['dtype']}; it has "
                   f"{', '.join(card.peak) or 'none'}", site.mapping.loc_of("dtype"))
        ok = False
    return ok


def run(ctx: Context, check: Check) -> CheckResult:
    from ..dimensions import mismatch, shown_unit
    from ..figures import fmt
    from ..hardware import QUANTITIES, value
    from ..tolerance import with_tolerance
    card, q = check["card"], check["quantity"]
    amount = check.get("bytes") or check.get("flops")
    try:
        got, how = value(card, q, check.get("dtype"), amount.value if amount is not None else None)
    except ValueError as e:
        return result("hardware", "error", str(e))
    dim = QUANTITIES[q]
    claimed = with_tolerance(check["claimed"], check.get("tolerance"))
    wrong = mismatch(claimed.dimension, dim, q)
    ok = claimed.matches(got) and not wrong
    if amount is not None:
        how = how.replace("= bytes /", f"= {amount.text} /").replace("= FLOPs /", f"= {amount.text} /")
    summary = (f"{how} = {fmt(got)}{shown_unit(dim) or ' bytes'}; claimed {claimed.describe()}"
               + ("" if ok else " (differs)") + f" [{card.citation}]")
    if wrong:
        summary = f"{wrong}: {summary}"
    return result("hardware", "holds" if ok else "refuted", summary, "config", quantity=q, card=card.key,
                  computed=fmt(got))
