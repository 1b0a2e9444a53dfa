"""Measured check kinds: shapes, measure, compare, invariance, equivalence — on the real mha.

Each kind comes in two halves, so that the measuring (torch) can run in another process
(:mod:`grader.spec.worker`) while this one goes on with the symbolic checks:

- ``<kind>_requests(ctx, check)``: the measurements the check needs, as plain data (JSON);
- ``<kind>(ctx, check)``: the verdict, reading each measurement through ``ctx.measured(request)``.

Sizes go to :func:`grader.spec.measure.measure` (meta device: no memory, any size);
equivalence runs real numbers on the context's device, seeded.
"""
from __future__ import annotations

import itertools

from ..figures import fmt
from .common import evaluate_exact, result, show_values


def _show(x):
    return fmt(x) if isinstance(x, int) else str(x)


def request(check, quantity, values, layout=None) -> dict:
    """One measurement: a quantity of mha(layout, bias) at the sizes in ``values``."""
    bias = check.get("bias", True)
    return {"quantity": quantity, "at": {k: int(v) for k, v in values.items()},
            "layout": layout or check.get("layout") or "fused", "bias": bool(bias)}


def _m(ctx, check, quantity, values, layout=None):
    return ctx.measured(request(check, quantity, values, layout))


def _shape_quantity(name):
    return name if name.startswith("tensor.") else f"shape.{name}"


# -- shapes ----------------------------------------------------------------------------------

def shapes_requests(ctx, check):
    return [request(check, _shape_quantity(name), check["at"]) for name in check["shapes"]]


def shapes(ctx, check):
    """The shapes of the named intermediates of mha.trace at the given sizes (meta device)."""
    at = dict(check["at"])
    wrong, seen = [], []
    for name, claimed in check["shapes"].items():
        got = tuple(_m(ctx, check, _shape_quantity(name), at))
        seen.append(f"{name} {got}")
        if got != tuple(claimed):
            wrong.append(f"{name}: claimed {tuple(claimed)}, traced {got}")
    if wrong:
        return result("shapes", "refuted", f"at {show_values(at)}: " + "; ".join(wrong), "measured",
                      mismatches=wrong)
    return result("shapes", "holds", f"traced at {show_values(at)}: " + ", ".join(seen), "measured")


# -- measure ---------------------------------------------------------------------------------

def measure_requests(ctx, check):
    return [request(check, check["quantity"], check["at"])]


def measure(ctx, check):
    """A quantity measured on mha against the claimed figure and/or the formula at the same sizes;
    when the figure and the formula disagree with each other, that is said."""
    at, q = dict(check["at"]), check["quantity"]
    got = _m(ctx, check, q, at)
    parts, ok, details = [f"measured {q} = {_show(got)} at {show_values(at)}"], True, {"measured": got, "at": at}
    formula = check.get("formula")
    if formula is not None:
        value = evaluate_exact(formula, at)
        f_ok = value == got
        ok &= f_ok
        from .symbolic import _pretty
        parts.append(f"formula {_pretty(formula)} = {fmt(value)}" + ("" if f_ok else " (differs)"))
        details["formula"] = _pretty(formula)
        details["formula_value"] = fmt(value)
    claimed = check.get("claimed")
    if claimed is not None:
        c_ok = claimed.matches(got)
        ok &= c_ok
        parts.append(f"claimed {claimed.describe()}" + ("" if c_ok else " (differs)"))
        details["claimed"] = claimed.text
    return result("measure", "holds" if ok else "refuted", "; ".join(parts), "measured", **details)


# -- compare ---------------------------------------------------------------------------------

def compare_requests(ctx, check):
    return [request(check, check[side], check["at"], check.get(f"{side}_layout")) for side in ("left", "right")]


def compare(ctx, check):
    """Two measured quantities (or one quantity in two layouts): claimed less / equal / greater."""
    at = dict(check["at"])
    names = []
    for side in ("left", "right"):
        layout = check.get(f"{side}_layout")
        names.append(check[side] + (f" ({layout})" if layout else ""))
    left = _m(ctx, check, check["left"], at, check.get("left_layout"))
    right = _m(ctx, check, check["right"], at, check.get("right_layout"))
    rel = "less" if left < right else "equal" if left == right else "greater"
    sym = {"less": "<", "equal": "=", "greater": ">"}
    summary = (f"measured at {show_values(at)}: {names[0]} {_show(left)} {sym[rel]} {names[1]} {_show(right)}; "
               f"claimed {names[0]} {sym[check['claimed']]} {names[1]}")
    return result("compare", "holds" if rel == check["claimed"] else "refuted", summary, "measured",
                  left=left, right=right)


# -- invariance ------------------------------------------------------------------------------

def _points(check):
    at, vary = dict(check["at"]), dict(check["vary"])
    names = list(vary)
    for combo in itertools.product(*(vary[n] for n in names)):
        yield dict(zip(names, combo)), {**at, **dict(zip(names, combo))}


def invariance_requests(ctx, check):
    return [request(check, check["quantity"], point) for _, point in _points(check)]


def invariance(ctx, check):
    """The quantity is the same for every value of the varied symbols (and so is its formula)."""
    at, q, names = dict(check["at"]), check["quantity"], list(check["vary"])
    seen = {show_values(varied): _m(ctx, check, q, point) for varied, point in _points(check)}
    distinct = set(seen.values())
    listing = "; ".join(f"{k}: {_show(v)}" for k, v in seen.items())
    parts = [f"{q} at {show_values(at)} — {listing}"]
    ok = len(distinct) == 1
    formula = check.get("formula")
    if formula is not None:
        import sympy
        from .symbolic import _pretty
        free = {s.name for s in formula.free_symbols}
        depends = [n for n in names if n in free and sympy.diff(formula, next(s for s in formula.free_symbols
                                                                               if s.name == n)) != 0]
        parts.append(f"formula {_pretty(formula)} " + (f"depends on {', '.join(depends)}" if depends
                                                       else f"is free of {', '.join(names)}"))
        if bool(depends) == ok:   # the symbolic and the measured answers differ
            parts.append("symbolic and measured disagree")
        ok &= not depends
    return result("invariance", "holds" if ok else "refuted", "; ".join(parts), "measured",
                  values={k: v for k, v in seen.items()})


# -- equivalence -----------------------------------------------------------------------------

def equivalence_requests(ctx, check):
    return [{"equivalence": {"a": check["a"], "b": check["b"], "values": {k: int(v) for k, v in check["at"].items()},
                             "seed": int(check.get("seed", 0)), "device": ctx.device}}]


def equivalence(ctx, check):
    """Two implementations (fused, per_head, torch.nn.MultiheadAttention) on the same seeded
    weights and inputs: outputs and attention weights agree within the tolerance, and the
    parameter counts are equal."""
    (req,) = equivalence_requests(ctx, check)
    got = ctx.measured(req)
    seed, tol = req["equivalence"]["seed"], float(check.get("tolerance", 1e-5))
    err, (pa, pb) = got["max_abs_diff"], got["params"]
    ok = err <= tol and pa == pb
    summary = (f"{check['a']} vs {check['b']} at {show_values(got['sizes'])}, seed {seed}, "
               f"{got['device']}: max |Δ| = {err:.2e} (tolerance {tol:g}); parameters {fmt(pa)} vs {fmt(pb)}")
    return result("equivalence", "holds" if ok else "refuted", summary, "measured",
                  max_abs_diff=err, params=[pa, pb])
