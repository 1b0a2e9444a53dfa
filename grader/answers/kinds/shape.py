"""``shape``: a tensor shape ((128, 64), 128×64, a YAML list), compared axis by axis;
transposed, missing or extra axes have their own messages."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from grader.values import to_fraction

from .. import feedback as fb
from ..guard import MAX_ITEMS, TEXT, Screening, screen
from ..mistakes import shape_mistake
from ..model import AnswerSpec, Mistake, Outcome, Raw
from ..prepared import prepare as prepared
from ..shapes import format_shape, read_shape
from .base import BankSite, FORMULA_ERROR, Shown, distinct

if TYPE_CHECKING:
    from grader.expr import SymbolTable

    from ..parts import Formulas

NAME = "shape"
HELP = "a tensor shape, (128, 64) or 128×64 or a YAML list, compared axis by axis"
MEASURES = "shape"
_SHAPE = re.compile(r"^\s*[\(\[]?\s*(\d+(?:\s*[,x×]\s*\d+)*)\s*[\)\]]?\s*$")


def _items(raw: list[Any] | tuple[Any, ...]) -> str | None:
    """A YAML list is a shape's axes: at most :data:`MAX_ITEMS` short integers."""
    if len(raw) > MAX_ITEMS:
        return f"a shape has at most {MAX_ITEMS} axes, not {len(raw):,}"
    for item in raw:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            what = "a nested list" if isinstance(item, (list, tuple)) else type(item).__name__
            return f"a shape is a flat list of integers, not one holding {what}"
        why = screen(item, TEXT)
        if why:
            return why
        if isinstance(item, str) and len(item) > 40:
            return "a shape's axis is a short integer"
    return None


SCREENING = Screening(items=_items)


def read_derive(raw: Any, site: BankSite) -> tuple[Any, str | None] | None:
    """``derive: {formula, at}``, the formula one per axis (a list) or one formula."""
    formula = raw.get("formula")
    if isinstance(formula, list) and all(isinstance(f, (str, int)) for f in formula):
        return tuple(str(f) for f in formula), None
    if not isinstance(formula, str):
        site.error(FORMULA_ERROR + " (a list, one per axis, for a shape)", "derive")
        return None
    return formula, None


def prepare(spec: AnswerSpec) -> tuple[tuple[int, ...], tuple[tuple[tuple[int, ...], Mistake], ...],
                                      tuple[tuple[tuple[int, ...], str], ...]]:
    """(reference, ((shape, Mistake), ...), ((shape, message), ...) derived from the spec)."""
    ref = read_shape(spec.reference)
    return (ref, tuple((read_shape(m.value), m) for m in spec.mistakes),
            distinct([(read_shape(m.value), m.message) for m in spec.derived], ref))


def check(spec: AnswerSpec, raw: Raw) -> Outcome:
    ref, mistakes, variants = prepared(spec)
    shape = read_shape(raw)
    shown = format_shape(shape)
    if shape == ref:
        return fb.correct(shown)
    for mv, m in mistakes:
        if shape == mv:
            return fb.from_mistake(shown, m)
    for mv, message in variants:
        if shape == mv:
            return fb.wrong(shown, message)
    found = shape_mistake(shape, ref)
    if found and found[1]:
        return fb.wrong(shown, found[0])
    return fb.wrong(shown, fb.otherwise(spec.feedback, found[0] if found else "not the expected shape"))


def read(spec: AnswerSpec, text: Raw) -> Shown:
    import sympy
    shape = read_shape(text)
    return Shown(format_shape(shape), sympy.Tuple(*shape))


def derived(problem: Any, spec: Any, values: dict[str, Any]) -> Any:
    """One number per axis (a list formula), else the formula's value."""
    formula = problem.derive.formula
    if isinstance(formula, tuple):
        return tuple(int(to_fraction(spec.evaluate(f, values))) for f in formula)
    from .base import derived as one
    return one(problem, spec, values)


def same(problem: Any, reference: Any, value: Any, spec: Any) -> bool:
    return as_shape(reference) == tuple(int(v) for v in value)


def as_shape(value: Any) -> tuple[int, ...]:
    """A shape from a list/tuple of integers or text like "(128, 64)" / "128x64"."""
    if isinstance(value, (list, tuple)):
        return tuple(int(v) for v in value)
    m = _SHAPE.match(str(value))
    if not m:
        raise ValueError(f"not a shape: {value!r}")
    return tuple(int(x) for x in re.split(r"\s*[,x×]\s*", m.group(1)))


def describe(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return str(value)


def variants(derive: Any, formulas: Formulas, table: SymbolTable, at: dict[str, Any],
             measures: str | None) -> tuple[tuple[Any, str], ...]:
    from .. import derive as dv
    if not isinstance(derive.formula, tuple):
        return ()
    return dv.shape_variants(tuple(str(f) for f in derive.formula), formulas, table, at)
