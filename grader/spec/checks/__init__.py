"""The check kinds. Each kind is a module-level object with

- ``FIELDS``: {field: (type, required)} — the loader validates and converts them
  (types: expr, relation, values, values_list, figure, model, symbols, shapes, number,
  int, text, choice:a|b);
- ``MEASURES``: whether it runs the real mha (and so imports torch);
- ``run(ctx, check) -> CheckResult``.

Symbolic kinds (no torch): identity, numeric, config, dominance, asymptotic.
Measured kinds (mha, meta device where sizes are large): shapes, measure, compare,
invariance, equivalence. And unverifiable (a reason, no check).
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


def _lazy(module, func):
    def run(ctx, check):
        import importlib
        return getattr(importlib.import_module(f"grader.spec.checks.{module}"), func)(ctx, check)
    return run


_VALUES = ("values", False)
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
                   "shapes of the named intermediates of mha's trace (meta device)"),
    "measure": Kind("measure", {"quantity": ("quantity", True), "at": ("values", True),
                                "claimed": ("figure", False), "formula": ("expr", False),
                                "layout": ("choice:fused|per_head", False),
                                "bias": ("choice:true|false", False)}, True,
                    _lazy("measured", "measure"),
                    "a quantity measured on the real mha equals the claimed figure and/or formula"),
    "compare": Kind("compare", {"left": ("quantity", True), "right": ("quantity", True), "at": ("values", True),
                                "left_layout": ("choice:fused|per_head", False),
                                "right_layout": ("choice:fused|per_head", False),
                                "claimed": ("choice:less|equal|greater", True)}, True,
                    _lazy("measured", "compare"),
                    "two measured quantities (or one in two layouts): left is less / equal / greater than right"),
    "invariance": Kind("invariance", {"quantity": ("quantity", True), "at": ("values", True),
                                      "vary": ("values_list", True), "formula": ("expr", False)}, True,
                       _lazy("measured", "invariance"),
                       "a measured quantity (and its formula) does not change as the varied symbols do"),
    "equivalence": Kind("equivalence", {"a": ("choice:fused|per_head|torch", True),
                                        "b": ("choice:fused|per_head|torch", True),
                                        "at": ("values", True), "seed": ("int", False),
                                        "tolerance": ("number", False)}, True,
                        _lazy("measured", "equivalence"),
                        "two implementations give the same outputs on seeded inputs, within a tolerance"),
    "unverifiable": Kind("unverifiable", {"reason": ("text", True)}, False,
                         _lazy("symbolic", "unverifiable"),
                         "nothing to check; the reason is reported"),
}
