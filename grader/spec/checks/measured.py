"""Measured check kinds: shapes, measure, compare, invariance, equivalence — on the real mha.

Sizes go to :func:`grader.spec.measure.measure` (meta device: no memory, any size);
equivalence runs real numbers on the context's device, seeded.
"""
from __future__ import annotations

from ..figures import fmt
from ..measure import QuantityError, measure as _measure
from .common import evaluate_exact, result, show_values


def _show(x):
    return fmt(x) if isinstance(x, int) else str(x)


def _m(check, quantity, values, layout=None):
    return _measure(quantity, values, layout=layout or check.get("layout") or "fused",
                    bias=check.get("bias", "true") == "true")


def shapes(ctx, check):
    """The shapes of the named intermediates of mha.trace at the given sizes (meta device)."""
    at = dict(check["at"])
    wrong, seen = [], []
    for name, claimed in check["shapes"].items():
        got = _m(check, name if name.startswith("tensor.") else f"shape.{name}", at)
        seen.append(f"{name} {got}")
        if tuple(got) != tuple(claimed):
            wrong.append(f"{name}: claimed {tuple(claimed)}, traced {got}")
    if wrong:
        return result("shapes", "refuted", f"at {show_values(at)}: " + "; ".join(wrong), "measured",
                      mismatches=wrong)
    return result("shapes", "holds", f"traced at {show_values(at)}: " + ", ".join(seen), "measured")


def measure(ctx, check):
    """A quantity measured on mha against the claimed figure and/or the formula at the same sizes;
    when the figure and the formula disagree with each other, that is said."""
    at, q = dict(check["at"]), check["quantity"]
    try:
        got = _m(check, q, at)
    except QuantityError as e:
        return result("measure", "error", str(e))
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


def compare(ctx, check):
    """Two measured quantities (or one quantity in two layouts): claimed less / equal / greater."""
    at = dict(check["at"])
    names = []
    for side in ("left", "right"):
        layout = check.get(f"{side}_layout")
        names.append(check[side] + (f" ({layout})" if layout else ""))
    left = _m(check, check["left"], at, check.get("left_layout"))
    right = _m(check, check["right"], at, check.get("right_layout"))
    rel = "less" if left < right else "equal" if left == right else "greater"
    sym = {"less": "<", "equal": "=", "greater": ">"}
    summary = (f"measured at {show_values(at)}: {names[0]} {_show(left)} {sym[rel]} {names[1]} {_show(right)}; "
               f"claimed {names[0]} {sym[check['claimed']]} {names[1]}")
    return result("compare", "holds" if rel == check["claimed"] else "refuted", summary, "measured",
                  left=left, right=right)


def invariance(ctx, check):
    """The quantity is the same for every value of the varied symbols (and so is its formula)."""
    at, q, vary = dict(check["at"]), check["quantity"], dict(check["vary"])
    names = list(vary)
    import itertools
    seen = {}
    for combo in itertools.product(*(vary[n] for n in names)):
        point = {**at, **dict(zip(names, combo))}
        seen[show_values(dict(zip(names, combo)))] = _m(check, q, point)
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


def equivalence(ctx, check):
    """Two implementations (fused, per_head, torch.nn.MultiheadAttention) on the same seeded
    weights and inputs: outputs and attention weights agree within the tolerance."""
    import torch

    import mha

    at = dict(check["at"])
    d, h, n, b = at.get("d"), at.get("h"), at.get("n", 16), at.get("b", 2)
    if d is None or h is None:
        return result("equivalence", "error", "equivalence needs sizes d and h (and optionally n, b)")
    seed, tol = check.get("seed", 0), float(check.get("tolerance", 1e-5))
    device = ctx.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator(device="cpu").manual_seed(seed)
    ref = torch.nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.1)
    base = mha.MultiHeadAttention.from_torch(ref)

    def build(which):
        if which == "torch":
            return ref
        return base.to_layout(which)

    ma, mb = build(check["a"]).to(device).eval(), build(check["b"]).to(device).eval()
    x = torch.randn((b, n, d), generator=g).to(device)
    with torch.no_grad():
        oa, wa = ma(x, x, x, need_weights=True, average_attn_weights=False)
        ob, wb = mb(x, x, x, need_weights=True, average_attn_weights=False)
    err = max((oa - ob).abs().max().item(), (wa - wb).abs().max().item())
    pa, pb = sum(p.numel() for p in ma.parameters()), sum(p.numel() for p in mb.parameters())
    ok = err <= tol and pa == pb
    summary = (f"{check['a']} vs {check['b']} at {show_values({'d': d, 'h': h, 'n': n, 'b': b})}, seed {seed}, "
               f"{device}: max |Δ| = {err:.2e} (tolerance {tol:g}); parameters {fmt(pa)} vs {fmt(pb)}")
    return result("equivalence", "holds" if ok else "refuted", summary, "measured",
                  max_abs_diff=err, params=[pa, pb])
