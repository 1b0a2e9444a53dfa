"""``expression``: a formula in the spec's symbols (4d² + 4d, 4*d_model^2 + 4*d_k*h), compared
by fingerprints, as polynomials, then by bounded SymPy equivalence."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import feedback as fb
from ..mistakes import EXPRESSION_FACTORS
from ..model import AnswerSpec, Outcome, Raw
from ..prepared import prepare as prepared
from .base import Shown, expr_column, sympy_or_text, table_of

if TYPE_CHECKING:
    import sympy

    from grader.expr import SymbolTable
    from grader.expr.poly import Poly

    from ..model import Mistake
    from ..parts import Formulas
    from ..symbolic import Fingerprint

NAME = "expression"
HELP = "a formula in the spec's symbols, compared by equivalence"
TABLE = True
MEASURE_POINTS = True       # a formula is checked against mha at several points


@dataclass(frozen=True)
class Target:
    """A formula an answer is compared with: SymPy, its polynomial (None when it is not one) and
    its fingerprint (:mod:`grader.answers.symbolic`)."""

    expr: sympy.Basic
    poly: Poly | None
    fp: Fingerprint | None
    symbols: frozenset[str]     # the names of its symbols

    @classmethod
    def of(cls, expr: sympy.Basic, table: SymbolTable) -> "Target":
        from ..symbolic import fingerprint, polynomial
        return cls(expr, polynomial(expr, table), fingerprint(expr, table),
                   frozenset(str(s) for s in expr.free_symbols))


def prepare(spec: AnswerSpec) -> tuple[Target, tuple[tuple[Target, Mistake], ...], tuple[tuple[Target, str], ...]]:
    """(reference, ((mistake, Mistake), ...), ((variant, message), ...)), each formula a
    :class:`Target`: derived from the spec, then reference × factor."""
    import sympy
    from ..symbolic import read_expression
    table = table_of(spec)
    ref, _ = read_expression(spec.reference, table)
    mistakes: list[tuple[Target, Mistake]] = []
    for m in spec.mistakes:
        e = sympy_or_text(m.value, lambda v: read_expression(v, table)[0])
        mistakes.append((Target.of(e, table), m))
    variants: list[tuple[Target, str]] = []
    seen = {ref}
    candidates = [(sympy_or_text(m.value, lambda v: read_expression(v, table)[0]), m.message) for m in spec.derived]
    candidates += [(ref * sympy.Rational(d.factor.numerator, d.factor.denominator), d.message)
                   for d in EXPRESSION_FACTORS.get(spec.measures, ()) if d.factor != 1]
    for e, message in candidates:       # (a repeat SymPy does not see as one costs a comparison, no more)
        if e in seen:
            continue
        seen.add(e)
        variants.append((Target.of(e, table), message))
    return Target.of(ref, table), tuple(mistakes), tuple(variants)


def check(spec: AnswerSpec, raw: Raw) -> Outcome:
    from ..symbolic import DIFFERENT, EQUAL as SAME, UNDECIDED, compare_expressions, compare_polynomials, \
        fingerprint, may_equal, polynomial_fingerprint, read_formula
    ref, mistakes, variants = prepared(spec)
    table = table_of(spec)
    parsed = read_formula(raw, table)
    shown, poly = parsed.read_as, parsed.poly
    fp = polynomial_fingerprint(poly) if poly is not None else fingerprint(parsed.expr, table)

    def same(target: Target) -> str:
        if not may_equal(fp, target.fp):
            return DIFFERENT
        if poly is not None and target.poly is not None:      # exact, without SymPy
            return compare_polynomials(poly, target.poly)
        return compare_expressions(parsed.expr, target.expr, table)

    v = same(ref)
    if v == SAME:
        return fb.correct(shown)
    for target, m in mistakes:
        if same(target) == SAME:
            return fb.from_mistake(shown, m)
    if v == UNDECIDED:
        return fb.undecided(shown)
    constant = all(not m for m in poly) if poly is not None else not parsed.expr.free_symbols
    if ref.symbols and constant:
        names = ", ".join(sorted(ref.symbols))
        return fb.wrong(shown, f"Your answer is a number; the question asks for a formula in {names}.")
    for target, message in variants:
        if same(target) == SAME:
            return fb.wrong(shown, message)
    return fb.wrong(shown, fb.otherwise(spec.feedback, "not equivalent to the expected formula"))


def read(spec: AnswerSpec, text: Raw) -> Shown:
    from ..symbolic import read_formula
    parsed = read_formula(text, table_of(spec))
    return Shown(parsed.read_as, parsed.expr)


def column(spec: AnswerSpec, raw: Raw) -> int | None:
    return expr_column(raw, spec.table)


def same(problem: Any, reference: Any, value: Any, spec: Any) -> bool:
    from grader.expr import equivalent
    return equivalent(spec.parse(str(reference)), value, spec.table).verdict == "equal"


def variants(derive: Any, formulas: Formulas, table: SymbolTable, at: dict[str, Any],
             measures: str | None) -> tuple[tuple[Any, str], ...]:
    from .. import derive as dv
    if not isinstance(derive.formula, str):
        return ()
    return dv.formula_variants(derive.formula.strip(), formulas, table, measures)
