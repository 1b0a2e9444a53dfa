"""``relation``: an inequality in the spec's symbols (n > 2d, 2d < n), told apart by exact signs
at sample points, then by SymPy; reversed and strict/non-strict have their own messages."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import feedback as fb
from ..model import AnswerSpec, Outcome, Raw
from ..prepared import prepare as prepared
from .base import BankSite, Shown, expr_column, sympy_or_text, table_of

if TYPE_CHECKING:
    from collections.abc import Callable

    import sympy

    from grader.expr import SymbolTable

    from ..model import Mistake
    from ..parts import Formulas
    from ..symbolic import Truths

    #: (truths at the fixed points, truths at the spread points) of a relation
    Probes = tuple[Truths | None, Truths | None]

NAME = "relation"
HELP = "an inequality in the spec's symbols (n > 2d), compared as the region where it holds"
TABLE = True
DERIVE_KEYS = frozenset({"lhs", "op", "rhs", "at"})
RELATIONS = (">", "<", ">=", "<=")


def read_derive(raw: Any, site: BankSite) -> tuple[Any, str | None] | None:
    """``derive: {lhs, op, rhs, at}``: ((lhs, rhs), op)."""
    if raw.get("op") not in RELATIONS or not isinstance(raw.get("lhs"), str) or not isinstance(raw.get("rhs"), str):
        site.error(f"a relation's 'derive' must be {{lhs, op, rhs}} with op one of {' '.join(RELATIONS)}", "derive")
        return None
    return (raw["lhs"], raw["rhs"]), raw["op"]


def _probes(rel: sympy.Basic, table: SymbolTable) -> Probes:
    from ..symbolic import spread_truths, truths
    return truths(rel, table), spread_truths(rel, table)


def _not_same(a: Probes, b: Probes,
              differ: Callable[[Truths | None, Truths | None], bool] | None = None) -> bool:
    """Whether the probes of two relations prove them not equivalent: by ``differ`` on each kind
    of truths (default :func:`grader.answers.symbolic.differ_somewhere`)."""
    from ..symbolic import differ_somewhere
    differ = differ or differ_somewhere
    return differ(a[0], b[0]) or differ(a[1], b[1])


def prepare(spec: AnswerSpec) -> tuple[sympy.Basic, Probes, tuple[tuple[sympy.Basic, Probes, Mistake], ...],
                                      tuple[tuple[sympy.Basic, Probes, str], ...]]:
    """(reference, its probes, ((mistake, probes, Mistake), ...), ((variant, probes, message), ...)),
    probes being (truths, spread truths) from :mod:`grader.answers.symbolic`: cheap proofs that two differ."""
    from ..symbolic import check_relation, read_relation
    table = table_of(spec)
    ref = check_relation(read_relation(spec.reference, table)[0])
    mistakes: list[tuple[sympy.Basic, Probes, Mistake]] = []
    for m in spec.mistakes:
        rel = check_relation(sympy_or_text(m.value, lambda v: read_relation(v, table)[0]))
        mistakes.append((rel, _probes(rel, table), m))
    variants: list[tuple[sympy.Basic, Probes, str]] = []
    for m in spec.derived:
        rel = check_relation(sympy_or_text(m.value, lambda v: read_relation(v, table)[0]))
        variants.append((rel, _probes(rel, table), m.message))
    return ref, _probes(ref, table), tuple(mistakes), tuple(variants)


def check(spec: AnswerSpec, raw: Raw) -> Outcome:
    from ..symbolic import DIFFERENT, EQUAL as SAME, UNDECIDED, check_relation, compare_relations, disagreement, \
        read_relation, truths_differ
    ref, ref_probes, mistakes, variants = prepared(spec)
    table = table_of(spec)
    rel, shown = read_relation(raw, table)
    mine = check_relation(rel)
    probes = _probes(mine, table)
    # different at a sample point, and not simply reversed (compare_relations says "reversed")
    proven = _not_same(probes, ref_probes, truths_differ)
    v, how = (DIFFERENT, "sampling") if proven else compare_relations(mine, ref, table)
    if v == UNDECIDED and _not_same(probes, ref_probes):
        v, how = DIFFERENT, "sampling"      # a sample point where they differ is a proof
    if v == SAME:
        return fb.correct(shown)
    for mv, mprobes, m in mistakes:
        if not _not_same(probes, mprobes) and compare_relations(mine, mv, table)[0] == SAME:
            return fb.from_mistake(shown, m)
    if v == UNDECIDED:
        return fb.undecided(shown)
    if how == "reversed":
        return fb.wrong(shown, "Your inequality points the other way: it holds exactly where the expected one fails.")
    if how == "strictness":
        return fb.wrong(shown, "Strict (>, <) and non-strict (≥, ≤) differ at the boundary, where both sides are "
                               "equal: check which one the question asks for.")
    for mv, mprobes, message in variants:
        if not _not_same(probes, mprobes) and compare_relations(mine, mv, table)[0] == SAME:
            return fb.wrong(shown, message)
    where = disagreement(mine, ref, probes, ref_probes, table)
    return fb.wrong(shown, fb.otherwise(spec.feedback, "not the expected relation" + (f": {where}" if where else "")))


def read(spec: AnswerSpec, text: Raw) -> Shown:
    from ..symbolic import read_relation
    rel, shown = read_relation(text, table_of(spec))
    return Shown(shown, rel)


def column(spec: AnswerSpec, raw: Raw) -> int | None:
    return expr_column(raw, spec.table, relations=True)


def derived(problem: Any, spec: Any, values: dict[str, Any]) -> Any:
    """The spec's ``lhs op rhs`` as a SymPy relation."""
    import sympy
    d = problem.derive
    lhs, rhs = (spec.symbolic(f) for f in d.formula)
    return {">": sympy.StrictGreaterThan, "<": sympy.StrictLessThan,
            ">=": sympy.GreaterThan, "<=": sympy.LessThan}[str(d.op)](lhs, rhs)


def same(problem: Any, reference: Any, value: Any, spec: Any) -> bool:
    return same_relation(spec.parse(str(reference), relations=True), value)


def same_relation(a: sympy.Basic, b: sympy.Basic) -> bool:
    """``f > 0`` and ``g > 0`` describe the same region when f/g is positive under the symbols'
    assumptions (f and g then have one sign everywhere); strictness must agree too."""
    import sympy
    fa, sa = _oriented(a)
    fb_, sb = _oriented(b)
    if sa != sb or fa is None or fb_ is None:
        return False
    return bool(sympy.factor(sympy.cancel(fa / fb_)).is_positive)


def _oriented(rel: sympy.Basic) -> tuple[sympy.Expr | None, bool | None]:
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


def variants(derive: Any, formulas: Formulas, table: SymbolTable, at: dict[str, Any],
             measures: str | None) -> tuple[tuple[Any, str], ...]:
    from .. import derive as dv
    if not derive.op or not isinstance(derive.formula, tuple) or len(derive.formula) != 2:
        return ()
    return dv.relation_variants(str(derive.formula[0]), derive.op, str(derive.formula[1]), formulas, table)
