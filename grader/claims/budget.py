"""What a measurement costs, known before it runs: the bytes and FLOPs a measured check needs
at its sizes, and the budget they must fit in.

The measuring process (:mod:`grader.claims.worker`) asks :func:`check` before every measurement
and refuses, with the estimate in the message, one that would not fit: nothing is allocated
for it. Sizes, parameters and FLOPs are measured on torch's "meta" device, which holds no
data, so they cost no memory at any size; only ``equivalence`` runs real numbers, and its
estimate comes from the formulas the spec proves: the weights are ``params`` = 4d² + 4d
numbers per copy of the layer, the attention matrices ``attention.elements`` = b·h·n² per
forward pass, the activations a few b·n·d, and a forward pass costs ``flops`` = 8·b·n·d² +
4·b·n²·d. On "meta" too, torch counts a tensor's elements in a signed 64-bit integer:
:func:`size_problem` says, when a spec is loaded, which sizes no tensor of the layer could have.

Only the standard library is imported here: the checking process calls :func:`size_problem`
while loading a spec, without torch.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

GiB = 1024 ** 3
DEFAULT_FRACTION = 0.5          # of the memory available when the measuring process starts
FALLBACK_MEMORY = 2 * GiB       # when the available memory cannot be read
DEFAULT_FLOPS = 10 ** 12        # a teraFLOP: about a minute of one CPU thread
MAX_ELEMENTS = 2 ** 60          # one tensor's elements: torch counts its bytes (8 a float64) in an int64
FLOAT_BYTES = 4                 # float32: what equivalence runs in
WEIGHT_COPIES = 5               # torch's layer, the copy in mha, the two compared layouts, one moved
ENV = "GRADER_MEMORY_BUDGET"    # how the checking process hands --memory-budget to the measuring one


class BudgetError(Exception):
    """A measurement refused before it ran: it would need more than the budget."""


@dataclass(frozen=True)
class Cost:
    """What a measurement needs: ``bytes`` of memory (0 on "meta") and ``flops``."""

    bytes: int
    flops: int
    what: str = ""          # how the bytes were counted


def _sizes(values: Mapping[str, object]) -> tuple[int, int, int, int]:
    v = {k: int(x) for k, x in values.items() if isinstance(x, int) and not isinstance(x, bool)}
    return v.get("d", 1), v.get("h", 1), v.get("n", 1), v.get("b", 1)


def cost(request: Mapping[str, Any]) -> Cost:
    """The cost of one request as the measured checks make them (grader.claims.measure.make)."""
    if "statistic" in request:       # kind distribution: Monte Carlo in chunks (grader.claims.statistics)
        return Cost(4 * FLOAT_BYTES * 2 * (1 << 21), 0, "random numbers drawn in chunks of 2^21 float64")
    if "equivalence" not in request:
        return Cost(0, 0, "on the meta device: no data")
    eq = request["equivalence"]
    values = dict(eq.get("values", {}))
    values.setdefault("n", 16)
    values.setdefault("b", 2)
    d, h, n, b = _sizes(values)
    weights = WEIGHT_COPIES * (4 * d * d + 4 * d)
    attention = b * h * n * n                   # one forward pass's attention matrices
    activations = b * n * d                     # x, Q, K, V, heads, concat, output: a few of these
    elements = weights + 7 * attention + 11 * activations
    flops = 2 * (8 * b * n * d * d + 4 * b * n * n * d)
    what = (f"{WEIGHT_COPIES} copies of the 4d² + 4d weights, 7 × the b·h·n² attention weights, "
            f"11 × the b·n·d activations, in float32")
    return Cost(FLOAT_BYTES * elements, flops, what)


def check(request: Mapping[str, Any], memory_budget: int, flop_budget: int = DEFAULT_FLOPS) -> Cost:
    """The request's cost, or BudgetError (with the estimate) when it is over either budget."""
    c = cost(request)
    over: list[str] = []
    if c.bytes > memory_budget:
        over.append(f"about {show_bytes(c.bytes)} of memory ({c.what}) where the budget is "
                    f"{show_bytes(memory_budget)} (--memory-budget)")
    if c.flops > flop_budget:
        over.append(f"about {c.flops:.3g} FLOPs where the budget is {flop_budget:.3g}")
    if over:
        raise BudgetError("refused before anything was allocated: it would need " + " and ".join(over)
                          + "; sizes, parameters and FLOPs are measured on the meta device at any size, "
                            "but this check runs real numbers")
    return c


def size_problem(values: Mapping[str, object]) -> str | None:
    """Why mha cannot be built and run at these sizes even on the meta device (None: it can):
    a tensor of the layer (the weights d², an input b·n·d, the scores b·h·n²) would hold more
    than :data:`MAX_ELEMENTS` numbers, more than torch can count."""
    d, h, n, b = _sizes(values)
    for name, elements in (("W^Q (d × d)", d * d), ("the input (b × n × d)", b * n * d),
                           ("the scores (b × h × n × n)", b * h * n * n)):
        if elements > MAX_ELEMENTS:
            return (f"{name} would have about 2^{elements.bit_length() - 1} elements: more than torch can "
                    f"represent, even on the meta device (at most 2^60)")
    return None


def show_bytes(n: int) -> str:
    """1.5 GiB, 640 MiB, 12 KiB."""
    for unit, size in (("TiB", 1024 ** 4), ("GiB", GiB), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n} bytes"


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo, in bytes (None where it cannot be read)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def default_memory_budget() -> int:
    """A fraction (:data:`DEFAULT_FRACTION`) of the memory available now."""
    free = available_memory()
    return int(free * DEFAULT_FRACTION) if free else FALLBACK_MEMORY


_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(%|[kKMGT]i?B|B|bytes?)?\s*")
_UNITS = {"B": 1, "byte": 1, "bytes": 1, "kB": 10 ** 3, "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12,
          "KiB": 2 ** 10, "kiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40}


def parse_size(text: str) -> int:
    """``2GiB``, ``512 MB``, ``1000000`` (bytes) or ``25%`` (of the memory available now);
    ValueError saying what is expected."""
    m = _SIZE.fullmatch(str(text))
    if not m or (m.group(2) and m.group(2) not in _UNITS and m.group(2) != "%"):
        raise ValueError(f"{text!r} is not a size: write 2GiB, 512MB, 1000000 (bytes) or 25% (of free memory)")
    number = float(m.group(1))
    if m.group(2) == "%":
        if not 0 < number <= 100:
            raise ValueError(f"{text!r}: a percentage of free memory is more than 0 and at most 100")
        return int((available_memory() or FALLBACK_MEMORY) * number / 100)
    size = int(number * _UNITS.get(m.group(2) or "B", 1))
    if size <= 0:
        raise ValueError(f"{text!r}: the budget must be more than 0 bytes")
    return size


def memory_budget_from_env() -> int:
    """The budget the checking process set (:data:`ENV`, bytes), else :func:`default_memory_budget`."""
    raw = os.environ.get(ENV)
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            pass
    return default_memory_budget()
