"""The check kinds. Each kind is a module-level object with

- ``FIELDS``: {field: (type, required)} — the loader validates and converts them
  (types: expr, relation, values, values_list, figure, model, symbols, shapes, number,
  int, seed, tolerance, bool, text, choice:a|b);
- ``MEASURES``: whether it runs the real mha (and so imports torch);
- ``run(ctx, check) -> CheckResult``;
- measured kinds: ``requests(ctx, check)``, the measurements ``run`` will read through
  ``ctx.measured`` (plain data, so that they can be made in another process).

Symbolic kinds (no torch): identity, numeric, config, dominance, asymptotic.
Measured kinds (mha, meta device where sizes are large): shapes, measure, compare,
invariance, equivalence. Demonstrations (seeded experiments on mha, some training a small
model): demonstrate. And unverifiable (a reason, no check).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Kind:
    name: str
    FIELDS: dict
    MEASURES: bool
    run: Callable
    help: str = ""
    requests: Callable | None = None    # measured kinds: (ctx, check) -> the measurements it needs
    validate: Callable | None = None    # (params) -> [(field, message)]: what the fields' types cannot see
    budget: Callable | None = None      # (check) -> seconds its measurements may take (None: the claim's limit)


def _lazy(module, func):
    def run(ctx, check):
        import importlib
        return getattr(importlib.import_module(f"grader.spec.checks.{module}"), func)(ctx, check)
    return run


_VALUES = ("values", False)
_IMPLEMENTATIONS = "fused|per_head|torch|single_head"
KINDS = {
    "identity": Kind("identity", {"lhs": ("expr", True), "rhs": ("expr", True)}, False,
                     _lazy("symbolic", "identity"),
                     "lhs = rhs for every value of the symbols allowed by their assumptions"),
    "numeric": Kind("numeric", {"expr": ("expr", True), "at": _VALUES, "claimed": ("figure", True)}, False,
                    _lazy("symbolic", "numeric"),
                    "expr evaluated at the given values is the claimed figure (exact, or within its stated digits)"),
    "config": Kind("config", {"model": ("model", True), "expr": ("expr", True), "claimed": ("figure", True)},
                   False, _lazy("symbolic", "config"),
                   "expr evaluated on a real model's recorded configuration is the claimed figure"),
    "dominance": Kind("dominance", {"larger": ("expr", True), "smaller": ("expr", True),
                                    "where": ("relation", False), "at": _VALUES,
                                    "crossover": ("relation", False)}, False,
                      _lazy("symbolic", "dominance"),
                      "larger > smaller over a region (or at a point); the exact crossover"),
    "asymptotic": Kind("asymptotic", {"expr": ("expr", True), "class": ("choice:O|Theta", True),
                                      "of": ("expr", True), "as": ("symbols", True)}, False,
                       _lazy("symbolic", "asymptotic"),
                       "expr is O(of) or Θ(of) as the listed symbols grow"),
    "shapes": Kind("shapes", {"at": ("values", True), "shapes": ("shapes", True)}, True,
                   _lazy("measured", "shapes"),
                   "shapes of the named intermediates of mha's trace (meta device)",
                   _lazy("measured", "shapes_requests")),
    "measure": Kind("measure", {"quantity": ("quantity", True), "at": ("values", True),
                                "claimed": ("figure", False), "formula": ("expr", False),
                                "layout": ("choice:fused|per_head", False),
                                "bias": ("bool", False)}, True,
                    _lazy("measured", "measure"),
                    "a quantity measured on the real mha equals the claimed figure and/or formula",
                    _lazy("measured", "measure_requests")),
    "compare": Kind("compare", {"left": ("quantity", True), "right": ("quantity", True), "at": ("values", True),
                                "left_layout": ("choice:fused|per_head", False),
                                "right_layout": ("choice:fused|per_head", False),
                                "claimed": ("choice:less|equal|greater", True)}, True,
                    _lazy("measured", "compare"),
                    "two measured quantities (or one in two layouts): left is less / equal / greater than right",
                    _lazy("measured", "compare_requests")),
    "invariance": Kind("invariance", {"quantity": ("quantity", True), "at": ("values", True),
                                      "vary": ("values_list", True), "formula": ("expr", False)}, True,
                       _lazy("measured", "invariance"),
                       "a measured quantity (and its formula) does not change as the varied symbols do",
                       _lazy("measured", "invariance_requests")),
    "equivalence": Kind("equivalence", {"a": ("choice:" + _IMPLEMENTATIONS, True),
                                        "b": ("choice:" + _IMPLEMENTATIONS, True),
                                        "at": ("values", True), "seed": ("seed", False),
                                        "tolerance": ("tolerance", False)}, True,
                        _lazy("measured", "equivalence"),
                        "two implementations give the same outputs on seeded inputs, within a tolerance "
                        "(single_head: one head as wide as the model, with the same weights)",
                        _lazy("measured", "equivalence_requests")),
    "unverifiable": Kind("unverifiable", {"reason": ("text", True)}, False,
                         _lazy("symbolic", "unverifiable"),
                         "nothing to check; the reason is reported"),
}

# One module per kind from here on (grader/spec/checks/<kind>.py: FIELDS, HELP, run, requests, ...).
from . import demonstrate as _demonstrate  # noqa: E402  (torch-free)

KINDS[_demonstrate.NAME] = Kind(_demonstrate.NAME, _demonstrate.FIELDS, _demonstrate.MEASURES,
                                _lazy("demonstrate", "run"), _demonstrate.HELP, _lazy("demonstrate", "requests"),
                                _demonstrate.validate, _demonstrate.budget)
