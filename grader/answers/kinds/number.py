"""``number``: an exact count or value (1048576, 1,048,576, 2^20, 1.05e6, 34.4B), compared
exactly or at the precision it states (``sig_figs``, ``tolerance``)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from grader.errors import SpecError

from .. import feedback as fb
from ..compare import ACCEPTED, COARSE, accepted, min_sig_figs, verdict
from ..mistakes import NUMBER_FACTORS
from ..model import AnswerSpec, Mistake, Outcome, Raw, Unreadable
from ..numbers import Reading, read_number
from ..prepared import prepare as prepared
from . import exact
from .base import Shown, distinct, expr_column

if TYPE_CHECKING:
    from grader.expr import SymbolTable

    from ..parts import Formulas

NAME = "number"
HELP = "a number: exact, or rounded at the precision it states (sig_figs, tolerance)"
same = exact.same
describe = exact.describe


@dataclass(frozen=True)
class NumberRef:
    value: Fraction
    min_sig: int | None
    mistakes: tuple[tuple[Reading, Mistake], ...]
    variants: tuple[tuple[Fraction, str], ...] = ()     # derived from the spec, then reference × factor


def prepare(spec: AnswerSpec) -> NumberRef:
    ref = exact.reading_of_reference(spec.reference).value
    mistakes = []
    for m in spec.mistakes:
        try:
            mistakes.append((exact.reading_of_reference(m.value), m))
        except Unreadable as e:
            raise SpecError(f"mistake {m.value!r}: {e}") from None
    variants = []
    for m in spec.derived:
        try:
            variants.append((exact.reading_of_reference(m.value).value, m.message))
        except Unreadable as e:
            raise SpecError(f"derived mistake {m.value!r}: {e}") from None
    variants += [(ref * d.factor, d.message) for d in NUMBER_FACTORS.get(spec.measures, ()) if d.factor != 1]
    return NumberRef(ref, min_sig_figs(spec, ref), tuple(mistakes), distinct(variants, ref))


def check(spec: AnswerSpec, raw: Raw) -> Outcome:
    ref: NumberRef = prepared(spec)
    r = read_number(raw)
    error = r.error
    v = verdict(r.value, r.sig_figs, r.half_unit, ref.value, spec.tolerance, ref.min_sig, error)
    if v in ACCEPTED:
        return fb.correct(r.read_as, exact.accepted_note(v, r, ref.value, spec, ""))
    if error is not None:               # not rational: equal only if proven so
        same_value = exact.exactly(r.expr, ref.value)
        if same_value == "equal":
            return fb.correct(r.read_as)
        if same_value == "undecided":
            return fb.undecided(r.read_as)
    half = r.half_unit
    for mv, m in ref.mistakes:
        if accepted(r.value, r.sig_figs, half, mv.value, spec.tolerance, ref.min_sig, error):
            return fb.from_mistake(r.read_as, m)
    for value, message in ref.variants:     # a coarse answer must be a variant exactly to count as one
        if (r.value == value if v == COARSE else
                accepted(r.value, r.sig_figs, half, value, spec.tolerance, ref.min_sig, error)):
            return fb.wrong(r.read_as, message)
    if v == COARSE:
        return fb.wrong(r.read_as, fb.too_coarse(r.read_as, r.sig_figs or 0, ref.min_sig, spec.tolerance))
    if error is not None and exact.near(r.value, ref.value):
        return fb.wrong(r.read_as, exact.not_exact(ref.value, r.expr, Fraction(1), ""))
    return fb.wrong(r.read_as, fb.otherwise(spec.feedback, "not the expected value"))


def read(spec: AnswerSpec, text: Raw) -> Shown:
    r: Reading = read_number(text)
    return Shown(r.read_as, exact.rational(r.value))


def column(spec: AnswerSpec, raw: Raw) -> int | None:
    from grader.expr import SymbolTable
    return expr_column(raw, SymbolTable.build(symbols={}))     # arithmetic on numbers: no symbols


def variants(derive: Any, formulas: Formulas, table: SymbolTable, at: dict[str, Any],
             measures: str | None) -> tuple[tuple[Any, str], ...]:
    from .. import derive as dv
    if not isinstance(derive.formula, str):
        return ()
    return dv.number_variants(derive.formula.strip(), formulas, table, at, measures)
