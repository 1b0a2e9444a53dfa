"""Verify a problem's reference against the spec's formulas and the real mha.

- ``derive: {formula, at}``: :func:`grader.claims.evaluate` at the given sizes (a number, one
  number per axis for a shape); with no ``at`` the formula itself, compared symbolically with
  :func:`grader.expr.equivalent` (expressions) or as an inequality (relations).
- ``measure: {quantity, at}``: :func:`grader.claims.measure` on the real mha (torch, lazily).
- a ``variant`` problem: every draw must have a well-defined reference (an integer when the
  base reference is one).

Each failure is a :class:`~grader.bank.model.Verification` with ``ok=False`` saying what was
expected and what was found; nothing raises for a wrong reference.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from grader.answers.kinds import KINDS
from grader.answers.kinds.relation import same_relation
from grader.answers.kinds.shape import as_shape
from grader.errors import GraderError

from .model import Bank, Problem, Verification, as_fraction

__all__ = ["verify_reference", "measured", "formula_text", "symbolic", "derived", "reference_expr", "same",
           "same_relation", "as_shape", "describe"]


def verify_reference(problem: Problem, bank: Bank) -> Verification:
    """Check ``problem.reference`` against the spec (``derive``) and the real mha (``measure``).

    ``ok`` is False when either disagrees, or when the derivation itself fails (unknown
    formula, bad quantity): a reference nobody can confirm is not trusted either.
    """
    expected = describe(problem.reference, problem.kind)
    try:
        return _verify(problem, bank, expected)
    except GraderError as e:
        return Verification(False, expected, "error", f"cannot derive the reference: {e}")
    except (ValueError, TypeError, KeyError, ArithmeticError) as e:
        return Verification(False, expected, "error", f"cannot derive the reference: {type(e).__name__}: {e}")


def _verify(problem: Problem, bank: Bank, expected: str) -> Verification:
    kind = problem.kind
    plain_check = KINDS[kind].verify_plain
    if plain_check is not None:         # a kind with nothing to derive (choice, free text, code)
        ok, found_plain, message = plain_check(problem)
        return Verification(ok, expected, found_plain, message)
    if problem.derive is None and problem.measure is None:
        return Verification(False, expected, "nothing", "no 'derive' or 'measure': the reference cannot be verified")
    found, fails = [], []
    subject = bank.subject
    if problem.derive is not None:
        value = derived(problem, subject)
        found.append(f"spec: {describe(value, kind)}")
        if not same(problem, problem.reference, value, subject):
            fails.append(f"the spec's {formula_text(problem)} gives {describe(value, kind)}")
    if problem.measure is not None:
        found_m, fail = measured(problem, subject)
        found.append(found_m)
        if fail:
            fails.append(fail)
    if problem.variant is not None and not fails:
        from .variants import draws
        n = len(draws(problem, bank))
        found.append(f"{n} variants")
        if n == 0:
            fails.append("no variant has a well-defined reference (an integer where the reference is one)")
    if fails:
        return Verification(False, expected, "; ".join(found), f"reference {expected} is wrong: " + "; ".join(fails))
    return Verification(True, expected, "; ".join(found), "reference verified")


def measured(problem: Problem, subject: Any) -> tuple[str, str | None]:
    """Measure on the real mha: (what was found, why it disagrees or None)."""
    # the submodule's function: importing grader.claims.measure rebinds the package's name `measure`
    from grader.claims.measure import measure
    m = problem.measure
    assert m is not None

    def one(at: Mapping[str, Any]) -> Any:
        value = measure(m.quantity, dict(at))
        # an axis is given for a shape quantity (a tuple); cast: no check, an int still raises TypeError
        return cast(tuple[int, ...], value)[m.axis] if m.axis is not None else value

    if not m.points:
        value = one(m.at)
        kind = "number" if m.axis is not None and problem.kind != "quantity" else problem.kind
        text = f"mha: {describe(value, kind)}"
        if same(problem, problem.reference, value, subject):
            return text, None
        return text, f"the real mha measures {m.quantity} = {describe(value, kind)}"
    ref = reference_expr(problem, problem.reference, subject)
    for at in m.points:
        value = one(at)
        mine = ref.subs({s: at[s.name] for s in ref.free_symbols if s.name in at})
        if not (mine.is_number and as_fraction(mine) == as_fraction(value)):
            where = ", ".join(f"{k}={v}" for k, v in at.items())
            return (f"mha: {m.quantity} = {describe(value, 'number')} at {where}",
                    f"at {where} the reference gives {mine} but the real mha measures {describe(value, 'number')}")
    return f"mha: {m.quantity} matches at {len(m.points)} points", None


def formula_text(problem: Problem) -> str:
    d = problem.derive
    assert d is not None
    f = f"{d.formula[0]} {d.op} {d.formula[1]}" if d.op else (", ".join(d.formula) if isinstance(d.formula, tuple) else d.formula)
    at = ", ".join(f"{k}={v}" for k, v in d.at.items())
    return f"{f} at {at}" if at else f


def symbolic(subject: Any, formula: str) -> Any:
    """A spec formula by name, or an expression in the spec's symbols, as SymPy."""
    formulas = getattr(subject, "formulas", {}) or {}
    if formula in formulas:
        return formulas[formula]
    from grader.expr import parse
    return parse(formula, subject.table).expr


class SpecView:
    """The spec as a kind's verification sees it: ``evaluate(formula, values)``,
    ``symbolic(formula)``, ``parse(text, relations=False)`` and ``table``."""

    def __init__(self, subject: Any) -> None:
        self.subject = subject
        self.table = subject.table

    def evaluate(self, formula: str, values: Mapping[str, Any]) -> Any:
        from grader.claims import evaluate
        return evaluate(self.subject, formula, dict(values))

    def symbolic(self, formula: str) -> Any:
        return symbolic(self.subject, formula)

    def parse(self, text: str, relations: bool = False) -> Any:
        from grader.expr import parse
        return parse(text, self.table, relations=relations).expr


def derived(problem: Problem, subject: Any, at: Mapping[str, Any] | None = None) -> Any:
    """What the spec gives for ``problem.derive`` (``at`` overrides its sizes, for variants),
    as the problem's kind derives it."""
    d = problem.derive
    assert d is not None
    values = dict(d.at)
    values.update(at or {})
    return KINDS[problem.kind].derived(problem, SpecView(subject), values)


def reference_expr(problem: Problem, reference: Any, subject: Any) -> Any:
    from grader.expr import parse
    return parse(str(reference), subject.table, relations=problem.kind == "relation").expr


def same(problem: Problem, reference: Any, value: Any, subject: Any) -> bool:
    """Whether the bank's ``reference`` is what the spec/mha gave (``value``), as the problem's kind compares."""
    return bool(KINDS[problem.kind].same(problem, reference, value, SpecView(subject)))


def describe(value: Any, kind: str) -> str:
    entry = KINDS.get(kind)
    return entry.describe(value) if entry is not None else str(value)
