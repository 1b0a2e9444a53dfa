"""``quantity``: a number with its unit (16777216 bytes, 16 MiB, 16.8 MB), converted by pint to
the reference's ``unit`` and compared like a number; unit mix-ups (MB for MiB, bits for bytes)
have their own messages."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from grader.errors import SpecError

from .. import feedback as fb
from ..compare import ACCEPTED, COARSE, accepted, min_sig_figs, verdict
from ..mistakes import BITS, NUMBER_FACTORS, binary_decimal, unit_confusion
from ..model import AnswerSpec, Mistake, Outcome, Raw
from ..prepared import prepare as prepared
from . import exact
from .base import BankSite, Shown, distinct

if TYPE_CHECKING:
    from grader.expr import SymbolTable

    from ..parts import Formulas

NAME = "quantity"
HELP = "a number with its unit (bytes, KiB, MB, FLOPs, ...), converted to the reference's unit"
same = exact.same
describe = exact.describe


def _unit_field(site: BankSite) -> str | None:
    unit = site.item.get("unit")
    if unit is not None and not isinstance(unit, str):
        site.error("'unit' must be the reference's unit, e.g. byte", "unit")
        return None
    return unit


FIELDS = {"unit": _unit_field}

# a byte unit's prefix level: 1 for kB and KiB, 2 for MB and MiB, ...
_LEVEL = {f"{w}byte": k for k, ws in enumerate((("kilo", "kibi"), ("mega", "mebi"), ("giga", "gibi"), ("tera", "tebi"),
                                               ("peta", "pebi")), 1) for w in ws}


@dataclass(frozen=True)
class QuantityRef:
    value: Fraction         # in ``unit``
    unit: str               # pint name
    min_sig: int | None
    mistakes: tuple[tuple[Fraction, Mistake], ...]     # (value in unit, Mistake)
    variants: tuple[tuple[Fraction, str], ...] = ()     # (value in unit, message): derived, then reference × factor
    measures: str | None = None


def _measures(spec: AnswerSpec, unit: str) -> str | None:
    """What a quantity measures: as the spec says, else from its unit (bytes, FLOPs)."""
    if spec.measures is not None:
        return spec.measures
    from ..units import kind_of
    what = kind_of(unit)
    return "bytes" if what == "an amount of data" else "flops" if what == "a number of operations" else None


def _ref_unit(spec: AnswerSpec) -> str:
    from grader.units.quantities import UNITS
    unit = spec.unit or "byte"
    if unit in UNITS:
        return UNITS[unit][0]
    if unit in {u for u, _ in UNITS.values()}:
        return unit
    known = ", ".join(sorted({u for u, _ in UNITS.values()}))
    raise SpecError(f"unit {unit!r} is not one of the known units ({known})")


def prepare(spec: AnswerSpec) -> QuantityRef:
    from ..units import read_quantity
    unit = _ref_unit(spec)

    def value_of(x: Raw) -> Fraction:
        if isinstance(x, (int, float, Fraction)) or hasattr(x, "q"):
            return exact.reading_of_reference(x).value
        q = read_quantity(x, unit)
        if q.unit is None:
            return q.number.value
        if q.value is None:
            raise SpecError(f"{x!r} cannot be converted to {unit}")
        return q.value

    ref = value_of(spec.reference)
    mistakes = tuple((value_of(m.value), m) for m in spec.mistakes)
    measures = _measures(spec, unit)
    variants = [(value_of(m.value), m.message) for m in spec.derived]
    variants += [(ref * d.factor, d.message) for d in NUMBER_FACTORS.get(measures, ()) if d.factor != 1]
    return QuantityRef(ref, unit, min_sig_figs(spec, ref), mistakes, distinct(variants, ref), measures)


def check(spec: AnswerSpec, raw: Raw) -> Outcome:
    from grader.units.quantities import factor

    from ..units import BINARY_OF, DECIMAL_OF, kind_of, plural, read_quantity
    ref: QuantityRef = prepared(spec)
    q = read_quantity(raw, ref.unit)
    units = plural(ref.unit)
    if q.unit is None:
        n = q.number
        if accepted(n.value, n.sig_figs, n.half_unit, ref.value, spec.tolerance, ref.min_sig):
            return fb.wrong(q.read_as, f"The number is right in {units}, but a quantity needs its unit: "
                                       f"write {q.read_as} {units}.")
        return fb.wrong(q.read_as, f"A unit is missing: give the quantity with its unit ({units}, KiB, MiB, MB, ...).")
    if q.value is None:
        return fb.wrong(q.read_as, f"{q.read_as} is {kind_of(q.unit)} ({q.unit}), but the question asks for "
                                   f"{kind_of(ref.unit)} ({ref.unit}).")
    sig, half, error = q.number.sig_figs, q.half_unit, q.error
    v = verdict(q.value, sig, half, ref.value, spec.tolerance, ref.min_sig, error)
    if v in ACCEPTED:
        return fb.correct(q.read_as, exact.accepted_note(v, q.number, ref.value, spec, f" {units}"))
    if error is not None:               # not rational: equal only if proven so
        assert q.factor is not None     # a value in the reference unit comes with its factor
        same_value = exact.exactly(q.number.expr, ref.value, q.factor)
        if same_value == "equal":
            return fb.correct(q.read_as)
        if same_value == "undecided":
            return fb.undecided(q.read_as)
    for mv, m in ref.mistakes:
        if accepted(q.value, sig, half, mv, spec.tolerance, ref.min_sig, error):
            return fb.from_mistake(q.read_as, m)

    answer = q.value

    def near(value: Fraction) -> bool:    # a coarse answer must be the value exactly
        return (answer == value if v == COARSE else
                accepted(answer, sig, half, value, spec.tolerance, ref.min_sig, error))

    other = BINARY_OF.get(q.unit) or DECIMAL_OF.get(q.unit)
    if other is not None:
        f_other = factor(other, ref.unit)
        n = q.number
        if f_other and (n.value == ref.value / f_other if v == COARSE else
                        accepted(n.value, n.sig_figs, n.half_unit, ref.value / f_other, None, ref.min_sig)):
            confusion = unit_confusion(q.read_as.split(" = ")[0], q.value, q.unit, ref.value, ref.unit)
            if confusion is not None:
                return fb.wrong(q.read_as, confusion)
    if ref.measures == "bytes" and q.unit.endswith("bit") and near(ref.value / 8):
        return fb.wrong(q.read_as, BITS)
    for value, message in ref.variants:
        if near(value):
            return fb.wrong(q.read_as, message)
    level = _LEVEL.get(q.unit)
    if ref.measures == "bytes" and level:           # MB against MiB: only for an answer in MB or MiB
        for d in binary_decimal(level):
            if near(ref.value * d.factor):
                return fb.wrong(q.read_as, d.message)
    if v == COARSE:
        return fb.wrong(q.read_as, fb.too_coarse(q.read_as.split(" = ")[0], sig or 0, ref.min_sig, spec.tolerance))
    if error is not None and exact.near(q.value, ref.value) and q.factor is not None:
        return fb.wrong(q.read_as, exact.not_exact(ref.value, q.number.expr, q.factor, f" {units}"))
    return fb.wrong(q.read_as, fb.otherwise(spec.feedback, "not the expected quantity"))


def read(spec: AnswerSpec, text: Raw) -> Shown:
    from ..units import plural, read_quantity
    q = read_quantity(text, prepared(spec).unit)
    return Shown(q.read_as, exact.rational(q.number.value),
                 plural(q.unit, q.number.value) if q.unit is not None else None)


def variants(derive: Any, formulas: Formulas, table: SymbolTable, at: dict[str, Any],
             measures: str | None) -> tuple[tuple[Any, str], ...]:
    from .. import derive as dv
    if not isinstance(derive.formula, str):
        return ()
    return dv.number_variants(derive.formula.strip(), formulas, table, at, measures)
