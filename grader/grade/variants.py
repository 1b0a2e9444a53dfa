"""Variants: a problem draws its numbers from the learner id.

``variant: {seed_from: learner, choose: {d: [512, 768, 1024], h: [8, 12, 16]}}`` lists the
candidate values; the draws are every combination whose reference, from the problem's
``derive`` formula, is well defined (an integer where the base reference is one: h must
divide d for d_k). A learner gets one draw, chosen by a hash of (problem id, learner):
deterministic, the same on every run and machine, and spread evenly. The prompt's
``{name}`` placeholders are filled in and the result names the variant ("variant d=768, h=12").
"""
from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import replace
from fractions import Fraction

from grader.bank.model import Problem, as_fraction, frozen, with_reference

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_CACHE: dict = {}


def draws(problem: Problem, subject) -> tuple:
    """All well-defined draws of a variant problem: ((combo dict items, reference), ...)."""
    key = (problem.id, id(subject))
    if key in _CACHE:
        return _CACHE[key]
    from grader.bank.verify import derived
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
    _CACHE[key] = tuple(out)
    return _CACHE[key]


def _is_integral(reference) -> bool:
    try:
        return as_fraction(reference).denominator == 1
    except (ValueError, TypeError, ZeroDivisionError):
        return False


def index_for(problem_id: str, learner: str, n: int) -> int:
    digest = hashlib.sha256(f"{problem_id}\x00{learner}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % n


def name_of(combo) -> str:
    return "variant " + ", ".join(f"{k}={v}" for k, v in combo)


def for_learner(problem: Problem, learner: str, subject) -> tuple[Problem, str | None]:
    """The problem as this learner sees it, and the variant's name (None: no variant)."""
    if problem.variant is None:
        return problem, None
    options = draws(problem, subject)
    return _variant(problem, options, index_for(problem.id, learner, len(options)))


def drawn_values(problem: Problem, learner: str, subject) -> dict:
    """The numbers this learner gets, {name: value} (empty: no variant)."""
    if problem.variant is None:
        return {}
    options = draws(problem, subject)
    return dict(options[index_for(problem.id, learner, len(options))][0])


_SEEN: dict = {}


def _variant(problem: Problem, options, index: int) -> tuple[Problem, str]:
    key = (problem.id, id(options), index)
    if key in _SEEN:
        return _SEEN[key]
    combo, reference = options[index]
    values = dict(combo)
    prompt = _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), problem.prompt)
    if isinstance(reference, tuple):
        reference = list(reference)
    elif isinstance(reference, Fraction):
        reference = f"{reference.numerator}/{reference.denominator}"
    seen = with_reference(problem, reference, prompt)
    at = dict(problem.derive.at)
    at.update(values)
    _SEEN[key] = (replace(seen, derive=replace(problem.derive, at=frozen(at))), name_of(combo))
    return _SEEN[key]
