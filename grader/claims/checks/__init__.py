"""The check kinds, one module each; :data:`KINDS` is their registry.

A kind's module (``grader/claims/checks/<kind>.py``) declares, at its top and importing
nothing heavy there (SymPy and torch only inside its functions):

- ``NAME``: the ``kind:`` a spec writes;
- ``FIELDS``: ``{field: (type, required)}``, read by the loader with the field types of
  :mod:`grader.claims.fields` (expr, relation, values, values_list, figure, model, symbols,
  shapes, quantity, number, int, seed, tolerance, bool, text, choice:a|b);
- ``MEASURES``: whether it runs the real mha (and so needs the measuring process, torch);
- ``HELP``: one line, what "holds" means;
- ``run(ctx, check) -> CheckResult``: the verdict;
- optionally ``validate(site, params) -> bool``: the values it will run at, checked when the
  spec is loaded (errors at the check's ``at``; ``site`` is a :class:`grader.claims.claims.CheckSite`);
- measured kinds: ``requests(ctx, check)``, the measurements ``run`` will read through
  ``ctx.measured`` (plain data, so that they can be made in another process);
- optionally ``budget(check) -> seconds | None``: how long its measurements may take, where that
  is more than the claim's limit (a demonstration that trains).

Adding a kind is adding its module and its name to :data:`MODULES` (see docs/ARCHITECTURE.md).
Symbolic kinds (no torch): identity, numeric, config, dominance, asymptotic, range.
Measured kinds (mha, meta device where sizes are large): shapes, measure, compare,
invariance, equivalence, roofline (a measured step on a hardware card). Demonstrations (seeded
experiments on mha, some training a small model): demonstrate. Statistical claims (Monte Carlo with a confidence bound, and sympy.stats):
distribution. And unverifiable (a reason, no check).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

MODULES = ("identity", "numeric", "config", "dominance", "asymptotic", "range", "shapes", "measure", "compare",
           "invariance", "equivalence", "demonstrate", "distribution", "hardware", "roofline", "unverifiable")


@dataclass(frozen=True)
class Kind:
    name: str
    FIELDS: dict[str, tuple[str, bool]]
    MEASURES: bool
    run: Callable[[Any, Any], Any]
    help: str = ""
    requests: Callable[[Any, Any], list[dict[str, Any]]] | None = None  # measured kinds: the measurements it needs
    validate: Callable[[Any, dict[str, Any]], bool] | None = None       # the values it runs at, when loading
    budget: Callable[[Any], float | None] | None = None                 # seconds its measurements may take


def kind_of(module: Any) -> Kind:
    """The registry's entry for a kind's module."""
    return Kind(module.NAME, dict(module.FIELDS), bool(module.MEASURES), module.run, module.HELP,
                getattr(module, "requests", None), getattr(module, "validate", None),
                getattr(module, "budget", None))


KINDS: dict[str, Kind] = {}
for _name in MODULES:
    _kind = kind_of(importlib.import_module(f"{__name__}.{_name}"))
    KINDS[_kind.name] = _kind
