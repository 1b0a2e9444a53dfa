"""Verify a problem's reference against the spec's formulas and the real mha.

- ``derive: {formula, at}``: :func:`grader.spec.evaluate` at the given sizes (a number, one
  number per axis for a shape); with no ``at`` the formula itself, compared symbolically with
  :func:`grader.expr.equivalent` (expressions) or as an inequality (relations).
- ``measure: {quantity, at}``: :func:`grader.spec.measure` on the real mha (torch, lazily).
- a ``variant`` problem: every draw must have a well-defined reference (an integer when the
  base reference is one).

Each failure is a :class:`~grader.bank.model.Verification` with ``ok=False`` saying what was
expected and what was found; nothing raises for a wrong reference.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from grader.errors import GraderError

from .model import Bank, Problem, Verification, as_fraction

_SHAPE = re.compile(r"^\s*[\(\[]?\s*(\d+(?:\s*[,x×]\s*\d+)*)\s*[\)\]]?\s*$")


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
    if kind == "choice":
        text = dict(problem.choices)[str(problem.reference)]
        return Verification(True, expected, f"option {problem.reference}: {text}",
                            "a choice: the reference is one of the options (nothing to derive)")
    if kind == "free_text":
        ok = isinstance(problem.reference, str) and bool(problem.reference.strip())
        return Verification(ok, expected, "model answer recorded" if ok else "no model answer",
                            "free text: graded by a person against the model answer")
    if kind == "code":
        from pathlib import Path
        missing = [p for p in (problem.solution, problem.tests) if p and not Path(p).exists()]
        ok = not missing and bool(problem.solution or problem.tests)
        return Verification(ok, "solution and tests present", "missing: " + ", ".join(missing) if missing else "present",
                            "code: graded by its tests (grader.code)")
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
    # the submodule's function: importing grader.spec.measure rebinds the package's name `measure`
    from grader.spec.measure import measure
    m = problem.measure
    assert m is not None

    def one(at: Mapping[str, Any]) -> Any:
        value = measure(m.quantity, dict(at))
        return value[m.axis] if m.axis is not None else value

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


def derived(problem: Problem, subject: Any, at: Mapping[str, Any] | None = None) -> Any:
    """What the spec gives for ``problem.derive`` (``at`` overrides its sizes, for variants)."""
    from grader.spec import evaluate
    d = problem.derive
    assert d is not None
    values = dict(d.at)
    values.update(at or {})
    if problem.kind == "relation":
        import sympy
        lhs, rhs = (symbolic(subject, f) for f in d.formula)
        return {">": sympy.StrictGreaterThan, "<": sympy.StrictLessThan,
                ">=": sympy.GreaterThan, "<=": sympy.LessThan}[str(d.op)](lhs, rhs)
    if isinstance(d.formula, tuple):
        return tuple(int(as_fraction(evaluate(subject, f, values))) for f in d.formula)
    if not values:
        return symbolic(subject, d.formula)
    return evaluate(subject, d.formula, values)


def reference_expr(problem: Problem, reference: Any, subject: Any) -> Any:
    from grader.expr import parse
    return parse(str(reference), subject.table, relations=problem.kind == "relation").expr


def same(problem: Problem, reference: Any, value: Any, subject: Any) -> bool:
    """Whether the bank's ``reference`` is what the spec/mha gave (``value``)."""
    kind = problem.kind
    if kind == "shape":
        return as_shape(reference) == tuple(int(v) for v in value)
    if kind in ("number", "quantity"):
        ref, got = as_fraction(reference), as_fraction(value)
        tol = problem.tolerance if isinstance(problem.tolerance, (int, float)) and not isinstance(problem.tolerance, bool) else 0
        return abs(ref - got) <= abs(got) * as_fraction(tol)
    if kind == "expression":
        from grader.expr import equivalent
        return equivalent(reference_expr(problem, reference, subject), value, subject.table).verdict == "equal"
    if kind == "relation":
        return same_relation(reference_expr(problem, reference, subject), value)
    raise ValueError(f"kind {kind!r} has nothing to derive")


def same_relation(a: Any, b: Any) -> bool:
    """``f > 0`` and ``g > 0`` describe the same region when f/g is positive under the symbols'
    assumptions (f and g then have one sign everywhere); strictness must agree too."""
    import sympy
    fa, sa = _oriented(a)
    fb, sb = _oriented(b)
    if sa != sb or fa is None or fb is None:
        return False
    return bool(sympy.factor(sympy.cancel(fa / fb)).is_positive)


def _oriented(rel: Any) -> tuple[Any, bool | None]:
    import sympy
    if isinstance(rel, sympy.StrictGreaterThan):
        return rel.lhs - rel.rhs, True
    if isinstance(rel, sympy.StrictLessThan):
        return rel.rhs - rel.lhs, True
    if isinstance(rel, sympy.GreaterThan):
        return rel.lhs - rel.rhs, False
    if isinstance(rel, sympy.LessThan):
        return rel.rhs - rel.lhs, False
    return None, None


def as_shape(value: Any) -> tuple[int, ...]:
    """A shape from a list/tuple of integers or text like "(128, 64)" / "128x64"."""
    if isinstance(value, (list, tuple)):
        return tuple(int(v) for v in value)
    m = _SHAPE.match(str(value))
    if not m:
        raise ValueError(f"not a shape: {value!r}")
    return tuple(int(x) for x in re.split(r"\s*[,x×]\s*", m.group(1)))


def describe(value: Any, kind: str) -> str:
    if kind == "shape" and isinstance(value, (list, tuple)):
        return "(" + ", ".join(str(v) for v in value) + ")"
    if kind in ("number", "quantity"):
        try:
            f = as_fraction(value)
            return f"{f.numerator:,}" if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
        except (ValueError, TypeError, ZeroDivisionError):
            pass
    return str(value)
