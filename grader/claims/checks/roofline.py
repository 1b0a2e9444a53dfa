"""`roofline`: a step of the real model (a decode step or a prefill, of the whole model or of one
block) on a cited accelerator card (the spec's ``hardware:``): its FLOPs and bytes measured on mha
as ``flops.*`` and ``bytes.*`` are, their arithmetic intensity against the card's ridge point
(``bound: memory`` or ``compute``) and its least time, max(bytes / bandwidth, FLOPs / peak)
(``time:``, a figure in a time unit). All exact (grader.claims.hardware.Roofline)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import result, show_values
from .measured import MODEL_FIELDS, measured, mha_values, request, sizes_of

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "roofline"
FIELDS = {"card": ("card", True), "step": ("choice:decode_step|prefill|decode_step_layer|prefill_layer", True),
          "at": ("values", True), **MODEL_FIELDS, "dtype": ("choice:fp32|fp16|bf16|fp64", True),
          "bound": ("choice:memory|compute", False), "time": ("figure", False), "tolerance": ("margin", False)}
MEASURES = True
HELP = ("a step of the real model on a cited card: bound by memory or by compute (its measured FLOPs per byte "
        "against the ridge point), and its least time max(bytes / bandwidth, FLOPs / peak)")


def _quantities(check: Any) -> tuple[str, str]:
    from ..hardware import STEPS
    return STEPS[str(check["step"])]


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    """What the text claims (a bound, a time in a time unit), a card that has the peak and the
    bandwidth the step needs, and the sizes and settings the step's quantities take."""
    from ..dimensions import describe
    from ..hardware import SECONDS
    ok = True
    if "bound" not in params and "time" not in params:
        site.error(f"{site.what} states what the text claims: 'bound' (memory or compute) and/or 'time' "
                   "(the step's least time, a figure like \"≈ 4 ms\")", site.mapping.loc)
        ok = False
    t = params.get("time")
    if t is not None and t.dimension != SECONDS:
        site.error(f"time must be in seconds (s, ms, µs, ns: a figure like \"≈ 4 ms\"), got {t.text!r} "
                   f"({describe(t.dimension)})", site.mapping.loc_of("time"))
        ok = False
    if "tolerance" in params and t is None:
        site.error(f"{site.what}: a tolerance applies to 'time', which is not given", site.mapping.key_loc("tolerance"))
        ok = False
    card, dtype = params["card"], params["dtype"]
    if dtype not in card.peak:
        site.error(f"hardware {card.key!r} records no peak for {dtype}; it has {', '.join(card.peak) or 'none'} "
                   "(the step is measured and computed at the check's dtype)", site.mapping.loc_of("dtype"))
        ok = False
    if card.bandwidth is None:
        site.error(f"hardware {card.key!r} records no memory bandwidth; a roofline needs it",
                   site.mapping.loc_of("card"))
        ok = False
    quantities = _quantities(params)
    return mha_values(site, {**params, "_quantities": quantities}, sizes_of(params, *quantities)) and ok


def requests(ctx: Context, check: Check) -> list[dict[str, Any]]:
    return [request(check, q, check["at"]) for q in _quantities(check)]


def run(ctx: Context, check: Check) -> CheckResult:
    from ..figures import fmt, fmt_real
    from ..hardware import roofline, show_time
    from ..settings import describe_settings
    from ..tolerance import with_tolerance
    card, dtype, at = check["card"], check["dtype"], dict(check["at"])
    fq, bq = _quantities(check)
    flops, moved = measured(ctx, check, fq, at), measured(ctx, check, bq, at)
    try:
        r = roofline(card, dtype, flops, moved)
    except ValueError as e:
        return result(NAME, "error", str(e))
    settings = describe_settings(request(check, bq, at))
    peak, bandwidth = card.peak_text[dtype], card.bandwidth_text
    parts = [f"measured {fq} = {fmt(flops)} FLOPs, {bq} = {fmt(moved)} bytes at {show_values(at)} ({settings}) "
             f"on {card.name}"]
    ok = True
    details: dict[str, Any] = {"card": card.key, "step": check["step"], "at": at, "flops": flops, "bytes": moved,
                               "intensity": fmt_real(float(r.intensity)), "ridge": fmt_real(float(r.ridge)),
                               "bound": r.bound, "time_s": fmt_real(float(r.time))}
    bound = check.get("bound")
    if bound is not None:
        sign = {"memory": "<", "compute": ">", "balanced": "="}[r.bound]
        b_ok = bound == r.bound
        ok &= b_ok
        said = {"memory": "bound by memory", "compute": "bound by compute",
                "balanced": "on the ridge point: bound by memory and compute alike"}[r.bound]
        parts.append(f"intensity {fmt(flops)} / {fmt(moved)} = {fmt_real(float(r.intensity))} FLOP/byte {sign} "
                     f"ridge point {peak} / {bandwidth} = {fmt_real(float(r.ridge))} FLOP/byte: {said}; "
                     f"claimed {bound}-bound" + ("" if b_ok else " (differs)"))
        details["claimed_bound"] = bound
    figure = check.get("time")
    if figure is not None:
        claimed = with_tolerance(figure, check.get("tolerance"))
        t_ok = claimed.matches(r.time)
        ok &= t_ok
        parts.append(f"least time max({fmt(moved)} bytes / {bandwidth} = {show_time(r.time_memory)}, "
                     f"{fmt(flops)} FLOPs / {peak} = {show_time(r.time_compute)}) = {show_time(r.time)}; "
                     f"claimed {claimed.describe()}" + ("" if t_ok else " (differs)"))
        details["claimed"] = claimed.text
    return result(NAME, "holds" if ok else "refuted", "; ".join(parts) + f" [{card.citation}]", "measured",
                  **details)
