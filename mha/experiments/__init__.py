"""Seeded experiments on mha: demonstrations of what the texts say trained heads do.

A demonstration is evidence a reader can rerun, not a proof: a small synthetic task built so
that a claim has a measurable consequence, trained on CPU with fixed seeds, and a statistic
computed per seed from its definition. ``grader check-spec`` runs them for the claims whose
checks are ``kind: demonstrate`` (docs/spec-language.md); ``python -m mha.experiments`` reruns
one from the command line.

    from mha.experiments import EXPERIMENTS, run
    run({"name": "two-relations", "statistic": "accuracy-gain", "sizes": {"d": 32, "n": 8},
         "vary": {"h": [1, 2, 4]}, "seeds": [0, 1, 2, 3, 4], "steps": 300})

Modules: catalog (names, sizes, statistics; no torch), stats (the statistics' definitions),
tasks (the two-relation task, its model and training run), mechanics (dropout, gradients,
independent heads, scaling), runner (a request -> per-seed statistics), cache (results on disk),
timing (decode-time and prefill-time: an mha.Transformer timed on a GPU, never cached).
Importing this package does not import torch.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .catalog import EXPERIMENTS  # torch-free

if TYPE_CHECKING:
    from .catalog import Attention

__all__ = ["EXPERIMENTS", "run"]


def run(request: Mapping[str, Any], attention: Attention | None = None) -> dict[str, Any]:
    """Run one experiment (see mha.experiments.runner.run; a timed one: mha.experiments.timing.run)."""
    from .catalog import EXPERIMENTS, normalise
    if request.get("name") in EXPERIMENTS and EXPERIMENTS[request["name"]].timed:
        if attention is not None:
            raise ValueError(f"experiment {request['name']} times mha.Transformer itself: it takes no attention")
        from .timing import run as _timed
        return _timed(normalise(request))
    from .runner import run as _run
    return _run(request, attention)
