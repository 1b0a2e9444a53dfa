"""Counts a sentence names that mha measures: when a statement gives a figure for the attention's
parameters, its FLOPs (projections, QKᵀ, A·V, total), its attention matrices or their bytes, and
the sizes it needs were defined above it, the drafter proposes a ``measure`` check of that
quantity at those sizes, and says beforehand what the measurement will give, from the formulas
of mha's counting (1 multiply-add = 2 FLOPs; the same formulas as spec/17-08.yaml's)."""
from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from .arith import show
from .model import Proposed

F = Fraction
_Q = tuple[str, str, tuple[str, ...], Callable[[dict[str, F]], F]]

# (pattern in the statement, quantity, sizes it needs, what mha gives)
RULES: tuple[tuple[re.Pattern[str], _Q], ...] = (
    (re.compile(r"project\w*.*FLOP|FLOP.*project", re.I | re.S),
     ("flops.projections", "8*n*d^2", ("d", "h", "n"), lambda v: 8 * v["n"] * v["d"] ** 2)),
    (re.compile(r"(?:attention matri|QKᵀ|QK\^T|scores).*FLOP", re.I | re.S),
     ("flops.qk", "2*n^2*d", ("d", "h", "n"), lambda v: 2 * v["n"] ** 2 * v["d"])),
    (re.compile(r"(?:value-weighted|weighted sum|A·V).*FLOP", re.I | re.S),
     ("flops.av", "2*n^2*d", ("d", "h", "n"), lambda v: 2 * v["n"] ** 2 * v["d"])),
    (re.compile(r"\bTotal\b.*FLOP", re.S),
     ("flops.matmul_total", "8*n*d^2 + 4*n^2*d", ("d", "h", "n"), lambda v: 8 * v["n"] * v["d"] ** 2 + 4 * v["n"] ** 2 * v["d"])),
    (re.compile(r"attention (?:weight )?matrices(?!.*(?:FLOP|bytes|MB))", re.I | re.S),
     ("attention.count", "b*h", ("d", "h", "n", "b"), lambda v: v["b"] * v["h"])),
    (re.compile(r"(?:bytes|MB|GB).*(?:float32|fp32)|(?:float32|fp32).*(?:bytes|MB|GB)", re.I | re.S),
     ("attention.bytes.fp32", "4*b*h*n^2", ("d", "h", "n", "b"), lambda v: 4 * v["b"] * v["h"] * v["n"] ** 2)),
)
_PARAMS = re.compile(r"\b(?:Total|total)\b[^.]{0,60}\bparam", re.S)


def sizes(values: dict[str, F]) -> dict[str, F]:
    """The mha sizes the text has defined: d (or d_model), h, n, b (or batch_size)."""
    out = {}
    for key, names in (("d", ("d", "d_model")), ("h", ("h",)), ("n", ("n",)), ("b", ("b", "batch_size"))):
        for name in names:
            v = values.get(name)
            if v is not None and v.denominator == 1 and 0 < v < 10**7:
                out[key] = v
                break
    return out


def propose(text: str, claimed: str, value: F, tol: F, values: dict[str, F]) -> Proposed | None:
    """A measure check of the quantity the statement names, or None."""
    v = sizes(values)
    if "d" not in v or "h" not in v or v["d"] % v["h"]:
        return None
    chosen: _Q | None = None
    for pattern, q in RULES:
        if pattern.search(text[:2000]):
            chosen = q
            break
    if chosen is None and _PARAMS.search(text[:2000]):
        nobias = 4 * v["d"] ** 2
        chosen = (("params_nobias", "4*d^2", ("d", "h"), lambda s: 4 * s["d"] ** 2) if abs(value - nobias) <= tol
                  else ("params", "4*d^2 + 4*d", ("d", "h"), lambda s: 4 * s["d"] ** 2 + 4 * s["d"]))
    if chosen is None:
        return None
    quantity, formula, need, gives = chosen
    if any(k not in v for k in need):
        return None
    measured = gives(v)
    at = tuple((k, str(v[k])) for k in need)
    holds = abs(measured - value) <= tol
    return Proposed("measure", (("quantity", quantity), ("at", at), ("claimed", claimed), ("formula", formula)),
                    holds, f"mha's {quantity} = {formula} = {show(measured)} at "
                           + ", ".join(f"{k}={x}" for k, x in at))
