"""Variants: a problem draws its numbers from the learner id.

``variant: {seed_from: learner, choose: {d: [512, 768, 1024], h: [8, 12, 16]}}`` lists the
candidate values; the draws are every combination whose reference, from the problem's
``derive`` formula, is well defined (an integer where the base reference is one: h must
divide d for d_k). A learner gets one draw, chosen by a hash of (problem id, learner):
deterministic, the same on every run and machine, and spread evenly. The prompt's
``{name}`` placeholders are filled in and the result names the variant ("variant d=768, h=12").

The draws and the problems as each draw shows them are derived from the spec, and cached on
the :class:`~grader.bank.model.Bank` they come from (:meth:`Bank.memo`): a bank loaded again
derives its own, never one of another bank's.
"""
from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import replace
from fractions import Fraction
from typing import Any

from .model import Bank, Problem, as_fraction, frozen, with_reference

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


Draws = tuple[tuple[tuple[tuple[str, int], ...], Any], ...]     # ((combo items, reference), ...)


def draws(problem: Problem, source: Any) -> Draws:
    """All well-defined draws of a variant problem: ((combo dict items, reference), ...).
    ``source``: the :class:`Bank` (its spec; the draws cached on it) or a spec subject."""
    if isinstance(source, Bank):
        return source.memo(("variant-draws", problem), _draws, problem, source)
    return _draws(problem, source)


def all_draws(bank: Bank) -> dict[str, Draws]:
    """Every variant problem's draws, by problem id: plain data (picklable), derived here (which
    loads the spec) to be handed to another process's copy of the bank with :func:`seed_draws`."""
    return {p.id: draws(p, bank) for p in bank.problems if p.variant is not None}


def seed_draws(bank: Bank, given: dict[str, Draws]) -> int:
    """Take the draws :func:`all_draws` derived from an identical bank elsewhere, so that this
    process shows each learner's variant without loading the spec; how many problems got them
    (a problem whose draws are already here, or not given, is left as it is and derived on use)."""
    n = 0
    for p in bank.problems:
        d = given.get(p.id)
        if p.variant is not None and d is not None:
            bank.memo(("variant-draws", p), lambda d=d: d)
            n += 1
    return n


def _draws(problem: Problem, subject: Any) -> Draws:
    from .verify import derived
    if isinstance(subject, Bank):
        subject = subject.subject
    assert problem.variant is not None
    names = [n for n, _ in problem.variant.choose]
    integral = _is_integral(problem.reference)
    out = []
    for values in itertools.product(*(v for _, v in problem.variant.choose)):
        combo = dict(zip(names, values))
        value = derived(problem, subject, at=combo)
        value = tuple(value) if isinstance(value, tuple) else as_fraction(value)
        if integral and isinstance(value, Fraction):
            if value.denominator != 1:
                continue
            value = int(value)
        out.append((tuple(combo.items()), value))
    return tuple(out)


def _is_integral(reference: Any) -> bool:
    try:
        return as_fraction(reference).denominator == 1
    except (ValueError, TypeError, ZeroDivisionError):
        return False


def index_for(problem_id: str, learner: str, n: int) -> int:
    digest = hashlib.sha256(f"{problem_id}\x00{learner}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % n


def name_of(combo: tuple[tuple[str, int], ...]) -> str:
    return "variant " + ", ".join(f"{k}={v}" for k, v in combo)


def for_learner(problem: Problem, learner: str, bank: Bank) -> tuple[Problem, str | None]:
    """The problem as this learner sees it, and the variant's name (None: no variant)."""
    if problem.variant is None:
        return problem, None
    options = draws(problem, bank)
    index = index_for(problem.id, learner, len(options))
    return bank.memo(("variant-seen", problem, index), _variant, problem, options, index)


def drawn_values(problem: Problem, learner: str, bank: Bank) -> dict[str, int]:
    """The numbers this learner gets, {name: value} (empty: no variant)."""
    if problem.variant is None:
        return {}
    options = draws(problem, bank)
    return dict(options[index_for(problem.id, learner, len(options))][0])


def _variant(problem: Problem, options: Draws, index: int) -> tuple[Problem, str]:
    """The problem as draw ``index`` of ``options`` shows it, and the draw's name."""
    combo, reference = options[index]
    values = dict(combo)
    prompt = _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), problem.prompt)
    if isinstance(reference, tuple):
        reference = list(reference)
    elif isinstance(reference, Fraction):
        reference = f"{reference.numerator}/{reference.denominator}"
    seen = with_reference(problem, reference, prompt)
    assert problem.derive is not None
    at = dict(problem.derive.at)
    at.update(values)
    return replace(seen, derive=replace(problem.derive, at=frozen(at))), name_of(combo)
