"""`equivalence`: two implementations give the same outputs on seeded inputs, within a tolerance
(single_head: one head as wide as the model, with the same weights)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..figures import fmt
from .common import result, show_values
from .measured import mha_values

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "equivalence"
_IMPLEMENTATIONS = "fused|per_head|torch|single_head"
FIELDS = {"a": ("choice:" + _IMPLEMENTATIONS, True), "b": ("choice:" + _IMPLEMENTATIONS, True),
          "at": ("values", True), "seed": ("seed", False), "tolerance": ("tolerance", False)}
MEASURES = True
HELP = ("two implementations give the same outputs on seeded inputs, within a tolerance "
        "(single_head: one head as wide as the model, with the same weights)")


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    return mha_values(site, params, {"d", "h"})


def requests(ctx: Context, check: Check) -> list[dict[str, Any]]:
    return [{"equivalence": {"a": check["a"], "b": check["b"], "values": {k: int(v) for k, v in check["at"].items()},
                             "seed": int(check.get("seed", 0)), "device": ctx.device}}]


def run(ctx: Context, check: Check) -> CheckResult:
    """Two implementations (fused, per_head, torch.nn.MultiheadAttention) on the same seeded
    weights and inputs: outputs and attention weights agree within the tolerance, and the
    parameter counts are equal."""
    (req,) = requests(ctx, check)
    got = ctx.measured(req)
    seed, tol = req["equivalence"]["seed"], float(check.get("tolerance", 1e-5))
    err, (pa, pb) = got["max_abs_diff"], got["params"]
    ok = err <= tol and pa == pb
    summary = (f"{check['a']} vs {check['b']} at {show_values(got['sizes'])}, seed {seed}, "
               f"{got['device']}: max |Δ| = {err:.2e} (tolerance {tol:g}); parameters {fmt(pa)} vs {fmt(pb)}")
    return result("equivalence", "holds" if ok else "refuted", summary, "measured",
                  max_abs_diff=err, params=[pa, pb])
