"""What the measured check kinds share (shapes, measure, compare, invariance, equivalence: each
in its module): the measurement requests they hand to the measuring process, and the
validation of the sizes mha is built and run at.

Each measured kind comes in two halves, so that the measuring (torch) can run in another
process (:mod:`grader.claims.worker`) while this one goes on with the symbolic checks:

- ``requests(ctx, check)``: the measurements the check needs, as plain data (JSON);
- ``run(ctx, check)``: the verdict, reading each measurement through ``ctx.measured(request)``.

Sizes go to :func:`grader.claims.measure.measure` (meta device: no memory, any size);
equivalence runs real numbers on the context's device, seeded.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from ..figures import fmt
from ..fields import SIZE_ORDER

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check
    from .common import Context


def show(x: Any) -> Any:
    """A measured value as the evidence writes it: a count grouped (1,048,576), a decimal number
    (an intensity) to 6 significant digits (0.445946), a shape as it is."""
    if isinstance(x, float):
        from ..figures import fmt_real
        return fmt_real(x)
    return fmt(x) if isinstance(x, int) else str(x)


# The fields a measured check may add for a transformer's quantities (grader.claims.model_sizes).
MODEL_FIELDS = {"activation": ("choice:gelu|gelu_tanh|relu|silu|swiglu", False),
                "norm": ("choice:layernorm|rmsnorm", False), "tied": ("bool", False),
                "dtype": ("choice:fp32|fp16|bf16|fp64", False), "bias": ("bool", False)}


def request(check: Check, quantity: Any, values: Any, layout: Any = None) -> dict[str, Any]:
    """One measurement: a quantity of mha(layout, bias) — or of a transformer, with the check's
    model fields — at the sizes in ``values``."""
    from ..model_sizes import is_model_quantity, model_options
    bias = check.get("bias", True)
    out = {"quantity": quantity, "at": {k: int(v) for k, v in values.items()},
           "layout": layout or check.get("layout") or "fused", "bias": bool(bias)}
    if is_model_quantity(quantity, values):
        out["model"] = model_options(check.get)
    return out


def measured(ctx: Context, check: Check, quantity: Any, values: Any, layout: Any = None) -> Any:
    return ctx.measured(request(check, quantity, values, layout))


def mha_values(site: CheckSite, params: dict[str, Any], need: Any) -> bool:
    """The sizes a measured check builds and runs mha at (``at``, and each combination of
    ``vary``): every size in ``need`` and every symbol of its formula given, positive
    integers, the spec's constraints met, h dividing d."""
    at = dict(params.get("at") or {})
    vary = dict(params.get("vary") or {})
    given = set(at) | set(vary)     # n_q and n_k instead of n: cross-attention
    if {"n_q", "n_k"} & given and ("n" in given or site.kind == "equivalence"):
        site.error(f"{site.what}: give n (self-attention) or n_q and n_k (cross-attention)"
                   + (", not both" if site.kind != "equivalence" else "; equivalence runs self-attention: give n"))
        return False
    from ..settings import strict_settings
    ok = site.missing(need, given, "mha is built and run at these sizes") and strict_sizes(site, params)
    if not params.get("_one_side"):         # a compare's sides: checked once, for both (compare.validate)
        ok = strict_settings(site, params, _quantities(params), given) and ok
    formula = params.get("formula")
    if formula is not None:
        ok &= site.missing(site.free(formula), set(at) | set(vary), "the formula uses it")
    if not ok:
        return False
    names = list(vary)
    points = [at] if not vary else [{**at, **dict(zip(names, combo))}
                                     for combo in itertools.product(*(vary[n] for n in names))]
    for point in points:
        from ..model_sizes import size_name
        for k in point:
            if size_name(k) in SIZE_ORDER and (isinstance(point[k], bool) or not isinstance(point[k], int) or point[k] <= 0):
                site.error(f"{site.what}: size {k} of mha must be a positive integer, got {point[k]!r}")
                return False
        note = f" ({', '.join(names)} from vary)" if vary else ""
        if not site.meets_constraints(point, "the values", note):
            return False
        from ..budget import size_problem
        too_big = size_problem(point)      # beyond what torch can represent, even on the meta device
        if too_big:
            site.error(f"{site.what}: sizes {', '.join(f'{k}={v:,}' for k, v in point.items())}{note} are too "
                       f"large: {too_big}")
            return False
        if "d" in point and "h" in point and point["d"] % point["h"]:
            site.error(f"{site.what}: mha needs h to divide d (d_k = d/h heads' width), got d={point['d']}, "
                       f"h={point['h']}")
            return False
        if "g" in point and "h" in point and point["h"] % point["g"]:
            site.error(f"{site.what}: mha needs g to divide h (h/g query heads share each key/value head), "
                       f"got h={point['h']}, g={point['g']}")
            return False
    return True


def _quantities(params: dict[str, Any]) -> list[Any]:
    """The quantities a check measures: its quantity (a compare's two), or those a kind names in
    ``_quantities`` (a roofline's step: its FLOPs and its bytes)."""
    if "_quantities" in params:
        return list(params["_quantities"])
    return [params[k] for k in ("quantity", "left", "right") if k in params]


def strict_sizes(site: CheckSite, params: dict[str, Any], keys: tuple[str, ...] = ("at", "vary")) -> bool:
    """Every size given in ``at:`` (and ``vary:``) is one that each measured quantity takes; else an
    error at that size saying which sizes the quantity takes (a size is never dropped silently)."""
    from ..model_sizes import describe_sizes, size_name, sizes_taken
    given = set().union(*(set(dict(params.get(k) or {})) for k in keys))
    ok = True
    for q in _quantities(params):
        need, optional = sizes_taken(q, given)
        for k in sorted(given):
            if size_name(k) in need or size_name(k) in optional:
                continue
            where = None
            for key in keys:
                m = site.mapping.get(key) if hasattr(site.mapping, "get") else None
                if m is not None and hasattr(m, "key_loc") and k in m:
                    where = m.key_loc(k)
            site.error(f"{site.what}: {k!r} is not a size of {q}, which would be measured without it; "
                       f"{q} takes {describe_sizes(q, given)}", where)
            ok = False
    return ok


def sizes_of(params: dict[str, Any], *quantities: Any) -> set[str]:
    """The sizes mha needs to measure these quantities at the check's values (n, or n_q and n_k
    where those are given: cross-attention)."""
    from ..model_sizes import size_name, sizes_taken
    given = set(dict(params.get("at") or {})) | set(dict(params.get("vary") or {}))
    alias = {size_name(k): k for k in given}         # a size the spec names otherwise (n_kv_heads: g)
    return set().union(*({alias.get(s, s) for s in sizes_taken(q, given)[0]} for q in quantities))
