"""The answer kinds, one module each; :data:`KINDS` is their registry.

A kind's module (``grader/answers/kinds/<kind>.py``) declares, importing nothing heavy at its
top (SymPy and pint only inside its functions), everything the engine knows about the kind:

- ``NAME`` (what a bank writes as ``kind:``) and ``HELP`` (one line: what an answer is);
- its bank fields: ``FIELDS = {key: reader}``, the problem keys only this kind has, each read
  and validated by ``reader(site) -> value`` (:class:`.base.BankSite`: the problem's mapping,
  ``site.error(message, key)``), stored on the problem under the same name; ``DERIVE_KEYS``
  and ``read_derive(raw, site) -> (formula, op) | None`` (how its ``derive`` is written);
  ``MEASURE_POINTS`` (whether ``measure.at`` may list several points); ``REFERENCE``
  (whether a ``reference`` is required);
- its screening: ``SCREENING`` (:class:`grader.answers.guard.Screening`: true/false, lists,
  the length of text), checked before anything is read;
- its parser: ``read(spec, text) -> Shown`` (how an answer is read: what a live preview
  shows) and optionally ``column(spec, raw)`` (where the parser stops);
- its checker: ``prepare(spec)`` (the reference and mistakes read once, cached per process by
  :func:`grader.answers.prepare`) and ``check(spec, raw) -> Outcome`` (compare, recognise the
  mistake, say it: its feedback);
- its verification of the reference (:mod:`grader.bank.verify`): ``derived(problem, spec, at)``
  (what the spec gives for its ``derive``), ``same(problem, reference, value, spec)``,
  ``describe(value)``, or ``verify_plain(problem) -> (ok, found, message)`` for a kind with
  nothing to derive;
- the mistakes derived from the spec (:mod:`grader.answers.derive`): ``variants(derive,
  formulas, table, at, measures)``; ``TABLE`` (whether it reads formulas in the spec's symbols);
  ``MEASURES`` (what it always counts, e.g. ``"shape"``); ``DRAWN`` (whether a problem of it may
  have a ``variant``, its numbers drawn per learner);
- how it is graded: ``GRADED`` (``"check"``: a checker in a worker; ``"person"``: recorded for a
  person; ``"tests"``: a code exercise's tests in the sandbox).

Adding a kind is adding its module and its name to :data:`MODULES` (docs/ARCHITECTURE.md).
The bank loader, the verifier, the grader's preparation, the screening and the preview read
this registry; none of them lists kinds.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from . import base

MODULES = ("number", "quantity", "expression", "shape", "relation", "choice", "free_text", "interval", "code")


@dataclass(frozen=True)
class Kind:
    """The registry's entry for one answer kind (see the module doc for each part)."""

    name: str
    help: str
    graded: str                                     # check | person | tests
    screening: Any                                  # grader.answers.guard.Screening
    fields: dict[str, Callable[[Any], Any]]
    derive_keys: frozenset[str]
    read_derive: Callable[[Any, Any], Any]
    measure_points: bool
    reference: bool
    table: bool
    measures: str | None
    prepare: Callable[[Any], Any] | None
    check: Callable[[Any, Any], Any] | None
    read: Callable[[Any, Any], Any] | None
    column: Callable[[Any, Any], int | None] | None
    derived: Callable[..., Any]
    same: Callable[..., bool]
    describe: Callable[[Any], str]
    verify_plain: Callable[[Any], tuple[bool, str, str]] | None
    variants: Callable[..., Any] | None
    drawn: bool = True                              # may have a 'variant' (numbers drawn per learner)


def kind_of(module: Any) -> Kind:
    """The registry's entry for a kind's module (the defaults of :mod:`.base` where it is silent)."""
    def get(name: str, default: Any = None) -> Any:
        return getattr(module, name, getattr(base, name, default))
    return Kind(module.NAME, module.HELP, get("GRADED"), get("SCREENING"), dict(get("FIELDS")),
                frozenset(get("DERIVE_KEYS")), get("read_derive"), bool(get("MEASURE_POINTS")), bool(get("REFERENCE")),
                bool(get("TABLE")), get("MEASURES"), getattr(module, "prepare", None), getattr(module, "check", None),
                getattr(module, "read", None), getattr(module, "column", None), get("derived"), get("same"),
                get("describe"), getattr(module, "verify_plain", None), getattr(module, "variants", None),
                bool(get("DRAWN")))


KINDS: dict[str, Kind] = {}
for _name in MODULES:
    _kind = kind_of(importlib.import_module(f"{__name__}.{_name}"))
    KINDS[_kind.name] = _kind

#: the kinds an :class:`grader.answers.AnswerSpec` may have (graded from an answer's text)
ANSWER_KINDS = tuple(k for k, v in KINDS.items() if v.graded != "tests")
#: every field a kind declares -> the kinds that declare it
FIELD_KINDS: dict[str, tuple[str, ...]] = {}
for _kind in KINDS.values():
    for _field in _kind.fields:
        FIELD_KINDS[_field] = FIELD_KINDS.get(_field, ()) + (_kind.name,)


def get(name: str) -> Kind | None:
    """The kind called ``name`` (None: no such kind)."""
    return KINDS.get(name)
