"""The measuring process: torch and mha live here, never in the process that checks a spec
(its other side is :class:`grader.claims.measurer.Measurer`).

``grader check-spec`` starts it at once (``python -m grader.claims.worker``), while it reads the
spec and runs the symbolic checks, so that ``import torch`` overlaps that work. It imports
torch (and nothing of the engine but :mod:`grader.claims.measure`), makes one tiny measurement
so that no claim is charged with loading what the first one loads, says it is ready, and then
measures claim after claim. Every measurement is checked against the memory budget first
(:mod:`grader.claims.budget`: the bytes and FLOPs it needs, from its sizes; the budget from the
``GRADER_MEMORY_BUDGET`` environment variable that :class:`~grader.claims.measurer.Measurer`
sets, else half the memory available): one over it is refused with the estimate, before
anything is allocated.

Protocol: one JSON object per line. To the process: ``{"claim": key, "requests": [...]}``
(requests: see grader.claims.checks.measured); closing its stdin ends it. From it:
``{"ready": true, "cuda": bool, "torch": version}`` (or ``{"fatal": message}`` when torch
cannot be imported), then per claim ``{"start": key}`` and ``{"done": key, "results":
[{"value": v} | {"error": message}, ...], "seconds": s}``.
"""
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from typing import Any


def _make(request: Mapping[str, Any], memory_budget: int) -> Any:
    """One measurement, once :func:`grader.claims.budget.check` has found that it fits the budget
    (BudgetError, with the estimate, before anything is allocated)."""
    from grader.claims.budget import check
    from grader.claims.measure import make
    check(request, memory_budget)
    value = make(request)
    return list(value) if isinstance(value, tuple) else value


def _warm_up() -> None:
    """One tiny measurement on "meta", before the first claim: what the first measurement loads
    is counted to no claim."""
    from grader.claims.measure import measure
    measure("flops.total", {"d": 2, "h": 1, "n": 1})


def serve() -> int:
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)   # a stray print (torch, a library) goes to stderr, not into the protocol

    def send(msg: Mapping[str, Any]) -> None:
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    try:
        # Before torch is imported: the CPU kernels that compute the same on every x86-64 CPU, so
        # that a demonstration's trained models (and the numbers the docs show) are not the machine's.
        from mha.experiments.numerics import pin
        pin()
        from grader.claims.measure import import_torch
        torch = import_torch()
        # One thread: the checking process has the other core(s), and the tensors measured here
        # are tiny (or on "meta"); a second intra-op thread only adds synchronisation, which on a
        # busy machine costs tens of milliseconds per op.
        torch.set_num_threads(1)
        _warm_up()
    except BaseException as e:  # noqa: BLE001 - reported to the checking process, which goes on
        send({"fatal": f"{type(e).__name__}: {e}"})
        return 1
    from grader.claims.budget import BudgetError, memory_budget_from_env
    memory_budget = memory_budget_from_env()
    send({"ready": True, "cuda": bool(torch.cuda.is_available()), "torch": torch.__version__,
          "memory_budget": memory_budget})
    for line in sys.stdin:
        msg = json.loads(line)
        key = msg["claim"]
        send({"start": key})
        start = time.perf_counter()
        results: list[dict[str, Any]] = []
        for request in msg["requests"]:
            try:
                results.append({"value": _make(request, memory_budget)})
            except Exception as e:  # noqa: BLE001 - one measurement's failure is its check's error
                results.append({"error": str(e) if isinstance(e, BudgetError) else f"{type(e).__name__}: {e}"})
        send({"done": key, "results": results, "seconds": time.perf_counter() - start})
    return 0


if __name__ == "__main__":
    sys.exit(serve())
