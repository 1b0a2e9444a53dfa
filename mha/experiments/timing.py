"""The timed experiments (decode-time, prefill-time): an mha.Transformer timed on a device against
the roofline measured in the same run (:mod:`mha.device_timing`), as plain data for a
``demonstrate`` check.

Each "seed" is one timing run: the device's matmul peak and copy bandwidth measured again, then
the step timed (median of bounded repeats after a warm-up). The model is built once, seeded with
the first seed (its weights do not change its time). **Nothing is cached**: a timing is this
device's, now; a result read back from disk would be another run's (or another machine's).

Skipped, with the reason in ``skipped``, where the device cannot run it: no CUDA device, or not
enough free device memory for the model and its KV caches (checked before anything is built).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

from .catalog import Request, rerun_command

if TYPE_CHECKING:
    from mha.block import Activation, Norm

# A result: plain data (JSON), as mha.experiments.runner's
Result = dict[str, Any]


def _ms(x: float) -> float:
    return round(x * 1e3, 6)


def run(req: Request) -> Result:
    """The timed experiment's statistic per run (see the module doc); ``req`` from catalog.normalise."""
    import torch

    from mha.device_timing import Config, _dtype, fits, measure_device, time_decode, time_prefill
    start = time.perf_counter()
    assert "model" in req and "device" in req     # normalise gives a timed experiment both
    s, m, stat = req["sizes"], req["model"], req["statistic"]
    out: Result = {"seeds": req["seeds"], "experiment": req["name"], "statistic": stat, "pooled_statistic": False,
                   "rerun": rerun_command(req), "from_cache": False, "trained": 0, "cached": 0, "control": None,
                   "figures": [], "values": [], "details": []}
    # normalise checked the activation and the norm against mha's choices
    cfg = Config(s["d"], s["h"], s["g"], s["L"], s["d_ff"], s["V"], cast("Activation", m["activation"]),
                 cast("Norm", m["norm"]), m["bias"], m["tied"])
    dtype = _dtype(m["dtype"])
    out["setup"] = (f"d={s['d']}, h={s['h']}, g={s['g']}, L={s['L']}, d_ff={s['d_ff']}, V={s['V']}, n={s['n']}, "
                    f"b={s['b']}, {m['activation']}, {m['norm']}, bias {'on' if m['bias'] else 'off'}, "
                    f"{'tied' if m['tied'] else 'untied'}, {m['dtype']}")
    if req["device"] == "cuda" and not torch.cuda.is_available():
        return out | {"skipped": f"no CUDA device: torch {torch.__version__} sees none where it was measured",
                      "seconds": round(time.perf_counter() - start, 3)}
    device = torch.device(req["device"])
    if device.type == "cuda":
        device = torch.device("cuda", torch.cuda.current_device())
    why = fits(cfg, s["n"], s["b"], device, dtype)
    if why:
        return out | {"skipped": why, "seconds": round(time.perf_counter() - start, 3)}
    model = cfg.build(device, dtype, seed=req["seeds"][0])
    decode = req["name"] == "decode-time"
    name = ""
    try:
        for _ in req["seeds"]:
            peaks = measure_device(device, dtype)
            name = f"{peaks.name} ({peaks.device}), torch {peaks.torch}"
            t = (time_decode if decode else time_prefill)(model, s["n"], s["b"], peaks=peaks)
            value: float = {"ms-per-token": _ms(t.seconds), "ms": _ms(t.seconds), "roofline-ms": _ms(t.roofline_seconds),
                            "fraction-of-roofline": round(t.fraction, 4), "memory-bound": float(t.bound == "memory"),
                            "compute-bound": float(t.bound == "compute")}[stat]
            out["values"].append(value)
            out["details"].append(
                f"measured {t.seconds * 1e3:.4g} ms (median of {len(t.times)}); roofline {t.roofline_seconds * 1e3:.4g} ms "
                f"= max({t.bytes:,} bytes / {peaks.bytes_per_s / 1e9:,.1f} GB/s = {t.memory_seconds * 1e3:.4g} ms, "
                f"{t.flops:,} FLOPs / {peaks.flop_per_s / 1e12:,.1f} TFLOP/s = {t.compute_seconds * 1e3:.4g} ms): "
                f"{t.bound}-bound, {t.fraction:.1%} of the roofline")
    finally:
        del model
        if device.type == "cuda":
            torch.cuda.empty_cache()
    out["device"] = name
    out["setup"] += f", on {name}"
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out
