"""Monte Carlo estimates for the ``distribution`` check kind (run in the measuring process: torch).

    run_statistic({"quantity": "dot", "statistic": "variance", "sizes": {"d_k": 64},
                   "components": "normal", "scaled": False, "samples": 20000, "seed": 0, "level": 0.95})
    -> {"estimate": 63.8..., "half": 1.9..., ...}

Quantities (``q`` and each key ``k_j`` have d_k independent components of mean 0 and variance 1,
drawn from ``components``: normal, uniform on [−√3, √3], or rademacher ±1):

- ``dot``: q·k (divided by √d_k when ``scaled``);
- ``softmax_max``: the largest weight of softmax(q·k_1, …, q·k_n) (scores divided by √d_k when
  ``scaled``): 1/n for uniform attention, 1 when one key takes it all;
- ``softmax_entropy``: the entropy (nats) of that distribution: log n when uniform, 0 when saturated.

Statistics: ``mean``, ``variance`` and ``tail`` (P(X > threshold)), each with a confidence bound
from :mod:`mha.experiments.stats` (the demonstrations' machinery): the sample mean ± z·s/√N, the
sample variance ± z·√((m₄ − s⁴)/N), and the Wilson interval for a proportion. Samples are drawn in
float64 from one ``torch.Generator`` seeded with ``seed``, in chunks, so the same request gives the
same numbers.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:       # torch is imported in the measuring process only (grader.claims.measure.import_torch)
    import torch as torch_


class StatisticResult(TypedDict):
    """What :func:`run_statistic` returns (over the measuring process's pipe: plain data)."""

    estimate: float
    half: float
    level: float
    samples: int
    seed: int
    sizes: dict[str, int]

QUANTITIES = ("dot", "softmax_max", "softmax_entropy")
COMPONENTS = ("normal", "uniform", "rademacher")
STATISTICS = ("mean", "variance", "tail")
MAX_SAMPLES = 200_000
MAX_WORK = 400_000_000          # samples · d_k · n numbers drawn, for one point
CHUNK = 1 << 21                 # numbers drawn at a time


def work(sizes: Mapping[str, int], quantity: str, samples: int) -> int:
    """How many random numbers one estimate draws."""
    n = sizes.get("n", 1) if quantity != "dot" else 1
    return samples * sizes["d_k"] * (n + 1)


def _draw(torch: ModuleType, shape: tuple[int, int, int], components: str, g: torch_.Generator) -> Any:
    """``shape`` numbers of mean 0, variance 1: a float64 tensor (Any: torch's functions reached through the module)."""
    if components == "normal":
        return torch.randn(shape, generator=g, dtype=torch.float64)
    if components == "uniform":
        return (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * math.sqrt(3.0)
    return torch.randint(0, 2, shape, generator=g).to(torch.float64) * 2 - 1


def samples_of(r: Mapping[str, Any]) -> list[float]:
    """The ``samples`` values of the quantity, one per independent draw of q and the keys."""
    from .measure import import_torch
    torch = import_torch()
    d_k, n = int(r["sizes"]["d_k"]), int(r["sizes"].get("n", 1))
    q_name, comp, scaled = r["quantity"], r.get("components", "normal"), bool(r.get("scaled", False))
    total = int(r["samples"])
    g = torch.Generator(device="cpu").manual_seed(int(r.get("seed", 0)))
    keys = 1 if q_name == "dot" else n
    per = max(1, CHUNK // (d_k * (keys + 1)))
    out: list[float] = []
    while len(out) < total:
        m = min(per, total - len(out))
        q = _draw(torch, (m, 1, d_k), comp, g)            # (m, 1, d_k)
        k = _draw(torch, (m, keys, d_k), comp, g)         # (m, keys, d_k)
        s = (q * k).sum(-1)                               # (m, keys): q·k_j
        if scaled:
            s = s / math.sqrt(d_k)
        if q_name == "dot":
            x = s[:, 0]
        else:
            a = torch.softmax(s, dim=-1)                  # (m, keys)
            if q_name == "softmax_max":
                x = a.max(dim=-1).values
            else:
                x = -(a * torch.log(a.clamp_min(1e-300))).sum(-1)
        out.extend(x.tolist())
    return out


def run_statistic(r: Mapping[str, Any]) -> StatisticResult:
    """The estimate and its confidence half-width (see the module doc)."""
    from mha.experiments.stats import mean_interval, proportion_interval, variance_interval
    if r["quantity"] not in QUANTITIES or r["statistic"] not in STATISTICS:
        raise ValueError(f"unknown quantity or statistic: {r['quantity']!r}, {r['statistic']!r}")
    if not 10 <= int(r["samples"]) <= MAX_SAMPLES or work(r["sizes"], r["quantity"], int(r["samples"])) > MAX_WORK:
        raise ValueError("too many samples for these sizes")
    xs = samples_of(r)
    level = float(r.get("level", 0.95))
    if r["statistic"] == "mean":
        est, half = mean_interval(xs, level)
    elif r["statistic"] == "variance":
        est, half = variance_interval(xs, level)
    else:
        t = float(r["threshold"])
        est, half = proportion_interval(sum(1 for x in xs if x > t), len(xs), level)
    return {"estimate": est, "half": half, "level": level, "samples": len(xs), "seed": int(r.get("seed", 0)),
            "sizes": dict(r["sizes"])}
